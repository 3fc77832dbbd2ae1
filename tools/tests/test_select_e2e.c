/* SELECT end to end: CSV -> table -> `SELECT ...` on the backend named in
 * argv[1], against an independent computation in this file. Random tables
 * (nulls in every column) and random statements: value expressions of
 * + - * CASE, every aggregate, WHERE clauses, GROUP BY none, one or two
 * columns. The expected results come from a model of the SQL rules evaluated
 * here on the generated values (exact 128-bit decimals), never from the
 * library or the tool's parser. Also hand-checked output, and binding errors
 * with their positions. A backend whose context cannot be created fails.
 *   usage: tool_test_select_e2e BACKEND [SEED]   (or PACKSCAN_SEED=<n>; default: a fresh seed) */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encode.h"
#include "tool_test.h"
#include "select_run.h"

typedef __int128 i128;

int failures;
unsigned long long seed;

static int64_t rint_in(int64_t lo, int64_t hi) { return lo + (int64_t)(test_rnd() % (uint64_t)(hi - lo + 1)); }

/* ---- the model: the table's values ---- */

#define TYPES "g:int,s:string,x:int,y:decimal(2),dt:date"
static const char *const strs[] = {"apple", "fig", "kiwi"}; /* sorted: dictionary order */

typedef struct row {
  int g_null, s_null, x_null, y_null, dt_null;
  int64_t g, x, y, dt; /* y: scaled by 100; dt: days */
  int s;               /* index into strs */
} row;

static row *rows_;
static int nrows;

static void random_table(tbuf *csv, int n) {
  free(rows_);
  rows_ = calloc((size_t)n + 1, sizeof *rows_);
  nrows = n;
  tbuf_printf(csv, "g,s,x,y,dt\n");
  for (int i = 0; i < n; i++) {
    row *r = &rows_[i];
    r->g_null = test_rnd() % 8 == 0;
    r->s_null = test_rnd() % 8 == 0;
    r->x_null = test_rnd() % 8 == 0;
    r->y_null = test_rnd() % 8 == 0;
    r->dt_null = test_rnd() % 8 == 0;
    r->g = rint_in(0, 4);
    r->s = (int)rint_in(0, 2);
    r->x = rint_in(-1000, 1000);
    r->y = rint_in(-9999, 9999);
    r->dt = rint_in(8000, 9000);
    char d[32] = "", y[48] = "";
    if (!r->dt_null) format_date(r->dt, d);
    if (!r->y_null) format_decimal(r->y, 2, y);
    if (!r->g_null) tbuf_printf(csv, "%lld", (long long)r->g);
    tbuf_printf(csv, ",%s,", r->s_null ? "" : strs[r->s]);
    if (!r->x_null) tbuf_printf(csv, "%lld", (long long)r->x);
    tbuf_printf(csv, ",%s,%s\n", y, d);
  }
}

/* ---- predicates: text and three-valued evaluation ---- */

typedef struct pred {
  int kind;
  int64_t a, b;
} pred;

enum { P_X_GT, P_Y_LE, P_S_EQ, P_G_IN, P_Y_NULL, P_DT_BETWEEN, P_KINDS };

static void random_pred(pred *p) {
  p->kind = (int)(test_rnd() % P_KINDS);
  p->a = rint_in(-600, 600);
  p->b = rint_in(0, 2);
  if (p->kind == P_Y_LE) p->a = rint_in(-9000, 9000);
  if (p->kind == P_DT_BETWEEN) {
    p->a = rint_in(7990, 9010);
    p->b = p->a + rint_in(0, 500);
  }
  if (p->kind == P_G_IN) {
    p->a = rint_in(0, 4);
    p->b = rint_in(0, 4);
  }
}

static void pred_text(const pred *p, tbuf *o) {
  char t1[48], t2[48];
  switch (p->kind) {
    case P_X_GT:
      tbuf_printf(o, "x > %lld", (long long)p->a);
      break;
    case P_Y_LE:
      format_decimal(p->a, 2, t1);
      tbuf_printf(o, "y <= %s", t1);
      break;
    case P_S_EQ:
      tbuf_printf(o, "s = '%s'", strs[p->b]);
      break;
    case P_G_IN:
      tbuf_printf(o, "g IN (%lld, %lld)", (long long)p->a, (long long)p->b);
      break;
    case P_Y_NULL:
      tbuf_printf(o, "y IS NULL");
      break;
    case P_DT_BETWEEN:
      format_date(p->a, t1);
      format_date(p->b, t2);
      tbuf_printf(o, "dt BETWEEN DATE '%s' AND DATE '%s'", t1, t2);
      break;
  }
}

