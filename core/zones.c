/* Zone maps: per block of rows the smallest and largest code of the valid
 * rows and whether the block holds nulls or only nulls; computed on the host
 * from packed codes, checked when a caller gives them; and the pruning plan
 * of a lowered predicate: each block evaluated on the zones of its columns
 * to ALL FALSE, ALL TRUE or MAYBE (docs/design.md "Zone maps"). */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ps_codes.h" /* a DELTA column's codes, read as the kernels read them */

/* ---- scanning packed codes ------------------------------------------------ */

static uint64_t width_mask(uint32_t w) { return w >= 64 ? UINT64_MAX : (((uint64_t)1 << w) - 1); }

/* Bits [pos, pos + w) of the stream (bytes: its readable size), LSB first. */
static uint64_t read_bits(const uint8_t *p, uint64_t bytes, uint64_t pos, uint32_t w) {
  uint64_t byte = pos >> 3;
  uint32_t shift = (uint32_t)(pos & 7);
  if (w <= 56 && byte + 8 <= bytes) {
    uint64_t v;
    memcpy(&v, p + byte, 8); /* little-endian hosts only, as the encoders */
    return (v >> shift) & width_mask(w);
  }
  uint64_t v = 0;
  uint32_t got = 0;
  uint32_t need = shift + w;
  for (uint32_t k = 0; got < need && byte + k < bytes; k++, got += 8) {
    uint64_t b = p[byte + k];
    if (got == 0)
      v = b >> shift;
    else if (got - shift < 64)
      v |= b << (got - shift);
  }
  return v & width_mask(w);
}

/* A block's map from its valid rows' count (of `rows`) and their smallest and
 * largest codes. */
static void zone_close(uint64_t valid, uint64_t rows, uint64_t lo, uint64_t hi, uint64_t *min, uint64_t *max,
                       uint8_t *flags) {
  uint8_t f = 0;
  if (valid < rows) f |= PS_ZONE_HAS_NULLS;
  if (valid == 0) f |= PS_ZONE_ALL_NULL, lo = hi = 0;
  *min = lo, *max = hi, *flags = f;
}

void ps_zones_scan(const uint8_t *data, uint32_t w, const uint8_t *validity, uint64_t rows, uint32_t block_rows,
                   uint64_t *min, uint64_t *max, uint8_t *flags) {
  const uint64_t bytes = (rows / 8) * w + ((rows % 8) * w + 7) / 8;
  for (uint64_t b = 0, r0 = 0; r0 < rows; b++, r0 += block_rows) {
    uint64_t r1 = rows - r0 < block_rows ? rows : r0 + block_rows;
    uint64_t lo = UINT64_MAX, hi = 0, valid = 0;
    for (uint64_t r = r0; r < r1; r++) {
      if (validity && !((validity[r >> 3] >> (r & 7)) & 1)) continue;
      uint64_t c = w ? read_bits(data, bytes, r * w, w) : 0;
      valid++;
      if (c < lo) lo = c;
      if (c > hi) hi = c;
    }
    zone_close(valid, r1 - r0, lo, hi, &min[b], &max[b], &flags[b]);
  }
}

/* As ps_zones_scan, over the rows [r0, r0 + rows) of the DELTA stream d of
 * `size` bytes (rows counted from its first header; r0 a multiple of
 * block_rows), 32 codes a row word (block_rows is a multiple of 32). */
static void scan_delta(const uint8_t *d, uint64_t size, uint64_t r0, const uint8_t *validity, uint64_t rows,
                       uint32_t block_rows, uint64_t *min, uint64_t *max, uint8_t *flags) {
  const uint32_t aligned = ((uintptr_t)d & 3u) == 0;
  ps_u32 x[PS_WORD_X];
  for (uint64_t b = 0, z0 = 0; z0 < rows; b++, z0 += block_rows) {
    const uint64_t z1 = rows - z0 < block_rows ? rows : z0 + block_rows;
    uint64_t lo = UINT64_MAX, hi = 0, valid = 0;
    for (uint64_t r = z0; r < z1; r++) {
      if ((r & 31) == 0) ps_word_load_delta(d, size, aligned, (r0 + r) >> 5, x);
      if (validity && !((validity[r >> 3] >> (r & 7)) & 1)) continue;
      const uint64_t c = ps_word_code(PS_ENC_DELTA, 64, x, (uint32_t)(r & 31));
      valid++;
      if (c < lo) lo = c;
      if (c > hi) hi = c;
    }
    zone_close(valid, z1 - z0, lo, hi, &min[b], &max[b], &flags[b]);
  }
}

