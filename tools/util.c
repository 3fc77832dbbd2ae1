#include "util.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ps_layout.h"

int set_err(char *err, size_t size, const char *fmt, ...) {
  if (err && size > 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(err, size, fmt, ap);
    va_end(ap);
  }
  return -1;
}

int tbuf_reserve(tbuf *b, size_t extra) {
  if (extra > SIZE_MAX - b->len) return -1;
  size_t need = b->len + extra;
  if (need <= b->cap) return 0;
  size_t cap = b->cap ? b->cap : 64;
  while (cap < need) {
    if (cap > SIZE_MAX / 2) {
      cap = need;
      break;
    }
    cap *= 2;
  }
  unsigned char *p = realloc(b->p, cap);
  if (!p) return -1;
  b->p = p;
  b->cap = cap;
  return 0;
}

int tbuf_append(tbuf *b, const void *src, size_t n) {
  if (n == 0) return 0;
  if (tbuf_reserve(b, n)) return -1;
  memcpy(b->p + b->len, src, n);
  b->len += n;
  return 0;
}

int tbuf_putc(tbuf *b, int c) {
  unsigned char ch = (unsigned char)c;
  return tbuf_append(b, &ch, 1);
}

int tbuf_printf(tbuf *b, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(NULL, 0, fmt, ap);
  va_end(ap);
  if (n < 0) return -1;
  if (tbuf_reserve(b, (size_t)n + 1)) return -1;
  va_start(ap, fmt);
  vsnprintf((char *)b->p + b->len, (size_t)n + 1, fmt, ap);
  va_end(ap);
  b->len += (size_t)n;
  return 0;
}

void tbuf_free(tbuf *b) {
  free(b->p);
  b->p = NULL;
  b->len = b->cap = 0;
}

int add_u64(uint64_t a, uint64_t b, uint64_t *out) {
  if (a > UINT64_MAX - b) return -1;
  *out = a + b;
  return 0;
}

int mul_u64(uint64_t a, uint64_t b, uint64_t *out) {
  if (a != 0 && b > UINT64_MAX / a) return -1;
  *out = a * b;
  return 0;
}

int packed_bytes(uint64_t n, uint32_t w, uint64_t *out) { return ps_for_packed_bytes(n, w, out) ? 0 : -1; }

