/*
 * Host encoders and decoders: ps_encode_for, ps_decode_for, ps_encode_dict.
 * Checks round trips, the exact packed layout (against an independent
 * bit-by-bit reader), minimal widths and scales, extremes, nulls, and every
 * rejection. Seeded: PACKSCAN_SEED=<n> reproduces a run; the seed is printed
 * on failure. Needs only packscan.h and the library.
 */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "packscan.h"

static uint64_t g_seed;
static uint64_t g_rng;
static int g_failures;
static char g_err[1024];

#define CHECK(cond)                                                                          \
  do {                                                                                       \
    if (!(cond)) {                                                                           \
      fprintf(stderr, "%s:%d: CHECK failed: %s (seed %" PRIu64 ")\n  last error: %s\n",      \
              __FILE__, __LINE__, #cond, g_seed, g_err);                                     \
      g_failures++;                                                                          \
      if (g_failures > 20) {                                                                 \
        fprintf(stderr, "too many failures; PACKSCAN_SEED=%" PRIu64 " reproduces\n", g_seed); \
        exit(1);                                                                             \
      }                                                                                      \
    }                                                                                        \
  } while (0)

#define CHECK_ST(expr, want)                                                                  \
  do {                                                                                        \
    ps_status st_ = (expr);                                                                   \
    if (st_ != (want)) {                                                                      \
      fprintf(stderr, "%s:%d: %s returned %s, expected %s (seed %" PRIu64 ")\n  error: %s\n", \
              __FILE__, __LINE__, #expr, ps_status_name(st_), ps_status_name(want), g_seed,   \
              g_err);                                                                         \
      g_failures++;                                                                           \
    }                                                                                         \
  } while (0)

/* splitmix64: small, seedable, good enough for test data. */
static uint64_t rnd(void) {
  uint64_t z = (g_rng += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}
static uint64_t rnd_below(uint64_t n) { return n ? rnd() % n : 0; }

/* ---- type helpers (independent of the library's) ------------------------- */

#define SIGN ((uint64_t)1 << 63)

static const ps_type k_int_types[] = {PS_TYPE_INT8,   PS_TYPE_INT16,  PS_TYPE_INT32,
                                      PS_TYPE_INT64,  PS_TYPE_UINT8,  PS_TYPE_UINT16,
                                      PS_TYPE_UINT32, PS_TYPE_UINT64};

static int is_signed_type(ps_type t) { return t >= PS_TYPE_INT8 && t <= PS_TYPE_INT64; }

static size_t tsize(ps_type t) {
  switch (t) {
    case PS_TYPE_INT8: case PS_TYPE_UINT8: return 1;
    case PS_TYPE_INT16: case PS_TYPE_UINT16: return 2;
    case PS_TYPE_INT32: case PS_TYPE_UINT32: case PS_TYPE_FLOAT32: return 4;
    default: return 8;
  }
}

/* Order-preserving key range of an integer type. */
static void key_range(ps_type t, uint64_t *lo, uint64_t *hi) {
  unsigned bits = (unsigned)tsize(t) * 8;
  uint64_t m = bits == 64 ? UINT64_MAX : (((uint64_t)1 << bits) - 1);
  if (is_signed_type(t)) {
    *lo = SIGN - (m >> 1) - 1;
    *hi = SIGN + (m >> 1);
  } else {
    *lo = 0;
    *hi = m;
  }
}

static int64_t to_i64(uint64_t u) {
  return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)~u - 1;
}

static uint64_t load_key(ps_type t, const void *a, uint64_t i) {
  switch (t) {
    case PS_TYPE_INT8: return (uint64_t)(int64_t)((const int8_t *)a)[i] ^ SIGN;
    case PS_TYPE_INT16: return (uint64_t)(int64_t)((const int16_t *)a)[i] ^ SIGN;
    case PS_TYPE_INT32: return (uint64_t)(int64_t)((const int32_t *)a)[i] ^ SIGN;
    case PS_TYPE_INT64: return (uint64_t)((const int64_t *)a)[i] ^ SIGN;
    case PS_TYPE_UINT8: return ((const uint8_t *)a)[i];
    case PS_TYPE_UINT16: return ((const uint16_t *)a)[i];
    case PS_TYPE_UINT32: return ((const uint32_t *)a)[i];
    default: return ((const uint64_t *)a)[i];
  }
}

static void store_key(ps_type t, void *a, uint64_t i, uint64_t key) {
  int64_t s = to_i64(key ^ SIGN);
  switch (t) {
    case PS_TYPE_INT8: ((int8_t *)a)[i] = (int8_t)s; break;
    case PS_TYPE_INT16: ((int16_t *)a)[i] = (int16_t)s; break;
    case PS_TYPE_INT32: ((int32_t *)a)[i] = (int32_t)s; break;
    case PS_TYPE_INT64: ((int64_t *)a)[i] = s; break;
    case PS_TYPE_UINT8: ((uint8_t *)a)[i] = (uint8_t)key; break;
    case PS_TYPE_UINT16: ((uint16_t *)a)[i] = (uint16_t)key; break;
    case PS_TYPE_UINT32: ((uint32_t *)a)[i] = (uint32_t)key; break;
    default: ((uint64_t *)a)[i] = key; break;
  }
}

static uint64_t ref_key(ps_type t, ps_reference r) {
  return is_signed_type(t) || t == PS_TYPE_FLOAT32 || t == PS_TYPE_FLOAT64 ? (uint64_t)r.i ^ SIGN
                                                                           : r.u;
}

static unsigned bitlen(uint64_t v) {
  unsigned n = 0;
  while (v) n++, v >>= 1;
  return n;
}

static int valid_at(const uint8_t *v, uint64_t i) { return !v || ((v[i / 8] >> (i % 8)) & 1); }

/* The format's definition, one bit at a time: code i is stream bits
 * [i*w, (i+1)*w), stream bit k is bit k%8 of byte k/8. */
static uint64_t oracle_code(const ps_for_desc *d, uint64_t i) {
  const uint8_t *p = d->data;
  uint64_t c = 0;
  for (unsigned b = 0; b < d->width; b++) {
    uint64_t k = i * d->width + b;
    c |= (uint64_t)((p[k / 8] >> (k % 8)) & 1) << b;
  }
  return c;
}

static uint64_t expect_size(uint64_t n, unsigned w) { return (n * w + 7) / 8; }

static uint8_t *random_validity(uint64_t n, int mode) {
  /* mode 0: none; 1: random; 2: all null; 3: mostly valid */
  if (mode == 0) return NULL;
  uint8_t *v = calloc(n / 8 + 1, 1);
  for (uint64_t i = 0; i < n; i++) {
    int on = mode == 1 ? (int)(rnd() & 1) : mode == 2 ? 0 : (rnd_below(10) != 0);
    if (on) v[i / 8] |= (uint8_t)(1u << (i % 8));
  }
  /* Garbage in the padding bits must not matter. */
  if (n % 8) v[n / 8] |= (uint8_t)(0xffu << (n % 8));
  return v;
}

/* ---- integers ------------------------------------------------------------ */

/* Encodes (t, vals, validity) at `width`, checks the layout against the
 * oracle and the round trip. Returns the width used (or -1 on failure). */
static int check_int_roundtrip(ps_type t, const void *vals, uint64_t n, const uint8_t *validity,
                               unsigned width) {
  uint64_t kmin = UINT64_MAX, kmax = 0;
  int any = 0;
  for (uint64_t i = 0; i < n; i++) {
    if (!valid_at(validity, i)) continue;
    uint64_t k = load_key(t, vals, i);
    if (k < kmin) kmin = k;
    if (k > kmax) kmax = k;
    any = 1;
  }
  if (!any) kmin = kmax = is_signed_type(t) ? SIGN : 0;
  unsigned need = bitlen(kmax - kmin);
  ps_plain in = {t, vals, n, validity};
  ps_encoded enc;
  ps_status st = ps_encode_for(&in, width, 0, 0, NULL, g_err, sizeof g_err, &enc);
  if (width && width < need) {
    CHECK_ST(st, PS_ERR_NOT_REPRESENTABLE);
    CHECK(enc.data == NULL && enc.desc.n == 0);
    return -1;
  }
  CHECK_ST(st, PS_OK);
  if (st != PS_OK) return -1;
  unsigned w = width ? width : need;
  CHECK(enc.desc.struct_size == sizeof(ps_for_desc));
  CHECK(enc.desc.type == t);
  CHECK(enc.desc.n == n);
  CHECK(enc.desc.width == w);
  CHECK(enc.desc.scale == 0);
  CHECK(ref_key(t, enc.desc.reference) == kmin);
  CHECK(enc.desc.data == enc.data);
  CHECK(enc.desc.data_size == expect_size(n, w));
  if (validity) {
    CHECK(enc.validity && enc.desc.validity == enc.validity);
    CHECK(enc.desc.validity_size == (n + 7) / 8);
    for (uint64_t i = 0; i < n; i++) CHECK(valid_at(enc.validity, i) == valid_at(validity, i));
  } else {
    CHECK(enc.validity == NULL && enc.desc.validity == NULL);
  }
  for (uint64_t i = 0; i < n; i++) {
    uint64_t want = valid_at(validity, i) ? load_key(t, vals, i) - kmin : 0;
    if (oracle_code(&enc.desc, i) != want) {
      CHECK(oracle_code(&enc.desc, i) == want);
      break;
    }
  }
  /* Bits past the last code are zero. */
  if ((n * w) % 8) {
    const uint8_t *p = enc.data;
    CHECK((p[enc.desc.data_size - 1] >> ((n * w) % 8)) == 0);
  }
  void *dec = malloc(n * tsize(t) + 1);
  memset(dec, 0xa5, n * tsize(t) + 1);
  CHECK_ST(ps_decode_for(&enc.desc, dec, g_err, sizeof g_err), PS_OK);
  for (uint64_t i = 0; i < n; i++) {
    uint64_t got = load_key(t, dec, i);
    uint64_t want = valid_at(validity, i) ? load_key(t, vals, i) : (is_signed_type(t) ? SIGN : 0);
    if (got != want) {
      fprintf(stderr, "  %s row %" PRIu64 " width %u: got key %" PRIx64 " want %" PRIx64 "\n",
              ps_type_name(t), i, w, got, want);
      CHECK(got == want);
      break;
    }
  }
  CHECK(((uint8_t *)dec)[n * tsize(t)] == 0xa5); /* nothing written past n values */
  free(dec);
  ps_encoded_destroy(&enc);
  CHECK(enc.data == NULL && enc.validity == NULL);
  return (int)w;
}

static void fill_random_ints(ps_type t, void *vals, uint64_t n, unsigned spread_bits) {
  uint64_t lo, hi;
  key_range(t, &lo, &hi);
  uint64_t range = hi - lo; /* keys lo..hi */
  uint64_t base = lo + (range == UINT64_MAX ? rnd() : rnd_below(range + 1));
  uint64_t mask = spread_bits >= 64 ? UINT64_MAX : (((uint64_t)1 << spread_bits) - 1);
  for (uint64_t i = 0; i < n; i++) {
    uint64_t k = base + (rnd() & mask);
    if (k < base || k > hi) k = hi - (rnd() & mask); /* wrapped or past the type: go down */
    if (k > hi || k < lo) k = lo + (rnd() & mask & range);
    store_key(t, vals, i, k);
  }
}

static void test_int_random(void) {
  static const uint64_t sizes[] = {0, 1, 2, 7, 8, 31, 32, 33, 63, 64, 65, 100, 1000, 4099};
  for (size_t ti = 0; ti < sizeof k_int_types / sizeof k_int_types[0]; ti++) {
    ps_type t = k_int_types[ti];
    for (size_t si = 0; si < sizeof sizes / sizeof sizes[0]; si++) {
      uint64_t n = sizes[si];
      for (int rep = 0; rep < 3; rep++) {
        void *vals = malloc(n * tsize(t) + 1);
        fill_random_ints(t, vals, n, (unsigned)rnd_below(65));
        uint8_t *validity = random_validity(n, (int)rnd_below(4));
        int w = check_int_roundtrip(t, vals, n, validity, 0);
        if (w >= 0) {
          /* Every explicit width from the minimum up, one below, and 64. */
          unsigned w1 = w ? (unsigned)w : 1;
          for (unsigned ew = w1; ew <= 64; ew += 1 + (unsigned)rnd_below(9))
            check_int_roundtrip(t, vals, n, validity, ew);
          check_int_roundtrip(t, vals, n, validity, 64);
          if (w > 1) check_int_roundtrip(t, vals, n, validity, (unsigned)w - 1);
        }
        free(validity);
        free(vals);
      }
    }
  }
}

/* Every width 1..64 with codes spanning the whole width. */
static void test_all_widths(void) {
  for (unsigned w = 1; w <= 64; w++) {
    uint64_t n = 97;
    uint64_t *vals = malloc(n * 8);
    uint64_t mask = w == 64 ? UINT64_MAX : (((uint64_t)1 << w) - 1);
    for (uint64_t i = 0; i < n; i++) vals[i] = rnd() & mask;
    vals[3] = 0;
    vals[50] = mask;
    CHECK(check_int_roundtrip(PS_TYPE_UINT64, vals, n, NULL, 0) == (int)w);
    check_int_roundtrip(PS_TYPE_UINT64, vals, n, NULL, w);
    free(vals);
  }
}

/* w = 8/16/32/64: the stream is the plain little-endian array of codes. */
static void test_byte_aligned(void) {
  uint8_t u8[40];
  for (int i = 0; i < 40; i++) u8[i] = (uint8_t)rnd();
  u8[7] = 0; /* M = 0: codes are the values themselves */
  ps_plain in = {PS_TYPE_UINT8, u8, 40, NULL};
  ps_encoded enc;
  CHECK_ST(ps_encode_for(&in, 8, 0, 0, NULL, g_err, sizeof g_err, &enc), PS_OK);
  CHECK(enc.desc.data_size == 40 && memcmp(enc.data, u8, 40) == 0);
  ps_encoded_destroy(&enc);

  static const unsigned widths[] = {16, 32, 64};
  for (int wi = 0; wi < 3; wi++) {
    unsigned w = widths[wi];
    int64_t v[37];
    for (int i = 0; i < 37; i++) v[i] = -1000 + (int64_t)rnd_below(30000);
    ps_plain pin = {PS_TYPE_INT64, v, 37, NULL};
    CHECK_ST(ps_encode_for(&pin, w, 0, 0, NULL, g_err, sizeof g_err, &enc), PS_OK);
    int64_t m = v[0];
    for (int i = 1; i < 37; i++) m = v[i] < m ? v[i] : m;
    CHECK(enc.desc.reference.i == m);
    CHECK(enc.desc.data_size == 37u * w / 8);
    const uint8_t *p = enc.data;
    for (int i = 0; i < 37; i++) {
      uint64_t code = (uint64_t)(v[i] - m), got = 0;
      for (unsigned b = 0; b < w / 8; b++) got |= (uint64_t)p[i * (w / 8) + b] << (8 * b);
      CHECK(got == code);
    }
    ps_encoded_destroy(&enc);
  }
}

static void test_int_edges(void) {
  ps_encoded enc;
  /* Full int64 range. */
  int64_t s64[] = {INT64_MIN, -1, INT64_MAX, 0, 1, INT64_MIN + 1};
  CHECK(check_int_roundtrip(PS_TYPE_INT64, s64, 6, NULL, 0) == 64);
  ps_plain in = {PS_TYPE_INT64, s64, 6, NULL};
  CHECK_ST(ps_encode_for(&in, 0, 0, 0, NULL, g_err, sizeof g_err, &enc), PS_OK);
  CHECK(enc.desc.reference.i == INT64_MIN);
  CHECK(oracle_code(&enc.desc, 2) == UINT64_MAX);
  ps_encoded_destroy(&enc);
  CHECK_ST(ps_encode_for(&in, 63, 0, 0, NULL, g_err, sizeof g_err, &enc),
           PS_ERR_NOT_REPRESENTABLE);
  CHECK(strstr(g_err, "row 2") != NULL); /* INT64_MAX is the first that does not fit */
  /* Full uint64 range. */
  uint64_t u64[] = {UINT64_MAX, 0, 12345};
  CHECK(check_int_roundtrip(PS_TYPE_UINT64, u64, 3, NULL, 0) == 64);
  uint64_t u64b[] = {UINT64_MAX, UINT64_MAX - 1};
  CHECK(check_int_roundtrip(PS_TYPE_UINT64, u64b, 2, NULL, 0) == 1);
  in = (ps_plain){PS_TYPE_UINT64, u64b, 2, NULL};
  CHECK_ST(ps_encode_for(&in, 0, 0, 0, NULL, g_err, sizeof g_err, &enc), PS_OK);
  CHECK(enc.desc.reference.u == UINT64_MAX - 1);
  ps_encoded_destroy(&enc);
  /* Narrow types at their extremes. */
  int8_t s8[] = {-128, 127, 0};
  CHECK(check_int_roundtrip(PS_TYPE_INT8, s8, 3, NULL, 0) == 8);
  int32_t s32[] = {INT32_MIN, INT32_MAX};
  CHECK(check_int_roundtrip(PS_TYPE_INT32, s32, 2, NULL, 0) == 32);
  /* All equal: width 0, M = the value, no bytes. */
  int16_t eq[50];
  for (int i = 0; i < 50; i++) eq[i] = -7;
  CHECK(check_int_roundtrip(PS_TYPE_INT16, eq, 50, NULL, 0) == 0);
  in = (ps_plain){PS_TYPE_INT16, eq, 50, NULL};
  CHECK_ST(ps_encode_for(&in, 0, 0, 0, NULL, g_err, sizeof g_err, &enc), PS_OK);
  CHECK(enc.desc.width == 0 && enc.desc.reference.i == -7 && enc.desc.data_size == 0);
  ps_encoded_destroy(&enc);
  /* Equal except for nulls, which may hold anything. */
  eq[10] = 32000;
  uint8_t v[7] = {0xff, 0xfb, 0xff, 0xff, 0xff, 0xff, 0x03};
  CHECK(check_int_roundtrip(PS_TYPE_INT16, eq, 50, v, 0) == 0);
  /* n = 0, with and without a values pointer. */
  in = (ps_plain){PS_TYPE_UINT32, NULL, 0, NULL};
  CHECK_ST(ps_encode_for(&in, 0, 0, 0, NULL, g_err, sizeof g_err, &enc), PS_OK);
  CHECK(enc.desc.n == 0 && enc.desc.width == 0 && enc.desc.data_size == 0 &&
        enc.desc.reference.u == 0);
  CHECK_ST(ps_decode_for(&enc.desc, NULL, g_err, sizeof g_err), PS_OK);
  ps_encoded_destroy(&enc);
  in.n = 0;
  CHECK_ST(ps_encode_for(&in, 17, 0, 0, NULL, g_err, sizeof g_err, &enc), PS_OK);
  CHECK(enc.desc.width == 17 && enc.desc.data_size == 0);
  ps_encoded_destroy(&enc);
  /* All null: width 0, M = 0. */
  int32_t any[9] = {5, -9, 1 << 30, 4, 4, 4, 4, 4, 4};
  uint8_t none[2] = {0, 0};
  in = (ps_plain){PS_TYPE_INT32, any, 9, none};
  CHECK_ST(ps_encode_for(&in, 0, 0, 0, NULL, g_err, sizeof g_err, &enc), PS_OK);
  CHECK(enc.desc.width == 0 && enc.desc.reference.i == 0 && enc.validity != NULL);
  int32_t dec[9];
  CHECK_ST(ps_decode_for(&enc.desc, dec, g_err, sizeof g_err), PS_OK);
  for (int i = 0; i < 9; i++) CHECK(dec[i] == 0);
  ps_encoded_destroy(&enc);
}

/* ---- floats -------------------------------------------------------------- */

static const double k_pow10[19] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8, 1e9,
                                   1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};

