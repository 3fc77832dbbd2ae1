/*
 * Row ids straight from a one-range filter (ps_filter_row_ids_device): the
 * row-id block of ps_cuda_ids.cuh with the tile's result words computed from
 * the packed codes instead of read from a bitmap. Semantics are the range
 * fast path's (range_kernel.cuh): row selected iff valid, below rows, and
 * ((lo <= code <= lo + span) != negate); with check_limit a valid row whose
 * code exceeds limit raises status_bit (the ids are then unspecified).
 *
 * Why fused: filter then ps_selection_row_ids_device writes the bitmap (rows/8 bytes) and
 * reads it back, and costs a second launch chain and a host round trip; the
 * two-call path ran well below the copy bandwidth over the bytes that must
 * move (codes in, ids out; docs/benchmarks.md).
 *
 * A warp stages the codes of a batch of rounds (32 result words a round)
 * through its own shared-memory area with coalesced 16-byte loads, lane l
 * then computes result word l of each round from its W staged words (odd
 * stride: no bank conflicts), keeps it in shared memory for the writing
 * phase (16 KB per block: the codes are read once), and counts it. The
 * area is reused as the warp's row-id staging afterwards. Widths 1..32, W a
 * template parameter; the per-word compare is kernels_shared/ps_range.h's (SWAR at 1,
 * 2, 4, 8, 16 bits, top-aligned codes elsewhere). A first version had each
 * lane load its own W words (16-byte loads, 64 bytes apart across the warp
 * at 16 bits), and was much slower than the w16 filter alone.
 */
#ifndef PS_IDS_FUSED_CUH
#define PS_IDS_FUSED_CUH

#include <atomic>
#include <utility>

#include "ps_cuda_ids.cuh"
#include "../kernels_shared/ps_range.h"

namespace {

/* Rounds per batch: a warp loads R rounds' codes (32 * R * W stream words)
 * at once, so that each lane has 32-64 bytes in flight at small widths; a
 * power of two, so batches divide the tile's PS_SEL_IDS_ROUNDS. */
template <int W>
__host__ __device__ constexpr int batch_rounds() {
  return W >= 16 ? 1 : (16 / W >= 16 ? 16 : 16 / W >= 8 ? 8 : 16 / W >= 4 ? 4 : 16 / W >= 2 ? 2 : 1);
}

/* A staged result word's stride in shared memory: odd, so that lane l's k-th
 * word (at l*S + k) is in a different bank for each l. */
template <int W>
__host__ __device__ constexpr int stage_stride() {
  return W | 1;
}

/* 32-bit words of a warp's area: the batch's staged codes, reused as the
 * row-id staging of the writing phase. */
template <int W>
__host__ __device__ constexpr int warp_area_words() {
  constexpr int codes = 32 * batch_rounds<W>() * stage_stride<W>();
  constexpr int ids = PS_SEL_IDS_STAGE_SLOTS / 2;
  return (codes > ids ? codes : ids + 3) / 4 * 4 + 4; /* 16-byte multiples */
}

/* Dynamic shared memory of range_ids_kernel<W>: the tile's result words, then
 * the warps' areas. */
template <int W>
__host__ __device__ constexpr size_t range_ids_smem() {
  return 4 * ((size_t)PS_SEL_IDS_TILE_WORDS + (size_t)kIdsWarps * warp_area_words<W>());
}

/* The tile's result words from a range leaf's codes. */
template <int W>
struct range_words {
  static constexpr int R = batch_rounds<W>();
  static constexpr int S = stage_stride<W>();
  static constexpr int kVecs = 8 * R * W; /* 16-byte vectors of a batch */
  /* Rounds of a direct batch (widths 1, 2, 4, 8, 16): 8 vectors (128 bytes)
   * in flight per lane (with 4 per lane ids_1pct was much slower than the
   * direct filter kernel, which keeps 2 x 64 bytes per thread in flight with
   * its prefetch). */
  static constexpr int RD = W >= 2 ? 32 / W : 16;
  static constexpr int kDPer = 8 * RD * W / 32; /* vectors per lane */
  const ps_cuda_range_params &r;
  uint32_t (*words)[PS_SEL_IDS_ROUNDS][32]; /* [warp][round][lane], written and read by the same lane */
  uint32_t *areas;                          /* kIdsWarps * warp_area_words<W>() */
  uint32_t L, S_;                           /* word_consts of [lo, lo + span] (SWAR widths) */

