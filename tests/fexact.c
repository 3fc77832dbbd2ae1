/* The exact-sum oracle of the lossless float tests (fexact.h). */
#include "fexact.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "qoracle.h" /* oq_limbs_digits */

#define DEC_LIMBS 160

uint64_t fx_bits(double x) {
  uint64_t b;
  memcpy(&b, &x, 8);
  return b;
}

double fx_double(uint64_t b) {
  double x;
  memcpy(&x, &b, 8);
  return x;
}

static void limbs_add(uint32_t *a, int n, int at, uint64_t lo, uint64_t hi) {
  uint64_t carry = 0;
  for (int i = at; i < n; i++) {
    const int k = i - at;
    const uint64_t part = k < 2 ? (lo >> (32 * k)) & 0xFFFFFFFFu : k < 4 ? (hi >> (32 * (k - 2))) & 0xFFFFFFFFu : 0;
    const uint64_t s = (uint64_t)a[i] + part + carry;
    a[i] = (uint32_t)s;
    carry = s >> 32;
    if (k >= 4 && carry == 0) break;
  }
}

void fx_add(fx_exact *e, double x) {
  e->count++;
  if (isinf(x)) {
    e->inf = true;
    return;
  }
  const uint64_t b = fx_bits(x), ex = (b >> 52) & 0x7FF;
  const uint64_t m = ex ? (b & 0xFFFFFFFFFFFFFull) | ((uint64_t)1 << 52) : b & 0xFFFFFFFFFFFFFull;
  const int shift = ex ? (int)ex - 1 : 0; /* value = m * 2^(shift - 1074) */
  /* m << (shift % 32) as 128 bits */
  const int s = shift % 32;
  const uint64_t lo = m << s, hi = s ? m >> (64 - s) : 0;
  limbs_add(b >> 63 ? e->neg : e->pos, FX_ACC_LIMBS, shift / 32, lo, hi);
}

static int limbs_cmp(const uint32_t *a, const uint32_t *b, int n) {
  for (int i = n - 1; i >= 0; i--)
    if (a[i] != b[i]) return a[i] < b[i] ? -1 : 1;
  return 0;
}

/* sum * 2^-1074 / e->count (the count itself for AVG, 1 for SUM), rounded
 * by strtod from an exact decimal: the integer N = |sum| * 5^1074 * 10
 * divided by count gives the digits of the quotient down to 10^-1076, and a
 * nonzero remainder one more digit 1 (every midpoint between doubles is a
 * multiple of 2^-1075, so of 10^-1075: none lies between the cut quotient
 * and the true one). */
double fx_value(const fx_exact *e, bool avg) {
  uint32_t n[DEC_LIMBS];
  memset(n, 0, sizeof n);
  const int c = limbs_cmp(e->pos, e->neg, FX_ACC_LIMBS);
  const uint32_t *big = c >= 0 ? e->pos : e->neg, *small = c >= 0 ? e->neg : e->pos;
  int64_t borrow = 0;
  for (int i = 0; i < FX_ACC_LIMBS; i++) {
    int64_t d = (int64_t)big[i] - small[i] - borrow;
    borrow = d < 0;
    n[i] = (uint32_t)(d + (borrow ? ((int64_t)1 << 32) : 0));
  }
  bool zero = true;
  for (int i = 0; i < DEC_LIMBS; i++) zero = zero && n[i] == 0;
  if (zero) return 0.0;
  for (int k = 0; k <= 1074; k++) { /* * 5^1074, then * 10 */
    const uint64_t f = k < 1074 ? 5 : 10;
    uint64_t carry = 0;
    for (int i = 0; i < DEC_LIMBS; i++) {
      const uint64_t p = (uint64_t)n[i] * f + carry;
      n[i] = (uint32_t)p;
      carry = p >> 32;
    }
  }
  const uint64_t div = avg ? e->count : 1;
  uint64_t rem = 0;
  for (int i = DEC_LIMBS - 1; i >= 0; i--) {
    const uint64_t cur = (rem << 32) | n[i];
    n[i] = (uint32_t)(cur / div);
    rem = cur % div;
  }
  /* decimal digits, 9 at a time */
  static char text[DEC_LIMBS * 10 + 32];
  char digits[DEC_LIMBS * 10 + 1];
  int nd = oq_limbs_digits(n, DEC_LIMBS, digits);
  int len = 0;
  if (c < 0) text[len++] = '-';
  while (nd > 1 && digits[nd - 1] == '0') nd--;
  while (nd > 0) text[len++] = digits[--nd];
  text[len++] = rem ? '1' : '0';
  snprintf(text + len, 32, "e-1076");
  return strtod(text, NULL);
}
