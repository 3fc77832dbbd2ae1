/* The query cases of issue 14 through the query API (ps_query_*): SSB Q1.1,
 * Q1.2, Q1.3 on lineorder, TPC-H Q6 and Q1 on lineitem. Each is prepared once
 * (ps_query_create, untimed), timed as ps_query_run (one fused pass, the
 * result on the host), checked exactly against the answers computed when the
 * table was generated, and compared with the naive pipeline: ps_gather_values_device of
 * every column the query reads into plain 32-bit arrays (the decompress step),
 * then the same query over those arrays as byte-aligned columns. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_tables.h"
#include "internal_options.h"

#define Q_MAX_COLS 8
#define Q_MAX_AGGS 8

typedef struct qcase {
  const char *name;
  const char *note;
  int ncols;
  bench_tcol *cols[Q_MAX_COLS]; /* what the query reads */
} qcase;

/* Everything one query owns: its predicate, values and the prepared query. */
typedef struct qbuilt {
  ps_expr *where;
  ps_value *values[Q_MAX_AGGS];
  ps_agg aggs[Q_MAX_AGGS];
  ps_query *query;
} qbuilt;

static void qbuilt_free(qbuilt *q) {
  ps_query_destroy(q->query);
  for (int i = 0; i < Q_MAX_AGGS; i++) ps_value_destroy(q->values[i]);
  ps_expr_destroy(q->where);
  memset(q, 0, sizeof *q);
}

static ps_status col_value(ps_context *ctx, ps_column *c, ps_value **out) { return ps_value_column(ctx, c, out); }

/* a op b, taking a and b (freed on failure too). */
static ps_status arith(ps_context *ctx, ps_arith op, ps_value *a, ps_value *b, ps_value **out) {
  ps_status st = a && b ? ps_value_arith(ctx, op, a, b, out) : PS_ERR_OUT_OF_MEMORY;
  if (st != PS_OK) {
    ps_value_destroy(a);
    ps_value_destroy(b);
  }
  return st;
}

static ps_value *one(ps_context *ctx) {
  ps_value *v = NULL;
  return ps_value_decimal(ctx, 1, 0, 0, &v) == PS_OK ? v : NULL;
}

static ps_value *column(ps_context *ctx, ps_column *c) {
  ps_value *v = NULL;
  return col_value(ctx, c, &v) == PS_OK ? v : NULL;
}

/* The queries over columns cols[] in the order of their qcase. */
static ps_status build_query(ps_context *ctx, int which, ps_column **c, uint64_t n, qbuilt *q) {
  ps_query_desc d;
  ps_query_desc_init(&d);
  d.rows = n;
  ps_status st = PS_OK;
  if (which < SSB_QUERIES) { /* cols: orderdate, quantity, discount, extendedprice */
    st = bench_ssb_where(ctx, c[0], c[1], c[2], which, &q->where);
    if (st == PS_OK) st = arith(ctx, PS_MUL, column(ctx, c[3]), column(ctx, c[2]), &q->values[0]);
    q->aggs[0].kind = PS_AGG_SUM;
    d.n_aggs = 1;
  } else if (which == SSB_QUERIES) { /* Q6. cols: shipdate, discount, quantity, extendedprice */
    ps_expr *a = NULL, *b = NULL, *e = NULL, *ab = NULL;
    st = ps_expr_between(ctx, c[0], ps_lit_int(bench_days(1994, 1, 1)), ps_lit_int(bench_days(1994, 12, 31)), &a);
    if (st == PS_OK) st = ps_expr_between(ctx, c[1], ps_lit_float(0.05), ps_lit_float(0.07), &b);
    if (st == PS_OK) st = ps_expr_compare(ctx, c[2], PS_LT, ps_lit_int(24), &e);
    if (st == PS_OK) st = ps_expr_and(ctx, a, b, &ab);
    if (st == PS_OK) {
      a = b = NULL;
      st = ps_expr_and(ctx, ab, e, &q->where);
    }
    if (st == PS_OK) ab = e = NULL;
    ps_expr_destroy(a);
    ps_expr_destroy(b);
    ps_expr_destroy(e);
    ps_expr_destroy(ab);
    if (st == PS_OK) st = arith(ctx, PS_MUL, column(ctx, c[3]), column(ctx, c[1]), &q->values[0]);
    q->aggs[0].kind = PS_AGG_SUM;
    d.n_aggs = 1;
  } else { /* Q1. cols: shipdate, quantity, extendedprice, discount, tax, returnflag, linestatus */
    st = ps_expr_compare(ctx, c[0], PS_LE, ps_lit_int(bench_days(1998, 12, 1) - 90), &q->where);
    ps_value *m = NULL, *dp = NULL, *p = NULL;
    if (st == PS_OK) st = col_value(ctx, c[1], &q->values[0]); /* sum_qty */
    if (st == PS_OK) st = col_value(ctx, c[2], &q->values[1]); /* sum_base_price */
    if (st == PS_OK) st = arith(ctx, PS_SUB, one(ctx), column(ctx, c[3]), &m);
    if (st == PS_OK) st = arith(ctx, PS_MUL, column(ctx, c[2]), m, &q->values[2]); /* sum_disc_price */
    if (st == PS_OK) st = arith(ctx, PS_SUB, one(ctx), column(ctx, c[3]), &m);
    if (st == PS_OK) st = arith(ctx, PS_MUL, column(ctx, c[2]), m, &dp);
    if (st == PS_OK) {
      st = arith(ctx, PS_ADD, one(ctx), column(ctx, c[4]), &p);
      if (st == PS_OK)
        st = arith(ctx, PS_MUL, dp, p, &q->values[3]); /* sum_charge */
      else
        ps_value_destroy(dp);
    }
    if (st == PS_OK) st = col_value(ctx, c[1], &q->values[4]); /* avg_qty */
    if (st == PS_OK) st = col_value(ctx, c[2], &q->values[5]); /* avg_price */
    if (st == PS_OK) st = col_value(ctx, c[3], &q->values[6]); /* avg_disc */
    static const ps_agg_kind kinds[Q_MAX_AGGS] = {PS_AGG_SUM, PS_AGG_SUM, PS_AGG_SUM, PS_AGG_SUM,
                                                  PS_AGG_AVG, PS_AGG_AVG, PS_AGG_AVG, PS_AGG_COUNT_STAR};
    for (int i = 0; i < Q_MAX_AGGS; i++) q->aggs[i].kind = kinds[i];
    d.n_aggs = 8;
    d.n_keys = 2;
    d.keys[0] = c[5];
    d.keys[1] = c[6];
  }
  for (uint32_t i = 0; i < d.n_aggs; i++) q->aggs[i].value = q->values[i];
  d.where = q->where;
  d.aggs = q->aggs;
  if (st == PS_OK) st = ps_query_create(ctx, &d, &q->query);
  return st;
}

