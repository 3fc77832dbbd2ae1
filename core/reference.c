/* The reference backend: plain serial C, written for clarity, not speed.
 * It is the oracle every other backend is compared with, so it follows the
 * per-row semantics of ps_program.h as literally as possible: decode each
 * code, compute each node's Kleene value, pack the row's bit.
 * "Device" memory is host memory from the context's allocator. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "query.h"
#include "ps_query_kernels.h" /* ps_q_group_find: a hashed plan's group table */

struct ps_backend {
  ps_context *ctx;
};

static ps_status ref_create(ps_context *ctx, const ps_context_options *opts, ps_backend **out) {
  ps_backend *be = ps_host_alloc(ctx, sizeof *be);
  if (!be) return ps_backend_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating the reference backend");
  be->ctx = ctx;
  *out = be;
  return PS_OK;
}

static void ref_destroy(ps_backend *be) { ps_host_free(be->ctx, be); }
static const char *ref_device_name(ps_backend *be) { return "host CPU (reference, serial C)"; }
static uint64_t ref_max_chunk_rows(ps_backend *be) { return (uint64_t)1 << 62; }

static ps_status ref_alloc(ps_backend *be, uint64_t bytes, ps_devmem *out) {
  if (bytes > SIZE_MAX) return ps_backend_error(be->ctx, PS_ERR_OUT_OF_MEMORY, "%" PRIu64 " bytes", bytes);
  void *p = ps_host_alloc(be->ctx, (size_t)bytes);
  if (!p) return ps_backend_error(be->ctx, PS_ERR_DEVICE_OUT_OF_MEMORY, "allocating %" PRIu64 " bytes of host memory", bytes);
  out->handle = p;
  out->offset = 0;
  return PS_OK;
}

static void ref_free(ps_backend *be, ps_devmem mem) { ps_host_free(be->ctx, mem.handle); }

static ps_status ref_write(ps_backend *be, ps_devmem dst, const void *src, uint64_t bytes) {
  memcpy((uint8_t *)dst.handle + dst.offset, src, (size_t)bytes);
  return PS_OK;
}

static ps_status ref_fill(ps_backend *be, ps_devmem dst, uint8_t value, uint64_t bytes) {
  (void)be;
  memset((uint8_t *)dst.handle + dst.offset, value, (size_t)bytes);
  return PS_OK;
}

/* Its "device" memory is host memory: host-resident columns are read in place. */
static ps_status ref_host_map(ps_backend *be, const void *host, ps_devmem *out) {
  (void)be;
  out->handle = (void *)(uintptr_t)host;
  out->offset = 0;
  return PS_OK;
}

static ps_status ref_read(ps_backend *be, void *dst, ps_devmem src, uint64_t bytes) {
  memcpy(dst, (const uint8_t *)src.handle + src.offset, (size_t)bytes);
  return PS_OK;
}

/* ---- per-row evaluation ------------------------------------------------------ */

typedef struct kleene {
  bool is_true, is_false;
} kleene;

static const kleene UNKNOWN = {false, false};
static kleene known(bool x) { return (kleene){x, !x}; }

typedef struct row_reader {
  const ps_program *prog;
  const uint8_t *data[PS_MAX_COLS];
  const uint8_t *validity[PS_MAX_COLS];
  const uint32_t *aux;
  bool corrupt;
  uint32_t corrupt_slot;
  uint64_t corrupt_row;
} row_reader;

/* Bits [first, first + w) of the bytes at p, LSB first, one byte at a time. */
static uint64_t bits_at(const uint8_t *p, uint64_t first, uint32_t w) {
  uint64_t code = 0;
  for (uint32_t got = 0; got < w;) {
    uint64_t bit = first + got;
    uint32_t take = 8 - (uint32_t)(bit % 8);
    if (take > w - got) take = w - got;
    uint64_t byte = p[bit / 8];
    uint64_t part = (byte >> (bit % 8)) & ((1u << take) - 1);
    code |= part << got;
    got += take;
  }
  return code;
}

/* A little-endian integer of `bytes` bytes. */
static uint64_t le_at(const uint8_t *p, unsigned bytes) {
  uint64_t v = 0;
  for (unsigned k = 0; k < bytes; k++) v |= (uint64_t)p[k] << (8 * k);
  return v;
}

/* The code of chunk row r. FOR: bits [r*w, r*w + w) of the stream. DELTA
 * (docs/design.md): from r's block header (the chunk starts on a block),
 * the anchor of r's row word, then the row word's deltas one by one, each
 * with the block's step. */
