/*
 * Per-element logic of what comes after the filter (core/backend.h: row_ids,
 * reduce, gather): bounded loads, bitmap words, code extraction at 64-bit row
 * ids, the 128-bit reduction partial and the gathered value. Everything here
 * is __host__ __device__ so it can be checked against the reference backend
 * on a machine without a GPU; select.cu holds the kernels around it.
 */
#ifndef PS_CUDA_SELECT_CUH
#define PS_CUDA_SELECT_CUH

#include <stdint.h>
#include <string.h>

#include "ps_cuda_kernels.h"
#include "ps_cuda_rows.cuh" /* PS_HD, ps_ld8, ps_ld32 */
#include "ps_program.h"

/* Little-endian 32-bit word at byte `at` of `nbytes` readable bytes; bytes
 * past the end read as 0 and are never touched. Written so that no sum can
 * wrap, whatever `at` is (gather computes it from caller ids). */
PS_HD uint32_t ps_sel_load_word(const uint8_t *base, uint64_t at, uint64_t nbytes, bool aligned) {
  if (at >= nbytes) return 0;
  const uint64_t avail = nbytes - at;
  if (aligned && avail >= 4) return ps_ld32(base + at);
  uint32_t w = 0;
  for (uint32_t i = 0; i < 4; ++i)
    if (i < avail) w |= (uint32_t)ps_ld8(base + at + i) << (8 * i);
  return w;
}

/* Bits of rows [32g, 32g+32) that lie below `rows`. */
PS_HD uint32_t ps_sel_row_mask(uint64_t rows, uint64_t g) {
  if (g >= rows / 32 + 1) return 0;
  if (g < rows / 32) return 0xffffffffu;
  const uint32_t tail = (uint32_t)(rows % 32);
  return tail ? (1u << tail) - 1u : 0u;
}

/* Word g of a bitmap of `rows` bits (ceil(rows/8) readable bytes), bits of
 * rows >= rows cleared: the final partial word is read bytewise. */
PS_HD uint32_t ps_sel_bitmap_word(const uint8_t *bits, uint64_t rows, uint64_t g, bool aligned) {
  return ps_sel_load_word(bits, g * 4, (rows + 7) / 8, aligned) & ps_sel_row_mask(rows, g);
}

/* code(id): stream bits [id*w, id*w+w), LSB first, for any 64-bit id. The bit
 * offset is split as id = 32q + j, so the word index q*w + (j*w)/32 is exact
 * whenever the byte offset fits 64 bits (always, for ids inside a stream of
 * data_bytes bytes). A code starting at bit s of a word spans s+w <= 95 bits:
 * at most three words, only those it overlaps. */
PS_HD uint64_t ps_sel_code_at(const uint8_t *data, uint64_t nbytes, uint32_t width, uint64_t id, bool aligned) {
  if (width == 0) return 0;
  const uint64_t q = id >> 5;
  const uint32_t jw = (uint32_t)(id & 31) * width; /* < 2048 */
  const uint64_t word = q * width + (jw >> 5);
  const uint32_t s = jw & 31;
  const uint64_t at = word * 4;
  uint64_t lo = ps_sel_load_word(data, at, nbytes, aligned);
  if (s + width > 32 && at + 4 > at) lo |= (uint64_t)ps_sel_load_word(data, at + 4, nbytes, aligned) << 32;
  uint64_t v = lo >> s;
  /* s + width > 64 implies s >= 1, so the shift is in 1..63. */
  if (s + width > 64 && at + 8 > at) v |= (uint64_t)ps_sel_load_word(data, at + 8, nbytes, aligned) << (64 - s);
  v &= ps_width_mask(width);
  return v;
}

/* corrupt(code) of ps_program.h, for a valid row (kernels_shared/ps_codes.h;
 * a function here, as the select kernels were measured with). */
PS_HD bool ps_sel_corrupt(const ps_prog_col &col, uint64_t code) {
  return ps_code_corrupt(col.flags, code, col.code_limit);
}

/* valid(id): bit id of the validity bitmap (bounded by validity_bytes), 1
 * when the column has none. */
