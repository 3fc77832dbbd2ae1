/* Table.sql(): a SELECT statement of `packscan query` run on an imported
 * Arrow table by the command line's own parser, binder and plan
 * (tools/select_parse.c, tools/select_run.c, one ps_query), its result
 * exported as an Arrow record batch instead of text:
 *  - a GROUP BY key, and MIN / MAX of a bare column: the column's own Arrow
 *    type (strings as utf8, dates as date32, decimals as their decimal128);
 *  - COUNT(*) and COUNT(v): int64;
 *  - SUM, AVG and every other aggregate: decimal128(38, scale), exact (the
 *    scale the library gives the value, AVG's at least
 *    PS_QUERY_AVG_MIN_SCALE); float64 where the value reads a float column
 *    (the nearest double of the exact result), as Table.aggregate does;
 *  - items computed from aggregates (SUM(a) / SUM(b), abs, coalesce):
 *    decimal128(38, their scale), float64 where they read a float column.
 * HAVING, ORDER BY, LIMIT and OFFSET pick and order the rows as on the
 * command line (select_result_rows).
 * Table.sql_partial() runs it as ps_query_run_partial and exports the
 * partial too; packscan.merge_partials() renders a merge of partials as the
 * same record batch (ps_py_merged_frame). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "select_run.h"
#include "shim.h"

typedef enum out_type { OT_INT = 0, OT_FLOAT32, OT_FLOAT64, OT_DECIMAL, OT_STRING } out_type;

typedef struct out_col {
  out_type type;
  size_t width; /* OT_INT: bytes */
  char format[64];
  int dict_col; /* MIN / MAX of a string column: the table column whose dictionary names the index */
  int agg;      /* the item's aggregate, or -1: key `key` */
  int key;
} out_col;

/* Buffers and children of one exported array, freed by its release. */
typedef struct arr_priv {
  const void *bufs[3];
  int nbufs;
} arr_priv;

static void array_release(struct ArrowArray *a) {
  arr_priv *p = a->private_data;
  for (int64_t i = 0; i < a->n_children; i++) {
    if (a->children[i]->release) a->children[i]->release(a->children[i]);
    free(a->children[i]);
  }
  free(a->children);
  if (p) {
    for (int i = 0; i < p->nbufs; i++) free((void *)p->bufs[i]);
    free(p);
  }
  a->release = NULL;
}

static int reads_float(const ps_py_shell *sh, const vx_node *v) {
  if (!v) return 0;
  if (v->kind == VX_COLUMN) {
    int k = tbl_find_column(&sh->tbl, v->name, v->len, v->quoted);
    return k >= 0 && (sh->tbl.cols[k].desc.type == PS_TYPE_FLOAT32 || sh->tbl.cols[k].desc.type == PS_TYPE_FLOAT64);
  }
  if (reads_float(sh, v->left) || reads_float(sh, v->right)) return 1;
  for (size_t i = 0; i < v->nwhens; i++)
    if (reads_float(sh, v->whens[i].then)) return 1;
  return 0;
}

/* A column's own values as a result column. */
static void column_type(const ps_arrow_table *table, int k, out_col *o) {
  const ps_arrow_field *f = ps_arrow_table_field(table, (size_t)k);
  snprintf(o->format, sizeof o->format, "%s", f->format);
  switch (f->type) {
    case PS_TYPE_STRING:
      o->type = OT_STRING;
      snprintf(o->format, sizeof o->format, "u");
      break;
    case PS_TYPE_FLOAT32:
      o->type = OT_FLOAT32;
      break;
    case PS_TYPE_FLOAT64:
      o->type = OT_FLOAT64;
      break;
    case PS_TYPE_DECIMAL:
      o->type = OT_DECIMAL;
      break;
    default:
      o->type = OT_INT;
      o->width = ps_type_size(f->type);
      break;
  }
}

