/* Host check of the CUDA per-word kernel's logic (kernels_cuda/
 * ps_cuda_words.cuh: staging layout, code cursor, leaves, Kleene stack,
 * bitmap and byte-mask stores) against the per-row evaluation of
 * ps_cuda_rows.cuh, on random programs over random columns: widths 0..64,
 * every value kind, nulls, negation, corrupt codes (code_limit below the
 * largest code, PS_COLF_NO_CODES), aux faults, partial last words and tasks,
 * input selections (also in place, selection == bitmap), misaligned streams
 * and outputs. The kernel's warp is emulated: for each task, every lane's
 * evaluated rows are read first, the __any_sync skip is applied, the lanes
 * are evaluated one after another (a leaf's staging does all 32 lanes'
 * shares on the host), then bitmap words, mask shares (the shuffle source
 * lane) and the count. Status words must match bit for bit too.
 *
 * Compiles as CUDA (CTest, no GPU needed) or as plain C++ (for sanitizers:
 * g++ -x c++ -D__host__= -D__device__= -D__forceinline__=inline ...). */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "ps_cuda_rows.cuh"
#include "ps_cuda_words.cuh"

static std::mt19937_64 rng;
static const double kPow10[19] = PS_POW10_TABLE;
static uint64_t rnd(uint64_t n) { return n ? rng() % n : 0; } /* 0..n-1 */
static bool coin(unsigned pct) { return rnd(100) < pct; }

/* A byte buffer whose readable part ends exactly at the end of its heap block
 * (so a sanitizer sees any overrun), starting `shift` bytes into it. */
struct bytes_buf {
  std::vector<uint8_t> mem;
  size_t shift = 0;
  void init(size_t n, size_t sh) {
    mem.assign(n + sh, 0);
    shift = sh;
  }
  uint8_t *ptr() { return mem.data() + shift; }
};

struct test_col {
  bytes_buf data, validity;
};

static const uint32_t kWidths[] = {0, 1, 2, 3, 5, 7, 8, 9, 12, 15, 16, 17, 20, 24, 31, 32, 33, 40, 48, 63, 64};

static uint32_t pick_width() {
  if (coin(50)) return kWidths[rnd(sizeof kWidths / sizeof kWidths[0])];
  return (uint32_t)rnd(65);
}

/* One random chunk: columns, program, aux, selection. */
struct scenario {
  ps_cuda_eval_params p;
  test_col cols[PS_MAX_COLS];
  std::vector<uint32_t> aux;
  bytes_buf sel;
  bool in_place = false;
  bool want_bitmap = true, want_mask = true;
  size_t bitmap_shift = 0, mask_shift = 0;
  uint32_t budget = 2048; /* ps_words_layout_of: 0 forces per-leaf staging */
};

