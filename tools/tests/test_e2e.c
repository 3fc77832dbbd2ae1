/* End to end: CSV -> encode -> table file bytes -> reader -> query, on the
 * backend named in argv[1], compared bit for bit with the reference backend;
 * plus hand-checked answers on a small table. A backend that cannot create a
 * context (PS_ERR_NO_DEVICE included) fails the test.
 *   usage: tool_test_e2e BACKEND [SEED]   (or PACKSCAN_SEED=<n>; default: a fresh seed) */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encode.h"
#include "tool_test.h"
#include "query.h"

int failures;
unsigned long long seed;

static char *select_text(query_plan *q, const uint64_t *ids, uint64_t n, const int *cols, size_t nc, int host) {
  FILE *f = tmpfile();
  char err[TOOL_ERR_SIZE];
  if (!f) return NULL;
  if (query_write_select(q, ids, n, cols, nc, 1, host, f, err, sizeof err)) {
    printf("select: %s\n", err);
    fclose(f);
    return NULL;
  }
  long len = ftell(f);
  rewind(f);
  char *s = malloc((size_t)len + 1);
  size_t got = fread(s, 1, (size_t)len, f);
  s[got] = 0;
  fclose(f);
  return s;
}

/* String columns whose every value is the empty string: the dictionary has
 * no bytes at all, and --select prints empty fields through both the
 * library's gather and the host's decoding (a NULL + 0 there before). */
static void empty_strings(ps_context *ctx) {
  uint8_t *file = NULL;
  tbl_table *t = test_make_table("k,s\n1,\"\"\n2,\"\"\n3,\"\"\n", "k:int,s:string", &file);
  CHECK(t != NULL, "a table of empty strings");
  query_plan q;
  const char *qs = "k >= 2";
  if (t && query_plan_build(ctx, t, qs, strlen(qs), &q, stdout) == 0) {
    static const uint64_t ids[2] = {1, 2};
    static const int cols[2] = {0, 1};
    for (int host = 0; host < 2; host++) {
      char *out = select_text(&q, ids, 2, cols, 2, host);
      CHECK(out && strstr(out, "2,") && strstr(out, "3,"), "empty strings (%s): '%s'", host ? "host" : "gather",
            out ? out : "(failed)");
      free(out);
    }
    query_plan_free(&q);
  } else if (t) {
    CHECK(0, "building '%s' on a table of empty strings", qs);
  }
  tbl_close(t);
  free(file);
}

static const char *const queries[] = {
    "k = 5",
    "k == 5",
    "k != 5",
    "k <> 5",
    "k < 50",
    "k <= 50",
    "k > 50",
    "k >= 50",
    "50 < k",
    "50 >= k",
    "k = -1",
    "k < 1000000",
    "k > 18446744073709551615",
    "k >= -9223372036854775808",
    "v < w",
    "v <= w",
    "v = w",
    "v != w",
    "v > w",
    "v >= w",
    "k < v",
    "price > 500",
    "price >= 500.00",
    "price < 0.5",
    "price = 123.45",
    "price BETWEEN 100 AND 200.5",
    "price NOT BETWEEN 100 AND 200.5",
    "price > 99.999",
    "price < k",
    "day >= DATE '1995-01-01'",
    "day < '1993-06-30'",
    "day BETWEEN DATE '1992-01-01' AND DATE '1992-12-31'",
    "day < day2",
    "day = day2",
    "day IN (DATE '1995-03-04', DATE '1990-01-01', '1999-12-31')",
    "k BETWEEN v AND w",
    "k NOT BETWEEN v AND w",
    "5 BETWEEN v AND w",
    "k IN (1, 2, 3, 50, 99)",
    "k NOT IN (1, 2, 3)",
    "k IN (-5)",
    "v IN (0, 1000, -1000)",
    "s = 'apple'",
    "s != 'apple'",
    "s < 'banana'",
    "s >= 'c'",
    "s = ''",
    "s = 'say \"hi\"'",
    "s = 'a,b'",
    "s = 'it''s'",
    "s IN ('apple', 'kiwi', '')",
    "s NOT IN ('apple', 'kiwi')",
    "s > t",
    "s = t",
    "s <= t",
    "s LIKE 'a%'",
    "s LIKE '%an%'",
    "s NOT LIKE '%e'",
    "s LIKE '_____'",
    "s LIKE '%!%%' ESCAPE '!'",
    "s LIKE 'caf_'",
    "s LIKE '100\\%' ESCAPE '\\'",
    "t LIKE '%'",
    "k IS NULL",
    "k IS NOT NULL",
    "price IS NULL",
    "s IS NULL",
    "s IS NOT NULL",
    "day IS NULL",
    "NOT k = 5",
    "NOT k IS NULL",
    "NOT (k < 10 OR s = 'apple')",
    "NOT NOT k < 10",
    "k < 10 OR s = 'apple'",
    "k < 10 AND s = 'apple'",
    "k < 10 OR v > 0 AND w < 0",
    "(k < 10 OR v > 0) AND w < 0",
    "k < 30 AND (s LIKE 'a%' OR s IS NULL) AND NOT price BETWEEN 10 AND 20 OR day > DATE '1999-01-01'",
    "k = 1 OR k = 2 OR k = 3 OR k = 4 OR k = 5 OR k = 6 OR k = 7 OR k = 8 OR k = 9",
    "NOT (k > 50) OR NOT (price < 10)",
    "k > 200 OR price IS NULL",
};

