/*
 * The math of what comes after the filter (core/backend.h: reduce, gather),
 * written once for OpenCL's select.cl, CUDA's select.cu (through
 * kernels_cuda/ps_cuda_select.cuh) and the host tests. OpenCL C, CUDA C++,
 * C11. Codes and validity are read through ps_codes.h (ps_col_code_at,
 * ps_col_valid_at, ps_stream_word), at 64-bit row ids; the reductions and
 * launch structure (CUB, work-group trees, the loops over tiles) stay in
 * the dialect folders.
 *
 *   ps_sel_row_mask       the rows of word g below a chunk's row count
 *   ps_sel_reduce_rows    the rows of word g that a reduction counts
 *   ps_sel_partial        count, min, max, 128-bit sum and least corrupt row
 *                         of codes, with its identity and its combination
 *   ps_sel_partial_code   one counted row's code into a partial
 *   ps_sel_tile_code      a lane's code in a staged tile of row words, for
 *                         the GPU reductions by tiles (with ps_sel_funnel,
 *                         ps_sel_width_mask, ps_sel_tile_limit)
 *   ps_sel_gather_bits    the bits a gather stores for a valid row's code
 *   ps_sel_gather_row     what a gather makes of one id
 */
#ifndef PS_SELECT_H
#define PS_SELECT_H

/* concatenated in front on OpenCL, where nothing can be included */
#ifndef PS_CODES_H
#include "ps_codes.h"
#endif
#ifndef PS_CMPCOL_H
#include "ps_cmpcol.h"
#endif

#define PS_SEL_NONE (~(ps_u64)0)

/* The type of a pointer to 10^scale: OpenCL devices without doubles have
 * none (and the host gives them no float output). */
#if defined(__OPENCL_VERSION__) && !defined(PS_HAVE_FP64)
#define PS_SEL_POW10 PS_CONST_MEM const ps_u8 *
#else
#define PS_SEL_POW10 PS_CONST_MEM const double *
#endif

/* Bits of rows [32g, 32g+32) that lie below `rows`. */
PS_HFN ps_u32 ps_sel_row_mask(ps_u64 rows, ps_u64 g) {
  if (g >= rows / 32 + 1) return 0;
  if (g < rows / 32) return 0xffffffffu;
  const ps_u32 tail = (ps_u32)(rows % 32);
  return tail ? (1u << tail) - 1u : 0u;
}

/* The rows of word g of a chunk of `rows` rows that a reduction counts:
 * below rows, in the selection (sel: ceil(rows/8) bytes, NULL = every row)
 * and valid (the column's validity bitmap v where col has one). Whole words
 * of the bitmaps: a reduction reads all 32 rows of a word. */
PS_HFN ps_u32 ps_sel_reduce_rows(ps_u64 rows, ps_u64 g, PS_GLOBAL const ps_u8 *sel, ps_u32 sel_aligned,
                                 PS_GLOBAL const ps_u8 *v, ps_u32 v_aligned, PS_CONST_MEM const ps_prog_col *col) {
  ps_u32 m = ps_sel_row_mask(rows, g);
  if (sel) m &= ps_stream_word(sel, (rows + 7) / 8, g, sel_aligned);
  if (col->flags & PS_COLF_VALIDITY) m &= ps_stream_word(v, col->validity_bytes, g, v_aligned);
  return m;
}

/* A partial reduction: count, min, max, the exact 128-bit sum (hi:lo) of the
 * codes, and the least row holding a corrupt code (PS_SEL_NONE: none). The
 * empty partial is the identity of ps_sel_partial_add and is exactly what
 * the reference returns for an empty selection. */
typedef struct ps_sel_partial {
  ps_u64 count, min, max, sum_lo, sum_hi, bad_row;
} ps_sel_partial;

PS_HFN ps_sel_partial ps_sel_partial_empty(void) {
  ps_sel_partial p;
  p.count = 0, p.min = PS_SEL_NONE, p.max = 0, p.sum_lo = 0, p.sum_hi = 0, p.bad_row = PS_SEL_NONE;
  return p;
}

PS_HFN ps_sel_partial ps_sel_partial_add(ps_sel_partial a, ps_sel_partial b) {
  ps_sel_partial r;
  r.count = a.count + b.count;
  r.min = a.min < b.min ? a.min : b.min;
  r.max = a.max > b.max ? a.max : b.max;
  r.sum_lo = a.sum_lo + b.sum_lo;
  r.sum_hi = a.sum_hi + b.sum_hi + (r.sum_lo < a.sum_lo ? 1u : 0u); /* carry */
  r.bad_row = a.bad_row < b.bad_row ? a.bad_row : b.bad_row;
  return r;
}

/* Adds one counted row's code, or records the row as corrupt
 * (core/ps_program.h's rule). */
PS_HFN void ps_sel_partial_code(ps_sel_partial *p, PS_CONST_MEM const ps_prog_col *col, ps_u64 row, ps_u64 code) {
  if (ps_code_corrupt(col->flags, code, col->code_limit)) {
    if (row < p->bad_row) p->bad_row = row;
    return;
  }
  p->count++;
  if (code < p->min) p->min = code;
  if (code > p->max) p->max = code;
  p->sum_lo += code;
  p->sum_hi += p->sum_lo < code ? 1u : 0u;
}

