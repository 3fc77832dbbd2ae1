/*
 * query_datum: a query result's double (ps_datum.as_double) is the exact
 * decimal v / 10^scale correctly rounded, whichever way core/query_result.c
 * computes it: the division of two exact doubles where both are exact
 * (|v| <= 2^53, scale <= 22), strtod of the decimal text elsewhere. Compared
 * with strtod of the text for seeded random values of every magnitude and
 * scale, and for the edges of the fast path. And the exact sums of lossless
 * float columns rounded once (ps_query_exact_double: sum * 2^unit / count to
 * the nearest double, ties to even, subnormals and overflow as IEEE rounds)
 * against strtod of the exact decimal, for random sums, units and counts
 * and for ties. And the kernels' PS_VOP_FCOL (ps_q_fcol of
 * kernels_shared/ps_query_kernels.h, compiled here as C) against the host's
 * decode (core/float_map.c) and exact units written out here: ALP grid
 * values at every (e, f) of float64 and float32 (the factor tables' bits),
 * the ordered bits of both, and the window's edges (a bit below the unit,
 * 2^126 units, infinities).
 */
#include <inttypes.h>
#include <math.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "qoracle.h" /* oq_limbs_digits */

#include "query.h"
#include "ps_query_kernels.h"

/* strtod of the exact decimal text of v / 10^scale. */
static double oracle(ps_i128 v, uint32_t scale) {
  char digits[64], text[96];
  ps_u128 m = v < 0 ? (ps_u128)0 - (ps_u128)v : (ps_u128)v;
  char *p = digits + sizeof digits;
  *--p = '\0';
  do {
    *--p = (char)('0' + (int)(m % 10));
    m /= 10;
  } while (m);
  snprintf(text, sizeof text, "%s%se-%" PRIu32, v < 0 ? "-" : "", p, scale);
  return strtod(text, NULL);
}

static void one(ps_i128 v, uint32_t scale) {
  const ps_datum d = ps_query_datum(v, scale);
  const double want = oracle(v, scale);
  CHECKF(memcmp(&d.as_double, &want, sizeof want) == 0, "v = %s%llx:%016llx (hex), scale %u: %.17g, want %.17g",
         v < 0 ? "-" : "", (unsigned long long)(((v < 0 ? (ps_u128)0 - (ps_u128)v : (ps_u128)v) >> 64)),
         (unsigned long long)(v < 0 ? (ps_u128)0 - (ps_u128)v : (ps_u128)v), scale, d.as_double, want);
}

/* strtod of sum * 2^unit / count (sum below 2^255 in magnitude, unit >=
 * -1076, count below 2^60): N = |sum| * 2^(unit + 1076) * 5^1076 * 10 is the exact value
 * times 10^1077; its quotient by count is the decimal down to 10^-1077,
 * and a nonzero remainder one more digit 1 (midpoints between doubles are
 * multiples of 2^-1075, hence of 10^-1075: none lies between the cut
 * quotient and the exact one). */
#define OL 220 /* 32-bit limbs: 256 + 2100 + 2500 + 4 bits */
static double exact_oracle(const uint64_t sum[4], int32_t unit, uint64_t count) {
  uint32_t n[OL];
  memset(n, 0, sizeof n);
  const int neg = (int)(sum[3] >> 63);
  uint64_t m[4], carry = 1;
  for (int i = 0; i < 4; i++) {
    m[i] = neg ? ~sum[i] + carry : sum[i];
    carry = neg && carry && m[i] == 0;
  }
  for (int i = 0; i < 8; i++) n[i] = (uint32_t)(m[i / 2] >> (32 * (i % 2)));
  { /* subnormal results: this glibc's strtod misrounds some long decimals there, so the
     * quotient in units of 2^-1074, rounded to nearest even here */
    uint32_t q[OL];
    memcpy(q, n, sizeof q);
    const int up = unit + 1074;
    uint64_t den = count;
    for (int k = 0; k < (up < 0 ? -up : 0); k++) den *= 2;
    for (int k = 0; k < up; k++) {
      uint64_t c = 0;
      for (int i = 0; i < OL; i++) {
        const uint64_t p = (uint64_t)q[i] * 2 + c;
        q[i] = (uint32_t)p;
        c = p >> 32;
      }
    }
    ps_u128 r = 0;
    for (int i = OL - 1; i >= 0; i--) {
      const ps_u128 cur = (r << 32) | q[i];
      q[i] = (uint32_t)(cur / den);
      r = cur % den;
    }
    int high = 0;
    for (int i = 2; i < OL; i++) high = high || q[i];
    const uint64_t low = (uint64_t)q[0] | ((uint64_t)q[1] << 32);
    if (!high && low < ((uint64_t)1 << 52)) {
      const uint64_t units = low + (2 * r > den || (2 * r == den && (low & 1)));
      const double x = ldexp((double)units, -1074);
      return neg ? -x : x;
    }
  }
  for (int k = 0; k < 1076 + 1 + unit + 1076 + 1; k++) { /* * 5^1076, * 10, * 2^(unit + 1076) */
    const uint64_t f = k < 1076 ? 5 : k == 1076 ? 10 : 2;
    uint64_t c = 0;
    for (int i = 0; i < OL; i++) {
      const uint64_t p = (uint64_t)n[i] * f + c;
      n[i] = (uint32_t)p;
      c = p >> 32;
    }
    if (k == 1076 + unit + 1076) break;
  }
  ps_u128 rem = 0;
  for (int i = OL - 1; i >= 0; i--) {
    const ps_u128 cur = (rem << 32) | n[i];
    n[i] = (uint32_t)(cur / count);
    rem = cur % count;
  }
  static char digits[OL * 10 + 2], text[OL * 10 + 40];
  int nd = oq_limbs_digits(n, OL, digits);
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  int len = 0;
  if (neg) text[len++] = '-';
  while (nd > 0) text[len++] = digits[--nd];
  text[len++] = rem ? '1' : '0';
  snprintf(text + len, 40, "e-1078");
  return strtod(text, NULL); /* a zero sum is +0.0; a negative value below half the least subnormal -0.0 */
}

