/*
 * filter_edge: named edge cases with hand-written expectations (which also
 * check the oracle), each then compared bit for bit with the oracle on the
 * backend under test and on the reference backend:
 * 0/1/31/32/33/63/64/65 rows; all and none selected; all null and Kleene
 * logic; literals below the minimum, above the maximum, NaN, infinities and
 * int64/uint64 extremes against every type; widths 0 and 64; signed against
 * unsigned and float against int columns; string order; LIKE with escapes,
 * empty strings and patterns, '%', '_' on 2/3/4-byte UTF-8 and invalid bytes;
 * LIKE over the dictionary's concatenated bytes (matches across entries);
 * IN lists; sliced dictionary offsets; corrupt codes (PS_ERR_CORRUPT_DATA,
 * bitmap untouched, context usable) and corrupt codes under nulls (no error).
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static trun tr;

/* Validity from a string: '1' valid, '0' null; NULL = no bitmap. */
static uint8_t *validity_of(const char *bits, uint64_t n) {
  if (!bits) return NULL;
  uint8_t *v = th_calloc((n + 7) / 8 + 1, 1);
  for (uint64_t i = 0; i < n; i++)
    if (bits[i] == '1') v[i / 8] |= (uint8_t)(1u << (i % 8));
  return v;
}

static int add_for(ps_type type, uint32_t w, int64_t m_signed, uint64_t m_unsigned, uint32_t scale,
                   const uint64_t *codes, uint64_t n, const char *valid) {
  ps_reference ref;
  if (type >= PS_TYPE_UINT8 && type <= PS_TYPE_UINT64)
    ref.u = m_unsigned;
  else
    ref.i = m_signed;
  uint8_t *v = validity_of(valid, n);
  int i = tr_add(&tr, tcol_for(type, n, w, scale, ref, codes, v, &th.rng));
  free(v);
  return i;
}

static int add_dict(const char *const *strs, const size_t *lens, size_t d, int sorted, int use64, uint32_t w,
                    const uint64_t *codes, uint64_t n, const char *valid) {
  tstrs l = {0};
  for (size_t i = 0; i < d; i++) tstrs_push(&l, strs[i], lens ? lens[i] : strlen(strs[i]));
  uint8_t *v = validity_of(valid, n);
  int c = tr_add(&tr, tcol_dict(&l, sorted, use64, PS_TYPE_UINT32, n, w, 0, codes, v, &th.rng));
  free(v);
  tstrs_free(&l);
  return c;
}

/* The hand-written expectation: bits[i] == '1' where row i is selected. Checks
 * the oracle against it, then the library against the oracle. */
static void expect_bits(onode *t, const char *label, const char *bits) {
  int c0 = on_first_col(t);
  uint64_t n = tr.cols[c0]->n;
  CHECKF(strlen(bits) == n, "%s: test bug: %zu expected bits for %llu rows", label, strlen(bits),
         (unsigned long long)n);
  for (uint64_t i = 0; i < n && i < strlen(bits); i++) {
    int sel = oracle_row(tr.cols, t, i) == K_TRUE;
    if (!CHECKF(sel == (bits[i] == '1'), "%s: the ORACLE disagrees with the hand-written expectation at row %llu", label,
                (unsigned long long)i)) {
      tr_print_case(&tr, t);
      break;
    }
  }
  tr_check(&tr, t, label);
  on_free(t);
}

static void expect_count(onode *t, const char *label, uint64_t count) {
  int c0 = on_first_col(t);
  uint64_t n = tr.cols[c0]->n;
  uint8_t *bm = th_calloc((n + 7) / 8 + 1, 1);
  uint64_t got = oracle_filter(tr.cols, t, n, bm);
  free(bm);
  CHECKF(got == count, "%s: the ORACLE counts %llu, hand-written expectation %llu", label, (unsigned long long)got,
         (unsigned long long)count);
  tr_check(&tr, t, label);
  on_free(t);
}

static uint64_t *seq_codes(uint64_t n, uint64_t mod) {
  uint64_t *c = th_calloc(n ? n : 1, sizeof *c);
  for (uint64_t i = 0; i < n; i++) c[i] = mod ? i % mod : 0;
  return c;
}

/* ---- row counts, all / none selected ---------------------------------------------------- */

static void row_counts(void) {
  static const uint64_t ns[] = {0, 1, 7, 8, 9, 31, 32, 33, 63, 64, 65, 95, 96, 97, 1000};
  for (size_t k = 0; k < sizeof ns / sizeof ns[0]; k++) {
    uint64_t n = ns[k];
    th_case("n=%llu", (unsigned long long)n);
    uint64_t *codes = seq_codes(n, 100);
    char *valid = th_calloc(n + 1, 1);
    for (uint64_t i = 0; i < n; i++) valid[i] = i % 3 == 2 ? '0' : '1';
    int a = add_for(PS_TYPE_INT32, 7, -5, 0, 0, codes, n, NULL);
    int b = add_for(PS_TYPE_INT32, 7, -5, 0, 0, codes, n, valid);
    if (a < 0 || b < 0) break;
    uint64_t nonnull = 0, small = 0, small_nn = 0;
    for (uint64_t i = 0; i < n; i++) {
      nonnull += valid[i] == '1';
      small += codes[i] < 3;
      small_nn += codes[i] < 3 && valid[i] == '1';
    }
    expect_count(on_cmp(a, PS_GE, ps_lit_int(-5)), "all selected (x >= M)", n);
    expect_count(on_cmp(a, PS_LT, ps_lit_int(-5)), "none selected (x < M)", 0);
    expect_count(on_cmp(a, PS_LE, ps_lit_int(94)), "all selected (x <= max)", n);
    expect_count(on_cmp(a, PS_GT, ps_lit_int(94)), "none selected (x > max)", 0);
    expect_count(on_cmp(a, PS_LT, ps_lit_int(-2)), "x < M + 3", small);
    expect_count(on_cmp(b, PS_GE, ps_lit_int(-5)), "nullable: x >= M", nonnull);
    expect_count(on_cmp(b, PS_LT, ps_lit_int(-2)), "nullable: x < M + 3", small_nn);
    expect_count(on_not(on_cmp(b, PS_LT, ps_lit_int(-2))), "nullable: NOT(x < M + 3)", nonnull - small_nn);
    expect_count(on_isnull(b, 0), "IS NULL", n - nonnull);
    expect_count(on_isnull(b, 1), "IS NOT NULL", nonnull);
    expect_count(on_isnull(a, 0), "IS NULL without a bitmap", 0);
    expect_count(on_or(on_cmp(b, PS_LT, ps_lit_int(-2)), on_not(on_cmp(b, PS_LT, ps_lit_int(-2)))),
                 "x OR NOT x (nulls stay unknown)", nonnull);
    expect_count(on_cmpcol(a, PS_EQ, b), "column == itself with nulls", nonnull);
    free(codes);
    free(valid);
    tr_clear(&tr);
  }
  th_case("%s", "");
}

/* ---- all null and Kleene logic ------------------------------------------------------- */

