/* Canonical text of a parsed SELECT (select.h): keywords and aggregates in
 * upper case, the parentheses each tree needs and no more, so that the text
 * parses back to itself and nests no deeper than the input did. */
#include "select.h"
#include "sql_lex.h"

static int put_name(tbuf *o, const char *s, size_t len, int quoted) {
  int plain = !quoted && len > 0 && sql_is_ident_start((unsigned char)s[0]) && !select_word_reserved(s, len);
  for (size_t i = 1; plain && i < len; i++) plain = sql_is_ident_char((unsigned char)s[i]);
  if (plain) return tbuf_append(o, s, len);
  int r = tbuf_putc(o, '"');
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '"') r |= tbuf_putc(o, '"');
    r |= tbuf_putc(o, s[i]);
  }
  return r | tbuf_putc(o, '"');
}

/* Binding strength: + - 1, * / 2, everything else 3. */
static int vx_prec(const vx_node *v) {
  return v->kind == VX_ADD || v->kind == VX_SUB ? 1 : v->kind == VX_MUL || v->kind == VX_DIV ? 2 : 3;
}

static int put_string(tbuf *o, const char *s, size_t len) {
  int r = tbuf_putc(o, '\'');
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '\'') r |= tbuf_putc(o, '\'');
    r |= tbuf_putc(o, s[i]);
  }
  return r | tbuf_putc(o, '\'');
}

/* A column, or a date function of it: date_trunc('month', d), extract(year FROM d). */
static int put_fn_name(tbuf *o, int fn, const char *name, size_t len, int quoted) {
  int r = 0;
  if (fn) r |= tbuf_printf(o, fn <= SEL_FN_TRUNC_LAST ? "date_trunc('%s', " : "extract(%s FROM ", select_fn_name(fn));
  r |= put_name(o, name, len, quoted);
  if (fn) r |= tbuf_putc(o, ')');
  return r;
}

static const char *const agg_names[] = {"", "COUNT", "COUNT", "SUM", "MIN", "MAX", "AVG"};

/* Prints v with the parentheses its tree needs and no more, so that the text
 * nests no deeper than any text that parses to the same tree: a chain
 * a + b + c stays flat (left-deep), a right operand of the same strength is
 * parenthesized. min_prec: the strength the context requires. */
static int vx_print(const vx_node *v, int min_prec, tbuf *o) {
  char num[48];
  int r = 0, p = vx_prec(v), wrap = p < min_prec;
  if (wrap) r |= tbuf_putc(o, '(');
  switch (v->kind) {
    case VX_COLUMN:
      r |= put_fn_name(o, v->fn, v->name, v->len, v->quoted);
      break;
    case VX_NUMBER:
      if (v->lit == 'B') {
        r |= tbuf_printf(o, v->mantissa ? "TRUE" : "FALSE");
        break;
      }
      format_decimal(v->mantissa, v->scale, num);
      r |= tbuf_printf(o, "%s", num);
      break;
    case VX_ADD:
    case VX_SUB:
    case VX_MUL:
    case VX_DIV:
      r |= vx_print(v->left, p, o);
      r |= tbuf_printf(o, " %c ", v->kind == VX_ADD ? '+' : v->kind == VX_SUB ? '-' : v->kind == VX_MUL ? '*' : '/');
      r |= vx_print(v->right, p + 1, o);
      break;
    case VX_NEG:
      /* -x; -(5) and - -5, since -5 alone is a literal */
      if (v->left->kind == VX_NUMBER) {
        format_decimal(v->left->mantissa, v->left->scale, num);
        r |= tbuf_printf(o, v->left->mantissa < 0 ? "- %s" : "-(%s)", num);
      } else {
        r |= tbuf_putc(o, '-');
        r |= vx_print(v->left, 3, o);
      }
      break;
    case VX_CASE:
      r |= tbuf_printf(o, "CASE");
      for (size_t i = 0; i < v->nwhens; i++) {
        r |= tbuf_printf(o, " WHEN ");
        r |= v->whens[i].hcond ? hv_to_string(v->whens[i].hcond, o) : expr_to_string(v->whens[i].cond, o);
        r |= tbuf_printf(o, " THEN ");
        r |= vx_print(v->whens[i].then, 0, o);
      }
      if (v->right) {
        r |= tbuf_printf(o, " ELSE ");
        r |= vx_print(v->right, 0, o);
      }
      r |= tbuf_printf(o, " END");
      break;
    case VX_AGG:
      if (v->agg == SEL_COUNT_STAR) {
        r |= tbuf_printf(o, "COUNT(*)");
      } else {
        r |= tbuf_printf(o, "%s(%s", agg_names[v->agg], v->distinct ? "DISTINCT " : "");
        r |= vx_print(v->left, 0, o);
        r |= tbuf_putc(o, ')');
      }
      break;
    case VX_ABS:
      r |= tbuf_printf(o, "abs(");
      r |= vx_print(v->left, 0, o);
      r |= tbuf_putc(o, ')');
      break;
    case VX_COALESCE:
      r |= tbuf_printf(o, "coalesce(");
      for (; v->kind == VX_COALESCE; v = v->right) { /* the chain that coalesce(a, b, c) made */
        r |= vx_print(v->left, 0, o);
        r |= tbuf_printf(o, ", ");
      }
      r |= vx_print(v, 0, o);
      r |= tbuf_putc(o, ')');
      break;
    case VX_STRING:
      if (v->lit) r |= tbuf_printf(o, "%s ", v->lit == 'D' ? "DATE" : v->lit == 't' ? "TIME" : "TIMESTAMP");
      r |= put_string(o, v->name, v->len);
      break;
    case VX_NULL:
      r |= tbuf_printf(o, "NULL");
      break;
  }
  if (wrap) r |= tbuf_putc(o, ')');
  return r ? -1 : 0;
}

