/*
 * query_spec.cuh: pass 1 of a query specialized for one query's constants,
 * compiled at run time by NVRTC (backends/cuda/cuda_query_spec.c) after the
 * specialization text (core/query_spec.h) and ps_query_kernels.h. The same
 * entry as query.cu's query_partials, under a C name the backend looks up.
 */
#if PS_QS_MIN_BLOCKS > 0
#define PS_Q_SPEC_BOUNDS __launch_bounds__(PS_CUDA_QUERY_BLOCK, PS_QS_MIN_BLOCKS)
#else
#define PS_Q_SPEC_BOUNDS __launch_bounds__(PS_CUDA_QUERY_BLOCK)
#endif
extern "C" __global__ void PS_Q_SPEC_BOUNDS
    ps_query_partials_spec(const __grid_constant__ ps_cuda_query_params p) {
  __shared__ ps_qacc lacc[PS_Q_LOCAL_ACCS];
  ps_q_pass1(&p.prog, &p.where_prog, &p.launch, &p.bufs, blockIdx.x, threadIdx.x, blockDim.x, lacc, p.part, p.status);
}
