/*
 * delta: DELTA columns (docs/design.md, column formats) filter exactly as the
 * FOR columns of the same values. Seeded random sorted, clustered, constant
 * and random integers at every code width 0..64, with and without nulls, at
 * row counts around row words, blocks and chunks (contexts chunked at 64 and
 * 1056 rows, which the core rounds to whole blocks), through the generic and
 * the shape-specialized filter kernels: every bitmap, count, row id and mask
 * of a predicate over a DELTA column equals the one over its FOR twin on the
 * backend under test and on the reference backend (whose DELTA reader is
 * its own). Also: the encoder's choice (ps_encode with PS_ENCODING_AUTO),
 * decoding back, and every malformed header refused with a message naming
 * the field.
 *
 * Queries (WHERE, every aggregate, GROUP BY a DELTA key, a DELTA column
 * beside FOR ones), ps_aggregate over every row and over a selection, and
 * gathers of 32- and 64-bit ids (a selection's, and random ones) read a
 * DELTA column exactly as its FOR twin, on the backend under test and on
 * the reference backend, generic and specialized; also with zone maps of
 * 512-row blocks, where the core must not start a chunk inside a DELTA
 * block.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "ps_codes.h" /* the shared readers, run here on the host */

enum { SORTED, CLUSTERED, CONSTANT, RANDOM, PATTERNS };
static const char *const PATTERN_NAMES[] = {"sorted", "clustered", "constant", "random"};

/* n values of a pattern whose FOR width is w (when the pattern allows it):
 * the range [lo, lo + 2^w - 1] with both ends present. */
static void make_values(th_rng *r, int pattern, uint32_t w, uint64_t n, uint64_t *v) {
  const uint64_t span = w >= 64 ? UINT64_MAX : ((uint64_t)1 << w) - 1;
  const uint64_t lo = w >= 64 ? 0 : th_below(r, 1000);
  for (uint64_t i = 0; i < n; i++) {
    switch (pattern) {
      case SORTED:
        v[i] = lo + (n > 1 ? (uint64_t)((long double)span * i / (n - 1)) : 0);
        break;
      case CLUSTERED: {
        const uint64_t base = n > 1 ? (uint64_t)((long double)span * i / (n - 1)) : 0;
        const uint64_t jitter = th_below(r, 5);
        v[i] = lo + (base >= jitter ? base - jitter : base);
        break;
      }
      case CONSTANT:
        v[i] = lo;
        break;
      default:
        v[i] = lo + (span == UINT64_MAX ? th_u64(r) : th_below(r, span + 1));
        break;
    }
  }
  if (n >= 2 && pattern != CONSTANT) v[0] = lo, v[n - 1] = lo + span;
}

typedef struct pair {
  ps_column *f, *d;   /* FOR and DELTA columns of the same values */
  ps_column *rf, *rd; /* the same on the reference backend (NULL when testing it) */
  uint64_t n;
} pair;

/* zones: the column's zone maps instead of the encoder's (NULL: the encoder's). */
static ps_column *make_col_zones(ps_context *ctx, const ps_plain *p, int enc, const ps_zone_map *zones) {
  ps_encoded e;
  char err[256];
  if (!CHECKF(ps_encode(p, enc, 0, 0, 0, NULL, err, sizeof err, &e) == PS_OK, "encode: %s", err)) return NULL;
  CHECKF((int)e.desc.encoding == enc, "encoding %u, asked for %d", e.desc.encoding, enc);
  ps_for_desc d = e.desc;
  if (zones) d.zones = zones;
  ps_column *c = NULL;
  CHECK_OK(ctx, ps_column_create_for(ctx, &d, &c));
  ps_encoded_destroy(&e);
  return c;
}

static ps_column *make_col(ps_context *ctx, const ps_plain *p, int enc) { return make_col_zones(ctx, p, enc, NULL); }

typedef ps_status (*build_fn)(ps_context *ctx, ps_column *c, ps_column *other, uint64_t lit, ps_expr **out);