static void all_null(void) {
  th_case("all null");
  enum { N = 100 };
  uint64_t codes[N];
  char valid[N + 1];
  for (int i = 0; i < N; i++) {
    codes[i] = (uint64_t)i * 7919u; /* garbage under nulls, beyond int16 values */
    valid[i] = '0';
  }
  valid[N] = 0;
  int a = add_for(PS_TYPE_INT16, 20, 0, 0, 0, codes, N, valid);
  /* a dictionary column whose null rows hold codes past its end: not corrupt */
  static const char *const strs[] = {"a", "b"};
  int s = add_dict(strs, NULL, 2, 1, 0, 20, codes, N, valid);
  if (a < 0 || s < 0) return;
  expect_count(on_cmp(a, PS_EQ, ps_lit_int(1)), "== on all null", 0);
  expect_count(on_cmp(a, PS_NE, ps_lit_int(1)), "!= on all null", 0);
  expect_count(on_cmp(a, PS_NE, ps_lit_float(NAN)), "!= NaN on all null", 0);
  expect_count(on_isnull(a, 0), "IS NULL on all null", N);
  expect_count(on_isnull(a, 1), "IS NOT NULL on all null", 0);
  expect_count(on_not(on_cmp(a, PS_EQ, ps_lit_int(1))), "NOT(UNKNOWN)", 0);
  expect_count(on_or(on_cmp(a, PS_EQ, ps_lit_int(1)), on_isnull(a, 0)), "UNKNOWN OR TRUE", N);
  expect_count(on_and(on_cmp(a, PS_EQ, ps_lit_int(1)), on_isnull(a, 1)), "UNKNOWN AND FALSE", 0);
  expect_count(on_not(on_and(on_cmp(a, PS_EQ, ps_lit_int(1)), on_isnull(a, 1))), "NOT(UNKNOWN AND FALSE)", N);
  expect_count(on_not(on_or(on_cmp(a, PS_EQ, ps_lit_int(1)), on_isnull(a, 1))), "NOT(UNKNOWN OR FALSE)", 0);
  expect_count(on_and(on_cmp(a, PS_EQ, ps_lit_int(1)), on_isnull(a, 0)), "UNKNOWN AND TRUE", 0);
  expect_count(on_in(a, NULL, 0), "IN () on all null", 0);
  expect_count(on_not(on_in(a, NULL, 0)), "NOT IN () on all null", 0);
  expect_count(on_between(a, ps_lit_int(INT64_MIN), ps_lit_int(INT64_MAX)), "BETWEEN everything on all null", 0);
  expect_count(on_cmp(s, PS_EQ, ps_lit_str("a", 1)), "dict == on all null (codes past the end)", 0);
  expect_count(on_like(s, "%", 1, -1, 0), "LIKE '%' on all null", 0);
  expect_count(on_like(s, "%", 1, -1, 1), "NOT LIKE '%' on all null", 0);
  expect_count(on_isnull(s, 0), "dict IS NULL on all null", N);
  expect_count(on_cmpcol(s, PS_EQ, s), "dict == dict on all null", 0);
  tr_clear(&tr);
  th_case("%s", "");
}

/* ---- literals at and past the ends ----------------------------------------------------- */

static void literal_extremes(void) {
  th_case("uint8 10..20 against literals outside");
  uint64_t codes[11];
  for (int i = 0; i < 11; i++) codes[i] = (uint64_t)i;
  int u8 = add_for(PS_TYPE_UINT8, 4, 0, 10, 0, codes, 11, NULL);
  if (u8 < 0) return;
  const struct {
    ps_literal lit;
    const char *name;
    uint64_t lt, le, eq, ge, gt; /* counts */
  } cases[] = {
      {ps_lit_int(5), "5 (below min)", 0, 0, 0, 11, 11},
      {ps_lit_int(25), "25 (above max)", 11, 11, 0, 0, 0},
      {ps_lit_int(-1), "int -1", 0, 0, 0, 11, 11},
      {ps_lit_int(INT64_MIN), "INT64_MIN", 0, 0, 0, 11, 11},
      {ps_lit_int(INT64_MAX), "INT64_MAX", 11, 11, 0, 0, 0},
      {ps_lit_uint(UINT64_MAX), "UINT64_MAX", 11, 11, 0, 0, 0},
      {ps_lit_uint(256), "256 (above uint8)", 11, 11, 0, 0, 0},
      {ps_lit_int(10), "10 (min)", 0, 1, 1, 11, 10},
      {ps_lit_int(20), "20 (max)", 10, 11, 1, 1, 0},
      {ps_lit_float(15.5), "15.5", 6, 6, 0, 5, 5},
      {ps_lit_float(15.0), "15.0", 5, 6, 1, 6, 5},
      {ps_lit_float(9.999), "9.999", 0, 0, 0, 11, 11},
      {ps_lit_float(1e300), "1e300", 11, 11, 0, 0, 0},
      {ps_lit_float(-1e300), "-1e300", 0, 0, 0, 11, 11},
      {ps_lit_float(INFINITY), "+inf", 11, 11, 0, 0, 0},
      {ps_lit_float(-INFINITY), "-inf", 0, 0, 0, 11, 11},
      {ps_lit_float(NAN), "NaN", 0, 0, 0, 0, 0},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    char label[128];
    snprintf(label, sizeof label, "uint8 10..20 vs %s", cases[k].name);
    expect_count(on_cmp(u8, PS_LT, cases[k].lit), label, cases[k].lt);
    expect_count(on_cmp(u8, PS_LE, cases[k].lit), label, cases[k].le);
    expect_count(on_cmp(u8, PS_EQ, cases[k].lit), label, cases[k].eq);
    expect_count(on_cmp(u8, PS_NE, cases[k].lit), label, 11 - cases[k].eq);
    expect_count(on_cmp(u8, PS_GE, cases[k].lit), label, cases[k].ge);
    expect_count(on_cmp(u8, PS_GT, cases[k].lit), label, cases[k].gt);
  }
  expect_count(on_between(u8, ps_lit_int(12), ps_lit_int(14)), "BETWEEN 12 AND 14", 3);
  expect_count(on_between(u8, ps_lit_int(14), ps_lit_int(12)), "BETWEEN 14 AND 12 (empty)", 0);
  expect_count(on_between(u8, ps_lit_int(-100), ps_lit_uint(UINT64_MAX)), "BETWEEN -100 AND UINT64_MAX", 11);
  expect_count(on_between(u8, ps_lit_float(NAN), ps_lit_int(100)), "BETWEEN NaN AND 100", 0);
  expect_count(on_between(u8, ps_lit_float(11.5), ps_lit_float(13.5)), "BETWEEN 11.5 AND 13.5", 2);
  tr_clear(&tr);

  /* width 64 at the ends of int64 and uint64 */
  th_case("int64 / uint64 at width 64");
  uint64_t ends[4] = {0, 1, UINT64_MAX - 1, UINT64_MAX};
  int i64 = add_for(PS_TYPE_INT64, 64, INT64_MIN, 0, 0, ends, 4, NULL); /* MIN, MIN+1, MAX-1, MAX */
  int u64 = add_for(PS_TYPE_UINT64, 64, 0, 0, 0, ends, 4, NULL);         /* 0, 1, MAX-1, MAX */
  if (i64 < 0 || u64 < 0) return;
  expect_bits(on_cmp(i64, PS_EQ, ps_lit_int(INT64_MIN)), "int64 == INT64_MIN", "1000");
  expect_bits(on_cmp(i64, PS_EQ, ps_lit_int(INT64_MAX)), "int64 == INT64_MAX", "0001");
  expect_bits(on_cmp(i64, PS_LT, ps_lit_uint(UINT64_MAX)), "int64 < UINT64_MAX", "1111");
  expect_bits(on_cmp(i64, PS_GT, ps_lit_uint((uint64_t)INT64_MAX)), "int64 > (uint)INT64_MAX", "0000");
  expect_bits(on_cmp(i64, PS_GE, ps_lit_uint((uint64_t)INT64_MAX)), "int64 >= (uint)INT64_MAX", "0001");
  expect_bits(on_cmp(i64, PS_LT, ps_lit_int(0)), "int64 < 0", "1100");
  expect_bits(on_cmp(i64, PS_LT, ps_lit_float(-0x1p63)), "int64 < -2^63 (float)", "0000");
  expect_bits(on_cmp(i64, PS_LE, ps_lit_float(-0x1p63)), "int64 <= -2^63 (float)", "1000");
  /* integers compare with float literals by exact value (2^63 > INT64_MAX) */
  expect_bits(on_cmp(i64, PS_EQ, ps_lit_float(0x1p63)), "int64 == 2^63 (float)", "0000");
  expect_bits(on_cmp(i64, PS_LT, ps_lit_float(0x1p63)), "int64 < 2^63 (float)", "1111");
  expect_bits(on_cmp(u64, PS_EQ, ps_lit_uint(UINT64_MAX)), "uint64 == UINT64_MAX", "0001");
  expect_bits(on_cmp(u64, PS_EQ, ps_lit_int(-1)), "uint64 == -1 (no wrap)", "0000");
  expect_bits(on_cmp(u64, PS_GT, ps_lit_int(-1)), "uint64 > -1", "1111");
  expect_bits(on_cmp(u64, PS_GT, ps_lit_int(INT64_MAX)), "uint64 > INT64_MAX", "0011");
  expect_bits(on_cmp(u64, PS_GE, ps_lit_float(0x1p64)), "uint64 >= 2^64 (float)", "0000");
  expect_bits(on_cmp(u64, PS_LT, ps_lit_float(0x1p64)), "uint64 < 2^64 (float)", "1111");
  expect_bits(on_cmp(u64, PS_LT, ps_lit_float(1.5)), "uint64 < 1.5", "1100");
  expect_bits(on_cmpcol(i64, PS_LT, u64), "int64 < uint64 by value", "1111");
  expect_bits(on_cmpcol(i64, PS_EQ, u64), "int64 == uint64 by value", "0000");
  ps_literal ends_list[3] = {ps_lit_int(INT64_MIN), ps_lit_uint(UINT64_MAX), ps_lit_int(-1)};
  expect_bits(on_in(i64, ends_list, 3), "int64 IN (INT64_MIN, UINT64_MAX, -1)", "1000");
  expect_bits(on_in(u64, ends_list, 3), "uint64 IN (INT64_MIN, UINT64_MAX, -1)", "0001");
  tr_clear(&tr);

  /* each narrow type against its own ends and one past them */
  static const struct {
    ps_type t;
    int64_t lo;
    uint64_t hi;
  } types[] = {{PS_TYPE_INT8, INT8_MIN, INT8_MAX},    {PS_TYPE_INT16, INT16_MIN, INT16_MAX},
               {PS_TYPE_INT32, INT32_MIN, INT32_MAX}, {PS_TYPE_UINT8, 0, UINT8_MAX},
               {PS_TYPE_UINT16, 0, UINT16_MAX},       {PS_TYPE_UINT32, 0, UINT32_MAX}};
  for (size_t k = 0; k < sizeof types / sizeof types[0]; k++) {
    th_case("%s at its ends", ps_type_name(types[k].t));
    uint64_t span = types[k].hi - (uint64_t)types[k].lo;
    uint64_t c2[2] = {0, span};
    int col = add_for(types[k].t, 64, types[k].lo, (uint64_t)types[k].lo, 0, c2, 2, NULL);
    if (col < 0) return;
    expect_bits(on_cmp(col, PS_EQ, ps_lit_int(types[k].lo)), "== min", "10");
    expect_bits(on_cmp(col, PS_EQ, ps_lit_uint(types[k].hi)), "== max", "01");
    expect_bits(on_cmp(col, PS_LT, ps_lit_int(types[k].lo - 1)), "< min-1", "00");
    expect_bits(on_cmp(col, PS_GT, ps_lit_int(types[k].lo - 1)), "> min-1", "11");
    expect_bits(on_cmp(col, PS_GT, ps_lit_uint(types[k].hi + 1)), "> max+1", "00");
    expect_bits(on_cmp(col, PS_NE, ps_lit_uint(types[k].hi + 1)), "!= max+1", "11");
    expect_bits(on_cmp(col, PS_LE, ps_lit_int(INT64_MIN)), "<= INT64_MIN", "00");
    expect_bits(on_cmp(col, PS_LT, ps_lit_uint(UINT64_MAX)), "< UINT64_MAX", "11");
    expect_bits(on_cmp(col, PS_NE, ps_lit_float(NAN)), "!= NaN", "11");
    expect_bits(on_cmp(col, PS_GE, ps_lit_float(NAN)), ">= NaN", "00");
    tr_clear(&tr);
  }
  th_case("%s", "");
}

