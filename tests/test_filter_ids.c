/*
 * filter_ids: ps_filter_row_ids_device, the filter and its row ids in one
 * call (fused into one pass on backends that can), checked against the
 * oracle's bitmap of the same predicate on the test's own columns:
 *  - one comparison / BETWEEN / NOT BETWEEN at every width 0..64 (the CUDA
 *    backend fuses widths 1..32), with and without nulls, uint32 and uint64
 *    ids, at offsets into a guarded buffer; n from 0 to 2^20 + 99 (many
 *    tiles of the fused kernel, a partial last word), selectivity 0..100%;
 *  - trees, IN lists and LIKE on dictionary columns (not fused: the core's
 *    bitmap-then-ids path);
 *  - capacity: exact, larger, one short (PS_ERR_BUFFER_TOO_SMALL with the
 *    full count, nothing written past the capacity), zero, ids NULL (count);
 *  - chunked contexts (max_chunk_rows 64, 96, 4096: ids cross chunks);
 *  - corrupt codes (PS_ERR_CORRUPT_DATA with a message; none under nulls);
 *  - bad arguments (NULL count, unaligned offset, uint32 past 2^32 rows).
 */
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "oracle.h"

#define GUARD 0xCD
#define NCTX 4
static const uint64_t chunk_rows[NCTX] = {0, 64, 96, 4096}; /* 0 = backend default */
static ps_context *ctxs[NCTX];

static unsigned long long ull(uint64_t v) { return (unsigned long long)v; }

/* The expected ids: the set bits of the oracle's bitmap. */
static uint64_t *want_ids(const uint8_t *bits, uint64_t n, uint64_t *count) {
  uint64_t c = 0;
  for (uint64_t i = 0; i < n; i++) c += (bits[i / 8] >> (i % 8)) & 1;
  uint64_t *w = th_malloc((size_t)(c ? c : 1) * sizeof *w);
  c = 0;
  for (uint64_t i = 0; i < n; i++)
    if ((bits[i / 8] >> (i % 8)) & 1) w[c++] = i;
  *count = c;
  return w;
}

/* Runs the expression with one capacity and compares everything. */
static void run_one(ps_context *ctx, const ps_expr *e, uint32_t isz, const uint64_t *want, uint64_t wc, uint64_t cap,
                    const char *label) {
  uint64_t off = isz * th_below(&th.rng, 4);
  uint64_t size = off + cap * isz + 64;
  ps_buffer *b = NULL;
  if (!CHECK_OK(ctx, ps_buffer_create(ctx, size, &b))) return;
  uint8_t *host = th_malloc((size_t)size);
  memset(host, GUARD, (size_t)size);
  CHECK_OK(ctx, ps_buffer_write(ctx, b, 0, host, size));
  uint64_t c = 0xdead;
  ps_status st = ps_filter_row_ids_device(ctx, e, (ps_index_type)isz, b, off, cap, &c);
  char msg[256];
  snprintf(msg, sizeof msg, "%s", ps_context_last_error(ctx));
  CHECK_OK(ctx, ps_buffer_read(ctx, b, 0, host, size));
  if (wc > cap) {
    CHECKF(st == PS_ERR_BUFFER_TOO_SMALL, "%s: %llu selected, capacity %llu: %s, expected PS_ERR_BUFFER_TOO_SMALL",
           label, ull(wc), ull(cap), ps_status_name(st));
    CHECKF(c == wc, "%s: capacity %llu too small: *count %llu, expected %llu", label, ull(cap), ull(c), ull(wc));
    CHECKF(msg[0] != 0, "%s: no message for a too small buffer", label);
  } else if (CHECKF(st == PS_OK, "%s: uint%u ids, capacity %llu: %s: %s", label, isz * 8, ull(cap), ps_status_name(st),
                    msg)) {
    CHECKF(c == wc, "%s: count %llu, expected %llu", label, ull(c), ull(wc));
    for (uint64_t i = 0; i < wc && i < c; i++) {
      uint64_t got = th_row_id(host + off, isz, i);
      if (!CHECKF(got == want[i], "%s: uint%u id[%llu] = %llu, expected %llu (of %llu)", label, isz * 8, ull(i),
                  ull(got), ull(want[i]), ull(wc)))
        break;
    }
  }
  /* Nothing before the offset or past the capacity (or past the ids) is touched. */
  uint64_t end = off + (wc < cap ? wc : cap) * isz;
  int clean = 1;
  for (uint64_t i = 0; i < size && clean; i++)
    if ((i < off || i >= end) && host[i] != GUARD) clean = 0;
  CHECKF(clean, "%s: bytes outside the %llu ids at offset %llu were written", label, ull(wc < cap ? wc : cap),
         ull(off));
  free(host);
  ps_buffer_destroy(b);
}

