/*
 * select.cl: what comes after the filter, on one column or one selection
 * (core/backend.h: row_ids, reduce, gather). Built after common.cl.
 *
 * Row ids use size-then-retrieve: ps_count_words writes one count per
 * work-group, the host scans those counts (it must return the total anyway)
 * and ps_write_ids writes each group's ids at its offset; no per-row atomics.
 * Left out of builds specialized for one filter program.
 */
#ifndef PS_SPECIALIZED

/* ---- row ids ---------------------------------------------------------- */

/* Word g of the selection, without the bits past the chunk's rows. */
static uint ps_selection_word(__constant ps_select_launch *launch, ps_bytes bitmap, ulong g) {
  ps_region r = {bitmap, launch->selection_offset, (launch->rows + 7) / 8};
  return ps_load_word(r, g) & ps_row_mask(launch->rows, g);
}

__kernel void ps_count_words(__constant ps_select_launch *launch, ps_bytes bitmap, __global uint *group_counts,
                             __local uint *scratch) {
  ulong g = get_global_id(0);
  uint bits = g < (launch->rows + 31) / 32 ? popcount(ps_selection_word(launch, bitmap, g)) : 0u;
  uint total = ps_group_sum(bits, scratch);
  if (get_local_id(0) == 0) group_counts[get_group_id(0)] = total;
}

/* group_offsets: exclusive scan of ps_count_words' counts, from the host. */
__kernel void ps_write_ids(__constant ps_select_launch *launch, ps_bytes bitmap, __global const uint *group_offsets,
                           __global uchar *out, __local uint *scratch) {
  ulong g = get_global_id(0);
  uint word = g < (launch->rows + 31) / 32 ? ps_selection_word(launch, bitmap, g) : 0u;
  ulong k = group_offsets[get_group_id(0)] + ps_group_exclusive_scan(popcount(word), scratch);
  uint bytes = launch->index_bytes;
  while (word != 0) {
    uint j = 31 - clz(word & (0u - word)); /* lowest set bit */
    word &= word - 1;
    ps_store_value(out, launch->out_offset + k * bytes, bytes, launch->id_base + 32 * g + j);
    ++k;
  }
}

/* ---- reduce ----------------------------------------------------------- */

typedef struct ps_partial {
  ulong count, min, max, sum_lo, sum_hi;
} ps_partial;

static void ps_partial_add(ps_partial *p, const ps_partial *q) {
  p->count += q->count;
  p->min = min(p->min, q->min);
  p->max = max(p->max, q->max);
  p->sum_lo += q->sum_lo;
  p->sum_hi += q->sum_hi + (p->sum_lo < q->sum_lo); /* carry */
}

/* Count, min, max and 128-bit sum of the valid, selected codes of word g. */
static void ps_reduce_word(__constant ps_select_launch *launch, ps_bytes data, ps_bytes validity, ps_bytes selection,
                           ulong g, ps_partial *acc, uint *corrupt) {
  __constant ps_prog_col *m = &launch->col;
  uint rows = ps_row_mask(launch->rows, g);
  if (launch->flags & PS_SELECT_HAS_SELECTION) {
    ps_region sel = {selection, launch->selection_offset, (launch->rows + 7) / 8};
    rows &= ps_load_word(sel, g);
  }
  if (m->flags & PS_COLF_VALIDITY) {
    ps_region v = {validity, launch->validity_offset, m->validity_bytes};
    rows &= ps_load_word(v, g);
  }
  ps_region d = {data, launch->data_offset, m->data_bytes};
  for (uint j = 0; j < 32; ++j) {
    if (!((rows >> j) & 1u)) continue;
    ulong code = ps_code_at(d, m->width, (32 * g + j) * m->width);
    if (ps_code_corrupt(m, code)) {
      *corrupt = 1;
      continue;
    }
    ps_partial one = {1, code, code, code, 0};
    ps_partial_add(acc, &one);
  }
}

/* Grid-stride over the chunk's words, so the number of partials the host
 * reads back is bounded by the launch size; then a work-group tree
 * reduction into partials[group]. scratch holds PS_REDUCE_PARTIAL_WORDS
 * ulongs per work-item. */
