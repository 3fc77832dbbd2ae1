/*
 * select: what comes after the filter (issue 4), on the backend under test,
 * every result compared with an expectation computed here from the test's own
 * plain values or from the packed bits decoded by the test (oracle.c), never
 * with another backend:
 *  - row ids (uint32 / uint64) into device buffers (exact, larger and too small
 *    capacity, size only) and host memory, and ps_filter_row_ids; selectivity
 *    0, one row, ~1%, 50%, 100%, all null; n = 0, 1, 31, 32, 33, 1000, 4133, 100003;
 *    several chunks (max_chunk_rows 64 and 96, n <= 4133 there); uint32 refused past 2^32 rows;
 *    40M rows (hundreds of CUDA row-id tiles);
 *  - late materialization: every numeric type at sampled widths 0..64,
 *    dictionary indexes and strings (empty strings, nulls), with and without
 *    validity, ids from a filter and unsorted ids with repeats, device buffers
 *    at offsets and host memory, an id past the end, corrupt codes;
 *  - aggregates: count / sum / min / max over selections and all rows, nulls
 *    excluded, empty selections, 128-bit sums past int64 and uint64, float sums
 *    bit for bit;
 *  - ps_filter_refine out of place and in place; byte masks on host and device.
 * Buffers are filled with a guard byte so writes outside the results show.
 */
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

#define GUARD 0xAB
#define NCTX 3
static const uint64_t chunk_rows[NCTX] = {0, 64, 96}; /* 0 = backend default */
static ps_context *ctxs[NCTX];

/* 10^0..10^18, exact as doubles (5^18 < 2^53). */
static const double P10[19] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8, 1e9,
                               1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};

static uint64_t nbytes(uint64_t n) { return (n + 7) / 8; }
static int bit(const uint8_t *b, uint64_t i) { return (b[i / 8] >> (i % 8)) & 1; }
static void setbit(uint8_t *b, uint64_t i) { b[i / 8] |= (uint8_t)(1u << (i % 8)); }
static unsigned long long ull(uint64_t v) { return (unsigned long long)v; }

/* A device buffer of size bytes (at least 1) filled with fill. */
static ps_buffer *buf_new(ps_context *ctx, uint64_t size, uint8_t fill) {
  if (size == 0) size = 1;
  ps_buffer *b = NULL;
  if (!CHECK_OK(ctx, ps_buffer_create(ctx, size, &b))) return NULL;
  uint8_t *tmp = th_malloc((size_t)size);
  memset(tmp, fill, (size_t)size);
  CHECK_OK(ctx, ps_buffer_write(ctx, b, 0, tmp, size));
  free(tmp);
  return b;
}

/* The whole buffer, read back into malloc'd memory. */
static uint8_t *buf_all(ps_context *ctx, const ps_buffer *b) {
  uint64_t size = ps_buffer_size(b);
  uint8_t *p = th_calloc((size_t)size, 1);
  CHECK_OK(ctx, ps_buffer_read(ctx, b, 0, p, size));
  return p;
}

/* 1 when p[from..to) are all GUARD. */
static int guarded(const uint8_t *p, uint64_t from, uint64_t to) {
  for (uint64_t i = from; i < to; i++)
    if (p[i] != GUARD) return 0;
  return 1;
}

static ps_column *mkcol(ps_context *ctx, const tcol *c) {
  ps_column *h = NULL;
  char d[256];
  ps_status st = tcol_create(ctx, c, &h);
  CHECKF(st == PS_OK, "creating column %s: %s: %s", tcol_describe(c, d, sizeof d), ps_status_name(st),
         ps_context_last_error(ctx));
  return st == PS_OK ? h : NULL;
}

static ps_expr *cmp_int(ps_context *ctx, ps_column *c, ps_cmp op, int64_t v) {
  ps_expr *e = NULL;
  CHECK_OK(ctx, ps_expr_compare(ctx, c, op, ps_lit_int(v), &e));
  return e;
}

static void put_id(uint8_t *p, uint32_t isz, uint64_t i, uint64_t id) {
  if (isz == 4) {
    uint32_t v = (uint32_t)id;
    memcpy(p + 4 * i, &v, 4);
  } else {
    memcpy(p + 8 * i, &id, 8);
  }
}

/* Compares count ids at p (isz bytes each) with want; reports the first difference. */
static int same_ids(const uint8_t *p, uint32_t isz, const uint64_t *want, uint64_t count, const char *what) {
  for (uint64_t i = 0; i < count; i++) {
    uint64_t got = th_row_id(p, isz, i);
    if (got != want[i])
      return CHECKF(0, "%s: uint%u id[%llu] = %llu, expected %llu (of %llu ids)", what, isz * 8, ull(i), ull(got),
                    ull(want[i]), ull(count));
  }
  th.checks++;
  return 1;
}

/* ---- row ids ---------------------------------------------------------------------- */

/* Every way of getting the ids of the selection bits[0..n) that lies in sel at
 * sel_off; want: the expected ascending ids (computed from bits here). */
static void check_row_ids(ps_context *ctx, const ps_buffer *sel, uint64_t sel_off, uint64_t n, const uint8_t *bits) {
  uint64_t *want = th_calloc((size_t)n + 1, sizeof *want), ec = 0;
  for (uint64_t i = 0; i < n; i++)
    if (bit(bits, i)) want[ec++] = i;
  static const ps_index_type types[2] = {PS_INDEX_UINT32, PS_INDEX_UINT64};
  /* The sanitizer size takes one index type per call, in turn. */
  static unsigned turn;
  turn++;
  for (int t = 0; t < 2; t++) {
    if (th.quick >= 2 && (unsigned)t != turn % 2) continue;
    ps_index_type type = types[t];
    uint32_t isz = (uint32_t)type;
    uint64_t c = 12345;
    /* size only */
    if (CHECK_OK(ctx, ps_selection_row_ids_device(ctx, sel, sel_off, n, type, NULL, 0, 0, &c)))
      CHECKF(c == ec, "ps_selection_row_ids_device size only: count %llu, expected %llu", ull(c), ull(ec));
    /* exact, larger (ec + 7 and >= n: the no-sizing path) and too small capacities */
    uint64_t caps[4] = {ec, ec + 7, n + 3, ec ? ec - 1 : 0};
    for (int k = 0; k < 4; k++) {
      uint64_t cap = caps[k];
      int small = k == 3;
      if (small && ec == 0) continue;
      uint64_t off = 3 * (uint64_t)isz, size = off + cap * isz + 16;
      ps_buffer *ids = buf_new(ctx, size, GUARD);
      if (!ids) continue;
      c = 12345;
      ps_status st = ps_selection_row_ids_device(ctx, sel, sel_off, n, type, ids, off, cap, &c);
      uint8_t *got = buf_all(ctx, ids);
      if (small) {
        CHECK_STATUS(ctx, st, PS_ERR_BUFFER_TOO_SMALL);
        CHECKF(c == ec, "ps_selection_row_ids_device capacity %llu: *count %llu, expected %llu", ull(cap), ull(c),
               ull(ec));
        CHECKF(guarded(got, 0, size), "ps_selection_row_ids_device capacity %llu too small: the ids buffer was written",
               ull(cap));
      } else if (CHECK_OK(ctx, st)) {
        CHECKF(c == ec, "ps_selection_row_ids_device capacity %llu: count %llu, expected %llu", ull(cap), ull(c),
               ull(ec));
        same_ids(got + off, isz, want, ec, "ps_selection_row_ids_device");
        CHECKF(guarded(got, 0, off) && guarded(got, off + ec * isz, size),
               "ps_selection_row_ids_device capacity %llu: bytes outside the %llu ids were written", ull(cap), ull(ec));
      }
      free(got);
      ps_buffer_destroy(ids);
    }
    /* host memory */
    c = 12345;
    if (CHECK_OK(ctx, ps_selection_row_ids(ctx, sel, sel_off, n, type, NULL, 0, &c)))
      CHECKF(c == ec, "ps_selection_row_ids size only: count %llu, expected %llu", ull(c), ull(ec));
    size_t hsize = (size_t)((ec + 8) * isz);
    uint8_t *h = th_malloc(hsize);
    for (int k = 0; k < 3; k++) {
      uint64_t cap = k == 0 ? ec : k == 1 ? ec + 8 : ec - 1;
      if (k == 2 && ec == 0) continue;
      memset(h, GUARD, hsize);
      c = 12345;
      ps_status st = ps_selection_row_ids(ctx, sel, sel_off, n, type, h, cap, &c);
      if (k == 2) {
        CHECK_STATUS(ctx, st, PS_ERR_BUFFER_TOO_SMALL);
        CHECKF(c == ec, "ps_selection_row_ids capacity %llu: *count %llu, expected %llu", ull(cap), ull(c), ull(ec));
        CHECKF(guarded(h, 0, hsize), "ps_selection_row_ids capacity %llu too small: ids were written", ull(cap));
      } else if (CHECK_OK(ctx, st)) {
        CHECKF(c == ec, "ps_selection_row_ids capacity %llu: count %llu, expected %llu", ull(cap), ull(c), ull(ec));
        same_ids(h, isz, want, ec, "ps_selection_row_ids");
        CHECKF(guarded(h, ec * isz, hsize), "ps_selection_row_ids: bytes past the %llu ids were written", ull(ec));
      }
    }
    free(h);
  }
  free(want);
}

