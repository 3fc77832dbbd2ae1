/*
 * multi_device: a context over several devices (ps_context_options.devices)
 * gives exactly what a context of one device gives. Seeded random tables
 * (every numeric type, dictionaries, nulls, sorted columns the zone maps
 * decide) of row counts around the 65536-row runs the columns are split in,
 * device-resident or host-resident with a small device_memory_limit, and
 * random predicate trees: the bitmap, counts, mask, row ids (both widths),
 * gathers at the selected ids (values, validity, strings), aggregates, a
 * GROUP BY query (and its partial result) are compared with one device's.
 * Then DELTA columns, lossless float columns' sums, zone-map statistics, the calls that need one device's
 * memory (PS_ERR_UNSUPPORTED, named), and bad device lists.
 *
 * The devices: PACKSCAN_TEST_DEVICES ("0,1"), else three reference
 * instances, or devices 0 and 1 of the backend, or device 0 twice (two
 * contexts of one GPU or CPU device) where it has one.
 */
#include <math.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"

static const ps_type TYPES[] = {PS_TYPE_INT8,   PS_TYPE_INT16,  PS_TYPE_INT32,  PS_TYPE_INT64,   PS_TYPE_UINT8,
                                PS_TYPE_UINT16, PS_TYPE_UINT32, PS_TYPE_UINT64, PS_TYPE_FLOAT32, PS_TYPE_FLOAT64};
static const uint32_t WIDTHS[] = {0, 1, 3, 7, 8, 13, 16, 31, 32, 33, 64};

static int32_t devices[PS_MAX_DEVICE_COUNT];
static uint32_t ndevices;

static ps_status group_context(uint64_t limit, const int32_t *devs, uint32_t n, ps_context **out, char *err,
                               size_t size) {
  ps_context_options o;
  th_options(&o, th.backend, 0);
  o.device_memory_limit = limit;
  o.device_count = n;
  o.devices = devs;
  return ps_context_create(&o, err, size, out);
}

static ps_context *group(uint64_t limit) {
  char err[512];
  ps_context *ctx = NULL;
  if (group_context(limit, devices, ndevices, &ctx, err, sizeof err) != PS_OK) {
    fprintf(stderr, "multi_device: no %s context over %u devices: %s\n", th.backend, ndevices, err);
    exit(1);
  }
  th_apply_options(ctx);
  return ctx;
}

static void pick_devices(void) {
  const char *env = getenv("PACKSCAN_TEST_DEVICES");
  if (env && *env) {
    for (const char *p = env; *p && ndevices < PS_MAX_DEVICE_COUNT;) {
      devices[ndevices++] = (int32_t)strtol(p, (char **)&p, 10);
      while (*p == ',' || *p == ' ') p++;
    }
    return;
  }
  if (th_is_reference()) {
    ndevices = 3;
    devices[0] = 0, devices[1] = 1, devices[2] = 2;
    return;
  }
  ndevices = 2;
  devices[0] = 0, devices[1] = 1;
  char err[512];
  ps_context *ctx = NULL;
  if (group_context(0, devices, 2, &ctx, err, sizeof err) == PS_OK) {
    ps_context_destroy(ctx);
    return;
  }
  devices[1] = 0; /* one device: two contexts of it */
}

static ps_status create(ps_context *ctx, const tcol *c, int host, ps_column **out) {
  if (!host) return tcol_create(ctx, c, out);
  ps_for_desc d = tcol_for_desc(c->code_type, c->n, c->width, c->scale, c->ref, c->validity != NULL);
  d.data = c->data;
  d.data_size = c->data_size;
  d.validity = c->validity;
  if (c->type != PS_TYPE_STRING) return ps_column_create_for_host(ctx, &d, out);
  ps_dict_desc dd;
  tcol_dict_desc(c, &dd);
  return ps_column_create_dict_host(ctx, &dd, &d, out);
}

/* One context's answers, as text and bytes compared whole. */
typedef struct outputs {
  uint8_t *bitmap, *mask;
  uint64_t count, count_only, mask_count, nids, nids32;
  uint64_t *ids;
  uint32_t *ids32;
  ps_aggregates aggs[TR_MAX_COLS];
  ps_status agg_st[TR_MAX_COLS], gather_st[TR_MAX_COLS];
  uint8_t *values[TR_MAX_COLS], *valid[TR_MAX_COLS];
  int64_t *soff[TR_MAX_COLS];
  uint8_t *sbytes[TR_MAX_COLS];
  char query[4096], partial[64];
} outputs;