static void make_column(scenario &s, uint32_t c, uint32_t rows) {
  ps_prog_col &col = s.p.prog.cols[c];
  memset(&col, 0, sizeof col);
  col.width = pick_width();
  col.kind = (uint32_t)rnd(4);
  col.scale = col.kind >= PS_KIND_FLOAT64 ? (uint32_t)rnd(19) : 0;
  col.reference = coin(50) ? rnd(1000) - 500 : rng();
  const uint64_t cmax = ps_code_max(col.width);
  col.code_limit = cmax;
  if (coin(35)) col.code_limit = coin(50) ? rnd(cmax < 64 ? cmax + 1 : 64) : cmax - rnd(4) * (cmax > 4);
  if (coin(3)) col.flags |= PS_COLF_NO_CODES;
  const unsigned bad_pct = coin(50) ? 0 : (unsigned)rnd(10);
  const uint64_t data_bytes = ((uint64_t)rows * col.width + 7) / 8;
  const size_t shift = coin(85) ? 0 : 1 + rnd(3);
  s.cols[c].data.init(data_bytes, shift);
  uint8_t *d = s.cols[c].data.ptr();
  for (uint32_t r = 0; r < rows; ++r) {
    uint64_t code = rng() & cmax;
    if (col.code_limit < cmax && !coin(bad_pct)) code = col.code_limit ? rng() % (col.code_limit + 1) : 0;
    if (coin(5)) code = coin(50) ? 0 : col.code_limit;
    for (uint32_t b = 0; b < col.width; ++b) {
      const uint64_t bit = (uint64_t)r * col.width + b;
      if ((code >> b) & 1u) d[bit >> 3] |= (uint8_t)(1u << (bit & 7));
    }
  }
  col.data_bytes = data_bytes;
  s.p.data[c] = data_bytes ? d : (coin(50) ? nullptr : d);
  if (((uintptr_t)d & 3u) == 0) s.p.data_aligned |= 1u << c;
  s.p.pow10[c] = kPow10[col.scale];
  if (coin(50)) {
    col.flags |= PS_COLF_VALIDITY;
    col.validity_bytes = ((uint64_t)rows + 7) / 8;
    s.cols[c].validity.init(col.validity_bytes, coin(80) ? 0 : 1 + rnd(3));
    uint8_t *v = s.cols[c].validity.ptr();
    const unsigned density = coin(20) ? (coin(50) ? 0 : 100) : (unsigned)rnd(101);
    for (uint32_t r = 0; r < rows; ++r)
      if (coin(density)) v[r >> 3] |= (uint8_t)(1u << (r & 7));
    s.p.validity[c] = v;
  }
}

/* A random leaf instruction (its aux data appended to s.aux). */
static void make_leaf(scenario &s, ps_insn &in) {
  const ps_program &prog = s.p.prog;
  memset(&in, 0, sizeof in);
  in.col_a = (uint32_t)rnd(prog.n_cols);
  const ps_prog_col &col = prog.cols[in.col_a];
  const uint64_t cmax = ps_code_max(col.width);
  if (coin(50)) in.flags |= PS_INSN_NEGATE;
  switch (rnd(5)) {
    case 0: { /* RANGE */
      in.op = PS_OP_RANGE;
      auto val = [&]() -> uint64_t {
        switch (rnd(5)) {
          case 0:
            return 0;
          case 1:
            return cmax;
          case 2:
            return cmax + rnd(3);
          case 3:
            return rng();
          default:
            return rng() & cmax;
        }
      };
      in.lo = val();
      in.hi = val();
      if (coin(70) && in.lo > in.hi) std::swap(in.lo, in.hi);
      break;
    }
    case 1: { /* SET: a bitmap of limit+1 bits (shorter, rarely: an aux fault) */
      in.op = PS_OP_SET;
      uint64_t bits = (col.code_limit < 5000 ? col.code_limit : 5000) + 1;
      if (coin(10)) bits = rnd(bits);
      const uint32_t skew = (uint32_t)rnd(32); /* bitmap need not start on a word */
      in.aux_a = (uint32_t)s.aux.size() * 32 + skew;
      const uint64_t words = (skew + bits + 31) / 32;
      for (uint64_t k = 0; k < words; ++k) s.aux.push_back((uint32_t)rng());
      break;
    }
    case 2: { /* INLIST: sorted disjoint intervals */
      in.op = PS_OP_INLIST;
      const uint32_t count = (uint32_t)rnd(6);
      std::vector<uint64_t> pts;
      for (uint32_t k = 0; k < 2 * count; ++k)
        pts.push_back(coin(50) ? rnd(cmax < 100 ? cmax + 1 : 100) : rng() & cmax);
      std::sort(pts.begin(), pts.end());
      in.aux_a = (uint32_t)s.aux.size();
      uint32_t kept = 0;
      uint64_t prev_last = 0;
      for (uint32_t k = 0; k < count; ++k) {
        const uint64_t first = pts[2 * k], last = pts[2 * k + 1];
        if (kept && first <= prev_last) continue; /* keep them disjoint */
        s.aux.push_back((uint32_t)first);
        s.aux.push_back((uint32_t)(first >> 32));
        s.aux.push_back((uint32_t)last);
        s.aux.push_back((uint32_t)(last >> 32));
        prev_last = last;
        ++kept;
      }
      in.lo = kept;
      break;
    }
    case 3:
      in.op = PS_OP_ISNULL;
      break;
    default: { /* CMPCOL */
      in.op = PS_OP_CMPCOL;
      in.flags &= ~PS_INSN_NEGATE;
      in.col_b = (uint32_t)rnd(prog.n_cols);
      const uint32_t mode = (uint32_t)rnd(3);
      in.flags |= PS_INSN_MAKE_CMP(rnd(6), mode);
      if (mode == PS_MODE_RANK) {
        for (int side = 0; side < 2; ++side) {
          const ps_prog_col &cc = prog.cols[side ? in.col_b : in.col_a];
          uint64_t n = (cc.code_limit < 3000 ? cc.code_limit : 3000) + 1;
          if (coin(10)) n = rnd(n);
          (side ? in.aux_b : in.aux_a) = (uint32_t)s.aux.size();
          for (uint64_t k = 0; k < n; ++k) s.aux.push_back((uint32_t)rnd(50));
        }
      }
      break;
    }
  }
}

