/*
 * zones: zone-map pruning never changes a result. Columns shaped sorted,
 * clustered, constant, all-null and random (codes permuted among the valid
 * rows only, so no corrupt code appears), with zone maps computed by the
 * library (ps_column_compute_zones) or by this test in blocks of 32..4096
 * rows, on contexts whose chunks do and do not divide the blocks; random
 * predicate trees (seeded) against the oracle and the reference backend,
 * and every output with pruning on against the same context with it off:
 * bitmap, count, ps_filter_count, mask, row ids, refinement of a random
 * selection, a query (COUNT(*), COUNT, MIN, MAX, SUM under the WHERE).
 * Then that pruning happens: a narrow range on a sorted column reads fewer
 * bytes and skips rows, a range that holds every row skips its column, and
 * neither does with pruning off.
 */
#include <stdlib.h>
#include <string.h>

#include "gen.h"

static const ps_type TYPES[] = {PS_TYPE_INT8,   PS_TYPE_INT16,  PS_TYPE_INT32,  PS_TYPE_INT64,   PS_TYPE_UINT8,
                                PS_TYPE_UINT16, PS_TYPE_UINT32, PS_TYPE_UINT64, PS_TYPE_FLOAT32, PS_TYPE_FLOAT64};
static const uint32_t WIDTHS[] = {0, 1, 3, 7, 8, 13, 16, 31, 32, 33, 64};

/* The names of tcol_reshape's shapes. */
static const char *const SHAPES[] = {"sorted", "clustered", "constant", "all-null", "random"};

/* The test's own zone maps of c in blocks of block_rows. */
static void own_zones(const tcol *c, uint32_t block_rows, uint64_t **min, uint64_t **max, uint8_t **flags,
                      uint64_t *blocks) {
  *blocks = (c->n + block_rows - 1) / block_rows;
  *min = th_calloc(*blocks + 1, 8), *max = th_calloc(*blocks + 1, 8), *flags = th_calloc(*blocks + 1, 1);
  for (uint64_t b = 0; b < *blocks; b++) {
    uint64_t lo = UINT64_MAX, hi = 0, nv = 0, end = (b + 1) * block_rows < c->n ? (b + 1) * block_rows : c->n;
    for (uint64_t i = b * block_rows; i < end; i++) {
      if (!tcol_valid(c, i)) continue;
      uint64_t v = tcol_code(c, i);
      nv++;
      lo = v < lo ? v : lo;
      hi = v > hi ? v : hi;
    }
    (*flags)[b] = (uint8_t)((nv < end - b * block_rows ? PS_ZONE_HAS_NULLS : 0) | (nv ? 0 : PS_ZONE_ALL_NULL));
    (*min)[b] = nv ? lo : 0, (*max)[b] = nv ? hi : 0;
  }
}

/* Gives column i of tr zone maps in both contexts: the library's (checked
 * against the test's at PS_ZONE_BLOCK_ROWS) or the test's at block_rows. */
static void attach(trun *tr, int i, uint32_t block_rows) {
  const tcol *c = tr->cols[i];
  uint64_t *min, *max, blocks;
  uint8_t *flags;
  own_zones(c, block_rows ? block_rows : PS_ZONE_BLOCK_ROWS, &min, &max, &flags, &blocks);
  ps_column *h[2] = {tr->h[i], tr->hr[i]};
  ps_context *ctx[2] = {tr->ctx, tr->ref};
  for (int k = 0; k < 2; k++) {
    if (!ctx[k]) continue;
    if (block_rows == 0) {
      CHECK_OK(ctx[k], ps_column_compute_zones(ctx[k], h[k]));
      ps_zone_map z;
      if (CHECK(ps_column_zones(h[k], &z) == 1)) {
        CHECK(z.blocks == blocks && z.block_rows == PS_ZONE_BLOCK_ROWS);
        CHECKF(blocks == 0 || (memcmp(z.min, min, blocks * 8) == 0 && memcmp(z.max, max, blocks * 8) == 0 &&
                               memcmp(z.flags, flags, blocks) == 0),
               "column %d: ps_column_compute_zones differs from the test's zone maps", i);
      }
    } else {
      ps_zone_map z = {sizeof z, block_rows, blocks, min, max, flags};
      CHECK_OK(ctx[k], ps_column_set_zones(ctx[k], h[k], &z));
    }
  }
  free(min);
  free(max);
  free(flags);
}

