/* Recursive-descent parser for WHERE-expressions (see expr.h), over sql_lex.c's tokens. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "expr.h"
#include "sql_lex.h"

/* ---- arena ---- */

struct arena_block {
  struct arena_block *next;
  size_t used, cap;
  _Alignas(16) unsigned char mem[];
};

void expr_arena_free(expr_arena *a) {
  struct arena_block *b = a->head;
  while (b) {
    struct arena_block *n = b->next;
    free(b);
    b = n;
  }
  a->head = NULL;
}

static void *arena_alloc(expr_arena *a, size_t size) {
  size = (size + 15) & ~(size_t)15;
  if (size == 0) size = 16;
  struct arena_block *b = a->head;
  if (!b || b->cap - b->used < size) {
    size_t cap = size > 4096 ? size : 4096;
    b = malloc(sizeof *b + cap);
    if (!b) return NULL;
    b->next = a->head;
    b->used = 0;
    b->cap = cap;
    a->head = b;
  }
  void *p = b->mem + b->used;
  b->used += size;
  memset(p, 0, size);
  return p;
}

/* ---- lexer: sql_lex.c ---- */

typedef sql_token token;

typedef struct parser {
  const char *src;
  size_t len, pos;
  token tok;
  expr_arena *arena;
  expr_error *err;
  int failed;
  int depth;
} parser;

static void describe(const parser *p, const token *t, char *out, size_t n) { sql_describe(p->src, t, out, n); }

static int lex(parser *p) {
  sql_error e;
  if (sql_lex(p->src, p->len, &p->pos, &p->tok, SQL_LEX_EXPR, &e))
    return sql_fail(p->err, &p->failed, e.pos, "%s", e.msg);
  return 0;
}

static int tok_is_kw(const parser *p, const char *kw) { return sql_tok_is_kw(p->src, &p->tok, kw); }

/* ---- date functions ---- */

static const char *const fn_names[EXPR_FN_LAST + 1] = {
    "",     "second",  "minute", "hour", "day",  "week",   "month",  "quarter", "year",
    "year", "quarter", "month",  "day",  "hour", "minute", "second", "dow",     "doy"};

const char *expr_date_fn_name(int fn) { return fn > 0 && fn <= EXPR_FN_LAST ? fn_names[fn] : ""; }

static int word_is(const char *w, size_t len, const char *lower) {
  size_t i = 0;
  for (; i < len && lower[i]; i++)
    if ((w[i] >= 'A' && w[i] <= 'Z' ? w[i] + 32 : w[i]) != lower[i]) return 0;
  return i == len && !lower[i];
}

int expr_date_fn_of_word(const char *w, size_t len, int trunc) {
  for (int fn = trunc ? 1 : EXPR_FN_TRUNC_LAST + 1; fn <= (trunc ? EXPR_FN_TRUNC_LAST : EXPR_FN_LAST); fn++)
    if (word_is(w, len, fn_names[fn])) return fn;
  if (!trunc && word_is(w, len, "dayofweek")) return EXPR_FN_LAST - 1;
  if (!trunc && word_is(w, len, "dayofyear")) return EXPR_FN_LAST;
  return 0;
}

int expr_date_fn_call(const char *w, size_t len) {
  return word_is(w, len, "date_trunc") || word_is(w, len, "date_part") || word_is(w, len, "datepart") ||
         word_is(w, len, "extract") || expr_date_fn_of_word(w, len, 0);
}

/* Reserved words (DATE is not reserved: it starts a literal only before a string). */
static const char *const keywords[] = {"AND", "OR",   "NOT",  "BETWEEN", "IN",   "LIKE",
                                       "ESCAPE", "IS", "NULL", "TRUE",    "FALSE"};

static int tok_is_any_kw(const parser *p) {
  for (size_t i = 0; i < sizeof keywords / sizeof *keywords; i++)
    if (tok_is_kw(p, keywords[i])) return 1;
  return 0;
}

/* Unescapes a quoted token ('it''s' -> it's) into the arena. */
static const char *unquote(parser *p, const token *t, size_t *len) {
  char *out = arena_alloc(p->arena, t->len + 1);
  if (!out) {
    sql_fail(p->err, &p->failed, t->pos, "out of memory");
    return NULL;
  }
  *len = sql_unquote(p->src, t, out);
  return out;
}

