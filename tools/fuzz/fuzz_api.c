/* libFuzzer target: the public API's descriptors and expression building, on
 * the reference backend. The input is a little program: each step takes an
 * opcode byte and its operands from the input and makes one API call: a FOR
 * column from a fuzzed ps_for_desc, a dictionary column from a fuzzed
 * ps_dict_desc (offsets, bytes, sorted flag), a comparison, BETWEEN, IN or
 * LIKE with fuzzed literals, IS NULL, AND/OR/NOT, or a filter.
 *
 * Every buffer handed to the library is exactly as large as the descriptor
 * says (so AddressSanitizer catches any read past a declared size), and the
 * library's promises are checked on every call: a failed call leaves its out
 * parameter untouched and says something in the context's message; a filter
 * writes ceil(n/8) bytes, zero bits past n, a count equal to the bitmap's
 * popcount, the same rows as ps_filter_count and ps_filter_mask, and on
 * failure leaves the bitmap untouched. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "packscan.h"

#define MAX_COLS 6
#define MAX_EXPRS 8
#define MAX_STEPS 48
#define MAX_ROWS 2048
#define MAX_DICT 96

/* n bytes for a buffer the library reads: from the input while it lasts,
 * then a repeating pattern (so a short input still fills large columns). */
static void fill(input *in, uint8_t *dst, size_t n) {
  size_t k = n < in->left ? n : in->left;
  if (k) memcpy(dst, in->p, k);
  in->p += k;
  in->left -= k;
  for (size_t i = k; i < n; i++) dst[i] = (uint8_t)(i * 0x9Du + 0x3Bu);
}

/* A declared size near the correct one: usually exact, sometimes off by a
 * little either way or replaced by a fuzzed value (which the library must
 * reject before it reads anything). */
static uint64_t near_size(input *in, uint64_t exact) {
  uint8_t how = (uint8_t)take(in, 1);
  if (how < 200) return exact;
  if (how < 230) return exact + (uint64_t)(how - 215); /* exact-15 .. exact+14 */
  return take(in, 2);
}

/* Caller memory that must outlive the columns built over it. */
typedef struct {
  void *ptr[1024];
  int n;
} arena;

static void *keep(arena *a, size_t size) {
  if (a->n == (int)(sizeof a->ptr / sizeof a->ptr[0])) return NULL;
  void *p = malloc(size ? size : 1);
  if (!p) abort();
  a->ptr[a->n++] = p;
  return p;
}

static ps_context *ctx;

/* A failed call: its out parameter still holds the sentinel and the context
 * says what went wrong. */
static void check_failure(ps_status st, const void *out, const void *sentinel) {
  if (st == PS_OK) abort();
  if (!ps_status_name(st)) abort(); /* a status that is not in the list */
  if (out != sentinel) abort();
  const char *msg = ps_context_last_error(ctx);
  if (!msg || !msg[0]) abort();
}

static int read_for_desc(input *in, arena *a, int codes_only, ps_for_desc *d) {
  ps_for_desc_init(d);
  uint8_t t = (uint8_t)take(in, 1);
  d->type = codes_only ? (ps_type)(PS_TYPE_UINT8 + t % 4) : (ps_type)(t % 13); /* 0, 11, 12: invalid */
  if (t >= 250) d->struct_size = (uint32_t)take(in, 1);                        /* an older or wrong struct size */
  uint8_t w = (uint8_t)take(in, 1);
  d->width = w <= 64 ? w : (w < 250 ? w % 65 : w); /* mostly 0..64, sometimes past it */
  uint8_t sc = (uint8_t)take(in, 1);
  d->scale = sc < 240 ? sc % 20 : sc;
  d->n = take(in, 2) % (MAX_ROWS + 1);
  d->reference.u = take(in, 8);
  uint64_t bytes = (d->n * (d->width <= 64 ? d->width : 64) + 7) / 8;
  d->data_size = near_size(in, bytes);
  if (d->data_size > 8 * (uint64_t)MAX_ROWS + 64) d->data_size = bytes;
  uint8_t *data = keep(a, d->data_size);
  if (!data) return 0;
  fill(in, data, d->data_size);
  d->data = take(in, 1) < 250 ? data : NULL;
  if (take(in, 1) & 1) {
    d->validity_size = near_size(in, (d->n + 7) / 8);
    if (d->validity_size > MAX_ROWS) d->validity_size = (d->n + 7) / 8;
    uint8_t *v = keep(a, d->validity_size);
    if (!v) return 0;
    fill(in, v, d->validity_size);
    d->validity = v;
  }
  return 1;
}

