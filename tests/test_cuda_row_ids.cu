/* Host check of the CUDA row-id kernel's arithmetic (kernels_cuda/
 * ps_cuda_select.cuh, used by write_ids / count_ids in select.cu): the tile
 * and round geometry, the bounded and whole-tile bitmap loads, the per-lane
 * extraction into the staging area, the warp's copy-out positions, and the
 * decoupled look-back, run here with host threads standing in for blocks
 * (random delays make tiles publish late, so windows of aggregates only and
 * spinning on unpublished tiles both happen). Compared with a plain loop over
 * the bits on random bitmaps: partial last words and tiles, empty and full
 * selections, uint32 and uint64 ids, id bases past 2^32, unaligned bitmaps
 * and outputs. Runs on the CPU, so CI checks the logic without a GPU. */
#include "ps_cuda_select.cuh"

#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

static std::mt19937_64 rng;
static int bad = 0;

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

/* Random short pauses so that host "blocks" interleave like resident blocks
 * (busy waits and yields: a sleep would cost a timer tick each). */
static void jitter(std::mt19937 &r) {
  const uint32_t k = r() % 16;
  if (k == 0) {
    const auto until = std::chrono::steady_clock::now() + std::chrono::microseconds(r() % 20);
    while (std::chrono::steady_clock::now() < until) {
    }
  } else if (k < 4) {
    std::this_thread::yield();
  }
}

/* The look-back of select.cu's ids_lookback, one warp emulated lane by lane:
 * lane l reads tile - 1 - l; unpublished tiles are read again until every
 * lane has a flag; the window's share is ps_sel_ids_lookback_part. */
static uint32_t lookback(std::vector<std::atomic<uint64_t>> &status, uint32_t tile, uint32_t count,
                         std::mt19937 &r) {
  if (tile == 0) {
    jitter(r);
    status[0].store(ps_sel_ids_status(PS_SEL_IDS_PREFIX, count), std::memory_order_relaxed);
    return 0;
  }
  jitter(r);
  status[tile].store(ps_sel_ids_status(PS_SEL_IDS_AGGREGATE, count), std::memory_order_relaxed);
  uint32_t before = 0;
  int64_t window = (int64_t)tile - 1;
  for (;;) {
    uint64_t s[32];
    for (uint32_t lane = 0; lane < 32; ++lane) {
      const int64_t t = window - (int64_t)lane;
      s[lane] = t >= 0 ? status[t].load(std::memory_order_relaxed) : ps_sel_ids_status(PS_SEL_IDS_PREFIX, 0);
    }
    for (;;) {
      bool any = false;
      for (uint32_t lane = 0; lane < 32; ++lane)
        if (ps_sel_ids_flag(s[lane]) == 0) {
          any = true;
          s[lane] = status[window - (int64_t)lane].load(std::memory_order_relaxed);
        }
      if (!any) break;
      std::this_thread::yield();
    }
    uint32_t pmask = 0;
    for (uint32_t lane = 0; lane < 32; ++lane)
      pmask |= (uint32_t)(ps_sel_ids_flag(s[lane]) == PS_SEL_IDS_PREFIX) << lane;
    for (uint32_t lane = 0; lane < 32; ++lane) before += ps_sel_ids_lookback_part(lane, pmask, ps_sel_ids_value(s[lane]));
    if (pmask) break;
    window -= 32;
  }
  jitter(r);
  status[tile].store(ps_sel_ids_status(PS_SEL_IDS_PREFIX, before + count), std::memory_order_relaxed);
  return before;
}

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