static int parse_number(parser *p, const token *t, int neg, size_t start, ast_operand *o) {
  const char *s = p->src + t->pos;
  int is_float = 0;
  for (size_t i = 0; i < t->len; i++)
    if (s[i] == '.' || s[i] == 'e' || s[i] == 'E') is_float = 1;
  o->pos = start;
  o->end = t->pos + t->len;
  if (!is_float) {
    uint64_t mag = 0;
    int overflow = 0;
    for (size_t i = 0; i < t->len; i++) {
      unsigned d = (unsigned)(s[i] - '0');
      if (mag > (UINT64_MAX - d) / 10) overflow = 1;
      mag = mag * 10 + d;
    }
    if (overflow || (neg && mag > (uint64_t)INT64_MAX + 1))
      return sql_fail(p->err, &p->failed, start, "integer literal out of range");
    if (neg) {
      o->kind = OPD_INT;
      o->i = mag == (uint64_t)INT64_MAX + 1 ? INT64_MIN : -(int64_t)mag;
    } else if (mag > (uint64_t)INT64_MAX) {
      o->kind = OPD_UINT;
      o->u = mag;
    } else {
      o->kind = OPD_INT;
      o->i = (int64_t)mag;
    }
    return 0;
  }
  char *tmp = arena_alloc(p->arena, t->len + 2);
  if (!tmp) return sql_fail(p->err, &p->failed, t->pos, "out of memory");
  if (!memchr(s, 'e', t->len) && !memchr(s, 'E', t->len)) {
    /* A decimal point without an exponent: an exact decimal, as SQL reads it
     * (the library's own parser, so that every front end agrees). */
    tmp[0] = '-';
    memcpy(tmp + 1, s, t->len);
    char msg[256];
    ps_status st = ps_literal_parse(neg ? tmp : tmp + 1, t->len + (neg ? 1 : 0), &o->dec, msg, sizeof msg);
    if (st != PS_OK) return sql_fail(p->err, &p->failed, start, "numeric literal: %s", msg);
    o->kind = o->dec.kind == PS_LIT_DECIMAL ? OPD_DECIMAL : OPD_FLOAT;
    if (o->kind == OPD_FLOAT) o->f = o->dec.v.f;
    return 0;
  }
  memcpy(tmp, s, t->len);
  tmp[t->len] = 0;
  double v = strtod(tmp, NULL);
  if (!isfinite(v)) return sql_fail(p->err, &p->failed, start, "numeric literal out of range");
  o->kind = OPD_FLOAT;
  o->f = neg ? -v : v;
  return 0;
}

/* operand := identifier | "quoted" | literal. what names the expected thing. */
/* A date function of a column (the name is the current token, '(' follows):
 * o becomes the column with fn set. */
static int parse_date_fn(parser *p, ast_operand *o) {
  char d[64];
  token t = p->tok;
  const char *w = p->src + t.pos;
  const int trunc = word_is(w, t.len, "date_trunc"), extract = word_is(w, t.len, "extract");
  const int part = word_is(w, t.len, "date_part") || word_is(w, t.len, "datepart");
  int fn = trunc || part || extract ? 0 : expr_date_fn_of_word(w, t.len, 0);
  if (lex(p)) return -1; /* '(' */
  size_t open = p->tok.pos;
  if (lex(p)) return -1;
  if (!fn) {
    token f = p->tok;
    size_t flen = 0;
    const char *fw = NULL;
    if (f.kind == TK_STRING) {
      if (!(fw = unquote(p, &p->tok, &flen))) return -1;
    } else if (extract && f.kind == TK_IDENT) {
      fw = p->src + f.pos, flen = f.len;
    }
    if (!(fn = fw ? expr_date_fn_of_word(fw, flen, trunc) : 0)) {
      describe(p, &f, d, sizeof d);
      return sql_fail(p->err, &p->failed, f.pos,
                      trunc ? "expected a part of date_trunc ('second', 'minute', 'hour', 'day', 'week', 'month', "
                              "'quarter' or 'year'), found %s"
                            : "expected a field (year, quarter, month, day, hour, minute, second, dow or doy), "
                              "found %s",
                      d);
    }
    if (lex(p)) return -1;
    if (extract ? !tok_is_kw(p, "FROM") : p->tok.kind != TK_COMMA) {
      describe(p, &p->tok, d, sizeof d);
      return sql_fail(p->err, &p->failed, p->tok.pos, "expected %s, found %s", extract ? "FROM" : "','", d);
    }
    if (lex(p)) return -1;
  }
  o->kind = OPD_COLUMN;
  o->fn = fn;
  if (p->tok.kind == TK_QIDENT) {
    o->quoted = 1;
    if (!(o->s = unquote(p, &p->tok, &o->len))) return -1;
  } else if (p->tok.kind == TK_IDENT && !tok_is_any_kw(p)) {
    o->s = p->src + p->tok.pos, o->len = p->tok.len;
  } else {
    describe(p, &p->tok, d, sizeof d);
    return sql_fail(p->err, &p->failed, p->tok.pos, "expected a date or timestamp column, found %s", d);
  }
  if (lex(p)) return -1;
  if (p->tok.kind != TK_RPAREN) {
    describe(p, &p->tok, d, sizeof d);
    return sql_fail(p->err, &p->failed, p->tok.pos, "expected ')' to close the '(' at column %zu, found %s", open + 1,
                    d);
  }
  o->end = p->tok.pos + p->tok.len;
  return lex(p);
}

