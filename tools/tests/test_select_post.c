/* What a SELECT does after the library's aggregation (select_post.c): HAVING,
 * ORDER BY, LIMIT / OFFSET and values computed from aggregates (+ - * /, abs,
 * coalesce), on one backend. Hand-checked answers for the named edge cases
 * (ties, NULL keys and NULL values in both directions, negative decimals,
 * LIMIT 0, OFFSET past the end, HAVING that keeps nothing, Kleene logic,
 * decimals of different scales, division's rounding and division by zero,
 * bytewise string order), binding errors with their positions, then seeded
 * random statements checked against a model computed here from the
 * generated rows. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "select_run.h"
#include "tool_test.h"

int failures;
unsigned long long seed;

#define TYPES "g:int,s:string,x:int,y:decimal(2),dt:date"

/* Groups by g: 1 {x 10, -5; y 1.50, NULL}, 2 {x NULL, 3; y 2.25, 1.00},
 * 3 {x -1, 1; y -0.25, 0.25}, 4 {x 0; y 0.00}, NULL {x 7; y -0.75}. */
static const char *const small_csv =
    "g,s,x,y,dt\n"
    "1,kiwi,10,1.50,2024-01-01\n"
    "1,apple,-5,,2024-01-02\n"
    "2,kiwi,,2.25,2024-01-03\n"
    ",fig,7,-0.75,\n"
    "2,,3,1.00,2024-01-05\n"
    "3,Banana,-1,-0.25,2024-02-01\n"
    "3,\xc3\xa9\x63lair,1,0.25,2024-02-02\n"
    "4,apple,0,0.00,2024-03-01\n";

