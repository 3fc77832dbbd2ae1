/*
 * Queries on the device, written once for OpenCL C and CUDA (through
 * ps_dialect.h): the per-word algorithm of core/ps_query_program.h.
 *
 * Two passes, no atomic per row on global memory:
 *  1. ps_q_pass1, a grid of work-groups: work-item `item` takes the 32-row
 *     words item, item + items, ... of the chunk (neighbouring work-items
 *     read neighbouring bytes). For each word it evaluates the WHERE program
 *     (core/ps_program.h, Kleene logic on 32-row masks); a word with no row
 *     selected reads nothing else (no value or key column bytes); for each
 *     selected row it reads every slot's code (any width 0..64, straight from
 *     the packed stream), evaluates the value programs exactly (in 64-bit
 *     arithmetic where the host proved every value fits, else 128-bit on
 *     pairs of 64-bit words) and accumulates (count, 192-bit sum, 128-bit min
 *     and max). Where the accumulators live is the launch's mode, chosen on
 *     the host (core/query_policy.c):
 *       PS_QMODE_PRIVATE (no GROUP BY): in the work-item's private memory,
 *         then a tree reduction in local memory: one partial per work-group;
 *       PS_QMODE_LOCAL (a small domain of groups): one table per work-group
 *         in local memory, updated with 64-bit local atomics (exact and
 *         order-independent, see ps_q_local_add), one partial table per
 *         work-group;
 *       PS_QMODE_ITEMS (domains too large for local memory): one table per
 *         work-item in global memory (each selected row loads and stores its
 *         group's accumulators), one partial table per work-item;
 *       PS_QMODE_REGS (specialized builds, small domains): every group's
 *         accumulators in the work-item's registers, merged into the
 *         PS_QMODE_LOCAL table once per work-item (ps_q_partials_regs).
 *       PS_QMODE_GLOBAL (a hashed GROUP BY plan of many groups, every
 *         value within 64 bits): one table for the whole launch in global
 *         memory, zeroed by the host, updated with 64-bit global atomics
 *         (ps_q_global_merge), the one partial table for pass 2.
 *     A hashed GROUP BY plan (a domain of possible keys too large for a
 *     table per key) first runs pass 1 alone in PS_QMODE_KEYS: every
 *     selected row's group key goes into the group table (ps_q_group_insert,
 *     64-bit compare-and-swap), no accumulator; its accumulating run then
 *     takes each row's group from the numbered table (ps_q_group_number).
 *  2. ps_q_merge: one work-group per accumulator of the chunk reduces the
 *     partials (strided, then a tree in local memory) and merges the result
 *     into acc; or, with few partials of many accumulators, one work-item
 *     per accumulator.
 * Every merge is exact (counts and 192-bit sums are order-independent, min
 * and max too), so the result does not depend on the split.
 * Errors: the smallest chunk row holding a corrupt code goes to status[0],
 * the smallest whose value overflows to status[1], for each aggregate the
 * smallest whose value is not representable (PS_VOP_FCOL) to
 * status[PS_Q_STATUS_UNREP + a] (atomic minimum; all start at 0xFFFFFFFF);
 * a corrupt code outranks an overflow, which outranks the others (a row's
 * codes are checked before its values, and the other rows are still read).
 */
#ifndef PS_QUERY_KERNELS_H
#define PS_QUERY_KERNELS_H

#ifndef PS_DIALECT_H
#include "ps_dialect.h"
#endif
#ifndef PS_QUERY_PROGRAM_H
#include "ps_query_program.h"
#endif
#ifndef PS_CODES_H
#include "ps_codes.h"
#endif
#ifndef PS_CMPCOL_H
#include "ps_cmpcol.h"
#endif
#ifndef PS_WHERE_H /* after the specialization text: PS_W_SPEC_PROG, PS_W_N_INSNS */
#include "ps_where.h"
#endif

/* Specialization. A generic kernel reads the query's programs and launch
 * flags from its arguments, interpreting them row by row. A specialized one
 * is compiled for one query: the host (core/query_spec.c) writes, in front
 * of this file, PS_Q_SPEC, the value program ps_q_spec_prog and the WHERE
 * program ps_q_spec_where as initialized constant data, and the launch
 * flags PS_QS_* as macros. The accessors below then read those constants,
 * so the compiler unrolls every loop over instructions, aggregates, slots
 * and keys (PS_Q_UNROLL) and folds the interpreter away: the stacks become
 * registers. The text also names ps_q_spec_where PS_W_SPEC_PROG (with
 * PS_W_N_INSNS), so that ps_where.h evaluates the WHERE on those constants.
 * The functions are the same in both, so are the results. What
 * varies per chunk (rows, offsets, stream sizes) stays a launch argument. */
#if defined(PS_Q_SPEC)
#define PS_QP(p) (&ps_q_spec_prog)
#define PS_QW(wp) (&ps_q_spec_where)
#define PS_QL_MODE(L) PS_QS_MODE
#define PS_QL_FITS64(L) PS_QS_FITS64
#define PS_QL_ALIGNED(L) PS_QS_ALIGNED
#define PS_QL_AND_RIGHT(L) PS_QS_AND_RIGHT
#define PS_QL_OR_RIGHT(L) PS_QS_OR_RIGHT
#define PS_QL_HAS_WHERE(L) PS_QS_HAS_WHERE
#define PS_Q_UNROLL _Pragma("unroll")
#else
#define PS_QP(p) (p)
#define PS_QW(wp) (wp)
#define PS_QL_MODE(L) ((L)->mode)
#define PS_QL_FITS64(L) ((L)->fits64)
#define PS_QL_ALIGNED(L) ((L)->data_aligned)
#define PS_QL_AND_RIGHT(L) ((L)->and_right)
#define PS_QL_OR_RIGHT(L) ((L)->or_right)
#define PS_QL_HAS_WHERE(L) ((L)->has_where)
#define PS_Q_UNROLL
#endif

/* Launch data of one chunk (host C, CUDA and OpenCL C read it alike). */
typedef struct ps_qlaunch {
  ps_u64 rows;         /* rows of the chunk */
  ps_u64 items;        /* work-items of pass 1 that take words (PS_QMODE_ITEMS: that own a table) */
  ps_u64 mode;         /* PS_QMODE_* */
  ps_u64 fits64;       /* 1: every value of every aggregate fits 62 bits (ps_query_values_fit64) */
  ps_u64 data_aligned; /* bit s: slot s's data starts on a 4-byte boundary */
  ps_u64 and_right;    /* bit i: WHERE instruction i starts the right operand of an AND */
  ps_u64 or_right;     /* bit i: ... of an OR */
  ps_u64 has_where;    /* 0: every row is selected; 1: the WHERE program selects */
  ps_u64 span;         /* 0: work-item i takes words i, i + items, ...; else words [i * span, (i + 1) * span) */
  ps_u64 status_slot;  /* OpenCL: the slot of status words pass 1 reports into (CUDA passes its address) */
  ps_u64 data_offset[PS_MAX_COLS];
  ps_u64 validity_offset[PS_MAX_COLS];
  ps_u64 pred_offset[PS_QMAX_PREDS];
  ps_u64 whole_words;  /* the chunk's leading words whose FOR reads are whole (PS_Q_WHOLE) */
} ps_qlaunch;

/* The buffers of one chunk, at their chunk starts. */
typedef struct ps_q_bufs {
  PS_GLOBAL const ps_u8 *data[PS_MAX_COLS];
  PS_GLOBAL const ps_u8 *validity[PS_MAX_COLS];
  PS_GLOBAL const ps_u8 *preds[PS_QMAX_PREDS];
  PS_GLOBAL const ps_u32 *where_aux; /* the WHERE program's aux words */
  PS_GLOBAL const ps_u64 *value_aux; /* the value program's (PS_VAUX_HEAD, ps_query_program.h) */
  PS_GLOBAL ps_u64 *groups;          /* a hashed plan's group table (ps_q_group_find) */
  /* The readable bytes of each slot's streams from the chunk start (the
   * slots' data_bytes and validity_bytes, the same in the value and WHERE
   * programs): read from here, so that a specialized kernel's constants do
   * not depend on the chunk's length. */
  ps_u64 data_bytes[PS_MAX_COLS];
  ps_u64 validity_bytes[PS_MAX_COLS];
} ps_q_bufs;

/* ---- 128-bit two's complement integers on pairs of 64-bit words ---------- */

typedef struct ps_q128 {
  ps_u64 lo, hi;
} ps_q128;

PS_FN ps_q128 ps_q_make(ps_u64 lo, ps_u64 hi) {
  ps_q128 r;
  r.lo = lo;
  r.hi = hi;
  return r;
}

PS_FN int ps_q_negative(ps_q128 a) { return (a.hi >> 63) != 0; }

PS_FN ps_q128 ps_q_neg(ps_q128 a) {
  ps_u64 lo = ~a.lo + 1;
  return ps_q_make(lo, ~a.hi + (lo == 0 ? 1 : 0));
}

/* Signed order. */
PS_FN int ps_q_less(ps_q128 a, ps_q128 b) {
  if (a.hi != b.hi) return (ps_i64)a.hi < (ps_i64)b.hi;
  return a.lo < b.lo;
}

/* An unsigned magnitude m <= 10^38 - 1. */
PS_FN int ps_q_mag_fits(ps_q128 m) {
  const ps_u64 hi = 0x4B3B4CA85A86C47Aull, lo = 0x098A223FFFFFFFFFull;
  return m.hi < hi || (m.hi == hi && m.lo <= lo);
}

PS_FN int ps_q_fits(ps_q128 a) { return ps_q_mag_fits(ps_q_negative(a) ? ps_q_neg(a) : a); }

/* a + b of two values that fit 38 digits (so no 128-bit wrap-around). */
PS_FN ps_q128 ps_q_add(ps_q128 a, ps_q128 b, int *overflow) {
  ps_q128 r;
  r.lo = a.lo + b.lo;
  r.hi = a.hi + b.hi + (r.lo < a.lo ? 1 : 0);
  if (!ps_q_fits(r)) *overflow = 1;
  return r;
}

/* a * b of two values that fit 38 digits. */
PS_FN ps_q128 ps_q_mul(ps_q128 a, ps_q128 b, int *overflow) {
  int negative = ps_q_negative(a) != ps_q_negative(b);
  ps_q128 x = ps_q_negative(a) ? ps_q_neg(a) : a, y = ps_q_negative(b) ? ps_q_neg(b) : b;
  if (x.hi != 0 && y.hi != 0) {
    *overflow = 1;
    return x;
  }
  if (y.hi != 0) { /* the wide one in x */
    ps_q128 t = x;
    x = y;
    y = t;
  }
  ps_q128 m;
  m.lo = x.lo * y.lo;
  m.hi = ps_mulhi64(x.lo, y.lo);
  if (x.hi != 0) {
    if (ps_mulhi64(x.hi, y.lo) != 0) *overflow = 1;
    ps_u64 t = x.hi * y.lo;
    m.hi += t;
    if (m.hi < t) *overflow = 1;
  }
  if (!ps_q_mag_fits(m)) *overflow = 1;
  return negative ? ps_q_neg(m) : m;
}

/* ---- lossless float columns (PS_VOP_FCOL) ------------------------------------ */

/* ALP's factors (core/float_map.c's tables) as IEEE bit patterns, so that
 * every compiler reads the same numbers: 10^f (exact) and the double nearest
 * 10^-e, f, e = 0..18; float32 columns' floats, 0..10. */
PS_Q_SPEC_DATA ps_u64 ps_q_pow10_bits[19] = {
    0x3ff0000000000000ull, 0x4024000000000000ull, 0x4059000000000000ull, 0x408f400000000000ull,
    0x40c3880000000000ull, 0x40f86a0000000000ull, 0x412e848000000000ull, 0x416312d000000000ull,
    0x4197d78400000000ull, 0x41cdcd6500000000ull, 0x4202a05f20000000ull, 0x42374876e8000000ull,
    0x426d1a94a2000000ull, 0x42a2309ce5400000ull, 0x42d6bcc41e900000ull, 0x430c6bf526340000ull,
    0x4341c37937e08000ull, 0x4376345785d8a000ull, 0x43abc16d674ec800ull};
PS_Q_SPEC_DATA ps_u64 ps_q_pow10_neg_bits[19] = {
    0x3ff0000000000000ull, 0x3fb999999999999aull, 0x3f847ae147ae147bull, 0x3f50624dd2f1a9fcull,
    0x3f1a36e2eb1c432dull, 0x3ee4f8b588e368f1ull, 0x3eb0c6f7a0b5ed8dull, 0x3e7ad7f29abcaf48ull,
    0x3e45798ee2308c3aull, 0x3e112e0be826d695ull, 0x3ddb7cdfd9d7bdbbull, 0x3da5fd7fe1796495ull,
    0x3d719799812dea11ull, 0x3d3c25c268497682ull, 0x3d06849b86a12b9bull, 0x3cd203af9ee75616ull,
    0x3c9cd2b297d889bcull, 0x3c670ef54646d497ull, 0x3c32725dd1d243acull};
PS_Q_SPEC_DATA ps_u32 ps_q_pow10_bits32[11] = {0x3f800000u, 0x41200000u, 0x42c80000u, 0x447a0000u,
                                               0x461c4000u, 0x47c35000u, 0x49742400u, 0x4b189680u,
                                               0x4cbebc20u, 0x4e6e6b28u, 0x501502f9u};
PS_Q_SPEC_DATA ps_u32 ps_q_pow10_neg_bits32[11] = {0x3f800000u, 0x3dcccccdu, 0x3c23d70au, 0x3a83126fu,
                                                   0x38d1b717u, 0x3727c5acu, 0x358637bdu, 0x33d6bf95u,
                                                   0x322bcc77u, 0x3089705fu, 0x2edbe6ffu};

/* (-1)^neg * m * 2^q (m < 2^53) in units of 2^unit, by integer operations
 * alone; *unrep set (and 0 returned) where a set bit of m lies below the
 * unit or the result reaches 2^126 units. */
