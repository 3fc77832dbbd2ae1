/*
 * program_check: the core's one check of a lowered program
 * (core/program_check.c), on hand-built programs, since the public API never
 * builds a bad one: a program using every opcode passes, and each broken
 * field (counts, slots, widths, kinds, flags, a non-canonical range, tables
 * past the aux words, unsorted or overlapping in-list intervals, rank
 * compares of signed slots, the stack discipline, stack_depth) is
 * PS_ERR_INTERNAL naming what is wrong. Backends rely on this check and do
 * not repeat it.
 */
#include <string.h>

#include "harness.h"
#include "internal.h"

static ps_context *ctx;

/* slots: 0 int32 w=10 limit 1023; 1 dictionary codes w=4 limit 9 with
 * validity; 2 dictionary codes w=3 limit 7. aux: SET bitmap of slot 1 at
 * word 0 (bits 0..9), in-list of 2 intervals at word 1, rank tables at words
 * 9 (10 words) and 19 (8 words). */
static uint32_t aux[27];

static ps_program valid_program(void) {
  ps_program p;
  memset(&p, 0, sizeof p);
  p.n_cols = 3;
  p.cols[0] = (ps_prog_col){.reference = (uint64_t)-5, .code_limit = 1023, .width = 10, .kind = PS_KIND_SIGNED};
  p.cols[1] = (ps_prog_col){.code_limit = 9, .width = 4, .kind = PS_KIND_UNSIGNED, .flags = PS_COLF_VALIDITY};
  p.cols[2] = (ps_prog_col){.code_limit = 7, .width = 3, .kind = PS_KIND_UNSIGNED};
  p.aux_words = 27;
  memset(aux, 0, sizeof aux);
  /* interval k at words 1 + 4k: first low, first high, last low, last high */
  aux[1] = 2, aux[3] = 5;     /* [2, 5] */
  aux[5] = 100, aux[7] = 200; /* [100, 200] */
  uint32_t n = 0;
  p.insns[n++] = (ps_insn){.op = PS_OP_RANGE, .col_a = 0, .lo = 0, .hi = 1023, .flags = PS_INSN_NEGATE};
  p.insns[n++] = (ps_insn){.op = PS_OP_SET, .col_a = 1, .aux_a = 0};
  p.insns[n++] = (ps_insn){.op = PS_OP_AND};
  p.insns[n++] = (ps_insn){.op = PS_OP_INLIST, .col_a = 0, .aux_a = 1, .lo = 2};
  p.insns[n++] = (ps_insn){.op = PS_OP_NOT};
  p.insns[n++] = (ps_insn){.op = PS_OP_CMPCOL,
                           .col_a = 1,
                           .col_b = 2,
                           .aux_a = 9,
                           .aux_b = 19,
                           .flags = PS_INSN_MAKE_CMP(PS_CMP_LT, PS_MODE_RANK)};
  p.insns[n++] = (ps_insn){.op = PS_OP_ISNULL, .col_a = 2, .flags = PS_INSN_NEGATE};
  p.insns[n++] = (ps_insn){.op = PS_OP_OR};
  p.insns[n++] = (ps_insn){.op = PS_OP_OR};
  p.insns[n++] = (ps_insn){.op = PS_OP_AND};
  p.n_insns = n;
  p.stack_depth = 4;
  return p;
}

static void expect_bad(const ps_program *p, const char *what, const char *needle) {
  th_case("%s", what);
  ps_status st = ps_program_check(ctx, p, aux);
  CHECKF(st == PS_ERR_INTERNAL, "%s: %s (%s), want PS_ERR_INTERNAL", what, ps_status_name(st),
         ps_context_last_error(ctx));
  CHECKF(strstr(ps_context_last_error(ctx), needle) != NULL, "%s: message '%s' does not name '%s'", what,
         ps_context_last_error(ctx), needle);
}

#define MUTATE(what, needle, stmt)  \
  do {                              \
    ps_program p = valid_program(); \
    stmt;                           \
    expect_bad(&p, what, needle);   \
  } while (0)