static const char *const pool_s[] = {"apple",      "banana", "cherry", "kiwi",        "",
                                     "say \"hi\"", "a,b",    "it's",   "multi\nline", "caf\xc3\xa9",
                                     "100%",       "100x",   "zebra",  "an",          "Apple"};
static const char *const pool_t[] = {"apple", "banana", "mango", "", "zz"};

static void quote_csv(tbuf *b, const char *s) {
  tbuf_putc(b, '"');
  for (; *s; s++) {
    if (*s == '"') tbuf_putc(b, '"');
    tbuf_putc(b, *s);
  }
  tbuf_putc(b, '"');
}

static void random_csv(tbuf *b, int rows) {
  tbuf_printf(b, "k,v,w,price,day,day2,s,t\n");
  for (int i = 0; i < rows; i++) {
    if (test_rnd() % 10) tbuf_printf(b, "%d", (int)(test_rnd() % 100));
    tbuf_printf(b, ",%d,%d,", (int)(test_rnd() % 2001) - 1000, (int)(test_rnd() % 2001) - 1000);
    if (test_rnd() % 20) tbuf_printf(b, "%d.%02d", (int)(test_rnd() % 1000), (int)(test_rnd() % 100));
    char d[32];
    tbuf_putc(b, ',');
    if (test_rnd() % 25) {
      format_date(days_from_civil(1990, 1, 1) + (int64_t)(test_rnd() % 3653), d);
      tbuf_printf(b, "%s", d);
    }
    format_date(days_from_civil(1990, 1, 1) + (int64_t)(test_rnd() % 3653), d);
    tbuf_printf(b, ",%s,", d);
    if (test_rnd() % 10) quote_csv(b, pool_s[test_rnd() % (sizeof pool_s / sizeof *pool_s)]);
    tbuf_putc(b, ',');
    quote_csv(b, pool_t[test_rnd() % (sizeof pool_t / sizeof *pool_t)]);
    tbuf_putc(b, '\n');
  }
  tbuf_putc(b, 0);
}

/* ORDER BY on one of k (int), price (decimal), day (date): the sorted ids are
 * a permutation of the input, values never go the wrong way, nulls come last,
 * equal values keep row order. The values are read back through --select. */
