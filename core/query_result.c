/* Query results: the exact finalization of the accumulators a run read back
 * (sums, averages, group order, the double rendering), on the host so that
 * every backend's results come out of the same code; and their accessors. */
#include <float.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#include "query.h"

/* ---- finalization ------------------------------------------------------------ */

static ps_i128 make_i128(uint64_t lo, uint64_t hi) { return (ps_i128)(((ps_u128)hi << 64) | lo); }

/* Digits of |v| into buf (backwards), returns the start. */
static char *u128_digits(ps_u128 v, char *end) {
  *--end = '\0';
  do {
    *--end = (char)('0' + (int)(v % 10));
    v /= 10;
  } while (v);
  return end;
}

static double to_double(ps_i128 v, uint32_t scale) {
  /* |v| <= 2^53 and scale <= 22: v and 10^scale are doubles exactly, so one
   * IEEE division rounds the exact quotient once, to nearest, ties to even:
   * the same double as strtod's (the fast path of Clinger's algorithm),
   * without text. A GROUP BY of millions of groups makes this per value. */
  static const double pow10[23] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                                   1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
  const ps_i128 exact = (ps_i128)1 << 53;
#if defined(FLT_EVAL_METHOD) && FLT_EVAL_METHOD == 0 /* not on x87's extended precision: no double rounding */
  if (v >= -exact && v <= exact && scale <= 22) return (double)(int64_t)v / pow10[scale];
#endif
  /* Else the exact decimal in exponent notation ("-12345e-2"), read by
   * strtod: correctly rounded (ties to even), and independent of the
   * locale's decimal point. */
  char tmp[64], text[80];
  ps_u128 m = v < 0 ? (ps_u128)0 - (ps_u128)v : (ps_u128)v;
  snprintf(text, sizeof text, "%s%se-%" PRIu32, v < 0 ? "-" : "", u128_digits(m, tmp + sizeof tmp), scale);
  return strtod(text, NULL);
}

ps_datum ps_query_datum(ps_i128 v, uint32_t scale) {
  ps_datum d;
  memset(&d, 0, sizeof d);
  d.scale = scale;
  d.lo = (uint64_t)v;
  d.hi = (int64_t)(uint64_t)((ps_u128)v >> 64);
  d.as_double = to_double(v, scale);
  return d;
}

bool ps_query_float_datum(const ps_column *c, uint64_t code, ps_datum *out) {
  return ps_query_double_datum(ps_column_code_double(c, code), out);
}

/* ps_fmap_ord's order, as signed integers (its sign bit flipped). */
int64_t ps_query_ordered_bits(double x) { return (int64_t)(ps_fmap_ord(x) ^ UINT64_C(0x8000000000000000)); }

double ps_query_ordered_double(int64_t bits) {
  return ps_fmap_double(ps_fmap_ord_inverse((uint64_t)bits ^ UINT64_C(0x8000000000000000)));
}

bool ps_query_double_datum(double x, ps_datum *out) {
  if (!isfinite(x)) return false;
  for (int prec = 1; prec <= 17; prec++) {
    char text[64];
    snprintf(text, sizeof text, "%.*e", prec - 1, x);
    if (strtod(text, NULL) != x) continue;
    /* d.ddde[+-]X: prec digits and a decimal exponent */
    ps_i128 digits = 0;
    const char *t = text;
    bool neg = *t == '-';
    if (neg) t++;
    for (; *t && *t != 'e'; t++)
      if (*t >= '0' && *t <= '9') digits = digits * 10 + (*t - '0');
    const long ex = strtol(t + 1, NULL, 10);
    long scale = (long)(prec - 1) - ex;
    if (scale < 0) {
      if ((long)prec - scale > PS_QUERY_MAX_DIGITS) return false;
      digits *= ps_pow10_i128((uint32_t)-scale);
      scale = 0;
    }
    while (scale > 0 && digits % 10 == 0) digits /= 10, scale--;
    if (scale > PS_QUERY_MAX_SCALE) return false;
    *out = ps_query_datum(neg ? -digits : digits, (uint32_t)scale);
    out->as_double = x; /* the column's value itself, -0.0 included */
    return true;
  }
  return false;
}

/* Bit b of the words m (least significant first), and whether any of the
 * bits below b is set. */