static ps_status leaf_lt(ps_context *ctx, ps_column *c, ps_column *o, uint64_t lit, ps_expr **out) {
  (void)o;
  return ps_expr_compare(ctx, c, PS_LT, ps_lit_uint(lit), out);
}
static ps_status leaf_between(ps_context *ctx, ps_column *c, ps_column *o, uint64_t lit, ps_expr **out) {
  (void)o;
  return ps_expr_between(ctx, c, ps_lit_uint(lit / 2), ps_lit_uint(lit), out);
}
static ps_status leaf_eq(ps_context *ctx, ps_column *c, ps_column *o, uint64_t lit, ps_expr **out) {
  (void)o;
  return ps_expr_compare(ctx, c, PS_EQ, ps_lit_uint(lit), out);
}
static ps_status leaf_in(ps_context *ctx, ps_column *c, ps_column *o, uint64_t lit, ps_expr **out) {
  (void)o;
  ps_literal l[3] = {ps_lit_uint(lit), ps_lit_uint(lit / 3), ps_lit_uint(lit + 1)};
  return ps_expr_in(ctx, c, l, 3, out);
}
static ps_status tree(ps_context *ctx, ps_column *c, ps_column *o, uint64_t lit, ps_expr **out) {
  ps_expr *a = NULL, *b = NULL, *n = NULL, *x = NULL;
  ps_status st = ps_expr_compare(ctx, c, PS_GE, ps_lit_uint(lit / 4), &a);
  if (st == PS_OK) st = ps_expr_is_null(ctx, c, 0, &b);
  if (st == PS_OK) st = ps_expr_compare_columns(ctx, c, PS_LE, o, &n);
  if (st == PS_OK) st = ps_expr_not(ctx, n, &x), n = NULL;
  if (st == PS_OK) st = ps_expr_or(ctx, a, b, &n), a = b = NULL;
  if (st == PS_OK) st = ps_expr_and(ctx, n, x, out), n = x = NULL;
  ps_expr_destroy(a), ps_expr_destroy(b), ps_expr_destroy(n), ps_expr_destroy(x);
  return st;
}
static const build_fn BUILDS[] = {leaf_lt, leaf_between, leaf_eq, leaf_in, tree};

/* Bitmap, count, row ids and mask of one predicate built on c (and o). */
typedef struct result {
  ps_status st;
  uint8_t *bits, *mask;
  uint64_t count, nids;
  uint64_t *ids;
} result;

static result run_one(ps_context *ctx, build_fn b, ps_column *c, ps_column *o, uint64_t lit, uint64_t n) {
  result r;
  memset(&r, 0, sizeof r);
  ps_expr *e = NULL;
  r.st = b(ctx, c, o, lit, &e);
  if (r.st != PS_OK) return r;
  r.bits = th_calloc(n / 8 + 1, 1);
  r.mask = th_calloc(n + 1, 1);
  r.st = ps_filter(ctx, e, r.bits, n / 8 + 1, &r.count);
  uint64_t mc = 0;
  if (r.st == PS_OK) r.st = ps_filter_mask(ctx, e, r.mask, n + 1, &mc);
  if (r.st == PS_OK && mc != r.count) r.st = PS_ERR_INTERNAL;
  void *ids = NULL;
  if (r.st == PS_OK) r.st = ps_filter_row_ids(ctx, e, PS_INDEX_UINT64, &ids, &r.nids);
  r.ids = ids;
  ps_expr_destroy(e);
  return r;
}

static void result_free(result *r) { free(r->bits), free(r->mask), free(r->ids); }

static void compare(const char *label, ps_context *ctx, const result *a, const result *b, uint64_t n) {
  if (!CHECKF(a->st == PS_OK && b->st == PS_OK, "%s: status %s / %s (%s)", label, ps_status_name(a->st),
              ps_status_name(b->st), ps_context_last_error(ctx)))
    return;
  CHECKF(a->count == b->count, "%s: count %llu, FOR twin %llu", label, (unsigned long long)a->count,
         (unsigned long long)b->count);
  CHECKF(memcmp(a->bits, b->bits, n / 8 + 1) == 0, "%s: bitmap differs from the FOR twin's", label);
  CHECKF(memcmp(a->mask, b->mask, n) == 0, "%s: mask differs from the FOR twin's", label);
  CHECKF(a->nids == b->nids && (a->nids == 0 || memcmp(a->ids, b->ids, a->nids * 8) == 0),
         "%s: row ids differ from the FOR twin's", label);
}

