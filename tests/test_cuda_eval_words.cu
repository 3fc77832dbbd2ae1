/* Host check of the CUDA per-word kernel's logic (the shared evaluator
 * kernels_shared/ps_where.h, generic, with kernels_cuda/ps_cuda_words.cuh's
 * buffers, rows, bitmap and byte-mask stores) against the per-row evaluation of
 * ps_cuda_rows.cuh, on random programs over random columns: widths 0..64,
 * every value kind, nulls, negation, corrupt codes (code_limit below the
 * largest code, PS_COLF_NO_CODES), aux faults, partial last words and tasks,
 * input selections (also in place, selection == bitmap), misaligned streams
 * and outputs. The kernel's warp is emulated: for each task, every lane's
 * evaluated rows are read first, the lanes are evaluated one after another,
 * then bitmap words, mask shares (the shuffle source lane) and the count.
 * Status words must match bit for bit too.
 *
 * Besides the random programs, sweeps cover every width with the
 * width-templated paths: RANGE at widths 0..64 with and without a code
 * limit, and CMPCOL in PS_MODE_INT for every pair of widths 0..33 and every
 * operator, on columns whose references put Mb - Ma at and around the
 * 32-bit variant's edges (widths <= 31, no wrap), signed
 * and unsigned kinds, negative references; the run fails if the 32-bit
 * variant was never taken. And the launch's grid (ps_cw_grid_blocks): its
 * waves and limits, and that the kernel's grid-stride loop over it visits
 * every task once.
 *
 * Compiles as CUDA (CTest, no GPU needed) or as plain C++ (for sanitizers:
 * gcc -c -fsanitize=address,undefined tests/host_check.c; g++ -std=c++17
 * -fsanitize=address,undefined -I kernels_cuda -I core -I tests
 * -I /usr/local/cuda/include -x c++ tests/test_cuda_eval_words.cu -x none
 * host_check.o; the CUDA headers give __host__ and friends their host
 * meaning). */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <vector>

#include "host_check.h"
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
};

/* References that put Mb - Ma at and around the edges of the 32-bit CMPCOL
 * (|Mb - Ma| near 2^31) and of the key types. */
static uint64_t edge_reference() {
  static const int64_t kEdges[] = {0,
                                   7,
                                   -1,
                                   100,
                                   -100,
                                   (int64_t)1 << 31,
                                   -((int64_t)1 << 31),
                                   ((int64_t)1 << 31) - 1,
                                   -(((int64_t)1 << 31) - 1),
                                   (int64_t)1 << 32,
                                   -((int64_t)1 << 32),
                                   (int64_t)1 << 30,
                                   -((int64_t)1 << 30),
                                   INT64_MIN,
                                   INT64_MAX - ((int64_t)1 << 31),
                                   (int64_t)(UINT64_MAX - ((uint64_t)1 << 31))};
  const int64_t base = kEdges[rnd(sizeof kEdges / sizeof kEdges[0])];
  return (uint64_t)base + (uint64_t)(coin(50) ? 0 : (int64_t)rnd(7) - 3);
}

/* A column the core could have built: the code limit keeps M + code inside
 * the key type (ps_no_wrap), sometimes lower (a dictionary's). */
static void make_sound_limits(ps_prog_col &col) {
  const uint64_t cmax = ps_w_code_max(col.width);
  uint64_t lim = cmax;
  if (col.kind == PS_KIND_SIGNED) {
    const int64_t m = (int64_t)col.reference;
    if (m >= 0 && (uint64_t)(INT64_MAX - m) < lim) lim = (uint64_t)(INT64_MAX - m);
  } else if (~(uint64_t)0 - col.reference < lim) {
    lim = ~(uint64_t)0 - col.reference;
  }
  if (coin(20) && lim > 0) lim = coin(50) ? rnd(lim) : lim - rnd(3) * (lim > 3);
  col.code_limit = lim;
}