typedef struct outputs {
  uint8_t *bitmap, *mask, *refined;
  uint64_t count, count_only, mask_count, refined_count, nids;
  uint64_t *ids;
  char query[512];
} outputs;

static void free_outputs(outputs *o) {
  free(o->bitmap);
  free(o->mask);
  free(o->refined);
  free(o->ids);
}

/* A numeric column of tr other than strings, or -1. */
static int numeric_col(trun *tr) {
  for (size_t i = 0; i < tr->ncols; i++)
    if (tr->cols[i]->type != PS_TYPE_STRING) return (int)i;
  return -1;
}

static void query_text(ps_context *ctx, trun *tr, const ps_expr *e, uint64_t n, char *out, size_t size) {
  out[0] = '\0';
  int v = numeric_col(tr);
  if (v < 0) return;
  ps_value *val = NULL;
  if (!CHECK_OK(ctx, ps_value_column(ctx, tr->h[v], &val))) return;
  ps_agg aggs[5] = {
      {PS_AGG_COUNT_STAR, NULL}, {PS_AGG_COUNT, val}, {PS_AGG_MIN, val}, {PS_AGG_MAX, val}, {PS_AGG_SUM, val}};
  ps_query_desc d;
  ps_query_desc_init(&d);
  d.rows = n;
  d.where = e;
  d.n_aggs = 5;
  d.aggs = aggs;
  ps_query *q = NULL;
  ps_query_result *res = NULL;
  if (CHECK_OK(ctx, ps_query_create(ctx, &d, &q))) {
    ps_status st = ps_query_run(ctx, q, &res);
    size_t len = (size_t)snprintf(out, size, "%s", ps_status_name(st));
    for (uint32_t a = 0; st == PS_OK && a < 5; a++) {
      ps_datum dt;
      char buf[80] = "";
      ps_status s2 = ps_query_result_value(res, 0, a, &dt);
      if (s2 == PS_OK) ps_datum_format(&dt, buf, sizeof buf);
      len += (size_t)snprintf(out + len, len < size ? size - len : 0, " %s:%s", ps_status_name(s2), buf);
    }
    ps_query_result_destroy(res);
    ps_query_destroy(q);
  }
  ps_value_destroy(val);
}

static void outputs_of(trun *tr, const ps_expr *e, uint64_t n, const uint8_t *sel, outputs *o) {
  ps_context *ctx = tr->ctx;
  const uint64_t nb = (n + 7) / 8;
  memset(o, 0, sizeof *o);
  o->bitmap = th_calloc(nb + 1, 1);
  o->mask = th_calloc(n + 1, 1);
  o->refined = th_calloc(nb + 1, 1);
  CHECK_OK(ctx, ps_filter(ctx, e, o->bitmap, nb, &o->count));
  CHECK_OK(ctx, ps_filter_count(ctx, e, &o->count_only));
  CHECK_OK(ctx, ps_filter_mask(ctx, e, o->mask, n, &o->mask_count));
  void *ids = NULL;
  if (CHECK_OK(ctx, ps_filter_row_ids(ctx, e, PS_INDEX_UINT64, &ids, &o->nids))) {
    o->ids = th_calloc(o->nids + 1, 8);
    if (o->nids) memcpy(o->ids, ids, o->nids * 8);
    ps_free(ctx, ids);
  }
  ps_buffer *in = NULL, *out = NULL;
  if (nb && CHECK_OK(ctx, ps_buffer_create(ctx, nb, &in)) && CHECK_OK(ctx, ps_buffer_create(ctx, nb, &out))) {
    CHECK_OK(ctx, ps_buffer_write(ctx, in, 0, sel, nb));
    CHECK_OK(ctx, ps_filter_refine(ctx, e, in, 0, out, 0, &o->refined_count));
    CHECK_OK(ctx, ps_buffer_read(ctx, out, 0, o->refined, nb));
  }
  ps_buffer_destroy(in);
  ps_buffer_destroy(out);
  query_text(ctx, tr, e, n, o->query, sizeof o->query);
}

/* Rows the random cases' zone maps decided, with pruning on. */
static uint64_t decided_false, decided_true;

