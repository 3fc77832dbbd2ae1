/*
 * internal_options: the context's internal options (core/internal_options.h),
 * the hooks through which tests reach the paths the defaults would not take
 * on the machine at hand:
 *  - a new context has the defaults; every valid value of every field is
 *    taken and read back;
 *  - a value out of range (each field's bounds -1 and +1, INT_MIN, INT_MAX)
 *    gives PS_ERR_INVALID_ARGUMENT with a message naming the field and the
 *    value, and leaves the options as they were; so do NULL options; a NULL
 *    context is refused;
 *  - options belong to one context: setting them on one leaves another's;
 *  - the same bits under a sequence of settings on one context that takes
 *    every value of every field, switched between calls: random trees,
 *    single ranges, LIKE and IN over a dictionary, compared with the oracle
 *    and the reference backend (runner.h), and their row ids (host and
 *    device buffers) with the bitmap's set bits;
 *  - the same query result (groups, keys, aggregates) on a chunk of 2^20 + 33
 *    rows, which takes a specialized query kernel by default, under every
 *    query_specialize and opencl_query value: on OpenCL a refused launch and
 *    a failed build fall back to the generic kernel, except that a failed
 *    build under query_specialize=1 is the call's error (the build log with
 *    the line that failed), after which the context still runs queries.
 * The library reads no environment for these; PACKSCAN_TEST_OPTIONS does not
 * change what this test sets.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>

#include "gen.h"
#include "internal_options.h"
#include "kcache.h"

typedef struct field {
  const char *name;
  size_t offset;
  int lo, hi;
} field;

static const field FIELDS[] = {
    {"fast_paths", offsetof(ps_internal_options, fast_paths), 0, 1},
    {"opencl_jit", offsetof(ps_internal_options, opencl_jit), PS_OPT_AUTO, PS_OPT_ON},
    {"opencl_words", offsetof(ps_internal_options, opencl_words), PS_OPT_WORDS_AUTO, PS_OPT_WORDS_REFUSED},
    {"opencl_like", offsetof(ps_internal_options, opencl_like), PS_OPT_AUTO, PS_OPT_ON},
    {"opencl_ids_runs", offsetof(ps_internal_options, opencl_ids_runs), PS_OPT_AUTO, PS_OPT_ON},
    {"opencl_ids_run_words", offsetof(ps_internal_options, opencl_ids_run_words), 0, 4096},
    {"opencl_ids_scan", offsetof(ps_internal_options, opencl_ids_scan), 0, 1},
    {"opencl_reduce_tiles", offsetof(ps_internal_options, opencl_reduce_tiles), PS_OPT_AUTO, PS_OPT_ON},
    {"opencl_gather_ids", offsetof(ps_internal_options, opencl_gather_ids), PS_OPT_AUTO, PS_OPT_ON},
    {"query_specialize", offsetof(ps_internal_options, query_specialize), PS_OPT_AUTO, PS_OPT_ON},
    {"opencl_query", offsetof(ps_internal_options, opencl_query), PS_OPT_QUERY_AUTO, PS_OPT_QUERY_UNBUILDABLE},
    {"query_wait_per_chunk", offsetof(ps_internal_options, query_wait_per_chunk), 0, 1},
    {"query_collect_pinned", offsetof(ps_internal_options, query_collect_pinned), 0, 1},
    {"query_lanes", offsetof(ps_internal_options, query_lanes), PS_OPT_AUTO, PS_OPT_ON},
    {"query_prefetch", offsetof(ps_internal_options, query_prefetch), PS_OPT_AUTO, PS_OPT_ON},
    {"query_warp_merge", offsetof(ps_internal_options, query_warp_merge), 0, 1},
    {"opencl_param_buffers", offsetof(ps_internal_options, opencl_param_buffers), 0, 1},
    {"opencl_fp64", offsetof(ps_internal_options, opencl_fp64), 0, 1},
    {"query_min_blocks", offsetof(ps_internal_options, query_min_blocks), 0, 8},
    {"where_min_blocks", offsetof(ps_internal_options, where_min_blocks), 0, 16},
    {"where_waves", offsetof(ps_internal_options, where_waves), 0, 64},
};
#define NFIELDS (sizeof FIELDS / sizeof FIELDS[0])

static int *at(ps_internal_options *o, size_t f) { return (int *)((char *)o + FIELDS[f].offset); }

static void defaults_and_values(ps_context *ctx) {
  th_case("defaults");
  ps_internal_options d;
  ps_internal_options_init(&d);
  CHECK(d.fast_paths == 1 && d.opencl_jit == PS_OPT_AUTO && d.opencl_words == PS_OPT_WORDS_AUTO &&
        d.opencl_like == PS_OPT_AUTO && d.opencl_ids_runs == PS_OPT_AUTO && d.opencl_ids_run_words == 0 && d.opencl_ids_scan == 0 && d.opencl_reduce_tiles == PS_OPT_AUTO &&
        d.opencl_gather_ids == PS_OPT_AUTO && d.query_specialize == PS_OPT_AUTO &&
        d.opencl_query == PS_OPT_QUERY_AUTO && d.query_lanes == PS_OPT_AUTO && d.query_prefetch == PS_OPT_AUTO &&
        d.query_warp_merge == 1 && d.query_collect_pinned == 1 && d.opencl_param_buffers == 1 && d.opencl_fp64 == 1 &&
        d.query_min_blocks == 0 && d.where_min_blocks == 0 && d.where_waves == 0);
  /* made here, not by th_context, which gives a context PACKSCAN_TEST_OPTIONS */
  ps_context_options co;
  th_options(&co, th.backend, 0);
  ps_context *fresh = NULL;
  if (CHECK_OK(NULL, ps_context_create(&co, NULL, 0, &fresh)))
    CHECK(memcmp(ps_context_internal_options(fresh), &d, sizeof d) == 0);
  ps_context_destroy(fresh);
  CHECK(memcmp(ps_context_internal_options(NULL), &d, sizeof d) == 0);
  for (size_t f = 0; f < NFIELDS; f++)
    for (int v = FIELDS[f].lo; v <= FIELDS[f].hi; v++) {
      th_case("%s = %d", FIELDS[f].name, v);
      ps_internal_options o = d;
      *at(&o, f) = v;
      CHECK_OK(ctx, ps_context_set_internal_options(ctx, &o));
      CHECK(memcmp(ps_context_internal_options(ctx), &o, sizeof o) == 0);
    }
  CHECK_OK(ctx, ps_context_set_internal_options(ctx, &d));
  th_case("%s", "");
}

