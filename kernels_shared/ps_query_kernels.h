/*
 * Queries on the device, written once for OpenCL C and CUDA (through
 * ps_dialect.h): the per-word algorithm of core/ps_query_program.h.
 *
 * Two passes, no atomics on values:
 *  1. ps_q_partials: work-item `item` owns the 32-row words item,
 *     item + items, item + 2 * items, ... of the chunk (neighbouring
 *     work-items read neighbouring bytes) and its own accumulators
 *     part[item * n_groups * n_accs ...]: it initializes them, then for each
 *     word takes the WHERE selection's 32 bits (a word with none selected
 *     reads nothing else: no value or key column bytes), and for each
 *     selected row reads every slot's code (any width 0..64, straight from
 *     the packed stream), evaluates the value programs in exact 128-bit
 *     arithmetic on pairs of 64-bit words, and accumulates (count, 192-bit
 *     sum, 128-bit min and max).
 *  2. ps_q_merge: one work-item per accumulator of the chunk merges the
 *     items' partials into acc, in item order.
 * Errors: the smallest chunk row holding a corrupt code goes to status[0],
 * the smallest whose value overflows to status[1] (atomic minimum; both start
 * at 0xFFFFFFFF); a corrupt code outranks an overflow (a row's codes are
 * checked before its values, and the other rows are still read).
 */
#ifndef PS_QUERY_KERNELS_H
#define PS_QUERY_KERNELS_H

#ifndef PS_DIALECT_H
#include "ps_dialect.h"
#endif
#ifndef PS_QUERY_PROGRAM_H
#include "ps_query_program.h"
#endif

/* Launch data of one chunk (host C, CUDA and OpenCL C read it alike). */
typedef struct ps_qlaunch {
  ps_u64 rows;           /* rows of the chunk */
  ps_u64 items;          /* work-items of pass 1 */
  ps_u64 pad_;
  ps_u64 has_where;      /* 0: every row is selected */
  ps_u64 data_offset[PS_MAX_COLS];
  ps_u64 validity_offset[PS_MAX_COLS];
  ps_u64 where_offset;
  ps_u64 pred_offset[PS_QMAX_PREDS];
} ps_qlaunch;

