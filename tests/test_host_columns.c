/*
 * host_columns: host-resident columns (ps_column_create_for_host,
 * ps_column_create_dict_host) streamed through the device give exactly what
 * the same data gives device-resident. A context with a small
 * device_memory_limit (many chunks of row counts that are rarely multiples
 * of 1024) holds a random mix of host-resident and device-resident columns;
 * a default context holds them all device-resident. Seeded random columns
 * (every numeric type, dictionaries, nulls, shapes the zone maps decide)
 * and random predicate trees over several columns at once; compared: the
 * bitmap, counts, mask, row ids, refinement of a selection, aggregates over
 * the selection, gathers of every column at the selected ids (values,
 * validity, strings) and a GROUP BY query under the predicate. Then: the
 * column's memory is read, not copied (a change shows in the next call);
 * zone-pruned runs are skipped; limits and refusals.
 */
#define _DEFAULT_SOURCE /* MAP_ANONYMOUS */
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "gen.h"
#include "internal.h"   /* ps_context.query_run_rows */
#include "kcache.h"     /* ps_context_kcache_stats */
#include "query_spec.h" /* PS_QUERY_SPEC_MIN_ROWS */

static const ps_type TYPES[] = {PS_TYPE_INT8,   PS_TYPE_INT16,  PS_TYPE_INT32,  PS_TYPE_INT64,   PS_TYPE_UINT8,
                                PS_TYPE_UINT16, PS_TYPE_UINT32, PS_TYPE_UINT64, PS_TYPE_FLOAT32, PS_TYPE_FLOAT64};
static const uint32_t WIDTHS[] = {0, 1, 3, 7, 8, 13, 16, 31, 32, 33, 64};

/* Small limits: a staging slot of 21,824 bytes and up; chunks of a few
 * hundred to a few thousand rows. */
static const uint64_t LIMITS[] = {PS_DEVICE_MEMORY_LIMIT_MIN, PS_DEVICE_MEMORY_LIMIT_MIN + 3 * 64 * 37, 200000};

static ps_context *limited_context(uint64_t limit) {
  ps_context_options o;
  th_options(&o, th.backend, 0);
  o.device_memory_limit = limit;
  char err[512];
  ps_context *ctx = NULL;
  ps_status st = ps_context_create(&o, err, sizeof err, &ctx);
  if (st != PS_OK) {
    fprintf(stderr, "host_columns: no %s context with device_memory_limit %llu: %s\n", th.backend,
            (unsigned long long)limit, err);
    exit(1);
  }
  th_apply_options(ctx);
  return ctx;
}

/* c in ctx, host-resident or device-resident. */
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

typedef struct outputs {
  uint8_t *bitmap, *mask, *refined;
  uint64_t count, count_only, mask_count, refined_count, nids;
  uint64_t *ids;
  ps_aggregates aggs[TR_MAX_COLS];
  ps_status agg_st[TR_MAX_COLS];
  /* gathers at the selected ids: values (8 bytes a row), validity, strings */
  uint8_t *values[TR_MAX_COLS], *valid[TR_MAX_COLS];
  int64_t *soff[TR_MAX_COLS];
  uint8_t *sbytes[TR_MAX_COLS];
  ps_status gather_st[TR_MAX_COLS];
  char query[4096];
} outputs;

static void free_outputs(outputs *o, size_t ncols) {
  free(o->bitmap);
  free(o->mask);
  free(o->refined);
  free(o->ids);
  for (size_t i = 0; i < ncols; i++) {
    free(o->values[i]);
    free(o->valid[i]);
    free(o->soff[i]);
    free(o->sbytes[i]);
  }
}

/* GROUP BY key (a dictionary column, else none) of COUNT(*), COUNT, MIN, MAX,
 * SUM and AVG of a numeric column under e, every group formatted. */
static void query_text(ps_context *ctx, trun *tr, ps_column *const *h, const ps_expr *e, uint64_t n, char *out,
                       size_t size) {
  out[0] = '\0';
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
  if (CHECK_OK(ctx, ps_query_create(ctx, &d, &q))) {
    ps_status st = ps_query_run(ctx, q, &res);
    size_t len = (size_t)snprintf(out, size, "%s", ps_status_name(st));
    const uint64_t groups = st == PS_OK ? ps_query_result_groups(res) : 0;
    for (uint64_t g = 0; g < groups && len < size; g++) {
      ps_datum dt;
      char buf[96] = "";
      if (d.n_keys && ps_query_result_key(res, g, 0, &dt) == PS_OK) ps_datum_format(&dt, buf, sizeof buf);
      len += (size_t)snprintf(out + len, size - len, " [%s]", buf);
      for (uint32_t a = 0; a < 6 && len < size; a++) {
        buf[0] = '\0';
        ps_status s2 = ps_query_result_value(res, g, a, &dt);
        if (s2 == PS_OK) ps_datum_format(&dt, buf, sizeof buf);
        len += (size_t)snprintf(out + len, size - len, " %s:%s", ps_status_name(s2), buf);
      }
    }
    ps_query_result_destroy(res);
    ps_query_destroy(q);
  }
  ps_value_destroy(val);
}

static void outputs_of(ps_context *ctx, trun *tr, ps_column *const *h, const ps_expr *e, uint64_t n, const uint8_t *sel,
                       outputs *o) {
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
  ps_buffer *in = NULL, *out = NULL, *bits = NULL;
  if (nb && CHECK_OK(ctx, ps_buffer_create(ctx, nb, &in)) && CHECK_OK(ctx, ps_buffer_create(ctx, nb, &out))) {
    CHECK_OK(ctx, ps_buffer_write(ctx, in, 0, sel, nb));
    CHECK_OK(ctx, ps_filter_refine(ctx, e, in, 0, out, 0, &o->refined_count));
    CHECK_OK(ctx, ps_buffer_read(ctx, out, 0, o->refined, nb));
  }
  /* the filter's bitmap on the device (padded to words) for the aggregates */
  const uint64_t nbw = (n + 31) / 32 * 4;
  if (nbw && CHECK_OK(ctx, ps_buffer_create(ctx, nbw, &bits))) CHECK_OK(ctx, ps_filter_device(ctx, e, bits, 0, NULL));
  for (size_t i = 0; i < tr->ncols; i++) {
    memset(&o->aggs[i], 0, sizeof o->aggs[i]);
    if (tr->cols[i]->type != PS_TYPE_STRING) o->agg_st[i] = ps_aggregate(ctx, h[i], bits, 0, &o->aggs[i]);
    o->values[i] = th_calloc(o->nids + 1, 8);
    o->valid[i] = th_calloc(o->nids / 8 + 1, 1);
    if (tr->cols[i]->type == PS_TYPE_STRING)
      o->gather_st[i] =
          ps_gather_strings(ctx, h[i], o->ids, PS_INDEX_UINT64, o->nids, &o->soff[i], &o->sbytes[i], o->valid[i]);
    else
      o->gather_st[i] = ps_gather_values(ctx, h[i], o->ids, PS_INDEX_UINT64, o->nids, o->values[i], o->valid[i]);
  }
  ps_buffer_destroy(in);
  ps_buffer_destroy(out);
  ps_buffer_destroy(bits);
  query_text(ctx, tr, h, e, n, o->query, sizeof o->query);
}

