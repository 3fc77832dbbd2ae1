/* The README's C++ example: what a Thrust user writes. Three predicates on
 * compressed columns combined into one selection, thrust::count over it, and
 * thrust::copy_if of another column's decoded values with the selection as
 * stencil; then the same query through the C API. Both answers are printed
 * and must agree (exit status 1 otherwise).
 *
 * Built by g++ for a Thrust host system (-DTHRUST_DEVICE_SYSTEM=THRUST_DEVICE_SYSTEM_OMP
 * -fopenmp, or _CPP) the selection is read on the host; the same file built by
 * nvcc (-x cu) for the CUDA system reads it on the GPU. tests/thrust builds it
 * the first way (OMP where the compiler has OpenMP) and runs it.
 * Usage: thrust_quickstart [backend]   (default "auto") */
#include <packscan/thrust.hpp>
#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/device_vector.h>
#include <thrust/execution_policy.h>
#include <thrust/functional.h>
#include <thrust/reduce.h>

#include <cstdio>
#include <stdexcept>
#include <string>
#include <vector>

namespace ps = packscan;

namespace {

struct is_true {
#if defined(__CUDACC__)
  __host__ __device__
#endif
      bool
      operator()(bool b) const {
    return b;
  }
};

/* The table: price in cents, quantity, city; n rows, encoded by packscan's
 * host encoders (smallest bit widths, a sorted dictionary). */
struct table {
  std::vector<int64_t> price;
  std::vector<int32_t> qty;
  std::vector<int32_t> city_offsets{0};
  std::string city_bytes;
  ps_encoded e_price{}, e_qty{};
  ps_encoded_dict e_city{};
  explicit table(size_t n) {
    const char *cities[] = {"Oslo", "Paris", "Salvador", "San Jose", "Seoul", "Sydney", "Tokyo"};
    for (size_t i = 0; i < n; i++) {
      price.push_back(10000 + (int64_t)((i * 7919) % 90000));
      qty.push_back(1 + (int32_t)(i % 50));
      city_bytes += cities[(i * 31) % 7];
      city_offsets.push_back((int32_t)city_bytes.size());
    }
    char err[256];
    ps_plain p{PS_TYPE_INT64, price.data(), n, nullptr}, q{PS_TYPE_INT32, qty.data(), n, nullptr};
    ps_strings c{n, city_offsets.data(), nullptr, (const uint8_t *)city_bytes.data(), nullptr};
    if (ps_encode_for(&p, 0, -1, 0, nullptr, err, sizeof err, &e_price) != PS_OK ||
        ps_encode_for(&q, 0, -1, 0, nullptr, err, sizeof err, &e_qty) != PS_OK ||
        ps_encode_dict(&c, nullptr, err, sizeof err, &e_city) != PS_OK)
      throw std::runtime_error(err);
  }
  ~table() {
    ps_encoded_destroy(&e_price);
    ps_encoded_destroy(&e_qty);
    ps_encoded_dict_destroy(&e_city);
  }
};

/* WHERE price < 30000 AND qty >= 10 AND city LIKE 'S%', through Thrust. */
void with_thrust(const char *backend, table &t, uint64_t *count, int64_t *sum) {
  ps::session s(backend);
  ps::session_scope use(s);
  std::printf("backend: %s\n", s.backend());
  ps::FORInfo price(t.e_price.desc), qty(t.e_qty.desc);
  ps::DICTInfo city(t.e_city.dict, ps::FORInfo(t.e_city.codes.desc));

  /* One tree, nothing evaluated yet. */
  ps::selection sel = ps::AND(ps::AND(ps::filterLiteral(t.e_price.data, 30000, price, ps::less()),
                                      ps::filterLiteral(t.e_qty.data, 10, qty, ps::greater_equal())),
                              ps::filterLiteral(t.e_city.codes.data, "S%", city, ps::like()));

  /* The first read evaluates it, once, into the selection's bitmap. */
  *count = (uint64_t)thrust::count(thrust::device, sel.begin(), sel.end(), true);

  /* Another column's decoded values, selected with the iterator as stencil. */
  std::vector<int64_t> decoded(price.n);
  char err[256];
  if (ps_decode_for(&t.e_price.desc, decoded.data(), err, sizeof err) != PS_OK) throw std::runtime_error(err);
  thrust::device_vector<int64_t> values(decoded.begin(), decoded.end()), chosen(*count);
  thrust::copy_if(thrust::device, values.begin(), values.end(), sel.begin(), chosen.begin(), is_true());
  *sum = thrust::reduce(thrust::device, chosen.begin(), chosen.end(), (int64_t)0);
}

#define C_TRY(call)                                                         \
  do {                                                                      \
    ps_status st_ = (call);                                                 \
    if (st_ != PS_OK) throw std::runtime_error(ps_context_last_error(ctx)); \
  } while (0)

/* The same query through the C API: row ids, then the prices of those rows. */
void with_c(const char *backend, table &t, uint64_t *count, int64_t *sum) {
  ps_context_options opts;
  ps_context_options_init(&opts);
  opts.backend = backend;
  ps_context *ctx = nullptr;
  char err[256];
  if (ps_context_create(&opts, err, sizeof err, &ctx) != PS_OK) throw std::runtime_error(err);
  ps_column *price, *qty, *city;
  C_TRY(ps_column_create_for(ctx, &t.e_price.desc, &price));
  C_TRY(ps_column_create_for(ctx, &t.e_qty.desc, &qty));
  C_TRY(ps_column_create_dict(ctx, &t.e_city.dict, &t.e_city.codes.desc, &city));
  ps_expr *a, *b, *c, *ab, *abc;
  C_TRY(ps_expr_compare(ctx, price, PS_LT, ps_lit_int(30000), &a));
  C_TRY(ps_expr_compare(ctx, qty, PS_GE, ps_lit_int(10), &b));
  C_TRY(ps_expr_like(ctx, city, "S%", 2, -1, 0, &c));
  C_TRY(ps_expr_and(ctx, a, b, &ab));
  C_TRY(ps_expr_and(ctx, ab, c, &abc));
  uint64_t *ids = nullptr;
  C_TRY(ps_filter_row_ids(ctx, abc, PS_INDEX_UINT64, (void **)&ids, count));
  std::vector<int64_t> values(*count);
  C_TRY(ps_gather_values(ctx, price, ids, PS_INDEX_UINT64, *count, values.data(), nullptr));
  *sum = 0;
  for (int64_t v : values) *sum += v;
  ps_free(ctx, ids);
  ps_expr_destroy(abc);
  ps_column_destroy(price);
  ps_column_destroy(qty);
  ps_column_destroy(city);
  ps_context_destroy(ctx);
}

}  // namespace

int main(int argc, char **argv) {
  const char *backend = argc > 1 ? argv[1] : "auto";
  try {
    table t(100000);
    uint64_t n_thrust = 0, n_c = 0;
    int64_t sum_thrust = 0, sum_c = 0;
    with_thrust(backend, t, &n_thrust, &sum_thrust);
    with_c(backend, t, &n_c, &sum_c);
    std::printf("thrust: %llu rows, sum of their prices %lld\n", (unsigned long long)n_thrust, (long long)sum_thrust);
    std::printf("C API:  %llu rows, sum of their prices %lld\n", (unsigned long long)n_c, (long long)sum_c);
    return n_thrust == n_c && sum_thrust == sum_c ? 0 : 1;
  } catch (const std::exception &e) {
    std::fprintf(stderr, "%s\n", e.what());
    return 1;
  }
}
