/*
 * where_spec.cuh: CUDA's general per-word filter specialized for one program
 * shape, compiled at run time by NVRTC (backends/cuda/cuda_query_spec.c)
 * after the shape text (core/query_spec.h's ps_where_spec_write) and
 * ps_cuda_where.cuh. The same body as eval.cu's eval_words_kernel, under a
 * C name the backend looks up.
 */
#if defined(PS_W_MIN_BLOCKS) && PS_W_MIN_BLOCKS > 0
#define PS_W_SPEC_BOUNDS __launch_bounds__(PS_CUDA_WHERE_BLOCK, PS_W_MIN_BLOCKS)
#else
#define PS_W_SPEC_BOUNDS __launch_bounds__(PS_CUDA_WHERE_BLOCK)
#endif
extern "C" __global__ void PS_W_SPEC_BOUNDS
    ps_where_words_spec(const __grid_constant__ ps_cuda_where_params p) {
  ps_cuda_where_words(p);
}