  __device__ __forceinline__ uint16_t *stage(uint32_t warp) {
    return reinterpret_cast<uint16_t *>(areas + warp * warp_area_words<W>());
  }

  /* Whether the tile's words, codes and validity are all inside the chunk. */
  __device__ __forceinline__ bool whole(uint32_t tile) const {
    const uint64_t end = (uint64_t)(tile + 1) * PS_SEL_IDS_TILE_WORDS; /* result words */
    return ps_sel_ids_full_tile(r.rows, tile) && end * W * 4 <= r.data_bytes &&
           (!r.validity || end * 4 <= r.validity_bytes);
  }

  /* Stages the codes of result words [g0, g0 + 32R) into area (result word
   * g0 + j at j*S): coalesced 16-byte loads (the batch starts at a multiple
   * of 128 bytes of the stream), all issued before the first store; bounded
   * word loads at the chunk's end or for a stream not 16-byte aligned. */
  __device__ __forceinline__ void stage_codes(uint64_t g0, bool fast, uint32_t *area, uint32_t lane) const {
    if (fast) {
      constexpr int kPer = (kVecs + 31) / 32;
      uint4 v[kPer];
      const uint4 *src = reinterpret_cast<const uint4 *>(r.data) + g0 * W / 4;
#pragma unroll
      for (int m = 0; m < kPer; m++)
        if (m * 32 + (int)lane < kVecs) v[m] = __ldg(src + m * 32 + lane);
#pragma unroll
      for (int m = 0; m < kPer; m++) {
        const int k = m * 32 + (int)lane;
        if (k < kVecs) {
          const uint32_t x[4] = {v[m].x, v[m].y, v[m].z, v[m].w};
#pragma unroll
          for (int c = 0; c < 4; c++) {
            const int i = 4 * k + c;
            area[(i / W) * S + i % W] = x[c];
          }
        }
      }
    } else {
      for (int i = (int)lane; i < 32 * R * W; i += 32)
        area[(i / W) * S + i % W] = ps_sel_load_word(r.data, (g0 * W + (uint64_t)i) * 4, r.data_bytes, true);
    }
  }

  /* Result word g from its W staged words at w; bad |= the valid rows whose
   * code is above the limit. */
  __device__ __forceinline__ uint32_t result_word(const uint32_t *staged, uint64_t g, uint32_t &bad) const {
    uint32_t w[W + 2];
#pragma unroll
    for (int k = 0; k < W; k++) w[k] = staged[k];
    w[W] = 0, w[W + 1] = 0; /* never selected by the shifts; keeps indexes in range */
    uint32_t bits;
    if constexpr (PS_RB_WORD_LOCAL(W)) {
      bits = 0;
#pragma unroll
      for (int k = 0; k < W; k++) bits |= ps_rb_word_bits(w[k], L, S_, W, 0) << (k * (32 / W));
    } else {
      bits = ps_range_bits(w, W, r.lo, r.span);
    }
    uint32_t live = ps_sel_row_mask(r.rows, g);
    if (r.validity) live &= ps_sel_load_word(r.validity, g * 4, r.validity_bytes, true);
    if (r.check_limit) {
      /* One max per code; the exact per-row test only when it fails. */
      constexpr int G = 32 - W;
      const uint32_t limit_top = ((uint32_t)r.limit << G) | (uint32_t)(((uint64_t)1 << G) - 1);
      if (ps_rb_max_code_top(w, W) > limit_top) bad |= ~ps_range_bits(w, W, 0, r.limit) & live;
    }
    return (bits ^ r.negate_mask) & live;
  }