PS_FN ps_q128 ps_q_units(ps_u64 m, ps_i64 q, ps_u64 neg, ps_i64 unit, int *unrep) {
  ps_q128 r = ps_q_make(0, 0);
  if (m == 0) return r; /* -0.0 too: +0 units */
  ps_i64 sh = q - unit;
  if (sh < 0) {
    if (sh <= -64 || (m & ((((ps_u64)1) << (ps_u64)(-sh)) - 1u)) != 0) {
      *unrep = 1;
      return r;
    }
    m >>= (ps_u64)(-sh);
    sh = 0;
  }
  if (sh >= 126 || (sh > 62 && (m >> (ps_u64)(126 - sh)) != 0)) {
    *unrep = 1;
    return r;
  }
  if (sh >= 64)
    r = ps_q_make(0, m << (ps_u64)(sh - 64));
  else if (sh > 0)
    r = ps_q_make(m << (ps_u64)sh, m >> (ps_u64)(64 - sh));
  else
    r = ps_q_make(m, 0);
  return neg ? ps_q_neg(r) : r;
}

/* A double's (float's) bit pattern in units of 2^unit; an infinity (or
 * NaN, which no column holds) is unrep. */
PS_FN ps_q128 ps_q_f64_units(ps_u64 b, ps_i64 unit, int *unrep) {
  const ps_u64 ex = (b >> 52) & 0x7FFu, frac = b & 0xFFFFFFFFFFFFFull;
  if (ex == 0x7FFu) {
    *unrep = 1;
    return ps_q_make(0, 0);
  }
  return ps_q_units(ex ? frac | ((ps_u64)1 << 52) : frac, ex ? (ps_i64)ex - 1075 : -1074, b >> 63, unit, unrep);
}

PS_FN ps_q128 ps_q_f32_units(ps_u32 b, ps_i64 unit, int *unrep) {
  const ps_u32 ex = (b >> 23) & 0xFFu, frac = b & 0x7FFFFFu;
  if (ex == 0xFFu) {
    *unrep = 1;
    return ps_q_make(0, 0);
  }
  return ps_q_units(ex ? frac | 0x800000u : frac, ex ? (ps_i64)ex - 150 : -149, b >> 31, unit, unrep);
}

/* An ALP slot's exception of code c: the last entry of its table (value
 * aux words) whose code is at most c, if that code lies in c's gap (c >>
 * rank_bits); its double's bits in *bits, 1. Else 0. */
PS_FN int ps_q_fexception(PS_GLOBAL const ps_u64 *aux, ps_u32 slot, ps_u64 c, ps_u32 rank_bits, ps_u64 *bits) {
  const ps_u64 base = aux[2 * slot], n = aux[2 * slot + 1];
  ps_u64 lo = 0, hi = n;
  while (lo < hi) {
    const ps_u64 mid = lo + (hi - lo) / 2;
    if (aux[base + 2 * mid] <= c)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo == 0) return 0;
  const ps_u64 at = base + 2 * (lo - 1);
  if ((aux[at] >> rank_bits) != (c >> rank_bits)) return 0;
  *bits = aux[at + 1];
  return 1;
}

/* The value of code c of a slot's lossless float mapping (lo, ref: the
 * FCOL / DCOL instruction's fields) as a bit pattern: a float's (*wide = 0:
 * a float32 column's value from the order transform or its grid) or a
 * double's (*wide = 1). The one decode of the query kernels: FCOL takes the
 * value in units, DCOL as a double. The float32 paths use no double, so a
 * device without doubles reads float32 columns. */
PS_FN ps_u64 ps_q_fbits(ps_u64 lo, ps_u64 ref, PS_GLOBAL const ps_u64 *aux, ps_u32 slot, ps_u64 c, int *wide) {
  *wide = 1;
  if (PS_VF_MAP(lo) == PS_VF_BITS) { /* the inverse of the order transform */
    const ps_u64 o = ref + c;
    if (PS_VF_F32(lo)) {
      *wide = 0;
      return ps_ford32_inverse((ps_u32)o);
    }
    return ps_ford64_inverse(o);
  }
  const ps_u32 rb = PS_VF_RANK(lo);
  ps_u64 bits = 0;
  /* only code 0 and the ranked codes can be exceptions: a grid step's own
   * code needs no search; a float32 column's exceptions are held as doubles
   * (float_map.c) */
  if (((c & ((((ps_u64)1) << rb) - 1u)) != 0 || c == 0) && ps_q_fexception(aux, slot, c, rb, &bits)) return bits;
  const ps_i64 k = (ps_i64)(ref + (c >> rb));
  if (PS_VF_F32(lo)) {
    const float x = ps_fmul_rn((float)k, ps_bits_f32(ps_q_pow10_bits32[PS_VF_F(lo)]));
    *wide = 0;
    return ps_f32_bits(ps_fmul_rn(x, ps_bits_f32(ps_q_pow10_neg_bits32[PS_VF_E(lo)])));
  }
#if !defined(__OPENCL_VERSION__) || defined(PS_HAVE_FP64)
  const double x = ps_dmul_rn((double)k, ps_bits_f64(ps_q_pow10_bits[PS_VF_F(lo)]));
  return ps_f64_bits(ps_dmul_rn(x, ps_bits_f64(ps_q_pow10_neg_bits[PS_VF_E(lo)])));
#else
  return 0x7FF8000000000000ull; /* a NaN, unrep in units; never run: the host refuses a float64 ALP
                                   column on a device without doubles */
#endif
}

/* PS_VOP_FCOL on a valid row's code (ps_query_program.h): the value of
 * code c of the slot's mapping in units of 2^L. A float's pattern and its
 * widened double's are the same number, so either gives the same units. */
PS_FN ps_q128 ps_q_fcol(ps_u64 lo, ps_u64 ref, PS_GLOBAL const ps_u64 *aux, ps_u32 slot, ps_u64 c, int *unrep) {
  int wide = 1;
  const ps_u64 b = ps_q_fbits(lo, ref, aux, slot, c, &wide);
  return wide ? ps_q_f64_units(b, PS_VF_UNIT(lo), unrep) : ps_q_f32_units((ps_u32)b, PS_VF_UNIT(lo), unrep);
}

/* ---- double arithmetic on lossless floats (PS_VOP_DCOL and friends) -------- */

#if !defined(__OPENCL_VERSION__) || defined(PS_HAVE_FP64)
/* PS_VOP_DCOL on a valid row's code: the bits of the double value of code c
 * (a float32 column's float widened). */
PS_FN ps_u64 ps_q_dcol(ps_u64 lo, ps_u64 ref, PS_GLOBAL const ps_u64 *aux, ps_u32 slot, ps_u64 c) {
  int wide = 1;
  const ps_u64 b = ps_q_fbits(lo, ref, aux, slot, c, &wide);
  return wide ? b : ps_f64_bits((double)ps_bits_f32((ps_u32)b));
}

/* PS_VOP_DNUM: the double of value v = M + code of a column of `kind`,
 * divided by d (ps_query_program.h). */
PS_FN ps_u64 ps_q_dnum(ps_u32 kind, ps_u64 v, double d) {
  double x;
  if (kind == PS_KIND_UNSIGNED)
    x = (double)v / d;
  else if (kind == PS_KIND_FLOAT32)
    x = (double)(float)((double)(ps_i64)v / d);
  else
    x = (double)(ps_i64)v / d;
  return ps_f64_bits(x);
}

PS_FN ps_u64 ps_q_darith(ps_u32 op, ps_u64 a, ps_u64 b) {
  const double x = ps_bits_f64(a), y = ps_bits_f64(b);
  return ps_f64_bits(op == PS_VOP_DADD ? ps_dadd_rn(x, y) : (op == PS_VOP_DSUB ? ps_dsub_rn(x, y) : ps_dmul_rn(x, y)));
}
#endif

/* PS_VOP_DORD: a double's ordered bits (a NaN: *nan set). */
PS_FN ps_q128 ps_q_dord(ps_u64 b, int *nan) {
  if (((b >> 52) & 0x7FFu) == 0x7FFu && (b & 0xFFFFFFFFFFFFFull) != 0) {
    *nan = 1;
    return ps_q_make(0, 0);
  }
  const ps_u64 o = (b >> 63) ? b ^ 0x7FFFFFFFFFFFFFFFull : b;
  return ps_q_make(o, (b >> 63) ? ~(ps_u64)0 : 0);
}

/* ---- accumulators ----------------------------------------------------------- */

/* Accumulators are updated in private memory (a work-item's own copy), and
 * stored whole: OpenCL C 1.2 has no generic address space. */
PS_FN void ps_q_acc_init(ps_qacc *a) {
  a->count = 0;
  a->sum0 = a->sum1 = a->sum2 = 0;
  a->min_lo = PS_QACC_MIN_INIT_LO;
  a->min_hi = PS_QACC_MIN_INIT_HI;
  a->max_lo = PS_QACC_MAX_INIT_LO;
  a->max_hi = PS_QACC_MAX_INIT_HI;
}

/* 192-bit (s0, s1, s2) += (v0, v1, v2). */
PS_FN void ps_q_sum192(ps_u64 *s0, ps_u64 *s1, ps_u64 *s2, ps_u64 v0, ps_u64 v1, ps_u64 v2) {
  ps_u64 a = *s0 + v0;
  ps_u64 c0 = a < v0 ? 1 : 0;
  ps_u64 b = *s1 + v1;
  ps_u64 c1 = b < v1 ? 1 : 0;
  ps_u64 b2 = b + c0;
  c1 += b2 < c0 ? 1 : 0;
  *s0 = a;
  *s1 = b2;
  *s2 = *s2 + v2 + c1;
}

PS_FN void ps_q_acc_add(ps_qacc *a, ps_q128 v) {
  ps_q_sum192(&a->sum0, &a->sum1, &a->sum2, v.lo, v.hi, ps_q_negative(v) ? ~(ps_u64)0 : 0);
  if (ps_q_less(v, ps_q_make(a->min_lo, a->min_hi))) a->min_lo = v.lo, a->min_hi = v.hi;
  if (ps_q_less(ps_q_make(a->max_lo, a->max_hi), v)) a->max_lo = v.lo, a->max_hi = v.hi;
  a->count += 1;
}

PS_FN void ps_q_acc_merge(ps_qacc *x, ps_qacc y) {
  ps_q_sum192(&x->sum0, &x->sum1, &x->sum2, y.sum0, y.sum1, y.sum2);
  if (ps_q_less(ps_q_make(y.min_lo, y.min_hi), ps_q_make(x->min_lo, x->min_hi)))
    x->min_lo = y.min_lo, x->min_hi = y.min_hi;
  if (ps_q_less(ps_q_make(x->max_lo, x->max_hi), ps_q_make(y.max_lo, y.max_hi)))
    x->max_lo = y.max_lo, x->max_hi = y.max_hi;
  x->count += y.count;
}

/* A value's accumulator (aggregate a of the value program). A specialized
 * kernel updates only the fields the host reads (PS_QS_FIELDS, PS_QF_* at
 * bits 4a..; the others keep their initial values, which every merge leaves
 * as they are); the count always. */
#if defined(PS_Q_SPEC)
#define PS_QS_FIELD(a, f) ((((ps_u64)PS_QS_FIELDS) >> (4u * (a))) & (f))
#endif
PS_FN void ps_q_acc_add_agg(ps_qacc *acc, ps_u32 a, ps_q128 v) {
#if defined(PS_Q_SPEC)
  if (PS_QS_FIELD(a, PS_QF_SUM))
    ps_q_sum192(&acc->sum0, &acc->sum1, &acc->sum2, v.lo, v.hi, ps_q_negative(v) ? ~(ps_u64)0 : 0);
  if (PS_QS_FIELD(a, PS_QF_MIN) && ps_q_less(v, ps_q_make(acc->min_lo, acc->min_hi)))
    acc->min_lo = v.lo, acc->min_hi = v.hi;
  if (PS_QS_FIELD(a, PS_QF_MAX) && ps_q_less(ps_q_make(acc->max_lo, acc->max_hi), v))
    acc->max_lo = v.lo, acc->max_hi = v.hi;
  acc->count += 1;
#else
  (void)a;
  ps_q_acc_add(acc, v);
#endif
}

/* ---- hashed GROUP BY plans: the group table ----------------------------------- */

/* The table of a hashed plan (ps_query_program.h): `slots` (a power of two)
 * group keys, PS_Q_NO_KEY where empty, then in the accumulating run each
 * key's group number at the same index + slots. Open addressing, linear
 * probing from ps_q_group_hash; the host writes the numbered table with the
 * same functions. */
PS_FN ps_u64 ps_q_group_hash(ps_u64 key, ps_u64 slots) {
  ps_u64 h = key; /* MurmurHash3's 64-bit finalizer: neighbouring keys spread */
  h ^= h >> 33;
  h *= 0xFF51AFD7ED558CCDull;
  h ^= h >> 33;
  h *= 0xC4CEB9FE1A85EC53ull;
  h ^= h >> 33;
  return h & (slots - 1);
}

/* The group number of key, `absent` if the table does not hold it. */
PS_FN ps_u64 ps_q_group_find(PS_GLOBAL const ps_u64 *t, ps_u64 slots, ps_u64 key, ps_u64 absent) {
  ps_u64 i = ps_q_group_hash(key, slots);
  for (ps_u64 n = 0; n < slots && key != PS_Q_NO_KEY; ++n, i = (i + 1) & (slots - 1)) {
    const ps_u64 k = t[i];
    if (k == key) return t[slots + i];
    if (k == PS_Q_NO_KEY) break;
  }
  return absent;
}

#if !defined(__OPENCL_VERSION__) || defined(PS_Q_INT64_ATOMICS)
/* Slots a key probes at most: far more than a table at most half full needs
 * (the host grows it past that), few enough that a table the keys overfill
 * costs a bounded time per row until the host grows it. */
#define PS_Q_GROUP_PROBES 512u

/* Inserts key into the keys pass's table (2 * slots + 1 words). Where its
 * PS_Q_GROUP_PROBES slots are taken, it is dropped and word 2 * slots set
 * to 1: the host then grows the table and runs the pass again. */