/* A random postfix program of at most max_leaves leaves. */
static void make_program(scenario &s, uint32_t max_leaves) {
  ps_program &prog = s.p.prog;
  prog.n_insns = 0;
  uint32_t depth = 0, leaves = 0, maxdepth = 0;
  const uint32_t want = 1 + (uint32_t)rnd(max_leaves);
  /* Room is kept for the operators that fold the stack: after any step,
   * n_insns + depth - 1 <= PS_MAX_INSNS. */
  for (;;) {
    const bool room = prog.n_insns + depth + 1 <= PS_MAX_INSNS;
    const bool can_leaf = leaves < want && depth < PS_MAX_STACK && room;
    const bool can_bin = depth >= 2;
    if (!can_leaf && !can_bin) break;
    ps_insn &in = prog.insns[prog.n_insns];
    if (can_leaf && (!can_bin || coin(55))) {
      make_leaf(s, in);
      ++leaves;
      ++depth;
    } else if (room && coin(15)) {
      memset(&in, 0, sizeof in);
      in.op = PS_OP_NOT;
    } else {
      memset(&in, 0, sizeof in);
      in.op = coin(50) ? PS_OP_AND : PS_OP_OR;
      --depth;
    }
    ++prog.n_insns;
    if (depth > maxdepth) maxdepth = depth;
  }
  prog.stack_depth = maxdepth;
}

struct outputs {
  bytes_buf bitmap, mask;
  uint64_t count = 0;
  uint32_t status = 0;
  uint64_t all_tasks = 0;
};

static void prepare_outputs(scenario &s, outputs &o, bool with_sel_copy) {
  const uint32_t rows = s.p.rows;
  const size_t bm_bytes = ((size_t)rows + 7) / 8;
  o.bitmap.init(bm_bytes, s.bitmap_shift);
  o.mask.init(rows, s.mask_shift);
  if (with_sel_copy)
    memcpy(o.bitmap.ptr(), s.sel.ptr(), bm_bytes);
  else
    for (size_t i = 0; i < bm_bytes; ++i) o.bitmap.ptr()[i] = (uint8_t)rng(); /* overwritten */
  for (size_t i = 0; i < rows; ++i) o.mask.ptr()[i] = 0x5a;
  s.p.bitmap = s.want_bitmap ? o.bitmap.ptr() : nullptr;
  s.p.bitmap_aligned = ((uintptr_t)o.bitmap.ptr() & 3u) == 0;
  s.p.mask = s.want_mask ? o.mask.ptr() : nullptr;
  s.p.selection_in = s.sel.mem.empty() ? nullptr : (s.in_place ? o.bitmap.ptr() : s.sel.ptr());
  if (s.in_place) s.p.bitmap = o.bitmap.ptr();
}