static void free_outputs(outputs *o, size_t ncols) {
  free(o->bitmap);
  free(o->mask);
  free(o->ids);
  free(o->ids32);
  for (size_t i = 0; i < ncols; i++) {
    free(o->values[i]);
    free(o->valid[i]);
    free(o->soff[i]);
    free(o->sbytes[i]);
  }
}

/* GROUP BY a dictionary column (where there is one) of COUNT(*), COUNT,
 * MIN, MAX, SUM and AVG of a numeric column under e, every group formatted;
 * and the groups of the partial result. */
static void query_text(ps_context *ctx, trun *tr, ps_column *const *h, const ps_expr *e, uint64_t n, outputs *o) {
  o->query[0] = o->partial[0] = '\0';
  int v = -1, k = -1;
  for (size_t i = 0; i < tr->ncols; i++) {
    if (tr->cols[i]->type != PS_TYPE_STRING && v < 0) v = (int)i;
    if (tr->cols[i]->type == PS_TYPE_STRING && k < 0) k = (int)i;
  }
  if (v < 0) return;
  ps_value *val = NULL;
  if (!CHECK_OK(ctx, ps_value_column(ctx, h[v], &val))) return;
  ps_agg aggs[6] = {{PS_AGG_COUNT_STAR, NULL}, {PS_AGG_COUNT, val}, {PS_AGG_MIN, val},
                    {PS_AGG_MAX, val},         {PS_AGG_SUM, val},   {PS_AGG_AVG, val}};
  ps_query_desc d;
  ps_query_desc_init(&d);
  d.rows = n;
  d.where = e;
  d.n_aggs = 6;
  d.aggs = aggs;
  if (k >= 0) d.n_keys = 1, d.keys[0] = h[k];
  ps_query *q = NULL;
  ps_query_result *res = NULL;
  size_t size = sizeof o->query;
  if (CHECK_OK(ctx, ps_query_create(ctx, &d, &q))) {
    ps_status st = ps_query_run(ctx, q, &res);
    size_t len = (size_t)snprintf(o->query, size, "%s", ps_status_name(st));
    const uint64_t groups = st == PS_OK ? ps_query_result_groups(res) : 0;
    for (uint64_t g = 0; g < groups && len < size; g++) {
      ps_datum dt;
      char buf[96] = "";
      if (d.n_keys && ps_query_result_key(res, g, 0, &dt) == PS_OK) ps_datum_format(&dt, buf, sizeof buf);
      len += (size_t)snprintf(o->query + len, size - len, " [%s]", buf);
      for (uint32_t a = 0; a < 6 && len < size; a++) {
        buf[0] = '\0';
        ps_status s2 = ps_query_result_value(res, g, a, &dt);
        if (s2 == PS_OK) ps_datum_format(&dt, buf, sizeof buf);
        len += (size_t)snprintf(o->query + len, size - len, " %s:%s", ps_status_name(s2), buf);
      }
    }
    ps_query_result_destroy(res);
    res = NULL;
    st = ps_query_run_partial(ctx, q, &res);
    snprintf(o->partial, sizeof o->partial, "%s %llu", ps_status_name(st),
             (unsigned long long)(st == PS_OK ? ps_query_result_groups(res) : 0));
    ps_query_result_destroy(res);
    ps_query_destroy(q);
  }
  ps_value_destroy(val);
}

static size_t value_bytes(ps_type t) { return t == PS_TYPE_STRING ? 4 : ps_type_size(t); }

