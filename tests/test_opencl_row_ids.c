/*
 * opencl_row_ids: row ids of selections long enough to span several of the
 * OpenCL CPU kernel's runs (select.cl ps_count_runs / ps_write_runs: 2048
 * words = 65536 rows per work-item), compared with ids computed here from
 * the bits: uint32 and uint64; none, all, ~1%, ~50%, runs of dense words
 * (the 4-ids-at-a-time stores) next to sparse ones and to run edges, a single
 * row at each run edge, the last row; a bitmap at a 4-byte offset with set
 * bits past n; contexts with 65536 + 32 and 3 x 65536 row chunks (ids offset
 * by each chunk's first row). Registered for every backend; on OpenCL once
 * more with the internal option opencl_ids=groups (the GPU kernels) and =runs.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define RUN_ROWS 65536u

static unsigned long long ull(uint64_t v) { return (unsigned long long)v; }

enum { P_NONE, P_ALL, P_PCT1, P_HALF, P_BLOCKS, P_EDGES, P_LAST, P_COUNT };
static const char *const names[P_COUNT] = {"none", "all", "~1%", "~50%", "dense/sparse blocks", "run edges", "last"};

static int pattern_bit(int p, uint64_t i, uint64_t n) {
  switch (p) {
    case P_ALL: return 1;
    case P_PCT1: return th_chance(&th.rng, 1);
    case P_HALF: return th_chance(&th.rng, 50);
    case P_BLOCKS: /* 96-row blocks alternating full, ~1 in 8 and empty, shifted across run edges */
      switch ((i / 96) % 3) {
        case 0: return 1;
        case 1: return th_chance(&th.rng, 12);
        default: return 0;
      }
    case P_EDGES: return i % RUN_ROWS == 0 || i % RUN_ROWS == RUN_ROWS - 1 || i % RUN_ROWS == 32;
    case P_LAST: return i == n - 1;
    default: return 0;
  }
}

static void check(ps_context *ctx, uint64_t n, int p) {
  th_case("n=%llu %s", ull(n), names[p]);
  const uint64_t nb = (n + 7) / 8, off = 4;
  uint8_t *bits = th_calloc((size_t)nb + 16, 1);
  uint64_t *want = th_malloc((size_t)n * sizeof *want), count = 0;
  for (uint64_t i = 0; i < n; i++)
    if (pattern_bit(p, i, n)) {
      bits[off + i / 8] |= (uint8_t)(1u << (i % 8));
      want[count++] = i;
    }
  if (n % 8) bits[off + nb - 1] |= (uint8_t)(0xFFu << (n % 8)); /* past n: never an id */
  memset(bits + off + nb, 0xFF, 8);
  ps_buffer *sel = NULL;
  if (!CHECK_OK(ctx, ps_buffer_create(ctx, off + nb + 8, &sel))) goto done;
  CHECK_OK(ctx, ps_buffer_write(ctx, sel, 0, bits, off + nb + 8));
  for (int t = 0; t < 2; t++) {
    const uint32_t isz = t ? 8 : 4;
    const uint64_t ioff = 2 * isz, size = ioff + (count + 4) * isz;
    ps_buffer *ids = NULL;
    if (!CHECK_OK(ctx, ps_buffer_create(ctx, size, &ids))) continue;
    uint8_t *got = th_malloc((size_t)size);
    memset(got, 0xAB, (size_t)size);
    CHECK_OK(ctx, ps_buffer_write(ctx, ids, 0, got, size));
    uint64_t c = 777;
    if (CHECK_OK(ctx, ps_selection_row_ids_device(ctx, sel, off, n, t ? PS_INDEX_UINT64 : PS_INDEX_UINT32, ids, ioff,
                                                  count, &c)) &&
        CHECKF(c == count, "uint%u: count %llu, expected %llu", isz * 8, ull(c), ull(count)) &&
        CHECK_OK(ctx, ps_buffer_read(ctx, ids, 0, got, size))) {
      for (uint64_t i = 0; i < count; i++) {
        uint64_t v = 0;
        memcpy(&v, got + ioff + i * isz, isz);
        if (!CHECKF(v == want[i], "uint%u id[%llu] = %llu, expected %llu (of %llu)", isz * 8, ull(i), ull(v),
                    ull(want[i]), ull(count)))
          break;
      }
      int untouched = 1;
      for (uint64_t b = 0; b < size; b++)
        if (b < ioff || b >= ioff + count * isz) untouched &= got[b] == 0xAB;
      CHECKF(untouched, "uint%u: bytes outside the %llu ids were written", isz * 8, ull(count));
    }
    free(got);
    ps_buffer_destroy(ids);
  }
done:
  ps_buffer_destroy(sel);
  free(bits);
  free(want);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "opencl_row_ids");
  static const uint64_t chunks[] = {0, RUN_ROWS + 32, 3 * RUN_ROWS};
  static const uint64_t ns[] = {1, 33, RUN_ROWS - 1, RUN_ROWS, RUN_ROWS + 1, 3 * RUN_ROWS + 17, 4 * RUN_ROWS + 4000};
  for (size_t k = 0; k < sizeof chunks / sizeof chunks[0]; k++) {
    ps_context *ctx = th_context(chunks[k]);
    for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
      for (int p = 0; p < P_COUNT; p++) check(ctx, ns[i], p);
    ps_context_destroy(ctx);
  }
  return th_finish();
}
