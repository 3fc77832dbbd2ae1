/*
 * query_partial: partial results (ps_query_run_partial,
 * ps_query_result_export_partial) merged (ps_query_merge_*) give the result
 * of one run over the whole table, datum by datum and error by error.
 * Seeded random tables (a dictionary key with repeated strings, a nullable
 * integer key, a decimal value, a wide value whose products reach 38 digits)
 * (k also 24 bits wide, past a table of every possible key: hashed groups)
 * split into 1..8 partitions, per row or in ranges, with empty partitions, a
 * partition whose values are all NULL and groups that only one partition
 * holds; partials merged in a random order, and through a tree of two merges
 * re-exported. Named: sums that overflow only after merging
 * (PS_ERR_OVERFLOW, same message), a partition's sum past 38 digits that the
 * others bring back, partials of another query refused, an empty merge.
 * Lossless float columns: partitions of different magnitudes (each sums in
 * its own unit) merged exactly, with a float GROUP BY key whose +0.0 and
 * -0.0 lie in different partitions; a partition of zeros beside another;
 * their partial's layout and units.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "tcol.h"
#include "packscan_arrow.h"

#define MAX_PARTS 8
#define N_AGGS 10

/* One table's columns as codes: s (dictionary key), k (int32 key), x
 * (decimal), y (int64). */
typedef struct ttable {
  uint64_t n;
  tstrs dict;
  int sorted;
  uint64_t *cs, *ck, *cx, *cy;
  uint8_t *vs, *vk, *vx; /* validity, 1 bit a row */
  uint32_t wx, wy, sx;
  uint32_t wk; /* k's width: 2, or 24 for a hashed GROUP BY plan (2^24 + 1 possible keys) */
  int64_t rx, ry;
} ttable;

typedef struct tcols {
  ps_column *s, *k, *x, *y;
} tcols;

static void set_bit(uint8_t *b, uint64_t i, int v) {
  if (v)
    b[i / 8] |= (uint8_t)(1u << (i % 8));
  else
    b[i / 8] &= (uint8_t) ~(1u << (i % 8));
}
static int get_bit(const uint8_t *b, uint64_t i) { return (b[i / 8] >> (i % 8)) & 1; }

/* The columns of rows rows[0..m) of t (all rows when rows is NULL). */
static int make_cols(ps_context *ctx, const ttable *t, const uint64_t *rows, uint64_t m, tcols *out) {
  uint64_t *cs = th_calloc(m + 1, 8), *ck = th_calloc(m + 1, 8), *cx = th_calloc(m + 1, 8), *cy = th_calloc(m + 1, 8);
  uint8_t *vs = th_calloc(m / 8 + 1, 1), *vk = th_calloc(m / 8 + 1, 1), *vx = th_calloc(m / 8 + 1, 1);
  for (uint64_t i = 0; i < m; i++) {
    uint64_t r = rows ? rows[i] : i;
    cs[i] = t->cs[r], ck[i] = t->ck[r], cx[i] = t->cx[r], cy[i] = t->cy[r];
    set_bit(vs, i, get_bit(t->vs, r));
    set_bit(vk, i, get_bit(t->vk, r));
    set_bit(vx, i, get_bit(t->vx, r));
  }
  ps_reference rk = {.i = -1}, rx = {.i = t->rx}, ry = {.i = t->ry};
  tcol *c[4] = {tcol_dict(&t->dict, t->sorted, 0, PS_TYPE_UINT32, m, 3, 0, cs, vs, NULL),
                tcol_for(PS_TYPE_INT32, m, t->wk, 0, rk, ck, vk, NULL),
                tcol_for(PS_TYPE_DECIMAL, m, t->wx, t->sx, rx, cx, vx, NULL),
                tcol_for(PS_TYPE_INT64, m, t->wy, 0, ry, cy, NULL, NULL)};
  memset(out, 0, sizeof *out);
  int ok = CHECK_OK(ctx, tcol_create(ctx, c[0], &out->s)) && CHECK_OK(ctx, tcol_create(ctx, c[1], &out->k)) &&
           CHECK_OK(ctx, tcol_create(ctx, c[2], &out->x)) && CHECK_OK(ctx, tcol_create(ctx, c[3], &out->y));
  for (int i = 0; i < 4; i++) tcol_free(c[i]);
  free(cs), free(ck), free(cx), free(cy), free(vs), free(vk), free(vx);
  return ok;
}

static void free_cols(tcols *c) {
  ps_column_destroy(c->s);
  ps_column_destroy(c->k);
  ps_column_destroy(c->x);
  ps_column_destroy(c->y);
}

/* COUNT(*), COUNT(x), SUM(x), MIN(x), MAX(x), AVG(x), SUM(x*y), AVG(x*y),
 * MIN(s), MAX(k) GROUP BY the keys `keys` names ("", "s", "k", "sk", "ks"). */
