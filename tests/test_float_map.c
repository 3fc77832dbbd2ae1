/*
 * float_map: lossless float columns (docs/float-encoding.md). Seeded random
 * float64 and float32 data of several families (random bit patterns without
 * NaN, decimals, decimals with a few odd values, unit conversions k * 1.15078,
 * specials: -0.0, +-inf, denormals, huge) encoded by ps_encode_for with a
 * chosen scale: every value decodes bit for bit; every comparison, BETWEEN
 * and IN against literals (the column's values, their neighbours, specials,
 * NaN) selects exactly the rows a plain-double loop selects, with zone
 * pruning on and off; gathered values, ps_aggregate's MIN/MAX (and its sum:
 * the query's SUM, NaN where that is not representable), and a query's
 * COUNT/MIN/MAX GROUP BY a float key against the plain values; arithmetic on
 * them prepared (their SUM and AVG: test_float_sum.c; arithmetic:
 * test_float_arith.c).
 * PS_FLOAT_SCALE_LOSSLESS maps decimal, empty and all-null columns too.
 * Prints the compression of a unit-conversion column next to plain doubles.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fexact.h"
#include "harness.h"

enum { F_BITS, F_DECIMAL, F_ODD, F_MPH, F_SPECIAL, F_GROUPS, F_COUNT };
static const char *family_name[F_COUNT] = {"random bits", "decimal", "decimal+odd", "mph", "specials", "groups"};

static double special(th_rng *r) {
  static const double s[] = {
      -0.0,     0.0,   INFINITY, -INFINITY,          DBL_MIN, -DBL_MIN, 4.9e-324,          -4.9e-324, DBL_MAX,
      -DBL_MAX, 1e300, 2.5e-310, 9007199254740993.0, 1e22,    0.1,      10.357019999999999};
  return s[th_below(r, sizeof s / sizeof s[0])];
}

static double draw(th_rng *r, int fam, bool f32) {
  double x;
  switch (fam) {
    case F_BITS:
      do {
        const uint64_t b = th_u64(r);
        float f;
        const uint32_t b32 = (uint32_t)b;
        memcpy(&f, &b32, 4);
        x = f32 ? (double)f : fx_double(b);
      } while (isnan(x));
      return x;
    case F_DECIMAL:
      x = (double)((int64_t)th_below(r, 200000) - 100000) / 100.0;
      break;
    case F_ODD:
      x = th_chance(r, 3) ? fx_double(th_u64(r) & ~((uint64_t)0x7ff << 52 >> 1)) /* finite, odd */
                          : (double)((int64_t)th_below(r, 4000) - 2000) / 1000.0;
      break;
    case F_MPH:
      x = (double)th_below(r, 60) * 1.15078;
      break;
    case F_SPECIAL:
      x = th_chance(r, 20) ? special(r) : (double)((int64_t)th_below(r, 1000) - 500) / 10.0;
      break;
    default: { /* few distinct values, -0.0 among them (so not FOR-decimal), and off-grid ones */
      static const double odd[] = {-0.0, 0.1 + 0.2, 1e-20, -2.5e30, 1.15078 * 3, 0.7 * 3};
      x = th_chance(r, 15) ? odd[th_below(r, 6)] : (double)((int64_t)th_below(r, 41) - 20) / 10.0;
      break;
    }
  }
  return f32 ? (double)(float)x : x;
}

static bool cmp_holds(double v, ps_cmp op, double l) {
  switch (op) {
    case PS_EQ:
      return v == l;
    case PS_NE:
      return v != l;
    case PS_LT:
      return v < l;
    case PS_LE:
      return v <= l;
    case PS_GT:
      return v > l;
    default:
      return v >= l;
  }
}

typedef struct fcase {
  uint64_t n;
  bool f32;
  double *v;      /* plain values, as doubles (float32: the float's exact double) */
  uint8_t *valid; /* NULL: no nulls */
  ps_encoded enc;
} fcase;

static bool valid_row(const fcase *c, uint64_t i) { return !c->valid || ((c->valid[i / 8] >> (i % 8)) & 1); }

