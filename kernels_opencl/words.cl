/*
 * words.cl: the general filter (core/ps_program.h, binding per-row
 * semantics) compiled per program shape, the OpenCL port of the CUDA per-word
 * kernel (kernels_cuda/ps_cuda_words.cuh). filter.cl interprets the program
 * and extracts every code with run-time shifts from a stride of w words per
 * work-item; here the host writes the program out as straight-line code
 * (opencl_eval.c, words_shape) in which every leaf is a call of a function
 * instantiated for its column's width, so each code is a couple of constant
 * shifts, and the Kleene stack is a set of registers.
 *
 * Truth values of 32 rows travel as two masks (is_true, is_false); a row in
 * neither is UNKNOWN. The masks are of type ps_vw: one result word per
 * work-item on a GPU, 16 result words (one per vector lane) on a CPU.
 *
 * Two variants, chosen by the host:
 *  - GPU (default): a work-group of PS_WORDS_WG work-items produces
 *    PS_WORDS_WG consecutive result words. It first stages the packed words
 *    of every column a leaf reads (32 rows take exactly w words, so the tile's
 *    words of a column are consecutive) into local memory with coalesced
 *    16-byte loads, all issued before the first local store where registers
 *    allow; work-item t's w words of a column lie at t*S, S = w | 1 (odd:
 *    work-items reading their k-th word at once hit different banks).
 *  - CPU (PS_WORDS_DIRECT): no staging (local memory is ordinary memory
 *    there); a work-item produces PS_WORDS_R consecutive result words, 16 at a
 *    time, each leaf reading its column's words straight from global memory
 *    and transposing them through private memory so that word k of the 16
 *    result words is one vector (range.cl's PS_DIRECT_LANES). No barrier.
 *
 * The host prepends a shape text (built after ps_program.h, launch.h,
 * common.cl) that defines:
 *   PS_WORDS_WG             the work-group size (required; a multiple of 4)
 *   PS_WORDS_DIRECT, PS_WORDS_R   the CPU variant and its result words per
 *                           work-item (a multiple of 16)
 *   PS_WORDS_TILE           GPU: local words of the staging tile (>= 1)
 *   PS_WORDS_DEPTH          the program's stack depth (>= 1)
 *   PS_WORDS_WIDTHS(X)      X(w) for every width a RANGE leaf reads
 *   PS_WORDS_SETS(X)        X(w) for every width a SET leaf reads
 *   PS_WORDS_PAIRS(X)       X(wa, wb) for every pair of widths a CMPCOL reads
 *   PS_WORDS_PAIRS32(X)     the same for the CMPCOLs of the 32-bit variant
 *   PS_WORDS_STAGE          GPU: the staging code (PS_STAGE_LOAD/STORE)
 *   PS_WORDS_BODY           the program: leaf calls and mask operations on
 *                           the stack T[], F[] (R holds a leaf's result)
 * The host takes this kernel only for programs whose leaves are RANGE, SET,
 * ISNULL and CMPCOL in PS_MODE_INT (others run filter.cl), on little-endian
 * devices, with aux 4-byte aligned.
 *
 * Semantics kept exactly (as filter.cl and the CUDA kernel):
 *  - rows outside the input selection (and past the chunk) are not
 *    evaluated: no status bit can come from them;
 *  - a valid row whose code is corrupt (PS_COLF_NO_CODES, or code >
 *    code_limit) raises its slot's bit and is UNKNOWN to that leaf;
 *  - CMPCOL checks b's code only where a is valid and sound;
 *  - SET never indexes aux with a corrupt code, and an index past aux_words
 *    (only a malformed program has one; the host says which leaves can)
 *    raises PS_FILTER_CORRUPT_AUX and reads 0;
 *  - nothing past data_bytes / validity_bytes is read (the last words of a
 *    stream are assembled from bytes, past its end they read as 0), nothing
 *    past ceil(rows/8) bytes of the bitmap or rows bytes of the mask is
 *    written.
 *
 * PoCL miscompiles barriers under a branch (even a uniform one): the GPU
 * variant's barriers are reached unconditionally by every work-item, and a
 * work-group covers one tile (no grid-stride loop around barriers).
 */

#ifndef PS_WORDS_WG
#error "words.cl needs the shape text (PS_WORDS_WG ...)"
#endif

/* ---- lanes: one result word per work-item (GPU) or 16 (CPU) ------------- */

#ifdef PS_WORDS_DIRECT
typedef uint16 ps_vw; /* 32-row masks, or 32-bit values, of 16 result words */
typedef ulong16 ps_vl;
#define PS_WIDEN(v) convert_ulong16(v)
/* all-ones where a comparison holds: vector comparisons give -1 */
#define PS_M32(c) as_uint16(c)
#define PS_M64(c) as_ulong16(c)
#define PS_NARROW(m) convert_uint16(m)
#define PS_NONNEG(v) as_ulong16(as_long16(v) >= 0L)
#define PS_AS_INT(v) as_int16(v)
#else
typedef uint ps_vw;
typedef ulong ps_vl;
#define PS_WIDEN(v) ((ulong)(v))
/* all-ones where a comparison holds: scalar comparisons give 1 */
#define PS_M32(c) (0u - (uint)(c))
#define PS_M64(c) ((ulong)0 - (ulong)(c))
#define PS_NARROW(m) ((uint)(m))
#define PS_NONNEG(v) PS_M64((long)(v) >= 0L)
#define PS_AS_INT(v) as_int(v)
#endif

