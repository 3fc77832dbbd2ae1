/* Host check of the CUDA row-id kernel's arithmetic (kernels_cuda/
 * ps_cuda_select.cuh, used by write_ids / count_ids in select.cu): the tile
 * and round geometry, the bounded and whole-tile bitmap loads, the per-warp
 * counts and offsets inside a tile, the per-lane extraction into the staging
 * area and the warp's copy-out positions. The offsets of the tiles (an
 * exclusive scan of their counts) come on the GPU from a block-wide
 * decoupled look-back over cub::ScanTileState (ps_cuda_ids.cuh; the 40M-row
 * case of select.cuda takes it past one window); here from a plain loop, after
 * which host threads take tiles by ticket and write them in whatever order
 * they get them. Compared with a plain loop over the bits on random bitmaps:
 * partial last words and tiles, empty and full selections, uint32 and uint64
 * ids, id bases past 2^32, unaligned bitmaps and outputs. Runs on the CPU, so
 * CI checks the logic without a GPU. */
#include "ps_cuda_select.cuh"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

static std::mt19937_64 rng;
static std::atomic<int> bad{0}; /* EXPECT runs on the host threads too */

#define EXPECT(cond, ...)                    \
  do {                                       \
    if (!(cond)) {                           \
      if (bad++ < 10) {                      \
        std::printf("FAIL %s:%d: ", __FILE__, __LINE__); \
        std::printf(__VA_ARGS__);            \
        std::printf("\n");                   \
      }                                      \
    }                                        \
  } while (0)

static const uint32_t kWarps = PS_SEL_IDS_WARPS, kRounds = PS_SEL_IDS_ROUNDS;

struct run {
  const uint8_t *bitmap;
  bool bitmap_aligned;
  uint64_t rows, id_base;
  uint32_t bytes;
  uint8_t *out;
  uint32_t total;
};

/* select.cu's load_ids_words: whole tiles word by word, the rest bounded. */
static void load_words(const run &p, uint32_t tile, uint32_t warp, uint32_t lane, uint32_t *w) {
  const uint64_t first = ps_sel_ids_word(tile, warp, 0, lane);
  for (uint32_t r = 0; r < kRounds; ++r) {
    if (p.bitmap_aligned && ps_sel_ids_full_tile(p.rows, tile))
      std::memcpy(&w[r], p.bitmap + (first + r * 32u) * 4, 4);
    else
      w[r] = ps_sel_bitmap_word(p.bitmap, p.rows, first + r * 32u, p.bitmap_aligned);
  }
}

/* select.cu's ids_lane_count, for every lane of every warp of a tile: the
 * warp sums (cub::WarpReduce there). */
static void warp_counts(const run &p, uint32_t tile, uint32_t (&w)[kWarps][32][kRounds], uint32_t *warp_count) {
  for (uint32_t warp = 0; warp < kWarps; ++warp) {
    warp_count[warp] = 0;
    for (uint32_t lane = 0; lane < 32; ++lane) {
      load_words(p, tile, warp, lane, w[warp][lane]);
      for (uint32_t k = 0; k < kRounds; ++k) warp_count[warp] += (uint32_t)__builtin_popcount(w[warp][lane][k]);
    }
  }
}

/* One block of write_ids, `before` being the ids of the tiles before it
 * (what CUB's look-back returns to the block's first warp). */