/* Encodes doubles (or floats), checks the decode is exact and the scale is
 * the smallest (no smaller explicit scale encodes). Returns the scale or -1. */
static int check_float(ps_type t, const void *vals, uint64_t n, const uint8_t *validity,
                       int scale, int expect_scale) {
  ps_plain in = {t, vals, n, validity};
  ps_encoded enc;
  ps_status st = ps_encode_for(&in, 0, scale, 0, NULL, g_err, sizeof g_err, &enc);
  CHECK_ST(st, PS_OK);
  if (st != PS_OK) return -1;
  if (enc.desc.float_map != PS_FLOAT_MAP_DECIMAL) {
    /* a lossless mapping (docs/float-encoding.md): every value bit for bit */
    CHECK(scale < 0 && expect_scale < 0);
    void *dec = malloc(n * tsize(t) + 1);
    CHECK_ST(ps_decode_for(&enc.desc, dec, g_err, sizeof g_err), PS_OK);
    for (uint64_t i = 0; i < n; i++)
      if (valid_at(validity, i))
        CHECK(memcmp((char *)dec + i * tsize(t), (const char *)vals + i * tsize(t), tsize(t)) == 0);
    free(dec);
    ps_encoded_destroy(&enc);
    return -2;
  }
  int s = (int)enc.desc.scale;
  if (expect_scale >= 0) {
    if (s != expect_scale) fprintf(stderr, "  scale %d, expected %d\n", s, expect_scale);
    CHECK(s == expect_scale);
  }
  if (scale >= 0) CHECK(s == scale);
  CHECK(enc.desc.type == t);
  CHECK(enc.desc.data_size == expect_size(n, enc.desc.width));
  /* Decode by hand with the format's rule, and with the library. */
  void *dec = malloc(n * tsize(t) + 1);
  CHECK_ST(ps_decode_for(&enc.desc, dec, g_err, sizeof g_err), PS_OK);
  for (uint64_t i = 0; i < n; i++) {
    if (!valid_at(validity, i)) {
      CHECK(t == PS_TYPE_FLOAT32 ? ((float *)dec)[i] == 0.0f : ((double *)dec)[i] == 0.0);
      continue;
    }
    int64_t k = (int64_t)((uint64_t)enc.desc.reference.i + oracle_code(&enc.desc, i));
    double byhand = (double)k / k_pow10[s];
    int ok;
    if (t == PS_TYPE_FLOAT32) {
      float x = ((const float *)vals)[i];
      ok = (float)byhand == x && ((float *)dec)[i] == x;
    } else {
      double x = ((const double *)vals)[i];
      ok = byhand == x && ((double *)dec)[i] == x;
    }
    if (!ok) {
      fprintf(stderr, "  %s row %" PRIu64 " scale %d: k %" PRId64 " decodes to %.17g\n",
              ps_type_name(t), i, s, k, byhand);
      CHECK(ok);
      break;
    }
  }
  free(dec);
  ps_encoded_destroy(&enc);
  /* Minimal: no smaller scale represents every value. */
  if (scale < 0) {
    for (int s2 = 0; s2 < s; s2++) {
      ps_status st2 = ps_encode_for(&in, 0, s2, 0, NULL, g_err, sizeof g_err, &enc);
      CHECK_ST(st2, PS_ERR_NOT_REPRESENTABLE);
      if (st2 == PS_OK) ps_encoded_destroy(&enc);
    }
  }
  return s;
}