/* Encodes and checks the bit-exact decode; returns false on failure. */
static bool encode_case_at(fcase *c, int scale) {
  ps_plain in;
  memset(&in, 0, sizeof in);
  float *f = NULL;
  in.n = c->n;
  in.validity = c->valid;
  if (c->f32) {
    f = th_malloc(c->n * 4 + 4);
    for (uint64_t i = 0; i < c->n; i++) f[i] = (float)c->v[i];
    in.type = PS_TYPE_FLOAT32, in.values = f;
  } else {
    in.type = PS_TYPE_FLOAT64, in.values = c->v;
  }
  char err[512];
  bool ok = CHECKF(ps_encode_for(&in, 0, scale, 0, NULL, err, sizeof err, &c->enc) == PS_OK, "encode: %s", err);
  if (ok) {
    void *out = th_malloc(c->n * 8 + 8);
    ok = CHECKF(ps_decode_for(&c->enc.desc, out, err, sizeof err) == PS_OK, "decode: %s", err);
    for (uint64_t i = 0; ok && i < c->n; i++) {
      if (!valid_row(c, i)) continue;
      const uint64_t got = c->f32 ? fx_bits((double)((float *)out)[i]) : fx_bits(((double *)out)[i]);
      ok = CHECKF(got == fx_bits(c->v[i]), "row %" PRIu64 ": %.17g decodes to %.17g (map %u)", i, c->v[i],
                  fx_double(got), c->enc.desc.float_map);
    }
    free(out);
  }
  free(f);
  return ok;
}

/* ps_encode_for's scale -1: the smallest exact decimal scale, else a lossless mapping. */
static bool encode_case(fcase *c) { return encode_case_at(c, -1); }

static void check_bitmap(ps_context *ctx, ps_expr *e, const fcase *c, bool (*want)(double, void *), void *arg,
                         const char *what) {
  const uint64_t bytes = (c->n + 7) / 8 + 1;
  uint8_t *bm = th_calloc(bytes, 1);
  uint64_t count = 0;
  for (int prune = 1; prune >= 0; prune--) {
    ps_context_set_zone_pruning(ctx, prune);
    memset(bm, 0, bytes);
    if (!CHECK_OK(ctx, ps_filter(ctx, e, bm, bytes, &count))) break;
    uint64_t expect = 0, bad = 0, first = 0;
    for (uint64_t i = 0; i < c->n; i++) {
      const bool w = valid_row(c, i) && want(c->v[i], arg);
      expect += w;
      if (w != (bool)((bm[i / 8] >> (i % 8)) & 1) && !bad++) first = i;
    }
    CHECKF(!bad && count == expect, "%s (pruning %d): %" PRIu64 " rows differ, first row %" PRIu64 " value %.17g", what,
           prune, bad, first, bad ? c->v[first] : 0.0);
  }
  ps_context_set_zone_pruning(ctx, 1);
  free(bm);
}

typedef struct cmp_arg {
  ps_cmp op;
  double lit, hi;
  const double *list;
  size_t count;
} cmp_arg;

static bool want_cmp(double v, void *a) {
  const cmp_arg *x = a;
  return cmp_holds(v, x->op, x->lit);
}
static bool want_between(double v, void *a) {
  const cmp_arg *x = a;
  return v >= x->lit && v <= x->hi;
}
static bool want_in(double v, void *a) {
  const cmp_arg *x = a;
  for (size_t i = 0; i < x->count; i++)
    if (v == x->list[i]) return true;
  return false;
}

static double literal_for(th_rng *r, const fcase *c) {
  const double v = c->n ? c->v[th_below(r, c->n)] : 0.0;
  switch (th_below(r, 6)) {
    case 0:
      return v;
    case 1:
      return nextafter(v, INFINITY);
    case 2:
      return nextafter(v, -INFINITY);
    case 3:
      return special(r);
    case 4:
      return th_chance(r, 50) ? NAN : trunc(v); /* an integer literal near v (no int64 cast: v may be huge) */
    default:
      return v;
  }
}