__kernel void ps_reduce_words(__constant ps_select_launch *launch, ps_bytes data, ps_bytes validity,
                              ps_bytes selection, __global ulong *partials, volatile __global uint *status,
                              __local ulong *scratch) {
  ps_partial acc = {0, ULONG_MAX, 0, 0, 0};
  uint corrupt = 0;
  ulong words = (launch->rows + 31) / 32;
  for (ulong g = get_global_id(0); g < words; g += get_global_size(0))
    ps_reduce_word(launch, data, validity, selection, g, &acc, &corrupt);
  if (corrupt) atomic_or(&status[PS_SELECT_STATUS_CORRUPT], 1u);

  uint lid = get_local_id(0), n = get_local_size(0);
  __local ulong *s = scratch + PS_REDUCE_PARTIAL_WORDS * lid;
  s[0] = acc.count, s[1] = acc.min, s[2] = acc.max, s[3] = acc.sum_lo, s[4] = acc.sum_hi;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint step = n / 2; step > 0; step /= 2) {
    if (lid < step) {
      __local ulong *o = scratch + PS_REDUCE_PARTIAL_WORDS * (lid + step);
      ps_partial p = {s[0], s[1], s[2], s[3], s[4]}, q = {o[0], o[1], o[2], o[3], o[4]};
      ps_partial_add(&p, &q);
      s[0] = p.count, s[1] = p.min, s[2] = p.max, s[3] = p.sum_lo, s[4] = p.sum_hi;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0)
    for (uint i = 0; i < PS_REDUCE_PARTIAL_WORDS; ++i)
      partials[PS_REDUCE_PARTIAL_WORDS * get_group_id(0) + i] = scratch[i];
}

/* ---- gather ----------------------------------------------------------- */

/* The value written for a valid row (core/backend.h, ps_gather_args). */
static ulong ps_gather_value(__constant ps_select_launch *launch, ulong code) {
  ulong raw = launch->col.reference + code;
  switch (launch->out_type) {
#ifdef PS_HAVE_FP64
    case PS_SELECT_GATHER_F64: return as_ulong(ps_double_of(&launch->col, code));
    case PS_SELECT_GATHER_F32: return as_uint((float)ps_double_of(&launch->col, code));
#endif
    case PS_SELECT_GATHER_CODE32: return (uint)raw;
    default: return raw; /* PS_SELECT_GATHER_INT: truncated by the store */
  }
}

/* Work-item q handles ids [first + 32q, first + 32q + 32) and writes their
 * validity as one word. Errors record the least offending index of the
 * launch, so the host reports what a serial loop would meet first. */
__kernel void ps_gather_values(__constant ps_select_launch *launch, ps_bytes data, ps_bytes validity, ps_bytes ids,
                               __global uchar *values, __global uchar *validity_out, volatile __global uint *status) {
  __constant ps_prog_col *m = &launch->col;
  ulong i0 = launch->first + 32 * (ulong)get_global_id(0);
  if (i0 >= launch->count) return;
  uint n = (uint)min((ulong)32, launch->count - i0);
  ps_region d = {data, launch->data_offset, m->data_bytes};
  ps_region v = {validity, launch->validity_offset, m->validity_bytes};
  uint valid_bits = 0;
  for (uint j = 0; j < n; ++j) {
    ulong i = i0 + j;
    ulong id = ps_load_value(ids, launch->ids_offset + i * launch->index_bytes, launch->index_bytes);
    uint in_launch = (uint)(i - launch->first);
    if (id >= launch->rows) {
      atomic_min(&status[PS_SELECT_STATUS_BAD_ID], in_launch);
      continue;
    }
    uint valid = (m->flags & PS_COLF_VALIDITY) ? (ps_load_word(v, id >> 5) >> (id & 31)) & 1u : 1u;
    ulong value = 0;
    if (valid) {
      ulong code = ps_code_at(d, m->width, id * m->width);
      if (ps_code_corrupt(m, code)) {
        atomic_min(&status[PS_SELECT_STATUS_BAD_CODE], in_launch);
        continue;
      }
      value = ps_gather_value(launch, code);
    }
    ps_store_value(values, launch->out_offset + i * launch->value_bytes, launch->value_bytes, value);
    valid_bits |= valid << j;
  }
  if (launch->flags & PS_SELECT_WANT_VALIDITY)
    ps_store_word(validity_out, launch->validity_out_offset, (launch->count + 7) / 8, i0 / 32, valid_bits);
}

#endif /* PS_SPECIALIZED */
