/* Widths 17..32 of the single-SET fast path (set_kernel.cuh). */
#include "set_kernel.cuh"

extern "C" cudaError_t ps_cuda_launch_set_1(const ps_cuda_range_params *p, cudaStream_t stream) {
  return dispatch_set<17>((int)p->width, *p, stream, std::make_integer_sequence<int, 16>{});
}
