#include "harness.h"

#include "host_check.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>

#ifndef PS_TEST_PUBLIC_API_ONLY
#include "internal_options.h"
#endif

th_state th;

/* ---- RNG ------------------------------------------------------------------ */

static uint64_t splitmix64(uint64_t *x) {
  uint64_t z = (*x += 0x9e3779b97f4a7c15ull);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
  return z ^ (z >> 31);
}

void th_rng_seed(th_rng *r, uint64_t seed) {
  uint64_t x = seed;
  for (int i = 0; i < 4; i++) r->s[i] = splitmix64(&x);
}

static uint64_t rotl(uint64_t x, int k) { return (x << k) | (x >> (64 - k)); }

uint64_t th_u64(th_rng *r) {
  uint64_t *s = r->s;
  uint64_t result = rotl(s[1] * 5, 7) * 9;
  uint64_t t = s[1] << 17;
  s[2] ^= s[0];
  s[3] ^= s[1];
  s[1] ^= s[2];
  s[0] ^= s[3];
  s[2] ^= t;
  s[3] = rotl(s[3], 45);
  return result;
}

uint64_t th_below(th_rng *r, uint64_t n) {
  if (n == 0) return th_u64(r);
  /* Rejection sampling keeps it exactly uniform. */
  uint64_t limit = UINT64_MAX - (UINT64_MAX % n);
  uint64_t x;
  do {
    x = th_u64(r);
  } while (x >= limit && limit != 0);
  return x % n;
}

int th_chance(th_rng *r, unsigned percent) { return th_below(r, 100) < percent; }

/* ---- state, reporting ----------------------------------------------------- */

/* Failures printed in full (PACKSCAN_TEST_PRINT overrides); the rest are counted. */
static unsigned long max_printed = 40;
#define TH_MAX_PRINTED max_printed

/* The environment variables through which the library used to take these
 * paths: it no longer reads them, so a run that sets one would silently test
 * the defaults instead. */
static const char *const retired_knobs[] = {
    "PACKSCAN_CUDA_NO_FAST_PATH",   "PACKSCAN_CUDA_NO_TREE",    "PACKSCAN_CUDA_NO_FUSED_IDS",
    "PACKSCAN_CUDA_WORDS_PREFETCH", "PACKSCAN_CUDA_ROW_KERNEL", "PACKSCAN_CUDA_RANGE_ASYNC",
    "PACKSCAN_CUDA_RANGE_WAVES",    "PACKSCAN_OPENCL_JIT",      "PACKSCAN_OPENCL_NO_FAST_PATH",
    "PACKSCAN_OPENCL_WORDS",        "PACKSCAN_OPENCL_LIKE",     "PACKSCAN_OPENCL_IDS"};

/* Exits 1 naming the first of them that is set (th_init). */
static void refuse_retired_knobs(void) {
  for (size_t i = 0; i < sizeof retired_knobs / sizeof retired_knobs[0]; i++) {
    const char *v = getenv(retired_knobs[i]);
    if (v) {
      printf("FAIL [test=%s backend=%s]: %s=%s is set, but the library no longer reads it: set "
             "PACKSCAN_TEST_OPTIONS instead (tests/README.md)\n",
             th.test, th.backend, retired_knobs[i], v);
      exit(1);
    }
  }
}