static void outputs_of(ps_context *ctx, trun *tr, ps_column *const *h, const ps_expr *e, uint64_t n, outputs *o) {
  const uint64_t nb = (n + 7) / 8;
  memset(o, 0, sizeof *o);
  o->bitmap = th_calloc(nb + 1, 1);
  o->mask = th_calloc(n + 1, 1);
  CHECK_OK(ctx, ps_filter(ctx, e, o->bitmap, nb, &o->count));
  CHECK_OK(ctx, ps_filter_count(ctx, e, &o->count_only));
  CHECK_OK(ctx, ps_filter_mask(ctx, e, o->mask, n, &o->mask_count));
  void *ids = NULL;
  if (CHECK_OK(ctx, ps_filter_row_ids(ctx, e, PS_INDEX_UINT64, &ids, &o->nids))) {
    o->ids = th_calloc(o->nids + 1, 8);
    if (o->nids) memcpy(o->ids, ids, o->nids * 8);
    ps_free(ctx, ids);
  }
  ids = NULL;
  if (CHECK_OK(ctx, ps_filter_row_ids(ctx, e, PS_INDEX_UINT32, &ids, &o->nids32))) {
    o->ids32 = th_calloc(o->nids32 + 1, 4);
    if (o->nids32) memcpy(o->ids32, ids, o->nids32 * 4);
    ps_free(ctx, ids);
  }
  for (size_t i = 0; i < tr->ncols; i++) {
    if (tr->cols[i]->type != PS_TYPE_STRING) o->agg_st[i] = ps_aggregate(ctx, h[i], NULL, 0, &o->aggs[i]);
    o->values[i] = th_calloc(o->nids + 1, 8);
    o->valid[i] = th_calloc(o->nids / 8 + 1, 1);
    if (tr->cols[i]->type == PS_TYPE_STRING)
      o->gather_st[i] =
          ps_gather_strings(ctx, h[i], o->ids, PS_INDEX_UINT64, o->nids, &o->soff[i], &o->sbytes[i], o->valid[i]);
    else
      o->gather_st[i] = ps_gather_values(ctx, h[i], o->ids, PS_INDEX_UINT64, o->nids, o->values[i], o->valid[i]);
  }
  query_text(ctx, tr, h, e, n, o);
}

static int compare(trun *tr, const outputs *g, const outputs *d, uint64_t n, const char *label) {
  const uint64_t nb = (n + 7) / 8;
  int ok = CHECKF(g->count == d->count && g->count_only == d->count_only && g->mask_count == d->mask_count &&
                      g->nids == d->nids && g->nids32 == d->nids32,
                  "%s: counts over the devices %llu/%llu/%llu/%llu, one device %llu/%llu/%llu/%llu", label,
                  (unsigned long long)g->count, (unsigned long long)g->count_only, (unsigned long long)g->mask_count,
                  (unsigned long long)g->nids, (unsigned long long)d->count, (unsigned long long)d->count_only,
                  (unsigned long long)d->mask_count, (unsigned long long)d->nids);
  ok &= CHECKF(memcmp(g->bitmap, d->bitmap, nb) == 0, "%s: bitmap differs", label);
  ok &= CHECKF(memcmp(g->mask, d->mask, n) == 0, "%s: mask differs", label);
  if (g->nids != d->nids || g->nids32 != d->nids32) return 0;
  ok &= CHECKF(memcmp(g->ids, d->ids, g->nids * 8) == 0, "%s: row ids differ", label);
  ok &= CHECKF(memcmp(g->ids32, d->ids32, g->nids32 * 4) == 0, "%s: uint32 row ids differ", label);
  for (size_t i = 0; i < tr->ncols; i++) {
    const tcol *c = tr->cols[i];
    ok &= CHECKF(g->agg_st[i] == d->agg_st[i] && memcmp(&g->aggs[i], &d->aggs[i], sizeof g->aggs[i]) == 0,
                 "%s: aggregate of column %zu differs (devices %s count %llu, one %s count %llu)", label, i,
                 ps_status_name(g->agg_st[i]), (unsigned long long)g->aggs[i].count, ps_status_name(d->agg_st[i]),
                 (unsigned long long)d->aggs[i].count);
    if (!CHECKF(g->gather_st[i] == d->gather_st[i], "%s: gather of column %zu: devices %s, one %s", label, i,
                ps_status_name(g->gather_st[i]), ps_status_name(d->gather_st[i])) ||
        g->gather_st[i] != PS_OK)
      continue;
    ok &= CHECKF(memcmp(g->valid[i], d->valid[i], (g->nids + 7) / 8) == 0, "%s: gathered validity of column %zu", label,
                 i);
    if (c->type == PS_TYPE_STRING)
      ok &= CHECKF(memcmp(g->soff[i], d->soff[i], (g->nids + 1) * 8) == 0 &&
                       memcmp(g->sbytes[i], d->sbytes[i], (size_t)g->soff[i][g->nids]) == 0,
                   "%s: gathered strings of column %zu differ", label, i);
    else
      ok &= CHECKF(memcmp(g->values[i], d->values[i], g->nids * value_bytes(c->type)) == 0,
                   "%s: gathered values of column %zu differ", label, i);
  }
  ok &= CHECKF(strcmp(g->query, d->query) == 0, "%s: query over the devices '%.300s', one device '%.300s'", label,
               g->query, d->query);
  ok &= CHECKF(strcmp(g->partial, d->partial) == 0, "%s: partial result over the devices %s, one device %s", label,
               g->partial, d->partial);
  return ok;
}