/* Widths: every one when all is set, else `some` random ones. */
static void sweep(ps_context *ctx, ps_context *ref, th_rng *r, int all, unsigned some) {
  static const uint64_t NS[] = {1, 31, 33, 1023, 1024, 1025, 2080, 3100};
  static const int NULLS[] = {0, 10, 90};
  for (uint32_t k = 0; k < (all ? 65u : some); k++) {
    const uint32_t w = all ? k : (uint32_t)th_below(r, 65);
    const uint64_t n = TH_PICK(r, NS);
    const int pattern = (int)th_below(r, PATTERNS);
    const int nulls = TH_PICK(r, NULLS);
    th_case("width %u, %s, n %llu, %d%% nulls", w, PATTERN_NAMES[pattern], (unsigned long long)n, nulls);
    uint64_t *v = th_malloc(n * 8), *o = th_malloc(n * 8);
    uint8_t *valid = nulls ? th_malloc(n / 8 + 1) : NULL;
    make_values(r, pattern, w, n, v);
    make_values(r, RANDOM, w, n, o);
    if (valid)
      for (uint64_t i = 0; i < n; i++) {
        if (th_chance(r, (unsigned)nulls))
          valid[i / 8] &= (uint8_t) ~(1u << (i % 8));
        else
          valid[i / 8] |= (uint8_t)(1u << (i % 8));
      }
    ps_plain p = {PS_TYPE_UINT64, v, n, valid}, po = {PS_TYPE_UINT64, o, n, NULL};
    ps_column *f = make_col(ctx, &p, PS_ENCODING_FOR), *d = make_col(ctx, &p, PS_ENCODING_DELTA);
    ps_column *of = make_col(ctx, &po, PS_ENCODING_FOR), *od = make_col(ctx, &po, PS_ENCODING_DELTA);
    ps_column *rf = ref ? make_col(ref, &p, PS_ENCODING_FOR) : NULL;
    ps_column *rd = ref ? make_col(ref, &p, PS_ENCODING_DELTA) : NULL;
    ps_column *rof = ref ? make_col(ref, &po, PS_ENCODING_FOR) : NULL;
    if (f && d && of && od && (!ref || (rf && rd && rof))) {
      for (size_t b = 0; b < sizeof BUILDS / sizeof BUILDS[0]; b++) {
        const uint64_t lit = v[th_below(r, n)];
        char label[128];
        snprintf(label, sizeof label, "predicate %zu, literal %llu", b, (unsigned long long)lit);
        result want = run_one(ctx, BUILDS[b], f, of, lit, n);
        result got = run_one(ctx, BUILDS[b], d, od, lit, n);
        compare(label, ctx, &got, &want, n);
        if (BUILDS[b] == tree) { /* a DELTA column compared with a FOR one in one program */
          result mixed = run_one(ctx, BUILDS[b], d, of, lit, n);
          compare("tree, DELTA and FOR columns", ctx, &mixed, &want, n);
          result_free(&mixed);
        }
        if (ref) {
          result rw = run_one(ref, BUILDS[b], rf, rof, lit, n);
          result rg = run_one(ref, BUILDS[b], rd, rof, lit, n);
          compare(label, ref, &rg, &rw, n);
          compare(label, ctx, &got, &rw, n);
          result_free(&rw), result_free(&rg);
        }
        result_free(&want), result_free(&got);
      }
    }
    ps_column_destroy(f), ps_column_destroy(d), ps_column_destroy(of), ps_column_destroy(od);
    ps_column_destroy(rf), ps_column_destroy(rd), ps_column_destroy(rof);
    free(v), free(o), free(valid);
  }
}

/* ps_codes.h's readers on the host: ps_col_code_at and the word pair
 * (ps_word_load_enc, ps_word_code) give every valid row's value - M, for FOR and
 * DELTA, at every width. */
static void shared_readers(th_rng *r) {
  for (uint32_t k = 0; k <= 2 * 64 + 1; k++) {
    /* every width twice: random values (deltas of every width up to 64)
     * and a random pattern */
    const uint32_t w = k / 2;
    const uint64_t n = 1 + th_below(r, 2500);
    const int pattern = k % 2 ? RANDOM : (int)th_below(r, PATTERNS);
    th_case("shared readers: width %u, %s, n %llu", w, PATTERN_NAMES[pattern], (unsigned long long)n);
    uint64_t *v = th_malloc(n * 8);
    make_values(r, pattern, w, n, v);
    ps_plain p = {PS_TYPE_UINT64, v, n, NULL};
    for (int enc = PS_ENCODING_FOR; enc <= PS_ENCODING_DELTA; enc++) {
      ps_encoded e;
      char err[256];
      if (!CHECKF(ps_encode(&p, enc, 0, 0, 0, NULL, err, sizeof err, &e) == PS_OK, "encode: %s", err)) continue;
      ps_prog_col c;
      memset(&c, 0, sizeof c);
      c.width = e.desc.width;
      c.encoding = (ps_u16)enc;
      c.data_bytes = e.desc.data_size;
      uint32_t x[PS_WORD_X];
      int bad = 0;
      for (uint64_t g = 0; g < (n + 31) / 32 && !bad; g++) {
        ps_word_load_enc((ps_u32)enc, c.width, e.data, c.data_bytes, 1, g, x);
        for (uint32_t j = 0; j < 32 && 32 * g + j < n; j++) {
          const uint64_t want = v[32 * g + j] - e.desc.reference.u;
          const uint64_t a = ps_col_code_at(e.data, &c, 1, 32 * g + j), b = ps_word_code((ps_u32)enc, c.width, x, j);
          bad |= !CHECKF(
              a == want && b == want, "encoding %d row %llu: ps_col_code_at %llu, ps_word_code %llu, want %llu", enc,
              (unsigned long long)(32 * g + j), (unsigned long long)a, (unsigned long long)b, (unsigned long long)want);
        }
      }
      ps_encoded_destroy(&e);
    }
    free(v);
  }
}

