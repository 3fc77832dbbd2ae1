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
  size_t nodes; /* value nodes so far, at most SELECT_MAX_NODES */
} sparser;

static void sdescribe(const sparser *p, const stok *t, char *out, size_t n) { sql_describe(p->src, t, out, n); }

static int slex(sparser *p) {
  sql_error e;
  if (sql_lex(p->src, p->len, &p->pos, &p->tok, SQL_LEX_STATEMENT, &e))
    return sql_fail(p->err, &p->failed, e.pos, "%s", e.msg);
  return 0;
}

static int is_kw(const sparser *p, const char *kw) { return sql_tok_is_kw(p->src, &p->tok, kw); }

/* Words that cannot be unquoted column names or aliases: this grammar's and
 * the WHERE-expression's. */
static const char *const reserved[] = {"SELECT",   "FROM", "WHERE", "GROUP", "BY",      "AS",     "CASE",
                                       "WHEN",     "THEN", "ELSE",  "END",   "ORDER",   "HAVING", "LIMIT",
                                       "DISTINCT", "AND",  "OR",    "NOT",   "BETWEEN", "IN",     "LIKE",
                                       "ESCAPE",   "IS",   "NULL",  "TRUE",  "FALSE"};

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
  return p->tok.kind == TK_SEMI || is_kw(p, "GROUP") || is_kw(p, "ORDER") || is_kw(p, "HAVING") || is_kw(p, "LIMIT");
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
  if (t.kind == TK_IDENT && sql_word_eq(p->src + t.pos, t.len, "CASE")) return parse_case(p);
  if (t.kind == TK_QIDENT || (t.kind == TK_IDENT && !tok_reserved(p))) {
    vx_node *v = new_vx(p, VX_COLUMN, t.pos);
    if (!v) return NULL;
    v->end = t.pos + t.len;
    if (parse_name(p, "a column", &v->name, &v->len, &v->quoted)) return NULL;
    if (p->tok.kind == TK_LPAREN && !v->quoted) {
      if (word_aggregate(p->src + t.pos, t.len) >= 0)
        sql_fail(p->err, &p->failed, t.pos, "aggregates cannot be nested");
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

static vx_node *parse_term(sparser *p) {
  vx_node *l = parse_factor(p);
  while (l && p->tok.kind == TK_STAR) {
    if (slex(p)) return NULL;
    vx_node *r = parse_factor(p);
    if (!r) return NULL;
    vx_node *n = new_vx(p, VX_MUL, l->pos);
    if (!n) return NULL;
    n->left = l;
    n->right = r;
    n->end = r->end;
    l = n;
  }
  if (l && p->tok.kind == TK_SLASH) {
    sql_fail(p->err, &p->failed, p->tok.pos,
             "division is not supported: value expressions take + - * (exact arithmetic); "
             "AVG divides once at the end");
    return NULL;
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

static int parse_item(sparser *p, sel_item *it) {
  char d[64];
  memset(it, 0, sizeof *it);
  stok t = p->tok;
  it->pos = t.pos;
  int a = tok_aggregate(p);
  if (a >= 0) {
    size_t save_pos = p->pos;
    stok save = p->tok;
    if (slex(p)) return -1;
    if (p->tok.kind != TK_LPAREN) { /* a column that happens to be called count, sum, ... */
      p->pos = save_pos;
      p->tok = save;
      a = -1;
    }
  }
  if (a >= 0) {
    size_t open = p->tok.pos;
    it->agg = aggregate_kinds[a];
    if (slex(p)) return -1;
    if (is_kw(p, "DISTINCT")) return sql_fail(p->err, &p->failed, p->tok.pos, "DISTINCT aggregates are not supported");
    if (p->tok.kind == TK_STAR) {
      if (it->agg != SEL_COUNT) return sql_fail(p->err, &p->failed, p->tok.pos, "only COUNT takes '*'");
      it->agg = SEL_COUNT_STAR;
      if (slex(p)) return -1;
    } else if (p->tok.kind == TK_RPAREN) {
      return sql_fail(p->err, &p->failed, p->tok.pos, "%s needs an argument%s", aggregates[a],
                      a == 0 ? " (COUNT(*) counts rows)" : "");
    } else {
      it->arg = parse_value(p);
      if (!it->arg) return -1;
    }
    if (p->tok.kind != TK_RPAREN) {
      sdescribe(p, &p->tok, d, sizeof d);
      return sql_fail(p->err, &p->failed, p->tok.pos, "expected ')' to close the '(' at column %zu, found %s", open + 1,
                      d);
    }
    it->end = p->tok.pos + p->tok.len;
    if (slex(p)) return -1;
  } else if (t.kind == TK_QIDENT || (t.kind == TK_IDENT && !tok_reserved(p))) {
    it->agg = SEL_KEY;
    it->arg = new_vx(p, VX_COLUMN, t.pos);
    if (!it->arg) return -1;
    it->arg->end = it->end = t.pos + t.len;
    if (parse_name(p, "a column", &it->arg->name, &it->arg->len, &it->arg->quoted)) return -1;
    if (p->tok.kind == TK_LPAREN && t.kind == TK_IDENT)
      return sql_fail(p->err, &p->failed, t.pos,
                      "unknown function '%.*s' (the aggregates are COUNT, SUM, MIN, MAX and AVG)",
                      (int)(t.len > 40 ? 40 : t.len), p->src + t.pos);
  } else if (t.kind == TK_STAR) {
    return sql_fail(p->err, &p->failed, t.pos,
                    "SELECT * lists rows, which this SELECT does not: use a WHERE-expression with "
                    "--select '*' to print rows");
  } else {
    sdescribe(p, &t, d, sizeof d);
    return sql_fail(p->err, &p->failed, t.pos,
                    "expected an aggregate (COUNT, SUM, MIN, MAX, AVG) or a GROUP BY column, found %s%s",
                    tok_reserved(p) ? "keyword " : "", d);
  }
  sql_tok_kind k = p->tok.kind;
  if (k == TK_PLUS || k == TK_MINUS || k == TK_STAR || k == TK_SLASH || k == TK_LPAREN)
    return sql_fail(p->err, &p->failed, p->tok.pos,
                    it->agg == SEL_KEY
                        ? "a SELECT item outside an aggregate must be a plain GROUP BY column"
                        : "arithmetic on aggregate results is not supported: put it inside the aggregate");
  if (is_kw(p, "AS")) {
    int q;
    if (slex(p)) return -1;
    if (parse_name(p, "an alias after AS", &it->alias, &it->alias_len, &q)) return -1;
  } else if (p->tok.kind == TK_QIDENT || (p->tok.kind == TK_IDENT && !tok_reserved(p))) {
    int q;
    if (parse_name(p, "an alias", &it->alias, &it->alias_len, &q)) return -1;
  }
  return 0;
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
    if (depth == 0 && (is_kw(&p, "FROM") || is_kw(&p, "WHERE") || is_kw(&p, "ORDER") || is_kw(&p, "LIMIT")))
      in_list = 0;
    if (depth == 0 && is_kw(&p, "GROUP")) grouped = 1;
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
  if (is_kw(&p, "ORDER"))
    return sql_fail(p.err, &p.failed, p.tok.pos, "ORDER BY is not supported (groups come in ascending key order)");
  if (is_kw(&p, "HAVING")) return sql_fail(p.err, &p.failed, p.tok.pos, "HAVING is not supported");
  if (is_kw(&p, "LIMIT")) return sql_fail(p.err, &p.failed, p.tok.pos, "LIMIT is not supported");
  if (p.tok.kind == TK_SEMI && slex(&p)) return -1;
  if (p.tok.kind != TK_EOF) {
    sdescribe(&p, &p.tok, d, sizeof d);
    if (out->nkeys == 0 && !out->where && !out->from && p.tok.kind == TK_IDENT)
      return sql_fail(p.err, &p.failed, p.tok.pos,
                      "expected ',', FROM, WHERE, GROUP BY or the end of the statement, found %s", d);
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

/* Binding strength: + - 1, * 2, everything else 3. */
static int vx_prec(const vx_node *v) { return v->kind == VX_ADD || v->kind == VX_SUB ? 1 : v->kind == VX_MUL ? 2 : 3; }

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
      r |= vx_print(v->left, p, o);
      r |= tbuf_printf(o, " %c ", v->kind == VX_ADD ? '+' : v->kind == VX_SUB ? '-' : '*');
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
  }
  if (wrap) r |= tbuf_putc(o, ')');
  return r ? -1 : 0;
}

int vx_to_string(const vx_node *v, tbuf *o) { return vx_print(v, 0, o); }

int select_to_string(const select_stmt *s, tbuf *o) {
  static const char *const names[] = {"", "COUNT", "COUNT", "SUM", "MIN", "MAX", "AVG"};
  int r = tbuf_printf(o, "SELECT ");
  for (size_t i = 0; i < s->nitems; i++) {
    const sel_item *it = &s->items[i];
    if (i) r |= tbuf_printf(o, ", ");
    if (it->agg == SEL_KEY) {
      r |= vx_to_string(it->arg, o);
    } else if (it->agg == SEL_COUNT_STAR) {
      r |= tbuf_printf(o, "COUNT(*)");
    } else {
      r |= tbuf_printf(o, "%s(", names[it->agg]);
      r |= vx_to_string(it->arg, o);
      r |= tbuf_putc(o, ')');
    }
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
  return r ? -1 : 0;
}