ps_zone_map *ps_zones_for_encoded(const ps_allocator *a, const uint8_t *data, uint32_t w, const uint8_t *validity,
                                  uint64_t n) {
  uint64_t blocks = (n + PS_ZONE_BLOCK_ROWS - 1) / PS_ZONE_BLOCK_ROWS;
  if (blocks > (SIZE_MAX - sizeof(ps_zone_map)) / 17) return NULL;
  uint8_t *p = ps_alloc_with(a, sizeof(ps_zone_map) + (size_t)blocks * 17 + 1);
  if (!p) return NULL;
  ps_zone_map *z = (ps_zone_map *)p;
  uint64_t *min = (uint64_t *)(p + sizeof *z), *max = min + blocks;
  uint8_t *flags = (uint8_t *)(max + blocks);
  ps_zones_scan(data, w, validity, n, PS_ZONE_BLOCK_ROWS, min, max, flags);
  memset(z, 0, sizeof *z);
  z->struct_size = sizeof *z;
  z->block_rows = PS_ZONE_BLOCK_ROWS;
  z->blocks = blocks;
  z->min = min, z->max = max, z->flags = flags;
  return z;
}

/* ---- a column's zone maps ---------------------------------------------------- */

void ps_zones_free(ps_context *ctx, ps_column *col) {
  if (!col->zones) return;
  ps_host_free(ctx, col->zones->min);
  ps_host_free(ctx, col->zones);
  col->zones = NULL;
  ctx->zone_epoch++;
}

static ps_zones *zones_alloc(ps_context *ctx, uint32_t block_rows, uint64_t blocks) {
  if (blocks > SIZE_MAX / 17 - 1) return NULL;
  ps_zones *z = ps_calloc_ctx(ctx, 1, sizeof *z);
  uint8_t *p = ps_host_alloc(ctx, (size_t)blocks * 17 + 1);
  if (!z || !p) {
    ps_host_free(ctx, z);
    ps_host_free(ctx, p);
    return NULL;
  }
  z->block_rows = block_rows;
  z->blocks = blocks;
  z->min = (uint64_t *)p;
  z->max = z->min + blocks;
  z->flags = (uint8_t *)(z->max + blocks);
  return z;
}

static void zones_install(ps_context *ctx, ps_column *col, ps_zones *z) {
  z->view = (ps_zone_map){sizeof z->view, z->block_rows, z->blocks, z->min, z->max, z->flags};
  z->clean = true;
  for (uint64_t b = 0; b < z->blocks; b++)
    if (!(z->flags[b] & PS_ZONE_ALL_NULL) && (col->no_codes || z->max[b] > col->code_limit)) z->clean = false;
  ps_zones_free(ctx, col);
  col->zones = z;
  ctx->zone_epoch++;
}

