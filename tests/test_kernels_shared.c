/*
 * kernels_shared: the headers every kernel of both dialects is built on,
 * compiled here as C11, against plain oracles:
 *  - ps_codes.h: ps_stream_word, ps_code_at (aligned and misaligned streams;
 *    both orders of its loads, the second, PS_CODES_LDG, compiled in
 *    kernels_shared_ldg.c), ps_code_in_words and ps_code_of_word at every width 0..64, against a
 *    bit-by-bit reader, on streams whose last word is partial, for rows up to
 *    and past the stream's end (bytes past it read as 0);
 *  - ps_cmpcol.h: ps_ref_diff against the exact 128-bit difference, clamped
 *    to +-2^32, on random and extreme references of both signednesses;
 *  - ps_kleene.h: ps_leaf_truth per row, and random programs (postfix
 *    AND / OR / NOT over random leaf masks, stack up to PS_MAX_STACK) on
 *    ps_kstack against a per-row three-valued evaluation;
 *  - ps_cmpcol.h's aux lookups: ps_in_list's binary search against a linear
 *    scan of random sorted disjoint intervals (empty lists, codes on, inside,
 *    between and around the bounds, 64-bit ones), ps_aux_bit and ps_aux_word
 *    against the words, and past the aux words (0, the fault flag raised);
 *  - ps_cmpcol.h besides: ps_cmp_outcome for every cmp (and an unknown one)
 *    against the comparison itself, NaN included; ps_int_key_sign of
 *    ps_int_key_of against the exact 128-bit values M + code of both
 *    signednesses; ps_code_double on named values of every kind;
 *    ps_fdesc_double (a lossless float column's value through its
 *    descriptor) against the host's decode at every code of ALP and
 *    ordered-bits mappings, and its bounded aux reads;
 *  - ps_range.h: ps_range_bits and ps_rb_max_code_top at every width 0..64,
 *    ps_rb_word_bits (with and without lo_zero), ps_rb_quad4 and
 *    ps_rb_vector_bits at the word-local widths, against a bit-by-bit loop
 *    over random words and ranges (never empty: the backends turn an empty
 *    range into a negated full one); the widths are run-time values here,
 *    so every branch on w is the one the kernels fold;
 *  - ps_codes.h at rows far past 2^32: a row whose bit offset r * w wraps
 *    64 bits reads past the stream (0), never the stream's first words;
 *  - ps_rows.h: the per-row interpreter on a program of RANGE, SET, ISNULL,
 *    OR, AND and NOT over a column with nulls and corrupt codes, against a
 *    three-valued evaluation written out here, with the corrupt slot's
 *    status bit;
 *  - ps_select.h: ps_sel_partial_code / ps_sel_partial_add against sums
 *    written out here, ps_sel_gather_row's outcomes (an id past the column,
 *    a null, a corrupt code, a value).
 * Label host: no backend is involved.
 */
#include <inttypes.h>
#include <stdint.h>
#include <string.h>

#include "harness.h"
#include "internal.h" /* the host's float decode, ps_fdesc_double's oracle */
#include "ps_cmpcol.h"
#include "ps_codes.h"
#include "ps_kleene.h"
#include "ps_range.h"

/* ps_rows.h over host arrays: what a launch passes, as the dialects define it */
typedef struct host_src {
  const ps_program *prog;
  const uint8_t *data[PS_MAX_COLS];
  const uint8_t *validity[PS_MAX_COLS];
  ps_aux_words aux;
  double pow10[PS_MAX_COLS];
} host_src;
typedef host_src ps_rows_src;
#define PS_ROWS_PROG(s) ((s)->prog)
#define PS_ROWS_DATA(s, c) ((s)->data[c])
#define PS_ROWS_ALIGNED(s, c) 0u
#define PS_ROWS_VALIDITY(s, c) ((s)->validity[c])
#define PS_ROWS_AUX(s) ((s)->aux)
#define PS_ROWS_POW10(s, c) (&(s)->pow10[c])
#define PS_ROWS_AUX_FAULT 0x80000000u
#include "ps_rows.h"
#include "ps_select.h"

/* kernels_shared_ldg.c: ps_code_at under PS_CODES_LDG */
uint64_t ps_test_code_at_ldg(const uint8_t *d, uint64_t size, uint32_t aligned, uint32_t w, uint64_t r);

/* Bit b of a stream of `size` bytes; 0 past it. */
static unsigned bit_of(const uint8_t *d, uint64_t size, uint64_t b) {
  return (b >> 3) < size ? (d[b >> 3] >> (b & 7)) & 1u : 0u;
}

static uint64_t oracle_code(const uint8_t *d, uint64_t size, uint32_t w, uint64_t r) {
  uint64_t v = 0;
  for (uint32_t i = 0; i < w; ++i) v |= (uint64_t)bit_of(d, size, r * w + i) << i;
  return v;
}

