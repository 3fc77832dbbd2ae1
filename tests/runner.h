/*
 * Runs one predicate tree on the backend under test and on the reference
 * backend, and compares both with the oracle bit for bit: every byte of the
 * ceil(n/8)-byte bitmap (bits past n zero), bytes past it untouched, the count,
 * and ps_filter_count. On a mismatch it prints the seed, the backend, the first
 * differing row with its values, the tree and the columns.
 */
#ifndef PS_TEST_RUNNER_H
#define PS_TEST_RUNNER_H

#include "oracle.h"

#define TR_MAX_COLS 48

typedef struct trun {
  ps_context *ctx; /* backend under test */
  ps_context *ref; /* reference backend; NULL when ctx is the reference */
  tcol *cols[TR_MAX_COLS];
  ps_column *h[TR_MAX_COLS];  /* columns in ctx */
  ps_column *hr[TR_MAX_COLS]; /* columns in ref */
  size_t ncols;
  unsigned long filters; /* filter calls compared so far */
} trun;

void tr_init(trun *r, ps_context *ctx, ps_context *ref);
/* Takes ownership of c and creates it in both contexts. Returns its index,
 * or -1 (failure recorded) when the library refuses it. */
int tr_add(trun *r, tcol *c);
/* Destroys every column (in the library and on the test side). */
void tr_clear(trun *r);
/* Evaluates t (which must build without error) and compares; 1 when all
 * agreed. label names the case in messages. */
int tr_check(trun *r, const onode *t, const char *label);

/* Prints a tree and the columns it reads. */
void tr_print_case(trun *r, const onode *t);

#endif /* PS_TEST_RUNNER_H */
