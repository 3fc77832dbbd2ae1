/* Running a WHERE-expression over a table: parse, bind, evaluate, and write
 * the count, row ids, selected values or the bitmap. */
#ifndef PSTOOL_QUERY_H
#define PSTOOL_QUERY_H

#include <stdio.h>

#include "expr.h"
#include "output.h"
#include "packscan.h"
#include "table.h"

typedef struct query_plan {
  ps_context *ctx;
  const tbl_table *tbl;
  ps_column **cols; /* per table column, created when first used */
  ps_column **dec_cols; /* decimal columns as PS_TYPE_DECIMAL, for exact literal comparisons */
  int borrowed;         /* cols and dec_cols belong to the caller (query_plan_build_cached) */
  ps_expr *expr;
  expr_arena arena;
  ast_node *ast;
} query_plan;

/* Parses and binds src. On a syntax or binding error prints the message with
 * a caret under the position to errf and returns -1. */
int query_plan_build(ps_context *ctx, const tbl_table *t, const char *src, size_t len, query_plan *q,
                     FILE *errf);
/* The same with the caller's column caches (tbl->ncols entries each, NULL
 * entries filled on first use, destroyed by the caller), so that a session
 * uploads each column once. Both caches or neither (NULL: the plan's own). */
int query_plan_build_cached(ps_context *ctx, const tbl_table *t, const char *src, size_t len, query_plan *q,
                            FILE *errf, ps_column **cols, ps_column **dec_cols);
void query_plan_free(query_plan *q);

/* Creates a context on the named backend (NULL or "auto": best available). */
int query_context(const char *backend, ps_context **out, char *err, size_t errsz);

/* What a command adds to its context's options: device_memory_limit (0: the
 * library's default) and a progress callback (NULL: none) with its user
 * pointer. */
typedef struct query_ctx_opts {
  uint64_t device_memory_limit;
  void (*progress)(void *user, uint64_t rows_done, uint64_t rows_total);
  void *progress_user;
  uint32_t device_count; /* a context over devices[0..device_count) when > 0 */
  const int32_t *devices;
  const char *opencl_platform; /* an index or a part of the platform's name; NULL: the library's choice */
} query_ctx_opts;
/* query_context and query_context_for with those options (NULL: none). */
int query_context_opts(const char *backend, const query_ctx_opts *extra, ps_context **out, char *err, size_t errsz);

/* Tables below this many rows are queried on the reference backend by "auto". */
#define QUERY_AUTO_DEVICE_ROWS (1ull << 22)

/* The command's choice of backend for a table of `rows` rows: a named backend
 * as asked; "auto" (or NULL): the reference backend below
 * QUERY_AUTO_DEVICE_ROWS rows, else CUDA, else OpenCL on a device that is not
 * a CPU, else the reference backend. why (may be NULL) gets one line saying
 * what was chosen and why. 0 ok, -1 with err set. */
int query_context_for(const char *backend, uint64_t rows, ps_context **out, char *why, size_t whysz, char *err,
                      size_t errsz);
int query_context_for_opts(const char *backend, uint64_t rows, const query_ctx_opts *extra, ps_context **out, char *why,
                           size_t whysz, char *err, size_t errsz);

/* 1 when the context's device is a CPU (the reference backend, an OpenCL CPU
 * device such as PoCL), 0 when it is not, -1 when unknown. */
int query_device_is_cpu(ps_context *ctx);

/* Row ids of the selected rows, ascending, malloc'ed (*ids NULL when none).
 * Uses the library's row-id call, or the bitmap from ps_filter where the
 * backend has no row-id entry (or force_host is set). */
int query_row_ids(query_plan *q, int force_host, uint64_t **ids, uint64_t *count, char *err, size_t errsz);

/* How --rows / --select print: the format, a header line, the host decoding
 * path (testing), and a leading row_id column. */
typedef struct query_output {
  out_format format;
  int header;
  int force_host;
  int row_ids;
} query_output;

/* Writes the values of columns colidx[0..ncol) of rows ids[0..count) through
 * the output module (nulls as the format shows them, decimals exact, dates
 * as yyyy-mm-dd), preceded by the row id where o->row_ids. */
int query_write_rows(query_plan *q, const uint64_t *ids, uint64_t count, const int *colidx, size_t ncol,
                     const query_output *o, FILE *out, char *err, size_t errsz);

/* The same as CSV, with a header line if header. */
int query_write_select(query_plan *q, const uint64_t *ids, uint64_t count, const int *colidx, size_t ncol,
                       int header, int force_host, FILE *out, char *err, size_t errsz);

/* ORDER BY: one key, a table column and its direction. */
typedef struct query_order {
  int col;
  int desc;
} query_order;

/* "a, b,\"C d\"" or "*" into column indexes (names resolved as in queries);
 * *out malloc'ed. 0 ok, -1 with err set. */
int query_parse_columns(const tbl_table *t, const char *spec, int **out, size_t *n, char *err, size_t errsz);
/* "a DESC, \"b c\" asc" into ORDER BY keys; *out malloc'ed. 0 ok, -1 with err set. */
int query_parse_order(const tbl_table *t, const char *spec, query_order **out, size_t *n, char *err, size_t errsz);

/* Sorts ids[0..count) by the keys' values (nulls last in both directions,
 * ties in row order). The keys are decoded on the host from the table. */
int query_order_ids(query_plan *q, uint64_t *ids, uint64_t count, const query_order *order, size_t norder,
                    char *err, size_t errsz);

#endif