static uint64_t read_code(const row_reader *R, uint32_t slot, uint64_t r) {
  const ps_prog_col *c = &R->prog->cols[slot];
  if (c->encoding == PS_ENC_DELTA) {
    const uint8_t *h = R->data[slot] + (r / 1024) * 32;
    const uint64_t step = le_at(h + 8, 8);
    const uint32_t aw = h[24], dw = h[25];
    const uint8_t *payload = h + le_at(h + 16, 8);
    const uint64_t word = (r % 1024) / 32;
    uint64_t code = le_at(h, 8) + bits_at(payload, word * aw, aw);
    for (uint64_t i = 1; i <= r % 32; i++) code += step + bits_at(payload, 32 * aw + (word * 32 + i) * dw, dw);
    return code;
  }
  return bits_at(R->data[slot], r * c->width, c->width);
}

static bool is_valid(const row_reader *R, uint32_t slot, uint64_t r) {
  if (!(R->prog->cols[slot].flags & PS_COLF_VALIDITY)) return true;
  return (R->validity[slot][r / 8] >> (r % 8)) & 1;
}

/* The code of a valid row, after the corrupt-data check. */
static bool checked_code(row_reader *R, uint32_t slot, uint64_t r, uint64_t *code) {
  const ps_prog_col *c = &R->prog->cols[slot];
  *code = read_code(R, slot, r);
  if ((c->flags & PS_COLF_NO_CODES) || *code > c->code_limit) {
    if (!R->corrupt) R->corrupt = true, R->corrupt_slot = slot, R->corrupt_row = r;
    return false;
  }
  return true;
}

static bool aux_bit(const uint32_t *aux, uint64_t k) { return (aux[k / 32] >> (k % 32)) & 1; }

static bool compare_ordering(int order, uint32_t cmp) {
  switch (cmp) {
    case PS_CMP_EQ: return order == 0;
    case PS_CMP_NE: return order != 0;
    case PS_CMP_LT: return order < 0;
    case PS_CMP_LE: return order <= 0;
    case PS_CMP_GT: return order > 0;
    default: return order >= 0;
  }
}

/* Exact integer value as the (hi, lo) key of ps_program.h. */
static void int_key(const ps_prog_col *c, uint64_t code, uint32_t *hi, uint64_t *lo) {
  uint64_t v = c->reference + code;
  if (c->kind == PS_KIND_SIGNED) {
    *hi = (int64_t)v >= 0;
    *lo = v;
  } else {
    *hi = 1;
    *lo = v;
  }
}

static double as_double(const ps_prog_col *c, uint64_t code) {
  static const double pow10[] = PS_POW10_TABLE;
  uint64_t v = c->reference + code;
  switch (c->kind) {
    case PS_KIND_SIGNED: return (double)(int64_t)v;
    case PS_KIND_UNSIGNED: return (double)v;
    case PS_KIND_FLOAT64: return (double)(int64_t)v / pow10[c->scale];
    default: return (double)(float)((double)(int64_t)v / pow10[c->scale]);
  }
}

/* A lossless float operand of a column compare (PS_INSN_FMAP_A / B): the
 * mapping rebuilt from its descriptor at aux word `at` (ps_program.h) and
 * decoded by the host's rule (float_map.c's ps_fmap_decode and its tables),
 * the exception searched for here, in every gap: an implementation apart
 * from the kernels' ps_fdesc_double, which is checked against it. */
static double fdesc_value(const uint32_t *aux, uint32_t at, uint64_t code) {
  const uint32_t *d = aux + at;
  ps_fmap m;
  memset(&m, 0, sizeof m);
  m.map = d[0] & 0xffu, m.f32 = ((d[0] >> 8) & 1u) != 0;
  m.rank_bits = d[1] & 0xffu, m.e = (d[1] >> 8) & 0xffu, m.f = (d[1] >> 16) & 0xffu;
  m.ref = d[6] | (uint64_t)d[7] << 32;
  if (m.map == PS_FLOAT_MAP_ALP) {
    const uint32_t *table = d + PS_FDESC_HEAD;
    uint64_t lo = 0, hi = d[8]; /* the first entry above code */
    while (lo < hi) {
      const uint64_t mid = lo + (hi - lo) / 2;
      if ((table[PS_FDESC_ENTRY * mid] | (uint64_t)table[PS_FDESC_ENTRY * mid + 1] << 32) <= code)
        lo = mid + 1;
      else
        hi = mid;
    }
    if (lo) {
      const uint32_t *x = table + PS_FDESC_ENTRY * (lo - 1);
      if ((x[0] | (uint64_t)x[1] << 32) >> m.rank_bits == code >> m.rank_bits) {
        return ps_fmap_double(x[2] | (uint64_t)x[3] << 32);
      }
    }
  }
  return ps_fmap_decode(&m, code); /* no table: its grid value (ALP), or the bits */
}

