/*
 * Per-word evaluation of the flat program (core/ps_program.h, binding
 * semantics): one thread produces one 32-row result word g (rows
 * [32g, 32g+32), row 32g+j at bit j), every instruction yields two 32-bit
 * masks (is_true, is_false) for those rows, and the stack holds such mask
 * pairs (kernels_shared/ps_kleene.h, shared with kernels_opencl/filter.cl).
 * A row in neither mask is UNKNOWN.
 *
 * Codes reach a thread through a per-warp staging area in shared memory: a
 * warp works on 32 consecutive result words (a "task", 1024 rows), whose 32
 * codes per word are exactly words [g*w, g*w + w) of a column's packed stream
 * (design.md: 32 rows always occupy w 32-bit words), so the task's codes are
 * the 32*w consecutive words from task*32*w. Lane t's w words are stored at
 * t*S (ps_stage_stride: S = w, or w + 4 at multiples of 8, w | 1 above 32
 * bits), so that the lanes reading their k-th word, or k-th 8- or 16-byte
 * vector (ps_stage_vec), hit different banks; the warp copies them with
 * cp.async of that vector size (coalesced: each copy instruction reads 128,
 * 256 or 512 contiguous bytes). At widths 1..32 a lane loads its words into
 * registers with vector loads and extracts codes with constant shifts (a
 * switch on the width picks the instantiation: RANGE through kernels_shared/ps_range.h,
 * CMPCOL of two <= 31-bit columns in 32-bit arithmetic, 8 codes at a time);
 * elsewhere (SET, INLIST, wide columns, the double and rank compares) it
 * walks its words with a funnel-shift cursor, one code per step.
 * When the program's columns fit the budget (ps_words_layout), every column
 * of the task is staged at once (one memory round trip per task, no
 * registers held by the copies), and when two such buffers fit, the next
 * task's copies are issued before the current task is evaluated (eval.cu);
 * otherwise each leaf stages its column(s) when it runs.
 *
 * Everything here is __host__ __device__ except the warp-wide wrappers, whose
 * host versions do all 32 lanes' shares in a loop, so the same code is
 * checked on the CPU against the per-row evaluation of ps_cuda_rows.cuh
 * (tests/test_cuda_eval_words.cu). The kernel itself is in eval.cu.
 *
 * Semantics kept from the per-row kernel, exactly:
 *  - rows outside the input selection (and past the chunk) are not
 *    evaluated: they read nothing that can raise a status bit;
 *  - a valid row whose code is corrupt (PS_COLF_NO_CODES, or code >
 *    code_limit) raises its slot's bit and is UNKNOWN to that leaf; its code
 *    never indexes aux memory;
 *  - CMPCOL checks b's code only where a is valid and sound;
 *  - an aux index past aux_words raises PS_CUDA_FLAG_AUX and reads 0.
 */
#ifndef PS_CUDA_WORDS_CUH
#define PS_CUDA_WORDS_CUH

#include <stdint.h>

#ifdef __CUDACC__
#include <cuda_pipeline_primitives.h>
#endif

#include "../kernels_shared/ps_cmpcol.h"
#include "../kernels_shared/ps_kleene.h"
#include "ps_cuda_kernels.h"
#include "ps_cuda_rows.cuh"
#include "../kernels_shared/ps_range.h"

/* Rows per task: one warp, 32 result words. */
#define PS_WORDS_TASK_ROWS 1024u

/* ---- small helpers -------------------------------------------------------- */

/* Bits [s, s+32) of the 64-bit value hi:lo (s in 0..31). */
PS_HD uint32_t ps_funnel(uint32_t lo, uint32_t hi, uint32_t s) {
#ifdef __CUDA_ARCH__
  return __funnelshift_r(lo, hi, s);
#else
  return (uint32_t)((((uint64_t)hi << 32) | lo) >> (s & 31u));
#endif
}

PS_HD uint32_t ps_umulhi(uint32_t a, uint32_t b) {
#ifdef __CUDA_ARCH__
  return __umulhi(a, b);
#else
  return (uint32_t)(((uint64_t)a * b) >> 32);
#endif
}

/* Largest w-bit code. */
PS_HD uint64_t ps_code_max(uint32_t w) { return ps_width_mask(w); }

/* Staged words per lane of a column of width w (0: nothing to stage), and
 * the vector, in words, its words are copied (cp.async) and read (shared
 * loads) with. Lane t's words of a column start at t*S. A warp reading one
 * vector per lane at once hits no bank twice when the stride in vectors is
 * odd: odd w: S = w, 32-bit vectors; w = 2 mod 4: S = w (S/2 is odd), 64-bit;
 * w = 4 mod 8: S = w, 128-bit; w = 0 mod 8: S = w + 4 (S/4 odd), 128-bit.
 * Above 32 bits (the run-time cursor's widths, read a word at a time):
 * S = w | 1, 32-bit. With S = w the staged copy is the stream's words in
 * order (a task's 32*w words are the lanes' w words one after another). */
PS_HD uint32_t ps_stage_vec(uint32_t w) {
  if (w == 0 || w > 32 || (w & 1u)) return 1u;
  return (w & 2u) ? 2u : 4u;
}

PS_HD uint32_t ps_stage_stride(uint32_t w) {
  if (w > 32) return w | 1u;
  return (w & 7u) == 0 && w ? w + 4u : w;
}

/* Words after a warp's last staged region that a cursor may read (and never
 * use): lane 31's cursor reads up to word w + 2 of its w (ps_cursor). */
#define PS_STAGE_SLACK 3u

/* Per-instruction variants of the layout (ps_words_layout.leaf[i]). */
#define PS_LEAF_CMP32 1u /* CMPCOL in PS_MODE_INT on columns of <= 31 bits that never wrap: ps_cmp32_codes */

/* Where a warp's staged columns live in its shared-memory area (in words).
 *
 * all = 1: every column a code-reading leaf uses is staged once per task, all
 * in one round trip (asynchronous copies on the device, one wait), at
 * off[c]; the leaves then read no global memory but validity and aux.
 * all = 0 (when the sum of the columns would take more shared memory than the
 * budget): per leaf, region 0 (at 0) holds a leaf's column (a CMPCOL's a),
 * region 1 (at off[0]) a CMPCOL's b, staged when the leaf runs.
 * words: the area's size per warp, PS_STAGE_SLACK included, a multiple of
 * 4 (every region starts on 16 bytes: the vector copies and loads need it;
 * regions are multiples of 32 words anyway).
 * leaf[i]: PS_LEAF_* variant of instruction i, decided once on the host.
 * Passed to the kernel by value (a __grid_constant__ parameter, so off[c]
 * and leaf[i] are indexed constant loads). */
