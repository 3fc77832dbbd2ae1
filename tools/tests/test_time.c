/* Dates, timestamps and times end to end on the backend named in argv[1]:
 * text forms (named cases), CSV inference of the type and unit, and seeded
 * random comparisons of literals of any precision against columns of every
 * unit, counted by the library and by an oracle that compares (seconds,
 * nanoseconds) pairs directly.
 *   usage: tool_test_time BACKEND [SEED]   (or PACKSCAN_SEED=<n>; default: a fresh seed) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encode.h"
#include "tool_test.h"
#include "query.h"

int failures;
unsigned long long seed;

static void named_text_forms(void) {
  int64_t sec;
  int32_t ns;
  int dg, date_only;
  CHECK(!parse_timestamp("2024-09-05 07:53:23", 19, &sec, &ns, &dg, &date_only) && sec == 1725522803 && ns == 0 &&
            dg == 0 && !date_only,
        "plain timestamp: %lld", (long long)sec);
  CHECK(!parse_timestamp("2024-09-05", 10, &sec, &ns, &dg, &date_only) && sec == 1725494400 && date_only, "date only");
  CHECK(!parse_timestamp("2024-09-05T07:53:23.5Z", 22, &sec, &ns, &dg, NULL) && sec == 1725522803 && ns == 500000000 &&
            dg == 1,
        "T, fraction, Z");
  CHECK(!parse_timestamp("2024-09-05T07:53:23+02:00", 25, &sec, &ns, &dg, NULL) && sec == 1725522803 - 7200,
        "zone +02:00");
  CHECK(!parse_timestamp("2024-09-05 07:53-0130", 21, &sec, &ns, &dg, NULL) && sec == 1725522780 + 5400,
        "no seconds, zone -0130");
  CHECK(!parse_timestamp("1969-12-31 23:59:59.999999999", 29, &sec, &ns, &dg, NULL) && sec == -1 && ns == 999999999 &&
            dg == 9,
        "before 1970");
  CHECK(!parse_timestamp("2024-02-29 00:00:00", 19, &sec, &ns, &dg, NULL), "leap day");
  static const char *const bad[] = {"2023-02-29 00:00:00",
                                    "2024-09-05 24:00:00",
                                    "2024-09-05 07:60",
                                    "2024-09-05 07:53:23.",
                                    "2024-09-05 07:53:23.1234567890",
                                    "2024-09-05 7:53",
                                    "2024-09-05X07:53",
                                    "2024-09-05 07:53:23 ",
                                    "2024-09-05 07:53:23+2",
                                    "2024-9-05",
                                    "",
                                    "07:53:23"};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++)
    CHECK(parse_timestamp(bad[i], strlen(bad[i]), &sec, &ns, &dg, NULL) != 0, "'%s' accepted as a timestamp", bad[i]);
  CHECK(!parse_time("23:59:59.25", 11, &sec, &ns, &dg) && sec == 86399 && ns == 250000000, "time");
  CHECK(!parse_time("00:00", 5, &sec, &ns, &dg) && sec == 0, "time hh:mm");
  CHECK(parse_time("24:00:00", 8, &sec, &ns, &dg) != 0 && parse_time("1:00", 4, &sec, &ns, &dg) != 0, "bad times");
  int64_t v;
  CHECK(time_to_units(-1, 999999999, 3, &v) == 1 && v == -1, "floor below zero: %lld", (long long)v);
  CHECK(time_to_units(1, 500000000, 3, &v) == 0 && v == 1500, "exact ms");
  CHECK(time_to_units(INT64_MAX / 1000, 0, 9, &v) == -1, "overflow");
  char out[48];
  format_timestamp(-1, 3, out);
  CHECK(!strcmp(out, "1969-12-31 23:59:59.999"), "format before 1970: %s", out);
  format_timestamp(1725522803123ll, 3, out);
  CHECK(!strcmp(out, "2024-09-05 07:53:23.123"), "format ms: %s", out);
  format_time(86399, 0, out);
  CHECK(!strcmp(out, "23:59:59"), "format time: %s", out);
}

static long long count_of(ps_context *ctx, const tbl_table *t, const char *q) {
  query_plan p;
  uint64_t c = 0;
  long long r = -1;
  FILE *devnull = fopen("/dev/null", "w");
  if (query_plan_build(ctx, t, q, strlen(q), &p, devnull ? devnull : stdout) == 0 &&
      ps_filter_count(ctx, p.expr, &c) == PS_OK)
    r = (long long)c;
  query_plan_free(&p);
  if (devnull) fclose(devnull);
  return r;
}

/* Inference: type and unit from the values; a date among timestamps is midnight. */
static void inference(ps_context *ctx) {
  const char *csv =
      "a,b,c,d\n"
      "2024-09-05 07:53:23,2024-09-05T07:53:23.5Z,07:53,2024-09-05\n"
      "2024-09-05,,23:59:59.000001,1999-01-01\n";
  uint8_t *file = NULL;
  tbl_table *t = test_make_table(csv, NULL, &file);
  CHECK(t != NULL, "inference table");
  if (!t) return;
  char ty[32];
  static const char *const want[] = {"timestamp", "timestamp(3)", "time(6)", "date"};
  for (uint32_t c = 0; c < 4; c++) {
    tbl_column_typename(&t->cols[c], ty);
    CHECK(!strcmp(ty, want[c]), "column %u inferred as %s, want %s", c, ty, want[c]);
  }
  CHECK(count_of(ctx, t, "a = '2024-09-05'") == 1, "date value in a timestamp column is midnight");
  CHECK(count_of(ctx, t, "a = DATE '2024-09-05' OR b = '2024-09-05 07:53:23.500'") == 2, "OR of exact literals");
  CHECK(count_of(ctx, t, "b = '2024-09-05 07:53:23.5000001'") == 0, "finer literal equals nothing");
  CHECK(count_of(ctx, t, "b IS NULL") == 1, "null timestamp");
  CHECK(count_of(ctx, t, "c > TIME '23:59:59'") == 1, "time with microseconds");
  CHECK(count_of(ctx, t, "c = '07:53:00'") == 1, "time text literal");
  CHECK(count_of(ctx, t, "a = 5") == -1 && count_of(ctx, t, "a < c") == -1 && count_of(ctx, t, "a = d") == -1,
        "mismatches refused");
  tbl_close(t);
  free(file);
}

