/* packscan_bench: shared declarations. Only bench_device.c includes CUDA or
 * OpenCL headers; everything else goes through the public packscan API. */
#ifndef PS_BENCH_H
#define PS_BENCH_H

#include <stddef.h>
#include <stdint.h>

#include "packscan.h"

#define BENCH_MAX_COLS 3
#define BENCH_MAX_CASES 64
#define BENCH_MAX_REPS 1000

/* Median, min and max of repeated timings, in milliseconds. */
typedef struct bench_stats {
  double med, min, max;
  int reps;
} bench_stats;

/* One line of the report. */
typedef struct bench_result {
  char name[40];
  uint64_t rows;
  int width;           /* bits per code of the (first) column; -1 if mixed */
  double bytes;        /* bytes that must move: packed + validity read once, output written */
  bench_stats t;       /* packscan */
  int have_naive;
  bench_stats naive;   /* decode to plain arrays + the same work on them */
  double selectivity;  /* selected rows / rows, from the checked count */
  uint64_t count;
  const char *check;   /* "ok", "FAIL", "skip" */
  int have_bytes_read;
  double bytes_read; /* bytes of codes the library read in one call (ps_context_scan_stats) */
  char note[200];
} bench_result;

typedef struct bench_device bench_device; /* timing + copy bandwidth, bench_device.c */

typedef struct bench {
  ps_context *ctx; /* the backend under test */
  ps_context *ref; /* the reference backend, the oracle for the sample checks */
  const char *backend;
  bench_device *dev;
  int is_gpu;
  int quick;
  uint64_t rows;        /* rows of the large cases */
  uint64_t sample_rows; /* rows compared against the reference at the head and the tail */
  uint64_t sweep_min_bytes; /* the width sweep doubles its rows (up to 2^31) until it moves this much */
  uint64_t table_rows;  /* rows of lineorder and lineitem (the query and after-filter cases) */
  int reps, warmup;
  int small_reps;
  uint64_t seed;
  double copy_gbps;   /* device copy: (read + written bytes) / time */
  double memcpy_gbps; /* host memcpy, same definition */
  uint64_t copy_bytes;
  const char *cases;  /* comma-separated filter, NULL = all */
  const char *widths; /* comma-separated widths of lt / lt_count, NULL = all */
  const char *devices; /* --devices: the device list of the multi_* cases, NULL = "0,0" */
  ps_context_options ctx_opts; /* ctx's options (backend, OpenCL platform): other contexts on its device start from them */

  /* Shared scratch on the device, grown on demand. */
  ps_buffer *bitmap;       /* ceil(rows/8) rounded up to 4 */
  ps_buffer *bitmap_naive;
  ps_buffer *identity;     /* uint32 row ids 0..identity_rows-1 for the naive decode */
  uint64_t identity_rows;
  int gather_supported;    /* -1 unknown, 0 no, 1 yes */
  char gather_note[160];

  bench_result results[BENCH_MAX_CASES];
  int n_results;
} bench;

/* ---- bench_device.c ---- */
/* An OpenCL platform given by index or by a case-insensitive substring of its
 * name ("NVIDIA", "Portable"): 0 and *index, or -1 (the platforms printed). */
ps_status bench_device_open(bench *b);
void bench_device_close(bench *b);
/* Starts / stops a device-timed region on the context's stream or queue
 * (CUDA events; OpenCL clFinish + host clock; reference host clock). */
void bench_timer_start(bench *b);
double bench_timer_stop_ms(bench *b);
/* Device copy of `bytes` (device to device), median GB/s of reps, counting
 * read + written bytes. */
ps_status bench_copy_gbps(bench *b, uint64_t bytes, int reps, double *gbps);
/* The host's memcpy, same definition. */
double bench_memcpy_gbps(uint64_t bytes, int reps);
/* Pinned host memory where the backend has it (CUDA: cudaMallocHost), else
 * NULL; freed by bench_pinned_free. */