static size_t value_bytes(ps_type t) {
  switch (t) {
    case PS_TYPE_INT8:
    case PS_TYPE_UINT8:
      return 1;
    case PS_TYPE_INT16:
    case PS_TYPE_UINT16:
      return 2;
    case PS_TYPE_INT32:
    case PS_TYPE_UINT32:
    case PS_TYPE_FLOAT32:
      return 4;
    default:
      return 8;
  }
}

/* Every output of the host-resident mix equals the device-resident one. */
static int compare(trun *tr, const outputs *h, const outputs *d, uint64_t n, const char *label) {
  const uint64_t nb = (n + 7) / 8;
  int ok = CHECKF(h->count == d->count && h->count_only == d->count_only && h->mask_count == d->mask_count &&
                      h->nids == d->nids && h->refined_count == d->refined_count,
                  "%s: counts host %llu/%llu/%llu/%llu/%llu, device %llu/%llu/%llu/%llu/%llu", label,
                  (unsigned long long)h->count, (unsigned long long)h->count_only, (unsigned long long)h->mask_count,
                  (unsigned long long)h->nids, (unsigned long long)h->refined_count, (unsigned long long)d->count,
                  (unsigned long long)d->count_only, (unsigned long long)d->mask_count, (unsigned long long)d->nids,
                  (unsigned long long)d->refined_count);
  ok &= CHECKF(memcmp(h->bitmap, d->bitmap, nb) == 0, "%s: bitmap differs", label);
  ok &= CHECKF(memcmp(h->mask, d->mask, n) == 0, "%s: mask differs", label);
  ok &= CHECKF(memcmp(h->refined, d->refined, nb) == 0, "%s: refined selection differs", label);
  if (h->nids != d->nids) return 0;
  ok &= CHECKF(memcmp(h->ids, d->ids, h->nids * 8) == 0, "%s: row ids differ", label);
  for (size_t i = 0; i < tr->ncols; i++) {
    const tcol *c = tr->cols[i];
    ok &= CHECKF(h->agg_st[i] == d->agg_st[i] && memcmp(&h->aggs[i], &d->aggs[i], sizeof h->aggs[i]) == 0,
                 "%s: aggregate of column %zu differs (host %s count %llu, device %s count %llu)", label, i,
                 ps_status_name(h->agg_st[i]), (unsigned long long)h->aggs[i].count, ps_status_name(d->agg_st[i]),
                 (unsigned long long)d->aggs[i].count);
    if (!CHECKF(h->gather_st[i] == d->gather_st[i], "%s: gather of column %zu: host %s, device %s", label, i,
                ps_status_name(h->gather_st[i]), ps_status_name(d->gather_st[i])))
      ok = 0;
    if (h->gather_st[i] != PS_OK || d->gather_st[i] != PS_OK) continue;
    ok &= CHECKF(memcmp(h->valid[i], d->valid[i], (h->nids + 7) / 8) == 0, "%s: gathered validity of column %zu", label,
                 i);
    if (c->type == PS_TYPE_STRING) {
      ok &= CHECKF(memcmp(h->soff[i], d->soff[i], (h->nids + 1) * 8) == 0 &&
                       memcmp(h->sbytes[i], d->sbytes[i], (size_t)h->soff[i][h->nids]) == 0,
                   "%s: gathered strings of column %zu differ", label, i);
    } else {
      ok &= CHECKF(memcmp(h->values[i], d->values[i], h->nids * value_bytes(c->type)) == 0,
                   "%s: gathered values of column %zu differ", label, i);
    }
  }
  ok &= CHECKF(strcmp(h->query, d->query) == 0, "%s: query host '%.300s', device '%.300s'", label, h->query, d->query);
  return ok;
}

/* Column c's description desc in ctx: host-resident or device-resident. */
static ps_status create_desc(ps_context *ctx, const tcol *c, const ps_for_desc *desc, int host, ps_column **out) {
  if (c->type != PS_TYPE_STRING)
    return host ? ps_column_create_for_host(ctx, desc, out) : ps_column_create_for(ctx, desc, out);
  ps_dict_desc dd;
  tcol_dict_desc(c, &dd);
  return host ? ps_column_create_dict_host(ctx, &dd, desc, out) : ps_column_create_dict(ctx, &dd, desc, out);
}

/* DELTA twins of integer or dictionary column c: its values (a null row's
 * the reference) encoded with PS_ENCODING_DELTA into *enc, which must outlive
 * them; *d device-resident in dctx, *h in hctx (host-resident or not). The
 * encoder's zone maps are kept or not at random. Returns whether *enc holds
 * an encoding. */
static int delta_twins(th_rng *r, ps_context *hctx, ps_context *dctx, const tcol *c, int host, ps_encoded *enc,
                       ps_column **h, ps_column **d) {
  const size_t vb = value_bytes(c->code_type);
  uint8_t *values = th_calloc(c->n + 1, vb);
  const int is_signed = c->code_type == PS_TYPE_INT8 || c->code_type == PS_TYPE_INT16 ||
                        c->code_type == PS_TYPE_INT32 || c->code_type == PS_TYPE_INT64;
  for (uint64_t i = 0; i < c->n; i++) {
    const uint64_t code = tcol_valid(c, i) ? tcol_code(c, i) : 0;
    const uint64_t v = is_signed ? (uint64_t)c->ref.i + code : c->ref.u + code;
    memcpy(values + i * vb, &v, vb); /* the low bytes: little-endian */
  }
  ps_plain p = {c->code_type, values, c->n, c->validity};
  char err[256] = "";
  const int made =
      CHECKF(ps_encode(&p, PS_ENCODING_DELTA, 0, 0, 0, NULL, err, sizeof err, enc) == PS_OK, "encode: %s", err);
  free(values);
  if (!made) return 0;
  ps_for_desc desc = enc->desc;
  if (th_chance(r, 50)) desc.zones = NULL;
  CHECK_OK(dctx, create_desc(dctx, c, &desc, 0, d));
  CHECK_OK(hctx, create_desc(hctx, c, &desc, host, h));
  return 1;
}

/* ps_column_compute_zones gave col the zone maps `want`. */
static void same_zones(const ps_column *col, const ps_zone_map *want, const char *where) {
  ps_zone_map z;
  if (!CHECK(ps_column_zones(col, &z) == 1 && want != NULL)) return;
  int same = z.block_rows == want->block_rows && z.blocks == want->blocks;
  for (uint64_t b = 0; same && b < z.blocks; b++)
    same = z.min[b] == want->min[b] && z.max[b] == want->max[b] && z.flags[b] == want->flags[b];
  CHECKF(same, "%s: the zone maps computed from a DELTA column differ from the encoder's", where);
}

/* delta: integer and dictionary columns are DELTA-encoded now and then
 * (host-resident and device-resident alike). */
