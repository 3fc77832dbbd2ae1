/*
 * Host encoders and decoders: frame-of-reference (FOR) bit packing of
 * integers and decimal-scaled floats, and sorted string dictionaries.
 * Pure functions over host memory; no context. The formats are the binding
 * ones of docs/design.md ("Column formats").
 *
 * One idea carries the integer paths: every value becomes a 64-bit unsigned
 * "key" that orders like the value (signed values have their sign bit
 * flipped). Then the reference M is the smallest key, a code is key - M in
 * unsigned arithmetic, and the full int64 and uint64 ranges (a spread of up
 * to 2^64 - 1) need no special case and never overflow.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "ps_codes.h" /* DELTA codes are decoded as the kernels read them */

#define SIGN_BIT ((uint64_t)1 << 63)
#define MAX_SCALE 18

/* 10^0 .. 10^18 are exact doubles (5^18 < 2^53), so decoding divides by the
 * exact power the format names. */
static const double pow10_table[MAX_SCALE + 1] = {
    1e0, 1e1, 1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,
    1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};

/* ---- small helpers ------------------------------------------------------- */

static bool row_valid(const uint8_t *validity, uint64_t i) {
  return !validity || ((validity[i >> 3] >> (i & 7)) & 1u);
}

#define width_mask ps_width_mask

/* Bits needed to hold v (0 for v == 0). */
static uint32_t bit_length(uint64_t v) {
  uint32_t n = 0;
  while (v) {
    n++;
    v >>= 1;
  }
  return n;
}

/* Two's-complement reinterpretation without relying on implementation-defined
 * unsigned-to-signed conversion. */
static int64_t u64_to_i64(uint64_t u) {
  return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1;
}

#define packed_bytes ps_for_packed_bytes

static uint64_t validity_bytes(uint64_t n) { return (n >> 3) + ((n & 7) != 0); }

static bool allocator_ok(const ps_allocator *a) {
  return !a || ((a->alloc == NULL) == (a->free == NULL));
}

/* A validity copy whose bits past n are cleared, so that a copy is canonical
 * whatever the caller left in its padding bits. */
static uint8_t *copy_validity(const ps_allocator *a, const uint8_t *src, uint64_t n) {
  size_t bytes = (size_t)validity_bytes(n);
  uint8_t *v = ps_alloc_with(a, bytes);
  if (!v) return NULL;
  if (src) {
    if (bytes) memcpy(v, src, bytes);
  } else if (bytes) {
    memset(v, 0xff, bytes);
  }
  if (n & 7) v[bytes - 1] &= (uint8_t)((1u << (n & 7)) - 1);
  return v;
}

/* ---- bit streams --------------------------------------------------------- */

/* Sequential writer: codes are appended LSB first and flushed 64 bits at a
 * time as little-endian bytes, so the output never depends on host byte order
 * and is written exactly once (no read-modify-write of the buffer). */
typedef struct bit_writer {
  uint8_t *p;
  uint64_t acc;
  uint32_t nbits; /* bits pending in acc, always < 64 */
} bit_writer;

static void store_le(uint8_t *p, uint64_t v, uint32_t bytes) {
  for (uint32_t k = 0; k < bytes; k++) p[k] = (uint8_t)(v >> (8 * k));
}

/* w in 1..64, code < 2^w. */
static void bw_put(bit_writer *bw, uint64_t code, uint32_t w) {
  bw->acc |= code << bw->nbits;
  uint32_t total = bw->nbits + w;
  if (total < 64) {
    bw->nbits = total;
    return;
  }
  store_le(bw->p, bw->acc, 8);
  bw->p += 8;
  total -= 64;
  /* The bits of code that did not fit; total > 0 implies nbits > 0, so the
   * shift is in 1..63. */
  bw->acc = total ? code >> (w - total) : 0;
  bw->nbits = total;
}

static void bw_flush(bit_writer *bw) {
  store_le(bw->p, bw->acc, (bw->nbits + 7) / 8);
  bw->p += (bw->nbits + 7) / 8;
  bw->acc = 0;
  bw->nbits = 0;
}

/* Code at bit position pos of a stream of w-bit codes (w in 1..64). Touches
 * only bytes that hold bits of this code, so it never reads past a stream of
 * exactly ceil(n*w/8) bytes. */
static uint64_t read_code(const uint8_t *p, uint64_t pos, uint32_t w) {
  const uint8_t *b = p + (pos >> 3);
  uint32_t sh = (uint32_t)(pos & 7);
  uint32_t nbytes = (sh + w + 7) / 8; /* 1..9 */
  uint64_t lo = 0;
  for (uint32_t k = 0; k < nbytes && k < 8; k++) lo |= (uint64_t)b[k] << (8 * k);
  uint64_t v = lo >> sh;
  if (nbytes == 9) v |= (uint64_t)b[8] << (64 - sh); /* nbytes == 9 implies sh > 0 */
  return v & width_mask(w);
}

/* ---- values -------------------------------------------------------------- */

/* Order-preserving unsigned key of integer value i. */
static uint64_t int_key(ps_type t, const void *values, uint64_t i) {
  switch (t) {
    case PS_TYPE_INT8: return (uint64_t)(int64_t)((const int8_t *)values)[i] ^ SIGN_BIT;
    case PS_TYPE_INT16: return (uint64_t)(int64_t)((const int16_t *)values)[i] ^ SIGN_BIT;
    case PS_TYPE_INT32: return (uint64_t)(int64_t)((const int32_t *)values)[i] ^ SIGN_BIT;
    case PS_TYPE_INT64:
    case PS_TYPE_DECIMAL: return (uint64_t)((const int64_t *)values)[i] ^ SIGN_BIT;
    case PS_TYPE_UINT8: return ((const uint8_t *)values)[i];
    case PS_TYPE_UINT16: return ((const uint16_t *)values)[i];
    case PS_TYPE_UINT32: return ((const uint32_t *)values)[i];
    case PS_TYPE_UINT64: return ((const uint64_t *)values)[i];
    default: return 0;
  }
}

static double float_value(ps_type t, const void *values, uint64_t i) {
  return t == PS_TYPE_FLOAT32 ? (double)((const float *)values)[i] : ((const double *)values)[i];
}

/* Human-readable input value of row i, for messages. */
static void format_input(char *buf, size_t size, ps_type t, const void *values, uint64_t i) {
  if (ps_type_is_float(t))
    snprintf(buf, size, "%.17g", float_value(t, values, i));
  else if (ps_type_is_signed(t))
    snprintf(buf, size, "%" PRId64, u64_to_i64(int_key(t, values, i) ^ SIGN_BIT));
  else
    snprintf(buf, size, "%" PRIu64, int_key(t, values, i));
}

