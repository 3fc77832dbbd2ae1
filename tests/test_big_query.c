/*
 * big_query: queries (ps_query_*) over more than 2^32 rows (default
 * 5,000,000,003), checked against answers computed in closed form, so that a
 * 32-bit row index, bit offset or count anywhere in the query path shows.
 *
 * The table is cheap to build and its answers cheap to know. Rows fall into
 * blocks of 2^s rows (s the largest with n >> s >= 8, so 8..15 blocks; for
 * 5e9 rows s = 29 and block 8 starts at row 2^32, the "pivot") and into
 * phases p = row mod 96. Every column's code is a function of (block, phase):
 *   blk  uint8 width 4          the block number itself
 *   k    dictionary {"k0","k1","k2"}, 2-bit codes (code 3 is corrupt), nulls
 *   a    int32 width 6, M = -20, nulls
 *   d    float64 of scale 2 (exact decimals in queries), width 5, M = 10^12
 *        (products and sums past 64 bits)
 *   c    int64 width 0, M = 7000000001 (sums past 2^64)
 * Within a block each stream repeats every 96 rows, so it is written to the
 * device in large pieces built from one period; 96 does not divide 2^32, so a
 * row index taken modulo 2^32 reads another phase, and the block column moves
 * by 8 there. The answers: for each (block, phase), the number of rows of
 * the table in it (a closed form), times what one such row contributes.
 *
 * Checked: COUNT(*), COUNT, SUM of a column and of products, MIN, MAX, AVG,
 * SUM of a width-0 column, a CASE, without a WHERE, with a WHERE selecting
 * rows on both sides of the pivot, and with GROUP BY a nullable dictionary
 * key; a value that first overflows past the pivot, and corrupt key codes
 * past it, each named by its row (the smallest selected one). Twice: the
 * backend's default chunks and chunks of about n/5 rows (so the pivot falls
 * inside a chunk). Registered as big_query.cuda at full size and, at
 * PACKSCAN_BIG_ROWS=1000003, on reference and opencl; by hand:
 * PACKSCAN_BIG_ROWS=<n> test_big_query <backend>.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "tcol.h"

typedef __int128 i128;

#define PERIOD 96
#define MAX_BLOCKS 16
#define PIECE_BYTES ((size_t)16 << 20)
#define C_VALUE INT64_C(7000000001)
#define D_REF INT64_C(1000000000000)

static double now_s(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* ---- the table: codes and validity of (block, phase) ---------------------------- */

enum { COL_BLK, COL_K, COL_K_VALID, COL_A, COL_A_VALID, COL_D, N_STREAMS };

static uint32_t blk_code(uint32_t b, uint32_t p) { return b; }
static uint32_t k_code(uint32_t b, uint32_t p) { return (p * 5 + b) % 3; }
static uint32_t k_valid(uint32_t b, uint32_t p) { return (p + b) % 13 != 4; }
static uint32_t a_code(uint32_t b, uint32_t p) { return (p * 37 + b * 11) % 64; }
static uint32_t a_valid(uint32_t b, uint32_t p) { return (p * 3 + b) % 11 != 3; }
static uint32_t d_code(uint32_t b, uint32_t p) { return (p * 13 + b * 7) % 32; }

typedef uint32_t (*code_fn)(uint32_t b, uint32_t p);
static const struct {
  code_fn f;
  uint32_t width;
} streams[N_STREAMS] = {{blk_code, 4}, {k_code, 2}, {k_valid, 1}, {a_code, 6}, {a_valid, 1}, {d_code, 5}};

typedef struct table {
  uint64_t n;
  uint32_t s;                         /* log2 of the block size */
  uint32_t blocks;                    /* (n - 1) >> s, plus one */
  uint64_t pivot;                     /* 8 << s: 2^32 for 2^32 < n < 2^33 */
  uint64_t cells[MAX_BLOCKS][PERIOD]; /* rows of the table in (block, phase) */
} table;

/* Rows r in [0, x) with r mod PERIOD == p. */
static uint64_t rows_below(uint64_t x, uint32_t p) { return (x + PERIOD - 1 - p) / PERIOD; }