typedef struct ps_words_layout {
  uint32_t off[PS_MAX_COLS];
  uint32_t all;
  uint32_t cols; /* all = 1: bit c set: slot c is staged per task */
  uint32_t words;
  uint8_t leaf[PS_MAX_INSNS];
} ps_words_layout;

/* Whether M + code stays inside the key's 64-bit type (int64 for signed
 * kinds, uint64 else: ps_program.h's PS_MODE_INT keys) for every code up to
 * the code limit: then keys order as the exact values. The core keeps every
 * sound code inside the logical type, so this holds for every column it
 * builds. Conservative for negative signed references (any limit up to
 * INT64_MAX passes; only 31-bit codes are asked about). */
PS_HD bool ps_no_wrap(const ps_prog_col &c) {
  if (c.flags & PS_COLF_NO_CODES) return true; /* no code is ever sound */
  const uint64_t cmax = ps_width_mask(c.width);
  const uint64_t lim = c.code_limit < cmax ? c.code_limit : cmax;
  if (c.kind == PS_KIND_SIGNED) {
    const int64_t m = (int64_t)c.reference;
    return m < 0 ? lim <= (uint64_t)INT64_MAX : lim <= (uint64_t)(INT64_MAX - m);
  }
  return lim <= ~(uint64_t)0 - c.reference;
}

/* budget: staged words per warp allowed for all = 1 beyond what the per-leaf
 * regions need anyway. */
PS_HD ps_words_layout ps_words_layout_of(const ps_program &prog, uint32_t budget) {
  ps_words_layout L;
  for (uint32_t c = 0; c < PS_MAX_COLS; ++c) L.off[c] = 0;
  for (uint32_t i = 0; i < PS_MAX_INSNS; ++i) L.leaf[i] = 0;
  L.all = 0;
  L.cols = 0;
  L.words = 0;
  uint32_t a = 0, b = 0, cols = 0;
  for (uint32_t i = 0; i < prog.n_insns && i < PS_MAX_INSNS; ++i) {
    const ps_insn &in = prog.insns[i];
    if (in.op < PS_OP_RANGE || in.op > PS_OP_CMPCOL || in.op == PS_OP_ISNULL) continue;
    if (in.col_a < PS_MAX_COLS) {
      const uint32_t s = ps_stage_stride(prog.cols[in.col_a].width);
      if (s > a) a = s;
      if (s) cols |= 1u << in.col_a;
    }
    if (in.op == PS_OP_CMPCOL && in.col_b < PS_MAX_COLS) {
      const uint32_t s = ps_stage_stride(prog.cols[in.col_b].width);
      if (s > b) b = s;
      if (s) cols |= 1u << in.col_b;
      if (in.col_a < PS_MAX_COLS && PS_INSN_MODE(in.flags) == PS_MODE_INT) {
        const ps_prog_col &ca = prog.cols[in.col_a], &cb = prog.cols[in.col_b];
        if (ca.width <= 31 && cb.width <= 31 && ps_no_wrap(ca) && ps_no_wrap(cb)) L.leaf[i] = PS_LEAF_CMP32;
      }
    }
  }
  uint32_t total = 0;
  for (uint32_t c = 0; c < PS_MAX_COLS; ++c)
    if ((cols >> c) & 1u) total += 32u * ps_stage_stride(prog.cols[c].width);
  const uint32_t leaf = 32u * (a + b);
  if (total <= leaf || total <= budget) {
    L.all = 1;
    L.cols = cols;
    uint32_t at = 0;
    for (uint32_t c = 0; c < PS_MAX_COLS; ++c)
      if ((cols >> c) & 1u) {
        L.off[c] = at;
        at += 32u * ps_stage_stride(prog.cols[c].width);
      }
    L.words = (total + PS_STAGE_SLACK + 3u) & ~3u;
  } else {
    L.off[0] = 32u * a; /* region 1 */
    L.words = (leaf + PS_STAGE_SLACK + 3u) & ~3u;
  }
  return L;
}

/* Bitmap word g (bytes [4g, 4g+4)) of a byte region of `bytes` readable
 * bytes; bytes past it read as 0. `cached`: read through the non-coherent
 * cache (never for a region the kernel also writes). */
PS_HD uint32_t ps_region_word(const uint8_t *base, uint64_t bytes, uint64_t g, bool cached) {
  const uint64_t at = g * 4;
  if (at + 4 <= bytes && ((uintptr_t)base & 3u) == 0) {
    if (cached) return ps_ld32(base + at);
    return *reinterpret_cast<const uint32_t *>(base + at);
  }
  uint32_t v = 0;
  for (uint32_t i = 0; i < 4; ++i)
    if (at + i < bytes) v |= (uint32_t)(cached ? ps_ld8(base + at + i) : base[at + i]) << (8 * i);
  return v;
}

/* Rows [32g, 32g+32) that exist in a chunk of `rows` rows (g < words). */
PS_HD uint32_t ps_rows_mask(uint32_t rows, uint64_t g) {
  const uint64_t left = (uint64_t)rows - 32 * g;
  return left >= 32 ? 0xffffffffu : ((1u << left) - 1u);
}

/* The rows of word g that are evaluated: in the chunk and in the input
 * selection. The selection may be the output bitmap (in-place refinement), so
 * it is read with plain loads, by the thread that later writes that word. */
PS_HD uint32_t ps_word_rows(const ps_cuda_eval_params &p, uint64_t g) {
  uint32_t m = ps_rows_mask(p.rows, g);
  if (p.selection_in) m &= ps_region_word(p.selection_in, ((uint64_t)p.rows + 7) >> 3, g, false);
  return m;
}

/* valid(c, r) for the rows of word g, restricted to rows. */
PS_HD uint32_t ps_valid_word(const ps_cuda_eval_params &p, uint32_t c, uint64_t g, uint32_t rows) {
  const ps_prog_col &col = p.prog.cols[c];
  if (!(col.flags & PS_COLF_VALIDITY)) return rows;
  return rows & ps_region_word(p.validity[c], col.validity_bytes, g, true);
}

/* ---- staging -------------------------------------------------------------- */

/* Host builds of the tests define PS_WORDS_HOST_CHECKS and a counter that
 * every vector copy or shared load whose address is not aligned to its size
 * bumps (the device would fault or read the wrong words there). */
#if !defined(__CUDA_ARCH__) && defined(PS_WORDS_HOST_CHECKS)
extern long ps_words_misaligned;
#define PS_WORDS_CHECK_ALIGN(ptr, bytes) (ps_words_misaligned += (((uintptr_t)(ptr)) & ((bytes) - 1u)) != 0)
#else
#define PS_WORDS_CHECK_ALIGN(ptr, bytes) ((void)0)
#endif

