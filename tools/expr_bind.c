/* Binds a parsed WHERE-expression to library expressions over a table. The
 * tool checks names and types itself first, so that its messages point at the
 * offending part of the expression; the library validates again. */
#include <stdlib.h>
#include <string.h>

#include "expr.h"

typedef enum colkind { K_INT, K_FLOAT, K_DATE, K_STRING, K_TIMESTAMP, K_TIME, K_BOOL } colkind;

static colkind kind_of(const tbl_column *c) {
  if (c->encoding == TBL_ENC_DICT) return K_STRING;
  if (c->logical == TBL_LOGICAL_DATE) return K_DATE;
  if (c->logical == TBL_LOGICAL_TIMESTAMP) return K_TIMESTAMP;
  if (c->logical == TBL_LOGICAL_TIME) return K_TIME;
  if (c->logical == TBL_LOGICAL_BOOLEAN) return K_BOOL;
  if (c->desc.type == PS_TYPE_FLOAT32 || c->desc.type == PS_TYPE_FLOAT64) return K_FLOAT;
  return K_INT;
}

static const char *opd_desc(opd_kind k) {
  switch (k) {
  case OPD_INT:
  case OPD_UINT: return "an integer";
  case OPD_FLOAT: return "a number with an exponent";
  case OPD_DECIMAL: return "a decimal number";
  case OPD_STRING: return "a string";
  case OPD_DATE: return "a date";
  case OPD_TIMESTAMP: return "a timestamp";
  case OPD_TIME: return "a time";
  case OPD_BOOL: return "a boolean";
  default: return "a column";
  }
}

int expr_find_column(const tbl_table *t, const char *name, size_t len, int quoted, expr_error *err,
                     size_t pos) {
  int k = tbl_find_column(t, name, len, quoted);
  if (k == -2)
    return sql_fail(err, NULL, pos, "column name '%.*s' is ambiguous (columns differ only in case); quote it",
                    (int)(len > 200 ? 200 : len), name);
  if (k < 0) {
    tbuf names = {0};
    for (uint32_t i = 0; i < t->ncols && i < 12; i++)
      tbuf_printf(&names, "%s%s", i ? ", " : "", t->cols[i].name);
    if (t->ncols > 12) tbuf_printf(&names, ", ...");
    /* "Cash" in double quotes is a column name in SQL; people often mean the string. */
    int l = (int)(len > 200 ? 200 : len);
    if (quoted)
      sql_fail(err, NULL, pos, "unknown column '%.*s' (columns: %.*s); a string literal takes single quotes: '%.*s'", l,
               name, (int)(names.len > 300 ? 300 : names.len), names.p ? (const char *)names.p : "", l, name);
    else
      sql_fail(err, NULL, pos, "unknown column '%.*s' (columns: %.*s)", l, name,
               (int)(names.len > 300 ? 300 : names.len), names.p ? (const char *)names.p : "");
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
    if (st != PS_OK) return sql_fail(err, NULL, o->pos, "%s", msg);
  }
  *col = env->cols[k];
  *meta = &env->tbl->cols[k];
  return 0;
}

/* A point in time (seconds, nanoseconds) in a date or timestamp column's
 * units; a time of day in a time column's. *inexact: the literal lies
 * strictly between *out and *out + 1 (finer than the column's unit). */
static int time_literal(const tbl_column *c, colkind k, const ast_operand *o, int64_t sec, int32_t ns,
                        ps_literal *out, int *inexact, expr_error *err) {
  int64_t v;
  int r;
  if (k == K_DATE) {
    v = sec / 86400;
    if (sec % 86400 < 0) v--; /* floor */
    r = sec - v * 86400 != 0 || ns != 0;
  } else {
    r = time_to_units(sec, ns, (int)c->unit, &v);
    if (r < 0)
      return sql_fail(err, NULL, o->pos,
                      "the literal is outside the range of column '%s' (64-bit count of 10^-%u seconds)", c->name,
                      c->unit);
  }
  *out = ps_lit_int(v);
  *inexact = r;
  return 0;
}