static int result_types(const select_plan *p, const ps_py_shell *sh, const ps_arrow_table *table, out_col *oc) {
  for (size_t i = 0; i < p->stmt.nitems; i++) {
    const sel_item *it = &p->stmt.items[i];
    out_col *o = &oc[i];
    memset(o, 0, sizeof *o);
    o->dict_col = -1;
    o->agg = p->item_agg[i];
    o->key = p->item_key[i];
    if (it->agg == SEL_KEY && p->key_fn[p->item_key[i]] > SEL_FN_TRUNC_LAST) { /* extract's fields */
      o->type = OT_INT, o->width = 8;
      snprintf(o->format, sizeof o->format, "l");
    } else if (it->agg == SEL_KEY) {
      column_type(table, p->key_col[p->item_key[i]], o);
    } else if (it->agg == SEL_COUNT_STAR || it->agg == SEL_COUNT) {
      o->type = OT_INT, o->width = 8;
      snprintf(o->format, sizeof o->format, "l");
    } else if ((it->agg == SEL_MIN || it->agg == SEL_MAX) && it->arg->kind == VX_COLUMN) {
      int k = tbl_find_column(&sh->tbl, it->arg->name, it->arg->len, it->arg->quoted);
      if (k < 0) return -1;
      column_type(table, k, o);
      if (o->type == OT_STRING) o->dict_col = k;
    } else if (it->agg == SEL_EXPR && it->expr->kind == VX_AGG && it->expr->distinct) { /* COUNT(DISTINCT x) */
      o->type = OT_INT, o->width = 8;
      snprintf(o->format, sizeof o->format, "l");
    } else if (it->agg == SEL_EXPR) {
      o->type = reads_float(sh, it->expr) ? OT_FLOAT64 : OT_DECIMAL;
      if (o->type == OT_FLOAT64)
        snprintf(o->format, sizeof o->format, "g");
      else
        snprintf(o->format, sizeof o->format, "d:38,%d", it->expr->rscale);
    } else if (reads_float(sh, it->arg)) {
      o->type = OT_FLOAT64;
      snprintf(o->format, sizeof o->format, "g");
    } else {
      uint32_t scale = ps_value_scale(p->values[p->item_agg[i]]);
      if (it->agg == SEL_AVG && scale < PS_QUERY_AVG_MIN_SCALE) scale = PS_QUERY_AVG_MIN_SCALE;
      o->type = OT_DECIMAL;
      snprintf(o->format, sizeof o->format, "d:38,%u", scale);
    }
  }
  return 0;
}

static int append(uint8_t **buf, size_t *len, size_t *cap, const void *src, size_t n) {
  if (*len + n > *cap) {
    size_t c = *cap ? *cap * 2 : 64;
    while (c < *len + n) c *= 2;
    uint8_t *b = realloc(*buf, c);
    if (!b) return -1;
    *buf = b, *cap = c;
  }
  if (n) memcpy(*buf + *len, src, n);
  *len += n;
  return 0;
}

/* The rows of a result to export: rows[0..n) of its groups in this order
 * (a computed item through select_item_datum), or with no plan every group
 * in order. */
typedef struct row_set {
  const select_plan *plan;
  const uint64_t *rows;
  uint64_t n;
} row_set;

/* One result column as an Arrow array (the caller frees it on failure through
 * its release). overflow_null: a value that does not fit (a partition's sum,
 * which the merge may bring back) is null instead of an error. */