static ps_status run(ps_context *ctx, const tcols *c, uint64_t n, const char *keys, int partial,
                     ps_query_result **res) {
  ps_value *x = NULL, *x2 = NULL, *y = NULL, *xy = NULL, *s = NULL, *k = NULL;
  ps_status st = PS_ERR_INTERNAL;
  if (CHECK_OK(ctx, ps_value_column(ctx, c->x, &x)) && CHECK_OK(ctx, ps_value_column(ctx, c->x, &x2)) &&
      CHECK_OK(ctx, ps_value_column(ctx, c->y, &y)) && CHECK_OK(ctx, ps_value_arith(ctx, PS_MUL, x2, y, &xy)) &&
      CHECK_OK(ctx, ps_value_column(ctx, c->s, &s)) && CHECK_OK(ctx, ps_value_column(ctx, c->k, &k))) {
    x2 = y = NULL;
    const ps_agg aggs[N_AGGS] = {{PS_AGG_COUNT_STAR, NULL}, {PS_AGG_COUNT, x}, {PS_AGG_SUM, x},  {PS_AGG_MIN, x},
                                 {PS_AGG_MAX, x},           {PS_AGG_AVG, x},   {PS_AGG_SUM, xy}, {PS_AGG_AVG, xy},
                                 {PS_AGG_MIN, s},           {PS_AGG_MAX, k}};
    ps_query_desc d;
    ps_query_desc_init(&d);
    d.rows = n;
    for (const char *p = keys; *p; p++) d.keys[d.n_keys++] = *p == 's' ? c->s : c->k;
    d.n_aggs = N_AGGS;
    d.aggs = aggs;
    ps_query *q = NULL;
    if (CHECK_OK(ctx, ps_query_create(ctx, &d, &q)))
      st = partial ? ps_query_run_partial(ctx, q, res) : ps_query_run(ctx, q, res);
    ps_query_destroy(q);
  }
  ps_value_destroy(x), ps_value_destroy(x2), ps_value_destroy(y), ps_value_destroy(xy), ps_value_destroy(s),
      ps_value_destroy(k);
  return st;
}

static int same_datum(const ps_datum *a, const ps_datum *b) {
  return a->is_null == b->is_null && a->scale == b->scale && a->lo == b->lo && a->hi == b->hi &&
         !memcmp(&a->as_double, &b->as_double, sizeof a->as_double) && (a->str != NULL) == (b->str != NULL) &&
         a->str_len == b->str_len && (!a->str || !memcmp(a->str, b->str, a->str_len));
}

static void print_datum(const char *what, const ps_datum *d) {
  char buf[256] = "?";
  ps_datum_format(d, buf, sizeof buf);
  fprintf(stderr, "    %s: %s (null %d, scale %u, lo %" PRIu64 ", hi %" PRId64 ")\n", what, buf, d->is_null, d->scale,
          d->lo, d->hi);
}

/* The merged result equals the whole table's, datum by datum. */
static void compare_n(const ps_query_result *whole, const ps_query_result *merged, uint32_t n_keys, uint32_t n_aggs,
                      const char *how) {
  uint64_t g = ps_query_result_groups(whole);
  if (!CHECKF(g == ps_query_result_groups(merged), "%s: %" PRIu64 " groups merged, %" PRIu64 " in the whole table", how,
              ps_query_result_groups(merged), g))
    return;
  for (uint64_t i = 0; i < g; i++) {
    ps_datum a, b;
    for (uint32_t k = 0; k < n_keys; k++)
      if (CHECK_OK(NULL, ps_query_result_key(whole, i, k, &a)) &&
          CHECK_OK(NULL, ps_query_result_key(merged, i, k, &b)) &&
          !CHECKF(same_datum(&a, &b), "%s: group %" PRIu64 " key %u differs", how, i, k)) {
        print_datum("whole", &a);
        print_datum("merged", &b);
      }
    for (uint32_t v = 0; v < n_aggs; v++)
      if (CHECK_OK(NULL, ps_query_result_value(whole, i, v, &a)) &&
          CHECK_OK(NULL, ps_query_result_value(merged, i, v, &b)) &&
          !CHECKF(same_datum(&a, &b), "%s: group %" PRIu64 " aggregate %u differs", how, i, v)) {
        print_datum("whole", &a);
        print_datum("merged", &b);
      }
  }
}

static void compare(const ps_query_result *whole, const ps_query_result *merged, uint32_t n_keys, const char *how) {
  compare_n(whole, merged, n_keys, N_AGGS, how);
}

/* Merges the partials of parts order[0..n) into *res (finish_partial when partial). */
static ps_status merge(ps_context *ctx, ps_query_result *const *parts, const int *order, int n, int partial,
                       ps_query_result **res) {
  ps_query_merge *m = NULL;
  if (!CHECK_OK(ctx, ps_query_merge_create(ctx, &m))) return PS_ERR_INTERNAL;
  ps_status st = PS_OK;
  for (int i = 0; i < n && st == PS_OK; i++) {
    struct ArrowSchema s;
    struct ArrowArray a;
    if (!CHECK_OK(ctx, ps_query_result_export_partial(ctx, parts[order[i]], &s, &a))) {
      st = PS_ERR_INTERNAL;
      break;
    }
    st = ps_query_merge_add(m, &s, &a);
    CHECK_OK(ctx, st);
    s.release(&s);
    a.release(&a);
  }
  if (st == PS_OK) st = partial ? ps_query_merge_finish_partial(m, res) : ps_query_merge_finish(m, res);
  ps_query_merge_destroy(m);
  return st;
}

