/*
 * range.cl: the fast path for the most common filter, one code-range leaf
 * (column <op> literal, BETWEEN, != ...) on one column, with or without a
 * validity bitmap, whose codes cannot be corrupt (the column's code limit
 * covers every w-bit code). Semantics are exactly ps_program.h's for the
 * one-instruction program RANGE(col, lo, hi, negate): a row is selected iff
 * it is valid and ((lo <= code <= hi) != negate). The host passes the range
 * as [lo, lo + span] with lo + span < 2^w (an empty range arrives as the full
 * range, negated), so no check is needed per code.
 *
 * The per-word arithmetic is kernels_shared/ps_range.h, which CUDA's range
 * kernels (kernels_cuda/range_kernel.cuh) run too; this file is the OpenCL
 * staging around it. Why a separate kernel: the interpreter of filter.cl
 * extracts each code with run-time shifts and reads with a stride of w words
 * per work-item. Here
 *   - the width is a compile-time constant (-DPS_W=<w>; one build per width),
 *     so extracting code j is a couple of constant shifts, and widths 1, 2,
 *     4 and 8 compare every lane of a word at once (SWAR);
 *   - a work-group stages its packed words through local memory with
 *     coalesced 16-byte loads, all issued before the first local store;
 *   - the local stride per result word is odd, so work-items reading their
 *     word k at once hit different banks;
 *   - at small widths a work-item produces several result words (PS_R), so
 *     that it has enough loads in flight.
 *
 * Built after ps_program.h, launch.h, kernels_shared/ (ps_range.h) and
 * common.cl (ps_load_word, ps_store_word, ps_group_sum) with
 *   -DPS_W=<0..64>        the column's bit width
 *   -DPS_RANGE_WG=<n>     the work-group size (a power of two; required)
 * Two kernels: ps_range_words (bitmap only: no barrier but the staging one)
 * and ps_range_words_count (also adds the selected rows to
 * status[PS_FILTER_STATUS_COUNT], one atomic per work-group).
 *
 * Bounds: nothing past data_bytes / validity_bytes is read (the last
 * vectors of the stream are assembled from bytes); nothing past ceil(rows/8)
 * bytes of the bitmap is written, and bits of rows >= rows are 0.
 *
 * On a CPU device the host builds the direct variant instead
 * (-DPS_RANGE_DIRECT=1 -DPS_RANGE_R=<r>, same kernels and arguments): a
 * work-item reads its r consecutive result words' stream words straight from
 * global memory (no staging, no barrier); the SWAR widths (2, 4, 8) run on
 * 16 stream words per vector, widths from 3 up other than 16 and 32 on 16
 * result words per vector (one per lane), and their validity, bitmap stores
 * and counts 16 result words at a time. GPU builds never define
 * PS_RANGE_DIRECT.
 *
 * With -DPS_RANGE_LIMIT=1 (columns whose code limit is below 2^w - 1:
 * dictionaries) the staged (GPU) kernels also raise limit_bit in
 * status[PS_FILTER_STATUS_CORRUPT] when a valid row's code is above `limit`
 * (ps_program.h's corrupt-code rule). The direct (CPU) variant has no such
 * check: CPU devices run those columns through words.cl.
 *
 * PoCL miscompiles barriers under a branch (even a uniform one): every
 * barrier here is reached unconditionally by every work-item; work-groups
 * cover one tile each (no grid-stride loop around barriers).
 */

#ifndef PS_W
#error "range.cl needs -DPS_W=<width>"
#endif
#ifndef PS_RANGE_WG
#error "range.cl needs -DPS_RANGE_WG=<work-group size>"
#endif

/* Local stride per result word: odd (see above). */
#define PS_S (PS_W == 0 ? 1 : (PS_W % 2 ? PS_W : PS_W + 1))
/* Result words per work-item. */
/* ceil(16 / W) below 16 bits: at least four 16-byte loads in flight per
 * work-item (with 8 / W, 32 bytes, the narrow widths ran well below the wide
 * ones on the H200: docs/benchmarks.md). */