PS_HD bool ps_sel_valid(const ps_prog_col &col, const uint8_t *validity, uint64_t id) {
  if (!(col.flags & PS_COLF_VALIDITY)) return true;
  const uint64_t at = id >> 3;
  return at < col.validity_bytes && ((ps_ld8(validity + at) >> (id & 7)) & 1u);
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

/* A partial reduction: count, min, max, the exact 128-bit sum (hi:lo) of the
 * codes, and the least row holding a corrupt code (UINT64_MAX: none). The
 * empty partial is the identity of ps_sel_partial_add and is exactly what the
 * reference returns for an empty selection. */
struct ps_sel_partial {
  uint64_t count, min, max, sum_lo, sum_hi, bad_row;
};

PS_HD ps_sel_partial ps_sel_partial_empty() {
  ps_sel_partial p;
  p.count = 0, p.min = UINT64_MAX, p.max = 0, p.sum_lo = 0, p.sum_hi = 0, p.bad_row = UINT64_MAX;
  return p;
}

PS_HD ps_sel_partial ps_sel_partial_add(const ps_sel_partial &a, const ps_sel_partial &b) {
  ps_sel_partial r;
  r.count = a.count + b.count;
  r.min = a.min < b.min ? a.min : b.min;
  r.max = a.max > b.max ? a.max : b.max;
  r.sum_lo = a.sum_lo + b.sum_lo;
  r.sum_hi = a.sum_hi + b.sum_hi + (r.sum_lo < a.sum_lo ? 1u : 0u); /* carry */
  r.bad_row = a.bad_row < b.bad_row ? a.bad_row : b.bad_row;
  return r;
}

/* Adds one valid, selected row's code (or records the row as corrupt). */
PS_HD void ps_sel_partial_code(ps_sel_partial &p, const ps_prog_col &col, uint64_t row, uint64_t code) {
  if (ps_sel_corrupt(col, code)) {
    if (row < p.bad_row) p.bad_row = row;
    return;
  }
  p.count++;
  if (code < p.min) p.min = code;
  if (code > p.max) p.max = code;
  p.sum_lo += code;
  p.sum_hi += p.sum_lo < code ? 1u : 0u;
}

/* Rows of word g that count: below rows, selected (if a selection is given)
 * and valid (if the column has a validity bitmap). */
PS_HD uint32_t ps_sel_reduce_rows(const ps_cuda_reduce_params &p, uint64_t g) {
  uint32_t m = ps_sel_row_mask(p.rows, g);
  if (p.selection) m &= ps_sel_load_word(p.selection, g * 4, (p.rows + 7) / 8, p.selection_aligned);
  if (p.col.flags & PS_COLF_VALIDITY)
    m &= ps_sel_load_word(p.validity, g * 4, p.col.validity_bytes, p.validity_aligned);
  return m;
}

/* ---- reduce by tiles (widths 1..32; select.cu's reduce_tiles) ---------------- */

/* The low 32 bits of (hi:lo) >> s, s in 0..31. */
PS_HD uint32_t ps_sel_funnel(uint32_t lo, uint32_t hi, uint32_t s) {
#ifdef __CUDA_ARCH__
  return __funnelshift_r(lo, hi, s);
#else
  return (uint32_t)((((uint64_t)hi << 32) | lo) >> s);
#endif
}

/* The low w bits set, w in 1..32. */
PS_HD uint32_t ps_sel_width_mask(uint32_t w) { return w >= 32 ? 0xffffffffu : (1u << w) - 1u; }

/* Code of row 32j + lane of a 1024-row tile of a w-bit stream (w in 1..32)
 * whose 32w words are staged at stage[0..32w) (stage[32w] readable: the
 * last code's funnel reads it and masks it away). The code starts at bit
 * lane*w: word j*w + (lane*w)/32 at bit (lane*w) % 32, the same bit for
 * every j; across a warp the words read lie within 33 consecutive ones. */
PS_HD uint32_t ps_sel_tile_code(const uint32_t *stage, uint32_t w, uint32_t j, uint32_t lane) {
  const uint32_t i = j * w + ((lane * w) >> 5);
  return ps_sel_funnel(stage[i], stage[i + 1], (lane * w) & 31u) & ps_sel_width_mask(w);
}

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

/* A tile's sum of one lane's 32 codes: 32 (2^w - 1) < 2^32 up to 27 bits, so
 * 32-bit adds there; 64-bit from 28 bits. */
#define PS_SEL_TILE_NARROW_MAX 27u
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

PS_HD uint64_t ps_sel_double_bits(double d) {
#ifdef __CUDA_ARCH__
  return (uint64_t)__double_as_longlong(d);
#else
  uint64_t u;
  memcpy(&u, &d, sizeof u);
  return u;
#endif
}

PS_HD uint32_t ps_sel_float_bits(float f) {
#ifdef __CUDA_ARCH__
  return __float_as_uint(f);
#else
  uint32_t u;
  memcpy(&u, &f, sizeof u);
  return u;
#endif
}

/* The decode rule of ps_program.h. Casts round to nearest even (cvt.rn) and
 * the division is IEEE (div.rn.f64), as in the reference's C. */
PS_HD double ps_sel_decode_double(const ps_cuda_gather_params &p, uint64_t code) {
  const uint64_t v = p.col.reference + code; /* wraps by design */
  switch (p.col.kind) {
    case PS_KIND_SIGNED:
      return (double)(int64_t)v;
    case PS_KIND_UNSIGNED:
      return (double)v;
    case PS_KIND_FLOAT64:
      return (double)(int64_t)v / p.pow10;
    default:
      return (double)(float)((double)(int64_t)v / p.pow10);
  }
}

/* The bits stored (low value_bytes bytes) for a valid row's code. */
PS_HD uint64_t ps_sel_gather_bits(const ps_cuda_gather_params &p, uint64_t code) {
  const uint64_t v = p.col.reference + code;
  switch (p.out_type) {
    case PS_CUDA_GATHER_CODE32:
      return (uint32_t)v;
    case PS_CUDA_GATHER_F64:
      return ps_sel_double_bits(ps_sel_decode_double(p, code));
    case PS_CUDA_GATHER_F32:
      return ps_sel_float_bits((float)ps_sel_decode_double(p, code));
    default:
      return v; /* PS_CUDA_GATHER_INT: the store truncates to value_bytes */
  }
}

/* What output i becomes. Returns 0 when the row is fine, 1 for an id past the
 * column, 2 for a corrupt code; *valid and *bits are the output otherwise. */
PS_HD uint32_t ps_sel_gather_one(const ps_cuda_gather_params &p, uint64_t i, bool *valid, uint64_t *bits) {
  *valid = false;
  *bits = 0;
  const uint64_t id = ps_sel_load_index(p.ids + i * p.index_bytes, p.index_bytes, p.ids_aligned != 0);
  if (id >= p.rows) return 1;
  if (!ps_sel_valid(p.col, p.validity, id)) return 0;
  const uint64_t code = ps_sel_code_at(p.data, p.col.data_bytes, p.col.width, id, p.data_aligned != 0);
  if (ps_sel_corrupt(p.col, code)) return 2;
  *valid = true;
  *bits = ps_sel_gather_bits(p, code);
  return 0;
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
      *reinterpret_cast<uint4 *>(dst) = make_uint4(b + (s.x & 0xffffu), b + (s.x >> 16), b + (s.y & 0xffffu), b + (s.y >> 16));
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
