/* Binds a parsed SELECT to the library's query API and prints its result
 * (see select_run.h). The tool checks names and types itself first, so that
 * messages point at the offending part of the statement; the library
 * validates again. */
#include "select_run.h"

#include <stdlib.h>
#include <string.h>

#include "output.h"
#include "select_post.h"

/* The library's message (it starts with the status name), else the name. */
static const char *lib_text(ps_context *ctx, ps_status st) {
  const char *m = ps_context_last_error(ctx);
  return m && m[0] ? m : ps_status_name(st);
}

static int lib_err(select_plan *p, ps_status st, size_t pos, expr_error *e) {
  return sql_fail(e, NULL, pos, "%s", lib_text(p->ctx, st));
}

static int column_of(select_plan *p, const char *name, size_t len, int quoted, size_t pos, ps_column **col,
                     expr_error *e) {
  int k = expr_find_column(p->tbl, name, len, quoted, e, pos);
  if (k < 0) return -1;
  if (!p->cols[k]) {
    char msg[TOOL_ERR_SIZE];
    if (tbl_column_create(p->ctx, p->tbl, (uint32_t)k, &p->cols[k], msg, sizeof msg) != PS_OK)
      return sql_fail(e, NULL, pos, "%s", msg);
  }
  if (col) *col = p->cols[k];
  return k;
}

static int is_string(const tbl_column *c) { return c->encoding == TBL_ENC_DICT; }

/* How a column's own values print (a key, or a bare column in MIN / MAX):
 * as `query --select` prints them. */
static select_show show_of(const tbl_column *c) {
  if (is_string(c)) return SHOW_STRING;
  switch (c->logical) {
    case TBL_LOGICAL_DATE:
      return SHOW_DATE;
    case TBL_LOGICAL_TIMESTAMP:
      return SHOW_TIMESTAMP;
    case TBL_LOGICAL_TIME:
      return SHOW_TIME;
    case TBL_LOGICAL_BOOLEAN:
      return SHOW_BOOL;
    default:
      return SHOW_NUMBER;
  }
}

/* ---- value expressions ---- */

static int bind_value(select_plan *p, const vx_node *v, ps_value **out, expr_error *e);

static int bind_case(select_plan *p, const vx_node *v, ps_value **out, expr_error *e) {
  /* CASE WHEN c1 THEN v1 WHEN c2 THEN v2 ELSE x END is
   * CASE WHEN c1 THEN v1 ELSE CASE WHEN c2 THEN v2 ELSE x END END. */
  ps_value *acc = NULL;
  if (v->right && bind_value(p, v->right, &acc, e)) return -1;
  for (size_t i = v->nwhens; i-- > 0;) {
    ps_expr *cond = NULL;
    ps_value *then = NULL, *c = NULL;
    bind_env env = {p->ctx, p->tbl, p->cols, p->dec_cols};
    if (expr_bind(&env, v->whens[i].cond, &cond, e) || bind_value(p, v->whens[i].then, &then, e)) {
      ps_expr_destroy(cond);
      ps_value_destroy(acc);
      return -1;
    }
    ps_status st = ps_value_case(p->ctx, cond, then, acc, &c);
    if (st != PS_OK) {
      ps_expr_destroy(cond);
      ps_value_destroy(then);
      ps_value_destroy(acc);
      return lib_err(p, st, v->pos, e);
    }
    acc = c;
  }
  *out = acc;
  return 0;
}

