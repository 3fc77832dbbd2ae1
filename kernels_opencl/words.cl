/*
 * words.cl: the general filter's entry point, specialized per program
 * shape. A work-item per PS_WORDS_SPAN consecutive 32-row result words (a
 * GPU: one; a CPU device: a run, over which the per-item setup below and
 * PoCL's work-item loop are paid once); the program is evaluated by
 * kernels_shared/ps_where.h, the per-word evaluator that CUDA's general
 * kernel and the queries run too. The host puts core's shape text
 * (ps_where_spec_write: the program's shape as the constant ps_w_spec_prog)
 * and `#define PS_WORDS_WG` in front of ps_where.h, so that the interpreter
 * folds into straight-line code with constant shifts; literals, offsets and
 * sizes come from the launch block, so one build serves every predicate of a
 * shape and every chunk.
 *
 * Arguments as filter.cl's ps_filter_words (launch.h's PS_FILTER_ARG_*), so
 * the host binds both kernels alike. The selection may be the bitmap itself
 * (in-place refinement): word g is read by the work-item that writes it,
 * before it is written. Nothing past ceil(rows/8) bytes of the bitmap or
 * rows bytes of the mask is written.
 */

#ifndef PS_WORDS_WG
#error "words.cl needs PS_WORDS_WG and the shape text"
#endif
#ifndef PS_WORDS_SPAN
#define PS_WORDS_SPAN 1
#endif

__kernel __attribute__((reqd_work_group_size(PS_WORDS_WG, 1, 1))) void ps_filter_words(
    __constant ps_filter_launch *launch, ps_bytes d0, ps_bytes d1, ps_bytes d2, ps_bytes d3, ps_bytes d4, ps_bytes d5,
    ps_bytes d6, ps_bytes d7, ps_bytes d8, ps_bytes d9, ps_bytes d10, ps_bytes d11, ps_bytes d12, ps_bytes d13,
    ps_bytes d14, ps_bytes d15, ps_bytes v0, ps_bytes v1, ps_bytes v2, ps_bytes v3, ps_bytes v4, ps_bytes v5,
    ps_bytes v6, ps_bytes v7, ps_bytes v8, ps_bytes v9, ps_bytes v10, ps_bytes v11, ps_bytes v12, ps_bytes v13,
    ps_bytes v14, ps_bytes v15, ps_bytes aux, ps_bytes selection, __global uchar *bitmap, __global uchar *mask,
    volatile __global uint *status, __local uint *scratch) {
  const ps_bytes data[PS_MAX_COLS] = {d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13, d14, d15};
  const ps_bytes validity[PS_MAX_COLS] = {v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15};
  __constant ps_program *prog = &launch->prog;
  ps_w_bufs B;
  B.data_aligned = 0;
  B.validity_aligned = 0;
  for (uint c = 0; c < PS_MAX_COLS; ++c) {
    /* cl_mem base addresses are at least 4-byte aligned: the offset decides */
    B.data[c] = data[c] + launch->data_offset[c];
    B.validity[c] = validity[c] + launch->validity_offset[c];
    B.data_bytes[c] = prog->cols[c].data_bytes;
    B.validity_bytes[c] = prog->cols[c].validity_bytes;
    B.data_aligned |= (uint)((launch->data_offset[c] & 3) == 0) << c;
    B.validity_aligned |= (uint)((launch->validity_offset[c] & 3) == 0) << c;
  }
  B.aux.buf = aux;
  B.aux.offset = launch->aux_offset;
  B.aux.size = (ulong)prog->aux_words * 4;
  const ulong rows = launch->rows, words = (rows + 31) / 32, first = get_global_id(0) * (ulong)PS_WORDS_SPAN;
  uint count = 0;
  for (ulong g = first; g < first + PS_WORDS_SPAN && g < words; ++g) {
    uint live = ps_row_mask(rows, g), selected = 0;
    if (launch->has_selection) {
      const ps_region sel = {selection, launch->selection_offset, (rows + 7) / 8};
      live &= ps_load_word(sel, g);
    }
    ps_w_status s = {0u, 0u};
    if (live != 0) selected = ps_where_word(prog, &B, g, live, 0, 0, &s);
    if (launch->want_bitmap) ps_store_word(bitmap, launch->bitmap_offset, (rows + 7) / 8, g, selected);
    if (launch->want_mask) ps_store_mask(mask, launch->mask_offset, rows, g, selected);
    if (s.slots) atomic_or(&status[PS_FILTER_STATUS_CORRUPT], s.slots);
    count += popcount(selected);
  }
  const uint group_count = ps_group_sum(count, scratch);
  if (launch->want_count && get_local_id(0) == 0 && group_count != 0)
    atomic_add(&status[PS_FILTER_STATUS_COUNT], group_count);
}