/* Runs `keys` on the whole table and on its parts; checks every way of merging. */
static void check_merges(ps_context *ctx, const ttable *t, const uint8_t *part_of, int parts, const char *keys) {
  tcols whole;
  ps_query_result *rw = NULL, *pr[MAX_PARTS] = {NULL};
  char whole_msg[1024] = "";
  if (!make_cols(ctx, t, NULL, t->n, &whole)) return;
  ps_status sw = run(ctx, &whole, t->n, keys, 0, &rw);
  if (sw != PS_OK) snprintf(whole_msg, sizeof whole_msg, "%s", ps_context_last_error(ctx));
  CHECKF(sw == PS_OK || sw == PS_ERR_OVERFLOW, "the whole table's run: %s", ps_status_name(sw));
  uint64_t *rows = th_calloc(t->n + 1, 8);
  int ok = 1;
  tcols pc[MAX_PARTS]; /* a result's dictionary keys point into its columns */
  memset(pc, 0, sizeof pc);
  for (int p = 0; p < parts && ok; p++) {
    uint64_t m = 0;
    for (uint64_t r = 0; r < t->n; r++)
      if (part_of[r] == p) rows[m++] = r;
    ok = make_cols(ctx, t, rows, m, &pc[p]) && CHECK_OK(ctx, run(ctx, &pc[p], m, keys, 1, &pr[p]));
  }
  free(rows);
  int order[MAX_PARTS];
  for (int i = 0; i < parts; i++) order[i] = i;
  for (int i = parts - 1; i > 0; i--) {
    int j = (int)th_below(&th.rng, (uint64_t)i + 1), x = order[i];
    order[i] = order[j], order[j] = x;
  }
  for (int tree = 0; ok && tree < 2; tree++) {
    ps_query_result *rm = NULL;
    ps_status sm;
    const char *how = tree ? "a tree of merges" : "one merge";
    if (!tree) {
      sm = merge(ctx, pr, order, parts, 0, &rm);
    } else {
      /* two inner merges (deferring overflows), their results merged */
      int cut = (int)th_below(&th.rng, (uint64_t)parts + 1);
      ps_query_result *inner[2] = {NULL, NULL};
      int both[2] = {0, 1};
      sm = PS_OK;
      int n_inner = 0;
      if (cut > 0 && CHECK_OK(ctx, merge(ctx, pr, order, cut, 1, &inner[n_inner]))) n_inner++;
      if (cut < parts && CHECK_OK(ctx, merge(ctx, pr, order + cut, parts - cut, 1, &inner[n_inner]))) n_inner++;
      sm = merge(ctx, inner, both, n_inner, 0, &rm);
      ps_query_result_destroy(inner[0]);
      ps_query_result_destroy(inner[1]);
    }
    if (CHECKF(sm == sw, "%s: merged status %s, the whole table's %s", how, ps_status_name(sm), ps_status_name(sw))) {
      if (sw == PS_OK)
        compare(rw, rm, (uint32_t)strlen(keys), how);
      else
        CHECKF(!strcmp(ps_context_last_error(ctx), whole_msg), "%s: merged \"%s\", whole \"%s\"", how,
               ps_context_last_error(ctx), whole_msg);
    }
    ps_query_result_destroy(rm);
  }
  for (int p = 0; p < parts; p++) {
    ps_query_result_destroy(pr[p]);
    free_cols(&pc[p]);
  }
  ps_query_result_destroy(rw);
  free_cols(&whole);
}

static void table_alloc(ttable *t, uint64_t n) {
  memset(t, 0, sizeof *t);
  t->n = n;
  t->cs = th_calloc(n + 1, 8), t->ck = th_calloc(n + 1, 8), t->cx = th_calloc(n + 1, 8), t->cy = th_calloc(n + 1, 8);
  t->vs = th_calloc(n / 8 + 1, 1), t->vk = th_calloc(n / 8 + 1, 1), t->vx = th_calloc(n / 8 + 1, 1);
  t->sorted = 1;
  t->wk = 2;
  tstrs_push(&t->dict, "a", 1);
}

static void table_free(ttable *t) {
  free(t->cs), free(t->ck), free(t->cx), free(t->cy), free(t->vs), free(t->vk), free(t->vx);
  tstrs_free(&t->dict);
}

/* A table of rows whose x are all one value (width 0, reference rx) and y
 * the given values, every key 0, every value valid. */
static void named_table(ttable *t, int64_t rx, const int64_t *y, uint64_t n) {
  table_alloc(t, n);
  t->rx = rx;
  t->ry = y[0];
  uint64_t span = 0;
  for (uint64_t i = 0; i < n; i++) {
    t->cy[i] = (uint64_t)y[i] - (uint64_t)y[0]; /* y[0] is the smallest */
    if (t->cy[i] > span) span = t->cy[i];
    set_bit(t->vs, i, 1), set_bit(t->vk, i, 1), set_bit(t->vx, i, 1);
  }
  t->wy = tcol_bits(span);
}

