/* Core-internal structures of queries (value expressions, prepared queries,
 * results): core/value.c builds values, core/query.c validates, lowers and
 * runs queries and finalizes their results. */
#ifndef PS_QUERY_H
#define PS_QUERY_H

#include "internal.h"
#include "ps_query_program.h"

/* 10^38 - 1: the largest magnitude of a value (38 digits). */
#define PS_I128_MAX38 ((ps_i128)(((ps_u128)0x4B3B4CA85A86C47Aull << 64) | 0x098A223FFFFFFFFFull))

typedef enum ps_value_kind {
  PS_VALUE_COLUMN = 1,
  PS_VALUE_CONST,
  PS_VALUE_NULL,
  PS_VALUE_ARITH,
  PS_VALUE_CASE
} ps_value_kind;

struct ps_value {
  ps_context *ctx;
  ps_value_kind kind;
  uint32_t scale;
  uint64_t rows;     /* rows of the columns read; 0 when it reads none (and has_rows is false) */
  bool has_rows;
  ps_column *col;    /* COLUMN */
  ps_i128 constant;  /* CONST */
  ps_arith op;       /* ARITH */
  ps_expr *when;     /* CASE */
  ps_value *a, *b;   /* ARITH operands; CASE then (a) and else (b, NULL = NULL) */
};

/* |v| <= 10^38 - 1. */
bool ps_i128_fits38(ps_i128 v);

/* A prepared query (query.c) and a result (query_result.c). */
struct ps_query {
  ps_context *ctx;
  ps_vprog prog;
  uint64_t where_and_right, where_or_right; /* ps_query_args */
  ps_column *cols[PS_MAX_COLS];
  uint64_t rows;
  const ps_expr *where;
  const ps_expr *preds[PS_QMAX_PREDS];
  const ps_column *keys[PS_QMAX_KEYS];
  ps_agg_kind kinds[PS_QMAX_AGGS];
  uint32_t scales[PS_QMAX_AGGS]; /* the aggregate's value's scale */
};

struct ps_query_result {
  ps_context *ctx;
  uint64_t n_groups;
  uint32_t n_keys, n_aggs;
  ps_datum *keys;   /* n_groups * n_keys */
  ps_datum *values; /* n_groups * n_aggs */
};

/* "SUM", "COUNT(*)"... for messages. */
const char *ps_agg_name(ps_agg_kind k);
/* Turns the accumulators of a run (n_groups * n_accs, as read back) into
 * res's groups, keys and values. PS_ERR_OVERFLOW for a sum or an average that
 * does not fit 38 digits. */
ps_status ps_query_finalize(ps_context *ctx, const ps_query *q, const ps_qacc *acc, ps_query_result *res);

#endif /* PS_QUERY_H */
