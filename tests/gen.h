/*
 * Random literals, leaves and predicate trees over a trun's columns, for the
 * random sweeps (filter_random, chunking).
 */
#ifndef PS_TEST_GEN_H
#define PS_TEST_GEN_H

#include "runner.h"

/* A numeric literal for a FOR column: a value of some row, its neighbours,
 * values between rows, below the minimum, above the maximum, type extremes,
 * NaN; as int64, uint64 or float64 literal. */
ps_literal gen_num_literal(th_rng *r, tcol *c);
/* A string literal for a dictionary column (points into buf, which must hold
 * 64 bytes): dictionary entries, neighbours, prefixes, "", high bytes. */
ps_literal gen_str_literal(th_rng *r, tcol *c, char *buf);
/* A LIKE pattern (into buf, 128 bytes) and escape for a dictionary column. */
size_t gen_like_pattern(th_rng *r, tcol *c, char *buf, int *escape);

/* A random leaf on column col; partner >= 0 is a compatible column for
 * column-vs-column comparisons. */
onode *gen_leaf(th_rng *r, trun *tr, int col, int partner);
/* A random tree of the given height (>= 1) over the columns in cols: AND, OR,
 * NOT and leaves, at most max_nodes nodes. */
onode *gen_tree(th_rng *r, trun *tr, const int *cols, size_t ncols, int height, size_t max_nodes);

#endif /* PS_TEST_GEN_H */