static void test_codes(void) {
  enum { MAX_BYTES = 64 * 4 * 3 + 8 };
  static uint32_t store[MAX_BYTES / 4 + 4]; /* 4-byte aligned */
  uint8_t *const base = (uint8_t *)store;
  for (int iter = 0; iter < 400; ++iter) {
    const uint32_t w = iter < 65 ? (uint32_t)iter : (uint32_t)th_below(&th.rng, 65);
    /* up to three 32-row words of codes, then a cut anywhere in the last one */
    const uint64_t full = 3ull * w * 4;
    const uint64_t size = full - (full ? th_below(&th.rng, (w ? 4ull * w : 1) + 1) : 0);
    const int misaligned = th_chance(&th.rng, 30);
    uint8_t *d = misaligned ? base + 1 + th_below(&th.rng, 3) : base;
    for (uint64_t i = 0; i < MAX_BYTES - 4; ++i) base[i] = (uint8_t)th_u64(&th.rng);
    th_case("codes w=%u size=%llu misaligned=%d", w, (unsigned long long)size, misaligned);
    for (uint64_t k = 0; k < 3ull * w + 2; ++k) {
      uint32_t want = 0;
      for (uint32_t i = 0; i < 32; ++i) want |= bit_of(d, size, 32 * k + i) << i;
      if (!CHECKF(ps_stream_word(d, size, k, !misaligned) == want, "ps_stream_word k=%llu", (unsigned long long)k))
        return;
    }
    for (uint64_t r = 0; r < 96 + 5; ++r) {
      const uint64_t want = oracle_code(d, size, w, r);
      if (!CHECKF(ps_code_at(d, size, !misaligned, w, r) == want, "ps_code_at w=%u r=%llu", w, (unsigned long long)r))
        return;
      if (!CHECKF(ps_test_code_at_ldg(d, size, !misaligned, w, r) == want, "ps_code_at (PS_CODES_LDG) w=%u r=%llu", w,
                  (unsigned long long)r))
        return;
      /* the unchecked variant, wherever the code's words are whole */
      if (!misaligned && ((r * w + w + 31) / 32) * 4 <= size && ((r * w) / 32 + 3) * 4 <= MAX_BYTES)
        if (!CHECKF(ps_code_in_words((const uint32_t *)d, w, r) == want, "ps_code_in_words w=%u r=%llu", w,
                    (unsigned long long)r))
          return;
    }
    /* code j of 32-row word g from its w words, plus two words of noise */
    for (uint64_t g = 0; g < 3; ++g) {
      uint32_t x[66];
      for (uint32_t k = 0; k < w; ++k) x[k] = ps_stream_word(d, size, g * w + k, !misaligned);
      x[w] = (uint32_t)th_u64(&th.rng);
      x[w + 1] = (uint32_t)th_u64(&th.rng);
      for (uint32_t j = 0; j < 32; ++j)
        if (!CHECKF(ps_code_of_word(x, w, j) == oracle_code(d, size, w, 32 * g + j), "ps_code_of_word w=%u g=%llu j=%u",
                    w, (unsigned long long)g, j))
          return;
    }
  }
}

static void check_ref_diff(uint64_t ma, int sa, uint64_t mb, int sb) {
  __extension__ typedef __int128 i128;
  const i128 va = sa ? (i128)(int64_t)ma : (i128)ma, vb = sb ? (i128)(int64_t)mb : (i128)mb;
  i128 d = vb - va;
  const i128 cap = (i128)1 << 32;
  if (d > cap) d = cap;
  if (d < -cap) d = -cap;
  CHECKF(ps_ref_diff(ma, sa, mb, sb) == (int64_t)d, "ps_ref_diff(%llx %s, %llx %s) = %lld, want %lld",
         (unsigned long long)ma, sa ? "signed" : "unsigned", (unsigned long long)mb, sb ? "signed" : "unsigned",
         (long long)ps_ref_diff(ma, sa, mb, sb), (long long)d);
}

static void test_ref_diff(void) {
  th_case("ps_ref_diff");
  const uint64_t edges[] = {0,
                            1,
                            (uint64_t)-1,
                            0x7fffffffu,
                            0x80000000u,
                            0xffffffffu,
                            0x100000000ull,
                            0x100000001ull,
                            (uint64_t)-0x7fffffffll,
                            (uint64_t)-0x80000000ll,
                            (uint64_t)-0x80000001ll,
                            (uint64_t)-0x100000000ll,
                            (uint64_t)-0x100000001ll,
                            (uint64_t)INT64_MAX,
                            (uint64_t)INT64_MIN};
  const size_t ne = sizeof edges / sizeof edges[0];
  for (size_t i = 0; i < ne; ++i)
    for (size_t j = 0; j < ne; ++j)
      for (int s = 0; s < 4; ++s) check_ref_diff(edges[i], s & 1, edges[j], s >> 1);
  for (int iter = 0; iter < 20000; ++iter) {
    uint64_t ma = th_u64(&th.rng), mb = th_u64(&th.rng);
    if (th_chance(&th.rng, 50))
      mb = ma + (th_u64(&th.rng) >> (th_below(&th.rng, 64))) * (th_chance(&th.rng, 50) ? 1 : (uint64_t)-1);
    check_ref_diff(ma, th_chance(&th.rng, 50), mb, th_chance(&th.rng, 50));
  }
}