static int bind_value(select_plan *p, const vx_node *v, ps_value **out, expr_error *e) {
  ps_status st;
  *out = NULL;
  switch (v->kind) {
    case VX_COLUMN: {
      ps_column *col;
      int k = column_of(p, v->name, v->len, v->quoted, v->pos, &col, e);
      if (k < 0) return -1;
      if (is_string(&p->tbl->cols[k]))
        return sql_fail(e, NULL, v->pos,
                        "column '%s' is a string: arithmetic takes numeric and date columns (COUNT, MIN "
                        "and MAX take a string column as it is)",
                        p->tbl->cols[k].name);
      st = ps_value_column(p->ctx, col, out);
      return st == PS_OK ? 0 : lib_err(p, st, v->pos, e);
    }
    case VX_NUMBER:
      st = ps_value_decimal(p->ctx, (uint64_t)v->mantissa, v->mantissa < 0 ? -1 : 0, (uint32_t)v->scale, out);
      return st == PS_OK ? 0 : lib_err(p, st, v->pos, e);
    case VX_ADD:
    case VX_SUB:
    case VX_MUL:
    case VX_NEG: {
      ps_value *a = NULL, *b = NULL;
      int bad = 0;
      if (v->kind == VX_NEG) { /* -x is 0 - x: the same scale, NULL stays NULL */
        st = ps_value_decimal(p->ctx, 0, 0, 0, &a);
        bad = st != PS_OK ? lib_err(p, st, v->pos, e) : bind_value(p, v->left, &b, e);
      } else {
        bad = bind_value(p, v->left, &a, e) || bind_value(p, v->right, &b, e);
      }
      if (bad) {
        ps_value_destroy(a);
        ps_value_destroy(b);
        return -1;
      }
      ps_arith op = v->kind == VX_ADD ? PS_ADD : v->kind == VX_MUL ? PS_MUL : PS_SUB;
      st = ps_value_arith(p->ctx, op, a, b, out);
      if (st != PS_OK) {
        ps_value_destroy(a);
        ps_value_destroy(b);
        return lib_err(p, st, v->pos, e);
      }
      return 0;
    }
    case VX_CASE:
      return bind_case(p, v, out, e);
    default: /* the parser keeps the values of groups out of aggregates */
      break;
  }
  return sql_fail(e, NULL, v->pos, "internal error: unknown value node");
}

/* ---- the statement ---- */

int select_rtype_of_show(select_show s) {
  static const int t[] = {RT_NUM, RT_STR, RT_DATE, RT_TS, RT_TIME, RT_BOOL};
  return t[s];
}

/* The scale of a column's values in value expressions. */
static int column_scale(select_plan *p, ps_column *col) {
  ps_value *v = NULL;
  if (ps_value_column(p->ctx, col, &v) != PS_OK) return 0;
  int s = (int)ps_value_scale(v);
  ps_value_destroy(v);
  return s;
}

int select_key_of(select_plan *p, const vx_node *v, expr_error *e) {
  int c = column_of(p, v->name, v->len, v->quoted, v->pos, NULL, e);
  if (c < 0) return -2;
  for (size_t k = 0; k < p->stmt.nkeys; k++)
    if (p->key_col[k] == c && p->key_fn[k] == v->fn) return (int)k;
  return -1;
}

_Static_assert(SEL_FN_TRUNC_LAST == PS_KEY_TRUNC_YEAR && SEL_FN_LAST == PS_KEY_DOY, "SEL_FN_* are ps_key_fn");

/* A date function of a key: its column must be a date or a timestamp (UTC),
 * a date only for parts and fields of a day or longer. */
static int bind_key_fn(select_plan *p, size_t k, const tbl_column *tc, expr_error *e) {
  const sel_key *key = &p->stmt.keys[k];
  const int fn = key->fn;
  const int sub_day = fn <= PS_KEY_TRUNC_HOUR || (fn >= PS_KEY_HOUR && fn <= PS_KEY_SECOND);
  const char *what = fn <= SEL_FN_TRUNC_LAST ? "date_trunc" : "extract";
  if (tc->logical == TBL_LOGICAL_DATE && !sub_day) {
    p->key_day_units[k] = 1;
  } else if (tc->logical == TBL_LOGICAL_TIMESTAMP && tc->unit <= 9) {
    int64_t units = 86400;
    for (unsigned i = 0; i < tc->unit; i++) units *= 10;
    p->key_day_units[k] = units;
  } else if (tc->logical == TBL_LOGICAL_DATE) {
    return sql_fail(e, NULL, key->pos, "%s(%s) of column '%s': a date has no %s (cast it to a timestamp)", what,
                    select_fn_name(fn), tc->name, select_fn_name(fn));
  } else {
    return sql_fail(e, NULL, key->pos, "%s(%s) takes a date or timestamp column; '%s' is not one", what,
                    select_fn_name(fn), tc->name);
  }
  p->key_fn[k] = fn;
  return 0;
}

/* COUNT(DISTINCT column): the column of a second query's extra key (one per
 * distinct column). */