static void check_order(query_plan *q, const uint64_t *ids, uint64_t n, int col, int desc) {
  uint64_t *s = malloc((n ? n : 1) * sizeof *s), *a = malloc((n ? n : 1) * sizeof *a);
  char err[TOOL_ERR_SIZE];
  memcpy(s, ids, n * sizeof *s);
  query_order key = {col, desc};
  CHECK(query_order_ids(q, s, n, &key, 1, err, sizeof err) == 0, "order by column %d: %s", col, err);
  memcpy(a, s, n * sizeof *a);
  /* a permutation: every input id once (the input is ascending) */
  for (uint64_t i = 1; i < n; i++)
    for (uint64_t j = i; j > 0 && a[j - 1] > a[j]; j--) {
      uint64_t x = a[j];
      a[j] = a[j - 1];
      a[j - 1] = x;
    }
  CHECK(n == 0 || !memcmp(a, ids, n * sizeof *a), "order by column %d: not a permutation of the selected ids", col);
  char *text = select_text(q, s, n, &col, 1, 1);
  CHECK(text != NULL, "order by column %d: values", col);
  char *line = text ? strchr(text, '\n') : NULL; /* past the header */
  char prev[64] = "";
  int have_prev = 0, prev_null = 0;
  for (uint64_t i = 0; line && i < n; i++) {
    char *v = line + 1, *e = strchr(v, '\n');
    if (!e) break;
    *e = 0;
    int null = *v == 0;
    if (have_prev) {
      CHECK(!(prev_null && !null), "order by column %d: a value after a null at position %llu", col,
            (unsigned long long)i);
      if (!prev_null && !null) {
        int c = col == 4 ? strcmp(prev, v)
                         : (strtod(prev, NULL) > strtod(v, NULL)) - (strtod(prev, NULL) < strtod(v, NULL));
        if (desc) c = -c;
        CHECK(c <= 0, "order by column %d %s: '%s' before '%s'", col, desc ? "DESC" : "ASC", prev, v);
        if (c == 0) CHECK(s[i - 1] < s[i], "order by column %d: equal values out of row order", col);
      }
      if (prev_null && null) CHECK(s[i - 1] < s[i], "order by column %d: nulls out of row order", col);
    }
    snprintf(prev, sizeof prev, "%s", v);
    prev_null = null;
    have_prev = 1;
    line = e;
  }
  free(text);
  free(s);
  free(a);
}

/* Bitmap of one expression (NULL on failure, with a CHECK). */
static uint8_t *bitmap_of(ps_context *ctx, const tbl_table *t, const char *qs) {
  query_plan q;
  uint64_t nb = (t->rows + 7) / 8, c;
  uint8_t *bm = calloc(nb + 1, 1);
  int ok = query_plan_build(ctx, t, qs, strlen(qs), &q, stdout) == 0 && ps_filter(ctx, q.expr, bm, nb, &c) == PS_OK;
  CHECK(ok, "'%s': %s", qs, ps_context_last_error(ctx));
  query_plan_free(&q);
  if (!ok) {
    free(bm);
    return NULL;
  }
  return bm;
}

/* Long ORs of equalities (merged by the binder into IN lists) select what
 * their operands select one by one, ORed here; chains longer than the
 * library's node limit included. */
static void check_or_merge(ps_context *ctx, const tbl_table *t) {
  static const char *const strs[] = {"'apple'", "'kiwi'", "''", "'zebra'", "'nope'"};
  uint64_t nb = (t->rows + 7) / 8;
  for (int iter = 0; iter < 6; iter++) {
    tbuf q = {0};
    uint8_t *want = calloc(nb + 1, 1);
    int terms = 2 + (int)(test_rnd() % (iter < 3 ? 8 : 60)), bad = 0;
    for (int i = 0; i < terms; i++) {
      char term[64];
      switch (test_rnd() % 6) {
        case 0:
          snprintf(term, sizeof term, "%d = k", (int)(test_rnd() % 100));
          break;
        case 1:
          snprintf(term, sizeof term, "s = %s", strs[test_rnd() % 5]);
          break;
        case 2:
          snprintf(term, sizeof term, "v = %d", (int)(test_rnd() % 2001) - 1000);
          break;
        case 3:
          snprintf(term, sizeof term, "k IN (%d, %d)", (int)(test_rnd() % 100), (int)(test_rnd() % 100));
          break;
        case 4:
          snprintf(term, sizeof term, "price = %d.%02d", (int)(test_rnd() % 1000), (int)(test_rnd() % 100));
          break;
        default:
          snprintf(term, sizeof term, "k < %d", (int)(test_rnd() % 10));
          break;
      }
      tbuf_printf(&q, "%s%s", i ? " OR " : "", term);
      uint8_t *one = bitmap_of(ctx, t, term);
      if (!one) bad = 1;
      for (uint64_t b = 0; one && b < nb; b++) want[b] |= one[b];
      free(one);
    }
    tbuf_putc(&q, 0);
    uint8_t *got = bad ? NULL : bitmap_of(ctx, t, (const char *)q.p);
    CHECK(bad || (got && !memcmp(got, want, nb)), "%llu rows: '%s' differs from its operands ORed",
          (unsigned long long)t->rows, (const char *)q.p);
    free(got);
    free(want);
    tbuf_free(&q);
  }
}

