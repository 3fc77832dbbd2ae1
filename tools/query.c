#include "query.h"

#include <stdlib.h>
#include <string.h>

int query_context(const char *backend, ps_context **out, char *err, size_t errsz) {
  ps_context_options o;
  ps_context_options_init(&o);
  o.backend = backend ? backend : "auto";
  char msg[TOOL_ERR_SIZE] = "";
  ps_status st = ps_context_create(&o, msg, sizeof msg, out);
  if (st != PS_OK) {
    tbuf names = {0};
    for (size_t i = 0; i < ps_backend_count(); i++)
      tbuf_printf(&names, "%s%s", i ? ", " : "", ps_backend_name(i));
    set_err(err, errsz, "cannot create a context on backend '%s': %s: %s (compiled in: %.*s)", o.backend,
            ps_status_name(st), msg, (int)names.len, names.p ? (char *)names.p : "");
    tbuf_free(&names);
    return -1;
  }
  return 0;
}

int query_plan_build(ps_context *ctx, const tbl_table *t, const char *src, size_t len, query_plan *q,
                     FILE *errf) {
  memset(q, 0, sizeof *q);
  q->ctx = ctx;
  q->tbl = t;
  q->cols = calloc(t->ncols ? t->ncols : 1, sizeof *q->cols);
  if (!q->cols) {
    fprintf(errf, "out of memory\n");
    return -1;
  }
  expr_error e;
  if (expr_parse(src, len, &q->arena, &q->ast, &e)) {
    expr_print_error(errf, src, len, &e);
    return -1;
  }
  bind_env env = {ctx, t, q->cols};
  if (expr_bind(&env, q->ast, &q->expr, &e)) {
    expr_print_error(errf, src, len, &e);
    return -1;
  }
  return 0;
}

void query_plan_free(query_plan *q) {
  ps_expr_destroy(q->expr);
  q->expr = NULL;
  if (q->cols && q->tbl)
    for (uint32_t i = 0; i < q->tbl->ncols; i++) ps_column_destroy(q->cols[i]);
  free(q->cols);
  q->cols = NULL;
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
      return set_err(err, errsz, "row ids: %s: %s", ps_status_name(st), ps_context_last_error(q->ctx));
  }
  /* The backend has no row-id entry: read the bitmap and collect set bits. */
  uint64_t n = ps_expr_rows(q->expr), c = 0;
  uint8_t *bm = malloc((n + 7) / 8 ? (n + 7) / 8 : 1);
  if (!bm) return set_err(err, errsz, "out of memory for a %llu-row bitmap", (unsigned long long)n);
  ps_status st = ps_filter(q->ctx, q->expr, bm, (n + 7) / 8, &c);
  if (st != PS_OK) {
    free(bm);
    return set_err(err, errsz, "filter: %s: %s", ps_status_name(st), ps_context_last_error(q->ctx));
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

void csv_write_field(FILE *out, const char *s, size_t len) {
  int quote = len == 0;
  for (size_t i = 0; i < len && !quote; i++)
    quote = s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
  if (!quote) {
    fwrite(s, 1, len, out);
    return;
  }
  fputc('"', out);
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '"') fputc('"', out);
    fputc(s[i], out);
  }
  fputc('"', out);
}

/* ---- value readers for --select ---- */