/* One block of write_ids. */
static void write_tile(run &p, uint32_t tile, uint32_t tiles, std::vector<std::atomic<uint64_t>> &status,
                       std::mt19937 &r) {
  static thread_local uint32_t w[kWarps][32][kRounds];
  uint32_t warp_count[kWarps] = {0};
  for (uint32_t warp = 0; warp < kWarps; ++warp)
    for (uint32_t lane = 0; lane < 32; ++lane) {
      load_words(p, tile, warp, lane, w[warp][lane]);
      for (uint32_t k = 0; k < kRounds; ++k) warp_count[warp] += (uint32_t)__builtin_popcount(w[warp][lane][k]);
    }
  uint32_t count = 0;
  for (uint32_t i = 0; i < kWarps; ++i) count += warp_count[i];
  const uint32_t before = lookback(status, tile, count, r);
  if (tile == tiles - 1) p.total = before + count;
  uint32_t warp_before = 0;
  for (uint32_t warp = 0; warp < kWarps; ++warp) {
    uint32_t at = before + warp_before;
    warp_before += warp_count[warp];
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

/* The grid: host threads take tickets, as blocks do. */
static void write_all(run &p, unsigned nthreads) {
  const uint32_t tiles = ps_sel_ids_tiles(p.rows);
  std::vector<std::atomic<uint64_t>> status(tiles);
  for (auto &s : status) s.store(0);
  std::atomic<uint32_t> ticket{0};
  std::vector<std::thread> th;
  for (unsigned t = 0; t < nthreads; ++t)
    th.emplace_back([&, t] {
      std::mt19937 r((uint32_t)rng() + t);
      for (;;) {
        const uint32_t tile = ticket.fetch_add(1);
        if (tile >= tiles) break;
        write_tile(p, tile, tiles, status, r);
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

/* The look-back alone over many small tiles (random counts), more threads
 * than cores so tiles publish out of order. */
static void check_lookback(uint32_t tiles, unsigned nthreads) {
  std::vector<uint32_t> counts(tiles), got(tiles);
  for (auto &c : counts) c = (uint32_t)(rng() % 4 == 0 ? 0 : rng() % 70000);
  std::vector<std::atomic<uint64_t>> status(tiles);
  for (auto &s : status) s.store(0);
  std::atomic<uint32_t> ticket{0};
  std::vector<std::thread> th;
  for (unsigned t = 0; t < nthreads; ++t)
    th.emplace_back([&, t] {
      std::mt19937 r((uint32_t)rng() + 100 + t);
      for (;;) {
        const uint32_t tile = ticket.fetch_add(1);
        if (tile >= tiles) break;
        got[tile] = lookback(status, tile, counts[tile], r);
      }
    });
  for (auto &t : th) t.join();
  uint32_t before = 0;
  for (uint32_t t = 0; t < tiles; ++t) {
    EXPECT(got[t] == before, "look-back of tile %u of %u: %u, expected %u", t, tiles, got[t], before);
    before += counts[t];
  }
}

/* The look-back against statuses already published in a chosen pattern:
 * runs of aggregates longer than a window (32 tiles) before the nearest
 * prefix, a prefix at every lane of the window, only tile 0 a prefix. */
static void check_lookback_patterns() {
  std::mt19937 r(7);
  for (int it = 0; it < 3000; ++it) {
    const uint32_t tile = 1 + (uint32_t)(rng() % 300);
    const uint32_t p_every = it % 3 == 0 ? 0 : 1 + (uint32_t)(rng() % 80); /* 0: only tile 0 */
    std::vector<std::atomic<uint64_t>> status(tile + 1);
    uint32_t incl = 0;
    for (uint32_t t = 0; t < tile; ++t) {
      const uint32_t c = (uint32_t)(rng() % 3 == 0 ? 0 : rng() % 100000);
      incl += c;
      const bool prefix = t == 0 || (p_every && rng() % p_every == 0);
      status[t].store(prefix ? ps_sel_ids_status(PS_SEL_IDS_PREFIX, incl) : ps_sel_ids_status(PS_SEL_IDS_AGGREGATE, c));
    }
    status[tile].store(0);
    const uint32_t got = lookback(status, tile, 5, r);
    EXPECT(got == incl, "look-back pattern %d (tile %u): %u, expected %u", it, tile, got, incl);
    EXPECT(status[tile].load() == ps_sel_ids_status(PS_SEL_IDS_PREFIX, incl + 5), "tile %u's own prefix", tile);
  }
}

int main() {
  const char *env = std::getenv("PACKSCAN_SEED");
  const unsigned long long seed = env ? std::strtoull(env, nullptr, 10) : (unsigned long long)std::random_device{}();
  rng.seed(seed);
  std::printf("test=cuda_row_ids seed=%llu\n", seed);

  /* The look-back part on every pmask shape. */
  for (uint32_t lane = 0; lane < 32; ++lane) {
    EXPECT(ps_sel_ids_lookback_part(lane, 0, 7) == 7, "no prefix: every lane adds");
    for (uint32_t b = 0; b < 32; ++b) {
      const uint32_t pmask = (1u << b) | ((uint32_t)rng() & ~((2u << b) - 1u));
      EXPECT(ps_sel_ids_lookback_part(lane, pmask, 7) == (lane <= b ? 7u : 0u), "lane %u, nearest prefix %u", lane, b);
    }
  }
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
  /* More than 32 tiles: look-back windows move past 32 tiles of aggregates. */
  check(40 * T + 12345, 0.02, (uint64_t)5 << 33, 8, false, 8);
  for (int i = 0; i < 6; ++i) {
    const uint64_t rows = 1 + rng() % (6 * T);
    const uint32_t bytes = rng() % 2 ? 4 : 8;
    check(rows, (double)(rng() % 1000) / 1000.0, 32 * (rng() % 1000), bytes, false, bytes * (uint32_t)(rng() % 4));
  }
  check_lookback_patterns();
  check_lookback(1, 2);
  check_lookback(33, 8);
  check_lookback(5000, 16);
  check_lookback(16384, 8);

  std::printf("%s (%d bad)\n", bad ? "FAIL" : "ok", bad);
  return bad != 0;
}
