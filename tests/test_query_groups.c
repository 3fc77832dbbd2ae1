/*
 * query_groups: GROUP BY past a table of every possible key (hashed groups:
 * the run collects the distinct keys of the selected rows, numbers them in
 * key order, then aggregates). Seeded random tables of 10^4..10^5 rows whose
 * keys (a FOR integer of 18..40 bits, signed or unsigned, nullable or not,
 * values in runs or scattered; or that or dictionary strings, sorted or
 * not, and a 12..15-bit integer) make 10^3..10^5 groups, a random WHERE, every aggregate
 * kind, compared with the oracle written in the tests (qoracle.c: groups
 * found by sorting the rows' decoded keys) and, on a device backend, with
 * the reference backend datum for datum (bits and double renderings);
 * chunked and not; a keys pass whose first table is too small (internal
 * option query_group_slots: it grows and runs again); no row selected; a
 * corrupt key code.
 */
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "internal_options.h" /* query_group_slots */
#include "qoracle.h"

/* ---- comparing ----------------------------------------------------------------- */

/* res against the oracle's o (keys and values), or against another result
 * `want` of the same query (o NULL). */
static int compare(const ps_query_result *res, const oresult *o, const ps_query_result *want, const oquery *q,
                   const char *label) {
  const uint64_t groups = o ? o->groups : ps_query_result_groups(want);
  if (!CHECKF(ps_query_result_groups(res) == groups, "%s: %llu groups, expected %llu", label,
              (unsigned long long)ps_query_result_groups(res), (unsigned long long)groups))
    return 0;
  for (uint64_t g = 0; g < groups; g++) {
    for (int k = 0; k < q->n_keys; k++) {
      ps_datum d, w;
      CHECK_OK(NULL, ps_query_result_key(res, g, (uint32_t)k, &d));
      if (o)
        w = o->keys[g * 2 + k];
      else
        CHECK_OK(NULL, ps_query_result_key(want, g, (uint32_t)k, &w));
      if (!CHECKF(oq_datum_eq(&d, &w, 1) || (o && !d.str && !d.is_null && d.lo == w.lo && d.hi == w.hi),
                  "%s: group %llu key %d differs", label, (unsigned long long)g, k)) {
        oq_print_datum("got", &d), oq_print_datum("expected", &w);
        return 0;
      }
    }
    for (int a = 0; a < q->n_aggs; a++) {
      ps_datum d, w;
      CHECK_OK(NULL, ps_query_result_value(res, g, (uint32_t)a, &d));
      if (o)
        w = o->values[g * PS_QUERY_MAX_AGGS + a];
      else
        CHECK_OK(NULL, ps_query_result_value(want, g, (uint32_t)a, &w));
      /* the oracle's doubles are its own: bits and scale against it, every
       * field against the reference */
      const int same =
          o ? (d.is_null == w.is_null && (d.is_null || (d.lo == w.lo && d.hi == w.hi && d.scale == w.scale)))
            : oq_datum_eq(&d, &w, 1);
      if (!CHECKF(same, "%s: group %llu aggregate %d differs", label, (unsigned long long)g, a)) {
        oq_print_datum("got", &d), oq_print_datum("expected", &w);
        return 0;
      }
    }
  }
  return 1;
}

/* ---- random tables and queries --------------------------------------------------- */

/* A FOR key column of `type` at width w whose codes are below[i]-th multiples
 * of step (about `groups` distinct values spread over the width), in runs
 * of equal values or scattered. */
static tcol *int_key(th_rng *r, ps_type type, uint64_t n, uint32_t w, uint64_t groups, int runs, int nulls) {
  uint64_t *codes = th_calloc(n, sizeof *codes);
  const uint64_t step = tcol_width_max(w) / groups;
  for (uint64_t i = 0; i < n; i++)
    codes[i] = runs && i && !th_chance(r, 10) ? codes[i - 1] : th_below(r, groups) * (step ? step : 1);
  uint8_t *validity = tcol_random_validity(r, n, nulls);
  ps_reference ref;
  if (tcol_is_unsigned(type))
    ref.u = th_below(r, 1000);
  else
    ref.i = (int64_t)th_below(r, 2001) - 1000;
  tcol *c = tcol_for(type, n, w, 0, ref, codes, validity, NULL);
  free(codes);
  free(validity);
  return c;
}

/* A key column of about `groups` distinct values over n rows; FOR keys are
 * 18 bits wide or more (more possible keys than PS_QUERY_MAX_GROUPS). */