static kleene leaf(row_reader *R, const ps_insn *in, uint64_t r) {
  bool negate = (in->flags & PS_INSN_NEGATE) != 0;
  uint32_t a = in->col_a;
  if (in->op == PS_OP_ISNULL) return known(!is_valid(R, a, r) ^ negate);
  if (!is_valid(R, a, r)) return UNKNOWN;
  uint64_t code;
  if (!checked_code(R, a, r, &code)) return UNKNOWN;
  switch (in->op) {
    case PS_OP_RANGE: return known((in->lo <= code && code <= in->hi) ^ negate);
    case PS_OP_SET: return known(aux_bit(R->aux, (uint64_t)in->aux_a + code) ^ negate);
    case PS_OP_INLIST: {
      /* the intervals are sorted and disjoint: the last one starting at or
       * before code is the only one that can hold it (IN lists have 10^4 and
       * more values) */
      uint64_t lo = 0, hi = in->lo;
      while (lo < hi) {
        uint64_t mid = lo + (hi - lo) / 2;
        const uint32_t *iv = R->aux + in->aux_a + 4 * mid;
        if ((iv[0] | ((uint64_t)iv[1] << 32)) <= code) lo = mid + 1;
        else hi = mid;
      }
      bool found = false;
      if (lo > 0) {
        const uint32_t *iv = R->aux + in->aux_a + 4 * (lo - 1);
        found = code <= (iv[2] | ((uint64_t)iv[3] << 32));
      }
      return known(found ^ negate);
    }
    default: break;
  }
  /* PS_OP_CMPCOL */
  uint32_t b = in->col_b;
  if (!is_valid(R, b, r)) return UNKNOWN;
  uint64_t code_b;
  if (!checked_code(R, b, r, &code_b)) return UNKNOWN;
  const ps_prog_col *ca = &R->prog->cols[a], *cb = &R->prog->cols[b];
  int order;
  switch (PS_INSN_MODE(in->flags)) {
    case PS_MODE_INT: {
      uint32_t ha, hb;
      uint64_t la, lb;
      int_key(ca, code, &ha, &la);
      int_key(cb, code_b, &hb, &lb);
      order = ha != hb ? (ha < hb ? -1 : 1) : (la < lb ? -1 : la > lb);
      break;
    }
    case PS_MODE_DOUBLE: {
      const double x = (in->flags & PS_INSN_FMAP_A) ? fdesc_value(R->aux, in->aux_a, code) : as_double(ca, code);
      const double y = (in->flags & PS_INSN_FMAP_B) ? fdesc_value(R->aux, in->aux_b, code_b) : as_double(cb, code_b);
      order = x < y ? -1 : x > y;
      break;
    }
    default: {
      uint32_t x = R->aux[in->aux_a + code], y = R->aux[in->aux_b + code_b];
      order = x < y ? -1 : x > y;
      break;
    }
  }
  return known(compare_ordering(order, PS_INSN_CMP(in->flags)));
}

static bool eval_row(row_reader *R, uint64_t r) {
  kleene stack[PS_MAX_STACK];
  int sp = 0;
  const ps_program *p = R->prog;
  for (uint32_t i = 0; i < p->n_insns; i++) {
    const ps_insn *in = &p->insns[i];
    switch (in->op) {
      case PS_OP_NOT: {
        kleene x = stack[sp - 1];
        stack[sp - 1] = (kleene){x.is_false, x.is_true};
        break;
      }
      case PS_OP_AND: {
        kleene y = stack[--sp], x = stack[sp - 1];
        stack[sp - 1] = (kleene){x.is_true && y.is_true, x.is_false || y.is_false};
        break;
      }
      case PS_OP_OR: {
        kleene y = stack[--sp], x = stack[sp - 1];
        stack[sp - 1] = (kleene){x.is_true || y.is_true, x.is_false && y.is_false};
        break;
      }
      default: stack[sp++] = leaf(R, in, r); break;
    }
  }
  return stack[0].is_true;
}

static ps_status ref_eval(ps_backend *be, const ps_eval_args *a) {
  row_reader R;
  memset(&R, 0, sizeof R);
  R.prog = a->prog;
  R.aux = a->aux_host;
  for (uint32_t i = 0; i < a->prog->n_cols; i++) {
    R.data[i] = (const uint8_t *)a->data[i].handle + a->data[i].offset;
    if (a->validity[i].handle) R.validity[i] = (const uint8_t *)a->validity[i].handle + a->validity[i].offset;
  }
  uint8_t *out = a->bitmap.handle ? (uint8_t *)a->bitmap.handle + a->bitmap.offset : NULL;
  uint8_t *mask = a->mask.handle ? (uint8_t *)a->mask.handle + a->mask.offset : NULL;
  const uint8_t *in = a->selection_in.handle ? (const uint8_t *)a->selection_in.handle + a->selection_in.offset : NULL;
  uint64_t selected = 0;
  uint8_t in_byte = 0xFF;
  for (uint64_t r = 0; r < a->rows; r++) {
    /* in and out may be the same bytes (in-place refinement): each input
     * byte is read once, before the output byte is rewritten. */
    if (in && r % 8 == 0) in_byte = in[r / 8];
    /* Rows outside the input selection are not evaluated at all. */
    bool sel = ((in_byte >> (r % 8)) & 1) && eval_row(&R, r);
    selected += sel;
    if (out) {
      uint8_t byte = r % 8 == 0 ? 0 : out[r / 8];
      out[r / 8] = (uint8_t)(byte | (sel << (r % 8)));
    }
    if (mask) mask[r] = sel;
  }
  if (R.corrupt)
    return ps_corrupt_error(be->ctx, R.corrupt_slot, &a->prog->cols[R.corrupt_slot], R.corrupt_row, R.corrupt_row,
                            -1);
  if (a->count) *a->count = selected;
  return PS_OK;
}