PS_FN void ps_q_group_insert(PS_GLOBAL ps_u64 *t, ps_u64 slots, ps_u64 key) {
  ps_u64 i = ps_q_group_hash(key, slots);
  for (ps_u64 n = 0; n < slots && n < PS_Q_GROUP_PROBES; ++n, i = (i + 1) & (slots - 1)) {
    ps_u64 k = t[i];
    if (k == PS_Q_NO_KEY) k = ps_atomic_cas_u64(&t[i], PS_Q_NO_KEY, key);
    if (k == PS_Q_NO_KEY || k == key) return;
  }
  t[2 * slots] = 1;
}
#endif

/* The group of group key g: g itself in a dense plan and in a hashed plan's
 * keys pass, else its number (n_groups where the table lacks it, which
 * cannot happen: the keys pass saw the same rows). */
PS_FN ps_u64 ps_q_group_number(PS_CONST_MEM const ps_vprog *p, const ps_q_bufs *B, ps_u64 g) {
  if (PS_QP(p)->group_slots == 0 || PS_QP(p)->group_pass != 0) return g;
  return ps_q_group_find(B->groups, PS_QP(p)->group_slots, g, PS_QP(p)->n_groups);
}

/* Whether aggregate a's value is never NULL: COUNT(*), or a program that
 * reads no column with a validity bitmap and pushes no NULL (a CASE picks
 * one of two such values). Its count is then the group's rows
 * (ps_vprog.derived_counts). */
PS_FN int ps_q_agg_never_null(PS_CONST_MEM const ps_vprog *p, ps_u32 a) {
  const ps_vagg va = PS_QP(p)->aggs[a];
  for (ps_u32 i = va.first; i < va.first + va.count; ++i) {
    const ps_u32 op = PS_QP(p)->insns[i].op;
    if (op == PS_VOP_NULL) return 0;
    if ((op == PS_VOP_COL || op == PS_VOP_FCOL || op == PS_VOP_DCOL || op == PS_VOP_DNUM) &&
        (PS_QP(p)->cols[PS_QP(p)->insns[i].arg].flags & PS_COLF_VALIDITY))
      return 0;
  }
  return 1;
}

/* ---- reading the columns ------------------------------------------------------ */

/* Codes are read by kernels_shared/ps_codes.h: ps_code_at (the code of row r
 * at width 0..64), ps_delta_code_at (a DELTA column's) and ps_stream_word (a
 * stream word, bounded); the WHERE's through ps_where.h's word reader. */

PS_FN ps_u32 ps_q_bit(PS_GLOBAL const ps_u8 *bits, ps_u64 r) { return (bits[r >> 3] >> (r & 7)) & 1u; }

/* Whether the `width` stream words of 32-row word w of a slot's stream lie
 * inside it, 4-byte aligned: then every code of the word is read with plain
 * 32-bit loads, no bound check per load (ps_q_code_inside). Every word but a
 * stream's last, partial one is inside, so the test is made once per word
 * and the checked reader (ps_code_at) is left for the rest. */
PS_FN int ps_q_inside(ps_u32 aligned, ps_u64 size, ps_u32 width, ps_u64 w) {
  return aligned && (w + 1) * width * 4 <= size;
}

/* Code j (0..31) of 32-row word w at width 0..64, the word inside its stream
 * (ps_q_inside). At widths that divide 32 no code crosses a stream word, so
 * one load reads it; a specialized kernel's width is a constant, so that
 * test and the shifts fold away. */
PS_FN ps_u64 ps_q_code_inside(PS_GLOBAL const ps_u8 *d, ps_u32 width, ps_u64 w, ps_u32 j) {
  if (width == 0) return 0;
  PS_GLOBAL const ps_u8 *base = d + w * width * 4;
  const ps_u32 bit = j * width, k = bit >> 5, sh = bit & 31u;
  const int one_word = width <= 32 && (width & (width - 1)) == 0;
  if (one_word) {
    const ps_u32 x0 = ps_code_ld32(base + k * 4);
    return width == 32 ? (ps_u64)x0 : (ps_u64)((x0 >> sh) & ((1u << width) - 1u));
  }
  const ps_u32 x0 = ps_code_ld32(base + k * 4);
  const ps_u32 x1 = sh + width > 32 ? ps_code_ld32(base + k * 4 + 4) : 0u;
  const ps_u32 x2 = sh + width > 64 ? ps_code_ld32(base + k * 4 + 8) : 0u;
  return ps_code_join(width, sh, x0, x1, x2);
}

/* The code of chunk row r of slot c (stream d of `size` readable bytes), in
 * its encoding: FOR, the unchecked loads where its word lies inside the
 * stream, else ps_code_at; DELTA, ps_delta_code_at. A specialized kernel's
 * encodings are constants: only the readers its columns need remain. */
PS_FN ps_u64 ps_q_code(PS_CONST_MEM const ps_prog_col *c, PS_GLOBAL const ps_u8 *d, ps_u64 size, ps_u32 aligned,
                       ps_u64 r) {
  if (PS_ENC_OF(c) == PS_ENC_DELTA) return ps_delta_code_at(d, size, aligned, r);
  const ps_u32 width = c->width;
  if (ps_q_inside(aligned, size, width, r >> 5)) return ps_q_code_inside(d, width, r >> 5, (ps_u32)(r & 31u));
  return ps_code_at(d, size, aligned, width, r);
}

/* ---- one selected row ----------------------------------------------------------- */

typedef struct ps_qval {
  ps_q128 v;
  int null_, overflow, unrep;
} ps_qval;

/* Value program g of row r (codes and valid bits already read). */
PS_FN ps_qval ps_q_value(PS_CONST_MEM const ps_vprog *p, const ps_q_bufs *B, ps_vagg g, const ps_u64 *codes,
                         ps_u32 valid, ps_u64 r) {
  ps_qval st[PS_QMAX_STACK];
  int sp = 0;
  PS_Q_UNROLL
  for (ps_u32 i = g.first; i < g.first + g.count; ++i) {
    ps_u32 op = PS_QP(p)->insns[i].op, arg = PS_QP(p)->insns[i].arg;
    if (op == PS_VOP_COL) {
      ps_qval x;
      x.null_ = ((valid >> arg) & 1u) == 0;
      x.overflow = 0;
      x.unrep = 0;
      ps_u64 v = PS_QP(p)->cols[arg].reference + codes[arg];
      x.v = ps_q_make(v, PS_QP(p)->cols[arg].kind != PS_KIND_UNSIGNED && (ps_i64)v < 0 ? ~(ps_u64)0 : 0);
      st[sp++] = x;
    } else if (op == PS_VOP_FCOL) {
      ps_qval x;
      x.null_ = ((valid >> arg) & 1u) == 0;
      x.overflow = 0;
      x.unrep = 0;
      x.v = ps_q_make(0, 0);
      if (!x.null_)
        x.v = ps_q_fcol(PS_QP(p)->insns[i].lo, PS_QP(p)->insns[i].hi, B->value_aux, arg, codes[arg], &x.unrep);
      st[sp++] = x;
    } else if (op == PS_VOP_DCOL || op == PS_VOP_DNUM) {
      ps_qval x;
      x.null_ = ((valid >> arg) & 1u) == 0;
      x.overflow = 0;
      x.unrep = 0;
      x.v = ps_q_make(0, 0);
#if !defined(__OPENCL_VERSION__) || defined(PS_HAVE_FP64)
      if (!x.null_ && op == PS_VOP_DCOL)
        x.v = ps_q_make(ps_q_dcol(PS_QP(p)->insns[i].lo, PS_QP(p)->insns[i].hi, B->value_aux, arg, codes[arg]), 0);
      else if (!x.null_)
        x.v = ps_q_make(ps_q_dnum(PS_QP(p)->cols[arg].kind, PS_QP(p)->cols[arg].reference + codes[arg],
                                  ps_bits_f64(PS_QP(p)->insns[i].lo)),
                        0);
#else
      x.unrep = 1; /* never run: the host refuses double arithmetic on a device without doubles */
#endif
      st[sp++] = x;
    } else if (op == PS_VOP_DUNITS) {
      ps_qval x = st[sp - 1];
      if (!x.null_ && !x.overflow && !x.unrep) x.v = ps_q_f64_units(x.v.lo, (ps_i64)arg - 2048, &x.unrep);
      st[sp - 1] = x;
    } else if (op == PS_VOP_DORD) {
      ps_qval x = st[sp - 1];
      int nan = 0;
      if (!x.null_ && !x.overflow && !x.unrep) x.v = ps_q_dord(x.v.lo, &nan);
      if (nan && arg != PS_DORD_COUNT) x.unrep = 1;
      st[sp - 1] = x;
    } else if (op == PS_VOP_CONST || op == PS_VOP_NULL || op == PS_VOP_DCONST) {
      ps_qval x;
      x.v = ps_q_make(PS_QP(p)->insns[i].lo, PS_QP(p)->insns[i].hi);
      x.null_ = op == PS_VOP_NULL;

      x.overflow = 0;
      x.unrep = 0;
      st[sp++] = x;
    } else if (op == PS_VOP_SCALE) {
      ps_qval x = st[sp - 1];
      PS_Q_UNROLL
      for (ps_u32 k = 0; k < arg && !x.null_ && !x.overflow && !x.unrep; ++k)
        x.v = ps_q_mul(x.v, ps_q_make(10, 0), &x.overflow);
      st[sp - 1] = x;
    } else if (op == PS_VOP_CASE) {
      ps_qval e = st[--sp];
      if (!ps_q_bit(B->preds[arg], r)) st[sp - 1] = e;
    } else {
      ps_qval b = st[--sp], a = st[sp - 1], x;
      x.null_ = a.null_ || b.null_;
      x.overflow = a.overflow || b.overflow;
      x.unrep = a.unrep || b.unrep;
      x.v = a.v;
      if (!x.null_ && !x.overflow && !x.unrep) {
        if (op == PS_VOP_DADD || op == PS_VOP_DSUB || op == PS_VOP_DMUL) {
#if !defined(__OPENCL_VERSION__) || defined(PS_HAVE_FP64)
          x.v = ps_q_make(ps_q_darith(op, a.v.lo, b.v.lo), 0);
#else
          x.unrep = 1;
#endif
        } else if (op == PS_VOP_ADD)
          x.v = ps_q_add(a.v, b.v, &x.overflow);
        else if (op == PS_VOP_SUB)
          x.v = ps_q_add(a.v, ps_q_neg(b.v), &x.overflow);
        else
          x.v = ps_q_mul(a.v, b.v, &x.overflow);
      }
      st[sp - 1] = x;
    }
  }
  return st[0];
}

/* ps_q_value where the host proved (ps_query_values_fit64) that every value the
 * program can produce, intermediate ones included, is below 2^61 in
 * magnitude (so never a PS_VOP_FCOL, which it does not bound): plain 64-bit arithmetic (unsigned, so that a NULL operand's
 * meaningless value cannot overflow), no overflow to check. codes NULL: each
 * column's code is read where the program names it (validity, then the code,
 * checked: a corrupt one sets *corrupt and is recorded in status). */
PS_FN ps_qval ps_q_value64(PS_CONST_MEM const ps_vprog *p, const ps_q_bufs *B, ps_vagg g, const ps_u64 *codes,
                           ps_u32 valid, ps_u64 r, ps_u32 aligned, int *corrupt, PS_GLOBAL ps_u32 *status) {
  ps_u64 st[PS_QMAX_STACK];
  ps_u32 nul = 0; /* bit k: stack entry k is NULL */
  int sp = 0;
  PS_Q_UNROLL
  for (ps_u32 i = g.first; i < g.first + g.count; ++i) {
    const ps_u32 op = PS_QP(p)->insns[i].op, arg = PS_QP(p)->insns[i].arg;
    if (op == PS_VOP_COL) {
      PS_CONST_MEM const ps_prog_col *c = &PS_QP(p)->cols[arg];
      ps_u32 ok = (valid >> arg) & 1u;
      ps_u64 code = 0;
      if (codes) {
        code = codes[arg];
      } else {
        ok = !(c->flags & PS_COLF_VALIDITY) || ps_q_bit(B->validity[arg], r);
        if (ok) code = ps_q_code(c, B->data[arg], B->data_bytes[arg], (aligned >> arg) & 1u, r);
        if (ok && ps_code_corrupt(c->flags, code, c->code_limit)) {
          ps_atomic_min_u32(&status[0], (ps_u32)r);
          *corrupt = 1;
        }
      }
      st[sp] = c->reference + code;
      nul = (nul & ~(1u << sp)) | ((ok ^ 1u) << sp);
      ++sp;
    } else if (op == PS_VOP_CONST || op == PS_VOP_NULL) {
      st[sp] = PS_QP(p)->insns[i].lo;
      nul = (nul & ~(1u << sp)) | ((ps_u32)(op == PS_VOP_NULL) << sp);
      ++sp;
    } else if (op == PS_VOP_SCALE) {
      PS_Q_UNROLL
      for (ps_u32 k = 0; k < arg; ++k) st[sp - 1] *= 10u;
    } else if (op == PS_VOP_CASE) {
      --sp;
      if (!ps_q_bit(B->preds[arg], r)) {
        st[sp - 1] = st[sp];
        nul = (nul & ~(1u << (sp - 1))) | (((nul >> sp) & 1u) << (sp - 1));
      }
    } else {
      --sp;
      const ps_u64 a = st[sp - 1], b = st[sp];
      st[sp - 1] = op == PS_VOP_ADD ? a + b : (op == PS_VOP_SUB ? a - b : a * b);
      nul |= ((nul >> sp) & 1u) << (sp - 1);
    }
  }
  ps_qval x;
  x.v = ps_q_make(st[0], (ps_i64)st[0] < 0 ? ~(ps_u64)0 : 0);
  x.null_ = (int)(nul & 1u);
  x.overflow = 0;
  x.unrep = 0;
  return x;
}

/* Row r of the chunk, selected: its group and its aggregates' values
 * (vals[a]; COUNT(*) needs none). 0 when the row fails (a corrupt code, or a
 * value that overflows: recorded in status). */
/* The codes of row r in the slots of mask `slots` (codes[s], 0 where the
 * row is null or the slot not in the mask; *valid: bit s set where it is
 * read and not null). 0 when one is corrupt (recorded in status).
 * ps_q_row_codes: every slot a value or key reads. */
