/* The after-filter calls on SSB lineorder: ps_aggregate (every row, and over
 * a selection), ps_gather_values_device of 1% of the rows, ps_filter_refine,
 * ps_filter_mask_device and ps_selection_row_ids_device, each checked against the exact
 * answers computed when the table was generated. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_tables.h"

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

ps_status bench_time(bench *b, ps_status (*fn)(void *), void *arg, bench_stats *out) {
  double t[BENCH_MAX_REPS];
  int reps = b->reps < 1 ? 1 : b->reps > BENCH_MAX_REPS ? BENCH_MAX_REPS : b->reps;
  for (int i = 0; i < b->warmup; i++) {
    ps_status st = fn(arg);
    if (st != PS_OK) return st;
  }
  for (int i = 0; i < reps; i++) {
    bench_timer_start(b);
    ps_status st = fn(arg);
    t[i] = bench_timer_stop_ms(b);
    if (st != PS_OK) return st;
  }
  qsort(t, (size_t)reps, sizeof t[0], cmp_double);
  out->reps = reps;
  out->min = t[0];
  out->max = t[reps - 1];
  out->med = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
  return PS_OK;
}

ps_status bench_ssb_where(ps_context *ctx, ps_column *date, ps_column *qty, ps_column *disc, int k, ps_expr **out) {
  static const int32_t date_lo[4] = {19930101, 19940101, 19940205, 19930101};
  static const int32_t date_hi[4] = {19931231, 19940131, 19940211, 19931231};
  static const int32_t disc_lo[3] = {1, 4, 5}, disc_hi[3] = {3, 6, 7};
  ps_expr *d = NULL, *q = NULL, *s = NULL, *ds = NULL;
  ps_status st = ps_expr_between(ctx, date, ps_lit_int(date_lo[k]), ps_lit_int(date_hi[k]), &d);
  if (k == 3 || st != PS_OK) {
    *out = d;
    return st;
  }
  st = ps_expr_between(ctx, disc, ps_lit_int(disc_lo[k]), ps_lit_int(disc_hi[k]), &s);
  if (st == PS_OK)
    st = k == 0 ? ps_expr_compare(ctx, qty, PS_LT, ps_lit_int(25), &q)
                : ps_expr_between(ctx, qty, ps_lit_int(26), ps_lit_int(35), &q);
  if (st == PS_OK) st = ps_expr_and(ctx, d, s, &ds);
  if (st == PS_OK) {
    d = s = NULL;
    st = ps_expr_and(ctx, ds, q, out);
  }
  if (st == PS_OK) ds = q = NULL;
  ps_expr_destroy(d);
  ps_expr_destroy(q);
  ps_expr_destroy(s);
  ps_expr_destroy(ds);
  return st;
}

/* What one timed call does. */
typedef struct after_call {
  ps_context *ctx;
  int kind;
  const ps_column *col;
  const ps_expr *expr;
  const ps_buffer *in;
  ps_buffer *out, *ids;
  uint64_t n, count, capacity;
  ps_aggregates agg;
} after_call;

enum { A_AGG, A_GATHER, A_REFINE, A_MASK, A_ROW_IDS };

static ps_status after_once(void *arg) {
  after_call *c = arg;
  switch (c->kind) {
    case A_AGG:
      return ps_aggregate(c->ctx, c->col, c->in, 0, &c->agg);
    case A_GATHER:
      return ps_gather_values_device(c->ctx, c->col, c->ids, 0, PS_INDEX_UINT32, c->count, c->out, 0, NULL, 0);
    case A_REFINE:
      return ps_filter_refine(c->ctx, c->expr, c->in, 0, c->out, 0, &c->count);
    case A_MASK:
      return ps_filter_mask_device(c->ctx, c->expr, c->out, 0, &c->count);
    case A_ROW_IDS:
      return ps_selection_row_ids_device(c->ctx, c->in, 0, c->n, PS_INDEX_UINT32, c->ids, 0, c->capacity, &c->count);
  }
  return PS_ERR_INTERNAL;
}