typedef struct ps_truthv {
  ps_vw t;
  ps_vw f;
} ps_truthv;

/* What every leaf needs. */
typedef struct ps_wctx {
  __constant ps_filter_launch *launch;
  const ps_bytes *data;     /* PS_MAX_COLS streams */
  const ps_bytes *validity; /* PS_MAX_COLS bitmaps */
  __global const uint *aux; /* the aux words (the host checked 4-byte alignment) */
  ulong g;                  /* the (first) result word */
  ps_vw rows;               /* rows evaluated: in the chunk and the selection */
  uint corrupt;             /* bit c: slot c read a corrupt code */
#ifndef PS_WORDS_DIRECT
  __local const uint *tile; /* the staged columns */
  uint lid;
#endif
} ps_wctx;

/* Nonzero if any bit of m is set. */
static uint ps_any(ps_vw m) {
#ifdef PS_WORDS_DIRECT
  const uint8 a = m.lo | m.hi;
  const uint4 b = a.lo | a.hi;
  const uint2 c = b.lo | b.hi;
  return c.x | c.y;
#else
  return m;
#endif
}

/* Bit count of all lanes (on a CPU common.cl's vector count: PoCL's popcount
 * on uint16 is slow). */
static uint ps_count(ps_vw m) {
#ifdef PS_WORDS_DIRECT
  return ps_popcount16(m);
#else
  return popcount(m);
#endif
}

/* Words g.. of a bitmap region (bytes past its size read as 0). */
static ps_vw ps_bitmap_words(ps_region r, ulong g) {
#ifdef PS_WORDS_DIRECT
  if ((r.offset & 3) == 0 && (g + 16) * 4 <= r.size) return vload16(0, (__global const uint *)(r.buf + r.offset) + g);
  uint v[16];
  for (int i = 0; i < 16; ++i) v[i] = ps_load_word(r, g + i);
  return vload16(0, v);
#else
  return ps_load_word(r, g);
#endif
}

/* Rows of words g.. that exist in a chunk of `rows` rows. */
static ps_vw ps_rows_of(ulong rows, ulong g) {
#ifdef PS_WORDS_DIRECT
  if ((g + 16) * 32 <= rows) return (ps_vw)(0xffffffffu);
  uint m[16];
  for (int i = 0; i < 16; ++i) m[i] = (g + i) * 32 < rows ? ps_row_mask(rows, g + i) : 0u;
  return vload16(0, m);
#else
  return g * 32 < rows ? ps_row_mask(rows, g) : 0u;
#endif
}

/* valid(c, r) over the evaluated rows. */
static ps_vw ps_valid(const ps_wctx *x, uint slot) {
  __constant ps_prog_col *col = &x->launch->prog.cols[slot];
  if (!(col->flags & PS_COLF_VALIDITY)) return x->rows;
  const ps_region r = {x->validity[slot], x->launch->validity_offset[slot], col->validity_bytes};
  return x->rows & ps_bitmap_words(r, x->g);
}

/* ---- codes from a lane's words ------------------------------------------
 * w[k] (k < W) holds word k of the 32 codes of width W of a result word (of
 * each lane's result word); w[W], w[W+1], w[W+2] are 0 (they keep the
 * constant indexes below in range: a code never takes bits from them). With
 * W a literal and j a fully unrolled loop index, every index and shift below
 * is a constant. */
#define PS_BIT(j, W) ((j) * (W))
#define PS_K(j, W) (PS_BIT(j, W) >> 5)
#define PS_OFF(j, W) (PS_BIT(j, W) & 31)
#define PS_MASK32(W) ((W) >= 32 ? 0xffffffffu : (1u << ((W) & 31)) - 1u)
#define PS_MASK64(W) ((W) >= 64 ? ~0UL : (1UL << ((W) & 63)) - 1UL)
/* code j, W <= 32 */
#define PS_CODE_NARROW(w, j, W)                                                                             \
  ((((w)[PS_K(j, W)] >> PS_OFF(j, W)) |                                                                     \
    (PS_OFF(j, W) + (W) > 32 ? (w)[PS_K(j, W) + 1] << ((32 - PS_OFF(j, W)) & 31) : (ps_vw)0)) & \
   PS_MASK32(W))
/* code j, W > 32 */
#define PS_CODE_WIDE(w, j, W)                                                                          \
  ((((PS_WIDEN((w)[PS_K(j, W)]) | (PS_WIDEN((w)[PS_K(j, W) + 1]) << 32)) >> PS_OFF(j, W)) |            \
    (PS_OFF(j, W) + (W) > 64 ? PS_WIDEN((w)[PS_K(j, W) + 2]) << ((64 - PS_OFF(j, W)) & 63) : (ps_vl)0)) & \
   PS_MASK64(W))
/* code j as 64 bits, any W */
#define PS_CODE64(w, j, W) ((W) <= 32 ? PS_WIDEN(PS_CODE_NARROW(w, j, W)) : PS_CODE_WIDE(w, j, W))

