/* Partial query results: a result's exact per-group states exported as an
 * Arrow record batch, and the merge of such batches (from the partitions of a
 * table, in any order and partitioning) into the result one run over the
 * whole table gives. The values of a merged result come from
 * ps_query_result_fill, the code that makes a run's values. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_internal.h"
#include "query.h"

/* Version 2 is version 1 with aggregates of lossless float columns: a
 * partial without them is still written as version 1. */
#define PARTIAL_VERSION "1"
#define PARTIAL_VERSION_FLOAT "2"
#define MD_VERSION "packscan.partial"
#define MD_KEYS "packscan.keys"
#define MD_AGGS "packscan.aggs"
#define MD_UNITS "packscan.units"
#define FLOAT_SCALE UINT32_MAX /* parse_list's "f" */
#define LAYOUT_TEXT 512 /* 16 aggregates of "COUNT_STAR:38," and 2 keys fit easily */
#define MAX_COLS (2 * PS_QMAX_KEYS + 2 * PS_QMAX_AGGS)

/* ---- the layout of a partial ---------------------------------------------------- */

typedef struct playout {
  uint32_t n_keys, n_aggs;
  bool key_string[PS_QMAX_KEYS];
  uint32_t key_scale[PS_QMAX_KEYS];
  bool key_float[PS_QMAX_KEYS]; /* a lossless float column's key: a double */
  ps_agg_kind kinds[PS_QMAX_AGGS];
  uint32_t scales[PS_QMAX_AGGS];
  bool fl[PS_QMAX_AGGS]; /* SUM, AVG, MIN or MAX of a lossless float column */
} playout;

/* SUM or AVG of a lossless float column: a sum in units. */
static bool float_sum(const playout *l, uint32_t a) {
  return l->fl[a] && (l->kinds[a] == PS_AGG_SUM || l->kinds[a] == PS_AGG_AVG);
}

static bool any_float(const playout *l) {
  for (uint32_t a = 0; a < l->n_aggs; a++)
    if (l->fl[a]) return true;
  for (uint32_t k = 0; k < l->n_keys; k++)
    if (l->key_float[k]) return true;
  return false;
}

typedef enum pcol_kind { C_KEY_NUMBER, C_KEY_STRING, C_KEY_INDEX, C_COUNT, C_SUM, C_MIN, C_MAX } pcol_kind;

typedef struct pcol {
  pcol_kind kind;
  uint32_t i; /* the key or aggregate */
  char name[32];
  char format[24];
} pcol;

static const char *const kind_names[] = {"", "COUNT_STAR", "COUNT", "SUM", "MIN", "MAX", "AVG"};

static void col(pcol *c, pcol_kind kind, uint32_t i, const char *name_fmt, const char *format) {
  c->kind = kind;
  c->i = i;
  snprintf(c->name, sizeof c->name, name_fmt, i);
  snprintf(c->format, sizeof c->format, "%s", format);
}

/* The columns of a partial, in order: each key (a number as decimal128(38, its
 * scale); a string as large_utf8 and its dictionary index as uint64), then
 * each aggregate's state. A lossless float column's sum is the exact integer
 * count of its units (decimal256(76, 0); the unit in MD_UNITS), its MIN and
 * MAX doubles (float64). */
static uint32_t layout_cols(const playout *l, pcol *cols) {
  uint32_t n = 0;
  char f[24];
  for (uint32_t k = 0; k < l->n_keys; k++) {
    if (l->key_string[k]) {
      col(&cols[n++], C_KEY_STRING, k, "key%" PRIu32, "U");
      col(&cols[n++], C_KEY_INDEX, k, "key%" PRIu32 "_index", "L");
    } else {
      if (l->key_float[k])
        snprintf(f, sizeof f, "g");
      else
        snprintf(f, sizeof f, "d:38,%" PRIu32, l->key_scale[k]);
      col(&cols[n++], C_KEY_NUMBER, k, "key%" PRIu32, f);
    }
  }
  for (uint32_t a = 0; a < l->n_aggs; a++) {
    switch (l->kinds[a]) {
      case PS_AGG_SUM:
      case PS_AGG_AVG:
        snprintf(f, sizeof f, "d:76,%" PRIu32 ",256", l->fl[a] ? 0 : l->scales[a]);
        col(&cols[n++], C_SUM, a, "agg%" PRIu32 "_sum", f);
        col(&cols[n++], C_COUNT, a, "agg%" PRIu32 "_count", "L");
        break;
      case PS_AGG_MIN:
      case PS_AGG_MAX:
        if (l->fl[a])
          snprintf(f, sizeof f, "g");
        else
          snprintf(f, sizeof f, "d:38,%" PRIu32, l->scales[a]);
        col(&cols[n++], l->kinds[a] == PS_AGG_MIN ? C_MIN : C_MAX, a,
            l->kinds[a] == PS_AGG_MIN ? "agg%" PRIu32 "_min" : "agg%" PRIu32 "_max", f);
        break;
      default:
        col(&cols[n++], C_COUNT, a, "agg%" PRIu32 "_count", "L");
        break;
    }
  }
  return n;
}

/* "number:2,string:0" and "SUM:2,COUNT_STAR:0" ("float:0", "SUM:f": of a lossless float column). */
static void layout_text(const playout *l, char *keys, char *aggs) {
  size_t p = 0;
  keys[0] = aggs[0] = '\0';
  for (uint32_t k = 0; k < l->n_keys; k++)
    p += (size_t)snprintf(keys + p, LAYOUT_TEXT - p, "%s%s:%" PRIu32, k ? "," : "",
                          l->key_string[k]  ? "string"
                          : l->key_float[k] ? "float"
                                            : "number",
                          l->key_scale[k]);
  p = 0;
  for (uint32_t a = 0; a < l->n_aggs; a++) {
    if (l->fl[a])
      p += (size_t)snprintf(aggs + p, LAYOUT_TEXT - p, "%s%s:f", a ? "," : "", kind_names[l->kinds[a]]);
    else
      p += (size_t)snprintf(aggs + p, LAYOUT_TEXT - p, "%s%s:%" PRIu32, a ? "," : "", kind_names[l->kinds[a]],
                            l->scales[a]);
  }
}