PS_FN int ps_q_slot_codes(PS_CONST_MEM const ps_vprog *p, const ps_q_bufs *B, ps_u32 aligned, ps_u64 r, ps_u32 slots,
                          ps_u64 *codes, ps_u32 *valid, PS_GLOBAL ps_u32 *status) {
  ps_u32 v = 0;
  PS_Q_UNROLL
  for (ps_u32 s = 0; s < PS_QP(p)->n_cols; ++s) {
    codes[s] = 0;
    if (!((slots >> s) & 1u)) continue;
    if ((PS_QP(p)->cols[s].flags & PS_COLF_VALIDITY) && !ps_q_bit(B->validity[s], r)) continue;
    v |= 1u << s;
    codes[s] = ps_q_code(&PS_QP(p)->cols[s], B->data[s], B->data_bytes[s], (aligned >> s) & 1u, r);
    if (ps_code_corrupt(PS_QP(p)->cols[s].flags, codes[s], PS_QP(p)->cols[s].code_limit)) {
      ps_atomic_min_u32(&status[0], (ps_u32)r);
      return 0;
    }
  }
  *valid = v;
  return 1;
}

PS_FN int ps_q_row_codes(PS_CONST_MEM const ps_vprog *p, const ps_q_bufs *B, ps_u32 aligned, ps_u64 r, ps_u64 *codes,
                         ps_u32 *valid, PS_GLOBAL ps_u32 *status) {
  return ps_q_slot_codes(p, B, aligned, r, PS_QP(p)->read_slots, codes, valid, status);
}

/* The FOR slots of mask `slots` whose stream words of 32-row word w lie
 * inside their streams (ps_q_inside): a mask, made once per word, so that
 * ps_q_word_codes reads those slots' codes without a check per row. */
PS_FN ps_u32 ps_q_inside_slots(PS_CONST_MEM const ps_vprog *p, const ps_q_bufs *B, ps_u32 aligned, ps_u64 w,
                               ps_u32 slots) {
  ps_u32 m = 0;
  PS_Q_UNROLL
  for (ps_u32 s = 0; s < PS_QP(p)->n_cols; ++s)
    if (((slots >> s) & 1u) && PS_ENC_OF(&PS_QP(p)->cols[s]) != PS_ENC_DELTA &&
        ps_q_inside((aligned >> s) & 1u, B->data_bytes[s], PS_QP(p)->cols[s].width, w))
      m |= 1u << s;
  return m;
}

/* ps_q_slot_codes for row j of 32-row word w, the slots of `inside`
 * (ps_q_inside_slots) read without bound checks. */
PS_FN int ps_q_word_codes(PS_CONST_MEM const ps_vprog *p, const ps_q_bufs *B, ps_u32 aligned, ps_u64 w, ps_u32 j,
                          ps_u32 slots, ps_u32 inside, ps_u64 *codes, ps_u32 *valid, PS_GLOBAL ps_u32 *status) {
  const ps_u64 r = w * 32 + j;
  ps_u32 v = 0;
  PS_Q_UNROLL
  for (ps_u32 s = 0; s < PS_QP(p)->n_cols; ++s) {
    codes[s] = 0;
    if (!((slots >> s) & 1u)) continue;
    if ((PS_QP(p)->cols[s].flags & PS_COLF_VALIDITY) && !ps_q_bit(B->validity[s], r)) continue;
    v |= 1u << s;
    codes[s] = ((inside >> s) & 1u) ? ps_q_code_inside(B->data[s], PS_QP(p)->cols[s].width, w, j)
                                    : ps_q_code(&PS_QP(p)->cols[s], B->data[s], B->data_bytes[s], (aligned >> s) & 1u, r);
    if (ps_code_corrupt(PS_QP(p)->cols[s].flags, codes[s], PS_QP(p)->cols[s].code_limit)) {
      ps_atomic_min_u32(&status[0], (ps_u32)r);
      return 0;
    }
  }
  *valid = v;
  return 1;
}

/* Key functions (GROUP BY date_trunc(...), extract(...); ps_query_program.h
 * defines them): integer-only, floor division by a positive divisor. */
PS_FN ps_i64 ps_q_fdiv(ps_i64 a, ps_i64 d) { return a / d - ((a % d) < 0); }
PS_FN ps_i64 ps_q_fmod(ps_i64 a, ps_i64 d) { return a % d + ((a % d) < 0 ? d : 0); }

/* The ordinal of value v under key function op; civil dates by Howard
 * Hinnant's civil_from_days (proleptic Gregorian, days since 1970-01-01). */
PS_FN ps_i64 ps_q_key_ordinal(ps_u32 op, ps_i64 unit, ps_i64 arg, ps_i64 v) {
  if (op == PS_QKEY_FLOOR) {
    const ps_i64 q = ps_q_fdiv(v, unit);
    return q - (v - q * unit < arg);
  }
  if (op == PS_QKEY_MOD) return ps_q_fmod(v, arg) / unit;
  const ps_i64 days = ps_q_fdiv(v, unit);
  if (op == PS_QKEY_DOW) return ps_q_fmod(days + 4, 7);
  const ps_i64 z = days + 719468;
  const ps_i64 era = ps_q_fdiv(z, 146097);
  const ps_i64 doe = z - era * 146097;                                      /* 0..146096 */
  const ps_i64 yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365; /* 0..399 */
  const ps_i64 doy = doe - (365 * yoe + yoe / 4 - yoe / 100);               /* 0..365, from March 1 */
  const ps_i64 mp = (5 * doy + 2) / 153;                                    /* 0..11, March = 0 */
  const ps_i64 m = mp < 10 ? mp + 3 : mp - 9;
  const ps_i64 y = yoe + era * 400 + (m <= 2);
  if (op == PS_QKEY_MONTHS) return y * 12 + m - 1;
  if (op == PS_QKEY_QUARTERS) return y * 4 + (m - 1) / 3;
  if (op == PS_QKEY_YEAR) return y;
  if (op == PS_QKEY_MONTH) return m;
  if (op == PS_QKEY_QUARTER) return (m - 1) / 3 + 1;
  if (op == PS_QKEY_DAY) return doy - (153 * mp + 2) / 5 + 1;
  /* PS_QKEY_DOY: January and February end the March-based year */
  const ps_i64 leap = ps_q_fmod(y, 4) == 0 && (ps_q_fmod(y, 100) != 0 || ps_q_fmod(y, 400) == 0);
  return m <= 2 ? doy - 305 : doy + 60 + leap;
}

/* The group index of key k's valid code: the code itself, or its value's
 * ordinal under the key's function, from the function's base. */
PS_FN ps_u64 ps_q_key_index(PS_CONST_MEM const ps_vprog *p, ps_u32 k, ps_u64 code) {
  if (PS_QP(p)->key_fn[k].op == PS_QKEY_CODE) return code;
  const ps_i64 v = (ps_i64)(PS_QP(p)->cols[PS_QP(p)->key_slot[k]].reference + code);
  const ps_i64 i = ps_q_key_ordinal(PS_QP(p)->key_fn[k].op, PS_QP(p)->key_fn[k].unit, PS_QP(p)->key_fn[k].arg, v) -
                   PS_QP(p)->key_fn[k].base;
  const ps_i64 last = (ps_i64)PS_QP(p)->key_fn[k].values - 1;
  return (ps_u64)(i < 0 ? 0 : i > last ? last : i);
}

/* The group of a row from its codes (ps_q_row_codes). */
PS_FN ps_u64 ps_q_group_of(PS_CONST_MEM const ps_vprog *p, const ps_q_bufs *B, const ps_u64 *codes, ps_u32 valid) {
  ps_u64 g = 0;
  PS_Q_UNROLL
  for (ps_u32 k = 0; k < PS_QP(p)->n_keys; ++k) {
    ps_u32 s = PS_QP(p)->key_slot[k];
    g += (((valid >> s) & 1u) ? ps_q_key_index(p, k, codes[s]) : (ps_u64)(PS_QP(p)->key_domain[k] - 1)) *
         PS_QP(p)->key_stride[k];
  }
  return ps_q_group_number(p, B, g);
}

PS_FN int ps_q_row(PS_CONST_MEM const ps_vprog *p, const ps_q_bufs *B, ps_u32 aligned, ps_u32 fits64, ps_u64 r,
                   ps_u64 *group, ps_qval *vals, PS_GLOBAL ps_u32 *status) {
  ps_u64 codes[PS_MAX_COLS];
  ps_u32 valid = 0;
  if (!ps_q_row_codes(p, B, aligned, r, codes, &valid, status)) return 0;
  *group = ps_q_group_of(p, B, codes, valid);
  int ok = 1;
  PS_Q_UNROLL
  for (ps_u32 a = 0; a < PS_QP(p)->n_aggs; ++a) {
    ps_vagg va = PS_QP(p)->aggs[a];
    if (va.count == 0) continue;
    int corrupt = 0; /* codes already checked */
    vals[a] = fits64 ? ps_q_value64(p, B, va, codes, valid, r, aligned, &corrupt, status)
                     : ps_q_value(p, B, va, codes, valid, r);
    /* every aggregate's failure on the row recorded: the host reports the
     * smallest row and the first aggregate that fails on it */
    if (vals[a].overflow) {
      ps_atomic_min_u32(&status[1], (ps_u32)r);
      ok = 0;
    } else if (vals[a].unrep) {
      ps_atomic_min_u32(&status[PS_Q_STATUS_UNREP + a], (ps_u32)r);
      ok = 0;
    }
  }
  return ok;
}

/* The group of row r from its key columns alone (ps_q_group_number); PS_QP(p)->n_groups when a key's
 * code is corrupt (recorded in status). ps_q_key_group_in reads the slots of
 * `inside` (ps_q_inside_slots of r's word) without bound checks. */
PS_FN ps_u64 ps_q_key_group_in(PS_CONST_MEM const ps_vprog *p, const ps_q_bufs *B, ps_u32 aligned, ps_u64 r,
                               ps_u32 inside, PS_GLOBAL ps_u32 *status) {
  ps_u64 g = 0;
  PS_Q_UNROLL
  for (ps_u32 k = 0; k < PS_QP(p)->n_keys; ++k) {
    const ps_u32 s = PS_QP(p)->key_slot[k];
    ps_u64 code = (ps_u64)(PS_QP(p)->key_domain[k] - 1);
    if (!(PS_QP(p)->cols[s].flags & PS_COLF_VALIDITY) || ps_q_bit(B->validity[s], r)) {
      code = ((inside >> s) & 1u)
                 ? ps_q_code_inside(B->data[s], PS_QP(p)->cols[s].width, r >> 5, (ps_u32)(r & 31u))
                 : ps_q_code(&PS_QP(p)->cols[s], B->data[s], B->data_bytes[s], (aligned >> s) & 1u, r);
      if (ps_code_corrupt(PS_QP(p)->cols[s].flags, code, PS_QP(p)->cols[s].code_limit)) {
        ps_atomic_min_u32(&status[0], (ps_u32)r);
        return PS_QP(p)->n_groups;
      }
      code = ps_q_key_index(p, k, code);
    }
    g += code * PS_QP(p)->key_stride[k];
  }
  return ps_q_group_number(p, B, g);
}

PS_FN ps_u64 ps_q_key_group(PS_CONST_MEM const ps_vprog *p, const ps_q_bufs *B, ps_u32 aligned, ps_u64 r,
                            PS_GLOBAL ps_u32 *status) {
  return ps_q_key_group_in(p, B, aligned, r, 0u, status);
}

/* The slots the GROUP BY keys read (a mask). */
PS_FN ps_u32 ps_q_key_slots(PS_CONST_MEM const ps_vprog *p) {
  ps_u32 m = 0;
  PS_Q_UNROLL
  for (ps_u32 k = 0; k < PS_QP(p)->n_keys; ++k) m |= 1u << PS_QP(p)->key_slot[k];
  return m;
}

/* Adds n rows to the counts of accumulators acc[0 .. n_accs) (the group's
 * rows and its COUNT(*)s). */
PS_FN void ps_q_add_counts(PS_CONST_MEM const ps_vprog *p, ps_u32 n, ps_qacc *acc) {
  acc[0].count += n;
  PS_Q_UNROLL
  for (ps_u32 a = 0; a < PS_QP(p)->n_aggs; ++a)
    if (PS_QP(p)->aggs[a].count == 0) acc[1 + a].count += n;
}

/* Adds a row's values to the other accumulators. */
PS_FN void ps_q_add_values(PS_CONST_MEM const ps_vprog *p, const ps_qval *vals, ps_qacc *acc) {
  PS_Q_UNROLL
  for (ps_u32 a = 0; a < PS_QP(p)->n_aggs; ++a)
    if (PS_QP(p)->aggs[a].count != 0 && !vals[a].null_) ps_q_acc_add(&acc[1 + a], vals[a].v);
}

/* A selected row where every value fits 64 bits (L->fits64: no overflow is
 * possible): each aggregate's value goes straight into its accumulator
 * acc[1 + a], with no array of values in between. 0 when a code is corrupt
 * (recorded in status; nothing added). Counts are the caller's. */
PS_FN int ps_q_row_add64(PS_CONST_MEM const ps_vprog *p, const ps_q_bufs *B, ps_u32 aligned, ps_u64 r, ps_qacc *acc,
                         PS_GLOBAL ps_u32 *status) {
  ps_u64 codes[PS_MAX_COLS];
  ps_u32 valid = 0;
  if (!ps_q_row_codes(p, B, aligned, r, codes, &valid, status)) return 0;
  PS_Q_UNROLL
  for (ps_u32 a = 0; a < PS_QP(p)->n_aggs; ++a) {
    const ps_vagg va = PS_QP(p)->aggs[a];
    if (va.count == 0) continue;
    int corrupt = 0; /* codes already checked */
    const ps_qval x = ps_q_value64(p, B, va, codes, valid, r, aligned, &corrupt, status);
    if (!x.null_) ps_q_acc_add_agg(&acc[1 + a], a, x.v);
  }
  return 1;
}

/* ---- the WHERE program (core/ps_program.h), 32 rows at a time ------------ */

/* The WHERE program's aux words as kernels_shared/ps_cmpcol.h reads them.
 * Unbounded: the host checked every table against the aux words
 * (core/program_check.c), and corrupt codes never index them. */
