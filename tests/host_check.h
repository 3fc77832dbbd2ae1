/*
 * Seeds and failures for the tests that run kernel code on the CPU without a
 * context or a backend: the CUDA kernels' headers compiled for the host
 * (tests/test_cuda_*.cu, C++ under nvcc, or g++ for sanitizers). The tests
 * of a backend use harness.h, whose th_init reads the seed the same way.
 *
 *   rng.seed(th_host_init("cuda_row_ids"));
 *   TH_EXPECT(got == want, "row %u: %u, expected %u", r, got, want);
 *   return th_host_finish();
 *
 * Failures may be recorded from several threads at once. Needs no library:
 * host_check.c alone links (the ps_test_host target).
 */
#ifndef PS_TEST_HOST_CHECK_H
#define PS_TEST_HOST_CHECK_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/* PACKSCAN_SEED (decimal or 0x hex), else a 32-bit value from the clock
 * (short enough to retype). */
uint64_t th_seed_from_env(void);

/* Reads the seed and PACKSCAN_TEST_PRINT (how many failures are printed in
 * full; default 10), prints "test=<test> seed=<seed> (rerun: ...)" and
 * returns the seed. */
uint64_t th_host_init(const char *test);

/* Returns ok; where it is 0, records a failure, printing the first ones with
 * the test's name and seed. Thread-safe. */
int th_host_check(int ok, const char *file, int line, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Prints "PASSED ..." or "FAILED ... <n> failures" with the seed; returns the
 * exit code (0 or 1). */
int th_host_finish(void);

#ifdef __cplusplus
}
#endif

/* 1 when cond holds, else a recorded failure and 0. */
#define TH_EXPECT(cond, ...) th_host_check((cond) != 0, __FILE__, __LINE__, __VA_ARGS__)

#endif /* PS_TEST_HOST_CHECK_H */
