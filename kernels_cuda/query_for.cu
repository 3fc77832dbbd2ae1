/*
 * query.cu's pass 1 built for queries whose columns are all FOR
 * (PS_FOR_ONLY, kernels_shared/ps_codes.h): no other encoding's reader is
 * compiled in. The backend launches it as it launches a specialized pass 1
 * (ps_cuda_launch_query's spec) for those queries (ps_query_args.for_only)
 * when it has no specialized one.
 */
#define PS_FOR_ONLY 1

#include "ps_cuda_query.h"

static __global__ void __launch_bounds__(PS_CUDA_QUERY_BLOCK)
    query_partials_for(const __grid_constant__ ps_cuda_query_params p) {
  __shared__ ps_qacc lacc[PS_Q_LOCAL_ACCS];
  ps_q_pass1(&p.prog, &p.where_prog, &p.launch, &p.bufs, blockIdx.x, threadIdx.x, blockDim.x, lacc, p.part, p.status);
}

extern "C" const void *ps_cuda_query_partials_for(void) { return (const void *)query_partials_for; }