static bench_result *new_result(bench *b, const char *name, uint64_t n, int width) {
  if (b->n_results >= BENCH_MAX_CASES) return NULL;
  bench_result *r = &b->results[b->n_results++];
  memset(r, 0, sizeof *r);
  snprintf(r->name, sizeof r->name, "%s", name);
  r->rows = n;
  r->width = width;
  r->check = "FAIL";
  return r;
}

static void note(bench_result *r, const char *fmt, const char *a) {
  snprintf(r->note + strlen(r->note), sizeof r->note - strlen(r->note), fmt, a);
}

/* Times c, records the outcome in r and prints it. check() says whether the
 * untimed state after the timed calls is right (writes why not). */
static void run_after(bench *b, bench_result *r, after_call *c,
                      int (*check)(bench *, const after_call *, void *, char *, size_t), void *arg) {
  if (!r) return;
  ps_status st = bench_time(b, after_once, c, &r->t);
  if (st != PS_OK) {
    bench_result_failed(b, r, st);
  } else {
    r->check = check(b, c, arg, r->note, sizeof r->note) ? "ok" : "FAIL";
  }
  bench_print_result(b, r);
}

static int eq128(uint64_t lo, int64_t hi, bench_i128 v) { return lo == (uint64_t)v && hi == (int64_t)(v >> 64); }

typedef struct agg_expect {
  uint64_t count;
  bench_i128 sum;
  int64_t min, max; /* checked when min <= max */
} agg_expect;

static int check_agg(bench *b, const after_call *c, void *arg, char *why, size_t n) {
  const agg_expect *e = arg;
  const ps_aggregates *a = &c->agg;
  if (a->count != e->count || !eq128(a->sum_lo, a->sum_hi, e->sum)) {
    snprintf(why, n, "count %" PRIu64 " / sum differ from the host's (count %" PRIu64 ")", a->count, e->count);
    return 0;
  }
  if (e->min <= e->max && (a->min.i != e->min || a->max.i != e->max)) {
    snprintf(why, n, "min/max %" PRId64 "/%" PRId64 " != host %" PRId64 "/%" PRId64, a->min.i, a->max.i, e->min,
             e->max);
    return 0;
  }
  return 1;
}

static int check_count(bench *b, const after_call *c, void *arg, char *why, size_t n) {
  uint64_t want = *(const uint64_t *)arg;
  if (c->count != want) {
    snprintf(why, n, "count %" PRIu64 " != host %" PRIu64, c->count, want);
    return 0;
  }
  return 1;
}

static int check_gather(bench *b, const after_call *c, void *arg, char *why, size_t n) {
  const ssb_answers *a = arg;
  int32_t *got = malloc(a->n_gather * 4 + 4);
  int ok = got && ps_buffer_read(b->ctx, c->out, 0, got, a->n_gather * 4) == PS_OK;
  for (uint64_t i = 0; ok && i < a->n_gather; i++)
    if (got[i] != a->gather_price[i]) {
      snprintf(why, n, "value %" PRIu64 " (row %" PRIu64 ") is %d, the host's %d", i, a->gather_ids[i], got[i],
               a->gather_price[i]);
      ok = 0;
    }
  if (!got) snprintf(why, n, "out of host memory");
  free(got);
  return ok;
}

static int check_mask(bench *b, const after_call *c, void *arg, char *why, size_t n) {
  if (!check_count(b, c, arg, why, n)) return 0;
  /* the mask's bytes must add up to the count */
  uint64_t sum = 0, chunk = UINT64_C(1) << 24;
  uint8_t *buf = malloc(chunk);
  int ok = buf != NULL;
  for (uint64_t o = 0; ok && o < c->n; o += chunk) {
    uint64_t len = c->n - o < chunk ? c->n - o : chunk;
    ok = ps_buffer_read(b->ctx, c->out, o, buf, len) == PS_OK;
    for (uint64_t i = 0; ok && i < len; i++) {
      if (buf[i] > 1) ok = 0;
      sum += buf[i];
    }
  }
  free(buf);
  if (!ok || sum != c->count) {
    snprintf(why, n, "the mask's bytes are not 0/1 adding up to the count");
    return 0;
  }
  return 1;
}

