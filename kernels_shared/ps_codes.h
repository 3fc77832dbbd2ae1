/*
 * Code access, written once for every kernel and the host (OpenCL C, CUDA
 * C++, C11; kernels_shared/ps_dialect.h names the differences).
 *
 * A column's codes are a packed stream (docs/design.md, column formats): the
 * code of row r is stream bits [r*w, r*w + w), LSB first, in little-endian
 * 32-bit words, so a code touches at most three words (w up to 64 from any
 * bit of a word) and the 32 rows of result word g are exactly words
 * [g*w, g*w + w).
 *
 *   ps_stream_word    word k of a stream of `size` readable bytes; bytes at
 *                     or past size read as 0 and are never touched
 *   ps_code_join      a code from the (up to) three words it lies in
 *   ps_code_at        the code of row r at width 0..64, bounded
 *   ps_code_in_words  the same from words known to lie inside the stream
 *                     (4-byte aligned, unchecked loads)
 *   ps_word_load      the per-encoding word reader: what 32-row word g of a
 *                     column needs, into a private array (registers once w
 *                     is a constant) ...
 *   ps_code_of_word   ... and code j of that word from it
 *   ps_code_corrupt   whether a valid row's code is corrupt data
 *
 * Only the words a code overlaps are read. The reference backend
 * (core/reference.c) keeps its own bytewise reader on purpose: it is the
 * oracle, and a bug shared with the kernels would be invisible to the
 * differential tests.
 */
#ifndef PS_CODES_H
#define PS_CODES_H

#ifndef PS_DIALECT_H /* concatenated in front on OpenCL, where nothing can be included */
#include "ps_dialect.h"
#endif

/* An aligned 32-bit load and a byte load of read-only device data. CUDA
 * devices: plain loads, or, in a translation unit that defines PS_CODES_LDG
 * before it first includes this file (the filter kernels, through
 * kernels_cuda/ps_cuda_rows.cuh), loads through the non-coherent cache.
 * __ldg is volatile inline PTX, which ptxas neither moves nor merges nor
 * folds a constant offset into: each side keeps the loads its kernels were
 * measured with (identical SASS, docs/architecture.md). Hosts: memcpy (no
 * alignment or aliasing assumption). */
#if defined(__OPENCL_VERSION__)
#define ps_code_ld32(p) (*(PS_GLOBAL const ps_u32 *)(p))
#define ps_code_ld8(p) (*(p))
#elif defined(__CUDA_ARCH__) && defined(PS_CODES_LDG)
#define ps_code_ld32(p) ((ps_u32)__ldg((const unsigned int *)(p)))
#define ps_code_ld8(p) ((ps_u8)__ldg((const unsigned char *)(p)))
#elif defined(__CUDA_ARCH__)
#define ps_code_ld32(p) (*(const ps_u32 *)(p))
#define ps_code_ld8(p) (*(p))
#else
PS_HFN ps_u32 ps_code_ld32(const ps_u8 *p) {
  ps_u32 v;
  __builtin_memcpy(&v, p, sizeof v);
  return v;
}
#define ps_code_ld8(p) (*(p))
#endif

/* aligned: the stream starts on a 4-byte boundary (a caller's wrapped
 * pointer may not); a misaligned stream, and the last, partial word of any
 * stream, are assembled from bytes. */
PS_HFN ps_u32 ps_stream_word(PS_GLOBAL const ps_u8 *d, ps_u64 size, ps_u64 k, ps_u32 aligned) {
  const ps_u64 b = k * 4;
#if !defined(PS_BIG_ENDIAN_DEVICE)
  if (aligned && b + 4 <= size) return ps_code_ld32(d + b);
#endif
  ps_u32 v = 0;
  for (ps_u32 i = 0; i < 4; ++i)
    if (b + i < size) v |= (ps_u32)ps_code_ld8(d + b + i) << (8 * i);
  return v;
}

/* The w-bit code (w <= 64) starting at bit sh (0..31) of x0, continuing into
 * x1 (read where sh + w > 32) and x2 (sh + w > 64, which implies sh >= 1,
 * so every shift is in 0..63). */
PS_HFN ps_u64 ps_code_join(ps_u32 w, ps_u32 sh, ps_u32 x0, ps_u32 x1, ps_u32 x2) {
  ps_u64 v = (ps_u64)x0;
  if (sh + w > 32) v |= (ps_u64)x1 << 32;
  v >>= sh;
  if (sh + w > 64) v |= (ps_u64)x2 << (64 - sh);
  return w >= 64 ? v : v & (((ps_u64)1 << w) - 1);
}

/* With volatile loads (PS_CODES_LDG) the words are loaded first and joined;
 * otherwise each word is read where it is needed. The same reads and the
 * same code either way: the two orders are what the two families of
 * kernels compile best from (their SASS before this reader was shared). */