/* The float decode rule of the format: (double)k / 10^s, then rounded to
 * float for float32 columns. */
static bool decodes_to(int64_t k, uint32_t s, bool f32, double x) {
  double d = (double)k / pow10_table[s];
  if (f32) return (float)d == (float)x;
  /* Value equality, not bit equality: the only finite values that differ in
   * bits but compare equal are -0.0 and +0.0. -0.0 is accepted as k = 0 and
   * decodes to +0.0; predicates compare floats as IEEE values, so no query
   * can tell them apart. */
  return d == x;
}

/* Finds k with decode(k, s) == x. The rounded product is the natural
 * candidate; its neighbours cover the rounding of the product itself when
 * |x * 10^s| is past 2^53 and doubles are sparser than integers. */
static bool float_k(double x, uint32_t s, bool f32, int64_t *k_out) {
  const double two63 = 9223372036854775808.0;
  double p = x * pow10_table[s];
  if (!(p >= -two63 && p < two63)) return false; /* k must be an int64 */
  int64_t k0 = llround(p);
  if (decodes_to(k0, s, f32, x)) {
    *k_out = k0;
    return true;
  }
  if (k0 > INT64_MIN && decodes_to(k0 - 1, s, f32, x)) {
    *k_out = k0 - 1;
    return true;
  }
  if (k0 < INT64_MAX && decodes_to(k0 + 1, s, f32, x)) {
    *k_out = k0 + 1;
    return true;
  }
  return false;
}

/* Smallest common scale >= *scale at which every valid value round-trips.
 * Each increase is forced (the value that caused it fails at every scale
 * skipped), so the result is the smallest common scale; the loop repeats
 * until one pass finds no failure, so no monotonicity of "x fits at s" is
 * assumed. */
static ps_status choose_scale(const ps_plain *in, const uint8_t *valid, char *err_buf,
                              size_t err_size, uint32_t *scale) {
  bool f32 = in->type == PS_TYPE_FLOAT32;
  uint32_t s = 0;
  bool changed = true;
  while (changed) {
    changed = false;
    for (uint64_t i = 0; i < in->n; i++) {
      if (!row_valid(valid, i)) continue;
      double x = float_value(in->type, in->values, i);
      int64_t k;
      if (float_k(x, s, f32, &k)) continue;
      uint32_t t = s + 1;
      while (t <= MAX_SCALE && !float_k(x, t, f32, &k)) t++;
      if (t > MAX_SCALE) {
        bool any = false;
        for (uint32_t u = 0; u < s && !any; u++) any = float_k(x, u, f32, &k);
        if (!any)
          return ps_set_error_buf(err_buf, err_size, PS_ERR_NOT_REPRESENTABLE,
                                  "row %" PRIu64 ": value %.17g is not k/10^s for any integer k "
                                  "and scale s in 0..18 (as %s)",
                                  i, x, ps_type_name(in->type));
        return ps_set_error_buf(err_buf, err_size, PS_ERR_NOT_REPRESENTABLE,
                                "row %" PRIu64 ": value %.17g needs a decimal scale below %u, "
                                "but earlier values need scale %u or more; no common scale "
                                "in 0..18 represents every value",
                                i, x, s, s);
      }
      s = t;
      changed = true;
    }
  }
  *scale = s;
  return PS_OK;
}

/* ---- FOR encoding -------------------------------------------------------- */

PS_API void ps_for_desc_init(ps_for_desc *desc) {
  if (!desc) return;
  memset(desc, 0, sizeof *desc);
  desc->struct_size = (uint32_t)sizeof *desc;
}

PS_API void ps_dict_desc_init(ps_dict_desc *desc) {
  if (!desc) return;
  memset(desc, 0, sizeof *desc);
  desc->struct_size = (uint32_t)sizeof *desc;
}

PS_API void ps_encoded_destroy(ps_encoded *enc) {
  if (!enc) return;
  ps_allocator a = enc->allocator;
  ps_free_with(&a, enc->data);
  ps_free_with(&a, enc->validity);
  ps_free_with(&a, (void *)enc->desc.zones); /* ps_zones_for_encoded: one allocation */
  memset(enc, 0, sizeof *enc);
}

/* Key of row i under the chosen encoding (floats: the scaled integer, which
 * choose_scale or the requested-scale check has proven to exist). */
static uint64_t row_key(const ps_plain *in, uint32_t scale, uint64_t i) {
  if (ps_type_is_float(in->type)) {
    int64_t k = 0;
    (void)float_k(float_value(in->type, in->values, i), scale, in->type == PS_TYPE_FLOAT32, &k);
    return (uint64_t)k ^ SIGN_BIT;
  }
  return int_key(in->type, in->values, i);
}

/* The lossless mapping of a float column's valid values (float_map.c): the
 * codes packed as any FOR stream, the exception table after them in the
 * same allocation (8-byte aligned). r holds the allocator and validity. */