/* Local stride of a staged column (odd). */
#define PS_STRIDE(W) ((W) | 1)

/* Fills w[0..W+3) for column `slot` (staged at local word `off` on a GPU).
 * A statement, not a function, so that w stays a private array of the
 * caller's (registers) whatever the compiler inlines. */
#ifdef PS_WORDS_DIRECT
/* Lanes i = 0..15 are result words g + i, whose words lie at src + i*W: each
 * lane's words are read 4 at a time (vload4: 4-byte alignment suffices) and
 * transposed 4 lanes x 4 words at a time with shuffles; the W % 4 words left
 * are gathered one by one. Where the block reaches the stream's end, every
 * word is a bounded load. */
#define PS_LANES(w, W, slot, off)                                                                                  \
  {                                                                                                                \
    const ps_region r_ = {x->data[slot], x->launch->data_offset[slot], x->launch->prog.cols[slot].data_bytes};    \
    const ulong at_ = x->g * (W);                                                                                  \
    if ((r_.offset & 3) == 0 && (at_ + 16 * (W)) * 4 <= r_.size) {                                                 \
      __global const uint *src_ = (__global const uint *)(r_.buf + r_.offset) + at_;                               \
      _Pragma("unroll") for (int m_ = 0; m_ < (W) / 4; ++m_) {                                                     \
        uint4 q_[16];                                                                                              \
        _Pragma("unroll") for (int i_ = 0; i_ < 16; ++i_) q_[i_] = vload4(0, src_ + i_ * (W) + 4 * m_);            \
        const uint16 a0_ = (uint16)(q_[0], q_[1], q_[2], q_[3]), a1_ = (uint16)(q_[4], q_[5], q_[6], q_[7]);        \
        const uint16 a2_ = (uint16)(q_[8], q_[9], q_[10], q_[11]), a3_ = (uint16)(q_[12], q_[13], q_[14], q_[15]); \
        w[4 * m_] = (uint16)(a0_.s048c, a1_.s048c, a2_.s048c, a3_.s048c);                                          \
        w[4 * m_ + 1] = (uint16)(a0_.s159d, a1_.s159d, a2_.s159d, a3_.s159d);                                      \
        w[4 * m_ + 2] = (uint16)(a0_.s26ae, a1_.s26ae, a2_.s26ae, a3_.s26ae);                                      \
        w[4 * m_ + 3] = (uint16)(a0_.s37bf, a1_.s37bf, a2_.s37bf, a3_.s37bf);                                      \
      }                                                                                                            \
      _Pragma("unroll") for (int k_ = (W) / 4 * 4; k_ < (W); ++k_) {                                               \
        uint b_[16]; /* constant indexes only: registers */                                                        \
        _Pragma("unroll") for (int i_ = 0; i_ < 16; ++i_) b_[i_] = src_[i_ * (W) + k_];                            \
        w[k_] = vload16(0, b_);                                                                                    \
      }                                                                                                            \
    } else {                                                                                                       \
      uint blk_[(W) + 1][16];                                                                                      \
      for (int i_ = 0; i_ < 16; ++i_)                                                                              \
        for (int k_ = 0; k_ < (W); ++k_) blk_[k_][i_] = ps_load_word(r_, at_ + (ulong)(i_ * (W) + k_));            \
      _Pragma("unroll") for (int k_ = 0; k_ < (W); ++k_) w[k_] = vload16(0, blk_[k_]);                            \
    }                                                                                                              \
    w[W] = 0;                                                                                                      \
    w[(W) + 1] = 0;                                                                                                \
    w[(W) + 2] = 0;                                                                                                \
    (void)(off);                                                                                                   \
  }
#else
#define PS_LANES(w, W, slot, off)                                                 \
  {                                                                               \
    __local const uint *src_ = x->tile + (off) + x->lid * PS_STRIDE(W);           \
    _Pragma("unroll") for (int k_ = 0; k_ < (W); ++k_) w[k_] = src_[k_];          \
    w[W] = 0;                                                                     \
    w[(W) + 1] = 0;                                                               \
    w[(W) + 2] = 0;                                                               \
    (void)(slot);                                                                 \
  }
#endif

/* ---- leaves --------------------------------------------------------------- */

/* A RANGE leaf's bounds and bookkeeping, and whether codes must be read at
 * all. The range is canonical (core/ps_program.h): lo <= hi <= code_limit. */
typedef struct ps_range_args {
  ulong lo, span, limit;
  uint negate, no_codes, read;
  ps_vw valid;
} ps_range_args;

static ps_range_args ps_range_begin(const ps_wctx *x, uint insn, uint slot, uint width, uint check) {
  __constant ps_insn *in = &x->launch->prog.insns[insn];
  __constant ps_prog_col *col = &x->launch->prog.cols[slot];
  ps_range_args a;
  const ulong cmax = PS_MASK64(width);
  a.lo = in->lo;
  const ulong hi = in->hi;
  a.span = hi - a.lo;
  a.limit = col->code_limit < cmax ? col->code_limit : cmax;
  a.negate = (in->flags & PS_INSN_NEGATE) ? 0xffffffffu : 0u;
  a.no_codes = (col->flags & PS_COLF_NO_CODES) != 0;
  /* Every code in range and none can be corrupt: nothing to read. */
  a.read = !a.no_codes && (check || a.lo != 0 || hi != cmax);
  a.valid = ps_valid(x, slot);
  return a;
}

