/* Launch policy of the query kernels (query_policy.h). */
#include "query_policy.h"

double ps_query_values_bound(const ps_vprog *p) {
  /* doubles with a wide margin below 2^63: their rounding cannot hide a
   * factor of two */
  const double bound = 2305843009213693952.0; /* 2^61 */
  double largest = 0;
  for (ps_u32 a = 0; a < p->n_aggs; ++a) {
    const ps_vagg g = p->aggs[a];
    double lo[PS_QMAX_STACK], hi[PS_QMAX_STACK];
    int sp = 0;
    for (ps_u32 i = g.first; i < g.first + g.count; ++i) {
      const ps_vinsn *in = &p->insns[i];
      double l = 0, h = 0;
      if (in->op == PS_VOP_COL) {
        const ps_prog_col *c = &p->cols[in->arg];
        l = c->kind == PS_KIND_UNSIGNED ? (double)c->reference : (double)(ps_i64)c->reference;
        h = l + (double)c->code_limit;
      } else if (in->op == PS_VOP_CONST) {
        /* a constant outside int64: the 64-bit evaluation reads lo only */
        if (in->hi != ((ps_i64)in->lo < 0 ? ~(ps_u64)0 : 0)) return -1;
        l = h = (double)(ps_i64)in->lo;
      } else if (in->op == PS_VOP_NULL) {
        l = h = 0;
      } else if (in->op == PS_VOP_FCOL) {
        /* a lossless float's units reach 2^126: the 128-bit path */
        return -1;
      } else if (in->op == PS_VOP_SCALE) {
        if (sp < 1) return -1;
        --sp;
        double f = 1;
        for (ps_u32 k = 0; k < in->arg; ++k) f *= 10;
        l = lo[sp] * f;
        h = hi[sp] * f;
      } else if (in->op == PS_VOP_ADD || in->op == PS_VOP_SUB || in->op == PS_VOP_MUL || in->op == PS_VOP_CASE) {
        if (sp < 2) return -1;
        sp -= 2;
        const double al = lo[sp], ah = hi[sp], bl = lo[sp + 1], bh = hi[sp + 1];
        if (in->op == PS_VOP_ADD) {
          l = al + bl;
          h = ah + bh;
        } else if (in->op == PS_VOP_SUB) {
          l = al - bh;
          h = ah - bl;
        } else if (in->op == PS_VOP_MUL) {
          const double q[4] = {al * bl, al * bh, ah * bl, ah * bh};
          l = h = q[0];
          for (int k = 1; k < 4; ++k) {
            l = q[k] < l ? q[k] : l;
            h = q[k] > h ? q[k] : h;
          }
        } else { /* CASE: either branch */
          l = al < bl ? al : bl;
          h = ah > bh ? ah : bh;
        }
      } else { /* an instruction this analysis does not know: no bound */
        return -1;
      }
      if (sp >= PS_QMAX_STACK || !(l >= -bound && h <= bound)) return -1;
      lo[sp] = l;
      hi[sp] = h;
      ++sp;
    }
    if (sp > 0) {
      largest = -lo[0] > largest ? -lo[0] : largest;
      largest = hi[0] > largest ? hi[0] : largest;
    }
  }
  return largest;
}

int ps_query_values_fit64(const ps_vprog *p) { return ps_query_values_bound(p) >= 0; }

/* Whether aggregate a's value can be NULL (it reads a column with a
 * validity bitmap, or NULL itself). */
static int agg_nullable(const ps_vprog *p, ps_u32 a) {
  const ps_vagg g = p->aggs[a];
  for (ps_u32 i = g.first; i < g.first + g.count; ++i) {
    const ps_vinsn *in = &p->insns[i];
    if (in->op == PS_VOP_NULL ||
        ((in->op == PS_VOP_COL || in->op == PS_VOP_FCOL || in->op == PS_VOP_DCOL || in->op == PS_VOP_DNUM) &&
         (p->cols[in->arg].flags & PS_COLF_VALIDITY)))
      return 1;
  }
  return 0;
}

uint64_t ps_query_kept_fields(const ps_vprog *p, uint64_t wanted) {
  uint64_t kept = 0;
  for (ps_u32 a = 0; a < p->n_aggs; ++a) {
    uint64_t f = wanted ? (wanted >> (4 * a)) & PS_QF_ALL : PS_QF_ALL;
    if (p->aggs[a].count == 0) f = 0;
    if (!agg_nullable(p, a)) f &= ~(uint64_t)PS_QF_COUNT;
    kept |= f << (4 * a);
  }
  return kept;
}

/* Whether a specialized GROUP BY can keep its accumulators in registers:
 * every value within 2^57, so that a work-item's 64-bit sums are exact over
 * its rows whenever it takes at most ps_query_regs_max_words() words, groups
 * x kept fields within PS_Q_REG_WORDS, and the work-group's table within
 * PS_Q_REGS_TABLE_ACCS (merged there with 64-bit local atomics). */