void th_init(int argc, char **argv, const char *test) {
  memset(&th, 0, sizeof th);
  th.test = test;
  th.backend = argc > 1 ? argv[1] : "reference";
  th.seed = th_seed_from_env();
  th.scale = 1;
  const char *sc = getenv("PACKSCAN_TEST_SCALE");
  if (sc && *sc) {
    long v = strtol(sc, NULL, 10);
    if (v >= 1 && v <= 100000) th.scale = (unsigned)v;
  }
  const char *q = getenv("PACKSCAN_TEST_QUICK");
  /* Any other non-empty value than 0 and 2 is the CI size, as before levels. */
  th.quick = !q || !*q || strcmp(q, "0") == 0 ? 0 : strcmp(q, "2") == 0 ? 2 : 1;
  const char *mp = getenv("PACKSCAN_TEST_PRINT");
  if (mp && *mp) max_printed = strtoul(mp, NULL, 10);
  th_rng_seed(&th.rng, th.seed);
  refuse_retired_knobs();
  th_options_reset();
  printf("test=%s backend=%s seed=%llu scale=%u%s (rerun: PACKSCAN_SEED=%llu%s", test, th.backend,
         (unsigned long long)th.seed, th.scale, th.quick == 2 ? " quick=2" : th.quick ? " quick" : "",
         (unsigned long long)th.seed, th.quick == 2 ? " PACKSCAN_TEST_QUICK=2" : th.quick ? " PACKSCAN_TEST_QUICK=1" : "");
  /* Every other variable that changes what a test runs (CTest sets some per
   * test), so that the line alone reproduces the run. */
  static const char *const inputs[] = {"PACKSCAN_TEST_SCALE",   "PACKSCAN_TEST_OPTIONS", "PACKSCAN_BIG_ROWS",
                                       "PACKSCAN_TEST_THREADS", "PACKSCAN_TEST_WIDTHS",  "PACKSCAN_OPENCL_PLATFORM"};
  for (size_t i = 0; i < sizeof inputs / sizeof inputs[0]; i++) {
    const char *v = getenv(inputs[i]);
    if (v && *v) printf(" %s='%s'", inputs[i], v);
  }
  printf(" %s %s)\n", argc > 0 ? argv[0] : "test", th.backend);
  fflush(stdout);
}

unsigned th_reps(unsigned reps) {
  if (th.quick < 2 || reps == 0) return reps;
  return reps >= 10 ? reps / 10 : 1;
}

uint64_t th_chunked_rows(uint64_t n, uint64_t max_chunk_rows) {
  if (th.quick < 2 || max_chunk_rows == 0 || max_chunk_rows > (UINT64_MAX - 5) / 3) return n;
  uint64_t cap = 3 * max_chunk_rows + 5;
  return n < cap ? n : cap;
}

int th_chunked_skip(const uint64_t *ns, size_t k, uint64_t max_chunk_rows) {
  if (th.quick < 2 || max_chunk_rows == 0) return 0;
  if (ns[k] >= 2 && ns[k] <= max_chunk_rows) return 1;
  return k > 0 && ns[k] != ns[k - 1] &&
         th_chunked_rows(ns[k], max_chunk_rows) == th_chunked_rows(ns[k - 1], max_chunk_rows);
}

int th_finish(void) {
  if (th.failures) {
    printf("FAILED test=%s backend=%s seed=%llu: %lu of %lu checks failed\n", th.test, th.backend,
           (unsigned long long)th.seed, th.failures, th.checks);
    return 1;
  }
  if (th.fp64_refused)
    printf("%lu calls refused for want of cl_khr_fp64 (opencl_fp64=0), as they must be\n", th.fp64_refused);
  printf("PASSED test=%s backend=%s seed=%llu: %lu checks\n", th.test, th.backend,
         (unsigned long long)th.seed, th.checks);
  return 0;
}

void th_case(const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(th.where, sizeof th.where, fmt, ap);
  va_end(ap);
}

#ifndef PS_TEST_PUBLIC_API_ONLY
static ps_internal_options th_internal;
/* Set by th_options_reset from PACKSCAN_TEST_OPTIONS (the tests' own
 * options never turn doubles off). */
static int th_no_fp64;
#else
static const int th_no_fp64 = 0;
#endif