static int parse_operand(parser *p, ast_operand *o, const char *what) {
  char d[64];
  memset(o, 0, sizeof *o);
  token t = p->tok;
  o->pos = t.pos;
  o->end = t.pos + t.len;
  if (t.kind == TK_IDENT && expr_date_fn_call(p->src + t.pos, t.len)) {
    size_t save_pos = p->pos;
    token save_tok = p->tok;
    if (lex(p)) return -1;
    int call = p->tok.kind == TK_LPAREN;
    p->pos = save_pos;
    p->tok = save_tok;
    if (call) return parse_date_fn(p, o);
  }
  if (t.kind == TK_IDENT) {
    if (tok_is_kw(p, "DATE") || tok_is_kw(p, "TIMESTAMP") || tok_is_kw(p, "TIME")) {
      /* DATE is a literal prefix only when a string follows: a column may be
       * called "date". */
      size_t save_pos = p->pos;
      token save_tok = p->tok;
      if (lex(p)) return -1;
      if (p->tok.kind != TK_STRING) {
        p->pos = save_pos;
        p->tok = save_tok;
        o->kind = OPD_COLUMN;
        o->s = p->src + t.pos;
        o->len = t.len;
        return lex(p);
      }
      size_t len;
      const char *str = unquote(p, &p->tok, &len);
      if (!str) return -1;
      int is_date = t.len == 4 && (p->src[t.pos] == 'd' || p->src[t.pos] == 'D');
      if (is_date) {
        int32_t days;
        if (parse_date(str, len, &days))
          return sql_fail(p->err, &p->failed, p->tok.pos, "invalid date (expected 'yyyy-mm-dd')");
        o->kind = OPD_DATE;
        o->i = days;
      } else if (t.len == 9) { /* TIMESTAMP (TIME has 4 letters) */
        if (parse_timestamp(str, len, &o->i, &o->ns, &o->digits, NULL))
          return sql_fail(p->err, &p->failed, p->tok.pos,
                          "invalid timestamp (expected 'yyyy-mm-dd hh:mm:ss[.fff]', optionally 'Z' or '+hh:mm')");
        o->kind = OPD_TIMESTAMP;
      } else { /* TIME */
        if (parse_time(str, len, &o->i, &o->ns, &o->digits))
          return sql_fail(p->err, &p->failed, p->tok.pos,
                          "invalid time (expected 'hh:mm:ss[.fff]', 00:00:00 to 23:59:59)");
        o->kind = OPD_TIME;
      }
      o->end = p->tok.pos + p->tok.len;
      return lex(p);
    }
    if (tok_is_kw(p, "NULL"))
      return sql_fail(p->err, &p->failed, t.pos,
                      "NULL is not a value here: comparisons with NULL are never true (use IS NULL)");
    if (tok_is_kw(p, "TRUE") || tok_is_kw(p, "FALSE")) {
      o->kind = OPD_BOOL;
      o->i = tok_is_kw(p, "TRUE");
      return lex(p);
    }
    if (tok_is_any_kw(p)) {
      describe(p, &t, d, sizeof d);
      return sql_fail(p->err, &p->failed, t.pos, "expected %s, found keyword %s", what, d);
    }
    o->kind = OPD_COLUMN;
    o->s = p->src + t.pos;
    o->len = t.len;
    return lex(p);
  }
  if (t.kind == TK_QIDENT) {
    o->kind = OPD_COLUMN;
    o->quoted = 1;
    o->s = unquote(p, &t, &o->len);
    if (!o->s) return -1;
    if (o->len == 0) return sql_fail(p->err, &p->failed, t.pos, "empty quoted identifier");
    return lex(p);
  }
  if (t.kind == TK_STRING) {
    o->kind = OPD_STRING;
    o->s = unquote(p, &t, &o->len);
    if (!o->s) return -1;
    return lex(p);
  }
  if (t.kind == TK_PLUS || t.kind == TK_MINUS) {
    int neg = t.kind == TK_MINUS;
    if (lex(p)) return -1;
    if (p->tok.kind != TK_NUMBER) {
      describe(p, &p->tok, d, sizeof d);
      return sql_fail(p->err, &p->failed, p->tok.pos, "expected a number after '%c', found %s", neg ? '-' : '+', d);
    }
    token num = p->tok;
    if (parse_number(p, &num, neg, t.pos, o)) return -1;
    return lex(p);
  }
  if (t.kind == TK_NUMBER) {
    if (parse_number(p, &t, 0, t.pos, o)) return -1;
    return lex(p);
  }
  describe(p, &t, d, sizeof d);
  return sql_fail(p->err, &p->failed, t.pos, "expected %s, found %s", what, d);
}