/* ps_encode's choice, decoding back, and the size on sorted data. */
static void encoder(th_rng *r) {
  th_case("encoder");
  const uint64_t n = 5000;
  int64_t *v = th_malloc(n * 8), *back = th_malloc(n * 8);
  int64_t t = 1700000000;
  for (uint64_t i = 0; i < n; i++) v[i] = (t += (int64_t)th_below(r, 4));
  ps_plain p = {PS_TYPE_INT64, v, n, NULL};
  ps_encoded a, f;
  char err[256];
  if (CHECK(ps_encode(&p, PS_ENCODING_AUTO, 0, 0, 0, NULL, err, sizeof err, &a) == PS_OK) &&
      CHECK(ps_encode(&p, PS_ENCODING_FOR, 0, 0, 0, NULL, err, sizeof err, &f) == PS_OK)) {
    CHECKF(a.desc.encoding == PS_ENCODING_DELTA, "sorted timestamps: AUTO chose encoding %u", a.desc.encoding);
    CHECKF(a.desc.data_size < f.desc.data_size, "DELTA %llu bytes, FOR %llu", (unsigned long long)a.desc.data_size,
           (unsigned long long)f.desc.data_size);
    CHECK(a.desc.width == f.desc.width);
    CHECK(ps_for_desc_check(&a.desc, err, sizeof err) == PS_OK);
    if (CHECKF(ps_decode_for(&a.desc, back, err, sizeof err) == PS_OK, "decode: %s", err))
      CHECK(memcmp(back, v, n * 8) == 0);
    ps_encoded_destroy(&f);
    ps_encoded_destroy(&a);
  }
  for (uint64_t i = 0; i < n; i++) v[i] = (int64_t)th_below(r, 1000);
  if (CHECK(ps_encode(&p, PS_ENCODING_AUTO, 0, 0, 0, NULL, err, sizeof err, &a) == PS_OK)) {
    CHECKF(a.desc.encoding == PS_ENCODING_FOR, "random values: AUTO chose encoding %u", a.desc.encoding);
    ps_encoded_destroy(&a);
  }
  CHECK(ps_encode(&p, 7, 0, 0, 0, NULL, err, sizeof err, &a) == PS_ERR_INVALID_ARGUMENT);
  /* no rows: no blocks, no bytes */
  p.n = 0;
  if (CHECK(ps_encode(&p, PS_ENCODING_DELTA, 0, 0, 0, NULL, err, sizeof err, &a) == PS_OK)) {
    CHECK(a.desc.data_size == 0 && a.desc.encoding == PS_ENCODING_DELTA);
    ps_for_desc d = a.desc;
    d.data = NULL;
    CHECKF(ps_for_desc_check(&d, err, sizeof err) == PS_OK, "no rows: %s", err);
    ps_encoded_destroy(&a);
  }
  free(v), free(back);
}

/* Every header field of a caller's DELTA column is checked. */
static void malformed(ps_context *ctx) {
  const uint64_t n = 2100;
  uint64_t *v = th_malloc(n * 8);
  for (uint64_t i = 0; i < n; i++) v[i] = i * 3;
  ps_plain p = {PS_TYPE_UINT64, v, n, NULL};
  ps_encoded e;
  char err[256];
  if (!CHECK(ps_encode(&p, PS_ENCODING_DELTA, 0, 0, 0, NULL, err, sizeof err, &e) == PS_OK)) {
    free(v);
    return;
  }
  uint8_t *copy = th_malloc(e.desc.data_size);
  static const struct {
    uint32_t byte;
    uint8_t x;
    const char *says;
  } CASES[] = {{32 + 16, 4, "payload offset"},
               {24, 0x41, "anchor width"},
               {25, 0x41, "delta width"},
               {26, 1, "word 6"},
               {28, 1, "word 7"},
               {64 + 16, 8, "block 2"}};
  for (size_t k = 0; k < sizeof CASES / sizeof CASES[0]; k++) {
    th_case("malformed header: byte %u ^= 0x%x", CASES[k].byte, CASES[k].x);
    memcpy(copy, e.data, e.desc.data_size);
    copy[CASES[k].byte] ^= CASES[k].x;
    ps_for_desc d = e.desc;
    d.data = copy;
    ps_column *c = NULL;
    CHECK_STATUS(ctx, ps_column_create_for(ctx, &d, &c), PS_ERR_INVALID_ARGUMENT);
    CHECKF(strstr(ps_context_last_error(ctx), CASES[k].says) != NULL, "message '%s' does not name '%s'",
           ps_context_last_error(ctx), CASES[k].says);
    CHECK(ps_for_desc_check(&d, err, sizeof err) == PS_ERR_INVALID_ARGUMENT);
    ps_column_destroy(c);
  }
  th_case("malformed: data_size");
  ps_for_desc d = e.desc;
  d.data_size -= 4;
  ps_column *c = NULL;
  CHECK_STATUS(ctx, ps_column_create_for(ctx, &d, &c), PS_ERR_INVALID_ARGUMENT);
  d = e.desc;
  d.encoding = 9;
  CHECK_STATUS(ctx, ps_column_create_for(ctx, &d, &c), PS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ps_context_last_error(ctx), "encoding") != NULL);

  th_case("corrupt: a block's base past the codes' width");
  {
    /* Any base is a valid header; codes it puts at 2^width or above are
     * corrupt data when a filter reads them, on every backend. */
    memcpy(copy, e.data, e.desc.data_size);
    uint64_t base = 0;
    for (int k = 0; k < 8; k++) base |= (uint64_t)copy[32 + k] << (8 * k);
    base += (uint64_t)1 << e.desc.width;
    for (int k = 0; k < 8; k++) copy[32 + k] = (uint8_t)(base >> (8 * k));
    d = e.desc;
    d.data = copy;
    d.zones = NULL; /* the encoder's zone maps describe the codes before the change */
    ps_column *bad = NULL;
    ps_expr *x = NULL;
    uint64_t count = 0;
    if (CHECK_OK(ctx, ps_column_create_for(ctx, &d, &bad)) &&
        CHECK_OK(ctx, ps_expr_compare(ctx, bad, PS_GE, ps_lit_uint(0), &x))) {
      CHECK_STATUS(ctx, ps_filter_count(ctx, x, &count), PS_ERR_CORRUPT_DATA);
      ps_expr_destroy(x);
    }
    ps_column_destroy(bad);
  }

  free(copy);
  ps_encoded_destroy(&e);
  free(v);
}

