/*
 * float_arith: arithmetic on lossless float columns in aggregate values
 * (docs/float-encoding.md, "Arithmetic"): every + - * one IEEE double
 * operation per row, SUM and AVG the exact sum of those doubles rounded
 * once, MIN and MAX the doubles. Against an oracle written here: each row's
 * double computed in C, one rounded operation at a time (volatile stores:
 * nothing fused), the exact sum by the tests' exact-sum oracle (fexact.h),
 * MIN and MAX by the doubles' total order (-0.0 below +0.0).
 *  - seeded random lossless columns x (ALP decimals with exceptions, unit
 *    conversions, ordered bits; float64 and float32) and y (ordered bits),
 *    an int32 column q and a FOR-decimal float64 column p (cents), sizes 1,
 *    33, 1000, with and without nulls: SUM, AVG, MIN, MAX, COUNT and
 *    COUNT(*) of x * 2, x + y, x - y * 3, x * q, (x + 0.1) * p and CASE WHEN
 *    q > 0 THEN x ELSE y * q END, without a WHERE, WHERE x > a literal, and
 *    that WHERE GROUP BY a small key;
 *  - edge cases: an infinity selected (SUM NOT_REPRESENTABLE naming the
 *    aggregate and the row; x - x NaN: MIN too, COUNT counts it) and left
 *    out by the WHERE, -0.0 (SUM +0.0, MIN -0.0), a sum that cancels (exact
 *    where adding the doubles in order loses it), a product below the
 *    window (NOT_REPRESENTABLE);
 *  - a partial result of each half of a table merged, and a context over
 *    two devices: the oracle's answer.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fexact.h"
#include "harness.h"
#include "packscan_arrow.h"
#include "tcol.h"

/* ---- per-row doubles, one rounding per operation ------------------------------ */

static double dadd(double a, double b) {
  volatile double r = a + b;
  return r;
}
static double dsub(double a, double b) {
  volatile double r = a - b;
  return r;
}
static double dmul(double a, double b) {
  volatile double r = a * b;
  return r;
}

/* The doubles' total order as int64 (-0.0 below +0.0). */
static int64_t ord(double x) {
  const uint64_t b = fx_bits(x);
  return (int64_t)((b >> 63) ? b ^ 0x7FFFFFFFFFFFFFFFull : b);
}

/* ---- the table ------------------------------------------------------------------ */

enum { F_DECIMAL_ODD, F_MPH, F_BITS, F_COUNT };
static const char *family_name[F_COUNT] = {"decimal+odd", "mph", "bits"};

static double random_bits(th_rng *r, int lo, int span) {
  const int ex = lo + (int)th_below(r, (uint64_t)span);
  double x = ldexp(1.0 + (double)(th_u64(r) >> 11) / 9007199254740992.0, ex);
  return th_chance(r, 50) ? -x : x;
}

/* Magnitudes within 2^-12 .. 2^24: every product of two columns and a
 * literal stays within the 126 binary orders of a window with its 53 bits. */
static double draw(th_rng *r, int fam) {
  switch (fam) {
    case F_DECIMAL_ODD:
      return th_chance(r, 3) ? random_bits(r, -8, 16) : (double)((int64_t)th_below(r, 4000) - 2000) / 1000.0;
    case F_MPH:
      return (double)((int64_t)th_below(r, 120) - 20) * 1.15078;
    default:
      return random_bits(r, -12, 36);
  }
}

typedef struct table {
  uint64_t n;
  bool f32;
  double *x, *y;         /* the lossless columns' values (x rounded to float where f32) */
  int64_t *q;            /* int32 values */
  int64_t *cents;        /* p = cents / 100 */
  uint8_t *key;          /* 0..3 */
  uint8_t *vx, *vy, *vq; /* validity (NULL: none) */
  ps_encoded ex, ey;
  tcol *tq, *tp, *tk;
  ps_column *cx, *cy, *cq, *cp, *ck;
} table;

static bool bit(const uint8_t *v, uint64_t i) { return !v || ((v[i / 8] >> (i % 8)) & 1); }

