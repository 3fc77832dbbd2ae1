/*
 * like_device: LIKE where the dictionary pass runs on the device (backends
 * with a like_dict entry: OpenCL, CUDA; the reference backend matches on the
 * host, so there this is one more host test). OpenCL on a CPU device would
 * match on the host: the internal option opencl_like=device is set unless
 * PACKSCAN_TEST_OPTIONS says otherwise. Every case is compared bit for
 * bit with the oracle and the reference backend (runner.h), several also with
 * hand-written expectations:
 *  - patterns of exactly PS_LIKE_NFA_MAX_TOKENS (63) tokens (device) and one
 *    more (host fallback), which select the same rows of the dictionary;
 *  - empty strings and empty dictionary entries; invalid UTF-8 with '_';
 *    escapes; NOT LIKE with nulls; a column whose codes start past entry 0;
 *  - a dictionary of 1000003 entries (not a multiple of 32 nor of any block
 *    or work-group size), with several LIKEs in one tree;
 *  - host allocation failures at every allocation of the first evaluation
 *    (which lowers, copies the dictionary to the device and matches there):
 *    PS_ERR_OUT_OF_MEMORY with a message, nothing leaked, and the same
 *    expression evaluates correctly afterwards. (A failing device
 *    allocation cannot be injected through the public API; both paths leave
 *    the column the same way: see ps_column_device_dict.)
 */
#include <stdlib.h>
#include <string.h>

#include "runner.h"

static trun tr;

static int add_dict(const tstrs *l, uint32_t w, uint64_t m, const uint64_t *codes, uint64_t n, const uint8_t *valid) {
  return tr_add(&tr, tcol_dict(l, 0, 0, PS_TYPE_UINT32, n, w, m, codes, valid, &th.rng));
}

static void check(int col, const char *pat, size_t len, int escape, int negate, const char *label) {
  onode *t = on_like(col, pat, len, escape, negate);
  tr_check(&tr, t, label);
  on_free(t);
}

/* bits[i] == '1' where row i must be selected (checked against the oracle,
 * then the backends against the oracle). */
static void expect_bits(int col, const char *pat, int escape, int negate, const char *label, const char *bits) {
  onode *t = on_like(col, pat, strlen(pat), escape, negate);
  uint64_t n = tr.cols[col]->n;
  CHECKF(strlen(bits) == n, "%s: test bug: %zu expected bits for %llu rows", label, strlen(bits),
         (unsigned long long)n);
  for (uint64_t i = 0; i < n; i++)
    if (!CHECKF((oracle_row(tr.cols, t, i) == K_TRUE) == (bits[i] == '1'), "%s: the ORACLE disagrees at row %llu",
                label, (unsigned long long)i))
      break;
  tr_check(&tr, t, label);
  on_free(t);
}

static char *repeat(char c, size_t n, const char *tail) {
  size_t tl = strlen(tail);
  char *s = th_malloc(n + tl + 1);
  memset(s, c, n);
  memcpy(s + n, tail, tl + 1);
  return s;
}

static void token_limit(void) {
  th_case("token limit");
  tstrs l = {0};
  /* entries 0..3: 62 'a' then "b", "\xc3\xa9", "\xff\xfe", "a"; 4: 61 'a' then
   * "b"; 5: "" */
  const char *tails[] = {"b", "\xc3\xa9", "\xff\xfe", "a"};
  for (size_t i = 0; i < 4; i++) {
    char *s = repeat('a', 62, tails[i]);
    tstrs_push(&l, s, strlen(s));
    free(s);
  }
  char *s = repeat('a', 61, "b");
  tstrs_push(&l, s, strlen(s));
  free(s);
  tstrs_push(&l, "", 0);
  uint64_t codes[] = {0, 1, 2, 3, 4, 5, 0, 3, 1};
  uint8_t valid[] = {0x7f, 0x01}; /* row 7 null */
  int c = add_dict(&l, 3, 0, codes, 9, valid);
  tstrs_free(&l);
  if (c < 0) return;
  /* 62 'a' then '%': 63 tokens (device); 62 'a' then '_%': 64 tokens (host).
   * No entry is exactly 62 'a', so both select the same rows. */
  char *p63 = repeat('a', 62, "%"), *p64 = repeat('a', 62, "_%");
  expect_bits(c, p63, -1, 0, "63 tokens", "111100101");
  expect_bits(c, p64, -1, 0, "64 tokens (host fallback)", "111100101");
  expect_bits(c, p63, -1, 1, "NOT LIKE, 63 tokens", "000011000");
  expect_bits(c, p64, -1, 1, "NOT LIKE, 64 tokens", "000011000");
  free(p63);
  free(p64);
  /* exactly 63 literal tokens: the accepting state is bit 63 */
  char *lit63 = repeat('a', 62, "b");
  expect_bits(c, lit63, -1, 0, "63 literal tokens", "100000100");
  free(lit63);
  char *lit64 = repeat('a', 62, "\xc3\xa9");
  expect_bits(c, lit64, -1, 0, "64 literal tokens (host fallback)", "010000001");
  free(lit64);
  /* 63 tokens through escapes: '\%' is one token */
  char *esc = repeat('a', 61, "\\%%");
  check(c, esc, strlen(esc), '\\', 0, "63 tokens with an escape");
  free(esc);
  tr_clear(&tr);
}

