/*
 * The WHERE program (core/ps_program.h, binding semantics) on one 32-row
 * word, written once for the per-word evaluators: OpenCL's words.cl and
 * CUDA's general per-word kernel (kernels_cuda/ps_cuda_where.cuh, precompiled
 * and compiled per program shape by NVRTC) and the queries
 * (ps_query_kernels.h's ps_q_word_sel, with their short cuts and_right /
 * or_right and their first corrupt row). OpenCL C, CUDA C++, C11 (the host
 * tests).
 *
 * Every leaf (RANGE, SET, INLIST, ISNULL, CMPCOL in its three modes) gives
 * the word's (TRUE, FALSE) masks; the program's AND / OR / NOT combine them
 * on ps_kleene.h's stack. Codes are read only through ps_codes.h's word
 * reader (ps_word_load_enc, ps_word_code, at ps_word_width), so an encoding
 * is a case there: a shape's encodings are constants, and a specialized
 * kernel holds only its columns' encodings' readers.
 *
 * Two builds of the same source:
 *  - generic: the program is read from memory and interpreted (the
 *    precompiled kernels, the fallback);
 *  - specialized: the including text defines PS_W_SPEC_PROG as the name of a
 *    compile-time constant ps_program (PS_Q_SPEC_DATA, written by core:
 *    ps_where_spec_write of core/query_spec.h, or the query's
 *    ps_q_spec_where); every loop over instructions is unrolled and the
 *    program's shape is constant, so the interpreter, the stack and the
 *    word reader's shifts fold away.
 * The shape is what PS_WS(p) reads: the instruction count, each
 * instruction's op, flags and slots, each slot's width, encoding, kind, scale and
 * flags. Literals and what depends on the data (lo, hi, aux offsets,
 * references, code limits, the aux size) are always read from the program
 * in memory, and stream sizes from the buffers (ps_w_bufs): one build then
 * serves every predicate of a shape and every chunk.
 *
 * Semantics kept exactly (the reference backend, core/reference.c):
 *  - rows outside `rows` (the chunk and the input selection) are not
 *    evaluated: they read nothing that can raise a status bit;
 *  - a valid row whose code is corrupt (PS_COLF_NO_CODES, or code >
 *    code_limit) raises its slot's bit and is UNKNOWN to that leaf; its code
 *    never indexes aux words;
 *  - CMPCOL checks b's code only where a is valid and sound;
 *  - an aux index past the aux words raises PS_W_FAULT_AUX and reads 0.
 */
#ifndef PS_WHERE_H
#define PS_WHERE_H

#if !defined(__OPENCL_VERSION__) /* concatenated in front on OpenCL, where nothing can be included */
#include "ps_dialect.h"
#include "ps_codes.h"
#include "ps_cmpcol.h"
#include "ps_kleene.h"
#include "ps_range.h"
#endif

/* In the slot bits: an aux index fell past the aux words (the backends'
 * PS_FILTER_CORRUPT_AUX and PS_CUDA_FLAG_AUX). */
#define PS_W_FAULT_AUX 0x80000000u

/* PS_W_WIDE: specialized or not, the loops over a word's 32 rows are
 * unrolled only where codes are at most 32 bits wide (RANGE, a narrow SET,
 * the 32-bit CMPCOL, the corrupt-code test): above that, and for INLIST and
 * the double, rank and 64-bit compares, an unrolled body is large enough to
 * make a build slow (a PoCL build of two 64-bit columns took minutes), for
 * little gain. */
#if defined(PS_W_SPEC_PROG)
#define PS_WS(p) (&PS_W_SPEC_PROG)
#define PS_W_UNROLL _Pragma("unroll")
#else
#define PS_WS(p) (p)
#define PS_W_UNROLL
#endif

/* The chunk's buffers as the evaluator reads them: each slot's stream and
 * validity bitmap from the chunk start, their readable bytes, whether they
 * are 4-byte aligned (bit c), and the aux words. */
typedef struct ps_w_bufs {
  PS_GLOBAL const ps_u8 *data[PS_MAX_COLS];
  PS_GLOBAL const ps_u8 *validity[PS_MAX_COLS];
  ps_u64 data_bytes[PS_MAX_COLS];
  ps_u64 validity_bytes[PS_MAX_COLS];
  ps_u32 data_aligned;
  ps_u32 validity_aligned;
  ps_aux_words aux;
} ps_w_bufs;

