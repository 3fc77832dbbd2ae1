/* Recursive-descent parser for SELECT statements (see select.h), over sql_lex.c's tokens.
 * WHERE clauses and CASE conditions are cut out of the statement here and
 * handed to expr_parse, whose positions are then moved to the statement's. */
#include <stdlib.h>
#include <string.h>

#include "select.h"
#include "sql_lex.h"

typedef sql_token stok;

typedef struct sparser {
  const char *src;
  size_t len, pos;
  stok tok;
  expr_arena *arena;
  expr_error *err;
  int failed;
  int depth;
  size_t nodes;    /* value nodes so far, at most SELECT_MAX_NODES */
  int in_agg;      /* inside an aggregate's argument: a value of a row, not of a group */
  size_t prev_end; /* where the last token consumed ends */
} sparser;

static void sdescribe(const sparser *p, const stok *t, char *out, size_t n) { sql_describe(p->src, t, out, n); }

static int slex(sparser *p) {
  sql_error e;
  p->prev_end = p->tok.pos + p->tok.len;
  if (sql_lex(p->src, p->len, &p->pos, &p->tok, SQL_LEX_STATEMENT, &e))
    return sql_fail(p->err, &p->failed, e.pos, "%s", e.msg);
  return 0;
}

static int is_kw(const sparser *p, const char *kw) { return sql_tok_is_kw(p->src, &p->tok, kw); }

/* Words that cannot be unquoted column names or aliases: this grammar's and
 * the WHERE-expression's. */
static const char *const reserved[] = {"SELECT", "FROM",  "WHERE",   "GROUP", "BY",     "AS",     "CASE",     "WHEN",
                                       "THEN",   "ELSE",  "END",     "ORDER", "HAVING", "LIMIT",  "DISTINCT", "AND",
                                       "OR",     "NOT",   "BETWEEN", "IN",    "LIKE",   "ESCAPE", "IS",       "NULL",
                                       "TRUE",   "FALSE", "OFFSET",  "ASC",   "DESC",   "NULLS"};

static int word_reserved(const char *s, size_t len) {
  for (size_t i = 0; i < sizeof reserved / sizeof *reserved; i++)
    if (sql_word_eq(s, len, reserved[i])) return 1;
  return 0;
}

static int tok_reserved(const sparser *p) {
  return p->tok.kind == TK_IDENT && word_reserved(p->src + p->tok.pos, p->tok.len);
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

static void *salloc(sparser *p, size_t size) {
  void *m = expr_arena_alloc(p->arena, size);
  if (!m) sql_fail(p->err, &p->failed, p->tok.pos, "out of memory");
  return m;
}

/* A quoted token's contents with doubled quotes undone, in the arena. */
static const char *sunquote(sparser *p, const stok *t, size_t *len) {
  char *out = salloc(p, t->len + 1);
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
    return slex(p);
  }
  if (p->tok.kind == TK_IDENT && !tok_reserved(p)) {
    *name = p->src + p->tok.pos;
    *len = p->tok.len;
    *quoted = 0;
    return slex(p);
  }
  sdescribe(p, &p->tok, d, sizeof d);
  return sql_fail(p->err, &p->failed, p->tok.pos, "expected %s, found %s%s", what, tok_reserved(p) ? "keyword " : "",
                  d);
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
    sdescribe(p, &p->tok, d, sizeof d);
    sql_fail(p->err, &p->failed, p->tok.pos, "expected a condition after %s, found %s", what, d);
    return NULL;
  }
  while (p->tok.kind != TK_EOF && !(depth == 0 && stop(p))) {
    if (p->tok.kind == TK_LPAREN) depth++;
    if (p->tok.kind == TK_RPAREN) depth--;
    if (slex(p)) return NULL;
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
      sdescribe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "%.*sfound %s%s", (int)(eoi - e.msg), e.msg,
               tok_reserved(p) ? "keyword " : "", d);
    } else {
      sql_fail(p->err, &p->failed, start + e.pos, "%s", e.msg);
    }
    return NULL;
  }
  shift_ast(n, start);
  return n;
}

