/*
 * Column layouts: where the codes of a column lie in its one data buffer,
 * written once for the host (core, tools) and the devices (OpenCL C, CUDA
 * C++; C11 on the host). docs/design.md defines the formats; this header is
 * their arithmetic (and that of the byte mask a filter writes, at its end).
 * Reading codes is kernels_shared/ps_codes.h's job.
 *
 * Encodings (ps_prog_col.encoding, ps_for_desc.encoding):
 *
 *   PS_ENC_FOR    code i is stream bits [i*w, i*w + w), LSB first: 32 rows
 *                 are exactly w 32-bit words, the buffer is ceil(n*w/8) bytes.
 *   PS_ENC_DELTA  delta of FOR, in blocks of PS_DELTA_BLOCK_ROWS rows: one
 *                 PS_DELTA_HEADER_BYTES header per block at the buffer's
 *                 start (block b's at byte b * PS_DELTA_HEADER_BYTES), then
 *                 the blocks' payloads in block order. A header is 8 words:
 *                   0, 1  base (uint64): the smallest anchor of the block
 *                   2, 3  step (uint64): added once per row inside a word
 *                   4, 5  payload offset (uint64): bytes from the header's
 *                         own first byte to the block's payload
 *                   6     anchor width aw (bits 0..7), delta width dw
 *                         (bits 8..15), 0 above
 *                   7     0
 *                 The payload is aw words of anchors (anchor g, g in 0..31,
 *                 the code of row word g's first row minus base, at bits
 *                 [g*aw, g*aw + aw)), then dw words per row word (delta j
 *                 of word g at bits [j*dw, j*dw + dw) of them; delta 0 is 0).
 *                 Code j of row word g of block b, mod 2^64:
 *                   base + anchor_g + j*step + delta_1 + ... + delta_j
 *                 so the 32 codes of any row word come from its block's
 *                 header, one anchor and dw words: every chunk and word is
 *                 read independently. Chunks start on block boundaries.
 *
 * The header's self-relative payload offset is what lets a chunk be handed
 * to a kernel as the buffer from its first block's header on, with no
 * backend knowing the encoding (core/evaluate.c: ps_chunk_data_offset).
 */
#ifndef PS_LAYOUT_H
#define PS_LAYOUT_H

#ifndef PS_PROGRAM_H /* concatenated in front on OpenCL, where nothing can be included */
#include "ps_program.h"
#endif

#if defined(__OPENCL_VERSION__)
#define PS_LAYOUT_FN static inline
#elif defined(__CUDACC__)
#define PS_LAYOUT_FN static __host__ __device__ __forceinline__
#else
#define PS_LAYOUT_FN static inline
#endif

#define PS_ENC_FOR 0u
#define PS_ENC_DELTA 1u

#define PS_DELTA_BLOCK_ROWS 1024u
#define PS_DELTA_BLOCK_WORDS 32u  /* row words per block */
#define PS_DELTA_HEADER_BYTES 32u /* 8 32-bit words */
#define PS_DELTA_HEADER_WORDS 8u

/* The largest code of a width, 0..64 (the low w bits). */
PS_LAYOUT_FN ps_u64 ps_width_mask(ps_u32 w) { return w >= 64 ? ~(ps_u64)0 : (((ps_u64)1 << w) - 1); }

/* ceil(n*w/8), the bytes of a FOR stream, without overflow: 0 if it does
 * not fit 64 bits or w > 64, else 1 and *out. */
PS_LAYOUT_FN int ps_for_packed_bytes(ps_u64 n, ps_u32 w, ps_u64 *out) {
  if (w > 64) return 0;
  const ps_u64 hi = n >> 3, rest = ((n & 7u) * w + 7) >> 3; /* n*w/8 = (n/8)*w + (n%8)*w/8 */
  if (w != 0 && hi > ~(ps_u64)0 / w) return 0;
  const ps_u64 whole = hi * w;
  if (whole > ~(ps_u64)0 - rest) return 0;
  *out = whole + rest;
  return 1;
}