static void fill_column(scenario &s, uint32_t c, uint32_t rows);

static void make_column(scenario &s, uint32_t c, uint32_t rows) {
  ps_prog_col &col = s.p.prog.cols[c];
  memset(&col, 0, sizeof col);
  col.width = pick_width();
  col.kind = (uint32_t)rnd(4);
  col.scale = col.kind >= PS_KIND_FLOAT64 ? (uint32_t)rnd(19) : 0;
  col.reference = coin(50) ? rnd(1000) - 500 : rng();
  const uint64_t cmax = ps_w_code_max(col.width);
  col.code_limit = cmax;
  if (coin(35)) col.code_limit = coin(50) ? rnd(cmax < 64 ? cmax + 1 : 64) : cmax - rnd(4) * (cmax > 4);
  if (coin(40)) { /* as the core builds them: the 32-bit CMPCOL applies up to 31 bits */
    if (coin(60)) col.width = (uint32_t)rnd(33);
    col.reference = coin(60) ? edge_reference() : (uint64_t)(rnd(2000) - 1000);
    make_sound_limits(col);
  }
  fill_column(s, c, rows);
}

/* The packed codes, validity and pointers of column c from its metadata. */
static void fill_column(scenario &s, uint32_t c, uint32_t rows) {
  ps_prog_col &col = s.p.prog.cols[c];
  const uint64_t cmax = ps_w_code_max(col.width);
  col.flags &= ~(PS_COLF_VALIDITY | PS_COLF_NO_CODES); /* may be called again for a column */
  col.validity_bytes = 0;
  s.p.validity[c] = nullptr;
  s.p.data_aligned &= ~(1u << c);
  s.p.validity_aligned &= ~(1u << c);
  if (coin(3)) col.flags |= PS_COLF_NO_CODES;
  const unsigned bad_pct = coin(50) ? 0 : (unsigned)rnd(10);
  const uint64_t data_bytes = ((uint64_t)rows * col.width + 7) / 8;
  const size_t shift = coin(85) ? 0 : 1 + rnd(3);
  s.cols[c].data.init(data_bytes, shift);
  uint8_t *d = s.cols[c].data.ptr();
  for (uint32_t r = 0; r < rows; ++r) {
    uint64_t code = rng() & cmax;
    if (col.code_limit < cmax && !coin(bad_pct)) code = col.code_limit ? rng() % (col.code_limit + 1) : 0;
    if (coin(8)) { /* the extremes: code differences of +-(2^31 - 1) at 31 bits */
      const uint64_t pick = rnd(3);
      code = pick == 0 ? 0 : (pick == 1 ? col.code_limit & cmax : cmax);
      if (code > col.code_limit && !coin(bad_pct)) code = col.code_limit & cmax;
    }
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
    if (((uintptr_t)v & 3u) == 0) s.p.validity_aligned |= 1u << c;
  }
}

/* A range in the canonical form lowering writes (core/ps_program.h), the only
 * one the kernels take: lo <= hi <= code_limit; an empty one is the full
 * range negated. */
static void canonical_range(ps_insn &in, uint64_t limit) {
  if (in.hi > limit) in.hi = limit;
  if (in.lo > in.hi) {
    in.lo = 0;
    in.hi = limit;
    in.flags ^= PS_INSN_NEGATE;
  }
}

