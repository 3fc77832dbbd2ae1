/*
 * kernels_shared_ldg.c: ps_codes.h's ps_code_at as the CUDA filter kernels
 * compile it (PS_CODES_LDG: every word the code overlaps loaded first, then
 * joined), in a translation unit of its own because the choice is made per
 * translation unit. test_kernels_shared checks it beside the other order.
 */
#include <stdint.h>

#define PS_CODES_LDG 1
#include "ps_codes.h"

uint64_t ps_test_code_at_ldg(const uint8_t *d, uint64_t size, uint32_t aligned, uint32_t w, uint64_t r);

uint64_t ps_test_code_at_ldg(const uint8_t *d, uint64_t size, uint32_t aligned, uint32_t w, uint64_t r) {
  return ps_code_at(d, size, aligned, w, r);
}