/* ---- floats ------------------------------------------------------------------------ */

static void floats(void) {
  th_case("float64 scale 2");
  /* -1.50, 0.00, 0.01, 2.25 with M = -150 */
  uint64_t codes[4] = {0, 150, 151, 375};
  int f = add_for(PS_TYPE_FLOAT64, 9, -150, 0, 2, codes, 4, NULL);
  if (f < 0) return;
  expect_bits(on_cmp(f, PS_EQ, ps_lit_float(0.01)), "== 0.01", "0010");
  expect_bits(on_cmp(f, PS_LT, ps_lit_float(0.01)), "< 0.01", "1100");
  expect_bits(on_cmp(f, PS_GT, ps_lit_float(0.005)), "> 0.005", "0011");
  expect_bits(on_cmp(f, PS_GT, ps_lit_float(0.01)), "> 0.01 (a value)", "0001");
  expect_bits(on_cmp(f, PS_GE, ps_lit_float(0.01)), ">= 0.01 (a value)", "0011");
  expect_bits(on_cmp(f, PS_LE, ps_lit_float(0.01)), "<= 0.01 (a value)", "1110");
  expect_bits(on_cmp(f, PS_NE, ps_lit_float(0.01)), "!= 0.01 (a value)", "1101");
  expect_bits(on_cmp(f, PS_GT, ps_lit_float(-1.5)), "> -1.5 (the minimum)", "0111");
  expect_bits(on_cmp(f, PS_LT, ps_lit_float(2.25)), "< 2.25 (the maximum)", "1110");
  expect_bits(on_cmp(f, PS_EQ, ps_lit_int(0)), "== int 0", "0100");
  expect_bits(on_cmp(f, PS_GE, ps_lit_int(-1)), ">= int -1", "0111");
  expect_bits(on_cmp(f, PS_LT, ps_lit_float(INFINITY)), "< +inf", "1111");
  expect_bits(on_cmp(f, PS_GT, ps_lit_float(-INFINITY)), "> -inf", "1111");
  expect_bits(on_cmp(f, PS_EQ, ps_lit_float(INFINITY)), "== +inf", "0000");
  expect_bits(on_cmp(f, PS_EQ, ps_lit_float(NAN)), "== NaN", "0000");
  expect_bits(on_cmp(f, PS_NE, ps_lit_float(NAN)), "!= NaN", "1111");
  expect_bits(on_cmp(f, PS_EQ, ps_lit_float(-0.0)), "== -0.0", "0100");
  expect_bits(on_cmp(f, PS_LE, ps_lit_float(nextafter(2.25, 0))), "<= nextbelow(2.25)", "1110");
  expect_bits(on_cmp(f, PS_GE, ps_lit_float(nextafter(-1.5, 0))), ">= nextabove(-1.5)", "0111");
  expect_bits(on_between(f, ps_lit_float(-1.5), ps_lit_float(0.01)), "BETWEEN -1.5 AND 0.01", "1110");
  ps_literal l3[3] = {ps_lit_float(2.25), ps_lit_float(NAN), ps_lit_int(0)};
  expect_bits(on_in(f, l3, 3), "IN (2.25, NaN, 0)", "0101");
  tr_clear(&tr);

  /* float32 decodes through float: 0.1f != 0.1 */
  th_case("float32 0.1");
  uint64_t one[3] = {1, 2, 0};
  int f32 = add_for(PS_TYPE_FLOAT32, 2, 0, 0, 1, one, 3, NULL); /* 0.1f, 0.2f, 0 */
  int f64 = add_for(PS_TYPE_FLOAT64, 2, 0, 0, 1, one, 3, NULL); /* 0.1, 0.2, 0 */
  if (f32 < 0 || f64 < 0) return;
  expect_bits(on_cmp(f32, PS_EQ, ps_lit_float(0.1)), "float32 == 0.1", "000");
  expect_bits(on_cmp(f32, PS_EQ, ps_lit_float((double)0.1f)), "float32 == (double)0.1f", "100");
  expect_bits(on_cmp(f32, PS_GT, ps_lit_float(0.1)), "float32 > 0.1", "110");
  expect_bits(on_cmp(f64, PS_EQ, ps_lit_float(0.1)), "float64 == 0.1", "100");
  expect_bits(on_cmpcol(f32, PS_GT, f64), "float32 0.1f, 0.2f > float64 0.1, 0.2", "110");
  expect_bits(on_cmpcol(f32, PS_EQ, f64), "float32 == float64", "001");
  tr_clear(&tr);

  /* float against int columns compare as doubles (ps_program.h MODE_DOUBLE) */
  th_case("float vs int columns");
  /* float64 scale 1, M = -5: codes 10, 15, 0, 25 -> 0.5, 1.0, -0.5, 2.0 */
  uint64_t fc[4] = {10, 15, 0, 25};
  uint64_t ic[4] = {0, 1, 0, 3};
  int fl = add_for(PS_TYPE_FLOAT64, 5, -5, 0, 1, fc, 4, NULL);
  int in = add_for(PS_TYPE_INT32, 2, 0, 0, 0, ic, 4, NULL);
  /* int64 INT64_MAX against float64 holding INT64_MAX (decodes to 2^63): equal as doubles */
  uint64_t big[1] = {(uint64_t)INT64_MAX};
  int ibig = add_for(PS_TYPE_INT64, 63, 0, 0, 0, big, 1, NULL);
  int fbig = add_for(PS_TYPE_FLOAT64, 63, 0, 0, 0, big, 1, NULL);
  if (fl < 0 || in < 0 || ibig < 0 || fbig < 0) return;
  expect_bits(on_cmpcol(fl, PS_GT, in), "float > int", "1000");
  expect_bits(on_cmpcol(fl, PS_EQ, in), "float == int", "0100");
  expect_bits(on_cmpcol(fl, PS_LT, in), "float < int", "0011");
  expect_bits(on_cmpcol(in, PS_GE, fl), "int >= float", "0111");
  expect_bits(on_cmpcol(ibig, PS_EQ, fbig), "int64 INT64_MAX == float64 2^63 (as doubles)", "1");
  tr_clear(&tr);
  th_case("%s", "");
}

