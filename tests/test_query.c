/*
 * query: aggregates of arithmetic over the rows a predicate selects, with
 * GROUP BY (issue 14), on the backend under test, compared with an oracle
 * written here (value trees evaluated row by row on the decoded values with
 * 128-bit integers, groups found by sorting the rows' decoded keys) and, on a
 * device backend, with the reference backend bit for bit:
 *  - random tables (numeric FOR columns of every type and width, dictionary
 *    columns, nulls), random WHERE trees, random value trees (+ - *, CASE,
 *    literals, exact decimals, NULL), every aggregate, 0..2 keys, several
 *    chunkings; n = 0, 1, 31, 32, 33, 100 and random sizes;
 *  - named edge cases: empty results (SQL NULLs, one row without GROUP BY),
 *    overflow of a row's value and of a final sum, a sum whose partial sums
 *    pass 38 digits but whose total does not, AVG rounding half away from
 *    zero, NULL groups last, unsorted dictionary keys in string order, too
 *    many groups (PS_ERR_LIMIT), corrupt codes, validation errors,
 *    sums whose 64-bit words wrap (grouped and not, and beyond 64-bit
 *    values), constants outside int64 and their products (at 1 row, 33
 *    rows specialized and 2^20 + 33 rows), an AVG whose sum passes 38 digits
 *    but whose average does not, and ps_datum_format;
 *  - the same through kernels specialized for each query (internal option
 *    query_specialize=1): wide sums and random queries; GROUP BY in
 *    registers by words and by rows (query_lanes=0 and 1), each work-item
 *    merging its own registers and (CUDA) a warp's at once
 *    (query_warp_merge=0 and 1), with sums of a warp past 64 bits;
 *  - by default, a GROUP BY of a few thousand rows asks for its specialized
 *    kernel on CUDA (a GPU: PS_QUERY_SPEC_MIN_ROWS_GPU_GROUPED) and the
 *    same query without GROUP BY does not; on an OpenCL CPU device (PoCL)
 *    neither does (no compile in the background for it).
 */
#include <stdlib.h>
#include <string.h>

#ifdef PACKSCAN_HAVE_OPENCL
#include <CL/cl.h>

#include "packscan_opencl.h"
#endif
#include "gen.h"
#include "kcache.h" /* ps_context_kcache_stats */
#include "qoracle.h"
#include "query_spec.h" /* PS_QUERY_SPEC_MIN_ROWS_GPU_GROUPED */

#define NCTX 3
/* Chunks of this many rows and more take a kernel specialized for the query
 * by default (core/query_spec.h, PS_QUERY_SPEC_MIN_ROWS). */
#define SPEC_MIN_ROWS ((uint64_t)1 << 20)
static const uint64_t chunk_rows[NCTX] = {0, 64, 96};

/* ---- running and comparing ----------------------------------------------------- */

/* Lookups of specialized kernels so far (CUDA's kernel cache holds nothing
 * else). */
static uint64_t spec_lookups(ps_context *ctx) {
  const ps_kcache_stats s = ps_context_kcache_stats(ctx);
  return s.hits + s.misses;
}

/* Specialized builds asked for so far on OpenCL, where the cache also holds
 * the generic programs: handed to the background or run generic meanwhile. */
static uint64_t spec_requests(ps_context *ctx) {
  const ps_kcache_stats s = ps_context_kcache_stats(ctx);
  return s.async_builds + s.spec_fallbacks;
}

/* Whether ctx is an OpenCL context on a CPU device. */
static int opencl_cpu(ps_context *ctx) {
#ifdef PACKSCAN_HAVE_OPENCL
  cl_context c;
  cl_device_id d;
  cl_command_queue q;
  cl_device_type t = 0;
  if (strcmp(ps_context_backend(ctx), "opencl") != 0 || ps_opencl_handles(ctx, &c, &d, &q) != PS_OK) return 0;
  return clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof t, &t, NULL) == CL_SUCCESS && (t & CL_DEVICE_TYPE_CPU) != 0;
#else
  (void)ctx;
  return 0;
#endif
}

static void print_query(trun *tr, const oquery *q) {
  fprintf(stderr, "    WHERE ");
  if (q->where)
    on_print(stderr, q->where, tr->cols);
  else
    fprintf(stderr, "(none)");
  fprintf(stderr, "\n    GROUP BY");
  for (int k = 0; k < q->n_keys; k++) fprintf(stderr, " %s", tr->cols[q->keys[k]]->name);
  fprintf(stderr, "\n");
  for (int a = 0; a < q->n_aggs; a++) {
    fprintf(stderr, "    agg %d kind %d: ", a, (int)q->kinds[a]);
    if (q->vals[a]) qn_print(stderr, q->vals[a], tr->cols);
    fprintf(stderr, "\n");
  }
  for (size_t i = 0; i < tr->ncols; i++) {
    char buf[128];
    fprintf(stderr, "    %s: %s\n", tr->cols[i]->name, tcol_describe(tr->cols[i], buf, sizeof buf));
  }
}

/* Compares the library's result in ctx (and in the reference, when given) with
 * the oracle's. */
static int check_query(trun *tr, ps_context *ctx, ps_column *const *h, uint64_t n, const oquery *q,
                       const char *label) {
  oresult o;
  oracle_query(tr->cols, n, q, &o);
  ps_query_result *res = NULL;
  ps_status st = oq_run(ctx, h, n, q, 1, &res);
  int ok = CHECKF(st == o.status, "%s: status %s (%s), oracle %s", label, ps_status_name(st),
                  ps_context_last_error(ctx), ps_status_name(o.status));
  if (ok && st == PS_OK) {
    ok = CHECKF(ps_query_result_groups(res) == o.groups, "%s: %llu groups, oracle %llu", label,
                (unsigned long long)ps_query_result_groups(res), (unsigned long long)o.groups);
    for (uint64_t g = 0; ok && g < o.groups; g++) {
      for (int k = 0; ok && k < q->n_keys; k++) {
        ps_datum d;
        CHECK_OK(NULL, ps_query_result_key(res, g, (uint32_t)k, &d));
        ok = CHECKF(oq_datum_eq(&d, &o.keys[g * 2 + k], 0), "%s: group %llu key %d differs", label,
                    (unsigned long long)g, k);
        if (!ok) oq_print_datum("got", &d), oq_print_datum("oracle", &o.keys[g * 2 + k]);
      }
      for (int a = 0; ok && a < q->n_aggs; a++) {
        ps_datum d;
        CHECK_OK(NULL, ps_query_result_value(res, g, (uint32_t)a, &d));
        const ps_datum *want = &o.values[g * PS_QUERY_MAX_AGGS + a];
        ok = CHECKF(oq_datum_eq(&d, want, 0), "%s: group %llu aggregate %d differs", label, (unsigned long long)g, a);
        if (!ok) oq_print_datum("got", &d), oq_print_datum("oracle", want);
        /* the double rendering is the nearest double of the exact text */
        char text[PS_DATUM_TEXT_SIZE];
        if (ok && !d.is_null && CHECK_OK(NULL, ps_datum_format(&d, text, sizeof text)))
          ok = CHECKF(d.as_double == strtod(text, NULL), "%s: as_double %.17g of %s", label, d.as_double, text);
      }
    }
  }
  if (!ok) print_query(tr, q);
  ps_query_result_destroy(res);
  oresult_free(&o);
  return ok;
}

/* ---- random queries ------------------------------------------------------------ */

static const ps_type NUMERIC[] = {PS_TYPE_INT8,   PS_TYPE_INT16,  PS_TYPE_INT32,  PS_TYPE_INT64,
                                  PS_TYPE_UINT8,  PS_TYPE_UINT16, PS_TYPE_UINT32, PS_TYPE_UINT64,
                                  PS_TYPE_FLOAT32, PS_TYPE_FLOAT64};

static int random_nulls(th_rng *r) { return (int)th_below(r, TN_COUNT); }

/* Budgets of one query's values, within the library's limits (CASE
 * predicates; instructions: at most two per node). */
static int case_budget, node_budget;

static qnode *random_value(th_rng *r, trun *tr, const int *vcols, int nv, const int *pcols, int np, int depth) {
  uint64_t pick = th_below(r, depth > 0 && node_budget > 2 ? 10 : 4);
  node_budget--;
  if (pick == 9 && case_budget == 0) pick = 8;
  if (pick == 9) case_budget--;
  if (pick < 2 || nv == 0) {
    qnode *q = qn_new(QN_CONST);
    q->c = (ti128)th_below(r, 2000) - 1000;
    q->scale = (uint32_t)th_below(r, 4);
    if (th_chance(r, 5)) q->kind = QN_NULL;
    return q;
  }
  if (pick < 4) {
    qnode *q = qn_new(QN_COL);
    q->col = vcols[th_below(r, (uint64_t)nv)];
    return q;
  }
  if (pick < 9) {
    qnode *q = qn_new(QN_ARITH);
    q->op = (ps_arith)th_below(r, 3);
    q->a = random_value(r, tr, vcols, nv, pcols, np, depth - 1);
    q->b = random_value(r, tr, vcols, nv, pcols, np, depth - 1);
    return q;
  }
  qnode *q = qn_new(QN_CASE);
  q->when = gen_tree(r, tr, pcols, (size_t)np, 2, 6);
  q->a = random_value(r, tr, vcols, nv, pcols, np, depth - 1);
  q->b = th_chance(r, 25) ? NULL : random_value(r, tr, vcols, nv, pcols, np, depth - 1);
  return q;
}