/* What the leaves report: bit c of slots for a corrupt code of slot c (and
 * PS_W_FAULT_AUX), and the rows of the word where a corrupt code was read
 * (the queries report the first such row). */
typedef struct ps_w_status {
  ps_u32 slots;
  ps_u32 rows;
} ps_w_status;

/* Largest w-bit code. */
PS_HFN ps_u64 ps_w_code_max(ps_u32 w) { return w >= 64 ? ~(ps_u64)0 : (((ps_u64)1 << w) - 1); }

/* valid(c, r) over the rows of word g, restricted to rows. */
PS_HFN ps_u32 ps_w_valid(PS_CONST_MEM const ps_prog_col *col, const ps_w_bufs *B, ps_u32 c, ps_u64 g, ps_u32 rows) {
  if (!(col->flags & PS_COLF_VALIDITY)) return rows;
#if defined(PS_W_WHOLE) /* word g of the bitmap is inside and aligned (ps_codes.h) */
  return rows & ps_code_ld32(B->validity[c] + g * 4);
#else
  return rows & ps_stream_word(B->validity[c], B->validity_bytes[c], g, (B->validity_aligned >> c) & 1u);
#endif
}

/* Word g of slot c through the word reader. */
PS_HFN void ps_w_load(PS_CONST_MEM const ps_prog_col *col, const ps_w_bufs *B, ps_u32 c, ps_u64 g, ps_u32 *x) {
  ps_word_load_enc(PS_ENC_OF(col), col->width, B->data[c], B->data_bytes[c], (B->data_aligned >> c) & 1u, g, x);
}

/* Code j of a word ps_w_load loaded for col. */
#define ps_w_code(col, x, j) ps_word_code(PS_ENC_OF(col), (col)->width, (x), (j))

/* Records a leaf's corrupt rows of slot c. */
PS_HFN void ps_w_corrupt(ps_w_status *s, ps_u32 c, ps_u32 rows) {
  if (rows) {
    s->slots |= 1u << c;
    s->rows |= rows;
  }
}

/* Whether M + code stays inside the 64-bit key type (int64 for signed kinds,
 * uint64 else) for every code up to the code limit: then PS_MODE_INT keys
 * order as the exact values (core/column.c keeps every sound code inside its
 * logical type, so this holds for every column the core builds). */
PS_HFN int ps_w_no_wrap(PS_CONST_MEM const ps_prog_col *c) {
  if (c->flags & PS_COLF_NO_CODES) return 1; /* no code is ever sound */
  const ps_u64 cmax = ps_w_code_max(c->width), lim = c->code_limit < cmax ? c->code_limit : cmax;
  if (c->kind == PS_KIND_SIGNED) {
    const ps_i64 m = (ps_i64)c->reference;
    return m < 0 ? lim <= (ps_u64)0x7fffffffffffffffull : lim <= (ps_u64)(0x7fffffffffffffffll - m);
  }
  return lim <= ~(ps_u64)0 - c->reference;
}

/* Row j of a SET or INLIST leaf: its corrupt bit, and its lookup where the
 * row is valid and its code sound. */
PS_HFN void ps_w_lookup_row(ps_u32 op, PS_CONST_MEM const ps_insn *in, const ps_w_bufs *B, const ps_u32 *x, ps_u32 enc,
                            ps_u32 cw, ps_u32 j, int check, ps_u64 limit, ps_u32 valid, ps_u32 *hits, ps_u32 *bad,
                            ps_w_status *s) {
  const ps_u64 code = ps_word_code(enc, cw, x, j);
  const ps_u32 corrupt = check && code > limit;
  *bad |= corrupt << j;
  if (corrupt || !((valid >> j) & 1u)) return;
  const ps_bool hit = op == PS_OP_SET ? ps_aux_bit(B->aux, (ps_u64)in->aux_a + code, &s->slots, PS_W_FAULT_AUX)
                                      : ps_in_list(B->aux, in->aux_a, in->lo, code);
  *hits |= (ps_u32)hit << j;
}

/* RANGE, SET, INLIST on the valid rows of word g of slot c: bit j of the
 * result is the leaf's predicate on code j before negation (meaningful where
 * the row is valid and sound), *bad the corrupt codes (meaningful where
 * valid). */