static int bind_distinct(select_plan *p, vx_node *v, expr_error *e) {
  const vx_node *x = v->left;
  if (x->kind != VX_COLUMN) return sql_fail(e, NULL, x->pos, "COUNT(DISTINCT ...) takes a column");
  int c = column_of(p, x->name, x->len, x->quoted, x->pos, NULL, e);
  if (c < 0) return -1;
  if (p->stmt.nkeys + 1 > PS_QUERY_MAX_KEYS)
    return sql_fail(e, NULL, v->pos,
                    "COUNT(DISTINCT ...) with %zu GROUP BY keys is not supported: it groups by the keys and the "
                    "column, at most %d in all",
                    p->stmt.nkeys, PS_QUERY_MAX_KEYS);
  uint32_t d = 0;
  while (d < p->n_distinct && p->distinct_col[d] != c) d++;
  if (d == p->n_distinct) {
    if (d == SELECT_MAX_DISTINCT)
      return sql_fail(e, NULL, v->pos, "COUNT(DISTINCT ...) of more than %d columns in one SELECT",
                      SELECT_MAX_DISTINCT);
    p->distinct_pos[p->n_distinct] = v->pos;
    p->distinct_col[p->n_distinct++] = c;
  }
  v->slot = (int)d;
  v->rtype = RT_NUM;
  v->rscale = 0;
  return 0;
}

int select_bind_agg(select_plan *p, vx_node *v, int share, expr_error *e) {
  if (v->distinct) return bind_distinct(p, v, e);
  tbuf mine = {0}, other = {0};
  int found = -1;
  if (share && vx_to_string(v, &mine)) return sql_fail(e, NULL, v->pos, "out of memory");
  for (uint32_t a = 0; share && a < p->n_aggs && found < 0; a++) {
    other.len = 0;
    if (vx_to_string(p->agg_node[a], &other)) break;
    if (other.len == mine.len && !memcmp(other.p, mine.p, mine.len)) found = (int)a;
  }
  tbuf_free(&mine);
  tbuf_free(&other);
  if (found >= 0) {
    const vx_node *f = p->agg_node[found];
    v->slot = found;
    v->rtype = f->rtype;
    v->rscale = f->rscale;
    return 0;
  }
  if (p->n_aggs == PS_QUERY_MAX_AGGS)
    return sql_fail(e, NULL, v->pos, "more than %d aggregates in one SELECT (HAVING and ORDER BY included)",
                    PS_QUERY_MAX_AGGS);
  uint32_t a = p->n_aggs;
  ps_agg *agg = &p->aggs[a];
  static const ps_agg_kind kinds[] = {PS_AGG_COUNT_STAR, PS_AGG_COUNT_STAR, PS_AGG_COUNT, PS_AGG_SUM,
                                      PS_AGG_MIN,        PS_AGG_MAX,        PS_AGG_AVG};
  agg->kind = kinds[v->agg];
  agg->value = NULL;
  p->agg_show[a] = SHOW_NUMBER;
  p->agg_dict_col[a] = -1;
  p->agg_unit[a] = 0;
  ps_status st;
  if (v->agg != SEL_COUNT_STAR) {
    const vx_node *x = v->left;
    /* A bare column: COUNT of any column; MIN and MAX shown as the column's
     * values (a date as a date, a timestamp as a timestamp...), of a string
     * column too where its dictionary is sorted (the index orders as the
     * strings do, and is shown as its string). */
    if (x->kind == VX_COLUMN && (v->agg == SEL_COUNT || v->agg == SEL_MIN || v->agg == SEL_MAX)) {
      ps_column *col = NULL;
      int c = column_of(p, x->name, x->len, x->quoted, x->pos, &col, e);
      if (c < 0) return -1;
      const tbl_column *tc = &p->tbl->cols[c];
      if (is_string(tc) && v->agg != SEL_COUNT) {
        if (!tc->dict.sorted)
          return sql_fail(e, NULL, x->pos, "MIN and MAX of string column '%s' need a sorted dictionary", tc->name);
        p->agg_show[a] = SHOW_STRING;
        p->agg_dict_col[a] = c;
      } else if (v->agg != SEL_COUNT) {
        p->agg_show[a] = show_of(tc);
        p->agg_unit[a] = (int)tc->unit;
      }
      st = ps_value_column(p->ctx, col, &p->values[a]);
      if (st != PS_OK) return lib_err(p, st, x->pos, e);
    } else if (bind_value(p, x, &p->values[a], e)) {
      return -1;
    }
    agg->value = p->values[a];
  }
  int scale = agg->value && v->agg != SEL_COUNT ? (int)ps_value_scale(agg->value) : 0;
  if (v->agg == SEL_AVG && scale < PS_QUERY_AVG_MIN_SCALE) scale = PS_QUERY_AVG_MIN_SCALE;
  p->agg_scale[a] = scale;
  p->agg_node[a] = v;
  v->slot = (int)a;
  v->rtype = select_rtype_of_show(p->agg_show[a]);
  /* Timestamps and times compare as seconds: their count at the unit's scale. */
  v->rscale = v->rtype == RT_TS || v->rtype == RT_TIME ? p->agg_unit[a] : v->rtype == RT_NUM ? scale : 0;
  p->n_aggs++;
  return 0;
}

