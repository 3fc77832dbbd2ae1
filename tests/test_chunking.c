/*
 * chunking: contexts created with small max_chunk_rows (1, 32, 33, 64, 96,
 * 100, 1000 — rounded down to multiples of 32, at least 32) give exactly the
 * results of the default chunking and of the oracle: bitmaps (every byte,
 * chunk edges included), counts, ps_filter_count and ps_filter_device, on
 * columns of widths that do and do not divide 32, with nulls, dictionaries
 * and column-vs-column comparisons.
 */
#include <stdlib.h>
#include <string.h>

#include "gen.h"

static const ps_type TYPES[] = {PS_TYPE_INT8,  PS_TYPE_INT16,  PS_TYPE_INT32,  PS_TYPE_INT64,   PS_TYPE_UINT8,
                                PS_TYPE_UINT16, PS_TYPE_UINT32, PS_TYPE_UINT64, PS_TYPE_FLOAT32, PS_TYPE_FLOAT64};
static const uint32_t WIDTHS[] = {0, 1, 3, 5, 7, 8, 13, 16, 31, 32, 33, 47, 63, 64};

/* ps_filter_device at a nonzero offset gives the host bitmap's bytes. */
static void check_device(trun *tr, const onode *t, const char *label) {
  int c0 = on_first_col(t);
  uint64_t n = tr->cols[c0]->n, nb = (n + 7) / 8;
  uint8_t *want = th_calloc(nb + 1, 1);
  uint64_t want_count = oracle_filter(tr->cols, t, n, want);
  ps_expr *e = NULL;
  ps_status st = on_build(tr->ctx, t, tr->h, &e);
  if (!CHECKF(st == PS_OK, "%s: build: %s", label, ps_status_name(st))) {
    free(want);
    return;
  }
  const uint64_t off = 8;
  ps_buffer *buf = NULL;
  if (CHECK_OK(tr->ctx, ps_buffer_create(tr->ctx, off + nb + 8, &buf))) {
    uint8_t *fill = th_malloc(off + nb + 8);
    memset(fill, 0xAB, off + nb + 8);
    CHECK_OK(tr->ctx, ps_buffer_write(tr->ctx, buf, 0, fill, off + nb + 8));
    uint64_t count = 0;
    if (CHECK_OK(tr->ctx, ps_filter_device(tr->ctx, e, buf, off, &count))) {
      uint8_t *got = th_malloc(off + nb + 8);
      CHECK_OK(tr->ctx, ps_buffer_read(tr->ctx, buf, 0, got, off + nb + 8));
      CHECKF(count == want_count, "%s: ps_filter_device count %llu, oracle %llu", label, (unsigned long long)count,
             (unsigned long long)want_count);
      CHECKF(memcmp(got + off, want, nb) == 0, "%s: ps_filter_device bitmap differs from the oracle", label);
      int guard = 1;
      for (uint64_t i = 0; i < off; i++) guard &= got[i] == 0xAB;
      for (uint64_t i = off + nb; i < off + nb + 8; i++) guard &= got[i] == 0xAB;
      CHECKF(guard, "%s: ps_filter_device wrote outside [offset, offset + ceil(n/8))", label);
      free(got);
    }
    free(fill);
    ps_buffer_destroy(buf);
  }
  ps_expr_destroy(e);
  free(want);
}

static void run(ps_context *chunked, ps_context *plain, uint64_t chunk, uint64_t n, th_rng *r) {
  trun tr;
  tr_init(&tr, chunked, plain);
  th_case("max_chunk_rows=%llu n=%llu", (unsigned long long)chunk, (unsigned long long)n);
  int cols[8];
  size_t nc = 0;
  for (int k = 0; k < 5; k++) {
    static const int nulls[] = {TN_NO_BITMAP, TN_FEW, TN_HALF, TN_MOST};
    cols[nc] = tr_add(&tr, tcol_random_for(r, TH_PICK(r, TYPES), n, TH_PICK(r, WIDTHS), TH_PICK(r, nulls)));
    if (cols[nc] >= 0) nc++;
  }
  int d = tr_add(&tr, tcol_random_dict(r, n, 3 + (uint32_t)th_below(r, 62), 20, th_chance(r, 50), TN_FEW));
  if (d >= 0) {
    cols[nc++] = d;
    int d2 = tr_add(&tr, tcol_random_dict_partner(r, tr.cols[d], th_chance(r, 50), TN_HALF));
    if (d2 >= 0) cols[nc++] = d2;
  }
  int p = tr_add(&tr, tcol_derived(r, tr.cols[cols[0]], TH_PICK(r, TYPES), TN_FEW));
  if (p >= 0) cols[nc++] = p;
  unsigned rounds = n > 10000 ? 2 : 6;
  for (unsigned k = 0; k < th_reps(rounds * th.scale); k++) {
    onode *leaf = gen_leaf(r, &tr, cols[th_below(r, nc)], -1);
    tr_check(&tr, leaf, "leaf");
    on_free(leaf);
    onode *t = gen_tree(r, &tr, cols, nc, 4, 30);
    tr_check(&tr, t, "tree");
    if (k == 0) check_device(&tr, t, "tree on the device");
    on_free(t);
  }
  /* column against column across chunk edges */
  if (p >= 0) {
    onode *t = on_cmpcol(cols[0], (ps_cmp)th_below(r, 6), p);
    tr_check(&tr, t, "compare columns");
    on_free(t);
  }
  tr_clear(&tr);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "chunking");
  ps_context *plain = th_context(0);
  static const uint64_t chunks[] = {1, 32, 33, 64, 96, 100, 1000};
  static const uint64_t sizes[] = {1000, 1001, 4133};
  for (size_t c = 0; c < sizeof chunks / sizeof chunks[0]; c++) {
    ps_context *chunked = th_context(chunks[c]);
    th_rng r;
    th_rng_seed(&r, th.seed + 1000003u * c);
    if (th.quick >= 2) {
      /* The sanitizer size: one table of a few chunks (the library rounds
       * max_chunk_rows down to a multiple of 32, at least 32). */
      uint64_t rows = chunks[c] < 32 ? 32 : chunks[c] / 32 * 32;
      run(chunked, plain, chunks[c], th_chunked_rows(4133, rows), &r);
    } else {
      for (size_t s = 0; s < sizeof sizes / sizeof sizes[0]; s++) run(chunked, plain, chunks[c], sizes[s], &r);
      if (chunks[c] >= 96) run(chunked, plain, chunks[c], 100003, &r);
    }
    ps_context_destroy(chunked);
  }
  ps_context_destroy(plain);
  return th_finish();
}