/* Every output with pruning on equals the output with pruning off. */
static void check_on_off(trun *tr, const onode *t, uint64_t n, th_rng *r, const char *label) {
  ps_expr *e = NULL;
  if (!CHECK_OK(tr->ctx, on_build(tr->ctx, t, tr->h, &e))) return;
  const uint64_t nb = (n + 7) / 8;
  uint8_t *sel = th_calloc(nb + 1, 1);
  int dense = (int)th_below(r, 3); /* none, some, all selected */
  for (uint64_t i = 0; i < n; i++)
    if (dense == 2 || (dense == 1 && th_chance(r, 70))) sel[i / 8] |= (uint8_t)(1u << (i % 8));
  outputs on, off;
  ps_context_set_zone_pruning(tr->ctx, 0);
  outputs_of(tr, e, n, sel, &off);
  ps_context_set_zone_pruning(tr->ctx, 1);
  ps_scan_stats st0 = {sizeof st0, 0, 0, 0, 0}, st1 = st0;
  CHECK_OK(tr->ctx, ps_context_scan_stats(tr->ctx, &st0));
  outputs_of(tr, e, n, sel, &on);
  CHECK_OK(tr->ctx, ps_context_scan_stats(tr->ctx, &st1));
  decided_false += st1.rows_skipped - st0.rows_skipped;
  decided_true += st1.rows_all_true - st0.rows_all_true;
  int ok = CHECKF(on.count == off.count && on.count_only == off.count && on.mask_count == off.count &&
                      on.nids == off.nids && on.refined_count == off.refined_count,
                  "%s: counts pruned %llu/%llu/%llu/%llu/%llu, unpruned %llu/%llu/%llu/%llu/%llu", label,
                  (unsigned long long)on.count, (unsigned long long)on.count_only, (unsigned long long)on.mask_count,
                  (unsigned long long)on.nids, (unsigned long long)on.refined_count, (unsigned long long)off.count,
                  (unsigned long long)off.count_only, (unsigned long long)off.mask_count, (unsigned long long)off.nids,
                  (unsigned long long)off.refined_count);
  ok &= CHECKF(memcmp(on.bitmap, off.bitmap, nb) == 0, "%s: bitmap differs with pruning", label);
  ok &= CHECKF(memcmp(on.mask, off.mask, n) == 0, "%s: mask differs with pruning", label);
  ok &= CHECKF(on.nids != off.nids || memcmp(on.ids, off.ids, on.nids * 8) == 0, "%s: row ids differ with pruning",
               label);
  ok &= CHECKF(memcmp(on.refined, off.refined, nb) == 0, "%s: refined selection differs with pruning", label);
  ok &=
      CHECKF(strcmp(on.query, off.query) == 0, "%s: query with pruning '%s', without '%s'", label, on.query, off.query);
  if (!ok) tr_print_case(tr, t);
  free_outputs(&on);
  free_outputs(&off);
  free(sel);
  ps_expr_destroy(e);
}

/* forced: column 0 sorted without nulls, blocks of 64 rows, and two leaves
 * every block decides (x >= INT64_MIN: ALL TRUE; its NOT: ALL FALSE), so
 * that the sweep compares pruned runs whatever the seed. */