static void test_float_named(void) {
  double a[] = {0.1};
  check_float(PS_TYPE_FLOAT64, a, 1, NULL, -1, 1);
  double b[] = {123.456};
  check_float(PS_TYPE_FLOAT64, b, 1, NULL, -1, 3);
  double c[] = {-5.25};
  check_float(PS_TYPE_FLOAT64, c, 1, NULL, -1, 2);
  double d[] = {1e-18};
  check_float(PS_TYPE_FLOAT64, d, 1, NULL, -1, 18);
  double e[] = {1.0, -2.0, 1e15, 0.0};
  check_float(PS_TYPE_FLOAT64, e, 4, NULL, -1, 0);
  double f[] = {0.1, 123.456, -5.25, 7.0, 0.001};
  check_float(PS_TYPE_FLOAT64, f, 5, NULL, -1, 3);
  double g[] = {0.3, 0.7, 0.2, 99.9};
  check_float(PS_TYPE_FLOAT64, g, 4, NULL, -1, 1);
  /* Explicit scales above the minimum. */
  for (int s = 3; s <= 12; s++) check_float(PS_TYPE_FLOAT64, f, 5, NULL, s, s);
  /* -0.0 at a demanded scale is accepted as 0 and decodes to +0.0 (equal as
   * IEEE values); a chosen scale keeps it bit for bit through a mapping. */
  double z[] = {-0.0, 1.5};
  check_float(PS_TYPE_FLOAT64, z, 2, NULL, 1, 1);
  CHECK(check_float(PS_TYPE_FLOAT64, z, 2, NULL, -1, -1) == -2);
  /* Values where round(x * 10^s) is off by one (the product itself rounds)
   * and the neighbouring k is the one that decodes exactly. */
  double nb1[] = {4.2596606304875984};
  check_float(PS_TYPE_FLOAT64, nb1, 1, NULL, 15, 15);
  double nb2[] = {34691308.580943413};
  check_float(PS_TYPE_FLOAT64, nb2, 1, NULL, 8, 8);
  double nb3[] = {4400.1953437507364};
  check_float(PS_TYPE_FLOAT64, nb3, 1, NULL, 12, 12);
  /* Large magnitudes at scale 0 and their limit. */
  double big[] = {9.2e18, -9.2e18};
  check_float(PS_TYPE_FLOAT64, big, 2, NULL, -1, 0);
  /* Values that no decimal scale holds take a lossless mapping: 1e19 (past
   * int64 at scale 0), 1/3 * 10^-6 (10^-18 steps are far coarser than its
   * ulp), 1/3 with 1e10 (each has a scale, none suits both), 1e-19. */
  double huge[] = {1e19};
  CHECK(check_float(PS_TYPE_FLOAT64, huge, 1, NULL, -1, -1) == -2);
  ps_plain in = {PS_TYPE_FLOAT64, huge, 1, NULL};
  ps_encoded enc;
  /* 1/3 round-trips at a high scale: a double holds ~17 significant digits and
   * k up to 2^63 holds 18, so some k/10^s decodes to exactly that double. */
  double third[] = {1.0 / 3};
  int s3 = check_float(PS_TYPE_FLOAT64, third, 1, NULL, -1, -1);
  CHECK(s3 >= 16);
  double tiny3[] = {0.5, 1.0 / 3e6};
  CHECK(check_float(PS_TYPE_FLOAT64, tiny3, 2, NULL, -1, -1) == -2);
  /* ... a decimal when the odd value is null. */
  uint8_t v1 = 0x1;
  in = (ps_plain){PS_TYPE_FLOAT64, tiny3, 2, &v1};
  CHECK_ST(ps_encode_for(&in, 0, -1, 0, NULL, g_err, sizeof g_err, &enc), PS_OK);
  CHECK(enc.desc.scale == 1 && enc.desc.float_map == PS_FLOAT_MAP_DECIMAL);
  ps_encoded_destroy(&enc);
  double mixed[] = {1.0 / 3, 1e10};
  CHECK(check_float(PS_TYPE_FLOAT64, mixed, 2, NULL, -1, -1) == -2);
  double tiny[] = {1e-19};
  CHECK(check_float(PS_TYPE_FLOAT64, tiny, 1, NULL, -1, -1) == -2);
  /* A demanded scale still names the row that does not fit it. */
  in = (ps_plain){PS_TYPE_FLOAT64, tiny3, 2, NULL};
  CHECK_ST(ps_encode_for(&in, 0, 1, 0, NULL, g_err, sizeof g_err, &enc), PS_ERR_NOT_REPRESENTABLE);
  CHECK(strstr(g_err, "row 1") != NULL);
  CHECK(enc.data == NULL && enc.desc.n == 0);
  /* A requested scale that cannot hold a value. */
  in = (ps_plain){PS_TYPE_FLOAT64, b, 1, NULL};
  CHECK_ST(ps_encode_for(&in, 0, 2, 0, NULL, g_err, sizeof g_err, &enc),
           PS_ERR_NOT_REPRESENTABLE);
  CHECK(strstr(g_err, "row 0") != NULL);
  /* Width too small for the scaled spread. */
  double w[] = {0.0, 2.55, 2.56};
  in = (ps_plain){PS_TYPE_FLOAT64, w, 3, NULL};
  CHECK_ST(ps_encode_for(&in, 8, -1, 0, NULL, g_err, sizeof g_err, &enc),
           PS_ERR_NOT_REPRESENTABLE);
  CHECK(strstr(g_err, "row 2") != NULL);
  CHECK_ST(ps_encode_for(&in, 9, -1, 0, NULL, g_err, sizeof g_err, &enc), PS_OK);
  CHECK(enc.desc.width == 9 && enc.desc.scale == 2 && enc.desc.reference.i == 0);
  ps_encoded_destroy(&enc);
  /* float32 values. */
  float f32[] = {0.1f, 3.14159f, -2.5f, 100.0f, 0.001f};
  check_float(PS_TYPE_FLOAT32, f32, 5, NULL, -1, 5);
  float f32b[] = {16777216.0f, -1.0f};
  check_float(PS_TYPE_FLOAT32, f32b, 2, NULL, -1, 0);
  float f32c[] = {1e-10f};
  check_float(PS_TYPE_FLOAT32, f32c, 1, NULL, -1, -1);
}

