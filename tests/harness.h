/*
 * A tiny test harness: seeded RNG, CHECK macros that report file:line with
 * the seed and the backend, and context creation for the backend named on
 * the command line (`test_x <backend>`).
 *
 * Exit codes: 0 pass, 1 fail, 77 skip (CTest SKIP_RETURN_CODE). A skip is only
 * for a backend that is not compiled in, or "cuda" without a device unless
 * PACKSCAN_REQUIRE_CUDA=1. "opencl" without a device always fails.
 *
 * Environment: PACKSCAN_SEED (decimal or 0x hex; default: time), PACKSCAN_TEST_SCALE
 * (integer >= 1 multiplying the random sweeps), PACKSCAN_OPENCL_PLATFORM (an index,
 * or a case-insensitive substring of the platform name), PACKSCAN_TEST_PRINT (how
 * many failures are printed in full; default 40), PACKSCAN_TEST_QUICK=1 (the CI
 * size: the slowest sweeps take a seeded sample of their cases, so every CI run
 * covers each kind of case and successive runs cover the rest; the GPU
 * machine runs them whole), PACKSCAN_TEST_QUICK=2 (the sanitizer size: the CI
 * size cut further, mostly in the number of library calls, since under
 * compute-sanitizer each launch and each instrumented access costs; every
 * kernel and path a test reaches at the CI size is still reached, on fewer
 * seeded random cases: th_reps and th_chunked_rows below), PACKSCAN_TEST_OPTIONS (the library's internal
 * options, core/internal_options.h, for every context th_context makes:
 * "name=value" entries, comma-separated: fast_paths=0|1,
 * opencl_jit=auto|0|1, opencl_words=auto|staged|refused,
 * opencl_like=auto|host|device, opencl_ids=auto|groups|runs,
 * opencl_reduce=auto|words|tiles, opencl_gather=auto|runs|ids,
 * query_specialize=auto|0|1, opencl_query=auto|refused|unbuildable; an entry it
 * cannot read fails the test, and so does a variable the library used to
 * read for these, such as PACKSCAN_CUDA_NO_FAST_PATH).
 */
#ifndef PS_TEST_HARNESS_H
#define PS_TEST_HARNESS_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "packscan.h"

#define TH_SKIP 77

/* xoshiro256** seeded through splitmix64: fast, and the same sequence on
 * every platform so a printed seed reproduces a failure anywhere. */
typedef struct th_rng {
  uint64_t s[4];
} th_rng;

void th_rng_seed(th_rng *r, uint64_t seed);
uint64_t th_u64(th_rng *r);
/* Uniform in [0, n); n == 0 means the full 64-bit range. */
uint64_t th_below(th_rng *r, uint64_t n);
/* 1 with probability percent/100. */
int th_chance(th_rng *r, unsigned percent);
/* Picks one of count entries. */
#define TH_PICK(r, arr) ((arr)[th_below((r), sizeof(arr) / sizeof((arr)[0]))])

typedef struct th_state {
  const char *test;    /* test name */
  const char *backend; /* backend under test (argv[1]) */
  uint64_t seed;
  unsigned scale;      /* PACKSCAN_TEST_SCALE */
  int quick;           /* PACKSCAN_TEST_QUICK: 0 full size, 1 CI's, 2 the sanitizers' */
  unsigned long checks;
  unsigned long failures;
  /* Under PACKSCAN_TEST_OPTIONS=opencl_fp64=0 on OpenCL (a device treated
   * as one without doubles): the checks that failed only because a call was
   * refused for want of cl_khr_fp64, as it must be there. Counted and
   * reported, not failures; any other failure still is one. */
  unsigned long fp64_refused;
  char where[512];     /* current case, printed with failures */
  th_rng rng;          /* the test's main RNG, seeded with seed */
} th_state;

extern th_state th;

/* Parses argv (backend name, default "reference"), reads the environment and
 * prints "test=.. backend=.. seed=..". */
void th_init(int argc, char **argv, const char *test);
/* Prints a summary; returns the process exit code (0 or 1). */
int th_finish(void);

