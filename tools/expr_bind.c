/* Binds a parsed WHERE-expression to library expressions over a table. The
 * tool checks names and types itself first, so that its messages point at the
 * offending part of the expression; the library validates again. */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"

typedef enum colkind { K_INT, K_FLOAT, K_DATE, K_STRING } colkind;

static int berr(expr_error *e, size_t pos, const char *fmt, ...) TOOL_PRINTF(3, 4);
static int berr(expr_error *e, size_t pos, const char *fmt, ...) {
  e->pos = pos;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(e->msg, sizeof e->msg, fmt, ap);
  va_end(ap);
  return -1;
}

static colkind kind_of(const tbl_column *c) {
  if (c->encoding == TBL_ENC_DICT) return K_STRING;
  if (c->logical == TBL_LOGICAL_DATE) return K_DATE;
  if (c->desc.type == PS_TYPE_FLOAT32 || c->desc.type == PS_TYPE_FLOAT64) return K_FLOAT;
  return K_INT;
}

static const char *opd_desc(opd_kind k) {
  switch (k) {
  case OPD_INT:
  case OPD_UINT: return "an integer";
  case OPD_FLOAT: return "a decimal number";
  case OPD_STRING: return "a string";
  case OPD_DATE: return "a date";
  default: return "a column";
  }
}

int expr_find_column(const tbl_table *t, const char *name, size_t len, int quoted, expr_error *err,
                     size_t pos) {
  int k = tbl_find_column(t, name, len, quoted);
  if (k == -2)
    return berr(err, pos, "column name '%.*s' is ambiguous (columns differ only in case); quote it",
                (int)(len > 200 ? 200 : len), name);
  if (k < 0) {
    tbuf names = {0};
    for (uint32_t i = 0; i < t->ncols && i < 12; i++)
      tbuf_printf(&names, "%s%s", i ? ", " : "", t->cols[i].name);
    if (t->ncols > 12) tbuf_printf(&names, ", ...");
    /* "Cash" in double quotes is a column name in SQL; people often mean the string. */
    int l = (int)(len > 200 ? 200 : len);
    if (quoted)
      berr(err, pos, "unknown column '%.*s' (columns: %.*s); a string literal takes single quotes: '%.*s'", l,
           name, (int)(names.len > 300 ? 300 : names.len), names.p ? (const char *)names.p : "", l, name);
    else
      berr(err, pos, "unknown column '%.*s' (columns: %.*s)", l, name, (int)(names.len > 300 ? 300 : names.len),
           names.p ? (const char *)names.p : "");
    tbuf_free(&names);
    return -1;
  }
  return k;
}

/* Resolves a column operand and creates its library column on first use. */
static int get_column(bind_env *env, const ast_operand *o, ps_column **col, const tbl_column **meta,
                      expr_error *err) {
  int k = expr_find_column(env->tbl, o->s, o->len, o->quoted, err, o->pos);
  if (k < 0) return -1;
  if (!env->cols[k]) {
    char msg[TOOL_ERR_SIZE];
    ps_status st = tbl_column_create(env->ctx, env->tbl, (uint32_t)k, &env->cols[k], msg, sizeof msg);
    if (st != PS_OK) return berr(err, o->pos, "%s", msg);
  }
  *col = env->cols[k];
  *meta = &env->tbl->cols[k];
  return 0;
}

/* Converts a literal for a comparison with column c. */
static int convert_literal(const tbl_column *c, const ast_operand *o, ps_literal *out, expr_error *err) {
  colkind k = kind_of(c);
  char ty[32];
  tbl_column_typename(c, ty);
  switch (o->kind) {
  case OPD_INT:
  case OPD_UINT:
  case OPD_FLOAT:
    if (k == K_STRING || k == K_DATE)
      return berr(err, o->pos, "type mismatch: column '%s' is %s, the literal is %s%s", c->name, ty,
                  opd_desc(o->kind), k == K_DATE ? " (write DATE 'yyyy-mm-dd')" : "");
    *out = o->kind == OPD_INT ? ps_lit_int(o->i) : o->kind == OPD_UINT ? ps_lit_uint(o->u) : ps_lit_float(o->f);
    return 0;
  case OPD_DATE:
    if (k != K_DATE)
      return berr(err, o->pos, "type mismatch: column '%s' is %s, the literal is a date", c->name, ty);
    *out = ps_lit_int(o->i);
    return 0;
  case OPD_STRING:
    if (k == K_DATE) { /* a date column accepts '1994-01-01' as well as DATE '1994-01-01' */
      int32_t d;
      if (parse_date(o->s, o->len, &d))
        return berr(err, o->pos, "type mismatch: column '%s' is a date and '%.*s' is not 'yyyy-mm-dd'", c->name,
                    (int)(o->len > 60 ? 60 : o->len), o->s);
      *out = ps_lit_int(d);
      return 0;
    }
    if (k != K_STRING)
      return berr(err, o->pos, "type mismatch: column '%s' is %s, the literal is a string", c->name, ty);
    *out = ps_lit_str(o->s, o->len);
    return 0;
  default:
    return berr(err, o->pos, "internal error: not a literal");
  }
}

static int lib_fail(bind_env *env, ps_status st, size_t pos, expr_error *err) {
  return berr(err, pos, "%s", lib_error(st, ps_context_last_error(env->ctx)));
}

