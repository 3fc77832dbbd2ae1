/*
 * Lossless float columns (docs/float-encoding.md): the value mappings
 * PS_FLOAT_MAP_ALP and PS_FLOAT_MAP_BITS over ordinary unsigned codes.
 *
 * Both mappings are monotone (a larger code never decodes to a smaller
 * value, in the total order of the IEEE bit patterns with -0.0 just below
 * +0.0), so everything the kernels do with codes (ranges, sets, zone maps,
 * MIN/MAX, GROUP BY keys) stays exact; only the host decodes (literal
 * thresholds by binary search, result values, plain output).
 */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* The decode below is two correctly rounded multiplications (no addition,
 * so nothing can be contracted into an FMA); a volatile intermediate keeps
 * compilers from reassociating them. */

#define MAX_E 18
#define K_LIMIT ((int64_t)1 << 53)   /* |k| <= 2^53: (double)k is exact */
#define K_LIMIT32 ((int64_t)1 << 24) /* float32 grids: (float)k is exact */
#define MAX_E32 10
#define SAMPLE_ROWS 1024u

/* 10^f (exact) and the doubles nearest 10^-e: ALP's factor and fraction tables. */
static const double pow10_exact[MAX_E + 1] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8, 1e9,
                                              1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};
static const double pow10_neg[MAX_E + 1] = {1e-0,  1e-1,  1e-2,  1e-3,  1e-4,  1e-5,  1e-6,  1e-7,  1e-8, 1e-9,
                                            1e-10, 1e-11, 1e-12, 1e-13, 1e-14, 1e-15, 1e-16, 1e-17, 1e-18};

/* float32 columns decode in float arithmetic (ALP's float tables). */
static const float pow10_exact32[MAX_E32 + 1] = {1e0f, 1e1f, 1e2f, 1e3f, 1e4f, 1e5f, 1e6f, 1e7f, 1e8f, 1e9f, 1e10f};
static const float pow10_neg32[MAX_E32 + 1] = {1e-0f, 1e-1f, 1e-2f, 1e-3f, 1e-4f, 1e-5f,
                                               1e-6f, 1e-7f, 1e-8f, 1e-9f, 1e-10f};

uint64_t ps_fmap_bits(double x) {
  uint64_t b;
  memcpy(&b, &x, sizeof b);
  return b;
}

double ps_fmap_double(uint64_t b) {
  double x;
  memcpy(&x, &b, sizeof x);
  return x;
}

/* The order transform: kernels_shared/ps_layout.h, as the devices decode it. */
uint64_t ps_fmap_ord(double x) { return ps_ford64(ps_fmap_bits(x)); }

uint64_t ps_fmap_ord_inverse(uint64_t o) { return ps_ford64_inverse(o); }

static uint32_t ord32(float x) {
  uint32_t b;
  memcpy(&b, &x, sizeof b);
  return ps_ford32(b);
}

static float ord32_inverse(uint32_t o) {
  const uint32_t b = ps_ford32_inverse(o);
  float x;
  memcpy(&x, &b, sizeof x);
  return x;
}

static uint32_t bit_length(uint64_t v) {
  uint32_t n = 0;
  while (v) n++, v >>= 1;
  return n;
}

static int64_t u64_to_i64(uint64_t u) { return u <= (uint64_t)INT64_MAX ? (int64_t)u : -(int64_t)(~u) - 1; }

double ps_fmap_grid(int64_t k, uint32_t e, uint32_t f, bool f32) {
  if (f32) {
    volatile float y = (float)k * pow10_exact32[f];
    return (double)(float)(y * pow10_neg32[e]);
  }
  volatile double x = (double)k * pow10_exact[f]; /* volatile: two separately rounded products */
  return x * pow10_neg[e];
}

static int64_t k_limit(bool f32) { return f32 ? K_LIMIT32 : K_LIMIT; }