void *bench_pinned_alloc(bench *b, size_t bytes);
void bench_pinned_free(bench *b, void *p);
/* Median GB/s of ps_buffer_write from src (bytes each; bench_host.c).
 * The median of BENCH_H2D_REPS copies after a warm-up: a median of 5 was
 * seen to land well below the copy a streamed case then sustained. */
#define BENCH_H2D_REPS 15
double bench_h2d_gbps(bench *b, const void *src, uint64_t bytes, int reps);
/* Whether the context's device is a GPU (OpenCL device type; CUDA yes). */
int bench_device_is_gpu(bench *b);
double bench_now_ms(void);

/* ---- bench_data.c ---- */
uint64_t bench_rand(uint64_t *state); /* xoshiro-style 64-bit generator */

/* A column under test: device buffers plus what is needed to rebuild any
 * slice of it on the reference context. */
typedef struct bench_col {
  ps_for_desc desc;      /* n, type, width, reference; data/validity pointers unused */
  ps_buffer *data;       /* packed stream, exactly desc.data_size bytes */
  ps_buffer *validity;   /* NULL = no nulls */
  const ps_dict_desc *dict; /* non-NULL: a dictionary column (desc = its codes) */
  ps_column *col;
  ps_float_exception *exceptions; /* a float column's exception table (desc.exceptions), owned */
} bench_col;

/* Random packed codes over all 2^w values (code_limit 0) or uniform in
 * [0, code_limit); validity_percent < 100 adds a validity bitmap with about
 * that share of valid rows. */
ps_status bench_col_create(bench *b, ps_type type, uint32_t width, ps_reference ref, uint64_t n,
                           uint64_t code_limit, int validity_percent, const ps_dict_desc *dict,
                           bench_col *out);
void bench_col_destroy(bench_col *c);
/* A DELTA column (docs/design.md) of n dates as SSB's lo_orderdate holds
 * them (yyyymmdd, orders of 1..7 lines, uniform over dbgen's date range),
 * sorted: a date-sorted lineorder. */
ps_status bench_col_sorted_dates(bench *b, uint64_t n, bench_col *out);
/* A float64 column of n values drawn as real data looks (docs/float-encoding.md),
 * encoded as ps_encode_for picks it (a negative scale):
 *   BENCH_FLOAT_PRICE  k / 100 for k uniform in [100, 10^7): FOR-decimal
 *   BENCH_FLOAT_KNOTS  wind speeds as a weather table holds them, k * 1.15078
 *                      (knots to mph) for k in [0, 60): ALP
 *   BENCH_FLOAT_RANDOM uniform doubles in [0, 1000) with full mantissas: ordered bits
 * *median: the median value (the `x < median` literal). */
enum { BENCH_FLOAT_PRICE, BENCH_FLOAT_KNOTS, BENCH_FLOAT_RANDOM };
ps_status bench_col_floats(bench *b, int kind, uint64_t n, bench_col *out, double *median);
/* Rows [r0, r0+rows) of c (r0 a multiple of 32) as a column on ctx, built
 * from the device bytes read back. */
ps_status bench_col_slice(bench *b, const bench_col *c, ps_context *ctx, uint64_t r0, uint64_t rows,
                          ps_column **out);

/* A sorted dictionary of d distinct strings; some contain "abc", some start with it. */
typedef struct bench_dict {
  ps_dict_desc desc;
  int32_t *offsets;
  uint8_t *bytes;
} bench_dict;
int bench_dict_create(uint64_t d, uint64_t seed, bench_dict *out);
void bench_dict_free(bench_dict *d);

/* ---- bench_cases.c ---- */
void bench_run_all(bench *b);

/* ---- bench_thrust.cu (CUDA builds: PACKSCAN_BENCH_THRUST) ---- */
/* thrust_count, thrust_ids: the C++ Thrust layer against the C API. */
void bench_thrust_run(bench *b);
/* ---- bench_tables.c: the SSB / TPC-H cases (bench_tables.h) ---- */
void bench_run_tables(bench *b);
/* The zone-map cases (bench_query.c), run only when --cases names them. */
void bench_run_zones(bench *b);
/* The host-resident cases (bench_host.c), run only when --cases names them. */
void bench_run_host(bench *b);

#endif