  /* Widths 1, 2, 4, 8, 16, whole tiles, no code limit: a batch of RD rounds
   * is 32 * kDPer 16-byte vectors, each giving B = 128 / W whole result bits by itself
   * (codes never straddle a word); lane l computes vectors l, l + 32, ...
   * straight from its coalesced loads, as range_kernel.cuh's direct kernel
   * does, and stores their bits into the batch's result words in shared
   * memory (no staging of the codes). Negation and the live rows are applied
   * per word afterwards. */
  __device__ __forceinline__ void direct_batch(uint64_t g0, uint32_t *out_words, uint32_t lane) const {
    if constexpr (PS_RB_WORD_LOCAL(W)) {
      constexpr int B = 128 / W;
      static_assert(8 * RD * W % 32 == 0 && PS_SEL_IDS_ROUNDS % RD == 0, "whole vectors per lane, whole batches");
      const uint4 *src = reinterpret_cast<const uint4 *>(r.data) + g0 * W / 4;
      uint4 v[kDPer];
#pragma unroll
      for (int m = 0; m < kDPer; m++) v[m] = __ldg(src + m * 32 + lane);
#pragma unroll
      for (int m = 0; m < kDPer; m++) {
        const uint32_t xs[4] = {v[m].x, v[m].y, v[m].z, v[m].w};
        const uint32_t at = (uint32_t)m * 32 + lane; /* vector index: bits [at * B, at * B + B) */
        uint32_t o[B >= 32 ? B / 32 : 1];
        ps_rb_vector_bits(xs, L, S_, W, 0, o);
        if constexpr (B == 128)
          reinterpret_cast<uint4 *>(out_words)[at] = make_uint4(o[0], o[1], o[2], o[3]);
        else if constexpr (B == 64)
          reinterpret_cast<uint2 *>(out_words)[at] = make_uint2(o[0], o[1]);
        else if constexpr (B == 32)
          out_words[at] = o[0];
        else if constexpr (B == 16)
          reinterpret_cast<uint16_t *>(out_words)[at] = (uint16_t)o[0];
        else
          reinterpret_cast<uint8_t *>(out_words)[at] = (uint8_t)o[0];
      }
    } else {
      (void)g0, (void)out_words, (void)lane;
    }
  }