static void run_case(ps_context *ctx, ps_context *ref, uint64_t n, th_rng *r, int forced) {
  trun tr;
  tr_init(&tr, ctx, ref);
  int shape = forced ? TSHAPE_SORTED : (int)th_below(r, TSHAPE_COUNT);
  static const uint32_t BLOCKS[] = {0, 0, 32, 64, 96, 160, 1024, 4096};
  uint32_t block_rows = forced ? 64 : TH_PICK(r, BLOCKS);
  th_case("n=%llu shape=%s block_rows=%u", (unsigned long long)n, SHAPES[shape], block_rows);
  int cols[8];
  size_t nc = 0;
  static const int nulls[] = {TN_NO_BITMAP, TN_NO_BITMAP, TN_FEW, TN_HALF};
  for (int k = 0; k < 3; k++) {
    tcol *c = tcol_random_for(r, TH_PICK(r, TYPES), n, TH_PICK(r, WIDTHS),
                              forced && k == 0 ? TN_NO_BITMAP : TH_PICK(r, nulls));
    tcol_reshape(r, c, k == 0 ? shape : (int)th_below(r, TSHAPE_COUNT));
    cols[nc] = tr_add(&tr, c);
    if (cols[nc] >= 0) nc++;
  }
  tcol *dc = tcol_random_dict(r, n, 3 + (uint32_t)th_below(r, 8), 2 + th_below(r, 40), th_chance(r, 70), TN_FEW);
  tcol_reshape(r, dc, shape);
  int d = tr_add(&tr, dc);
  if (d >= 0) {
    cols[nc++] = d;
    int d2 = tr_add(&tr, tcol_random_dict_partner(r, tr.cols[d], th_chance(r, 50), TN_FEW));
    if (d2 >= 0) cols[nc++] = d2;
  }
  if (nc) {
    int p = tr_add(&tr, tcol_derived(r, tr.cols[cols[0]], TH_PICK(r, TYPES), TN_FEW));
    if (p >= 0) cols[nc++] = p;
  }
  for (size_t i = 0; i < tr.ncols; i++)
    if (!th_chance(r, 5)) attach(&tr, (int)i, block_rows); /* now and then a column without zones */
  if (forced && nc && cols[0] == 0) {
    onode *all = on_cmp(0, PS_GE, ps_lit_int(INT64_MIN));
    tr_check(&tr, all, "x >= INT64_MIN");
    check_on_off(&tr, all, n, r, "x >= INT64_MIN");
    onode *none = on_not(all);
    tr_check(&tr, none, "NOT x >= INT64_MIN");
    check_on_off(&tr, none, n, r, "NOT x >= INT64_MIN");
    on_free(none);
  }
  for (unsigned k = 0; nc && k < th_reps(6 * th.scale); k++) {
    char label[64];
    onode *leaf = gen_leaf(r, &tr, cols[th_below(r, nc)], -1);
    snprintf(label, sizeof label, "leaf %u", k);
    tr_check(&tr, leaf, label);
    check_on_off(&tr, leaf, n, r, label);
    on_free(leaf);
    onode *t = gen_tree(r, &tr, cols, nc, 1 + (int)th_below(r, 4), 20);
    snprintf(label, sizeof label, "tree %u", k);
    tr_check(&tr, t, label);
    check_on_off(&tr, t, n, r, label);
    on_free(t);
  }
  tr_clear(&tr);
}

/* A sorted column of n rows, 0..n-1, with zone maps from the encoder. */
static ps_column *sorted_column(ps_context *ctx, uint64_t n) {
  int64_t *v = th_malloc(n * 8);
  for (uint64_t i = 0; i < n; i++) v[i] = (int64_t)i;
  ps_plain p = {PS_TYPE_INT64, v, n, NULL};
  ps_encoded enc;
  char err[256];
  ps_column *col = NULL;
  if (CHECK(ps_encode_for(&p, 0, -1, 0, NULL, err, sizeof err, &enc) == PS_OK)) {
    CHECK(enc.desc.zones != NULL);
    CHECK_OK(ctx, ps_column_create_for(ctx, &enc.desc, &col));
    ps_encoded_destroy(&enc);
  }
  free(v);
  return col;
}

/* Pruning happens: the bytes read and rows skipped say so, and with pruning
 * off nothing is skipped. */
