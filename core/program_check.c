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

static ps_status check_leaf(ps_context *ctx, const ps_program *p, uint32_t i, const uint32_t *aux) {
  const ps_insn *in = &p->insns[i];
  const uint32_t cmpcol_flags = PS_INSN_MAKE_CMP(15u, 15u);
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
      if (mode == PS_MODE_RANK) {
        const ps_prog_col *b = &p->cols[in->col_b];
        const uint64_t codes_b = (b->flags & PS_COLF_NO_CODES) ? 0 : b->code_limit + 1;
        if (a->kind != PS_KIND_UNSIGNED || b->kind != PS_KIND_UNSIGNED)
          return BAD("instruction %u compares ranks of slots of kinds %u and %u", i, a->kind, b->kind);
        if (!aux_holds(p, in->aux_a, codes) || !aux_holds(p, in->aux_b, codes_b))
          return BAD("instruction %u: rank tables at words %u and %u overrun %u aux words", i, in->aux_a, in->aux_b,
                     p->aux_words);
      }
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
_Static_assert(sizeof(ps_prog_col) == 48, "ps_prog_col layout");
_Static_assert(sizeof(ps_insn) == 40, "ps_insn layout");
_Static_assert(offsetof(ps_insn, lo) == 24, "ps_insn.lo offset");
_Static_assert(offsetof(ps_program, cols) == 16, "ps_program.cols offset");
_Static_assert(offsetof(ps_program, insns) == 16 + 48 * PS_MAX_COLS, "ps_program.insns offset");
_Static_assert(sizeof(ps_program) == 16 + 48 * PS_MAX_COLS + 40 * PS_MAX_INSNS, "ps_program size");