/* Reads "NAME:scale[,NAME:scale...]" into names (an index of `names`) and
 * scales (FLOAT_SCALE for "f"). */
static bool parse_list(const char *text, const char *const *names, uint32_t n_names, uint32_t max, uint32_t *count,
                       uint32_t *which, uint32_t *scales) {
  *count = 0;
  if (!*text) return true;
  for (const char *p = text;;) {
    const char *colon = strchr(p, ':');
    if (!colon || *count == max) return false;
    uint32_t w = 0;
    for (; w < n_names; w++)
      if (names[w][0] && strlen(names[w]) == (size_t)(colon - p) && !memcmp(names[w], p, (size_t)(colon - p))) break;
    if (w == n_names) return false;
    uint32_t s = 0;
    const char *q = colon + 1;
    if (*q == 'f') {
      s = FLOAT_SCALE;
      q++;
    } else if (*q < '0' || *q > '9') {
      return false;
    }
    for (; s != FLOAT_SCALE && *q >= '0' && *q <= '9'; q++) {
      s = s * 10 + (uint32_t)(*q - '0');
      if (s > PS_QUERY_MAX_SCALE) return false;
    }
    which[*count] = w;
    scales[(*count)++] = s;
    if (*q == '\0') return true;
    if (*q != ',') return false;
    p = q + 1;
  }
}

static bool layout_parse(const char *keys, const char *aggs, playout *l) {
  static const char *const key_names[] = {"number", "string", "float"};
  uint32_t which[PS_QMAX_AGGS], scales[PS_QMAX_AGGS];
  memset(l, 0, sizeof *l);
  if (!parse_list(keys, key_names, 3, PS_QMAX_KEYS, &l->n_keys, which, scales)) return false;
  for (uint32_t k = 0; k < l->n_keys; k++) {
    l->key_string[k] = which[k] == 1;
    l->key_float[k] = which[k] == 2;
    l->key_scale[k] = scales[k];
    if (((l->key_string[k] || l->key_float[k]) && scales[k]) || scales[k] == FLOAT_SCALE) return false;
  }
  if (!parse_list(aggs, kind_names, 7, PS_QMAX_AGGS, &l->n_aggs, which, scales) || !l->n_aggs) return false;
  for (uint32_t a = 0; a < l->n_aggs; a++) {
    l->kinds[a] = (ps_agg_kind)which[a];
    l->fl[a] = scales[a] == FLOAT_SCALE;
    l->scales[a] = l->fl[a] ? 0 : scales[a];
    if (l->fl[a] && (l->kinds[a] == PS_AGG_COUNT_STAR || l->kinds[a] == PS_AGG_COUNT)) return false;
  }
  return true;
}

/* MD_UNITS: each aggregate's unit exponent ("0,-1074,0"), n of them. */
static void units_text(const int32_t *unit, uint32_t n, char *text) {
  size_t p = 0;
  text[0] = '\0';
  for (uint32_t a = 0; a < n; a++)
    p += (size_t)snprintf(text + p, LAYOUT_TEXT - p, "%s%" PRId32, a ? "," : "", unit[a]);
}

static bool units_parse(const char *text, uint32_t n, int32_t *unit) {
  const char *p = text;
  for (uint32_t a = 0; a < n; a++) {
    char *end = NULL;
    const long v = strtol(p, &end, 10);
    if (end == p || v < -4096 || v > 4096 || *end != (a + 1 < n ? ',' : '\0')) return false;
    unit[a] = (int32_t)v;
    p = end + 1;
  }
  return true;
}

/* The C Data Interface's metadata: int32 count, then per pair int32 length
 * and bytes of the key and of the value (native byte order). */
static size_t md_put(char *buf, size_t p, const char *s) {
  int32_t n = (int32_t)strlen(s);
  memcpy(buf + p, &n, 4);
  memcpy(buf + p + 4, s, (size_t)n);
  return p + 4 + (size_t)n;
}

/* ---- export ------------------------------------------------------------------ */

static ps_i128 key_number(const ps_datum *d) { return (ps_i128)(((ps_u128)(uint64_t)d->hi << 64) | d->lo); }