#define PS_R (PS_W == 0 ? 8 : (PS_W >= 16 ? 1 : (16 + PS_W - 1) / PS_W))
/* Result words per work-group (tile). */
#define PS_TILE (PS_RANGE_WG * PS_R)
/* 16-byte vectors per tile, and per work-item. PS_TILE is a multiple of 4,
 * so a tile starts at a vector boundary of the stream. */
#define PS_VEC (PS_TILE * PS_W / 4)
#define PS_VEC_PER ((PS_VEC + PS_RANGE_WG - 1) / PS_RANGE_WG)

/* flags argument */
#define PS_RANGE_HAS_VALIDITY 1u /* AND the validity bitmap in */
#define PS_RANGE_WANT_BITMAP 2u  /* write the bitmap */
#define PS_RANGE_ALIGNED16 4u    /* data + data_offset is 16-byte aligned */

/* ---- per-word arithmetic: kernels_shared/ps_range.h --------------------
 * The word-local widths (2, 4, 8, 16: codes never straddle a word) take the
 * per-stream-word form (a truth table at 2, the transposed quad at 4, SWAR
 * at 8, two top-half compares at 16) with lo == 0 (x < c, x <= c: the
 * common case, decided once per work-item, uniform) sparing the lane
 * subtraction; the others ps_range_bits. */
#if PS_W == 2 || PS_W == 4 || PS_W == 8 || PS_W == 16
#define PS_WORD_LOCAL 1
/* The 32 result bits from w[0..PS_W) and ps_rb_word_consts' L, S. */
static uint ps_range_local(const uint *w, uint L, uint S, int lo_zero) {
#if PS_W == 4
  return ps_rb_quad4(w[0], w[1], w[2], w[3], L, S, lo_zero);
#else
  uint bits = 0;
#pragma unroll
  for (int k = 0; k < PS_W; ++k) bits |= ps_rb_word_bits(w[k], L, S, PS_W, lo_zero) << (k * (32 / PS_W));
  return bits;
#endif
}
#endif

/* Bit j set iff code j of the 32 codes in w[0..W) lies in [lo, lo + span].
 * w has W + 2 entries; the last two are 0 and never selected by the shifts
 * (they keep the constant indexes in range). */
static uint ps_range_word(const uint *w, ulong lo, ulong span) {
#ifdef PS_WORD_LOCAL
  uint L, S;
  ps_rb_word_consts(lo, span, PS_W, &L, &S);
  return lo == 0 ? ps_range_local(w, L, S, 1) : ps_range_local(w, L, S, 0);
#else
  return ps_range_bits(w, PS_W, lo, span);
#endif
}

/* ---- the kernels ----------------------------------------------------------- */

#ifdef PS_RANGE_LIMIT
/* Raises limit_bit when a valid row of result word g (codes in w) holds a
 * code above limit (limit < 2^W, so [0, limit] is a range ps_range_word
 * takes). Rare (corrupt data), so an atomic per such word is cheap. */
static void ps_range_check_limit(const uint *w, ulong g, ps_region vr, ulong rows, uint flags, ulong limit,
                                 uint limit_bit, volatile __global uint *status) {
  uint live = ps_row_mask(rows, g);
  if (flags & PS_RANGE_HAS_VALIDITY) live &= ps_load_word(vr, g);
  if (~ps_range_word(w, 0, limit) & live) atomic_or(&status[PS_FILTER_STATUS_CORRUPT], limit_bit);
}
#define PS_LIMIT_ARGS , volatile __global uint *status, ulong limit, uint limit_bit
#define PS_LIMIT_PASS , status, limit, limit_bit
#else
#define PS_LIMIT_ARGS
#define PS_LIMIT_PASS
#endif

#ifndef PS_RANGE_DIRECT

/* The result words of this work-item: stages the tile, computes, writes.
 * Returns the number of selected rows. `tile` is the work-group's staging
 * area (PS_TILE * PS_S words). Every work-item calls it (one barrier). */
