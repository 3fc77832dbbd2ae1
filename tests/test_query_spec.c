/*
 * query_spec: the specialized query kernels' source compiles (core/query_spec.h,
 * kernels_shared/ps_query_kernels.h under PS_Q_SPEC). Queries of the
 * benchmark's shapes (SSB Q1.1, TPC-H Q6 and Q1), a CASE, one whose values
 * need 128-bit arithmetic, a GROUP BY of 2^16 groups, and the exact SUM and
 * AVG of lossless float columns (PS_VOP_FCOL: an ALP float64 column with
 * exceptions, an ordered-bits float32 one) and arithmetic on them in doubles
 * (PS_VOP_DCOL and the other double instructions) are prepared on the
 * reference backend; their specialization texts are written as the device
 * backends write them and, where CUDA is compiled, compiled by NVRTC for
 * sm_90 to a CUBIN (no GPU needed: CI compiles CUDA on machines without
 * one). PACKSCAN_SPEC_DUMP=<dir> also writes each text to <dir>/<name>.spec.
 * The same for a filter program's shape text (ps_where_spec_write), compiled
 * into the general per-word kernel (kernels_cuda/where_spec.cuh).
 */
#define _POSIX_C_SOURCE 200809L /* clock_gettime */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "harness.h"
#include "tcol.h"

#include "internal.h"
#include "query.h"
#include "query_policy.h"
#include "query_spec.h"
#if defined(PACKSCAN_HAVE_CUDA)
#include "cuda_query_spec.h"
#endif

#define N 4096

typedef struct shape {
  const char *name;
  ps_query *q;
  uint32_t min_blocks; /* CUDA's launch bounds (query_min_blocks), 0 none */
  uint32_t prefetch;   /* the cache hints (query_prefetch) */
} shape;

/* A column of random codes at `width` bits around a small reference, as
 * business data is (so that values fit 64 bits where the widths say so). */
static ps_column *make(ps_context *ctx, ps_type type, uint32_t width, int nulls, tcol **keep) {
  static uint64_t codes[N];
  for (uint64_t i = 0; i < N; i++) codes[i] = th_below(&th.rng, (uint64_t)1 << width);
  codes[0] = ((uint64_t)1 << width) - 1; /* every code of the width in use: the key domains are 2^width */
  uint8_t *validity = tcol_random_validity(&th.rng, N, nulls);
  ps_reference ref;
  ref.i = tcol_is_unsigned(type) ? 0 : (int64_t)th_below(&th.rng, 100);
  tcol *t = tcol_for(type, N, width, 0, ref, codes, validity, NULL);
  free(validity);
  ps_column *c = NULL;
  if (!CHECK_OK(ctx, tcol_create(ctx, t, &c))) c = NULL;
  *keep = t;
  return c;
}

static ps_value *col(ps_context *ctx, ps_column *c) {
  ps_value *v = NULL;
  CHECK_OK(ctx, ps_value_column(ctx, c, &v));
  return v;
}

static ps_value *arith(ps_context *ctx, ps_arith op, ps_value *a, ps_value *b) {
  ps_value *v = NULL;
  CHECK_OK(ctx, ps_value_arith(ctx, op, a, b, &v));
  return v;
}

static ps_value *one(ps_context *ctx) {
  ps_value *v = NULL;
  CHECK_OK(ctx, ps_value_decimal(ctx, 1, 0, 0, &v));
  return v;
}

/* SUM(price * disc) WHERE date BETWEEN b[0] AND b[1] AND disc BETWEEN b[2] AND
 * b[3] AND qty < b[4], the shape of SSB Q1.1 and TPC-H Q6 (qty_first: the
 * quantity's range ANDed before the discount's, as Q6 writes it). The WHERE
 * and the value go to *where and *value, which the caller destroys. */
static void ranges_product(ps_context *ctx, shape *s, const char *name, ps_column *date, ps_column *disc,
                           ps_column *qty, ps_column *price, const int64_t b[5], int qty_first, ps_expr **where,
                           ps_value **value) {
  ps_expr *dates = NULL, *discs = NULL, *qtys = NULL, *two = NULL;
  CHECK_OK(ctx, ps_expr_between(ctx, date, ps_lit_int(b[0]), ps_lit_int(b[1]), &dates));
  CHECK_OK(ctx, ps_expr_between(ctx, disc, ps_lit_int(b[2]), ps_lit_int(b[3]), &discs));
  CHECK_OK(ctx, ps_expr_compare(ctx, qty, PS_LT, ps_lit_int(b[4]), &qtys));
  CHECK_OK(ctx, ps_expr_and(ctx, dates, qty_first ? qtys : discs, &two));
  CHECK_OK(ctx, ps_expr_and(ctx, two, qty_first ? discs : qtys, where));
  ps_agg agg = {PS_AGG_SUM, *value = arith(ctx, PS_MUL, col(ctx, price), col(ctx, disc))};
  ps_query_desc d;
  ps_query_desc_init(&d);
  d.rows = N;
  d.where = *where;
  d.aggs = &agg;
  d.n_aggs = 1;
  s->name = name;
  CHECK_OK(ctx, ps_query_create(ctx, &d, &s->q));
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec * 1e3 + (double)t.tv_nsec / 1e6;
}

