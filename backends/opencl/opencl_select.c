/* After the filter (core/backend.h): row ids of a selection (size, then
 * retrieve), reductions in code space and late materialization. Each call
 * returns host values, so each synchronizes once (gather: once per 2^31 ids). */
#include <string.h>

#include "opencl_internal.h"

_Static_assert(sizeof(ps_select_launch) == sizeof(ps_prog_col) + 11 * 8 + 4 * 4,
               "ps_select_launch must have no padding: host and device lay it out alike");
_Static_assert(PS_SELECT_GATHER_CODE32 == PS_GATHER_CODE32 && PS_SELECT_GATHER_INT == PS_GATHER_INT &&
                   PS_SELECT_GATHER_F64 == PS_GATHER_F64 && PS_SELECT_GATHER_F32 == PS_GATHER_F32,
               "launch.h mirrors core/backend.h's gather kinds");

/* Reduce launches at most this many work-groups (grid-stride beyond), which
 * bounds the partials read back per chunk. */
#define PS_CL_REDUCE_MAX_GROUPS 1024u
/* ps_reduce_tiles: work-groups per compute unit, at most. A GPU's compute
 * unit holds several groups at once (an H100 or H200 SM: 16 of 128
 * work-items, by threads and local memory at 24 bits), and one that waits at
 * a barrier for its tile's loads is covered by the others; more groups than
 * fit would only add partials. */
#define PS_CL_REDUCE_TILE_GROUPS_PER_CU 16u

/* Ids per gather launch: 2^26 work-items of 32 ids, indexes fit 32 bits. */
#define PS_CL_GATHER_MAX_IDS (UINT64_C(1) << 31)

static cl_mem or_dummy(const ps_backend *be, ps_devmem m) { return m.handle ? (cl_mem)m.handle : be->dummy; }

static ps_status invalid(ps_backend *be, const char *what, unsigned long long v) {
  return ps_backend_error(be->ctx, PS_ERR_INTERNAL, "OpenCL: %s (%llu)", what, v);
}

static ps_status check_col(ps_backend *be, const ps_prog_col *c, ps_devmem data, ps_devmem validity) {
  if (c->width > 64) return invalid(be, "column width above 64", c->width);
  if (c->kind > PS_KIND_FLOAT32) return invalid(be, "unknown column kind", c->kind);
  if (c->scale > 18) return invalid(be, "column scale above 18", c->scale);
  if (c->width > 0 && c->data_bytes > 0 && !data.handle) return invalid(be, "column without its data", c->data_bytes);
  if ((c->flags & PS_COLF_VALIDITY) && c->validity_bytes > 0 && !validity.handle)
    return invalid(be, "column without its validity", c->validity_bytes);
  return PS_OK;
}

/* Sets the kernel's arguments in signature order: the launch block, then the
 * buffers, then local memory (local_bytes 0 = none). */
static ps_status set_args(ps_backend *be, cl_kernel k, cl_mem launch, const cl_mem *bufs, cl_uint n,
                          size_t local_bytes) {
  PS_CL_TRY(ps_cl_set_arg(be, k, 0, sizeof(cl_mem), &launch));
  for (cl_uint i = 0; i < n; ++i) PS_CL_TRY(ps_cl_set_arg(be, k, 1 + i, sizeof(cl_mem), &bufs[i]));
  if (local_bytes) PS_CL_TRY(ps_cl_set_arg(be, k, 1 + n, local_bytes, NULL));
  return PS_OK;
}

/* Uploads the launch block, sets the arguments and enqueues the kernel. */
static ps_status run_kernel(ps_backend *be, const ps_cl_cached *prog, ps_cl_kernel_id id, const ps_select_launch *block,
                            const cl_mem *bufs, cl_uint n, size_t local_per_item, size_t global) {
  cl_mem launch;
  PS_CL_TRY(ps_cl_upload(be, PS_CL_PARAM_LAUNCH, block, sizeof *block, "launch block", &launch));
  ps_status st = set_args(be, prog->kernels[id], launch, bufs, n, local_per_item * prog->work_group[id]);
  if (st == PS_OK) st = ps_cl_launch(be, prog, id, global);
  clReleaseMemObject(launch);
  return st;
}

static ps_status read_back(ps_backend *be, cl_mem src, size_t bytes, void *dst, cl_bool blocking) {
  cl_int err = clEnqueueReadBuffer(be->queue, src, blocking, 0, bytes, dst, 0, NULL, NULL);
  if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clEnqueueReadBuffer", NULL);
  return PS_OK;
}

