/*
 * float_cmpcol: comparing two columns where one or both are lossless float
 * columns (docs/float-encoding.md: ALP with its exceptions, ordered bits;
 * float64 and float32) against each other, an int64 column and a
 * FOR-decimal float column, with every operator and NULLs on either side.
 * Each answer is checked against a plain C loop over the original doubles
 * (IEEE compares: -0.0 == +0.0, infinities; a NULL operand is UNKNOWN, so
 * never selected, and its NOT neither), through ps_filter with zone pruning
 * on and off, under NOT, and through a query's WHERE (COUNT(*) and MAX of a
 * lossless column: the query kernels' WHERE). Seeded random columns drawn
 * from one pool of values (so that equal values meet across mappings) plus
 * named edge cases: ALP code-0 exceptions (values below the first grid
 * value), -0.0 against +0.0, infinities, 2^53 + 1 as an integer; and a table
 * whose zone maps decide whole blocks, where decoding a lossless column's
 * codes by the decimal rule would prune wrongly.
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "fexact.h"
#include "harness.h"

/* What a column is made of, and how it is encoded. */
enum { K_ALP64, K_BITS64, K_ALP32, K_BITS32, K_DECIMAL, K_INT, K_COUNT };
static const char *kind_name[K_COUNT] = {"ALP float64",  "bits float64",        "ALP float32",
                                         "bits float32", "FOR-decimal float64", "int64"};

typedef struct fcol {
  int kind;
  uint64_t n;
  double *v;      /* values as doubles (float32: the float's exact double; int64: its double) */
  int64_t *iv;    /* K_INT: the integers */
  uint8_t *valid; /* NULL: no nulls */
  ps_encoded enc;
  ps_column *col;
} fcol;

static bool valid_row(const fcol *c, uint64_t i) { return !c->valid || ((c->valid[i / 8] >> (i % 8)) & 1); }

/* A value every lossless kind can hold, shared so that columns meet: grid
 * values of a unit conversion, short decimals, and the specials. */
static double pool(th_rng *r) {
  static const double odd[] = {-0.0, 0.0, INFINITY, -INFINITY, 0.1 + 0.2, 1e-20, -2.5e30, 1.15078 * 3, 0.7 * 3, 2.5};
  switch (th_below(r, 3)) {
    case 0:
      return (double)th_below(r, 40) * 1.15078;
    case 1:
      return (double)((int64_t)th_below(r, 81) - 40) / 10.0;
    default:
      return odd[th_below(r, sizeof odd / sizeof odd[0])];
  }
}

static double draw(th_rng *r, int kind) {
  switch (kind) {
    case K_BITS64:
    case K_BITS32:
      if (th_chance(r, 60)) { /* a random pattern: what makes the encoder pick ordered bits */
        double x;
        do {
          const uint64_t b = th_u64(r);
          float f;
          const uint32_t b32 = (uint32_t)b;
          memcpy(&f, &b32, 4);
          x = kind == K_BITS32 ? (double)f : fx_double(b);
        } while (isnan(x));
        return x;
      }
      return pool(r);
    case K_DECIMAL: /* decimals at scale 2, no -0.0: FOR-decimal */
      return th_chance(r, 50) ? (double)((int64_t)th_below(r, 81) - 40) / 10.0
                              : (double)((int64_t)th_below(r, 8001) - 4000) / 100.0;
    default: /* ALP: mostly grid values, a few exceptions */
      return th_chance(r, 85) ? (double)th_below(r, 40) * 1.15078 : pool(r);
  }
}

static bool is_f32(int kind) { return kind == K_ALP32 || kind == K_BITS32; }

