/*
 * Comparison arithmetic shared by the evaluators of both dialects
 * (ps_where.h: OpenCL's words.cl and CUDA's general kernel; the per-row
 * interpreters ps_cuda_rows.cuh and filter.cl) and the host tests: the
 * reference difference of the 32-bit column compare, a comparison's outcome
 * from the order of its operands, the
 * PS_MODE_INT key and the PS_MODE_DOUBLE value of a code (a lossless float
 * column's through its descriptor); and the lookups of
 * a code in the program's aux words (a SET bit, a PS_MODE_RANK rank, the
 * INLIST intervals), read through ps_dialect.h's ps_aux_words.
 */
#ifndef PS_CMPCOL_H
#define PS_CMPCOL_H

#ifndef PS_DIALECT_H /* concatenated in front on OpenCL, where nothing can be included */
#include "ps_dialect.h"
#endif
#ifndef PS_LAYOUT_H /* the float order transform; in front of ps_codes.h on OpenCL and NVRTC */
#include "ps_layout.h"
#endif

/* Mb - Ma as an exact integer when it lies in [-2^32, 2^32], else clamped to
 * that interval; M reads as int64 for signed kinds, as uint64 otherwise (the
 * PS_MODE_INT keys of core/ps_program.h).
 *
 * The 32-bit compare (PS_LEAF_CMP32 / ps_cmp32_*) needs the difference only
 * against code differences, which lie in [-(2^31 - 1), 2^31 - 1]: a clamped
 * value must stay outside that interval, also after the +1 that LE and GT
 * add. A symmetric clamp at 2^32 leaves that margin on both sides, so any
 * caller's threshold test in 64 bits is right; the former OpenCL copy
 * clamped to [-2^31 - 1, 2^31], exactly one past the int32 range, which was
 * also right but only for its callers' exact tests (d > 2^31 - 1,
 * d < -2^31). */
PS_HFN ps_i64 ps_ref_diff(ps_u64 ma, int signed_a, ps_u64 mb, int signed_b) {
  const int na = signed_a && (ps_i64)ma < 0, nb = signed_b && (ps_i64)mb < 0;
  const ps_u64 ga = na ? 0 - ma : ma, gb = nb ? 0 - mb : mb; /* magnitudes */
  int neg;
  ps_u64 mag;
  if (na != nb) { /* opposite signs: |Mb - Ma| = |Mb| + |Ma|, Mb's sign */
    neg = nb;
    mag = gb + ga < gb ? ~(ps_u64)0 : gb + ga;
  } else if (gb >= ga) {
    neg = nb;
    mag = gb - ga;
  } else {
    neg = !nb;
    mag = ga - gb;
  }
  const ps_u64 cap = (ps_u64)1 << 32;
  if (mag > cap) mag = cap;
  return neg ? -(ps_i64)mag : (ps_i64)mag;
}

/* a <cmp> b from the order of the two operands (lt, eq, gt: 0 or 1 each;
 * all three 0 for unordered doubles, which makes only != true). An unknown
 * cmp is false. */
PS_HFN int ps_cmp_outcome(ps_u32 cmp, int lt, int eq, int gt) {
  switch (cmp) {
    case PS_CMP_EQ: return eq;
    case PS_CMP_NE: return !eq;
    case PS_CMP_LT: return lt;
    case PS_CMP_LE: return lt || eq;
    case PS_CMP_GT: return gt;
    case PS_CMP_GE: return gt || eq;
    default: return 0;
  }
}

/* The PS_MODE_INT key of M + code (core/ps_program.h): the exact integer of
 * a signed or unsigned kind as (hi, lo), ordered lexicographically (other
 * kinds take the unsigned rule, as the reference). The sum wraps by design. */
typedef struct ps_int_key {
  ps_u32 hi;
  ps_u64 lo;
} ps_int_key;

PS_HFN ps_int_key ps_int_key_of(ps_u64 reference, int is_signed, ps_u64 code) {
  ps_int_key k;
  k.lo = reference + code;
  k.hi = is_signed ? ((ps_i64)k.lo >= 0 ? 1u : 0u) : 1u;
  return k;
}

/* The sign of a - b: -1, 0 or 1. */
PS_HFN int ps_int_key_sign(ps_int_key a, ps_int_key b) {
  if (a.hi != b.hi) return a.hi < b.hi ? -1 : 1;
  if (a.lo != b.lo) return a.lo < b.lo ? -1 : 1;
  return 0;
}

/* Word k of the aux words; past them (only a malformed program reads there)
 * 0, with `fault` raised in *status. */
PS_HFN ps_u32 ps_aux_word(ps_aux_words aux, ps_u64 k, ps_u32 *status, ps_u32 fault) {
  if (k >= ps_aux_count(aux)) {
    *status |= fault;
    return 0;
  }
  return ps_aux_load(aux, k);
}

/* Bit k of the aux bitmap (bit k % 32 of word k / 32), bounded as ps_aux_word. */
PS_HFN ps_bool ps_aux_bit(ps_aux_words aux, ps_u64 k, ps_u32 *status, ps_u32 fault) {
  if ((k >> 5) >= ps_aux_count(aux)) {
    *status |= fault;
    return 0;
  }
  return (ps_aux_load(aux, k >> 5) >> (k & 31)) & 1u;
}

/* Whether code lies in one of `count` sorted disjoint intervals [first,
 * last] stored from word `base`, 4 words each (first low, first high, last
 * low, last high): a binary search for the first interval whose first >
 * code. The host checked base + 4 * count <= the aux words. */