static void small_cases(void) {
  th_case("empty strings, invalid UTF-8, escapes, nulls");
  static const char *const strs[] = {
      "",     "",         "a",        "ab",   "\xff",         "\xc3\xa9",
      "\xc3", "\xe2\x82", "a%b",      "a_b",  "\xed\xa0\x80", "\xf0\x9d\x84\x9e",
      "",     "ba",       "\x80\x80", "a\\b",
  };
  enum { D = sizeof strs / sizeof *strs, N = 40 };
  tstrs l = {0};
  for (size_t i = 0; i < D; i++) tstrs_push(&l, strs[i], strlen(strs[i]));
  uint64_t codes[N];
  uint8_t valid[(N + 7) / 8];
  memset(valid, 0xff, sizeof valid);
  for (int i = 0; i < N; i++) {
    codes[i] = (uint64_t)i % D;
    if (i % 7 == 3) valid[i / 8] &= (uint8_t) ~(1u << (i % 8));
  }
  int c = add_dict(&l, 4, 0, codes, N, valid);
  /* the same dictionary seen from entry 3 on (codes 0..12 = entries 3..15) */
  uint64_t codes_m[N];
  for (int i = 0; i < N; i++) codes_m[i] = (uint64_t)i % (D - 3);
  int cm = add_dict(&l, 4, 3, codes_m, N, valid);
  tstrs_free(&l);
  if (c < 0 || cm < 0) return;
  static const struct {
    const char *pat;
    int escape;
  } pats[] = {
      {"", -1},         {"%", -1},     {"_", -1},     {"__", -1},    {"___", -1},     {"_%", -1},
      {"%_", -1},       {"a%", -1},    {"%b", -1},    {"a_b", -1},   {"a\\%b", '\\'}, {"a\\_b", '\\'},
      {"a\\\\b", '\\'}, {"a!%b", '!'}, {"\xff", -1},  {"\xc3_", -1}, {"_\xa9", -1},   {"\xe2%", -1},
      {"%\x82", -1},    {"_\x80", -1}, {"\x80_", -1}, {"%\x9e", -1}, {"\xf0___", -1}, {"%\xed_\x80", -1},
      {"%a%", -1},      {"%%a%%", -1}, {"a\\b", -1},  {"%\\", -1},   {"\\_%", '\\'},  {"%\\%", '\\'},
  };
  for (size_t k = 0; k < sizeof pats / sizeof *pats; k++) {
    char label[96];
    for (int neg = 0; neg < 2; neg++) {
      snprintf(label, sizeof label, "%sLIKE pattern #%zu", neg ? "NOT " : "", k);
      check(c, pats[k].pat, strlen(pats[k].pat), pats[k].escape, neg, label);
      snprintf(label, sizeof label, "%sLIKE pattern #%zu, codes from entry 3", neg ? "NOT " : "", k);
      check(cm, pats[k].pat, strlen(pats[k].pat), pats[k].escape, neg, label);
    }
  }
  tr_clear(&tr);

  th_case("hand-written: empty entries and nulls");
  tstrs e = {0};
  tstrs_push(&e, "", 0);
  tstrs_push(&e, "x", 1);
  tstrs_push(&e, "", 0);
  tstrs_push(&e, "\xff", 1);
  uint64_t ec[] = {0, 1, 2, 3, 0, 1, 2, 3};
  uint8_t ev[] = {0xef}; /* row 4 null */
  c = add_dict(&e, 2, 0, ec, 8, ev);
  tstrs_free(&e);
  if (c < 0) return;
  expect_bits(c, "", -1, 0, "LIKE '' on empty entries", "10100010");
  expect_bits(c, "", -1, 1, "NOT LIKE '' on empty entries", "01010101");
  expect_bits(c, "_", -1, 0, "LIKE '_' (one invalid byte is a character)", "01010101");
  expect_bits(c, "%", -1, 1, "NOT LIKE '%' with a null", "00000000");
  tr_clear(&tr);
}