/* ---- queries, aggregates and gathers -------------------------------------------- */

/* A table in one encoding: v (the values under test, with nulls) and k (a
 * sorted key) in the encoding under test, o (random) and k2 (a random 2-bit
 * key) always FOR, so that expressions mix FOR and DELTA columns. */
typedef struct table {
  ps_column *v, *k, *o, *k2;
} table;

/* The table of the plain columns in encoding enc; zv, zo: v's and o's
 * zone maps (NULL: the encoder's). */
static int table_make(ps_context *ctx, table *t, const ps_plain p[4], int enc, const ps_zone_map *zv,
                      const ps_zone_map *zo) {
  t->v = make_col_zones(ctx, &p[0], enc, zv);
  t->k = make_col(ctx, &p[1], enc);
  t->o = make_col_zones(ctx, &p[2], PS_ENCODING_FOR, zo);
  t->k2 = make_col(ctx, &p[3], PS_ENCODING_FOR);
  return t->v && t->k && t->o && t->k2;
}

static void table_free(table *t) {
  ps_column_destroy(t->v), ps_column_destroy(t->k), ps_column_destroy(t->o), ps_column_destroy(t->k2);
  memset(t, 0, sizeof *t);
}

/* A growing text: what a query, an aggregate or a gather returned. */
typedef struct text {
  char *s;
  size_t len, cap;
} text;

static void put(text *t, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void put(text *t, const char *fmt, ...) {
  for (;;) {
    va_list ap;
    va_start(ap, fmt);
    const int n = vsnprintf(t->s ? t->s + t->len : NULL, t->s ? t->cap - t->len : 0, fmt, ap);
    va_end(ap);
    if (n < 0) return;
    if (t->s && (size_t)n < t->cap - t->len) {
      t->len += (size_t)n;
      return;
    }
    t->cap = 2 * (t->cap + (size_t)n + 64);
    t->s = realloc(t->s, t->cap);
    if (!t->s) abort();
  }
}

static void put_datum(text *t, const ps_datum *d) {
  char buf[PS_DATUM_TEXT_SIZE];
  put(t, " %s", ps_datum_format(d, buf, sizeof buf) == PS_OK ? buf : "?");
}

static ps_value *val(ps_context *ctx, ps_column *c) {
  ps_value *v = NULL;
  CHECK_OK(ctx, ps_value_column(ctx, c, &v));
  return v;
}

enum { QUERIES = 4 };

/* Query q over a table as text: every group's keys and values, or the
 * status. q 0: every aggregate of v over every row; 1: WHERE over v and o
 * (DELTA and FOR), GROUP BY k; 2: a WHERE with OR and IS NULL, GROUP BY k
 * and k2, values mixing the encodings; 3: a WHERE over o alone (FOR: its
 * zone maps alone decide which rows run), GROUP BY k. */
static void run_query(ps_context *ctx, const table *t, int q, uint64_t lit_v, uint64_t lit_o, uint64_t n, text *out) {
  ps_expr *w = NULL, *a = NULL, *b = NULL;
  ps_value *vals[8] = {0};
  ps_agg aggs[12];
  uint32_t na = 0;
  ps_query_desc d;
  ps_query_desc_init(&d);
  d.rows = n;
  ps_status st = PS_OK;
  if (q == 1) {
    st = ps_expr_compare(ctx, t->v, PS_GE, ps_lit_uint(lit_v), &a);
    if (st == PS_OK) st = ps_expr_compare(ctx, t->o, PS_LT, ps_lit_uint(lit_o), &b);
    if (st == PS_OK) st = ps_expr_and(ctx, a, b, &w), a = b = NULL;
    d.n_keys = 1;
    d.keys[0] = t->k;
  } else if (q == 2) {
    st = ps_expr_compare(ctx, t->v, PS_LE, ps_lit_uint(lit_v), &a);
    if (st == PS_OK) st = ps_expr_is_null(ctx, t->v, 0, &b);
    if (st == PS_OK) st = ps_expr_or(ctx, a, b, &w), a = b = NULL;
    d.n_keys = 2;
    d.keys[0] = t->k;
    d.keys[1] = t->k2;
  } else if (q == 3) {
    st = ps_expr_compare(ctx, t->o, PS_LT, ps_lit_uint(lit_o), &w);
    d.n_keys = 1;
    d.keys[0] = t->k;
  }
  d.where = w;
  aggs[na++] = (ps_agg){PS_AGG_COUNT_STAR, NULL};
  aggs[na++] = (ps_agg){PS_AGG_COUNT, vals[0] = val(ctx, t->v)};
  aggs[na++] = (ps_agg){PS_AGG_SUM, vals[1] = val(ctx, t->v)};
  aggs[na++] = (ps_agg){PS_AGG_MIN, vals[2] = val(ctx, t->v)};
  aggs[na++] = (ps_agg){PS_AGG_MAX, vals[3] = val(ctx, t->v)};
  aggs[na++] = (ps_agg){PS_AGG_AVG, vals[4] = val(ctx, t->v)};
  if (q == 2) {
    ps_value *x = NULL;
    if (CHECK_OK(ctx, ps_value_arith(ctx, PS_ADD, val(ctx, t->v), val(ctx, t->k), &x)))
      aggs[na++] = (ps_agg){PS_AGG_SUM, vals[5] = x};
    aggs[na++] = (ps_agg){PS_AGG_MIN, vals[6] = val(ctx, t->k)};
    aggs[na++] = (ps_agg){PS_AGG_MAX, vals[7] = val(ctx, t->o)};
  }
  d.aggs = aggs;
  d.n_aggs = na;
  ps_query *query = NULL;
  ps_query_result *res = NULL;
  if (st == PS_OK) st = ps_query_create(ctx, &d, &query);
  if (st == PS_OK) st = ps_query_run(ctx, query, &res);
  put(out, "query %d: %s\n", q, ps_status_name(st));
  for (uint64_t g = 0; st == PS_OK && g < ps_query_result_groups(res); g++) {
    ps_datum x;
    for (uint32_t k = 0; k < d.n_keys; k++)
      if (ps_query_result_key(res, g, k, &x) == PS_OK) put_datum(out, &x);
    put(out, " |");
    for (uint32_t i = 0; i < na; i++) {
      const ps_status vs = ps_query_result_value(res, g, i, &x);
      if (vs == PS_OK)
        put_datum(out, &x);
      else
        put(out, " %s", ps_status_name(vs));
    }
    put(out, "\n");
  }
  ps_query_result_destroy(res);
  ps_query_destroy(query);
  ps_expr_destroy(w), ps_expr_destroy(a), ps_expr_destroy(b);
  for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) ps_value_destroy(vals[i]);
}