PS_HFN ps_u32 ps_w_codes_leaf(ps_u32 op, PS_CONST_MEM const ps_insn *in, ps_u32 c, PS_CONST_MEM const ps_prog_col *col,
                              ps_u64 limit, const ps_w_bufs *B, ps_u64 g, ps_u32 valid, ps_u32 *bad, ps_w_status *s) {
  const ps_u32 enc = PS_ENC_OF(col), cw = col->width, w = ps_word_width(enc, cw); /* w: the codes' width as read */
  const ps_u64 cmax = ps_w_code_max(w);
  const int check = limit < cmax;
  ps_u32 hits = 0, b = 0;
  if (op == PS_OP_RANGE) {
    /* canonical: lo <= hi <= code_limit; the bounds clamped to the width */
    const ps_u64 lo = in->lo, top = in->hi < cmax ? in->hi : cmax;
    if (!check && lo == 0 && top == cmax) { /* every code in range, none corrupt: nothing to read */
      *bad = 0;
      return 0xffffffffu;
    }
    if (lo > top && !check) { /* no code in range, none corrupt */
      *bad = 0;
      return 0;
    }
    ps_u32 x[PS_WORD_MAX];
    ps_w_load(col, B, c, g, x);
    if (enc == PS_ENC_FOR && (w == 1 || w == 2 || w == 4 || w == 8)) {
      /* lanes of a stream word at once (ps_range.h: SWAR at 2, 4, 8 bits);
       * a code is corrupt where it is not in [0, limit] */
      hits = lo > top ? 0u : ps_range_bits(x, (int)w, lo, top - lo);
      if (check) b = ~ps_range_bits(x, (int)w, 0, limit);
    } else if (w <= 32) { /* codes, bounds and limit fit 32 bits */
      const ps_u32 lo32 = (ps_u32)lo, span32 = lo > top ? 0u : (ps_u32)(top - lo), lim32 = (ps_u32)limit;
      PS_W_UNROLL
      for (ps_u32 j = 0; j < 32; ++j) {
        const ps_u32 code = (ps_u32)ps_word_code(enc, cw, x, j);
        hits |= (ps_u32)(code - lo32 <= span32) << j;
        if (check) b |= (ps_u32)(code > lim32) << j;
      }
      if (lo > top) hits = 0;
    } else { /* rolled (PS_W_WIDE) */
      for (ps_u32 j = 0; j < 32; ++j) {
        const ps_u64 code = ps_word_code(enc, cw, x, j);
        hits |= (ps_u32)(code - lo <= top - lo) << j;
        if (check) b |= (ps_u32)(code > limit) << j;
      }
      if (lo > top) hits = 0;
    }
    *bad = b;
    return hits;
  }
  /* SET, INLIST: a lookup per valid row with a sound code (unrolled for a
   * narrow SET only: an INLIST's search is a loop of its own) */
  ps_u32 x[PS_WORD_MAX];
  ps_w_load(col, B, c, g, x);
  if (op == PS_OP_SET && w <= 32) {
    PS_W_UNROLL
    for (ps_u32 j = 0; j < 32; ++j) ps_w_lookup_row(op, in, B, x, enc, cw, j, check, limit, valid, &hits, &b, s);
  } else {
    for (ps_u32 j = 0; j < 32; ++j) ps_w_lookup_row(op, in, B, x, enc, cw, j, check, limit, valid, &hits, &b, s);
  }
  *bad = b;
  return hits;
}

/* CMPCOL in PS_MODE_INT on columns of at most 31 bits whose sound codes never
 * wrap (ps_w_no_wrap), in 32-bit arithmetic: the keys then order as the
 * exact values Ma + code_a, Mb + code_b, so a < b iff code_a - code_b <
 * Mb - Ma = d (ps_ref_diff), and the code difference is exact as an int32.
 * A d outside the differences' range decides every row at once. *lt, *eq:
 * the order masks. */
PS_HFN void ps_w_cmp32(PS_CONST_MEM const ps_prog_col *ca, PS_CONST_MEM const ps_prog_col *cb, ps_i64 d,
                       const ps_u32 *xa, const ps_u32 *xb, ps_u32 *lt, ps_u32 *eq) {
  if (d > 0x7fffffffll) { /* every code difference is below d */
    *lt = 0xffffffffu;
    *eq = 0;
    return;
  }
  if (d < -0x7fffffffll) { /* every code difference is above d */
    *lt = 0;
    *eq = 0;
    return;
  }
  const int d32 = (int)d;
  ps_u32 l = 0, e = 0;
  PS_W_UNROLL
  for (ps_u32 j = 0; j < 32; ++j) {
    const int diff = (int)((ps_u32)ps_w_code(ca, xa, j) - (ps_u32)ps_w_code(cb, xb, j));
    l |= (ps_u32)(diff < d32) << j;
    e |= (ps_u32)(diff == d32) << j;
  }
  *lt = l;
  *eq = e;
}

