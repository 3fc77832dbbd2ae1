#include "host_check.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static const char *host_test = "?";
static uint64_t host_seed;
static unsigned long max_printed = 10;
static atomic_ulong failures;

uint64_t th_seed_from_env(void) {
  const char *s = getenv("PACKSCAN_SEED");
  if (s && *s) return strtoull(s, NULL, 0);
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (((uint64_t)ts.tv_sec * 1000003u) ^ (uint64_t)ts.tv_nsec) & 0xffffffffull;
}

uint64_t th_host_init(const char *test) {
  host_test = test;
  host_seed = th_seed_from_env();
  const char *mp = getenv("PACKSCAN_TEST_PRINT");
  if (mp && *mp) max_printed = strtoul(mp, NULL, 10);
  printf("test=%s seed=%llu (rerun: PACKSCAN_SEED=%llu)\n", test, (unsigned long long)host_seed,
         (unsigned long long)host_seed);
  fflush(stdout);
  return host_seed;
}

int th_host_check(int ok, const char *file, int line, const char *fmt, ...) {
  if (ok) return 1;
  const unsigned long k = atomic_fetch_add(&failures, 1) + 1;
  if (k > max_printed) {
    if (k == max_printed + 1) printf("(further failures are counted, not printed)\n");
    return 0;
  }
  /* one printf, so that lines from several threads do not interleave */
  char msg[1024];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  printf("FAIL %s:%d [test=%s seed=%llu] %s\n", file, line, host_test, (unsigned long long)host_seed, msg);
  fflush(stdout);
  return 0;
}

int th_host_finish(void) {
  const unsigned long n = atomic_load(&failures);
  if (n) {
    printf("FAILED test=%s seed=%llu: %lu failures\n", host_test, (unsigned long long)host_seed, n);
    return 1;
  }
  printf("PASSED test=%s seed=%llu\n", host_test, (unsigned long long)host_seed);
  return 0;
}