static void run_case(ps_context *gctx, ps_context *dctx, uint64_t n, th_rng *r, int host, int zones) {
  trun tr;
  tr_init(&tr, dctx, NULL); /* the one-device twins */
  int cols[8];
  size_t nc = 0;
  static const int nulls[] = {TN_NO_BITMAP, TN_NO_BITMAP, TN_FEW, TN_HALF, TN_ALL};
  const size_t nfor = 1 + th_below(r, 3);
  for (size_t k = 0; k < nfor; k++) {
    tcol *c = tcol_random_for(r, TH_PICK(r, TYPES), n, TH_PICK(r, WIDTHS), TH_PICK(r, nulls));
    if (zones && k == 0 && n) tcol_reshape(r, c, TSHAPE_SORTED);
    cols[nc] = tr_add(&tr, c);
    if (cols[nc] >= 0) nc++;
  }
  int d = tr_add(&tr, tcol_random_dict(r, n, 2 + (uint32_t)th_below(r, 8), 2 + th_below(r, 40), th_chance(r, 60),
                                       TH_PICK(r, nulls)));
  if (d >= 0) cols[nc++] = d;
  if (nc && th_chance(r, 50)) {
    int p = tr_add(&tr, tcol_derived(r, tr.cols[cols[0]], TH_PICK(r, TYPES), TN_FEW));
    if (p >= 0) cols[nc++] = p;
  }
  ps_column *gh[TR_MAX_COLS] = {0};
  int ok = 1;
  for (size_t i = 0; i < tr.ncols; i++) {
    ok &= CHECK_OK(gctx, create(gctx, tr.cols[i], host && (i == 0 || th_chance(r, 75)), &gh[i]));
    if (zones && ok) {
      CHECK_OK(gctx, ps_column_compute_zones(gctx, gh[i]));
      CHECK_OK(dctx, ps_column_compute_zones(dctx, tr.h[i]));
      ps_zone_map zg, zd;
      ok &= CHECK(ps_column_zones(gh[i], &zg) && ps_column_zones(tr.h[i], &zd));
      ok &= CHECKF(ok && zg.blocks == zd.blocks && memcmp(zg.min, zd.min, zg.blocks * 8) == 0 &&
                       memcmp(zg.max, zd.max, zg.blocks * 8) == 0 && memcmp(zg.flags, zd.flags, zg.blocks) == 0,
                   "zone maps of column %zu differ", i);
    }
  }
  th_case("n=%llu devices=%u host=%d zones=%d", (unsigned long long)n, ndevices, host, zones);
  for (unsigned k = 0; ok && nc && k < th_reps(2 * th.scale); k++) {
    onode *t = k == 0 && zones ? on_cmp(cols[0], PS_LT, gen_num_literal(r, tr.cols[cols[0]]))
                               : gen_tree(r, &tr, cols, nc, 1 + (int)th_below(r, 3), 12);
    ps_expr *eg = NULL, *ed = NULL;
    if (CHECK_OK(gctx, on_build(gctx, t, gh, &eg)) && CHECK_OK(dctx, on_build(dctx, t, tr.h, &ed))) {
      outputs og, od;
      ps_context_scan_stats_reset(gctx);
      ps_context_scan_stats_reset(dctx);
      outputs_of(gctx, &tr, gh, eg, n, &og);
      outputs_of(dctx, &tr, tr.h, ed, n, &od);
      char label[64];
      snprintf(label, sizeof label, "tree %u", k);
      if (!compare(&tr, &og, &od, n, label)) tr_print_case(&tr, t);
      if (zones) { /* the devices skip what one device skips */
        ps_scan_stats sg = {sizeof sg, 0, 0, 0, 0}, sd = {sizeof sd, 0, 0, 0, 0};
        CHECK_OK(gctx, ps_context_scan_stats(gctx, &sg));
        CHECK_OK(dctx, ps_context_scan_stats(dctx, &sd));
        CHECKF(sg.rows_skipped + sg.rows_all_true == sd.rows_skipped + sd.rows_all_true,
               "%s: rows decided by zone maps over the devices %llu, one device %llu", label,
               (unsigned long long)(sg.rows_skipped + sg.rows_all_true),
               (unsigned long long)(sd.rows_skipped + sd.rows_all_true));
      }
      free_outputs(&og, tr.ncols);
      free_outputs(&od, tr.ncols);
    }
    ps_expr_destroy(eg);
    ps_expr_destroy(ed);
    on_free(t);
  }
  for (size_t i = 0; i < tr.ncols; i++) ps_column_destroy(gh[i]);
  tr_clear(&tr);
}

