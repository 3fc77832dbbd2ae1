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
 * entries is 125 KB: 16.5 MB of L2 reads for 132 blocks), then each warp
 * runs range_async.cuh's loop (a 1024-row chunk of codes and validity
 * copied with cp.async one or two chunks ahead, __syncwarp only) with a
 * shared-memory lookup per code. Blocks are resident (one per SM when the
 * set is big), so the copy is paid once per block. On the staged loop of
 * range_kernel (a block's tile through registers and shared memory between
 * two __syncthreads) one block of 16 warps per SM waited on its own
 * barriers with DRAM half idle (docs/benchmarks.md).
 */
#ifndef PS_SET_KERNEL_CUH
#define PS_SET_KERNEL_CUH

#include "range_kernel.cuh"

namespace {

constexpr int kSetThreads = 512;
constexpr int kSetWarps = kSetThreads / 32;

/* Words of the shared set region, rounded so that the staging after it
 * starts on a 128-byte boundary. */
__host__ __device__ inline uint32_t set_region_words(uint32_t set_words) { return (set_words + 31u) & ~31u; }

/* Bytes of staging per block: Stages buffers per warp of a chunk's codes
 * and validity (range_async.cuh's layout). */
template <int W>
__host__ __device__ constexpr uint32_t set_stage_bytes(int stages) {
  return (uint32_t)(kSetWarps * stages * (8 * W + 8) * 16);
}

template <int W, int Stages>
__global__ void __launch_bounds__(kSetThreads) set_kernel(const __grid_constant__ ps_cuda_range_params p) {
  static_assert(W >= 1 && W <= 32, "set_kernel: widths 1..32");
  constexpr int V = 8 * W;
  constexpr int G = 32 - W; /* bits below a code in code_top's result */
  extern __shared__ __align__(16) uint32_t smem[];
  uint32_t *const set = smem;
  typedef cub::BlockReduce<uint32_t, kSetThreads> Reduce;
  __shared__ typename Reduce::TempStorage reduce_tmp;

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  uint4 *const stages = reinterpret_cast<uint4 *>(smem + set_region_words(p.set_words)) + warp * Stages * (V + 8);
  const async_bounds b = async_bounds_of<W>(p);
  const uint64_t out_bytes = ((uint64_t)p.rows + 7) / 8;
  const uint32_t step = gridDim.x * kSetWarps;
  uint32_t c = blockIdx.x * kSetWarps + warp;
  const uint32_t limit = (uint32_t)p.limit; /* <= 2^W - 1 */
  const uint32_t limit_top = (limit << G) | (uint32_t)(((uint64_t)1 << G) - 1);
  uint32_t selected = 0, bad = 0;

  /* the first chunks' copies fly while the set is copied */
#pragma unroll
  for (int s = 0; s < Stages - 1; s++) async_issue<W>(p, b, c + s * step, stages + s * (V + 8), lane);
  for (uint32_t i = threadIdx.x; i < p.set_words; i += kSetThreads) set[i] = __ldg(p.set + i);
  __syncthreads(); /* the set, for every warp */

  for (int s = 0; c < b.chunks; c += step, s = s == Stages - 1 ? 0 : s + 1) {
    const int refill = s == 0 ? Stages - 1 : s - 1; /* the stage computed last round (this one with one stage) */
    async_issue<W>(p, b, c + (Stages - 1) * step, stages + refill * (V + 8), lane);
    __pipeline_wait_prior(Stages - 1); /* this round's copies (our own) are done */
    __syncwarp();                      /* ... and every lane's */
    const uint4 *stage = stages + s * (V + 8);
    const uint32_t g = c * 32 + lane;
    if (g < b.words) {
      uint32_t w[W + 2];
      async_words<W>(stage, lane, w);
      w[W] = 0, w[W + 1] = 0;
      uint32_t live = p.validity ? reinterpret_cast<const uint32_t *>(stage + V)[lane] : 0xffffffffu;
      if (g == b.words - 1 && (p.rows & 31)) live &= (1u << (p.rows & 31)) - 1u;
      /* corrupt codes: one max per code, the exact per-row test only when it fails */
      if (ps_rb_max_code_top(w, W) > limit_top) bad |= ~ps_range_bits(w, W, 0, limit) & live;
      uint32_t hits = 0;
#pragma unroll
      for (int j = 0; j < 32; j++) {
        /* clamped: a null row or a row past the end may hold any code, and a
         * corrupt one has been flagged above; none may read past the set */
        const uint32_t code = min(ps_rb_code_top(w, W, j) >> G, limit) + p.set_shift;
        hits |= ((set[code >> 5] >> (code & 31)) & 1u) << j;
      }
      const uint32_t bits = (hits ^ p.negate_mask) & live;
      selected += __popc(bits);
      if (g < b.out_words) reinterpret_cast<uint32_t *>(p.bitmap)[g] = bits;
      else if (p.bitmap) store_word(p, out_bytes, g, bits);
    }
    __syncwarp(); /* every lane has read stage s before it is refilled */
  }
  __pipeline_wait_prior(0); /* no copy outlives the kernel's shared memory */
  finish<true, kSetThreads>(p, selected, bad, reduce_tmp);
}

/* The dynamic shared memory this instantiation may use on the current
 * device: the opt-in limit less its static shared memory, raised once per
 * device per process (a function attribute belongs to one device's
 * context: cached once per process, a second GPU would launch with the
 * 48 KB default and fail); 0 if the device refuses (the caller then runs
 * the general kernel). */
template <int W, int Stages>
size_t set_max_dynamic() {
  constexpr int kDevices = 16;               /* cached for devices 0..15; others ask every time */
  static std::atomic<long long> cached[kDevices]; /* bytes + 1; 0: not asked yet */
  int dev = 0;
  if (cudaGetDevice(&dev) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  if (dev >= 0 && dev < kDevices) {
    const long long c = cached[dev].load(std::memory_order_relaxed);
    if (c) return (size_t)(c - 1);
  }
  long long v = 0;
  int optin = 0;
  cudaFuncAttributes fa;
  if (cudaDeviceGetAttribute(&optin, cudaDevAttrMaxSharedMemoryPerBlockOptin, dev) == cudaSuccess &&
      cudaFuncGetAttributes(&fa, set_kernel<W, Stages>) == cudaSuccess && (size_t)optin > fa.sharedSizeBytes) {
    const size_t want = (size_t)optin - fa.sharedSizeBytes;
    if (cudaFuncSetAttribute(set_kernel<W, Stages>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)want) ==
        cudaSuccess)
      v = (long long)want;
  }
  (void)cudaGetLastError(); /* a refusal is an answer, not an error of the next launch */
  if (dev >= 0 && dev < kDevices) cached[dev].store(v + 1, std::memory_order_relaxed);
  return (size_t)v;
}

template <int W, int Stages>
cudaError_t launch_set_stages(const ps_cuda_range_params &p, size_t smem, cudaStream_t stream) {
  int dev = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, set_kernel<W, Stages>, kSetThreads, smem) != cudaSuccess ||
      per_sm <= 0) {
    (void)cudaGetLastError();
    return cudaErrorNotSupported;
  }
  const uint64_t chunks = (((uint64_t)p.rows + 31) / 32 + 31) / 32;
  const uint64_t want = (chunks + kSetWarps - 1) / kSetWarps;
  const uint64_t fill = (uint64_t)per_sm * (uint64_t)sms;
  const uint32_t blocks = (uint32_t)(want < fill ? want : fill);
  set_kernel<W, Stages><<<blocks ? blocks : 1, kSetThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

