/* The SELECT parser's internals, shared by select_parse.c (the statement,
 * its items and values) and select_clauses.c (HAVING, ORDER BY, LIMIT,
 * OFFSET). Not for other callers: select.h is the interface. */
#ifndef PSTOOL_SELECT_PARSER_H
#define PSTOOL_SELECT_PARSER_H

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

/* The current token for messages; the next token (0, or -1 with the error
 * recorded); whether the current token is keyword kw; whether it is a
 * reserved word. */
void sel_describe(const sparser *p, const stok *t, char *out, size_t n);
int sel_lex(sparser *p);
int sel_is_kw(const sparser *p, const char *kw);
int sel_tok_reserved(const sparser *p);
/* Arena memory (NULL with "out of memory" recorded). */
void *sel_alloc(sparser *p, size_t size);
/* One more level of nesting at pos: 0, or -1 past SELECT_MAX_DEPTH. */
int sel_enter(sparser *p, size_t pos);
/* A value: of a row inside an aggregate (p->in_agg), of a group outside. */
vx_node *sel_parse_value(sparser *p);

/* select_clauses.c: the clauses after GROUP BY. */
hv_node *sel_parse_having(sparser *p);
int sel_parse_order(sparser *p, select_stmt *out);
int sel_parse_count(sparser *p, const char *what, uint64_t *out);

#endif