/* A DELTA column (sorted values: each device gets its blocks laid out as a
 * column of their own) answers as on one device. */
static void check_delta(ps_context *gctx, ps_context *dctx, th_rng *r, uint64_t n) {
  th_case("delta n=%llu", (unsigned long long)n);
  int64_t *v = th_malloc(n * 8 + 8);
  int64_t x = (int64_t)th_below(r, 1000) - 500;
  for (uint64_t i = 0; i < n; i++) v[i] = x += (int64_t)th_below(r, 5);
  ps_plain in = {PS_TYPE_INT64, v, n, NULL};
  ps_encoded enc;
  char err[256];
  if (!CHECKF(ps_encode(&in, PS_ENCODING_DELTA, 0, 0, 0, NULL, err, sizeof err, &enc) == PS_OK, "encode: %s", err)) {
    free(v);
    return;
  }
  ps_column *cg = NULL, *cd = NULL;
  if (CHECK_OK(gctx, ps_column_create_for(gctx, &enc.desc, &cg)) &&
      CHECK_OK(dctx, ps_column_create_for(dctx, &enc.desc, &cd))) {
    for (int k = 0; k < 4; k++) {
      ps_literal lit = {.kind = PS_LIT_INT64, .v.i = v[th_below(r, n)]};
      ps_expr *eg = NULL, *ed = NULL;
      uint64_t cgc = 0, cdc = 0;
      if (CHECK_OK(gctx, ps_expr_compare(gctx, cg, PS_LE, lit, &eg)) &&
          CHECK_OK(dctx, ps_expr_compare(dctx, cd, PS_LE, lit, &ed)) &&
          CHECK_OK(gctx, ps_filter_count(gctx, eg, &cgc)) && CHECK_OK(dctx, ps_filter_count(dctx, ed, &cdc)))
        CHECKF(cgc == cdc, "delta count: devices %llu, one device %llu", (unsigned long long)cgc,
               (unsigned long long)cdc);
      ps_expr_destroy(eg);
      ps_expr_destroy(ed);
    }
    ps_aggregates ag, ad;
    if (CHECK_OK(gctx, ps_aggregate(gctx, cg, NULL, 0, &ag)) && CHECK_OK(dctx, ps_aggregate(dctx, cd, NULL, 0, &ad)))
      CHECK(memcmp(&ag, &ad, sizeof ag) == 0);
    uint64_t ids[3] = {0, n - 1, n / 2};
    int64_t gv[3] = {0}, dv[3] = {0};
    if (CHECK_OK(gctx, ps_gather_values(gctx, cg, ids, PS_INDEX_UINT64, 3, gv, NULL)) &&
        CHECK_OK(dctx, ps_gather_values(dctx, cd, ids, PS_INDEX_UINT64, 3, dv, NULL)))
      CHECK(memcmp(gv, dv, sizeof gv) == 0 && gv[1] == v[n - 1]);
  }
  ps_column_destroy(cg);
  ps_column_destroy(cd);
  ps_encoded_destroy(&enc);
  free(v);
}