/* One copy of V (1, 2 or 4) words, global to shared: cp.async on the device
 * (sm_80+: no registers held, the caller commits and waits), a plain copy
 * elsewhere (the host tests run this same path). */
template <uint32_t V>
PS_HD void ps_copy_async(uint32_t *dst, const uint8_t *src) {
  PS_WORDS_CHECK_ALIGN(dst, 4u * V);
  PS_WORDS_CHECK_ALIGN(src, 4u * V);
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  __pipeline_memcpy_async(dst, src, 4u * V);
#else
  for (uint32_t v = 0; v < V; ++v) dst[v] = ps_ld32(src + 4u * v);
#endif
}

/* One lane's share of staging column c's words for task `task` into area:
 * stream word task*32*w + i (lane t = i / w's word k = i % w) goes to
 * area[t*S + k] = area[i + (S - w) * (i / w)] (ps_stage_stride: S - w is 0,
 * 4, or 1 above 32 bits). With `async`, a stream wholly readable for the
 * task is copied with cp.async, ps_stage_vec(w) words per copy where the
 * stream is aligned to that (a vector never straddles two lanes' words: w
 * is a multiple of it); otherwise eight 4-byte loads are issued before their
 * stores so that each lane keeps 32 bytes in flight. */
PS_HD void ps_stage_share(const ps_cuda_eval_params &p, uint32_t c, uint64_t task, uint32_t *area, uint32_t lane,
                          bool async) {
  const ps_prog_col &col = p.prog.cols[c];
  const uint32_t w = col.width, n = 32u * w, pad = ps_stage_stride(w) - w;
  /* i/w as umulhi(i, ceil(2^32/w)): exact for i < 2^21, here i < 2048. */
  const uint32_t magic = pad ? 0xffffffffu / w + 1u : 0u;
  const uint8_t *data = p.data[c];
  const bool aligned = (p.data_aligned >> c) & 1u;
  const uint64_t first = task * n; /* word index in the stream */
  const bool whole = aligned && (first + n) * 4 <= col.data_bytes;
  if (async && whole) {
    const uint32_t vec = ps_stage_vec(w);
    const uint8_t *src = data + first * 4; /* first * 4 is a multiple of 128 */
    if (vec == 4 && ((uintptr_t)data & 15u) == 0) {
      for (uint32_t i = 4 * lane; i < n; i += 128) ps_copy_async<4>(area + i + pad * ps_umulhi(i, magic), src + 4 * i);
    } else if (vec == 2 && ((uintptr_t)data & 7u) == 0) {
      for (uint32_t i = 2 * lane; i < n; i += 64) ps_copy_async<2>(area + i + pad * ps_umulhi(i, magic), src + 4 * i);
    } else {
      for (uint32_t i = lane; i < n; i += 32) ps_copy_async<1>(area + i + pad * ps_umulhi(i, magic), src + 4 * i);
    }
    return;
  }
  for (uint32_t base = 0; base < n; base += 256) {
    uint32_t x[8];
    PS_UNROLL
    for (uint32_t m = 0; m < 8; ++m) {
      const uint32_t i = base + 32 * m + lane;
      x[m] = 0;
      if (i < n) {
        x[m] = whole ? ps_ld32(data + (first + i) * 4) : ps_stream_word(data, col.data_bytes, first + i, aligned);
      }
    }
    PS_UNROLL
    for (uint32_t m = 0; m < 8; ++m) {
      const uint32_t i = base + 32 * m + lane;
      if (i < n) area[i + pad * ps_umulhi(i, magic)] = x[m];
    }
  }
}

/* Stages column c for the whole warp. The device version is warp-wide (every
 * lane calls it, uniformly): the first __syncwarp keeps lanes still reading
 * the area's previous column from seeing it overwritten, the second makes the
 * stores visible to every lane. The host version does all 32 shares. */
PS_HD void ps_stage(const ps_cuda_eval_params &p, uint32_t c, uint64_t task, uint32_t *area, uint32_t lane) {
#ifdef __CUDA_ARCH__
  __syncwarp();
  ps_stage_share(p, c, task, area, lane, false);
  __syncwarp();
#else
  (void)lane;
  for (uint32_t l = 0; l < 32; ++l) ps_stage_share(p, c, task, area, l, false);
#endif
}

/* Layout all = 1: issues the copies of every column of L.cols for the task
 * into area (which no lane reads now), warp-wide. The caller commits
 * (ps_stage_commit) and then waits (ps_stage_wait). */
PS_HD void ps_stage_issue(const ps_cuda_eval_params &p, const ps_words_layout &L, uint64_t task, uint32_t *area,
                          uint32_t lane) {
#ifdef __CUDA_ARCH__
  for (uint32_t m = L.cols; m; m &= m - 1) {
    const uint32_t c = (uint32_t)__ffs(m) - 1;
    ps_stage_share(p, c, task, area + L.off[c], lane, true);
  }
#else
  (void)lane;
  for (uint32_t c = 0; c < PS_MAX_COLS; ++c)
    if ((L.cols >> c) & 1u)
      for (uint32_t l = 0; l < 32; ++l) ps_stage_share(p, c, task, area + L.off[c], l, true);
#endif
}

/* Closes the group of copies issued since the last commit (possibly none:
 * an empty group keeps the count that ps_stage_wait relies on). */
PS_HD void ps_stage_commit() {
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ >= 800
  __pipeline_commit();
#endif
}

/* Waits until all but the last `Pending` committed groups have landed and
 * makes them visible to the whole warp. */
template <unsigned Pending>
PS_HD void ps_stage_wait() {
#ifdef __CUDA_ARCH__
#if __CUDA_ARCH__ >= 800
  __pipeline_wait_prior(Pending);
#endif
  __syncwarp();
#endif
}

/* Layout all = 1: stages every column of L.cols for the task, warp-wide,
 * in one round trip. The first __syncwarp keeps lanes still reading the
 * previous task's words from seeing them overwritten. */
PS_HD void ps_stage_all(const ps_cuda_eval_params &p, const ps_words_layout &L, uint64_t task, uint32_t *area,
                        uint32_t lane) {
#ifdef __CUDA_ARCH__
  __syncwarp();
#endif
  ps_stage_issue(p, L, task, area, lane);
  ps_stage_commit();
  ps_stage_wait<0>();
}

/* ---- a lane's words in registers, codes at compile-time widths ----------------- */

