/* The C++ Thrust layer (include/packscan/thrust.hpp) against the C API on the
 * same device columns, same run (cuda backend only):
 *   thrust_count   selection of the `tree` case's three-leaf tree, then
 *                  thrust::count over its iterator   vs ps_filter_count
 *   thrust_ids     the same selection as copy_if stencil over a counting
 *                  iterator (uint32 row ids), then ps_gather_values_device of column a
 *                  vs ps_filter_row_ids_device + ps_gather_values_device
 * Both sides of a pair are timed per query, as an engine runs one: the tree
 * is built inside the timed region on both sides (the C side's ps_expr_*
 * calls, the C++ side's filterLiteral / AND / OR over the device columns).
 * The Thrust side runs on the context's stream with a caching allocator for
 * Thrust's temporary storage (the C library keeps its scratch too).
 * The row `<case>_c` is the C path; the note of the Thrust row gives
 * thrust / C. Checks: both paths' counts equal ps_filter_count, and the
 * gathered values are equal. */
#include <algorithm>
#include <cinttypes>
#include <cstdio>
#include <cstring>
#include <map>
#include <new>
#include <vector>

#include <cuda_runtime_api.h>

#include <packscan/thrust.hpp>
#include <thrust/copy.h>
#include <thrust/count.h>
#include <thrust/device_ptr.h>
#include <thrust/equal.h>
#include <thrust/execution_policy.h>
#include <thrust/sort.h>

extern "C" {
#include "bench.h"
#include "packscan_cuda.h"
}

namespace ps = packscan;

namespace {

/* Thrust's temporary storage from blocks kept between calls, as the C
 * library keeps its scratch: the comparison is of the work, not of
 * cudaMalloc. */
struct cached_allocator {
  using value_type = char;
  std::multimap<std::ptrdiff_t, char *> free_blocks;
  std::map<char *, std::ptrdiff_t> used;
  cached_allocator() = default;
  cached_allocator(const cached_allocator &) = delete;
  cached_allocator &operator=(const cached_allocator &) = delete;
  ~cached_allocator() {
    for (auto &f : free_blocks) cudaFree(f.second);
    for (auto &u : used) cudaFree(u.first);
  }
  char *allocate(std::ptrdiff_t n) {
    auto it = free_blocks.lower_bound(n);
    char *p = nullptr;
    if (it != free_blocks.end()) {
      n = it->first;
      p = it->second;
      free_blocks.erase(it);
    } else if (cudaMalloc(&p, (size_t)n) != cudaSuccess) {
      throw std::bad_alloc();
    }
    used[p] = n;
    return p;
  }
  void deallocate(char *p, size_t) {
    auto it = used.find(p);
    free_blocks.insert({it->second, p});
    used.erase(it);
  }
};

struct is_true {
  __host__ __device__ bool operator()(bool v) const { return v; }
};

bool wanted(const bench *b, const char *name) {
  if (!b->cases || !b->cases[0]) return true;
  size_t len = std::strlen(name);
  for (const char *p = b->cases; *p;) {
    const char *end = std::strchr(p, ',');
    size_t l = end ? (size_t)(end - p) : std::strlen(p);
    if (l == len && std::strncmp(p, name, len) == 0) return true;
    if (!end) break;
    p = end + 1;
  }
  return false;
}

/* Median, min, max of reps timed runs of f after warm-ups. */
template <class F>
bench_stats time_it(bench *b, F &&f) {
  std::vector<double> t;
  for (int r = -b->warmup; r < b->reps; r++) {
    bench_timer_start(b);
    f();
    double ms = bench_timer_stop_ms(b);
    if (r >= 0) t.push_back(ms);
  }
  std::sort(t.begin(), t.end());
  bench_stats s;
  s.reps = (int)t.size();
  s.med = t.empty() ? 0 : t[t.size() / 2];
  s.min = t.empty() ? 0 : t.front();
  s.max = t.empty() ? 0 : t.back();
  return s;
}

bench_result *add_result(bench *b, const char *name, uint64_t n, double bytes, const bench_stats &t, uint64_t count,
                         bool ok) {
  if (b->n_results >= BENCH_MAX_CASES) return nullptr;
  bench_result *r = &b->results[b->n_results++];
  std::memset(r, 0, sizeof *r);
  std::snprintf(r->name, sizeof r->name, "%s", name);
  r->rows = n;
  r->width = -1;
  r->bytes = bytes;
  r->t = t;
  r->count = count;
  r->selectivity = n ? (double)count / (double)n : 0;
  r->check = ok ? "ok" : "FAIL";
  return r;
}

void print(const bench *b, const bench_result *r) {
  double gbps = r->bytes / (r->t.med * 1e6);
  std::printf("%-14s %11" PRIu64 " %3s %9.4f %9.3f %9.1f %7.1f%% %5.1f%% %9s %7s %5s  %s\n", r->name, r->rows, "mix",
              r->t.med, (double)r->rows / (r->t.med * 1e6), gbps, b->copy_gbps > 0 ? 100.0 * gbps / b->copy_gbps : 0.0,
              100.0 * r->selectivity, "-", "-", r->check, r->note);
  std::fflush(stdout);
}

/* The `tree` case's predicate: (a < 7 + 2^11 AND b >= 7 + 2^18) OR c < 7 + 16,
 * a w12, b w20, c w8, uint32 with reference 7. */
const uint64_t LIT_A = 7 + (1u << 11), LIT_B = 7 + (1u << 18), LIT_C = 7 + 16;

ps_status c_tree(ps_context *ctx, ps_column *const *cols, ps_expr **out) {
  ps_expr *x = nullptr, *y = nullptr, *xy = nullptr, *z = nullptr;
  ps_status st = ps_expr_compare(ctx, cols[0], PS_LT, ps_lit_uint(LIT_A), &x);
  if (st == PS_OK) st = ps_expr_compare(ctx, cols[1], PS_GE, ps_lit_uint(LIT_B), &y);
  if (st == PS_OK) st = ps_expr_and(ctx, x, y, &xy);
  if (st == PS_OK) x = y = nullptr;
  if (st == PS_OK) st = ps_expr_compare(ctx, cols[2], PS_LT, ps_lit_uint(LIT_C), &z);
  if (st == PS_OK) st = ps_expr_or(ctx, xy, z, out);
  if (st == PS_OK) xy = z = nullptr;
  ps_expr_destroy(x);
  ps_expr_destroy(y);
  ps_expr_destroy(xy);
  ps_expr_destroy(z);
  return st;
}

ps::selection thrust_tree(ps::session &s, void *const *data, const ps::FORInfo *info) {
  return ps::OR(ps::AND(ps::filterLiteral(s, data[0], LIT_A, info[0], ps::less()),
                        ps::filterLiteral(s, data[1], LIT_B, info[1], ps::greater_equal())),
                ps::filterLiteral(s, data[2], LIT_C, info[2], ps::less()));
}

}  // namespace