/* Random strings from pieces (ASCII, multi-byte, invalid bytes). */
static void random_string(th_rng *r, char *buf, size_t *len) {
  static const char *const pieces[] = {"a", "b", "c", "ab", "abc", "\xc3\xa9", "\xe2\x82\xac", "\xff", "_", "%"};
  size_t n = 0, count = (size_t)th_below(r, 9);
  for (size_t i = 0; i < count; i++) {
    const char *p = TH_PICK(r, pieces);
    size_t pl = strlen(p);
    memcpy(buf + n, p, pl);
    n += pl;
  }
  *len = n;
}

static void big_dictionary(void) {
  /* CI size (PACKSCAN_TEST_QUICK): a tenth, still prime (no multiple of any block). */
  const uint64_t d = th.quick ? 100003 : 1000003, n = th.quick ? 110000 : 1100000;
  th_case("dictionary of %llu entries", (unsigned long long)d);
  /* filled directly: tstrs_push grows its arrays one entry at a time */
  tstrs l = {0};
  l.s = th_calloc(d, sizeof *l.s);
  l.len = th_calloc(d, sizeof *l.len);
  for (uint64_t i = 0; i < d; i++) {
    char s[64];
    random_string(&th.rng, s, &l.len[i]);
    l.s[i] = th_malloc(l.len[i] + 1);
    memcpy(l.s[i], s, l.len[i]);
    l.count++;
  }
  uint64_t *codes = th_calloc(n, sizeof *codes);
  uint8_t *valid = th_calloc((n + 7) / 8, 1);
  for (uint64_t i = 0; i < n; i++) {
    codes[i] = i < d ? i : th_below(&th.rng, d); /* every entry at least once */
    if (!th_chance(&th.rng, 3)) valid[i / 8] |= (uint8_t)(1u << (i % 8));
  }
  int c = add_dict(&l, 20, 0, codes, n, valid);
  /* the last 5 entries missing from the codes' range: M = 5 */
  for (uint64_t i = 0; i < n; i++) codes[i] = codes[i] % (d - 5);
  int cm = add_dict(&l, 20, 5, codes, n, valid);
  tstrs_free(&l);
  free(codes);
  free(valid);
  if (c < 0 || cm < 0) return;
  static const char *const pats[] = {"%abc%", "a_c%", "%\xc3\xa9_", "%b%a%", "_", "%\xff"};
  for (size_t k = 0; k < sizeof pats / sizeof *pats; k++) {
    char label[96];
    snprintf(label, sizeof label, "big dictionary: LIKE '%s'", pats[k]);
    check(c, pats[k], strlen(pats[k]), -1, 0, label);
    snprintf(label, sizeof label, "big dictionary, M = 5: NOT LIKE '%s'", pats[k]);
    check(cm, pats[k], strlen(pats[k]), -1, 1, label);
  }
  /* several LIKEs (both columns, one pattern twice) in one tree */
  onode *t = on_or(on_and(on_like(c, "%abc%", 5, -1, 0), on_like(cm, "%\xc3\xa9%", 4, -1, 1)),
                   on_and(on_like(c, "b%", 2, -1, 0), on_like(c, "%abc%", 5, -1, 1)));
  tr_check(&tr, t, "big dictionary: tree of four LIKEs");
  on_free(t);
  tr_clear(&tr);
}

/* ---- host allocation failures --------------------------------------------------------- */

typedef struct failing {
  long left; /* allocations that still succeed; < 0: all */
  unsigned long allocs, frees, failed;
} failing;

static void *fail_alloc(void *opaque, size_t size) {
  failing *f = opaque;
  if (f->left == 0) {
    f->failed++;
    return NULL;
  }
  if (f->left > 0) f->left--;
  void *p = malloc(size ? size : 1);
  if (p) f->allocs++;
  return p;
}

static void fail_free(void *opaque, void *p) {
  failing *f = opaque;
  if (p) f->frees++;
  free(p);
}

