/*
 * Per-element logic of what comes after the filter (core/backend.h: row_ids,
 * reduce, gather) that is CUDA's own: the row-id tiles and their copy-out,
 * the reduction by 1024-row tiles, the gather's loads and stores, around the
 * math both dialects share (kernels_shared/ps_select.h: the row mask, the
 * 128-bit partial, the gathered value; codes through ps_codes.h). Everything
 * here is __host__ __device__ so it can be checked against the reference
 * backend on a machine without a GPU; select.cu holds the kernels around it.
 */
#ifndef PS_CUDA_SELECT_CUH
#define PS_CUDA_SELECT_CUH

#include <stdint.h>
#include <string.h>

#include "ps_cuda_kernels.h"
#include "ps_cuda_rows.cuh" /* PS_HD, ps_ld8, ps_ld32, PS_CODES_LDG */
#include "ps_program.h"
#include "../kernels_shared/ps_select.h"

/* Codes, validity and stream words: kernels_shared/ps_codes.h (through the
 * read-only cache: ps_cuda_rows.cuh defines PS_CODES_LDG); the row mask,
 * the reduction's partial and rows, the gathered value:
 * kernels_shared/ps_select.h. */

/* The little-endian word at byte `at` (a multiple of 4) of `nbytes` readable
 * bytes: ps_codes.h's ps_stream_word, for the fused row ids' staging. */
PS_HD uint32_t ps_sel_load_word(const uint8_t *base, uint64_t at, uint64_t nbytes, bool aligned) {
  return ps_stream_word(base, nbytes, at / 4, aligned);
}

/* Word g of a bitmap of `rows` bits (ceil(rows/8) readable bytes), bits of
 * rows >= rows cleared: the final partial word is read bytewise. */
PS_HD uint32_t ps_sel_bitmap_word(const uint8_t *bits, uint64_t rows, uint64_t g, bool aligned) {
  return ps_stream_word(bits, (rows + 7) / 8, g, aligned) & ps_sel_row_mask(rows, g);
}

/* ---- row ids ----------------------------------------------------------------- */

/* Row ids are written in one pass (select.cu): each block takes a tile of
 * bitmap words by ticket, counts it, gets the ids of the tiles before it from
 * CUB's single-pass scan (cub::TilePrefixCallbackOp, decoupled look-back), and
 * writes its ids. A warp owns PS_SEL_IDS_ROUNDS rounds of 32 consecutive
 * words (1024 rows each); in a round lane l holds word l, extracts its set
 * bits into the warp's staging area at its exclusive prefix, and the warp
 * then copies the round's ids out contiguously (coalesced stores). Everything
 * below is the arithmetic of that, shared with the host check
 * (tests/test_cuda_row_ids.cu). */

#define PS_SEL_IDS_WARPS (PS_CUDA_SELECT_BLOCK / 32)
#define PS_SEL_IDS_ROUNDS 16u
#define PS_SEL_IDS_TILE_WORDS (PS_SEL_IDS_WARPS * PS_SEL_IDS_ROUNDS * 32u)
#define PS_SEL_IDS_TILE_ROWS (PS_SEL_IDS_TILE_WORDS * 32u)

/* Tiles of a chunk of `rows` rows (rows <= 2^31: fewer than 2^15 tiles, and
 * every row, count and offset of the chunk fits 32 bits). */
PS_HD uint32_t ps_sel_ids_tiles(uint64_t rows) {
  const uint64_t words = (rows + 31) / 32;
  return (uint32_t)((words + PS_SEL_IDS_TILE_WORDS - 1) / PS_SEL_IDS_TILE_WORDS);
}

/* Bitmap word that lane `lane` of warp `warp` holds in round `round`. */
PS_HD uint64_t ps_sel_ids_word(uint32_t tile, uint32_t warp, uint32_t round, uint32_t lane) {
  return (uint64_t)tile * PS_SEL_IDS_TILE_WORDS + (warp * PS_SEL_IDS_ROUNDS + round) * 32u + lane;
}

/* First row of a round (chunk-relative; fits 32 bits, see ps_sel_ids_tiles). */
PS_HD uint32_t ps_sel_ids_round_row(uint32_t tile, uint32_t warp, uint32_t round) {
  return tile * PS_SEL_IDS_TILE_ROWS + (warp * PS_SEL_IDS_ROUNDS + round) * 1024u;
}