static bool word_bit(const uint64_t *m, int64_t b) { return (m[b / 64] >> (b % 64)) & 1; }

static bool any_below(const uint64_t *m, int64_t b) {
  for (int64_t w = 0; w < b / 64; w++)
    if (m[w]) return true;
  return b % 64 != 0 && (m[b / 64] & (((uint64_t)1 << (b % 64)) - 1)) != 0;
}

/* m (n words, least significant first) * 2^exp, rounded once to the
 * nearest double, ties to even (subnormals, and infinity past the largest
 * double, as IEEE rounds). sticky: a nonzero part below m's last bit was
 * dropped before (m then holds at least two bits below the double's last). */
static double round_words(const uint64_t *m, int n, int64_t exp, bool sticky) {
  int top = n - 1;
  while (top >= 0 && m[top] == 0) top--;
  if (top < 0) return 0.0;
  const int64_t bits = 64 * (int64_t)top + 64 - __builtin_clzll(m[top]);
  /* keep 53 bits, or those down to 2^-1074 where the result is subnormal */
  int64_t drop = bits - 53;
  if (exp + drop < -1074) drop = -1074 - exp;
  if (drop <= 0) return ldexp((double)m[0], (int)exp); /* exact: m < 2^53, exp >= -1074 */
  uint64_t kept = 0;
  for (int64_t b = drop; b < bits; b++) kept |= (uint64_t)word_bit(m, b) << (b - drop);
  const bool half = drop - 1 < bits && word_bit(m, drop - 1);
  const bool rest = sticky || any_below(m, drop - 1 < bits ? drop - 1 : bits);
  if (half && (rest || (kept & 1))) kept++;
  /* kept <= 2^53: exact, or infinity where kept * 2^(exp + drop) passes the largest double */
  return ldexp((double)kept, (int)(exp + drop));
}

double ps_query_exact_double(const uint64_t sum[4], int32_t unit, uint64_t count) {
  uint64_t m[6] = {0, 0, sum[0], sum[1], sum[2], sum[3]}; /* |sum| * 2^128 */
  const bool negative = (sum[3] >> 63) != 0;
  if (negative) { /* the magnitude (a sum of fewer than 2^64 values below 2^126 never reaches -2^255) */
    uint64_t carry = 1;
    for (int i = 2; i < 6; i++) {
      m[i] = ~m[i] + carry;
      carry = carry && m[i] == 0;
    }
  }
  bool sticky = false;
  if (count > 1) { /* long division by count: the quotient keeps 64 bits more than the sum's */
    ps_u128 r = 0;
    for (int i = 5; i >= 0; i--) {
      const ps_u128 cur = (r << 64) | m[i];
      m[i] = (uint64_t)(cur / count);
      r = cur % count;
    }
    sticky = r != 0;
  }
  const double x = round_words(m, 6, (int64_t)unit - 128, sticky);
  return negative ? -x : x;
}

static ps_datum null_datum(void) {
  ps_datum d;
  memset(&d, 0, sizeof d);
  d.is_null = 1;
  return d;
}

/* The 256-bit sum as a value of at most 38 digits. */
static bool sum_of(const ps_qstate *x, ps_i128 *out) {
  ps_i128 v = make_i128(x->sum[0], x->sum[1]);
  uint64_t ext = v < 0 ? UINT64_MAX : 0;
  if (x->sum[2] != ext || x->sum[3] != ext || !ps_i128_fits38(v)) return false;
  *out = v;
  return true;
}

/* AVG: the exact 256-bit sum / count at scale + k (k <= PS_QUERY_AVG_MIN_SCALE),
 * rounded half away from zero; false when the average does not fit 38 digits.
 * The sum itself need not fit: an average that fits is returned (200 values
 * of 0.5 at scale 38 average 0.5 though they sum to 100). */