PS_HFN ps_u64 ps_code_at(PS_GLOBAL const ps_u8 *d, ps_u64 size, ps_u32 aligned, ps_u32 w, ps_u64 r) {
  if (w == 0) return 0;
  const ps_u64 bit = r * w, k = bit >> 5;
  const ps_u32 sh = (ps_u32)(bit & 31u);
#if defined(PS_CODES_LDG)
  const ps_u32 x0 = ps_stream_word(d, size, k, aligned);
  const ps_u32 x1 = sh + w > 32 ? ps_stream_word(d, size, k + 1, aligned) : 0u;
  const ps_u32 x2 = sh + w > 64 ? ps_stream_word(d, size, k + 2, aligned) : 0u;
  return ps_code_join(w, sh, x0, x1, x2);
#else
  ps_u64 v = ps_stream_word(d, size, k, aligned);
  if (sh + w > 32) v |= (ps_u64)ps_stream_word(d, size, k + 1, aligned) << 32;
  v >>= sh;
  if (sh + w > 64) v |= (ps_u64)ps_stream_word(d, size, k + 2, aligned) << (64 - sh);
  return w == 64 ? v : v & (((ps_u64)1 << w) - 1);
#endif
}

PS_HFN ps_u64 ps_code_in_words(PS_GLOBAL const ps_u32 *words, ps_u32 w, ps_u64 r) {
  if (w == 0) return 0;
  const ps_u64 bit = r * w, k = bit >> 5;
  const ps_u32 sh = (ps_u32)(bit & 31u);
  return ps_code_join(w, sh, words[k], sh + w > 32 ? words[k + 1] : 0u, sh + w > 64 ? words[k + 2] : 0u);
}

/* Whether a valid row's code is corrupt (core/ps_program.h): its column has
 * no codes (PS_COLF_NO_CODES) or the code is past the column's code_limit.
 * A macro: the expression each caller had written, so the kernels compile
 * as before (as an inline function it moved instructions in three CUDA
 * kernels). */
#define ps_code_corrupt(col_flags, code, code_limit) (((col_flags) & PS_COLF_NO_CODES) || (code) > (code_limit))

/* ---- the per-encoding word reader ------------------------------------------
 * The per-word evaluator (ps_where.h) reads a column's codes only through
 * these two functions: ps_word_load brings what 32-row word g of the column
 * needs into a private array, ps_code_of_word returns code j (0..31) of it.
 * An encoding other than bit-packed FOR adds a case to both (a switch on its
 * ps_prog_col field); nothing else in the evaluator knows the layout.
 *
 * Bit-packed FOR: x[0..w) are the stream words [g*w, g*w + w) (32 rows take
 * exactly w words), x[w] and x[w + 1] are 0 (a code never takes bits from
 * them; they keep the constant indexes of an unrolled reader in range).
 * With w a compile-time constant (a specialized kernel) and j an unrolled
 * index, x lives in registers and every code is a constant shift. */
#define PS_WORD_MAX 66u /* entries of x: 64 words and the two zeros */

/* d, size, aligned: the column's stream from the chunk start (readable
 * bytes; whether d is 4-byte aligned). Words wholly inside an aligned
 * stream are loaded unchecked, the others bounded (ps_stream_word). */
PS_HFN void ps_word_load(PS_CONST_MEM const ps_prog_col *col, PS_GLOBAL const ps_u8 *d, ps_u64 size, ps_u32 aligned,
                         ps_u64 g, ps_u32 *x) {
  const ps_u32 w = col->width;
  const ps_u64 first = g * w;
  const int inside = aligned && (first + w) * 4 <= size;
  /* one loop for both cases: once unrolled, x is indexed by constants only
   * (two loops let nvcc keep the bounded one rolled, x then in local memory);
   * unrolled up to 32 words, as the evaluator's loops over rows */
  if (w <= 32) {
    PS_UNROLL
    for (ps_u32 k = 0; k < w; ++k)
      x[k] = inside ? ps_code_ld32(d + (first + k) * 4) : ps_stream_word(d, size, first + k, aligned);
  } else {
    for (ps_u32 k = 0; k < w; ++k)
      x[k] = inside ? ps_code_ld32(d + (first + k) * 4) : ps_stream_word(d, size, first + k, aligned);
  }
  x[w] = 0u;
  x[w + 1] = 0u;
}

/* Code j of the word whose words ps_word_load put in x (x needs w + 2
 * entries; the last two may hold anything). */
PS_HFN ps_u64 ps_code_of_word(const ps_u32 *x, ps_u32 w, ps_u32 j) {
  const ps_u32 bit = j * w, k = bit >> 5, sh = bit & 31u;
  return ps_code_join(w, sh, x[k], sh + w > 32 ? x[k + 1] : 0u, sh + w > 64 ? x[k + 2] : 0u);
}

#endif /* PS_CODES_H */