/* Selection patterns written straight into a device buffer. */
enum { P_NONE, P_ONE, P_LAST, P_PCT1, P_HALF, P_ALL, P_COUNT };
static const char *const pattern_name[P_COUNT] = {"none", "one row", "last row", "~1%", "~50%", "all"};

static void row_ids_patterns(void) {
  static const uint64_t ns[] = {0, 1, 31, 32, 33, 1000, 4133, 100003};
  for (int ci = 0; ci < NCTX; ci++) {
    ps_context *ctx = ctxs[ci];
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
      uint64_t n = th_chunked_rows(ns[k], chunk_rows[ci]);
      if (ns[k] > 5000 && ci != 0) continue; /* thousands of launches per call: keep PoCL fast */
      if (th_chunked_skip(ns, k, chunk_rows[ci])) continue;
      for (int p = 0; p < P_COUNT; p++) {
        th_case("row ids: chunk_rows=%llu n=%llu selection %s", ull(chunk_rows[ci]), ull(n), pattern_name[p]);
        uint64_t nb = nbytes(n);
        uint8_t *bits = th_calloc((size_t)nb + 1, 1);
        uint64_t one = n ? th_below(&th.rng, n) : 0;
        for (uint64_t i = 0; i < n; i++) {
          int s = p == P_ALL || (p == P_ONE && i == one) || (p == P_LAST && i == n - 1) ||
                  (p == P_PCT1 && th_chance(&th.rng, 1)) || (p == P_HALF && th_chance(&th.rng, 50));
          if (s) setbit(bits, i);
        }
        /* The bitmap at a 4-byte-aligned offset; the bits past n in its last byte
         * and the bytes after it are set: a row id is never >= n. */
        uint64_t off = 4 * th_below(&th.rng, 3);
        ps_buffer *sel = buf_new(ctx, off + nb + 8, 0xFF);
        uint8_t *dev = th_calloc((size_t)nb + 1, 1);
        memcpy(dev, bits, (size_t)nb);
        if (n % 8) dev[nb - 1] |= (uint8_t)(0xFFu << (n % 8));
        if (sel && nb) CHECK_OK(ctx, ps_buffer_write(ctx, sel, off, dev, nb));
        if (sel) check_row_ids(ctx, sel, off, n, bits);
        ps_buffer_destroy(sel);
        free(dev);
        free(bits);
      }
    }
  }
  th_case("%s", "");
}

/* A selection of 40M rows: on CUDA about 300 row-id tiles of 131,072 rows,
 * more than one round of the block-wide look-back (256 predecessors), so a
 * tile may have to walk back past a window without an inclusive prefix.
 * Sparse and dense stretches and long empty ones; every id checked, uint32
 * and uint64, with room for every row (the one-pass write) and exactly the
 * count (sized first). Other backends have no such tiles: 3M rows there
 * keep the CPU runs (PoCL) short. */
static void row_ids_many_tiles(void) {
  ps_context *ctx = ctxs[0];
  const int cuda = strcmp(ps_context_backend(ctx), "cuda") == 0;
  const uint64_t n = (cuda ? 300 * (uint64_t)131072 : 23 * (uint64_t)131072) + 77, nb = nbytes(n);
  th_case("row ids: n=%llu (many tiles)", ull(n));
  uint8_t *bits = th_calloc((size_t)nb + 8, 1);
  /* 3M-row stretches (multiples of 8 rows): empty, ~1% (random rows), ~50%
   * (random bytes); and the last row */
  const uint64_t zone = 3000000;
  for (uint64_t z0 = 0; z0 < n; z0 += zone) {
    const uint64_t len = n - z0 < zone ? n - z0 : zone;
    if ((z0 / zone) % 3 == 1) {
      for (uint64_t j = 0; j < len / 100; j++) setbit(bits, z0 + th_below(&th.rng, len));
    } else if ((z0 / zone) % 3 == 2) {
      for (uint64_t i = z0; i + 8 <= z0 + len; i += 8) bits[i / 8] = (uint8_t)th_u64(&th.rng);
    }
  }
  setbit(bits, n - 1);
  uint64_t ec = 0;
  for (uint64_t i = 0; i < n; i++) ec += (uint64_t)bit(bits, i);
  uint64_t *want = th_calloc((size_t)ec, sizeof *want), k = 0;
  for (uint64_t i = 0; i < n; i++)
    if (bit(bits, i)) want[k++] = i;
  ps_buffer *sel = NULL, *ids = NULL;
  CHECK_OK(ctx, ps_buffer_create(ctx, nb + 8, &sel));
  if (sel) CHECK_OK(ctx, ps_buffer_write(ctx, sel, 0, bits, nb));
  static const ps_index_type types[2] = {PS_INDEX_UINT32, PS_INDEX_UINT64};
  for (int t = 0; sel && t < 2; t++) {
    const uint32_t isz = (uint32_t)types[t];
    if (!CHECK_OK(ctx, ps_buffer_create(ctx, n * isz, &ids))) break;
    uint8_t *got = th_malloc((size_t)(ec * isz));
    for (int exact = 0; exact < 2 - t; exact++) { /* uint64: the one-pass write only */
      uint64_t c = 12345;
      if (CHECK_OK(ctx, ps_selection_row_ids_device(ctx, sel, 0, n, types[t], ids, 0, exact ? ec : n, &c)) &&
          CHECKF(c == ec, "ps_selection_row_ids_device: count %llu, expected %llu", ull(c), ull(ec)) &&
          CHECK_OK(ctx, ps_buffer_read(ctx, ids, 0, got, ec * isz)))
        same_ids(
            got, isz, want, ec,
            exact ? "ps_selection_row_ids_device (sized first)" : "ps_selection_row_ids_device (room for every row)");
    }
    free(got);
    ps_buffer_destroy(ids);
    ids = NULL;
  }
  ps_buffer_destroy(sel);
  free(want);
  free(bits);
  th_case("%s", "");
}

/* uint32 ids cannot address more than 2^32 rows. select.c checks the index
 * type before the selection's size, so a small buffer is enough to reach the
 * check; at exactly 2^32 rows uint32 is allowed and the size check fires. */