ps_status ps_zones_set(ps_context *ctx, ps_column *col, const ps_zone_map *in, const char *what) {
  if (!in) {
    ps_zones_free(ctx, col);
    return PS_OK;
  }
  if (in->struct_size < sizeof *in)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s.struct_size is %" PRIu32 "; expected %zu", what,
                        in->struct_size, sizeof *in);
  if (in->block_rows == 0 || in->block_rows % 32)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                        "%s.block_rows is %" PRIu32 "; expected a positive multiple of 32", what, in->block_rows);
  uint64_t blocks = col->n / in->block_rows + (col->n % in->block_rows != 0);
  if (in->blocks != blocks)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                        "%s.blocks is %" PRIu64 "; %" PRIu64 " rows in blocks of %" PRIu32 " are %" PRIu64, what,
                        in->blocks, col->n, in->block_rows, blocks);
  if (blocks && (!in->min || !in->max || !in->flags))
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s.%s is NULL", what,
                        !in->min   ? "min"
                        : !in->max ? "max"
                                   : "flags");
  const uint64_t wm = width_mask(col->width);
  for (uint64_t b = 0; b < blocks; b++) {
    uint8_t f = in->flags[b];
    if (f & ~(PS_ZONE_HAS_NULLS | PS_ZONE_ALL_NULL))
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s.flags[%" PRIu64 "] is %u; expected PS_ZONE_* bits", what, b,
                          f);
    if ((f & PS_ZONE_ALL_NULL) && !(f & PS_ZONE_HAS_NULLS))
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                          "%s.flags[%" PRIu64 "] is PS_ZONE_ALL_NULL without PS_ZONE_HAS_NULLS", what, b);
    if (f && !col->validity.handle)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                          "%s.flags[%" PRIu64 "] says the block has nulls; the column has no validity bitmap", what, b);
    if (f & PS_ZONE_ALL_NULL) continue;
    if (in->min[b] > in->max[b] || in->max[b] > wm)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                          "%s block %" PRIu64 ": min %" PRIu64 ", max %" PRIu64 "; expected min <= max <= %" PRIu64
                          " (the codes' width is %" PRIu32 ")",
                          what, b, in->min[b], in->max[b], wm, col->width);
  }
  ps_zones *z = zones_alloc(ctx, in->block_rows, blocks);
  if (!z) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating zone maps of %" PRIu64 " blocks", blocks);
  if (blocks) {
    memcpy(z->min, in->min, (size_t)blocks * 8);
    memcpy(z->max, in->max, (size_t)blocks * 8);
    memcpy(z->flags, in->flags, (size_t)blocks);
  }
  for (uint64_t b = 0; b < blocks; b++)
    if (z->flags[b] & PS_ZONE_ALL_NULL) z->min[b] = z->max[b] = 0;
  zones_install(ctx, col, z);
  return PS_OK;
}

PS_API ps_status ps_column_set_zones(ps_context *ctx, ps_column *col, const ps_zone_map *zones) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!col) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "col is NULL");
  if (col->ctx != ctx) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "col belongs to another context");
  if (ctx->group) return ps_group_set_zones(ctx, col, zones);
  return ps_zones_set(ctx, col, zones, "zones");
}

PS_API int ps_column_zones(const ps_column *col, ps_zone_map *out) {
  if (!col || !col->zones) return 0;
  if (out) *out = col->zones->view;
  return 1;
}

/* Rows per piece copied back from the device: 256 blocks (1M rows, at most
 * 8 MB of codes). */
#define PIECE_ROWS ((uint64_t)PS_ZONE_BLOCK_ROWS * 256)

/* The DELTA stream of the rows [r0, r0 + rows) of col (r0 a multiple of its
 * blocks), as *d of *bytes: in place, the column's own from the header of
 * r0's block; else copied back from the device into buf, its blocks as a
 * chunk stages them (ps_delta_chunk). */
static ps_status delta_piece(ps_context *ctx, const ps_column *col, bool in_place, uint64_t r0, uint64_t rows,
                             uint8_t *buf, const uint8_t **d, uint64_t *bytes) {
  const uint64_t b0 = r0 / PS_DELTA_BLOCK_ROWS, blocks = ps_delta_blocks(r0 + rows) - b0;
  const uint64_t hb = blocks * PS_DELTA_HEADER_BYTES;
  if (in_place) {
    *d = (const uint8_t *)col->data.handle + col->data.offset;
    *bytes = col->data_size;
    return PS_OK;
  }
  const ps_devmem at = {col->data.handle, col->data.offset + b0 * PS_DELTA_HEADER_BYTES};
  uint8_t *headers = buf + hb; /* read behind where the rebased ones go */
  PS_TRY(ctx->ops->mem_read(ctx->be, headers, at, hb));
  uint64_t from = 0, payload = 0;
  if (!ps_delta_chunk(headers, b0, blocks, col->data_size, UINT64_MAX, buf, &from, &payload))
    return ps_set_error(ctx, PS_ERR_CORRUPT_DATA,
                        "the block headers of a DELTA column's buffer (blocks %" PRIu64 "..%" PRIu64
                        ") no longer lay out its payloads one after another",
                        b0, b0 + blocks - 1);
  if (payload)
    PS_TRY(ctx->ops->mem_read(ctx->be, buf + hb, (ps_devmem){col->data.handle, col->data.offset + from}, payload));
  *d = buf;
  *bytes = hb + payload;
  return PS_OK;
}