static ps_status encode_mapped(const ps_plain *in, const uint8_t *valid, uint32_t width, ps_encoded *r, char *err_buf,
                               size_t err_size) {
  ps_fmap_result m;
  const uint64_t n = in->n;
  PS_TRY(ps_fmap_build(in, valid, &r->allocator, err_buf, err_size, &m));
  ps_status st = PS_OK;
  const uint32_t w = width ? width : bit_length(m.max_code);
  uint64_t data_size;
  if (m.max_code > width_mask(w)) {
    st = ps_set_error_buf(err_buf, err_size, PS_ERR_NOT_REPRESENTABLE,
                          "the lossless float mapping (%s) needs width %u but width %u was requested",
                          m.map == PS_FLOAT_MAP_ALP ? "ALP" : "bits", bit_length(m.max_code), w);
    goto done;
  }
  if (!packed_bytes(n, w, &data_size) || data_size > SIZE_MAX / 2 ||
      m.n_exc > (SIZE_MAX / 2) / sizeof(ps_float_exception)) {
    st = ps_set_error_buf(err_buf, err_size, PS_ERR_LIMIT, "%" PRIu64 " rows of width %u do not fit in host memory", n,
                          w);
    goto done;
  }
  const size_t table_at = (size_t)(data_size + 7) / 8 * 8;
  r->data = ps_alloc_with(&r->allocator, table_at + (size_t)m.n_exc * sizeof(ps_float_exception) + 1);
  if (!r->data) {
    st = ps_set_error_buf(err_buf, err_size, PS_ERR_OUT_OF_MEMORY,
                          "allocating the encoded column of %" PRIu64 " rows failed", n);
    goto done;
  }
  if (w) {
    bit_writer bw = {(uint8_t *)r->data, 0, 0};
    for (uint64_t i = 0; i < n; i++) bw_put(&bw, m.codes[i], w);
    bw_flush(&bw);
  }
  ps_float_exception *table = (ps_float_exception *)(void *)((uint8_t *)r->data + table_at);
  if (m.n_exc) memcpy(table, m.exc, (size_t)m.n_exc * sizeof *table);
  if (in->validity && !r->validity) {
    r->validity = copy_validity(&r->allocator, in->validity, n);
    if (!r->validity) {
      st = ps_set_error_buf(err_buf, err_size, PS_ERR_OUT_OF_MEMORY,
                            "allocating the encoded column of %" PRIu64 " rows failed", n);
      goto done;
    }
  }
  ps_for_desc_init(&r->desc);
  r->desc.type = in->type;
  r->desc.n = n;
  r->desc.width = w;
  r->desc.reference.u = m.reference;
  r->desc.data = r->data;
  r->desc.data_size = data_size;
  r->desc.validity = r->validity;
  r->desc.validity_size = r->validity ? validity_bytes(n) : 0;
  r->desc.float_map = m.map;
  r->desc.float_e = m.e;
  r->desc.float_f = m.f;
  r->desc.float_rank_bits = m.rank_bits;
  r->desc.exceptions = m.n_exc ? table : NULL;
  r->desc.exceptions_count = m.n_exc;
  r->desc.zones = ps_zones_for_encoded(&r->allocator, r->data, w, r->validity, n);
  if (!r->desc.zones)
    st = ps_set_error_buf(err_buf, err_size, PS_ERR_OUT_OF_MEMORY,
                          "allocating the zone maps of %" PRIu64 " rows failed", n);
done:
  ps_fmap_result_free(&m);
  return st;
}

PS_API ps_status ps_encode_for(const ps_plain *in, uint32_t width, int scale, int nan_as_null,
                               const ps_allocator *allocator, char *err_buf, size_t err_size,
                               ps_encoded *out) {
  if (!out) return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT, "out is NULL");
  memset(out, 0, sizeof *out);
  if (!in) return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT, "in is NULL");
  ps_type type = in->type;
  bool is_float = ps_type_is_float(type);
  if (!is_float && !ps_type_is_integer(type))
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "in->type %d (%s) cannot be FOR-encoded: expected int8..uint64, decimal, "
                            "float32 or float64 (strings use ps_encode_dict)",
                            (int)type, ps_type_name(type) ? ps_type_name(type) : "invalid");
  if (in->n && !in->values)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "in->values is NULL but in->n is %" PRIu64, in->n);
  if (width > 64)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "width %u: expected 0 (smallest) or 1..64", width);
  if (scale > MAX_SCALE)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "scale %d: expected a negative value (choose) or 0..18", scale);
  if (ps_type_is_decimal(type) && scale < 0)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "scale %d for decimal values: expected their scale, 0..18 (decimal "
                            "values are int64 unscaled numbers; their scale is not chosen)",
                            scale);
  if (!is_float && !ps_type_is_decimal(type) && scale > 0)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "scale %d given for integer type %s: expected 0 or negative", scale,
                            ps_type_name(type));
  if (!allocator_ok(allocator))
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "allocator: alloc and free must both be set or both be NULL");
  if (in->n > SIZE_MAX / ps_type_size(type))
    return ps_set_error_buf(err_buf, err_size, PS_ERR_LIMIT,
                            "in->n %" PRIu64 " values do not fit in host memory", in->n);

  const uint64_t n = in->n;
  ps_encoded r;
  memset(&r, 0, sizeof r);
  if (allocator) r.allocator = *allocator;
  ps_status st = PS_OK;
  const uint8_t *valid = in->validity;

  /* NaN: rejected, or turned into nulls in a private validity copy (the
   * caller's bitmap is never written). Infinities and -0.0 need a lossless
   * mapping (a decimal scale cannot hold them); a demanded scale refuses
   * infinities as before. */
  bool needs_map = false;
  if (is_float) {
    for (uint64_t i = 0; i < n; i++) {
      if (!row_valid(valid, i)) continue;
      double x = float_value(type, in->values, i);
      if (x == 0 && signbit(x)) needs_map = true;
      if (isfinite(x)) continue;
      if (isinf(x) && scale < 0) {
        needs_map = true;
        continue;
      }
      if (!nan_as_null) {
        st = ps_set_error_buf(
            err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
            "row %" PRIu64 ": value %g is %s (pass nan_as_null to store it as a null%s)", i, x,
            isnan(x) ? "NaN; float columns hold no NaN" : "infinite; a decimal scale holds finite values only",
            isnan(x) ? "" : ", or scale -1 for a lossless mapping");
        goto fail;
      }
      if (!r.validity) {
        r.validity = copy_validity(&r.allocator, in->validity, n);
        if (!r.validity) goto oom;
        valid = r.validity;
      }
      r.validity[i >> 3] &= (uint8_t)~(1u << (i & 7));
    }
  }

  uint32_t use_scale = ps_type_is_decimal(type) ? (uint32_t)scale : 0;
  if (is_float) {
    if (scale >= 0) {
      use_scale = (uint32_t)scale;
      for (uint64_t i = 0; i < n; i++) {
        int64_t k;
        if (!row_valid(valid, i)) continue;
        double x = float_value(type, in->values, i);
        if (!float_k(x, use_scale, type == PS_TYPE_FLOAT32, &k)) {
          st = ps_set_error_buf(err_buf, err_size, PS_ERR_NOT_REPRESENTABLE,
                                "row %" PRIu64 ": value %.17g is not exactly k/10^%d for an "
                                "integer k (as %s); pass scale -1 to choose the scale",
                                i, x, scale, ps_type_name(type));
          goto fail;
        }
      }
    } else {
      /* FOR-decimal when every value is a decimal at one scale (its sums
       * are exact); else the lossless mapping (float_map.c). */
      st = needs_map || scale == PS_FLOAT_SCALE_LOSSLESS ? PS_ERR_NOT_REPRESENTABLE
                                                         : choose_scale(in, valid, err_buf, err_size, &use_scale);
      if (st == PS_ERR_NOT_REPRESENTABLE) {
        if (err_buf && err_size) err_buf[0] = '\0';
        st = encode_mapped(in, valid, width, &r, err_buf, err_size);
        if (st != PS_OK) goto fail;
        *out = r;
        return PS_OK;
      }
      if (st != PS_OK) goto fail;
    }
  }

  /* Reference and spread over the valid rows. With no valid row the
   * reference is the value 0 and every code is 0. */
  uint64_t min_key = UINT64_MAX, max_key = 0;
  bool any = false;
  for (uint64_t i = 0; i < n; i++) {
    if (!row_valid(valid, i)) continue;
    uint64_t key = row_key(in, use_scale, i);
    if (key < min_key) min_key = key;
    if (key > max_key) max_key = key;
    any = true;
  }
  bool keyed_signed = !ps_type_is_unsigned(type);
  if (!any) min_key = max_key = keyed_signed ? SIGN_BIT : 0;
  uint64_t spread = max_key - min_key;
  uint32_t w = width ? width : bit_length(spread);
  if (spread > width_mask(w)) {
    for (uint64_t i = 0; i < n; i++) {
      if (!row_valid(valid, i)) continue;
      uint64_t code = row_key(in, use_scale, i) - min_key;
      if (code <= width_mask(w)) continue;
      char text[64];
      format_input(text, sizeof text, type, in->values, i);
      st = ps_set_error_buf(err_buf, err_size, PS_ERR_NOT_REPRESENTABLE,
                            "row %" PRIu64 ": value %s is %" PRIu64 " above the minimum; it "
                            "needs width %u but width %u was requested",
                            i, text, code, bit_length(code), w);
      goto fail;
    }
  }

  uint64_t data_size;
  if (!packed_bytes(n, w, &data_size) || data_size > SIZE_MAX) {
    st = ps_set_error_buf(err_buf, err_size, PS_ERR_LIMIT,
                          "%" PRIu64 " rows of width %u do not fit in host memory", n, w);
    goto fail;
  }
  r.data = ps_alloc_with(&r.allocator, (size_t)data_size);
  if (!r.data) goto oom;
  if (w) {
    bit_writer bw = {(uint8_t *)r.data, 0, 0};
    for (uint64_t i = 0; i < n; i++)
      bw_put(&bw, row_valid(valid, i) ? row_key(in, use_scale, i) - min_key : 0, w);
    bw_flush(&bw);
  }
  if (in->validity && !r.validity) {
    r.validity = copy_validity(&r.allocator, in->validity, n);
    if (!r.validity) goto oom;
  }

  ps_for_desc_init(&r.desc);
  r.desc.type = type;
  r.desc.n = n;
  r.desc.width = w;
  r.desc.scale = use_scale;
  if (keyed_signed)
    r.desc.reference.i = u64_to_i64(min_key ^ SIGN_BIT);
  else
    r.desc.reference.u = min_key;
  r.desc.data = r.data;
  r.desc.data_size = data_size;
  r.desc.validity = r.validity;
  r.desc.validity_size = r.validity ? validity_bytes(n) : 0;
  r.desc.zones = ps_zones_for_encoded(&r.allocator, r.data, w, r.validity, n);
  if (!r.desc.zones) goto oom;
  *out = r;
  return PS_OK;