static void run_case(ps_context *hctx, ps_context *dctx, uint64_t n, th_rng *r, int zones, int delta) {
  th_case("n=%llu zones=%d delta=%d, making columns", (unsigned long long)n, zones, delta);
  trun tr;
  tr_init(&tr, dctx, NULL); /* the device-resident twins */
  int cols[8];
  size_t nc = 0;
  static const int nulls[] = {TN_NO_BITMAP, TN_NO_BITMAP, TN_FEW, TN_HALF, TN_ALL};
  const size_t nfor = 1 + th_below(r, 3);
  for (size_t k = 0; k < nfor; k++) {
    tcol *c = tcol_random_for(r, TH_PICK(r, TYPES), n, TH_PICK(r, WIDTHS), TH_PICK(r, nulls));
    if (zones && k == 0 && n) tcol_reshape(r, c, TSHAPE_SORTED); /* a shape the zone maps decide */
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
  /* the twins in the limited context: most host-resident, one device-resident now and then */
  ps_column *hh[TR_MAX_COLS] = {0};
  ps_encoded encs[TR_MAX_COLS];
  int encoded[TR_MAX_COLS] = {0};
  char kinds[TR_MAX_COLS + 1] = "";
  int ok = 1;
  for (size_t i = 0; i < tr.ncols; i++) {
    const int host = i == 0 || th_chance(r, 75);
    const tcol *c = tr.cols[i];
    kinds[i] = host ? 'H' : 'D';
    kinds[i + 1] = '\0';
    if (delta && !tcol_is_float(c->code_type) && (i == 0 || th_chance(r, 60))) {
      ps_column *twin = NULL; /* replaces the device context's FOR twin */
      encoded[i] = delta_twins(r, hctx, dctx, c, host, &encs[i], &hh[i], &twin);
      ok &= hh[i] && twin;
      if (twin) ps_column_destroy(tr.h[i]), tr.h[i] = twin;
      kinds[i] = host ? 'h' : 'd';
    } else {
      ok &= CHECK_OK(hctx, create(hctx, c, host, &hh[i]));
    }
    if (zones && ok) {
      CHECK_OK(hctx, ps_column_compute_zones(hctx, hh[i]));
      CHECK_OK(dctx, ps_column_compute_zones(dctx, tr.h[i]));
      if (encoded[i]) { /* the zone maps of DELTA codes are those of the FOR codes the encoder scanned */
        same_zones(hh[i], encs[i].desc.zones, "host context");
        same_zones(tr.h[i], encs[i].desc.zones, "device context");
      }
    }
  }
  th_case("n=%llu columns=%s zones=%d (H/D: FOR host/device-resident; h/d: DELTA)", (unsigned long long)n, kinds,
          zones);
  for (unsigned k = 0; ok && nc && k < th_reps(3 * th.scale); k++) {
    onode *t = k == 0 && zones ? on_cmp(cols[0], PS_LT, gen_num_literal(r, tr.cols[cols[0]]))
                               : gen_tree(r, &tr, cols, nc, 1 + (int)th_below(r, 3), 12);
    ps_expr *eh = NULL, *ed = NULL;
    if (CHECK_OK(hctx, on_build(hctx, t, hh, &eh)) && CHECK_OK(dctx, on_build(dctx, t, tr.h, &ed))) {
      const uint64_t nb = (n + 7) / 8;
      uint8_t *sel = th_calloc(nb + 1, 1);
      for (uint64_t i = 0; i < n; i++)
        if (th_chance(r, 70)) sel[i / 8] |= (uint8_t)(1u << (i % 8));
      outputs oh, od;
      outputs_of(hctx, &tr, hh, eh, n, sel, &oh);
      outputs_of(dctx, &tr, tr.h, ed, n, sel, &od);
      char label[64];
      snprintf(label, sizeof label, "tree %u", k);
      if (!compare(&tr, &oh, &od, n, label)) tr_print_case(&tr, t);
      free_outputs(&oh, tr.ncols);
      free_outputs(&od, tr.ncols);
      free(sel);
    }
    ps_expr_destroy(eh);
    ps_expr_destroy(ed);
    on_free(t);
  }
  for (size_t i = 0; i < tr.ncols; i++) ps_column_destroy(hh[i]);
  tr_clear(&tr);
  for (size_t i = 0; i < TR_MAX_COLS; i++)
    if (encoded[i]) ps_encoded_destroy(&encs[i]);
}

/* The caller's memory is read where it is: a change shows in the next call
 * (no copy was made at creation); and runs the zone maps decide are not
 * read at all. */
/* A uint8 column of n rows of `data`, host-resident in ctx. */
static ps_status host_u8(ps_context *ctx, const uint8_t *data, uint64_t n, ps_column **out) {
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = PS_TYPE_UINT8;
  d.n = n;
  d.width = 8;
  d.data = data;
  d.data_size = n;
  return ps_column_create_for_host(ctx, &d, out);
}

static void check_in_place(ps_context *ctx) {
  th_case("in place");
  const uint64_t n = 50000 + 17;
  uint8_t *data = th_calloc(n, 1);
  for (uint64_t i = 0; i < n; i++) data[i] = (uint8_t)(i * 256 / n); /* sorted: zone maps decide most blocks */
  ps_column *col = NULL;
  if (!CHECK_OK(ctx, host_u8(ctx, data, n, &col))) {
    free(data);
    return;
  }
  ps_expr *e = NULL;
  CHECK_OK(ctx, ps_expr_compare(ctx, col, PS_EQ, ps_lit_uint(7), &e));
  uint64_t c0 = 0, c1 = 0;
  CHECK_OK(ctx, ps_filter_count(ctx, e, &c0));
  uint64_t sevens = 0;
  for (uint64_t i = 0; i < n; i++) sevens += data[i] == 7;
  CHECKF(c0 == sevens, "count %llu, expected %llu", (unsigned long long)c0, (unsigned long long)sevens);
  data[n - 1] = 7; /* the caller changes its memory: the column reads it */
  CHECK_OK(ctx, ps_filter_count(ctx, e, &c1));
  CHECKF(c1 == sevens + 1, "after a change: count %llu, expected %llu", (unsigned long long)c1,
         (unsigned long long)(sevens + 1));
  data[n - 1] = (uint8_t)((n - 1) * 256 / n);
  /* zone maps: only the blocks that may hold a 7 are read */
  CHECK_OK(ctx, ps_column_compute_zones(ctx, col));
  ps_scan_stats s0 = {sizeof s0, 0, 0, 0, 0}, s1 = s0;
  CHECK_OK(ctx, ps_context_scan_stats(ctx, &s0));
  CHECK_OK(ctx, ps_filter_count(ctx, e, &c1));
  CHECK_OK(ctx, ps_context_scan_stats(ctx, &s1));
  CHECK(c1 == sevens);
  CHECKF(s1.rows_scanned - s0.rows_scanned <= 2 * PS_ZONE_BLOCK_ROWS, "rows read with zone maps: %llu of %llu",
         (unsigned long long)(s1.rows_scanned - s0.rows_scanned), (unsigned long long)n);
  ps_expr_destroy(e);
  ps_column_destroy(col);
  free(data);
}

/* A device-resident DELTA column (chunks on its 1024-row blocks) in one
 * expression with a host-resident column, against both device-resident. */
static void check_delta_mix(ps_context *hctx, ps_context *dctx, th_rng *r) {
  const uint64_t n = 3 * 4096 + 1000 + th_below(r, 3000);
  th_case("DELTA with a host-resident column, n=%llu", (unsigned long long)n);
  int64_t *ts = th_malloc(n * 8);
  int64_t t = (int64_t)th_below(r, 1000000);
  for (uint64_t i = 0; i < n; i++) ts[i] = t += (int64_t)th_below(r, 50);
  uint16_t *v = th_malloc(n * 2);
  for (uint64_t i = 0; i < n; i++) v[i] = (uint16_t)th_below(r, 5000);
  ps_plain pt = {PS_TYPE_INT64, ts, n, NULL}, pv = {PS_TYPE_UINT16, v, n, NULL};
  ps_encoded et, ev;
  char err[256];
  ps_column *dh = NULL, *dd = NULL, *vh = NULL, *vd = NULL;
  if (CHECKF(ps_encode(&pt, PS_ENCODING_DELTA, 0, 0, 0, NULL, err, sizeof err, &et) == PS_OK, "%s", err)) {
    if (CHECKF(ps_encode(&pv, PS_ENCODING_FOR, 0, 0, 0, NULL, err, sizeof err, &ev) == PS_OK, "%s", err)) {
      CHECK_OK(hctx, ps_column_create_for(hctx, &et.desc, &dh));
      CHECK_OK(dctx, ps_column_create_for(dctx, &et.desc, &dd));
      CHECK_OK(hctx, ps_column_create_for_host(hctx, &ev.desc, &vh));
      CHECK_OK(dctx, ps_column_create_for(dctx, &ev.desc, &vd));
      ps_expr *e[2] = {NULL, NULL};
      ps_context *ctx[2] = {hctx, dctx};
      ps_column *tcols[2] = {dh, dd}, *vcols[2] = {vh, vd};
      const int64_t lo = ts[n / 5], hi = ts[n - n / 7];
      for (int k = 0; k < 2 && tcols[k] && vcols[k]; k++) {
        ps_expr *a = NULL, *b = NULL;
        CHECK_OK(ctx[k], ps_expr_between(ctx[k], tcols[k], ps_lit_int(lo), ps_lit_int(hi), &a));
        CHECK_OK(ctx[k], ps_expr_compare(ctx[k], vcols[k], PS_LT, ps_lit_uint(1700), &b));
        CHECK_OK(ctx[k], ps_expr_and(ctx[k], a, b, &e[k]));
      }
      if (e[0] && e[1]) {
        const uint64_t nb = (n + 7) / 8;
        uint8_t *bm[2] = {th_calloc(nb, 1), th_calloc(nb, 1)};
        uint64_t c[2] = {0, 0}, nids[2] = {0, 0};
        void *ids[2] = {NULL, NULL};
        for (int k = 0; k < 2; k++) {
          CHECK_OK(ctx[k], ps_filter(ctx[k], e[k], bm[k], nb, &c[k]));
          CHECK_OK(ctx[k], ps_filter_row_ids(ctx[k], e[k], PS_INDEX_UINT32, &ids[k], &nids[k]));
        }
        uint64_t want = 0;
        for (uint64_t i = 0; i < n; i++) want += ts[i] >= lo && ts[i] <= hi && v[i] < 1700;
        CHECKF(c[0] == want && c[1] == want && nids[0] == want && nids[1] == want,
               "counts host mix %llu/%llu, device %llu/%llu, expected %llu", (unsigned long long)c[0],
               (unsigned long long)nids[0], (unsigned long long)c[1], (unsigned long long)nids[1],
               (unsigned long long)want);
        CHECKF(memcmp(bm[0], bm[1], nb) == 0, "bitmap differs");
        CHECKF(nids[0] != nids[1] || (nids[0] == 0 || memcmp(ids[0], ids[1], nids[0] * 4) == 0), "row ids differ");
        for (int k = 0; k < 2; k++) {
          ps_free(ctx[k], ids[k]);
          free(bm[k]);
        }
      }
      for (int k = 0; k < 2; k++) ps_expr_destroy(e[k]);
      ps_encoded_destroy(&ev);
    }
    ps_encoded_destroy(&et);
  }
  ps_column_destroy(dh);
  ps_column_destroy(dd);
  ps_column_destroy(vh);
  ps_column_destroy(vd);
  free(ts);
  free(v);
}

/* ---- host-resident DELTA columns ------------------------------------------ */

static uint64_t le64_at(const uint8_t *p) {
  uint64_t v;
  memcpy(&v, p, 8); /* little-endian hosts, as the encoders */
  return v;
}

static void set_le64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }

/* The selection of `x op v` over host-resident DELTA column h (in hctx)
 * equals the one over a device-resident column made now from desc (in
 * dctx), bitmap and count; with an AND of `y < 100` when y is given (a
 * second host-resident column: other chunks). */
static int delta_same(ps_context *hctx, ps_context *dctx, ps_column *h, const ps_for_desc *desc, ps_cmp op, int64_t v,
                      ps_column *y, const ps_for_desc *ydesc, const char *what) {
  ps_column *d = NULL, *yd = NULL;
  ps_expr *e[2] = {NULL, NULL};
  ps_context *ctx[2] = {hctx, dctx};
  const uint64_t n = desc->n, nb = (n + 7) / 8;
  uint8_t *bm[2] = {th_calloc(nb + 1, 1), th_calloc(nb + 1, 1)};
  uint64_t c[2] = {0, 0};
  ps_status st[2] = {PS_ERR_INTERNAL, PS_ERR_INTERNAL};
  int ok = CHECK_OK(dctx, ps_column_create_for(dctx, desc, &d));
  if (y) ok &= CHECK_OK(dctx, ps_column_create_for(dctx, ydesc, &yd));
  ps_column *x[2] = {h, d}, *ys[2] = {y, yd};
  for (int k = 0; ok && k < 2; k++) {
    ps_expr *a = NULL, *b = NULL;
    ok &= CHECK_OK(ctx[k], ps_expr_compare(ctx[k], x[k], op, ps_lit_int(v), &a));
    if (y && ok) {
      ok &= CHECK_OK(ctx[k], ps_expr_compare(ctx[k], ys[k], PS_LT, ps_lit_uint(100), &b));
      if (ok) ok &= CHECK_OK(ctx[k], ps_expr_and(ctx[k], a, b, &e[k]));
    } else {
      e[k] = a;
    }
    if (ok) st[k] = ps_filter(ctx[k], e[k], bm[k], nb, &c[k]);
  }
  if (ok)
    ok &=
        CHECKF(st[0] == PS_OK && st[1] == PS_OK && c[0] == c[1] && memcmp(bm[0], bm[1], nb) == 0,
               "%s: host %s count %llu, device %s count %llu%s", what, ps_status_name(st[0]), (unsigned long long)c[0],
               ps_status_name(st[1]), (unsigned long long)c[1], memcmp(bm[0], bm[1], nb) ? ", bitmaps differ" : "");
  for (int k = 0; k < 2; k++) {
    ps_expr_destroy(e[k]);
    free(bm[k]);
  }
  ps_column_destroy(d);
  ps_column_destroy(yd);
  return ok;
}

