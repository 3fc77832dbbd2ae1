/*
 * arrow: the Arrow C Data Interface (include/packscan_arrow.h) on the backend
 * under test. The test is its own Arrow producer and consumer (no Arrow
 * library), and every result is checked against the plain values it made:
 *  - round trips for every imported type (int8..uint64, float32/64 with a
 *    found scale, decimal128, date32/64, timestamp, utf8, large_utf8,
 *    string_view inline and out of line, dictionaries sorted, unsorted and with
 *    repeated entries, int8/int32/uint16 indexes, utf8/large_utf8/string_view
 *    values): seeded random values with nulls, sliced arrays (offsets 0..9,
 *    validity not byte aligned), n around 0/1/31/32/33 and larger; import, filter, export as boolean selection,
 *    uint32/uint64 row ids, a filtered record batch, every row back with its
 *    validity, dictionary export, aggregates;
 *  - record batches (struct arrays, sliced) and streams of several batches
 *    (dictionaries with different dictionaries per batch);
 *  - malformed input (released arrays and schemas, wrong buffer and child
 *    counts, bad lengths, offsets and null counts, decreasing or negative
 *    string offsets, views out of their buffers, dictionary indexes out of
 *    range, decimals outside int64, floats with no exact scale, unknown
 *    formats, failing streams): the exact status, a message naming the field,
 *    the out-parameter and the input untouched, nothing released, the
 *    context usable after;
 *  - hand-made arrays for edges the random producer never makes: empty
 *    strings with a NULL data buffer, struct validity (null_count known or
 *    -1) applied to every column, offsets and stream totals that would
 *    overflow, decimal precisions, a gather export too long for Arrow;
 *  - the packed form read back (ps_arrow_table_packed) rebuilding the table
 *    (ps_arrow_table_create, and host-resident over the packed buffers:
 *    ps_arrow_table_create_host): the same values gathered and counted;
 *  - exported arrays released after their table and context are gone.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "packscan_arrow.h"

/* ---- a minimal producer ---------------------------------------------------- */

typedef struct tp_priv {
  void *bufs[8];
  const void *ptrs[8];
  struct ArrowArray *kids[8];
  int nkids;
} tp_priv;

static int released_arrays;

static void tp_release(struct ArrowArray *a) {
  tp_priv *p = a->private_data;
  for (int i = 0; i < 8; i++) free(p->bufs[i]);
  for (int i = 0; i < p->nkids; i++) {
    if (p->kids[i]->release) p->kids[i]->release(p->kids[i]);
    free(p->kids[i]);
  }
  if (a->dictionary) {
    if (a->dictionary->release) a->dictionary->release(a->dictionary);
    free(a->dictionary);
  }
  free(p);
  a->release = NULL;
  released_arrays++;
}

/* An array over malloc'd buffers (taken); dictionary malloc'd (taken). */
static void tp_array(struct ArrowArray *a, int64_t length, int64_t offset, int64_t null_count, int nbuf, void **bufs,
                     struct ArrowArray *dictionary) {
  tp_priv *p = th_calloc(1, sizeof *p);
  for (int i = 0; i < nbuf; i++) p->bufs[i] = bufs[i], p->ptrs[i] = bufs[i];
  memset(a, 0, sizeof *a);
  a->length = length;
  a->offset = offset;
  a->null_count = null_count;
  a->n_buffers = nbuf;
  a->buffers = p->ptrs;
  a->children = p->kids;
  a->dictionary = dictionary;
  a->private_data = p;
  a->release = tp_release;
}

static void tp_add_child(struct ArrowArray *parent, const struct ArrowArray *child) {
  tp_priv *p = parent->private_data;
  p->kids[p->nkids] = th_malloc(sizeof *child);
  *p->kids[p->nkids++] = *child;
  parent->n_children = p->nkids;
}

typedef struct ts_priv {
  char *format, *name;
  struct ArrowSchema *kids[8];
  int nkids;
} ts_priv;

static void ts_release(struct ArrowSchema *s) {
  ts_priv *p = s->private_data;
  for (int i = 0; i < p->nkids; i++) {
    if (p->kids[i]->release) p->kids[i]->release(p->kids[i]);
    free(p->kids[i]);
  }
  if (s->dictionary) {
    if (s->dictionary->release) s->dictionary->release(s->dictionary);
    free(s->dictionary);
  }
  free(p->format);
  free(p->name);
  free(p);
  s->release = NULL;
}

static void ts_schema(struct ArrowSchema *s, const char *format, const char *name, struct ArrowSchema *dictionary) {
  ts_priv *p = th_calloc(1, sizeof *p);
  p->format = th_strdup_n(format, strlen(format));
  p->name = th_strdup_n(name, strlen(name));
  memset(s, 0, sizeof *s);
  s->format = p->format;
  s->name = p->name;
  s->flags = ARROW_FLAG_NULLABLE;
  s->children = p->kids;
  s->dictionary = dictionary;
  s->private_data = p;
  s->release = ts_release;
}

static void ts_add_child(struct ArrowSchema *parent, const struct ArrowSchema *child) {
  ts_priv *p = parent->private_data;
  p->kids[p->nkids] = th_malloc(sizeof *child);
  *p->kids[p->nkids++] = *child;
  parent->n_children = p->nkids;
}

/* ---- the truth: what each row holds ------------------------------------------ */

enum {
  K_INT8,
  K_INT16,
  K_INT32,
  K_INT64,
  K_UINT8,
  K_UINT16,
  K_UINT32,
  K_UINT64,
  K_FLOAT32,
  K_FLOAT64,
  K_DECIMAL,
  K_DATE32,
  K_DATE64,
  K_TIMESTAMP,
  K_UTF8,
  K_LARGE_UTF8,
  K_VIEW,
  K_DICT,
  K_COUNT
};
static const char *const kind_names[K_COUNT] = {
    "int8",    "int16",   "int32",  "int64",  "uint8",     "uint16", "uint32",     "uint64",      "float32",
    "float64", "decimal", "date32", "date64", "timestamp", "utf8",   "large_utf8", "string_view", "dictionary"};
static const char *const kind_formats[K_COUNT] = {"c", "s",  "i",   "l",   "C",       "S", "I", "L",  "f",
                                                  "g", NULL, "tdD", "tdm", "tsu:UTC", "u", "U", "vu", NULL};
static const uint32_t kind_sizes[K_COUNT] = {1, 2, 4, 8, 1, 2, 4, 8, 4, 8, 16, 4, 8, 8, 0, 0, 0, 0};

static int is_string_kind(int k) { return k >= K_UTF8; }
static int is_unsigned_kind(int k) { return k >= K_UINT8 && k <= K_UINT64; }
static int is_float_kind(int k) { return k == K_FLOAT32 || k == K_FLOAT64; }

typedef struct truth {
  int kind;
  uint64_t n;     /* logical rows (after the slice) */
  uint8_t *valid; /* n flags */
  int64_t *i;     /* signed kinds, dates, timestamps, decimal (unscaled) */
  uint64_t *u;    /* unsigned kinds */
  double *f;      /* floats */
  char **s;       /* strings (NUL-free) */
  uint32_t scale; /* decimal */
  char format[32];
} truth;

static void truth_free(truth *t) {
  if (t->s)
    for (uint64_t r = 0; r < t->n; r++) free(t->s[r]);
  free(t->valid), free(t->i), free(t->u), free(t->f), free(t->s);
  memset(t, 0, sizeof *t);
}

static char *rand_string(th_rng *r) {
  static const char alpha[] = "abcxyz";
  size_t len = th_chance(r, 30) ? 13 + th_below(r, 10) : th_below(r, 6); /* views: inline and not */
  char *s = th_malloc(len + 1);
  for (size_t i = 0; i < len; i++) s[i] = alpha[th_below(r, sizeof alpha - 1)];
  s[len] = 0;
  return s;
}

/* A stream's batches share one schema: decimals of one scale, int32 indexes. */
static int forced_scale = -1;

static void set_bit(uint8_t *b, uint64_t i) { b[i / 8] |= (uint8_t)(1u << (i % 8)); }
static int get_bit(const uint8_t *b, uint64_t i) { return (b[i / 8] >> (i % 8)) & 1; }

/* Buffers 1.. of a string array of kind k (utf8, large_utf8 or string_view,
 * the last with two data buffers) holding strs[0..count); returns n_buffers. */
static int string_buffers(int k, char **strs, uint64_t count, void **bufs) {
  size_t bytes = 0;
  for (uint64_t i = 0; i < count; i++) bytes += strlen(strs[i]);
  if (k == K_VIEW) {
    uint8_t *views = th_calloc((size_t)count + 1, 16);
    char *d0 = th_malloc(bytes + 1), *d1 = th_malloc(bytes + 1);
    int64_t *sizes = th_calloc(2, 8);
    for (uint64_t i = 0; i < count; i++) {
      int32_t len = (int32_t)strlen(strs[i]);
      uint8_t *v = views + 16 * i;
      memcpy(v, &len, 4);
      if (len <= 12) {
        memcpy(v + 4, strs[i], (size_t)len);
      } else { /* long strings alternate between the two data buffers */
        int32_t b = (int32_t)(i & 1), o = (int32_t)sizes[b];
        memcpy(v + 4, strs[i], 4);
        memcpy(v + 8, &b, 4), memcpy(v + 12, &o, 4);
        memcpy((b ? d1 : d0) + o, strs[i], (size_t)len);
        sizes[b] += len;
      }
    }
    bufs[1] = views, bufs[2] = d0, bufs[3] = d1, bufs[4] = sizes;
    return 5;
  }
  int large = k == K_LARGE_UTF8;
  uint8_t *offs = th_calloc((size_t)count + 1, large ? 8 : 4);
  char *chars = th_malloc(bytes + 1);
  int64_t pos = 0;
  for (uint64_t i = 0; i <= count; i++) {
    if (large)
      ((int64_t *)offs)[i] = pos;
    else
      ((int32_t *)offs)[i] = (int32_t)pos;
    if (i < count) {
      memcpy(chars + pos, strs[i], strlen(strs[i]));
      pos += (int64_t)strlen(strs[i]);
    }
  }
  bufs[1] = offs, bufs[2] = chars;
  return 3;
}