/* ---- checks ---- */

static bench_i128 p10(int k) {
  bench_i128 r = 1;
  while (k-- > 0) r *= 10;
  return r;
}

static int datum_is(const ps_datum *d, bench_i128 v, int scale) {
  if (d->is_null) return 0;
  bench_i128 got = (bench_i128)(((unsigned __int128)(uint64_t)d->hi << 64) | d->lo);
  int s = (int)d->scale;
  if (s < scale) got *= p10(scale - s);
  if (scale < s) v *= p10(s - scale);
  return got == v;
}

/* The exact sum / count at scale max(s, 6), rounded half away from zero. */
static bench_i128 avg_of(bench_i128 sum, int s, uint64_t count, int *scale) {
  int S = s > PS_QUERY_AVG_MIN_SCALE ? s : PS_QUERY_AVG_MIN_SCALE;
  bench_i128 num = sum * p10(S - s), c = (bench_i128)count, mag = num < 0 ? -num : num;
  bench_i128 q = (2 * mag + c) / (2 * c);
  *scale = S;
  return num < 0 ? -q : q;
}

static int check_result(const bench_tables *t, int which, const ps_query_result *r, char *why, size_t n) {
  ps_datum d;
  if (which <= SSB_QUERIES) {
    bench_i128 want = which < SSB_QUERIES ? t->ssb.revenue[which] : t->tpch.q6_revenue;
    int scale = which < SSB_QUERIES ? 0 : 4;
    /* SQL: the SUM of no rows is NULL (a small table may select none) */
    const uint64_t selected = which < SSB_QUERIES ? t->ssb.count[which] : t->tpch.q6_count;
    if (ps_query_result_groups(r) != 1 || ps_query_result_value(r, 0, 0, &d) != PS_OK ||
        (selected ? !datum_is(&d, want, scale) : !d.is_null)) {
      char got[PS_DATUM_TEXT_SIZE] = "?";
      ps_datum_format(&d, got, sizeof got);
      snprintf(why, n, "revenue %s differs from the host's exact sum", got);
      return 0;
    }
    return 1;
  }
  uint64_t g = 0;
  for (int f = 0; f < 3; f++)
    for (int s = 0; s < 2; s++) {
      const tpch_group *e = &t->tpch.q1[f][s];
      if (e->count == 0) continue;
      int sc[3];
      bench_i128 avg_qty = avg_of(e->sum_qty, 0, e->count, &sc[0]);
      bench_i128 avg_price = avg_of(e->sum_base, 2, e->count, &sc[1]);
      bench_i128 avg_disc = avg_of(e->sum_disc, 2, e->count, &sc[2]);
      const bench_i128 want[8] = {e->sum_qty, e->sum_base, e->sum_disc_price, e->sum_charge,
                                  avg_qty,    avg_price,   avg_disc,          (bench_i128)e->count};
      const int scale[8] = {0, 2, 4, 6, sc[0], sc[1], sc[2], 0};
      ps_datum k0, k1;
      if (g >= ps_query_result_groups(r) || ps_query_result_key(r, g, 0, &k0) != PS_OK ||
          ps_query_result_key(r, g, 1, &k1) != PS_OK || k0.is_null || k1.is_null || k0.lo != (uint64_t)f ||
          k1.lo != (uint64_t)s) {
        snprintf(why, n, "group %" PRIu64 " is not (%c, %c)", g, "ANR"[f], "FO"[s]);
        return 0;
      }
      for (uint32_t a = 0; a < 8; a++)
        if (ps_query_result_value(r, g, a, &d) != PS_OK || !datum_is(&d, want[a], scale[a])) {
          char got[PS_DATUM_TEXT_SIZE] = "?";
          ps_datum_format(&d, got, sizeof got);
          snprintf(why, n, "group (%c, %c), aggregate %u: %s differs from the host's", "ANR"[f], "FO"[s], a, got);
          return 0;
        }
      g++;
    }
  if (g != ps_query_result_groups(r)) {
    snprintf(why, n, "%" PRIu64 " groups, the host has %" PRIu64, ps_query_result_groups(r), g);
    return 0;
  }
  return 1;
}