oom:
  st = ps_set_error_buf(err_buf, err_size, PS_ERR_OUT_OF_MEMORY,
                        "allocating the encoded column of %" PRIu64 " rows failed", n);
fail:
  ps_encoded_destroy(&r);
  return st;
}

/* ---- DELTA encoding (kernels_shared/ps_layout.h) -------------------------- */

static void store_le32(uint8_t *p, uint32_t v) { store_le(p, v, 4); }

/* Appends 32 codes of width w (0..64) as exactly w 32-bit words. */
static uint8_t *put32(uint8_t *p, const uint64_t *v, uint32_t w) {
  if (w == 0) return p;
  bit_writer bw = {p, 0, 0};
  for (uint32_t j = 0; j < 32; j++) bw_put(&bw, v[j], w);
  bw_flush(&bw);
  return bw.p;
}

/* The DELTA blocks of the n codes of width w of a FOR stream: the size, and
 * the bytes at out unless out is NULL. A null row takes the code of the row
 * before it (the first valid code for leading nulls), so nulls cost no delta
 * bits; rows past n in the last block repeat the last code. */
static uint64_t delta_build(const uint8_t *for_data, uint32_t w, uint64_t n, const uint8_t *valid, uint8_t *out) {
  const uint64_t blocks = ps_delta_blocks(n);
  uint64_t end = blocks * PS_DELTA_HEADER_BYTES;
  uint64_t carry = 0;
  for (uint64_t i = 0; i < n; i++)
    if (row_valid(valid, i)) {
      carry = w ? read_code(for_data, i * w, w) : 0;
      break;
    }
  static const uint32_t rows = PS_DELTA_BLOCK_ROWS;
  uint64_t c[PS_DELTA_BLOCK_ROWS], v[32];
  for (uint64_t b = 0; b < blocks; b++) {
    const uint64_t r0 = b * rows;
    for (uint32_t i = 0; i < rows; i++) {
      const uint64_t r = r0 + i;
      if (r < n && row_valid(valid, r)) carry = w ? read_code(for_data, r * w, w) : 0;
      c[i] = carry;
    }
    uint64_t base = UINT64_MAX, amax = 0, dmax = 0;
    int64_t step = INT64_MAX;
    for (uint32_t g = 0; g < 32; g++) {
      if (c[32 * g] < base) base = c[32 * g];
      for (uint32_t j = 1; j < 32; j++) {
        const int64_t d = u64_to_i64(c[32 * g + j] - c[32 * g + j - 1]);
        if (d < step) step = d;
      }
    }
    for (uint32_t g = 0; g < 32; g++) {
      if (c[32 * g] - base > amax) amax = c[32 * g] - base;
      for (uint32_t j = 1; j < 32; j++) {
        const uint64_t d = c[32 * g + j] - c[32 * g + j - 1] - (uint64_t)step;
        if (d > dmax) dmax = d;
      }
    }
    const uint32_t aw = bit_length(amax), dw = bit_length(dmax);
    if (out) {
      uint8_t *h = out + b * PS_DELTA_HEADER_BYTES;
      store_le(h, base, 8);
      store_le(h + 8, (uint64_t)step, 8);
      store_le(h + 16, end - b * PS_DELTA_HEADER_BYTES, 8);
      store_le32(h + 24, aw | dw << 8);
      store_le32(h + 28, 0);
      uint8_t *p = out + end;
      for (uint32_t g = 0; g < 32; g++) v[g] = c[32 * g] - base;
      p = put32(p, v, aw);
      for (uint32_t g = 0; g < 32; g++) {
        v[0] = 0;
        for (uint32_t j = 1; j < 32; j++) v[j] = c[32 * g + j] - c[32 * g + j - 1] - (uint64_t)step;
        p = put32(p, v, dw);
      }
    }
    end += ps_delta_payload_bytes(aw, dw);
  }
  return end;
}