ps_status ps_query_result_export_partial(ps_context *ctx, const ps_query_result *res, struct ArrowSchema *schema,
                                         struct ArrowArray *array) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!res || !schema || !array)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s is NULL", !res ? "result" : !schema ? "schema" : "array");
  playout l;
  memset(&l, 0, sizeof l);
  l.n_keys = res->n_keys;
  l.n_aggs = res->n_aggs;
  memcpy(l.key_string, res->key_string, sizeof l.key_string);
  memcpy(l.key_scale, res->key_scale, sizeof l.key_scale);
  memcpy(l.key_float, res->key_float, sizeof l.key_float);
  memcpy(l.kinds, res->kinds, sizeof l.kinds);
  memcpy(l.scales, res->scales, sizeof l.scales);
  for (uint32_t a = 0; a < l.n_aggs; a++)
    l.fl[a] = res->float_agg[a] && l.kinds[a] != PS_AGG_COUNT_STAR && l.kinds[a] != PS_AGG_COUNT;
  const bool fl = any_float(&l);
  pcol cols[MAX_COLS];
  uint32_t nc = layout_cols(&l, cols);
  char keys_text[LAYOUT_TEXT], aggs_text[LAYOUT_TEXT], units[LAYOUT_TEXT], md[4 * LAYOUT_TEXT + 64];
  layout_text(&l, keys_text, aggs_text);
  int32_t unit[PS_QMAX_AGGS];
  for (uint32_t a = 0; a < l.n_aggs; a++) unit[a] = l.fl[a] ? res->fsum_unit[a] : 0;
  units_text(unit, l.n_aggs, units);
  size_t mp = 4;
  int32_t pairs = fl ? 4 : 3;
  memcpy(md, &pairs, 4);
  mp = md_put(md, mp, MD_VERSION);
  mp = md_put(md, mp, fl ? PARTIAL_VERSION_FLOAT : PARTIAL_VERSION);
  mp = md_put(md, mp, MD_KEYS);
  mp = md_put(md, mp, keys_text);
  mp = md_put(md, mp, MD_AGGS);
  mp = md_put(md, mp, aggs_text);
  if (fl) {
    mp = md_put(md, mp, MD_UNITS);
    mp = md_put(md, mp, units);
  }

  const uint64_t n = res->n_groups;
  struct ArrowSchema s;
  struct ArrowArray a;
  bool ok = xs_init(&s, "+s", "", nc);
  if (!ok) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "exporting a partial result");
  ok = xs_set_metadata(&s, md, mp);
  s.flags = 0;
  if (!ok || !xa_init(&a, (int64_t)n, 1, nc)) {
    release_both(&s, NULL);
    return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "exporting a partial result");
  }
  for (uint32_t c = 0; ok && c < nc; c++) {
    const pcol *pc = &cols[c];
    struct ArrowSchema *cs = xs_add_child(&s);
    struct ArrowArray *ca = xa_add_child(&a);
    ok = cs && ca && xs_init(cs, pc->format, pc->name, 0);
    if (ok)
      cs->flags = pc->kind == C_KEY_NUMBER || pc->kind == C_KEY_STRING || pc->kind == C_MIN || pc->kind == C_MAX
                      ? ARROW_FLAG_NULLABLE
                      : 0;
    ok = ok && xa_init(ca, (int64_t)n, pc->kind == C_KEY_STRING ? 3 : 2, 0);
    if (!ok) break;
    const bool fmm = ((pc->kind == C_MIN || pc->kind == C_MAX) && l.fl[pc->i]) ||
                     (pc->kind == C_KEY_NUMBER && l.key_float[pc->i]); /* a double */
    uint64_t width = pc->kind == C_SUM ? 32 : pc->kind == C_COUNT || pc->kind == C_KEY_INDEX || fmm ? 8 : 16;
    uint8_t *valid = NULL, *data = NULL;
    if (cs->flags & ARROW_FLAG_NULLABLE) ok = (valid = xa_buffer(ca, 0, n / 8 + 1)) != NULL;
    /* strings: the offsets here, the bytes below */
    ok = ok && (data = xa_buffer(ca, 1, (n + (pc->kind == C_KEY_STRING)) * width)) != NULL;
    uint64_t str_bytes = 0, nulls = 0;
    for (uint64_t g = 0; ok && g < n; g++) {
      const ps_datum *kd = pc->kind <= C_KEY_INDEX ? &res->keys[g * res->n_keys + pc->i] : NULL;
      const ps_qstate *t = pc->kind >= C_COUNT ? &res->state[g * res->n_aggs + pc->i] : NULL;
      bool is_valid = kd ? !kd->is_null : t->count > 0;
      if (valid && is_valid) valid[g / 8] |= (uint8_t)(1u << (g % 8));
      nulls += valid && !is_valid;
      switch (pc->kind) {
        case C_KEY_NUMBER: {
          if (fmm) { /* the key's double, -0.0 kept */
            memcpy(data + g * 8, &kd->as_double, 8);
            break;
          }
          ps_i128 v = key_number(kd);
          memcpy(data + g * 16, &v, 16);
          break;
        }
        case C_KEY_STRING: {
          int64_t o = (int64_t)str_bytes;
          memcpy(data + g * 8, &o, 8);
          str_bytes += kd->is_null ? 0 : kd->str_len;
          if (g + 1 == n) {
            o = (int64_t)str_bytes;
            memcpy(data + n * 8, &o, 8);
          }
          break;
        }
        case C_KEY_INDEX:
          memcpy(data + g * 8, &kd->lo, 8);
          break;
        case C_COUNT:
          memcpy(data + g * 8, &t->count, 8);
          break;
        case C_SUM:
          memcpy(data + g * 32, t->sum, 32);
          break;
        case C_MIN:
        case C_MAX: {
          if (!t->count) break;
          const ps_i128 m = pc->kind == C_MIN ? t->min : t->max;
          if (fmm) { /* a code of the run's column, or a merged result's ordered bits */
            const ps_column *fc = res->agg_fcol[pc->i];
            const double f = fc ? ps_column_code_double(fc, (uint64_t)m) : ps_query_ordered_double((int64_t)m);
            memcpy(data + g * 8, &f, 8);
          } else {
            memcpy(data + g * 16, &m, 16);
          }
          break;
        }
      }
    }
    if (ok && pc->kind == C_KEY_STRING) {
      uint8_t *bytes = xa_buffer(ca, 2, str_bytes);
      ok = bytes != NULL;
      for (uint64_t g = 0, p = 0; ok && g < n; g++) {
        const ps_datum *kd = &res->keys[g * res->n_keys + pc->i];
        if (kd->is_null || !kd->str_len) continue;
        memcpy(bytes + p, kd->str, kd->str_len);
        p += kd->str_len;
      }
    }
    ca->null_count = (int64_t)nulls;
  }
  if (!ok) {
    release_both(&s, &a);
    return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "exporting a partial result of %" PRIu64 " groups", n);
  }
  *schema = s;
  *array = a;
  return PS_OK;
}

/* ---- merge ---------------------------------------------------------------------- */

/* A key of a group being merged: a number's value, or a string (bytes in the
 * merge's arena) and its dictionary index (the smallest seen). */
typedef struct mkey {
  ps_i128 v;
  uint64_t off, len;
  bool is_null;
} mkey;

typedef struct mentry {
  mkey k[PS_QMAX_KEYS];
  const uint8_t *str[PS_QMAX_KEYS]; /* set before sorting: the arena may move as it grows */
  bool fl[PS_QMAX_KEYS];            /* a float key: v holds the double's ordered bits */
  uint32_t n_keys;
  uint64_t state; /* index of the entry's first state */
} mentry;

