/*
 * opencl_set: the SET leaf (a bitmap over dictionary codes in aux: string IN
 * lists, LIKE, string comparisons on unsorted dictionaries) in the OpenCL
 * filter compiled per program shape (kernels_opencl/words.cl). That kernel
 * only runs for chunks of 2^22 rows or more unless the internal option
 * opencl_jit=1, which this test sets (unless PACKSCAN_TEST_OPTIONS says
 * otherwise), so every filter here takes it. On other backends it is one
 * more comparison with the oracle.
 *
 * Every dictionary code width 1..32, 40 and 64 (at the CI size, a sample:
 * sweep); dictionaries that fill the
 * width (no code-limit check) and that do not (every valid code checked);
 * column references M > 0 (bit M + code of the bitmap); nulls holding codes
 * past the dictionary (not corrupt, never an index); row counts around 32,
 * 512 (a CPU work-item's 16-word vector) and 16384 (a CPU work-group), and
 * chunk edges (a second context with 4096-row chunks); IN lists (empty
 * intersection, single, many), NOT IN, LIKE, NOT LIKE; SET under AND / OR /
 * NOT with RANGE, ISNULL and a second SET leaf of another width; corrupt
 * codes (PS_ERR_CORRUPT_DATA) under SET, alone and inside a tree.
 */
#include <stdlib.h>
#include <string.h>

#include "gen.h"

static trun tr;

static void check_free(onode *t, const char *label) {
  tr_check(&tr, t, label);
  on_free(t);
}

/* A random IN list of 0..12 strings (entries, neighbours, strings not in the
 * dictionary). */
static onode *random_in(int col) {
  char bufs[12][64];
  ps_literal list[12];
  size_t count = (size_t)th_below(&th.rng, 13);
  for (size_t i = 0; i < count; i++) list[i] = gen_str_literal(&th.rng, tr.cols[col], bufs[i]);
  return on_in(col, list, count);
}

static onode *random_like(int col, int negate) {
  char pat[128];
  int escape = -1;
  size_t len = gen_like_pattern(&th.rng, tr.cols[col], pat, &escape);
  return on_like(col, pat, len, escape, negate);
}

/* A SET leaf on col: IN, NOT IN, LIKE or NOT LIKE. */
static onode *random_set(int col) {
  switch (th_below(&th.rng, 4)) {
    case 0: return random_in(col);
    case 1: return on_not(random_in(col));
    case 2: return random_like(col, 0);
    default: return random_like(col, 1);
  }
}

static uint64_t pick_rows(void) {
  static const uint64_t rows[] = {1, 31, 32, 33, 511, 512, 513, 1000, 4095, 4097, 16384, 16417, 40000};
  return TH_PICK(&th.rng, rows);
}

/* The checks of one width after its SET leaves and string <; each is a shape
 * of its own (a kernel build on the device, the bulk of this test's time). */
enum { MIX_AND = 1, MIX_OR = 2, MIX_NOT = 4, MIX_TREES = 8, MIX_ALL = 15 };

/* One width: a dictionary column (sometimes filling the width), a FOR column
 * and a second dictionary column for trees; the mixed checks in `mix`. */