static void named_cases(ps_context *ctx) {
  const int64_t big = 9000000000000000000;
  {
    th_case("a sum that overflows only after merging (two rows of 8.1e37, one per partition)");
    const int64_t y[2] = {big, big};
    ttable t;
    named_table(&t, big, y, 2);
    const uint8_t part_of[2] = {0, 1};
    check_merges(ctx, &t, part_of, 2, "");
    check_merges(ctx, &t, part_of, 2, "s");
    table_free(&t);
  }
  {
    th_case("a partition's sum past 38 digits that another partition brings back");
    const int64_t y[3] = {-big, big, big};
    ttable t;
    named_table(&t, big, y, 3);
    const uint8_t part_of[3] = {1, 0, 0};
    tcols c;
    const uint64_t rows[2] = {1, 2};
    ps_query_result *r = NULL;
    if (make_cols(ctx, &t, rows, 2, &c) && CHECK_OK(ctx, run(ctx, &c, 2, "", 1, &r))) {
      ps_datum d;
      memset(&d, 0x5a, sizeof d);
      CHECK_STATUS(NULL, ps_query_result_value(r, 0, 6, &d), PS_ERR_OVERFLOW);
      CHECKF(d.lo == 0x5a5a5a5a5a5a5a5aull, "the datum of a deferred overflow was written");
      CHECK_STATUS(ctx, run(ctx, &c, 2, "", 0, &r), PS_ERR_OVERFLOW);
    }
    ps_query_result_destroy(r);
    free_cols(&c);
    check_merges(ctx, &t, part_of, 2, "");
    check_merges(ctx, &t, part_of, 2, "k");
    table_free(&t);
  }
  {
    th_case("partials of another query, an empty merge");
    const int64_t y[1] = {5};
    ttable t;
    named_table(&t, 7, y, 1);
    tcols c;
    ps_query_result *r1 = NULL, *r2 = NULL;
    ps_query_merge *m = NULL;
    if (make_cols(ctx, &t, NULL, 1, &c) && CHECK_OK(ctx, run(ctx, &c, 1, "s", 1, &r1)) &&
        CHECK_OK(ctx, run(ctx, &c, 1, "k", 1, &r2)) && CHECK_OK(ctx, ps_query_merge_create(ctx, &m))) {
      ps_query_result *out = NULL;
      CHECK_STATUS(ctx, ps_query_merge_finish(m, &out), PS_ERR_INVALID_ARGUMENT);
      CHECKF(th_contains_ci(ps_context_last_error(ctx), "no partial"), "message: %s", ps_context_last_error(ctx));
      struct ArrowSchema s1, s2;
      struct ArrowArray a1, a2;
      if (CHECK_OK(ctx, ps_query_result_export_partial(ctx, r1, &s1, &a1)) &&
          CHECK_OK(ctx, ps_query_result_export_partial(ctx, r2, &s2, &a2))) {
        CHECK_OK(ctx, ps_query_merge_add(m, &s1, &a1));
        CHECK_STATUS(ctx, ps_query_merge_add(m, &s2, &a2), PS_ERR_INVALID_ARGUMENT);
        const char *msg = ps_context_last_error(ctx);
        CHECKF(th_contains_ci(msg, "partial 1") && th_contains_ci(msg, "packscan.keys") &&
                   th_contains_ci(msg, "\"string:0\"") && th_contains_ci(msg, "\"number:0\""),
               "message: %s", msg);
        /* the field named when its format is another */
        const char *saved = s1.children[0]->format;
        s1.children[0]->format = "u";
        CHECK_STATUS(ctx, ps_query_merge_add(m, &s1, &a1), PS_ERR_INVALID_ARGUMENT);
        CHECKF(th_contains_ci(ps_context_last_error(ctx), "\"key0\" of format \"u\""), "message: %s",
               ps_context_last_error(ctx));
        s1.children[0]->format = saved;
        if (CHECK_OK(ctx, ps_query_merge_finish(m, &out))) compare(r1, out, 1, "after refusals");
        ps_query_result_destroy(out);
        s1.release(&s1), a1.release(&a1), s2.release(&s2), a2.release(&a2);
      }
    }
    ps_query_merge_destroy(m);
    ps_query_result_destroy(r1);
    ps_query_result_destroy(r2);
    free_cols(&c);
    table_free(&t);
  }
}

