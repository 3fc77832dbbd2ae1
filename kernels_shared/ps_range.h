/*
 * The RANGE leaf on a 32-row word, written once for every kernel and the
 * host (OpenCL C, CUDA C++, C11; kernels_shared/ps_dialect.h names the
 * differences): from the w packed 32-bit words that hold 32 codes of width
 * w, the 32-bit mask of codes in [lo, lo + span] (lo + span < 2^w; an empty
 * range arrives as the full range, negated by the caller).
 *
 * w is a parameter, but every caller passes a compile-time constant (a CUDA
 * template parameter, OpenCL's -DPS_W): once inlined, every branch on w
 * folds and every shift is a constant. The masks are closed expressions,
 * never loops: nvcc once kept a constexpr helper's loop and ran it for every
 * stream word (cuobjdump -sass).
 *
 *   ps_range_bits       the 32 result bits at any width 0..64: a bitwise
 *                       function at 1 bit, SWAR at 2, 4 and 8 (Hacker's
 *                       Delight 2-18 lane-wise subtraction, 2-12 unsigned
 *                       comparison, the lanes' top bits compressed), codes
 *                       compared in the top bits of a 32-bit value up to 32
 *                       (ps_rb_code_top), 64-bit codes above
 *   ps_rb_word_bits     the 32/w result bits of ONE stream word at a
 *                       word-local width (1, 2, 4, 8, 16: codes never
 *                       straddle a word), from ps_rb_word_consts' L and S;
 *                       a truth table at 2, two top-half compares at 16
 *   ps_rb_vector_bits   the 128/w bits of a 16-byte vector (four 4-bit
 *                       words: ps_rb_quad4, a transpose by delta swaps)
 *   ps_rb_max_code_top  the largest of 32 codes in the top bits: the cheap
 *                       corrupt-code (code-limit) test
 *
 * The lane arithmetic is also given as macros (PS_RB_LANE_SUB,
 * PS_RB_LANE_LT, PS_RB_COMPRESS_STEP), so that range.cl's CPU variant runs
 * it on 16-lane vectors.
 */
#ifndef PS_RANGE_H
#define PS_RANGE_H

#ifndef PS_DIALECT_H /* concatenated in front on OpenCL, where nothing can be included */
#include "ps_dialect.h"
#endif

/* Widths whose codes never straddle a 32-bit word: one stream word gives
 * 32/w whole result bits. */
#define PS_RB_WORD_LOCAL(w) ((w) == 1 || (w) == 2 || (w) == 4 || (w) == 8 || (w) == 16)

/* Bits at multiples of l (l a power of two; 32 and more: bit 0 only). */
#define PS_RB_LSBS(l)                                                                                              \
  ((l) == 1    ? 0xffffffffu                                                                                       \
   : (l) == 2  ? 0x55555555u                                                                                       \
   : (l) == 4  ? 0x11111111u                                                                                       \
   : (l) == 8  ? 0x01010101u                                                                                       \
   : (l) == 16 ? 0x00010001u                                                                                       \
               : 1u)
/* The top bit of every w-bit lane (w a power of two, 1..16). */
#define PS_RB_HIGHS(w) (PS_RB_LSBS(w) << ((w) - 1))

/* Lane-wise x - y modulo 2^w, no borrow between lanes (h = PS_RB_HIGHS(w)). */
#define PS_RB_LANE_SUB(x, y, h) ((((x) | (h)) - ((y) & ~(h))) ^ (((x) ^ ~(y)) & (h)))
/* The top bit of each lane set iff that lane of x is < (unsigned) that lane of y. */
#define PS_RB_LANE_LT(x, y, h) (((~(x) & (y)) | ((~(x) | (y)) & PS_RB_LANE_SUB(x, y, h))) & (h))

/* One step of compressing one bit per w-bit lane (the lane's lowest) into
 * consecutive bits: groups of g bits at multiples of g*w join pairwise into
 * groups of 2g at multiples of 2gw. Steps g = 1, 2, 4, 8 in turn; a step
 * with g >= 32/w has nothing left to join. */