PS_FN ps_aux_words ps_q_aux(const ps_q_bufs *B) {
  ps_aux_words a;
#if defined(__OPENCL_VERSION__)
  a.buf = (PS_GLOBAL const ps_u8 *)B->where_aux;
  a.offset = 0;
  a.size = ~(ps_u64)0;
#else
  a.words = B->where_aux;
  a.count = ~(ps_u32)0;
#endif
  return a;
}

/* The chunk's buffers as ps_where.h reads them, made once per work-item
 * (not per word). Validity bitmaps are read byte by byte (their offsets
 * need not be 4-byte aligned). */
PS_FN ps_w_bufs ps_q_where_bufs(PS_CONST_MEM const ps_qlaunch *L, const ps_q_bufs *B) {
  ps_w_bufs wb;
  PS_Q_UNROLL
  for (ps_u32 c = 0; c < PS_MAX_COLS; ++c) {
    wb.data[c] = B->data[c];
    wb.validity[c] = B->validity[c];
    wb.data_bytes[c] = B->data_bytes[c];
    wb.validity_bytes[c] = B->validity_bytes[c];
  }
  wb.data_aligned = (ps_u32)PS_QL_ALIGNED(L);
  wb.validity_aligned = 0;
  wb.aux = ps_q_aux(B);
  return wb;
}

/* The selected rows of word w: the WHERE program's TRUE rows among the
 * chunk's rows (wb: ps_q_where_bufs), through the one per-word evaluator
 * (ps_where.h) with the queries' short cuts: the right operand of an AND is
 * evaluated only on the rows where its left operand is not FALSE, of an OR
 * where it is not TRUE, and a leaf with no row left reads nothing. The
 * smallest row holding a corrupt code goes to status[0]; aux faults cannot
 * happen (ps_q_aux). */
PS_FN ps_u32 ps_q_word_sel(PS_CONST_MEM const ps_program *wp, PS_CONST_MEM const ps_qlaunch *L, const ps_w_bufs *wb,
                           ps_u64 w, PS_GLOBAL ps_u32 *status) {
  ps_u32 sel = 0xFFFFFFFFu;
  if (L->rows - w * 32 < 32) sel = (1u << (ps_u32)(L->rows - w * 32)) - 1;
  if (PS_QL_HAS_WHERE(L)) {
    ps_w_status st;
    st.slots = 0;
    st.rows = 0;
#if defined(PS_Q_WHOLE)
    /* PS_Q_WHOLE (a CPU device's specialized build): below the chunk's
     * whole words (the host's ps_where_whole_words: every FOR stream word of
     * those rows inside an aligned stream), the evaluator runs on a copy of
     * the buffers whose FOR streams are unbounded, so that the compiler
     * folds ps_word_load_for's test and the bounded loads away in that
     * copy; the checked evaluator takes the words past them. */
    if (w < L->whole_words) {
      ps_w_bufs whole = *wb;
      PS_Q_UNROLL
      for (ps_u32 c = 0; c < PS_MAX_COLS; ++c)
        if (c < PS_QW(wp)->n_cols && PS_ENC_OF(&PS_QW(wp)->cols[c]) == PS_ENC_FOR) whole.data_bytes[c] = ~(ps_u64)0;
      sel = ps_where_word(PS_QW(wp), &whole, w, sel, PS_QL_AND_RIGHT(L), PS_QL_OR_RIGHT(L), &st);
    } else
#endif
      sel = ps_where_word(PS_QW(wp), wb, w, sel, PS_QL_AND_RIGHT(L), PS_QL_OR_RIGHT(L), &st);
    if (st.rows != 0) ps_atomic_min_u32(&status[0], (ps_u32)(w * 32 + ps_ctz32(st.rows)));
  }
  return sel;
}

/* The width stream words of 32-row word w of FOR stream d (inside it: the
 * caller checks), asked into the cache: the cache hints below and the CPU
 * batch's (ps_q_prefetch_rows). A hint reads nothing the kernel sees. */
PS_FN void ps_q_prefetch_word(PS_GLOBAL const ps_u8 *d, ps_u32 width, ps_u64 w) {
  const ps_u64 at = w * width * 4, bytes = (ps_u64)width * 4;
  PS_PREFETCH(d + at);
  if (bytes > 32) PS_PREFETCH(d + at + bytes - 1); /* a word may cross a line */
}

/* PS_QS_PREFETCH (a specialized build's option, query_prefetch): the
 * stream bytes of word w of every column the WHERE reads, asked into the
 * cache ahead of their use, so that a work-item's next word does not start
 * with a full memory latency per leaf. Only inside the streams. */
#if defined(PS_Q_SPEC) && PS_QS_PREFETCH
PS_FN void ps_q_prefetch_where(PS_CONST_MEM const ps_program *wp, const ps_w_bufs *wb, ps_u64 w) {
  PS_Q_UNROLL
  for (ps_u32 s = 0; s < PS_QW(wp)->n_cols; ++s) {
    const ps_u32 width = PS_QW(wp)->cols[s].width;
    if (width == 0 || PS_ENC_OF(&PS_QW(wp)->cols[s]) != PS_ENC_FOR) continue;
    if ((w + 1) * width * 4 > wb->data_bytes[s]) continue;
    ps_q_prefetch_word(wb->data[s], width, w);
  }
}
#define PS_Q_PREFETCH_WHERE(wp, wb, w) ps_q_prefetch_where((wp), (wb), (w))
#else
#define PS_Q_PREFETCH_WHERE(wp, wb, w) ((void)0)
#endif

/* PS_QS_PREFETCH in PS_QMODE_REGS by rows: the stream bytes of word w of the
 * FOR slots in `slots` (a selected word's key and value columns), asked into
 * the cache when the work-group's WHERE pass finds the word selected, so
 * that the team that later reads its rows does not wait a full memory
 * latency per word. Only inside the streams (the caller's inside mask). */
#if defined(PS_Q_SPEC) && PS_QS_PREFETCH && PS_QS_LANES
PS_FN void ps_q_prefetch_slots(PS_CONST_MEM const ps_vprog *p, const ps_q_bufs *B, ps_u64 w, ps_u32 slots) {
  PS_Q_UNROLL
  for (ps_u32 s = 0; s < PS_QP(p)->n_cols; ++s)
    if (((slots >> s) & 1u) && PS_QP(p)->cols[s].width != 0) ps_q_prefetch_word(B->data[s], PS_QP(p)->cols[s].width, w);
}
#define PS_Q_PREFETCH_SLOTS(p, B, w, slots) ps_q_prefetch_slots((p), (B), (w), (slots))
#else
#define PS_Q_PREFETCH_SLOTS(p, B, w, slots) ((void)0)
#endif

/* PS_QMODE_PRIVATE evaluates the WHERE of this many words, then reads the
 * values of their selected rows (CPU devices: 8, set by the host; else 1,
 * word by word). On a CPU a value column the WHERE does not read misses
 * the cache at each selected row; with the batch's loads after the batch's
 * compares, an out-of-order core has several of them in flight instead of
 * one after another, and before the rows are read the stream words of
 * every selected word's columns are asked into the cache
 * (ps_q_prefetch_rows), so that the misses overlap all at once rather than
 * as far as the core's window reaches into the rows' arithmetic. */
#ifndef PS_Q_SEL_BATCH
#define PS_Q_SEL_BATCH 1
#endif

/* The stream words of 32-row word w of every FOR column a selected row
 * reads (read_slots), where they lie inside their streams. */
PS_FN void ps_q_prefetch_rows(PS_CONST_MEM const ps_vprog *p, const ps_q_bufs *B, ps_u32 aligned, ps_u64 w) {
  const ps_u32 inside = ps_q_inside_slots(p, B, aligned, w, PS_QP(p)->read_slots);
  PS_Q_UNROLL
  for (ps_u32 s = 0; s < PS_QP(p)->n_cols; ++s)
    if ((inside >> s) & 1u) ps_q_prefetch_word(B->data[s], PS_QP(p)->cols[s].width, w);
}

/* Whether a selected row's columns are read at all (not for COUNT(*) alone). */
PS_FN int ps_q_reads(PS_CONST_MEM const ps_vprog *p) {
  int reads = PS_QP(p)->n_groups > 1;
  PS_Q_UNROLL
  for (ps_u32 a = 0; a < PS_QP(p)->n_aggs; ++a) reads |= PS_QP(p)->aggs[a].count != 0;
  return reads;
}

/* The words of work-item `item`: w = *first; w < *end; w += *step. Strided
 * (L->span 0), neighbouring work-items read neighbouring bytes at once (a
 * GPU's coalescing); in runs of L->span words (CPU devices), each work-item
 * reads its own stretch of every stream in order, which a CPU's caches and
 * prefetchers follow (a work-item of PoCL runs its whole loop before the
 * next one starts, so strided reads jump by `items` words every time). */
PS_FN void ps_q_words(PS_CONST_MEM const ps_qlaunch *L, ps_u64 item, ps_u64 *first, ps_u64 *end, ps_u64 *step) {
  const ps_u64 words = (L->rows + 31) / 32;
  if (L->span == 0) {
    *first = item;
    *end = words;
    *step = L->items;
    return;
  }
  *first = item * L->span;
  *end = *first + L->span < words ? *first + L->span : words;
  *step = 1;
}

/* PS_QMODE_ITEMS, for one work-item (`item` < L->items owns
 * part[item * n_groups * n_accs ...]): each row's group is loaded, updated
 * and stored in global memory. */
PS_FN void ps_q_partials_items(PS_CONST_MEM const ps_vprog *p, PS_CONST_MEM const ps_program *wp,
                               PS_CONST_MEM const ps_qlaunch *L, const ps_q_bufs *B, ps_u64 item,
                               PS_GLOBAL ps_qacc *part, PS_GLOBAL ps_u32 *status) {
  if (item >= L->items) return;
  const ps_u32 n_accs = PS_QP(p)->n_accs;
  const ps_u64 n_acc = (ps_u64)PS_QP(p)->n_groups * n_accs;
  PS_GLOBAL ps_qacc *mine = part + item * n_acc;
  ps_qacc acc[PS_QMAX_AGGS + 1];
  PS_Q_UNROLL
  for (ps_u32 i = 0; i < n_accs; ++i) ps_q_acc_init(&acc[i]);
  for (ps_u64 i = 0; i < n_acc; ++i) mine[i] = acc[i % n_accs];
  const ps_w_bufs wb = ps_q_where_bufs(L, B);
  ps_u64 first, end, step;
  ps_q_words(L, item, &first, &end, &step);
  for (ps_u64 w = first; w < end; w += step) {
    ps_u32 sel = ps_q_word_sel(wp, L, &wb, w, status);
    while (sel != 0) { /* a word without selected rows reads nothing else */
      ps_u32 j = ps_ctz32(sel);
      sel &= sel - 1;
      ps_u64 g = 0;
      ps_qval vals[PS_QMAX_AGGS];
      if (!ps_q_row(p, B, (ps_u32)PS_QL_ALIGNED(L), (ps_u32)PS_QL_FITS64(L), w * 32 + j, &g, vals, status)) continue;
      if (g >= PS_QP(p)->n_groups) continue; /* a hashed plan's key not in its table: cannot happen */
      PS_GLOBAL ps_qacc *ga = mine + g * n_accs;
      PS_Q_UNROLL
      for (ps_u32 i = 0; i < n_accs; ++i) acc[i] = ga[i];
      ps_q_add_counts(p, 1, acc);
      ps_q_add_values(p, vals, acc);
      PS_Q_UNROLL
      for (ps_u32 i = 0; i < n_accs; ++i) ga[i] = acc[i];
    }
  }
}

/* Tree reduction of lacc[0 .. lsize) into lacc[0] (lsize a power of two;
 * every work-item of the group calls it, after a barrier). */
PS_FN void ps_q_tree(PS_LOCAL ps_qacc *lacc, ps_u32 lid, ps_u32 lsize) {
  for (ps_u32 s = lsize / 2; s > 0; s >>= 1) {
    if (lid < s) {
      ps_qacc x = lacc[lid];
      ps_q_acc_merge(&x, lacc[lid + s]);
      lacc[lid] = x;
    }
    PS_BARRIER();
  }
}

/* PS_QMODE_PRIVATE (no GROUP BY): private accumulators, counts by the word,
 * then one partial per work-group: part[group * n_accs ...]. */
PS_FN void ps_q_partials_private(PS_CONST_MEM const ps_vprog *p, PS_CONST_MEM const ps_program *wp,
                                 PS_CONST_MEM const ps_qlaunch *L, const ps_q_bufs *B, ps_u64 group, ps_u32 lid,
                                 ps_u32 lsize, PS_LOCAL ps_qacc *lacc, PS_GLOBAL ps_qacc *part,
                                 PS_GLOBAL ps_u32 *status) {
  const ps_u32 n_accs = PS_QP(p)->n_accs;
  ps_qacc acc[PS_QMAX_AGGS + 1];
  PS_Q_UNROLL
  for (ps_u32 i = 0; i < n_accs; ++i) ps_q_acc_init(&acc[i]);
  const int reads = ps_q_reads(p);
  const ps_w_bufs wb = ps_q_where_bufs(L, B);
  ps_u64 first, end, step;
  ps_q_words(L, group * lsize + lid, &first, &end, &step);
  for (ps_u64 w0 = first; w0 < end; w0 += step * PS_Q_SEL_BATCH) {
    /* the WHERE of PS_Q_SEL_BATCH words first, then their selected rows */
    ps_u32 sels[PS_Q_SEL_BATCH];
    PS_Q_UNROLL
    for (ps_u32 b = 0; b < PS_Q_SEL_BATCH; ++b) {
      const ps_u64 w = w0 + b * step;
      ps_u32 sel = 0;
      if (w < end) {
        if (PS_QL_HAS_WHERE(L) && w + step < end) PS_Q_PREFETCH_WHERE(wp, &wb, w + step);
        sel = ps_q_word_sel(wp, L, &wb, w, status);
        ps_q_add_counts(p, ps_popc32(sel), acc);
      }
      sels[b] = sel;
    }
    if (!reads) continue;
#if PS_Q_SEL_BATCH > 1
    PS_Q_UNROLL
    for (ps_u32 b = 0; b < PS_Q_SEL_BATCH; ++b)
      if (sels[b] != 0) ps_q_prefetch_rows(p, B, (ps_u32)PS_QL_ALIGNED(L), w0 + b * step);
#endif
    PS_Q_UNROLL
    for (ps_u32 b = 0; b < PS_Q_SEL_BATCH; ++b) {
      const ps_u64 w = w0 + b * step;
      ps_u32 sel = sels[b];
      while (sel != 0) { /* a word without selected rows reads nothing else */
        ps_u32 j = ps_ctz32(sel);
        sel &= sel - 1;
        if (PS_QL_FITS64(L)) {
          ps_q_row_add64(p, B, (ps_u32)PS_QL_ALIGNED(L), w * 32 + j, acc, status);
          continue;
        }
        ps_u64 g = 0;
        ps_qval vals[PS_QMAX_AGGS];
        if (ps_q_row(p, B, (ps_u32)PS_QL_ALIGNED(L), 0u, w * 32 + j, &g, vals, status))
          ps_q_add_values(p, vals, acc);
      }
    }
  }
  /* Not unrolled: a loop of barriers is cheaper to compile (PoCL splits
   * kernels at every barrier) and to run. acc is read through a chain of
   * selects whose indexes are constants, so that a specialized build keeps
   * it in registers. */
  for (ps_u32 i = 0; i < n_accs; ++i) {
    ps_qacc x = acc[0];
    PS_Q_UNROLL
    for (ps_u32 j = 1; j < n_accs; ++j)
      if (j == i) x = acc[j];
    lacc[lid] = x;
    PS_BARRIER();
    ps_q_tree(lacc, lid, lsize);
    if (lid == 0) part[group * n_accs + i] = lacc[0];
    PS_BARRIER();
  }
}