static void out_of_range(ps_context *ctx) {
  ps_internal_options before;
  ps_internal_options_init(&before);
  before.fast_paths = 0; /* not the defaults, so that a reset would show */
  before.opencl_words = PS_OPT_WORDS_STAGED;
  CHECK_OK(ctx, ps_context_set_internal_options(ctx, &before));
  for (size_t f = 0; f < NFIELDS; f++) {
    const int bad[] = {FIELDS[f].lo - 1, FIELDS[f].hi + 1, INT_MIN, INT_MAX};
    for (size_t k = 0; k < sizeof bad / sizeof bad[0]; k++) {
      th_case("%s = %d", FIELDS[f].name, bad[k]);
      ps_internal_options o = before;
      o.opencl_jit = PS_OPT_ON; /* a valid change beside the bad one is not taken either */
      *at(&o, f) = bad[k];
      CHECK_STATUS(ctx, ps_context_set_internal_options(ctx, &o), PS_ERR_INVALID_ARGUMENT);
      char value[32];
      snprintf(value, sizeof value, "%d", bad[k]);
      const char *msg = ps_context_last_error(ctx);
      CHECKF(strstr(msg, FIELDS[f].name) && strstr(msg, value), "message '%s' names neither %s nor %s", msg,
             FIELDS[f].name, value);
      CHECK(memcmp(ps_context_internal_options(ctx), &before, sizeof before) == 0);
    }
  }
  th_case("NULL options, NULL context");
  CHECK_STATUS(ctx, ps_context_set_internal_options(ctx, NULL), PS_ERR_INVALID_ARGUMENT);
  CHECKF(strstr(ps_context_last_error(ctx), "opts") != NULL, "message '%s'", ps_context_last_error(ctx));
  CHECK(memcmp(ps_context_internal_options(ctx), &before, sizeof before) == 0);
  CHECK_STATUS(NULL, ps_context_set_internal_options(NULL, &before), PS_ERR_INVALID_ARGUMENT);

  th_case("options of one context only");
  ps_context *other = th_context(0);
  ps_internal_options d;
  ps_internal_options_init(&d);
  CHECK_OK(other, ps_context_set_internal_options(other, &d));
  CHECK(memcmp(ps_context_internal_options(ctx), &before, sizeof before) == 0);
  CHECK(memcmp(ps_context_internal_options(other), &d, sizeof d) == 0);
  ps_context_destroy(other);
  CHECK_OK(ctx, ps_context_set_internal_options(ctx, &d));
  th_case("%s", "");
}

