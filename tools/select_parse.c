/* Recursive-descent parser for SELECT statements (see select.h), over sql_lex.c's tokens.
 * WHERE clauses and CASE conditions are cut out of the statement here and
 * handed to expr_parse, whose positions are then moved to the statement's. */
#include <stdlib.h>
#include <string.h>

#include "select_parser.h"

void sel_describe(const sparser *p, const stok *t, char *out, size_t n) { sql_describe(p->src, t, out, n); }

int sel_lex(sparser *p) {
  sql_error e;
  p->prev_end = p->tok.pos + p->tok.len;
  if (sql_lex(p->src, p->len, &p->pos, &p->tok, SQL_LEX_STATEMENT, &e))
    return sql_fail(p->err, &p->failed, e.pos, "%s", e.msg);
  return 0;
}

int sel_is_kw(const sparser *p, const char *kw) { return sql_tok_is_kw(p->src, &p->tok, kw); }

/* Words that cannot be unquoted column names or aliases: this grammar's and
 * the WHERE-expression's. */
static const char *const reserved[] = {"SELECT", "FROM",  "WHERE",   "GROUP", "BY",     "AS",     "CASE",     "WHEN",
                                       "THEN",   "ELSE",  "END",     "ORDER", "HAVING", "LIMIT",  "DISTINCT", "AND",
                                       "OR",     "NOT",   "BETWEEN", "IN",    "LIKE",   "ESCAPE", "IS",       "NULL",
                                       "TRUE",   "FALSE", "OFFSET",  "ASC",   "DESC",   "NULLS"};

int select_word_reserved(const char *s, size_t len) {
  for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
    if (sql_word_eq(s, len, reserved[i])) return 1;
  return 0;
}

int sel_tok_reserved(const sparser *p) {
  return p->tok.kind == TK_IDENT && select_word_reserved(p->src + p->tok.pos, p->tok.len);
}

static const char *const aggregates[] = {"COUNT", "SUM", "MIN", "MAX", "AVG"};
static const sel_agg aggregate_kinds[] = {SEL_COUNT, SEL_SUM, SEL_MIN, SEL_MAX, SEL_AVG};

static int word_aggregate(const char *s, size_t len) {
  for (int i = 0; i < 5; i++)
    if (sql_word_eq(s, len, aggregates[i])) return i;
  return -1;
}

static int tok_aggregate(const sparser *p) {
  return p->tok.kind == TK_IDENT ? word_aggregate(p->src + p->tok.pos, p->tok.len) : -1;
}

/* The token after the current one, not consumed (TK_EOF where it does not lex). */
static stok speek(const sparser *p) {
  stok t;
  size_t pos = p->pos;
  sql_error e;
  if (sql_lex(p->src, p->len, &pos, &t, SQL_LEX_STATEMENT, &e)) {
    t.kind = TK_EOF;
    t.pos = p->len;
    t.len = 0;
  }
  return t;
}

void *sel_alloc(sparser *p, size_t size) {
  void *m = expr_arena_alloc(p->arena, size);
  if (!m) sql_fail(p->err, &p->failed, p->tok.pos, "out of memory");
  return m;
}

/* A quoted token's contents with doubled quotes undone, in the arena. */
static const char *sunquote(sparser *p, const stok *t, size_t *len) {
  char *out = sel_alloc(p, t->len + 1);
  if (!out) return NULL;
  *len = sql_unquote(p->src, t, out);
  return out;
}

/* A name: an unreserved identifier or a "quoted identifier". */
static int parse_name(sparser *p, const char *what, const char **name, size_t *len, int *quoted) {
  char d[64];
  if (p->tok.kind == TK_QIDENT) {
    *name = sunquote(p, &p->tok, len);
    if (!*name) return -1;
    if (*len == 0) return sql_fail(p->err, &p->failed, p->tok.pos, "empty quoted identifier");
    *quoted = 1;
    return sel_lex(p);
  }
  if (p->tok.kind == TK_IDENT && !sel_tok_reserved(p)) {
    *name = p->src + p->tok.pos;
    *len = p->tok.len;
    *quoted = 0;
    return sel_lex(p);
  }
  sel_describe(p, &p->tok, d, sizeof d);
  return sql_fail(p->err, &p->failed, p->tok.pos, "expected %s, found %s%s", what,
                  sel_tok_reserved(p) ? "keyword " : "", d);
}

/* ---- WHERE-expressions inside the statement ---- */

/* Moves every position of a parsed WHERE-expression by off bytes (it was
 * parsed from a slice starting there). The tree is balanced and its nesting
 * bounded by EXPR_MAX_DEPTH, so the recursion is shallow. */
static void shift_operand(ast_operand *o, size_t off) {
  o->pos += off;
  o->end += off;
}

static void shift_ast(ast_node *n, size_t off) {
  if (!n) return;
  n->pos += off;
  shift_operand(&n->a, off);
  shift_operand(&n->b, off);
  shift_operand(&n->c, off);
  for (size_t i = 0; i < n->nlist; i++) shift_operand(&n->list[i], off);
  shift_ast(n->left, off);
  shift_ast(n->right, off);
}

