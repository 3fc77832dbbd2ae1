/*
 * threads: many threads create contexts on the backend under test at the
 * same moment (the first use of the backend in the process, where a driver's
 * discovery is least safe), then each creates columns, filters, compares the
 * bitmap and count with a plain loop and with its own reference context, and
 * destroys everything; a second round does it again on warm discovery.
 * packscan.h promises that separate contexts may be used from different
 * threads concurrently.
 *
 * Workers do not touch the harness's global state: each records its first
 * failure in its own slot and the main thread reports them.
 *
 * Environment: PACKSCAN_TEST_THREADS (1..64, default 16). One thread is for
 * compute-sanitizer's racecheck only, which loses track of kernel launches
 * made from several host threads at once (ci/probes/racecheck_threads.cu
 * shows it on kernels without shared-memory races); the kernels' own
 * shared-memory use is the same from one thread.
 */
/* pthread barriers */
#define _POSIX_C_SOURCE 200809L
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* Under AddressSanitizer: PoCL compiles kernels with LLVM on the calling
 * thread, and LLVM replaces that thread's alternate signal stack with one
 * of its own (malloc'ed), which ASan then fails to unmap when the thread
 * exits ("unable to unmap"). Its own alternate stacks are not needed here. */
#if defined(__SANITIZE_ADDRESS__)
#define TH_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define TH_ASAN 1
#endif
#endif
#ifdef TH_ASAN
const char *__asan_default_options(void);
const char *__asan_default_options(void) { return "use_sigaltstack=0"; }
#endif

enum { MAX_THREADS = 64, MAX_ROWS = 3000 };

typedef struct worker {
  int index;
  uint64_t seed;
  ps_context_options opts;
  pthread_barrier_t *start;
  int rounds;
  /* results */
  ps_status create_status; /* the first failed ps_context_create, else PS_OK */
  char create_err[512];
  unsigned long filters;
  char failure[1024]; /* the first mismatch or unexpected status */
} worker;

static void fail_once(worker *w, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 2, 3)))
#endif
    ;

static void fail_once(worker *w, const char *fmt, ...) {
  if (w->failure[0]) return;
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(w->failure, sizeof w->failure, fmt, ap);
  va_end(ap);
}

/* Codes LSB first, width bits each, into a stream of ceil(n*width/8) bytes. */
static void pack(const uint32_t *codes, uint64_t n, uint32_t width, uint8_t *out) {
  memset(out, 0, (size_t)((n * width + 7) / 8));
  for (uint64_t i = 0; i < n; i++)
    for (uint32_t b = 0; b < width; b++)
      if ((codes[i] >> b) & 1u) out[(i * width + b) / 8] |= (uint8_t)(1u << ((i * width + b) % 8));
}

static const char *const fruit[] = {"apple", "banana", "cherry", "damson"};

/* One case's data, the same for the backend under test and the reference. */
typedef struct case_data {
  uint64_t n;
  int64_t ref_a;
  uint32_t a[MAX_ROWS], s[MAX_ROWS];
  uint8_t a_packed[(MAX_ROWS * 10 + 7) / 8], s_packed[(MAX_ROWS * 2 + 7) / 8];
  uint8_t a_valid[(MAX_ROWS + 7) / 8];
  int64_t lt, lo, hi;
  size_t pick;
  uint8_t want[(MAX_ROWS + 7) / 8];
  uint64_t want_count;
} case_data;

static void make_case(th_rng *r, case_data *c) {
  c->n = 1 + th_below(r, MAX_ROWS);
  c->ref_a = (int64_t)th_below(r, 2001) - 1000;
  memset(c->a_valid, 0, sizeof c->a_valid);
  for (uint64_t i = 0; i < c->n; i++) {
    c->a[i] = (uint32_t)th_below(r, 1024);
    c->s[i] = (uint32_t)th_below(r, 4);
    if (!th_chance(r, 10)) c->a_valid[i / 8] |= (uint8_t)(1u << (i % 8));
  }
  pack(c->a, c->n, 10, c->a_packed);
  pack(c->s, c->n, 2, c->s_packed);
  c->lt = c->ref_a + (int64_t)th_below(r, 1100);
  c->lo = c->ref_a + (int64_t)th_below(r, 1024);
  c->hi = c->lo + (int64_t)th_below(r, 400);
  c->pick = (size_t)th_below(r, 4);
  /* (a < lt AND a BETWEEN lo AND hi) OR s = fruit[pick]; a null a is
   * UNKNOWN in the AND, which the OR's TRUE side still overrides. */
  memset(c->want, 0, sizeof c->want);
  c->want_count = 0;
  for (uint64_t i = 0; i < c->n; i++) {
    int valid = (c->a_valid[i / 8] >> (i % 8)) & 1;
    int64_t v = c->ref_a + (int64_t)c->a[i];
    int left = valid && v < c->lt && v >= c->lo && v <= c->hi;
    if (left || c->s[i] == c->pick) {
      c->want[i / 8] |= (uint8_t)(1u << (i % 8));
      c->want_count++;
    }
  }
}

