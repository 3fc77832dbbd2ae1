/*
 * The one-pass predicate kernel (general programs: AND/OR/NOT trees, SET,
 * INLIST, ISNULL, CMPCOL, corrupt-code detection, input selection, byte mask).
 *
 * eval_words_kernel: one thread per 32-row result word, the
 * program evaluated by kernels_shared/ps_where.h (the evaluator OpenCL's
 * words.cl runs too), generic here: the program is read from the launch and
 * interpreted. A warp handles 32 consecutive words (a task), so that its
 * lanes write the byte mask together. The same source specialized per
 * program shape (NVRTC, kernels_cuda/where_spec.cuh) is what runs once it is
 * built; this kernel is the fallback meanwhile.
 *
 * Every program runs there, whatever its columns' encodings (ps_where.h reads
 * codes through ps_codes.h's word reader).
 *
 * eval_rows_kernel: one thread per row, __ballot_sync per word, the row
 * evaluated by the per-row interpreter kernels_shared/ps_rows.h (which
 * OpenCL's filter.cl runs too; glue in ps_cuda_rows.cuh). The filters no
 * longer launch it; its occupancy still defines ps_cuda_eval_max_blocks,
 * which the backend uses to cap the range, reduce and gather grids.
 */
#include <atomic>

#include <cub/block/block_reduce.cuh>

#include "ps_cuda_kernels.h"
#include "ps_cuda_rows.cuh"
#include "ps_cuda_words.cuh"

static_assert(sizeof(ps_cuda_eval_params) <= 4096 && sizeof(ps_cuda_where_params) <= 4096,
              "kernel parameters must stay under the classic 4 KB limit");
static_assert(PS_CUDA_EVAL_BLOCK % 32 == 0, "a block is whole warps");
static_assert(PS_MAX_COLS <= 31, "slot bits and PS_CUDA_FLAG_AUX share the status word");

namespace {

constexpr unsigned kFullWarp = 0xffffffffu;

constexpr uint32_t kWordsBlock = PS_CUDA_WHERE_BLOCK;

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

/* The general per-word kernel, generic: ps_cuda_where.cuh's body with the
 * program read from the launch (NVRTC compiles the same body per program
 * shape: where_spec.cuh). */
__global__ void __launch_bounds__(PS_CUDA_WHERE_BLOCK)
    eval_words_kernel(const __grid_constant__ ps_cuda_where_params p) {
  ps_cuda_where_words(p);
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

/* Resident blocks of the per-word kernel (spec, or eval_words_kernel when
 * NULL) on the current device; eval_words_kernel's and the FOR build's
 * (eval_for.cu) measured once per process (atomic: contexts may launch from several threads; with GPUs of
 * different SM counts the first one's figure is used, which changes the
 * grid size, never a result). 0 when it cannot be measured. */
uint32_t words_resident_blocks(const void *spec) {
  static std::atomic<uint32_t> cached{0}, cached_for{0};
  std::atomic<uint32_t> *cache = !spec ? &cached : spec == ps_cuda_eval_words_for() ? &cached_for : nullptr;
  uint32_t v = cache ? cache->load(std::memory_order_relaxed) : 0u;
  if (v) return v;
  int dev = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      (spec ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, spec, (int)kWordsBlock, 0)
            : cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, eval_words_kernel, (int)kWordsBlock, 0)) !=
          cudaSuccess ||
      per_sm <= 0 || sms <= 0) {
    (void)cudaGetLastError();
    return 0;
  }
  v = (uint32_t)per_sm * (uint32_t)sms;
  if (cache) cache->store(v, std::memory_order_relaxed);
  return v;
}

/* One launch of the per-word kernel `k` (a cudaKernel_t, or NULL: the
 * precompiled one) over tasks [begin, end) of w's chunk, on `waves` waves
 * of resident blocks (0: PS_CUDA_WHERE_WAVES). */
cudaError_t launch_tasks(const void *k, ps_cuda_where_params w, uint32_t begin, uint32_t end, uint32_t max_blocks,
                         uint32_t waves, cudaStream_t stream) {
  if (begin >= end) return cudaSuccess;
  w.task_begin = begin;
  w.task_end = end;
  uint32_t fill = words_resident_blocks(k);
  if (!fill) fill = max_blocks;
  const uint32_t blocks = ps_cw_grid_blocks(end - begin, fill, waves);
  if (k) { /* a cudaKernel_t launches as a function symbol; its one parameter is w */
    void *args[1] = {(void *)&w};
    const cudaError_t err = cudaLaunchKernel(k, dim3(blocks), dim3(kWordsBlock), args, 0, stream);
    if (err != cudaSuccess) return err;
  } else {
    eval_words_kernel<<<blocks, kWordsBlock, 0, stream>>>(w);
  }
  return cudaGetLastError();
}

cudaError_t launch_words(const void *spec, uint32_t spec_tasks, const ps_cuda_eval_params *p, uint32_t max_blocks,
                         uint32_t waves, cudaStream_t stream) {
  const ps_cuda_where_params w = ps_cuda_where_params_of(*p);
  const uint32_t tasks = w.task_end;
  if (!spec) spec_tasks = 0;
  if (spec_tasks > tasks) spec_tasks = tasks;
  /* the tasks the specialized kernel does not take: the precompiled one,
   * the FOR build where no other encoding's reader is needed */
  const void *generic = p->for_only ? ps_cuda_eval_words_for() : nullptr;
  const cudaError_t err = launch_tasks(spec, w, 0, spec_tasks, max_blocks, waves, stream);
  return err != cudaSuccess ? err : launch_tasks(generic, w, spec_tasks, tasks, max_blocks, waves, stream);
}

}  // namespace

extern "C" cudaError_t ps_cuda_launch_eval(const void *spec, uint32_t spec_tasks, const ps_cuda_eval_params *p,
                                           uint32_t max_blocks, uint32_t waves, cudaStream_t stream) {
  return launch_words(spec, spec_tasks, p, max_blocks, waves, stream);
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
