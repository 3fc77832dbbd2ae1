#include "runner.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

void tr_init(trun *r, ps_context *ctx, ps_context *ref) {
  memset(r, 0, sizeof *r);
  r->ctx = ctx;
  r->ref = ref;
}

int tr_add(trun *r, tcol *c) {
  if (r->ncols >= TR_MAX_COLS) {
    th_fail(__FILE__, __LINE__, "test bug: more than %d columns", TR_MAX_COLS);
    tcol_free(c);
    return -1;
  }
  size_t i = r->ncols;
  snprintf(c->name, sizeof c->name, "c%zu", i);
  char desc[256];
  ps_status st = tcol_create(r->ctx, c, &r->h[i]);
  if (!CHECKF(st == PS_OK, "creating column %s failed on %s: %s: %s", tcol_describe(c, desc, sizeof desc),
              ps_context_backend(r->ctx), ps_status_name(st), ps_context_last_error(r->ctx))) {
    tcol_free(c);
    return -1;
  }
  if (r->ref) {
    st = tcol_create(r->ref, c, &r->hr[i]);
    if (!CHECKF(st == PS_OK, "creating column %s failed on reference: %s: %s",
                tcol_describe(c, desc, sizeof desc), ps_status_name(st), ps_context_last_error(r->ref))) {
      ps_column_destroy(r->h[i]);
      tcol_free(c);
      return -1;
    }
  }
  r->cols[i] = c;
  r->ncols++;
  return (int)i;
}

void tr_clear(trun *r) {
  for (size_t i = 0; i < r->ncols; i++) {
    ps_column_destroy(r->h[i]);
    ps_column_destroy(r->hr[i]);
    tcol_free(r->cols[i]);
    r->h[i] = r->hr[i] = NULL;
    r->cols[i] = NULL;
  }
  r->ncols = 0;
}

static void mark(const onode *t, int *used) {
  if (!t) return;
  if (t->col >= 0) used[t->col] = 1;
  if (t->col_b >= 0) used[t->col_b] = 1;
  mark(t->a, used);
  mark(t->b, used);
}

void tr_print_case(trun *r, const onode *t) {
  printf("  tree: ");
  on_print(stdout, t, r->cols);
  printf("\n");
  int used[TR_MAX_COLS] = {0};
  mark(t, used);
  for (size_t i = 0; i < r->ncols; i++) {
    if (!used[i]) continue;
    char desc[256];
    printf("  column %s\n", tcol_describe(r->cols[i], desc, sizeof desc));
  }
}

static int details_printed;

static int check_one(trun *r, ps_context *ctx, ps_column **h, const onode *t, uint64_t n,
                     const uint8_t *want, uint64_t want_count, const char *label) {
  const char *be = ps_context_backend(ctx);
  ps_expr *e = NULL;
  ps_status st = on_build(ctx, t, h, &e);
  if (!CHECKF(st == PS_OK, "%s [%s]: building the expression failed: %s: %s", label, be,
              ps_status_name(st), ps_context_last_error(ctx))) {
    if (details_printed++ < 10) tr_print_case(r, t);
    return 0;
  }
  int ok = 1;
  ok &= CHECKF(ps_expr_rows(e) == n, "%s [%s]: ps_expr_rows = %" PRIu64 ", expected %" PRIu64, label,
               be, ps_expr_rows(e), n);
  const uint64_t nb = (n + 7) / 8, guard = 16;
  uint8_t *got = th_malloc(nb + guard);
  memset(got, 0xAB, nb + guard);
  uint64_t count = 0xC0FFEEull;
  /* Alternate between an exact buffer and a larger one: bytes past ceil(n/8)
   * must stay untouched either way. */
  uint64_t given = (r->filters++ & 1) ? nb + guard : nb;
  st = ps_filter(ctx, e, got, given, &count);
  if (!CHECKF(st == PS_OK, "%s [%s]: ps_filter failed: %s: %s", label, be, ps_status_name(st),
              ps_context_last_error(ctx))) {
    if (details_printed++ < 10) tr_print_case(r, t);
    free(got);
    ps_expr_destroy(e);
    return 0;
  }
  uint64_t first = UINT64_MAX;
  for (uint64_t i = 0; i < nb && first == UINT64_MAX; i++) {
    if (got[i] != want[i]) {
      for (unsigned b = 0; b < 8; b++)
        if (((got[i] ^ want[i]) >> b) & 1) {
          first = i * 8 + b;
          break;
        }
    }
  }
  if (first != UINT64_MAX) {
    ok = 0;
    uint64_t diffs = 0;
    for (uint64_t i = 0; i < nb; i++) diffs += (uint64_t)__builtin_popcount((unsigned)(got[i] ^ want[i]));
    if (first >= n)
      th_fail(__FILE__, __LINE__, "%s [%s]: bitmap bit %" PRIu64 " past n=%" PRIu64 " is set (padding must be 0)",
              label, be, first, n);
    else
      th_fail(__FILE__, __LINE__,
              "%s [%s]: bitmap differs from the oracle at row %" PRIu64 " (expected %d, got %d); %" PRIu64
              " rows differ of n=%" PRIu64,
              label, be, first, (want[first / 8] >> (first % 8)) & 1, (got[first / 8] >> (first % 8)) & 1,
              diffs, n);
    if (details_printed++ < 10) {
      tr_print_case(r, t);
      if (first < n) oracle_print_row(stdout, r->cols, t, first);
    }
  }
  th.checks++;
  for (uint64_t i = nb; i < nb + guard; i++) {
    if (got[i] != 0xAB) {
      ok = 0;
      th_fail(__FILE__, __LINE__, "%s [%s]: ps_filter wrote byte %" PRIu64 " past ceil(n/8)=%" PRIu64
              " (bitmap_size %" PRIu64 ")", label, be, i, nb, given);
      break;
    }
  }
  ok &= CHECKF(count == want_count, "%s [%s]: count %" PRIu64 ", oracle %" PRIu64, label, be, count,
               want_count);
  /* ps_filter_count (its own path: no bitmap) on every other case, to halve the time */
  if (r->filters & 2) {
    uint64_t c2 = 0xC0FFEEull;
    st = ps_filter_count(ctx, e, &c2);
    ok &= CHECKF(st == PS_OK && c2 == want_count, "%s [%s]: ps_filter_count -> %s, %" PRIu64 ", oracle %" PRIu64,
                 label, be, ps_status_name(st), c2, want_count);
  }
  if (!ok && first == UINT64_MAX && details_printed++ < 10) tr_print_case(r, t);
  free(got);
  ps_expr_destroy(e);
  return ok;
}

int tr_check(trun *r, const onode *t, const char *label) {
  int c0 = on_first_col(t);
  uint64_t n = c0 >= 0 ? r->cols[c0]->n : 0;
  uint64_t nb = (n + 7) / 8;
  uint8_t *want = th_calloc(nb + 1, 1);
  uint64_t want_count = oracle_filter(r->cols, t, n, want);
  int ok = check_one(r, r->ctx, r->h, t, n, want, want_count, label);
  if (r->ref) ok &= check_one(r, r->ref, r->hr, t, n, want, want_count, label);
  free(want);
  return ok;
}