static int bind_statement(select_plan *p, expr_error *e) {
  select_stmt *s = &p->stmt;
  ps_status st;
  for (size_t k = 0; k < s->nkeys; k++) {
    const sel_key *key = &s->keys[k];
    ps_column *col = NULL;
    int c = column_of(p, key->name, key->len, key->quoted, key->pos, &col, e);
    if (c < 0) return -1;
    for (size_t j = 0; j < k; j++)
      if (p->key_col[j] == c && s->keys[j].fn == key->fn)
        return sql_fail(e, NULL, key->pos, "column '%s' is twice in GROUP BY", p->tbl->cols[c].name);
    if (key->fn && bind_key_fn(p, k, &p->tbl->cols[c], e)) return -1;
    p->key_col[k] = c;
    p->key_scale[k] = column_scale(p, col);
  }
  for (size_t i = 0; i < s->nitems; i++) {
    sel_item *it = &s->items[i];
    p->item_agg[i] = -1;
    p->item_key[i] = -1;
    p->item_dict_col[i] = -1;
    p->item_show[i] = SHOW_NUMBER;
    if (it->agg == SEL_KEY) {
      vx_node *v = it->arg;
      int k = select_key_of(p, v, e);
      if (k == -2) return -1;
      if (k < 0) {
        int c = column_of(p, v->name, v->len, v->quoted, v->pos, NULL, e);
        return sql_fail(e, NULL, it->pos, "column '%s' is neither inside an aggregate nor in GROUP BY",
                        p->tbl->cols[c].name);
      }
      p->item_key[i] = k;
      const tbl_column *tc = &p->tbl->cols[p->key_col[k]];
      p->item_show[i] = p->key_fn[k] > SEL_FN_TRUNC_LAST ? SHOW_NUMBER : show_of(tc);
      p->item_unit[i] = (int)tc->unit;
      v->slot = k;
      v->rtype = select_rtype_of_show(p->item_show[i]);
      v->rscale = v->rtype == RT_TS || v->rtype == RT_TIME ? (int)tc->unit : v->rtype == RT_NUM ? p->key_scale[k] : 0;
      if (p->key_fn[k] > SEL_FN_TRUNC_LAST) v->rscale = 0;
      continue;
    }
    if (it->agg == SEL_EXPR) {
      if (select_bind_result(p, it->expr, e)) return -1;
      if (it->expr->rtype != RT_NUM && it->expr->rtype != RT_NULL)
        return sql_fail(e, NULL, it->pos, "a computed SELECT item must be a number (here: a %s)",
                        select_rtype_name(it->expr->rtype));
      continue;
    }
    if (select_bind_agg(p, it->expr, 0, e)) return -1;
    int a = it->expr->slot;
    p->item_agg[i] = a;
    p->item_show[i] = p->agg_show[a];
    p->item_unit[i] = p->agg_unit[a];
    p->item_dict_col[i] = p->agg_dict_col[a];
  }
  if (select_bind_post(p, e)) return -1;
  if (p->n_aggs == 0) {
    /* Only group keys (SELECT DISTINCT by another name): the groups are the
     * rows of a COUNT(*) that is not shown. */
    p->aggs[0].kind = PS_AGG_COUNT_STAR;
    p->aggs[0].value = NULL;
    p->n_aggs = 1;
    p->agg_dict_col[0] = -1;
  }
  if (s->where) {
    bind_env env = {p->ctx, p->tbl, p->cols, p->dec_cols};
    if (expr_bind(&env, s->where, &p->where, e)) return -1;
  }
  ps_query_desc d;
  ps_query_desc_init(&d);
  d.rows = p->tbl->rows;
  d.where = p->where;
  d.n_keys = (uint32_t)s->nkeys;
  for (size_t k = 0; k < s->nkeys; k++) {
    d.keys[k] = p->cols[p->key_col[k]];
    d.key_fn[k] = (uint32_t)p->key_fn[k];
    d.key_day_units[k] = p->key_day_units[k];
  }
  d.n_aggs = p->n_aggs;
  d.aggs = p->aggs;
  st = ps_query_create(p->ctx, &d, &p->query);
  if (st != PS_OK) {
    size_t pos = st == PS_ERR_LIMIT && s->nkeys ? s->keys[0].pos : 0;
    return lib_err(p, st, pos, e);
  }
  /* COUNT(DISTINCT x): the groups of the keys and x, counted per group of the
   * keys after the run (exact; the library's group limit applies to them). */
  static const ps_agg count_star = {PS_AGG_COUNT_STAR, NULL};
  for (uint32_t i = 0; i < p->n_distinct; i++) {
    const tbl_column *tc = &p->tbl->cols[p->distinct_col[i]];
    ps_query_desc dd = d;
    dd.keys[dd.n_keys] = p->cols[p->distinct_col[i]];
    dd.key_fn[dd.n_keys] = PS_KEY_VALUE;
    dd.n_keys++;
    dd.n_aggs = 1;
    dd.aggs = &count_star;
    st = ps_query_create(p->ctx, &dd, &p->distinct_query[i]);
    if (st != PS_OK)
      return sql_fail(e, NULL, p->distinct_pos[i], "COUNT(DISTINCT %s): %s", tc->name, lib_text(p->ctx, st));
  }
  return 0;
}