  __device__ __forceinline__ uint32_t lane_count(uint32_t tile, uint32_t warp, uint32_t lane) {
    const bool fast = whole(tile) && r.data_aligned16;
    uint32_t mine = 0, bad = 0;
    if (PS_RB_WORD_LOCAL(W) && fast && !r.check_limit) {
#pragma unroll 1
      for (uint32_t b = 0; b < PS_SEL_IDS_ROUNDS; b += RD) {
        const uint64_t g0 = ps_sel_ids_word(tile, warp, b, 0);
        direct_batch(g0, &words[warp][b][0], lane);
        __syncwarp();
#pragma unroll
        for (int rr = 0; rr < RD; rr++) {
          const uint64_t g = g0 + (uint32_t)rr * 32 + lane;
          uint32_t x = words[warp][b + rr][lane] ^ r.negate_mask;
          if (r.validity) x &= __ldg(reinterpret_cast<const uint32_t *>(r.validity) + g); /* whole tile: in bounds */
          words[warp][b + rr][lane] = x;
          mine += __popc(x);
        }
      }
      return mine;
    }
    uint32_t *area = areas + warp * warp_area_words<W>();
#pragma unroll 1
    for (uint32_t b = 0; b < PS_SEL_IDS_ROUNDS; b += R) {
      const uint64_t g0 = ps_sel_ids_word(tile, warp, b, 0); /* R rounds = 32R consecutive result words */
      stage_codes(g0, fast, area, lane);
      __syncwarp();
#pragma unroll
      for (int rr = 0; rr < R; rr++) {
        const uint32_t j = (uint32_t)rr * 32 + lane;
        const uint32_t x = result_word(area + j * S, g0 + j, bad);
        words[warp][b + rr][lane] = x;
        mine += __popc(x);
      }
      __syncwarp(); /* the next batch rewrites the area */
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
  extern __shared__ __align__(16) uint32_t smem[];
  range_words<W> src{r, reinterpret_cast<uint32_t(*)[PS_SEL_IDS_ROUNDS][32]>(smem), smem + PS_SEL_IDS_TILE_WORDS, 0, 0};
  if constexpr (PS_RB_WORD_LOCAL(W)) ps_rb_word_consts(r.lo, r.span, W, &src.L, &src.S_);
  if (ids_tile<kBytes, true>(p, ticket, tile_state, tiles, src)) ids_reset_state(tile_state, tiles, ticket);
}

/* Opts the instantiation in to its dynamic shared memory (above 48 KB at the
 * widest widths), once per device per process. */
template <int W, uint32_t kBytes>
cudaError_t allow_smem() {
  /* A function attribute belongs to one device's context: once per device
   * (devices 0..15 remembered, others set every time). */
  constexpr int kDevices = 16;
  static std::atomic<int> done[kDevices];
  int dev = 0;
  cudaError_t err = cudaGetDevice(&dev);
  if (err != cudaSuccess) return err;
  const bool cache = dev >= 0 && dev < kDevices;
  if (cache && done[dev].load(std::memory_order_relaxed)) return cudaSuccess;
  err = cudaFuncSetAttribute(range_ids_kernel<W, kBytes>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                             (int)range_ids_smem<W>());
  if (err == cudaSuccess && cache) done[dev].store(1, std::memory_order_relaxed);
  return err;
}

typedef cudaError_t (*range_ids_fn)(const ps_cuda_range_params &, const ps_cuda_row_ids_params &, unsigned int *,
                                    const IdsTileState &, uint32_t, cudaStream_t);

/* Blocks that fit on the device at once (resident blocks per SM times the
 * SMs), measured once per instantiation; 0 if the query fails. */
template <int W, uint32_t kBytes>
uint32_t resident_ids_blocks() {
  static std::atomic<uint32_t> cached{0};
  uint32_t v = cached.load(std::memory_order_relaxed);
  if (v) return v;
  int dev = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, range_ids_kernel<W, kBytes>, kBlock,
                                                    range_ids_smem<W>()) != cudaSuccess ||
      per_sm <= 0) {
    (void)cudaGetLastError();
    return 0;
  }
  v = (uint32_t)per_sm * (uint32_t)sms;
  cached.store(v, std::memory_order_relaxed);
  return v;
}

/* The grid: the resident blocks, each looping over tiles by ticket (with one
 * block per tile the last of a few waves ran part-full). */
template <int W, uint32_t kBytes>
cudaError_t launch_range_ids_bytes(const ps_cuda_range_params &r, const ps_cuda_row_ids_params &p, unsigned int *ticket,
                                   const IdsTileState &tile_state, uint32_t tiles, cudaStream_t stream) {
  cudaError_t err = allow_smem<W, kBytes>();
  if (err != cudaSuccess) return err;
  const uint32_t fill = resident_ids_blocks<W, kBytes>();
  const uint32_t blocks = fill && fill < tiles ? fill : tiles;
  range_ids_kernel<W, kBytes><<<blocks, kBlock, range_ids_smem<W>(), stream>>>(r, p, ticket, tile_state, tiles);
  return cudaGetLastError();
}

template <int W>
cudaError_t launch_range_ids(const ps_cuda_range_params &r, const ps_cuda_row_ids_params &p, unsigned int *ticket,
                             const IdsTileState &tile_state, uint32_t tiles, cudaStream_t stream) {
  return p.index_bytes == 4 ? launch_range_ids_bytes<W, 4>(r, p, ticket, tile_state, tiles, stream)
                            : launch_range_ids_bytes<W, 8>(r, p, ticket, tile_state, tiles, stream);
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

}  // namespace

#endif /* PS_IDS_FUSED_CUH */
