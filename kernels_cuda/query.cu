/* Queries: the CUDA entry points of kernels_shared/ps_query_kernels.h (the
 * algorithm is there, shared with OpenCL) and their launcher. */
#include "ps_cuda_query.h"

static_assert(sizeof(ps_cuda_query_params) <= 32764, "query parameters exceed the kernel parameter limit");

static __global__ void __launch_bounds__(PS_CUDA_QUERY_BLOCK)
    query_partials(const __grid_constant__ ps_cuda_query_params p) {
  const ps_u64 item = (ps_u64)blockIdx.x * blockDim.x + threadIdx.x;
  ps_q_partials(&p.prog, &p.where_prog, &p.launch, &p.bufs, item, p.part, p.status);
}

static __global__ void __launch_bounds__(PS_CUDA_QUERY_BLOCK)
    query_merge(ps_u64 n_acc, ps_u64 items, const ps_qacc *part, ps_qacc *acc) {
  ps_q_merge((ps_u64)blockIdx.x * blockDim.x + threadIdx.x, n_acc, items, part, acc);
}

extern "C" cudaError_t ps_cuda_launch_query(const ps_cuda_query_params *p, uint64_t n_acc, ps_qacc *acc,
                                            cudaStream_t stream) {
  const uint64_t items = p->launch.items;
  const unsigned blocks = (unsigned)((items + PS_CUDA_QUERY_BLOCK - 1) / PS_CUDA_QUERY_BLOCK);
  query_partials<<<blocks, PS_CUDA_QUERY_BLOCK, 0, stream>>>(*p);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  const unsigned merge_blocks = (unsigned)((n_acc + PS_CUDA_QUERY_BLOCK - 1) / PS_CUDA_QUERY_BLOCK);
  query_merge<<<merge_blocks, PS_CUDA_QUERY_BLOCK, 0, stream>>>(n_acc, items, p->part, acc);
  return cudaGetLastError();
}
