/* The cases of issue 5, the naive baseline next to each, and the checks
 * against the reference backend. Everything here goes through the public
 * packscan API; bench_device.c supplies only the timer. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench.h"
#include "bench_tables.h"
#include "internal_options.h" /* ps_context_wait_builds */

typedef enum out_kind { OUT_BITMAP, OUT_COUNT, OUT_IDS, OUT_SMALL } out_kind;

/* Builds the case's predicate over cols on any context: the device columns,
 * the reference slices for the check, the plain columns of the naive run. */
typedef ps_status (*build_fn)(ps_context *ctx, ps_column **cols, const void *arg, ps_expr **out);

typedef struct case_def {
  const char *name;
  out_kind out;
  int ncols;
  bench_col *cols[BENCH_MAX_COLS];
  build_fn build;
  const void *arg;
} case_def;

/* What one timed call does. */
typedef struct run_ctx {
  ps_context *ctx;
  const ps_expr *expr;
  out_kind out;
  uint64_t n;
  ps_buffer *bitmap, *ids;
  uint64_t count;
  /* naive only: decode these columns first */
  int ncols;
  const ps_column *cols[BENCH_MAX_COLS];
  ps_buffer *plain[BENCH_MAX_COLS], *plain_valid[BENCH_MAX_COLS];
  const ps_buffer *identity;
  /* Set for cases whose predicate work is part of what is measured (LIKE:
   * the dictionary is matched when the expression is first evaluated, and
   * the library keeps that per expression): each timed call builds a fresh
   * expression, evaluates it and destroys it. */
  ps_status (*rebuild)(ps_context *ctx, ps_column **cols, const void *arg, ps_expr **out);
  ps_column *rebuild_cols[BENCH_MAX_COLS];
  const void *rebuild_arg;
} run_ctx;

/* The context's message already starts with the status name. */
static const char *err_text(ps_context *ctx, ps_status st) {
  const char *m = ps_context_last_error(ctx);
  return m && m[0] ? m : ps_status_name(st);
}

static uint64_t ceil_div(uint64_t a, uint64_t b) { return a / b + (a % b != 0); }
static uint64_t bitmap_alloc_bytes(uint64_t n) { return ceil_div(ceil_div(n, 8), 4) * 4 + 4; }

static ps_status run_once_expr(run_ctx *r);

static ps_status run_once(run_ctx *r) {
  if (r->rebuild) {
    ps_expr *fresh = NULL;
    ps_status st = r->rebuild(r->ctx, r->rebuild_cols, r->rebuild_arg, &fresh);
    const ps_expr *kept = r->expr;
    r->expr = fresh;
    if (st == PS_OK) st = run_once_expr(r);
    r->expr = kept;
    ps_expr_destroy(fresh);
    return st;
  }
  return run_once_expr(r);
}