struct ps_query_merge {
  ps_context *ctx;
  uint64_t partials;
  char keys_text[LAYOUT_TEXT], aggs_text[LAYOUT_TEXT];
  playout l;
  pcol cols[MAX_COLS];
  uint32_t n_cols;
  mentry *e;
  uint64_t n, cap, compacted;
  ps_qstate *st; /* cap * n_aggs */
  uint8_t *arena;
  uint64_t arena_len, arena_cap;
  /* A lossless float column's sums: the unit every state's sum is kept in
   * (ps_query_merge_add chooses it, partial by partial, so that every sum
   * stays exact). */
  int32_t unit[PS_QMAX_AGGS];
};

ps_status ps_query_merge_create(ps_context *ctx, ps_query_merge **out) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!out) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "out is NULL");
  ps_query_merge *m = ps_calloc_ctx(ctx, 1, sizeof *m);
  if (!m) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a merge");
  m->ctx = ctx;
  *out = m;
  return PS_OK;
}

void ps_query_merge_destroy(ps_query_merge *m) {
  if (!m) return;
  ps_host_free(m->ctx, m->e);
  ps_host_free(m->ctx, m->st);
  ps_host_free(m->ctx, m->arena);
  ps_host_free(m->ctx, m);
}

static int cmp_entry(const void *x, const void *y) {
  const mentry *a = x, *b = y;
  for (uint32_t k = 0; k < a->n_keys; k++) {
    const mkey *p = &a->k[k], *q = &b->k[k];
    if (p->is_null != q->is_null) return p->is_null ? 1 : -1; /* NULL after every value */
    if (p->is_null) continue;
    int c;
    if (a->str[k]) {
      c = ps_bytes_cmp(a->str[k], (size_t)p->len, b->str[k], (size_t)q->len);
    } else if (a->fl[k]) { /* by value: -0.0 and +0.0 are one key, as in a run */
      const double fa = ps_query_ordered_double((int64_t)p->v), fb = ps_query_ordered_double((int64_t)q->v);
      c = fa < fb ? -1 : fa > fb;
    } else {
      c = p->v < q->v ? -1 : p->v > q->v;
    }
    if (c) return c;
  }
  return 0;
}

/* 256-bit two's complement shifts by k < 256: y = x << k, y = x >> k (arithmetic). */
static void shl256(const uint64_t *x, uint32_t k, uint64_t *y) {
  const uint32_t w = k / 64, b = k % 64;
  for (uint32_t i = 4; i-- > 0;) {
    uint64_t v = 0;
    if (i >= w) {
      v = x[i - w] << b;
      if (b && i >= w + 1) v |= x[i - w - 1] >> (64 - b);
    }
    y[i] = v;
  }
}

static void sar256(const uint64_t *x, uint32_t k, uint64_t *y) {
  const uint64_t fill = (int64_t)x[3] < 0 ? ~(uint64_t)0 : 0;
  const uint32_t w = k / 64, b = k % 64;
  for (uint32_t i = 0; i < 4; i++) {
    const uint64_t lo = i + w < 4 ? x[i + w] : fill, hi = i + w + 1 < 4 ? x[i + w + 1] : fill;
    y[i] = b ? (lo >> b) | (hi << (64 - b)) : lo;
  }
}

/* Whether a sum x moves k binary places without loss: up (x * 2^k, to a unit
 * 2^k finer) within 256 bits, or down (x / 2^k, to a coarser unit) exactly. */
static bool shift_holds(const uint64_t *x, uint32_t k, bool up) {
  if (k == 0 || !(x[0] | x[1] | x[2] | x[3])) return true;
  if (k >= 256) return false;
  uint64_t y[4], z[4];
  if (up) {
    shl256(x, k, y);
    sar256(y, k, z);
  } else {
    sar256(x, k, y);
    shl256(y, k, z);
  }
  return !memcmp(x, z, sizeof z);
}

/* A sum in units of 2^from, moved to units of 2^to (shift_holds said it
 * can). */
static void shift_sum(uint64_t *x, int32_t from, int32_t to) {
  if (from == to || !(x[0] | x[1] | x[2] | x[3])) return;
  uint64_t y[4];
  if (to < from)
    shl256(x, (uint32_t)(from - to), y);
  else
    sar256(x, (uint32_t)(to - from), y);
  memcpy(x, y, sizeof y);
}

/* 256-bit x += y; false when the signed sum does not fit 256 bits. */
static bool add256(uint64_t *x, const uint64_t *y) {
  bool xneg = (int64_t)x[3] < 0, yneg = (int64_t)y[3] < 0;
  uint64_t carry = 0;
  for (int i = 0; i < 4; i++) {
    uint64_t s = x[i] + y[i];
    uint64_t c = s < x[i];
    s += carry;
    c += s < carry;
    x[i] = s;
    carry = c;
  }
  return xneg != yneg || ((int64_t)x[3] < 0) == xneg;
}

static ps_status state_merge(ps_query_merge *m, ps_qstate *x, const ps_qstate *y, uint32_t a) {
  if (y->count && (!x->count || y->min < x->min)) x->min = y->min;
  if (y->count && (!x->count || y->max > x->max)) x->max = y->max;
  if (x->count > UINT64_MAX - y->count)
    return ps_set_error(m->ctx, PS_ERR_OVERFLOW, "the count of aggregate %" PRIu32 " (%s) exceeds 2^64 - 1", a,
                        ps_agg_name(m->l.kinds[a]));
  x->count += y->count;
  if (!add256(x->sum, y->sum))
    return ps_set_error(m->ctx, PS_ERR_OVERFLOW, "the sum of aggregate %" PRIu32 " (%s) exceeds 256 bits", a,
                        ps_agg_name(m->l.kinds[a]));
  return PS_OK;
}

/* Sorts the entries by key and merges those of one key: one entry per group,
 * with a fresh arena holding only their strings. */