/* Makes a random column of kind k, n rows after a slice of `off` rows, as an
 * Arrow array + schema, and its truth. */
static void make_column(th_rng *r, int k, uint64_t n, uint64_t off, int nulls, truth *t, struct ArrowSchema *s,
                        struct ArrowArray *a) {
  memset(t, 0, sizeof *t);
  t->kind = k;
  t->n = n;
  uint64_t total = n + off;
  t->valid = th_calloc((size_t)n + 1, 1);
  uint8_t *validity = th_calloc((size_t)total / 8 + 1, 1);
  int64_t null_count = 0;
  for (uint64_t i = 0; i < total; i++) {
    int v = !nulls || !th_chance(r, 20);
    if (v) set_bit(validity, i);
    if (i >= off) {
      t->valid[i - off] = (uint8_t)v;
      null_count += !v;
    }
  }
  void *bufs[8] = {nulls ? validity : NULL};
  if (!nulls) free(validity);
  int nbuf = 2;
  struct ArrowArray *dict_arr = NULL;
  struct ArrowSchema *dict_schema = NULL;
  snprintf(t->format, sizeof t->format, "%s", kind_formats[k] ? kind_formats[k] : "");
  if (!is_string_kind(k)) {
    uint32_t vs = kind_sizes[k];
    uint8_t *data = th_calloc((size_t)total + 1, vs);
    bufs[1] = data;
    t->i = th_calloc((size_t)n + 1, 8);
    t->u = th_calloc((size_t)n + 1, 8);
    t->f = th_calloc((size_t)n + 1, 8);
    uint32_t fscale = (uint32_t)th_below(r, 4);
    t->scale = forced_scale >= 0 ? (uint32_t)forced_scale : (uint32_t)th_below(r, 7);
    if (k == K_DECIMAL) snprintf(t->format, sizeof t->format, "d:18,%u", t->scale);
    int64_t base = (int64_t)th_below(r, 1000) - 500;
    for (uint64_t i = 0; i < total; i++) {
      uint8_t *p = data + i * vs;
      int64_t iv = 0;
      uint64_t uv = 0;
      double fv = 0;
      uint64_t bits = th_u64(r) >> th_below(r, 64);
      switch (k) {
        case K_INT8: {
          int8_t v = (int8_t)bits;
          memcpy(p, &v, 1);
          iv = v;
          break;
        }
        case K_INT16: {
          int16_t v = (int16_t)bits;
          memcpy(p, &v, 2);
          iv = v;
          break;
        }
        case K_INT32:
        case K_DATE32: {
          int32_t v = (int32_t)bits;
          memcpy(p, &v, 4);
          iv = v;
          break;
        }
        case K_INT64:
        case K_DATE64:
        case K_TIMESTAMP: {
          int64_t v = (int64_t)bits;
          memcpy(p, &v, 8);
          iv = v;
          break;
        }
        case K_UINT8: {
          uint8_t v = (uint8_t)bits;
          memcpy(p, &v, 1);
          uv = v;
          break;
        }
        case K_UINT16: {
          uint16_t v = (uint16_t)bits;
          memcpy(p, &v, 2);
          uv = v;
          break;
        }
        case K_UINT32: {
          uint32_t v = (uint32_t)bits;
          memcpy(p, &v, 4);
          uv = v;
          break;
        }
        case K_UINT64:
          memcpy(p, &bits, 8);
          uv = bits;
          break;
        case K_FLOAT32: {
          float v = (float)((double)(base + (int64_t)th_below(r, 2000)) / pow(10, fscale));
          memcpy(p, &v, 4);
          fv = v;
          break;
        }
        case K_FLOAT64: {
          double v = (double)(base * 1000 + (int64_t)th_below(r, 2000000)) / pow(10, fscale);
          memcpy(p, &v, 8);
          fv = v;
          break;
        }
        case K_DECIMAL: {
          iv = (int64_t)th_below(r, 2000000000000ull) - 1000000000000ll;
          uint64_t lo = (uint64_t)iv;
          int64_t hi = iv < 0 ? -1 : 0;
          memcpy(p, &lo, 8), memcpy(p + 8, &hi, 8);
          break;
        }
      }
      if (i >= off) t->i[i - off] = iv, t->u[i - off] = uv, t->f[i - off] = fv;
    }
  } else {
    t->s = th_calloc((size_t)n + 1, sizeof *t->s);
    char **all = th_calloc((size_t)total + 1, sizeof *all);
    for (uint64_t i = 0; i < total; i++) all[i] = rand_string(r);
    if (k == K_DICT) {
      /* A dictionary of d entries (unsorted, sometimes repeated), indexes into it. */
      uint64_t d = 1 + th_below(r, 12);
      char **entries = th_calloc((size_t)d, sizeof *entries);
      for (uint64_t e = 0; e < d; e++)
        entries[e] = e && th_chance(r, 20) ? th_strdup_n(entries[e - 1], strlen(entries[e - 1])) : rand_string(r);
      if (th_chance(r, 30)) { /* sorted, no repeats: the identity remap */
        for (uint64_t e = 0; e < d; e++) free(entries[e]);
        for (uint64_t e = 0; e < d; e++) {
          entries[e] = th_malloc(8);
          snprintf(entries[e], 8, "e%02u", (unsigned)e);
        }
      }
      static const char *const index_formats[] = {"c", "i", "S"};
      const char *ifmt = forced_scale >= 0 ? "i" : TH_PICK(r, index_formats);
      uint32_t isz = ifmt[0] == 'c' ? 1 : ifmt[0] == 'i' ? 4 : 2;
      uint8_t *idx = th_calloc((size_t)total + 1, isz);
      for (uint64_t i = 0; i < total; i++) {
        uint64_t e = th_below(r, d);
        /* null slots may hold any index, even one out of range */
        uint64_t stored = (nulls && !get_bit(validity, i)) ? 0x7f : e;
        memcpy(idx + i * isz, &stored, isz); /* little-endian */
        free(all[i]);
        all[i] = th_strdup_n(entries[e], strlen(entries[e]));
      }
      /* The dictionary in any of the three string layouts. */
      static const int value_kinds[] = {K_UTF8, K_LARGE_UTF8, K_VIEW};
      int vk = forced_scale >= 0 ? K_UTF8 : TH_PICK(r, value_kinds);
      void *dbufs[8] = {NULL};
      int dnbuf = string_buffers(vk, entries, d, dbufs);
      for (uint64_t e = 0; e < d; e++) free(entries[e]);
      free(entries);
      dict_arr = th_malloc(sizeof *dict_arr);
      tp_array(dict_arr, (int64_t)d, 0, 0, dnbuf, dbufs, NULL);
      dict_schema = th_malloc(sizeof *dict_schema);
      ts_schema(dict_schema, kind_formats[vk], "", NULL);
      bufs[1] = idx;
      snprintf(t->format, sizeof t->format, "%s", ifmt);
    } else {
      nbuf = string_buffers(k, all, total, bufs);
    }
    for (uint64_t i = 0; i < total; i++) {
      if (i >= off)
        t->s[i - off] = all[i];
      else
        free(all[i]);
    }
    free(all);
  }
  tp_array(a, (int64_t)n, (int64_t)off, nulls && th_chance(r, 50) ? -1 : null_count, nbuf, bufs, dict_arr);
  ts_schema(s, t->format, kind_names[k], dict_schema);
}

/* Row r of the truth compared with row `row` of an exported array of the same
 * kind (values only; validity checked by the caller). */
static int same_value(const truth *t, uint64_t r, const struct ArrowSchema *s, const struct ArrowArray *a,
                      uint64_t row) {
  uint64_t at = (uint64_t)a->offset + row;
  if (is_string_kind(t->kind)) {
    const char *want = t->s[r];
    const uint8_t *p;
    int64_t len;
    if (s->dictionary) {
      int32_t k;
      memcpy(&k, (const uint8_t *)a->buffers[1] + 4 * at, 4);
      const int32_t *o = a->dictionary->buffers[1];
      p = (const uint8_t *)a->dictionary->buffers[2] + o[k];
      len = o[k + 1] - o[k];
    } else if (!strcmp(s->format, "U")) {
      const int64_t *o = a->buffers[1];
      p = (const uint8_t *)a->buffers[2] + o[at];
      len = o[at + 1] - o[at];
    } else {
      const int32_t *o = a->buffers[1];
      p = (const uint8_t *)a->buffers[2] + o[at];
      len = o[at + 1] - o[at];
    }
    return (size_t)len == strlen(want) && memcmp(p, want, (size_t)len) == 0;
  }
  const uint8_t *p = (const uint8_t *)a->buffers[1] + kind_sizes[t->kind] * at;
  switch (t->kind) {
    case K_INT8: {
      int8_t v;
      memcpy(&v, p, 1);
      return v == t->i[r];
    }
    case K_INT16: {
      int16_t v;
      memcpy(&v, p, 2);
      return v == t->i[r];
    }
    case K_INT32:
    case K_DATE32: {
      int32_t v;
      memcpy(&v, p, 4);
      return v == t->i[r];
    }
    case K_UINT8:
      return *p == t->u[r];
    case K_UINT16: {
      uint16_t v;
      memcpy(&v, p, 2);
      return v == t->u[r];
    }
    case K_UINT32: {
      uint32_t v;
      memcpy(&v, p, 4);
      return v == t->u[r];
    }
    case K_UINT64: {
      uint64_t v;
      memcpy(&v, p, 8);
      return v == t->u[r];
    }
    case K_FLOAT32: {
      float v;
      memcpy(&v, p, 4);
      return v == (float)t->f[r];
    }
    case K_FLOAT64: {
      double v;
      memcpy(&v, p, 8);
      return v == t->f[r];
    }
    case K_DECIMAL: {
      uint64_t lo;
      int64_t hi;
      memcpy(&lo, p, 8), memcpy(&hi, p + 8, 8);
      return (int64_t)lo == t->i[r] && hi == (t->i[r] < 0 ? -1 : 0);
    }
    default: {
      int64_t v;
      memcpy(&v, p, 8);
      return v == t->i[r];
    }
  }
}

