/* Arrow C Data Interface export: selections, row ids, gathered values,
 * filtered record batches and aggregates as ArrowSchema + ArrowArray whose
 * release callbacks own every byte. Exported memory comes from malloc, not
 * the context's allocator: a consumer may release it long after the context
 * (and its allocator) are gone. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_internal.h"

/* ---- owned arrays and schemas ----------------------------------------------- */


typedef struct xa_private {
  void *owned[XA_MAX_BUFFERS];
  const void *ptrs[XA_MAX_BUFFERS];
  struct ArrowArray **children; /* each malloc'd */
} xa_private;

static void xa_release(struct ArrowArray *a) {
  if (!a || !a->release) return;
  xa_private *p = a->private_data;
  if (p) {
    for (int64_t i = 0; i < a->n_children; i++) {
      struct ArrowArray *c = p->children[i];
      if (c && c->release) c->release(c);
      free(c);
    }
    free(p->children);
    if (a->dictionary) {
      if (a->dictionary->release) a->dictionary->release(a->dictionary);
      free(a->dictionary);
    }
    for (int i = 0; i < XA_MAX_BUFFERS; i++) free(p->owned[i]);
    free(p);
  }
  a->release = NULL;
}

/* An array of `length` rows with n_buffers buffers (filled by the caller into
 * p->owned / p->ptrs) and n_children children (allocated zeroed here). */
bool xa_init(struct ArrowArray *a, int64_t length, int64_t n_buffers, int64_t n_children) {
  memset(a, 0, sizeof *a);
  xa_private *p = calloc(1, sizeof *p);
  if (!p) return false;
  if (n_children) {
    p->children = calloc((size_t)n_children, sizeof *p->children);
    if (!p->children) {
      free(p);
      return false;
    }
  }
  a->length = length;
  a->n_buffers = n_buffers;
  a->buffers = p->ptrs;
  a->children = p->children;
  a->private_data = p;
  a->release = xa_release;
  /* n_children is set as each child is allocated, so a release after a
   * partial build frees exactly what exists. */
  return true;
}

struct ArrowArray *xa_add_child(struct ArrowArray *a) {
  xa_private *p = a->private_data;
  struct ArrowArray *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  p->children[a->n_children++] = c;
  return c;
}

/* Gives buffer i of a to malloc'd memory of `size` bytes (at least 8, zeroed:
 * consumers may read a whole word of an empty buffer). */
void *xa_buffer(struct ArrowArray *a, int i, uint64_t size) {
  xa_private *p = a->private_data;
  void *m = size > SIZE_MAX - 8 ? NULL : calloc(1, (size_t)size + 8);
  p->owned[i] = m;
  p->ptrs[i] = m;
  return m;
}

typedef struct xs_private {
  char *format, *name, *metadata;
  struct ArrowSchema **children;
} xs_private;

static void xs_release(struct ArrowSchema *s) {
  if (!s || !s->release) return;
  xs_private *p = s->private_data;
  if (p) {
    for (int64_t i = 0; i < s->n_children; i++) {
      struct ArrowSchema *c = p->children[i];
      if (c && c->release) c->release(c);
      free(c);
    }
    free(p->children);
    if (s->dictionary) {
      if (s->dictionary->release) s->dictionary->release(s->dictionary);
      free(s->dictionary);
    }
    free(p->format);
    free(p->name);
    free(p->metadata);
    free(p);
  }
  s->release = NULL;
}

static char *xs_dup(const char *s) {
  size_t n = strlen(s);
  char *p = malloc(n + 1);
  if (p) memcpy(p, s, n + 1);
  return p;
}

bool xs_init(struct ArrowSchema *s, const char *format, const char *name, int64_t n_children) {
  memset(s, 0, sizeof *s);
  xs_private *p = calloc(1, sizeof *p);
  if (!p) return false;
  p->format = xs_dup(format);
  p->name = xs_dup(name ? name : "");
  if (n_children) p->children = calloc((size_t)n_children, sizeof *p->children);
  if (!p->format || !p->name || (n_children && !p->children)) {
    free(p->format);
    free(p->name);
    free(p->children);
    free(p);
    return false;
  }
  s->format = p->format;
  s->name = p->name;
  s->flags = ARROW_FLAG_NULLABLE;
  s->children = p->children;
  s->private_data = p;
  s->release = xs_release;
  return true;
}

