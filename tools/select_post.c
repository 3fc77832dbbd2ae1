/* What a SELECT does with the library's groups (select_post.h): values
 * computed from aggregates and keys (+ - * /, abs, coalesce), HAVING, ORDER BY,
 * LIMIT and OFFSET, all on the host and exact (xnum.h). Comparisons follow
 * SQL: Kleene logic in HAVING, numbers by exact value at any scale, strings
 * bytewise (memcmp, a proper prefix first: DuckDB's VARCHAR order), dates,
 * times and timestamps by value. */
#include <stdlib.h>
#include <string.h>

#include "select_post.h"
#include "xnum.h"

/* ---- binding ---- */

const char *select_rtype_name(int t) {
  static const char *const names[] = {"NULL", "number", "string", "date", "timestamp", "time", "boolean"};
  return names[t];
}

static int bind_value_of_group(select_plan *p, vx_node *v, int hint, int aliases, expr_error *e);
static int bind_having(select_plan *p, hv_node *h, expr_error *e);

static int bind_operand_num(select_plan *p, vx_node *v, int aliases, expr_error *e) {
  if (bind_value_of_group(p, v, RT_NUM, aliases, e)) return -1;
  if (v->rtype != RT_NUM && v->rtype != RT_NULL)
    return sql_fail(e, NULL, v->pos, "arithmetic takes numbers, and this is a %s", select_rtype_name(v->rtype));
  return 0;
}

/* The item whose alias v (an unquoted or quoted name) is, or NULL. */
static const sel_item *alias_item(const select_plan *p, const vx_node *v) {
  const sel_item *found = NULL;
  if (v->fn) return NULL;
  for (size_t i = 0; i < p->stmt.nitems; i++) {
    const sel_item *it = &p->stmt.items[i];
    if (!it->alias || it->alias_len != v->len) continue;
    int same = v->quoted ? !memcmp(it->alias, v->name, v->len) : 1;
    for (size_t k = 0; same && !v->quoted && k < v->len; k++) {
      char a = it->alias[k], b = v->name[k];
      if (a >= 'A' && a <= 'Z') a = (char)(a + 32);
      if (b >= 'A' && b <= 'Z') b = (char)(b + 32);
      same = a == b;
    }
    if (same && !found) found = it;
  }
  return found;
}

/* A string literal as a value of type t: the text as it is, or a date, time
 * or timestamp read from it (DATE '...' and the like say which). */
static int bind_literal(vx_node *v, int t, expr_error *e) {
  int want = v->lit == 'D' ? (t == RT_TS ? RT_TS : RT_DATE) : v->lit == 'T' ? RT_TS : v->lit == 't' ? RT_TIME : t;
  if (v->lit == 'T' && t == RT_DATE)
    return sql_fail(e, NULL, v->pos, "a TIMESTAMP is compared with a date: write DATE '...'");
  int32_t days, ns;
  int64_t sec;
  int digits, date_only;
  v->rtype = want;
  v->scale = 0;
  switch (want) {
    case RT_NULL:
    case RT_STR:
      v->rtype = RT_STR;
      return 0;
    case RT_DATE:
      if (parse_date(v->name, v->len, &days))
        return sql_fail(e, NULL, v->pos, "'%.*s' is not a date (yyyy-mm-dd)", (int)(v->len > 40 ? 40 : v->len),
                        v->name);
      v->mantissa = days;
      return 0;
    case RT_TS:
      if (v->lit == 'D') {
        if (parse_date(v->name, v->len, &days))
          return sql_fail(e, NULL, v->pos, "'%.*s' is not a date (yyyy-mm-dd)", (int)(v->len > 40 ? 40 : v->len),
                          v->name);
        v->mantissa = (int64_t)days * 86400;
        return 0;
      }
      if (parse_timestamp(v->name, v->len, &sec, &ns, &digits, &date_only))
        return sql_fail(e, NULL, v->pos, "'%.*s' is not a timestamp", (int)(v->len > 40 ? 40 : v->len), v->name);
      if (__builtin_mul_overflow(sec, (int64_t)1000000000, &v->mantissa) ||
          __builtin_add_overflow(v->mantissa, (int64_t)ns, &v->mantissa))
        return sql_fail(e, NULL, v->pos, "timestamp out of range");
      v->scale = 9;
      return 0;
    case RT_TIME:
      if (parse_time(v->name, v->len, &sec, &ns, &digits))
        return sql_fail(e, NULL, v->pos, "'%.*s' is not a time (hh:mm:ss)", (int)(v->len > 40 ? 40 : v->len), v->name);
      v->mantissa = sec * 1000000000 + ns;
      v->scale = 9;
      return 0;
    default:
      return sql_fail(e, NULL, v->pos, "a string is compared with a %s", select_rtype_name(t));
  }
}