/* Every capacity case and the count-only call for one predicate. */
static void check_expr(ps_context *ctx, const ps_expr *e, tcol *const *cols, const onode *t, uint64_t n,
                       const char *label) {
  uint8_t *bits = th_calloc((size_t)(n + 7) / 8 + 1, 1);
  oracle_filter(cols, t, n, bits);
  uint64_t wc = 0;
  uint64_t *want = want_ids(bits, n, &wc);
  uint32_t isz = th_chance(&th.rng, 50) ? 4 : 8;
  run_one(ctx, e, isz, want, wc, wc, label);                                /* exact */
  if (th_chance(&th.rng, 50)) run_one(ctx, e, isz, want, wc, n + 5, label); /* every row fits */
  if (wc) run_one(ctx, e, 12 - isz, want, wc, wc - 1, label);               /* one short */
  if (wc && th_chance(&th.rng, 30)) run_one(ctx, e, isz, want, wc, 0, label);
  uint64_t c = 0xdead;
  if (CHECK_OK(ctx, ps_filter_row_ids_device(ctx, e, (ps_index_type)isz, NULL, 0, 0, &c)))
    CHECKF(c == wc, "%s: count only: %llu, expected %llu", label, ull(c), ull(wc));
  free(want);
  free(bits);
}

/* One column, one predicate tree over it (or a tree over several). */
static void check_tree(ps_context *ctx, tcol **cols, size_t ncols, onode *t, const char *label) {
  ps_column *h[4] = {NULL, NULL, NULL, NULL};
  int ok = 1;
  for (size_t i = 0; i < ncols; i++) {
    ps_status st = tcol_create(ctx, cols[i], &h[i]);
    ok &= CHECKF(st == PS_OK, "%s: creating a column: %s: %s", label, ps_status_name(st), ps_context_last_error(ctx));
  }
  ps_expr *e = NULL;
  if (ok) {
    ps_status st = on_build(ctx, t, h, &e);
    ok = CHECKF(st == PS_OK, "%s: building: %s: %s", label, ps_status_name(st), ps_context_last_error(ctx));
  }
  if (ok) check_expr(ctx, e, cols, t, cols[0]->n, label);
  ps_expr_destroy(e);
  for (size_t i = 0; i < ncols; i++) ps_column_destroy(h[i]);
}

static const ps_type int_types[] = {PS_TYPE_INT64, PS_TYPE_UINT64, PS_TYPE_INT32, PS_TYPE_UINT32};

#define MANY_TILES_N (((uint64_t)1 << 20) + 99) /* thousands of result words, many tiles */

static uint64_t pick_n(void) {
  static const uint64_t ns[] = {0, 1, 31, 32, 33, 1000, 4133, 65536 + 17, 100003};
  /* The sanitizer size takes the many-tile size at two widths (widths()), not at random. */
  if (th.quick < 2 && th_chance(&th.rng, 8)) return MANY_TILES_N;
  return TH_PICK(&th.rng, ns);
}