/* hits: rows whose code is in the (clamped) range; bad: corrupt codes. */
static ps_truthv ps_range_end(ps_wctx *x, uint slot, const ps_range_args *a, ps_vw hits, ps_vw bad) {
  if (a->no_codes) bad = (ps_vw)(0xffffffffu); /* every valid row is corrupt */
  else if (!a->read) hits = (ps_vw)(0xffffffffu);
  if (ps_any(a->valid & bad)) x->corrupt |= 1u << slot;
  const ps_vw usable = a->valid & ~bad;
  const ps_vw is = hits ^ (ps_vw)(a->negate);
  ps_truthv r = {usable & is, usable & ~is};
  return r;
}

/* The RANGE leaf at W <= 32: on a GPU (one result word per work-item) the
 * leaf of kernels_shared/ps_range.h, which CUDA's general kernel runs too;
 * on a CPU the same test on 16 result words per vector, a code per lane. */
#ifdef PS_WORDS_DIRECT
#define PS_RANGE_NARROW(w, W, a, check, hits, bad)                                   \
  {                                                                                  \
    const uint lo32 = (uint)(a).lo, span32 = (uint)(a).span, lim32 = (uint)(a).limit; \
    _Pragma("unroll") for (int j = 0; j < 32; ++j) {                                 \
      const ps_vw c = PS_CODE_NARROW(w, j, W);                                       \
      hits |= PS_M32(c - lo32 <= span32) & (1u << j);                                \
      if (check) bad |= PS_M32(c > lim32) & (1u << j);                               \
    }                                                                                \
  }
#else
#define PS_RANGE_NARROW(w, W, a, check, hits, bad) hits = ps_range_leaf(w, W, (a).lo, (a).span, check, (a).limit, &bad);
#endif

/* ps_range_<W>: RANGE on a column of width W. check: the column's code
 * limit is below 2^W - 1, so codes are compared with it. */
#define PS_DEFINE_WIDTH(W)                                                                          \
  static ps_truthv ps_range_##W(ps_wctx *x, uint insn, uint slot, uint off, uint check) {           \
    const ps_range_args a = ps_range_begin(x, insn, slot, W, check);                                \
    ps_vw hits = 0, bad = 0;                                                                        \
    if (a.read) {                                                                                   \
      ps_vw w[(W) + 3];                                                                             \
      PS_LANES(w, W, slot, off)                                                                     \
      if ((W) <= 32) { /* codes, bounds and limit all fit 32 bits */                                \
        PS_RANGE_NARROW(w, W, a, check, hits, bad)                                                  \
      } else {                                                                                      \
        _Pragma("unroll") for (int j = 0; j < 32; ++j) {                                            \
          const ps_vl c = PS_CODE_WIDE(w, j, W);                                                    \
          hits |= PS_NARROW(PS_M64(c - a.lo <= a.span)) & (1u << j);                                \
          if (check) bad |= PS_NARROW(PS_M64(c > a.limit)) & (1u << j);                             \
        }                                                                                           \
      }                                                                                             \
    }                                                                                               \
    return ps_range_end(x, slot, &a, hits, bad);                                                    \
  }

/* ISNULL reads no code and is never UNKNOWN. */
static ps_truthv ps_isnull(const ps_wctx *x, uint slot, uint negate) {
  const ps_vw is = (x->rows & ~ps_valid(x, slot)) ^ (ps_vw)(negate ? 0xffffffffu : 0u);
  ps_truthv r = {x->rows & is, x->rows & ~is};
  return r;
}

/* Bits k of aux for lanes of word indexes k >> 5 (one load per row and lane:
 * the SET bitmap is read straight from global memory, where a dictionary's
 * bitmap (10^6 entries: 125 KB) stays cache-resident; it is too large for
 * local memory on NVIDIA's OpenCL, 48 KB). */
static ps_vw ps_aux_bits(__global const uint *aux, ps_vw k) {
#ifdef PS_WORDS_DIRECT
  const uint16 q = k >> 5;
  const uint16 v = (uint16)(aux[q.s0], aux[q.s1], aux[q.s2], aux[q.s3], aux[q.s4], aux[q.s5], aux[q.s6], aux[q.s7],
                            aux[q.s8], aux[q.s9], aux[q.sa], aux[q.sb], aux[q.sc], aux[q.sd], aux[q.se], aux[q.sf]);
  return (v >> (k & 31u)) & 1u;
#else
  return (aux[k >> 5] >> (k & 31u)) & 1u;
#endif
}

/* SET's truth from the rows whose bit is set (hits), the corrupt codes
 * (bad) and the rows whose index fell past aux (outside: they read 0). */
static ps_truthv ps_set_end(ps_wctx *x, uint slot, uint negate, ps_vw valid, ps_vw hits, ps_vw bad, ps_vw outside) {
  if (ps_any(valid & bad)) x->corrupt |= 1u << slot;
  const ps_vw usable = valid & ~bad;
  if (ps_any(usable & outside)) x->corrupt |= PS_FILTER_CORRUPT_AUX;
  const ps_vw is = (hits & ~outside) ^ (ps_vw)(negate ? 0xffffffffu : 0u);
  ps_truthv r = {usable & is, usable & ~is};
  return r;
}