/* Binds v, a value of the group. hint: the type a string literal takes (the
 * other side of its comparison). aliases: a name may be a SELECT item's alias
 * where it is not a GROUP BY column (HAVING, ORDER BY). */
static int bind_value_of_group(select_plan *p, vx_node *v, int hint, int aliases, expr_error *e) {
  switch (v->kind) {
    case VX_AGG:
      return select_bind_agg(p, v, aliases, e);
    case VX_COLUMN: {
      const sel_item *it = NULL;
      expr_error ignored;
      int k = select_key_of(p, v, aliases ? &ignored : e);
      if (k < 0 && aliases) it = alias_item(p, v);
      if (it) {
        v->ref = it->expr;
        v->rtype = it->expr->rtype;
        v->rscale = it->expr->rscale;
        return 0;
      }
      if (k == -2) return aliases ? select_key_of(p, v, e) : -1;
      if (k < 0)
        return sql_fail(e, NULL, v->pos, "column '%.*s' is neither inside an aggregate nor in GROUP BY",
                        (int)(v->len > 60 ? 60 : v->len), v->name);
      const tbl_column *tc = &p->tbl->cols[p->key_col[k]];
      v->slot = k;
      v->rtype = tc->encoding == TBL_ENC_DICT           ? RT_STR
                 : tc->logical == TBL_LOGICAL_DATE      ? RT_DATE
                 : tc->logical == TBL_LOGICAL_TIMESTAMP ? RT_TS
                 : tc->logical == TBL_LOGICAL_TIME      ? RT_TIME
                 : tc->logical == TBL_LOGICAL_BOOLEAN   ? RT_BOOL
                                                        : RT_NUM;
      if (p->key_fn[k] > SEL_FN_TRUNC_LAST) v->rtype = RT_NUM; /* extract's fields are integers */
      v->rscale = v->rtype == RT_TS || v->rtype == RT_TIME ? (int)tc->unit : v->rtype == RT_NUM ? p->key_scale[k] : 0;
      return 0;
    }
    case VX_NUMBER:
      v->rtype = v->lit == 'B' ? RT_BOOL : RT_NUM;
      v->rscale = v->scale;
      return 0;
    case VX_STRING:
      if (bind_literal(v, hint, e)) return -1;
      v->rscale = v->scale;
      return 0;
    case VX_NULL:
      v->rtype = RT_NULL;
      return 0;
    case VX_ADD:
    case VX_SUB:
    case VX_MUL:
    case VX_DIV: {
      if (bind_operand_num(p, v->left, aliases, e) || bind_operand_num(p, v->right, aliases, e)) return -1;
      int a = v->left->rscale, b = v->right->rscale;
      v->rtype = RT_NUM;
      if (v->kind == VX_MUL) {
        v->rscale = a + b;
        if (v->rscale > XNUM_MAX_SCALE)
          return sql_fail(e, NULL, v->pos, "the product's scale %d is past %d", v->rscale, XNUM_MAX_SCALE);
      } else {
        v->rscale = a > b ? a : b;
        if (v->kind == VX_DIV && v->rscale < XNUM_DIV_MIN_SCALE) v->rscale = XNUM_DIV_MIN_SCALE;
      }
      return 0;
    }
    case VX_NEG:
    case VX_ABS:
      if (bind_operand_num(p, v->left, aliases, e)) return -1;
      v->rtype = RT_NUM;
      v->rscale = v->left->rscale;
      return 0;
    case VX_COALESCE: {
      if (bind_value_of_group(p, v->left, hint, aliases, e)) return -1;
      int t = v->left->rtype != RT_NULL ? v->left->rtype : hint;
      if (bind_value_of_group(p, v->right, t, aliases, e)) return -1;
      int l = v->left->rtype, r = v->right->rtype;
      if (l != r && l != RT_NULL && r != RT_NULL)
        return sql_fail(e, NULL, v->right->pos, "coalesce of a %s and a %s", select_rtype_name(l),
                        select_rtype_name(r));
      v->rtype = l != RT_NULL ? l : r;
      v->rscale = v->left->rscale > v->right->rscale ? v->left->rscale : v->right->rscale;
      return 0;
    }
    case VX_CASE: { /* over values of the group: numbers (or NULL) in every branch */
      v->rtype = RT_NULL;
      v->rscale = 0;
      for (size_t i = 0; i <= v->nwhens; i++) {
        vx_node *x = i < v->nwhens ? v->whens[i].then : v->right;
        if (i < v->nwhens && bind_having(p, v->whens[i].hcond, e)) return -1;
        if (!x) continue;
        if (bind_value_of_group(p, x, RT_NULL, aliases, e)) return -1;
        if (x->rtype != RT_NUM && x->rtype != RT_NULL && x->rtype != RT_BOOL)
          return sql_fail(e, NULL, x->pos, "CASE over aggregates gives numbers; this branch is a %s",
                          select_rtype_name(x->rtype));
        if (x->rtype != RT_NULL) v->rtype = RT_NUM;
        if (x->rscale > v->rscale) v->rscale = x->rscale;
      }
      return 0;
    }
    default:
      break;
  }
  return sql_fail(e, NULL, v->pos, "internal error: a value of a row outside an aggregate");
}