static bool average(const ps_qstate *x, uint32_t k, ps_i128 *out) {
  const uint64_t count = x->count;
  uint64_t m[4] = {x->sum[0], x->sum[1], x->sum[2], x->sum[3]};
  const bool negative = (m[3] >> 63) != 0;
  if (negative) { /* the magnitude: sums of fewer than 2^64 values of 128 bits never reach -2^255 */
    uint64_t carry = 1;
    for (int i = 0; i < 4; i++) {
      m[i] = ~m[i] + carry;
      carry = carry && m[i] == 0;
    }
  }
  ps_u128 r = 0; /* long division of the four words by count */
  for (int i = 3; i >= 0; i--) {
    const ps_u128 cur = (r << 64) | m[i];
    m[i] = (uint64_t)(cur / count);
    r = cur % count;
  }
  const ps_u128 q = ((ps_u128)m[1] << 64) | m[0], p = (ps_u128)ps_pow10_i128(k);
  if (m[2] != 0 || m[3] != 0 || q > (ps_u128)PS_I128_MAX38 / p) return false;
  ps_u128 frac = r * p; /* r < 2^64, p <= 10^6 */
  ps_u128 d = frac / count, rem = frac % count;
  if (rem >= count - rem) d++; /* 2 * rem >= count, without overflow */
  ps_u128 res = q * p + d;
  if (res > (ps_u128)PS_I128_MAX38) return false;
  *out = negative ? -(ps_i128)res : (ps_i128)res;
  return true;
}

static ps_datum key_datum(const ps_query *q, uint32_t k, uint64_t index) {
  const ps_column *c = q->keys[k];
  if (c->validity.handle && index == q->prog.key_domain[k] - 1) return null_datum();
  if (q->key_fns[k] != PS_KEY_VALUE) {
    const ps_qkeyfn *f = &q->prog.key_fn[k];
    return ps_query_datum(ps_key_fn_value(q->key_fns[k], f, f->base + (int64_t)index), 0);
  }
  ps_datum f;
  if (c->fmap.map != PS_FLOAT_MAP_DECIMAL) /* the encoder's values always fit (ps_query_run checks) */
    return ps_query_float_datum(c, index, &f) ? f : null_datum();
  ps_prog_col pc = ps_prog_col_of(c);
  uint64_t v = pc.reference + index;
  bool sign = pc.kind != PS_KIND_UNSIGNED;
  ps_datum d = ps_query_datum(sign ? (ps_i128)(int64_t)v : (ps_i128)v,
                              ps_type_is_float(c->type) || ps_type_is_decimal(c->type) ? c->scale : 0);
  if (c->type == PS_TYPE_STRING) {
    d.str = (const char *)c->dict.bytes + c->dict.offsets[v];
    d.str_len = (size_t)(c->dict.offsets[v + 1] - c->dict.offsets[v]);
  }
  return d;
}

/* A dictionary entry, for ordering an unsorted dictionary's keys. */
typedef struct dict_entry {
  const uint8_t *bytes;
  uint64_t len;
  uint32_t index;
} dict_entry;

static int cmp_dict_entry(const void *x, const void *y) {
  const dict_entry *a = x, *b = y;
  return ps_bytes_cmp(a->bytes, a->len, b->bytes, b->len);
}

/* rank[i] = position of key index i in ascending key order: the identity
 * except for an unsorted dictionary, whose strings are sorted here, and a
 * lossless float column, whose codes of equal values share a rank (the NULL
 * index, last, stays last). */
static ps_status key_ranks(ps_context *ctx, const ps_column *c, uint32_t dom, uint32_t *rank) {
  for (uint32_t i = 0; i < dom; i++) rank[i] = i;
  if (c->fmap.map != PS_FLOAT_MAP_DECIMAL) {
    /* Codes ascend with the values; those of equal values (-0.0 and +0.0)
     * are one key, as SQL groups by equality. */
    const uint32_t values = dom - (c->validity.handle != NULL);
    uint32_t next = 0;
    double prev = 0;
    for (uint32_t i = 0; i < values; i++) {
      const double v = ps_column_code_double(c, i);
      if (i && v != prev) next++;
      rank[i] = next;
      prev = v;
    }
    if (values < dom) rank[values] = next + 1; /* NULL */
    return PS_OK;
  }
  uint32_t values = dom - (c->validity.handle != NULL);
  dict_entry *e = ps_calloc_ctx(ctx, values ? values : 1, sizeof *e);
  if (!e) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "ordering %" PRIu32 " dictionary keys", values);
  for (uint32_t i = 0; i < values; i++) {
    uint64_t v = c->reference.u + i;
    e[i].bytes = c->dict.bytes + c->dict.offsets[v];
    e[i].len = c->dict.offsets[v + 1] - c->dict.offsets[v];
    e[i].index = i;
  }
  qsort(e, values, sizeof *e, cmp_dict_entry);
  /* An unsorted dictionary may repeat a string: its indexes are one key. */
  uint32_t next = 0;
  for (uint32_t i = 0; i < values; i++) {
    if (i && cmp_dict_entry(&e[i - 1], &e[i])) next++;
    rank[e[i].index] = next;
  }
  if (values < dom) rank[values] = next + 1; /* NULL */
  ps_host_free(ctx, e);
  return PS_OK;
}

