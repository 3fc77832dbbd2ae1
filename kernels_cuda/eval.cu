/*
 * The one-pass predicate kernel (general programs: AND/OR/NOT trees, SET,
 * INLIST, ISNULL, CMPCOL, corrupt-code detection, input selection, byte mask).
 *
 * eval_words_kernel, the default: one thread per 32-row result word, the
 * program interpreted word-at-a-time (each instruction yields 32-bit
 * is_true / is_false masks; the stack holds such pairs). A warp handles 32
 * consecutive words (a task) and stages each leaf's packed words through
 * shared memory with coalesced loads;
 * the per-word logic is in ps_cuda_words.cuh (host-checked by
 * tests/test_cuda_eval_words.cu against the per-row logic).
 *
 * eval_rows_kernel: one thread per row, __ballot_sync per word, the row
 * evaluated by the per-row interpreter kernels_shared/ps_rows.h (which
 * OpenCL's filter.cl runs too; glue in ps_cuda_rows.cuh). The fallback for
 * programs whose staging would exceed the 48 KB of shared memory a block
 * gets without the opt-in (launch_words),
 * and the kernel whose occupancy defines ps_cuda_eval_max_blocks, which the
 * backend also uses to cap the range, reduce and gather grids.
 *
 * How the per-word kernel came to its shape (CMPCOL of narrow columns in
 * 32-bit arithmetic, RANGE with a code limit on the templated path, vector
 * copies and reads of the staged words): docs/performance-notes.md; the
 * measurements: docs/benchmarks.md.
 */
#include <atomic>

#include <cub/block/block_reduce.cuh>

#include "ps_cuda_kernels.h"
#include "ps_cuda_rows.cuh"
#include "ps_cuda_words.cuh"

static_assert(sizeof(ps_cuda_eval_params) + sizeof(ps_words_layout) <= 4096,
              "kernel parameters must stay under the classic 4 KB limit");
static_assert(PS_CUDA_EVAL_BLOCK % 32 == 0, "a block is whole warps");
static_assert(PS_MAX_COLS <= 31, "slot bits and PS_CUDA_FLAG_AUX share the status word");