/* ---- row ids ------------------------------------------------------------- */

/* Row ids in two passes and one synchronization: `units` counts (one per
 * work-group of ps_count_words, or per run of ps_count_runs on a CPU) into
 * the scratch buffer, scanned there in place by ps_scan_counts (the total
 * after them), the ids written from those offsets, and only then the total
 * read back: the host neither scans nor uploads between the passes, and
 * both passes read one launch block. sum_offsets (by work-groups, few
 * groups): no scan; ps_write_ids sums the counts before each group and
 * writes the total itself (select.cl). */
static ps_status row_ids_two_pass(ps_backend *be, const ps_cl_cached *prog, const ps_row_ids_args *a,
                                  const ps_select_launch *block, ps_cl_kernel_id count_id, ps_cl_kernel_id write_id,
                                  size_t units, size_t global, size_t write_local_per_item, int sum_offsets) {
  cl_mem counts;
  PS_CL_TRY(ps_cl_scratch(be, (units + 1) * sizeof(cl_uint), &counts));
  const int summed = sum_offsets && a->out.handle; /* a count alone still scans for its total */
  ps_select_launch both = *block;
  if (summed) both.flags |= PS_SELECT_SUM_OFFSETS;
  cl_mem launch;
  PS_CL_TRY(ps_cl_upload(be, PS_CL_PARAM_LAUNCH, &both, sizeof both, "launch block", &launch));
  cl_mem count_bufs[] = {(cl_mem)a->bitmap.handle, counts};
  ps_status st = set_args(be, prog->kernels[count_id], launch, count_bufs, 2,
                          count_id == PS_CL_COUNT_WORDS ? sizeof(cl_uint) * prog->work_group[count_id] : 0);
  if (st == PS_OK) st = ps_cl_launch(be, prog, count_id, global);
  if (st == PS_OK && !summed) {
    cl_kernel scan = prog->kernels[PS_CL_SCAN_COUNTS];
    const cl_ulong n = units;
    st = ps_cl_set_arg(be, scan, 0, sizeof(cl_mem), &counts);
    if (st == PS_OK) st = ps_cl_set_arg(be, scan, 1, sizeof n, &n);
    if (st == PS_OK) st = ps_cl_set_arg(be, scan, 2, prog->work_group[PS_CL_SCAN_COUNTS] * sizeof(cl_uint), NULL);
    if (st == PS_OK) st = ps_cl_launch(be, prog, PS_CL_SCAN_COUNTS, prog->work_group[PS_CL_SCAN_COUNTS]);
  }
  if (st == PS_OK && a->out.handle) {
    cl_mem write_bufs[] = {(cl_mem)a->bitmap.handle, counts, (cl_mem)a->out.handle};
    st = set_args(be, prog->kernels[write_id], launch, write_bufs, 3, write_local_per_item * prog->work_group[write_id]);
    if (st == PS_OK) st = ps_cl_launch(be, prog, write_id, global);
  }
  clReleaseMemObject(launch);
  PS_CL_TRY(st);
  cl_uint total = 0;
  cl_int err = clEnqueueReadBuffer(be->queue, counts, CL_TRUE, units * sizeof(cl_uint), sizeof total, &total, 0, NULL,
                                   NULL);
  if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clEnqueueReadBuffer", "row id total");
  *a->count = total; /* a chunk has < 2^32 rows */
  return PS_OK;
}

/* The default rounds of row ids by work-groups: PS_CL_IDS_GROUP_ROUNDS where
 * the chunk's words still give two groups per compute unit, fewer on smaller
 * chunks (one round below that: a work-item per word, as many groups as the
 * words make). */
static uint64_t ids_group_rounds(uint64_t words, size_t group, uint32_t compute_units) {
  const uint64_t per_round = (uint64_t)group * 2u * compute_units; /* compute_units >= 1 */
  const uint64_t rounds = words / per_round;
  return rounds < 1 ? 1 : rounds > PS_CL_IDS_GROUP_ROUNDS ? PS_CL_IDS_GROUP_ROUNDS : rounds;
}

