/* What the end-to-end tools tests share: the CHECK macro, a seeded random
 * generator, and a table built from CSV text through the encoder and the
 * file format in memory. */
#ifndef PSTOOL_TOOL_TEST_H
#define PSTOOL_TOOL_TEST_H

#include <stdint.h>
#include <stdio.h>

#include "select_run.h"
#include "table.h"

/* Defined by each test: the failure count and the seed printed with each failure. */
extern int failures;
extern unsigned long long seed;

#define CHECK(cond, ...)                                    \
  do {                                                      \
    if (!(cond)) {                                          \
      printf("FAIL line %d (seed %llu): ", __LINE__, seed); \
      printf(__VA_ARGS__);                                  \
      printf("\n");                                         \
      failures++;                                           \
    }                                                       \
  } while (0)

/* splitmix64: test_rnd_seed(s) then test_rnd() gives the same sequence for the same s. */
void test_rnd_seed(uint64_t s);
uint64_t test_rnd(void);

/* Sets seed, as the library's tests do (tests/harness.c): argv[2] where given,
 * else PACKSCAN_SEED (decimal or 0x hex), else a fresh one per run; seeds
 * test_rnd and prints the line that reruns this run (argv[0], the backend
 * argv[1], the seed). */
void test_seed_init(int argc, char **argv);
/* PACKSCAN_TEST_QUICK: 0 (full size), 1 (CI) or 2 (the sanitizer size, as in
 * tests/README.md); any other value is 0. */
int test_quick(void);
/* Creates the context of the backend a test program was given (argv[1]):
 * 0 with *out set; else what main returns, the reason printed: 77 (a skip)
 * for CUDA without a device unless PACKSCAN_REQUIRE_CUDA=1, as the library's
 * tests do; 1 for every other failure (OpenCL without a device included). */
int test_context(const char *backend, ps_context **out);
/* Runs a SELECT statement on t the way `packscan query` does and returns
 * what it prints (malloc'ed): the result in fmt with a header, or the
 * message of the step that failed, with *failed set: 1 where the statement
 * or its run failed, 2 where writing the result did (after what it wrote). */
char *test_select_text(ps_context *ctx, const tbl_table *t, const char *sql, out_format fmt, int *failed);
/* Prints that line again (after the failures, where it is easy to find). */
void test_print_rerun(void);
/* test_select_text of sql: it must succeed and print exactly want (label,
 * where not NULL, names the case in a failure). */
void test_select_expect(ps_context *ctx, const tbl_table *t, const char *label, const char *sql, out_format fmt,
                        const char *want);
/* test_select_text of sql: it must fail, in its statement or its run (never
 * in writing the result), with a message that holds want. */
void test_select_error(ps_context *ctx, const tbl_table *t, const char *sql, const char *want);

/* The start of a test's main: the usage line where argv names no backend
 * (2), the seed (test_seed_init), the context of the backend argv[1]
 * (test_context), a line naming backend, device and seed. 0 with *ctx set;
 * else what main returns. */
int test_start(int argc, char **argv, ps_context **ctx);
/* The end of a test's main: the count of failed checks of `what` on backend
 * and the rerun line (1), or that all passed (0); what main returns. */
int test_finish(const char *what, const char *backend);

/* CSV text (with a header row; types as `encode --types`, NULL to infer) ->
 * encoded -> table file bytes in *file (the caller frees *file after
 * closing the table, and on failure) -> an open table. NULL, with the
 * failing step's message printed, on failure. */
tbl_table *test_make_table(const char *csv, const char *types, uint8_t **file);

#endif
