/*
 * How a query's specialized kernel is compiled (ps_context_options
 * .query_compile), on a chunk of 2^20 + 33 rows (one chunk, specialized by
 * default), against the reference backend's result, through the kernel
 * cache's counters (core/kcache.h) and its test hook ps_context_wait_builds
 * (never by timing):
 *  - background (the default): the first run of a text takes the generic
 *    kernel and hands the build to the context's worker thread; once it is
 *    done, the next run picks it up and takes the specialized kernel, and so
 *    does a new query with the same text; a build that fails there (OpenCL:
 *    opencl_query=unbuildable) leaves the generic kernel, no message, and is
 *    not tried again; a context destroyed with one build in progress and
 *    one queued, and one with a build done and never picked up, release
 *    everything (the ASan and TSan jobs watch);
 *  - blocking: the first run takes the specialized kernel, nothing in the
 *    background; never: no specialized kernel at all;
 *  - validation: a value out of range is PS_ERR_INVALID_ARGUMENT naming the
 *    field and value; a struct_size that ends before the field leaves the
 *    default.
 * On the reference backend (no specialized kernels) the same calls give the
 * same results and count nothing.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "internal_options.h"
#include "kcache.h"
#include "tcol.h"

#define N_COLS 3

typedef struct table {
  tcol *t[N_COLS];
} table;

static void table_make(table *tb, uint64_t n) {
  /* price: 20 bits above -3000, some null; discount: 0..63; key: 2 bits */
  static const struct {
    ps_type type;
    uint32_t width;
    int64_t ref;
    int nulls;
  } shape[N_COLS] = {
      {PS_TYPE_INT64, 20, -3000, TN_FEW}, {PS_TYPE_INT32, 6, 0, TN_NO_BITMAP}, {PS_TYPE_UINT8, 2, 0, TN_FEW}};
  uint64_t *codes = th_malloc(n * sizeof *codes);
  for (int i = 0; i < N_COLS; i++) {
    for (uint64_t k = 0; k < n; k++) codes[k] = th_below(&th.rng, (uint64_t)1 << shape[i].width);
    uint8_t *validity = tcol_random_validity(&th.rng, n, shape[i].nulls);
    ps_reference m;
    m.i = shape[i].ref;
    tb->t[i] = tcol_for(shape[i].type, n, shape[i].width, 0, m, codes, validity, NULL);
    free(validity);
  }
  free(codes);
}

static int columns_make(ps_context *ctx, const table *tb, ps_column **h) {
  int ok = 1;
  for (int i = 0; i < N_COLS; i++) h[i] = NULL;
  for (int i = 0; i < N_COLS; i++) ok = ok && CHECK_OK(ctx, tcol_create(ctx, tb->t[i], &h[i]));
  return ok;
}

static void columns_free(ps_column **h) {
  for (int i = 0; i < N_COLS; i++) ps_column_destroy(h[i]);
}

/* SUM(price * discount), COUNT(*), MIN(price) WHERE price >= lit GROUP BY
 * key, as text (malloc'd), or NULL with the call's status. `lit` is one of
 * the query's constants: each value is a text of its own. */
static ps_status query_text(ps_context *ctx, ps_column *const *h, int64_t lit, char **out) {
  *out = NULL;
  ps_value *price = NULL, *disc = NULL, *rev = NULL, *minp = NULL;
  ps_expr *where = NULL;
  ps_query *q = NULL;
  ps_query_result *res = NULL;
  ps_status st = ps_value_column(ctx, h[0], &price);
  if (st == PS_OK) st = ps_value_column(ctx, h[1], &disc);
  if (st == PS_OK) st = ps_value_arith(ctx, PS_MUL, price, disc, &rev);
  if (st == PS_OK) price = disc = NULL; /* owned by rev */
  if (st == PS_OK) st = ps_value_column(ctx, h[0], &minp);
  if (st == PS_OK) st = ps_expr_compare(ctx, h[0], PS_GE, ps_lit_int(lit), &where);
  if (st == PS_OK) {
    ps_agg aggs[3] = {{PS_AGG_SUM, rev}, {PS_AGG_COUNT_STAR, NULL}, {PS_AGG_MIN, minp}};
    ps_query_desc d;
    ps_query_desc_init(&d);
    d.rows = ps_column_rows(h[0]);
    d.where = where;
    d.aggs = aggs;
    d.n_aggs = 3;
    d.n_keys = 1;
    d.keys[0] = h[2];
    st = ps_query_create(ctx, &d, &q);
  }
  if (st == PS_OK) st = ps_query_run(ctx, q, &res);
  if (st == PS_OK) st = th_result_text(res, 1, 3, out);
  ps_query_result_destroy(res);
  ps_query_destroy(q);
  ps_expr_destroy(where);
  ps_value_destroy(price);
  ps_value_destroy(disc);
  ps_value_destroy(rev);
  ps_value_destroy(minp);
  return st;
}