static void random_round(ps_context *ctx, int round) {
  th_rng *r = &th.rng;
  uint64_t n = th_chance(r, 10) ? th_below(r, 3) : th_below(r, 300);
  int parts = 1 + (int)th_below(r, MAX_PARTS), ranges = th_chance(r, 50);
  ttable t;
  table_alloc(&t, n);
  tstrs_free(&t.dict);
  memset(&t.dict, 0, sizeof t.dict);
  t.sorted = th_chance(r, 50);
  tcol_random_strings(r, 8, t.sorted, &t.dict);
  if (t.sorted) { /* tcol_random_strings gives unique strings here: sort them */
    for (size_t i = 1; i < t.dict.count; i++)
      for (size_t j = i; j > 0 && tstr_cmp(t.dict.s[j - 1], t.dict.len[j - 1], t.dict.s[j], t.dict.len[j]) > 0; j--) {
        uint8_t *s = t.dict.s[j];
        size_t l = t.dict.len[j];
        t.dict.s[j] = t.dict.s[j - 1], t.dict.len[j] = t.dict.len[j - 1];
        t.dict.s[j - 1] = s, t.dict.len[j - 1] = l;
      }
  }
  t.wx = (uint32_t)th_below(r, 41);
  t.sx = (uint32_t)th_below(r, 4);
  t.rx = (int64_t)(th_u64(r) >> 24) - ((int64_t)1 << 39);
  int wide = th_chance(r, 30);
  t.wy = wide ? 63 : (uint32_t)th_below(r, 20);
  t.ry = wide ? -((int64_t)1 << 62) : (int64_t)th_below(r, 2001) - 1000;
  if (th_chance(r, 30)) t.wk = 24; /* hashed groups, mostly one row each */
  int null_part = th_chance(r, 50) ? (int)th_below(r, (uint64_t)parts) : -1;
  uint8_t *part_of = th_calloc(n + 1, 1);
  uint64_t cuts[MAX_PARTS + 1];
  cuts[0] = 0;
  cuts[parts] = n;
  for (int p = 1; p < parts; p++) cuts[p] = th_below(r, n + 1);
  for (int p = 1; p < parts; p++) /* sorted cuts: ranges, some empty */
    for (int q = p; q > 1 && cuts[q - 1] > cuts[q]; q--) {
      uint64_t x = cuts[q];
      cuts[q] = cuts[q - 1], cuts[q - 1] = x;
    }
  for (uint64_t i = 0; i < n; i++) {
    t.cs[i] = th_below(r, 8);
    t.ck[i] = t.wk == 2 || th_chance(r, 20) ? th_below(r, 4) : th_below(r, (uint64_t)1 << t.wk);
    t.cx[i] = t.wx ? th_u64(r) & tcol_width_max(t.wx) : 0;
    t.cy[i] = t.wy ? th_u64(r) & tcol_width_max(t.wy) : 0;
    set_bit(t.vs, i, !th_chance(r, 10));
    set_bit(t.vk, i, !th_chance(r, 20));
    set_bit(t.vx, i, !th_chance(r, 15));
    int p = 0;
    if (ranges)
      while (p + 1 < parts && i >= cuts[p + 1]) p++;
    else
      p = (int)th_below(r, (uint64_t)parts);
    if (!ranges && t.cs[i] == 7) p = parts - 1; /* a group only one partition holds */
    part_of[i] = (uint8_t)p;
    if (p == null_part) set_bit(t.vx, i, 0);
  }
  static const char *const key_sets[] = {"", "s", "k", "sk", "ks"};
  const char *keys = key_sets[th_below(r, 5)];
  th_case("round %d: n %" PRIu64
          ", %d partitions (%s), null partition %d, keys \"%s\", %s dictionary, x w%u s%u, "
          "y w%u, k w%u",
          round, n, parts, ranges ? "ranges" : "per row", null_part, keys, t.sorted ? "sorted" : "unsorted", t.wx, t.sx,
          t.wy, t.wk);
  check_merges(ctx, &t, part_of, parts, keys);
  free(part_of);
  table_free(&t);
}

/* ---- lossless float columns ------------------------------------------------------ */

/* A column of n plain values (type t; valid: NULL or a bit per row), encoded
 * as ps_encode_for chooses (a float64 column: ALP or ordered bits). */
static ps_column *plain_column(ps_context *ctx, ps_type t, const void *values, uint64_t n, const uint8_t *valid,
                               const char *name, ps_encoded *enc) {
  ps_plain in = {t, values, n, valid};
  char err[512];
  ps_column *c = NULL;
  if (!CHECKF(ps_encode_for(&in, 0, -1, 0, NULL, err, sizeof err, enc) == PS_OK, "encode %s: %s", name, err))
    return NULL;
  if (!CHECK_OK(ctx, ps_column_create_for(ctx, &enc->desc, &c)) || !CHECK_OK(ctx, ps_column_set_name(c, name))) {
    ps_column_destroy(c);
    return NULL;
  }
  return c;
}

#define F_AGGS 6

/* COUNT(*), COUNT(f), SUM(f), AVG(f), MIN(f), MAX(f) [GROUP BY k]. */
static ps_status run_float(ps_context *ctx, ps_column *f, ps_column *k, uint64_t n, int partial,
                           ps_query_result **res) {
  ps_value *v[5] = {NULL};
  ps_status st = PS_OK;
  for (int i = 0; i < 5 && st == PS_OK; i++) st = ps_value_column(ctx, f, &v[i]);
  if (CHECK_OK(ctx, st)) {
    const ps_agg aggs[F_AGGS] = {{PS_AGG_COUNT_STAR, NULL}, {PS_AGG_COUNT, v[0]}, {PS_AGG_SUM, v[1]},
                                 {PS_AGG_AVG, v[2]},        {PS_AGG_MIN, v[3]},   {PS_AGG_MAX, v[4]}};
    ps_query_desc d;
    ps_query_desc_init(&d);
    d.rows = n;
    if (k) d.keys[d.n_keys++] = k;
    d.n_aggs = F_AGGS;
    d.aggs = aggs;
    ps_query *q = NULL;
    st = ps_query_create(ctx, &d, &q); /* the caller checks the status */
    if (st == PS_OK) st = partial ? ps_query_run_partial(ctx, q, res) : ps_query_run(ctx, q, res);
    ps_query_destroy(q);
  }
  for (int i = 0; i < 5; i++) ps_value_destroy(v[i]);
  return st;
}

/* Partitions of a float64 column whose magnitudes differ by partition (each
 * partial sums in its own unit: 2^-20, 1 and 2^20 times two-digit decimals,
 * or random bits), with NULLs; every partition's first row is -0.0, which
 * makes ps_encode_for choose a lossless mapping (a partition of two-digit
 * decimals would otherwise be FOR-decimal, another query's layout); the
 * float key's column is ALP in some partitions and ordered bits (a hashed
 * plan) in small ones: merged, through
 * one merge and a tree of two, the result is one run's over the whole
 * column, datum by datum, with and without GROUP BY. A mutation that merges
 * sums of different units without moving them fails it. */
