/*
 * Kleene logic over 32-row words, written once for every per-word evaluator
 * of the flat program (core/ps_program.h): ps_where.h (OpenCL's words.cl,
 * CUDA's general kernel), OpenCL's interpreting filter
 * (kernels_opencl/filter.cl) and the host tests. OpenCL C, CUDA C++, C11.
 *
 * The truth values of 32 rows travel as two masks: t (TRUE) and f (FALSE); a
 * row in neither is UNKNOWN. A leaf's masks come from ps_leaf_truth; the
 * program's AND / OR / NOT combine them on a stack: its top and depth in a
 * ps_kstack of scalars (registers), the values below the top in a separate
 * ps_kbelow (indexed at run time: local memory on CUDA, unless the program
 * is unrolled at compile time). Kept apart so that the scalars never share
 * an object with the arrays (CUDA would place the whole object in local
 * memory, top and depth included). An interpreter is
 *
 *   ps_kstack k; ps_kbelow b; ps_kstack_init(&k);
 *   for each instruction i:
 *     if (!ps_kstack_apply(&k, &b, op(i))) { evaluate leaf i into t, f; ps_kstack_push(&k, &b, t, f); }
 *   result = ps_kstack_result(&k, rows);
 *
 * with the leaves (how codes reach a lane: staging, vector loads, per-width
 * code) per dialect. The core checked the stack discipline and depth
 * (core/program_check.c), so nothing here tests them.
 */
#ifndef PS_KLEENE_H
#define PS_KLEENE_H

#ifndef PS_DIALECT_H /* concatenated in front on OpenCL, where nothing can be included */
#include "ps_dialect.h"
#endif

/* A leaf's masks over the evaluated rows: `valid` (evaluated and not null),
 * `bad` (the row's code is corrupt: UNKNOWN, meaningful where valid), `hits`
 * (the leaf's predicate before negation, meaningful where valid and sound),
 * `negate` all ones for a negated leaf. Returns the corrupt rows (valid and
 * bad), for the caller's status bit. */
PS_HFN ps_u32 ps_leaf_truth(ps_u32 valid, ps_u32 bad, ps_u32 hits, ps_u32 negate, ps_u32 *t, ps_u32 *f) {
  const ps_u32 usable = valid & ~bad, x = hits ^ negate;
  *t = usable & x;
  *f = usable & ~x;
  return valid & bad;
}

typedef struct ps_kstack {
  ps_u32 top_t, top_f, depth;
} ps_kstack;

typedef struct ps_kbelow {
  ps_u32 t[PS_MAX_STACK], f[PS_MAX_STACK];
} ps_kbelow;

PS_HFN void ps_kstack_init(ps_kstack *k) {
  k->top_t = 0;
  k->top_f = 0;
  k->depth = 0;
}

PS_HFN void ps_kstack_push(ps_kstack *k, ps_kbelow *b, ps_u32 t, ps_u32 f) {
  if (k->depth > 0) {
    b->t[k->depth - 1] = k->top_t;
    b->f[k->depth - 1] = k->top_f;
  }
  k->top_t = t;
  k->top_f = f;
  ++k->depth;
}

/* Applies a combining instruction and returns 1; returns 0 for a leaf (the
 * caller evaluates it and pushes its masks).
 *   AND: (Ta & Tb, Fa | Fb)   OR: (Ta | Tb, Fa & Fb)   NOT: (F, T) */
PS_HFN int ps_kstack_apply(ps_kstack *k, const ps_kbelow *b, ps_u32 op) {
  if (op == PS_OP_AND) {
    --k->depth;
    k->top_t &= b->t[k->depth - 1];
    k->top_f |= b->f[k->depth - 1];
    return 1;
  }
  if (op == PS_OP_OR) {
    --k->depth;
    k->top_t |= b->t[k->depth - 1];
    k->top_f &= b->f[k->depth - 1];
    return 1;
  }
  if (op == PS_OP_NOT) {
    const ps_u32 tmp = k->top_t;
    k->top_t = k->top_f;
    k->top_f = tmp;
    return 1;
  }
  return 0;
}

/* The rows of `rows` where the program is TRUE. */
PS_HFN ps_u32 ps_kstack_result(const ps_kstack *k, ps_u32 rows) { return k->top_t & rows; }

#endif /* PS_KLEENE_H */