/* 1 TRUE, 0 FALSE, -1 UNKNOWN */
static int pred_eval(const pred *p, const row *r) {
  switch (p->kind) {
    case P_X_GT:
      return r->x_null ? -1 : r->x > p->a;
    case P_Y_LE:
      return r->y_null ? -1 : r->y <= p->a;
    case P_S_EQ:
      return r->s_null ? -1 : r->s == p->b;
    case P_G_IN:
      return r->g_null ? -1 : (r->g == p->a || r->g == p->b);
    case P_Y_NULL:
      return r->y_null;
    case P_DT_BETWEEN:
      return r->dt_null ? -1 : (r->dt >= p->a && r->dt <= p->b);
  }
  return -1;
}

/* ---- value expressions: text, scale and exact evaluation ---- */

typedef struct vnode {
  int kind; /* V_* */
  int64_t lit;
  int scale; /* literals */
  pred when;
  struct vnode *a, *b; /* operands; CASE: then, else (NULL: ELSE NULL) */
} vnode;

enum { V_X, V_Y, V_DT, V_LIT, V_ADD, V_SUB, V_MUL, V_NEG, V_CASE };

static vnode pool[4096];
static int npool;

static vnode *random_value(int depth) {
  vnode *v = &pool[npool++];
  memset(v, 0, sizeof *v);
  int k = depth <= 0 ? (int)(test_rnd() % 4) : (int)(test_rnd() % 9);
  v->kind = k;
  if (k == V_LIT) {
    v->scale = (int)rint_in(0, 2);
    v->lit = rint_in(-300, 300);
  } else if (k >= V_ADD && k <= V_MUL) {
    v->a = random_value(depth - 1);
    v->b = random_value(depth - 1);
  } else if (k == V_NEG) {
    v->a = random_value(depth - 1);
  } else if (k == V_CASE) {
    random_pred(&v->when);
    v->a = random_value(depth - 1);
    v->b = test_rnd() % 4 ? random_value(depth - 1) : NULL;
  }
  return v;
}

static void value_text(const vnode *v, tbuf *o) {
  char t[48];
  switch (v->kind) {
    case V_X:
      tbuf_printf(o, "x");
      break;
    case V_Y:
      tbuf_printf(o, "y");
      break;
    case V_DT:
      tbuf_printf(o, "dt");
      break;
    case V_LIT:
      format_decimal(v->lit, v->scale, t);
      tbuf_printf(o, v->lit < 0 ? "(%s)" : "%s", t);
      break;
    case V_ADD:
    case V_SUB:
    case V_MUL:
      tbuf_putc(o, '(');
      value_text(v->a, o);
      tbuf_printf(o, v->kind == V_ADD ? " + " : v->kind == V_SUB ? " - " : " * ");
      value_text(v->b, o);
      tbuf_putc(o, ')');
      break;
    case V_NEG:
      tbuf_printf(o, "-(");
      value_text(v->a, o);
      tbuf_putc(o, ')');
      break;
    case V_CASE:
      tbuf_printf(o, "CASE WHEN ");
      pred_text(&v->when, o);
      tbuf_printf(o, " THEN ");
      value_text(v->a, o);
      if (v->b) {
        tbuf_printf(o, " ELSE ");
        value_text(v->b, o);
      }
      tbuf_printf(o, " END");
      break;
  }
}

static int value_scale(const vnode *v) {
  int a, b;
  switch (v->kind) {
    case V_Y:
      return 2;
    case V_LIT:
      return v->scale;
    case V_ADD:
    case V_SUB:
      a = value_scale(v->a);
      b = value_scale(v->b);
      return a > b ? a : b;
    case V_MUL:
      return value_scale(v->a) + value_scale(v->b);
    case V_NEG:
      return value_scale(v->a);
    case V_CASE:
      a = value_scale(v->a);
      b = v->b ? value_scale(v->b) : 0;
      return a > b ? a : b;
    default:
      return 0;
  }
}

static i128 p10(int k) {
  i128 r = 1;
  while (k-- > 0) r *= 10;
  return r;
}