#define PS_RB_GROUP(w, g) (PS_RB_LSBS(2 * (g) * (w)) * ((1u << (2 * (g))) - 1u))
#define PS_RB_COMPRESS_STEP(x, w, g) ((g) < 32 / (w) ? ((x) | ((x) >> ((g) * ((w) - 1)))) & PS_RB_GROUP(w, g) : (x))

/* The lowest bit of each w-bit lane moved to consecutive bits 0 .. 32/w - 1. */
PS_HFN ps_u32 ps_rb_compress_lsbs(ps_u32 x, int w) {
  x &= PS_RB_LSBS(w);
  x = PS_RB_COMPRESS_STEP(x, w, 1);
  x = PS_RB_COMPRESS_STEP(x, w, 2);
  x = PS_RB_COMPRESS_STEP(x, w, 4);
  return PS_RB_COMPRESS_STEP(x, w, 8);
}

/* The top bit of each w-bit lane moved to consecutive bits 0 .. 32/w - 1.
 * w = 8: one multiply gathers the four top bits into bits 28..31 (bit 7 + 8i
 * moves up by 21 - 7i; the other partial products land on distinct bits
 * below 28 or past 31, so nothing carries into the result): 3 operations
 * instead of 6. */
PS_HFN ps_u32 ps_rb_compress_tops(ps_u32 x, int w) {
  if (w == 8) return ((x & 0x80808080u) * 0x00204081u) >> 28;
  return ps_rb_compress_lsbs(x >> (w - 1), w);
}

/* Lane-wise "code in [lo, lo + span]" of a 4- or 8-bit word x, in the top
 * bit of each lane (the other bits clear); L and S are lo and span in every
 * lane. lo_zero (lo == 0: the one-sided comparisons <, <=, the most common
 * predicates) skips the subtraction of lo, 4 of the ~10 operations. */
PS_HFN ps_u32 ps_rb_lane_in(ps_u32 x, ps_u32 L, ps_u32 S, int w, int lo_zero) {
  const ps_u32 h = PS_RB_HIGHS(w);
  const ps_u32 d = lo_zero ? x : PS_RB_LANE_SUB(x, L, h);
  return ~PS_RB_LANE_LT(S, d, h) & h; /* not (span < code - lo) */
}

/* x with the bits of mask m and of m << d exchanged (a delta swap). */
PS_HFN ps_u32 ps_rb_delta_swap(ps_u32 x, int d, ps_u32 m) {
  const ps_u32 t = ((x >> d) ^ x) & m;
  return x ^ t ^ (t << d);
}

/* The 32 result bits of four consecutive 4-bit stream words (word k holds
 * rows 8k .. 8k + 7, row 8k + i in its lane i). Instead of compressing each
 * word's eight lane tops (8 operations a word), the four words' tops are
 * interleaved into one word (bit 4i + k: row 8k + i) and that 8x4 bit matrix
 * is transposed with four delta swaps (the index bits rotated by two): ~21
 * operations for the four words instead of ~32. */
PS_HFN ps_u32 ps_rb_quad4(ps_u32 x0, ps_u32 x1, ps_u32 x2, ps_u32 x3, ps_u32 L, ps_u32 S, int lo_zero) {
  ps_u32 y = (ps_rb_lane_in(x0, L, S, 4, lo_zero) >> 3) | (ps_rb_lane_in(x1, L, S, 4, lo_zero) >> 2) |
             (ps_rb_lane_in(x2, L, S, 4, lo_zero) >> 1) | ps_rb_lane_in(x3, L, S, 4, lo_zero);
  y = ps_rb_delta_swap(y, 1, 0x22222222u);     /* index bits 0 and 1 */
  y = ps_rb_delta_swap(y, 3, 0x0a0a0a0au);     /* 0 and 2 */
  y = ps_rb_delta_swap(y, 6, 0x00cc00ccu);     /* 1 and 3 */
  return ps_rb_delta_swap(y, 12, 0x0000f0f0u); /* 2 and 4 */
}

