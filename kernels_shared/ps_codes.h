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
 *   ps_col_valid_at   whether row r of a column is valid
 *   ps_code_in_words  the same from words known to lie inside the stream
 *                     (4-byte aligned, unchecked loads)
 *   ps_code_of_word   code j of a 32-row word from the w stream words
 *                     that hold it (FOR's words, or DELTA's delta words)
 *   ps_code_corrupt   whether a valid row's code is corrupt data
 *
 * and, for every encoding of kernels_shared/ps_layout.h (the only place
 * that knows how an encoding stores its codes):
 *
 *   ps_col_code_at    the code of row r of a column slot (ps_prog_col), in
 *                     its encoding: what per-row readers call
 *   ps_word_load_enc  the word reader of the per-word evaluator
 *                     (ps_where.h): the 32-row word g of a column into a
 *                     private array of PS_WORD_X words (registers once the
 *                     encoding and width are constants) ...
 *   ps_word_code      ... and code j (0..31) of that word
 *   ps_word_width     the width ps_word_code reads codes at
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
#ifndef PS_LAYOUT_H
#include "ps_layout.h"
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
  return v & ps_width_mask(w);
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
  return v & ps_width_mask(w);
#endif
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

/* ---- the FOR word --------------------------------------------------------------
 * Bit-packed FOR: the 32 rows of word g are the stream words [g*w, g*w + w);
 * ps_word_load_enc puts them in x[0..w) and 0 in x[w] and x[w + 1] (a code
 * never takes bits from them; they keep the constant indexes of an unrolled
 * reader in range). With w a compile-time constant (a specialized kernel)
 * and j an unrolled index, x lives in registers and every code is a
 * constant shift. */
#define PS_WORD_MAX 66u /* entries of x: 64 words and the two zeros */

/* d, size, aligned: the column's stream from the chunk start (readable
 * bytes; whether d is 4-byte aligned). Words wholly inside an aligned
 * stream are loaded unchecked, the others bounded (ps_stream_word).
 *
 * PS_W_WHOLE, defined by a kernel's specialization text: the host launches
 * that kernel only over words that are whole in every FOR stream and
 * validity bitmap (ps_layout.h's ps_for_whole_words, with 4-byte aligned
 * streams: core/query_spec.c's ps_where_whole_words), so the test is
 * constant and the bounded path is not compiled in. Written as the same
 * per-word choice, nvcc makes each stream word a branch region of its own
 * (about seven instructions where one load does). */