/* The exact value at value_scale(v); 0 = NULL. */
static int value_eval(const vnode *v, const row *r, i128 *out) {
  i128 a, b;
  int s = value_scale(v);
  switch (v->kind) {
    case V_X:
      *out = r->x;
      return !r->x_null;
    case V_Y:
      *out = r->y;
      return !r->y_null;
    case V_DT:
      *out = r->dt;
      return !r->dt_null;
    case V_LIT:
      *out = v->lit;
      return 1;
    case V_ADD:
    case V_SUB:
      if (!value_eval(v->a, r, &a) || !value_eval(v->b, r, &b)) return 0;
      a *= p10(s - value_scale(v->a));
      b *= p10(s - value_scale(v->b));
      *out = v->kind == V_ADD ? a + b : a - b;
      return 1;
    case V_MUL:
      if (!value_eval(v->a, r, &a) || !value_eval(v->b, r, &b)) return 0;
      *out = a * b;
      return 1;
    case V_NEG:
      if (!value_eval(v->a, r, &a)) return 0;
      *out = -a;
      return 1;
    case V_CASE:
      if (pred_eval(&v->when, r) == 1) {
        if (!value_eval(v->a, r, &a)) return 0;
        *out = a * p10(s - value_scale(v->a));
        return 1;
      }
      if (!v->b || !value_eval(v->b, r, &b)) return 0;
      *out = b * p10(s - value_scale(v->b));
      return 1;
  }
  return 0;
}

/* ---- aggregates ---- */

enum { A_COUNT_STAR, A_COUNT, A_SUM, A_MIN, A_MAX, A_AVG, A_KINDS };
static const char *const agg_names[] = {"COUNT", "COUNT", "SUM", "MIN", "MAX", "AVG"};

typedef struct acc {
  uint64_t rows, count;
  i128 sum, min, max;
} acc;

/* Expected datum of an aggregate: *is_null, value at *scale. */
static void agg_result(int kind, const acc *a, int s, int *is_null, i128 *v, int *scale) {
  *is_null = 0;
  *scale = s;
  *v = 0;
  switch (kind) {
    case A_COUNT_STAR:
      *v = (i128)a->rows;
      *scale = 0;
      return;
    case A_COUNT:
      *v = (i128)a->count;
      *scale = 0;
      return;
    default:
      break;
  }
  if (a->count == 0) {
    *is_null = 1;
    *v = 0;
    return;
  }
  if (kind == A_SUM) *v = a->sum;
  if (kind == A_MIN) *v = a->min;
  if (kind == A_MAX) *v = a->max;
  if (kind == A_AVG) { /* exact sum / count at scale max(s, 6), rounded half away from zero */
    int S = s > PS_QUERY_AVG_MIN_SCALE ? s : PS_QUERY_AVG_MIN_SCALE;
    i128 num = a->sum * p10(S - s), c = (i128)a->count;
    i128 mag = num < 0 ? -num : num, q = (2 * mag + c) / (2 * c);
    *v = num < 0 ? -q : q;
    *scale = S;
  }
}

static int datum_equals(const ps_datum *d, int is_null, i128 v, int scale) {
  if (is_null || d->is_null) return is_null && d->is_null;
  i128 got = (i128)(((unsigned __int128)(uint64_t)d->hi << 64) | d->lo);
  int s = (int)d->scale;
  if (s < scale) got *= p10(scale - s);
  if (scale < s) v *= p10(s - scale);
  return got == v;
}

static void show128(i128 v, char out[48]) {
  char tmp[48];
  int k = 0, neg = v < 0;
  unsigned __int128 m = neg ? (unsigned __int128)(-v) : (unsigned __int128)v;
  do {
    tmp[k++] = (char)('0' + (int)(m % 10));
    m /= 10;
  } while (m);
  int j = 0;
  if (neg) out[j++] = '-';
  while (k) out[j++] = tmp[--k];
  out[j] = 0;
}

/* ---- one random statement ---- */

#define MAX_AGGS 6

/* GROUP BY keys: g (int), s (string, by dictionary order), y (decimal(2),
 * negative values too), dt (date). */