static void put_aggregates(text *out, ps_status st, const ps_aggregates *a) {
  put(out, "aggregate: %s", ps_status_name(st));
  if (st == PS_OK)
    put(out, " count %llu has %d type %d sum %llx:%llx fits %d %lld %a min %llx max %llx scale %u",
        (unsigned long long)a->count, a->has_value, (int)a->type, (unsigned long long)a->sum_hi,
        (unsigned long long)a->sum_lo, a->sum_fits_int64, (long long)a->sum_int64, a->sum_double,
        (unsigned long long)a->min.u, (unsigned long long)a->max.u, a->scale);
  put(out, "\n");
}

/* ps_aggregate of col over every row and over the rows of sel (a host
 * bitmap of n rows), and the gathers of ids (64-bit; also as 32-bit ids). */
static void run_select(ps_context *ctx, ps_column *col, const uint8_t *sel, const uint64_t *ids, uint64_t nids,
                       uint64_t n, text *out) {
  ps_aggregates a;
  memset(&a, 0, sizeof a);
  put_aggregates(out, ps_aggregate(ctx, col, NULL, 0, &a), &a);
  const uint64_t bytes = (n + 31) / 32 * 4;
  ps_buffer *buf = NULL;
  ps_status st = ps_buffer_create(ctx, bytes, &buf);
  uint8_t *padded = th_calloc(bytes, 1);
  memcpy(padded, sel, (n + 7) / 8);
  if (st == PS_OK) st = ps_buffer_write(ctx, buf, 0, padded, bytes);
  memset(&a, 0, sizeof a);
  if (st == PS_OK) st = ps_aggregate(ctx, col, buf, 0, &a);
  put_aggregates(out, st, &a);
  ps_buffer_destroy(buf);
  free(padded);
  uint64_t *values = th_calloc(nids + 1, 8);
  uint8_t *valid = th_calloc(nids / 8 + 1, 1);
  uint32_t *ids32 = th_calloc(nids + 1, 4);
  for (uint64_t i = 0; i < nids; i++) ids32[i] = (uint32_t)ids[i];
  for (int wide = 0; wide < 2; wide++) {
    memset(values, 0, (nids + 1) * 8), memset(valid, 0, nids / 8 + 1);
    st = wide ? ps_gather_values(ctx, col, ids, PS_INDEX_UINT64, nids, values, valid)
              : ps_gather_values(ctx, col, ids32, PS_INDEX_UINT32, nids, values, valid);
    put(out, "gather %d: %s", wide, ps_status_name(st));
    for (uint64_t i = 0; st == PS_OK && i < nids; i++)
      put(out, " %s%llx", (valid[i / 8] >> (i % 8)) & 1 ? "" : "null:", (unsigned long long)values[i]);
    put(out, "\n");
  }
  free(values), free(valid), free(ids32);
}

