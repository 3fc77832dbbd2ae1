/* Host check of the arithmetic of the CUDA reduce and gather kernels
 * (kernels_cuda/ps_cuda_select.cuh, used by reduce_tiles and gather_rows in
 * select.cu): the tile reduction's staging, its per-lane code positions, the
 * row masks handed from lane to lane, the 64-bit tile sums meeting the
 * 128-bit sum, min/max/count and the least corrupt row; the gather's direct
 * two-word code read. Warps are simulated lane by lane, tiles taken in a
 * random order and the partials combined in a random order (the block and
 * last-block combination on the GPU is ps_sel_partial_add too). Compared
 * with a plain bit-by-bit loop over the rows on random streams: every width
 * from 1 to 32, partial last words and tiles, selections and validity
 * bitmaps of any density, unaligned data, corrupt codes. Runs on the CPU, so
 * CI checks the logic without a GPU. */
#include "ps_cuda_select.cuh"

#include "host_check.h"

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

static std::mt19937_64 rng;

/* Code of row r of a w-bit stream, bit by bit (the format's definition). */
static uint64_t plain_code(const std::vector<uint8_t> &s, uint32_t w, uint64_t r) {
  uint64_t v = 0;
  for (uint32_t b = 0; b < w; b++) {
    const uint64_t k = r * w + b;
    v |= (uint64_t)((s[k / 8] >> (k % 8)) & 1u) << b;
  }
  return v;
}

/* Word j's row mask for ps_sel_tile_lane: from an array here, from lane j's
 * register (a shuffle) on the GPU. */
struct word_rows_of {
  const uint32_t *rows;
  PS_HD uint32_t operator()(uint32_t j) const { return rows[j]; }
};

static bool bit(const std::vector<uint8_t> &m, uint64_t r) { return (m[r / 8] >> (r % 8)) & 1u; }

static std::vector<uint8_t> random_bits(uint64_t rows, double density) {
  std::vector<uint8_t> m((rows + 7) / 8 + 8, 0); /* readable tail for unaligned copies */
  std::bernoulli_distribution d(density);
  for (uint64_t r = 0; r < rows; r++)
    if (d(rng)) m[r / 8] |= (uint8_t)(1u << (r % 8));
  return m;
}

/* One reduction: rows rows of width w; selection / validity of the given
 * densities (negative: none); codes above `limit` corrupt; data placed at
 * byte offset `shift` of its buffer (1..3: unaligned); ones: every code is
 * the width's largest. */