static bool encode_lossless(ps_context *ctx, const double *v, const uint8_t *valid, uint64_t n, bool f32,
                            ps_encoded *enc, ps_column **col, const char *name) {
  float *f = NULL;
  ps_plain in = {f32 ? PS_TYPE_FLOAT32 : PS_TYPE_FLOAT64, v, n, valid};
  if (f32) {
    f = th_malloc(n * 4 + 4);
    for (uint64_t i = 0; i < n; i++) f[i] = (float)v[i];
    in.values = f;
  }
  char err[512];
  /* PS_FLOAT_SCALE_LOSSLESS: the mapping whatever the values */
  const bool ok = CHECKF(ps_encode_for(&in, 0, PS_FLOAT_SCALE_LOSSLESS, 0, NULL, err, sizeof err, enc) == PS_OK,
                         "encode: %s", err) &&
                  CHECKF(enc->desc.float_map != PS_FLOAT_MAP_DECIMAL, "%s encoded as FOR-decimal", name) &&
                  CHECK_OK(ctx, ps_column_create_for(ctx, &enc->desc, col)) &&
                  CHECK_OK(ctx, ps_column_set_name(*col, name));
  free(f);
  return ok;
}

static void table_alloc(table *t, uint64_t n, bool f32, bool nulls) {
  memset(t, 0, sizeof *t);
  t->n = n, t->f32 = f32;
  t->x = th_malloc(n * 8 + 8), t->y = th_malloc(n * 8 + 8);
  t->q = th_malloc(n * 8 + 8), t->cents = th_malloc(n * 8 + 8), t->key = th_malloc(n + 1);
  if (nulls) t->vx = th_malloc(n / 8 + 1), t->vy = th_malloc(n / 8 + 1), t->vq = th_malloc(n / 8 + 1);
}

/* The table's columns from its values. */
static bool table_encode(ps_context *ctx, table *t) {
  const uint64_t n = t->n;
  uint64_t *cq = th_malloc(n * 8 + 8), *cp = th_malloc(n * 8 + 8), *ck = th_malloc(n * 8 + 8);
  for (uint64_t i = 0; i < n; i++)
    cq[i] = (uint64_t)(t->q[i] + 50), cp[i] = (uint64_t)(t->cents[i] + 100000), ck[i] = t->key[i];
  ps_reference rq, rp, rk;
  rq.i = -50, rp.i = -100000, rk.u = 0;
  t->tq = tcol_for(PS_TYPE_INT32, n, 7, 0, rq, cq, t->vq, NULL);
  t->tp = tcol_for(PS_TYPE_FLOAT64, n, 18, 2, rp, cp, NULL, NULL);
  t->tk = tcol_for(PS_TYPE_UINT8, n, 2, 0, rk, ck, NULL, NULL);
  free(cq), free(cp), free(ck);
  return encode_lossless(ctx, t->x, t->vx, n, t->f32, &t->ex, &t->cx, "x") &&
         encode_lossless(ctx, t->y, t->vy, n, false, &t->ey, &t->cy, "y") &&
         CHECK_OK(ctx, tcol_create(ctx, t->tq, &t->cq)) && CHECK_OK(ctx, tcol_create(ctx, t->tp, &t->cp)) &&
         CHECK_OK(ctx, tcol_create(ctx, t->tk, &t->ck));
}

/* n rows: x from xs (NULL: drawn from fam), the rest drawn. */
static bool table_make(ps_context *ctx, th_rng *r, table *t, uint64_t n, int fam, bool f32, bool nulls,
                       const double *xs) {
  table_alloc(t, n, f32, nulls);
  for (uint64_t i = 0; i < n; i++) {
    const double x = xs ? xs[i] : draw(r, fam);
    t->x[i] = f32 ? (double)(float)x : x;
    t->y[i] = draw(r, F_BITS);
    t->q[i] = (int64_t)th_below(r, 101) - 50;
    t->cents[i] = (int64_t)th_below(r, 200001) - 100000;
    t->key[i] = (uint8_t)th_below(r, 4);
  }
  if (nulls)
    for (uint64_t i = 0; i < n / 8 + 1; i++) /* 3 in 4 valid */
      t->vx[i] = (uint8_t)(th_u64(r) | th_u64(r)), t->vy[i] = (uint8_t)(th_u64(r) | th_u64(r)),
      t->vq[i] = (uint8_t)(th_u64(r) | th_u64(r));
  return table_encode(ctx, t);
}

