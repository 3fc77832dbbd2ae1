/*
 * errors: every invalid input gives its exact status, a message on the
 * context that names the field, leaves the out-parameters and the caller's
 * data untouched, and leaves the context usable. Also ps_status_name /
 * ps_status_string for every code.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"

static ps_context *ctx;
static ps_column *good;      /* int32 0..99 */
static ps_column *good_dict; /* 'a','b','c' */
static int sentinel_obj;
#define SENTINEL ((void *)&sentinel_obj)

static int32_t good_values[100];

/* The context still works: a filter on the good column gives 50 rows. */
static void usable(const char *after) {
  ps_expr *e = NULL;
  ps_status st = ps_expr_compare(ctx, good, PS_LT, ps_lit_int(50), &e);
  if (!CHECKF(st == PS_OK, "context unusable after %s: %s: %s", after, ps_status_name(st), ps_context_last_error(ctx)))
    return;
  uint8_t bm[13];
  uint64_t count = 0;
  st = ps_filter(ctx, e, bm, sizeof bm, &count);
  CHECKF(st == PS_OK && count == 50, "context unusable after %s: %s, count %llu", after, ps_status_name(st),
         (unsigned long long)count);
  CHECKF(ps_context_last_error(ctx)[0] == 0, "last error not cleared by a successful call after %s: \"%s\"", after,
         ps_context_last_error(ctx));
  ps_expr_destroy(e);
}

/* Checks status, message naming `field`, and usability. */
static void expect(ps_status got, ps_status want, const char *field, const char *what) {
  th_case("%s", what);
  const char *msg = ps_context_last_error(ctx);
  CHECKF(got == want, "returned %s, expected %s; message \"%s\"", ps_status_name(got), ps_status_name(want), msg);
  if (field) CHECKF(th_contains_ci(msg, field), "message \"%s\" does not name \"%s\"", msg, field);
  else CHECKF(msg[0] != 0, "empty message");
  usable(what);
  th_case("%s", "");
}

static void base_for(ps_for_desc *d, uint64_t n, uint32_t w, void *data) {
  ps_for_desc_init(d);
  d->type = PS_TYPE_INT32;
  d->n = n;
  d->width = w;
  d->data = data;
  d->data_size = (n * w + 7) / 8;
}

static void for_fails(const ps_for_desc *d, ps_status want, const char *field, const char *what) {
  ps_column *out = SENTINEL;
  ps_status st = ps_column_create_for(ctx, d, &out);
  CHECKF(out == SENTINEL, "%s: out-parameter written on failure", what);
  if (st == PS_OK && out != SENTINEL) ps_column_destroy(out);
  expect(st, want, field, what);
}

static const uint8_t dict_bytes[] = "abcdef";

static void base_dict(ps_dict_desc *dd, int32_t *off, uint8_t *codes_data, ps_for_desc *codes) {
  ps_dict_desc_init(dd);
  off[0] = 0;
  off[1] = 1;
  off[2] = 2;
  off[3] = 3;
  dd->count = 3;
  dd->offsets32 = off;
  dd->bytes = dict_bytes;
  dd->bytes_size = 6;
  ps_for_desc_init(codes);
  codes->type = PS_TYPE_UINT8;
  codes->n = 4;
  codes->width = 8;
  codes->data = codes_data;
  codes->data_size = 4;
}

static void dict_fails(const ps_dict_desc *dd, const ps_for_desc *codes, ps_status want, const char *field,
                       const char *what) {
  ps_column *out = SENTINEL;
  ps_status st = ps_column_create_dict(ctx, dd, codes, &out);
  CHECKF(out == SENTINEL, "%s: out-parameter written on failure", what);
  if (st == PS_OK && out != SENTINEL) ps_column_destroy(out);
  expect(st, want, field, what);
}