static void float_round(ps_context *ctx, int round) {
  const uint64_t n = 1 + th_below(&th.rng, 3000);
  const int bits = round % 3 == 2, parts = 1 + (int)th_below(&th.rng, n < 4 ? n : 4);
  double *v = th_calloc(n + 1, 8), *kv = th_calloc(n + 1, 8); /* kv: a float key of few values */
  int32_t *k = th_calloc(n + 1, 4);
  uint8_t *part_of = th_calloc(n + 1, 1), *valid = th_calloc(n / 8 + 1, 1);
  int seen[MAX_PARTS] = {0};
  for (uint64_t r = 0; r < n; r++) {
    /* no partition empty: an empty float column encodes as FOR-decimal,
     * whose partial is another layout (docs/float-encoding.md) */
    const int p = r < (uint64_t)parts ? (int)r : (int)th_below(&th.rng, (uint64_t)parts);
    part_of[r] = (uint8_t)p;
    /* a float key: quarters, +0.0 in odd partitions and -0.0 in even ones (one key) */
    kv[r] = th_below(&th.rng, 8) == 0 ? (p % 2 ? 0.0 : -0.0) : (double)th_below(&th.rng, 8) / 4 - 1;
    if (!seen[p]++) { /* the partition's first row */
      v[r] = -0.0;
      kv[r] = 0x1p-70; /* no decimal scale to 18 holds it: the key's mapping is lossless too */
      k[r] = (int32_t)th_below(&th.rng, 4);
      valid[r / 8] |= (uint8_t)(1u << (r % 8));
      continue;
    }
    const double scale = p % 3 == 0 ? 1.0 : p % 3 == 1 ? 0x1p-20 : 0x1p20;
    const double x = bits ? (double)(th_below(&th.rng, UINT64_C(1) << 40)) * 0x1p-30
                          : (double)((int64_t)th_below(&th.rng, 2000001) - 1000000) / 100.0;
    v[r] = th_below(&th.rng, 40) == 0 ? 0.0 : x * scale; /* +0.0: one key with the -0.0 rows */
    k[r] = (int32_t)th_below(&th.rng, 4);
    if (th_below(&th.rng, 10) != 0) valid[r / 8] |= (uint8_t)(1u << (r % 8));
  }
  th_case("float round %d: %" PRIu64 " rows, %d partitions (%s)", round, n, parts, bits ? "random bits" : "decimals");
  ps_encoded ew, ek;
  memset(&ew, 0, sizeof ew), memset(&ek, 0, sizeof ek);
  ps_column *fw = plain_column(ctx, PS_TYPE_FLOAT64, v, n, valid, "f", &ew);
  ps_column *kw = plain_column(ctx, PS_TYPE_INT32, k, n, NULL, "k", &ek);
  ps_encoded egw, ef[MAX_PARTS], ekp[MAX_PARTS], egp[MAX_PARTS];
  memset(&egw, 0, sizeof egw);
  ps_column *gw = plain_column(ctx, PS_TYPE_FLOAT64, kv, n, NULL, "g", &egw);
  ps_column *fp[MAX_PARTS] = {NULL}, *kp[MAX_PARTS] = {NULL}, *gp[MAX_PARTS] = {NULL};
  memset(ef, 0, sizeof ef), memset(ekp, 0, sizeof ekp), memset(egp, 0, sizeof egp);
  double *pv = th_calloc(n + 1, 8), *pkv = th_calloc(n + 1, 8);
  int32_t *pk = th_calloc(n + 1, 4);
  uint8_t *pvalid = th_calloc(n / 8 + 1, 1);
  uint64_t pn[MAX_PARTS] = {0};
  for (int p = 0; p < parts; p++) {
    uint64_t m = 0;
    memset(pvalid, 0, n / 8 + 1);
    for (uint64_t r = 0; r < n; r++) {
      if (part_of[r] != p) continue;
      pv[m] = v[r], pk[m] = k[r], pkv[m] = kv[r];
      if ((valid[r / 8] >> (r % 8)) & 1) pvalid[m / 8] |= (uint8_t)(1u << (m % 8));
      m++;
    }
    pn[p] = m;
    fp[p] = plain_column(ctx, PS_TYPE_FLOAT64, pv, m, pvalid, "f", &ef[p]);
    kp[p] = plain_column(ctx, PS_TYPE_INT32, pk, m, NULL, "k", &ekp[p]);
    gp[p] = plain_column(ctx, PS_TYPE_FLOAT64, pkv, m, NULL, "g", &egp[p]);
  }
  static const char *const how[3] = {"floats", "floats, GROUP BY k", "floats, GROUP BY g (float)"};
  for (int keyed = 0; keyed < 3 && fw && kw && gw; keyed++) { /* no key, an int key, a float key */
    ps_query_result *rw = NULL, *pr[MAX_PARTS] = {NULL};
    ps_column *key = keyed == 1 ? kw : keyed == 2 ? gw : NULL;
    ps_status st = run_float(ctx, fw, key, n, 0, &rw);
    int ok = CHECK_OK(ctx, st);
    for (int p = 0; p < parts && ok; p++) {
      key = keyed == 1 ? kp[p] : keyed == 2 ? gp[p] : NULL;
      st = fp[p] && kp[p] && gp[p] ? run_float(ctx, fp[p], key, pn[p], 1, &pr[p]) : PS_ERR_INTERNAL;
      ok = CHECK_OK(ctx, st);
    }
    char what[2][64];
    snprintf(what[0], sizeof what[0], "%s, one merge", how[keyed]);
    snprintf(what[1], sizeof what[1], "%s, a tree", how[keyed]);
    int order[MAX_PARTS];
    for (int i = 0; i < parts; i++) order[i] = parts - 1 - i;
    ps_query_result *rm = NULL, *inner[2] = {NULL, NULL}, *rt = NULL;
    if (ok && CHECK_OK(ctx, merge(ctx, pr, order, parts, 0, &rm))) compare_n(rw, rm, keyed ? 1u : 0u, F_AGGS, what[0]);
    const int cut = parts / 2, both[2] = {0, 1};
    int n_inner = 0;
    if (ok && cut > 0 && CHECK_OK(ctx, merge(ctx, pr, order, cut, 1, &inner[n_inner]))) n_inner++;
    if (ok && CHECK_OK(ctx, merge(ctx, pr, order + cut, parts - cut, 1, &inner[n_inner]))) n_inner++;
    if (ok && CHECK_OK(ctx, merge(ctx, inner, both, n_inner, 0, &rt)))
      compare_n(rw, rt, keyed ? 1u : 0u, F_AGGS, what[1]);
    ps_query_result_destroy(rm);
    ps_query_result_destroy(rt);
    ps_query_result_destroy(inner[0]);
    ps_query_result_destroy(inner[1]);
    for (int p = 0; p < parts; p++) ps_query_result_destroy(pr[p]);
    ps_query_result_destroy(rw);
  }
  for (int p = 0; p < parts; p++) {
    ps_column_destroy(fp[p]);
    ps_column_destroy(kp[p]);
    ps_column_destroy(gp[p]);
    ps_encoded_destroy(&ef[p]);
    ps_encoded_destroy(&ekp[p]);
    ps_encoded_destroy(&egp[p]);
  }
  ps_column_destroy(fw);
  ps_column_destroy(kw);
  ps_column_destroy(gw);
  ps_encoded_destroy(&ew);
  ps_encoded_destroy(&ek);
  ps_encoded_destroy(&egw);
  free(v), free(kv), free(k), free(part_of), free(valid), free(pv), free(pkv), free(pk), free(pvalid);
}