bool ps_fmap_factor_bits(uint32_t e, uint32_t f, bool f32, uint64_t *mul, uint64_t *frac) {
  if (e > (f32 ? MAX_E32 : MAX_E) || f > e) return false;
  if (f32) {
    uint32_t a, b;
    memcpy(&a, &pow10_exact32[f], sizeof a);
    memcpy(&b, &pow10_neg32[e], sizeof b);
    *mul = a, *frac = b;
  } else {
    *mul = ps_fmap_bits(pow10_exact[f]), *frac = ps_fmap_bits(pow10_neg[e]);
  }
  return true;
}

uint64_t ps_fmap_desc_words(const ps_fmap *m) {
  return PS_FDESC_HEAD + (m->map == PS_FLOAT_MAP_ALP ? PS_FDESC_ENTRY * m->n_exc : 0);
}

void ps_fmap_desc_write(const ps_fmap *m, uint32_t *out) {
  memset(out, 0, PS_FDESC_HEAD * sizeof *out);
  out[0] = m->map | (m->f32 ? 1u : 0u) << 8;
  out[6] = (uint32_t)m->ref, out[7] = (uint32_t)(m->ref >> 32);
  if (m->map != PS_FLOAT_MAP_ALP) return;
  uint64_t mul = 0, frac = 0;
  (void)ps_fmap_factor_bits(m->e, m->f, m->f32, &mul, &frac); /* ps_fmap_check bounded e and f */
  out[1] = m->rank_bits | m->e << 8 | m->f << 16;
  out[2] = (uint32_t)mul, out[3] = (uint32_t)(mul >> 32);
  out[4] = (uint32_t)frac, out[5] = (uint32_t)(frac >> 32);
  out[8] = (uint32_t)m->n_exc; /* the caller's aux words bound it far below 2^32 */
  for (uint64_t i = 0; i < m->n_exc; i++) {
    uint32_t *x = out + PS_FDESC_HEAD + PS_FDESC_ENTRY * i;
    x[0] = (uint32_t)m->exc[i].code, x[1] = (uint32_t)(m->exc[i].code >> 32);
    x[2] = (uint32_t)m->exc[i].bits, x[3] = (uint32_t)(m->exc[i].bits >> 32);
  }
}

ps_fmap ps_fmap_of_desc(const ps_for_desc *d) {
  ps_fmap m;
  memset(&m, 0, sizeof m);
  m.map = ps_for_desc_float_map(d);
  m.f32 = d->type == PS_TYPE_FLOAT32;
  if (m.map == PS_FLOAT_MAP_DECIMAL) return m;
  m.e = d->float_e, m.f = d->float_f, m.rank_bits = d->float_rank_bits;
  m.ref = d->reference.u;
  m.exc = d->exceptions;
  m.n_exc = d->exceptions_count;
  return m;
}

/* ALP: the last table entry with code <= c, or NULL. */
static const ps_float_exception *exc_at_or_below(const ps_fmap *m, uint64_t c) {
  uint64_t lo = 0, hi = m->n_exc;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    if (m->exc[mid].code <= c)
      lo = mid + 1;
    else
      hi = mid;
  }
  return lo ? &m->exc[lo - 1] : NULL;
}

double ps_fmap_decode(const ps_fmap *m, uint64_t code) {
  if (m->map == PS_FLOAT_MAP_BITS) {
    if (m->f32) return (double)ord32_inverse((uint32_t)(m->ref + code));
    return ps_fmap_double(ps_fmap_ord_inverse(m->ref + code));
  }
  const uint64_t step = code >> m->rank_bits;
  const uint64_t gap_start = step << m->rank_bits;
  const ps_float_exception *x = exc_at_or_below(m, code);
  if (x && x->code >= gap_start) return ps_fmap_double(x->bits);
  return ps_fmap_grid(u64_to_i64(m->ref + step), m->e, m->f, m->f32);
}

/* ALP: the gap of the table's last entry is the top one (its values may pass
 * the next grid values, so no code lies above it) when that entry is not
 * below the next grid value. */
