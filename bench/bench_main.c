/* packscan_bench: filters on packed columns against the device's copy
 * bandwidth and against the naive decode-then-filter pipeline. See
 * bench/README.md. Exit status: 0 when every case that ran passed its check,
 * 1 when one failed, 2 on a usage or setup error, 77 for --backend cuda
 * without a device (unless PACKSCAN_REQUIRE_CUDA=1). */
#define _POSIX_C_SOURCE 200809L
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench.h"
#include "internal_options.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: packscan_bench [--backend NAME] [--opencl-platform P] [--rows N] [--table-rows N] [--reps K]\n"
          "                      [--json FILE] [--devices LIST]\n"
          "                      [--cases LIST] [--widths LIST] [--quick] [--strict] [--seed S] [--sample N]\n"
          "  --backend NAME  reference, opencl, cuda or auto (default auto)\n"
          "  --opencl-platform P  OpenCL platform: an index or part of its name, e.g. NVIDIA\n"
          "                  (default: $PACKSCAN_OPENCL_PLATFORM, else the library's choice)\n"
          "  --rows N        rows of the large cases (N, or 2^K); default GPU 2^28, CPU 2^24,\n"
          "                  --quick GPU 2^24, CPU 2^20\n"
          "  --devices LIST  the devices of the multi_* cases (a context over several devices),\n"
          "                  e.g. 0,1 (default 0,0: two contexts of one device)\n"
          "  --reps K        timed repetitions per case after warm-up (median, min, max)\n"
          "  --json FILE     also write the results as JSON\n"
          "  --cases LIST    comma-separated: lt,lt_count,between,tree,colcol,like_contains,\n"
          "                  like_prefix,nulls,delta_date,ids_1pct,ids_50pct,small, float64 columns\n"
          "                  float_price (FOR-decimal), float_knots (ALP), float_random (ordered bits)\n"
          "                  and SUM(x) WHERE x < median over each (float_*_sum; floats: all six),\n"
          "                  the queries ssb_q1_1,\n"
          "                  ssb_q1_2,ssb_q1_3,tpch_q6,tpch_q1, GROUP BY of many groups groups_date_qty,\n"
          "                  groups_price, the after-filter calls aggregate,\n"
          "                  aggregate_sel,gather_1pct,refine,mask,row_ids, and on CUDA\n"
          "                  thrust_count,thrust_ids (default all); groups: queries (the five\n"
          "                  query cases), groups (the two GROUP BY cases), after (the six after-filter\n"
          "                  calls), tables (queries and after); multi (multi_ssb_q1_1, multi_tpch_q1 and\n"
          "                  their multi_host_* forms, named only: over --devices); host (host_lt,\n"
          "                  host_lt_pinned, host_lt_mapped over --rows rows, host_ssb_q1_1 and\n"
          "                  host_tpch_q1 over the tables, named only: host-resident columns streamed)\n"
          "  --table-rows N  rows of SSB lineorder and TPC-H lineitem (default GPU 120000000,\n"
          "                  CPU 2^22, --quick GPU 2^24, CPU 2^20; --rows sets it too)\n"
          "  --widths LIST   comma-separated widths of lt / lt_count (default 1,2,4,8,12,16,20,24,32,48,64)\n"
          "  --quick         smaller inputs and fewer repetitions\n"
          "  --strict        a case the backend does not support (skip) fails the run too\n"
          "  --seed S        random seed (default 1)\n"
          "  --sample N      rows compared with the reference at the head and at the tail\n"
          "  --query-specialize auto|0|1  query kernels compiled per query: by chunk size (default),\n"
          "                  never (the generic kernel), always (the library's internal option)\n"
          "  --query-wait-per-chunk  each query chunk's status read back in its own wait, not one\n"
          "                  wait per call (the library's internal option; for before/after runs)\n"
          "  --query-collect-pageable  a query call's one wait reads back into the caller's\n"
          "                  memory, a wait per copy, not through pinned staging\n"
          "                  (query_collect_pinned=0; for before/after runs)\n"
          "  --query-lanes auto|0|1  a specialized GROUP BY in registers by rows (a work-item per row\n"
          "                  of a word) or by words: by backend (default), words, rows (the library's\n"
          "                  internal option; for before/after runs)\n"
          "  --query-prefetch  specialized queries without GROUP BY also prefetch the next word's WHERE\n"
          "                  columns (by default only a GROUP BY in registers by rows prefetches, a\n"
          "                  selected word's key and value columns; query_prefetch=1; before/after)\n"
          "  --no-query-prefetch  no cache hints at all (query_prefetch=0; before/after)\n"
          "  --no-warp-merge  a specialized GROUP BY in registers on CUDA merges each work-item's\n"
          "                  registers on its own, not a warp's at once (query_warp_merge=0; before/after)\n"
          "  --opencl-own-params  OpenCL makes a buffer for each launch's parameter blocks and releases it\n"
          "                  after the launch, instead of writing kept ones (opencl_param_buffers=0;\n"
          "                  before/after)\n"
          "  --query-min-blocks N  CUDA's specialized query kernels compiled to fit N blocks an SM\n"
          "                  (registers capped, spills allowed; query_min_blocks; before/after)\n"
          "  --where-min-blocks N  CUDA's per-shape filter kernels compiled to fit N blocks of 128 an SM\n"
          "                  (1..16; registers capped, spills allowed; where_min_blocks; before/after)\n"
          "  --where-waves N CUDA's per-word filter kernels on N waves of resident blocks (1..64; the\n"
          "                  default 4; where_waves; before/after)\n"
          "  --general       every filter on the general evaluator, none on a hand-tuned kernel (range,\n"
          "                  SET, range tree: the library's internal option fast_paths=0)\n"
          "  --opencl-ids auto|groups|runs  OpenCL row ids by work-groups (the GPU default) or by runs\n"
          "                  of words per work-item (the CPU default; opencl_ids_runs; before/after)\n"
          "  --opencl-ids-run-words N  words per work-item of either form (1..4096; default the\n"
          "                  library's: runs of 2048, groups of one word a work-item; opencl_ids_run_words)\n"
          "  --opencl-ids-scan  OpenCL row ids by work-groups always scan the counts in a launch of\n"
          "                  their own (opencl_ids_scan=1; before/after)\n"
          "  --kernel-cache DIR  the context keeps the kernels it compiles in DIR and loads them from\n"
          "                  there (ps_context_options.kernel_cache_dir): warm-start runs, and the\n"
          "                  drivers' binaries to read (bench/kcache-extract.py)\n");
}