/* A CMPCOL leaf on word g (rows: the evaluated rows): its truth masks. */
PS_HFN void ps_w_cmpcol(PS_CONST_MEM const ps_program *p, ps_u32 i, const ps_w_bufs *B, ps_u64 g, ps_u32 rows,
                        ps_u32 *t, ps_u32 *f, ps_w_status *s) {
  PS_CONST_MEM const ps_insn *in = &p->insns[i];
  PS_CONST_MEM const ps_insn *si = &PS_WS(p)->insns[i];
  const ps_u32 a = si->col_a, bc = si->col_b;
  PS_CONST_MEM const ps_prog_col *ca = &PS_WS(p)->cols[a], *cb = &PS_WS(p)->cols[bc]; /* the shape */
  PS_CONST_MEM const ps_prog_col *ra = &p->cols[a], *rb = &p->cols[bc];               /* the data */
  const ps_u32 valid_a = ps_w_valid(ca, B, a, g, rows), valid_b = ps_w_valid(cb, B, bc, g, rows);
  const ps_u32 cmp = PS_INSN_CMP(si->flags), mode = PS_INSN_MODE(si->flags);
  const int none_a = (ca->flags & PS_COLF_NO_CODES) != 0, none_b = (cb->flags & PS_COLF_NO_CODES) != 0;
  const ps_u32 wa = ps_word_width(PS_ENC_OF(ca), ca->width), wb = ps_word_width(PS_ENC_OF(cb), cb->width);
  ps_u32 hit = 0, bad_a = none_a ? 0xffffffffu : 0u, bad_b = none_b ? 0xffffffffu : 0u;
  if (valid_a != 0 && !none_a) {
    ps_u32 xa[PS_WORD_MAX], xb[PS_WORD_MAX];
    ps_w_load(ca, B, a, g, xa);
    ps_w_load(cb, B, bc, g, xb);
    const ps_u64 la = ra->code_limit, lb = rb->code_limit;
    const int check_a = la < ps_w_code_max(wa), check_b = !none_b && lb < ps_w_code_max(wb);
    if ((check_a || check_b) && wa <= 32 && wb <= 32) {
      PS_W_UNROLL
      for (ps_u32 j = 0; j < 32; ++j) {
        if (check_a) bad_a |= (ps_u32)(ps_w_code(ca, xa, j) > la) << j;
        if (check_b) bad_b |= (ps_u32)(ps_w_code(cb, xb, j) > lb) << j;
      }
    } else if (check_a || check_b) { /* rolled (PS_W_WIDE) */
      for (ps_u32 j = 0; j < 32; ++j) {
        if (check_a) bad_a |= (ps_u32)(ps_w_code(ca, xa, j) > la) << j;
        if (check_b) bad_b |= (ps_u32)(ps_w_code(cb, xb, j) > lb) << j;
      }
    }
    if (mode == PS_MODE_INT && wa <= 31 && wb <= 31 && ps_w_no_wrap(ra) && ps_w_no_wrap(rb)) {
      ps_u32 lt, eq;
      const ps_i64 d =
          ps_ref_diff(ra->reference, ca->kind == PS_KIND_SIGNED, rb->reference, cb->kind == PS_KIND_SIGNED);
      ps_w_cmp32(ca, cb, d, xa, xb, &lt, &eq);
      switch (cmp) {
        case PS_CMP_EQ: hit = eq; break;
        case PS_CMP_NE: hit = ~eq; break;
        case PS_CMP_LT: hit = lt; break;
        case PS_CMP_LE: hit = lt | eq; break;
        case PS_CMP_GT: hit = ~(lt | eq); break;
        case PS_CMP_GE: hit = ~lt; break;
        default: hit = 0; break;
      }
    } else {
      /* row by row where both codes are usable (RANK indexes aux with them) */
      const ps_u32 known = valid_a & ~bad_a & valid_b & ~bad_b;
#if !defined(__OPENCL_VERSION__) || defined(PS_HAVE_FP64)
      const double pa = ps_pow10_of(ca->scale), pb = ps_pow10_of(cb->scale);
#endif
      for (ps_u32 j = 0; j < 32; ++j) { /* rolled: the rarer compares (PS_W_WIDE) */
        if (!((known >> j) & 1u)) continue;
        const ps_u64 x = ps_w_code(ca, xa, j), y = ps_w_code(cb, xb, j);
        int lt = 0, eq = 0, gt = 0;
        if (mode == PS_MODE_DOUBLE) {
#if !defined(__OPENCL_VERSION__) || defined(PS_HAVE_FP64)
          /* lossless float operands through their descriptors (the flags
           * are the shape's, so a specialized build keeps one decode each) */
          const double u = (si->flags & PS_INSN_FMAP_A)
                               ? ps_fdesc_double(B->aux, in->aux_a, x, &s->slots, PS_W_FAULT_AUX)
                               : ps_code_double_at(ca->kind, ra->reference, x, pa);
          const double v = (si->flags & PS_INSN_FMAP_B)
                               ? ps_fdesc_double(B->aux, in->aux_b, y, &s->slots, PS_W_FAULT_AUX)
                               : ps_code_double_at(cb->kind, rb->reference, y, pb);
          lt = u < v;
          eq = u == v;
          gt = u > v;
#endif /* else: the host refuses these programs on devices without doubles */
        } else if (mode == PS_MODE_RANK) {
          const ps_u32 rank_a = ps_aux_word(B->aux, (ps_u64)in->aux_a + x, &s->slots, PS_W_FAULT_AUX);
          const ps_u32 rank_b = ps_aux_word(B->aux, (ps_u64)in->aux_b + y, &s->slots, PS_W_FAULT_AUX);
          lt = rank_a < rank_b;
          eq = rank_a == rank_b;
          gt = rank_a > rank_b;
        } else {
          const int sg = ps_int_key_sign(ps_int_key_of(ra->reference, ca->kind == PS_KIND_SIGNED, x),
                                         ps_int_key_of(rb->reference, cb->kind == PS_KIND_SIGNED, y));
          lt = sg < 0;
          eq = sg == 0;
          gt = sg > 0;
        }
        hit |= (ps_u32)ps_cmp_outcome(cmp, lt, eq, gt) << j;
      }
    }
  }
  const ps_u32 usable_a = valid_a & ~bad_a;
  ps_w_corrupt(s, a, valid_a & bad_a);
  ps_w_corrupt(s, bc, usable_a & valid_b & bad_b); /* b is read only where a is usable */
  const ps_u32 known = usable_a & valid_b & ~bad_b;
  *t = known & hit;
  *f = known & ~hit;
}

