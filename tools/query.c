#include "query.h"

#include <stdlib.h>
#include <string.h>
#include <strings.h>

int query_context(const char *backend, ps_context **out, char *err, size_t errsz) {
  return query_context_opts(backend, NULL, out, err, errsz);
}

int query_context_opts(const char *backend, const query_ctx_opts *extra, ps_context **out, char *err, size_t errsz) {
  ps_context_options o;
  ps_context_options_init(&o);
  o.backend = backend ? backend : "auto";
  if (extra) {
    o.device_memory_limit = extra->device_memory_limit;
    o.progress = extra->progress;
    o.progress_user = extra->progress_user;
    o.device_count = extra->device_count;
    o.devices = extra->devices;
    const char *pl = extra->opencl_platform;
    if (pl && *pl) {
      int digits = 1;
      for (const char *c = pl; *c; c++) digits &= *c >= '0' && *c <= '9';
      if (digits)
        o.opencl_platform = (int32_t)strtol(pl, NULL, 10);
      else
        o.opencl_platform_name = pl;
    }
  }
  char msg[TOOL_ERR_SIZE] = "";
  ps_status st = ps_context_create(&o, msg, sizeof msg, out);
  if (st != PS_OK) {
    tbuf names = {0};
    for (size_t i = 0; i < ps_backend_count(); i++)
      tbuf_printf(&names, "%s%s", i ? ", " : "", ps_backend_name(i));
    set_err(err, errsz, "cannot create a context on backend '%s': %s (compiled in: %.*s)", o.backend,
            lib_error(st, msg), (int)names.len, names.p ? (char *)names.p : "");
    tbuf_free(&names);
    return -1;
  }
  return 0;
}

static int backend_compiled(const char *name) {
  for (size_t i = 0; i < ps_backend_count(); i++)
    if (!strcmp(ps_backend_name(i), name)) return 1;
  return 0;
}

int query_context_for(const char *backend, uint64_t rows, ps_context **out, char *why, size_t whysz, char *err,
                      size_t errsz) {
  return query_context_for_opts(backend, rows, NULL, out, why, whysz, err, errsz);
}

int query_context_for_opts(const char *backend, uint64_t rows, const query_ctx_opts *extra, ps_context **out, char *why,
                           size_t whysz, char *err, size_t errsz) {
  if (backend && strcmp(backend, "auto") != 0) {
    set_err(why, whysz, "asked for with --backend %s", backend);
    return query_context_opts(backend, extra, out, err, errsz);
  }
  /* A one-off query on a small table is over before a device context has
   * started (docs/benchmarks.md, "The command's default backend"). */
  if (rows < QUERY_AUTO_DEVICE_ROWS) {
    set_err(why, whysz, "auto: %llu rows, below %llu, where starting a device costs more than the scan",
            (unsigned long long)rows, (unsigned long long)QUERY_AUTO_DEVICE_ROWS);
    return query_context_opts("reference", extra, out, err, errsz);
  }
  char tried[TOOL_ERR_SIZE] = "";
  size_t tl = 0;
  static const char *const devices[] = {"cuda", "opencl"};
  for (size_t i = 0; i < 2; i++) {
    if (!backend_compiled(devices[i])) continue;
    ps_context *ctx;
    char msg[TOOL_ERR_SIZE];
    if (query_context_opts(devices[i], extra, &ctx, msg, sizeof msg)) {
      tl += (size_t)snprintf(tried + tl, tl < sizeof tried ? sizeof tried - tl : 0, "%s%s: no device", tl ? "; " : "",
                             devices[i]);
      if (tl >= sizeof tried) tl = sizeof tried - 1;
      continue;
    }
    /* PoCL and other CPU OpenCL devices were measured no faster than the
     * reference backend here, and pay a context and a kernel build. */
    if (query_device_is_cpu(ctx) == 1) {
      ps_context_destroy(ctx);
      tl += (size_t)snprintf(tried + tl, tl < sizeof tried ? sizeof tried - tl : 0, "%s%s: a CPU device",
                             tl ? "; " : "", devices[i]);
      if (tl >= sizeof tried) tl = sizeof tried - 1;
      continue;
    }
    set_err(why, whysz, "auto: %llu rows on a GPU%s%s", (unsigned long long)rows, tl ? " (" : "", tl ? tried : "");
    if (tl && why) strncat(why, ")", whysz - strlen(why) - 1);
    *out = ctx;
    return 0;
  }
  set_err(why, whysz, "auto: no GPU (%s)", tl ? tried : "no device backend compiled in");
  return query_context_opts("reference", extra, out, err, errsz);
}