/* Rows r0 .. r0 + n of src (r0 a multiple of 8) as a table of their own. */
static bool table_slice(ps_context *ctx, const table *src, uint64_t r0, uint64_t n, table *t) {
  table_alloc(t, n, src->f32, src->vx != NULL);
  memcpy(t->x, src->x + r0, n * 8), memcpy(t->y, src->y + r0, n * 8), memcpy(t->q, src->q + r0, n * 8);
  memcpy(t->cents, src->cents + r0, n * 8), memcpy(t->key, src->key + r0, n);
  if (src->vx)
    memcpy(t->vx, src->vx + r0 / 8, n / 8 + 1), memcpy(t->vy, src->vy + r0 / 8, n / 8 + 1),
        memcpy(t->vq, src->vq + r0 / 8, n / 8 + 1);
  return table_encode(ctx, t);
}

static void table_free(table *t) {
  ps_column_destroy(t->cx), ps_column_destroy(t->cy), ps_column_destroy(t->cq);
  ps_column_destroy(t->cp), ps_column_destroy(t->ck);
  ps_encoded_destroy(&t->ex), ps_encoded_destroy(&t->ey);
  tcol_free(t->tq), tcol_free(t->tp), tcol_free(t->tk);
  free(t->x), free(t->y), free(t->q), free(t->cents), free(t->key);
  free(t->vx), free(t->vy), free(t->vq);
  memset(t, 0, sizeof *t);
}

/* ---- the expressions -------------------------------------------------------------- */

enum { E_X2, E_XY, E_XY3, E_XQ, E_XP, E_CASE, E_X3, E_XX, E_COUNT };
static const char *expr_name[E_COUNT] = {
    "x * 2", "x + y", "x - y * 3", "x * q", "(x + 0.1) * p", "CASE WHEN q > 0 THEN x ELSE y * q END", "x * 3", "x - x"};

/* Row i's value of expression e: false where NULL. */
static bool row_value(const table *t, int e, uint64_t i, double *out) {
  const bool x_ok = bit(t->vx, i), y_ok = bit(t->vy, i), q_ok = bit(t->vq, i);
  const double x = t->x[i], y = t->y[i], q = (double)t->q[i];
  const double p = (double)t->cents[i] / 100.0; /* the PS_MODE_DOUBLE rule: (double)(int64)v / 10^2 */
  switch (e) {
    case E_X2:
      *out = dmul(x, 2.0);
      return x_ok;
    case E_X3:
      *out = dmul(x, 3.0);
      return x_ok;
    case E_XX:
      *out = dsub(x, x);
      return x_ok;
    case E_XY:
      *out = dadd(x, y);
      return x_ok && y_ok;
    case E_XY3:
      *out = dsub(x, dmul(y, 3.0));
      return x_ok && y_ok;
    case E_XQ:
      *out = dmul(x, q);
      return x_ok && q_ok;
    case E_XP:
      *out = dmul(dadd(x, 0.1), p);
      return x_ok;
    default: /* q > 0 is TRUE only on valid rows */
      if (q_ok && t->q[i] > 0) return *out = x, x_ok;
      *out = dmul(y, q);
      return y_ok && q_ok;
  }
}