int th_fail(const char *file, int line, const char *fmt, ...) {
  if (th_no_fp64 && th.backend && strcmp(th.backend, "opencl") == 0) {
    /* the refusal of a device without doubles names the extension */
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    if (strstr(msg, "PS_ERR_UNSUPPORTED") && strstr(msg, "cl_khr_fp64")) {
      th.fp64_refused++;
      return 0;
    }
  }
  th.failures++;
  if (th.failures > TH_MAX_PRINTED) {
    if (th.failures == TH_MAX_PRINTED + 1) printf("(further failures are counted, not printed)\n");
    return 0;
  }
  printf("FAIL %s:%d [test=%s backend=%s seed=%llu] %s%s", file, line, th.test, th.backend,
         (unsigned long long)th.seed, th.where, th.where[0] ? ": " : "");
  va_list ap;
  va_start(ap, fmt);
  vprintf(fmt, ap);
  va_end(ap);
  printf("\n");
  fflush(stdout);
  return 0;
}

int th_check_(int ok, const char *file, int line, const char *text) {
  th.checks++;
  if (ok) return 1;
  return th_fail(file, line, "CHECK(%s)", text);
}

int th_check_status_(ps_context *ctx, ps_status got, ps_status want, const char *file, int line,
                     const char *text) {
  th.checks++;
  if (got == want) return 1;
  return th_fail(file, line, "%s returned %s (%d), expected %s; last error: \"%s\"", text,
                 ps_status_name(got), (int)got, ps_status_name(want),
                 ctx ? ps_context_last_error(ctx) : "(no context)");
}

/* ---- memory, strings ------------------------------------------------------ */

void *th_malloc(size_t size) {
  void *p = malloc(size ? size : 1);
  if (!p) {
    printf("FAIL: test harness out of host memory (%zu bytes)\n", size);
    exit(1);
  }
  return p;
}

void *th_calloc(size_t n, size_t size) {
  void *p = calloc(n ? n : 1, size ? size : 1);
  if (!p) {
    printf("FAIL: test harness out of host memory (%zu x %zu bytes)\n", n, size);
    exit(1);
  }
  return p;
}

char *th_strdup_n(const char *s, size_t len) {
  char *p = th_malloc(len + 1);
  if (len) memcpy(p, s, len);
  p[len] = 0;
  return p;
}

int th_contains_ci(const char *haystack, const char *needle) {
  if (!haystack || !needle) return 0;
  size_t nl = strlen(needle);
  for (const char *h = haystack; *h; h++) {
    size_t i = 0;
    while (i < nl && h[i] && tolower((unsigned char)h[i]) == tolower((unsigned char)needle[i])) i++;
    if (i == nl) return 1;
  }
  return nl == 0;
}

/* ---- contexts ------------------------------------------------------------- */

static int backend_compiled(const char *name) {
  if (strcmp(name, "reference") == 0 || strcmp(name, "auto") == 0) return 1;
#ifdef PACKSCAN_HAVE_OPENCL
  if (strcmp(name, "opencl") == 0) return 1;
#endif
#ifdef PACKSCAN_HAVE_CUDA
  if (strcmp(name, "cuda") == 0) return 1;
#endif
  return 0;
}

/* PACKSCAN_OPENCL_PLATFORM, a platform index or a part of its name, into
 * the options: a name the library resolves (ps_context_options.
 * opencl_platform_name), and a name that matches no platform fails the
 * context (PS_ERR_NO_DEVICE, the installed platforms listed), so CI never
 * silently runs on another platform than the one it asked for. */
static void opencl_platform_from_env(ps_context_options *opts) {
  const char *env = getenv("PACKSCAN_OPENCL_PLATFORM");
  if (!env || !*env) return;
  int all_digits = 1;
  for (const char *p = env; *p; p++)
    if (!isdigit((unsigned char)*p)) all_digits = 0;
  if (all_digits)
    opts->opencl_platform = (int32_t)strtol(env, NULL, 10);
  else
    opts->opencl_platform_name = env;
}