int query_plan_build_cached(ps_context *ctx, const tbl_table *t, const char *src, size_t len, query_plan *q,
                            FILE *errf, ps_column **cols, ps_column **dec_cols) {
  memset(q, 0, sizeof *q);
  q->ctx = ctx;
  q->tbl = t;
  if (!cols || !dec_cols) cols = dec_cols = NULL; /* both caches or neither */
  q->borrowed = cols != NULL;
  q->cols = cols ? cols : calloc(t->ncols ? t->ncols : 1, sizeof *q->cols);
  q->dec_cols = dec_cols ? dec_cols : calloc(t->ncols ? t->ncols : 1, sizeof *q->dec_cols);
  if (!q->cols || !q->dec_cols) {
    fprintf(errf, "out of memory\n");
    return -1;
  }
  expr_error e;
  if (expr_parse(src, len, &q->arena, &q->ast, &e)) {
    expr_print_error(errf, src, len, &e);
    return -1;
  }
  bind_env env = {ctx, t, q->cols, q->dec_cols};
  if (expr_bind(&env, q->ast, &q->expr, &e)) {
    expr_print_error(errf, src, len, &e);
    return -1;
  }
  return 0;
}

int query_plan_build(ps_context *ctx, const tbl_table *t, const char *src, size_t len, query_plan *q,
                     FILE *errf) {
  return query_plan_build_cached(ctx, t, src, len, q, errf, NULL, NULL);
}

void query_plan_free(query_plan *q) {
  ps_expr_destroy(q->expr);
  q->expr = NULL;
  if (!q->borrowed) {
    if (q->cols && q->tbl)
      for (uint32_t i = 0; i < q->tbl->ncols; i++) ps_column_destroy(q->cols[i]);
    if (q->dec_cols && q->tbl)
      for (uint32_t i = 0; i < q->tbl->ncols; i++) ps_column_destroy(q->dec_cols[i]);
    free(q->cols);
    free(q->dec_cols);
  }
  q->cols = NULL;
  q->dec_cols = NULL;
  expr_arena_free(&q->arena);
}

int query_row_ids(query_plan *q, int force_host, uint64_t **ids, uint64_t *count, char *err, size_t errsz) {
  *ids = NULL;
  *count = 0;
  if (!force_host) {
    void *lib_ids = NULL;
    uint64_t c = 0;
    ps_status st = ps_filter_row_ids(q->ctx, q->expr, PS_INDEX_UINT64, &lib_ids, &c);
    if (st == PS_OK) {
      /* Copy into malloc'ed memory so that callers free it one way. */
      uint64_t *v = malloc(c ? c * 8 : 1);
      if (!v) {
        ps_free(q->ctx, lib_ids);
        return set_err(err, errsz, "out of memory for %llu row ids", (unsigned long long)c);
      }
      if (c) memcpy(v, lib_ids, c * 8);
      ps_free(q->ctx, lib_ids);
      *ids = v;
      *count = c;
      return 0;
    }
    if (st != PS_ERR_UNSUPPORTED)
      return set_err(err, errsz, "row ids: %s", lib_error(st, ps_context_last_error(q->ctx)));
  }
  /* The backend has no row-id entry: read the bitmap and collect set bits. */
  uint64_t n = ps_expr_rows(q->expr), c = 0;
  uint8_t *bm = malloc((n + 7) / 8 ? (n + 7) / 8 : 1);
  if (!bm) return set_err(err, errsz, "out of memory for a %llu-row bitmap", (unsigned long long)n);
  ps_status st = ps_filter(q->ctx, q->expr, bm, (n + 7) / 8, &c);
  if (st != PS_OK) {
    free(bm);
    return set_err(err, errsz, "filter: %s", lib_error(st, ps_context_last_error(q->ctx)));
  }
  uint64_t *v = malloc(c ? c * 8 : 1);
  if (!v) {
    free(bm);
    return set_err(err, errsz, "out of memory for %llu row ids", (unsigned long long)c);
  }
  uint64_t k = 0;
  for (uint64_t byte = 0; byte < (n + 7) / 8; byte++) {
    unsigned b = bm[byte];
    while (b && k < c) {
      int bit = __builtin_ctz(b);
      uint64_t row = byte * 8 + (uint64_t)bit;
      if (row < n) v[k++] = row;
      b &= b - 1;
    }
  }
  free(bm);
  if (k != c) {
    free(v);
    return set_err(err, errsz, "internal error: the bitmap holds %llu rows, the count says %llu",
                   (unsigned long long)k, (unsigned long long)c);
  }
  *ids = v;
  *count = c;
  return 0;
}