PS_API ps_status ps_column_compute_zones(ps_context *ctx, ps_column *col) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!col) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "col is NULL");
  if (col->ctx != ctx) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "col belongs to another context");
  if (ctx->group) return ps_group_compute_zones(ctx, col);
  const uint64_t n = col->n, blocks = (n + PS_ZONE_BLOCK_ROWS - 1) / PS_ZONE_BLOCK_ROWS;
  ps_zones *z = zones_alloc(ctx, PS_ZONE_BLOCK_ROWS, blocks);
  if (!z) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating zone maps of %" PRIu64 " blocks", blocks);
  /* the reference backend's device memory is host memory; a host-resident column's is the caller's */
  const bool in_place = ctx->ops == &ps_backend_reference || col->host;
  const uint64_t piece = n < PIECE_ROWS ? n : PIECE_ROWS;
  const bool delta = col->encoding == PS_ENC_DELTA;
  uint8_t *data = NULL, *valid = NULL;
  ps_status st = PS_OK;
  if (!in_place && n) {
    /* a DELTA piece: its blocks' headers, rebased, and payloads (ps_delta_chunk) */
    data = ps_host_alloc(
        ctx, delta ? (size_t)ps_delta_blocks(piece) * (PS_DELTA_HEADER_BYTES + ps_delta_payload_bytes(64, 64))
                   : (size_t)(piece / 8 * col->width + col->width + 8));
    valid = ps_host_alloc(ctx, (size_t)(piece / 8 + 8));
    if (!data || !valid) st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating %" PRIu64 " rows of codes", piece);
  }
  for (uint64_t r0 = 0; st == PS_OK && r0 < n; r0 += piece) {
    uint64_t rows = n - r0 < piece ? n - r0 : piece;
    uint64_t off = r0 / 8 * col->width; /* r0 is a multiple of 8 */
    uint64_t bytes = (rows / 8) * col->width + ((rows % 8) * col->width + 7) / 8;
    const uint8_t *d = data, *v = NULL;
    if (delta)
      st = delta_piece(ctx, col, in_place, r0, rows, data, &d, &bytes);
    else if (in_place)
      d = (const uint8_t *)col->data.handle + col->data.offset + off;
    else if (bytes)
      st = ctx->ops->mem_read(ctx->be, data, (ps_devmem){col->data.handle, col->data.offset + off}, bytes);
    if (st == PS_OK && col->validity.handle) {
      if (in_place) {
        v = (const uint8_t *)col->validity.handle + col->validity.offset + r0 / 8;
      } else {
        st = ctx->ops->mem_read(ctx->be, valid, (ps_devmem){col->validity.handle, col->validity.offset + r0 / 8},
                                (rows + 7) / 8);
        v = valid;
      }
    }
    if (st == PS_OK) {
      uint64_t b0 = r0 / PS_ZONE_BLOCK_ROWS;
      if (delta)
        scan_delta(d, bytes, in_place ? r0 : 0, v, rows, PS_ZONE_BLOCK_ROWS, z->min + b0, z->max + b0, z->flags + b0);
      else
        ps_zones_scan(d, col->width, v, rows, PS_ZONE_BLOCK_ROWS, z->min + b0, z->max + b0, z->flags + b0);
    }
  }
  ps_host_free(ctx, data);
  ps_host_free(ctx, valid);
  if (st != PS_OK) {
    ps_host_free(ctx, z->min);
    ps_host_free(ctx, z);
    return st;
  }
  zones_install(ctx, col, z);
  return PS_OK;
}

uint64_t ps_scan_bytes(const ps_column *c, uint64_t rows) {
  uint64_t b = (rows / 8) * c->width + ((rows % 8) * c->width + 7) / 8;
  if (c->validity.handle) b += (rows + 7) / 8;
  return b;
}

/* ---- pruning plans ----------------------------------------------------------------- */

struct ps_prune_plan {
  uint64_t epoch; /* ctx->zone_epoch it was made at */
  bool usable;    /* false: the predicate's columns do not allow pruning */
  uint32_t block_rows;
  uint64_t n_runs;
  uint64_t *run_end;  /* block index where run i ends (runs are maximal, in order) */
  uint8_t *run_state; /* PS_PRUNE_* */
};

