/*
 * Row ids straight from a one-range filter (ps_filter_row_ids_device): the
 * row-id block of ps_cuda_ids.cuh with the tile's result words computed from
 * the packed codes instead of read from a bitmap. Semantics are the range
 * fast path's (range_kernel.cuh): row selected iff valid, below rows, and
 * ((lo <= code <= lo + span) != negate); with check_limit a valid row whose
 * code exceeds limit raises status_bit (the ids are then unspecified).
 *
 * Why fused: filter then ps_row_ids writes the bitmap (rows/8 bytes) and
 * reads it back, and costs a second launch chain and a host round trip; on
 * the H200 the two-call path ran at 53% (1% selected) and 63% (50%) of the
 * copy bandwidth over the bytes that must move (codes in, ids out).
 *
 * Lane l of warp v computes result word g of each round from its W stream
 * words [g*W, g*W + W) (16-byte loads where W is a multiple of 4; lanes'
 * loads together cover a contiguous 32*W*4-byte span, so every sector is
 * used), keeps it in shared memory for the writing phase (16 KB per block:
 * the codes are read once), and counts it. Widths 1..32, W a template
 * parameter; the per-word compare is range_bits.cuh's (SWAR at 1, 2, 4, 8,
 * 16 bits, top-aligned codes elsewhere).
 */
#ifndef PS_IDS_FUSED_CUH
#define PS_IDS_FUSED_CUH

#include <utility>

#include "ps_cuda_ids.cuh"
#include "range_bits.cuh"

namespace {

/* The tile's result words from a range leaf's codes. */
template <int W>
struct range_words {
  const ps_cuda_range_params &r;
  uint32_t (*words)[PS_SEL_IDS_ROUNDS][32]; /* shared: [warp][round][lane], written and read by the same lane */
  uint32_t L, S;                            /* word_consts of [lo, lo + span] (SWAR widths) */

  /* Whether the tile's words, codes and validity are all inside the chunk. */
  __device__ __forceinline__ bool whole(uint32_t tile) const {
    const uint64_t end = (uint64_t)(tile + 1) * PS_SEL_IDS_TILE_WORDS; /* result words */
    return ps_sel_ids_full_tile(r.rows, tile) && end * W * 4 <= r.data_bytes &&
           (!r.validity || end * 4 <= r.validity_bytes);
  }

  /* Result word g; bad |= the valid rows whose code is above the limit. */
  __device__ __forceinline__ uint32_t result_word(uint64_t g, bool all_in, uint32_t &bad) const {
    uint32_t w[W + 2];
    const uint64_t k0 = g * W; /* first stream word */
    if (all_in) {
      if constexpr (W % 4 == 0) {
        if (r.data_aligned16) {
          const uint4 *v = reinterpret_cast<const uint4 *>(r.data) + k0 / 4;
#pragma unroll
          for (int q = 0; q < W / 4; q++) {
            const uint4 x = __ldg(v + q);
            w[4 * q] = x.x, w[4 * q + 1] = x.y, w[4 * q + 2] = x.z, w[4 * q + 3] = x.w;
          }
        } else {
#pragma unroll
          for (int k = 0; k < W; k++) w[k] = __ldg(reinterpret_cast<const uint32_t *>(r.data) + k0 + k);
        }
      } else if constexpr (W % 2 == 0) {
        if (((uintptr_t)r.data & 7u) == 0) {
          const uint2 *v = reinterpret_cast<const uint2 *>(r.data) + k0 / 2;
#pragma unroll
          for (int q = 0; q < W / 2; q++) {
            const uint2 x = __ldg(v + q);
            w[2 * q] = x.x, w[2 * q + 1] = x.y;
          }
        } else {
#pragma unroll
          for (int k = 0; k < W; k++) w[k] = __ldg(reinterpret_cast<const uint32_t *>(r.data) + k0 + k);
        }
      } else {
#pragma unroll
        for (int k = 0; k < W; k++) w[k] = __ldg(reinterpret_cast<const uint32_t *>(r.data) + k0 + k);
      }
    } else {
#pragma unroll
      for (int k = 0; k < W; k++) w[k] = ps_sel_load_word(r.data, (k0 + k) * 4, r.data_bytes, true);
    }
    w[W] = 0, w[W + 1] = 0; /* never selected by the shifts; keeps indexes in range */
    uint32_t bits;
    if constexpr (ps_range::word_local<W>()) {
      bits = 0;
#pragma unroll
      for (int k = 0; k < W; k++) bits |= ps_range::word_bits<W>(w[k], L, S) << (k * (32 / W));
    } else {
      bits = ps_range::range_bits<W>(w, r.lo, r.span);
    }
    uint32_t live = ps_sel_row_mask(r.rows, g);
    if (r.validity) live &= ps_sel_load_word(r.validity, g * 4, r.validity_bytes, true);
    if (r.check_limit) {
      /* One max per code; the exact per-row test only when it fails. */
      constexpr int G = 32 - W;
      const uint32_t limit_top = ((uint32_t)r.limit << G) | (uint32_t)(((uint64_t)1 << G) - 1);
      if (ps_range::max_code_top<W>(w) > limit_top) bad |= ~ps_range::range_bits<W>(w, 0, r.limit) & live;
    }
    return (bits ^ r.negate_mask) & live;
  }