bool xs_set_metadata(struct ArrowSchema *s, const char *metadata, size_t size) {
  xs_private *p = s->private_data;
  char *m = malloc(size ? size : 1);
  if (!m) return false;
  memcpy(m, metadata, size);
  free(p->metadata);
  p->metadata = m;
  s->metadata = m;
  return true;
}

struct ArrowSchema *xs_add_child(struct ArrowSchema *s) {
  xs_private *p = s->private_data;
  struct ArrowSchema *c = calloc(1, sizeof *c);
  if (!c) return NULL;
  p->children[s->n_children++] = c;
  return c;
}

void release_both(struct ArrowSchema *s, struct ArrowArray *a) {
  if (s && s->release) s->release(s);
  if (a && a->release) a->release(a);
}

static ps_status oom(ps_context *ctx, const char *what) {
  return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "exporting %s", what);
}

static uint64_t bitmap_bytes(uint64_t n) { return n / 8 + (n % 8 != 0); }

static uint64_t popcount_bits(const uint8_t *b, uint64_t n) {
  uint64_t c = 0;
  for (uint64_t i = 0; i < n / 8; i++) c += (uint64_t)__builtin_popcount(b[i]);
  for (uint64_t i = n / 8 * 8; i < n; i++) c += (b[i / 8] >> (i % 8)) & 1;
  return c;
}

/* ---- selection and row ids ---------------------------------------------------- */

ps_status ps_arrow_export_selection(ps_context *ctx, const ps_expr *expr, struct ArrowSchema *schema,
                                    struct ArrowArray *array, uint64_t *count) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!schema || !array) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s is NULL", schema ? "array" : "schema");
  PS_TRY(ps_check_expr(ctx, expr));
  uint64_t n = ps_expr_rows(expr), c = 0;
  struct ArrowSchema s;
  struct ArrowArray a;
  if (!xs_init(&s, "b", "selected", 0)) return oom(ctx, "a selection");
  if (!xa_init(&a, (int64_t)n, 2, 0)) {
    release_both(&s, NULL);
    return oom(ctx, "a selection");
  }
  uint8_t *bits = xa_buffer(&a, 1, bitmap_bytes(n));
  if (!bits) {
    release_both(&s, &a);
    return oom(ctx, "a selection bitmap");
  }
  ps_status st = ps_filter(ctx, expr, bits, bitmap_bytes(n), &c);
  if (st != PS_OK) {
    release_both(&s, &a);
    return st;
  }
  *schema = s;
  *array = a;
  if (count) *count = c;
  return PS_OK;
}

ps_status ps_arrow_export_row_ids(ps_context *ctx, const ps_expr *expr, ps_index_type type, struct ArrowSchema *schema,
                                  struct ArrowArray *array) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!schema || !array) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s is NULL", schema ? "array" : "schema");
  if (type != PS_INDEX_UINT32 && type != PS_INDEX_UINT64)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "type is %d; expected PS_INDEX_UINT32 or PS_INDEX_UINT64",
                        (int)type);
  void *ids = NULL;
  uint64_t count = 0;
  PS_TRY(ps_filter_row_ids(ctx, expr, type, &ids, &count));
  struct ArrowSchema s;
  struct ArrowArray a;
  bool ok = xs_init(&s, type == PS_INDEX_UINT32 ? "I" : "L", "row_id", 0);
  if (ok && !xa_init(&a, (int64_t)count, 2, 0)) {
    release_both(&s, NULL);
    ok = false;
  }
  void *buf = ok ? xa_buffer(&a, 1, count * (uint64_t)type) : NULL;
  if (!buf) {
    if (ok) release_both(&s, &a);
    ps_free(ctx, ids);
    return oom(ctx, "row ids");
  }
  if (count) memcpy(buf, ids, (size_t)(count * (uint64_t)type));
  ps_free(ctx, ids);
  *schema = s;
  *array = a;
  return PS_OK;
}

/* ---- gathered values ---------------------------------------------------------- */

/* Bytes of one exported value of a fixed-width kind. */
static uint32_t kind_size(ps_arrow_kind k) {
  switch (k) {
    case PS_ARROW_INT8:
    case PS_ARROW_UINT8:
      return 1;
    case PS_ARROW_INT16:
    case PS_ARROW_UINT16:
      return 2;
    case PS_ARROW_INT32:
    case PS_ARROW_UINT32:
    case PS_ARROW_FLOAT32:
    case PS_ARROW_DATE32:
      return 4;
    case PS_ARROW_DECIMAL128:
      return 16;
    default:
      return 8;
  }
}