/* Leaf i on the rows `rows` of word g: its truth masks. */
PS_HFN void ps_w_leaf(PS_CONST_MEM const ps_program *p, ps_u32 i, const ps_w_bufs *B, ps_u64 g, ps_u32 rows, ps_u32 *t,
                      ps_u32 *f, ps_w_status *s) {
  PS_CONST_MEM const ps_insn *si = &PS_WS(p)->insns[i];
  const ps_u32 op = si->op;
  if (op == PS_OP_CMPCOL) {
    ps_w_cmpcol(p, i, B, g, rows, t, f, s);
    return;
  }
  const ps_u32 c = si->col_a;
  PS_CONST_MEM const ps_prog_col *col = &PS_WS(p)->cols[c];
  const ps_u32 valid = ps_w_valid(col, B, c, g, rows);
  const ps_u32 negate = (si->flags & PS_INSN_NEGATE) ? 0xffffffffu : 0u;
  if (op == PS_OP_ISNULL) { /* reads no code; never UNKNOWN */
    const ps_u32 x = (rows & ~valid) ^ negate;
    *t = rows & x;
    *f = rows & ~x;
    return;
  }
  ps_u32 hits = 0, bad = 0;
  if (col->flags & PS_COLF_NO_CODES)
    bad = 0xffffffffu; /* every valid row is corrupt; nothing is read */
  else if (valid != 0)
    hits = ps_w_codes_leaf(op, &p->insns[i], c, col, p->cols[c].code_limit, B, g, valid, &bad, s);
  ps_w_corrupt(s, c, ps_leaf_truth(valid, bad, hits, negate, t, f));
}