static void check_pruning_happens(ps_context *ctx) {
  th_case("pruning happens");
  const uint64_t n = 40 * PS_ZONE_BLOCK_ROWS + 77;
  ps_column *col = sorted_column(ctx, n);
  if (!col) return;
  CHECK(ps_column_zones(col, NULL) == 1);
  ps_expr *narrow = NULL, *all = NULL;
  CHECK_OK(ctx, ps_expr_between(ctx, col, ps_lit_int(5000), ps_lit_int(5099), &narrow));
  CHECK_OK(ctx, ps_expr_compare(ctx, col, PS_GE, ps_lit_int(0), &all));
  for (int on = 0; on <= 1; on++) {
    ps_context_set_zone_pruning(ctx, on);
    ps_scan_stats s = {sizeof s, 0, 0, 0, 0};
    uint64_t c = 0;
    ps_context_scan_stats_reset(ctx);
    CHECK_OK(ctx, ps_filter_count(ctx, narrow, &c));
    CHECK(c == 100);
    CHECK_OK(ctx, ps_context_scan_stats(ctx, &s));
    if (on) {
      CHECKF(s.rows_skipped >= n - 2 * PS_ZONE_BLOCK_ROWS && s.rows_scanned <= 2 * PS_ZONE_BLOCK_ROWS,
             "pruning on: %llu rows skipped, %llu scanned of %llu", (unsigned long long)s.rows_skipped,
             (unsigned long long)s.rows_scanned, (unsigned long long)n);
      CHECKF(s.bytes_read * 20 < ps_column_width(col) * n / 8, "pruning on: %llu bytes read",
             (unsigned long long)s.bytes_read);
    } else {
      CHECKF(s.rows_skipped == 0 && s.rows_scanned == n && s.bytes_read == (n * ps_column_width(col) + 7) / 8,
             "pruning off: %llu rows skipped, %llu scanned, %llu bytes", (unsigned long long)s.rows_skipped,
             (unsigned long long)s.rows_scanned, (unsigned long long)s.bytes_read);
    }
    /* a query under the same WHERE: COUNT(*) and SUM over the blocks left */
    ps_value *v = NULL;
    ps_query *q = NULL;
    ps_query_result *res = NULL;
    if (CHECK_OK(ctx, ps_value_column(ctx, col, &v))) {
      ps_agg aggs[2] = {{PS_AGG_COUNT_STAR, NULL}, {PS_AGG_SUM, v}};
      ps_query_desc d;
      ps_query_desc_init(&d);
      d.rows = n;
      d.where = narrow;
      d.n_aggs = 2;
      d.aggs = aggs;
      ps_context_scan_stats_reset(ctx);
      if (CHECK_OK(ctx, ps_query_create(ctx, &d, &q)) && CHECK_OK(ctx, ps_query_run(ctx, q, &res))) {
        ps_datum c0, s0;
        CHECK(ps_query_result_value(res, 0, 0, &c0) == PS_OK && c0.lo == 100);
        CHECK(ps_query_result_value(res, 0, 1, &s0) == PS_OK && s0.lo == (5000 + 5099) * 50);
        CHECK_OK(ctx, ps_context_scan_stats(ctx, &s));
        CHECKF(on ? s.rows_skipped >= n - 2 * PS_ZONE_BLOCK_ROWS : s.rows_skipped == 0 && s.rows_scanned == n,
               "query, pruning %s: %llu rows skipped, %llu scanned", on ? "on" : "off",
               (unsigned long long)s.rows_skipped, (unsigned long long)s.rows_scanned);
      }
      ps_query_result_destroy(res);
      ps_query_destroy(q);
      ps_value_destroy(v);
    }
    ps_context_scan_stats_reset(ctx);
    uint8_t *bm = th_calloc((n + 7) / 8, 1);
    CHECK_OK(ctx, ps_filter(ctx, all, bm, (n + 7) / 8, &c));
    CHECK(c == n);
    int ones = 1;
    for (uint64_t i = 0; i < n; i++) ones &= (bm[i / 8] >> (i % 8)) & 1;
    CHECK(ones && (n % 8 == 0 || bm[n / 8] >> (n % 8) == 0));
    CHECK_OK(ctx, ps_context_scan_stats(ctx, &s));
    CHECKF(on ? (s.rows_all_true == n && s.bytes_read == 0) : (s.rows_all_true == 0 && s.rows_scanned == n),
           "pruning %s, a range holding every row: %llu rows all true, %llu bytes", on ? "on" : "off",
           (unsigned long long)s.rows_all_true, (unsigned long long)s.bytes_read);
    free(bm);
  }
  ps_expr_destroy(narrow);
  ps_expr_destroy(all);
  ps_column_destroy(col);
}

/* Zone maps that decide many short runs: 300 blocks of 32 rows whose codes
 * alternate 0 and 1 by block; x = 0 decides every block, and only the 64
 * longest decided runs stay decided (the rest run on the device with their
 * neighbours), with the same answers. */
