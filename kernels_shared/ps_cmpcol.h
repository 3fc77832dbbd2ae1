/*
 * Column-against-column arithmetic shared by the per-word evaluators of both
 * dialects (kernels_cuda/ps_cuda_words.cuh, kernels_opencl/words.cl) and the
 * host tests.
 */
#ifndef PS_CMPCOL_H
#define PS_CMPCOL_H

#ifndef PS_DIALECT_H /* concatenated in front on OpenCL, where nothing can be included */
#include "ps_dialect.h"
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

#endif /* PS_CMPCOL_H */