static uint ps_range_tile(__global const uchar *data, ulong data_offset, ulong data_bytes,
                          __global const uchar *validity, ulong validity_offset, ulong validity_bytes,
                          __global uchar *bitmap, ulong bitmap_offset, ulong rows, ulong lo, ulong span,
                          uint negate_mask, uint flags, __local uint *tile PS_LIMIT_ARGS) {
  const uint lid = get_local_id(0);
  const ulong words = (rows + 31) / 32;
  const ulong out_bytes = (rows + 7) / 8;
  const ulong first = (ulong)get_group_id(0) * PS_TILE;
#if PS_W > 0
  {
    /* Coalesced 16-byte loads, all issued before the first local store
     * (fully unrolled), so each work-item keeps PS_VEC_PER vectors in flight. */
    const ulong base = first * PS_W; /* stream word of the tile's start */
    const ps_region region = {data, data_offset, data_bytes};
    __global const uint4 *vec = (__global const uint4 *)(data + data_offset);
    uint4 v[PS_VEC_PER];
#pragma unroll
    for (int m = 0; m < PS_VEC_PER; ++m) {
      const uint i4 = m * PS_RANGE_WG + lid;
      const ulong word = base + 4 * (ulong)i4;
      v[m] = (uint4)(0);
      if (i4 < PS_VEC) {
        if ((flags & PS_RANGE_ALIGNED16) && (word + 4) * 4 <= data_bytes)
          v[m] = vec[word / 4];
        else if (word * 4 < data_bytes)
          v[m] = (uint4)(ps_load_word(region, word), ps_load_word(region, word + 1), ps_load_word(region, word + 2),
                         ps_load_word(region, word + 3));
      }
    }
#pragma unroll
    for (int m = 0; m < PS_VEC_PER; ++m) {
      const uint i4 = m * PS_RANGE_WG + lid;
      if (i4 < PS_VEC) {
        const uint x[4] = {v[m].x, v[m].y, v[m].z, v[m].w};
#pragma unroll
        for (uint q = 0; q < 4; ++q) {
          const uint i = 4 * i4 + q;
          tile[(i / PS_W) * PS_S + (i % PS_W)] = x[q];
        }
      }
    }
  }
#endif
  barrier(CLK_LOCAL_MEM_FENCE);

  uint selected = 0;
#pragma unroll
  for (int m = 0; m < PS_R; ++m) {
    const uint local_word = m * PS_RANGE_WG + lid; /* consecutive work-items, consecutive words */
    const ulong g = first + local_word;
    if (g < words) {
      uint w[PS_W + 2];
#pragma unroll
      for (int k = 0; k < PS_W; ++k) w[k] = tile[local_word * PS_S + k];
      w[PS_W] = 0;
      w[PS_W + 1] = 0;
      uint bits = ps_range_word(w, lo, span) ^ negate_mask;
      const ps_region vr = {validity, validity_offset, validity_bytes};
#ifdef PS_RANGE_LIMIT
      ps_range_check_limit(w, g, vr, rows, flags, limit, limit_bit, status);
#endif
      if (flags & PS_RANGE_HAS_VALIDITY) bits &= ps_load_word(vr, g);
      bits &= ps_row_mask(rows, g);
      selected += popcount(bits);
      if (flags & PS_RANGE_WANT_BITMAP) ps_store_word(bitmap, bitmap_offset, out_bytes, g, bits);
    }
  }
  return selected;
}

#else /* PS_RANGE_DIRECT: the CPU variant */

#ifndef PS_RANGE_R
#error "range.cl's direct variant needs -DPS_RANGE_R=<result words per work-item>"
#endif
#ifdef PS_RANGE_LIMIT
#error "range.cl's direct variant has no code-limit check (CPU devices send such columns to words.cl)"
#endif

/* Result word g from its range bits: negation, validity, rows past the
 * end, the bitmap store. Returns the selected rows. */
static uint ps_direct_finish(uint bits, ulong g, ps_region vr, __global uchar *bitmap, ulong bitmap_offset,
                             ulong out_bytes, ulong rows, uint negate_mask, uint flags) {
  bits ^= negate_mask;
  if (flags & PS_RANGE_HAS_VALIDITY) bits &= ps_load_word(vr, g);
  bits &= ps_row_mask(rows, g);
  if (flags & PS_RANGE_WANT_BITMAP) ps_store_word(bitmap, bitmap_offset, out_bytes, g, bits);
  return popcount(bits);
}

/* ps_direct_finish for the 16 result words g .. g + 15, all below the
 * chunk's word count, with vector loads and stores where aligned and in
 * bounds. Returns the selected rows. */