/* A filter into a device buffer (its copies may still be in flight when it
 * returns), then at once a count that chunks the column otherwise (beside
 * host-resident y): the blocks the first call staged were staged as its
 * chunks had them, as the device-resident column's bitmap shows. */
static void rechunk_in_flight(ps_context *hctx, ps_context *dctx, ps_column *h, const ps_for_desc *desc, ps_column *y,
                              int64_t at) {
  const uint64_t n = desc->n, nb = (n + 7) / 8, nbw = (n + 31) / 32 * 4;
  ps_column *d = NULL;
  ps_expr *eh = NULL, *ed = NULL, *a = NULL, *b = NULL, *both = NULL;
  ps_buffer *buf = NULL;
  uint8_t *got = th_calloc(nbw, 1), *want = th_calloc(nbw, 1);
  uint64_t c = 0, cd = 0;
  if (CHECK_OK(dctx, ps_column_create_for(dctx, desc, &d)) &&
      CHECK_OK(dctx, ps_expr_compare(dctx, d, PS_GE, ps_lit_int(at), &ed)) &&
      CHECK_OK(dctx, ps_filter(dctx, ed, want, nb, &cd)) &&
      CHECK_OK(hctx, ps_expr_compare(hctx, h, PS_GE, ps_lit_int(at), &eh)) &&
      CHECK_OK(hctx, ps_expr_compare(hctx, h, PS_GE, ps_lit_int(at), &a)) &&
      CHECK_OK(hctx, ps_expr_compare(hctx, y, PS_LT, ps_lit_uint(100), &b)) &&
      CHECK_OK(hctx, ps_buffer_create(hctx, nbw, &buf)) && CHECK_OK(hctx, ps_expr_and(hctx, a, b, &both))) {
    a = b = NULL; /* both owns them */
    for (int rep = 0; rep < 3; rep++) {
      memset(got, 0, nbw);
      CHECK_OK(hctx, ps_buffer_write(hctx, buf, 0, got, nbw));
      CHECK_OK(hctx, ps_filter_device(hctx, eh, buf, 0, NULL));
      CHECK_OK(hctx, ps_filter_count(hctx, both, &c));
      CHECK_OK(hctx, ps_buffer_read(hctx, buf, 0, got, nb));
      CHECKF(memcmp(got, want, nb) == 0, "rechunked while a call's copies were in flight: the bitmap differs (rep %d)",
             rep);
    }
  }
  ps_expr_destroy(a);
  ps_expr_destroy(b);
  ps_expr_destroy(both);
  ps_expr_destroy(eh);
  ps_expr_destroy(ed);
  ps_buffer_destroy(buf);
  ps_column_destroy(d);
  free(got);
  free(want);
}

/* A host-resident DELTA column reads the caller's blocks where they are: a
 * changed block shows in the next call, also where the call chunks the
 * column otherwise than the one before (another host-resident column beside
 * it), and headers that no longer lay the blocks out are refused. */
static void check_delta_in_place(ps_context *hctx, ps_context *dctx, th_rng *r) {
  const uint64_t n = 20000 + th_below(r, 5000);
  th_case("DELTA in place, n=%llu", (unsigned long long)n);
  int64_t *ts = th_malloc(n * 8);
  uint8_t *u = th_malloc(n);
  int64_t t = 1000000000 + (int64_t)th_below(r, 1000);
  for (uint64_t i = 0; i < n; i++) ts[i] = t += (int64_t)th_below(r, 100), u[i] = (uint8_t)th_below(r, 256);
  ps_plain pt = {PS_TYPE_INT64, ts, n, NULL}, pu = {PS_TYPE_UINT8, u, n, NULL};
  ps_encoded et, eu;
  char err[256];
  if (!CHECKF(ps_encode(&pt, PS_ENCODING_DELTA, 0, 0, 0, NULL, err, sizeof err, &et) == PS_OK, "%s", err) ||
      !CHECKF(ps_encode(&pu, PS_ENCODING_FOR, 0, 0, 0, NULL, err, sizeof err, &eu) == PS_OK, "%s", err)) {
    free(ts);
    free(u);
    return;
  }
  ps_for_desc d = et.desc; /* the blocks in memory the test changes */
  uint8_t *data = th_malloc(d.data_size);
  memcpy(data, et.desc.data, d.data_size);
  d.data = data;
  d.zones = NULL;
  ps_column *h = NULL, *y = NULL;
  const uint64_t k = n / 2048; /* a block in the middle */
  const int64_t at = ts[k * 1024];
  if (CHECK_OK(hctx, ps_column_create_for_host(hctx, &d, &h)) &&
      CHECK_OK(hctx, ps_column_create_for_host(hctx, &eu.desc, &y))) {
    delta_same(hctx, dctx, h, &d, PS_GE, at, NULL, NULL, "as made");
    delta_same(hctx, dctx, h, &d, PS_GE, at, y, &eu.desc, "beside a FOR column");
    rechunk_in_flight(hctx, dctx, h, &d, y, at);
    /* block k's base down by half: its rows fall below `at` */
    uint8_t *hk = data + k * 32;
    set_le64(hk, le64_at(hk) / 2);
    uint64_t c0 = 0;
    ps_expr *e = NULL;
    CHECK_OK(hctx, ps_expr_compare(hctx, h, PS_GE, ps_lit_int(at), &e));
    CHECK_OK(hctx, ps_filter_count(hctx, e, &c0));
    uint64_t before = 0;
    for (uint64_t i = 0; i < n; i++) before += ts[i] >= at;
    CHECKF(c0 < before, "a changed block: count %llu, unchanged %llu", (unsigned long long)c0,
           (unsigned long long)before);
    delta_same(hctx, dctx, h, &d, PS_GE, at, NULL, NULL, "a block changed");
    delta_same(hctx, dctx, h, &d, PS_GE, at, y, &eu.desc, "a block changed, beside a FOR column");
    delta_same(hctx, dctx, h, &d, PS_LT, at, NULL, NULL, "a block changed, alone again");
    /* block k's payload offset moved: refused, then read again once restored */
    const uint64_t off = le64_at(hk + 16);
    set_le64(hk + 16, off + 4);
    CHECK_STATUS(hctx, ps_filter_count(hctx, e, &c0), PS_ERR_CORRUPT_DATA);
    CHECKF(strstr(ps_context_last_error(hctx), "DELTA column's block headers changed") != NULL, "message '%s'",
           ps_context_last_error(hctx));
    set_le64(hk + 16, off);
    delta_same(hctx, dctx, h, &d, PS_GE, at, y, &eu.desc, "restored");
    ps_expr_destroy(e);
  }
  ps_column_destroy(h);
  ps_column_destroy(y);
  ps_encoded_destroy(&et);
  ps_encoded_destroy(&eu);
  free(data);
  free(ts);
  free(u);
}