static ast_node *new_node(parser *p, ast_kind k, size_t pos) {
  ast_node *n = arena_alloc(p->arena, sizeof *n);
  if (!n) {
    sql_fail(p->err, &p->failed, pos, "out of memory");
    return NULL;
  }
  n->kind = k;
  n->pos = pos;
  n->escape = -1;
  return n;
}

static ps_cmp flip(ps_cmp op) {
  switch (op) {
  case PS_LT: return PS_GT;
  case PS_LE: return PS_GE;
  case PS_GT: return PS_LT;
  case PS_GE: return PS_LE;
  default: return op;
  }
}

static ast_node *parse_or(parser *p);

static ast_node *parse_predicate(parser *p) {
  char d[64];
  if (p->tok.kind == TK_LPAREN) {
    size_t open = p->tok.pos;
    if (++p->depth > EXPR_MAX_DEPTH) {
      sql_fail(p->err, &p->failed, open, "expression nested too deeply (more than %d levels)", EXPR_MAX_DEPTH);
      return NULL;
    }
    if (lex(p)) return NULL;
    ast_node *e = parse_or(p);
    if (!e) return NULL;
    if (p->tok.kind != TK_RPAREN) {
      describe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected ')' to close the '(' at column %zu, found %s", open + 1, d);
      return NULL;
    }
    p->depth--;
    if (lex(p)) return NULL;
    return e;
  }
  ast_operand a;
  if (parse_operand(p, &a, "a column or literal")) return NULL;
  size_t pos = a.pos;
  if (p->tok.kind == TK_CMP) {
    ast_node *n = new_node(p, AST_CMP, pos);
    if (!n) return NULL;
    n->op = p->tok.op;
    size_t oppos = p->tok.pos;
    if (lex(p)) return NULL;
    if (parse_operand(p, &n->b, "a column or literal")) return NULL;
    n->a = a;
    if (a.kind != OPD_COLUMN && n->b.kind != OPD_COLUMN) {
      sql_fail(p->err, &p->failed, oppos, "comparison of two literals: one side must be a column");
      return NULL;
    }
    if (a.kind != OPD_COLUMN) { /* 5 < x  ->  x > 5 */
      n->a = n->b;
      n->b = a;
      n->op = flip(n->op);
    }
    return n;
  }
  int negate = 0;
  size_t notpos = p->tok.pos;
  if (tok_is_kw(p, "NOT")) {
    negate = 1;
    if (lex(p)) return NULL;
    if (!tok_is_kw(p, "BETWEEN") && !tok_is_kw(p, "IN") && !tok_is_kw(p, "LIKE")) {
      describe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected BETWEEN, IN or LIKE after NOT, found %s", d);
      return NULL;
    }
  }
  (void)notpos;
  if (tok_is_kw(p, "BETWEEN")) {
    ast_node *n = new_node(p, AST_BETWEEN, pos);
    if (!n) return NULL;
    n->negate = negate;
    n->a = a;
    if (lex(p) || parse_operand(p, &n->b, "a lower bound")) return NULL;
    if (!tok_is_kw(p, "AND")) {
      describe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected AND in BETWEEN, found %s", d);
      return NULL;
    }
    if (lex(p) || parse_operand(p, &n->c, "an upper bound")) return NULL;
    if (a.kind != OPD_COLUMN && (n->b.kind != OPD_COLUMN || n->c.kind != OPD_COLUMN)) {
      sql_fail(p->err, &p->failed, pos, "BETWEEN on a literal needs columns as both bounds");
      return NULL;
    }
    return n;
  }
  if (tok_is_kw(p, "IN")) {
    if (a.kind != OPD_COLUMN) {
      sql_fail(p->err, &p->failed, pos, "IN needs a column on its left");
      return NULL;
    }
    ast_node *n = new_node(p, AST_IN, pos);
    if (!n) return NULL;
    n->negate = negate;
    n->a = a;
    if (lex(p)) return NULL;
    if (p->tok.kind != TK_LPAREN) {
      describe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected '(' after IN, found %s", d);
      return NULL;
    }
    if (lex(p)) return NULL;
    tbuf items = {0};
    for (;;) {
      ast_operand lit;
      if (parse_operand(p, &lit, "a literal")) {
        tbuf_free(&items);
        return NULL;
      }
      if (lit.kind == OPD_COLUMN) {
        tbuf_free(&items);
        sql_fail(p->err, &p->failed, lit.pos, "IN lists hold literals only, not columns");
        return NULL;
      }
      if (tbuf_append(&items, &lit, sizeof lit)) {
        tbuf_free(&items);
        sql_fail(p->err, &p->failed, lit.pos, "out of memory");
        return NULL;
      }
      if (p->tok.kind == TK_COMMA) {
        if (lex(p)) {
          tbuf_free(&items);
          return NULL;
        }
        continue;
      }
      if (p->tok.kind == TK_RPAREN) break;
      describe(p, &p->tok, d, sizeof d);
      tbuf_free(&items);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected ',' or ')' in the IN list, found %s", d);
      return NULL;
    }
    n->nlist = items.len / sizeof(ast_operand);
    n->list = arena_alloc(p->arena, items.len);
    if (!n->list) {
      tbuf_free(&items);
      sql_fail(p->err, &p->failed, pos, "out of memory");
      return NULL;
    }
    memcpy(n->list, items.p, items.len);
    tbuf_free(&items);
    if (lex(p)) return NULL;
    return n;
  }
  if (tok_is_kw(p, "LIKE")) {
    if (a.kind != OPD_COLUMN) {
      sql_fail(p->err, &p->failed, pos, "LIKE needs a column on its left");
      return NULL;
    }
    ast_node *n = new_node(p, AST_LIKE, pos);
    if (!n) return NULL;
    n->negate = negate;
    n->a = a;
    if (lex(p)) return NULL;
    if (p->tok.kind != TK_STRING) {
      describe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected a 'pattern' string after LIKE, found %s", d);
      return NULL;
    }
    if (parse_operand(p, &n->b, "a pattern")) return NULL;
    if (tok_is_kw(p, "ESCAPE")) {
      if (lex(p)) return NULL;
      if (p->tok.kind != TK_STRING) {
        describe(p, &p->tok, d, sizeof d);
        sql_fail(p->err, &p->failed, p->tok.pos, "expected a one-character string after ESCAPE, found %s", d);
        return NULL;
      }
      size_t epos = p->tok.pos, elen;
      const char *e = unquote(p, &p->tok, &elen);
      if (!e) return NULL;
      if (elen != 1 || (unsigned char)e[0] > 127) {
        sql_fail(p->err, &p->failed, epos, "the ESCAPE character must be exactly one ASCII character");
        return NULL;
      }
      n->escape = (unsigned char)e[0];
      if (lex(p)) return NULL;
    }
    return n;
  }
  if (tok_is_kw(p, "IS")) {
    if (a.kind != OPD_COLUMN) {
      sql_fail(p->err, &p->failed, pos, "IS NULL needs a column on its left");
      return NULL;
    }
    ast_node *n = new_node(p, AST_ISNULL, pos);
    if (!n) return NULL;
    n->a = a;
    if (lex(p)) return NULL;
    if (tok_is_kw(p, "NOT")) {
      n->negate = 1;
      if (lex(p)) return NULL;
    }
    if (!tok_is_kw(p, "NULL")) {
      describe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected NULL after IS%s, found %s", n->negate ? " NOT" : "", d);
      return NULL;
    }
    if (lex(p)) return NULL;
    return n;
  }
  describe(p, &p->tok, d, sizeof d);
  sql_fail(p->err, &p->failed, p->tok.pos,
           "expected a comparison operator, BETWEEN, IN, LIKE or IS after '%.*s', found %s",
           (int)(a.end - a.pos > 40 ? 40 : a.end - a.pos), p->src + a.pos, d);
  return NULL;
}