static int exported_valid(const struct ArrowArray *a, uint64_t row) {
  const uint8_t *v = a->buffers[0];
  return !v || get_bit(v, (uint64_t)a->offset + row);
}

/* 1 when truth row r is selected by "col >= pivot row" (numbers) or
 * "col < pivot" (strings). */
static int selected(const truth *t, uint64_t r, uint64_t pivot) {
  if (!t->valid[r]) return 0;
  if (is_string_kind(t->kind)) return strcmp(t->s[r], t->s[pivot]) < 0;
  if (is_unsigned_kind(t->kind)) return t->u[r] >= t->u[pivot];
  if (is_float_kind(t->kind)) return t->f[r] >= t->f[pivot];
  return t->i[r] >= t->i[pivot];
}

/* The packed form read back (ps_arrow_table_packed) makes a table
 * (ps_arrow_table_create) that holds the same values and fields. */
static void packed_round_trip(ps_context *ctx, const ps_arrow_table *tab, uint64_t n) {
  ps_for_desc d;
  ps_dict_desc dd;
  ps_column *col = ps_arrow_table_column(tab, 0);
  ps_arrow_table *again = NULL;
  if (!CHECK_OK(ctx, ps_arrow_table_packed(ctx, tab, 0, &d, &dd))) return;
  CHECK(d.n == n);
  ps_arrow_field f = *ps_arrow_table_field(tab, 0);
  d.zones = NULL; /* every call reads the codes and validity (none decided by zone maps) */
  /* host: the columns over d's buffers in place (ps_arrow_table_create_host) */
  for (int host = 0; host < 2; host++) {
    again = NULL;
    ps_status made = host ? ps_arrow_table_create_host(ctx, 1, &f, &d, &dd, &again)
                          : ps_arrow_table_create(ctx, 1, &f, &d, &dd, &again);
    if (!CHECK_OK(ctx, made)) continue;
    const ps_arrow_field *g = ps_arrow_table_field(again, 0);
    CHECK(!strcmp(g->name, f.name) && !strcmp(g->format, f.format) && g->kind == f.kind && g->scale == f.scale);
    CHECK(ps_arrow_table_rows(again) == n);
    uint64_t *ids = th_calloc((size_t)n + 1, 8);
    for (uint64_t i = 0; i < n; i++) ids[i] = i;
    size_t vs = ps_column_type(col) == PS_TYPE_STRING ? 4 : ps_type_size(ps_column_type(col));
    uint8_t *v1 = th_calloc((size_t)n + 1, vs), *v2 = th_calloc((size_t)n + 1, vs);
    uint8_t *b1 = th_calloc((size_t)n / 8 + 1, 1), *b2 = th_calloc((size_t)n / 8 + 1, 1);
    CHECK_OK(ctx, ps_gather_values(ctx, col, ids, PS_INDEX_UINT64, n, v1, b1));
    CHECK_OK(ctx, ps_gather_values(ctx, ps_arrow_table_column(again, 0), ids, PS_INDEX_UINT64, n, v2, b2));
    CHECKF(memcmp(v1, v2, (size_t)n * vs) == 0 && memcmp(b1, b2, (size_t)(n + 7) / 8) == 0,
           "host=%d: gathered values differ", host);
    free(ids), free(v1), free(v2), free(b1), free(b2);
    /* a scan of the rebuilt column (streamed when host-resident) counts as the original's */
    ps_expr *e1 = NULL, *e2 = NULL;
    uint64_t c1 = 0, c2 = 0;
    if (CHECK_OK(ctx, ps_expr_is_null(ctx, col, 1, &e1)) &&
        CHECK_OK(ctx, ps_expr_is_null(ctx, ps_arrow_table_column(again, 0), 1, &e2)) &&
        CHECK_OK(ctx, ps_filter_count(ctx, e1, &c1)) && CHECK_OK(ctx, ps_filter_count(ctx, e2, &c2)))
      CHECKF(c1 == c2, "host=%d: IS NOT NULL counts %llu, the original %llu", host, (unsigned long long)c2,
             (unsigned long long)c1);
    /* host-resident columns read the caller's validity in place: cleared,
     * every row is NULL in the next call; a copied column keeps its own */
    if (d.validity && n && d.zones == NULL && e2) {
      uint8_t *v = (uint8_t *)d.validity, *keep = th_malloc((size_t)d.validity_size);
      memcpy(keep, v, (size_t)d.validity_size);
      memset(v, 0, (size_t)d.validity_size);
      if (CHECK_OK(ctx, ps_filter_count(ctx, e2, &c2)))
        CHECKF(c2 == (host ? 0 : c1), "host=%d: after clearing the validity, %llu rows are not NULL", host,
               (unsigned long long)c2);
      memcpy(v, keep, (size_t)d.validity_size);
      free(keep);
    }
    ps_expr_destroy(e1);
    ps_expr_destroy(e2);
    ps_arrow_table_destroy(again);
  }
  /* A field that does not agree with its column is refused. */
  f.kind = f.type == PS_TYPE_STRING ? PS_ARROW_INT8 : PS_ARROW_UTF8;
  again = NULL;
  CHECK_STATUS(ctx, ps_arrow_table_create(ctx, 1, &f, &d, &dd, &again), PS_ERR_INVALID_ARGUMENT);
  CHECK(again == NULL && strstr(ps_context_last_error(ctx), "do not agree"));
  ps_free(ctx, (void *)d.data);
  ps_free(ctx, (void *)d.validity);
}