void th_options(ps_context_options *opts, const char *backend, uint64_t max_chunk_rows) {
  ps_context_options_init(opts);
  opts->backend = backend;
  opts->max_chunk_rows = max_chunk_rows;
  if (strcmp(backend, "opencl") == 0 || strcmp(backend, "auto") == 0)
    opencl_platform_from_env(opts);
}

int th_is_reference(void) { return strcmp(th.backend, "reference") == 0; }

/* ---- internal options ------------------------------------------------------ */

#ifndef PS_TEST_PUBLIC_API_ONLY
/* What every context th_context makes gets (core/internal_options.h). */

/* Index of value in the NULL-terminated words (the field takes first + index), or -1. */
static int option_word(const char *value, size_t len, const char *const *words) {
  if (!words) { /* a count, 0..4096 */
    int v = 0;
    for (size_t i = 0; i < len; i++) {
      if (value[i] < '0' || value[i] > '9' || i >= 4) return -1;
      v = 10 * v + (value[i] - '0');
    }
    return len > 0 && v <= 4096 ? v : -1;
  }
  for (int i = 0; words[i]; i++)
    if (strlen(words[i]) == len && strncmp(value, words[i], len) == 0) return i;
  return -1;
}

/* Applies "name=value[,name=value...]" to *o; exits 1 naming the entry it
 * cannot read (a typo must not run the defaults under another name). */
static void parse_options(const char *text, const char *source, ps_internal_options *o) {
  static const char *const zero_one[] = {"0", "1", NULL};
  static const char *const tri[] = {"auto", "0", "1", NULL};
  static const char *const words[] = {"auto", "staged", "refused", NULL};
  static const char *const like[] = {"auto", "host", "device", NULL};
  static const char *const ids[] = {"auto", "groups", "runs", NULL};
  static const char *const reduce[] = {"auto", "words", "tiles", NULL};
  static const char *const gather[] = {"auto", "runs", "ids", NULL};
  static const char *const query[] = {"auto", "refused", "unbuildable", NULL};
  static const char *const blocks[] = {"0", "1", "2", "3", "4", "5", "6", "7", "8", NULL};
  static const struct {
    const char *name;
    const char *const *values;
    int first; /* the field's value for values[0] */
    size_t offset;
  } fields[] = {
      {"fast_paths", zero_one, 0, offsetof(ps_internal_options, fast_paths)},
      {"opencl_jit", tri, PS_OPT_AUTO, offsetof(ps_internal_options, opencl_jit)},
      {"opencl_words", words, PS_OPT_WORDS_AUTO, offsetof(ps_internal_options, opencl_words)},
      {"opencl_like", like, PS_OPT_AUTO, offsetof(ps_internal_options, opencl_like)},
      {"opencl_ids", ids, PS_OPT_AUTO, offsetof(ps_internal_options, opencl_ids_runs)},
      {"opencl_ids_run_words", NULL, 0, offsetof(ps_internal_options, opencl_ids_run_words)},
      {"opencl_ids_scan", zero_one, 0, offsetof(ps_internal_options, opencl_ids_scan)},
      {"opencl_reduce", reduce, PS_OPT_AUTO, offsetof(ps_internal_options, opencl_reduce_tiles)},
      {"opencl_gather", gather, PS_OPT_AUTO, offsetof(ps_internal_options, opencl_gather_ids)},
      {"query_specialize", tri, PS_OPT_AUTO, offsetof(ps_internal_options, query_specialize)},
      {"opencl_query", query, PS_OPT_QUERY_AUTO, offsetof(ps_internal_options, opencl_query)},
      {"query_wait_per_chunk", zero_one, 0, offsetof(ps_internal_options, query_wait_per_chunk)},
      {"query_collect_pinned", zero_one, 0, offsetof(ps_internal_options, query_collect_pinned)},
      {"query_lanes", tri, PS_OPT_AUTO, offsetof(ps_internal_options, query_lanes)},
      {"query_prefetch", tri, PS_OPT_AUTO, offsetof(ps_internal_options, query_prefetch)},
      {"query_warp_merge", zero_one, 0, offsetof(ps_internal_options, query_warp_merge)},
      {"opencl_param_buffers", zero_one, 0, offsetof(ps_internal_options, opencl_param_buffers)},
      {"opencl_fp64", zero_one, 0, offsetof(ps_internal_options, opencl_fp64)},
      {"query_min_blocks", blocks, 0, offsetof(ps_internal_options, query_min_blocks)},
      {"where_min_blocks", NULL, 0, offsetof(ps_internal_options, where_min_blocks)},
      {"where_waves", NULL, 0, offsetof(ps_internal_options, where_waves)},
  };
  const char *p = text ? text : "";
  while (*p) {
    const char *end = strchr(p, ',');
    if (!end) end = p + strlen(p);
    const char *eq = memchr(p, '=', (size_t)(end - p));
    int done = 0;
    for (size_t f = 0; eq && !done && f < sizeof fields / sizeof fields[0]; f++) {
      if (strlen(fields[f].name) != (size_t)(eq - p) || strncmp(p, fields[f].name, (size_t)(eq - p)) != 0) continue;
      const int k = option_word(eq + 1, (size_t)(end - eq - 1), fields[f].values);
      if (k < 0) break;
      *(int *)((char *)o + fields[f].offset) = fields[f].first + k;
      done = 1;
    }
    if (!done && end > p) {
      printf(
          "FAIL [test=%s backend=%s]: %s: cannot read '%.*s' (expected name=value, comma-separated: "
          "fast_paths=0|1, opencl_jit=auto|0|1, opencl_words=auto|staged|refused, "
          "opencl_like=auto|host|device, opencl_ids=auto|groups|runs, opencl_ids_run_words=0..4096, opencl_ids_scan=0|1, "
          "opencl_reduce=auto|words|tiles, "
          "opencl_gather=auto|runs|ids, query_specialize=auto|0|1, "
          "opencl_query=auto|refused|unbuildable, query_wait_per_chunk=0|1, query_collect_pinned=0|1, "
          "query_lanes=auto|0|1, "
          "query_prefetch=auto|0|1, query_warp_merge=0|1, opencl_param_buffers=0|1, opencl_fp64=0|1, query_min_blocks=0..8, "
          "where_min_blocks=0..16, where_waves=0..64)\n",
          th.test, th.backend, source, (int)(end - p), p);
      exit(1);
    }
    p = *end ? end + 1 : end;
  }
}