static void test_float_nonfinite(void) {
  double v[] = {1.5, NAN, 2.0, INFINITY, -INFINITY, 0.25};
  ps_plain in = {PS_TYPE_FLOAT64, v, 6, NULL};
  ps_encoded enc;
  CHECK_ST(ps_encode_for(&in, 0, -1, 0, NULL, g_err, sizeof g_err, &enc), PS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(g_err, "row 1") != NULL);
  CHECK(enc.data == NULL && enc.validity == NULL);
  /* NaN becomes a null; the infinities are values of a lossless mapping
   * (a demanded scale refuses them, as it always did) */
  CHECK_ST(ps_encode_for(&in, 0, -1, 1, NULL, g_err, sizeof g_err, &enc), PS_OK);
  CHECK(enc.validity != NULL && enc.desc.validity == enc.validity && enc.desc.validity_size == 1);
  CHECK(enc.validity && enc.validity[0] == 0x3d); /* rows 0, 2, 3, 4, 5 valid */
  CHECK(enc.desc.float_map != PS_FLOAT_MAP_DECIMAL);
  double dec[6];
  CHECK_ST(ps_decode_for(&enc.desc, dec, g_err, sizeof g_err), PS_OK);
  CHECK(dec[0] == 1.5 && dec[1] == 0 && dec[2] == 2.0 && dec[3] == INFINITY && dec[4] == -INFINITY && dec[5] == 0.25);
  ps_encoded_destroy(&enc);
  CHECK_ST(ps_encode_for(&in, 0, 2, 0, NULL, g_err, sizeof g_err, &enc), PS_ERR_INVALID_ARGUMENT);
  CHECK_ST(ps_encode_for(&in, 0, 2, 1, NULL, g_err, sizeof g_err, &enc), PS_OK);
  CHECK(enc.validity && enc.validity[0] == 0x25 && enc.desc.scale == 2); /* rows 0, 2, 5 valid */
  ps_encoded_destroy(&enc);
  /* With an input bitmap: it is copied, not written. */
  uint8_t valid = 0x3b; /* rows 0,1,3,4,5 */
  in.validity = &valid;
  CHECK_ST(ps_encode_for(&in, 0, -1, 1, NULL, g_err, sizeof g_err, &enc), PS_OK);
  CHECK(valid == 0x3b && enc.validity && enc.validity[0] == 0x39);
  ps_encoded_destroy(&enc);
  /* NaN in a null slot is ignored even without nan_as_null. */
  double w[] = {NAN, 1.0};
  uint8_t v2 = 0x2;
  in = (ps_plain){PS_TYPE_FLOAT64, w, 2, &v2};
  CHECK_ST(ps_encode_for(&in, 0, -1, 0, NULL, g_err, sizeof g_err, &enc), PS_OK);
  ps_encoded_destroy(&enc);
  /* float32 NaN too. */
  float f[] = {1.0f, NAN};
  in = (ps_plain){PS_TYPE_FLOAT32, f, 2, NULL};
  CHECK_ST(ps_encode_for(&in, 0, 0, 0, NULL, g_err, sizeof g_err, &enc), PS_ERR_INVALID_ARGUMENT);
  CHECK_ST(ps_encode_for(&in, 0, 0, 1, NULL, g_err, sizeof g_err, &enc), PS_OK);
  CHECK(enc.validity && enc.validity[0] == 0x1 && enc.desc.width == 0);
  ps_encoded_destroy(&enc);
}

