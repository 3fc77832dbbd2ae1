/* SELECT statements of `packscan query`: aggregates of value expressions over
 * the rows where a WHERE-expression is TRUE, optionally grouped by one or two
 * columns, then filtered (HAVING), ordered and cut (LIMIT). The parser works
 * over any byte buffer and makes no library calls; WHERE clauses and CASE
 * conditions are parsed by expr_parse (expr.h), so they take exactly the
 * language of a plain WHERE-expression.
 *
 *   statement := SELECT item { ',' item } [FROM name] [WHERE expr]
 *                [GROUP BY key [',' key]] [HAVING having]
 *   key       := column | datefn
 *                [ORDER BY order { ',' order }] [LIMIT digits] [OFFSET digits] [';']
 *   item      := result [[AS] alias]
 *   order     := result [ASC | DESC] [NULLS (FIRST | LAST)]   (also an alias or a position)
 *   result    := rterm { ('+' | '-') rterm }          (a value of the group: outside aggregates)
 *   rterm     := rfactor { ('*' | '/') rfactor }
 *   rfactor   := '-' rfactor | aggregate | column | number | '(' result ')'
 *              | ABS '(' result ')' | COALESCE '(' result { ',' result } ')' | datefn
 *              | CASE WHEN having THEN result { WHEN having THEN result } [ELSE result] END
 *              | string | DATE string | TIMESTAMP string | TIME string | TRUE | FALSE | NULL
 *   having    := hterm { OR hterm };  hterm := hfactor { AND hfactor }
 *   hfactor   := NOT hfactor | '(' having ')' | result cmp result
 *              | result [NOT] BETWEEN result AND result | result [NOT] IN '(' result { ',' result } ')'
 *              | result IS [NOT] NULL
 *   aggregate := COUNT '(' '*' ')' | COUNT '(' value ')' | COUNT '(' DISTINCT column ')'
 *              | SUM '(' value ')' | MIN '(' value ')' | MAX '(' value ')' | AVG '(' value ')'
 *   value     := term { ('+' | '-') term }             (a value of a row: inside aggregates)
 *   term      := factor { '*' factor }
 *   factor    := '-' factor | column | number | '(' value ')'
 *              | CASE WHEN expr THEN value { WHEN expr THEN value } [ELSE value] END
 *   number    := digits | digits '.' digits         (exact: integers and decimals)
 *   datefn    := DATE_TRUNC '(' string ',' column ')' | DATE_PART '(' string ',' column ')'
 *              | EXTRACT '(' field FROM column ')' | field '(' column ')'   (a GROUP BY key)
 *
 * A column outside an aggregate must be a GROUP BY key (checked when binding).
 *
 * Keywords are case-insensitive. FROM's name is accepted and ignored (the
 * table is the file named on the command line). SELECT, FROM, WHERE, GROUP,
 * BY, AS, CASE, WHEN, THEN, ELSE, END, ORDER, HAVING, LIMIT, OFFSET, ASC, DESC,
 * NULLS and DISTINCT are reserved
 * (quote a column of that name). Nesting of parentheses, unary minus and CASE
 * is limited to SELECT_MAX_DEPTH and a statement to SELECT_MAX_NODES value
 * nodes, so no input can exhaust the stack. */
#ifndef PSTOOL_SELECT_H
#define PSTOOL_SELECT_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "expr.h"

#define SELECT_MAX_DEPTH 64
#define SELECT_MAX_ITEMS 64
#define SELECT_MAX_KEYS 2
#define SELECT_MAX_NODES 4096 /* value-expression and HAVING nodes in one statement */
#define SELECT_MAX_ORDER 16

/* Date and time functions of a column (vx_node.fn of a VX_COLUMN, sel_key.fn),
 * numbered as the library's ps_key_fn: 1..SEL_FN_TRUNC_LAST date_trunc to
 * the second, minute, hour, day, week, month, quarter, year; then the fields
 * year, quarter, month, day, hour, minute, second, dow, doy (extract,
 * date_part and the shorthands year(x), month(x)...). 0: the column itself. */
#define SEL_FN_TRUNC_LAST EXPR_FN_TRUNC_LAST
#define SEL_FN_LAST EXPR_FN_LAST
/* The canonical text of fn: the part or field name in lower case. */
const char *select_fn_name(int fn);

typedef enum vx_kind {
  VX_COLUMN = 1,
  VX_NUMBER, /* mantissa / 10^scale, exact */
  VX_ADD,
  VX_SUB,
  VX_MUL,
  VX_NEG,
  VX_CASE,
  /* Outside aggregates only (values of a group): */
  VX_AGG,      /* agg of left (NULL: COUNT(*)) */
  VX_DIV,      /* left / right */
  VX_ABS,      /* abs(left) */
  VX_COALESCE, /* coalesce(left, right) (longer lists nest to the right) */
  VX_STRING,   /* a string literal (name, len: its text unquoted); lit: 'D' DATE, 'T' TIMESTAMP, 't' TIME, 0 */
  VX_NULL      /* the NULL literal */
} vx_kind;

/* One WHEN cond THEN value of a CASE. */
struct hv_node;
typedef struct vx_when {
  ast_node *cond;        /* inside aggregates; positions are offsets in the whole statement */
  struct hv_node *hcond; /* outside aggregates (a CASE over values of the group): a HAVING condition */
  struct vx_node *then;
} vx_when;