static int type_bits(ps_type t) {
  switch (t) {
    case PS_TYPE_INT8:
    case PS_TYPE_UINT8: return 8;
    case PS_TYPE_INT16:
    case PS_TYPE_UINT16: return 16;
    case PS_TYPE_INT32:
    case PS_TYPE_UINT32: return 32;
    default: return 64;
  }
}

/* Values M + code with |M| <= min(100, 2^(bits-2)) and codes below 2^(bits-2)
 * (at most 16 bits): always inside the type. */
static tcol *narrow_col(th_rng *r, ps_type t, uint64_t n) {
  int bits = type_bits(t);
  uint32_t w = (uint32_t)th_below(r, (uint64_t)(bits - 2 < 16 ? bits - 2 : 16) + 1);
  int64_t mlim = bits - 2 < 7 ? (int64_t)1 << (bits - 2) : 100;
  ps_reference ref;
  if (tcol_is_unsigned(t))
    ref.u = th_below(r, (uint64_t)mlim + 1);
  else
    ref.i = (int64_t)th_below(r, 2 * (uint64_t)mlim + 1) - mlim;
  uint64_t *codes = th_calloc(n ? n : 1, sizeof *codes);
  for (uint64_t i = 0; i < n; i++) codes[i] = th_u64(r) & tcol_width_max(w);
  uint8_t *val = tcol_random_validity(r, n, random_nulls(r));
  tcol *c = tcol_for(t, n, w, tcol_is_float(t) ? (uint32_t)th_below(r, 5) : 0, ref, codes, val, r);
  free(codes);
  free(val);
  return c;
}

static void random_table(th_rng *r, trun *tr, uint64_t n, int *vcols, int *nv, int *kcols, int *nk) {
  *nv = *nk = 0;
  int nnum = 1 + (int)th_below(r, 3);
  for (int i = 0; i < nnum; i++) {
    ps_type t = TH_PICK(r, NUMERIC);
    /* mostly narrow values near zero, so that products fit and results are
     * numbers; sometimes any values of the type (overflow paths) */
    tcol *c = th_chance(r, 80) ? narrow_col(r, t, n) : tcol_random_for(r, t, n, (uint32_t)th_below(r, 65), random_nulls(r));
    int k = tr_add(tr, c);
    if (k >= 0) vcols[(*nv)++] = k;
  }
  /* keys: a dictionary and a narrow FOR column */
  size_t d = 1 + (size_t)th_below(r, 12);
  int k = tr_add(tr, tcol_random_dict(r, n, tcol_bits(d - 1), d, th_chance(r, 50), random_nulls(r)));
  if (k >= 0) kcols[(*nk)++] = k;
  k = tr_add(tr, tcol_random_for(r, TH_PICK(r, NUMERIC), n, (uint32_t)th_below(r, 7), random_nulls(r)));
  if (k >= 0) kcols[(*nk)++] = k;
}

/* A FOR column of the test over one device buffer at byte `off` (data,
 * then validity at the next multiple of 4), in place of its usual copy. */
static ps_column *offset_column(ps_context *ctx, const tcol *c, uint64_t off, ps_buffer **buf) {
  uint64_t vbytes = c->validity ? (c->n + 7) / 8 : 0;
  ps_column *h = NULL;
  *buf = NULL;
  const uint64_t voff = (off + c->data_size + 3) / 4 * 4;
  if (!CHECK_OK(ctx, ps_buffer_create(ctx, voff + vbytes + 1, buf))) return NULL;
  if (c->data_size) CHECK_OK(ctx, ps_buffer_write(ctx, *buf, off, c->data, c->data_size));
  if (vbytes) CHECK_OK(ctx, ps_buffer_write(ctx, *buf, voff, c->validity, vbytes));
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = c->type;
  d.n = c->n;
  d.width = c->width;
  d.scale = c->scale;
  d.reference = c->ref;
  d.data_size = c->data_size;
  d.validity_size = vbytes;
  CHECK_OK(ctx, ps_column_create_for_device(ctx, &d, *buf, off, vbytes ? *buf : NULL, voff, &h));
  return h;
}

static void random_queries(ps_context *ctx, ps_context *ref, th_rng *r, uint64_t n, int queries) {
  trun tr;
  tr_init(&tr, ctx, ref);
  int vcols[4], kcols[2], nv, nk;
  random_table(r, &tr, n, vcols, &nv, kcols, &nk);
  /* sometimes the numeric columns live in device buffers at offsets */
  ps_column *saved[4] = {NULL, NULL, NULL, NULL};
  ps_buffer *bufs[4] = {NULL, NULL, NULL, NULL};
  for (int i = 0; i < nv && th_chance(r, 30); i++) {
    ps_column *h = offset_column(ctx, tr.cols[vcols[i]], 4 * (1 + th_below(r, 7)), &bufs[i]);
    if (h) saved[i] = tr.h[vcols[i]], tr.h[vcols[i]] = h;
  }
  int all[8], na = 0;
  for (int i = 0; i < nv; i++) all[na++] = vcols[i];
  for (int i = 0; i < nk; i++) all[na++] = kcols[i];
  for (int t = 0; t < queries; t++) {
    oquery q;
    memset(&q, 0, sizeof q);
    if (th_chance(r, 75)) q.where = gen_tree(r, &tr, all, (size_t)na, 1 + (int)th_below(r, 3), 12);
    q.n_keys = (int)th_below(r, (uint64_t)nk + 1);
    if (q.n_keys == 1) q.keys[0] = kcols[th_below(r, (uint64_t)nk)];
    if (q.n_keys == 2) q.keys[0] = kcols[th_chance(r, 50)], q.keys[1] = kcols[0] == q.keys[0] ? kcols[1] : kcols[0];
    q.n_aggs = 1 + (int)th_below(r, 6);
    case_budget = 8;
    node_budget = 60;
    for (int a = 0; a < q.n_aggs; a++) {
      q.kinds[a] = (ps_agg_kind)(1 + th_below(r, 6));
      if (q.kinds[a] != PS_AGG_COUNT_STAR)
        q.vals[a] = random_value(r, &tr, vcols, nv, all, na, 1 + (int)th_below(r, 3));
    }
    char label[96];
    snprintf(label, sizeof label, "random n=%llu query %d", (unsigned long long)n, t);
    th_case("%s", label);
    check_query(&tr, ctx, tr.h, n, &q, label);
    if (ref) check_query(&tr, ref, tr.hr, n, &q, label);
    oq_free(&q);
  }
  for (int i = 0; i < nv; i++) {
    if (!saved[i]) continue;
    ps_column_destroy(tr.h[vcols[i]]);
    tr.h[vcols[i]] = saved[i];
  }
  for (int i = 0; i < 4; i++) ps_buffer_destroy(bufs[i]);
  tr_clear(&tr);
}

/* ---- named edge cases --------------------------------------------------------- */

static tcol *int_col(ps_type t, uint64_t n, uint32_t w, int64_t m, const uint64_t *codes, const uint8_t *validity);

/* A GROUP BY whose accumulators fit a specialized kernel's registers
 * (PS_QMODE_REGS: 5 groups, a NULL one included, of every aggregate with
 * and without nulls), with and without a WHERE, on enough rows that each
 * work-item takes several words. */
/* A GROUP BY over a small domain just past PS_QUERY_SPEC_MIN_ROWS_GPU_GROUPED
 * rows, then the same aggregates without GROUP BY, under the default
 * query_specialize: both exact, and on CUDA the first asks for its
 * specialized kernel (built in the background; the second run takes it)
 * while the second does not (PS_QUERY_SPEC_MIN_ROWS). */
