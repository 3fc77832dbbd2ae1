/*
 * float_sum: exact SUM and AVG of lossless float columns (ALP and ordered
 * bits mappings, float64 and float32; docs/float-encoding.md, "SUM and
 * AVG"), against the tests' exact-sum oracle (fexact.h): the exact sum of
 * the selected doubles rounded once by strtod; AVG the exact quotient by the
 * count rounded once.
 *  - seeded random columns of several families (decimals with odd values,
 *    unit conversions, random bit patterns within 100 binary orders,
 *    magnitudes near 2^100 and near 2^-60), sizes 0, 1, 31, 33, 1000, 5000,
 *    with and without nulls: SUM, AVG, COUNT and COUNT(*) WHERE x > a
 *    literal, with and without GROUP BY a small key, on the generic kernels
 *    and (device backends) the specialized ones;
 *  - edge cases: -0.0 alone (sums to +0.0), an empty selection (NULL), the
 *    window's edge (1.0 beside 2^-125 sums; beside 2^-126 it is
 *    NOT_REPRESENTABLE naming the aggregate, the column and the row), an
 *    infinity selected (NOT_REPRESENTABLE) and left out by the WHERE (ALP:
 *    summed), values 200 binary orders apart, a sum past 38 digits;
 *  - ps_aggregate's sum_double of the same columns, with and without a
 *    selection bitmap (at an offset in its buffer): the query's SUM bit for
 *    bit, NaN where that SUM is not representable.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "fexact.h"
#include "tcol.h"

/* ---- columns ------------------------------------------------------------------ */

enum { F_DECIMAL_ODD, F_MPH, F_BITS, F_HUGE, F_TINY, F_COUNT };
static const char *family_name[F_COUNT] = {"decimal+odd", "mph", "bits", "huge", "tiny"};

/* A double of random bits whose binary exponent lies in [lo, lo + span). */
static double random_bits(th_rng *r, int lo, int span, bool f32) {
  const int ex = lo + (int)th_below(r, (uint64_t)span);
  double x = ldexp(1.0 + (double)(th_u64(r) >> 11) / 9007199254740992.0, ex);
  if (th_chance(r, 50)) x = -x;
  return f32 ? (double)(float)x : x;
}

static double draw(th_rng *r, int fam, bool f32) {
  double x;
  switch (fam) {
    case F_DECIMAL_ODD:
      x = th_chance(r, 3) ? random_bits(r, -8, 16, false) : (double)((int64_t)th_below(r, 4000) - 2000) / 1000.0;
      break;
    case F_MPH:
      x = (double)th_below(r, 60) * 1.15078;
      if (th_chance(r, 5)) x = -x;
      break;
    case F_BITS: /* 70 binary orders and 53 bits: within the window's 126 */
      x = random_bits(r, -10, 70, f32);
      break;
    case F_HUGE: /* sums stay within 38 decimal digits */
      x = random_bits(r, 60, 40, f32);
      break;
    default: /* F_TINY: positive, so that no sum cancels below the results' scale 38 */
      x = fabs(random_bits(r, -64, 8, f32));
      break;
  }
  return f32 ? (double)(float)x : x;
}

typedef struct fcol {
  uint64_t n;
  bool f32;
  double *v;
  uint8_t *valid;
  ps_encoded enc;
  ps_column *col;
} fcol;

static bool valid_row(const fcol *c, uint64_t i) { return !c->valid || ((c->valid[i / 8] >> (i % 8)) & 1); }

static bool fcol_make(ps_context *ctx, fcol *c, const double *v, uint64_t n, bool f32, const uint8_t *valid) {
  memset(c, 0, sizeof *c);
  c->n = n, c->f32 = f32;
  c->v = th_malloc(n * 8 + 8);
  for (uint64_t i = 0; i < n; i++) c->v[i] = f32 ? (double)(float)v[i] : v[i]; /* the column's values */
  if (valid) {
    c->valid = th_malloc(n / 8 + 1);
    memcpy(c->valid, valid, n / 8 + 1);
  }
  ps_plain in = {f32 ? PS_TYPE_FLOAT32 : PS_TYPE_FLOAT64, NULL, n, c->valid};
  float *f = NULL;
  if (f32) {
    f = th_malloc(n * 4 + 4);
    for (uint64_t i = 0; i < n; i++) f[i] = (float)v[i];
    in.values = f;
  } else {
    in.values = c->v;
  }
  char err[512];
  bool ok = CHECKF(ps_encode_for(&in, 0, -1, 0, NULL, err, sizeof err, &c->enc) == PS_OK, "encode: %s", err) &&
            CHECK_OK(ctx, ps_column_create_for(ctx, &c->enc.desc, &c->col)) && CHECK_OK(ctx, ps_column_set_name(c->col, "x"));
  free(f);
  return ok;
}

