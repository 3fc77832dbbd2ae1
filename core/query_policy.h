/*
 * Launch policy of the query kernels (kernels_shared/ps_query_kernels.h),
 * decided on the host once for both device backends: where pass 1 keeps its
 * accumulators (the mode), whether the 64-bit value path is exact, which
 * accumulator fields a specialized kernel keeps, and how many work-items and
 * partials a chunk takes. Backends supply their device's facts (64-bit local
 * atomics, work-group size, how many groups fill the device) and call these;
 * the kernels only read the result (ps_qlaunch, the specialization flags).
 */
#ifndef PS_QUERY_POLICY_H
#define PS_QUERY_POLICY_H

#include <stdint.h>

#include "ps_query_program.h"

/* Interval arithmetic over a value program: the largest magnitude of the
 * aggregates' values on rows whose codes are valid (at most the slots' code
 * limits), or -1 if a value, intermediate ones included, can pass +-2^61.
 * Anything the analysis cannot bound is -1, never a bound. */
double ps_query_values_bound(const ps_vprog *p);

/* 1 if every value fits 62 bits (ps_query_values_bound >= 0): pass 1 may
 * then evaluate values in 64-bit arithmetic. */
int ps_query_values_fit64(const ps_vprog *p);

/* The fields a specialized kernel keeps per aggregate (PS_QF_* at bits
 * 4a..), from the fields the host reads (`wanted`, the same layout; 0 = all):
 * an aggregate's own count only where its value can be NULL (else it is the
 * group's row count), nothing for COUNT(*). */
uint64_t ps_query_kept_fields(const ps_vprog *p, uint64_t wanted);

/* The mode of pass 1 for the precompiled (generic) kernel; local_atomics:
 * the device has 64-bit atomics on local and global memory. Never
 * PS_QMODE_REGS; PS_QMODE_KEYS for a hashed plan's keys pass (which needs
 * the atomics); PS_QMODE_GLOBAL for a hashed plan's groups past
 * PS_QMODE_LOCAL's table where every value fits 64 bits (its host zeroes
 * the partial table before pass 1). */
uint32_t ps_query_generic_mode(const ps_vprog *p, int fits64, int local_atomics);

/* PS_QMODE_REGS: the words one work-item may take so that its 64-bit sums
 * of at most 32 values of magnitude `bound` per word stay below 2^62. */
uint64_t ps_query_regs_max_words(double bound);

/* One chunk's launch choice. */
typedef struct ps_query_plan {
  uint32_t mode;   /* PS_QMODE_* of pass 1 (PS_QMODE_REGS: specialized builds only) */
  int fits64;      /* ps_query_values_fit64 */
  double bound;    /* ps_query_values_bound where the plan may keep registers, else -1 */
  uint64_t fields; /* ps_query_kept_fields of the wanted fields */
} ps_query_plan;

/* The plan of a chunk of value program p. wanted: the PS_QF_* fields the
 * host reads (0 = all); local_atomics: the device has 64-bit atomics on
 * local memory; regs: the chunk runs a specialized kernel that may keep a
 * small GROUP BY domain's accumulators in registers (PS_QMODE_REGS: every
 * value within 2^57, groups x kept fields within PS_Q_REG_WORDS, the table
 * within PS_Q_LOCAL_ACCS). Where that kernel is not available after all,
 * run the generic kernel in ps_query_generic_mode(p, plan.fits64, ...). */
void ps_query_plan_chunk(const ps_vprog *p, uint64_t wanted, int local_atomics, int regs, ps_query_plan *plan);

/* The words each work-item of pass 1 takes in one run (ps_qlaunch.span),
 * for `items` work-items over `words` words: on a CPU device as many as
 * share the words out evenly (each work-item then reads its streams in
 * order); elsewhere 0, words strided over the work-items. */
uint64_t ps_query_span(int cpu, uint64_t words, uint64_t items);

/* The pinned staging of a query_collect (ps_backend_ops.query_collect, the
 * internal option query_collect_pinned) that reads n chunks' status words
 * and acc_bytes of accumulators: the status words from its start, the
 * accumulators from ps_query_collect_acc_at(n). ps_query_collect_size: the
 * bytes to allocate for it (a power of two, at least 4 KiB, so that it is
 * rarely grown), or 0 where the accumulators are larger than
 * PS_QUERY_COLLECT_PINNED_MAX (a GROUP BY of many groups), which are read
 * back into the caller's memory: a wait per copy is small beside the copy. */
#define PS_QUERY_COLLECT_PINNED_MAX ((uint64_t)1 << 20)
uint64_t ps_query_collect_acc_at(uint32_t n);
uint64_t ps_query_collect_size(uint32_t n, uint64_t acc_bytes);

/* The launch shape of pass 1 in `mode` for a chunk of `words` 32-row words
 * and n_acc accumulators: *items work-items that take words, *parts partial
 * results per accumulator for pass 2.
 *   PS_QMODE_ITEMS: one partial table per work-item, as many as
 *     partial_bytes of tables hold, at most max_items and words (>= 1);
 *   PS_QMODE_GLOBAL: as the others, one partial (the launch's table);
 *   the others: one partial per work-group of `group` work-items, at most
 *     max_groups (the groups that fill the device) and as many as the words
 *     need; PS_QMODE_REGS at least as many as keep each work-item within
 *     ps_query_regs_max_words(bound). */
void ps_query_launch_shape(uint32_t mode, double bound, uint64_t n_acc, uint64_t words, uint64_t group,
                           uint64_t max_groups, uint64_t max_items, uint64_t partial_bytes, uint64_t *items,
                           uint64_t *parts);

/* Whether pass 2 (after pass 1 in `mode`) merges each of n_acc
 * accumulators in one work-item (the `parts` partials one after another)
 * rather than in one work-group (a tree over them): where the partials are
 * few, as for the many accumulators of a large GROUP BY (PS_QMODE_ITEMS'
 * tables then fill its partial bytes); 2 after PS_QMODE_GLOBAL, whose one
 * partial is its table (ps_q_merge's flat). */
int ps_query_merge_flat(uint32_t mode, uint64_t n_acc, uint64_t parts);

/* From a run's status words (PS_Q_STATUS_WORDS, ps_query_kernels.h):
 * whether a value of p was not representable, and then where, as
 * ps_query_program.h names it: the smallest chunk row in *row and the first
 * aggregate whose value is not representable on it in *agg. */
int ps_query_status_unrep(const ps_vprog *p, const uint32_t *status, uint64_t *row, uint32_t *agg);

#endif /* PS_QUERY_POLICY_H */