/* expr_parse's one message that names a column of its slice ("expected ')'
 * to close the '(' at column 5"): make it the statement's column. */
static void rebase_message(char *msg, size_t size, size_t off) {
  const char *key = "the '(' at column ";
  char *at = strstr(msg, key);
  if (!at) return;
  char *num = at + strlen(key), *rest;
  unsigned long long col = strtoull(num, &rest, 10);
  if (rest == num) return;
  char tail[512];
  snprintf(tail, sizeof tail, "%s", rest);
  snprintf(num, size - (size_t)(num - msg), "%llu%s", col + (unsigned long long)off, tail);
}

/* Parses the WHERE-expression that starts at the current token and ends
 * before the first token, outside parentheses, for which stop() is true.
 * what names the clause for messages. */
static ast_node *parse_condition(sparser *p, int (*stop)(const sparser *), const char *what) {
  char d[64];
  size_t start = p->tok.pos;
  int depth = 0;
  if (stop(p) || p->tok.kind == TK_EOF) {
    sel_describe(p, &p->tok, d, sizeof d);
    sql_fail(p->err, &p->failed, p->tok.pos, "expected a condition after %s, found %s", what, d);
    return NULL;
  }
  while (p->tok.kind != TK_EOF && !(depth == 0 && stop(p))) {
    if (p->tok.kind == TK_LPAREN) depth++;
    if (p->tok.kind == TK_RPAREN) depth--;
    if (sel_lex(p)) return NULL;
  }
  size_t end = p->tok.pos;
  while (end > start && sql_is_space((unsigned char)p->src[end - 1])) end--;
  ast_node *n = NULL;
  expr_error e;
  if (expr_parse(p->src + start, end - start, p->arena, &n, &e)) {
    rebase_message(e.msg, sizeof e.msg, start);
    const char *eoi = strstr(e.msg, "found end of input");
    if (e.pos >= end - start && eoi && p->tok.kind != TK_EOF) {
      /* The slice ended where the clause does: name what ends it. */
      sel_describe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "%.*sfound %s%s", (int)(eoi - e.msg), e.msg,
               sel_tok_reserved(p) ? "keyword " : "", d);
    } else {
      sql_fail(p->err, &p->failed, start + e.pos, "%s", e.msg);
    }
    return NULL;
  }
  shift_ast(n, start);
  return n;
}

static int stop_where(const sparser *p) {
  return p->tok.kind == TK_SEMI || sel_is_kw(p, "GROUP") || sel_is_kw(p, "ORDER") || sel_is_kw(p, "HAVING") ||
         sel_is_kw(p, "LIMIT") || sel_is_kw(p, "OFFSET");
}

/* A WHEN condition ends at THEN; END, ELSE, WHEN, a closing parenthesis or
 * ';' first mean THEN is missing (reported by the caller). */
static int stop_when(const sparser *p) {
  return p->tok.kind == TK_SEMI || p->tok.kind == TK_RPAREN || sel_is_kw(p, "THEN") || sel_is_kw(p, "END") ||
         sel_is_kw(p, "ELSE") || sel_is_kw(p, "WHEN");
}

/* ---- value expressions ---- */

static vx_node *new_vx(sparser *p, vx_kind k, size_t pos) {
  if (++p->nodes > SELECT_MAX_NODES) {
    sql_fail(p->err, &p->failed, p->tok.pos, "the statement's value expressions have more than %d parts",
             SELECT_MAX_NODES);
    return NULL;
  }
  vx_node *v = sel_alloc(p, sizeof *v);
  if (v) {
    v->kind = k;
    v->pos = pos;
  }
  return v;
}

int sel_enter(sparser *p, size_t pos) {
  if (++p->depth > SELECT_MAX_DEPTH)
    return sql_fail(p->err, &p->failed, pos, "value expression nested too deeply (more than %d levels)",
                    SELECT_MAX_DEPTH);
  return 0;
}

static vx_node *parse_number_vx(sparser *p, int neg, size_t pos) {
  const char *s = p->src + p->tok.pos;
  for (size_t i = 0; i < p->tok.len; i++)
    if (s[i] == 'e' || s[i] == 'E') {
      sql_fail(p->err, &p->failed, p->tok.pos,
               "a number with an exponent is not exact here: write it as a decimal (0.001, 2500)");
      return NULL;
    }
  int64_t m;
  int scale;
  if (parse_decimal(s, p->tok.len, &m, &scale)) {
    sql_fail(p->err, &p->failed, p->tok.pos,
             "numeric literal out of range (at most 18 digits after the point, and it must fit 64 bits)");
    return NULL;
  }
  vx_node *v = new_vx(p, VX_NUMBER, pos);
  if (!v) return NULL;
  v->mantissa = neg ? -m : m;
  v->scale = scale;
  v->end = p->tok.pos + p->tok.len;
  if (sel_lex(p)) return NULL;
  return v;
}

