/* See tool_test.h. */
#include "tool_test.h"

#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "encode.h"

static uint64_t rng_state;

void test_rnd_seed(uint64_t s) { rng_state = s; }

static char rerun_line[512];

int test_quick(void) {
  const char *q = getenv("PACKSCAN_TEST_QUICK");
  return q && (!strcmp(q, "1") || !strcmp(q, "2")) ? q[0] - '0' : 0;
}

void test_seed_init(int argc, char **argv) {
  const char *env = getenv("PACKSCAN_SEED");
  if (argc > 2) {
    seed = strtoull(argv[2], NULL, 0);
  } else if (env && *env) {
    seed = strtoull(env, NULL, 0);
  } else {
    struct timespec ts;
    timespec_get(&ts, TIME_UTC);
    seed = (((uint64_t)ts.tv_sec * 1000003u) ^ (uint64_t)ts.tv_nsec) & 0xffffffffull; /* short enough to retype */
  }
  test_rnd_seed(seed);
  const int quick = test_quick();
  snprintf(rerun_line, sizeof rerun_line, "seed %llu (rerun: PACKSCAN_SEED=%llu%s %s %s)", seed, seed,
           quick == 2 ? " PACKSCAN_TEST_QUICK=2"
           : quick    ? " PACKSCAN_TEST_QUICK=1"
                      : "",
           argc > 0 ? argv[0] : "test", argc > 1 ? argv[1] : "");
  printf("%s\n", rerun_line);
  fflush(stdout);
}

void test_print_rerun(void) { printf("%s\n", rerun_line); }

uint64_t test_rnd(void) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

tbl_table *test_make_table(const char *csv, const char *types, uint8_t **file) {
  encode_options o;
  encode_options_init(&o);
  o.types = types;
  csv_mem m = {csv, strlen(csv), 0};
  encoded_table et;
  char err[TOOL_ERR_SIZE];
  if (encode_csv(csv_read_mem, &m, &o, &et, NULL, err, sizeof err)) {
    printf("encode: %s\n", err);
    return NULL;
  }
  size_t size;
  if (tbl_write_memory(et.rows, et.cols, et.ncols, file, &size, err, sizeof err)) {
    printf("write: %s\n", err);
    encoded_table_free(&et);
    return NULL;
  }
  encoded_table_free(&et);
  tbl_table *t;
  if (tbl_open_memory(*file, size, 1, &t, err, sizeof err)) {
    printf("open: %s\n", err);
    return NULL;
  }
  return t;
}

int test_context(const char *backend, ps_context **out) {
  char err[TOOL_ERR_SIZE] = "";
  ps_context_options o;
  ps_context_options_init(&o);
  o.backend = backend;
  *out = NULL;
  ps_status st = ps_context_create(&o, err, sizeof err, out);
  if (st == PS_OK) return 0;
  const char *req = getenv("PACKSCAN_REQUIRE_CUDA");
  if (!strcmp(backend, "cuda") && st == PS_ERR_NO_DEVICE && !(req && !strcmp(req, "1"))) {
    printf("SKIP: no CUDA device (%s); set PACKSCAN_REQUIRE_CUDA=1 to make this a failure\n", err);
    return 77;
  }
  printf("FAIL: cannot create a '%s' context: %s\n", backend, lib_error(st, err));
  return 1;
}

char *test_select_text(ps_context *ctx, const tbl_table *t, const char *sql, out_format fmt, int *failed) {
  char *out = NULL;
  size_t len = 0;
  FILE *f = open_memstream(&out, &len);
  select_plan p;
  ps_query_result *res = NULL;
  char err[TOOL_ERR_SIZE];
  *failed = 1;
  if (select_plan_build(ctx, t, sql, strlen(sql), &p, f) == 0) {
    if (select_plan_run(&p, &res, err, sizeof err) != 0)
      fprintf(f, "%s", err);
    else if (select_write(&p, res, fmt, 1, f, err, sizeof err) != 0)
      fprintf(f, "%s", err), *failed = 2; /* after a run that succeeded: the output may be cut short */
    else
      *failed = 0;
    ps_query_result_destroy(res);
    select_plan_free(&p);
  }
  fclose(f);
  return out;
}

void test_select_expect(ps_context *ctx, const tbl_table *t, const char *label, const char *sql, out_format fmt,
                        const char *want) {
  int failed;
  char *got = test_select_text(ctx, t, sql, fmt, &failed);
  CHECK(!failed && got && !strcmp(got, want), "%s%s%s\n  got:\n%s\n  want:\n%s", label ? label : "", label ? ": " : "",
        sql, got ? got : "(null)", want);
  free(got);
}

void test_select_error(ps_context *ctx, const tbl_table *t, const char *sql, const char *want) {
  int failed;
  char *got = test_select_text(ctx, t, sql, OUT_FORMAT_CSV, &failed);
  /* the statement or its run fails, never its output (select_plan_run) */
  CHECK(failed == 1 && got && strstr(got, want), "%s\n  got%s: %s\n  want: %s", sql,
        failed == 2 ? " (from writing the result)" : "", got ? got : "(null)", want);
  free(got);
}

int test_start(int argc, char **argv, ps_context **ctx) {
  *ctx = NULL;
  if (argc < 2) {
    printf("usage: %s BACKEND [SEED]\n", argc > 0 ? argv[0] : "test");
    return 2;
  }
  test_seed_init(argc, argv);
  const int made = test_context(argv[1], ctx);
  if (made) return made;
  printf("backend %s, device %s, seed %llu\n", ps_context_backend(*ctx), ps_context_device(*ctx), seed);
  return 0;
}

int test_finish(const char *what, const char *backend) {
  if (failures) {
    printf("%d %s check(s) failed on %s\n", failures, what, backend);
    test_print_rerun();
    return 1;
  }
  printf("%s on %s: all tests passed\n", what, backend);
  return 0;
}