int vx_to_string(const vx_node *v, tbuf *o) { return vx_print(v, 0, o); }

/* Binding strength of a HAVING node: OR 1, AND 2, NOT 3, a predicate 4. */
static int hv_prec(const hv_node *h) {
  return h->kind == HV_OR ? 1 : h->kind == HV_AND ? 2 : h->kind == HV_NOT ? 3 : 4;
}

static int hv_print(const hv_node *h, int min_prec, tbuf *o) {
  static const char *const cmp[] = {"=", "<>", "<", "<=", ">", ">="};
  int r = 0, p = hv_prec(h), wrap = p < min_prec;
  if (wrap) r |= tbuf_putc(o, '(');
  switch (h->kind) {
    case HV_AND:
    case HV_OR:
      r |= hv_print(h->left, p, o);
      r |= tbuf_printf(o, h->kind == HV_AND ? " AND " : " OR ");
      r |= hv_print(h->right, p + 1, o);
      break;
    case HV_NOT:
      r |= tbuf_printf(o, "NOT ");
      r |= hv_print(h->left, 3, o);
      break;
    case HV_CMP:
      r |= vx_print(h->a, 0, o);
      r |= tbuf_printf(o, " %s ", cmp[h->op]);
      r |= vx_print(h->b, 0, o);
      break;
    case HV_BETWEEN:
      r |= vx_print(h->a, 0, o);
      r |= tbuf_printf(o, h->negated ? " NOT BETWEEN " : " BETWEEN ");
      r |= vx_print(h->b, 0, o);
      r |= tbuf_printf(o, " AND ");
      r |= vx_print(h->c, 0, o);
      break;
    case HV_IN:
      r |= vx_print(h->a, 0, o);
      r |= tbuf_printf(o, h->negated ? " NOT IN (" : " IN (");
      for (size_t i = 0; i < h->nlist; i++) {
        if (i) r |= tbuf_printf(o, ", ");
        r |= vx_print(h->list[i], 0, o);
      }
      r |= tbuf_putc(o, ')');
      break;
    case HV_IS_NULL:
      r |= vx_print(h->a, 0, o);
      r |= tbuf_printf(o, h->negated ? " IS NOT NULL" : " IS NULL");
      break;
  }
  if (wrap) r |= tbuf_putc(o, ')');
  return r ? -1 : 0;
}

int hv_to_string(const hv_node *h, tbuf *o) { return hv_print(h, 0, o); }

int select_to_string(const select_stmt *s, tbuf *o) {
  int r = tbuf_printf(o, "SELECT ");
  for (size_t i = 0; i < s->nitems; i++) {
    const sel_item *it = &s->items[i];
    if (i) r |= tbuf_printf(o, ", ");
    r |= vx_to_string(it->expr, o);
    if (it->alias) {
      r |= tbuf_printf(o, " AS ");
      r |= put_name(o, it->alias, it->alias_len, 0);
    }
  }
  if (s->from) {
    r |= tbuf_printf(o, " FROM ");
    r |= put_name(o, s->from, s->from_len, 0);
  }
  if (s->where) {
    r |= tbuf_printf(o, " WHERE ");
    r |= expr_to_string(s->where, o);
  }
  for (size_t i = 0; i < s->nkeys; i++) {
    r |= tbuf_printf(o, i ? ", " : " GROUP BY ");
    r |= put_fn_name(o, s->keys[i].fn, s->keys[i].name, s->keys[i].len, s->keys[i].quoted);
  }
  if (s->having) {
    r |= tbuf_printf(o, " HAVING ");
    r |= hv_to_string(s->having, o);
  }
  for (size_t i = 0; i < s->norder; i++) {
    r |= tbuf_printf(o, i ? ", " : " ORDER BY ");
    r |= vx_to_string(s->order[i].expr, o);
    if (s->order[i].desc) r |= tbuf_printf(o, " DESC");
    if (s->order[i].nulls_first >= 0) r |= tbuf_printf(o, s->order[i].nulls_first ? " NULLS FIRST" : " NULLS LAST");
  }
  if (s->has_limit) r |= tbuf_printf(o, " LIMIT %llu", (unsigned long long)s->limit);
  if (s->has_offset) r |= tbuf_printf(o, " OFFSET %llu", (unsigned long long)s->offset);
  return r ? -1 : 0;
}