/* PS_QMODE_LOCAL: one table per work-group in local memory. Its entries hold
 * count and the 192-bit sum as usual, and min and max as 64-bit signed
 * values in min_lo / max_lo (every value fits: L->fits64), starting at
 * INT64_MAX / INT64_MIN, which no value reaches. */
#define PS_Q_I64_MAX 0x7FFFFFFFFFFFFFFFull
#define PS_Q_I64_MIN 0x8000000000000000ull

#if !defined(__OPENCL_VERSION__) || defined(PS_Q_INT64_ATOMICS)
/* Merges x (a work-item's accumulator of one word's rows of one group;
 * values: an aggregate with a value, whose min and max fit 64 bits) into a
 * local table entry. The sum is exact whatever the order: each atomic add
 * reports its own wrap-around (ps_local_add_carry's carry), which another
 * atomic add puts into the next word, so every carry is counted once. Min
 * and max read the entry first and skip the atomic when it cannot change it
 * (min only decreases, max only increases). */
PS_FN void ps_q_local_merge(PS_LOCAL ps_qacc *a, const ps_qacc *x, int values) {
  if (x->count == 0) return;
  (void)ps_local_add_carry(&a->count, x->count); /* counts stay below 2^64 */
  if (!values) return;
  const ps_u32 c1 = x->sum0 != 0 ? ps_local_add_carry(&a->sum0, x->sum0) : 0u;
  ps_u64 c2 = 0;
  if (x->sum1 != 0) c2 += ps_local_add_carry(&a->sum1, x->sum1);
  if (c1 != 0) c2 += ps_local_add_carry(&a->sum1, c1);
  if (x->sum2 + c2 != 0) (void)ps_local_add_carry(&a->sum2, x->sum2 + c2);
  const ps_i64 mn = (ps_i64)x->min_lo, mx = (ps_i64)x->max_lo;
  if (mn < (ps_i64)((PS_LOCAL volatile ps_qacc *)a)->min_lo) ps_local_min_i64(&a->min_lo, mn);
  if (mx > (ps_i64)((PS_LOCAL volatile ps_qacc *)a)->max_lo) ps_local_max_i64(&a->max_lo, mx);
}

/* The table of n_acc entries in local memory, empty (every work-item of
 * the group calls it; it ends with a barrier). */
PS_FN void ps_q_local_table_init(PS_LOCAL ps_qacc *lacc, ps_u32 n_acc, ps_u32 lid, ps_u32 lsize) {
  for (ps_u32 i = lid; i < n_acc; i += lsize) {
    ps_qacc x;
    ps_q_acc_init(&x);
    x.min_lo = PS_Q_I64_MAX;
    x.max_lo = PS_Q_I64_MIN;
    lacc[i] = x;
  }
  PS_BARRIER();
}

/* The table as the work-group's partial part[group * n_acc ...] (after a
 * barrier), min and max back in the usual 128-bit form. */
PS_FN void ps_q_local_table_out(PS_LOCAL ps_qacc *lacc, ps_u32 n_acc, ps_u64 group, ps_u32 lid, ps_u32 lsize,
                                PS_GLOBAL ps_qacc *part) {
  PS_BARRIER();
  for (ps_u32 i = lid; i < n_acc; i += lsize) {
    ps_qacc x = lacc[i];
    if (x.min_lo == PS_Q_I64_MAX) { /* never set: the usual initial value */
      x.min_lo = PS_QACC_MIN_INIT_LO;
      x.min_hi = PS_QACC_MIN_INIT_HI;
    } else {
      x.min_hi = (ps_i64)x.min_lo < 0 ? ~(ps_u64)0 : 0;
    }
    if (x.max_lo == PS_Q_I64_MIN) {
      x.max_lo = PS_QACC_MAX_INIT_LO;
      x.max_hi = PS_QACC_MAX_INIT_HI;
    } else {
      x.max_hi = (ps_i64)x.max_lo < 0 ? ~(ps_u64)0 : 0;
    }
    part[group * n_acc + i] = x;
  }
}

/* Each word's selected rows are taken one group at a time: the rows of the
 * first remaining row's group, one aggregate at a time into a private
 * accumulator, merged into the table once (a few merges per word instead
 * of one per row). */
PS_FN void ps_q_partials_local(PS_CONST_MEM const ps_vprog *p, PS_CONST_MEM const ps_program *wp,
                               PS_CONST_MEM const ps_qlaunch *L, const ps_q_bufs *B, ps_u64 group, ps_u32 lid,
                               ps_u32 lsize, PS_LOCAL ps_qacc *lacc, PS_GLOBAL ps_qacc *part,
                               PS_GLOBAL ps_u32 *status) {
  const ps_u32 n_accs = PS_QP(p)->n_accs, n_acc = PS_QP(p)->n_groups * n_accs;
  ps_q_local_table_init(lacc, n_acc, lid, lsize);
  const ps_w_bufs wb = ps_q_where_bufs(L, B);
  ps_u64 first, end, step;
  ps_q_words(L, group * lsize + lid, &first, &end, &step);
  for (ps_u64 w = first; w < end; w += step) {
    ps_u32 sel = ps_q_word_sel(wp, L, &wb, w, status);
    const ps_u32 aligned = (ps_u32)PS_QL_ALIGNED(L);
    while (sel != 0) { /* a word without selected rows reads nothing else */
      const ps_u64 g0 = ps_q_key_group(p, B, aligned, w * 32 + ps_ctz32(sel), status);
      ps_u32 mine = 0, rest = sel;
      sel = 0;
      while (rest != 0) {
        const ps_u32 j = ps_ctz32(rest);
        rest &= rest - 1;
        if (ps_q_key_group(p, B, aligned, w * 32 + j, status) == g0)
          mine |= 1u << j;
        else
          sel |= 1u << j; /* a later round's */
      }
      if (g0 >= PS_QP(p)->n_groups) continue; /* corrupt keys, recorded */
      PS_LOCAL ps_qacc *ga = lacc + g0 * n_accs;
      const ps_u32 n = ps_popc32(mine);
      (void)ps_local_add_carry(&ga[0].count, n);
      /* one aggregate at a time over the group's rows: its accumulator stays
       * in registers (a row with a corrupt code fails the whole run, so
       * what it added does not matter) */
      PS_Q_UNROLL
      for (ps_u32 a = 0; a < PS_QP(p)->n_aggs; ++a) {
        const ps_vagg va = PS_QP(p)->aggs[a];
        if (va.count == 0) {
          (void)ps_local_add_carry(&ga[1 + a].count, n);
          continue;
        }
        ps_qacc x;
        ps_q_acc_init(&x);
        for (ps_u32 rows = mine; rows != 0; rows &= rows - 1) {
          int corrupt = 0;
          const ps_qval v = ps_q_value64(p, B, va, 0, 0u, w * 32 + ps_ctz32(rows), aligned, &corrupt, status);
          if (!corrupt && !v.null_) ps_q_acc_add(&x, v.v);
        }
        ps_q_local_merge(&ga[1 + a], &x, 1);
      }
    }
  }
  ps_q_local_table_out(lacc, n_acc, group, lid, lsize, part);
}
#endif

#if !defined(__OPENCL_VERSION__) || defined(PS_Q_INT64_ATOMICS)
/* PS_QMODE_KEYS (a hashed plan's keys pass), for one work-item (`item` <
 * L->items): every selected row's group key into the group table, a row
 * whose key repeats the work-item's previous one skipped (sorted or
 * clustered keys insert once per run). A corrupt key's row inserts some key
 * too: the run fails with status[0] whatever the table holds. Value columns
 * are not read (the accumulating run reads and checks them). */
PS_FN void ps_q_partials_keys(PS_CONST_MEM const ps_vprog *p, PS_CONST_MEM const ps_program *wp,
                              PS_CONST_MEM const ps_qlaunch *L, const ps_q_bufs *B, ps_u64 item,
                              PS_GLOBAL ps_u32 *status) {
  const ps_w_bufs wb = ps_q_where_bufs(L, B);
  const ps_u64 words = (L->rows + 31) / 32;
  const ps_u32 aligned = (ps_u32)PS_QL_ALIGNED(L);
  ps_u64 last = PS_Q_NO_KEY;
  for (ps_u64 w = item; w < words; w += L->items) {
    ps_u32 sel = ps_q_word_sel(wp, L, &wb, w, status);
    while (sel != 0) {
      const ps_u64 g = ps_q_key_group(p, B, aligned, w * 32 + ps_ctz32(sel), status);
      sel &= sel - 1;
      if (g != last) ps_q_group_insert(B->groups, PS_QP(p)->group_slots, g);
      last = g;
    }
  }
}
#endif

#if !defined(__OPENCL_VERSION__) || defined(PS_Q_INT64_ATOMICS)
/* PS_QMODE_GLOBAL's table entries: count and the 192-bit sum as usual, min
 * and max of values that fit 64 bits as unsigned words whose zero means
 * "none" (the host zeroes the table): max_lo holds v with its sign bit
 * flipped (order-preserving), min_lo the complement of that, both raised
 * with an atomic maximum. ps_q_global_out turns an entry back. */
#define PS_Q_SIGN 0x8000000000000000ull

/* ps_q_local_merge on a PS_QMODE_GLOBAL table entry in global memory (the
 * same exact carries); the count only where `count` (not a derived count:
 * ps_vprog.derived_counts, one atomic less per row and aggregate). */
PS_FN void ps_q_global_merge(PS_GLOBAL ps_qacc *a, const ps_qacc *x, int values, int count) {
  if (x->count == 0) return;
  if (count) ps_atomic_add_u64(&a->count, x->count);
  if (!values) return;
  ps_u64 old = x->sum0 != 0 ? ps_atomic_add_u64(&a->sum0, x->sum0) : 0;
  const ps_u64 c1 = old + x->sum0 < old ? 1 : 0;
  ps_u64 c2 = 0;
  if (x->sum1 != 0) {
    old = ps_atomic_add_u64(&a->sum1, x->sum1);
    c2 += old + x->sum1 < old ? 1 : 0;
  }
  if (c1 != 0) {
    old = ps_atomic_add_u64(&a->sum1, c1);
    c2 += old + c1 < old ? 1 : 0;
  }
  if (x->sum2 + c2 != 0) ps_atomic_add_u64(&a->sum2, x->sum2 + c2);
  const ps_u64 mn = ~(x->min_lo ^ PS_Q_SIGN), mx = x->max_lo ^ PS_Q_SIGN;
  if (mn > ((PS_GLOBAL volatile ps_qacc *)a)->min_lo) ps_atomic_max_u64(&a->min_lo, mn);
  if (mx > ((PS_GLOBAL volatile ps_qacc *)a)->max_lo) ps_atomic_max_u64(&a->max_lo, mx);
}

/* A PS_QMODE_GLOBAL table entry in the usual form. */
PS_FN ps_qacc ps_q_global_out(ps_qacc x) {
  if (x.min_lo == 0) {
    x.min_lo = PS_QACC_MIN_INIT_LO;
    x.min_hi = PS_QACC_MIN_INIT_HI;
  } else {
    x.min_lo = ~x.min_lo ^ PS_Q_SIGN;
    x.min_hi = (ps_i64)x.min_lo < 0 ? ~(ps_u64)0 : 0;
  }
  if (x.max_lo == 0) {
    x.max_lo = PS_QACC_MAX_INIT_LO;
    x.max_hi = PS_QACC_MAX_INIT_HI;
  } else {
    x.max_lo ^= PS_Q_SIGN;
    x.max_hi = (ps_i64)x.max_lo < 0 ? ~(ps_u64)0 : 0;
  }
  return x;
}

/* PS_QMODE_GLOBAL for one work-item (`item` < L->items): as
 * ps_q_partials_local (each word's selected rows one group at a time, one
 * aggregate at a time, merged once per group and word), into the launch's
 * one table part[0 .. n_groups * n_accs) in global memory. Each row's group
 * is looked up once (a probe of the group table), not once per round. */