PS_HFN void ps_word_load_for(ps_u32 w, PS_GLOBAL const ps_u8 *d, ps_u64 size, ps_u32 aligned, ps_u64 g, ps_u32 *x) {
  const ps_u64 first = g * w;
#if defined(PS_W_WHOLE)
  const int inside = 1;
  (void)size;
  (void)aligned;
#else
  const int inside = aligned && (first + w) * 4 <= size;
#endif
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

/* Code j of a word whose w stream words are x[0..w) (x needs w + 2
 * entries; the last two may hold anything). */
PS_HFN ps_u64 ps_code_of_word(const ps_u32 *x, ps_u32 w, ps_u32 j) {
  const ps_u32 bit = j * w, k = bit >> 5, sh = bit & 31u;
  return ps_code_join(w, sh, x[k], sh + w > 32 ? x[k + 1] : 0u, sh + w > 64 ? x[k + 2] : 0u);
}

/* ---- every encoding (kernels_shared/ps_layout.h) ---------------------------- */

/* A 64-bit field of a DELTA header from its two words (low first). */
PS_HFN ps_u64 ps_delta_field(PS_GLOBAL const ps_u8 *d, ps_u64 size, ps_u32 aligned, ps_u64 k) {
  return (ps_u64)ps_stream_word(d, size, k, aligned) | ((ps_u64)ps_stream_word(d, size, k + 1, aligned) << 32);
}

/* Where the block of DELTA row r is: its header's fields, and its payload
 * as a stream (start, readable bytes, alignment). A payload offset past the
 * buffer leaves an empty stream (reads 0): a validated column never has
 * one, and nothing is read outside the buffer either way. */
typedef struct ps_delta_block {
  ps_u64 base, step;
  PS_GLOBAL const ps_u8 *p;
  ps_u64 psize;
  ps_u32 aligned, aw, dw;
} ps_delta_block;

PS_HFN ps_delta_block ps_delta_block_of(PS_GLOBAL const ps_u8 *d, ps_u64 size, ps_u32 aligned, ps_u64 r) {
  ps_delta_block k;
  const ps_u64 h = (r / PS_DELTA_BLOCK_ROWS) * PS_DELTA_HEADER_WORDS;
  k.base = ps_delta_field(d, size, aligned, h);
  k.step = ps_delta_field(d, size, aligned, h + 2);
  const ps_u64 off = ps_delta_field(d, size, aligned, h + 4);
  const ps_u32 widths = ps_stream_word(d, size, h + 6, aligned);
  k.aw = widths & 0xFFu;
  k.dw = (widths >> 8) & 0xFFu;
  if (k.aw > 64) k.aw = 64;
  if (k.dw > 64) k.dw = 64;
  const ps_u64 start = h * 4 <= size && off <= size - h * 4 ? h * 4 + off : size;
  k.p = d + start;
  k.psize = size - start;
  k.aligned = aligned && (start & 3u) == 0;
  return k;
}

/* The code of DELTA row r: base + anchor + j*step + delta_1 + ... + delta_j. */
PS_HFN ps_u64 ps_delta_code_at(PS_GLOBAL const ps_u8 *d, ps_u64 size, ps_u32 aligned, ps_u64 r) {
  const ps_delta_block k = ps_delta_block_of(d, size, aligned, r);
  const ps_u32 g = (ps_u32)(r >> 5) & (PS_DELTA_BLOCK_WORDS - 1), j = (ps_u32)r & 31u;
  ps_u64 v = k.base + ps_code_at(k.p, k.psize, k.aligned, k.aw, g) + (ps_u64)j * k.step;
  if (k.dw == 0 || j == 0) return v;
  const ps_u64 first = (ps_u64)k.aw + (ps_u64)g * k.dw; /* the row word's first delta word */
  if (k.dw > 32) {
    const ps_u64 dstart = 4 * first;
    if (dstart < k.psize)
      for (ps_u32 i = 1; i <= j; ++i) v += ps_code_at(k.p + dstart, k.psize - dstart, k.aligned, k.dw, i);
    return v;
  }
  /* Deltas 1..j are bits [dw, (j+1)*dw) of the word's dw words: read once
   * each through a bit buffer (at most 63 bits held, dw <= 32). */
  const ps_u64 mask = ps_width_mask(k.dw);
  ps_u64 buf = (ps_u64)ps_stream_word(k.p, k.psize, first, k.aligned) >> k.dw;
  ps_u32 have = 32 - k.dw, next = 1;
  for (ps_u32 i = 1; i <= j; ++i) {
    if (have < k.dw) {
      buf |= (ps_u64)ps_stream_word(k.p, k.psize, first + next++, k.aligned) << have;
      have += 32;
    }
    v += buf & mask;
    buf >>= k.dw;
    have -= k.dw;
  }
  return v;
}

/* The code of row r of a column (core/ps_program.h's ps_prog_col: its
 * encoding, width, readable bytes) whose data starts at d, whatever its
 * encoding: every per-row read of the filters and the after-filter calls
 * goes through here. aligned: d is 4-byte aligned. */
PS_HFN ps_u64 ps_col_code_at(PS_GLOBAL const ps_u8 *d, PS_CONST_MEM const ps_prog_col *col, ps_u32 aligned, ps_u64 r) {
  if (col->encoding == PS_ENC_DELTA) return ps_delta_code_at(d, col->data_bytes, aligned, r);
  return ps_code_at(d, col->data_bytes, aligned, col->width, r);
}

/* Private words a loaded 32-row word of any encoding needs: FOR w + 2
 * (ps_code_of_word), DELTA 32 codes of 64 bits. */
#define PS_WORD_X PS_WORD_MAX

/* The encoding a reader dispatches on for column slot col. A translation
 * unit that defines PS_FOR_ONLY serves columns that are all FOR (CUDA's
 * precompiled generic kernels come in two builds, chosen on the host by
 * ps_eval_args.for_only and ps_query_args.for_only): the encoding is the
 * constant PS_ENC_FOR there, and no other encoding's reader is compiled in. */
#if defined(PS_FOR_ONLY)
#define PS_ENC_OF(col) PS_ENC_FOR
#else
#define PS_ENC_OF(col) ((col)->encoding)
#endif

/* The width ps_word_code reads the codes of a loaded word at: FOR, the
 * column's; DELTA, 64 (its codes are decoded to 64 bits, and a corrupt
 * block can give codes above the column's width, which the evaluator must
 * see to report them). */
PS_HFN ps_u32 ps_word_width(ps_u32 enc, ps_u32 w) { return enc == PS_ENC_DELTA ? 64u : w; }

/* The word pair of every encoding, the only way the per-word evaluator
 * (ps_where.h) reads codes: loads 32-row word g of a column of encoding enc
 * and code width w (data d of `size` readable bytes from the chunk start,
 * 4-byte aligned or not) into x[0..PS_WORD_X): FOR, its w stream words and
 * two zero words (ps_word_load_for); DELTA, its 32 codes (code j in x[2j],
 * x[2j+1], low first: a 64-bit FOR word), decoded from the highest row down
 * so that each code overwrites only deltas already read. With enc a
 * compile-time constant (a specialized kernel) the other encodings' code is
 * not compiled in. */
/* The DELTA case of ps_word_load_enc. */
PS_HFN void ps_word_load_delta(PS_GLOBAL const ps_u8 *d, ps_u64 size, ps_u32 aligned, ps_u64 g, ps_u32 *x) {
  const ps_delta_block k = ps_delta_block_of(d, size, aligned, g * 32);
  const ps_u32 gb = (ps_u32)g & (PS_DELTA_BLOCK_WORDS - 1);
  const ps_u64 first = (ps_u64)k.aw + (ps_u64)gb * k.dw;
  for (ps_u32 i = 0; i < k.dw; ++i) x[i] = ps_stream_word(k.p, k.psize, first + i, k.aligned);
  x[k.dw] = 0u;
  x[k.dw + 1] = 0u;
  ps_u64 sum = 0;
  if (k.dw != 0)
    for (ps_u32 j = 1; j < 32; ++j) sum += ps_code_of_word(x, k.dw, j);
  ps_u64 v = k.base + ps_code_at(k.p, k.psize, k.aligned, k.aw, gb) + 31 * k.step + sum;
  for (ps_u32 j = 32; j-- > 0;) {
    const ps_u64 dj = j != 0 && k.dw != 0 ? ps_code_of_word(x, k.dw, j) : 0u;
    x[2 * j] = (ps_u32)v;
    x[2 * j + 1] = (ps_u32)(v >> 32);
    v -= k.step + dj;
  }
}

PS_HFN void ps_word_load_enc(ps_u32 enc, ps_u32 w, PS_GLOBAL const ps_u8 *d, ps_u64 size, ps_u32 aligned, ps_u64 g,
                             ps_u32 *x) {
  if (enc == PS_ENC_DELTA)
    ps_word_load_delta(d, size, aligned, g, x);
  else
    ps_word_load_for(w, d, size, aligned, g, x);
}

/* Code j (0..31) of a word ps_word_load_enc loaded with the same enc and w. */
PS_HFN ps_u64 ps_word_code(ps_u32 enc, ps_u32 w, const ps_u32 *x, ps_u32 j) {
  return ps_code_of_word(x, ps_word_width(enc, w), j);
}

#endif /* PS_CODES_H */
