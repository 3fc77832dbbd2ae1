/* Numeric literals: the exact decimal kind (validation, floor/ceil, nearest
 * double, text) and the one parser of SQL numeric literal text that the
 * command line, the Python package and the C++ layer share.
 *
 * Doubles are made by strtod from a digit string with an exponent and no
 * decimal point: glibc's strtod rounds correctly, and without a point the
 * locale's decimal separator never matters. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

/* 10^38 - 1: the largest unscaled value of DECIMAL(38, s). */
static ps_i128 decimal_max(void) {
  ps_i128 p = 1;
  for (int i = 0; i < PS_DECIMAL_MAX_DIGITS; i++) p *= 10;
  return p - 1;
}

ps_i128 ps_pow10_i128(uint32_t scale) {
  ps_i128 p = 1;
  for (uint32_t i = 0; i < scale; i++) p *= 10;
  return p;
}

ps_i128 ps_decimal_unscaled(const ps_literal *lit) {
  return (ps_i128)(((ps_u128)(uint64_t)lit->v.d.hi << 64) | (ps_u128)lit->v.d.lo);
}

/* Digits of |v| into buf (most significant first, no NUL); returns the count. */
static size_t u128_digits(ps_u128 v, char *buf) {
  char tmp[40];
  size_t n = 0;
  do {
    tmp[n++] = (char)('0' + (int)(v % 10));
    v /= 10;
  } while (v);
  for (size_t i = 0; i < n; i++) buf[i] = tmp[n - 1 - i];
  return n;
}

static ps_u128 abs_u128(ps_i128 v) { return v < 0 ? (ps_u128)0 - (ps_u128)v : (ps_u128)v; }

/* Writes the problem with a decimal literal into buf; PS_OK when valid. */
static ps_status decimal_problem(const ps_literal *lit, const char *what, char *buf, size_t size) {
  uint32_t s = lit->v.d.scale;
  if (s > (uint32_t)INT32_MAX)
    return ps_set_error_buf(buf, size, PS_ERR_INVALID_ARGUMENT,
                            "%s: decimal scale %" PRId32 " is negative; expected 0..%d", what, (int32_t)s,
                            PS_DECIMAL_MAX_SCALE);
  if (s > PS_DECIMAL_MAX_SCALE)
    return ps_set_error_buf(buf, size, PS_ERR_INVALID_ARGUMENT, "%s: decimal scale %" PRIu32 " is out of range 0..%d",
                            what, s, PS_DECIMAL_MAX_SCALE);
  ps_i128 u = ps_decimal_unscaled(lit), max = decimal_max();
  if (u > max || u < -max) {
    char digits[40];
    size_t n = u128_digits(abs_u128(u), digits);
    return ps_set_error_buf(buf, size, PS_ERR_INVALID_ARGUMENT,
                            "%s: decimal unscaled value %s%.*s has %zu digits; at most %d", what, u < 0 ? "-" : "",
                            (int)n, digits, n, PS_DECIMAL_MAX_DIGITS);
  }
  return PS_OK;
}

ps_status ps_check_decimal(ps_context *ctx, const ps_literal *lit, const char *what) {
  char msg[256];
  ps_status st = decimal_problem(lit, what, msg, sizeof msg);
  if (st != PS_OK) {
    /* msg already starts with the status name */
    const char *text = strchr(msg, ' ');
    return ps_set_error(ctx, st, "%s", text ? text + 1 : msg);
  }
  return PS_OK;
}

void ps_decimal_floor_ceil(const ps_literal *lit, uint32_t to_scale, ps_i128 *fl, ps_i128 *ce, bool *integral) {
  const ps_i128 big = PS_I128_FAR;
  ps_i128 u = ps_decimal_unscaled(lit);
  uint32_t s = lit->v.d.scale;
  if (s <= to_scale) {
    /* exact multiple; past +-2^100 only the side matters */
    ps_i128 up = ps_pow10_i128(to_scale - s);
    ps_i128 v = u > big / up ? big : u < -big / up ? -big : u * up;
    *fl = *ce = v;
    *integral = true;
    return;
  }
  ps_i128 p = ps_pow10_i128(s - to_scale);
  ps_i128 q = u / p, r = u % p;
  *fl = r < 0 ? q - 1 : q;
  *ce = r > 0 ? q + 1 : q;
  *integral = r == 0;
  if (*fl > big) *fl = big;
  if (*ce > big) *ce = big;
  if (*fl < -big) *fl = -big;
  if (*ce < -big) *ce = -big;
}