int select_plan_build_cached(ps_context *ctx, const tbl_table *t, const char *src, size_t len, select_plan *p,
                             FILE *errf, ps_column **cols, ps_column **dec_cols) {
  memset(p, 0, sizeof *p);
  p->ctx = ctx;
  p->tbl = t;
  p->src = src;
  p->len = len;
  p->borrowed = cols && dec_cols;
  p->cols = p->borrowed ? cols : calloc(t->ncols ? t->ncols : 1, sizeof *p->cols);
  p->dec_cols = p->borrowed ? dec_cols : calloc(t->ncols ? t->ncols : 1, sizeof *p->dec_cols);
  if (!p->cols || !p->dec_cols) {
    fprintf(errf, "out of memory\n");
    select_plan_free(p);
    return -1;
  }
  expr_error e;
  memset(&e, 0, sizeof e);
  if (select_parse(src, len, &p->arena, &p->stmt, &e) || bind_statement(p, &e)) {
    expr_print_error(errf, src, len, &e);
    select_plan_free(p);
    return -1;
  }
  return 0;
}

int select_plan_build(ps_context *ctx, const tbl_table *t, const char *src, size_t len, select_plan *p, FILE *errf) {
  return select_plan_build_cached(ctx, t, src, len, p, errf, NULL, NULL);
}

void select_plan_free(select_plan *p) {
  ps_query_destroy(p->query);
  p->query = NULL;
  for (uint32_t i = 0; i < p->n_distinct; i++) {
    ps_query_destroy(p->distinct_query[i]);
    free(p->distinct_count[i]);
    p->distinct_query[i] = NULL;
    p->distinct_count[i] = NULL;
  }
  for (uint32_t i = 0; i < PS_QUERY_MAX_AGGS; i++) {
    ps_value_destroy(p->values[i]);
    p->values[i] = NULL;
  }
  ps_expr_destroy(p->where);
  p->where = NULL;
  if (!p->borrowed) {
    for (uint32_t i = 0; p->tbl && i < p->tbl->ncols; i++) {
      if (p->cols) ps_column_destroy(p->cols[i]);
      if (p->dec_cols) ps_column_destroy(p->dec_cols[i]);
    }
    free(p->cols);
    free(p->dec_cols);
  }
  p->cols = p->dec_cols = NULL;
  expr_arena_free(&p->arena);
}

