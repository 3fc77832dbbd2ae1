/*
 * The range-tree fast path: AND/OR/NOT trees of RANGE leaves over columns of
 * 1..32 bits where no row can be UNKNOWN (no validity bitmap, every w-bit
 * code valid), in one pass. ps_cuda_kernels.h has the contract.
 *
 * Why not the general kernel (eval.cu): it interprets the program with
 * Kleene pairs, a stack in local memory, per-leaf checks for nulls, corrupt
 * codes and selections, and a width switch per code group; ncu counted
 * several times more instructions per 32-row word on the `tree` bench case
 * (three leaves of 12, 20 and 8 bits) than its comparisons need
 * (docs/benchmarks.md). Here, with two values per row, a leaf is ps_range_bits at width W on the
 * lane's W staged words (the same code as the single-range kernels), the
 * stack is four registers addressed by slot numbers the host computed, and
 * the staging is range_async.cuh's: every column of a warp's 1024-row chunk
 * copied with cp.async, __syncwarp only; two chunks ahead (three buffers)
 * while a chunk is at most 2 KB, one chunk ahead (two buffers) above, so
 * that more warps fit an SM (ps_cuda_launch_tree below says why).
 */
#include <atomic>

#include "range_kernel.cuh"

namespace {

constexpr int kTreeWarps = 2;
constexpr int kTreeThreads = 32 * kTreeWarps;

/* Lane l's W words of a column's chunk in shared memory (32*W words from
 * col), compared: bit j set iff code j is in [lo, lo + span]. */
template <int W>
__device__ __forceinline__ uint32_t tree_leaf(const uint32_t *col, int lane, uint32_t lo, uint32_t span) {
  uint32_t w[W + 2];
  async_words<W>(reinterpret_cast<const uint4 *>(col), lane, w);
  w[W] = 0, w[W + 1] = 0;
  return ps_range_bits(w, W, lo, span);
}

/* One switch per leaf (warp-uniform: every lane reads the same instruction). */
__device__ __forceinline__ uint32_t tree_leaf_any(uint32_t width, const uint32_t *col, int lane, uint32_t lo,
                                                  uint32_t span) {
  switch (width) {
#define PS_TREE_CASE(W) \
  case W: return tree_leaf<W>(col, lane, lo, span);
    PS_TREE_CASE(1) PS_TREE_CASE(2) PS_TREE_CASE(3) PS_TREE_CASE(4) PS_TREE_CASE(5) PS_TREE_CASE(6)
    PS_TREE_CASE(7) PS_TREE_CASE(8) PS_TREE_CASE(9) PS_TREE_CASE(10) PS_TREE_CASE(11) PS_TREE_CASE(12)
    PS_TREE_CASE(13) PS_TREE_CASE(14) PS_TREE_CASE(15) PS_TREE_CASE(16) PS_TREE_CASE(17) PS_TREE_CASE(18)
    PS_TREE_CASE(19) PS_TREE_CASE(20) PS_TREE_CASE(21) PS_TREE_CASE(22) PS_TREE_CASE(23) PS_TREE_CASE(24)
    PS_TREE_CASE(25) PS_TREE_CASE(26) PS_TREE_CASE(27) PS_TREE_CASE(28) PS_TREE_CASE(29) PS_TREE_CASE(30)
    PS_TREE_CASE(31) PS_TREE_CASE(32)
#undef PS_TREE_CASE
    default: return 0; /* the host sends 1..32 only */
  }
}

/* The four slots, addressed by a warp-uniform number: selects, not an
 * indexed array (which would live in local memory). */
struct tree_slots {
  uint32_t s0 = 0, s1 = 0, s2 = 0, s3 = 0;
  __device__ __forceinline__ uint32_t get(uint32_t i) const { return i == 0 ? s0 : i == 1 ? s1 : i == 2 ? s2 : s3; }
  __device__ __forceinline__ void set(uint32_t i, uint32_t v) {
    s0 = i == 0 ? v : s0;
    s1 = i == 1 ? v : s1;
    s2 = i == 2 ? v : s2;
    s3 = i == 3 ? v : s3;
  }
};

/* A chunk's copies: every column's 32*W words (8*W vectors) into its place
 * in the buffer; at the stream's end plain loads (zeros past data_bytes).
 * 32-bit indexes (at most 2^21 chunks of 2^29 vectors), as in
 * range_async.cuh. */
__device__ __forceinline__ void tree_issue(const ps_cuda_tree_params &p, uint32_t chunk, uint32_t chunks, uint32_t *buf,
                                           int lane) {
  if (chunk < chunks) {
    for (uint32_t c = 0; c < p.n_cols; c++) {
      const uint32_t V = 8 * p.width[c];
      uint4 *dst = reinterpret_cast<uint4 *>(buf + p.offset[c]);
      if (chunk < p.data_chunks[c]) {
        const uint4 *src = reinterpret_cast<const uint4 *>(p.data[c]) + chunk * V;
        for (uint32_t i = lane; i < V; i += 32) __pipeline_memcpy_async(dst + i, src + i, 16);
      } else {
        uint32_t *dw = buf + p.offset[c];
        for (uint32_t i = lane; i < 4 * V; i += 32)
          dw[i] = load_word(p.data[c], p.data_bytes[c], 4ull * V * chunk + i);
      }
    }
  }
  __pipeline_commit(); /* an empty group past the end keeps the count uniform */
}

template <int Stages>
__global__ void __launch_bounds__(kTreeThreads) tree_kernel(const __grid_constant__ ps_cuda_tree_params p) {
  extern __shared__ __align__(16) uint32_t tree_smem[];
  typedef cub::BlockReduce<uint32_t, kTreeThreads> Reduce;
  __shared__ typename Reduce::TempStorage reduce_tmp;

  const int lane = threadIdx.x & 31, warp = threadIdx.x >> 5;
  const uint32_t words = (p.rows + 31) / 32;
  const uint32_t chunks = (words + 31) / 32;
  const uint32_t out_words = p.bitmap && p.bitmap_aligned ? (uint32_t)((((uint64_t)p.rows + 7) / 8) / 4) : 0;
  const uint32_t step = gridDim.x * kTreeWarps;
  uint32_t *const area = tree_smem + (uint32_t)warp * Stages * p.stage_words;
  uint32_t c = blockIdx.x * kTreeWarps + warp;
  uint32_t selected = 0;

#pragma unroll
  for (int s = 0; s < Stages - 1; s++) tree_issue(p, c + s * step, chunks, area + s * p.stage_words, lane);
  for (int s = 0; c < chunks; c += step, s = s == Stages - 1 ? 0 : s + 1) {
    const int refill = s == 0 ? Stages - 1 : s - 1; /* the buffer computed last round */
    tree_issue(p, c + (Stages - 1) * step, chunks, area + refill * p.stage_words, lane);
    __pipeline_wait_prior(Stages - 1); /* this round's copies (our own) are done */
    __syncwarp();                      /* ... and every lane's */
    const uint32_t *buf = area + s * p.stage_words;
    tree_slots slots;
    for (uint32_t i = 0; i < p.n_insns; i++) {
      const ps_cuda_tree_insn &in = p.insns[i];
      uint32_t v;
      if (in.op == PS_OP_RANGE) {
        v = tree_leaf_any(p.width[in.col], buf + p.offset[in.col], lane, in.lo, in.span) ^ in.negate;
      } else if (in.op == PS_OP_NOT) {
        v = ~slots.get(in.dst);
      } else {
        const uint32_t a = slots.get(in.dst), b = slots.get(in.dst + 1);
        v = in.op == PS_OP_AND ? a & b : a | b;
      }
      slots.set(in.dst, v);
    }
    const uint32_t g = c * 32 + lane;
    if (g < words) {
      uint32_t bits = slots.s0;
      if (g == words - 1 && (p.rows & 31)) bits &= (1u << (p.rows & 31)) - 1u;
      selected += __popc(bits);
      if (g < out_words) {
        reinterpret_cast<uint32_t *>(p.bitmap)[g] = bits;
      } else if (p.bitmap) {
        store_bitmap_word(p.bitmap, p.bitmap_aligned != 0, ((uint64_t)p.rows + 7) / 8, g, bits);
      }
    }
    __syncwarp(); /* every lane has read buffer s before the next round refills it */
  }
  __pipeline_wait_prior(0); /* no copy outlives the kernel's shared memory */
  if (p.count) {
    const uint32_t total = Reduce(reduce_tmp).Sum(selected);
    if (threadIdx.x == 0 && total) atomicAdd(p.count, (unsigned long long)total);
  }
}

/* Resident blocks for a block's dynamic shared memory, per process and
 * stage count (0 if the query fails); the grid is one wave of them. */
template <int Stages>
uint32_t tree_resident_blocks(size_t smem) {
  static std::atomic<uint32_t> cached[48 * 1024 / 16 + 1];
  const size_t key = smem / 16;
  if (key > 48 * 1024 / 16) return 0;
  uint32_t v = cached[key].load(std::memory_order_relaxed);
  if (v) return v;
  int dev = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&dev) != cudaSuccess || cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, tree_kernel<Stages>, kTreeThreads, smem) != cudaSuccess ||
      per_sm <= 0) {
    (void)cudaGetLastError();
    return 0;
  }
  v = (uint32_t)per_sm * (uint32_t)sms;
  cached[key].store(v, std::memory_order_relaxed);
  return v;
}