static void check_many_runs(ps_context *ctx) {
  th_case("many short decided runs");
  const uint64_t n = 300 * 32;
  uint64_t *codes = th_malloc(n * 8), mn[300], mx[300];
  uint8_t fl[300] = {0};
  for (uint64_t i = 0; i < n; i++) codes[i] = (i / 32) % 2;
  for (int b = 0; b < 300; b++) mn[b] = mx[b] = (uint64_t)b % 2;
  tcol *c = tcol_for(PS_TYPE_INT32, n, 1, 0, (ps_reference){.i = 0}, codes, NULL, NULL);
  ps_column *col = NULL;
  ps_expr *e = NULL;
  if (CHECK_OK(ctx, tcol_create(ctx, c, &col)) && CHECK_OK(ctx, ps_expr_compare(ctx, col, PS_EQ, ps_lit_int(0), &e))) {
    ps_zone_map z = {sizeof z, 32, 300, mn, mx, fl};
    CHECK_OK(ctx, ps_column_set_zones(ctx, col, &z));
    uint8_t on[300 * 4], off[300 * 4];
    uint64_t con = 0, coff = 0;
    ps_scan_stats s = {sizeof s, 0, 0, 0, 0};
    ps_context_set_zone_pruning(ctx, 0);
    CHECK_OK(ctx, ps_filter(ctx, e, off, sizeof off, &coff));
    ps_context_set_zone_pruning(ctx, 1);
    ps_context_scan_stats_reset(ctx);
    CHECK_OK(ctx, ps_filter(ctx, e, on, sizeof on, &con));
    CHECK_OK(ctx, ps_context_scan_stats(ctx, &s));
    CHECK(con == n / 2 && coff == n / 2 && memcmp(on, off, sizeof on) == 0);
    CHECKF(s.rows_skipped + s.rows_all_true == 64 * 32 && s.rows_scanned == n - 64 * 32,
           "%llu rows skipped, %llu all true, %llu scanned: expected the 64 longest decided runs of 32 rows",
           (unsigned long long)s.rows_skipped, (unsigned long long)s.rows_all_true, (unsigned long long)s.rows_scanned);
  }
  ps_expr_destroy(e);
  ps_column_destroy(col);
  tcol_free(c);
  free(codes);
}

/* Zone maps a caller gives are checked. */
static void check_set_zones(ps_context *ctx) {
  th_case("ps_column_set_zones validation");
  ps_column *col = sorted_column(ctx, 100);
  if (!col) return;
  uint64_t mn[4] = {0, 64, 0, 0}, mx[4] = {63, 99, 0, 0};
  uint8_t fl[4] = {0, 0, 0, 0};
  ps_zone_map z = {sizeof z, 64, 2, mn, mx, fl};
  CHECK_OK(ctx, ps_column_set_zones(ctx, col, &z));
  z.blocks = 3;
  CHECK_STATUS(ctx, ps_column_set_zones(ctx, col, &z), PS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ps_context_last_error(ctx), "zones.blocks is 3") != NULL);
  z.blocks = 2, z.block_rows = 48;
  CHECK_STATUS(ctx, ps_column_set_zones(ctx, col, &z), PS_ERR_INVALID_ARGUMENT);
  z.block_rows = 64, fl[1] = PS_ZONE_HAS_NULLS;
  CHECK_STATUS(ctx, ps_column_set_zones(ctx, col, &z), PS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ps_context_last_error(ctx), "no validity bitmap") != NULL);
  fl[1] = 0, mn[1] = 100;
  CHECK_STATUS(ctx, ps_column_set_zones(ctx, col, &z), PS_ERR_INVALID_ARGUMENT);
  CHECK(ps_column_zones(col, NULL) == 1); /* the earlier ones stay */
  CHECK_OK(ctx, ps_column_set_zones(ctx, col, NULL));
  CHECK(ps_column_zones(col, NULL) == 0);
  ps_column_destroy(col);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "zones");
  static const uint64_t CHUNKS[] = {0, 96, 992, 4160};
  ps_context *ref = strcmp(th.backend, "reference") == 0 ? NULL : th_reference_context(0);
  ps_context *ctxs[4];
  for (int k = 0; k < 4; k++) ctxs[k] = th_context(CHUNKS[k]);
  static const uint64_t NS[] = {0, 1, 31, 33, 100, 4096, 4097, 9000, 20000};
  const unsigned cases = th.quick == 2 ? 10 : th.quick ? 14 : 40;
  for (unsigned k = 0; k < cases; k++) {
    uint64_t n = k < 9 ? NS[k] : k == 9 ? 20000 : 500 + th_below(&th.rng, 30000);
    run_case(ctxs[k % 4], ref, n, &th.rng, k == 9);
  }
  /* the sweep compared pruned runs, not only unpruned ones twice */
  CHECKF(decided_false > 0 && decided_true > 0, "the random cases decided %llu rows ALL FALSE, %llu ALL TRUE",
         (unsigned long long)decided_false, (unsigned long long)decided_true);
  check_pruning_happens(ctxs[0]);
  check_pruning_happens(ctxs[2]);
  check_set_zones(ctxs[0]);
  check_many_runs(ctxs[0]);
  check_many_runs(ctxs[1]);
  for (int k = 0; k < 4; k++) ps_context_destroy(ctxs[k]);
  ps_context_destroy(ref);
  return th_finish();
}
