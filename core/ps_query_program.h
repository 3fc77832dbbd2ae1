/*
 * The flat value program of a query (ps_query_create): what host C, CUDA and
 * OpenCL C all read to compute aggregates of arithmetic over selected rows.
 * Fixed-width POD only, like ps_program.h (whose column slots it reuses);
 * sizes are checked with _Static_assert in core/query.c.
 *
 * SEMANTICS (binding for every backend; docs/design.md):
 *
 * A chunk of rows comes with the WHERE program (core/ps_program.h; none =
 * every row) and one bitmap per CASE predicate (bit r = the predicate is TRUE
 * on row r). The WHERE is evaluated on every row with short cuts: the right
 * operand of an AND is evaluated only on the rows where its left operand is
 * not FALSE, the right operand of an OR only where its left operand is not
 * TRUE; elsewhere its leaves read nothing (and find no corrupt code) and count
 * as UNKNOWN, which cannot change the result. A leaf that is evaluated reads
 * and checks its codes as in ps_program.h (a corrupt code fails the run with
 * PS_ERR_CORRUPT_DATA). For every selected row r:
 *   - every slot in read_slots (those of values and keys; slots only the
 *     WHERE reads are not) is read: a valid row's code above the slot's
 *     code_limit (or any valid row of a PS_COLF_NO_CODES slot) fails the run
 *     with PS_ERR_CORRUPT_DATA;
 *   - the group key g = sum over keys k of slot_index_k * key_stride[k],
 *     where slot_index_k is, for a valid row, the key column's code when
 *     key_fn[k].op is PS_QKEY_CODE, else the ordinal of v = M + code under
 *     key_fn[k] minus its base, clamped (below); key_domain[k] - 1 for a null
 *     row of a key column with validity (its NULL group). A dense
 *     plan (group_slots == 0) uses g as the group. A hashed plan (the
 *     product of the domains is too large for a table per possible key)
 *     runs twice: the keys pass (group_pass == 1) only inserts each selected
 *     row's g into the group table (ps_query_args.groups: group_slots keys,
 *     PS_Q_NO_KEY where empty; any placement, the host collects them), and
 *     accumulates nothing; the host then sorts the keys, numbers them
 *     0..n_groups-1 in ascending order and writes the table back with each
 *     key's number (the layout of ps_q_group_find); the accumulating pass
 *     uses g's number as the group;
 *   - acc[g * n_accs + 0].count += 1 (the group's selected rows);
 *   - for each aggregate a (accumulator g * n_accs + 1 + a): its value program
 *     insns[first, first + count) runs on a stack of values. A value is
 *     (null, overflow, v) with v a signed integer of at most 38 decimal digits
 *     held as two's complement 128 bits (hi:lo):
 *       PS_VOP_COL slot:   null if the row is null in the slot; else
 *                          v = M + code (the 64-bit wrapping sum), sign-extended
 *                          for PS_KIND_SIGNED / FLOAT64 / FLOAT32 slots,
 *                          zero-extended for PS_KIND_UNSIGNED slots;
 *       PS_VOP_FCOL slot:  a lossless float column's value (docs/float-encoding.md)
 *                          in units of 2^L: null if the row is null in the
 *                          slot; else x = the value of its code c (lo: the
 *                          mapping, PS_VF_*; hi: its reference R) and
 *                          v = x / 2^L, unrep (not representable) where x
 *                          is infinite, where x / 2^L is not an integer or
 *                          where |v| >= 2^126. BITS: x has the bit pattern
 *                          whose order transform is R + c. ALP: the entry of
 *                          the slot's exception table (the value aux words,
 *                          below) at the largest code <= c, if that code lies
 *                          in c's gap (c >> rank_bits); else the grid value
 *                          of k = R + (c >> rank_bits), exactly the two IEEE
 *                          products fl(fl(k * 10^f) * 10^-e), in float for a
 *                          float32 column (the factors' bits are
 *                          ps_q_pow10_bits and friends);
 *       PS_VOP_CONST:      v = hi:lo;
 *       PS_VOP_NULL:       null;
 *       PS_VOP_SCALE k:    top: v = v * 10^k (arg = k, 1..38);
 *       PS_VOP_ADD/SUB/MUL: pop b, pop a, push a op b;
 *       PS_VOP_CASE p:     pop e, pop t, push (bit r of predicate p) ? t : e.
 *     Arithmetic: overflow = a.overflow | b.overflow; null = a.null | b.null;
 *     unrep = a.unrep | b.unrep; if none is set, v = the exact result, and if
 *     |v| > 10^38 - 1 the result is (overflow, v unspecified). SCALE: the
 *     same rule on one operand. (The core lowers an FCOL only as a whole
 *     SUM or AVG value; arithmetic on lossless floats is in doubles.)
 *       PS_VOP_DCOL slot:  null if the row is null in the slot; else the
 *                          double x of the code (the decode of FCOL; a
 *                          float32 column's float widened), its bits in lo;
 *       PS_VOP_DNUM slot:  null if the row is null; else, v = M + code and D
 *                          the double whose bits are lo, the double
 *                          SIGNED (int64)v / D, UNSIGNED (double)v / D,
 *                          FLOAT64 (double)(int64)v / D, FLOAT32
 *                          (double)(float)((double)(int64)v / D) (each
 *                          conversion and the division rounded to nearest);
 *       PS_VOP_DCONST:     the double whose bits are lo;
 *       PS_VOP_DADD/DSUB/DMUL: pop b, pop a, push the double a op b, one
 *                          correctly rounded IEEE operation (never fused);
 *                          null and unrep as for ADD;
 *       PS_VOP_DUNITS:     top: the double in units of 2^(arg - 2048) as
 *                          FCOL's x (unrep where infinite, NaN, with a bit
 *                          below the unit, or 2^126 units or more);
 *       PS_VOP_DORD:       top: the double's ordered bits, the int64
 *                          (bits >> 63) ? bits ^ 0x7FFFFFFFFFFFFFFF : bits
 *                          (sign-extended; -0.0 below +0.0), which orders as
 *                          the doubles do; a NaN is unrep (arg 0) or 0
 *                          (arg PS_DORD_COUNT: COUNT, which reads no value).
 *     CASE and NULL work on doubles as on integers (a CASE picks a value
 *     whole). The core lowers a double program only as a whole aggregate
 *     value ending in DUNITS (SUM, AVG) or DORD (MIN, MAX, COUNT).
 *     The final value: overflow fails the run with PS_ERR_OVERFLOW; unrep
 *     (where no overflow) with PS_ERR_NOT_REPRESENTABLE, naming the
 *     smallest such row and the first aggregate unrep on it; null is
 *     skipped; otherwise (COUNT_STAR excepted, which has no program):
 *       count += 1; sum (192-bit two's complement, three words) += v;
 *       min = min(min, v); max = max(max, v) (signed 128-bit order).
 *     A count of 0 leaves sum, min and max at their initial values
 *     (sum 0, min PS_QACC_MIN_INIT, max PS_QACC_MAX_INIT).
 * Unselected rows are not read at all. The result does not depend on the
 * order rows are accumulated in (the 192-bit sum cannot overflow for fewer
 * than 2^64 rows of 128-bit values), so every backend may split the work as it
 * likes and still return the same bits.
 */