/* ---- after the filter ----------------------------------------------------- */

static bool bit_at(const uint8_t *bits, uint64_t r) { return (bits[r / 8] >> (r % 8)) & 1; }

static ps_status ref_row_ids(ps_backend *be, const ps_row_ids_args *a) {
  const uint8_t *bits = (const uint8_t *)a->bitmap.handle + a->bitmap.offset;
  uint8_t *out = a->out.handle ? (uint8_t *)a->out.handle + a->out.offset : NULL;
  uint64_t k = 0;
  for (uint64_t r = 0; r < a->rows; r++) {
    if (!bit_at(bits, r)) continue;
    uint64_t id = a->id_base + r;
    if (out && a->index_bytes == 4) {
      uint32_t v = (uint32_t)id;
      memcpy(out + k * 4, &v, 4);
    } else if (out) {
      memcpy(out + k * 8, &id, 8);
    }
    k++;
  }
  *a->count = k;
  return PS_OK;
}

/* A reader over one column for the reduce and gather entry points. */
static void single_column_reader(row_reader *R, ps_program *prog, const ps_prog_col *col, ps_devmem data,
                                 ps_devmem validity) {
  memset(R, 0, sizeof *R);
  memset(prog, 0, sizeof *prog);
  prog->n_cols = 1;
  prog->cols[0] = *col;
  R->prog = prog;
  R->data[0] = (const uint8_t *)data.handle + data.offset;
  if (validity.handle) R->validity[0] = (const uint8_t *)validity.handle + validity.offset;
}

static ps_status corrupt_error(ps_backend *be, const row_reader *R, int64_t id_index) {
  return ps_corrupt_error(be->ctx, 0, &R->prog->cols[0], R->corrupt_row, R->corrupt_row, id_index);
}

static ps_status ref_reduce(ps_backend *be, const ps_reduce_args *a) {
  ps_program prog;
  row_reader R;
  single_column_reader(&R, &prog, &a->col, a->data, a->validity);
  const uint8_t *sel = a->selection.handle ? (const uint8_t *)a->selection.handle + a->selection.offset : NULL;
  uint64_t count = 0, mn = UINT64_MAX, mx = 0, lo = 0, hi = 0;
  for (uint64_t r = 0; r < a->rows; r++) {
    if ((sel && !bit_at(sel, r)) || !is_valid(&R, 0, r)) continue;
    uint64_t code;
    if (!checked_code(&R, 0, r, &code)) return corrupt_error(be, &R, -1);
    count++;
    if (code < mn) mn = code;
    if (code > mx) mx = code;
    uint64_t before = lo;
    lo += code;
    hi += lo < before; /* carry into the high word */
  }
  *a->count = count, *a->min_code = mn, *a->max_code = mx, *a->sum_lo = lo, *a->sum_hi = hi;
  return PS_OK;
}

static ps_status ref_gather(ps_backend *be, const ps_gather_args *a) {
  ps_program prog;
  row_reader R;
  single_column_reader(&R, &prog, &a->col, a->data, a->validity);
  const uint8_t *ids = (const uint8_t *)a->ids.handle + a->ids.offset;
  uint8_t *values = (uint8_t *)a->values.handle + a->values.offset;
  uint8_t *vout = a->validity_out.handle ? (uint8_t *)a->validity_out.handle + a->validity_out.offset : NULL;
  for (uint64_t i = 0; i < a->count; i++) {
    uint64_t id;
    if (a->index_bytes == 4) {
      uint32_t v;
      memcpy(&v, ids + 4 * i, 4);
      id = v;
    } else {
      memcpy(&id, ids + 8 * i, 8);
    }
    if (id >= a->rows)
      return ps_backend_error(be->ctx, PS_ERR_INVALID_ARGUMENT, "ids[%" PRIu64 "] = %" PRIu64 " is past the column's %" PRIu64 " rows",
                              i, id, a->rows);
    bool valid = is_valid(&R, 0, id);
    uint64_t code = 0;
    if (valid && !checked_code(&R, 0, id, &code)) return corrupt_error(be, &R, (int64_t)i);
    uint8_t *dst = values + (uint64_t)a->value_bytes * i;
    uint64_t v = a->col.reference + code;
    if (!valid) {
      memset(dst, 0, a->value_bytes);
    } else if (a->out_type == PS_GATHER_CODE32) {
      uint32_t x = (uint32_t)v;
      memcpy(dst, &x, 4);
    } else if (a->out_type == PS_GATHER_INT) {
      memcpy(dst, &v, a->value_bytes); /* little-endian truncation */
    } else {
      double d = as_double(&a->col, code);
      if (a->out_type == PS_GATHER_F64) {
        memcpy(dst, &d, 8);
      } else {
        float f = (float)d;
        memcpy(dst, &f, 4);
      }
    }
    if (vout) {
      uint8_t byte = i % 8 == 0 ? 0 : vout[i / 8];
      vout[i / 8] = (uint8_t)(byte | (valid << (i % 8)));
    }
  }
  return PS_OK;
}