/* ---- widths 0 and 64 ------------------------------------------------------------------- */

static void widths(void) {
  th_case("width 0");
  uint64_t zeros[33] = {0};
  char valid[34];
  for (int i = 0; i < 33; i++) valid[i] = i == 5 || i == 32 ? '0' : '1';
  valid[33] = 0;
  int z = add_for(PS_TYPE_INT64, 0, 42, 0, 0, zeros, 33, valid);
  int zu = add_for(PS_TYPE_UINT16, 0, 0, 65535, 0, zeros, 33, NULL);
  int zf = add_for(PS_TYPE_FLOAT32, 0, 25, 0, 1, zeros, 33, NULL); /* 2.5 */
  static const char *const one_str[] = {"x", "y"};
  int zs = add_dict(one_str, NULL, 2, 1, 1, 0, zeros, 33, valid); /* all 'x' */
  if (z < 0 || zu < 0 || zf < 0 || zs < 0) return;
  expect_count(on_cmp(z, PS_EQ, ps_lit_int(42)), "width 0: == M", 31);
  expect_count(on_cmp(z, PS_NE, ps_lit_int(42)), "width 0: != M", 0);
  expect_count(on_cmp(z, PS_GT, ps_lit_int(41)), "width 0: > M-1", 31);
  expect_count(on_cmp(zu, PS_EQ, ps_lit_uint(65535)), "width 0 uint16 == 65535", 33);
  expect_count(on_cmp(zf, PS_EQ, ps_lit_float(2.5)), "width 0 float32 == 2.5", 33);
  expect_count(on_cmp(zs, PS_EQ, ps_lit_str("x", 1)), "width 0 dict == 'x'", 31);
  expect_count(on_like(zs, "y", 1, -1, 1), "width 0 dict NOT LIKE 'y'", 31);
  expect_count(on_cmpcol(z, PS_LT, zu), "width 0: 42 < 65535", 31);
  tr_clear(&tr);

  /* Two 64-bit columns compared, next to more wide leaves: the CUDA per-word
   * kernel would stage 66.5 KB per block here (more than the default 48 KB;
   * it takes the per-row kernel instead). A random run on the H200 hit that
   * path once and failed to launch. */
  th_case("width 64 vs 64");
  enum { NW = 1000 };
  uint64_t *a = th_calloc(NW, sizeof *a), *b = th_calloc(NW, sizeof *b), *c = th_calloc(NW, sizeof *c);
  uint64_t lt = 0, both = 0;
  for (int i = 0; i < NW; i++) {
    a[i] = th_u64(&th.rng);
    b[i] = i % 3 ? th_u64(&th.rng) : a[i];
    c[i] = th_below(&th.rng, (uint64_t)1 << 48);
    lt += a[i] < b[i];
    both += a[i] < b[i] && c[i] < ((uint64_t)1 << 47);
  }
  int ca = add_for(PS_TYPE_UINT64, 64, 0, 0, 0, a, NW, NULL);
  int cb = add_for(PS_TYPE_UINT64, 64, 0, 0, 0, b, NW, NULL);
  int cc = add_for(PS_TYPE_UINT64, 48, 0, 0, 0, c, NW, NULL);
  free(a);
  free(b);
  free(c);
  if (ca < 0 || cb < 0 || cc < 0) return;
  expect_count(on_cmpcol(ca, PS_LT, cb), "w64 < w64", lt);
  expect_count(on_and(on_cmpcol(ca, PS_LT, cb), on_cmp(cc, PS_LT, ps_lit_uint((uint64_t)1 << 47))),
               "w64 < w64 AND w48 < 2^47", both);
  tr_clear(&tr);
  th_case("%s", "");
}

/* ---- column against column at extreme references ------------------------------------------ */

/* Integer column pairs whose references lie at the ends of their types (the
 * difference of two references can pass 2^63 either way), at widths up to
 * 31 bits: the OpenCL words kernel compares such codes in 32 bits against
 * the references' difference, clamped. Every pair, each with one operator,
 * against the oracle. */
static void extreme_reference_pairs(void) {
  th_case("column vs column, extreme references");
  enum { N = 1000 };
  static const struct {
    ps_type type;
    uint32_t w;
    int64_t m;
    uint64_t mu;
  } cols[] = {
      {PS_TYPE_INT64, 8, INT64_MIN, 0},
      {PS_TYPE_INT64, 8, INT64_MAX - 255, 0},
      {PS_TYPE_UINT64, 8, 0, UINT64_MAX - 255},
      {PS_TYPE_INT8, 8, -128, 0},
      {PS_TYPE_UINT32, 16, 0, 7},
      {PS_TYPE_INT64, 17, 0, 0},
      {PS_TYPE_INT32, 31, INT32_MIN, 0},
      {PS_TYPE_UINT64, 31, 0, (uint64_t)1 << 63},
      {PS_TYPE_INT64, 12, -3000, 0},
      {PS_TYPE_INT16, 12, -2000, 0},
      {PS_TYPE_INT64, 31, INT64_MAX - 0x7fffffff, 0},
      {PS_TYPE_UINT64, 1, 0, 0},
  };
  enum { NC = sizeof cols / sizeof cols[0] };
  static const ps_cmp ops[] = {PS_EQ, PS_NE, PS_LT, PS_LE, PS_GT, PS_GE};
  char valid[N + 1];
  int idx[NC];
  uint64_t *codes = th_calloc(N, sizeof *codes);
  for (int c = 0; c < NC; c++) {
    /* codes near both ends of the width, so that equal values meet */
    for (int i = 0; i < N; i++) {
      uint64_t top = ((uint64_t)1 << cols[c].w) - 1;
      uint64_t r = th_below(&th.rng, 64);
      codes[i] = i % 4 == 0 ? r : i % 4 == 1 ? top - r : th_below(&th.rng, top + 1);
      valid[i] = th_below(&th.rng, 8) ? '1' : '0';
    }
    valid[N] = '\0';
    idx[c] = add_for(cols[c].type, cols[c].w, cols[c].m, cols[c].mu, 0, codes, N, valid);
  }
  free(codes);
  for (int c = 0; c < NC; c++)
    if (idx[c] < 0) return;
  char label[96];
  for (int a = 0; a < NC; a++)
    for (int b = 0; b < NC; b++) {
      ps_cmp op = ops[(a + b) % 6];
      snprintf(label, sizeof label, "column %d <op %d> column %d", a, (int)op, b);
      onode *t = on_cmpcol(idx[a], op, idx[b]);
      tr_check(&tr, t, label);
      on_free(t);
    }
  tr_clear(&tr);
  th_case("%s", "");
}