int select_bind_result(select_plan *p, vx_node *v, expr_error *e) { return bind_value_of_group(p, v, RT_NULL, 0, e); }

/* Binds the operands of one comparison (a, then list[0..n)): the ones that
 * are not string literals first, whose type the literals then take. */
static int bind_compared(select_plan *p, vx_node **ops, size_t n, expr_error *e) {
  int t = RT_NULL;
  for (size_t i = 0; i < n; i++)
    if (ops[i]->kind != VX_STRING) {
      if (bind_value_of_group(p, ops[i], RT_NULL, 1, e)) return -1;
      if (t == RT_NULL) t = ops[i]->rtype;
    }
  for (size_t i = 0; i < n; i++)
    if (ops[i]->kind == VX_STRING && bind_value_of_group(p, ops[i], t, 1, e)) return -1;
  for (size_t i = 0; i < n; i++) {
    int u = ops[i]->rtype;
    if (t == RT_NULL) t = u;
    if (u != t && u != RT_NULL)
      return sql_fail(e, NULL, ops[i]->pos, "a %s is compared with a %s", select_rtype_name(u), select_rtype_name(t));
  }
  return 0;
}

static int bind_having(select_plan *p, hv_node *h, expr_error *e) {
  vx_node *ops[64]; /* a comparison's operands; IN lists in slices of 63 */
  switch (h->kind) {
    case HV_AND:
    case HV_OR:
      return bind_having(p, h->left, e) || bind_having(p, h->right, e) ? -1 : 0;
    case HV_NOT:
      return bind_having(p, h->left, e);
    case HV_CMP:
      ops[0] = h->a, ops[1] = h->b;
      if (h->b->kind == VX_NUMBER && h->b->lit == 'B' && h->b->pos == h->a->end) { /* a value alone: a = TRUE */
        if (bind_value_of_group(p, h->a, RT_BOOL, 1, e)) return -1;
        if (h->a->rtype != RT_BOOL && h->a->rtype != RT_NULL)
          return sql_fail(e, NULL, h->a->pos, "HAVING needs a condition, and this is a %s",
                          select_rtype_name(h->a->rtype));
      }
      return bind_compared(p, ops, 2, e);
    case HV_BETWEEN:
      ops[0] = h->a, ops[1] = h->b, ops[2] = h->c;
      return bind_compared(p, ops, 3, e);
    case HV_IS_NULL:
      return bind_value_of_group(p, h->a, RT_NULL, 1, e);
    case HV_IN: {
      /* Long lists are bound in slices: every slice shares the first's type. */
      for (size_t i = 0; i < h->nlist; i += 63) {
        size_t n = h->nlist - i < 63 ? h->nlist - i : 63;
        ops[0] = h->a;
        memcpy(ops + 1, h->list + i, n * sizeof *ops);
        if (bind_compared(p, ops, n + 1, e)) return -1;
      }
      return 0;
    }
  }
  return sql_fail(e, NULL, h->pos, "internal error: unknown HAVING node");
}

