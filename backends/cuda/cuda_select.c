/*
 * After the filter (core/backend.h): row ids of a selection, the code-space
 * reduction of a column and late materialization, on the kernels of
 * kernels_cuda/select.cu. Each call returns host values (a count, the
 * aggregates, or whether an id or a code was bad), so each synchronizes the
 * stream once, after its launches.
 *
 * Workspace: one device buffer per context, grown as needed and kept (most
 * calls come chunk after chunk with the same sizes); its first
 * PS_CUDA_SELECT_RESULT_BYTES hold what is read back, into a pinned copy.
 * Row ids, reduce and gather write their few result words straight into
 * that pinned copy, mapped into the device's address space, so a call is
 * its launches and one synchronization: no copy-engine transfer after the
 * kernel (a device that cannot map it gets the copy instead).
 */
#include <stdint.h>
#include <string.h>

#include "cuda_backend.h"
#include "ps_cuda_kernels.h"
#include "ps_cuda_query.h"
#include "cuda_query_spec.h"
#include "kcache.h"
#include "query_policy.h"
#include "query_spec.h"

_Static_assert(PS_CUDA_GATHER_CODE32 == PS_GATHER_CODE32 && PS_CUDA_GATHER_INT == PS_GATHER_INT &&
                   PS_CUDA_GATHER_F64 == PS_GATHER_F64 && PS_CUDA_GATHER_F32 == PS_GATHER_F32,
               "ps_cuda_kernels.h mirrors core/backend.h's gather kinds");

/* Results area at the front of the workspace (a multiple of 256, so what
 * follows stays aligned for CUB). Its first PS_CUDA_SELECT_READ_BYTES are
 * each call's results (where the device cannot write the pinned copy);
 * past them lie words that keep their value from call to call, so that no
 * call spends a memset launch on them, each put back by its kernel's last
 * block: the reduce kernel's finished-blocks counter (0), the gather status
 * (two UINT64_MAX words) and finished-blocks counter (0), the row-id
 * count's sum and finished-blocks counter (both 0). All are set when the
 * workspace is allocated. */
#define PS_CUDA_SELECT_RESULT_BYTES 256u
#define PS_CUDA_SELECT_READ_BYTES 128u
#define PS_CUDA_SELECT_REDUCE_DONE 128u   /* unsigned int */
#define PS_CUDA_SELECT_GATHER_STATUS 144u /* 2 x uint64 */
#define PS_CUDA_SELECT_GATHER_DONE 160u   /* unsigned int */
#define PS_CUDA_SELECT_IDS_TOTAL 164u     /* uint32: count_ids' sum, 0 between calls */
#define PS_CUDA_SELECT_IDS_DONE 168u      /* unsigned int */
/* Rows of one row-ids or reduce call: the backend's chunk limit, so tile
 * counts and offsets fit 32 bits. */
#define PS_CUDA_SELECT_MAX_ROWS ((uint64_t)1 << 31)
/* Smallest workspace allocated: growth is by powers of two from here. */
#define PS_CUDA_SELECT_MIN_WS ((size_t)1 << 16)
_Static_assert(PS_Q_STATUS_WORDS * 4 <= PS_CUDA_SELECT_READ_BYTES, "a query's status words are each call's results");

static const double select_pow10[19] = PS_POW10_TABLE;

static void *devptr(ps_devmem m) { return (uint8_t *)m.handle + m.offset; }
static uint32_t aligned_to(const void *p, uintptr_t n) { return ((uintptr_t)p % n) == 0; }

static ps_status internal(ps_backend *be, const char *what, unsigned long long v) {
  return ps_backend_error(be->ctx, PS_ERR_INTERNAL, "cuda: %s (%llu)", what, v);
}

void ps_cuda_select_release(ps_backend *be) {
  if (be->qstatus) (void)cudaFree(be->qstatus);
  be->qstatus = NULL;
  if (be->select_ws) (void)cudaFree(be->select_ws);
  if (be->select_host) (void)cudaFreeHost(be->select_host);
  if (be->collect_host) (void)cudaFreeHost(be->collect_host);
  be->collect_host = NULL;
  be->collect_host_bytes = 0;
  if (be->ids_state) (void)cudaFree(be->ids_state);
  be->select_ws = be->select_host = be->select_host_dev = be->ids_state = NULL;
  be->select_ws_bytes = be->ids_state_bytes = 0;
  be->ids_ready = 0;
}

