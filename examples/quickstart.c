/* The README's example: filter -> row ids -> values, on the default backend.
 * Build: part of the CMake build (examples/quickstart). */
#include <packscan.h>
#include <stdio.h>
#include <stdlib.h>

#define CHECK(call)                                                                              \
  do {                                                                                           \
    ps_status st_ = (call);                                                                      \
    if (st_ != PS_OK) {                                                                          \
      fprintf(stderr, "%s failed: %s\n", #call, ctx ? ps_context_last_error(ctx) : ps_status_name(st_)); \
      return 1;                                                                                  \
    }                                                                                            \
  } while (0)

int main(void) {
  ps_context *ctx = NULL;
  char err[512];
  CHECK(ps_context_create(NULL, err, sizeof err, &ctx)); /* "auto": best available backend */
  printf("backend: %s on %s\n", ps_context_backend(ctx), ps_context_device(ctx));

  /* Two columns of 1000 rows: a price in cents and a quantity. */
  enum { N = 1000 };
  static int64_t price[N];
  static int32_t qty[N];
  for (int i = 0; i < N; i++) price[i] = 10000 + (i * 7919) % 90000, qty[i] = 1 + i % 50;

  /* Encode to frame-of-reference bit-packed streams (smallest width). */
  ps_plain p_price = {PS_TYPE_INT64, price, N, NULL}, p_qty = {PS_TYPE_INT32, qty, N, NULL};
  ps_encoded e_price, e_qty;
  CHECK(ps_encode_for(&p_price, 0, -1, 0, NULL, err, sizeof err, &e_price));
  CHECK(ps_encode_for(&p_qty, 0, -1, 0, NULL, err, sizeof err, &e_qty));
  printf("price: %u bits per value, quantity: %u bits\n", e_price.desc.width, e_qty.desc.width);

  ps_column *c_price, *c_qty;
  CHECK(ps_column_create_for(ctx, &e_price.desc, &c_price));
  CHECK(ps_column_create_for(ctx, &e_qty.desc, &c_qty));

  /* WHERE price BETWEEN 20000 AND 30000 AND qty < 5 */
  ps_expr *between, *small, *both;
  CHECK(ps_expr_between(ctx, c_price, ps_lit_int(20000), ps_lit_int(30000), &between));
  CHECK(ps_expr_compare(ctx, c_qty, PS_LT, ps_lit_int(5), &small));
  CHECK(ps_expr_and(ctx, between, small, &both)); /* takes ownership of both operands */

  /* The selected row ids, then the prices of just those rows. */
  uint64_t *ids = NULL, count = 0;
  CHECK(ps_filter_row_ids(ctx, both, PS_INDEX_UINT64, (void **)&ids, &count));
  int64_t *values = malloc(sizeof *values * (count ? count : 1));
  if (!values) return 1;
  CHECK(ps_gather_values(ctx, c_price, ids, PS_INDEX_UINT64, count, values, NULL));
  printf("%llu rows selected:", (unsigned long long)count);
  for (uint64_t i = 0; i < count && i < 5; i++) printf(" row %llu price %lld;", (unsigned long long)ids[i], (long long)values[i]);
  printf("%s\n", count > 5 ? " ..." : "");

  free(values);
  ps_free(ctx, ids);
  ps_expr_destroy(both);
  ps_column_destroy(c_price);
  ps_column_destroy(c_qty);
  ps_encoded_destroy(&e_price);
  ps_encoded_destroy(&e_qty);
  ps_context_destroy(ctx);
  return 0;
}
