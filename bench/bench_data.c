/* Inputs of the benchmark: random packed columns written straight into
 * device buffers (a random bit stream is a valid stream of w-bit codes, so
 * no encoder pass is needed), slices of them rebuilt on the reference
 * context for the checks, and a sorted string dictionary. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_tables.h" /* bench_days, bench_yyyymmdd */

/* splitmix64: fast, and every output bit is well mixed. */
uint64_t bench_rand(uint64_t *state) {
  uint64_t z = (*state += UINT64_C(0x9e3779b97f4a7c15));
  z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
  return z ^ (z >> 31);
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }

/* Rows generated per host staging chunk: a multiple of 32, so every chunk
 * starts on a byte (indeed a word) of the stream. */
#define STAGE_ROWS (UINT64_C(1) << 21)

/* Packs `rows` codes uniform in [0, limit) (limit <= 2^32) at width w <= 32
 * into dst, LSB first. */
static void pack_limited(uint8_t *dst, uint64_t rows, uint32_t w, uint64_t limit, uint64_t *rng) {
  uint64_t acc = 0;
  uint32_t bits = 0;
  size_t o = 0;
  for (uint64_t i = 0; i < rows; i++) {
    uint64_t code = ((bench_rand(rng) >> 32) * limit) >> 32; /* multiply-high: uniform enough */
    acc |= code << bits;
    bits += w;
    while (bits >= 8) {
      dst[o++] = (uint8_t)acc;
      acc >>= 8;
      bits -= 8;
    }
  }
  if (bits) dst[o] = (uint8_t)acc;
}

static void fill_random(uint8_t *dst, uint64_t bytes, uint64_t *rng) {
  uint64_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t r = bench_rand(rng);
    memcpy(dst + i, &r, 8);
  }
  if (i < bytes) {
    uint64_t r = bench_rand(rng);
    memcpy(dst + i, &r, (size_t)(bytes - i));
  }
}

ps_status bench_col_create(bench *b, ps_type type, uint32_t width, ps_reference ref, uint64_t n,
                           uint64_t code_limit, int validity_percent, const ps_dict_desc *dict,
                           bench_col *out) {
  memset(out, 0, sizeof *out);
  ps_for_desc_init(&out->desc);
  out->desc.type = type;
  out->desc.n = n;
  out->desc.width = width;
  out->desc.reference = ref;
  out->desc.data_size = ceil_div(n * width, 8);
  out->dict = dict;
  ps_status st = ps_buffer_create(b->ctx, out->desc.data_size ? out->desc.data_size : 4, &out->data);
  uint8_t *stage = malloc((size_t)(STAGE_ROWS * 8 + 8));
  if (st == PS_OK && !stage) st = PS_ERR_OUT_OF_MEMORY;
  for (uint64_t r0 = 0; st == PS_OK && r0 < n; r0 += STAGE_ROWS) {
    uint64_t rows = n - r0 < STAGE_ROWS ? n - r0 : STAGE_ROWS;
    uint64_t off = r0 / 8 * width, bytes = ceil_div(rows * width, 8);
    if (code_limit)
      pack_limited(stage, rows, width, code_limit, &b->seed);
    else
      fill_random(stage, bytes, &b->seed);
    st = ps_buffer_write(b->ctx, out->data, off, stage, bytes);
  }
  if (st == PS_OK && validity_percent < 100) {
    uint64_t vbytes = ceil_div(n, 8);
    out->desc.validity_size = vbytes;
    st = ps_buffer_create(b->ctx, vbytes, &out->validity);
    uint32_t threshold = (uint32_t)(validity_percent * 256 / 100);
    for (uint64_t v0 = 0; st == PS_OK && v0 < vbytes; v0 += STAGE_ROWS) {
      uint64_t len = vbytes - v0 < STAGE_ROWS ? vbytes - v0 : STAGE_ROWS;
      for (uint64_t i = 0; i < len; i++) {
        uint64_t r = bench_rand(&b->seed);
        uint8_t byte = 0;
        for (int k = 0; k < 8; k++) byte |= (uint8_t)(((r >> (8 * k)) & 0xff) < threshold) << k;
        stage[i] = byte;
      }
      if (v0 + len == vbytes && n % 8) stage[len - 1] &= (uint8_t)((1u << (n % 8)) - 1);
      st = ps_buffer_write(b->ctx, out->validity, v0, stage, len);
    }
  }
  free(stage);
  if (st == PS_OK) {
    if (dict)
      st = ps_column_create_dict_device(b->ctx, dict, &out->desc, out->data, 0, out->validity, 0,
                                        &out->col);
    else
      st = ps_column_create_for_device(b->ctx, &out->desc, out->data, 0, out->validity, 0, &out->col);
    if (st != PS_OK) fprintf(stderr, "bench: column: %s\n", ps_context_last_error(b->ctx));
  }
  if (st != PS_OK) bench_col_destroy(out);
  return st;
}

static int cmp_i32(const void *a, const void *b) {
  const int32_t x = *(const int32_t *)a, y = *(const int32_t *)b;
  return (x > y) - (x < y);
}