static void table_init(table *t, uint64_t n) {
  memset(t, 0, sizeof *t);
  t->n = n;
  t->s = 5;
  while ((n >> (t->s + 1)) >= 8) t->s++;
  t->blocks = (uint32_t)((n - 1) >> t->s) + 1;
  t->pivot = (uint64_t)8 << t->s;
  for (uint32_t b = 0; b < t->blocks; b++) {
    uint64_t lo = (uint64_t)b << t->s, hi = lo + ((uint64_t)1 << t->s);
    if (hi > n) hi = n;
    for (uint32_t p = 0; p < PERIOD; p++) t->cells[b][p] = rows_below(hi, p) - rows_below(lo, p);
  }
}

/* The closed form against a loop over the rows, where that is quick. */
static void check_cells(const table *t) {
  uint64_t total = 0;
  for (uint32_t b = 0; b < t->blocks; b++)
    for (uint32_t p = 0; p < PERIOD; p++) total += t->cells[b][p];
  CHECKF(total == t->n, "the cells hold %" PRIu64 " rows, the table %" PRIu64, total, t->n);
  if (t->n > ((uint64_t)1 << 24)) return;
  static uint64_t cnt[MAX_BLOCKS][PERIOD];
  memset(cnt, 0, sizeof cnt);
  for (uint64_t r = 0; r < t->n; r++) cnt[r >> t->s][r % PERIOD]++;
  CHECKF(memcmp(cnt, t->cells, sizeof cnt) == 0, "closed-form cell counts differ from counting the rows");
}

static uint64_t stream_bytes(uint64_t n, uint32_t width) { return (n * width + 7) / 8; }

/* Writes the packed stream of one column to buf, block by block: one period
 * (96 rows, a whole number of bytes at every width) from the block's first
 * phase on, repeated into a piece, the piece written until the block ends. */
static ps_status fill_stream(ps_context *ctx, const table *t, int which, ps_buffer *buf, uint8_t *piece) {
  const uint32_t w = streams[which].width;
  const uint64_t total = stream_bytes(t->n, w), block_bytes = ((uint64_t)1 << t->s) * w / 8;
  const size_t period_bytes = PERIOD * w / 8;
  size_t piece_bytes = PIECE_BYTES / period_bytes * period_bytes;
  if (piece_bytes > block_bytes + period_bytes) piece_bytes = (size_t)(block_bytes / period_bytes + 1) * period_bytes;
  for (uint32_t b = 0; b < t->blocks; b++) {
    uint64_t r0 = (uint64_t)b << t->s;
    uint64_t end = b + 1 == t->blocks ? total : (((uint64_t)b + 1) << t->s) * w / 8;
    uint32_t ph = (uint32_t)(r0 % PERIOD);
    uint64_t codes[PERIOD];
    for (uint32_t j = 0; j < PERIOD; j++) codes[j] = streams[which].f(b, (ph + j) % PERIOD);
    memset(piece, 0, period_bytes);
    tcol_pack(piece, PERIOD, w, codes);
    for (size_t off = period_bytes; off < piece_bytes; off += period_bytes) memcpy(piece + off, piece, period_bytes);
    for (uint64_t off = r0 * w / 8; off < end;) {
      uint64_t len = end - off < piece_bytes ? end - off : piece_bytes;
      ps_status st = ps_buffer_write(ctx, buf, off, piece, len);
      if (st != PS_OK) return st;
      off += len;
    }
  }
  return PS_OK;
}

typedef struct device_table {
  ps_buffer *bufs[N_STREAMS];
  ps_column *blk, *k, *a, *d, *c;
} device_table;

static void device_table_free(device_table *dt) {
  ps_column_destroy(dt->blk);
  ps_column_destroy(dt->k);
  ps_column_destroy(dt->a);
  ps_column_destroy(dt->d);
  ps_column_destroy(dt->c);
  for (int i = 0; i < N_STREAMS; i++) ps_buffer_destroy(dt->bufs[i]);
  memset(dt, 0, sizeof *dt);
}

static ps_for_desc for_desc(uint64_t n, ps_type type, uint32_t width, int64_t ref, uint32_t scale, int nulls) {
  ps_reference m;
  m.i = ref;
  return tcol_for_desc(type, n, width, scale, m, nulls);
}