static vx_node *parse_case(sparser *p) {
  char d[64];
  size_t pos = p->tok.pos;
  if (sel_enter(p, pos) || sel_lex(p)) return NULL;
  if (!sel_is_kw(p, "WHEN")) {
    sel_describe(p, &p->tok, d, sizeof d);
    sql_fail(p->err, &p->failed, p->tok.pos,
             "expected WHEN after CASE, found %s (the CASE x WHEN v form is not supported: write CASE WHEN x = v)", d);
    return NULL;
  }
  vx_node *v = new_vx(p, VX_CASE, pos);
  tbuf whens = {0};
  while (v && sel_is_kw(p, "WHEN")) {
    vx_when w = {NULL, NULL, NULL};
    if (sel_lex(p)) break;
    if (p->in_agg) /* a condition on the row, as in WHERE */
      w.cond = parse_condition(p, stop_when, "WHEN");
    else /* a condition on the group, as in HAVING */
      w.hcond = sel_parse_having(p);
    if (!w.cond && !w.hcond) break;
    if (!sel_is_kw(p, "THEN")) {
      sel_describe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected THEN after the WHEN condition, found %s", d);
      break;
    }
    if (sel_lex(p)) break;
    w.then = sel_parse_value(p);
    if (!w.then) break;
    if (whens.len / sizeof w >= SELECT_MAX_ITEMS) {
      sql_fail(p->err, &p->failed, w.then->pos, "CASE with more than %d WHEN branches", SELECT_MAX_ITEMS);
      break;
    }
    if (tbuf_append(&whens, &w, sizeof w)) {
      sql_fail(p->err, &p->failed, pos, "out of memory");
      break;
    }
  }
  if (p->failed || !v) {
    tbuf_free(&whens);
    return NULL;
  }
  v->nwhens = whens.len / sizeof(vx_when);
  v->whens = sel_alloc(p, whens.len);
  if (v->whens) memcpy(v->whens, whens.p, whens.len);
  tbuf_free(&whens);
  if (!v->whens) return NULL;
  if (sel_is_kw(p, "ELSE")) {
    if (sel_lex(p)) return NULL;
    v->right = sel_parse_value(p);
    if (!v->right) return NULL;
  }
  if (!sel_is_kw(p, "END")) {
    sel_describe(p, &p->tok, d, sizeof d);
    sql_fail(p->err, &p->failed, p->tok.pos, "expected WHEN, ELSE or END in the CASE at column %zu, found %s", pos + 1,
             d);
    return NULL;
  }
  v->end = p->tok.pos + p->tok.len;
  p->depth--;
  if (sel_lex(p)) return NULL;
  return v;
}

static vx_node *parse_result_factor(sparser *p);

/* COUNT(*), COUNT(v), SUM(v), MIN(v), MAX(v), AVG(v): the current token is
 * the name, and '(' follows. */
static vx_node *parse_aggregate(sparser *p) {
  char d[64];
  stok t = p->tok;
  int a = tok_aggregate(p);
  vx_node *v = new_vx(p, VX_AGG, t.pos);
  if (!v || sel_lex(p)) return NULL;
  size_t open = p->tok.pos;
  v->agg = aggregate_kinds[a];
  if (sel_lex(p)) return NULL;
  if (sel_is_kw(p, "DISTINCT")) {
    if (v->agg != SEL_COUNT) {
      sql_fail(p->err, &p->failed, p->tok.pos, "%s(DISTINCT ...) is not supported (COUNT(DISTINCT x) is)",
               aggregates[a]);
      return NULL;
    }
    v->distinct = 1;
    if (sel_lex(p)) return NULL;
  }
  if (p->tok.kind == TK_STAR) {
    if (v->agg != SEL_COUNT) {
      sql_fail(p->err, &p->failed, p->tok.pos, "only COUNT takes '*'");
      return NULL;
    }
    v->agg = SEL_COUNT_STAR;
    if (sel_lex(p)) return NULL;
  } else if (p->tok.kind == TK_RPAREN) {
    sql_fail(p->err, &p->failed, p->tok.pos, "%s needs an argument%s", aggregates[a],
             a == 0 ? " (COUNT(*) counts rows)" : "");
    return NULL;
  } else {
    p->in_agg = 1;
    v->left = sel_parse_value(p);
    p->in_agg = 0;
    if (!v->left) return NULL;
  }
  if (p->tok.kind != TK_RPAREN) {
    sel_describe(p, &p->tok, d, sizeof d);
    sql_fail(p->err, &p->failed, p->tok.pos, "expected ')' to close the '(' at column %zu, found %s", open + 1, d);
    return NULL;
  }
  v->end = p->tok.pos + p->tok.len;
  if (sel_lex(p)) return NULL;
  if (sel_is_kw(p, "OVER") || sel_is_kw(p, "FILTER")) {
    sql_fail(p->err, &p->failed, p->tok.pos, "%s is not supported (window functions and aggregate filters)",
             sel_is_kw(p, "OVER") ? "OVER" : "FILTER");
    return NULL;
  }
  return v;
}

