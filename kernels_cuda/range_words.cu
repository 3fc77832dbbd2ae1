/* The single-range fast path's entry point: picks the slice of widths
 * (range_words_<k>.cu) that holds the instantiation for p->width. */
#include "ps_cuda_kernels.h"

extern "C" {
cudaError_t ps_cuda_launch_range_0(const ps_cuda_range_params *p, uint32_t max_blocks, cudaStream_t stream);
cudaError_t ps_cuda_launch_range_1(const ps_cuda_range_params *p, uint32_t max_blocks, cudaStream_t stream);
cudaError_t ps_cuda_launch_range_2(const ps_cuda_range_params *p, uint32_t max_blocks, cudaStream_t stream);
cudaError_t ps_cuda_launch_range_3(const ps_cuda_range_params *p, uint32_t max_blocks, cudaStream_t stream);
}

extern "C" cudaError_t ps_cuda_launch_range(const ps_cuda_range_params *p, uint32_t max_blocks,
                                            cudaStream_t stream) {
  if (p->width > 64) return cudaErrorInvalidValue;
  if (!max_blocks) max_blocks = 1;
  if (p->width < 16) return ps_cuda_launch_range_0(p, max_blocks, stream);
  if (p->width < 32) return ps_cuda_launch_range_1(p, max_blocks, stream);
  if (p->width < 48) return ps_cuda_launch_range_2(p, max_blocks, stream);
  return ps_cuda_launch_range_3(p, max_blocks, stream);
}