/* Shared-memory vector loads (the host checks their alignment). */
PS_HD void ps_lds2(const uint32_t *src, uint32_t *out) {
  PS_WORDS_CHECK_ALIGN(src, 8u);
#ifdef __CUDA_ARCH__
  const uint2 v = *reinterpret_cast<const uint2 *>(src);
  out[0] = v.x;
  out[1] = v.y;
#else
  out[0] = src[0];
  out[1] = src[1];
#endif
}

PS_HD void ps_lds4(const uint32_t *src, uint32_t *out) {
  PS_WORDS_CHECK_ALIGN(src, 16u);
#ifdef __CUDA_ARCH__
  const uint4 v = *reinterpret_cast<const uint4 *>(src);
  out[0] = v.x;
  out[1] = v.y;
  out[2] = v.z;
  out[3] = v.w;
#else
  for (int i = 0; i < 4; ++i) out[i] = src[i];
#endif
}

/* Words [K0, K1) of a lane's staged words (src: its first word, aligned to
 * ps_stage_vec(W) words) into w[0 .. K1 - K0), each with the widest aligned
 * vector load of ps_stage_vec(W) words that lies inside the range (all
 * indexes are constants once unrolled: the branches fold away). */
template <int W, int K0, int K1>
PS_HD void ps_lane_load(const uint32_t *src, uint32_t *w) {
  constexpr int V = W <= 0 || W > 32 || (W & 1) ? 1 : ((W & 2) ? 2 : 4);
  PS_UNROLL
  for (int k = K0; k < K1; ++k) {
    const int s = k - k % V; /* start of k's vector */
    if (V > 1 && s >= K0 && s + V <= K1) {
      if (k != s) continue; /* loaded with its vector */
      if (V == 4)
        ps_lds4(src + s, w + (s - K0));
      else
        ps_lds2(src + s, w + (s - K0));
    } else {
      w[k - K0] = src[k];
    }
  }
}

/* Code j of width W (1..32) from w[], which holds the lane's words from
 * word K0 on: one shift and a mask, or a funnel shift and a mask where the
 * code straddles two words. */
template <int W, int K0>
PS_HD uint32_t ps_code_of(const uint32_t *w, int j) {
  const int bit = j * W, k = (bit >> 5) - K0, off = bit & 31;
  const uint32_t mask = W >= 32 ? 0xffffffffu : ((1u << (W & 31)) - 1u);
  if (off + W <= 32) return (w[k] >> off) & mask;
  return ps_funnel(w[k], w[k + 1], (uint32_t)off) & mask;
}

/* Codes 8Q .. 8Q+7 of a lane's 32 codes of width W (1..32) into c[0..8):
 * only the words they occupy are loaded. */
template <int W, int Q>
PS_HD void ps_codes8(const uint32_t *src, uint32_t *c) {
  constexpr int K0 = (8 * Q * W) >> 5, K1 = ((8 * Q + 8) * W + 31) >> 5;
  uint32_t w[K1 - K0];
  ps_lane_load<W, K0, K1>(src, w);
  PS_UNROLL
  for (int j = 0; j < 8; ++j) c[j] = ps_code_of<W, K0>(w, 8 * Q + j);
}

/* The same at a run-time width (0..31; 0 gives zeros): a jump to the
 * instantiation for it. */
template <int Q>
PS_HD void ps_codes8_at(uint32_t width, const uint32_t *src, uint32_t *c) {
  switch (width) {
    // clang-format off
#define PS_C8(W) case W: ps_codes8<W, Q>(src, c); return;
    PS_C8(1) PS_C8(2) PS_C8(3) PS_C8(4) PS_C8(5) PS_C8(6) PS_C8(7) PS_C8(8)
    PS_C8(9) PS_C8(10) PS_C8(11) PS_C8(12) PS_C8(13) PS_C8(14) PS_C8(15) PS_C8(16)
    PS_C8(17) PS_C8(18) PS_C8(19) PS_C8(20) PS_C8(21) PS_C8(22) PS_C8(23) PS_C8(24)
    PS_C8(25) PS_C8(26) PS_C8(27) PS_C8(28) PS_C8(29) PS_C8(30) PS_C8(31)
#undef PS_C8
    // clang-format on
    default:
      for (int j = 0; j < 8; ++j) c[j] = 0u;
      return;
  }
}

/* ---- code cursor ---------------------------------------------------------- */

/* Walks lane t's 32 codes of width w (w <= 32: Wide = false; 33..64: true)
 * from its staged words area[t*S + k], k < w, S = ps_stage_stride(w). c0 c1 (c2) hold
 * words k, k+1 (k+2); the code starts at bit `off` of c0. The cursor reads
 * words up to w + 2 without a bounds test: past k = w - 1 they are the next
 * lane's words, the next region or the area's slack, and a code never takes
 * bits from them (32 codes end exactly at the end of word w - 1; funnel
 * results are masked to the code's width). */
template <bool Wide>
struct ps_cursor {
  const uint32_t *src;
  uint32_t w, k, off, c0, c1, c2, mask;

  PS_HD uint32_t word(uint32_t i) const { return src[i]; }

  PS_HD void init(const uint32_t *area, uint32_t lane, uint32_t width) {
    w = width;
    src = area + lane * ps_stage_stride(width);
    k = 0;
    off = 0;
    c0 = word(0);
    c1 = word(1);
    c2 = Wide ? word(2) : 0u;
    /* mask of the code's bits in its low word (narrow) or high word (wide) */
    if (Wide)
      mask = w >= 64 ? 0xffffffffu : ((1u << (w - 32)) - 1u);
    else
      mask = w >= 32 ? 0xffffffffu : ((1u << w) - 1u);
  }

  PS_HD void step() {
    c0 = c1;
    c1 = Wide ? c2 : word(k + 2);
    if (Wide) c2 = word(k + 3);
    ++k;
  }

  /* The next code. off + w <= 63 (narrow) / 95 (wide), so a code lies in
   * c0:c1 (c0:c1:c2). */
  PS_HD uint64_t next() {
    uint64_t code;
    if (Wide) {
      code = (uint64_t)ps_funnel(c0, c1, off) | ((uint64_t)(ps_funnel(c1, c2, off) & mask) << 32);
      off += w - 32; /* w > 32: at least one word is consumed */
      step();
    } else {
      code = ps_funnel(c0, c1, off) & mask;
      off += w;
    }
    if (off >= 32) {
      off -= 32;
      step();
    }
    return code;
  }
};

/* ---- leaves --------------------------------------------------------------- */

/* What a code-reading leaf found for its 32 rows: bit j of hits is the leaf's
 * predicate on code j before negation (meaningful where the row is usable),
 * bit j of bad says code j is corrupt (meaningful where the row is valid). */
typedef struct ps_leaf_bits {
  uint32_t hits;
  uint32_t bad;
} ps_leaf_bits;