/* ---- value readers for --select ---- */

/* V_FLOAT: a lossless float column (docs/float-encoding.md); vals hold the doubles' bits */
enum { V_SIGNED, V_UNSIGNED, V_DECIMAL, V_DATE, V_STRING, V_TIMESTAMP, V_TIME, V_BOOL, V_FLOAT };

#define BATCH 65536u
#define HOST_BLOCK 4096u /* rows decoded at a time on the host path (multiple of 8) */

typedef struct colreader {
  const tbl_column *meta;
  int kind;
  uint32_t scale;
  ps_for_desc view;   /* FOR: widened to INT64/UINT64 (floats: the scaled integers) */
  ps_column *lib;     /* library column used for gathering (owned if own_lib) */
  int own_lib;
  /* batch output */
  uint64_t *vals;     /* int64 or uint64 bits; strings: dictionary index (host path) */
  uint8_t *valid;
  int64_t *soff;      /* library strings */
  uint8_t *sbytes;
  /* host path cache */
  uint64_t block;     /* cached block index + 1 (0: none) */
  uint64_t *cache;
} colreader;

static int reader_init(query_plan *q, colreader *r, int idx, int force_host, char *err, size_t errsz) {
  memset(r, 0, sizeof *r);
  const tbl_column *m = &q->tbl->cols[idx];
  r->meta = m;
  r->view = m->desc;
  ps_type ty = m->desc.type;
  if (m->encoding == TBL_ENC_DICT) {
    r->kind = V_STRING;
    r->view.type = PS_TYPE_UINT64;
  } else if (m->desc.float_map != PS_FLOAT_MAP_DECIMAL) {
    r->kind = V_FLOAT; /* the view is the column itself: gathers and decodes give its values */
  } else if (ty >= PS_TYPE_UINT8 && ty <= PS_TYPE_UINT64) {
    r->kind = V_UNSIGNED;
    r->view.type = PS_TYPE_UINT64;
  } else {
    r->kind = m->logical == TBL_LOGICAL_DATE        ? V_DATE
              : m->logical == TBL_LOGICAL_TIMESTAMP ? V_TIMESTAMP
              : m->logical == TBL_LOGICAL_TIME      ? V_TIME
              : m->logical == TBL_LOGICAL_BOOLEAN   ? V_BOOL
              : (ty == PS_TYPE_FLOAT32 || ty == PS_TYPE_FLOAT64) ? V_DECIMAL
                                                                  : V_SIGNED;
    r->scale = r->kind == V_TIMESTAMP || r->kind == V_TIME ? m->unit : m->desc.scale;
    r->view.type = PS_TYPE_INT64;
    r->view.scale = 0;
  }
  r->vals = malloc(BATCH * sizeof *r->vals);
  r->valid = malloc(BATCH / 8);
  if (!r->vals || !r->valid) return set_err(err, errsz, "out of memory");
  if (force_host) return 0;
  ps_status st;
  if (r->kind == V_STRING) {
    if (!q->cols[idx]) {
      st = tbl_column_create(q->ctx, q->tbl, (uint32_t)idx, &q->cols[idx], err, errsz);
      if (st != PS_OK) return -1;
    }
    r->lib = q->cols[idx];
  } else {
    st = tbl_for_create(q->ctx, q->tbl, &r->view, &r->lib);
    if (st != PS_OK)
      return set_err(err, errsz, "column '%s': %s", m->name, lib_error(st, ps_context_last_error(q->ctx)));
    r->own_lib = 1;
  }
  return 0;
}

