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

#endif /* PS_QUERY_H */