static void column_errors(void) {
  uint8_t data[1024];
  memset(data, 0, sizeof data);
  ps_for_desc d;

  base_for(&d, 10, 8, data);
  d.width = 65;
  d.data_size = (10 * 65 + 7) / 8;
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, "width", "width 65");

  base_for(&d, 10, 7, data);
  d.data_size = 10; /* needs 9 */
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, "data_size", "data_size one too many");
  d.data_size = 8;
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, "data_size", "data_size one too few");
  base_for(&d, 0, 8, data);
  d.data_size = 1;
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, "data_size", "data_size 1 for 0 rows");

  base_for(&d, 10, 8, data);
  d.type = PS_TYPE_FLOAT64;
  d.scale = 19;
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, "scale", "scale 19 on a float64 column");
  d.type = PS_TYPE_FLOAT32;
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, "scale", "scale 19 on a float32 column");
  d.type = PS_TYPE_INT32;
  d.scale = 2;
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, "scale", "scale 2 on an int32 column");
  d.type = PS_TYPE_UINT8;
  d.scale = 1;
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, "scale", "scale 1 on a uint8 column");

  base_for(&d, 10, 8, NULL);
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, "data", "NULL data with n > 0");

  uint8_t validity[8] = {0xff, 0xff, 0xff, 0xff};
  base_for(&d, 10, 8, data);
  d.validity = validity;
  d.validity_size = 3; /* needs 2 */
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, "validity_size", "validity_size too large");
  d.validity_size = 1;
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, "validity_size", "validity_size too small");
  d.validity_size = 0;
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, "validity_size", "validity_size 0 with a bitmap");
  d.validity = NULL;
  d.validity_size = 2;
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, "validity", "validity NULL with validity_size 2");

  base_for(&d, 10, 8, data);
  d.type = PS_TYPE_INT8;
  d.reference.i = 1000;
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, "reference", "int8 reference 1000");
  d.type = PS_TYPE_UINT16;
  d.reference.u = 70000;
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, "reference", "uint16 reference 70000");

  base_for(&d, 10, 8, data);
  d.type = PS_TYPE_STRING;
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, "type", "string type in ps_column_create_for");
  d.type = (ps_type)0;
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, "type", "type 0");
  d.type = (ps_type)42;
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, "type", "type 42");

  base_for(&d, 10, 8, data);
  d.struct_size = 0;
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, "struct_size", "struct_size 0");

  base_for(&d, (uint64_t)1 << 62, 64, data);
  d.data_size = 1024;
  for_fails(&d, PS_ERR_INVALID_ARGUMENT, NULL, "n * width overflowing 64-bit sizes");

  ps_column *out = SENTINEL;
  expect(ps_column_create_for(ctx, NULL, &out), PS_ERR_INVALID_ARGUMENT, NULL, "NULL desc");
  CHECK(out == SENTINEL);
  base_for(&d, 10, 8, data);
  expect(ps_column_create_for(ctx, &d, NULL), PS_ERR_INVALID_ARGUMENT, "out", "NULL out pointer");
  CHECK(ps_column_create_for(NULL, &d, &out) == PS_ERR_INVALID_ARGUMENT);
  CHECK(out == SENTINEL);

  /* dictionaries */
  int32_t off[8];
  int64_t off64[8] = {0, 1, 2, 3};
  uint8_t codes_data[4] = {0, 1, 2, 0};
  ps_dict_desc dd;
  ps_for_desc codes;

  base_dict(&dd, off, codes_data, &codes);
  off[2] = 0; /* 0 1 0 3 */
  dict_fails(&dd, &codes, PS_ERR_INVALID_ARGUMENT, "offsets", "dictionary offsets decreasing");
  base_dict(&dd, off, codes_data, &codes);
  off[3] = 7; /* bytes_size 6 */
  dict_fails(&dd, &codes, PS_ERR_INVALID_ARGUMENT, "offsets", "dictionary offsets past bytes_size");
  base_dict(&dd, off, codes_data, &codes);
  off[0] = -1;
  dict_fails(&dd, &codes, PS_ERR_INVALID_ARGUMENT, "offsets", "negative dictionary offset");
  base_dict(&dd, off, codes_data, &codes);
  dd.offsets64 = off64;
  dict_fails(&dd, &codes, PS_ERR_INVALID_ARGUMENT, "offsets", "both offsets32 and offsets64 set");
  dd.offsets32 = NULL;
  dd.offsets64 = NULL;
  dict_fails(&dd, &codes, PS_ERR_INVALID_ARGUMENT, "offsets", "neither offsets32 nor offsets64 set");
  base_dict(&dd, off, codes_data, &codes);
  dd.bytes = NULL;
  dict_fails(&dd, &codes, PS_ERR_INVALID_ARGUMENT, "bytes", "NULL dictionary bytes with bytes_size 6");

  /* sorted flag on "b","a","c" and on "a","a","b" */
  static const uint8_t unsorted[] = "bac";
  base_dict(&dd, off, codes_data, &codes);
  dd.bytes = unsorted;
  dd.bytes_size = 3;
  dd.sorted = 1;
  dict_fails(&dd, &codes, PS_ERR_INVALID_ARGUMENT, "sorted", "sorted flag on an unsorted dictionary");
  static const uint8_t dup[] = "aab";
  dd.bytes = dup;
  dict_fails(&dd, &codes, PS_ERR_INVALID_ARGUMENT, "sorted", "sorted flag on a dictionary with duplicates");
  /* a proper prefix sorts first: "ab" before "a" is unsorted */
  static const uint8_t prefix[] = "aba";
  int32_t poff[3] = {0, 2, 3};
  ps_dict_desc_init(&dd);
  dd.count = 2;
  dd.offsets32 = poff;
  dd.bytes = prefix;
  dd.bytes_size = 3;
  dd.sorted = 1;
  codes_data[2] = 1;
  dict_fails(&dd, &codes, PS_ERR_INVALID_ARGUMENT, "sorted", "sorted flag on \"ab\",\"a\"");

  base_dict(&dd, off, codes_data, &codes);
  codes.type = PS_TYPE_INT32;
  codes.width = 8;
  dict_fails(&dd, &codes, PS_ERR_INVALID_ARGUMENT, "type", "int32 dictionary codes");
  codes.type = PS_TYPE_FLOAT64;
  dict_fails(&dd, &codes, PS_ERR_INVALID_ARGUMENT, "type", "float64 dictionary codes");
  codes.type = PS_TYPE_STRING;
  dict_fails(&dd, &codes, PS_ERR_INVALID_ARGUMENT, "type", "string dictionary codes");
  base_dict(&dd, off, codes_data, &codes);
  codes.width = 65;
  dict_fails(&dd, &codes, PS_ERR_INVALID_ARGUMENT, "width", "dictionary codes width 65");
  base_dict(&dd, off, codes_data, &codes);
  codes.data_size = 5;
  dict_fails(&dd, &codes, PS_ERR_INVALID_ARGUMENT, "data_size", "dictionary codes data_size");
  base_dict(&dd, off, codes_data, &codes);
  out = SENTINEL;
  expect(ps_column_create_dict(ctx, NULL, &codes, &out), PS_ERR_INVALID_ARGUMENT, "dict", "NULL dictionary");
  CHECK(out == SENTINEL);
  expect(ps_column_create_dict(ctx, &dd, NULL, &out), PS_ERR_INVALID_ARGUMENT, "codes", "NULL codes");
  CHECK(out == SENTINEL);
  expect(ps_column_create_dict(ctx, &dd, &codes, NULL), PS_ERR_INVALID_ARGUMENT, "out", "dict: NULL out");
}