static void reader_free(colreader *r) {
  if (r->own_lib) ps_column_destroy(r->lib);
  free(r->vals);
  free(r->valid);
  free(r->cache);
}

/* A DELTA column's rows cannot be cut out of its stream at any row (its
 * block headers lay the stream out): it is decoded whole, once, and read at
 * the row itself (host_at). */
static int host_whole(colreader *r, char *err, size_t errsz) {
  if (r->block) return 0;
  if (!(r->cache = malloc((r->view.n ? r->view.n : 1) * sizeof *r->cache))) return set_err(err, errsz, "out of memory");
  char msg[TOOL_ERR_SIZE];
  ps_status st = ps_decode_for(&r->view, r->cache, msg, sizeof msg);
  if (st != PS_OK) return set_err(err, errsz, "column '%s': %s", r->meta->name, lib_error(st, msg));
  r->block = 1;
  return 0;
}

/* Where row's value lies in the cache that host_block filled. */
static uint64_t host_at(const colreader *r, uint64_t row) {
  return r->view.encoding == PS_ENCODING_DELTA ? row : row % HOST_BLOCK;
}

/* Decodes block b of a column on the host with ps_decode_for. */
static int host_block(colreader *r, uint64_t b, char *err, size_t errsz) {
  if (r->view.encoding == PS_ENCODING_DELTA) return host_whole(r, err, errsz);
  if (r->block == b + 1) return 0;
  if (!r->cache && !(r->cache = malloc(HOST_BLOCK * sizeof *r->cache))) return set_err(err, errsz, "out of memory");
  uint64_t start = b * HOST_BLOCK, n = r->view.n - start;
  if (n > HOST_BLOCK) n = HOST_BLOCK;
  ps_for_desc d = r->view;
  uint64_t off_bytes = start / 8 * d.width; /* start is a multiple of 8: byte aligned */
  d.n = n;
  d.data = d.data_size ? (const uint8_t *)r->view.data + off_bytes : NULL;
  packed_bytes(n, d.width, &d.data_size);
  if (d.data_size == 0) d.data = NULL;
  d.validity = r->view.validity ? r->view.validity + start / 8 : NULL;
  d.validity_size = d.validity ? (n + 7) / 8 : 0;
  char msg[TOOL_ERR_SIZE];
  ps_status st = ps_decode_for(&d, r->cache, msg, sizeof msg);
  if (st != PS_OK)
    return set_err(err, errsz, "column '%s': rows %llu..: %s", r->meta->name, (unsigned long long)start,
                   lib_error(st, msg));
  r->block = b + 1;
  return 0;
}