ps_status ps_cl_row_ids(ps_backend *be, const ps_row_ids_args *a) {
  if (a->rows == 0 || a->rows > PS_CL_MAX_CHUNK_ROWS) return invalid(be, "row ids: chunk rows", a->rows);
  if (a->index_bytes != 4 && a->index_bytes != 8) return invalid(be, "row ids: index bytes", a->index_bytes);
  const ps_cl_cached *prog;
  PS_CL_TRY(ps_cl_program(be, NULL, &prog));

  ps_select_launch block;
  memset(&block, 0, sizeof block);
  block.selection_offset = a->bitmap.offset;
  block.rows = a->rows;
  block.id_base = a->id_base;
  block.index_bytes = a->index_bytes;
  block.out_offset = a->out.handle ? a->out.offset : 0;
  const uint64_t words = (a->rows + 31) / 32;
  /* On a CPU, work-items owning runs of PS_CL_IDS_RUN_WORDS words (see
   * select.cl); they store whole ids (vstore4 of uint / ulong), so they need
   * the output aligned to the id size and little-endian words. */
  if (ps_cl_ids_by_runs(be) && be->little_endian && block.out_offset % a->index_bytes == 0) {
    const int opt = ps_cl_options(be)->opencl_ids_run_words;
    const uint64_t run_words = opt > 0 ? (uint64_t)opt : PS_CL_IDS_RUN_WORDS;
    const size_t runs = (size_t)((words + run_words - 1) / run_words);
    block.run_words = run_words;
    return row_ids_two_pass(be, prog, a, &block, PS_CL_COUNT_RUNS, PS_CL_WRITE_RUNS, runs, runs, 0, 0);
  }
  /* by work-groups: a word in each of item_words rounds (select.cl: one
   * count and offset per group for all its rounds; each round's ids staged
   * and stored coalesced), the rounds chosen by ids_group_rounds */
  const int opt = ps_cl_options(be)->opencl_ids_run_words;
  const size_t group = prog->work_group[PS_CL_COUNT_WORDS];
  const uint64_t item_words = opt > 0 ? (uint64_t)opt : ids_group_rounds(words, group, be->compute_units);
  const uint64_t items = (words + item_words - 1) / item_words;
  block.run_words = item_words;
  const size_t groups = (size_t)((items + group - 1) / group);
  /* few groups: each sums the counts before it (at most
   * PS_CL_IDS_SUM_PER_ITEM a work-item) instead of a scan's launch */
  const int sum_offsets = !ps_cl_options(be)->opencl_ids_scan && groups <= PS_CL_IDS_SUM_PER_ITEM * group;
  return row_ids_two_pass(be, prog, a, &block, PS_CL_COUNT_WORDS, PS_CL_WRITE_IDS, groups, (size_t)items,
                          (1 + 16) * sizeof(cl_uint), sum_offsets);
}

/* ---- reduce ---------------------------------------------------------------- */

/* Local memory of ps_reduce_tiles (select.cl) at width w with a group of
 * `group` work-items: the tile's group*w stream words, one more and padding
 * to 16 bytes, the group's row masks; the tree's partials reuse it. */
static size_t reduce_tiles_local(uint32_t w, size_t group) {
  const size_t stage = 4 * (group * w + 4 + group), tree = 8 * PS_REDUCE_PARTIAL_WORDS * group;
  return stage > tree ? stage : tree;
}

/* The tile kernel for a, or PS_CL_REDUCE: only FOR codes of 1..32 bits are
 * staged as tiles, by groups of whole 32-lane teams in local memory. */
static ps_cl_kernel_id reduce_kernel(ps_backend *be, const ps_cl_cached *prog, const ps_reduce_args *a) {
  const ps_prog_col *c = &a->col;
  const size_t group = prog->work_group[PS_CL_REDUCE_TILES];
  if (!ps_cl_reduce_by_tiles(be) || c->encoding != PS_ENC_FOR || c->width < 1 || c->width > 32 ||
      (c->flags & PS_COLF_NO_CODES) || group < 32 || reduce_tiles_local(c->width, group) > be->local_mem)
    return PS_CL_REDUCE;
  return PS_CL_REDUCE_TILES;
}