static int device_table_create(ps_context *ctx, const table *t, device_table *dt) {
  memset(dt, 0, sizeof *dt);
  uint8_t *piece = th_malloc(PIECE_BYTES);
  int ok = 1;
  for (int i = 0; ok && i < N_STREAMS; i++) {
    ok = CHECK_OK(ctx, ps_buffer_create(ctx, stream_bytes(t->n, streams[i].width), &dt->bufs[i])) &&
         CHECK_OK(ctx, fill_stream(ctx, t, i, dt->bufs[i], piece));
  }
  free(piece);
  if (!ok) return 0;
  const uint64_t n = t->n;
  ps_for_desc blk = for_desc(n, PS_TYPE_UINT8, 4, 0, 0, 0), k = for_desc(n, PS_TYPE_UINT8, 2, 0, 0, 1);
  ps_for_desc a = for_desc(n, PS_TYPE_INT32, 6, -20, 0, 1), d = for_desc(n, PS_TYPE_FLOAT64, 5, D_REF, 2, 0);
  ps_for_desc c = for_desc(n, PS_TYPE_INT64, 0, C_VALUE, 0, 0);
  static const int32_t offsets[4] = {0, 2, 4, 6};
  ps_dict_desc dict;
  ps_dict_desc_init(&dict);
  dict.count = 3;
  dict.offsets32 = offsets;
  dict.bytes = (const uint8_t *)"k0k1k2";
  dict.bytes_size = 6;
  dict.sorted = 1;
  ok = CHECK_OK(ctx, ps_column_create_for_device(ctx, &blk, dt->bufs[COL_BLK], 0, NULL, 0, &dt->blk)) &&
       CHECK_OK(ctx,
                ps_column_create_dict_device(ctx, &dict, &k, dt->bufs[COL_K], 0, dt->bufs[COL_K_VALID], 0, &dt->k)) &&
       CHECK_OK(ctx, ps_column_create_for_device(ctx, &a, dt->bufs[COL_A], 0, dt->bufs[COL_A_VALID], 0, &dt->a)) &&
       CHECK_OK(ctx, ps_column_create_for_device(ctx, &d, dt->bufs[COL_D], 0, NULL, 0, &dt->d)) &&
       CHECK_OK(ctx, ps_column_create_for(ctx, &c, &dt->c));
  return ok;
}

/* ---- the queries and their closed-form answers ---------------------------------- */

enum {
  AGG_COUNT_STAR,
  AGG_COUNT_A,
  AGG_SUM_A,
  AGG_SUM_AD, /* SUM(a * d), scale 2 */
  AGG_MIN_BA, /* MIN(blk * 100 - a) */
  AGG_MAX_BA, /* MAX(blk * 100 + a) */
  AGG_AVG_A,
  AGG_SUM_C, /* width 0: 7000000001 per row */
  AGG_SUM_BLK,
  AGG_SUM_CASE, /* SUM(CASE WHEN blk = 8 THEN a ELSE 0 END) */
  AGG_SUM_DC,   /* SUM(d * c), scale 2: values of about 7 * 10^21 */
  AGG_MAX_D,
  N_AGGS
};
static const ps_agg_kind agg_kinds[N_AGGS] = {PS_AGG_COUNT_STAR, PS_AGG_COUNT, PS_AGG_SUM, PS_AGG_SUM,
                                              PS_AGG_MIN,        PS_AGG_MAX,   PS_AGG_AVG, PS_AGG_SUM,
                                              PS_AGG_SUM,        PS_AGG_SUM,   PS_AGG_SUM, PS_AGG_MAX};
static const uint32_t agg_scales[N_AGGS] = {0, 0, 0, 2, 0, 0, 0, 0, 0, 0, 2, 2};

/* One row's value of an aggregate in (block, phase); 0 = NULL. */
static int row_value(int agg, uint32_t b, uint32_t p, i128 *v) {
  const int av = (int)a_valid(b, p);
  const i128 a = (i128)a_code(b, p) - 20, d = (i128)D_REF + d_code(b, p);
  switch (agg) {
    case AGG_COUNT_STAR:
      *v = 0;
      return 1;
    case AGG_COUNT_A:
    case AGG_SUM_A:
    case AGG_AVG_A:
      *v = a;
      return av;
    case AGG_SUM_AD:
      *v = a * d;
      return av;
    case AGG_MIN_BA:
      *v = (i128)b * 100 - a;
      return av;
    case AGG_MAX_BA:
      *v = (i128)b * 100 + a;
      return av;
    case AGG_SUM_C:
      *v = C_VALUE;
      return 1;
    case AGG_SUM_BLK:
      *v = b;
      return 1;
    case AGG_SUM_CASE:
      *v = b == 8 ? a : 0;
      return b == 8 ? av : 1;
    case AGG_SUM_DC:
      *v = d * C_VALUE;
      return 1;
    case AGG_MAX_D:
      *v = d;
      return 1;
  }
  return 0;
}