/* abs(result), coalesce(result, ...): the current token is the name, and
 * '(' follows. coalesce(a, b, c) is coalesce(a, coalesce(b, c)). */
static vx_node *parse_function(sparser *p, int coalesce) {
  char d[64];
  stok t = p->tok;
  vx_node *args[SELECT_MAX_ITEMS];
  size_t n = 0;
  if (sel_enter(p, t.pos) || sel_lex(p)) return NULL;
  size_t open = p->tok.pos;
  if (sel_lex(p)) return NULL;
  for (;;) {
    if (n == SELECT_MAX_ITEMS) {
      sql_fail(p->err, &p->failed, p->tok.pos, "coalesce with more than %d arguments", SELECT_MAX_ITEMS);
      return NULL;
    }
    args[n] = sel_parse_value(p);
    if (!args[n++]) return NULL;
    if (!coalesce || p->tok.kind != TK_COMMA) break;
    if (sel_lex(p)) return NULL;
  }
  if (p->tok.kind != TK_RPAREN) {
    sel_describe(p, &p->tok, d, sizeof d);
    sql_fail(p->err, &p->failed, p->tok.pos, "expected %s')' to close the '(' at column %zu, found %s",
             coalesce ? "',' or " : "", open + 1, d);
    return NULL;
  }
  size_t end = p->tok.pos + p->tok.len;
  vx_node *v = args[n - 1];
  if (!coalesce) {
    v = new_vx(p, VX_ABS, t.pos);
    if (!v) return NULL;
    v->left = args[0];
    v->end = end;
  }
  for (size_t i = n - 1; coalesce && i-- > 0;) {
    vx_node *c = new_vx(p, VX_COALESCE, t.pos);
    if (!c) return NULL;
    c->left = args[i];
    c->right = v;
    c->end = end;
    v = c;
  }
  p->depth--;
  if (sel_lex(p)) return NULL;
  return v;
}

/* ---- date functions ---- */

const char *select_fn_name(int fn) { return expr_date_fn_name(fn); }

static int fn_of_word(const char *w, size_t len, int trunc) { return expr_date_fn_of_word(w, len, trunc); }

/* Whether the current token starts a date function (its name, then '('). */
static int at_datefn(sparser *p) {
  if (p->tok.kind != TK_IDENT || speek(p).kind != TK_LPAREN) return 0;
  const char *w = p->src + p->tok.pos;
  size_t n = p->tok.len;
  return expr_date_fn_call(w, n);
}

/* A date function of a column (at_datefn is true): a VX_COLUMN with fn set. */
static vx_node *parse_datefn(sparser *p) {
  char d[64];
  stok t = p->tok;
  const char *w = p->src + t.pos;
  int trunc = sql_word_eq(w, t.len, "DATE_TRUNC");
  int part = sql_word_eq(w, t.len, "DATE_PART") || sql_word_eq(w, t.len, "DATEPART");
  int extract = sql_word_eq(w, t.len, "EXTRACT");
  int fn = trunc || part || extract ? 0 : fn_of_word(w, t.len, 0);
  if (sel_lex(p)) return NULL;
  size_t open = p->tok.pos;
  if (sel_lex(p)) return NULL;
  if (trunc || part || extract) {
    stok f = p->tok;
    size_t flen = 0;
    const char *fw = NULL;
    if (f.kind == TK_STRING) {
      fw = sunquote(p, &p->tok, &flen);
      if (!fw) return NULL;
    } else if (extract && f.kind == TK_IDENT) {
      fw = p->src + f.pos, flen = f.len;
    }
    fn = fw ? fn_of_word(fw, flen, trunc) : 0;
    if (!fn) {
      sel_describe(p, &f, d, sizeof d);
      sql_fail(p->err, &p->failed, f.pos,
               trunc ? "expected a part of date_trunc ('second', 'minute', 'hour', 'day', 'week', 'month', "
                       "'quarter' or 'year'), found %s"
                     : "expected a field (year, quarter, month, day, hour, minute, second, dow or doy), found %s",
               d);
      return NULL;
    }
    if (sel_lex(p)) return NULL;
    if (extract ? !sel_is_kw(p, "FROM") : p->tok.kind != TK_COMMA) {
      sel_describe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected %s, found %s", extract ? "FROM" : "','", d);
      return NULL;
    }
    if (sel_lex(p)) return NULL;
  }
  vx_node *v = new_vx(p, VX_COLUMN, t.pos);
  if (!v) return NULL;
  v->fn = fn;
  if (p->tok.kind != TK_QIDENT && !(p->tok.kind == TK_IDENT && !sel_tok_reserved(p))) {
    sel_describe(p, &p->tok, d, sizeof d);
    sql_fail(p->err, &p->failed, p->tok.pos, "expected a date or timestamp column, found %s", d);
    return NULL;
  }
  if (parse_name(p, "a column", &v->name, &v->len, &v->quoted)) return NULL;
  if (p->tok.kind != TK_RPAREN) {
    sel_describe(p, &p->tok, d, sizeof d);
    sql_fail(p->err, &p->failed, p->tok.pos, "expected ')' to close the '(' at column %zu, found %s", open + 1, d);
    return NULL;
  }
  v->end = p->tok.pos + p->tok.len;
  return sel_lex(p) ? NULL : v;
}

