/*
 * The glue of the per-row kernel (eval.cu's eval_rows_kernel) around the
 * per-row interpreter of kernels_shared/ps_rows.h: where the launch keeps its
 * columns, the input selection, and one lane's share of the result store.
 * Everything here is per row (or per lane) and __host__ __device__, so it can
 * be checked against the reference backend on a machine without a GPU; the
 * warp-wide parts (ballot, status, counting) live in eval.cu.
 */
#ifndef PS_CUDA_ROWS_CUH
#define PS_CUDA_ROWS_CUH

#include <stdint.h>
#include <string.h>

/* The filter kernels read codes through the read-only cache (PS_CODES_LDG,
 * kernels_shared/ps_codes.h), which must be chosen before ps_codes.h is
 * first included. */
#if defined(PS_CODES_H) && !defined(PS_CODES_LDG)
#error "include ps_cuda_rows.cuh before kernels_shared/ps_codes.h"
#endif
#define PS_CODES_LDG 1
#include "../kernels_shared/ps_cmpcol.h" /* relative: includers need no -I for them */
#include "../kernels_shared/ps_codes.h"
#include "ps_cuda_kernels.h"
#include "ps_program.h"

#define PS_HD __host__ __device__ __forceinline__

/* Loads read-only global data through the non-coherent cache on the device. */
PS_HD uint32_t ps_ld32(const uint8_t *p) {
#ifdef __CUDA_ARCH__
  return __ldg(reinterpret_cast<const unsigned int *>(p));
#else
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
#endif
}

PS_HD uint8_t ps_ld8(const uint8_t *p) {
#ifdef __CUDA_ARCH__
  return __ldg(reinterpret_cast<const unsigned char *>(p));
#else
  return *p;
#endif
}

/* The program's aux words (SET bits, INLIST intervals, RANK ranks), read by
 * kernels_shared/ps_cmpcol.h's ps_aux_word, ps_aux_bit and ps_in_list; an
 * index past them raises PS_CUDA_FLAG_AUX. */
PS_HD ps_aux_words ps_cuda_aux(const ps_cuda_eval_params &p) {
  ps_aux_words a;
  a.words = p.aux;
  a.count = p.prog.aux_words;
  return a;
}

/* The PS_MODE_DOUBLE value of slot c's code (kernels_shared/ps_cmpcol.h). */
PS_HD double ps_decode_double(const ps_cuda_eval_params &p, uint32_t c, uint64_t code) {
  const ps_prog_col &col = p.prog.cols[c];
  return ps_code_double(col.kind, col.reference, code, &p.pow10[c]);
}

/* The per-row interpreter: kernels_shared/ps_rows.h, over the launch's
 * columns (data[c] and validity[c] at the chunk start, data_aligned bit c). */
typedef ps_cuda_eval_params ps_rows_src;
#define PS_ROWS_PROG(s) (&(s)->prog)
#define PS_ROWS_DATA(s, c) ((s)->data[c])
#define PS_ROWS_ALIGNED(s, c) (((s)->data_aligned >> (c)) & 1u)
#define PS_ROWS_VALIDITY(s, c) ((s)->validity[c])
#define PS_ROWS_AUX(s) ps_cuda_aux(*(s))
#define PS_ROWS_POW10(s, c) (&(s)->pow10[c])
#define PS_ROWS_AUX_FAULT PS_CUDA_FLAG_AUX
#include "../kernels_shared/ps_rows.h"

/* ---- the row's result ------------------------------------------------------ */

/* Whether row (< p.rows) is selected: in the input selection (if any) and
 * TRUE under the program. Rows outside the input selection are not evaluated,
 * so they cannot report corrupt codes (as the reference). The input selection
 * may be the output bitmap itself (in-place refinement), so it is read with a
 * plain load, never through the read-only cache; each warp reads its word
 * before the ballot and writes it after. */
PS_HD bool ps_row_selected(const ps_cuda_eval_params &p, uint32_t row, uint32_t *status) {
  if (p.selection_in && !((p.selection_in[row >> 3] >> (row & 7)) & 1u)) return false;
  return ps_rows_eval(&p, row, status);
}

/* The byte mask output: one byte per row, 1 = selected. */
PS_HD void ps_store_mask(const ps_cuda_eval_params &p, uint32_t row, bool selected) {
  if (p.mask && row < p.rows) p.mask[row] = selected ? 1 : 0;
}

/* Lane `lane`'s share of writing result word g (rows [32g, 32g+32)) of a
 * bitmap of ceil(rows/8) bytes. Full words go out as one 32-bit store from
 * lane 0; the last, partial word (and every word of a misaligned bitmap)
 * bytewise from lanes 0..3, so no byte past ceil(rows/8) is written. Bits of
 * rows >= rows are already 0 in `word`. */
PS_HD void ps_store_word(const ps_cuda_eval_params &p, uint32_t g, uint32_t word, uint32_t lane) {
  if (!p.bitmap) return;
  if (g < (p.rows >> 5) && p.bitmap_aligned) {
    if (lane == 0) *reinterpret_cast<uint32_t *>(p.bitmap + (uint64_t)g * 4) = word;
    return;
  }
  const uint64_t bytes = ((uint64_t)p.rows + 7) >> 3;
  const uint64_t at = (uint64_t)g * 4 + lane;
  if (lane < 4 && at < bytes) p.bitmap[at] = (uint8_t)(word >> (8 * lane));
}

#endif /* PS_CUDA_ROWS_CUH */