/* A random leaf instruction (its aux data appended to s.aux). */
static void make_leaf(scenario &s, ps_insn &in) {
  const ps_program &prog = s.p.prog;
  memset(&in, 0, sizeof in);
  in.col_a = (uint32_t)rnd(prog.n_cols);
  const ps_prog_col &col = prog.cols[in.col_a];
  const uint64_t cmax = ps_w_code_max(col.width);
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
      canonical_range(in, col.code_limit);
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
  long cmp32 = 0;
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

/* Whether CMPCOL leaf `in` takes ps_where.h's 32-bit compare. */
static bool takes_cmp32(const ps_program &prog, const ps_insn &in) {
  if (in.op != PS_OP_CMPCOL || PS_INSN_MODE(in.flags) != PS_MODE_INT) return false;
  const ps_prog_col &a = prog.cols[in.col_a], &b = prog.cols[in.col_b];
  return a.width <= 31 && b.width <= 31 && ps_w_no_wrap(&a) && ps_w_no_wrap(&b);
}

/* The per-word kernel's result, one emulated warp after another: every
 * lane's word through kernels_shared/ps_where.h with the kernel's
 * parameters (ps_cuda_where_params_of), then bitmap words, mask shares (the
 * shuffle source lane) and the count, as ps_cuda_where.cuh's body. */
static void run_words(scenario &s, outputs &o) {
  prepare_outputs(s, o, s.in_place);
  const ps_cuda_where_params w = ps_cuda_where_params_of(s.p);
  for (uint32_t i = 0; i < s.p.prog.n_insns; ++i) o.cmp32 += takes_cmp32(s.p.prog, s.p.prog.insns[i]);
  const uint32_t words = (s.p.rows + 31) / 32, tasks = (words + 31) / 32;
  TH_EXPECT(w.task_begin == 0 && w.task_end == tasks, "the launch's tasks [%u, %u) of %u", w.task_begin, w.task_end, tasks);
  ps_w_status st = {0u, 0u};
  for (uint32_t task = w.task_begin; task < w.task_end; ++task) {
    uint32_t word[32];
    for (uint32_t lane = 0; lane < 32; ++lane) {
      const uint32_t g = task * 32 + lane;
      const uint32_t rows = g < words ? ps_cw_word_rows(w, g) : 0u;
      word[lane] = rows ? ps_where_word(&w.prog, &w.bufs, g, rows, 0, 0, &st) : 0u;
    }
    for (uint32_t lane = 0; lane < 32; ++lane) {
      const uint32_t g = task * 32 + lane;
      if (w.bitmap && g < words) ps_cw_store_bitmap_word(w, g, word[lane]);
      o.count += (uint64_t)__builtin_popcount(word[lane]);
    }
    if (w.mask)
      for (uint32_t m = 0; m < 8; ++m)
        for (uint32_t lane = 0; lane < 32; ++lane)
          ps_cw_store_mask_share(w, task, m, lane, word[ps_cw_mask_src_lane(m, lane)]);
  }
  o.status |= st.slots;
}

struct tally {
  long bad = 0, runs = 0, corrupt_runs = 0, aux_runs = 0, cmp32_leaves = 0;
};

/* Runs both evaluations of s and compares everything; prints the first few
 * mismatches. `what` names the phase. */
static bool check_scenario(scenario &s, tally &t, const char *what, long it) {
  const uint32_t rows = s.p.rows;
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
  ++t.runs;
  if (a.status & ~PS_CUDA_FLAG_AUX) ++t.corrupt_runs;
  if (a.status & PS_CUDA_FLAG_AUX) ++t.aux_runs;
  t.cmp32_leaves += b.cmp32;
  if (!ok && t.bad++ < 5) {
    printf("MISMATCH %s it=%ld rows=%u insns=%u cols=%u count %llu/%llu status %08x/%08x sel=%d in_place=%d\n", what, it,
           rows, s.p.prog.n_insns, s.p.prog.n_cols, (unsigned long long)a.count, (unsigned long long)b.count, a.status,
           b.status, s.p.selection_in != nullptr, (int)s.in_place);
    for (uint32_t i = 0; i < s.p.prog.n_insns; ++i) {
      const ps_insn &in = s.p.prog.insns[i];
      printf("  insn %u op %u flags %x a %u b %u lo %llu hi %llu\n", i, in.op, in.flags, in.col_a, in.col_b,
             (unsigned long long)in.lo, (unsigned long long)in.hi);
    }
    for (uint32_t c = 0; c < s.p.prog.n_cols; ++c) {
      const ps_prog_col &col = s.p.prog.cols[c];
      printf("  col %u w %u kind %u flags %x M %lld limit %llu\n", c, col.width, col.kind, col.flags,
             (long long)col.reference, (unsigned long long)col.code_limit);
    }
    for (size_t i = 0; s.p.bitmap && i < bm; ++i)
      if (a.bitmap.ptr()[i] != b.bitmap.ptr()[i]) {
        printf("  first bitmap difference at byte %zu: %02x vs %02x\n", i, a.bitmap.ptr()[i], b.bitmap.ptr()[i]);
        break;
      }
  }
  return ok;
}

/* A scenario with the given columns' widths (the rest random) and a
 * one-leaf program built by `leaf`. */
template <typename Leaf>
static void sweep_one(tally &t, const char *what, long it, uint32_t rows, const uint32_t *widths, uint32_t ncols,
                      Leaf leaf) {
  scenario *sp = new scenario();
  scenario &s = *sp;
  memset(&s.p, 0, sizeof s.p);
  s.p.rows = rows;
  s.p.prog.n_cols = ncols;
  for (uint32_t c = 0; c < ncols; ++c) {
    ps_prog_col &col = s.p.prog.cols[c];
    memset(&col, 0, sizeof col);
    col.width = widths[c];
    col.kind = coin(50) ? PS_KIND_SIGNED : PS_KIND_UNSIGNED;
    col.reference = coin(70) ? edge_reference() : (uint64_t)(rnd(2000) - 1000);
    make_sound_limits(col);
    if (coin(10)) col.code_limit = ps_w_code_max(col.width); /* may wrap: the 64-bit path */
    fill_column(s, c, rows);
  }
  s.p.prog.n_insns = 1;
  s.p.prog.stack_depth = 1;
  leaf(s.p.prog.insns[0], s);
  s.p.prog.aux_words = (uint32_t)s.aux.size();
  s.aux.push_back(0);
  s.p.aux = s.aux.data();
  s.want_bitmap = true;
  s.want_mask = coin(20);
  check_scenario(s, t, what, it);
  delete sp;
}
static const uint32_t kRows[] = {1, 2, 7, 8, 31, 32, 33, 63, 64, 65, 1000, 1023, 1024, 1025, 2047, 2048, 3000, 4097};

int main(int argc, char **argv) {
  rng.seed(th_host_init("cuda_eval_words"));
  const long iters = argc > 1 ? std::strtol(argv[1], nullptr, 10) : 3000;
  printf("iters=%ld\n", iters);
  tally t;
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
    check_scenario(s, t, "random", it);
    delete sp;
  }

  /* RANGE at every width, with and without a code limit below the largest
   * code, every kind of bound (sweeps scale with iters / 3000). */
  const long reps = iters / 1500 + 1;
  for (long r = 0; r < reps; ++r)
    for (uint32_t w = 0; w <= 64; ++w) {
      const uint32_t widths[1] = {w};
      const uint32_t rows = coin(50) ? 1024 * (1 + (uint32_t)rnd(3)) : 1 + (uint32_t)rnd(3000);
      sweep_one(t, "range-sweep", (long)w, rows, widths, 1, [&](ps_insn &in, scenario &s) {
        memset(&in, 0, sizeof in);
        in.op = PS_OP_RANGE;
        if (coin(30)) in.flags |= PS_INSN_NEGATE;
        const uint64_t cmax = ps_w_code_max(w);
        if (coin(50)) s.p.prog.cols[0].code_limit = cmax - (cmax ? rnd(cmax < 8 ? cmax : 8) : 0);
        in.lo = coin(30) ? 0 : rng() & cmax;
        in.hi = coin(30) ? cmax : rng() & cmax;
        if (coin(80) && in.lo > in.hi) std::swap(in.lo, in.hi);
        canonical_range(in, s.p.prog.cols[0].code_limit);
        /* the staged codes must agree with the new limit */
        fill_column(s, 0, s.p.rows);
      });
    }

  /* CMPCOL in PS_MODE_INT, every pair of widths 0..33 and every operator. */
  for (uint32_t wa = 0; wa <= 33; ++wa)
    for (uint32_t wb = 0; wb <= 33; ++wb)
      for (uint32_t cmp = 0; cmp < 6; ++cmp) {
        const uint32_t widths[2] = {wa, wb};
        const uint32_t rows = coin(50) ? 1024 : 1 + (uint32_t)rnd(2100);
        sweep_one(t, "cmpcol-sweep", (long)(wa * 100 + wb), rows, widths, 2, [&](ps_insn &in, scenario &) {
          memset(&in, 0, sizeof in);
          in.op = PS_OP_CMPCOL;
          const bool swap = coin(20); /* a column against itself, or b first */
          in.col_a = swap ? 1 : 0;
          in.col_b = coin(10) ? in.col_a : (swap ? 0 : 1);
          in.flags = PS_INSN_MAKE_CMP(cmp, PS_MODE_INT);
        });
      }

  /* The launch's grid (ps_cw_grid_blocks): waves of resident blocks, at
   * most a block per 4 tasks, at least one; and the kernel's grid-stride
   * loop over it visits every task of [begin, end) once. */
  {
    const uint32_t per = PS_CUDA_WHERE_BLOCK / 32;
    TH_EXPECT(ps_cw_grid_blocks(1u << 20, 100, 0) == 100 * PS_CUDA_WHERE_WAVES, "default grid %u",
              ps_cw_grid_blocks(1u << 20, 100, 0));
    TH_EXPECT(ps_cw_grid_blocks(1u << 20, 100, 1) == 100 && ps_cw_grid_blocks(1u << 20, 100, 64) == 6400,
              "grids of 1 and 64 waves: %u, %u", ps_cw_grid_blocks(1u << 20, 100, 1), ps_cw_grid_blocks(1u << 20, 100, 64));
    TH_EXPECT(ps_cw_grid_blocks(9, 100, 64) == 3 && ps_cw_grid_blocks(1, 0, 0) == 1 && ps_cw_grid_blocks(0, 5, 2) == 1,
              "small grids: %u %u %u", ps_cw_grid_blocks(9, 100, 64), ps_cw_grid_blocks(1, 0, 0), ps_cw_grid_blocks(0, 5, 2));
    for (int i = 0; i < 200; ++i) {
      const uint32_t begin = (uint32_t)rnd(50), end = begin + 1 + (uint32_t)rnd(coin(50) ? 40 : 3000);
      const uint32_t blocks = ps_cw_grid_blocks(end - begin, (uint32_t)rnd(20), (uint32_t)rnd(65));
      std::vector<uint32_t> seen(end, 0);
      for (uint32_t b = 0; b < blocks; ++b)
        for (uint32_t warp = 0; warp < per; ++warp)
          for (uint32_t task = begin + b * per + warp; task < end; task += blocks * per) ++seen[task];
      uint32_t once = 0;
      for (uint32_t task = begin; task < end; ++task) once += seen[task] == 1;
      TH_EXPECT(once == end - begin, "grid of %u blocks over tasks [%u, %u): %u visited once", blocks, begin, end, once);
    }
  }

  printf("%ld runs: %ld with corrupt codes, %ld with aux faults, %ld 32-bit CMPCOL leaves\n", t.runs, t.corrupt_runs,
         t.aux_runs, t.cmp32_leaves);
  TH_EXPECT(t.bad == 0, "%ld of %ld runs mismatched", t.bad, t.runs);
  TH_EXPECT(t.cmp32_leaves > 0, "the 32-bit CMPCOL variant was never taken");
  return th_host_finish();
}