/* Three buffers per warp where they fit beside the set, else two, else one
 * (a 10^6-entry set at 20 bits: two). */
template <int W>
cudaError_t launch_set(const ps_cuda_range_params &p, cudaStream_t stream) {
  const size_t set_bytes = (size_t)set_region_words(p.set_words) * sizeof(uint32_t);
  if (set_bytes + set_stage_bytes<W>(3) <= set_max_dynamic<W, 3>())
    return launch_set_stages<W, 3>(p, set_bytes + set_stage_bytes<W>(3), stream);
  if (set_bytes + set_stage_bytes<W>(2) <= set_max_dynamic<W, 2>())
    return launch_set_stages<W, 2>(p, set_bytes + set_stage_bytes<W>(2), stream);
  if (set_bytes + set_stage_bytes<W>(1) <= set_max_dynamic<W, 1>())
    return launch_set_stages<W, 1>(p, set_bytes + set_stage_bytes<W>(1), stream);
  return cudaErrorNotSupported;
}

typedef cudaError_t (*set_launch_fn)(const ps_cuda_range_params &, cudaStream_t);

template <int Lo, int... Is>
cudaError_t dispatch_set(int w, const ps_cuda_range_params &p, cudaStream_t stream, std::integer_sequence<int, Is...>) {
  static constexpr set_launch_fn fns[] = {&launch_set<Lo + Is>...};
  return fns[w - Lo](p, stream);
}

} // namespace

#endif