/* The fields the host reads of q's aggregates (ps_query_args.agg_fields). */
static uint64_t wanted_fields(const ps_query *q) {
  uint64_t wanted = 0;
  for (uint32_t a = 0; a < q->prog.n_aggs; a++)
    wanted |= (uint64_t)(q->kinds[a] == PS_AGG_MIN   ? PS_QF_COUNT | PS_QF_MIN
                         : q->kinds[a] == PS_AGG_MAX ? PS_QF_COUNT | PS_QF_MAX
                                                     : PS_QF_COUNT | PS_QF_SUM)
              << (4 * a);
  return wanted;
}

/* The text a device backend writes for q's first chunk (its mode chosen as
 * the backends choose it: registers for small GROUP BY domains, by rows and
 * merged a warp at a time, as on CUDA). */
static size_t spec_text(const ps_query *q, uint32_t min_blocks, uint32_t prefetch, char *buf, size_t size) {
  ps_query_spec_flags f;
  memset(&f, 0, sizeof f);
  f.min_blocks = min_blocks;
  f.prefetch = prefetch;
  ps_query_plan plan;
  ps_query_plan_chunk(&q->prog, wanted_fields(q), 1, 1, &plan);
  f.mode = plan.mode;
  f.fields = plan.fields;
  f.lanes = 1;
  f.warp_merge = 1;
  f.fits64 = (uint32_t)plan.fits64;
  f.has_where = q->where != NULL;
  f.data_aligned = (UINT64_C(1) << PS_MAX_COLS) - 1;
  f.and_right = q->where_and_right;
  f.or_right = q->where_or_right;
  return ps_query_spec_write(&q->prog, q->where ? &q->where->lowered->prog : NULL, &f, buf, size);
}

static void check_shape(ps_context *ctx, const shape *s, const char *dump) {
  th_case("%s", s->name);
  if (!CHECK(s->q != NULL)) return;
  char *text = malloc(PS_QUERY_SPEC_MAX_TEXT), *again = malloc(PS_QUERY_SPEC_MAX_TEXT);
  if (!CHECK(text && again)) {
    free(text);
    free(again);
    return;
  }
  const size_t len = spec_text(s->q, s->min_blocks, s->prefetch, text, PS_QUERY_SPEC_MAX_TEXT);
  CHECKF(len > 0 && strncmp(text, "#define PS_Q_SPEC 1\n", 20) == 0, "%s: text of %zu bytes", s->name, len);
  /* the kernel caches' key: the same query, the same text */
  CHECK(spec_text(s->q, s->min_blocks, s->prefetch, again, PS_QUERY_SPEC_MAX_TEXT) == len && memcmp(text, again, len) == 0);
  /* too small a buffer: 0, and an empty string */
  ps_query_spec_flags none;
  memset(&none, 0, sizeof none);
  CHECK(ps_query_spec_write(&s->q->prog, NULL, &none, again, 64) == 0 && again[0] == '\0');
  if (dump) {
    char path[1024];
    snprintf(path, sizeof path, "%s/%s.spec", dump, s->name);
    FILE *f = fopen(path, "w");
    if (CHECKF(f != NULL, "cannot write %s", path)) {
      fputs(text, f);
      fclose(f);
    }
  }
#if defined(PACKSCAN_HAVE_CUDA)
  void *cubin = NULL;
  size_t size = 0;
  const double t0 = now_ms();
  const ps_status st = ps_cuda_spec_compile(ctx, PS_CUDA_SPEC_QUERY, text, 9, 0, &cubin, &size);
  const double ms = now_ms() - t0;
  CHECKF(st == PS_OK && cubin && size > 0, "%s: NVRTC: %s: %s", s->name, ps_status_name(st),
         ps_context_last_error(ctx));
  printf("  %s: %zu bytes of text, NVRTC sm_90 %.0f ms, CUBIN %zu bytes\n", s->name, len, ms, size);
  ps_free(ctx, cubin);
#else
  (void)ctx;
  (void)now_ms;
  printf("  %s: %zu bytes of text (CUDA not compiled: no NVRTC compile)\n", s->name, len);
#endif
  free(text);
  free(again);
}

/* The launch policy both device backends take from the core
 * (core/query_policy.h): the modes of the shapes below, and the launch shape
 * arithmetic at its limits. */