/* RANGE on codes: hit = (code - lo) <= span (lo + span <= the largest code). */
template <bool Wide, bool Check>
PS_HD ps_leaf_bits ps_range_codes(const uint32_t *area, uint32_t lane, uint32_t w, uint64_t lo, uint64_t span,
                                  uint64_t limit) {
  ps_cursor<Wide> cur;
  cur.init(area, lane, w);
  ps_leaf_bits r = {0u, 0u};
  PS_UNROLL
  for (uint32_t j = 0; j < 32; ++j) {
    const uint64_t code = cur.next();
    if (Wide) {
      r.hits |= (uint32_t)(code - lo <= span) << j;
      if (Check) r.bad |= (uint32_t)(code > limit) << j;
    } else { /* everything fits 32 bits: w <= 32 and the bounds were clamped */
      const uint32_t c32 = (uint32_t)code;
      r.hits |= (uint32_t)(c32 - (uint32_t)lo <= (uint32_t)span) << j;
      if (Check) r.bad |= (uint32_t)(c32 > (uint32_t)limit) << j;
    }
  }
  return r;
}

/* RANGE at a width known at compile time (1..32): the lane's words loaded
 * into registers with vector loads (ps_lane_load), then the leaf of
 * kernels_shared/ps_range.h (ps_range_leaf: SWAR at 2, 4, 8; codes compared
 * in their word's top bits otherwise; OpenCL's words.cl runs it too), about
 * half the instructions of the cursor. Widths above 32 take the cursor:
 * their unrolled loads would raise the kernel's register count for every
 * program. */
template <int W>
PS_HD ps_leaf_bits ps_range_w(const uint32_t *src, uint64_t lo, uint64_t span, bool check, uint64_t limit) {
  uint32_t w[W + 2];
  ps_lane_load<W, 0, W>(src, w);
  w[W] = 0u; /* ps_range_bits may name them; no code takes bits from them */
  w[W + 1] = 0u;
  ps_leaf_bits r;
  r.hits = ps_range_leaf(w, W, lo, span, check, limit, &r.bad);
  return r;
}

/* ps_range_w at a run-time width 1..32 (the caller checks; lo + span and
 * limit are at most the width's largest code). */
PS_HD ps_leaf_bits ps_range_fixed(uint32_t w, const uint32_t *src, uint64_t lo, uint64_t span, bool check,
                                  uint64_t limit) {
  switch (w) {
    // clang-format off
#define PS_RF(W) case W: return ps_range_w<W>(src, lo, span, check, limit);
    PS_RF(1) PS_RF(2) PS_RF(3) PS_RF(4) PS_RF(5) PS_RF(6) PS_RF(7) PS_RF(8)
    PS_RF(9) PS_RF(10) PS_RF(11) PS_RF(12) PS_RF(13) PS_RF(14) PS_RF(15) PS_RF(16)
    PS_RF(17) PS_RF(18) PS_RF(19) PS_RF(20) PS_RF(21) PS_RF(22) PS_RF(23) PS_RF(24)
    PS_RF(25) PS_RF(26) PS_RF(27) PS_RF(28) PS_RF(29) PS_RF(30) PS_RF(31) PS_RF(32)
#undef PS_RF
    // clang-format on
    default: { /* not reached: the caller checks w */
      ps_leaf_bits r = {0u, 0u};
      return r;
    }
  }
}

/* SET and INLIST: the lookup runs only for valid rows with a sound code. */
template <bool Wide>
PS_HD ps_leaf_bits ps_lookup_codes(const ps_cuda_eval_params &p, const ps_insn &in, const uint32_t *area, uint32_t lane,
                                   uint32_t w, uint32_t valid, uint64_t limit, bool no_codes, uint32_t *status) {
  ps_cursor<Wide> cur;
  cur.init(area, lane, w);
  ps_leaf_bits r = {0u, 0u};
  for (uint32_t j = 0; j < 32; ++j) {
    const uint64_t code = cur.next();
    const bool bad = no_codes || code > limit;
    r.bad |= (uint32_t)bad << j;
    if (bad || !((valid >> j) & 1u)) continue;
    const bool hit =
        in.op == PS_OP_SET ? ps_aux_bit(ps_cuda_aux(p), (uint64_t)in.aux_a + code, status, PS_CUDA_FLAG_AUX)
                           : ps_in_list(ps_cuda_aux(p), in.aux_a, in.lo, code);
    r.hits |= (uint32_t)hit << j;
  }
  return r;
}

/* CMPCOL masks before the known/corrupt bookkeeping: lt, eq, gt of a vs b,
 * bad codes of a and b. */
typedef struct ps_cmp_bits {
  uint32_t lt, eq, gt, bad_a, bad_b;
} ps_cmp_bits;

template <bool WideA, bool WideB>
PS_HD ps_cmp_bits ps_cmp_codes(const ps_cuda_eval_params &p, const ps_insn &in, const uint32_t *area_a,
                               const uint32_t *area_b, uint32_t lane, uint32_t valid_a, uint32_t valid_b,
                               uint32_t *status) {
  const ps_prog_col &ca = p.prog.cols[in.col_a], &cb = p.prog.cols[in.col_b];
  const bool none_a = (ca.flags & PS_COLF_NO_CODES) != 0, none_b = (cb.flags & PS_COLF_NO_CODES) != 0;
  const uint32_t mode = PS_INSN_MODE(in.flags);
  ps_cursor<WideA> xa;
  ps_cursor<WideB> xb;
  xa.init(area_a, lane, ca.width);
  xb.init(area_b, lane, cb.width);
  ps_cmp_bits r = {0u, 0u, 0u, 0u, 0u};
  for (uint32_t j = 0; j < 32; ++j) {
    const uint64_t a = xa.next(), b = xb.next();
    const bool bad_a = none_a || a > ca.code_limit, bad_b = none_b || b > cb.code_limit;
    r.bad_a |= (uint32_t)bad_a << j;
    r.bad_b |= (uint32_t)bad_b << j;
    bool lt, eq, gt;
    if (mode == PS_MODE_DOUBLE) {
      const double x = ps_decode_double(p, in.col_a, a), y = ps_decode_double(p, in.col_b, b);
      lt = x < y;
      eq = x == y;
      gt = x > y;
    } else if (mode == PS_MODE_RANK) {
      /* ranks index aux: only for rows where both codes are valid and sound */
      const bool ok = ((valid_a & valid_b) >> j) & 1u;
      uint32_t ra = 0, rb = 0;
      if (ok && !bad_a && !bad_b) {
        ra = ps_aux_word(ps_cuda_aux(p), (uint64_t)in.aux_a + a, status, PS_CUDA_FLAG_AUX);
        rb = ps_aux_word(ps_cuda_aux(p), (uint64_t)in.aux_b + b, status, PS_CUDA_FLAG_AUX);
      }
      lt = ra < rb;
      eq = ra == rb;
      gt = ra > rb;
    } else {
      const int s = ps_int_key_sign(ps_int_key_of(ca.reference, ca.kind == PS_KIND_SIGNED, a),
                                    ps_int_key_of(cb.reference, cb.kind == PS_KIND_SIGNED, b));
      lt = s < 0;
      eq = s == 0;
      gt = s > 0;
    }
    r.lt |= (uint32_t)lt << j;
    r.eq |= (uint32_t)eq << j;
    r.gt |= (uint32_t)gt << j;
  }
  return r;
}