/* The per-row kernel's result, serially. */
static void run_rows(scenario &s, outputs &o) {
  prepare_outputs(s, o, s.in_place);
  const uint32_t rows = s.p.rows, words = (rows + 31) / 32;
  for (uint32_t g = 0; g < words; ++g) {
    uint32_t word = 0;
    for (uint32_t j = 0; j < 32; ++j) {
      const uint32_t row = 32 * g + j;
      const bool sel = row < rows && ps_row_selected(s.p, row, &o.status);
      word |= (uint32_t)sel << j;
    }
    for (uint32_t lane = 0; lane < 32; ++lane) {
      ps_store_word(s.p, g, word, lane);
      ps_store_mask(s.p, 32 * g + lane, (word >> lane) & 1u);
    }
    o.count += (uint64_t)__builtin_popcount(word);
  }
}

/* The per-word kernel's result, one emulated warp after another. */
static void run_words(scenario &s, outputs &o) {
  prepare_outputs(s, o, s.in_place);
  const ps_words_layout L = ps_words_layout_of(s.p.prog, s.budget);
  std::vector<uint32_t> area(L.words); /* exact: a sanitizer sees overreads */
  const uint32_t words = (s.p.rows + 31) / 32, tasks = (words + 31) / 32;
  for (uint32_t task = 0; task < tasks; ++task) {
    uint32_t rows[32], word[32], any = 0;
    for (uint32_t lane = 0; lane < 32; ++lane) {
      const uint32_t g = task * 32 + lane;
      rows[lane] = g < words ? ps_word_rows(s.p, g) : 0u;
      any |= rows[lane];
    }
    if (any && L.all) ps_stage_all(s.p, L, task, area.data(), 0);
    for (uint32_t lane = 0; lane < 32; ++lane) {
      word[lane] = any ? ps_eval_word(s.p, L, area.data(), task, lane, rows[lane], &o.status) : 0u;
    }
    if (L.all) ++o.all_tasks;
    for (uint32_t lane = 0; lane < 32; ++lane) {
      const uint32_t g = task * 32 + lane;
      if (s.p.bitmap && g < words) ps_store_bitmap_word(s.p, g, word[lane]);
      o.count += (uint64_t)__builtin_popcount(word[lane]);
    }
    if (s.p.mask)
      for (uint32_t m = 0; m < 8; ++m)
        for (uint32_t lane = 0; lane < 32; ++lane)
          ps_store_mask_share(s.p, task, m, lane, word[ps_mask_src_lane(m, lane)]);
  }
}

static const uint32_t kRows[] = {1, 2, 7, 8, 31, 32, 33, 63, 64, 65, 1000, 1023, 1024, 1025, 2047, 2048, 3000, 4097};