static void small_group_by_spec(th_rng *r) {
  ps_context *ctx = th_context(0);
  const int by_default = ps_context_internal_options(ctx)->query_specialize == PS_OPT_AUTO;
  const int watch = strcmp(ps_context_backend(ctx), "cuda") == 0 && by_default;
  const int cpu = opencl_cpu(ctx) && by_default;
  trun tr;
  tr_init(&tr, ctx, NULL);
  const uint64_t n = PS_QUERY_SPEC_MIN_ROWS_GPU_GROUPED + 100;
  uint64_t *v = malloc(n * sizeof *v), *keys = malloc(n * sizeof *keys);
  if (!CHECK(v && keys)) {
    free(v);
    free(keys);
    tr_clear(&tr);
    ps_context_destroy(ctx);
    return;
  }
  for (uint64_t i = 0; i < n; i++) v[i] = th_below(r, 1u << 20), keys[i] = th_below(r, 4);
  const int x = tr_add(&tr, int_col(PS_TYPE_INT32, n, 20, -1000, v, NULL));
  const int k = tr_add(&tr, int_col(PS_TYPE_UINT8, n, 2, 0, keys, NULL));
  free(v);
  free(keys);
  oquery q;
  memset(&q, 0, sizeof q);
  q.n_aggs = 2;
  q.kinds[0] = PS_AGG_SUM;
  q.vals[0] = col_node(x);
  q.kinds[1] = PS_AGG_MIN;
  q.vals[1] = col_node(x);
  q.n_keys = 1;
  q.keys[0] = k;
  th_case("small GROUP BY, default specialization");
  uint64_t before = spec_lookups(ctx);
  const uint64_t asked = spec_requests(ctx);
  check_query(&tr, ctx, tr.h, n, &q, "small GROUP BY");
  ps_context_wait_builds(ctx, 0);
  if (watch)
    CHECKF(spec_lookups(ctx) > before, "a GROUP BY of %llu rows did not ask for a specialized kernel",
           (unsigned long long)n);
  if (cpu)
    CHECKF(spec_requests(ctx) == asked, "a GROUP BY of %llu rows on a CPU device asked for a specialized kernel",
           (unsigned long long)n);
  check_query(&tr, ctx, tr.h, n, &q, "small GROUP BY, again");
  th_case("small query without GROUP BY, default specialization");
  q.n_keys = 0;
  before = spec_lookups(ctx);
  check_query(&tr, ctx, tr.h, n, &q, "small query without GROUP BY");
  if (watch)
    CHECKF(spec_lookups(ctx) == before, "a query of %llu rows without GROUP BY asked for a specialized kernel",
           (unsigned long long)n);
  oq_free(&q);
  tr_clear(&tr);
  ps_context_destroy(ctx);
}

static void register_groups(ps_context *ctx, th_rng *r) {
  trun tr;
  tr_init(&tr, ctx, NULL);
  enum { N = 70001 };
  uint64_t *a = malloc(N * sizeof *a), *b = malloc(N * sizeof *b), *keys = malloc(N * sizeof *keys);
  if (!CHECK(a && b && keys)) {
    free(a);
    free(b);
    free(keys);
    tr_clear(&tr);
    return;
  }
  for (int i = 0; i < N; i++) a[i] = th_below(r, 1u << 20), b[i] = th_below(r, 1u << 12), keys[i] = th_below(r, 4);
  uint8_t *aval = tcol_random_validity(r, N, TN_FEW), *kval = tcol_random_validity(r, N, TN_FEW);
  int va = tr_add(&tr, int_col(PS_TYPE_INT32, N, 20, -500000, a, aval));
  int vb = tr_add(&tr, int_col(PS_TYPE_INT32, N, 12, 7, b, NULL));
  int k = tr_add(&tr, int_col(PS_TYPE_UINT8, N, 2, 0, keys, kval));
  /* values just inside the register mode's bound of 2^57, of either sign: a
   * work-item's sum nears 2^62 and a warp's passes 64 bits (CUDA adds a
   * warp's registers together before the table) */
  const int64_t near = (int64_t)1 << 56;
  int neg = tr_add(&tr, int_col(PS_TYPE_INT64, N, 12, -near, b, NULL));
  int pos = tr_add(&tr, int_col(PS_TYPE_INT64, N, 20, near - (1 << 20), a, aval));
  free(aval);
  free(kval);
  free(a);
  free(b);
  free(keys);
  CHECK(va >= 0 && vb >= 0 && k >= 0 && neg >= 0 && pos >= 0);
  for (int variant = 0; variant < 2; variant++) {
    oquery q;
    memset(&q, 0, sizeof q);
    q.n_aggs = 6;
    q.kinds[0] = PS_AGG_COUNT_STAR;
    q.kinds[1] = PS_AGG_COUNT;
    q.vals[1] = col_node(va);
    q.kinds[2] = PS_AGG_SUM;
    q.vals[2] = arith_node(PS_MUL, col_node(va), col_node(vb));
    q.kinds[3] = PS_AGG_MIN;
    q.vals[3] = col_node(va);
    q.kinds[4] = PS_AGG_MAX;
    q.vals[4] = arith_node(PS_SUB, col_node(vb), col_node(va));
    q.kinds[5] = PS_AGG_AVG;
    q.vals[5] = col_node(vb);
    q.n_keys = 1;
    q.keys[0] = k;
    if (variant == 1) q.where = on_cmp(vb, PS_LT, ps_lit_int(1000));
    const char *name = variant ? "register groups, WHERE" : "register groups";
    th_case("%s", name);
    check_query(&tr, ctx, tr.h, N, &q, name);
    oq_free(&q);
  }
  oquery q;
  memset(&q, 0, sizeof q);
  q.n_aggs = 5;
  q.kinds[0] = PS_AGG_SUM;
  q.vals[0] = col_node(neg);
  q.kinds[1] = PS_AGG_SUM;
  q.vals[1] = col_node(pos);
  q.kinds[2] = PS_AGG_MIN;
  q.vals[2] = col_node(neg);
  q.kinds[3] = PS_AGG_MAX;
  q.vals[3] = col_node(pos);
  q.kinds[4] = PS_AGG_AVG;
  q.vals[4] = col_node(neg);
  q.n_keys = 1;
  q.keys[0] = k;
  th_case("register groups, sums past 64 bits");
  check_query(&tr, ctx, tr.h, N, &q, "register groups, sums past 64 bits");
  oq_free(&q);
  tr_clear(&tr);
}

static tcol *int_col(ps_type t, uint64_t n, uint32_t w, int64_t m, const uint64_t *codes, const uint8_t *validity) {
  ps_reference ref;
  ref.i = m;
  return tcol_for(t, n, w, 0, ref, codes, validity, NULL);
}