/* strtod of digits (no sign, no point) times 10^e10, negated when neg. */
static double digits_to_double(const char *digits, size_t n, long long e10, bool neg) {
  char buf[900];
  size_t k = 0;
  if (neg) buf[k++] = '-';
  if (n == 0) buf[k++] = '0';
  memcpy(buf + k, digits, n);
  k += n;
  snprintf(buf + k, sizeof buf - k, "e%lld", e10);
  return strtod(buf, NULL);
}

double ps_scaled_to_double(ps_i128 u, int32_t scale) {
  char digits[40];
  size_t n = u128_digits(abs_u128(u), digits);
  return digits_to_double(digits, n, -(long long)scale, u < 0);
}

double ps_decimal_to_double(const ps_literal *lit) {
  return ps_scaled_to_double(ps_decimal_unscaled(lit), (int32_t)lit->v.d.scale);
}

ps_status ps_decimal_format(const ps_literal *lit, char *buf, size_t size) {
  if (!lit || lit->kind != PS_LIT_DECIMAL) return PS_ERR_INVALID_ARGUMENT;
  if (decimal_problem(lit, "literal", NULL, 0) != PS_OK) return PS_ERR_INVALID_ARGUMENT;
  ps_i128 u = ps_decimal_unscaled(lit);
  uint32_t s = lit->v.d.scale;
  char digits[40], out[PS_DECIMAL_TEXT_SIZE];
  size_t n = u128_digits(abs_u128(u), digits), k = 0;
  if (u < 0) out[k++] = '-';
  if (n <= s) {
    out[k++] = '0';
    out[k++] = '.';
    for (size_t i = n; i < s; i++) out[k++] = '0';
    memcpy(out + k, digits, n);
    k += n;
  } else {
    memcpy(out + k, digits, n - s);
    k += n - s;
    if (s) {
      out[k++] = '.';
      memcpy(out + k, digits + (n - s), s);
      k += s;
    }
  }
  out[k++] = '\0';
  if (!buf || size < k) return PS_ERR_BUFFER_TOO_SMALL;
  memcpy(buf, out, k);
  return PS_OK;
}

/* ---- the parser ------------------------------------------------------------------ */

/* Significant digits kept for a double: 768 decimal digits decide the
 * rounding of any double; the rest only matter as "some nonzero digit
 * follows", which one sticky digit keeps. */
#define KEEP_DIGITS 780