/* Random 64-bit values: every DELTA block of 1024 rows is 8,480 bytes with
 * its header. A staging buffer of the smallest limit (21,824 bytes) holds
 * one block of each of two such columns; three are refused by name where
 * chunks are staged (the reference backend reads them in place). */
static void check_delta_blocks_fit(ps_context *hctx, ps_context *dctx, th_rng *r) {
  const uint64_t n = 3 * 1024 + 1 + th_below(r, 1024);
  th_case("DELTA blocks against the staging buffer, n=%llu", (unsigned long long)n);
  ps_encoded enc[3];
  ps_column *h[3] = {NULL, NULL, NULL}, *d[3] = {NULL, NULL, NULL};
  uint64_t *v = th_malloc(n * 8);
  int made = 0;
  for (; made < 3; made++) {
    for (uint64_t i = 0; i < n; i++) v[i] = th_u64(r);
    ps_plain p = {PS_TYPE_UINT64, v, n, NULL};
    char err[256];
    if (!CHECKF(ps_encode(&p, PS_ENCODING_DELTA, 0, 0, 0, NULL, err, sizeof err, &enc[made]) == PS_OK, "%s", err))
      break;
    CHECK_OK(hctx, ps_column_create_for_host(hctx, &enc[made].desc, &h[made]));
    CHECK_OK(dctx, ps_column_create_for(dctx, &enc[made].desc, &d[made]));
  }
  free(v);
  /* e[k][j]: the AND of columns 0..j + 1 (x0 < 3/4 max AND x1 >= 3/4 max ...), host (k = 0) and device */
  ps_expr *e[2][2] = {{NULL, NULL}, {NULL, NULL}};
  ps_context *ctx[2] = {hctx, dctx};
  for (int k = 0; made == 3 && k < 2; k++) {
    ps_column *const *cols = k ? d : h;
    for (int j = 0; j < 2; j++) {
      for (int c = 0; c < j + 2 && cols[c]; c++) {
        ps_expr *leaf = NULL, *both = NULL;
        if (!CHECK_OK(ctx[k],
                      ps_expr_compare(ctx[k], cols[c], c == 1 ? PS_GE : PS_LT, ps_lit_uint(UINT64_MAX / 4 * 3), &leaf)))
          break;
        if (c && CHECK_OK(ctx[k], ps_expr_and(ctx[k], e[k][j], leaf, &both))) e[k][j] = both;
        if (!c) e[k][j] = leaf;
      }
    }
  }
  if (e[0][1] && e[1][1]) {
    const uint64_t nb = (n + 7) / 8;
    uint8_t *bm[2] = {th_calloc(nb, 1), th_calloc(nb, 1)};
    uint64_t c[2] = {0, 0};
    for (int k = 0; k < 2; k++) CHECK_OK(ctx[k], ps_filter(ctx[k], e[k][0], bm[k], nb, &c[k]));
    CHECKF(c[0] == c[1] && memcmp(bm[0], bm[1], nb) == 0, "two columns: host count %llu, device %llu",
           (unsigned long long)c[0], (unsigned long long)c[1]);
    CHECK_OK(dctx, ps_filter(dctx, e[1][1], bm[1], nb, &c[1]));
    if (strcmp(th.backend, "reference") == 0) {
      CHECK_OK(hctx, ps_filter(hctx, e[0][1], bm[0], nb, &c[0]));
      CHECKF(c[0] == c[1] && memcmp(bm[0], bm[1], nb) == 0, "three columns in place: host count %llu, device %llu",
             (unsigned long long)c[0], (unsigned long long)c[1]);
    } else {
      CHECK_STATUS(hctx, ps_filter(hctx, e[0][1], bm[0], nb, &c[0]), PS_ERR_LIMIT);
      const char *msg = ps_context_last_error(hctx);
      CHECKF(strstr(msg, "device_memory_limit") && strstr(msg, "DELTA") && strstr(msg, "8480 bytes"), "message '%s'",
             msg);
      CHECK_OK(hctx, ps_filter(hctx, e[0][0], bm[0], nb, &c[0])); /* the context is still usable */
    }
    free(bm[0]);
    free(bm[1]);
  }
  for (int k = 0; k < 2; k++)
    for (int j = 0; j < 2; j++) ps_expr_destroy(e[k][j]);
  for (int c = 0; c < 3; c++) {
    ps_column_destroy(h[c]);
    ps_column_destroy(d[c]);
    if (c < made) ps_encoded_destroy(&enc[c]);
  }
}

/* A DELTA column's blocks in the runs the zone maps decide are not copied:
 * the pages of their payloads are made unreadable, and a filter, a count,
 * row ids and a query still answer exactly. */
static void check_delta_pruned_not_copied(ps_context *ctx, th_rng *r) {
  th_case("DELTA: pruned blocks not copied");
  const uint64_t zb = 40, n = zb * PS_ZONE_BLOCK_ROWS + 77, cut = 30 * PS_ZONE_BLOCK_ROWS;
  uint32_t *v = th_malloc(n * 4);
  for (uint64_t i = 0; i < n; i++) v[i] = (uint32_t)(16 * i + th_below(r, 16)); /* sorted, deltas of 5 bits */
  ps_plain p = {PS_TYPE_UINT32, v, n, NULL};
  ps_encoded enc;
  char err[256];
  if (!CHECKF(ps_encode(&p, PS_ENCODING_DELTA, 0, 0, 0, NULL, err, sizeof err, &enc) == PS_OK, "%s", err)) {
    free(v);
    return;
  }
  CHECK(enc.desc.zones != NULL);
  const size_t page = 4096, bytes = (enc.desc.data_size + page - 1) / page * page;
  uint8_t *data = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (!CHECK(data != MAP_FAILED)) {
    ps_encoded_destroy(&enc);
    free(v);
    return;
  }
  memcpy(data, enc.desc.data, enc.desc.data_size);
  ps_for_desc d = enc.desc;
  d.data = data;
  /* the payloads of DELTA blocks 0 .. cut/1024 - 1, in whole pages */
  const uint64_t b1 = cut / 1024, p0 = 0 * 32 + le64_at(data + 16), p1 = b1 * 32 + le64_at(data + b1 * 32 + 16);
  const uint64_t lo = (p0 + page - 1) / page * page, hi = p1 / page * page;
  CHECKF(hi >= lo + 8 * page, "only %llu bytes of payloads to protect", (unsigned long long)(hi - lo));
  ps_column *col = NULL;
  ps_expr *e = NULL;
  const uint32_t at = (uint32_t)(16 * cut);
  if (CHECK_OK(ctx, ps_column_create_for_host(ctx, &d, &col)) &&
      CHECK_OK(ctx, ps_expr_compare(ctx, col, PS_GE, ps_lit_uint(at), &e))) {
    CHECK(mprotect(data + lo, hi - lo, PROT_NONE) == 0);
    uint64_t want = 0, c = 0, nids = 0;
    uint32_t least = UINT32_MAX;
    for (uint64_t i = 0; i < n; i++)
      if (v[i] >= at) want++, least = v[i] < least ? v[i] : least;
    CHECK_OK(ctx, ps_filter_count(ctx, e, &c));
    CHECKF(c == want, "count %llu, expected %llu", (unsigned long long)c, (unsigned long long)want);
    uint8_t *bm = th_calloc((n + 7) / 8, 1);
    CHECK_OK(ctx, ps_filter(ctx, e, bm, (n + 7) / 8, &c));
    CHECK(c == want && bm[0] == 0 && ((bm[(n - 1) / 8] >> ((n - 1) % 8)) & 1));
    free(bm);
    void *ids = NULL;
    if (CHECK_OK(ctx, ps_filter_row_ids(ctx, e, PS_INDEX_UINT32, &ids, &nids))) {
      CHECK(nids == want && (nids == 0 || ((uint32_t *)ids)[0] >= cut - 1));
      ps_free(ctx, ids);
    }
    ps_value *val = NULL;
    ps_query *q = NULL;
    ps_query_result *res = NULL;
    if (CHECK_OK(ctx, ps_value_column(ctx, col, &val))) {
      ps_agg aggs[2] = {{PS_AGG_COUNT_STAR, NULL}, {PS_AGG_MIN, val}};
      ps_query_desc qd;
      ps_query_desc_init(&qd);
      qd.rows = n;
      qd.where = e;
      qd.n_aggs = 2;
      qd.aggs = aggs;
      if (CHECK_OK(ctx, ps_query_create(ctx, &qd, &q)) && CHECK_OK(ctx, ps_query_run(ctx, q, &res))) {
        ps_datum dt;
        char buf[64] = "", wanted[64];
        snprintf(wanted, sizeof wanted, "%u", least);
        if (CHECK_OK(ctx, ps_query_result_value(res, 0, 1, &dt))) ps_datum_format(&dt, buf, sizeof buf);
        CHECKF(strcmp(buf, wanted) == 0, "MIN(x) under the WHERE: '%s', expected %s", buf, wanted);
      }
      ps_query_result_destroy(res);
      ps_query_destroy(q);
      ps_value_destroy(val);
    }
    CHECK(mprotect(data + lo, hi - lo, PROT_READ | PROT_WRITE) == 0);
  }
  ps_expr_destroy(e);
  ps_column_destroy(col);
  munmap(data, bytes);
  ps_encoded_destroy(&enc);
  free(v);
}

