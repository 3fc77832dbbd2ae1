/*
 * The per-row interpreter of the flat program (core/ps_program.h, whose
 * comment is the binding per-row semantics), written once for OpenCL's
 * filter.cl (a work-item per 32-row result word, calling it per row), CUDA's
 * eval_rows_kernel (a thread per row, kernels_cuda/ps_cuda_rows.cuh) and the
 * host tests. OpenCL C, CUDA C++, C11.
 *
 * One row's program runs on two 32-bit bit-stacks (bit 0 the top): T the
 * is_true bits, F the is_false bits; a value in neither is UNKNOWN (Kleene
 * logic). PS_MAX_STACK (16) fits and nothing is indexed at run time, so on
 * CUDA nothing spills to local memory. Codes are read through ps_codes.h's
 * ps_col_code_at, validity through ps_col_valid_at, aux words through
 * ps_cmpcol.h.
 *
 * The includer says where a launch keeps its columns, before including this
 * file:
 *   ps_rows_src             the type of what a launch passes (a pointer to it
 *                           reaches every function here)
 *   PS_ROWS_PROG(s)         its program (PS_CONST_MEM const ps_program *)
 *   PS_ROWS_DATA(s, c)      slot c's packed stream at the chunk start
 *   PS_ROWS_ALIGNED(s, c)   whether that stream is 4-byte aligned
 *   PS_ROWS_VALIDITY(s, c)  slot c's validity bitmap at the chunk start
 *   PS_ROWS_AUX(s)          the program's aux words (ps_dialect.h's ps_aux_words)
 *   PS_ROWS_POW10(s, c)     10^scale of slot c (PS_CONST_MEM const double *;
 *                           OpenCL: only with PS_HAVE_FP64)
 *   PS_ROWS_AUX_FAULT       the status bit of an aux index past the aux words
 * and may define, as OpenCL's specialized filter builds do (the shape text of
 * backends/opencl/opencl_eval.c), the instruction count and the opcode, flags
 * and slots of instruction i as compile-time constants (PS_ROWS_N_INSNS,
 * PS_ROWS_OP, PS_ROWS_FLAGS, PS_ROWS_COL_A, PS_ROWS_COL_B) and PS_ROWS_UNROLL
 * to unroll the program; by default they read the program.
 *
 * Status: bit c of *status is raised when slot c reads a corrupt code of a
 * valid row, PS_ROWS_AUX_FAULT when an aux index falls past the aux words
 * (only a malformed program reads there).
 */
#ifndef PS_ROWS_H
#define PS_ROWS_H

/* concatenated in front on OpenCL, where nothing can be included */
#ifndef PS_CODES_H
#include "ps_codes.h"
#endif
#ifndef PS_CMPCOL_H
#include "ps_cmpcol.h"
#endif

#ifndef PS_ROWS_OP
#define PS_ROWS_N_INSNS(prog) ((prog)->n_insns)
#define PS_ROWS_OP(prog, i) ((prog)->insns[i].op)
#define PS_ROWS_FLAGS(prog, i) ((prog)->insns[i].flags)
#define PS_ROWS_COL_A(prog, i) ((prog)->insns[i].col_a)
#define PS_ROWS_COL_B(prog, i) ((prog)->insns[i].col_b)
#define PS_ROWS_UNROLL
#endif

/* A slot's value at one row: its code, and whether the code may be used
 * (the row is valid and the code is not corrupt). */
typedef struct ps_rows_read {
  ps_u64 code;
  ps_bool usable;
} ps_rows_read;

/* Reads slot c at row r, raising the slot's bit in *status on a corrupt
 * code of a valid row. The code is read whether or not the row is valid
 * (within the stream's bounds either way): no branch around the load. */
PS_HFN ps_rows_read ps_rows_read_col(const ps_rows_src *s, ps_u32 c, ps_u64 r, ps_u32 *status) {
  PS_CONST_MEM const ps_prog_col *col = &PS_ROWS_PROG(s)->cols[c];
  ps_rows_read out;
  const ps_bool valid = ps_col_valid_at(PS_ROWS_VALIDITY(s, c), col, r);
  out.code = ps_col_code_at(PS_ROWS_DATA(s, c), col, PS_ROWS_ALIGNED(s, c), r);
  const ps_bool corrupt = valid && ps_code_corrupt(col->flags, out.code, col->code_limit);
  if (corrupt) *status |= 1u << c;
  out.usable = valid && !corrupt;
  return out;
}

/* CMPCOL of two usable codes: a <cmp> b in the instruction's mode (the host
 * rejects modes other than INT, DOUBLE and RANK, and DOUBLE on OpenCL
 * devices without doubles). */