static uint ps_direct_finish16(uint16 bits, ulong g, ps_region vr, __global uchar *bitmap, ulong bitmap_offset,
                               ulong out_bytes, ulong rows, uint negate_mask, uint flags) {
  bits ^= negate_mask;
  if (flags & PS_RANGE_HAS_VALIDITY) {
    if ((vr.offset & 3) == 0 && (g + 16) * 4 <= vr.size) {
      bits &= vload16(0, (__global const uint *)(vr.buf + vr.offset) + g);
    } else {
      uint v[16];
      for (int i = 0; i < 16; ++i) v[i] = ps_load_word(vr, g + i);
      bits &= vload16(0, v);
    }
  }
  if ((g + 16) * 32 > rows) { /* the chunk's last word is among them */
    uint m[16];
    for (int i = 0; i < 16; ++i) m[i] = ps_row_mask(rows, g + i);
    bits &= vload16(0, m);
  }
  if (flags & PS_RANGE_WANT_BITMAP) {
    if ((bitmap_offset & 3) == 0 && (g + 16) * 4 <= out_bytes) {
      vstore16(bits, 0, (__global uint *)(bitmap + bitmap_offset) + g);
    } else {
      uint b[16];
      vstore16(bits, 0, b);
      for (int i = 0; i < 16; ++i) ps_store_word(bitmap, bitmap_offset, out_bytes, g + i, b[i]);
    }
  }
  return ps_popcount16(bits);
}

#if (PS_W == 2 || PS_W == 4 || PS_W == 8) && PS_RANGE_R % 16 == 0
#define PS_DIRECT_VEC 1
/* ps_range_bits' SWAR on 16 consecutive stream words at once (every step is
 * lane-wise within a word, so it maps onto CPU vector registers); then the
 * words' 32 / W bits are joined into the 16 / W result words, stored in res.
 * L and S are lo and span repeated in every lane. */
static void ps_direct_vec(uint16 x, uint L, uint S, uint *res) {
  const uint h = PS_RB_HIGHS(PS_W);
  const uint16 d = PS_RB_LANE_SUB(x, L, h);                              /* code - lo */
  uint16 t = (~PS_RB_LANE_LT(S, d, h) >> (PS_W - 1)) & PS_RB_LSBS(PS_W); /* in range */
  t = PS_RB_COMPRESS_STEP(t, PS_W, 1);
  t = PS_RB_COMPRESS_STEP(t, PS_W, 2);
  t = PS_RB_COMPRESS_STEP(t, PS_W, 4);
  t = PS_RB_COMPRESS_STEP(t, PS_W, 8);
#if PS_W == 2
  vstore8(t.even | (t.odd << 16), 0, res);
#elif PS_W == 4
  vstore4(t.s048c | (t.s159d << 8) | (t.s26ae << 16) | (t.s37bf << 24), 0, res);
#else
  vstore2(t.s08 | (t.s19 << 4) | (t.s2a << 8) | (t.s3b << 12) | (t.s4c << 16) | (t.s5d << 20) | (t.s6e << 24) |
              (t.s7f << 28),
          0, res);
#endif
}
#endif

/* Not at 16 and 32 bits: there the per-word code of the general case
 * vectorizes by itself and was faster than the lanes; at the other widths
 * the lanes were faster (PoCL: docs/benchmarks.md). */
#if !defined(PS_DIRECT_VEC) && PS_W >= 3 && (PS_W % 16 != 0 || PS_W > 32) && PS_RANGE_R % 16 == 0
#define PS_DIRECT_LANES 1
/* ps_range_bits for 16 consecutive result words at once, one per vector
 * lane, so that every constant shift and compare of the 32 codes is one
 * vector operation; src points at the first word's stream words. The block
 * is transposed through private memory (word k of every result word into one
 * vector). Returns the 16 result words' range bits. */