/* The gather's status words back at UINT64_MAX (when the workspace is set). */
static ps_status reset_gather_status(ps_backend *be) {
  return ps_cuda_status(be->ctx,
                        cudaMemsetAsync((uint8_t *)be->select_ws + PS_CUDA_SELECT_GATHER_STATUS, 0xff,
                                        2 * sizeof(uint64_t), be->stream),
                        "cudaMemsetAsync (gather status)", false);
}

/* Makes the workspace hold `bytes` past the results area. be's device is
 * current. The old buffer may still be read by work queued on the stream, so
 * the stream is drained before it is freed (only when growing). */
static ps_status ensure_workspace(ps_backend *be, size_t bytes) {
  ps_context *ctx = be->ctx;
  if (!be->select_host) {
    ps_status st = ps_cuda_alloc_host_results(be, PS_CUDA_SELECT_RESULT_BYTES, &be->select_host, &be->select_host_dev);
    if (st != PS_OK) return st;
  }
  const size_t need = PS_CUDA_SELECT_RESULT_BYTES + bytes;
  if (be->select_ws && be->select_ws_bytes >= need) return PS_OK;
  size_t size = PS_CUDA_SELECT_MIN_WS;
  while (size < need) size *= 2;
  if (be->select_ws) {
    ps_status st = ps_cuda_status(ctx, cudaStreamSynchronize(be->stream), "cudaStreamSynchronize", false);
    if (st != PS_OK) return st;
    (void)cudaFree(be->select_ws);
    be->select_ws = NULL;
    be->select_ws_bytes = 0;
  }
  ps_status st = ps_cuda_status(ctx, cudaMalloc(&be->select_ws, size), "cudaMalloc (select workspace)", false);
  if (st != PS_OK) {
    be->select_ws = NULL;
    return st;
  }
  be->select_ws_bytes = size;
  st = ps_cuda_status(ctx, cudaMemsetAsync(be->select_ws, 0, PS_CUDA_SELECT_RESULT_BYTES, be->stream),
                      "cudaMemsetAsync (select workspace)", false);
  if (st == PS_OK) st = reset_gather_status(be);
  if (st != PS_OK) { /* not usable half set: allocate again next time */
    (void)cudaFree(be->select_ws);
    be->select_ws = NULL;
    be->select_ws_bytes = 0;
  }
  return st;
}

static void *kernel_workspace(ps_backend *be) { return (uint8_t *)be->select_ws + PS_CUDA_SELECT_RESULT_BYTES; }
static size_t kernel_workspace_bytes(ps_backend *be) { return be->select_ws_bytes - PS_CUDA_SELECT_RESULT_BYTES; }

/* Copies `bytes` of the results area from `offset` to the pinned copy and
 * waits. */
static ps_status read_results_at(ps_backend *be, size_t offset, size_t bytes) {
  ps_status st = ps_cuda_status(be->ctx,
                                cudaMemcpyAsync(be->select_host, (uint8_t *)be->select_ws + offset, bytes,
                                                cudaMemcpyDeviceToHost, be->stream),
                                "cudaMemcpyAsync (select results)", false);
  if (st == PS_OK) st = ps_cuda_status(be->ctx, cudaStreamSynchronize(be->stream), "cudaStreamSynchronize", false);
  return st;
}

static ps_status read_results(ps_backend *be, size_t bytes) { return read_results_at(be, 0, bytes); }

/* Where a kernel writes the results the host reads: the pinned copy itself
 * when it is mapped, else the results area. */
static void *results_dev(ps_backend *be) { return be->select_host_dev ? be->select_host_dev : be->select_ws; }

/* Waits for the stream; then the `bytes` of results the kernels wrote at
 * results_dev(be) are in the pinned copy (kernel writes to mapped memory are
 * visible to the host once the stream has finished). */
static ps_status take_results(ps_backend *be, size_t bytes) {
  if (!be->select_host_dev) return read_results(be, bytes);
  return ps_cuda_status(be->ctx, cudaStreamSynchronize(be->stream), "cudaStreamSynchronize", false);
}

/* The checks every backend entry makes of a column's description. */
static ps_status check_col(ps_backend *be, const ps_prog_col *c, ps_devmem data, ps_devmem validity) {
  if (c->width > 64) return internal(be, "column width above 64", c->width);
  if (c->kind > PS_KIND_FLOAT32) return internal(be, "unknown column kind", c->kind);
  if (c->scale > 18) return internal(be, "column scale above 18", c->scale);
  if (c->width > 0 && c->data_bytes > 0 && !data.handle) return internal(be, "column without its data", c->data_bytes);
  if ((c->flags & PS_COLF_VALIDITY) && c->validity_bytes > 0 && !validity.handle)
    return internal(be, "column without its validity", c->validity_bytes);
  return PS_OK;
}

