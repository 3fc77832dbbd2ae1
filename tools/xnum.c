/* Exact DECIMAL(38) arithmetic (see xnum.h). */
#include "xnum.h"

#include <stdlib.h>
#include <string.h>

typedef unsigned __int128 u128;

/* 10^38 - 1, the largest magnitude. */
static u128 max_mag(void) {
  u128 p = 1;
  for (int i = 0; i < 38; i++) p *= 10;
  return p - 1;
}

static u128 mag(__int128 u) { return u < 0 ? (u128)0 - (u128)u : (u128)u; }

/* ---- 256-bit unsigned integers, four little-endian 64-bit limbs ---- */

typedef struct u256 {
  uint64_t w[4];
} u256;

static u256 u256_of(u128 v) {
  u256 r = {{(uint64_t)v, (uint64_t)(v >> 64), 0, 0}};
  return r;
}

/* x *= m; nonzero when the product needs more than 256 bits. */
static int u256_mul_small(u256 *x, uint64_t m) {
  u128 carry = 0;
  for (int i = 0; i < 4; i++) {
    u128 t = (u128)x->w[i] * m + carry;
    x->w[i] = (uint64_t)t;
    carry = t >> 64;
  }
  return carry != 0;
}

static int u256_scale10(u256 *x, int digits) {
  for (int i = 0; i < digits; i++)
    if (u256_mul_small(x, 10)) return -1;
  return 0;
}

static u256 u256_mul(u128 a, u128 b) {
  uint64_t x[2] = {(uint64_t)a, (uint64_t)(a >> 64)}, y[2] = {(uint64_t)b, (uint64_t)(b >> 64)};
  u256 r = {{0, 0, 0, 0}};
  for (int i = 0; i < 2; i++) {
    u128 carry = 0;
    for (int j = 0; j < 2; j++) {
      u128 t = (u128)x[i] * y[j] + r.w[i + j] + carry;
      r.w[i + j] = (uint64_t)t;
      carry = t >> 64;
    }
    for (int k = i + 2; carry && k < 4; k++) {
      u128 t = (u128)r.w[k] + carry;
      r.w[k] = (uint64_t)t;
      carry = t >> 64;
    }
  }
  return r;
}

static int u256_cmp(const u256 *a, const u256 *b) {
  for (int i = 3; i >= 0; i--)
    if (a->w[i] != b->w[i]) return a->w[i] < b->w[i] ? -1 : 1;
  return 0;
}

/* Whether x fits 128 bits; *out its value. */
static int u256_small(const u256 *x, u128 *out) {
  *out = ((u128)x->w[1] << 64) | x->w[0];
  return x->w[2] == 0 && x->w[3] == 0;
}

/* q = x / d, *rem = x % d, for 0 < d < 2^127 (bit by bit: the remainder
 * stays below d, so doubling it never leaves 128 bits). */
static u256 u256_divmod(const u256 *x, u128 d, u128 *rem) {
  u256 q = {{0, 0, 0, 0}};
  u128 r = 0;
  for (int i = 255; i >= 0; i--) {
    r = (r << 1) | ((x->w[i / 64] >> (i % 64)) & 1);
    if (r >= d) {
      r -= d;
      q.w[i / 64] |= (uint64_t)1 << (i % 64);
    }
  }
  *rem = r;
  return q;
}

/* ---- decimals ---- */

static int make(int neg, u128 m, int scale, xnum *out) {
  if (m > max_mag()) return -1;
  out->u = neg ? -(__int128)m : (__int128)m;
  out->scale = scale;
  return 0;
}

int xnum_from_datum(const ps_datum *d, xnum *out) {
  __int128 u = (__int128)(((u128)(uint64_t)d->hi << 64) | d->lo);
  if (d->scale > XNUM_MAX_SCALE) return -1;
  return make(u < 0, mag(u), (int)d->scale, out);
}

