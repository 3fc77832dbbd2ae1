/*
 * progress: ps_context_options.progress on contexts chunked at 96 and 1024
 * rows, against the same calls on a default context without a callback.
 * Every call that scans (ps_filter, ps_filter_count, ps_filter_mask,
 * ps_filter_row_ids, ps_aggregate, ps_query_run ungrouped, grouped by a
 * small key and by a hashed 32-bit key) reports at least once per chunk,
 * with rows_done strictly increasing to rows_total (the rows, twice them for
 * a hashed GROUP BY) and results unchanged; zone-decided runs on a sorted
 * column too; host-resident columns streamed under device_memory_limit too;
 * a hashed GROUP BY whose keys pass runs again over a grown table; a call
 * over 0 rows reports nothing; a struct_size that ends before the
 * field leaves the callback unread.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "internal_options.h" /* query_group_slots */

typedef struct seen {
  unsigned calls;
  uint64_t last, total;
  int increasing, same_total;
} seen;

static void on_progress(void *user, uint64_t done, uint64_t total) {
  seen *s = user;
  if (s->calls == 0) s->total = total;
  if (s->calls && done <= s->last) s->increasing = 0;
  if (total != s->total) s->same_total = 0;
  s->last = done;
  s->calls++;
}

static void seen_reset(seen *s) {
  memset(s, 0, sizeof *s);
  s->increasing = s->same_total = 1;
}

/* The calls one library call made: at least min_calls, increasing, ending at total. */
static void check_seen(const seen *s, uint64_t total, unsigned min_calls, const char *what) {
  CHECKF(s->calls >= min_calls, "%s: %u progress calls, expected at least %u", what, s->calls, min_calls);
  CHECKF(s->increasing, "%s: rows_done did not increase from call to call", what);
  CHECKF(s->same_total, "%s: rows_total changed within the call", what);
  if (s->calls) {
    CHECKF(s->total == total, "%s: rows_total %llu, expected %llu", what, (unsigned long long)s->total,
           (unsigned long long)total);
    CHECKF(s->last == s->total, "%s: last rows_done %llu, rows_total %llu", what, (unsigned long long)s->last,
           (unsigned long long)s->total);
  }
}

static ps_context *progress_context(uint64_t chunk, uint64_t memory_limit, seen *s) {
  ps_context_options o;
  th_options(&o, th.backend, chunk);
  o.device_memory_limit = memory_limit;
  o.progress = on_progress;
  o.progress_user = s;
  ps_context *ctx = NULL;
  char err[1024] = {0};
  ps_status st = ps_context_create(&o, err, sizeof err, &ctx);
  if (!CHECKF(st == PS_OK, "creating a context with a progress callback: %s: %s", ps_status_name(st), err)) exit(1);
  th_apply_options(ctx);
  return ctx;
}

/* The table: x (uint32, 0..999 scattered), s (sorted row numbers, with zone
 * maps), k (a small key, 0..6), h (a 32-bit key: hashed GROUP BY). */
typedef struct table {
  uint64_t n;
  uint32_t *x, *s, *h;
  uint8_t *k;
} table;

static void table_make(table *t, uint64_t n, th_rng *r) {
  t->n = n;
  t->x = th_malloc((n ? n : 1) * 4);
  t->s = th_malloc((n ? n : 1) * 4);
  t->h = th_malloc((n ? n : 1) * 4);
  t->k = th_malloc(n ? n : 1);
  for (uint64_t i = 0; i < n; i++) {
    t->x[i] = (uint32_t)th_below(r, 1000);
    t->s[i] = (uint32_t)i;
    t->h[i] = (uint32_t)th_u64(r) | 0x10000u * (uint32_t)th_below(r, 50);
    t->k[i] = (uint8_t)th_below(r, 7);
  }
}

static void table_free(table *t) {
  free(t->x);
  free(t->s);
  free(t->h);
  free(t->k);
}

