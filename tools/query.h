/* Running a WHERE-expression over a table: parse, bind, evaluate, and write
 * the count, row ids, selected values or the bitmap. */
#ifndef PSTOOL_QUERY_H
#define PSTOOL_QUERY_H

#include <stdio.h>

#include "expr.h"
#include "packscan.h"
#include "table.h"

typedef struct query_plan {
  ps_context *ctx;
  const tbl_table *tbl;
  ps_column **cols; /* per table column, created when first used */
  ps_expr *expr;
  expr_arena arena;
  ast_node *ast;
} query_plan;

/* Parses and binds src. On a syntax or binding error prints the message with
 * a caret under the position to errf and returns -1. */
int query_plan_build(ps_context *ctx, const tbl_table *t, const char *src, size_t len, query_plan *q,
                     FILE *errf);
void query_plan_free(query_plan *q);

/* Creates a context on the named backend (NULL or "auto": best available). */
int query_context(const char *backend, ps_context **out, char *err, size_t errsz);

/* Row ids of the selected rows, ascending, malloc'ed (*ids NULL when none).
 * Uses the library's row-id call, or the bitmap from ps_filter where the
 * backend has no row-id entry (or force_host is set). */
int query_row_ids(query_plan *q, int force_host, uint64_t **ids, uint64_t *count, char *err, size_t errsz);

/* Writes the values of columns colidx[0..ncol) of rows ids[0..count) as CSV
 * (nulls empty, strings quoted where needed), with a header line if header. */
int query_write_select(query_plan *q, const uint64_t *ids, uint64_t count, const int *colidx, size_t ncol,
                       int header, int force_host, FILE *out, char *err, size_t errsz);

/* Writes a CSV field (quoted when it holds the delimiter, a quote, a line
 * break, or is empty, so that an empty string differs from a null). */
void csv_write_field(FILE *out, const char *s, size_t len);

#endif
