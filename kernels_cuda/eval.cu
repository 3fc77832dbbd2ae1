/*
 * The one-pass predicate kernel: one thread per row, one warp per 32-bit
 * result word. The per-row logic is in ps_cuda_rows.cuh; this file holds the
 * warp/block epilogue (ballot, bitmap store, status, count) and the extern "C"
 * launchers the backend calls.
 */
#include <cub/block/block_reduce.cuh>

#include "ps_cuda_kernels.h"
#include "ps_cuda_rows.cuh"

static_assert(sizeof(ps_cuda_eval_params) <= 4096,
              "kernel parameters must stay under the classic 4 KB limit");
static_assert(PS_CUDA_EVAL_BLOCK % 32 == 0, "a block is whole warps");
static_assert(PS_MAX_COLS <= 31, "slot bits and PS_CUDA_FLAG_AUX share the status word");

namespace {

constexpr unsigned kFullWarp = 0xffffffffu;

/* One atomic per warp, and only when something went wrong. */
__device__ __forceinline__ void raise_status(const ps_cuda_eval_params &p, uint32_t status,
                                             uint32_t lane) {
  const uint32_t any = __reduce_or_sync(kFullWarp, status);
  if (lane == 0 && any) atomicOr(p.status, any);
}

/* Block total of the warps' popcounts, then one atomic per block. */
__device__ __forceinline__ void count_block(const ps_cuda_eval_params &p, uint32_t word,
                                            uint32_t lane) {
  typedef cub::BlockReduce<uint32_t, PS_CUDA_EVAL_BLOCK> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  const uint32_t total = Reduce(tmp).Sum(lane == 0 ? (uint32_t)__popc(word) : 0u);
  if (threadIdx.x == 0 && total) atomicAdd(p.count, (unsigned long long)total);
}

/* Thin entry point. Every lane of a warp reaches the ballot (rows past the
 * chunk vote 0), and every thread of a block reaches the reduction. */
__global__ void __launch_bounds__(PS_CUDA_EVAL_BLOCK)
    eval_kernel(const __grid_constant__ ps_cuda_eval_params p) {
  const uint32_t row = blockIdx.x * PS_CUDA_EVAL_BLOCK + threadIdx.x;
  const uint32_t lane = threadIdx.x & 31u;
  uint32_t status = 0;
  const bool selected = row < p.rows && ps_eval_row(p, row, &status);
  const uint32_t word = __ballot_sync(kFullWarp, selected);
  ps_store_word(p, row >> 5, word, lane);
  raise_status(p, status, lane);
  count_block(p, word, lane);
}

} // namespace

extern "C" cudaError_t ps_cuda_launch_eval(const ps_cuda_eval_params *p, cudaStream_t stream) {
  /* rows <= 2^31, so row indexes and the grid size fit 32 bits. */
  const uint32_t blocks = (uint32_t)(((uint64_t)p->rows + PS_CUDA_EVAL_BLOCK - 1) / PS_CUDA_EVAL_BLOCK);
  eval_kernel<<<blocks, PS_CUDA_EVAL_BLOCK, 0, stream>>>(*p);
  return cudaGetLastError();
}

extern "C" cudaError_t ps_cuda_probe_kernels(void) {
  cudaFuncAttributes attr;
  return cudaFuncGetAttributes(&attr, eval_kernel);
}
