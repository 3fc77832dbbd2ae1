/*
 * eval.cu's eval_words_kernel built for programs whose columns are all FOR
 * (PS_FOR_ONLY, kernels_shared/ps_codes.h): no other encoding's reader is
 * compiled in, so these programs run the generic per-word kernel that FOR
 * alone needs. ps_cuda_launch_eval takes it for them
 * (ps_cuda_eval_params.for_only); the headers are eval.cu's, in its order.
 */
#define PS_FOR_ONLY 1

#include "ps_cuda_kernels.h"
#include "ps_cuda_rows.cuh"
#include "ps_cuda_words.cuh"

namespace {

__global__ void __launch_bounds__(PS_CUDA_WHERE_BLOCK)
    eval_words_for_kernel(const __grid_constant__ ps_cuda_where_params p) {
  ps_cuda_where_words(p);
}

}  // namespace

extern "C" const void *ps_cuda_eval_words_for(void) { return (const void *)eval_words_for_kernel; }