static int same_datum(const ps_datum *a, const ps_datum *b) {
  return a->is_null == b->is_null && a->lo == b->lo && a->hi == b->hi;
}

/* counts[g] = the non-NULL values of x in group g of r, from dr: the
 * groups of r's keys and x, in the same ascending key order. */
static int count_distinct(const ps_query_result *r, const ps_query_result *dr, uint32_t n_keys, uint64_t *counts) {
  const uint64_t n = ps_query_result_groups(r), nd = ps_query_result_groups(dr);
  uint64_t j = 0;
  for (uint64_t g = 0; g < n; g++) {
    counts[g] = 0;
    for (; j < nd; j++) {
      int same = 1;
      ps_datum a, b;
      for (uint32_t k = 0; same && k < n_keys; k++) {
        if (ps_query_result_key(r, g, k, &a) != PS_OK || ps_query_result_key(dr, j, k, &b) != PS_OK) return -1;
        same = same_datum(&a, &b);
      }
      if (!same) break;
      if (ps_query_result_key(dr, j, n_keys, &b) != PS_OK) return -1;
      counts[g] += !b.is_null;
    }
  }
  return j == nd ? 0 : -1;
}

int select_plan_run(select_plan *p, ps_query_result **out, char *err, size_t errsz) {
  ps_status st = ps_query_run(p->ctx, p->query, out);
  if (st != PS_OK) return set_err(err, errsz, "%s", lib_text(p->ctx, st));
  for (uint32_t i = 0; i < p->n_distinct; i++) {
    ps_query_result *dr = NULL;
    st = ps_query_run(p->ctx, p->distinct_query[i], &dr);
    const uint64_t n = ps_query_result_groups(*out);
    free(p->distinct_count[i]);
    p->distinct_count[i] = st == PS_OK ? calloc(n ? n : 1, sizeof(uint64_t)) : NULL;
    int bad = st != PS_OK             ? set_err(err, errsz, "%s", lib_text(p->ctx, st))
              : !p->distinct_count[i] ? set_err(err, errsz, "out of memory")
              : count_distinct(*out, dr, (uint32_t)p->stmt.nkeys, p->distinct_count[i])
                  ? set_err(err, errsz, "internal error: COUNT(DISTINCT) groups out of order")
                  : 0;
    ps_query_result_destroy(dr);
    if (bad) {
      ps_query_result_destroy(*out);
      *out = NULL;
      return -1;
    }
  }
  /* HAVING, ORDER BY and every computed item of every row to be written,
   * evaluated once here: a value that does not fit 38 digits is the run's
   * error, before any output (a writer never fails after its first row). */
  if (select_has_post(p)) {
    uint64_t *rows = NULL, n = 0;
    int bad = select_result_rows(p, *out, &rows, &n, err, errsz);
    for (uint64_t k = 0; !bad && k < n; k++)
      for (size_t i = 0; !bad && i < p->stmt.nitems; i++) {
        ps_datum d;
        if (p->stmt.items[i].agg == SEL_EXPR) bad = select_item_datum(p, *out, rows[k], i, &d, err, errsz);
      }
    free(rows);
    if (bad) {
      ps_query_result_destroy(*out);
      *out = NULL;
      return -1;
    }
  }
  return 0;
}

/* ---- output ---- */

/* One cell's text (NULL: is_null set, text empty). */
typedef struct cell {
  const char *s;
  size_t len;
  int is_null;
  char buf[PS_DATUM_TEXT_SIZE];
} cell;