enum { K_G, K_S, K_Y, K_DT };
static const char *const key_names[] = {"g", "s", "y", "dt"};
/* The key sets a statement groups by: none, one key, or two. */
static const int key_sets[][2] = {{-1, -1},   {K_G, -1},  {K_S, -1},   {K_Y, -1},
                                  {K_DT, -1}, {K_G, K_S}, {K_S, K_DT}, {K_DT, K_G}};

static int key_null(const row *r, int k) {
  return k == K_G ? r->g_null : k == K_S ? r->s_null : k == K_Y ? r->y_null : r->dt_null;
}
static int64_t key_val(const row *r, int k) { return k == K_G ? r->g : k == K_S ? r->s : k == K_Y ? r->y : r->dt; }

static int sort_keys[2], sort_nkeys;

/* Ascending key order, NULL after every value, key by key. */
static int cmp_rows(const void *pa, const void *pb) {
  const row *a = &rows_[*(const int *)pa], *b = &rows_[*(const int *)pb];
  for (int i = 0; i < sort_nkeys; i++) {
    int k = sort_keys[i], na = key_null(a, k), nb = key_null(b, k);
    if (na != nb) return na - nb;
    if (na) continue;
    int64_t x = key_val(a, k), y = key_val(b, k);
    if (x != y) return x < y ? -1 : 1;
  }
  return 0;
}