ps_status bench_col_sorted_dates(bench *b, uint64_t n, bench_col *out) {
  memset(out, 0, sizeof *out);
  const int64_t d0 = bench_days(1992, 1, 1), nd = bench_days(1998, 12, 31) - 151 - d0 + 1;
  int32_t *v = malloc((size_t)n * 4 + 4);
  if (!v) return PS_ERR_OUT_OF_MEMORY;
  uint64_t rng = b->seed ^ UINT64_C(0xde17a);
  for (uint64_t i = 0; i < n;) {
    const uint64_t r = bench_rand(&rng);
    const uint32_t lines = 1 + (uint32_t)(((r & 0xffffffffu) * 7) >> 32);
    const int32_t od = bench_yyyymmdd(d0 + (int64_t)(((r >> 32) * (uint64_t)nd) >> 32));
    for (uint32_t l = 0; l < lines && i < n; l++) v[i++] = od;
  }
  qsort(v, (size_t)n, 4, cmp_i32);
  ps_plain p = {PS_TYPE_INT32, v, n, NULL};
  ps_encoded e;
  char err[256];
  ps_status st = ps_encode(&p, PS_ENCODING_DELTA, 0, 0, 0, NULL, err, sizeof err, &e);
  free(v);
  if (st != PS_OK) {
    fprintf(stderr, "bench: sorted dates: %s\n", err);
    return st;
  }
  out->desc = e.desc;
  out->desc.data = NULL;
  st = ps_buffer_create(b->ctx, e.desc.data_size, &out->data);
  if (st == PS_OK) st = ps_buffer_write(b->ctx, out->data, 0, e.data, e.desc.data_size);
  if (st == PS_OK) st = ps_column_create_for_device(b->ctx, &out->desc, out->data, 0, NULL, 0, &out->col);
  if (st != PS_OK) fprintf(stderr, "bench: sorted dates: %s\n", ps_context_last_error(b->ctx));
  ps_encoded_destroy(&e);
  if (st != PS_OK) bench_col_destroy(out);
  return st;
}

void bench_col_destroy(bench_col *c) {
  ps_column_destroy(c->col);
  ps_buffer_destroy(c->data);
  ps_buffer_destroy(c->validity);
  free(c->exceptions);
  c->col = NULL;
  c->data = c->validity = NULL;
  c->exceptions = NULL;
  c->desc.exceptions = NULL;
}

static int cmp_double_asc(const void *x, const void *y) {
  const double a = *(const double *)x, b = *(const double *)y;
  return a < b ? -1 : a > b;
}

ps_status bench_col_floats(bench *b, int kind, uint64_t n, bench_col *out, double *median) {
  memset(out, 0, sizeof *out);
  double *v = malloc((size_t)n * 8 + 8), *sorted = malloc((size_t)n * 8 + 8);
  if (!v || !sorted) {
    free(v);
    free(sorted);
    return PS_ERR_OUT_OF_MEMORY;
  }
  uint64_t rng = b->seed ^ UINT64_C(0xf10a7) ^ (uint64_t)kind;
  for (uint64_t i = 0; i < n; i++) {
    const uint64_t r = bench_rand(&rng);
    if (kind == BENCH_FLOAT_PRICE)
      v[i] = (double)(100 + (r >> 11) % 9999900) / 100.0;
    else if (kind == BENCH_FLOAT_KNOTS)
      v[i] = (double)((r >> 11) % 60) * 1.15078;
    else
      v[i] = (double)(r >> 11) * 0x1p-53 * 1000.0;
  }
  memcpy(sorted, v, (size_t)n * 8);
  qsort(sorted, (size_t)n, 8, cmp_double_asc);
  *median = n ? sorted[n / 2] : 0.0;
  free(sorted);
  ps_plain p = {PS_TYPE_FLOAT64, v, n, NULL};
  ps_encoded e;
  char err[256];
  ps_status st = ps_encode_for(&p, 0, -1, 0, NULL, err, sizeof err, &e);
  free(v);
  if (st != PS_OK) {
    fprintf(stderr, "bench: float column: %s\n", err);
    return st;
  }
  out->desc = e.desc;
  out->desc.data = NULL;
  if (e.desc.exceptions_count) { /* the table lies in e's data, freed below */
    out->exceptions = malloc((size_t)e.desc.exceptions_count * sizeof *out->exceptions);
    if (!out->exceptions) st = PS_ERR_OUT_OF_MEMORY;
    if (st == PS_OK)
      memcpy(out->exceptions, e.desc.exceptions, (size_t)e.desc.exceptions_count * sizeof *out->exceptions);
    out->desc.exceptions = out->exceptions;
  }
  if (st == PS_OK) st = ps_buffer_create(b->ctx, e.desc.data_size, &out->data);
  if (st == PS_OK) st = ps_buffer_write(b->ctx, out->data, 0, e.data, e.desc.data_size);
  if (st == PS_OK) st = ps_column_create_for_device(b->ctx, &out->desc, out->data, 0, NULL, 0, &out->col);
  memset(&out->desc.zones, 0, sizeof out->desc.zones); /* in e's memory; the column has copied them */
  if (st != PS_OK) fprintf(stderr, "bench: float column: %s\n", ps_context_last_error(b->ctx));
  ps_encoded_destroy(&e);
  if (st != PS_OK) bench_col_destroy(out);
  return st;
}