ps_status ps_cl_reduce(ps_backend *be, const ps_reduce_args *a) {
  if (a->rows == 0 || a->rows > PS_CL_MAX_CHUNK_ROWS) return invalid(be, "reduce: chunk rows", a->rows);
  PS_CL_TRY(check_col(be, &a->col, a->data, a->validity));
  const ps_cl_cached *prog;
  PS_CL_TRY(ps_cl_program(be, NULL, &prog));

  ps_select_launch block;
  memset(&block, 0, sizeof block);
  block.col = a->col;
  block.data_offset = a->data.handle ? a->data.offset : 0;
  block.validity_offset = a->validity.handle ? a->validity.offset : 0;
  block.selection_offset = a->selection.handle ? a->selection.offset : 0;
  block.rows = a->rows;
  block.flags = a->selection.handle ? PS_SELECT_HAS_SELECTION : 0;

  const ps_cl_kernel_id id = reduce_kernel(be, prog, a);
  size_t words = (size_t)((a->rows + 31) / 32), group = prog->work_group[id];
  size_t groups = (words + group - 1) / group; /* a tile is a group's worth of words */
  const size_t max_groups =
      id == PS_CL_REDUCE_TILES ? (size_t)be->compute_units * PS_CL_REDUCE_TILE_GROUPS_PER_CU : PS_CL_REDUCE_MAX_GROUPS;
  if (groups > max_groups) groups = max_groups;
  size_t partial_bytes = groups * PS_REDUCE_PARTIAL_WORDS * sizeof(uint64_t);
  cl_mem partials;
  PS_CL_TRY(ps_cl_scratch(be, partial_bytes, &partials));
  uint64_t *host = ps_host_alloc(be->ctx, partial_bytes);
  if (!host) return ps_backend_error(be->ctx, PS_ERR_OUT_OF_MEMORY, "OpenCL: reduce: %zu partials", groups);

  cl_mem bufs[] = {or_dummy(be, a->data), or_dummy(be, a->validity), or_dummy(be, a->selection), partials, be->status};
  cl_uint corrupt = 0;
  ps_status st = ps_cl_reset_status(be, 0, 1);
  if (st == PS_OK && id == PS_CL_REDUCE_TILES) {
    /* local memory by the column's width: run_kernel's is per work-item */
    cl_mem launch;
    st = ps_cl_upload(be, PS_CL_PARAM_LAUNCH, &block, sizeof block, "launch block", &launch);
    if (st == PS_OK) {
      st = set_args(be, prog->kernels[id], launch, bufs, 5, reduce_tiles_local(a->col.width, group));
      if (st == PS_OK) st = ps_cl_launch(be, prog, id, groups * group);
      clReleaseMemObject(launch);
    }
  } else if (st == PS_OK) {
    st = run_kernel(be, prog, id, &block, bufs, 5, PS_REDUCE_PARTIAL_WORDS * sizeof(uint64_t), groups * group);
  }
  /* In-order queue: the blocking read of the status waits for both. */
  if (st == PS_OK) st = read_back(be, partials, partial_bytes, host, CL_FALSE);
  if (st == PS_OK) st = read_back(be, be->status, sizeof corrupt, &corrupt, CL_TRUE);
  if (st == PS_OK && corrupt) st = ps_corrupt_error(be->ctx, 0, &a->col, 0, a->rows - 1, -1);
  if (st == PS_OK) {
    uint64_t count = 0, mn = UINT64_MAX, mx = 0, lo = 0, hi = 0;
    for (size_t g = 0; g < groups; ++g) {
      const uint64_t *p = host + PS_REDUCE_PARTIAL_WORDS * g;
      count += p[0];
      if (p[1] < mn) mn = p[1];
      if (p[2] > mx) mx = p[2];
      lo += p[3];
      hi += p[4] + (lo < p[3]);
    }
    if (count == 0) mn = UINT64_MAX, mx = 0; /* ps_reduce_tiles' partials hold 32-bit neutral ones */
    *a->count = count, *a->min_code = mn, *a->max_code = mx, *a->sum_lo = lo, *a->sum_hi = hi;
  }
  ps_host_free(be->ctx, host);
  return st;
}

/* ---- gather ---------------------------------------------------------------- */

static ps_status read_id(ps_backend *be, const ps_gather_args *a, uint64_t i, uint64_t *id) {
  cl_uint id32 = 0;
  cl_ulong id64 = 0;
  cl_int err =
      clEnqueueReadBuffer(be->queue, (cl_mem)a->ids.handle, CL_TRUE, (size_t)(a->ids.offset + i * a->index_bytes),
                          a->index_bytes, a->index_bytes == 4 ? (void *)&id32 : (void *)&id64, 0, NULL, NULL);
  if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clEnqueueReadBuffer", "row id");
  *id = a->index_bytes == 4 ? id32 : id64;
  return PS_OK;
}

