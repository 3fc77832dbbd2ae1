/* Queries: the CUDA entry points of kernels_shared/ps_query_kernels.h (the
 * algorithm is there, shared with OpenCL) and their launcher. */
#include "ps_cuda_query.h"

static_assert(sizeof(ps_cuda_query_params) <= 32764, "query parameters exceed the kernel parameter limit");
static_assert(PS_CUDA_QUERY_BLOCK <= PS_Q_LOCAL_ACCS, "query blocks reduce in PS_Q_LOCAL_ACCS shared slots");
static_assert(PS_CUDA_QUERY_BLOCK % 32 == 0, "a register GROUP BY merges whole warps (PS_QS_WARP_MERGE)");

static __global__ void __launch_bounds__(PS_CUDA_QUERY_BLOCK)
    query_partials(const __grid_constant__ ps_cuda_query_params p) {
  __shared__ ps_qacc lacc[PS_Q_LOCAL_ACCS];
  ps_q_pass1(&p.prog, &p.where_prog, &p.launch, &p.bufs, blockIdx.x, threadIdx.x, blockDim.x, lacc, p.part, p.status);
}

static __global__ void __launch_bounds__(PS_CUDA_QUERY_BLOCK)
    query_merge(ps_u64 n_acc, ps_u64 parts, ps_u64 flat, const ps_qacc *part, ps_qacc *acc) {
  __shared__ ps_qacc lacc[PS_Q_LOCAL_ACCS];
  ps_q_merge(blockIdx.x, threadIdx.x, blockDim.x, n_acc, parts, flat, part, acc, lacc);
}

extern "C" cudaError_t ps_cuda_query_grid(const void *spec, unsigned *blocks) {
  int device = 0, sms = 0, per_sm = 0;
  cudaError_t err = cudaGetDevice(&device);
  if (err == cudaSuccess) err = cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, device);
  if (err == cudaSuccess)
    err = spec ? cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, spec, PS_CUDA_QUERY_BLOCK, 0)
               : cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, query_partials, PS_CUDA_QUERY_BLOCK, 0);
  if (err != cudaSuccess) return err;
  *blocks = (unsigned)(sms > 0 ? sms : 1) * (unsigned)(per_sm > 0 ? per_sm : 1);
  return cudaSuccess;
}

extern "C" cudaError_t ps_cuda_launch_query(const void *spec, const ps_cuda_query_params *p, uint64_t n_acc,
                                            uint64_t parts, int flat, ps_qacc *acc, cudaStream_t stream) {
  const uint64_t items = p->launch.items;
  const unsigned blocks = (unsigned)((items + PS_CUDA_QUERY_BLOCK - 1) / PS_CUDA_QUERY_BLOCK);
  if (spec) { /* a cudaKernel_t launches as a function symbol; its one parameter is *p */
    void *args[1] = {(void *)p};
    cudaError_t err = cudaLaunchKernel(spec, dim3(blocks), dim3(PS_CUDA_QUERY_BLOCK), args, 0, stream);
    if (err != cudaSuccess) return err;
  } else {
    query_partials<<<blocks, PS_CUDA_QUERY_BLOCK, 0, stream>>>(*p);
  }
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  if (n_acc == 0) return cudaSuccess; /* a hashed GROUP BY plan's keys pass: nothing to merge */
  const uint64_t blocks2 = flat ? (n_acc + PS_CUDA_QUERY_BLOCK - 1) / PS_CUDA_QUERY_BLOCK : n_acc;
  query_merge<<<(unsigned)blocks2, PS_CUDA_QUERY_BLOCK, 0, stream>>>(n_acc, parts, (ps_u64)flat, p->part, acc);
  return cudaGetLastError();
}