static void test_float_random(void) {
  for (int rep = 0; rep < 300; rep++) {
    uint64_t n = 1 + rnd_below(200);
    int s = (int)rnd_below(19);
    int digits = 1 + (int)rnd_below(15); /* k below 10^digits: exact in a double */
    uint64_t kmax = 1;
    for (int d = 0; d < digits; d++) kmax *= 10;
    double *v = malloc(n * sizeof *v);
    for (uint64_t i = 0; i < n; i++) {
      int64_t k = (int64_t)rnd_below(kmax) * (rnd() & 1 ? 1 : -1);
      v[i] = (double)k / k_pow10[s];
    }
    uint8_t *validity = random_validity(n, (int)rnd_below(2) * 3);
    int got = check_float(PS_TYPE_FLOAT64, v, n, validity, -1, -1);
    CHECK(got >= 0 && got <= s);
    check_float(PS_TYPE_FLOAT64, v, n, validity, s, s);
    /* The same values as float32. */
    float *f = malloc(n * sizeof *f);
    for (uint64_t i = 0; i < n; i++) f[i] = (float)v[i];
    ps_plain in = {PS_TYPE_FLOAT32, f, n, validity};
    ps_encoded enc;
    ps_status st = ps_encode_for(&in, 0, -1, 0, NULL, g_err, sizeof g_err, &enc);
    if (st == PS_OK) {
      ps_encoded_destroy(&enc);
      check_float(PS_TYPE_FLOAT32, f, n, validity, -1, -1);
    } else {
      CHECK_ST(st, PS_ERR_NOT_REPRESENTABLE);
    }
    free(f);
    free(validity);
    free(v);
  }
}

/* ---- dictionaries -------------------------------------------------------- */