static void compare_backends(ps_context *ctx, ps_context *ref, const tbl_table *t, const char *backend) {
  uint64_t n = t->rows, nb = (n + 7) / 8;
  uint8_t *b1 = malloc(nb + 1), *b2 = malloc(nb + 1);
  int all_cols[8] = {0, 1, 2, 3, 4, 5, 6, 7};
  for (size_t k = 0; k < sizeof queries / sizeof *queries; k++) {
    const char *qs = queries[k];
    query_plan q1, q2;
    int r1 = query_plan_build(ctx, t, qs, strlen(qs), &q1, stdout);
    int r2 = query_plan_build(ref, t, qs, strlen(qs), &q2, stdout);
    CHECK(r1 == 0 && r2 == 0, "build '%s'", qs);
    if (r1 == 0 && r2 == 0) {
      uint64_t c1 = 0, c2 = 0, c3 = 0;
      memset(b1, 0xAA, nb + 1);
      memset(b2, 0x55, nb + 1);
      ps_status s1 = ps_filter(ctx, q1.expr, b1, nb, &c1);
      ps_status s2 = ps_filter(ref, q2.expr, b2, nb, &c2);
      ps_status s3 = ps_filter_count(ctx, q1.expr, &c3);
      CHECK(s1 == PS_OK && s2 == PS_OK && s3 == PS_OK, "'%s': %s %s %s: %s", qs, ps_status_name(s1), ps_status_name(s2),
            ps_status_name(s3), ps_context_last_error(ctx));
      CHECK(c1 == c2 && c3 == c2, "'%s': count %s %llu (count only %llu), reference %llu", qs, backend,
            (unsigned long long)c1, (unsigned long long)c3, (unsigned long long)c2);
      CHECK(!memcmp(b1, b2, nb), "'%s': bitmaps differ between %s and reference", qs, backend);
      CHECK(b1[nb] == 0xAA, "'%s': wrote past the bitmap", qs);
      /* row ids (library path where the backend has it, and the bitmap path) and values */
      uint64_t *ids1 = NULL, *ids2 = NULL, n1 = 0, n2 = 0;
      char err[TOOL_ERR_SIZE];
      CHECK(query_row_ids(&q1, 0, &ids1, &n1, err, sizeof err) == 0, "'%s': row ids: %s", qs, err);
      CHECK(query_row_ids(&q1, 1, &ids2, &n2, err, sizeof err) == 0, "'%s': host row ids: %s", qs, err);
      CHECK(n1 == c2 && n2 == c2 && (n1 == 0 || !memcmp(ids1, ids2, n1 * 8)), "'%s': row ids differ", qs);
      for (uint64_t i = 0; i < n2 && ids2; i++)
        if (!((b2[ids2[i] / 8] >> (ids2[i] % 8)) & 1)) {
          CHECK(0, "'%s': row id %llu not in the bitmap", qs, (unsigned long long)ids2[i]);
          break;
        }
      if (ids1) {
        static const int keycols[3] = {0, 3, 4};
        check_order(&q1, ids1, n1, keycols[test_rnd() % 3], (int)(test_rnd() % 2));
      }
      if (k % 7 == 0 && ids1) {
        char *lib = select_text(&q1, ids1, n1, all_cols, 8, 0);
        char *host = select_text(&q1, ids1, n1, all_cols, 8, 1);
        CHECK(lib && host && !strcmp(lib, host), "'%s': --select differs between gather and host decoding", qs);
        free(lib);
        free(host);
      }
      free(ids1);
      free(ids2);
    }
    query_plan_free(&q1);
    query_plan_free(&q2);
  }
  free(b1);
  free(b2);
}