/* One range leaf at every width: what the CUDA backend fuses. */
static void widths(void) {
  const uint32_t third = (uint32_t)th_below(&th.rng, 3);
  for (int ci = 0; ci < NCTX; ci++) {
    ps_context *ctx = ctxs[ci];
    for (uint32_t w = 0; w <= 64; w++) {
      /* At the sanitizer size the unchunked context alone takes every width
       * (each its own fused kernel); the chunked ones, where ids cross chunk
       * edges the same way at any width, a sample of widths. At CI's size
       * each of the three chunked contexts takes the edge widths and a third
       * of the others, a different third each, so that together they still
       * cover every width in every run. */
      const int edge = w == 0 || w == 1 || w == 17 || w == 32 || w == 33 || w == 64;
      if (ci && th.quick >= 2 && !edge) continue;
      if (ci && th.quick == 1 && !edge && (w + (uint32_t)ci + third) % 3 != 0) continue;
      int reps = ci == 0 ? (int)th_reps(2 * th.scale) : 1;
      for (int k = 0; k < reps; k++) {
        uint64_t n = th.quick >= 2 && ci == 0 && (w == 13 || w == 32) ? MANY_TILES_N : pick_n();
        if (ci && n > 5000) n = 4133; /* thousands of chunks per call otherwise */
        n = th_chunked_rows(n, chunk_rows[ci]);
        ps_type type = w > 32 ? TH_PICK(&th.rng, int_types) : (th_chance(&th.rng, 50) ? PS_TYPE_UINT32 : PS_TYPE_INT64);
        int nulls = (int)th_below(&th.rng, TN_COUNT);
        tcol *c = tcol_random_for(&th.rng, type, n, w, nulls);
        onode *t;
        int shape = (int)th_below(&th.rng, 4);
        if (shape == 0) {
          static const ps_cmp ops[] = {PS_LT, PS_LE, PS_GT, PS_GE, PS_EQ, PS_NE};
          t = on_cmp(0, TH_PICK(&th.rng, ops), gen_num_literal(&th.rng, c));
        } else if (shape == 1) {
          t = on_between(0, gen_num_literal(&th.rng, c), gen_num_literal(&th.rng, c));
        } else if (shape == 2) {
          t = on_not(on_between(0, gen_num_literal(&th.rng, c), gen_num_literal(&th.rng, c)));
        } else {
          t = on_cmp(0, PS_GE, gen_num_literal(&th.rng, c));
        }
        char d[128], label[256];
        snprintf(label, sizeof label, "chunk_rows=%llu w=%u %s shape %d", ull(chunk_rows[ci]), w,
                 tcol_describe(c, d, sizeof d), shape);
        th_case("%s", label);
        check_tree(ctx, &c, 1, t, label);
        on_free(t);
        tcol_free(c);
      }
    }
  }
  th_case("%s", "");
}

/* Random trees over a few columns, IN lists and LIKE: the unfused path. */
static void trees(void) {
  for (int ci = 0; ci < NCTX; ci++) {
    ps_context *ctx = ctxs[ci];
    /* Three at the sanitizer size: k % 3 picks a tree or a dictionary leaf. */
    const int reps = th.quick >= 2 ? 3 : 12 * (int)th.scale;
    for (int k = 0; k < reps; k++) {
      uint64_t n = ci ? th_chunked_rows(1000, chunk_rows[ci]) : pick_n();
      trun tr;
      tr_init(&tr, ctx, NULL);
      int cols[3];
      for (int i = 0; i < 3; i++) {
        tcol *c = i == 2 ? tcol_random_dict(&th.rng, n, 1 + (uint32_t)th_below(&th.rng, 20), 50,
                                            (int)th_below(&th.rng, 2), (int)th_below(&th.rng, TN_COUNT))
                         : tcol_random_for(&th.rng, TH_PICK(&th.rng, int_types), n, (uint32_t)th_below(&th.rng, 65),
                                           (int)th_below(&th.rng, TN_COUNT));
        cols[i] = tr_add(&tr, c);
      }
      if (cols[0] >= 0 && cols[1] >= 0 && cols[2] >= 0) {
        onode *t = k % 3 == 2 ? gen_leaf(&th.rng, &tr, cols[2], -1) : gen_tree(&th.rng, &tr, cols, 3, 3, 12);
        char label[128];
        snprintf(label, sizeof label, "chunk_rows=%llu tree %d n=%llu", ull(chunk_rows[ci]), k, ull(n));
        th_case("%s", label);
        ps_expr *e = NULL;
        ps_status st = on_build(ctx, t, tr.h, &e);
        if (CHECKF(st == PS_OK, "%s: building: %s: %s", label, ps_status_name(st), ps_context_last_error(ctx)))
          check_expr(ctx, e, tr.cols, t, n, label);
        ps_expr_destroy(e);
        on_free(t);
      }
      tr_clear(&tr);
    }
  }
  th_case("%s", "");
}

/* A uint8 column packed at 9 bits: codes above 255 are corrupt where the row
 * is valid (PS_ERR_CORRUPT_DATA), harmless under a null. Widths 9 and 20
 * (the fused kernel's code-limit check) and 40 (unfused). */