static int exact_cmp(uint32_t cmp, double a, double b) {
  switch (cmp) {
    case PS_CMP_EQ:
      return a == b;
    case PS_CMP_NE:
      return a != b;
    case PS_CMP_LT:
      return a < b;
    case PS_CMP_LE:
      return a <= b;
    case PS_CMP_GT:
      return a > b;
    case PS_CMP_GE:
      return a >= b;
    default:
      return 0;
  }
}

static void test_cmp(void) {
  th_case("ps_cmp_outcome");
  const double vals[] = {-1.5, 0.0, 2.0, __builtin_nan("")};
  for (uint32_t cmp = 0; cmp <= PS_CMP_GE + 1; ++cmp)
    for (int i = 0; i < 4; ++i)
      for (int j = 0; j < 4; ++j) {
        const double a = vals[i], b = vals[j];
        CHECKF(ps_cmp_outcome(cmp, a<b, a == b, a> b) == exact_cmp(cmp, a, b), "cmp %u of %g, %g", cmp, a, b);
      }
  th_case("ps_int_key");
  __extension__ typedef __int128 i128;
  const uint64_t edges[] = {0, 1, 0x7fffffffffffffffull, 0x8000000000000000ull, ~0ull, 0xfffffffffffffff0ull};
  for (int iter = 0; iter < 20000; ++iter) {
    uint64_t m[2], c[2];
    int sg[2];
    i128 v[2];
    for (int k = 0; k < 2; ++k) {
      sg[k] = th_chance(&th.rng, 50);
      m[k] = th_chance(&th.rng, 30) ? TH_PICK(&th.rng, edges) : th_u64(&th.rng);
      /* a code that keeps M + code inside the logical type (the core's promise) */
      const i128 mm = sg[k] ? (i128)(int64_t)m[k] : (i128)m[k];
      const uint64_t room = (uint64_t)((sg[k] ? (i128)INT64_MAX : (i128)UINT64_MAX) - mm); /* fits: mm >= -2^63 */
      c[k] = th_chance(&th.rng, 10) ? room : th_below(&th.rng, room + 1);                  /* room + 1 = 0: any code */
      v[k] = mm + (i128)c[k];
    }
    if (th_chance(&th.rng, 10)) { /* the same value on both sides */
      m[1] = m[0], sg[1] = sg[0], c[1] = c[0], v[1] = v[0];
    }
    const int want = v[0] < v[1] ? -1 : v[0] > v[1] ? 1 : 0;
    const int got = ps_int_key_sign(ps_int_key_of(m[0], sg[0], c[0]), ps_int_key_of(m[1], sg[1], c[1]));
    if (!CHECKF(got == want, "ps_int_key_sign(%llx%s + %llu, %llx%s + %llu) = %d, want %d", (unsigned long long)m[0],
                sg[0] ? " signed" : "", (unsigned long long)c[0], (unsigned long long)m[1], sg[1] ? " signed" : "",
                (unsigned long long)c[1], got, want))
      return;
  }
  th_case("ps_code_double");
  const double p2 = 100.0, p0 = 1.0;
  CHECK(ps_code_double(PS_KIND_UNSIGNED, ~0ull, 0, &p0) == 18446744073709551615.0);
  CHECK(ps_code_double(PS_KIND_SIGNED, (uint64_t)-5, 2, &p0) == -3.0);
  CHECK(ps_code_double(PS_KIND_FLOAT64, (uint64_t)-12345, 0, &p2) == -123.45);
  CHECK(ps_code_double(PS_KIND_FLOAT32, 0, 1, &p2) == (double)0.01f);
  CHECK(ps_code_double(PS_KIND_FLOAT64, 0, 1, &p2) == 0.01);
}

/* ps_fdesc_double against the host's decode (core/float_map.c's
 * ps_fmap_decode) at every code of small mappings whose descriptors
 * ps_fmap_desc_write made: ALP float64 and float32 with exceptions (code 0
 * among them: values below the first grid value; -0.0, infinities) and
 * ordered bits of both widths, bit for bit; then a descriptor cut short by
 * the aux words: the fault flag, and no read past them. */
