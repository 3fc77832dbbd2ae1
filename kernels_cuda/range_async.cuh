/*
 * range_async.cuh: the single-range fast path at the widths whose codes
 * straddle 32-bit words, below 32 bits (3, 5-7, 9-15, 17-31): one warp per
 * chunk of 32 result words (1024 rows, 32*W stream words), no block barrier.
 *
 * Why not the staged kernel (range_kernel in range_kernel.cuh): it stages a
 * block's tile through registers and shared memory between two
 * __syncthreads, so a block's loads, its compute and its stores take turns;
 * at these widths ncu found neither DRAM nor the ALU saturated: it was
 * latency-bound (docs/benchmarks.md).
 * Here every warp keeps two chunks of cp.async copies in flight
 * (global -> shared, no registers held) while it computes a third, and only
 * __syncwarp orders a warp's lanes. Lane l then reads its W words (the 32
 * codes of result word l) from the chunk with 16-, 8- or 4-byte shared loads
 * (conflict-free at W = 12, 20, 28 and every odd W; 2-way at 24) and
 * compares each code in the top bits of a 32-bit value, as range_bits does.
 */
#ifndef PS_RANGE_ASYNC_CUH
#define PS_RANGE_ASYNC_CUH

/* Included by range_kernel.cuh, after load_word, store_word and finish. */
#include <cuda_pipeline_primitives.h>