static void put_decimal(uint8_t *dst, int64_t lo_signed, int64_t hi) {
  uint64_t lo = (uint64_t)lo_signed;
  memcpy(dst, &lo, 8);
  memcpy(dst + 8, &hi, 8);
}

static bool export_string_array(struct ArrowArray *a, uint64_t count, const int64_t *offs, const uint8_t *bytes,
                                bool large) {
  uint64_t total = (uint64_t)offs[count];
  if (!xa_init(a, (int64_t)count, 3, 0)) return false;
  void *o = xa_buffer(a, 1, (count + 1) * (large ? 8 : 4));
  uint8_t *b = xa_buffer(a, 2, total);
  if (!o || !b) return false;
  if (large)
    memcpy(o, offs, (size_t)(count + 1) * 8);
  else
    for (uint64_t i = 0; i <= count; i++) ((int32_t *)o)[i] = (int32_t)offs[i];
  if (total) memcpy(b, bytes, (size_t)total);
  return true;
}

/* Moves a gathered validity bitmap into buffer 0 (or drops it: no nulls). */
static bool attach_validity(struct ArrowArray *a, const uint8_t *valid, uint64_t count) {
  uint64_t valid_rows = popcount_bits(valid, count);
  a->null_count = (int64_t)(count - valid_rows);
  if (a->null_count == 0) return true;
  uint8_t *v = xa_buffer(a, 0, bitmap_bytes(count));
  if (!v) return false;
  memcpy(v, valid, (size_t)bitmap_bytes(count));
  return true;
}

static ps_status export_column(ps_context *ctx, const ps_arrow_table *t, size_t ci, const void *ids, ps_index_type type,
                               uint64_t count, int as_dictionary, struct ArrowSchema *s, struct ArrowArray *a) {
  const ps_arrow_field *f = &t->fields[ci];
  const ps_column *col = t->cols[ci];
  uint8_t *valid = ps_calloc_ctx(ctx, (size_t)bitmap_bytes(count) + 1, 1);
  if (!valid) return oom(ctx, "a validity bitmap");
  ps_status st = PS_OK;
  memset(s, 0, sizeof *s);
  memset(a, 0, sizeof *a);
  if (f->type == PS_TYPE_STRING && as_dictionary) {
    const ps_dict *d = &col->dict;
    bool large = d->offsets[d->count] > INT32_MAX;
    struct ArrowSchema *ds = NULL;
    struct ArrowArray *da = NULL;
    bool ok = xs_init(s, "i", f->name, 0) && xa_init(a, (int64_t)count, 2, 0);
    if (ok) {
      ds = calloc(1, sizeof *ds);
      da = calloc(1, sizeof *da);
      s->dictionary = ds;
      a->dictionary = da;
    }
    ok = ok && ds && da && xs_init(ds, large ? "U" : "u", "", 0);
    if (ok) {
      int64_t *o64 = malloc((size_t)(d->count + 1) * 8);
      ok = o64 != NULL;
      for (uint64_t k = 0; ok && k <= d->count; k++) o64[k] = (int64_t)d->offsets[k];
      ok = ok && export_string_array(da, d->count, o64, d->bytes, large);
      free(o64);
    }
    uint32_t *codes = ok ? xa_buffer(a, 1, count * 4) : NULL;
    if (!codes) st = oom(ctx, "a dictionary array");
    if (st == PS_OK) st = ps_gather_values(ctx, col, ids, type, count, codes, valid);
    if (st == PS_OK && !attach_validity(a, valid, count)) st = oom(ctx, "a validity bitmap");
  } else if (f->type == PS_TYPE_STRING) {
    int64_t *offs = NULL;
    uint8_t *bytes = NULL;
    st = ps_gather_strings(ctx, col, ids, type, count, &offs, &bytes, valid);
    if (st == PS_OK) {
      bool large = f->kind == PS_ARROW_LARGE_UTF8 || offs[count] > INT32_MAX;
      if (!xs_init(s, large ? "U" : "u", f->name, 0) || !export_string_array(a, count, offs, bytes, large) ||
          !attach_validity(a, valid, count))
        st = oom(ctx, "a string array");
    }
    ps_free(ctx, offs);
    ps_free(ctx, bytes);
  } else {
    uint32_t vs = kind_size(f->kind);
    uint8_t *vals = NULL;
    if (!xs_init(s, f->format, f->name, 0) || !xa_init(a, (int64_t)count, 2, 0) ||
        !(vals = xa_buffer(a, 1, count * vs)))
      st = oom(ctx, "a value array");
    if (st == PS_OK && f->kind == PS_ARROW_DECIMAL128) {
      /* int64 unscaled values gathered into the upper half of the buffer,
       * then widened to 16 bytes in place from the front. */
      st = ps_gather_values(ctx, col, ids, type, count, vals + count * 8, valid);
      for (uint64_t i = 0; st == PS_OK && i < count; i++) {
        int64_t v;
        memcpy(&v, vals + count * 8 + i * 8, 8);
        put_decimal(vals + i * 16, v, v < 0 ? -1 : 0);
      }
    } else if (st == PS_OK) {
      st = ps_gather_values(ctx, col, ids, type, count, vals, valid);
    }
    if (st == PS_OK && !attach_validity(a, valid, count)) st = oom(ctx, "a validity bitmap");
  }
  ps_host_free(ctx, valid);
  if (st != PS_OK) release_both(s, a);
  return st;
}