static int stop_where(const sparser *p) {
  return p->tok.kind == TK_SEMI || is_kw(p, "GROUP") || is_kw(p, "ORDER") || is_kw(p, "HAVING") || is_kw(p, "LIMIT") ||
         is_kw(p, "OFFSET");
}

/* A WHEN condition ends at THEN; END, ELSE, WHEN, a closing parenthesis or
 * ';' first mean THEN is missing (reported by the caller). */
static int stop_when(const sparser *p) {
  return p->tok.kind == TK_SEMI || p->tok.kind == TK_RPAREN || is_kw(p, "THEN") || is_kw(p, "END") ||
         is_kw(p, "ELSE") || is_kw(p, "WHEN");
}

/* ---- value expressions ---- */

static vx_node *new_vx(sparser *p, vx_kind k, size_t pos) {
  if (++p->nodes > SELECT_MAX_NODES) {
    sql_fail(p->err, &p->failed, p->tok.pos, "the statement's value expressions have more than %d parts",
             SELECT_MAX_NODES);
    return NULL;
  }
  vx_node *v = salloc(p, sizeof *v);
  if (v) {
    v->kind = k;
    v->pos = pos;
  }
  return v;
}

static vx_node *parse_value(sparser *p);

static int enter(sparser *p, size_t pos) {
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
  if (slex(p)) return NULL;
  return v;
}