/* Encodes c (values in c->v, or c->iv) and makes its column; false on failure. */
static bool encode(ps_context *ctx, fcol *c) {
  ps_plain in = {PS_TYPE_FLOAT64, c->v, c->n, c->valid};
  float *f = NULL;
  int scale = c->kind == K_DECIMAL ? -1 : PS_FLOAT_SCALE_LOSSLESS;
  if (c->kind == K_INT) {
    in.type = PS_TYPE_INT64, in.values = c->iv, scale = 0;
  } else if (is_f32(c->kind)) {
    f = th_malloc(c->n * 4 + 4);
    for (uint64_t i = 0; i < c->n; i++) f[i] = (float)c->v[i];
    in.type = PS_TYPE_FLOAT32, in.values = f;
  }
  char err[512];
  bool ok = CHECKF(ps_encode_for(&in, 0, scale, 0, NULL, err, sizeof err, &c->enc) == PS_OK, "encode %s: %s",
                   kind_name[c->kind], err);
  free(f);
  if (ok && c->kind == K_DECIMAL)
    ok = CHECKF(c->enc.desc.float_map == PS_FLOAT_MAP_DECIMAL, "decimal column mapped (%u)", c->enc.desc.float_map);
  if (ok && c->kind != K_DECIMAL && c->kind != K_INT)
    ok = CHECKF(c->enc.desc.float_map != PS_FLOAT_MAP_DECIMAL, "lossless column left decimal");
  return ok && CHECK_OK(ctx, ps_column_create_for(ctx, &c->enc.desc, &c->col));
}

static void make(th_rng *r, fcol *c, int kind, uint64_t n, bool nulls) {
  memset(c, 0, sizeof *c);
  c->kind = kind, c->n = n;
  c->v = th_malloc(n * 8 + 8);
  if (kind == K_INT) c->iv = th_malloc(n * 8 + 8);
  for (uint64_t i = 0; i < n; i++) {
    if (kind == K_INT) {
      c->iv[i] = th_chance(r, 3) ? ((int64_t)1 << 53) + 1 : (int64_t)th_below(r, 81) - 40;
      c->v[i] = (double)c->iv[i]; /* PS_MODE_DOUBLE: the integer rounded to a double */
    } else {
      const double x = draw(r, kind);
      c->v[i] = is_f32(kind) ? (double)(float)x : x;
    }
  }
  if (nulls) {
    c->valid = th_malloc(n / 8 + 1);
    for (uint64_t i = 0; i < n / 8 + 1; i++) c->valid[i] = (uint8_t)(th_u64(r) | th_u64(r));
  }
}

static void drop(fcol *c) {
  ps_column_destroy(c->col);
  ps_encoded_destroy(&c->enc);
  free(c->v);
  free(c->iv);
  free(c->valid);
}

static bool cmp_holds(double x, ps_cmp op, double y) {
  switch (op) {
    case PS_EQ:
      return x == y;
    case PS_NE:
      return x != y;
    case PS_LT:
      return x < y;
    case PS_LE:
      return x <= y;
    case PS_GT:
      return x > y;
    default:
      return x >= y;
  }
}

static const char *op_text(ps_cmp op) {
  static const char *t[] = {"=", "!=", "<", "<=", ">", ">="};
  return t[op];
}

/* Values in IEEE order with -0.0 below +0.0 (MAX's order). */
static uint64_t ord(double x) {
  const uint64_t b = fx_bits(x);
  return b >> 63 ? ~b : b | ((uint64_t)1 << 63);
}

/* a <op> b (negated: NOT (a <op> b)) through ps_filter, pruning on and off,
 * against the plain loop; with query, also a query's COUNT(*) and MAX(a)
 * WHERE a <op> b. */