static void sweep_width(uint32_t w, unsigned mix) {
  const uint64_t n = pick_rows();
  /* 2^w entries (from M = 0) fill the width: no code can be corrupt. */
  const int fill = w <= 12 && th_chance(&th.rng, 50);
  static const size_t dsizes[] = {1, 2, 5, 33, 100, 300, 1000};
  size_t d = fill ? (size_t)1 << w : TH_PICK(&th.rng, dsizes);
  if (!fill && w < 20 && d > ((size_t)1 << w)) d = (size_t)1 << w;
  static const int nulls[] = {TN_NO_BITMAP, TN_NONE_NULL, TN_FEW, TN_HALF, TN_MOST};
  const int s = tr_add(&tr, tcol_random_dict(&th.rng, n, w, d, 0, TH_PICK(&th.rng, nulls)));
  const int num = tr_add(&tr, tcol_random_for(&th.rng, PS_TYPE_INT32, n, (uint32_t)th_below(&th.rng, 33), TN_FEW));
  const uint32_t w2 = 1 + (uint32_t)th_below(&th.rng, 20);
  const int s2 = tr_add(&tr, tcol_random_dict(&th.rng, n, w2, TH_PICK(&th.rng, dsizes), 0, TN_FEW));
  if (s < 0 || num < 0 || s2 < 0) return;
  char desc[256];
  th_case("w=%u d=%zu n=%llu: %s", w, d, (unsigned long long)n, tcol_describe(tr.cols[s], desc, sizeof desc));
  for (int k = 0; k < 3; k++) check_free(random_set(s), "SET leaf");
  char lit[64];
  const ps_literal entry = gen_str_literal(&th.rng, tr.cols[s], lit);
  check_free(on_cmp(s, PS_LT, entry), "string < on an unsorted dictionary");
  if (mix & MIX_AND) check_free(on_and(random_set(s), gen_leaf(&th.rng, &tr, num, -1)), "SET AND a numeric leaf");
  if (mix & MIX_OR) check_free(on_or(random_set(s), on_isnull(num, 0)), "SET OR IS NULL");
  if (mix & MIX_NOT) check_free(on_not(on_or(random_set(s), random_set(s2))), "NOT (SET OR SET of another width)");
  if (!(mix & MIX_TREES)) return;
  check_free(on_and(on_not(random_set(s2)), on_or(random_set(s), gen_leaf(&th.rng, &tr, num, -1))),
             "NOT SET AND (SET OR numeric)");
  const int cols[] = {s, num, s2};
  if (w % 2 == 0) check_free(gen_tree(&th.rng, &tr, cols, 3, 4, 24), "random tree");
}

/* Filters t expecting PS_ERR_CORRUPT_DATA (the reference backend too). */
static void expect_corrupt(ps_context *ctx, ps_column *const *h, const onode *t, const char *label) {
  const char *be = ps_context_backend(ctx);
  ps_expr *e = NULL;
  ps_status st = on_build(ctx, t, h, &e);
  if (!CHECKF(st == PS_OK, "%s [%s]: building failed: %s", label, be, ps_status_name(st))) return;
  uint64_t count = 4242;
  st = ps_filter_count(ctx, e, &count);
  CHECKF(st == PS_ERR_CORRUPT_DATA, "%s [%s]: ps_filter_count returned %s, expected PS_ERR_CORRUPT_DATA", label, be,
         ps_status_name(st));
  CHECKF(count == 4242, "%s [%s]: count written by a failed filter", label, be);
  ps_expr_destroy(e);
}

/* A valid row whose code is past the dictionary, at rows around the 512-row
 * vector and 16384-row work-group edges, at widths 5, 20 and 33. */
static void corrupt(void) {
  static const uint32_t widths[] = {5, 20, 33};
  static const uint64_t where[] = {0, 31, 511, 512, 16383, 16384, 20000};
  static const char *const abc[] = {"ab", "b", "abc"};
  tstrs l = {0};
  for (int i = 0; i < 3; i++) tstrs_push(&l, abc[i], strlen(abc[i]));
  const uint64_t n = 20001;
  uint64_t *codes = th_malloc(n * sizeof *codes);
  /* CI size: one width a run, in turn (each a build of its own per shape) */
  const size_t only = th.quick ? (size_t)th_below(&th.rng, sizeof widths / sizeof widths[0]) : SIZE_MAX;
  for (size_t wi = 0; wi < sizeof widths / sizeof widths[0]; wi++) {
    if (only != SIZE_MAX && wi != only) continue;
    for (size_t k = 0; k < sizeof where / sizeof where[0]; k++) {
      th_case("corrupt code at row %llu, w=%u", (unsigned long long)where[k], widths[wi]);
      for (uint64_t i = 0; i < n; i++) codes[i] = i % 3;
      codes[where[k]] = 3 + th_below(&th.rng, tcol_width_max(widths[wi]) - 2);
      const int c = tr_add(&tr, tcol_dict(&l, 0, 0, widths[wi] > 32 ? PS_TYPE_UINT64 : PS_TYPE_UINT32, n,
                                          widths[wi], 0, codes, NULL, &th.rng));
      const int other = tr_add(&tr, tcol_random_dict(&th.rng, n, 7, 50, 0, TN_FEW));
      if (c < 0 || other < 0) continue;
      onode *leaf = on_like(c, "%b%", 3, -1, 0);
      onode *tree = on_or(on_like(other, "%a%", 3, -1, 0), on_not(on_like(c, "a%", 2, -1, 0)));
      expect_corrupt(tr.ctx, tr.h, leaf, "corrupt code under LIKE");
      expect_corrupt(tr.ctx, tr.h, tree, "corrupt code under a tree of SETs");
      if (tr.ref) expect_corrupt(tr.ref, tr.hr, leaf, "corrupt code under LIKE");
      on_free(leaf);
      on_free(tree);
      tr_clear(&tr);
    }
  }
  free(codes);
  tstrs_free(&l);
}