/* For literal comparisons on a decimal column: the same packed data seen as
 * the library's PS_TYPE_DECIMAL, where integer and decimal literals compare
 * exactly in code space (a float column would compare them as doubles). Kept
 * as it is when there is no cache, the column is not a decimal, or a literal
 * is a double (written with an exponent: compared as a double, as SQL does). */
static int literal_column(bind_env *env, const ast_operand *x, const ast_operand *lits, size_t nlits,
                          ps_column **col, const tbl_column **meta, expr_error *err) {
  if (get_column(env, x, col, meta, err)) return -1;
  if (!env->dec_cols || (*meta)->logical != TBL_LOGICAL_DECIMAL) return 0;
  for (size_t i = 0; i < nlits; i++)
    if (lits[i].kind != OPD_INT && lits[i].kind != OPD_UINT && lits[i].kind != OPD_DECIMAL) return 0;
  int k = (int)(*meta - env->tbl->cols);
  if (!env->dec_cols[k]) {
    ps_for_desc d = (*meta)->desc;
    d.type = PS_TYPE_DECIMAL;
    ps_status st = tbl_for_create(env->ctx, env->tbl, &d, &env->dec_cols[k]);
    if (st != PS_OK)
      return sql_fail(err, NULL, x->pos, "column '%s': %s", (*meta)->name,
                      lib_error(st, ps_context_last_error(env->ctx)));
  }
  *col = env->dec_cols[k];
  return 0;
}

/* Converts a literal for a comparison with column c. Dates, timestamps and
 * times compare exactly: *inexact is set when the literal falls between two
 * values of the column (the literal is then the one below). */
static int convert_literal(const tbl_column *c, const ast_operand *o, ps_literal *out, int *inexact,
                           expr_error *err) {
  colkind k = kind_of(c);
  char ty[32];
  tbl_column_typename(c, ty);
  int timelike = k == K_DATE || k == K_TIMESTAMP || k == K_TIME;
  *inexact = 0;
  switch (o->kind) {
  case OPD_BOOL:
    if (k != K_BOOL)
      return sql_fail(err, NULL, o->pos, "type mismatch: column '%s' is %s, the literal is a boolean", c->name, ty);
    *out = ps_lit_int(o->i);
    return 0;
  case OPD_INT:
  case OPD_UINT:
  case OPD_FLOAT:
  case OPD_DECIMAL:
    if (k == K_STRING || timelike || k == K_BOOL)
      return sql_fail(err, NULL, o->pos, "type mismatch: column '%s' is %s, the literal is %s%s", c->name, ty,
                      opd_desc(o->kind),
                      k == K_DATE        ? " (write DATE 'yyyy-mm-dd')"
                      : k == K_TIMESTAMP ? " (write TIMESTAMP 'yyyy-mm-dd hh:mm:ss')"
                      : k == K_TIME      ? " (write TIME 'hh:mm:ss')"
                      : k == K_BOOL      ? " (write TRUE or FALSE)"
                                         : "");
    *out = o->kind == OPD_INT    ? ps_lit_int(o->i)
           : o->kind == OPD_UINT ? ps_lit_uint(o->u)
           : o->kind == OPD_DECIMAL ? o->dec
                                 : ps_lit_float(o->f);
    return 0;
  case OPD_DATE:
  case OPD_TIMESTAMP:
    if (k != K_DATE && k != K_TIMESTAMP)
      return sql_fail(err, NULL, o->pos, "type mismatch: column '%s' is %s, the literal is %s", c->name, ty,
                      opd_desc(o->kind));
    if (o->kind == OPD_DATE) return time_literal(c, k, o, o->i * 86400, 0, out, inexact, err);
    return time_literal(c, k, o, o->i, o->ns, out, inexact, err);
  case OPD_TIME:
    if (k != K_TIME)
      return sql_fail(err, NULL, o->pos, "type mismatch: column '%s' is %s, the literal is a time", c->name, ty);
    return time_literal(c, k, o, o->i, o->ns, out, inexact, err);
  case OPD_STRING:
    if (timelike) { /* a date, timestamp or time column takes its text in quotes as well */
      int64_t sec;
      int32_t ns, d;
      int dg;
      int l = (int)(o->len > 60 ? 60 : o->len);
      if (k == K_DATE && !parse_date(o->s, o->len, &d)) {
        *out = ps_lit_int(d);
        return 0;
      }
      if (k == K_TIME ? parse_time(o->s, o->len, &sec, &ns, &dg) : parse_timestamp(o->s, o->len, &sec, &ns, &dg, NULL))
        return sql_fail(err, NULL, o->pos, "type mismatch: column '%s' is %s and '%.*s' is not %s", c->name, ty, l,
                        o->s,
                        k == K_DATE        ? "'yyyy-mm-dd'"
                        : k == K_TIMESTAMP ? "'yyyy-mm-dd hh:mm:ss[.fff]'"
                                           : "'hh:mm:ss[.fff]'");
      return time_literal(c, k, o, sec, ns, out, inexact, err);
    }
    if (k != K_STRING)
      return sql_fail(err, NULL, o->pos, "type mismatch: column '%s' is %s, the literal is a string%s", c->name, ty,
                      k == K_BOOL ? " (write TRUE or FALSE)" : "");
    *out = ps_lit_str(o->s, o->len);
    return 0;
  default:
    return sql_fail(err, NULL, o->pos, "internal error: not a literal");
  }
}

