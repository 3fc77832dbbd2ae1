/*
 * filter_random: seeded random columns at every width 0..64 and every type
 * (all integer types, float32/64 with scales, strings with sorted and
 * unsorted dictionaries, 32- and 64-bit offsets), every operator against
 * literals inside, below and above the range and NaN, BETWEEN, IN lists
 * (empty to 100 values), LIKE / NOT LIKE, IS [NOT] NULL, column against
 * column (across types, references and widths; dictionaries same and
 * different), and random trees of height 4+ with nulls on every leaf.
 * Every result is compared bit for bit with the oracle, on the backend under
 * test and on the reference backend.
 *
 * PACKSCAN_TEST_SCALE multiplies the configurations per (width, type).
 */
#include <math.h>
#include <string.h>

#include "gen.h"

static const ps_type NUMERIC[] = {PS_TYPE_INT8,   PS_TYPE_INT16,  PS_TYPE_INT32,  PS_TYPE_INT64,
                                  PS_TYPE_UINT8,  PS_TYPE_UINT16, PS_TYPE_UINT32, PS_TYPE_UINT64,
                                  PS_TYPE_FLOAT32, PS_TYPE_FLOAT64};
#define N_NUMERIC (sizeof NUMERIC / sizeof NUMERIC[0])

/* Configurations (fresh columns, sizes, nulls) per (width, type) cell. */
#define CONFIGS_PER_CELL 3

static uint64_t random_n(th_rng *r) {
  unsigned k = (unsigned)th_below(r, 100);
  if (k < 3) return 100003;
  static const uint64_t small[] = {0, 1, 31, 32, 33};
  if (k < 25) return TH_PICK(r, small);
  static const uint64_t mid[] = {1000, 1000, 999, 257, 64};
  return TH_PICK(r, mid);
}

static int random_nulls(th_rng *r) {
  static const int modes[] = {TN_NO_BITMAP, TN_NONE_NULL, TN_FEW, TN_FEW, TN_HALF, TN_HALF, TN_MOST, TN_ALL};
  return TH_PICK(r, modes);
}

/* Nulls on every leaf of the trees: always a bitmap with some nulls. */
static int tree_nulls(th_rng *r) {
  static const int modes[] = {TN_FEW, TN_HALF, TN_MOST, TN_FEW};
  return TH_PICK(r, modes);
}

static void check_leaf(trun *tr, onode *t, const char *what) {
  tr_check(tr, t, what);
  on_free(t);
}

/* One (width, type) configuration: a subject column, partners, every leaf
 * kind and operator, and random trees. */