/* ---- strings ------------------------------------------------------------------------- */

static void string_order(void) {
  static const char *const sorted[] = {"", "a", "ab", "b", "\xc3\xa9", "\xff"};
  static const char *const unsorted[] = {"\xff", "b", "", "\xc3\xa9", "ab", "a"};
  /* rows: "", a, ab, b, é, \xff, null */
  uint64_t sc[7] = {0, 1, 2, 3, 4, 5, 0};
  uint64_t uc[7] = {2, 5, 4, 1, 3, 0, 1};
  const char *valid = "1111110";
  for (int v = 0; v < 4; v++) {
    th_case("string order, %s dictionary, %s offsets", v & 1 ? "unsorted" : "sorted", v & 2 ? "64-bit" : "32-bit");
    int s = v & 1 ? add_dict(unsorted, NULL, 6, 0, v & 2, 3, uc, 7, valid)
                  : add_dict(sorted, NULL, 6, 1, v & 2, 3, sc, 7, valid);
    if (s < 0) return;
    expect_bits(on_cmp(s, PS_LT, ps_lit_str("ab", 2)), "< 'ab'", "1100000");
    expect_bits(on_cmp(s, PS_LE, ps_lit_str("ab", 2)), "<= 'ab'", "1110000");
    expect_bits(on_cmp(s, PS_GT, ps_lit_str("a", 1)), "> 'a'", "0011110");
    expect_bits(on_cmp(s, PS_GE, ps_lit_str("", 0)), ">= ''", "1111110");
    expect_bits(on_cmp(s, PS_LT, ps_lit_str("", 0)), "< ''", "0000000");
    expect_bits(on_cmp(s, PS_EQ, ps_lit_str("", 0)), "== ''", "1000000");
    expect_bits(on_cmp(s, PS_NE, ps_lit_str("", 0)), "!= ''", "0111110");
    expect_bits(on_cmp(s, PS_LE, ps_lit_str("\x7f", 1)), "<= '\\x7f'", "1111000");
    expect_bits(on_cmp(s, PS_GT, ps_lit_str("\xc3", 1)), "> '\\xc3' (prefix of e-acute)", "0000110");
    expect_bits(on_cmp(s, PS_EQ, ps_lit_str("a\0", 2)), "== 'a\\0'", "0000000");
    expect_bits(on_cmp(s, PS_GT, ps_lit_str("a\0", 2)), "> 'a\\0'", "0011110");
    expect_bits(on_cmp(s, PS_EQ, ps_lit_str("zz", 2)), "== 'zz' (absent)", "0000000");
    expect_bits(on_between(s, ps_lit_str("a", 1), ps_lit_str("b", 1)), "BETWEEN 'a' AND 'b'", "0111000");
    ps_literal l[4] = {ps_lit_str("a", 1), ps_lit_str("\xff", 1), ps_lit_str("zz", 2), ps_lit_str("a", 1)};
    expect_bits(on_in(s, l, 4), "IN ('a', '\\xff', 'zz', 'a')", "0100010");
    expect_bits(on_not(on_in(s, l, 4)), "NOT IN (...)", "1011100");
    expect_bits(on_in(s, NULL, 0), "IN ()", "0000000");
    expect_bits(on_not(on_in(s, NULL, 0)), "NOT IN ()", "1111110");
    tr_clear(&tr);
  }
  th_case("%s", "");
}

static void dict_vs_dict(void) {
  th_case("dictionary against dictionary");
  static const char *const d1[] = {"a", "b", "c"};                   /* sorted */
  static const char *const d2[] = {"c", "", "b", "zz", "a", "\xff"}; /* unsorted, other strings */
  uint64_t c1[6] = {0, 1, 2, 0, 2, 1};
  uint64_t c2[6] = {4, 3, 0, 1, 5, 2};
  /* rows: a~a, b~zz, c~c, a~'', c~\xff, b(null)~b */
  int a = add_dict(d1, NULL, 3, 1, 0, 2, c1, 6, "111110");
  int b = add_dict(d2, NULL, 6, 0, 1, 3, c2, 6, NULL);
  int a2 = add_dict(d1, NULL, 3, 1, 1, 2, c1, 6, NULL); /* same dictionary, another column */
  if (a < 0 || b < 0 || a2 < 0) return;
  expect_bits(on_cmpcol(a, PS_EQ, b), "==", "101000");
  expect_bits(on_cmpcol(a, PS_NE, b), "!=", "010110");
  expect_bits(on_cmpcol(a, PS_LT, b), "<", "010010");
  expect_bits(on_cmpcol(a, PS_GE, b), ">=", "101100");
  expect_bits(on_cmpcol(b, PS_GT, a), "> (swapped)", "010010");
  expect_bits(on_cmpcol(a, PS_EQ, a2), "same dictionary ==", "111110");
  expect_bits(on_cmpcol(a2, PS_LT, a), "same dictionary <", "000000");
  tr_clear(&tr);
  th_case("%s", "");
}

/* ---- LIKE ------------------------------------------------------------------------------- */

static void like(void) {
  static const char *const strs[] = {
      "",             /* 0 */
      "a%b",          /* 1 */
      "axb",          /* 2 */
      "a_b",          /* 3 */
      "a\\b",         /* 4 */
      "\xc3\xa9",     /* 5: 2-byte e-acute */
      "\xe2\x82\xac", /* 6: 3-byte euro */
      "\xf0\x9d\x84\x9e", /* 7: 4-byte G clef */
      "\xff",         /* 8: invalid byte */
      "\xff\xfe",     /* 9: two invalid bytes */
      "\xe2\x82",     /* 10: truncated 3-byte sequence = 2 invalid bytes */
      "\xc0\x80",     /* 11: overlong NUL = 2 invalid bytes */
      "\xed\xa0\x80", /* 12: UTF-16 surrogate = 3 invalid bytes */
      "A%B",          /* 13 */
      "a!b",          /* 14 */
      "ab",           /* 15 */
      "%",            /* 16 */
      "_",            /* 17 */
  };
  enum { D = 18, N = 20 };
  uint64_t codes[N];
  for (int i = 0; i < D; i++) codes[i] = (uint64_t)i;
  codes[18] = 0;
  codes[19] = 99; /* past the dictionary, under a null: not corrupt */
  const char *valid = "11111111111111111100";
  static const struct {
    const char *pat;
    int escape;
    const char *bits; /* rows 0..19 */
  } cases[] = {
      {"a\\%b", '\\', "01000000000000000000"},
      {"a%b", -1, "01111000000000110000"},
      {"a_b", -1, "01111000000000100000"},
      {"a\\_b", '\\', "00010000000000000000"},
      {"a\\\\b", '\\', "00001000000000000000"},
      {"a!%b", '!', "01000000000000000000"},
      {"a!!b", '!', "00000000000000100000"},
      {"a!_b", '!', "00010000000000000000"},
      {"", -1, "10000000000000000000"},
      {"%", -1, "11111111111111111100"},
      {"%%", -1, "11111111111111111100"},
      {"_", -1, "00000111100000001100"},
      {"__", -1, "00000000011100010000"},
      {"___", -1, "01111000000011100000"},
      {"_%", -1, "01111111111111111100"},
      {"%_", -1, "01111111111111111100"},
      {"\\%", '\\', "00000000000000001000"},
      {"\\_", '\\', "00000000000000000100"},
      {"%\\%%", '\\', "01000000000001001000"},
      {"A%", -1, "00000000000001000000"},
      {"a%", -1, "01111000000000110000"},
      {"%\xc3\xa9", -1, "00000100000000000000"},
      {"\xe2\x82\xac", -1, "00000010000000000000"},
      {"%\xf0\x9d\x84\x9e%", -1, "00000001000000000000"},
      {"\xff%", -1, "00000000110000000000"},
      {"\xff_", -1, "00000000010000000000"},
      {"%b", -1, "01111000000000110000"},
      {"a\\b", -1, "00001000000000000000"}, /* no escape: backslash is a plain byte */
      {"a!__", '!', "00010000000000000000"}, /* a, literal _, one character */
  };
  for (int v = 0; v < 2; v++) {
    th_case("LIKE, %s offsets", v ? "64-bit" : "32-bit");
    int s = add_dict(strs, NULL, D, 0, v, 7, codes, N, valid);
    if (s < 0) return;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
      char label[160];
      snprintf(label, sizeof label, "LIKE pattern #%zu", k);
      expect_bits(on_like(s, cases[k].pat, strlen(cases[k].pat), cases[k].escape, 0), label, cases[k].bits);
      /* NOT LIKE: the complement on non-null rows, nothing on null rows */
      char notbits[N + 1];
      for (int i = 0; i < N; i++) notbits[i] = valid[i] == '0' ? '0' : cases[k].bits[i] == '1' ? '0' : '1';
      notbits[N] = 0;
      snprintf(label, sizeof label, "NOT LIKE pattern #%zu", k);
      expect_bits(on_like(s, cases[k].pat, strlen(cases[k].pat), cases[k].escape, 1), label, notbits);
    }
    /* a pattern with an embedded NUL byte and explicit length */
    expect_bits(on_like(s, "a\0b", 3, -1, 0), "LIKE 'a\\0b'", "00000000000000000000");
    tr_clear(&tr);
  }
  th_case("%s", "");
}