enum { Q_ALL, Q_PIVOT, Q_GROUPED, N_QUERIES };
static const char *const query_names[N_QUERIES] = {
    "no WHERE", "WHERE blk BETWEEN 7 AND 8 AND a >= 0 (both sides of the pivot)", "WHERE NOT blk = 3 GROUP BY k"};

static int selected(int q, uint32_t b, uint32_t p) {
  if (q == Q_PIVOT) return b >= 7 && b <= 8 && a_valid(b, p) && a_code(b, p) >= 20;
  if (q == Q_GROUPED) return b != 3;
  return 1;
}

#define N_GROUPS 4 /* k0, k1, k2, NULL */

typedef struct oacc {
  uint64_t count; /* values (rows for COUNT(*)) */
  i128 sum, min, max;
} oacc;

typedef struct answer {
  oacc acc[N_GROUPS][N_AGGS];
  uint64_t rows[N_GROUPS];
} answer;

static void closed_form(const table *t, int q, answer *ans) {
  memset(ans, 0, sizeof *ans);
  for (uint32_t b = 0; b < t->blocks; b++)
    for (uint32_t p = 0; p < PERIOD; p++) {
      uint64_t cnt = t->cells[b][p];
      if (!cnt || !selected(q, b, p)) continue;
      int g = q != Q_GROUPED ? 0 : k_valid(b, p) ? (int)k_code(b, p) : 3;
      ans->rows[g] += cnt;
      for (int i = 0; i < N_AGGS; i++) {
        i128 v;
        if (!row_value(i, b, p, &v)) continue;
        oacc *x = &ans->acc[g][i];
        if (x->count == 0 || v < x->min) x->min = v;
        if (x->count == 0 || v > x->max) x->max = v;
        x->count += cnt;
        x->sum += v * (i128)cnt;
      }
    }
}

static const char *i128_text(i128 v, char *buf, size_t size) {
  char tmp[48], *e = tmp + sizeof tmp;
  unsigned __int128 m = v < 0 ? -(unsigned __int128)v : (unsigned __int128)v;
  *--e = '\0';
  do *--e = (char)('0' + (int)(m % 10));
  while ((m /= 10) != 0);
  snprintf(buf, size, "%s%s", v < 0 ? "-" : "", e);
  return buf;
}

static void check_datum(const ps_datum *d, int want_null, i128 want, uint32_t scale, const char *what) {
  char w[48], g[PS_DATUM_TEXT_SIZE] = "?";
  if (want_null) {
    CHECKF(d->is_null, "%s: expected NULL", what);
    return;
  }
  i128 got = (i128)(((unsigned __int128)(uint64_t)d->hi << 64) | d->lo);
  ps_datum_format(d, g, sizeof g);
  CHECKF(!d->is_null && got == want && d->scale == scale, "%s: got %s (unscaled, scale %u), expected %s (scale %u)",
         what, g, d->scale, i128_text(want, w, sizeof w), scale);
}

/* AVG: the exact sum / count at scale max(s, 6), rounded half away from zero. */
static i128 average(i128 sum, uint64_t count, uint32_t s, uint32_t *scale) {
  uint32_t S = s > PS_QUERY_AVG_MIN_SCALE ? s : PS_QUERY_AVG_MIN_SCALE;
  i128 num = sum;
  for (uint32_t i = s; i < S; i++) num *= 10;
  i128 mag = num < 0 ? -num : num, c = (i128)count;
  i128 q = (2 * mag + c) / (2 * c);
  *scale = S;
  return num < 0 ? -q : q;
}