static int build_column(const ps_query_result *r, const row_set *rs, size_t item, const out_col *o,
                        const ps_dict_desc *dict, int overflow_null, struct ArrowArray *a, char *err, size_t errsz) {
  uint64_t ng = rs->plan ? rs->n : ps_query_result_groups(r);
  arr_priv *pv = calloc(1, sizeof *pv);
  if (!pv) return set_err(err, errsz, "out of memory");
  memset(a, 0, sizeof *a);
  a->private_data = pv;
  a->release = array_release;
  a->length = (int64_t)ng;
  a->buffers = pv->bufs;
  a->n_buffers = o->type == OT_STRING ? 3 : 2;
  pv->nbufs = (int)a->n_buffers;
  size_t elem = o->type == OT_INT       ? o->width
                : o->type == OT_FLOAT32 ? 4
                : o->type == OT_FLOAT64 ? 8
                : o->type == OT_DECIMAL ? 16
                                        : 4;
  uint8_t *valid = calloc((size_t)(ng + 7) / 8 + 1, 1);
  uint8_t *vals = calloc((size_t)(ng + 1) * elem, 1); /* strings: ng + 1 int32 offsets */
  pv->bufs[0] = valid, pv->bufs[1] = vals;
  if (!valid || !vals) return set_err(err, errsz, "out of memory");
  uint8_t *chars = NULL;
  size_t clen = 0, ccap = 0;
  int64_t nulls = 0;
  for (uint64_t g = 0; g < ng; g++) {
    ps_datum d;
    ps_status st;
    uint64_t grp = rs->plan ? rs->rows[g] : g;
    if (rs->plan && rs->plan->stmt.items[item].agg == SEL_EXPR) {
      if (select_item_datum(rs->plan, r, grp, item, &d, err, errsz)) {
        free(chars);
        return -1;
      }
      st = PS_OK;
    } else {
      st = o->agg < 0 ? ps_query_result_key(r, grp, (uint32_t)o->key, &d)
                      : ps_query_result_value(r, grp, (uint32_t)o->agg, &d);
    }
    if (st == PS_ERR_OVERFLOW && overflow_null) {
      memset(&d, 0, sizeof d);
      d.is_null = 1;
      st = PS_OK;
    }
    if (st != PS_OK) {
      free(chars);
      return set_err(err, errsz, "reading the result: %s", ps_status_name(st));
    }
    if (d.is_null) {
      nulls++;
    } else {
      valid[g / 8] |= (uint8_t)(1u << (g % 8));
      uint8_t *cell = vals + (size_t)g * elem;
      switch (o->type) {
        case OT_INT: /* the value fits the column's type: its low bytes, little-endian */
          memcpy(cell, &d.lo, o->width);
          break;
        case OT_FLOAT32: {
          float f = (float)d.as_double;
          memcpy(cell, &f, 4);
          break;
        }
        case OT_FLOAT64:
          memcpy(cell, &d.as_double, 8);
          break;
        case OT_DECIMAL:
          memcpy(cell, &d.lo, 8);
          memcpy(cell + 8, &d.hi, 8);
          break;
        case OT_STRING: {
          const char *s = d.str;
          size_t n = d.str_len;
          if (o->dict_col >= 0) { /* MIN / MAX of a sorted dictionary: the index's string */
            if (d.hi != 0 || d.lo >= dict->count) {
              free(chars);
              return set_err(err, errsz, "result index %llu outside the dictionary", (unsigned long long)d.lo);
            }
            s = (const char *)dict->bytes + dict->offsets64[d.lo];
            n = (size_t)(dict->offsets64[d.lo + 1] - dict->offsets64[d.lo]);
          }
          if (append(&chars, &clen, &ccap, s, n) != 0 || clen > INT32_MAX) {
            free(chars);
            return set_err(err, errsz, "out of memory (string result column)");
          }
          break;
        }
      }
    }
    if (o->type == OT_STRING) {
      int32_t end = (int32_t)clen;
      memcpy(vals + (size_t)(g + 1) * 4, &end, 4);
    }
  }
  if (o->type == OT_STRING) pv->bufs[2] = chars ? chars : calloc(1, 1);
  if (o->type == OT_STRING && !pv->bufs[2]) return set_err(err, errsz, "out of memory");
  a->null_count = nulls;
  return 0;
}

/* The result's columns oc[0..nc) as a record batch, named titles[i]. The
 * dictionaries of string MIN / MAX items come from table. */