/* The constants of ps_rb_word_bits for [lo, lo + span] at a word-local
 * width: w = 1: the all-ones-or-zero masks "0 is in the range" (L) and "1
 * is" (S); w = 2: the truth table (bit c of L: code c is in the range);
 * w = 16: lo and span in the top half, the low half ignored; 4 and 8: lo and
 * span in every lane. */
PS_HFN void ps_rb_word_consts(ps_u64 lo, ps_u64 span, int w, ps_u32 *L, ps_u32 *S) {
  if (w == 1) {
    *L = lo == 0 ? 0xffffffffu : 0u;
    *S = (1 - lo) <= span ? 0xffffffffu : 0u;
  } else if (w == 2) {
    ps_u32 t = 0;
    for (ps_u32 c = 0; c < 4; c++) t |= (ps_u32)(((c - lo) & 3u) <= span) << c;
    *L = t;
    *S = 0;
  } else if (w == 16) {
    *L = (ps_u32)lo << 16;
    *S = ((ps_u32)span << 16) | 0xffffu;
  } else {
    *L = (ps_u32)lo * PS_RB_LSBS(w);
    *S = (ps_u32)span * PS_RB_LSBS(w);
  }
}

/* The 32/w result bits of one stream word x at a word-local width (codes
 * 0 .. 32/w - 1 of it): bit j set iff code j is in the range whose
 * constants L, S ps_rb_word_consts made; lo_zero as ps_rb_lane_in. */
PS_HFN ps_u32 ps_rb_word_bits(ps_u32 x, ps_u32 L, ps_u32 S, int w, int lo_zero) {
  if (w == 1) return (x & S) | (~x & L);
  if (w == 2) {
    /* Bit-sliced: each lane's result is a two-level multiplexer over its
     * bits into the truth table, three bitwise selects (one LOP3 each) for
     * all 16 lanes, against about 14 operations for the lane arithmetic. The
     * table masks are loop invariants. */
    const ps_u32 t0 = 0u - (L & 1u), t1 = 0u - ((L >> 1) & 1u), t2 = 0u - ((L >> 2) & 1u), t3 = 0u - ((L >> 3) & 1u);
    const ps_u32 lo1 = (x & t1) | (~x & t0), hi1 = (x & t3) | (~x & t2); /* by the low bit of each lane */
    const ps_u32 h = x >> 1;                                               /* high bits onto the low ones */
    return ps_rb_compress_lsbs((h & hi1) | (~h & lo1), 2);
  }
  if (w == 16) {
    /* Two codes, each compared in the top half of a 32-bit value (the low
     * half ignored by S): ~4 instructions per word against ~11 for the
     * 16-bit lane arithmetic and its compression. */
    return (ps_u32)((x << 16) - L <= S) | ((ps_u32)(x - L <= S) << 1);
  }
  return ps_rb_compress_tops(ps_rb_lane_in(x, L, S, w, lo_zero), w);
}

/* The 128/w result bits of one 16-byte vector x[0..4) of stream words at a
 * word-local width, in out[0 .. max(B/32, 1)) (B = 128/w; below 32 the low B
 * bits of out[0]); L, S as ps_rb_word_bits takes them. */
PS_HFN void ps_rb_vector_bits(const ps_u32 *x, ps_u32 L, ps_u32 S, int w, int lo_zero, ps_u32 *out) {
  const int b = 128 / w;
  if (w == 4) {
    out[0] = ps_rb_quad4(x[0], x[1], x[2], x[3], L, S, lo_zero);
  } else if (b >= 32) {
    PS_UNROLL
    for (int j = 0; j < b / 32; j++) {
      ps_u32 bits = 0;
      PS_UNROLL
      for (int k = 0; k < w; k++) bits |= ps_rb_word_bits(x[j * w + k], L, S, w, lo_zero) << (k * (32 / w));
      out[j] = bits;
    }
  } else {
    ps_u32 bits = 0;
    PS_UNROLL
    for (int k = 0; k < 4; k++) bits |= ps_rb_word_bits(x[k], L, S, w, lo_zero) << (k * (32 / w));
    out[0] = bits;
  }
}

/* Code j of the 32 codes in x[0..w) (w <= 32) in the top w bits of the
 * result; the bits below it are other codes' bits (one shift, no mask). */
