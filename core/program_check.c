/* The one check of a lowered program (ps_program.h), made once per lowered
 * expression (evaluate.c) before any backend sees it: slots, opcodes, flags,
 * the stack discipline, the canonical range form, and every aux table inside
 * the aux words. Backends take programs that passed it and do not check them
 * again. Lowering never makes a program that fails, so a failure is
 * PS_ERR_INTERNAL with the reason.
 *
 * Also the layout pins of the structures that C, CUDA and OpenCL C all read. */
#include <inttypes.h>
#include <stddef.h>

#include "internal.h"

#define BAD(...) ps_set_error(ctx, PS_ERR_INTERNAL, "invalid lowered program: " __VA_ARGS__)

static ps_status check_cols(ps_context *ctx, const ps_program *p) {
  for (uint32_t c = 0; c < p->n_cols; c++) {
    const ps_prog_col *col = &p->cols[c];
    if (col->width > 64) return BAD("slot %u has width %u", c, col->width);
    if (col->kind > PS_KIND_FLOAT32) return BAD("slot %u has kind %u", c, col->kind);
    if (col->scale > 18) return BAD("slot %u has scale %u", c, (unsigned)col->scale);
    if (col->encoding > PS_ENC_DELTA) return BAD("slot %u has encoding %u", c, (unsigned)col->encoding);
    if (col->flags & ~(PS_COLF_VALIDITY | PS_COLF_NO_CODES)) return BAD("slot %u has flags 0x%x", c, col->flags);
    if (col->code_limit > ps_width_mask(col->width))
      return BAD("slot %u has code limit %" PRIu64 " above its width %u", c, col->code_limit, col->width);
  }
  return PS_OK;
}

/* A table of `words` words at word offset `at` lies inside the aux words. */
static bool aux_holds(const ps_program *p, uint64_t at, uint64_t words) {
  return at <= p->aux_words && words <= p->aux_words - at;
}

/* The float descriptor of operand `side` (a or b) of column compare i at
 * word `at` (ps_program.h): inside the aux words, a mapping the slot can
 * hold, factors that are 10^f and 10^-e, an exception table whose codes
 * ascend (the kernels' binary search needs that). */
static ps_status check_fdesc(ps_context *ctx, const ps_program *p, uint32_t i, char side, uint32_t slot, uint64_t at,
                             const uint32_t *aux) {
  if (!aux_holds(p, at, PS_FDESC_HEAD))
    return BAD("instruction %u: float descriptor %c at word %" PRIu64 " overruns %u aux words", i, side, at,
               p->aux_words);
  const uint32_t *d = aux + at;
  const uint32_t map = d[0] & 0xffu, f32 = d[0] >> 8;
  if ((map != PS_FDESC_ALP && map != PS_FDESC_BITS) || f32 > 1u)
    return BAD("instruction %u: float descriptor %c has map word 0x%x (expected map %u or %u, float32 flag 0 or 1)", i,
               side, d[0], PS_FDESC_ALP, PS_FDESC_BITS);
  if (p->cols[slot].kind != PS_KIND_UNSIGNED || p->cols[slot].reference != 0)
    return BAD("instruction %u: float descriptor %c on slot %u of kind %u, reference %" PRIu64
               " (a lossless float column's slot holds its codes: kind %u, reference 0)",
               i, side, slot, p->cols[slot].kind, p->cols[slot].reference, PS_KIND_UNSIGNED);
  if (map == PS_FDESC_BITS) {
    for (uint32_t w = 1; w < PS_FDESC_HEAD; w++)
      if (w != 6 && w != 7 && d[w])
        return BAD("instruction %u: float descriptor %c (bits mapping) has word %u = 0x%x (expected 0)", i, side, w,
                   d[w]);
    return PS_OK;
  }
  const uint32_t rank_bits = d[1] & 0xffu, e = (d[1] >> 8) & 0xffu, f = (d[1] >> 16) & 0xffu;
  uint64_t mul, frac;
  if (rank_bits > 63 || (d[1] >> 24) || !ps_fmap_factor_bits(e, f, f32 != 0, &mul, &frac))
    return BAD(
        "instruction %u: float descriptor %c has rank_bits %u, e %u, f %u (word 0x%x; expected rank_bits <= "
        "63 and 0 <= f <= e <= %u)",
        i, side, rank_bits, e, f, d[1], f32 ? 10u : 18u);
  if ((d[2] | (uint64_t)d[3] << 32) != mul || (d[4] | (uint64_t)d[5] << 32) != frac)
    return BAD("instruction %u: float descriptor %c's factors 0x%016" PRIx64 ", 0x%016" PRIx64
               " are not 10^%u and 10^-%u (0x%016" PRIx64 ", 0x%016" PRIx64 ")",
               i, side, d[2] | (uint64_t)d[3] << 32, d[4] | (uint64_t)d[5] << 32, f, e, mul, frac);
  const uint64_t n = d[8];
  if (!aux_holds(p, at + PS_FDESC_HEAD, PS_FDESC_ENTRY * n))
    return BAD("instruction %u: float descriptor %c's %" PRIu64 " exceptions at word %" PRIu64 " overrun %u aux words",
               i, side, n, at + PS_FDESC_HEAD, p->aux_words);
  for (uint64_t k = 1; k < n; k++) {
    const uint32_t *x = d + PS_FDESC_HEAD + PS_FDESC_ENTRY * k;
    const uint64_t code = x[0] | (uint64_t)x[1] << 32, prev = x[-4] | (uint64_t)x[-3] << 32;
    if (code <= prev)
      return BAD("instruction %u: float descriptor %c's exception %" PRIu64 " has code %" PRIu64
                 ", not above the one before (%" PRIu64 ")",
                 i, side, k, code, prev);
  }
  return PS_OK;
}