/* A lossless float column's ps_aggregate: the parts' exact sums add up to
 * one device's sum bit for bit (and to NaN where one device's is NaN: a
 * value 2^-140 beside 1.0 lies below the column's unit). */
/* SUM, AVG, MIN, MAX of lossless float column c. */
static ps_status float_query(ps_context *ctx, ps_column *c, uint64_t n, ps_query_result **out) {
  ps_value *v[4] = {NULL};
  ps_status st = PS_OK;
  for (int i = 0; i < 4 && st == PS_OK; i++) st = ps_value_column(ctx, c, &v[i]);
  ps_query *q = NULL;
  if (st == PS_OK) {
    const ps_agg aggs[4] = {{PS_AGG_SUM, v[0]}, {PS_AGG_AVG, v[1]}, {PS_AGG_MIN, v[2]}, {PS_AGG_MAX, v[3]}};
    ps_query_desc d;
    ps_query_desc_init(&d);
    d.rows = n;
    d.n_aggs = 4;
    d.aggs = aggs;
    st = ps_query_create(ctx, &d, &q);
  }
  if (st == PS_OK) st = ps_query_run(ctx, q, out);
  ps_query_destroy(q);
  for (int i = 0; i < 4; i++) ps_value_destroy(v[i]);
  return st;
}

static void check_float_sum(ps_context *gctx, ps_context *dctx, th_rng *r, uint64_t n, bool unrep) {
  th_case("lossless float sum n=%llu unrep=%d", (unsigned long long)n, unrep);
  double *v = th_malloc(n * 8 + 8);
  for (uint64_t i = 0; i < n; i++) v[i] = (double)th_below(r, 100000) / 1000 * (th_below(r, 50) ? 1.0 : 1.15078);
  if (unrep) v[th_below(r, n)] = ldexp(1.0, -140);
  ps_plain in = {PS_TYPE_FLOAT64, v, n, NULL};
  ps_encoded enc;
  char err[256];
  if (!CHECKF(ps_encode_for(&in, 0, -1, 0, NULL, err, sizeof err, &enc) == PS_OK, "encode: %s", err)) {
    free(v);
    return;
  }
  CHECKF(enc.desc.float_map != PS_FLOAT_MAP_DECIMAL, "float map %u", enc.desc.float_map);
  ps_column *cg = NULL, *cd = NULL;
  ps_aggregates ag, ad;
  if (CHECK_OK(gctx, ps_column_create_for(gctx, &enc.desc, &cg)) &&
      CHECK_OK(dctx, ps_column_create_for(dctx, &enc.desc, &cd)) &&
      CHECK_OK(gctx, ps_aggregate(gctx, cg, NULL, 0, &ag)) && CHECK_OK(dctx, ps_aggregate(dctx, cd, NULL, 0, &ad))) {
    CHECKF(memcmp(&ag, &ad, sizeof ag) == 0, "devices: count %llu sum %.17g; one device: count %llu sum %.17g",
           (unsigned long long)ag.count, ag.sum_double, (unsigned long long)ad.count, ad.sum_double);
    CHECKF(isnan(ad.sum_double) == unrep, "one device's sum %.17g", ad.sum_double);
    /* the query's SUM, AVG, MIN, MAX of it: each device's partial in its
     * own unit, merged exactly; the same datums (or error) as one device */
    ps_query_result *rg = NULL, *rd = NULL;
    const ps_status sg = float_query(gctx, cg, n, &rg), sd = float_query(dctx, cd, n, &rd);
    CHECKF(sg == sd && (sd == PS_OK || sd == PS_ERR_NOT_REPRESENTABLE), "query: devices %s, one device %s (%s)",
           ps_status_name(sg), ps_status_name(sd), ps_context_last_error(gctx));
    for (uint32_t a = 0; sg == PS_OK && sd == PS_OK && a < 4; a++) {
      ps_datum x, y;
      if (CHECK_OK(NULL, ps_query_result_value(rg, 0, a, &x)) && CHECK_OK(NULL, ps_query_result_value(rd, 0, a, &y)))
        CHECKF(x.lo == y.lo && x.hi == y.hi && x.scale == y.scale && !memcmp(&x.as_double, &y.as_double, 8),
               "aggregate %u: devices %.17g, one device %.17g", a, x.as_double, y.as_double);
    }
    ps_query_result_destroy(rg);
    ps_query_result_destroy(rd);
  }
  ps_column_destroy(cg);
  ps_column_destroy(cd);
  ps_encoded_destroy(&enc);
  free(v);
}