/* Every width on one context; a few on the chunked one (each tree shape is
 * a build of its own on the device, the bulk of this test's time). */
/* PACKSCAN_TEST_WIDTHS=a,b,...: only these widths (to rerun a failing
 * width on a slow device; the random cases then differ from a full run's). */
static int width_wanted(uint32_t w) {
  const char *v = getenv("PACKSCAN_TEST_WIDTHS");
  if (!v || !*v) return 1;
  for (const char *p = v; *p;) {
    char *end = NULL;
    unsigned long x = strtoul(p, &end, 10);
    if (end == p) return 0;
    if (x == w) return 1;
    p = *end == ',' ? end + 1 : end;
  }
  return 0;
}

/* CI size (PACKSCAN_TEST_QUICK): the widths at word and byte edges every run,
 * each with its SET leaves and one of the mixed checks in turn (seven widths,
 * so every mixed check runs at two widths or more), the trees at one of
 * them; one of the other widths whole (each run another); on the chunked
 * context two widths, each with one mixed check. Each width's
 * shapes are kernel builds of their own, the bulk of this test's time; the
 * full size runs every width whole. */
static const uint32_t quick_always[] = {1, 7, 8, 31, 32, 40, 64};

static void sweep(int chunked) {
  static const uint32_t some[] = {3, 17, 32, 40};
  const size_t count = chunked ? sizeof some / sizeof some[0] : 34;
  const size_t n_always = sizeof quick_always / sizeof quick_always[0];
  const unsigned turn = (unsigned)th_below(&th.rng, 3);
  const size_t tree_at = 3 + (size_t)th_below(&th.rng, n_always - 3); /* 31, 32, 40 or 64 */
  uint32_t other = 0;
  if (th.quick && !chunked)
    do other = 2 + (uint32_t)th_below(&th.rng, 30); /* 2..31 but 7, 8 and 31 */
    while (other == 7 || other == 8 || other == 31);
  for (size_t i = 0; i < count; i++) {
    const uint32_t w = chunked ? some[i] : i < 32 ? (uint32_t)i + 1 : i == 32 ? 40 : 64;
    if (!width_wanted(w)) continue;
    const unsigned trees = !chunked && (w % 3 == 0 || w >= 31) ? MIX_TREES : 0;
    unsigned mix = MIX_AND | MIX_OR | MIX_NOT | trees;
    if (th.quick && chunked) {
      if (w != 17 && w != 40) continue;
      mix = 1u << ((i + turn) % 3); /* the leaves across chunk edges, one mixed check each */
    } else if (th.quick && w != other) {
      size_t a = 0;
      while (a < n_always && quick_always[a] != w) a++;
      if (a == n_always) continue;
      mix = (1u << ((a + turn) % 3)) | (a == tree_at ? trees : 0);
    }
    sweep_width(w, mix);
    tr_clear(&tr);
  }
}

int main(int argc, char **argv) {
  th_init(argc, argv, "opencl_set");
  th_test_options("opencl_jit=1"); /* every filter on the per-shape kernels */
  for (int pass = 0; pass < 2; pass++) {
    /* pass 1: 4096-row chunks, so trees cross chunk edges */
    const uint64_t chunk = pass ? 4096 : 0;
    ps_context *ctx = th_context(chunk);
    ps_context *r = th_is_reference() ? NULL : th_reference_context(chunk);
    tr_init(&tr, ctx, r);
    sweep(pass);
    if (pass == 0) corrupt();
    ps_context_destroy(r);
    ps_context_destroy(ctx);
  }
  return th_finish();
}