static const char *const known_cases[] = {"lt", "lt_count", "between", "tree", "colcol", "like_contains", "like_prefix",
                                          "nulls", "delta_date", "ids_1pct", "ids_50pct", "small",
                                          "float_price", "float_knots", "float_random", "float_price_sum",
                                          "float_knots_sum", "float_random_sum",
                                          /* over lineorder and lineitem (bench_query.c, bench_after.c) */
                                          "ssb_q1_1", "ssb_q1_2", "ssb_q1_3", "tpch_q6", "tpch_q1", "aggregate",
                                          "aggregate_sel", "gather_1pct", "refine", "mask", "row_ids",
                                          /* GROUP BY of many groups over lineitem (bench_query.c) */
                                          "groups_date_qty", "groups_price",
                                          /* the C++ Thrust layer against the C API (bench_thrust.cu, CUDA builds) */
                                          "thrust_count", "thrust_ids",
                                          /* zone maps: unsorted and date-sorted tables, pruning off and on */
                                          "zones_ssb_q1_1", "zones_ssb_q1_2", "zones_ssb_q1_3", "zones_tpch_q6",
                                          "zones_range_1pct",
                                          /* host-resident columns streamed through the device (bench_host.c) */
                                          "host_lt", "host_lt_pinned",
                                          /* a context over several devices (bench_query.c) */
                                          "multi_ssb_q1_1", "multi_tpch_q1", "multi_host_ssb_q1_1",
                                          "multi_host_tpch_q1",
                                          /* host-resident tables on one device, a twentieth of them at a time */
                                          "host_ssb_q1_1", "host_tpch_q1", "host_lt_mapped"};

/* Names for sets of cases in --cases: the same list on every backend (the
 * OpenCL-vs-CUDA comparison of bench/compare.py). */