/* What one run did: the counters' differences. */
typedef struct run_counts {
  uint64_t fallbacks, async_builds, async_failed, builds;
} run_counts;

/* Runs the query with `lit` on ctx, checks its text against want and that
 * the successful call left no message, and returns what the cache counted. */
static run_counts run(ps_context *ctx, ps_column *const *h, int64_t lit, const char *want) {
  const ps_kcache_stats a = ps_context_kcache_stats(ctx);
  char *got = NULL;
  if (CHECK_OK(ctx, query_text(ctx, h, lit, &got))) {
    CHECKF(strcmp(got, want) == 0, "result\n%s\nreference\n%s", got, want);
    CHECKF(ps_context_last_error(ctx)[0] == '\0', "a successful query left the message '%s'",
           ps_context_last_error(ctx));
  }
  free(got);
  const ps_kcache_stats b = ps_context_kcache_stats(ctx);
  run_counts c = {b.spec_fallbacks - a.spec_fallbacks, b.async_builds - a.async_builds, b.async_failed - a.async_failed,
                  b.builds - a.builds};
  return c;
}

#define CHECK_COUNTS(c, fb, ab, af)                                                                                   \
  CHECKF((c).fallbacks == (uint64_t)(fb) && (c).async_builds == (uint64_t)(ab) && (c).async_failed == (uint64_t)(af), \
         "generic kernel %llu times (want %d), builds handed to the worker %llu (want %d), failed there %llu "        \
         "(want %d)",                                                                                                 \
         (unsigned long long)(c).fallbacks, (fb), (unsigned long long)(c).async_builds, (ab),                         \
         (unsigned long long)(c).async_failed, (af))

static ps_context *context_with(int32_t query_compile) {
  ps_context_options o;
  th_options(&o, th.backend, 0);
  o.query_compile = query_compile;
  char err[2048] = {0};
  ps_context *ctx = NULL;
  if (!CHECKF(ps_context_create(&o, err, sizeof err, &ctx) == PS_OK, "context with query_compile %d: %s",
              (int)query_compile, err))
    return NULL;
  th_apply_options(ctx);
  return ctx;
}