static int regs_fit(const ps_vprog *p, uint64_t kept, double bound, int local_atomics) {
  if (!local_atomics || p->n_groups <= 1 || bound < 0 || bound > 144115188075855872.0 /* 2^57 */) return 0;
  if ((uint64_t)p->n_groups * p->n_accs > PS_Q_REGS_TABLE_ACCS) return 0;
  uint64_t per_group = 1;
  for (ps_u32 a = 0; a < p->n_aggs; ++a)
    for (ps_u32 f = 0; f < 4; ++f) per_group += (kept >> (4 * a + f)) & 1u;
  return (uint64_t)p->n_groups * per_group <= PS_Q_REG_WORDS;
}

uint64_t ps_query_regs_max_words(double bound) {
  const double limit = 4611686018427387904.0; /* 2^62 */
  if (bound < 1) return (uint64_t)1 << 40;
  const double w = limit / (bound * 32);
  return w >= 1099511627776.0 ? (uint64_t)1 << 40 : (uint64_t)w;
}

uint32_t ps_query_generic_mode(const ps_vprog *p, int fits64, int local_atomics) {
  if (p->group_slots != 0 && p->group_pass != 0) return PS_QMODE_KEYS;
  if (p->n_groups <= 1 && p->group_slots == 0) return PS_QMODE_PRIVATE;
  if (fits64 && local_atomics && (uint64_t)p->n_groups * p->n_accs <= PS_Q_LOCAL_ACCS) return PS_QMODE_LOCAL;
  if (fits64 && local_atomics && p->group_slots != 0) return PS_QMODE_GLOBAL;
  return PS_QMODE_ITEMS;
}

void ps_query_plan_chunk(const ps_vprog *p, uint64_t wanted, int local_atomics, int regs, ps_query_plan *plan) {
  plan->fits64 = ps_query_values_fit64(p);
  plan->mode = ps_query_generic_mode(p, plan->fits64, local_atomics);
  plan->bound = regs && plan->mode != PS_QMODE_PRIVATE ? ps_query_values_bound(p) : -1;
  plan->fields = ps_query_kept_fields(p, wanted);
  if (regs && p->group_slots == 0 && regs_fit(p, plan->fields, plan->bound, local_atomics)) plan->mode = PS_QMODE_REGS;
}

int ps_query_merge_flat(uint32_t mode, uint64_t n_acc, uint64_t parts) {
  if (mode == PS_QMODE_GLOBAL) return 2;
  return parts <= 32 && n_acc >= 1024;
}

uint64_t ps_query_span(int cpu, uint64_t words, uint64_t items) {
  if (!cpu || items == 0) return 0;
  const uint64_t span = (words + items - 1) / items;
  return span == 0 ? 1 : span;
}

uint64_t ps_query_collect_acc_at(uint32_t n) {
  return ((uint64_t)PS_Q_STATUS_WORDS * n * sizeof(uint32_t) + 15) & ~(uint64_t)15;
}

uint64_t ps_query_collect_size(uint32_t n, uint64_t acc_bytes) {
  if (acc_bytes > PS_QUERY_COLLECT_PINNED_MAX) return 0;
  const uint64_t bytes = ps_query_collect_acc_at(n) + acc_bytes;
  uint64_t size = 4096;
  while (size < bytes) size *= 2;
  return size;
}

void ps_query_launch_shape(uint32_t mode, double bound, uint64_t n_acc, uint64_t words, uint64_t group,
                           uint64_t max_groups, uint64_t max_items, uint64_t partial_bytes, uint64_t *items,
                           uint64_t *parts) {
  if (mode == PS_QMODE_ITEMS) {
    uint64_t n = partial_bytes / (n_acc * sizeof(ps_qacc));
    if (n > max_items) n = max_items;
    if (n > words) n = words;
    if (n == 0) n = 1;
    *items = *parts = n;
    return;
  }
  uint64_t groups = max_groups;
  if (groups > (words + group - 1) / group) groups = (words + group - 1) / group;
  if (mode == PS_QMODE_REGS) { /* few enough words per work-item for exact 64-bit sums */
    const uint64_t per_group = ps_query_regs_max_words(bound) * group;
    if (groups < (words + per_group - 1) / per_group) groups = (words + per_group - 1) / per_group;
  }
  if (groups == 0) groups = 1;
  *items = groups * group;
  *parts = mode == PS_QMODE_GLOBAL ? 1 : groups;
}

int ps_query_status_unrep(const ps_vprog *p, const uint32_t *status, uint64_t *row, uint32_t *agg) {
  int found = 0;
  for (ps_u32 a = 0; a < p->n_aggs && a < PS_QMAX_AGGS; ++a) {
    const uint32_t r = status[PS_Q_STATUS_UNREP + a];
    if (r == 0xFFFFFFFFu || (found && r >= *row)) continue; /* a later aggregate on the same row: not first */
    *row = r;
    *agg = a;
    found = 1;
  }
  return found;
}