static int export_columns(ps_context *ctx, const ps_arrow_table *table, const ps_query_result *r, const row_set *rs,
                          size_t nc, const out_col *oc, char *const *titles, int overflow_null,
                          struct ArrowSchema *schema, struct ArrowArray *batch, char *err, size_t errsz) {
  memset(schema, 0, sizeof *schema);
  memset(batch, 0, sizeof *batch);
  schema->release = ps_py_schema_release;
  schema->format = ps_py_strdup("+s");
  schema->name = ps_py_strdup("");
  schema->children = calloc(nc ? nc : 1, sizeof *schema->children);
  batch->release = array_release;
  batch->private_data = calloc(1, sizeof(arr_priv));
  batch->children = calloc(nc ? nc : 1, sizeof *batch->children);
  batch->n_buffers = 1;
  batch->length = (int64_t)(rs->plan ? rs->n : ps_query_result_groups(r));
  if (!schema->format || !schema->name || !schema->children || !batch->private_data || !batch->children)
    return set_err(err, errsz, "out of memory");
  batch->buffers = ((arr_priv *)batch->private_data)->bufs; /* no validity: every row is there */
  for (size_t i = 0; i < nc; i++) {
    struct ArrowSchema *cs = calloc(1, sizeof *cs);
    struct ArrowArray *ca = calloc(1, sizeof *ca);
    if (!cs || !ca) {
      free(cs);
      free(ca);
      return set_err(err, errsz, "out of memory");
    }
    cs->release = ps_py_schema_release;
    ca->release = array_release;
    schema->children[i] = cs;
    schema->n_children = (int64_t)i + 1;
    batch->children[i] = ca;
    batch->n_children = (int64_t)i + 1;
    cs->format = ps_py_strdup(oc[i].format);
    cs->name = ps_py_strdup(titles[i]);
    cs->flags = ARROW_FLAG_NULLABLE;
    if (!cs->format || !cs->name) return set_err(err, errsz, "out of memory");
    ps_dict_desc dict;
    ps_for_desc codes;
    memset(&dict, 0, sizeof dict);
    memset(&codes, 0, sizeof codes);
    if (oc[i].dict_col >= 0) {
      /* The dictionary is borrowed from the table; the codes copy is not needed. */
      ps_status st = ps_arrow_table_packed(ctx, table, (size_t)oc[i].dict_col, &codes, &dict);
      ps_free(ctx, (void *)codes.data);
      ps_free(ctx, (void *)codes.validity);
      if (st != PS_OK) return set_err(err, errsz, "%s", ps_context_last_error(ctx));
    }
    if (build_column(r, rs, i, &oc[i], &dict, overflow_null, ca, err, errsz) != 0) return -1;
  }
  return 0;
}

static int export_batch(const select_plan *p, const ps_py_shell *sh, ps_context *ctx, const ps_arrow_table *table,
                        const ps_query_result *r, int overflow_null, struct ArrowSchema *schema,
                        struct ArrowArray *batch, char *err, size_t errsz) {
  size_t nc = p->stmt.nitems;
  out_col oc[SELECT_MAX_ITEMS];
  char *titles[SELECT_MAX_ITEMS] = {0};
  memset(schema, 0, sizeof *schema);
  memset(batch, 0, sizeof *batch);
  if (result_types(p, sh, table, oc) != 0) return set_err(err, errsz, "internal error: a column vanished");
  int rc = 0;
  for (size_t i = 0; i < nc; i++) {
    tbuf title = {0};
    select_item_title(p, i, &title);
    if (tbuf_putc(&title, 0)) {
      tbuf_free(&title);
      title.p = NULL;
    }
    titles[i] = (char *)title.p;
    if (!titles[i]) rc = set_err(err, errsz, "out of memory");
  }
  row_set rs = {p, NULL, 0};
  uint64_t *rows = NULL;
  if (rc == 0) rc = select_result_rows(p, r, &rows, &rs.n, err, errsz);
  rs.rows = rows;
  if (rc == 0) rc = export_columns(ctx, table, r, &rs, nc, oc, titles, overflow_null, schema, batch, err, errsz);
  for (size_t i = 0; i < nc; i++) free(titles[i]);
  free(rows);
  return rc;
}

/* HAVING and ORDER BY compare MIN / MAX of a string column as strings: the
 * shell's column gets the table's (sorted) dictionary, borrowed. */
static int dictionaries_for_post(ps_context *ctx, const ps_arrow_table *table, const select_plan *p, ps_py_shell *sh,
                                 char *err, size_t errsz) {
  for (uint32_t a = 0; a < p->n_aggs; a++) {
    int k = p->agg_dict_col[a];
    if (k < 0 || sh->cols[k].dict.count) continue;
    ps_dict_desc dict;
    ps_for_desc codes;
    memset(&dict, 0, sizeof dict);
    memset(&codes, 0, sizeof codes);
    ps_status st = ps_arrow_table_packed(ctx, table, (size_t)k, &codes, &dict);
    ps_free(ctx, (void *)codes.data);
    ps_free(ctx, (void *)codes.validity);
    if (st != PS_OK) return set_err(err, errsz, "%s", ps_context_last_error(ctx));
    sh->cols[k].dict = dict;
  }
  return 0;
}

/* Runs the SELECT statement src[0..len) on the table. partial: as
 * ps_query_run_partial, its result also exported as a partial (*pschema,
 * *parray) and each item's source written to items ("k0,a1,a2s": key 0,
 * aggregate 1, aggregate 2 of a string column, whose index names a string
 * of this table's dictionary). */