static void edge_cases(ps_context *ctx) {
  trun tr;
  tr_init(&tr, ctx, NULL);
  /* a: int64 values 0..99; big: values near 10^18; sign: +1/-1 per row */
  enum { N = 100 };
  uint64_t codes[N], bigc[N];
  uint8_t half[(N + 7) / 8];
  memset(half, 0x55, sizeof half);
  for (int i = 0; i < N; i++) codes[i] = (uint64_t)i, bigc[i] = (uint64_t)i % 2;
  int a = tr_add(&tr, int_col(PS_TYPE_INT64, N, 7, 0, codes, NULL));
  int big = tr_add(&tr, int_col(PS_TYPE_INT64, N, 1, 999999999999999999, bigc, NULL));
  int an = tr_add(&tr, int_col(PS_TYPE_INT64, N, 7, 0, codes, half));
  CHECK(a >= 0 && big >= 0 && an >= 0);

  /* empty selection: COUNT 0, SUM/MIN/MAX/AVG NULL, one row; grouped: none */
  oquery q;
  memset(&q, 0, sizeof q);
  q.where = on_cmp(a, PS_LT, ps_lit_int(0));
  q.n_aggs = 5;
  ps_agg_kind kinds[5] = {PS_AGG_COUNT_STAR, PS_AGG_SUM, PS_AGG_MIN, PS_AGG_MAX, PS_AGG_AVG};
  for (int i = 0; i < 5; i++) q.kinds[i] = kinds[i], q.vals[i] = i ? col_node(a) : NULL;
  th_case("empty selection");
  check_query(&tr, ctx, tr.h, N, &q, "empty selection");
  q.n_keys = 1;
  q.keys[0] = an;
  check_query(&tr, ctx, tr.h, N, &q, "empty selection, grouped");
  oq_free(&q);

  /* a row's product overflows 38 digits: big * big * big */
  memset(&q, 0, sizeof q);
  q.n_aggs = 1;
  q.kinds[0] = PS_AGG_SUM;
  q.vals[0] = arith_node(PS_MUL, arith_node(PS_MUL, col_node(big), col_node(big)), col_node(big));
  th_case("row overflow");
  check_query(&tr, ctx, tr.h, N, &q, "row overflow");
  /* ... but not on the rows the WHERE drops */
  q.where = on_cmp(a, PS_LT, ps_lit_int(0));
  check_query(&tr, ctx, tr.h, N, &q, "row overflow, no row selected");
  oq_free(&q);

  /* big * big * 10^2 fits 38 digits per row; the sum of 100 rows does not */
  memset(&q, 0, sizeof q);
  q.n_aggs = 2;
  q.kinds[0] = PS_AGG_SUM;
  q.kinds[1] = PS_AGG_MAX;
  q.vals[0] = arith_node(PS_MUL, arith_node(PS_MUL, col_node(big), col_node(big)), const_node(99, 0));
  q.vals[1] = arith_node(PS_MUL, arith_node(PS_MUL, col_node(big), col_node(big)), const_node(99, 0));
  th_case("sum overflow");
  check_query(&tr, ctx, tr.h, N, &q, "sum overflow");
  /* the same values times (+1, -1) alternately: partial sums pass 38 digits
   * in some orders, the total does not */
  qn_free(q.vals[0]);
  q.vals[0] = arith_node(PS_MUL, arith_node(PS_SUB, const_node(1, 0), arith_node(PS_MUL, const_node(2, 0), col_node(a))),
                         arith_node(PS_MUL, arith_node(PS_MUL, col_node(big), col_node(big)), const_node(99, 0)));
  q.where = on_cmp(a, PS_LE, ps_lit_int(1));
  check_query(&tr, ctx, tr.h, N, &q, "cancelling sum");
  oq_free(&q);

  /* AVG rounding: values 0..k-1 over k rows at scale 0 -> scale 6, half away from zero */
  for (int64_t k = 1; k <= 9; k++) {
    memset(&q, 0, sizeof q);
    q.where = on_cmp(a, PS_LT, ps_lit_int(k));
    q.n_aggs = 2;
    q.kinds[0] = q.kinds[1] = PS_AGG_AVG;
    q.vals[0] = arith_node(PS_SUB, const_node(0, 0), arith_node(PS_MUL, col_node(a), const_node(7, 3)));
    q.vals[1] = arith_node(PS_ADD, col_node(a), const_node(2, 0));
    th_case("avg k=%lld", (long long)k);
    check_query(&tr, ctx, tr.h, N, &q, "avg rounding");
    oq_free(&q);
  }
  /* a value exactly checked: AVG of 1, 2 (1.5) and of -1, -2 (-1.5) at scale 0... at scale 6 */
  {
    ps_value *v = NULL;
    ps_query *pq = NULL;
    ps_query_result *res = NULL;
    ps_expr *w = NULL;
    CHECK_OK(ctx, ps_expr_between(ctx, tr.h[a], ps_lit_int(1), ps_lit_int(2), &w));
    CHECK_OK(ctx, ps_value_column(ctx, tr.h[a], &v));
    ps_agg ag[3] = {{PS_AGG_AVG, v}, {PS_AGG_SUM, v}, {PS_AGG_COUNT_STAR, NULL}};
    ps_query_desc d;
    ps_query_desc_init(&d);
    d.rows = N;
    d.where = w;
    d.n_aggs = 3;
    d.aggs = ag;
    th_case("avg 1.5");
    if (CHECK_OK(ctx, ps_query_create(ctx, &d, &pq)) && CHECK_OK(ctx, ps_query_run(ctx, pq, &res))) {
      ps_datum x;
      char text[PS_DATUM_TEXT_SIZE];
      CHECK_OK(NULL, ps_query_result_value(res, 0, 0, &x));
      CHECK_OK(NULL, ps_datum_format(&x, text, sizeof text));
      CHECKF(!strcmp(text, "1.500000") && x.as_double == 1.5, "AVG(1, 2) = %s", text);
      CHECK_OK(NULL, ps_query_result_value(res, 0, 2, &x));
      CHECK(x.lo == 2 && x.hi == 0 && x.scale == 0);
      CHECK_STATUS(NULL, ps_query_result_value(res, 1, 0, &x), PS_ERR_INVALID_ARGUMENT);
      CHECK_STATUS(NULL, ps_query_result_value(res, 0, 3, &x), PS_ERR_INVALID_ARGUMENT);
      CHECK_STATUS(NULL, ps_query_result_key(res, 0, 0, &x), PS_ERR_INVALID_ARGUMENT);
    }
    ps_query_result_destroy(res);
    ps_query_destroy(pq);
    ps_value_destroy(v);
    ps_expr_destroy(w);
  }

  /* validation */
  {
    ps_value *v = NULL, *v2 = NULL, *out = NULL;
    ps_query *pq = NULL;
    th_case("validation");
    CHECK_STATUS(ctx, ps_value_literal(ctx, ps_lit_float(1.5), &v), PS_ERR_TYPE_MISMATCH);
    CHECK_STATUS(ctx, ps_value_literal(ctx, ps_lit_str("x", 1), &v), PS_ERR_TYPE_MISMATCH);
    CHECK_STATUS(ctx, ps_value_decimal(ctx, 1, 0, 39, &v), PS_ERR_INVALID_ARGUMENT);
    CHECK(th_contains_ci(ps_context_last_error(ctx), "scale 39"));
    CHECK_STATUS(ctx, ps_value_literal(ctx, ps_lit_decimal(1, 39), &v), PS_ERR_INVALID_ARGUMENT);
    /* 10^38 has 39 digits */
    ti128 p38 = pow10i(38);
    CHECK_STATUS(ctx, ps_value_decimal(ctx, (uint64_t)p38, (int64_t)(p38 >> 64), 0, &v), PS_ERR_INVALID_ARGUMENT);
    CHECK_OK(ctx, ps_value_decimal(ctx, (uint64_t)(p38 - 1), (int64_t)((p38 - 1) >> 64), 20, &v));
    CHECK_OK(ctx, ps_value_decimal(ctx, 1, 0, 19, &v2));
    CHECK_STATUS(ctx, ps_value_arith(ctx, PS_MUL, v, v2, &out), PS_ERR_LIMIT); /* scale 39 */
    CHECK_STATUS(ctx, ps_value_arith(ctx, (ps_arith)7, v, v2, &out), PS_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(ctx, ps_value_arith(ctx, PS_ADD, v, v, &out), PS_ERR_INVALID_ARGUMENT);
    CHECK_OK(ctx, ps_value_arith(ctx, PS_ADD, v, v2, &out)); /* owns v and v2 now */
    CHECK(ps_value_scale(out) == 20);
    ps_agg ag[2] = {{PS_AGG_COUNT_STAR, out}, {PS_AGG_SUM, NULL}};
    ps_query_desc d;
    ps_query_desc_init(&d);
    d.rows = N;
    d.n_aggs = 1;
    d.aggs = ag;
    CHECK_STATUS(ctx, ps_query_create(ctx, &d, &pq), PS_ERR_TYPE_MISMATCH);
    d.aggs = ag + 1;
    CHECK_STATUS(ctx, ps_query_create(ctx, &d, &pq), PS_ERR_TYPE_MISMATCH);
    ag[1].value = out;
    d.n_aggs = 0;
    CHECK_STATUS(ctx, ps_query_create(ctx, &d, &pq), PS_ERR_INVALID_ARGUMENT);
    d.n_aggs = PS_QUERY_MAX_AGGS + 1;
    CHECK_STATUS(ctx, ps_query_create(ctx, &d, &pq), PS_ERR_LIMIT);
    d.n_aggs = 1;
    d.n_keys = 3;
    CHECK_STATUS(ctx, ps_query_create(ctx, &d, &pq), PS_ERR_LIMIT);
    d.n_keys = 1;
    d.keys[0] = tr.h[a]; /* 7-bit codes: 128 groups */
    d.rows = N + 1;
    CHECK_STATUS(ctx, ps_query_create(ctx, &d, &pq), PS_ERR_INVALID_ARGUMENT);
    CHECK(th_contains_ci(ps_context_last_error(ctx), "rows"));
    d.rows = N;
    d.keys[0] = tr.h[big]; /* fine: 1-bit */
    CHECK_OK(ctx, ps_query_create(ctx, &d, &pq));
    ps_query_destroy(pq);
    pq = NULL;
    d.struct_size = 4;
    CHECK_STATUS(ctx, ps_query_create(ctx, &d, &pq), PS_ERR_INVALID_ARGUMENT);
    CHECK(pq == NULL);
    ps_value_destroy(out);
  }

  /* past a table of every possible key (hashed groups): two 9-bit keys
   * with nulls -> 513 * 513 > 2^17, an 18-bit key; too many groups for
   * options.max_groups; a nullable 64-bit key (2^64 + 1 possible keys) */
  {
    enum { M = 64 };
    uint64_t c9[M];
    uint8_t val[M / 8];
    memset(val, 0xFF, sizeof val);
    for (int i = 0; i < M; i++) c9[i] = (uint64_t)i * 7;
    int k1 = tr_add(&tr, int_col(PS_TYPE_INT32, M, 9, 0, c9, val));
    int k2 = tr_add(&tr, int_col(PS_TYPE_INT32, M, 9, 5, c9, val));
    int k3 = tr_add(&tr, int_col(PS_TYPE_INT32, M, 18, 5, c9, NULL));
    ps_agg ag = {PS_AGG_COUNT_STAR, NULL};
    ps_query_desc d;
    ps_query_desc_init(&d);
    d.rows = M;
    d.n_aggs = 1;
    d.aggs = &ag;
    d.n_keys = 2;
    d.keys[0] = tr.h[k1];
    d.keys[1] = tr.h[k2];
    ps_query *pq = NULL;
    th_case("hashed groups");
    memset(&q, 0, sizeof q);
    q.n_keys = 2;
    q.keys[0] = k1;
    q.keys[1] = k2;
    q.n_aggs = 3;
    q.kinds[0] = PS_AGG_COUNT_STAR;
    q.kinds[1] = PS_AGG_SUM;
    q.vals[1] = col_node(k3);
    q.kinds[2] = PS_AGG_MAX;
    q.vals[2] = col_node(k1);
    check_query(&tr, ctx, tr.h, M, &q, "513 x 513 possible keys");
    q.n_keys = 1;
    q.keys[0] = k3; /* 2^18 codes */
    check_query(&tr, ctx, tr.h, M, &q, "2^18 possible keys");
    oq_free(&q);
    th_case("too many groups");
    {
      ps_context_options o;
      th_options(&o, th.backend, 0);
      o.max_groups = 40; /* the 18-bit key has 64 */
      ps_context *small = NULL;
      char err[512];
      if (CHECK(ps_context_create(&o, err, sizeof err, &small) == PS_OK)) {
        th_apply_options(small);
        ps_column *h3 = NULL;
        if (CHECK_OK(small, tcol_create(small, tr.cols[k3], &h3))) {
          d.n_keys = 1;
          d.keys[0] = h3;
          ps_query_result *res = NULL;
          if (CHECK_OK(small, ps_query_create(small, &d, &pq))) {
            CHECK_STATUS(small, ps_query_run(small, pq, &res), PS_ERR_LIMIT);
            CHECKF(th_contains_ci(ps_context_last_error(small), "more than 40 groups"), "message: %s",
                   ps_context_last_error(small));
            CHECK(res == NULL);
          }
          ps_query_destroy(pq);
          pq = NULL;
        }
        ps_column_destroy(h3);
        ps_context_destroy(small);
      }
    }
    uint64_t c64[M];
    for (int i = 0; i < M; i++) c64[i] = (uint64_t)i << 40;
    c64[1] = UINT64_MAX; /* every 64-bit code possible */
    int k5 = tr_add(&tr, int_col(PS_TYPE_UINT64, M, 64, 0, c64, val));
    d.n_keys = 1;
    d.keys[0] = tr.h[k5];
    CHECK_STATUS(ctx, ps_query_create(ctx, &d, &pq), PS_ERR_LIMIT);
    CHECKF(th_contains_ci(ps_context_last_error(ctx), "2^64"), "message: %s", ps_context_last_error(ctx));
    /* 2^16 codes plus NULL: within the limit, and right */
    uint64_t c16[M];
    for (int i = 0; i < M; i++) c16[i] = (uint64_t)(i * 1031) % 65536;
    int k4 = tr_add(&tr, int_col(PS_TYPE_INT32, M, 16, -3, c16, half));
    memset(&q, 0, sizeof q);
    q.n_keys = 1;
    q.keys[0] = k4;
    q.n_aggs = 2;
    q.kinds[0] = PS_AGG_COUNT_STAR;
    q.kinds[1] = PS_AGG_SUM;
    q.vals[1] = col_node(k4);
    check_query(&tr, ctx, tr.h, M, &q, "2^16 + 1 groups");
    oq_free(&q);
  }

  /* corrupt code: an int8 column whose code decodes past 127 */
  {
    enum { M = 40 };
    uint64_t c8[M] = {0};
    c8[33] = 200;
    int k = tr_add(&tr, int_col(PS_TYPE_INT8, M, 8, 0, c8, NULL));
    uint64_t zeros[M] = {0};
    int z = tr_add(&tr, int_col(PS_TYPE_INT8, M, 1, 0, zeros, NULL));
    memset(&q, 0, sizeof q);
    q.n_aggs = 1;
    q.kinds[0] = PS_AGG_SUM;
    q.vals[0] = col_node(k);
    ps_query_result *res = NULL;
    th_case("corrupt");
    CHECK_STATUS(ctx, oq_run(ctx, tr.h, M, &q, 1, &res), PS_ERR_CORRUPT_DATA);
    CHECK(th_contains_ci(ps_context_last_error(ctx), "row 33"));
    CHECK(res == NULL);
    /* the same grouped by a small key (a device keeps such a domain in
     * work-group memory and reads the values an aggregate at a time) */
    q.n_keys = 1;
    q.keys[0] = z;
    th_case("corrupt, grouped");
    CHECK_STATUS(ctx, oq_run(ctx, tr.h, M, &q, 1, &res), PS_ERR_CORRUPT_DATA);
    CHECK(th_contains_ci(ps_context_last_error(ctx), "row 33"));
    CHECK(res == NULL);
    q.n_keys = 0;
    /* a corrupt code in a small key: a dictionary of 3 strings, code 3 */
    {
      tstrs abc = {0};
      tstrs_push(&abc, "a", 1);
      tstrs_push(&abc, "b", 1);
      tstrs_push(&abc, "c", 1);
      uint64_t kc[M] = {0};
      kc[33] = 3;
      int kd = tr_add(&tr, tcol_dict(&abc, 1, 0, PS_TYPE_UINT8, M, 2, 0, kc, NULL, NULL));
      tstrs_free(&abc);
      oquery g;
      memset(&g, 0, sizeof g);
      g.n_keys = 1;
      g.keys[0] = kd;
      g.n_aggs = 2;
      g.kinds[0] = PS_AGG_COUNT_STAR;
      g.kinds[1] = PS_AGG_SUM;
      g.vals[1] = col_node(z);
      th_case("corrupt key, grouped");
      CHECK_STATUS(ctx, oq_run(ctx, tr.h, M, &g, 1, &res), PS_ERR_CORRUPT_DATA);
      CHECK(th_contains_ci(ps_context_last_error(ctx), "row 33"));
      CHECK(res == NULL);
      oq_free(&g);
    }
    /* not read where the WHERE drops the row */
    q.where = on_cmp(z, PS_LT, ps_lit_int(0));
    CHECK_OK(ctx, oq_run(ctx, tr.h, M, &q, 1, &res));
    ps_query_result_destroy(res);
    res = NULL;
    /* A WHERE leaf reads its column on the rows that reach it: the right
     * operand of an AND where the left one is not FALSE, of an OR where it
     * is not TRUE. */
    qn_free(q.vals[0]);
    q.vals[0] = col_node(z);
    struct {
      int and_, k_first, z_cmp, corrupt;
    } shapes[] = {
        {1, 0, PS_LT, 0}, /* z < 0 AND k > 5: k never read */
        {1, 0, PS_GE, 1}, /* z >= 0 AND k > 5: read on every row */
        {1, 1, PS_LT, 1}, /* k > 5 AND z < 0: a left operand is always read */
        {0, 0, PS_GE, 0}, /* z >= 0 OR k > 5: k never read */
        {0, 0, PS_LT, 1}, /* z < 0 OR k > 5: read on every row */
    };
    for (size_t i = 0; i < sizeof shapes / sizeof shapes[0]; i++) {
      on_free(q.where);
      onode *zl = on_cmp(z, (ps_cmp)shapes[i].z_cmp, ps_lit_int(0)), *kl = on_cmp(k, PS_GT, ps_lit_int(5));
      onode *l = shapes[i].k_first ? kl : zl, *rt = shapes[i].k_first ? zl : kl;
      q.where = shapes[i].and_ ? on_and(l, rt) : on_or(l, rt);
      th_case("corrupt code under a short cut, shape %zu", i);
      res = NULL;
      CHECK_STATUS(ctx, oq_run(ctx, tr.h, M, &q, 1, &res), shapes[i].corrupt ? PS_ERR_CORRUPT_DATA : PS_OK);
      if (shapes[i].corrupt) {
        CHECK(th_contains_ci(ps_context_last_error(ctx), "row 33"));
        CHECK(res == NULL);
      }
      ps_query_result_destroy(res);
      /* a filter reads every row of every leaf */
      ps_expr *e = NULL;
      uint64_t count = 0;
      if (CHECK_OK(ctx, on_build(ctx, q.where, tr.h, &e)))
        CHECK_STATUS(ctx, ps_filter_count(ctx, e, &count), PS_ERR_CORRUPT_DATA);
      ps_expr_destroy(e);
    }
    res = NULL;
    oq_free(&q);
  }

  /* a corrupt code outranks an overflow in an earlier row, also across chunks */
  {
    enum { M = 200 };
    uint64_t c8[M] = {0}, cx[M] = {0};
    c8[150] = 255;
    cx[0] = 1000000000000000; /* cubed: 10^45 */
    int k = tr_add(&tr, int_col(PS_TYPE_INT8, M, 8, 0, c8, NULL));
    int x = tr_add(&tr, int_col(PS_TYPE_INT64, M, 50, 0, cx, NULL));
    memset(&q, 0, sizeof q);
    q.n_aggs = 2;
    q.kinds[0] = PS_AGG_SUM;
    q.vals[0] = arith_node(PS_MUL, arith_node(PS_MUL, col_node(x), col_node(x)), col_node(x));
    q.kinds[1] = PS_AGG_MAX;
    q.vals[1] = col_node(k);
    ps_query_result *res = NULL;
    th_case("corrupt after overflow");
    CHECK_STATUS(ctx, oq_run(ctx, tr.h, M, &q, 1, &res), PS_ERR_CORRUPT_DATA);
    CHECK(th_contains_ci(ps_context_last_error(ctx), "row 150"));
    qn_free(q.vals[1]);
    q.n_aggs = 1;
    CHECK_STATUS(ctx, oq_run(ctx, tr.h, M, &q, 1, &res), PS_ERR_OVERFLOW);
    CHECK(th_contains_ci(ps_context_last_error(ctx), "row 0"));
    q.vals[1] = NULL;
    oq_free(&q);
  }

  /* More chunks than a call's status batch (PS_QUERY_STATUS_SLOTS): where a
   * backend reads the chunks' status words together, an error in a later
   * batch is still found, a corrupt code there still outranks an earlier
   * overflow, and the sums of every batch are in the result. */
  {
    enum { M = 64 * 70 + 17 };
    static uint64_t c8[M], cx[M];
    memset(c8, 0, sizeof c8);
    memset(cx, 0, sizeof cx);
    for (uint64_t i = 0; i < M; i++) cx[i] = i % 1000;
    tr_clear(&tr);
    int k = tr_add(&tr, int_col(PS_TYPE_INT8, M, 8, 0, c8, NULL));
    int x = tr_add(&tr, int_col(PS_TYPE_INT64, M, 50, 0, cx, NULL));
    memset(&q, 0, sizeof q);
    q.n_aggs = 2;
    q.kinds[0] = PS_AGG_SUM;
    q.vals[0] = col_node(x);
    q.kinds[1] = PS_AGG_MAX;
    q.vals[1] = col_node(k);
    th_case("many chunks, exact");
    check_query(&tr, ctx, tr.h, M, &q, "many chunks");
    ps_query_result *res = NULL;
    const uint64_t late = 64 * 67 + 5;
    tr_clear(&tr); /* new columns over the changed values */
    c8[late] = 255;
    cx[128] = 1000000000000000; /* cubed: 10^45 */
    k = tr_add(&tr, int_col(PS_TYPE_INT8, M, 8, 0, c8, NULL));
    x = tr_add(&tr, int_col(PS_TYPE_INT64, M, 50, 0, cx, NULL));
    qn_free(q.vals[0]);
    qn_free(q.vals[1]);
    q.vals[0] = arith_node(PS_MUL, arith_node(PS_MUL, col_node(x), col_node(x)), col_node(x));
    q.vals[1] = col_node(k);
    th_case("many chunks, corrupt in a late batch after an overflow");
    CHECK_STATUS(ctx, oq_run(ctx, tr.h, M, &q, 1, &res), PS_ERR_CORRUPT_DATA);
    CHECKF(th_contains_ci(ps_context_last_error(ctx), "row 4293"), "%s", ps_context_last_error(ctx));
    CHECK(res == NULL);
    th_case("many chunks, overflow in a late batch");
    tr_clear(&tr);
    cx[128] = 0;
    cx[late + 64] = 1000000000000000;
    x = tr_add(&tr, int_col(PS_TYPE_INT64, M, 50, 0, cx, NULL));
    qn_free(q.vals[0]);
    qn_free(q.vals[1]);
    q.n_aggs = 1;
    q.vals[0] = arith_node(PS_MUL, arith_node(PS_MUL, col_node(x), col_node(x)), col_node(x));
    q.vals[1] = NULL;
    CHECK_STATUS(ctx, oq_run(ctx, tr.h, M, &q, 1, &res), PS_ERR_OVERFLOW);
    CHECKF(th_contains_ci(ps_context_last_error(ctx), "row 4357"), "%s", ps_context_last_error(ctx));
    CHECK(res == NULL);
    oq_free(&q);
  }
  tr_clear(&tr);
}

/* GROUP BY an empty dictionary: all null (one NULL group), or without
 * validity (every row would be corrupt: none selected, no group). */
static void empty_dictionary_key(ps_context *ctx) {
  trun tr;
  tr_init(&tr, ctx, NULL);
  tstrs none = {0};
  enum { N = 40 };
  uint64_t codes[N] = {0}, zeros[N] = {0};
  uint8_t nulls[(N + 7) / 8] = {0};
  int k = tr_add(&tr, tcol_dict(&none, 1, 0, PS_TYPE_UINT8, N, 1, 0, codes, nulls, NULL));
  int k2 = tr_add(&tr, tcol_dict(&none, 1, 0, PS_TYPE_UINT8, N, 1, 0, codes, NULL, NULL));
  int z = tr_add(&tr, tcol_for(PS_TYPE_INT8, N, 1, 0, (ps_reference){.i = 0}, zeros, NULL, NULL));
  oquery q;
  memset(&q, 0, sizeof q);
  q.n_keys = 1;
  q.keys[0] = k;
  q.n_aggs = 1;
  q.kinds[0] = PS_AGG_COUNT_STAR;
  th_case("empty dictionary key, all null");
  check_query(&tr, ctx, tr.h, N, &q, "empty dictionary key, all null");
  q.keys[0] = k2;
  q.where = on_cmp(z, PS_LT, ps_lit_int(0));
  th_case("empty dictionary key, no row selected");
  check_query(&tr, ctx, tr.h, N, &q, "empty dictionary key, no row selected");
  oq_free(&q);
  tr_clear(&tr);
}

/* NULL keys last, an unsorted dictionary's keys in string order. */
static void key_order(ps_context *ctx, th_rng *r) {
  trun tr;
  tr_init(&tr, ctx, NULL);
  tstrs dict = {0};
  const char *words[] = {"pear", "apple", "", "fig", "apples", "b"};
  for (int i = 0; i < 6; i++) tstrs_push(&dict, words[i], strlen(words[i]));
  enum { N = 77 };
  uint64_t codes[N];
  for (int i = 0; i < N; i++) codes[i] = th_below(r, 6);
  uint8_t *val = tcol_random_validity(r, N, TN_FEW);
  int k = tr_add(&tr, tcol_dict(&dict, 0, 0, PS_TYPE_UINT8, N, 3, 0, codes, val, NULL));
  free(val);
  tstrs_free(&dict);
  oquery q;
  memset(&q, 0, sizeof q);
  q.n_keys = 1;
  q.keys[0] = k;
  q.n_aggs = 2;
  q.kinds[0] = PS_AGG_COUNT_STAR;
  q.kinds[1] = PS_AGG_MAX;
  q.vals[1] = col_node(k);
  th_case("unsorted dictionary keys");
  check_query(&tr, ctx, tr.h, N, &q, "unsorted dictionary keys");
  oq_free(&q);
  tr_clear(&tr);
}

/* Sums whose 64-bit words wrap many times: values of +-2^60 over thousands of
 * rows, grouped by a key of 4 codes and NULL (a device keeps such a small
 * domain in work-group memory and adds with carries between 64-bit words),
 * ungrouped, and times 16 (beyond 64 bits: exact 128-bit arithmetic). */
static void wide_sums(ps_context *ctx, th_rng *r) {
  trun tr;
  tr_init(&tr, ctx, NULL);
  enum { N = 4000 };
  uint64_t *codes = malloc(N * sizeof *codes), *keys = malloc(N * sizeof *keys);
  CHECK(codes && keys);
  if (!codes || !keys) {
    free(codes);
    free(keys);
    tr_clear(&tr);
    return;
  }
  for (int i = 0; i < N; i++) codes[i] = th_u64(r) >> 3, keys[i] = th_below(r, 4);
  uint8_t *val = tcol_random_validity(r, N, TN_FEW), *kval = tcol_random_validity(r, N, TN_FEW);
  int v = tr_add(&tr, int_col(PS_TYPE_INT64, N, 61, -((int64_t)1 << 60), codes, val));
  int k = tr_add(&tr, int_col(PS_TYPE_UINT8, N, 2, 0, keys, kval));
  free(val);
  free(kval);
  free(codes);
  free(keys);
  CHECK(v >= 0 && k >= 0);
  static const ps_agg_kind kinds[6] = {PS_AGG_COUNT_STAR, PS_AGG_COUNT, PS_AGG_SUM,
                                       PS_AGG_MIN,        PS_AGG_MAX,   PS_AGG_AVG};
  for (int variant = 0; variant < 4; variant++) {
    oquery q;
    memset(&q, 0, sizeof q);
    q.n_aggs = 6;
    for (int i = 0; i < 6; i++) {
      q.kinds[i] = kinds[i];
      if (i == 0) continue;
      q.vals[i] = variant == 3 ? arith_node(PS_MUL, col_node(v), const_node(16, 0)) : col_node(v);
    }
    q.n_keys = variant == 1 ? 0 : 1;
    q.keys[0] = k;
    if (variant == 2) q.where = on_cmp(v, PS_LT, ps_lit_int(0)); /* negative values only */
    static const char *const names[4] = {"wide sums, grouped", "wide sums", "wide negative sums, grouped",
                                         "wide sums x16, grouped"};
    th_case("%s", names[variant]);
    check_query(&tr, ctx, tr.h, N, &q, names[variant]);
    oq_free(&q);
  }
  tr_clear(&tr);
}

/* Constants outside int64 (2^63 as ps_lit_uint, 2^64 - 1, 10^38 - 1 and
 * -(2^63) - 1 as decimal128 literals, 2^64 and -(10^38 - 1) through
 * ps_value_decimal) times a column of ones, and products of them that do or do
 * not fit 38 digits: a device must evaluate them in 128 bits, never in its
 * 64-bit arithmetic (which reads a constant's low word only), and give the
 * oracle's results, or PS_ERR_OVERFLOW. At 1 row (the generic kernel) and on
 * a context that specializes every query; ungrouped and grouped by a small
 * key (a device's GROUP BY table in work-group memory is for values proven to
 * fit 64 bits). wide_constants_spec_size runs them at the size that takes a
 * specialized kernel by default. */
static void wide_constants(ps_context *ctx, uint64_t n) {
  trun tr;
  tr_init(&tr, ctx, NULL);
  uint64_t *zeros = calloc(n, sizeof *zeros), *keys = malloc(n * sizeof *keys);
  CHECK(zeros && keys);
  if (!zeros || !keys) {
    free(zeros);
    free(keys);
    tr_clear(&tr);
    return;
  }
  for (uint64_t r = 0; r < n; r++) keys[r] = r % 3;
  const int x = tr_add(&tr, int_col(PS_TYPE_INT64, n, 1, 1, zeros, NULL)); /* every row 1 */
  const int k = tr_add(&tr, int_col(PS_TYPE_UINT8, n, 2, 0, keys, NULL));
  free(zeros);
  free(keys);
  CHECK(x >= 0 && k >= 0);
  const ti128 two63 = (ti128)1 << 63, two64 = (ti128)1 << 64;
  /* qn_build: 2^63 through ps_lit_uint, 2^64 - 1, 10^38 - 1 and -(2^63) - 1
   * through ps_lit_decimal128, 2^64 and -(10^38 - 1) through ps_value_decimal */
  static const char *const names[] = {"2^63", "2^64 - 1",     "10^38 - 1",  "-(2^63) - 1",
                                      "2^64", "-(10^38 - 1)", "2^63 / 10^2"};
  const ti128 consts[] = {two63, two64 - 1, max38(), -two63 - 1, two64, -max38(), two63};
  const uint32_t scales[] = {0, 0, 0, 0, 0, 0, 2};
  for (size_t i = 0; i < sizeof consts / sizeof consts[0]; i++) {
    for (int grouped = 0; grouped < 2; grouped++) {
      oquery q;
      memset(&q, 0, sizeof q);
      q.n_keys = grouped;
      q.keys[0] = k;
      /* x * c; c * x; x * c + x (x rescaled where c has a scale), or - x at
       * 10^38 - 1; CASE WHEN x > 0 THEN c END: SUM where n values sum to 38
       * digits, else MIN; MAX; AVG where c fits at AVG's scale, else MAX */
      const ti128 mag = consts[i] < 0 ? -consts[i] : consts[i];
      const int sum = mag <= max38() / (ti128)n, avg = mag <= max38() / pow10i(scales[i] < 6 ? 6 - scales[i] : 0);
      q.n_aggs = 4;
      q.kinds[0] = sum ? PS_AGG_SUM : PS_AGG_MIN;
      q.vals[0] = arith_node(PS_MUL, col_node(x), const_node(consts[i], scales[i]));
      q.kinds[1] = PS_AGG_MAX;
      q.vals[1] = arith_node(PS_MUL, const_node(consts[i], scales[i]), col_node(x));
      q.kinds[2] = sum ? PS_AGG_SUM : PS_AGG_MIN;
      q.vals[2] =
          consts[i] < max38()
              ? arith_node(PS_ADD, arith_node(PS_MUL, col_node(x), const_node(consts[i], scales[i])), col_node(x))
              : arith_node(PS_SUB, arith_node(PS_MUL, col_node(x), const_node(consts[i], scales[i])), col_node(x));
      q.kinds[3] = avg ? PS_AGG_AVG : PS_AGG_MAX;
      q.vals[3] = qn_new(QN_CASE);
      q.vals[3]->when = on_cmp(x, PS_GT, ps_lit_int(0));
      q.vals[3]->a = const_node(consts[i], scales[i]);
      th_case("wide constant %s, %llu rows%s", names[i], (unsigned long long)n, grouped ? ", grouped" : "");
      check_query(&tr, ctx, tr.h, n, &q, names[i]);
      oq_free(&q);
    }
  }
  /* products: (x * a) * b */
  static const struct {
    const char *name;
    int a, b; /* 0: 2^63, 1: 2^64 - 1, 2: 2^64, 3: 10^38 - 1, 4: -(2^63) - 1 */
    int add;  /* 1: (x * a) + b instead */
  } prods[] = {
      {"2^64 * 2^64 (overflow)", 2, 2, 0},        {"2^63 * 2^63 = 2^126", 0, 0, 0},
      {"(2^64 - 1)^2 (overflow)", 1, 1, 0},       {"(-(2^63) - 1) * 2^63", 4, 0, 0},
      {"(10^38 - 1) + 2^63 (overflow)", 3, 0, 1}, {"(10^38 - 1) * (-(2^63) - 1) (overflow)", 3, 4, 0},
  };
  const ti128 factors[] = {two63, two64 - 1, two64, max38(), -two63 - 1};
  for (size_t i = 0; i < sizeof prods / sizeof prods[0]; i++) {
    oquery q;
    memset(&q, 0, sizeof q);
    q.n_aggs = 2;
    q.kinds[0] = PS_AGG_MAX;
    q.vals[0] =
        arith_node(prods[i].add ? PS_ADD : PS_MUL, arith_node(PS_MUL, col_node(x), const_node(factors[prods[i].a], 0)),
                   const_node(factors[prods[i].b], 0));
    q.kinds[1] = PS_AGG_MIN;
    q.vals[1] = arith_node(PS_MUL, const_node(factors[prods[i].a], 0), const_node(factors[prods[i].b], 0));
    if (prods[i].add) {
      qn_free(q.vals[1]);
      q.vals[1] = arith_node(PS_ADD, const_node(factors[prods[i].a], 0), const_node(factors[prods[i].b], 0));
    }
    th_case("wide product %s, %llu rows", prods[i].name, (unsigned long long)n);
    check_query(&tr, ctx, tr.h, n, &q, prods[i].name);
    oq_free(&q);
  }
  tr_clear(&tr);
}

/* wide_constants at SPEC_MIN_ROWS + 33 rows (a kernel specialized for the
 * query by default, its rows spread over many work-items), in two queries
 * (the oracle is slow at this size): the constants' values that fit in one,
 * a product that overflows in the other. */
static void wide_constants_spec_size(ps_context *ctx) {
  trun tr;
  tr_init(&tr, ctx, NULL);
  const uint64_t n = SPEC_MIN_ROWS + 33;
  uint64_t *zeros = calloc(n, sizeof *zeros);
  CHECK(zeros != NULL);
  if (!zeros) {
    tr_clear(&tr);
    return;
  }
  const int x = tr_add(&tr, int_col(PS_TYPE_INT64, n, 1, 1, zeros, NULL)); /* every row 1 */
  free(zeros);
  CHECK(x >= 0);
  const ti128 two63 = (ti128)1 << 63, two64 = (ti128)1 << 64;
  oquery q;
  memset(&q, 0, sizeof q);
  q.kinds[q.n_aggs] = PS_AGG_MAX;
  q.vals[q.n_aggs++] = arith_node(PS_MUL, col_node(x), const_node(two63, 0));
  q.kinds[q.n_aggs] = PS_AGG_SUM;
  q.vals[q.n_aggs++] = arith_node(PS_MUL, col_node(x), const_node(two64 - 1, 0));
  q.kinds[q.n_aggs] = PS_AGG_MAX;
  q.vals[q.n_aggs++] = arith_node(PS_MUL, col_node(x), const_node(max38(), 0));
  q.kinds[q.n_aggs] = PS_AGG_MIN;
  q.vals[q.n_aggs++] = arith_node(PS_MUL, col_node(x), const_node(-two63 - 1, 0));
  q.kinds[q.n_aggs] = PS_AGG_SUM;
  q.vals[q.n_aggs++] = arith_node(PS_MUL, col_node(x), const_node(-two64, 0));
  q.kinds[q.n_aggs] = PS_AGG_AVG;
  q.vals[q.n_aggs++] = arith_node(PS_MUL, col_node(x), const_node(-max38(), 38));
  q.kinds[q.n_aggs] = PS_AGG_MAX;
  q.vals[q.n_aggs++] = arith_node(PS_MUL, arith_node(PS_MUL, col_node(x), const_node(two63, 0)), const_node(two63, 0));
  th_case("wide constants, %llu rows", (unsigned long long)n);
  check_query(&tr, ctx, tr.h, n, &q, "wide constants");
  oq_free(&q);
  memset(&q, 0, sizeof q);
  q.n_aggs = 1;
  q.kinds[0] = PS_AGG_SUM;
  q.vals[0] = arith_node(PS_MUL, arith_node(PS_MUL, col_node(x), const_node(two64, 0)), const_node(two64, 0));
  th_case("wide product 2^64 * 2^64 (overflow), %llu rows", (unsigned long long)n);
  check_query(&tr, ctx, tr.h, n, &q, "wide product 2^64 * 2^64");
  oq_free(&q);
  tr_clear(&tr);
}

/* AVG needs only the average to fit 38 digits, not the sum (which is exact
 * in 192 bits): 200 values of 0.5 at scale 38 average 0.5 though they sum to
 * 100 (SUM of them is PS_ERR_OVERFLOW); 200 values of -(10^38 - 1) average
 * -(10^38 - 1) at scale 0, but not at AVG's scale 6; grouped too. */
static void avg_wide_sum(ps_context *ctx) {
  trun tr;
  tr_init(&tr, ctx, NULL);
  enum { N = 200 };
  uint64_t zeros[N] = {0}, keys[N];
  for (int i = 0; i < N; i++) keys[i] = (uint64_t)i % 2;
  const int x = tr_add(&tr, int_col(PS_TYPE_INT64, N, 1, 1, zeros, NULL)); /* every row 1 */
  const int k = tr_add(&tr, int_col(PS_TYPE_UINT8, N, 1, 0, keys, NULL));
  CHECK(x >= 0 && k >= 0);
  const ti128 half38 = 5 * pow10i(37); /* 0.5 at scale 38 */
  for (int grouped = 0; grouped < 2; grouped++) {
    oquery q;
    memset(&q, 0, sizeof q);
    q.n_keys = grouped;
    q.keys[0] = k;
    q.n_aggs = 3;
    q.kinds[0] = PS_AGG_AVG;
    q.vals[0] = arith_node(PS_MUL, col_node(x), const_node(half38, 38));
    q.kinds[1] = PS_AGG_AVG;
    q.vals[1] = arith_node(PS_MUL, col_node(x), const_node(-half38 - 1, 38));
    q.kinds[2] = PS_AGG_COUNT_STAR;
    th_case("avg of a sum past 38 digits%s", grouped ? ", grouped" : "");
    if (check_query(&tr, ctx, tr.h, N, &q, "avg of a sum past 38 digits")) {
      ps_query_result *res = NULL;
      if (CHECK_OK(ctx, oq_run(ctx, tr.h, N, &q, 1, &res))) {
        ps_datum d;
        char text[PS_DATUM_TEXT_SIZE];
        CHECK_OK(NULL, ps_query_result_value(res, 0, 0, &d));
        CHECK_OK(NULL, ps_datum_format(&d, text, sizeof text));
        CHECKF(!strcmp(text, "0.50000000000000000000000000000000000000"), "AVG = %s", text);
        CHECK_OK(NULL, ps_query_result_value(res, 0, 1, &d));
        CHECK_OK(NULL, ps_datum_format(&d, text, sizeof text));
        CHECKF(!strcmp(text, "-0.50000000000000000000000000000000000001"), "AVG = %s", text);
      }
      ps_query_result_destroy(res);
    }
    /* SUM of the same overflows */
    q.kinds[0] = PS_AGG_SUM;
    ps_query_result *none = NULL;
    CHECK_STATUS(ctx, oq_run(ctx, tr.h, N, &q, 1, &none), PS_ERR_OVERFLOW);
    CHECK(th_contains_ci(ps_context_last_error(ctx), "sum of aggregate 0"));
    check_query(&tr, ctx, tr.h, N, &q, "sum past 38 digits");
    /* -(10^38 - 1) at scale 0: the average fits, at AVG's scale 6 it does not */
    q.kinds[0] = PS_AGG_AVG;
    qn_free(q.vals[0]);
    q.vals[0] = arith_node(PS_MUL, col_node(x), const_node(-max38(), 0));
    qn_free(q.vals[1]); /* oq_free frees only the first n_aggs */
    q.vals[1] = NULL;
    q.n_aggs = 1;
    CHECK_STATUS(ctx, oq_run(ctx, tr.h, N, &q, 1, &none), PS_ERR_OVERFLOW);
    CHECK(th_contains_ci(ps_context_last_error(ctx), "average of aggregate 0 at scale 6"));
    check_query(&tr, ctx, tr.h, N, &q, "avg past 38 digits at scale 6");
    /* ... and 10^32 - 1 at scale 0 averages 10^32 - 1 at scale 6, exactly */
    qn_free(q.vals[0]);
    q.vals[0] = arith_node(PS_MUL, col_node(x), const_node(pow10i(32) - 1, 0));
    check_query(&tr, ctx, tr.h, N, &q, "avg of 10^32 - 1");
    ps_query_result_destroy(none);
    oq_free(&q);
  }
  tr_clear(&tr);
}

static void format_cases(void) {
  struct {
    ti128 v;
    uint32_t scale;
    const char *text;
  } cases[] = {{0, 0, "0"},           {0, 2, "0.00"},           {-5, 2, "-0.05"},
               {12345, 2, "123.45"},  {-12345, 5, "-0.12345"},  {7, 0, "7"},
               {-1, 38, "-0.00000000000000000000000000000000000001"}};
  th_case("ps_datum_format");
  for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
    ps_datum d = odatum(cases[i].v, cases[i].scale);
    char buf[PS_DATUM_TEXT_SIZE];
    if (CHECK_OK(NULL, ps_datum_format(&d, buf, sizeof buf)))
      CHECKF(!strcmp(buf, cases[i].text), "format: %s, expected %s", buf, cases[i].text);
  }
  ps_datum d = odatum(max38(), 0), n = onull();
  char buf[PS_DATUM_TEXT_SIZE];
  CHECK_OK(NULL, ps_datum_format(&d, buf, sizeof buf));
  CHECK(!strcmp(buf, "99999999999999999999999999999999999999"));
  d = odatum(-max38(), 38);
  CHECK_OK(NULL, ps_datum_format(&d, buf, sizeof buf));
  CHECK(strlen(buf) == 41);
  CHECK_STATUS(NULL, ps_datum_format(&d, buf, 41), PS_ERR_BUFFER_TOO_SMALL);
  CHECK_OK(NULL, ps_datum_format(&n, buf, sizeof buf));
  CHECK(!strcmp(buf, "NULL"));
}