typedef struct group_order {
  uint64_t rank;
  uint32_t group;
} group_order;

/* The rank of code i of a lossless float key of a hashed plan (too many
 * possible codes for key_ranks' table): codes ascend with the values, and
 * the only distinct codes of one value are -0.0's and +0.0's, next to each
 * other, so +0.0's code takes -0.0's rank. dom: the key's domain (its NULL
 * index, dom - 1 where the column has a validity, stays its own). */
static uint64_t float_rank(const ps_column *c, uint64_t dom, uint64_t i) {
  if (i == 0 || (c->validity.handle && i == dom - 1)) return i;
  const double x = ps_column_code_double(c, i);
  return x == 0 && !signbit(x) && ps_column_code_double(c, i - 1) == 0 ? i - 1 : i;
}

/* Whether key column c's ranks differ from its key indexes (key_ranks). */
static bool needs_ranks(const ps_column *c) {
  return (c->type == PS_TYPE_STRING && !c->dict.sorted) || c->fmap.map != PS_FLOAT_MAP_DECIMAL;
}

/* Key k's index in group g (a dense plan's group is its key). */
static uint64_t key_index(const ps_vprog *p, const uint64_t *group_keys, uint64_t g, uint32_t k) {
  const uint64_t key = group_keys ? group_keys[g] : g;
  return (key / p->key_stride[k]) % p->key_domain[k];
}

static int cmp_order(const void *x, const void *y) {
  const group_order *a = x, *b = y;
  if (a->rank != b->rank) return a->rank < b->rank ? -1 : 1;
  return a->group < b->group ? -1 : a->group > b->group;
}

/* x += y (groups of one key that a dictionary's repeated strings split). */
static void acc_merge(ps_qacc *x, const ps_qacc *y) {
  ps_u128 lo = ((ps_u128)x->sum1 << 64) | x->sum0, add = ((ps_u128)y->sum1 << 64) | y->sum0, sum = lo + add;
  x->sum2 += y->sum2 + (sum < lo);
  x->sum0 = (uint64_t)sum;
  x->sum1 = (uint64_t)(sum >> 64);
  if (y->count && make_i128(y->min_lo, y->min_hi) < make_i128(x->min_lo, x->min_hi))
    x->min_lo = y->min_lo, x->min_hi = y->min_hi;
  if (y->count && make_i128(y->max_lo, y->max_hi) > make_i128(x->max_lo, x->max_hi))
    x->max_lo = y->max_lo, x->max_hi = y->max_hi;
  x->count += y->count;
}