static void row_ids_uint32_limit(void) {
  ps_context *ctx = ctxs[0];
  th_case("uint32 row ids past 2^32 rows");
  ps_buffer *sel = buf_new(ctx, 64, 0);
  if (!sel) return;
  uint64_t big = ((uint64_t)1 << 32) + 1, c = 777;
  uint32_t h[4];
  CHECK_STATUS(ctx, ps_selection_row_ids_device(ctx, sel, 0, big, PS_INDEX_UINT32, NULL, 0, 0, &c),
               PS_ERR_INVALID_ARGUMENT);
  CHECKF(c == 777, "a refused ps_selection_row_ids_device wrote *count (%llu)", ull(c));
  CHECK(th_contains_ci(ps_context_last_error(ctx), "2^32"));
  CHECK_STATUS(ctx, ps_selection_row_ids_device(ctx, sel, 0, big, PS_INDEX_UINT32, sel, 0, 4, &c),
               PS_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(ctx, ps_selection_row_ids(ctx, sel, 0, big, PS_INDEX_UINT32, h, 4, &c), PS_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(ctx, ps_selection_row_ids(ctx, sel, 0, UINT64_MAX, PS_INDEX_UINT32, NULL, 0, &c),
               PS_ERR_INVALID_ARGUMENT);
  CHECKF(c == 777, "a refused ps_selection_row_ids wrote *count (%llu)", ull(c));
  /* 2^32 rows fit uint32 ids (0..2^32-1): the 64-byte selection is then too small */
  CHECK_STATUS(ctx, ps_selection_row_ids_device(ctx, sel, 0, (uint64_t)1 << 32, PS_INDEX_UINT32, NULL, 0, 0, &c),
               PS_ERR_BUFFER_TOO_SMALL);
  CHECK_STATUS(ctx, ps_selection_row_ids_device(ctx, sel, 0, big, PS_INDEX_UINT64, NULL, 0, 0, &c),
               PS_ERR_BUFFER_TOO_SMALL);
  /* the context still works */
  CHECK_OK(ctx, ps_selection_row_ids_device(ctx, sel, 0, 100, PS_INDEX_UINT32, NULL, 0, 0, &c));
  CHECK(c == 0);
  /* other bad requests */
  CHECK_STATUS(ctx, ps_selection_row_ids_device(ctx, sel, 0, 100, (ps_index_type)2, NULL, 0, 0, &c),
               PS_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(ctx, ps_selection_row_ids_device(ctx, sel, 0, 100, PS_INDEX_UINT32, NULL, 0, 0, NULL),
               PS_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(ctx, ps_selection_row_ids_device(ctx, sel, 2, 100, PS_INDEX_UINT32, NULL, 0, 0, &c),
               PS_ERR_INVALID_ARGUMENT);
  CHECK_STATUS(ctx, ps_selection_row_ids_device(ctx, sel, 0, 100, PS_INDEX_UINT64, sel, 4, 1, &c),
               PS_ERR_INVALID_ARGUMENT);
  ps_buffer_destroy(sel);
  th_case("%s", "");
}

/* ---- gather expectations ---------------------------------------------------------------- */

/* The expected plain value of row `row` of a FOR column (oracle.c decodes the
 * packed bits), as the value_bytes bytes the library writes; zero for nulls.
 * Returns the value size. */
static uint32_t expect_value(tcol *c, uint64_t row, uint8_t *out) {
  uint32_t vb = c->type == PS_TYPE_STRING ? 4 : (uint32_t)ps_type_size(c->type);
  memset(out, 0, vb);
  if (!oracle_valid(c, row)) return vb;
  ti128 raw = oracle_raw(c, row);
  switch (c->type) {
    case PS_TYPE_INT8: { int8_t v = (int8_t)raw; memcpy(out, &v, 1); break; }
    case PS_TYPE_INT16: { int16_t v = (int16_t)raw; memcpy(out, &v, 2); break; }
    case PS_TYPE_INT32: { int32_t v = (int32_t)raw; memcpy(out, &v, 4); break; }
    case PS_TYPE_INT64: case PS_TYPE_DECIMAL: { int64_t v = (int64_t)raw; memcpy(out, &v, 8); break; }
    case PS_TYPE_UINT8: { uint8_t v = (uint8_t)raw; memcpy(out, &v, 1); break; }
    case PS_TYPE_UINT16: { uint16_t v = (uint16_t)raw; memcpy(out, &v, 2); break; }
    case PS_TYPE_UINT32: case PS_TYPE_STRING: { uint32_t v = (uint32_t)raw; memcpy(out, &v, 4); break; }
    case PS_TYPE_UINT64: { uint64_t v = (uint64_t)raw; memcpy(out, &v, 8); break; }
    case PS_TYPE_FLOAT64: { double v = (double)(int64_t)raw / P10[c->scale]; memcpy(out, &v, 8); break; }
    case PS_TYPE_FLOAT32: { float v = (float)((double)(int64_t)raw / P10[c->scale]); memcpy(out, &v, 4); break; }
    default: break;
  }
  return vb;
}

static void print_value(char *buf, size_t size, ps_type t, const uint8_t *p) {
  uint64_t u = 0;
  if (t == PS_TYPE_FLOAT64) {
    double d;
    memcpy(&d, p, 8);
    snprintf(buf, size, "%.17g", d);
  } else if (t == PS_TYPE_FLOAT32) {
    float f;
    memcpy(&f, p, 4);
    snprintf(buf, size, "%.9g", (double)f);
  } else {
    size_t vb = t == PS_TYPE_STRING ? 4 : ps_type_size(t);
    memcpy(&u, p, vb);
    snprintf(buf, size, "0x%llx", ull(u));
  }
}

/* Checks count gathered values (and validity bits, when given) of ids. */
static int check_gathered(tcol *c, const uint64_t *ids, uint64_t count, const uint8_t *values, const uint8_t *validity,
                          const char *what) {
  char desc[256], g[64], w[64];
  uint8_t want[8];
  for (uint64_t i = 0; i < count; i++) {
    uint32_t vb = expect_value(c, ids[i], want);
    if (memcmp(values + i * vb, want, vb) != 0) {
      print_value(g, sizeof g, c->type, values + i * vb);
      print_value(w, sizeof w, c->type, want);
      return CHECKF(0, "%s: %s: value %llu (row %llu%s) is %s, expected %s", what, tcol_describe(c, desc, sizeof desc),
                    ull(i), ull(ids[i]), oracle_valid(c, ids[i]) ? "" : ", null", g, w);
    }
    if (validity && bit(validity, i) != oracle_valid(c, ids[i]))
      return CHECKF(0, "%s: %s: validity bit %llu (row %llu) is %d", what, tcol_describe(c, desc, sizeof desc), ull(i),
                    ull(ids[i]), bit(validity, i));
  }
  if (validity && count % 8)
    if (!CHECKF((validity[count / 8] >> (count % 8)) == 0, "%s: validity bits past %llu are not zero", what, ull(count)))
      return 0;
  th.checks++;
  return 1;
}

/* Gathers ids of column c (handle h) every way: host and device, uint32 and
 * uint64 ids, with and without validity; checks values, validity and that
 * nothing outside them was written. */
static void gather_all_ways(ps_context *ctx, tcol *c, ps_column *h, const uint64_t *ids, uint64_t count) {
  uint32_t vb = c->type == PS_TYPE_STRING ? 4 : (uint32_t)ps_type_size(c->type);
  uint64_t vn = nbytes(count);
  for (int t = 0; t < 2; t++) {
    ps_index_type type = t ? PS_INDEX_UINT64 : PS_INDEX_UINT32;
    uint32_t isz = (uint32_t)type;
    uint8_t *hid = th_calloc((size_t)count + 1, isz);
    for (uint64_t i = 0; i < count; i++) put_id(hid, isz, i, ids[i]);
    for (int with_valid = 0; with_valid < 2; with_valid++) {
      /* host */
      size_t hv = (size_t)(count * vb + 16), hn = (size_t)(vn + 8);
      uint8_t *values = th_malloc(hv), *valid = th_malloc(hn);
      memset(values, GUARD, hv);
      memset(valid, GUARD, hn);
      if (CHECK_OK(ctx, ps_gather_values(ctx, h, hid, type, count, values, with_valid ? valid : NULL))) {
        check_gathered(c, ids, count, values, with_valid ? valid : NULL, "ps_gather_values");
        CHECKF(guarded(values, count * vb, hv), "ps_gather_values wrote past %llu values", ull(count));
        CHECKF(guarded(valid, with_valid ? vn : 0, hn), "ps_gather_values wrote past the validity bitmap");
      }
      free(values);
      free(valid);
      /* device, at offsets */
      uint64_t ioff = 3 * (uint64_t)isz, voff = 5 * (uint64_t)vb, boff = 8;
      ps_buffer *bi = buf_new(ctx, ioff + count * isz + 8, GUARD);
      ps_buffer *bv = buf_new(ctx, voff + count * vb + 16, GUARD);
      ps_buffer *bb = buf_new(ctx, boff + vn + 8, GUARD);
      if (bi && bv && bb) {
        if (count) CHECK_OK(ctx, ps_buffer_write(ctx, bi, ioff, hid, count * isz));
        if (CHECK_OK(ctx,
                     ps_gather_values_device(ctx, h, bi, ioff, type, count, bv, voff, with_valid ? bb : NULL, boff))) {
          uint8_t *gv = buf_all(ctx, bv), *gb = buf_all(ctx, bb);
          check_gathered(c, ids, count, gv + voff, with_valid ? gb + boff : NULL, "ps_gather_values_device");
          CHECKF(guarded(gv, 0, voff) && guarded(gv, voff + count * vb, ps_buffer_size(bv)),
                 "ps_gather_values_device wrote outside its %llu values", ull(count));
          CHECKF(guarded(gb, 0, boff) && guarded(gb, boff + (with_valid ? vn : 0), ps_buffer_size(bb)),
                 "ps_gather_values_device wrote outside its validity bitmap");
          free(gv);
          free(gb);
        }
      }
      ps_buffer_destroy(bi);
      ps_buffer_destroy(bv);
      ps_buffer_destroy(bb);
    }
    free(hid);
  }
}

/* The strings of a dictionary column's rows: ps_gather_strings against
 * the test's own dictionary (nulls: empty strings, validity 0). */
static void gather_strings(ps_context *ctx, tcol *c, ps_column *h, const uint64_t *ids, uint64_t count) {
  char desc[256];
  for (int t = 0; t < 2; t++) {
    ps_index_type type = t ? PS_INDEX_UINT64 : PS_INDEX_UINT32;
    uint32_t isz = (uint32_t)type;
    uint8_t *hid = th_calloc((size_t)count + 1, isz);
    for (uint64_t i = 0; i < count; i++) put_id(hid, isz, i, ids[i]);
    uint64_t vn = nbytes(count);
    uint8_t *valid = th_malloc((size_t)vn + 4);
    memset(valid, GUARD, (size_t)vn + 4);
    int64_t *offs = NULL;
    uint8_t *bytes = NULL;
    if (CHECK_OK(ctx, ps_gather_strings(ctx, h, hid, type, count, &offs, &bytes, t ? valid : NULL))) {
      int ok = CHECKF(offs && offs[0] == 0, "ps_gather_strings: offsets[0] is not 0");
      for (uint64_t i = 0; ok && i < count; i++) {
        const uint8_t *s = (const uint8_t *)"";
        size_t len = 0;
        int v = oracle_valid(c, ids[i]);
        if (v) oracle_str(c, ids[i], &s, &len);
        int64_t glen = offs[i + 1] - offs[i];
        ok = CHECKF(glen == (int64_t)len && (len == 0 || memcmp(bytes + offs[i], s, len) == 0),
                    "ps_gather_strings: %s: string %llu (row %llu%s): got %lld bytes '%.*s', expected %zu bytes "
                    "'%.*s'",
                    tcol_describe(c, desc, sizeof desc), ull(i), ull(ids[i]), v ? "" : ", null", (long long)glen,
                    glen > 0 && glen < 64 ? (int)glen : 0, glen > 0 && glen < 64 ? (const char *)bytes + offs[i] : "",
                    len, (int)len, (const char *)s);
        if (ok && t)
          ok = CHECKF(bit(valid, i) == v, "ps_gather_strings: validity bit %llu is %d", ull(i), bit(valid, i));
      }
      if (t) {
        if (count % 8) CHECKF((valid[count / 8] >> (count % 8)) == 0, "ps_gather_strings: validity bits past count");
        CHECKF(guarded(valid, vn, vn + 4), "ps_gather_strings wrote past the validity bitmap");
      }
      ps_free(ctx, offs);
      ps_free(ctx, bytes);
    }
    free(valid);
    free(hid);
  }
}

static uint64_t *random_ids(uint64_t n, uint64_t count) {
  uint64_t *ids = th_calloc((size_t)count + 1, sizeof *ids);
  for (uint64_t i = 0; i < count; i++) ids[i] = th_below(&th.rng, n); /* unsorted, repeats */
  return ids;
}

static void gather_numeric(void) {
  static const ps_type types[] = {PS_TYPE_INT8,   PS_TYPE_INT16,  PS_TYPE_INT32,  PS_TYPE_INT64,   PS_TYPE_UINT8,
                                  PS_TYPE_UINT16, PS_TYPE_UINT32, PS_TYPE_UINT64, PS_TYPE_FLOAT32, PS_TYPE_FLOAT64,
                                  PS_TYPE_DECIMAL};
  static const uint64_t ns[] = {1, 33, 1000};
  for (int ci = 0; ci < 2; ci++) {
    ps_context *ctx = ctxs[ci];
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
      ps_type type = types[ti];
      uint32_t widths[5] = {0, 1 + (uint32_t)th_below(&th.rng, 63), 64, (uint32_t)ps_type_size(type) * 8,
                            1 + (uint32_t)th_below(&th.rng, 16)};
      for (int wi = 0; wi < 5; wi++) {
        uint64_t n = th_chunked_rows(TH_PICK(&th.rng, ns), chunk_rows[ci]);
        int nulls = (int)th_below(&th.rng, TN_COUNT);
        tcol *c = tcol_random_for(&th.rng, type, n, widths[wi], nulls);
        char desc[256];
        th_case("gather: chunk_rows=%llu %s", ull(chunk_rows[ci]), tcol_describe(c, desc, sizeof desc));
        ps_column *h = mkcol(ctx, c);
        if (h) {
          uint64_t count = th_below(&th.rng, 2 * n + 1);
          uint64_t *ids = random_ids(n, count);
          gather_all_ways(ctx, c, h, ids, count);
          free(ids);
          gather_all_ways(ctx, c, h, NULL, 0);
        }
        ps_column_destroy(h);
        tcol_free(c);
      }
    }
  }
  th_case("%s", "");
}

/* A dictionary with empty strings, a shared prefix and multi-byte UTF-8. */
static const char *const DICT[] = {"", "a", "ab", "\xc3\xa9t\xc3\xa9", "zzz", "", "mid"};
#define DICT_N 7

static tcol *make_dict(uint64_t n, uint32_t w, uint64_t m, int use64, ps_type code_type, int nulls) {
  tstrs l = {0};
  for (int i = 0; i < DICT_N; i++) tstrs_push(&l, DICT[i], strlen(DICT[i]));
  uint8_t *v = tcol_random_validity(&th.rng, n, nulls);
  uint64_t *codes = th_calloc((size_t)n + 1, sizeof *codes);
  for (uint64_t i = 0; i < n; i++) codes[i] = th_below(&th.rng, DICT_N - m);
  tcol *c = tcol_dict(&l, 0, use64, code_type, n, w, m, codes, v, &th.rng);
  free(codes);
  free(v);
  tstrs_free(&l);
  return c;
}

static void gather_dict(void) {
  for (int ci = 0; ci < 2; ci++) {
    ps_context *ctx = ctxs[ci];
    for (int k = 0; k < 6; k++) {
      uint64_t n = k < 2 ? 1 + th_below(&th.rng, 40) : 1000;
      uint32_t w = k == 5 ? 64 : 3 + (uint32_t)th_below(&th.rng, 12);
      tcol *c = make_dict(n, w, k % 3, k & 1, k == 5 ? PS_TYPE_UINT64 : PS_TYPE_UINT32, k == 4 ? TN_ALL : TN_HALF);
      char desc[256];
      th_case("gather dictionary: chunk_rows=%llu %s", ull(chunk_rows[ci]), tcol_describe(c, desc, sizeof desc));
      ps_column *h = mkcol(ctx, c);
      if (h) {
        uint64_t count = th_below(&th.rng, 2 * n + 1);
        uint64_t *ids = random_ids(n, count);
        gather_all_ways(ctx, c, h, ids, count);
        gather_strings(ctx, c, h, ids, count);
        gather_strings(ctx, c, h, ids, 0);
        free(ids);
      }
      ps_column_destroy(h);
      tcol_free(c);
    }
  }
  th_case("%s", "");
}

/* An id past the end; corrupt codes under valid rows (and not under nulls). */
static void gather_errors(void) {
  ps_context *ctx = ctxs[0];
  th_case("gather errors");
  enum { N = 40 };
  uint64_t codes[N];
  for (int i = 0; i < N; i++) codes[i] = (uint64_t)i % DICT_N;
  codes[5] = 9;  /* past the dictionary, valid row: corrupt */
  codes[6] = 11; /* past the dictionary under a null: not corrupt */
  uint8_t valid[N / 8];
  memset(valid, 0xFF, sizeof valid);
  valid[0] &= (uint8_t)~(1u << 6);
  tstrs l = {0};
  for (int i = 0; i < DICT_N; i++) tstrs_push(&l, DICT[i], strlen(DICT[i]));
  tcol *d = tcol_dict(&l, 0, 0, PS_TYPE_UINT32, N, 4, 0, codes, valid, NULL);
  tstrs_free(&l);
  for (int i = 0; i < N; i++) codes[i] = (uint64_t)i;
  codes[7] = 300; /* int8 M=0 at width 9: 300 is outside int8 */
  ps_reference r0 = {.i = 0};
  tcol *x = tcol_for(PS_TYPE_INT8, N, 9, 0, r0, codes, NULL, NULL);
  ps_column *hd = mkcol(ctx, d), *hx = mkcol(ctx, x);
  if (hd && hx) {
    uint32_t ids32[4] = {3, 1, 0, 2};
    uint64_t ids64[4] = {3, 1, 0, 2};
    uint8_t vals[64], vv[8];
    ps_column *cols[2] = {hd, hx};
    for (int k = 0; k < 2; k++) {
      ps_column *h = cols[k];
      /* an id >= n: host output untouched */
      ids32[2] = N;
      ids64[2] = k ? UINT64_MAX : N;
      memset(vals, GUARD, sizeof vals);
      memset(vv, GUARD, sizeof vv);
      CHECK_STATUS(ctx, ps_gather_values(ctx, h, ids32, PS_INDEX_UINT32, 4, vals, vv), PS_ERR_INVALID_ARGUMENT);
      CHECK_STATUS(ctx, ps_gather_values(ctx, h, ids64, PS_INDEX_UINT64, 4, vals, vv), PS_ERR_INVALID_ARGUMENT);
      CHECKF(guarded(vals, 0, sizeof vals) && guarded(vv, 0, sizeof vv), "a failed ps_gather_values wrote its outputs");
      ps_buffer *bi = buf_new(ctx, 32, 0), *bv = buf_new(ctx, 64, GUARD);
      if (bi && bv) {
        CHECK_OK(ctx, ps_buffer_write(ctx, bi, 0, ids64, sizeof ids64));
        CHECK_STATUS(ctx, ps_gather_values_device(ctx, h, bi, 0, PS_INDEX_UINT64, 4, bv, 0, NULL, 0),
                     PS_ERR_INVALID_ARGUMENT);
        /* too small / misplaced outputs */
        CHECK_STATUS(ctx, ps_gather_values_device(ctx, h, bi, 0, PS_INDEX_UINT64, 5, bv, 0, NULL, 0),
                     PS_ERR_BUFFER_TOO_SMALL);
        CHECK_STATUS(ctx, ps_gather_values_device(ctx, h, bi, 4, PS_INDEX_UINT64, 1, bv, 0, NULL, 0),
                     PS_ERR_INVALID_ARGUMENT);
      }
      ps_buffer_destroy(bi);
      ps_buffer_destroy(bv);
      ids32[2] = 0;
      ids64[2] = 0;
      /* a corrupt code under a valid row */
      uint32_t bad32[3] = {1, k ? 7u : 5u, 2};
      CHECK_STATUS(ctx, ps_gather_values(ctx, h, bad32, PS_INDEX_UINT32, 3, vals, NULL), PS_ERR_CORRUPT_DATA);
      ps_buffer *b2 = buf_new(ctx, 16, 0), *b3 = buf_new(ctx, 32, 0);
      if (b2 && b3) {
        CHECK_OK(ctx, ps_buffer_write(ctx, b2, 0, bad32, sizeof bad32));
        CHECK_STATUS(ctx, ps_gather_values_device(ctx, h, b2, 0, PS_INDEX_UINT32, 3, b3, 0, NULL, 0),
                     PS_ERR_CORRUPT_DATA);
      }
      ps_buffer_destroy(b2);
      ps_buffer_destroy(b3);
    }
    uint32_t bad32[2] = {5, 0};
    int64_t *offs = NULL;
    uint8_t *bytes = NULL;
    CHECK_STATUS(ctx, ps_gather_strings(ctx, hd, bad32, PS_INDEX_UINT32, 2, &offs, &bytes, NULL), PS_ERR_CORRUPT_DATA);
    CHECK(offs == NULL && bytes == NULL);
    bad32[0] = N;
    CHECK_STATUS(ctx, ps_gather_strings(ctx, hd, bad32, PS_INDEX_UINT32, 2, &offs, &bytes, NULL),
                 PS_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(ctx, ps_gather_strings(ctx, hx, bad32, PS_INDEX_UINT32, 1, &offs, &bytes, NULL), PS_ERR_TYPE_MISMATCH);
    /* every row except the corrupt ones gathers; the code under the null is no error */
    uint64_t all[N - 2], k = 0;
    for (uint64_t i = 0; i < N; i++)
      if (i != 5 && i != 7) all[k++] = i;
    gather_all_ways(ctx, d, hd, all, k);
    gather_strings(ctx, d, hd, all, k);
    gather_all_ways(ctx, x, hx, all, k);
    /* aggregates: corrupt data unless the selection leaves the row out */
    ps_aggregates a;
    CHECK_STATUS(ctx, ps_aggregate(ctx, hx, NULL, 0, &a), PS_ERR_CORRUPT_DATA);
    CHECK_STATUS(ctx, ps_aggregate(ctx, hd, NULL, 0, &a), PS_ERR_TYPE_MISMATCH);
    uint8_t sel[8] = {0x7F, 0xFF, 0xFF, 0xFF, 0xFF, 0, 0, 0}; /* every row but 7 */
    ps_buffer *bs = buf_new(ctx, 8, 0);
    if (bs && CHECK_OK(ctx, ps_buffer_write(ctx, bs, 0, sel, 8)) && CHECK_OK(ctx, ps_aggregate(ctx, hx, bs, 0, &a))) {
      int64_t s = 0;
      for (int i = 0; i < N; i++) s += i == 7 ? 0 : i;
      CHECKF(a.count == N - 1 && a.sum_int64 == s && a.min.i == 0 && a.max.i == N - 1,
             "aggregate around a corrupt row: count %llu sum %lld min %lld max %lld", ull(a.count),
             (long long)a.sum_int64, (long long)a.min.i, (long long)a.max.i);
    }
    ps_buffer_destroy(bs);
  }
  ps_column_destroy(hd);
  ps_column_destroy(hx);
  tcol_free(d);
  tcol_free(x);
  th_case("%s", "");
}

/* ---- filter -> row ids -> values, with the selectivity cases ------------------------------ */

/* Kleene: only TRUE rows. */
typedef struct fcase {
  const char *name;
  int op; /* 0: x < k, 1: x == k, 2: x >= k, 3: IS NULL, 4: NOT(x < k) */
  int64_t k;
} fcase;

static int fcase_true(const fcase *f, const int32_t *v, const uint8_t *valid, uint64_t i) {
  int ok = !valid || bit(valid, i);
  switch (f->op) {
    case 0: return ok && v[i] < f->k;
    case 1: return ok && v[i] == f->k;
    case 2: return ok && v[i] >= f->k;
    case 3: return !ok;
    default: return ok && !(v[i] < f->k);
  }
}

static ps_expr *fcase_expr(ps_context *ctx, const fcase *f, ps_column *h) {
  ps_expr *e = NULL, *inner = NULL;
  switch (f->op) {
    case 0: return cmp_int(ctx, h, PS_LT, f->k);
    case 1: return cmp_int(ctx, h, PS_EQ, f->k);
    case 2: return cmp_int(ctx, h, PS_GE, f->k);
    case 3: CHECK_OK(ctx, ps_expr_is_null(ctx, h, 0, &e)); return e;
    default:
      inner = cmp_int(ctx, h, PS_LT, f->k);
      if (inner && !CHECK_OK(ctx, ps_expr_not(ctx, inner, &e))) ps_expr_destroy(inner);
      return e;
  }
}

/* A filter column x (int32, values 0..999 and one 5000) and a payload y
 * (random type) over the same rows. */
static void filter_path(void) {
  static const uint64_t ns[] = {0, 1, 31, 32, 33, 1000, 4133, 100003};
  static const fcase cases[] = {{"x < 0 (none)", 0, 0},     {"x == 5000 (one row)", 1, 5000},
                                {"x < 10 (~1%)", 0, 10},     {"x < 500 (~50%)", 0, 500},
                                {"x >= 0 (all non-null)", 2, 0}, {"x IS NULL", 3, 0},
                                {"NOT(x < 500)", 4, 500}};
  static const ps_type payload[] = {PS_TYPE_INT64, PS_TYPE_FLOAT64, PS_TYPE_UINT16, PS_TYPE_FLOAT32, PS_TYPE_INT8};
  for (int ci = 0; ci < NCTX; ci++) {
    ps_context *ctx = ctxs[ci];
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
      uint64_t n = th_chunked_rows(ns[k], chunk_rows[ci]);
      if (ns[k] > 5000 && ci != 0) continue; /* thousands of launches per call: keep PoCL fast */
      if (th_chunked_skip(ns, k, chunk_rows[ci])) continue;
      for (int nullmode = 0; nullmode < 3; nullmode++) { /* none, ~10%, all null */
        if (n > 1000 && nullmode == 2) continue;
        /* The sanitizer size: one null mode per size, in turn. */
        if (th.quick >= 2 && (size_t)nullmode != (k + (size_t)ci) % (n > 1000 ? 2 : 3)) continue;
        int32_t *v = th_calloc((size_t)n + 1, sizeof *v);
        uint64_t *codes = th_calloc((size_t)n + 1, sizeof *codes);
        uint64_t one = n ? th_below(&th.rng, n) : 0;
        for (uint64_t i = 0; i < n; i++) v[i] = i == one ? 5000 : (int32_t)th_below(&th.rng, 1000);
        for (uint64_t i = 0; i < n; i++) codes[i] = (uint64_t)v[i];
        uint8_t *valid = nullmode ? tcol_random_validity(&th.rng, n, nullmode == 1 ? TN_FEW : TN_ALL) : NULL;
        if (valid && nullmode == 1 && n) setbit(valid, one);
        ps_reference r0 = {.i = 0};
        tcol *x = tcol_for(PS_TYPE_INT32, n, 13, 0, r0, codes, valid, &th.rng);
        tcol *y = tcol_random_for(&th.rng, TH_PICK(&th.rng, payload), n, (uint32_t)th_below(&th.rng, 65), TN_FEW);
        ps_column *hx = mkcol(ctx, x), *hy = mkcol(ctx, y);
        uint64_t nb = nbytes(n);
        for (size_t f = 0; hx && hy && f < sizeof cases / sizeof cases[0]; f++) {
          char desc[256];
          th_case("filter -> row ids -> values: chunk_rows=%llu n=%llu nulls=%d %s; payload %s", ull(chunk_rows[ci]),
                  ull(n), nullmode, cases[f].name, tcol_describe(y, desc, sizeof desc));
          uint8_t *want = th_calloc((size_t)nb + 1, 1);
          uint64_t *wid = th_calloc((size_t)n + 1, sizeof *wid), wc = 0;
          for (uint64_t i = 0; i < n; i++)
            if (fcase_true(&cases[f], v, valid, i)) setbit(want, i), wid[wc++] = i;
          ps_expr *e = fcase_expr(ctx, &cases[f], hx);
          uint64_t off = 4 * th_below(&th.rng, 3);
          ps_buffer *sel = buf_new(ctx, off + nb + 4, GUARD);
          uint64_t c = 0;
          if (e && sel && CHECK_OK(ctx, ps_filter_device(ctx, e, sel, off, &c))) {
            uint8_t *got = buf_all(ctx, sel);
            CHECKF(c == wc && memcmp(got + off, want, (size_t)nb) == 0, "ps_filter_device: count %llu, expected %llu",
                   ull(c), ull(wc));
            free(got);
            /* row_ids_patterns checks every way of getting ids at every size;
             * the sanitizer size leaves that out here. */
            if (th.quick < 2) check_row_ids(ctx, sel, off, n, want);
            /* the ids the library wrote into a device buffer feed ps_gather_values_device */
            for (int t = 0; t < 2; t++) {
              ps_index_type type = t ? PS_INDEX_UINT64 : PS_INDEX_UINT32;
              uint32_t isz = (uint32_t)type, vb = (uint32_t)ps_type_size(y->type);
              ps_buffer *ids = buf_new(ctx, (wc + 1) * isz, 0), *vals = buf_new(ctx, (wc + 1) * vb, GUARD);
              ps_buffer *vv = buf_new(ctx, nbytes(wc) + 4, GUARD);
              if (ids && vals && vv &&
                  CHECK_OK(ctx, ps_selection_row_ids_device(ctx, sel, off, n, type, ids, 0, wc, &c)) &&
                  CHECK_OK(ctx, ps_gather_values_device(ctx, hy, ids, 0, type, c, vals, 0, vv, 0))) {
                uint8_t *gv = buf_all(ctx, vals), *gb = buf_all(ctx, vv);
                check_gathered(y, wid, wc, gv, gb, "filter -> ps_selection_row_ids_device -> ps_gather_values_device");
                free(gv);
                free(gb);
              }
              ps_buffer_destroy(ids);
              ps_buffer_destroy(vals);
              ps_buffer_destroy(vv);
              /* ps_filter_row_ids: exactly allocated host ids, NULL when none */
              void *hid = (void *)&c;
              c = 12345;
              if (CHECK_OK(ctx, ps_filter_row_ids(ctx, e, type, &hid, &c))) {
                CHECKF(c == wc, "ps_filter_row_ids: count %llu, expected %llu", ull(c), ull(wc));
                if (wc == 0)
                  CHECKF(hid == NULL, "ps_filter_row_ids: ids not NULL for an empty selection");
                else if (CHECKF(hid != NULL, "ps_filter_row_ids: ids NULL") && c == wc)
                  same_ids(hid, isz, wid, wc, "ps_filter_row_ids");
                if (hid != (void *)&c) ps_free(ctx, hid);
              }
            }
          }
          ps_buffer_destroy(sel);
          ps_expr_destroy(e);
          free(want);
          free(wid);
        }
        ps_column_destroy(hx);
        ps_column_destroy(hy);
        tcol_free(x);
        tcol_free(y);
        free(valid);
        free(codes);
        free(v);
      }
    }
  }
  th_case("%s", "");
}

/* ---- aggregates ------------------------------------------------------------------------- */

static void check_aggregate(ps_context *ctx, tcol *c, ps_column *h, const uint8_t *selbits, const char *what) {
  uint64_t n = c->n, nb = nbytes(n);
  ps_buffer *sel = NULL;
  uint64_t off = 4 * th_below(&th.rng, 3);
  if (selbits) {
    sel = buf_new(ctx, off + nb + 4, 0);
    if (!sel) return;
    if (nb) CHECK_OK(ctx, ps_buffer_write(ctx, sel, off, selbits, nb));
  }
  /* expectation: exact 128-bit sum of M + code over selected valid rows */
  uint64_t count = 0;
  ti128 sum = 0, mn = 0, mx = 0;
  double fmn = 0, fmx = 0;
  for (uint64_t i = 0; i < n; i++) {
    if ((selbits && !bit(selbits, i)) || !oracle_valid(c, i)) continue;
    ti128 raw = oracle_raw(c, i);
    double f = 0;
    if (tcol_is_float(c->type)) {
      f = (double)(int64_t)raw / P10[c->scale];
      if (c->type == PS_TYPE_FLOAT32) f = (double)(float)f;
    }
    if (!count || raw < mn) mn = raw, fmn = f;
    if (!count || raw > mx) mx = raw, fmx = f;
    sum += raw;
    count++;
  }
  ps_aggregates a;
  memset(&a, 0x5A, sizeof a);
  char desc[256];
  if (!CHECK_OK(ctx, ps_aggregate(ctx, h, sel, off, &a))) {
    ps_buffer_destroy(sel);
    return;
  }
  tcol_describe(c, desc, sizeof desc);
  CHECKF(a.type == c->type, "%s: %s: type %d", what, desc, (int)a.type);
  CHECKF(a.scale == c->scale, "%s: %s: scale %u", what, desc, a.scale);
  CHECKF(a.count == count, "%s: %s: count %llu, expected %llu", what, desc, ull(a.count), ull(count));
  if (!count) {
    CHECKF(a.has_value == 0 && a.sum_lo == 0 && a.sum_hi == 0 && a.sum_fits_int64 == 0 && a.sum_int64 == 0 &&
               a.sum_double == 0 && a.min.u == 0 && a.max.u == 0,
           "%s: %s: an empty aggregate is not NULL with zero fields (has_value %d)", what, desc, a.has_value);
  } else {
    int fits = sum >= INT64_MIN && sum <= INT64_MAX;
    /* sum_double is defined as one rounding of the exact (scaled) sum, then one
     * division by 10^scale: every backend returns these bits, tolerance 0. */
    double sd = tcol_is_float(c->type) || c->type == PS_TYPE_DECIMAL ? (double)sum / P10[c->scale] : (double)sum;
    CHECKF(a.has_value == 1, "%s: %s: has_value %d", what, desc, a.has_value);
    CHECKF(a.sum_lo == (uint64_t)sum && a.sum_hi == (int64_t)(sum >> 64),
           "%s: %s: sum hi:lo %016llx:%016llx, expected %016llx:%016llx", what, desc, ull((uint64_t)a.sum_hi),
           ull(a.sum_lo), ull((uint64_t)(sum >> 64)), ull((uint64_t)sum));
    CHECKF(a.sum_fits_int64 == fits && (!fits || a.sum_int64 == (int64_t)sum),
           "%s: %s: sum_fits_int64 %d sum_int64 %lld, expected %d %lld", what, desc, a.sum_fits_int64,
           (long long)a.sum_int64, fits, (long long)(int64_t)sum);
    CHECKF(memcmp(&a.sum_double, &sd, sizeof sd) == 0, "%s: %s: sum_double %.17g, expected %.17g", what, desc,
           a.sum_double, sd);
    if (tcol_is_float(c->type)) {
      CHECKF(memcmp(&a.min.f, &fmn, 8) == 0 && memcmp(&a.max.f, &fmx, 8) == 0,
             "%s: %s: min/max %.17g / %.17g, expected %.17g / %.17g", what, desc, a.min.f, a.max.f, fmn, fmx);
    } else if (tcol_is_unsigned(c->type)) {
      CHECKF(a.min.u == (uint64_t)mn && a.max.u == (uint64_t)mx, "%s: %s: min/max %llu / %llu, expected %llu / %llu",
             what, desc, ull(a.min.u), ull(a.max.u), ull((uint64_t)mn), ull((uint64_t)mx));
    } else {
      CHECKF(a.min.i == (int64_t)mn && a.max.i == (int64_t)mx, "%s: %s: min/max %lld / %lld, expected %lld / %lld",
             what, desc, (long long)a.min.i, (long long)a.max.i, (long long)(int64_t)mn, (long long)(int64_t)mx);
    }
  }
  ps_buffer_destroy(sel);
}

/* Selections for aggregates: NULL (every row), ~50%, none, all, one row. */
static void aggregate_selections(ps_context *ctx, tcol *c, ps_column *h) {
  uint64_t n = c->n, nb = nbytes(n);
  uint8_t *bits = th_calloc((size_t)nb + 1, 1);
  check_aggregate(ctx, c, h, NULL, "ps_aggregate over all rows");
  for (uint64_t i = 0; i < n; i++)
    if (th_chance(&th.rng, 50)) setbit(bits, i);
  check_aggregate(ctx, c, h, bits, "ps_aggregate over ~50%");
  memset(bits, 0, (size_t)nb + 1);
  check_aggregate(ctx, c, h, bits, "ps_aggregate over an empty selection");
  if (n) {
    setbit(bits, th_below(&th.rng, n));
    check_aggregate(ctx, c, h, bits, "ps_aggregate over one row");
    for (uint64_t i = 0; i < n; i++) setbit(bits, i);
    check_aggregate(ctx, c, h, bits, "ps_aggregate over every row");
  }
  free(bits);
}

static void aggregates_random(void) {
  static const ps_type types[] = {PS_TYPE_INT8,   PS_TYPE_INT16,  PS_TYPE_INT32,  PS_TYPE_INT64,   PS_TYPE_UINT8,
                                  PS_TYPE_UINT16, PS_TYPE_UINT32, PS_TYPE_UINT64, PS_TYPE_FLOAT32, PS_TYPE_FLOAT64,
                                  PS_TYPE_DECIMAL};
  static const uint64_t ns[] = {0, 1, 33, 1000, 4133};
  for (int ci = 0; ci < NCTX; ci++) {
    ps_context *ctx = ctxs[ci];
    for (size_t ti = 0; ti < sizeof types / sizeof types[0]; ti++) {
      for (int rep = 0; rep < 3; rep++) {
        uint32_t w = rep == 0 ? (uint32_t)th_below(&th.rng, 65) : rep == 1 ? 64 : (uint32_t)th_below(&th.rng, 9);
        tcol *c = tcol_random_for(&th.rng, types[ti], th_chunked_rows(TH_PICK(&th.rng, ns), chunk_rows[ci]), w,
                                  (int)th_below(&th.rng, TN_COUNT));
        char desc[256];
        th_case("aggregates: chunk_rows=%llu %s", ull(chunk_rows[ci]), tcol_describe(c, desc, sizeof desc));
        ps_column *h = mkcol(ctx, c);
        if (h) aggregate_selections(ctx, c, h);
        ps_column_destroy(h);
        tcol_free(c);
      }
    }
  }
  th_case("%s", "");
}

/* Columns long enough that a device reduction loops over many tiles per
 * work-group (OpenCL's ps_reduce_tiles holds 16 groups per compute unit),
 * at widths around the tiles' 32-bit sum (27 bits) and their 32-bit codes,
 * with and without nulls. */
static void aggregates_many_tiles(void) {
  static const uint32_t widths[] = {1, 7, 24, 27, 28, 32};
  ps_context *ctx = ctxs[0];
  for (size_t k = 0; k < sizeof widths / sizeof widths[0]; k++) {
    const uint64_t n = 600000 + th_below(&th.rng, 5000);
    tcol *c = tcol_random_for(&th.rng, PS_TYPE_UINT32, n, widths[k], k % 2 ? TN_FEW : TN_NO_BITMAP);
    char desc[256];
    th_case("aggregates over many tiles: %s", tcol_describe(c, desc, sizeof desc));
    ps_column *h = mkcol(ctx, c);
    if (h) aggregate_selections(ctx, c, h);
    ps_column_destroy(h);
    tcol_free(c);
  }
  th_case("%s", "");
}

/* Sums at the limits: many values near INT64_MAX / INT64_MIN / UINT64_MAX (the
 * exact sum does not fit 64 bits), negative sums, float sums past 2^63. */
static void aggregates_limits(void) {
  typedef struct {
    const char *name;
    ps_type type;
    uint32_t w, scale;
    int64_t mi;
    uint64_t mu;
    int codes; /* 0: all zero, 1: random, 2: max code */
  } lcase;
  static const lcase cases[] = {
      {"int64 all INT64_MAX (w=0)", PS_TYPE_INT64, 0, 0, INT64_MAX, 0, 0},
      {"int64 near INT64_MAX", PS_TYPE_INT64, 8, 0, INT64_MAX - 255, 0, 1},
      {"int64 all INT64_MIN (w=0)", PS_TYPE_INT64, 0, 0, INT64_MIN, 0, 0},
      {"int64 near INT64_MIN", PS_TYPE_INT64, 12, 0, INT64_MIN, 0, 1},
      {"int64 full range w=64", PS_TYPE_INT64, 64, 0, INT64_MIN, 0, 1},
      {"int64 negative, fits", PS_TYPE_INT64, 20, 0, -1000000, 0, 1},
      {"int32 negative", PS_TYPE_INT32, 31, 0, INT32_MIN, 0, 1},
      {"uint64 near UINT64_MAX", PS_TYPE_UINT64, 10, 0, 0, UINT64_MAX - 1023, 1},
      {"uint64 all UINT64_MAX (w=64)", PS_TYPE_UINT64, 64, 0, 0, 0, 2},
      {"uint64 w=64 random", PS_TYPE_UINT64, 64, 0, 0, 0, 1},
      {"float64 near int64 raw max, scale 2", PS_TYPE_FLOAT64, 16, 2, INT64_MAX - 65535, 0, 1},
      {"float64 negative raw, scale 18", PS_TYPE_FLOAT64, 62, 18, INT64_MIN, 0, 1},
      {"float32 scale 3", PS_TYPE_FLOAT32, 24, 3, -8000000, 0, 1},
      {"float64 scale 0 w=64", PS_TYPE_FLOAT64, 64, 0, INT64_MIN, 0, 1},
  };
  static const uint64_t ns[] = {1, 1000, 2049};
  for (int ci = 0; ci < NCTX; ci++) {
    ps_context *ctx = ctxs[ci];
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
      const lcase *L = &cases[k];
      uint64_t n = th_chunked_rows(ns[(k + (size_t)ci) % 3], chunk_rows[ci]);
      uint64_t *codes = th_calloc((size_t)n + 1, sizeof *codes);
      uint64_t wmax = tcol_width_max(L->w);
      for (uint64_t i = 0; i < n; i++)
        codes[i] = L->codes == 0 ? 0 : L->codes == 2 ? wmax : (th_u64(&th.rng) & wmax);
      ps_reference ref;
      if (tcol_is_unsigned(L->type))
        ref.u = L->mu;
      else
        ref.i = L->mi;
      uint8_t *valid = k % 2 ? tcol_random_validity(&th.rng, n, TN_FEW) : NULL;
      tcol *c = tcol_for(L->type, n, L->w, L->scale, ref, codes, valid, &th.rng);
      th_case("aggregates at the limits: chunk_rows=%llu n=%llu %s", ull(chunk_rows[ci]), ull(n), L->name);
      ps_column *h = mkcol(ctx, c);
      if (h) {
        aggregate_selections(ctx, c, h);
        /* the named overflow cases really do not fit int64 */
        if (n >= 1000 && L->codes != 1 && !valid) {
          ps_aggregates a;
          if (CHECK_OK(ctx, ps_aggregate(ctx, h, NULL, 0, &a)))
            CHECKF(a.sum_fits_int64 == 0, "%s: sum_fits_int64 is %d for a sum past int64", L->name, a.sum_fits_int64);
        }
      }
      ps_column_destroy(h);
      tcol_free(c);
      free(valid);
      free(codes);
    }
  }
  th_case("%s", "");
}

/* ---- refine and masks ---------------------------------------------------------------- */

static void refine_and_masks(void) {
  static const uint64_t ns[] = {0, 1, 31, 33, 1000, 4133, 100003};
  for (int ci = 0; ci < NCTX; ci++) {
    ps_context *ctx = ctxs[ci];
    for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
      uint64_t n = th_chunked_rows(ns[k], chunk_rows[ci]), nb = nbytes(n);
      if (ns[k] > 5000 && ci != 0) continue; /* thousands of launches per call: keep PoCL fast */
      if (th_chunked_skip(ns, k, chunk_rows[ci])) continue;
      th_case("refine / masks: chunk_rows=%llu n=%llu", ull(chunk_rows[ci]), ull(n));
      /* a: int16 with ~50% nulls, values -500..499; b: uint8, no nulls */
      int32_t *va = th_calloc((size_t)n + 1, sizeof *va);
      uint64_t *ca = th_calloc((size_t)n + 1, sizeof *ca), *cb = th_calloc((size_t)n + 1, sizeof *cb);
      for (uint64_t i = 0; i < n; i++) {
        ca[i] = th_below(&th.rng, 1000);
        va[i] = (int32_t)ca[i] - 500;
        cb[i] = th_below(&th.rng, 256);
      }
      uint8_t *valid = tcol_random_validity(&th.rng, n, TN_HALF);
      ps_reference ra = {.i = -500}, rb = {.u = 0};
      tcol *a = tcol_for(PS_TYPE_INT16, n, 10, 0, ra, ca, valid, &th.rng);
      tcol *b = tcol_for(PS_TYPE_UINT8, n, 8, 0, rb, cb, NULL, &th.rng);
      ps_column *ha = mkcol(ctx, a), *hb = mkcol(ctx, b);
      if (ha && hb) {
        /* three predicates with independent expectations: a < 100, NOT(a < 100), b >= 128 */
        uint8_t *want[3];
        uint64_t wc[3] = {0, 0, 0};
        ps_expr *e[3] = {cmp_int(ctx, ha, PS_LT, 100), NULL, cmp_int(ctx, hb, PS_GE, 128)};
        ps_expr *inner = cmp_int(ctx, ha, PS_LT, 100);
        if (inner && !CHECK_OK(ctx, ps_expr_not(ctx, inner, &e[1]))) ps_expr_destroy(inner);
        for (int p = 0; p < 3; p++) {
          want[p] = th_calloc((size_t)nb + 1, 1);
          for (uint64_t i = 0; i < n; i++) {
            int ok = bit(valid, i);
            int t = p == 0 ? ok && va[i] < 100 : p == 1 ? ok && !(va[i] < 100) : cb[i] >= 128;
            if (t) setbit(want[p], i), wc[p]++;
          }
        }
        /* input selections: a random bitmap written by the test, and b >= 128 from the library */
        uint8_t *rnd = th_calloc((size_t)nb + 1, 1);
        for (uint64_t i = 0; i < n; i++)
          if (th_chance(&th.rng, 60)) setbit(rnd, i);
        for (int in_kind = 0; in_kind < 2 && e[0] && e[1] && e[2]; in_kind++) {
          const uint8_t *inbits = in_kind ? want[2] : rnd;
          for (int p = 0; p < 2; p++) {
            uint8_t *expect = th_calloc((size_t)nb + 1, 1);
            uint64_t ec = 0;
            for (uint64_t i = 0; i < nb; i++) expect[i] = inbits[i] & want[p][i];
            for (uint64_t i = 0; i < n; i++) ec += bit(expect, i);
            uint64_t ioff = 4, ooff = 8, size = 16 + nb + 8;
            ps_buffer *in = buf_new(ctx, size, GUARD), *out = buf_new(ctx, size, GUARD);
            if (!in || !out) break;
            uint64_t c = 0;
            if (in_kind)
              CHECK_OK(ctx, ps_filter_device(ctx, e[2], in, ioff, &c));
            else if (nb)
              CHECK_OK(ctx, ps_buffer_write(ctx, in, ioff, rnd, nb));
            uint8_t *before = buf_all(ctx, in);
            /* out of place */
            c = 12345;
            if (CHECK_OK(ctx, ps_filter_refine(ctx, e[p], in, ioff, out, ooff, &c))) {
              uint8_t *got = buf_all(ctx, out), *gin = buf_all(ctx, in);
              CHECKF(c == ec, "ps_filter_refine (predicate %d, input %d): count %llu, expected %llu", p, in_kind, ull(c),
                     ull(ec));
              CHECKF(memcmp(got + ooff, expect, (size_t)nb) == 0, "ps_filter_refine (predicate %d, input %d): bitmap differs",
                     p, in_kind);
              CHECKF(guarded(got, 0, ooff) && guarded(got, ooff + nb, size), "ps_filter_refine wrote outside its bitmap");
              CHECKF(memcmp(gin, before, (size_t)size) == 0, "ps_filter_refine changed its input selection");
              free(got);
              free(gin);
            }
            /* count optional */
            CHECK_OK(ctx, ps_filter_refine(ctx, e[p], in, ioff, out, ooff, NULL));
            /* in place: same buffer, same offset */
            c = 12345;
            if (CHECK_OK(ctx, ps_filter_refine(ctx, e[p], in, ioff, in, ioff, &c))) {
              uint8_t *got = buf_all(ctx, in);
              CHECKF(c == ec, "ps_filter_refine in place (predicate %d, input %d): count %llu, expected %llu", p,
                     in_kind, ull(c), ull(ec));
              CHECKF(memcmp(got + ioff, expect, (size_t)nb) == 0,
                     "ps_filter_refine in place (predicate %d, input %d): bitmap differs", p, in_kind);
              CHECKF(guarded(got, 0, ioff) && guarded(got, ioff + nb, size), "ps_filter_refine in place wrote outside");
              free(got);
              /* and the refined selection's row ids */
              check_row_ids(ctx, in, ioff, n, expect);
            }
            free(before);
            free(expect);
            ps_buffer_destroy(in);
            ps_buffer_destroy(out);
          }
        }
        free(rnd);
        /* byte masks: host (bytes past n keep their fill) and device at an offset */
        for (int p = 0; p < 3 && e[p]; p++) {
          size_t hs = (size_t)n + 16;
          uint8_t *m = th_malloc(hs);
          memset(m, GUARD, hs);
          uint64_t c = 12345;
          if (CHECK_OK(ctx, ps_filter_mask(ctx, e[p], m, n + 16, &c))) {
            int ok = 1;
            for (uint64_t i = 0; i < n && ok; i++)
              ok = CHECKF(m[i] == bit(want[p], i), "ps_filter_mask: byte %llu is %u, expected %d", ull(i), m[i],
                          bit(want[p], i));
            CHECKF(guarded(m, n, hs), "ps_filter_mask wrote past n bytes");
            CHECKF(c == wc[p], "ps_filter_mask: count %llu, expected %llu", ull(c), ull(wc[p]));
          }
          if (n) CHECK_STATUS(ctx, ps_filter_mask(ctx, e[p], m, n - 1, &c), PS_ERR_BUFFER_TOO_SMALL);
          free(m);
          uint64_t off = 4 * (1 + th_below(&th.rng, 2)), size = off + n + 12;
          ps_buffer *bm = buf_new(ctx, size, GUARD);
          c = 12345;
          if (bm && CHECK_OK(ctx, ps_filter_mask_device(ctx, e[p], bm, off, &c))) {
            uint8_t *got = buf_all(ctx, bm);
            int ok = 1;
            for (uint64_t i = 0; i < n && ok; i++)
              ok = CHECKF(got[off + i] == bit(want[p], i), "ps_filter_mask_device: byte %llu is %u, expected %d", ull(i),
                          got[off + i], bit(want[p], i));
            CHECKF(guarded(got, 0, off) && guarded(got, off + n, size), "ps_filter_mask_device wrote outside its n bytes");
            CHECKF(c == wc[p], "ps_filter_mask_device: count %llu, expected %llu", ull(c), ull(wc[p]));
            free(got);
          }
          ps_buffer_destroy(bm);
        }
        for (int p = 0; p < 3; p++) {
          free(want[p]);
          ps_expr_destroy(e[p]);
        }
      }
      ps_column_destroy(ha);
      ps_column_destroy(hb);
      tcol_free(a);
      tcol_free(b);
      free(valid);
      free(va);
      free(ca);
      free(cb);
    }
  }
  th_case("%s", "");
}

/* ---- refine and masks on the one-range fast paths ------------------------------------ */

/* A BETWEEN on a column without nulls, at the widths whose fast kernels
 * differ (codes within words: 1, 2, 4, 8, 16; straddling: 6, 12, 24): the
 * input selection of a refinement rides in the kernels' validity slot, and
 * byte masks come from the direct kernel at 1..16 bits. Outputs at 16-byte
 * aligned places (the vector stores) and at 4-byte ones (the bounded ones),
 * in place and out of place. */
static void refine_masks_fast(void) {
  static const uint32_t widths[] = {1, 2, 4, 6, 8, 12, 16, 24};
  static const uint64_t ns[] = {1, 31, 33, 1000, 4133, 70003};
  for (int ci = 0; ci < NCTX; ci++) {
    ps_context *ctx = ctxs[ci];
    for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++)
      for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
        const uint32_t w = widths[wi];
        const uint64_t n = th_chunked_rows(ns[k], chunk_rows[ci]), nb = nbytes(n), top = ((uint64_t)1 << w) - 1;
        if (ns[k] > 5000 && ci != 0) continue; /* thousands of launches per call: keep PoCL fast */
        if (th_chunked_skip(ns, k, chunk_rows[ci])) continue;
        const uint64_t lo = th_below(&th.rng, top + 1), hi = lo + th_below(&th.rng, top - lo + 1);
        th_case("refine / masks fast: chunk_rows=%llu w=%u n=%llu between %llu and %llu", ull(chunk_rows[ci]), w,
                ull(n), ull(lo), ull(hi));
        uint64_t *codes = th_calloc((size_t)n, sizeof *codes);
        uint8_t *want = th_calloc((size_t)nb + 1, 1), *in_bits = th_calloc((size_t)nb + 1, 1);
        uint8_t *expect = th_calloc((size_t)nb + 1, 1);
        uint64_t wc = 0, ec = 0;
        const unsigned density = (unsigned)th_below(&th.rng, 101);
        for (uint64_t i = 0; i < n; i++) {
          codes[i] = th_below(&th.rng, top + 1);
          if (codes[i] >= lo && codes[i] <= hi) setbit(want, i), wc++;
          if (th_chance(&th.rng, density)) setbit(in_bits, i);
          if (bit(want, i) && bit(in_bits, i)) setbit(expect, i), ec++;
        }
        ps_reference ref = {.u = 0};
        tcol *c = tcol_for(PS_TYPE_UINT32, n, w, 0, ref, codes, NULL, &th.rng);
        ps_column *h = mkcol(ctx, c);
        ps_expr *e = NULL;
        if (h) CHECK_OK(ctx, ps_expr_between(ctx, h, ps_lit_int((int64_t)lo), ps_lit_int((int64_t)hi), &e));
        for (int place = 0; e && place < 2; place++) {
          /* place 0: input at 16, output at 32 (16-byte aligned); place 1: 4 and 12 */
          const uint64_t ioff = place ? 4 : 16, ooff = place ? 12 : 32, size = 48 + nb + 16;
          ps_buffer *in = buf_new(ctx, size, GUARD), *out = buf_new(ctx, size, GUARD);
          if (in && out && nb) CHECK_OK(ctx, ps_buffer_write(ctx, in, ioff, in_bits, nb));
          uint8_t *before = in ? buf_all(ctx, in) : NULL;
          uint64_t cnt = 12345;
          if (in && out && CHECK_OK(ctx, ps_filter_refine(ctx, e, in, ioff, out, ooff, &cnt))) {
            uint8_t *got = buf_all(ctx, out), *gin = buf_all(ctx, in);
            CHECKF(cnt == ec, "ps_filter_refine: count %llu, expected %llu", ull(cnt), ull(ec));
            CHECKF(memcmp(got + ooff, expect, (size_t)nb) == 0, "ps_filter_refine: bitmap differs");
            CHECKF(guarded(got, 0, ooff) && guarded(got, ooff + nb, size), "ps_filter_refine wrote outside its bitmap");
            CHECKF(memcmp(gin, before, (size_t)size) == 0, "ps_filter_refine changed its input selection");
            free(got);
            free(gin);
          }
          cnt = 12345;
          if (in && CHECK_OK(ctx, ps_filter_refine(ctx, e, in, ioff, in, ioff, &cnt))) {
            uint8_t *got = buf_all(ctx, in);
            CHECKF(cnt == ec, "ps_filter_refine in place: count %llu, expected %llu", ull(cnt), ull(ec));
            CHECKF(memcmp(got + ioff, expect, (size_t)nb) == 0, "ps_filter_refine in place: bitmap differs");
            CHECKF(guarded(got, 0, ioff) && guarded(got, ioff + nb, size), "ps_filter_refine in place wrote outside");
            free(got);
          }
          free(before);
          ps_buffer_destroy(in);
          ps_buffer_destroy(out);
          /* the byte mask, at a 16-byte aligned offset and at a 4-byte one */
          const uint64_t moff = place ? 4 : 16, msize = moff + n + 16;
          ps_buffer *bm = buf_new(ctx, msize, GUARD);
          cnt = 12345;
          if (bm && CHECK_OK(ctx, ps_filter_mask_device(ctx, e, bm, moff, &cnt))) {
            uint8_t *got = buf_all(ctx, bm);
            int ok = 1;
            for (uint64_t i = 0; i < n && ok; i++)
              ok = CHECKF(got[moff + i] == bit(want, i), "ps_filter_mask_device: byte %llu is %u, expected %d", ull(i),
                          got[moff + i], bit(want, i));
            CHECKF(guarded(got, 0, moff) && guarded(got, moff + n, msize), "ps_filter_mask_device wrote outside");
            CHECKF(cnt == wc, "ps_filter_mask_device: count %llu, expected %llu", ull(cnt), ull(wc));
            free(got);
          }
          ps_buffer_destroy(bm);
        }
        ps_expr_destroy(e);
        ps_column_destroy(h);
        tcol_free(c);
        free(codes);
        free(want);
        free(in_bits);
        free(expect);
      }
  }
  th_case("%s", "");
}

int main(int argc, char **argv) {
  th_init(argc, argv, "select");
  for (int i = 0; i < NCTX; i++) ctxs[i] = th_context(chunk_rows[i]);
  row_ids_patterns();
  row_ids_uint32_limit();
  row_ids_many_tiles();
  filter_path();
  gather_numeric();
  gather_dict();
  gather_errors();
  aggregates_random();
  aggregates_many_tiles();
  aggregates_limits();
  refine_and_masks();
  refine_masks_fast();
  for (int i = 0; i < NCTX; i++) ps_context_destroy(ctxs[i]);
  return th_finish();
}