static int reader_fetch(query_plan *q, colreader *r, const uint64_t *ids, uint64_t cnt, int force_host, char *err,
                        size_t errsz) {
  memset(r->valid, 0, (cnt + 7) / 8);
  if (!force_host) {
    ps_status st;
    if (r->kind == V_STRING)
      st = ps_gather_strings(q->ctx, r->lib, ids, PS_INDEX_UINT64, cnt, &r->soff, &r->sbytes, r->valid);
    else
      st = ps_gather_values(q->ctx, r->lib, ids, PS_INDEX_UINT64, cnt, r->vals, r->valid);
    if (st == PS_OK && r->kind == V_FLOAT && r->view.type == PS_TYPE_FLOAT32)
      for (uint64_t i = cnt; i-- > 0;) { /* floats to doubles' bits, from the end: slot i holds float 2i, 2i+1 */
        float f;
        memcpy(&f, (const uint8_t *)r->vals + 4 * i, 4);
        const double d = f;
        memcpy(&r->vals[i], &d, 8);
      }
    if (st == PS_OK) return 0;
    if (st != PS_ERR_UNSUPPORTED)
      return set_err(err, errsz, "column '%s': gather: %s", r->meta->name, lib_error(st, ps_context_last_error(q->ctx)));
  }
  /* Host path: decode the blocks that hold the ids from the mapped file. */
  for (uint64_t i = 0; i < cnt; i++) {
    uint64_t row = ids[i];
    if (row >= r->view.n) return set_err(err, errsz, "row id %llu out of range", (unsigned long long)row);
    if (host_block(r, row / HOST_BLOCK, err, errsz)) return -1;
    int ok = !r->view.validity || ((r->view.validity[row / 8] >> (row % 8)) & 1);
    uint64_t v = r->cache[host_at(r, row)];
    if (r->kind == V_FLOAT && r->view.type == PS_TYPE_FLOAT32) {
      float f;
      memcpy(&f, (const uint8_t *)r->cache + 4 * host_at(r, row), 4);
      const double d = f;
      memcpy(&v, &d, 8);
    }
    if (ok && r->kind == V_STRING && v >= r->meta->dict.count)
      return set_err(err, errsz, "column '%s': row %llu: code %llu is outside the %llu-entry dictionary",
                     r->meta->name, (unsigned long long)row, (unsigned long long)v,
                     (unsigned long long)r->meta->dict.count);
    r->vals[i] = ok ? v : 0;
    if (ok) r->valid[i / 8] |= (uint8_t)(1u << (i % 8));
  }
  return 0;
}

/* The text of value i of the batch as an output cell; buf holds numbers. */
static out_cell reader_cell(const colreader *r, uint64_t i, char buf[64]) {
  out_cell c = {OUT_NULL, NULL, 0};
  if (!((r->valid[i / 8] >> (i % 8)) & 1)) return c;
  c.kind = OUT_NUMBER;
  c.s = buf;
  switch (r->kind) {
  case V_SIGNED: snprintf(buf, 64, "%lld", (long long)(int64_t)r->vals[i]); break;
  case V_UNSIGNED: snprintf(buf, 64, "%llu", (unsigned long long)r->vals[i]); break;
  case V_DECIMAL: format_decimal((int64_t)r->vals[i], (int)r->scale, buf); break;
  case V_FLOAT: {
    double d;
    memcpy(&d, &r->vals[i], 8);
    format_double(d, buf);
    break;
  }
  case V_DATE:
    format_date((int64_t)r->vals[i], buf);
    c.kind = OUT_TEXT;
    break;
  case V_TIMESTAMP:
    format_timestamp((int64_t)r->vals[i], (int)r->scale, buf);
    c.kind = OUT_TEXT;
    break;
  case V_TIME:
    format_time((int64_t)r->vals[i], (int)r->scale, buf);
    c.kind = OUT_TEXT;
    break;
  case V_BOOL:
    snprintf(buf, 64, "%s", r->vals[i] ? "true" : "false");
    c.kind = OUT_BOOL;
    break;
  case V_STRING:
    c.kind = OUT_TEXT;
    /* A dictionary of empty strings only may have no bytes at all (NULL):
     * no pointer arithmetic on it. */
    if (r->soff) {
      c.len = (size_t)(r->soff[i + 1] - r->soff[i]);
      c.s = r->sbytes ? (const char *)r->sbytes + r->soff[i] : "";
    } else {
      const int32_t *o = r->meta->dict.offsets32;
      uint64_t k = r->vals[i];
      c.len = (size_t)(o[k + 1] - o[k]);
      c.s = r->meta->dict.bytes ? (const char *)r->meta->dict.bytes + o[k] : "";
    }
    return c;
  }
  c.len = strlen(buf);
  return c;
}

static void reader_release(query_plan *q, colreader *r) {
  if (r->soff) {
    ps_free(q->ctx, r->soff);
    ps_free(q->ctx, r->sbytes);
    r->soff = NULL;
    r->sbytes = NULL;
  }
}