namespace {

constexpr unsigned kFullWarp = 0xffffffffu;

/* Threads per block of the per-word kernel: 4 warps, so that a program with
 * wide columns (up to 66.5 KB of staging per block at w 64 vs 64) still fits
 * several blocks per SM. */
constexpr uint32_t kWordsBlock = 128;
constexpr uint32_t kWordsWarps = kWordsBlock / 32;

/* One atomic per warp, and only when something went wrong. */
__device__ __forceinline__ void raise_status(const ps_cuda_eval_params &p, uint32_t status, uint32_t lane) {
  const uint32_t any = __reduce_or_sync(kFullWarp, status);
  if (lane == 0 && any) atomicOr(p.status, any);
}

/* The block's total, then one atomic per block: with a grid of a few blocks
 * per SM this is a few thousand atomics per launch, not one per 256 rows
 * (same-address atomics serialize in L2 and would bound the whole scan). */
template <int Threads>
__device__ __forceinline__ void count_block(const ps_cuda_eval_params &p, uint32_t selected) {
  typedef cub::BlockReduce<uint32_t, Threads> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  const uint32_t total = Reduce(tmp).Sum(selected);
  if (threadIdx.x == 0 && total) atomicAdd(p.count, (unsigned long long)total);
}

/* A task's result word after its evaluation: bitmap word, byte-mask
 * shares (warp-wide shuffles), count. */
__device__ __forceinline__ void finish_task(const ps_cuda_eval_params &p, uint32_t task, uint32_t lane, uint32_t words,
                                            uint32_t word, uint32_t *selected) {
  const uint32_t g = task * 32 + lane;
  if (p.bitmap && g < words) ps_store_bitmap_word(p, g, word);
  if (p.mask) {
#pragma unroll
    for (uint32_t m = 0; m < 8; ++m) {
      const uint32_t src = __shfl_sync(kFullWarp, word, ps_mask_src_lane(m, lane));
      ps_store_mask_share(p, task, m, lane, src);
    }
  }
  *selected += __popc(word);
}

/* Per-word kernel, grid-stride over tasks (warp-sized groups of 32 result
 * words). The loop condition depends only on the warp's task, so a warp's
 * lanes iterate together and all take part in the staging, the __any_sync and
 * the shuffles; lanes past the last word evaluate no row (rows = 0). Every
 * thread reaches the block reduction. L: the staging layout
 * (ps_words_layout_of), L.words words per warp of dynamic shared memory.
 *
 * At most 64 registers, so that 8 blocks of 128 threads fit an SM (without
 * the bound ptxas picks 72: 7 blocks). The Kleene stack below its top is on
 * the stack (local memory). */
__global__ void __launch_bounds__(kWordsBlock, 8)
    eval_words_kernel(const __grid_constant__ ps_cuda_eval_params p, const __grid_constant__ ps_words_layout L) {
  /* 16-byte aligned: the vector copies and loads of the staged words need it */
  extern __shared__ __align__(16) uint32_t stage_smem[];
  const uint32_t lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const uint32_t words = (uint32_t)(((uint64_t)p.rows + 31) >> 5);
  const uint32_t tasks = (words + 31) >> 5;
  const uint32_t stride = gridDim.x * kWordsWarps;
  uint32_t status = 0, selected = 0;
  uint32_t *const area = stage_smem + warp * L.words;
  for (uint32_t task = blockIdx.x * kWordsWarps + warp; task < tasks; task += stride) {
    const uint32_t g = task * 32 + lane;
    const uint32_t rows = g < words ? ps_word_rows(p, g) : 0u;
    /* A task with nothing to evaluate (an input selection empty there) reads
     * no column at all. */
    const bool live = __any_sync(kFullWarp, rows);
    if (live && L.all) ps_stage_all(p, L, task, area, lane);
    uint32_t word = 0;
    if (live) word = ps_eval_word(p, L, area, task, lane, rows, &status);
    finish_task(p, task, lane, words, word, &selected);
  }
  raise_status(p, status, lane);
  count_block<kWordsBlock>(p, selected);
}

/* One thread per row: each warp evaluates 32
 * consecutive rows (one result word) per step. The loop condition depends
 * only on the warp's first row, so a warp's lanes iterate together and all
 * reach the ballot (rows past the chunk vote 0). */
__global__ void __launch_bounds__(PS_CUDA_EVAL_BLOCK) eval_rows_kernel(const __grid_constant__ ps_cuda_eval_params p) {
  const uint32_t lane = threadIdx.x & 31u;
  const uint32_t stride = gridDim.x * PS_CUDA_EVAL_BLOCK;
  uint32_t status = 0, selected = 0;
  for (uint32_t base = blockIdx.x * PS_CUDA_EVAL_BLOCK + (threadIdx.x & ~31u); base < p.rows; base += stride) {
    const uint32_t row = base + lane;
    const bool sel = row < p.rows && ps_row_selected(p, row, &status);
    const uint32_t word = __ballot_sync(kFullWarp, sel);
    ps_store_word(p, base >> 5, word, lane);
    ps_store_mask(p, row, sel);
    selected += sel;
  }
  raise_status(p, status, lane);
  count_block<PS_CUDA_EVAL_BLOCK>(p, selected);
}

/* Staging words per warp that the one-round-trip layout (every column of
 * the task staged at once) may take: 2048 words, 8 KB per warp, 32 KB per
 * block: at that edge shared memory allows 6 blocks per SM instead of the 8
 * that registers allow; one round trip per task is worth more than the two
 * blocks. Wider programs stage per leaf. The tree bench case needs 1379
 * words per warp (22 KB per block), colcol 1091. */
constexpr uint32_t kAllBudgetWords = 2048;

/* Resident blocks of eval_words_kernel on the current device for a block's
 * dynamic shared memory (in 16-byte units, up to 48 KB), measured once per size per process
 * (atomic: contexts may launch from several threads; with GPUs of different
 * SM counts the first one's figure is used, which changes the grid size,
 * never a result). 0 when it cannot be measured. */
uint32_t words_resident_blocks(size_t smem) {
  static std::atomic<uint32_t> cached[48 * 1024 / 16 + 1];
  const size_t key = smem / 16;
  if (key > 48 * 1024 / 16) return 0;
  void (*kernel)(ps_cuda_eval_params, ps_words_layout) = eval_words_kernel;
  uint32_t v = cached[key].load(std::memory_order_relaxed);
  if (v) return v;
  int dev = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, (int)kWordsBlock, smem) != cudaSuccess ||
      per_sm <= 0 || sms <= 0) {
    (void)cudaGetLastError();
    return 0;
  }
  v = (uint32_t)per_sm * (uint32_t)sms;
  cached[key].store(v, std::memory_order_relaxed);
  return v;
}