static void write_tile(run &p, uint32_t tile, uint32_t tiles, uint32_t before, std::mt19937 &r) {
  static thread_local uint32_t w[kWarps][32][kRounds];
  uint32_t warp_count[kWarps];
  warp_counts(p, tile, w, warp_count);
  /* Each warp's offset in the tile and the tile's count, as every thread of
   * write_ids computes them from the shared warp counts. */
  uint32_t offset[kWarps], count = 0;
  for (uint32_t warp = 0; warp < kWarps; ++warp) {
    uint32_t warp_before = 0, c_all = 0;
    for (uint32_t i = 0; i < kWarps; ++i) {
      warp_before += i < warp ? warp_count[i] : 0u;
      c_all += warp_count[i];
    }
    offset[warp] = warp_before;
    if (warp == 0) count = c_all;
    EXPECT(c_all == count, "warp %u sees a tile count of %u, warp 0 %u", warp, c_all, count);
  }
  if (tile == tiles - 1) p.total = before + count;
  for (uint32_t warp = 0; warp < kWarps; ++warp) {
    uint32_t at = before + offset[warp];
    for (uint32_t k = 0; k < kRounds; ++k) {
      uint16_t stage[PS_SEL_IDS_STAGE_SLOTS];
      std::memset(stage, 0xee, sizeof stage);
      /* write_ids: aligned outputs stage from `lead` and store in groups. */
      const bool aligned = reinterpret_cast<uintptr_t>(p.out) % p.bytes == 0;
      const uint64_t out_elem = reinterpret_cast<uintptr_t>(p.out) / p.bytes;
      uint32_t n = 0;
      for (uint32_t lane = 0; lane < 32; ++lane) n += (uint32_t)__builtin_popcount(w[warp][lane][k]);
      const uint32_t lead = aligned ? ps_sel_ids_lead(out_elem, at, p.bytes) : 0u;
      EXPECT(lead + n <= PS_SEL_IDS_STAGE_SLOTS, "lead %u + %u ids overrun the staging area", lead, n);
      uint32_t incl = 0;
      for (uint32_t lane = 0; lane < 32; ++lane) {
        const uint32_t c = (uint32_t)__builtin_popcount(w[warp][lane][k]);
        incl += c;
        ps_sel_ids_extract(w[warp][lane][k], lane, stage, lead + incl - c);
      }
      EXPECT(n <= 1024, "round of %u ids", n);
      const uint32_t row0 = ps_sel_ids_round_row(tile, warp, k);
      for (uint32_t i = 0; i < n; ++i) EXPECT(stage[lead + i] < 1024, "stage[%u] = %u unwritten", lead + i, stage[lead + i]);
      if (n == 0) continue;
      if (aligned) {
        /* Groups in a shuffled order (lanes run in any order). */
        const uint32_t groups = ps_sel_ids_groups(lead, n, p.bytes);
        std::vector<uint32_t> order(groups);
        for (uint32_t g = 0; g < groups; ++g) order[g] = g;
        std::shuffle(order.begin(), order.end(), r);
        const uint32_t v = 16 / p.bytes;
        for (uint32_t g : order) {
          /* A whole group is one 16-byte store on the device: it must be aligned. */
          if (v * g >= lead && v * g + v <= lead + n)
            EXPECT(reinterpret_cast<uintptr_t>(p.out + (uint64_t)(at + v * g - lead) * p.bytes) % 16 == 0,
                   "group %u of a round at %u (lead %u) is not 16-byte aligned", g, at, lead);
          ps_sel_ids_put_group(p.out, p.bytes, p.id_base, row0, stage, lead, n, at, g);
        }
      } else {
        for (uint32_t i = 0; i < n; ++i)
          ps_sel_store(p.out + (uint64_t)(at + i) * p.bytes, p.bytes, p.id_base + row0 + stage[i], false);
      }
      at += n;
    }
  }
}

/* The grid. The tile counts' exclusive scan (CUB's single-pass scan on the
 * GPU) by a plain loop; then host threads take tickets, as blocks do, each
 * ticket naming a tile of a shuffled order, so tiles are written in any
 * order and concurrently. */
static void write_all(run &p, unsigned nthreads) {
  const uint32_t tiles = ps_sel_ids_tiles(p.rows);
  std::vector<uint32_t> before(tiles);
  {
    static uint32_t w[kWarps][32][kRounds];
    uint32_t warp_count[kWarps], sum = 0;
    for (uint32_t tile = 0; tile < tiles; ++tile) {
      warp_counts(p, tile, w, warp_count);
      before[tile] = sum;
      for (uint32_t i = 0; i < kWarps; ++i) sum += warp_count[i];
    }
  }
  std::vector<uint32_t> order(tiles);
  for (uint32_t t = 0; t < tiles; ++t) order[t] = t;
  std::shuffle(order.begin(), order.end(), rng);
  std::atomic<uint32_t> ticket{0};
  std::vector<std::thread> th;
  const uint32_t seed = (uint32_t)rng(); /* rng is not for the threads */
  for (unsigned t = 0; t < nthreads; ++t)
    th.emplace_back([&, t] {
      std::mt19937 r(seed + t);
      for (;;) {
        const uint32_t k = ticket.fetch_add(1);
        if (k >= tiles) break;
        write_tile(p, order[k], tiles, before[order[k]], r);
      }
    });
  for (auto &t : th) t.join();
}

/* count_ids, tile by tile. */
static uint32_t count_all(const run &p) {
  uint32_t total = 0;
  static uint32_t w[kRounds];
  for (uint32_t tile = 0; tile < ps_sel_ids_tiles(p.rows); ++tile)
    for (uint32_t warp = 0; warp < kWarps; ++warp)
      for (uint32_t lane = 0; lane < 32; ++lane) {
        load_words(p, tile, warp, lane, w);
        for (uint32_t k = 0; k < kRounds; ++k) total += (uint32_t)__builtin_popcount(w[k]);
      }
  return total;
}