#ifndef PS_QUERY_PROGRAM_H
#define PS_QUERY_PROGRAM_H

#ifndef PS_PROGRAM_H /* concatenated in front on OpenCL, where nothing can be included */
#include "ps_program.h"
#endif

#define PS_QMAX_INSNS 128 /* value instructions of all aggregates together */
#define PS_QMAX_STACK 8   /* value stack depth */
#define PS_QMAX_AGGS 16   /* aggregates (packscan.h PS_QUERY_MAX_AGGS) */
#define PS_QMAX_PREDS 8   /* CASE predicates */
#define PS_QMAX_KEYS 2    /* GROUP BY columns */

/* Key functions (GROUP BY date_trunc, extract): the ordinal of a valid row's
 * value v = M + code (int64; signed slots only), with floor division (fdiv)
 * and modulo (fmod, in 0..d-1), days = fdiv(v, unit) and (y, m, d) the
 * proleptic Gregorian date of days since 1970-01-01:
 *   PS_QKEY_FLOOR:    fdiv(v - arg, unit)        (date_trunc to a fixed length: arg is the
 *                                                 origin, 0 <= arg < unit)
 *   PS_QKEY_MONTHS:   y * 12 + m - 1             (date_trunc month)
 *   PS_QKEY_QUARTERS: y * 4 + (m - 1) / 3        (date_trunc quarter)
 *   PS_QKEY_YEAR:     y                          (date_trunc year, extract year)
 *   PS_QKEY_MONTH:    m (1..12);  PS_QKEY_QUARTER: (m - 1) / 3 + 1;  PS_QKEY_DAY: d
 *   PS_QKEY_DOW:      fmod(days + 4, 7) (0 = Sunday);  PS_QKEY_DOY: 1..366
 *   PS_QKEY_MOD:      fdiv(fmod(v, arg), unit)   (hour, minute, second of a timestamp)
 * The group index is the ordinal - base, clamped to 0 .. values - 1: the host
 * computes base and values from the column's reference and its largest code
 * (from its zone maps where it has them), so only zone maps that understate
 * a block's codes could put a row outside, and the clamp keeps that from
 * writing outside the accumulators. |days| < 2^40 (checked on the host), so
 * the civil arithmetic cannot overflow. */