static vx_node *parse_factor(sparser *p) {
  char d[64];
  stok t = p->tok;
  if (t.kind == TK_MINUS || t.kind == TK_PLUS) {
    if (sel_enter(p, t.pos) || sel_lex(p)) return NULL;
    vx_node *v;
    if (p->tok.kind == TK_NUMBER) {
      v = parse_number_vx(p, t.kind == TK_MINUS, t.pos);
    } else {
      vx_node *x = parse_factor(p);
      if (!x) return NULL;
      if (t.kind == TK_PLUS) {
        v = x;
      } else {
        v = new_vx(p, VX_NEG, t.pos);
        if (v) {
          v->left = x;
          v->end = x->end;
        }
      }
    }
    p->depth--;
    return v;
  }
  if (t.kind == TK_NUMBER) return parse_number_vx(p, 0, t.pos);
  if (t.kind == TK_LPAREN) {
    if (sel_enter(p, t.pos) || sel_lex(p)) return NULL;
    vx_node *v = sel_parse_value(p);
    if (!v) return NULL;
    if (p->tok.kind != TK_RPAREN) {
      sel_describe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected ')' to close the '(' at column %zu, found %s", t.pos + 1, d);
      return NULL;
    }
    p->depth--;
    if (sel_lex(p)) return NULL;
    return v;
  }
  if (!p->in_agg) return parse_result_factor(p);
  if (at_datefn(p)) {
    sql_fail(p->err, &p->failed, t.pos,
             "date functions inside an aggregate are not supported: GROUP BY the function and aggregate per group");
    return NULL;
  }
  if (t.kind == TK_IDENT && sql_word_eq(p->src + t.pos, t.len, "CASE")) return parse_case(p);
  if (t.kind == TK_QIDENT || (t.kind == TK_IDENT && !sel_tok_reserved(p))) {
    vx_node *v = new_vx(p, VX_COLUMN, t.pos);
    if (!v) return NULL;
    v->end = t.pos + t.len;
    if (parse_name(p, "a column", &v->name, &v->len, &v->quoted)) return NULL;
    if (p->tok.kind == TK_LPAREN && !v->quoted) {
      if (word_aggregate(p->src + t.pos, t.len) >= 0)
        sql_fail(p->err, &p->failed, t.pos, "aggregates cannot be nested");
      else if (sql_word_eq(p->src + t.pos, t.len, "ABS") || sql_word_eq(p->src + t.pos, t.len, "COALESCE"))
        sql_fail(p->err, &p->failed, t.pos,
                 "%.*s inside an aggregate is not supported: apply it to the aggregate's result (%.*s(SUM(x)))",
                 (int)t.len, p->src + t.pos, (int)t.len, p->src + t.pos);
      else
        sql_fail(p->err, &p->failed, t.pos, "unknown function '%.*s' (the aggregates are COUNT, SUM, MIN, MAX and AVG)",
                 (int)(t.len > 40 ? 40 : t.len), p->src + t.pos);
      return NULL;
    }
    return v;
  }
  if (t.kind == TK_STRING) {
    sql_fail(p->err, &p->failed, t.pos,
             "a string is not a value: value expressions are numbers and numeric columns "
             "(compare strings in WHERE or WHEN)");
    return NULL;
  }
  sel_describe(p, &t, d, sizeof d);
  sql_fail(p->err, &p->failed, t.pos, "expected a column, a number, CASE or '(', found %s%s",
           sel_tok_reserved(p) ? "keyword " : "", d);
  return NULL;
}

/* A factor of a value of the group (outside aggregates): an aggregate, a
 * GROUP BY column, abs, coalesce, and the literals HAVING compares with. */