/* Sets of the values a node can take over a block's rows. */
#define KT 1u
#define KF 2u
#define KU 4u

static uint8_t k_not(uint8_t a) { return (uint8_t)((a & KU) | ((a & KT) << 1) | ((a & KF) >> 1)); }

static uint8_t k_and(uint8_t a, uint8_t b) {
  uint8_t r = 0;
  if ((a & KF) || (b & KF)) r |= KF;
  if ((a & KT) && (b & KT)) r |= KT;
  if (((a & KU) && (b & (KT | KU))) || ((b & KU) && (a & (KT | KU)))) r |= KU;
  return r;
}

static uint8_t k_or(uint8_t a, uint8_t b) { return k_not(k_and(k_not(a), k_not(b))); }

/* Known TRUE, FALSE or both over [lo, hi] against a test. */
static uint8_t tf(bool can_true, bool can_false) { return (uint8_t)((can_true ? KT : 0) | (can_false ? KF : 0)); }

static bool aux_bit(const uint32_t *aux, uint64_t k) { return (aux[k >> 5] >> (k & 31)) & 1; }

/* The widest code range a SET or rank leaf scans per block. */
#define SCAN_CODES 4096u

/* A SET leaf's aux bits that a device LIKE pass fills are not on the host. */
static bool set_on_host(const ps_lowered *low, uint32_t bit) {
  for (uint32_t i = 0; i < low->n_fills; i++) {
    uint64_t first = (uint64_t)low->fills[i]->aux_word * 32;
    if (bit >= first && bit < first + low->fills[i]->count) return false;
  }
  return true;
}

/* Exact values of the codes' ends of a block in INT mode (codes of a clean
 * column decode without wrap-around). */
static ps_i128 int_value(const ps_column *c, uint64_t code) {
  if (ps_type_is_unsigned(c->type) || c->type == PS_TYPE_STRING) return (ps_i128)c->reference.u + code;
  return (ps_i128)c->reference.i + code;
}

/* Interval comparisons: every pair of a in [alo, ahi], b in [blo, bhi]. */
#define CMP_SETS(T)                                                                      \
  static uint8_t cmp_##T(uint32_t cmp, T alo, T ahi, T blo, T bhi) {                     \
    switch (cmp) {                                                                       \
      case PS_CMP_EQ:                                                                    \
        return tf(!(ahi < blo || bhi < alo), !(alo == ahi && blo == bhi && alo == blo)); \
      case PS_CMP_NE:                                                                    \
        return tf(!(alo == ahi && blo == bhi && alo == blo), !(ahi < blo || bhi < alo)); \
      case PS_CMP_LT:                                                                    \
        return tf(alo < bhi, !(ahi < blo));                                              \
      case PS_CMP_LE:                                                                    \
        return tf(alo <= bhi, !(ahi <= blo));                                            \
      case PS_CMP_GT:                                                                    \
        return tf(ahi > blo, !(alo > bhi));                                              \
      default:                                                                           \
        return tf(ahi >= blo, !(alo >= bhi));                                            \
    }                                                                                    \
  }
CMP_SETS(ps_i128)
CMP_SETS(double)

/* min and max of rank table `aux_at` over codes [lo, hi]; false if too wide. */
static bool rank_range(const uint32_t *aux, uint32_t aux_at, uint64_t lo, uint64_t hi, uint32_t *rlo, uint32_t *rhi) {
  if (hi - lo >= SCAN_CODES) return false;
  *rlo = UINT32_MAX, *rhi = 0;
  for (uint64_t c = lo; c <= hi; c++) {
    uint32_t r = aux[aux_at + c];
    if (r < *rlo) *rlo = r;
    if (r > *rhi) *rhi = r;
  }
  return true;
}

/* The PS_MODE_DOUBLE value of a code of column c: its mapping's for a
 * lossless float column (exceptions included), else the decimal rule. */
static double zone_double(const ps_column *c, uint64_t code) {
  if (c->fmap.map != PS_FLOAT_MAP_DECIMAL) return ps_fmap_decode(&c->fmap, code);
  return ps_decode_double(c->type, c->reference.u, c->scale, code);
}

