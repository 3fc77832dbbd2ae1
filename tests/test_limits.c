/*
 * limits: sizes from the caller whose arithmetic would wrap (a string
 * literal or LIKE pattern of SIZE_MAX bytes, a gather of UINT64_MAX strings,
 * a buffer range past 2^64) are refused with a clear status and a message
 * that prints the caller's numbers unwrapped, and the context stays usable;
 * a corrupt code is reported with the column's place in the expression and
 * its type, never the program's internal slot number. ps_datum_format
 * (no context, so a status only) refuses a key string of SIZE_MAX bytes.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

enum { N = 40 };

/* A dictionary column over {"a", "b", "c"} (codes of width 2); code 3 in
 * row corrupt_row (if < N) lies past the dictionary. */
static ps_column *dict_column(ps_context *ctx, int corrupt_row, uint8_t *codes) {
  static const char bytes[] = "abc";
  static const int32_t offs[] = {0, 1, 2, 3};
  ps_dict_desc dict;
  ps_dict_desc_init(&dict);
  dict.count = 3;
  dict.offsets32 = offs;
  dict.bytes = (const uint8_t *)bytes;
  dict.bytes_size = 3;
  dict.sorted = 1;
  memset(codes, 0, N * 2 / 8);
  for (int i = 0; i < N; i++) {
    unsigned code = i == corrupt_row ? 3u : (unsigned)(i % 3);
    codes[i * 2 / 8] |= (uint8_t)(code << (i * 2 % 8));
  }
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = PS_TYPE_UINT8;
  d.n = N;
  d.width = 2;
  d.data = codes;
  d.data_size = N * 2 / 8;
  ps_column *col = NULL;
  CHECK_OK(ctx, ps_column_create_dict(ctx, &dict, &d, &col));
  return col;
}

/* int32 values 0..N-1 at width 8. */
static ps_column *int_column(ps_context *ctx, uint8_t *data) {
  for (int i = 0; i < N; i++) data[i] = (uint8_t)i;
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = PS_TYPE_INT32;
  d.n = N;
  d.width = 8;
  d.data = data;
  d.data_size = N;
  ps_column *col = NULL;
  CHECK_OK(ctx, ps_column_create_for(ctx, &d, &col));
  return col;
}

/* The context's message is "<status name>: " and then want. */
static void check_message(ps_context *ctx, ps_status st, const char *want, const char *what) {
  char full[512];
  snprintf(full, sizeof full, "%s: %s", ps_status_name(st), want);
  CHECKF(strcmp(ps_context_last_error(ctx), full) == 0, "%s: message\n  \"%s\"\nexpected\n  \"%s\"", what,
         ps_context_last_error(ctx), full);
}

/* The context still filters correctly after a refusal. */
static void still_usable(ps_context *ctx, ps_column *s, const char *what) {
  ps_expr *e = NULL;
  if (!CHECK_OK(ctx, ps_expr_compare(ctx, s, PS_EQ, ps_lit_str("b", 1), &e))) return;
  uint64_t count = 0;
  uint8_t bm[(N + 7) / 8];
  if (CHECK_OK(ctx, ps_filter(ctx, e, bm, sizeof bm, &count)))
    CHECKF(count == (N + 1) / 3, "%s: then 'b' matched %llu rows", what, (unsigned long long)count);
  ps_expr_destroy(e);
}