static void round_trip(ps_context *ctx, th_rng *r, int k, uint64_t n) {
  uint64_t off = th_chance(r, 50) ? th_below(r, 10) : 0;
  int nulls = th_chance(r, 70);
  th_case("round trip %s n=%llu offset=%llu nulls=%d", kind_names[k], (unsigned long long)n, (unsigned long long)off,
          nulls);
  truth t;
  struct ArrowSchema s;
  struct ArrowArray a;
  make_column(r, k, n, off, nulls, &t, &s, &a);
  ps_arrow_table *tab = NULL;
  int before = released_arrays;
  if (!CHECK_OK(ctx, ps_arrow_import(ctx, &s, &a, NULL, &tab))) goto out;
  CHECK(released_arrays == before && a.release != NULL); /* borrowed, not released */
  CHECK(ps_arrow_table_columns(tab) == 1 && ps_arrow_table_rows(tab) == n);
  const ps_arrow_field *f = ps_arrow_table_field(tab, 0);
  CHECK(f && !strcmp(f->name, kind_names[k]));
  if (k == K_DECIMAL) CHECK(f->kind == PS_ARROW_DECIMAL128 && f->scale == t.scale && f->type == PS_TYPE_DECIMAL);
  if (k == K_TIMESTAMP) CHECK(f->unit == PS_TIME_MICROSECOND && !strcmp(f->timezone, "UTC"));
  if (k == K_DATE32) CHECK(f->unit == PS_TIME_DAY && f->type == PS_TYPE_INT32);
  ps_column *col = ps_arrow_table_column(tab, 0);
  packed_round_trip(ctx, tab, n);

  /* The pivot: a valid row if there is one. */
  uint64_t pivot = UINT64_MAX;
  for (uint64_t i = 0; i < n && pivot == UINT64_MAX; i++)
    if (t.valid[(i * 7 + 3) % n]) pivot = (i * 7 + 3) % n;
  ps_expr *e = NULL;
  if (pivot == UINT64_MAX) {
    CHECK_OK(ctx, ps_expr_is_null(ctx, col, 1, &e)); /* nothing selected */
  } else if (is_string_kind(k)) {
    CHECK_OK(ctx, ps_expr_compare(ctx, col, PS_LT, ps_lit_str(t.s[pivot], strlen(t.s[pivot])), &e));
  } else if (is_unsigned_kind(k)) {
    CHECK_OK(ctx, ps_expr_compare(ctx, col, PS_GE, ps_lit_uint(t.u[pivot]), &e));
  } else if (is_float_kind(k)) {
    CHECK_OK(ctx, ps_expr_compare(ctx, col, PS_GE, ps_lit_float(t.f[pivot]), &e));
  } else if (k == K_DECIMAL) {
    CHECK_OK(ctx, ps_expr_compare(ctx, col, PS_GE, ps_lit_decimal(t.i[pivot], t.scale), &e)); /* exact */
  } else {
    CHECK_OK(ctx, ps_expr_compare(ctx, col, PS_GE, ps_lit_int(t.i[pivot]), &e));
  }
  if (!e) goto out;
  uint64_t want_count = 0;
  for (uint64_t i = 0; i < n; i++) want_count += pivot != UINT64_MAX && selected(&t, i, pivot);

  /* Selection as a boolean array. */
  struct ArrowSchema ss;
  struct ArrowArray sa;
  uint64_t count = 0;
  if (CHECK_OK(ctx, ps_arrow_export_selection(ctx, e, &ss, &sa, &count))) {
    CHECK(!strcmp(ss.format, "b") && sa.length == (int64_t)n && sa.n_buffers == 2 && sa.null_count == 0);
    CHECK(count == want_count);
    for (uint64_t i = 0; i < n; i++)
      if (!CHECKF(get_bit(sa.buffers[1], i) == (pivot != UINT64_MAX && selected(&t, i, pivot)), "selection bit %llu",
                  (unsigned long long)i))
        break;
    ss.release(&ss);
    sa.release(&sa);
    CHECK(ss.release == NULL && sa.release == NULL);
  }
  /* Row ids, both widths. */
  for (int w = 0; w < 2; w++) {
    struct ArrowSchema is;
    struct ArrowArray ia;
    ps_index_type it = w ? PS_INDEX_UINT64 : PS_INDEX_UINT32;
    if (!CHECK_OK(ctx, ps_arrow_export_row_ids(ctx, e, it, &is, &ia))) continue;
    CHECK(!strcmp(is.format, w ? "L" : "I") && ia.length == (int64_t)want_count);
    uint64_t j = 0;
    for (uint64_t i = 0; i < n && j <= want_count; i++) {
      if (!(pivot != UINT64_MAX && selected(&t, i, pivot))) continue;
      uint64_t id = w ? ((const uint64_t *)ia.buffers[1])[j] : ((const uint32_t *)ia.buffers[1])[j];
      if (!CHECKF(id == i, "row id %llu is %llu, want %llu", (unsigned long long)j, (unsigned long long)id,
                  (unsigned long long)i))
        break;
      j++;
    }
    is.release(&is);
    ia.release(&ia);
  }
  /* Every row back (expr NULL) and the filtered rows, as record batches;
   * strings also as dictionaries. */
  for (int pass = 0; pass < (is_string_kind(k) ? 4 : 2); pass++) {
    struct ArrowSchema bs;
    struct ArrowArray ba;
    int filtered = pass & 1, as_dict = pass >= 2;
    if (!CHECK_OK(ctx, ps_arrow_export_filter(ctx, tab, filtered ? e : NULL, as_dict, &bs, &ba))) continue;
    CHECK(!strcmp(bs.format, "+s") && bs.n_children == 1 && ba.n_children == 1);
    const struct ArrowSchema *cs = bs.children[0];
    const struct ArrowArray *ca = ba.children[0];
    CHECK(!strcmp(cs->name, kind_names[k]));
    if (!is_string_kind(k))
      CHECK(!strcmp(cs->format, t.format));
    else if (as_dict)
      CHECK(!strcmp(cs->format, "i") && cs->dictionary && !strcmp(cs->dictionary->format, "u"));
    else
      CHECK(!strcmp(cs->format, k == K_LARGE_UTF8 ? "U" : "u"));
    CHECK(ba.length == (int64_t)(filtered ? want_count : n) && ca->length == ba.length);
    uint64_t j = 0;
    int64_t nulls_seen = 0;
    for (uint64_t i = 0; i < n; i++) {
      if (filtered && !(pivot != UINT64_MAX && selected(&t, i, pivot))) continue;
      int v = exported_valid(ca, j);
      nulls_seen += !v;
      if (!CHECKF(v == t.valid[i], "row %llu validity %d, want %d", (unsigned long long)i, v, t.valid[i])) break;
      if (v && !CHECKF(same_value(&t, i, cs, ca, j), "row %llu value differs (pass %d)", (unsigned long long)i, pass))
        break;
      j++;
    }
    CHECK(ca->null_count == nulls_seen);
    bs.release(&bs);
    ba.release(&ba);
  }
  /* Aggregates over the selection. */
  if (!is_string_kind(k)) {
    struct ArrowSchema gs;
    struct ArrowArray ga;
    if (CHECK_OK(ctx, ps_arrow_export_aggregates(ctx, tab, 0, e, &gs, &ga))) {
      int time = k == K_DATE32 || k == K_DATE64 || k == K_TIMESTAMP;
      CHECK(ga.length == 1 && ga.n_children == (time ? 3 : 4));
      int64_t cnt;
      memcpy(&cnt, ga.children[0]->buffers[1], 8);
      CHECK(cnt == (int64_t)want_count);
      const struct ArrowArray *mn = ga.children[time ? 1 : 2], *mx = ga.children[time ? 2 : 3];
      CHECK(mn->null_count == (want_count == 0) && mx->null_count == (want_count == 0));
      uint64_t best_min = UINT64_MAX, best_max = UINT64_MAX;
      __int128 isum = 0;
      double fsum = 0;
      for (uint64_t i = 0; i < n; i++) {
        if (!(pivot != UINT64_MAX && selected(&t, i, pivot))) continue;
        isum += is_unsigned_kind(k) ? (__int128)t.u[i] : (__int128)t.i[i];
        fsum += t.f[i];
        if (best_min == UINT64_MAX) best_min = best_max = i;
        int lt = is_unsigned_kind(k) ? t.u[i] < t.u[best_min]
                 : is_float_kind(k)  ? t.f[i] < t.f[best_min]
                                     : t.i[i] < t.i[best_min];
        int gt = is_unsigned_kind(k) ? t.u[i] > t.u[best_max]
                 : is_float_kind(k)  ? t.f[i] > t.f[best_max]
                                     : t.i[i] > t.i[best_max];
        if (lt) best_min = i;
        if (gt) best_max = i;
      }
      if (want_count) {
        CHECK(same_value(&t, best_min, gs.children[time ? 1 : 2], mn, 0));
        CHECK(same_value(&t, best_max, gs.children[time ? 2 : 3], mx, 0));
        if (!time && !is_float_kind(k)) {
          __int128 got;
          memcpy(&got, ga.children[1]->buffers[1], 16);
          CHECK(got == isum);
          CHECK(!strncmp(gs.children[1]->format, "d:38,", 5));
        } else if (!time) {
          double got;
          memcpy(&got, ga.children[1]->buffers[1], 8);
          /* float32: the sum of the decimals, not of their float roundings */
          double tol = k == K_FLOAT32 ? 1e-6 : 1e-9;
          CHECKF(fabs(got - fsum) <= tol * (fabs(fsum) + 1), "float sum %.17g want %.17g", got, fsum);
        }
      }
      gs.release(&gs);
      ga.release(&ga);
    }
  } else {
    struct ArrowSchema gs;
    struct ArrowArray ga;
    CHECK_STATUS(ctx, ps_arrow_export_aggregates(ctx, tab, 0, e, &gs, &ga), PS_ERR_TYPE_MISMATCH);
  }
  ps_expr_destroy(e);
out:
  ps_arrow_table_destroy(tab);
  s.release(&s);
  a.release(&a);
  truth_free(&t);
}

/* ---- record batches and streams --------------------------------------------- */

/* A struct array (record batch) of `ncols` random columns of the given kinds. */
static void make_batch(th_rng *r, const int *kinds, int ncols, uint64_t n, uint64_t slice, truth *t,
                       struct ArrowSchema *s, struct ArrowArray *a) {
  ts_schema(s, "+s", "", NULL);
  void *bufs[1] = {NULL};
  tp_array(a, (int64_t)(n - slice), (int64_t)slice, 0, 1, bufs, NULL);
  for (int c = 0; c < ncols; c++) {
    struct ArrowSchema cs;
    struct ArrowArray ca;
    make_column(r, kinds[c], n, 0, 1, &t[c], &cs, &ca);
    ts_add_child(s, &cs);
    tp_add_child(a, &ca);
  }
}

typedef struct tstream {
  struct ArrowSchema schema;
  struct ArrowArray batches[4];
  int nb, next, fail_at;
} tstream;

static int tstream_schema(struct ArrowArrayStream *st, struct ArrowSchema *out) {
  tstream *p = st->private_data;
  /* A fresh copy each time: the consumer releases what it gets. */
  ts_schema(out, "+s", "", NULL);
  for (int64_t c = 0; c < p->schema.n_children; c++) {
    struct ArrowSchema cs;
    const struct ArrowSchema *src = p->schema.children[c];
    struct ArrowSchema *dict = NULL;
    if (src->dictionary) {
      dict = th_malloc(sizeof *dict);
      ts_schema(dict, src->dictionary->format, "", NULL);
    }
    ts_schema(&cs, src->format, src->name, dict);
    ts_add_child(out, &cs);
  }
  return 0;
}

static int tstream_next(struct ArrowArrayStream *st, struct ArrowArray *out) {
  tstream *p = st->private_data;
  if (p->next == p->fail_at) return 5; /* EIO */
  if (p->next == p->nb) {
    memset(out, 0, sizeof *out);
    return 0;
  }
  *out = p->batches[p->next++]; /* moved to the consumer */
  return 0;
}

static const char *tstream_error(struct ArrowArrayStream *st) {
  (void)st;
  return "the test stream failed on purpose";
}

static void tstream_release(struct ArrowArrayStream *st) {
  tstream *p = st->private_data;
  for (int b = p->next; b < p->nb; b++) p->batches[b].release(&p->batches[b]);
  p->schema.release(&p->schema);
  st->release = NULL;
}

static void batches_and_streams(ps_context *ctx, th_rng *r) {
  const int kinds[] = {K_INT32, K_DECIMAL, K_DICT, K_UTF8, K_TIMESTAMP, K_VIEW};
  const int ncols = (int)(sizeof kinds / sizeof kinds[0]);
  /* One sliced record batch. */
  {
    th_case("record batch, sliced");
    truth t[6];
    struct ArrowSchema s;
    struct ArrowArray a;
    uint64_t n = 300, slice = 7;
    make_batch(r, kinds, ncols, n, slice, t, &s, &a);
    ps_arrow_table *tab = NULL;
    if (CHECK_OK(ctx, ps_arrow_import(ctx, &s, &a, NULL, &tab))) {
      CHECK(ps_arrow_table_columns(tab) == (size_t)ncols && ps_arrow_table_rows(tab) == n - slice);
      CHECK(ps_arrow_table_find(tab, "decimal") == 1 && ps_arrow_table_find(tab, "nope") == -1);
      struct ArrowSchema bs;
      struct ArrowArray ba;
      if (CHECK_OK(ctx, ps_arrow_export_filter(ctx, tab, NULL, 0, &bs, &ba))) {
        for (int c = 0; c < ncols; c++)
          for (uint64_t i = 0; i < n - slice; i++) {
            int v = exported_valid(ba.children[c], i);
            if (!CHECKF(v == t[c].valid[i + slice] &&
                            (!v || same_value(&t[c], i + slice, bs.children[c], ba.children[c], i)),
                        "column %d row %llu", c, (unsigned long long)i))
              break;
          }
        bs.release(&bs);
        ba.release(&ba);
      }
    }
    ps_arrow_table_destroy(tab);
    s.release(&s);
    a.release(&a);
    for (int c = 0; c < ncols; c++) truth_free(&t[c]);
  }
  /* A stream of three batches (each dictionary different), then one that fails. */
  for (int fail = 0; fail < 2; fail++) {
    th_case("stream of batches, fail=%d", fail);
    tstream p;
    memset(&p, 0, sizeof p);
    p.nb = 3;
    p.fail_at = fail ? 2 : -1;
    truth t[3][6];
    uint64_t sizes[3] = {33, 0, 100};
    forced_scale = 3;
    for (int b = 0; b < 3; b++) {
      struct ArrowSchema bs;
      make_batch(r, kinds, ncols, sizes[b], 0, t[b], b ? &bs : &p.schema, &p.batches[b]);
      if (b) bs.release(&bs);
    }
    forced_scale = -1;
    struct ArrowArrayStream st = {tstream_schema, tstream_next, tstream_error, tstream_release, &p};
    ps_arrow_table *tab = NULL, *sentinel = (ps_arrow_table *)&p;
    if (fail) {
      tab = sentinel;
      CHECK_STATUS(ctx, ps_arrow_import_stream(ctx, &st, NULL, &tab), PS_ERR_INVALID_ARGUMENT);
      CHECK(tab == sentinel && th_contains_ci(ps_context_last_error(ctx), "on purpose"));
      tab = NULL;
    } else if (CHECK_OK(ctx, ps_arrow_import_stream(ctx, &st, NULL, &tab))) {
      CHECK(ps_arrow_table_rows(tab) == 133);
      struct ArrowSchema bs;
      struct ArrowArray ba;
      if (CHECK_OK(ctx, ps_arrow_export_filter(ctx, tab, NULL, 0, &bs, &ba))) {
        for (int c = 0; c < ncols; c++) {
          uint64_t row = 0;
          for (int b = 0; b < 3; b++)
            for (uint64_t i = 0; i < sizes[b]; i++, row++) {
              int v = exported_valid(ba.children[c], row);
              if (!CHECKF(v == t[b][c].valid[i] && (!v || same_value(&t[b][c], i, bs.children[c], ba.children[c], row)),
                          "column %d batch %d row %llu", c, b, (unsigned long long)i))
                break;
            }
        }
        bs.release(&bs);
        ba.release(&ba);
      }
    }
    ps_arrow_table_destroy(tab);
    st.release(&st);
    for (int b = 0; b < 3; b++)
      for (int c = 0; c < ncols; c++) truth_free(&t[b][c]);
  }
}