/* Howard Hinnant's days_from_civil / civil_from_days. */
int64_t days_from_civil(int64_t y, int m, int d) {
  y -= m <= 2;
  const int64_t era = (y >= 0 ? y : y - 399) / 400;
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

void civil_from_days(int64_t z, int64_t *y, int *m, int *d) {
  z += 719468;
  const int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *d = (int)(doy - (153 * mp + 2) / 5 + 1);
  *m = (int)(mp < 10 ? mp + 3 : mp - 9);
  *y = yoe + era * 400 + (*m <= 2);
}

static int is_digit(char c) { return c >= '0' && c <= '9'; }

int parse_date(const char *s, size_t len, int32_t *days) {
  if (len != 10 || s[4] != '-' || s[7] != '-') return -1;
  for (int i = 0; i < 10; i++)
    if (i != 4 && i != 7 && !is_digit(s[i])) return -1;
  int y = (s[0] - '0') * 1000 + (s[1] - '0') * 100 + (s[2] - '0') * 10 + (s[3] - '0');
  int m = (s[5] - '0') * 10 + (s[6] - '0');
  int d = (s[8] - '0') * 10 + (s[9] - '0');
  static const int mdays[12] = {31, 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31};
  if (m < 1 || m > 12 || d < 1) return -1;
  int leap = (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
  int dim = mdays[m - 1] + (m == 2 && leap);
  if (d > dim) return -1;
  *days = (int32_t)days_from_civil(y, m, d);
  return 0;
}

/* Reads exactly n digits at s[*i]; -1 if any is not a digit. */
static int digits_at(const char *s, size_t len, size_t *i, int n, int *out) {
  int v = 0;
  if (*i + (size_t)n > len) return -1;
  for (int k = 0; k < n; k++) {
    char c = s[*i + (size_t)k];
    if (c < '0' || c > '9') return -1;
    v = v * 10 + (c - '0');
  }
  *i += (size_t)n;
  *out = v;
  return 0;
}

/* "hh:mm[:ss[.f{1,9}]]" at s[*i]: seconds since midnight and nanoseconds. */
static int clock_at(const char *s, size_t len, size_t *i, int64_t *sec, int32_t *ns, int *digits) {
  int h, m, sc = 0;
  if (digits_at(s, len, i, 2, &h) || *i >= len || s[*i] != ':') return -1;
  (*i)++;
  if (digits_at(s, len, i, 2, &m)) return -1;
  *digits = 0;
  *ns = 0;
  if (*i < len && s[*i] == ':') {
    (*i)++;
    if (digits_at(s, len, i, 2, &sc)) return -1;
    if (*i < len && s[*i] == '.') {
      (*i)++;
      int32_t f = 0;
      int k = 0;
      while (*i < len && s[*i] >= '0' && s[*i] <= '9') {
        if (k == 9) return -1;
        f = f * 10 + (s[*i] - '0');
        k++;
        (*i)++;
      }
      if (k == 0) return -1;
      *digits = k;
      for (int r = k; r < 9; r++) f *= 10;
      *ns = f;
    }
  }
  if (h > 23 || m > 59 || sc > 59) return -1;
  *sec = (int64_t)h * 3600 + m * 60 + sc;
  return 0;
}

int parse_timestamp(const char *s, size_t len, int64_t *sec, int32_t *ns, int *digits, int *date_only) {
  int32_t days;
  if (len < 10 || parse_date(s, 10, &days)) return -1;
  int64_t t = (int64_t)days * 86400;
  int32_t f = 0;
  int dg = 0;
  if (date_only) *date_only = len == 10;
  if (len > 10) {
    if (s[10] != ' ' && s[10] != 'T' && s[10] != 't') return -1;
    size_t i = 11;
    int64_t c;
    if (clock_at(s, len, &i, &c, &f, &dg)) return -1;
    t += c;
    if (i < len && (s[i] == 'Z' || s[i] == 'z') && i + 1 == len) {
      i++;
    } else if (i < len && (s[i] == '+' || s[i] == '-')) {
      int sign = s[i] == '-' ? -1 : 1, zh, zm = 0;
      i++;
      if (digits_at(s, len, &i, 2, &zh)) return -1;
      if (i < len && s[i] == ':') i++;
      if (i < len && digits_at(s, len, &i, 2, &zm)) return -1;
      if (zh > 23 || zm > 59) return -1;
      /* 07:53+02:00 is 05:53 UTC. */
      t -= sign * ((int64_t)zh * 3600 + zm * 60);
    }
    if (i != len) return -1;
  }
  *sec = t;
  *ns = f;
  *digits = dg;
  return 0;
}

int parse_time(const char *s, size_t len, int64_t *sec, int32_t *ns, int *digits) {
  size_t i = 0;
  if (clock_at(s, len, &i, sec, ns, digits) || i != len) return -1;
  return 0;
}

int time_to_units(int64_t sec, int32_t ns, int digits, int64_t *out) {
  int64_t per = (int64_t)pow10_u64(digits), sub = (int64_t)pow10_u64(9 - digits), v;
  if (__builtin_mul_overflow(sec, per, &v) || __builtin_add_overflow(v, ns / sub, &v)) return -1;
  *out = v;
  return ns % sub ? 1 : 0;
}

static void split_units(int64_t v, int digits, int64_t *sec, int64_t *frac) {
  int64_t per = (int64_t)pow10_u64(digits);
  *sec = v / per;
  *frac = v % per;
  if (*frac < 0) { /* floor: before 1970 the fraction still counts forward */
    *frac += per;
    (*sec)--;
  }
}

void format_timestamp(int64_t v, int digits, char out[48]) {
  int64_t sec, frac;
  split_units(v, digits, &sec, &frac);
  int64_t days = sec / 86400, rem = sec % 86400;
  if (rem < 0) {
    rem += 86400;
    days--;
  }
  char d[32];
  format_date(days, d);
  int n = snprintf(out, 48, "%s %02d:%02d:%02d", d, (int)(rem / 3600), (int)(rem / 60 % 60), (int)(rem % 60));
  if (digits > 0 && n > 0 && n < 48) snprintf(out + n, 48 - (size_t)n, ".%0*lld", digits, (long long)frac);
}

void format_time(int64_t v, int digits, char out[48]) {
  int64_t sec, frac;
  split_units(v, digits, &sec, &frac);
  if (sec < 0 || sec >= 86400) { /* not a time of day: show the number */
    snprintf(out, 48, "%lld", (long long)v);
    return;
  }
  int n = snprintf(out, 48, "%02d:%02d:%02d", (int)(sec / 3600), (int)(sec / 60 % 60), (int)(sec % 60));
  if (digits > 0 && n > 0 && n < 48) snprintf(out + n, 48 - (size_t)n, ".%0*lld", digits, (long long)frac);
}

void format_date(int64_t days, char out[32]) {
  int64_t y;
  int m, d;
  /* Keep the arithmetic far from overflow for hostile values. */
  if (days > INT64_C(1) << 40 || days < -(INT64_C(1) << 40)) {
    snprintf(out, 32, "%lld", (long long)days);
    return;
  }
  civil_from_days(days, &y, &m, &d);
  if (y >= 0 && y <= 9999)
    snprintf(out, 32, "%04lld-%02d-%02d", (long long)y, m, d);
  else
    snprintf(out, 32, "%+lld-%02d-%02d", (long long)y, m, d);
}

int parse_int64(const char *s, size_t len, int64_t *v) {
  size_t i = 0;
  int neg = 0;
  if (i < len && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  if (i == len) return -1;
  uint64_t mag = 0;
  for (; i < len; i++) {
    if (!is_digit(s[i])) return -1;
    unsigned dg = (unsigned)(s[i] - '0');
    if (mag > (UINT64_MAX - dg) / 10) return -1;
    mag = mag * 10 + dg;
  }
  if (neg) {
    if (mag > (uint64_t)INT64_MAX + 1) return -1;
    *v = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
  } else {
    if (mag > (uint64_t)INT64_MAX) return -1;
    *v = (int64_t)mag;
  }
  return 0;
}

uint64_t pow10_u64(int k) {
  uint64_t p = 1;
  for (int i = 0; i < k && i < 19; i++) p *= 10;
  return p;
}

int parse_decimal(const char *s, size_t len, int64_t *mantissa, int *scale) {
  size_t i = 0;
  int neg = 0, digits = 0, frac = 0, dot = 0;
  if (i < len && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  uint64_t mag = 0;
  for (; i < len; i++) {
    char c = s[i];
    if (c == '.') {
      if (dot) return -1;
      dot = 1;
      continue;
    }
    if (!is_digit(c)) return -1;
    unsigned dg = (unsigned)(c - '0');
    if (mag > (UINT64_MAX - dg) / 10) return -1;
    mag = mag * 10 + dg;
    digits++;
    if (dot) frac++;
  }
  if (digits == 0 || frac > 18) return -1;
  if (neg) {
    if (mag > (uint64_t)INT64_MAX + 1) return -1;
    *mantissa = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
  } else {
    if (mag > (uint64_t)INT64_MAX) return -1;
    *mantissa = (int64_t)mag;
  }
  *scale = frac;
  return 0;
}

int parse_decimal_exp(const char *s, size_t len, int64_t *mantissa, int *scale) {
  size_t e = 0;
  while (e < len && s[e] != 'e' && s[e] != 'E') e++;
  if (e == len) return parse_decimal(s, len, mantissa, scale);
  int64_t m, x;
  int sc;
  if (parse_decimal(s, e, &m, &sc) || e + 1 >= len || len - e - 1 > 4 || parse_int64(s + e + 1, len - e - 1, &x) ||
      x > 40 || x < -40)
    return -1;
  int64_t ns = (int64_t)sc - x;
  if (ns > 18) return -1;
  if (ns < 0) {
    if (rescale_decimal(m, 0, (int)-ns, &m)) return -1;
    ns = 0;
  }
  *mantissa = m;
  *scale = (int)ns;
  return 0;
}

int rescale_decimal(int64_t m, int from, int to, int64_t *out) {
  if (to < from || to - from > 18) return -1;
  int64_t p = (int64_t)pow10_u64(to - from);
  if (m > 0 && m > INT64_MAX / p) return -1;
  if (m < 0 && m < INT64_MIN / p) return -1;
  *out = m * p;
  return 0;
}

void format_double(double d, char out[48]) {
  for (int prec = 1; prec <= 17; prec++) {
    snprintf(out, 48, "%.*g", prec, d);
    if (strtod(out, NULL) == d || d != d) return;
  }
}

void format_decimal(int64_t m, int scale, char out[48]) {
  if (scale <= 0 || scale > 19) {
    snprintf(out, 48, "%lld", (long long)m);
    return;
  }
  uint64_t mag = m < 0 ? (uint64_t)0 - (uint64_t)m : (uint64_t)m;
  uint64_t p = pow10_u64(scale > 19 ? 19 : scale);
  uint64_t ip = mag / p, fp = mag % p;
  snprintf(out, 48, "%s%llu.%0*llu", m < 0 ? "-" : "", (unsigned long long)ip, scale,
           (unsigned long long)fp);
}

double now_seconds(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

void format_bytes(uint64_t bytes, char out[32]) {
  static const char *units[] = {"B", "KB", "MB", "GB", "TB", "PB", "EB"};
  double v = (double)bytes;
  int u = 0;
  while (v >= 1000.0 && u < 6) {
    v /= 1000.0;
    u++;
  }
  if (u == 0)
    snprintf(out, 32, "%llu B", (unsigned long long)bytes);
  else
    snprintf(out, 32, "%.1f %s", v, units[u]);
}

void format_ratio(uint64_t plain, uint64_t stored, char out[32]) {
  if (stored == 0) {
    snprintf(out, 32, "-");
    return;
  }
  double r = (double)plain / (double)stored;
  if (r >= 100)
    snprintf(out, 32, "%.0fx", r);
  else if (r >= 1)
    snprintf(out, 32, "%.1fx", r);
  else if (r >= 0.001)
    snprintf(out, 32, "%.2gx", r);
  else
    snprintf(out, 32, "<0.001x");
}
