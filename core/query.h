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
  ps_value **shard;  /* a context over several devices: the value on each device (multi.c) */
};

/* Builds value v (checked, made on a context over several devices) on each
 * device (multi.c); on failure v has no parts and its operands keep theirs. */
ps_status ps_group_value_parts(ps_context *ctx, ps_value *v);
void ps_group_value_free(ps_value *v);
ps_status ps_group_query_create(ps_context *ctx, const ps_query_desc *desc, ps_query *q);
void ps_group_query_free(ps_query *q);
ps_status ps_group_query_run(ps_context *ctx, ps_query *q, bool partial, ps_query_result **out);

/* |v| <= 10^38 - 1. */
bool ps_i128_fits38(ps_i128 v);

/* A prepared query (query.c) and a result (query_result.c). */
#define PS_QUERY_KEEP_ACC_BYTES ((uint64_t)1 << 20)

struct ps_query {
  ps_context *ctx;
  ps_vprog prog;
  uint64_t where_and_right, where_or_right; /* ps_query_args */
  ps_column *cols[PS_MAX_COLS];
  uint64_t rows;
  const ps_expr *where;
  const ps_expr *preds[PS_QMAX_PREDS];
  const ps_column *keys[PS_QMAX_KEYS];
  uint32_t key_fns[PS_QMAX_KEYS]; /* ps_key_fn of each key */
  ps_agg_kind kinds[PS_QMAX_AGGS];
  uint32_t scales[PS_QMAX_AGGS]; /* the aggregate's value's scale */
  const ps_column *agg_fcol[PS_QMAX_AGGS]; /* as ps_query_result's */
  /* SUM and AVG of lossless float columns (PS_VOP_FCOL): the column, the
   * unit 2^fsum_unit of its exact sum and the largest magnitude the window
   * was chosen for (ps_fmap_sum_unit); agg_fsum NULL elsewhere. */
  const ps_column *agg_fsum[PS_QMAX_AGGS];
  int32_t fsum_unit[PS_QMAX_AGGS];
  double fsum_largest[PS_QMAX_AGGS];
  /* Arithmetic on lossless float columns, evaluated in doubles (PS_VOP_DCOL
   * and friends): a lossless column the value reads (for messages), NULL
   * elsewhere. SUM and AVG sum in units of 2^fsum_unit (fsum_largest the
   * bound of the value the window was chosen for), MIN and MAX hold the
   * doubles' ordered bits. */
  const ps_column *agg_fexpr[PS_QMAX_AGGS];
  /* The value aux words (PS_VAUX_HEAD: the ALP exception tables the FCOLs
   * read), on the host and on the device; NULL where none. */
  uint64_t *value_aux;
  uint64_t value_aux_words;
  ps_buffer *value_aux_dev;
  /* ps_aggregate's sums of lossless float columns (ps_query_float_sum):
   * a selection bitmap outside which every aggregate's value is NULL (a
   * CASE on the predicate slot whose q->preds entry is NULL), the unit its
   * sums take (that of the whole column where a context over several
   * devices runs each device's part), and runs that stop at the exact
   * states (no values rendered: a sum past 38 digits still has its double). */
  const ps_buffer *selection;
  uint64_t selection_offset;
  bool unit_forced;
  int32_t forced_unit;
  bool state_only;
  struct ps_query **shard; /* a context over several devices: the query on each device (multi.c) */
  /* The device accumulators of the last run, kept for the next when they
   * take at most PS_QUERY_KEEP_ACC_BYTES: a device allocation and its free
   * per run cost more than a small query's kernels, while a GROUP BY of
   * many groups should not hold its memory between runs. */
  ps_buffer *acc_dev;
};

/* The exact state of one aggregate of one group, from which its value is
 * computed (and which a partial result exports): the row or non-null count,
 * the sum in 256 bits (a run's 192-bit accumulators sign-extended; merging
 * partials adds them), and min and max, meaningful when count > 0. */
typedef struct ps_qstate {
  uint64_t count;
  uint64_t sum[4]; /* two's complement, sum[0] least significant */
  ps_i128 min, max;
} ps_qstate;