static void check_policy(const shape *shapes) {
  th_case("policy");
  ps_query_plan plan;
  /* SSB Q1.1: no GROUP BY, 64-bit values */
  ps_query_plan_chunk(&shapes[0].q->prog, 0, 1, 1, &plan);
  CHECK(plan.mode == PS_QMODE_PRIVATE && plan.fits64 && plan.bound < 0);
  /* TPC-H Q1: its groups in registers where allowed, else the local table */
  const uint64_t q1 = wanted_fields(shapes[1].q);
  ps_query_plan_chunk(&shapes[1].q->prog, q1, 1, 1, &plan);
  CHECK(plan.mode == PS_QMODE_REGS && plan.fits64 && plan.bound > 0);
  CHECK(ps_query_generic_mode(&shapes[1].q->prog, plan.fits64, 1) == PS_QMODE_LOCAL);
  ps_query_plan_chunk(&shapes[1].q->prog, q1, 1, 0, &plan);
  CHECK(plan.mode == PS_QMODE_LOCAL && plan.bound < 0);
  ps_query_plan_chunk(&shapes[1].q->prog, 0, 1, 1, &plan); /* every field: too many registers */
  CHECK(plan.mode == PS_QMODE_LOCAL);
  ps_query_plan_chunk(&shapes[1].q->prog, q1, 0, 1, &plan); /* no 64-bit local atomics */
  CHECK(plan.mode == PS_QMODE_ITEMS);
  /* 128-bit values: not 64-bit, not in registers */
  ps_query_plan_chunk(&shapes[3].q->prog, 0, 1, 1, &plan);
  CHECK(!plan.fits64 && plan.mode == PS_QMODE_ITEMS);
  /* 2^16 groups: tables per work-item */
  ps_query_plan_chunk(&shapes[4].q->prog, 0, 1, 1, &plan);
  CHECK(plan.fits64 && plan.mode == PS_QMODE_ITEMS);

  uint64_t items = 0, parts = 0;
  /* ITEMS: as many tables as the partial bytes hold, at most max_items and words, at least 1 */
  ps_query_launch_shape(PS_QMODE_ITEMS, -1, 8, 1000000, 256, 0, 16384, 64 << 20, &items, &parts);
  CHECK(items == 16384 && parts == 16384);
  ps_query_launch_shape(PS_QMODE_ITEMS, -1, 65536 * 3, 1000000, 256, 0, 16384, 64 << 20, &items, &parts);
  CHECK(items == (64 << 20) / (65536 * 3 * sizeof(ps_qacc)) && parts == items);
  ps_query_launch_shape(PS_QMODE_ITEMS, -1, 8, 5, 256, 0, 16384, 64 << 20, &items, &parts);
  CHECK(items == 5 && parts == 5);
  ps_query_launch_shape(PS_QMODE_ITEMS, -1, UINT64_C(1) << 40, 5, 256, 0, 16384, 64 << 20, &items, &parts);
  CHECK(items == 1 && parts == 1);
  /* work-groups: the device's groups, fewer for few words, at least 1 */
  ps_query_launch_shape(PS_QMODE_LOCAL, -1, 8, 1000000, 256, 132 * 8, 0, 0, &items, &parts);
  CHECK(parts == 132 * 8 && items == 132 * 8 * 256);
  ps_query_launch_shape(PS_QMODE_PRIVATE, -1, 1, 257, 256, 132 * 8, 0, 0, &items, &parts);
  CHECK(parts == 2 && items == 512);
  ps_query_launch_shape(PS_QMODE_PRIVATE, -1, 1, 0, 256, 132 * 8, 0, 0, &items, &parts);
  CHECK(parts == 1 && items == 256);
  /* REGS: enough groups that no work-item sums more than regs_max_words words of values of 2^56 */
  const double bound = 72057594037927936.0; /* 2^56 */
  const uint64_t max_words = ps_query_regs_max_words(bound);
  CHECK(max_words == 2); /* 2^62 / (2^56 * 32) */
  ps_query_launch_shape(PS_QMODE_REGS, bound, 8, 1000000, 256, 4, 0, 0, &items, &parts);
  CHECK(parts == (1000000 + 511) / 512 && items == parts * 256);
  CHECK(ps_query_regs_max_words(0) == UINT64_C(1) << 40 && ps_query_regs_max_words(1) == UINT64_C(1) << 40);
  /* runs of words (CPU devices): every word taken, no run longer than needed, and
   * within REGS' words per work-item; strided elsewhere */
  CHECK(ps_query_span(1, 1000000, 128) == 7813 && ps_query_span(1, 5, 128) == 1 && ps_query_span(1, 0, 128) == 1);
  CHECK(ps_query_span(1, 1000000, items) <= max_words);
  CHECK(ps_query_span(0, 1000000, 128) == 0 && ps_query_span(1, 1000000, 0) == 0);
  /* a query_collect's pinned staging: the accumulators 16-byte aligned after
   * the status words, sizes a power of two from 4 KiB, none past the cap */
  CHECK(ps_query_collect_acc_at(0) == 0 && ps_query_collect_acc_at(1) % 16 == 0 &&
        ps_query_collect_acc_at(1) >= PS_Q_STATUS_WORDS * sizeof(uint32_t) &&
        ps_query_collect_acc_at(1) < PS_Q_STATUS_WORDS * sizeof(uint32_t) + 16);
  CHECK(ps_query_collect_size(0, 0) == 4096 && ps_query_collect_size(1, 48) == 4096 &&
        ps_query_collect_size(0, 4097) == 8192);
  const uint64_t at64 = ps_query_collect_acc_at(PS_QUERY_STATUS_SLOTS);
  CHECK(ps_query_collect_size(PS_QUERY_STATUS_SLOTS, PS_QUERY_COLLECT_PINNED_MAX) >=
            at64 + PS_QUERY_COLLECT_PINNED_MAX &&
        ps_query_collect_size(PS_QUERY_STATUS_SLOTS, PS_QUERY_COLLECT_PINNED_MAX + 1) == 0);
}