static int select_run(ps_context *ctx, const ps_arrow_table *table, const char *src, size_t len, int partial,
                      struct ArrowSchema *schema, struct ArrowArray *batch, struct ArrowSchema *pschema,
                      struct ArrowArray *parray, char *items, size_t items_size, char *err, size_t err_size) {
  ps_py_shell sh;
  if (ps_py_describe(table, &sh) != 0) return set_err(err, err_size, "out of memory");
  char *msg = NULL;
  size_t msg_len = 0;
  FILE *errf = open_memstream(&msg, &msg_len);
  if (!errf) {
    ps_py_shell_free(&sh);
    return set_err(err, err_size, "out of memory");
  }
  select_plan p;
  int built = select_plan_build_cached(ctx, &sh.tbl, src, len, &p, errf, sh.pcols, sh.pcols) == 0;
  fclose(errf);
  int rc = -1;
  if (!built) {
    while (msg_len && msg[msg_len - 1] == '\n') msg[--msg_len] = 0;
    set_err(err, err_size, "%s", msg ? msg : "out of memory");
  } else if (partial && select_has_post(&p)) {
    set_err(err, err_size,
            "HAVING, ORDER BY, LIMIT, OFFSET and items computed from aggregates (SUM(a) / SUM(b)) apply to a whole "
            "result, not to one partition's: run the aggregates in partitions, then sort, head or divide the "
            "merged Frame");
    select_plan_free(&p);
  } else if (dictionaries_for_post(ctx, table, &p, &sh, err, err_size) != 0) {
    select_plan_free(&p);
  } else {
    ps_query_result *r = NULL;
    int ran;
    if (partial) {
      ps_status st = ps_query_run_partial(ctx, p.query, &r);
      const char *m = ps_context_last_error(ctx);
      ran = st == PS_OK ? 0 : set_err(err, err_size, "%s", m && m[0] ? m : ps_status_name(st));
    } else {
      ran = select_plan_run(&p, &r, err, err_size);
    }
    if (ran == 0) {
      rc = export_batch(&p, &sh, ctx, table, r, partial, schema, batch, err, err_size);
      if (rc == 0 && partial) {
        ps_status st = ps_query_result_export_partial(ctx, r, pschema, parray);
        if (st != PS_OK) rc = set_err(err, err_size, "%s", ps_context_last_error(ctx));
      }
      if (rc == 0 && partial) {
        out_col oc[SELECT_MAX_ITEMS];
        size_t n = 0;
        result_types(&p, &sh, table, oc);
        items[0] = 0;
        for (size_t i = 0; i < p.stmt.nitems && n < items_size; i++)
          n += (size_t)snprintf(items + n, items_size - n, "%s%c%d%s", i ? "," : "", oc[i].agg < 0 ? 'k' : 'a',
                                oc[i].agg < 0 ? oc[i].key : oc[i].agg, oc[i].dict_col >= 0 ? "s" : "");
        if (n >= items_size) {
          rc = set_err(err, err_size, "internal error: the item list does not fit");
          if (pschema->release) pschema->release(pschema);
          if (parray->release) parray->release(parray);
        }
      }
      if (rc != 0) {
        if (schema->release) schema->release(schema);
        if (batch->release) batch->release(batch);
      }
    }
    ps_query_result_destroy(r);
    select_plan_free(&p);
  }
  free(msg);
  ps_py_shell_free(&sh);
  return rc;
}

/* Runs the SELECT statement src[0..len) on the table: 0 with *schema and
 * *batch set (a struct record batch, one row per group), or -1 with the
 * message in err: a statement that does not parse or bind gets the command
 * line's text ("error at column N: ...", the statement and a caret under
 * the position); a failed run the library's message (it starts with the
 * status name). */
PS_PY_API int ps_py_select(ps_context *ctx, const ps_arrow_table *table, const char *src, size_t len,
                           struct ArrowSchema *schema, struct ArrowArray *batch, char *err, size_t err_size) {
  return select_run(ctx, table, src, len, 0, schema, batch, NULL, NULL, NULL, 0, err, err_size);
}