static void known_answers(ps_context *ctx) {
  uint8_t *file = NULL;
  tbl_table *t = test_make_table(small_csv, TYPES, &file);
  CHECK(t != NULL, "the small table");
  if (!t) return;
  static const struct {
    const char *name, *sql, *want;
  } cases[] = {
      {"ties keep key order", "SELECT g, count(*) AS n GROUP BY g ORDER BY n DESC", "g,n\n1,2\n2,2\n3,2\n4,1\n,1\n"},
      {"ties ascending", "SELECT g, count(*) AS n GROUP BY g ORDER BY n", "g,n\n4,1\n,1\n1,2\n2,2\n3,2\n"},
      {"NULL key last descending", "SELECT g GROUP BY g ORDER BY g DESC", "g\n4\n3\n2\n1\n\n"},
      {"NULL key first", "SELECT g GROUP BY g ORDER BY g NULLS FIRST", "g\n\n1\n2\n3\n4\n"},
      {"NULL key first descending", "SELECT g GROUP BY g ORDER BY g DESC NULLS FIRST", "g\n\n4\n3\n2\n1\n"},
      {"NULL value last", "SELECT g, sum(y) / sum(x) AS r GROUP BY g ORDER BY r DESC",
       "g,r\n2,1.083333\n1,0.300000\n,-0.107143\n3,\n4,\n"},
      {"negative decimals", "SELECT g, sum(y) AS sy GROUP BY g ORDER BY sy",
       "g,sy\n,-0.75\n3,0.00\n4,0.00\n1,1.50\n2,3.25\n"},
      {"LIMIT 0", "SELECT g, sum(x) GROUP BY g ORDER BY g LIMIT 0", "g,sum(x)\n"},
      {"OFFSET past the end", "SELECT g GROUP BY g ORDER BY g LIMIT 2 OFFSET 10", "g\n"},
      {"OFFSET into the NULL group", "SELECT g GROUP BY g ORDER BY g LIMIT 5 OFFSET 3", "g\n4\n\n"},
      {"LIMIT without ORDER BY: key order", "SELECT g GROUP BY g LIMIT 2", "g\n1\n2\n"},
      {"OFFSET alone", "SELECT g GROUP BY g OFFSET 4", "g\n\n"},
      {"HAVING keeps nothing", "SELECT g, count(*) GROUP BY g HAVING count(*) > 5", "g,count(*)\n"},
      {"HAVING without GROUP BY, false", "SELECT count(*) HAVING count(*) > 100", "count(*)\n"},
      {"HAVING without GROUP BY, true", "SELECT count(*) HAVING count(*) = 8", "count(*)\n8\n"},
      {"Kleene NOT of UNKNOWN", "SELECT g GROUP BY g HAVING NOT (min(dt) > '2024-01-02')", "g\n1\n"},
      {"Kleene OR with IS NULL", "SELECT g GROUP BY g HAVING min(dt) > DATE '2024-01-02' OR g IS NULL",
       "g\n2\n3\n4\n\n"},
      {"Kleene IN with NULL", "SELECT g GROUP BY g HAVING NOT (sum(x) IN (5, NULL))", "g\n"},
      {"NOT IN", "SELECT g GROUP BY g HAVING sum(x) NOT IN (5, 0)", "g\n2\n\n"},
      {"comparison with NULL", "SELECT g GROUP BY g HAVING sum(x) <> NULL OR sum(x) = NULL", "g\n"},
      {"decimals at other scales", "SELECT g GROUP BY g HAVING sum(y) = 3.2500 OR sum(y) = 0.000000000000000001",
       "g\n2\n"},
      {"decimal just below", "SELECT g GROUP BY g HAVING sum(y) > 1.499999999999999999", "g\n1\n2\n"},
      {"BETWEEN", "SELECT g GROUP BY g HAVING sum(y) BETWEEN -0.75 AND 0", "g\n3\n4\n\n"},
      {"NOT BETWEEN", "SELECT g GROUP BY g HAVING sum(y) NOT BETWEEN -0.75 AND 0", "g\n1\n2\n"},
      {"aggregate against aggregate", "SELECT g GROUP BY g HAVING sum(x) > sum(y)", "g\n1\n\n"},
      {"arithmetic in HAVING", "SELECT g GROUP BY g HAVING sum(y) * 4 = 13 OR (sum(x) + 1) * 2 = 12", "g\n1\n2\n"},
      {"division", "SELECT g, sum(x) / count(*) AS a, avg(x), sum(y) / sum(x) AS r, sum(x) / 3 GROUP BY g",
       "g,a,avg(x),r,sum(x) / 3\n"
       "1,2.500000,2.500000,0.300000,1.666667\n"
       "2,1.500000,3.000000,1.083333,1.000000\n"
       "3,0.000000,0.000000,,0.000000\n"
       "4,0.000000,0.000000,,0.000000\n"
       ",7.000000,7.000000,-0.107143,2.333333\n"},
      {"division rounds half away from zero", "SELECT g, (0 - sum(x)) / 2000000 AS q GROUP BY g",
       "g,q\n1,-0.000003\n2,-0.000002\n3,0.000000\n4,0.000000\n,-0.000004\n"},
      {"division at scale 6", "SELECT sum(y * 0.001) / count(*) AS q", "q\n0.000500\n"},
      {"division keeps a larger scale", "SELECT sum(y * 0.0000001) / count(*) AS q", "q\n0.000000050\n"},
      {"abs and coalesce", "SELECT g, abs(sum(y)), coalesce(sum(y) / sum(x), -1) AS c, -sum(y) GROUP BY g",
       "g,abs(sum(y)),c,-sum(y)\n1,1.50,0.300000,-1.50\n2,3.25,1.083333,-3.25\n3,0.00,-1.000000,0.00\n"
       "4,0.00,-1.000000,0.00\n,0.75,-0.107143,0.75\n"},
      {"strings bytewise, descending", "SELECT s, count(*) GROUP BY s ORDER BY s DESC",
       "s,count(*)\n\xc3\xa9\x63lair,1\nkiwi,2\nfig,1\napple,2\nBanana,1\n,1\n"},
      {"MIN/MAX of strings ordered", "SELECT g, max(s) AS m GROUP BY g ORDER BY m, g",
       "g,m\n4,apple\n,fig\n1,kiwi\n2,kiwi\n3,\xc3\xa9\x63lair\n"},
      {"string key in HAVING", "SELECT s GROUP BY s HAVING s >= 'b' AND s < 'l'", "s\nfig\nkiwi\n"},
      {"MIN of strings in HAVING", "SELECT g GROUP BY g HAVING min(s) IN ('apple', 'Banana')", "g\n1\n3\n4\n"},
      {"ORDER BY a hidden aggregate", "SELECT g GROUP BY g ORDER BY sum(y) DESC LIMIT 2", "g\n2\n1\n"},
      {"ORDER BY position", "SELECT g, sum(x) GROUP BY g ORDER BY 2 DESC, 1", "g,sum(x)\n,7\n1,5\n2,3\n3,0\n4,0\n"},
      {"an alias before a column", "SELECT g AS x, sum(x) AS g GROUP BY g ORDER BY g", "x,g\n3,0\n4,0\n2,3\n1,5\n,7\n"},
      {"an alias in HAVING", "SELECT g, sum(x) AS total GROUP BY g HAVING total >= 5", "g,total\n1,5\n,7\n"},
      {"ORDER BY an expression", "SELECT g GROUP BY g ORDER BY abs(sum(y) - 1) DESC, g", "g\n2\n\n3\n4\n1\n"},
      {"CASE over aggregates",
       "SELECT g, CASE WHEN sum(x) >= 5 THEN sum(y) WHEN sum(x) IS NULL THEN -1 ELSE 0.5 END AS c "
       "GROUP BY g",
       "g,c\n1,1.50\n2,0.50\n3,0.50\n4,0.50\n,-0.75\n"},
      {"CASE over aggregates: UNKNOWN takes ELSE",
       "SELECT g, CASE WHEN sum(y) / sum(x) > 1 THEN 1 ELSE 0 END AS c GROUP BY g", "g,c\n1,0\n2,1\n3,0\n4,0\n,0\n"},
      {"CASE over aggregates without ELSE, in ORDER BY",
       "SELECT g, CASE WHEN count(*) > 1 THEN sum(x) END AS c GROUP BY g "
       "ORDER BY c DESC NULLS FIRST, g",
       "g,c\n4,\n,\n1,5\n2,3\n3,0\n"},
      {"dates in HAVING and ORDER BY",
       "SELECT dt, count(*) GROUP BY dt HAVING dt BETWEEN DATE '2024-01-02' AND '2024-02-01' ORDER BY dt DESC",
       "dt,count(*)\n2024-02-01,1\n2024-01-05,1\n2024-01-03,1\n2024-01-02,1\n"},
      {"ungrouped", "SELECT sum(x) / count(*) AS m, count(*) ORDER BY 1 LIMIT 1", "m,count(*)\n1.875000,8\n"},
      {"two keys", "SELECT g, s, sum(x) GROUP BY g, s HAVING g IN (1, 2) ORDER BY s NULLS FIRST, g DESC",
       "g,s,sum(x)\n2,,3\n1,apple,-5\n2,kiwi,\n1,kiwi,10\n"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    test_select_expect(ctx, t, cases[i].name, cases[i].sql, OUT_FORMAT_CSV, cases[i].want);
  static const struct {
    const char *sql;
    const char *want; /* a substring of the message */
  } bad[] = {
      {"SELECT g, sum(x) GROUP BY g ORDER BY 3", "error at column 38: ORDER BY position 3 is not in the SELECT list"},
      {"SELECT g GROUP BY g HAVING x > 1", "error at column 28: column 'x' is neither inside an aggregate nor"},
      {"SELECT g GROUP BY g ORDER BY nope", "error at column 30: unknown column 'nope'"},
      {"SELECT s GROUP BY s HAVING s > 1", "error at column 32: a number is compared with a string"},
      {"SELECT s GROUP BY s HAVING max(dt) > 'x'", "error at column 38: 'x' is not a date"},
      {"SELECT max(s) + 1", "error at column 8: arithmetic takes numbers, and this is a string"},
      {"SELECT min(dt) / 2", "error at column 8: arithmetic takes numbers, and this is a date"},
      {"SELECT g, coalesce(max(s), 'none') GROUP BY g", "error at column 11: a computed SELECT item must be a number"},
      {"SELECT sum(y * 0.000000000000000001) * sum(y * 0.000000000000000001)",
       "error at column 8: the product's scale 40 is past 38"},
      {"SELECT sum(x * 100000000000000000) * sum(x * 100000000000000000) * sum(x * 100000000000000000)",
       "PS_ERR_OVERFLOW: the value of 'sum(x * 100000000000000000) * sum(x * 100000000000000000) * sum(x * "},
      {"SELECT g GROUP BY g HAVING sum(x)", "error at column 28: HAVING needs a condition, and this is a number"},
      {"SELECT g GROUP BY g HAVING min(dt) > TIMESTAMP '2024-01-01 00:00:00'",
       "error at column 38: a TIMESTAMP is compared with a date"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) test_select_error(ctx, t, bad[i].sql, bad[i].want);
  tbl_close(t);
  free(file);
}

/* ---- seeded random statements against a model ---- */

typedef struct grp {
  int present;  /* has rows */
  long long n;  /* COUNT(*) */
  long long sx; /* SUM(x), x an integer */
  long long nx; /* COUNT(x) */
  long long sy; /* SUM(y) in hundredths */
  long long ny; /* COUNT(y) */
} grp;

/* Key -3..3 at index 0..6, NULL at 7 (the library's order). */
#define NKEYS 8

typedef struct mrow {
  int key;       /* index */
  __int128 v[3]; /* the ORDER BY / HAVING values: sx, sy (scale 2), sy / n (scale 6, rounded) */
  int null[3];
} mrow;

static __int128 div_round(__int128 a, __int128 b) { /* half away from zero */
  __int128 q = a / b, r = a % b;
  if (r < 0) r = -r;
  if (2 * r >= (b < 0 ? -b : b)) q += (a < 0) != (b < 0) ? -1 : 1;
  return q;
}

static void fmt_key(int k, char out[16]) {
  if (k == 7)
    out[0] = 0;
  else
    snprintf(out, 16, "%d", k - 3);
}

static void fmt_dec(__int128 v, int scale, char *out) {
  char d[64];
  int n = 0, neg = v < 0;
  if (neg) v = -v;
  do {
    d[n++] = (char)('0' + (int)(v % 10));
    v /= 10;
  } while (v);
  while (n <= scale) d[n++] = '0';
  int o = 0;
  if (neg) out[o++] = '-';
  for (int i = n - 1; i >= 0; i--) {
    out[o++] = d[i];
    if (i == scale && i > 0) out[o++] = '.';
  }
  out[o] = 0;
}

static int term_which, term_desc, term_nulls; /* the model's ORDER BY (one value, then the key) */

static int model_cmp(const void *pa, const void *pb) {
  const mrow *a = pa, *b = pb;
  int an = a->null[term_which], bn = b->null[term_which];
  if (an != bn) return (an ? 1 : -1) * (term_nulls == 1 ? -1 : 1);
  if (!an && a->v[term_which] != b->v[term_which]) {
    int c = a->v[term_which] < b->v[term_which] ? -1 : 1;
    return term_desc ? -c : c;
  }
  return a->key - b->key; /* ties in key order; the NULL key last */
}

static void random_statement(ps_context *ctx, const tbl_table *t, const grp *groups) {
  static const char *const names[] = {"sx", "sy", "r"};
  mrow rows[NKEYS];
  int nr = 0;
  int hv = (int)(test_rnd() % 3), hop = (int)(test_rnd() % 4);
  long long c = (long long)(test_rnd() % 41) - 20; /* HAVING's constant: sy in hundredths or sx */
  for (int k = 0; k < NKEYS; k++) {
    const grp *gr = &groups[k];
    if (!gr->present) continue;
    mrow m;
    m.key = k;
    m.v[0] = gr->sx, m.null[0] = gr->nx == 0;
    m.v[1] = gr->sy, m.null[1] = gr->ny == 0;
    m.null[2] = gr->ny == 0;
    m.v[2] = m.null[2] ? 0 : div_round((__int128)gr->sy * 10000, gr->n); /* scale 2 -> 6 */
    /* HAVING value <op> constant, Kleene: a NULL value keeps nothing */
    if (hv < 2) {
      __int128 lhs = m.v[hv], rhs = hv == 1 ? (__int128)c * 10 : c; /* sy against c/10 */
      int keep = !m.null[hv] && (hop == 0 ? lhs > rhs : hop == 1 ? lhs <= rhs : hop == 2 ? lhs != rhs : lhs == rhs);
      if (!keep) continue;
    }
    rows[nr++] = m;
  }
  term_which = (int)(test_rnd() % 3);
  term_desc = (int)(test_rnd() % 2);
  term_nulls = (int)(test_rnd() % 3) - 1;
  qsort(rows, (size_t)nr, sizeof *rows, model_cmp);
  int limit = (int)(test_rnd() % 10) - 1, offset = (int)(test_rnd() % 4) - 1; /* -1: none */
  tbuf sql = {0}, want = {0};
  static const char *const ops[] = {">", "<=", "<>", "="};
  tbuf_printf(&sql, "SELECT g, sum(x) AS sx, sum(y) AS sy, sum(y) / count(*) AS r FROM t GROUP BY g");
  if (hv < 2) {
    char lit[32];
    if (hv == 1)
      snprintf(lit, sizeof lit, "%s%lld.%lld", c < 0 ? "-" : "", (c < 0 ? -c : c) / 10, (c < 0 ? -c : c) % 10);
    else
      snprintf(lit, sizeof lit, "%lld", c);
    tbuf_printf(&sql, " HAVING %s %s %s", hv == 0 ? "sum(x)" : "sy", ops[hop], lit);
  }
  tbuf_printf(&sql, " ORDER BY %s%s%s, g", names[term_which], term_desc ? " DESC" : "",
              term_nulls < 0 ? ""
              : term_nulls   ? " NULLS FIRST"
                             : " NULLS LAST");
  if (limit >= 0) tbuf_printf(&sql, " LIMIT %d", limit);
  if (offset >= 0) tbuf_printf(&sql, " OFFSET %d", offset);
  tbuf_putc(&sql, 0);
  tbuf_printf(&want, "g,sx,sy,r\n");
  int first = offset > 0 ? offset : 0, last = limit >= 0 && first + limit < nr ? first + limit : nr;
  for (int i = first; i < last; i++) {
    char k[16], a[64], b[64], r[64];
    fmt_key(rows[i].key, k);
    a[0] = b[0] = r[0] = 0;
    if (!rows[i].null[0]) fmt_dec(rows[i].v[0], 0, a);
    if (!rows[i].null[1]) fmt_dec(rows[i].v[1], 2, b);
    if (!rows[i].null[2]) fmt_dec(rows[i].v[2], 6, r);
    tbuf_printf(&want, "%s,%s,%s,%s\n", k, a, b, r);
  }
  tbuf_putc(&want, 0);
  test_select_expect(ctx, t, NULL, (char *)sql.p, OUT_FORMAT_CSV, (char *)want.p);
  tbuf_free(&sql);
  tbuf_free(&want);
}

static void random_tables(ps_context *ctx) {
  static const int sizes[] = {0, 1, 33, 1000};
  for (size_t si = 0; si < sizeof sizes / sizeof *sizes && failures < 20; si++) {
    grp groups[NKEYS];
    memset(groups, 0, sizeof groups);
    tbuf csv = {0};
    tbuf_printf(&csv, "g,s,x,y,dt\n");
    for (int i = 0; i < sizes[si]; i++) {
      int k = (int)(test_rnd() % NKEYS);
      /* key 2 has no y and key 1 no x: NULL aggregates to order and compare */
      int x_null = test_rnd() % 5 == 0 || k == 4, y_null = test_rnd() % 4 == 0 || k == 5;
      long long x = (long long)(test_rnd() % 201) - 100, y = (long long)(test_rnd() % 2001) - 1000;
      grp *gr = &groups[k];
      gr->present = 1;
      gr->n++;
      if (!x_null) gr->sx += x, gr->nx++;
      if (!y_null) gr->sy += y, gr->ny++;
      char kt[16], yt[64];
      fmt_key(k, kt);
      fmt_dec(y, 2, yt);
      tbuf_printf(&csv, "%s,a,", kt);
      if (!x_null) tbuf_printf(&csv, "%lld", x);
      tbuf_printf(&csv, ",%s,2024-01-01\n", y_null ? "" : yt);
    }
    tbuf_putc(&csv, 0);
    uint8_t *file = NULL;
    tbl_table *t = test_make_table((char *)csv.p, TYPES, &file);
    CHECK(t != NULL, "table of %d rows", sizes[si]);
    for (int q = 0; t && q < 60 && failures < 20; q++) random_statement(ctx, t, groups);
    tbl_close(t);
    free(file);
    tbuf_free(&csv);
  }
}

int main(int argc, char **argv) {
  ps_context *ctx;
  const int started = test_start(argc, argv, &ctx);
  if (started) return started;
  known_answers(ctx);
  random_tables(ctx);
  ps_context_destroy(ctx);
  return test_finish("HAVING / ORDER BY / LIMIT", argv[1]);
}