int query_write_rows(query_plan *q, const uint64_t *ids, uint64_t count, const int *colidx, size_t ncol,
                     const query_output *o, FILE *out, char *err, size_t errsz) {
  size_t nout = ncol + (o->row_ids ? 1 : 0);
  colreader *rs = calloc(ncol ? ncol : 1, sizeof *rs);
  const char **names = calloc(nout ? nout : 1, sizeof *names);
  out_cell *cells = calloc(nout ? nout : 1, sizeof *cells);
  char(*bufs)[64] = calloc(nout ? nout : 1, sizeof *bufs);
  out_writer *w = NULL;
  int rc = -1;
  if (!rs || !names || !cells || !bufs) {
    set_err(err, errsz, "out of memory");
    goto done;
  }
  if (o->row_ids) names[0] = "row_id";
  for (size_t c = 0; c < ncol; c++) names[c + (o->row_ids ? 1 : 0)] = q->tbl->cols[colidx[c]].name;
  for (size_t c = 0; c < ncol; c++)
    if (reader_init(q, &rs[c], colidx[c], o->force_host, err, errsz)) goto done;
  if (out_begin(out, o->format, o->header, nout, names, &w)) {
    set_err(err, errsz, "out of memory");
    goto done;
  }
  for (uint64_t start = 0; start < count; start += BATCH) {
    uint64_t cnt = count - start < BATCH ? count - start : BATCH;
    for (size_t c = 0; c < ncol; c++)
      if (reader_fetch(q, &rs[c], ids + start, cnt, o->force_host, err, errsz)) goto done;
    for (uint64_t i = 0; i < cnt; i++) {
      size_t k = 0;
      if (o->row_ids) {
        snprintf(bufs[0], 64, "%llu", (unsigned long long)ids[start + i]);
        cells[k++] = (out_cell){OUT_NUMBER, bufs[0], strlen(bufs[0])};
      }
      for (size_t c = 0; c < ncol; c++, k++) cells[k] = reader_cell(&rs[c], i, bufs[k]);
      if (out_row(w, cells)) {
        set_err(err, errsz, "out of memory holding the output table (use --format csv)");
        goto done;
      }
    }
    for (size_t c = 0; c < ncol; c++) reader_release(q, &rs[c]);
  }
  rc = out_end(w);
  w = NULL;
  if (rc) set_err(err, errsz, "writing the output failed");
done:
  out_discard(w);
  for (size_t c = 0; rs && c < ncol; c++) {
    reader_release(q, &rs[c]);
    reader_free(&rs[c]);
  }
  free(rs);
  free(names);
  free(cells);
  free(bufs);
  return rc;
}

int query_write_select(query_plan *q, const uint64_t *ids, uint64_t count, const int *colidx, size_t ncol,
                       int header, int force_host, FILE *out, char *err, size_t errsz) {
  query_output o = {OUT_FORMAT_CSV, header, force_host, 0};
  return query_write_rows(q, ids, count, colidx, ncol, &o, out, err, errsz);
}

/* ---- ORDER BY ---- */

/* One sort key: the values of a column for every selected row. */
typedef struct sort_key {
  const tbl_column *meta;
  int kind, desc;
  uint64_t *vals; /* int64 or uint64 bits; strings: dictionary codes */
  uint8_t *valid;
} sort_key;

typedef struct sort_ctx {
  sort_key *keys;
  size_t nkeys;
} sort_ctx;

static int cmp_strings(const tbl_column *m, uint64_t a, uint64_t b) {
  if (m->dict.sorted || a == b) return a < b ? -1 : a > b;
  const int32_t *o = m->dict.offsets32;
  size_t la = (size_t)(o[a + 1] - o[a]), lb = (size_t)(o[b + 1] - o[b]);
  int c = memcmp(m->dict.bytes + o[a], m->dict.bytes + o[b], la < lb ? la : lb);
  if (c) return c < 0 ? -1 : 1;
  return la < lb ? -1 : la > lb;
}

/* Compares selected rows i and j (positions in the id list). Nulls sort last
 * in both directions (as DuckDB and PostgreSQL's ASC); ties keep row order. */