#define PS_QKEY_CODE 0u
#define PS_QKEY_FLOOR 1u
#define PS_QKEY_MONTHS 2u
#define PS_QKEY_QUARTERS 3u
#define PS_QKEY_YEAR 4u
#define PS_QKEY_MONTH 5u
#define PS_QKEY_QUARTER 6u
#define PS_QKEY_DAY 7u
#define PS_QKEY_DOW 8u
#define PS_QKEY_DOY 9u
#define PS_QKEY_MOD 10u

typedef struct ps_qkeyfn {
  ps_u32 op;     /* PS_QKEY_* */
  ps_u32 values; /* group indexes of valid rows: 0 .. values - 1 */
  ps_i64 unit;   /* FLOOR, MOD: the length; civil ops: units per day */
  ps_i64 arg;    /* FLOOR: origin; MOD: modulus */
  ps_i64 base;   /* the ordinal of group index 0 */
} ps_qkeyfn;     /* 32 bytes */

#define PS_VOP_COL 1u
#define PS_VOP_CONST 2u
#define PS_VOP_NULL 3u
#define PS_VOP_SCALE 4u
#define PS_VOP_ADD 5u
#define PS_VOP_SUB 6u
#define PS_VOP_MUL 7u
#define PS_VOP_CASE 8u
#define PS_VOP_FCOL 9u
/* Double arithmetic on lossless float columns (see SEMANTICS): a value
 * program of these ops keeps an IEEE double's bit pattern in lo (hi 0). */
#define PS_VOP_DCOL 10u   /* a lossless float column's value (lo, hi: as FCOL's, its unit unused) */
#define PS_VOP_DNUM 11u   /* any other column's value as a double; lo: the bits of its divisor */
#define PS_VOP_DCONST 12u /* lo: a double's bits */
#define PS_VOP_DADD 13u
#define PS_VOP_DSUB 14u
#define PS_VOP_DMUL 15u
#define PS_VOP_DUNITS 16u /* the top double in units of 2^L; arg: L + 2048 */
#define PS_VOP_DORD 17u   /* the top double's ordered bits; arg PS_DORD_COUNT: a NaN is 0 */
#define PS_DORD_COUNT 1u

/* PS_VOP_FCOL's lo: the mapping (PS_VF_ALP, PS_VF_BITS: packscan.h's
 * PS_FLOAT_MAP_*), float32, ALP's exponents e and f and rank bits, and the
 * unit's exponent L (-2048 .. 2047, stored plus 2048). */
#define PS_VF_ALP 1u
#define PS_VF_BITS 2u
#define PS_VF_MAP(lo) ((ps_u32)(lo)&3u)
#define PS_VF_F32(lo) (((ps_u32)(lo) >> 2) & 1u)
#define PS_VF_E(lo) (((ps_u32)(lo) >> 8) & 31u)
#define PS_VF_F(lo) (((ps_u32)(lo) >> 16) & 31u)
#define PS_VF_RANK(lo) (((ps_u32)(lo) >> 24) & 63u)
#define PS_VF_UNIT(lo) ((ps_i64)(((lo) >> 32) & 0xFFFu) - 2048)
#define PS_VF_MAKE(map, f32, e, f, rank, unit)                                                            \
  ((ps_u64)(map) | ((ps_u64)(f32) << 2) | ((ps_u64)(e) << 8) | ((ps_u64)(f) << 16) | ((ps_u64)(rank) << 24) | \
   ((ps_u64)((unit) + 2048) << 32))

/* The value aux words (ps_query_args.value_aux; present where an FCOL reads
 * an ALP column): for each slot s, words 2s and 2s + 1 the word offset and
 * the entries of its exception table, each entry two words (code, the
 * value's double bits), ascending by code; the tables follow the
 * PS_VAUX_HEAD words. */
#define PS_VAUX_HEAD (2u * PS_MAX_COLS)

/* The NOT_REPRESENTABLE status words of a run: the smallest chunk row on
 * which aggregate a's value is unrep goes to status word PS_Q_STATUS_UNREP +
 * a (0xFFFFFFFF: none), after the corrupt-code and overflow words. */
#define PS_Q_STATUS_UNREP 2u
#define PS_Q_STATUS_WORDS (PS_Q_STATUS_UNREP + PS_QMAX_AGGS)

typedef struct ps_vinsn {
  ps_u32 op;  /* PS_VOP_* */
  ps_u32 arg; /* COL, FCOL: slot; SCALE: power of ten; CASE: predicate index */
  ps_u64 lo;  /* CONST: low 64 bits; FCOL: PS_VF_MAKE */
  ps_u64 hi;  /* CONST: high 64 bits; FCOL: the mapping's reference */
} ps_vinsn;   /* 24 bytes */

