/*
 * The test oracle: a predicate tree in the test's own small struct, built
 * into a ps_expr through the public API, and evaluated here row by row on
 * DECODED values (the FOR decode of design.md done from the packed bits,
 * strings by memcmp order, an independent LIKE matcher, Kleene logic).
 * Deliberately shares no code with the library's lowering.
 */
#ifndef PS_TEST_ORACLE_H
#define PS_TEST_ORACLE_H

#include <stdio.h>

#include "tcol.h"

typedef enum onode_kind {
  ON_CMP = 1, /* col <cmp> literal */
  ON_CMPCOL,  /* col <cmp> col_b */
  ON_BETWEEN, /* lit <= col AND col <= lit2 */
  ON_IN,      /* col IN (list) */
  ON_LIKE,    /* col [NOT] LIKE pattern [ESCAPE escape] */
  ON_ISNULL,  /* col IS [NOT] NULL */
  ON_AND,
  ON_OR,
  ON_NOT
} onode_kind;

typedef struct onode {
  onode_kind kind;
  int col, col_b; /* indexes into the caller's column table */
  ps_cmp cmp;
  ps_literal lit, lit2; /* string literals own a malloc'd copy */
  ps_literal *list;
  size_t count;
  char *pattern;
  size_t plen;
  int escape;
  int negate;
  struct onode *a, *b;
} onode;

onode *on_cmp(int col, ps_cmp op, ps_literal lit);
onode *on_cmpcol(int col, ps_cmp op, int col_b);
onode *on_between(int col, ps_literal lo, ps_literal hi);
onode *on_in(int col, const ps_literal *list, size_t count);
onode *on_like(int col, const char *pattern, size_t len, int escape, int negate);
onode *on_isnull(int col, int negate);
onode *on_and(onode *a, onode *b);
onode *on_or(onode *a, onode *b);
onode *on_not(onode *a);
void on_free(onode *t);
/* Nodes in the tree, and its height (a leaf is 1). */
size_t on_size(const onode *t);
size_t on_height(const onode *t);
/* The first column a tree reads (for its row count). */
int on_first_col(const onode *t);

/* Builds the tree through the public API; handles[i] is the library column of
 * table entry i. On failure nothing is leaked and the status is returned. */
ps_status on_build(ps_context *ctx, const onode *t, ps_column *const *handles, ps_expr **out);

/* Prints the tree as text, e.g. AND(c0 < int(5), NOT(c1 LIKE 'a%')). */
void on_print(FILE *f, const onode *t, tcol *const *cols);

/* ---- evaluation ------------------------------------------------------------ */

typedef enum kleene { K_FALSE = 0, K_TRUE = 1, K_UNKNOWN = 2 } kleene;

/* A decoded numeric value: exact integer, or an IEEE double; a decimal
 * column's value is exactly i / 10^scale (dec = 1). */
typedef struct onum {
  int isf;
  ti128 i;
  double d;
  int dec;
  unsigned scale;
} onum;

/* The oracle's own decode of a column's packed codes (cached in c->ocodes). */
const uint64_t *oracle_codes(tcol *c);
int oracle_valid(const tcol *c, uint64_t row);
/* M + code, exact (for floats: the scaled integer). */
ti128 oracle_raw(tcol *c, uint64_t row);
/* Decoded numeric value of a (non-null) row of a FOR column. */
onum oracle_num(tcol *c, uint64_t row);
/* Dictionary string of a (non-null) row; 0 if its index is past the dictionary. */
int oracle_str(tcol *c, uint64_t row, const uint8_t **s, size_t *len);
/* Whether the row's code is corrupt (valid row whose value is outside the
 * type / whose index is past the dictionary). */
int oracle_corrupt(tcol *c, uint64_t row);

/* LIKE per design.md: 1 match, 0 no match, -1 invalid pattern (unfinished
 * escape). '_' is one UTF-8 character, or one byte where not valid UTF-8. */
int oracle_like(const uint8_t *s, size_t slen, const char *p, size_t plen, int escape);

/* A decimal literal's unscaled value, and its nearest double (the test's
 * own conversion, through text with a decimal point). */
ti128 oracle_decimal_unscaled(ps_literal l);
double oracle_decimal_double(ps_literal l);

kleene oracle_row(tcol *const *cols, const onode *t, uint64_t row);
/* Evaluates every row into an Arrow bitmap (ceil(n/8) bytes, zero padding);
 * returns the number of selected rows. */
uint64_t oracle_filter(tcol *const *cols, const onode *t, uint64_t n, uint8_t *bitmap);

/* Prints the values of every column the tree reads at row. */
void oracle_print_row(FILE *f, tcol *const *cols, const onode *t, uint64_t row);

#endif /* PS_TEST_ORACLE_H */