static void fcol_free(fcol *c) {
  ps_column_destroy(c->col);
  ps_encoded_destroy(&c->enc);
  free(c->v);
  free(c->valid);
  memset(c, 0, sizeof *c);
}

/* ---- queries -------------------------------------------------------------------- */

/* SUM(x), AVG(x), COUNT(x), COUNT(*) WHERE x > lit (NaN: no WHERE) GROUP BY
 * key (NULL: none), run; the result or NULL with the call's status. */
static ps_status run_sums(ps_context *ctx, const fcol *c, double lit, ps_column *key, ps_query_result **out) {
  *out = NULL;
  ps_value *v = NULL;
  ps_expr *where = NULL;
  ps_query *q = NULL;
  ps_status st = ps_value_column(ctx, c->col, &v);
  if (st == PS_OK && !isnan(lit)) st = ps_expr_compare(ctx, c->col, PS_GT, ps_lit_float(lit), &where);
  if (st == PS_OK) {
    const ps_agg aggs[4] = {{PS_AGG_SUM, v}, {PS_AGG_AVG, v}, {PS_AGG_COUNT, v}, {PS_AGG_COUNT_STAR, NULL}};
    ps_query_desc d;
    ps_query_desc_init(&d);
    d.rows = c->n;
    d.where = where;
    d.aggs = aggs;
    d.n_aggs = 4;
    if (key) d.n_keys = 1, d.keys[0] = key;
    st = ps_query_create(ctx, &d, &q);
  }
  if (st == PS_OK) st = ps_query_run(ctx, q, out);
  ps_query_destroy(q);
  ps_expr_destroy(where);
  ps_value_destroy(v);
  return st;
}

static bool selected(const fcol *c, uint64_t i, double lit) { return valid_row(c, i) && (isnan(lit) || c->v[i] > lit); }

/* A datum of a lossless float's SUM or AVG: want's bits, and a decimal that reads back as it. */
static void check_datum(const ps_datum *d, double want, const char *what) {
  char text[PS_DATUM_TEXT_SIZE];
  CHECKF(!d->is_null && fx_bits(d->as_double) == fx_bits(want), "%s: %.17g (0x%016" PRIx64 "), expected %.17g", what,
         d->as_double, fx_bits(d->as_double), want);
  CHECKF(ps_datum_format(d, text, sizeof text) == PS_OK && strtod(text, NULL) == want, "%s: decimal %s for %.17g",
         what, text, want);
}

/* The query against the oracle; keys: the key column's codes (NULL: no GROUP BY). */
static void check_sums(ps_context *ctx, const fcol *c, double lit, ps_column *key, const uint8_t *keys,
                       const char *what) {
  ps_query_result *res = NULL;
  if (!CHECK_OK(ctx, run_sums(ctx, c, lit, key, &res))) return;
  const uint32_t n_keys = key ? 4 : 1;
  uint64_t groups_seen = 0;
  for (uint32_t k = 0; k < n_keys; k++) {
    fx_exact e;
    memset(&e, 0, sizeof e);
    uint64_t rows = 0;
    for (uint64_t i = 0; i < c->n; i++) {
      if (keys && keys[i] != k) continue;
      if (!isnan(lit) && !selected(c, i, lit)) continue; /* NULL > lit is UNKNOWN: not selected */
      rows++;
      if (valid_row(c, i)) fx_add(&e, c->v[i]);
    }
    if (key && rows == 0) continue; /* no group */
    const uint64_t g = groups_seen++;
    if (!CHECKF(g < ps_query_result_groups(res), "%s: group of key %u missing", what, k)) break;
    ps_datum kd, sum, avg, cnt, star;
    if (key) {
      CHECK_OK(NULL, ps_query_result_key(res, g, 0, &kd));
      CHECKF(kd.lo == k, "%s: group %" PRIu64 " has key %" PRIu64 ", expected %u", what, g, kd.lo, k);
    }
    CHECK_OK(NULL, ps_query_result_value(res, g, 0, &sum));
    CHECK_OK(NULL, ps_query_result_value(res, g, 1, &avg));
    CHECK_OK(NULL, ps_query_result_value(res, g, 2, &cnt));
    CHECK_OK(NULL, ps_query_result_value(res, g, 3, &star));
    CHECKF(star.lo == rows && cnt.lo == e.count, "%s key %u: counts %" PRIu64 ", %" PRIu64 "; expected %" PRIu64
           ", %" PRIu64, what, k, star.lo, cnt.lo, rows, e.count);
    if (e.count == 0) {
      CHECKF(sum.is_null && avg.is_null, "%s key %u: SUM and AVG of no values are not NULL", what, k);
      continue;
    }
    char w[200];
    snprintf(w, sizeof w, "%s key %u SUM", what, k);
    check_datum(&sum, fx_value(&e, false), w);
    snprintf(w, sizeof w, "%s key %u AVG", what, k);
    check_datum(&avg, fx_value(&e, true), w);
  }
  CHECKF(groups_seen == ps_query_result_groups(res), "%s: %" PRIu64 " groups, expected %" PRIu64, what,
         ps_query_result_groups(res), groups_seen);
  ps_query_result_destroy(res);
}