/* Builds the columns and the expression in ctx and filters; 0 on success
 * with the bitmap (plus a guard byte) and count written. */
static int run_case(worker *w, ps_context *ctx, const case_data *c, uint8_t *bm, uint64_t *count, const char *who) {
  ps_column *a = NULL, *s = NULL;
  ps_expr *lt = NULL, *bt = NULL, *eq = NULL, *both = NULL, *all = NULL;
  int ok = 0;
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = PS_TYPE_INT32;
  d.n = c->n;
  d.width = 10;
  d.reference.i = c->ref_a;
  d.data = c->a_packed;
  d.data_size = (c->n * 10 + 7) / 8;
  d.validity = c->a_valid;
  d.validity_size = (c->n + 7) / 8;
  static const char bytes[] = "applebananacherrydamson";
  static const int32_t offs[] = {0, 5, 11, 17, 23};
  ps_dict_desc dict;
  ps_dict_desc_init(&dict);
  dict.count = 4;
  dict.offsets32 = offs;
  dict.bytes = (const uint8_t *)bytes;
  dict.bytes_size = 23;
  dict.sorted = 1;
  ps_for_desc sd;
  ps_for_desc_init(&sd);
  sd.type = PS_TYPE_UINT32;
  sd.n = c->n;
  sd.width = 2;
  sd.data = c->s_packed;
  sd.data_size = (c->n * 2 + 7) / 8;
  ps_status st;
  const char *step = "ps_column_create_for";
  if ((st = ps_column_create_for(ctx, &d, &a)) != PS_OK) goto done;
  step = "ps_column_create_dict";
  if ((st = ps_column_create_dict(ctx, &dict, &sd, &s)) != PS_OK) goto done;
  step = "building the expression";
  if ((st = ps_expr_compare(ctx, a, PS_LT, ps_lit_int(c->lt), &lt)) != PS_OK) goto done;
  if ((st = ps_expr_between(ctx, a, ps_lit_int(c->lo), ps_lit_int(c->hi), &bt)) != PS_OK) goto done;
  const char *f = fruit[c->pick];
  if ((st = ps_expr_compare(ctx, s, PS_EQ, ps_lit_str(f, strlen(f)), &eq)) != PS_OK) goto done;
  /* AND and OR own their operands once they succeed. */
  if ((st = ps_expr_and(ctx, lt, bt, &both)) != PS_OK) goto done;
  lt = bt = NULL;
  if ((st = ps_expr_or(ctx, both, eq, &all)) != PS_OK) goto done;
  both = eq = NULL;
  step = "ps_filter";
  size_t size = (size_t)((c->n + 7) / 8);
  memset(bm, 0xA5, size + 1);
  if ((st = ps_filter(ctx, all, bm, size, count)) != PS_OK) goto done;
  ok = 1;
done:
  if (!ok)
    fail_once(w, "thread %d (seed %llu), %s: %s returned %s: %s", w->index, (unsigned long long)w->seed, who, step,
              ps_status_name(st), ps_context_last_error(ctx));
  ps_expr_destroy(all);
  ps_expr_destroy(both);
  ps_expr_destroy(eq);
  ps_expr_destroy(bt);
  ps_expr_destroy(lt);
  ps_column_destroy(s);
  ps_column_destroy(a);
  return ok ? 0 : -1;
}

static void compare(worker *w, const case_data *c, const uint8_t *bm, uint64_t count, const char *who) {
  size_t size = (size_t)((c->n + 7) / 8);
  if (count != c->want_count)
    fail_once(w, "thread %d (seed %llu), %s, %llu rows: count %llu, expected %llu", w->index,
              (unsigned long long)w->seed, who, (unsigned long long)c->n, (unsigned long long)count,
              (unsigned long long)c->want_count);
  for (size_t i = 0; i < size; i++)
    if (bm[i] != c->want[i]) {
      fail_once(w, "thread %d (seed %llu), %s, %llu rows: bitmap byte %zu is 0x%02x, expected 0x%02x", w->index,
                (unsigned long long)w->seed, who, (unsigned long long)c->n, i, bm[i], c->want[i]);
      break;
    }
  if (bm[size] != 0xA5)
    fail_once(w, "thread %d (seed %llu), %s: the byte past the bitmap was written", w->index,
              (unsigned long long)w->seed, who);
}