/* Whether every word of the tile lies below rows/32 (no masking needed). */
PS_HD bool ps_sel_ids_full_tile(uint64_t rows, uint32_t tile) {
  return (uint64_t)(tile + 1) * PS_SEL_IDS_TILE_WORDS <= rows / 32;
}

PS_HD uint32_t ps_sel_ctz(uint32_t x) {
#ifdef __CUDA_ARCH__
  return (uint32_t)__ffs((int)x) - 1u;
#else
  return (uint32_t)__builtin_ctz(x);
#endif
}

PS_HD uint32_t ps_sel_popc(uint32_t x) {
#ifdef __CUDA_ARCH__
  return (uint32_t)__popc(x);
#else
  return (uint32_t)__builtin_popcount(x);
#endif
}

/* Lane `lane` of a round stages the rows of its word's set bits (as offsets
 * 0..1023 from the round's first row), ascending, at stage[at...]. */
PS_HD void ps_sel_ids_extract(uint32_t word, uint32_t lane, uint16_t *stage, uint32_t at) {
  const uint32_t row = lane * 32u;
  while (word) {
    stage[at++] = (uint16_t)(row + ps_sel_ctz(word));
    word &= word - 1u;
  }
}

/* ---- reduce ------------------------------------------------------------------ */

/* Rows of word g that count (ps_select.h's ps_sel_reduce_rows over the
 * launch's selection and validity). */
PS_HD uint32_t ps_sel_reduce_rows(const ps_cuda_reduce_params &p, uint64_t g) {
  return ps_sel_reduce_rows(p.rows, g, p.selection, p.selection_aligned, p.validity, p.validity_aligned, &p.col);
}

/* ---- reduce by tiles (widths 1..32; select.cu's reduce_tiles) ---------------- */

/* ps_sel_funnel, ps_sel_width_mask, ps_sel_tile_code, ps_sel_tile_limit and
 * PS_SEL_TILE_NARROW_MAX: kernels_shared/ps_select.h (the tile's math, which
 * OpenCL's select.cl runs too). */

/* One lane's accumulators over the tiles it has seen. Codes are at most 32
 * bits, so min and max are 32-bit, and UINT32_MAX is a neutral min among
 * them: whether any row was added is decided once, from the count of the
 * whole reduction (ps_sel_tile_result), not per row. */
struct ps_sel_tile_acc {
  uint64_t count, sum_lo, sum_hi, bad_row;
  uint32_t min, max;
};

PS_HD ps_sel_tile_acc ps_sel_tile_acc_empty() {
  ps_sel_tile_acc a;
  a.count = 0, a.sum_lo = 0, a.sum_hi = 0, a.bad_row = UINT64_MAX;
  a.min = UINT32_MAX, a.max = 0;
  return a;
}

/* A tile's sum of one lane's 32 codes: 32-bit adds up to
 * PS_SEL_TILE_NARROW_MAX bits, 64-bit above. */
template <bool kWide>
struct ps_sel_tile_sum {
  typedef uint32_t type;
};
template <>
struct ps_sel_tile_sum<true> {
  typedef uint64_t type;
};

/* The least row of lane `lane` in tile t whose code is above limit and
 * counts (UINT64_MAX: none): the rescan of a tile whose max is above the
 * limit, which only corrupt data reaches. Every lane of the warp calls it
 * (word_rows shuffles); a lane whose max was not above the limit finds
 * none. */
template <bool kRows, typename WordRows>
PS_HD uint64_t ps_sel_tile_bad_row(const uint32_t *stage, uint32_t w, uint32_t limit, uint64_t t, uint32_t lane,
                                   WordRows word_rows) {
  uint64_t bad = UINT64_MAX;
#ifdef __CUDA_ARCH__
#pragma unroll 1 /* rare: kept small, registers for the main loop */
#endif
  for (uint32_t j = 0; j < 32; j++) {
    const uint32_t m = kRows ? word_rows(j) : 0xffffffffu; /* every lane calls (a shuffle on the GPU) */
    if (bad == UINT64_MAX && ((m >> lane) & 1u) && ps_sel_tile_code(stage, w, j, lane) > limit)
      bad = t * 1024u + j * 32u + lane;
  }
  return bad;
}