/* ps_aggregate of the column over the rows x > lit select (NaN: no
 * selection; the bitmap at byte offset 4 of its buffer): count, and the
 * sum's double as the query's SUM (the oracle's), or NaN where unrep. */
static void check_aggregate(ps_context *ctx, const fcol *c, double lit, bool unrep, const char *what) {
  ps_expr *w = NULL;
  ps_buffer *sel = NULL;
  ps_aggregates ag;
  fx_exact e;
  memset(&e, 0, sizeof e);
  for (uint64_t i = 0; i < c->n; i++)
    if (selected(c, i, lit)) fx_add(&e, c->v[i]);
  if (!isnan(lit) && !(CHECK_OK(ctx, ps_expr_compare(ctx, c->col, PS_GT, ps_lit_float(lit), &w)) &&
                       CHECK_OK(ctx, ps_buffer_create(ctx, 4 + (c->n + 31) / 32 * 4, &sel)) &&
                       CHECK_OK(ctx, ps_filter_device(ctx, w, sel, 4, NULL))))
    goto done;
  if (!CHECK_OK(ctx, ps_aggregate(ctx, c->col, sel, 4, &ag))) goto done;
  CHECKF(ag.count == e.count && ag.has_value == (e.count > 0), "%s: ps_aggregate counts %" PRIu64 ", expected %" PRIu64,
         what, ag.count, e.count);
  CHECKF(ag.sum_lo == 0 && ag.sum_hi == 0 && ag.sum_int64 == 0 && !ag.sum_fits_int64,
         "%s: ps_aggregate's integer sum fields of a float column are not zero", what);
  if (e.count == 0) goto done;
  if (unrep) {
    CHECKF(isnan(ag.sum_double), "%s: ps_aggregate's sum %.17g, expected NaN (not representable)", what, ag.sum_double);
  } else {
    const double want = fx_value(&e, false);
    CHECKF(fx_bits(ag.sum_double) == fx_bits(want), "%s: ps_aggregate's sum %.17g (0x%016" PRIx64 "), expected %.17g",
           what, ag.sum_double, fx_bits(ag.sum_double), want);
  }
done:
  ps_buffer_destroy(sel);
  ps_expr_destroy(w);
}

/* A query whose run must fail with `want`, its message holding `text`. */
static void check_fails(ps_context *ctx, const fcol *c, double lit, ps_status want, const char *text) {
  ps_query_result *res = NULL;
  const ps_status st = run_sums(ctx, c, lit, NULL, &res);
  CHECKF(st == want && !res, "expected %s, got %s: %s", ps_status_name(want), ps_status_name(st),
         ps_context_last_error(ctx));
  if (text) CHECKF(th_contains_ci(ps_context_last_error(ctx), text), "message '%s' lacks '%s'", ps_context_last_error(ctx), text);
  ps_query_result_destroy(res);
}

/* spec: on specialized kernels, whose every build (one per column: the
 * mapping and the unit are constants of its text) costs a compile, one
 * size with nulls. */