/* CMPCOL in PS_MODE_INT, the common column-vs-column compare, in its own
 * loop: the exact integers M + code compared through the (hi, lo) key of
 * ps_program.h; gt is the complement of lt | eq (a total order). Without
 * Check (neither column can hold a corrupt code) no code is tested. */
template <bool WideA, bool WideB, bool Check>
PS_HD ps_cmp_bits ps_cmp_int_codes(const ps_cuda_eval_params &p, const ps_insn &in, const uint32_t *area_a,
                                   const uint32_t *area_b, uint32_t lane) {
  const ps_prog_col &ca = p.prog.cols[in.col_a], &cb = p.prog.cols[in.col_b];
  const bool none_a = (ca.flags & PS_COLF_NO_CODES) != 0, none_b = (cb.flags & PS_COLF_NO_CODES) != 0;
  const uint64_t ma = ca.reference, mb = cb.reference, la = ca.code_limit, lb = cb.code_limit;
  const bool sa = ca.kind == PS_KIND_SIGNED, sb = cb.kind == PS_KIND_SIGNED;
  ps_cursor<WideA> xa;
  ps_cursor<WideB> xb;
  xa.init(area_a, lane, ca.width);
  xb.init(area_b, lane, cb.width);
  ps_cmp_bits r = {0u, 0u, 0u, 0u, 0u};
  for (uint32_t j = 0; j < 32; ++j) {
    const uint64_t a = xa.next(), b = xb.next();
    if (Check) {
      r.bad_a |= (uint32_t)(none_a || a > la) << j;
      r.bad_b |= (uint32_t)(none_b || b > lb) << j;
    }
    const uint64_t va = ma + a, vb = mb + b; /* wrapping, as specified */
    const bool ha = !sa || (int64_t)va >= 0, hb = !sb || (int64_t)vb >= 0;
    r.lt |= (uint32_t)((ha != hb) ? hb : (va < vb)) << j;
    r.eq |= (uint32_t)(ha == hb && va == vb) << j;
  }
  r.gt = ~(r.lt | r.eq);
  return r;
}

template <bool Check>
PS_HD ps_cmp_bits ps_cmp_int_dispatch(const ps_cuda_eval_params &p, const ps_insn &in, const uint32_t *area_a,
                                      const uint32_t *area_b, uint32_t lane, bool wa, bool wb) {
  if (wa)
    return wb ? ps_cmp_int_codes<true, true, Check>(p, in, area_a, area_b, lane)
              : ps_cmp_int_codes<true, false, Check>(p, in, area_a, area_b, lane);
  return wb ? ps_cmp_int_codes<false, true, Check>(p, in, area_a, area_b, lane)
            : ps_cmp_int_codes<false, false, Check>(p, in, area_a, area_b, lane);
}

/* ps_ref_diff (Mb - Ma, clamped): kernels_shared/ps_cmpcol.h. */

/* A CMPCOL's 32 rows: hit = a <cmp> b (meaningful where both codes are
 * usable), bad codes of a and b (bad_a meaningful where a is valid). */
typedef struct ps_cmp32_bits {
  uint32_t hit, bad_a, bad_b;
} ps_cmp32_bits;

/* Rows 8Q .. 8Q+7 of ps_cmp32_codes: both columns' codes by the
 * width-templated extraction, then one comparison of their difference with
 * e per row: == (eq_kind) or <. */
template <int Q>
PS_HD void ps_cmp32_quarter(const uint32_t *src_a, uint32_t wa, const uint32_t *src_b, uint32_t wb, bool eq_kind,
                            int32_t e, bool check, uint32_t la, uint32_t lb, ps_cmp32_bits *r) {
  uint32_t a[8], b[8];
  ps_codes8_at<Q>(wa, src_a, a);
  ps_codes8_at<Q>(wb, src_b, b);
  uint32_t m = 0;
  if (eq_kind) {
    PS_UNROLL
    for (int j = 0; j < 8; ++j) m |= (uint32_t)((int32_t)(a[j] - b[j]) == e) << j;
  } else {
    PS_UNROLL
    for (int j = 0; j < 8; ++j) m |= (uint32_t)((int32_t)(a[j] - b[j]) < e) << j;
  }
  r->hit |= m << (8 * Q);
  if (check) {
    uint32_t ba = 0, bb = 0;
    PS_UNROLL
    for (int j = 0; j < 8; ++j) {
      ba |= (uint32_t)(a[j] > la) << j;
      bb |= (uint32_t)(b[j] > lb) << j;
    }
    r->bad_a |= ba << (8 * Q);
    r->bad_b |= bb << (8 * Q);
  }
}

/* CMPCOL in PS_MODE_INT on columns of at most 31 bits whose sound codes never
 * wrap (PS_LEAF_CMP32, decided by ps_words_layout_of), in 32-bit arithmetic
 * (words.cl's ps_cmp32): the keys then order as the exact values
 * Ma + code_a, Mb + code_b, so a < b iff code_a - code_b < Mb - Ma, and the
 * code difference is exact as an int32 (|code_a - code_b| < 2^31). LT and GE
 * compare the difference with d = Mb - Ma by <, LE and GT with d + 1 by <,
 * EQ and NE with d by ==; GE, GT and NE invert. A threshold outside the
 * differences' range decides every row at once (codes are then read only
 * for the corrupt-code test). Rows with a corrupt code get some hit bit;
 * they are UNKNOWN whatever it is. PS_COLF_NO_CODES is the caller's. */