ps_status ps_gather_in_host_memory(ps_context *ctx, const ps_gather_args *a) {
  struct ps_backend be = {ctx};
  return ref_gather(&be, a);
}

/* ---- queries ---------------------------------------------------------------- */

__extension__ typedef __int128 q128;

/* 10^38 - 1: the largest magnitude of a value. */
static q128 max38(void) {
  q128 m = 1;
  for (int i = 0; i < 38; i++) m *= 10;
  return m - 1;
}

typedef struct qvalue {
  bool null, overflow;
  q128 v;
  bool unrep; /* not representable (PS_VOP_FCOL) */
} qvalue;

static qvalue checked(bool ok, q128 v, q128 limit) {
  qvalue r = {false, false, v, false};
  r.overflow = !ok || v > limit || v < -limit;
  return r;
}

/* The WHERE of a query on row r, with its short cuts (ps_query_program.h):
 * the right operand of an AND is evaluated only where its left one is not
 * FALSE, of an OR only where it is not TRUE (its leaves' codes are then not
 * read). */
static bool eval_where_row(row_reader *R, const ps_query_args *a, uint64_t r) {
  kleene stack[PS_MAX_STACK];
  bool live_stack[PS_MAX_STACK], live = true;
  int sp = 0, lp = 0;
  const ps_program *p = R->prog;
  for (uint32_t i = 0; i < p->n_insns; i++) {
    const ps_insn *in = &p->insns[i];
    if ((a->where_and_right >> i) & 1) {
      live_stack[lp++] = live;
      live = live && !stack[sp - 1].is_false;
    } else if ((a->where_or_right >> i) & 1) {
      live_stack[lp++] = live;
      live = live && !stack[sp - 1].is_true;
    }
    switch (in->op) {
      case PS_OP_NOT: {
        kleene x = stack[sp - 1];
        stack[sp - 1] = (kleene){x.is_false, x.is_true};
        break;
      }
      case PS_OP_AND: {
        kleene y = stack[--sp], x = stack[sp - 1];
        stack[sp - 1] = (kleene){x.is_true && y.is_true, x.is_false || y.is_false};
        live = live_stack[--lp];
        break;
      }
      case PS_OP_OR: {
        kleene y = stack[--sp], x = stack[sp - 1];
        stack[sp - 1] = (kleene){x.is_true || y.is_true, x.is_false && y.is_false};
        live = live_stack[--lp];
        break;
      }
      default: stack[sp++] = live ? leaf(R, in, r) : UNKNOWN; break;
    }
  }
  return stack[0].is_true;
}

/* PS_VOP_FCOL's exception of code c in slot s's table of the value aux
 * words, if the last entry at or below c lies in c's gap. */
static bool fcol_exception(const uint64_t *aux, uint32_t s, uint64_t c, uint32_t rank_bits, double *x) {
  const uint64_t *table = aux + aux[2 * s], n = aux[2 * s + 1];
  const uint64_t *found = NULL;
  for (uint64_t i = 0; i < n && table[2 * i] <= c; i++) found = &table[2 * i];
  if (!found || found[0] >> rank_bits != c >> rank_bits) return false;
  memcpy(x, &found[1], sizeof *x);
  return true;
}

/* PS_VOP_FCOL on a valid row's code c: the column's value by the host's
 * decode (float_map.c), then in units of 2^L (ps_query_program.h). */
static double fcol_double(const ps_vinsn *in, const uint64_t *aux, uint64_t c) {
  ps_fmap m;
  memset(&m, 0, sizeof m);
  m.map = PS_VF_MAP(in->lo);
  m.f32 = PS_VF_F32(in->lo) != 0;
  m.e = PS_VF_E(in->lo), m.f = PS_VF_F(in->lo), m.rank_bits = PS_VF_RANK(in->lo);
  m.ref = in->hi;
  double x;
  if (m.map != PS_FLOAT_MAP_ALP || !fcol_exception(aux, in->arg, c, m.rank_bits, &x))
    x = ps_fmap_decode(&m, c); /* no table: its grid value (ALP), or the bits */
  return x;
}