/* Small table with hand-checked answers (row ids). */
static void known_answers(ps_context *ctx) {
  const char *csv =
      "id,qty,price,day,name\n"
      "0,5,1.50,1994-01-01,apple\n"
      "1,,2.25,1994-06-30,banana\n"
      "2,12,,1995-01-01,\n"
      "3,7,0.05,,\"it's\"\n"
      "4,5,100,1993-12-31,\"100%\"\n"
      "5,-3,0.10,2000-02-29,\"\"\n";
  static const struct {
    const char *q;
    const char *rows;
  } cases[] = {
      {"qty = 5", "0,4"},
      {"5 = qty", "0,4"},
      {"3 < qty", "0,2,3,4"},
      {"qty != 5", "2,3,5"}, /* the null row is UNKNOWN, not TRUE */
      {"NOT qty = 5", "2,3,5"},
      {"qty IS NULL", "1"},
      {"NOT qty IS NULL AND qty < 0", "5"},
      {"qty BETWEEN 5 AND 7", "0,3,4"},
      {"qty NOT BETWEEN 5 AND 7", "2,5"},
      {"qty IN (5, 12)", "0,2,4"},
      {"qty NOT IN (5, 12)", "3,5"},
      {"qty > 100 OR qty IS NULL", "1"},
      {"price = 0.05", "3"},
      {"price < 0.1", "3"},
      {"price <= 0.10", "3,5"},
      {"price > 1.5 AND price < 100", "1"},
      {"price >= 100", "4"},
      {"day < DATE '1994-01-01'", "4"},
      {"day >= '1994-06-30'", "1,2,5"},
      {"day BETWEEN DATE '1994-01-01' AND DATE '1994-12-31'", "0,1"},
      {"name = 'it''s'", "3"},
      {"name = ''", "5"},
      {"name IS NULL", "2"},
      {"name LIKE '%a%'", "0,1"},
      {"name NOT LIKE '%a%'", "3,4,5"},
      {"name LIKE '100!%' ESCAPE '!'", "4"},
      {"name LIKE '1__%'", "4"},
      {"name < 'b'", "0,4,5"},
      {"name IN ('apple', '')", "0,5"},
      {"NOT (name = 'apple' OR qty > 6)", "4,5"},
      {"qty < 6 AND price > 1 OR day > DATE '1999-01-01'", "0,4,5"},
      {"qty < 6 AND (price > 1 OR day > DATE '1999-01-01')", "0,4,5"},
      {"qty < 0 OR qty > 6 AND price < 1", "3,5"},
      {"(qty < 0 OR qty > 6) AND price < 1", "3,5"},
      {"id < qty", "0,2,3,4"},
      {"qty BETWEEN id AND 6", "0,4"},
      {"ID = 1", "1"}, /* unquoted names are case-insensitive */
  };
  uint8_t *file = NULL;
  tbl_table *t = test_make_table(csv, NULL, &file);
  CHECK(t != NULL, "known-answer table");
  if (!t) return;
  for (size_t k = 0; k < sizeof cases / sizeof *cases; k++) {
    query_plan q;
    char err[TOOL_ERR_SIZE];
    if (query_plan_build(ctx, t, cases[k].q, strlen(cases[k].q), &q, stdout)) {
      CHECK(0, "build '%s'", cases[k].q);
      query_plan_free(&q);
      continue;
    }
    uint64_t *ids = NULL, n = 0;
    tbuf got = {0};
    if (query_row_ids(&q, 0, &ids, &n, err, sizeof err) == 0) {
      for (uint64_t i = 0; i < n; i++) tbuf_printf(&got, "%s%llu", i ? "," : "", (unsigned long long)ids[i]);
    } else {
      tbuf_printf(&got, "error: %s", err);
    }
    tbuf_putc(&got, 0);
    CHECK(!strcmp((char *)got.p, cases[k].rows), "'%s': rows [%s], expected [%s]", cases[k].q, (char *)got.p,
          cases[k].rows);
    tbuf_free(&got);
    free(ids);
    query_plan_free(&q);
  }
  /* --select output: exact decimals, dates, quoting, nulls as empty fields */
  {
    query_plan q;
    const char *qs = "id >= 2";
    if (query_plan_build(ctx, t, qs, strlen(qs), &q, stdout) == 0) {
      uint64_t *ids = NULL, n = 0;
      char err[TOOL_ERR_SIZE];
      int cols[5] = {0, 1, 2, 3, 4};
      if (query_row_ids(&q, 0, &ids, &n, err, sizeof err) == 0) {
        const char *want =
            "id,qty,price,day,name\n2,12,,1995-01-01,\n3,7,0.05,,it's\n4,5,100.00,1993-12-31,100%\n"
            "5,-3,0.10,2000-02-29,\"\"\n";
        for (int host = 0; host < 2; host++) {
          char *s = select_text(&q, ids, n, cols, 5, host);
          CHECK(s && !strcmp(s, want), "select (%s):\n%s", host ? "host" : "gather", s ? s : "(error)");
          free(s);
        }
      }
      free(ids);
    }
    query_plan_free(&q);
  }
  /* binding errors name the column and point at it */
  {
    static const struct {
      const char *q;
      size_t pos;
      const char *msg;
    } errs[] = {
        {"nope = 1", 0, "unknown column 'nope'"},
        {"qty = 1 AND \"Qty\" = 2", 12, "unknown column 'Qty'"},
        {"name = 5", 7, "column 'name' is string, the literal is an integer"},
        {"qty = 'x'", 6, "column 'qty' is int64, the literal is a string"},
        {"day = 5", 6, "column 'day' is date"},
        {"qty = DATE '1994-01-01'", 6, "the literal is a date"},
        {"day = 'tomorrow'", 6, "not 'yyyy-mm-dd'"},
        {"qty LIKE 'a%'", 0, "LIKE needs a string column; 'qty' is int64"},
        {"name < qty", 0, "cannot compare column 'name' (string) with column 'qty' (int64)"},
        {"day < qty", 0, "cannot compare column 'day' (date)"},
        {"qty IN (1, 'a')", 11, "the literal is a string"},
        {"name LIKE 'abc\\' ESCAPE '\\'", 10, "PS_ERR_INVALID_ARGUMENT"},
    };
    for (size_t k = 0; k < sizeof errs / sizeof *errs; k++) {
      expr_arena a = {0};
      ast_node *n;
      expr_error e;
      ps_column *cols[5] = {0};
      bind_env env = {ctx, t, cols, NULL};
      ps_expr *x = NULL;
      int pr = expr_parse(errs[k].q, strlen(errs[k].q), &a, &n, &e);
      int br = pr == 0 ? expr_bind(&env, n, &x, &e) : -1;
      CHECK(pr == 0 && br != 0 && e.pos == errs[k].pos && strstr(e.msg, errs[k].msg), "'%s': got at %zu '%s'",
            errs[k].q, e.pos, e.msg);
      ps_expr_destroy(x);
      for (int c = 0; c < 5; c++) ps_column_destroy(cols[c]);
      expr_arena_free(&a);
    }
  }
  tbl_close(t);
  free(file);
}

int main(int argc, char **argv) {
  ps_context *ctx, *ref = NULL;
  const int started = test_start(argc, argv, &ctx);
  if (started) return started;
  const char *backend = argv[1];
  char err[TOOL_ERR_SIZE] = "";
  if (query_context("reference", &ref, err, sizeof err)) {
    printf("FAIL: %s\n", err);
    ps_context_destroy(ctx);
    return 1;
  }
  known_answers(ctx);
  static const int sizes[] = {0, 1, 31, 32, 33, 4099};
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes; i++) {
    tbuf csv = {0};
    random_csv(&csv, sizes[i]);
    uint8_t *file = NULL;
    tbl_table *t = test_make_table((char *)csv.p,
                                   "k:int,v:int,w:int,price:decimal(2),day:date,day2:date,s:string,t:string", &file);
    CHECK(t != NULL, "table of %d rows", sizes[i]);
    if (t) compare_backends(ctx, ref, t, backend);
    if (t) check_or_merge(ctx, t);
    tbl_close(t);
    free(file);
    tbuf_free(&csv);
  }
  empty_strings(ctx);
  ps_context_destroy(ctx);
  ps_context_destroy(ref);
  return test_finish("end-to-end", backend);
}