static int lib_fail(bind_env *env, ps_status st, size_t pos, expr_error *err) {
  return sql_fail(err, NULL, pos, "%s", lib_error(st, ps_context_last_error(env->ctx)));
}

static int combine(bind_env *env, ast_kind k, ps_expr *l, ps_expr *r, size_t pos, ps_expr **out,
                   expr_error *err);
static int negate(bind_env *env, ps_expr *e, size_t pos, ps_expr **out, expr_error *err);

/* a op L where L lies strictly between the column values k and k + 1:
 * < and <= are <= k, > and >= are > k; = holds for no value (k < a < k + 1,
 * so that a null row stays UNKNOWN), != is its negation. */
static int cmp_between_units(bind_env *env, ps_column *a, ps_cmp op, int64_t k, size_t pos, ps_expr **out,
                             expr_error *err) {
  ps_status st;
  if (op == PS_LT || op == PS_LE) {
    st = ps_expr_compare(env->ctx, a, PS_LE, ps_lit_int(k), out);
  } else if (op == PS_GT || op == PS_GE) {
    st = ps_expr_compare(env->ctx, a, PS_GT, ps_lit_int(k), out);
  } else {
    ps_expr *l, *r, *e;
    st = ps_expr_compare(env->ctx, a, PS_GT, ps_lit_int(k), &l);
    if (st != PS_OK) return lib_fail(env, st, pos, err);
    st = ps_expr_compare(env->ctx, a, PS_LT, ps_lit_int(k + 1), &r);
    if (st != PS_OK) {
      ps_expr_destroy(l);
      return lib_fail(env, st, pos, err);
    }
    if (combine(env, AST_AND, l, r, pos, &e, err)) return -1;
    if (op == PS_EQ) {
      *out = e;
      return 0;
    }
    return negate(env, e, pos, out, err);
  }
  return st == PS_OK ? 0 : lib_fail(env, st, pos, err);
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
  if (x->kind != OPD_COLUMN) return sql_fail(err, NULL, pos, "comparison of two literals: one side must be a column");
  ps_column *a;
  const tbl_column *ma;
  if (y->kind == OPD_COLUMN ? get_column(env, x, &a, &ma, err) : literal_column(env, x, y, 1, &a, &ma, err))
    return -1;
  ps_status st;
  if (y->kind == OPD_COLUMN) {
    ps_column *b;
    const tbl_column *mb;
    if (get_column(env, y, &b, &mb, err)) return -1;
    colkind ka = kind_of(ma), kb = kind_of(mb);
    int numa = ka == K_INT || ka == K_FLOAT, numb = kb == K_INT || kb == K_FLOAT;
    /* Dates, timestamps and times compare only with their own kind, in the same unit. */
    if (numa != numb || (!numa && ka != kb) || ((ka == K_TIMESTAMP || ka == K_TIME) && ma->unit != mb->unit)) {
      char ta[32], tb[32];
      tbl_column_typename(ma, ta);
      tbl_column_typename(mb, tb);
      return sql_fail(err, NULL, pos, "type mismatch: cannot compare column '%s' (%s) with column '%s' (%s)", ma->name,
                      ta, mb->name, tb);
    }
    st = ps_expr_compare_columns(env->ctx, a, op, b, out);
  } else {
    ps_literal lit;
    int inexact;
    if (convert_literal(ma, y, &lit, &inexact, err)) return -1;
    if (inexact) return cmp_between_units(env, a, op, lit.v.i, pos, out, err);
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

/* The column of a leaf "column = literal" (either side) or "column IN (...)",
 * with its literals; -1 for any other node. */
static int eq_leaf(const bind_env *env, const ast_node *n, const ast_operand **col, const ast_operand **lits,
                   size_t *nlits) {
  const ast_operand *c, *l;
  if (n->a.fn || n->b.fn) {
    return -1; /* a date function: expr_bind rewrites it */
  } else if (n->kind == AST_IN && !n->negate && n->a.kind == OPD_COLUMN) {
    c = &n->a;
    *lits = n->list;
    *nlits = n->nlist;
  } else if (n->kind == AST_CMP && n->op == PS_EQ && (n->a.kind == OPD_COLUMN) != (n->b.kind == OPD_COLUMN)) {
    c = n->a.kind == OPD_COLUMN ? &n->a : &n->b;
    l = n->a.kind == OPD_COLUMN ? &n->b : &n->a;
    *lits = l;
    *nlits = 1;
  } else {
    return -1;
  }
  expr_error e;
  *col = c;
  return expr_find_column(env->tbl, c->s, c->len, c->quoted, &e, c->pos); /* errors: reported when bound */
}

/* An OR of equalities on one column is that column IN (the literals). The
 * library joins comparisons on one column only where a subtree holds nothing
 * else; gathering them here, wherever they stand in the OR ("x = 1 OR y = 2
 * OR x = 3"), keeps long chains within the predicate's instruction limit.
 * Same three-valued result: a null x is UNKNOWN either way. The other
 * operands of the OR are bound as they are; the parts are ORed as a balanced
 * tree. */
static int bind_or(bind_env *env, const ast_node *n, ps_expr **out, expr_error *err) {
  size_t cap = 16, nl = 0, sp = 0;
  const ast_node **leaves = malloc(cap * sizeof *leaves), **stack = malloc(cap * sizeof *stack);
  ps_expr **parts = NULL;
  ast_operand *merged = NULL;
  int *group = NULL, rc = -1;
  size_t np = 0;
  if (!leaves || !stack) goto oom;
  stack[sp++] = n;
  while (sp) { /* the OR subtree's operands, left to right */
    const ast_node *x = stack[--sp];
    if (x->kind == AST_OR) {
      if (sp + 2 > cap || nl + 2 > cap) {
        cap *= 2;
        const ast_node **a = realloc(leaves, cap * sizeof *a), **b = a ? realloc(stack, cap * sizeof *b) : NULL;
        if (a) leaves = a;
        if (!a || !b) goto oom;
        stack = b;
      }
      stack[sp++] = x->right;
      stack[sp++] = x->left;
    } else {
      if (nl + 1 > cap) {
        cap *= 2;
        const ast_node **a = realloc(leaves, cap * sizeof *a), **b = a ? realloc(stack, cap * sizeof *b) : NULL;
        if (a) leaves = a;
        if (!a || !b) goto oom;
        stack = b;
      }
      leaves[nl++] = x;
    }
  }
  group = malloc(nl * sizeof *group);
  parts = calloc(nl, sizeof *parts);
  if (!group || !parts) goto oom;
  size_t total = 0;
  for (size_t i = 0; i < nl; i++) {
    const ast_operand *c, *l;
    size_t k = 0;
    group[i] = eq_leaf(env, leaves[i], &c, &l, &k);
    if (group[i] >= 0) total += k;
  }
  merged = malloc((total ? total : 1) * sizeof *merged);
  if (!merged) goto oom;
  size_t used = 0;
  for (size_t i = 0; i < nl; i++) {
    if (group[i] == -2) continue; /* merged into an earlier leaf's IN */
    int g = group[i];
    size_t members = 0;
    for (size_t j = i; g >= 0 && j < nl; j++) members += group[j] == g;
    if (g < 0 || members < 2) {
      if (expr_bind(env, leaves[i], &parts[np], err)) goto done;
      np++;
      continue;
    }
    ast_node in;
    memset(&in, 0, sizeof in);
    in.kind = AST_IN;
    in.pos = leaves[i]->pos;
    in.list = merged + used;
    for (size_t j = i; j < nl; j++) {
      if (group[j] != g) continue;
      const ast_operand *c, *l;
      size_t k;
      eq_leaf(env, leaves[j], &c, &l, &k);
      if (j == i) in.a = *c;
      memcpy(merged + used, l, k * sizeof *l);
      used += k;
      in.nlist += k;
      if (j != i) group[j] = -2;
    }
    if (expr_bind(env, &in, &parts[np], err)) goto done;
    np++;
  }
  while (np > 1) { /* balanced: pairs of neighbours, level by level */
    size_t k = 0;
    for (size_t i = 0; i + 1 < np; i += 2) {
      ps_expr *e;
      ps_expr *l = parts[i], *r = parts[i + 1];
      parts[i] = parts[i + 1] = NULL;
      if (combine(env, AST_OR, l, r, n->pos, &e, err)) goto done;
      parts[k++] = e;
    }
    if (np % 2) {
      parts[k++] = parts[np - 1];
      parts[np - 1] = NULL;
    }
    for (size_t i = k; i < np; i++) parts[i] = NULL;
    np = k;
  }
  *out = parts[0];
  parts[0] = NULL;
  rc = 0;
  goto done;
oom:
  sql_fail(err, NULL, n->pos, "out of memory");
done:
  for (size_t i = 0; parts && i < nl; i++) ps_expr_destroy(parts[i]);
  free(parts);
  free(group);
  free(merged);
  free(leaves);
  free(stack);
  return rc;
}

/* ---- date functions in WHERE ----
 * A monotone function of a date or timestamp column (date_trunc to any part,
 * year) compared with literals is a range on the column: f(x) >= L is x >=
 * lower(L), the first instant whose f is at least L, and f(x) > L is x >=
 * upper(L), the first whose f is past L; =, <, <=, <> and BETWEEN follow.
 * No kernel change, and zone maps prune as on any range. The other fields
 * (month(d) = 6) are not monotone: refused. Instants are in UTC. */

static int64_t fdiv64(int64_t a, int64_t d) { return a / d - (a % d < 0); }

/* The first second of the unit (fn's part) after the one holding sec, and
 * whether sec (with ns) is that unit's first instant. */
static int64_t unit_next(int fn, int64_t sec, int32_t ns, int *aligned) {
  static const int64_t len[] = {0, 1, 60, 3600, 86400, 7 * 86400};
  int64_t start, next;
  if (fn <= 5) {
    const int64_t o = fn == 5 ? 4 * 86400 : 0; /* weeks start on Monday, 1970-01-05 */
    start = fdiv64(sec - o, len[fn]) * len[fn] + o;
    next = start + len[fn];
  } else {
    int64_t y;
    int m, d;
    civil_from_days(fdiv64(sec, 86400), &y, &m, &d);
    int m0 = fn == 6 ? m : fn == 7 ? (m - 1) / 3 * 3 + 1 : 1, step = fn == 6 ? 1 : fn == 7 ? 3 : 12;
    start = days_from_civil(y, m0, 1) * 86400;
    int m1 = m0 + step;
    next = days_from_civil(y + (m1 > 12), m1 > 12 ? m1 - 12 : m1, 1) * 86400;
  }
  *aligned = start == sec && ns == 0;
  return next;
}

/* lower and upper (above) of literal o under fn, in seconds. */
static int date_fn_bounds(int fn, const ast_operand *col, const ast_operand *o, int64_t *lower, int64_t *upper,
                          expr_error *err) {
  if (fn == EXPR_FN_YEAR) {
    if (o->kind != OPD_INT || o->i < -100000 || o->i > 100000)
      return sql_fail(err, NULL, o->pos, "year(%.*s) compares with a year (an integer from -100000 to 100000)",
                      (int)col->len, col->s);
    *lower = days_from_civil(o->i, 1, 1) * 86400;
    *upper = days_from_civil(o->i + 1, 1, 1) * 86400;
    return 0;
  }
  int64_t sec;
  int32_t ns = 0;
  int digits, date_only;
  if (o->kind == OPD_DATE) {
    sec = o->i * 86400;
  } else if (o->kind == OPD_TIMESTAMP) {
    sec = o->i, ns = o->ns;
  } else if (o->kind != OPD_STRING || parse_timestamp(o->s, o->len, &sec, &ns, &digits, &date_only)) {
    return sql_fail(err, NULL, o->pos, "date_trunc('%s', %.*s) compares with a date or a timestamp",
                    expr_date_fn_name(fn), (int)col->len, col->s);
  }
  int aligned;
  *upper = unit_next(fn, sec, ns, &aligned);
  *lower = aligned ? sec : *upper;
  return 0;
}

static int date_fn_bind(bind_env *env, const ast_node *n, ps_expr **out, expr_error *err) {
  const ast_operand *c = &n->a;
  const int fn = c->fn;
  const char *what = fn <= EXPR_FN_TRUNC_LAST ? "date_trunc" : "extract";
  if (!fn || n->b.fn || n->c.fn || (n->kind == AST_CMP && n->b.kind == OPD_COLUMN) ||
      (n->kind == AST_BETWEEN && (n->b.kind == OPD_COLUMN || n->c.kind == OPD_COLUMN)))
    return sql_fail(err, NULL, n->pos, "a date function in WHERE compares with literals only");
  ps_column *col;
  const tbl_column *meta = NULL;
  if (get_column(env, c, &col, &meta, err)) return -1;
  const int sub_day = fn <= 3 || (fn >= 13 && fn <= 15);
  if (meta->logical != TBL_LOGICAL_TIMESTAMP && (meta->logical != TBL_LOGICAL_DATE || sub_day))
    return sql_fail(err, NULL, c->pos, "%s(%s) takes a %s column; '%s' is not one", what, expr_date_fn_name(fn),
                    sub_day ? "timestamp" : "date or timestamp", meta->name);
  ast_node leaf[2], both, not_;
  memset(leaf, 0, sizeof leaf);
  memset(&both, 0, sizeof both);
  memset(&not_, 0, sizeof not_);
  const ast_node *root = &both;
  if (n->kind == AST_ISNULL) { /* f(x) is NULL exactly where x is */
    leaf[0] = *n;
    leaf[0].a.fn = 0;
    return expr_bind(env, &leaf[0], out, err);
  }
  if (fn > EXPR_FN_TRUNC_LAST && fn != EXPR_FN_YEAR)
    return sql_fail(err, NULL, n->pos,
                    "extract(%s) in WHERE is not supported: it is not monotone (only date_trunc and year compare, "
                    "as ranges of the column); GROUP BY it and use HAVING, or compare %.*s with a range",
                    expr_date_fn_name(fn), (int)c->len, c->s);
  if (n->kind != AST_CMP && n->kind != AST_BETWEEN)
    return sql_fail(err, NULL, n->pos, "a date function in WHERE takes = <> < <= > >= and BETWEEN");
  int64_t lo_l, lo_u, hi_l, hi_u;
  if (date_fn_bounds(fn, c, &n->b, &lo_l, &lo_u, err)) return -1;
  if (n->kind == AST_BETWEEN && date_fn_bounds(fn, c, &n->c, &hi_l, &hi_u, err)) return -1;
  for (int i = 0; i < 2; i++) {
    leaf[i].kind = AST_CMP;
    leaf[i].pos = n->pos;
    leaf[i].escape = -1;
    leaf[i].a = *c;
    leaf[i].a.fn = 0;
    leaf[i].b.kind = OPD_TIMESTAMP;
    leaf[i].b.pos = n->b.pos;
  }
  both.kind = AST_AND;
  both.pos = n->pos;
  both.left = &leaf[0];
  both.right = &leaf[1];
  leaf[0].op = PS_GE, leaf[1].op = PS_LT; /* the range [leaf0, leaf1) */
  int negate = n->negate;
  if (n->kind == AST_BETWEEN) {
    leaf[0].b.i = lo_l, leaf[1].b.i = hi_u;
  } else {
    switch (n->op) {
      case PS_EQ:
        leaf[0].b.i = lo_l, leaf[1].b.i = lo_u;
        break;
      case PS_NE:
        leaf[0].b.i = lo_l, leaf[1].b.i = lo_u, negate = 1;
        break;
      case PS_GE:
        leaf[0].b.i = lo_l, root = &leaf[0];
        break;
      case PS_GT:
        leaf[0].b.i = lo_u, root = &leaf[0];
        break;
      case PS_LT:
        leaf[1].b.i = lo_l, root = &leaf[1];
        break;
      case PS_LE:
        leaf[1].b.i = lo_u, root = &leaf[1];
        break;
    }
  }
  if (negate) {
    not_.kind = AST_NOT;
    not_.pos = n->pos;
    not_.left = (ast_node *)root;
    root = &not_;
  }
  return expr_bind(env, root, out, err);
}

int expr_bind(bind_env *env, const ast_node *n, ps_expr **out, expr_error *err) {
  ps_expr *l = NULL, *r = NULL, *e = NULL;
  if (n->kind != AST_AND && n->kind != AST_OR && n->kind != AST_NOT && (n->a.fn || n->b.fn || n->c.fn))
    return date_fn_bind(env, n, out, err);
  ps_column *col;
  const tbl_column *meta = NULL;
  ps_status st;
  switch (n->kind) {
  case AST_OR:
    return bind_or(env, n, out, err);
  case AST_AND:
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
      int lo_inexact, hi_inexact;
      ast_operand bounds[2] = {n->b, n->c};
      if (literal_column(env, &n->a, bounds, 2, &col, &meta, err) ||
          convert_literal(meta, &n->b, &lo, &lo_inexact, err) ||
          convert_literal(meta, &n->c, &hi, &hi_inexact, err))
        return -1;
      /* Bounds between two column values: the first value above lo, the last below hi. */
      if (lo_inexact) lo.v.i++;
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
    if (literal_column(env, &n->a, n->list, n->nlist, &col, &meta, err)) return -1;
    ps_literal *lits = calloc(n->nlist ? n->nlist : 1, sizeof *lits);
    if (!lits) return sql_fail(err, NULL, n->pos, "out of memory");
    size_t nl = 0;
    int64_t dropped = 0;
    for (size_t i = 0; i < n->nlist; i++) {
      int inexact;
      if (convert_literal(meta, &n->list[i], &lits[nl], &inexact, err)) {
        free(lits);
        return -1;
      }
      /* A value between two column values equals no row: left out of the list. */
      if (inexact)
        dropped = lits[nl].v.i;
      else
        nl++;
    }
    if (nl == 0 && n->nlist > 0) {
      free(lits);
      if (cmp_between_units(env, col, PS_EQ, dropped, n->pos, &e, err)) return -1;
    } else {
      st = ps_expr_in(env->ctx, col, lits, nl, &e);
      free(lits);
      if (st != PS_OK) return lib_fail(env, st, n->pos, err);
    }
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
      return sql_fail(err, NULL, n->a.pos, "type mismatch: LIKE needs a string column; '%s' is %s", meta->name, ty);
    }
    st = ps_expr_like(env->ctx, col, n->b.s, n->b.len, n->escape, n->negate, out);
    return st == PS_OK ? 0 : lib_fail(env, st, n->b.pos, err);
  case AST_ISNULL:
    if (get_column(env, &n->a, &col, &meta, err)) return -1;
    st = ps_expr_is_null(env->ctx, col, n->negate, out);
    return st == PS_OK ? 0 : lib_fail(env, st, n->pos, err);
  }
  return sql_fail(err, NULL, n->pos, "internal error: unknown node");
}