void xnum_to_datum(const xnum *x, ps_datum *out) {
  char text[48];
  memset(out, 0, sizeof *out);
  out->scale = (uint32_t)x->scale;
  out->lo = (uint64_t)(u128)x->u;
  out->hi = (int64_t)((u128)x->u >> 64);
  xnum_format(x, text);
  out->as_double = strtod(text, NULL); /* correctly rounded (ties to even) */
}

int xnum_rescale(const xnum *x, int scale, xnum *out) {
  if (scale < x->scale || scale > XNUM_MAX_SCALE) return -1;
  u256 m = u256_of(mag(x->u));
  u128 v;
  if (u256_scale10(&m, scale - x->scale) || !u256_small(&m, &v)) return -1;
  return make(x->u < 0, v, scale, out);
}

static int add(const xnum *a, const xnum *b, int negate_b, xnum *out) {
  int s = a->scale > b->scale ? a->scale : b->scale;
  xnum x, y;
  if (xnum_rescale(a, s, &x) || xnum_rescale(b, s, &y)) return -1;
  __int128 r;
  /* |x|, |y| < 10^38 < 2^127, so -y never overflows */
  if (__builtin_add_overflow(x.u, negate_b ? -y.u : y.u, &r)) return -1;
  return make(r < 0, mag(r), s, out);
}

int xnum_add(const xnum *a, const xnum *b, xnum *out) { return add(a, b, 0, out); }
int xnum_sub(const xnum *a, const xnum *b, xnum *out) { return add(a, b, 1, out); }

int xnum_mul(const xnum *a, const xnum *b, xnum *out) {
  if (a->scale + b->scale > XNUM_MAX_SCALE) return -1;
  u256 p = u256_mul(mag(a->u), mag(b->u));
  u128 v;
  if (!u256_small(&p, &v)) return -1;
  return make((a->u < 0) != (b->u < 0) && v != 0, v, a->scale + b->scale, out);
}

int xnum_div(const xnum *a, const xnum *b, int scale, xnum *out) {
  if (b->u == 0) return 1;
  /* a/10^sa / (b/10^sb) at scale s is a * 10^(s - sa + sb) / b. A numerator
   * past 256 bits means a quotient past 2^129 (b < 2^127): too large anyway. */
  int k = scale - a->scale + b->scale;
  if (k < 0 || scale > XNUM_MAX_SCALE) return -1;
  u256 n = u256_of(mag(a->u));
  if (u256_scale10(&n, k)) return -1;
  u128 d = mag(b->u), rem, q;
  u256 qq = u256_divmod(&n, d, &rem);
  if (!u256_small(&qq, &q)) return -1;
  if (rem >= d - rem) q++; /* half away from zero: 2 * rem >= d */
  return make((a->u < 0) != (b->u < 0) && q != 0, q, scale, out);
}

int xnum_cmp(const xnum *a, const xnum *b) {
  int sa = a->u < 0 ? -1 : a->u > 0, sb = b->u < 0 ? -1 : b->u > 0;
  if (sa != sb) return sa < sb ? -1 : 1;
  u256 x = u256_of(mag(a->u)), y = u256_of(mag(b->u));
  int s = a->scale > b->scale ? a->scale : b->scale;
  /* < 10^38 * 10^38 < 2^253: no overflow */
  u256_scale10(&x, s - a->scale);
  u256_scale10(&y, s - b->scale);
  int c = u256_cmp(&x, &y);
  return sa < 0 ? -c : c;
}

void xnum_format(const xnum *x, char out[48]) {
  char digits[48];
  int n = 0;
  u128 m = mag(x->u);
  do {
    digits[n++] = (char)('0' + (int)(m % 10));
    m /= 10;
  } while (m);
  while (n <= x->scale) digits[n++] = '0'; /* at least one digit before the point */
  int o = 0;
  if (x->u < 0) out[o++] = '-';
  for (int i = n - 1; i >= 0; i--) {
    out[o++] = digits[i];
    if (i == x->scale && i > 0) out[o++] = '.';
  }
  out[o] = 0;
}