static ps_status check_table_column(ps_context *ctx, const ps_arrow_table *t, size_t column) {
  if (!t) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "table is NULL");
  if (t->ctx != ctx) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "table belongs to another context");
  if (column >= t->ncols)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "column is %zu; the table has %zu", column, t->ncols);
  return PS_OK;
}

ps_status ps_arrow_export_gather(ps_context *ctx, const ps_arrow_table *table, size_t column, const void *ids,
                                 ps_index_type type, uint64_t count, int as_dictionary, struct ArrowSchema *schema,
                                 struct ArrowArray *array) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!schema || !array) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s is NULL", schema ? "array" : "schema");
  PS_TRY(check_table_column(ctx, table, column));
  /* An Arrow length is an int64 and the widest slot 16 bytes: count * 16
   * must not wrap (no ids array holds that many anyway). */
  if (count > (uint64_t)INT64_MAX / 16)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "count is %" PRIu64 "; no ids array holds that many", count);
  struct ArrowSchema s;
  struct ArrowArray a;
  PS_TRY(export_column(ctx, table, column, ids, type, count, as_dictionary, &s, &a));
  *schema = s;
  *array = a;
  return PS_OK;
}

ps_status ps_arrow_export_filter(ps_context *ctx, const ps_arrow_table *table, const ps_expr *expr, int as_dictionary,
                                 struct ArrowSchema *schema, struct ArrowArray *array) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!schema || !array) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s is NULL", schema ? "array" : "schema");
  if (!table) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "table is NULL");
  if (table->ctx != ctx) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "table belongs to another context");
  if (expr && ps_expr_rows(expr) != table->rows)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "expr reads %" PRIu64 " rows; the table has %" PRIu64,
                        ps_expr_rows(expr), table->rows);
  uint64_t count = table->rows;
  uint64_t *ids = NULL;
  if (expr) {
    void *p = NULL;
    PS_TRY(ps_filter_row_ids(ctx, expr, PS_INDEX_UINT64, &p, &count));
    ids = p;
  } else if (count) {
    ids = ps_calloc_ctx(ctx, (size_t)count, sizeof *ids);
    if (!ids) return oom(ctx, "row ids");
    for (uint64_t i = 0; i < count; i++) ids[i] = i;
  }
  struct ArrowSchema s;
  struct ArrowArray a;
  ps_status st = PS_OK;
  memset(&s, 0, sizeof s);
  memset(&a, 0, sizeof a);
  if (!xs_init(&s, "+s", "", (int64_t)table->ncols) || !xa_init(&a, (int64_t)count, 1, (int64_t)table->ncols))
    st = oom(ctx, "a record batch");
  for (size_t i = 0; st == PS_OK && i < table->ncols; i++) {
    struct ArrowSchema *cs = xs_add_child(&s);
    struct ArrowArray *ca = xa_add_child(&a);
    if (!cs || !ca)
      st = oom(ctx, "a record batch");
    else
      st = export_column(ctx, table, i, ids, PS_INDEX_UINT64, count, as_dictionary, cs, ca);
  }
  ps_free(ctx, ids);
  if (st != PS_OK) {
    release_both(&s, &a);
    return st;
  }
  *schema = s;
  *array = a;
  return PS_OK;
}

/* ---- the packed form ----------------------------------------------------------- */