static ps_value *build(ps_context *ctx, const table *t, int e) {
  ps_value *x = NULL, *a = NULL, *b = NULL, *c = NULL, *out = NULL;
  ps_expr *w = NULL;
  bool ok = CHECK_OK(ctx, ps_value_column(ctx, t->cx, &x));
  switch (e) {
    case E_X2:
    case E_X3:
      ok = ok && CHECK_OK(ctx, ps_value_literal(ctx, ps_lit_int(e == E_X2 ? 2 : 3), &a)) &&
           CHECK_OK(ctx, ps_value_arith(ctx, PS_MUL, x, a, &out));
      break;
    case E_XX:
      ok = ok && CHECK_OK(ctx, ps_value_column(ctx, t->cx, &a)) &&
           CHECK_OK(ctx, ps_value_arith(ctx, PS_SUB, x, a, &out));
      break;
    case E_XY:
      ok = ok && CHECK_OK(ctx, ps_value_column(ctx, t->cy, &a)) &&
           CHECK_OK(ctx, ps_value_arith(ctx, PS_ADD, x, a, &out));
      break;
    case E_XY3:
      ok = ok && CHECK_OK(ctx, ps_value_column(ctx, t->cy, &a)) &&
           CHECK_OK(ctx, ps_value_literal(ctx, ps_lit_int(3), &b)) &&
           CHECK_OK(ctx, ps_value_arith(ctx, PS_MUL, a, b, &c)) &&
           (a = b = NULL, CHECK_OK(ctx, ps_value_arith(ctx, PS_SUB, x, c, &out)));
      break;
    case E_XQ:
      ok = ok && CHECK_OK(ctx, ps_value_column(ctx, t->cq, &a)) &&
           CHECK_OK(ctx, ps_value_arith(ctx, PS_MUL, x, a, &out));
      break;
    case E_XP:
      ok = ok && CHECK_OK(ctx, ps_value_decimal(ctx, 1, 0, 1, &a)) &&
           CHECK_OK(ctx, ps_value_arith(ctx, PS_ADD, x, a, &c)) &&
           (x = a = NULL, CHECK_OK(ctx, ps_value_column(ctx, t->cp, &b))) &&
           CHECK_OK(ctx, ps_value_arith(ctx, PS_MUL, c, b, &out));
      break;
    default:
      ok = ok && CHECK_OK(ctx, ps_expr_compare(ctx, t->cq, PS_GT, ps_lit_int(0), &w)) &&
           CHECK_OK(ctx, ps_value_column(ctx, t->cy, &a)) && CHECK_OK(ctx, ps_value_column(ctx, t->cq, &b)) &&
           CHECK_OK(ctx, ps_value_arith(ctx, PS_MUL, a, b, &c)) &&
           (a = b = NULL, CHECK_OK(ctx, ps_value_case(ctx, w, x, c, &out)));
      break;
  }
  if (ok) return out;
  ps_value_destroy(x), ps_value_destroy(a), ps_value_destroy(b), ps_value_destroy(c), ps_expr_destroy(w);
  return NULL;
}

/* ---- queries ------------------------------------------------------------------------ */

#define N_AGGS 6 /* SUM, AVG, MIN, MAX, COUNT of the value, COUNT(*) */

/* The aggregates of expression e WHERE x > lit (NaN: no WHERE) GROUP BY the
 * key (with_key); partial: ps_query_run_partial. */
static ps_status run(ps_context *ctx, const table *t, int e, double lit, bool with_key, bool partial,
                     ps_query_result **out) {
  *out = NULL;
  ps_value *v = build(ctx, t, e);
  if (!v) return PS_ERR_INVALID_ARGUMENT;
  ps_expr *where = NULL;
  ps_query *q = NULL;
  ps_status st = isnan(lit) ? PS_OK : ps_expr_compare(ctx, t->cx, PS_GT, ps_lit_float(lit), &where);
  if (st == PS_OK) {
    const ps_agg aggs[N_AGGS] = {{PS_AGG_SUM, v}, {PS_AGG_AVG, v},   {PS_AGG_MIN, v},
                                 {PS_AGG_MAX, v}, {PS_AGG_COUNT, v}, {PS_AGG_COUNT_STAR, NULL}};
    ps_query_desc d;
    ps_query_desc_init(&d);
    d.rows = t->n, d.where = where, d.aggs = aggs, d.n_aggs = N_AGGS;
    if (with_key) d.n_keys = 1, d.keys[0] = t->ck;
    st = ps_query_create(ctx, &d, &q);
  }
  if (st == PS_OK) st = partial ? ps_query_run_partial(ctx, q, out) : ps_query_run(ctx, q, out);
  ps_query_destroy(q);
  ps_expr_destroy(where);
  ps_value_destroy(v);
  return st;
}

