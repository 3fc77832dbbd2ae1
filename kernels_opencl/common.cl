/*
 * common.cl: what every kernel of the OpenCL backend shares: bounded loads
 * and stores on byte regions, value decoding, work-group sums and scans
 * (code extraction is kernels_shared/ps_codes.h).
 *
 * Plain OpenCL C 1.2. The backend builds one program from ps_program.h,
 * launch.h, kernels_shared/ (ps_dialect.h, ps_codes.h, ps_cmpcol.h,
 * ps_kleene.h, ps_range.h), this file, filter.cl and select.cl (in that
 * order) and may define:
 *   PS_HAVE_FP64          the device has cl_khr_fp64 (double compares and
 *                         float decoding; the host refuses those otherwise)
 *   PS_BIG_ENDIAN_DEVICE  words are always assembled from bytes
 *
 * Bounds: nothing past a region's readable bytes is read (the last word of a
 * stream is assembled from bytes) and nothing past an output's size is
 * written.
 */
#ifdef PS_HAVE_FP64
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#endif

typedef __global const uchar *ps_bytes;

/* ps_region (the readable bytes [offset, offset + size) of a buffer):
 * kernels_shared/ps_dialect.h. */

/* ---- memory ----------------------------------------------------------- */

/* Little-endian 32-bit word k of a region; bytes past its size read as 0.
 * cl_mem base addresses are at least 4-byte aligned, so only the offset
 * decides whether a direct load is aligned. */
static uint ps_load_word(ps_region r, ulong k) {
  return ps_stream_word(r.buf + r.offset, r.size, k, (r.offset & 3) == 0);
}

/* Stores word k of an output of `size` bytes at `offset`, only the bytes
 * below size. */
static void ps_store_word(__global uchar *buf, ulong offset, ulong size, ulong k, uint v) {
  ulong b = k * 4;
#ifndef PS_BIG_ENDIAN_DEVICE
  if (b + 4 <= size && ((offset + b) & 3) == 0) {
    *(__global uint *)(buf + offset + b) = v;
    return;
  }
#endif
  for (uint i = 0; i < 4; ++i)
    if (b + i < size) buf[offset + b + i] = (uchar)(v >> (8 * i));
}

/* The low `bytes` (1, 2, 4 or 8) bytes of v, little-endian, at byte `at`. */
static void ps_store_value(__global uchar *buf, ulong at, uint bytes, ulong v) {
#ifndef PS_BIG_ENDIAN_DEVICE
  if ((at & (bytes - 1)) == 0) {
    switch (bytes) {
      case 1: buf[at] = (uchar)v; return;
      case 2: *(__global ushort *)(buf + at) = (ushort)v; return;
      case 4: *(__global uint *)(buf + at) = (uint)v; return;
      case 8: *(__global ulong *)(buf + at) = v; return;
      default: break;
    }
  }
#endif
  for (uint i = 0; i < bytes; ++i) buf[at + i] = (uchar)(v >> (8 * i));
}

/* A little-endian integer of `bytes` (4 or 8) bytes at byte `at`. */
static ulong ps_load_value(ps_bytes buf, ulong at, uint bytes) {
#ifndef PS_BIG_ENDIAN_DEVICE
  if ((at & (bytes - 1)) == 0)
    return bytes == 8 ? *(__global const ulong *)(buf + at) : *(__global const uint *)(buf + at);
#endif
  ulong v = 0;
  for (uint i = 0; i < bytes; ++i) v |= (ulong)buf[at + i] << (8 * i);
  return v;
}

/* Writes rows [32k, 32k+32) of a byte-per-row mask (1/0), only the bytes
 * below size: four rows per word (ps_layout.h's ps_mask_nibble_bytes), as
 * two 16-byte stores where the 32 bytes are whole and 16-byte aligned (as
 * CUDA's kernels store it): eight 4-byte stores per work-item, 32 bytes
 * apart across a GPU's work-items, each touch as many memory sectors as one
 * 16-byte store, four times the store transactions for the same bytes. */