/* The row ids of t (host and device) against the bitmap's set bits. */
static void check_ids(trun *tr, const onode *t, const char *label) {
  ps_context *ctx = tr->ctx;
  ps_expr *e = NULL;
  if (!CHECK_OK(ctx, on_build(ctx, t, tr->h, &e))) return;
  const uint64_t n = ps_expr_rows(e), nb = (n + 7) / 8;
  uint8_t *bits = th_calloc(nb ? nb : 1, 1);
  uint64_t count = 0, got = 0;
  void *ids = NULL;
  ps_buffer *dev = NULL;
  uint64_t *dev_ids = th_calloc(n ? n : 1, sizeof *dev_ids);
  if (CHECK_OK(ctx, ps_filter(ctx, e, bits, nb, &count)) &&
      CHECK_OK(ctx, ps_filter_row_ids(ctx, e, PS_INDEX_UINT64, &ids, &got)) &&
      CHECK_OK(ctx, ps_buffer_create(ctx, (n ? n : 1) * sizeof(uint64_t), &dev))) {
    uint64_t dev_count = 0;
    CHECKF(got == count, "%s: %llu host row ids, %llu selected", label, (unsigned long long)got,
           (unsigned long long)count);
    if (CHECK_OK(ctx, ps_filter_row_ids_device(ctx, e, PS_INDEX_UINT64, dev, 0, n ? n : 1, &dev_count)) &&
        CHECKF(dev_count == count, "%s: %llu device row ids, %llu selected", label, (unsigned long long)dev_count,
               (unsigned long long)count) &&
        (count == 0 || CHECK_OK(ctx, ps_buffer_read(ctx, dev, 0, dev_ids, count * sizeof(uint64_t))))) {
      uint64_t k = 0, bad = 0;
      for (uint64_t i = 0; i < n; i++)
        if ((bits[i / 8] >> (i % 8)) & 1) {
          if (k < got && ((const uint64_t *)ids)[k] != i) bad++;
          if (k < dev_count && dev_ids[k] != i) bad++;
          k++;
        }
      CHECKF(bad == 0 && k == count, "%s: %llu row ids differ from the bitmap's set bits", label,
             (unsigned long long)bad);
    }
  }
  ps_buffer_destroy(dev);
  ps_free(ctx, ids);
  free(dev_ids);
  free(bits);
  ps_expr_destroy(e);
}

/* Setting i of the sequence: over 9 settings every field takes each of its
 * values at least once, in different company. */