int select_bind_post(select_plan *p, expr_error *e) {
  select_stmt *s = &p->stmt;
  if (s->having && bind_having(p, s->having, e)) return -1;
  for (size_t i = 0; i < s->norder; i++) {
    vx_node *v = s->order[i].expr;
    if (v->kind == VX_NUMBER && v->scale == 0) { /* a position in the SELECT list ((2) too: it prints as 2) */
      if (v->mantissa < 1 || (uint64_t)v->mantissa > s->nitems)
        return sql_fail(e, NULL, v->pos, "ORDER BY position %lld is not in the SELECT list (1 to %zu)",
                        (long long)v->mantissa, s->nitems);
      p->order_node[i] = s->items[v->mantissa - 1].expr;
      continue;
    }
    const sel_item *it = v->kind == VX_COLUMN ? alias_item(p, v) : NULL;
    if (it) { /* an alias names its item before a column of that name (DuckDB) */
      p->order_node[i] = it->expr;
      continue;
    }
    if (bind_value_of_group(p, v, RT_NULL, 1, e)) return -1;
    p->order_node[i] = v;
  }
  return 0;
}

int select_has_post(const select_plan *p) {
  const select_stmt *s = &p->stmt;
  for (size_t i = 0; i < s->nitems; i++)
    if (s->items[i].agg == SEL_EXPR) return 1;
  return s->having || s->norder || s->has_limit || s->has_offset;
}

/* ---- evaluation ---- */

typedef struct rv {
  int type; /* RT_NULL: NULL */
  xnum n;   /* numbers, dates, times, timestamps, booleans */
  const char *s;
  size_t len;
} rv;

static int too_large(const select_plan *p, const vx_node *v, char *err, size_t errsz) {
  size_t n = v->end > v->pos ? v->end - v->pos : 0;
  return set_err(err, errsz, "PS_ERR_OVERFLOW: the value of '%.*s' does not fit 38 digits in a result row",
                 (int)(n > 80 ? 80 : n), p->src + v->pos);
}

/* A result datum as a value of type t at scale (numbers) or unit (times). */
static int from_datum(const select_plan *p, const ps_datum *d, int t, int scale, int dict_col, rv *out, char *err,
                      size_t errsz) {
  memset(out, 0, sizeof *out);
  if (d->is_null) return 0;
  out->type = t;
  if (t == RT_STR) {
    if (dict_col < 0) {
      out->s = d->str ? d->str : "";
      out->len = d->str ? d->str_len : 0;
      return 0;
    }
    const ps_dict_desc *dict = &p->tbl->cols[dict_col].dict;
    uint64_t k = d->lo;
    if (d->hi != 0 || k >= dict->count || (!dict->offsets32 && !dict->offsets64))
      return set_err(err, errsz, "result index %llu outside the dictionary", (unsigned long long)k);
    int64_t a = dict->offsets32 ? dict->offsets32[k] : dict->offsets64[k];
    int64_t b = dict->offsets32 ? dict->offsets32[k + 1] : dict->offsets64[k + 1];
    out->s = (const char *)dict->bytes + a;
    out->len = (size_t)(b - a);
    return 0;
  }
  if (xnum_from_datum(d, &out->n)) return set_err(err, errsz, "a result value outside DECIMAL(38)");
  if (t == RT_TS || t == RT_TIME) {
    out->n.scale = scale; /* a count of 10^-unit seconds */
    return 0;
  }
  /* A lossless float column's value (docs/float-encoding.md) is the shortest
   * decimal of its double, at its own scale: kept (comparisons and formatting
   * align scales; arithmetic rescales its result or says it is too large). */
  if (out->n.scale > scale) return 0;
  if (out->n.scale != scale && xnum_rescale(&out->n, scale, &out->n))
    return set_err(err, errsz, "internal error: a result value at scale %d, not %d", out->n.scale, scale);
  return 0;
}

static int having(const select_plan *p, const ps_query_result *r, uint64_t g, const hv_node *h, char *err,
                  size_t errsz);