/* ---- malformed input ---------------------------------------------------------- */

typedef void (*corrupt_fn)(struct ArrowSchema *s, struct ArrowArray *a);

static void c_released(struct ArrowSchema *s, struct ArrowArray *a) { (void)s, a->release = NULL; }
static void c_schema_released(struct ArrowSchema *s, struct ArrowArray *a) { (void)a, s->release = NULL; }
static void c_nbuffers(struct ArrowSchema *s, struct ArrowArray *a) { (void)s, a->n_buffers = 1; }
static void c_children(struct ArrowSchema *s, struct ArrowArray *a) { (void)s, a->n_children = 1; }
static void c_length(struct ArrowSchema *s, struct ArrowArray *a) { (void)s, a->length = -1; }
static void c_offset(struct ArrowSchema *s, struct ArrowArray *a) { (void)s, a->offset = -3; }
static void c_null_count(struct ArrowSchema *s, struct ArrowArray *a) { (void)s, a->null_count = a->length + 1; }
static void c_no_validity(struct ArrowSchema *s, struct ArrowArray *a) {
  (void)s;
  a->null_count = 2;
  ((tp_priv *)a->private_data)->ptrs[0] = NULL;
}
static void c_no_data(struct ArrowSchema *s, struct ArrowArray *a) {
  (void)s, ((tp_priv *)a->private_data)->ptrs[1] = NULL;
}
static void c_offsets_down(struct ArrowSchema *s, struct ArrowArray *a) {
  (void)s;
  ((int32_t *)((tp_priv *)a->private_data)->bufs[1])[5] = -1 + ((int32_t *)((tp_priv *)a->private_data)->bufs[1])[4];
}
static void c_offsets_negative(struct ArrowSchema *s, struct ArrowArray *a) {
  (void)s;
  ((int32_t *)((tp_priv *)a->private_data)->bufs[1])[0] = -4;
}
static void c_view_buffer(struct ArrowSchema *s, struct ArrowArray *a) {
  (void)s;
  uint8_t *v = ((tp_priv *)a->private_data)->bufs[1];
  int32_t len = 20, b = 7;
  memcpy(v, &len, 4), memcpy(v + 8, &b, 4);
}
static void c_view_past(struct ArrowSchema *s, struct ArrowArray *a) {
  (void)s;
  uint8_t *v = ((tp_priv *)a->private_data)->bufs[1];
  int32_t len = 20, b = 0, o = 1 << 20;
  memcpy(v, &len, 4), memcpy(v + 8, &b, 4), memcpy(v + 12, &o, 4);
}
static void c_dict_index(struct ArrowSchema *s, struct ArrowArray *a) {
  (void)s;
  uint8_t big = 100; /* past every test dictionary, whatever the index width */
  memcpy(((tp_priv *)a->private_data)->bufs[1], &big, 1);
}
static void c_dict_missing(struct ArrowSchema *s, struct ArrowArray *a) {
  (void)s;
  a->dictionary->release(a->dictionary);
  free(a->dictionary);
  a->dictionary = NULL;
}
static void c_decimal_big(struct ArrowSchema *s, struct ArrowArray *a) {
  (void)s;
  int64_t hi = 5;
  memcpy((uint8_t *)((tp_priv *)a->private_data)->bufs[1] + 8, &hi, 8);
}
static void c_float_nan(struct ArrowSchema *s, struct ArrowArray *a) {
  (void)s;
  double nan = NAN;
  memcpy(((tp_priv *)a->private_data)->bufs[1], &nan, 8);
}
static void c_format_half(struct ArrowSchema *s, struct ArrowArray *a) {
  (void)a;
  ((ts_priv *)s->private_data)->format[0] = 'e';
}
static void c_format_decimal(struct ArrowSchema *s, struct ArrowArray *a) {
  (void)a;
  ts_priv *p = s->private_data;
  free(p->format);
  p->format = th_strdup_n("d:10", 4);
  s->format = p->format;
}

typedef struct bad_case {
  const char *name;
  int kind;
  corrupt_fn corrupt;
  ps_status want;
  const char *mention; /* the message must name this */
} bad_case;

static const bad_case bad_cases[] = {
    {"released array", K_INT32, c_released, PS_ERR_INVALID_ARGUMENT, "release"},
    {"released schema", K_INT32, c_schema_released, PS_ERR_INVALID_ARGUMENT, "release"},
    {"buffer count", K_INT32, c_nbuffers, PS_ERR_INVALID_ARGUMENT, "n_buffers"},
    {"string buffer count", K_UTF8, c_nbuffers, PS_ERR_INVALID_ARGUMENT, "n_buffers"},
    {"child count", K_INT64, c_children, PS_ERR_INVALID_ARGUMENT, "n_children"},
    {"negative length", K_INT16, c_length, PS_ERR_INVALID_ARGUMENT, "length"},
    {"negative offset", K_UINT8, c_offset, PS_ERR_INVALID_ARGUMENT, "offset"},
    {"null count past length", K_INT32, c_null_count, PS_ERR_INVALID_ARGUMENT, "null_count"},
    {"nulls without validity", K_INT32, c_no_validity, PS_ERR_INVALID_ARGUMENT, "validity"},
    {"no data buffer", K_FLOAT64, c_no_data, PS_ERR_INVALID_ARGUMENT, "buffers[1]"},
    {"decreasing offsets", K_UTF8, c_offsets_down, PS_ERR_INVALID_ARGUMENT, "offsets[5]"},
    {"negative first offset", K_UTF8, c_offsets_negative, PS_ERR_INVALID_ARGUMENT, "offsets[0]"},
    {"view buffer index", K_VIEW, c_view_buffer, PS_ERR_INVALID_ARGUMENT, "buffer 7"},
    {"view past its buffer", K_VIEW, c_view_past, PS_ERR_INVALID_ARGUMENT, "past its size"},
    {"dictionary index", K_DICT, c_dict_index, PS_ERR_INVALID_ARGUMENT, "index of row 0 is 100;"},
    {"dictionary missing", K_DICT, c_dict_missing, PS_ERR_INVALID_ARGUMENT, "dictionary"},
    {"decimal past int64", K_DECIMAL, c_decimal_big, PS_ERR_NOT_REPRESENTABLE, "row 0"},
    {"float NaN", K_FLOAT64, c_float_nan, PS_ERR_INVALID_ARGUMENT, "column 0"},
    {"float16", K_INT16, c_format_half, PS_ERR_UNSUPPORTED, "\"e\""},
    {"malformed decimal format", K_DECIMAL, c_format_decimal, PS_ERR_INVALID_ARGUMENT, "d:10"},
};