/* ---- row ids ----------------------------------------------------------------- */

/* The results area, and the row id state (be->ids_state) for a chunk of
 * `rows` rows, grown as needed; *tiles the chunk's tiles. be's device is
 * current. Growing drains the stream first (queued work may still use the
 * old state) and leaves no tile ready. */
static ps_status ids_state(ps_backend *be, uint64_t rows, uint32_t *tiles) {
  size_t need = 0;
  ps_status st =
      ps_cuda_status(be->ctx, ps_cuda_row_ids_workspace(rows, &need, tiles), "sizing the row id state", false);
  if (st == PS_OK) st = ensure_workspace(be, 0);
  if (st != PS_OK || (be->ids_state && be->ids_state_bytes >= need)) return st;
  size_t size = PS_CUDA_SELECT_MIN_WS;
  while (size < need) size *= 2;
  if (be->ids_state) {
    st = ps_cuda_status(be->ctx, cudaStreamSynchronize(be->stream), "cudaStreamSynchronize", false);
    if (st != PS_OK) return st;
    (void)cudaFree(be->ids_state);
    be->ids_state = NULL;
    be->ids_state_bytes = 0;
  }
  be->ids_ready = 0;
  st = ps_cuda_status(be->ctx, cudaMalloc(&be->ids_state, size), "cudaMalloc (row id state)", false);
  if (st != PS_OK) {
    be->ids_state = NULL;
    return st;
  }
  be->ids_state_bytes = size;
  return PS_OK;
}

/* After a writing launch over `tiles` tiles and its synchronization: those
 * tiles are at rest too when it all succeeded; after a failure nothing is
 * assumed. */
static void ids_state_used(ps_backend *be, uint32_t tiles, ps_status st) {
  if (st != PS_OK)
    be->ids_ready = 0;
  else if (tiles > be->ids_ready)
    be->ids_ready = tiles;
}

ps_status ps_cuda_row_ids(ps_backend *be, const ps_row_ids_args *a) {
  if (a->rows > PS_CUDA_SELECT_MAX_ROWS) return internal(be, "row ids: chunk rows", a->rows);
  if (a->index_bytes != 4 && a->index_bytes != 8) return internal(be, "row ids: index bytes", a->index_bytes);
  if (!a->count) return internal(be, "row ids: no count", 0);
  if (a->rows == 0) return *a->count = 0, PS_OK;
  if (!a->bitmap.handle) return internal(be, "row ids: no selection", a->rows);

  ps_cuda_row_ids_params p;
  memset(&p, 0, sizeof p);
  p.bitmap = devptr(a->bitmap);
  p.bitmap_aligned = aligned_to(p.bitmap, 4);
  if (a->out.handle) {
    p.out = devptr(a->out);
    p.out_aligned = aligned_to(p.out, a->index_bytes);
  }
  p.rows = a->rows;
  p.id_base = a->id_base;
  p.index_bytes = a->index_bytes;
  p.capacity = UINT32_MAX; /* the core sized the output: every id fits */

  int prev;
  ps_status st = ps_cuda_enter(be, &prev);
  if (st != PS_OK) return st;
  uint32_t tiles = 0;
  st = p.out ? ids_state(be, a->rows, &tiles) : ensure_workspace(be, 0);
  if (st == PS_OK) {
    if (p.out) {
      p.total = (uint32_t *)results_dev(be);
      p.state_ready = be->ids_ready;
    } else { /* tile counts added atomically in device memory, handed over by the last block */
      p.total = (uint32_t *)((uint8_t *)be->select_ws + PS_CUDA_SELECT_IDS_TOTAL);
      p.result = (uint32_t *)results_dev(be);
      p.done = (unsigned int *)((uint8_t *)be->select_ws + PS_CUDA_SELECT_IDS_DONE);
    }
    st = ps_cuda_status(be->ctx, ps_cuda_launch_row_ids(&p, be->ids_state, be->ids_state_bytes, be->stream),
                        "launching the row id kernels", false);
    if (st == PS_OK) st = take_results(be, sizeof(uint32_t));
    if (p.out) ids_state_used(be, tiles, st);
  }
  ps_cuda_leave(be, prev);
  if (st != PS_OK) return st;
  uint32_t total;
  memcpy(&total, be->select_host, sizeof total);
  *a->count = total;
  return PS_OK;
}

/* ---- row ids straight from a range filter ----------------------------------- */