/* A double in units of 2^unit (PS_VOP_FCOL, PS_VOP_DUNITS). */
static qvalue double_units(double x, int64_t unit) {
  qvalue r = {false, false, 0, false};
  if (!isfinite(x)) return r.unrep = true, r;
  if (x == 0) return r;
  /* x = mant * 2^(ex - 53), mant a 53-bit integer */
  int ex;
  const double fr = frexp(fabs(x), &ex);
  int64_t mant = (int64_t)ldexp(fr, 53);
  int64_t shift = (int64_t)ex - 53 - unit;
  for (; shift < 0 && mant % 2 == 0; shift++) mant /= 2;
  if (shift < 0) return r.unrep = true, r; /* a bit below the unit */
  q128 v = mant;
  for (; shift > 0; shift--) {
    v *= 2; /* v < 2^126 before: no wrap-around */
    if (v >= (q128)1 << 126) return r.unrep = true, r;
  }
  r.v = x < 0 ? -v : v;
  return r;
}

static qvalue fcol_value(const ps_vinsn *in, const uint64_t *aux, uint64_t c) {
  return double_units(fcol_double(in, aux, c), PS_VF_UNIT(in->lo));
}

/* Doubles on the value stack: their bits in v (PS_VOP_DCOL and friends). */
static q128 double_q(double x) { return (q128)ps_fmap_bits(x); }

static double q_double(q128 v) { return ps_fmap_double((uint64_t)v); }

/* One value of a selected row (ps_query_program.h). */
static qvalue eval_value(row_reader *R, const ps_vprog *p, const ps_vagg *g, const uint8_t *const *preds,
                         const uint64_t *aux, uint64_t r, q128 limit) {
  qvalue st[PS_QMAX_STACK];
  int sp = 0;
  for (uint32_t i = g->first; i < g->first + g->count; i++) {
    const ps_vinsn *in = &p->insns[i];
    switch (in->op) {
      case PS_VOP_COL: {
        qvalue x = {true, false, 0, false};
        uint64_t code;
        if (is_valid(R, in->arg, r) && checked_code(R, in->arg, r, &code)) {
          const ps_prog_col *c = &p->cols[in->arg];
          uint64_t v = c->reference + code;
          x.null = false;
          x.v = c->kind == PS_KIND_UNSIGNED ? (q128)v : (q128)(int64_t)v;
        }
        st[sp++] = x;
        break;
      }
      case PS_VOP_FCOL: {
        qvalue x = {true, false, 0, false};
        uint64_t code;
        if (is_valid(R, in->arg, r) && checked_code(R, in->arg, r, &code)) x = fcol_value(in, aux, code);
        st[sp++] = x;
        break;
      }
      case PS_VOP_DCOL:
      case PS_VOP_DNUM: {
        qvalue x = {true, false, 0, false};
        uint64_t code;
        if (is_valid(R, in->arg, r) && checked_code(R, in->arg, r, &code)) {
          x.null = false;
          x.v = double_q(in->op == PS_VOP_DCOL ? fcol_double(in, aux, code)
                                               : ps_fmap_dnum(p->cols[in->arg].kind, p->cols[in->arg].reference + code,
                                                              q_double((q128)in->lo)));
        }
        st[sp++] = x;
        break;
      }
      case PS_VOP_DCONST:
        st[sp++] = (qvalue){false, false, (q128)in->lo, false};
        break;
      case PS_VOP_DUNITS: {
        qvalue *x = &st[sp - 1];
        if (!x->null && !x->overflow && !x->unrep) *x = double_units(q_double(x->v), (int64_t)in->arg - 2048);
        break;
      }
      case PS_VOP_DORD: {
        qvalue *x = &st[sp - 1];
        if (x->null || x->overflow || x->unrep) break;
        const double d = q_double(x->v);
        if (isnan(d)) {
          x->v = 0;
          x->unrep = in->arg != PS_DORD_COUNT;
        } else {
          x->v = ps_query_ordered_bits(d);
        }
        break;
      }
      case PS_VOP_DADD:
      case PS_VOP_DSUB:
      case PS_VOP_DMUL: {
        qvalue b = st[--sp], a = st[sp - 1], x = {a.null || b.null, a.overflow || b.overflow, 0, a.unrep || b.unrep};
        if (!x.null && !x.overflow && !x.unrep) x.v = double_q(ps_fmap_darith(in->op, q_double(a.v), q_double(b.v)));
        st[sp - 1] = x;
        break;
      }
      case PS_VOP_CONST: st[sp++] = (qvalue){false, false, (q128)(((unsigned __int128)in->hi << 64) | in->lo), false}; break;
      case PS_VOP_NULL: st[sp++] = (qvalue){true, false, 0, false}; break;
      case PS_VOP_SCALE: {
        qvalue *x = &st[sp - 1];
        if (x->null || x->overflow || x->unrep) break;
        q128 v = x->v;
        bool ok = true;
        for (uint32_t k = 0; k < in->arg && ok; k++) ok = !__builtin_mul_overflow(v, 10, &v);
        *x = checked(ok, v, limit);
        break;
      }
      case PS_VOP_CASE: {
        qvalue e = st[--sp], t = st[sp - 1];
        st[sp - 1] = bit_at(preds[in->arg], r) ? t : e;
        break;
      }
      default: {
        qvalue b = st[--sp], a = st[sp - 1], x = {a.null || b.null, a.overflow || b.overflow, 0, a.unrep || b.unrep};
        if (!x.null && !x.overflow && !x.unrep) {
          q128 v;
          bool ok = in->op == PS_VOP_ADD   ? !__builtin_add_overflow(a.v, b.v, &v)
                    : in->op == PS_VOP_SUB ? !__builtin_sub_overflow(a.v, b.v, &v)
                                           : !__builtin_mul_overflow(a.v, b.v, &v);
          x = checked(ok, v, limit);
        }
        st[sp - 1] = x;
        break;
      }
    }
  }
  return st[0];
}

