/*
 * predicate_limits: the limits of one predicate (include/packscan.h, docs/design.md)
 * and what lowering folds so that ordinary SQL stays inside them:
 *
 *  - x = 1 OR x = 2 OR ... OR x = 33 (the case), and 1000 of them,
 *    left-deep, right-deep and balanced, on integer, float and sorted
 *    dictionary columns, with nulls: one instruction each, against the
 *    oracle;
 *  - IN lists of 10^4 values (int64, float64, strings on a sorted and an
 *    unsorted dictionary), IN and NOT IN, against the oracle;
 *  - the limits themselves: 17 distinct columns, 65 instructions (33 ORed
 *    equalities on an unsorted dictionary, which does not fold), a tree
 *    deeper than PS_PREDICATE_MAX_HEIGHT: each
 *    PS_ERR_LIMIT naming the limit, operands untouched, context usable;
 *  - seeded random same-column groups (AND / OR / NOT of comparisons,
 *    BETWEEN and IN on one column, up to a few hundred nodes), alone and
 *    under trees with leaves on other columns, on every numeric type and
 *    sorted dictionaries, against the oracle.
 */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

static trun tr;

/* A random dictionary column whose sorted dictionary is flagged as sorted
 * (tcol_random_dict leaves some unflagged): its comparisons are intervals. */
static tcol *sorted_dict(th_rng *r, uint64_t n, uint32_t w, size_t d, int null_mode) {
  tcol *c = tcol_random_dict(r, n, w, d, 1, null_mode);
  c->sorted = 1;
  return c;
}

/* x = v[0] OR x = v[1] OR ...: shape 0 left-deep, 1 right-deep, 2 balanced. */
static onode *or_chain(int col, const ps_literal *v, size_t lo, size_t hi, int shape) {
  if (hi - lo == 1) return on_cmp(col, PS_EQ, v[lo]);
  size_t mid = shape == 0 ? hi - 1 : shape == 1 ? lo + 1 : lo + (hi - lo) / 2;
  return on_or(or_chain(col, v, lo, mid, shape), or_chain(col, v, mid, hi, shape));
}

static void ored_equalities(void) {
  th_rng *r = &th.rng;
  static const size_t counts[] = {33, 64, 65, 1000};
  int cols[4];
  cols[0] = tr_add(&tr, tcol_random_for(r, PS_TYPE_INT32, 1000, 7, TN_FEW));
  cols[1] = tr_add(&tr, tcol_random_for(r, PS_TYPE_FLOAT64, 1000, 9, TN_HALF));
  cols[2] = tr_add(&tr, sorted_dict(r, 1000, 8, 200, TN_FEW));
  cols[3] = tr_add(&tr, tcol_random_for(r, PS_TYPE_UINT64, 1000, 64, TN_NO_BITMAP));
  for (int k = 0; k < 4; k++) {
    if (cols[k] < 0) return;
    tcol *c = tr.cols[cols[k]];
    for (size_t ci = 0; ci < sizeof counts / sizeof counts[0]; ci++) {
      size_t n = counts[ci];
      ps_literal *v = th_calloc(n, sizeof *v);
      char(*bufs)[64] = th_calloc(n, sizeof *bufs);
      for (size_t i = 0; i < n; i++)
        v[i] = c->type == PS_TYPE_STRING ? gen_str_literal(r, c, bufs[i]) : gen_num_literal(r, c);
      for (int shape = 0; shape < 3; shape++) {
        char desc[256];
        th_case("%zu ORed equalities, shape %d, on %s", n, shape, tcol_describe(c, desc, sizeof desc));
        onode *t = or_chain(cols[k], v, 0, n, shape);
        tr_check(&tr, t, "ORed equalities");
        onode *nt = on_not(t);
        tr_check(&tr, nt, "NOT of ORed equalities");
        on_free(nt);
      }
      free(v);
      free(bufs);
    }
  }
  tr_clear(&tr);
}

static void big_in_lists(void) {
  th_rng *r = &th.rng;
  int cols[4];
  cols[0] = tr_add(&tr, tcol_random_for(r, PS_TYPE_INT64, 5000, 40, TN_FEW));
  cols[1] = tr_add(&tr, tcol_random_for(r, PS_TYPE_FLOAT64, 5000, 20, TN_NO_BITMAP));
  cols[2] = tr_add(&tr, sorted_dict(r, 5000, 14, 12000, TN_HALF));
  cols[3] = tr_add(&tr, tcol_random_dict(r, 5000, 14, 12000, 0, TN_FEW));
  const size_t n = 10000;
  ps_literal *v = th_calloc(n, sizeof *v);
  char(*bufs)[64] = th_calloc(n, sizeof *bufs);
  for (int k = 0; k < 4; k++) {
    if (cols[k] < 0) break;
    tcol *c = tr.cols[cols[k]];
    for (size_t i = 0; i < n; i++)
      v[i] = c->type == PS_TYPE_STRING ? gen_str_literal(r, c, bufs[i]) : gen_num_literal(r, c);
    char desc[256];
    th_case("IN list of %zu values on %s", n, tcol_describe(c, desc, sizeof desc));
    onode *t = on_in(cols[k], v, n);
    tr_check(&tr, t, "IN list of 10^4 values");
    onode *nt = on_not(t);
    tr_check(&tr, nt, "NOT IN list of 10^4 values");
    on_free(nt);
  }
  free(v);
  free(bufs);
  tr_clear(&tr);
}