ps_status ps_cuda_range_ids(ps_backend *be, ps_cuda_range_params *rp, const ps_eval_args *a, uint64_t *count,
                            uint32_t *status) {
  if (a->rows > PS_CUDA_SELECT_MAX_ROWS) return internal(be, "range ids: chunk rows", a->rows);
  ps_cuda_row_ids_params p;
  memset(&p, 0, sizeof p);
  p.out = devptr(a->ids);
  p.out_aligned = aligned_to(p.out, a->index_bytes);
  p.rows = a->rows;
  p.id_base = a->row_begin;
  p.index_bytes = a->index_bytes;
  p.capacity = a->ids_capacity < UINT32_MAX ? (uint32_t)a->ids_capacity : UINT32_MAX;

  int prev;
  ps_status st = ps_cuda_enter(be, &prev);
  if (st != PS_OK) return st;
  uint32_t tiles = 0;
  st = ids_state(be, a->rows, &tiles);
  if (st == PS_OK && rp->check_limit) /* the corrupt-code flag, next to the total */
    st = ps_cuda_status(be->ctx, cudaMemsetAsync(be->select_ws, 0, 8, be->stream), "cudaMemsetAsync (ids status)",
                        false);
  if (st == PS_OK) {
    /* Without the flag the total alone comes back, written where the host
     * reads it; the flag is added to atomically: device memory, copied. */
    p.total = (uint32_t *)(rp->check_limit ? be->select_ws : results_dev(be));
    p.state_ready = be->ids_ready;
    rp->status = (uint32_t *)be->select_ws + 1;
    st = ps_cuda_status(be->ctx, ps_cuda_launch_range_ids(rp, &p, be->ids_state, be->ids_state_bytes, be->stream),
                        "launching the range-to-row-ids kernel", false);
    if (st == PS_OK) st = rp->check_limit ? read_results(be, 2 * sizeof(uint32_t)) : take_results(be, sizeof(uint32_t));
    ids_state_used(be, tiles, st);
  }
  ps_cuda_leave(be, prev);
  if (st != PS_OK) return st;
  uint32_t res[2];
  memcpy(res, be->select_host, sizeof res);
  *count = res[0];
  *status = rp->check_limit ? res[1] : 0;
  return PS_OK;
}

/* ---- reduce -------------------------------------------------------------------- */

ps_status ps_cuda_reduce(ps_backend *be, const ps_reduce_args *a) {
  if (a->rows == 0 || a->rows > PS_CUDA_SELECT_MAX_ROWS) return internal(be, "reduce: chunk rows", a->rows);
  if (!a->count || !a->min_code || !a->max_code || !a->sum_lo || !a->sum_hi)
    return internal(be, "reduce: an output is missing", 0);
  ps_status st = check_col(be, &a->col, a->data, a->validity);
  if (st != PS_OK) return st;

  ps_cuda_reduce_params p;
  memset(&p, 0, sizeof p);
  p.col = a->col;
  if (a->data.handle) {
    p.data = devptr(a->data);
    p.data_aligned = aligned_to(p.data, 4);
    p.data_aligned16 = aligned_to(p.data, 16);
  } else {
    p.col.data_bytes = 0; /* nothing to read: every code reads 0 */
  }
  if ((a->col.flags & PS_COLF_VALIDITY) && a->validity.handle) {
    p.validity = devptr(a->validity);
    p.validity_aligned = aligned_to(p.validity, 4);
  } else if (a->col.flags & PS_COLF_VALIDITY) {
    p.col.validity_bytes = 0; /* no bytes: every row reads null */
  }
  if (a->selection.handle) {
    p.selection = devptr(a->selection);
    p.selection_aligned = aligned_to(p.selection, 4);
  }
  p.rows = a->rows;

  int prev;
  st = ps_cuda_enter(be, &prev);
  if (st != PS_OK) return st;
  size_t ws = 0;
  st = ps_cuda_status(be->ctx, ps_cuda_reduce_workspace(&p.col, a->rows, be->max_blocks, &ws),
                      "sizing the reduce workspace", false);
  if (st == PS_OK) st = ensure_workspace(be, ws);
  if (st == PS_OK) {
    p.result = (uint64_t *)results_dev(be);
    p.done = (unsigned int *)((uint8_t *)be->select_ws + PS_CUDA_SELECT_REDUCE_DONE);
    st = ps_cuda_status(
        be->ctx,
        ps_cuda_launch_reduce(&p, be->max_blocks, kernel_workspace(be), kernel_workspace_bytes(be), be->stream),
        "launching the reduce kernels", false);
  }
  if (st == PS_OK) st = take_results(be, PS_CUDA_REDUCE_RESULT_WORDS * sizeof(uint64_t));
  ps_cuda_leave(be, prev);
  if (st != PS_OK) return st;

  uint64_t r[PS_CUDA_REDUCE_RESULT_WORDS];
  memcpy(r, be->select_host, sizeof r);
  if (r[5] != UINT64_MAX) return ps_corrupt_error(be->ctx, 0, &a->col, r[5], r[5], -1);
  *a->count = r[0], *a->min_code = r[1], *a->max_code = r[2], *a->sum_lo = r[3], *a->sum_hi = r[4];
  return PS_OK;
}