/* The buffers of one chunk, at their chunk starts. */
typedef struct ps_q_bufs {
  PS_GLOBAL const ps_u8 *data[PS_MAX_COLS];
  PS_GLOBAL const ps_u8 *validity[PS_MAX_COLS];
  PS_GLOBAL const ps_u8 *where;
  PS_GLOBAL const ps_u8 *preds[PS_QMAX_PREDS];
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

/* ---- accumulators ----------------------------------------------------------- */

PS_FN void ps_q_acc_init(PS_GLOBAL ps_qacc *a) {
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

PS_FN void ps_q_acc_add(PS_GLOBAL ps_qacc *a, ps_q128 v) {
  ps_u64 s0 = a->sum0, s1 = a->sum1, s2 = a->sum2;
  ps_q_sum192(&s0, &s1, &s2, v.lo, v.hi, ps_q_negative(v) ? ~(ps_u64)0 : 0);
  a->sum0 = s0;
  a->sum1 = s1;
  a->sum2 = s2;
  if (ps_q_less(v, ps_q_make(a->min_lo, a->min_hi))) a->min_lo = v.lo, a->min_hi = v.hi;
  if (ps_q_less(ps_q_make(a->max_lo, a->max_hi), v)) a->max_lo = v.lo, a->max_hi = v.hi;
  a->count += 1;
}

PS_FN void ps_q_acc_merge(ps_qacc *x, ps_qacc y) {
  ps_q_sum192(&x->sum0, &x->sum1, &x->sum2, y.sum0, y.sum1, y.sum2);
  if (ps_q_less(ps_q_make(y.min_lo, y.min_hi), ps_q_make(x->min_lo, x->min_hi))) x->min_lo = y.min_lo, x->min_hi = y.min_hi;
  if (ps_q_less(ps_q_make(x->max_lo, x->max_hi), ps_q_make(y.max_lo, y.max_hi))) x->max_lo = y.max_lo, x->max_hi = y.max_hi;
  x->count += y.count;
}

/* ---- reading the columns ------------------------------------------------------ */

/* Code of row r: stream bits [r*w, r*w + w), LSB first; bytes at or past
 * `size` read as zero (never touched). */
PS_FN ps_u64 ps_q_code(PS_GLOBAL const ps_u8 *d, ps_u64 size, ps_u32 w, ps_u64 r) {
  if (w == 0) return 0;
  ps_u64 bit = r * w, b = bit >> 3;
  ps_u32 s = (ps_u32)(bit & 7), nbytes = (s + w + 7) >> 3; /* at most 9 */
  ps_u64 lo = 0, ninth = 0;
  for (ps_u32 i = 0; i < nbytes && i < 8; ++i)
    if (b + i < size) lo |= (ps_u64)d[b + i] << (8 * i);
  if (nbytes == 9 && b + 8 < size) ninth = d[b + 8];
  ps_u64 code = lo >> s;
  if (s != 0) code |= ninth << (64 - s);
  if (w < 64) code &= ((ps_u64)1 << w) - 1;
  return code;
}

PS_FN ps_u32 ps_q_bit(PS_GLOBAL const ps_u8 *bits, ps_u64 r) { return (bits[r >> 3] >> (r & 7)) & 1u; }

/* ---- one selected row ----------------------------------------------------------- */

typedef struct ps_qval {
  ps_q128 v;
  int null_, overflow;
} ps_qval;

/* Value program g of row r (codes and valid bits already read). */
PS_FN ps_qval ps_q_value(PS_CONST_MEM const ps_vprog *p, const ps_q_bufs *B, ps_vagg g, const ps_u64 *codes,
                         ps_u32 valid, ps_u64 r) {
  ps_qval st[PS_QMAX_STACK];
  int sp = 0;
  for (ps_u32 i = g.first; i < g.first + g.count; ++i) {
    ps_u32 op = p->insns[i].op, arg = p->insns[i].arg;
    if (op == PS_VOP_COL) {
      ps_qval x;
      x.null_ = ((valid >> arg) & 1u) == 0;
      x.overflow = 0;
      ps_u64 v = p->cols[arg].reference + codes[arg];
      x.v = ps_q_make(v, p->cols[arg].kind != PS_KIND_UNSIGNED && (ps_i64)v < 0 ? ~(ps_u64)0 : 0);
      st[sp++] = x;
    } else if (op == PS_VOP_CONST || op == PS_VOP_NULL) {
      ps_qval x;
      x.v = ps_q_make(p->insns[i].lo, p->insns[i].hi);
      x.null_ = op == PS_VOP_NULL;
      x.overflow = 0;
      st[sp++] = x;
    } else if (op == PS_VOP_SCALE) {
      ps_qval x = st[sp - 1];
      for (ps_u32 k = 0; k < arg && !x.null_ && !x.overflow; ++k) x.v = ps_q_mul(x.v, ps_q_make(10, 0), &x.overflow);
      st[sp - 1] = x;
    } else if (op == PS_VOP_CASE) {
      ps_qval e = st[--sp];
      if (!ps_q_bit(B->preds[arg], r)) st[sp - 1] = e;
    } else {
      ps_qval b = st[--sp], a = st[sp - 1], x;
      x.null_ = a.null_ || b.null_;
      x.overflow = a.overflow || b.overflow;
      x.v = a.v;
      if (!x.null_ && !x.overflow) {
        if (op == PS_VOP_ADD)
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

/* Row r of the chunk, selected: into the item's accumulators `mine`. */
PS_FN void ps_q_row(PS_CONST_MEM const ps_vprog *p, const ps_q_bufs *B, ps_u64 r, PS_GLOBAL ps_qacc *mine,
                    PS_GLOBAL ps_u32 *status) {
  ps_u64 codes[PS_MAX_COLS];
  ps_u32 valid = 0;
  for (ps_u32 s = 0; s < p->n_cols; ++s) {
    codes[s] = 0;
    if ((p->cols[s].flags & PS_COLF_VALIDITY) && !ps_q_bit(B->validity[s], r)) continue;
    valid |= 1u << s;
    codes[s] = ps_q_code(B->data[s], p->cols[s].data_bytes, p->cols[s].width, r);
    if ((p->cols[s].flags & PS_COLF_NO_CODES) || codes[s] > p->cols[s].code_limit) {
      ps_atomic_min_u32(&status[0], (ps_u32)r);
      return;
    }
  }
  ps_u64 g = 0;
  for (ps_u32 k = 0; k < p->n_keys; ++k) {
    ps_u32 s = p->key_slot[k];
    g += (((valid >> s) & 1u) ? codes[s] : (ps_u64)(p->key_domain[k] - 1)) * p->key_stride[k];
  }
  PS_GLOBAL ps_qacc *ga = mine + g * p->n_accs;
  ga[0].count += 1;
  for (ps_u32 a = 0; a < p->n_aggs; ++a) {
    ps_vagg va = p->aggs[a];
    if (va.count == 0) {
      ga[1 + a].count += 1;
      continue;
    }
    ps_qval v = ps_q_value(p, B, va, codes, valid, r);
    if (v.overflow) {
      ps_atomic_min_u32(&status[1], (ps_u32)r);
      return;
    }
    if (!v.null_) ps_q_acc_add(&ga[1 + a], v.v);
  }
}

/* Pass 1 for one work-item. */
PS_FN void ps_q_partials(PS_CONST_MEM const ps_vprog *p, PS_CONST_MEM const ps_qlaunch *L, const ps_q_bufs *B,
                         ps_u64 item, PS_GLOBAL ps_qacc *part, PS_GLOBAL ps_u32 *status) {
  if (item >= L->items) return;
  const ps_u64 n_acc = (ps_u64)p->n_groups * p->n_accs;
  PS_GLOBAL ps_qacc *mine = part + item * n_acc;
  for (ps_u64 i = 0; i < n_acc; ++i) ps_q_acc_init(&mine[i]);
  const ps_u64 words = (L->rows + 31) / 32;
  for (ps_u64 w = item; w < words; w += L->items) {
    ps_u32 sel = 0xFFFFFFFFu;
    if (L->has_where) {
      sel = 0;
      for (ps_u32 i = 0; i < 4 && w * 4 + i < (L->rows + 7) / 8; ++i) sel |= (ps_u32)B->where[w * 4 + i] << (8 * i);
    }
    if (L->rows - w * 32 < 32) sel &= (1u << (ps_u32)(L->rows - w * 32)) - 1;
    while (sel != 0) { /* a word without selected rows reads nothing else */
      ps_u32 j = ps_ctz32(sel);
      sel &= sel - 1;
      ps_q_row(p, B, w * 32 + j, mine, status);
    }
  }
}

/* Pass 2: accumulator i of the chunk, merged over the items in order. */
PS_FN void ps_q_merge(ps_u64 i, ps_u64 n_acc, ps_u64 items, PS_GLOBAL const ps_qacc *part, PS_GLOBAL ps_qacc *acc) {
  if (i >= n_acc) return;
  ps_qacc x = acc[i];
  for (ps_u64 t = 0; t < items; ++t) ps_q_acc_merge(&x, part[t * n_acc + i]);
  acc[i] = x;
}

#endif /* PS_QUERY_KERNELS_H */
