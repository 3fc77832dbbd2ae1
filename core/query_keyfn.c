/* GROUP BY keys that are functions of a date or timestamp column
 * (ps_key_fn): their lowering to the kernel's key function
 * (ps_query_program.h), the host's ordinals (the reference backend's and the
 * lowering's) and the key values of the ordinals (results). */
#include <inttypes.h>
#include <string.h>

#include "query.h"

static int64_t fdiv(int64_t a, int64_t d) { return a / d - (a % d < 0); }
static int64_t fmod_(int64_t a, int64_t d) { return a % d + (a % d < 0 ? d : 0); }

/* Howard Hinnant's days_from_civil and civil_from_days (proleptic
 * Gregorian, days since 1970-01-01). */
static int64_t days_from_civil(int64_t y, int64_t m, int64_t d) {
  y -= m <= 2;
  const int64_t era = fdiv(y, 400);
  const int64_t yoe = y - era * 400;
  const int64_t doy = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + d - 1;
  const int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

static void civil_from_days(int64_t days, int64_t *y, int64_t *m, int64_t *d) {
  const int64_t z = days + 719468;
  const int64_t era = fdiv(z, 146097);
  const int64_t doe = z - era * 146097;
  const int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const int64_t mp = (5 * doy + 2) / 153;
  *d = doy - (153 * mp + 2) / 5 + 1;
  *m = mp < 10 ? mp + 3 : mp - 9;
  *y = yoe + era * 400 + (*m <= 2);
}

int64_t ps_key_ordinal(uint32_t op, int64_t unit, int64_t arg, int64_t v) {
  if (op == PS_QKEY_FLOOR) { /* in 128 bits: v - arg cannot wrap */
    const ps_i128 x = (ps_i128)v - arg;
    return (int64_t)(x / unit - (x % unit < 0));
  }
  if (op == PS_QKEY_MOD) return fmod_(v, arg) / unit;
  const int64_t days = fdiv(v, unit);
  if (op == PS_QKEY_DOW) return fmod_(days + 4, 7);
  int64_t y, m, d;
  civil_from_days(days, &y, &m, &d);
  switch (op) {
    case PS_QKEY_MONTHS:
      return y * 12 + m - 1;
    case PS_QKEY_QUARTERS:
      return y * 4 + (m - 1) / 3;
    case PS_QKEY_YEAR:
      return y;
    case PS_QKEY_MONTH:
      return m;
    case PS_QKEY_QUARTER:
      return (m - 1) / 3 + 1;
    case PS_QKEY_DAY:
      return d;
    default:
      return days - days_from_civil(y, 1, 1) + 1; /* PS_QKEY_DOY */
  }
}

ps_i128 ps_key_fn_value(uint32_t fn, const ps_qkeyfn *f, int64_t ordinal) {
  switch (fn) {
    case PS_KEY_TRUNC_SECOND:
    case PS_KEY_TRUNC_MINUTE:
    case PS_KEY_TRUNC_HOUR:
    case PS_KEY_TRUNC_DAY:
    case PS_KEY_TRUNC_WEEK:
      return (ps_i128)ordinal * f->unit + f->arg;
    case PS_KEY_TRUNC_MONTH:
      return (ps_i128)days_from_civil(fdiv(ordinal, 12), fmod_(ordinal, 12) + 1, 1) * f->unit;
    case PS_KEY_TRUNC_QUARTER:
      return (ps_i128)days_from_civil(fdiv(ordinal, 4), fmod_(ordinal, 4) * 3 + 1, 1) * f->unit;
    case PS_KEY_TRUNC_YEAR:
      return (ps_i128)days_from_civil(ordinal, 1, 1) * f->unit;
    default:
      return ordinal;
  }
}

/* GROUP BY functions of a date or timestamp key (ps_key_fn): the kernel's
 * key function (ps_query_program.h) and the range of its ordinals over the
 * column's values M .. M + its largest code. */
static const char *const key_fn_names[] = {"value",
                                           "date_trunc('second')",
                                           "date_trunc('minute')",
                                           "date_trunc('hour')",
                                           "date_trunc('day')",
                                           "date_trunc('week')",
                                           "date_trunc('month')",
                                           "date_trunc('quarter')",
                                           "date_trunc('year')",
                                           "year",
                                           "quarter",
                                           "month",
                                           "day",
                                           "hour",
                                           "minute",
                                           "second",
                                           "dow",
                                           "doy"};

ps_status ps_query_key_fn_lower(ps_context *ctx, const ps_column *c, uint32_t k, uint32_t fn, int64_t day_units,
                                ps_qkeyfn *f, uint64_t *domain) {
  memset(f, 0, sizeof *f);
  if (fn > PS_KEY_DOY)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "desc->key_fn[%" PRIu32 "] is %" PRIu32 "; expected PS_KEY_*", k,
                        fn);
  const char *name = key_fn_names[fn];
  if (c->type != PS_TYPE_INT32 && c->type != PS_TYPE_INT64 && c->type != PS_TYPE_INT16 && c->type != PS_TYPE_INT8)
    return ps_set_error(ctx, PS_ERR_TYPE_MISMATCH,
                        "GROUP BY key %" PRIu32
                        " is %s of an %s column; it takes a signed integer (date or "
                        "timestamp) column",
                        k, name, ps_type_name(c->type));
  const int64_t day = 86400;
  const bool sub_day = fn <= PS_KEY_TRUNC_HOUR || (fn >= PS_KEY_HOUR && fn <= PS_KEY_SECOND);
  if (day_units < 1 || (sub_day && day_units % day != 0))
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "desc->key_day_units[%" PRIu32 "] is %" PRId64 "; %s needs %s", k,
                        day_units, name, sub_day ? "a positive multiple of 86400 (a timestamp)" : "a positive count");
  const int64_t sec = sub_day ? day_units / day : 0;
  switch (fn) {
    case PS_KEY_TRUNC_SECOND:
      f->op = PS_QKEY_FLOOR, f->unit = sec;
      break;
    case PS_KEY_TRUNC_MINUTE:
      f->op = PS_QKEY_FLOOR, f->unit = 60 * sec;
      break;
    case PS_KEY_TRUNC_HOUR:
      f->op = PS_QKEY_FLOOR, f->unit = 3600 * sec;
      break;
    case PS_KEY_TRUNC_DAY:
      f->op = PS_QKEY_FLOOR, f->unit = day_units;
      break;
    case PS_KEY_TRUNC_WEEK: /* weeks start on Monday, 1970-01-05 (day 4) */
      if (day_units > INT64_MAX / 7) break;
      f->op = PS_QKEY_FLOOR, f->unit = 7 * day_units, f->arg = 4 * day_units;
      break;
    case PS_KEY_TRUNC_MONTH:
      f->op = PS_QKEY_MONTHS, f->unit = day_units;
      break;
    case PS_KEY_TRUNC_QUARTER:
      f->op = PS_QKEY_QUARTERS, f->unit = day_units;
      break;
    case PS_KEY_TRUNC_YEAR:
    case PS_KEY_YEAR:
      f->op = PS_QKEY_YEAR, f->unit = day_units;
      break;
    case PS_KEY_QUARTER:
      f->op = PS_QKEY_QUARTER, f->unit = day_units, f->base = 1, *domain = 4;
      break;
    case PS_KEY_MONTH:
      f->op = PS_QKEY_MONTH, f->unit = day_units, f->base = 1, *domain = 12;
      break;
    case PS_KEY_DAY:
      f->op = PS_QKEY_DAY, f->unit = day_units, f->base = 1, *domain = 31;
      break;
    case PS_KEY_DOW:
      f->op = PS_QKEY_DOW, f->unit = day_units, *domain = 7;
      break;
    case PS_KEY_DOY:
      f->op = PS_QKEY_DOY, f->unit = day_units, f->base = 1, *domain = 366;
      break;
    case PS_KEY_HOUR:
      f->op = PS_QKEY_MOD, f->unit = 3600 * sec, f->arg = day_units, *domain = 24;
      break;
    case PS_KEY_MINUTE:
      f->op = PS_QKEY_MOD, f->unit = 60 * sec, f->arg = 3600 * sec, *domain = 60;
      break;
    case PS_KEY_SECOND:
      f->op = PS_QKEY_MOD, f->unit = sec, f->arg = 60 * sec, *domain = 60;
      break;
    default:
      break;
  }
  if (f->op == PS_QKEY_CODE)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "desc->key_day_units[%" PRIu32 "] is %" PRId64 "; too large", k,
                        day_units);
  /* The column's values: M .. M + its largest code (its width's, or the
   * code limit's where smaller). */
  const int64_t lo = (int64_t)c->reference.u;
  uint64_t max_code = c->no_codes                               ? 0
                      : c->code_limit < ps_width_mask(c->width) ? c->code_limit
                                                                : ps_width_mask(c->width);
  if (c->zones) { /* the largest code of a block with valid rows, where smaller */
    uint64_t zmax = 0;
    for (uint64_t b = 0; b < c->zones->blocks; b++)
      if (!(c->zones->flags[b] & PS_ZONE_ALL_NULL) && c->zones->max[b] > zmax) zmax = c->zones->max[b];
    if (zmax < max_code) max_code = zmax;
  }
  const int64_t hi = (ps_i128)lo + (ps_i128)max_code > INT64_MAX ? INT64_MAX : (int64_t)((ps_i128)lo + max_code);
  const int64_t lim = (int64_t)1 << 40;
  if (f->op != PS_QKEY_FLOOR && f->op != PS_QKEY_MOD &&
      (lo / day_units <= -lim || lo / day_units >= lim || hi / day_units >= lim))
    return ps_set_error(ctx, PS_ERR_LIMIT,
                        "GROUP BY key %" PRIu32 ": %s of values %" PRId64 " .. %" PRId64 " at %" PRId64
                        " a day reaches past 2^40 days",
                        k, name, lo, hi, day_units);
  if (f->op == PS_QKEY_FLOOR || f->op == PS_QKEY_MONTHS || f->op == PS_QKEY_QUARTERS || f->op == PS_QKEY_YEAR) {
    f->base = ps_key_ordinal(f->op, f->unit, f->arg, lo);
    const int64_t top = ps_key_ordinal(f->op, f->unit, f->arg, hi);
    *domain = (uint64_t)((ps_i128)top - f->base + 1 > (ps_i128)UINT64_MAX / 2 ? UINT64_MAX / 2
                                                                              : (uint64_t)(top - f->base + 1));
  }
  if (*domain <= PS_QUERY_MAX_GROUPS) f->values = (uint32_t)*domain;
  *domain += c->validity.handle != NULL;
  if (*domain > PS_QUERY_MAX_GROUPS)
    return ps_set_error(ctx, PS_ERR_LIMIT,
                        "GROUP BY key %" PRIu32 " (%s of an %s column, values %" PRId64 " .. %" PRId64 ") has %" PRIu64
                        " possible keys; at most %d groups are supported",
                        k, name, ps_type_name(c->type), lo, hi, *domain, PS_QUERY_MAX_GROUPS);
  return PS_OK;
}
