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

/* The block's total, then one atomic per block: with a grid of a few blocks
 * per SM this is a few thousand atomics per launch, not one per 256 rows
 * (same-address atomics serialize in L2 and would bound the whole scan). */
__device__ __forceinline__ void count_block(const ps_cuda_eval_params &p, uint32_t selected) {
  typedef cub::BlockReduce<uint32_t, PS_CUDA_EVAL_BLOCK> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  const uint32_t total = Reduce(tmp).Sum(selected);
  if (threadIdx.x == 0 && total) atomicAdd(p.count, (unsigned long long)total);
}

/* Thin entry point, grid-stride: each warp evaluates 32 consecutive rows (one
 * result word) per step. The loop condition depends only on the warp's first
 * row, so a warp's lanes iterate together and all reach the ballot (rows past
 * the chunk vote 0); every thread of the block reaches the reduction. Row
 * indexes fit 32 bits: base < rows <= 2^31 and the stride is small. */
__global__ void __launch_bounds__(PS_CUDA_EVAL_BLOCK)
    eval_kernel(const __grid_constant__ ps_cuda_eval_params p) {
  const uint32_t lane = threadIdx.x & 31u;
  const uint32_t stride = gridDim.x * PS_CUDA_EVAL_BLOCK;
  uint32_t status = 0, selected = 0;
  for (uint32_t base = blockIdx.x * PS_CUDA_EVAL_BLOCK + (threadIdx.x & ~31u); base < p.rows;
       base += stride) {
    const uint32_t row = base + lane;
    const bool sel = row < p.rows && ps_row_selected(p, row, &status);
    const uint32_t word = __ballot_sync(kFullWarp, sel);
    ps_store_word(p, base >> 5, word, lane);
    ps_store_mask(p, row, sel);
    selected += sel;
  }
  raise_status(p, status, lane);
  count_block(p, selected);
}

} // namespace

extern "C" cudaError_t ps_cuda_launch_eval(const ps_cuda_eval_params *p, uint32_t max_blocks,
                                           cudaStream_t stream) {
  const uint64_t want = ((uint64_t)p->rows + PS_CUDA_EVAL_BLOCK - 1) / PS_CUDA_EVAL_BLOCK;
  const uint32_t blocks = (uint32_t)(want < max_blocks ? want : (max_blocks ? max_blocks : 1));
  eval_kernel<<<blocks, PS_CUDA_EVAL_BLOCK, 0, stream>>>(*p);
  return cudaGetLastError();
}

extern "C" cudaError_t ps_cuda_eval_max_blocks(int sm_count, uint32_t *out) {
  int per_sm = 0;
  const cudaError_t err =
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, eval_kernel, PS_CUDA_EVAL_BLOCK, 0);
  if (err != cudaSuccess) return err;
  const int64_t blocks = (int64_t)(per_sm > 0 ? per_sm : 1) * (sm_count > 0 ? sm_count : 1);
  *out = (uint32_t)(blocks < (1 << 20) ? blocks : (1 << 20));
  return cudaSuccess;
}