/* A filter program of every leaf kind under AND / OR / NOT, with literals
 * that depend on `seed` (the shape does not). */
static void where_program(ps_program *p, uint64_t seed) {
  memset(p, 0, sizeof *p);
  p->n_cols = 4;
  const uint32_t widths[4] = {13, 17, 40, 0};
  for (uint32_t c = 0; c < 4; c++) {
    p->cols[c].width = widths[c];
    p->cols[c].kind = c == 2 ? PS_KIND_FLOAT64 : PS_KIND_SIGNED;
    p->cols[c].scale = c == 2 ? 2 : 0;
    p->cols[c].flags = c == 1 ? PS_COLF_VALIDITY : 0;
    p->cols[c].reference = seed + c;
    p->cols[c].code_limit = ((uint64_t)1 << widths[c]) - 1 - (seed & 1);
    p->cols[c].data_bytes = 4096 + seed;
  }
  const ps_insn insns[] = {
      {PS_OP_RANGE, 0, 0, 0, 0, 0, seed, seed + 100},
      {PS_OP_CMPCOL, PS_INSN_MAKE_CMP(PS_CMP_LT, PS_MODE_INT), 0, 1, 0, 0, 0, 0},
      {PS_OP_OR, 0, 0, 0, 0, 0, 0, 0},
      {PS_OP_SET, PS_INSN_NEGATE, 1, 0, (uint32_t)seed, 0, 0, 0},
      {PS_OP_AND, 0, 0, 0, 0, 0, 0, 0},
      /* a lossless float column (slot 0's codes) through its descriptor at aux word 90 */
      {PS_OP_CMPCOL, PS_INSN_MAKE_CMP(PS_CMP_GE, PS_MODE_DOUBLE) | PS_INSN_FMAP_B, 2, 0, 0, 90, 0, 0},
      {PS_OP_INLIST, 0, 2, 0, 64, 0, 2, 0},
      {PS_OP_ISNULL, PS_INSN_NEGATE, 1, 0, 0, 0, 0, 0},
      {PS_OP_CMPCOL, PS_INSN_MAKE_CMP(PS_CMP_EQ, PS_MODE_RANK), 3, 3, 80, 81, 0, 0},
      {PS_OP_AND, 0, 0, 0, 0, 0, 0, 0},
      {PS_OP_OR, 0, 0, 0, 0, 0, 0, 0},
      {PS_OP_NOT, 0, 0, 0, 0, 0, 0, 0},
      {PS_OP_AND, 0, 0, 0, 0, 0, 0, 0},
      {PS_OP_AND, 0, 0, 0, 0, 0, 0, 0},
  };
  p->n_insns = sizeof insns / sizeof insns[0];
  memcpy(p->insns, insns, sizeof insns);
  p->stack_depth = 4;
  p->aux_words = 128;
}

/* The filter's shape text (ps_where_spec_write): the same for programs that
 * differ only in literals and data, and compiled by NVRTC where CUDA is. */
