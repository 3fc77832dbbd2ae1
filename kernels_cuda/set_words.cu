/* The single-SET fast path's entry point (set_kernel.cuh), widths 1..32:
 * 1..16 here, 17..32 in set_words_1.cu (the instantiations compile in
 * parallel). */
#include "set_kernel.cuh"

extern "C" cudaError_t ps_cuda_launch_set_1(const ps_cuda_range_params *p, cudaStream_t stream);

extern "C" cudaError_t ps_cuda_launch_set(const ps_cuda_range_params *p, cudaStream_t stream) {
  if (p->width < 1 || p->width > 32 || !p->set || !p->status) return cudaErrorInvalidValue;
  if (p->width > 16) return ps_cuda_launch_set_1(p, stream);
  return dispatch_set<1>((int)p->width, *p, stream, std::make_integer_sequence<int, 16>{});
}