PS_HFN ps_u32 ps_rb_code_top(const ps_u32 *x, int w, int j) {
  const int end = j * w + w;                      /* bit after the code, in the stream of x */
  const int k = (end - 1) >> 5, e = end - 32 * k; /* the code ends in word k at bit e (1..32) */
  if (e == 32) return x[k];
  if (e >= w) return x[k] << (32 - e); /* within word k */
  /* straddles words k-1 and k: bits [e + 32 - w, 32) of k-1 and [0, e) of k */
  return (x[k] << (32 - e)) | (x[k - 1] >> e);
}

/* Largest code of the 32 in x[0..w) (w <= 32), in the top w bits (the bits
 * below are not zero): the codes are all <= limit iff the result is <=
 * (limit << (32 - w)) | low ones. One max per code: the cheap corrupt-code
 * test, whose exact per-row check (nulls, rows past the end) runs only when
 * it fails. */
PS_HFN ps_u32 ps_rb_max_code_top(const ps_u32 *x, int w) {
  ps_u32 m = 0;
  PS_UNROLL
  for (int j = 0; j < 32; j++) {
    const ps_u32 c = ps_rb_code_top(x, w, j);
    m = c > m ? c : m;
  }
  return m;
}

/* Bit j set iff code j (of the 32 codes in x[0..w)) is in [lo, lo + span];
 * lo + span < 2^w. x has w + 2 readable entries (no code takes bits from the
 * last two). */
PS_HFN ps_u32 ps_range_bits(const ps_u32 *x, int w, ps_u64 lo, ps_u64 span) {
  ps_u32 bits = 0;
  if (w == 0) {
    bits = (0 - lo) <= span ? 0xffffffffu : 0u;
  } else if (w == 1) {
    const ps_u32 has0 = lo == 0 ? 0xffffffffu : 0u;          /* 0 in [lo, lo+span] */
    const ps_u32 has1 = (1 - lo) <= span ? 0xffffffffu : 0u; /* 1 in [lo, lo+span] */
    bits = (x[0] & has1) | (~x[0] & has0);
  } else if (w == 2 || w == 4 || w == 8) {
    const ps_u32 h = PS_RB_HIGHS(w);
    const ps_u32 L = (ps_u32)lo * PS_RB_LSBS(w), S = (ps_u32)span * PS_RB_LSBS(w);
    PS_UNROLL
    for (int k = 0; k < w; k++) {
      const ps_u32 d = PS_RB_LANE_SUB(x[k], L, h); /* code - lo */
      const ps_u32 out = PS_RB_LANE_LT(S, d, h);   /* span < code - lo */
      bits |= ps_rb_compress_tops(~out, w) << (k * (32 / w));
    }
  } else if (w <= 32) {
    /* Each code in the top w bits of a 32-bit value (ps_rb_code_top; the
     * bits below it are ignored by a span that is all ones there):
     * (code - lo) mod 2^w <= span iff (top - lo_top) mod 2^32 <= span_top. */
    const int g = 32 - w; /* garbage bits below the code */
    const ps_u32 lo_top = (ps_u32)lo << g;
    const ps_u32 span_top = ((ps_u32)span << g) | (ps_u32)(((ps_u64)1 << g) - 1);
    PS_UNROLL
    for (int j = 0; j < 32; j++) bits |= (ps_u32)((ps_rb_code_top(x, w, j) - lo_top) <= span_top) << j;
  } else {
    const ps_u64 mask = w == 64 ? ~(ps_u64)0 : (((ps_u64)1 << (w % 64)) - 1);
    PS_UNROLL
    for (int j = 0; j < 32; j++) {
      const int bit = j * w, k = bit >> 5, off = bit & 31;
      ps_u64 c = ((ps_u64)x[k] | ((ps_u64)x[k + 1] << 32)) >> off;
      if (off + w > 64) c |= (ps_u64)x[k + 2] << ((64 - off) & 63);
      c &= mask;
      bits |= (ps_u32)((c - lo) <= span) << j;
    }
  }
  return bits;
}

#endif /* PS_RANGE_H */