static void random_statement(ps_context *ctx, const tbl_table *t) {
  npool = 0;
  int nagg = 1 + (int)(test_rnd() % MAX_AGGS), kinds[MAX_AGGS];
  vnode *vals[MAX_AGGS];
  const int *ks = key_sets[test_rnd() % (sizeof key_sets / sizeof *key_sets)];
  int nkeys = ks[0] < 0 ? 0 : ks[1] < 0 ? 1 : 2;
  int have_where = test_rnd() % 3 != 0, where_or = test_rnd() % 2;
  pred w1, w2;
  random_pred(&w1);
  random_pred(&w2);
  tbuf sql = {0};
  tbuf_printf(&sql, "SELECT ");
  for (int k = 0; k < nkeys; k++) tbuf_printf(&sql, "%s, ", key_names[ks[k]]);
  for (int i = 0; i < nagg; i++) {
    kinds[i] = (int)(test_rnd() % A_KINDS);
    vals[i] = kinds[i] == A_COUNT_STAR ? NULL : random_value((int)(test_rnd() % 3));
    tbuf_printf(&sql, "%s%s(", i ? ", " : "", agg_names[kinds[i]]);
    if (vals[i])
      value_text(vals[i], &sql);
    else
      tbuf_putc(&sql, '*');
    tbuf_putc(&sql, ')');
  }
  tbuf_printf(&sql, " FROM t");
  if (have_where) {
    tbuf_printf(&sql, " WHERE ");
    pred_text(&w1, &sql);
    tbuf_printf(&sql, where_or ? " OR " : " AND ");
    pred_text(&w2, &sql);
  }
  for (int k = 0; k < nkeys; k++) tbuf_printf(&sql, k ? ", %s" : " GROUP BY %s", key_names[ks[k]]);
  tbuf_putc(&sql, 0);
  const char *text = (const char *)sql.p;

  /* the model: the selected rows sorted by their keys; a run of equal keys
   * is a group (without GROUP BY one group, even of no rows) */
  int *sel = malloc(((size_t)nrows + 1) * sizeof *sel), nsel = 0;
  acc(*accs)[MAX_AGGS] = calloc((size_t)nrows + 1, sizeof *accs);
  int *first = malloc(((size_t)nrows + 1) * sizeof *first), ngroups = 0; /* a row of each group */
  if (!sel || !accs || !first) {
    CHECK(0, "out of memory");
    free(sel);
    free(accs);
    free(first);
    tbuf_free(&sql);
    return;
  }
  for (int i = 0; i < nrows; i++) {
    const row *r = &rows_[i];
    if (have_where) {
      int a = pred_eval(&w1, r), b = pred_eval(&w2, r);
      int v = where_or ? (a == 1 || b == 1 ? 1 : (a == 0 && b == 0 ? 0 : -1))
                       : (a == 0 || b == 0 ? 0 : (a == 1 && b == 1 ? 1 : -1));
      if (v != 1) continue;
    }
    sel[nsel++] = i;
  }
  sort_nkeys = nkeys;
  sort_keys[0] = ks[0];
  sort_keys[1] = ks[1];
  qsort(sel, (size_t)nsel, sizeof *sel, cmp_rows);
  if (nkeys == 0) ngroups = 1;
  for (int j = 0; j < nsel; j++) {
    if (nkeys > 0 && (j == 0 || cmp_rows(&sel[j - 1], &sel[j]) != 0)) first[ngroups++] = sel[j];
    const row *r = &rows_[sel[j]];
    for (int k = 0; k < nagg; k++) {
      acc *a = &accs[ngroups - 1][k];
      a->rows++;
      i128 v;
      if (!vals[k] || !value_eval(vals[k], r, &v)) continue;
      if (a->count == 0 || v < a->min) a->min = v;
      if (a->count == 0 || v > a->max) a->max = v;
      a->sum += v;
      a->count++;
    }
  }

  /* the tool and the library */
  char *msg = NULL;
  size_t msglen = 0;
  FILE *errf = open_memstream(&msg, &msglen);
  select_plan p;
  int built = select_plan_build(ctx, t, text, strlen(text), &p, errf) == 0;
  fclose(errf);
  CHECK(built, "%s\n%s", text, msg);
  free(msg);
  ps_query_result *res = NULL;
  char err[TOOL_ERR_SIZE];
  if (!built) {
  } else if (select_plan_run(&p, &res, err, sizeof err)) {
    CHECK(0, "%s: %s", text, err);
  } else {
    uint64_t ng = ps_query_result_groups(res);
    CHECK(ng == (uint64_t)ngroups, "%s: %llu groups, expected %d", text, (unsigned long long)ng, ngroups);
    for (int j = 0; j < ngroups && (uint64_t)j < ng; j++) {
      ps_datum d;
      for (int k = 0; k < nkeys; k++) {
        const row *r = &rows_[first[j]];
        int kk = ks[k], ok = ps_query_result_key(res, (uint64_t)j, (uint32_t)k, &d) == PS_OK;
        if (kk == K_S && !r->s_null)
          ok = ok && !d.is_null && d.str && d.str_len == strlen(strs[r->s]) && !memcmp(d.str, strs[r->s], d.str_len);
        else
          ok = ok && datum_equals(&d, key_null(r, kk), key_val(r, kk), kk == K_Y ? 2 : 0);
        CHECK(ok, "%s: group %d: key %s", text, j, key_names[kk]);
      }
      for (int k = 0; k < nagg; k++) {
        int is_null, scale;
        i128 v;
        agg_result(kinds[k], &accs[j][k], vals[k] ? value_scale(vals[k]) : 0, &is_null, &v, &scale);
        int ok =
            ps_query_result_value(res, (uint64_t)j, (uint32_t)k, &d) == PS_OK && datum_equals(&d, is_null, v, scale);
        if (!ok) {
          char want[48], got[PS_DATUM_TEXT_SIZE] = "?";
          show128(v, want);
          ps_datum_format(&d, got, sizeof got);
          CHECK(0, "%s\n  group %d, aggregate %d: got %s (scale %u), expected %s%s at scale %d", text, j, k, got,
                d.scale, is_null ? "NULL " : "", want, scale);
        }
      }
    }
  }
  ps_query_result_destroy(res);
  if (built) select_plan_free(&p);
  free(sel);
  free(accs);
  free(first);
  tbuf_free(&sql);
}

/* ---- hand-checked output and binding errors ---- */

