/*
 * corrupt: the one corrupt-data error (ps_corrupt_error) in the same wording
 * on every backend and every path — filter (one chunk and many), count,
 * aggregate, gather — naming the column by the name the caller gave it
 * (ps_column_set_name) or else by its place in the expression with its type
 * and width, and the row (or
 * the chunk's rows, where a device only knows those) that holds the code;
 * an empty dictionary's own wording; ps_column_set_name's validation.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

/* The message must read "corrupt data in <column>: <rows> <reason>" with the
 * bad row inside <rows>. */
static void expect_message(ps_context *ctx, const char *what, const char *column, uint64_t bad_row,
                           const char *reason) {
  const char *m = ps_context_last_error(ctx);
  char head[300];
  snprintf(head, sizeof head, "corrupt data in %s: ", column);
  const char *p = strstr(m, head);
  if (!CHECKF(p != NULL, "%s: '%s' does not start with '%s'", what, m, head)) return;
  p += strlen(head);
  unsigned long long a = 0, b = 0;
  if (sscanf(p, "row %llu", &a) == 1 && strncmp(p, "row ", 4) == 0) {
    CHECKF(a == bad_row, "%s: '%s' names row %llu, not %llu", what, m, a, (unsigned long long)bad_row);
  } else if (sscanf(p, "a row among rows %llu..%llu", &a, &b) == 2) {
    CHECKF(a <= bad_row && bad_row <= b, "%s: '%s': rows %llu..%llu miss row %llu", what, m, a, b,
           (unsigned long long)bad_row);
  } else {
    CHECKF(0, "%s: '%s' names no row", what, m);
  }
  CHECKF(strstr(m, reason) != NULL, "%s: '%s' does not say '%s'", what, m, reason);
}

static void run(uint64_t chunk_rows) {
  ps_context *ctx = th_context(chunk_rows);
  const uint64_t n = 300, bad = 197;
  uint64_t *codes = th_calloc(n, sizeof *codes);
  for (uint64_t i = 0; i < n; i++) codes[i] = i % 100;
  codes[bad] = 200; /* int8 from M = 0: the largest valid code is 127 */
  tcol *good = tcol_for(PS_TYPE_INT32, n, 8, 0, (ps_reference){.i = 0}, codes, NULL, NULL);
  tcol *corrupt = tcol_for(PS_TYPE_INT8, n, 8, 0, (ps_reference){.i = 0}, codes, NULL, NULL);
  tstrs none = {0};
  tcol *empty = tcol_dict(&none, 1, 0, PS_TYPE_UINT8, n, 2, 0, codes, NULL, NULL);
  ps_column *g, *c, *e;
  if (!CHECK_OK(ctx, tcol_create(ctx, good, &g)) || !CHECK_OK(ctx, tcol_create(ctx, corrupt, &c)) ||
      !CHECK_OK(ctx, tcol_create(ctx, empty, &e)))
    exit(th_finish());
  const char *reason = "holds a code above the largest valid code 127";

  for (int named = 0; named < 2; named++) {
    th_case("chunk_rows %llu, %s", (unsigned long long)chunk_rows, named ? "named" : "unnamed");
    if (named)
      CHECK_OK(ctx, ps_column_set_name(c, "price"));
    else
      CHECK_OK(ctx, ps_column_set_name(c, NULL));
    CHECK(strcmp(ps_column_name(c), named ? "price" : "") == 0);
    const char *col_in_pred = named ? "column 'price'" : "column 2 of the expression (int8, width 8)";
    ps_expr *a, *b, *t;
    CHECK_OK(ctx, ps_expr_compare(ctx, g, PS_GE, ps_lit_int(0), &a));
    CHECK_OK(ctx, ps_expr_compare(ctx, c, PS_LT, ps_lit_int(50), &b));
    CHECK_OK(ctx, ps_expr_and(ctx, a, b, &t));
    uint64_t count = 77;
    uint8_t bitmap[64];
    memset(bitmap, 0xEE, sizeof bitmap);
    CHECK_STATUS(ctx, ps_filter(ctx, t, bitmap, sizeof bitmap, &count), PS_ERR_CORRUPT_DATA);
    expect_message(ctx, "filter", col_in_pred, bad, reason);
    CHECK(count == 77 && bitmap[0] == 0xEE);
    CHECK_STATUS(ctx, ps_filter_count(ctx, t, &count), PS_ERR_CORRUPT_DATA);
    expect_message(ctx, "count", col_in_pred, bad, reason);
    ps_expr_destroy(t);

    ps_aggregates agg;
    CHECK_STATUS(ctx, ps_aggregate(ctx, c, NULL, 0, &agg), PS_ERR_CORRUPT_DATA);
    expect_message(ctx, "aggregate", named ? "column 'price'" : "the column", bad, reason);
    uint64_t ids[3] = {5, bad, 7};
    int8_t vals[3];
    CHECK_STATUS(ctx, ps_gather_values(ctx, c, ids, PS_INDEX_UINT64, 3, vals, NULL), PS_ERR_CORRUPT_DATA);
    expect_message(ctx, "gather", named ? "column 'price'" : "the column", bad, reason);
    CHECKF(strstr(ps_context_last_error(ctx), "(ids[1])") != NULL, "gather: '%s' does not name ids[1]",
           ps_context_last_error(ctx));
  }

  th_case("empty dictionary, chunk_rows %llu", (unsigned long long)chunk_rows);
  CHECK_OK(ctx, ps_column_set_name(e, "city"));
  ps_expr *x;
  CHECK_OK(ctx, ps_expr_is_null(ctx, g, 1, &x));
  ps_expr *y, *z;
  CHECK_OK(ctx, ps_expr_compare(ctx, e, PS_EQ, ps_lit_str("a", 1), &y));
  CHECK_OK(ctx, ps_expr_or(ctx, x, y, &z));
  uint64_t count;
  CHECK_STATUS(ctx, ps_filter_count(ctx, z, &count), PS_ERR_CORRUPT_DATA);
  expect_message(ctx, "empty dictionary", "column 'city'", 0,
                 "is not null, but the column has no valid code (empty dictionary)");
  ps_expr_destroy(z);

  th_case("ps_column_set_name");
  char longname[PS_COLUMN_NAME_MAX + 2];
  memset(longname, 'n', sizeof longname - 1);
  longname[sizeof longname - 1] = 0;
  CHECK_STATUS(ctx, ps_column_set_name(e, longname), PS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ps_context_last_error(ctx), "name is 256 bytes; at most 255") != NULL);
  CHECK(strcmp(ps_column_name(e), "city") == 0);
  longname[PS_COLUMN_NAME_MAX] = 0;
  CHECK_OK(ctx, ps_column_set_name(e, longname));
  CHECK(strlen(ps_column_name(e)) == PS_COLUMN_NAME_MAX);
  CHECK_OK(ctx, ps_column_set_name(e, ""));
  CHECK(strcmp(ps_column_name(e), "") == 0);
  CHECK(ps_column_set_name(NULL, "x") == PS_ERR_INVALID_ARGUMENT && strcmp(ps_column_name(NULL), "") == 0);

  ps_column_destroy(g);
  ps_column_destroy(c);
  ps_column_destroy(e);
  tcol_free(good);
  tcol_free(corrupt);
  tcol_free(empty);
  free(codes);
  ps_context_destroy(ctx);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "corrupt");
  run(0);
  run(64);
  run(96);
  return th_finish();
}