static void check_dict(const char *const *strs, const int *is_null, uint64_t n, int use64) {
  int32_t *o32 = malloc((n + 1) * sizeof *o32);
  int64_t *o64 = malloc((n + 1) * sizeof *o64);
  size_t total = 0;
  for (uint64_t i = 0; i < n; i++) total += strlen(strs[i]);
  uint8_t *bytes = malloc(total + 1);
  uint8_t *validity = NULL;
  size_t pos = 0;
  o32[0] = 0;
  o64[0] = 0;
  if (is_null) validity = calloc(n / 8 + 1, 1);
  for (uint64_t i = 0; i < n; i++) {
    size_t len = strlen(strs[i]);
    memcpy(bytes + pos, strs[i], len);
    pos += len;
    o32[i + 1] = (int32_t)pos;
    o64[i + 1] = (int64_t)pos;
    if (is_null && !is_null[i]) validity[i / 8] |= (uint8_t)(1u << (i % 8));
  }
  ps_strings in = {n, use64 ? NULL : o32, use64 ? o64 : NULL, bytes, validity};
  ps_encoded_dict enc;
  CHECK_ST(ps_encode_dict(&in, NULL, g_err, sizeof g_err, &enc), PS_OK);
  const ps_dict_desc *d = &enc.dict;
  CHECK(d->struct_size == sizeof(ps_dict_desc));
  CHECK(d->sorted == 1 && d->offsets32 == enc.offsets && d->offsets64 == NULL);
  CHECK(d->bytes == enc.bytes && d->offsets32[0] == 0);
  CHECK((uint64_t)d->offsets32[d->count] == d->bytes_size);
  /* Strictly ascending (memcmp, then length). */
  for (uint64_t j = 1; j < d->count; j++) {
    size_t la = (size_t)(d->offsets32[j] - d->offsets32[j - 1]);
    size_t lb = (size_t)(d->offsets32[j + 1] - d->offsets32[j]);
    size_t m = la < lb ? la : lb;
    int c = m ? memcmp(d->bytes + d->offsets32[j - 1], d->bytes + d->offsets32[j], m) : 0;
    CHECK(c < 0 || (c == 0 && la < lb));
  }
  /* Every distinct non-null string is in it, and the codes point at them. */
  uint64_t distinct = 0;
  for (uint64_t i = 0; i < n; i++) {
    if (is_null && is_null[i]) continue;
    int seen = 0;
    for (uint64_t j = 0; j < i && !seen; j++)
      seen = !(is_null && is_null[j]) && strcmp(strs[i], strs[j]) == 0;
    distinct += !seen;
  }
  CHECK(d->count == distinct);
  const ps_for_desc *c = &enc.codes.desc;
  CHECK(c->type == PS_TYPE_UINT32 && c->reference.u == 0 && c->n == n && c->scale == 0);
  CHECK(c->width == (distinct > 1 ? bitlen(distinct - 1) : 0));
  CHECK(c->data_size == expect_size(n, c->width));
  uint32_t *codes = malloc(n * 4 + 4);
  CHECK_ST(ps_decode_for(c, codes, g_err, sizeof g_err), PS_OK);
  for (uint64_t i = 0; i < n; i++) {
    if (is_null && is_null[i]) {
      CHECK(codes[i] == 0 && !valid_at(c->validity, i));
      continue;
    }
    CHECK(valid_at(c->validity, i));
    CHECK(codes[i] < d->count);
    if (codes[i] >= d->count) break;
    size_t len = (size_t)(d->offsets32[codes[i] + 1] - d->offsets32[codes[i]]);
    CHECK(len == strlen(strs[i]) && memcmp(d->bytes + d->offsets32[codes[i]], strs[i], len) == 0);
  }
  free(codes);
  ps_encoded_dict_destroy(&enc);
  CHECK(enc.offsets == NULL && enc.codes.data == NULL);
  free(validity);
  free(bytes);
  free(o64);
  free(o32);
}

static void test_dict_named(void) {
  const char *s1[] = {"banana", "apple", "", "banana", "app", "apple", "", "b", "ab", "a"};
  check_dict(s1, NULL, 10, 0);
  check_dict(s1, NULL, 10, 1);
  int nulls[] = {0, 1, 0, 0, 1, 0, 0, 1, 0, 0};
  check_dict(s1, nulls, 10, 0);
  /* Prefix ordering and exact order of a small set. */
  const char *s2[] = {"ab", "a", "abc", "", "b"};
  int32_t off[] = {0, 2, 3, 6, 6, 7};
  ps_strings in = {5, off, NULL, (const uint8_t *)"abaabcb", NULL};
  ps_encoded_dict enc;
  CHECK_ST(ps_encode_dict(&in, NULL, g_err, sizeof g_err, &enc), PS_OK);
  CHECK(enc.dict.count == 5 && enc.dict.bytes_size == 7);
  static const int32_t want_off[] = {0, 0, 1, 3, 6, 7};
  CHECK(memcmp(enc.offsets, want_off, sizeof want_off) == 0);
  CHECK(memcmp(enc.bytes, "aababcb", 7) == 0);
  uint32_t codes[5];
  CHECK_ST(ps_decode_for(&enc.codes.desc, codes, g_err, sizeof g_err), PS_OK);
  CHECK(codes[0] == 2 && codes[1] == 1 && codes[2] == 3 && codes[3] == 0 && codes[4] == 4);
  CHECK(enc.codes.desc.width == 3);
  ps_encoded_dict_destroy(&enc);
  check_dict(s2, NULL, 5, 1);
  /* Multibyte UTF-8 sorts by bytes: "z" (0x7a) before "é" (0xc3 0xa9) before "日本". */
  const char *s3[] = {"\xe6\x97\xa5\xe6\x9c\xac", "\xc3\xa9t\xc3\xa9", "z", "\xc3\xa9",
                      "\xe6\x97\xa5", "z"};
  check_dict(s3, NULL, 6, 0);
  /* One distinct string: width 0. */
  const char *s4[] = {"same", "same", "same"};
  check_dict(s4, NULL, 3, 0);
  const char *s5[] = {"", ""};
  check_dict(s5, NULL, 2, 1);
  /* All null: empty dictionary. */
  int all[] = {1, 1, 1};
  check_dict(s1, all, 3, 0);
  /* Empty input. */
  in = (ps_strings){0, NULL, NULL, NULL, NULL};
  CHECK_ST(ps_encode_dict(&in, NULL, g_err, sizeof g_err, &enc), PS_OK);
  CHECK(enc.dict.count == 0 && enc.codes.desc.n == 0 && enc.dict.offsets32[0] == 0);
  ps_encoded_dict_destroy(&enc);
  /* Offsets that do not start at 0 (a slice). */
  int32_t off2[] = {3, 4, 6};
  in = (ps_strings){2, off2, NULL, (const uint8_t *)"xxxbcd", NULL};
  CHECK_ST(ps_encode_dict(&in, NULL, g_err, sizeof g_err, &enc), PS_OK);
  CHECK(enc.dict.count == 2 && memcmp(enc.bytes, "bcd", 3) == 0);
  ps_encoded_dict_destroy(&enc);
}

static void test_dict_random(void) {
  for (int rep = 0; rep < 40; rep++) {
    uint64_t n = rnd_below(300);
    unsigned alphabet = 1 + (unsigned)rnd_below(4);
    char **strs = malloc((n + 1) * sizeof *strs);
    int *nulls = malloc((n + 1) * sizeof *nulls);
    for (uint64_t i = 0; i < n; i++) {
      size_t len = (size_t)rnd_below(6);
      strs[i] = malloc(len + 1);
      for (size_t k = 0; k < len; k++) /* a few letters, and a UTF-8 lead byte */
        strs[i][k] = (char)(rnd_below(alphabet + 1) ? 'a' + rnd_below(alphabet) : 0xc3);
      strs[i][len] = 0;
      nulls[i] = rnd_below(8) == 0;
    }
    check_dict((const char *const *)strs, rep & 1 ? nulls : NULL, n, (int)(rnd() & 1));
    for (uint64_t i = 0; i < n; i++) free(strs[i]);
    free(nulls);
    free(strs);
  }
}