static void expr_fails(ps_status st, ps_expr *out, ps_status want, const char *field, const char *what) {
  CHECKF(out == SENTINEL, "%s: out-parameter written on failure", what);
  if (st == PS_OK && out != SENTINEL) ps_expr_destroy(out);
  expect(st, want, field, what);
}

static void expression_errors(void) {
  ps_expr *out = SENTINEL;
  ps_status st;

  st = ps_expr_compare(ctx, good, PS_EQ, ps_lit_str("abc", 3), &out);
  expr_fails(st, out, PS_ERR_TYPE_MISMATCH, "string", "string literal on an int column");
  st = ps_expr_compare(ctx, good_dict, PS_EQ, ps_lit_int(1), &out);
  expr_fails(st, out, PS_ERR_TYPE_MISMATCH, "string", "int literal on a dictionary column");
  st = ps_expr_compare(ctx, good_dict, PS_LT, ps_lit_float(1.5), &out);
  expr_fails(st, out, PS_ERR_TYPE_MISMATCH, "string", "float literal on a dictionary column");
  st = ps_expr_between(ctx, good, ps_lit_int(1), ps_lit_str("z", 1), &out);
  expr_fails(st, out, PS_ERR_TYPE_MISMATCH, "string", "BETWEEN with a string bound on an int column");
  ps_literal mixed[3] = {ps_lit_int(1), ps_lit_str("x", 1), ps_lit_int(3)};
  st = ps_expr_in(ctx, good, mixed, 3, &out);
  expr_fails(st, out, PS_ERR_TYPE_MISMATCH, "string", "IN list with a string on an int column");
  ps_literal nums[2] = {ps_lit_str("a", 1), ps_lit_uint(7)};
  st = ps_expr_in(ctx, good_dict, nums, 2, &out);
  expr_fails(st, out, PS_ERR_TYPE_MISMATCH, NULL, "IN list with a number on a dictionary column");
  st = ps_expr_in(ctx, good, NULL, 3, &out);
  expr_fails(st, out, PS_ERR_INVALID_ARGUMENT, "list", "IN list NULL with count 3");

  ps_literal bad_kind;
  memset(&bad_kind, 0, sizeof bad_kind);
  bad_kind.kind = (ps_literal_kind)99;
  st = ps_expr_compare(ctx, good, PS_EQ, bad_kind, &out);
  expr_fails(st, out, PS_ERR_INVALID_ARGUMENT, "kind", "literal of kind 99");
  st = ps_expr_compare(ctx, good_dict, PS_EQ, ps_lit_str(NULL, 4), &out);
  expr_fails(st, out, PS_ERR_INVALID_ARGUMENT, NULL, "string literal NULL with length 4");
  st = ps_expr_compare(ctx, good, (ps_cmp)6, ps_lit_int(1), &out);
  expr_fails(st, out, PS_ERR_INVALID_ARGUMENT, "operator", "comparison operator 6");
  st = ps_expr_compare(ctx, good, (ps_cmp)-1, ps_lit_int(1), &out);
  expr_fails(st, out, PS_ERR_INVALID_ARGUMENT, "operator", "comparison operator -1");
  st = ps_expr_compare(ctx, NULL, PS_EQ, ps_lit_int(1), &out);
  expr_fails(st, out, PS_ERR_INVALID_ARGUMENT, NULL, "NULL column");
  st = ps_expr_compare(ctx, good, PS_EQ, ps_lit_int(1), NULL);
  expect(st, PS_ERR_INVALID_ARGUMENT, "out", "compare: NULL out");

  st = ps_expr_compare_columns(ctx, good, PS_EQ, good_dict, &out);
  expr_fails(st, out, PS_ERR_TYPE_MISMATCH, NULL, "int column against a dictionary column");

  /* columns of different row counts */
  int32_t v[101] = {0};
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = PS_TYPE_INT32;
  d.n = 101;
  d.width = 32;
  d.data = v;
  d.data_size = sizeof v;
  ps_column *other = NULL;
  if (CHECK_OK(ctx, ps_column_create_for(ctx, &d, &other))) {
    st = ps_expr_compare_columns(ctx, good, PS_LT, other, &out);
    expr_fails(st, out, PS_ERR_INVALID_ARGUMENT, "row", "compare_columns with 100 and 101 rows");
    /* AND of expressions over different row counts; operands stay ours */
    ps_expr *a = NULL, *b = NULL;
    CHECK_OK(ctx, ps_expr_compare(ctx, good, PS_LT, ps_lit_int(5), &a));
    CHECK_OK(ctx, ps_expr_compare(ctx, other, PS_LT, ps_lit_int(5), &b));
    if (a && b) {
      st = ps_expr_and(ctx, a, b, &out);
      expr_fails(st, out, PS_ERR_INVALID_ARGUMENT, "row", "AND of 100-row and 101-row expressions");
      st = ps_expr_or(ctx, a, b, &out);
      expr_fails(st, out, PS_ERR_INVALID_ARGUMENT, "row", "OR of 100-row and 101-row expressions");
      st = ps_expr_and(ctx, a, NULL, &out);
      expr_fails(st, out, PS_ERR_INVALID_ARGUMENT, NULL, "AND with a NULL operand");
      st = ps_expr_not(ctx, NULL, &out);
      expr_fails(st, out, PS_ERR_INVALID_ARGUMENT, NULL, "NOT of NULL");
      /* the failed calls did not take a or b: they still evaluate */
      uint8_t bm[13];
      uint64_t count = 0;
      CHECK_OK(ctx, ps_filter(ctx, a, bm, sizeof bm, &count));
      CHECKF(count == 5, "operand a after failed AND/OR: count %llu", (unsigned long long)count);
    }
    ps_expr_destroy(a);
    ps_expr_destroy(b);
  }
  ps_column_destroy(other);

  /* a column of another context */
  ps_context *ctx2 = th_context(0);
  ps_column *foreign = NULL;
  if (CHECK_OK(ctx2, ps_column_create_for(ctx2, &d, &foreign))) {
    st = ps_expr_compare(ctx, foreign, PS_EQ, ps_lit_int(0), &out);
    expr_fails(st, out, PS_ERR_INVALID_ARGUMENT, "context", "a column of another context");
  }
  ps_column_destroy(foreign);
  ps_context_destroy(ctx2);

  /* LIKE */
  st = ps_expr_like(ctx, good_dict, "ab\\", 3, '\\', 0, &out);
  expr_fails(st, out, PS_ERR_INVALID_ARGUMENT, "escape", "LIKE pattern ending in an unfinished escape");
  st = ps_expr_like(ctx, good_dict, "!", 1, '!', 1, &out);
  expr_fails(st, out, PS_ERR_INVALID_ARGUMENT, "escape", "NOT LIKE pattern that is a lone escape");
  st = ps_expr_like(ctx, good_dict, "a!!!", 4, '!', 0, &out);
  expr_fails(st, out, PS_ERR_INVALID_ARGUMENT, "escape", "LIKE pattern a!!! (odd escape run at the end)");
  st = ps_expr_like(ctx, good, "a%", 2, -1, 0, &out);
  expr_fails(st, out, PS_ERR_TYPE_MISMATCH, "LIKE", "LIKE on an int column");
  st = ps_expr_like(ctx, good_dict, "a%", 2, 200, 0, &out);
  expr_fails(st, out, PS_ERR_INVALID_ARGUMENT, "escape", "LIKE escape 200");
  st = ps_expr_like(ctx, good_dict, NULL, 2, -1, 0, &out);
  expr_fails(st, out, PS_ERR_INVALID_ARGUMENT, "pattern", "LIKE pattern NULL with length 2");
  st = ps_expr_is_null(ctx, NULL, 0, &out);
  expr_fails(st, out, PS_ERR_INVALID_ARGUMENT, NULL, "IS NULL of a NULL column");
}