typedef struct tpoint {
  int64_t sec;
  int32_t ns;
} tpoint;

static int tcmp(tpoint a, tpoint b) {
  if (a.sec != b.sec) return a.sec < b.sec ? -1 : 1;
  return a.ns < b.ns ? -1 : a.ns > b.ns;
}

/* A random point from a stored value's neighbourhood, truncated to `digits`. */
static tpoint near(tpoint v, int digits) {
  tpoint p = v;
  int64_t sub = 1;
  for (int k = digits; k < 9; k++) sub *= 10;
  switch (test_rnd() % 4) {
    case 0:
      break;
    case 1:
      p.ns = (int32_t)(test_rnd() % 1000000000);
      break;
    case 2:
      p.sec += (int64_t)(test_rnd() % 5) - 2;
      break;
    default:
      p.sec += (int64_t)(test_rnd() % 200001) - 100000;
      break;
  }
  p.ns = (int32_t)(p.ns - p.ns % sub);
  return p;
}

static void literal_text(tpoint p, int digits, int kind_time, char out[96]) {
  char base[48];
  if (kind_time)
    format_time(p.sec, 0, base);
  else
    format_timestamp(p.sec, 0, base);
  int64_t sub = 1;
  for (int k = digits; k < 9; k++) sub *= 10;
  const char *prefix = test_rnd() % 2 ? (kind_time ? "TIME " : "TIMESTAMP ") : "";
  if (digits)
    snprintf(out, 96, "%s'%s.%0*lld'", prefix, base, digits, (long long)(p.ns / sub));
  else
    snprintf(out, 96, "%s'%s'", prefix, base);
}

