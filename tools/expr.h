/* WHERE-expressions: a recursive-descent parser from text to a syntax tree
 * (works over any byte buffer; of the library it calls only the pure ps_literal_parse), and a binder from the tree
 * to a library ps_expr over a table's columns.
 *
 *   expr      := or
 *   or        := and { OR and }
 *   and       := not { AND not }
 *   not       := NOT not | predicate
 *   predicate := '(' expr ')'
 *              | operand cmp operand                      cmp: = == != <> < <= > >=
 *              | operand [NOT] BETWEEN operand AND operand
 *              | operand [NOT] IN '(' literal { ',' literal } ')'
 *              | operand [NOT] LIKE string [ESCAPE string]
 *              | operand IS [NOT] NULL
 *   operand   := identifier | "quoted identifier" | literal
 *   literal   := [+|-] number | 'string' | DATE 'yyyy-mm-dd'   (123.45: an exact decimal; 1e5: a double)
 *              | TIMESTAMP 'yyyy-mm-dd hh:mm:ss[.fff]' | TIME 'hh:mm:ss[.fff]'
 *
 * Keywords are case-insensitive. Chains of AND / OR are built as balanced
 * trees, and nesting (parentheses, NOT) is limited to EXPR_MAX_DEPTH, so the
 * tree depth stays small whatever the input; so is the nesting of the
 * expression's canonical text (expr_to_string), which therefore parses back. */
#ifndef PSTOOL_EXPR_H
#define PSTOOL_EXPR_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "packscan.h"
#include "sql_lex.h"
#include "table.h"
#include "util.h"

#define EXPR_MAX_DEPTH 200

typedef enum opd_kind {
  OPD_COLUMN = 1,
  OPD_INT,
  OPD_UINT,
  OPD_FLOAT,
  OPD_STRING,
  OPD_DATE,
  OPD_TIMESTAMP, /* i: seconds since 1970-01-01, ns, digits */
  OPD_TIME,      /* i: seconds since midnight, ns, digits */
  OPD_BOOL,      /* i: 1 TRUE, 0 FALSE */
  OPD_DECIMAL    /* dec: a number written with a '.' (no exponent), exact as in SQL */
} opd_kind;

typedef struct ast_operand {
  opd_kind kind;
  size_t pos, end;  /* byte span in the source */
  const char *s;    /* column name or string contents (unescaped; may hold NUL) */
  size_t len;
  int quoted;       /* column written as "quoted identifier" */
  int64_t i;        /* OPD_INT, OPD_DATE (days since 1970-01-01) */
  uint64_t u;       /* OPD_UINT (above INT64_MAX) */
  double f;         /* OPD_FLOAT */
  int32_t ns;       /* OPD_TIMESTAMP, OPD_TIME: nanoseconds past i seconds */
  int digits;       /* OPD_TIMESTAMP, OPD_TIME: fraction digits written */
  ps_literal dec;   /* OPD_DECIMAL (ps_literal_parse: PS_LIT_DECIMAL) */
  int fn;           /* OPD_COLUMN: a date function of it (EXPR_FN_*), or 0 */
} ast_operand;

/* Date and time functions of a column, numbered as the library's ps_key_fn:
 * 1..EXPR_FN_TRUNC_LAST date_trunc to the second, minute, hour, day, week,
 * month, quarter, year; then the fields year, quarter, month, day, hour,
 * minute, second, dow, doy (extract, date_part, year(x)...). */
#define EXPR_FN_TRUNC_LAST 8
#define EXPR_FN_LAST 17
#define EXPR_FN_YEAR 9
/* The part or field a word names (case-insensitive; trunc: date_trunc's
 * parts, else extract's fields, dayofweek and dayofyear too), 0 if none. */
int expr_date_fn_of_word(const char *w, size_t len, int trunc);
/* The canonical name of fn's part or field, in lower case. */
const char *expr_date_fn_name(int fn);
/* Whether w names a date function that takes '(' (date_trunc, date_part,
 * extract, year, month...). */
int expr_date_fn_call(const char *w, size_t len);

typedef enum ast_kind {
  AST_AND = 1,
  AST_OR,
  AST_NOT,
  AST_CMP,     /* a op b */
  AST_BETWEEN, /* a [NOT] BETWEEN b AND c */
  AST_IN,      /* a [NOT] IN (list) */
  AST_LIKE,    /* a [NOT] LIKE b [ESCAPE escape] */
  AST_ISNULL   /* a IS [NOT] NULL */
} ast_kind;

typedef struct ast_node {
  ast_kind kind;
  size_t pos;
  int negate;
  ps_cmp op;
  struct ast_node *left, *right; /* AND, OR; NOT uses left */
  ast_operand a, b, c;
  ast_operand *list;
  size_t nlist;
  int escape; /* LIKE: escape byte or -1 */
} ast_node;

typedef sql_error expr_error; /* pos: a byte offset in the source */

typedef struct expr_arena {
  struct arena_block *head;
} expr_arena;

void expr_arena_free(expr_arena *a);
/* size bytes, zeroed and 16-byte aligned, freed with the arena; NULL when out of memory. */
void *expr_arena_alloc(expr_arena *a, size_t size);

/* Parses src[0..len). 0 ok (*out allocated in arena), -1 with err set. */
int expr_parse(const char *src, size_t len, expr_arena *arena, ast_node **out, expr_error *err);

/* Canonical text of a tree: every AND/OR/NOT fully parenthesized, literals
 * normalized, a literal-on-the-left comparison shown flipped. */
int expr_to_string(const ast_node *n, tbuf *out);

/* Prints "error at column N: msg", the expression and a caret under the position. */
void expr_print_error(FILE *f, const char *src, size_t len, const expr_error *e);

/* ---- binding to the library ---- */


typedef struct bind_env {
  ps_context *ctx;
  const tbl_table *tbl;
  ps_column **cols; /* tbl->ncols entries, created on first use, owned by the caller */
  /* Optional (may be NULL): tbl->ncols entries for decimal columns seen as the
   * library's PS_TYPE_DECIMAL (the same packed data), so that literals compare
   * with them exactly in code space; created on first use, owned by the caller.
   * Without it decimal columns compare with literals as doubles. */
  ps_column **dec_cols;
} bind_env;

/* Builds the ps_expr for a tree. Unknown columns, type mismatches and library
 * errors are reported with the position of the offending part. */
int expr_bind(bind_env *env, const ast_node *n, ps_expr **out, expr_error *err);
/* Resolves a column name as a query would (quoted: exact; else case-insensitive). */
int expr_find_column(const tbl_table *t, const char *name, size_t len, int quoted, expr_error *err,
                     size_t pos);

#endif