static void evaluation_errors(void) {
  ps_expr *e = NULL;
  if (!CHECK_OK(ctx, ps_expr_compare(ctx, good, PS_GE, ps_lit_int(10), &e))) return;
  /* 100 rows need 13 bytes */
  uint8_t bm[32];
  memset(bm, 0xAB, sizeof bm);
  uint64_t count = 777;
  expect(ps_filter(ctx, e, bm, 12, &count), PS_ERR_BUFFER_TOO_SMALL, "13", "bitmap of 12 bytes for 100 rows");
  int untouched = 1;
  for (size_t i = 0; i < sizeof bm; i++) untouched &= bm[i] == 0xAB;
  CHECKF(untouched, "bitmap written by a failed ps_filter");
  CHECKF(count == 777, "count written by a failed ps_filter");
  expect(ps_filter(ctx, e, bm, 0, &count), PS_ERR_BUFFER_TOO_SMALL, NULL, "bitmap of 0 bytes for 100 rows");
  expect(ps_filter(ctx, NULL, bm, sizeof bm, &count), PS_ERR_INVALID_ARGUMENT, "expr", "ps_filter of NULL expr");
  expect(ps_filter(ctx, e, NULL, 13, &count), PS_ERR_INVALID_ARGUMENT, "bitmap", "ps_filter into a NULL bitmap");
  expect(ps_filter_count(ctx, e, NULL), PS_ERR_INVALID_ARGUMENT, "count", "ps_filter_count with NULL count");
  CHECK(count == 777);
  CHECK(ps_filter(NULL, e, bm, sizeof bm, &count) == PS_ERR_INVALID_ARGUMENT);

  ps_buffer *buf = NULL;
  if (CHECK_OK(ctx, ps_buffer_create(ctx, 64, &buf))) {
    expect(ps_filter_device(ctx, e, buf, 2, &count), PS_ERR_INVALID_ARGUMENT, "offset",
           "ps_filter_device at offset 2");
    expect(ps_filter_device(ctx, e, buf, 56, &count), PS_ERR_BUFFER_TOO_SMALL, NULL,
           "ps_filter_device: 13 bytes at offset 56 of 64");
    expect(ps_filter_device(ctx, e, NULL, 0, &count), PS_ERR_INVALID_ARGUMENT, NULL, "ps_filter_device into NULL");
    CHECK(count == 777);
    uint8_t host[80] = {0};
    expect(ps_buffer_write(ctx, buf, 60, host, 8), PS_ERR_BUFFER_TOO_SMALL, NULL, "ps_buffer_write past the end");
    expect(ps_buffer_read(ctx, buf, 0, host, 65), PS_ERR_BUFFER_TOO_SMALL, NULL, "ps_buffer_read past the end");
    expect(ps_buffer_write(ctx, buf, 0, NULL, 8), PS_ERR_INVALID_ARGUMENT, NULL, "ps_buffer_write from NULL");
    /* a device column whose data does not fit its buffer */
    ps_for_desc d;
    ps_for_desc_init(&d);
    d.type = PS_TYPE_INT32;
    d.n = 100;
    d.width = 8;
    d.data_size = 100;
    ps_column *col = SENTINEL;
    expect(ps_column_create_for_device(ctx, &d, buf, 0, NULL, 0, &col), PS_ERR_BUFFER_TOO_SMALL, NULL,
           "device column: 100 bytes in a 64-byte buffer");
    CHECK(col == SENTINEL);
    ps_buffer_destroy(buf);
  }
  ps_buffer *b2 = SENTINEL;
  expect(ps_buffer_create(ctx, 16, NULL), PS_ERR_INVALID_ARGUMENT, "out", "ps_buffer_create: NULL out");
  CHECK(b2 == SENTINEL);
  ps_expr_destroy(e);
}