PS_API ps_status ps_encode(const ps_plain *in, int encoding, uint32_t width, int scale, int nan_as_null,
                           const ps_allocator *allocator, char *err_buf, size_t err_size, ps_encoded *out) {
  if (encoding != PS_ENCODING_AUTO && encoding != PS_ENCODING_FOR && encoding != PS_ENCODING_DELTA) {
    if (out) memset(out, 0, sizeof *out);
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "encoding %d: expected PS_ENCODING_FOR (0), PS_ENCODING_DELTA (1) or "
                            "PS_ENCODING_AUTO (-1)",
                            encoding);
  }
  PS_TRY(ps_encode_for(in, width, scale, nan_as_null, allocator, err_buf, err_size, out));
  if (encoding == PS_ENCODING_FOR) return PS_OK;
  const ps_for_desc *d = &out->desc;
  if (d->n > ((uint64_t)1 << 58)) {
    if (encoding == PS_ENCODING_AUTO) return PS_OK;
    ps_encoded_destroy(out);
    return ps_set_error_buf(err_buf, err_size, PS_ERR_LIMIT, "%" PRIu64 " rows: DELTA holds at most 2^58", d->n);
  }
  const uint64_t size = delta_build(out->data, d->width, d->n, d->validity, NULL);
  if (encoding == PS_ENCODING_AUTO && size >= d->data_size) return PS_OK;
  uint8_t *data = size <= SIZE_MAX ? ps_alloc_with(&out->allocator, (size_t)size) : NULL;
  if (!data) {
    ps_encoded_destroy(out);
    return ps_set_error_buf(err_buf, err_size, PS_ERR_OUT_OF_MEMORY,
                            "allocating %" PRIu64 " bytes of DELTA blocks failed", size);
  }
  delta_build(out->data, d->width, d->n, d->validity, data);
  if (d->exceptions_count) { /* a mapped float's table follows the codes (encode_mapped) */
    uint8_t *grown = ps_alloc_with(
        &out->allocator, (size_t)((size + 7) / 8 * 8) + (size_t)d->exceptions_count * sizeof(ps_float_exception));
    if (!grown) {
      ps_free_with(&out->allocator, data);
      ps_encoded_destroy(out);
      return ps_set_error_buf(err_buf, err_size, PS_ERR_OUT_OF_MEMORY,
                              "allocating %" PRIu64 " bytes of DELTA blocks failed", size);
    }
    memcpy(grown, data, (size_t)size);
    memcpy(grown + (size + 7) / 8 * 8, d->exceptions, (size_t)d->exceptions_count * sizeof(ps_float_exception));
    ps_free_with(&out->allocator, data);
    data = grown;
    out->desc.exceptions = (const ps_float_exception *)(const void *)(grown + (size + 7) / 8 * 8);
  }
  ps_free_with(&out->allocator, out->data);
  out->data = data;
  out->desc.data = data;
  out->desc.data_size = size;
  out->desc.encoding = PS_ENCODING_DELTA;
  return PS_OK;
}

static ps_status check_for_desc(const ps_for_desc *desc, char *err_buf, size_t err_size);

PS_API ps_status ps_for_desc_check(const ps_for_desc *desc, char *err_buf, size_t err_size) {
  if (err_buf && err_size) err_buf[0] = '\0';
  return check_for_desc(desc, err_buf, err_size);
}

/* ---- FOR decoding -------------------------------------------------------- */

/* Checks every field of a FOR description; the messages name the field, the
 * value and what was expected. */
static ps_status check_for_desc(const ps_for_desc *desc, char *err_buf, size_t err_size) {
  if (!desc) return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT, "desc is NULL");
  if (desc->struct_size < offsetof(ps_for_desc, encoding) || desc->struct_size > sizeof *desc)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "desc->struct_size %u: expected %zu (call ps_for_desc_init)", desc->struct_size,
                            sizeof *desc);
  const uint32_t enc = ps_for_desc_encoding(desc);
  if (enc != PS_ENCODING_FOR && enc != PS_ENCODING_DELTA)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "desc->encoding %u: expected %d (FOR) or %d (DELTA)", enc, PS_ENCODING_FOR,
                            PS_ENCODING_DELTA);
  ps_type t = desc->type;
  if (!ps_type_is_integer(t) && !ps_type_is_float(t))
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "desc->type %d (%s): expected int8..uint64, decimal, float32 or float64",
                            (int)t, ps_type_name(t) ? ps_type_name(t) : "invalid");
  if (desc->width > 64)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "desc->width %u: expected 0..64", desc->width);
  if (ps_type_is_integer(t) && !ps_type_is_decimal(t) && desc->scale != 0)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "desc->scale %u on integer type %s: expected 0", desc->scale,
                            ps_type_name(t));
  if (desc->scale > MAX_SCALE)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "desc->scale %u: expected 0..18", desc->scale);
  PS_TRY(ps_fmap_check(desc, err_buf, err_size));
  uint64_t expect;
  if (!packed_bytes(desc->n, desc->width, &expect))
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "desc->n %" PRIu64 " rows of width %u: stream size overflows", desc->n, desc->width);
  if (enc == PS_ENCODING_DELTA) {
    if (desc->n > ((uint64_t)1 << 58))
      return ps_set_error_buf(err_buf, err_size, PS_ERR_LIMIT,
                              "desc->n %" PRIu64 ": a DELTA column has at most 2^58 rows", desc->n);
    if (!desc->data && desc->data_size)
      return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                              "desc->data is NULL but data_size is %" PRIu64, desc->data_size);
    PS_TRY(ps_delta_check(desc->data, desc->n, desc->data_size, "desc", err_buf, err_size));
    expect = desc->data_size;
  }
  if (desc->data_size != expect)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "desc->data_size %" PRIu64 ": expected ceil(n*width/8) = %" PRIu64
                            " for n %" PRIu64 ", width %u",
                            desc->data_size, expect, desc->n, desc->width);
  if (expect && !desc->data)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "desc->data is NULL but data_size is %" PRIu64, expect);
  if (desc->validity && desc->validity_size != validity_bytes(desc->n))
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "desc->validity_size %" PRIu64 ": expected ceil(n/8) = %" PRIu64,
                            desc->validity_size, validity_bytes(desc->n));
  if (!desc->validity && desc->validity_size)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "desc->validity is NULL but validity_size is %" PRIu64,
                            desc->validity_size);
  /* The reference is itself a value of the type (the encoder's minimum), as
   * ps_column_create_for requires; only M + code can leave the type. */
  if (ps_type_is_signed(t) && (desc->reference.i < ps_type_min(t) ||
                               (desc->reference.i > 0 &&
                                (uint64_t)desc->reference.i > ps_type_max(t))))
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "desc->reference %" PRId64 ": outside %s", desc->reference.i,
                            ps_type_name(t));
  if (ps_type_is_unsigned(t) && desc->reference.u > ps_type_max(t))
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "desc->reference %" PRIu64 ": outside %s", desc->reference.u,
                            ps_type_name(t));
  return PS_OK;
}