static void check_result(const ps_query_result *res, const answer *ans, int grouped) {
  static const char *const keys[N_GROUPS] = {"k0", "k1", "k2", NULL};
  uint64_t out = 0;
  for (int g = 0; g < (grouped ? N_GROUPS : 1); g++) {
    if (grouped && ans->rows[g] == 0) continue;
    if (!CHECKF(out < ps_query_result_groups(res), "%" PRIu64 " groups; group %d missing", ps_query_result_groups(res),
                g))
      return;
    ps_datum d;
    if (grouped && CHECK_OK(NULL, ps_query_result_key(res, out, 0, &d))) {
      if (keys[g])
        CHECKF(!d.is_null && d.str && d.str_len == 2 && memcmp(d.str, keys[g], 2) == 0,
               "group %" PRIu64 ": key is not '%s'", out, keys[g]);
      else
        CHECKF(d.is_null, "group %" PRIu64 ": key is not NULL", out);
    }
    for (int i = 0; i < N_AGGS; i++) {
      if (!CHECK_OK(NULL, ps_query_result_value(res, out, (uint32_t)i, &d))) continue;
      const oacc *x = &ans->acc[g][i];
      char what[64];
      snprintf(what, sizeof what, "group %d, aggregate %d", g, i);
      switch (agg_kinds[i]) {
        case PS_AGG_COUNT_STAR:
          check_datum(&d, 0, (i128)ans->rows[g], 0, what);
          break;
        case PS_AGG_COUNT:
          check_datum(&d, 0, (i128)x->count, 0, what);
          break;
        case PS_AGG_SUM:
          check_datum(&d, x->count == 0, x->sum, agg_scales[i], what);
          break;
        case PS_AGG_MIN:
          check_datum(&d, x->count == 0, x->min, agg_scales[i], what);
          break;
        case PS_AGG_MAX:
          check_datum(&d, x->count == 0, x->max, agg_scales[i], what);
          break;
        case PS_AGG_AVG: {
          uint32_t scale = 0;
          i128 want = x->count ? average(x->sum, x->count, agg_scales[i], &scale) : 0;
          check_datum(&d, x->count == 0, want, scale, what);
          break;
        }
      }
    }
    out++;
  }
  CHECKF(out == ps_query_result_groups(res), "%" PRIu64 " groups, expected %" PRIu64, ps_query_result_groups(res), out);
}

/* The values of the aggregates (each its own tree; the aggregates borrow them). */
typedef struct values {
  ps_value *v[N_AGGS];
} values;

static ps_value *col_value(ps_context *ctx, ps_column *c) {
  ps_value *v = NULL;
  return CHECK_OK(ctx, ps_value_column(ctx, c, &v)) ? v : NULL;
}

static ps_value *int_value(ps_context *ctx, int64_t x) {
  ps_value *v = NULL;
  return CHECK_OK(ctx, ps_value_literal(ctx, ps_lit_int(x), &v)) ? v : NULL;
}

/* x op y, taking both (freed on failure). */
static ps_value *arith(ps_context *ctx, ps_arith op, ps_value *x, ps_value *y) {
  ps_value *v = NULL;
  if (x && y && CHECK_OK(ctx, ps_value_arith(ctx, op, x, y, &v))) return v;
  ps_value_destroy(x);
  ps_value_destroy(y);
  return NULL;
}

static ps_expr *compare(ps_context *ctx, ps_column *c, ps_cmp op, int64_t x) {
  ps_expr *e = NULL;
  return CHECK_OK(ctx, ps_expr_compare(ctx, c, op, ps_lit_int(x), &e)) ? e : NULL;
}

static int values_create(ps_context *ctx, const device_table *dt, values *vs) {
  memset(vs, 0, sizeof *vs);
  ps_value *a = col_value(ctx, dt->a);
  vs->v[AGG_COUNT_A] = vs->v[AGG_SUM_A] = vs->v[AGG_AVG_A] = a;
  vs->v[AGG_SUM_AD] = arith(ctx, PS_MUL, col_value(ctx, dt->a), col_value(ctx, dt->d));
  vs->v[AGG_MIN_BA] =
      arith(ctx, PS_SUB, arith(ctx, PS_MUL, col_value(ctx, dt->blk), int_value(ctx, 100)), col_value(ctx, dt->a));
  vs->v[AGG_MAX_BA] =
      arith(ctx, PS_ADD, arith(ctx, PS_MUL, col_value(ctx, dt->blk), int_value(ctx, 100)), col_value(ctx, dt->a));
  vs->v[AGG_SUM_C] = col_value(ctx, dt->c);
  vs->v[AGG_SUM_BLK] = col_value(ctx, dt->blk);
  ps_expr *when = compare(ctx, dt->blk, PS_EQ, 8);
  ps_value *then_v = col_value(ctx, dt->a), *else_v = int_value(ctx, 0);
  if (when && then_v && else_v && CHECK_OK(ctx, ps_value_case(ctx, when, then_v, else_v, &vs->v[AGG_SUM_CASE]))) {
    when = NULL;
    then_v = else_v = NULL;
  }
  ps_expr_destroy(when);
  ps_value_destroy(then_v);
  ps_value_destroy(else_v);
  vs->v[AGG_SUM_DC] = arith(ctx, PS_MUL, col_value(ctx, dt->d), col_value(ctx, dt->c));
  vs->v[AGG_MAX_D] = col_value(ctx, dt->d);
  for (int i = 1; i < N_AGGS; i++)
    if (!vs->v[i]) return 0;
  return 1;
}