static ps_status check_leaf(ps_context *ctx, const ps_program *p, uint32_t i, const uint32_t *aux) {
  const ps_insn *in = &p->insns[i];
  const uint32_t cmpcol_flags = PS_INSN_CMPCOL_SHAPE;
  if (in->col_a >= p->n_cols) return BAD("instruction %u reads slot %u of %u", i, in->col_a, p->n_cols);
  const ps_prog_col *a = &p->cols[in->col_a];
  const uint64_t codes = (a->flags & PS_COLF_NO_CODES) ? 0 : a->code_limit + 1;
  if (in->op != PS_OP_CMPCOL && (in->flags & ~PS_INSN_NEGATE))
    return BAD("instruction %u (opcode %u) has flags 0x%x", i, in->op, in->flags);
  switch (in->op) {
    case PS_OP_RANGE:
      /* canonical: lo <= hi <= code limit (an empty range is the full range negated) */
      if (in->lo > in->hi || in->hi > a->code_limit)
        return BAD("instruction %u: range [%" PRIu64 ", %" PRIu64 "] is not within [0, %" PRIu64 "]", i, in->lo, in->hi,
                   a->code_limit);
      return PS_OK;
    case PS_OP_SET:
      if ((uint64_t)in->aux_a + codes > 32 * (uint64_t)p->aux_words)
        return BAD("instruction %u: a bitmap of %" PRIu64 " codes at bit %u overruns %u aux words", i, codes, in->aux_a,
                   p->aux_words);
      return PS_OK;
    case PS_OP_INLIST: {
      if (in->lo == 0 || !aux_holds(p, in->aux_a, 4 * in->lo))
        return BAD("instruction %u: a list of %" PRIu64 " intervals at word %u overruns %u aux words", i, in->lo,
                   in->aux_a, p->aux_words);
      uint64_t prev_last = 0;
      for (uint64_t k = 0; k < in->lo; k++) {
        const uint32_t *w = aux + in->aux_a + 4 * k;
        uint64_t first = w[0] | ((uint64_t)w[1] << 32), last = w[2] | ((uint64_t)w[3] << 32);
        if (first > last || last > a->code_limit || (k && first <= prev_last))
          return BAD("instruction %u: interval %" PRIu64 " [%" PRIu64 ", %" PRIu64
                     "] is not sorted, disjoint and "
                     "within [0, %" PRIu64 "]",
                     i, k, first, last, a->code_limit);
        prev_last = last;
      }
      return PS_OK;
    }
    case PS_OP_ISNULL:
      return PS_OK;
    case PS_OP_CMPCOL: {
      if (in->col_b >= p->n_cols) return BAD("instruction %u reads slot %u of %u", i, in->col_b, p->n_cols);
      uint32_t mode = PS_INSN_MODE(in->flags);
      if ((in->flags & ~cmpcol_flags) || PS_INSN_CMP(in->flags) > PS_CMP_GE || mode > PS_MODE_RANK)
        return BAD("instruction %u (column compare) has flags 0x%x", i, in->flags);
      if ((in->flags & (PS_INSN_FMAP_A | PS_INSN_FMAP_B)) && mode != PS_MODE_DOUBLE)
        return BAD("instruction %u (column compare) has float descriptor flags 0x%x in mode %u (only %u)", i,
                   in->flags & (PS_INSN_FMAP_A | PS_INSN_FMAP_B), mode, PS_MODE_DOUBLE);
      if (mode == PS_MODE_RANK) {
        const ps_prog_col *b = &p->cols[in->col_b];
        const uint64_t codes_b = (b->flags & PS_COLF_NO_CODES) ? 0 : b->code_limit + 1;
        if (a->kind != PS_KIND_UNSIGNED || b->kind != PS_KIND_UNSIGNED)
          return BAD("instruction %u compares ranks of slots of kinds %u and %u", i, a->kind, b->kind);
        if (!aux_holds(p, in->aux_a, codes) || !aux_holds(p, in->aux_b, codes_b))
          return BAD("instruction %u: rank tables at words %u and %u overrun %u aux words", i, in->aux_a, in->aux_b,
                     p->aux_words);
      }
      if (in->flags & PS_INSN_FMAP_A) PS_TRY(check_fdesc(ctx, p, i, 'a', in->col_a, in->aux_a, aux));
      if (in->flags & PS_INSN_FMAP_B) PS_TRY(check_fdesc(ctx, p, i, 'b', in->col_b, in->aux_b, aux));
      return PS_OK;
    }
  }
  return BAD("instruction %u has opcode %u", i, in->op);
}