static int read_dict_desc(input *in, arena *a, ps_dict_desc *d) {
  ps_dict_desc_init(d);
  uint8_t k = (uint8_t)take(in, 1);
  if (k >= 250) d->struct_size = (uint32_t)take(in, 1);
  d->count = take(in, 1) % (MAX_DICT + 1);
  d->bytes_size = take(in, 2) % 512;
  uint8_t *bytes = keep(a, d->bytes_size);
  if (!bytes) return 0;
  fill(in, bytes, d->bytes_size);
  d->bytes = bytes;
  d->sorted = (int)(take(in, 1) % 3) - 1 + (k & 1); /* -1 .. 1, nonzero means sorted */
  /* Offsets: mostly well formed (ascending, inside bytes), else fuzzed. The
   * array has room for d+1 offsets of either width, so that declaring both
   * arrays (invalid) is still in bounds whichever one is read. */
  int wide = k & 2, fuzzed = (k & 0x1c) == 0x1c, which = (k >> 5) & 3;
  size_t nofs = (size_t)d->count + 1;
  void *ofs = keep(a, nofs * 8);
  if (!ofs) return 0;
  int64_t at = 0;
  for (size_t i = 0; i < nofs; i++) {
    int64_t v;
    if (fuzzed) {
      v = wide ? (int64_t)take(in, 8) : (int32_t)take(in, 4);
    } else {
      if (i) at += (int64_t)(take(in, 1) % 9);
      if (at > (int64_t)d->bytes_size) at = (int64_t)d->bytes_size;
      v = at;
    }
    if (wide)
      ((int64_t *)ofs)[i] = v;
    else
      ((int32_t *)ofs)[i] = (int32_t)v;
  }
  if (which == 2) { /* both arrays: invalid */
    d->offsets32 = ofs;
    d->offsets64 = ofs;
  } else if (which != 3) { /* 3: neither, invalid */
    if (wide)
      d->offsets64 = ofs;
    else
      d->offsets32 = ofs;
  }
  return 1;
}

/* A literal whose string bytes live in the arena (the library copies them). */
static ps_literal read_literal(input *in, arena *a) {
  uint8_t k = (uint8_t)take(in, 1);
  ps_literal l;
  memset(&l, 0, sizeof l);
  switch (k % 5) {
    case 0:
      l = ps_lit_int((int64_t)take(in, 8));
      break;
    case 1:
      l = ps_lit_uint(take(in, 8));
      break;
    case 2: {
      uint64_t bits = take(in, 8);
      double f;
      memcpy(&f, &bits, sizeof f); /* every double: NaNs, infinities, subnormals */
      l = ps_lit_float(f);
      break;
    }
    case 3: {
      size_t len = (size_t)(take(in, 1) % 24);
      char *s = keep(a, len);
      if (!s) break;
      fill(in, (uint8_t *)s, len);
      l = ps_lit_str(s, len);
      break;
    }
    default:
      l.kind = (ps_literal_kind)(k >> 3);
      break; /* mostly not a kind at all */
  }
  return l;
}

