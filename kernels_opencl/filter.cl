/*
 * filter.cl: evaluates a flat predicate program (core/ps_program.h, whose
 * comment is the binding per-row semantics) over one chunk of rows, with the
 * per-row interpreter of kernels_shared/ps_rows.h (the one CUDA's per-row
 * kernel runs).
 *
 * Work-item g produces result word g: rows [32g, 32g+32) of the chunk, row
 * 32g+j at bit j, each row of it that exists (and is in the input selection)
 * evaluated by ps_rows_eval.
 *
 * Plain OpenCL C 1.2, built after common.cl (see there), filter_cols.cl
 * (the columns as ps_rows.h reads them) and ps_rows.h.
 * Outputs: the bitmap (ceil(rows/8) bytes), a byte-per-row mask (rows bytes)
 * and the count; input: an optional selection that restricts the rows
 * evaluated.
 *
 * Specialization: when the host prepends a shape table (PS_SPECIALIZED, the
 * text of opencl_eval.c's shape_of: opcodes, flags and slots as compile-time
 * constants, read through ps_rows.h's PS_ROWS_OP and friends), the compiler
 * unrolls the program into straight-line code for that shape. Bounds,
 * literals, offsets and the columns' widths stay run-time values, so one
 * build serves every query of the same shape.
 */

/* ---- entry point ------------------------------------------------------ */

__kernel void ps_filter_words(
    __constant ps_filter_launch *launch,
    ps_bytes d0, ps_bytes d1, ps_bytes d2, ps_bytes d3, ps_bytes d4, ps_bytes d5, ps_bytes d6,
    ps_bytes d7, ps_bytes d8, ps_bytes d9, ps_bytes d10, ps_bytes d11, ps_bytes d12,
    ps_bytes d13, ps_bytes d14, ps_bytes d15,
    ps_bytes v0, ps_bytes v1, ps_bytes v2, ps_bytes v3, ps_bytes v4, ps_bytes v5, ps_bytes v6,
    ps_bytes v7, ps_bytes v8, ps_bytes v9, ps_bytes v10, ps_bytes v11, ps_bytes v12,
    ps_bytes v13, ps_bytes v14, ps_bytes v15,
    ps_bytes aux, ps_bytes selection, __global uchar *bitmap, __global uchar *mask,
    volatile __global uint *status, __local uint *scratch) {
  const ps_bytes data[PS_MAX_COLS] = {d0, d1, d2,  d3,  d4,  d5,  d6,  d7,
                                      d8, d9, d10, d11, d12, d13, d14, d15};
  const ps_bytes validity[PS_MAX_COLS] = {v0, v1, v2,  v3,  v4,  v5,  v6,  v7,
                                          v8, v9, v10, v11, v12, v13, v14, v15};
  ulong rows = launch->rows;
  ulong g = get_global_id(0);
  uint selected = 0;
  if (g < (rows + 31) / 32) {
    uint row_mask = ps_row_mask(rows, g);
    /* Rows outside an input selection are not evaluated at all (no corrupt
     * read can come from them). The selection may be the bitmap itself
     * (in-place refinement): word g is read here before it is written. */
    if (launch->has_selection) {
      ps_region sel = {selection, launch->selection_offset, (rows + 7) / 8};
      row_mask &= ps_load_word(sel, g);
    }
    uint corrupt = 0;
    if (row_mask != 0) {
      const ps_filter_src src = {launch, data, validity, {aux, launch->aux_offset, (ulong)launch->prog.aux_words * 4}};
      for (uint j = 0; j < 32; ++j)
        if ((row_mask >> j) & 1u) selected |= (uint)ps_rows_eval(&src, 32 * g + j, &corrupt) << j;
    }
    if (launch->want_bitmap) ps_store_word(bitmap, launch->bitmap_offset, (rows + 7) / 8, g, selected);
    if (launch->want_mask) ps_store_mask(mask, launch->mask_offset, rows, g, selected);
    if (corrupt) atomic_or(&status[PS_FILTER_STATUS_CORRUPT], corrupt);
  }
  uint group_count = ps_group_sum(popcount(selected), scratch);
  if (launch->want_count && get_local_id(0) == 0 && group_count != 0)
    atomic_add(&status[PS_FILTER_STATUS_COUNT], group_count);
}