static uint8_t eval_leaf(const ps_lowered *low, const ps_insn *in, uint64_t b) {
  const ps_column *ca = low->cols[in->col_a];
  const ps_zones *za = ca->zones;
  const uint8_t fa = za->flags[b];
  if (in->op == PS_OP_ISNULL) {
    uint8_t r = (fa & PS_ZONE_ALL_NULL) ? KT : (fa & PS_ZONE_HAS_NULLS) ? (KT | KF) : KF;
    return (in->flags & PS_INSN_NEGATE) ? k_not(r) : r;
  }
  if (fa & PS_ZONE_ALL_NULL) return KU;
  uint8_t nulls = (fa & PS_ZONE_HAS_NULLS) ? KU : 0;
  const uint64_t lo = za->min[b], hi = za->max[b];
  uint8_t r = KT | KF;
  switch (in->op) {
    case PS_OP_RANGE:
      r = tf(!(hi < in->lo || lo > in->hi), !(in->lo <= lo && hi <= in->hi));
      break;
    case PS_OP_SET:
      if (hi - lo < SCAN_CODES && set_on_host(low, in->aux_a)) {
        bool one = false, zero = false;
        for (uint64_t c = lo; c <= hi && !(one && zero); c++) {
          if (aux_bit(low->aux, (uint64_t)in->aux_a + c))
            one = true;
          else
            zero = true;
        }
        r = tf(one, zero);
      }
      break;
    case PS_OP_INLIST: {
      bool any = false, inside = false;
      for (uint64_t i = 0; i < in->lo; i++) {
        const uint32_t *w = low->aux + in->aux_a + 4 * i;
        uint64_t first = w[0] | (uint64_t)w[1] << 32, last = w[2] | (uint64_t)w[3] << 32;
        if (!(last < lo || first > hi)) any = true;
        if (first <= lo && hi <= last) inside = true;
      }
      r = tf(any, !inside);
      break;
    }
    case PS_OP_CMPCOL: {
      const ps_column *cb = low->cols[in->col_b];
      const ps_zones *zb = cb->zones;
      const uint8_t fb = zb->flags[b];
      if (fb & PS_ZONE_ALL_NULL) return KU;
      if (fb & PS_ZONE_HAS_NULLS) nulls = KU;
      const uint64_t blo = zb->min[b], bhi = zb->max[b];
      const uint32_t cmp = PS_INSN_CMP(in->flags), mode = PS_INSN_MODE(in->flags);
      if (mode == PS_MODE_INT) {
        r = cmp_ps_i128(cmp, int_value(ca, lo), int_value(ca, hi), int_value(cb, blo), int_value(cb, bhi));
      } else if (mode == PS_MODE_DOUBLE) {
        /* the decode rules (the decimal one, a lossless column's mapping)
         * are monotone in the code */
        r = cmp_double(cmp, zone_double(ca, lo), zone_double(ca, hi), zone_double(cb, blo), zone_double(cb, bhi));
      } else {
        uint32_t alr, ahr, blr, bhr;
        if (rank_range(low->aux, in->aux_a, lo, hi, &alr, &ahr) &&
            rank_range(low->aux, in->aux_b, blo, bhi, &blr, &bhr))
          r = cmp_ps_i128(cmp, alr, ahr, blr, bhr);
      }
      return (uint8_t)(((in->flags & PS_INSN_NEGATE) ? k_not(r) : r) | nulls);
    }
    default:
      break;
  }
  if (in->flags & PS_INSN_NEGATE) r = k_not(r);
  return (uint8_t)(r | nulls);
}

static int block_state(const ps_lowered *low, uint64_t b) {
  uint8_t stack[PS_MAX_STACK];
  uint32_t sp = 0;
  for (uint32_t i = 0; i < low->prog.n_insns; i++) {
    const ps_insn *in = &low->prog.insns[i];
    switch (in->op) {
      case PS_OP_AND:
        sp--, stack[sp - 1] = k_and(stack[sp - 1], stack[sp]);
        break;
      case PS_OP_OR:
        sp--, stack[sp - 1] = k_or(stack[sp - 1], stack[sp]);
        break;
      case PS_OP_NOT:
        stack[sp - 1] = k_not(stack[sp - 1]);
        break;
      default:
        stack[sp++] = eval_leaf(low, in, b);
        break;
    }
  }
  uint8_t v = stack[0];
  if (!(v & KT)) return PS_PRUNE_FALSE;
  if (v == KT) return PS_PRUNE_TRUE;
  return PS_PRUNE_MAYBE;
}