static void run_config(th_rng *r, trun *tr, uint32_t w, int type_index) {
  uint64_t n = random_n(r);
  int is_str = type_index >= (int)N_NUMERIC;
  int sorted = type_index == (int)N_NUMERIC;
  ps_type type = is_str ? PS_TYPE_STRING : NUMERIC[type_index];
  static const size_t dsizes[] = {1, 2, 3, 7, 30, 100, 300};
  tcol *subject;
  if (is_str)
    subject = tcol_random_dict(r, n, w, TH_PICK(r, dsizes), sorted, random_nulls(r));
  else
    subject = tcol_random_for(r, type, n, w, random_nulls(r));
  char desc[256];
  th_case("w=%u %s%s n=%llu: %s", w, ps_type_name(type), is_str ? (sorted ? " sorted" : " unsorted") : "",
          (unsigned long long)n, tcol_describe(subject, desc, sizeof desc));
  int s = tr_add(tr, subject);
  if (s < 0) return;
  /* partners: same kind, for column comparisons; one of the other kind for trees */
  int p1, p2, other;
  if (is_str) {
    p1 = tr_add(tr, tcol_random_dict_partner(r, tr->cols[s], 1, random_nulls(r)));
    p2 = tr_add(tr, tcol_random_dict_partner(r, tr->cols[s], 0, random_nulls(r)));
    other = tr_add(tr, tcol_random_for(r, TH_PICK(r, NUMERIC), n, (uint32_t)th_below(r, 65), tree_nulls(r)));
  } else {
    p1 = tr_add(tr, tcol_derived(r, tr->cols[s], TH_PICK(r, NUMERIC), random_nulls(r)));
    p2 = tr_add(tr, tcol_random_for(r, TH_PICK(r, NUMERIC), n, (uint32_t)th_below(r, 65), random_nulls(r)));
    other = tr_add(tr, tcol_random_dict(r, n, (uint32_t)th_below(r, 12), TH_PICK(r, dsizes),
                                        th_chance(r, 50), tree_nulls(r)));
  }
  if (p1 < 0 || p2 < 0 || other < 0) return;
  tcol *c = tr->cols[s];
  char buf[128], buf2[128];

  {
    /* every comparison operator against a literal, and against a column */
    for (int op = PS_EQ; op <= PS_GE; op++) {
      ps_literal lit = is_str ? gen_str_literal(r, c, buf) : gen_num_literal(r, c);
      check_leaf(tr, on_cmp(s, (ps_cmp)op, lit), "compare literal");
    }
    for (int k = 0; k < 2; k++)
      check_leaf(tr, on_cmpcol(s, (ps_cmp)th_below(r, 6), k ? p2 : p1), "compare columns");
    if (!is_str) check_leaf(tr, on_cmp(s, (ps_cmp)th_below(r, 6), ps_lit_float(NAN)), "compare NaN");
    if (th_chance(r, 20)) check_leaf(tr, on_cmpcol(s, (ps_cmp)th_below(r, 6), s), "compare column with itself");
    /* BETWEEN */
    {
      ps_literal lo = is_str ? gen_str_literal(r, c, buf) : gen_num_literal(r, c);
      ps_literal hi = is_str ? gen_str_literal(r, c, buf2) : gen_num_literal(r, c);
      check_leaf(tr, on_between(s, lo, hi), "between");
    }
    /* IN: empty, small or 100 values */
    {
      static const size_t in_sizes[] = {0, 1, 3, 7, 100, 100};
      size_t count = TH_PICK(r, in_sizes);
      ps_literal list[100];
      static char bufs[100][128];
      for (size_t i = 0; i < count; i++) list[i] = is_str ? gen_str_literal(r, c, bufs[i]) : gen_num_literal(r, c);
      check_leaf(tr, on_in(s, list, count), "in");
    }
    /* IS [NOT] NULL */
    check_leaf(tr, on_isnull(s, th_chance(r, 50)), "is [not] null");
    /* LIKE / NOT LIKE */
    if (is_str) {
      for (int k = 0; k < 3; k++) {
        int esc;
        size_t len = gen_like_pattern(r, c, buf, &esc);
        int neg = th_chance(r, 40);
        check_leaf(tr, on_like(s, buf, len, esc, neg), neg ? "not like" : "like");
      }
    }
    /* random trees of height 4 and 5 over all four columns */
    int cols[4] = {s, p1, p2, other};
    for (int k = 0; k < 2; k++) {
      onode *t = gen_tree(r, tr, cols, 4, 4 + k, 40);
      check_leaf(tr, t, "random tree");
    }
  }
}

int main(int argc, char **argv) {
  th_init(argc, argv, "filter_random");
  ps_context *ctx = th_context(0);
  ps_context *ref = th_is_reference() ? NULL : th_reference_context(0);
  trun tr;
  tr_init(&tr, ctx, ref);
  for (uint32_t w = 0; w <= 64; w++) {
    for (int ti = 0; ti < (int)N_NUMERIC + 2; ti++) {
      /* a private RNG per configuration: a failure reproduces with the seed
       * alone, whatever ran before */
      /* CI size (PACKSCAN_TEST_QUICK): one configuration per cell, so every
       * (width, type) cell is still covered each run. */
      const unsigned configs = th.quick ? 1 : CONFIGS_PER_CELL * th.scale;
      /* The sanitizer size (PACKSCAN_TEST_QUICK=2): one type per width, in
       * turn, so every width and every type still runs. */
      if (th.quick >= 2 && (uint64_t)ti != (w + th.seed) % (N_NUMERIC + 2)) continue;
      for (unsigned k = 0; k < configs; k++) {
        th_rng r;
        th_rng_seed(&r, th.seed ^ ((uint64_t)w << 32) ^ ((uint64_t)k << 48) ^ (uint64_t)(ti + 1) * 0x9E3779B97F4A7C15ull);
        run_config(&r, &tr, w, ti);
        tr_clear(&tr);
      }
    }
    th_case("%s", "");
  }
  ps_context_destroy(ref);
  ps_context_destroy(ctx);
  return th_finish();
}