static void check(uint64_t rows, double density, uint64_t id_base, uint32_t bytes, bool misalign_bitmap,
                  uint32_t out_shift) {
  const uint64_t nbytes = (rows + 7) / 8;
  /* Exactly the bitmap's bytes (ASan catches any read past them), shifted by
   * one byte for the unaligned case. Bits past rows are set: they must be
   * ignored. */
  std::vector<uint8_t> store((size_t)nbytes + 1);
  uint8_t *bitmap = store.data() + (misalign_bitmap ? 1 : 0);
  std::vector<uint64_t> want;
  std::bernoulli_distribution bit(density);
  for (uint64_t i = 0; i < nbytes * 8; ++i) {
    const bool on = i >= rows || bit(rng);
    if (on) bitmap[i / 8] |= (uint8_t)(1u << (i % 8));
    if (on && i < rows) want.push_back(id_base + i);
  }
  std::vector<uint8_t> outbuf(want.size() * bytes + 64, 0xab);
  run p;
  p.bitmap = bitmap;
  p.bitmap_aligned = !misalign_bitmap && (reinterpret_cast<uintptr_t>(bitmap) % 4) == 0;
  p.rows = rows;
  p.id_base = id_base;
  p.bytes = bytes;
  /* outbuf comes from the heap (16-byte aligned): out_shift bytes past 16
   * moves the first id across the 16-byte groups (and a shift that is no
   * multiple of bytes makes the output unaligned). */
  p.out = outbuf.data() + 16 + out_shift;
  p.total = 0xdeadbeef;
  const uint32_t counted = count_all(p);
  write_all(p, 4);
  EXPECT(counted == want.size(), "rows=%llu density=%g: count_ids %u, expected %zu", (unsigned long long)rows, density,
         counted, want.size());
  EXPECT(p.total == want.size(), "rows=%llu density=%g: total %u, expected %zu", (unsigned long long)rows, density,
         p.total, want.size());
  for (size_t i = 0; i < want.size(); ++i) {
    uint64_t got = 0;
    std::memcpy(&got, p.out + i * bytes, bytes);
    const uint64_t exp = bytes == 4 ? (uint32_t)want[i] : want[i];
    if (got != exp) {
      EXPECT(false, "rows=%llu density=%g base=%llu bytes=%u: id %zu is %llu, expected %llu", (unsigned long long)rows,
             density, (unsigned long long)id_base, bytes, i, (unsigned long long)got, (unsigned long long)exp);
      break;
    }
  }
  /* Nothing outside the ids. */
  const uint8_t *lo = outbuf.data(), *hi = p.out + want.size() * bytes;
  for (const uint8_t *q = lo; q < p.out; ++q) EXPECT(*q == 0xab, "a byte before the ids was written");
  for (const uint8_t *q = hi; q < outbuf.data() + outbuf.size(); ++q) EXPECT(*q == 0xab, "a byte past the ids was written");
}

int main() {
  const char *env = std::getenv("PACKSCAN_SEED");
  const unsigned long long seed = env ? std::strtoull(env, nullptr, 10) : (unsigned long long)std::random_device{}();
  rng.seed(seed);
  std::printf("test=cuda_row_ids seed=%llu\n", seed);

  EXPECT(ps_sel_ids_tiles((uint64_t)1 << 31) * (uint64_t)PS_SEL_IDS_TILE_ROWS <= ((uint64_t)1 << 31),
         "a 2^31-row chunk's tiles");

  const uint64_t T = PS_SEL_IDS_TILE_ROWS;
  const uint64_t sizes[] = {1, 31, 32, 33, 1023, 1024, 1025, 32 * 1024 + 7, T - 1, T, T + 1, 3 * T + 777};
  const double dens[] = {0.0, 1.0, 0.01, 0.5, 0.97};
  for (uint64_t rows : sizes)
    for (double d : dens)
      for (uint32_t bytes : {4u, 8u}) {
        const uint64_t base = bytes == 8 ? ((uint64_t)1 << 32) + ((uint64_t)(rng() % 1000) << 31) : 0;
        check(rows, d, base, bytes, false, bytes * (uint32_t)(rng() % 4));
      }
  /* uint32 ids at the top of their range: the last chunk of 2^32 rows. */
  check(3 * T + 5, 0.5, ((uint64_t)1 << 32) - 3 * T - 5, 4, false, 4);
  /* Unaligned bitmap and output (wrapped caller pointers). */
  for (uint32_t bytes : {4u, 8u}) {
    check(2 * T + 100, 0.3, 64, bytes, true, 0);
    check(2 * T + 100, 0.3, 64, bytes, false, 1);
    check(2 * T + 100, 0.6, 64, bytes, false, bytes + 2);
    check(T / 2 + 3, 0.9, 0, bytes, true, 3);
  }
  /* More than 32 tiles (more than one look-back window on the GPU). */
  check(40 * T + 12345, 0.02, (uint64_t)5 << 33, 8, false, 8);
  for (int i = 0; i < 6; ++i) {
    const uint64_t rows = 1 + rng() % (6 * T);
    const uint32_t bytes = rng() % 2 ? 4 : 8;
    check(rows, (double)(rng() % 1000) / 1000.0, 32 * (rng() % 1000), bytes, false, bytes * (uint32_t)(rng() % 4));
  }

  const int nbad = bad.load();
  std::printf("%s (%d bad)\n", nbad ? "FAIL" : "ok", nbad);
  return nbad != 0;
}