static int check_row_ids(bench *b, const after_call *c, void *arg, char *why, size_t n) {
  const ssb_answers *a = arg;
  uint64_t want = a->count[0];
  if (!check_count(b, c, &want, why, n)) return 0;
  uint64_t k = c->count < BENCH_EDGE_IDS ? c->count : BENCH_EDGE_IDS;
  uint32_t head[BENCH_EDGE_IDS], tail[BENCH_EDGE_IDS];
  if (k == 0) return 1;
  if (ps_buffer_read(b->ctx, c->ids, 0, head, k * 4) != PS_OK ||
      ps_buffer_read(b->ctx, c->ids, (c->count - k) * 4, tail, k * 4) != PS_OK) {
    snprintf(why, n, "reading the ids back failed");
    return 0;
  }
  for (uint64_t i = 0; i < k; i++)
    if (head[i] != a->q11_first[i] || tail[i] != a->q11_last[BENCH_EDGE_IDS - k + i]) {
      snprintf(why, n, "row id %" PRIu64 " from the head or the tail differs from the host's", i);
      return 0;
    }
  return 1;
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

static uint64_t bitmap_bytes(uint64_t n) { return (n + 7) / 8; }

void bench_run_after(bench *b, bench_tables *t) {
  if (!t->have_lineorder) return;
  const uint64_t n = t->n;
  bench_tcol *price = &t->lo[LO_EXTENDEDPRICE], *qty = &t->lo[LO_QUANTITY], *disc = &t->lo[LO_DISCOUNT],
             *date = &t->lo[LO_ORDERDATE];
  ssb_answers *a = &t->ssb;
  ps_buffer *sel1993 = NULL, *selq11 = NULL, *out = NULL, *ids = NULL;
  ps_expr *e1993 = NULL, *eq11 = NULL, *eqty = NULL, *edisc = NULL;
  uint64_t nb = (bitmap_bytes(n) + 3) / 4 * 4 + 4, c1993 = 0, cq11 = 0;
  /* The selections the cases start from, made untimed. */
  ps_status st = ps_buffer_create(b->ctx, nb, &sel1993);
  if (st == PS_OK) st = ps_buffer_create(b->ctx, nb, &selq11);
  if (st == PS_OK) st = ps_buffer_create(b->ctx, n + 8, &out); /* a mask, a bitmap or gathered values */
  if (st == PS_OK) st = ps_buffer_create(b->ctx, n * 4 + 4, &ids);
  if (st == PS_OK) st = bench_ssb_where(b->ctx, date->col, qty->col, disc->col, 3, &e1993);
  if (st == PS_OK) st = bench_ssb_where(b->ctx, date->col, qty->col, disc->col, 0, &eq11);
  if (st == PS_OK) st = ps_expr_compare(b->ctx, qty->col, PS_LT, ps_lit_int(25), &eqty);
  if (st == PS_OK) st = ps_expr_between(b->ctx, disc->col, ps_lit_int(1), ps_lit_int(3), &edisc);
  if (st == PS_OK) st = ps_filter_device(b->ctx, e1993, sel1993, 0, &c1993);
  if (st == PS_OK) st = ps_filter_device(b->ctx, eq11, selq11, 0, &cq11);
  if (st != PS_OK) {
    bench_result *r = new_result(b, "after-filter", n, -1);
    if (r) {
      note(r, "setting up the selections: %s", ps_context_last_error(b->ctx));
      bench_print_result(b, r);
    }
    goto done;
  }
  if (c1993 != a->year1993 || cq11 != a->count[0])
    fprintf(stderr,
            "bench: the selections' counts differ from the host's (1993: %" PRIu64 " vs %" PRIu64 "; Q1.1: %" PRIu64
            " vs %" PRIu64 ")\n",
            c1993, a->year1993, cq11, a->count[0]);

  if (wanted_case(b, "aggregate")) {
    agg_expect e = {a->price_n, a->price_sum, a->price_min, a->price_max};
    after_call c = {b->ctx, A_AGG, price->col, NULL, NULL, NULL, NULL, n, 0, 0, {0}};
    bench_result *r = new_result(b, "aggregate", n, (int)price->desc.width);
    if (r) {
      r->bytes = (double)price->desc.data_size;
      r->selectivity = 1;
      r->count = n;
    }
    run_after(b, r, &c, check_agg, &e);
  }
  if (wanted_case(b, "aggregate_sel")) {
    agg_expect e = {a->year1993, a->year1993_price_sum, 1, 0};
    after_call c = {b->ctx, A_AGG, price->col, NULL, sel1993, NULL, NULL, n, 0, 0, {0}};
    bench_result *r = new_result(b, "aggregate_sel", n, (int)price->desc.width);
    if (r) {
      r->bytes = (double)(price->desc.data_size + bitmap_bytes(n));
      r->selectivity = (double)a->year1993 / (double)n;
      r->count = a->year1993;
      note(r, "%s", "lo_extendedprice over lo_orderdate in 1993");
    }
    run_after(b, r, &c, check_agg, &e);
  }
  if (wanted_case(b, "gather_1pct") && a->n_gather > 0) {
    uint32_t *stage = malloc(a->n_gather * 4);
    if (stage) {
      for (uint64_t i = 0; i < a->n_gather; i++) stage[i] = (uint32_t)a->gather_ids[i];
      st = ps_buffer_write(b->ctx, ids, 0, stage, a->n_gather * 4);
      free(stage);
    }
    after_call c = {b->ctx, A_GATHER, price->col, NULL, NULL, out, ids, n, a->n_gather, 0, {0}};
    bench_result *r = new_result(b, "gather_1pct", n, (int)price->desc.width);
    if (r) {
      /* ids read, values written, and one 32-byte sector of packed codes per
       * id (1% of the rows are farther apart than a sector) */
      r->bytes = (double)a->n_gather * (4 + 4 + 32);
      r->selectivity = (double)a->n_gather / (double)n;
      r->count = a->n_gather;
      note(r, "%s", "lo_extendedprice, uint32 ids; bytes: ids + values + one 32 B sector per id");
    }
    if (stage && st == PS_OK) run_after(b, r, &c, check_gather, a);
  }
  if (wanted_case(b, "refine")) {
    after_call c = {b->ctx, A_REFINE, NULL, eqty, sel1993, out, NULL, n, 0, 0, {0}};
    bench_result *r = new_result(b, "refine", n, (int)qty->desc.width);
    if (r) {
      r->bytes = (double)(qty->desc.data_size + 2 * bitmap_bytes(n));
      r->selectivity = (double)a->year1993_qty_lt25 / (double)n;
      r->count = a->year1993_qty_lt25;
      note(r, "%s", "lo_quantity < 25 on the rows of 1993");
    }
    run_after(b, r, &c, check_count, &a->year1993_qty_lt25);
  }
  if (wanted_case(b, "mask")) {
    after_call c = {b->ctx, A_MASK, NULL, edisc, NULL, out, NULL, n, 0, 0, {0}};
    bench_result *r = new_result(b, "mask", n, (int)disc->desc.width);
    if (r) {
      r->bytes = (double)(disc->desc.data_size + n);
      r->selectivity = (double)a->discount_1_3 / (double)n;
      r->count = a->discount_1_3;
      note(r, "%s", "lo_discount BETWEEN 1 AND 3 to a byte mask");
    }
    run_after(b, r, &c, check_mask, &a->discount_1_3);
  }
  if (wanted_case(b, "row_ids")) {
    after_call c = {b->ctx, A_ROW_IDS, NULL, NULL, selq11, NULL, ids, n, 0, n, {0}};
    bench_result *r = new_result(b, "row_ids", n, -1);
    if (r) {
      r->bytes = (double)(bitmap_bytes(n) + 4 * a->count[0]);
      r->selectivity = (double)a->count[0] / (double)n;
      r->count = a->count[0];
      note(r, "%s", "uint32 ids of Q1.1's selection bitmap");
    }
    run_after(b, r, &c, check_row_ids, a);
  }
done:
  ps_expr_destroy(e1993);
  ps_expr_destroy(eq11);
  ps_expr_destroy(eqty);
  ps_expr_destroy(edisc);
  ps_buffer_destroy(sel1993);
  ps_buffer_destroy(selq11);
  ps_buffer_destroy(out);
  ps_buffer_destroy(ids);
}