/* ---- timing ---- */

typedef struct qrun {
  ps_context *ctx;
  ps_query *query;
  ps_query_result *last;
  /* naive: decode these first */
  int ncols;
  const ps_column *views[Q_MAX_COLS];
  ps_buffer *plain[Q_MAX_COLS];
  const ps_buffer *identity;
  uint64_t n;
} qrun;

static ps_status qrun_once(void *arg) {
  qrun *r = arg;
  for (int i = 0; i < r->ncols; i++) {
    ps_status st =
        ps_gather_values_device(r->ctx, r->views[i], r->identity, 0, PS_INDEX_UINT32, r->n, r->plain[i], 0, NULL, 0);
    if (st != PS_OK) return st;
  }
  ps_query_result_destroy(r->last);
  r->last = NULL;
  return ps_query_run(r->ctx, r->query, &r->last);
}

static void add_note(bench_result *res, const char *text) {
  size_t l = strlen(res->note);
  snprintf(res->note + l, sizeof res->note - l, "%s%s", l ? "; " : "", text);
}

/* The naive pipeline: 32-bit plain arrays of every column (the scaled
 * integers of decimals, dictionary indexes), gathered through an INT32 view
 * of the same packed bytes, then the query over those as byte-aligned FOR
 * columns (width 32, reference 0; every value here is nonnegative). */
static void run_naive(bench *b, const bench_tables *t, int which, const qcase *c, bench_result *res) {
  uint64_t n = t->n;
  if (n > UINT32_MAX) {
    add_note(res, "naive: n/a above 2^32 rows (uint32 ids)");
    return;
  }
  qrun r;
  memset(&r, 0, sizeof r);
  r.ctx = b->ctx;
  r.n = n;
  r.ncols = c->ncols;
  ps_buffer *identity = NULL;
  ps_column *views[Q_MAX_COLS] = {0}, *plain_cols[Q_MAX_COLS] = {0};
  qbuilt q;
  memset(&q, 0, sizeof q);
  ps_status st = ps_buffer_create(b->ctx, n * 4 + 4, &identity);
  uint32_t *stage = st == PS_OK ? malloc((UINT64_C(1) << 22) * 4) : NULL;
  if (st == PS_OK && !stage) st = PS_ERR_OUT_OF_MEMORY;
  for (uint64_t i0 = 0; st == PS_OK && i0 < n; i0 += UINT64_C(1) << 22) {
    uint64_t len = n - i0 < (UINT64_C(1) << 22) ? n - i0 : UINT64_C(1) << 22;
    for (uint64_t i = 0; i < len; i++) stage[i] = (uint32_t)(i0 + i);
    st = ps_buffer_write(b->ctx, identity, i0 * 4, stage, len * 4);
  }
  free(stage);
  r.identity = identity;
  for (int i = 0; st == PS_OK && i < c->ncols; i++) {
    const bench_tcol *tc = c->cols[i];
    ps_for_desc v = tc->desc, p = tc->desc;
    v.type = tc->is_dict ? PS_TYPE_UINT32 : PS_TYPE_INT32;
    v.scale = 0;
    p.width = 32;
    p.reference.u = 0;
    p.data_size = n * 4;
    p.zones = NULL; /* other codes than the packed column's */
    st = ps_column_create_for_device(b->ctx, &v, tc->data, 0, NULL, 0, &views[i]);
    if (st == PS_OK) st = ps_buffer_create(b->ctx, n * 4 + 4, &r.plain[i]);
    if (st == PS_OK)
      st = tc->is_dict
               ? ps_column_create_dict_device(b->ctx, &tc->dict.dict, &p, r.plain[i], 0, NULL, 0, &plain_cols[i])
               : ps_column_create_for_device(b->ctx, &p, r.plain[i], 0, NULL, 0, &plain_cols[i]);
    r.views[i] = views[i];
  }
  if (st == PS_OK) st = build_query(b->ctx, which, plain_cols, n, &q);
  r.query = q.query;
  if (st == PS_OK) st = bench_time(b, qrun_once, &r, &res->naive);
  if (st == PS_OK) {
    res->have_naive = 1;
    char why[160] = "";
    if (!r.last || !check_result(t, which, r.last, why, sizeof why)) {
      res->check = "FAIL";
      add_note(res, "naive result differs");
    }
  } else {
    char msg[200];
    snprintf(msg, sizeof msg, "naive: %s", ps_context_last_error(b->ctx));
    add_note(res, msg);
  }
  ps_query_result_destroy(r.last);
  qbuilt_free(&q);
  for (int i = 0; i < c->ncols; i++) {
    ps_column_destroy(plain_cols[i]);
    ps_column_destroy(views[i]);
    ps_buffer_destroy(r.plain[i]);
  }
  ps_buffer_destroy(identity);
}

