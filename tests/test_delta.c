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
 * the field; queries, aggregates and gathers of DELTA columns refused.
 */
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

static ps_column *make_col(ps_context *ctx, const ps_plain *p, int enc) {
  ps_encoded e;
  char err[256];
  if (!CHECKF(ps_encode(p, enc, 0, 0, 0, NULL, err, sizeof err, &e) == PS_OK, "encode: %s", err)) return NULL;
  CHECKF((int)e.desc.encoding == enc, "encoding %u, asked for %d", e.desc.encoding, enc);
  ps_column *c = NULL;
  CHECK_OK(ctx, ps_column_create_for(ctx, &e.desc, &c));
  ps_encoded_destroy(&e);
  return c;
}

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

  th_case("refused: aggregates of a DELTA column");
  d = e.desc;
  if (CHECK_OK(ctx, ps_column_create_for(ctx, &d, &c))) {
    ps_aggregates agg;
    CHECK_STATUS(ctx, ps_aggregate(ctx, c, NULL, 0, &agg), PS_ERR_UNSUPPORTED);
    ps_column_destroy(c);
  }
  free(copy);
  ps_encoded_destroy(&e);
  free(v);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "delta");
  ps_context *ref = th_is_reference() ? NULL : th_reference_context(0);
  encoder(&th.rng);
  shared_readers(&th.rng);
  /* Every width through the generic kernels (a seeded sample of them at the
   * CI size: the FOR twins build a kernel per width); chunked contexts and
   * the shape-specialized kernels (an OpenCL build per predicate) on a few. */
  static const uint64_t CHUNKS[] = {0, 64, 1056};
  static const char *const JIT[] = {"opencl_jit=0", "opencl_jit=1"};
  for (size_t c = 0; c < sizeof CHUNKS / sizeof CHUNKS[0]; c++)
    for (size_t j = 0; j < 2; j++) {
      th_options_reset();
      th_test_options(JIT[j]);
      ps_context *ctx = th_context(CHUNKS[c]);
      th_case("max_chunk_rows %llu, %s", (unsigned long long)CHUNKS[c], JIT[j]);
      sweep(ctx, ref, &th.rng, !th.quick && c == 0 && j == 0, j ? 2 : th.quick ? 6 : 12);
      if (c == 0 && j == 0) malformed(ctx);
      ps_context_destroy(ctx);
    }
  ps_context_destroy(ref);
  return th_finish();
}