static bool alp_top_step(const ps_fmap *m, uint64_t *step) {
  if (!m->n_exc) return false;
  const ps_float_exception *x = &m->exc[m->n_exc - 1];
  const uint64_t s = x->code >> m->rank_bits;
  const int64_t k = u64_to_i64(m->ref + s);
  if (k >= k_limit(m->f32)) return *step = s, true;
  if (ps_fmap_ord(ps_fmap_double(x->bits)) < ps_fmap_ord(ps_fmap_grid(k + 1, m->e, m->f, m->f32))) return false;
  return *step = s, true;
}

uint64_t ps_fmap_code_limit(const ps_fmap *m, uint32_t width) {
  const uint64_t wm = ps_width_mask(width);
  if (m->map == PS_FLOAT_MAP_BITS) {
    /* Past +inf lie the NaN patterns. */
    const uint64_t top = m->f32 ? (uint64_t)ord32(INFINITY) : ps_fmap_ord(INFINITY);
    const uint64_t lim = top >= m->ref ? top - m->ref : 0;
    return lim < wm ? lim : wm;
  }
  /* The grid stops at k = 2^53 (so that (double)k is exact), or at the top gap. */
  uint64_t steps = (uint64_t)(k_limit(m->f32) - u64_to_i64(m->ref)); /* kbase >= -limit - 1 (checked) */
  uint64_t top;
  if (alp_top_step(m, &top) && top < steps) steps = top;
  const uint64_t lim = (steps >> (63 - m->rank_bits)) >> 1 ? UINT64_MAX : ((steps + 1) << m->rank_bits) - 1;
  return lim < wm ? lim : wm;
}

double ps_fmap_largest_finite(const ps_fmap *m, uint64_t lo, uint64_t hi) {
  const double a = ps_fmap_decode(m, lo), b = ps_fmap_decode(m, hi);
  double best = 0;
  if (isfinite(a)) best = fabs(a);
  if (isfinite(b) && fabs(b) > best) best = fabs(b);
  if (isfinite(a) && isfinite(b)) return best; /* monotone: every value lies between them */
  if (m->map == PS_FLOAT_MAP_BITS) /* next to an infinity lies the largest finite value */
    return lo < hi ? (m->f32 ? (double)FLT_MAX : DBL_MAX) : best;
  /* ALP: the grid values of the steps in the range (monotone in k: its ends)
   * and the finite exceptions there */
  const uint64_t first = (lo >> m->rank_bits) + ((lo & (((uint64_t)1 << m->rank_bits) - 1)) != 0),
                 last = hi >> m->rank_bits;
  if (first <= last && first <= (UINT64_MAX >> m->rank_bits)) {
    const double g0 = fabs(ps_fmap_grid(u64_to_i64(m->ref + first), m->e, m->f, m->f32)),
                 g1 = fabs(ps_fmap_grid(u64_to_i64(m->ref + last), m->e, m->f, m->f32));
    if (g0 > best) best = g0;
    if (g1 > best) best = g1;
  }
  for (uint64_t i = 0; i < m->n_exc; i++) {
    const double x = ps_fmap_double(m->exc[i].bits);
    if (m->exc[i].code >= lo && m->exc[i].code <= hi && isfinite(x) && fabs(x) > best) best = fabs(x);
  }
  return best;
}

int32_t ps_fmap_sum_unit(const ps_fmap *m, double largest) {
  const int32_t least = m->f32 ? -149 : -1074; /* every value is a multiple of 2^least */
  if (!(largest > 0)) return least;
  int ex;
  (void)frexp(largest, &ex); /* largest < 2^ex */
  return ex - 126 > least ? ex - 126 : least;
}

uint32_t ps_for_desc_float_map(const ps_for_desc *d) {
  return d->struct_size >= offsetof(ps_for_desc, exceptions_count) + sizeof d->exceptions_count ? d->float_map
                                                                                                : PS_FLOAT_MAP_DECIMAL;
}