static ps_status compact(ps_query_merge *m) {
  const uint32_t na = m->l.n_aggs;
  /* str[k] is non-NULL exactly for string keys (cmp_entry reads it so). */
  for (uint64_t i = 0; i < m->n; i++)
    for (uint32_t k = 0; k < m->l.n_keys; k++)
      m->e[i].str[k] = m->l.key_string[k] ? m->arena + (m->e[i].k[k].is_null ? 0 : m->e[i].k[k].off) : NULL;
  if (m->n > 1) qsort(m->e, m->n, sizeof *m->e, cmp_entry); /* m->e is NULL before any row */
  uint64_t bytes = 0;
  for (uint64_t i = 0; i < m->n; i++)
    if (i == 0 || cmp_entry(&m->e[i - 1], &m->e[i]))
      for (uint32_t k = 0; k < m->l.n_keys; k++) bytes += m->l.key_string[k] ? m->e[i].k[k].len : 0;
  ps_qstate *st = ps_calloc_ctx(m->ctx, m->cap * na + 1, sizeof *st);
  uint8_t *arena = ps_calloc_ctx(m->ctx, bytes + 1, 1);
  if (!st || !arena) {
    ps_host_free(m->ctx, st);
    ps_host_free(m->ctx, arena);
    return ps_set_error(m->ctx, PS_ERR_OUT_OF_MEMORY, "merging %" PRIu64 " partial groups", m->n);
  }
  uint64_t out = 0, p = 0;
  ps_status s = PS_OK;
  for (uint64_t i = 0; i < m->n && s == PS_OK;) {
    mentry g = m->e[i];
    memcpy(&st[out * na], &m->st[g.state * na], na * sizeof *st);
    uint64_t j = i + 1;
    for (; j < m->n && !cmp_entry(&m->e[i], &m->e[j]) && s == PS_OK; j++) {
      for (uint32_t k = 0; k < m->l.n_keys; k++) /* the smallest index; of equal doubles the lowest (-0.0) */
        if ((m->l.key_string[k] || m->l.key_float[k]) && m->e[j].k[k].v < g.k[k].v) g.k[k].v = m->e[j].k[k].v;
      for (uint32_t a = 0; a < na && s == PS_OK; a++)
        s = state_merge(m, &st[out * na + a], &m->st[m->e[j].state * na + a], a);
    }
    for (uint32_t k = 0; k < m->l.n_keys; k++) {
      if (!m->l.key_string[k]) continue;
      if (g.k[k].len) memcpy(arena + p, m->arena + g.k[k].off, (size_t)g.k[k].len);
      g.k[k].off = p;
      p += g.k[k].len;
    }
    g.state = out;
    m->e[out++] = g;
    i = j;
  }
  if (s != PS_OK) {
    /* the entries were partly rewritten: the merge cannot go on */
    ps_host_free(m->ctx, st);
    ps_host_free(m->ctx, arena);
    m->n = 0;
    m->partials = UINT64_MAX;
    return s;
  }
  ps_host_free(m->ctx, m->st);
  ps_host_free(m->ctx, m->arena);
  m->st = st;
  m->arena = arena;
  m->arena_len = p;
  m->arena_cap = bytes + 1;
  m->n = m->compacted = out;
  return PS_OK;
}

static const char *md_find(const char *md, const char *key, int32_t *len) {
  if (!md) return NULL;
  int32_t n;
  memcpy(&n, md, 4);
  const char *p = md + 4;
  for (int32_t i = 0; i < n && i < 64; i++) {
    int32_t kl, vl;
    memcpy(&kl, p, 4);
    if (kl < 0 || kl > 4096) return NULL;
    const char *k = p + 4;
    memcpy(&vl, k + kl, 4);
    if (vl < 0 || vl >= LAYOUT_TEXT) return NULL;
    const char *v = k + kl + 4;
    if ((size_t)kl == strlen(key) && !memcmp(k, key, (size_t)kl)) {
      *len = vl;
      return v;
    }
    p = v + vl;
  }
  return NULL;
}

static bool reserve(ps_query_merge *m, uint64_t rows, uint64_t bytes) {
  if (m->n + rows > m->cap) {
    uint64_t cap = m->cap * 2 > m->n + rows ? m->cap * 2 : m->n + rows + 16;
    mentry *e = ps_calloc_ctx(m->ctx, cap, sizeof *e);
    ps_qstate *st = ps_calloc_ctx(m->ctx, cap * m->l.n_aggs, sizeof *st);
    if (!e || !st) {
      ps_host_free(m->ctx, e);
      ps_host_free(m->ctx, st);
      return false;
    }
    if (m->n) {
      memcpy(e, m->e, m->n * sizeof *e);
      memcpy(st, m->st, m->n * m->l.n_aggs * sizeof *st);
    }
    ps_host_free(m->ctx, m->e);
    ps_host_free(m->ctx, m->st);
    m->e = e;
    m->st = st;
    m->cap = cap;
  }
  if (m->arena_len + bytes + 1 > m->arena_cap) {
    uint64_t cap = m->arena_cap * 2 > m->arena_len + bytes + 1 ? m->arena_cap * 2 : m->arena_len + bytes + 1;
    uint8_t *a = ps_calloc_ctx(m->ctx, cap, 1);
    if (!a) return false;
    if (m->arena_len) memcpy(a, m->arena, m->arena_len);
    ps_host_free(m->ctx, m->arena);
    m->arena = a;
    m->arena_cap = cap;
  }
  return true;
}

static bool bit(const void *bitmap, uint64_t i) { return !bitmap || (((const uint8_t *)bitmap)[i / 8] >> (i % 8)) & 1; }

#define BAD(...) ps_set_error(m->ctx, PS_ERR_INVALID_ARGUMENT, __VA_ARGS__)