/* ps_set_<W>: SET on a column of width W: bit aux_a + code of aux
 * (ps_program.h). check: the code limit is below 2^W - 1, so codes are
 * compared with it; a corrupt code (or a null row's code, which may be
 * anything) is replaced by 0 before it indexes aux, and a corrupt row is
 * UNKNOWN. aux_check: the host could not show that aux_a + every sound code
 * lies inside the aux_words (a malformed program): an index past them raises
 * PS_FILTER_CORRUPT_AUX and reads 0, as on CUDA, and is never loaded.
 * Indexes that are loaded are below aux_words * 32 < 2^32. */
#define PS_DEFINE_SET(W)                                                                                        \
  static ps_truthv ps_set_##W(ps_wctx *x, uint insn, uint slot, uint off, uint check, uint aux_check) {         \
    __constant ps_insn *in = &x->launch->prog.insns[insn];                                                      \
    __constant ps_prog_col *col = &x->launch->prog.cols[slot];                                                  \
    const ps_vw valid = ps_valid(x, slot);                                                                      \
    const ulong cmax = PS_MASK64(W), limit = col->code_limit < cmax ? col->code_limit : cmax;                   \
    const ulong bits = (ulong)x->launch->prog.aux_words * 32, base = in->aux_a;                                 \
    /* aux_check: codes below room index inside aux */                                                          \
    const ulong room = base < bits ? bits - base : 0;                                                           \
    ps_vw hits = 0, bad = 0, outside = 0;                                                                       \
    if (col->flags & PS_COLF_NO_CODES) {                                                                        \
      bad = (ps_vw)(0xffffffffu); /* every valid row is corrupt; no code is read */                             \
    } else if (aux_check && room == 0) {                                                                        \
      outside = (ps_vw)(0xffffffffu); /* every index is past aux; nothing is loaded */                          \
      if (check) {                                                                                              \
        ps_vw w[(W) + 3];                                                                                       \
        PS_LANES(w, W, slot, off)                                                                               \
        _Pragma("unroll") for (int j = 0; j < 32; ++j) bad |= PS_NARROW(PS_M64(PS_CODE64(w, j, W) > limit)) &   \
                                                              (1u << j);                                        \
      }                                                                                                         \
    } else if (ps_any(valid)) {                                                                                 \
      ps_vw w[(W) + 3];                                                                                         \
      PS_LANES(w, W, slot, off)                                                                                 \
      if ((W) <= 32) { /* codes and bounds fit 32 bits (room <= aux_words * 32 < 2^32) */                       \
        const uint lim32 = (uint)limit, room32 = (uint)room, base32 = (uint)base;                               \
        _Pragma("unroll") for (int j = 0; j < 32; ++j) {                                                        \
          ps_vw c = PS_CODE_NARROW(w, j, W);                                                                    \
          if (check) {                                                                                          \
            const ps_vw b = PS_M32(c > lim32);                                                                  \
            bad |= b & (1u << j);                                                                               \
            c &= ~b;                                                                                            \
          }                                                                                                     \
          if (aux_check) {                                                                                      \
            const ps_vw o = PS_M32(c >= room32);                                                                \
            outside |= o & (1u << j);                                                                           \
            c &= ~o;                                                                                            \
          }                                                                                                     \
          hits |= ps_aux_bits(x->aux, base32 + c) << j;                                                         \
        }                                                                                                       \
      } else {                                                                                                  \
        _Pragma("unroll") for (int j = 0; j < 32; ++j) {                                                        \
          ps_vl c = PS_CODE_WIDE(w, j, W);                                                                      \
          if (check) {                                                                                          \
            const ps_vl b = PS_M64(c > limit);                                                                  \
            bad |= PS_NARROW(b) & (1u << j);                                                                    \
            c &= ~b;                                                                                            \
          }                                                                                                     \
          if (aux_check) {                                                                                      \
            const ps_vl o = PS_M64(c >= room);                                                                  \
            outside |= PS_NARROW(o) & (1u << j);                                                                \
            c &= ~o;                                                                                            \
          }                                                                                                     \
          hits |= ps_aux_bits(x->aux, (uint)base + PS_NARROW(c)) << j;                                          \
        }                                                                                                       \
      }                                                                                                         \
    }                                                                                                           \
    return ps_set_end(x, slot, in->flags & PS_INSN_NEGATE, valid, hits, bad, outside);                          \
  }