static int get_cell(const select_plan *p, const ps_query_result *r, uint64_t g, size_t i, cell *c, char *err,
                    size_t errsz) {
  ps_datum d;
  ps_status st;
  if (select_item_datum(p, r, g, i, &d, err, errsz)) return -1;
  c->is_null = d.is_null != 0;
  c->s = c->buf;
  c->len = 0;
  c->buf[0] = 0;
  if (c->is_null) return 0;
  switch (p->item_show[i]) {
    case SHOW_STRING:
      if (p->item_dict_col[i] >= 0) { /* MIN/MAX of a sorted dictionary: the index's string */
        const tbl_column *tc = &p->tbl->cols[p->item_dict_col[i]];
        uint64_t k = d.lo;
        if (d.hi != 0 || d.scale != 0 || k >= tc->dict.count)
          return set_err(err, errsz, "result index %llu outside the dictionary of '%s'", (unsigned long long)k,
                         tc->name);
        const int32_t *o = tc->dict.offsets32;
        c->s = (const char *)tc->dict.bytes + o[k];
        c->len = (size_t)(o[k + 1] - o[k]);
      } else {
        c->s = d.str ? d.str : "";
        c->len = d.str ? d.str_len : 0;
      }
      return 0;
    case SHOW_DATE:
    case SHOW_TIMESTAMP:
    case SHOW_TIME:
    case SHOW_BOOL:
      if (d.scale == 0 && ((d.hi == 0 && d.lo <= (uint64_t)INT64_MAX) || (d.hi == -1 && d.lo > (uint64_t)INT64_MAX))) {
        int64_t v = (int64_t)d.lo;
        char tmp[48];
        if (p->item_show[i] == SHOW_DATE)
          format_date(v, tmp);
        else if (p->item_show[i] == SHOW_TIMESTAMP)
          format_timestamp(v, p->item_unit[i], tmp);
        else if (p->item_show[i] == SHOW_TIME)
          format_time(v, p->item_unit[i], tmp);
        else
          snprintf(tmp, sizeof tmp, "%s", v ? "true" : "false");
        snprintf(c->buf, sizeof c->buf, "%s", tmp);
        c->len = strlen(c->buf);
        return 0;
      }
      break;
    case SHOW_NUMBER:
      break;
  }
  st = ps_datum_format(&d, c->buf, sizeof c->buf);
  if (st != PS_OK) return set_err(err, errsz, "formatting a result value: %s", ps_status_name(st));
  c->len = strlen(c->buf);
  return 0;
}

void select_item_title(const select_plan *p, size_t i, tbuf *o) {
  const sel_item *it = &p->stmt.items[i];
  if (it->alias) {
    tbuf_append(o, it->alias, it->alias_len);
    return;
  }
  int space = 0;
  for (size_t k = it->pos; k < it->end && k < p->len; k++) {
    unsigned char ch = (unsigned char)p->src[k];
    if (ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r' || ch == '\f' || ch == '\v') {
      space = 1;
      continue;
    }
    if (space) tbuf_putc(o, ' ');
    space = 0;
    tbuf_putc(o, ch);
  }
}

int select_write(const select_plan *p, const ps_query_result *r, out_format fmt, int header, FILE *out, char *err,
                 size_t errsz) {
  size_t nc = p->stmt.nitems;
  uint64_t ng = 0, *rows = NULL;
  if (select_result_rows(p, r, &rows, &ng, err, errsz)) return -1;
  tbuf titles[SELECT_MAX_ITEMS];
  const char *names[SELECT_MAX_ITEMS];
  memset(titles, 0, sizeof titles);
  int rc = 0;
  for (size_t i = 0; i < nc; i++) {
    select_item_title(p, i, &titles[i]);
    if (tbuf_putc(&titles[i], 0)) rc = set_err(err, errsz, "out of memory");
    names[i] = (const char *)titles[i].p;
  }
  out_writer *w = NULL;
  if (rc == 0 && out_begin(out, fmt, header, nc, names, &w)) rc = set_err(err, errsz, "out of memory");
  cell cells[SELECT_MAX_ITEMS];
  out_cell oc[SELECT_MAX_ITEMS];
  for (uint64_t row = 0; row < ng && rc == 0; row++) {
    for (size_t i = 0; i < nc && rc == 0; i++) {
      rc = get_cell(p, r, rows[row], i, &cells[i], err, errsz);
      oc[i].kind = cells[i].is_null                 ? OUT_NULL
                   : p->item_show[i] == SHOW_NUMBER ? OUT_NUMBER
                   : p->item_show[i] == SHOW_BOOL   ? OUT_BOOL
                                                    : OUT_TEXT;
      oc[i].s = cells[i].s;
      oc[i].len = cells[i].len;
    }
    if (rc == 0 && out_row(w, oc)) rc = set_err(err, errsz, "out of memory");
  }
  if (rc == 0) {
    if (out_end(w)) rc = set_err(err, errsz, "writing the output failed");
  } else {
    out_discard(w);
  }
  for (size_t i = 0; i < nc; i++) tbuf_free(&titles[i]);
  free(rows);
  return rc;
}