static void check_pair(ps_context *ctx, const fcol *a, ps_cmp op, const fcol *b, bool negate, bool query) {
  const uint64_t n = a->n, bytes = (n + 7) / 8 + 1;
  char what[160];
  snprintf(what, sizeof what, "%s(%s a %s %s b)", negate ? "NOT " : "", kind_name[a->kind], op_text(op),
           kind_name[b->kind]);
  ps_expr *e = NULL, *x = NULL;
  if (!CHECKF(ps_expr_compare_columns(ctx, a->col, op, b->col, &x) == PS_OK, "%s: %s", what,
              ps_context_last_error(ctx)))
    return;
  if (negate) {
    if (!CHECK_OK(ctx, ps_expr_not(ctx, x, &e))) {
      ps_expr_destroy(x);
      return;
    }
  } else {
    e = x;
  }
  uint64_t expect = 0, max_ord = 0;
  uint8_t *want = th_calloc(bytes, 1), *bm = th_calloc(bytes, 1);
  for (uint64_t i = 0; i < n; i++) {
    if (!valid_row(a, i) || !valid_row(b, i)) continue; /* UNKNOWN, and so is its NOT */
    if (cmp_holds(a->v[i], op, b->v[i]) == negate) continue;
    want[i / 8] |= (uint8_t)(1u << (i % 8));
    expect++;
    if (ord(a->v[i]) > max_ord) max_ord = ord(a->v[i]);
  }
  for (int prune = 1; prune >= 0; prune--) {
    ps_context_set_zone_pruning(ctx, prune);
    memset(bm, 0, bytes);
    uint64_t count = 0;
    if (!CHECK_OK(ctx, ps_filter(ctx, e, bm, bytes, &count))) break;
    uint64_t bad = 0, first = 0;
    for (uint64_t i = 0; i < n; i++)
      if (((bm[i / 8] ^ want[i / 8]) >> (i % 8)) & 1)
        if (!bad++) first = i;
    CHECKF(!bad && count == expect,
           "%s (pruning %d): %" PRIu64 " rows differ, count %" PRIu64 " of %" PRIu64 "; first row %" PRIu64
           ": a %.17g (valid %d), b %.17g (valid %d)",
           what, prune, bad, count, expect, first, bad ? a->v[first] : 0.0, bad ? valid_row(a, first) : 0,
           bad ? b->v[first] : 0.0, bad ? valid_row(b, first) : 0);
  }
  ps_context_set_zone_pruning(ctx, 1);
  if (query && a->kind != K_INT && a->kind != K_DECIMAL) {
    ps_value *va = NULL;
    ps_query *q = NULL;
    ps_query_result *res = NULL;
    if (CHECK_OK(ctx, ps_value_column(ctx, a->col, &va))) {
      const ps_agg aggs[2] = {{PS_AGG_COUNT_STAR, NULL}, {PS_AGG_MAX, va}};
      ps_query_desc d;
      ps_query_desc_init(&d);
      d.rows = n, d.where = e, d.n_aggs = 2, d.aggs = aggs;
      ps_datum cnt, mx;
      if (CHECK_OK(ctx, ps_query_create(ctx, &d, &q))) {
        const ps_status st = ps_query_run(ctx, q, &res);
        /* a MAX that no decimal of 38 digits at scale 0..38 holds is refused
         * (docs/float-encoding.md): an infinity, 1e300, 1e-300 */
        const double m = fx_double(max_ord >> 63 ? max_ord ^ ((uint64_t)1 << 63) : ~max_ord);
        const bool plain = expect == 0 || m == 0 || (fabs(m) >= 1e-21 && fabs(m) < 1e38);
        if (st == PS_ERR_NOT_REPRESENTABLE && !plain)
          CHECKF(th_contains_ci(ps_context_last_error(ctx), "MAX"), "%s: query: %s", what, ps_context_last_error(ctx));
        else if (CHECKF(st == PS_OK, "%s: query: %s", what, ps_context_last_error(ctx)) &&
                 CHECK_OK(NULL, ps_query_result_value(res, 0, 0, &cnt)) &&
                 CHECK_OK(NULL, ps_query_result_value(res, 0, 1, &mx))) {
          CHECKF(cnt.lo == expect, "%s: query COUNT(*) %" PRIu64 ", expected %" PRIu64, what, cnt.lo, expect);
          if (expect)
            CHECKF(!mx.is_null && ord(mx.as_double) == max_ord, "%s: query MAX %.17g", what, mx.as_double);
          else
            CHECK(mx.is_null);
        }
      }
    }
    ps_query_result_destroy(res);
    ps_query_destroy(q);
    ps_value_destroy(va);
  }
  ps_expr_destroy(e);
  free(want);
  free(bm);
}

static void check_all_ops(ps_context *ctx, th_rng *r, const fcol *a, const fcol *b, bool query) {
  static const ps_cmp ops[] = {PS_EQ, PS_NE, PS_LT, PS_LE, PS_GT, PS_GE};
  for (size_t o = 0; o < 6; o++) check_pair(ctx, a, ops[o], b, th_chance(r, 25), query && o == th_below(r, 6));
}

/* Named edge cases, float64 ALP with code-0 exceptions (below the first grid
 * value) and a float32 ALP column, against -0.0, +0.0, infinities. */