static const struct {
  const char *name, *cases;
} case_groups[] = {
    {"queries", "ssb_q1_1,ssb_q1_2,ssb_q1_3,tpch_q6,tpch_q1"},
    {"after", "aggregate,aggregate_sel,gather_1pct,refine,mask,row_ids"},
    {"tables", "ssb_q1_1,ssb_q1_2,ssb_q1_3,tpch_q6,tpch_q1,aggregate,aggregate_sel,gather_1pct,refine,mask,row_ids"},
    {"groups", "groups_date_qty,groups_price"},
    {"floats", "float_price,float_knots,float_random,float_price_sum,float_knots_sum,float_random_sum"},
    {"zones", "zones_ssb_q1_1,zones_ssb_q1_2,zones_ssb_q1_3,zones_tpch_q6,zones_range_1pct"},
    {"multi", "multi_ssb_q1_1,multi_tpch_q1,multi_host_ssb_q1_1,multi_host_tpch_q1"},
    {"host", "host_lt,host_lt_pinned,host_lt_mapped,host_ssb_q1_1,host_tpch_q1"},
};

/* Every name in a --cases list must be a case or a group (a typo would
 * silently run nothing); groups are replaced by their cases in out. */
static int check_cases(const char *list, char *out, size_t size) {
  size_t used = 0;
  out[0] = '\0';
  for (const char *p = list; *p;) {
    const char *end = strchr(p, ',');
    size_t l = end ? (size_t)(end - p) : strlen(p), k, g;
    const char *add = NULL;
    for (k = 0; k < sizeof known_cases / sizeof known_cases[0]; k++)
      if (strlen(known_cases[k]) == l && strncmp(p, known_cases[k], l) == 0) add = known_cases[k];
    for (g = 0; !add && g < sizeof case_groups / sizeof case_groups[0]; g++)
      if (strlen(case_groups[g].name) == l && strncmp(p, case_groups[g].name, l) == 0) add = case_groups[g].cases;
    if (!add) {
      fprintf(stderr, "packscan_bench: unknown case '%.*s'\n", (int)l, p);
      return -1;
    }
    int w = snprintf(out + used, size - used, "%s%s", used ? "," : "", add);
    if (w < 0 || (size_t)w >= size - used) {
      fprintf(stderr, "packscan_bench: --cases list too long\n");
      return -1;
    }
    used += (size_t)w;
    if (!end) break;
    p = end + 1;
  }
  return 0;
}

static int parse_u64(const char *s, uint64_t *out) {
  char *end = NULL;
  if (s[0] == '2' && s[1] == '^') {
    unsigned long k = strtoul(s + 2, &end, 10);
    if (*end || k > 62) return -1;
    *out = UINT64_C(1) << k;
    return 0;
  }
  unsigned long long v = strtoull(s, &end, 0);
  if (!*s || *end) return -1;
  *out = v;
  return 0;
}

static void json_string(FILE *f, const char *s) {
  fputc('"', f);
  for (; s && *s; s++) {
    unsigned char ch = (unsigned char)*s;
    if (ch == '"' || ch == '\\')
      fprintf(f, "\\%c", ch);
    else if (ch < 0x20)
      fprintf(f, "\\u%04x", ch);
    else
      fputc(ch, f);
  }
  fputc('"', f);
}

static void json_num(FILE *f, double v, int valid) {
  if (valid)
    fprintf(f, "%.6g", v);
  else
    fputs("null", f);
}