template <int Stages>
cudaError_t launch_tree(const ps_cuda_tree_params &p, size_t smem, cudaStream_t stream) {
  const uint64_t chunks = (((uint64_t)p.rows + 31) / 32 + 31) / 32;
  const uint64_t want = (chunks + kTreeWarps - 1) / kTreeWarps;
  uint32_t fill = tree_resident_blocks<Stages>(smem);
  if (!fill) fill = 1024;
  const uint32_t blocks = (uint32_t)(want < fill ? want : fill);
  tree_kernel<Stages><<<blocks ? blocks : 1, kTreeThreads, smem, stream>>>(p);
  return cudaGetLastError();
}

} // namespace

extern "C" cudaError_t ps_cuda_launch_tree(const ps_cuda_tree_params *p, cudaStream_t stream) {
  if (!p || p->rows == 0 || p->n_cols == 0 || p->n_cols > PS_CUDA_TREE_MAX_COLS || p->n_insns == 0 ||
      p->n_insns > PS_CUDA_TREE_MAX_INSNS)
    return cudaErrorInvalidValue;
  uint32_t words = 0;
  for (uint32_t c = 0; c < p->n_cols; c++) {
    if (p->width[c] < 1 || p->width[c] > 32 || p->offset[c] != words || ((uintptr_t)p->data[c] & 15u) ||
        (uint64_t)p->data_chunks[c] * 128u * p->width[c] > p->data_bytes[c])
      return cudaErrorInvalidValue;
    words += 32 * p->width[c];
  }
  if (words != p->stage_words) return cudaErrorInvalidValue;
  for (uint32_t i = 0; i < p->n_insns; i++) {
    const ps_cuda_tree_insn &in = p->insns[i];
    const uint32_t top = in.op == PS_OP_AND || in.op == PS_OP_OR ? in.dst + 1 : in.dst;
    if (top >= PS_CUDA_TREE_SLOTS || (in.op == PS_OP_RANGE && in.col >= p->n_cols)) return cudaErrorInvalidValue;
  }
  /* 48 KB a block, static (the reduction's few bytes) and dynamic together,
   * without the opt-in. */
  const size_t limit = 48 * 1024 - 256;
  /* Three buffers (two chunks in flight) only while a warp's chunk is small;
   * from 2 KB (16 bits of columns) two, so that more warps fit an SM: with
   * three buffers at 40 bits of columns (5 KB a chunk) few warps fit and the
   * kernel was issue-bound (docs/benchmarks.md), while one 5 KB chunk per
   * warp in flight is ~100 KB per SM, three times what the bandwidth needs. */
  const size_t buffer = (size_t)kTreeWarps * p->stage_words * sizeof(uint32_t);
  if (p->stage_words <= 512 && 3 * buffer <= limit) return launch_tree<3>(*p, 3 * buffer, stream);
  if (2 * buffer <= limit) return launch_tree<2>(*p, 2 * buffer, stream);
  return cudaErrorNotSupported;
}