/* The first failure in id order, as a serial loop would meet it. */
static ps_status gather_error(ps_backend *be, const ps_gather_args *a, uint64_t first, const cl_uint *status) {
  cl_uint bad_id = status[PS_SELECT_STATUS_BAD_ID], bad_code = status[PS_SELECT_STATUS_BAD_CODE];
  uint64_t i = first + (bad_id < bad_code ? bad_id : bad_code), id = 0;
  PS_CL_TRY(read_id(be, a, i, &id));
  if (bad_id < bad_code)
    return ps_backend_error(be->ctx, PS_ERR_INVALID_ARGUMENT, "ids[%llu] = %llu is past the column's %llu rows",
                            (unsigned long long)i, (unsigned long long)id, (unsigned long long)a->rows);
  return ps_corrupt_error(be->ctx, 0, &a->col, id, id, (int64_t)i);
}

ps_status ps_cl_gather(ps_backend *be, const ps_gather_args *a) {
  if (a->index_bytes != 4 && a->index_bytes != 8) return invalid(be, "gather: index bytes", a->index_bytes);
  if (a->out_type < PS_GATHER_CODE32 || a->out_type > PS_GATHER_F32) return invalid(be, "gather: kind", a->out_type);
  uint32_t vb = a->value_bytes;
  if (vb != 1 && vb != 2 && vb != 4 && vb != 8) return invalid(be, "gather: value bytes", vb);
  PS_CL_TRY(check_col(be, &a->col, a->data, a->validity));
  if ((a->out_type == PS_GATHER_F64 || a->out_type == PS_GATHER_F32) && !ps_cl_fp64(be))
    return ps_backend_error(be->ctx, PS_ERR_UNSUPPORTED, "OpenCL: %s lacks cl_khr_fp64, which decoding floats needs",
                            be->device_name);
  if (a->count == 0) return PS_OK;
  if (!a->ids.handle || !a->values.handle) return invalid(be, "gather: ids or values missing", 0);
  const ps_cl_cached *prog;
  PS_CL_TRY(ps_cl_program(be, NULL, &prog));

  ps_select_launch block;
  memset(&block, 0, sizeof block);
  block.col = a->col;
  block.data_offset = a->data.handle ? a->data.offset : 0;
  block.validity_offset = a->validity.handle ? a->validity.offset : 0;
  block.ids_offset = a->ids.offset;
  block.out_offset = a->values.offset;
  block.validity_out_offset = a->validity_out.handle ? a->validity_out.offset : 0;
  block.rows = a->rows;
  block.count = a->count;
  block.index_bytes = a->index_bytes;
  block.out_type = a->out_type;
  block.value_bytes = vb;
  block.flags = a->validity_out.handle ? PS_SELECT_WANT_VALIDITY : 0;

  cl_mem bufs[] = {or_dummy(be, a->data),    or_dummy(be, a->validity),     (cl_mem)a->ids.handle,
                   (cl_mem)a->values.handle, or_dummy(be, a->validity_out), be->status};
  /* a work-item per id where the group holds whole 32-id validity words */
  const int by_id = ps_cl_gather_by_id(be) && prog->work_group[PS_CL_GATHER_IDS] >= 32;
  for (uint64_t first = 0; first < a->count; first += PS_CL_GATHER_MAX_IDS) {
    uint64_t n = a->count - first < PS_CL_GATHER_MAX_IDS ? a->count - first : PS_CL_GATHER_MAX_IDS;
    block.first = first;
    cl_uint status[2] = {0, 0};
    PS_CL_TRY(ps_cl_reset_status(be, 0xffffffffu, 2));
    if (by_id) /* local: a validity word per 32 work-items, within the byte per work-item given */
      PS_CL_TRY(run_kernel(be, prog, PS_CL_GATHER_IDS, &block, bufs, 6, 1, (size_t)n));
    else
      PS_CL_TRY(run_kernel(be, prog, PS_CL_GATHER, &block, bufs, 6, 0, (size_t)((n + 31) / 32)));
    PS_CL_TRY(read_back(be, be->status, sizeof status, status, CL_TRUE));
    if (status[0] != 0xffffffffu || status[1] != 0xffffffffu) return gather_error(be, a, first, status);
  }
  return PS_OK;
}