ps_status ps_query_merge_add(ps_query_merge *m, const struct ArrowSchema *schema, const struct ArrowArray *array) {
  if (!m) return PS_ERR_INVALID_ARGUMENT;
  ps_context *ctx = m->ctx;
  ps_clear_error(ctx);
  if (m->partials == UINT64_MAX)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "the merge failed before (an overflow): create a new one");
  const uint64_t pn = m->partials;
  if (!schema || !array) return BAD("partial %" PRIu64 ": %s is NULL", pn, schema ? "array" : "schema");
  if (!schema->release || !array->release)
    return BAD("partial %" PRIu64 ": its %s is released", pn, schema->release ? "array" : "schema");
  if (!schema->format || strcmp(schema->format, "+s"))
    return BAD("partial %" PRIu64 ": format is \"%s\", a partial is a record batch (\"+s\")", pn,
               schema->format ? schema->format : "(null)");
  const char *md_text[3] = {NULL, NULL, NULL};
  const char *md_names[3] = {MD_VERSION, MD_KEYS, MD_AGGS};
  char vals[3][LAYOUT_TEXT];
  for (int i = 0; i < 3; i++) {
    int32_t len = 0;
    const char *v = md_find(schema->metadata, md_names[i], &len);
    if (!v) return BAD("partial %" PRIu64 ": no \"%s\" metadata: not a packscan partial result", pn, md_names[i]);
    memcpy(vals[i], v, (size_t)len);
    vals[i][len] = '\0';
    md_text[i] = vals[i];
  }
  const bool v2 = !strcmp(md_text[0], PARTIAL_VERSION_FLOAT);
  if (strcmp(md_text[0], PARTIAL_VERSION) && !v2)
    return BAD("partial %" PRIu64 ": %s is \"%s\", this library reads versions \"%s\" and \"%s\"", pn, MD_VERSION,
               md_text[0], PARTIAL_VERSION, PARTIAL_VERSION_FLOAT);
  if (pn == 0) {
    if (!layout_parse(md_text[1], md_text[2], &m->l) || any_float(&m->l) != v2)
      return BAD("partial 0: malformed layout: %s \"%s\", %s \"%s\" (version \"%s\")", MD_KEYS, md_text[1], MD_AGGS,
                 md_text[2], md_text[0]);
  } else {
    for (int i = 1; i < 3; i++) {
      const char *first = i == 1 ? m->keys_text : m->aggs_text;
      if (strcmp(md_text[i], first))
        return BAD("partial %" PRIu64 ": %s is \"%s\", the first partial's is \"%s\" (another query)", pn, md_names[i],
                   md_text[i], first);
    }
  }
  /* Lossless float sums: the partial's units and the merge's. The merge's
   * sums move to the finer of the two where every sum still fits 256 bits
   * there, else to the coarser where every sum is a whole number of its
   * units (a partition of zeros sums in the finest unit of all, 2^-1074):
   * exact either way. fine_ok / coarse_ok: whether each choice holds for
   * the states merged so far, then for this partial's rows too. */
  int32_t in_unit[PS_QMAX_AGGS] = {0}, to_unit[PS_QMAX_AGGS] = {0}, fine[PS_QMAX_AGGS] = {0},
          coarse[PS_QMAX_AGGS] = {0};
  bool fine_ok[PS_QMAX_AGGS], coarse_ok[PS_QMAX_AGGS];
  for (uint32_t a = 0; a < PS_QMAX_AGGS; a++) fine_ok[a] = coarse_ok[a] = true;
  if (any_float(&m->l)) {
    int32_t len = 0;
    const char *v = md_find(schema->metadata, MD_UNITS, &len);
    char text[LAYOUT_TEXT];
    if (!v)
      return BAD("partial %" PRIu64 ": no \"%s\" metadata (a partial with float aggregates has it)", pn, MD_UNITS);
    memcpy(text, v, (size_t)len);
    text[len] = '\0';
    if (!units_parse(text, m->l.n_aggs, in_unit))
      return BAD("partial %" PRIu64 ": %s is \"%s\"; expected %" PRIu32 " integers", pn, MD_UNITS, text, m->l.n_aggs);
    for (uint32_t a = 0; a < m->l.n_aggs; a++) {
      if (!float_sum(&m->l, a)) continue;
      const int32_t had = pn == 0 ? in_unit[a] : m->unit[a];
      fine[a] = had < in_unit[a] ? had : in_unit[a];
      coarse[a] = had < in_unit[a] ? in_unit[a] : had;
      for (uint64_t i = 0; i < m->n; i++) {
        const uint64_t *x = m->st[i * m->l.n_aggs + a].sum;
        fine_ok[a] = fine_ok[a] && shift_holds(x, (uint32_t)(had - fine[a]), true);
        coarse_ok[a] = coarse_ok[a] && shift_holds(x, (uint32_t)(coarse[a] - had), false);
      }
    }
  }
  pcol cols[MAX_COLS];
  uint32_t nc = layout_cols(&m->l, cols);
  if (schema->n_children != nc || array->n_children != nc || !schema->children || !array->children)
    return BAD("partial %" PRIu64 ": %" PRId64 " fields (array: %" PRId64 "), the layout has %" PRIu32, pn,
               schema->n_children, array->n_children, nc);
  const int64_t rows = array->length, off = array->offset;
  if (rows < 0 || off < 0 || rows > INT64_MAX - off)
    return BAD("partial %" PRIu64 ": length %" PRId64 ", offset %" PRId64, pn, rows, off);
  if (array->null_count != 0 && array->n_buffers >= 1 && array->buffers && array->buffers[0])
    return BAD("partial %" PRIu64 ": the record batch has null rows (null_count %" PRId64 ")", pn, array->null_count);
  if (m->l.n_keys == 0 && rows != 1)
    return BAD("partial %" PRIu64 ": %" PRId64 " rows; a partial without GROUP BY has one", pn, rows);
  uint64_t str_bytes = 0;
  for (uint32_t c = 0; c < nc; c++) {
    const struct ArrowSchema *cs = schema->children[c];
    const struct ArrowArray *ca = array->children[c];
    const pcol *pc = &cols[c];
    if (!cs || !ca || !cs->release || !ca->release)
      return BAD("partial %" PRIu64 ": field %" PRIu32 " is NULL or released", pn, c);
    if (!cs->name || strcmp(cs->name, pc->name) || !cs->format || strcmp(cs->format, pc->format))
      return BAD("partial %" PRIu64 ": field %" PRIu32 " is \"%s\" of format \"%s\", the layout's is \"%s\" of \"%s\"",
                 pn, c, cs->name ? cs->name : "(null)", cs->format ? cs->format : "(null)", pc->name, pc->format);
    int64_t want_buffers = pc->kind == C_KEY_STRING ? 3 : 2;
    if (ca->n_buffers != want_buffers || !ca->buffers || ca->offset < 0 || ca->length < 0 ||
        ca->offset > INT64_MAX - off - rows || ca->length < off + rows)
      return BAD("partial %" PRIu64 ": field \"%s\": %" PRId64 " buffers, length %" PRId64 ", offset %" PRId64
                 " for %" PRId64 " rows at %" PRId64,
                 pn, pc->name, ca->n_buffers, ca->length, ca->offset, rows, off);
    if (ca->null_count != 0 && !ca->buffers[0])
      return BAD("partial %" PRIu64 ": field \"%s\": null_count %" PRId64 " without a validity bitmap", pn, pc->name,
                 ca->null_count);
    if (rows && !ca->buffers[1]) return BAD("partial %" PRIu64 ": field \"%s\": no data buffer", pn, pc->name);
    bool nullable = pc->kind == C_KEY_NUMBER || pc->kind == C_KEY_STRING || pc->kind == C_MIN || pc->kind == C_MAX;
    const uint64_t base = (uint64_t)(ca->offset + off);
    for (int64_t r = 0; r < rows; r++) {
      uint64_t i = base + (uint64_t)r;
      if (!bit(ca->buffers[0], i)) {
        if (!nullable) return BAD("partial %" PRIu64 ": field \"%s\": row %" PRId64 " is null", pn, pc->name, r);
        continue;
      }
      if (((pc->kind == C_MIN || pc->kind == C_MAX) && m->l.fl[pc->i]) ||
          (pc->kind == C_KEY_NUMBER && m->l.key_float[pc->i])) {
        double f;
        memcpy(&f, (const uint8_t *)ca->buffers[1] + i * 8, 8);
        if (f != f) return BAD("partial %" PRIu64 ": field \"%s\": row %" PRId64 " is NaN", pn, pc->name, r);
      } else if (pc->kind == C_SUM && m->l.fl[pc->i]) {
        uint64_t s[4];
        const uint32_t a = pc->i;
        memcpy(s, (const uint8_t *)ca->buffers[1] + i * 32, 32);
        fine_ok[a] = fine_ok[a] && shift_holds(s, (uint32_t)(in_unit[a] - fine[a]), true);
        coarse_ok[a] = coarse_ok[a] && shift_holds(s, (uint32_t)(coarse[a] - in_unit[a]), false);
      } else if (pc->kind == C_KEY_NUMBER || pc->kind == C_MIN || pc->kind == C_MAX) {
        ps_i128 v;
        memcpy(&v, (const uint8_t *)ca->buffers[1] + i * 16, 16);
        if (!ps_i128_fits38(v))
          return BAD("partial %" PRIu64 ": field \"%s\": row %" PRId64 " does not fit %d digits", pn, pc->name, r,
                     PS_QUERY_MAX_DIGITS);
      } else if (pc->kind == C_KEY_STRING) {
        const int64_t *o = (const int64_t *)ca->buffers[1] + i;
        if (o[0] < 0 || o[1] < o[0] || (o[1] > o[0] && !ca->buffers[2]))
          return BAD("partial %" PRIu64 ": field \"%s\": row %" PRId64 " has offsets %" PRId64 "..%" PRId64, pn,
                     pc->name, r, o[0], o[1]);
        str_bytes += (uint64_t)(o[1] - o[0]);
      }
    }
  }
  for (uint32_t a = 0; a < m->l.n_aggs; a++) {
    to_unit[a] = fine_ok[a] ? fine[a] : coarse[a];
    if (!fine_ok[a] && !coarse_ok[a])
      return ps_set_error(ctx, PS_ERR_NOT_REPRESENTABLE,
                          "partial %" PRIu64 ": aggregate %" PRIu32
                          " (%s of a float column) sums in units of 2^%" PRId32 ", the partials before it in 2^%" PRId32
                          ": neither unit holds every sum exactly within 256 bits",
                          pn, a, ps_agg_name(m->l.kinds[a]), in_unit[a], pn ? m->unit[a] : in_unit[a]);
  }
  if (!reserve(m, (uint64_t)rows, str_bytes))
    return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "merging a partial of %" PRId64 " groups", rows);
  if (pn == 0) {
    layout_text(&m->l, m->keys_text, m->aggs_text);
    m->n_cols = nc;
  }
  for (uint32_t a = 0; a < m->l.n_aggs; a++) { /* every check passed: the states move to the chosen unit */
    if (pn > 0 && to_unit[a] != m->unit[a])
      for (uint64_t i = 0; i < m->n; i++) shift_sum(m->st[i * m->l.n_aggs + a].sum, m->unit[a], to_unit[a]);
    m->unit[a] = to_unit[a];
  }
  const uint32_t na = m->l.n_aggs;
  for (int64_t r = 0; r < rows; r++) {
    mentry *e = &m->e[m->n];
    ps_qstate *st = &m->st[m->n * na];
    memset(e, 0, sizeof *e);
    memset(st, 0, na * sizeof *st);
    e->n_keys = m->l.n_keys;
    e->state = m->n;
    for (uint32_t k = 0; k < m->l.n_keys; k++) e->fl[k] = m->l.key_float[k];
    for (uint32_t c = 0; c < nc; c++) {
      const struct ArrowArray *ca = array->children[c];
      const pcol *pc = &cols[c];
      const uint64_t i = (uint64_t)(ca->offset + off + r);
      const uint8_t *data = ca->buffers[1];
      bool valid = bit(ca->buffers[0], i);
      /* pc->i indexes the keys of a key column, the aggregates of a state
       * column: each pointer only for its own kind. */
      const bool is_key = pc->kind == C_KEY_NUMBER || pc->kind == C_KEY_STRING || pc->kind == C_KEY_INDEX;
      ps_qstate *t = is_key ? NULL : &st[pc->i];
      mkey *k = is_key ? &e->k[pc->i] : NULL;
      switch (pc->kind) {
        case C_KEY_NUMBER:
          k->is_null = !valid;
          if (valid && m->l.key_float[pc->i]) {
            double f;
            memcpy(&f, data + i * 8, 8);
            k->v = (ps_i128)ps_query_ordered_bits(f);
          } else if (valid) {
            memcpy(&k->v, data + i * 16, 16);
          }
          break;
        case C_KEY_STRING:
          k->is_null = !valid;
          if (valid) {
            const int64_t *o = (const int64_t *)data + i;
            k->off = m->arena_len;
            k->len = (uint64_t)(o[1] - o[0]);
            if (k->len) memcpy(m->arena + m->arena_len, (const uint8_t *)ca->buffers[2] + o[0], (size_t)k->len);
            m->arena_len += k->len;
          }
          break;
        case C_KEY_INDEX: {
          uint64_t v;
          memcpy(&v, data + i * 8, 8);
          k->v = (ps_i128)v;
          break;
        }
        case C_COUNT:
          memcpy(&t->count, data + i * 8, 8);
          break;
        case C_SUM:
          memcpy(t->sum, data + i * 32, 32);
          if (m->l.fl[pc->i]) shift_sum(t->sum, in_unit[pc->i], to_unit[pc->i]);
          break;
        case C_MIN:
        case C_MAX:
          if (valid) {
            t->count = 1;
            ps_i128 *mm = pc->kind == C_MIN ? &t->min : &t->max;
            if (m->l.fl[pc->i]) { /* a double, kept as its ordered bits */
              double f;
              memcpy(&f, data + i * 8, 8);
              *mm = (ps_i128)ps_query_ordered_bits(f);
            } else {
              memcpy(mm, data + i * 16, 16);
            }
          }
          break;
      }
    }
    /* a NULL string key's index is not part of the group */
    for (uint32_t k = 0; k < m->l.n_keys; k++)
      if (m->l.key_string[k] && e->k[k].is_null) e->k[k].v = 0;
    m->n++;
  }
  m->partials++;
  /* Keep memory near the number of distinct groups while partials stream in. */
  if (m->n > 2 * m->compacted + 256) return compact(m);
  return PS_OK;
}