template <bool wide>
static void check_reduce_as(uint64_t rows, uint32_t w, double sel_density, double valid_density, uint64_t limit,
                            uint32_t shift, bool ones) {
  const uint64_t bytes = (rows * w + 7) / 8;
  std::vector<uint8_t> buf(bytes + shift + 8);
  for (auto &b : buf) b = ones ? 0xff : (uint8_t)rng();
  std::vector<uint8_t> stream(buf.begin() + shift, buf.begin() + shift + bytes);
  std::vector<uint8_t> sel = sel_density >= 0 ? random_bits(rows, sel_density) : std::vector<uint8_t>();
  std::vector<uint8_t> val = valid_density >= 0 ? random_bits(rows, valid_density) : std::vector<uint8_t>();

  /* the plain loop */
  uint64_t count = 0, mn = UINT64_MAX, mx = 0, bad_row = UINT64_MAX;
  unsigned __int128 sum = 0;
  for (uint64_t r = 0; r < rows; r++) {
    if (!sel.empty() && !bit(sel, r)) continue;
    if (!val.empty() && !bit(val, r)) continue;
    const uint64_t c = plain_code(stream, w, r);
    if (c > limit) {
      bad_row = std::min(bad_row, r);
      continue;
    }
    count++, sum += c, mn = std::min(mn, c), mx = std::max(mx, c);
  }

  ps_cuda_reduce_params p;
  std::memset(&p, 0, sizeof p);
  p.col.width = w;
  p.col.code_limit = limit;
  p.col.data_bytes = bytes;
  p.data = buf.data() + shift;
  p.data_aligned = shift % 4 == 0;
  p.rows = rows;
  if (!sel.empty()) p.selection = sel.data(), p.selection_aligned = 1;
  if (!val.empty()) {
    p.col.flags = PS_COLF_VALIDITY;
    p.col.validity_bytes = (rows + 7) / 8;
    p.validity = val.data(), p.validity_aligned = 1;
  }

  /* the kernel's structure: tiles in any order, a warp's lanes, the limit as
   * the kernel clamps it */
  const uint32_t n = 32 * w, cmask = ps_sel_width_mask(w);
  const uint32_t lim = (uint32_t)(limit < cmask ? limit : cmask);
  const uint64_t tiles = (rows + 1023) / 1024;
  std::vector<uint64_t> order(tiles);
  for (uint64_t t = 0; t < tiles; t++) order[t] = t;
  std::shuffle(order.begin(), order.end(), rng);
  std::vector<ps_sel_partial> parts;
  std::vector<uint32_t> stage(n + 1);
  const uint32_t lanes_per_acc = 1 + (uint32_t)(rng() % 3); /* a lane's accumulators span several tiles */
  std::vector<ps_sel_tile_acc> acc(32, ps_sel_tile_acc_empty());
  /* Lane 0 starts 2^64 - 7 up: the tile sums then carry into the high word
   * (a real carry needs 2^32 rows of 32-bit codes). */
  const uint64_t bias = ~(uint64_t)6;
  acc[0].sum_lo = bias;
  sum += bias;
  uint32_t seen = 0;
  for (uint64_t t : order) {
    uint32_t word_rows[32];
    for (uint32_t j = 0; j < 32; j++) word_rows[j] = ps_sel_reduce_rows(p, t * 32 + j);
    for (uint32_t k = 0; k < n; k++) stage[k] = ps_stream_word(p.data, bytes, t * n + k, p.data_aligned);
    stage[n] = 0;
    /* the kernel's choice: a whole tile without selection or validity has
     * no row masks */
    const bool plain = sel.empty() && val.empty() && t < rows / 1024;
    bool above[32], any_above = false;
    for (uint32_t lane = 0; lane < 32; lane++) {
      TH_EXPECT(!plain || word_rows[lane] == 0xffffffffu, "tile %llu: a plain tile has a row masked",
                (unsigned long long)t);
      above[lane] = plain ? ps_sel_tile_lane<false, wide>(acc[lane], stage.data(), w, lim, lane, word_rows[lane],
                                                          word_rows_of{word_rows})
                          : ps_sel_tile_lane<true, wide>(acc[lane], stage.data(), w, lim, lane, word_rows[lane],
                                                         word_rows_of{word_rows});
      any_above = any_above || above[lane];
    }
    if (any_above) { /* every lane rescans, as the warp does */
      for (uint32_t lane = 0; lane < 32; lane++) {
        const uint64_t b = plain ? ps_sel_tile_bad_row<false>(stage.data(), w, lim, t, lane, word_rows_of{word_rows})
                                 : ps_sel_tile_bad_row<true>(stage.data(), w, lim, t, lane, word_rows_of{word_rows});
        TH_EXPECT(above[lane] || b == UINT64_MAX, "tile %llu lane %u: a corrupt row below the limit's max",
                  (unsigned long long)t, lane);
        acc[lane].bad_row = std::min(acc[lane].bad_row, b);
      }
    }
    if (++seen % lanes_per_acc == 0) {
      for (auto &a : acc) parts.push_back(ps_sel_tile_partial(a)), a = ps_sel_tile_acc_empty();
    }
  }
  for (auto &a : acc) parts.push_back(ps_sel_tile_partial(a));
  std::shuffle(parts.begin(), parts.end(), rng);
  ps_sel_partial got = ps_sel_partial_empty();
  for (const auto &q : parts) got = ps_sel_partial_add(got, q);
  got = ps_sel_tile_result(got);

  char ctx[160];
  std::snprintf(ctx, sizeof ctx, "rows %llu w %u sel %.2f valid %.2f limit %llu shift %u%s", (unsigned long long)rows,
                w, sel_density, valid_density, (unsigned long long)limit, shift, ones ? " ones" : "");
  if (bad_row != UINT64_MAX) { /* the call fails: only the row matters */
    TH_EXPECT(got.bad_row == bad_row, "%s: corrupt row %llu, want %llu", ctx, (unsigned long long)got.bad_row,
              (unsigned long long)bad_row);
    return;
  }
  TH_EXPECT(got.bad_row == UINT64_MAX, "%s: corrupt row %llu reported", ctx, (unsigned long long)got.bad_row);
  TH_EXPECT(got.count == count, "%s: count %llu, want %llu", ctx, (unsigned long long)got.count,
            (unsigned long long)count);
  TH_EXPECT(got.sum_lo == (uint64_t)sum && got.sum_hi == (uint64_t)(sum >> 64), "%s: sum differs", ctx);
  TH_EXPECT(got.min == mn && got.max == mx, "%s: min/max %llu/%llu, want %llu/%llu", ctx, (unsigned long long)got.min,
            (unsigned long long)got.max, (unsigned long long)mn, (unsigned long long)mx);
}

