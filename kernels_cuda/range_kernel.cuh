/*
 * range_kernel.cuh: the fast path for the most common filter: one code-range leaf (column
 * <op> literal, BETWEEN, != ...) on one column, with or without a validity
 * bitmap; up to 32 bits also on a column whose code limit leaves some w-bit
 * codes invalid (every valid row's code checked: the Limit variants). Semantics
 * are exactly ps_program.h's for the one-instruction program
 * RANGE(col 0, lo, hi, negate): row selected iff valid and
 * ((lo <= code <= hi) != negate).
 *
 * Why a separate kernel: the general kernel (eval.cu) interprets the program
 * and reads codes at a run-time width. Here the bit width is a template
 * parameter (so extracting code j is a couple of constant shifts) and there
 * is nothing to interpret. Three kernels by width: the direct kernel where
 * codes never straddle a word below 32 bits (1, 2, 4, 8, 16; below), the
 * async kernel where they do (range_async.cuh), and the staged kernel
 * (range_kernel) for 0 and 32 bits and up: one thread produces one 32-row result
 * word, and a block stages its packed words through shared memory with
 * coalesced loads (threads would otherwise read with a stride of w words,
 * and the L1 would serve 32 lines per load instruction).
 */
#ifndef PS_RANGE_KERNEL_CUH
#define PS_RANGE_KERNEL_CUH

#include <atomic>
#include <utility>

#include <cub/block/block_reduce.cuh>

#include "ps_cuda_kernels.h"
#include "../kernels_shared/ps_layout.h" /* ps_mask_nibble_bytes */
#include "../kernels_shared/ps_range.h"

namespace {

constexpr int kThreads = PS_CUDA_RANGE_BLOCK; /* result words per tile */

/* Word k of a stream of `bytes` bytes, reading nothing past it. */
__device__ __forceinline__ uint32_t load_word(const uint8_t *base, uint64_t bytes, uint64_t k) {
  const uint64_t at = k * 4;
  if (at + 4 <= bytes) return __ldg(reinterpret_cast<const uint32_t *>(base) + k);
  uint32_t v = 0;
  for (uint64_t b = at; b < bytes && b < at + 4; b++) v |= (uint32_t)base[b] << (8 * (b - at));
  return v;
}

/* Result word g of a bitmap of out_bytes bytes; nothing at or past out_bytes. */
__device__ __forceinline__ void store_bitmap_word(uint8_t *bitmap, bool aligned, uint64_t out_bytes, uint64_t g,
                                                  uint32_t bits) {
  if (g * 4 + 4 <= out_bytes && aligned) {
    reinterpret_cast<uint32_t *>(bitmap)[g] = bits;
  } else {
    for (uint64_t b = g * 4; b < out_bytes && b < g * 4 + 4; b++) bitmap[b] = (uint8_t)(bits >> (8 * (b - g * 4)));
  }
}

__device__ __forceinline__ void store_word(const ps_cuda_range_params &p, uint64_t out_bytes, uint64_t g, uint32_t bits) {
  store_bitmap_word(p.bitmap, p.bitmap_aligned != 0, out_bytes, g, bits);
}

/* The block's count (one atomic) and corrupt-code flag. Every thread calls it. */
template <bool Limit, int T = kThreads, typename TempStorage>
__device__ __forceinline__ void finish(const ps_cuda_range_params &p, uint32_t selected, uint32_t bad,
                                       TempStorage &tmp) {
  if (p.count) {
    const uint32_t total = cub::BlockReduce<uint32_t, T>(tmp).Sum(selected);
    if (threadIdx.x == 0 && total) atomicAdd(p.count, (unsigned long long)total);
  }
  if constexpr (Limit) {
    if (__syncthreads_or(bad != 0) && threadIdx.x == 0) atomicOr(p.status, p.status_bit);
  }
}

/* Shared-memory stride per thread: odd, so that thread t's word k is in bank
 * (t*S + k) % 32 and a warp reading word k hits 32 different banks. */
template <int W>
__host__ __device__ constexpr int stride() {
  return W == 0 ? 1 : (W % 2 ? W : W + 1);
}

/* Result words per thread per tile: at widths below 16 a thread handles
 * ceil(16 / W), so that it has at least 64 bytes (four 16-byte loads) in
 * flight: with 32 bytes per thread the narrow widths ran far below the
 * copy bandwidth that the wider ones, with 64 bytes and more per thread,
 * reached (docs/benchmarks.md). */
template <int W>
__host__ __device__ constexpr int words_per_thread() {
  return W == 0 ? 8 : (W >= 16 ? 1 : (16 + W - 1) / W);
}

/* The tile's packed words, as 16-byte vectors per thread (kPer of them):
 * coalesced, fully unrolled, every load issued before any is used. */
template <int W, int T = kThreads>
struct tile_loads {
  static constexpr int kTile = T * words_per_thread<W>();
  static constexpr int kVec = W == 0 ? 0 : kTile * W / 4; /* kTile is a multiple of 4 */
  static constexpr int kPer = W == 0 ? 1 : (kVec + T - 1) / T;
  uint4 v[kPer];