/* Lane `lane`'s share of tile t: row lane of each of the tile's 32 words.
 * kRows: the tile has a row mask (a selection, validity, or rows past the
 * end); word j's mask (its bits: rows that count, as ps_sel_reduce_rows)
 * comes from word_rows(j), called by every lane for every j; `own` is the
 * lane's own word's mask (j = lane), counted here. Without kRows every row
 * of the tile counts (own is all ones). kWide: w > PS_SEL_TILE_NARROW_MAX.
 * A code above limit makes the call fail, so such codes are not kept out of
 * the sums: the result says whether the tile's max is above the limit, and
 * only then does the caller look for the least such row (ps_sel_tile_bad_row,
 * called by the whole warp when any lane needs it, since word_rows
 * shuffles). The tile's sum meets the 128-bit sum once; per code this is two
 * shared loads, a funnel shift, a mask, an add and a min and a max
 * (predicated under a row mask). */
template <bool kRows, bool kWide, typename WordRows>
PS_HD bool ps_sel_tile_lane(ps_sel_tile_acc &a, const uint32_t *stage, uint32_t w, uint32_t limit, uint32_t lane,
                            uint32_t own, WordRows word_rows) {
  typedef typename ps_sel_tile_sum<kWide>::type sum_t;
  const uint32_t cmask = ps_sel_width_mask(w), shift = (lane * w) & 31u;
  const uint32_t *at = stage + ((lane * w) >> 5);
  sum_t sum = 0;
  uint32_t mn = UINT32_MAX, mx = 0;
#ifdef __CUDA_ARCH__
#pragma unroll 8
#endif
  for (uint32_t j = 0; j < 32; j++, at += w) {
    const uint32_t m = kRows ? word_rows(j) : 0xffffffffu;
    const uint32_t code = ps_sel_funnel(at[0], at[1], shift) & cmask;
    if (!kRows || ((m >> lane) & 1u)) { /* nvcc does not see (~0u >> lane) & 1 as 1 */
      sum += code;
      mn = code < mn ? code : mn;
      mx = code > mx ? code : mx;
    }
  }
  a.count += ps_sel_popc(own);
  const uint64_t s64 = sum;
  a.sum_lo += s64;
  a.sum_hi += a.sum_lo < s64 ? 1u : 0u;
  a.min = mn < a.min ? mn : a.min;
  a.max = mx > a.max ? mx : a.max;
  return mx > limit;
}

PS_HD ps_sel_partial ps_sel_tile_partial(const ps_sel_tile_acc &a) {
  ps_sel_partial p;
  p.count = a.count, p.min = a.min, p.max = a.max;
  p.sum_lo = a.sum_lo, p.sum_hi = a.sum_hi, p.bad_row = a.bad_row;
  return p;
}

/* The reduction's result from the combined tile partials: with no row
 * counted, min is the empty partial's (ps_sel_partial_empty), as the
 * reference returns it. */
PS_HD ps_sel_partial ps_sel_tile_result(ps_sel_partial p) {
  if (p.count == 0) p.min = UINT64_MAX;
  return p;
}

/* Stream word and bit of row id's code (1..32 bits): the code is the low w
 * bits of ps_sel_funnel(word, word + 1, *shift). */
PS_HD uint64_t ps_sel_code_word(uint64_t id, uint32_t w, uint32_t *shift) {
  const uint32_t jw = (uint32_t)(id & 31) * w;
  *shift = jw & 31u;
  return (id >> 5) * w + (jw >> 5);
}

/* ---- gather ------------------------------------------------------------------ */

/* A little-endian integer of `bytes` (4 or 8) bytes. */
PS_HD uint64_t ps_sel_load_index(const uint8_t *p, uint32_t bytes, bool aligned) {
#ifdef __CUDA_ARCH__
  if (aligned)
    return bytes == 8 ? (uint64_t)__ldg(reinterpret_cast<const unsigned long long *>(p))
                      : (uint64_t)__ldg(reinterpret_cast<const unsigned int *>(p));
#else
  (void)aligned;
#endif
  uint64_t v = 0;
  for (uint32_t i = 0; i < bytes; ++i) v |= (uint64_t)ps_ld8(p + i) << (8 * i);
  return v;
}