static int cmp_rows(const sort_ctx *s, uint64_t i, uint64_t j) {
  for (size_t k = 0; k < s->nkeys; k++) {
    const sort_key *key = &s->keys[k];
    int vi = (key->valid[i / 8] >> (i % 8)) & 1, vj = (key->valid[j / 8] >> (j % 8)) & 1;
    if (!vi || !vj) {
      if (vi != vj) return vi ? -1 : 1;
      continue;
    }
    uint64_t a = key->vals[i], b = key->vals[j];
    int c;
    if (key->kind == V_STRING)
      c = cmp_strings(key->meta, a, b);
    else if (key->kind == V_UNSIGNED)
      c = a < b ? -1 : a > b;
    else
      c = (int64_t)a < (int64_t)b ? -1 : (int64_t)a > (int64_t)b;
    if (c) return key->desc ? -c : c;
  }
  return i < j ? -1 : i > j;
}

/* Stable merge sort of positions with the comparison above. */
static void merge_sort(const sort_ctx *s, uint64_t *p, uint64_t *tmp, uint64_t n) {
  if (n < 2) return;
  uint64_t h = n / 2;
  merge_sort(s, p, tmp, h);
  merge_sort(s, p + h, tmp, n - h);
  uint64_t i = 0, j = h, k = 0;
  while (i < h && j < n) tmp[k++] = cmp_rows(s, p[j], p[i]) < 0 ? p[j++] : p[i++];
  while (i < h) tmp[k++] = p[i++];
  while (j < n) tmp[k++] = p[j++];
  memcpy(p, tmp, n * sizeof *p);
}

int query_order_ids(query_plan *q, uint64_t *ids, uint64_t count, const query_order *order, size_t norder,
                    char *err, size_t errsz) {
  if (count < 2 || norder == 0) return 0;
  sort_key *keys = calloc(norder, sizeof *keys);
  uint64_t *pos = malloc(count * sizeof *pos), *tmp = malloc(count * sizeof *tmp);
  int rc = -1;
  if (!keys || !pos || !tmp) {
    set_err(err, errsz, "out of memory sorting %llu rows", (unsigned long long)count);
    goto done;
  }
  for (size_t k = 0; k < norder; k++) {
    colreader r;
    /* Sort keys are decoded on the host from the mapped table: strings as
     * dictionary codes, which a sorted dictionary orders as its strings. */
    if (reader_init(q, &r, order[k].col, 1, err, errsz)) {
      reader_free(&r);
      goto done;
    }
    keys[k].meta = r.meta;
    keys[k].kind = r.kind;
    keys[k].desc = order[k].desc;
    keys[k].vals = malloc(count * sizeof *keys[k].vals);
    keys[k].valid = calloc((count + 7) / 8, 1);
    if (!keys[k].vals || !keys[k].valid) {
      reader_free(&r);
      set_err(err, errsz, "out of memory sorting %llu rows", (unsigned long long)count);
      goto done;
    }
    for (uint64_t start = 0; start < count; start += BATCH) {
      uint64_t cnt = count - start < BATCH ? count - start : BATCH;
      if (reader_fetch(q, &r, ids + start, cnt, 1, err, errsz)) {
        reader_free(&r);
        goto done;
      }
      memcpy(keys[k].vals + start, r.vals, cnt * sizeof *r.vals);
      for (uint64_t i = 0; i < cnt; i++)
        if ((r.valid[i / 8] >> (i % 8)) & 1) keys[k].valid[(start + i) / 8] |= (uint8_t)(1u << ((start + i) % 8));
    }
    reader_free(&r);
  }
  for (uint64_t i = 0; i < count; i++) pos[i] = i;
  sort_ctx s = {keys, norder};
  merge_sort(&s, pos, tmp, count);
  for (uint64_t i = 0; i < count; i++) tmp[i] = ids[pos[i]];
  memcpy(ids, tmp, count * sizeof *ids);
  rc = 0;
done:
  for (size_t k = 0; keys && k < norder; k++) {
    free(keys[k].vals);
    free(keys[k].valid);
  }
  free(keys);
  free(pos);
  free(tmp);
  return rc;
}

/* ---- column lists and ORDER BY keys as written on the command line ---- */

/* Reads the column name at *pp, with the spaces before and after it, and
 * resolves it as a query would: "quoted" (doubled quotes inside) is exact; an
 * unquoted name ends at a ',' (--select, where it may hold spaces: trailing
 * ones are dropped) or also at a ' ' (stop_at_space: --order-by, where a
 * direction may follow). Returns the column's index, or -1 with err set
 * ("OPTION: ..."). */