ps_status ps_query_finalize(ps_context *ctx, const ps_query *q, const ps_vprog *p, const uint64_t *group_keys,
                            const ps_qacc *acc, bool partial, ps_query_result *res) {
  for (uint32_t a = 0; a < p->n_aggs; a++) {
    res->kinds[a] = q->kinds[a];
    res->scales[a] = q->scales[a];
    res->agg_fcol[a] = q->agg_fcol[a];
    res->agg_fsum[a] = q->agg_fsum[a];
    res->fsum_unit[a] = q->fsum_unit[a];
    res->agg_fexpr[a] = q->agg_fexpr[a];
    res->float_agg[a] = q->agg_fcol[a] || q->agg_fsum[a] || q->agg_fexpr[a];
  }
  for (uint32_t k = 0; k < p->n_keys; k++) {
    const ps_column *c = q->keys[k];
    res->key_string[k] = c->type == PS_TYPE_STRING;
    res->key_scale[k] = ps_type_is_float(c->type) || ps_type_is_decimal(c->type) ? c->scale : 0;
    res->key_float[k] = c->fmap.map != PS_FLOAT_MAP_DECIMAL;
  }
  uint32_t *rank[PS_QMAX_KEYS] = {NULL, NULL};
  group_order *order = NULL;
  ps_status st = PS_OK;
  bool float_wide[PS_QMAX_KEYS] = {false, false};
  for (uint32_t k = 0; k < p->n_keys && st == PS_OK; k++) {
    if (!needs_ranks(q->keys[k])) continue; /* the index is the rank */
    if (q->keys[k]->fmap.map != PS_FLOAT_MAP_DECIMAL && p->key_domain[k] > PS_QUERY_MAX_GROUPS) {
      float_wide[k] = true; /* a hashed plan's float key: ranked one code at a time (float_rank) */
      continue;
    }
    uint32_t dom = (uint32_t)p->key_domain[k]; /* a dictionary's, or a dense plan's float key: below 2^32 */
    rank[k] = ps_calloc_ctx(ctx, dom ? dom : 1, sizeof(uint32_t));
    st =
        rank[k] ? key_ranks(ctx, q->keys[k], dom, rank[k]) : ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "ordering groups");
  }
  uint64_t present = 0;
  if (st == PS_OK) {
    order = ps_calloc_ctx(ctx, p->n_groups, sizeof *order);
    if (!order) st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "ordering groups");
  }
  for (uint32_t g = 0; st == PS_OK && g < p->n_groups; g++) {
    if (p->n_keys && acc[(uint64_t)g * p->n_accs].count == 0) continue;
    uint64_t r = 0;
    for (uint32_t k = 0; k < p->n_keys; k++) {
      const uint64_t i = key_index(p, group_keys, g, k);
      r = r * p->key_domain[k] + (rank[k]         ? rank[k][i]
                                  : float_wide[k] ? float_rank(q->keys[k], p->key_domain[k], i)
                                                  : i);
    }
    order[present].rank = r;
    order[present].group = g;
    present++;
  }
  /* Groups numbered in key order (every hashed plan's but where a key's
   * ranks differ from its indexes, and a dense plan's) need no sort. */
  bool sorted = true;
  for (uint64_t i = 1; st == PS_OK && sorted && i < present; i++) sorted = order[i - 1].rank <= order[i].rank;
  if (st == PS_OK && !sorted) qsort(order, present, sizeof *order, cmp_order);
  uint64_t out_groups = 0;
  for (uint64_t i = 0; i < present; i++) out_groups += i == 0 || order[i].rank != order[i - 1].rank;
  ps_qacc *merged = NULL;
  if (st == PS_OK) {
    res->n_groups = out_groups;
    res->keys = ps_calloc_ctx(ctx, out_groups * p->n_keys + 1, sizeof(ps_datum));
    res->values = ps_calloc_ctx(ctx, out_groups * p->n_aggs + 1, sizeof(ps_datum));
    res->state = ps_calloc_ctx(ctx, out_groups * p->n_aggs + 1, sizeof(ps_qstate));
    merged = ps_calloc_ctx(ctx, p->n_accs, sizeof *merged);
    if (!res->keys || !res->values || !res->state || !merged)
      st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a query result");
  }
  for (uint64_t i = 0, out_i = 0; st == PS_OK && i < present; out_i++) {
    uint32_t g = order[i].group;
    memcpy(merged, &acc[(uint64_t)g * p->n_accs], p->n_accs * sizeof *merged);
    uint64_t j = i + 1;
    for (; j < present && order[j].rank == order[i].rank; j++)
      for (uint32_t a = 0; a < p->n_accs; a++) acc_merge(&merged[a], &acc[(uint64_t)order[j].group * p->n_accs + a]);
    i = j;
    for (uint32_t k = 0; k < p->n_keys && st == PS_OK; k++) {
      const uint64_t index = key_index(p, group_keys, g, k);
      ps_datum *kd = &res->keys[out_i * p->n_keys + k];
      *kd = key_datum(q, k, index);
      const ps_column *c = q->keys[k];
      char label[PS_COLUMN_LABEL_SIZE];
      if (kd->is_null && c->fmap.map != PS_FLOAT_MAP_DECIMAL && !(c->validity.handle && index == p->key_domain[k] - 1))
        st = ps_set_error(ctx, PS_ERR_NOT_REPRESENTABLE,
                          "GROUP BY key %" PRIu32 " (float %s) is %.17g, which no decimal of %d digits holds", k,
                          ps_column_label(c, label), ps_column_code_double(c, index), PS_QUERY_MAX_DIGITS);
    }
    if (st != PS_OK) break;
    for (uint32_t a = 0; a < p->n_aggs; a++) {
      const ps_qacc *x = &merged[1 + a];
      ps_qstate *t = &res->state[out_i * p->n_aggs + a];
      t->count = x->count;
      t->sum[0] = x->sum0;
      t->sum[1] = x->sum1;
      t->sum[2] = x->sum2;
      t->sum[3] = (int64_t)x->sum2 < 0 ? UINT64_MAX : 0;
      t->min = make_i128(x->min_lo, x->min_hi);
      t->max = make_i128(x->max_lo, x->max_hi);
    }
  }
  if (st == PS_OK && !q->state_only) st = ps_query_result_fill(ctx, res, partial);
  ps_host_free(ctx, merged);
  for (uint32_t k = 0; k < PS_QMAX_KEYS; k++) ps_host_free(ctx, rank[k]);
  ps_host_free(ctx, order);
  return st;
}