  __device__ __forceinline__ uint32_t lane_count(uint32_t tile, uint32_t warp, uint32_t lane) {
    const bool all_in = whole(tile);
    uint32_t mine = 0, bad = 0;
    /* Two rounds' loads in flight per lane. */
#pragma unroll 2
    for (uint32_t round = 0; round < PS_SEL_IDS_ROUNDS; ++round) {
      const uint32_t x = result_word(ps_sel_ids_word(tile, warp, round, lane), all_in, bad);
      words[warp][round][lane] = x;
      mine += __popc(x);
    }
    if (__any_sync(kFullWarp, bad != 0) && lane == 0) atomicOr(r.status, r.status_bit);
    return mine;
  }

  __device__ __forceinline__ uint32_t word(uint32_t, uint32_t warp, uint32_t round, uint32_t lane) const {
    return words[warp][round][lane];
  }
};

template <int W, uint32_t kBytes>
__global__ void __launch_bounds__(kBlock)
    range_ids_kernel(const __grid_constant__ ps_cuda_range_params r, const __grid_constant__ ps_cuda_row_ids_params p,
                     unsigned int *ticket, IdsTileState tile_state, uint32_t tiles) {
  __shared__ uint32_t words[kIdsWarps][PS_SEL_IDS_ROUNDS][32];
  range_words<W> src{r, words, 0, 0};
  if constexpr (ps_range::word_local<W>()) ps_range::word_consts<W>(r.lo, r.span, &src.L, &src.S);
  ids_tile<kBytes, true>(p, ticket, tile_state, tiles, src);
}

typedef cudaError_t (*range_ids_fn)(const ps_cuda_range_params &, const ps_cuda_row_ids_params &, unsigned int *,
                                    const IdsTileState &, uint32_t, cudaStream_t);

template <int W>
cudaError_t launch_range_ids(const ps_cuda_range_params &r, const ps_cuda_row_ids_params &p, unsigned int *ticket,
                             const IdsTileState &tile_state, uint32_t tiles, cudaStream_t stream) {
  if (p.index_bytes == 4) range_ids_kernel<W, 4><<<tiles, kBlock, 0, stream>>>(r, p, ticket, tile_state, tiles);
  else range_ids_kernel<W, 8><<<tiles, kBlock, 0, stream>>>(r, p, ticket, tile_state, tiles);
  return cudaGetLastError();
}

/* The launch for width w, one of Lo + Is (each ids_fused_<k>.cu holds a slice
 * of the widths so that they compile in parallel). */
template <int Lo, int... Is>
cudaError_t dispatch_range_ids(int w, const ps_cuda_range_params &r, const ps_cuda_row_ids_params &p,
                               unsigned int *ticket, const IdsTileState &tile_state, uint32_t tiles,
                               cudaStream_t stream, std::integer_sequence<int, Is...>) {
  static constexpr range_ids_fn fns[] = {&launch_range_ids<Lo + Is>...};
  return fns[w - Lo](r, p, ticket, tile_state, tiles, stream);
}

} // namespace

#endif /* PS_IDS_FUSED_CUH */