static ps_status finish(ps_query_merge *m, bool partial, ps_query_result **out) {
  if (!m) return PS_ERR_INVALID_ARGUMENT;
  ps_context *ctx = m->ctx;
  ps_clear_error(ctx);
  if (!out) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "out is NULL");
  if (m->partials == UINT64_MAX)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "the merge failed before (an overflow): create a new one");
  if (m->partials == 0) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "no partial was added to the merge");
  ps_status st = compact(m);
  if (st != PS_OK) return st;
  const uint32_t na = m->l.n_aggs, nk = m->l.n_keys;
  /* Without GROUP BY there is one row; its partials all merged into one. */
  const uint64_t n = m->n;
  ps_query_result *res = ps_calloc_ctx(ctx, 1, sizeof *res);
  if (res) {
    res->ctx = ctx;
    res->n_groups = n;
    res->n_keys = nk;
    res->n_aggs = na;
    memcpy(res->kinds, m->l.kinds, sizeof res->kinds);
    memcpy(res->scales, m->l.scales, sizeof res->scales);
    memcpy(res->key_string, m->l.key_string, sizeof res->key_string);
    memcpy(res->key_scale, m->l.key_scale, sizeof res->key_scale);
    memcpy(res->key_float, m->l.key_float, sizeof res->key_float);
    for (uint32_t a = 0; a < na; a++) {
      res->float_agg[a] = m->l.fl[a];
      res->fsum_unit[a] = m->unit[a];
    }
    res->keys = ps_calloc_ctx(ctx, n * nk + 1, sizeof(ps_datum));
    res->values = ps_calloc_ctx(ctx, n * na + 1, sizeof(ps_datum));
    res->state = ps_calloc_ctx(ctx, n * na + 1, sizeof(ps_qstate));
    res->strings = ps_calloc_ctx(ctx, m->arena_len + 1, 1);
  }
  if (!res || !res->keys || !res->values || !res->state || !res->strings) {
    ps_query_result_destroy(res);
    return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a merged result of %" PRIu64 " groups", n);
  }
  if (m->arena_len) memcpy(res->strings, m->arena, m->arena_len);
  memcpy(res->state, m->st, n * na * sizeof(ps_qstate));
  for (uint64_t g = 0; g < n; g++) {
    for (uint32_t k = 0; k < nk; k++) {
      const mkey *key = &m->e[g].k[k];
      ps_datum *d = &res->keys[g * nk + k];
      if (key->is_null) {
        d->is_null = 1;
        continue;
      }
      if (m->l.key_float[k]) { /* as a run makes a float key's datum */
        if (!ps_query_double_datum(ps_query_ordered_double((int64_t)key->v), d)) {
          ps_query_result_destroy(res);
          return ps_set_error(ctx, PS_ERR_NOT_REPRESENTABLE,
                              "GROUP BY key %" PRIu32 " (float) is %.17g, which no decimal of %d digits holds", k,
                              ps_query_ordered_double((int64_t)key->v), PS_QUERY_MAX_DIGITS);
        }
        continue;
      }
      *d = ps_query_datum(key->v, m->l.key_scale[k]);
      if (m->l.key_string[k]) {
        d->str = (const char *)res->strings + key->off;
        d->str_len = (size_t)key->len;
      }
    }
  }
  st = ps_query_result_fill(ctx, res, partial);
  if (st != PS_OK) {
    ps_query_result_destroy(res);
    return st;
  }
  *out = res;
  return PS_OK;
}

ps_status ps_query_merge_finish(ps_query_merge *m, ps_query_result **out) { return finish(m, false, out); }

ps_status ps_query_merge_finish_partial(ps_query_merge *m, ps_query_result **out) { return finish(m, true, out); }