typedef struct ps_vagg {
  ps_u32 first; /* first instruction */
  ps_u32 count; /* instructions; 0 = COUNT(*) (counts rows, reads nothing) */
} ps_vagg;      /* 8 bytes */

typedef struct ps_vprog {
  ps_u32 n_cols;  /* column slots used (values and keys) */
  ps_u32 n_insns;
  ps_u32 n_aggs;
  ps_u32 n_accs;  /* accumulators per group: 1 + n_aggs */
  ps_u32 n_keys;  /* 0..PS_QMAX_KEYS */
  ps_u32 n_preds; /* CASE predicate bitmaps */
  ps_u32 n_groups;   /* dense: product of the key domains (1 without keys); hashed: the keys found */
  ps_u32 read_slots; /* bit s: a value or a key reads slot s */
  ps_u32 key_slot[PS_QMAX_KEYS];
  ps_u32 group_pass; /* hashed plans: 1 = the keys pass (PS_QMODE_KEYS), 0 = accumulate */
  /* bit a: aggregate a's count is its group's row count (COUNT(*), or a
   * value that is never NULL: ps_q_agg_never_null), which the host writes
   * into it after the run (core/query.c), so a kernel may leave it */
  ps_u32 derived_counts;
  ps_u64 key_domain[PS_QMAX_KEYS]; /* codes (+1 for NULL where the slot has validity) */
  ps_u64 key_stride[PS_QMAX_KEYS];
  ps_u64 group_slots;            /* 0: a dense plan; else the group table's slots (a power of two) */
  ps_prog_col cols[PS_MAX_COLS]; /* byte counts relative to the chunk start */
  ps_vagg aggs[PS_QMAX_AGGS];
  ps_vinsn insns[PS_QMAX_INSNS];
  ps_qkeyfn key_fn[PS_QMAX_KEYS]; /* the keys' functions (PS_QKEY_CODE: none) */
} ps_vprog;

/* One accumulator: 64 bytes. min/max are 128-bit two's complement. */
typedef struct ps_qacc {
  ps_u64 count;
  ps_u64 sum0, sum1, sum2; /* 192-bit sum, sum0 least significant */
  ps_u64 min_lo, min_hi;
  ps_u64 max_lo, max_hi;
} ps_qacc;

/* The fields of an aggregate's accumulator that the host reads (4 bits per
 * aggregate in a 64-bit word, aggregate a at bits 4a..4a+3): COUNT reads
 * count, SUM and AVG count and sum, MIN count and min, MAX count and max.
 * A backend may leave the others at their initial values. */
#define PS_QF_COUNT 1u
#define PS_QF_SUM 2u
#define PS_QF_MIN 4u
#define PS_QF_MAX 8u
#define PS_QF_ALL 15u

/* Where pass 1 keeps its accumulators (kernels_shared/ps_query_kernels.h describes
 * them; core/query_policy.c chooses one per chunk). */
#define PS_QMODE_PRIVATE 0u
#define PS_QMODE_LOCAL 1u
#define PS_QMODE_ITEMS 2u
#define PS_QMODE_REGS 3u /* specialized builds only: see ps_q_partials_regs */
#define PS_QMODE_KEYS 4u /* a hashed plan's keys pass: see ps_q_partials_keys */
#define PS_QMODE_GLOBAL 5u /* a hashed plan of many groups: see ps_q_partials_global */

/* An empty slot of the group table (no key reaches it: the host keeps the
 * product of the key domains below 2^64 - 1). */
#define PS_Q_NO_KEY 0xFFFFFFFFFFFFFFFFull

/* PS_QMODE_REGS: 64-bit words of accumulators a work-item keeps in
 * registers, at most. */
#define PS_Q_REG_WORDS 64u

/* Accumulators in a work-group's local memory (16 KB): the tree reduction's
 * slots (one per work-item: work-groups hold at most this many work-items)
 * and PS_QMODE_LOCAL's table (groups x accumulators at most this many). */
#define PS_Q_LOCAL_ACCS 256u

/* PS_QMODE_REGS: the work-group's table within this many of those
 * accumulators; the rest holds the lanes form's per-word state (two 32-bit
 * words per work-item, ps_q_partials_lanes). */
#define PS_Q_REGS_TABLE_ACCS (PS_Q_LOCAL_ACCS - PS_Q_LOCAL_ACCS / 8u)

/* Initial min (the largest 128-bit value) and max (the smallest). */
#define PS_QACC_MIN_INIT_LO 0xFFFFFFFFFFFFFFFFull
#define PS_QACC_MIN_INIT_HI 0x7FFFFFFFFFFFFFFFull
#define PS_QACC_MAX_INIT_LO 0ull
#define PS_QACC_MAX_INIT_HI 0x8000000000000000ull

#endif /* PS_QUERY_PROGRAM_H */