/* ---- gather ---------------------------------------------------------------------- */

/* The error a serial loop meets first: output i (the least offending one) had
 * an id past the column (bad_id == i) or a corrupt code. Reads ids[i] back
 * for the message. be's device is current. */
static ps_status gather_error(ps_backend *be, const ps_gather_args *a, uint64_t bad_id, uint64_t bad_code) {
  const uint64_t i = bad_id < bad_code ? bad_id : bad_code;
  const ps_devmem at = {a->ids.handle, a->ids.offset + i * a->index_bytes};
  ps_status st = ps_cuda_status(
      be->ctx, cudaMemcpyAsync(be->select_host, devptr(at), a->index_bytes, cudaMemcpyDeviceToHost, be->stream),
      "cudaMemcpyAsync (row id)", false);
  if (st == PS_OK) st = ps_cuda_status(be->ctx, cudaStreamSynchronize(be->stream), "cudaStreamSynchronize", false);
  if (st != PS_OK) return st;
  uint64_t id = 0;
  if (a->index_bytes == 4) {
    uint32_t v;
    memcpy(&v, be->select_host, sizeof v);
    id = v;
  } else {
    memcpy(&id, be->select_host, sizeof id);
  }
  if (bad_id < bad_code)
    return ps_backend_error(be->ctx, PS_ERR_INVALID_ARGUMENT, "ids[%llu] = %llu is past the column's %llu rows",
                            (unsigned long long)i, (unsigned long long)id, (unsigned long long)a->rows);
  return ps_corrupt_error(be->ctx, 0, &a->col, id, id, (int64_t)i);
}

ps_status ps_cuda_gather(ps_backend *be, const ps_gather_args *a) {
  if (a->index_bytes != 4 && a->index_bytes != 8) return internal(be, "gather: index bytes", a->index_bytes);
  const uint32_t vb = a->value_bytes;
  switch (a->out_type) {
    case PS_GATHER_CODE32:
    case PS_GATHER_F32:
      if (vb != 4) return internal(be, "gather: value bytes of a 4-byte kind", vb);
      break;
    case PS_GATHER_F64:
      if (vb != 8) return internal(be, "gather: value bytes of an 8-byte kind", vb);
      break;
    case PS_GATHER_INT:
      if (vb != 1 && vb != 2 && vb != 4 && vb != 8) return internal(be, "gather: value bytes", vb);
      break;
    default:
      return internal(be, "gather: output kind", a->out_type);
  }
  ps_status st = check_col(be, &a->col, a->data, a->validity);
  if (st != PS_OK) return st;
  if (a->count == 0) return PS_OK;
  if (!a->ids.handle || !a->values.handle) return internal(be, "gather: ids or values missing", a->count);

  ps_cuda_gather_params p;
  memset(&p, 0, sizeof p);
  p.col = a->col;
  if (a->data.handle) {
    p.data = devptr(a->data);
    p.data_aligned = aligned_to(p.data, 4);
  } else {
    p.col.data_bytes = 0;
  }
  if ((a->col.flags & PS_COLF_VALIDITY) && a->validity.handle)
    p.validity = devptr(a->validity);
  else if (a->col.flags & PS_COLF_VALIDITY)
    p.col.validity_bytes = 0;
  p.ids = devptr(a->ids);
  p.ids_aligned = aligned_to(p.ids, a->index_bytes);
  p.values = devptr(a->values);
  p.values_aligned = aligned_to(p.values, vb);
  if (a->validity_out.handle) {
    p.validity_out = devptr(a->validity_out);
    p.validity_out_aligned = aligned_to(p.validity_out, 4);
  }
  p.pow10 = select_pow10[a->col.scale];
  p.count = a->count;
  p.rows = a->rows;
  p.index_bytes = a->index_bytes;
  p.out_type = a->out_type;
  p.value_bytes = vb;

  int prev;
  st = ps_cuda_enter(be, &prev);
  if (st != PS_OK) return st;
  st = ensure_workspace(be, 0);
  if (st == PS_OK) {
    p.status = (unsigned long long *)((uint8_t *)be->select_ws + PS_CUDA_SELECT_GATHER_STATUS);
    p.result = (unsigned long long *)results_dev(be);
    p.done = (unsigned int *)((uint8_t *)be->select_ws + PS_CUDA_SELECT_GATHER_DONE);
    st = ps_cuda_status(be->ctx, ps_cuda_launch_gather(&p, be->max_blocks, be->stream), "launching the gather kernel",
                        false);
    if (st == PS_OK) st = take_results(be, 2 * sizeof(uint64_t));
    uint64_t status[2] = {UINT64_MAX, UINT64_MAX};
    if (st == PS_OK) memcpy(status, be->select_host, sizeof status);
    /* the kernel's last block has set the status words back already */
    if (st == PS_OK && (status[0] != UINT64_MAX || status[1] != UINT64_MAX))
      st = gather_error(be, a, status[0], status[1]);
  }
  ps_cuda_leave(be, prev);
  return st;
}