static tcol *key_col(th_rng *r, uint64_t n, uint64_t groups, int runs, int dict) {
  const int nulls = th_chance(r, 50) ? TN_FEW : TN_NO_BITMAP;
  if (dict) { /* dictionary strings */
    size_t d = (size_t)(groups < 40000 ? groups : 40000);
    uint32_t w = tcol_bits(d - 1) + (uint32_t)th_below(r, 3);
    return tcol_random_dict(r, n, w, d, th_chance(r, 50), nulls);
  }
  static const ps_type types[] = {PS_TYPE_INT32, PS_TYPE_INT64, PS_TYPE_UINT32, PS_TYPE_UINT64};
  const ps_type t = types[th_below(r, 4)];
  const uint32_t w =
      t == PS_TYPE_INT32 || t == PS_TYPE_UINT32 ? 18 + (uint32_t)th_below(r, 11) : 18 + (uint32_t)th_below(r, 23);
  return int_key(r, t, n, w, groups, runs, nulls);
}

static void random_round(ps_context *ctx, ps_context *ref, int round) {
  th_rng *r = &th.rng;
  const int quick = getenv("PACKSCAN_TEST_QUICK") != NULL;
  const uint64_t n = 10000 + th_below(r, quick ? 30000 : 90000);
  const int n_keys = 1 + (int)th_below(r, 2), runs = th_chance(r, 25);
  const uint64_t groups = n_keys == 1 ? n / (1 + th_below(r, 3)) : 60 + th_below(r, 200);
  trun tr;
  tr_init(&tr, ctx, ref);
  int keys[2], ok = 1;
  keys[0] = tr_add(&tr, key_col(r, n, groups, runs, n_keys == 2 && th_chance(r, 50)));
  ok &= keys[0] >= 0;
  /* a second key of 2^12..2^15 possible keys: with the first one's 60 or
   * more, past a table of every key */
  if (n_keys == 2 && ok) {
    tcol *c = tcol_random_for(r, PS_TYPE_INT16, n, 12 + (uint32_t)th_below(r, 4), TN_FEW);
    keys[1] = tr_add(&tr, c);
    ok &= keys[1] >= 0;
  }
  static const ps_type vtypes[] = {PS_TYPE_INT8, PS_TYPE_INT64, PS_TYPE_UINT16, PS_TYPE_FLOAT64, PS_TYPE_FLOAT32};
  int vcols[3];
  for (int i = 0; i < 3 && ok; i++) {
    const ps_type t = vtypes[th_below(r, 5)];
    const uint32_t w = t == PS_TYPE_INT8 ? 1 + (uint32_t)th_below(r, 8) : (uint32_t)th_below(r, i == 2 ? 64 : 30);
    vcols[i] = tr_add(&tr, tcol_random_for(r, t, n, w, (int)th_below(r, TN_COUNT)));
    ok &= vcols[i] >= 0;
  }
  if (!ok) {
    tr_clear(&tr);
    return;
  }
  oquery q;
  memset(&q, 0, sizeof q);
  q.n_keys = n_keys;
  q.keys[0] = keys[0];
  q.keys[1] = keys[1];
  const int pcols[5] = {vcols[0], vcols[1], vcols[2], keys[0], keys[n_keys - 1]};
  if (!th_chance(r, 20)) q.where = gen_tree(r, &tr, pcols, 5, 2, 5);
  static const ps_agg_kind kinds[] = {PS_AGG_COUNT_STAR, PS_AGG_COUNT, PS_AGG_SUM, PS_AGG_MIN, PS_AGG_MAX, PS_AGG_AVG};
  q.n_aggs = 6 + (int)th_below(r, 3);
  for (int a = 0; a < q.n_aggs; a++) {
    q.kinds[a] = kinds[a % 6];
    if (q.kinds[a] == PS_AGG_COUNT_STAR) continue;
    q.vals[a] = col_node(vcols[th_below(r, 3)]);
    if (a >= 6) q.vals[a] = arith_node(PS_MUL, q.vals[a], col_node(vcols[th_below(r, 2)]));
  }
  th_case("round %d: %llu rows, %d keys, about %llu groups%s", round, (unsigned long long)n, n_keys,
          (unsigned long long)groups, runs ? ", keys in runs" : "");
  oresult o;
  oracle_query(tr.cols, n, &q, &o);
  ps_query_result *res = NULL, *want = NULL;
  const ps_status st = oq_run(ctx, tr.h, n, &q, 0, &res);
  char label[96];
  snprintf(label, sizeof label, "round %d", round);
  if (CHECKF(st == o.status, "%s: status %s (%s), oracle %s", label, ps_status_name(st), ps_context_last_error(ctx),
             ps_status_name(o.status)) &&
      st == PS_OK) {
    compare(res, &o, NULL, &q, label);
    if (ref && CHECK_OK(ref, oq_run(ref, tr.hr, n, &q, 0, &want))) compare(res, NULL, want, &q, "against reference");
  }
  ps_query_result_destroy(res);
  ps_query_result_destroy(want);
  oresult_free(&o);
  oq_free(&q);
  tr_clear(&tr);
}