static int eval(const select_plan *p, const ps_query_result *r, uint64_t g, const vx_node *v, rv *out, char *err,
                size_t errsz) {
  ps_datum d;
  ps_status st;
  rv a, b;
  memset(out, 0, sizeof *out);
  switch (v->kind) {
    case VX_AGG:
      if (v->distinct) {
        out->type = RT_NUM;
        out->n.u = p->distinct_count[v->slot] ? (__int128)p->distinct_count[v->slot][g] : 0;
        out->n.scale = 0;
        return 0;
      }
      st = ps_query_result_value(r, g, (uint32_t)v->slot, &d);
      if (st != PS_OK) return set_err(err, errsz, "reading the result: %s", ps_status_name(st));
      return from_datum(p, &d, v->rtype, v->rscale, p->agg_dict_col[v->slot], out, err, errsz);
    case VX_COLUMN:
      if (v->ref) return eval(p, r, g, v->ref, out, err, errsz);
      st = ps_query_result_key(r, g, (uint32_t)v->slot, &d);
      if (st != PS_OK) return set_err(err, errsz, "reading the result: %s", ps_status_name(st));
      return from_datum(p, &d, v->rtype, v->rscale, -1, out, err, errsz);
    case VX_NUMBER:
    case VX_STRING:
      out->type = v->rtype;
      if (v->rtype == RT_STR) {
        out->s = v->name;
        out->len = v->len;
      } else {
        out->n.u = v->mantissa;
        out->n.scale = v->scale;
      }
      return 0;
    case VX_NULL:
      return 0;
    case VX_ADD:
    case VX_SUB:
    case VX_MUL:
    case VX_DIV: {
      if (eval(p, r, g, v->left, &a, err, errsz) || eval(p, r, g, v->right, &b, err, errsz)) return -1;
      if (a.type == RT_NULL || b.type == RT_NULL) return 0;
      int bad = v->kind == VX_ADD   ? xnum_add(&a.n, &b.n, &out->n)
                : v->kind == VX_SUB ? xnum_sub(&a.n, &b.n, &out->n)
                : v->kind == VX_MUL ? xnum_mul(&a.n, &b.n, &out->n)
                                    : xnum_div(&a.n, &b.n, v->rscale, &out->n);
      if (bad == 1) return 0; /* division by zero: NULL */
      if (bad) return too_large(p, v, err, errsz);
      out->type = RT_NUM;
      if (out->n.scale != v->rscale && xnum_rescale(&out->n, v->rscale, &out->n)) return too_large(p, v, err, errsz);
      return 0;
    }
    case VX_NEG:
    case VX_ABS:
      if (eval(p, r, g, v->left, out, err, errsz)) return -1;
      if (out->type != RT_NULL && (v->kind == VX_NEG || out->n.u < 0)) out->n.u = -out->n.u;
      return 0;
    case VX_CASE: /* the first WHEN that is TRUE (not FALSE or UNKNOWN), else ELSE */
      for (size_t i = 0; i <= v->nwhens; i++) {
        const vx_node *x = i < v->nwhens ? v->whens[i].then : v->right;
        if (i < v->nwhens) {
          int k = having(p, r, g, v->whens[i].hcond, err, errsz);
          if (k < 0) return -1;
          if (k != 1 /* K_TRUE */) continue;
        }
        if (!x) return 0; /* no ELSE: NULL */
        if (eval(p, r, g, x, out, err, errsz)) return -1;
        if (out->type != RT_NULL) {
          out->type = RT_NUM;
          if (out->n.scale != v->rscale && xnum_rescale(&out->n, v->rscale, &out->n))
            return too_large(p, v, err, errsz);
        }
        return 0;
      }
      return 0;
    case VX_COALESCE:
      if (eval(p, r, g, v->left, out, err, errsz)) return -1;
      if (out->type == RT_NULL && eval(p, r, g, v->right, out, err, errsz)) return -1;
      if (out->type == RT_NUM && out->n.scale != v->rscale && xnum_rescale(&out->n, v->rscale, &out->n))
        return too_large(p, v, err, errsz);
      return 0;
    default:
      break;
  }
  return set_err(err, errsz, "internal error: a value of a row outside an aggregate");
}