static int wanted_case(const bench *b, const char *name) {
  if (!b->cases || !b->cases[0]) return 1;
  size_t len = strlen(name);
  for (const char *p = b->cases; *p;) {
    const char *end = strchr(p, ',');
    size_t l = end ? (size_t)(end - p) : strlen(p);
    if (l == len && strncmp(p, name, len) == 0) return 1;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}

void bench_run_queries(bench *b, bench_tables *t) {
  bench_tcol *lo = t->lo, *li = t->li;
  const qcase cases[SSB_QUERIES + 2] = {
      {"ssb_q1_1",
       "SUM(lo_extendedprice*lo_discount), year 1993, discount 1-3, quantity < 25",
       4,
       {&lo[LO_ORDERDATE], &lo[LO_QUANTITY], &lo[LO_DISCOUNT], &lo[LO_EXTENDEDPRICE]}},
      {"ssb_q1_2",
       "the same, January 1994, discount 4-6, quantity 26-35",
       4,
       {&lo[LO_ORDERDATE], &lo[LO_QUANTITY], &lo[LO_DISCOUNT], &lo[LO_EXTENDEDPRICE]}},
      {"ssb_q1_3",
       "the same, week 6 of 1994, discount 5-7, quantity 26-35",
       4,
       {&lo[LO_ORDERDATE], &lo[LO_QUANTITY], &lo[LO_DISCOUNT], &lo[LO_EXTENDEDPRICE]}},
      {"tpch_q6",
       "SUM(l_extendedprice*l_discount), 1994, discount 0.05-0.07, quantity < 24",
       4,
       {&li[LI_SHIPDATE], &li[LI_DISCOUNT], &li[LI_QUANTITY], &li[LI_EXTENDEDPRICE]}},
      {"tpch_q1",
       "8 aggregates GROUP BY l_returnflag, l_linestatus",
       7,
       {&li[LI_SHIPDATE], &li[LI_QUANTITY], &li[LI_EXTENDEDPRICE], &li[LI_DISCOUNT], &li[LI_TAX], &li[LI_RETURNFLAG],
        &li[LI_LINESTATUS]}},
  };
  for (int which = 0; which < SSB_QUERIES + 2; which++) {
    const qcase *c = &cases[which];
    if (!wanted_case(b, c->name)) continue;
    if (which <= SSB_QUERIES - 1 ? !t->have_lineorder : !t->have_lineitem) continue;
    if (b->n_results >= BENCH_MAX_CASES) return;
    bench_result *res = &b->results[b->n_results++];
    memset(res, 0, sizeof *res);
    snprintf(res->name, sizeof res->name, "%s", c->name);
    res->rows = t->n;
    res->width = -1;
    res->check = "FAIL";
    ps_column *cols[Q_MAX_COLS];
    for (int i = 0; i < c->ncols; i++) {
      cols[i] = c->cols[i]->col;
      res->bytes += (double)c->cols[i]->desc.data_size;
    }
    res->count = which < SSB_QUERIES ? t->ssb.count[which] : which == SSB_QUERIES ? t->tpch.q6_count : 0;
    if (which == SSB_QUERIES + 1)
      for (int f = 0; f < 3; f++) res->count += t->tpch.q1[f][0].count + t->tpch.q1[f][1].count;
    res->selectivity = (double)res->count / (double)t->n;
    qbuilt q;
    memset(&q, 0, sizeof q);
    qrun r;
    memset(&r, 0, sizeof r);
    r.ctx = b->ctx;
    ps_status st = build_query(b->ctx, which, cols, t->n, &q);
    r.query = q.query;
    /* The first run of this query shape on the context, by the host clock
     * (the result is on the host when it returns): what an engine's ad-hoc
     * query waits, a kernel compile included where the run waits for one.
     * Then every build it started in the background is let finish, so that
     * the timed runs all take the same kernel. */
    double first_ms = 0;
    if (st == PS_OK) {
      double t0 = bench_now_ms();
      st = ps_query_run(b->ctx, q.query, &r.last);
      first_ms = bench_now_ms() - t0;
      ps_context_wait_builds(b->ctx, 0);
    }
    if (st == PS_OK) st = bench_time(b, qrun_once, &r, &res->t);
    if (st != PS_OK) {
      bench_result_failed(b, res, st);
    } else {
      char why[160] = "";
      res->check = r.last && check_result(t, which, r.last, why, sizeof why) ? "ok" : "FAIL";
      snprintf(res->note, sizeof res->note, "%s", res->check[0] == 'o' ? c->note : why);
      char first[64];
      snprintf(first, sizeof first, "first run %.1f ms", first_ms);
      add_note(res, first);
      run_naive(b, t, which, c, res);
    }
    ps_query_result_destroy(r.last);
    qbuilt_free(&q);
    bench_print_result(b, res);
  }
}

/* ---- GROUP BY of many groups ---------------------------------------------------- */

/* GROUP BY keys of more possible values than a table of every key holds
 * (PS_QUERY_MAX_GROUPS): the run collects the distinct keys, numbers them,
 * then aggregates. groups_date_qty: l_shipdate, l_quantity (about 10^5
 * groups); groups_price: l_extendedprice (10^5..10^6 groups by the rows).
 * Checked: the groups' COUNT(*) add up to the rows, the keys ascend. */
static uint32_t d_keys(int which) { return which == 0 ? 2u : 1u; }

/* Whether keys k (numbers, no NULL here) come after keys p in key order. */
static int keys_after(const ps_datum *k, const ps_datum *p, uint32_t n) {
  for (uint32_t j = 0; j < n; j++) {
    const bench_i128 a = (bench_i128)(((unsigned __int128)(uint64_t)k[j].hi << 64) | k[j].lo);
    const bench_i128 c = (bench_i128)(((unsigned __int128)(uint64_t)p[j].hi << 64) | p[j].lo);
    if (a != c) return a > c;
  }
  return 0;
}

void bench_run_groups(bench *b, bench_tables *t) {
  if (!t->have_lineitem) return;
  bench_tcol *li = t->li;
  static const char *const names[2] = {"groups_date_qty", "groups_price"};
  for (int which = 0; which < 2; which++) {
    if (!wanted_case(b, names[which]) || b->n_results >= BENCH_MAX_CASES) continue;
    bench_result *res = &b->results[b->n_results++];
    memset(res, 0, sizeof *res);
    snprintf(res->name, sizeof res->name, "%s", names[which]);
    res->rows = t->n;
    res->width = -1;
    res->check = "FAIL";
    res->count = t->n;
    res->selectivity = 1;
    bench_tcol *k0 = which == 0 ? &li[LI_SHIPDATE] : &li[LI_EXTENDEDPRICE], *k1 = &li[LI_QUANTITY];
    bench_tcol *v = which == 0 ? &li[LI_EXTENDEDPRICE] : &li[LI_DISCOUNT];
    res->bytes = (double)k0->desc.data_size + (double)v->desc.data_size + (which == 0 ? (double)k1->desc.data_size : 0);
    ps_value *x = NULL;
    ps_query *q = NULL;
    ps_status st = ps_value_column(b->ctx, v->col, &x);
    if (st == PS_OK) {
      ps_agg aggs[3] = {{PS_AGG_COUNT_STAR, NULL}, {PS_AGG_SUM, x}, {PS_AGG_MAX, x}};
      ps_query_desc d;
      ps_query_desc_init(&d);
      d.rows = t->n;
      d.n_keys = which == 0 ? 2 : 1;
      d.keys[0] = k0->col;
      d.keys[1] = k1->col;
      d.n_aggs = 3;
      d.aggs = aggs;
      st = ps_query_create(b->ctx, &d, &q);
    }
    qrun r;
    memset(&r, 0, sizeof r);
    r.ctx = b->ctx;
    r.query = q;
    double first_ms = 0;
    if (st == PS_OK) {
      double t0 = bench_now_ms();
      st = ps_query_run(b->ctx, q, &r.last);
      first_ms = bench_now_ms() - t0;
      ps_context_wait_builds(b->ctx, 0);
    }
    if (st == PS_OK) st = bench_time(b, qrun_once, &r, &res->t);
    if (st != PS_OK) {
      bench_result_failed(b, res, st);
    } else {
      const uint64_t groups = ps_query_result_groups(r.last);
      uint64_t rows = 0;
      int ascending = 1;
      ps_datum prev[2];
      for (uint64_t g = 0; g < groups; g++) {
        ps_datum c, k[2];
        ps_query_result_value(r.last, g, 0, &c);
        rows += c.lo;
        for (uint32_t j = 0; j < d_keys(which); j++) ps_query_result_key(r.last, g, j, &k[j]);
        if (g && !keys_after(k, prev, d_keys(which))) ascending = 0;
        memcpy(prev, k, sizeof prev);
      }
      res->check = rows == t->n && ascending ? "ok" : "FAIL";
      snprintf(res->note, sizeof res->note, "%" PRIu64 " groups%s; first run %.1f ms", groups,
               rows != t->n ? ", COUNT(*) do not add up to the rows"
               : !ascending ? ", keys out of order"
                            : "",
               first_ms);
    }
    ps_query_result_destroy(r.last);
    ps_query_destroy(q);
    ps_value_destroy(x);
    bench_print_result(b, res);
  }
}

/* ---- zone maps ------------------------------------------------------------------ */

static void fmt_mb(double bytes, char *out, size_t n) { snprintf(out, n, "%.2f MB", bytes / 1e6); }

typedef struct zrange {
  ps_context *ctx;
  ps_expr *where;
  ps_buffer *bitmap;
  uint64_t count;
} zrange;

static ps_status zrange_once(void *arg) {
  zrange *r = arg;
  return ps_filter_device(r->ctx, r->where, r->bitmap, 0, &r->count);
}

/* The bytes one call reads, from the library's count. */
static double bytes_of_one(bench *b, ps_status (*fn)(void *), void *arg) {
  ps_scan_stats s0 = {sizeof s0, 0, 0, 0, 0}, s1 = s0;
  ps_context_scan_stats(b->ctx, &s0);
  if (fn(arg) != PS_OK) return -1;
  ps_context_scan_stats(b->ctx, &s1);
  return (double)(s1.bytes_read - s0.bytes_read);
}

static void zone_cases(bench *b, bench_tables *t, int prune) {
  bench_tcol *lo = t->lo, *li = t->li;
  static const char *const names[] = {"zones_ssb_q1_1", "zones_ssb_q1_2", "zones_ssb_q1_3", "zones_tpch_q6",
                                      "zones_range_1pct"};
  ps_context_set_zone_pruning(b->ctx, prune);
  for (int which = 0; which < 5; which++) {
    if (!wanted_case(b, names[which]) || b->n_results >= BENCH_MAX_CASES) continue;
    bench_result *res = &b->results[b->n_results++];
    memset(res, 0, sizeof *res);
    snprintf(res->name, sizeof res->name, "%s.%s.%s", names[which], t->sorted ? "sorted" : "unsorted",
             prune ? "on" : "off");
    res->rows = t->n;
    res->width = -1;
    res->check = "FAIL";
    bench_tcol *cols[4] = {&lo[LO_ORDERDATE], &lo[LO_QUANTITY], &lo[LO_DISCOUNT], &lo[LO_EXTENDEDPRICE]};
    if (which == SSB_QUERIES)
      cols[0] = &li[LI_SHIPDATE], cols[1] = &li[LI_DISCOUNT], cols[2] = &li[LI_QUANTITY],
      cols[3] = &li[LI_EXTENDEDPRICE];
    int ncols = which == 4 ? 1 : 4;
    ps_column *c[4];
    for (int i = 0; i < ncols; i++) {
      c[i] = cols[i]->col;
      res->bytes += (double)cols[i]->desc.data_size;
    }
    ps_status st;
    char why[200] = "";
    if (which < 4) {
      res->count = which < SSB_QUERIES ? t->ssb.count[which] : t->tpch.q6_count;
      qbuilt q;
      memset(&q, 0, sizeof q);
      qrun r;
      memset(&r, 0, sizeof r);
      r.ctx = b->ctx;
      st = build_query(b->ctx, which, c, t->n, &q);
      r.query = q.query;
      if (st == PS_OK) {
        st = ps_query_run(b->ctx, q.query, &r.last);
        ps_context_wait_builds(b->ctx, 0);
      }
      if (st == PS_OK) st = bench_time(b, qrun_once, &r, &res->t);
      if (st == PS_OK) {
        res->bytes_read = bytes_of_one(b, qrun_once, &r);
        res->have_bytes_read = res->bytes_read >= 0;
        res->check = r.last && check_result(t, which, r.last, why, sizeof why) ? "ok" : "FAIL";
      }
      ps_query_result_destroy(r.last);
      qbuilt_free(&q);
    } else {
      zrange r = {b->ctx, NULL, NULL, 0};
      res->count = t->ssb.range_1pct;
      st = ps_expr_between(b->ctx, c[0], ps_lit_int(19950101), ps_lit_int(19950124), &r.where);
      if (st == PS_OK) st = ps_buffer_create(b->ctx, (t->n + 31) / 32 * 4, &r.bitmap);
      if (st == PS_OK) st = bench_time(b, zrange_once, &r, &res->t);
      if (st == PS_OK) {
        res->bytes_read = bytes_of_one(b, zrange_once, &r);
        res->have_bytes_read = res->bytes_read >= 0;
        res->check = r.count == t->ssb.range_1pct ? "ok" : "FAIL";
        if (r.count != t->ssb.range_1pct)
          snprintf(why, sizeof why, "count %" PRIu64 ", the host's %" PRIu64, r.count, t->ssb.range_1pct);
      }
      ps_expr_destroy(r.where);
      ps_buffer_destroy(r.bitmap);
    }
    res->selectivity = (double)res->count / (double)t->n;
    if (st != PS_OK) {
      snprintf(res->note, sizeof res->note, "%s", ps_context_last_error(b->ctx));
      memset(&res->t, 0, sizeof res->t);
    } else if (res->check[0] != 'o') {
      snprintf(res->note, sizeof res->note, "%s", why);
    } else {
      char rd[32], all[32];
      fmt_mb(res->bytes_read, rd, sizeof rd);
      fmt_mb(res->bytes, all, sizeof all);
      snprintf(res->note, sizeof res->note, "read %s of %s%s", rd, all,
               which == 4 ? ", lo_orderdate BETWEEN 1995-01-01 AND 1995-01-24 to a bitmap" : "");
    }
    bench_print_result(b, res);
  }
  ps_context_set_zone_pruning(b->ctx, 1);
}

void bench_run_zones(bench *b) {
  /* only when named: two more pairs of tables */
  if (!b->cases || !b->cases[0] || !strstr(b->cases, "zones_")) return;
  for (int sorted = 0; sorted <= 1; sorted++) {
    bench_tables t;
    printf("\n");
    ps_status st = bench_tables_create_sorted(b, b->table_rows, sorted, &t);
    if (st != PS_OK) {
      fprintf(stderr, "bench: generating the %s tables: %s\n", sorted ? "sorted" : "unsorted", ps_status_name(st));
      return;
    }
    bench_print_header(b);
    zone_cases(b, &t, 0);
    zone_cases(b, &t, 1);
    bench_tables_destroy(&t);
  }
}

/* ---- several devices ------------------------------------------------------------ */

/* multi_ssb_q1_1, multi_tpch_q1 (columns in each device's memory) and
 * multi_host_ssb_q1_1, multi_host_tpch_q1 (host-resident columns in pinned
 * memory where the backend has it, each device streaming its part through
 * device_memory_limit / 3 staging buffers of its own): the query on a context
 * over --devices (default 0,0: two contexts of one device), against the same
 * query on the one-device context of this run, both by the host clock (the
 * result is on the host when ps_query_run returns), medians. The columns are
 * the tables' own, read back and made again on the devices' context.
 * host_ssb_q1_1, host_tpch_q1: the host-resident form on a context of the
 * bench's device alone whose device_memory_limit is a twentieth of
 * the packed columns, against the pinned host-to-device copy of this run.
 * Each timed by the host clock after b->warmup runs, the first of which
 * starts the query's specialized build and waits for it. */
static double host_median_ms(bench *b, ps_context *ctx, ps_query *q, ps_query_result **last, ps_status *st) {
  double t[BENCH_MAX_REPS];
  const int reps = b->reps < BENCH_MAX_REPS ? b->reps : BENCH_MAX_REPS;
  for (int i = 0; *st == PS_OK && i < b->warmup + reps; i++) {
    ps_query_result_destroy(*last);
    *last = NULL;
    const double t0 = bench_now_ms();
    *st = ps_query_run(ctx, q, last);
    if (i >= b->warmup) t[i - b->warmup] = bench_now_ms() - t0;
    /* the query's kernel, built in the background on the first run, for
     * every timed run (as bench_run_queries does) */
    if (i == 0) ps_context_wait_builds(ctx, 0);
  }
  if (*st != PS_OK) return 0;
  for (int i = 1; i < reps; i++)
    for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
      const double x = t[j];
      t[j] = t[j - 1], t[j - 1] = x;
    }
  return reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
}