static void check_filters(ps_context *ctx, ps_column *col, const fcase *c, th_rng *r) {
  static const ps_cmp ops[] = {PS_EQ, PS_NE, PS_LT, PS_LE, PS_GT, PS_GE};
  for (int t = 0; t < 24; t++) {
    cmp_arg a = {TH_PICK(r, ops), literal_for(r, c), 0, NULL, 0};
    ps_expr *e = NULL;
    char what[160];
    snprintf(what, sizeof what, "x op%d %.17g", (int)a.op, a.lit);
    if (CHECK_OK(ctx, ps_expr_compare(ctx, col, a.op, ps_lit_float(a.lit), &e)))
      check_bitmap(ctx, e, c, want_cmp, &a, what);
    ps_expr_destroy(e);
  }
  for (int t = 0; t < 8; t++) {
    cmp_arg a = {PS_EQ, literal_for(r, c), literal_for(r, c), NULL, 0};
    if (a.lit > a.hi) {
      double s = a.lit;
      a.lit = a.hi, a.hi = s;
    }
    ps_expr *e = NULL;
    char what[160];
    snprintf(what, sizeof what, "x BETWEEN %.17g AND %.17g", a.lit, a.hi);
    if (CHECK_OK(ctx, ps_expr_between(ctx, col, ps_lit_float(a.lit), ps_lit_float(a.hi), &e)))
      check_bitmap(ctx, e, c, want_between, &a, what);
    ps_expr_destroy(e);
  }
  for (int t = 0; t < 4; t++) {
    double list[7];
    ps_literal lits[7];
    const size_t k = 1 + th_below(r, 7);
    for (size_t i = 0; i < k; i++) list[i] = literal_for(r, c), lits[i] = ps_lit_float(list[i]);
    cmp_arg a = {PS_EQ, 0, 0, list, k};
    ps_expr *e = NULL;
    if (CHECK_OK(ctx, ps_expr_in(ctx, col, lits, k, &e))) check_bitmap(ctx, e, c, want_in, &a, "x IN (...)");
    ps_expr_destroy(e);
  }
}

/* Values in IEEE order with -0.0 below +0.0 (the order MIN/MAX and keys follow). */
static uint64_t ord(double x) {
  const uint64_t b = fx_bits(x);
  return b >> 63 ? ~b : b | ((uint64_t)1 << 63);
}

/* ps_aggregate's sum of a lossless float column is a query's SUM(x)
 * (test_float_sum.c checks that against exact sums): its double, NaN where
 * the values cannot be summed exactly (an infinity, values too far apart). A
 * SUM past 38 digits has a double but no datum: not compared. */
static void check_sum_double(ps_context *ctx, ps_column *col, double sum) {
  ps_value *v = NULL;
  ps_query *q = NULL;
  ps_query_result *res = NULL;
  ps_datum d;
  if (!CHECK_OK(ctx, ps_value_column(ctx, col, &v))) return;
  const ps_agg agg = {PS_AGG_SUM, v};
  ps_query_desc qd;
  ps_query_desc_init(&qd);
  qd.rows = ps_column_rows(col), qd.aggs = &agg, qd.n_aggs = 1;
  if (CHECK_OK(ctx, ps_query_create(ctx, &qd, &q))) {
    const ps_status st = ps_query_run(ctx, q, &res);
    if (st == PS_OK && CHECK_OK(NULL, ps_query_result_value(res, 0, 0, &d)))
      CHECKF(fx_bits(sum) == fx_bits(d.as_double), "ps_aggregate's sum %.17g, the query's SUM %.17g", sum, d.as_double);
    else if (st == PS_ERR_NOT_REPRESENTABLE && !th_contains_ci(ps_context_last_error(ctx), "no decimal of"))
      CHECKF(isnan(sum), "ps_aggregate's sum %.17g where SUM is not representable: %s", sum,
             ps_context_last_error(ctx));
    else
      CHECKF(st == PS_ERR_NOT_REPRESENTABLE, "SUM(x): %s", ps_context_last_error(ctx));
  }
  ps_query_result_destroy(res);
  ps_query_destroy(q);
  ps_value_destroy(v);
}