extern "C" void bench_thrust_run(bench *b) {
  if (std::strcmp(ps_context_backend(b->ctx), "cuda") != 0) return;
  if (!wanted(b, "thrust_count") && !wanted(b, "thrust_ids")) return;
  const uint64_t n = b->rows;
  ps_reference m;
  m.u = 7;
  bench_col cols[3];
  const uint32_t widths[3] = {12, 20, 8};
  int made = 0;
  ps_status st = PS_OK;
  for (int i = 0; i < 3 && st == PS_OK; i++) {
    st = bench_col_create(b, PS_TYPE_UINT32, widths[i], m, n, 0, 100, nullptr, &cols[i]);
    if (st == PS_OK) made++;
  }
  void *data[3] = {nullptr, nullptr, nullptr};
  ps::FORInfo info[3];
  ps_column *handles[3] = {nullptr, nullptr, nullptr};
  double in_bytes = 0;
  for (int i = 0; i < made && st == PS_OK; i++) {
    st = ps_buffer_cuda_ptr(cols[i].data, &data[i]);
    info[i] = ps::FORInfo(cols[i].desc);
    info[i].memory = PS_MEMORY_DEVICE;
    handles[i] = cols[i].col;
    in_bytes += (double)cols[i].desc.data_size;
  }
  cudaStream_t stream = nullptr;
  if (st == PS_OK) st = ps_cuda_get_stream(b->ctx, &stream);
  ps_buffer *ids_c = nullptr, *ids_t = nullptr, *vals_c = nullptr, *vals_t = nullptr;
  if (st == PS_OK) st = ps_buffer_create(b->ctx, 4 * n + 4, &ids_c);
  if (st == PS_OK) st = ps_buffer_create(b->ctx, 4 * n + 4, &ids_t);
  if (st == PS_OK) st = ps_buffer_create(b->ctx, 4 * n + 4, &vals_c);
  if (st == PS_OK) st = ps_buffer_create(b->ctx, 4 * n + 4, &vals_t);
  if (st != PS_OK) {
    std::printf("%-14s creating the input: %s\n", "thrust", ps_context_last_error(b->ctx));
  } else {
    try {
      ps::session s = ps::session::borrow(b->ctx);
      cached_allocator alloc;
      auto policy = thrust::cuda::par(alloc).on(stream);
      static_assert(ps::detail::policy_stream<decltype(policy)>::cuda, "the policy's stream is seen");
      uint64_t want = 0;
      {
        ps_expr *e = nullptr;
        if (c_tree(b->ctx, handles, &e) == PS_OK) ps_filter_count(b->ctx, e, &want);
        ps_expr_destroy(e);
      }
      if (wanted(b, "thrust_count")) {
        uint64_t got_t = 0, got_c = 0;
        bench_stats tt = time_it(b, [&] {
          ps::selection sel = thrust_tree(s, data, info);
          got_t = (uint64_t)thrust::count(policy, sel.begin(policy), sel.end(policy), true);
        });
        bench_stats tc = time_it(b, [&] {
          ps_expr *e = nullptr;
          if (c_tree(b->ctx, handles, &e) != PS_OK || ps_filter_count(b->ctx, e, &got_c) != PS_OK) got_c = ~0ull;
          ps_expr_destroy(e);
        });
        /* the Thrust path writes the bitmap and reads it back once */
        bench_result *rt =
            add_result(b, "thrust_count", n, in_bytes + 2.0 * (double)((n + 7) / 8), tt, got_t, got_t == want);
        bench_result *rc = add_result(b, "thrust_count_c", n, in_bytes, tc, got_c, got_c == want);
        if (rt && rc) {
          std::snprintf(rt->note, sizeof rt->note, "thrust / C = %.2fx", tt.med / tc.med);
          print(b, rt);
          print(b, rc);
        }
      }
      /* uint32 row ids, as the C path writes them */
      if (wanted(b, "thrust_ids") && n <= UINT32_MAX) {
        void *pc = nullptr, *pt = nullptr, *vc = nullptr, *vt = nullptr;
        ps_buffer_cuda_ptr(ids_c, &pc);
        ps_buffer_cuda_ptr(ids_t, &pt);
        ps_buffer_cuda_ptr(vals_c, &vc);
        ps_buffer_cuda_ptr(vals_t, &vt);
        auto out_ids = thrust::device_pointer_cast(static_cast<uint32_t *>(pt));
        uint64_t got_t = 0, got_c = 0;
        bool gather_ok = true;
        bench_stats tt = time_it(b, [&] {
          ps::selection sel = thrust_tree(s, data, info);
          auto last =
              thrust::copy_if(policy, thrust::counting_iterator<uint32_t>(0),
                              thrust::counting_iterator<uint32_t>((uint32_t)n), sel.begin(policy), out_ids, is_true());
          got_t = (uint64_t)(last - out_ids);
          gather_ok = gather_ok && ps_gather_values_device(b->ctx, cols[0].col, ids_t, 0, PS_INDEX_UINT32, got_t,
                                                           vals_t, 0, nullptr, 0) == PS_OK;
        });
        bench_stats tc = time_it(b, [&] {
          ps_expr *e = nullptr;
          if (c_tree(b->ctx, handles, &e) != PS_OK ||
              ps_filter_row_ids_device(b->ctx, e, PS_INDEX_UINT32, ids_c, 0, n, &got_c) != PS_OK ||
              ps_gather_values_device(b->ctx, cols[0].col, ids_c, 0, PS_INDEX_UINT32, got_c, vals_c, 0, nullptr, 0) !=
                  PS_OK)
            got_c = ~0ull;
          ps_expr_destroy(e);
        });
        bool same = got_t == got_c && got_c <= n &&
                    thrust::equal(policy, thrust::device_pointer_cast(static_cast<uint32_t *>(vc)),
                                  thrust::device_pointer_cast(static_cast<uint32_t *>(vc)) + got_c,
                                  thrust::device_pointer_cast(static_cast<uint32_t *>(vt))) &&
                    thrust::equal(policy, thrust::device_pointer_cast(static_cast<uint32_t *>(pc)),
                                  thrust::device_pointer_cast(static_cast<uint32_t *>(pc)) + got_c, out_ids);
        /* packed input, the ids written and read, the values gathered (4 B each) */
        double out_bytes = 12.0 * (double)want;
        bench_result *rt = add_result(b, "thrust_ids", n, in_bytes + 2.0 * (double)((n + 7) / 8) + out_bytes, tt, got_t,
                                      got_t == want && gather_ok && same);
        bench_result *rc = add_result(b, "thrust_ids_c", n, in_bytes + out_bytes, tc, got_c, got_c == want && same);
        if (rt && rc) {
          std::snprintf(rt->note, sizeof rt->note, "thrust / C = %.2fx%s", tt.med / tc.med,
                        same ? "" : "; ids or values differ from the C path's");
          print(b, rt);
          print(b, rc);
        }
      }
    } catch (const std::exception &e) {
      std::printf("%-14s %s\n", "thrust", e.what());
      add_result(b, "thrust", n, 0, bench_stats{}, 0, false);
    }
  }
  ps_buffer_destroy(ids_c);
  ps_buffer_destroy(ids_t);
  ps_buffer_destroy(vals_c);
  ps_buffer_destroy(vals_t);
  for (int i = 0; i < made; i++) bench_col_destroy(&cols[i]);
}