static void test_wrapping_sizes(ps_context *ctx) {
  uint8_t codes[N * 2 / 8];
  ps_column *s = dict_column(ctx, N, codes);
  if (!s) return;
  char want[256];
  const char *str = "b"; /* never read past its first byte: the length is refused first */
  const size_t huge[] = {SIZE_MAX, SIZE_MAX - 1, (size_t)PTRDIFF_MAX + 1};
  for (size_t k = 0; k < sizeof huge / sizeof *huge; k++) {
    size_t len = huge[k];
    th_case("string literal of %zu bytes", len);
    ps_expr *e = NULL;
    CHECK_STATUS(ctx, ps_expr_compare(ctx, s, PS_EQ, ps_lit_str(str, len), &e), PS_ERR_INVALID_ARGUMENT);
    snprintf(want, sizeof want, "literal: string length %zu is larger than any object (PTRDIFF_MAX = %td)", len,
             (ptrdiff_t)PTRDIFF_MAX);
    check_message(ctx, PS_ERR_INVALID_ARGUMENT, want, "compare");
    CHECK_STATUS(ctx, ps_expr_between(ctx, s, ps_lit_str("a", 1), ps_lit_str(str, len), &e), PS_ERR_INVALID_ARGUMENT);
    snprintf(want, sizeof want, "high literal: string length %zu is larger than any object (PTRDIFF_MAX = %td)", len,
             (ptrdiff_t)PTRDIFF_MAX);
    check_message(ctx, PS_ERR_INVALID_ARGUMENT, want, "between");
    ps_literal list[2] = {ps_lit_str("a", 1), ps_lit_str(str, len)};
    CHECK_STATUS(ctx, ps_expr_in(ctx, s, list, 2, &e), PS_ERR_INVALID_ARGUMENT);
    snprintf(want, sizeof want, "list[1]: string length %zu is larger than any object (PTRDIFF_MAX = %td)", len,
             (ptrdiff_t)PTRDIFF_MAX);
    check_message(ctx, PS_ERR_INVALID_ARGUMENT, want, "in");
    CHECK_STATUS(ctx, ps_expr_like(ctx, s, str, len, -1, 0, &e), PS_ERR_INVALID_ARGUMENT);
    snprintf(want, sizeof want, "pattern length %zu is larger than any object (PTRDIFF_MAX = %td)", len,
             (ptrdiff_t)PTRDIFF_MAX);
    check_message(ctx, PS_ERR_INVALID_ARGUMENT, want, "like");
    CHECK(e == NULL);
    still_usable(ctx, s, "after a huge literal");
  }

  th_case("gathering UINT64_MAX strings");
  uint32_t ids[1] = {0};
  int64_t *offsets = (int64_t *)1;
  uint8_t *bytes = (uint8_t *)1;
  CHECK_STATUS(ctx, ps_gather_strings(ctx, s, ids, PS_INDEX_UINT32, UINT64_MAX, &offsets, &bytes, NULL),
               PS_ERR_INVALID_ARGUMENT);
  check_message(ctx, PS_ERR_INVALID_ARGUMENT, "count is 18446744073709551615; no ids array holds that many",
                "gather strings");
  CHECK(offsets == (int64_t *)1 && bytes == (uint8_t *)1);
  still_usable(ctx, s, "after a huge gather");

  th_case("buffer ranges past 2^64");
  ps_buffer *buf = NULL;
  if (CHECK_OK(ctx, ps_buffer_create(ctx, 16, &buf))) {
    uint8_t host[16] = {0};
    CHECK_STATUS(ctx, ps_buffer_write(ctx, buf, 4, host, UINT64_MAX - 2), PS_ERR_BUFFER_TOO_SMALL);
    check_message(ctx, PS_ERR_BUFFER_TOO_SMALL,
                  "ps_buffer_write: 18446744073709551613 bytes at offset 4 reach past the end of the buffer of 16 "
                  "bytes",
                  "buffer write");
    CHECK_STATUS(ctx, ps_buffer_read(ctx, buf, UINT64_MAX, host, 2), PS_ERR_BUFFER_TOO_SMALL);
    check_message(ctx, PS_ERR_BUFFER_TOO_SMALL,
                  "ps_buffer_read: 2 bytes at offset 18446744073709551615 reach past the end of the buffer of 16 "
                  "bytes",
                  "buffer read");
    CHECK_STATUS(ctx, ps_buffer_read(ctx, buf, 10, host, 7), PS_ERR_BUFFER_TOO_SMALL);
    check_message(ctx, PS_ERR_BUFFER_TOO_SMALL,
                  "ps_buffer_read: 7 bytes at offset 10 reach past the end of the buffer of 16 bytes",
                  "buffer read, small");
    /* A new buffer's contents are undefined (packscan.h): write every byte
     * before reading any back, so that the read checks the offset, not
     * memory nothing wrote (which compute-sanitizer's initcheck reports). */
    for (int i = 0; i < 16; i++) host[i] = (uint8_t)(0x30 + i);
    CHECK_OK(ctx, ps_buffer_write(ctx, buf, 0, host, 16));
    uint8_t back[6] = {0};
    if (CHECK_OK(ctx, ps_buffer_read(ctx, buf, 10, back, 6)))
      for (int i = 0; i < 6; i++) CHECKF(back[i] == 0x3a + i, "byte %d of the read at offset 10: 0x%02x", i, back[i]);
    ps_buffer_destroy(buf);
  }

  th_case("ps_datum_format of a key string of SIZE_MAX bytes");
  {
    ps_datum d;
    memset(&d, 0, sizeof d);
    d.str = "abc";
    char text[8];
    memset(text, '#', sizeof text);
    for (size_t len = SIZE_MAX; len >= SIZE_MAX - 1; len--) {
      d.str_len = len; /* len + 1 wraps to 0 */
      CHECK_STATUS(NULL, ps_datum_format(&d, text, sizeof text), PS_ERR_BUFFER_TOO_SMALL);
      CHECK(text[0] == '#' && text[7] == '#');
    }
    d.str_len = 3;
    CHECK_STATUS(NULL, ps_datum_format(&d, text, 3), PS_ERR_BUFFER_TOO_SMALL);
    CHECK(CHECK_OK(NULL, ps_datum_format(&d, text, 4)) && !strcmp(text, "abc"));
  }
  ps_column_destroy(s);
}