static int parse_devices(const char *s, int32_t *out) {
  int n = 0;
  for (const char *p = s; p && *p && n < PS_MAX_DEVICE_COUNT;) {
    char *end = NULL;
    const long v = strtol(p, &end, 10);
    if (end == p) return 0;
    out[n++] = (int32_t)v;
    p = *end == ',' ? end + 1 : NULL;
  }
  return n;
}

void bench_run_multi(bench *b, bench_tables *t) {
  static const char *const names[6] = {"multi_ssb_q1_1",      "multi_tpch_q1", "multi_host_ssb_q1_1",
                                       "multi_host_tpch_q1", "host_ssb_q1_1", "host_tpch_q1"};
  int32_t devs[PS_MAX_DEVICE_COUNT];
  double pinned_gbps = -1; /* the pinned host-to-device copy of this run, measured once when needed */
  for (int k = 0; k < 6; k++) {
    if (!b->cases || !wanted_case(b, names[k])) continue; /* only when named */
    const int which = k % 2 == 0 ? 0 : SSB_QUERIES + 1, host = k >= 2, single = k >= 4;
    /* host_*: the bench's device alone, a limit of a twentieth of
     * the packed columns (the target's "20x the limit") */
    const int ndev = single ? 0 : parse_devices(b->devices ? b->devices : "0,0", devs);
    if (which == 0 ? !t->have_lineorder : !t->have_lineitem) continue;
    if (b->n_results >= BENCH_MAX_CASES) return;
    bench_result *res = &b->results[b->n_results++];
    memset(res, 0, sizeof *res);
    snprintf(res->name, sizeof res->name, "%s", names[k]);
    res->rows = t->n;
    res->width = -1;
    res->check = "FAIL";
    bench_tcol *tc[Q_MAX_COLS];
    int nc = 0;
    if (which == 0) {
      bench_tcol *lo = t->lo;
      bench_tcol *c4[4] = {&lo[LO_ORDERDATE], &lo[LO_QUANTITY], &lo[LO_DISCOUNT], &lo[LO_EXTENDEDPRICE]};
      for (nc = 0; nc < 4; nc++) tc[nc] = c4[nc];
    } else {
      bench_tcol *li = t->li;
      bench_tcol *c7[7] = {&li[LI_SHIPDATE], &li[LI_QUANTITY], &li[LI_EXTENDEDPRICE], &li[LI_DISCOUNT],
                           &li[LI_TAX],      &li[LI_RETURNFLAG], &li[LI_LINESTATUS]};
      for (nc = 0; nc < 7; nc++) tc[nc] = c7[nc];
    }
    uint64_t bytes = 0;
    for (int i = 0; i < nc; i++) bytes += tc[i]->desc.data_size;
    res->bytes = (double)bytes;
    ps_context_options o = b->ctx_opts; /* the bench's backend and OpenCL platform */
    o.backend = ps_context_backend(b->ctx);
    o.device_count = (uint32_t)ndev;
    o.devices = ndev ? devs : NULL;
    if (host) o.device_memory_limit = UINT64_C(3) << 28; /* three 256 MiB staging buffers per device */
    if (single) o.device_memory_limit = bytes / 20 > PS_DEVICE_MEMORY_LIMIT_MIN ? bytes / 20 : PS_DEVICE_MEMORY_LIMIT_MIN;
    char err[256] = "";
    ps_context *g = NULL;
    ps_column *cols[Q_MAX_COLS] = {0};
    void *mem[Q_MAX_COLS] = {0};
    int pin[Q_MAX_COLS] = {0}, pinned = host;
    ps_status st = ndev || single ? ps_context_create(&o, err, sizeof err, &g) : PS_ERR_INVALID_ARGUMENT;
    if (!ndev && !single) snprintf(err, sizeof err, "--devices '%s' is not a list of device numbers", b->devices);
    for (int i = 0; st == PS_OK && i < nc; i++) {
      const uint64_t size = tc[i]->desc.data_size;
      mem[i] = host ? bench_pinned_alloc(b, (size_t)(size ? size : 4)) : NULL;
      pin[i] = mem[i] != NULL;
      if (host && !mem[i]) pinned = 0;
      if (!mem[i]) mem[i] = malloc((size_t)(size ? size : 4));
      if (!mem[i]) {
        st = PS_ERR_OUT_OF_MEMORY;
        break;
      }
      if (size) st = ps_buffer_read(b->ctx, tc[i]->data, 0, mem[i], size);
      ps_for_desc d = tc[i]->desc;
      d.data = mem[i];
      if (st != PS_OK) break;
      if (tc[i]->is_dict)
        st = host ? ps_column_create_dict_host(g, &tc[i]->dict.dict, &d, &cols[i])
                  : ps_column_create_dict(g, &tc[i]->dict.dict, &d, &cols[i]);
      else
        st = host ? ps_column_create_for_host(g, &d, &cols[i]) : ps_column_create_for(g, &d, &cols[i]);
      if (st != PS_OK) snprintf(err, sizeof err, "%s", ps_context_last_error(g));
    }
    qbuilt q1, qg;
    memset(&q1, 0, sizeof q1);
    memset(&qg, 0, sizeof qg);
    ps_column *one[Q_MAX_COLS];
    for (int i = 0; i < nc; i++) one[i] = tc[i]->col;
    if (st == PS_OK) st = build_query(b->ctx, which, one, t->n, &q1);
    if (st == PS_OK) {
      st = build_query(g, which, cols, t->n, &qg);
      if (st != PS_OK) snprintf(err, sizeof err, "%s", ps_context_last_error(g));
    }
    ps_query_result *r1 = NULL, *rg = NULL;
    double one_ms = 0, group_ms = 0;
    if (st == PS_OK) one_ms = host_median_ms(b, b->ctx, q1.query, &r1, &st);
    if (st == PS_OK) {
      group_ms = host_median_ms(b, g, qg.query, &rg, &st);
      if (st != PS_OK) snprintf(err, sizeof err, "%s", ps_context_last_error(g));
    }
    if (st == PS_OK && single && pinned && pinned_gbps < 0) {
      const uint64_t size = tc[nc - 1]->desc.data_size, cap = UINT64_C(256) << 20;
      pinned_gbps = bench_h2d_gbps(b, mem[nc - 1], size < cap ? size : cap, BENCH_H2D_REPS);
    }
    if (st == PS_OK && single) {
      char why[160] = "";
      res->check = check_result(t, which, rg, why, sizeof why) ? "ok" : "FAIL";
      res->t.reps = b->reps;
      res->t.med = res->t.min = res->t.max = group_ms;
      const double gbps = (double)bytes / (group_ms * 1e6);
      char copy[96] = "";
      if (pinned && pinned_gbps > 0)
        snprintf(copy, sizeof copy, ", %.1f%% of the pinned host-to-device copy (%.2f GB/s, this run)",
                 100.0 * gbps / pinned_gbps, pinned_gbps);
      snprintf(res->note, sizeof res->note,
               "limit %" PRIu64 " B, host-resident %s: %.1f GB/s of packed columns%s; device-resident %.3f ms%s%s",
               o.device_memory_limit, pinned ? "pinned" : "pageable", gbps, copy, one_ms, why[0] ? "; " : "", why);
    } else if (st == PS_OK) {
      char why[160] = "";
      res->check = check_result(t, which, rg, why, sizeof why) ? "ok" : "FAIL";
      res->t.reps = b->reps;
      res->t.med = res->t.min = res->t.max = group_ms;
      snprintf(res->note, sizeof res->note,
               "devices %s%s: %.3f ms; one device %.3f ms: %.2fx; %.1f GB/s of packed columns%s%s",
               b->devices ? b->devices : "0,0", host ? (pinned ? ", host-resident pinned" : ", host-resident pageable") : "",
               group_ms, one_ms, group_ms > 0 ? one_ms / group_ms : 0.0, (double)bytes / (group_ms * 1e6),
               why[0] ? "; " : "", why);
    } else {
      snprintf(res->note, sizeof res->note, "%s: %.200s", ps_status_name(st), err[0] ? err : "");
      res->check = st == PS_ERR_UNSUPPORTED || st == PS_ERR_NO_DEVICE ? "skip" : "FAIL";
    }
    ps_query_result_destroy(r1);
    ps_query_result_destroy(rg);
    qbuilt_free(&q1);
    qbuilt_free(&qg);
    for (int i = 0; i < nc; i++) ps_column_destroy(cols[i]);
    ps_context_destroy(g);
    for (int i = 0; i < nc; i++) {
      if (!mem[i]) continue;
      if (pin[i])
        bench_pinned_free(b, mem[i]);
      else
        free(mem[i]);
    }
    bench_print_result(b, res);
  }
}