/* Random columns of each unit and of times; random literals of 0..9 digits. */
static void random_comparisons(ps_context *ctx, int rows) {
  static const int units[] = {0, 3, 6, 9};
  enum { NCOLS = 5 };
  tpoint *vals = malloc((size_t)(rows ? rows : 1) * NCOLS * sizeof *vals);
  int *valid = malloc((size_t)(rows ? rows : 1) * NCOLS * sizeof *valid);
  tbuf csv = {0};
  tbuf_printf(&csv, "u0,u3,u6,u9,tm\n");
  for (int r = 0; r < rows; r++) {
    for (int c = 0; c < NCOLS; c++) {
      tpoint v;
      int is_time = c == 4, unit = is_time ? 3 : units[c];
      int64_t sub = 1;
      for (int k = unit; k < 9; k++) sub *= 10;
      /* Few distinct seconds so that equal values occur. */
      v.sec = is_time ? (int64_t)(test_rnd() % 86400) : 1700000000 + (int64_t)(test_rnd() % 400) * 997 - 100000000;
      v.ns = (int32_t)(test_rnd() % 1000000000);
      v.ns = (int32_t)(v.ns - v.ns % sub);
      if (r == 0) v.ns = 0;                   /* at least one value without a fraction in every column */
      int ok = r == 0 || test_rnd() % 8 != 0; /* row 0 set: an all-null column would be inferred as int */
      vals[r * NCOLS + c] = v;
      valid[r * NCOLS + c] = ok;
      if (c) tbuf_putc(&csv, ',');
      if (ok) {
        char text[96];
        int64_t u;
        time_to_units(v.sec, v.ns, unit, &u);
        if (is_time)
          format_time(u, unit, text);
        else
          format_timestamp(u, unit, text);
        tbuf_printf(&csv, "%s", text);
      }
    }
    tbuf_putc(&csv, '\n');
  }
  tbuf_putc(&csv, 0);
  uint8_t *file = NULL;
  tbl_table *t = rows ? test_make_table((const char *)csv.p, NULL, &file) : NULL;
  CHECK(!rows || t != NULL, "random table of %d rows", rows);
  static const char *const opname[] = {"=", "!=", "<", "<=", ">", ">="};
  for (int iter = 0; t && iter < 300; iter++) {
    int c = (int)(test_rnd() % NCOLS), digits = (int)(test_rnd() % 10);
    static const char *const names[] = {"u0", "u3", "u6", "u9", "tm"};
    tpoint base = vals[(test_rnd() % (uint64_t)rows) * NCOLS + (uint64_t)c];
    tpoint lit = near(base, digits), hi = near(base, digits);
    if (c == 4 && (lit.sec < 0 || lit.sec >= 86400)) lit.sec = base.sec;
    if (c == 4 && (hi.sec < 0 || hi.sec >= 86400)) hi.sec = base.sec;
    char l1[96], l2[96], q[256];
    literal_text(lit, digits, c == 4, l1);
    literal_text(hi, digits, c == 4, l2);
    int form = (int)(test_rnd() % 8);
    long long want = 0;
    if (form < 6) {
      snprintf(q, sizeof q, "%s %s %s", names[c], opname[form], l1);
    } else if (form == 6) {
      snprintf(q, sizeof q, "%s BETWEEN %s AND %s", names[c], l1, l2);
    } else {
      snprintf(q, sizeof q, "%s IN (%s, %s)", names[c], l1, l2);
    }
    for (int r = 0; r < rows; r++) {
      if (!valid[r * NCOLS + c]) continue;
      int k = tcmp(vals[r * NCOLS + c], lit), k2 = tcmp(vals[r * NCOLS + c], hi);
      int sel = form == 0   ? k == 0
                : form == 1 ? k != 0
                : form == 2 ? k < 0
                : form == 3 ? k <= 0
                : form == 4 ? k > 0
                : form == 5 ? k >= 0
                : form == 6 ? (k >= 0 && k2 <= 0)
                            : (k == 0 || k2 == 0);
      want += sel;
    }
    long long got = count_of(ctx, t, q);
    CHECK(got == want, "%d rows: '%s': %lld rows, the oracle says %lld", rows, q, got, want);
  }
  tbl_close(t);
  free(file);
  tbuf_free(&csv);
  free(vals);
  free(valid);
}

int main(int argc, char **argv) {
  ps_context *ctx;
  const int started = test_start(argc, argv, &ctx);
  if (started) return started;
  named_text_forms();
  inference(ctx);
  static const int sizes[] = {1, 31, 33, 500};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) random_comparisons(ctx, sizes[i]);
  ps_context_destroy(ctx);
  return test_finish("time", argv[1]);
}