static vx_node *parse_result_factor(sparser *p) {
  char d[64];
  stok t = p->tok;
  if (t.kind == TK_IDENT) {
    stok next = speek(p);
    const char *w = p->src + t.pos;
    if (tok_aggregate(p) >= 0 && next.kind == TK_LPAREN) return parse_aggregate(p);
    if (at_datefn(p)) return parse_datefn(p);
    if (next.kind == TK_LPAREN && (sql_word_eq(w, t.len, "ABS") || sql_word_eq(w, t.len, "COALESCE")))
      return parse_function(p, sql_word_eq(w, t.len, "COALESCE"));
    if (next.kind == TK_STRING &&
        (sql_word_eq(w, t.len, "DATE") || sql_word_eq(w, t.len, "TIMESTAMP") || sql_word_eq(w, t.len, "TIME"))) {
      if (sel_lex(p)) return NULL;
      vx_node *v = new_vx(p, VX_STRING, t.pos);
      if (!v) return NULL;
      v->lit = sql_word_eq(w, t.len, "DATE") ? 'D' : sql_word_eq(w, t.len, "TIME") ? 't' : 'T';
      v->name = sunquote(p, &p->tok, &v->len);
      v->end = p->tok.pos + p->tok.len;
      return v->name && !sel_lex(p) ? v : NULL;
    }
    if (sql_word_eq(w, t.len, "NULL")) {
      vx_node *v = new_vx(p, VX_NULL, t.pos);
      if (v) v->end = t.pos + t.len;
      return v && !sel_lex(p) ? v : NULL;
    }
    if (sql_word_eq(w, t.len, "TRUE") || sql_word_eq(w, t.len, "FALSE")) { /* booleans are 1 and 0 */
      vx_node *v = new_vx(p, VX_NUMBER, t.pos);
      if (v) {
        v->mantissa = sql_word_eq(w, t.len, "TRUE");
        v->lit = 'B';
        v->end = t.pos + t.len;
      }
      return v && !sel_lex(p) ? v : NULL;
    }
    if (sql_word_eq(w, t.len, "CASE")) return parse_case(p);
  }
  if (t.kind == TK_STRING) {
    vx_node *v = new_vx(p, VX_STRING, t.pos);
    if (!v) return NULL;
    v->name = sunquote(p, &p->tok, &v->len);
    v->end = t.pos + t.len;
    return v->name && !sel_lex(p) ? v : NULL;
  }
  if (t.kind == TK_QIDENT || (t.kind == TK_IDENT && !sel_tok_reserved(p))) {
    vx_node *v = new_vx(p, VX_COLUMN, t.pos);
    if (!v) return NULL;
    v->end = t.pos + t.len;
    if (parse_name(p, "a column", &v->name, &v->len, &v->quoted)) return NULL;
    if (p->tok.kind == TK_LPAREN && !v->quoted) {
      sql_fail(p->err, &p->failed, t.pos,
               "unknown function '%.*s' (the aggregates are COUNT, SUM, MIN, MAX and AVG; abs and coalesce "
               "apply to their results)",
               (int)(t.len > 40 ? 40 : t.len), p->src + t.pos);
      return NULL;
    }
    return v;
  }
  sel_describe(p, &t, d, sizeof d);
  sql_fail(p->err, &p->failed, t.pos, "expected an aggregate, a GROUP BY column, a number or '(', found %s%s",
           sel_tok_reserved(p) ? "keyword " : "", d);
  return NULL;
}

static vx_node *parse_term(sparser *p) {
  vx_node *l = parse_factor(p);
  while (l && (p->tok.kind == TK_STAR || p->tok.kind == TK_SLASH)) {
    vx_kind k = p->tok.kind == TK_STAR ? VX_MUL : VX_DIV;
    if (k == VX_DIV && p->in_agg) {
      sql_fail(p->err, &p->failed, p->tok.pos,
               "division inside an aggregate is not supported: value expressions take + - * (exact arithmetic); "
               "divide aggregate results instead (SUM(a) / SUM(b))");
      return NULL;
    }
    if (sel_lex(p)) return NULL;
    vx_node *r = parse_factor(p);
    if (!r) return NULL;
    vx_node *n = new_vx(p, k, l->pos);
    if (!n) return NULL;
    n->left = l;
    n->right = r;
    n->end = r->end;
    l = n;
  }
  return l;
}

/* Chains of + - * are parsed iteratively into left-deep trees; parentheses,
 * unary signs and CASE nest and count against SELECT_MAX_DEPTH. A left-deep
 * chain is as deep as it is long, so the node count is bounded too
 * (SELECT_MAX_NODES), and so is every recursion over the tree. */
vx_node *sel_parse_value(sparser *p) {
  vx_node *l = parse_term(p);
  while (l && (p->tok.kind == TK_PLUS || p->tok.kind == TK_MINUS)) {
    vx_kind k = p->tok.kind == TK_PLUS ? VX_ADD : VX_SUB;
    if (sel_lex(p)) return NULL;
    vx_node *r = parse_term(p);
    if (!r) return NULL;
    vx_node *n = new_vx(p, k, l->pos);
    if (!n) return NULL;
    n->left = l;
    n->right = r;
    n->end = r->end;
    l = n;
  }
  return l;
}

/* ---- the statement ---- */

/* Parses an optional alias ([AS] name). */
static int parse_alias(sparser *p, const char **alias, size_t *len) {
  int q;
  if (sel_is_kw(p, "AS")) {
    if (sel_lex(p)) return -1;
    return parse_name(p, "an alias after AS", alias, len, &q);
  }
  if (p->tok.kind == TK_QIDENT || (p->tok.kind == TK_IDENT && !sel_tok_reserved(p)))
    return parse_name(p, "an alias", alias, len, &q);
  return 0;
}

