/* HAVING, ORDER BY, LIMIT and OFFSET of a SELECT (select.h's grammar), over
 * the statement parser's tokens and values (select_parser.h). */
#include <string.h>

#include "select_parser.h"

static hv_node *new_hv(sparser *p, hv_kind k, size_t pos) {
  if (++p->nodes > SELECT_MAX_NODES) {
    sql_fail(p->err, &p->failed, p->tok.pos, "the statement's expressions have more than %d parts", SELECT_MAX_NODES);
    return NULL;
  }
  hv_node *h = sel_alloc(p, sizeof *h);
  if (h) {
    h->kind = k;
    h->pos = pos;
  }
  return h;
}

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
               (tok_cmp(&q) >= 0 || sel_is_kw(&q, "AND") || sel_is_kw(&q, "OR") || sel_is_kw(&q, "NOT") ||
                sel_is_kw(&q, "IS") || sel_is_kw(&q, "BETWEEN") || sel_is_kw(&q, "IN"))) {
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
    if (sel_enter(p, pos) || sel_lex(p)) return NULL;
    hv_node *h = sel_parse_having(p);
    if (!h) return NULL;
    if (p->tok.kind != TK_RPAREN) {
      sel_describe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected ')' to close the '(' at column %zu, found %s", pos + 1, d);
      return NULL;
    }
    p->depth--;
    return sel_lex(p) ? NULL : h;
  }
  if (sel_is_kw(p, "NOT")) {
    if (sel_enter(p, pos) || sel_lex(p)) return NULL;
    hv_node *h = new_hv(p, HV_NOT, pos);
    if (!h || !(h->left = parse_predicate(p))) return NULL;
    h->end = h->left->end;
    p->depth--;
    return h;
  }
  vx_node *a = sel_parse_value(p);
  if (!a) return NULL;
  int op = tok_cmp(p);
  if (op >= 0) {
    hv_node *h = new_hv(p, HV_CMP, pos);
    if (!h || sel_lex(p)) return NULL;
    h->op = op;
    h->a = a;
    if (!(h->b = sel_parse_value(p))) return NULL;
    h->end = h->b->end;
    return h;
  }
  if (sel_is_kw(p, "IS")) {
    hv_node *h = new_hv(p, HV_IS_NULL, pos);
    if (!h || sel_lex(p)) return NULL;
    h->a = a;
    if (sel_is_kw(p, "NOT")) {
      h->negated = 1;
      if (sel_lex(p)) return NULL;
    }
    if (!sel_is_kw(p, "NULL")) {
      sel_describe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected NULL after IS%s, found %s", h->negated ? " NOT" : "", d);
      return NULL;
    }
    h->end = p->tok.pos + p->tok.len;
    return sel_lex(p) ? NULL : h;
  }
  int negated = 0;
  if (sel_is_kw(p, "NOT")) {
    negated = 1;
    if (sel_lex(p)) return NULL;
    if (!sel_is_kw(p, "BETWEEN") && !sel_is_kw(p, "IN")) {
      sel_describe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected BETWEEN or IN after NOT, found %s", d);
      return NULL;
    }
  }
  if (sel_is_kw(p, "BETWEEN")) {
    hv_node *h = new_hv(p, HV_BETWEEN, pos);
    if (!h || sel_lex(p)) return NULL;
    h->a = a;
    h->negated = negated;
    if (!(h->b = sel_parse_value(p))) return NULL;
    if (!sel_is_kw(p, "AND")) {
      sel_describe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected AND in BETWEEN, found %s", d);
      return NULL;
    }
    if (sel_lex(p) || !(h->c = sel_parse_value(p))) return NULL;
    h->end = h->c->end;
    return h;
  }
  if (sel_is_kw(p, "IN")) {
    hv_node *h = new_hv(p, HV_IN, pos);
    if (!h || sel_lex(p)) return NULL;
    h->a = a;
    h->negated = negated;
    if (p->tok.kind != TK_LPAREN) {
      sel_describe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected '(' after IN, found %s", d);
      return NULL;
    }
    size_t open = p->tok.pos;
    tbuf items = {0};
    if (sel_lex(p)) return NULL;
    for (;;) {
      vx_node *v = sel_parse_value(p);
      if (!v || tbuf_append(&items, &v, sizeof v)) {
        if (v) sql_fail(p->err, &p->failed, pos, "out of memory");
        tbuf_free(&items);
        return NULL;
      }
      if (p->tok.kind != TK_COMMA) break;
      if (sel_lex(p)) {
        tbuf_free(&items);
        return NULL;
      }
    }
    h->nlist = items.len / sizeof(vx_node *);
    h->list = sel_alloc(p, items.len);
    if (h->list) memcpy(h->list, items.p, items.len);
    tbuf_free(&items);
    if (!h->list) return NULL;
    if (p->tok.kind != TK_RPAREN) {
      sel_describe(p, &p->tok, d, sizeof d);
      sql_fail(p->err, &p->failed, p->tok.pos, "expected ',' or ')' to close the '(' at column %zu, found %s", open + 1,
               d);
      return NULL;
    }
    h->end = p->tok.pos + p->tok.len;
    return sel_lex(p) ? NULL : h;
  }
  if (p->tok.kind == TK_EOF || p->tok.kind == TK_SEMI || p->tok.kind == TK_RPAREN || sel_is_kw(p, "AND") ||
      sel_is_kw(p, "OR") || sel_is_kw(p, "ORDER") || sel_is_kw(p, "LIMIT") || sel_is_kw(p, "OFFSET")) {
    /* a boolean value alone (HAVING ok, NOT ok) is value = TRUE; the binder says where it is not a boolean */
    hv_node *h = new_hv(p, HV_CMP, pos);
    vx_node *t = sel_alloc(p, sizeof *t);
    if (!h || !t) return NULL;
    memset(t, 0, sizeof *t);
    t->kind = VX_NUMBER;
    t->lit = 'B';
    t->mantissa = 1;
    t->pos = t->end = a->end;
    h->op = PS_EQ;
    h->a = a;
    h->b = t;
    h->end = a->end;
    return h;
  }
  if (sel_is_kw(p, "LIKE"))
    sql_fail(p->err, &p->failed, p->tok.pos, "LIKE is not supported in HAVING (filter strings in WHERE)");
  else {
    sel_describe(p, &p->tok, d, sizeof d);
    sql_fail(p->err, &p->failed, p->tok.pos,
             "expected a comparison (= <> < <= > >=), BETWEEN, IN or IS NULL in HAVING, found %s%s",
             sel_tok_reserved(p) ? "keyword " : "", d);
  }
  return NULL;
}

