/* Running a SELECT statement (select.h) over a table with the library's query
 * API (ps_query_*): binding names and types with positioned messages, one
 * fused run, and the result as an aligned table, CSV or JSON. */
#ifndef PSTOOL_SELECT_RUN_H
#define PSTOOL_SELECT_RUN_H

#include <stdio.h>

#include "output.h"
#include "packscan.h"
#include "progress.h"
#include "select.h"
#include "table.h"

/* How a result column is printed. */
typedef enum select_show { SHOW_NUMBER = 0, SHOW_STRING, SHOW_DATE, SHOW_TIMESTAMP, SHOW_TIME, SHOW_BOOL } select_show;

#define SELECT_MAX_DISTINCT 4 /* COUNT(DISTINCT x) of different columns */

typedef struct select_plan {
  ps_context *ctx;
  const tbl_table *tbl;
  const char *src;
  size_t len;
  ps_column **cols;     /* per table column, created on first use */
  ps_column **dec_cols; /* decimal columns as PS_TYPE_DECIMAL views, for exact literals (bind_env) */
  int borrowed;         /* cols and dec_cols belong to the caller (select_plan_build_cached) */
  expr_arena arena;
  select_stmt stmt;
  ps_expr *where;
  ps_value *values[PS_QUERY_MAX_AGGS];
  ps_agg aggs[PS_QUERY_MAX_AGGS];
  uint32_t n_aggs;
  int key_col[PS_QUERY_MAX_KEYS]; /* table column of each GROUP BY key */
  int item_agg[SELECT_MAX_ITEMS]; /* aggregate index of an item, or -1 (a key) */
  int item_key[SELECT_MAX_ITEMS]; /* key index of a key item */
  select_show item_show[SELECT_MAX_ITEMS];
  int item_unit[SELECT_MAX_ITEMS];     /* SHOW_TIMESTAMP, SHOW_TIME: the column's 10^-unit seconds */
  int item_dict_col[SELECT_MAX_ITEMS]; /* MIN/MAX of a string column: its table column (the
                                          result is a dictionary index), else -1 */
  /* Per aggregate, whether in the SELECT list or only in HAVING / ORDER BY: */
  select_show agg_show[PS_QUERY_MAX_AGGS];
  int agg_unit[PS_QUERY_MAX_AGGS];
  int agg_dict_col[PS_QUERY_MAX_AGGS];
  int agg_scale[PS_QUERY_MAX_AGGS];
  const vx_node *agg_node[PS_QUERY_MAX_AGGS]; /* the first VX_AGG of each (duplicates share it) */
  int key_scale[PS_QUERY_MAX_KEYS];
  int key_fn[PS_QUERY_MAX_KEYS];               /* a date function of the key's column (SEL_FN_*), or 0 */
  int64_t key_day_units[PS_QUERY_MAX_KEYS];    /* with key_fn: the column's units in a day */
  /* COUNT(DISTINCT x): per distinct x, a second query grouped by the keys
   * and x (COUNT(*)), and after a run the count of x's non-NULL groups per
   * group of the main result. */
  uint32_t n_distinct;
  int distinct_col[SELECT_MAX_DISTINCT];
  size_t distinct_pos[SELECT_MAX_DISTINCT]; /* the first COUNT(DISTINCT) of each, for messages */
  ps_query *distinct_query[SELECT_MAX_DISTINCT];
  uint64_t *distinct_count[SELECT_MAX_DISTINCT];
  const vx_node *order_node[SELECT_MAX_ORDER]; /* each ORDER BY term's value (an item's, by alias or position) */
  ps_query *query;
} select_plan;

/* Parses and binds src (which must outlive the plan) and prepares the query.
 * On an error prints the message with a caret under its position to errf and
 * returns -1 (the plan is then freed). */
int select_plan_build(ps_context *ctx, const tbl_table *t, const char *src, size_t len, select_plan *p, FILE *errf);
/* The same with the caller's column caches (as query_plan_build_cached; both
 * or neither), so that a session uploads each column once. */
int select_plan_build_cached(ps_context *ctx, const tbl_table *t, const char *src, size_t len, select_plan *p,
                             FILE *errf, ps_column **cols, ps_column **dec_cols);
void select_plan_free(select_plan *p);

/* Runs the prepared query, then evaluates HAVING, ORDER BY and every
 * computed item of the rows to be written, so that a value that does not
 * fit 38 digits fails the run, not the output. 0 ok (*out to free with
 * ps_query_result_destroy). */
int select_plan_run(select_plan *p, ps_query_result **out, char *err, size_t errsz);

/* The result rows in output order: the groups that pass HAVING, ordered by
 * ORDER BY (ties in group order, so ascending keys), OFFSET and LIMIT
 * applied. *rows (group indexes, malloc'ed, to free) and *n; 0, or -1 with a
 * message (a value that does not fit 38 digits). */
int select_result_rows(const select_plan *p, const ps_query_result *r, uint64_t **rows, uint64_t *n, char *err,
                       size_t errsz);

/* Item i of group g as an exact datum: a key or an aggregate as the library
 * gives it, or the value of an item computed from them (SEL_EXPR). */
int select_item_datum(const select_plan *p, const ps_query_result *r, uint64_t g, size_t i, ps_datum *d, char *err,
                      size_t errsz);

/* Whether the statement needs more than the library's result (HAVING, ORDER
 * BY, LIMIT, OFFSET or a computed item): such a statement cannot be run in
 * partitions and merged. */
int select_has_post(const select_plan *p);

/* Item i's column title: its alias, else the item's text with runs of white
 * space made one space (appended to o). */
void select_item_title(const select_plan *p, size_t i, tbuf *o);

/* Writes the result through the output module (output.h): a header (each
 * item's alias, else its text) unless header is 0, then one row per group.
 * Numbers are exact; dates are yyyy-mm-dd; strings are the dictionary's. */
int select_write(const select_plan *p, const ps_query_result *r, out_format fmt, int header, FILE *out, char *err,
                 size_t errsz);

/* One SELECT of aggregates typed in `packscan shell` (select_is_aggregate
 * says which): built on the shell's context and column caches, run, written
 * in its format; with timer, the run and output times after it; with
 * explain, the canonical statement before it; bar (may be NULL): the
 * context's progress bar, begun before the run and ended after it. 0 ok, -1
 * failed (the message, with a caret under its position, on stderr). */
int select_shell_statement(ps_context *ctx, const tbl_table *t, ps_column **cols, ps_column **dec_cols, const char *src,
                           size_t len, out_format fmt, int header, int timer, int explain, progress_bar *bar);

#endif