/* CMPCOL in PS_MODE_INT from the order masks and the corrupt masks. */
static ps_truthv ps_cmp_end(ps_wctx *x, uint insn, uint sa, uint sb, ps_vw valid_a, ps_vw valid_b, ps_vw lt,
                            ps_vw eq, ps_vw bad_a, ps_vw bad_b) {
  __constant ps_prog_col *ca = &x->launch->prog.cols[sa], *cb = &x->launch->prog.cols[sb];
  if (ca->flags & PS_COLF_NO_CODES) bad_a = (ps_vw)(0xffffffffu);
  if (cb->flags & PS_COLF_NO_CODES) bad_b = (ps_vw)(0xffffffffu);
  const ps_vw usable_a = valid_a & ~bad_a;
  if (ps_any(valid_a & bad_a)) x->corrupt |= 1u << sa;
  if (ps_any(usable_a & valid_b & bad_b)) x->corrupt |= 1u << sb; /* b is read only where a is usable */
  const ps_vw known = usable_a & valid_b & ~bad_b;
  ps_vw hit;
  switch (PS_INSN_CMP(x->launch->prog.insns[insn].flags)) {
    case PS_CMP_EQ: hit = eq; break;
    case PS_CMP_NE: hit = ~eq; break;
    case PS_CMP_LT: hit = lt; break;
    case PS_CMP_LE: hit = lt | eq; break;
    case PS_CMP_GT: hit = ~(lt | eq); break;
    case PS_CMP_GE: hit = ~lt; break;
    default: hit = 0; break;
  }
  ps_truthv r = {known & hit, known & ~hit};
  return r;
}

/* ps_cmp_<WA>_<WB>: CMPCOL a <cmp> b in PS_MODE_INT (exact integers M + code
 * through the (hi, lo) key of ps_program.h) on columns of widths WA and WB.
 * check: a code of either column may be corrupt. */
#define PS_DEFINE_PAIR(WA, WB)                                                                                   \
  static ps_truthv ps_cmp_##WA##_##WB(ps_wctx *x, uint insn, uint sa, uint off_a, uint sb, uint off_b,          \
                                      uint check) {                                                              \
    __constant ps_prog_col *ca = &x->launch->prog.cols[sa], *cb = &x->launch->prog.cols[sb];                     \
    const ps_vw valid_a = ps_valid(x, sa), valid_b = ps_valid(x, sb);                                            \
    const ulong ma = ca->reference, mb = cb->reference, la = ca->code_limit, lb = cb->code_limit;                \
    const uint signed_a = ca->kind == PS_KIND_SIGNED, signed_b = cb->kind == PS_KIND_SIGNED;                     \
    ps_vw wa[(WA) + 3], wb[(WB) + 3];                                                                            \
    PS_LANES(wa, WA, sa, off_a)                                                                                  \
    PS_LANES(wb, WB, sb, off_b)                                                                                  \
    ps_vw lt = 0, eq = 0, bad_a = 0, bad_b = 0;                                                                  \
    _Pragma("unroll") for (int j = 0; j < 32; ++j) {                                                             \
      const ps_vl a = PS_CODE64(wa, j, WA), b = PS_CODE64(wb, j, WB);                                            \
      if (check) {                                                                                               \
        bad_a |= PS_NARROW(PS_M64(a > la)) & (1u << j);                                                          \
        bad_b |= PS_NARROW(PS_M64(b > lb)) & (1u << j);                                                          \
      }                                                                                                          \
      const ps_vl va = ma + a, vb = mb + b; /* wrapping, as specified */                                         \
      const ps_vl ha = signed_a ? PS_NONNEG(va) : (ps_vl)(~0UL), hb = signed_b ? PS_NONNEG(vb) : (ps_vl)(~0UL); \
      const ps_vl differ = ha ^ hb;                                                                              \
      lt |= PS_NARROW((differ & hb) | (~differ & PS_M64(va < vb))) & (1u << j);                                  \
      eq |= PS_NARROW(~differ & PS_M64(va == vb)) & (1u << j);                                                   \
    }                                                                                                            \
    return ps_cmp_end(x, insn, sa, sb, valid_a, valid_b, lt, eq, bad_a, bad_b);                                  \
  }

/* ps_ref_diff (Mb - Ma, clamped): kernels_shared/ps_cmpcol.h. */

/* ps_cmp32_<WA>_<WB>: the same compare on columns of at most 31 bits whose
 * M + code never wraps for a code up to the code limit (the host checks
 * both), so that key order is the order of the exact values: a < b iff
 * code_a - code_b < Mb - Ma, with code_a - code_b exact in 32 bits. Rows with
 * a corrupt code are UNKNOWN whatever is computed for them. */
