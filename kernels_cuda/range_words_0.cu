/* Widths 0..15 of the single-range fast path (range_kernel.cuh). */
#include "range_kernel.cuh"

extern "C" cudaError_t ps_cuda_launch_range_0(const ps_cuda_range_params *p, uint32_t max_blocks,
                                              cudaStream_t stream) {
  return dispatch_width<0>((int)p->width, *p, max_blocks, stream, std::make_integer_sequence<int, 16>{});
}