static ast_node *parse_not(parser *p) {
  if (tok_is_kw(p, "NOT")) {
    size_t pos = p->tok.pos;
    if (++p->depth > EXPR_MAX_DEPTH) {
      sql_fail(p->err, &p->failed, pos, "expression nested too deeply (more than %d levels)", EXPR_MAX_DEPTH);
      return NULL;
    }
    if (lex(p)) return NULL;
    ast_node *c = parse_not(p);
    if (!c) return NULL;
    p->depth--;
    ast_node *n = new_node(p, AST_NOT, pos);
    if (!n) return NULL;
    n->left = c;
    return n;
  }
  return parse_predicate(p);
}

/* Balanced tree over terms[lo, hi): depth log2 of the chain length. */
static ast_node *balance(parser *p, ast_kind k, ast_node **terms, size_t lo, size_t hi) {
  if (hi - lo == 1) return terms[lo];
  size_t mid = lo + (hi - lo) / 2;
  ast_node *l = balance(p, k, terms, lo, mid);
  ast_node *r = l ? balance(p, k, terms, mid, hi) : NULL;
  if (!r) return NULL;
  ast_node *n = new_node(p, k, l->pos);
  if (!n) return NULL;
  n->left = l;
  n->right = r;
  return n;
}

static ast_node *parse_chain(parser *p, ast_kind k) {
  const char *kw = k == AST_OR ? "OR" : "AND";
  tbuf terms = {0};
  for (;;) {
    ast_node *t = k == AST_OR ? parse_chain(p, AST_AND) : parse_not(p);
    if (!t || tbuf_append(&terms, &t, sizeof t)) {
      if (t) sql_fail(p->err, &p->failed, t->pos, "out of memory");
      tbuf_free(&terms);
      return NULL;
    }
    if (!tok_is_kw(p, kw)) break;
    if (lex(p)) {
      tbuf_free(&terms);
      return NULL;
    }
  }
  ast_node **v = (ast_node **)(void *)terms.p;
  ast_node *n = balance(p, k, v, 0, terms.len / sizeof *v);
  tbuf_free(&terms);
  return n;
}