int main(int argc, char **argv) {
  th_init(argc, argv, "query");
  format_cases();
  ps_context *ref = th_is_reference() ? NULL : th_reference_context(0);
  for (int c = 0; c < NCTX; c++) {
    /* the last chunking with each chunk's status read in its own wait (the
     * others: one wait per call, where the backend can) and, on OpenCL, each
     * launch's parameter blocks in buffers of their own (the others: the
     * kept buffers, whose staging area "many chunks" goes round); the one
     * before it with the one wait reading back into the caller's memory
     * (the others: through pinned staging, CUDA and OpenCL) */
    if (c == NCTX - 1) th_test_options("query_wait_per_chunk=1,opencl_param_buffers=0");
    if (c == NCTX - 2) th_test_options("query_collect_pinned=0");
    ps_context *ctx = th_context(chunk_rows[c]);
    if (c >= NCTX - 2) th_options_reset();
    edge_cases(ctx);
    key_order(ctx, &th.rng);
    empty_dictionary_key(ctx);
    wide_sums(ctx, &th.rng);
    wide_constants(ctx, 1);
    /* Not at the sanitizer size (PACKSCAN_TEST_QUICK=2): 2^20 rows under
     * compute-sanitizer's racecheck outlast its stage; the same constants run
     * specialized at 33 rows below. */
    if (c == 0 && th.quick != 2) wide_constants_spec_size(ctx);
    avg_wide_sum(ctx);
    static const uint64_t sizes[] = {0, 1, 31, 32, 33, 100};
    for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) random_queries(ctx, ref, &th.rng, sizes[i], 4);
    for (unsigned t = 0; t < th_reps(6 * th.scale); t++)
      random_queries(ctx, ref, &th.rng, th_chunked_rows(1 + th_below(&th.rng, c ? 700 : 3000), chunk_rows[c]), 6);
    ps_context_destroy(ctx);
  }
  small_group_by_spec(&th.rng);
  /* Kernels compiled for each query's constants (query_specialize=1; by
   * default only chunks of 2^20 rows and more take them, which no other case
   * here reaches): a compile per query on a device backend, so fewer
   * queries; edge cases for corrupt codes, overflow and wide sums. */
  th_test_options("query_specialize=1,query_lanes=0,query_warp_merge=0");
  ps_context *spec = th_context(0);
  wide_sums(spec, &th.rng);
  wide_constants(spec, 33);
  register_groups(spec, &th.rng);
  static const uint64_t spec_sizes[] = {33, 5000};
  for (size_t i = 0; i < sizeof spec_sizes / sizeof spec_sizes[0]; i++)
    random_queries(spec, ref, &th.rng, spec_sizes[i], 3 * (int)th.scale);
  ps_context_destroy(spec);
  th_options_reset();
  /* GROUP BY in registers both ways on every backend: whole words per
   * work-item above (OpenCL's default), a work-item per row here (CUDA's),
   * both with the cache hints of query_prefetch (a query without GROUP BY
   * asks for its next word's WHERE columns; by rows, a selected word's key
   * and value columns) */
  th_test_options("query_specialize=1,query_lanes=1,query_prefetch=1");
  spec = th_context(0);
  register_groups(spec, &th.rng);
  random_queries(spec, ref, &th.rng, 5000, 2 * (int)th.scale);
  ps_context_destroy(spec);
  th_options_reset();
  ps_context_destroy(ref);
  return th_finish();
}
