/* Host-resident columns (ps_column_create_for_host), run only when --cases
 * names them: `host_lt` counts x < median over a 16-bit column kept in
 * pageable host memory, `host_lt_pinned` the same from pinned memory (CUDA
 * only), `host_lt_mapped` from a mapped file, each on a context whose
 * device_memory_limit is a twentieth of the packed column (so it streams in
 * chunks through three staging buffers). The host-to-device copy bandwidth
 * of the same run (ps_buffer_write from the same memory) is in the notes, and %copy of these
 * cases is against it, not against the device copy: a streamed scan is
 * bound by the bus. The check: the count equals the device-resident
 * column's. */
#define _POSIX_C_SOURCE 200809L /* mkstemp, mmap */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "bench.h"
#include "bench_tables.h" /* bench_print_header, bench_print_result */

double bench_h2d_gbps(bench *b, const void *src, uint64_t bytes, int reps) {
  ps_buffer *dst = NULL;
  if (ps_buffer_create(b->ctx, bytes, &dst) != PS_OK) return 0;
  double best[BENCH_MAX_REPS];
  int n = 0;
  for (int i = 0; i < reps + 1 && n < BENCH_MAX_REPS; i++) {
    double t0 = bench_now_ms();
    if (ps_buffer_write(b->ctx, dst, 0, src, bytes) != PS_OK) break;
    double t = bench_now_ms() - t0;
    if (i > 0) best[n++] = t; /* the first is a warm-up */
  }
  ps_buffer_destroy(dst);
  if (!n) return 0;
  for (int i = 1; i < n; i++)
    for (int j = i; j > 0 && best[j] < best[j - 1]; j--) {
      double x = best[j];
      best[j] = best[j - 1], best[j - 1] = x;
    }
  return (double)bytes / (best[n / 2] * 1e6);
}

/* One case: the filter count over the host-resident column at data. */
static void host_case(bench *b, const char *name, uint8_t *data, uint64_t n, uint64_t expect, double copy_gbps,
                      const char *copy_what) {
  bench_result *res = &b->results[b->n_results++];
  memset(res, 0, sizeof *res);
  snprintf(res->name, sizeof res->name, "%s", name);
  res->rows = n;
  res->width = 16;
  res->bytes = (double)n * 2;
  res->check = "FAIL";
  const uint64_t limit_min = PS_DEVICE_MEMORY_LIMIT_MIN;
  const uint64_t limit = n * 2 / 20 > limit_min ? n * 2 / 20 : limit_min;
  ps_context_options o = b->ctx_opts; /* the bench's device */
  o.device_memory_limit = limit;
  char err[256];
  ps_context *ctx = NULL;
  ps_column *col = NULL;
  ps_expr *e = NULL;
  ps_status st = ps_context_create(&o, err, sizeof err, &ctx);
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = PS_TYPE_UINT16;
  d.n = n;
  d.width = 16;
  d.data = data;
  d.data_size = n * 2;
  if (st == PS_OK) st = ps_column_create_for_host(ctx, &d, &col);
  if (st == PS_OK) st = ps_expr_compare(ctx, col, PS_LT, ps_lit_uint(1u << 15), &e);
  uint64_t count = 0;
  double t[BENCH_MAX_REPS];
  int reps = b->reps < BENCH_MAX_REPS ? b->reps : BENCH_MAX_REPS;
  for (int i = 0; st == PS_OK && i < b->warmup; i++) st = ps_filter_count(ctx, e, &count);
  for (int i = 0; st == PS_OK && i < reps; i++) {
    double t0 = bench_now_ms();
    st = ps_filter_count(ctx, e, &count);
    t[i] = bench_now_ms() - t0;
  }
  if (st == PS_OK) {
    for (int i = 1; i < reps; i++)
      for (int j = i; j > 0 && t[j] < t[j - 1]; j--) {
        double x = t[j];
        t[j] = t[j - 1], t[j - 1] = x;
      }
    res->t.reps = reps;
    res->t.min = t[0];
    res->t.max = t[reps - 1];
    res->t.med = reps % 2 ? t[reps / 2] : 0.5 * (t[reps / 2 - 1] + t[reps / 2]);
    res->count = count;
    res->selectivity = n ? (double)count / (double)n : 0;
    res->check = count == expect ? "ok" : "FAIL";
    const double gbps = res->bytes / (res->t.med * 1e6);
    snprintf(res->note, sizeof res->note,
             "limit %" PRIu64 " B; %.1f%% of the %s host-to-device copy (%.2f GB/s, this run)", limit,
             copy_gbps > 0 ? 100.0 * gbps / copy_gbps : 0.0, copy_what, copy_gbps);
  } else {
    snprintf(res->note, sizeof res->note, "%s: %.150s", ps_status_name(st), ctx ? ps_context_last_error(ctx) : err);
  }
  ps_expr_destroy(e);
  ps_column_destroy(col);
  ps_context_destroy(ctx);
  bench_print_result(b, res);
}