/* LIKE on a dictionary is matched over the dictionary's whole concatenated
 * bytes (core/like.c): an occurrence that runs across an entry boundary must
 * select neither entry, the search must restart at the next entry's start,
 * and the literal may sit at the very start or end of the buffer. */
static void like_dictionary_search(void) {
  static const char *const strs[] = {
      "abcq",   /* 0: 'abc' at the very start of the byte buffer */
      "ab",     /* 1 */
      "cab",    /* 2: "ab|cab": 'abc' across the 1/2 boundary */
      "",       /* 3: empty */
      "c",      /* 4: "cab||c": 'abc' across 2/3/4, over the empty entry */
      "aaaa",   /* 5: overlapping 'aaa' */
      "xaaabx", /* 6: 'aab' after a partial 'aa' */
      "ABC",    /* 7: case */
      "a%b",    /* 8 */
      "a%%b",   /* 9 */
      "xxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxxabc", /* 10: 73 bytes */
      "abcabc", /* 11 */
      "zab",    /* 12: "zab|cabc": a straddling hit, then a real one in 13 */
      "cabc",   /* 13 */
      "\xc3\xa9",  /* 14: e-acute: 0xA9 is inside a character */
      "\xff\xa9",  /* 15: two invalid bytes: 0xA9 is a character of its own */
      "x\xc3\xa9", /* 16 */
      "zzabc",  /* 17: 'abc' at the very end of the byte buffer */
  };
  enum { D = 18 };
  uint64_t codes[D];
  for (int i = 0; i < D; i++) codes[i] = (uint64_t)i;
  static const struct {
    const char *pat;
    int escape;
    const char *name;
    const char *bits; /* rows 0..17 */
  } cases[] = {
      {"%abc%", -1, "contains; straddling hits select nothing", "100000000011010001"},
      {"%%abc%%", -1, "contains with doubled %", "100000000011010001"},
      {"%ABC%", -1, "contains is case-sensitive (upper)", "000000010000000000"},
      {"%abC%", -1, "contains is case-sensitive (mixed)", "000000000000000000"},
      {"%aaa%", -1, "overlapping occurrences", "000001100000000000"},
      {"%aab%", -1, "occurrence after a partial one", "000000100000000000"},
      {"%abc", -1, "suffix", "000000000011010001"},
      {"abc%", -1, "prefix", "100000000001000000"},
      {"cab", -1, "equality", "001000000000000000"},
      {"", -1, "empty pattern: empty strings only", "000100000000000000"},
      {"%a\\%b%", '\\', "escaped % inside contains", "000000001000000000"},
      {"%a!%!%b%", '!', "two escaped %", "000000000100000000"},
      {"%a%b%", -1, "two segments", "111000101111110001"},
      {"%b%c%", -1, "two segments, straddling first", "100000000011010001"},
      {"%c", -1, "one-byte suffix", "000010000011010001"},
      {"%a_c%", -1, "contains with _ (generic check of candidates)", "100000000011010001"},
      {"%xabc%", -1, "contains a long entry's tail", "000000000010000000"},
      {"%x%c%", -1, "second segment searched in a long entry", "000000000010000000"},
      {"%x%bc%", -1, "two-byte second segment in a long entry", "000000000010000000"},
      {"%\xa9%", -1, "continuation byte after %: character boundaries", "000000000000000100"},
      {"%\xc3\xa9", -1, "two-byte character suffix", "000000000000001010"},
      {"%\xc3\xa9%", -1, "two-byte character contains", "000000000000001010"},
      {"%a_c", -1, "suffix with _ (ASCII entries)", "000000000011010001"},
      {"_b%", -1, "prefix with _ (ASCII entries)", "110000000001000000"},
      {"_\xc3\xa9", -1, "_ then a two-byte character (non-ASCII entries)", "000000000000000010"},
      {"%\xff_", -1, "invalid byte then _ at the end", "000000000000000100"},
  };
  for (int v = 0; v < 2; v++) {
    th_case("LIKE over the dictionary bytes, %s offsets", v ? "64-bit" : "32-bit");
    int s = add_dict(strs, NULL, D, 0, v, 5, codes, D, NULL);
    if (s < 0) return;
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
      char label[200];
      snprintf(label, sizeof label, "LIKE '%s' (%s)", cases[k].pat, cases[k].name);
      expect_bits(on_like(s, cases[k].pat, strlen(cases[k].pat), cases[k].escape, 0), label, cases[k].bits);
      char notbits[D + 1];
      for (int i = 0; i < D; i++) notbits[i] = cases[k].bits[i] == '1' ? '0' : '1';
      notbits[D] = 0;
      snprintf(label, sizeof label, "NOT LIKE '%s' (%s)", cases[k].pat, cases[k].name);
      expect_bits(on_like(s, cases[k].pat, strlen(cases[k].pat), cases[k].escape, 1), label, notbits);
    }
    tr_clear(&tr);
  }
  th_case("%s", "");
}

/* ---- IN lists --------------------------------------------------------------------------- */

static void in_lists(void) {
  th_case("IN lists");
  enum { N = 300 };
  uint64_t codes[N];
  char valid[N + 1];
  for (int i = 0; i < N; i++) {
    codes[i] = (uint64_t)i;
    valid[i] = i % 10 == 9 ? '0' : '1';
  }
  valid[N] = 0;
  int c = add_for(PS_TYPE_INT32, 9, -150, 0, 0, codes, N, valid); /* -150 .. 149 */
  if (c < 0) return;
  /* 100 values: evens from -100 (as int, uint, float), duplicates, NaN, out of range */
  ps_literal list[100];
  for (int i = 0; i < 90; i++) {
    int64_t v = -100 + 2 * i; /* -100 .. 78 */
    list[i] = v >= 0 && i % 3 == 0 ? ps_lit_uint((uint64_t)v) : i % 3 == 1 ? ps_lit_float((double)v) : ps_lit_int(v);
  }
  for (int i = 90; i < 95; i++) list[i] = ps_lit_int(-100); /* duplicates */
  list[95] = ps_lit_float(NAN);
  list[96] = ps_lit_int(1000);
  list[97] = ps_lit_int(INT64_MIN);
  list[98] = ps_lit_float(0.5);
  list[99] = ps_lit_uint(UINT64_MAX);
  uint64_t want = 0;
  for (int i = 0; i < N; i++) {
    int64_t v = -150 + i;
    if (valid[i] == '1' && v >= -100 && v <= 78 && v % 2 == 0) want++;
  }
  expect_count(on_in(c, list, 100), "IN 100 values", want);
  uint64_t nonnull = 0;
  for (int i = 0; i < N; i++) nonnull += valid[i] == '1';
  expect_count(on_not(on_in(c, list, 100)), "NOT IN 100 values", nonnull - want);
  expect_count(on_in(c, NULL, 0), "IN ()", 0);
  expect_count(on_not(on_in(c, NULL, 0)), "NOT IN () (nulls stay unknown)", nonnull);
  ps_literal one = ps_lit_int(-150);
  expect_count(on_in(c, &one, 1), "IN (min)", 1);
  ps_literal nan = ps_lit_float(NAN);
  expect_count(on_in(c, &nan, 1), "IN (NaN)", 0);
  expect_count(on_not(on_in(c, &nan, 1)), "NOT IN (NaN)", nonnull);
  tr_clear(&tr);
  th_case("%s", "");
}