static int parse_item(sparser *p, sel_item *it) {
  char d[64];
  memset(it, 0, sizeof *it);
  stok t = p->tok;
  it->pos = t.pos;
  if (t.kind == TK_STAR)
    return sql_fail(p->err, &p->failed, t.pos,
                    "SELECT * lists rows, which this SELECT does not: use a WHERE-expression with "
                    "--select '*' to print rows");
  if (sel_is_kw(p, "DISTINCT"))
    return sql_fail(p->err, &p->failed, t.pos,
                    "SELECT DISTINCT is not supported: GROUP BY the columns instead (SELECT a, b ... GROUP BY a, b)");
  /* whatever a value of the group may start with, so that +'x' and its canonical 'x' read alike (the binder
   * then says that a computed item is a number) */
  int starts = t.kind == TK_QIDENT || t.kind == TK_NUMBER || t.kind == TK_LPAREN || t.kind == TK_MINUS ||
               t.kind == TK_PLUS || t.kind == TK_STRING ||
               (t.kind == TK_IDENT && (!sel_tok_reserved(p) || sel_is_kw(p, "CASE") || sel_is_kw(p, "NULL") ||
                                       sel_is_kw(p, "TRUE") || sel_is_kw(p, "FALSE")));
  if (!starts) {
    sel_describe(p, &t, d, sizeof d);
    return sql_fail(p->err, &p->failed, t.pos,
                    "expected an aggregate (COUNT, SUM, MIN, MAX, AVG) or a GROUP BY column, found %s%s",
                    sel_tok_reserved(p) ? "keyword " : "", d);
  }
  vx_node *v = sel_parse_value(p);
  if (!v) return -1;
  it->end = p->prev_end;
  it->expr = v;
  /* By the tree, not the text: (SUM(x)) and +k print as SUM(x) and k */
  if (v->kind == VX_AGG && v->distinct) { /* counted on the host from a second query (select_run.c) */
    it->agg = SEL_EXPR;
  } else if (v->kind == VX_AGG) {
    it->agg = (sel_agg)v->agg;
    it->arg = v->left;
  } else if (v->kind == VX_COLUMN) {
    it->agg = SEL_KEY;
    it->arg = v;
  } else {
    it->agg = SEL_EXPR;
  }
  return parse_alias(p, &it->alias, &it->alias_len);
}

int select_is_statement(const char *src, size_t len) {
  size_t i = 0;
  while (i < len && sql_is_space((unsigned char)src[i])) i++;
  size_t j = i;
  while (j < len && sql_is_ident_char((unsigned char)src[j])) j++;
  return sql_word_eq(src + i, j - i, "SELECT");
}

int select_is_aggregate(const char *src, size_t len) {
  if (!select_is_statement(src, len)) return 0;
  expr_arena arena = {0};
  expr_error err;
  sparser p;
  memset(&p, 0, sizeof p);
  p.src = src;
  p.len = len;
  p.arena = &arena;
  p.err = &err;
  int depth = 0, items = 1, aggs = 0, lone_count_star = 0, in_list = 1, grouped = 0, other = 0;
  if (sel_lex(&p) || sel_lex(&p)) return 0; /* SELECT */
  while (!p.failed && p.tok.kind != TK_EOF) {
    if (p.tok.kind == TK_LPAREN) depth++;
    if (p.tok.kind == TK_RPAREN) depth--;
    if (depth == 0 && (sel_is_kw(&p, "FROM") || sel_is_kw(&p, "WHERE") || sel_is_kw(&p, "ORDER") ||
                       sel_is_kw(&p, "LIMIT") || sel_is_kw(&p, "OFFSET") || sel_is_kw(&p, "HAVING")))
      in_list = 0;
    if (depth == 0 && (sel_is_kw(&p, "GROUP") || sel_is_kw(&p, "HAVING"))) grouped = 1;
    if (in_list && depth == 0 && p.tok.kind == TK_COMMA) items++;
    /* COUNT(*) / 2, COUNT(*) AS n, ... LIMIT 1: more than the shell's bare row count */
    if (in_list && depth == 0 && p.tok.kind != TK_COMMA && p.tok.kind != TK_LPAREN && p.tok.kind != TK_RPAREN &&
        tok_aggregate(&p) < 0)
      other = 1;
    if (depth == 0 && (sel_is_kw(&p, "ORDER") || sel_is_kw(&p, "LIMIT") || sel_is_kw(&p, "OFFSET"))) other = 1;
    if (in_list && tok_aggregate(&p) >= 0) {
      int count = sql_word_eq(src + p.tok.pos, p.tok.len, "COUNT");
      if (sel_lex(&p)) break;
      if (p.tok.kind != TK_LPAREN) continue;
      aggs++;
      depth++;
      if (sel_lex(&p)) break;
      if (count && p.tok.kind == TK_STAR) lone_count_star++;
      continue;
    }
    if (sel_lex(&p)) break;
  }
  expr_arena_free(&arena);
  return grouped || (aggs > 0 && !(items == 1 && aggs == 1 && lone_count_star == 1 && !other));
}