static void check_gather_and_aggregate(ps_context *ctx, ps_column *col, const fcase *c) {
  if (!c->n) return;
  uint64_t *ids = th_malloc(c->n * 8);
  for (uint64_t i = 0; i < c->n; i++) ids[i] = c->n - 1 - i;
  double *got = th_calloc(c->n, 8);
  uint8_t *gv = th_calloc(c->n / 8 + 1, 1);
  if (CHECK_OK(ctx, ps_gather_values(ctx, col, ids, PS_INDEX_UINT64, c->n, got, gv))) {
    uint64_t bad = 0;
    for (uint64_t i = 0; i < c->n; i++) {
      const uint64_t row = ids[i];
      if (!valid_row(c, row)) continue;
      const uint64_t g = c->f32 ? fx_bits((double)((float *)got)[i]) : fx_bits(got[i]);
      bad += g != fx_bits(c->v[row]);
    }
    CHECKF(bad == 0, "gather: %" PRIu64 " values differ", bad);
  }
  ps_aggregates ag;
  if (CHECK_OK(ctx, ps_aggregate(ctx, col, NULL, 0, &ag))) {
    uint64_t mn = UINT64_MAX, mx = 0, cnt = 0;
    for (uint64_t i = 0; i < c->n; i++)
      if (valid_row(c, i)) {
        const uint64_t o = ord(c->v[i]);
        mn = o < mn ? o : mn, mx = o > mx ? o : mx, cnt++;
      }
    CHECK(ag.count == cnt);
    if (cnt) CHECKF(ord(ag.min.f) == mn && ord(ag.max.f) == mx, "aggregate min %.17g max %.17g", ag.min.f, ag.max.f);
    if (cnt && c->enc.desc.float_map != PS_FLOAT_MAP_DECIMAL) check_sum_double(ctx, col, ag.sum_double);
  }
  free(ids);
  free(got);
  free(gv);
}

/* COUNT(*), MIN(x), MAX(x) GROUP BY k (both lossless float columns) against
 * sorted plain values; SUM(x + x) prepared, its run a value or, where the
 * specials reach it (infinities, denormals beside huge values),
 * NOT_REPRESENTABLE (its values: test_float_arith.c). */
static void check_query(ps_context *ctx, ps_column *kcol, const fcase *kc, ps_column *xcol, const fcase *xc) {
  ps_value *vx = NULL, *vs = NULL, *va = NULL, *vb = NULL;
  ps_query *q = NULL;
  ps_query_result *res = NULL;
  if (!CHECK_OK(ctx, ps_value_column(ctx, xcol, &vx)) || !CHECK_OK(ctx, ps_value_column(ctx, xcol, &va)) ||
      !CHECK_OK(ctx, ps_value_column(ctx, xcol, &vb)))
    goto out;
  if (!CHECK_OK(ctx, ps_value_arith(ctx, PS_ADD, va, vb, &vs))) goto out;
  va = vb = NULL; /* vs owns them */
  {
    ps_agg sum = {PS_AGG_SUM, vs};
    ps_query_desc d;
    ps_query_desc_init(&d);
    d.rows = kc->n;
    d.n_aggs = 1;
    d.aggs = &sum;
    if (CHECK_OK(ctx, ps_query_create(ctx, &d, &q))) {
      const ps_status st = ps_query_run(ctx, q, &res);
      CHECKF(st == PS_OK || st == PS_ERR_NOT_REPRESENTABLE, "SUM(x + x): %s", ps_context_last_error(ctx));
      ps_query_result_destroy(res);
      res = NULL;
    }
    ps_query_destroy(q);
    q = NULL;
  }
  {
    const ps_agg aggs[3] = {{PS_AGG_COUNT_STAR, NULL}, {PS_AGG_MIN, vx}, {PS_AGG_MAX, vx}};
    ps_query_desc d;
    ps_query_desc_init(&d);
    d.rows = kc->n;
    d.n_keys = 1;
    d.keys[0] = kcol;
    d.n_aggs = 3;
    d.aggs = aggs;
    if (!CHECK_OK(ctx, ps_query_create(ctx, &d, &q)) || !CHECK_OK(ctx, ps_query_run(ctx, q, &res))) goto out;
    /* oracle: distinct keys ascending (NULL last), count and min/max of x */
    uint64_t groups = ps_query_result_groups(res), seen = 0;
    double prev_key = -INFINITY;
    bool prev_set = false;
    for (uint64_t g = 0; g < groups; g++) {
      ps_datum key, cnt, mn, mx;
      CHECK_OK(NULL, ps_query_result_key(res, g, 0, &key));
      CHECK_OK(NULL, ps_query_result_value(res, g, 0, &cnt));
      CHECK_OK(NULL, ps_query_result_value(res, g, 1, &mn));
      CHECK_OK(NULL, ps_query_result_value(res, g, 2, &mx));
      uint64_t n = 0, omin = UINT64_MAX, omax = 0;
      for (uint64_t i = 0; i < kc->n; i++) {
        const bool kn = !valid_row(kc, i);
        if (key.is_null ? !kn : (kn || kc->v[i] != key.as_double)) continue; /* -0.0 and 0.0: one group */
        n++;
        if (valid_row(xc, i)) {
          const uint64_t o = ord(xc->v[i]);
          omin = o < omin ? o : omin, omax = o > omax ? o : omax;
        }
      }
      seen += n;
      CHECKF(n > 0 && cnt.lo == n, "group %" PRIu64 " key %.17g: count %" PRIu64 ", expected %" PRIu64, g,
             key.as_double, cnt.lo, n);
      if (!key.is_null) {
        CHECKF(!prev_set || prev_key < key.as_double, "keys out of order or repeated at group %" PRIu64, g);
        prev_key = key.as_double, prev_set = true;
        char text[64];
        CHECK(ps_datum_format(&key, text, sizeof text) == PS_OK && strtod(text, NULL) == key.as_double);
      }
      if (omin == UINT64_MAX)
        CHECK(mn.is_null && mx.is_null);
      else
        CHECKF(!mn.is_null && ord(mn.as_double) == omin && ord(mx.as_double) == omax,
               "group %" PRIu64 ": min %.17g max %.17g", g, mn.as_double, mx.as_double);
    }
    CHECKF(seen == kc->n, "groups hold %" PRIu64 " of %" PRIu64 " rows", seen, kc->n);
  }
out:
  ps_query_result_destroy(res);
  ps_query_destroy(q);
  ps_value_destroy(vx);
  ps_value_destroy(vs);
  ps_value_destroy(va);
  ps_value_destroy(vb);
}