/* Table.sql_partial(): the statement run as ps_query_run_partial. Exports
 * the partial (*pschema, *parray: ps_query_result_export_partial), this
 * partition's own result (*schema, *batch, as ps_py_select, a sum that does
 * not fit here null: what the merged result's columns are named and typed,
 * and the strings of MIN / MAX of string columns) and the items' sources
 * (items, as select_run writes them). Errors as ps_py_select. */
PS_PY_API int ps_py_select_partial(ps_context *ctx, const ps_arrow_table *table, const char *src, size_t len,
                                   struct ArrowSchema *schema, struct ArrowArray *batch, struct ArrowSchema *pschema,
                                   struct ArrowArray *parray, char *items, size_t items_size, char *err,
                                   size_t err_size) {
  return select_run(ctx, table, src, len, 1, schema, batch, pschema, parray, items, items_size, err, err_size);
}

/* The bytes of one value of an Arrow format a merged result's column may
 * have (a key's or MIN / MAX's own type), 0 for another. */
static size_t format_width(const char *f) {
  switch (f[0]) {
    case 'c':
    case 'C':
      return 1;
    case 's':
    case 'S':
      return 2;
    case 'i':
    case 'I':
      return 4;
    case 'l':
    case 'L':
      return 8;
    case 't':
      if (!strcmp(f, "tdD")) return 4;
      if (!strcmp(f, "tdm") || !strncmp(f, "ts", 2)) return 8;
      return 0;
    default:
      return 0;
  }
}

/* A merged result (ps_query_merge_finish) as the record batch Table.sql
 * gives: columns named and typed as layout's children (the partitions' own
 * results' schema), their sources in items (as ps_py_select_partial writes
 * them). MIN / MAX of a string column ("a<n>s") is exported as its int64
 * index (into the sorted strings the caller renumbered the partials by). 0,
 * or -1 with the message in err. */
PS_PY_API int ps_py_merged_frame(ps_context *ctx, const ps_query_result *r, const struct ArrowSchema *layout,
                                 const char *items, struct ArrowSchema *schema, struct ArrowArray *batch, char *err,
                                 size_t err_size) {
  out_col oc[SELECT_MAX_ITEMS];
  char *titles[SELECT_MAX_ITEMS] = {0};
  size_t nc = (size_t)layout->n_children;
  if (layout->n_children < 1 || nc > SELECT_MAX_ITEMS)
    return set_err(err, err_size, "the partials' layout has %lld columns", (long long)layout->n_children);
  const char *p = items;
  for (size_t i = 0; i < nc; i++) {
    out_col *o = &oc[i];
    const struct ArrowSchema *c = layout->children[i];
    memset(o, 0, sizeof *o);
    o->dict_col = -1;
    char which = *p;
    char *end = NULL;
    long idx = (which == 'k' || which == 'a') ? strtol(p + 1, &end, 10) : -1;
    if (idx < 0 || idx >= PS_QUERY_MAX_AGGS || end == p + 1)
      return set_err(err, err_size, "malformed item list \"%s\"", items);
    int string_index = *end == 's';
    p = end + string_index;
    if (*p != (i + 1 < nc ? ',' : '\0')) return set_err(err, err_size, "malformed item list \"%s\"", items);
    p++;
    o->agg = which == 'a' ? (int)idx : -1;
    o->key = which == 'k' ? (int)idx : 0;
    titles[i] = (char *)c->name;
    const char *f = c->format;
    if (string_index) {
      o->type = OT_INT, o->width = 8;
      snprintf(o->format, sizeof o->format, "l");
      continue;
    }
    snprintf(o->format, sizeof o->format, "%s", f);
    if (!strcmp(f, "u"))
      o->type = OT_STRING;
    else if (!strcmp(f, "f"))
      o->type = OT_FLOAT32;
    else if (!strcmp(f, "g"))
      o->type = OT_FLOAT64;
    else if (!strncmp(f, "d:", 2))
      o->type = OT_DECIMAL;
    else if ((o->width = format_width(f)) != 0)
      o->type = OT_INT;
    else
      return set_err(err, err_size, "column '%s' of the partials' layout has format \"%s\"", c->name, f);
  }
  row_set every = {NULL, NULL, 0};
  if (export_columns(ctx, NULL, r, &every, nc, oc, titles, 0, schema, batch, err, err_size) != 0) {
    if (schema->release) schema->release(schema);
    if (batch->release) batch->release(batch);
    return -1;
  }
  return 0;
}