PS_HD ps_cmp32_bits ps_cmp32_codes(const ps_cuda_eval_params &p, const ps_insn &in, const uint32_t *area_a,
                                   const uint32_t *area_b, uint32_t lane) {
  const ps_prog_col &ca = p.prog.cols[in.col_a], &cb = p.prog.cols[in.col_b];
  const uint32_t wa = ca.width, wb = cb.width; /* <= 31 */
  const uint32_t max_a = (1u << wa) - 1u, max_b = (1u << wb) - 1u;
  const uint32_t la = ca.code_limit < max_a ? (uint32_t)ca.code_limit : max_a;
  const uint32_t lb = cb.code_limit < max_b ? (uint32_t)cb.code_limit : max_b;
  const bool check = la < max_a || lb < max_b;
  const int64_t d = ps_ref_diff(ca.reference, ca.kind == PS_KIND_SIGNED, cb.reference, cb.kind == PS_KIND_SIGNED);
  const uint32_t cmp = PS_INSN_CMP(in.flags);
  const bool eq_kind = cmp == PS_CMP_EQ || cmp == PS_CMP_NE;
  const int64_t e = d + ((cmp == PS_CMP_LE || cmp == PS_CMP_GT) ? 1 : 0);
  uint32_t invert = (cmp == PS_CMP_GE || cmp == PS_CMP_GT || cmp == PS_CMP_NE) ? 0xffffffffu : 0u;
  const int64_t kMax = 0x7fffffff; /* code differences lie in [-kMax, kMax] */
  int fixed = -1;                  /* 0 or 1: every row's comparison is false or true */
  if (cmp > PS_CMP_GE) {
    fixed = 0; /* an unknown cmp selects nothing (ps_cmp_outcome) */
    invert = 0u;
  } else if (eq_kind) {
    if (e > kMax || e < -kMax) fixed = 0;
  } else if (e > kMax) {
    fixed = 1;
  } else if (e <= -kMax) {
    fixed = 0;
  }
  ps_cmp32_bits r = {0u, 0u, 0u};
  if (fixed < 0 || check) {
    const uint32_t *src_a = area_a + lane * ps_stage_stride(wa), *src_b = area_b + lane * ps_stage_stride(wb);
    const int32_t e32 = fixed < 0 ? (int32_t)e : 0;
    ps_cmp32_quarter<0>(src_a, wa, src_b, wb, eq_kind, e32, check, la, lb, &r);
    ps_cmp32_quarter<1>(src_a, wa, src_b, wb, eq_kind, e32, check, la, lb, &r);
    ps_cmp32_quarter<2>(src_a, wa, src_b, wb, eq_kind, e32, check, la, lb, &r);
    ps_cmp32_quarter<3>(src_a, wa, src_b, wb, eq_kind, e32, check, la, lb, &r);
  }
  if (fixed >= 0) r.hit = fixed ? 0xffffffffu : 0u;
  r.hit ^= invert;
  return r;
}

/* The rows where a <cmp> b, from the order masks (an unknown cmp: none). */
PS_HD uint32_t ps_cmp_mask(uint32_t cmp, const ps_cmp_bits &r) {
  switch (cmp) {
    case PS_CMP_EQ:
      return r.eq;
    case PS_CMP_NE:
      return ~r.eq;
    case PS_CMP_LT:
      return r.lt;
    case PS_CMP_LE:
      return r.lt | r.eq;
    case PS_CMP_GT:
      return r.gt;
    case PS_CMP_GE:
      return r.gt | r.eq;
    default:
      return 0u;
  }
}

/* Where the staged copy of each region came from: the slot, or -1. Reset
 * for every task. Uniform over the warp (the program is). */
typedef struct ps_stage_state {
  const ps_words_layout *L;
  uint32_t *area0, *area1;
  int slot0, slot1;
} ps_stage_state;

/* Which region a leaf wants a column in: a plain leaf takes it from either
 * region and stages into region 0; a CMPCOL needs a in region 0 and b in
 * region 1 (so that staging b never overwrites a). */
#define PS_STAGE_ANY 0
#define PS_STAGE_A 1
#define PS_STAGE_B 2

/* The area holding slot c's words for this task, staged on demand. */
PS_HD const uint32_t *ps_staged(const ps_cuda_eval_params &p, ps_stage_state *s, uint32_t c, int want, uint64_t task,
                                uint32_t lane) {
  if (p.prog.cols[c].width == 0) return s->area0; /* nothing is read */
  if (s->L->all) return s->area0 + s->L->off[c];  /* staged for the task already */
  if (want != PS_STAGE_B && s->slot0 == (int)c) return s->area0;
  if (want != PS_STAGE_A && s->slot1 == (int)c) return s->area1;
  if (want == PS_STAGE_B) {
    ps_stage(p, c, task, s->area1, lane);
    s->slot1 = (int)c;
    return s->area1;
  }
  ps_stage(p, c, task, s->area0, lane);
  s->slot0 = (int)c;
  return s->area0;
}

/* One leaf over the 32 rows of word g = 32*task + lane (rows: the evaluated
 * rows of that word; variant: the layout's PS_LEAF_* for it). Returns the
 * truth masks in *t, *f. */
