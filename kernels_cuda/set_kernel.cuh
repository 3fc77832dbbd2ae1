/*
 * set_kernel.cuh: the fast path for a single SET leaf (col IN (...) lowered
 * to a bitmap over codes, LIKE '%abc%' on a dictionary column): row selected
 * iff valid and (bit (set_shift + code) of the set != negate); a valid row
 * whose code is above the column's limit raises the corrupt flag
 * (ps_program.h). Widths 1..32.
 *
 * Why: the general kernel looks each code up in the aux words in global
 * memory, 32 scattered loads per result word, served by L1/L2. Here every
 * block first copies the set into shared memory (a dictionary of 10^6
 * entries is 125 KB: 16.5 MB of L2 reads for 132 blocks), then runs the
 * range kernel's staged loop (coalesced 16-byte loads through a shared tile,
 * the next tile's loads in flight during the compute) with a shared-memory
 * lookup per code. Blocks are resident (one or two per SM: the set is big),
 * so the copy is paid once per block, not per tile.
 */
#ifndef PS_SET_KERNEL_CUH
#define PS_SET_KERNEL_CUH

#include "range_kernel.cuh"

namespace {

constexpr int kSetThreads = 512;

/* Words of the shared set region, rounded so that the tile after it starts on
 * a 128-byte boundary. */
__host__ __device__ inline uint32_t set_region_words(uint32_t set_words) { return (set_words + 31u) & ~31u; }

template <int W>
__host__ __device__ constexpr uint32_t set_tile_words() {
  return (uint32_t)(kSetThreads * words_per_thread<W>() * stride<W>());
}

template <int W>
__global__ void __launch_bounds__(kSetThreads) set_kernel(const __grid_constant__ ps_cuda_range_params p) {
  static_assert(W >= 1 && W <= 32, "set_kernel: widths 1..32");
  constexpr int S = stride<W>();
  constexpr int R = words_per_thread<W>();
  constexpr int kTile = kSetThreads * R; /* result words per tile */
  constexpr int G = 32 - W;              /* bits below a code in code_top's result */
  extern __shared__ uint32_t smem[];
  uint32_t *const set = smem;
  uint32_t *const tile = smem + set_region_words(p.set_words);
  typedef cub::BlockReduce<uint32_t, kSetThreads> Reduce;
  __shared__ typename Reduce::TempStorage reduce_tmp;

  for (uint32_t i = threadIdx.x; i < p.set_words; i += kSetThreads) set[i] = __ldg(p.set + i);
  /* visible after the first tile's barrier: the grid has no more blocks than tiles */

  const uint64_t words = ((uint64_t)p.rows + 31) / 32;
  const uint64_t out_bytes = ((uint64_t)p.rows + 7) / 8;
  const uint64_t step = (uint64_t)gridDim.x * kTile;
  const uint32_t limit = (uint32_t)p.limit; /* <= 2^W - 1 */
  const uint32_t limit_top = (limit << G) | (uint32_t)(((uint64_t)1 << G) - 1);
  uint32_t selected = 0, bad = 0;
  tile_loads<W, kSetThreads> in;
  uint64_t first = (uint64_t)blockIdx.x * kTile;
  if (first < words) in.load(p, first);
  for (; first < words; first += step) {
    in.stage(tile);
    __syncthreads();
    if (first + step < words) in.load(p, first + step); /* in flight during the compute below */
#pragma unroll
    for (int m = 0; m < R; m++) {
      const int local = m * kSetThreads + threadIdx.x; /* consecutive threads, consecutive words */
      const uint64_t g = first + local;
      if (g >= words) break;
      uint32_t w[W + 2];
#pragma unroll
      for (int k = 0; k < W; k++) w[k] = tile[local * S + k];
      w[W] = 0, w[W + 1] = 0;
      uint32_t live = p.validity ? load_word(p.validity, p.validity_bytes, g) : 0xffffffffu;
      if (g == words - 1 && (p.rows & 31)) live &= (1u << (p.rows & 31)) - 1u;
      /* corrupt codes: one max per code, the exact per-row test only when it fails */
      if (ps_range::max_code_top<W>(w) > limit_top) bad |= ~ps_range::range_bits<W>(w, 0, limit) & live;
      uint32_t hits = 0;
#pragma unroll
      for (int j = 0; j < 32; j++) {
        /* clamped: a null row or a row past the end may hold any code, and a
         * corrupt one has been flagged above; none may read past the set */
        const uint32_t code = min(ps_range::code_top<W>(w, j) >> G, limit) + p.set_shift;
        hits |= ((set[code >> 5] >> (code & 31)) & 1u) << j;
      }
      const uint32_t bits = (hits ^ p.negate_mask) & live;
      selected += __popc(bits);
      if (p.bitmap) store_word(p, out_bytes, g, bits);
    }
    __syncthreads(); /* the tile is rewritten next round */
  }
  finish<true, kSetThreads>(p, selected, bad, reduce_tmp);
}

/* The dynamic shared memory this width may use: the opt-in limit less the
 * kernel's static shared memory, raised once per width per process; 0 if
 * the device refuses (the caller then runs the general kernel). */
template <int W>
size_t set_max_dynamic() {
  static std::atomic<long long> cached{-1};
  long long v = cached.load(std::memory_order_relaxed);
  if (v < 0) {
    int dev = 0, optin = 0;
    cudaFuncAttributes fa;
    v = 0;
    if (cudaGetDevice(&dev) == cudaSuccess &&
        cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess &&
        cudaFuncGetAttributes(&fa, set_kernel<W>) == cudaSuccess && (size_t)optin > fa.sharedSizeBytes) {
      const size_t want = (size_t)optin - fa.sharedSizeBytes;
      if (cudaFuncSetAttribute(set_kernel<W>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)want) == cudaSuccess)
        v = (long long)want;
    }
    (void)cudaGetLastError(); /* a refusal is an answer, not an error of the next launch */
    cached.store(v, std::memory_order_relaxed);
  }
  return (size_t)v;
}

template <int W>
cudaError_t launch_set(const ps_cuda_range_params &p, cudaStream_t stream) {
  const size_t smem = ((size_t)set_region_words(p.set_words) + set_tile_words<W>()) * sizeof(uint32_t);
  if (smem > set_max_dynamic<W>()) return cudaErrorNotSupported;
  int dev = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, set_kernel<W>, kSetThreads, smem) != cudaSuccess ||
      per_sm <= 0) {
    (void)cudaGetLastError();
    return cudaErrorNotSupported;
  }
  const uint64_t words = ((uint64_t)p.rows + 31) / 32;
  const uint64_t tile = (uint64_t)kSetThreads * words_per_thread<W>();
  const uint64_t want = (words + tile - 1) / tile;
  const uint64_t fill = (uint64_t)per_sm * (uint64_t)sms;
  const uint32_t blocks = (uint32_t)(want < fill ? want : fill);
  set_kernel<W><<<blocks ? blocks : 1, kSetThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

typedef cudaError_t (*set_launch_fn)(const ps_cuda_range_params &, cudaStream_t);

template <int Lo, int... Is>
cudaError_t dispatch_set(int w, const ps_cuda_range_params &p, cudaStream_t stream, std::integer_sequence<int, Is...>) {
  static constexpr set_launch_fn fns[] = {&launch_set<Lo + Is>...};
  return fns[w - Lo](p, stream);
}

} // namespace

#endif