static uint16 ps_direct_lanes(__global const uint *src, ulong lo, ulong span) {
  uint blk[PS_W + 2][16];
#pragma unroll
  for (int i = 0; i < 16; ++i) {
#pragma unroll
    for (int k = 0; k < PS_W; ++k) blk[k][i] = src[i * PS_W + k];
  }
  uint16 w[PS_W + 2];
#pragma unroll
  for (int k = 0; k < PS_W; ++k) w[k] = vload16(0, blk[k]);
  w[PS_W] = 0;
  w[PS_W + 1] = 0;
  uint16 bits = 0;
#if PS_W <= 32
  const uint lo32 = (uint)lo, span32 = (uint)span;
  const uint mask = PS_W == 32 ? 0xffffffffu : ((1u << (PS_W % 32)) - 1u);
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    const int bit = j * PS_W, k = bit >> 5, off = bit & 31;
    uint16 c = w[k] >> off;
    if (off + PS_W > 32) c |= w[k + 1] << ((32 - off) & 31);
    c &= mask;
    bits |= as_uint16((c - lo32) <= span32) & (1u << j);
  }
#else
  const ulong mask = PS_W == 64 ? ~0UL : ((1UL << (PS_W % 64)) - 1UL);
#pragma unroll
  for (int j = 0; j < 32; ++j) {
    const int bit = j * PS_W, k = bit >> 5, off = bit & 31;
    ulong16 c = (convert_ulong16(w[k]) | (convert_ulong16(w[k + 1]) << 32)) >> off;
    if (off + PS_W > 64) c |= convert_ulong16(w[k + 2]) << ((64 - off) & 63);
    c &= mask;
    bits |= convert_uint16(as_ulong16((c - lo) <= span) & (1UL << j));
  }
#endif
  return bits;
}
#endif

/* Result words [first, first + PS_RANGE_R) of this work-item, read straight
 * from global memory: on a CPU local memory is ordinary memory, so staging
 * through it only copies, and each work-item streaming its own contiguous
 * PS_W * PS_RANGE_R words suits the caches and prefetchers. Returns the
 * number of selected rows. */
static uint ps_range_direct(__global const uchar *data, ulong data_offset, ulong data_bytes,
                            __global const uchar *validity, ulong validity_offset, ulong validity_bytes,
                            __global uchar *bitmap, ulong bitmap_offset, ulong rows, ulong lo, ulong span,
                            uint negate_mask, uint flags PS_LIMIT_ARGS) {
  const ulong words = (rows + 31) / 32;
  const ulong out_bytes = (rows + 7) / 8;
  const ulong first = (ulong)get_global_id(0) * PS_RANGE_R;
  const ps_region region = {data, data_offset, data_bytes};
  const ps_region vr = {validity, validity_offset, validity_bytes};
  /* The host takes this path only with data + data_offset 4-byte aligned. */
  __global const uint *src = (__global const uint *)(data + data_offset);
  uint selected = 0;
  uint w[PS_W + 2];
  w[PS_W] = 0;
  w[PS_W + 1] = 0;
  /* Decided per work-group (uniform), so that the work-item loop of a CPU
   * compiler sees no divergent branch. */
  const ulong group_end = ((ulong)get_group_id(0) + 1) * PS_RANGE_WG * PS_RANGE_R;
  if (group_end * PS_W * 4 <= data_bytes && group_end <= words) {
    /* The work-group's blocks lie inside the stream and the chunk: plain
     * loads, no checks (every work-group but the last). */
#if defined(PS_DIRECT_VEC)
    const uint L = (uint)lo * PS_RB_LSBS(PS_W), S = (uint)span * PS_RB_LSBS(PS_W);
    for (int v = 0; v < PS_RANGE_R / 16; ++v) {
      const ulong g = first + 16 * v;
      uint res[16];
#pragma unroll
      for (int q = 0; q < PS_W; ++q) ps_direct_vec(vload16(0, src + (g * PS_W + 16 * q)), L, S, res + q * (16 / PS_W));
      selected +=
          ps_direct_finish16(vload16(0, res), g, vr, bitmap, bitmap_offset, out_bytes, rows, negate_mask, flags);
    }
#elif defined(PS_DIRECT_LANES)
    for (int v = 0; v < PS_RANGE_R / 16; ++v) {
      const ulong g = first + 16 * v;
      selected += ps_direct_finish16(ps_direct_lanes(src + g * PS_W, lo, span), g, vr, bitmap, bitmap_offset, out_bytes,
                                     rows, negate_mask, flags);
    }
#elif PS_W == 1 && PS_RANGE_R % 16 == 0
    uint has0, has1; /* 0, 1 in [lo, lo+span] */
    ps_rb_word_consts(lo, span, 1, &has0, &has1);
    for (int v = 0; v < PS_RANGE_R / 16; ++v) {
      const ulong g = first + 16 * v;
      const uint16 x = vload16(0, src + g);
      selected += ps_direct_finish16((x & has1) | (~x & has0), g, vr, bitmap, bitmap_offset, out_bytes, rows,
                                     negate_mask, flags);
    }
#else
    for (int m = 0; m < PS_RANGE_R; ++m) {
      const ulong g = first + m;
#pragma unroll
      for (int k = 0; k < PS_W; ++k) w[k] = src[g * PS_W + k];
      selected += ps_direct_finish(ps_range_word(w, lo, span), g, vr, bitmap, bitmap_offset, out_bytes, rows,
                                   negate_mask, flags);
    }
#endif
  } else {
    for (int m = 0; m < PS_RANGE_R; ++m) {
      const ulong g = first + m;
      if (g >= words) break;
#pragma unroll
      for (int k = 0; k < PS_W; ++k) w[k] = ps_load_word(region, g * PS_W + k);
      selected += ps_direct_finish(ps_range_word(w, lo, span), g, vr, bitmap, bitmap_offset, out_bytes, rows,
                                   negate_mask, flags);
    }
  }
  return selected;
}
#endif /* PS_RANGE_DIRECT */