  __device__ __forceinline__ void load(const ps_cuda_range_params &p, uint64_t first) {
    const uint64_t base = first * W; /* stream word of the tile's start: a multiple of 4 */
#pragma unroll
    for (int m = 0; m < kPer; m++) {
      const int i4 = m * T + threadIdx.x;
      const uint64_t word = base + 4 * (uint64_t)i4;
      if (i4 < kVec) {
        if (p.data_aligned16 && (word + 4) * 4 <= p.data_bytes) {
          v[m] = __ldg(reinterpret_cast<const uint4 *>(p.data) + word / 4);
        } else {
          v[m] = make_uint4(load_word(p.data, p.data_bytes, word), load_word(p.data, p.data_bytes, word + 1),
                            load_word(p.data, p.data_bytes, word + 2), load_word(p.data, p.data_bytes, word + 3));
        }
      }
    }
  }

  /* Thread t's result word k at tile[k * S .. k * S + W). */
  __device__ __forceinline__ void stage(uint32_t *tile) const {
#pragma unroll
    for (int m = 0; m < kPer; m++) {
      const int i4 = m * T + threadIdx.x;
      if (i4 < kVec) {
        const uint32_t x[4] = {v[m].x, v[m].y, v[m].z, v[m].w};
#pragma unroll
        for (int q = 0; q < 4; q++) {
          const int i = 4 * i4 + q;
          tile[(i / W) * stride<W>() + (i % W)] = x[q];
        }
      }
    }
  }
};

/* Widths from 16 up: resident blocks loop over tiles, the next tile's loads
 * issued before the current one is computed (near the copy bandwidth at
 * 32-64 bits, well above one block per tile: docs/benchmarks.md).
 * Below 16 bits: one block per tile, no prefetch (the prefetched vectors
 * would stay live through the compute: 70-119 registers). A block then
 * loads, waits and computes, and the SM overlaps blocks instead of stages. */
template <int W>
__host__ __device__ constexpr bool pipelined() {
  return W >= 16;
}

template <int W, bool Limit>
__global__ void __launch_bounds__(kThreads) range_kernel(const __grid_constant__ ps_cuda_range_params p) {
  constexpr int S = stride<W>();
  constexpr int R = words_per_thread<W>();
  constexpr int kTile = kThreads * R; /* result words per tile */
  __shared__ uint32_t tile[W == 0 ? 1 : kTile * S];
  typedef cub::BlockReduce<uint32_t, kThreads> Reduce;
  __shared__ typename Reduce::TempStorage reduce_tmp;

  const uint64_t words = ((uint64_t)p.rows + 31) / 32;
  const uint64_t out_bytes = ((uint64_t)p.rows + 7) / 8;
  const uint64_t step = (uint64_t)gridDim.x * kTile;
  uint32_t selected = 0, bad = 0;
  tile_loads<W> in;
  uint64_t first = (uint64_t)blockIdx.x * kTile;
  if constexpr (pipelined<W>()) {
    if (first < words) in.load(p, first);
  }
  for (; first < words; first += step) {
    if constexpr (W > 0) {
      if constexpr (!pipelined<W>()) in.load(p, first);
      in.stage(tile);
      __syncthreads();
      if constexpr (pipelined<W>()) {
        if (first + step < words) in.load(p, first + step); /* in flight during the compute below */
      }
    }
    /* Fully unrolled, as range.cl is: with `#pragma unroll 1` here the
     * narrow widths ran well below range.cl's speed for the same algorithm
     * on the same GPU (docs/benchmarks.md). */
#pragma unroll
    for (int m = 0; m < R; m++) {
      const int local = m * kThreads + threadIdx.x; /* consecutive threads, consecutive words */
      const uint64_t g = first + local;
      if (g >= words) break;
      uint32_t w[W == 0 ? 1 : W + 2];
      if constexpr (W > 0) {
#pragma unroll
        for (int k = 0; k < W; k++) w[k] = tile[local * S + k];
        w[W] = 0, w[W + 1] = 0; /* never selected by the shifts; keeps indexes in range */
      }
      uint32_t bits = ps_range_bits(w, W, p.lo, p.span) ^ p.negate_mask;
      if constexpr (Limit && W > 0) {
        /* One max per code; the exact per-row test (nulls, rows past the
         * end may hold any code) only when some code is above the limit. */
        constexpr int G = 32 - W;
        const uint32_t limit_top = ((uint32_t)p.limit << G) | (uint32_t)(((uint64_t)1 << G) - 1);
        uint32_t live = p.validity ? load_word(p.validity, p.validity_bytes, g) : 0xffffffffu;
        if (g == words - 1 && (p.rows & 31)) live &= (1u << (p.rows & 31)) - 1u;
        if (ps_rb_max_code_top(w, W) > limit_top) bad |= ~ps_range_bits(w, W, 0, p.limit) & live;
        bits &= live;
      } else {
        if (p.validity) bits &= load_word(p.validity, p.validity_bytes, g);
        if (g == words - 1 && (p.rows & 31)) bits &= (1u << (p.rows & 31)) - 1u;
      }
      selected += __popc(bits);
      if (p.bitmap) store_word(p, out_bytes, g, bits);
    }
    if constexpr (W > 0) __syncthreads(); /* the tile is rewritten next round */
  }
  finish<Limit>(p, selected, bad, reduce_tmp);
}

/* ---- widths 1, 2, 4, 8, 16: the direct kernel --------------------------------
 * Codes never straddle a word, so a 16-byte vector of the stream gives
 * B = 128/W whole result bits by itself, and those are bits [v*B, v*B + B)
 * of the bitmap for vector v: a thread loads its vectors with coalesced
 * 16-byte loads and writes its B bits with coalesced B-bit stores (W = 1:
 * 16 bytes, W = 16: 1 byte). No shared memory, no barrier, no transpose.
 * On a grid of resident blocks (16 bits) a block loops over tiles with the
 * next tile's vectors loaded before the current ones are computed; with one
 * block per tile (1-8 bits, faster there: waves_of) there is no next
 * tile. Indexes are 32-bit: a chunk has at most 2^31 rows, so at most 2^28
 * vectors at 16 bits. */

/* Vectors per thread per tile: 64 bytes of stream in flight per thread. */
constexpr int kDirectVecs = 4;
constexpr uint32_t kDirectTile = kThreads * kDirectVecs;

/* N (1, 2 or 4) bytes at byte `at` of a stream of `bytes` bytes, little-endian;
 * bytes past the end read as 0. */
template <int N>
__device__ __forceinline__ uint32_t load_bytes(const uint8_t *base, uint64_t bytes, uint64_t at) {
  const uint8_t *q = base + at;
  if (at + N <= bytes && ((uintptr_t)q & (N - 1)) == 0) {
    if constexpr (N == 4) return __ldg(reinterpret_cast<const uint32_t *>(q));
    if constexpr (N == 2) return __ldg(reinterpret_cast<const uint16_t *>(q));
    return __ldg(q);
  }
  uint32_t v = 0;
  for (uint64_t b = at; b < bytes && b < at + N; b++) v |= (uint32_t)base[b] << (8 * (b - at));
  return v;
}

/* The low 8N bits of v at byte `at` of the bitmap; nothing at or past out_bytes. */
template <int N>
__device__ __forceinline__ void store_bytes(uint8_t *base, uint64_t out_bytes, uint64_t at, uint32_t v) {
  uint8_t *q = base + at;
  if (at + N <= out_bytes && ((uintptr_t)q & (N - 1)) == 0) {
    if constexpr (N == 4) *reinterpret_cast<uint32_t *>(q) = v;
    else if constexpr (N == 2) *reinterpret_cast<uint16_t *>(q) = (uint16_t)v;
    else *q = (uint8_t)v;
    return;
  }
  for (uint64_t b = at; b < out_bytes && b < at + N; b++) base[b] = (uint8_t)(v >> (8 * (b - at)));
}

/* Bits 4k..4k+3 of `bits` as four 0/1 bytes, little-endian:
 * kernels_shared/ps_layout.h's ps_mask_nibble_bytes. */
__device__ __forceinline__ uint32_t mask_nibble(uint32_t bits, int k) { return ps_mask_nibble_bytes(bits, (ps_u32)k); }

/* The byte mask of N (8, 16 or 32) rows from `row` (a multiple of N): bit i
 * of bits is row row + i. whole: every row is below rows and the mask is
 * 16-byte aligned (vector stores); else byte by byte, nothing at or past
 * rows. */
template <int N>
__device__ __forceinline__ void store_mask(uint8_t *mask, uint32_t rows, uint64_t row, uint32_t bits, bool whole) {
  if (whole) {
    if constexpr (N == 8) {
      *reinterpret_cast<uint2 *>(mask + row) = make_uint2(mask_nibble(bits, 0), mask_nibble(bits, 1));
    } else {
#pragma unroll
      for (int q = 0; q < N / 16; q++)
        reinterpret_cast<uint4 *>(mask + row)[q] = make_uint4(mask_nibble(bits, 4 * q), mask_nibble(bits, 4 * q + 1),
                                                              mask_nibble(bits, 4 * q + 2), mask_nibble(bits, 4 * q + 3));
    }
    return;
  }
  for (int i = 0; i < N && row + i < rows; i++) mask[row + i] = (uint8_t)((bits >> i) & 1u);
}

/* Mask of the rows below `rows` among the 32 rows from `first`. */
__device__ __forceinline__ uint32_t rows_mask(uint64_t first, uint32_t rows) {
  if (first + 32 <= rows) return 0xffffffffu;
  if (first >= rows) return 0u;
  return (1u << (rows - first)) - 1u;
}

/* The tile's vectors from `first` (every load issued before any is used). */
template <int W>
__device__ __forceinline__ void direct_load(const ps_cuda_range_params &p, uint32_t first, uint32_t vecs, uint4 *x) {
  if (p.data_aligned16 && first + kDirectTile <= vecs && (uint64_t)(first + kDirectTile) * 16 <= p.data_bytes) {
#pragma unroll
    for (int m = 0; m < kDirectVecs; m++)
      x[m] = __ldg(reinterpret_cast<const uint4 *>(p.data) + first + m * kThreads + threadIdx.x);
    return;
  }
#pragma unroll
  for (int m = 0; m < kDirectVecs; m++) { /* the stream's end: bounds per word */
    const uint32_t v = first + m * kThreads + threadIdx.x;
    const uint64_t word = 4 * (uint64_t)v;
    if (v >= vecs) x[m] = make_uint4(0, 0, 0, 0);
    else if (p.data_aligned16 && (word + 4) * 4 <= p.data_bytes) x[m] = __ldg(reinterpret_cast<const uint4 *>(p.data) + v);
    else x[m] = make_uint4(load_word(p.data, p.data_bytes, word), load_word(p.data, p.data_bytes, word + 1),
                           load_word(p.data, p.data_bytes, word + 2), load_word(p.data, p.data_bytes, word + 3));
  }
}

/* LoZero: lo == 0 (the host picks the instantiation; only 4 and 8 bits
 * have one, where it saves the lane subtraction). */
template <int W, bool Limit, bool LoZero = false>
__global__ void __launch_bounds__(kThreads) range_direct_kernel(const __grid_constant__ ps_cuda_range_params p) {
  static_assert(PS_RB_WORD_LOCAL(W), "direct kernel: codes must not straddle words");
  constexpr int B = 128 / W;              /* result bits per vector */
  constexpr int kOut = B >= 32 ? B / 32 : 1; /* result words per vector (B < 32: one partial word) */
  typedef cub::BlockReduce<uint32_t, kThreads> Reduce;
  __shared__ typename Reduce::TempStorage reduce_tmp;

  const uint32_t words = (p.rows + 31) / 32;
  const uint32_t vecs = (uint32_t)(((uint64_t)words * W + 3) / 4); /* stream vectors of the chunk's codes */
  const uint64_t out_bytes = ((uint64_t)p.rows + 7) / 8;
  uint32_t L, S, LL = 0, LS = 0;
  ps_rb_word_consts(p.lo, p.span, W, &L, &S);
  if constexpr (Limit) ps_rb_word_consts(0, p.limit, W, &LL, &LS);
  /* Vector stores and validity loads of the whole tile need 16-byte alignment. */
  const bool out16 = !p.bitmap || ((uintptr_t)p.bitmap & 15) == 0;
  const bool val16 = !p.validity || ((uintptr_t)p.validity & 15) == 0;
  const bool mask16 = !p.mask || ((uintptr_t)p.mask & 15) == 0;
  const uint32_t step = gridDim.x * kDirectTile;
  uint32_t selected = 0, bad = 0;

  uint32_t first = blockIdx.x * kDirectTile;
  uint4 next[kDirectVecs];
  if (first < vecs) direct_load<W>(p, first, vecs, next);
  for (; first < vecs; first += step) {
    uint4 x[kDirectVecs];
#pragma unroll
    for (int m = 0; m < kDirectVecs; m++) x[m] = next[m];
    if (first + step < vecs) direct_load<W>(p, first + step, vecs, next); /* in flight during the compute */
    /* A whole tile inside the chunk's rows and the validity bytes: no
     * per-vector bounds (every tile but the chunk's last). */
    const uint64_t end_bits = (uint64_t)(first + kDirectTile) * B;
    const bool whole =
        end_bits <= p.rows && out16 && val16 && mask16 && (!p.validity || end_bits / 8 <= p.validity_bytes);
#pragma unroll
    for (int m = 0; m < kDirectVecs; m++) {
      const uint32_t v = first + m * kThreads + threadIdx.x;
      uint32_t bits[kOut], ok[kOut];
      const uint32_t xs[4] = {x[m].x, x[m].y, x[m].z, x[m].w};
      ps_rb_vector_bits(xs, L, S, W, LoZero, bits);
      if constexpr (Limit) {
        /* Lanes above the limit, without the compression; the exact per-row
         * bits (nulls, rows past the end may hold any code) only if any. */
        bool any = true;
        if constexpr (W > 1) {
          constexpr uint32_t lsbs = PS_RB_LSBS(W);
          const uint32_t lim = (uint32_t)p.limit * lsbs;
          any = (PS_RB_LANE_LT(lim, x[m].x, PS_RB_HIGHS(W)) | PS_RB_LANE_LT(lim, x[m].y, PS_RB_HIGHS(W)) |
                 PS_RB_LANE_LT(lim, x[m].z, PS_RB_HIGHS(W)) | PS_RB_LANE_LT(lim, x[m].w, PS_RB_HIGHS(W))) != 0;
        }
        if (any) {
          ps_rb_vector_bits(xs, LL, LS, W, 1, ok); /* [0, limit] */
        } else {
#pragma unroll
          for (int j = 0; j < kOut; j++) ok[j] = ~0u;
        }
      }
      uint32_t live[kOut];
      if (whole) {
        /* validity: the same B bits, one load */
        if constexpr (B == 128) {
          uint4 q = p.validity ? __ldg(reinterpret_cast<const uint4 *>(p.validity) + v) : make_uint4(~0u, ~0u, ~0u, ~0u);
          live[0] = q.x, live[1] = q.y, live[2] = q.z, live[3] = q.w;
        } else if constexpr (B == 64) {
          uint2 q = p.validity ? __ldg(reinterpret_cast<const uint2 *>(p.validity) + v) : make_uint2(~0u, ~0u);
          live[0] = q.x, live[1] = q.y;
        } else if constexpr (B == 32) {
          live[0] = p.validity ? __ldg(reinterpret_cast<const uint32_t *>(p.validity) + v) : ~0u;
        } else if constexpr (B == 16) {
          live[0] = p.validity ? (uint32_t)__ldg(reinterpret_cast<const uint16_t *>(p.validity) + v) : 0xffffu;
        } else {
          live[0] = p.validity ? (uint32_t)__ldg(p.validity + v) : 0xffu;
        }
      } else if (v < vecs) {
#pragma unroll
        for (int j = 0; j < kOut; j++) {
          const uint64_t bit0 = (uint64_t)v * B + 32 * j; /* first row of this (partial) word */
          uint32_t m32 = rows_mask(bit0, p.rows);
          if constexpr (B < 32) m32 &= (1u << B) - 1u;
          if (p.validity) m32 &= load_bytes<(B >= 32 ? 4 : B / 8)>(p.validity, p.validity_bytes, bit0 / 8);
          live[j] = m32;
        }
      } else {
#pragma unroll
        for (int j = 0; j < kOut; j++) live[j] = 0;
      }
#pragma unroll
      for (int j = 0; j < kOut; j++) {
        bits[j] = (bits[j] ^ p.negate_mask) & live[j];
        if constexpr (Limit) bad |= ~ok[j] & live[j];
        selected += __popc(bits[j]);
      }
      if (p.mask && (whole || v < vecs)) {
#pragma unroll
        for (int j = 0; j < kOut; j++)
          store_mask<(B >= 32 ? 32 : B)>(p.mask, p.rows, (uint64_t)v * B + 32 * j, bits[j], whole);
      }
      if (!p.bitmap) continue;
      if (whole) {
        if constexpr (B == 128) reinterpret_cast<uint4 *>(p.bitmap)[v] = make_uint4(bits[0], bits[1], bits[2], bits[3]);
        else if constexpr (B == 64) reinterpret_cast<uint2 *>(p.bitmap)[v] = make_uint2(bits[0], bits[1]);
        else if constexpr (B == 32) reinterpret_cast<uint32_t *>(p.bitmap)[v] = bits[0];
        else if constexpr (B == 16) reinterpret_cast<uint16_t *>(p.bitmap)[v] = (uint16_t)bits[0];
        else p.bitmap[v] = (uint8_t)bits[0];
      } else if (v < vecs) {
#pragma unroll
        for (int j = 0; j < kOut; j++)
          store_bytes<(B >= 32 ? 4 : B / 8)>(p.bitmap, out_bytes, ((uint64_t)v * B + 32 * j) / 8, bits[j]);
      }
    }
  }
  finish<Limit>(p, selected, bad, reduce_tmp);
}

} // namespace