static void random_sweep(ps_context *ctx, th_rng *r, const char *kernels, bool spec) {
  static const uint64_t sizes[] = {0, 1, 31, 33, 1000, 5000};
  for (int fam = 0; fam < F_COUNT; fam++)
    for (int f32 = 0; f32 < 2; f32++)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int nulls = 0; nulls < 2; nulls++) {
          if (spec && (sizes[s] != 1000 || !nulls)) continue;
          if (th.quick && sizes[s] >= 1000 && th_below(r, 2)) continue;
          const uint64_t n = sizes[s];
          th_case("%s: %s %s n=%" PRIu64 " nulls=%d", kernels, family_name[fam], f32 ? "float32" : "float64", n,
                  nulls);
          double *v = th_malloc(n * 8 + 8);
          uint8_t *valid = NULL, *keys = th_malloc(n + 1);
          for (uint64_t i = 0; i < n; i++) v[i] = draw(r, fam, f32), keys[i] = (uint8_t)th_below(r, 4);
          /* a -0.0 keeps decimals off FOR-decimal (whose sums are exact decimals: test_query) */
          const uint64_t zero_row = n >= 2 ? th_below(r, n) : 0;
          if (n >= 2) v[zero_row] = -0.0;
          if (nulls) {
            valid = th_malloc(n / 8 + 1);
            for (uint64_t i = 0; i < n / 8 + 1; i++) valid[i] = (uint8_t)th_u64(r);
            if (n >= 2) valid[zero_row / 8] |= (uint8_t)(1u << (zero_row % 8));
          }
          fcol c;
          if (fcol_make(ctx, &c, v, n, f32, valid) &&
              CHECKF(c.enc.desc.float_map != PS_FLOAT_MAP_DECIMAL || n < 2, "float map %u", c.enc.desc.float_map) &&
              c.enc.desc.float_map != PS_FLOAT_MAP_DECIMAL) {
            check_sums(ctx, &c, NAN, NULL, NULL, "no WHERE");
            check_aggregate(ctx, &c, NAN, false, "ps_aggregate");
            const double lit = n ? c.v[th_below(r, n)] : 0.0;
            check_sums(ctx, &c, lit, NULL, NULL, "WHERE x > lit");
            check_aggregate(ctx, &c, lit, false, "ps_aggregate of x > lit");
            /* GROUP BY a 2-bit key */
            uint64_t *codes = th_malloc(n * 8 + 8);
            for (uint64_t i = 0; i < n; i++) codes[i] = keys[i];
            ps_reference ref;
            ref.u = 0;
            tcol *kt = tcol_for(PS_TYPE_UINT8, n, 2, 0, ref, codes, NULL, NULL);
            ps_column *kc = NULL;
            if (CHECK_OK(ctx, tcol_create(ctx, kt, &kc))) check_sums(ctx, &c, lit, kc, keys, "GROUP BY key");
            ps_column_destroy(kc);
            tcol_free(kt);
            free(codes);
          }
          fcol_free(&c);
          free(v);
          free(valid);
          free(keys);
        }
}

