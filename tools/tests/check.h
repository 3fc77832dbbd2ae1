/* CHECK for the tools tests that run no backend (the end-to-end ones take
 * tool_test.h's, which prints the seed too): a failed check prints its line
 * and message and counts one in `failures`, which each test defines. */
#ifndef PSTOOL_CHECK_H
#define PSTOOL_CHECK_H

#include <stdio.h>

#define CHECK(cond, ...)                  \
  do {                                    \
    if (!(cond)) {                        \
      printf("FAIL line %d: ", __LINE__); \
      printf(__VA_ARGS__);                \
      printf("\n");                       \
      failures++;                         \
    }                                     \
  } while (0)

#endif