/* x op y where at least one side is a column (literal sides are flipped). */
static int make_cmp(bind_env *env, const ast_operand *x, ps_cmp op, const ast_operand *y, size_t pos,
                    ps_expr **out, expr_error *err) {
  static const ps_cmp flipped[] = {PS_EQ, PS_NE, PS_GT, PS_GE, PS_LT, PS_LE};
  if (x->kind != OPD_COLUMN) {
    const ast_operand *t = x;
    x = y;
    y = t;
    op = flipped[op];
  }
  if (x->kind != OPD_COLUMN) return berr(err, pos, "comparison of two literals: one side must be a column");
  ps_column *a;
  const tbl_column *ma;
  if (get_column(env, x, &a, &ma, err)) return -1;
  ps_status st;
  if (y->kind == OPD_COLUMN) {
    ps_column *b;
    const tbl_column *mb;
    if (get_column(env, y, &b, &mb, err)) return -1;
    colkind ka = kind_of(ma), kb = kind_of(mb);
    if ((ka == K_STRING) != (kb == K_STRING) || (ka == K_DATE) != (kb == K_DATE)) {
      char ta[32], tb[32];
      tbl_column_typename(ma, ta);
      tbl_column_typename(mb, tb);
      return berr(err, pos, "type mismatch: cannot compare column '%s' (%s) with column '%s' (%s)", ma->name, ta,
                  mb->name, tb);
    }
    st = ps_expr_compare_columns(env->ctx, a, op, b, out);
  } else {
    ps_literal lit;
    if (convert_literal(ma, y, &lit, err)) return -1;
    st = ps_expr_compare(env->ctx, a, op, lit, out);
  }
  return st == PS_OK ? 0 : lib_fail(env, st, pos, err);
}

static int combine(bind_env *env, ast_kind k, ps_expr *l, ps_expr *r, size_t pos, ps_expr **out,
                   expr_error *err) {
  ps_status st = k == AST_AND ? ps_expr_and(env->ctx, l, r, out) : ps_expr_or(env->ctx, l, r, out);
  if (st != PS_OK) { /* operands stay ours on failure */
    ps_expr_destroy(l);
    ps_expr_destroy(r);
    return lib_fail(env, st, pos, err);
  }
  return 0;
}

static int negate(bind_env *env, ps_expr *e, size_t pos, ps_expr **out, expr_error *err) {
  ps_status st = ps_expr_not(env->ctx, e, out);
  if (st != PS_OK) {
    ps_expr_destroy(e);
    return lib_fail(env, st, pos, err);
  }
  return 0;
}

int expr_bind(bind_env *env, const ast_node *n, ps_expr **out, expr_error *err) {
  ps_expr *l = NULL, *r = NULL, *e = NULL;
  ps_column *col;
  const tbl_column *meta;
  ps_status st;
  switch (n->kind) {
  case AST_AND:
  case AST_OR:
    if (expr_bind(env, n->left, &l, err)) return -1;
    if (expr_bind(env, n->right, &r, err)) {
      ps_expr_destroy(l);
      return -1;
    }
    return combine(env, n->kind, l, r, n->pos, out, err);
  case AST_NOT:
    if (expr_bind(env, n->left, &l, err)) return -1;
    return negate(env, l, n->pos, out, err);
  case AST_CMP:
    return make_cmp(env, &n->a, n->op, &n->b, n->pos, out, err);
  case AST_BETWEEN:
    if (n->a.kind == OPD_COLUMN && n->b.kind != OPD_COLUMN && n->c.kind != OPD_COLUMN) {
      ps_literal lo, hi;
      if (get_column(env, &n->a, &col, &meta, err) || convert_literal(meta, &n->b, &lo, err) ||
          convert_literal(meta, &n->c, &hi, err))
        return -1;
      st = ps_expr_between(env->ctx, col, lo, hi, &e);
      if (st != PS_OK) return lib_fail(env, st, n->pos, err);
    } else { /* bounds that are columns: b <= a AND a <= c */
      if (make_cmp(env, &n->b, PS_LE, &n->a, n->b.pos, &l, err)) return -1;
      if (make_cmp(env, &n->a, PS_LE, &n->c, n->c.pos, &r, err)) {
        ps_expr_destroy(l);
        return -1;
      }
      if (combine(env, AST_AND, l, r, n->pos, &e, err)) return -1;
    }
    if (!n->negate) {
      *out = e;
      return 0;
    }
    return negate(env, e, n->pos, out, err);
  case AST_IN: {
    if (get_column(env, &n->a, &col, &meta, err)) return -1;
    ps_literal *lits = calloc(n->nlist ? n->nlist : 1, sizeof *lits);
    if (!lits) return berr(err, n->pos, "out of memory");
    for (size_t i = 0; i < n->nlist; i++)
      if (convert_literal(meta, &n->list[i], &lits[i], err)) {
        free(lits);
        return -1;
      }
    st = ps_expr_in(env->ctx, col, lits, n->nlist, &e);
    free(lits);
    if (st != PS_OK) return lib_fail(env, st, n->pos, err);
    if (!n->negate) {
      *out = e;
      return 0;
    }
    return negate(env, e, n->pos, out, err);
  }
  case AST_LIKE:
    if (get_column(env, &n->a, &col, &meta, err)) return -1;
    if (kind_of(meta) != K_STRING) {
      char ty[32];
      tbl_column_typename(meta, ty);
      return berr(err, n->a.pos, "type mismatch: LIKE needs a string column; '%s' is %s", meta->name, ty);
    }
    st = ps_expr_like(env->ctx, col, n->b.s, n->b.len, n->escape, n->negate, out);
    return st == PS_OK ? 0 : lib_fail(env, st, n->b.pos, err);
  case AST_ISNULL:
    if (get_column(env, &n->a, &col, &meta, err)) return -1;
    st = ps_expr_is_null(env->ctx, col, n->negate, out);
    return st == PS_OK ? 0 : lib_fail(env, st, n->pos, err);
  }
  return berr(err, n->pos, "internal error: unknown node");
}