static ps_status run_once_expr(run_ctx *r) {
  for (int i = 0; i < r->ncols; i++) {
    ps_status st = ps_gather_values_device(r->ctx, r->cols[i], r->identity, 0, PS_INDEX_UINT32, r->n, r->plain[i], 0,
                                           r->plain_valid[i], 0);
    if (st != PS_OK) return st;
  }
  switch (r->out) {
    case OUT_BITMAP:
      /* count NULL: no host value is asked for. */
      return ps_filter_device(r->ctx, r->expr, r->bitmap, 0, NULL);
    case OUT_COUNT:
    case OUT_SMALL:
      return ps_filter_count(r->ctx, r->expr, &r->count);
    case OUT_IDS: /* one call: fused into one pass where the backend can (CUDA: a one-range filter) */
      return ps_filter_row_ids_device(r->ctx, r->expr, PS_INDEX_UINT32, r->ids, 0, r->n, &r->count);
  }
  return PS_ERR_INTERNAL;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Warm-up calls, then reps timed calls: device time (or host clock for the
 * small case, whose point is the call-to-host-value latency). */
static ps_status time_runs(bench *b, run_ctx *r, int host_clock, int warmup, int reps, bench_stats *out) {
  double t[BENCH_MAX_REPS];
  if (reps > BENCH_MAX_REPS) reps = BENCH_MAX_REPS;
  if (reps < 1) reps = 1;
  for (int i = 0; i < warmup; i++) {
    ps_status st = run_once(r);
    if (st != PS_OK) return st;
  }
  /* A filter whose program no fast path takes is compiled for its shape in
   * the background on its first call (as queries are): every timed run
   * takes that kernel, as a repeated filter does once it is built. */
  ps_context_wait_builds(r->ctx, 0);
  for (int i = 0; i < reps; i++) {
    double t0 = 0;
    if (host_clock)
      t0 = bench_now_ms();
    else
      bench_timer_start(b);
    ps_status st = run_once(r);
    t[i] = host_clock ? bench_now_ms() - t0 : bench_timer_stop_ms(b);
    if (st != PS_OK) return st;
  }
  qsort(t, (size_t)reps, sizeof t[0], cmp_double);
  out->reps = reps;
  out->min = t[0];
  out->max = t[reps - 1];
  out->med = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
  return PS_OK;
}

/* ---- scratch buffers ---- */

static ps_status ensure_buffer(bench *b, ps_buffer **buf, uint64_t bytes) {
  if (*buf && ps_buffer_size(*buf) >= bytes) return PS_OK;
  ps_buffer_destroy(*buf);
  *buf = NULL;
  return ps_buffer_create(b->ctx, bytes, buf);
}

static ps_status ensure_identity(bench *b, uint64_t n) {
  if (b->identity && b->identity_rows >= n) return PS_OK;
  ps_buffer_destroy(b->identity);
  b->identity = NULL;
  b->identity_rows = 0;
  if (n > UINT32_MAX) return PS_ERR_LIMIT;
  ps_status st = ps_buffer_create(b->ctx, n * 4, &b->identity);
  const uint64_t chunk = UINT64_C(1) << 22;
  uint32_t *stage = malloc(chunk * 4);
  if (st == PS_OK && !stage) st = PS_ERR_OUT_OF_MEMORY;
  for (uint64_t i0 = 0; st == PS_OK && i0 < n; i0 += chunk) {
    uint64_t len = n - i0 < chunk ? n - i0 : chunk;
    for (uint64_t i = 0; i < len; i++) stage[i] = (uint32_t)(i0 + i);
    st = ps_buffer_write(b->ctx, b->identity, i0 * 4, stage, len * 4);
  }
  free(stage);
  if (st == PS_OK) b->identity_rows = n;
  return st;
}

/* ---- checks ---- */

static uint64_t popcount_bytes(const uint8_t *p, uint64_t bytes) {
  uint64_t c = 0, i = 0;
  for (; i + 8 <= bytes; i += 8) {
    uint64_t w;
    memcpy(&w, p + i, 8);
    c += (uint64_t)__builtin_popcountll(w);
  }
  for (; i < bytes; i++) c += (uint64_t)__builtin_popcount(p[i]);
  return c;
}

/* The reference bitmap of rows [r0, r0+rows) (r0 a multiple of 32), built on
 * the reference context from the device's own bytes. */
static ps_status reference_slice(bench *b, const case_def *c, uint64_t r0, uint64_t rows, uint8_t *bitmap) {
  ps_column *cols[BENCH_MAX_COLS] = {0};
  ps_expr *e = NULL;
  ps_status st = PS_OK;
  for (int i = 0; st == PS_OK && i < c->ncols; i++) st = bench_col_slice(b, c->cols[i], b->ref, r0, rows, &cols[i]);
  if (st == PS_OK) st = c->build(b->ref, cols, c->arg, &e);
  if (st == PS_OK) st = ps_filter(b->ref, e, bitmap, ceil_div(rows, 8), NULL);
  if (st != PS_OK) fprintf(stderr, "bench: reference: %s\n", ps_context_last_error(b->ref));
  ps_expr_destroy(e);
  for (int i = 0; i < c->ncols; i++) ps_column_destroy(cols[i]);
  return st;
}

/* Compares the ids in [first, first+k) of the device ids with the set bits
 * of a reference bitmap of rows starting at r0. */
static int check_ids(bench *b, const ps_buffer *ids, uint64_t first, const uint8_t *ref, uint64_t rows, uint64_t r0) {
  uint64_t k = popcount_bytes(ref, ceil_div(rows, 8));
  if (k == 0) return 1;
  uint32_t *got = malloc(k * 4);
  if (!got || ps_buffer_read(b->ctx, ids, first * 4, got, k * 4) != PS_OK) {
    free(got);
    return 0;
  }
  uint64_t j = 0;
  int ok = 1;
  for (uint64_t i = 0; ok && i < rows; i++)
    if (ref[i / 8] >> (i % 8) & 1) ok = got[j++] == (uint32_t)(r0 + i);
  free(got);
  return ok;
}

/* Checks the case's output: the device bitmap (recomputed untimed with its
 * count) against the reference at the head and the tail, its popcount
 * against the count, the timed call's count or ids against both. *dev_bitmap
 * receives the whole device bitmap (host memory, caller frees). */
static const char *check_case(bench *b, const case_def *c, const ps_expr *e, const run_ctx *r, bench_result *res,
                              uint8_t **dev_bitmap, char *why, size_t why_size) {
  uint64_t n = r->n, nb = ceil_div(n, 8), full = 0;
  *dev_bitmap = NULL;
  ps_status st = ps_filter_device(b->ctx, e, b->bitmap, 0, &full);
  if (st != PS_OK) {
    snprintf(why, why_size, "untimed filter: %s", ps_context_last_error(b->ctx));
    return "FAIL";
  }
  uint8_t *dev = malloc((size_t)nb + 1);
  uint64_t s = b->sample_rows < n ? b->sample_rows / 32 * 32 : n;
  if (s == 0) s = n;
  uint8_t *ref = malloc((size_t)ceil_div(s + 32, 8));
  if (!dev || !ref || ps_buffer_read(b->ctx, b->bitmap, 0, dev, nb) != PS_OK) {
    free(dev);
    free(ref);
    snprintf(why, why_size, "reading the bitmap back failed");
    return "FAIL";
  }
  *dev_bitmap = dev;
  res->count = full;
  res->selectivity = n ? (double)full / (double)n : 0;
  const char *verdict = "ok";
  if (popcount_bytes(dev, nb) != full) {
    snprintf(why, why_size, "bitmap popcount %" PRIu64 " != count %" PRIu64, popcount_bytes(dev, nb), full);
    verdict = "FAIL";
  }
  if ((r->out == OUT_COUNT || r->out == OUT_SMALL || r->out == OUT_IDS) && r->count != full) {
    snprintf(why, why_size, "timed call's count %" PRIu64 " != bitmap count %" PRIu64, r->count, full);
    verdict = "FAIL";
  }
  /* head, then tail */
  uint64_t starts[2] = {0, n > s ? (n - s) / 32 * 32 : 0};
  for (int k = 0; k < (n > s ? 2 : 1) && verdict[0] == 'o'; k++) {
    uint64_t r0 = starts[k], rows = n - r0 < s + 32 ? n - r0 : s;
    if (reference_slice(b, c, r0, rows, ref) != PS_OK) {
      snprintf(why, why_size, "reference evaluation failed: %s", ps_context_last_error(b->ref));
      verdict = "FAIL";
      break;
    }
    if (memcmp(ref, dev + r0 / 8, (size_t)ceil_div(rows, 8)) != 0) {
      uint64_t i = 0;
      while (ref[i] == dev[r0 / 8 + i]) i++;
      snprintf(why, why_size, "bitmap differs from the reference at rows %" PRIu64 "..%" PRIu64, r0 + 8 * i,
               r0 + 8 * i + 7);
      verdict = "FAIL";
      break;
    }
    if (r->out == OUT_IDS) {
      uint64_t first = k == 0 ? 0 : full - popcount_bytes(ref, ceil_div(rows, 8));
      if (!check_ids(b, r->ids, first, ref, rows, r0)) {
        snprintf(why, why_size, "row ids differ from the reference (%s sample)", k ? "tail" : "head");
        verdict = "FAIL";
      }
    }
  }
  free(ref);
  return verdict;
}

/* ---- the naive pipeline ---- */

/* Decodes every column to a plain array with ps_gather_values_device over the identity row
 * ids (the decompress step an engine does without packscan), wraps each array
 * as the contract's byte-aligned format (FOR, width 8*size, reference 0),
 * and does the same work on those. */
static void run_naive(bench *b, const case_def *c, const run_ctx *packed, const uint8_t *dev_bitmap,
                      bench_result *res) {
  if (b->gather_supported == 0) {
    snprintf(res->note + strlen(res->note), sizeof res->note - strlen(res->note), "%snaive: %s",
             res->note[0] ? "; " : "", b->gather_note);
    return;
  }
  run_ctx r = *packed;
  uint64_t n = r.n;
  ps_column *plain_cols[BENCH_MAX_COLS] = {0};
  ps_expr *e = NULL;
  ps_status st = ensure_identity(b, n);
  if (st == PS_OK) st = ensure_buffer(b, &b->bitmap_naive, bitmap_alloc_bytes(n));
  r.ncols = c->ncols;
  r.identity = b->identity;
  r.bitmap = b->bitmap_naive;
  for (int i = 0; st == PS_OK && i < c->ncols; i++) {
    const bench_col *bc = c->cols[i];
    ps_for_desc d = bc->desc;
    size_t vsize = bc->dict ? 4 : ps_type_size(d.type);
    if (bc->dict) d.type = PS_TYPE_UINT32;
    d.width = (uint32_t)(8 * vsize);
    d.reference.u = 0;
    d.data_size = n * vsize;
    r.cols[i] = bc->col;
    r.plain[i] = r.plain_valid[i] = NULL;
    st = ps_buffer_create(b->ctx, d.data_size, &r.plain[i]);
    if (st == PS_OK && bc->validity) st = ps_buffer_create(b->ctx, bitmap_alloc_bytes(n), &r.plain_valid[i]);
    if (st == PS_OK)
      st = bc->dict ? ps_column_create_dict_device(b->ctx, bc->dict, &d, r.plain[i], 0, r.plain_valid[i], 0,
                                                   &plain_cols[i])
                    : ps_column_create_for_device(b->ctx, &d, r.plain[i], 0, r.plain_valid[i], 0, &plain_cols[i]);
  }
  if (st == PS_OK) st = c->build(b->ctx, plain_cols, c->arg, &e);
  r.expr = e;
  if (st == PS_OK) {
    st = time_runs(b, &r, c->out == OUT_SMALL, b->warmup, c->out == OUT_SMALL ? b->small_reps : b->reps, &res->naive);
    if (st == PS_ERR_UNSUPPORTED && b->gather_supported < 0) {
      b->gather_supported = 0;
      snprintf(b->gather_note, sizeof b->gather_note, "n/a (%s)", ps_context_last_error(b->ctx));
      snprintf(res->note + strlen(res->note), sizeof res->note - strlen(res->note), "%snaive: %s",
               res->note[0] ? "; " : "", b->gather_note);
    }
  }
  if (st == PS_OK) {
    b->gather_supported = 1;
    res->have_naive = 1;
    /* The naive result must be the same selection. */
    int same = 1;
    if (c->out == OUT_BITMAP) {
      uint64_t nb = ceil_div(n, 8);
      uint8_t *nv = malloc((size_t)nb + 1);
      same = nv && ps_buffer_read(b->ctx, b->bitmap_naive, 0, nv, nb) == PS_OK && memcmp(nv, dev_bitmap, nb) == 0;
      free(nv);
    } else {
      same = r.count == res->count;
    }
    if (!same) {
      res->check = "FAIL";
      snprintf(res->note + strlen(res->note), sizeof res->note - strlen(res->note), "%snaive result differs",
               res->note[0] ? "; " : "");
    }
  } else if (st != PS_ERR_UNSUPPORTED) {
    snprintf(res->note + strlen(res->note), sizeof res->note - strlen(res->note), "%snaive failed: %s",
             res->note[0] ? "; " : "", err_text(b->ctx, st));
  }
  ps_expr_destroy(e);
  for (int i = 0; i < c->ncols; i++) {
    ps_column_destroy(plain_cols[i]);
    ps_buffer_destroy(r.plain[i]);
    ps_buffer_destroy(r.plain_valid[i]);
  }
}

/* ---- one case ---- */

static void print_result(const bench *b, const bench_result *r);
static ps_status build_like(ps_context *ctx, ps_column **cols, const void *arg, ps_expr **out);

static void run_case(bench *b, const case_def *c) {
  if (b->n_results >= BENCH_MAX_CASES) return;
  bench_result *res = &b->results[b->n_results++];
  memset(res, 0, sizeof *res);
  snprintf(res->name, sizeof res->name, "%s", c->name);
  uint64_t n = c->cols[0]->desc.n;
  res->rows = n;
  res->width = (int)c->cols[0]->desc.width;
  for (int i = 1; i < c->ncols; i++)
    if ((int)c->cols[i]->desc.width != res->width) res->width = -1;
  double in_bytes = 0;
  for (int i = 0; i < c->ncols; i++) in_bytes += (double)(c->cols[i]->desc.data_size + c->cols[i]->desc.validity_size);
  res->check = "FAIL";

  run_ctx r;
  memset(&r, 0, sizeof r);
  r.ctx = b->ctx;
  r.out = c->out;
  r.n = n;
  ps_expr *e = NULL;
  ps_column *cols[BENCH_MAX_COLS];
  for (int i = 0; i < c->ncols; i++) cols[i] = c->cols[i]->col;
  ps_status st = ensure_buffer(b, &b->bitmap, bitmap_alloc_bytes(n));
  if (st == PS_OK && c->out == OUT_IDS) st = ps_buffer_create(b->ctx, n * 4 + 4, &r.ids);
  if (st == PS_OK) st = c->build(b->ctx, cols, c->arg, &e);
  r.expr = e;
  r.bitmap = b->bitmap;
  if (c->build == build_like) {
    r.rebuild = c->build;
    r.rebuild_arg = c->arg;
    for (int i = 0; i < c->ncols; i++) r.rebuild_cols[i] = cols[i];
  }
  if (st == PS_OK)
    st = time_runs(b, &r, c->out == OUT_SMALL, c->out == OUT_SMALL ? 5 * b->warmup : b->warmup,
                   c->out == OUT_SMALL ? b->small_reps : b->reps, &res->t);
  if (st != PS_OK) {
    res->check = st == PS_ERR_UNSUPPORTED ? "skip" : "FAIL";
    snprintf(res->note, sizeof res->note, "%s", err_text(b->ctx, st));
  } else {
    uint8_t *dev_bitmap = NULL;
    res->check = check_case(b, c, e, &r, res, &dev_bitmap, res->note, sizeof res->note);
    res->bytes = in_bytes;
    if (c->out == OUT_BITMAP) res->bytes += (double)ceil_div(n, 8);
    if (c->out == OUT_IDS) res->bytes += 4.0 * (double)res->count;
    int delta = 0, floats = 0;
    for (int i = 0; i < c->ncols; i++) delta |= c->cols[i]->desc.encoding == PS_ENCODING_DELTA;
    /* The naive run gathers values into a column of codes of the type's
     * width; a float column's values are no such codes. */
    for (int i = 0; i < c->ncols; i++)
      floats |= c->cols[i]->desc.type == PS_TYPE_FLOAT64 || c->cols[i]->desc.type == PS_TYPE_FLOAT32;
    if (dev_bitmap && !delta && !floats) run_naive(b, c, &r, dev_bitmap, res);
    if (delta) /* the naive run decodes through a gather, which reads FOR columns only */
      snprintf(res->note + strlen(res->note), sizeof res->note - strlen(res->note), "%sover the DELTA bytes",
               res->note[0] ? "; " : "");
    free(dev_bitmap);
  }
  ps_expr_destroy(e);
  ps_buffer_destroy(r.ids);
  print_result(b, res);
}

/* ---- predicates ---- */

typedef struct cmp_arg {
  ps_cmp op;
  ps_literal lit, lit2, lit3;
  const char *pattern;
} cmp_arg;

static ps_status build_cmp(ps_context *ctx, ps_column **cols, const void *arg, ps_expr **out) {
  const cmp_arg *a = arg;
  return ps_expr_compare(ctx, cols[0], a->op, a->lit, out);
}

static ps_status build_between(ps_context *ctx, ps_column **cols, const void *arg, ps_expr **out) {
  const cmp_arg *a = arg;
  return ps_expr_between(ctx, cols[0], a->lit, a->lit2, out);
}

/* (a < lit AND b >= lit2) OR c < lit3 */
static ps_status build_tree(ps_context *ctx, ps_column **cols, const void *arg, ps_expr **out) {
  const cmp_arg *a = arg;
  ps_expr *x = NULL, *y = NULL, *xy = NULL, *z = NULL;
  ps_status st = ps_expr_compare(ctx, cols[0], PS_LT, a->lit, &x);
  if (st == PS_OK) st = ps_expr_compare(ctx, cols[1], PS_GE, a->lit2, &y);
  if (st == PS_OK) st = ps_expr_and(ctx, x, y, &xy);
  if (st == PS_OK) x = y = NULL;
  if (st == PS_OK) st = ps_expr_compare(ctx, cols[2], PS_LT, a->lit3, &z);
  if (st == PS_OK) st = ps_expr_or(ctx, xy, z, out);
  if (st == PS_OK) xy = z = NULL;
  ps_expr_destroy(x);
  ps_expr_destroy(y);
  ps_expr_destroy(xy);
  ps_expr_destroy(z);
  return st;
}

static ps_status build_colcol(ps_context *ctx, ps_column **cols, const void *arg, ps_expr **out) {
  const cmp_arg *a = arg;
  return ps_expr_compare_columns(ctx, cols[0], a->op, cols[1], out);
}

static ps_status build_like(ps_context *ctx, ps_column **cols, const void *arg, ps_expr **out) {
  const cmp_arg *a = arg;
  return ps_expr_like(ctx, cols[0], a->pattern, strlen(a->pattern), -1, 0, out);
}

/* ---- the case list ---- */

/* Whether --widths (if given) lists w. */
static int wanted_width(const bench *b, uint32_t w) {
  if (!b->widths || !b->widths[0]) return 1;
  for (const char *p = b->widths; p; p = strchr(p, ',')) {
    if (*p == ',') p++;
    if (strtoul(p, NULL, 10) == w) return 1;
  }
  return 0;
}

static int wanted(const bench *b, const char *group) {
  if (!b->cases || !b->cases[0]) return 1;
  size_t len = strlen(group);
  for (const char *p = b->cases; *p;) {
    const char *end = strchr(p, ',');
    size_t l = end ? (size_t)(end - p) : strlen(p);
    if (l == len && strncmp(p, group, len) == 0) return 1;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}

static ps_reference ref_u(uint64_t u) {
  ps_reference r;
  r.u = u;
  return r;
}

/* An unsigned column of width w: UINT32 up to 32 bits, UINT64 above, with a
 * small nonzero reference where it fits (so literals really move into code
 * space). Random codes over all 2^w values. */
static ps_status uint_col(bench *b, uint32_t w, uint64_t n, int validity_percent, bench_col *out) {
  ps_type t = w <= 32 ? PS_TYPE_UINT32 : PS_TYPE_UINT64;
  uint64_t m = (w == 32 || w == 64) ? 0 : 7;
  return bench_col_create(b, t, w, ref_u(m), n, 0, validity_percent, NULL, out);
}

static uint64_t half_of(uint32_t w) { return w ? UINT64_C(1) << (w - 1) : 0; }

static void col_failed(bench *b, const char *name, ps_status st) {
  if (b->n_results >= BENCH_MAX_CASES) return;
  bench_result *res = &b->results[b->n_results++];
  memset(res, 0, sizeof *res);
  snprintf(res->name, sizeof res->name, "%s", name);
  res->check = st == PS_ERR_UNSUPPORTED ? "skip" : "FAIL";
  snprintf(res->note, sizeof res->note, "creating the input: %s", err_text(b->ctx, st));
  print_result(b, res);
}

static void print_header(const bench *b) {
  (void)b;
  printf("%-14s %11s %3s %9s %9s %9s %8s %6s %9s %7s %5s  %s\n", "case", "rows", "w", "ms", "Grows/s", "GB/s",
         "%copy", "sel", "naive ms", "ratio", "check", "note");
}

/* The table shows the note's first line, shortened; the JSON has all of it. */
static int note_len(const char *note) {
  int n = 0;
  while (note[n] && note[n] != '\n' && n < 120) n++;
  return n;
}

static void print_result(const bench *b, const bench_result *r) {
  char w[16], naive[32] = "-", ratio[32] = "-";
  if (r->width >= 0)
    snprintf(w, sizeof w, "%d", r->width);
  else
    snprintf(w, sizeof w, "mix");
  if (r->t.reps == 0) {
    printf("%-14s %11" PRIu64 " %3s %9s %9s %9s %8s %6s %9s %7s %5s  %.*s\n", r->name, r->rows, w, "-", "-", "-", "-",
           "-", "-", "-", r->check, note_len(r->note), r->note);
    fflush(stdout);
    return;
  }
  double gbps = r->bytes / (r->t.med * 1e6);
  if (r->have_naive) {
    snprintf(naive, sizeof naive, "%.3f", r->naive.med);
    snprintf(ratio, sizeof ratio, "%.1fx", r->naive.med / r->t.med);
  }
  printf("%-14s %11" PRIu64 " %3s %9.4f %9.3f %9.1f %7.1f%% %5.1f%% %9s %7s %5s  %.*s\n", r->name, r->rows, w,
         r->t.med, (double)r->rows / (r->t.med * 1e6), gbps, b->copy_gbps > 0 ? 100.0 * gbps / b->copy_gbps : 0.0,
         100.0 * r->selectivity, naive, ratio, r->check, note_len(r->note), r->note);
  fflush(stdout);
}

/* ---- SUM of a float column ---- */

typedef struct fsum {
  ps_context *ctx;
  ps_query *query;
  ps_query_result *last;
} fsum;

static ps_status fsum_prepare(ps_context *ctx, ps_column *col, double below, fsum *f, ps_expr **where,
                              ps_value **value) {
  memset(f, 0, sizeof *f);
  f->ctx = ctx;
  ps_status st = ps_expr_compare(ctx, col, PS_LT, ps_lit_float(below), where);
  if (st == PS_OK) st = ps_value_column(ctx, col, value);
  ps_agg aggs[2];
  memset(aggs, 0, sizeof aggs);
  aggs[0].kind = PS_AGG_SUM;
  aggs[0].value = *value;
  aggs[1].kind = PS_AGG_COUNT_STAR;
  ps_query_desc d;
  ps_query_desc_init(&d);
  d.rows = ps_column_rows(col);
  d.where = *where;
  d.aggs = aggs;
  d.n_aggs = 2;
  if (st == PS_OK) st = ps_query_create(ctx, &d, &f->query);
  return st;
}

static ps_status fsum_once(void *arg) {
  fsum *f = arg;
  ps_query_result_destroy(f->last);
  f->last = NULL;
  return ps_query_run(f->ctx, f->query, &f->last);
}

/* SUM(x) and COUNT(*) WHERE x < median over a float column: timed on the
 * bench's device, checked against the reference backend's result bit for
 * bit (the sum, its double and the count). */
static void float_sum_case(bench *b, const char *name, bench_col *c0, double median) {
  if (b->n_results >= BENCH_MAX_CASES) return;
  bench_result *res = &b->results[b->n_results++];
  memset(res, 0, sizeof *res);
  snprintf(res->name, sizeof res->name, "%s", name);
  res->rows = c0->desc.n;
  res->width = (int)c0->desc.width;
  res->bytes = (double)c0->desc.data_size;
  res->check = "FAIL";
  fsum dev, ref;
  ps_expr *dw = NULL, *rw = NULL;
  ps_value *dv = NULL, *rv = NULL;
  ps_column *rcol = NULL;
  ps_status st = fsum_prepare(b->ctx, c0->col, median, &dev, &dw, &dv);
  if (st == PS_OK) {
    st = fsum_once(&dev); /* the first run may build the query's kernel */
    ps_context_wait_builds(b->ctx, 0);
  }
  if (st == PS_OK) st = bench_time(b, fsum_once, &dev, &res->t);
  if (st != PS_OK) {
    bench_result_failed(b, res, st);
  } else {
    ps_status rs = bench_col_slice(b, c0, b->ref, 0, c0->desc.n, &rcol);
    if (rs == PS_OK) rs = fsum_prepare(b->ref, rcol, median, &ref, &rw, &rv);
    if (rs == PS_OK) rs = fsum_once(&ref);
    ps_datum ds, rsum, dc, rc;
    if (rs == PS_OK) rs = ps_query_result_value(dev.last, 0, 0, &ds);
    if (rs == PS_OK) rs = ps_query_result_value(ref.last, 0, 0, &rsum);
    if (rs == PS_OK) rs = ps_query_result_value(dev.last, 0, 1, &dc);
    if (rs == PS_OK) rs = ps_query_result_value(ref.last, 0, 1, &rc);
    if (rs != PS_OK) {
      snprintf(res->note, sizeof res->note, "reference run failed: %s", ps_context_last_error(b->ref));
    } else {
      const int same = ds.is_null == rsum.is_null && ds.scale == rsum.scale && ds.lo == rsum.lo &&
                       ds.hi == rsum.hi && memcmp(&ds.as_double, &rsum.as_double, sizeof(double)) == 0 &&
                       dc.lo == rc.lo && dc.hi == rc.hi;
      res->check = same ? "ok" : "FAIL";
      res->count = dc.lo;
      res->selectivity = res->rows ? (double)dc.lo / (double)res->rows : 0;
      snprintf(res->note, sizeof res->note, "%sSUM %.17g over %" PRIu64 " rows", same ? "" : "differs from the reference: ",
               ds.as_double, dc.lo);
    }
    ps_query_result_destroy(ref.last);
    ps_query_destroy(ref.query);
    ps_expr_destroy(rw);
    ps_value_destroy(rv);
    ps_column_destroy(rcol);
  }
  ps_query_result_destroy(dev.last);
  ps_query_destroy(dev.query);
  ps_expr_destroy(dw);
  ps_value_destroy(dv);
  print_result(b, res);
}

void bench_run_all(bench *b) {
  static const uint32_t widths[] = {1, 2, 4, 8, 12, 16, 20, 24, 32, 48, 64};
  const uint64_t n = b->rows;
  bench_col c0, c1, c2;
  ps_status st;
  print_header(b);

  /* one `<` predicate, ~50% selected, at every width: bitmap and count only */
  static cmp_arg lt_args[sizeof widths / sizeof widths[0]];
  for (size_t i = 0; i < sizeof widths / sizeof widths[0]; i++) {
    if (!wanted(b, "lt") && !wanted(b, "lt_count")) break;
    uint32_t w = widths[i];
    if (!wanted_width(b, w)) continue;
    /* Narrow widths get more rows so that every point moves at least
     * sweep_min_bytes (else a 1-bit column of 2^28 rows is 67 MB, about the
     * L2, and a few microseconds of launch latency decide the result). */
    uint64_t nw = n;
    while (b->sweep_min_bytes && nw < (UINT64_C(1) << 31) && nw / 8 * (w + 1) < b->sweep_min_bytes) nw *= 2;
    if ((st = uint_col(b, w, nw, 100, &c0)) != PS_OK) {
      col_failed(b, "lt", st);
      continue;
    }
    lt_args[i].op = PS_LT;
    lt_args[i].lit = ps_lit_uint(c0.desc.reference.u + half_of(w));
    case_def c = {"lt", OUT_BITMAP, 1, {&c0}, build_cmp, &lt_args[i]};
    if (wanted(b, "lt")) run_case(b, &c);
    c.name = "lt_count";
    c.out = OUT_COUNT;
    if (wanted(b, "lt_count")) run_case(b, &c);
    bench_col_destroy(&c0);
  }

  if (wanted(b, "between")) {
    static cmp_arg a;
    if ((st = uint_col(b, 16, n, 100, &c0)) == PS_OK) {
      a.lit = ps_lit_uint(7 + (1u << 14));
      a.lit2 = ps_lit_uint(7 + 3 * (1u << 14));
      case_def c = {"between", OUT_BITMAP, 1, {&c0}, build_between, &a};
      run_case(b, &c);
      bench_col_destroy(&c0);
    } else {
      col_failed(b, "between", st);
    }
  }

  if (wanted(b, "tree")) {
    static cmp_arg a;
    st = uint_col(b, 12, n, 100, &c0);
    if (st == PS_OK && (st = uint_col(b, 20, n, 100, &c1)) != PS_OK) bench_col_destroy(&c0);
    if (st == PS_OK && (st = uint_col(b, 8, n, 100, &c2)) != PS_OK) {
      bench_col_destroy(&c0);
      bench_col_destroy(&c1);
    }
    if (st == PS_OK) {
      a.lit = ps_lit_uint(7 + half_of(12));
      a.lit2 = ps_lit_uint(7 + (1u << 18));
      a.lit3 = ps_lit_uint(7 + 16);
      case_def c = {"tree", OUT_BITMAP, 3, {&c0, &c1, &c2}, build_tree, &a};
      run_case(b, &c);
      bench_col_destroy(&c0);
      bench_col_destroy(&c1);
      bench_col_destroy(&c2);
    } else {
      col_failed(b, "tree", st);
    }
  }

  if (wanted(b, "colcol")) {
    /* uint32 (w16, M 7) < int64 (w17, M 0): different types, widths and references */
    static cmp_arg a;
    st = uint_col(b, 16, n, 100, &c0);
    if (st == PS_OK) {
      ps_reference m;
      m.i = 0;
      if ((st = bench_col_create(b, PS_TYPE_INT64, 17, m, n, 0, 100, NULL, &c1)) != PS_OK) bench_col_destroy(&c0);
    }
    if (st == PS_OK) {
      a.op = PS_LT;
      case_def c = {"colcol", OUT_BITMAP, 2, {&c0, &c1}, build_colcol, &a};
      run_case(b, &c);
      bench_col_destroy(&c0);
      bench_col_destroy(&c1);
    } else {
      col_failed(b, "colcol", st);
    }
  }

  if (wanted(b, "like_contains") || wanted(b, "like_prefix")) {
    uint64_t d = 1000000;
    bench_dict dict;
    if (bench_dict_create(d, b->seed ^ 0x5eed, &dict) != 0) {
      col_failed(b, "like", PS_ERR_OUT_OF_MEMORY);
    } else {
      st = bench_col_create(b, PS_TYPE_UINT32, 20, ref_u(0), n, d, 100, &dict.desc, &c0);
      if (st == PS_OK) {
        static cmp_arg contains, prefix;
        contains.pattern = "%abc%";
        prefix.pattern = "abc%";
        case_def c = {"like_contains", OUT_BITMAP, 1, {&c0}, build_like, &contains};
        if (wanted(b, "like_contains")) run_case(b, &c);
        c.name = "like_prefix";
        c.arg = &prefix;
        if (wanted(b, "like_prefix")) run_case(b, &c);
        bench_col_destroy(&c0);
      } else {
        col_failed(b, "like", st);
      }
      bench_dict_free(&dict);
    }
  }

  /* lo_orderdate of a date-sorted lineorder as a DELTA column (0.75 bits a
   * row against FOR's 16): 1993's rows, reported over its own bytes. */
  if (wanted(b, "delta_date")) {
    static cmp_arg a;
    if ((st = bench_col_sorted_dates(b, n, &c0)) == PS_OK) {
      a.lit = ps_lit_int(19930101);
      a.lit2 = ps_lit_int(19931231);
      case_def c = {"delta_date", OUT_BITMAP, 1, {&c0}, build_between, &a};
      run_case(b, &c);
      bench_col_destroy(&c0);
    } else {
      col_failed(b, "delta_date", st);
    }
  }

  if (wanted(b, "nulls")) {
    static cmp_arg a;
    if ((st = uint_col(b, 12, n, 75, &c0)) == PS_OK) {
      a.op = PS_LT;
      a.lit = ps_lit_uint(7 + half_of(12));
      case_def c = {"nulls", OUT_BITMAP, 1, {&c0}, build_cmp, &a};
      run_case(b, &c);
      bench_col_destroy(&c0);
    } else {
      col_failed(b, "nulls", st);
    }
  }

  /* float64 columns as real data holds them, x < median: FOR-decimal
   * prices, ALP wind speeds, random doubles in ordered bits; the note gives
   * the bits a value takes against a plain double's 64. */
  static const struct {
    const char *name;
    int kind;
    const char *sum;
  } floats[] = {{"float_price", BENCH_FLOAT_PRICE, "float_price_sum"},
                {"float_knots", BENCH_FLOAT_KNOTS, "float_knots_sum"},
                {"float_random", BENCH_FLOAT_RANDOM, "float_random_sum"}};
  for (size_t i = 0; i < sizeof floats / sizeof floats[0]; i++) {
    if (!wanted(b, floats[i].name) && !wanted(b, floats[i].sum)) continue;
    static cmp_arg a[3];
    double median = 0;
    if ((st = bench_col_floats(b, floats[i].kind, n, &c0, &median)) != PS_OK) {
      col_failed(b, floats[i].name, st);
      continue;
    }
    a[i].op = PS_LT;
    a[i].lit = ps_lit_float(median);
    case_def c = {floats[i].name, OUT_BITMAP, 1, {&c0}, build_cmp, &a[i]};
    if (wanted(b, floats[i].name)) run_case(b, &c);
    if (wanted(b, floats[i].name) && b->n_results && !strcmp(b->results[b->n_results - 1].name, floats[i].name)) {
      bench_result *res = &b->results[b->n_results - 1];
      static const char *const maps[] = {"FOR-decimal", "ALP", "ordered bits"};
      const double bits = 8.0 * (double)c0.desc.data_size / (double)(n ? n : 1);
      const size_t l = strlen(res->note);
      snprintf(res->note + l, sizeof res->note - l, "%s%s, %.2f bits a value (%.1f%% of a double)%s",
               l ? "; " : "", c0.desc.float_map < 3 ? maps[c0.desc.float_map] : "?", bits, 100.0 * bits / 64.0,
               c0.desc.exceptions_count ? ", with exceptions" : "");
      printf("          %s: %s\n", floats[i].name, res->note);
    }
    if (wanted(b, floats[i].sum)) float_sum_case(b, floats[i].sum, &c0, median);
    bench_col_destroy(&c0);
  }

  if (wanted(b, "ids_1pct") || wanted(b, "ids_50pct")) {
    static cmp_arg one, fifty;
    if ((st = uint_col(b, 16, n, 100, &c0)) == PS_OK) {
      one.op = fifty.op = PS_LT;
      one.lit = ps_lit_uint(7 + 655); /* 655 / 65536 = 1% */
      fifty.lit = ps_lit_uint(7 + 32768);
      case_def c = {"ids_1pct", OUT_IDS, 1, {&c0}, build_cmp, &one};
      if (wanted(b, "ids_1pct")) run_case(b, &c);
      c.name = "ids_50pct";
      c.arg = &fifty;
      if (wanted(b, "ids_50pct")) run_case(b, &c);
      bench_col_destroy(&c0);
    } else {
      col_failed(b, "ids", st);
    }
  }

  if (wanted(b, "small")) {
    static cmp_arg a;
    if ((st = uint_col(b, 16, 1000000, 100, &c0)) == PS_OK) {
      a.op = PS_LT;
      a.lit = ps_lit_uint(7 + half_of(16));
      case_def c = {"small", OUT_SMALL, 1, {&c0}, build_cmp, &a};
      run_case(b, &c);
      bench_col_destroy(&c0);
    } else {
      col_failed(b, "small", st);
    }
  }
}

void bench_print_header(const bench *b) { print_header(b); }
void bench_print_result(const bench *b, const bench_result *r) { print_result(b, r); }

void bench_result_failed(const bench *b, bench_result *r, ps_status st) {
  r->check = st == PS_ERR_UNSUPPORTED ? "skip" : "FAIL";
  const size_t used = strlen(r->note);
  snprintf(r->note + used, sizeof r->note - used, "%s", err_text(b->ctx, st));
  memset(&r->t, 0, sizeof r->t);
}