typedef struct vx_node {
  vx_kind kind;
  size_t pos, end;  /* byte span in the statement */
  const char *name; /* VX_COLUMN (unescaped if quoted) */
  size_t len;
  int quoted;
  int fn;                       /* VX_COLUMN outside aggregates: a date function of it (SEL_FN_*), or 0 */
  int64_t mantissa;             /* VX_NUMBER */
  int scale;                    /* VX_NUMBER: digits after the point, 0..18 */
  struct vx_node *left, *right; /* ADD SUB MUL; NEG: left; CASE: right = ELSE (NULL: ELSE NULL) */
  vx_when *whens;               /* VX_CASE */
  size_t nwhens;
  int agg;      /* VX_AGG: a sel_agg (SEL_COUNT_STAR .. SEL_AVG) */
  int distinct; /* VX_AGG: COUNT(DISTINCT column) */
  int lit; /* VX_STRING: the literal's type; VX_NUMBER: 'B' for TRUE (1) and FALSE (0) */
  /* Set when binding (select_post.c), outside aggregates: */
  int slot;                  /* VX_AGG: its aggregate; VX_COLUMN: its GROUP BY key */
  const struct vx_node *ref; /* VX_COLUMN naming a SELECT item by its alias: the item */
  int rtype, rscale;         /* the value's type (select_post.h) and decimal scale */
} vx_node;

typedef enum sel_agg {
  SEL_KEY = 0, /* a GROUP BY column */
  SEL_COUNT_STAR,
  SEL_COUNT,
  SEL_SUM,
  SEL_MIN,
  SEL_MAX,
  SEL_AVG,
  SEL_EXPR /* anything else: arithmetic, abs or coalesce of aggregates and keys (expr) */
} sel_agg;

/* HAVING conditions. */
typedef enum hv_kind { HV_AND = 1, HV_OR, HV_NOT, HV_CMP, HV_BETWEEN, HV_IN, HV_IS_NULL } hv_kind;

typedef struct hv_node {
  hv_kind kind;
  size_t pos, end;
  int op;                       /* HV_CMP: a ps_cmp */
  int negated;                  /* NOT BETWEEN, NOT IN, IS NOT NULL */
  struct hv_node *left, *right; /* AND, OR; NOT: left */
  vx_node *a, *b, *c;           /* CMP: a op b; BETWEEN: a, b and c; IN, IS NULL: a */
  vx_node **list;               /* IN */
  size_t nlist;
} hv_node;

typedef struct sel_order {
  vx_node *expr;
  int desc;
  int nulls_first; /* -1: the default (DuckDB's: NULLS LAST in both directions), 0 LAST, 1 FIRST */
  size_t pos, end;
} sel_order;

typedef struct sel_item {
  sel_agg agg;
  vx_node *arg;      /* SEL_KEY: the column (VX_COLUMN); COUNT(*), SEL_EXPR: NULL */
  vx_node *expr;     /* the whole item (SEL_KEY: arg; an aggregate: its VX_AGG) */
  size_t pos, end;   /* the item's text (without the alias) */
  const char *alias; /* NULL: none */
  size_t alias_len;
} sel_item;

typedef struct sel_key {
  const char *name;
  size_t len;
  int quoted;
  int fn; /* a date function of the column (SEL_FN_*), or 0 */
  size_t pos, end;
} sel_key;

typedef struct select_stmt {
  sel_item items[SELECT_MAX_ITEMS];
  size_t nitems;
  const char *from; /* NULL: no FROM */
  size_t from_len;
  ast_node *where; /* NULL: every row */
  size_t where_pos;
  sel_key keys[SELECT_MAX_KEYS];
  size_t nkeys;
  hv_node *having; /* NULL: every group */
  sel_order order[SELECT_MAX_ORDER];
  size_t norder;
  int has_limit, has_offset;
  uint64_t limit, offset;
} select_stmt;

/* Whether s[0..len) is a reserved word (it must be quoted as a name). */
int select_word_reserved(const char *s, size_t len);

/* Whether the text's first word is SELECT (so that `query` knows which
 * language it was given). */
int select_is_statement(const char *src, size_t len);

/* Whether a SELECT is one of aggregates (for the shell, whose own SELECT
 * lists rows): GROUP BY or HAVING, or an aggregate call in its list other
 * than a lone COUNT(*) (with arithmetic on it, an alias, ORDER BY, LIMIT or
 * OFFSET, COUNT(*) is one too). Looks at the tokens only, so a statement with errors in it still
 * goes to the parser whose messages fit it. */
int select_is_aggregate(const char *src, size_t len);

/* Parses src[0..len) into *out (nodes allocated in arena). 0 ok, -1 with err
 * set: the byte position of the offending token and a message. */
int select_parse(const char *src, size_t len, expr_arena *arena, select_stmt *out, expr_error *err);

/* Canonical text: keywords and aggregates upper case, value expressions with
 * the parentheses their tree needs (never nesting deeper than the input did),
 * WHERE and WHEN as expr_to_string writes them. It parses back to the same
 * text. */
int select_to_string(const select_stmt *s, tbuf *out);
int vx_to_string(const vx_node *v, tbuf *out);
int hv_to_string(const hv_node *h, tbuf *out);

#endif