/* NOT > AND > OR; chains are left-deep and counted in SELECT_MAX_NODES.
 * One chain of operands of `sub` joined by keyword kw into nodes of kind. */
static hv_node *parse_having_chain(sparser *p, const char *kw, hv_kind kind, hv_node *(*sub)(sparser *)) {
  hv_node *l = sub(p);
  while (l && sel_is_kw(p, kw)) {
    if (sel_lex(p)) return NULL;
    hv_node *r = sub(p), *n = r ? new_hv(p, kind, l->pos) : NULL;
    if (!n) return NULL;
    n->left = l;
    n->right = r;
    n->end = r->end;
    l = n;
  }
  return l;
}

static hv_node *parse_having_and(sparser *p) { return parse_having_chain(p, "AND", HV_AND, parse_predicate); }

hv_node *sel_parse_having(sparser *p) { return parse_having_chain(p, "OR", HV_OR, parse_having_and); }

/* ---- ORDER BY, LIMIT, OFFSET ---- */

int sel_parse_order(sparser *p, select_stmt *out) {
  char d[64];
  for (;;) {
    if (out->norder == SELECT_MAX_ORDER)
      return sql_fail(p->err, &p->failed, p->tok.pos, "ORDER BY takes at most %d terms", SELECT_MAX_ORDER);
    sel_order *o = &out->order[out->norder];
    o->pos = p->tok.pos;
    o->nulls_first = -1;
    if (!(o->expr = sel_parse_value(p))) return -1;
    o->end = p->prev_end;
    if (sel_is_kw(p, "ASC") || sel_is_kw(p, "DESC")) {
      o->desc = sel_is_kw(p, "DESC");
      if (sel_lex(p)) return -1;
    }
    if (sel_is_kw(p, "NULLS")) {
      if (sel_lex(p)) return -1;
      if (!sel_is_kw(p, "FIRST") && !sel_is_kw(p, "LAST")) {
        sel_describe(p, &p->tok, d, sizeof d);
        return sql_fail(p->err, &p->failed, p->tok.pos, "expected FIRST or LAST after NULLS, found %s", d);
      }
      o->nulls_first = sel_is_kw(p, "FIRST");
      if (sel_lex(p)) return -1;
    }
    out->norder++;
    if (p->tok.kind != TK_COMMA) return 0;
    if (sel_lex(p)) return -1;
  }
}

/* LIMIT's or OFFSET's count: digits. */
int sel_parse_count(sparser *p, const char *what, uint64_t *out) {
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
    sel_describe(p, &p->tok, d, sizeof d);
    return sql_fail(p->err, &p->failed, p->tok.pos, "expected a row count (digits) after %s, found %s", what, d);
  }
  *out = v;
  return sel_lex(p);
}