static void values_free(values *vs) {
  ps_value_destroy(vs->v[AGG_SUM_A]); /* shared by COUNT(a), SUM(a), AVG(a) */
  vs->v[AGG_COUNT_A] = vs->v[AGG_SUM_A] = vs->v[AGG_AVG_A] = NULL;
  for (int i = 0; i < N_AGGS; i++) ps_value_destroy(vs->v[i]);
}

/* WHERE of query q (NULL: none). */
static ps_expr *where_of(ps_context *ctx, const device_table *dt, int q) {
  ps_expr *e = NULL, *x = NULL, *y = NULL;
  if (q == Q_PIVOT) {
    if (!CHECK_OK(ctx, ps_expr_between(ctx, dt->blk, ps_lit_int(7), ps_lit_int(8), &x))) return NULL;
    y = compare(ctx, dt->a, PS_GE, 0);
    if (y && CHECK_OK(ctx, ps_expr_and(ctx, x, y, &e))) return e;
  } else if (q == Q_GROUPED) {
    x = compare(ctx, dt->blk, PS_EQ, 3);
    if (x && CHECK_OK(ctx, ps_expr_not(ctx, x, &e))) return e;
  }
  ps_expr_destroy(x);
  ps_expr_destroy(y);
  return NULL;
}

/* Prepares and runs a query; the run's status (PS_ERR_INTERNAL if it could not be prepared). */
static ps_status run(ps_context *ctx, const device_table *dt, uint64_t n, const ps_expr *where, int grouped,
                     const ps_agg *aggs, uint32_t n_aggs, ps_query_result **res) {
  ps_query_desc d;
  ps_query_desc_init(&d);
  d.rows = n;
  d.where = where;
  d.n_keys = grouped ? 1 : 0;
  d.keys[0] = dt->k;
  d.n_aggs = n_aggs;
  d.aggs = aggs;
  ps_query *q = NULL;
  if (!CHECK_OK(ctx, ps_query_create(ctx, &d, &q))) return PS_ERR_INTERNAL;
  ps_status st = ps_query_run(ctx, q, res);
  ps_query_destroy(q);
  return st;
}

static void run_queries(ps_context *ctx, const table *t, const device_table *dt, const char *chunks) {
  values vs;
  if (!values_create(ctx, dt, &vs)) {
    values_free(&vs);
    return;
  }
  ps_agg aggs[N_AGGS];
  for (int i = 0; i < N_AGGS; i++) {
    aggs[i].kind = agg_kinds[i];
    aggs[i].value = vs.v[i];
  }
  for (int q = 0; q < N_QUERIES; q++) {
    th_case("%s chunks: %s", chunks, query_names[q]);
    ps_expr *where = q == Q_ALL ? NULL : where_of(ctx, dt, q);
    if (q != Q_ALL && !where) continue;
    answer ans;
    closed_form(t, q, &ans);
    ps_query_result *res = NULL;
    double t0 = now_s();
    if (CHECK_OK(ctx, run(ctx, dt, t->n, where, q == Q_GROUPED, aggs, N_AGGS, &res))) {
      printf("  %s chunks, %s: %.2f s\n", chunks, query_names[q], now_s() - t0);
      check_result(res, &ans, q == Q_GROUPED);
    }
    ps_query_result_destroy(res);
    ps_expr_destroy(where);
  }
  values_free(&vs);
}

/* ---- a value that overflows past the pivot --------------------------------------- */

static int names_row(const char *msg, uint64_t r);

/* SUM(CASE WHEN blk >= 8 AND a = 43 THEN d * d * d * d ELSE 0 END): d^4 has
 * about 48 digits, so the first row of block 8 or later whose a is 43 makes
 * the run fail with PS_ERR_OVERFLOW, and the message names that row. */