static ast_node *parse_or(parser *p) { return parse_chain(p, AST_OR); }

/* The first node, left to right, at which n's canonical text passes
 * EXPR_MAX_DEPTH levels of nesting as the parser counts them reading it back,
 * `used` levels being open around n; NULL where it never does.
 * expr_to_string writes "(NOT x)", two levels (the parenthesis and the NOT),
 * and every AND or OR in parentheses, one, including the AND/OR nodes of a
 * chain written without any: so a text within EXPR_MAX_DEPTH can have a
 * canonical text past it (101 NOTs: 202 levels). It recurses as deep as
 * expr_to_string does. */
static const ast_node *written_too_deep(const ast_node *n, int used) {
  if (n->kind != AST_NOT && n->kind != AST_AND && n->kind != AST_OR) return NULL;
  used += n->kind == AST_NOT ? 2 : 1;
  if (used > EXPR_MAX_DEPTH) return n;
  const ast_node *deep = written_too_deep(n->left, used);
  return deep || n->kind == AST_NOT ? deep : written_too_deep(n->right, used);
}

int expr_parse(const char *src, size_t len, expr_arena *arena, ast_node **out, expr_error *err) {
  parser p;
  memset(&p, 0, sizeof p);
  p.src = src;
  p.len = len;
  p.arena = arena;
  p.err = err;
  memset(err, 0, sizeof *err);
  /* A trailing ';' as a SQL shell takes it (outside quotes: the lexer would
   * have found the closing quote before it). */
  while (p.len > 0 && (sql_is_space((unsigned char)src[p.len - 1]) || src[p.len - 1] == ';')) p.len--;
  if (lex(&p)) return -1;
  /* A leading WHERE, as copied from a SQL statement; a column named "where"
   * is still one when a comparison or the end follows it. */
  if (tok_is_kw(&p, "WHERE")) {
    parser save = p;
    if (lex(&p)) return -1;
    if (p.tok.kind == TK_CMP || p.tok.kind == TK_EOF || tok_is_kw(&p, "IS") || tok_is_kw(&p, "BETWEEN") ||
        tok_is_kw(&p, "IN") || tok_is_kw(&p, "LIKE"))
      p = save;
  }
  if (p.tok.kind == TK_EOF) return sql_fail(p.err, &p.failed, 0, "empty expression");
  ast_node *n = parse_or(&p);
  if (!n) return -1;
  if (p.tok.kind != TK_EOF) {
    char d[64];
    describe(&p, &p.tok, d, sizeof d);
    if (p.tok.kind == TK_RPAREN) return sql_fail(p.err, &p.failed, p.tok.pos, "unbalanced ')'");
    return sql_fail(p.err, &p.failed, p.tok.pos, "expected AND, OR or the end of the expression, found %s", d);
  }
  /* Every accepted expression's canonical text parses back. */
  const ast_node *deep = written_too_deep(n, 0);
  if (deep)
    return sql_fail(p.err, &p.failed, deep->pos,
                    "expression nested too deeply (more than %d levels written back with parentheses: two for each "
                    "NOT, one for each AND or OR)",
                    EXPR_MAX_DEPTH);
  *out = n;
  return 0;
}