typedef struct expect {
  fx_exact sum;
  uint64_t rows, values;
  double min, max;
} expect;

static void expected(const table *t, int e, double lit, bool with_key, expect g[4]) {
  memset(g, 0, 4 * sizeof *g);
  for (uint64_t i = 0; i < t->n; i++) {
    if (!isnan(lit) && !(bit(t->vx, i) && t->x[i] > lit)) continue;
    expect *x = &g[with_key ? t->key[i] : 0];
    x->rows++;
    double v;
    if (!row_value(t, e, i, &v)) continue;
    if (x->values == 0 || ord(v) < ord(x->min)) x->min = v;
    if (x->values == 0 || ord(v) > ord(x->max)) x->max = v;
    x->values++;
    fx_add(&x->sum, v);
  }
}

static void check_double(const ps_datum *d, double want, const char *what, const char *agg) {
  CHECKF(!d->is_null && fx_bits(d->as_double) == fx_bits(want),
         "%s %s: %.17g (0x%016" PRIx64 "), expected %.17g (0x%016" PRIx64 ")", what, agg, d->as_double,
         fx_bits(d->as_double), want, fx_bits(want));
}

static void check_result(const ps_query_result *res, const table *t, int e, double lit, bool with_key,
                         const char *what) {
  expect g[4];
  expected(t, e, lit, with_key, g);
  uint64_t out = 0;
  for (uint32_t k = 0; k < (with_key ? 4u : 1u); k++) {
    if (with_key && g[k].rows == 0) continue;
    const uint64_t at = out++;
    if (!CHECKF(at < ps_query_result_groups(res), "%s: group of key %u missing", what, k)) return;
    ps_datum d[N_AGGS], kd;
    for (uint32_t a = 0; a < N_AGGS; a++) CHECK_OK(NULL, ps_query_result_value(res, at, a, &d[a]));
    if (with_key && CHECK_OK(NULL, ps_query_result_key(res, at, 0, &kd)))
      CHECKF(kd.lo == k, "%s: group %" PRIu64 " has key %" PRIu64 ", expected %u", what, at, kd.lo, k);
    CHECKF(d[5].lo == g[k].rows && d[4].lo == g[k].values,
           "%s key %u: COUNT(*) %" PRIu64 ", COUNT %" PRIu64 "; expected %" PRIu64 ", %" PRIu64, what, k, d[5].lo,
           d[4].lo, g[k].rows, g[k].values);
    if (g[k].values == 0) {
      CHECKF(d[0].is_null && d[1].is_null && d[2].is_null && d[3].is_null, "%s key %u: aggregates of no values", what,
             k);
      continue;
    }
    check_double(&d[0], fx_value(&g[k].sum, false), what, "SUM");
    check_double(&d[1], fx_value(&g[k].sum, true), what, "AVG");
    check_double(&d[2], g[k].min, what, "MIN");
    check_double(&d[3], g[k].max, what, "MAX");
  }
  CHECKF(out == ps_query_result_groups(res), "%s: %" PRIu64 " groups, expected %" PRIu64, what,
         ps_query_result_groups(res), out);
}

static void check_query(ps_context *ctx, const table *t, int e, double lit, bool with_key, const char *what) {
  ps_query_result *res = NULL;
  char w[300];
  snprintf(w, sizeof w, "%s: %s%s%s", what, expr_name[e], isnan(lit) ? "" : " WHERE x > lit",
           with_key ? " GROUP BY key" : "");
  if (CHECKF(run(ctx, t, e, lit, with_key, false, &res) == PS_OK, "%s: %s", w, ps_context_last_error(ctx)))
    check_result(res, t, e, lit, with_key, w);
  ps_query_result_destroy(res);
}