static void overflow_past_pivot(ps_context *ctx, const table *t, const device_table *dt, const char *chunks) {
  uint64_t want = t->pivot;
  while (want < t->n && !(a_valid((uint32_t)(want >> t->s), (uint32_t)(want % PERIOD)) &&
                          a_code((uint32_t)(want >> t->s), (uint32_t)(want % PERIOD)) == 63))
    want++;
  th_case("%s chunks: SUM(CASE WHEN blk >= 8 AND a = 43 THEN d^4 ELSE 0 END), overflowing first at row %" PRIu64,
          chunks, want);
  if (!CHECKF(want < t->n, "no row past the pivot has a = 43")) return;
  ps_expr *x = compare(ctx, dt->blk, PS_GE, 8), *y = compare(ctx, dt->a, PS_EQ, 43), *when = NULL;
  if (x && y && CHECK_OK(ctx, ps_expr_and(ctx, x, y, &when))) x = y = NULL;
  ps_expr_destroy(x);
  ps_expr_destroy(y);
  ps_value *d4 = arith(ctx, PS_MUL, arith(ctx, PS_MUL, col_value(ctx, dt->d), col_value(ctx, dt->d)),
                       arith(ctx, PS_MUL, col_value(ctx, dt->d), col_value(ctx, dt->d)));
  ps_value *zero = int_value(ctx, 0), *v = NULL;
  if (when && d4 && zero && CHECK_OK(ctx, ps_value_case(ctx, when, d4, zero, &v))) when = NULL, d4 = zero = NULL;
  ps_expr_destroy(when);
  ps_value_destroy(d4);
  ps_value_destroy(zero);
  if (!v) return;
  ps_agg agg = {PS_AGG_SUM, v};
  ps_query_result *res = NULL;
  ps_status st = run(ctx, dt, t->n, NULL, 0, &agg, 1, &res);
  const char *msg = ps_context_last_error(ctx);
  CHECK_STATUS(ctx, st, PS_ERR_OVERFLOW);
  CHECKF(names_row(msg, want), "the message does not name row %" PRIu64 ": %s", want, msg);
  printf("  %s chunks, overflow: %s\n", chunks, msg);
  ps_query_result_destroy(res);
  ps_value_destroy(v);
}

/* ---- corrupt codes past the pivot ------------------------------------------------ */

/* The first row at or after r (before, if down) where the key is valid. */
static uint64_t valid_key_row(const table *t, uint64_t r, int down) {
  while (!k_valid((uint32_t)(r >> t->s), (uint32_t)(r % PERIOD))) r = down ? r - 1 : r + 1;
  return r;
}

/* The message names row r (and not a longer number that starts with it). */
static int names_row(const char *msg, uint64_t r) {
  char want[40];
  snprintf(want, sizeof want, "row %" PRIu64, r);
  for (const char *p = strstr(msg, want); p; p = strstr(p + 1, want))
    if (p[strlen(want)] < '0' || p[strlen(want)] > '9') return 1;
  return 0;
}