ps_status ps_fmap_check(const ps_for_desc *d, char *err, size_t size) {
  const uint32_t map = ps_for_desc_float_map(d);
  const char *tn = ps_type_name(d->type) ? ps_type_name(d->type) : "invalid";
  const bool has_table = d->struct_size >= offsetof(ps_for_desc, exceptions_count) + sizeof d->exceptions_count &&
                         (d->exceptions || d->exceptions_count);
  if (map > PS_FLOAT_MAP_BITS)
    return ps_set_error_buf(err, size, PS_ERR_INVALID_ARGUMENT,
                            "desc.float_map is %u; expected %u (decimal), %u (ALP) or %u (bits)", map,
                            PS_FLOAT_MAP_DECIMAL, PS_FLOAT_MAP_ALP, PS_FLOAT_MAP_BITS);
  if (map != PS_FLOAT_MAP_DECIMAL && !ps_type_is_float(d->type))
    return ps_set_error_buf(err, size, PS_ERR_INVALID_ARGUMENT,
                            "desc.float_map is %u on a %s column; only float columns have a value mapping", map, tn);
  if (map != PS_FLOAT_MAP_ALP && has_table)
    return ps_set_error_buf(err, size, PS_ERR_INVALID_ARGUMENT,
                            "desc.exceptions given with float_map %u; only PS_FLOAT_MAP_ALP columns have them", map);
  if (map == PS_FLOAT_MAP_DECIMAL) return PS_OK;
  if (d->scale != 0)
    return ps_set_error_buf(err, size, PS_ERR_INVALID_ARGUMENT,
                            "desc.scale is %u with float_map %u; expected 0 (the mapping has no decimal scale)",
                            d->scale, map);
  if (map == PS_FLOAT_MAP_BITS) {
    /* below -inf and above +inf lie the NaN patterns */
    const bool f32 = d->type == PS_TYPE_FLOAT32;
    const uint64_t lo = f32 ? ord32(-INFINITY) : ps_fmap_ord(-INFINITY),
                   hi = f32 ? ord32(INFINITY) : ps_fmap_ord(INFINITY);
    if (d->reference.u < lo || d->reference.u > hi)
      return ps_set_error_buf(err, size, PS_ERR_INVALID_ARGUMENT,
                              "desc.reference is 0x%016" PRIx64
                              "; an ordered-bits column's first pattern lies in "
                              "0x%016" PRIx64 "..0x%016" PRIx64 " (-inf..+inf)",
                              d->reference.u, lo, hi);
    return PS_OK;
  }
  const bool f32 = d->type == PS_TYPE_FLOAT32;
  if (d->float_e > (f32 ? MAX_E32 : MAX_E) || d->float_f > d->float_e)
    return ps_set_error_buf(err, size, PS_ERR_INVALID_ARGUMENT,
                            "desc.float_e %u, float_f %u: expected 0 <= f <= e <= %d", d->float_e, d->float_f,
                            f32 ? MAX_E32 : MAX_E);
  if (d->float_rank_bits > 63)
    return ps_set_error_buf(err, size, PS_ERR_INVALID_ARGUMENT, "desc.float_rank_bits is %u; expected 0..63",
                            d->float_rank_bits);
  const int64_t kbase = d->reference.i;
  if (kbase < -k_limit(f32) - 1 || kbase > k_limit(f32))
    return ps_set_error_buf(err, size, PS_ERR_INVALID_ARGUMENT,
                            "desc.reference is %" PRId64 "; an ALP column's first grid step lies in -2^%d-1..2^%d",
                            kbase, f32 ? 24 : 53, f32 ? 24 : 53);
  if (d->exceptions_count && !d->exceptions)
    return ps_set_error_buf(err, size, PS_ERR_INVALID_ARGUMENT,
                            "desc.exceptions is NULL but exceptions_count is %" PRIu64, d->exceptions_count);
  /* The table must keep the mapping monotone: codes ascend, only code 0
   * (the gap below the first grid value) may hold rank 0, and every value
   * lies strictly above the value of the code before it and below the next
   * grid value (except in the top gap). */
  const ps_fmap m = ps_fmap_of_desc(d);
  const uint64_t lim = ps_fmap_code_limit(&m, d->width);
  const uint64_t rmask = ((uint64_t)1 << m.rank_bits) - 1;
  uint64_t top = UINT64_MAX;
  (void)alp_top_step(&m, &top);
  for (uint64_t i = 0; i < m.n_exc; i++) {
    const ps_float_exception *x = &m.exc[i];
    const double v = ps_fmap_double(x->bits);
    if (isnan(v) || (m.f32 && (double)(float)v != v))
      return ps_set_error_buf(err, size, PS_ERR_INVALID_ARGUMENT,
                              "desc.exceptions[%" PRIu64 "].bits 0x%016" PRIx64 " is not a %s value", i, x->bits,
                              m.f32 ? "float32" : "non-NaN double");
    if (x->code > lim || (i && x->code <= m.exc[i - 1].code) || ((x->code & rmask) == 0 && x->code != 0))
      return ps_set_error_buf(err, size, PS_ERR_INVALID_ARGUMENT,
                              "desc.exceptions[%" PRIu64 "].code %" PRIu64 ": codes must ascend, stay <= %" PRIu64
                              " and have a nonzero rank (except code 0)",
                              i, x->code, lim);
    const uint64_t o = ps_fmap_ord(v), step = x->code >> m.rank_bits;
    bool ok = x->code == 0 || ps_fmap_ord(ps_fmap_decode(&m, x->code - 1)) < o;
    if (step != top) ok = ok && o < ps_fmap_ord(ps_fmap_grid(u64_to_i64(m.ref + step + 1), m.e, m.f, m.f32));
    if (!ok)
      return ps_set_error_buf(err, size, PS_ERR_INVALID_ARGUMENT,
                              "desc.exceptions[%" PRIu64 "]: value %.17g at code %" PRIu64
                              " is out of order with the values of the codes around it",
                              i, v, x->code);
  }
  return PS_OK;
}