PS_HFN ps_bool ps_rows_cmpcol(const ps_rows_src *s, PS_CONST_MEM const ps_insn *in, ps_u32 flags, ps_u32 ca,
                              ps_u64 code_a, ps_u32 cb, ps_u64 code_b, ps_u32 *status) {
  PS_CONST_MEM const ps_program *prog = PS_ROWS_PROG(s);
  const ps_u32 cmp = PS_INSN_CMP(flags);
  switch (PS_INSN_MODE(flags)) {
#if !defined(__OPENCL_VERSION__) || defined(PS_HAVE_FP64)
    case PS_MODE_DOUBLE: {
      /* lossless float operands through their descriptors (ps_program.h) */
      const double x =
          (flags & PS_INSN_FMAP_A)
              ? ps_fdesc_double(PS_ROWS_AUX(s), in->aux_a, code_a, status, PS_ROWS_AUX_FAULT)
              : ps_code_double(prog->cols[ca].kind, prog->cols[ca].reference, code_a, PS_ROWS_POW10(s, ca));
      const double y =
          (flags & PS_INSN_FMAP_B)
              ? ps_fdesc_double(PS_ROWS_AUX(s), in->aux_b, code_b, status, PS_ROWS_AUX_FAULT)
              : ps_code_double(prog->cols[cb].kind, prog->cols[cb].reference, code_b, PS_ROWS_POW10(s, cb));
      return ps_cmp_outcome(cmp, x<y, x == y, x> y);
    }
#endif
    case PS_MODE_RANK: {
      const ps_u32 ra = ps_aux_word(PS_ROWS_AUX(s), (ps_u64)in->aux_a + code_a, status, PS_ROWS_AUX_FAULT);
      const ps_u32 rb = ps_aux_word(PS_ROWS_AUX(s), (ps_u64)in->aux_b + code_b, status, PS_ROWS_AUX_FAULT);
      return ps_cmp_outcome(cmp, ra<rb, ra == rb, ra> rb);
    }
    default: { /* PS_MODE_INT */
      const int sg =
          ps_int_key_sign(ps_int_key_of(prog->cols[ca].reference, prog->cols[ca].kind == PS_KIND_SIGNED, code_a),
                          ps_int_key_of(prog->cols[cb].reference, prog->cols[cb].kind == PS_KIND_SIGNED, code_b));
      return ps_cmp_outcome(cmp, sg<0, sg == 0, sg> 0);
    }
  }
}

/* Evaluates the whole program at row r (inside the chunk, and in the input
 * selection where there is one: rows outside it are not evaluated, so they
 * report nothing); whether the row is selected (TRUE). The core validated
 * the program's structure (opcodes, slots, stack discipline). */
PS_HFN ps_bool ps_rows_eval(const ps_rows_src *s, ps_u64 r, ps_u32 *status) {
  PS_CONST_MEM const ps_program *prog = PS_ROWS_PROG(s);
  ps_u32 T = 0, F = 0;
  PS_ROWS_UNROLL
  for (ps_u32 i = 0; i < PS_ROWS_N_INSNS(prog); ++i) {
    PS_CONST_MEM const ps_insn *in = &prog->insns[i];
    const ps_u32 op = PS_ROWS_OP(prog, i), flags = PS_ROWS_FLAGS(prog, i);
    const ps_u32 ca = PS_ROWS_COL_A(prog, i);
    const ps_bool negate = (flags & PS_INSN_NEGATE) != 0;
    ps_bool known = 1, x = 0; /* a leaf's value: UNKNOWN unless known */
    ps_u32 t, f;
    switch (op) {
      case PS_OP_RANGE: {
        const ps_rows_read a = ps_rows_read_col(s, ca, r, status);
        known = a.usable;
        x = (in->lo <= a.code && a.code <= in->hi) != negate;
        break;
      }
      case PS_OP_SET: {
        const ps_rows_read a = ps_rows_read_col(s, ca, r, status);
        known = a.usable;
        if (known) x = ps_aux_bit(PS_ROWS_AUX(s), (ps_u64)in->aux_a + a.code, status, PS_ROWS_AUX_FAULT) != negate;
        break;
      }
      case PS_OP_INLIST: {
        const ps_rows_read a = ps_rows_read_col(s, ca, r, status);
        known = a.usable;
        if (known) x = ps_in_list(PS_ROWS_AUX(s), in->aux_a, in->lo, a.code) != negate;
        break;
      }
      case PS_OP_ISNULL: /* reads no code, so it cannot see a corrupt one */
        x = !ps_col_valid_at(PS_ROWS_VALIDITY(s, ca), &prog->cols[ca], r) != negate;
        break;
      case PS_OP_CMPCOL: {
        /* b is read only when a is usable, as the reference does: a corrupt b
         * beside a null (or corrupt) a is not a corrupt read. */
        const ps_rows_read a = ps_rows_read_col(s, ca, r, status);
        known = a.usable;
        if (known) {
          const ps_u32 cb = PS_ROWS_COL_B(prog, i);
          const ps_rows_read b = ps_rows_read_col(s, cb, r, status);
          known = b.usable;
          if (known) x = ps_rows_cmpcol(s, in, flags, ca, a.code, cb, b.code, status);
        }
        break;
      }
      default:
        break;
    }
    switch (op) {
      case PS_OP_AND: /* pop b, a; push (Ta & Tb, Fa | Fb) */
        t = T & (T >> 1) & 1u;
        f = (F | (F >> 1)) & 1u;
        T >>= 2;
        F >>= 2;
        break;
      case PS_OP_OR: /* pop b, a; push (Ta | Tb, Fa & Fb) */
        t = (T | (T >> 1)) & 1u;
        f = F & (F >> 1) & 1u;
        T >>= 2;
        F >>= 2;
        break;
      case PS_OP_NOT: /* swap the top's T and F */
        t = F & 1u;
        f = T & 1u;
        T >>= 1;
        F >>= 1;
        break;
      default: /* a leaf: push (x, !x), or (0, 0) for UNKNOWN */
        t = known && x;
        f = known && !x;
        break;
    }
    T = (T << 1) | t;
    F = (F << 1) | f;
  }
  return (T & 1u) != 0;
}

#endif /* PS_ROWS_H */
