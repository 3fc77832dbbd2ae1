/*
 * The query oracle of test_query and test_query_groups: value trees and
 * queries in the test's own structs, built and run through the public API,
 * and evaluated row by row on decoded values (oracle.c) with 128-bit
 * integers; groups found by sorting the rows' decoded keys. Shares no code
 * with the library's lowering or kernels.
 */
#ifndef PS_TEST_QORACLE_H
#define PS_TEST_QORACLE_H

#include "oracle.h"

typedef enum qkind { QN_COL = 1, QN_CONST, QN_NULL, QN_ARITH, QN_CASE } qkind;

typedef struct qnode {
  qkind kind;
  int col;
  ti128 c;
  uint32_t scale; /* CONST */
  ps_arith op;
  onode *when;
  struct qnode *a, *b;
} qnode;

typedef struct oval {
  int null, ovf;
  ti128 v;
} oval;

typedef struct oquery {
  onode *where;
  int n_keys, keys[2];
  int n_aggs;
  ps_agg_kind kinds[PS_QUERY_MAX_AGGS];
  qnode *vals[PS_QUERY_MAX_AGGS];
} oquery;

typedef struct oresult {
  ps_status status;
  uint64_t groups;
  ps_datum *keys, *values; /* as the library's, str pointing into the test's columns */
} oresult;

qnode *qn_new(qkind k);
void qn_free(qnode *q);
qnode *col_node(int c);
qnode *const_node(ti128 v, uint32_t scale);
qnode *arith_node(ps_arith op, qnode *a, qnode *b);
ti128 pow10i(uint32_t k);
/* 10^38 - 1 */
ti128 max38(void);
/* The value's decimal scale, as the library types it. */
uint32_t qn_scale(tcol *const *cols, const qnode *q);
/* The value of row `row` (null, overflow, unscaled value). */
oval qn_eval(tcol *const *cols, const qnode *q, uint64_t row);
/* Builds the tree through the public API (h: the library's columns). */
ps_status qn_build(ps_context *ctx, const qnode *q, ps_column *const *h, ps_value **out);
void qn_print(FILE *f, const qnode *q, tcol *const *cols);

void oq_free(oquery *q);
ps_datum odatum(ti128 v, uint32_t scale);
ps_datum onull(void);
/* The expected result of q over n rows: status, groups in key order, their
 * keys (2 per group) and values (PS_QUERY_MAX_AGGS per group), malloc'd. */
void oracle_query(tcol *const *cols, uint64_t n, const oquery *q, oresult *res);
void oresult_free(oresult *res);

/* Runs q through the public API in ctx (the library's columns h, n rows): the
 * result in *res, or the status. With again, the prepared query runs a second
 * time and must give as many groups (checked). */
ps_status oq_run(ps_context *ctx, ps_column *const *h, uint64_t n, const oquery *q, int again, ps_query_result **res);
/* Whether x and y are one datum: both NULL, equal strings (dictionary keys:
 * whichever index holds them), or the same unscaled value at the same scale;
 * with doubles, also the same double rendering, bit for bit. */
int oq_datum_eq(const ps_datum *x, const ps_datum *y, int doubles);
/* The decimal digits of the nonnegative integer in limbs 32-bit words n
 * (least significant first; n is consumed) into digits, least significant
 * first, in rounds of 9 (so with leading zeros); returns how many. The exact
 * oracles of the float sums use it (test_float_sum, test_query_datum). */
int oq_limbs_digits(uint32_t *n, int limbs, char *digits);
/* "    what: text (scale s, double d)" on stderr. */
void oq_print_datum(const char *what, const ps_datum *d);

#endif /* PS_TEST_QORACLE_H */