/* The evaluation's state between instructions: the Kleene stack, the live
 * rows and, for the short cuts, the live rows saved at each right operand. */
typedef struct ps_w_state {
  ps_kstack k;
  ps_u32 live;
  int lp;
} ps_w_state;

typedef struct ps_w_saved {
  ps_u32 live[PS_MAX_STACK];
} ps_w_saved;

/* Instruction i of the program (see ps_where_word). */
PS_HFN void ps_w_step(PS_CONST_MEM const ps_program *p, ps_u32 i, const ps_w_bufs *B, ps_u64 g, ps_u64 and_right,
                      ps_u64 or_right, ps_w_state *e, ps_kbelow *below, ps_w_saved *saved, ps_w_status *s) {
  const ps_u32 op = PS_WS(p)->insns[i].op;
  if ((and_right >> i) & 1u) { /* the right operand of an AND starts here */
    saved->live[e->lp++] = e->live;
    e->live &= ~e->k.top_f;
  } else if ((or_right >> i) & 1u) {
    saved->live[e->lp++] = e->live;
    e->live &= ~e->k.top_t;
  }
  if (ps_kstack_apply(&e->k, below, op)) {
    if ((and_right | or_right) != 0 && op != PS_OP_NOT) e->live = saved->live[--e->lp]; /* the right operand ends */
    return;
  }
  ps_u32 t = 0, f = 0;
  if (e->live != 0) ps_w_leaf(p, i, B, g, e->live, &t, &f, s);
  ps_kstack_push(&e->k, below, t, f);
}

/* The rows of `rows` (the chunk's rows of word g in the input selection)
 * where the program is TRUE. and_right / or_right (the queries; 0 for the
 * filters): bit i set where instruction i starts the right operand of an
 * AND / OR (every AND and OR then has one): that operand is evaluated only
 * on the rows where the left one is not FALSE / not TRUE, and a leaf with no
 * row left reads nothing. The core checked the program (opcodes, slots,
 * stack discipline, depth).
 *
 * Specialized, the instructions are written out one by one (PS_W_STEPS)
 * rather than an unrolled loop: the loops inside a leaf (the word reader's,
 * over the 32 rows) then see constant widths when they are unrolled, whereas
 * under an outer loop nvcc unrolls them first, at an unknown width, and keeps
 * the word in local memory. The text also defines PS_W_N_INSNS, the count as
 * a literal, so that no step past it reaches the compiler's optimizer. */
PS_HFN ps_u32 ps_where_word(PS_CONST_MEM const ps_program *p, const ps_w_bufs *B, ps_u64 g, ps_u32 rows,
                            ps_u64 and_right, ps_u64 or_right, ps_w_status *s) {
  ps_w_state e;
  ps_kbelow below;
  ps_w_saved saved;
  ps_kstack_init(&e.k);
  e.live = rows;
  e.lp = 0;
#if defined(PS_W_SPEC_PROG)
#if defined(PS_W_N_INSNS) /* a literal: the front end emits no code for the steps past it */
#define PS_W_STEP(i) \
  if ((i) < PS_W_N_INSNS) ps_w_step(p, (i), B, g, and_right, or_right, &e, &below, &saved, s);
#else
#define PS_W_STEP(i) \
  if ((i) < PS_WS(p)->n_insns) ps_w_step(p, (i), B, g, and_right, or_right, &e, &below, &saved, s);
#endif
#define PS_W_STEPS8(i)                                                                                  \
  PS_W_STEP(i)                                                                                          \
  PS_W_STEP(i + 1) PS_W_STEP(i + 2) PS_W_STEP(i + 3) PS_W_STEP(i + 4) PS_W_STEP(i + 5) PS_W_STEP(i + 6) \
      PS_W_STEP(i + 7)
  PS_W_STEPS8(0u)
  PS_W_STEPS8(8u) PS_W_STEPS8(16u) PS_W_STEPS8(24u) PS_W_STEPS8(32u) PS_W_STEPS8(40u) PS_W_STEPS8(48u) PS_W_STEPS8(56u)
#undef PS_W_STEPS8
#undef PS_W_STEP
#else
  for (ps_u32 i = 0; i < PS_WS(p)->n_insns; ++i) ps_w_step(p, i, B, g, and_right, or_right, &e, &below, &saved, s);
#endif
      return ps_kstack_result(&e.k, rows);
}

#endif /* PS_WHERE_H */