static void malformed(ps_context *ctx, th_rng *r) {
  for (size_t c = 0; c < sizeof bad_cases / sizeof bad_cases[0]; c++) {
    const bad_case *bc = &bad_cases[c];
    th_case("malformed: %s", bc->name);
    truth t;
    struct ArrowSchema s;
    struct ArrowArray a;
    /* No nulls (row 0, which the corruptions write, is valid), no slice. */
    make_column(r, bc->kind, 40, 0, 0, &t, &s, &a);
    bc->corrupt(&s, &a);
    struct ArrowArray a_before = a;
    struct ArrowSchema s_before = s;
    void (*arel)(struct ArrowArray *) = tp_release;
    void (*srel)(struct ArrowSchema *) = ts_release;
    int released_before = released_arrays;
    ps_arrow_table *sentinel = (ps_arrow_table *)&t, *out = sentinel;
    CHECK_STATUS(ctx, ps_arrow_import(ctx, &s, &a, NULL, &out), bc->want);
    CHECK(out == sentinel);
    CHECKF(strstr(ps_context_last_error(ctx), bc->mention) != NULL, "message \"%s\" does not name \"%s\"",
           ps_context_last_error(ctx), bc->mention);
    CHECK(memcmp(&a, &a_before, sizeof a) == 0 && memcmp(&s, &s_before, sizeof s) == 0);
    CHECK(released_arrays == released_before);
    a.release = arel, s.release = srel;
    s.release(&s);
    a.release(&a);
    truth_free(&t);
  }
  /* A struct whose child is shorter than the batch. */
  th_case("malformed: short child");
  {
    const int kinds[] = {K_INT32, K_UTF8};
    truth t[2];
    struct ArrowSchema s;
    struct ArrowArray a;
    make_batch(r, kinds, 2, 50, 0, t, &s, &a);
    a.children[1]->length = 10;
    ps_arrow_table *out = NULL;
    CHECK_STATUS(ctx, ps_arrow_import(ctx, &s, &a, NULL, &out), PS_ERR_INVALID_ARGUMENT);
    CHECK(out == NULL && strstr(ps_context_last_error(ctx), "children[1].length is 10"));
    a.children[1]->length = 50;
    a.n_children = 1; /* the schema has 2 */
    CHECK_STATUS(ctx, ps_arrow_import(ctx, &s, &a, NULL, &out), PS_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ps_context_last_error(ctx), "n_children is 1"));
    a.n_children = 2;
    /* The context stays usable: the repaired batch imports. */
    if (CHECK_OK(ctx, ps_arrow_import(ctx, &s, &a, NULL, &out))) CHECK(ps_arrow_table_rows(out) == 50);
    ps_arrow_table_destroy(out);
    s.release(&s);
    a.release(&a);
    truth_free(&t[0]);
    truth_free(&t[1]);
  }
  /* Options and NULLs. */
  th_case("malformed: arguments");
  {
    ps_arrow_import_options o;
    ps_arrow_import_options_init(&o);
    CHECK(o.struct_size == sizeof o && o.float_scale == -1 && o.nan_as_null == 0);
    o.struct_size = 3;
    truth t;
    struct ArrowSchema s;
    struct ArrowArray a;
    make_column(r, K_FLOAT64, 10, 0, 0, &t, &s, &a);
    ps_arrow_table *out = NULL;
    CHECK_STATUS(ctx, ps_arrow_import(ctx, &s, &a, &o, &out), PS_ERR_INVALID_ARGUMENT);
    CHECK(strstr(ps_context_last_error(ctx), "struct_size"));
    ps_arrow_import_options_init(&o);
    o.float_scale = 19;
    CHECK_STATUS(ctx, ps_arrow_import(ctx, &s, &a, &o, &out), PS_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(ctx, ps_arrow_import(ctx, NULL, &a, NULL, &out), PS_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(ctx, ps_arrow_import(ctx, &s, NULL, NULL, &out), PS_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(ctx, ps_arrow_import(ctx, &s, &a, NULL, NULL), PS_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(ctx, ps_arrow_import_stream(ctx, NULL, NULL, &out), PS_ERR_INVALID_ARGUMENT);
    CHECK(out == NULL);
    /* A float with NaN: refused, or a null with nan_as_null. */
    double nan = NAN;
    memcpy(((tp_priv *)a.private_data)->bufs[1], &nan, 8);
    CHECK_STATUS(ctx, ps_arrow_import(ctx, &s, &a, NULL, &out), PS_ERR_INVALID_ARGUMENT);
    ps_arrow_import_options_init(&o);
    o.nan_as_null = 1;
    if (CHECK_OK(ctx, ps_arrow_import(ctx, &s, &a, &o, &out))) {
      ps_expr *e = NULL;
      uint64_t cnt = 0;
      CHECK_OK(ctx, ps_expr_is_null(ctx, ps_arrow_table_column(out, 0), 0, &e));
      CHECK_OK(ctx, ps_filter_count(ctx, e, &cnt));
      CHECK(cnt == 1);
      ps_expr_destroy(e);
    }
    ps_arrow_table_destroy(out);
    s.release(&s);
    a.release(&a);
    truth_free(&t);
  }
}

/* Exports outlive their table and context. */
static void late_release(th_rng *r) {
  th_case("release after the context is gone");
  ps_context *ctx = th_context(0);
  truth t;
  struct ArrowSchema s;
  struct ArrowArray a;
  make_column(r, K_UTF8, 100, 3, 1, &t, &s, &a);
  ps_arrow_table *tab = NULL;
  struct ArrowSchema bs;
  struct ArrowArray ba;
  int ok = CHECK_OK(ctx, ps_arrow_import(ctx, &s, &a, NULL, &tab)) &&
           CHECK_OK(ctx, ps_arrow_export_filter(ctx, tab, NULL, 1, &bs, &ba));
  ps_arrow_table_destroy(tab);
  ps_context_destroy(ctx);
  s.release(&s);
  a.release(&a);
  if (ok) {
    for (uint64_t i = 0; i < 100; i++)
      if (!CHECK(exported_valid(ba.children[0], i) == t.valid[i] &&
                 (!t.valid[i] || same_value(&t, i, bs.children[0], ba.children[0], i))))
        break;
    bs.release(&bs);
    ba.release(&ba);
  }
  truth_free(&t);
}

/* ---- hand-made arrays: edges the random producer never makes ------------------ */

static void *dup_bytes(const void *src, size_t n) {
  void *p = th_malloc(n ? n : 1);
  if (n) memcpy(p, src, n);
  return p;
}

/* Rows of column `col` of `tab` where `op lit` holds, and where it is null. */
static uint64_t count_where(ps_context *ctx, const ps_arrow_table *tab, size_t col, ps_cmp op, ps_literal lit) {
  ps_expr *e = NULL;
  uint64_t n = UINT64_MAX;
  if (CHECK_OK(ctx, ps_expr_compare(ctx, ps_arrow_table_column(tab, col), op, lit, &e)))
    CHECK_OK(ctx, ps_filter_count(ctx, e, &n));
  ps_expr_destroy(e);
  return n;
}
static uint64_t count_null(ps_context *ctx, const ps_arrow_table *tab, size_t col) {
  ps_expr *e = NULL;
  uint64_t n = UINT64_MAX;
  if (CHECK_OK(ctx, ps_expr_is_null(ctx, ps_arrow_table_column(tab, col), 0, &e)))
    CHECK_OK(ctx, ps_filter_count(ctx, e, &n));
  ps_expr_destroy(e);
  return n;
}

/* Imports schema + array expecting `want`; the message must name `mention`.
 * The out-parameter stays untouched on failure. */
static void import_expect(ps_context *ctx, const struct ArrowSchema *s, const struct ArrowArray *a, ps_status want,
                          const char *mention) {
  ps_arrow_table *sentinel = (ps_arrow_table *)&sentinel, *out = sentinel;
  CHECK_STATUS(ctx, ps_arrow_import(ctx, s, a, NULL, &out), want);
  if (want == PS_OK) {
    ps_arrow_table_destroy(out);
    return;
  }
  CHECK(out == sentinel);
  CHECKF(strstr(ps_context_last_error(ctx), mention) != NULL, "message \"%s\" does not name \"%s\"",
         ps_context_last_error(ctx), mention);
}

/* utf8 / large_utf8 arrays whose strings are all empty may have a NULL data
 * buffer (the Arrow specification allows it), also as dictionary values. */
static void empty_strings_no_data(ps_context *ctx) {
  for (int large = 0; large < 2; large++)
    for (int dict = 0; dict < 2; dict++) {
      th_case("hand-made: empty strings, NULL data buffer, large=%d dictionary=%d", large, dict);
      int32_t o32[4] = {0, 0, 0, 0};
      int64_t o64[4] = {0, 0, 0, 0};
      void *sb[3] = {NULL, large ? dup_bytes(o64, sizeof o64) : dup_bytes(o32, sizeof o32), NULL};
      struct ArrowArray strs, a;
      struct ArrowSchema s;
      tp_array(&strs, 3, 0, 0, 3, sb, NULL);
      if (dict) {
        uint8_t idx[5] = {2, 0, 1, 1, 0};
        void *ib[2] = {NULL, dup_bytes(idx, sizeof idx)};
        struct ArrowArray *d = th_malloc(sizeof *d);
        *d = strs;
        tp_array(&a, 5, 0, 0, 2, ib, d);
        struct ArrowSchema *ds = th_malloc(sizeof *ds);
        ts_schema(ds, large ? "U" : "u", "", NULL);
        ts_schema(&s, "C", "e", ds);
      } else {
        a = strs;
        ts_schema(&s, large ? "U" : "u", "e", NULL);
      }
      ps_arrow_table *tab = NULL;
      if (CHECK_OK(ctx, ps_arrow_import(ctx, &s, &a, NULL, &tab))) {
        uint64_t n = (uint64_t)a.length;
        CHECK(ps_arrow_table_rows(tab) == n);
        CHECK(count_where(ctx, tab, 0, PS_EQ, ps_lit_str("", 0)) == n);
        CHECK(count_where(ctx, tab, 0, PS_GT, ps_lit_str("", 0)) == 0);
        struct ArrowSchema bs;
        struct ArrowArray ba;
        if (CHECK_OK(ctx, ps_arrow_export_filter(ctx, tab, NULL, 0, &bs, &ba))) {
          CHECK(ba.children[0]->length == (int64_t)n && ba.children[0]->null_count == 0);
          bs.release(&bs);
          ba.release(&ba);
        }
      }
      ps_arrow_table_destroy(tab);
      s.release(&s);
      a.release(&a);
    }
}

/* A record batch (struct array) whose validity marks rows null: those rows
 * are null in every column, whether null_count says 2 or -1 (unknown), for
 * every column kind (the dictionary through its own path in one batch and
 * through the gathered one in a stream), sliced or not. */
static void make_null_rows_batch(struct ArrowSchema *s, struct ArrowArray *a, int64_t null_count, int64_t offset) {
  /* Rows 0..5 of the children; the struct's rows 1 and 4 are null. */
  int32_t ints[6] = {7, 7, 8, 7, 7, 9};
  int32_t offs[7] = {0, 1, 2, 3, 4, 5, 6};
  uint8_t idx[6] = {0, 0, 1, 0, 0, 1};
  int32_t doffs[3] = {0, 1, 3};
  uint8_t dec[6 * 16];
  memset(dec, 0, sizeof dec);
  for (int i = 0; i < 6; i++) dec[16 * i] = 125;
  uint8_t valid = 0x3f & (uint8_t) ~((1u << 1) | (1u << 4));
  ts_schema(s, "+s", "", NULL);
  void *vb[1] = {dup_bytes(&valid, 1)};
  tp_array(a, 6 - offset, offset, null_count, 1, vb, NULL);
  struct ArrowSchema cs;
  struct ArrowArray ca;
  void *ib[2] = {NULL, dup_bytes(ints, sizeof ints)};
  ts_schema(&cs, "i", "int", NULL);
  tp_array(&ca, 6, 0, 0, 2, ib, NULL);
  ts_add_child(s, &cs), tp_add_child(a, &ca);
  void *ub[3] = {NULL, dup_bytes(offs, sizeof offs), dup_bytes("aabaab", 6)};
  ts_schema(&cs, "u", "str", NULL);
  tp_array(&ca, 6, 0, 0, 3, ub, NULL);
  ts_add_child(s, &cs), tp_add_child(a, &ca);
  void *db[3] = {NULL, dup_bytes(doffs, sizeof doffs), dup_bytes("abb", 3)};
  struct ArrowArray *d = th_malloc(sizeof *d);
  tp_array(d, 2, 0, 0, 3, db, NULL);
  void *xb[2] = {NULL, dup_bytes(idx, sizeof idx)};
  struct ArrowSchema *ds = th_malloc(sizeof *ds);
  ts_schema(ds, "u", "", NULL);
  ts_schema(&cs, "C", "dict", ds);
  tp_array(&ca, 6, 0, 0, 2, xb, d);
  ts_add_child(s, &cs), tp_add_child(a, &ca);
  void *eb[2] = {NULL, dup_bytes(dec, sizeof dec)};
  ts_schema(&cs, "d:5,2", "dec", NULL);
  tp_array(&ca, 6, 0, 0, 2, eb, NULL);
  ts_add_child(s, &cs), tp_add_child(a, &ca);
}

static void check_null_rows(ps_context *ctx, const ps_arrow_table *tab, int64_t offset, int copies) {
  /* Of the struct's rows offset..5: rows 1 and 4 null; 7 at rows 0 and 3. */
  uint64_t nulls = (uint64_t)copies * (offset <= 1 ? 2 : 1), sevens = (uint64_t)copies * (offset == 0 ? 2 : 1);
  CHECK(ps_arrow_table_rows(tab) == (uint64_t)copies * (uint64_t)(6 - offset));
  for (size_t c = 0; c < 4; c++) CHECKF(count_null(ctx, tab, c) == nulls, "column %zu", c);
  CHECK(count_where(ctx, tab, 0, PS_EQ, ps_lit_int(7)) == sevens);
  CHECK(count_where(ctx, tab, 1, PS_EQ, ps_lit_str("a", 1)) == sevens);
  CHECK(count_where(ctx, tab, 2, PS_EQ, ps_lit_str("a", 1)) == sevens);
  CHECK(count_where(ctx, tab, 3, PS_EQ, ps_lit_decimal(125, 2)) == ps_arrow_table_rows(tab) - nulls);
  struct ArrowSchema bs;
  struct ArrowArray ba;
  if (CHECK_OK(ctx, ps_arrow_export_filter(ctx, tab, NULL, 0, &bs, &ba))) {
    for (int c = 0; c < 4; c++)
      for (int64_t r = 0; r < ba.length; r++) {
        int64_t row = r % (6 - offset) + offset;
        CHECKF(exported_valid(ba.children[c], (uint64_t)r) == (row != 1 && row != 4), "column %d row %lld", c,
               (long long)r);
      }
    bs.release(&bs);
    ba.release(&ba);
  }
}

static void struct_null_rows(ps_context *ctx) {
  for (int64_t nc = -1; nc <= 2; nc += 3)
    for (int64_t offset = 0; offset <= 2; offset += 2) {
      th_case("hand-made: struct with null rows, null_count %lld, offset %lld", (long long)nc, (long long)offset);
      struct ArrowSchema s;
      struct ArrowArray a;
      make_null_rows_batch(&s, &a, offset == 2 && nc > 0 ? 1 : nc, offset);
      ps_arrow_table *tab = NULL;
      if (CHECK_OK(ctx, ps_arrow_import(ctx, &s, &a, NULL, &tab))) check_null_rows(ctx, tab, offset, 1);
      ps_arrow_table_destroy(tab);
      s.release(&s);
      a.release(&a);
    }
  th_case("hand-made: struct with null rows, a stream of two batches");
  {
    tstream p;
    memset(&p, 0, sizeof p);
    p.nb = 2;
    p.fail_at = -1;
    struct ArrowSchema bs;
    make_null_rows_batch(&p.schema, &p.batches[0], -1, 0);
    make_null_rows_batch(&bs, &p.batches[1], 2, 0);
    bs.release(&bs);
    struct ArrowArrayStream st = {tstream_schema, tstream_next, tstream_error, tstream_release, &p};
    ps_arrow_table *tab = NULL;
    if (CHECK_OK(ctx, ps_arrow_import_stream(ctx, &st, NULL, &tab))) check_null_rows(ctx, tab, 0, 2);
    ps_arrow_table_destroy(tab);
    st.release(&st);
  }
  th_case("hand-made: struct null_count 2 without a validity buffer");
  {
    struct ArrowSchema s;
    struct ArrowArray a;
    make_null_rows_batch(&s, &a, 2, 0);
    tp_priv *pv = a.private_data;
    const void *keep = pv->ptrs[0];
    pv->ptrs[0] = NULL;
    import_expect(ctx, &s, &a, PS_ERR_INVALID_ARGUMENT, "validity");
    pv->ptrs[0] = keep;
    s.release(&s);
    a.release(&a);
  }
}

/* Offsets and lengths whose sums would overflow, and buffers no address
 * space holds: refused before any of it is read. */
static void offsets_past_range(ps_context *ctx) {
  th_case("hand-made: struct offset INT64_MAX");
  {
    struct ArrowSchema s;
    struct ArrowArray a;
    make_null_rows_batch(&s, &a, 0, 0);
    a.offset = INT64_MAX;
    import_expect(ctx, &s, &a, PS_ERR_INVALID_ARGUMENT, "offset 9223372036854775807 + length 6 overflows");
    a.offset = 2;
    a.length = 4;
    a.children[1]->offset = INT64_MAX - 1; /* + the struct's offset 2 wraps */
    import_expect(ctx, &s, &a, PS_ERR_INVALID_ARGUMENT, "children[1].offset is 9223372036854775806");
    a.children[1]->offset = -1;
    import_expect(ctx, &s, &a, PS_ERR_INVALID_ARGUMENT, "children[1].offset is -1");
    a.children[1]->offset = 0;
    import_expect(ctx, &s, &a, PS_OK, "");
    s.release(&s);
    a.release(&a);
  }
  th_case("hand-made: offsets past 2^63 bytes");
  {
    static const struct {
      const char *format;
      int64_t offset;
      const char *mention;
    } cases[] = {{"l", INT64_C(1) << 60, "of 8-byte slots"},   {"i", INT64_C(1) << 61, "of 4-byte slots"},
                 {"u", INT64_C(1) << 61, "of 4-byte slots"},   {"U", (INT64_C(1) << 60) - 1, "of 8-byte slots"},
                 {"vu", INT64_C(1) << 59, "of 16-byte slots"}, {"d:10,2", INT64_C(1) << 59, "of 16-byte slots"}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
      uint8_t zeros[64];
      memset(zeros, 0, sizeof zeros);
      int64_t sizes[1] = {0};
      int view = !strcmp(cases[c].format, "vu"), str = cases[c].format[0] == 'u' || cases[c].format[0] == 'U';
      void *b[4] = {NULL, dup_bytes(zeros, sizeof zeros), str ? dup_bytes(zeros, 8) : NULL,
                    view ? dup_bytes(sizes, sizeof sizes) : NULL};
      struct ArrowSchema s;
      struct ArrowArray a;
      ts_schema(&s, cases[c].format, "far", NULL);
      tp_array(&a, 1, cases[c].offset, 0, view ? 4 : str ? 3 : 2, b, NULL);
      import_expect(ctx, &s, &a, PS_ERR_INVALID_ARGUMENT, cases[c].mention);
      a.offset = 0;
      import_expect(ctx, &s, &a, PS_OK, "");
      s.release(&s);
      a.release(&a);
    }
  }
}

/* A stream of record batches of one column each, the given lengths and
 * children made by `child`. */
typedef void (*child_fn)(struct ArrowArray *ca, int64_t length);
static ps_status import_hand_stream(ps_context *ctx, const char *format, const char *dict_format,
                                    const int64_t *lengths, int nb, child_fn child) {
  tstream p;
  memset(&p, 0, sizeof p);
  p.nb = nb;
  p.fail_at = -1;
  struct ArrowSchema cs, *ds = NULL;
  ts_schema(&p.schema, "+s", "", NULL);
  if (dict_format) {
    ds = th_malloc(sizeof *ds);
    ts_schema(ds, dict_format, "", NULL);
  }
  ts_schema(&cs, format, "c", ds);
  ts_add_child(&p.schema, &cs);
  for (int b = 0; b < nb; b++) {
    void *vb[1] = {NULL};
    tp_array(&p.batches[b], lengths[b], 0, 0, 1, vb, NULL);
    struct ArrowArray ca;
    child(&ca, lengths[b]);
    tp_add_child(&p.batches[b], &ca);
  }
  struct ArrowArrayStream st = {tstream_schema, tstream_next, tstream_error, tstream_release, &p};
  ps_arrow_table *sentinel = (ps_arrow_table *)&p, *tab = sentinel;
  ps_status status = ps_arrow_import_stream(ctx, &st, NULL, &tab);
  CHECK(status != PS_OK ? tab == sentinel : tab != sentinel);
  if (status == PS_OK) ps_arrow_table_destroy(tab);
  st.release(&st);
  return status;
}

static void int8_child(struct ArrowArray *ca, int64_t length) {
  void *b[2] = {NULL, th_calloc(1, 64)};
  tp_array(ca, length, 0, 0, 2, b, NULL);
}
/* One large_utf8 string of 2^62 bytes (its bytes never read: refused first). */
static void huge_string_child(struct ArrowArray *ca, int64_t length) {
  int64_t offs[2] = {0, INT64_C(1) << 62};
  void *b[3] = {NULL, dup_bytes(offs, sizeof offs), th_calloc(1, 64)};
  tp_array(ca, length, 0, 0, 3, b, NULL);
}
/* Four rows of a dictionary whose one entry is that string. */
static void huge_dict_child(struct ArrowArray *ca, int64_t length) {
  struct ArrowArray *d = th_malloc(sizeof *d);
  huge_string_child(d, 1);
  void *b[2] = {NULL, th_calloc(1, 64)};
  tp_array(ca, length, 0, 0, 2, b, d);
}

static void totals_past_range(ps_context *ctx) {
  th_case("hand-made: stream whose row count wraps");
  const int64_t wrap[3] = {INT64_MAX, INT64_MAX, 2}; /* 2^64 in all */
  CHECK_STATUS(ctx, import_hand_stream(ctx, "c", NULL, wrap, 3, int8_child), PS_ERR_LIMIT);
  CHECK(strstr(ps_context_last_error(ctx), "batch 1: array.length 9223372036854775807"));
  const int64_t fits[3] = {5, 0, 3};
  CHECK_OK(ctx, import_hand_stream(ctx, "c", NULL, fits, 3, int8_child));
  th_case("hand-made: stream whose string bytes wrap");
  const int64_t ones[4] = {1, 1, 1, 1}; /* 4 * 2^62 = 2^64 bytes */
  CHECK_STATUS(ctx, import_hand_stream(ctx, "U", NULL, ones, 4, huge_string_child), PS_ERR_LIMIT);
  CHECK(strstr(ps_context_last_error(ctx), "more than 2^63 - 1 bytes"));
  th_case("hand-made: dictionary rows whose string bytes wrap");
  const int64_t four[2] = {4, 0};
  CHECK_STATUS(ctx, import_hand_stream(ctx, "C", "U", four, 2, huge_dict_child), PS_ERR_LIMIT);
  CHECK(strstr(ps_context_last_error(ctx), "more than 2^63 - 1 bytes"));
}

/* Decimal formats: precision 1..9 / 18 / 38 / 76 by bit width (Arrow's);
 * packscan holds decimal128 with scale 0..18, any precision Arrow allows,
 * a scale above the precision (valid Arrow) too. */
static void decimal_formats(ps_context *ctx) {
  static const struct {
    const char *format;
    ps_status want;
    const char *mention;
  } cases[] = {{"d:0,0", PS_ERR_INVALID_ARGUMENT, "precision 0; decimal128 takes 1..38"},
               {"d:39,2", PS_ERR_INVALID_ARGUMENT, "precision 39; decimal128 takes 1..38"},
               {"d:50,2", PS_ERR_INVALID_ARGUMENT, "precision 50"},
               {"d:100000,2", PS_ERR_INVALID_ARGUMENT, "precision 100000"},
               {"d:100001,2", PS_ERR_INVALID_ARGUMENT, "malformed"},
               {"d:38,2,128", PS_OK, ""},
               {"d:1,0", PS_OK, ""},
               {"d:5,10", PS_OK, ""},
               {"d:38,19", PS_ERR_UNSUPPORTED, "scale 19"},
               {"d:5,-2", PS_ERR_UNSUPPORTED, "negative scale"},
               {"d:76,2,256", PS_ERR_UNSUPPORTED, "decimal256"},
               {"d:77,2,256", PS_ERR_INVALID_ARGUMENT, "precision 77; decimal256 takes 1..76"},
               {"d:0,0,256", PS_ERR_INVALID_ARGUMENT, "precision 0"},
               {"d:9,2,32", PS_ERR_UNSUPPORTED, "decimal32"},
               {"d:10,2,32", PS_ERR_INVALID_ARGUMENT, "precision 10; decimal32 takes 1..9"},
               {"d:19,2,64", PS_ERR_INVALID_ARGUMENT, "precision 19; decimal64 takes 1..18"},
               {"d:5,2,100", PS_ERR_INVALID_ARGUMENT, "bit width 100"}};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    th_case("hand-made: decimal format %s", cases[c].format);
    uint8_t v[16];
    memset(v, 0, sizeof v);
    v[0] = 7;
    void *b[2] = {NULL, dup_bytes(v, sizeof v)};
    struct ArrowSchema s;
    struct ArrowArray a;
    ts_schema(&s, cases[c].format, "dec", NULL);
    tp_array(&a, 1, 0, 0, 2, b, NULL);
    import_expect(ctx, &s, &a, cases[c].want, cases[c].mention);
    s.release(&s);
    a.release(&a);
  }
}

/* A gather whose count no Arrow array (int64 length) or buffer holds. */
static void export_count_past_range(ps_context *ctx) {
  th_case("hand-made: export of a gather of 2^60 + 1 rows");
  uint8_t v[16] = {3}; /* decimal128: the widest slot exported */
  void *b[2] = {NULL, dup_bytes(v, sizeof v)};
  struct ArrowSchema s, xs;
  struct ArrowArray a, xa;
  ts_schema(&s, "d:10,2", "dec", NULL);
  tp_array(&a, 1, 0, 0, 2, b, NULL);
  ps_arrow_table *tab = NULL;
  uint64_t ids[1] = {0};
  if (CHECK_OK(ctx, ps_arrow_import(ctx, &s, &a, NULL, &tab))) {
    const uint64_t counts[] = {(UINT64_C(1) << 60) + 1, UINT64_MAX};
    for (int c = 0; c < 2; c++) {
      memset(&xs, 0x5a, sizeof xs);
      CHECK_STATUS(ctx, ps_arrow_export_gather(ctx, tab, 0, ids, PS_INDEX_UINT64, counts[c], 0, &xs, &xa),
                   PS_ERR_INVALID_ARGUMENT);
      CHECK(strstr(ps_context_last_error(ctx), "no ids array holds that many") && ((uint8_t *)&xs)[0] == 0x5a);
    }
    if (CHECK_OK(ctx, ps_arrow_export_gather(ctx, tab, 0, ids, PS_INDEX_UINT64, 1, 0, &xs, &xa))) {
      xs.release(&xs);
      xa.release(&xa);
    }
  }
  ps_arrow_table_destroy(tab);
  s.release(&s);
  a.release(&a);
}

/* opts.encoding: a sorted int64 column imported as DELTA (and as the smaller
 * of FOR and DELTA) filters as the FOR import does, and its packed form says
 * DELTA; an unknown encoding is refused. */
static void import_delta(ps_context *ctx, th_rng *r) {
  th_case("import with opts.encoding");
  const uint64_t n = 3000;
  static const int encs[] = {PS_ENCODING_FOR, PS_ENCODING_DELTA, PS_ENCODING_AUTO};
  uint64_t counts[3] = {0, 0, 0};
  int64_t lit = 0;
  for (int e = 0; e < 3; e++) {
    struct ArrowSchema s;
    struct ArrowArray a;
    int64_t *v = th_malloc(n * 8);
    th_rng local = *r;
    int64_t t = 1700000000;
    for (uint64_t i = 0; i < n; i++) v[i] = (t += (int64_t)th_below(&local, 3));
    lit = v[n / 3];
    void *bufs[2] = {NULL, v};
    ts_schema(&s, "l", "t", NULL);
    tp_array(&a, (int64_t)n, 0, 0, 2, bufs, NULL);
    ps_arrow_import_options o;
    ps_arrow_import_options_init(&o);
    o.encoding = encs[e];
    ps_arrow_table *tab = NULL;
    if (CHECK_OK(ctx, ps_arrow_import(ctx, &s, &a, &o, &tab))) {
      ps_for_desc d;
      ps_dict_desc dd;
      if (CHECK_OK(ctx, ps_arrow_table_packed(ctx, tab, 0, &d, &dd))) {
        CHECKF((int)d.encoding == (encs[e] == PS_ENCODING_FOR ? PS_ENCODING_FOR : PS_ENCODING_DELTA),
               "encoding %u for option %d", d.encoding, encs[e]);
        ps_free(ctx, (void *)d.data);
        ps_free(ctx, (void *)d.validity);
      }
      ps_expr *x = NULL;
      if (CHECK_OK(ctx, ps_expr_compare(ctx, ps_arrow_table_column(tab, 0), PS_LT, ps_lit_int(lit), &x)))
        CHECK_OK(ctx, ps_filter_count(ctx, x, &counts[e]));
      ps_expr_destroy(x);
    }
    ps_arrow_table_destroy(tab);
    s.release(&s);
    a.release(&a);
  }
  CHECKF(counts[0] == counts[1] && counts[0] == counts[2], "counts %llu %llu %llu", (unsigned long long)counts[0],
         (unsigned long long)counts[1], (unsigned long long)counts[2]);
  ps_arrow_import_options o;
  ps_arrow_import_options_init(&o);
  o.encoding = 5;
  struct ArrowSchema s;
  struct ArrowArray a;
  ps_arrow_table *tab = NULL;
  void *bufs[2] = {NULL, th_calloc(8, 1)};
  ts_schema(&s, "l", "t", NULL);
  tp_array(&a, 1, 0, 0, 2, bufs, NULL);
  CHECK_STATUS(ctx, ps_arrow_import(ctx, &s, &a, &o, &tab), PS_ERR_INVALID_ARGUMENT);
  CHECK(strstr(ps_context_last_error(ctx), "opts.encoding") != NULL);
  s.release(&s);
  a.release(&a);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "arrow");
  ps_context *ctx = th_context(0);
  ps_context *chunked = th_context(64);
  static const uint64_t sizes[] = {0, 1, 31, 32, 33, 257, 1000};
  for (unsigned rep = 0; rep < th.scale; rep++)
    for (int k = 0; k < K_COUNT; k++)
      for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++)
        round_trip(i % 2 ? chunked : ctx, &th.rng, k, sizes[i]);
  for (int k = 0; k < K_COUNT; k++) round_trip(ctx, &th.rng, k, 5000 + th_below(&th.rng, 100));
  batches_and_streams(ctx, &th.rng);
  malformed(ctx, &th.rng);
  empty_strings_no_data(ctx);
  struct_null_rows(ctx);
  offsets_past_range(ctx);
  totals_past_range(ctx);
  decimal_formats(ctx);
  export_count_past_range(ctx);
  late_release(&th.rng);
  import_delta(ctx, &th.rng);
  ps_context_destroy(chunked);
  ps_context_destroy(ctx);
  return th_finish();
}