/* Leading 32-row words of a FOR stream of `bytes` readable bytes whose w
 * stream words all lie inside it (every word for w = 0, which reads none):
 * ps_codes.h's unchecked word loads (PS_W_WHOLE) are sound on exactly
 * these. A stream of ceil(n*w/8) bytes has all of its words whole when n is
 * a multiple of 32, every word but the last otherwise. */
PS_LAYOUT_FN ps_u64 ps_for_whole_words(ps_u32 w, ps_u64 bytes) { return w ? bytes / (4 * (ps_u64)w) : ~(ps_u64)0; }

/* Blocks of a DELTA column of n rows. */
PS_LAYOUT_FN ps_u64 ps_delta_blocks(ps_u64 n) { return n / PS_DELTA_BLOCK_ROWS + (n % PS_DELTA_BLOCK_ROWS != 0); }

/* The payload bytes of a DELTA block of anchor width aw and delta width dw. */
PS_LAYOUT_FN ps_u64 ps_delta_payload_bytes(ps_u32 aw, ps_u32 dw) {
  return 4 * ((ps_u64)aw + (ps_u64)PS_DELTA_BLOCK_WORDS * dw);
}

/* Rows per chunk are a multiple of this (every chunk starts where a
 * chunk's codes can be found from its first byte on). */
PS_LAYOUT_FN ps_u64 ps_chunk_row_multiple(ps_u32 encoding) {
  return encoding == PS_ENC_DELTA ? PS_DELTA_BLOCK_ROWS : 32u;
}

/* The byte of a column's buffer where the chunk starting at row r0 starts
 * (r0 a multiple of ps_chunk_row_multiple): FOR, the stream word of row r0
 * (32 rows are exactly w words); DELTA, the header of r0's block. */
PS_LAYOUT_FN ps_u64 ps_chunk_data_offset(ps_u32 encoding, ps_u32 w, ps_u64 r0) {
  if (encoding == PS_ENC_DELTA) return (r0 / PS_DELTA_BLOCK_ROWS) * PS_DELTA_HEADER_BYTES;
  return (r0 / 32) * w * 4;
}

/* Lossless float columns mapped by their bits (core/float_map.c; the
 * descriptors' PS_FDESC_BITS and the value programs' PS_VF_BITS): code + R
 * is the order transform of the value's bit pattern, which compares as the
 * values do (a set sign bit flips every bit, a clear one is set); the
 * inverse gives the bits back. A float32 column's is the same on 32 bits. */
PS_LAYOUT_FN ps_u64 ps_ford64(ps_u64 bits) { return (bits >> 63) ? ~bits : bits | 0x8000000000000000ull; }
PS_LAYOUT_FN ps_u64 ps_ford64_inverse(ps_u64 o) { return (o >> 63) ? o ^ 0x8000000000000000ull : ~o; }
PS_LAYOUT_FN ps_u32 ps_ford32(ps_u32 bits) { return (bits >> 31) ? ~bits : bits | 0x80000000u; }
PS_LAYOUT_FN ps_u32 ps_ford32_inverse(ps_u32 o) { return (o >> 31) ? o ^ 0x80000000u : ~o; }

/* The byte mask (a filter's 0/1 byte per row): rows 4k..4k+3 of a 32-row
 * result word as four bytes of one little-endian word. The multiply puts
 * bit i of the nibble at bit 8i (1 + 2^7 + 2^14 + 2^21: no two terms meet,
 * so nothing carries); the AND keeps those bits. */
PS_LAYOUT_FN ps_u32 ps_mask_nibble_bytes(ps_u32 bits, ps_u32 k) {
  return (((bits >> (4 * k)) & 0xfu) * 0x00204081u) & 0x01010101u;
}

#endif /* PS_LAYOUT_H */