/* Describes the current case; printed in front of every failure message. */
void th_case(const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 1, 2)))
#endif
    ;

/* Records a failure (prints the first 40 in full). Returns 0. */
int th_fail(const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
int th_check_(int ok, const char *file, int line, const char *text);
int th_check_status_(ps_context *ctx, ps_status got, ps_status want, const char *file, int line,
                     const char *text);

/* CHECK(cond): evaluates to 1 when cond holds, else records a failure and 0. */
#define CHECK(cond) th_check_((cond) != 0, __FILE__, __LINE__, #cond)
/* CHECKF(cond, fmt, ...): as CHECK with a formatted message. */
#define CHECKF(cond, ...) (th.checks++, (cond) ? 1 : th_fail(__FILE__, __LINE__, __VA_ARGS__))
/* CHECK_STATUS(ctx, call, want): the call's status must be exactly want; prints
 * both names and the context's last error (ctx may be NULL). */
#define CHECK_STATUS(ctx, call, want) th_check_status_((ctx), (call), (want), __FILE__, __LINE__, #call)
#define CHECK_OK(ctx, call) CHECK_STATUS((ctx), (call), PS_OK)

/* Fills opts for a backend name, honouring PACKSCAN_OPENCL_PLATFORM. */
void th_options(ps_context_options *opts, const char *backend, uint64_t max_chunk_rows);
/* Creates a context for the backend under test (th.backend) with the given
 * chunking (0 = default). Exits with 77 or 1 as described above when the
 * backend cannot be used. */
ps_context *th_context(uint64_t max_chunk_rows);
/* A context on the reference backend (the comparison baseline); exits 1 if it
 * cannot be created. */
ps_context *th_reference_context(uint64_t max_chunk_rows);
/* Internal options (PACKSCAN_TEST_OPTIONS above). th_options_reset (th_init
 * calls it): the library's defaults, then the environment's.
 * th_test_options(text): the test's own choices in the same syntax, under
 * the environment's (which still wins). th_apply_options(ctx): gives them to
 * a context the test created itself (th_context does it); exits 1 if the
 * library refuses them. */
void th_options_reset(void);
void th_test_options(const char *text);
void th_apply_options(ps_context *ctx);
/* The number of random repetitions of a sweep: reps, or at the sanitizer
 * size (PACKSCAN_TEST_QUICK=2) a tenth of it, never below 1. */
unsigned th_reps(unsigned reps);
/* The rows of a case on a context chunked at max_chunk_rows (0: unchunked):
 * n, or at the sanitizer size at most three chunks and a partial fourth, so
 * a call still crosses chunk edges without dozens of launches. */
uint64_t th_chunked_rows(uint64_t n, uint64_t max_chunk_rows);
/* 1 when a sweep over the ascending sizes ns should leave out ns[k] on a
 * context chunked at max_chunk_rows (only at the sanitizer size): a size of
 * 2 or more rows that fits one chunk (the same calls as on an unchunked
 * context, which the sweep runs too), or one that th_chunked_rows cuts to
 * the rows it cut ns[k - 1] to. */
int th_chunked_skip(const uint64_t *ns, size_t k, uint64_t max_chunk_rows);
/* 1 when th.backend is "reference". */
int th_is_reference(void);

/* Row id i of an array of isz-byte (4 or 8) ids. */
uint64_t th_row_id(const uint8_t *ids, uint32_t isz, uint64_t i);

/* A query's result as text, group by group ("key key |value value ...\n",
 * n_keys keys and n_aggs values each), into *out (malloc'd); or NULL with
 * the status of the call that failed. */
ps_status th_result_text(const ps_query_result *res, uint32_t n_keys, uint32_t n_aggs, char **out);

/* Allocation that never returns NULL (tests stop on host OOM). */
void *th_malloc(size_t size);
void *th_calloc(size_t n, size_t size);
char *th_strdup_n(const char *s, size_t len);

/* Case-insensitive substring search. */
int th_contains_ci(const char *haystack, const char *needle);

#endif /* PS_TEST_HARNESS_H */