/* Non-NULL a and b of one type: -1, 0, 1. */
static int compare(const rv *a, const rv *b) {
  if (a->type == RT_STR) {
    size_t n = a->len < b->len ? a->len : b->len;
    int c = n ? memcmp(a->s, b->s, n) : 0;
    if (c) return c < 0 ? -1 : 1;
    return a->len < b->len ? -1 : a->len > b->len;
  }
  return xnum_cmp(&a->n, &b->n);
}

enum { K_FALSE = 0, K_TRUE = 1, K_UNKNOWN = 2 };

/* a op b in three values; -1 on an error. */
static int kleene_cmp(const rv *a, int op, const rv *b) {
  if (a->type == RT_NULL || b->type == RT_NULL) return K_UNKNOWN;
  int c = compare(a, b);
  switch ((ps_cmp)op) {
    case PS_EQ:
      return c == 0;
    case PS_NE:
      return c != 0;
    case PS_LT:
      return c < 0;
    case PS_LE:
      return c <= 0;
    case PS_GT:
      return c > 0;
    case PS_GE:
      return c >= 0;
  }
  return K_UNKNOWN;
}

static int kleene_and(int a, int b) {
  return a == K_FALSE || b == K_FALSE ? K_FALSE : a == K_TRUE && b == K_TRUE ? K_TRUE : K_UNKNOWN;
}
static int kleene_or(int a, int b) {
  return a == K_TRUE || b == K_TRUE ? K_TRUE : a == K_FALSE && b == K_FALSE ? K_FALSE : K_UNKNOWN;
}
static int kleene_not(int a) { return a == K_UNKNOWN ? K_UNKNOWN : !a; }

static int having(const select_plan *p, const ps_query_result *r, uint64_t g, const hv_node *h, char *err,
                  size_t errsz) {
  rv a, b, c;
  int x, y;
  switch (h->kind) {
    case HV_AND:
    case HV_OR:
      if ((x = having(p, r, g, h->left, err, errsz)) < 0) return -1;
      if (x == (h->kind == HV_AND ? K_FALSE : K_TRUE)) return x;
      if ((y = having(p, r, g, h->right, err, errsz)) < 0) return -1;
      return h->kind == HV_AND ? kleene_and(x, y) : kleene_or(x, y);
    case HV_NOT:
      if ((x = having(p, r, g, h->left, err, errsz)) < 0) return -1;
      return kleene_not(x);
    case HV_CMP:
      if (eval(p, r, g, h->a, &a, err, errsz) || eval(p, r, g, h->b, &b, err, errsz)) return -1;
      return kleene_cmp(&a, h->op, &b);
    case HV_BETWEEN:
      if (eval(p, r, g, h->a, &a, err, errsz) || eval(p, r, g, h->b, &b, err, errsz) ||
          eval(p, r, g, h->c, &c, err, errsz))
        return -1;
      x = kleene_and(kleene_cmp(&a, PS_GE, &b), kleene_cmp(&a, PS_LE, &c));
      return h->negated ? kleene_not(x) : x;
    case HV_IN:
      if (eval(p, r, g, h->a, &a, err, errsz)) return -1;
      x = K_FALSE;
      for (size_t i = 0; i < h->nlist && x != K_TRUE; i++) {
        if (eval(p, r, g, h->list[i], &b, err, errsz)) return -1;
        x = kleene_or(x, kleene_cmp(&a, PS_EQ, &b));
      }
      return h->negated ? kleene_not(x) : x;
    case HV_IS_NULL:
      if (eval(p, r, g, h->a, &a, err, errsz)) return -1;
      return (a.type == RT_NULL) != h->negated;
  }
  return set_err(err, errsz, "internal error: unknown HAVING node");
}

/* ---- ordering ---- */

typedef struct sorter {
  const select_plan *p;
  const rv *keys; /* norder values per kept row, by its position in the kept list */
  size_t norder;
} sorter;

/* Rows a and b (positions in the kept list) in ORDER BY order: < 0, 0, > 0. */
static int order_cmp(const sorter *s, uint64_t a, uint64_t b) {
  for (size_t i = 0; i < s->norder; i++) {
    const rv *x = &s->keys[a * s->norder + i], *y = &s->keys[b * s->norder + i];
    const sel_order *o = &s->p->stmt.order[i];
    int xn = x->type == RT_NULL, yn = y->type == RT_NULL;
    if (xn || yn) {
      if (xn && yn) continue;
      /* NULLS LAST unless NULLS FIRST, in both directions (DuckDB's default) */
      return (xn ? 1 : -1) * (o->nulls_first == 1 ? -1 : 1);
    }
    int c = compare(x, y);
    if (c) return o->desc ? -c : c;
  }
  return 0;
}