/* Builds t in ctx and evaluates it: the status of the first failure. */
static ps_status build_and_count(ps_context *ctx, const onode *t, uint64_t *count) {
  ps_expr *e = NULL;
  ps_status st = on_build(ctx, t, tr.h, &e);
  if (st == PS_OK) st = ps_filter_count(ctx, e, count);
  ps_expr_destroy(e);
  return st;
}

static void expect_limit(ps_context *ctx, onode *t, const char *what, const char *needle) {
  th_case("limit: %s", what);
  uint64_t count = 12345;
  ps_status st = build_and_count(ctx, t, &count);
  CHECKF(st == PS_ERR_LIMIT, "%s: %s (%s), want PS_ERR_LIMIT", what, ps_status_name(st), ps_context_last_error(ctx));
  CHECKF(strstr(ps_context_last_error(ctx), needle) != NULL, "%s: message '%s' does not name '%s'", what,
         ps_context_last_error(ctx), needle);
  CHECK(count == 12345);
  on_free(t);
}

static void limits(ps_context *ctx) {
  th_rng *r = &th.rng;
  int cols[PS_PREDICATE_MAX_COLUMNS + 1];
  for (int i = 0; i <= PS_PREDICATE_MAX_COLUMNS; i++)
    if ((cols[i] = tr_add(&tr, tcol_random_for(r, PS_TYPE_INT16, 100, 9, TN_FEW))) < 0) return;
  int unsorted = tr_add(&tr, tcol_random_dict(r, 100, 6, 50, 0, TN_FEW));
  if (unsorted < 0) return;

  /* 16 columns work, 17 do not */
  onode *t = on_cmp(cols[0], PS_GT, ps_lit_int(0));
  for (int i = 1; i < PS_PREDICATE_MAX_COLUMNS; i++) t = on_and(t, on_cmp(cols[i], PS_GT, ps_lit_int(0)));
  th_case("16 columns");
  tr_check(&tr, t, "16 columns");
  t = on_or(t, on_cmp(cols[PS_PREDICATE_MAX_COLUMNS], PS_EQ, ps_lit_int(1)));
  expect_limit(ctx, t, "17 columns", "16 distinct columns");

  /* an unsorted dictionary's equalities are SETs: 33 of them ORed are 65
   * instructions; 32 fit */
  char b[64];
  tcol *u = tr.cols[unsorted];
  t = on_cmp(unsorted, PS_EQ, gen_str_literal(r, u, b));
  for (int i = 1; i < 32; i++) t = on_or(t, on_cmp(unsorted, PS_EQ, gen_str_literal(r, u, b)));
  th_case("32 ORed SETs");
  tr_check(&tr, t, "32 ORed equalities on an unsorted dictionary");
  t = on_or(t, on_cmp(unsorted, PS_EQ, gen_str_literal(r, u, b)));
  expect_limit(ctx, t, "33 ORed SETs", "more than 64 instructions");

  /* a tree of PS_PREDICATE_MAX_HEIGHT levels is accepted; one more is not */
  th_case("tree height");
  ps_expr *e;
  if (!CHECK_OK(ctx, ps_expr_compare(ctx, tr.h[cols[0]], PS_EQ, ps_lit_int(0), &e))) return;
  for (int h = 1; h < PS_PREDICATE_MAX_HEIGHT; h++) {
    ps_expr *leaf, * or ;
    CHECK_OK(ctx, ps_expr_compare(ctx, tr.h[cols[0]], PS_EQ, ps_lit_int(h), &leaf));
    if (!CHECK_OK(ctx, ps_expr_or(ctx, e, leaf, & or))) {
      ps_expr_destroy(leaf);
      break;
    }
    e = or ;
  }
  uint64_t count = 0;
  CHECK_OK(ctx, ps_filter_count(ctx, e, &count));
  ps_expr *leaf, *out = (ps_expr *)(uintptr_t)0x55;
  CHECK_OK(ctx, ps_expr_compare(ctx, tr.h[cols[0]], PS_EQ, ps_lit_int(-1), &leaf));
  CHECK_STATUS(ctx, ps_expr_or(ctx, e, leaf, &out), PS_ERR_LIMIT);
  CHECKF(strstr(ps_context_last_error(ctx), "1025 levels deep; at most 1024"), "'%s'", ps_context_last_error(ctx));
  CHECK(out == (ps_expr *)(uintptr_t)0x55);
  CHECK_STATUS(ctx, ps_expr_not(ctx, e, &out), PS_ERR_LIMIT);
  /* the operands are still the caller's, and usable */
  uint64_t again = 0;
  CHECK_OK(ctx, ps_filter_count(ctx, e, &again));
  CHECK(again == count);
  ps_expr_destroy(e);
  ps_expr_destroy(leaf);
  tr_clear(&tr);
}