#include "range_async.cuh"

namespace {

/* The kernel for width W: direct (codes within words), async (codes that
 * straddle, below 32 bits) or staged (the rest). */
template <int W, bool Limit, bool LoZero = false>
constexpr void (*kernel_of())(ps_cuda_range_params) {
  if constexpr (PS_RB_WORD_LOCAL(W)) return range_direct_kernel<W, Limit, LoZero && (W == 4 || W == 8)>;
  else if constexpr (use_async<W>()) return range_async_kernel<W, Limit>;
  else return range_kernel<W, Limit>;
}

template <int W>
constexpr int threads_of() {
  return use_async<W>() ? kAsyncThreads : kThreads;
}

/* Limit checks are compiled for widths up to 32 only: at 48-64 bits they cost
 * the prefetching kernel 36-83 more registers per thread (ptxas), and the
 * host sends such columns to the general kernel. */
template <int W>
constexpr bool has_limit_variant() {
  return W <= 32;
}

/* Blocks that fill the device: resident blocks of this instantiation per SM
 * times the SMs, measured once per width per process (atomic: contexts may
 * launch from several threads; with GPUs of different SM counts the first
 * one's figure is used, which changes the grid size, never a result). */
template <int W>
uint32_t resident_blocks(uint32_t fallback) {
  static std::atomic<uint32_t> cached{0};
  if (!cached.load(std::memory_order_relaxed)) {
    int dev = 0, sms = 0, per_sm = 0;
    if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
        cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel_of<W, false>(), threads_of<W>(), 0) !=
            cudaSuccess ||
        per_sm <= 0) {
      (void)cudaGetLastError();
      return fallback;
    }
    cached.store((uint32_t)per_sm * (uint32_t)sms, std::memory_order_relaxed);
  }
  return cached.load(std::memory_order_relaxed);
}