PS_FN void ps_q_partials_global(PS_CONST_MEM const ps_vprog *p, PS_CONST_MEM const ps_program *wp,
                                PS_CONST_MEM const ps_qlaunch *L, const ps_q_bufs *B, ps_u64 item,
                                PS_GLOBAL ps_qacc *part, PS_GLOBAL ps_u32 *status) {
  const ps_u32 n_accs = PS_QP(p)->n_accs;
  const ps_w_bufs wb = ps_q_where_bufs(L, B);
  const ps_u64 words = (L->rows + 31) / 32;
  const ps_u32 aligned = (ps_u32)PS_QL_ALIGNED(L);
  ps_u64 gs[32];
  for (ps_u64 w = item; w < words; w += L->items) {
    ps_u32 sel = ps_q_word_sel(wp, L, &wb, w, status);
    for (ps_u32 rest = sel; rest != 0; rest &= rest - 1) { /* a word without selected rows reads nothing else */
      const ps_u32 j = ps_ctz32(rest);
      gs[j] = ps_q_key_group(p, B, aligned, w * 32 + j, status);
    }
    while (sel != 0) {
      const ps_u64 g0 = gs[ps_ctz32(sel)];
      ps_u32 mine = 0, rest = sel;
      sel = 0;
      while (rest != 0) {
        const ps_u32 j = ps_ctz32(rest);
        rest &= rest - 1;
        if (gs[j] == g0)
          mine |= 1u << j;
        else
          sel |= 1u << j; /* a later round's */
      }
      if (g0 >= PS_QP(p)->n_groups) continue; /* corrupt keys, recorded */
      PS_GLOBAL ps_qacc *ga = part + g0 * n_accs;
      const ps_u32 n = ps_popc32(mine);
      ps_atomic_add_u64(&ga[0].count, n);
      PS_Q_UNROLL
      for (ps_u32 a = 0; a < PS_QP(p)->n_aggs; ++a) {
        const ps_vagg va = PS_QP(p)->aggs[a];
        const int count = !((PS_QP(p)->derived_counts >> a) & 1u); /* else the host writes it */
        if (va.count == 0) {
          if (count) ps_atomic_add_u64(&ga[1 + a].count, n);
          continue;
        }
        ps_qacc x;
        ps_q_acc_init(&x);
        x.min_lo = PS_Q_I64_MAX;
        x.max_lo = PS_Q_I64_MIN;
        for (ps_u32 rows = mine; rows != 0; rows &= rows - 1) {
          int corrupt = 0;
          const ps_qval v = ps_q_value64(p, B, va, 0, 0u, w * 32 + ps_ctz32(rows), aligned, &corrupt, status);
          if (!corrupt && !v.null_) {
            ps_q_sum192(&x.sum0, &x.sum1, &x.sum2, v.v.lo, v.v.hi, v.v.hi);
            x.min_lo = (ps_i64)v.v.lo < (ps_i64)x.min_lo ? v.v.lo : x.min_lo;
            x.max_lo = (ps_i64)v.v.lo > (ps_i64)x.max_lo ? v.v.lo : x.max_lo;
            x.count += 1;
          }
        }
        ps_q_global_merge(&ga[1 + a], &x, 1, count);
      }
    }
  }
}
#endif

#if defined(PS_Q_SPEC) && (!defined(__OPENCL_VERSION__) || defined(PS_Q_INT64_ATOMICS))
/* The slots the value programs read (a mask; constant in a specialized
 * build: every instruction belongs to an aggregate's program). */
PS_FN ps_u32 ps_q_value_slots(PS_CONST_MEM const ps_vprog *p) {
  ps_u32 m = 0;
  PS_Q_UNROLL
  for (ps_u32 i = 0; i < PS_QMAX_INSNS; ++i)
    if (i < PS_QP(p)->n_insns &&
        (PS_QP(p)->insns[i].op == PS_VOP_COL || PS_QP(p)->insns[i].op == PS_VOP_FCOL ||
         PS_QP(p)->insns[i].op == PS_VOP_DCOL || PS_QP(p)->insns[i].op == PS_VOP_DNUM))
      m |= 1u << PS_QP(p)->insns[i].arg;
  return m;
}

/* The first aggregate b <= a whose value program and fields are a's (SUM(x)
 * and AVG(x) of one query, say): a's values are b's, so only b's registers
 * are updated. Constant in a specialized build. */
PS_FN ps_u32 ps_q_twin(PS_CONST_MEM const ps_vprog *p, ps_u32 a) {
  const ps_vagg va = PS_QP(p)->aggs[a];
  PS_Q_UNROLL
  for (ps_u32 b = 0; b < PS_QS_N_AGGS; ++b) {
    if (b >= a) break;
    const ps_vagg vb = PS_QP(p)->aggs[b];
    int same = vb.count == va.count && PS_QS_FIELD(a, 0xFu) == PS_QS_FIELD(b, 0xFu);
    PS_Q_UNROLL
    for (ps_u32 i = 0; i < PS_QMAX_INSNS; ++i) {
      if (!same || i >= va.count) break;
      const ps_vinsn x = PS_QP(p)->insns[va.first + i], y = PS_QP(p)->insns[vb.first + i];
      same = x.op == y.op && x.arg == y.arg && x.lo == y.lo && x.hi == y.hi;
    }
    if (same) return b;
  }
  return a;
}

/* PS_QMODE_REGS' accumulators, kept in registers: each group's rows and,
 * per aggregate, the fields the host reads (PS_QS_FIELDS); indexed by
 * compile-time constants only. */
typedef struct ps_q_regs {
  ps_u32 rows[PS_QS_REG_GROUPS];
  ps_u32 cnt[PS_QS_REG_GROUPS][PS_QS_N_AGGS];
  ps_u64 sum[PS_QS_REG_GROUPS][PS_QS_N_AGGS];
  ps_i64 mn[PS_QS_REG_GROUPS][PS_QS_N_AGGS], mx[PS_QS_REG_GROUPS][PS_QS_N_AGGS];
} ps_q_regs;

/* PS_QMODE_REGS' work on the selected rows `sel` of 32-row word w: the rows
 * by group, from the key columns alone; then each group's rows in turn, a
 * loop per group, so that a row's values go into its group's registers
 * with one add each (not one predicated add per group and aggregate). The
 * slots of key_in and value_in are read without bound checks
 * (ps_q_inside_slots). A row whose code is corrupt is recorded in status
 * and left out of the values (the run fails). */
PS_FN void ps_q_regs_word(PS_CONST_MEM const ps_vprog *p, const ps_q_bufs *B, ps_u32 aligned, ps_u64 w, ps_u32 sel,
                          ps_u32 key_in, ps_u32 value_slots, ps_u32 value_in, ps_q_regs *R, PS_GLOBAL ps_u32 *status) {
  ps_u32 gm[PS_QS_REG_GROUPS];
  PS_Q_UNROLL
  for (ps_u32 k = 0; k < PS_QS_REG_GROUPS; ++k) gm[k] = 0;
  for (ps_u32 rest = sel; rest != 0; rest &= rest - 1) {
    const ps_u32 j = ps_ctz32(rest);
    const ps_u64 g = ps_q_key_group_in(p, B, aligned, w * 32 + j, key_in, status);
    PS_Q_UNROLL
    for (ps_u32 k = 0; k < PS_QS_REG_GROUPS; ++k) gm[k] |= g == k ? 1u << j : 0u;
  }
  PS_Q_UNROLL
  for (ps_u32 k = 0; k < PS_QS_REG_GROUPS; ++k) {
    if (k >= PS_QP(p)->n_groups) continue;
    R->rows[k] += ps_popc32(gm[k]);
    for (ps_u32 m = gm[k]; m != 0; m &= m - 1) {
      const ps_u32 j = ps_ctz32(m);
      ps_u64 codes[PS_MAX_COLS];
      ps_u32 valid = 0;
      if (!ps_q_word_codes(p, B, aligned, w, j, value_slots, value_in, codes, &valid, status)) continue;
      PS_Q_UNROLL
      for (ps_u32 a = 0; a < PS_QS_N_AGGS; ++a) {
        const ps_vagg va = PS_QP(p)->aggs[a];
        if (va.count == 0 || ps_q_twin(p, a) != a) continue; /* a twin's registers are its first's */
        int corrupt = 0;                                      /* codes already checked */
        const ps_qval x = ps_q_value64(p, B, va, codes, valid, w * 32 + j, aligned, &corrupt, status);
        if (x.null_) continue;
        const ps_i64 v = (ps_i64)x.v.lo;
        if (PS_QS_FIELD(a, PS_QF_COUNT)) R->cnt[k][a] += 1u;
        if (PS_QS_FIELD(a, PS_QF_SUM)) R->sum[k][a] += x.v.lo; /* wraps as two's complement: exact */
        if (PS_QS_FIELD(a, PS_QF_MIN)) R->mn[k][a] = v < R->mn[k][a] ? v : R->mn[k][a];
        if (PS_QS_FIELD(a, PS_QF_MAX)) R->mx[k][a] = v > R->mx[k][a] ? v : R->mx[k][a];
      }
    }
  }
}

/* PS_QMODE_REGS' registers, empty. */
PS_FN void ps_q_regs_init(ps_q_regs *R) {
  PS_Q_UNROLL
  for (ps_u32 k = 0; k < PS_QS_REG_GROUPS; ++k) {
    R->rows[k] = 0;
    PS_Q_UNROLL
    for (ps_u32 a = 0; a < PS_QS_N_AGGS; ++a) {
      R->cnt[k][a] = 0;
      R->sum[k][a] = 0;
      R->mn[k][a] = (ps_i64)PS_Q_I64_MAX;
      R->mx[k][a] = (ps_i64)PS_Q_I64_MIN;
    }
  }
}

#if defined(PS_WARP_OPS)
/* The sum over a warp's 32 lanes of a 32-bit count, exact in 64 bits (its
 * two 16-bit halves summed apart: 32 x 2^16 < 2^32). */
PS_FN ps_u64 ps_q_warp_sum_count(ps_u32 v) {
  return (ps_u64)ps_warp_sum_u32(v & 0xFFFFu) + ((ps_u64)ps_warp_sum_u32(v >> 16) << 16);
}

/* The exact sum over a warp's 32 lanes of 64-bit two's complement values,
 * into x's 192-bit sum. Each lane's value is read as unsigned (v + 2^64
 * where v < 0) in four 16-bit pieces whose sums are exact in 32 bits; the
 * pieces are put back together in 128 bits and 2^64 is taken off once per
 * negative lane. A work-item's sum is within 2^62 (the host's bound on its
 * rows), so the warp's is within 2^67: the high word is its sign. */
PS_FN void ps_q_warp_sum_i64(ps_u64 v, ps_qacc *x) {
  const ps_u64 c0 = ps_warp_sum_u32((ps_u32)v & 0xFFFFu), c1 = ps_warp_sum_u32((ps_u32)(v >> 16) & 0xFFFFu),
               c2 = ps_warp_sum_u32((ps_u32)(v >> 32) & 0xFFFFu), c3 = ps_warp_sum_u32((ps_u32)(v >> 48));
  const ps_u64 neg = ps_warp_count((ps_i64)v < 0);
  ps_u64 lo = c0 + (c1 << 16) + (c2 << 32); /* below 2^54: no carry */
  const ps_u64 top = c3 << 48;              /* c3 < 2^21: its bits past 16 belong to the high word */
  lo += top;
  const ps_u64 hi = (lo < top ? 1u : 0u) + (c3 >> 16) - neg;
  x->sum0 = lo;
  x->sum1 = hi;
  x->sum2 = (ps_i64)hi < 0 ? ~(ps_u64)0 : 0;
}
#endif

/* PS_QMODE_REGS' registers into the work-group's table lacc, then the table
 * as the work-group's partial (constant indexes only: no array in memory).
 * With PS_QS_WARP_MERGE (CUDA) a warp first adds its 32 lanes' registers
 * together and its first lane alone merges them: the table's 64-bit adds are
 * compare-and-swap loops in shared memory on NVIDIA GPUs, and with every
 * work-item of the group adding to the same entries they spun many times
 * over. Every work-item calls this (lsize a multiple of 32 there). */
PS_FN void ps_q_regs_out(PS_CONST_MEM const ps_vprog *p, const ps_q_regs *R, ps_u64 group, ps_u32 lid, ps_u32 lsize,
                         PS_LOCAL ps_qacc *lacc, PS_GLOBAL ps_qacc *part) {
  const ps_u32 n_accs = PS_QP(p)->n_accs, n_acc = PS_QS_REG_GROUPS * n_accs;
#if defined(PS_WARP_OPS)
  const int warp = PS_QS_WARP_MERGE, merges = !warp || (lid & 31u) == 0;
#else
  const int merges = 1;
#endif
  PS_Q_UNROLL
  for (ps_u32 k = 0; k < PS_QS_REG_GROUPS; ++k) {
    ps_qacc x;
    ps_q_acc_init(&x);
    ps_u64 rows = R->rows[k];
#if defined(PS_WARP_OPS)
    if (warp) rows = ps_q_warp_sum_count(R->rows[k]);
#endif
    x.count = rows;
    if (merges) ps_q_local_merge(&lacc[k * n_accs], &x, 0);
    PS_Q_UNROLL
    for (ps_u32 a = 0; a < PS_QS_N_AGGS; ++a) {
      if (a >= PS_QP(p)->n_aggs) continue;
      ps_q_acc_init(&x);
      x.count = rows;
      x.min_lo = PS_Q_I64_MAX;
      x.max_lo = PS_Q_I64_MIN;
      const int values = PS_QP(p)->aggs[a].count != 0;
      const ps_u32 t = ps_q_twin(p, a); /* the registers that hold a's fields */
      if (values && PS_QS_FIELD(a, PS_QF_COUNT)) x.count = R->cnt[k][t];
      if (values && PS_QS_FIELD(a, PS_QF_SUM)) {
        x.sum0 = R->sum[k][t];
        x.sum1 = x.sum2 = (ps_i64)R->sum[k][t] < 0 ? ~(ps_u64)0 : 0;
      }
      if (values && PS_QS_FIELD(a, PS_QF_MIN)) x.min_lo = (ps_u64)R->mn[k][t];
      if (values && PS_QS_FIELD(a, PS_QF_MAX)) x.max_lo = (ps_u64)R->mx[k][t];
#if defined(PS_WARP_OPS)
      if (warp) {
        if (values && PS_QS_FIELD(a, PS_QF_COUNT)) x.count = ps_q_warp_sum_count(R->cnt[k][t]);
        if (values && PS_QS_FIELD(a, PS_QF_SUM)) ps_q_warp_sum_i64(R->sum[k][t], &x);
        if (values && PS_QS_FIELD(a, PS_QF_MIN)) x.min_lo = (ps_u64)ps_warp_min_i64(R->mn[k][t]);
        if (values && PS_QS_FIELD(a, PS_QF_MAX)) x.max_lo = (ps_u64)ps_warp_max_i64(R->mx[k][t]);
      }
#endif
      if (merges) ps_q_local_merge(&lacc[k * n_accs + 1 + a], &x, values);
    }
  }
  ps_q_local_table_out(lacc, n_acc, group, lid, lsize, part);
}

