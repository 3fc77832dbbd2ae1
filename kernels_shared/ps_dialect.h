/*
 * The dialect header of the shared kernel sources (OpenMM's approach): the
 * few differences between OpenCL C 1.2 and CUDA C++ behind one set of names,
 * so that a per-word algorithm is written once and compiled by both. Also
 * compiles as C11 on the host.
 *
 *   PS_GLOBAL      address space of device buffers (__global / nothing)
 *   PS_CONST_MEM   address space of read-only launch data (__constant / nothing)
 *   PS_FN          a device function (static inline / static __device__)
 *   PS_HFN         a device function the host tests call too (static inline /
 *                  static __host__ __device__)
 *   ps_mulhi64     high 64 bits of a 64x64-bit product
 *   ps_atomic_min_u32  atomic minimum on a 32-bit word of device memory
 *   ps_ctz32       index of the lowest set bit of a nonzero 32-bit word
 *   ps_popc32      set bits of a 32-bit word
 * Types: ps_u32, ps_u64, ps_i64 (from core/ps_program.h), ps_u8.
 */
#ifndef PS_DIALECT_H
#define PS_DIALECT_H

#ifndef PS_PROGRAM_H /* concatenated in front on OpenCL, where nothing can be included */
#include "ps_program.h"
#endif

#if defined(__OPENCL_VERSION__)
typedef uchar ps_u8;
#define PS_GLOBAL __global
#define PS_CONST_MEM __constant
#define PS_FN static inline
#define ps_mulhi64(a, b) mul_hi((ulong)(a), (ulong)(b))
#define ps_atomic_min_u32(p, v) atomic_min((volatile __global uint *)(p), (v))
#define ps_ctz32(x) (31u - clz((x) & (0u - (x))))
#define ps_popc32(x) popcount((uint)(x))
#elif defined(__CUDACC__)
typedef unsigned char ps_u8;
#define PS_GLOBAL
#define PS_CONST_MEM
#define PS_FN static __device__ __forceinline__
#define ps_mulhi64(a, b) __umul64hi((a), (b))
#define ps_atomic_min_u32(p, v) atomicMin((unsigned int *)(p), (v))
#define ps_ctz32(x) ((ps_u32)(__ffs((int)(x)) - 1))
#define ps_popc32(x) ((ps_u32)__popc(x))
#else
typedef uint8_t ps_u8;
#define PS_GLOBAL
#define PS_CONST_MEM
#define PS_FN static inline
static inline ps_u64 ps_mulhi64(ps_u64 a, ps_u64 b) {
  __extension__ typedef unsigned __int128 u128_;
  return (ps_u64)(((u128_)a * b) >> 64);
}
static inline void ps_atomic_min_u32(ps_u32 *p, ps_u32 v) {
  if (v < *p) *p = v; /* host: one thread */
}
#define ps_ctz32(x) ((ps_u32)__builtin_ctz(x))
#define ps_popc32(x) ((ps_u32)__builtin_popcount(x))
#endif

#if defined(__CUDACC__)
#define PS_HFN static __host__ __device__ __forceinline__
#else
#define PS_HFN PS_FN
#endif

#endif /* PS_DIALECT_H */