static void test_fdesc(void) {
  th_case("ps_fdesc_double");
  static const ps_float_exception exc64[] = {{0, 0xfff0000000000000ull} /* -inf */,
                                             {1, 0x8000000000000000ull} /* -0.0 */,
                                             {9, 0x3fd3333333333334ull} /* 0.30000000000000004 */,
                                             {13, 0x3fe0000000000001ull},
                                             {30, 0x7ff0000000000000ull} /* +inf */};
  static const ps_float_exception exc32[] = {{0, 0xc7efffffe0000000ull} /* -FLT_MAX */, {7, 0x3fb99999a0000000ull}};
  const ps_fmap maps[] = {
      {PS_FLOAT_MAP_ALP, 2, 1, 2, false, (uint64_t)-3, exc64, 5},
      {PS_FLOAT_MAP_ALP, 3, 3, 1, true, 7, exc32, 2},
      {PS_FLOAT_MAP_ALP, 18, 0, 0, false, (uint64_t)-9007199254740992ll, NULL, 0},
      {PS_FLOAT_MAP_BITS, 0, 0, 0, false, 0x7ff0000000000000ull - 20, NULL, 0},
      {PS_FLOAT_MAP_BITS, 0, 0, 0, true, 0x7f800000u - 20, NULL, 0},
  };
  uint32_t words[64];
  for (size_t m = 0; m < sizeof maps / sizeof maps[0]; m++) {
    const uint64_t n = ps_fmap_desc_words(&maps[m]);
    if (!CHECK(n + 3 <= 64)) return;
    memset(words, 0, sizeof words);
    ps_fmap_desc_write(&maps[m], words + 3); /* not at word 0 */
    const ps_aux_words aux = {words, (ps_u32)(n + 3)};
    for (uint64_t code = 0; code < 40; code++) {
      ps_u32 status = 0;
      const double got = ps_fdesc_double(aux, 3, code, &status, 0x80000000u), want = ps_fmap_decode(&maps[m], code);
      uint64_t gb, wb;
      memcpy(&gb, &got, 8), memcpy(&wb, &want, 8);
      if (!CHECKF(gb == wb && status == 0, "map %zu code %" PRIu64 ": %.17g (0x%016" PRIx64 "), want %.17g (0x%016" PRIx64
                                           "), status 0x%x",
                  m, code, got, gb, want, wb, status))
        return;
    }
    /* the last word cut off: where the decode reads it, 0 and the fault */
    const ps_aux_words cut = {words, (ps_u32)(n + 2)};
    ps_u32 status = 0;
    const uint64_t code = maps[m].map == PS_FLOAT_MAP_ALP && maps[m].n_exc ? maps[m].exc[maps[m].n_exc - 1].code : 0;
    (void)ps_fdesc_double(cut, 3, code, &status, 0x80000000u);
    CHECKF(status == (maps[m].map == PS_FLOAT_MAP_ALP ? 0x80000000u : 0u), /* ALP reads n (word 8) or an entry */
           "map %zu cut short: status 0x%x", m, status);
  }
  ps_u32 status = 0;
  const ps_aux_words none = {words, 2};
  (void)ps_fdesc_double(none, 3, 5, &status, 0x80000000u);
  CHECK(status == 0x80000000u);
}

/* Three-valued per-row values: 0 FALSE, 1 UNKNOWN, 2 TRUE. */
static int row_value(uint32_t t, uint32_t f, int j) { return ((t >> j) & 1u) ? 2 : ((f >> j) & 1u) ? 0 : 1; }