static void one_exact(const uint64_t sum[4], int32_t unit, uint64_t count) {
  const double got = ps_query_exact_double(sum, unit, count), want = exact_oracle(sum, unit, count);
  CHECKF(memcmp(&got, &want, sizeof want) == 0,
         "sum %016" PRIx64 ":%016" PRIx64 ":%016" PRIx64 ":%016" PRIx64 " * 2^%d / %" PRIu64 ": %.17g, want %.17g",
         sum[3], sum[2], sum[1], sum[0], (int)unit, count, got, want);
}

static void check_exact_doubles(void) {
  th_case("exact sums rounded once");
  /* ties: 2^53 + 1 and 2^53 + 3 units (to even: down, up), a subnormal's, the largest double's */
  const uint64_t p53 = (uint64_t)1 << 53;
  const uint64_t ties[][4] = {{p53 + 1, 0, 0, 0}, {p53 + 3, 0, 0, 0}, {3, 0, 0, 0}, {1, 0, 0, 0},
                              {(p53 - 1) * 2 + 1, 0, 0, 0}, {0, 0, 0, 0}, {~(uint64_t)0, ~(uint64_t)0, ~(uint64_t)0, ~(uint64_t)0}};
  const int32_t units[] = {-1076, -1075, -1074, -1000, -60, 0, 917, 918, 919, 970, 971};
  for (size_t t = 0; t < sizeof ties / sizeof ties[0]; t++)
    for (size_t u = 0; u < sizeof units / sizeof units[0]; u++)
      for (uint64_t count = 1; count <= 3; count++) one_exact(ties[t], units[u], count);
  const int n = th.quick ? 2000 : 20000;
  for (int i = 0; i < n; i++) {
    uint64_t sum[4] = {th_u64(&th.rng), th_u64(&th.rng), th_u64(&th.rng), 0};
    const uint32_t bits = 1 + (uint32_t)th_below(&th.rng, 190); /* a 192-bit run's sums */
    for (uint32_t w = 0; w < 3; w++) {
      const int64_t keep = (int64_t)bits - 64 * w;
      sum[w] = keep <= 0 ? 0 : keep >= 64 ? sum[w] : sum[w] & (((uint64_t)1 << keep) - 1);
    }
    if (th_chance(&th.rng, 50)) { /* negate */
      uint64_t carry = 1;
      for (int w = 0; w < 4; w++) {
        sum[w] = ~sum[w] + carry;
        carry = carry && sum[w] == 0;
      }
    }
    const int32_t unit = -1074 + (int32_t)th_below(&th.rng, 1074 + 899);
    const uint64_t count = th_chance(&th.rng, 30) ? 1 : 1 + th_below(&th.rng, (uint64_t)1 << th_below(&th.rng, 50));
    one_exact(sum, unit, count);
  }
}

/* x in units of 2^unit, exactly (frexp and integer steps), or false where
 * it is not an integer below 2^126 in magnitude. */
static bool units_of(double x, int unit, ps_i128 *out) {
  if (!isfinite(x)) return false;
  *out = 0;
  if (x == 0) return true;
  int ex;
  ps_i128 m = (ps_i128)ldexp(frexp(fabs(x), &ex), 53);
  for (ex -= 53; ex < unit; ex++) {
    if (m % 2) return false;
    m /= 2;
  }
  for (; ex > unit; ex--)
    if ((m *= 2) >= (ps_i128)1 << 126) return false;
  if (m >= (ps_i128)1 << 126) return false;
  *out = x < 0 ? -m : m;
  return true;
}

