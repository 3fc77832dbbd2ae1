/*
 * Per-word arithmetic of the single-range fast path (range_words.cu): from
 * the W packed 32-bit words that hold 32 codes of width W, the 32-bit mask of
 * codes in [lo, lo + span]. __host__ __device__ so that the same code is
 * checked against a plain loop on the CPU (tests/test_cuda_range_bits.cu).
 *
 * Widths 4 and 8 (a code never straddles a word) use SWAR: every lane of a
 * word is compared at once (Hacker's Delight 2-18 lane-wise subtraction and
 * 2-12 unsigned comparison), then the lanes' top bits are compressed into
 * consecutive result bits. Width 2 is a bit-sliced truth table, width 1 a
 * bitwise function of the word. Width 16 and the widths that straddle
 * compare each code in the top bits of a 32-bit value (W is a template
 * parameter, so its shifts are constants).
 */
#ifndef PS_RANGE_BITS_CUH
#define PS_RANGE_BITS_CUH

#include <stdint.h>

#ifndef __CUDACC__
#define __host__
#define __device__
#define __forceinline__ inline
#endif

/* Unrolling matters on the device only; host compilers would warn. */
#ifdef __CUDA_ARCH__
#define PS_RB_UNROLL _Pragma("unroll")
#else
#define PS_RB_UNROLL
#endif

