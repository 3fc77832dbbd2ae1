/* The one lexer of the command's two SQL parsers: WHERE-expressions
 * (expr_parse.c) and SELECT statements (select_parse.c). Tokens are spans of
 * the source; no allocation, no library calls. */
#ifndef PSTOOL_SQL_LEX_H
#define PSTOOL_SQL_LEX_H

#include <stddef.h>

#include "packscan.h"
#include "util.h"

typedef enum sql_tok_kind {
  TK_EOF,
  TK_IDENT,
  TK_QIDENT, /* "quoted identifier" */
  TK_NUMBER,
  TK_STRING, /* 'string' */
  TK_LPAREN,
  TK_RPAREN,
  TK_COMMA,
  TK_PLUS,
  TK_MINUS,
  TK_STAR,  /* SQL_LEX_STATEMENT only */
  TK_SLASH, /* SQL_LEX_STATEMENT only */
  TK_SEMI,  /* SQL_LEX_STATEMENT only */
  TK_CMP,   /* SQL_LEX_EXPR only: = == != <> < <= > >=, with op */
  TK_OTHER  /* SQL_LEX_STATEMENT only: any other character */
} sql_tok_kind;

/* SQL_LEX_EXPR reads a WHERE-expression: comparison operators are TK_CMP and
 * any other punctuation is an error. SQL_LEX_STATEMENT reads a SELECT
 * statement, which cuts its WHERE and WHEN conditions out as text for
 * expr_parse: there an operator or an unknown character is a TK_OTHER token
 * (with the '=' and '>' that follow it) and its errors are expr_parse's, and a
 * number with a second '.' is malformed. */
typedef enum sql_lex_mode { SQL_LEX_EXPR, SQL_LEX_STATEMENT } sql_lex_mode;

typedef struct sql_token {
  sql_tok_kind kind;
  size_t pos, len; /* source span */
  ps_cmp op;       /* TK_CMP */
} sql_token;

/* Where a text went wrong (a byte offset in it) and what: the lexer's errors
 * and both parsers' (expr_error of expr.h is this type). */
typedef struct sql_error {
  size_t pos;
  char msg[512];
} sql_error;

/* Records an error of a parse in *err (pos, the printf-style message) and
 * returns -1. With `failed`, only the parse's first error is kept: nothing is
 * written once *failed is set, and *failed is set. */
int sql_fail(sql_error *err, int *failed, size_t pos, const char *fmt, ...) TOOL_PRINTF(4, 5);

/* Reads the token that starts at or after *pos (white space skipped) into
 * *tok and moves *pos past it; at the end, a TK_EOF token at len. Returns 0,
 * or -1 with *err set (the token's position and what is wrong) and *pos left
 * at that position. */
int sql_lex(const char *src, size_t len, size_t *pos, sql_token *tok, sql_lex_mode mode, sql_error *err);

/* Whether src[0..len) is the upper-case word kw in any case. */
int sql_word_eq(const char *src, size_t len, const char *kw);

/* Whether tok is the identifier kw in any case. */
int sql_tok_is_kw(const char *src, const sql_token *tok, const char *kw);

/* The token for messages: "end of input", else its text in quotes, at most 40
 * bytes then "...", control bytes as '?'. */
void sql_describe(const char *src, const sql_token *tok, char *out, size_t n);

/* A TK_STRING or TK_QIDENT token's text with its doubled quotes undone
 * ('it''s' -> it's) into out, which holds tok->len + 1 bytes; returns its
 * length (a terminating 0 follows). */
size_t sql_unquote(const char *src, const sql_token *tok, char *out);

/* Character classes: white space, an identifier's first and later bytes
 * (every byte >= 0x80 is a letter, so UTF-8 names need no quotes). */
int sql_is_space(unsigned char c);
int sql_is_ident_start(unsigned char c);
int sql_is_ident_char(unsigned char c);

#endif