static void edge_cases(ps_context *ctx) {
  static const double av[] = {-0.0,      0.0,     -INFINITY, INFINITY, -2.5e30,  -1e300,  0.3,     1.15078, 2.30156,
                              0.1 + 0.2, 1.15078, -0.0,      0.0,      INFINITY, 3.45234, 0.0,     -0.0,    5e-324,
                              -5e-324,   1e-20,   4.60312,   4.60312,  5.7539,   6.90468, 8.05546, 9.20624, 10.35702,
                              0.0,       0.0,     1.15078,   2.30156,  3.45234,  4.60312};
  static const double bv[] = {0.0,     -0.0,    -INFINITY, 1e308,   -2.5e30, -INFINITY, 0.30000000000000004,
                              1.15078, 2.30156, 0.3,       1.15,    -0.0,    -0.0,      INFINITY,
                              3.45234, 1.0,     0.0,       0.0,     0.0,     1e-20,     4.60312,
                              4.6,     5.7539,  6.9,       8,       9.20624, -10,       0.0,
                              -0.0,    1.15078, 2.30156,   3.45234, 4.60312};
  _Static_assert(sizeof av == sizeof bv, "one row each");
  const uint64_t named = sizeof av / sizeof av[0], n = named + 400;
  for (int f32 = 0; f32 < 2; f32++) {
    th_case("edge cases, %s", f32 ? "float32" : "float64");
    fcol a, b;
    memset(&a, 0, sizeof a), memset(&b, 0, sizeof b);
    a.kind = f32 ? K_ALP32 : K_ALP64, b.kind = f32 ? K_BITS32 : K_BITS64;
    a.n = b.n = n;
    a.v = th_malloc(n * 8), b.v = th_malloc(n * 8);
    for (uint64_t i = 0; i < n; i++) { /* the named rows, then grid values, which make the encoder choose ALP */
      const double x = i < named ? av[i] : (double)(i % 37) * 1.15078,
                   y = i < named ? bv[i] : (double)(i % 41) * 1.15078;
      a.v[i] = f32 ? (double)(float)x : x, b.v[i] = f32 ? (double)(float)y : y;
    }
    if (encode(ctx, &a) && encode(ctx, &b)) {
      const ps_for_desc *d = &a.enc.desc;
      /* the column holds what the case is about: exceptions, code 0 among them */
      CHECKF(d->float_map == PS_FLOAT_MAP_ALP && d->exceptions_count > 0 && d->exceptions[0].code == 0,
             "map %u, %" PRIu64 " exceptions, first code %" PRIu64, d->float_map, d->exceptions_count,
             d->exceptions_count ? d->exceptions[0].code : 0);
      static const ps_cmp ops[] = {PS_EQ, PS_NE, PS_LT, PS_LE, PS_GT, PS_GE};
      for (size_t o = 0; o < 6; o++) {
        check_pair(ctx, &a, ops[o], &b, false, true);
        check_pair(ctx, &b, ops[o], &a, true, false);
        check_pair(ctx, &a, ops[o], &a, false, false); /* one column on both sides */
      }
    }
    drop(&a);
    drop(&b);
  }
}

/* Zone maps that decide whole blocks: a (ALP, ascending by block, its codes
 * far from its values) < b (int64, constant). Every block is ALL TRUE or ALL
 * FALSE, so the scan reads only the mixed one; decoding a's codes by the
 * decimal rule would prune the TRUE blocks as FALSE. */