namespace ps_range {

/* Bits at multiples of W, set: 0x..0101 (W = 8), 0x..1111 (W = 4)... */
template <int W>
__host__ __device__ constexpr uint32_t lane_lsbs() {
  uint32_t m = 0;
  for (int k = 0; k < 32; k += W) m |= 1u << k;
  return m;
}

/* Step mask of compress(): groups of 2g bits at multiples of 2gW. */
template <int W>
__host__ __device__ constexpr uint32_t group_mask(int g) {
  uint32_t m = 0;
  for (int k = 0; k < 32; k += 2 * g * W) m |= (uint32_t)(((uint64_t)1 << (2 * g)) - 1) << k;
  return m;
}

/* One step of compress_lsbs and the steps after it. Each step's mask is a
 * constexpr local: with the masks computed inside an unrolled loop
 * (group_mask<W>(g), g the loop variable) nvcc 13 kept group_mask's own loop
 * and ran it, on the uniform datapath, for every stream word: 19 loop
 * bodies in the hot path of the 4-bit kernel (cuobjdump -sass). */
template <int W, int G>
__host__ __device__ __forceinline__ uint32_t compress_steps(uint32_t x) {
  if constexpr (G < 32 / W) {
    constexpr uint32_t m = group_mask<W>(G);
    return compress_steps<W, 2 * G>((x | (x >> (G * (W - 1)))) & m);
  } else {
    return x;
  }
}

/* The lowest bit of each W-bit lane, moved to consecutive bits 0 .. 32/W - 1. */
template <int W>
__host__ __device__ __forceinline__ uint32_t compress_lsbs(uint32_t x) {
  constexpr uint32_t lsbs = lane_lsbs<W>();
  return compress_steps<W, 1>(x & lsbs);
}

/* The top bit of each W-bit lane, moved to consecutive bits 0 .. 32/W - 1.
 * W = 8: one multiply gathers the four top bits into bits 28..31 (bit 7 + 8i
 * moves up by 21 - 7i; the other partial products land on distinct bits
 * below 28 or past 31, so nothing carries into the result): 3 operations
 * instead of 6. */
template <int W>
__host__ __device__ __forceinline__ uint32_t compress_tops(uint32_t x) {
  if constexpr (W == 8) return ((x & 0x80808080u) * 0x00204081u) >> 28;
  else return compress_lsbs<W>(x >> (W - 1));
}

/* Lane-wise x - y modulo 2^W (no borrow between lanes). */
template <int W>
__host__ __device__ __forceinline__ uint32_t lane_sub(uint32_t x, uint32_t y) {
  constexpr uint32_t H = lane_lsbs<W>() << (W - 1);
  return ((x | H) - (y & ~H)) ^ ((x ^ ~y) & H);
}

/* Top bit of each lane set iff that lane of x is < (unsigned) that lane of y. */
template <int W>
__host__ __device__ __forceinline__ uint32_t lane_lt(uint32_t x, uint32_t y) {
  constexpr uint32_t H = lane_lsbs<W>() << (W - 1);
  return ((~x & y) | ((~x | y) & lane_sub<W>(x, y))) & H;
}

/* Lane-wise "code in [lo, lo + span]" of a 4- or 8-bit word x, in the top
 * bit of each lane (the other bits clear). LoZero (lo == 0: the one-sided
 * comparisons <, <=, the most common predicates) skips the subtraction of
 * lo, 4 of the ~10 operations per word. */
template <int W, bool LoZero>
__host__ __device__ __forceinline__ uint32_t lane_in(uint32_t x, uint32_t L, uint32_t S) {
  constexpr uint32_t H = lane_lsbs<W>() << (W - 1);
  const uint32_t d = LoZero ? x : lane_sub<W>(x, L);
  return ~lane_lt<W>(S, d) & H; /* not (span < code - lo) */
}

/* x with the bits of mask m and of m << d exchanged (a delta swap). */
__host__ __device__ __forceinline__ uint32_t delta_swap(uint32_t x, int d, uint32_t m) {
  const uint32_t t = ((x >> d) ^ x) & m;
  return x ^ t ^ (t << d);
}

/* The 32 result bits of four consecutive 4-bit stream words (a 16-byte
 * vector; word k holds rows 8k .. 8k + 7, row 8k + i in its lane i). Instead
 * of compressing each word's eight lane tops (8 operations a word), the four
 * words' tops are interleaved into one word (bit 4i + k: row 8k + i) and
 * that 8x4 bit matrix is transposed with four delta swaps (the index bits
 * rotated by two): ~21 operations a vector instead of ~32. */
template <bool LoZero>
__host__ __device__ __forceinline__ uint32_t quad4_bits(uint32_t x0, uint32_t x1, uint32_t x2, uint32_t x3, uint32_t L,
                                                        uint32_t S) {
  uint32_t y = (lane_in<4, LoZero>(x0, L, S) >> 3) | (lane_in<4, LoZero>(x1, L, S) >> 2) |
               (lane_in<4, LoZero>(x2, L, S) >> 1) | lane_in<4, LoZero>(x3, L, S);
  y = delta_swap(y, 1, 0x22222222u);     /* index bits 0 and 1 */
  y = delta_swap(y, 3, 0x0a0a0a0au);     /* 0 and 2 */
  y = delta_swap(y, 6, 0x00cc00ccu);     /* 1 and 3 */
  return delta_swap(y, 12, 0x0000f0f0u); /* 2 and 4 */
}

/* Widths whose codes never straddle a 32-bit word, so one stream word gives
 * 32/W whole result bits: the direct kernel (range_kernel.cuh) computes a
 * 16-byte vector's bits without staging. */
template <int W>
__host__ __device__ constexpr bool word_local() {
  return W == 1 || W == 2 || W == 4 || W == 8 || W == 16;
}

/* The 32/W result bits of one stream word x (codes 0 .. 32/W - 1 of it):
 * bit j set iff code j is in [lo, lo + span]. L and S are lo and span
 * repeated in every W-bit lane (lo * lane_lsbs<W>()); for W = 1, L and S
 * are the all-ones masks "0 is in the range" and "1 is in the range"; for
 * W = 16, lo and span in the top half (see word_consts). */
template <int W, bool LoZero = false>
__host__ __device__ __forceinline__ uint32_t word_bits(uint32_t x, uint32_t L, uint32_t S) {
  static_assert(word_local<W>(), "word_bits: codes must not straddle words");
  if constexpr (W == 1) {
    return (x & S) | (~x & L);
  } else if constexpr (W == 2) {
    /* Bit-sliced: L holds the 4-entry truth table (bit c: code c selected);
     * each lane's result is a two-level multiplexer over its bits, three
     * bitwise selects (one LOP3 each) for all 16 lanes, against about 14
     * operations for the lane arithmetic. The table masks are loop
     * invariants. */
    const uint32_t t0 = 0u - (L & 1u), t1 = 0u - ((L >> 1) & 1u), t2 = 0u - ((L >> 2) & 1u),
                   t3 = 0u - ((L >> 3) & 1u);
    (void)S;
    const uint32_t lo1 = (x & t1) | (~x & t0), hi1 = (x & t3) | (~x & t2); /* by the low bit of each lane */
    const uint32_t h = x >> 1;                                               /* high bits onto the low ones */
    return compress_lsbs<2>((h & hi1) | (~h & lo1));
  } else if constexpr (W == 16) {
    /* Two codes: each compared in the top half of a 32-bit value, as
     * range_bits does for the widths that straddle (L = lo << 16, S =
     * span << 16 | 0xffff, so the low half is ignored): a shift-and-subtract
     * (one IMAD) or a subtract, and a compare per code, ~4 instructions per
     * word against ~11 for the 16-bit lane arithmetic and its compression
     * (by the SASS of range_direct_kernel<16>). */
    return (uint32_t)((x << 16) - L <= S) | ((uint32_t)(x - L <= S) << 1);
  } else {
    return compress_tops<W>(lane_in<W, LoZero>(x, L, S));
  }
}

/* The 128/W result bits of one 16-byte vector x[0..4) of stream words at a
 * word-local width, in out[0 .. max(B/32, 1)) (B = 128/W; below 32 the low
 * B bits of out[0]); L, S as word_bits takes them. The direct kernel and the
 * fused row ids both compute a vector's bits through it. */
template <int W, bool LoZero = false>
__host__ __device__ __forceinline__ void vector_bits(const uint32_t *x, uint32_t L, uint32_t S, uint32_t *out) {
  static_assert(word_local<W>(), "vector_bits: codes must not straddle words");
  constexpr int B = 128 / W;
  if constexpr (W == 4) {
    out[0] = quad4_bits<LoZero>(x[0], x[1], x[2], x[3], L, S);
  } else if constexpr (B >= 32) {
PS_RB_UNROLL
    for (int j = 0; j < B / 32; j++) {
      uint32_t bits = 0;
PS_RB_UNROLL
      for (int k = 0; k < W; k++) bits |= word_bits<W, LoZero>(x[j * W + k], L, S) << (k * (32 / W));
      out[j] = bits;
    }
  } else {
    uint32_t bits = 0;
PS_RB_UNROLL
    for (int k = 0; k < 4; k++) bits |= word_bits<W, LoZero>(x[k], L, S) << (k * (32 / W));
    out[0] = bits;
  }
}

/* The constants of word_bits for [lo, lo + span] (lo + span < 2^W): lanes of
 * lo and span; W = 1: the two all-ones-or-zero masks; W = 2: a truth table. */
template <int W>
__host__ __device__ __forceinline__ void word_consts(uint64_t lo, uint64_t span, uint32_t *L, uint32_t *S) {
  if constexpr (W == 1) {
    *L = lo == 0 ? 0xffffffffu : 0u;          /* 0 in [lo, lo+span] */
    *S = (1 - lo) <= span ? 0xffffffffu : 0u; /* 1 in [lo, lo+span] */
  } else if constexpr (W == 2) {
    uint32_t t = 0; /* the truth table: bit c set iff code c is in the range */
    for (uint32_t c = 0; c < 4; c++) t |= (uint32_t)(((c - lo) & 3u) <= span) << c;
    *L = t;
    *S = 0;
  } else if constexpr (W == 16) {
    *L = (uint32_t)lo << 16; /* the code in the top half, the other half ignored */
    *S = ((uint32_t)span << 16) | 0xffffu;
  } else {
    constexpr uint32_t lsbs = lane_lsbs<W>();
    *L = (uint32_t)lo * lsbs;
    *S = (uint32_t)span * lsbs;
  }
}

/* Code j of the 32 codes in w[0..W) (W <= 32) in the top W bits of the
 * result; the bits below it are other codes' bits. */
template <int W>
__host__ __device__ __forceinline__ uint32_t code_top(const uint32_t *w, int j) {
  const int end = j * W + W; /* bit after the code, in the stream of w */
  const int k = (end - 1) >> 5, e = end - 32 * k; /* the code ends in word k at bit e (1..32) */
  if (e == 32) return w[k];
  if (e >= W) return w[k] << (32 - e); /* within word k */
  /* straddles words k-1 and k: bits [e + 32 - W, 32) of k-1 and [0, e) of k */
  return (w[k] << (32 - e)) | (w[k - 1] >> e);
}

/* Largest code of the 32 in w[0..W) (W <= 32), in the top W bits (the bits
 * below are not zero): codes are all <= limit iff the result's top W bits
 * are, i.e. iff max_code_top <= (limit << (32 - W)) | low ones. One max per
 * code: the cheap corrupt-code test of the range kernels, whose exact
 * per-row check (nulls, rows past the end) runs only when it fails. */
template <int W>
__host__ __device__ __forceinline__ uint32_t max_code_top(const uint32_t *w) {
  uint32_t m = 0;
PS_RB_UNROLL
  for (int j = 0; j < 32; j++) {
    const uint32_t c = code_top<W>(w, j);
    m = c > m ? c : m;
  }
  return m;
}

/* Bit j set iff code j (of the 32 codes in w[0..W)) is in [lo, lo + span].
 * The caller guarantees lo + span < 2^W. w has W + 2 readable entries. */
template <int W>
__host__ __device__ __forceinline__ uint32_t range_bits(const uint32_t *w, uint64_t lo, uint64_t span) {
  uint32_t bits = 0;
  if constexpr (W == 0) {
    bits = (0 - lo) <= span ? 0xffffffffu : 0u;
  } else if constexpr (W == 1) {
    const uint32_t has0 = lo == 0 ? 0xffffffffu : 0u;           /* 0 in [lo, lo+span] */
    const uint32_t has1 = (1 - lo) <= span ? 0xffffffffu : 0u;  /* 1 in [lo, lo+span] */
    bits = (w[0] & has1) | (~w[0] & has0);
  } else if constexpr (W == 2 || W == 4 || W == 8) {
    constexpr int per = 32 / W; /* codes per word */
    constexpr uint32_t lsbs = lane_lsbs<W>();
    const uint32_t L = (uint32_t)lo * lsbs, S = (uint32_t)span * lsbs;
PS_RB_UNROLL
    for (int k = 0; k < W; k++) {
      const uint32_t out = lane_lt<W>(S, lane_sub<W>(w[k], L)); /* span < code - lo */
      bits |= compress_tops<W>(~out) << (k * per);
    }
  } else if constexpr (W <= 32) {
    /* Each code is compared in the top W bits of a 32-bit value (code_top:
     * one shift, no mask: the bits below it are ignored by a span that is
     * all ones there). (code - lo) mod 2^W <= span iff
     * (top - lo_top) mod 2^32 <= span_top. */
    constexpr int G = 32 - W; /* garbage bits below the code */
    const uint32_t lo_top = (uint32_t)lo << G;
    const uint32_t span_top = ((uint32_t)span << G) | (uint32_t)(((uint64_t)1 << G) - 1);
PS_RB_UNROLL
    for (int j = 0; j < 32; j++) bits |= (uint32_t)((code_top<W>(w, j) - lo_top) <= span_top) << j;
  } else {
PS_RB_UNROLL
    for (int j = 0; j < 32; j++) {
      constexpr uint64_t mask = W == 64 ? ~0ull : ((1ull << (W % 64)) - 1ull);
      const int bit = j * W, k = bit >> 5, off = bit & 31;
      uint64_t c = ((uint64_t)w[k] | ((uint64_t)w[k + 1] << 32)) >> off;
      if (off + W > 64) c |= (uint64_t)w[k + 2] << (64 - off);
      c &= mask;
      bits |= (uint32_t)((c - lo) <= span) << j;
    }
  }
  return bits;
}

} // namespace ps_range

#endif