static int read_column(const tbl_table *t, const char **pp, int stop_at_space, const char *option, char *err,
                       size_t errsz) {
  const char *p = *pp;
  while (*p == ' ') p++;
  tbuf name = {0};
  int quoted = *p == '"';
  if (quoted) {
    p++;
    while (*p && !(*p == '"' && p[1] != '"')) {
      if (*p == '"') p++;
      tbuf_putc(&name, *p++);
    }
    if (*p != '"') {
      tbuf_free(&name);
      return set_err(err, errsz, "%s: unterminated quoted column name", option);
    }
    p++;
  } else {
    const char *e = p;
    while (*e && *e != ',' && !(stop_at_space && *e == ' ')) e++;
    const char *end = e;
    while (end > p && end[-1] == ' ') end--;
    tbuf_append(&name, p, (size_t)(end - p));
    p = e;
  }
  while (*p == ' ') p++;
  *pp = p;
  expr_error e;
  int c = expr_find_column(t, name.p ? (const char *)name.p : "", name.len, quoted, &e, 0);
  tbuf_free(&name);
  if (c < 0) return set_err(err, errsz, "%s: %s", option, e.msg);
  return c;
}

/* Splits "a, b,\"c,d\"" into column indexes. */
int query_parse_columns(const tbl_table *t, const char *spec, int **out, size_t *n, char *err, size_t errsz) {
  size_t cap = 8, k = 0;
  int *idx = malloc(cap * sizeof *idx);
  if (!idx) return set_err(err, errsz, "out of memory");
  if (!strcmp(spec, "*")) {
    free(idx);
    idx = malloc((t->ncols ? t->ncols : 1) * sizeof *idx);
    if (!idx) return set_err(err, errsz, "out of memory");
    for (uint32_t i = 0; i < t->ncols; i++) idx[i] = (int)i;
    *out = idx;
    *n = t->ncols;
    return 0;
  }
  const char *p = spec;
  for (;;) {
    int c = read_column(t, &p, 0, "--select", err, errsz);
    if (c < 0) {
      free(idx);
      return -1;
    }
    if (k == cap) {
      cap *= 2;
      int *v = realloc(idx, cap * sizeof *idx);
      if (!v) {
        free(idx);
        return -1;
      }
      idx = v;
    }
    idx[k++] = c;
    if (*p == ',') {
      p++;
      continue;
    }
    if (*p) {
      set_err(err, errsz, "--select: expected ',' at '%s'", p);
      free(idx);
      return -1;
    }
    break;
  }
  *out = idx;
  *n = k;
  return 0;
}

/* "a DESC, \"B c\" asc" into ORDER BY keys. */
int query_parse_order(const tbl_table *t, const char *spec, query_order **out, size_t *n, char *err, size_t errsz) {
  size_t k = 0, cap = 4;
  query_order *v = malloc(cap * sizeof *v);
  if (!v) return -1;
  const char *p = spec;
  for (;;) {
    int c = read_column(t, &p, 1, "--order-by", err, errsz);
    if (c < 0) {
      free(v);
      return -1;
    }
    int desc = 0;
    while (*p == ' ') p++;
    if (!strncasecmp(p, "desc", 4) && (p[4] == 0 || p[4] == ',' || p[4] == ' ')) {
      desc = 1;
      p += 4;
    } else if (!strncasecmp(p, "asc", 3) && (p[3] == 0 || p[3] == ',' || p[3] == ' ')) {
      p += 3;
    }
    while (*p == ' ') p++;
    if (k == cap) {
      cap *= 2;
      query_order *nv = realloc(v, cap * sizeof *nv);
      if (!nv) {
        free(v);
        return -1;
      }
      v = nv;
    }
    v[k].col = c;
    v[k].desc = desc;
    k++;
    if (*p == ',') {
      p++;
      continue;
    }
    if (*p) {
      set_err(err, errsz, "--order-by: expected ASC, DESC or ',' at '%s'", p);
      free(v);
      return -1;
    }
    break;
  }
  *out = v;
  *n = k;
  return 0;
}