/* ---- printing ---- */

static int is_plain_ident(const char *s, size_t len) {
  if (len == 0 || !sql_is_ident_start((unsigned char)s[0])) return 0;
  for (size_t i = 1; i < len; i++)
    if (!sql_is_ident_char((unsigned char)s[i])) return 0;
  for (size_t k = 0; k < sizeof keywords / sizeof *keywords; k++)
    if (sql_word_eq(s, len, keywords[k])) return 0;
  return 1;
}

static int put_quoted(tbuf *o, const char *s, size_t len, char q) {
  if (tbuf_putc(o, q)) return -1;
  for (size_t i = 0; i < len; i++) {
    if (s[i] == q && tbuf_putc(o, q)) return -1;
    if (tbuf_putc(o, s[i])) return -1;
  }
  return tbuf_putc(o, q);
}

static int put_operand(tbuf *o, const ast_operand *a) {
  char tmp[48];
  switch (a->kind) {
  case OPD_COLUMN: {
    int r = 0;
    if (a->fn)
      r |= tbuf_printf(o, a->fn <= EXPR_FN_TRUNC_LAST ? "date_trunc('%s', " : "extract(%s FROM ",
                       expr_date_fn_name(a->fn));
    if (!a->quoted && is_plain_ident(a->s, a->len))
      r |= tbuf_append(o, a->s, a->len);
    else
      r |= put_quoted(o, a->s, a->len, '"');
    return a->fn ? r | tbuf_putc(o, ')') : r;
  }
  case OPD_INT: return tbuf_printf(o, "%lld", (long long)a->i);
  case OPD_UINT: return tbuf_printf(o, "%llu", (unsigned long long)a->u);
  case OPD_FLOAT: {
    /* Keep it a double when printed back (an exponent: 1e3, 0.5e0; without
     * one it would read as an exact decimal), so that the canonical text
     * parses to the same tree. */
    char num[40];
    snprintf(num, sizeof num, "%.17g", a->f);
    return tbuf_printf(o, "%s%s", num, strchr(num, 'e') ? "" : "e0");
  }
  case OPD_STRING: return put_quoted(o, a->s, a->len, '\'');
  case OPD_DATE: format_date(a->i, tmp); return tbuf_printf(o, "DATE '%s'", tmp);
  case OPD_BOOL: return tbuf_printf(o, "%s", a->i ? "TRUE" : "FALSE");
  case OPD_DECIMAL: {
    char num[PS_DECIMAL_TEXT_SIZE];
    if (ps_decimal_format(&a->dec, num, sizeof num) != PS_OK) return -1;
    /* "5." stays a decimal when printed back ("5.0"), not an integer. */
    return tbuf_printf(o, "%s%s", num, strchr(num, '.') ? "" : ".0");
  }
  case OPD_TIMESTAMP:
  case OPD_TIME: {
    char ts[48];
    if (a->kind == OPD_TIME)
      format_time(a->i, 0, ts);
    else
      format_timestamp(a->i, 0, ts);
    if (a->digits == 0) return tbuf_printf(o, "%s '%s'", a->kind == OPD_TIME ? "TIME" : "TIMESTAMP", ts);
    return tbuf_printf(o, "%s '%s.%0*lld'", a->kind == OPD_TIME ? "TIME" : "TIMESTAMP", ts, a->digits,
                       (long long)(a->ns / (int64_t)pow10_u64(9 - a->digits)));
  }
  }
  return -1;
}