/* ---- sliced dictionary (offsets not starting at 0) --------------------------------------- */

static void sliced_dictionary(void) {
  th_case("dictionary offsets starting past 0");
  tcol *c = th_calloc(1, sizeof *c);
  static const uint8_t bytes[] = "XXXXabcde";
  int32_t off[4] = {4, 5, 7, 9}; /* "a", "bc", "de" */
  uint64_t codes[5] = {0, 1, 2, 1, 0};
  tcol *t = tcol_for(PS_TYPE_UINT8, 5, 2, 0, (ps_reference){.u = 0}, codes, NULL, NULL);
  c->type = PS_TYPE_STRING;
  c->code_type = PS_TYPE_UINT8;
  c->n = 5;
  c->width = 2;
  c->data = t->data;
  c->data_size = t->data_size;
  t->data = NULL;
  tcol_free(t);
  c->dcount = 3;
  c->off32 = th_malloc(sizeof off);
  memcpy(c->off32, off, sizeof off);
  c->bytes = th_malloc(sizeof bytes);
  memcpy(c->bytes, bytes, sizeof bytes);
  c->bytes_size = 9;
  c->sorted = 1;
  int s = tr_add(&tr, c);
  if (s < 0) return;
  expect_bits(on_cmp(s, PS_EQ, ps_lit_str("bc", 2)), "== 'bc'", "01010");
  expect_bits(on_cmp(s, PS_GT, ps_lit_str("b", 1)), "> 'b'", "01110");
  expect_bits(on_like(s, "%c", 2, -1, 0), "LIKE '%c'", "01010");
  tr_clear(&tr);
  th_case("%s", "");
}

/* ---- corrupt codes ----------------------------------------------------------------------- */

/* Filters t on ctx expecting PS_ERR_CORRUPT_DATA with the bitmap and count
 * untouched; then the context must still work. */
static void expect_corrupt(ps_context *ctx, ps_column *const *h, const onode *t, uint64_t n, const char *label,
                           ps_column *ok_col) {
  const char *be = ps_context_backend(ctx);
  ps_expr *e = NULL;
  ps_status st = on_build(ctx, t, h, &e);
  if (!CHECKF(st == PS_OK, "%s [%s]: building failed: %s: %s", label, be, ps_status_name(st),
              ps_context_last_error(ctx)))
    return;
  uint64_t nb = (n + 7) / 8;
  uint8_t *bm = th_malloc(nb + 8);
  memset(bm, 0xAB, nb + 8);
  uint64_t count = 4242;
  st = ps_filter(ctx, e, bm, nb + 8, &count);
  CHECKF(st == PS_ERR_CORRUPT_DATA, "%s [%s]: ps_filter returned %s, expected PS_ERR_CORRUPT_DATA", label, be,
         ps_status_name(st));
  CHECKF(ps_context_last_error(ctx)[0] != 0, "%s [%s]: no message for corrupt data", label, be);
  int untouched = 1;
  for (uint64_t i = 0; i < nb + 8; i++) untouched &= bm[i] == 0xAB;
  CHECKF(untouched, "%s [%s]: the caller's bitmap was modified by a failed ps_filter", label, be);
  CHECKF(count == 4242, "%s [%s]: count written by a failed ps_filter", label, be);
  count = 4242;
  st = ps_filter_count(ctx, e, &count);
  CHECKF(st == PS_ERR_CORRUPT_DATA, "%s [%s]: ps_filter_count returned %s", label, be, ps_status_name(st));
  CHECKF(count == 4242, "%s [%s]: count written by a failed ps_filter_count", label, be);
  ps_buffer *buf = NULL;
  if (CHECK_OK(ctx, ps_buffer_create(ctx, nb + 8, &buf))) {
    st = ps_filter_device(ctx, e, buf, 0, &count);
    CHECKF(st == PS_ERR_CORRUPT_DATA, "%s [%s]: ps_filter_device returned %s", label, be, ps_status_name(st));
    ps_buffer_destroy(buf);
  }
  ps_expr_destroy(e);
  /* still usable */
  ps_expr *ok = NULL;
  if (CHECK_OK(ctx, ps_expr_is_null(ctx, ok_col, 1, &ok))) {
    count = 0;
    st = ps_filter(ctx, ok, bm, nb + 8, &count);
    CHECKF(st == PS_OK && count == ps_column_rows(ok_col), "%s [%s]: context unusable after corrupt data: %s", label,
           be, ps_status_name(st));
    ps_expr_destroy(ok);
  }
  free(bm);
}

static void corrupt(void) {
  th_case("corrupt codes");
  static const char *const abc[] = {"a", "b", "c"};
  enum { N = 70 };
  uint64_t codes[N];
  for (int i = 0; i < N; i++) codes[i] = (uint64_t)(i % 3);
  codes[37] = 5; /* past the end of a 3-entry dictionary */
  char valid[N + 1], null37[N + 1];
  for (int i = 0; i < N; i++) {
    valid[i] = '1';
    null37[i] = i == 37 ? '0' : '1';
  }
  valid[N] = null37[N] = 0;
  int bad = add_dict(abc, NULL, 3, 1, 0, 8, codes, N, valid);
  int bad_unsorted = add_dict(abc, NULL, 3, 0, 1, 8, codes, N, NULL);
  int masked = add_dict(abc, NULL, 3, 1, 0, 8, codes, N, null37);
  uint64_t icodes[N];
  for (int i = 0; i < N; i++) icodes[i] = (uint64_t)(i % 20);
  icodes[12] = 100; /* int8 M=100: value 200 is outside int8 */
  int bad_int = add_for(PS_TYPE_INT8, 7, 100, 0, 0, icodes, N, NULL);
  char null12[N + 1];
  for (int i = 0; i < N; i++) null12[i] = i == 12 ? '0' : '1';
  null12[N] = 0;
  int masked_int = add_for(PS_TYPE_INT8, 7, 100, 0, 0, icodes, N, null12);
  int good = add_for(PS_TYPE_INT8, 7, 100, 0, 0, codes, N, NULL);
  /* an empty dictionary: any valid row is corrupt */
  uint64_t zero[N] = {0};
  char none_valid[N + 1], one_valid[N + 1];
  for (int i = 0; i < N; i++) {
    none_valid[i] = '0';
    one_valid[i] = i == 64 ? '1' : '0';
  }
  none_valid[N] = one_valid[N] = 0;
  int empty_null = add_dict(abc, NULL, 0, 1, 0, 1, zero, N, none_valid);
  int empty_one = add_dict(abc, NULL, 0, 1, 0, 1, zero, N, one_valid);
  if (bad < 0 || bad_unsorted < 0 || masked < 0 || bad_int < 0 || masked_int < 0 || good < 0 || empty_null < 0 ||
      empty_one < 0)
    return;

  struct {
    onode *t;
    const char *label;
  } cases[] = {
      {on_cmp(bad, PS_EQ, ps_lit_str("a", 1)), "dict == 'a' with a code past the end"},
      {on_cmp(bad, PS_LT, ps_lit_str("c", 1)), "dict < 'c' with a code past the end"},
      {on_like(bad, "%", 1, -1, 0), "dict LIKE '%' with a code past the end"},
      {on_cmp(bad_unsorted, PS_EQ, ps_lit_str("b", 1)), "unsorted dict == 'b' with a code past the end"},
      {on_like(bad_unsorted, "_", 1, -1, 1), "unsorted dict NOT LIKE '_' with a code past the end"},
      {on_cmpcol(bad, PS_EQ, bad_unsorted), "dict == dict with a code past the end"},
      {on_and(on_cmp(good, PS_GE, ps_lit_int(100)), on_cmp(bad, PS_NE, ps_lit_str("zz", 2))),
       "tree with a corrupt leaf"},
      {on_cmp(bad_int, PS_EQ, ps_lit_int(105)), "int8 value 200 (outside int8)"},
      {on_cmp(empty_one, PS_EQ, ps_lit_str("a", 1)), "empty dictionary with a valid row"},
  };
  for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
    expect_corrupt(tr.ctx, tr.h, cases[k].t, N, cases[k].label, tr.h[good]);
    if (tr.ref) expect_corrupt(tr.ref, tr.hr, cases[k].t, N, cases[k].label, tr.hr[good]);
    on_free(cases[k].t);
  }
  /* the same codes under a null are no error */
  expect_count(on_cmp(masked, PS_EQ, ps_lit_str("a", 1)), "corrupt code under a null: == 'a'", 24);
  expect_count(on_like(masked, "%", 1, -1, 0), "corrupt code under a null: LIKE '%'", 69);
  expect_count(on_cmp(masked_int, PS_EQ, ps_lit_int(105)), "int8 value 200 under a null", 4);
  expect_count(on_cmp(empty_null, PS_EQ, ps_lit_str("a", 1)), "empty dictionary, all null", 0);
  expect_count(on_isnull(empty_null, 0), "empty dictionary, all null: IS NULL", N);
  tr_clear(&tr);
  th_case("%s", "");
}