/* ---- reduce by tiles (FOR, widths 1..32) ---------------------------------------
 * The GPU reductions of both dialects stage a tile of 32-row words of the
 * packed stream in local (shared) memory with coalesced loads; then lane l
 * (of 32) takes row l of each of 32 consecutive words. Its code starts at the
 * same bit, (l*w) % 32, of every word's w stream words, so a code is two
 * local loads and a funnel shift, and across the 32 lanes the words read lie
 * within 33 consecutive ones (no bank conflicts). Min and max are 32-bit;
 * a lane's sum of one tile's 32 codes fits 32 bits up to
 * PS_SEL_TILE_NARROW_MAX bits (32 (2^w - 1) < 2^32) and meets the 128-bit sum
 * once per tile. The loops around this (CUDA's warps, OpenCL's work-groups)
 * stay in the dialect folders. */

#define PS_SEL_TILE_NARROW_MAX 27u

/* The low 32 bits of (hi:lo) >> s, s in 0..31. */
PS_HFN ps_u32 ps_sel_funnel(ps_u32 lo, ps_u32 hi, ps_u32 s) {
#ifdef __CUDA_ARCH__
  return __funnelshift_r(lo, hi, s);
#else
  return (ps_u32)((((ps_u64)hi << 32) | lo) >> s);
#endif
}

/* The low w bits set, w in 1..32. */
PS_HFN ps_u32 ps_sel_width_mask(ps_u32 w) { return w >= 32 ? 0xffffffffu : (1u << w) - 1u; }

/* Code of row 32j + lane of 32 row words of a w-bit stream (w in 1..32)
 * staged at stage[0..32w) (stage[32w] readable: the last code's funnel
 * reads it and masks it away): word j*w + (lane*w)/32 from bit
 * (lane*w) % 32. */
PS_HFN ps_u32 ps_sel_tile_code(PS_LOCAL const ps_u32 *stage, ps_u32 w, ps_u32 j, ps_u32 lane) {
  const ps_u32 i = j * w + ((lane * w) >> 5);
  return ps_sel_funnel(stage[i], stage[i + 1], (lane * w) & 31u) & ps_sel_width_mask(w);
}

/* The largest code a tile reduction of col may count without reporting
 * corrupt data (ps_code_corrupt's limit, at most the width's own). */
PS_HFN ps_u32 ps_sel_tile_limit(PS_CONST_MEM const ps_prog_col *col) {
  const ps_u32 cmask = ps_sel_width_mask(col->width);
  return col->code_limit < (ps_u64)cmask ? (ps_u32)col->code_limit : cmask;
}

/* Gather output kinds: the numbers of core/backend.h's PS_GATHER_*. */
#define PS_SEL_GATHER_CODE32 1u
#define PS_SEL_GATHER_INT 2u
#define PS_SEL_GATHER_F64 3u
#define PS_SEL_GATHER_F32 4u

/* The bits stored (the low value_bytes bytes) for a valid row's code of
 * col; pow10 is 10^scale (read for the float outputs; OpenCL devices without
 * doubles have none, and the host refuses them there). */
PS_HFN ps_u64 ps_sel_gather_bits(PS_CONST_MEM const ps_prog_col *col, ps_u32 out_type, PS_SEL_POW10 pow10,
                                 ps_u64 code) {
  const ps_u64 v = col->reference + code; /* wraps by design */
  switch (out_type) {
    case PS_SEL_GATHER_CODE32:
      return (ps_u32)v;
#if !defined(__OPENCL_VERSION__) || defined(PS_HAVE_FP64)
#if defined(__OPENCL_VERSION__)
    case PS_SEL_GATHER_F64:
      return as_ulong(ps_code_double(col->kind, col->reference, code, pow10));
    case PS_SEL_GATHER_F32:
      return as_uint((float)ps_code_double(col->kind, col->reference, code, pow10));
#elif defined(__CUDA_ARCH__)
    case PS_SEL_GATHER_F64:
      return (ps_u64)__double_as_longlong(ps_code_double(col->kind, col->reference, code, pow10));
    case PS_SEL_GATHER_F32:
      return __float_as_uint((float)ps_code_double(col->kind, col->reference, code, pow10));
#else
    case PS_SEL_GATHER_F64: {
      const double d = ps_code_double(col->kind, col->reference, code, pow10);
      ps_u64 u;
      __builtin_memcpy(&u, &d, sizeof u);
      return u;
    }
    case PS_SEL_GATHER_F32: {
      const float f = (float)ps_code_double(col->kind, col->reference, code, pow10);
      ps_u32 u;
      __builtin_memcpy(&u, &f, sizeof u);
      return u;
    }
#endif
#endif
    default:
      return v; /* PS_SEL_GATHER_INT: the store truncates to value_bytes */
  }
}

/* What a gather makes of row id of col (data: its stream, aligned: 4-byte
 * aligned; v: its validity bitmap; rows: its row count). Returns 0 when the
 * output is fine (*valid, and for a valid row *bits), 1 for an id past the
 * column, 2 for a corrupt code. */
PS_HFN ps_u32 ps_sel_gather_row(PS_CONST_MEM const ps_prog_col *col, PS_GLOBAL const ps_u8 *data, ps_u32 aligned,
                                PS_GLOBAL const ps_u8 *v, ps_u64 rows, ps_u32 out_type, PS_SEL_POW10 pow10, ps_u64 id,
                                ps_bool *valid, ps_u64 *bits) {
  *valid = 0;
  *bits = 0;
  if (id >= rows) return 1;
  if (!ps_col_valid_at(v, col, id)) return 0;
  const ps_u64 code = ps_col_code_at(data, col, aligned, id);
  if (ps_code_corrupt(col->flags, code, col->code_limit)) return 2;
  *valid = 1;
  *bits = ps_sel_gather_bits(col, out_type, pow10, code);
  return 0;
}

#endif /* PS_SELECT_H */