static void filter_and_check(ps_expr *e) {
  uint64_t n = ps_expr_rows(e), bytes = (n + 7) / 8, count = ~0ull, count2 = ~0ull, count3 = ~0ull;
  uint8_t *bm = malloc(bytes + 8), *mask = malloc(n + 1);
  if (!bm || !mask) abort();
  memset(bm, 0xA5, bytes + 8);
  ps_status st = ps_filter(ctx, e, bm, bytes + 4, &count);
  if (st != PS_OK) {
    for (uint64_t i = 0; i < bytes + 8; i++)
      if (bm[i] != 0xA5) abort(); /* untouched after an error */
    if (!ps_context_last_error(ctx)[0]) abort();
    if (st != PS_ERR_CORRUPT_DATA && st != PS_ERR_LIMIT && st != PS_ERR_INVALID_ARGUMENT &&
        st != PS_ERR_TYPE_MISMATCH && st != PS_ERR_OVERFLOW)
      abort();
  } else {
    for (uint64_t i = bytes; i < bytes + 8; i++)
      if (bm[i] != 0xA5) abort();                     /* nothing past ceil(n/8) */
    if (n % 8 && (bm[bytes - 1] >> (n % 8))) abort(); /* bits past n are zero */
    uint64_t pop = 0;
    for (uint64_t i = 0; i < bytes; i++) pop += (uint64_t)__builtin_popcount(bm[i]);
    if (pop != count) abort();
    if (ps_filter_count(ctx, e, &count2) != PS_OK || count2 != count) abort();
    if (ps_filter_mask(ctx, e, mask, n, &count3) != PS_OK || count3 != count) abort();
    for (uint64_t i = 0; i < n; i++)
      if (mask[i] != ((bm[i / 8] >> (i % 8)) & 1)) abort();
  }
  /* A bitmap one byte too small is refused, whatever the expression. */
  if (bytes && ps_filter(ctx, e, bm, bytes - 1, NULL) == PS_OK) abort();
  free(bm);
  free(mask);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!ctx) {
    ps_context_options o;
    ps_context_options_init(&o);
    o.backend = "reference";
    if (ps_context_create(&o, NULL, 0, &ctx) != PS_OK) abort();
  }
  input in = {data, size};
  arena a = {{0}, 0};
  ps_column *cols[MAX_COLS];
  ps_expr *exprs[MAX_EXPRS];
  int ncols = 0, nexprs = 0;
  int sentinel_obj;
  void *const sentinel = &sentinel_obj;

  for (int step = 0; step < MAX_STEPS && in.left; step++) {
    uint8_t op = (uint8_t)take(&in, 1);
    ps_column *c = ncols ? cols[take(&in, 1) % (uint64_t)ncols] : NULL;
    ps_expr *out = sentinel;
    ps_status st = PS_OK;
    int made_expr = 1;
    switch (op % 11) {
      case 0:
      case 1: { /* a FOR column, or a dictionary column (op 1) */
        made_expr = 0;
        if (ncols == MAX_COLS) break;
        ps_for_desc d;
        ps_dict_desc dd;
        if (!read_for_desc(&in, &a, op % 11 == 1, &d)) break;
        if (op % 11 == 1 && !read_dict_desc(&in, &a, &dd)) break;
        ps_column *col = sentinel;
        st = op % 11 == 1 ? ps_column_create_dict(ctx, &dd, &d, &col) : ps_column_create_for(ctx, &d, &col);
        if (st != PS_OK) {
          check_failure(st, col, sentinel);
        } else {
          if (!col || col == sentinel || ps_column_rows(col) != d.n) abort();
          cols[ncols++] = col;
        }
        break;
      }
      case 2: {
        if (!c) {
          made_expr = 0;
          break;
        }
        ps_literal l = read_literal(&in, &a);
        st = ps_expr_compare(ctx, c, (ps_cmp)(take(&in, 1) % 7), l, &out);
        break;
      }
      case 3: {
        if (!c) {
          made_expr = 0;
          break;
        }
        ps_column *b = cols[take(&in, 1) % (uint64_t)ncols];
        st = ps_expr_compare_columns(ctx, c, (ps_cmp)(take(&in, 1) % 7), b, &out);
        break;
      }
      case 4: {
        if (!c) {
          made_expr = 0;
          break;
        }
        ps_literal lo = read_literal(&in, &a), hi = read_literal(&in, &a);
        st = ps_expr_between(ctx, c, lo, hi, &out);
        break;
      }
      case 5: {
        if (!c) {
          made_expr = 0;
          break;
        }
        size_t count = (size_t)(take(&in, 1) % 12);
        ps_literal list[12];
        for (size_t i = 0; i < count; i++) list[i] = read_literal(&in, &a);
        st = ps_expr_in(ctx, c, count ? list : NULL, count, &out);
        break;
      }
      case 6: {
        if (!c) {
          made_expr = 0;
          break;
        }
        size_t len = (size_t)(take(&in, 1) % 32);
        char *pat = keep(&a, len);
        if (!pat) {
          made_expr = 0;
          break;
        }
        fill(&in, (uint8_t *)pat, len);
        uint8_t esc = (uint8_t)take(&in, 1);
        int escape = esc < 128 ? (esc < 64 ? '\\' : (int)esc) : (esc < 250 ? -1 : 200 + esc);
        st = ps_expr_like(ctx, c, pat, len, escape, (int)(take(&in, 1) & 1), &out);
        break;
      }
      case 7:
        if (!c) {
          made_expr = 0;
          break;
        }
        st = ps_expr_is_null(ctx, c, (int)(take(&in, 1) & 1), &out);
        break;
      case 8: { /* AND / OR / NOT of the last expressions; operands are owned on success only */
        uint8_t how = (uint8_t)take(&in, 1) % 3;
        if (nexprs < (how == 2 ? 1 : 2)) {
          made_expr = 0;
          break;
        }
        if (how == 2) {
          st = ps_expr_not(ctx, exprs[nexprs - 1], &out);
          if (st == PS_OK) nexprs--;
        } else {
          ps_expr *x = exprs[nexprs - 2], *y = exprs[nexprs - 1];
          st = how ? ps_expr_or(ctx, x, y, &out) : ps_expr_and(ctx, x, y, &out);
          if (st == PS_OK) nexprs -= 2;
        }
        break;
      }
      case 9:
        made_expr = 0;
        if (nexprs) filter_and_check(exprs[take(&in, 1) % (uint64_t)nexprs]);
        break;
      default: /* NULL arguments are refused, never dereferenced */
        made_expr = 0;
        if (ps_expr_compare(ctx, NULL, PS_EQ, ps_lit_int(0), &out) == PS_OK || out != sentinel) abort();
        if (c && ps_expr_compare(ctx, c, PS_EQ, ps_lit_int(0), NULL) == PS_OK) abort();
        if (ps_expr_and(ctx, NULL, NULL, &out) == PS_OK || out != sentinel) abort();
        break;
    }
    if (!made_expr) continue;
    if (st != PS_OK) {
      check_failure(st, out, sentinel);
    } else {
      if (!out || out == sentinel) abort();
      if (nexprs == MAX_EXPRS) {
        ps_expr_destroy(out);
      } else {
        exprs[nexprs++] = out;
      }
    }
  }
  for (int i = 0; i < nexprs; i++) {
    filter_and_check(exprs[i]);
    ps_expr_destroy(exprs[i]);
  }
  for (int i = 0; i < ncols; i++) ps_column_destroy(cols[i]);
  for (int i = 0; i < a.n; i++) free(a.ptr[i]);
  return 0;
}