static ps_column *column(ps_context *ctx, const void *data, uint64_t n, ps_type type, uint32_t width, int host,
                         int zones) {
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = type;
  d.n = n;
  d.width = width;
  d.data = data;
  d.data_size = (n * width + 7) / 8;
  ps_column *c = NULL;
  if (!CHECK_OK(ctx, host ? ps_column_create_for_host(ctx, &d, &c) : ps_column_create_for(ctx, &d, &c))) exit(1);
  if (zones) CHECK_OK(ctx, ps_column_compute_zones(ctx, c));
  return c;
}

typedef struct cols {
  ps_column *x, *s, *k, *h;
} cols;

static void cols_make(ps_context *ctx, const table *t, int host, cols *c) {
  c->x = column(ctx, t->x, t->n, PS_TYPE_UINT32, 32, host, 0);
  c->s = column(ctx, t->s, t->n, PS_TYPE_UINT32, 32, host, 1);
  c->k = column(ctx, t->k, t->n, PS_TYPE_UINT8, 8, host, 0);
  c->h = column(ctx, t->h, t->n, PS_TYPE_UINT32, 32, host, 0);
}

static void cols_free(cols *c) {
  ps_column_destroy(c->x);
  ps_column_destroy(c->s);
  ps_column_destroy(c->k);
  ps_column_destroy(c->h);
}

/* x < 500 (every chunk read) or s < n / 3 (zone maps decide most blocks). */
static ps_expr *where(ps_context *ctx, const cols *c, int pruned, uint64_t n) {
  ps_expr *e = NULL;
  CHECK_OK(ctx, pruned ? ps_expr_compare(ctx, c->s, PS_LT, ps_lit_uint(n / 3), &e)
                       : ps_expr_compare(ctx, c->x, PS_LT, ps_lit_uint(500), &e));
  return e;
}

/* SUM(x), COUNT(*) WHERE x < 500, grouped by nothing, k or h. */
static ps_query_result *query(ps_context *ctx, const cols *c, int keys, uint64_t n) {
  ps_value *v = NULL;
  CHECK_OK(ctx, ps_value_column(ctx, c->x, &v));
  ps_agg aggs[2] = {{PS_AGG_SUM, v}, {PS_AGG_COUNT_STAR, NULL}};
  ps_query_desc d;
  ps_query_desc_init(&d);
  d.rows = n;
  ps_expr *w = where(ctx, c, 0, n);
  d.where = w;
  d.n_keys = keys ? 1 : 0;
  d.keys[0] = keys == 1 ? c->k : c->h;
  d.n_aggs = 2;
  d.aggs = aggs;
  ps_query *q = NULL;
  ps_query_result *res = NULL;
  if (CHECK_OK(ctx, ps_query_create(ctx, &d, &q))) CHECK_OK(ctx, ps_query_run(ctx, q, &res));
  ps_query_destroy(q);
  ps_expr_destroy(w);
  ps_value_destroy(v);
  return res;
}

static int same_results(const ps_query_result *a, const ps_query_result *b) {
  if (!a || !b || ps_query_result_groups(a) != ps_query_result_groups(b)) return 0;
  for (uint64_t g = 0; g < ps_query_result_groups(a); g++)
    for (uint32_t i = 0; i < 2; i++) {
      ps_datum x, y;
      if (ps_query_result_value(a, g, i, &x) != PS_OK || ps_query_result_value(b, g, i, &y) != PS_OK) return 0;
      if (x.is_null != y.is_null || x.lo != y.lo || x.hi != y.hi) return 0;
    }
  return 1;
}