static vx_node *parse_case(sparser *p) {
  char d[64];
  size_t pos = p->tok.pos;
  if (enter(p, pos) || slex(p)) return NULL;
  if (!is_kw(p, "WHEN")) {
    sdescribe(p, &p->tok, d, sizeof d);
    sql_fail(p->err, &p->failed, p->tok.pos,
             "expected WHEN after CASE, found %s (the CASE x WHEN v form is not supported: write CASE WHEN x = v)", d);
    return NULL;
  }
  vx_node *v = new_vx(p, VX_CASE, pos);
  tbuf whens = {0};
  while (v && is_kw(p, "WHEN")) {
    vx_when w;
    if (slex(p)) break;
    w.cond = parse_condition(p, stop_when, "WHEN");
    if (!w.cond) break;
    if (!is_kw(p, "THEN")) {
      sdescribe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected THEN after the WHEN condition, found %s", d);
      break;
    }
    if (slex(p)) break;
    w.then = parse_value(p);
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
  v->whens = salloc(p, whens.len);
  if (v->whens) memcpy(v->whens, whens.p, whens.len);
  tbuf_free(&whens);
  if (!v->whens) return NULL;
  if (is_kw(p, "ELSE")) {
    if (slex(p)) return NULL;
    v->right = parse_value(p);
    if (!v->right) return NULL;
  }
  if (!is_kw(p, "END")) {
    sdescribe(p, &p->tok, d, sizeof d);
    sql_fail(p->err, &p->failed, p->tok.pos, "expected WHEN, ELSE or END in the CASE at column %zu, found %s", pos + 1,
             d);
    return NULL;
  }
  v->end = p->tok.pos + p->tok.len;
  p->depth--;
  if (slex(p)) return NULL;
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
  if (!v || slex(p)) return NULL;
  size_t open = p->tok.pos;
  v->agg = aggregate_kinds[a];
  if (slex(p)) return NULL;
  if (is_kw(p, "DISTINCT")) {
    sql_fail(p->err, &p->failed, p->tok.pos, "%s(DISTINCT ...) is not supported", aggregates[a]);
    return NULL;
  }
  if (p->tok.kind == TK_STAR) {
    if (v->agg != SEL_COUNT) {
      sql_fail(p->err, &p->failed, p->tok.pos, "only COUNT takes '*'");
      return NULL;
    }
    v->agg = SEL_COUNT_STAR;
    if (slex(p)) return NULL;
  } else if (p->tok.kind == TK_RPAREN) {
    sql_fail(p->err, &p->failed, p->tok.pos, "%s needs an argument%s", aggregates[a],
             a == 0 ? " (COUNT(*) counts rows)" : "");
    return NULL;
  } else {
    p->in_agg = 1;
    v->left = parse_value(p);
    p->in_agg = 0;
    if (!v->left) return NULL;
  }
  if (p->tok.kind != TK_RPAREN) {
    sdescribe(p, &p->tok, d, sizeof d);
    sql_fail(p->err, &p->failed, p->tok.pos, "expected ')' to close the '(' at column %zu, found %s", open + 1, d);
    return NULL;
  }
  v->end = p->tok.pos + p->tok.len;
  if (slex(p)) return NULL;
  if (is_kw(p, "OVER") || is_kw(p, "FILTER")) {
    sql_fail(p->err, &p->failed, p->tok.pos, "%s is not supported (window functions and aggregate filters)",
             is_kw(p, "OVER") ? "OVER" : "FILTER");
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
  if (enter(p, t.pos) || slex(p)) return NULL;
  size_t open = p->tok.pos;
  if (slex(p)) return NULL;
  for (;;) {
    if (n == SELECT_MAX_ITEMS) {
      sql_fail(p->err, &p->failed, p->tok.pos, "coalesce with more than %d arguments", SELECT_MAX_ITEMS);
      return NULL;
    }
    args[n] = parse_value(p);
    if (!args[n++]) return NULL;
    if (!coalesce || p->tok.kind != TK_COMMA) break;
    if (slex(p)) return NULL;
  }
  if (p->tok.kind != TK_RPAREN) {
    sdescribe(p, &p->tok, d, sizeof d);
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
  if (slex(p)) return NULL;
  return v;
}

static vx_node *parse_factor(sparser *p) {
  char d[64];
  stok t = p->tok;
  if (t.kind == TK_MINUS || t.kind == TK_PLUS) {
    if (enter(p, t.pos) || slex(p)) return NULL;
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
    if (enter(p, t.pos) || slex(p)) return NULL;
    vx_node *v = parse_value(p);
    if (!v) return NULL;
    if (p->tok.kind != TK_RPAREN) {
      sdescribe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected ')' to close the '(' at column %zu, found %s", t.pos + 1, d);
      return NULL;
    }
    p->depth--;
    if (slex(p)) return NULL;
    return v;
  }
  if (!p->in_agg) return parse_result_factor(p);
  if (t.kind == TK_IDENT && sql_word_eq(p->src + t.pos, t.len, "CASE")) return parse_case(p);
  if (t.kind == TK_QIDENT || (t.kind == TK_IDENT && !tok_reserved(p))) {
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
  sdescribe(p, &t, d, sizeof d);
  sql_fail(p->err, &p->failed, t.pos, "expected a column, a number, CASE or '(', found %s%s",
           tok_reserved(p) ? "keyword " : "", d);
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
    if (next.kind == TK_LPAREN && (sql_word_eq(w, t.len, "ABS") || sql_word_eq(w, t.len, "COALESCE")))
      return parse_function(p, sql_word_eq(w, t.len, "COALESCE"));
    if (next.kind == TK_STRING &&
        (sql_word_eq(w, t.len, "DATE") || sql_word_eq(w, t.len, "TIMESTAMP") || sql_word_eq(w, t.len, "TIME"))) {
      if (slex(p)) return NULL;
      vx_node *v = new_vx(p, VX_STRING, t.pos);
      if (!v) return NULL;
      v->lit = sql_word_eq(w, t.len, "DATE") ? 'D' : sql_word_eq(w, t.len, "TIME") ? 't' : 'T';
      v->name = sunquote(p, &p->tok, &v->len);
      v->end = p->tok.pos + p->tok.len;
      return v->name && !slex(p) ? v : NULL;
    }
    if (sql_word_eq(w, t.len, "NULL")) {
      vx_node *v = new_vx(p, VX_NULL, t.pos);
      if (v) v->end = t.pos + t.len;
      return v && !slex(p) ? v : NULL;
    }
    if (sql_word_eq(w, t.len, "CASE")) {
      sql_fail(p->err, &p->failed, t.pos,
               "CASE over aggregate results is not supported: put the CASE inside the aggregate "
               "(SUM(CASE WHEN ... END))");
      return NULL;
    }
  }
  if (t.kind == TK_STRING) {
    vx_node *v = new_vx(p, VX_STRING, t.pos);
    if (!v) return NULL;
    v->name = sunquote(p, &p->tok, &v->len);
    v->end = t.pos + t.len;
    return v->name && !slex(p) ? v : NULL;
  }
  if (t.kind == TK_QIDENT || (t.kind == TK_IDENT && !tok_reserved(p))) {
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
  sdescribe(p, &t, d, sizeof d);
  sql_fail(p->err, &p->failed, t.pos, "expected an aggregate, a GROUP BY column, a number or '(', found %s%s",
           tok_reserved(p) ? "keyword " : "", d);
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
    if (slex(p)) return NULL;
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
static vx_node *parse_value(sparser *p) {
  vx_node *l = parse_term(p);
  while (l && (p->tok.kind == TK_PLUS || p->tok.kind == TK_MINUS)) {
    vx_kind k = p->tok.kind == TK_PLUS ? VX_ADD : VX_SUB;
    if (slex(p)) return NULL;
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
  if (is_kw(p, "AS")) {
    if (slex(p)) return -1;
    return parse_name(p, "an alias after AS", alias, len, &q);
  }
  if (p->tok.kind == TK_QIDENT || (p->tok.kind == TK_IDENT && !tok_reserved(p)))
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
  if (is_kw(p, "DISTINCT"))
    return sql_fail(p->err, &p->failed, t.pos,
                    "SELECT DISTINCT is not supported: GROUP BY the columns instead (SELECT a, b ... GROUP BY a, b)");
  int starts = t.kind == TK_QIDENT || t.kind == TK_NUMBER || t.kind == TK_LPAREN || t.kind == TK_MINUS ||
               t.kind == TK_PLUS || (t.kind == TK_IDENT && (!tok_reserved(p) || is_kw(p, "CASE")));
  if (!starts) {
    sdescribe(p, &t, d, sizeof d);
    return sql_fail(p->err, &p->failed, t.pos,
                    "expected an aggregate (COUNT, SUM, MIN, MAX, AVG) or a GROUP BY column, found %s%s",
                    tok_reserved(p) ? "keyword " : "", d);
  }
  vx_node *v = parse_value(p);
  if (!v) return -1;
  it->end = p->prev_end;
  it->expr = v;
  if (v->kind == VX_AGG && v->pos == it->pos && v->end == it->end) {
    it->agg = (sel_agg)v->agg;
    it->arg = v->left;
  } else if (v->kind == VX_COLUMN && v->pos == it->pos && v->end == it->end) {
    it->agg = SEL_KEY;
    it->arg = v;
  } else {
    it->agg = SEL_EXPR;
  }
  return parse_alias(p, &it->alias, &it->alias_len);
}

/* ---- HAVING ---- */

static hv_node *new_hv(sparser *p, hv_kind k, size_t pos) {
  if (++p->nodes > SELECT_MAX_NODES) {
    sql_fail(p->err, &p->failed, p->tok.pos, "the statement's expressions have more than %d parts", SELECT_MAX_NODES);
    return NULL;
  }
  hv_node *h = salloc(p, sizeof *h);
  if (h) {
    h->kind = k;
    h->pos = pos;
  }
  return h;
}

static hv_node *parse_having(sparser *p);

/* The comparison operator at the current token, or -1. */
static int tok_cmp(const sparser *p) {
  if (p->tok.kind != TK_OTHER) return -1;
  const char *s = p->src + p->tok.pos;
  size_t n = p->tok.len;
  static const struct {
    const char *text;
    ps_cmp op;
  } ops[] = {{"=", PS_EQ}, {"==", PS_EQ}, {"!=", PS_NE}, {"<>", PS_NE},
             {"<", PS_LT}, {"<=", PS_LE}, {">", PS_GT},  {">=", PS_GE}};
  for (size_t i = 0; i < sizeof ops / sizeof *ops; i++)
    if (strlen(ops[i].text) == n && !memcmp(ops[i].text, s, n)) return (int)ops[i].op;
  return -1;
}

/* Whether the '(' at the current token opens a condition rather than a
 * value: a comparison or a logical keyword inside it, outside the
 * parentheses of function calls (SUM(CASE WHEN a > 1 ...) is a value). */
static int paren_is_condition(const sparser *p) {
  sparser q = *p;
  sql_error e;
  int depth = 0, calls = 0; /* calls: open parentheses of function calls */
  unsigned char call[SELECT_MAX_DEPTH + 2];
  sql_tok_kind prev = TK_EOF;
  do {
    if (q.tok.kind == TK_LPAREN) {
      int is_call = prev == TK_IDENT || prev == TK_QIDENT;
      if (depth >= SELECT_MAX_DEPTH + 1) return 0; /* too deep anyway: the value parser says so */
      call[++depth] = (unsigned char)is_call;
      calls += is_call;
    } else if (q.tok.kind == TK_RPAREN) {
      calls -= call[depth--];
    } else if (depth >= 1 && calls == 0 &&
               (tok_cmp(&q) >= 0 || is_kw(&q, "AND") || is_kw(&q, "OR") || is_kw(&q, "NOT") || is_kw(&q, "IS") ||
                is_kw(&q, "BETWEEN") || is_kw(&q, "IN"))) {
      return 1;
    }
    prev = q.tok.kind;
    if (sql_lex(q.src, q.len, &q.pos, &q.tok, SQL_LEX_STATEMENT, &e)) return 0;
  } while (depth > 0 && q.tok.kind != TK_EOF);
  return 0;
}

static hv_node *parse_predicate(sparser *p) {
  char d[64];
  size_t pos = p->tok.pos;
  if (p->tok.kind == TK_LPAREN && paren_is_condition(p)) {
    if (enter(p, pos) || slex(p)) return NULL;
    hv_node *h = parse_having(p);
    if (!h) return NULL;
    if (p->tok.kind != TK_RPAREN) {
      sdescribe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected ')' to close the '(' at column %zu, found %s", pos + 1, d);
      return NULL;
    }
    p->depth--;
    return slex(p) ? NULL : h;
  }
  if (is_kw(p, "NOT")) {
    if (enter(p, pos) || slex(p)) return NULL;
    hv_node *h = new_hv(p, HV_NOT, pos);
    if (!h || !(h->left = parse_predicate(p))) return NULL;
    h->end = h->left->end;
    p->depth--;
    return h;
  }
  vx_node *a = parse_value(p);
  if (!a) return NULL;
  int op = tok_cmp(p);
  if (op >= 0) {
    hv_node *h = new_hv(p, HV_CMP, pos);
    if (!h || slex(p)) return NULL;
    h->op = op;
    h->a = a;
    if (!(h->b = parse_value(p))) return NULL;
    h->end = h->b->end;
    return h;
  }
  if (is_kw(p, "IS")) {
    hv_node *h = new_hv(p, HV_IS_NULL, pos);
    if (!h || slex(p)) return NULL;
    h->a = a;
    if (is_kw(p, "NOT")) {
      h->negated = 1;
      if (slex(p)) return NULL;
    }
    if (!is_kw(p, "NULL")) {
      sdescribe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected NULL after IS%s, found %s", h->negated ? " NOT" : "", d);
      return NULL;
    }
    h->end = p->tok.pos + p->tok.len;
    return slex(p) ? NULL : h;
  }
  int negated = 0;
  if (is_kw(p, "NOT")) {
    negated = 1;
    if (slex(p)) return NULL;
    if (!is_kw(p, "BETWEEN") && !is_kw(p, "IN")) {
      sdescribe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected BETWEEN or IN after NOT, found %s", d);
      return NULL;
    }
  }
  if (is_kw(p, "BETWEEN")) {
    hv_node *h = new_hv(p, HV_BETWEEN, pos);
    if (!h || slex(p)) return NULL;
    h->a = a;
    h->negated = negated;
    if (!(h->b = parse_value(p))) return NULL;
    if (!is_kw(p, "AND")) {
      sdescribe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected AND in BETWEEN, found %s", d);
      return NULL;
    }
    if (slex(p) || !(h->c = parse_value(p))) return NULL;
    h->end = h->c->end;
    return h;
  }
  if (is_kw(p, "IN")) {
    hv_node *h = new_hv(p, HV_IN, pos);
    if (!h || slex(p)) return NULL;
    h->a = a;
    h->negated = negated;
    if (p->tok.kind != TK_LPAREN) {
      sdescribe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected '(' after IN, found %s", d);
      return NULL;
    }
    size_t open = p->tok.pos;
    tbuf items = {0};
    if (slex(p)) return NULL;
    for (;;) {
      vx_node *v = parse_value(p);
      if (!v || tbuf_append(&items, &v, sizeof v)) {
        if (v) sql_fail(p->err, &p->failed, pos, "out of memory");
        tbuf_free(&items);
        return NULL;
      }
      if (p->tok.kind != TK_COMMA) break;
      if (slex(p)) {
        tbuf_free(&items);
        return NULL;
      }
    }
    h->nlist = items.len / sizeof(vx_node *);
    h->list = salloc(p, items.len);
    if (h->list) memcpy(h->list, items.p, items.len);
    tbuf_free(&items);
    if (!h->list) return NULL;
    if (p->tok.kind != TK_RPAREN) {
      sdescribe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected ',' or ')' to close the '(' at column %zu, found %s", open + 1,
               d);
      return NULL;
    }
    h->end = p->tok.pos + p->tok.len;
    return slex(p) ? NULL : h;
  }
  if (is_kw(p, "LIKE"))
    sql_fail(p->err, &p->failed, p->tok.pos, "LIKE is not supported in HAVING (filter strings in WHERE)");
  else {
    sdescribe(p, &p->tok, d, sizeof d);
    sql_fail(p->err, &p->failed, p->tok.pos,
             "expected a comparison (= <> < <= > >=), BETWEEN, IN or IS NULL in HAVING, found %s%s",
             tok_reserved(p) ? "keyword " : "", d);
  }
  return NULL;
}

/* NOT > AND > OR; chains are left-deep and counted in SELECT_MAX_NODES. */
static hv_node *parse_having_and(sparser *p) {
  hv_node *l = parse_predicate(p);
  while (l && is_kw(p, "AND")) {
    if (slex(p)) return NULL;
    hv_node *r = parse_predicate(p), *n = r ? new_hv(p, HV_AND, l->pos) : NULL;
    if (!n) return NULL;
    n->left = l;
    n->right = r;
    n->end = r->end;
    l = n;
  }
  return l;
}

static hv_node *parse_having(sparser *p) {
  hv_node *l = parse_having_and(p);
  while (l && is_kw(p, "OR")) {
    if (slex(p)) return NULL;
    hv_node *r = parse_having_and(p), *n = r ? new_hv(p, HV_OR, l->pos) : NULL;
    if (!n) return NULL;
    n->left = l;
    n->right = r;
    n->end = r->end;
    l = n;
  }
  return l;
}

/* ---- ORDER BY, LIMIT, OFFSET ---- */

static int parse_order(sparser *p, select_stmt *out) {
  char d[64];
  for (;;) {
    if (out->norder == SELECT_MAX_ORDER)
      return sql_fail(p->err, &p->failed, p->tok.pos, "ORDER BY takes at most %d terms", SELECT_MAX_ORDER);
    sel_order *o = &out->order[out->norder];
    o->pos = p->tok.pos;
    o->nulls_first = -1;
    if (!(o->expr = parse_value(p))) return -1;
    o->end = p->prev_end;
    if (is_kw(p, "ASC") || is_kw(p, "DESC")) {
      o->desc = is_kw(p, "DESC");
      if (slex(p)) return -1;
    }
    if (is_kw(p, "NULLS")) {
      if (slex(p)) return -1;
      if (!is_kw(p, "FIRST") && !is_kw(p, "LAST")) {
        sdescribe(p, &p->tok, d, sizeof d);
        return sql_fail(p->err, &p->failed, p->tok.pos, "expected FIRST or LAST after NULLS, found %s", d);
      }
      o->nulls_first = is_kw(p, "FIRST");
      if (slex(p)) return -1;
    }
    out->norder++;
    if (p->tok.kind != TK_COMMA) return 0;
    if (slex(p)) return -1;
  }
}

/* LIMIT's or OFFSET's count: digits. */
static int parse_count(sparser *p, const char *what, uint64_t *out) {
  char d[64];
  const char *s = p->src + p->tok.pos;
  uint64_t v = 0;
  int ok = p->tok.kind == TK_NUMBER && p->tok.len > 0;
  for (size_t i = 0; ok && i < p->tok.len; i++) {
    if (s[i] < '0' || s[i] > '9')
      ok = 0;
    else if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
      return sql_fail(p->err, &p->failed, p->tok.pos, "%s count out of range", what);
    else
      v = v * 10 + (uint64_t)(s[i] - '0');
  }
  if (!ok) {
    sdescribe(p, &p->tok, d, sizeof d);
    return sql_fail(p->err, &p->failed, p->tok.pos, "expected a row count (digits) after %s, found %s", what, d);
  }
  *out = v;
  return slex(p);
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
  int depth = 0, items = 1, aggs = 0, lone_count_star = 0, in_list = 1, grouped = 0;
  if (slex(&p) || slex(&p)) return 0; /* SELECT */
  while (!p.failed && p.tok.kind != TK_EOF) {
    if (p.tok.kind == TK_LPAREN) depth++;
    if (p.tok.kind == TK_RPAREN) depth--;
    if (depth == 0 && (is_kw(&p, "FROM") || is_kw(&p, "WHERE") || is_kw(&p, "ORDER") || is_kw(&p, "LIMIT") ||
                       is_kw(&p, "OFFSET") || is_kw(&p, "HAVING")))
      in_list = 0;
    if (depth == 0 && (is_kw(&p, "GROUP") || is_kw(&p, "HAVING"))) grouped = 1;
    if (in_list && depth == 0 && p.tok.kind == TK_COMMA) items++;
    if (in_list && tok_aggregate(&p) >= 0) {
      int count = sql_word_eq(src + p.tok.pos, p.tok.len, "COUNT");
      if (slex(&p)) break;
      if (p.tok.kind != TK_LPAREN) continue;
      aggs++;
      depth++;
      if (slex(&p)) break;
      if (count && p.tok.kind == TK_STAR) lone_count_star++;
      continue;
    }
    if (slex(&p)) break;
  }
  expr_arena_free(&arena);
  return grouped || (aggs > 0 && !(items == 1 && aggs == 1 && lone_count_star == 1));
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
  if (slex(&p)) return -1;
  if (!is_kw(&p, "SELECT")) {
    sdescribe(&p, &p.tok, d, sizeof d);
    return sql_fail(p.err, &p.failed, p.tok.pos, "expected SELECT, found %s", d);
  }
  if (slex(&p)) return -1;
  for (;;) {
    if (out->nitems == SELECT_MAX_ITEMS)
      return sql_fail(p.err, &p.failed, p.tok.pos, "more than %d items in the SELECT list", SELECT_MAX_ITEMS);
    if (parse_item(&p, &out->items[out->nitems])) return -1;
    out->nitems++;
    if (p.tok.kind != TK_COMMA) break;
    if (slex(&p)) return -1;
  }
  if (is_kw(&p, "FROM")) {
    int q;
    if (slex(&p) || parse_name(&p, "a table name after FROM", &out->from, &out->from_len, &q)) return -1;
  }
  if (is_kw(&p, "WHERE")) {
    if (slex(&p)) return -1;
    out->where_pos = p.tok.pos;
    out->where = parse_condition(&p, stop_where, "WHERE");
    if (!out->where) return -1;
  }
  if (is_kw(&p, "GROUP")) {
    if (slex(&p)) return -1;
    if (!is_kw(&p, "BY")) {
      sdescribe(&p, &p.tok, d, sizeof d);
      return sql_fail(p.err, &p.failed, p.tok.pos, "expected BY after GROUP, found %s", d);
    }
    if (slex(&p)) return -1;
    for (;;) {
      if (out->nkeys == SELECT_MAX_KEYS)
        return sql_fail(p.err, &p.failed, p.tok.pos, "GROUP BY takes at most %d columns", SELECT_MAX_KEYS);
      sel_key *k = &out->keys[out->nkeys];
      k->pos = p.tok.pos;
      k->end = p.tok.pos + p.tok.len;
      if (parse_name(&p, "a column after GROUP BY", &k->name, &k->len, &k->quoted)) return -1;
      if (p.tok.kind == TK_LPAREN || p.tok.kind == TK_PLUS || p.tok.kind == TK_MINUS || p.tok.kind == TK_STAR)
        return sql_fail(p.err, &p.failed, p.tok.pos, "GROUP BY takes columns, not expressions");
      out->nkeys++;
      if (p.tok.kind != TK_COMMA) break;
      if (slex(&p)) return -1;
    }
  }
  if (is_kw(&p, "HAVING")) {
    if (slex(&p) || !(out->having = parse_having(&p))) return -1;
  }
  if (is_kw(&p, "ORDER")) {
    if (slex(&p)) return -1;
    if (!is_kw(&p, "BY")) {
      sdescribe(&p, &p.tok, d, sizeof d);
      return sql_fail(p.err, &p.failed, p.tok.pos, "expected BY after ORDER, found %s", d);
    }
    if (slex(&p) || parse_order(&p, out)) return -1;
  }
  if (is_kw(&p, "LIMIT")) {
    out->has_limit = 1;
    if (slex(&p) || parse_count(&p, "LIMIT", &out->limit)) return -1;
  }
  if (is_kw(&p, "OFFSET")) {
    out->has_offset = 1;
    if (slex(&p) || parse_count(&p, "OFFSET", &out->offset)) return -1;
  }
  if (p.tok.kind == TK_SEMI && slex(&p)) return -1;
  if (p.tok.kind != TK_EOF) {
    sdescribe(&p, &p.tok, d, sizeof d);
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

/* ---- printing ---- */

static int put_name(tbuf *o, const char *s, size_t len, int quoted) {
  int plain = !quoted && len > 0 && sql_is_ident_start((unsigned char)s[0]) && !word_reserved(s, len);
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
      r |= put_name(o, v->name, v->len, v->quoted);
      break;
    case VX_NUMBER:
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
        r |= expr_to_string(v->whens[i].cond, o);
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
        r |= tbuf_printf(o, "%s(", agg_names[v->agg]);
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
    r |= put_name(o, s->keys[i].name, s->keys[i].len, s->keys[i].quoted);
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