static ps_internal_options setting(unsigned i) {
  ps_internal_options o;
  ps_internal_options_init(&o);
  o.fast_paths = (int)(i % 2);
  o.opencl_jit = PS_OPT_AUTO + (int)(i % 3);
  o.opencl_words = PS_OPT_WORDS_AUTO + (int)(i / 3 % 3);
  o.opencl_like = PS_OPT_AUTO + (int)((i + 1) % 3);
  o.opencl_ids_runs = PS_OPT_AUTO + (int)((i + 2) % 3);
  o.opencl_ids_run_words = (int)(i % 4) * 3; /* 0 (the default), 3, 6, 9 */
  o.opencl_ids_scan = (int)(i / 2 % 2);
  return o;
}

static void same_bits(ps_context *ctx, ps_context *ref) {
  static const uint64_t sizes[] = {1, 33, 1000, 4097, 70001};
  trun tr;
  tr_init(&tr, ctx, ref);
  th_rng *r = &th.rng;
  const uint64_t n = TH_PICK(r, sizes);
  int cols[4];
  for (int i = 0; i < 3; i++)
    cols[i] = tr_add(&tr, tcol_random_for(r, th_chance(r, 50) ? PS_TYPE_INT64 : PS_TYPE_UINT32, n,
                                          1 + (uint32_t)th_below(r, 32), i == 2 ? TN_FEW : TN_NO_BITMAP));
  cols[3] = tr_add(&tr, tcol_random_dict(r, n, 12, 1000 + th_below(r, 2000), 0, TN_FEW));
  for (int i = 0; i < 4; i++)
    if (cols[i] < 0) {
      tr_clear(&tr);
      return;
    }
  for (unsigned i = 0; i < 9; i++) {
    const ps_internal_options o = setting(i);
    th_case("n=%llu setting %u: fast_paths=%d opencl_jit=%d opencl_words=%d opencl_like=%d opencl_ids_runs=%d "
            "opencl_ids_run_words=%d opencl_ids_scan=%d",
            (unsigned long long)n, i, o.fast_paths, o.opencl_jit, o.opencl_words, o.opencl_like, o.opencl_ids_runs,
            o.opencl_ids_run_words, o.opencl_ids_scan);
    if (!CHECK_OK(ctx, ps_context_set_internal_options(ctx, &o))) break;
    onode *trees[4];
    trees[0] = on_cmp(cols[0], (ps_cmp)th_below(r, 6), gen_num_literal(r, tr.cols[cols[0]])); /* one range */
    /* a leaf on the dictionary: IN, LIKE, comparisons */
    trees[1] = gen_leaf(r, &tr, cols[3], -1);
    trees[2] = gen_tree(r, &tr, cols, 4, 3, 7);
    trees[3] = on_and(on_cmp(cols[1], PS_GE, gen_num_literal(r, tr.cols[cols[1]])), on_cmpcol(cols[0], PS_LT, cols[1]));
    for (int k = 0; k < 4; k++) {
      char label[64];
      snprintf(label, sizeof label, "setting %u tree %d", i, k);
      if (tr_check(&tr, trees[k], label)) check_ids(&tr, trees[k], label);
      on_free(trees[k]);
    }
  }
  ps_internal_options d;
  ps_internal_options_init(&d);
  CHECK_OK(ctx, ps_context_set_internal_options(ctx, &d));
  tr_clear(&tr);
  th_case("%s", "");
}

/* One result as text, group by group ("key key | value value ..."), into
 * *out (malloc'd), or NULL with the call's status. */
