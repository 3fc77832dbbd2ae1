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
 *   ps_col_code_at    the same for a column (ps_prog_col): the one reader of
 *                     a row's code that the per-row kernels call
 *   ps_col_valid_at   whether row r of a column is valid
 *   ps_code_in_words  the same from words known to lie inside the stream
 *                     (4-byte aligned, unchecked loads)
 *   ps_code_of_word   code j of a 32-row word from its w words held in a
 *                     private array (registers once w is a constant and j
 *                     an unrolled index)
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
  if (b >= size) return 0;
  const ps_u64 avail = size - b; /* no sum that could wrap */
#if !defined(PS_BIG_ENDIAN_DEVICE)
  if (aligned && avail >= 4) return ps_code_ld32(d + b);
#endif
  ps_u32 v = 0;
  for (ps_u32 i = 0; i < 4; ++i)
    if (i < avail) v |= (ps_u32)ps_code_ld8(d + b + i) << (8 * i);
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
  /* r = 2^32 h + l: bit r*w is 2^32 hw + lw, so the code starts in word
   * 2^27 hw + lw/32 at bit lw % 32, exact for every row whose byte offset
   * fits 64 bits (r * w itself wraps from r = 2^58 at 64 bits; gathers read
   * rows by a caller's ids). Where r is known to fit 32 bits (a chunk's
   * rows) h is 0 and this is the 32x32-bit product alone. */
  const ps_u64 lw = (ps_u64)(ps_u32)r * w;
  const ps_u64 k = (((r >> 32) * w) << 27) + (lw >> 5);
  const ps_u32 sh = (ps_u32)lw & 31u;
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

/* The code of row r of a column (core/ps_program.h's ps_prog_col: its
 * width, its readable bytes) whose stream starts at d: every per-row read
 * of the filters and the after-filter calls goes through here, so that a
 * column's encoding is read in one place. aligned: d is 4-byte aligned. */
PS_HFN ps_u64 ps_col_code_at(PS_GLOBAL const ps_u8 *d, PS_CONST_MEM const ps_prog_col *col, ps_u32 aligned, ps_u64 r) {
  return ps_code_at(d, col->data_bytes, aligned, col->width, r);
}

/* Whether row r of a column is valid: bit r of its validity bitmap v
 * (bounded by validity_bytes, bits past it read as 0), 1 without one. One
 * byte per row: per-row readers touch no word they do not need, and need no
 * alignment test or assembly of a last partial word. */
PS_HFN ps_bool ps_col_valid_at(PS_GLOBAL const ps_u8 *v, PS_CONST_MEM const ps_prog_col *col, ps_u64 r) {
  if (!(col->flags & PS_COLF_VALIDITY)) return 1;
  const ps_u64 at = r >> 3;
  return at < col->validity_bytes && ((ps_code_ld8(v + at) >> (r & 7)) & 1u);
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
#define ps_code_corrupt(col_flags, code, code_limit) (((col_flags)&PS_COLF_NO_CODES) || (code) > (code_limit))

/* x[0..w) are the 32-row word's stream words; x needs w + 2 entries (the
 * last two may hold anything: a code never takes bits from them). */
PS_HFN ps_u64 ps_code_of_word(const ps_u32 *x, ps_u32 w, ps_u32 j) {
  const ps_u32 bit = j * w, k = bit >> 5, sh = bit & 31u;
  return ps_code_join(w, sh, x[k], sh + w > 32 ? x[k + 1] : 0u, sh + w > 64 ? x[k + 2] : 0u);
}

#endif /* PS_CODES_H */