PS_HFN ps_bool ps_in_list(ps_aux_words aux, ps_u64 base, ps_u64 count, ps_u64 code) {
  ps_u64 lo = 0, hi = count;
  while (lo < hi) {
    const ps_u64 mid = lo + (hi - lo) / 2;
    const ps_u64 at = base + 4 * mid;
    const ps_u64 first = (ps_u64)ps_aux_load(aux, at) | ((ps_u64)ps_aux_load(aux, at + 1) << 32);
    if (first <= code)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0) return 0;
  const ps_u64 at = base + 4 * (lo - 1);
  const ps_u64 last = (ps_u64)ps_aux_load(aux, at + 2) | ((ps_u64)ps_aux_load(aux, at + 3) << 32);
  return code <= last;
}

#if !defined(__OPENCL_VERSION__) || defined(PS_HAVE_FP64)
#if defined(__OPENCL_VERSION__)
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif
/* The PS_MODE_DOUBLE value of a code of a column of `kind` with reference M
 * (core/ps_program.h); pow10 (*pow10) is 10^scale, read for the float kinds only.
 * Conversions round to nearest even and the division is correctly rounded
 * (never built with fast-math options). */
PS_HFN double ps_code_double_at(ps_u32 kind, ps_u64 reference, ps_u64 code, double pow10) {
  const ps_u64 v = reference + code;
  switch (kind) {
    case PS_KIND_UNSIGNED: return (double)v;
    case PS_KIND_FLOAT64: return (double)(ps_i64)v / pow10;
    case PS_KIND_FLOAT32: return (double)(float)((double)(ps_i64)v / pow10);
    default: return (double)(ps_i64)v;
  }
}

PS_HFN double ps_code_double(ps_u32 kind, ps_u64 reference, ps_u64 code, PS_CONST_MEM const double *pow10) {
  return ps_code_double_at(kind, reference, code, *pow10);
}

/* The PS_MODE_DOUBLE value of a code of a lossless float column through its
 * descriptor at aux word `at` (PS_INSN_FMAP_A / B, core/ps_program.h): the
 * decode of core/float_map.c's ps_fmap_decode, whose factors the host wrote
 * so that no table is needed here. Every aux read is bounded (a malformed
 * program raises `fault`); an exception is searched for only where the code
 * can be one (code 0, or a nonzero rank), as the query kernels' ps_q_fcol. */
PS_HFN double ps_fdesc_double(ps_aux_words aux, ps_u64 at, ps_u64 code, ps_u32 *status, ps_u32 fault) {
  const ps_u32 w0 = ps_aux_word(aux, at, status, fault);
  const ps_u64 ref =
      (ps_u64)ps_aux_word(aux, at + 6, status, fault) | ((ps_u64)ps_aux_word(aux, at + 7, status, fault) << 32);
  const int f32 = ((w0 >> 8) & 1u) != 0;
  if ((w0 & 0xffu) == PS_FDESC_BITS) { /* the inverse of the order transform */
    const ps_u64 o = ref + code;
    if (f32) return (double)ps_bits_f32(ps_ford32_inverse((ps_u32)o));
    return ps_bits_f64(ps_ford64_inverse(o));
  }
  const ps_u32 rb = ps_aux_word(aux, at + 1, status, fault) & 63u; /* the check keeps it <= 63 */
  if ((code & ((((ps_u64)1) << rb) - 1u)) != 0 || code == 0) {
    /* the last entry whose code <= code, counts as an exception in its gap */
    const ps_u64 n = ps_aux_word(aux, at + 8, status, fault), base = at + PS_FDESC_HEAD;
    ps_u64 lo = 0, hi = n;
    while (lo < hi) {
      const ps_u64 mid = lo + (hi - lo) / 2, e = base + PS_FDESC_ENTRY * mid;
      const ps_u64 c =
          (ps_u64)ps_aux_word(aux, e, status, fault) | ((ps_u64)ps_aux_word(aux, e + 1, status, fault) << 32);
      if (c <= code)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo > 0) {
      const ps_u64 e = base + PS_FDESC_ENTRY * (lo - 1);
      const ps_u64 c =
          (ps_u64)ps_aux_word(aux, e, status, fault) | ((ps_u64)ps_aux_word(aux, e + 1, status, fault) << 32);
      if ((c >> rb) == (code >> rb))
        return ps_bits_f64((ps_u64)ps_aux_word(aux, e + 2, status, fault) |
                           ((ps_u64)ps_aux_word(aux, e + 3, status, fault) << 32));
    }
  }
  /* the grid value of step k: two products, each rounded once */
  const ps_i64 k = (ps_i64)(ref + (code >> rb));
  const ps_u32 m0 = ps_aux_word(aux, at + 2, status, fault), d0 = ps_aux_word(aux, at + 4, status, fault);
  if (f32) return (double)ps_fmul_rn(ps_fmul_rn((float)k, ps_bits_f32(m0)), ps_bits_f32(d0));
  const ps_u64 mul = (ps_u64)m0 | ((ps_u64)ps_aux_word(aux, at + 3, status, fault) << 32);
  const ps_u64 frac = (ps_u64)d0 | ((ps_u64)ps_aux_word(aux, at + 5, status, fault) << 32);
  return ps_dmul_rn(ps_dmul_rn((double)k, ps_bits_f64(mul)), ps_bits_f64(frac));
}

/* 10^scale (scale 0..18) as a double, exact: every power up to 10^22 is a
 * double, so each product below is exact. */
PS_HFN double ps_pow10_of(ps_u32 scale) {
  double v = 1.0;
  for (ps_u32 i = 0; i < scale && i < 18u; ++i) v *= 10.0;
  return v;
}
#endif

#endif /* PS_CMPCOL_H */