static void test_kleene(void) {
  th_case("ps_leaf_truth");
  for (int iter = 0; iter < 2000; ++iter) {
    const uint32_t valid = (uint32_t)th_u64(&th.rng), bad = (uint32_t)th_u64(&th.rng);
    const uint32_t hits = (uint32_t)th_u64(&th.rng), negate = th_chance(&th.rng, 50) ? 0xffffffffu : 0u;
    uint32_t t, f;
    const uint32_t corrupt = ps_leaf_truth(valid, bad, hits, negate, &t, &f);
    CHECK(corrupt == (valid & bad));
    for (int j = 0; j < 32; ++j) {
      const int v = !((valid >> j) & 1u) || ((bad >> j) & 1u) ? 1 : ((((hits ^ negate) >> j) & 1u) ? 2 : 0);
      if (!CHECKF(row_value(t, f, j) == v, "leaf row %d", j)) return;
    }
  }
  for (int iter = 0; iter < 3000; ++iter) {
    th_case("ps_kstack program %d", iter);
    /* a random postfix program: leaves push, AND / OR pop two, NOT one */
    uint32_t ops[PS_MAX_INSNS], lt[PS_MAX_INSNS], lf[PS_MAX_INSNS];
    int vals[PS_MAX_STACK][32];
    uint32_t n = 0, depth = 0;
    const uint32_t len = 1 + (uint32_t)th_below(&th.rng, PS_MAX_INSNS);
    while (n < PS_MAX_INSNS && (n < len || depth != 1)) {
      const uint32_t left = PS_MAX_INSNS - n;
      int leaf = depth < 2 ? 1 : th_chance(&th.rng, 45);
      if (depth >= PS_MAX_STACK || depth >= left) leaf = 0; /* room to fold back to one */
      if (n >= len) leaf = 0;
      if (leaf) {
        ops[n] = PS_OP_RANGE;
        lt[n] = (uint32_t)th_u64(&th.rng);
        lf[n] = (uint32_t)th_u64(&th.rng) & ~lt[n];
        ++depth;
      } else if (depth >= 2 && !th_chance(&th.rng, 20)) {
        ops[n] = th_chance(&th.rng, 50) ? PS_OP_AND : PS_OP_OR;
        --depth;
      } else {
        ops[n] = PS_OP_NOT;
      }
      ++n;
    }
    if (depth != 1) continue; /* ran out of instructions: draw another */
    ps_kstack k;
    ps_kbelow below;
    ps_kstack_init(&k);
    uint32_t sp = 0;
    for (uint32_t i = 0; i < n; ++i) {
      if (ps_kstack_apply(&k, &below, ops[i])) {
        if (ops[i] == PS_OP_NOT) {
          for (int j = 0; j < 32; ++j) vals[sp - 1][j] = 2 - vals[sp - 1][j];
        } else {
          --sp;
          for (int j = 0; j < 32; ++j) {
            const int a = vals[sp - 1][j], b = vals[sp][j];
            vals[sp - 1][j] = ops[i] == PS_OP_AND ? (a < b ? a : b) : (a > b ? a : b);
          }
        }
        continue;
      }
      for (int j = 0; j < 32; ++j) vals[sp][j] = row_value(lt[i], lf[i], j);
      ++sp;
      ps_kstack_push(&k, &below, lt[i], lf[i]);
    }
    const uint32_t rows = (uint32_t)th_u64(&th.rng);
    const uint32_t got = ps_kstack_result(&k, rows);
    for (int j = 0; j < 32; ++j) {
      const unsigned want = ((rows >> j) & 1u) && vals[0][j] == 2;
      if (!CHECKF(((got >> j) & 1u) == want, "program of %u instructions, row %d", n, j)) return;
      if (!CHECKF(row_value(k.top_t, k.top_f, j) == vals[0][j], "top masks, row %d", j)) return;
    }
  }
}

/* Code j of the 32 codes in x, bit by bit. */
static uint64_t plain_code(const uint32_t *x, uint32_t w, uint32_t j) {
  uint64_t c = 0;
  for (uint32_t t = 0; t < w; ++t) c |= (uint64_t)((x[(j * w + t) / 32] >> ((j * w + t) % 32)) & 1u) << t;
  return c;
}

/* A random range [lo, hi] of w-bit codes, with the edges drawn often: a
 * single code, lo = 0 (the one-sided comparisons), hi = the largest code,
 * and narrow ranges of small codes. */
static void draw_range(uint32_t w, int lo_zero, uint64_t *lo, uint64_t *hi) {
  const uint64_t wm = w == 64 ? ~0ull : ((1ull << w) - 1);
  uint64_t a = th_u64(&th.rng) & wm, b = th_u64(&th.rng) & wm;
  if (th_chance(&th.rng, 25)) b = a;
  if (th_chance(&th.rng, 15)) a = 0;
  if (th_chance(&th.rng, 10)) b = wm;
  if (w > 0 && th_chance(&th.rng, 20)) {
    a = th_below(&th.rng, w < 8 ? (1ull << w) : 16);
    b = a + th_below(&th.rng, 3);
    if (b > wm) b = wm;
  }
  *lo = lo_zero ? 0 : (a < b ? a : b);
  *hi = a < b ? b : a;
}