/* A float partial's layout and units, and what the merge refuses: a
 * partial of the same shape over a decimal column, units that are not
 * integers. */
static void float_named(ps_context *ctx) {
  th_case("float partial: layout, version and units");
  const double v[4] = {1.5, -0.25, -0.0, 3.0}; /* -0.0: a lossless mapping, not FOR-decimal */
  ps_encoded e;
  memset(&e, 0, sizeof e);
  ps_column *f = plain_column(ctx, PS_TYPE_FLOAT64, v, 4, NULL, "f", &e);
  ps_query_result *r = NULL;
  if (f && CHECK_OK(ctx, run_float(ctx, f, NULL, 4, 1, &r))) {
    struct ArrowSchema s;
    struct ArrowArray a;
    if (CHECK_OK(ctx, ps_query_result_export_partial(ctx, r, &s, &a))) {
      const char *md = s.metadata;
      int32_t pairs = 0;
      memcpy(&pairs, md, 4);
      CHECKF(pairs == 4, "%d metadata pairs, expected 4 (version, keys, aggs, units)", pairs);
      int found = 0;
      const char *p = md + 4;
      for (int32_t i = 0; i < pairs; i++) {
        int32_t kl, vl;
        memcpy(&kl, p, 4);
        memcpy(&vl, p + 4 + kl, 4);
        char key[64] = "", val[256] = "";
        memcpy(key, p + 4, (size_t)(kl < 63 ? kl : 63));
        memcpy(val, p + 8 + kl, (size_t)(vl < 255 ? vl : 255));
        if (!strcmp(key, "packscan.partial")) found += CHECKF(!strcmp(val, "2"), "version \"%s\"", val);
        if (!strcmp(key, "packscan.aggs"))
          found += CHECKF(!strcmp(val, "COUNT_STAR:0,COUNT:0,SUM:f,AVG:f,MIN:f,MAX:f"), "aggs \"%s\"", val);
        if (!strcmp(key, "packscan.units")) found += CHECKF(strchr(val, '-') != NULL, "units \"%s\"", val);
        p += 8 + kl + vl;
      }
      CHECKF(found == 3, "%d of the metadata checks found their key", found);
      CHECK(!strcmp(s.children[6]->format, "g") && !strcmp(s.children[2]->format, "d:76,0,256"));
      double mn = 0;
      memcpy(&mn, (const uint8_t *)a.children[6]->buffers[1], 8);
      CHECKF(mn == -0.25, "MIN exported as %.17g", mn);
      /* the same batch under malformed metadata: refused, naming what */
      static const char *const bad[][4] = {
          {"2", "COUNT_STAR:0,COUNT:0,SUM:f,AVG:f,MIN:f,MAX:f", NULL, "packscan.units"},
          {"2", "COUNT_STAR:0,COUNT:0,SUM:f,AVG:f,MIN:f,MAX:f", "0,0,-5", "expected 6 integers"},
          {"2", "COUNT_STAR:0,COUNT:0,SUM:f,AVG:f,MIN:f,MAX:f", "0,0,x,0,0,0", "expected 6 integers"},
          {"2", "COUNT_STAR:0,COUNT:0,SUM:f,AVG:f,MIN:f,MAX:f", "0,0,99999,0,0,0", "expected 6 integers"},
          {"1", "COUNT_STAR:0,COUNT:0,SUM:f,AVG:f,MIN:f,MAX:f", "0,0,0,0,0,0", "malformed layout"},
          {"2", "COUNT_STAR:f,COUNT:0,SUM:f,AVG:f,MIN:f,MAX:f", "0,0,0,0,0,0", "malformed layout"},
          {"3", "COUNT_STAR:0,COUNT:0,SUM:f,AVG:f,MIN:f,MAX:f", "0,0,0,0,0,0", "reads versions"},
      };
      for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
        char md2[1024];
        const char *kv[8] = {"packscan.partial", bad[b][0], "packscan.keys",  "",
                             "packscan.aggs",    bad[b][1], "packscan.units", bad[b][2]};
        const int32_t n_pairs = bad[b][2] ? 4 : 3;
        size_t at = 4;
        memcpy(md2, &n_pairs, 4);
        for (int32_t i = 0; i < 2 * n_pairs; i++) {
          const int32_t len = (int32_t)strlen(kv[i]);
          memcpy(md2 + at, &len, 4);
          memcpy(md2 + at + 4, kv[i], (size_t)len);
          at += 4 + (size_t)len;
        }
        struct ArrowSchema s2 = s; /* borrowed, as the merge borrows it: only the metadata differs */
        s2.metadata = md2;
        ps_query_merge *m = NULL;
        if (CHECK_OK(ctx, ps_query_merge_create(ctx, &m))) {
          CHECK_STATUS(ctx, ps_query_merge_add(m, &s2, &a), PS_ERR_INVALID_ARGUMENT);
          CHECKF(strstr(ps_context_last_error(ctx), bad[b][3]) != NULL, "case %zu: \"%s\" does not name \"%s\"", b,
                 ps_context_last_error(ctx), bad[b][3]);
        }
        ps_query_merge_destroy(m);
      }
      s.release(&s);
      a.release(&a);
    }
  }
  ps_query_result_destroy(r);
  ps_column_destroy(f);
  ps_encoded_destroy(&e);
  /* A partition of zeros sums in the finest unit of all (2^-1074), another
   * in 2^-126 or so: no 256-bit sum holds the second in the first's unit,
   * so the merge keeps the coarser one (the zeros are whole numbers of it),
   * in either order. */
  th_case("float partials: a partition of zeros beside another");
  const double zeros[2] = {-0.0, 0.0}, other[3] = {1.5, 2.25, -0.0}, all[5] = {-0.0, 0.0, 1.5, 2.25, -0.0};
  ps_encoded ez, eo, ea;
  memset(&ez, 0, sizeof ez), memset(&eo, 0, sizeof eo), memset(&ea, 0, sizeof ea);
  ps_column *cz = plain_column(ctx, PS_TYPE_FLOAT64, zeros, 2, NULL, "f", &ez);
  ps_column *co = plain_column(ctx, PS_TYPE_FLOAT64, other, 3, NULL, "f", &eo);
  ps_column *ca = plain_column(ctx, PS_TYPE_FLOAT64, all, 5, NULL, "f", &ea);
  ps_query_result *pr[2] = {NULL, NULL}, *whole = NULL;
  if (cz && co && ca && CHECK_OK(ctx, run_float(ctx, cz, NULL, 2, 1, &pr[0])) &&
      CHECK_OK(ctx, run_float(ctx, co, NULL, 3, 1, &pr[1])) && CHECK_OK(ctx, run_float(ctx, ca, NULL, 5, 0, &whole))) {
    const int orders[2][2] = {{0, 1}, {1, 0}};
    for (int o = 0; o < 2; o++) {
      ps_query_result *rm = NULL;
      if (CHECK_OK(ctx, merge(ctx, pr, orders[o], 2, 0, &rm)))
        compare_n(whole, rm, 0, F_AGGS, o ? "zeros second" : "zeros first");
      ps_query_result_destroy(rm);
    }
  }
  ps_query_result_destroy(pr[0]);
  ps_query_result_destroy(pr[1]);
  ps_query_result_destroy(whole);
  ps_column_destroy(cz), ps_column_destroy(co), ps_column_destroy(ca);
  ps_encoded_destroy(&ez), ps_encoded_destroy(&eo), ps_encoded_destroy(&ea);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "query_partial");
  ps_context *ctx = th_context(0);
  named_cases(ctx);
  float_named(ctx);
  const int float_rounds = (getenv("PACKSCAN_TEST_QUICK") ? 12 : 48) * (int)th.scale;
  for (int round = 0; round < float_rounds; round++) float_round(ctx, round);
  const int rounds = (getenv("PACKSCAN_TEST_QUICK") ? 40 : 200) * (int)th.scale;
  for (int round = 0; round < rounds; round++) random_round(ctx, round);
  ps_context_destroy(ctx);
  return th_finish();
}