static void test_dict_invalid(void) {
  ps_encoded_dict enc;
  int32_t dec[] = {0, 3, 2};
  ps_strings in = {2, dec, NULL, (const uint8_t *)"abc", NULL};
  CHECK_ST(ps_encode_dict(&in, NULL, g_err, sizeof g_err, &enc), PS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(g_err, "offsets[2]") != NULL);
  CHECK(enc.offsets == NULL && enc.dict.count == 0);
  int32_t neg[] = {-1, 2};
  in = (ps_strings){1, neg, NULL, (const uint8_t *)"ab", NULL};
  CHECK_ST(ps_encode_dict(&in, NULL, g_err, sizeof g_err, &enc), PS_ERR_INVALID_ARGUMENT);
  int64_t o64[] = {0, 1};
  int32_t o32[] = {0, 1};
  in = (ps_strings){1, o32, o64, (const uint8_t *)"a", NULL};
  CHECK_ST(ps_encode_dict(&in, NULL, g_err, sizeof g_err, &enc), PS_ERR_INVALID_ARGUMENT);
  in = (ps_strings){1, NULL, NULL, (const uint8_t *)"a", NULL};
  CHECK_ST(ps_encode_dict(&in, NULL, g_err, sizeof g_err, &enc), PS_ERR_INVALID_ARGUMENT);
  in = (ps_strings){1, o32, NULL, NULL, NULL};
  CHECK_ST(ps_encode_dict(&in, NULL, g_err, sizeof g_err, &enc), PS_ERR_INVALID_ARGUMENT);
  CHECK_ST(ps_encode_dict(NULL, NULL, g_err, sizeof g_err, &enc), PS_ERR_INVALID_ARGUMENT);
  in = (ps_strings){1, o32, NULL, (const uint8_t *)"a", NULL};
  CHECK_ST(ps_encode_dict(&in, NULL, g_err, sizeof g_err, NULL), PS_ERR_INVALID_ARGUMENT);
  CHECK_ST(ps_encode_dict(&in, NULL, NULL, 0, &enc), PS_OK); /* err_buf may be NULL */
  ps_encoded_dict_destroy(&enc);
  ps_encoded_dict_destroy(NULL);
}

/* ---- decoding ------------------------------------------------------------ */

static void test_decode_corrupt(void) {
  /* int8 with M = 100: code 27 is 127 (fine), code 200 is 300 (corrupt). */
  uint8_t data[] = {0, 27, 200, 1};
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = PS_TYPE_INT8;
  d.n = 4;
  d.width = 8;
  d.reference.i = 100;
  d.data = data;
  d.data_size = 4;
  int8_t out[4] = {11, 11, 11, 11};
  CHECK_ST(ps_decode_for(&d, out, g_err, sizeof g_err), PS_ERR_CORRUPT_DATA);
  CHECK(strstr(g_err, "row 2") != NULL);
  CHECK(out[0] == 11 && out[1] == 11 && out[3] == 11); /* untouched */
  /* The same row as null is not read. */
  uint8_t valid = 0xb;
  d.validity = &valid;
  d.validity_size = 1;
  CHECK_ST(ps_decode_for(&d, out, g_err, sizeof g_err), PS_OK);
  CHECK(out[0] == 100 && out[1] == 127 && out[2] == 0 && out[3] == 101);
  /* int8 at its extremes: M = -128 with code 255 is 127, fine. */
  uint8_t data2[] = {0, 255};
  d.validity = NULL;
  d.validity_size = 0;
  d.n = 2;
  d.data = data2;
  d.data_size = 2;
  d.reference.i = -128;
  CHECK_ST(ps_decode_for(&d, out, g_err, sizeof g_err), PS_OK);
  CHECK(out[0] == -128 && out[1] == 127);
  /* uint16: M = 65000 with code 255 is 65255, fine; M = 65300 makes it corrupt. */
  d.type = PS_TYPE_UINT16;
  d.reference.u = 65000;
  uint16_t o16[2];
  CHECK_ST(ps_decode_for(&d, o16, g_err, sizeof g_err), PS_OK);
  CHECK(o16[0] == 65000 && o16[1] == 65255);
  d.reference.u = 65300;
  CHECK_ST(ps_decode_for(&d, o16, g_err, sizeof g_err), PS_ERR_CORRUPT_DATA);
  CHECK(strstr(g_err, "row 1") != NULL);
  /* int64 wrap-around: M = INT64_MAX, code 1. */
  uint8_t one[] = {0x2};
  d.type = PS_TYPE_INT64;
  d.reference.i = INT64_MAX;
  d.width = 1;
  d.data = one;
  d.data_size = 1;
  int64_t o64[2];
  CHECK_ST(ps_decode_for(&d, o64, g_err, sizeof g_err), PS_ERR_CORRUPT_DATA);
  CHECK(strstr(g_err, "row 1") != NULL);
  /* uint64 wrap-around: M = UINT64_MAX, code 1. */
  d.type = PS_TYPE_UINT64;
  d.reference.u = UINT64_MAX;
  CHECK_ST(ps_decode_for(&d, o64, g_err, sizeof g_err), PS_ERR_CORRUPT_DATA);
  d.reference.u = UINT64_MAX - 1;
  CHECK_ST(ps_decode_for(&d, o64, g_err, sizeof g_err), PS_OK);
  CHECK((uint64_t)o64[0] == UINT64_MAX - 1 && (uint64_t)o64[1] == UINT64_MAX);
  /* float64 whose scaled integer leaves int64. */
  d.type = PS_TYPE_FLOAT64;
  d.reference.i = INT64_MAX;
  d.scale = 2;
  double of[2];
  CHECK_ST(ps_decode_for(&d, of, g_err, sizeof g_err), PS_ERR_CORRUPT_DATA);
  d.reference.i = -150;
  CHECK_ST(ps_decode_for(&d, of, g_err, sizeof g_err), PS_OK);
  CHECK(of[0] == -1.5 && of[1] == -1.49);
}

static void test_decode_invalid(void) {
  uint8_t data[8] = {0};
  uint8_t valid[2] = {0xff, 0xff};
  ps_for_desc good;
  ps_for_desc_init(&good);
  good.type = PS_TYPE_INT32;
  good.n = 10;
  good.width = 5;
  good.data = data;
  good.data_size = 7;
  good.validity = valid;
  good.validity_size = 2;
  int32_t out[10];
  CHECK_ST(ps_decode_for(&good, out, g_err, sizeof g_err), PS_OK);
  CHECK_ST(ps_decode_for(&good, out, NULL, 0), PS_OK);

  ps_for_desc d;
#define BAD(field_change, needle)                                               \
  do {                                                                           \
    d = good;                                                                    \
    field_change;                                                                \
    CHECK_ST(ps_decode_for(&d, out, g_err, sizeof g_err), PS_ERR_INVALID_ARGUMENT); \
    CHECK(strstr(g_err, needle) != NULL);                                        \
  } while (0)
  BAD(d.struct_size = 0, "struct_size");
  BAD(d.struct_size = 8, "struct_size");
  BAD(d.type = PS_TYPE_STRING, "type");
  BAD(d.type = (ps_type)0, "type");
  BAD(d.type = (ps_type)99, "type");
  BAD(d.width = 65, "width");
  BAD(d.scale = 1, "scale");
  BAD((d.type = PS_TYPE_FLOAT64, d.scale = 19), "scale");
  BAD(d.data_size = 6, "data_size");
  BAD(d.data_size = 8, "data_size");
  BAD(d.data = NULL, "data");
  BAD(d.validity_size = 1, "validity_size");
  BAD(d.validity_size = 3, "validity_size");
  BAD((d.validity = NULL, d.validity_size = 2), "validity");
  BAD(d.reference.i = (int64_t)INT32_MAX + 1, "reference");
  BAD(d.reference.i = (int64_t)INT32_MIN - 1, "reference");
  BAD((d.type = PS_TYPE_INT8, d.reference.i = -200), "reference");
  BAD((d.type = PS_TYPE_UINT16, d.reference.u = 70000), "reference");
  BAD((d.n = UINT64_MAX, d.width = 64), "n");
#undef BAD
  CHECK_ST(ps_decode_for(NULL, out, g_err, sizeof g_err), PS_ERR_INVALID_ARGUMENT);
  CHECK_ST(ps_decode_for(&good, NULL, g_err, sizeof g_err), PS_ERR_INVALID_ARGUMENT);
  /* Width 0 needs no data at all. */
  d = good;
  d.width = 0;
  d.data = NULL;
  d.data_size = 0;
  d.reference.i = -3;
  CHECK_ST(ps_decode_for(&d, out, g_err, sizeof g_err), PS_OK);
  CHECK(out[0] == -3 && out[9] == -3);
}