static bool zones_fit(const ps_column *c, uint32_t block_rows) {
  return c->zones && c->zones->clean && c->zones->block_rows == block_rows;
}

void ps_prune_plan_free(ps_context *ctx, ps_expr *e) {
  if (!e->prune) return;
  ps_host_free(ctx, e->prune->run_end);
  ps_host_free(ctx, e->prune->run_state);
  ps_host_free(ctx, e->prune);
  e->prune = NULL;
}

static int cmp_u64_desc(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x > y ? -1 : x < y;
}

/* Every decided run splits the backend's work into one more call (and a
 * fill where a bitmap is written): on a GPU a launch costs as much as
 * scanning millions of rows, so where zone maps decide many short runs
 * (data clustered at a block's scale) only the PS_PRUNE_MAX_RUNS longest
 * stay decided, the rest are evaluated with their MAYBE neighbours. Data
 * sorted by the predicate's columns decides a handful of long runs and
 * keeps them all. */
#define PS_PRUNE_MAX_RUNS 64
static void limit_runs(ps_context *ctx, ps_prune_plan *p) {
  uint64_t decided = 0;
  for (uint64_t i = 0; i < p->n_runs; i++) decided += p->run_state[i] != PS_PRUNE_MAYBE;
  if (decided <= PS_PRUNE_MAX_RUNS) return;
  uint64_t *len = ps_host_alloc(ctx, (size_t)decided * sizeof *len), k = 0;
  if (!len) return; /* no memory for the choice: keep every run, which is as correct */
  for (uint64_t i = 0, b0 = 0; i < p->n_runs; b0 = p->run_end[i++])
    if (p->run_state[i] != PS_PRUNE_MAYBE) len[k++] = p->run_end[i] - b0;
  qsort(len, (size_t)decided, sizeof *len, cmp_u64_desc);
  const uint64_t keep = len[PS_PRUNE_MAX_RUNS - 1]; /* the shortest run kept */
  ps_host_free(ctx, len);
  uint64_t out = 0, kept = 0;
  for (uint64_t i = 0, b0 = 0; i < p->n_runs; b0 = p->run_end[i++]) {
    uint8_t st = p->run_state[i];
    if (st != PS_PRUNE_MAYBE && (p->run_end[i] - b0 < keep || kept == PS_PRUNE_MAX_RUNS))
      st = PS_PRUNE_MAYBE;
    else if (st != PS_PRUNE_MAYBE)
      kept++;
    if (out && p->run_state[out - 1] == st) {
      p->run_end[out - 1] = p->run_end[i];
    } else {
      p->run_end[out] = p->run_end[i];
      p->run_state[out++] = st;
    }
  }
  p->n_runs = out;
}

static ps_status make_plan(ps_context *ctx, ps_expr *e, ps_prune_plan *p) {
  const ps_lowered *low = e->lowered;
  p->usable = false;
  p->n_runs = 0;
  if (!low->prog.n_cols || !low->cols[0]->zones) return PS_OK;
  p->block_rows = low->cols[0]->zones->block_rows;
  for (uint32_t i = 0; i < low->prog.n_cols; i++)
    if (!zones_fit(low->cols[i], p->block_rows) || low->cols[i]->n != e->rows) return PS_OK;
  const uint64_t blocks = low->cols[0]->zones->blocks;
  /* runs: at most one per block; grown as found */
  uint64_t cap = 16;
  p->run_end = ps_host_alloc(ctx, cap * sizeof *p->run_end);
  p->run_state = ps_host_alloc(ctx, cap);
  if (!p->run_end || !p->run_state) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a pruning plan");
  for (uint64_t b = 0; b < blocks; b++) {
    int s = block_state(low, b);
    if (p->n_runs && p->run_state[p->n_runs - 1] == s) {
      p->run_end[p->n_runs - 1] = b + 1;
      continue;
    }
    if (p->n_runs == cap) {
      uint64_t *ne = ps_host_alloc(ctx, cap * 2 * sizeof *ne);
      uint8_t *ns = ps_host_alloc(ctx, cap * 2);
      if (!ne || !ns) {
        ps_host_free(ctx, ne);
        ps_host_free(ctx, ns);
        return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a pruning plan of %" PRIu64 " runs", cap * 2);
      }
      memcpy(ne, p->run_end, cap * sizeof *ne);
      memcpy(ns, p->run_state, cap);
      ps_host_free(ctx, p->run_end);
      ps_host_free(ctx, p->run_state);
      p->run_end = ne, p->run_state = ns, cap *= 2;
    }
    p->run_end[p->n_runs] = b + 1;
    p->run_state[p->n_runs] = (uint8_t)s;
    p->n_runs++;
  }
  limit_runs(ctx, p);
  /* A plan that decides nothing costs run lookups for nothing. */
  p->usable = !(p->n_runs == 1 && p->run_state[0] == PS_PRUNE_MAYBE);
  return PS_OK;
}