/* A query whose run fails with `want`, its message holding `text`. */
static void check_fails(ps_context *ctx, const table *t, int e, double lit, ps_status want, const char *text) {
  ps_query_result *res = NULL;
  const ps_status st = run(ctx, t, e, lit, false, false, &res);
  CHECKF(st == want && !res, "%s: expected %s, got %s: %s", expr_name[e], ps_status_name(want), ps_status_name(st),
         ps_context_last_error(ctx));
  if (text)
    CHECKF(th_contains_ci(ps_context_last_error(ctx), text), "%s: message '%s' lacks '%s'", expr_name[e],
           ps_context_last_error(ctx), text);
  ps_query_result_destroy(res);
}

/* The query of one aggregate `kind` of expression e over the table: its
 * double (true), or its status where `want` is not PS_OK (false). */
static bool one_value(ps_context *ctx, const table *t, int e, ps_agg_kind kind, ps_status want, double *out) {
  ps_value *v = build(ctx, t, e);
  ps_query *q = NULL;
  ps_query_result *res = NULL;
  ps_datum d;
  ps_status st = v ? PS_OK : PS_ERR_INVALID_ARGUMENT;
  if (st == PS_OK) {
    const ps_agg agg = {kind, v};
    ps_query_desc desc;
    ps_query_desc_init(&desc);
    desc.rows = t->n, desc.aggs = &agg, desc.n_aggs = 1;
    st = ps_query_create(ctx, &desc, &q);
  }
  if (st == PS_OK) st = ps_query_run(ctx, q, &res);
  bool ok = CHECKF(st == want, "%s: %s", expr_name[e], st ? ps_context_last_error(ctx) : "PS_OK");
  ok = ok && want == PS_OK && CHECK_OK(NULL, ps_query_result_value(res, 0, 0, &d)) && CHECK(!d.is_null);
  if (ok) *out = kind == PS_AGG_COUNT ? (double)d.lo : d.as_double;
  ps_query_result_destroy(res);
  ps_query_destroy(q);
  ps_value_destroy(v);
  return ok;
}

/* ---- partial results ------------------------------------------------------------------- */

/* The partial results of a table's two halves merged: the one run's answer
 * (x's magnitudes differ between the halves, so do their windows). */
static void check_partials(ps_context *ctx, th_rng *r, int fam, bool f32) {
  const uint64_t n = 640, half = 320;
  table whole, part[2];
  memset(part, 0, sizeof part);
  double *xs = th_malloc(n * 8);
  for (uint64_t i = 0; i < n; i++) xs[i] = draw(r, fam) * (i < half ? 1 : 4096);
  th_case("partials: %s %s", family_name[fam], f32 ? "float32" : "float64");
  ps_query_merge *m = NULL;
  bool ok = table_make(ctx, r, &whole, n, fam, f32, true, xs) && CHECK_OK(ctx, ps_query_merge_create(ctx, &m));
  for (int h = 0; h < 2 && ok; h++) {
    ps_query_result *res = NULL;
    struct ArrowSchema schema;
    struct ArrowArray array;
    ok = table_slice(ctx, &whole, h ? half : 0, half, &part[h]) &&
         CHECKF(run(ctx, &part[h], E_XQ, NAN, true, true, &res) == PS_OK, "partial %d: %s", h,
                ps_context_last_error(ctx)) &&
         CHECK_OK(ctx, ps_query_result_export_partial(ctx, res, &schema, &array));
    if (ok) {
      ok = CHECK_OK(ctx, ps_query_merge_add(m, &schema, &array));
      schema.release(&schema);
      array.release(&array);
    }
    ps_query_result_destroy(res);
  }
  ps_query_result *merged = NULL;
  if (ok && CHECK_OK(ctx, ps_query_merge_finish(m, &merged)))
    check_result(merged, &whole, E_XQ, NAN, true, "partials merged");
  ps_query_result_destroy(merged);
  ps_query_merge_destroy(m);
  for (int h = 0; h < 2; h++) table_free(&part[h]);
  table_free(&whole);
  free(xs);
}