static void context_errors(void) {
  ps_context_options o;
  ps_context_options_init(&o);
  o.backend = "no-such-backend";
  char err[512];
  memset(err, 0, sizeof err);
  ps_context *c = SENTINEL;
  ps_status st = ps_context_create(&o, err, sizeof err, &c);
  CHECKF(st == PS_ERR_NO_BACKEND, "unknown backend: %s", ps_status_name(st));
  CHECKF(c == NULL, "unknown backend: *out is not NULL");
  CHECKF(th_contains_ci(err, "no-such-backend"), "message \"%s\" does not name the backend", err);
  /* a tiny err_buf is NUL-terminated and not overrun */
  char tiny[9];
  memset(tiny, 'Z', sizeof tiny);
  c = SENTINEL;
  st = ps_context_create(&o, tiny, 8, &c);
  CHECK(st == PS_ERR_NO_BACKEND);
  CHECKF(memchr(tiny, 0, 8) != NULL && tiny[8] == 'Z', "err_buf of 8 bytes overrun or not terminated");
  CHECK(ps_context_create(&o, NULL, 0, &c) == PS_ERR_NO_BACKEND);
  CHECK(c == NULL);
  ps_context_options_init(&o);
  o.backend = "reference";
  CHECK(ps_context_create(&o, err, sizeof err, NULL) == PS_ERR_INVALID_ARGUMENT);
  /* no silent fallback: a named backend that is compiled out is refused */
#ifndef PACKSCAN_HAVE_CUDA
  o.backend = "cuda";
  c = SENTINEL;
  CHECK(ps_context_create(&o, err, sizeof err, &c) == PS_ERR_NO_BACKEND);
  CHECK(c == NULL);
#endif
#ifndef PACKSCAN_HAVE_OPENCL
  o.backend = "opencl";
  c = SENTINEL;
  CHECK(ps_context_create(&o, err, sizeof err, &c) == PS_ERR_NO_BACKEND);
  CHECK(c == NULL);
#endif
}

