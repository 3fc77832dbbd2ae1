/* Host check of the CUDA fast path's per-word arithmetic (kernels_cuda/
 * range_bits.cuh: SWAR and constant-shift code extraction, the direct
 * kernel's one-stream-word step word_bits, and max_code_top) against a plain
 * bit-by-bit loop, at every width 0..64 with random words and ranges (empty
 * ranges are never passed: the backend turns them into a negated full range).
 * Runs on the CPU, so CI checks the kernels' logic without a GPU. */
#include "range_bits.cuh"
#include <cstdio>
#include <cstdlib>
#include <random>
#include <utility>
using namespace ps_range;
static std::mt19937_64 rng;
template <int W> int check() {
  int bad = 0;
  for (int it = 0; it < 20000; it++) {
    uint32_t w[W + 2 > 3 ? W + 2 : 3] = {0};
    for (int k = 0; k < W; k++) w[k] = (uint32_t)rng();
    uint64_t wm = W == 64 ? ~0ull : ((1ull << W) - 1);
    uint64_t a = rng() & wm, b = rng() & wm;
    if (it % 4 == 0) b = a; if (it % 7 == 0) a = 0; if (it % 11 == 0) b = wm;
    if (W > 0 && it % 5 == 0) { a = rng() % (W < 8 ? (1u << W) : 16); b = a + rng() % 3; if (b > wm) b = wm; }
    uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
    uint32_t got = range_bits<W>(w, lo, hi - lo), exp = 0;
    uint64_t maxc = 0;
    for (int j = 0; j < 32; j++) {
      uint64_t c = 0;
      for (int t = 0; t < W; t++) { int bit = j * W + t; c |= (uint64_t)((w[bit / 32] >> (bit % 32)) & 1) << t; }
      exp |= (uint32_t)(lo <= c && c <= hi) << j;
      maxc = c > maxc ? c : maxc;
    }
    if constexpr (W >= 1 && W <= 32) {
      const uint32_t m = max_code_top<W>(w) >> (32 - W);
      if (m != maxc) { if (bad++ < 3) printf("max_code_top W=%d got %u exp %llu\n", W, m, (unsigned long long)maxc); }
    }
    if (got != exp) { if (bad++ < 3) printf("W=%d lo=%llu hi=%llu got %08x exp %08x\n", W, (unsigned long long)lo, (unsigned long long)hi, got, exp); }
  }
  return bad;
}
/* word_bits (the direct kernel's per-word step) against the same plain loop,
 * at the widths whose codes never straddle a word. */
template <int W> int check_word() {
  int bad = 0;
  const uint64_t wm = (1ull << W) - 1;
  for (int it = 0; it < 20000; it++) {
    const uint32_t x = (uint32_t)rng();
    uint64_t a = rng() & wm, b = rng() & wm;
    if (it % 4 == 0) b = a; if (it % 7 == 0) a = 0; if (it % 11 == 0) b = wm;
    const uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
    uint32_t L, S;
    word_consts<W>(lo, hi - lo, &L, &S);
    const uint32_t got = word_bits<W>(x, L, S);
    uint32_t exp = 0;
    for (int j = 0; j < 32 / W; j++) {
      const uint64_t c = (x >> (j * W)) & wm;
      exp |= (uint32_t)(lo <= c && c <= hi) << j;
    }
    if (got != exp) { if (bad++ < 3) printf("word_bits W=%d x=%08x lo=%llu hi=%llu got %08x exp %08x\n", W, x, (unsigned long long)lo, (unsigned long long)hi, got, exp); }
  }
  return bad;
}
/* word_bits with LoZero (the one-sided comparisons' instantiation, lo = 0),
 * and quad4_bits (four 4-bit words: tops interleaved, then transposed),
 * against the same plain loop. */