static int write_json(const bench *b, const char *path, const char *date) {
  FILE *f = fopen(path, "w");
  if (!f) return -1;
  fprintf(f, "{\n  \"packscan_version\": ");
  json_string(f, ps_version_string());
  fprintf(f, ",\n  \"date\": ");
  json_string(f, date);
  fprintf(f, ",\n  \"backend\": ");
  json_string(f, b->backend);
  fprintf(f, ",\n  \"device\": ");
  json_string(f, ps_context_device(b->ctx));
  fprintf(f, ",\n  \"is_gpu\": %s,\n  \"quick\": %s,\n  \"rows\": %" PRIu64 ",\n  \"reps\": %d,\n", b->is_gpu ? "true" : "false",
          b->quick ? "true" : "false", b->rows, b->reps);
  fprintf(f, "  \"seed\": %" PRIu64 ",\n  \"copy_bytes\": %" PRIu64 ",\n  \"copy_gbps\": ", b->seed, b->copy_bytes);
  json_num(f, b->copy_gbps, 1);
  fprintf(f, ",\n  \"memcpy_gbps\": ");
  json_num(f, b->memcpy_gbps, 1);
  fprintf(f, ",\n  \"cases\": [\n");
  for (int i = 0; i < b->n_results; i++) {
    const bench_result *r = &b->results[i];
    int t = r->t.reps > 0;
    double gbps = t ? r->bytes / (r->t.med * 1e6) : 0;
    fprintf(f, "    {\"name\": ");
    json_string(f, r->name);
    fprintf(f, ", \"rows\": %" PRIu64 ", \"width\": ", r->rows);
    json_num(f, r->width, r->width >= 0);
    fprintf(f, ", \"bytes\": ");
    json_num(f, r->bytes, t);
    fprintf(f, ", \"reps\": %d, \"ms_median\": ", r->t.reps);
    json_num(f, r->t.med, t);
    fprintf(f, ", \"ms_min\": ");
    json_num(f, r->t.min, t);
    fprintf(f, ", \"ms_max\": ");
    json_num(f, r->t.max, t);
    fprintf(f, ", \"rows_per_s\": ");
    json_num(f, t ? (double)r->rows / (r->t.med * 1e-3) : 0, t);
    fprintf(f, ", \"gbps\": ");
    json_num(f, gbps, t);
    fprintf(f, ", \"frac_copy\": ");
    json_num(f, b->copy_gbps > 0 ? gbps / b->copy_gbps : 0, t && b->copy_gbps > 0);
    fprintf(f, ", \"selectivity\": ");
    json_num(f, r->selectivity, t);
    fprintf(f, ", \"count\": %" PRIu64 ", \"naive_ms_median\": ", r->count);
    json_num(f, r->naive.med, r->have_naive);
    fprintf(f, ", \"naive_ms_min\": ");
    json_num(f, r->naive.min, r->have_naive);
    fprintf(f, ", \"naive_ms_max\": ");
    json_num(f, r->naive.max, r->have_naive);
    fprintf(f, ", \"ratio\": ");
    json_num(f, t && r->have_naive ? r->naive.med / r->t.med : 0, t && r->have_naive);
    fprintf(f, ", \"bytes_read\": ");
    json_num(f, r->bytes_read, r->have_bytes_read);
    fprintf(f, ", \"check\": ");
    json_string(f, r->check);
    fprintf(f, ", \"note\": ");
    json_string(f, r->note);
    fprintf(f, "}%s\n", i + 1 < b->n_results ? "," : "");
  }
  fprintf(f, "  ]\n}\n");
  return fclose(f) == 0 ? 0 : -1;
}