static void acc_add(ps_qacc *acc, q128 v) {
  unsigned __int128 lo = ((unsigned __int128)acc->sum1 << 64) | acc->sum0;
  unsigned __int128 sum = lo + (unsigned __int128)v;
  uint64_t carry = sum < lo;                  /* carry out of the low 128 bits */
  acc->sum2 += carry + (v < 0 ? UINT64_MAX : 0); /* plus v's sign extension */
  acc->sum0 = (uint64_t)sum;
  acc->sum1 = (uint64_t)(sum >> 64);
  q128 mn = (q128)(((unsigned __int128)acc->min_hi << 64) | acc->min_lo);
  q128 mx = (q128)(((unsigned __int128)acc->max_hi << 64) | acc->max_lo);
  if (v < mn) acc->min_lo = (uint64_t)v, acc->min_hi = (uint64_t)((unsigned __int128)v >> 64);
  if (v > mx) acc->max_lo = (uint64_t)v, acc->max_hi = (uint64_t)((unsigned __int128)v >> 64);
  acc->count++;
}

/* A hashed plan's keys pass: key into the group table (ps_query_args.groups)
 * by its own placement (Fibonacci hashing, linear probing; the host reads
 * the keys wherever they are); a full table sets word 2 * slots. */
static void insert_key(uint64_t *t, uint64_t slots, uint64_t key) {
  uint32_t bits = 0;
  while (((uint64_t)1 << bits) < slots) bits++;
  uint64_t i = bits ? (key * UINT64_C(0x9E3779B97F4A7C15)) >> (64 - bits) : 0;
  for (uint64_t n = 0; n < slots; n++, i = (i + 1) & (slots - 1)) {
    if (t[i] == key) return;
    if (t[i] == PS_Q_NO_KEY) {
      t[i] = key;
      return;
    }
  }
  t[2 * slots] = 1;
}