static void allocation_failures(void) {
  th_case("host allocation failures during the first LIKE evaluation");
  failing f = {-1, 0, 0, 0};
  ps_context_options o;
  th_options(&o, th.backend, 0);
  o.allocator.alloc = fail_alloc;
  o.allocator.free = fail_free;
  o.allocator.opaque = &f;
  ps_context *ctx = NULL;
  if (!CHECK_OK(NULL, ps_context_create(&o, NULL, 0, &ctx))) return;
  th_apply_options(ctx);
  static const char *const strs[] = {"abc",
                                     "xabcx",
                                     "",
                                     "\303\251abc", /* octal: a hex escape would take the "abc" */
                                     "ab",
                                     "cab",
                                     "abcabc"};
  enum { D = 7, N = 100 };
  int32_t off[D + 1] = {0};
  char bytes[64];
  for (int i = 0; i < D; i++) {
    size_t len = strlen(strs[i]);
    memcpy(bytes + off[i], strs[i], len);
    off[i + 1] = off[i] + (int32_t)len;
  }
  uint8_t codes[N], want[(N + 7) / 8] = {0};
  for (int i = 0; i < N; i++) {
    codes[i] = (uint8_t)(i % D);
    if (strstr(strs[i % D], "abc")) want[i / 8] |= (uint8_t)(1u << (i % 8));
  }
  ps_dict_desc dd;
  ps_dict_desc_init(&dd);
  dd.count = D;
  dd.offsets32 = off;
  dd.bytes = (const uint8_t *)bytes;
  dd.bytes_size = (uint64_t)off[D];
  ps_for_desc cd;
  ps_for_desc_init(&cd);
  cd.type = PS_TYPE_UINT8;
  cd.n = N;
  cd.width = 8;
  cd.data = codes;
  cd.data_size = N;
  int succeeded = 0;
  long injected = 0;
  for (long k = 0; k < 10000 && !succeeded; k++) {
    /* a fresh column and expression each time: the first evaluation is the
     * one that copies the dictionary and matches it */
    f.left = -1;
    ps_column *col = NULL;
    ps_expr *e = NULL;
    if (!CHECK_OK(ctx, ps_column_create_dict(ctx, &dd, &cd, &col))) break;
    if (!CHECK_OK(ctx, ps_expr_like(ctx, col, "%abc%", 5, -1, 0, &e))) {
      ps_column_destroy(col);
      break;
    }
    uint8_t got[(N + 7) / 8];
    memset(got, 0xAA, sizeof got);
    uint64_t count = 0;
    f.left = k;
    f.failed = 0;
    ps_status st = ps_filter(ctx, e, got, sizeof got, &count);
    f.left = -1;
    if (st == PS_OK) {
      succeeded = 1;
      injected = k;
      CHECKF(f.failed == 0, "ps_filter succeeded although an allocation failed");
    } else {
      /* the reference backend's device memory comes from the same allocator */
      CHECKF(st == PS_ERR_OUT_OF_MEMORY || (th_is_reference() && st == PS_ERR_DEVICE_OUT_OF_MEMORY),
             "failing allocation #%ld: %s (%s)", k, ps_status_name(st), ps_context_last_error(ctx));
      CHECKF(ps_context_last_error(ctx)[0] != 0, "failing allocation #%ld: no message", k);
      uint8_t untouched[(N + 7) / 8];
      memset(untouched, 0xAA, sizeof untouched);
      CHECKF(memcmp(got, untouched, sizeof got) == 0, "failing allocation #%ld: the bitmap was written", k);
      /* the same expression and column work afterwards */
      st = ps_filter(ctx, e, got, sizeof got, &count);
      CHECKF(st == PS_OK, "after failing allocation #%ld: %s (%s)", k, ps_status_name(st), ps_context_last_error(ctx));
    }
    if (st == PS_OK) CHECKF(memcmp(got, want, sizeof got) == 0, "after failing allocation #%ld: wrong bitmap", k);
    ps_expr_destroy(e);
    ps_column_destroy(col);
  }
  CHECKF(succeeded, "ps_filter never succeeded");
  printf("like_device: the first evaluation failed cleanly at each of its %ld host allocations\n", injected);
  ps_context_destroy(ctx);
  CHECKF(f.allocs == f.frees, "allocator: %lu allocations, %lu frees", f.allocs, f.frees);
  th_case("%s", "");
}

int main(int argc, char **argv) {
  th_init(argc, argv, "like_device");
  /* OpenCL on a CPU (PoCL in CI) matches on the host unless told otherwise */
  th_test_options("opencl_like=device");
  ps_context *ctx = th_context(0);
  ps_context *ref = th_is_reference() ? NULL : th_reference_context(0);
  tr_init(&tr, ctx, ref);
  token_limit();
  small_cases();
  big_dictionary();
  tr_clear(&tr);
  allocation_failures();
  ps_context_destroy(ref);
  ps_context_destroy(ctx);
  return th_finish();
}
