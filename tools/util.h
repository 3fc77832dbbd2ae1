/* Small helpers shared by the packscan command: growable buffers, error
 * messages, dates, exact number parsing, clocks. No dependency on the library. */
#ifndef PSTOOL_UTIL_H
#define PSTOOL_UTIL_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

/* Size of the error-message buffers passed around the tool. Messages are
 * formatted with vsnprintf, so a longer message is truncated, never overflows. */
#define TOOL_ERR_SIZE 1024

#if defined(__GNUC__)
#define TOOL_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define TOOL_PRINTF(a, b)
#endif

/* Writes a formatted message into err (size bytes, always NUL-terminated).
 * err may be NULL. Returns -1 so that callers can `return set_err(...)`. */
int set_err(char *err, size_t size, const char *fmt, ...) TOOL_PRINTF(3, 4);

/* A growable byte buffer. Every size computation checks for overflow. */
typedef struct tbuf {
  unsigned char *p;
  size_t len;
  size_t cap;
} tbuf;

int tbuf_reserve(tbuf *b, size_t extra); /* 0 ok, -1 out of memory / overflow */
int tbuf_append(tbuf *b, const void *src, size_t n);
int tbuf_putc(tbuf *b, int c);
int tbuf_printf(tbuf *b, const char *fmt, ...) TOOL_PRINTF(2, 3);
void tbuf_free(tbuf *b);

/* Overflow-checked arithmetic on sizes: 0 ok, -1 overflow. */
int add_u64(uint64_t a, uint64_t b, uint64_t *out);
int mul_u64(uint64_t a, uint64_t b, uint64_t *out);

/* ceil(n * w / 8) without overflowing for any n < 2^64, w <= 64; -1 if the
 * result does not fit in 64 bits. */
int packed_bytes(uint64_t n, uint32_t w, uint64_t *out);

/* Dates: days since 1970-01-01 in the proleptic Gregorian calendar. */
int64_t days_from_civil(int64_t y, int m, int d);
void civil_from_days(int64_t days, int64_t *y, int *m, int *d);
/* Strict "yyyy-mm-dd" (four-digit year, valid day of month). 0 ok, -1 not a date. */
int parse_date(const char *s, size_t len, int32_t *days);
/* Writes "yyyy-mm-dd" (or a signed/extended year outside 0..9999). */
void format_date(int64_t days, char out[32]);

/* Timestamps and times of day. A point in time is (seconds since
 * 1970-01-01 00:00:00, nanoseconds 0..999999999); a time of day is the same
 * pair counted from midnight. Without a zone, a timestamp is taken as UTC.
 *
 * parse_timestamp: "yyyy-mm-dd", "yyyy-mm-dd hh:mm", "yyyy-mm-dd hh:mm:ss",
 * with 'T' instead of the space, up to 9 fraction digits after the seconds
 * ("...:ss.123"), and an optional zone "Z", "+hh", "+hh:mm" or "+hhmm" (the
 * value is moved to UTC). *digits is the number of fraction digits written
 * (0 without), *date_only is set when only a date was given (may be NULL).
 * parse_time: "hh:mm", "hh:mm:ss", "hh:mm:ss.fffffffff", 00:00 to 23:59:59.
 * 0 ok, -1 not one. */
int parse_timestamp(const char *s, size_t len, int64_t *sec, int32_t *ns, int *digits, int *date_only);
int parse_time(const char *s, size_t len, int64_t *sec, int32_t *ns, int *digits);
/* The value in units of 10^-digits seconds (digits 0, 3, 6 or 9): 0 ok and
 * exact, 1 ok but rounded down (the value lies between *out and *out + 1),
 * -1 out of the int64 range. */
int time_to_units(int64_t sec, int32_t ns, int digits, int64_t *out);
/* Text of v units of 10^-digits seconds: "yyyy-mm-dd hh:mm:ss[.fff]" and
 * "hh:mm:ss[.fff]" (the fraction with `digits` digits). */
void format_timestamp(int64_t v, int digits, char out[48]);
void format_time(int64_t v, int digits, char out[48]);

/* Integers: optional sign, decimal digits, must fit int64. 0 ok, -1 otherwise. */
int parse_int64(const char *s, size_t len, int64_t *v);
/* Exact decimals: [+-]digits[.digits] (".5" and "5." accepted). *mantissa is the
 * value times 10^*scale, *scale the number of fraction digits (<= 18).
 * 0 ok, -1 not a decimal or does not fit in int64. */
int parse_decimal(const char *s, size_t len, int64_t *mantissa, int *scale);
/* The same with an optional exponent ("1e5", "-2.5E-3"): the exact value as
 * mantissa / 10^scale (scale 0..18). 0 ok, -1 not one or does not fit. */
int parse_decimal_exp(const char *s, size_t len, int64_t *mantissa, int *scale);
/* Rescales a mantissa from scale `from` to scale `to` (to >= from). 0 ok, -1 overflow. */
int rescale_decimal(int64_t m, int from, int to, int64_t *out);
/* Writes m / 10^scale exactly ("-12.50" for m = -1250, scale 2). */
void format_decimal(int64_t m, int scale, char out[48]);
/* The shortest text that reads back as d ("0.1", "-0", "1e+300", "inf"). */
void format_double(double d, char out[48]);
/* 10^k for k in 0..19 as uint64. */
uint64_t pow10_u64(int k);

/* Monotonic clock in seconds. */
double now_seconds(void);

/* Human-readable byte size ("12.3 MB") into out. */
void format_bytes(uint64_t bytes, char out[32]);
/* Compression ratio plain/stored with the digits that matter: "5.5x",
 * "0.021x" (stored larger than plain), "-" when nothing is stored. */
void format_ratio(uint64_t plain, uint64_t stored, char out[32]);

#endif
