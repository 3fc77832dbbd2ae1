/*
 * LIKE over a run of dictionary entries (core/backend.h, ps_like_dict_args):
 * one thread per entry running core/ps_like_nfa.h's test for the pattern's
 * longest literal run, then its NFA where the run does not decide (the same
 * code the host test checks against ps_like_match), one warp per 32-entry result
 * word, written by lane 0 from __ballot_sync. The literal masks are staged in
 * shared memory once per block: threads index them by the byte they read,
 * which differs across a warp (the parameter bank would serialize that).
 */
#include "like_entry.cuh"

namespace {

constexpr unsigned kWarps = PS_CUDA_LIKE_BLOCK / 32;
static_assert(PS_CUDA_LIKE_BLOCK % 32 == 0, "whole warps per block");

__global__ void __launch_bounds__(PS_CUDA_LIKE_BLOCK) like_dict_kernel(const __grid_constant__ ps_cuda_like_params p) {
  __shared__ uint64_t lit[256];
  for (unsigned c = threadIdx.x; c < 256; c += blockDim.x) lit[c] = p.nfa.lit[c];
  __syncthreads();
  const unsigned lane = threadIdx.x % 32;
  const uint64_t words = (p.count + 31) / 32;
  const uint64_t stride = (uint64_t)gridDim.x * kWarps;
  // w is the same for every lane of a warp, so the loop and the ballot are
  // warp-uniform.
  for (uint64_t w = (uint64_t)blockIdx.x * kWarps + threadIdx.x / 32; w < words; w += stride) {
    const uint32_t bits = __ballot_sync(0xffffffffu, ps_cuda_like_entry(p, lit, w * 32 + lane));
    if (lane == 0) p.out[w] = bits;
  }
}

}  // namespace

extern "C" cudaError_t ps_cuda_launch_like(const ps_cuda_like_params *p, uint32_t max_blocks, cudaStream_t stream) {
  const uint64_t words = (p->count + 31) / 32;
  const uint64_t want = (words + kWarps - 1) / kWarps;
  const uint64_t cap = max_blocks ? max_blocks : 1;
  const uint32_t blocks = (uint32_t)(want < cap ? want : cap);
  if (blocks == 0) return cudaSuccess;
  like_dict_kernel<<<blocks, PS_CUDA_LIKE_BLOCK, 0, stream>>>(*p);
  return cudaGetLastError();
}