struct ps_query_result {
  ps_context *ctx;
  uint64_t n_groups;
  uint32_t n_keys, n_aggs;
  ps_agg_kind kinds[PS_QMAX_AGGS];
  uint32_t scales[PS_QMAX_AGGS];     /* the aggregate's value's scale */
  bool key_string[PS_QMAX_KEYS];     /* a dictionary key (a string and its index) */
  uint32_t key_scale[PS_QMAX_KEYS];  /* a number key's scale */
  bool key_float[PS_QMAX_KEYS];      /* a lossless float key (its datums made from doubles) */
  /* Lossless float columns (ALP or BITS mapping) whose codes a MIN/MAX
   * aggregate holds; NULL elsewhere. Their values are decoded from the codes
   * when the result is made (ps_query_float_datum). */
  const ps_column *agg_fcol[PS_QMAX_AGGS];
  /* SUM and AVG of lossless float columns: the column (NULL elsewhere) and
   * the exponent of the unit of the exact sum in state (its value is
   * sum * 2^unit, rounded once when the result is made). */
  const ps_column *agg_fsum[PS_QMAX_AGGS];
  int32_t fsum_unit[PS_QMAX_AGGS];
  /* Arithmetic on a lossless float column (a run's: the column, for
   * messages; NULL elsewhere): SUM and AVG as agg_fsum's, MIN and MAX as
   * doubles' ordered bits. */
  const ps_column *agg_fexpr[PS_QMAX_AGGS];
  /* The aggregate's values are a lossless float column's (a run: agg_fcol or
   * agg_fsum is that column; a merged result has no column): SUM and AVG
   * sum in units of 2^fsum_unit, and where agg_fcol is NULL, MIN and MAX
   * hold the doubles' ordered bits (ps_query_ordered_bits). */
  bool float_agg[PS_QMAX_AGGS];
  ps_datum *keys;   /* n_groups * n_keys */
  ps_datum *values; /* n_groups * n_aggs */
  ps_qstate *state; /* n_groups * n_aggs */
  /* Partial results: nonzero where a sum or average does not fit 38 digits
   * (the value reads as PS_ERR_OVERFLOW; merging may still bring it back into
   * range). NULL when no value overflowed. */
  uint8_t *deferred;
  uint8_t *strings; /* merged results: the bytes of the key strings */
};

/* GROUP BY functions of keys (query_keyfn.c): the kernel's key function of
 * key k and its domain (ps_key_fn's ordinals, +1 for NULL); the ordinal of v
 * (ps_query_program.h's PS_QKEY_*, the host's computation); the key value of
 * an ordinal. */
ps_status ps_query_key_fn_lower(ps_context *ctx, const ps_column *c, uint32_t k, uint32_t fn, int64_t day_units,
                                ps_qkeyfn *f, uint64_t *domain);
int64_t ps_key_ordinal(uint32_t op, int64_t unit, int64_t arg, int64_t v);
ps_i128 ps_key_fn_value(uint32_t fn, const ps_qkeyfn *f, int64_t ordinal);

/* "SUM", "COUNT(*)"... for messages. */
const char *ps_agg_name(ps_agg_kind k);
/* Turns the accumulators of a run of value program p (q's, with a hashed
 * plan's n_groups; n_groups * n_accs accumulators, as read back) into res's
 * groups, keys, states and values (ps_query_result_fill). group_keys: a
 * hashed plan's group keys (group g's is group_keys[g]), NULL in a dense
 * plan (group g's key is g). */
ps_status ps_query_finalize(ps_context *ctx, const ps_query *q, const ps_vprog *p, const uint64_t *group_keys,
                            const ps_qacc *acc, bool partial, ps_query_result *res);
/* Computes res->values from res->state (n_groups, n_aggs, kinds and scales
 * set): the one place where a group's values are made from exact states, for
 * runs and merges alike. PS_ERR_OVERFLOW for the first sum or average (in
 * group, then aggregate order) that does not fit 38 digits; with partial, it
 * is marked in res->deferred instead. */
ps_status ps_query_result_fill(ps_context *ctx, ps_query_result *res, bool partial);
/* A lossless float column's code as a datum: as_double its value, the
 * decimal fields the shortest decimal that reads back as that double;
 * false when no decimal of 38 digits at scale 0..38 does (infinities,
 * magnitudes past 10^38 or below 10^-38 with digits to keep). */
bool ps_query_float_datum(const ps_column *c, uint64_t code, ps_datum *out);
/* The same for a double x (its sign, -0.0, kept in as_double). */
bool ps_query_double_datum(double x, ps_datum *out);
/* A double's bits as a signed integer in the doubles' order (-0.0 just below
 * +0.0; a NaN past the infinities), and back. */
int64_t ps_query_ordered_bits(double x);
double ps_query_ordered_double(int64_t bits);
/* The exact sum * 2^unit (sum: 256-bit two's complement, sum[0] least
 * significant) divided by count (1 for the sum itself), rounded once to the
 * nearest double, ties to even; a zero is +0.0. */
double ps_query_exact_double(const uint64_t sum[4], int32_t unit, uint64_t count);
/* The unit 2^unit in which a query sums lossless float column col
 * (docs/float-encoding.md, "SUM and AVG"): from the values its codes and zone
 * maps allow. */
int32_t ps_query_float_sum_unit(const ps_column *col);
/* The exact sum of lossless float column col (one device's) over the rows
 * a selection bitmap selects (at byte selection_offset, a multiple of 4;
 * NULL: every row), in units of 2^unit (ps_query_float_sum_unit of the
 * column, or of the whole column whose part col is): a query's SUM(col),
 * the same kernels on every backend. sum: 256-bit two's complement, sum[0]
 * least significant; *count: the non-null rows summed. *unrep (sum zero):
 * a selected value is infinite or has a bit below the unit, where a query's
 * SUM is PS_ERR_NOT_REPRESENTABLE. */
ps_status ps_query_float_sum(ps_context *ctx, ps_column *col, const ps_buffer *selection, uint64_t selection_offset,
                             int32_t unit, uint64_t sum[4], uint64_t *count, bool *unrep);
/* A number datum: unscaled v / 10^scale, with its double. */
ps_datum ps_query_datum(ps_i128 v, uint32_t scale);

#endif /* PS_QUERY_H */