int main(int argc, char **argv) {
  const char *env = std::getenv("PACKSCAN_SEED");
  const unsigned long long seed = env ? std::strtoull(env, nullptr, 10) : (unsigned long long)std::random_device{}();
  const long iters = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 3000;
  rng.seed(seed);
  printf("test=cuda_eval_words seed=%llu iters=%ld\n", seed, iters);
  long bad = 0, corrupt_runs = 0, aux_runs = 0, all_runs = 0;
  for (long it = 0; it < iters; ++it) {
    scenario *sp = new scenario();
    scenario &s = *sp;
    memset(&s.p, 0, sizeof s.p);
    uint32_t rows = coin(70) ? kRows[rnd(sizeof kRows / sizeof kRows[0])] : 1 + (uint32_t)rnd(coin(10) ? 70000 : 5000);
    s.p.rows = rows;
    s.p.prog.n_cols = 1 + (uint32_t)rnd(coin(80) ? 4 : PS_MAX_COLS);
    for (uint32_t c = 0; c < s.p.prog.n_cols; ++c) make_column(s, c, rows);
    make_program(s, coin(80) ? 6 : 30);
    s.p.prog.aux_words = (uint32_t)s.aux.size();
    s.aux.push_back(0); /* never read: aux_words excludes it; keeps data() valid */
    s.p.aux = s.aux.data();
    if (coin(40)) {
      const size_t bytes = ((size_t)rows + 7) / 8;
      s.sel.init(bytes, coin(80) ? 0 : 1 + rnd(3));
      const unsigned density = coin(20) ? 0 : (unsigned)rnd(101);
      for (uint32_t r = 0; r < rows; ++r)
        if (coin(density)) s.sel.ptr()[r >> 3] |= (uint8_t)(1u << (r & 7));
      /* a whole task without selected rows: the warp skips it */
      if (rows > 2048 && coin(50)) memset(s.sel.ptr() + 128, 0, 128);
      s.in_place = coin(40);
    }
    s.want_bitmap = s.in_place || coin(90);
    s.want_mask = coin(60);
    s.bitmap_shift = coin(80) ? 0 : 1 + rnd(3);
    s.mask_shift = coin(70) ? 0 : 1 + rnd(3);
    s.budget = coin(50) ? 2048 : (coin(50) ? 0 : (uint32_t)rnd(5000));

    const uint64_t keep_seed = rng();
    outputs a, b;
    rng.seed(keep_seed);
    run_rows(s, a);
    rng.seed(keep_seed);
    run_words(s, b);
    const size_t bm = ((size_t)rows + 7) / 8;
    bool ok = a.count == b.count && a.status == b.status;
    if (s.p.bitmap && memcmp(a.bitmap.ptr(), b.bitmap.ptr(), bm) != 0) ok = false;
    if (s.p.mask && memcmp(a.mask.ptr(), b.mask.ptr(), rows) != 0) ok = false;
    if (a.status & ~PS_CUDA_FLAG_AUX) ++corrupt_runs;
    if (a.status & PS_CUDA_FLAG_AUX) ++aux_runs;
    if (b.all_tasks) ++all_runs;
    if (!ok && bad++ < 5) {
      printf("MISMATCH it=%ld rows=%u insns=%u cols=%u count %llu/%llu status %08x/%08x sel=%d in_place=%d\n", it, rows,
             s.p.prog.n_insns, s.p.prog.n_cols, (unsigned long long)a.count, (unsigned long long)b.count, a.status,
             b.status, s.p.selection_in != nullptr, (int)s.in_place);
      for (uint32_t i = 0; i < s.p.prog.n_insns; ++i) {
        const ps_insn &in = s.p.prog.insns[i];
        printf("  insn %u op %u flags %x a %u b %u lo %llu hi %llu\n", i, in.op, in.flags, in.col_a, in.col_b,
               (unsigned long long)in.lo, (unsigned long long)in.hi);
      }
      for (uint32_t c = 0; c < s.p.prog.n_cols; ++c) {
        const ps_prog_col &col = s.p.prog.cols[c];
        printf("  col %u w %u kind %u flags %x limit %llu\n", c, col.width, col.kind, col.flags,
               (unsigned long long)col.code_limit);
      }
      for (size_t i = 0; s.p.bitmap && i < bm; ++i)
        if (a.bitmap.ptr()[i] != b.bitmap.ptr()[i]) {
          printf("  first bitmap difference at byte %zu: %02x vs %02x\n", i, a.bitmap.ptr()[i], b.bitmap.ptr()[i]);
          break;
        }
    }
    delete sp;
  }
  printf("%s (%ld of %ld mismatched; %ld runs with corrupt codes, %ld with aux faults, %ld staged per task)\n",
         bad ? "FAIL" : "ok", bad, iters, corrupt_runs, aux_runs, all_runs);
  return bad != 0;
}
