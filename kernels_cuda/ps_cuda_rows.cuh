/*
 * Per-row evaluation of the flat program (core/ps_program.h, binding
 * semantics): reading codes and validity from the packed streams, decoding,
 * comparing, the Kleene stack, and one lane's share of the result store.
 * Everything here is per row (or per lane) and __host__ __device__, so it can
 * be checked against the reference backend on a machine without a GPU; the
 * warp-wide parts (ballot, status, counting) live in eval.cu.
 *
 * The evaluation stack is two 32-bit registers used as bit-stacks (bit 0 is
 * the top): T holds the is_true bits, F the is_false bits. PS_MAX_STACK (16)
 * fits, and nothing is indexed at run time, so nothing spills to local memory.
 */
#ifndef PS_CUDA_ROWS_CUH
#define PS_CUDA_ROWS_CUH

#include <stdint.h>
#include <string.h>

/* The filter kernels read codes through the read-only cache (PS_CODES_LDG,
 * kernels_shared/ps_codes.h), which must be chosen before ps_codes.h is
 * first included. */
#if defined(PS_CODES_H) && !defined(PS_CODES_LDG)
#error "include ps_cuda_rows.cuh before kernels_shared/ps_codes.h"
#endif
#define PS_CODES_LDG 1
#include "../kernels_shared/ps_cmpcol.h" /* relative: includers need no -I for them */
#include "../kernels_shared/ps_codes.h"
#include "ps_cuda_kernels.h"
#include "ps_program.h"

#define PS_HD __host__ __device__ __forceinline__

/* Loads read-only global data through the non-coherent cache on the device. */
PS_HD uint32_t ps_ld32(const uint8_t *p) {
#ifdef __CUDA_ARCH__
  return __ldg(reinterpret_cast<const unsigned int *>(p));
#else
  uint32_t v;
  memcpy(&v, p, sizeof v);
  return v;
#endif
}

PS_HD uint8_t ps_ld8(const uint8_t *p) {
#ifdef __CUDA_ARCH__
  return __ldg(reinterpret_cast<const unsigned char *>(p));
#else
  return *p;
#endif
}

/* Stream words and codes: kernels_shared/ps_codes.h (ps_stream_word,
 * ps_code_at; ps_col_code_at reads a slot in any encoding). */

typedef struct ps_col_read {
  uint64_t code;
  bool valid;
  bool usable; /* valid and not corrupt: the code may be used (and index aux) */
} ps_col_read;

/* valid(c, r): bit r of the slot's validity bitmap, 1 without one. */
PS_HD bool ps_read_valid(const ps_cuda_eval_params &p, uint32_t c, uint32_t row) {
  const ps_prog_col &col = p.prog.cols[c];
  if (!(col.flags & PS_COLF_VALIDITY)) return true;
  const uint64_t at = row >> 3;
  return at < col.validity_bytes && ((ps_ld8(p.validity[c] + at) >> (row & 7)) & 1u);
}

/* Reads slot c at row r, raising the slot's bit in *status on a corrupt code. */
PS_HD ps_col_read ps_read_col(const ps_cuda_eval_params &p, uint32_t c, uint32_t row,
                              uint32_t *status) {
  const ps_prog_col &col = p.prog.cols[c];
  ps_col_read r;
  r.valid = ps_read_valid(p, c, row);
  r.code = ps_col_code_at(col, p.data[c], (p.data_aligned >> c) & 1u, row);
  const bool corrupt = r.valid && ps_code_corrupt(col.flags, r.code, col.code_limit);
  if (corrupt) *status |= 1u << c;
  r.usable = r.valid && !corrupt;
  return r;
}

/* ---- comparisons --------------------------------------------------------- */

/* Outcomes of comparisons, PS_MODE_INT keys and PS_MODE_DOUBLE values:
 * kernels_shared/ps_cmpcol.h (ps_cmp_outcome, ps_int_key_of, ps_code_double). */
PS_HD double ps_decode_double(const ps_cuda_eval_params &p, uint32_t c, uint64_t code) {
  const ps_prog_col &col = p.prog.cols[c];
  return ps_code_double(col.kind, col.reference, code, &p.pow10[c]);
}

/* ---- instructions -------------------------------------------------------- */

/* The program's aux words (SET bits, INLIST intervals, RANK ranks), read by
 * kernels_shared/ps_cmpcol.h's ps_aux_word, ps_aux_bit and ps_in_list; an
 * index past them raises PS_CUDA_FLAG_AUX. */
PS_HD ps_aux_words ps_cuda_aux(const ps_cuda_eval_params &p) {
  ps_aux_words a;
  a.words = p.aux;
  a.count = p.prog.aux_words;
  return a;
}