/* Every scanning call on `ctx` (chunked at `chunk`, or streaming) against `plain`. */
static void run(ps_context *ctx, seen *s, uint64_t chunk, int host, ps_context *plain, const table *t) {
  const uint64_t n = t->n;
  th_case("chunk=%llu host=%d n=%llu", (unsigned long long)chunk, host, (unsigned long long)n);
  cols c, p;
  cols_make(ctx, t, host, &c);
  cols_make(plain, t, 0, &p);
  /* at least one call per chunk, where chunks are known (streaming may cut finer) */
  const unsigned chunks = n ? (unsigned)((n + chunk - 1) / chunk) : 0;
  const uint64_t nb = (n + 7) / 8;
  for (int pruned = 0; pruned < 2; pruned++) {
    ps_expr *e = where(ctx, &c, pruned, n), *pe = where(plain, &p, pruned, n);
    const unsigned min_calls = pruned ? (n ? 1 : 0) : chunks;
    uint8_t *bits = th_calloc(nb + 1, 1), *want = th_calloc(nb + 1, 1);
    uint64_t count = 0, want_count = 0;
    CHECK_OK(plain, ps_filter(plain, pe, want, nb, &want_count));
    seen_reset(s);
    CHECK_OK(ctx, ps_filter(ctx, e, bits, nb, &count));
    check_seen(s, n, min_calls, pruned ? "ps_filter (zones)" : "ps_filter");
    CHECKF(count == want_count && memcmp(bits, want, nb) == 0, "ps_filter: results differ from the plain context");

    seen_reset(s);
    count = 0;
    CHECK_OK(ctx, ps_filter_count(ctx, e, &count));
    check_seen(s, n, min_calls, "ps_filter_count");
    CHECKF(count == want_count, "ps_filter_count: %llu, want %llu", (unsigned long long)count,
           (unsigned long long)want_count);

    uint8_t *mask = th_calloc(n + 1, 1);
    seen_reset(s);
    CHECK_OK(ctx, ps_filter_mask(ctx, e, mask, n, &count));
    check_seen(s, n, min_calls, "ps_filter_mask");
    CHECKF(count == want_count, "ps_filter_mask: count differs");
    free(mask);

    void *ids = NULL, *want_ids = NULL;
    uint64_t nids = 0, want_nids = 0;
    CHECK_OK(plain, ps_filter_row_ids(plain, pe, PS_INDEX_UINT64, &want_ids, &want_nids));
    seen_reset(s);
    CHECK_OK(ctx, ps_filter_row_ids(ctx, e, PS_INDEX_UINT64, &ids, &nids));
    check_seen(s, n, min_calls, "ps_filter_row_ids");
    CHECKF(nids == want_nids && (!nids || memcmp(ids, want_ids, nids * 8) == 0), "ps_filter_row_ids: ids differ");
    ps_free(ctx, ids);
    ps_free(plain, want_ids);
    free(bits);
    free(want);
    ps_expr_destroy(e);
    ps_expr_destroy(pe);
  }

  ps_aggregates got, want;
  seen_reset(s);
  CHECK_OK(ctx, ps_aggregate(ctx, c.x, NULL, 0, &got));
  check_seen(s, n, chunks, "ps_aggregate");
  CHECK_OK(plain, ps_aggregate(plain, p.x, NULL, 0, &want));
  CHECKF(got.count == want.count && got.sum_lo == want.sum_lo && got.min.u == want.min.u && got.max.u == want.max.u,
         "ps_aggregate: results differ");

  static const char *const names[] = {"query", "query GROUP BY k", "query GROUP BY h (hashed)"};
  for (int keys = 0; keys < 3; keys++) {
    seen_reset(s);
    ps_query_result *a = query(ctx, &c, keys, n);
    check_seen(s, keys == 2 ? 2 * n : n, keys == 2 ? 2 * chunks : chunks, names[keys]);
    ps_query_result *b = query(plain, &p, keys, n);
    CHECKF(same_results(a, b), "%s: results differ from the plain context", names[keys]);
    ps_query_result_destroy(a);
    ps_query_result_destroy(b);
  }
  cols_free(&c);
  cols_free(&p);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "progress");
  ps_context *plain = th_context(0);
  seen s;
  seen_reset(&s);
  static const uint64_t sizes[] = {0, 1, 33, 5000, 20000};
  static const uint64_t chunk_rows[] = {96, 1024};
  for (size_t i = 0; i < sizeof chunk_rows / sizeof *chunk_rows; i++) {
    ps_context *ctx = progress_context(chunk_rows[i], 0, &s);
    for (size_t j = 0; j < sizeof sizes / sizeof *sizes; j++) {
      table t;
      table_make(&t, th.quick == 2 && sizes[j] > 5000 ? 5000 : sizes[j], &th.rng);
      run(ctx, &s, chunk_rows[i], 0, plain, &t);
      table_free(&t);
    }
    ps_context_destroy(ctx);
  }

  /* Host-resident columns streamed through 64 KiB of device memory: four
   * 32-bit columns of 20,000 rows take several staged chunks. */
  {
    ps_context *ctx = progress_context(0, PS_DEVICE_MEMORY_LIMIT_MIN, &s);
    table t;
    table_make(&t, 20000, &th.rng);
    run(ctx, &s, 20000, 1, plain, &t);
    seen_reset(&s);
    cols c;
    cols_make(ctx, &t, 1, &c);
    ps_expr *e = where(ctx, &c, 0, t.n);
    uint64_t count = 0;
    CHECK_OK(ctx, ps_filter_count(ctx, e, &count));
    CHECKF(s.calls >= 2, "streaming 20,000 rows through 64 KiB: %u progress calls, expected several", s.calls);
    ps_expr_destroy(e);
    cols_free(&c);
    table_free(&t);
    ps_context_destroy(ctx);
  }

  /* A struct that ends before the field: the callback is not read. */
  {
    th_case("struct_size before progress");
    ps_context_options o;
    th_options(&o, th.backend, 96);
    o.progress = on_progress;
    o.progress_user = &s;
    o.struct_size = (uint32_t)offsetof(ps_context_options, progress);
    ps_context *ctx = NULL;
    if (CHECK_OK(NULL, ps_context_create(&o, NULL, 0, &ctx))) {
      th_apply_options(ctx);
      table t;
      table_make(&t, 1000, &th.rng);
      cols c;
      cols_make(ctx, &t, 0, &c);
      ps_expr *e = where(ctx, &c, 0, t.n);
      uint64_t count = 0;
      seen_reset(&s);
      CHECK_OK(ctx, ps_filter_count(ctx, e, &count));
      CHECKF(s.calls == 0, "a struct_size ending before progress: %u calls", s.calls);
      ps_expr_destroy(e);
      cols_free(&c);
      table_free(&t);
      ps_context_destroy(ctx);
    }
  }
  /* A hashed GROUP BY whose first group table (64 slots) overflows runs its
   * keys pass again: still increasing, still ending at 2 * rows. */
  {
    ps_context *ctx = progress_context(96, 0, &s);
    ps_internal_options opts = *ps_context_internal_options(ctx);
    opts.query_group_slots = 6;
    CHECK_OK(ctx, ps_context_set_internal_options(ctx, &opts));
    table t;
    table_make(&t, 5000, &th.rng);
    cols c, p;
    cols_make(ctx, &t, 0, &c);
    cols_make(plain, &t, 0, &p);
    th_case("keys pass run again n=%llu", (unsigned long long)t.n);
    seen_reset(&s);
    ps_query_result *a = query(ctx, &c, 2, t.n);
    check_seen(&s, 2 * t.n, 2, "query GROUP BY h, a grown table");
    ps_query_result *b = query(plain, &p, 2, t.n);
    CHECKF(same_results(a, b), "a grown table: results differ from the plain context");
    ps_query_result_destroy(a);
    ps_query_result_destroy(b);
    cols_free(&c);
    cols_free(&p);
    table_free(&t);
    ps_context_destroy(ctx);
  }
  ps_context_destroy(plain);
  return th_finish();
}