ps_status ps_query_result_fill(ps_context *ctx, ps_query_result *res, bool partial) {
  for (uint64_t g = 0; g < res->n_groups; g++) {
    for (uint32_t a = 0; a < res->n_aggs; a++) {
      const ps_qstate *x = &res->state[g * res->n_aggs + a];
      ps_datum *d = &res->values[g * res->n_aggs + a];
      ps_agg_kind kind = res->kinds[a];
      uint32_t scale = res->scales[a];
      ps_i128 v;
      const char *what = NULL;
      uint32_t s = scale;
      switch (kind) {
        case PS_AGG_COUNT_STAR:
        case PS_AGG_COUNT:
          *d = ps_query_datum((ps_i128)x->count, 0);
          break;
        case PS_AGG_MIN:
        case PS_AGG_MAX: {
          const ps_i128 m = kind == PS_AGG_MIN ? x->min : x->max;
          if (!x->count) {
            *d = null_datum();
          } else if (res->float_agg[a]) { /* a code of agg_fcol, or (merged) a double's ordered bits */
            char label[PS_COLUMN_LABEL_SIZE] = "(merged)";
            if (res->agg_fcol[a]) ps_column_label(res->agg_fcol[a], label);
            if (res->agg_fexpr[a]) ps_column_label(res->agg_fexpr[a], label);
            const double f = res->agg_fcol[a] ? ps_column_code_double(res->agg_fcol[a], (uint64_t)m)
                                              : ps_query_ordered_double((int64_t)m);
            if (!ps_query_double_datum(f, d))
              return ps_set_error(ctx, PS_ERR_NOT_REPRESENTABLE,
                                  "aggregate %" PRIu32
                                  " (%s of float %s) is %.17g, which no decimal of %d digits holds",
                                  a, ps_agg_name(kind), label, f, PS_QUERY_MAX_DIGITS);
          } else {
            *d = ps_query_datum(m, scale);
          }
          break;
        }
        case PS_AGG_SUM:
        case PS_AGG_AVG:
          if (!x->count) {
            *d = null_datum();
            break;
          }
          if (res->float_agg[a]) { /* a lossless float's exact sum, rounded once */
            const double f = ps_query_exact_double(x->sum, res->fsum_unit[a], kind == PS_AGG_AVG ? x->count : 1);
            char label[PS_COLUMN_LABEL_SIZE] = "(merged)";
            if (res->agg_fsum[a]) ps_column_label(res->agg_fsum[a], label);
            if (res->agg_fexpr[a]) ps_column_label(res->agg_fexpr[a], label);
            if (!ps_query_double_datum(f, d))
              return ps_set_error(ctx, PS_ERR_NOT_REPRESENTABLE,
                                  "aggregate %" PRIu32
                                  " (%s of float %s) is %.17g, which no decimal of %d digits holds",
                                  a, ps_agg_name(kind), label, f, PS_QUERY_MAX_DIGITS);
            break;
          }
          if (kind == PS_AGG_SUM) {
            if (!sum_of(x, &v)) {
              what = "sum";
              break;
            }
            *d = ps_query_datum(v, scale);
            break;
          }
          s = scale > PS_QUERY_AVG_MIN_SCALE ? scale : PS_QUERY_AVG_MIN_SCALE;
          if (!average(x, s - scale, &v)) {
            what = "average";
            break;
          }
          *d = ps_query_datum(v, s);
          break;
      }
      if (!what) continue;
      if (!partial) {
        if (what[0] == 's')
          return ps_set_error(ctx, PS_ERR_OVERFLOW, "the sum of aggregate %" PRIu32 " (%s) does not fit %d digits", a,
                              ps_agg_name(kind), PS_QUERY_MAX_DIGITS);
        return ps_set_error(ctx, PS_ERR_OVERFLOW,
                            "the average of aggregate %" PRIu32 " at scale %" PRIu32 " does not fit %d digits", a, s,
                            PS_QUERY_MAX_DIGITS);
      }
      if (!res->deferred) {
        res->deferred = ps_calloc_ctx(ctx, res->n_groups * res->n_aggs, 1);
        if (!res->deferred) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a partial result");
      }
      res->deferred[g * res->n_aggs + a] = 1;
      *d = null_datum();
    }
  }
  return PS_OK;
}