/* A corrupt code is named by the column's place in the expression. */
static void test_corrupt_names_column(ps_context *ctx) {
  uint8_t data[N], codes[N * 2 / 8];
  const int bad_row = (int)th_below(&th.rng, N);
  th_case("corrupt code in row %d of the second column", bad_row);
  ps_column *x = int_column(ctx, data);
  ps_column *s = dict_column(ctx, bad_row, codes);
  ps_expr *lt = NULL, *eq = NULL, *both = NULL;
  if (x && s && CHECK_OK(ctx, ps_expr_compare(ctx, x, PS_GE, ps_lit_int(0), &lt)) &&
      CHECK_OK(ctx, ps_expr_compare(ctx, s, PS_EQ, ps_lit_str("c", 1), &eq)) &&
      CHECK_OK(ctx, ps_expr_and(ctx, lt, eq, &both))) {
    lt = eq = NULL;
    uint8_t bm[(N + 7) / 8];
    uint64_t count = 0;
    CHECK_STATUS(ctx, ps_filter(ctx, both, bm, sizeof bm, &count), PS_ERR_CORRUPT_DATA);
    const char *msg = ps_context_last_error(ctx);
    printf("corrupt code: %s\n", msg);
    CHECKF(strstr(msg, "column 2 of the expression (string: dictionary of 3 entries, codes of width 2)") != NULL,
           "corrupt code message does not name the column: \"%s\"", msg);
    CHECKF(strstr(msg, "slot") == NULL, "corrupt code message names an internal slot: \"%s\"", msg);
    /* The same column written first in the expression is column 1. */
    ps_expr *eq2 = NULL, *lt2 = NULL, *both2 = NULL;
    if (CHECK_OK(ctx, ps_expr_compare(ctx, s, PS_EQ, ps_lit_str("c", 1), &eq2)) &&
        CHECK_OK(ctx, ps_expr_compare(ctx, x, PS_GE, ps_lit_int(0), &lt2)) &&
        CHECK_OK(ctx, ps_expr_or(ctx, eq2, lt2, &both2))) {
      eq2 = lt2 = NULL;
      CHECK_STATUS(ctx, ps_filter(ctx, both2, bm, sizeof bm, &count), PS_ERR_CORRUPT_DATA);
      msg = ps_context_last_error(ctx);
      CHECKF(strstr(msg, "column 1 of the expression (string: dictionary of 3 entries, codes of width 2)") != NULL,
             "corrupt code message (column written first): \"%s\"", msg);
    }
    ps_expr_destroy(both2);
    ps_expr_destroy(eq2);
    ps_expr_destroy(lt2);
  }
  ps_expr_destroy(both);
  ps_expr_destroy(eq);
  ps_expr_destroy(lt);
  ps_column_destroy(s);
  ps_column_destroy(x);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "limits");
  ps_context *ctx = th_context(0);
  test_wrapping_sizes(ctx);
  test_corrupt_names_column(ctx);
  ps_context_destroy(ctx);
  return th_finish();
}