cudaError_t launch_rows(const ps_cuda_eval_params *p, uint32_t max_blocks, cudaStream_t stream) {
  const uint64_t want = ((uint64_t)p->rows + PS_CUDA_EVAL_BLOCK - 1) / PS_CUDA_EVAL_BLOCK;
  const uint32_t blocks = (uint32_t)(want < max_blocks ? want : (max_blocks ? max_blocks : 1));
  eval_rows_kernel<<<blocks, PS_CUDA_EVAL_BLOCK, 0, stream>>>(*p);
  return cudaGetLastError();
}

cudaError_t launch_words(const ps_cuda_eval_params *p, uint32_t max_blocks, cudaStream_t stream) {
  const ps_words_layout L = ps_words_layout_of(p->prog, kAllBudgetWords);
  const size_t smem = (size_t)kWordsWarps * L.words * sizeof(uint32_t);
  if (smem > 48 * 1024) {
    /* Above the default per-block limit (only a CMPCOL of two columns of
     * about 48 bits or more needs it: per-leaf staging takes up to 66.5 KB)
     * the per-row kernel runs instead. The opt-in through
     * cudaFuncSetAttribute(MaxDynamicSharedMemorySize) failed on an H200
     * with cudaErrorInvalidValue (docs/gpu-runs.md) for a reason not yet
     * established; the per-row kernel needs no shared memory and is as
     * exact. */
    return launch_rows(p, max_blocks, stream);
  }
  const uint64_t words = ((uint64_t)p->rows + 31) / 32;
  const uint64_t want = (words + 32 * kWordsWarps - 1) / (32 * kWordsWarps);
  uint32_t fill = words_resident_blocks(smem);
  if (!fill) fill = max_blocks ? max_blocks : 1;
  const uint32_t blocks = (uint32_t)(want < fill ? want : fill);
  eval_words_kernel<<<blocks ? blocks : 1, kWordsBlock, smem, stream>>>(*p, L);
  return cudaGetLastError();
}

}  // namespace

extern "C" cudaError_t ps_cuda_launch_eval(const ps_cuda_eval_params *p, uint32_t max_blocks, cudaStream_t stream) {
  if (p->rows_only) return launch_rows(p, max_blocks, stream);
  return launch_words(p, max_blocks, stream);
}

extern "C" cudaError_t ps_cuda_eval_max_blocks(int sm_count, uint32_t *out) {
  int per_sm = 0;
  const cudaError_t err =
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, eval_rows_kernel, PS_CUDA_EVAL_BLOCK, 0);
  if (err != cudaSuccess) return err;
  const int64_t blocks = (int64_t)(per_sm > 0 ? per_sm : 1) * (sm_count > 0 ? sm_count : 1);
  *out = (uint32_t)(blocks < (1 << 20) ? blocks : (1 << 20));
  return cudaSuccess;
}