static const char *cmp_text(ps_cmp op) {
  static const char *t[] = {"=", "!=", "<", "<=", ">", ">="};
  return (unsigned)op < 6 ? t[op] : "?";
}

int expr_to_string(const ast_node *n, tbuf *o) {
  int r = 0;
  switch (n->kind) {
  case AST_AND:
  case AST_OR:
    r |= tbuf_putc(o, '(');
    r |= expr_to_string(n->left, o);
    r |= tbuf_printf(o, n->kind == AST_AND ? " AND " : " OR ");
    r |= expr_to_string(n->right, o);
    r |= tbuf_putc(o, ')');
    break;
  case AST_NOT:
    r |= tbuf_printf(o, "(NOT ");
    r |= expr_to_string(n->left, o);
    r |= tbuf_putc(o, ')');
    break;
  case AST_CMP:
    r |= put_operand(o, &n->a);
    r |= tbuf_printf(o, " %s ", cmp_text(n->op));
    r |= put_operand(o, &n->b);
    break;
  case AST_BETWEEN:
    r |= put_operand(o, &n->a);
    r |= tbuf_printf(o, n->negate ? " NOT BETWEEN " : " BETWEEN ");
    r |= put_operand(o, &n->b);
    r |= tbuf_printf(o, " AND ");
    r |= put_operand(o, &n->c);
    break;
  case AST_IN:
    r |= put_operand(o, &n->a);
    r |= tbuf_printf(o, n->negate ? " NOT IN (" : " IN (");
    for (size_t i = 0; i < n->nlist; i++) {
      if (i) r |= tbuf_printf(o, ", ");
      r |= put_operand(o, &n->list[i]);
    }
    r |= tbuf_putc(o, ')');
    break;
  case AST_LIKE:
    r |= put_operand(o, &n->a);
    r |= tbuf_printf(o, n->negate ? " NOT LIKE " : " LIKE ");
    r |= put_operand(o, &n->b);
    if (n->escape >= 0) {
      char e = (char)n->escape;
      r |= tbuf_printf(o, " ESCAPE ");
      r |= put_quoted(o, &e, 1, '\'');
    }
    break;
  case AST_ISNULL:
    r |= put_operand(o, &n->a);
    r |= tbuf_printf(o, n->negate ? " IS NOT NULL" : " IS NULL");
    break;
  }
  return r ? -1 : 0;
}

void expr_print_error(FILE *f, const char *src, size_t len, const expr_error *e) {
  /* The column counts characters (UTF-8 lead bytes), so the caret lines up. */
  size_t col = 1;
  for (size_t i = 0; i < e->pos && i < len; i++)
    if (((unsigned char)src[i] & 0xC0) != 0x80) col++;
  fprintf(f, "error at column %zu: %s\n  ", col, e->msg);
  for (size_t i = 0; i < len; i++) {
    unsigned char c = (unsigned char)src[i];
    fputc(c < 32 || c == 127 ? ' ' : c, f);
  }
  fprintf(f, "\n  %*s^\n", (int)(col - 1), "");
}

void *expr_arena_alloc(expr_arena *a, size_t size) { return arena_alloc(a, size); }
