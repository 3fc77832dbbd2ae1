/*
 * query_datum: a query result's double (ps_datum.as_double) is the exact
 * decimal v / 10^scale correctly rounded, whichever way core/query_result.c
 * computes it: the division of two exact doubles where both are exact
 * (|v| <= 2^53, scale <= 22), strtod of the decimal text elsewhere. Compared
 * with strtod of the text for seeded random values of every magnitude and
 * scale, and for the edges of the fast path.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#include "query.h"

/* strtod of the exact decimal text of v / 10^scale. */
static double oracle(ps_i128 v, uint32_t scale) {
  char digits[64], text[96];
  ps_u128 m = v < 0 ? (ps_u128)0 - (ps_u128)v : (ps_u128)v;
  char *p = digits + sizeof digits;
  *--p = '\0';
  do {
    *--p = (char)('0' + (int)(m % 10));
    m /= 10;
  } while (m);
  snprintf(text, sizeof text, "%s%se-%" PRIu32, v < 0 ? "-" : "", p, scale);
  return strtod(text, NULL);
}

static void one(ps_i128 v, uint32_t scale) {
  const ps_datum d = ps_query_datum(v, scale);
  const double want = oracle(v, scale);
  CHECKF(memcmp(&d.as_double, &want, sizeof want) == 0, "v = %s%llx:%016llx (hex), scale %u: %.17g, want %.17g",
         v < 0 ? "-" : "", (unsigned long long)(((v < 0 ? (ps_u128)0 - (ps_u128)v : (ps_u128)v) >> 64)),
         (unsigned long long)(v < 0 ? (ps_u128)0 - (ps_u128)v : (ps_u128)v), scale, d.as_double, want);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "query_datum");
  const ps_i128 p53 = (ps_i128)1 << 53;
  /* the fast path's edges, both signs */
  const ps_i128 edges[] = {0, 1, 5, 9, 10, 15, 25, 35, 123456789, p53 - 1, p53, p53 + 1, p53 + 2, p53 * 2 + 1,
                           (ps_i128)INT64_MAX, (ps_i128)1 << 100};
  for (size_t i = 0; i < sizeof edges / sizeof edges[0]; i++)
    for (uint32_t s = 0; s <= PS_QUERY_MAX_SCALE; s++) {
      one(edges[i], s);
      one(-edges[i], s);
    }
  /* random values of every bit length and scale */
  const int n = th.quick ? 200000 : 2000000;
  for (int i = 0; i < n; i++) {
    const uint32_t bits = (uint32_t)th_below(&th.rng, 120) + 1;
    ps_u128 m = ((ps_u128)th_u64(&th.rng) << 64 | th_u64(&th.rng)) >> (128 - bits);
    const ps_i128 v = th_chance(&th.rng, 50) ? -(ps_i128)m : (ps_i128)m;
    one(v, (uint32_t)th_below(&th.rng, PS_QUERY_MAX_SCALE + 1));
  }
  return th_finish();
}