/* host_lt_mapped: the column written to a file and mapped read-only (as
 * `packscan query --host-resident` maps a table file), against the pageable
 * copy of this run: the file was just written, so its pages are in the page
 * cache and the scan is bound by staging pageable pages, not by the disk. */
static void mapped_case(bench *b, const uint8_t *data, uint64_t n, uint64_t expect, uint64_t copy_bytes) {
  const char *dir = getenv("TMPDIR");
  char path[512];
  snprintf(path, sizeof path, "%s/packscan_bench_mapped_XXXXXX", dir && *dir ? dir : "/tmp");
  const size_t size = (size_t)(n ? n * 2 : 1);
  int fd = mkstemp(path);
  void *map = MAP_FAILED;
  if (fd >= 0) {
    unlink(path); /* gone when closed, whatever happens */
    size_t done = 0;
    while (done < size) {
      const ssize_t w = write(fd, data + done, size - done);
      if (w <= 0) break;
      done += (size_t)w;
    }
    if (done == size) map = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
  }
  if (map == MAP_FAILED) {
    bench_result *res = &b->results[b->n_results++];
    memset(res, 0, sizeof *res);
    snprintf(res->name, sizeof res->name, "host_lt_mapped");
    res->rows = n, res->width = 16, res->check = "FAIL";
    snprintf(res->note, sizeof res->note, "cannot write and map %.150s (set TMPDIR)", path);
    bench_print_result(b, res);
  } else {
    const double gbps = bench_h2d_gbps(b, map, copy_bytes, BENCH_H2D_REPS);
    host_case(b, "host_lt_mapped", (uint8_t *)map, n, expect, gbps, "mapped-file");
    munmap(map, size);
  }
  if (fd >= 0) close(fd);
}

/* Whether the --cases list names `name` (the list is comma-separated). */
static int named(const bench *b, const char *name) {
  const size_t len = strlen(name);
  for (const char *p = b->cases; p && *p;) {
    const char *end = strchr(p, ',');
    const size_t l = end ? (size_t)(end - p) : strlen(p);
    if (l == len && strncmp(p, name, len) == 0) return 1;
    p = end ? end + 1 : NULL;
  }
  return 0;
}

void bench_run_host(bench *b) {
  if (!b->cases || !b->cases[0] || !strstr(b->cases, "host_")) return; /* only when named */
  const uint64_t n = b->rows;
  uint8_t *data = malloc((size_t)(n ? n * 2 : 1));
  if (!data) {
    fprintf(stderr, "bench: host_lt: out of memory\n");
    return;
  }
  uint64_t rng = b->seed, expect = 0;
  for (uint64_t i = 0; i < n; i++) {
    const uint16_t v = (uint16_t)bench_rand(&rng);
    memcpy(data + 2 * i, &v, 2);
    expect += v < (1u << 15);
  }
  /* the device-resident count, the check of both cases */
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = PS_TYPE_UINT16, d.n = n, d.width = 16, d.data = data, d.data_size = n * 2;
  ps_column *col = NULL;
  ps_expr *e = NULL;
  uint64_t device_count = UINT64_MAX;
  if (ps_column_create_for(b->ctx, &d, &col) == PS_OK &&
      ps_expr_compare(b->ctx, col, PS_LT, ps_lit_uint(1u << 15), &e) == PS_OK)
    (void)ps_filter_count(b->ctx, e, &device_count);
  ps_expr_destroy(e);
  ps_column_destroy(col);
  if (device_count != expect) fprintf(stderr, "bench: host_lt: the device-resident count differs\n");
  const uint64_t copy_bytes = n * 2 < (UINT64_C(256) << 20) ? n * 2 : (UINT64_C(256) << 20);
  printf("\n");
  bench_print_header(b);
  if (named(b, "host_lt")) {
    const double pageable = bench_h2d_gbps(b, data, copy_bytes, BENCH_H2D_REPS);
    host_case(b, "host_lt", data, n, device_count, pageable, "pageable");
  }
  if (named(b, "host_lt_mapped")) mapped_case(b, data, n, device_count, copy_bytes);
  if (named(b, "host_lt_pinned")) {
    uint8_t *pinned = bench_pinned_alloc(b, (size_t)(n ? n * 2 : 1));
    if (!pinned) {
      bench_result *res = &b->results[b->n_results++];
      memset(res, 0, sizeof *res);
      snprintf(res->name, sizeof res->name, "host_lt_pinned");
      res->rows = n, res->width = 16, res->check = "skip";
      snprintf(res->note, sizeof res->note, "no pinned host memory on this backend");
      bench_print_result(b, res);
    } else {
      memcpy(pinned, data, (size_t)(n * 2));
      const double gbps = bench_h2d_gbps(b, pinned, copy_bytes, BENCH_H2D_REPS);
      host_case(b, "host_lt_pinned", pinned, n, device_count, gbps, "pinned");
      bench_pinned_free(b, pinned);
    }
  }
  free(data);
}