ps_status ps_arrow_table_packed(ps_context *ctx, const ps_arrow_table *table, size_t i, ps_for_desc *desc,
                                ps_dict_desc *dict) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!desc) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "desc is NULL");
  PS_TRY(check_table_column(ctx, table, i));
  const ps_column *col = table->cols[i];
  bool is_dict = col->type == PS_TYPE_STRING;
  if (is_dict && !dict)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "column %zu is a dictionary column and dict is NULL", i);
  uint8_t *data = ps_host_alloc(ctx, (size_t)(col->data_size ? col->data_size : 1));
  uint8_t *valid =
      col->validity.handle ? ps_host_alloc(ctx, (size_t)(col->validity_size ? col->validity_size : 1)) : NULL;
  if (!data || (col->validity.handle && !valid)) {
    ps_host_free(ctx, data);
    ps_host_free(ctx, valid);
    return oom(ctx, "a packed column");
  }
  ps_status st = PS_OK;
  if (col->host) { /* the caller's host memory */
    if (col->data_size) memcpy(data, col->data.handle, (size_t)col->data_size);
    if (valid) memcpy(valid, col->validity.handle, (size_t)col->validity_size);
  } else {
    if (col->data_size) st = ctx->ops->mem_read(ctx->be, data, col->data, col->data_size);
    if (st == PS_OK && valid) st = ctx->ops->mem_read(ctx->be, valid, col->validity, col->validity_size);
  }
  if (st != PS_OK) {
    ps_host_free(ctx, data);
    ps_host_free(ctx, valid);
    return st;
  }
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = is_dict ? PS_TYPE_UINT64 : col->type;
  d.n = col->n;
  d.width = col->width;
  d.scale = col->scale;
  d.reference = col->reference;
  d.data = data;
  d.data_size = col->data_size;
  d.encoding = col->encoding;
  d.validity = valid;
  d.validity_size = valid ? col->validity_size : 0;
  if (col->zones) d.zones = &col->zones->view;
  if (col->fmap.map != PS_FLOAT_MAP_DECIMAL) {
    d.float_map = col->fmap.map;
    d.float_e = col->fmap.e;
    d.float_f = col->fmap.f;
    d.float_rank_bits = col->fmap.rank_bits;
    d.reference.u = col->fmap.ref;
    d.exceptions = col->fmap.exc; /* borrowed from the table, as the dictionary is */
    d.exceptions_count = col->fmap.n_exc;
  }
  *desc = d;
  if (dict) {
    ps_dict_desc_init(dict);
    if (is_dict) {
      dict->count = col->dict.count;
      dict->offsets64 = (const int64_t *)col->dict.offsets;
      dict->bytes = col->dict.bytes;
      dict->bytes_size = col->dict.bytes_size;
      dict->sorted = col->dict.sorted;
    }
  }
  return PS_OK;
}

/* ---- aggregates --------------------------------------------------------------- */

/* One-row child of `format` whose single value (vs bytes at value) is null
 * when value is NULL. */
static bool one_row(struct ArrowSchema *s, struct ArrowArray *a, const char *format, const char *name,
                    const void *value, uint32_t vs) {
  if (!s || !a || !xs_init(s, format, name, 0) || !xa_init(a, 1, 2, 0)) return false;
  uint8_t *v = xa_buffer(a, 1, vs);
  if (!v) return false;
  if (value) {
    memcpy(v, value, vs);
  } else {
    if (!xa_buffer(a, 0, 1)) return false; /* zeroed: the row is null */
    a->null_count = 1;
  }
  return true;
}

/* The aggregate min/max as a value of the column's Arrow type. */
static void agg_value(const ps_arrow_field *f, const ps_aggregates *g, bool max, uint8_t out[16]) {
  memset(out, 0, 16);
  int64_t i = max ? g->max.i : g->min.i;
  uint64_t u = max ? g->max.u : g->min.u;
  double d = max ? g->max.f : g->min.f;
  switch (f->kind) {
    case PS_ARROW_INT8: {
      int8_t v = (int8_t)i;
      memcpy(out, &v, 1);
      break;
    }
    case PS_ARROW_INT16: {
      int16_t v = (int16_t)i;
      memcpy(out, &v, 2);
      break;
    }
    case PS_ARROW_INT32:
    case PS_ARROW_DATE32: {
      int32_t v = (int32_t)i;
      memcpy(out, &v, 4);
      break;
    }
    case PS_ARROW_UINT8: {
      uint8_t v = (uint8_t)u;
      memcpy(out, &v, 1);
      break;
    }
    case PS_ARROW_UINT16: {
      uint16_t v = (uint16_t)u;
      memcpy(out, &v, 2);
      break;
    }
    case PS_ARROW_UINT32: {
      uint32_t v = (uint32_t)u;
      memcpy(out, &v, 4);
      break;
    }
    case PS_ARROW_UINT64:
      memcpy(out, &u, 8);
      break;
    case PS_ARROW_FLOAT32: {
      float v = (float)d;
      memcpy(out, &v, 4);
      break;
    }
    case PS_ARROW_FLOAT64:
      memcpy(out, &d, 8);
      break;
    case PS_ARROW_DECIMAL128:
      put_decimal(out, i, i < 0 ? -1 : 0);
      break;
    default:
      memcpy(out, &i, 8);
      break;
  }
}