/* data and validity are read-only and never overlap the bitmap bytes written
 * (restrict lets a GPU compiler use its read-only load path). */
#define PS_RANGE_PARAMS                                                                                               \
  __global const uchar *restrict data, ulong data_offset, ulong data_bytes, __global const uchar *restrict validity,  \
      ulong validity_offset, ulong validity_bytes, __global uchar *bitmap, ulong bitmap_offset, ulong rows, ulong lo, \
      ulong span, uint negate_mask, uint flags, volatile __global uint *status, ulong limit, uint limit_bit
#define PS_RANGE_ARGS                                                                                              \
  data, data_offset, data_bytes, validity, validity_offset, validity_bytes, bitmap, bitmap_offset, rows, lo, span, \
      negate_mask, flags

#ifndef PS_RANGE_DIRECT
__kernel __attribute__((reqd_work_group_size(PS_RANGE_WG, 1, 1))) void ps_range_words(PS_RANGE_PARAMS) {
  __local uint tile[PS_W == 0 ? 1 : PS_TILE * PS_S];
  (void)status, (void)limit, (void)limit_bit; /* used with PS_RANGE_LIMIT only */
  (void)ps_range_tile(PS_RANGE_ARGS, tile PS_LIMIT_PASS);
}

__kernel __attribute__((reqd_work_group_size(PS_RANGE_WG, 1, 1))) void ps_range_words_count(PS_RANGE_PARAMS) {
  __local uint tile[PS_W == 0 ? 1 : PS_TILE * PS_S];
  __local uint scratch[PS_RANGE_WG];
  (void)limit, (void)limit_bit;
  uint selected = ps_range_tile(PS_RANGE_ARGS, tile PS_LIMIT_PASS);
  uint total = ps_group_sum(selected, scratch);
  if (get_local_id(0) == 0 && total != 0) atomic_add(&status[PS_FILTER_STATUS_COUNT], total);
}

#else  /* PS_RANGE_DIRECT */

__kernel __attribute__((reqd_work_group_size(PS_RANGE_WG, 1, 1))) void ps_range_words(PS_RANGE_PARAMS) {
  (void)status, (void)limit, (void)limit_bit;
  (void)ps_range_direct(PS_RANGE_ARGS PS_LIMIT_PASS);
}

/* One atomic per work-item (PS_RANGE_R * 32 rows) and no barrier: faster on
 * PoCL than a group sum with one atomic per work-group. */
__kernel __attribute__((reqd_work_group_size(PS_RANGE_WG, 1, 1))) void ps_range_words_count(PS_RANGE_PARAMS) {
  (void)limit, (void)limit_bit;
  uint total = ps_range_direct(PS_RANGE_ARGS PS_LIMIT_PASS);
  if (total != 0) atomic_add(&status[PS_FILTER_STATUS_COUNT], total);
}
#endif /* PS_RANGE_DIRECT */