static ps_status query_text(ps_context *ctx, ps_column *const *h, char **out) {
  *out = NULL;
  ps_value *price = NULL, *disc = NULL, *rev = NULL, *minp = NULL, *avgd = NULL;
  ps_expr *lo = NULL, *where = NULL;
  ps_query *q = NULL;
  ps_query_result *res = NULL;
  ps_status st = ps_value_column(ctx, h[0], &price);
  if (st == PS_OK) st = ps_value_column(ctx, h[1], &disc);
  if (st == PS_OK) st = ps_value_arith(ctx, PS_MUL, price, disc, &rev);
  if (st == PS_OK) price = disc = NULL; /* owned by rev */
  if (st == PS_OK) st = ps_value_column(ctx, h[0], &minp);
  if (st == PS_OK) st = ps_value_column(ctx, h[1], &avgd);
  if (st == PS_OK) st = ps_expr_between(ctx, h[1], ps_lit_int(2), ps_lit_int(40), &lo);
  if (st == PS_OK) st = ps_expr_compare(ctx, h[0], PS_GE, ps_lit_int(1000), &where);
  if (st == PS_OK) {
    ps_expr *both = NULL;
    st = ps_expr_and(ctx, where, lo, &both);
    if (st == PS_OK) where = both, lo = NULL; /* both owns them */
  }
  if (st == PS_OK) {
    ps_agg aggs[4] = {{PS_AGG_SUM, rev}, {PS_AGG_COUNT_STAR, NULL}, {PS_AGG_MIN, minp}, {PS_AGG_AVG, avgd}};
    ps_query_desc d;
    ps_query_desc_init(&d);
    d.rows = ps_column_rows(h[0]);
    d.where = where;
    d.aggs = aggs;
    d.n_aggs = 4;
    d.n_keys = 1;
    d.keys[0] = h[2];
    st = ps_query_create(ctx, &d, &q);
  }
  if (st == PS_OK) st = ps_query_run(ctx, q, &res);
  if (st == PS_OK) st = th_result_text(res, 1, 4, out);
  ps_query_result_destroy(res);
  ps_query_destroy(q);
  ps_expr_destroy(where);
  ps_expr_destroy(lo);
  ps_value_destroy(price);
  ps_value_destroy(disc);
  ps_value_destroy(rev);
  ps_value_destroy(minp);
  ps_value_destroy(avgd);
  return st;
}

/* A query of one chunk past PS_QUERY_SPEC_MIN_ROWS (a specialized kernel by
 * default) under every query_specialize and opencl_query value, against the
 * reference backend's result (this context's defaults on the reference
 * backend). Refused launches run before the builds that fail, and the real
 * builds before both: a refused build stays marked as one the device will
 * not run. */
