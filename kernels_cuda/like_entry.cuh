/* One lane's share of the LIKE dictionary kernel (like.cu): whether entry
 * first + k matches, 0 past count (core/ps_like_nfa.h's run test, then its
 * automaton). __host__ __device__, so that
 * tests/test_cuda_like.cu runs it, and the word assembly around it, on the
 * CPU. */
#ifndef PS_CUDA_LIKE_ENTRY_CUH
#define PS_CUDA_LIKE_ENTRY_CUH

#include "ps_cuda_kernels.h"

__host__ __device__ __forceinline__ int ps_cuda_like_entry(const ps_cuda_like_params &p, const uint64_t *lit,
                                                           uint64_t k) {
  if (k >= p.count) return 0;
  const uint64_t j = p.first + k;
  /* the bytes up to the run's last entry's end may be read */
  return ps_like_entry_match(p.bytes, p.offsets[j], p.offsets[j + 1], p.offsets[p.first + p.count],
                             ((uintptr_t)p.bytes & 3u) == 0, &p.nfa, lit);
}

#endif /* PS_CUDA_LIKE_ENTRY_CUH */
