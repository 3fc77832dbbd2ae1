/*
 * filter_tree: AND/OR/NOT trees of comparisons and BETWEENs on integer
 * columns of 1..32 bits without nulls, the programs the CUDA backend's
 * range-tree fast path takes (kernels_cuda/tree.cu: up to 4 columns, 16
 * instructions, stack depth 4, every w-bit code valid, 16-byte aligned
 * chunks), compared with the oracle and the reference backend bit for bit
 * (runner.h):
 *  - sizes around the kernel's 1024-row chunks and the streams' ends
 *    (1..1025, 4113, 100003, 2^20 + 5);
 *  - contexts with chunks of 2^31 (the default), 4096 rows (every chunk's
 *    data 16-byte aligned) and 96 rows (a chunk's data 16-byte aligned only
 *    when 12 * w * k is a multiple of 16: the others take the general kernel);
 *  - the same column in several leaves, widths mixed, the same width twice;
 *  - trees past the fast path's limits (5 columns, height 6, a column with
 *    nulls, narrow types whose code limit is below 2^w - 1): the general
 *    kernel, the same bits.
 */
#include <stdlib.h>

#include "gen.h"

static const ps_type TYPES[] = {PS_TYPE_UINT64, PS_TYPE_INT64, PS_TYPE_UINT64, PS_TYPE_INT64, PS_TYPE_UINT32,
                                PS_TYPE_INT32,  PS_TYPE_INT16, PS_TYPE_UINT8};

static uint64_t random_n(th_rng *r) {
  static const uint64_t sizes[] = {1, 31, 32, 33, 1023, 1024, 1025, 2047, 4113, 4113, 100003, 100003};
  if (th_chance(r, 2)) return ((uint64_t)1 << 20) + 5;
  return TH_PICK(r, sizes);
}

static onode *leaf(th_rng *r, trun *tr, int col) {
  tcol *c = tr->cols[col];
  if (th_chance(r, 25)) {
    ps_literal lo = gen_num_literal(r, c), hi = gen_num_literal(r, c);
    return on_between(col, lo, hi);
  }
  return on_cmp(col, (ps_cmp)th_below(r, 6), gen_num_literal(r, c));
}

static onode *tree(th_rng *r, trun *tr, const int *cols, int ncols, int height) {
  if (height <= 1 || th_chance(r, 20)) return leaf(r, tr, cols[th_below(r, (uint64_t)ncols)]);
  const unsigned k = (unsigned)th_below(r, 10);
  if (k == 0) return on_not(tree(r, tr, cols, ncols, height - 1));
  onode *a = tree(r, tr, cols, ncols, height - 1), *b = tree(r, tr, cols, ncols, height - 1);
  return k < 6 ? on_and(a, b) : on_or(a, b);
}

/* One configuration: 1..5 fresh columns of n rows, several trees. */
static void run_config(th_rng *r, trun *tr, unsigned k, uint64_t chunk_rows) {
  const uint64_t n = th_chunked_rows(random_n(r), chunk_rows);
  const int past_limits = k % 5 == 4; /* a fifth of the configurations: some column or tree the fast path refuses */
  const int ncols = past_limits && th_chance(r, 50) ? 5 : 1 + (int)th_below(r, 4);
  int cols[5];
  th_case("config %u n=%llu cols=%d", k, (unsigned long long)n, ncols);
  for (int i = 0; i < ncols; i++) {
    uint32_t w = 1 + (uint32_t)th_below(r, 32);
    if (i > 0 && th_chance(r, 20)) w = tr->cols[cols[0]]->width; /* the same width twice */
    ps_type t = TYPES[th_below(r, past_limits ? 8 : 4)];
    const int nulls = past_limits && i == 0 && th_chance(r, 50) ? TN_FEW : TN_NO_BITMAP;
    cols[i] = tr_add(tr, tcol_random_for(r, t, n, w, nulls));
    if (cols[i] < 0) return;
  }
  for (int j = 0; j < 3; j++) {
    const int height = past_limits && j == 2 ? 6 : 2 + (int)th_below(r, 3);
    onode *t = tree(r, tr, cols, ncols, height);
    tr_check(tr, t, "range tree");
    on_free(t);
  }
}

int main(int argc, char **argv) {
  th_init(argc, argv, "filter_tree");
  static const uint64_t chunk_rows[] = {0, 4096, 96};
  ps_context *ref = th_is_reference() ? NULL : th_reference_context(0);
  for (unsigned c = 0; c < sizeof chunk_rows / sizeof chunk_rows[0]; c++) {
    ps_context *ctx = th_context(chunk_rows[c]);
    trun tr;
    tr_init(&tr, ctx, ref);
    /* The sanitizer size keeps k = 4, the first configuration past the fast
     * path's limits, on every context. */
    const unsigned configs = th.quick >= 2 ? (c == 0 ? 10u : 5u) : (c == 0 ? 120u : 30u) * th.scale;
    for (unsigned k = 0; k < configs; k++) {
      /* a private RNG per configuration: a failure reproduces with the seed alone */
      th_rng r;
      th_rng_seed(&r, th.seed ^ ((uint64_t)c << 40) ^ (uint64_t)(k + 1) * 0x9E3779B97F4A7C15ull);
      th_case("chunk rows %llu", (unsigned long long)chunk_rows[c]);
      run_config(&r, &tr, k, chunk_rows[c]);
      tr_clear(&tr);
    }
    ps_context_destroy(ctx);
  }
  ps_context_destroy(ref);
  return th_finish();
}