/* ---- queries ----------------------------------------------------------------------- */

/* PS_QMODE_ITEMS: partial accumulators of pass 1, at most (bytes), and its
 * work-items at most. */
#define PS_CUDA_QUERY_PARTIAL_BYTES ((uint64_t)64 << 20)
#define PS_CUDA_QUERY_MAX_ITEMS 65536u

/* Pass 1's work-items and pass 2's partials per accumulator, for a chunk of
 * `words` result words in `mode` (called with the backend's device current):
 * the core's shape (ps_query_launch_shape) over this device's resident blocks. */
static ps_status query_geometry(ps_backend *be, const void *spec, uint32_t mode, double bound, uint64_t n_acc,
                                uint64_t words, uint64_t *items, uint64_t *parts) {
  unsigned grid = 1;
  if (mode != PS_QMODE_ITEMS) {
    ps_status st = ps_cuda_status(be->ctx, ps_cuda_query_grid(spec, &grid), "sizing the query grid", false);
    if (st != PS_OK) return st;
  }
  ps_query_launch_shape(mode, bound, n_acc, words, PS_CUDA_QUERY_BLOCK, grid, PS_CUDA_QUERY_MAX_ITEMS,
                        PS_CUDA_QUERY_PARTIAL_BYTES, items, parts);
  return PS_OK;
}