/* Everything a table gives: the queries, and ps_aggregate and gathers of v
 * and k over the selection of q1's WHERE and random ids. */
static void run_reads(ps_context *ctx, const table *t, const uint8_t *sel, const uint64_t *ids, uint64_t nids,
                      uint64_t lit_v, uint64_t lit_o, uint64_t n, text *out) {
  for (int q = 0; q < QUERIES; q++) run_query(ctx, t, q, lit_v, lit_o, n, out);
  run_select(ctx, t->v, sel, ids, nids, n, out);
  run_select(ctx, t->k, sel, ids, nids, n, out);
}

static void compare_text(const char *label, const text *got, const text *want) {
  if (CHECKF(got->len == want->len && memcmp(got->s, want->s, got->len) == 0, "%s: DELTA and FOR differ", label))
    return;
  /* the first line that differs, to read the failure by */
  size_t i = 0, line = 0;
  while (i < got->len && i < want->len && got->s[i] == want->s[i]) i++;
  for (size_t k = 0; k < i; k++)
    if (got->s[k] == '\n') line = k + 1;
  printf("  DELTA: %.200s\n  FOR:   %.200s\n", got->s + line, want->s + line);
}

/* Zone maps of 512-row blocks of the codes of n values (M: the smallest
 * valid one): a block size that is not a multiple of a DELTA block. */
typedef struct zones512 {
  ps_zone_map map;
  uint64_t *min, *max;
  uint8_t *flags;
} zones512;

static void zones_make(zones512 *z, const uint64_t *v, const uint8_t *valid, uint64_t n) {
  const uint32_t rows = 512;
  const uint64_t blocks = (n + rows - 1) / rows;
  uint64_t m = UINT64_MAX;
  for (uint64_t i = 0; i < n; i++)
    if ((!valid || ((valid[i / 8] >> (i % 8)) & 1)) && v[i] < m) m = v[i];
  z->min = th_calloc(blocks + 1, 8), z->max = th_calloc(blocks + 1, 8), z->flags = th_calloc(blocks + 1, 1);
  for (uint64_t b = 0; b < blocks; b++) {
    uint64_t lo = UINT64_MAX, hi = 0, nulls = 0, rows_b = 0;
    for (uint64_t i = b * rows; i < n && i < (b + 1) * rows; i++, rows_b++) {
      if (valid && !((valid[i / 8] >> (i % 8)) & 1)) {
        nulls++;
        continue;
      }
      const uint64_t c = v[i] - m;
      lo = c < lo ? c : lo, hi = c > hi ? c : hi;
    }
    z->flags[b] = (uint8_t)((nulls ? PS_ZONE_HAS_NULLS : 0) | (nulls == rows_b ? PS_ZONE_ALL_NULL : 0));
    z->min[b] = nulls == rows_b ? 0 : lo, z->max[b] = nulls == rows_b ? 0 : hi;
  }
  memset(&z->map, 0, sizeof z->map);
  z->map.struct_size = sizeof z->map;
  z->map.block_rows = rows;
  z->map.blocks = blocks;
  z->map.min = z->min, z->map.max = z->max, z->map.flags = z->flags;
}

/* Queries, aggregates and gathers of DELTA columns against their FOR twins,
 * here and on the reference backend. `cases` random tables; with zones512,
 * v and o carry 512-row zone maps. */