static void test_range(void) {
  uint32_t x[66];
  for (uint32_t w = 0; w <= 64; ++w) {
    th_case("ps_range_bits w=%u", w);
    for (int iter = 0; iter < 3000; ++iter) {
      for (uint32_t k = 0; k < w + 2; ++k) x[k] = k < w ? (uint32_t)th_u64(&th.rng) : 0u;
      uint64_t lo, hi, want_max = 0;
      draw_range(w, 0, &lo, &hi);
      uint32_t want = 0;
      for (uint32_t j = 0; j < 32; ++j) {
        const uint64_t c = plain_code(x, w, j);
        want |= (uint32_t)(lo <= c && c <= hi) << j;
        want_max = c > want_max ? c : want_max;
      }
      const uint32_t got = ps_range_bits(x, (int)w, lo, hi - lo);
      if (!CHECKF(got == want, "ps_range_bits w=%u lo=%llu hi=%llu: %08x, want %08x", w, (unsigned long long)lo,
                  (unsigned long long)hi, got, want))
        return;
      if (w >= 1 && w <= 32) {
        const uint32_t m = ps_rb_max_code_top(x, (int)w) >> (32 - w);
        if (!CHECKF(m == want_max, "ps_rb_max_code_top w=%u: %u, want %llu", w, m, (unsigned long long)want_max))
          return;
      }
    }
  }
  const int local[] = {1, 2, 4, 8, 16};
  for (int li = 0; li < 5; ++li) {
    const uint32_t w = (uint32_t)local[li];
    const uint64_t wm = (1ull << w) - 1;
    for (int lo_zero = 0; lo_zero < 2; ++lo_zero) {
      th_case("ps_rb_word_bits / ps_rb_vector_bits w=%u lo_zero=%d", w, lo_zero);
      for (int iter = 0; iter < 5000; ++iter) {
        uint64_t lo, hi;
        draw_range(w, lo_zero, &lo, &hi);
        uint32_t L, S;
        ps_rb_word_consts(lo, hi - lo, (int)w, &L, &S);
        for (uint32_t k = 0; k < 4; ++k) x[k] = (uint32_t)th_u64(&th.rng);
        /* one stream word: its 32/w codes */
        uint32_t want = 0;
        for (uint32_t j = 0; j < 32 / w; ++j) {
          const uint64_t c = (x[0] >> (j * w)) & wm;
          want |= (uint32_t)(lo <= c && c <= hi) << j;
        }
        const uint32_t got = ps_rb_word_bits(x[0], L, S, (int)w, lo_zero);
        if (!CHECKF(got == want, "ps_rb_word_bits w=%u x=%08x lo=%llu hi=%llu: %08x, want %08x", w, x[0],
                    (unsigned long long)lo, (unsigned long long)hi, got, want))
          return;
        /* a 16-byte vector: 128/w codes */
        uint32_t vgot[4] = {0, 0, 0, 0}, vwant[4] = {0, 0, 0, 0};
        const uint32_t b = 128 / w;
        for (uint32_t r = 0; r < b; ++r) {
          const uint64_t c = (x[(r * w) / 32] >> ((r * w) % 32)) & wm;
          vwant[r / 32] |= (uint32_t)(lo <= c && c <= hi) << (r % 32);
        }
        ps_rb_vector_bits(x, L, S, (int)w, lo_zero, vgot);
        if (b < 32) vgot[0] &= (1u << b) - 1u;
        for (int j = 0; j < 4; ++j)
          if (!CHECKF(vgot[j] == vwant[j], "ps_rb_vector_bits w=%u lo=%llu hi=%llu word %d: %08x, want %08x", w,
                      (unsigned long long)lo, (unsigned long long)hi, j, vgot[j], vwant[j]))
            return;
        if (w == 4) {
          const uint32_t q = ps_rb_quad4(x[0], x[1], x[2], x[3], L, S, lo_zero);
          if (!CHECKF(q == vwant[0], "ps_rb_quad4 lo=%llu hi=%llu: %08x, want %08x", (unsigned long long)lo,
                      (unsigned long long)hi, q, vwant[0]))
            return;
        }
      }
    }
  }
}

/* ---- ps_cmpcol.h: the aux lookups ---------------------------------------- */