static void *work(void *arg) {
  worker *w = arg;
  th_rng r;
  th_rng_seed(&r, w->seed);
  case_data *c = malloc(sizeof *c);
  uint8_t *bm = malloc((MAX_ROWS + 7) / 8 + 1);
  if (!c || !bm) {
    fail_once(w, "thread %d: out of host memory", w->index);
    free(c);
    free(bm);
    return NULL;
  }
  ps_context_options ref_opts;
  ps_context_options_init(&ref_opts);
  ref_opts.backend = "reference";
  for (int round = 0; round < w->rounds; round++) {
    /* Everyone leaves the barrier together, straight into ps_context_create. */
    if (round == 0) pthread_barrier_wait(w->start);
    ps_context *ctx = NULL, *ref = NULL;
    char err[512] = {0};
    ps_status st = ps_context_create(&w->opts, err, sizeof err, &ctx);
    if (st != PS_OK) {
      if (w->create_status == PS_OK) {
        w->create_status = st;
        snprintf(w->create_err, sizeof w->create_err, "%s", err);
      }
      continue;
    }
    th_apply_options(ctx); /* PACKSCAN_TEST_OPTIONS, as th_context would */
    st = ps_context_create(&ref_opts, err, sizeof err, &ref);
    if (st != PS_OK) {
      fail_once(w, "thread %d: reference context: %s: %s", w->index, ps_status_name(st), err);
      ps_context_destroy(ctx);
      continue;
    }
    for (int k = 0; k < 3; k++) {
      make_case(&r, c);
      uint64_t count = 0;
      if (run_case(w, ctx, c, bm, &count, "backend under test") == 0) {
        compare(w, c, bm, count, "backend under test");
        w->filters++;
      }
      if (run_case(w, ref, c, bm, &count, "reference") == 0) compare(w, c, bm, count, "reference");
    }
    ps_context_destroy(ref);
    ps_context_destroy(ctx);
  }
  free(c);
  free(bm);
  return NULL;
}

static int backend_compiled(const char *name) {
  for (size_t i = 0; i < ps_backend_count(); i++)
    if (strcmp(ps_backend_name(i), name) == 0) return 1;
  return strcmp(name, "auto") == 0;
}

int main(int argc, char **argv) {
  th_init(argc, argv, "threads");
  int nthreads = 16;
  const char *env = getenv("PACKSCAN_TEST_THREADS");
  if (env && *env) {
    long v = strtol(env, NULL, 10);
    if (v >= 1 && v <= MAX_THREADS) nthreads = (int)v;
  }
  if (!backend_compiled(th.backend)) {
    printf("SKIP: backend \"%s\" is not compiled into this library\n", th.backend);
    return TH_SKIP;
  }
  static worker workers[MAX_THREADS];
  pthread_t tids[MAX_THREADS];
  pthread_barrier_t start;
  if (!CHECK(pthread_barrier_init(&start, NULL, (unsigned)nthreads) == 0)) return th_finish();
  for (int i = 0; i < nthreads; i++) {
    worker *w = &workers[i];
    memset(w, 0, sizeof *w);
    w->index = i;
    w->seed = th.seed + (uint64_t)i;
    /* Some threads cut their filters into small chunks, so that chunked
     * evaluation also runs concurrently with unchunked. */
    th_options(&w->opts, th.backend, i % 3 == 1 ? 64 : 0);
    w->start = &start;
    w->rounds = 2;
  }
  int started = 0;
  for (; started < nthreads; started++)
    if (!CHECKF(pthread_create(&tids[started], NULL, work, &workers[started]) == 0, "pthread_create %d", started))
      break;
  if (started < nthreads) {
    /* The barrier would never open: nothing sensible is left to test. */
    printf("FAIL: could only start %d of %d threads\n", started, nthreads);
    return 1;
  }
  for (int i = 0; i < nthreads; i++) pthread_join(tids[i], NULL);
  pthread_barrier_destroy(&start);

  int no_device = 0;
  unsigned long filters = 0;
  for (int i = 0; i < nthreads; i++) {
    const worker *w = &workers[i];
    filters += w->filters;
    if (w->create_status == PS_ERR_NO_DEVICE && strcmp(th.backend, "cuda") == 0) {
      no_device++;
      continue;
    }
    CHECKF(w->create_status == PS_OK, "thread %d (seed %llu): ps_context_create: %s: %s", i,
           (unsigned long long)w->seed, ps_status_name(w->create_status), w->create_err);
    CHECKF(!w->failure[0], "%s", w->failure);
  }
  if (no_device == nthreads) {
    const char *req = getenv("PACKSCAN_REQUIRE_CUDA");
    if (!(req && strcmp(req, "1") == 0)) {
      printf("SKIP: no CUDA device (%s); set PACKSCAN_REQUIRE_CUDA=1 to make this a failure\n", workers[0].create_err);
      return TH_SKIP;
    }
  }
  CHECKF(no_device == 0, "%d of %d threads found no CUDA device: %s", no_device, nthreads, workers[0].create_err);
  CHECKF(filters == (unsigned long)nthreads * 2 * 3, "%lu of %lu filters ran", filters,
         (unsigned long)nthreads * 2 * 3);
  printf("threads=%d filters=%lu\n", nthreads, filters);
  return th_finish();
}