PS_HD bool ps_cmpcol(const ps_cuda_eval_params &p, const ps_insn &in, ps_col_read a, ps_col_read b,
                     uint32_t *status) {
  const uint32_t cmp = PS_INSN_CMP(in.flags);
  switch (PS_INSN_MODE(in.flags)) {
    case PS_MODE_DOUBLE: {
      const double x = ps_decode_double(p, in.col_a, a.code), y = ps_decode_double(p, in.col_b, b.code);
      return ps_cmp_outcome(cmp, x < y, x == y, x > y);
    }
    case PS_MODE_RANK: {
      const uint32_t ra = ps_aux_word(ps_cuda_aux(p), (uint64_t)in.aux_a + a.code, status, PS_CUDA_FLAG_AUX);
      const uint32_t rb = ps_aux_word(ps_cuda_aux(p), (uint64_t)in.aux_b + b.code, status, PS_CUDA_FLAG_AUX);
      return ps_cmp_outcome(cmp, ra < rb, ra == rb, ra > rb);
    }
    default: { /* PS_MODE_INT; the host rejects other modes */
      const ps_prog_col &ca = p.prog.cols[in.col_a], &cb = p.prog.cols[in.col_b];
      const int s = ps_int_key_sign(ps_int_key_of(ca.reference, ca.kind == PS_KIND_SIGNED, a.code),
                                    ps_int_key_of(cb.reference, cb.kind == PS_KIND_SIGNED, b.code));
      return ps_cmp_outcome(cmp, s < 0, s == 0, s > 0);
    }
  }
}

/* Evaluates the whole program for one row (row < p.rows); true iff the row is
 * selected. Corrupt reads and aux faults are ORed into *status. The host
 * validated the program's structure (opcodes, slots, stack discipline). */
PS_HD bool ps_eval_row(const ps_cuda_eval_params &p, uint32_t row, uint32_t *status) {
  uint32_t T = 0, F = 0;
  const uint32_t n = p.prog.n_insns;
  for (uint32_t i = 0; i < n; ++i) {
    const ps_insn &in = p.prog.insns[i];
    const bool negate = (in.flags & PS_INSN_NEGATE) != 0;
    bool known = true, x = false; /* a leaf's value: UNKNOWN unless known */
    uint32_t t, f;
    switch (in.op) {
      case PS_OP_RANGE: {
        const ps_col_read a = ps_read_col(p, in.col_a, row, status);
        known = a.usable;
        x = (in.lo <= a.code && a.code <= in.hi) != negate;
        break;
      }
      case PS_OP_SET: {
        const ps_col_read a = ps_read_col(p, in.col_a, row, status);
        known = a.usable;
        if (known) x = ps_aux_bit(ps_cuda_aux(p), (uint64_t)in.aux_a + a.code, status, PS_CUDA_FLAG_AUX) != negate;
        break;
      }
      case PS_OP_INLIST: {
        const ps_col_read a = ps_read_col(p, in.col_a, row, status);
        known = a.usable;
        if (known) x = ps_in_list(ps_cuda_aux(p), in.aux_a, in.lo, a.code) != negate;
        break;
      }
      case PS_OP_ISNULL: /* reads no code, so it cannot see a corrupt one */
        x = !ps_read_valid(p, in.col_a, row) != negate;
        break;
      case PS_OP_CMPCOL: {
        /* b is read only when a is usable, as the reference does: a corrupt b
         * beside a null (or corrupt) a is not a corrupt read. */
        const ps_col_read a = ps_read_col(p, in.col_a, row, status);
        known = a.usable;
        if (known) {
          const ps_col_read b = ps_read_col(p, in.col_b, row, status);
          known = b.usable;
          if (known) x = ps_cmpcol(p, in, a, b, status);
        }
        break;
      }
      default:
        break;
    }
    switch (in.op) {
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

/* ---- the row's result ------------------------------------------------------ */

/* Whether row (< p.rows) is selected: in the input selection (if any) and
 * TRUE under the program. Rows outside the input selection are not evaluated,
 * so they cannot report corrupt codes (as the reference). The input selection
 * may be the output bitmap itself (in-place refinement), so it is read with a
 * plain load, never through the read-only cache; each warp reads its word
 * before the ballot and writes it after. */
PS_HD bool ps_row_selected(const ps_cuda_eval_params &p, uint32_t row, uint32_t *status) {
  if (p.selection_in && !((p.selection_in[row >> 3] >> (row & 7)) & 1u)) return false;
  return ps_eval_row(p, row, status);
}

/* The byte mask output: one byte per row, 1 = selected. */
PS_HD void ps_store_mask(const ps_cuda_eval_params &p, uint32_t row, bool selected) {
  if (p.mask && row < p.rows) p.mask[row] = selected ? 1 : 0;
}

/* Lane `lane`'s share of writing result word g (rows [32g, 32g+32)) of a
 * bitmap of ceil(rows/8) bytes. Full words go out as one 32-bit store from
 * lane 0; the last, partial word (and every word of a misaligned bitmap)
 * bytewise from lanes 0..3, so no byte past ceil(rows/8) is written. Bits of
 * rows >= rows are already 0 in `word`. */
PS_HD void ps_store_word(const ps_cuda_eval_params &p, uint32_t g, uint32_t word, uint32_t lane) {
  if (!p.bitmap) return;
  if (g < (p.rows >> 5) && p.bitmap_aligned) {
    if (lane == 0) *reinterpret_cast<uint32_t *>(p.bitmap + (uint64_t)g * 4) = word;
    return;
  }
  const uint64_t bytes = ((uint64_t)p.rows + 7) >> 3;
  const uint64_t at = (uint64_t)g * 4 + lane;
  if (lane < 4 && at < bytes) p.bitmap[at] = (uint8_t)(word >> (8 * lane));
}

#endif /* PS_CUDA_ROWS_CUH */