ps_status ps_program_check(ps_context *ctx, const ps_program *p, const uint32_t *aux) {
  if (p->n_insns == 0 || p->n_insns > PS_MAX_INSNS)
    return BAD("%u instructions (expected 1..%d)", p->n_insns, PS_MAX_INSNS);
  if (p->n_cols > PS_MAX_COLS) return BAD("%u column slots (at most %d)", p->n_cols, PS_MAX_COLS);
  if (p->aux_words && !aux) return BAD("%u aux words but no table", p->aux_words);
  PS_TRY(check_cols(ctx, p));
  uint32_t depth = 0, peak = 0;
  for (uint32_t i = 0; i < p->n_insns; i++) {
    const ps_insn *in = &p->insns[i];
    switch (in->op) {
      case PS_OP_AND:
      case PS_OP_OR:
      case PS_OP_NOT:
        if (in->flags) return BAD("instruction %u (opcode %u) has flags 0x%x", i, in->op, in->flags);
        if (depth < (in->op == PS_OP_NOT ? 1u : 2u)) return BAD("instruction %u (opcode %u) lacks operands", i, in->op);
        if (in->op != PS_OP_NOT) depth--;
        break;
      default:
        PS_TRY(check_leaf(ctx, p, i, aux));
        if (++depth > peak) peak = depth;
        if (depth > PS_MAX_STACK) return BAD("stack deeper than %d at instruction %u", PS_MAX_STACK, i);
        break;
    }
  }
  if (depth != 1) return BAD("%u values left on the stack (expected 1)", depth);
  if (p->stack_depth != peak) return BAD("stack_depth is %u; the instructions reach %u", p->stack_depth, peak);
  return PS_OK;
}

#undef BAD

/* The program layout is read by C, CUDA and OpenCL C alike: pin it. */
_Static_assert(PS_FDESC_ALP == PS_FLOAT_MAP_ALP && PS_FDESC_BITS == PS_FLOAT_MAP_BITS, "float descriptor maps");
_Static_assert(sizeof(ps_prog_col) == 48, "ps_prog_col layout");
_Static_assert(sizeof(ps_insn) == 40, "ps_insn layout");
_Static_assert(offsetof(ps_insn, lo) == 24, "ps_insn.lo offset");
_Static_assert(offsetof(ps_program, cols) == 16, "ps_program.cols offset");
_Static_assert(offsetof(ps_program, insns) == 16 + 48 * PS_MAX_COLS, "ps_program.insns offset");
_Static_assert(sizeof(ps_program) == 16 + 48 * PS_MAX_COLS + 40 * PS_MAX_INSNS, "ps_program size");