static void one_fcol(uint64_t lo, uint64_t ref, uint64_t code, double x, const char *what) {
  uint64_t aux[PS_VAUX_HEAD] = {0}; /* every slot's table empty */
  aux[0] = PS_VAUX_HEAD;
  int unrep = 0;
  const ps_q128 got = ps_q_fcol(lo, ref, aux, 0, code, &unrep);
  ps_i128 want = 0;
  const bool ok = units_of(x, (int)PS_VF_UNIT(lo), &want);
  const ps_i128 g = (ps_i128)(((ps_u128)got.hi << 64) | got.lo);
  CHECKF(ok ? !unrep && g == want : unrep != 0, "%s: code %" PRIu64 " (%.17g) at unit %d: unrep %d", what, code, x,
         (int)PS_VF_UNIT(lo), unrep);
}

static void check_fcol(void) {
  th_case("ps_q_fcol");
  ps_fmap m;
  memset(&m, 0, sizeof m);
  m.map = PS_FLOAT_MAP_ALP;
  m.rank_bits = 1; /* codes 2k: grid steps, no table search */
  for (int f32 = 0; f32 < 2; f32++) {
    m.f32 = f32;
    for (uint32_t e = 0; e <= (f32 ? 10u : 18u); e++)
      for (uint32_t f = 0; f <= e; f++)
        for (int t = 0; t < 40; t++) {
          const int64_t lim = f32 ? (int64_t)1 << 24 : (int64_t)1 << 53;
          const int64_t k = (int64_t)th_below(&th.rng, (uint64_t)(2 * lim + 1)) - lim;
          m.e = e, m.f = f, m.ref = (uint64_t)(k - 3);
          const double x = ps_fmap_decode(&m, 6); /* step 3: k */
          one_fcol(PS_VF_MAKE(PS_VF_ALP, f32, e, f, 1, f32 ? -149 : -1074), m.ref, 6, x, "ALP grid");
        }
  }
  m.map = PS_FLOAT_MAP_BITS;
  m.rank_bits = 0;
  for (int f32 = 0; f32 < 2; f32++) {
    m.f32 = f32;
    for (int t = 0; t < 20000; t++) {
      uint64_t o = th_u64(&th.rng);
      if (f32) o = (uint32_t)o;
      m.ref = o & ~(uint64_t)0xFF, m.e = m.f = 0;
      const uint64_t code = o & 0xFF;
      const double x = ps_fmap_decode(&m, code);
      if (isnan(x)) continue;
      const int unit = (int)th_below(&th.rng, 2100) - 1100;
      one_fcol(PS_VF_MAKE(PS_VF_BITS, f32, 0, 0, 0, unit), m.ref, code, x, "bits");
    }
  }
  /* the window's edges */
  int unrep = 0;
  ps_q128 v = ps_q_units(1, -126, 0, -125, &unrep);
  CHECK(unrep); /* 2^-126 in units of 2^-125 */
  unrep = 0;
  v = ps_q_units(((uint64_t)1 << 53) - 1, 73, 1, 0, &unrep); /* -(2^53 - 1) * 2^73 < 2^126 units */
  CHECK(!unrep && v.hi == (uint64_t)0 - ((((uint64_t)1 << 53) - 1) << 9) && v.lo == 0);
  v = ps_q_units((uint64_t)1 << 52, 74, 0, 0, &unrep); /* 2^126 */
  CHECK(unrep);
  unrep = 0;
  v = ps_q_f64_units(0x7FF0000000000000ull, 0, &unrep);
  CHECK(unrep && v.lo == 0 && v.hi == 0);
  unrep = 0;
  v = ps_q_f32_units(0xFF800000u, 0, &unrep);
  CHECK(unrep);
  unrep = 0;
  v = ps_q_f64_units(0x8000000000000000ull, 5, &unrep); /* -0.0: +0 units */
  CHECK(!unrep && v.lo == 0 && v.hi == 0);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "query_datum");
  const ps_i128 p53 = (ps_i128)1 << 53;
  /* the fast path's edges, both signs */
  const ps_i128 edges[] = {0, 1, 5, 9, 10, 15, 25, 35, 123456789, p53 - 1, p53, p53 + 1, p53 + 2, p53 * 2 + 1,
                           (ps_i128)INT64_MAX, (ps_i128)1 << 100};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
    for (uint32_t s = 0; s <= PS_QUERY_MAX_SCALE; s++) {
      one(edges[i], s);
      one(-edges[i], s);
    }
  /* random values of every bit length and scale */
  const int n = th.quick ? 200000 : 2000000;
  for (int i = 0; i < n; i++) {
    const uint32_t bits = (uint32_t)th_below(&th.rng, 120) + 1;
    ps_u128 m = ((ps_u128)th_u64(&th.rng) << 64 | th_u64(&th.rng)) >> (128 - bits);
    const ps_i128 v = th_chance(&th.rng, 50) ? -(ps_i128)m : (ps_i128)m;
    one(v, (uint32_t)th_below(&th.rng, PS_QUERY_MAX_SCALE + 1));
  }
  check_exact_doubles();
  check_fcol();
  return th_finish();
}