/* Named: a keys pass that must grow its table; no row selected; a chunked
 * context. */
static void named_cases(ps_context *ctx, ps_context *ref) {
  th_rng *r = &th.rng;
  enum { N = 20000 };
  trun tr;
  tr_init(&tr, ctx, ref);
  const int k = tr_add(&tr, int_key(r, PS_TYPE_INT64, N, 30, (uint64_t)1 << 30, 0, TN_FEW));
  const int v = tr_add(&tr, tcol_random_for(r, PS_TYPE_INT32, N, 20, TN_HALF));
  if (k < 0 || v < 0) {
    tr_clear(&tr);
    return;
  }
  oquery q;
  memset(&q, 0, sizeof q);
  q.n_keys = 1;
  q.keys[0] = k;
  q.n_aggs = 3;
  q.kinds[0] = PS_AGG_COUNT_STAR;
  q.kinds[1] = PS_AGG_SUM;
  q.vals[1] = col_node(v);
  q.kinds[2] = PS_AGG_MIN;
  q.vals[2] = col_node(v);
  oresult o;
  oracle_query(tr.cols, N, &q, &o);
  ps_internal_options opts = *ps_context_internal_options(ctx);
  for (int slots = 6; slots <= 16; slots += 10) { /* 64 slots: grows twice; 65536: once */
    th_case("table of 2^%d slots for %llu groups", slots, (unsigned long long)o.groups);
    opts.query_group_slots = slots;
    CHECK_OK(ctx, ps_context_set_internal_options(ctx, &opts));
    ps_query_result *res = NULL;
    if (CHECK_OK(ctx, oq_run(ctx, tr.h, N, &q, 0, &res))) compare(res, &o, NULL, &q, "grown table");
    ps_query_result_destroy(res);
  }
  opts.query_group_slots = 0;
  CHECK_OK(ctx, ps_context_set_internal_options(ctx, &opts));
  oresult_free(&o);
  /* no row selected: no groups */
  th_case("no row selected");
  q.where = on_isnull(k, 1);
  q.where = on_and(q.where, on_isnull(k, 0));
  ps_query_result *res = NULL;
  if (CHECK_OK(ctx, oq_run(ctx, tr.h, N, &q, 0, &res))) CHECK(ps_query_result_groups(res) == 0);
  ps_query_result_destroy(res);
  oq_free(&q);
  /* a corrupt key code (a dictionary index past its 1000 strings) found by
   * the keys pass */
  th_case("corrupt key");
  tstrs dict;
  memset(&dict, 0, sizeof dict);
  tcol_random_strings(r, 1000, 1, &dict);
  uint64_t *codes = th_calloc(N, sizeof *codes);
  for (uint64_t i = 0; i < N; i++) codes[i] = th_below(r, 1000);
  codes[12345] = 5000;
  const int s = tr_add(&tr, tcol_dict(&dict, 0, 0, PS_TYPE_UINT32, N, 13, 0, codes, NULL, NULL));
  free(codes);
  tstrs_free(&dict);
  memset(&q, 0, sizeof q);
  q.n_keys = 2;
  q.keys[0] = s;
  q.keys[1] = k;
  q.n_aggs = 1;
  q.kinds[0] = PS_AGG_COUNT_STAR;
  res = NULL;
  if (s >= 0) {
    CHECK_STATUS(ctx, oq_run(ctx, tr.h, N, &q, 0, &res), PS_ERR_CORRUPT_DATA);
    CHECKF(th_contains_ci(ps_context_last_error(ctx), "row 12345"), "message: %s", ps_context_last_error(ctx));
    CHECK(res == NULL);
  }
  ps_query_result_destroy(res);
  oq_free(&q);
  tr_clear(&tr);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "query_groups");
  ps_context *ctx = th_context(0);
  ps_context *chunked = th_context(4096);
  ps_context *ref = strcmp(th.backend, "reference") ? th_reference_context(0) : NULL;
  named_cases(ctx, ref);
  const int rounds = (int)th_reps(getenv("PACKSCAN_TEST_QUICK") ? 4 : 12);
  for (int round = 0; round < rounds; round++) random_round(round % 2 ? chunked : ctx, ref, round);
  ps_context_destroy(ref);
  ps_context_destroy(chunked);
  ps_context_destroy(ctx);
  return th_finish();
}
