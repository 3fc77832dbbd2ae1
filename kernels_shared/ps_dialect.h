/*
 * The dialect header of the shared kernel sources (OpenMM's approach): the
 * few differences between OpenCL C 1.2 and CUDA C++ behind one set of names,
 * so that a per-word algorithm is written once and compiled by both. Also
 * compiles as C11 on the host.
 *
 *   PS_GLOBAL      address space of device buffers (__global / nothing)
 *   PS_CONST_MEM   address space of read-only launch data (__constant / nothing)
 *   PS_Q_SPEC_DATA a constant initialized at compile time, whose loads the
 *                  compiler folds (a specialized query's programs)
 *   PS_FN          a device function (static inline / static __device__)
 *   PS_HFN         a device function the host tests call too (static inline /
 *                  static __host__ __device__)
 *   ps_mulhi64     high 64 bits of a 64x64-bit product
 *   ps_atomic_min_u32  atomic minimum on a 32-bit word of device memory
 *   ps_ctz32       index of the lowest set bit of a nonzero 32-bit word
 *   ps_popc32      set bits of a 32-bit word
 *   PS_LOCAL       address space of work-group memory (__local / shared)
 *   PS_BARRIER()   a work-group barrier over work-group memory
 *   PS_PREFETCH(p) a hint to bring global memory at p into the cache (the
 *                  L2 on CUDA; OpenCL's prefetch, clang's on a CPU device;
 *                  nothing on the host)
 *   ps_local_add_carry  adds v to a 64-bit word of work-group memory and
 *                  returns the carry out of its bit 63 (0 or 1), as two
 *                  32-bit atomic adds, the low word's carry into the high
 *                  one: every wrap of either word is counted once whatever
 *                  the order, so the word plus the returned carries is the
 *                  exact sum. GPUs have no 64-bit add on work-group memory
 *                  (sm_90 compiles one to a compare-and-swap loop, which
 *                  contended entries retry); 32-bit adds are native. One
 *                  definition over the dialect's ps_local_add_u32 (a 32-bit
 *                  atomic add, returning the old value) and
 *                  PS_LOCAL_LOW_WORD (which half of a 64-bit word is low).
 *   ps_local_min_i64, ps_local_max_i64
 *                  64-bit atomic min / max on work-group memory; on OpenCL
 *                  only where PS_Q_INT64_ATOMICS is defined (the device has
 *                  cl_khr_int64_base_atomics and
 *                  cl_khr_int64_extended_atomics)
 *   ps_atomic_cas_u64  64-bit compare-and-swap on device memory, returning
 *                  the old value (OpenCL: where PS_Q_INT64_ATOMICS is defined)
 *   ps_atomic_add_u64, ps_atomic_max_u64  64-bit add (returning the old
 *                  value) and unsigned maximum on device memory (the same)
 *   PS_WARP_OPS    defined where a warp's 32 lanes can combine registers
 *                  (CUDA): ps_warp_sum_u32 (the lanes' sum modulo 2^32),
 *                  ps_warp_count (lanes whose predicate holds),
 *                  ps_warp_min_i64, ps_warp_max_i64; all 32 lanes call them
 *                  together
 *   PS_UNROLL      unroll the next loop fully (on devices; nothing on hosts,
 *                  whose compilers would warn)
 *   ps_aux_words   a program's aux words as the interpreters read them:
 *                  OpenCL a byte region of a buffer (ps_region: any offset,
 *                  bytes past its size read as 0, loaded by ps_codes.h's
 *                  ps_stream_word), CUDA and hosts the words and their count
 *                  (CUDA devices load through the read-only cache);
 *                  ps_aux_count(a) the number of words, ps_aux_load(a, k)
 *                  word k < ps_aux_count(a)
 *   ps_bits_f32, ps_f32_bits  a float from its IEEE bit pattern, and back;
 *                  ps_bits_f64, ps_f64_bits the same for doubles (OpenCL:
 *                  where PS_HAVE_FP64 is defined)
 *   ps_fmul_rn, ps_dmul_rn  a product rounded once to nearest even, never
 *                  fused with a neighbouring operation (CUDA devices:
 *                  __fmul_rn, __dmul_rn, which nvcc never contracts into an
 *                  FMA; ps_bits_f32, ps_bits_f64 and these two are also
 *                  callable from CUDA host code;
 *                  OpenCL and hosts: a plain product, which is correctly
 *                  rounded without fast-math options and has no addition to
 *                  fuse with where the kernels use it)
 *   ps_dadd_rn, ps_dsub_rn  a sum, a difference, likewise rounded once and
 *                  never fused (CUDA devices: __dadd_rn, __dsub_rn;
 *                  OpenCL: FP_CONTRACT is off; hosts: a volatile store)
 * Types: ps_u32, ps_u64, ps_i64 (from core/ps_program.h), ps_u8, ps_bool
 * (bool, C11's _Bool on hosts).
 */
