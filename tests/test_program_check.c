/*
 * program_check: the core's one check of a lowered program
 * (core/program_check.c), on hand-built programs, since the public API never
 * builds a bad one: a program using every opcode passes, and each broken
 * field (counts, slots, widths, kinds, flags, a non-canonical range, tables
 * past the aux words, unsorted or overlapping in-list intervals, rank
 * compares of signed slots, float descriptors of column compares: their
 * mode, place, map, slot, exponents, factors and exception order; the stack
 * discipline, stack_depth) is
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

/* A column compare of two lossless float slots (ps_program.h's float
 * descriptors): slot 0 an ALP float64 column (e 2, f 1, rank_bits 2) with
 * exceptions at codes 0 and 5, descriptor at word 0 (17 words); slot 1 an
 * ordered-bits float32 column, descriptor at word 17 (9 words). */
static uint32_t faux[26];

static ps_program float_program(void) {
  ps_program p;
  memset(&p, 0, sizeof p);
  p.n_cols = 2;
  p.cols[0] = (ps_prog_col){.code_limit = 255, .width = 8, .kind = PS_KIND_UNSIGNED};
  p.cols[1] = (ps_prog_col){.code_limit = 1023, .width = 10, .kind = PS_KIND_UNSIGNED};
  p.aux_words = 26;
  static const ps_float_exception exc[2] = {{0, 0xfff0000000000000ull}, {5, 0x3fd3333333333334ull}};
  const ps_fmap alp = {PS_FLOAT_MAP_ALP, 2, 1, 2, false, (uint64_t)-3, exc, 2};
  const ps_fmap bits = {PS_FLOAT_MAP_BITS, 0, 0, 0, true, 0x7f000000u, NULL, 0};
  memset(faux, 0, sizeof faux);
  ps_fmap_desc_write(&alp, faux);
  ps_fmap_desc_write(&bits, faux + 17);
  p.insns[0] = (ps_insn){.op = PS_OP_CMPCOL,
                         .col_a = 0,
                         .col_b = 1,
                         .aux_a = 0,
                         .aux_b = 17,
                         .flags = PS_INSN_MAKE_CMP(PS_CMP_GE, PS_MODE_DOUBLE) | PS_INSN_FMAP_A | PS_INSN_FMAP_B};
  p.n_insns = 1;
  p.stack_depth = 1;
  return p;
}

static void expect_bad_float(const ps_program *p, const char *what, const char *needle) {
  th_case("%s", what);
  ps_status st = ps_program_check(ctx, p, faux);
  CHECKF(st == PS_ERR_INTERNAL, "%s: %s (%s), want PS_ERR_INTERNAL", what, ps_status_name(st),
         ps_context_last_error(ctx));
  CHECKF(strstr(ps_context_last_error(ctx), needle) != NULL, "%s: message '%s' does not name '%s'", what,
         ps_context_last_error(ctx), needle);
}

#define MUTATE_FLOAT(what, needle, stmt) \
  do {                                   \
    ps_program p = float_program();      \
    stmt;                                \
    expect_bad_float(&p, what, needle);  \
  } while (0)

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
    th_case("a valid float column compare");
    ps_program p = float_program();
    CHECK_OK(ctx, ps_program_check(ctx, &p, faux));
    p.insns[0].flags &= ~PS_INSN_FMAP_B, p.cols[1].kind = PS_KIND_SIGNED; /* b decoded as an integer */
    CHECK_OK(ctx, ps_program_check(ctx, &p, faux));
  }
  MUTATE_FLOAT("float descriptor in mode INT", "float descriptor flags 0x3000 in mode 0",
               p.insns[0].flags = PS_INSN_MAKE_CMP(PS_CMP_GE, PS_MODE_INT) | PS_INSN_FMAP_A | PS_INSN_FMAP_B);
  MUTATE_FLOAT("float descriptor in mode RANK", "float descriptor flags 0x2000 in mode 2",
               p.insns[0].flags = PS_INSN_MAKE_CMP(PS_CMP_GE, PS_MODE_RANK) | PS_INSN_FMAP_B);
  MUTATE_FLOAT("float descriptor past aux", "float descriptor b at word 18 overruns 26", p.insns[0].aux_b = 18);
  MUTATE_FLOAT("float descriptor's exceptions past aux", "2 exceptions at word 9 overrun 16",
               (p.insns[0].aux_b = 0, p.aux_words = 16));
  MUTATE_FLOAT("float descriptor: map 3", "descriptor a has map word 0x3", faux[0] = 3);
  MUTATE_FLOAT("float descriptor: map 0 (decimal)", "descriptor b has map word 0x100", faux[17] = 0x100);
  MUTATE_FLOAT("float descriptor: float32 flag 2", "map word 0x201", faux[0] = 0x201);
  MUTATE_FLOAT("float descriptor on a signed slot", "on slot 0 of kind 0", p.cols[0].kind = PS_KIND_SIGNED);
  MUTATE_FLOAT("float descriptor on a float64 slot", "on slot 1 of kind 2", p.cols[1].kind = PS_KIND_FLOAT64);
  MUTATE_FLOAT("float descriptor on a slot with a reference", "reference 7", p.cols[0].reference = 7);
  MUTATE_FLOAT("bits descriptor with ALP words", "word 4 = 0x1", faux[17 + 4] = 1);
  MUTATE_FLOAT("rank_bits 64", "rank_bits 64", faux[1] = 64 | 2 << 8 | 1 << 16);
  MUTATE_FLOAT("e 19", "e 19, f 1", faux[1] = 2 | 19 << 8 | 1 << 16);
  MUTATE_FLOAT("f above e", "e 2, f 3", faux[1] = 2 | 2 << 8 | 3 << 16);
  MUTATE_FLOAT("float32 e 11", "e 11, f 0", (faux[0] |= 1u << 8, faux[1] = 2 | 11 << 8));
  MUTATE_FLOAT("float32 flag with float64 factors", "are not 10^1 and 10^-2", faux[0] |= 1u << 8);
  MUTATE_FLOAT("factor 10^f wrong", "are not 10^1 and 10^-2", faux[2] ^= 1);
  MUTATE_FLOAT("factor 10^-e wrong", "are not 10^1 and 10^-2", faux[5] ^= 1);
  MUTATE_FLOAT("exceptions out of order", "exception 1 has code 0", faux[9 + 4] = 0);
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