ps_status ps_literal_parse(const char *text, size_t len, ps_literal *out, char *err_buf, size_t err_size) {
  if (!out) return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT, "out is NULL");
  if (!text && len)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT, "text is NULL with length %zu", len);
  if (len == 0) return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT, "empty numeric literal");
  /* what is quoted back in messages */
  int shown = len > 64 ? 64 : (int)len;
  const char *more = len > 64 ? "..." : "";
  size_t pos = 0;
  bool neg = false;
  if (text[pos] == '+' || text[pos] == '-') neg = text[pos++] == '-';
  /* The mantissa's digits, leading zeros dropped: value = D * 10^-frac. */
  char digits[KEEP_DIGITS + 1];
  size_t nsig = 0;     /* significant digits seen (all of them, kept or not) */
  size_t nsig_nz = 0;  /* significant digits up to and including the last nonzero one */
  bool sticky = false; /* a nonzero digit past KEEP_DIGITS */
  size_t n_digits = 0, frac = 0;
  bool point = false;
  for (; pos < len; pos++) {
    char ch = text[pos];
    if (ch == '.' && !point) {
      point = true;
      continue;
    }
    if (ch < '0' || ch > '9') break;
    n_digits++;
    if (point) frac++;
    if (nsig == 0 && ch == '0') continue;
    if (nsig < KEEP_DIGITS)
      digits[nsig] = ch;
    else if (ch != '0')
      sticky = true;
    nsig++;
    if (ch != '0') nsig_nz = nsig;
  }
  if (n_digits == 0 && pos == len)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT, "'%.*s%s' is not a number: no digits", shown,
                            text, more);
  bool has_exp = false;
  long long exp10 = 0;
  if (n_digits && pos < len && (text[pos] == 'e' || text[pos] == 'E')) {
    has_exp = true;
    size_t at = pos++;
    bool eneg = false;
    if (pos < len && (text[pos] == '+' || text[pos] == '-')) eneg = text[pos++] == '-';
    size_t start = pos;
    for (; pos < len && text[pos] >= '0' && text[pos] <= '9'; pos++)
      if (exp10 < 1000000000LL) exp10 = exp10 * 10 + (text[pos] - '0'); /* saturates: far past any double */
    if (pos == start)
      return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                              "'%.*s%s': the exponent at position %zu has no digits", shown, text, more, at);
    if (eneg) exp10 = -exp10;
  }
  if (pos < len) {
    unsigned char ch = (unsigned char)text[pos];
    if (ch >= 0x20 && ch < 0x7f)
      return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                              "'%.*s%s' is not a number: unexpected '%c' at position %zu", shown, text, more, ch, pos);
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "'%.*s%s' is not a number: unexpected byte 0x%02x at position %zu", shown, text, more, ch,
                            pos);
  }

  if (has_exp) {
    size_t kept = nsig < KEEP_DIGITS ? nsig : KEEP_DIGITS;
    long long e10 = exp10 - (long long)frac + (long long)(nsig - kept);
    if (sticky) {
      digits[kept++] = '1';
      e10--;
    }
    errno = 0;
    double d = digits_to_double(digits, kept, e10, neg);
    if (d == HUGE_VAL || d == -HUGE_VAL)
      return ps_set_error_buf(err_buf, err_size, PS_ERR_NOT_REPRESENTABLE, "'%.*s%s' is beyond the range of a double",
                              shown, text, more);
    *out = ps_lit_float(d);
    return PS_OK;
  }

  /* Exact: drop trailing zeros after the point only as far as needed to fit. */
  size_t scale = frac;
  if (nsig_nz == 0) {
    nsig = 0;
    if (scale > PS_DECIMAL_MAX_SCALE) scale = PS_DECIMAL_MAX_SCALE;
  }
  while ((nsig > PS_DECIMAL_MAX_DIGITS || scale > PS_DECIMAL_MAX_SCALE) && scale > 0 && nsig > nsig_nz) nsig--, scale--;
  if (nsig > PS_DECIMAL_MAX_DIGITS || scale > PS_DECIMAL_MAX_SCALE)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_NOT_REPRESENTABLE,
                            "'%.*s%s' needs %zu digits at scale %zu; an exact decimal holds at most %d digits and "
                            "scale %d (an exponent, as in 1.5e0, makes a double)",
                            shown, text, more, nsig, scale, PS_DECIMAL_MAX_DIGITS, PS_DECIMAL_MAX_SCALE);
  ps_u128 mag = 0;
  for (size_t i = 0; i < nsig; i++) mag = mag * 10 + (ps_u128)(digits[i] - '0');
  if (!point) {
    if (!neg && mag <= INT64_MAX) return *out = ps_lit_int((int64_t)mag), PS_OK;
    if (neg && mag <= (ps_u128)INT64_MAX + 1) return *out = ps_lit_int((int64_t)((ps_u128)0 - mag)), PS_OK;
    if (!neg && mag <= UINT64_MAX) return *out = ps_lit_uint((uint64_t)mag), PS_OK;
  }
  ps_i128 u = neg ? -(ps_i128)mag : (ps_i128)mag;
  *out = ps_lit_decimal128((uint64_t)u, (int64_t)(u >> 64), (uint32_t)scale);
  return PS_OK;
}