/* PS_QMODE_REGS (a specialized build whose groups and fields fit
 * PS_Q_REG_WORDS, every value within 2^57 and the work-item's rows few
 * enough that their sum fits 63 bits: the host checks all three): each
 * work-item keeps every group's accumulators in registers (loops over the
 * compile-time groups and aggregates unrolled, so nothing is indexed at run
 * time), only the fields the host reads (PS_QS_FIELDS), sums in 64-bit
 * words; at the end each work-item merges them into PS_QMODE_LOCAL's
 * table in local memory (ps_q_local_merge: once per accumulator and
 * work-item, not per word), which becomes the work-group's partial. In this
 * form (PS_QS_LANES 0) a work-item takes whole words (ps_q_words: in runs
 * on a CPU). */
PS_FN void ps_q_partials_regs(PS_CONST_MEM const ps_vprog *p, PS_CONST_MEM const ps_program *wp,
                              PS_CONST_MEM const ps_qlaunch *L, const ps_q_bufs *B, ps_u64 group, ps_u32 lid,
                              ps_u32 lsize, PS_LOCAL ps_qacc *lacc, PS_GLOBAL ps_qacc *part, PS_GLOBAL ps_u32 *status) {
  ps_q_regs R;
  ps_q_regs_init(&R);
  ps_q_local_table_init(lacc, PS_QS_REG_GROUPS * PS_QP(p)->n_accs, lid, lsize);
  const ps_u32 aligned = (ps_u32)PS_QL_ALIGNED(L);
  const ps_w_bufs wb = ps_q_where_bufs(L, B);
  ps_u64 first, end, step;
  ps_q_words(L, group * lsize + lid, &first, &end, &step);
  /* the slots the values read (the keys are read on their own, first) */
  const ps_u32 value_slots = ps_q_value_slots(p), key_slots = ps_q_key_slots(p);
  for (ps_u64 w = first; w < end; w += step) {
    const ps_u32 sel = ps_q_word_sel(wp, L, &wb, w, status);
    if (sel == 0) continue; /* a word without selected rows reads nothing else */
    const ps_u32 key_in = ps_q_inside_slots(p, B, aligned, w, key_slots),
                 value_in = ps_q_inside_slots(p, B, aligned, w, value_slots);
    /* every word but a stream's last reads without checks: then the masks
     * are constants, and so is every slot's reader */
    if (key_in == key_slots && value_in == value_slots)
      ps_q_regs_word(p, B, aligned, w, sel, key_slots, value_slots, value_slots, &R, status);
    else
      ps_q_regs_word(p, B, aligned, w, sel, key_in, value_slots, value_in, &R, status);
  }
  ps_q_regs_out(p, &R, group, lid, lsize, lacc, part);
}

/* Selected row j of 32-row word w into PS_QMODE_REGS' registers: its group
 * from the key columns, its values once, then one branch per group whose
 * registers are constants (nothing is indexed at run time); a branch runs
 * only where a row of the group is. The slots of key_in and value_in are
 * read without bound checks. A row whose code is corrupt is recorded in
 * status and left out (the run fails). */
PS_FN void ps_q_regs_row(PS_CONST_MEM const ps_vprog *p, const ps_q_bufs *B, ps_u32 aligned, ps_u64 w, ps_u32 j,
                         ps_u32 key_in, ps_u32 value_slots, ps_u32 value_in, ps_q_regs *R, PS_GLOBAL ps_u32 *status) {
  const ps_u64 r = w * 32 + j;
  const ps_u64 g = ps_q_key_group_in(p, B, aligned, r, key_in, status);
  if (g >= PS_QP(p)->n_groups) return; /* a corrupt key code, recorded */
  ps_u64 codes[PS_MAX_COLS];
  ps_u32 valid = 0;
  if (!ps_q_word_codes(p, B, aligned, w, j, value_slots, value_in, codes, &valid, status)) return;
  ps_qval x[PS_QS_N_AGGS];
  PS_Q_UNROLL
  for (ps_u32 a = 0; a < PS_QS_N_AGGS; ++a) {
    x[a].v = ps_q_make(0, 0);
    x[a].null_ = 1;
    x[a].overflow = x[a].unrep = 0;
    const ps_vagg va = PS_QP(p)->aggs[a];
    if (a >= PS_QP(p)->n_aggs || va.count == 0 || ps_q_twin(p, a) != a) continue;
    int corrupt = 0; /* codes already checked */
    x[a] = ps_q_value64(p, B, va, codes, valid, r, aligned, &corrupt, status);
  }
  PS_Q_UNROLL
  for (ps_u32 k = 0; k < PS_QS_REG_GROUPS; ++k) {
    if (k >= PS_QP(p)->n_groups || g != k) continue;
    R->rows[k] += 1u;
    PS_Q_UNROLL
    for (ps_u32 a = 0; a < PS_QS_N_AGGS; ++a) {
      if (x[a].null_) continue; /* no value, or a twin's (its registers are its first's) */
      const ps_i64 v = (ps_i64)x[a].v.lo;
      if (PS_QS_FIELD(a, PS_QF_COUNT)) R->cnt[k][a] += 1u;
      if (PS_QS_FIELD(a, PS_QF_SUM)) R->sum[k][a] += x[a].v.lo; /* wraps as two's complement: exact */
      if (PS_QS_FIELD(a, PS_QF_MIN)) R->mn[k][a] = v < R->mn[k][a] ? v : R->mn[k][a];
      if (PS_QS_FIELD(a, PS_QF_MAX)) R->mx[k][a] = v > R->mx[k][a] ? v : R->mx[k][a];
    }
  }
}

/* PS_QMODE_REGS by rows (PS_QS_LANES 1, CUDA's default): the registers as above, but a
 * work-item takes rows, not words. A thread that owns a word takes its
 * selected rows one after another, each reading its own row's codes from
 * its own stretch of every stream, in loops that differ per work-item; here
 * the work-group first evaluates the WHERE of lsize neighbouring words, a
 * word per work-item (the per-word evaluator, as everywhere), and puts each
 * word's selected rows and whether its stream words lie inside every stream
 * in local memory; then each team of 32 work-items takes its 32 words one
 * after another, work-item `lane` the word's row `lane`: the team's loads of
 * a column read one stretch of the stream together, and every work-item of
 * the team runs the same code on its row. lsize is a power of two, so that
 * a work-item takes 32 rows per lsize words, as in the word form (the host's
 * bound on a work-item's rows holds for both). The words are the strided
 * ones (L->span 0), in rounds of the whole launch. The per-word state sits
 * in lacc past the register table's entries (PS_Q_REGS_TABLE_ACCS, two
 * 32-bit words per work-item). */
PS_FN void ps_q_partials_lanes(PS_CONST_MEM const ps_vprog *p, PS_CONST_MEM const ps_program *wp,
                               PS_CONST_MEM const ps_qlaunch *L, const ps_q_bufs *B, ps_u64 group, ps_u32 lid,
                               ps_u32 lsize, PS_LOCAL ps_qacc *lacc, PS_GLOBAL ps_qacc *part,
                               PS_GLOBAL ps_u32 *status) {
  ps_q_regs R;
  ps_q_regs_init(&R);
  ps_q_local_table_init(lacc, PS_QS_REG_GROUPS * PS_QP(p)->n_accs, lid, lsize);
  PS_LOCAL ps_u32 *words_sel = (PS_LOCAL ps_u32 *)(lacc + PS_Q_REGS_TABLE_ACCS);
  const ps_u32 aligned = (ps_u32)PS_QL_ALIGNED(L);
  const ps_w_bufs wb = ps_q_where_bufs(L, B);
  const ps_u32 value_slots = ps_q_value_slots(p), key_slots = ps_q_key_slots(p);
  const ps_u32 team = lid & ~31u, lane = lid & 31u, team_size = lsize - team < 32u ? lsize - team : 32u;
  const ps_u64 words = (L->rows + 31) / 32;
  /* the same rounds for every work-item of the group (barriers) */
  for (ps_u64 base = group * lsize; base < words; base += L->items) {
    const ps_u64 w = base + lid;
    ps_u32 sel = 0, inside = 0;
    if (w < words) {
      sel = ps_q_word_sel(wp, L, &wb, w, status);
      inside = sel != 0 && ps_q_inside_slots(p, B, aligned, w, key_slots) == key_slots &&
               ps_q_inside_slots(p, B, aligned, w, value_slots) == value_slots;
      if (inside) PS_Q_PREFETCH_SLOTS(p, B, w, key_slots | value_slots);
    }
    words_sel[2 * lid] = sel;
    words_sel[2 * lid + 1] = inside;
    PS_BARRIER();
    for (ps_u32 i = 0; i < team_size; ++i) {
      const ps_u32 s = words_sel[2 * (team + i)];
      if (s == 0) continue; /* the same for the whole team */
      const ps_u64 wi = base + team + i;
      if (words_sel[2 * (team + i) + 1]) {
        /* every word but a stream's last: constant masks, unchecked readers */
        for (ps_u32 j = lane; j < 32u; j += team_size)
          if ((s >> j) & 1u) ps_q_regs_row(p, B, aligned, wi, j, key_slots, value_slots, value_slots, &R, status);
      } else {
        const ps_u32 key_in = ps_q_inside_slots(p, B, aligned, wi, key_slots),
                     value_in = ps_q_inside_slots(p, B, aligned, wi, value_slots);
        for (ps_u32 j = lane; j < 32u; j += team_size)
          if ((s >> j) & 1u) ps_q_regs_row(p, B, aligned, wi, j, key_in, value_slots, value_in, &R, status);
      }
    }
    PS_BARRIER(); /* before the next round's words overwrite these */
  }
  ps_q_regs_out(p, &R, group, lid, lsize, lacc, part);
}
#endif

/* Pass 1 for work-item lid of work-group `group` (lsize work-items, a power
 * of two at most PS_Q_LOCAL_ACCS; lacc: PS_Q_LOCAL_ACCS accumulators of
 * local memory). The mode is the same for the whole launch, so every
 * work-item of a group reaches the same barriers. */
PS_FN void ps_q_pass1(PS_CONST_MEM const ps_vprog *p, PS_CONST_MEM const ps_program *wp,
                      PS_CONST_MEM const ps_qlaunch *L, const ps_q_bufs *B, ps_u64 group, ps_u32 lid, ps_u32 lsize,
                      PS_LOCAL ps_qacc *lacc, PS_GLOBAL ps_qacc *part, PS_GLOBAL ps_u32 *status) {
  if (PS_QL_MODE(L) == PS_QMODE_PRIVATE) {
    ps_q_partials_private(p, wp, L, B, group, lid, lsize, lacc, part, status);
#if defined(PS_Q_SPEC) && (!defined(__OPENCL_VERSION__) || defined(PS_Q_INT64_ATOMICS))
  } else if (PS_QL_MODE(L) == PS_QMODE_REGS) {
    if (PS_QS_LANES)
      ps_q_partials_lanes(p, wp, L, B, group, lid, lsize, lacc, part, status);
    else
      ps_q_partials_regs(p, wp, L, B, group, lid, lsize, lacc, part, status);
#endif
#if !defined(__OPENCL_VERSION__) || defined(PS_Q_INT64_ATOMICS)
  } else if (PS_QL_MODE(L) == PS_QMODE_LOCAL) {
    ps_q_partials_local(p, wp, L, B, group, lid, lsize, lacc, part, status);
  } else if (PS_QL_MODE(L) == PS_QMODE_KEYS) {
    ps_q_partials_keys(p, wp, L, B, group * lsize + lid, status);
  } else if (PS_QL_MODE(L) == PS_QMODE_GLOBAL) {
    ps_q_partials_global(p, wp, L, B, group * lsize + lid, part, status);
#endif
  } else {
    ps_q_partials_items(p, wp, L, B, group * lsize + lid, part, status);
  }
}

/* Pass 2 for work-item lid of work-group i (lsize work-items, a power of two
 * at most PS_Q_LOCAL_ACCS): accumulator i of the chunk, reduced over the
 * `parts` partials (part[t * n_acc + i]) and merged into acc[i]. flat (the
 * same for the whole launch, ps_query_merge_flat): each work-item instead
 * merges accumulator i * lsize + lid alone, the partials one after another
 * (many accumulators, few partials: a GROUP BY of many groups); flat 2: the
 * one partial is a PS_QMODE_GLOBAL table (ps_q_global_out). */
PS_FN void ps_q_merge(ps_u64 i, ps_u32 lid, ps_u32 lsize, ps_u64 n_acc, ps_u64 parts, ps_u64 flat,
                      PS_GLOBAL const ps_qacc *part, PS_GLOBAL ps_qacc *acc, PS_LOCAL ps_qacc *lacc) {
  if (flat) {
    const ps_u64 j = i * lsize + lid;
    if (j >= n_acc) return;
    ps_qacc y = acc[j];
#if !defined(__OPENCL_VERSION__) || defined(PS_Q_INT64_ATOMICS)
    if (flat == 2) {
      ps_q_acc_merge(&y, ps_q_global_out(part[j]));
      acc[j] = y;
      return;
    }
#endif
    for (ps_u64 t = 0; t < parts; ++t) ps_q_acc_merge(&y, part[t * n_acc + j]);
    acc[j] = y;
    return;
  }
  ps_qacc x;
  ps_q_acc_init(&x);
  for (ps_u64 t = lid; t < parts; t += lsize) ps_q_acc_merge(&x, part[t * n_acc + i]);
  lacc[lid] = x;
  PS_BARRIER();
  ps_q_tree(lacc, lid, lsize);
  if (lid == 0) {
    ps_qacc y = acc[i];
    ps_q_acc_merge(&y, lacc[0]);
    acc[i] = y;
  }
}

#endif /* PS_QUERY_KERNELS_H */