enum { V_SIGNED, V_UNSIGNED, V_DECIMAL, V_DATE, V_STRING };

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
  } else if (ty >= PS_TYPE_UINT8 && ty <= PS_TYPE_UINT64) {
    r->kind = V_UNSIGNED;
    r->view.type = PS_TYPE_UINT64;
  } else {
    r->kind = m->logical == TBL_LOGICAL_DATE ? V_DATE
              : (ty == PS_TYPE_FLOAT32 || ty == PS_TYPE_FLOAT64) ? V_DECIMAL
                                                                  : V_SIGNED;
    r->scale = m->desc.scale;
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
    st = ps_column_create_for(q->ctx, &r->view, &r->lib);
    if (st != PS_OK)
      return set_err(err, errsz, "column '%s': %s: %s", m->name, ps_status_name(st), ps_context_last_error(q->ctx));
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

/* Decodes block b of a column on the host with ps_decode_for. */
static int host_block(colreader *r, uint64_t b, char *err, size_t errsz) {
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
    return set_err(err, errsz, "column '%s': rows %llu..: %s: %s", r->meta->name, (unsigned long long)start,
                   ps_status_name(st), msg);
  r->block = b + 1;
  return 0;
}

static int reader_fetch(query_plan *q, colreader *r, const uint64_t *ids, uint64_t cnt, int force_host, char *err,
                        size_t errsz) {
  memset(r->valid, 0, (cnt + 7) / 8);
  if (!force_host) {
    ps_status st;
    if (r->kind == V_STRING)
      st = ps_gather_strings_host(q->ctx, r->lib, ids, PS_INDEX_UINT64, cnt, &r->soff, &r->sbytes, r->valid);
    else
      st = ps_gather_host(q->ctx, r->lib, ids, PS_INDEX_UINT64, cnt, r->vals, r->valid);
    if (st == PS_OK) return 0;
    if (st != PS_ERR_UNSUPPORTED)
      return set_err(err, errsz, "column '%s': gather: %s: %s", r->meta->name, ps_status_name(st),
                     ps_context_last_error(q->ctx));
  }
  /* Host path: decode the blocks that hold the ids from the mapped file. */
  for (uint64_t i = 0; i < cnt; i++) {
    uint64_t row = ids[i];
    if (row >= r->view.n) return set_err(err, errsz, "row id %llu out of range", (unsigned long long)row);
    if (host_block(r, row / HOST_BLOCK, err, errsz)) return -1;
    int ok = !r->view.validity || ((r->view.validity[row / 8] >> (row % 8)) & 1);
    uint64_t v = r->cache[row % HOST_BLOCK];
    if (ok && r->kind == V_STRING && v >= r->meta->dict.count)
      return set_err(err, errsz, "column '%s': row %llu: code %llu is outside the %llu-entry dictionary",
                     r->meta->name, (unsigned long long)row, (unsigned long long)v,
                     (unsigned long long)r->meta->dict.count);
    r->vals[i] = ok ? v : 0;
    if (ok) r->valid[i / 8] |= (uint8_t)(1u << (i % 8));
  }
  return 0;
}

static void reader_print(FILE *out, const colreader *r, uint64_t i) {
  if (!((r->valid[i / 8] >> (i % 8)) & 1)) return; /* null: empty field */
  char buf[64];
  switch (r->kind) {
  case V_SIGNED: fprintf(out, "%lld", (long long)(int64_t)r->vals[i]); break;
  case V_UNSIGNED: fprintf(out, "%llu", (unsigned long long)r->vals[i]); break;
  case V_DECIMAL:
    format_decimal((int64_t)r->vals[i], (int)r->scale, buf);
    fputs(buf, out);
    break;
  case V_DATE:
    format_date((int64_t)r->vals[i], buf);
    fputs(buf, out);
    break;
  case V_STRING:
    if (r->soff) {
      csv_write_field(out, (const char *)r->sbytes + r->soff[i], (size_t)(r->soff[i + 1] - r->soff[i]));
    } else {
      const int32_t *o = r->meta->dict.offsets32;
      uint64_t k = r->vals[i];
      csv_write_field(out, (const char *)r->meta->dict.bytes + o[k], (size_t)(o[k + 1] - o[k]));
    }
    break;
  }
}

int query_write_select(query_plan *q, const uint64_t *ids, uint64_t count, const int *colidx, size_t ncol,
                       int header, int force_host, FILE *out, char *err, size_t errsz) {
  colreader *rs = calloc(ncol ? ncol : 1, sizeof *rs);
  if (!rs) return set_err(err, errsz, "out of memory");
  int rc = -1;
  for (size_t c = 0; c < ncol; c++)
    if (reader_init(q, &rs[c], colidx[c], force_host, err, errsz)) goto done;
  /* The header waits for the first batch of values, so that a --select
   * that fails there (a corrupt column) prints nothing at all. */
  int header_due = header;
  for (uint64_t start = 0; start < count || header_due; start += BATCH) {
    uint64_t cnt = start < count ? (count - start < BATCH ? count - start : BATCH) : 0;
    for (size_t c = 0; c < ncol && cnt; c++)
      if (reader_fetch(q, &rs[c], ids + start, cnt, force_host, err, errsz)) goto done;
    if (header_due) {
      for (size_t c = 0; c < ncol; c++) {
        if (c) fputc(',', out);
        csv_write_field(out, rs[c].meta->name, strlen(rs[c].meta->name));
      }
      fputc('\n', out);
      header_due = 0;
    }
    for (uint64_t i = 0; i < cnt; i++) {
      for (size_t c = 0; c < ncol; c++) {
        if (c) fputc(',', out);
        reader_print(out, &rs[c], i);
      }
      fputc('\n', out);
    }
    for (size_t c = 0; c < ncol; c++) {
      if (rs[c].soff) {
        ps_free(q->ctx, rs[c].soff);
        ps_free(q->ctx, rs[c].sbytes);
        rs[c].soff = NULL;
        rs[c].sbytes = NULL;
      }
    }
  }
  rc = 0;
done:
  for (size_t c = 0; c < ncol; c++) {
    if (rs[c].soff) {
      ps_free(q->ctx, rs[c].soff);
      ps_free(q->ctx, rs[c].sbytes);
    }
    reader_free(&rs[c]);
  }
  free(rs);
  return rc;
}