static void corrupt(void) {
  static const uint32_t ws[] = {9, 20, 40};
  for (int ci = 0; ci < 2; ci++) {
    ps_context *ctx = ctxs[ci];
    for (size_t wi = 0; wi < sizeof ws / sizeof ws[0]; wi++) {
      uint32_t w = ws[wi];
      uint64_t n = ci ? 1000 : 100003;
      uint64_t *codes = th_calloc((size_t)n, sizeof *codes);
      for (uint64_t i = 0; i < n; i++) codes[i] = th_below(&th.rng, 256);
      uint8_t *valid = th_malloc((size_t)(n + 7) / 8);
      memset(valid, 0xff, (size_t)(n + 7) / 8);
      uint64_t bad = n - 1 - th_below(&th.rng, n / 2);
      for (int under_null = 0; under_null < 2; under_null++) {
        codes[bad] = 300;
        if (under_null) valid[bad / 8] &= (uint8_t) ~(1u << (bad % 8));
        ps_reference m;
        m.u = 0;
        tcol *c = tcol_for(PS_TYPE_UINT8, n, w, 0, m, codes, valid, NULL);
        ps_column *h = NULL;
        ps_expr *e = NULL;
        char label[96];
        snprintf(label, sizeof label, "corrupt: chunk_rows=%llu w=%u row %llu%s", ull(chunk_rows[ci]), w, ull(bad),
                 under_null ? " (null)" : "");
        th_case("%s", label);
        if (CHECK_OK(ctx, tcol_create(ctx, c, &h)) &&
            CHECK_OK(ctx, ps_expr_compare(ctx, h, PS_LT, ps_lit_uint(100), &e))) {
          ps_buffer *b = NULL;
          if (CHECK_OK(ctx, ps_buffer_create(ctx, n * 8, &b))) {
            uint64_t cnt = 0;
            ps_status st = ps_filter_row_ids_device(ctx, e, PS_INDEX_UINT64, b, 0, n, &cnt);
            if (under_null) {
              CHECKF(st == PS_OK, "%s: %s: %s", label, ps_status_name(st), ps_context_last_error(ctx));
            } else {
              CHECKF(st == PS_ERR_CORRUPT_DATA, "%s: %s, expected PS_ERR_CORRUPT_DATA", label, ps_status_name(st));
              CHECKF(ps_context_last_error(ctx)[0] != 0, "%s: no message", label);
            }
            ps_buffer_destroy(b);
          }
        }
        ps_expr_destroy(e);
        ps_column_destroy(h);
        tcol_free(c);
      }
      free(codes);
      free(valid);
    }
  }
  th_case("%s", "");
}

static void bad_arguments(void) {
  ps_context *ctx = ctxs[0];
  th_case("bad arguments");
  uint64_t codes[40] = {0};
  ps_reference m;
  m.u = 0;
  tcol *c = tcol_for(PS_TYPE_UINT32, 40, 3, 0, m, codes, NULL, NULL);
  ps_column *h = NULL;
  ps_expr *e = NULL;
  ps_buffer *b = NULL;
  if (CHECK_OK(ctx, tcol_create(ctx, c, &h)) && CHECK_OK(ctx, ps_expr_compare(ctx, h, PS_LT, ps_lit_uint(1), &e)) &&
      CHECK_OK(ctx, ps_buffer_create(ctx, 400, &b))) {
    uint64_t cnt = 0;
    CHECK_STATUS(ctx, ps_filter_row_ids_device(ctx, e, PS_INDEX_UINT32, b, 0, 40, NULL), PS_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(ctx, ps_filter_row_ids_device(ctx, e, PS_INDEX_UINT32, b, 2, 40, &cnt), PS_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(ctx, ps_filter_row_ids_device(ctx, e, PS_INDEX_UINT64, b, 0, 51, &cnt), PS_ERR_BUFFER_TOO_SMALL);
    CHECK_STATUS(ctx, ps_filter_row_ids_device(ctx, e, (ps_index_type)2, b, 0, 40, &cnt), PS_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(ctx, ps_filter_row_ids_device(ctx, NULL, PS_INDEX_UINT32, b, 0, 40, &cnt), PS_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(ctx, ps_filter_row_ids_device(ctx, e, PS_INDEX_UINT32, b, 0, 40, &cnt), PS_OK);
    CHECKF(cnt == 40, "all 40 rows of zeros are < 1: %llu", ull(cnt));
  }
  ps_buffer_destroy(b);
  ps_expr_destroy(e);
  ps_column_destroy(h);
  tcol_free(c);
  th_case("%s", "");
}

int main(int argc, char **argv) {
  th_init(argc, argv, "filter_ids");
  for (int i = 0; i < NCTX; i++) ctxs[i] = th_context(chunk_rows[i]);
  widths();
  trees();
  corrupt();
  bad_arguments();
  for (int i = 0; i < NCTX; i++) ps_context_destroy(ctxs[i]);
  return th_finish();
}