static void edge_cases(ps_context *ctx, const char *kernels) {
  fcol c;
  double v[64];
  th_case("%s: -0.0 alone", kernels);
  for (int i = 0; i < 64; i++) v[i] = -0.0;
  for (int f32 = 0; f32 < 2; f32++) {
    if (fcol_make(ctx, &c, v, 64, f32, NULL)) {
      ps_query_result *res = NULL;
      ps_datum s, a;
      if (CHECK_OK(ctx, run_sums(ctx, &c, NAN, NULL, &res)) && CHECK_OK(NULL, ps_query_result_value(res, 0, 0, &s)) &&
          CHECK_OK(NULL, ps_query_result_value(res, 0, 1, &a)))
        CHECKF(!s.is_null && fx_bits(s.as_double) == 0 && fx_bits(a.as_double) == 0, "SUM %g AVG %g of -0.0",
               s.as_double, a.as_double);
      ps_query_result_destroy(res);
      /* an empty selection: NULL */
      if (CHECK_OK(ctx, run_sums(ctx, &c, 1.0, NULL, &res)) && CHECK_OK(NULL, ps_query_result_value(res, 0, 0, &s)) &&
          CHECK_OK(NULL, ps_query_result_value(res, 0, 1, &a)))
        CHECK(s.is_null && a.is_null);
      ps_query_result_destroy(res);
    }
    fcol_free(&c);
  }

  th_case("%s: the window's edge", kernels);
  for (int i = 0; i < 64; i++) v[i] = i % 3 ? 0.75 : 1.0;
  v[5] = ldexp(1.0, -125); /* the largest magnitude is 1.0: units of 2^-125 */
  if (fcol_make(ctx, &c, v, 64, false, NULL)) check_sums(ctx, &c, NAN, NULL, NULL, "1.0 and 2^-125");
  fcol_free(&c);
  v[5] = ldexp(1.0, -126);
  v[9] = ldexp(-1.0, -126);
  if (fcol_make(ctx, &c, v, 64, false, NULL)) {
    check_fails(ctx, &c, NAN, PS_ERR_NOT_REPRESENTABLE, "aggregate 0 (SUM of float column 'x'): row 5 ");
    check_aggregate(ctx, &c, NAN, true, "ps_aggregate with 2^-126");
    check_sums(ctx, &c, 0.5, NULL, NULL, "2^-126 left out"); /* the rows the WHERE leaves are not read */
    check_aggregate(ctx, &c, 0.5, false, "ps_aggregate with 2^-126 left out");
  }
  fcol_free(&c);

  th_case("%s: infinities", kernels);
  for (int i = 0; i < 64; i++) v[i] = (double)(i % 7) * 0.1 + 1.15078 * (i % 3);
  v[40] = INFINITY;
  for (int f32 = 0; f32 < 2; f32++) {
    if (fcol_make(ctx, &c, v, 64, f32, NULL)) {
      check_fails(ctx, &c, NAN, PS_ERR_NOT_REPRESENTABLE, "row 40 holds an infinity");
      check_aggregate(ctx, &c, NAN, true, "ps_aggregate with an infinity");
      check_aggregate(ctx, &c, 0.2, true, "ps_aggregate with the infinity selected");
      if (c.enc.desc.float_map == PS_FLOAT_MAP_ALP) {
        /* the WHERE leaves the infinity out (x < inf is not x > lit: NOT x >= inf) */
        ps_value *x = NULL;
        ps_expr *w = NULL;
        ps_query *q = NULL;
        ps_query_result *res = NULL;
        ps_datum s;
        fx_exact e;
        memset(&e, 0, sizeof e);
        for (int i = 0; i < 64; i++)
          if (c.v[i] < INFINITY) fx_add(&e, c.v[i]);
        if (CHECK_OK(ctx, ps_value_column(ctx, c.col, &x)) &&
            CHECK_OK(ctx, ps_expr_compare(ctx, c.col, PS_LT, ps_lit_float(INFINITY), &w))) {
          const ps_agg agg = {PS_AGG_SUM, x};
          ps_query_desc d;
          ps_query_desc_init(&d);
          d.rows = 64, d.where = w, d.aggs = &agg, d.n_aggs = 1;
          if (CHECK_OK(ctx, ps_query_create(ctx, &d, &q)) && CHECK_OK(ctx, ps_query_run(ctx, q, &res)) &&
              CHECK_OK(NULL, ps_query_result_value(res, 0, 0, &s)))
            check_datum(&s, fx_value(&e, false), "SUM WHERE x < inf");
        }
        ps_query_result_destroy(res);
        ps_query_destroy(q);
        ps_expr_destroy(w);
        ps_value_destroy(x);
      }
    }
    fcol_free(&c);
  }
  v[40] = -INFINITY;
  if (fcol_make(ctx, &c, v, 64, false, NULL)) {
    check_fails(ctx, &c, NAN, PS_ERR_NOT_REPRESENTABLE, "row 40");
    if (c.enc.desc.float_map == PS_FLOAT_MAP_ALP) /* a selection that leaves -inf out */
      check_aggregate(ctx, &c, 0.2, false, "ps_aggregate with -inf left out");
  }
  fcol_free(&c);

  th_case("%s: 200 binary orders apart", kernels);
  for (int i = 0; i < 64; i++) v[i] = i % 2 ? ldexp(1.5, 100) : ldexp(1.25, -100);
  if (fcol_make(ctx, &c, v, 64, false, NULL)) {
    check_fails(ctx, &c, NAN, PS_ERR_NOT_REPRESENTABLE, "row 0 holds");
    check_sums(ctx, &c, 1.0, NULL, NULL, "the large ones alone"); /* the window is the column's: 2^-100 is out */
  }
  fcol_free(&c);

  th_case("%s: a sum past 38 digits", kernels);
  for (int i = 0; i < 64; i++) v[i] = 1e37 * (1 + i % 5);
  if (fcol_make(ctx, &c, v, 64, false, NULL)) {
    check_fails(ctx, &c, NAN, PS_ERR_NOT_REPRESENTABLE, "no decimal of 38 digits");
    check_aggregate(ctx, &c, NAN, false, "ps_aggregate past 38 digits"); /* a double needs no decimal */
  }
  fcol_free(&c);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "float_sum");
  th_rng *r = &th.rng;
  for (int spec = 0; spec < (th_is_reference() ? 1 : 2); spec++) {
    th_options_reset();
    if (spec) th_test_options("query_specialize=1");
    ps_context *ctx = th_context(0);
    const char *kernels = spec ? "specialized" : "generic";
    edge_cases(ctx, kernels);
    random_sweep(ctx, r, kernels, spec != 0);
    ps_context_destroy(ctx);
  }
  return th_finish();
}