static ps_status ref_query(ps_backend *be, const ps_query_args *a) {
  const ps_vprog *p = a->prog;
  /* The row reader's program: the WHERE's instructions (if any) over every
   * slot of the query (the WHERE's slots are its first ones). */
  ps_program cols;
  memset(&cols, 0, sizeof cols);
  if (a->where_prog) cols = *a->where_prog;
  cols.n_cols = p->n_cols;
  memcpy(cols.cols, p->cols, sizeof p->cols);
  row_reader R;
  memset(&R, 0, sizeof R);
  R.prog = &cols;
  R.aux = a->where_aux_host;
  for (uint32_t i = 0; i < p->n_cols; i++) {
    R.data[i] = (const uint8_t *)a->data[i].handle + a->data[i].offset;
    if (a->validity[i].handle) R.validity[i] = (const uint8_t *)a->validity[i].handle + a->validity[i].offset;
  }
  const uint8_t *where = NULL; /* NULL: every row */
  const uint8_t *preds[PS_QMAX_PREDS];
  for (uint32_t i = 0; i < p->n_preds; i++) preds[i] = (const uint8_t *)a->preds[i].handle + a->preds[i].offset;
  const bool keys_pass = p->group_slots != 0 && p->group_pass != 0;
  ps_qacc *acc = keys_pass ? NULL : (ps_qacc *)((uint8_t *)a->acc.handle + a->acc.offset);
  uint64_t *table = p->group_slots ? (uint64_t *)((uint8_t *)a->groups.handle + a->groups.offset) : NULL;
  const q128 limit = max38();
  bool overflow = false;
  uint64_t overflow_row = 0;
  uint32_t overflow_agg = 0;
  bool unrep = false; /* the first row and aggregate whose value is not representable */
  uint64_t unrep_row = 0;
  uint32_t unrep_agg = 0;
  /* The WHERE is evaluated on every row first: a corrupt code its leaves
   * read fails the chunk whichever rows it selects. */
  uint8_t *selected = NULL;
  if (a->where_prog) {
    selected = ps_host_alloc(be->ctx, (size_t)(a->rows + 7) / 8);
    if (!selected) return ps_backend_error(be->ctx, PS_ERR_OUT_OF_MEMORY, "reference: query selection");
    memset(selected, 0, (size_t)(a->rows + 7) / 8);
    for (uint64_t r = 0; r < a->rows; r++)
      if (eval_where_row(&R, a, r)) selected[r / 8] |= (uint8_t)(1u << (r % 8));
    where = selected;
  }
  ps_status st = R.corrupt ? PS_ERR_CORRUPT_DATA : PS_OK;
  for (uint64_t r = 0; st == PS_OK && r < a->rows; r++) {
    if (where && !bit_at(where, r)) continue;
    /* every slot a value or key reads is read (and checked) on a selected
     * row; a hashed plan's keys pass reads its keys only */
    uint64_t codes[PS_MAX_COLS];
    uint32_t slots = p->read_slots;
    if (keys_pass) {
      slots = 0;
      for (uint32_t k = 0; k < p->n_keys; k++) slots |= 1u << p->key_slot[k];
    }
    for (uint32_t i = 0; i < p->n_cols; i++)
      if (((slots >> i) & 1) && is_valid(&R, i, r)) checked_code(&R, i, r, &codes[i]);
    if (R.corrupt) {
      st = PS_ERR_CORRUPT_DATA;
      break;
    }
    uint64_t g = 0;
    for (uint32_t k = 0; k < p->n_keys; k++) {
      uint32_t s = p->key_slot[k];
      uint64_t index = p->key_domain[k] - 1;
      if (is_valid(&R, s, r)) {
        const ps_qkeyfn *f = &p->key_fn[k];
        if (f->op == PS_QKEY_CODE) {
          index = codes[s];
        } else {
          const int64_t i =
              ps_key_ordinal(f->op, f->unit, f->arg, (int64_t)(p->cols[s].reference + codes[s])) - f->base;
          index = i < 0 ? 0 : i >= (int64_t)f->values ? f->values - 1 : (uint64_t)i;
        }
      }
      g += index * p->key_stride[k];
    }
    if (keys_pass) {
      insert_key(table, p->group_slots, g);
      continue;
    }
    if (p->group_slots != 0) g = ps_q_group_find(table, p->group_slots, g, p->n_groups);
    if (g >= p->n_groups && p->n_keys) {
      st = ps_backend_error(be->ctx, PS_ERR_INTERNAL, "reference: row %" PRIu64 "'s group key is not in its table",
                            a->row_begin + r);
      break;
    }
    ps_qacc *ga = acc + g * p->n_accs;
    ga[0].count++;
    for (uint32_t i = 0; i < p->n_aggs; i++) {
      if (p->aggs[i].count == 0) {
        ga[1 + i].count++;
        continue;
      }
      qvalue v = eval_value(&R, p, &p->aggs[i], preds, a->value_aux_host, r, limit);
      if (v.overflow && !overflow) overflow = true, overflow_row = r, overflow_agg = i;
      if (v.unrep && !v.overflow && !unrep) unrep = true, unrep_row = r, unrep_agg = i;
      if (!v.null && !v.overflow && !v.unrep) acc_add(&ga[1 + i], v.v);
    }
  }
  ps_host_free(be->ctx, selected);
  if (st != PS_OK && st != PS_ERR_CORRUPT_DATA) return st;
  if (st == PS_ERR_CORRUPT_DATA)
    return ps_backend_error(be->ctx, PS_ERR_CORRUPT_DATA, "row %" PRIu64 " of column slot %u holds a code outside its range",
                            a->row_begin + R.corrupt_row, R.corrupt_slot);
  /* A corrupt code anywhere in the chunk outranks an overflow (the run goes on to look for one). */
  if (overflow)
    return ps_backend_error(be->ctx, PS_ERR_OVERFLOW, "row %" PRIu64 ": the value of aggregate %u does not fit %d digits",
                            a->row_begin + overflow_row, overflow_agg, PS_QUERY_MAX_DIGITS);
  if (unrep) {
    if (a->fault) a->fault->row = unrep_row, a->fault->agg = unrep_agg;
    return ps_backend_error(be->ctx, PS_ERR_NOT_REPRESENTABLE, "row %" PRIu64 ": the value of aggregate %u",
                            a->row_begin + unrep_row, unrep_agg);
  }
  return PS_OK;
}

const ps_backend_ops ps_backend_reference = {
    .abi_version = PS_BACKEND_ABI_VERSION,
    .name = "reference",
    .create = ref_create,
    .destroy = ref_destroy,
    .device_name = ref_device_name,
    .max_chunk_rows = ref_max_chunk_rows,
    .mem_alloc = ref_alloc,
    .mem_free = ref_free,
    .mem_write = ref_write,
    .mem_read = ref_read,
    .eval = ref_eval,
    .row_ids = ref_row_ids,
    .reduce = ref_reduce,
    .gather = ref_gather,
    .query = ref_query,
    .fill = ref_fill,
    .host_map = ref_host_map,
};