static void corrupt_codes(ps_context *ctx, const table *t, device_table *dt, const char *chunks) {
  /* k's code 3 (the dictionary has 3 entries) at a valid row of block 0, one
   * just past the pivot, and one near the end. */
  const uint64_t rows[3] = {valid_key_row(t, 100, 0), valid_key_row(t, t->pivot + 77, 0),
                            valid_key_row(t, t->n - 2, 1)};
  for (int i = 0; i < 3; i++) {
    uint8_t byte = 0;
    uint64_t at = rows[i] / 4;
    if (!CHECK_OK(ctx, ps_buffer_read(ctx, dt->bufs[COL_K], at, &byte, 1))) return;
    byte |= (uint8_t)(3u << (rows[i] % 4 * 2));
    if (!CHECK_OK(ctx, ps_buffer_write(ctx, dt->bufs[COL_K], at, &byte, 1))) return;
  }
  const uint32_t last = t->blocks - 1;
  static const struct {
    const char *name;
    int from_block; /* WHERE blk >= from_block; -1: no WHERE; -2: WHERE blk = 5 (no corrupt row) */
  } cases[] = {
      {"no WHERE", -1}, {"WHERE blk >= 7", 7}, {"WHERE blk >= the last block", MAX_BLOCKS}, {"WHERE blk = 5", -2}};
  ps_agg agg = {PS_AGG_COUNT_STAR, NULL};
  for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
    th_case("%s chunks: corrupt key codes at rows %" PRIu64 ", %" PRIu64 ", %" PRIu64 ", GROUP BY k %s", chunks,
            rows[0], rows[1], rows[2], cases[c].name);
    int from = cases[c].from_block == MAX_BLOCKS ? (int)last : cases[c].from_block;
    ps_expr *where = from == -1 ? NULL : compare(ctx, dt->blk, from == -2 ? PS_EQ : PS_GE, from == -2 ? 5 : from);
    if (from != -1 && !where) continue;
    ps_query_result *res = NULL;
    ps_status st = run(ctx, dt, t->n, where, 1, &agg, 1, &res);
    if (from == -2) {
      /* block 5 holds no corrupt row: the exact counts per key */
      if (CHECK_OK(ctx, st)) {
        uint64_t want[N_GROUPS] = {0}, g = 0;
        for (uint32_t p = 0; p < PERIOD; p++) want[k_valid(5, p) ? k_code(5, p) : 3] += t->cells[5][p];
        for (int i = 0; i < N_GROUPS; i++) {
          if (!want[i]) continue;
          ps_datum d;
          if (CHECK_OK(NULL, ps_query_result_value(res, g, 0, &d)))
            CHECKF(d.lo == want[i] && d.hi == 0, "group %d: %" PRIu64 " rows, expected %" PRIu64, i, d.lo, want[i]);
          g++;
        }
        CHECK(ps_query_result_groups(res) == g);
      }
    } else {
      uint64_t want = UINT64_MAX;
      for (int i = 0; i < 3; i++)
        if (from < 0 || (int64_t)(rows[i] >> t->s) >= from) want = rows[i] < want ? rows[i] : want;
      const char *msg = ps_context_last_error(ctx);
      CHECK_STATUS(ctx, st, PS_ERR_CORRUPT_DATA);
      CHECKF(names_row(msg, want), "the message does not name row %" PRIu64 ": %s", want, msg);
      printf("  %s chunks, corrupt codes, %s: %s\n", chunks, cases[c].name, msg);
    }
    ps_query_result_destroy(res);
    ps_expr_destroy(where);
  }
}

int main(int argc, char **argv) {
  th_init(argc, argv, "big_query");
  uint64_t n = 5000000003ull;
  const char *env = getenv("PACKSCAN_BIG_ROWS");
  if (env && *env) n = strtoull(env, NULL, 10);
  static table t;
  if (n >= 2048) table_init(&t, n);
  if (n < 2048 || n < t.pivot + 256) {
    /* the corrupt codes need rows in block 8 and past it */
    fprintf(stderr,
            "PACKSCAN_BIG_ROWS=%s: the test needs at least 2048 rows, 256 of them past block 8 (which starts "
            "at the largest 8 * 2^s <= n)\n",
            env ? env : "");
    return 1;
  }
  printf("rows=%" PRIu64 " blocks of 2^%u rows: %u; pivot (block 8) at row %" PRIu64 "\n", n, t.s, t.blocks, t.pivot);
  th_case("closed form");
  check_cells(&t);
  /* The backend's chunks, then chunks of about n/5 rows (a multiple of 32
   * that does not divide the pivot, so the pivot falls inside one). */
  const uint64_t chunking[2] = {0, (n / 5 | 31) + 1};
  for (int i = 0; i < 2; i++) {
    char chunks[40];
    if (chunking[i])
      snprintf(chunks, sizeof chunks, "%" PRIu64 "-row", chunking[i]);
    else
      snprintf(chunks, sizeof chunks, "default");
    ps_context *ctx = th_context(chunking[i]);
    device_table dt;
    double t0 = now_s();
    th_case("%s chunks: building the table", chunks);
    if (device_table_create(ctx, &t, &dt)) {
      printf("  %s chunks: table on the device in %.1f s\n", chunks, now_s() - t0);
      run_queries(ctx, &t, &dt, chunks);
      overflow_past_pivot(ctx, &t, &dt, chunks);
      corrupt_codes(ctx, &t, &dt, chunks);
    }
    device_table_free(&dt);
    ps_context_destroy(ctx);
  }
  return th_finish();
}