static void same_query(ps_context *ctx, ps_context *ref) {
  const uint64_t n = ((uint64_t)1 << 20) + 33;
  th_rng *r = &th.rng;
  /* price: 20 bits above -3000, some null; discount: 0..63; key: 2 bits, some null */
  static const struct {
    ps_type type;
    uint32_t width;
    int64_t ref;
    int nulls;
  } shape[3] = {{PS_TYPE_INT64, 20, -3000, TN_FEW}, {PS_TYPE_INT32, 6, 0, TN_NO_BITMAP}, {PS_TYPE_UINT8, 2, 0, TN_FEW}};
  tcol *t[3];
  uint64_t *codes = th_malloc(n * sizeof *codes);
  for (int i = 0; i < 3; i++) {
    for (uint64_t k = 0; k < n; k++) codes[k] = th_below(r, (uint64_t)1 << shape[i].width);
    uint8_t *validity = tcol_random_validity(r, n, shape[i].nulls);
    ps_reference m;
    m.i = shape[i].ref;
    t[i] = tcol_for(shape[i].type, n, shape[i].width, 0, m, codes, validity, NULL);
    free(validity);
  }
  free(codes);
  ps_column *h[3] = {NULL, NULL, NULL}, *hr[3] = {NULL, NULL, NULL};
  ps_context *oracle_ctx = ref ? ref : ctx;
  char *want = NULL;
  int ok = 1;
  for (int i = 0; i < 3; i++) {
    ok = ok && CHECK_OK(ctx, tcol_create(ctx, t[i], &h[i]));
    ok = ok && CHECK_OK(oracle_ctx, tcol_create(oracle_ctx, t[i], &hr[i]));
  }
  th_case("query: the reference's result");
  if (ok) ok = CHECK_OK(oracle_ctx, query_text(oracle_ctx, hr, &want)) && CHECKF(strlen(want) > 40, "%s", want);
  static const int spec[] = {PS_OPT_AUTO, PS_OPT_ON};
  static const int cl[] = {PS_OPT_QUERY_AUTO, PS_OPT_QUERY_REFUSED, PS_OPT_QUERY_UNBUILDABLE};
  const int is_opencl = strcmp(ps_context_backend(ctx), "opencl") == 0;
  for (int c = 0; ok && c < 3; c++)
    for (int s = 0; s < 2; s++)
      for (int again = 0; again < 2; again++) { /* the second time from the caches */
        ps_internal_options o;
        ps_internal_options_init(&o);
        o.query_specialize = spec[s];
        o.opencl_query = cl[c];
        th_case("query: query_specialize=%d opencl_query=%d%s", o.query_specialize, o.opencl_query,
                again ? ", again" : "");
        if (!CHECK_OK(ctx, ps_context_set_internal_options(ctx, &o))) continue;
        char *got = NULL;
        const uint64_t fallbacks = ps_context_kcache_stats(ctx).spec_fallbacks;
        const ps_status st = query_text(ctx, h, &got);
        /* the first run of a text under query_specialize=auto builds it in
         * the background (ps_context_options.query_compile) */
        const int pending = spec[s] == PS_OPT_AUTO && cl[c] == PS_OPT_QUERY_AUTO && !again;
        ps_context_wait_builds(ctx, 0);
        if (is_opencl) { /* the path under test was taken (one chunk: the default chunk holds every row) */
          const int falls =
              pending || cl[c] == PS_OPT_QUERY_REFUSED || (cl[c] == PS_OPT_QUERY_UNBUILDABLE && spec[s] == PS_OPT_AUTO);
          const uint64_t fell = ps_context_kcache_stats(ctx).spec_fallbacks - fallbacks;
          CHECKF(falls ? fell > 0 : fell == 0, "%llu fallbacks to the generic kernel, want %s",
                 (unsigned long long)fell, falls ? "some" : "none");
        }
        if (is_opencl && cl[c] == PS_OPT_QUERY_UNBUILDABLE && spec[s] == PS_OPT_ON) {
          /* the build's error, with its log */
          CHECKF(st != PS_OK && strstr(ps_context_last_error(ctx), "clBuildProgram") &&
                     strstr(ps_context_last_error(ctx), "opencl_query=unbuildable"),
                 "%s: %s", ps_status_name(st), ps_context_last_error(ctx));
        } else if (CHECK_OK(ctx, st)) {
          CHECKF(strcmp(got, want) == 0, "result\n%s\nreference\n%s", got, want);
          CHECKF(ps_context_last_error(ctx)[0] == '\0', "a successful query left the message '%s'",
                 ps_context_last_error(ctx));
        }
        free(got);
      }
  ps_internal_options d;
  ps_internal_options_init(&d);
  CHECK_OK(ctx, ps_context_set_internal_options(ctx, &d));
  free(want);
  for (int i = 0; i < 3; i++) {
    ps_column_destroy(h[i]);
    ps_column_destroy(hr[i]);
    tcol_free(t[i]);
  }
  th_case("%s", "");
}

int main(int argc, char **argv) {
  th_init(argc, argv, "internal_options");
  ps_context *ctx = th_context(0);
  ps_context *ref = th_is_reference() ? NULL : th_reference_context(0);
  defaults_and_values(ctx);
  out_of_range(ctx);
  const unsigned rounds = th.quick ? 1 : 2 * th.scale;
  for (unsigned k = 0; k < rounds; k++) same_bits(ctx, ref);
  same_query(ctx, ref);
  ps_context_destroy(ref);
  ps_context_destroy(ctx);
  return th_finish();
}