/* ---- random same-column groups ------------------------------------------------ */

static onode *interval_leaf(th_rng *r, tcol *c, int col) {
  char b1[64], b2[64];
  int str = c->type == PS_TYPE_STRING;
#define LIT(buf) (str ? gen_str_literal(r, c, (buf)) : gen_num_literal(r, c))
  unsigned k = (unsigned)th_below(r, 10);
  if (k < 5) return on_cmp(col, (ps_cmp)th_below(r, 6), LIT(b1));
  if (k < 7) {
    ps_literal lo = LIT(b1), hi = LIT(b2);
    return on_between(col, lo, hi);
  }
  ps_literal list[12];
  char bufs[12][64];
  size_t cnt = (size_t)th_below(r, 13);
  for (size_t i = 0; i < cnt; i++) list[i] = LIT(bufs[i]);
  return on_in(col, list, cnt);
#undef LIT
}

/* A random AND / OR / NOT tree of interval leaves on col (up to `leaves`
 * leaves), with, where other >= 0, some leaves on another column. */
static onode *group(th_rng *r, int col, int other, size_t leaves) {
  onode *t;
  if (leaves <= 1) {
    int which = other >= 0 && th_chance(r, 10) ? other : col;
    t = th_chance(r, 5) && which == other ? on_isnull(which, th_chance(r, 50))
                                          : interval_leaf(r, tr.cols[which], which);
  } else {
    size_t left = 1 + (size_t)th_below(r, leaves - 1);
    onode *a = group(r, col, other, left), *b = group(r, col, other, leaves - left);
    t = th_chance(r, 50) ? on_and(a, b) : on_or(a, b);
  }
  if (th_chance(r, 15)) t = on_not(t);
  return t;
}

static void random_groups(void) {
  static const ps_type types[] = {PS_TYPE_INT8,    PS_TYPE_INT32,   PS_TYPE_INT64,   PS_TYPE_UINT16, PS_TYPE_UINT64,
                                  PS_TYPE_FLOAT32, PS_TYPE_FLOAT64, PS_TYPE_DECIMAL, PS_TYPE_STRING};
  static const uint64_t ns[] = {1, 33, 257, 1000};
  th_rng *r = &th.rng;
  /* The sanitizer size (PACKSCAN_TEST_QUICK=2): one round per type. */
  const unsigned ntypes = (unsigned)(sizeof types / sizeof types[0]);
  unsigned rounds = th.quick >= 2 ? ntypes : 40 * th.scale;
  for (unsigned round = 0; round < rounds; round++) {
    ps_type type = th.quick >= 2 ? types[round] : TH_PICK(r, types);
    uint64_t n = TH_PICK(r, ns);
    tcol *c =
        type == PS_TYPE_STRING
            ? sorted_dict(r, n, 1 + (uint32_t)th_below(r, 12), 1 + (size_t)th_below(r, 300), (int)th_below(r, TN_COUNT))
            : tcol_random_for(r, type, n, (uint32_t)th_below(r, 65) % (uint32_t)(ps_type_size(type) * 8 + 1),
                              (int)th_below(r, TN_COUNT));
    int col = tr_add(&tr, c);
    int other = tr_add(&tr, tcol_random_for(r, PS_TYPE_INT32, n, (uint32_t)th_below(r, 12), TN_FEW));
    if (col < 0 || other < 0) break;
    char desc[256];
    for (unsigned q = 0; q < 12; q++) {
      /* alone, a group is one instruction at any size; with leaves on
       * another column, its pieces and the operators above them count */
      int with_other = q % 2;
      size_t leaves = q < 4        ? 1 + (size_t)th_below(r, 8)
                      : with_other ? 1 + (size_t)th_below(r, 24)
                      : q < 10     ? 1 + (size_t)th_below(r, 60)
                                   : 150;
      th_case("group round %u query %u (%zu leaves) on %s", round, q, leaves,
              tcol_describe(tr.cols[col], desc, sizeof desc));
      onode *t = group(r, col, with_other ? other : -1, leaves);
      tr_check(&tr, t, "same-column group");
      on_free(t);
    }
    tr_clear(&tr);
  }
}

int main(int argc, char **argv) {
  th_init(argc, argv, "predicate_limits");
  ps_context *ctx = th_context(0);
  ps_context *ref = th_is_reference() ? NULL : th_reference_context(0);
  tr_init(&tr, ctx, ref);
  ored_equalities();
  big_in_lists();
  limits(ctx);
  random_groups();
  tr_clear(&tr);
  ps_context_destroy(ref);
  ps_context_destroy(ctx);
  return th_finish();
}