int main(int argc, char **argv) {
  th_init(argc, argv, "program_check");
  ctx = th_reference_context(0);
  th_case("a valid program");
  ps_program good = valid_program();
  CHECK_OK(ctx, ps_program_check(ctx, &good, aux));

  MUTATE("no instructions", "0 instructions", p.n_insns = 0);
  MUTATE("65 instructions", "65 instructions", p.n_insns = 65);
  MUTATE("17 slots", "17 column slots", p.n_cols = 17);
  MUTATE("width 65", "slot 0 has width 65", p.cols[0].width = 65);
  MUTATE("kind 4", "slot 2 has kind 4", p.cols[2].kind = 4);
  MUTATE("scale 19", "slot 0 has scale 19", p.cols[0].scale = 19);
  MUTATE("unknown column flag", "slot 1 has flags 0x5", p.cols[1].flags = 5);
  MUTATE("code limit above the width", "code limit 1024 above its width 10", p.cols[0].code_limit = 1024);
  MUTATE("empty range as lo > hi", "range [1, 0] is not within [0, 1023]", (p.insns[0].lo = 1, p.insns[0].hi = 0));
  MUTATE("range past the code limit", "range [0, 1024]", p.insns[0].hi = 1024);
  MUTATE("range with a compare flag", "has flags 0x21", p.insns[0].flags = PS_INSN_MAKE_CMP(PS_CMP_LT, 0) | 1);
  MUTATE("slot past n_cols", "reads slot 3 of 3", p.insns[1].col_a = 3);
  MUTATE("SET bitmap past aux", "a bitmap of 10 codes at bit 857", p.insns[1].aux_a = 857);
  MUTATE("empty in-list", "a list of 0 intervals", p.insns[3].lo = 0);
  MUTATE("in-list past aux", "a list of 7 intervals at word 1", p.insns[3].lo = 7);
  MUTATE("in-list unsorted", "interval 1 [1, 200]", aux[5] = 1);
  MUTATE("in-list overlapping", "interval 1 [5, 200]", aux[5] = 5);
  MUTATE("in-list past the code limit", "interval 1 [100, 1024]", aux[7] = 1024);
  MUTATE("in-list interval reversed", "interval 0 [2, 1]", aux[3] = 1);
  MUTATE("column compare: col_b past n_cols", "reads slot 4 of 3", p.insns[5].col_b = 4);
  MUTATE("column compare: cmp 6", "has flags", p.insns[5].flags = PS_INSN_MAKE_CMP(6, PS_MODE_RANK));
  MUTATE("column compare: mode 3", "has flags", p.insns[5].flags = PS_INSN_MAKE_CMP(PS_CMP_LT, 3));
  MUTATE("column compare: stray flag", "has flags 0x221", p.insns[5].flags |= 1);
  MUTATE("rank compare of a signed slot", "ranks of slots of kinds 0 and 1", p.insns[5].col_a = 0);
  MUTATE("rank table past aux", "rank tables at words 9 and 20", p.insns[5].aux_b = 20);
  MUTATE("unknown opcode", "opcode 9", p.insns[6].op = 9);
  MUTATE("AND with one operand", "lacks operands", (p.insns[2] = p.insns[1], p.insns[1].op = PS_OP_AND));
  MUTATE("operator with a flag", "has flags 0x1", p.insns[4].flags = 1);
  MUTATE("two values left", "2 values left", p.n_insns = 9);
  MUTATE("stack_depth wrong", "stack_depth is 5; the instructions reach 4", p.stack_depth = 5);
  {
    th_case("aux words without a table");
    ps_program p = valid_program();
    CHECK_STATUS(ctx, ps_program_check(ctx, &p, NULL), PS_ERR_INTERNAL);
    CHECK(strstr(ps_context_last_error(ctx), "27 aux words but no table") != NULL);
  }
  {
    th_case("a stack of 17");
    ps_program p;
    memset(&p, 0, sizeof p);
    p.n_cols = 1;
    p.cols[0] = (ps_prog_col){.code_limit = 1, .width = 1, .kind = PS_KIND_UNSIGNED};
    for (uint32_t i = 0; i < 17; i++) p.insns[i] = (ps_insn){.op = PS_OP_ISNULL};
    for (uint32_t i = 17; i < 33; i++) p.insns[i] = (ps_insn){.op = PS_OP_AND};
    p.n_insns = 33;
    p.stack_depth = 17;
    expect_bad(&p, "a stack of 17", "stack deeper than 16 at instruction 16");
  }
  ps_context_destroy(ctx);
  return th_finish();
}