void th_options_reset(void) {
  ps_internal_options_init(&th_internal);
  parse_options(getenv("PACKSCAN_TEST_OPTIONS"), "PACKSCAN_TEST_OPTIONS", &th_internal);
  th_no_fp64 = !th_internal.opencl_fp64;
}

void th_test_options(const char *text) {
  parse_options(text, "the test's options", &th_internal);
  parse_options(getenv("PACKSCAN_TEST_OPTIONS"), "PACKSCAN_TEST_OPTIONS", &th_internal);
}

void th_apply_options(ps_context *ctx) {
  ps_status st = ps_context_set_internal_options(ctx, &th_internal);
  if (st != PS_OK) {
    printf("FAIL [test=%s backend=%s]: setting the internal options: %s: %s\n", th.test, th.backend,
           ps_status_name(st), ps_context_last_error(ctx));
    exit(1);
  }
}

#else
/* Built against the installed package (tests/thrust): the internal options
 * are not part of it, so a run that asks for them fails instead of testing
 * the defaults. */
static void no_internal_options(const char *text, const char *source) {
  if (text && *text) {
    printf("FAIL [test=%s backend=%s]: %s: internal options are not available to a build against the installed "
           "package\n",
           th.test, th.backend, source);
    exit(1);
  }
}

void th_options_reset(void) {
  no_internal_options(getenv("PACKSCAN_TEST_OPTIONS"), "PACKSCAN_TEST_OPTIONS");
}