ps_status ps_cuda_query(ps_backend *be, const ps_query_args *a) {
  if (a->rows == 0 || a->rows > PS_CUDA_SELECT_MAX_ROWS) return internal(be, "query: chunk rows", a->rows);
  const ps_vprog *prog = a->prog;
  const uint64_t n_acc = (uint64_t)prog->n_groups * prog->n_accs, words = (a->rows + 31) / 32;
  /* specialized: small GROUP BY domains keep their accumulators in registers */
  /* not a hashed GROUP BY plan, whose group count varies with the data */
  const int specialize = ps_query_specialize(be->ctx, a->rows, prog->n_groups > 1) && !prog->group_slots;
  ps_query_plan plan;
  ps_query_plan_chunk(prog, a->agg_fields, 1, specialize, &plan);
  const int fits64 = plan.fits64;
  const double bound = plan.bound;
  const uint64_t fields = plan.fields;
  uint32_t mode = plan.mode;

  /* about 4.7 KB: on the heap, not the stack */
  ps_cuda_query_params *p = ps_host_alloc(be->ctx, sizeof *p);
  if (!p) return ps_backend_error(be->ctx, PS_ERR_OUT_OF_MEMORY, "cuda: query parameters");
  memset(p, 0, sizeof *p);
  p->prog = *prog;
  p->launch.rows = a->rows;
  p->launch.mode = mode;
  p->launch.fits64 = (uint64_t)fits64;
  p->launch.has_where = a->where_prog != NULL;
  if (a->where_prog) {
    p->where_prog = *a->where_prog;
    p->launch.and_right = a->where_and_right;
    p->launch.or_right = a->where_or_right;
    if (a->where_aux.handle) p->bufs.where_aux = (const uint32_t *)devptr(a->where_aux);
  }
  for (uint32_t i = 0; i < prog->n_cols; i++) {
    if (a->data[i].handle) p->bufs.data[i] = devptr(a->data[i]);
    if (aligned_to(p->bufs.data[i], 4)) p->launch.data_aligned |= (uint64_t)1 << i;
    if (a->validity[i].handle) p->bufs.validity[i] = devptr(a->validity[i]);
    p->bufs.data_bytes[i] = prog->cols[i].data_bytes;
    p->bufs.validity_bytes[i] = prog->cols[i].validity_bytes;
  }
  for (uint32_t i = 0; i < prog->n_preds; i++) p->bufs.preds[i] = devptr(a->preds[i]);
  if (a->groups.handle) p->bufs.groups = (uint64_t *)devptr(a->groups);
  if (a->value_aux.handle) p->bufs.value_aux = (const uint64_t *)devptr(a->value_aux);

  int prev;
  ps_status st = ps_cuda_enter(be, &prev);
  if (st != PS_OK) {
    ps_host_free(be->ctx, p);
    return st;
  }
  /* pass 1 compiled for this query's constants (NVRTC), or the precompiled one */
  const void *spec = NULL;
  if (specialize) {
    char *text = ps_host_alloc(be->ctx, PS_QUERY_SPEC_MAX_TEXT);
    if (!text) st = ps_backend_error(be->ctx, PS_ERR_OUT_OF_MEMORY, "cuda: query specialization text");
    ps_query_spec_flags f;
    memset(&f, 0, sizeof f);
    f.mode = mode;
    f.fits64 = (uint32_t)fits64;
    f.has_where = a->where_prog != NULL;
    f.data_aligned = p->launch.data_aligned;
    f.and_right = p->launch.and_right;
    f.or_right = p->launch.or_right;
    f.fields = fields;
    f.lanes = (uint32_t)ps_query_lanes(be->ctx, 1);
    f.prefetch = ps_query_prefetch(be->ctx);
    f.warp_merge = (uint32_t)ps_context_internal_options(be->ctx)->query_warp_merge;
    f.min_blocks = (uint32_t)ps_context_internal_options(be->ctx)->query_min_blocks;
    if (st == PS_OK && ps_query_spec_write(prog, a->where_prog, &f, text, PS_QUERY_SPEC_MAX_TEXT) == 0)
      st = internal(be, "query: specialization text over this many bytes", PS_QUERY_SPEC_MAX_TEXT);
    const int strict = ps_context_internal_options(be->ctx)->query_specialize == PS_OPT_ON;
    if (st == PS_OK)
      st = ps_cuda_spec_kernel(be, PS_CUDA_SPEC_QUERY, text, strict, ps_query_spec_background(be->ctx), &spec);
    ps_host_free(be->ctx, text);
    if (st == PS_OK && !spec) ps_context_count_spec_fallback(be->ctx);
    if (!spec && mode == PS_QMODE_REGS) /* the precompiled kernel has no register mode */
      p->launch.mode = mode = ps_query_generic_mode(prog, fits64, 1);
  }
  if (!spec && a->for_only) spec = ps_cuda_query_partials_for(); /* no other encoding's reader in it */
  uint64_t parts = 0;
  if (st == PS_OK) st = query_geometry(be, spec, mode, bound, n_acc, words, &p->launch.items, &parts);
  if (st == PS_OK) st = ensure_workspace(be, (size_t)(parts * n_acc * sizeof(ps_qacc)));
  if (st == PS_OK && a->defer_status) {
    if (a->status_slot >= PS_QUERY_STATUS_SLOTS) st = internal(be, "query: status slot", a->status_slot);
    if (st == PS_OK && !be->qstatus)
      st = ps_cuda_status(
          be->ctx, cudaMalloc((void **)&be->qstatus, PS_Q_STATUS_WORDS * PS_QUERY_STATUS_SLOTS * sizeof(uint32_t)),
          "cudaMalloc (query status)", false);
  }
  if (st == PS_OK) {
    p->status = a->defer_status ? be->qstatus + PS_Q_STATUS_WORDS * a->status_slot : (uint32_t *)be->select_ws;
    p->part = (ps_qacc *)kernel_workspace(be);
    st = ps_cuda_status(be->ctx, cudaMemsetAsync(p->status, 0xFF, PS_Q_STATUS_WORDS * sizeof(uint32_t), be->stream),
                        "cudaMemsetAsync (query status)", false);
    if (st == PS_OK && mode == PS_QMODE_GLOBAL) /* its table starts at zero (ps_q_global_merge) */
      st = ps_cuda_status(be->ctx, cudaMemsetAsync(p->part, 0, (size_t)(n_acc * sizeof(ps_qacc)), be->stream),
                          "cudaMemsetAsync (query table)", false);
  }
  if (st == PS_OK)
    st = ps_cuda_status(be->ctx,
                        ps_cuda_launch_query(spec, p, n_acc, parts, ps_query_merge_flat(mode, n_acc, parts),
                                             a->acc.handle ? (ps_qacc *)devptr(a->acc) : NULL, be->stream),
                        "launching the query kernels", false);
  /* deferred: the launch took its parameters, and query_collect reads the status */
  if (st == PS_OK && !a->defer_status) st = read_results(be, PS_Q_STATUS_WORDS * sizeof(uint32_t));
  ps_cuda_leave(be, prev);
  ps_host_free(be->ctx, p);
  if (st != PS_OK || a->defer_status) return st;
  uint32_t status[PS_Q_STATUS_WORDS];
  memcpy(status, be->select_host, sizeof status);
  if (status[0] != UINT32_MAX)
    return ps_backend_error(be->ctx, PS_ERR_CORRUPT_DATA,
                            "cuda: row %llu of a column the query reads holds a code outside its range",
                            (unsigned long long)(a->row_begin + status[0]));
  if (status[1] != UINT32_MAX)
    return ps_backend_error(be->ctx, PS_ERR_OVERFLOW, "cuda: row %llu: an aggregate's value does not fit %d digits",
                            (unsigned long long)(a->row_begin + status[1]), PS_QUERY_MAX_DIGITS);
  ps_query_fault fault;
  if (ps_query_status_unrep(prog, status, &fault.row, &fault.agg)) {
    if (a->fault) *a->fault = fault;
    return ps_backend_error(be->ctx, PS_ERR_NOT_REPRESENTABLE, "cuda: row %llu: the value of aggregate %u",
                            (unsigned long long)(a->row_begin + fault.row), fault.agg);
  }
  return PS_OK;
}