/* Blocks the zone maps decide never cross the bus: their pages are made
 * unreadable (a copy of them would fault), and filters, counts, row ids and
 * a query over the rest still answer exactly. */
static void check_pruned_not_copied(ps_context *ctx) {
  th_case("pruned blocks not copied");
  const uint64_t blocks = 10, n = blocks * PS_ZONE_BLOCK_ROWS + 100, bytes = n * 2;
  const uint64_t block_bytes = (uint64_t)PS_ZONE_BLOCK_ROWS * 2; /* a multiple of the page size */
  uint16_t *data = mmap(NULL, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (!CHECK(data != MAP_FAILED)) return;
  for (uint64_t i = 0; i < n; i++) data[i] = (uint16_t)i; /* x = row: block b holds [4096 b, 4096 b + 4095] */
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = PS_TYPE_UINT16;
  d.n = n;
  d.width = 16;
  d.data = (const uint8_t *)data;
  d.data_size = bytes;
  ps_column *col = NULL;
  ps_expr *e = NULL;
  if (CHECK_OK(ctx, ps_column_create_for_host(ctx, &d, &col)) && CHECK_OK(ctx, ps_column_compute_zones(ctx, col)) &&
      CHECK_OK(ctx, ps_expr_compare(ctx, col, PS_GE, ps_lit_uint(6 * PS_ZONE_BLOCK_ROWS + 5), &e))) {
    /* blocks 0..4 unreadable: every one of them is ALL FALSE for x >= 6 * 4096 + 5 */
    CHECK(mprotect(data, 5 * block_bytes, PROT_NONE) == 0);
    const uint64_t want = n - (6 * PS_ZONE_BLOCK_ROWS + 5);
    uint64_t c = 0, nids = 0;
    CHECK_OK(ctx, ps_filter_count(ctx, e, &c));
    CHECKF(c == want, "count %llu, expected %llu", (unsigned long long)c, (unsigned long long)want);
    uint8_t *bm = th_calloc((n + 7) / 8, 1);
    CHECK_OK(ctx, ps_filter(ctx, e, bm, (n + 7) / 8, &c));
    CHECK(c == want && ((bm[(n - 1) / 8] >> ((n - 1) % 8)) & 1) && bm[0] == 0);
    free(bm);
    void *ids = NULL;
    if (CHECK_OK(ctx, ps_filter_row_ids(ctx, e, PS_INDEX_UINT32, &ids, &nids))) {
      CHECK(nids == want && (nids == 0 || ((uint32_t *)ids)[0] == 6 * PS_ZONE_BLOCK_ROWS + 5));
      ps_free(ctx, ids);
    }
    ps_value *v = NULL;
    ps_query *q = NULL;
    ps_query_result *res = NULL;
    if (CHECK_OK(ctx, ps_value_column(ctx, col, &v))) {
      ps_agg aggs[2] = {{PS_AGG_COUNT_STAR, NULL}, {PS_AGG_MIN, v}};
      ps_query_desc qd;
      ps_query_desc_init(&qd);
      qd.rows = n;
      qd.where = e;
      qd.n_aggs = 2;
      qd.aggs = aggs;
      if (CHECK_OK(ctx, ps_query_create(ctx, &qd, &q)) && CHECK_OK(ctx, ps_query_run(ctx, q, &res))) {
        ps_datum dt;
        char buf[64] = "";
        if (CHECK_OK(ctx, ps_query_result_value(res, 0, 1, &dt))) ps_datum_format(&dt, buf, sizeof buf);
        CHECKF(strcmp(buf, "24581") == 0, "MIN(x) under the WHERE: '%s'", buf);
      }
      ps_query_result_destroy(res);
      ps_query_destroy(q);
      ps_value_destroy(v);
    }
    CHECK(mprotect(data, 5 * block_bytes, PROT_READ | PROT_WRITE) == 0);
  }
  ps_expr_destroy(e);
  ps_column_destroy(col);
  munmap(data, bytes);
}

/* A streamed query is judged for a specialized kernel by the rows it reads
 * in all, not by a chunk's: with chunks far below PS_QUERY_SPEC_MIN_ROWS,
 * the default policy still asks the kernel cache for the query's own kernel
 * (more lookups than the same run with specialization off), and the answer
 * is the same. */
static void check_streamed_query_specialized(ps_context *ctx) {
  const ps_internal_options base = *ps_context_internal_options(ctx);
  if (strcmp(th.backend, "reference") == 0 || base.query_specialize != PS_OPT_AUTO) return; /* nothing compiled */
  th_case("a streamed query specialized by its rows, not a chunk's");
  const uint64_t n = PS_QUERY_SPEC_MIN_ROWS + 4099;
  uint8_t *data = th_calloc(n, 1);
  for (uint64_t i = 0; i < n; i++) data[i] = (uint8_t)(i % 251);
  ps_column *col = NULL;
  ps_expr *e = NULL;
  ps_value *v = NULL;
  ps_query *q = NULL;
  char got[2][64] = {"", ""};
  uint64_t lookups[2] = {0, 0};
  if (CHECK_OK(ctx, host_u8(ctx, data, n, &col)) &&
      CHECK_OK(ctx, ps_expr_compare(ctx, col, PS_LT, ps_lit_uint(100), &e)) && CHECK_OK(ctx, ps_value_column(ctx, col, &v))) {
    ps_agg aggs[1] = {{PS_AGG_SUM, v}};
    ps_query_desc qd;
    ps_query_desc_init(&qd);
    qd.rows = n;
    qd.where = e;
    qd.n_aggs = 1;
    qd.aggs = aggs;
    if (CHECK_OK(ctx, ps_query_create(ctx, &qd, &q)))
      for (int on = 0; on < 2; on++) {
        ps_internal_options o = base;
        o.query_specialize = on ? PS_OPT_AUTO : PS_OPT_OFF;
        if (!CHECK_OK(ctx, ps_context_set_internal_options(ctx, &o))) break;
        const ps_kcache_stats s0 = ps_context_kcache_stats(ctx);
        ps_query_result *res = NULL;
        ps_datum dt;
        if (CHECK_OK(ctx, ps_query_run(ctx, q, &res)) && CHECK_OK(ctx, ps_query_result_value(res, 0, 0, &dt)))
          ps_datum_format(&dt, got[on], sizeof got[on]);
        ps_query_result_destroy(res);
        const ps_kcache_stats s1 = ps_context_kcache_stats(ctx);
        lookups[on] = (s1.hits + s1.misses) - (s0.hits + s0.misses);
      }
    ps_context_wait_builds(ctx, 0);
    CHECKF(strcmp(got[0], got[1]) == 0 && got[0][0], "SUM: '%s' generic, '%s' by the default policy", got[0], got[1]);
    CHECKF(lookups[1] > lookups[0],
           "kernel cache lookups of a streamed query: %llu by the default policy, %llu with specialization off",
           (unsigned long long)lookups[1], (unsigned long long)lookups[0]);
  }
  CHECK_OK(ctx, ps_context_set_internal_options(ctx, &base));
  ps_query_destroy(q);
  ps_value_destroy(v);
  ps_expr_destroy(e);
  ps_column_destroy(col);
  free(data);
}

/* A call judges its kernels by its rows in all while it runs, and leaves no
 * such judgment behind for the calls after it (ps_context.query_run_rows). */
static void check_no_run_left(ps_context *ctx) {
  th_case("no run's rows left after a call");
  const uint64_t n = 70001;
  uint8_t *data = th_calloc(n, 1);
  for (uint64_t i = 0; i < n; i++) data[i] = (uint8_t)(i % 199);
  ps_column *col = NULL;
  ps_expr *e = NULL;
  if (CHECK_OK(ctx, host_u8(ctx, data, n, &col)) && CHECK_OK(ctx, ps_expr_compare(ctx, col, PS_LT, ps_lit_uint(50), &e))) {
    uint64_t c = 0, nids = 0;
    ps_buffer *ids = NULL;
    if (CHECK_OK(ctx, ps_buffer_create(ctx, n * 4, &ids)))
      CHECK_OK(ctx, ps_filter_row_ids_device(ctx, e, PS_INDEX_UINT32, ids, 0, n, &nids));
    ps_buffer_destroy(ids);
    CHECKF(ctx->query_run_rows == 0, "after row ids: %llu rows of a run left", (unsigned long long)ctx->query_run_rows);
    CHECK_OK(ctx, ps_filter_count(ctx, e, &c));
    CHECKF(ctx->query_run_rows == 0, "after a count: %llu rows of a run left", (unsigned long long)ctx->query_run_rows);
    CHECK(c == nids);
  }
  ps_expr_destroy(e);
  ps_column_destroy(col);
  free(data);
}

static void check_refusals(ps_context *ctx) {
  th_case("refusals");
  ps_context_options o;
  th_options(&o, th.backend, 0);
  o.device_memory_limit = PS_DEVICE_MEMORY_LIMIT_MIN - 1;
  char err[512] = "";
  ps_context *bad = NULL;
  CHECK(ps_context_create(&o, err, sizeof err, &bad) == PS_ERR_INVALID_ARGUMENT && bad == NULL);
  CHECKF(strstr(err, "device_memory_limit") != NULL, "message '%s'", err);
  uint8_t data[8] = {0};
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = PS_TYPE_UINT8;
  d.n = 8;
  d.width = 8;
  d.data = NULL;
  d.data_size = 8;
  ps_column *col = NULL;
  CHECK_STATUS(ctx, ps_column_create_for_host(ctx, &d, &col), PS_ERR_INVALID_ARGUMENT);
  CHECK(col == NULL);
  d.data = data;
  d.encoding = PS_ENCODING_DELTA; /* 8 bytes cannot hold a block header */
  CHECK_STATUS(ctx, ps_column_create_for_host(ctx, &d, &col), PS_ERR_INVALID_ARGUMENT);
  CHECKF(strstr(ps_context_last_error(ctx), "DELTA") != NULL, "message '%s'", ps_context_last_error(ctx));
  CHECK(col == NULL);
  CHECK_STATUS(ctx, ps_column_create_dict_host(ctx, NULL, &d, &col), PS_ERR_INVALID_ARGUMENT);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "host_columns");
  ps_context *dctx = th_context(0);
  th_rng *r = &th.rng;
  static const uint64_t NS[] = {0, 1, 31, 33, 1000, 4099, 20011, 65537, 100003};
  /* DELTA columns: around their 1024-row blocks too */
  static const uint64_t DELTA_NS[] = {0, 1, 1023, 1024, 1025, 4099, 20011, 65537, 100003};
  for (size_t li = 0; li < sizeof LIMITS / sizeof LIMITS[0]; li++) {
    ps_context *hctx = limited_context(LIMITS[li]);
    for (size_t k = 0; k < sizeof NS / sizeof NS[0]; k++) {
      if (th.quick && NS[k] > 30000 && th_below(r, 3)) continue; /* the CI size: a seeded sample of the large */
      run_case(hctx, dctx, NS[k], r, (int)(k % 2), 0);
    }
    for (size_t k = 0; k < sizeof DELTA_NS / sizeof DELTA_NS[0]; k++) {
      if (th.quick && DELTA_NS[k] > 30000 && th_below(r, 3)) continue;
      run_case(hctx, dctx, DELTA_NS[k], r, (int)(k % 2), 1);
    }
    if (li == 0) {
      check_in_place(hctx);
      check_delta_mix(hctx, dctx, r);
      check_delta_in_place(hctx, dctx, r);
      check_delta_blocks_fit(hctx, dctx, r);
      check_delta_pruned_not_copied(hctx, r);
      check_pruned_not_copied(hctx);
      check_streamed_query_specialized(hctx);
      check_no_run_left(hctx);
      check_refusals(hctx);
    }
    ps_context_destroy(hctx);
  }
  ps_context_destroy(dctx);
  return th_finish();
}