/* ps_context_options.opencl_platform_name: refused when empty or beside an
 * index; on OpenCL, a part of the platform's name in any case chooses it,
 * and one that matches none is PS_ERR_NO_DEVICE naming it and the installed
 * platforms; an options struct of an older size leaves the field unread. */
static void opencl_platform_name(void) {
  ps_context_options o;
  th_options(&o, th.backend, 0);
  char err[1024];
  ps_context *c = SENTINEL;
  o.opencl_platform_name = "";
  CHECK_STATUS(NULL, ps_context_create(&o, err, sizeof err, &c), PS_ERR_INVALID_ARGUMENT);
  CHECKF(c == NULL && th_contains_ci(err, "opencl_platform_name"), "empty name: \"%s\"", err);
  o.opencl_platform_name = "x";
  o.opencl_platform = 0;
  CHECK_STATUS(NULL, ps_context_create(&o, err, sizeof err, &c), PS_ERR_INVALID_ARGUMENT);
  CHECKF(th_contains_ci(err, "opencl_platform (0)"), "name and index: \"%s\"", err);
  /* an older struct ends before the field: what lies there is not read */
  th_options(&o, th.backend, 0);
  o.opencl_platform_name = "";
  o.struct_size = (uint32_t)offsetof(ps_context_options, opencl_platform_name);
  c = NULL;
  CHECK_OK(NULL, ps_context_create(&o, err, sizeof err, &c));
  ps_context_destroy(c);
  if (strcmp(th.backend, "opencl") != 0) return;
  th_options(&o, th.backend, 0);
  o.opencl_platform = -1;
  o.opencl_platform_name = "zz-no-such-platform";
  c = SENTINEL;
  CHECK_STATUS(NULL, ps_context_create(&o, err, sizeof err, &c), PS_ERR_NO_DEVICE);
  CHECKF(c == NULL && th_contains_ci(err, "zz-no-such-platform") && th_contains_ci(err, "installed: 0: "),
         "no such platform: \"%s\"", err);
  /* the platform of this test's context (its device name starts with it),
   * by a part of its name in the other case */
  const char *dev = ps_context_device(ctx);
  const char *colon = strchr(dev, ':');
  char part[64] = "";
  size_t n = colon ? (size_t)(colon - dev) : 0;
  if (n > 6) n = 6;
  for (size_t i = 0; i < n; i++) {
    const char ch = dev[i];
    part[i] = ch >= 'a' && ch <= 'z' ? (char)(ch - 32) : ch >= 'A' && ch <= 'Z' ? (char)(ch + 32) : ch;
  }
  if (!CHECKF(n > 0, "device name \"%s\" has no platform prefix", dev)) return;
  o.opencl_platform_name = part;
  o.opencl_device = -1;
  c = NULL;
  if (CHECK_OK(NULL, ps_context_create(&o, err, sizeof err, &c)))
    CHECKF(strncmp(ps_context_device(c), dev, (size_t)(colon - dev)) == 0, "'%s' chose \"%s\", not \"%s\"", part,
           ps_context_device(c), dev);
  ps_context_destroy(c);
}