static void known_answers(ps_context *ctx) {
  const char *csv =
      "g,s,x,y,dt\n"
      "1,kiwi,10,1.50,2024-01-01\n"
      "1,apple,-5,,2024-01-02\n"
      "2,kiwi,,2.25,2024-01-03\n"
      ",fig,7,-0.75,\n"
      "2,,3,1.00,2024-01-05\n";
  uint8_t *file = NULL;
  tbl_table *t = test_make_table(csv, TYPES, &file);
  CHECK(t != NULL, "the small table");
  if (!t) return;
  static const struct {
    const char *sql;
    out_format fmt;
    const char *want;
  } cases[] = {
      {"SELECT g, count(*), count(x), sum(x), sum(y * 2), avg(y), min(dt), max(s) GROUP BY g", OUT_FORMAT_CSV,
       "g,count(*),count(x),sum(x),sum(y * 2),avg(y),min(dt),max(s)\n"
       "1,2,2,5,3.00,1.500000,2024-01-01,kiwi\n"
       "2,2,1,3,6.50,1.625000,2024-01-03,kiwi\n"
       ",1,1,7,-1.50,-0.750000,,fig\n"},
      {"select count(*) as n, sum(x) total from t where x > 100;", OUT_FORMAT_CSV, "n,total\n0,\n"},
      {"SELECT dt, count(*) WHERE g = 1 GROUP BY dt", OUT_FORMAT_CSV, "dt,count(*)\n2024-01-01,1\n2024-01-02,1\n"},
      {"SELECT y, count(*), sum(y) GROUP BY y", OUT_FORMAT_CSV,
       "y,count(*),sum(y)\n-0.75,1,-0.75\n1.00,1,1.00\n1.50,1,1.50\n2.25,1,2.25\n,1,\n"},
      {"SELECT s, sum(CASE WHEN y IS NULL THEN 1 ELSE 0 END) AS no_y, sum(x * y) GROUP BY s", OUT_FORMAT_CSV,
       "s,no_y,sum(x * y)\napple,1,\nfig,0,-5.25\nkiwi,0,15.00\n,0,3.00\n"},
      {"SELECT s, g, count(*) WHERE dt >= '2024-01-02' GROUP BY s, g", OUT_FORMAT_TABLE,
       " s     | g | count(*)\n"
       "-------+---+----------\n"
       " apple | 1 |        1\n"
       " kiwi  | 2 |        1\n"
       " NULL  | 2 |        1\n"},
      {"SELECT g, max(s), sum(-x + 0.5) GROUP BY g", OUT_FORMAT_JSON,
       "{\"g\":1,\"max(s)\":\"kiwi\",\"sum(-x + 0.5)\":-4.0}\n"
       "{\"g\":2,\"max(s)\":\"kiwi\",\"sum(-x + 0.5)\":-2.5}\n"
       "{\"g\":null,\"max(s)\":\"fig\",\"sum(-x + 0.5)\":-6.5}\n"},
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++)
    test_select_expect(ctx, t, NULL, cases[i].sql, cases[i].fmt, cases[i].want);
  /* binding errors: where, and what */
  static const struct {
    const char *sql;
    const char *want; /* a substring of the message, which starts "error at column N" */
  } bad[] = {
      {"SELECT sum(nope)", "error at column 12: unknown column 'nope'"},
      {"SELECT sum(x + s)", "error at column 16: column 's' is a string"},
      {"SELECT g, count(*) GROUP BY x", "error at column 8: column 'g' is neither inside an aggregate nor in GROUP BY"},
      {"SELECT count(*) GROUP BY g, G", "error at column 29: column 'g' is twice in GROUP BY"},
      {"SELECT count(*) GROUP BY zz", "error at column 26: unknown column 'zz'"},
      {"SELECT sum(x) WHERE s = 5", "error at column 25: type mismatch"},
      {"SELECT sum(CASE WHEN zz > 1 THEN 1 END)", "error at column 22: unknown column 'zz'"},
      {"SELECT sum(CASE WHEN x > 1 THEN 1 ELSE s END)", "error at column 40: column 's' is a string"},
  };
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) test_select_error(ctx, t, bad[i].sql, bad[i].want);
  tbl_close(t);
  free(file);
}

int main(int argc, char **argv) {
  ps_context *ctx;
  const int started = test_start(argc, argv, &ctx);
  if (started) return started;
  known_answers(ctx);
  static const int sizes[] = {0, 1, 31, 32, 33, 1000, 4099};
  /* Under compute-sanitizer (the sanitizer size) each new statement shape is
   * another run-time compiled module to instrument: fewer per table there. */
  const int statements = test_quick() == 2 ? 6 : 40;
  for (size_t i = 0; i < sizeof sizes / sizeof *sizes && failures < 20; i++) {
    tbuf csv = {0};
    random_table(&csv, sizes[i]);
    uint8_t *file = NULL;
    tbl_table *t = test_make_table((char *)csv.p, TYPES, &file);
    CHECK(t != NULL, "table of %d rows", sizes[i]);
    for (int q = 0; t && q < statements && failures < 20; q++) random_statement(ctx, t);
    tbl_close(t);
    free(file);
    tbuf_free(&csv);
  }
  free(rows_);
  ps_context_destroy(ctx);
  return test_finish("SELECT end to end", argv[1]);
}