ps_status ps_arrow_export_aggregates(ps_context *ctx, const ps_arrow_table *table, size_t column, const ps_expr *expr,
                                     struct ArrowSchema *schema, struct ArrowArray *array) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!schema || !array) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s is NULL", schema ? "array" : "schema");
  PS_TRY(check_table_column(ctx, table, column));
  const ps_arrow_field *f = &table->fields[column];
  const ps_column *col = table->cols[column];
  if (f->type == PS_TYPE_STRING)
    return ps_set_error(ctx, PS_ERR_TYPE_MISMATCH,
                        "column %zu (\"%s\") is a string column; aggregates need a numeric one", column, f->name);
  if (expr && ps_expr_rows(expr) != table->rows)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "expr reads %" PRIu64 " rows; the table has %" PRIu64,
                        ps_expr_rows(expr), table->rows);
  ps_buffer *sel = NULL;
  ps_status st = PS_OK;
  if (expr && !ctx->group) {
    st = ps_buffer_create(ctx, (bitmap_bytes(table->rows) + 3) / 4 * 4 + 4, &sel);
    if (st == PS_OK) st = ps_filter_device(ctx, expr, sel, 0, NULL);
  }
  ps_aggregates g;
  memset(&g, 0, sizeof g);
  if (st == PS_OK) st = ctx->group ? ps_group_aggregate(ctx, col, expr, &g) : ps_aggregate(ctx, col, sel, 0, &g);
  ps_buffer_destroy(sel);
  if (st != PS_OK) return st;

  bool time = f->kind == PS_ARROW_DATE32 || f->kind == PS_ARROW_DATE64 || f->kind == PS_ARROW_TIMESTAMP;
  bool float_sum = f->kind == PS_ARROW_FLOAT32 || f->kind == PS_ARROW_FLOAT64;
  int64_t nfields = time ? 3 : 4;
  struct ArrowSchema s;
  struct ArrowArray a;
  memset(&s, 0, sizeof s);
  memset(&a, 0, sizeof a);
  bool ok = xs_init(&s, "+s", "", nfields) && xa_init(&a, 1, 1, nfields);
  int64_t cnt = (int64_t)g.count;
  ok = ok && one_row(xs_add_child(&s), xa_add_child(&a), "l", "count", &cnt, 8);
  if (ok && !time) {
    uint8_t sum[16];
    char fmt[32];
    if (float_sum) {
      memcpy(sum, &g.sum_double, 8);
      snprintf(fmt, sizeof fmt, "g");
    } else {
      memcpy(sum, &g.sum_lo, 8);
      memcpy(sum + 8, &g.sum_hi, 8);
      snprintf(fmt, sizeof fmt, "d:38,%u", f->kind == PS_ARROW_DECIMAL128 ? f->scale : 0u);
    }
    ok = one_row(xs_add_child(&s), xa_add_child(&a), fmt, "sum", g.has_value ? sum : NULL, float_sum ? 8 : 16);
  }
  uint8_t mn[16], mx[16];
  agg_value(f, &g, false, mn);
  agg_value(f, &g, true, mx);
  ok = ok && one_row(xs_add_child(&s), xa_add_child(&a), f->format, "min", g.has_value ? mn : NULL, kind_size(f->kind));
  ok = ok && one_row(xs_add_child(&s), xa_add_child(&a), f->format, "max", g.has_value ? mx : NULL, kind_size(f->kind));
  if (!ok) {
    release_both(&s, &a);
    return oom(ctx, "aggregates");
  }
  *schema = s;
  *array = a;
  return PS_OK;
}