/* be->collect_host holding at least `size` bytes (ps_query_collect_size; be's
 * device is current); 0 when it cannot be had: the caller then copies into
 * its own memory (pinned memory is an optimization here, not a need). */
static int collect_staging(ps_backend *be, size_t size) {
  if (size == 0) return 0;
  if (be->collect_host && be->collect_host_bytes >= size) return 1;
  void *h = NULL;
  if (cudaHostAlloc(&h, size, cudaHostAllocDefault) != cudaSuccess) {
    (void)cudaGetLastError();
    return 0;
  }
  if (be->collect_host) (void)cudaFreeHost(be->collect_host); /* its copies ended with their call */
  be->collect_host = h;
  be->collect_host_bytes = size;
  return 1;
}

/* The deferred chunks' status words, then the accumulators, copied on the
 * stream behind the query's kernels and taken with one wait: through the
 * pinned staging area where they fit it, else into the caller's (pageable)
 * memory, where each copy waits for itself. */
ps_status ps_cuda_query_collect(ps_backend *be, uint32_t n, uint32_t *status, ps_devmem acc, void *acc_host,
                                uint64_t acc_bytes) {
  if (n > PS_QUERY_STATUS_SLOTS || (n && !be->qstatus)) return internal(be, "query: status slots to collect", n);
  int prev;
  ps_status st = ps_cuda_enter(be, &prev);
  if (st != PS_OK) return st;
  const size_t status_bytes = (size_t)PS_Q_STATUS_WORDS * n * sizeof(uint32_t);
  const size_t acc_at = (size_t)ps_query_collect_acc_at(n);
  const int staged = ps_context_internal_options(be->ctx)->query_collect_pinned &&
                     collect_staging(be, (size_t)ps_query_collect_size(n, acc_bytes));
  uint8_t *stage = staged ? (uint8_t *)be->collect_host : NULL;
  if (n)
    st = ps_cuda_status(be->ctx,
                        cudaMemcpyAsync(staged ? (void *)stage : (void *)status, be->qstatus, status_bytes,
                                        cudaMemcpyDeviceToHost, be->stream),
                        "cudaMemcpyAsync (query status)", false);
  if (st == PS_OK && acc_bytes)
    st = ps_cuda_status(be->ctx,
                        cudaMemcpyAsync(staged ? (void *)(stage + acc_at) : acc_host, devptr(acc), (size_t)acc_bytes,
                                        cudaMemcpyDeviceToHost, be->stream),
                        "cudaMemcpyAsync (query accumulators)", false);
  if (st == PS_OK) st = ps_cuda_status(be->ctx, cudaStreamSynchronize(be->stream), "cudaStreamSynchronize", false);
  if (st == PS_OK && staged) {
    if (n) memcpy(status, stage, status_bytes);
    if (acc_bytes) memcpy(acc_host, stage + acc_at, (size_t)acc_bytes);
  }
  ps_cuda_leave(be, prev);
  return st;
}