static void check_where_spec(ps_context *ctx) {
  th_case("where spec");
  ps_program a, b;
  where_program(&a, 1);
  where_program(&b, 1000);
  char ta[PS_WHERE_SPEC_MAX_TEXT], tb[PS_WHERE_SPEC_MAX_TEXT];
  const size_t la = ps_where_spec_write(&a, NULL, ta, sizeof ta), lb = ps_where_spec_write(&b, NULL, tb, sizeof tb);
  CHECKF(la > 0 && strstr(ta, "#define PS_W_SPEC_PROG ps_w_spec_prog") != NULL, "where text of %zu bytes", la);
  CHECKF(la == lb && memcmp(ta, tb, la) == 0, "one shape, two texts:\n%s\n%s", ta, tb);
  CHECK(ps_where_spec_write(&a, NULL, tb, 32) == 0 && tb[0] == '\0');
  b.insns[0].flags = PS_INSN_NEGATE; /* another shape */
  CHECK(ps_where_spec_write(&b, NULL, tb, sizeof tb) == la && memcmp(ta, tb, la) != 0);
  where_program(&b, 1);
  b.insns[5].flags &= ~PS_INSN_FMAP_B; /* another shape: slot 0 decoded as an integer */
  CHECK(ps_where_spec_write(&b, NULL, tb, sizeof tb) > 0 && strcmp(ta, tb) != 0);
  /* the whole-words build and the launch bounds: the same shape and a line
   * more each, other keys; flags of zero write nothing */
  char tw[PS_WHERE_SPEC_MAX_TEXT], tm[PS_WHERE_SPEC_MAX_TEXT];
  ps_where_spec_flags f = {0, 0};
  CHECK(ps_where_spec_write(&a, &f, tb, sizeof tb) == la && memcmp(ta, tb, la) == 0);
  f.whole = 1;
  const size_t lw = ps_where_spec_write(&a, &f, tw, sizeof tw);
  CHECKF(lw > la && memcmp(ta, tw, la) == 0 && strcmp(tw + la, "#define PS_W_WHOLE 1\n") == 0, "whole text:\n%s", tw);
  f.min_blocks = 12;
  const size_t lm = ps_where_spec_write(&a, &f, tm, sizeof tm);
  CHECKF(lm > lw && memcmp(tw, tm, lw) == 0 && strcmp(tm + lw, "#define PS_W_MIN_BLOCKS 12u\n") == 0,
         "bounded text:\n%s", tm);
#if defined(PACKSCAN_HAVE_CUDA)
  const char *const texts[3] = {ta, tw, tm}, *const names[3] = {"", " (whole words)", " (whole, 12 blocks)"};
  const size_t lens[3] = {la, lw, lm};
  for (int k = 0; k < 3; k++) {
    void *cubin = NULL;
    size_t size = 0;
    const double t0 = now_ms();
    const ps_status st = ps_cuda_spec_compile(ctx, PS_CUDA_SPEC_WHERE, texts[k], 9, 0, &cubin, &size);
    CHECKF(st == PS_OK && cubin && size > 0, "where%s: NVRTC: %s: %s", names[k], ps_status_name(st),
           ps_context_last_error(ctx));
    printf("  where%s: %zu bytes of text, NVRTC sm_90 %.0f ms, CUBIN %zu bytes\n", names[k], lens[k], now_ms() - t0,
           size);
    ps_free(ctx, cubin);
  }
#else
  (void)ctx;
#endif
}

/* ps_where_whole_words: the words whose FOR stream words and validity words
 * all lie inside 4-byte aligned buffers, the least over the slots. */