static void ps_store_mask(__global uchar *buf, ulong offset, ulong size, ulong k, uint bits) {
#ifndef PS_BIG_ENDIAN_DEVICE
  const ulong at = offset + 32 * k;
  if (32 * k + 32 <= size && (at & 15) == 0) {
    __global uint4 *o = (__global uint4 *)(buf + at);
    o[0] = (uint4)(ps_mask_nibble_bytes(bits, 0), ps_mask_nibble_bytes(bits, 1), ps_mask_nibble_bytes(bits, 2),
                   ps_mask_nibble_bytes(bits, 3));
    o[1] = (uint4)(ps_mask_nibble_bytes(bits, 4), ps_mask_nibble_bytes(bits, 5), ps_mask_nibble_bytes(bits, 6),
                   ps_mask_nibble_bytes(bits, 7));
    return;
  }
#endif
  for (uint q = 0; q < 8; ++q) ps_store_word(buf, offset, size, 8 * k + q, ps_mask_nibble_bytes(bits, q));
}

/* ---- codes and values ------------------------------------------------- */

/* Codes: kernels_shared/ps_codes.h (ps_code_at, ps_code_in_words, ps_code_of_word,
 * ps_code_corrupt). */

#ifdef PS_HAVE_FP64
/* 10^scale, exact: the PS_MODE_DOUBLE values and float gathers
 * (kernels_shared/ps_cmpcol.h's ps_code_double, whose explicit casts round
 * to nearest even on OpenCL). */
__constant double ps_pow10[19] = PS_POW10_TABLE;
#endif

/* ---- work-group collectives --------------------------------------------
 * Every work-item of the group must call these unconditionally (barriers;
 * PoCL miscompiles barriers under a branch, even a uniform one). The local
 * size is a power of two. */

/* The sum of v over the group, in every work-item. */
static uint ps_group_sum(uint v, __local uint *scratch) {
  uint lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint s = get_local_size(0) / 2; s > 0; s /= 2) {
    if (lid < s) scratch[lid] += scratch[lid + s];
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  uint total = scratch[0];
  barrier(CLK_LOCAL_MEM_FENCE); /* scratch may be reused after return */
  return total;
}

/* The sum of v over the work-items before this one. On return scratch[i]
 * holds the inclusive sum at work-item i (scratch[size - 1]: the group's
 * total) until the caller's next barrier-separated write to it: callers
 * read the total there (select.cl's ps_write_ids). */
static uint ps_group_exclusive_scan(uint v, __local uint *scratch) {
  uint lid = get_local_id(0);
  scratch[lid] = v;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint d = 1; d < get_local_size(0); d *= 2) {
    uint add = lid >= d ? scratch[lid - d] : 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    scratch[lid] += add;
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  uint inclusive = scratch[lid];
  barrier(CLK_LOCAL_MEM_FENCE);
  return inclusive - v;
}

/* Total set bits of 16 words with plain vector arithmetic (Hacker's Delight
 * 5-2): PoCL's popcount on uint16 doubled the 1-bit count kernel's time
 * (range.cl and words.cl's CPU variants count with this). */
static uint ps_popcount16(uint16 m) {
  uint16 p = m - ((m >> 1) & 0x55555555u);
  p = (p & 0x33333333u) + ((p >> 2) & 0x33333333u);
  p = (((p + (p >> 4)) & 0x0f0f0f0fu) * 0x01010101u) >> 24;
  const uint8 a = p.lo + p.hi;
  const uint4 b = a.lo + a.hi;
  const uint2 c = b.lo + b.hi;
  return c.x + c.y;
}

/* Rows [32g, 32g+32) of a chunk of `rows` rows that exist, as a mask. */
static uint ps_row_mask(ulong rows, ulong g) {
  ulong left = rows - 32 * g;
  return left >= 32 ? 0xffffffffu : (1u << left) - 1u;
}