namespace {

constexpr int kAsyncWarps = 4; /* 4 warps: 3 stages of 128W + 128 bytes per warp fit the 48 KB static limit up to W = 31 */
constexpr int kAsyncThreads = 32 * kAsyncWarps;
/* Buffers per warp: one computed, two in flight; at 31 bits three do not
 * fit the 48 KB (one in flight there). */
template <int W>
__host__ __device__ constexpr int async_stages() {
  return W < 31 ? 3 : 2;
}

template <int W>
__host__ __device__ constexpr bool use_async() {
  return W > 0 && W < 32 && !PS_RB_WORD_LOCAL(W);
}

/* What a thread works out once (32-bit indexes: a chunk has at most 2^31
 * rows, so 2^21 chunks, 2^26 result words and 2^29 stream vectors; the
 * 64-bit index arithmetic per round was a large share of the instructions
 * per result word in the SASS). */
struct async_bounds {
  uint32_t words, chunks;
  uint32_t data_chunks;  /* chunks whose codes lie in data_bytes, copied by cp.async (0: unaligned) */
  uint32_t valid_chunks; /* chunks whose validity bytes lie in validity_bytes, 16-byte aligned */
  uint32_t out_words;    /* result words stored whole (0: bitmap unaligned) */
};

template <int W>
__device__ __forceinline__ async_bounds async_bounds_of(const ps_cuda_range_params &p) {
  async_bounds b;
  b.words = (uint32_t)(((uint64_t)p.rows + 31) / 32);
  b.chunks = (b.words + 31) / 32;
  const uint64_t dc = p.data_aligned16 ? p.data_bytes / (128ull * W) : 0;
  b.data_chunks = (uint32_t)(dc < b.chunks ? dc : b.chunks); /* unaligned data: every chunk by plain loads, nothing in flight */
  const uint64_t vc = p.validity && ((uintptr_t)p.validity & 15u) == 0 ? p.validity_bytes / 128 : 0;
  b.valid_chunks = (uint32_t)(vc < b.chunks ? vc : b.chunks);
  b.out_words = p.bitmap && p.bitmap_aligned ? (uint32_t)((((uint64_t)p.rows + 7) / 8) / 4) : 0;
  return b;
}

/* A warp's chunk: 32 result words, 32*W stream words, 8*W 16-byte vectors,
 * then (with a validity bitmap) the chunk's 32 validity words, 8 more
 * vectors: a synchronous validity load per word kept every warp waiting a
 * DRAM round trip per chunk (`nulls` well below the same width without
 * nulls: docs/benchmarks.md). */
template <int W>
__device__ __forceinline__ void async_issue(const ps_cuda_range_params &p, const async_bounds &b, uint32_t chunk,
                                            uint4 *stage, int lane) {
  constexpr int V = 8 * W;
  if (chunk < b.chunks) {
    if (chunk < b.data_chunks) {
      const uint4 *src = reinterpret_cast<const uint4 *>(p.data) + chunk * (uint32_t)V;
#pragma unroll
      for (int j = 0; j < (V + 31) / 32; j++) {
        const int i = lane + 32 * j;
        if (i < V) __pipeline_memcpy_async(stage + i, src + i, 16);
      }
    } else {
      /* The stream's end, or an unaligned stream: plain loads, reading
       * nothing past data_bytes (zeros there); visible after __syncwarp. */
      uint32_t *sw = reinterpret_cast<uint32_t *>(stage);
      for (int i = lane; i < 4 * V; i += 32) sw[i] = load_word(p.data, p.data_bytes, 4ull * V * chunk + i);
    }
    if (p.validity) {
      if (chunk < b.valid_chunks) {
        if (lane < 8) __pipeline_memcpy_async(stage + V + lane, p.validity + chunk * 128u + 16 * lane, 16);
      } else {
        reinterpret_cast<uint32_t *>(stage + V)[lane] = load_word(p.validity, p.validity_bytes, chunk * 32ull + lane);
      }
    }
  }
  __pipeline_commit(); /* an empty group past the end keeps the count uniform */
}

/* Lane l's W words of the chunk in shared memory, the widest loads its
 * alignment allows (l*W*4 bytes in). */
template <int W>
__device__ __forceinline__ void async_words(const uint4 *stage, int lane, uint32_t *w) {
  if constexpr (W % 4 == 0) {
    const uint4 *q = stage + lane * (W / 4);
#pragma unroll
    for (int k = 0; k < W / 4; k++) {
      const uint4 x = q[k];
      w[4 * k] = x.x, w[4 * k + 1] = x.y, w[4 * k + 2] = x.z, w[4 * k + 3] = x.w;
    }
  } else if constexpr (W % 2 == 0) {
    const uint2 *q = reinterpret_cast<const uint2 *>(stage) + lane * (W / 2);
#pragma unroll
    for (int k = 0; k < W / 2; k++) {
      const uint2 x = q[k];
      w[2 * k] = x.x, w[2 * k + 1] = x.y;
    }
  } else {
    const uint32_t *q = reinterpret_cast<const uint32_t *>(stage) + lane * W;
#pragma unroll
    for (int k = 0; k < W; k++) w[k] = q[k];
  }
}

template <int W, bool Limit>
__global__ void __launch_bounds__(kAsyncThreads) range_async_kernel(const __grid_constant__ ps_cuda_range_params p) {
  static_assert(use_async<W>(), "async kernel: widths that straddle, below 32");
  constexpr int V = 8 * W;
  constexpr int kStages = async_stages<W>();
  __shared__ __align__(16) uint4 buf[kAsyncWarps][kStages][V + 8]; /* codes, validity */
  typedef cub::BlockReduce<uint32_t, kAsyncThreads> Reduce;
  __shared__ typename Reduce::TempStorage reduce_tmp;

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const async_bounds b = async_bounds_of<W>(p);
  const uint64_t out_bytes = ((uint64_t)p.rows + 7) / 8;
  const uint32_t step = gridDim.x * kAsyncWarps; /* resident warps: far below 2^32 */
  uint32_t c = blockIdx.x * kAsyncWarps + warp;
  uint4(*stages)[V + 8] = buf[warp];
  uint32_t selected = 0, bad = 0;

#pragma unroll
  for (int s = 0; s < kStages - 1; s++) async_issue<W>(p, b, c + s * step, stages[s], lane);
  for (int s = 0; c < b.chunks; c += step, s = s == kStages - 1 ? 0 : s + 1) {
    const int refill = s == 0 ? kStages - 1 : s - 1; /* the stage computed last round */
    async_issue<W>(p, b, c + (kStages - 1) * step, stages[refill], lane);
    __pipeline_wait_prior(kStages - 1); /* this round's copies (our own) are done */
    __syncwarp();                       /* ... and every lane's */
    const uint32_t g = c * 32 + lane;   /* this lane's result word */
    if (g < b.words) {
      uint32_t w[W + 2];
      async_words<W>(stages[s], lane, w);
      const uint32_t *valid = reinterpret_cast<const uint32_t *>(stages[s] + V);
      w[W] = 0, w[W + 1] = 0;
      uint32_t bits = ps_range_bits(w, W, p.lo, p.span) ^ p.negate_mask;
      uint32_t live = p.validity ? valid[lane] : 0xffffffffu;
      if (g == b.words - 1 && (p.rows & 31)) live &= (1u << (p.rows & 31)) - 1u;
      if constexpr (Limit) {
        constexpr int G = 32 - W;
        const uint32_t limit_top = ((uint32_t)p.limit << G) | (uint32_t)(((uint64_t)1 << G) - 1);
        if (ps_rb_max_code_top(w, W) > limit_top) bad |= ~ps_range_bits(w, W, 0, p.limit) & live;
      }
      bits &= live;
      selected += __popc(bits);
      if (g < b.out_words) reinterpret_cast<uint32_t *>(p.bitmap)[g] = bits;
      else if (p.bitmap) store_word(p, out_bytes, g, bits);
    }
    __syncwarp(); /* every lane has read stage s before the next round refills it */
  }
  __pipeline_wait_prior(0); /* no copy outlives the kernel's shared memory */
  finish<Limit, kAsyncThreads>(p, selected, bad, reduce_tmp);
}

} // namespace

#endif