template <int W> int check_word_lo0() {
  int bad = 0;
  const uint64_t wm = (1ull << W) - 1;
  for (int it = 0; it < 20000; it++) {
    const uint32_t x = (uint32_t)rng();
    uint64_t hi = rng() & wm;
    if (it % 5 == 0) hi = 0; if (it % 7 == 0) hi = wm;
    uint32_t L, S;
    word_consts<W>(0, hi, &L, &S);
    const uint32_t got = word_bits<W, true>(x, L, S);
    uint32_t exp = 0;
    for (int j = 0; j < 32 / W; j++) exp |= (uint32_t)(((x >> (j * W)) & wm) <= hi) << j;
    if (got != exp) { if (bad++ < 3) printf("word_bits<%d, lo 0> x=%08x hi=%llu got %08x exp %08x\n", W, x, (unsigned long long)hi, got, exp); }
  }
  return bad;
}
template <bool LoZero> int check_quad4() {
  int bad = 0;
  for (int it = 0; it < 20000; it++) {
    uint32_t x[4];
    for (int k = 0; k < 4; k++) x[k] = (uint32_t)rng();
    uint64_t a = rng() & 15, b = rng() & 15;
    if (it % 4 == 0) b = a; if (it % 7 == 0) a = 0; if (it % 11 == 0) b = 15;
    uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
    if (LoZero) lo = 0;
    uint32_t L, S;
    word_consts<4>(lo, hi - lo, &L, &S);
    const uint32_t got = quad4_bits<LoZero>(x[0], x[1], x[2], x[3], L, S);
    uint32_t exp = 0;
    for (int r = 0; r < 32; r++) {
      const uint64_t c = (x[r / 8] >> (4 * (r % 8))) & 15;
      exp |= (uint32_t)(lo <= c && c <= hi) << r;
    }
    if (got != exp) { if (bad++ < 3) printf("quad4_bits<%d> lo=%llu hi=%llu got %08x exp %08x\n", (int)LoZero, (unsigned long long)lo, (unsigned long long)hi, got, exp); }
  }
  return bad;
}
/* vector_bits (a 16-byte vector's 128/W bits: the direct kernel's and the
 * fused row ids' step) against the same plain loop, with and without LoZero. */
template <int W, bool LoZero> int check_vector() {
  int bad = 0;
  const uint64_t wm = (1ull << W) - 1;
  constexpr int B = 128 / W;
  for (int it = 0; it < 20000; it++) {
    uint32_t x[4];
    for (int k = 0; k < 4; k++) x[k] = (uint32_t)rng();
    uint64_t a = rng() & wm, b = rng() & wm;
    if (it % 4 == 0) b = a; if (it % 7 == 0) a = 0; if (it % 11 == 0) b = wm;
    uint64_t lo = a < b ? a : b, hi = a < b ? b : a;
    if (LoZero) lo = 0;
    uint32_t L, S, got[4] = {0, 0, 0, 0}, exp[4] = {0, 0, 0, 0};
    word_consts<W>(lo, hi - lo, &L, &S);
    vector_bits<W, LoZero>(x, L, S, got);
    for (int r = 0; r < B; r++) {
      const uint64_t c = (x[(r * W) / 32] >> ((r * W) % 32)) & wm;
      exp[r / 32] |= (uint32_t)(lo <= c && c <= hi) << (r % 32);
    }
    if constexpr (B < 32) got[0] &= (1u << B) - 1u;
    for (int j = 0; j < 4; j++)
      if (got[j] != exp[j]) { if (bad++ < 3) printf("vector_bits<%d, %d> lo=%llu hi=%llu word %d got %08x exp %08x\n", W, (int)LoZero, (unsigned long long)lo, (unsigned long long)hi, j, got[j], exp[j]); break; }
  }
  return bad;
}
template <int... Ws> int all(std::integer_sequence<int, Ws...>) { return (check<Ws>() + ...); }
int main() {
  const char *env = std::getenv("PACKSCAN_SEED");
  const unsigned long long seed = env ? std::strtoull(env, nullptr, 10) : (unsigned long long)std::random_device{}();
  rng.seed(seed);
  printf("test=cuda_range_bits seed=%llu\n", seed);
  int bad = all(std::make_integer_sequence<int, 65>{});
  bad += check_word<1>() + check_word<2>() + check_word<4>() + check_word<8>() + check_word<16>();
  bad += check_word_lo0<4>() + check_word_lo0<8>() + check_quad4<false>() + check_quad4<true>();
  bad += check_vector<1, false>() + check_vector<2, false>() + check_vector<4, false>() + check_vector<8, false>() +
         check_vector<16, false>() + check_vector<4, true>() + check_vector<8, true>() + check_vector<16, true>(); printf("%s (%d bad)\n", bad ? "FAIL" : "ok", bad); return bad != 0; }