static void validation(void) {
  th_case("validation");
  static const int32_t bad[] = {3, -1, 1000};
  for (size_t i = 0; i < sizeof bad / sizeof *bad; i++) {
    ps_context_options o;
    th_options(&o, th.backend, 0);
    o.query_compile = bad[i];
    char err[512] = {0}, value[32];
    snprintf(value, sizeof value, "is %d;", (int)bad[i]);
    ps_context *ctx = NULL;
    const ps_status st = ps_context_create(&o, err, sizeof err, &ctx);
    CHECKF(st == PS_ERR_INVALID_ARGUMENT && ctx == NULL && strstr(err, "options.query_compile") && strstr(err, value),
           "query_compile %d: %s '%s'", (int)bad[i], ps_status_name(st), err);
    ps_context_destroy(ctx);
  }
  /* a struct that ends before the field: its bytes past the end are not read */
  ps_context_options o;
  th_options(&o, th.backend, 0);
  o.query_compile = 77;
  o.struct_size = (uint32_t)offsetof(ps_context_options, query_compile);
  ps_context *ctx = NULL;
  char err[512] = {0};
  CHECKF(ps_context_create(&o, err, sizeof err, &ctx) == PS_OK, "struct_size before query_compile: %s", err);
  ps_context_destroy(ctx);
  ps_context_options d;
  ps_context_options_init(&d);
  CHECK(d.query_compile == PS_QUERY_COMPILE_BACKGROUND && d.struct_size == sizeof d);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "query_compile");
  /* The contexts below are made with their own options; th_context first
   * skips (77) or fails, as every test does, where the backend cannot run. */
  ps_context_destroy(th_context(0));
  validation();
  const uint64_t n = ((uint64_t)1 << 20) + 33;
  table tb;
  table_make(&tb, n);
  static const int64_t lits[3] = {1000, 2000, 3000};
  char *want[3] = {NULL, NULL, NULL};
  ps_context *ref = th_reference_context(0);
  ps_column *hr[N_COLS];
  th_case("the reference's results");
  if (columns_make(ref, &tb, hr))
    for (int i = 0; i < 3; i++) CHECK_OK(ref, query_text(ref, hr, lits[i], &want[i]));
  columns_free(hr);
  ps_context_destroy(ref);
  const int device = !th_is_reference(), opencl = strcmp(th.backend, "opencl") == 0;
  const int d = device ? 1 : 0;
  ps_column *h[N_COLS];

  memset(h, 0, sizeof h);
  ps_context *ctx = context_with(PS_QUERY_COMPILE_BACKGROUND);
  if (ctx && want[0] && want[1] && want[2] && columns_make(ctx, &tb, h)) {
    th_case("background: the first run takes the generic kernel");
    run_counts c = run(ctx, h, lits[0], want[0]);
    CHECK_COUNTS(c, d, d, 0);
    ps_context_wait_builds(ctx, 0);
    th_case("background: the next run picks the build up");
    c = run(ctx, h, lits[0], want[0]);
    CHECK_COUNTS(c, 0, 0, 0);
    CHECKF(c.builds == (uint64_t)d, "%llu builds picked up, want %d", (unsigned long long)c.builds, d);
    th_case("background: a new query with the same text, from the cache");
    c = run(ctx, h, lits[0], want[0]);
    CHECK_COUNTS(c, 0, 0, 0);
    CHECK(c.builds == 0);
    if (opencl) {
      th_case("background: a build that fails there");
      ps_internal_options o;
      ps_internal_options_init(&o);
      o.opencl_query = PS_OPT_QUERY_UNBUILDABLE;
      CHECK_OK(ctx, ps_context_set_internal_options(ctx, &o));
      c = run(ctx, h, lits[0], want[0]);
      CHECK_COUNTS(c, 1, 1, 0);
      ps_context_wait_builds(ctx, 0);
      c = run(ctx, h, lits[0], want[0]);
      CHECK_COUNTS(c, 1, 0, 1);
      c = run(ctx, h, lits[0], want[0]); /* not tried again */
      CHECK_COUNTS(c, 1, 0, 0);
      ps_internal_options_init(&o);
      CHECK_OK(ctx, ps_context_set_internal_options(ctx, &o));
    }
    th_case("background: a build done and never picked up, then destroyed");
    c = run(ctx, h, lits[1], want[1]);
    CHECK_COUNTS(c, d, d, 0);
    ps_context_wait_builds(ctx, 0);
  }
  columns_free(h);
  ps_context_destroy(ctx);

  memset(h, 0, sizeof h);
  ctx = context_with(PS_QUERY_COMPILE_BACKGROUND);
  if (ctx && want[1] && want[2] && columns_make(ctx, &tb, h)) {
    th_case("background: destroyed with a build in progress and one queued");
    run_counts c = run(ctx, h, lits[1], want[1]);
    CHECK_COUNTS(c, d, d, 0);
    c = run(ctx, h, lits[2], want[2]);
    CHECK_COUNTS(c, d, d, 0);
    ps_context_wait_builds(ctx, 1); /* the first one started: a build stays queued only behind it */
  }
  columns_free(h);
  ps_context_destroy(ctx);

  static const int32_t modes[2] = {PS_QUERY_COMPILE_BLOCKING, PS_QUERY_COMPILE_NEVER};
  for (int m = 0; m < 2; m++) {
    memset(h, 0, sizeof h);
    ctx = context_with(modes[m]);
    if (ctx && want[2] && columns_make(ctx, &tb, h)) {
      th_case("query_compile %s", m == 0 ? "blocking" : "never");
      run_counts c = run(ctx, h, lits[2], want[2]);
      CHECK_COUNTS(c, 0, 0, 0);
      const uint64_t first_builds = c.builds;
      c = run(ctx, h, lits[2], want[2]);
      CHECK_COUNTS(c, 0, 0, 0);
      CHECK(c.builds == 0);
      /* blocking: the specialized build only; never: the generic one
       * (compiled at run time on OpenCL, ahead of time on CUDA) */
      const uint64_t builds = (uint64_t)(m == 0 ? d : opencl);
      CHECKF(first_builds == builds, "%llu builds, want %llu", (unsigned long long)first_builds,
             (unsigned long long)builds);
    }
    columns_free(h);
    ps_context_destroy(ctx);
  }
  th_case("%s", "");
  for (int i = 0; i < 3; i++) free(want[i]);
  for (int i = 0; i < N_COLS; i++) tcol_free(tb.t[i]);
  return th_finish();
}
