/* SELECT's date functions (date_trunc, extract, date_part, year()...) as
 * GROUP BY keys on one backend: hand-checked answers on dates and timestamps
 * in ms and ns around 1970, leap days (1968, 2000) and a non-leap century
 * (1900), a week and a year that cross a year boundary, NULLs; HAVING,
 * ORDER BY and LIMIT over such keys; two keys; COUNT(DISTINCT x) (NULLs not
 * counted); binding errors with their positions and the library's limit on
 * the groups. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "select_run.h"
#include "tool_test.h"

int failures;
unsigned long long seed;

static const char *const csv =
    "d,ts,ts9,x,s,k\n"
    "1969-12-31,1969-12-31 23:59:59.999,1969-12-31 23:59:59.999999999,1,a,1\n"
    "1970-01-01,1970-01-01 00:00:00,1970-01-01 00:00:00,2,b,1\n"
    "1968-02-29,1968-02-29 12:30:45,1968-02-29 12:30:45.5,4,c,2\n"
    "2000-02-29,2000-02-29 23:00:00,2000-02-29 23:00:00,8,d,2\n"
    "2000-03-01,2000-03-01 01:02:03,2000-03-01 01:02:03,16,e,3\n"
    "1900-03-01,1900-03-01 00:00:00,1900-03-01 00:00:00,32,f,\n"
    "2023-12-31,2024-01-01 00:00:00,2024-01-01 00:00:00,64,g,3\n"
    ",,,128,h,\n";

static void known_answers(ps_context *ctx) {
  uint8_t *file = NULL;
  tbl_table *t = test_make_table(csv, "d:date,ts:timestamp(3),ts9:timestamp(9),x:int,s:string,k:int", &file);
  CHECK(t != NULL, "the table");
  if (!t) return;
  static const struct {
    const char *name, *sql, *want;
  } cases[] = {
      {"year", "SELECT year(d), count(*), sum(x) GROUP BY year(d)",
       "year(d),count(*),sum(x)\n1900,1,32\n1968,1,4\n1969,1,1\n1970,1,2\n2000,2,24\n2023,1,64\n,1,128\n"},
      {"month of dates", "SELECT date_trunc('month', d) AS m, sum(x) GROUP BY date_trunc('month', d)",
       "m,sum(x)\n1900-03-01,32\n1968-02-01,4\n1969-12-01,1\n1970-01-01,2\n2000-02-01,8\n2000-03-01,16\n"
       "2023-12-01,64\n,128\n"},
      {"quarter of dates", "SELECT date_trunc('QUARTER', d), sum(x) GROUP BY DATE_TRUNC('quarter', d)",
       "\"date_trunc('QUARTER', d)\",sum(x)\n1900-01-01,32\n1968-01-01,4\n1969-10-01,1\n1970-01-01,2\n"
       "2000-01-01,24\n2023-10-01,64\n,128\n"},
      {"day of the year, leap years and 1900", "SELECT extract(doy FROM d), sum(x) GROUP BY date_part('doy', d)",
       "extract(doy FROM d),sum(x)\n1,2\n60,44\n61,16\n365,65\n,128\n"},
      {"day of the week (Sunday 0)", "SELECT dayofweek(d), sum(x) GROUP BY extract(dow FROM d)",
       "dayofweek(d),sum(x)\n0,64\n2,8\n3,17\n4,38\n,128\n"},
      {"weeks start on Monday, across years", "SELECT date_trunc('week', ts), sum(x) GROUP BY date_trunc('week', ts)",
       "\"date_trunc('week', ts)\",sum(x)\n1900-02-26 00:00:00.000,32\n1968-02-26 00:00:00.000,4\n"
       "1969-12-29 00:00:00.000,3\n2000-02-28 00:00:00.000,24\n2024-01-01 00:00:00.000,64\n,128\n"},
      {"hour and minute of ns before 1970", "SELECT hour(ts9), minute(ts9), sum(x) GROUP BY hour(ts9), minute(ts9)",
       "hour(ts9),minute(ts9),sum(x)\n0,0,98\n1,2,16\n12,30,4\n23,0,8\n23,59,1\n,,128\n"},
      {"second and quarter",
       "SELECT second(ts9), extract(quarter from d), sum(x) GROUP BY second(ts9), extract(quarter from d)",
       "second(ts9),extract(quarter from d),sum(x)\n0,1,42\n0,4,64\n3,1,16\n45,1,4\n59,4,1\n,,128\n"},
      {"day of a timestamp", "SELECT day(ts), sum(x) GROUP BY day(ts)", "day(ts),sum(x)\n1,114\n29,12\n31,1\n,128\n"},
      {"HAVING, ORDER BY, LIMIT",
       "SELECT year(d) AS y, sum(x) AS s GROUP BY year(d) HAVING s > 3 ORDER BY y DESC LIMIT 3",
       "y,s\n2023,64\n2000,24\n1968,4\n"},
      {"with a string key and WHERE",
       "SELECT date_trunc('year', ts), s, sum(x) WHERE x < 8 GROUP BY date_trunc('year', ts), s ORDER BY 1 DESC",
       "\"date_trunc('year', ts)\",s,sum(x)\n1970-01-01 00:00:00.000,b,2\n1969-01-01 00:00:00.000,a,1\n"
       "1968-01-01 00:00:00.000,c,4\n"},
      {"ORDER BY the function",
       "SELECT date_trunc('day', ts) AS day, sum(x) GROUP BY date_trunc('day', ts) "
       "ORDER BY date_trunc('day', ts) DESC LIMIT 2",
       "day,sum(x)\n2024-01-01 00:00:00.000,64\n2000-03-01 00:00:00.000,16\n"},
      {"a function and a column, ordered by the column", "SELECT s, year(d) GROUP BY year(d), s ORDER BY s LIMIT 2",
       "s,year(d)\na,1969\nb,1970\n"},
      {"WHERE year =", "SELECT count(*), sum(x) WHERE year(d) = 2000", "count(*),sum(x)\n2,24\n"},
      {"WHERE year BETWEEN, ns", "SELECT count(*), sum(x) WHERE year(ts9) BETWEEN 1968 AND 1970",
       "count(*),sum(x)\n3,7\n"},
      {"WHERE date_trunc = a month's start", "SELECT count(*), sum(x) WHERE date_trunc('month', d) = DATE '2000-02-01'",
       "count(*),sum(x)\n1,8\n"},
      {"WHERE date_trunc = no month's start",
       "SELECT count(*), sum(x) WHERE date_trunc('month', d) = DATE '2000-02-02'", "count(*),sum(x)\n0,\n"},
      {"WHERE date_trunc >= a quoted date", "SELECT count(*), sum(x) WHERE date_trunc('month', ts) >= '2000-02-15'",
       "count(*),sum(x)\n2,80\n"},
      {"WHERE date_trunc < before 1970",
       "SELECT count(*), sum(x) WHERE date_trunc('day', ts) < TIMESTAMP '1970-01-01 00:00:00'",
       "count(*),sum(x)\n3,37\n"},
      {"WHERE date_trunc of ns, exact",
       "SELECT count(*), sum(x) WHERE date_trunc('hour', ts9) <= TIMESTAMP '1969-12-31 23:30:00'",
       "count(*),sum(x)\n3,37\n"},
      {"WHERE year <>, NULL not selected", "SELECT count(*), sum(x) WHERE year(d) <> 2000", "count(*),sum(x)\n5,103\n"},
      {"WHERE week >", "SELECT count(*), sum(x) WHERE date_trunc('week', ts) > DATE '1969-12-29'",
       "count(*),sum(x)\n3,88\n"},
      {"WHERE IS NULL", "SELECT count(*), sum(x) WHERE year(d) IS NULL", "count(*),sum(x)\n1,128\n"},
      {"WHERE NOT, AND", "SELECT count(*), sum(x) WHERE NOT year(d) < 1970 AND x > 1", "count(*),sum(x)\n4,90\n"},
      {"CASE WHEN on a date function", "SELECT sum(CASE WHEN year(d) >= 2000 THEN x ELSE 0 END)",
       "sum(CASE WHEN year(d) >= 2000 THEN x ELSE 0 END)\n88\n"},
      {"COUNT(DISTINCT) without GROUP BY", "SELECT count(DISTINCT s), count(DISTINCT d), count(*)",
       "count(DISTINCT s),count(DISTINCT d),count(*)\n8,7,8\n"},
      {"COUNT(DISTINCT) with WHERE", "SELECT count(DISTINCT d) WHERE x > 2 AND x < 100", "count(DISTINCT d)\n5\n"},
      {"COUNT(DISTINCT) per year in HAVING",
       "SELECT year(d), count(DISTINCT s) AS n GROUP BY year(d) HAVING count(DISTINCT s) > 1", "year(d),n\n2000,2\n"},
      {"COUNT(DISTINCT) over a wide key domain (a hashed GROUP BY)",
       "SELECT quarter(d), count(DISTINCT d) GROUP BY quarter(d)", "quarter(d),count(DISTINCT d)\n1,5\n4,2\n,0\n"},
      {"COUNT(DISTINCT) of NULLs is 0", "SELECT year(d), count(DISTINCT k) GROUP BY year(d)",
       "year(d),count(DISTINCT k)\n1900,0\n1968,1\n1969,1\n1970,1\n2000,2\n2023,1\n,0\n"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
    test_select_expect(ctx, t, cases[i].name, cases[i].sql, OUT_FORMAT_CSV, cases[i].want);
  static const struct {
    const char *sql, *want;
  } errors[] = {
      {"SELECT hour(d) GROUP BY hour(d)", "column 25: extract(hour) of column 'd': a date has no hour"},
      {"SELECT count(*) GROUP BY year(s)", "column 26: extract(year) takes a date or timestamp column"},
      {"SELECT count(*) GROUP BY date_trunc('fortnight', d)", "column 37: expected a part of date_trunc"},
      {"SELECT count(*) GROUP BY extract(epoch FROM d)", "column 34: expected a field"},
      {"SELECT sum(year(d))", "column 12: date functions inside an aggregate are not supported"},
      {"SELECT year(d), count(*) GROUP BY month(d)",
       "column 8: column 'd' is neither inside an aggregate nor in "
       "GROUP BY"},
      {"SELECT count(*) GROUP BY date_trunc('second', ts9)",
       "GROUP BY key 0 (date_trunc('second') of an int64 column, values -2203891200000000000 .. 1704067200000000000) "
       "has 3907958402 possible keys; at most 131072 groups"},
      {"SELECT count(*) WHERE month(d) = 6", "column 23: extract(month) in WHERE is not supported: it is not monotone"},
      {"SELECT count(*) WHERE year(d) = x", "column 23: a date function in WHERE compares with literals only"},
      {"SELECT count(*) WHERE year(d) = 1.5", "column 33: year(d) compares with a year"},
      {"SELECT count(*) WHERE date_trunc('hour', d) = '2000-01-01'", "date_trunc(hour) takes a timestamp column"},
  };
  for (size_t i = 0; i < sizeof errors / sizeof errors[0]; i++)
    test_select_error(ctx, t, errors[i].sql, errors[i].want);
  tbl_close(t);
  free(file);
}

int main(int argc, char **argv) {
  ps_context *ctx;
  const int started = test_start(argc, argv, &ctx);
  if (started) return started;
  known_answers(ctx);
  ps_context_destroy(ctx);
  return test_finish("date function", argv[1]);
}