#ifndef PS_DIALECT_H
#define PS_DIALECT_H

#ifndef PS_PROGRAM_H /* concatenated in front on OpenCL, where nothing can be included */
#include "ps_program.h"
#endif

#if defined(__OPENCL_VERSION__)
typedef uchar ps_u8;
typedef bool ps_bool;
#define PS_GLOBAL __global
#define PS_CONST_MEM __constant
#define PS_Q_SPEC_DATA __constant
#if defined(PS_FN_INLINE) /* the host's build options: every call inlined */
#define PS_FN static inline __attribute__((always_inline))
#else
#define PS_FN static inline
#endif
#define ps_mulhi64(a, b) mul_hi((ulong)(a), (ulong)(b))
#define ps_atomic_min_u32(p, v) atomic_min((volatile __global uint *)(p), (v))
#define ps_ctz32(x) (31u - clz((x) & (0u - (x))))
#define ps_popc32(x) popcount((uint)(x))
#define PS_LOCAL __local
#define PS_BARRIER() barrier(CLK_LOCAL_MEM_FENCE)
/* On a CPU device the host asks for clang's prefetch (PS_CPU_PREFETCH): PoCL
 * compiles OpenCL's prefetch() to nothing. */
#if defined(PS_CPU_PREFETCH) && defined(__clang__)
#define PS_PREFETCH(p) __builtin_prefetch((__global const void *)(p))
#else
#define PS_PREFETCH(p) prefetch((__global const uchar *)(p), 1)
#endif
#define ps_local_add_u32(p, v) atomic_add((volatile __local uint *)(p), (uint)(v))
#ifdef __ENDIAN_LITTLE__
#define PS_LOCAL_LOW_WORD 0
#else
#define PS_LOCAL_LOW_WORD 1
#endif
#if defined(PS_Q_INT64_ATOMICS)
#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
#pragma OPENCL EXTENSION cl_khr_int64_extended_atomics : enable
#define ps_local_min_i64(p, v) atom_min((volatile __local long *)(p), (long)(v))
#define ps_local_max_i64(p, v) atom_max((volatile __local long *)(p), (long)(v))
#define ps_atomic_cas_u64(p, cmp, v) atom_cmpxchg((volatile __global ulong *)(p), (ulong)(cmp), (ulong)(v))
#define ps_atomic_add_u64(p, v) atom_add((volatile __global ulong *)(p), (ulong)(v))
#define ps_atomic_max_u64(p, v) atom_max((volatile __global ulong *)(p), (ulong)(v))
#endif
/* The readable bytes [offset, offset + size) of a buffer (cl_mem base
 * addresses are at least 4-byte aligned, so the offset alone decides whether
 * a word load is aligned). */
typedef struct ps_region {
  __global const uchar *buf;
  ulong offset;
  ulong size;
} ps_region;
typedef ps_region ps_aux_words;
#define ps_aux_count(a) ((a).size / 4)
#define ps_aux_load(a, k) ps_stream_word((a).buf + (a).offset, (a).size, (k), ((a).offset & 3) == 0)
#elif defined(__CUDACC__)
typedef unsigned char ps_u8;
typedef bool ps_bool;
#define PS_GLOBAL
#define PS_CONST_MEM
#define PS_Q_SPEC_DATA static __device__ const
#define PS_FN static __device__ __forceinline__
#define ps_mulhi64(a, b) __umul64hi((a), (b))
#define ps_atomic_min_u32(p, v) atomicMin((unsigned int *)(p), (v))
#define ps_ctz32(x) ((ps_u32)(__ffs((int)(x)) - 1))
#define ps_popc32(x) ((ps_u32)__popc(x))
#define PS_LOCAL
#define PS_BARRIER() __syncthreads()
#define PS_PREFETCH(p) asm volatile("prefetch.global.L2 [%0];" ::"l"(p))
#define ps_local_add_u32(p, v) atomicAdd((unsigned int *)(p), (unsigned int)(v))
#define PS_LOCAL_LOW_WORD 0 /* little-endian */
#define ps_local_min_i64(p, v) atomicMin((long long *)(p), (long long)(v))
#define ps_local_max_i64(p, v) atomicMax((long long *)(p), (long long)(v))
#define ps_atomic_cas_u64(p, cmp, v) \
  ((ps_u64)atomicCAS((unsigned long long *)(p), (unsigned long long)(cmp), (unsigned long long)(v)))