/* What a context over several devices refuses, and says why. */
static void check_refusals(ps_context *gctx) {
  th_case("refusals");
  ps_buffer *b = NULL;
  CHECK_STATUS(gctx, ps_buffer_create(gctx, 64, &b), PS_ERR_UNSUPPORTED);
  CHECK(b == NULL);
  uint8_t data[8] = {1, 2, 3, 4, 5, 6, 7, 8};
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = PS_TYPE_UINT8;
  d.n = 8;
  d.width = 8;
  d.data = data;
  d.data_size = 8;
  ps_column *c = NULL;
  ps_expr *e = NULL;
  if (CHECK_OK(gctx, ps_column_create_for(gctx, &d, &c))) {
    ps_literal lit = {.kind = PS_LIT_INT64, .v.i = 4};
    if (CHECK_OK(gctx, ps_expr_compare(gctx, c, PS_LT, lit, &e))) {
      uint64_t count = 0;
      CHECK_STATUS(gctx, ps_filter_device(gctx, e, NULL, 0, &count), PS_ERR_UNSUPPORTED);
      CHECK(th_contains_ci(ps_context_last_error(gctx), "ps_filter_device") &&
            th_contains_ci(ps_context_last_error(gctx), "devices"));
      CHECK_STATUS(gctx, ps_filter_row_ids_device(gctx, e, PS_INDEX_UINT32, NULL, 0, 0, &count), PS_ERR_UNSUPPORTED);
      CHECK_STATUS(gctx, ps_filter_count(gctx, e, &count), PS_OK);
      CHECK(count == 3);
    }
    ps_aggregates a;
    CHECK_STATUS(gctx, ps_aggregate(gctx, c, (const ps_buffer *)c, 0, &a), PS_ERR_UNSUPPORTED);
  }
  ps_expr_destroy(e);
  ps_column_destroy(c);
  CHECK(strcmp(ps_context_backend(gctx), th.backend) == 0);
  CHECK(strstr(ps_context_device(gctx), " + ") != NULL);
  /* bad device lists */
  char err[512];
  ps_context *bad = NULL;
  int32_t many[PS_MAX_DEVICE_COUNT + 1] = {0};
  CHECK(group_context(0, many, PS_MAX_DEVICE_COUNT + 1, &bad, err, sizeof err) == PS_ERR_INVALID_ARGUMENT &&
        strstr(err, "device_count") != NULL);
  CHECK(group_context(0, NULL, 2, &bad, err, sizeof err) == PS_ERR_INVALID_ARGUMENT && strstr(err, "NULL") != NULL);
  if (!th_is_reference()) {
    int32_t missing[2] = {0, 999};
    CHECK(group_context(0, missing, 2, &bad, err, sizeof err) != PS_OK && strstr(err, "devices[1] = 999") != NULL);
  }
  CHECK(bad == NULL);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "multi_device");
  pick_devices();
  ps_context *dctx = th_context(0);
  ps_context *gctx = group(0), *glim = group(PS_DEVICE_MEMORY_LIMIT_MIN);
  th_rng r;
  th_rng_seed(&r, th.seed);
  const uint64_t run = 65536;
  const uint64_t ns[] = {0, 1000, run, run + 1, 2 * run + 4099, th.quick ? 3 * run + 17 : 5 * run + 17};
  for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++) {
    run_case(gctx, dctx, ns[i], &r, 0, 0);
    run_case(gctx, dctx, ns[i], &r, 0, 1);
    run_case(glim, dctx, ns[i], &r, 1, i % 2);
  }
  check_delta(gctx, dctx, &r, 3 * run + 5000);
  check_delta(glim, dctx, &r, run + 1);
  check_float_sum(gctx, dctx, &r, 3 * run + 5000, false);
  check_float_sum(gctx, dctx, &r, 2 * run + 7, true);
  check_float_sum(glim, dctx, &r, run + 1, false);
  check_refusals(gctx);
  ps_context_destroy(glim);
  ps_context_destroy(gctx);
  ps_context_destroy(dctx);
  return th_finish();
}