static void store_value(ps_type t, void *out, uint64_t i, uint64_t reference, uint64_t code,
                        uint32_t scale) {
  uint64_t v = reference + code; /* checked in range beforehand; wrap-free */
  switch (t) {
    case PS_TYPE_INT8: ((int8_t *)out)[i] = (int8_t)u64_to_i64(v); break;
    case PS_TYPE_INT16: ((int16_t *)out)[i] = (int16_t)u64_to_i64(v); break;
    case PS_TYPE_INT32: ((int32_t *)out)[i] = (int32_t)u64_to_i64(v); break;
    case PS_TYPE_INT64:
    case PS_TYPE_DECIMAL: ((int64_t *)out)[i] = u64_to_i64(v); break; /* unscaled */
    case PS_TYPE_UINT8: ((uint8_t *)out)[i] = (uint8_t)v; break;
    case PS_TYPE_UINT16: ((uint16_t *)out)[i] = (uint16_t)v; break;
    case PS_TYPE_UINT32: ((uint32_t *)out)[i] = (uint32_t)v; break;
    case PS_TYPE_UINT64: ((uint64_t *)out)[i] = v; break;
    case PS_TYPE_FLOAT32:
      ((float *)out)[i] = (float)((double)u64_to_i64(v) / pow10_table[scale]);
      break;
    case PS_TYPE_FLOAT64: ((double *)out)[i] = (double)u64_to_i64(v) / pow10_table[scale]; break;
    default: break;
  }
}

/* The code of row i of a checked description, in its encoding (DELTA
 * through kernels_shared/ps_codes.h, as the kernels read it). */
static uint64_t desc_code(const ps_for_desc *d, uint64_t i) {
  if (ps_for_desc_encoding(d) == PS_ENCODING_DELTA) return ps_delta_code_at(d->data, d->data_size, 1, i);
  return d->width ? read_code(d->data, i * d->width, d->width) : 0;
}

PS_API ps_status ps_decode_for(const ps_for_desc *desc, void *out, char *err_buf, size_t err_size) {
  PS_TRY(check_for_desc(desc, err_buf, err_size));
  const ps_type t = desc->type;
  const uint64_t n = desc->n;
  const uint32_t w = desc->width;
  if (n && !out) return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT, "out is NULL");
  if (n > SIZE_MAX / ps_type_size(t))
    return ps_set_error_buf(err_buf, err_size, PS_ERR_LIMIT,
                            "desc->n %" PRIu64 " values do not fit in host memory", n);

  if (ps_for_desc_float_map(desc) != PS_FLOAT_MAP_DECIMAL) {
    const ps_fmap m = ps_fmap_of_desc(desc);
    const uint64_t lim = ps_fmap_code_limit(&m, w);
    for (uint64_t i = 0; i < n; i++) {
      const uint64_t code = row_valid(desc->validity, i) ? desc_code(desc, i) : 0;
      if (code > lim)
        return ps_set_error_buf(err_buf, err_size, PS_ERR_CORRUPT_DATA,
                                "row %" PRIu64 ": code %" PRIu64 " is past the float mapping's last code %" PRIu64, i,
                                code, lim);
    }
    for (uint64_t i = 0; i < n; i++) {
      const double v = row_valid(desc->validity, i) ? ps_fmap_decode(&m, desc_code(desc, i)) : 0.0;
      if (t == PS_TYPE_FLOAT32)
        ((float *)out)[i] = (float)v;
      else
        ((double *)out)[i] = v;
    }
    return PS_OK;
  }
  /* The largest code whose value stays in the logical type (floats: in
   * int64, where the scaled integer M + code lives). The reference is in the
   * type (checked above), so on order-preserving keys this cannot wrap. */
  bool is_unsigned = ps_type_is_unsigned(t);
  uint64_t ref_key = is_unsigned ? desc->reference.u : (uint64_t)desc->reference.i ^ SIGN_BIT;
  uint64_t max_key = is_unsigned ? ps_type_max(t) : ps_type_max(t) ^ SIGN_BIT;
  uint64_t hi = max_key - ref_key;
  const uint8_t *valid = desc->validity;

  /* Check before writing, so a corrupt stream leaves out untouched. Skipped
   * when every code the width allows is in range. */
  if (hi < width_mask(w) || ps_for_desc_encoding(desc) != PS_ENCODING_FOR) {
    for (uint64_t i = 0; i < n; i++) {
      if (!row_valid(valid, i)) continue;
      uint64_t code = desc_code(desc, i);
      if (code > width_mask(w))
        return ps_set_error_buf(err_buf, err_size, PS_ERR_CORRUPT_DATA,
                                "row %" PRIu64 ": DELTA code %" PRIu64 " is wider than the column's width %u", i, code,
                                w);
      if (code <= hi) continue;
      char ref[32];
      if (is_unsigned)
        snprintf(ref, sizeof ref, "%" PRIu64, desc->reference.u);
      else
        snprintf(ref, sizeof ref, "%" PRId64, desc->reference.i);
      return ps_set_error_buf(err_buf, err_size, PS_ERR_CORRUPT_DATA,
                              "row %" PRIu64 ": reference %s + code %" PRIu64
                              " is outside the range of %s%s",
                              i, ref, code, ps_type_name(t),
                              ps_type_is_float(t)     ? "'s scaled integers (int64)"
                              : ps_type_is_decimal(t) ? "'s unscaled integers (int64)"
                                                      : "");
    }
  }
  /* Keys back to the value's two's-complement bits: reference + code as
   * uint64 is exactly that for every in-range row. */
  uint64_t ref_bits = is_unsigned ? desc->reference.u : (uint64_t)desc->reference.i;
  for (uint64_t i = 0; i < n; i++) {
    if (!row_valid(valid, i)) {
      store_value(t, out, i, 0, 0, 0);
      continue;
    }
    store_value(t, out, i, ref_bits, desc_code(desc, i), desc->scale);
  }
  return PS_OK;
}