/* Below PS_SEL_TILE_NARROW_MAX bits the kernel sums a tile's codes in 32
 * bits; the 64-bit sums are checked at every width too. */
static void check_reduce(uint64_t rows, uint32_t w, double sel_density, double valid_density, uint64_t limit,
                         uint32_t shift, bool ones = false) {
  if (w <= PS_SEL_TILE_NARROW_MAX) check_reduce_as<false>(rows, w, sel_density, valid_density, limit, shift, ones);
  check_reduce_as<true>(rows, w, sel_density, valid_density, limit, shift, ones);
}

/* The gather's direct read: two words from ps_sel_code_word and a funnel
 * shift, wherever both words lie inside the stream. */
static void check_gather_words(uint32_t w, uint64_t rows) {
  const uint64_t bytes = (rows * w + 7) / 8;
  std::vector<uint8_t> stream(bytes + 8);
  for (auto &b : stream) b = (uint8_t)rng();
  stream.resize(bytes);
  const uint32_t *words = reinterpret_cast<const uint32_t *>(stream.data());
  uint64_t direct = 0;
  for (uint64_t id = 0; id < rows; id++) {
    uint32_t shift = 99;
    const uint64_t word = ps_sel_code_word(id, w, &shift);
    const uint64_t want = plain_code(stream, w, id);
    TH_EXPECT(ps_code_at(stream.data(), bytes, 0, w, id) == want, "w %u id %llu: ps_code_at", w,
              (unsigned long long)id);
    if ((word + 2) * 4 > bytes) continue; /* the kernel's bounded path */
    direct++;
    uint32_t lo, hi;
    std::memcpy(&lo, words + word, 4);
    std::memcpy(&hi, words + word + 1, 4);
    const uint32_t got = ps_sel_funnel(lo, hi, shift) & ps_sel_width_mask(w);
    TH_EXPECT(got == want, "w %u id %llu: direct code %u, want %llu", w, (unsigned long long)id, got,
              (unsigned long long)want);
  }
  TH_EXPECT(rows < 200 || direct > 0, "w %u: no id took the direct read", w);
}

int main() {
  rng.seed(th_host_init("cuda_select_tiles"));

  const uint64_t sizes[] = {1, 31, 32, 33, 1023, 1024, 1025, 4 * 1024 + 77};
  for (uint32_t w = 1; w <= 32; w++) {
    const uint64_t full = w == 32 ? 0xffffffffull : (1ull << w) - 1;
    for (uint64_t rows : sizes) {
      check_reduce(rows, w, -1, -1, full, 0);
      check_reduce(rows, w, 0.15, -1, full, (uint32_t)(rng() % 4));
      check_reduce(rows, w, -1, 0.7, full, 0);
      check_reduce(rows, w, 0.5, 0.5, full, 4);
    }
    /* every row selected but none valid; none selected; all ones */
    check_reduce(2500, w, 1.0, 0.0, full, 0);
    check_reduce(2500, w, 0.0, 1.0, full, 0);
    /* corrupt codes: a limit below the width's largest code */
    check_reduce(3000 + rng() % 3000, w, 0.3, -1, full / 2, 0);
    check_reduce(3000 + rng() % 3000, w, -1, 0.9, full - 1, (uint32_t)(rng() % 4));
    check_gather_words(w, 1 + rng() % 3000);
    check_gather_words(w, 100);
  }
  /* every code at the width's largest value (min = max = 0xffffffff at 32 bits) */
  for (uint32_t w : {1u, 7u, 24u, 27u, 28u, 32u}) {
    const uint64_t full = w == 32 ? 0xffffffffull : (1ull << w) - 1;
    check_reduce(2049, w, 0.01, -1, full, 0, true);
    check_reduce(2049, w, -1, -1, full, 0, true);
  }

  return th_host_finish();
}