#define PS_DEFINE_PAIR32(WA, WB)                                                                         \
  static ps_truthv ps_cmp32_##WA##_##WB(ps_wctx *x, uint insn, uint sa, uint off_a, uint sb, uint off_b, \
                                        uint check) {                                                    \
    __constant ps_prog_col *ca = &x->launch->prog.cols[sa], *cb = &x->launch->prog.cols[sb];             \
    const ps_vw valid_a = ps_valid(x, sa), valid_b = ps_valid(x, sb);                                    \
    const ulong la = ca->code_limit < PS_MASK32(WA) ? ca->code_limit : PS_MASK32(WA);                    \
    const ulong lb = cb->code_limit < PS_MASK32(WB) ? cb->code_limit : PS_MASK32(WB);                    \
    const long d = ps_ref_diff(ca->reference, ca->kind == PS_KIND_SIGNED, cb->reference,                 \
                               cb->kind == PS_KIND_SIGNED);                                              \
    const int d32 = (int)d; /* the clamped values are handled after the loop */                         \
    ps_vw wa[(WA) + 3], wb[(WB) + 3];                                                                    \
    PS_LANES(wa, WA, sa, off_a)                                                                          \
    PS_LANES(wb, WB, sb, off_b)                                                                          \
    ps_vw lt = 0, eq = 0, bad_a = 0, bad_b = 0;                                                          \
    _Pragma("unroll") for (int j = 0; j < 32; ++j) {                                                     \
      const ps_vw a = PS_CODE_NARROW(wa, j, WA), b = PS_CODE_NARROW(wb, j, WB);                          \
      if (check) {                                                                                       \
        bad_a |= PS_M32(a > (uint)la) & (1u << j);                                                       \
        bad_b |= PS_M32(b > (uint)lb) & (1u << j);                                                       \
      }                                                                                                  \
      const ps_vw diff = a - b; /* exact as a signed 32-bit value */                                     \
      lt |= PS_M32(PS_AS_INT(diff) < d32) & (1u << j);                                                   \
      eq |= PS_M32(PS_AS_INT(diff) == d32) & (1u << j);                                                  \
    }                                                                                                    \
    if (d > 0x7fffffffL) { /* every code difference is below Mb - Ma */                                  \
      lt = (ps_vw)(0xffffffffu);                                                                         \
      eq = 0;                                                                                            \
    } else if (d < -0x80000000L) { /* every code difference is above it */                              \
      lt = 0;                                                                                            \
      eq = 0;                                                                                            \
    }                                                                                                    \
    return ps_cmp_end(x, insn, sa, sb, valid_a, valid_b, lt, eq, bad_a, bad_b);                          \
  }

PS_WORDS_WIDTHS(PS_DEFINE_WIDTH)
PS_WORDS_SETS(PS_DEFINE_SET)
PS_WORDS_PAIRS(PS_DEFINE_PAIR)
PS_WORDS_PAIRS32(PS_DEFINE_PAIR32)

/* ---- staging (GPU) ----------------------------------------------------------
 * PS_STAGE_LOAD(slot, W, v): this work-item's share of the tile's 16-byte
 * vectors of column `slot` (vector m * WG + lid, m < PS_VECS(W)) into the
 * private array v; PS_STAGE_STORE(W, off, v): them into the tile, stream word
 * i of the tile at off + (i / W) * S + i % W. Uses `x`, `tile` and `lid`. */
#define PS_VECS(W) (((W) + 3) / 4)
#define PS_STAGE_LOAD(slot, W, v)                                                                                \
  {                                                                                                              \
    const ps_region r_ = {x.data[slot], launch->data_offset[slot], launch->prog.cols[slot].data_bytes};          \
    const ulong base_ = x.g - lid; /* the tile's first result word */                                            \
    const int aligned_ = (r_.offset & 15) == 0;                                                                  \
    __global const uint4 *vec_ = (__global const uint4 *)(r_.buf + r_.offset);                                   \
    _Pragma("unroll") for (int m_ = 0; m_ < PS_VECS(W); ++m_) {                                                  \
      const uint i4_ = m_ * PS_WORDS_WG + lid;                                                                   \
      const ulong word_ = base_ * (W) + 4 * (ulong)i4_;                                                          \
      v[m_] = (uint4)(0);                                                                                        \
      if (i4_ < PS_WORDS_WG * (W) / 4) {                                                                         \
        if (aligned_ && (word_ + 4) * 4 <= r_.size)                                                              \
          v[m_] = vec_[word_ / 4];                                                                               \
        else if (word_ * 4 < r_.size)                                                                            \
          v[m_] = (uint4)(ps_load_word(r_, word_), ps_load_word(r_, word_ + 1), ps_load_word(r_, word_ + 2),     \
                          ps_load_word(r_, word_ + 3));                                                          \
      }                                                                                                          \
    }                                                                                                            \
  }
#define PS_STAGE_STORE(W, off, v)                                                   \
  {                                                                                 \
    _Pragma("unroll") for (int m_ = 0; m_ < PS_VECS(W); ++m_) {                     \
      const uint i4_ = m_ * PS_WORDS_WG + lid;                                      \
      if (i4_ < PS_WORDS_WG * (W) / 4) {                                            \
        const uint xs_[4] = {v[m_].x, v[m_].y, v[m_].z, v[m_].w};                   \
        _Pragma("unroll") for (uint q_ = 0; q_ < 4; ++q_) {                         \
          const uint i_ = 4 * i4_ + q_;                                             \
          tile[(off) + (i_ / (W)) * PS_STRIDE(W) + i_ % (W)] = xs_[q_];             \
        }                                                                           \
      }                                                                             \
    }                                                                               \
  }

/* ---- entry point ------------------------------------------------------------
 * Arguments as filter.cl's ps_filter_words (launch.h's PS_FILTER_ARG_*), so
 * the host binds both kernels alike. */