/* ---- dictionary encoding ------------------------------------------------- */

typedef struct str_ref {
  const uint8_t *p;
  size_t len;
  uint64_t row;
} str_ref;

static int str_ref_cmp(const void *a, const void *b) {
  const str_ref *x = a, *y = b;
  return ps_bytes_cmp(x->p, x->len, y->p, y->len);
}

/* FNV-1a, with the length mixed in and the high bits folded down (the
 * table uses the low bits for the slot and the high half as a tag). */
static uint64_t hash_bytes(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull ^ n;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h ^ (h >> 29);
}

static int64_t string_offset(const ps_strings *in, uint64_t i) {
  return in->offsets32 ? (int64_t)in->offsets32[i] : in->offsets64[i];
}

/* ORs a w-bit code (w <= 32) into a zeroed stream at bit position pos. */
static void or_code(uint8_t *p, uint64_t pos, uint64_t code, uint32_t w) {
  uint64_t byte = pos >> 3;
  uint32_t sh = (uint32_t)(pos & 7);
  while (w) {
    uint32_t take = 8 - sh < w ? 8 - sh : w;
    p[byte++] |= (uint8_t)((code & ((1u << take) - 1)) << sh);
    code >>= take;
    w -= take;
    sh = 0;
  }
}

PS_API void ps_encoded_dict_destroy(ps_encoded_dict *enc) {
  if (!enc) return;
  ps_allocator a = enc->allocator;
  ps_free_with(&a, enc->offsets);
  ps_free_with(&a, enc->bytes);
  ps_encoded_destroy(&enc->codes);
  memset(enc, 0, sizeof *enc);
}