static void test_encode_invalid(void) {
  int32_t v[] = {1, 2, 3};
  ps_plain in = {PS_TYPE_INT32, v, 3, NULL};
  ps_encoded enc;
  memset(&enc, 0x5a, sizeof enc);
  CHECK_ST(ps_encode_for(&in, 65, 0, 0, NULL, g_err, sizeof g_err, &enc), PS_ERR_INVALID_ARGUMENT);
  CHECK(enc.data == NULL && enc.validity == NULL && enc.desc.n == 0); /* zeroed */
  CHECK_ST(ps_encode_for(&in, 0, 2, 0, NULL, g_err, sizeof g_err, &enc), PS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(g_err, "scale") != NULL);
  CHECK_ST(ps_encode_for(&in, 0, -1, 0, NULL, g_err, sizeof g_err, &enc), PS_OK); /* = 0 */
  ps_encoded_destroy(&enc);
  double f[] = {1.0};
  ps_plain fin = {PS_TYPE_FLOAT64, f, 1, NULL};
  CHECK_ST(ps_encode_for(&fin, 0, 19, 0, NULL, g_err, sizeof g_err, &enc), PS_ERR_INVALID_ARGUMENT);
  CHECK_ST(ps_encode_for(&fin, 0, 18, 0, NULL, g_err, sizeof g_err, &enc), PS_OK);
  CHECK(enc.desc.scale == 18 && enc.desc.reference.i == 1000000000000000000);
  ps_encoded_destroy(&enc);
  in.type = PS_TYPE_STRING;
  CHECK_ST(ps_encode_for(&in, 0, 0, 0, NULL, g_err, sizeof g_err, &enc), PS_ERR_INVALID_ARGUMENT);
  in.type = (ps_type)42;
  CHECK_ST(ps_encode_for(&in, 0, 0, 0, NULL, g_err, sizeof g_err, &enc), PS_ERR_INVALID_ARGUMENT);
  in = (ps_plain){PS_TYPE_INT32, NULL, 3, NULL};
  CHECK_ST(ps_encode_for(&in, 0, 0, 0, NULL, g_err, sizeof g_err, &enc), PS_ERR_INVALID_ARGUMENT);
  CHECK_ST(ps_encode_for(NULL, 0, 0, 0, NULL, g_err, sizeof g_err, &enc), PS_ERR_INVALID_ARGUMENT);
  in = (ps_plain){PS_TYPE_INT32, v, 3, NULL};
  CHECK_ST(ps_encode_for(&in, 0, 0, 0, NULL, g_err, sizeof g_err, NULL), PS_ERR_INVALID_ARGUMENT);
  CHECK_ST(ps_encode_for(&in, 0, 0, 0, NULL, NULL, 0, &enc), PS_OK);
  ps_encoded_destroy(&enc);
  ps_encoded_destroy(NULL);
}

/* ---- allocators ---------------------------------------------------------- */

typedef struct counting {
  long live;
  long calls;
  long fail_at; /* the fail_at-th call fails (1-based); 0 = never */
} counting;

static void *count_alloc(void *opaque, size_t size) {
  counting *c = opaque;
  c->calls++;
  if (c->fail_at && c->calls == c->fail_at) return NULL;
  c->live++;
  return malloc(size);
}
static void count_free(void *opaque, void *p) {
  counting *c = opaque;
  c->live--;
  free(p);
}

static void test_allocator(void) {
  double v[] = {1.5, NAN, 2.25};
  uint8_t valid = 0x7;
  ps_plain in = {PS_TYPE_FLOAT64, v, 3, &valid};
  int32_t off[] = {0, 1, 2, 2};
  ps_strings sin = {3, off, NULL, (const uint8_t *)"ba", &valid};
  for (long fail = 0; fail <= 6; fail++) {
    counting c = {0, 0, fail};
    ps_allocator a = {count_alloc, count_free, &c};
    ps_encoded enc;
    ps_status st = ps_encode_for(&in, 0, -1, 1, &a, g_err, sizeof g_err, &enc);
    CHECK(st == PS_OK || (fail && st == PS_ERR_OUT_OF_MEMORY));
    if (st == PS_OK) {
      CHECK(c.live > 0);
      ps_encoded_destroy(&enc);
    } else {
      CHECK(enc.data == NULL && enc.validity == NULL);
    }
    CHECK(c.live == 0);
    c = (counting){0, 0, fail};
    ps_encoded_dict de;
    st = ps_encode_dict(&sin, &a, g_err, sizeof g_err, &de);
    CHECK(st == PS_OK || (fail && st == PS_ERR_OUT_OF_MEMORY));
    if (st == PS_OK) ps_encoded_dict_destroy(&de);
    CHECK(c.live == 0);
  }
  ps_allocator half = {count_alloc, NULL, NULL};
  ps_encoded enc;
  CHECK_ST(ps_encode_for(&in, 0, -1, 1, &half, g_err, sizeof g_err, &enc), PS_ERR_INVALID_ARGUMENT);
}

int main(int argc, char **argv) {
  const char *env = getenv("PACKSCAN_SEED");
  g_seed = env && *env ? strtoull(env, NULL, 0) : (uint64_t)time(NULL);
  g_rng = g_seed;
  /* first, so that a crash still leaves the seed */
  printf("test_encode: seed %" PRIu64 " (rerun: PACKSCAN_SEED=%" PRIu64 " %s)\n", g_seed, g_seed, argc > 0 ? argv[0] : "test_encode");
  fflush(stdout);
  test_int_edges();
  test_byte_aligned();
  test_all_widths();
  test_int_random();
  test_float_named();
  test_float_nonfinite();
  test_float_random();
  test_dict_named();
  test_dict_random();
  test_dict_invalid();
  test_decode_corrupt();
  test_decode_invalid();
  test_encode_invalid();
  test_allocator();
  if (g_failures) {
    fprintf(stderr, "test_encode: %d failure(s); PACKSCAN_SEED=%" PRIu64 " reproduces\n",
            g_failures, g_seed);
    return 1;
  }
  printf("test_encode: ok (seed %" PRIu64 ")\n", g_seed);
  return 0;
}