static void reads(ps_context *ctx, ps_context *ref, th_rng *r, unsigned cases, int with_zones) {
  static const uint64_t NS[] = {1, 33, 1023, 1025, 2080, 3100, 5000};
  static const int NULLS[] = {0, 10, 90};
  for (unsigned c = 0; c < cases; c++) {
    const uint32_t w = (uint32_t)th_below(r, 65), kw = (uint32_t)th_below(r, 7), ow = 1 + (uint32_t)th_below(r, 20);
    const uint64_t n = with_zones ? 5000 : TH_PICK(r, NS);
    const int pattern = with_zones ? SORTED : (int)th_below(r, PATTERNS);
    const int nulls = TH_PICK(r, NULLS);
    th_case("reads: width %u, %s, n %llu, %d%% nulls, key width %u%s", w, PATTERN_NAMES[pattern], (unsigned long long)n,
            nulls, kw, with_zones ? ", 512-row zone maps" : "");
    uint64_t *v = th_malloc(n * 8), *k = th_malloc(n * 8), *o = th_malloc(n * 8), *k2 = th_malloc(n * 8);
    uint8_t *valid = nulls ? th_malloc(n / 8 + 1) : NULL;
    make_values(r, pattern, w, n, v);
    make_values(r, SORTED, kw, n, k);
    make_values(r, with_zones ? SORTED : RANDOM, ow, n, o);
    make_values(r, RANDOM, 2, n, k2);
    if (valid)
      for (uint64_t i = 0; i < n; i++) {
        if (th_chance(r, (unsigned)nulls))
          valid[i / 8] &= (uint8_t) ~(1u << (i % 8));
        else
          valid[i / 8] |= (uint8_t)(1u << (i % 8));
      }
    zones512 zv, zo;
    memset(&zv, 0, sizeof zv), memset(&zo, 0, sizeof zo);
    if (with_zones) zones_make(&zv, v, valid, n), zones_make(&zo, o, NULL, n);
    const ps_zone_map *mv = with_zones ? &zv.map : NULL, *mo = with_zones ? &zo.map : NULL;
    const ps_plain p[4] = {{PS_TYPE_UINT64, v, n, valid},
                           {PS_TYPE_UINT64, k, n, NULL},
                           {PS_TYPE_UINT64, o, n, NULL},
                           {PS_TYPE_UINT64, k2, n, NULL}};
    const uint64_t lit_v = v[th_below(r, n)], lit_o = o[th_below(r, n)];
    /* the selection: v >= lit_v AND o < lit_o, from the reference's FOR
     * columns; ids: the selection's, then random ones */
    uint8_t *sel = th_calloc(n / 8 + 1, 1);
    for (uint64_t i = 0; i < n; i++)
      if ((!valid || ((valid[i / 8] >> (i % 8)) & 1)) && v[i] >= lit_v && o[i] < lit_o)
        sel[i / 8] |= (uint8_t)(1u << (i % 8));
    const uint64_t nrand = 1 + th_below(r, 200);
    uint64_t *ids = th_malloc((n + nrand) * 8), nids = 0;
    for (uint64_t i = 0; i < n; i++)
      if ((sel[i / 8] >> (i % 8)) & 1) ids[nids++] = i;
    for (uint64_t i = 0; i < nrand; i++) ids[nids++] = th_below(r, n);
    table tf, td, rf;
    memset(&tf, 0, sizeof tf), memset(&td, 0, sizeof td), memset(&rf, 0, sizeof rf);
    const int ok = table_make(ctx, &tf, p, PS_ENCODING_FOR, mv, mo) &
                   table_make(ctx, &td, p, PS_ENCODING_DELTA, mv, mo) &
                   (!ref || table_make(ref, &rf, p, PS_ENCODING_FOR, mv, mo));
    if (ok) {
      text got = {0}, want = {0}, oracle = {0};
      run_reads(ctx, &td, sel, ids, nids, lit_v, lit_o, n, &got);
      run_reads(ctx, &tf, sel, ids, nids, lit_v, lit_o, n, &want);
      compare_text("this backend", &got, &want);
      if (ref) {
        run_reads(ref, &rf, sel, ids, nids, lit_v, lit_o, n, &oracle);
        compare_text("against the reference backend's FOR", &got, &oracle);
      }
      CHECKF(strstr(got.s, "PS_OK") != NULL && strstr(got.s, "PS_ERR") == NULL, "a read failed:\n%.600s", got.s);
      free(got.s), free(want.s), free(oracle.s);
    }
    table_free(&tf), table_free(&td), table_free(&rf);
    free(zv.min), free(zv.max), free(zv.flags), free(zo.min), free(zo.max), free(zo.flags);
    free(v), free(k), free(o), free(k2), free(valid), free(sel), free(ids);
  }
}

int main(int argc, char **argv) {
  th_init(argc, argv, "delta");
  ps_context *ref = th_is_reference() ? NULL : th_reference_context(0);
  encoder(&th.rng);
  shared_readers(&th.rng);
  /* Every width through the generic kernels (a seeded sample of them at the
   * CI size: the FOR twins build a kernel per width); chunked contexts and
   * the shape-specialized kernels (an OpenCL build per predicate) on a few.
   * The reads (queries, aggregates, gathers) likewise, the queries
   * specialized in one context (an OpenCL build per query shape: a few). */
  static const uint64_t CHUNKS[] = {0, 64, 1056};
  static const char *const JIT[] = {"opencl_jit=0", "opencl_jit=1", "opencl_jit=1,query_specialize=1"};
  for (size_t c = 0; c < sizeof CHUNKS / sizeof CHUNKS[0]; c++)
    for (size_t j = 0; j < (c == 0 ? 3u : 2u); j++) {
      th_options_reset();
      th_test_options(JIT[j]);
      ps_context *ctx = th_context(CHUNKS[c]);
      th_case("max_chunk_rows %llu, %s", (unsigned long long)CHUNKS[c], JIT[j]);
      if (j < 2) sweep(ctx, ref, &th.rng, !th.quick && c == 0 && j == 0, j ? 2 : th.quick ? 6 : 12);
      reads(ctx, ref, &th.rng, j ? 1 : th.quick ? 2 : 6, 0);
      if (j < 2) reads(ctx, ref, &th.rng, 1, 1);
      if (c == 0 && j == 0) malformed(ctx);
      ps_context_destroy(ctx);
    }
  ps_context_destroy(ref);
  return th_finish();
}