static void test_aux(void) {
  enum { MAX_IV = 40, BASE_MAX = 7 };
  static uint32_t words[BASE_MAX + 4 * MAX_IV];
  for (int iter = 0; iter < 2000; ++iter) {
    const uint32_t base = (uint32_t)th_below(&th.rng, BASE_MAX + 1);
    const uint32_t n = iter < 2 ? (uint32_t)iter : (uint32_t)th_below(&th.rng, MAX_IV + 1);
    /* sorted disjoint intervals: gaps and lengths from 0 (touching, single
     * codes) up, 64-bit codes where the step allows */
    const int wide = th_chance(&th.rng, 30);
    uint64_t first[MAX_IV], last[MAX_IV], at = th_below(&th.rng, 4);
    for (uint32_t i = 0; i < n; ++i) {
      const uint64_t step = wide ? th_u64(&th.rng) >> 8 : th_below(&th.rng, 4);
      first[i] = at + (i ? 1 + step : step);
      last[i] = first[i] + (wide ? th_u64(&th.rng) >> 9 : th_below(&th.rng, 3));
      at = last[i];
    }
    for (uint32_t i = 0; i < base; ++i) words[i] = (uint32_t)th_u64(&th.rng);
    for (uint32_t i = 0; i < n; ++i) {
      words[base + 4 * i] = (uint32_t)first[i];
      words[base + 4 * i + 1] = (uint32_t)(first[i] >> 32);
      words[base + 4 * i + 2] = (uint32_t)last[i];
      words[base + 4 * i + 3] = (uint32_t)(last[i] >> 32);
    }
    ps_aux_words aux;
    aux.words = words;
    aux.count = base + 4 * n;
    th_case("aux base=%u intervals=%u wide=%d", base, n, wide);
    for (int q = 0; q < 64; ++q) {
      uint64_t code = th_u64(&th.rng) >> th_below(&th.rng, 64);
      if (n && th_chance(&th.rng, 70)) { /* near a bound */
        const uint32_t i = (uint32_t)th_below(&th.rng, n);
        code = (th_chance(&th.rng, 50) ? first[i] : last[i]) + (uint64_t)th_below(&th.rng, 3) - 1;
      }
      int want = 0;
      for (uint32_t i = 0; i < n; ++i) want |= first[i] <= code && code <= last[i];
      if (!CHECKF((int)ps_in_list(aux, base, n, code) == want, "ps_in_list code=%llu: want %d",
                  (unsigned long long)code, want))
        return;
    }
    /* bits and words, inside and past the aux words */
    for (int q = 0; q < 64; ++q) {
      const uint64_t k = th_below(&th.rng, 32ull * (aux.count + 2));
      uint32_t status = 0x10u;
      const int inside = (k >> 5) < aux.count;
      const uint32_t bit = ps_aux_bit(aux, k, &status, 0x80000000u);
      if (!CHECKF(bit == (inside ? (words[k >> 5] >> (k & 31)) & 1u : 0u) && status == (inside ? 0x10u : 0x80000010u),
                  "ps_aux_bit k=%llu: %u, status %08x", (unsigned long long)k, bit, status))
        return;
      status = 0;
      const uint64_t j = k >> 5;
      const uint32_t word = ps_aux_word(aux, j, &status, 0x4u);
      if (!CHECKF(word == (inside ? words[j] : 0u) && status == (inside ? 0u : 0x4u), "ps_aux_word k=%llu",
                  (unsigned long long)j))
        return;
    }
  }
}

/* A row whose bit offset r * w wraps 64 bits: its code lies far past any
 * stream (0 here), not in the stream's first word, where r * w mod 2^64
 * points. */
static void test_far_rows(void) {
  static const uint32_t stream[4] = {0xffffffffu, 0xffffffffu, 0xffffffffu, 0xffffffffu};
  const uint8_t *d = (const uint8_t *)stream;
  for (uint32_t w = 2; w <= 64; w *= 2) {
    const uint64_t r = ((uint64_t)1 << 58) * (64 / w); /* r * w = 2^64 */
    const uint64_t rs[3] = {r, r + 1, r + 32};
    for (int i = 0; i < 3; ++i) {
      if (!CHECKF(ps_code_at(d, sizeof stream, 1, w, rs[i]) == 0, "ps_code_at w=%u r=%llu", w,
                  (unsigned long long)rs[i]))
        return;
      if (!CHECKF(ps_test_code_at_ldg(d, sizeof stream, 1, w, rs[i]) == 0, "ps_code_at (PS_CODES_LDG) w=%u r=%llu", w,
                  (unsigned long long)rs[i]))
        return;
    }
  }
}

/* Three-valued: 0 FALSE, 1 UNKNOWN, 2 TRUE. */
static int k_not(int a) { return 2 - a; }
static int k_and(int a, int b) { return a < b ? a : b; }
static int k_or(int a, int b) { return a > b ? a : b; }