/* A context over two devices (two contexts of device 0) splits a table of
 * more than two of its row runs (PS_GROUP_ROWS, 2^16) and merges the
 * devices' partials: the oracle's answer (x's magnitudes differ between
 * the devices' rows, so do their windows). */
static void check_devices(th_rng *r) {
  static const int32_t devs[2] = {0, 0};
  ps_context_options o;
  th_options(&o, th.backend, 0);
  o.device_count = 2;
  o.devices = devs;
  ps_context *ctx = NULL;
  char err[512];
  th_case("two devices");
  if (!CHECKF(ps_context_create(&o, err, sizeof err, &ctx) == PS_OK, "a context over two devices: %s", err)) return;
  th_apply_options(ctx);
  const uint64_t n = 2 * 65536 + 1000;
  double *xs = th_malloc(n * 8);
  for (uint64_t i = 0; i < n; i++) xs[i] = draw(r, F_MPH) * (i < 2 * 65536 ? 1 : 4096);
  table t;
  if (table_make(ctx, r, &t, n, F_MPH, false, true, xs)) {
    check_query(ctx, &t, E_XQ, NAN, true, "two devices");
    check_query(ctx, &t, E_XY3, t.x[5], false, "two devices");
  }
  table_free(&t);
  free(xs);
  ps_context_destroy(ctx);
}

/* ---- the sweep and the edge cases ------------------------------------------------------- */

static void random_sweep(ps_context *ctx, th_rng *r) {
  static const uint64_t sizes[] = {1, 33, 1000};
  for (int fam = 0; fam < F_COUNT; fam++)
    for (int f32 = 0; f32 < 2; f32++)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++)
        for (int nulls = 0; nulls < 2; nulls++) {
          const uint64_t n = sizes[s];
          th_case("%s %s n=%" PRIu64 " nulls=%d", family_name[fam], f32 ? "float32" : "float64", n, nulls);
          table t;
          if (table_make(ctx, r, &t, n, fam, f32, nulls != 0, NULL)) {
            const double lit = t.x[th_below(r, n)];
            for (int e = 0; e < E_X3; e++) {
              check_query(ctx, &t, e, NAN, false, "no WHERE");
              check_query(ctx, &t, e, lit, false, "WHERE");
              check_query(ctx, &t, e, lit, true, "WHERE, GROUP BY");
            }
          }
          table_free(&t);
        }
}