/* Corrupt codes through the single-range fast paths (CUDA's direct kernel at
 * 1, 2, 4, 8, 16 bits, the staged one elsewhere; range.cl), in a column of
 * several tiles: a code past a dictionary's end in the last tile (and, in
 * a second column, under a null: no error). */
static void corrupt_widths(void) {
  th_case("corrupt codes, one range predicate, by width");
  static const char *const abc[] = {"a", "b", "c"};
  static const uint32_t widths[] = {1, 2, 3, 4, 8, 12, 16, 20};
  enum { N = 100003, BAD_ROW = N - 7 };
  uint64_t *codes = th_malloc(N * sizeof *codes), *zeros = th_calloc(N, sizeof *zeros);
  char *valid = th_malloc(N + 1);
  for (uint64_t i = 0; i < N; i++) valid[i] = i == BAD_ROW ? '0' : '1';
  valid[N] = 0;
  for (size_t k = 0; k < sizeof widths / sizeof widths[0]; k++) {
    const uint32_t w = widths[k];
    const size_t d = w == 1 ? 1 : 3;
    uint64_t want = 0;
    for (uint64_t i = 0; i < N; i++) {
      codes[i] = i % d;
      want += i != BAD_ROW && codes[i] == 0;
    }
    codes[BAD_ROW] = w == 1 ? 1 : (UINT64_C(1) << w) - 1; /* > d - 1 */
    int bad = add_dict(abc, NULL, d, 1, 0, w, codes, N, NULL);
    int masked = add_dict(abc, NULL, d, 1, 0, w, codes, N, valid);
    int good = add_for(PS_TYPE_INT8, 7, 100, 0, 0, zeros, N, NULL);
    if (bad < 0 || masked < 0 || good < 0) break;
    char label[96];
    onode *eq = on_cmp(bad, PS_EQ, ps_lit_str("a", 1)), *ne = on_cmp(bad, PS_NE, ps_lit_str("b", 1));
    snprintf(label, sizeof label, "w%u dict == 'a', code %llu past the end at row %d", w,
             (unsigned long long)codes[BAD_ROW], BAD_ROW);
    expect_corrupt(tr.ctx, tr.h, eq, N, label, tr.h[good]);
    if (tr.ref) expect_corrupt(tr.ref, tr.hr, eq, N, label, tr.hr[good]);
    snprintf(label, sizeof label, "w%u dict != 'b', code past the end", w);
    expect_corrupt(tr.ctx, tr.h, ne, N, label, tr.h[good]);
    if (tr.ref) expect_corrupt(tr.ref, tr.hr, ne, N, label, tr.hr[good]);
    on_free(eq);
    on_free(ne);
    /* through the general evaluator (an AND): the code past the end alone in
     * a word's first, middle or last row, where its RANGE leaf reads the
     * word's lanes at once (1, 2, 4, 8 bits) or row by row */
    static const uint64_t rows[] = {32, 99999 - 16, 99999};
    for (size_t r = 0; r < sizeof rows / sizeof rows[0]; r++) {
      uint64_t keep = codes[BAD_ROW];
      codes[BAD_ROW] = 0;
      codes[rows[r]] = keep;
      const int one_bad = add_dict(abc, NULL, d, 1, 0, w, codes, N, NULL);
      codes[rows[r]] = rows[r] % d;
      codes[BAD_ROW] = keep;
      if (one_bad < 0) break;
      onode *t = on_and(on_cmp(good, PS_GE, ps_lit_int(100)), on_cmp(one_bad, PS_EQ, ps_lit_str("a", 1)));
      snprintf(label, sizeof label, "w%u tree, code %llu past the end at row %llu alone", w, (unsigned long long)keep,
               (unsigned long long)rows[r]);
      expect_corrupt(tr.ctx, tr.h, t, N, label, tr.h[good]);
      if (tr.ref) expect_corrupt(tr.ref, tr.hr, t, N, label, tr.hr[good]);
      on_free(t);
    }
    snprintf(label, sizeof label, "w%u dict == 'a', the code past the end under a null", w);
    expect_count(on_cmp(masked, PS_EQ, ps_lit_str("a", 1)), label, want);
    tr_clear(&tr);
  }
  free(codes);
  free(zeros);
  free(valid);
  tr_clear(&tr);
  th_case("%s", "");
}

/* LIKE on a dictionary of 2.2 million entries: its set (275 KB) does not fit
 * a CUDA block's shared memory, so the CUDA backend runs the general kernel
 * instead of the SET kernel (set_kernel.cuh); smaller sets take the SET
 * kernel in the other LIKE / IN cases. */
static void like_big_dictionary(void) {
  th_case("LIKE over a 2.2M-entry dictionary");
  enum { D = 2200000, N = 5003 };
  tstrs l = {0};
  l.s = th_malloc(D * sizeof *l.s);
  l.len = th_malloc(D * sizeof *l.len);
  for (size_t i = 0; i < D; i++) { /* filled directly: tstrs_push grows one entry at a time */
    l.s[i] = th_malloc(8);
    snprintf((char *)l.s[i], 8, "%07zu", i);
    l.len[i] = 7;
  }
  l.count = D;
  uint64_t *codes = th_malloc(N * sizeof *codes);
  for (uint64_t i = 0; i < N; i++) codes[i] = th_below(&th.rng, D);
  codes[N - 1] = 1200000; /* '%12%' matches at least once */
  int c = tr_add(&tr, tcol_dict(&l, 1, 0, PS_TYPE_UINT32, N, 22, 0, codes, NULL, &th.rng));
  tstrs_free(&l);
  free(codes);
  if (c < 0) return;
  onode *like = on_like(c, "%12%", 4, -1, 0), *not_like = on_like(c, "%12%", 4, -1, 1);
  tr_check(&tr, like, "2.2M-entry dictionary LIKE '%12%'");
  tr_check(&tr, not_like, "2.2M-entry dictionary NOT LIKE '%12%'");
  on_free(like);
  on_free(not_like);
  tr_clear(&tr);
  th_case("%s", "");
}

int main(int argc, char **argv) {
  th_init(argc, argv, "filter_edge");
  ps_context *ctx = th_context(0);
  ps_context *ref = th_is_reference() ? NULL : th_reference_context(0);
  tr_init(&tr, ctx, ref);
  row_counts();
  all_null();
  literal_extremes();
  floats();
  widths();
  extreme_reference_pairs();
  string_order();
  dict_vs_dict();
  like();
  like_dictionary_search();
  in_lists();
  sliced_dictionary();
  corrupt();
  corrupt_widths();
  like_big_dictionary();
  tr_clear(&tr);
  ps_context_destroy(ref);
  ps_context_destroy(ctx);
  return th_finish();
}