static void status_names(void) {
#define X(name, value, text)                                                                                   \
  CHECKF(strcmp(ps_status_name(PS_##name), "PS_" #name) == 0, "ps_status_name(%d) = %s", value,              \
         ps_status_name(PS_##name));                                                                           \
  CHECKF(strcmp(ps_status_string(PS_##name), text) == 0, "ps_status_string(%d) = %s", value,                  \
         ps_status_string(PS_##name));                                                                         \
  CHECK((int)PS_##name == value);
  PS_STATUS_MAP(X)
#undef X
  CHECK(strcmp(ps_status_name((ps_status)9999), "PS_UNKNOWN_STATUS") == 0);
  CHECK(strcmp(ps_status_name((ps_status)-1), "PS_UNKNOWN_STATUS") == 0);
  CHECK(ps_status_string((ps_status)9999) != NULL);
  /* the values are the released ones */
  CHECK(PS_OK == 0 && PS_ERR_INVALID_ARGUMENT == 1 && PS_ERR_CORRUPT_DATA == 9 && PS_ERR_TYPE_MISMATCH == 10 &&
        PS_ERR_BUFFER_TOO_SMALL == 11 && PS_ERR_INTERNAL == 15);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "errors");
  ctx = th_context(0);
  for (int i = 0; i < 100; i++) good_values[i] = i;
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = PS_TYPE_INT32;
  d.n = 100;
  d.width = 32;
  d.data = good_values;
  d.data_size = sizeof good_values;
  if (!CHECK_OK(ctx, ps_column_create_for(ctx, &d, &good))) return th_finish();
  int32_t off[4];
  uint8_t codes_data[4] = {0, 1, 2, 0};
  ps_dict_desc dd;
  ps_for_desc codes;
  base_dict(&dd, off, codes_data, &codes);
  if (!CHECK_OK(ctx, ps_column_create_dict(ctx, &dd, &codes, &good_dict))) return th_finish();
  usable("setup");

  status_names();
  column_errors();
  expression_errors();
  evaluation_errors();
  context_errors();
  opencl_platform_name();
  usable("everything");

  ps_column_destroy(good_dict);
  ps_column_destroy(good);
  ps_context_destroy(ctx);
  return th_finish();
}