static void zone_case(ps_context *ctx) {
  th_case("zone maps decide blocks");
  const uint64_t blocks = 4, n = blocks * PS_ZONE_BLOCK_ROWS;
  fcol a, b;
  memset(&a, 0, sizeof a), memset(&b, 0, sizeof b);
  a.kind = K_ALP64, b.kind = K_INT;
  a.n = b.n = n;
  a.v = th_malloc(n * 8), b.v = th_malloc(n * 8), b.iv = th_malloc(n * 8);
  for (uint64_t i = 0; i < n; i++) {
    const uint64_t blk = i / PS_ZONE_BLOCK_ROWS;
    a.v[i] = (double)(1000 * blk + i % 7) * 1.15078; /* blocks 0, 1 below 2000, block 2 around it, block 3 above */
    if (blk == 2) a.v[i] = (double)(1730 + i % 10) * 1.15078;
    if (i % 1000 == 3) a.v[i] = a.v[i] + 1e-9; /* exceptions inside the grid */
    b.iv[i] = 2000, b.v[i] = 2000.0;
  }
  if (encode(ctx, &a) && encode(ctx, &b) &&
      CHECKF(a.enc.desc.float_map == PS_FLOAT_MAP_ALP && a.enc.desc.exceptions_count > 0, "map %u",
             a.enc.desc.float_map)) {
    static const ps_cmp ops[] = {PS_LT, PS_GE, PS_EQ, PS_NE};
    for (size_t o = 0; o < 4; o++) {
      ps_context_scan_stats_reset(ctx);
      check_pair(ctx, &a, ops[o], &b, false, o == 0);
      check_pair(ctx, &b, ops[o], &a, false, false);
    }
    /* pruning happened: with it on, only the mixed block is scanned */
    ps_context_scan_stats_reset(ctx);
    ps_expr *e = NULL;
    uint64_t count = 0;
    if (CHECK_OK(ctx, ps_expr_compare_columns(ctx, a.col, PS_LT, b.col, &e)) &&
        CHECK_OK(ctx, ps_filter_count(ctx, e, &count))) {
      ps_scan_stats st = {sizeof st, 0, 0, 0, 0};
      CHECK_OK(NULL, ps_context_scan_stats(ctx, &st));
      CHECKF(st.rows_all_true + st.rows_skipped >= 3 * PS_ZONE_BLOCK_ROWS,
             "zone maps decided %" PRIu64 " + %" PRIu64 " rows", st.rows_all_true, st.rows_skipped);
    }
    ps_expr_destroy(e);
  }
  drop(&a);
  drop(&b);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "float_cmpcol");
  ps_context *ctx = th_context(0);
  th_rng *r = &th.rng;
  edge_cases(ctx);
  zone_case(ctx);
  /* every pairing, random data; the maps the encoder chose are counted so
   * that each lossless kind is known to have been covered */
  uint64_t maps[K_COUNT][3];
  memset(maps, 0, sizeof maps);
  static const uint64_t sizes[] = {1, 31, 33, 1000, 9000};
  for (int ka = 0; ka < K_COUNT; ka++)
    for (int kb = 0; kb < K_COUNT; kb++) {
      const bool lossless_a = ka != K_DECIMAL && ka != K_INT, lossless_b = kb != K_DECIMAL && kb != K_INT;
      if (!lossless_a && !lossless_b) continue; /* their compares: test_filter */
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) {
        if (th.quick && sizes[s] == 9000 && th_below(r, 3)) continue;
        const int nulls = (int)th_below(r, 4); /* bit 0: a has nulls, bit 1: b */
        th_case("%s vs %s n=%" PRIu64 " nulls a=%d b=%d", kind_name[ka], kind_name[kb], sizes[s], nulls & 1,
                nulls >> 1);
        fcol a, b;
        make(r, &a, ka, sizes[s], nulls & 1);
        make(r, &b, kb, sizes[s], nulls >> 1);
        if (encode(ctx, &a) && encode(ctx, &b)) {
          maps[ka][a.enc.desc.float_map]++, maps[kb][b.enc.desc.float_map]++;
          check_all_ops(ctx, r, &a, &b, sizes[s] >= 1000);
        }
        drop(&a);
        drop(&b);
      }
    }
  th_case("coverage");
  CHECKF(maps[K_ALP64][PS_FLOAT_MAP_ALP] && maps[K_ALP32][PS_FLOAT_MAP_ALP] && maps[K_BITS64][PS_FLOAT_MAP_BITS] &&
             maps[K_BITS32][PS_FLOAT_MAP_BITS],
         "maps chosen: ALP64 %" PRIu64 ", ALP32 %" PRIu64 ", BITS64 %" PRIu64 ", BITS32 %" PRIu64,
         maps[K_ALP64][PS_FLOAT_MAP_ALP], maps[K_ALP32][PS_FLOAT_MAP_ALP], maps[K_BITS64][PS_FLOAT_MAP_BITS],
         maps[K_BITS32][PS_FLOAT_MAP_BITS]);
  ps_context_destroy(ctx);
  return th_finish();
}