/* Stores the low `bytes` (1, 2, 4 or 8) bytes of v little-endian at p. */
PS_HD void ps_sel_store(uint8_t *p, uint32_t bytes, uint64_t v, bool aligned) {
#ifdef __CUDA_ARCH__
  if (aligned) {
    switch (bytes) {
      case 1:
        *p = (uint8_t)v;
        return;
      case 2:
        *reinterpret_cast<uint16_t *>(p) = (uint16_t)v;
        return;
      case 4:
        *reinterpret_cast<uint32_t *>(p) = (uint32_t)v;
        return;
      default:
        *reinterpret_cast<uint64_t *>(p) = v;
        return;
    }
  }
#else
  (void)aligned;
#endif
  for (uint32_t i = 0; i < bytes; ++i) p[i] = (uint8_t)(v >> (8 * i));
}

/* What output i becomes (ps_select.h's ps_sel_gather_row of its id). */
PS_HD uint32_t ps_sel_gather_one(const ps_cuda_gather_params &p, uint64_t i, bool *valid, uint64_t *bits) {
  const uint64_t id = ps_sel_load_index(p.ids + i * p.index_bytes, p.index_bytes, p.ids_aligned != 0);
  return ps_sel_gather_row(&p.col, p.data, p.data_aligned, p.validity, p.rows, p.out_type, &p.pow10, id, valid, bits);
}

/* ---- row ids: copy-out (after ps_sel_store) ---------------------------------- */

/* Copy-out in 16-byte groups. The ids of a round go to chunk positions
 * [at, at + n) of an output whose element at position 0 has index out_elem
 * (its address / bytes). They are staged at slots [lead, lead + n), lead being
 * (out_elem + at) mod V (V = 16 / bytes ids per group), so that group k
 * (slots [V*k, V*k + V)) lands on one 16-byte-aligned piece of the output
 * whenever it is whole; a round has at most two partial groups, stored id by
 * id. The staging area holds 1024 + V - 1 slots. */
#define PS_SEL_IDS_STAGE_SLOTS 1032u /* 1024 + 3, rounded up to keep 16-byte alignment */

PS_HD uint32_t ps_sel_ids_lead(uint64_t out_elem, uint32_t at, uint32_t bytes) {
  return (uint32_t)((out_elem + at) % (16u / bytes));
}

/* Groups of a round: ceil((lead + n) / V). */
PS_HD uint32_t ps_sel_ids_groups(uint32_t lead, uint32_t n, uint32_t bytes) {
  const uint32_t v = 16u / bytes;
  return (lead + n + v - 1) / v;
}

/* Stores group k of a round (see above): ids id_base + row0 + stage[s] for the
 * slots s of the group that hold ids. out: the output at chunk position 0,
 * bytes-aligned. */
PS_HD void ps_sel_ids_put_group(uint8_t *out, uint32_t bytes, uint64_t id_base, uint32_t row0, const uint16_t *stage,
                                uint32_t lead, uint32_t n, uint32_t at, uint32_t k) {
  const uint32_t v = 16u / bytes, first = v * k;
  if (first >= lead && first + v <= lead + n) {
    uint8_t *dst = out + (uint64_t)(at + (first - lead)) * bytes;
#ifdef __CUDA_ARCH__
    if (bytes == 4) {
      const uint2 s = *reinterpret_cast<const uint2 *>(stage + first);
      const uint32_t b = (uint32_t)id_base + row0; /* uint32 ids: the low half (ids < 2^32, core) */
      *reinterpret_cast<uint4 *>(dst) =
          make_uint4(b + (s.x & 0xffffu), b + (s.x >> 16), b + (s.y & 0xffffu), b + (s.y >> 16));
    } else {
      const uint32_t s = *reinterpret_cast<const uint32_t *>(stage + first);
      const unsigned long long b = id_base + row0;
      *reinterpret_cast<ulonglong2 *>(dst) = make_ulonglong2(b + (s & 0xffffu), b + (s >> 16));
    }
#else
    for (uint32_t e = 0; e < v; ++e) ps_sel_store(dst + e * bytes, bytes, id_base + row0 + stage[first + e], false);
#endif
    return;
  }
  for (uint32_t e = 0; e < v; ++e) {
    const uint32_t s = first + e;
    if (s >= lead && s < lead + n)
      ps_sel_store(out + (uint64_t)(at + (s - lead)) * bytes, bytes, id_base + row0 + stage[s], true);
  }
}

#endif /* PS_CUDA_SELECT_CUH */