void ps_query_result_destroy(ps_query_result *res) {
  if (!res) return;
  ps_host_free(res->ctx, res->keys);
  ps_host_free(res->ctx, res->values);
  ps_host_free(res->ctx, res->state);
  ps_host_free(res->ctx, res->deferred);
  ps_host_free(res->ctx, res->strings);
  ps_host_free(res->ctx, res);
}

uint64_t ps_query_result_groups(const ps_query_result *res) { return res ? res->n_groups : 0; }

ps_status ps_query_result_key(const ps_query_result *res, uint64_t group, uint32_t key, ps_datum *out) {
  if (!res || !out || group >= res->n_groups || key >= res->n_keys) return PS_ERR_INVALID_ARGUMENT;
  *out = res->keys[group * res->n_keys + key];
  return PS_OK;
}

ps_status ps_query_result_value(const ps_query_result *res, uint64_t group, uint32_t agg, ps_datum *out) {
  if (!res || !out || group >= res->n_groups || agg >= res->n_aggs) return PS_ERR_INVALID_ARGUMENT;
  if (res->deferred && res->deferred[group * res->n_aggs + agg]) return PS_ERR_OVERFLOW;
  *out = res->values[group * res->n_aggs + agg];
  return PS_OK;
}

ps_status ps_datum_format(const ps_datum *d, char *buf, size_t size) {
  if (!d || !buf) return PS_ERR_INVALID_ARGUMENT;
  char text[PS_DATUM_TEXT_SIZE];
  const char *src = text;
  size_t len;
  if (d->is_null) {
    src = "NULL";
    len = 4;
  } else if (d->str) {
    src = d->str;
    len = d->str_len;
  } else {
    if (d->scale > PS_QUERY_MAX_SCALE) return PS_ERR_INVALID_ARGUMENT;
    ps_i128 v = make_i128(d->lo, (uint64_t)d->hi);
    ps_u128 m = v < 0 ? (ps_u128)0 - (ps_u128)v : (ps_u128)v;
    char tmp[64];
    char *dig = u128_digits(m, tmp + sizeof tmp);
    size_t nd = strlen(dig), pos = 0;
    if (v < 0) text[pos++] = '-';
    if (d->scale == 0) {
      memcpy(text + pos, dig, nd);
      pos += nd;
    } else {
      size_t whole = nd > d->scale ? nd - d->scale : 0;
      if (whole) {
        memcpy(text + pos, dig, whole);
        pos += whole;
      } else {
        text[pos++] = '0';
      }
      text[pos++] = '.';
      for (size_t z = nd; z < d->scale; z++) text[pos++] = '0';
      memcpy(text + pos, dig + whole, nd - whole);
      pos += nd - whole;
    }
    len = pos;
  }
  if (len >= size) return PS_ERR_BUFFER_TOO_SMALL; /* len + 1 wraps at str_len = SIZE_MAX */
  memcpy(buf, src, len);
  buf[len] = '\0';
  return PS_OK;
}