PS_HD void ps_leaf_word(const ps_cuda_eval_params &p, const ps_insn &in, uint32_t variant, ps_stage_state *s,
                        uint64_t task, uint32_t lane, uint32_t rows, uint32_t *status, uint32_t *t, uint32_t *f) {
  const uint64_t g = task * 32 + lane;
  const uint32_t negate = (in.flags & PS_INSN_NEGATE) ? 0xffffffffu : 0u;
  const uint32_t ca = in.col_a;
  const ps_prog_col &col = p.prog.cols[ca];
  const uint32_t valid = ps_valid_word(p, ca, g, rows);
  if (in.op == PS_OP_ISNULL) { /* reads no code; never UNKNOWN */
    const uint32_t x = (rows & ~valid) ^ negate;
    *t = rows & x;
    *f = rows & ~x;
    return;
  }
  const bool no_codes = (col.flags & PS_COLF_NO_CODES) != 0;
  const uint32_t w = col.width;
  const uint64_t cmax = ps_code_max(w);
  if (in.op == PS_OP_CMPCOL) {
    const uint32_t cb = in.col_b;
    const uint32_t valid_b = ps_valid_word(p, cb, g, rows);
    const uint32_t *area_a = ps_staged(p, s, ca, PS_STAGE_A, task, lane);
    const uint32_t *area_b = ps_staged(p, s, cb, PS_STAGE_B, task, lane);
    const bool wa = w > 32, wb = p.prog.cols[cb].width > 32;
    const ps_prog_col &colb = p.prog.cols[cb];
    uint32_t hit, bad_a, bad_b;
    if (variant & PS_LEAF_CMP32) {
      const ps_cmp32_bits r = ps_cmp32_codes(p, in, area_a, area_b, lane);
      hit = r.hit;
      bad_a = no_codes ? 0xffffffffu : r.bad_a;
      bad_b = (colb.flags & PS_COLF_NO_CODES) ? 0xffffffffu : r.bad_b;
    } else {
      ps_cmp_bits r;
      const bool check = no_codes || (colb.flags & PS_COLF_NO_CODES) || col.code_limit < cmax ||
                         colb.code_limit < ps_code_max(colb.width);
      if (PS_INSN_MODE(in.flags) == PS_MODE_INT)
        r = check ? ps_cmp_int_dispatch<true>(p, in, area_a, area_b, lane, wa, wb)
                  : ps_cmp_int_dispatch<false>(p, in, area_a, area_b, lane, wa, wb);
      else if (wa)
        r = wb ? ps_cmp_codes<true, true>(p, in, area_a, area_b, lane, valid, valid_b, status)
               : ps_cmp_codes<true, false>(p, in, area_a, area_b, lane, valid, valid_b, status);
      else
        r = wb ? ps_cmp_codes<false, true>(p, in, area_a, area_b, lane, valid, valid_b, status)
               : ps_cmp_codes<false, false>(p, in, area_a, area_b, lane, valid, valid_b, status);
      hit = ps_cmp_mask(PS_INSN_CMP(in.flags), r);
      bad_a = r.bad_a;
      bad_b = r.bad_b;
    }
    const uint32_t usable_a = valid & ~bad_a;
    const uint32_t corrupt_a = valid & bad_a;
    const uint32_t corrupt_b = usable_a & valid_b & bad_b; /* b is read only where a is usable */
    if (corrupt_a) *status |= 1u << ca;
    if (corrupt_b) *status |= 1u << cb;
    const uint32_t known = usable_a & valid_b & ~bad_b;
    *t = known & hit;
    *f = known & ~hit;
    return;
  }
  ps_leaf_bits r = {0u, 0u};
  if (no_codes) {
    r.bad = 0xffffffffu; /* every valid row is corrupt; nothing is read */
  } else if (in.op == PS_OP_RANGE) {
    /* canonical (core/ps_program.h): lo <= hi <= code_limit <= cmax */
    const uint64_t lo = in.lo, hi = in.hi;
    const bool check = col.code_limit < cmax;
    if (!check && lo == 0 && hi == cmax) {
      r.hits = 0xffffffffu; /* every code is in range: nothing to read */
    } else {
      const uint32_t *area = ps_staged(p, s, ca, PS_STAGE_ANY, task, lane);
      if (w <= 32) /* w >= 1: at w = 0 every code is 0 and in range, and none is corrupt */
        r = ps_range_fixed(w, area + lane * ps_stage_stride(w), lo, hi - lo, check, col.code_limit);
      else
        r = check ? ps_range_codes<true, true>(area, lane, w, lo, hi - lo, col.code_limit)
                  : ps_range_codes<true, false>(area, lane, w, lo, hi - lo, col.code_limit);
    }
  } else {                  /* SET, INLIST */
    const uint32_t *area = ps_staged(p, s, ca, PS_STAGE_ANY, task, lane);
    r = w > 32 ? ps_lookup_codes<true>(p, in, area, lane, w, valid, col.code_limit, false, status)
               : ps_lookup_codes<false>(p, in, area, lane, w, valid, col.code_limit, false, status);
  }
  if (ps_leaf_truth(valid, r.bad, r.hits, negate, t, f)) *status |= 1u << ca;
}

/* ---- the program ---------------------------------------------------------- */

/* The result word of word g = 32*task + lane: the rows of `rows` where the
 * program is TRUE. Device: every lane of the warp calls it together (the
 * leaves may stage columns warp-wide); area is the warp's staging area, laid
 * out as L says (with L.all, the caller ran ps_stage_all for this task). The
 * core checked the program (opcodes, slots, stack discipline, depth). The
 * Kleene stack machine is kernels_shared/ps_kleene.h. */
PS_HD uint32_t ps_eval_word(const ps_cuda_eval_params &p, const ps_words_layout &L, uint32_t *area, uint64_t task,
                            uint32_t lane, uint32_t rows, uint32_t *status) {
  ps_stage_state s = {&L, area, area + L.off[0], -1, -1};
  ps_kstack k;
  ps_kbelow below;
  ps_kstack_init(&k);
  const uint32_t n = p.prog.n_insns;
  for (uint32_t i = 0; i < n; ++i) {
    const ps_insn &in = p.prog.insns[i];
    if (ps_kstack_apply(&k, &below, in.op)) continue;
    uint32_t t, f;
    ps_leaf_word(p, in, L.leaf[i], &s, task, lane, rows, status, &t, &f);
    ps_kstack_push(&k, &below, t, f);
  }
  return ps_kstack_result(&k, rows);
}

/* ---- outputs -------------------------------------------------------------- */

/* Writes result word g (< ceil(rows/32)) of the bitmap: one 32-bit store
 * when aligned and whole, else the bytes below ceil(rows/8). */
PS_HD void ps_store_bitmap_word(const ps_cuda_eval_params &p, uint64_t g, uint32_t word) {
  const uint64_t bytes = ((uint64_t)p.rows + 7) >> 3, at = g * 4;
  if (at + 4 <= bytes && p.bitmap_aligned) {
    *reinterpret_cast<uint32_t *>(p.bitmap + at) = word;
    return;
  }
  for (uint32_t i = 0; i < 4; ++i)
    if (at + i < bytes) p.bitmap[at + i] = (uint8_t)(word >> (8 * i));
}

/* Lane `lane`'s m-th share (m < 8) of the byte mask of task `task`: the 4
 * rows at task*1024 + 128m + 4*lane, whose bits are nibble lane%8 of result
 * word 4m + lane/8 of the task (`src`, fetched by the caller). A warp's 32
 * lanes thus write 128 contiguous bytes per step. */
PS_HD uint32_t ps_mask_src_lane(uint32_t m, uint32_t lane) { return 4 * m + (lane >> 3); }

PS_HD void ps_store_mask_share(const ps_cuda_eval_params &p, uint64_t task, uint32_t m, uint32_t lane, uint32_t src) {
  const uint64_t row = task * PS_WORDS_TASK_ROWS + 128 * m + 4 * lane;
  if (row >= p.rows) return;
  const uint32_t nib = (src >> (4 * (lane & 7u))) & 15u;
  const uint32_t v = (nib & 1u) | ((nib & 2u) << 7) | ((nib & 4u) << 14) | ((nib & 8u) << 21);
  if (row + 4 <= p.rows && ((uintptr_t)(p.mask + row) & 3u) == 0) {
    *reinterpret_cast<uint32_t *>(p.mask + row) = v;
    return;
  }
  for (uint32_t i = 0; i < 4; ++i)
    if (row + i < p.rows) p.mask[row + i] = (uint8_t)(v >> (8 * i));
}

#endif /* PS_CUDA_WORDS_CUH */