void th_test_options(const char *text) { no_internal_options(text, "the test's options"); }

void th_apply_options(ps_context *ctx) { (void)ctx; }
#endif

ps_context *th_context(uint64_t max_chunk_rows) {
  ps_context_options opts;
  th_options(&opts, th.backend, max_chunk_rows);
  char err[2048] = {0};
  ps_context *ctx = NULL;
  ps_status st = ps_context_create(&opts, err, sizeof err, &ctx);
  if (st == PS_OK && ctx) {
    th_apply_options(ctx);
    static int printed;
    if (!printed) {
      printf("backend=%s device=%s\n", ps_context_backend(ctx), ps_context_device(ctx));
      printed = 1;
    }
    return ctx;
  }
  int compiled = backend_compiled(th.backend);
  if (!compiled && st == PS_ERR_NO_BACKEND) {
    printf("SKIP: backend \"%s\" is not compiled into this library\n", th.backend);
    exit(TH_SKIP);
  }
  if (compiled && strcmp(th.backend, "cuda") == 0 && st == PS_ERR_NO_DEVICE) {
    const char *req = getenv("PACKSCAN_REQUIRE_CUDA");
    if (!(req && strcmp(req, "1") == 0)) {
      printf("SKIP: no CUDA device (%s); set PACKSCAN_REQUIRE_CUDA=1 to make this a failure\n", err);
      exit(TH_SKIP);
    }
  }
  printf("FAIL [test=%s backend=%s seed=%llu]: cannot create a \"%s\" context: %s: %s\n", th.test,
         th.backend, (unsigned long long)th.seed, th.backend, ps_status_name(st), err);
  exit(1);
}

ps_context *th_reference_context(uint64_t max_chunk_rows) {
  ps_context_options opts;
  th_options(&opts, "reference", max_chunk_rows);
  char err[1024] = {0};
  ps_context *ctx = NULL;
  ps_status st = ps_context_create(&opts, err, sizeof err, &ctx);
  if (st != PS_OK || !ctx) {
    printf("FAIL [test=%s seed=%llu]: cannot create a reference context: %s: %s\n", th.test,
           (unsigned long long)th.seed, ps_status_name(st), err);
    exit(1);
  }
  return ctx;
}

ps_status th_result_text(const ps_query_result *res, uint32_t n_keys, uint32_t n_aggs, char **out) {
  *out = NULL;
  const uint32_t fields = n_keys + n_aggs;
  const uint64_t groups = ps_query_result_groups(res);
  const size_t cap = (size_t)(groups + 1) * (fields + 1) * (PS_DATUM_TEXT_SIZE + 2);
  char *text = th_malloc(cap);
  size_t n = 0;
  text[0] = '\0';
  ps_status st = PS_OK;
  for (uint64_t g = 0; g < groups && st == PS_OK; g++) {
    for (uint32_t k = 0; k < fields && st == PS_OK; k++) {
      ps_datum dt;
      st = k < n_keys ? ps_query_result_key(res, g, k, &dt) : ps_query_result_value(res, g, k - n_keys, &dt);
      char one[PS_DATUM_TEXT_SIZE];
      if (st == PS_OK && dt.is_null)
        strcpy(one, "NULL");
      else if (st == PS_OK)
        st = ps_datum_format(&dt, one, sizeof one);
      const char *sep = k + 1 == fields ? "\n" : k + 1 == n_keys ? " |" : " ";
      if (st == PS_OK) n += (size_t)snprintf(text + n, cap - n, "%s%s", one, sep);
    }
  }
  if (st == PS_OK)
    *out = text;
  else
    free(text);
  return st;
}

uint64_t th_row_id(const uint8_t *ids, uint32_t isz, uint64_t i) {
  if (isz == 4) {
    uint32_t v;
    memcpy(&v, ids + 4 * i, 4);
    return v;
  }
  uint64_t v;
  memcpy(&v, ids + 8 * i, 8);
  return v;
}