static void test_rows_select(void) {
  enum { ROWS = 200 };
  /* slot 0: 5 bits, codes r % 32, code limit 20, every third row null;
   * slot 1: 3 bits, codes r % 8, no validity */
  static uint8_t d0[(ROWS * 5 + 7) / 8], d1[(ROWS * 3 + 7) / 8], v0[(ROWS + 7) / 8];
  memset(d0, 0, sizeof d0);
  memset(d1, 0, sizeof d1);
  memset(v0, 0, sizeof v0);
  for (uint32_t r = 0; r < ROWS; ++r) {
    for (uint32_t i = 0; i < 5; ++i) d0[(r * 5 + i) / 8] |= (uint8_t)((((r % 32) >> i) & 1u) << ((r * 5 + i) % 8));
    for (uint32_t i = 0; i < 3; ++i) d1[(r * 3 + i) / 8] |= (uint8_t)((((r % 8) >> i) & 1u) << ((r * 3 + i) % 8));
    if (r % 3) v0[r / 8] |= (uint8_t)(1u << (r % 8));
  }
  static ps_program prog; /* NOT ((RANGE0 [3, 10] OR SET1 {1, 5}) AND NOT ISNULL0), postfix */
  memset(&prog, 0, sizeof prog);
  prog.n_cols = 2;
  prog.cols[0].width = 5, prog.cols[0].kind = PS_KIND_UNSIGNED, prog.cols[0].flags = PS_COLF_VALIDITY;
  prog.cols[0].code_limit = 20, prog.cols[0].data_bytes = sizeof d0, prog.cols[0].validity_bytes = sizeof v0;
  prog.cols[0].reference = 1000;
  prog.cols[1].width = 3, prog.cols[1].kind = PS_KIND_UNSIGNED, prog.cols[1].code_limit = 7;
  prog.cols[1].data_bytes = sizeof d1;
  prog.n_insns = 6;
  prog.insns[0].op = PS_OP_RANGE, prog.insns[0].col_a = 0, prog.insns[0].lo = 3, prog.insns[0].hi = 10;
  prog.insns[1].op = PS_OP_SET, prog.insns[1].col_a = 1, prog.insns[1].aux_a = 0;
  prog.insns[2].op = PS_OP_OR;
  prog.insns[3].op = PS_OP_ISNULL, prog.insns[3].col_a = 0, prog.insns[3].flags = PS_INSN_NEGATE;
  prog.insns[4].op = PS_OP_AND;
  prog.insns[5].op = PS_OP_NOT;
  static const uint32_t aux[1] = {(1u << 1) | (1u << 5)};
  prog.aux_words = 1;
  host_src src;
  memset(&src, 0, sizeof src);
  src.prog = &prog;
  src.data[0] = d0, src.data[1] = d1, src.validity[0] = v0;
  src.aux.words = aux, src.aux.count = 1;
  for (uint32_t r = 0; r < ROWS; ++r) {
    const int valid = r % 3 != 0, code = (int)(r % 32), bad = valid && code > 20;
    const int range = !valid || bad ? 1 : code >= 3 && code <= 10 ? 2 : 0;
    const int set = (r % 8 == 1 || r % 8 == 5) ? 2 : 0;
    const int want = k_not(k_and(k_or(range, set), valid ? 2 : 0)) == 2;
    uint32_t status = 0;
    const int got = ps_rows_eval(&src, r, &status);
    if (!CHECKF(got == want && status == (bad ? 1u : 0u), "ps_rows_eval row %u: %d status %u, want %d", r, got, status,
                want))
      return;
  }

  /* reduce: the rows below 64 that count (valid), with the corrupt rows */
  ps_sel_partial p = ps_sel_partial_empty(), q = ps_sel_partial_empty();
  uint64_t count = 0, sum = 0, mn = ~(uint64_t)0, mx = 0, bad_row = ~(uint64_t)0;
  for (uint64_t g = 0; g < 2; ++g) {
    const uint32_t rows = ps_sel_reduce_rows(ROWS, g, NULL, 0, v0, 0, &prog.cols[0]);
    for (uint32_t j = 0; j < 32; ++j) {
      const uint64_t r = 32 * g + j;
      if (!CHECKF(((rows >> j) & 1u) == (r % 3 != 0), "ps_sel_reduce_rows row %llu", (unsigned long long)r)) return;
      if (!((rows >> j) & 1u)) continue;
      ps_sel_partial_code(g ? &q : &p, &prog.cols[0], r, ps_col_code_at(d0, &prog.cols[0], 0, r));
      const uint64_t c = r % 32;
      if (c > 20) {
        if (r < bad_row) bad_row = r;
        continue;
      }
      count++, sum += c;
      if (c < mn) mn = c;
      if (c > mx) mx = c;
    }
  }
  p = ps_sel_partial_add(p, q);
  CHECKF(p.count == count && p.sum_lo == sum && p.sum_hi == 0 && p.min == mn && p.max == mx && p.bad_row == bad_row,
         "ps_sel_partial: count %llu sum %llu min %llu max %llu bad %llu", (unsigned long long)p.count,
         (unsigned long long)p.sum_lo, (unsigned long long)p.min, (unsigned long long)p.max,
         (unsigned long long)p.bad_row);

  /* gather */
  const double pow10 = 1;
  for (uint64_t id = 0; id < ROWS + 2; ++id) {
    ps_bool valid = 1;
    uint64_t bits = 99;
    const uint32_t err =
        ps_sel_gather_row(&prog.cols[0], d0, 0, v0, ROWS, PS_SEL_GATHER_INT, &pow10, id, &valid, &bits);
    const uint32_t want = id >= ROWS ? 1u : id % 3 == 0 ? 0u : id % 32 > 20 ? 2u : 0u;
    const int want_valid = want == 0 && id % 3 != 0;
    if (!CHECKF(err == want && valid == want_valid && bits == (want_valid ? 1000 + id % 32 : 0),
                "ps_sel_gather_row id %llu: %u valid %d bits %llu", (unsigned long long)id, err, (int)valid,
                (unsigned long long)bits))
      return;
  }
}

int main(int argc, char **argv) {
  th_init(argc, argv, "kernels_shared");
  test_codes();
  test_ref_diff();
  test_kleene();
  test_cmp();
  test_fdesc();
  test_range();
  test_aux();
  test_far_rows();
  test_rows_select();
  return th_finish();
}