#define ps_atomic_add_u64(p, v) ((ps_u64)atomicAdd((unsigned long long *)(p), (unsigned long long)(v)))
#define ps_atomic_max_u64(p, v) atomicMax((unsigned long long *)(p), (unsigned long long)(v))
#define PS_WARP_OPS 1
static __device__ __forceinline__ ps_u32 ps_warp_sum_u32(ps_u32 v) {
#if __CUDA_ARCH__ >= 800
  return __reduce_add_sync(0xFFFFFFFFu, v); /* one instruction (REDUX) */
#else
  for (int o = 16; o > 0; o >>= 1) v += __shfl_xor_sync(0xFFFFFFFFu, v, o);
  return v;
#endif
}
#define ps_warp_count(pred) ((ps_u32)__popc(__ballot_sync(0xFFFFFFFFu, (pred))))
static __device__ __forceinline__ long long ps_warp_min_i64(long long v) {
  for (int o = 16; o > 0; o >>= 1) {
    const long long y = __shfl_xor_sync(0xFFFFFFFFu, v, o);
    v = y < v ? y : v;
  }
  return v;
}
static __device__ __forceinline__ long long ps_warp_max_i64(long long v) {
  for (int o = 16; o > 0; o >>= 1) {
    const long long y = __shfl_xor_sync(0xFFFFFFFFu, v, o);
    v = y > v ? y : v;
  }
  return v;
}
#else
typedef uint8_t ps_u8;
typedef _Bool ps_bool;
#define PS_GLOBAL
#define PS_CONST_MEM
#define PS_Q_SPEC_DATA static const
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
/* host: one thread, so work-group memory is plain memory */
#define PS_LOCAL
#define PS_BARRIER() ((void)0)
#define PS_PREFETCH(p) ((void)(p))
static inline ps_u32 ps_local_add_carry(ps_u64 *p, ps_u64 v) {
  const ps_u64 old = *p; /* host: one thread */
  *p = old + v;
  return *p < old ? 1u : 0u;
}
static inline void ps_local_min_i64(ps_u64 *p, ps_i64 v) {
  if (v < (ps_i64)*p) *p = (ps_u64)v;
}
static inline void ps_local_max_i64(ps_u64 *p, ps_i64 v) {
  if (v > (ps_i64)*p) *p = (ps_u64)v;
}
static inline ps_u64 ps_atomic_add_u64(ps_u64 *p, ps_u64 v) {
  const ps_u64 old = *p; /* host: one thread */
  *p = old + v;
  return old;
}
static inline void ps_atomic_max_u64(ps_u64 *p, ps_u64 v) {
  if (v > *p) *p = v;
}
static inline ps_u64 ps_atomic_cas_u64(ps_u64 *p, ps_u64 cmp, ps_u64 v) {
  const ps_u64 old = *p; /* host: one thread */
  if (old == cmp) *p = v;
  return old;
}
#endif

#if defined(__CUDACC__)
#define PS_HFN static __host__ __device__ __forceinline__
#else
#define PS_HFN PS_FN
#endif

#if defined(__OPENCL_VERSION__) || defined(__CUDACC__)
/* ps_local_add_carry on devices, from the dialect's 32-bit atomic add
 * (ps_local_add_u32) and which of the word's halves is its low one. */
PS_FN ps_u32 ps_local_add_carry(PS_LOCAL ps_u64 *p, ps_u64 v) {
  PS_LOCAL ps_u32 *w = (PS_LOCAL ps_u32 *)p;
  const ps_u32 l = (ps_u32)v;
  ps_u32 c = 0;
  if (l != 0) {
    const ps_u32 old = ps_local_add_u32(&w[PS_LOCAL_LOW_WORD], l);
    c = old + l < old ? 1u : 0u;
  }
  const ps_u64 h = (v >> 32) + c; /* 2^32 when v's high word is all ones and c is 1 */
  ps_u32 out = (ps_u32)(h >> 32);
  if ((ps_u32)h != 0) {
    const ps_u32 old = ps_local_add_u32(&w[1 - PS_LOCAL_LOW_WORD], (ps_u32)h);
    out += old + (ps_u32)h < old ? 1u : 0u;
  }
  return out;
}
#endif