/* A DELTA column's rows [r0, r0 + rows), decoded on the host and encoded as
 * FOR, so that the check's reference filters the same values another way. */
static ps_status delta_slice(bench *b, const bench_col *c, ps_context *ctx, uint64_t r0, uint64_t rows,
                             ps_column **out) {
  ps_for_desc d = c->desc;
  const size_t vs = ps_type_size(d.type);
  uint8_t *data = malloc((size_t)d.data_size + 1), *values = malloc((size_t)(d.n * vs) + 8);
  ps_status st = data && values ? ps_buffer_read(b->ctx, c->data, 0, data, d.data_size) : PS_ERR_OUT_OF_MEMORY;
  d.data = data;
  char err[256];
  if (st == PS_OK) st = ps_decode_for(&d, values, err, sizeof err);
  ps_encoded e;
  memset(&e, 0, sizeof e);
  ps_plain p = {d.type, values + r0 * vs, rows, NULL};
  if (st == PS_OK) st = ps_encode_for(&p, 0, 0, 0, NULL, err, sizeof err, &e);
  if (st == PS_OK) st = ps_column_create_for(ctx, &e.desc, out);
  ps_encoded_destroy(&e);
  free(data);
  free(values);
  return st;
}

ps_status bench_col_slice(bench *b, const bench_col *c, ps_context *ctx, uint64_t r0, uint64_t rows,
                          ps_column **out) {
  if (c->desc.encoding == PS_ENCODING_DELTA) return delta_slice(b, c, ctx, r0, rows, out);
  ps_for_desc d = c->desc;
  uint64_t off = r0 / 32 * d.width * 4; /* 32 rows are exactly w words */
  d.n = rows;
  d.data_size = ceil_div(rows * d.width, 8);
  d.validity_size = c->validity ? ceil_div(rows, 8) : 0;
  uint8_t *data = malloc((size_t)d.data_size + 1), *valid = NULL;
  if (!data) return PS_ERR_OUT_OF_MEMORY;
  ps_status st = ps_buffer_read(b->ctx, c->data, off, data, d.data_size);
  if (st == PS_OK && c->validity) {
    valid = malloc((size_t)d.validity_size);
    if (!valid) st = PS_ERR_OUT_OF_MEMORY;
    if (st == PS_OK) st = ps_buffer_read(b->ctx, c->validity, r0 / 8, valid, d.validity_size);
    if (st == PS_OK && rows % 8) valid[d.validity_size - 1] &= (uint8_t)((1u << (rows % 8)) - 1);
  }
  if (st == PS_OK && d.width * rows % 8) /* bits past the slice's last code: not ours */
    data[d.data_size - 1] &= (uint8_t)((1u << (d.width * rows % 8)) - 1);
  d.data = data;
  d.validity = valid;
  if (st == PS_OK)
    st = c->dict ? ps_column_create_dict(ctx, c->dict, &d, out) : ps_column_create_for(ctx, &d, out);
  free(data);
  free(valid);
  return st;
}

/* ---- dictionary ---- */

int bench_dict_create(uint64_t d, uint64_t seed, bench_dict *out) {
  memset(out, 0, sizeof *out);
  const uint64_t max_len = 5 + 20;
  out->offsets = malloc((size_t)(d + 1) * sizeof(int32_t));
  out->bytes = malloc((size_t)(d * max_len + 1));
  if (!out->offsets || !out->bytes || d * max_len > INT32_MAX) {
    bench_dict_free(out);
    return -1;
  }
  uint64_t rng = seed, pos = 0;
  for (uint64_t i = 0; i < d; i++) {
    out->offsets[i] = (int32_t)pos;
    /* A fixed-length base-26 prefix of i keeps the strings distinct and
     * ascending (so the dictionary is sorted and prefix LIKE is a code
     * range); the suffix over 'a'..'h' makes '%abc%' match a few percent. */
    uint64_t v = i;
    for (int k = 4; k >= 0; k--) {
      out->bytes[pos + (uint64_t)k] = (uint8_t)('a' + v % 26);
      v /= 26;
    }
    pos += 5;
    uint64_t r = bench_rand(&rng);
    uint64_t len = 4 + r % 17;
    for (uint64_t k = 0; k < len; k++) {
      if (k % 16 == 0) r = bench_rand(&rng);
      out->bytes[pos++] = (uint8_t)('a' + ((r >> (4 * (k % 16))) & 7));
    }
  }
  out->offsets[d] = (int32_t)pos;
  ps_dict_desc_init(&out->desc);
  out->desc.count = d;
  out->desc.offsets32 = out->offsets;
  out->desc.bytes = out->bytes;
  out->desc.bytes_size = pos;
  out->desc.sorted = 1;
  return 0;
}

void bench_dict_free(bench_dict *d) {
  free(d->offsets);
  free(d->bytes);
  d->offsets = NULL;
  d->bytes = NULL;
}