/* The grid, in waves of resident blocks (0: one block per tile), as measured
 * on the H200 (docs/benchmarks.md): the direct kernel is faster with one
 * block per tile below 16 bits and with two waves at 16; the staged kernel
 * from 16 bits up with one wave, its next tile's loads in flight during the
 * compute; the async kernel's warps loop over chunks. */
template <int W>
constexpr uint32_t waves_of() {
  if constexpr (PS_RB_WORD_LOCAL(W)) return W == 16 ? 2u : 0u;
  else if constexpr (use_async<W>()) return 1u;
  else return pipelined<W>() ? 1u : 0u;
}

template <int W>
cudaError_t launch(const ps_cuda_range_params &p, uint32_t max_blocks, cudaStream_t stream) {
  constexpr bool direct = PS_RB_WORD_LOCAL(W);
  constexpr bool async = use_async<W>();
  constexpr int threads = threads_of<W>();
  const uint64_t words = ((uint64_t)p.rows + 31) / 32;
  /* tiles: vectors (direct), result words (staged; async: 32 per warp) */
  const uint64_t units = direct ? (words * W + 3) / 4 : words;
  const uint64_t tile = async ? 32ull * kAsyncWarps : (uint64_t)kThreads * (direct ? kDirectVecs : words_per_thread<W>());
  const uint64_t want = (units + tile - 1) / tile;
  constexpr uint32_t waves = waves_of<W>();
  const uint64_t fill = waves ? (uint64_t)resident_blocks<W>(max_blocks) * waves : want;
  const uint32_t blocks = (uint32_t)(want < fill ? want : fill); /* want < 2^31: rows <= 2^31 */
  const bool lo_zero = p.lo == 0; /* x < c, x <= c */
  if constexpr (has_limit_variant<W>()) {
    if (p.check_limit) {
      (lo_zero ? kernel_of<W, true, true>() : kernel_of<W, true>())<<<blocks ? blocks : 1, threads, 0, stream>>>(p);
      return cudaGetLastError();
    }
  } else {
    if (p.check_limit) return cudaErrorInvalidValue; /* the host never sends these */
  }
  (lo_zero ? kernel_of<W, false, true>() : kernel_of<W, false>())<<<blocks ? blocks : 1, threads, 0, stream>>>(p);
  return cudaGetLastError();
}

typedef cudaError_t (*launch_fn)(const ps_cuda_range_params &, uint32_t, cudaStream_t);

/* Launches the instantiation for width w, one of Lo + Is. Each
 * range_words_<k>.cu instantiates one slice of the widths so that the 65
 * instantiations compile in parallel. */
template <int Lo, int... Is>
cudaError_t dispatch_width(int w, const ps_cuda_range_params &p, uint32_t max_blocks, cudaStream_t stream,
                           std::integer_sequence<int, Is...>) {
  static constexpr launch_fn fns[] = {&launch<Lo + Is>...};
  return fns[w - Lo](p, max_blocks, stream);
}

} // namespace

#endif