int select_parse(const char *src, size_t len, expr_arena *arena, select_stmt *out, expr_error *err) {
  char d[64];
  sparser p;
  memset(&p, 0, sizeof p);
  p.src = src;
  p.len = len;
  p.arena = arena;
  p.err = err;
  memset(err, 0, sizeof *err);
  memset(out, 0, sizeof *out);
  if (sel_lex(&p)) return -1;
  if (!sel_is_kw(&p, "SELECT")) {
    sel_describe(&p, &p.tok, d, sizeof d);
    return sql_fail(p.err, &p.failed, p.tok.pos, "expected SELECT, found %s", d);
  }
  if (sel_lex(&p)) return -1;
  for (;;) {
    if (out->nitems == SELECT_MAX_ITEMS)
      return sql_fail(p.err, &p.failed, p.tok.pos, "more than %d items in the SELECT list", SELECT_MAX_ITEMS);
    if (parse_item(&p, &out->items[out->nitems])) return -1;
    out->nitems++;
    if (p.tok.kind != TK_COMMA) break;
    if (sel_lex(&p)) return -1;
  }
  if (sel_is_kw(&p, "FROM")) {
    int q;
    if (sel_lex(&p) || parse_name(&p, "a table name after FROM", &out->from, &out->from_len, &q)) return -1;
  }
  if (sel_is_kw(&p, "WHERE")) {
    if (sel_lex(&p)) return -1;
    out->where_pos = p.tok.pos;
    out->where = parse_condition(&p, stop_where, "WHERE");
    if (!out->where) return -1;
  }
  if (sel_is_kw(&p, "GROUP")) {
    if (sel_lex(&p)) return -1;
    if (!sel_is_kw(&p, "BY")) {
      sel_describe(&p, &p.tok, d, sizeof d);
      return sql_fail(p.err, &p.failed, p.tok.pos, "expected BY after GROUP, found %s", d);
    }
    if (sel_lex(&p)) return -1;
    for (;;) {
      if (out->nkeys == SELECT_MAX_KEYS)
        return sql_fail(p.err, &p.failed, p.tok.pos, "GROUP BY takes at most %d columns", SELECT_MAX_KEYS);
      sel_key *k = &out->keys[out->nkeys];
      k->pos = p.tok.pos;
      k->end = p.tok.pos + p.tok.len;
      if (at_datefn(&p)) {
        vx_node *f = parse_datefn(&p);
        if (!f) return -1;
        k->name = f->name, k->len = f->len, k->quoted = f->quoted, k->fn = f->fn, k->end = f->end;
      } else if (parse_name(&p, "a column after GROUP BY", &k->name, &k->len, &k->quoted)) {
        return -1;
      }
      if (p.tok.kind == TK_LPAREN || p.tok.kind == TK_PLUS || p.tok.kind == TK_MINUS || p.tok.kind == TK_STAR)
        return sql_fail(p.err, &p.failed, p.tok.pos, "GROUP BY takes columns, not expressions");
      out->nkeys++;
      if (p.tok.kind != TK_COMMA) break;
      if (sel_lex(&p)) return -1;
    }
  }
  if (sel_is_kw(&p, "HAVING")) {
    if (sel_lex(&p) || !(out->having = sel_parse_having(&p))) return -1;
  }
  if (sel_is_kw(&p, "ORDER")) {
    if (sel_lex(&p)) return -1;
    if (!sel_is_kw(&p, "BY")) {
      sel_describe(&p, &p.tok, d, sizeof d);
      return sql_fail(p.err, &p.failed, p.tok.pos, "expected BY after ORDER, found %s", d);
    }
    if (sel_lex(&p) || sel_parse_order(&p, out)) return -1;
  }
  if (sel_is_kw(&p, "LIMIT")) {
    out->has_limit = 1;
    if (sel_lex(&p) || sel_parse_count(&p, "LIMIT", &out->limit)) return -1;
  }
  if (sel_is_kw(&p, "OFFSET")) {
    out->has_offset = 1;
    if (sel_lex(&p) || sel_parse_count(&p, "OFFSET", &out->offset)) return -1;
  }
  if (p.tok.kind == TK_SEMI && sel_lex(&p)) return -1;
  if (p.tok.kind != TK_EOF) {
    sel_describe(&p, &p.tok, d, sizeof d);
    if (out->nkeys == 0 && !out->where && !out->from && !out->having && !out->norder && !out->has_limit &&
        !out->has_offset && p.tok.kind == TK_IDENT)
      return sql_fail(p.err, &p.failed, p.tok.pos,
                      "expected ',', FROM, WHERE, GROUP BY, HAVING, ORDER BY, LIMIT or the end of the statement, "
                      "found %s",
                      d);
    return sql_fail(p.err, &p.failed, p.tok.pos, "expected the end of the statement, found %s", d);
  }
  if (out->nkeys == 0)
    for (size_t i = 0; i < out->nitems; i++)
      if (out->items[i].agg == SEL_KEY)
        return sql_fail(p.err, &p.failed, out->items[i].pos,
                        "column '%.*s' is neither inside an aggregate nor in GROUP BY",
                        (int)(out->items[i].arg->len > 60 ? 60 : out->items[i].arg->len), out->items[i].arg->name);
  return 0;
}