static void edge_cases(ps_context *ctx, th_rng *r) {
  table t;
  double v[64], got;

  th_case("an infinity");
  for (int i = 0; i < 64; i++) v[i] = (double)(i % 7) * 0.1 + 1.15078 * (i % 3);
  v[40] = INFINITY;
  for (int f32 = 0; f32 < 2; f32++) {
    if (table_make(ctx, r, &t, 64, F_MPH, f32 != 0, false, v)) {
      check_fails(ctx, &t, E_X2, NAN, PS_ERR_NOT_REPRESENTABLE,
                  "aggregate 0 (SUM of arithmetic on float column 'x'): row 40");
      check_fails(ctx, &t, E_XX, NAN, PS_ERR_NOT_REPRESENTABLE, "row 40's value is infinite, NaN"); /* inf - inf */
      /* MIN and MAX read the doubles: a NaN has no place among them, an infinity a value no decimal holds */
      if (!one_value(ctx, &t, E_XX, PS_AGG_MIN, PS_ERR_NOT_REPRESENTABLE, &got))
        CHECKF(th_contains_ci(ps_context_last_error(ctx),
                              "(MIN of arithmetic on float column 'x'): row 40's value is NaN"),
               "MIN(x - x): %s", ps_context_last_error(ctx));
      if (one_value(ctx, &t, E_XX, PS_AGG_COUNT, PS_OK, &got))
        CHECKF(got == 64, "COUNT(x - x) is %g", got); /* NaN too */
      if (one_value(ctx, &t, E_X2, PS_AGG_MIN, PS_OK, &got)) CHECKF(got == 0, "MIN(x * 2) is %g", got);
      one_value(ctx, &t, E_X2, PS_AGG_MAX, PS_ERR_NOT_REPRESENTABLE, &got);
    }
    table_free(&t);
  }
  v[40] = -INFINITY;
  for (int f32 = 0; f32 < 2; f32++) {
    if (table_make(ctx, r, &t, 64, F_MPH, f32 != 0, false, v)) {
      check_fails(ctx, &t, E_XQ, NAN, PS_ERR_NOT_REPRESENTABLE, "row 40");
      if (t.ex.desc.float_map == PS_FLOAT_MAP_ALP) /* the window of the finite values: the WHERE leaves -inf out */
        check_query(ctx, &t, E_XY, 0.5, true, "-inf left out");
    }
    table_free(&t);
  }

  th_case("-0.0");
  for (int i = 0; i < 64; i++) v[i] = -0.0;
  if (table_make(ctx, r, &t, 64, F_MPH, false, false, v)) {
    if (one_value(ctx, &t, E_X2, PS_AGG_SUM, PS_OK, &got))
      CHECKF(fx_bits(got) == 0, "SUM(-0.0 * 2) is %g, not +0.0", got);
    if (one_value(ctx, &t, E_X2, PS_AGG_MIN, PS_OK, &got))
      CHECKF(fx_bits(got) == fx_bits(-0.0), "MIN(-0.0 * 2) is %g", got);
    check_query(ctx, &t, E_XQ, NAN, true, "-0.0 * q");
  }
  table_free(&t);

  th_case("a sum that cancels");
  for (int i = 0; i < 64; i++) v[i] = i == 63 ? 0.0 : i % 3 == 0 ? 1e20 : i % 3 == 1 ? 3.5 : -1e20;
  if (table_make(ctx, r, &t, 64, F_MPH, false, false, v)) {
    double naive = 0;
    for (int i = 0; i < 64; i++) naive = dadd(naive, dmul(v[i], 3.0));
    if (one_value(ctx, &t, E_X3, PS_AGG_SUM, PS_OK, &got))
      CHECKF(got == 21 * 10.5 && got != naive, "SUM(x * 3) is %.17g, expected 220.5 (adding in order: %.17g)", got,
             naive);
    check_query(ctx, &t, E_X3, NAN, false, "cancels");
  }
  table_free(&t);

  th_case("a product below the window");
  for (int i = 0; i < 64; i++) v[i] = i == 9 ? 1e-30 : 1e30;
  if (table_make(ctx, r, &t, 64, F_MPH, false, false, v)) {
    check_fails(ctx, &t, E_X3, NAN, PS_ERR_NOT_REPRESENTABLE, "row 9's value is infinite, NaN or has a bit below");
    if (one_value(ctx, &t, E_X3, PS_AGG_MAX, PS_OK, &got)) CHECKF(got == dmul(1e30, 3.0), "MAX(x * 3) is %.17g", got);
  }
  table_free(&t);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "float_arith");
  th_rng *r = &th.rng;
  for (int spec = 0; spec < (th_is_reference() ? 1 : 2); spec++) {
    th_options_reset();
    if (spec) th_test_options("query_specialize=1");
    ps_context *ctx = th_context(0);
    if (spec) { /* every shape a compile: one table */
      table t;
      th_case("specialized");
      if (table_make(ctx, r, &t, 1000, F_DECIMAL_ODD, false, true, NULL))
        for (int e = 0; e < E_X3; e++) check_query(ctx, &t, e, t.x[7], true, "specialized");
      table_free(&t);
    } else {
      edge_cases(ctx, r);
      random_sweep(ctx, r);
      for (int fam = 0; fam < F_COUNT; fam++) check_partials(ctx, r, fam, fam == F_BITS);
      check_devices(r);
    }
    ps_context_destroy(ctx);
  }
  return th_finish();
}