PS_API ps_status ps_encode_dict(const ps_strings *in, const ps_allocator *allocator, char *err_buf,
                                size_t err_size, ps_encoded_dict *out) {
  if (!out) return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT, "out is NULL");
  memset(out, 0, sizeof *out);
  if (!in) return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT, "in is NULL");
  if (!allocator_ok(allocator))
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "allocator: alloc and free must both be set or both be NULL");
  if (in->offsets32 && in->offsets64)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "in->offsets32 and in->offsets64 are both set: expected exactly one");
  const uint64_t n = in->n;
  /* n = 0 needs no offsets at all (an empty Arrow array may have none). */
  if (n && !in->offsets32 && !in->offsets64)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "in->offsets32 and in->offsets64 are both NULL: expected one "
                            "(n %" PRIu64 ")",
                            n);
  if (n >= SIZE_MAX / sizeof(str_ref))
    return ps_set_error_buf(err_buf, err_size, PS_ERR_LIMIT,
                            "in->n %" PRIu64 " strings do not fit in host memory", n);

  /* Offsets: Arrow layout, non-decreasing from a non-negative start (null
   * rows included). There is no bytes size to check against, so offsets[n]
   * is trusted as the end of in->bytes. */
  if (n) {
    int64_t prev = string_offset(in, 0);
    if (prev < 0)
      return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                              "in->offsets[0] is %" PRId64 ": expected >= 0", prev);
    for (uint64_t i = 1; i <= n; i++) {
      int64_t o = string_offset(in, i);
      if (o < prev)
        return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                                "in->offsets[%" PRIu64 "] is %" PRId64 ", below offsets[%" PRIu64
                                "] = %" PRId64 ": offsets must not decrease",
                                i, o, i - 1, prev);
      prev = o;
    }
    if ((uint64_t)prev > SIZE_MAX)
      return ps_set_error_buf(err_buf, err_size, PS_ERR_LIMIT,
                              "in->offsets[n] %" PRId64 " exceeds host memory", prev);
    if (prev > string_offset(in, 0) && !in->bytes)
      return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                              "in->bytes is NULL but the strings hold %" PRId64 " bytes",
                              prev - string_offset(in, 0));
  }

  ps_encoded_dict r;
  memset(&r, 0, sizeof r);
  if (allocator) r.allocator = *allocator;
  ps_status st = PS_OK;
  str_ref *refs = NULL;

  /* Distinct strings first, with a hash table (open addressing; a slot holds
   * the hash's high half and the distinct index + 1), so that only distinct
   * strings are sorted: columns repeat values, and a sort of every row's
   * string costs far more than a hash of it. */
  uint32_t *rowd = NULL; /* distinct index of each valid row */
  uint64_t *slots = NULL, *uhash = NULL, *urow = NULL;
  uint64_t *rank = NULL;
  uint64_t cap = 1024, ucap = 256, d = 0, total = 0;
  rowd = ps_alloc_with(&r.allocator, (size_t)(n ? n : 1) * sizeof *rowd);
  slots = ps_alloc_with(&r.allocator, (size_t)cap * sizeof *slots);
  uhash = ps_alloc_with(&r.allocator, (size_t)ucap * sizeof *uhash);
  urow = ps_alloc_with(&r.allocator, (size_t)ucap * sizeof *urow);
  if (!rowd || !slots || !uhash || !urow) goto oom;
  memset(slots, 0, (size_t)cap * sizeof *slots);
  for (uint64_t i = 0; i < n; i++) {
    if (!row_valid(in->validity, i)) continue;
    int64_t a = string_offset(in, i), b = string_offset(in, i + 1);
    const uint8_t *sp = in->bytes ? in->bytes + a : NULL;
    size_t len = (size_t)(b - a);
    uint64_t h = hash_bytes(sp, len);
    uint64_t k = h & (cap - 1), found = UINT64_MAX;
    for (; slots[k]; k = (k + 1) & (cap - 1)) {
      if ((slots[k] >> 32) != (h >> 32)) continue;
      uint64_t j = (slots[k] & 0xffffffffu) - 1;
      int64_t ja = string_offset(in, urow[j]), jb = string_offset(in, urow[j] + 1);
      if (ps_bytes_cmp(in->bytes ? in->bytes + ja : NULL, (size_t)(jb - ja), sp, len) == 0) {
        found = j;
        break;
      }
    }
    if (found == UINT64_MAX) {
      if (d >= UINT32_MAX - 1) {
        st = ps_set_error_buf(err_buf, err_size, PS_ERR_LIMIT,
                              "more than 2^32 - 2 distinct strings: uint32 codes cannot hold them");
        goto fail;
      }
      if (d == ucap) {
        uint64_t *nh = ps_alloc_with(&r.allocator, (size_t)ucap * 2 * sizeof *nh);
        uint64_t *nr = ps_alloc_with(&r.allocator, (size_t)ucap * 2 * sizeof *nr);
        if (!nh || !nr) {
          ps_free_with(&r.allocator, nh);
          ps_free_with(&r.allocator, nr);
          goto oom;
        }
        memcpy(nh, uhash, (size_t)d * sizeof *nh);
        memcpy(nr, urow, (size_t)d * sizeof *nr);
        ps_free_with(&r.allocator, uhash);
        ps_free_with(&r.allocator, urow);
        uhash = nh, urow = nr, ucap *= 2;
      }
      found = d++;
      uhash[found] = h;
      urow[found] = i;
      total += len;
      slots[k] = (h & 0xffffffff00000000ull) | (found + 1);
      if (d * 2 > cap) { /* keep the table at most half full */
        uint64_t ncap = cap * 2;
        uint64_t *ns = ps_alloc_with(&r.allocator, (size_t)ncap * sizeof *ns);
        if (!ns) goto oom;
        memset(ns, 0, (size_t)ncap * sizeof *ns);
        for (uint64_t j = 0; j < d; j++) {
          uint64_t q = uhash[j] & (ncap - 1);
          while (ns[q]) q = (q + 1) & (ncap - 1);
          ns[q] = (uhash[j] & 0xffffffff00000000ull) | (j + 1);
        }
        ps_free_with(&r.allocator, slots);
        slots = ns, cap = ncap;
      }
    }
    rowd[i] = (uint32_t)found;
  }

  /* Sort the distinct strings; rank[distinct index] is the code. */
  refs = ps_alloc_with(&r.allocator, (size_t)(d ? d : 1) * sizeof *refs);
  rank = ps_alloc_with(&r.allocator, (size_t)(d ? d : 1) * sizeof *rank);
  if (!refs || !rank) goto oom;
  for (uint64_t j = 0; j < d; j++) {
    int64_t a = string_offset(in, urow[j]), b = string_offset(in, urow[j] + 1);
    refs[j].p = in->bytes ? in->bytes + a : NULL;
    refs[j].len = (size_t)(b - a);
    refs[j].row = j; /* the distinct index, carried through the sort */
  }
  if (d > 1) qsort(refs, (size_t)d, sizeof *refs, str_ref_cmp);
  for (uint64_t j = 0; j < d; j++) rank[refs[j].row] = j;

  if (total > INT32_MAX) {
    st = ps_set_error_buf(err_buf, err_size, PS_ERR_LIMIT,
                          "the dictionary of %" PRIu64 " distinct strings holds %" PRIu64
                          " bytes; 32-bit offsets allow at most %d",
                          d, total, INT32_MAX);
    goto fail;
  }

  uint32_t w = d > 1 ? bit_length(d - 1) : 0;
  uint64_t data_size;
  if (!packed_bytes(n, w, &data_size) || data_size > SIZE_MAX || d + 1 > SIZE_MAX / 4) {
    st = ps_set_error_buf(err_buf, err_size, PS_ERR_LIMIT,
                          "%" PRIu64 " codes of width %u do not fit in host memory", n, w);
    goto fail;
  }
  r.offsets = ps_alloc_with(&r.allocator, (size_t)(d + 1) * sizeof(int32_t));
  r.bytes = ps_alloc_with(&r.allocator, (size_t)total);
  r.codes.allocator = r.allocator;
  r.codes.data = ps_alloc_with(&r.allocator, (size_t)data_size);
  if (!r.offsets || !r.bytes || !r.codes.data) goto oom;
  memset(r.codes.data, 0, (size_t)data_size); /* null rows keep code 0 */
  if (in->validity) {
    r.codes.validity = copy_validity(&r.allocator, in->validity, n);
    if (!r.codes.validity) goto oom;
  }

  uint64_t pos = 0;
  r.offsets[0] = 0;
  for (uint64_t j = 0; j < d; j++) {
    if (refs[j].len) memcpy(r.bytes + pos, refs[j].p, refs[j].len);
    pos += refs[j].len;
    r.offsets[j + 1] = (int32_t)pos;
  }
  if (w)
    for (uint64_t i = 0; i < n; i++)
      if (row_valid(in->validity, i)) or_code(r.codes.data, i * w, rank[rowd[i]], w);

  ps_dict_desc_init(&r.dict);
  r.dict.count = d;
  r.dict.offsets32 = r.offsets;
  r.dict.bytes = r.bytes;
  r.dict.bytes_size = total;
  r.dict.sorted = 1;
  ps_for_desc_init(&r.codes.desc);
  r.codes.desc.type = PS_TYPE_UINT32;
  r.codes.desc.n = n;
  r.codes.desc.width = w;
  r.codes.desc.reference.u = 0;
  r.codes.desc.data = r.codes.data;
  r.codes.desc.data_size = data_size;
  r.codes.desc.validity = r.codes.validity;
  r.codes.desc.validity_size = r.codes.validity ? validity_bytes(n) : 0;
  /* sorted dictionary: a block's code range is its string range */
  r.codes.desc.zones = ps_zones_for_encoded(&r.allocator, r.codes.data, w, r.codes.validity, n);
  if (!r.codes.desc.zones) goto oom;
  ps_free_with(&r.allocator, refs);
  ps_free_with(&r.allocator, rank);
  ps_free_with(&r.allocator, rowd);
  ps_free_with(&r.allocator, slots);
  ps_free_with(&r.allocator, uhash);
  ps_free_with(&r.allocator, urow);
  *out = r;
  return PS_OK;

oom:
  st = ps_set_error_buf(err_buf, err_size, PS_ERR_OUT_OF_MEMORY,
                        "allocating the dictionary encoding of %" PRIu64 " strings failed", n);
fail:
  ps_free_with(&r.allocator, refs);
  ps_free_with(&r.allocator, rank);
  ps_free_with(&r.allocator, rowd);
  ps_free_with(&r.allocator, slots);
  ps_free_with(&r.allocator, uhash);
  ps_free_with(&r.allocator, urow);
  ps_encoded_dict_destroy(&r);
  return st;
}