/* Stable merge sort of idx[0..n) (positions in the kept list), so that ties
 * keep the groups' ascending key order. */
static void merge_sort(const sorter *s, uint64_t *idx, uint64_t *tmp, uint64_t n) {
  for (uint64_t w = 1; w < n; w *= 2) {
    for (uint64_t lo = 0; lo < n; lo += 2 * w) {
      uint64_t mid = lo + w < n ? lo + w : n, hi = lo + 2 * w < n ? lo + 2 * w : n;
      uint64_t i = lo, j = mid, k = lo;
      while (i < mid && j < hi) tmp[k++] = order_cmp(s, idx[j], idx[i]) < 0 ? idx[j++] : idx[i++];
      while (i < mid) tmp[k++] = idx[i++];
      while (j < hi) tmp[k++] = idx[j++];
    }
    memcpy(idx, tmp, (size_t)n * sizeof *idx);
  }
}

int select_result_rows(const select_plan *p, const ps_query_result *r, uint64_t **rows, uint64_t *n, char *err,
                       size_t errsz) {
  const select_stmt *s = &p->stmt;
  uint64_t ng = ps_query_result_groups(r), kept = 0;
  uint64_t *keep = malloc((size_t)(ng ? ng : 1) * sizeof *keep);
  *rows = NULL;
  *n = 0;
  if (!keep) return set_err(err, errsz, "out of memory");
  for (uint64_t g = 0; g < ng; g++) {
    int t = s->having ? having(p, r, g, s->having, err, errsz) : K_TRUE;
    if (t < 0) {
      free(keep);
      return -1;
    }
    if (t == K_TRUE) keep[kept++] = g;
  }
  if (s->norder && kept > 1) {
    sorter so = {p, NULL, s->norder};
    rv *keys = malloc((size_t)kept * s->norder * sizeof *keys);
    uint64_t *idx = malloc((size_t)kept * sizeof *idx), *tmp = malloc((size_t)kept * sizeof *tmp);
    int rc = keys && idx && tmp ? 0 : set_err(err, errsz, "out of memory");
    for (uint64_t k = 0; k < kept && rc == 0; k++) {
      idx[k] = k;
      for (size_t i = 0; i < s->norder && rc == 0; i++)
        rc = eval(p, r, keep[k], p->order_node[i], &keys[k * s->norder + i], err, errsz);
    }
    if (rc == 0) {
      so.keys = keys;
      merge_sort(&so, idx, tmp, kept);
      for (uint64_t k = 0; k < kept; k++) tmp[k] = keep[idx[k]];
      memcpy(keep, tmp, (size_t)kept * sizeof *keep);
    }
    free(keys);
    free(idx);
    free(tmp);
    if (rc) {
      free(keep);
      return -1;
    }
  }
  uint64_t first = s->has_offset ? (s->offset < kept ? s->offset : kept) : 0, count = kept - first;
  if (s->has_limit && s->limit < count) count = s->limit;
  if (first) memmove(keep, keep + first, (size_t)count * sizeof *keep);
  *rows = keep;
  *n = count;
  return 0;
}

int select_item_datum(const select_plan *p, const ps_query_result *r, uint64_t g, size_t i, ps_datum *d, char *err,
                      size_t errsz) {
  const sel_item *it = &p->stmt.items[i];
  if (it->agg == SEL_EXPR) {
    rv v;
    if (eval(p, r, g, it->expr, &v, err, errsz)) return -1;
    memset(d, 0, sizeof *d);
    if (v.type == RT_NULL) {
      d->is_null = 1;
      return 0;
    }
    xnum_to_datum(&v.n, d);
    return 0;
  }
  ps_status st = p->item_agg[i] < 0 ? ps_query_result_key(r, g, (uint32_t)p->item_key[i], d)
                                    : ps_query_result_value(r, g, (uint32_t)p->item_agg[i], d);
  if (st != PS_OK) return set_err(err, errsz, "reading the result: %s", ps_status_name(st));
  return 0;
}