static void make_case(fcase *c, th_rng *r, uint64_t n, int fam, bool f32, bool nulls) {
  memset(c, 0, sizeof *c);
  c->n = n, c->f32 = f32;
  c->v = th_malloc(n * 8 + 8);
  for (uint64_t i = 0; i < n; i++) c->v[i] = draw(r, fam, f32);
  if (nulls) {
    c->valid = th_malloc(n / 8 + 1);
    for (uint64_t i = 0; i < n / 8 + 1; i++) c->valid[i] = (uint8_t)th_u64(r);
  }
}

static void free_case(fcase *c) {
  ps_encoded_destroy(&c->enc);
  free(c->v);
  free(c->valid);
}

/* Compression of a unit-conversion column (knots to mph), printed. */
static void report_compression(th_rng *r) {
  const uint64_t n = 100000;
  fcase c;
  make_case(&c, r, n, F_MPH, false, false);
  for (uint64_t i = 0; i < n; i++) c.v[i] = (double)th_below(r, 45) * 1.15078;
  if (encode_case(&c)) {
    const ps_for_desc *d = &c.enc.desc;
    const uint64_t bytes = d->data_size + d->exceptions_count * sizeof(ps_float_exception);
    printf("compression: %" PRIu64 " mph values (knots * 1.15078): plain doubles %" PRIu64
           " bytes, "
           "float map %u (e=%u f=%u, %u-bit codes, %" PRIu64 " exceptions) %" PRIu64 " bytes (%.1fx)\n",
           n, n * 8, d->float_map, d->float_e, d->float_f, d->width, d->exceptions_count, bytes,
           (double)(n * 8) / (double)bytes);
    CHECKF(d->float_map == PS_FLOAT_MAP_ALP && bytes * 2 < n * 8, "mph: map %u, %" PRIu64 " bytes", d->float_map,
           bytes);
  }
  free_case(&c);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "float_map");
  ps_context *ctx = th_context(0);
  th_rng *r = &th.rng;

  /* decimal data keeps FOR-decimal; -0.0 or an odd value moves it to a mapping */
  {
    fcase c;
    make_case(&c, r, 1000, F_DECIMAL, false, false);
    if (encode_case(&c)) CHECK(c.enc.desc.float_map == PS_FLOAT_MAP_DECIMAL && c.enc.desc.scale == 2);
    free_case(&c);
    make_case(&c, r, 1000, F_DECIMAL, false, false);
    c.v[500] = -0.0;
    if (encode_case(&c)) CHECK(c.enc.desc.float_map != PS_FLOAT_MAP_DECIMAL);
    free_case(&c);
    /* PS_FLOAT_SCALE_LOSSLESS: a mapping whatever the values, none or all
     * NULL too (partitions of one table encode alike), every value exact */
    static const uint64_t ns[] = {0, 3, 1000};
    for (size_t s = 0; s < sizeof ns / sizeof ns[0]; s++)
      for (int nulls = 0; nulls < 2; nulls++) {
        th_case("PS_FLOAT_SCALE_LOSSLESS, decimals n=%" PRIu64 " nulls=%d", ns[s], nulls);
        make_case(&c, r, ns[s], F_DECIMAL, false, nulls);
        ps_column *col = NULL;
        if (encode_case_at(&c, PS_FLOAT_SCALE_LOSSLESS) &&
            CHECKF(c.enc.desc.float_map != PS_FLOAT_MAP_DECIMAL, "float map %u", c.enc.desc.float_map) &&
            CHECK_OK(ctx, ps_column_create_for(ctx, &c.enc.desc, &col))) {
          ps_column_set_name(col, "x");
          check_filters(ctx, col, &c, r);
          check_gather_and_aggregate(ctx, col, &c);
        }
        ps_column_destroy(col);
        free_case(&c);
      }
  }
  static const uint64_t sizes[] = {0, 1, 31, 33, 1000, 9000};
  for (int fam = 0; fam < F_GROUPS; fam++)
    for (int f32 = 0; f32 < 2; f32++)
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        if (th.quick && sizes[s] == 9000 && th_below(r, 2)) continue;
        /* The sanitizer size: the empty column, a word and a bit, many words (with DELTA),
         * and half of the float32/float64 x nulls pairs, each family still both widths. */
        if (th.quick == 2 && (sizes[s] == 1 || sizes[s] == 31 || sizes[s] == 9000)) continue;
        for (int nulls = 0; nulls < 2; nulls++) {
          if (th.quick == 2 && ((fam + f32 + nulls) & 1)) continue;
          th_case("%s %s n=%" PRIu64 " nulls=%d", family_name[fam], f32 ? "float32" : "float64", sizes[s], nulls);
          fcase c;
          make_case(&c, r, sizes[s], fam, f32, nulls);
          ps_column *col = NULL;
          if (encode_case(&c) && CHECK_OK(ctx, ps_column_create_for(ctx, &c.enc.desc, &col))) {
            ps_column_set_name(col, "x");
            check_filters(ctx, col, &c, r);
            check_gather_and_aggregate(ctx, col, &c);
            if (sizes[s] >= 1000) { /* the same codes as DELTA blocks (the exception table moves with them) */
              ps_plain in = {c.f32 ? PS_TYPE_FLOAT32 : PS_TYPE_FLOAT64, NULL, c.n, c.valid};
              float *f = NULL;
              if (c.f32) {
                f = th_malloc(c.n * 4);
                for (uint64_t i = 0; i < c.n; i++) f[i] = (float)c.v[i];
                in.values = f;
              } else {
                in.values = c.v;
              }
              ps_encoded d;
              ps_column *dcol = NULL;
              if (CHECK(ps_encode(&in, PS_ENCODING_DELTA, 0, -1, 0, NULL, NULL, 0, &d) == PS_OK) &&
                  CHECK(d.desc.float_map == c.enc.desc.float_map &&
                        d.desc.exceptions_count == c.enc.desc.exceptions_count) &&
                  CHECK_OK(ctx, ps_column_create_for(ctx, &d.desc, &dcol)))
                check_filters(ctx, dcol, &c, r);
              ps_column_destroy(dcol);
              ps_encoded_destroy(&d);
              free(f);
            }
          }
          ps_column_destroy(col);
          free_case(&c);
        }
      }
  /* GROUP BY a float key with a few odd values among the grid ones */
  for (int t = 0; t < 4; t++) {
    th_case("group by, round %d", t);
    fcase k, x;
    make_case(&k, r, 2000, F_GROUPS, t & 1, t >= 2);
    make_case(&x, r, 2000, F_GROUPS, false, true);
    ps_column *kc = NULL, *xc = NULL;
    if (encode_case(&k) && encode_case(&x) && CHECK_OK(ctx, ps_column_create_for(ctx, &k.enc.desc, &kc)) &&
        CHECK_OK(ctx, ps_column_create_for(ctx, &x.enc.desc, &xc))) {
      ps_column_set_name(xc, "x");
      CHECK(k.enc.desc.float_map == PS_FLOAT_MAP_ALP);
      check_query(ctx, kc, &k, xc, &x);
    }
    ps_column_destroy(kc);
    ps_column_destroy(xc);
    free_case(&k);
    free_case(&x);
  }
  /* GROUP BY a float key of wide codes (a hashed plan: past 2^17 possible
   * codes), with +0.0 and -0.0 among them (one group) */
  for (int t = 0; t < 2; t++) {
    th_case("group by a wide float key, round %d", t);
    fcase k, x;
    make_case(&k, r, 3000, F_BITS, false, t == 1);
    make_case(&x, r, 3000, F_GROUPS, false, true);
    for (uint64_t i = 0; i < 3000; i++)
      k.v[i] = (double)(int64_t)(th_below(r, UINT64_C(1) << 40) - (UINT64_C(1) << 39)) * 1.15078e-3;
    for (uint64_t i = 0; i < 3000; i += 97) k.v[i] = i % 2 ? 0.0 : -0.0;
    for (uint64_t i = 5; i < 3000; i += 211) k.v[i] = k.v[i - 5]; /* repeated keys */
    ps_column *kc = NULL, *xc = NULL;
    if (encode_case(&k) && encode_case(&x) && CHECK_OK(ctx, ps_column_create_for(ctx, &k.enc.desc, &kc)) &&
        CHECK_OK(ctx, ps_column_create_for(ctx, &x.enc.desc, &xc))) {
      ps_column_set_name(xc, "x");
      CHECKF(k.enc.desc.float_map != PS_FLOAT_MAP_DECIMAL && k.enc.desc.width > 17, "map %u width %u",
             k.enc.desc.float_map, k.enc.desc.width);
      check_query(ctx, kc, &k, xc, &x);
    }
    ps_column_destroy(kc);
    ps_column_destroy(xc);
    free_case(&k);
    free_case(&x);
  }
  /* Result values are datums (exact decimals of up to 38 digits and their
   * double): an infinite key or maximum is refused by name. */
  {
    th_case("unrepresentable results");
    double v[64];
    for (int i = 0; i < 64; i++) v[i] = i % 2 ? 1.5 : 2.25;
    v[7] = INFINITY, v[8] = -0.0;
    ps_plain in = {PS_TYPE_FLOAT64, v, 64, NULL};
    ps_encoded enc;
    ps_column *col = NULL;
    ps_value *vx = NULL;
    ps_query *q = NULL;
    ps_query_result *res = NULL;
    if (CHECK(ps_encode_for(&in, 0, -1, 0, NULL, NULL, 0, &enc) == PS_OK) &&
        CHECK(enc.desc.float_map == PS_FLOAT_MAP_ALP) && CHECK_OK(ctx, ps_column_create_for(ctx, &enc.desc, &col)) &&
        CHECK_OK(ctx, ps_column_set_name(col, "w")) && CHECK_OK(ctx, ps_value_column(ctx, col, &vx))) {
      const ps_agg aggs[2] = {{PS_AGG_COUNT_STAR, NULL}, {PS_AGG_MAX, vx}};
      ps_query_desc d;
      ps_query_desc_init(&d);
      d.rows = 64;
      d.n_aggs = 2;
      d.aggs = aggs;
      if (CHECK_OK(ctx, ps_query_create(ctx, &d, &q))) {
        CHECK_STATUS(ctx, ps_query_run(ctx, q, &res), PS_ERR_NOT_REPRESENTABLE);
        CHECK(th_contains_ci(ps_context_last_error(ctx), "MAX of float column 'w') is inf"));
      }
      ps_query_destroy(q);
      q = NULL;
      d.n_aggs = 1, d.n_keys = 1, d.keys[0] = col;
      if (CHECK_OK(ctx, ps_query_create(ctx, &d, &q))) {
        CHECK_STATUS(ctx, ps_query_run(ctx, q, &res), PS_ERR_NOT_REPRESENTABLE);
        CHECK(th_contains_ci(ps_context_last_error(ctx), "float column 'w') is inf"));
      }
    }
    ps_query_destroy(q);
    ps_value_destroy(vx);
    ps_column_destroy(col);
    ps_encoded_destroy(&enc);
  }
  /* descriptions the library refuses, naming the field */
  {
    th_case("invalid descriptions");
    double v[64];
    for (int i = 0; i < 64; i++) v[i] = i % 3 ? 0.25 * i : 0.1 + 0.2 * i;
    ps_plain in = {PS_TYPE_FLOAT64, v, 64, NULL};
    ps_encoded enc;
    if (CHECK(ps_encode_for(&in, 0, -1, 0, NULL, NULL, 0, &enc) == PS_OK) &&
        CHECK(enc.desc.float_map == PS_FLOAT_MAP_ALP && enc.desc.exceptions_count >= 2)) {
      ps_float_exception x[64];
      const uint64_t nx = enc.desc.exceptions_count < 64 ? enc.desc.exceptions_count : 64;
      memcpy(x, enc.desc.exceptions, nx * sizeof *x);
      ps_for_desc d = enc.desc;
      ps_column *col = NULL;
      d.exceptions = x, d.exceptions_count = nx;
      d.float_map = 3;
      CHECK_STATUS(ctx, ps_column_create_for(ctx, &d, &col), PS_ERR_INVALID_ARGUMENT);
      CHECK(th_contains_ci(ps_context_last_error(ctx), "float_map is 3"));
      d.float_map = PS_FLOAT_MAP_ALP;
      d.float_f = d.float_e + 1;
      CHECK_STATUS(ctx, ps_column_create_for(ctx, &d, &col), PS_ERR_INVALID_ARGUMENT);
      d.float_f = enc.desc.float_f;
      const ps_float_exception keep = x[1];
      x[1].code = x[0].code; /* codes must ascend */
      CHECK_STATUS(ctx, ps_column_create_for(ctx, &d, &col), PS_ERR_INVALID_ARGUMENT);
      CHECK(th_contains_ci(ps_context_last_error(ctx), "exceptions[1].code"));
      x[1] = keep;
      x[1].bits = x[0].bits; /* a value out of order */
      CHECK_STATUS(ctx, ps_column_create_for(ctx, &d, &col), PS_ERR_INVALID_ARGUMENT);
      CHECK(th_contains_ci(ps_context_last_error(ctx), "exceptions[1]: value"));
      x[1] = keep;
      x[1].bits = fx_bits(NAN);
      CHECK_STATUS(ctx, ps_column_create_for(ctx, &d, &col), PS_ERR_INVALID_ARGUMENT);
      x[1] = keep;
      CHECK_OK(ctx, ps_column_create_for(ctx, &d, &col));
      ps_column_destroy(col);
      col = NULL;
      d.type = PS_TYPE_INT64;
      CHECK_STATUS(ctx, ps_column_create_for(ctx, &d, &col), PS_ERR_INVALID_ARGUMENT);
      d = enc.desc;
      d.float_map = PS_FLOAT_MAP_BITS, d.exceptions = NULL, d.exceptions_count = 0;
      d.reference.u = 5; /* a NaN pattern */
      CHECK_STATUS(ctx, ps_column_create_for(ctx, &d, &col), PS_ERR_INVALID_ARGUMENT);
      CHECK(th_contains_ci(ps_context_last_error(ctx), "-inf..+inf"));
    }
    ps_encoded_destroy(&enc);
  }
  report_compression(r);
  ps_context_destroy(ctx);
  return th_finish();
}