#if !defined(__OPENCL_VERSION__)
typedef struct ps_aux_words {
  const ps_u32 *words;
  ps_u32 count; /* ps_program's aux_words */
} ps_aux_words;
#define ps_aux_count(a) ((a).count)
#if defined(__CUDA_ARCH__)
#define ps_aux_load(a, k) ((ps_u32)__ldg((a).words + (k)))
#else
#define ps_aux_load(a, k) ((a).words[k])
#endif
#endif

#if defined(__OPENCL_VERSION__)
#define ps_bits_f32(b) as_float((uint)(b))
#define ps_f32_bits(x) as_uint((float)(x))
#define ps_fmul_rn(a, b) ((a) * (b))
#if defined(PS_HAVE_FP64)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#define ps_bits_f64(b) as_double((ulong)(b))
#define ps_f64_bits(x) as_ulong((double)(x))
#define ps_dmul_rn(a, b) ((a) * (b))
#define ps_dadd_rn(a, b) ((a) + (b))
#define ps_dsub_rn(a, b) ((a) - (b))
#endif
/* OpenCL C contracts a * b + c into an FMA by default: never here */
#pragma OPENCL FP_CONTRACT OFF
#elif defined(__CUDACC__)
#define ps_f32_bits(x) ((ps_u32)__float_as_uint(x))
#define ps_f64_bits(x) ((ps_u64)__double_as_longlong(x))
/* __host__ __device__: ps_cmpcol.h's ps_fdesc_double reads them, which the
 * per-row interpreter also runs on the host in the CUDA tests; there a
 * union, and a volatile product stored once (as on hosts below) */
static __host__ __device__ __forceinline__ float ps_bits_f32(ps_u32 b) {
#if defined(__CUDA_ARCH__)
  return __uint_as_float(b);
#else
  union {
    ps_u32 u;
    float f;
  } x;
  x.u = b;
  return x.f;
#endif
}
static __host__ __device__ __forceinline__ double ps_bits_f64(ps_u64 b) {
#if defined(__CUDA_ARCH__)
  return __longlong_as_double((long long)b);
#else
  union {
    ps_u64 u;
    double f;
  } x;
  x.u = b;
  return x.f;
#endif
}
static __host__ __device__ __forceinline__ float ps_fmul_rn(float a, float b) {
#if defined(__CUDA_ARCH__)
  return __fmul_rn(a, b);
#else
  volatile float p = a * b;
  return p;
#endif
}
static __host__ __device__ __forceinline__ double ps_dmul_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dmul_rn(a, b);
#else
  volatile double p = a * b;
  return p;
#endif
}
static __host__ __device__ __forceinline__ double ps_dadd_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dadd_rn(a, b);
#else
  volatile double p = a + b;
  return p;
#endif
}
static __host__ __device__ __forceinline__ double ps_dsub_rn(double a, double b) {
#if defined(__CUDA_ARCH__)
  return __dsub_rn(a, b);
#else
  volatile double p = a - b;
  return p;
#endif
}
#else
static inline float ps_bits_f32(ps_u32 b) {
  union {
    ps_u32 u;
    float f;
  } x;
  x.u = b;
  return x.f;
}
static inline ps_u32 ps_f32_bits(float f) {
  union {
    ps_u32 u;
    float f;
  } x;
  x.f = f;
  return x.u;
}
static inline double ps_bits_f64(ps_u64 b) {
  union {
    ps_u64 u;
    double f;
  } x;
  x.u = b;
  return x.f;
}
static inline ps_u64 ps_f64_bits(double f) {
  union {
    ps_u64 u;
    double f;
  } x;
  x.f = f;
  return x.u;
}
/* volatile: each product stored, so rounded once, before the next operation */
static inline float ps_fmul_rn(float a, float b) {
  volatile float p = a * b;
  return p;
}
static inline double ps_dmul_rn(double a, double b) {
  volatile double p = a * b;
  return p;
}
static inline double ps_dadd_rn(double a, double b) {
  volatile double p = a + b;
  return p;
}
static inline double ps_dsub_rn(double a, double b) {
  volatile double p = a - b;
  return p;
}
#endif

#if defined(__OPENCL_VERSION__) || defined(__CUDA_ARCH__)
#define PS_UNROLL _Pragma("unroll")
#else
#define PS_UNROLL
#endif

#endif /* PS_DIALECT_H */