#define PS_WORDS_PARAMS                                                                                        \
  __constant ps_filter_launch *launch, ps_bytes d0, ps_bytes d1, ps_bytes d2, ps_bytes d3, ps_bytes d4,          \
      ps_bytes d5, ps_bytes d6, ps_bytes d7, ps_bytes d8, ps_bytes d9, ps_bytes d10, ps_bytes d11, ps_bytes d12, \
      ps_bytes d13, ps_bytes d14, ps_bytes d15, ps_bytes v0, ps_bytes v1, ps_bytes v2, ps_bytes v3, ps_bytes v4, \
      ps_bytes v5, ps_bytes v6, ps_bytes v7, ps_bytes v8, ps_bytes v9, ps_bytes v10, ps_bytes v11, ps_bytes v12, \
      ps_bytes v13, ps_bytes v14, ps_bytes v15, ps_bytes aux, ps_bytes selection, __global uchar *bitmap,       \
      __global uchar *mask, volatile __global uint *status, __local uint *scratch

#define PS_WORDS_SETUP                                                                                         \
  const ps_bytes data[PS_MAX_COLS] = {d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13, d14, d15};   \
  const ps_bytes validity[PS_MAX_COLS] = {v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15}; \
  ps_wctx x;                                                                                                   \
  x.launch = launch;                                                                                           \
  x.aux = (__global const uint *)(aux + launch->aux_offset);                                                   \
  x.data = data;                                                                                               \
  x.validity = validity;                                                                                       \
  x.corrupt = 0;                                                                                               \
  const ulong rows = launch->rows, words = (rows + 31) / 32;                                                   \
  const ps_region sel_ = {selection, launch->selection_offset, (rows + 7) / 8};                               \
  ps_vw T[PS_WORDS_DEPTH], F[PS_WORDS_DEPTH];                                                                  \
  ps_truthv R;

#ifndef PS_WORDS_DIRECT

__kernel __attribute__((reqd_work_group_size(PS_WORDS_WG, 1, 1))) void ps_filter_words(PS_WORDS_PARAMS) {
  PS_WORDS_SETUP
  __local uint tile[PS_WORDS_TILE];
  const uint lid = get_local_id(0);
  x.tile = tile;
  x.lid = lid;
  x.g = (ulong)get_group_id(0) * PS_WORDS_WG + lid;
  PS_WORDS_STAGE
  barrier(CLK_LOCAL_MEM_FENCE);
  uint selected = 0;
  if (x.g < words) {
    /* The selection may be the bitmap itself (in-place refinement): word g
     * is read here, by the work-item that writes it, before it is written. */
    x.rows = ps_row_mask(rows, x.g);
    if (launch->has_selection) x.rows &= ps_load_word(sel_, x.g);
    if (x.rows != 0) {
      PS_WORDS_BODY
      selected = T[0] & x.rows;
    }
    if (launch->want_bitmap) ps_store_word(bitmap, launch->bitmap_offset, (rows + 7) / 8, x.g, selected);
    if (launch->want_mask) ps_store_mask(mask, launch->mask_offset, rows, x.g, selected);
    if (x.corrupt) atomic_or(&status[PS_FILTER_STATUS_CORRUPT], x.corrupt);
  }
  const uint group_count = ps_group_sum(popcount(selected), scratch);
  if (launch->want_count && lid == 0 && group_count != 0) atomic_add(&status[PS_FILTER_STATUS_COUNT], group_count);
}

#else /* PS_WORDS_DIRECT */

#if PS_WORDS_R % 16 != 0
#error "PS_WORDS_R must be a multiple of 16"
#endif

__kernel __attribute__((reqd_work_group_size(PS_WORDS_WG, 1, 1))) void ps_filter_words(PS_WORDS_PARAMS) {
  PS_WORDS_SETUP
  (void)scratch;
  const ulong first = (ulong)get_global_id(0) * PS_WORDS_R;
  const ulong out_bytes = (rows + 7) / 8;
  uint selected = 0;
  for (int v = 0; v < PS_WORDS_R / 16; ++v) {
    x.g = first + 16 * v;
    if (x.g >= words) break;
    /* As on the GPU, the selection words are read before the same words of
     * the output are written (in-place refinement). */
    x.rows = ps_rows_of(rows, x.g);
    if (launch->has_selection) x.rows &= ps_bitmap_words(sel_, x.g);
    ps_vw result = 0;
    if (ps_any(x.rows)) {
      PS_WORDS_BODY
      result = T[0] & x.rows;
    }
    if (launch->want_bitmap) {
      if ((launch->bitmap_offset & 3) == 0 && (x.g + 16) * 4 <= out_bytes) {
        vstore16(result, 0, (__global uint *)(bitmap + launch->bitmap_offset) + x.g);
      } else {
        uint b[16];
        vstore16(result, 0, b);
        for (int i = 0; i < 16; ++i) ps_store_word(bitmap, launch->bitmap_offset, out_bytes, x.g + i, b[i]);
      }
    }
    if (launch->want_mask) {
      uint b[16];
      vstore16(result, 0, b);
      for (int i = 0; i < 16 && x.g + i < words; ++i) ps_store_mask(mask, launch->mask_offset, rows, x.g + i, b[i]);
    }
    selected += ps_count(result);
  }
  if (x.corrupt) atomic_or(&status[PS_FILTER_STATUS_CORRUPT], x.corrupt);
  /* One atomic per work-item, no barrier (range.cl's CPU variant measured
   * this faster on PoCL than a group sum). */
  if (launch->want_count && selected != 0) atomic_add(&status[PS_FILTER_STATUS_COUNT], selected);
}

#endif /* PS_WORDS_DIRECT */