/* ---- building the mapping ---------------------------------------------------- */

static double value_at(const ps_plain *in, uint64_t i) {
  return in->type == PS_TYPE_FLOAT32 ? (double)((const float *)in->values)[i] : ((const double *)in->values)[i];
}

static bool valid_at(const uint8_t *v, uint64_t i) { return !v || ((v[i >> 3] >> (i & 7)) & 1u); }

/* ALP's encode: k with grid(k) == x bit for bit, if k = round(x * 10^e * 10^-f) is one. */
static bool alp_k(double x, uint32_t e, uint32_t f, bool f32, int64_t *k) {
  double s;
  if (f32) {
    volatile float t = (float)x * pow10_exact32[e];
    s = (double)(float)(t * pow10_neg32[f]);
  } else {
    volatile double t = x * pow10_exact[e];
    s = t * pow10_neg[f];
  }
  if (!(fabs(s) <= (double)k_limit(f32))) return false;
  const int64_t c = (int64_t)nearbyint(s);
  if (ps_fmap_bits(ps_fmap_grid(c, e, f, f32)) != ps_fmap_bits(x)) return false;
  *k = c;
  return true;
}

static int cmp_u64(const void *a, const void *b) {
  const uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

/* (e, f) that minimizes an estimate of the encoded size on a sample of the
 * valid rows (ALP's search, over one sample of the whole column). */
static void choose_exponents(const ps_plain *in, const uint8_t *valid, uint64_t nvalid, const ps_allocator *A,
                             uint32_t *be, uint32_t *bf) {
  uint64_t *rows = ps_alloc_with(A, sizeof *rows * SAMPLE_ROWS);
  uint32_t s = 0;
  if (rows) {
    const uint64_t stride = nvalid > SAMPLE_ROWS ? nvalid / SAMPLE_ROWS : 1;
    uint64_t seen = 0;
    for (uint64_t i = 0; i < in->n && s < SAMPLE_ROWS; i++) {
      if (!valid_at(valid, i)) continue;
      if (seen++ % stride == 0) rows[s++] = i;
    }
  }
  double best = HUGE_VAL;
  *be = 0, *bf = 0;
  const bool f32 = in->type == PS_TYPE_FLOAT32;
  for (uint32_t e = 0; e <= (f32 ? MAX_E32 : MAX_E); e++)
    for (uint32_t f = 0; f <= e; f++) {
      int64_t kmin = INT64_MAX, kmax = INT64_MIN;
      uint32_t exc = 0;
      for (uint32_t j = 0; j < s; j++) {
        int64_t k;
        if (!alp_k(value_at(in, rows[j]), e, f, f32, &k)) {
          exc++;
          continue;
        }
        if (k < kmin) kmin = k;
        if (k > kmax) kmax = k;
      }
      const double bits = exc == s ? 64.0 : (double)bit_length((uint64_t)(kmax - kmin));
      const double cost = (double)s * bits + (double)exc * 160.0;
      if (cost < best) best = cost, *be = e, *bf = f;
    }
  ps_free_with(A, rows);
}

/* Largest k in [lo, hi] with ord(grid(k)) <= o; lo - 1 when none. */
static int64_t grid_floor(uint64_t o, int64_t lo, int64_t hi, uint32_t e, uint32_t f, bool f32) {
  int64_t a = lo, b = hi + 1; /* answer in [a - 1, b - 1] */
  while (a < b) {
    const int64_t mid = a + (b - a) / 2;
    if (ps_fmap_ord(ps_fmap_grid(mid, e, f, f32)) <= o)
      a = mid + 1;
    else
      b = mid;
  }
  return a - 1;
}

typedef struct alp_build {
  uint32_t e, f, rank_bits;
  bool f32;
  int64_t kbase;
  uint64_t *ords;  /* distinct exception values (ordered bits), ascending */
  uint64_t *codes; /* their codes */
  uint64_t n_exc;
  uint64_t max_code;
} alp_build;

/* Builds the ALP mapping at (e, f); false when it cannot hold the column
 * (no grid value, or the code space passes 64 bits). */
static bool alp_plan(const ps_plain *in, const uint8_t *valid, uint32_t e, uint32_t f, const ps_allocator *A,
                     alp_build *b, bool *oom) {
  memset(b, 0, sizeof *b);
  const bool f32 = in->type == PS_TYPE_FLOAT32;
  b->e = e, b->f = f, b->f32 = f32;
  int64_t kmin = INT64_MAX, kmax = INT64_MIN;
  uint64_t nx = 0;
  for (uint64_t i = 0; i < in->n; i++) {
    int64_t k;
    if (!valid_at(valid, i)) continue;
    if (alp_k(value_at(in, i), e, f, f32, &k)) {
      if (k < kmin) kmin = k;
      if (k > kmax) kmax = k;
    } else {
      nx++;
    }
  }
  if (kmin > kmax) return false;
  uint64_t *o = ps_alloc_with(A, sizeof *o * (nx ? nx : 1));
  if (!o) return *oom = true, false;
  nx = 0;
  for (uint64_t i = 0; i < in->n; i++) {
    int64_t k;
    if (valid_at(valid, i) && !alp_k(value_at(in, i), e, f, f32, &k)) o[nx++] = ps_fmap_ord(value_at(in, i));
  }
  qsort(o, nx, sizeof *o, cmp_u64);
  uint64_t u = 0;
  for (uint64_t i = 0; i < nx; i++)
    if (!u || o[u - 1] != o[i]) o[u++] = o[i];
  /* Gap of each distinct exception: its grid floor k (kmin - 1: below the
   * grid). A value that is some grid value after all (ALP's rounding missed
   * its k) is dropped here and coded as that grid value. */
  int64_t *gk = ps_alloc_with(A, sizeof *gk * (u ? u : 1));
  if (!gk) return ps_free_with(A, o), *oom = true, false;
  uint64_t w = 0, max_inner = 0, bottom = 0, run = 0;
  for (uint64_t i = 0; i < u; i++) {
    const int64_t k = grid_floor(o[i], kmin, kmax, e, f, f32);
    if (k >= kmin && ps_fmap_ord(ps_fmap_grid(k, e, f, f32)) == o[i]) continue;
    run = w && gk[w - 1] == k ? run + 1 : 1;
    if (k < kmin)
      bottom = run;
    else if (run > max_inner)
      max_inner = run;
    o[w] = o[i], gk[w] = k, w++;
  }
  uint64_t need = max_inner + 1 > bottom ? max_inner + 1 : bottom;
  uint32_t rb = 0;
  while (((uint64_t)1 << rb) < need) rb++;
  const int64_t kbase = bottom ? kmin - 1 : kmin;
  const uint64_t steps = (uint64_t)(kmax - kbase);
  if (rb >= 64 || (rb && steps >> (64 - rb))) {
    ps_free_with(A, o), ps_free_with(A, gk);
    return false;
  }
  uint64_t *codes = ps_alloc_with(A, sizeof *codes * (w ? w : 1));
  if (!codes) return ps_free_with(A, o), ps_free_with(A, gk), *oom = true, false;
  for (uint64_t i = 0; i < w; i++) {
    const uint64_t rank =
        i && gk[i - 1] == gk[i] ? (codes[i - 1] & (((uint64_t)1 << rb) - 1)) + 1 : (gk[i] < kmin ? 0 : 1);
    codes[i] = ((uint64_t)(gk[i] < kmin ? 0 : gk[i] - kbase) << rb) | rank;
  }
  ps_free_with(A, gk);
  b->rank_bits = rb;
  b->kbase = kbase;
  b->ords = o;
  b->codes = codes;
  b->n_exc = w;
  b->max_code = (steps << rb) | (w ? codes[w - 1] & (((uint64_t)1 << rb) - 1) : 0);
  if (w && codes[w - 1] > b->max_code) b->max_code = codes[w - 1];
  return true;
}

static uint64_t alp_code(const alp_build *b, double x) {
  int64_t k;
  if (alp_k(x, b->e, b->f, b->f32, &k)) return (uint64_t)(k - b->kbase) << b->rank_bits;
  const uint64_t o = ps_fmap_ord(x);
  uint64_t lo = 0, hi = b->n_exc;
  while (lo < hi) {
    const uint64_t mid = lo + (hi - lo) / 2;
    if (b->ords[mid] < o)
      lo = mid + 1;
    else
      hi = mid;
  }
  if (lo < b->n_exc && b->ords[lo] == o) return b->codes[lo];
  /* a grid value ALP's rounding missed (alp_plan dropped it from the table) */
  const int64_t lo_k = b->kbase, hi_k = b->kbase + (int64_t)(b->max_code >> b->rank_bits);
  return (uint64_t)(grid_floor(o, lo_k, hi_k, b->e, b->f, b->f32) - b->kbase) << b->rank_bits;
}

static uint64_t packed_size(uint64_t n, uint32_t w) {
  uint64_t s;
  return ps_for_packed_bytes(n, w, &s) ? s : UINT64_MAX;
}

ps_status ps_fmap_build(const ps_plain *in, const uint8_t *valid, const ps_allocator *A, char *err, size_t size,
                        ps_fmap_result *out) {
  memset(out, 0, sizeof *out);
  out->allocator = A;
  if (in->n > SIZE_MAX / sizeof(uint64_t))
    return ps_set_error_buf(err, size, PS_ERR_LIMIT, "%" PRIu64 " rows do not fit in host memory", in->n);
  const bool f32 = in->type == PS_TYPE_FLOAT32;
  uint64_t nvalid = 0, omin = UINT64_MAX, omax = 0;
  for (uint64_t i = 0; i < in->n; i++) {
    if (!valid_at(valid, i)) continue;
    nvalid++;
    const uint64_t o = f32 ? ord32(((const float *)in->values)[i]) : ps_fmap_ord(value_at(in, i));
    if (o < omin) omin = o;
    if (o > omax) omax = o;
  }
  bool oom = false;
  alp_build b;
  bool alp = false;
  if (nvalid) {
    uint32_t e, f;
    choose_exponents(in, valid, nvalid, A, &e, &f);
    alp = alp_plan(in, valid, e, f, A, &b, &oom);
    if (oom)
      return ps_set_error_buf(err, size, PS_ERR_OUT_OF_MEMORY, "building the float mapping of %" PRIu64 " rows", in->n);
  }
  const uint32_t wbits = nvalid ? bit_length(omax - omin) : 0;
  if (alp) {
    const uint64_t alp_bytes = packed_size(in->n, bit_length(b.max_code)) + b.n_exc * sizeof(ps_float_exception);
    if (alp_bytes > packed_size(in->n, wbits)) {
      ps_free_with(A, b.ords), ps_free_with(A, b.codes);
      alp = false;
    }
  }
  uint64_t *codes = ps_alloc_with(A, sizeof *codes * (size_t)(in->n ? in->n : 1));
  if (!codes) {
    if (alp) ps_free_with(A, b.ords), ps_free_with(A, b.codes);
    return ps_set_error_buf(err, size, PS_ERR_OUT_OF_MEMORY, "building the float mapping of %" PRIu64 " rows", in->n);
  }
  uint64_t maxc = 0;
  for (uint64_t i = 0; i < in->n; i++) {
    uint64_t c = 0;
    if (valid_at(valid, i)) {
      const double x = value_at(in, i);
      c = alp ? alp_code(&b, x) : (f32 ? ord32((float)x) : ps_fmap_ord(x)) - omin;
    }
    codes[i] = c;
    if (c > maxc) maxc = c;
  }
  out->codes = codes;
  out->max_code = maxc;
  if (alp) {
    out->map = PS_FLOAT_MAP_ALP;
    out->e = b.e, out->f = b.f, out->rank_bits = b.rank_bits;
    out->reference = (uint64_t)b.kbase;
    out->n_exc = b.n_exc;
    out->exc = ps_alloc_with(A, sizeof *out->exc * (size_t)(b.n_exc ? b.n_exc : 1));
    if (!out->exc) {
      ps_free_with(A, b.ords), ps_free_with(A, b.codes), ps_free_with(A, codes);
      memset(out, 0, sizeof *out);
      return ps_set_error_buf(err, size, PS_ERR_OUT_OF_MEMORY, "building the float mapping of %" PRIu64 " rows", in->n);
    }
    for (uint64_t i = 0; i < b.n_exc; i++) {
      out->exc[i].code = b.codes[i];
      out->exc[i].bits = ps_fmap_ord_inverse(b.ords[i]);
    }
    ps_free_with(A, b.ords), ps_free_with(A, b.codes);
  } else {
    out->map = PS_FLOAT_MAP_BITS;
    out->reference = nvalid ? omin : (f32 ? ord32(0.0f) : ps_fmap_ord(0.0));
  }
  return PS_OK;
}

const char *ps_column_label(const ps_column *c, char *buf) {
  if (c->name)
    snprintf(buf, PS_COLUMN_LABEL_SIZE, "column '%s'", c->name);
  else
    snprintf(buf, PS_COLUMN_LABEL_SIZE, "an unnamed column");
  return buf;
}

void ps_fmap_result_free(ps_fmap_result *r) {
  ps_free_with(r->allocator, r->codes);
  ps_free_with(r->allocator, r->exc);
  memset(r, 0, sizeof *r);
}

double ps_fmap_dnum(uint32_t kind, uint64_t v, double d) {
  volatile double x; /* each step rounded once */
  switch (kind) {
    case PS_KIND_UNSIGNED:
      x = (double)v;
      return x / d;
    case PS_KIND_FLOAT32:
      x = (double)(int64_t)v;
      x = x / d;
      return (double)(float)x;
    default:
      x = (double)(int64_t)v;
      return x / d;
  }
}

double ps_fmap_darith(uint32_t op, double a, double b) {
  volatile double x = op == PS_VOP_DADD ? a + b : op == PS_VOP_DSUB ? a - b : a * b; /* never fused */
  return x;
}