static void check_whole_words(void) {
  th_case("whole words");
  ps_program p;
  where_program(&p, 1); /* widths 13, 17, 40, 0; slot 1 has a bitmap */
  for (uint32_t c = 0; c < 4; c++) p.cols[c].data_bytes = 1000000;
  p.cols[1].validity_bytes = 1000000;
  const uint32_t all = 0xfu;
  /* slot 2 (40 bits, 160 bytes a word) bounds it: 6250 whole words */
  CHECKF(ps_where_whole_words(&p, all, all) == 6250, "%llu", (unsigned long long)ps_where_whole_words(&p, all, all));
  p.cols[2].data_bytes = 6250 * 160 - 1; /* the last word one byte short */
  CHECK(ps_where_whole_words(&p, all, all) == 6249);
  p.cols[1].validity_bytes = 4 * 100 + 3; /* the bitmap's word 100 partial */
  CHECK(ps_where_whole_words(&p, all, all) == 100);
  CHECK(ps_where_whole_words(&p, all & ~2u, all) == 0); /* slot 1's data misaligned */
  CHECK(ps_where_whole_words(&p, all, all & ~2u) == 0); /* slot 1's bitmap misaligned */
  CHECK(ps_where_whole_words(&p, all & ~8u, all) == 100); /* slot 3 has no stream (0 bits): never read */
  p.cols[1].encoding = PS_ENC_DELTA; /* its data read bounded whatever the flag; its bitmap still counts */
  p.cols[1].data_bytes = 5;
  CHECK(ps_where_whole_words(&p, all & ~2u, all) == 100);
  p.n_cols = 1; /* only slot 0: 1000000 / 52 */
  CHECK(ps_where_whole_words(&p, 1u, 0u) == 19230);
  p.cols[0].data_bytes = 51;
  CHECK(ps_where_whole_words(&p, 1u, 0u) == 0);
  p.cols[0].width = 0;
  CHECK(ps_where_whole_words(&p, 0u, 0u) == UINT64_MAX);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "query_spec");
  ps_context *ctx = th_reference_context(0);
  const char *dump = getenv("PACKSCAN_SPEC_DUMP");
  tcol *t[12] = {0};
  /* SSB lineorder-like: orderdate, quantity, discount, extendedprice */
  ps_column *date = make(ctx, PS_TYPE_INT32, 16, TN_NO_BITMAP, &t[0]);
  ps_column *qty = make(ctx, PS_TYPE_INT32, 6, TN_NO_BITMAP, &t[1]);
  ps_column *disc = make(ctx, PS_TYPE_INT32, 4, TN_NO_BITMAP, &t[2]);
  ps_column *price = make(ctx, PS_TYPE_INT64, 24, TN_NO_BITMAP, &t[3]);
  ps_column *tax = make(ctx, PS_TYPE_INT32, 4, TN_NO_BITMAP, &t[4]);
  ps_column *flag = make(ctx, PS_TYPE_UINT8, 2, TN_NO_BITMAP, &t[5]);
  ps_column *status = make(ctx, PS_TYPE_UINT8, 1, TN_NO_BITMAP, &t[6]);
  ps_column *wide_a = make(ctx, PS_TYPE_INT64, 40, TN_FEW, &t[7]);
  ps_column *wide_b = make(ctx, PS_TYPE_INT64, 40, TN_NO_BITMAP, &t[8]);
  ps_column *key_a = make(ctx, PS_TYPE_UINT8, 8, TN_NO_BITMAP, &t[9]);
  ps_column *key_b = make(ctx, PS_TYPE_UINT8, 8, TN_NO_BITMAP, &t[10]);
  shape shapes[8];
  memset(shapes, 0, sizeof shapes);
  ps_expr *e[8] = {0};
  ps_value *v[32] = {0};
  int ne = 0, nv = 0;
  if (!date || !qty || !disc || !price || !tax || !flag || !status || !wide_a || !wide_b || !key_a || !key_b) goto done;

  /* SSB Q1.1: SUM(price * discount) WHERE date in a year AND discount 1..3 AND quantity < 25 */
  ranges_product(ctx, &shapes[0], "ssb_q1_1", date, disc, qty, price, (int64_t[5]){1000, 1365, 1, 3, 25}, 0, &e[ne++],
                 &v[nv++]);
  { /* TPC-H Q1: 8 aggregates GROUP BY two tiny keys */
    CHECK_OK(ctx, ps_expr_compare(ctx, date, PS_LE, ps_lit_int(60000), &e[ne]));
    ps_agg aggs[8];
    aggs[0] = (ps_agg){PS_AGG_SUM, v[nv++] = col(ctx, qty)};
    aggs[1] = (ps_agg){PS_AGG_SUM, v[nv++] = col(ctx, price)};
    aggs[2] = (ps_agg){PS_AGG_SUM,
                       v[nv++] = arith(ctx, PS_MUL, col(ctx, price), arith(ctx, PS_SUB, one(ctx), col(ctx, disc)))};
    ps_value *dp = arith(ctx, PS_MUL, col(ctx, price), arith(ctx, PS_SUB, one(ctx), col(ctx, disc)));
    aggs[3] = (ps_agg){PS_AGG_SUM, v[nv++] = arith(ctx, PS_MUL, dp, arith(ctx, PS_ADD, one(ctx), col(ctx, tax)))};
    aggs[4] = (ps_agg){PS_AGG_AVG, v[nv++] = col(ctx, qty)};
    aggs[5] = (ps_agg){PS_AGG_AVG, v[nv++] = col(ctx, price)};
    aggs[6] = (ps_agg){PS_AGG_AVG, v[nv++] = col(ctx, disc)};
    aggs[7] = (ps_agg){PS_AGG_COUNT_STAR, NULL};
    ps_query_desc d;
    ps_query_desc_init(&d);
    d.rows = N;
    d.where = e[ne++];
    d.aggs = aggs;
    d.n_aggs = 8;
    d.n_keys = 2;
    d.keys[0] = flag;
    d.keys[1] = status;
    shapes[1].name = "tpch_q1";
    CHECK_OK(ctx, ps_query_create(ctx, &d, &shapes[1].q));
  }
  { /* a CASE: SUM(CASE WHEN tax > 3 THEN price ELSE 0 END), MIN and MAX of the discount, no WHERE */
    ps_expr *when = NULL;
    CHECK_OK(ctx, ps_expr_compare(ctx, tax, PS_GT, ps_lit_int(3), &when)); /* the CASE owns it */
    ps_value *zero = NULL, *c = NULL;
    CHECK_OK(ctx, ps_value_decimal(ctx, 0, 0, 0, &zero));
    CHECK_OK(ctx, ps_value_case(ctx, when, col(ctx, price), zero, &c));
    v[nv++] = c;
    v[nv++] = col(ctx, disc);
    v[nv++] = col(ctx, disc);
    ps_agg aggs[3] = {{PS_AGG_SUM, v[nv - 3]}, {PS_AGG_MIN, v[nv - 2]}, {PS_AGG_MAX, v[nv - 1]}};
    ps_query_desc d;
    ps_query_desc_init(&d);
    d.rows = N;
    d.aggs = aggs;
    d.n_aggs = 3;
    shapes[2].name = "case";
    CHECK_OK(ctx, ps_query_create(ctx, &d, &shapes[2].q));
  }
  { /* 128-bit values: the product of two 40-bit columns, grouped by a 2-bit key */
    v[nv++] = arith(ctx, PS_MUL, col(ctx, wide_a), col(ctx, wide_b));
    v[nv++] = arith(ctx, PS_SUB, col(ctx, wide_a), col(ctx, wide_b));
    ps_agg aggs[2] = {{PS_AGG_SUM, v[nv - 2]}, {PS_AGG_MAX, v[nv - 1]}};
    ps_query_desc d;
    ps_query_desc_init(&d);
    d.rows = N;
    d.aggs = aggs;
    d.n_aggs = 2;
    d.n_keys = 1;
    d.keys[0] = flag;
    shapes[3].name = "wide128";
    CHECK_OK(ctx, ps_query_create(ctx, &d, &shapes[3].q));
  }
  { /* GROUP BY two 8-bit keys: 2^16 groups */
    CHECK_OK(ctx, ps_expr_compare(ctx, qty, PS_GE, ps_lit_int(10), &e[ne]));
    ps_agg aggs[2] = {{PS_AGG_SUM, v[nv++] = col(ctx, price)}, {PS_AGG_COUNT_STAR, NULL}};
    ps_query_desc d;
    ps_query_desc_init(&d);
    d.rows = N;
    d.where = e[ne++];
    d.aggs = aggs;
    d.n_aggs = 2;
    d.n_keys = 2;
    d.keys[0] = key_a;
    d.keys[1] = key_b;
    shapes[4].name = "groups_65536";
    CHECK_OK(ctx, ps_query_create(ctx, &d, &shapes[4].q));
    if (shapes[4].q) CHECK(shapes[4].q->prog.n_groups == 65536);
  }
  /* TPC-H Q6's shape: the quantity's range before the discount's */
  ranges_product(ctx, &shapes[5], "tpch_q6", date, disc, qty, price, (int64_t[5]){2000, 2365, 5, 7, 24}, 1, &e[ne++],
                 &v[nv++]);
  ps_encoded fenc[2];
  ps_column *fcols[2] = {NULL, NULL};
  memset(fenc, 0, sizeof fenc);
  { /* SUM and AVG of lossless float columns WHERE ... GROUP BY flag */
    double *a = malloc(N * sizeof *a);
    float *b = malloc(N * sizeof *b);
    for (int i = 0; a && b && i < N; i++) {
      a[i] = (double)th_below(&th.rng, 60) * 1.15078 + (i % 97 == 0 ? 1e-3 / 3 : 0); /* ALP, exceptions */
      uint32_t bits = (uint32_t)th_u64(&th.rng);
      bits = (bits & 0x807FFFFFu) | ((uint32_t)(100 + th_below(&th.rng, 40)) << 23); /* finite, 40 binary orders */
      memcpy(&b[i], &bits, 4);
    }
    const ps_plain pa = {PS_TYPE_FLOAT64, a, N, NULL}, pb = {PS_TYPE_FLOAT32, b, N, NULL};
    if (CHECK(a && b) && CHECK(ps_encode_for(&pa, 0, -1, 0, NULL, NULL, 0, &fenc[0]) == PS_OK) &&
        CHECK(ps_encode_for(&pb, 0, -1, 0, NULL, NULL, 0, &fenc[1]) == PS_OK) &&
        CHECK(fenc[0].desc.float_map == PS_FLOAT_MAP_ALP && fenc[0].desc.exceptions_count > 0 &&
              fenc[1].desc.float_map == PS_FLOAT_MAP_BITS) &&
        CHECK_OK(ctx, ps_column_create_for(ctx, &fenc[0].desc, &fcols[0])) &&
        CHECK_OK(ctx, ps_column_create_for(ctx, &fenc[1].desc, &fcols[1]))) {
      CHECK_OK(ctx, ps_expr_compare(ctx, fcols[0], PS_LT, ps_lit_float(50.0), &e[ne]));
      ps_agg aggs[5];
      aggs[0] = (ps_agg){PS_AGG_SUM, v[nv++] = col(ctx, fcols[0])};
      aggs[1] = (ps_agg){PS_AGG_AVG, v[nv++] = col(ctx, fcols[0])};
      aggs[2] = (ps_agg){PS_AGG_SUM, v[nv++] = col(ctx, fcols[1])};
      aggs[3] = (ps_agg){PS_AGG_MAX, v[nv++] = col(ctx, fcols[1])};
      aggs[4] = (ps_agg){PS_AGG_SUM, v[nv++] = col(ctx, price)};
      ps_query_desc d;
      ps_query_desc_init(&d);
      d.rows = N;
      d.where = e[ne++];
      d.aggs = aggs;
      d.n_aggs = 5;
      d.n_keys = 1;
      d.keys[0] = flag;
      shapes[6].name = "float_sum";
      CHECK_OK(ctx, ps_query_create(ctx, &d, &shapes[6].q));
      /* arithmetic on them, with an integer column and a literal, WHERE ... GROUP BY flag */
      ps_agg fa[4];
      fa[0] = (ps_agg){PS_AGG_SUM, v[nv++] = arith(ctx, PS_MUL, col(ctx, fcols[0]), col(ctx, qty))};
      fa[1] = (ps_agg){PS_AGG_AVG, v[nv++] = arith(ctx, PS_SUB, col(ctx, fcols[0]), col(ctx, fcols[1]))};
      fa[2] = (ps_agg){PS_AGG_MIN, v[nv++] = arith(ctx, PS_ADD, col(ctx, fcols[1]), one(ctx))};
      fa[3] = (ps_agg){PS_AGG_COUNT, fa[0].value};
      d.aggs = fa;
      d.n_aggs = 4;
      shapes[7].name = "float_arith";
      CHECK_OK(ctx, ps_query_create(ctx, &d, &shapes[7].q));
    }
    free(a);
    free(b);
  }
  for (int i = 0; i < 8; i++) check_shape(ctx, &shapes[i], dump);
  if (shapes[1].q) { /* TPC-H Q1 compiled to fit three blocks an SM (registers capped, spills allowed) */
    shape capped = {"tpch_q1_min_blocks3", shapes[1].q, 3, 0};
    check_shape(ctx, &capped, dump);
    /* and with the cache hints of the GROUP BY by rows (query_prefetch) */
    shape hinted = {"tpch_q1_prefetch", shapes[1].q, 0, 1};
    check_shape(ctx, &hinted, dump);
    char *a = malloc(PS_QUERY_SPEC_MAX_TEXT), *b = malloc(PS_QUERY_SPEC_MAX_TEXT);
    if (CHECK(a && b)) { /* the bound and the hints are part of the text, which is the kernel caches' key */
      CHECK(spec_text(shapes[1].q, 0, 0, a, PS_QUERY_SPEC_MAX_TEXT) > 0 &&
            spec_text(shapes[1].q, 3, 0, b, PS_QUERY_SPEC_MAX_TEXT) > 0 && strcmp(a, b) != 0 &&
            strstr(a, "#define PS_QS_PREFETCH 0u\n") != NULL && strstr(b, "#define PS_QS_MIN_BLOCKS 3u\n") != NULL);
      /* by default the hints go into a GROUP BY by rows only, not into a
       * query without GROUP BY */
      CHECK(spec_text(shapes[1].q, 0, PS_QUERY_PREFETCH_AUTO, b, PS_QUERY_SPEC_MAX_TEXT) > 0 &&
            strstr(b, "#define PS_QS_PREFETCH 1u\n") != NULL);
      CHECK(shapes[0].q && spec_text(shapes[0].q, 0, PS_QUERY_PREFETCH_AUTO, b, PS_QUERY_SPEC_MAX_TEXT) > 0 &&
            strstr(b, "#define PS_QS_PREFETCH 0u\n") != NULL && strstr(b, "#define PS_QS_MODE 0u\n") != NULL);
      CHECK(shapes[0].q && spec_text(shapes[0].q, 0, 1, b, PS_QUERY_SPEC_MAX_TEXT) > 0 &&
            strstr(b, "#define PS_QS_PREFETCH 1u\n") != NULL);
      CHECK(spec_text(shapes[1].q, 0, 1, b, PS_QUERY_SPEC_MAX_TEXT) > 0 &&
            strstr(b, "#define PS_QS_PREFETCH 1u\n") != NULL && strstr(b, "#define PS_QS_LANES 1u\n") != NULL);
    }
    free(a);
    free(b);
  }
  if (shapes[0].q && shapes[1].q && shapes[3].q && shapes[4].q) check_policy(shapes);
  if (shapes[6].q) { /* a float's units are 128-bit values: no 64-bit path, no registers */
    th_case("policy: float sums");
    ps_query_plan plan;
    ps_query_plan_chunk(&shapes[6].q->prog, wanted_fields(shapes[6].q), 1, 1, &plan);
    CHECK(!plan.fits64 && plan.bound < 0 && plan.mode == PS_QMODE_ITEMS);
    CHECK(ps_query_values_bound(&shapes[6].q->prog) < 0);
  }
  if (shapes[7].q) { /* doubles' units and ordered bits: the 128-bit path too */
    th_case("policy: float arithmetic");
    CHECK(ps_query_values_bound(&shapes[7].q->prog) < 0);
  }
  check_where_spec(ctx);
  check_whole_words();

done:
  for (int i = 0; i < 8; i++) ps_query_destroy(shapes[i].q);
  for (int i = 0; i < 2; i++) ps_column_destroy(fcols[i]), ps_encoded_destroy(&fenc[i]);
  for (int i = 0; i < nv; i++) ps_value_destroy(v[i]);
  for (int i = 0; i < ne; i++) ps_expr_destroy(e[i]);
  ps_column *cols[11] = {date, qty, disc, price, tax, flag, status, wide_a, wide_b, key_a, key_b};
  for (int i = 0; i < 11; i++) ps_column_destroy(cols[i]);
  for (int i = 0; i < 12; i++) tcol_free(t[i]);
  ps_context_destroy(ctx);
  return th_finish();
}