int main(int argc, char **argv) {
  bench b;
  memset(&b, 0, sizeof b);
  const char *backend = "auto", *json = NULL, *platform = getenv("PACKSCAN_OPENCL_PLATFORM");
  const char *kernel_cache = NULL;
  uint64_t rows = 0, reps = 0, sample = 0, table_rows = 0;
  int query_specialize = PS_OPT_AUTO, query_wait_per_chunk = 0, query_lanes = PS_OPT_AUTO;
  int query_prefetch = PS_OPT_AUTO, opencl_ids_scan = 0, general = 0, query_warp_merge = 1, opencl_param_buffers = 1;
  int strict = 0, opencl_ids_runs = PS_OPT_AUTO, query_collect_pinned = 1;
  uint64_t opencl_ids_run_words = 0, query_min_blocks = 0, where_min_blocks = 0, where_waves = 0;
  b.seed = 1;
  b.gather_supported = -1;
  for (int i = 1; i < argc; i++) {
    const char *a = argv[i];
    const char *v = i + 1 < argc ? argv[i + 1] : NULL;
    int bad = 0;
    if (strcmp(a, "--quick") == 0) {
      b.quick = 1;
      continue;
    }
    if (strcmp(a, "--strict") == 0) {
      strict = 1;
      continue;
    }
    if (strcmp(a, "--query-wait-per-chunk") == 0) {
      query_wait_per_chunk = 1;
      continue;
    }
    if (strcmp(a, "--query-collect-pageable") == 0) {
      query_collect_pinned = 0;
      continue;
    }
    if (strcmp(a, "--query-prefetch") == 0) {
      query_prefetch = PS_OPT_ON;
      continue;
    }
    if (strcmp(a, "--no-query-prefetch") == 0) {
      query_prefetch = PS_OPT_OFF;
      continue;
    }
    if (strcmp(a, "--opencl-ids-scan") == 0) {
      opencl_ids_scan = 1;
      continue;
    }
    if (strcmp(a, "--opencl-own-params") == 0) {
      opencl_param_buffers = 0;
      continue;
    }
    if (strcmp(a, "--no-warp-merge") == 0) {
      query_warp_merge = 0;
      continue;
    }
    if (strcmp(a, "--general") == 0) {
      general = 1;
      continue;
    }
    if (strcmp(a, "--help") == 0 || strcmp(a, "-h") == 0) {
      usage(stdout);
      return 0;
    }
    if (!v) {
      bad = 1;
    } else if (strcmp(a, "--backend") == 0) {
      backend = v;
    } else if (strcmp(a, "--opencl-platform") == 0) {
      platform = v;
    } else if (strcmp(a, "--opencl-ids") == 0) {
      bad = strcmp(v, "auto") != 0 && strcmp(v, "groups") != 0 && strcmp(v, "runs") != 0;
      if (!bad) opencl_ids_runs = !strcmp(v, "auto") ? PS_OPT_AUTO : !strcmp(v, "runs") ? PS_OPT_ON : PS_OPT_OFF;
    } else if (strcmp(a, "--opencl-ids-run-words") == 0) {
      bad = parse_u64(v, &opencl_ids_run_words) != 0 || opencl_ids_run_words < 1 || opencl_ids_run_words > 4096;
    } else if (strcmp(a, "--query-min-blocks") == 0) {
      bad = parse_u64(v, &query_min_blocks) != 0 || query_min_blocks > 8;
    } else if (strcmp(a, "--where-min-blocks") == 0) {
      bad = parse_u64(v, &where_min_blocks) != 0 || where_min_blocks > 16;
    } else if (strcmp(a, "--where-waves") == 0) {
      bad = parse_u64(v, &where_waves) != 0 || where_waves < 1 || where_waves > 64;
    } else if (strcmp(a, "--kernel-cache") == 0) {
      kernel_cache = v;
    } else if (strcmp(a, "--json") == 0) {
      json = v;
    } else if (strcmp(a, "--devices") == 0) {
      b.devices = v;
    } else if (strcmp(a, "--widths") == 0) {
      b.widths = v;
    } else if (strcmp(a, "--cases") == 0) {
      static char cases[4096];
      b.cases = cases;
      bad = check_cases(v, cases, sizeof cases) != 0;
    } else if (strcmp(a, "--rows") == 0) {
      bad = parse_u64(v, &rows) != 0 || rows < 64;
    } else if (strcmp(a, "--table-rows") == 0) {
      bad = parse_u64(v, &table_rows) != 0 || table_rows < 64 || table_rows > (UINT64_C(1) << 32);
    } else if (strcmp(a, "--reps") == 0) {
      bad = parse_u64(v, &reps) != 0 || reps < 1 || reps > BENCH_MAX_REPS;
    } else if (strcmp(a, "--seed") == 0) {
      bad = parse_u64(v, &b.seed) != 0;
    } else if (strcmp(a, "--sample") == 0) {
      bad = parse_u64(v, &sample) != 0 || sample < 32;
    } else if (strcmp(a, "--query-specialize") == 0) {
      bad = !v || (strcmp(v, "auto") != 0 && strcmp(v, "0") != 0 && strcmp(v, "1") != 0);
      if (!bad) query_specialize = !strcmp(v, "auto") ? PS_OPT_AUTO : !strcmp(v, "1") ? PS_OPT_ON : PS_OPT_OFF;
    } else if (strcmp(a, "--query-lanes") == 0) {
      bad = strcmp(v, "auto") != 0 && strcmp(v, "0") != 0 && strcmp(v, "1") != 0;
      if (!bad) query_lanes = !strcmp(v, "auto") ? PS_OPT_AUTO : !strcmp(v, "1") ? PS_OPT_ON : PS_OPT_OFF;
    } else {
      bad = 1;
    }
    if (bad) {
      fprintf(stderr, "packscan_bench: bad argument '%s'%s%s\n", a, v ? " " : "", v ? v : "");
      usage(stderr);
      return 2;
    }
    i++;
  }

  char err[1024] = "";
  ps_context_options o;
  ps_context_options_init(&o);
  o.backend = backend;
  if (platform && *platform && (!strcmp(backend, "opencl") || !strcmp(backend, "auto"))) {
    int digits = 1; /* an index, else a part of the platform's name */
    for (const char *p = platform; *p; p++) digits &= *p >= '0' && *p <= '9';
    if (digits)
      o.opencl_platform = (int32_t)strtol(platform, NULL, 10);
    else
      o.opencl_platform_name = platform;
  }
  o.kernel_cache_dir = kernel_cache;
  b.ctx_opts = o;
  ps_status cst = ps_context_create(&o, err, sizeof err, &b.ctx);
  if (cst != PS_OK) {
    /* As the tests: CUDA without a device is a skip (77) unless PACKSCAN_REQUIRE_CUDA=1. */
    const char *req = getenv("PACKSCAN_REQUIRE_CUDA");
    if (!strcmp(backend, "cuda") && cst == PS_ERR_NO_DEVICE && !(req && !strcmp(req, "1"))) {
      printf("SKIP: no CUDA device (%s)\n", err);
      return 77;
    }
    fprintf(stderr, "packscan_bench: no '%s' context: %s\n", backend, err);
    return 2;
  }
  ps_context_options_init(&o);
  o.backend = "reference";
  if (ps_context_create(&o, err, sizeof err, &b.ref) != PS_OK) {
    fprintf(stderr, "packscan_bench: no reference context: %s\n", err);
    ps_context_destroy(b.ctx);
    return 2;
  }
  if (query_specialize != PS_OPT_AUTO || query_wait_per_chunk || query_lanes != PS_OPT_AUTO || query_prefetch != PS_OPT_AUTO ||
      opencl_ids_scan ||
      general || !query_warp_merge || !opencl_param_buffers || opencl_ids_runs != PS_OPT_AUTO || opencl_ids_run_words ||
      !query_collect_pinned || query_min_blocks || where_min_blocks || where_waves) {
    /* before/after runs */
    ps_internal_options io;
    ps_internal_options_init(&io);
    io.query_specialize = query_specialize;
    io.query_wait_per_chunk = query_wait_per_chunk;
    io.query_collect_pinned = query_collect_pinned;
    io.query_lanes = query_lanes;
    io.query_prefetch = query_prefetch;
    io.query_warp_merge = query_warp_merge;
    io.opencl_param_buffers = opencl_param_buffers;
    io.opencl_ids_runs = opencl_ids_runs;
    io.opencl_ids_run_words = (int)opencl_ids_run_words;
    io.opencl_ids_scan = opencl_ids_scan;
    io.query_min_blocks = (int)query_min_blocks;
    io.where_min_blocks = (int)where_min_blocks;
    io.where_waves = (int)where_waves;
    if (general) io.fast_paths = 0;
    if (ps_context_set_internal_options(b.ctx, &io) != PS_OK) {
      fprintf(stderr, "packscan_bench: %s\n", ps_context_last_error(b.ctx));
      return 2;
    }
  }
  b.backend = ps_context_backend(b.ctx);
  if (bench_device_open(&b) != PS_OK) {
    fprintf(stderr, "packscan_bench: device timing setup failed: %s\n", ps_context_last_error(b.ctx));
    return 2;
  }
  b.is_gpu = bench_device_is_gpu(&b);
  /* Defaults sized so that the full set stays within minutes: inputs several
   * times the L2 on a GPU; what a 2-core CPU gets through quickly otherwise. */
  if (b.is_gpu) {
    b.rows = b.quick ? UINT64_C(1) << 24 : UINT64_C(1) << 28;
    b.reps = b.quick ? 5 : 20;
    b.warmup = b.quick ? 1 : 2;
    b.small_reps = b.quick ? 50 : 200;
    b.sample_rows = b.quick ? UINT64_C(1) << 18 : UINT64_C(1) << 20;
    b.copy_bytes = b.quick ? UINT64_C(256) << 20 : UINT64_C(1) << 30;
    b.sweep_min_bytes = b.quick ? 0 : UINT64_C(512) << 20;
  } else {
    b.rows = b.quick ? UINT64_C(1) << 20 : UINT64_C(1) << 24;
    b.reps = b.quick ? 3 : 5;
    b.warmup = 1;
    b.small_reps = b.quick ? 10 : 20;
    b.sample_rows = b.quick ? UINT64_C(1) << 16 : UINT64_C(1) << 18;
    b.copy_bytes = b.quick ? UINT64_C(64) << 20 : UINT64_C(256) << 20;
  }
  b.table_rows = b.is_gpu ? (b.quick ? UINT64_C(1) << 24 : 120000000) : (b.quick ? UINT64_C(1) << 20 : UINT64_C(1) << 22);
  if (rows) {
    b.rows = rows; /* an explicit row count holds for every case */
    b.table_rows = rows;
    b.sweep_min_bytes = 0;
  }
  if (table_rows) b.table_rows = table_rows;
  if (reps) b.reps = (int)reps;
  if (sample) b.sample_rows = sample;

  time_t now = time(NULL);
  char date[32];
  strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ", gmtime(&now));
  double t_start = bench_now_ms();
  ps_status st = bench_copy_gbps(&b, b.copy_bytes, b.is_gpu ? 20 : 5, &b.copy_gbps);
  if (st != PS_OK) fprintf(stderr, "packscan_bench: copy bandwidth: %s\n", ps_status_name(st));
  uint64_t mb = b.copy_bytes < (UINT64_C(256) << 20) ? b.copy_bytes : UINT64_C(256) << 20;
  b.memcpy_gbps = bench_memcpy_gbps(mb, 5);

  printf("packscan_bench %s  %s\n", ps_version_string(), date);
  printf("backend   %s\ndevice    %s (%s)\n", b.backend, ps_context_device(b.ctx), b.is_gpu ? "GPU" : "CPU");
  printf("copy      %.1f GB/s device copy of %" PRIu64 " MiB (read + write); host memcpy %.1f GB/s\n", b.copy_gbps,
         b.copy_bytes >> 20, b.memcpy_gbps);
#ifdef PS_BENCH_BUILD_TYPE
  if (strcmp(PS_BENCH_BUILD_TYPE, "Release") != 0 && strcmp(PS_BENCH_BUILD_TYPE, "RelWithDebInfo") != 0)
    printf("build     CMAKE_BUILD_TYPE='%s': host-side work in the timed calls is unoptimized "
           "(configure with -DCMAKE_BUILD_TYPE=Release)\n",
           PS_BENCH_BUILD_TYPE);
#endif
  printf("rows      %" PRIu64 "  reps %d (median; warm-up %d)  sample %" PRIu64 " rows x2 vs reference  seed %" PRIu64
         "\n",
         b.rows, b.reps, b.warmup, b.sample_rows, b.seed);
  if (b.sweep_min_bytes)
    printf("          the width sweep doubles rows (up to 2^31) until it moves >= %" PRIu64 " MiB\n",
           b.sweep_min_bytes >> 20);
  printf("\n");
  fflush(stdout);

  bench_run_all(&b);
#ifdef PACKSCAN_BENCH_THRUST
  bench_thrust_run(&b);
#endif
  bench_run_tables(&b);
  bench_run_zones(&b);
  bench_run_host(&b);

  int failed = 0;
  for (int i = 0; i < b.n_results; i++)
    failed |= strcmp(b.results[i].check, "FAIL") == 0 || (strict && strcmp(b.results[i].check, "skip") == 0);
  printf("\n%d cases, %s, %.1f s\n", b.n_results, failed ? "SOME CHECKS FAILED" : "all checks passed",
         (bench_now_ms() - t_start) / 1e3);
  if (json && write_json(&b, json, date) != 0) {
    fprintf(stderr, "packscan_bench: cannot write %s\n", json);
    failed = 1;
  }

  ps_buffer_destroy(b.bitmap);
  ps_buffer_destroy(b.bitmap_naive);
  ps_buffer_destroy(b.identity);
  bench_device_close(&b);
  ps_context_destroy(b.ref);
  ps_context_destroy(b.ctx);
  return failed ? 1 : 0;
}