ps_status ps_prune_plan_of(ps_context *ctx, const ps_expr *expr, ps_column *const *extra, uint32_t n_extra,
                           const ps_prune_plan **out) {
  *out = NULL;
  if (!ctx->zone_pruning || !expr->lowered) return PS_OK;
  ps_expr *e = (ps_expr *)expr; /* the plan is a cache, not part of the tree's value */
  if (e->prune && e->prune->epoch != ctx->zone_epoch) ps_prune_plan_free(ctx, e);
  if (!e->prune) {
    ps_prune_plan *p = ps_calloc_ctx(ctx, 1, sizeof *p);
    if (!p) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a pruning plan");
    e->prune = p;
    p->epoch = ctx->zone_epoch;
    ps_status st = make_plan(ctx, e, p);
    if (st != PS_OK) {
      ps_prune_plan_free(ctx, e);
      return st;
    }
  }
  if (!e->prune->usable) return PS_OK;
  /* A run of blocks starts a backend's range of rows, which must start
   * where each column's chunk may (a DELTA column: on its blocks), the
   * columns the WHERE reads and the extra ones (a query's values and keys)
   * alike. */
  if (e->prune->block_rows % ps_chunk_step_multiple(expr->lowered->cols, expr->lowered->prog.n_cols)) return PS_OK;
  if (n_extra && e->prune->block_rows % ps_chunk_step_multiple(extra, n_extra)) return PS_OK;
  for (uint32_t i = 0; i < n_extra; i++)
    if (!extra[i]->zones || !extra[i]->zones->clean) return PS_OK;
  *out = e->prune;
  return PS_OK;
}

int ps_prune_state(const ps_prune_plan *p, uint64_t r, uint64_t end, uint64_t *run_end) {
  const uint64_t b = r / p->block_rows;
  uint64_t lo = 0, hi = p->n_runs - 1; /* the first run that ends past b */
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (p->run_end[mid] > b)
      hi = mid;
    else
      lo = mid + 1;
  }
  uint64_t e = p->run_end[lo] * p->block_rows;
  *run_end = e < end ? e : end;
  return p->run_state[lo];
}

PS_API ps_status ps_context_scan_stats(const ps_context *ctx, ps_scan_stats *out) {
  if (!ctx || !out || out->struct_size < offsetof(ps_scan_stats, bytes_read) + sizeof(uint64_t))
    return PS_ERR_INVALID_ARGUMENT;
  if (ctx->group) return ps_group_scan_stats(ctx, out);
  uint32_t size = out->struct_size < sizeof *out ? out->struct_size : (uint32_t)sizeof *out;
  ps_scan_stats s = ctx->scan_stats;
  s.struct_size = size;
  memcpy(out, &s, size);
  return PS_OK;
}

PS_API void ps_context_scan_stats_reset(ps_context *ctx) {
  if (!ctx) return;
  memset(&ctx->scan_stats, 0, sizeof ctx->scan_stats);
  for (uint32_t i = 0; ctx->group && i < ctx->group->n; i++) ps_context_scan_stats_reset(ctx->group->dev[i]);
}

PS_API void ps_context_set_zone_pruning(ps_context *ctx, int on) {
  if (!ctx) return;
  ctx->zone_pruning = on != 0;
  for (uint32_t i = 0; ctx->group && i < ctx->group->n; i++) ps_context_set_zone_pruning(ctx->group->dev[i], on);
}
