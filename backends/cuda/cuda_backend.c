/*
 * The CUDA backend (core/backend.h) on the CUDA runtime API. Plain C: the
 * kernels are reached only through kernels_cuda/ps_cuda_kernels.h.
 *
 * Every entry point makes the context's device current and restores the
 * caller's afterwards, enqueues on the context's stream, and synchronizes
 * that stream (never the device) only before handing data back to the host.
 */
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cuda_query_spec.h"
#include "query_spec.h"

#include "cuda_backend.h"
#include "ps_cuda_kernels.h"

/* Rows per launch: a multiple of 32 that keeps row indexes, the grid size and
 * bitmap word indexes in 32-bit arithmetic (stream bit offsets use 64 bits). */
#define PS_CUDA_MAX_CHUNK_ROWS ((uint64_t)1 << 31)

static const double ps_cuda_pow10[19] = PS_POW10_TABLE;

ps_status ps_cuda_enter(ps_backend *be, int *prev) {
  ps_status st = ps_cuda_status(be->ctx, cudaGetDevice(prev), "cudaGetDevice", false);
  if (st == PS_OK && *prev != be->device)
    st = ps_cuda_status(be->ctx, cudaSetDevice(be->device), "cudaSetDevice", false);
  return st;
}

void ps_cuda_leave(ps_backend *be, int prev) {
  if (prev != be->device) (void)cudaSetDevice(prev);
}

/* The device count and the driver and runtime versions, asked once per
 * process: contexts may be created from several threads at once, and the
 * runtime's first-time initialisation then runs once, on one of them, with
 * every other creator waiting for its answer. */
typedef struct cuda_discovery {
  cudaError_t err; /* of cudaGetDeviceCount */
  int count, driver, runtime;
} cuda_discovery;

static cuda_discovery discovery;
static pthread_once_t discovery_once = PTHREAD_ONCE_INIT;

static void discover(void) {
  discovery.err = cudaGetDeviceCount(&discovery.count);
  if (discovery.err != cudaSuccess) {
    discovery.count = 0;
    (void)cudaGetLastError(); /* the error is kept here, not in this thread's runtime state */
  }
  (void)cudaDriverGetVersion(&discovery.driver);
  (void)cudaRuntimeGetVersion(&discovery.runtime);
}

static void version_text(int v, char *buf, size_t size) {
  snprintf(buf, size, "%d.%d", v / 1000, (v % 1000) / 10);
}

/* Releases whatever init_device got to; be's device is current. */
static void release_device(ps_backend *be) {
  ps_cuda_stage_free(be);
  ps_cuda_select_release(be);
  ps_cuda_spec_release(be);
  if (be->scratch) (void)cudaFree(be->scratch);
  if (be->scratch_host) (void)cudaFreeHost(be->scratch_host);
  if (be->own_stream) (void)cudaStreamDestroy(be->own_stream);
  be->scratch = be->scratch_host = be->scratch_host_dev = NULL;
  be->own_stream = be->stream = NULL;
  (void)cudaGetLastError();
}

/* Describes the device, checks the kernels run on it, creates the stream and
 * the scratch words. be's device is current. */
static ps_status init_device(ps_backend *be) {
  ps_context *ctx = be->ctx;
  struct cudaDeviceProp prop;
  ps_status st = ps_cuda_status(ctx, cudaGetDeviceProperties(&prop, be->device),
                                "cudaGetDeviceProperties", true);
  if (st != PS_OK) return st;
  char drv_s[16], rt_s[16];
  version_text(discovery.driver, drv_s, sizeof drv_s);
  version_text(discovery.runtime, rt_s, sizeof rt_s);
  snprintf(be->name, sizeof be->name, "%.200s (sm_%d%d, %d SMs, driver %s, runtime %s)", prop.name,
           prop.major, prop.minor, prop.multiProcessorCount, drv_s, rt_s);

  cudaError_t err = ps_cuda_eval_max_blocks(prop.multiProcessorCount, &be->max_blocks);
  if (err != cudaSuccess) {
    char call[512];
    snprintf(call, sizeof call,
             "loading the packscan kernels on device %d, %s (this build has no code for sm_%d%d; "
             "rebuild with it in CMAKE_CUDA_ARCHITECTURES)",
             be->device, be->name, prop.major, prop.minor);
    return ps_cuda_status(ctx, err, call, true);
  }
  st = ps_cuda_status(ctx, cudaStreamCreateWithFlags(&be->own_stream, cudaStreamNonBlocking),
                      "cudaStreamCreateWithFlags", false);
  if (st != PS_OK) return st;
  be->stream = be->own_stream;
  st = ps_cuda_status(ctx, cudaMalloc(&be->scratch, PS_CUDA_SCRATCH_BYTES), "cudaMalloc (scratch)",
                      false);
  if (st != PS_OK) return st;
  be->scratch_dirty = true; /* never written: zeroed on first use */
  return ps_cuda_alloc_host_results(be, PS_CUDA_SCRATCH_BYTES, &be->scratch_host, &be->scratch_host_dev);
}

ps_status ps_cuda_alloc_host_results(ps_backend *be, size_t bytes, void **host, void **dev) {
  *host = *dev = NULL;
  int unified = 0, can_map = 0;
  if (cudaDeviceGetAttribute(&unified, cudaDevAttrUnifiedAddressing, be->device) != cudaSuccess ||
      cudaDeviceGetAttribute(&can_map, cudaDevAttrCanMapHostMemory, be->device) != cudaSuccess)
    unified = can_map = 0;
  (void)cudaGetLastError(); /* an attribute not known: no mapping, not an error */
  const int mapped = unified && can_map;
  ps_status st =
      ps_cuda_status(be->ctx, cudaHostAlloc(host, bytes, mapped ? cudaHostAllocMapped : cudaHostAllocDefault),
                     "cudaHostAlloc (results)", false);
  if (st != PS_OK) {
    *host = NULL;
    return st;
  }
  /* With unified addressing every cudaHostAlloc allocation is accessible
   * from the device at its host address (the runtime API's "automatic
   * mapping of host allocated host memory"). */
  if (mapped) *dev = *host;
  return PS_OK;
}

static ps_status cuda_create(ps_context *ctx, const ps_context_options *opts, ps_backend **out) {
  int once = pthread_once(&discovery_once, discover);
  if (once != 0)
    return ps_backend_error(ctx, PS_ERR_NO_DEVICE, "cuda: device discovery could not run (pthread_once: %d)", once);
  ps_status st = ps_cuda_status(ctx, discovery.err, "cudaGetDeviceCount", true);
  if (st != PS_OK) return st;
  int count = discovery.count;
  if (count <= 0)
    return ps_backend_error(ctx, PS_ERR_NO_DEVICE,
                            "cuda: no CUDA device found (cudaGetDeviceCount returned 0)");
  int prev = 0;
  st = ps_cuda_status(ctx, cudaGetDevice(&prev), "cudaGetDevice", true);
  if (st != PS_OK) return st;
  int device = opts ? opts->cuda_device : -1;
  if (device < -1)
    return ps_backend_error(ctx, PS_ERR_INVALID_ARGUMENT,
                            "cuda: options.cuda_device is %d; expected -1 (the current device) "
                            "or a device ordinal",
                            device);
  if (device >= count)
    return ps_backend_error(ctx, PS_ERR_NO_DEVICE,
                            "cuda: options.cuda_device is %d but this machine has %d CUDA "
                            "device(s) (ordinals 0..%d)",
                            device, count, count - 1);
  if (device == -1) device = prev;

  ps_backend *be = ps_host_alloc(ctx, sizeof *be);
  if (!be) return ps_backend_error(ctx, PS_ERR_OUT_OF_MEMORY, "cuda: allocating the backend state");
  memset(be, 0, sizeof *be);
  be->ctx = ctx;
  be->device = device;
  st = ps_cuda_status(ctx, cudaSetDevice(device), "cudaSetDevice", true);
  if (st == PS_OK) {
    st = init_device(be);
    if (st != PS_OK) release_device(be);
  }
  ps_cuda_leave(be, prev);
  if (st != PS_OK) {
    ps_host_free(ctx, be);
    return st;
  }
  *out = be;
  return PS_OK;
}

static void cuda_destroy(ps_backend *be) {
  if (!be) return;
  int prev = be->device;
  if (ps_cuda_enter(be, &prev) == PS_OK) {
    release_device(be);
    ps_cuda_leave(be, prev);
  }
  ps_host_free(be->ctx, be);
}

static const char *cuda_device_name(ps_backend *be) { return be->name; }

static uint64_t cuda_max_chunk_rows(ps_backend *be) {
  (void)be;
  return PS_CUDA_MAX_CHUNK_ROWS;
}

static void *devptr(ps_devmem m) { return (uint8_t *)m.handle + m.offset; }

static ps_status cuda_mem_alloc(ps_backend *be, uint64_t bytes, ps_devmem *out) {
  int prev;
  ps_status st = ps_cuda_enter(be, &prev);
  if (st != PS_OK) return st;
  void *p = NULL;
  char call[64];
  snprintf(call, sizeof call, "cudaMalloc(%llu bytes)", (unsigned long long)bytes);
  st = ps_cuda_status(be->ctx, cudaMalloc(&p, bytes ? (size_t)bytes : 1), call, false);
  ps_cuda_leave(be, prev);
  if (st != PS_OK) return st;
  out->handle = p;
  out->offset = 0;
  return PS_OK;
}

static void cuda_mem_free(ps_backend *be, ps_devmem mem) {
  int prev;
  if (!mem.handle || ps_cuda_enter(be, &prev) != PS_OK) return;
  (void)ps_cuda_status(be->ctx, cudaFree(mem.handle), "cudaFree", false);
  ps_cuda_leave(be, prev);
}

/* Waits for the stream: called only where the host must see results. */
static ps_status sync_stream(ps_backend *be) {
  return ps_cuda_status(be->ctx, cudaStreamSynchronize(be->stream), "cudaStreamSynchronize", false);
}

/* The scratch words (count, status) are zero between calls, so a launch that
 * adds into them needs no memset first: the call that used them hands them
 * to the host and zeroes them in one small kernel after its own
 * (scratch_take). Only when that could not be enqueued, or the host copy is
 * not mapped, does the next call zero them here. be's device is current. */
static ps_status scratch_zero(ps_backend *be) {
  if (!be->scratch_dirty) return PS_OK;
  ps_status st = ps_cuda_status(be->ctx, cudaMemsetAsync(be->scratch, 0, PS_CUDA_SCRATCH_BYTES, be->stream),
                                "cudaMemsetAsync (scratch)", false);
  if (st == PS_OK) be->scratch_dirty = false;
  return st;
}

/* After the launches that wrote the scratch words: waits for the stream with
 * the words in be->scratch_host, and the scratch zero again on the device
 * (or marked for scratch_zero). be's device is current. */
static ps_status scratch_take(ps_backend *be) {
  be->scratch_dirty = true; /* until take_words is known to have run */
  ps_status st;
  if (be->scratch_host_dev) {
    st = ps_cuda_status(
        be->ctx,
        ps_cuda_launch_take_words((unsigned long long *)be->scratch, (unsigned long long *)be->scratch_host_dev,
                                  PS_CUDA_SCRATCH_BYTES / 8, be->stream),
        "launching the scratch hand-off", false);
  } else {
    st = ps_cuda_status(
        be->ctx,
        cudaMemcpyAsync(be->scratch_host, be->scratch, PS_CUDA_SCRATCH_BYTES, cudaMemcpyDeviceToHost, be->stream),
        "cudaMemcpyAsync (scratch)", false);
  }
  if (st == PS_OK) st = sync_stream(be);
  if (st == PS_OK && be->scratch_host_dev) be->scratch_dirty = false;
  return st;
}

/* The copy on the context's stream, with or without waiting for it. */
static ps_status write_h2d(ps_backend *be, ps_devmem dst, const void *src, uint64_t bytes, bool wait) {
  int prev;
  ps_status st = ps_cuda_enter(be, &prev);
  if (st != PS_OK) return st;
  st = ps_cuda_status(be->ctx, cudaMemcpyAsync(devptr(dst), src, (size_t)bytes, cudaMemcpyHostToDevice, be->stream),
                      "cudaMemcpyAsync (host to device)", false);
  if (st == PS_OK && wait) st = sync_stream(be);
  ps_cuda_leave(be, prev);
  return st;
}

/* ps_buffer_write is synchronous: from pinned memory the copy would still
 * be reading src after we return, so wait for it. */
static ps_status cuda_mem_write(ps_backend *be, ps_devmem dst, const void *src, uint64_t bytes) {
  return write_h2d(be, dst, src, bytes, true);
}

/* ps_backend_ops.mem_write_async: the caller keeps src until the next wait. */
static ps_status cuda_mem_write_async(ps_backend *be, ps_devmem dst, const void *src, uint64_t bytes) {
  return write_h2d(be, dst, src, bytes, false);
}

/* On the context's stream, without waiting: nothing of the host's is borrowed. */
static ps_status cuda_fill(ps_backend *be, ps_devmem dst, uint8_t value, uint64_t bytes) {
  if (bytes == 0) return PS_OK;
  int prev;
  ps_status st = ps_cuda_enter(be, &prev);
  if (st != PS_OK) return st;
  st =
      ps_cuda_status(be->ctx, cudaMemsetAsync(devptr(dst), value, (size_t)bytes, be->stream), "cudaMemsetAsync", false);
  ps_cuda_leave(be, prev);
  return st;
}

static ps_status cuda_mem_read(ps_backend *be, void *dst, ps_devmem src, uint64_t bytes) {
  int prev;
  ps_status st = ps_cuda_enter(be, &prev);
  if (st != PS_OK) return st;
  st = ps_cuda_status(be->ctx,
                      cudaMemcpyAsync(dst, devptr(src), (size_t)bytes, cudaMemcpyDeviceToHost,
                                      be->stream),
                      "cudaMemcpyAsync (device to host)", false);
  if (st == PS_OK) st = sync_stream(be);
  ps_cuda_leave(be, prev);
  return st;
}

/* ---- evaluation ------------------------------------------------------------ */

/* The kernel parameters of eval and eval_ids. The program passed the core's
 * ps_program_check (core/program_check.c) when it was lowered: the kernels
 * trust its structure without checking it again. */
static ps_status fill_params(ps_backend *be, const ps_eval_args *a, ps_cuda_eval_params *p) {
  ps_context *ctx = be->ctx;
  const ps_program *prog = a->prog;
  memset(p, 0, sizeof *p);
  p->prog = *prog;
  for (uint32_t c = 0; c < prog->n_cols; c++) {
    const ps_prog_col *col = &prog->cols[c];
    if (a->data[c].handle) {
      p->data[c] = devptr(a->data[c]);
      if (((uintptr_t)p->data[c] & 3u) == 0) p->data_aligned |= 1u << c;
    } else if (col->data_bytes) {
      return ps_backend_error(ctx, PS_ERR_INTERNAL, "cuda: column slot %u has no data memory", c);
    }
    if (col->flags & PS_COLF_VALIDITY) {
      if (!a->validity[c].handle)
        return ps_backend_error(ctx, PS_ERR_INTERNAL,
                                "cuda: column slot %u has PS_COLF_VALIDITY but no validity memory", c);
      p->validity[c] = devptr(a->validity[c]);
      if (((uintptr_t)p->validity[c] & 3u) == 0) p->validity_aligned |= 1u << c;
    }
    p->pow10[c] = ps_cuda_pow10[col->scale];
  }
  if (prog->aux_words) {
    if (!a->aux.handle)
      return ps_backend_error(ctx, PS_ERR_INTERNAL, "cuda: %u aux words but no aux memory",
                              prog->aux_words);
    p->aux = devptr(a->aux);
  }
  if (a->bitmap.handle) {
    p->bitmap = devptr(a->bitmap);
    p->bitmap_aligned = ((uintptr_t)p->bitmap & 3u) == 0;
  }
  if (a->selection_in.handle) p->selection_in = devptr(a->selection_in);
  if (a->mask.handle) p->mask = devptr(a->mask);
  p->count = (unsigned long long *)be->scratch;
  p->status = (uint32_t *)((uint8_t *)be->scratch + 8);
  p->rows = (uint32_t)a->rows;
  p->for_only = a->for_only;
  return PS_OK;
}

/* Turns the status word into the evaluation's result. */
static ps_status report_status(ps_backend *be, const ps_eval_args *a, uint32_t status) {
  if (status & PS_CUDA_FLAG_AUX)
    return ps_backend_error(be->ctx, PS_ERR_INTERNAL,
                            "cuda: an aux index fell outside the program's %u aux words",
                            a->prog->aux_words);
  for (uint32_t c = 0; c < PS_MAX_COLS; c++) {
    if (!(status & (1u << c))) continue;
    return ps_corrupt_error(be->ctx, c, &a->prog->cols[c], 0, a->rows - 1, -1);
  }
  return PS_OK;
}

/* Whether [a, a + na) and [b, b + nb) share no byte. */
static int apart(const uint8_t *a, uint64_t na, const uint8_t *b, uint64_t nb) {
  return (uintptr_t)a + na <= (uintptr_t)b || (uintptr_t)b + nb <= (uintptr_t)a;
}

/* The one-leaf program's leaf and column when the program is one `op`
 * instruction on a column with at least one valid code, aligned data and
 * validity; then *rp holds the column's part of the fast-path parameters
 * (the rest zero) and the result is 1.
 *
 * An input selection (ps_filter_refine) on a column without a validity
 * bitmap rides in the validity slot: the fast kernels AND the validity word
 * into the result and check codes only where it is set, which is exactly a
 * refinement's rule (rows outside the input selection are not evaluated).
 * The fast kernels read validity through the read-only data path (__ldg,
 * cp.async), so the selection must not overlap the bitmap or the mask they
 * write: an in-place refinement takes the general kernel. A byte mask
 * (ps_filter_mask*) is written by the direct kernel only (RANGE on widths 1,
 * 2, 4, 8, 16); elsewhere the general kernel writes it. */
static int one_leaf(const ps_cuda_eval_params *p, const ps_eval_args *a, uint32_t op, ps_cuda_range_params *rp,
                    const ps_insn **in_out, const ps_prog_col **col_out) {
  const ps_program *prog = a->prog;
  if (prog->n_insns != 1 || prog->insns[0].op != op) return 0;
  const ps_insn *in = &prog->insns[0];
  const ps_prog_col *col = &prog->cols[in->col_a];
  if (col->flags & PS_COLF_NO_CODES) return 0;
  if (!(p->data_aligned & (1u << in->col_a)) && col->data_bytes) return 0;
  const uint8_t *validity = p->validity[in->col_a];
  uint64_t validity_bytes = col->validity_bytes;
  if (p->selection_in) {
    const uint64_t sel_bytes = ((uint64_t)p->rows + 7) / 8;
    if (validity || (p->bitmap && !apart(p->selection_in, sel_bytes, p->bitmap, sel_bytes)) ||
        (p->mask && !apart(p->selection_in, sel_bytes, p->mask, p->rows)))
      return 0;
    validity = p->selection_in;
    validity_bytes = sel_bytes;
  }
  if (validity && ((uintptr_t)validity & 3u)) return 0;
  if (p->mask && (op != PS_OP_RANGE || (col->width != 1 && col->width != 2 && col->width != 4 && col->width != 8 &&
                                        col->width != 16)))
    return 0;
  memset(rp, 0, sizeof *rp);
  rp->data = p->data[in->col_a];
  rp->data_aligned16 = ((uintptr_t)rp->data & 15u) == 0;
  rp->data_bytes = col->data_bytes;
  rp->validity = validity;
  rp->validity_bytes = validity_bytes;
  rp->mask = p->mask;
  rp->bitmap = p->bitmap;
  rp->bitmap_aligned = p->bitmap_aligned;
  rp->width = col->width;
  rp->rows = p->rows;
  rp->status = p->status;
  rp->status_bit = 1u << in->col_a;
  *in_out = in;
  *col_out = col;
  return 1;
}

/* The single-range fast path: a one-leaf RANGE program. Where some w-bit
 * codes are not valid (code limit below 2^w - 1: dictionary columns) the
 * kernel also checks every valid row's code against the limit (widths up to
 * 32: range_kernel.cuh). Fills *rp and returns 1 when it applies. */
static int range_fast_path(const ps_cuda_eval_params *p, const ps_eval_args *a, ps_cuda_range_params *rp) {
  const ps_insn *in;
  const ps_prog_col *col;
  if (!one_leaf(p, a, PS_OP_RANGE, rp, &in, &col)) return 0;
  const uint64_t wmask = col->width >= 64 ? UINT64_MAX : (((uint64_t)1 << col->width) - 1);
  if (col->code_limit < wmask && col->width > 32) return 0;
  /* canonical (ps_program.h): lo <= hi <= code_limit <= wmask */
  const uint64_t lo = in->lo, hi = in->hi;
  const uint32_t negate = (in->flags & PS_INSN_NEGATE) ? 0xffffffffu : 0u;
  rp->lo = lo;
  rp->span = hi - lo;
  rp->negate_mask = negate;
  rp->check_limit = col->code_limit < wmask;
  rp->limit = rp->check_limit ? col->code_limit : 0;
  return 1;
}

/* The single-SET fast path: a one-leaf SET program on a column of width
 * 1..32 whose set bits for codes 0..limit lie inside the aux words (else the
 * general kernel reports the lowering bug). */
static int set_fast_path(const ps_cuda_eval_params *p, const ps_eval_args *a, ps_cuda_range_params *rp) {
  const ps_insn *in;
  const ps_prog_col *col;
  if (!p->aux || !one_leaf(p, a, PS_OP_SET, rp, &in, &col)) return 0;
  if (col->width < 1 || col->width > 32) return 0;
  const uint64_t wmask = ((uint64_t)1 << col->width) - 1;
  const uint64_t limit = col->code_limit < wmask ? col->code_limit : wmask;
  if ((uint64_t)in->aux_a + limit >= (uint64_t)a->prog->aux_words * 32) return 0;
  rp->negate_mask = (in->flags & PS_INSN_NEGATE) ? 0xffffffffu : 0u;
  rp->limit = limit;
  rp->check_limit = col->code_limit < wmask;
  rp->set = p->aux + in->aux_a / 32;
  rp->set_shift = in->aux_a % 32;
  rp->set_words = (uint32_t)((rp->set_shift + limit) / 32 + 1);
  return 1;
}

/* The range-tree fast path (kernels_cuda/tree.cu): a program of 2 to 16
 * instructions, RANGE leaves on at most 4 columns of 1..32 bits with no
 * validity bitmap, every w-bit code valid (so no row is ever UNKNOWN or
 * corrupt) and 16-byte aligned data, combined by AND, OR and NOT at a stack
 * depth of at most 4; no selection, no byte mask. The stack position of
 * every instruction is fixed by the postfix order, so each gets its slot
 * here. Fills *tp and returns 1 when it applies. */
static int tree_fast_path(const ps_cuda_eval_params *p, const ps_eval_args *a, ps_cuda_tree_params *tp) {
  const ps_program *prog = a->prog;
  if (a->selection_in.handle || a->mask.handle || prog->n_insns < 2 || prog->n_insns > PS_CUDA_TREE_MAX_INSNS) return 0;
  memset(tp, 0, sizeof *tp);
  int slot_of[PS_MAX_COLS];
  for (uint32_t c = 0; c < PS_MAX_COLS; c++) slot_of[c] = -1;
  uint32_t depth = 0, words = 0;
  for (uint32_t i = 0; i < prog->n_insns; i++) {
    const ps_insn *in = &prog->insns[i];
    ps_cuda_tree_insn *t = &tp->insns[i];
    t->op = in->op;
    if (in->op == PS_OP_RANGE) {
      if (in->col_a >= prog->n_cols || depth >= PS_CUDA_TREE_SLOTS) return 0;
      const ps_prog_col *col = &prog->cols[in->col_a];
      if (col->width < 1 || col->width > 32 || col->flags != 0) return 0;
      const uint64_t wmask = ((uint64_t)1 << col->width) - 1;
      const uint8_t *data = p->data[in->col_a];
      if (col->code_limit < wmask || !data || ((uintptr_t)data & 15u)) return 0;
      if (slot_of[in->col_a] < 0) {
        if (tp->n_cols == PS_CUDA_TREE_MAX_COLS) return 0;
        const uint32_t k = tp->n_cols++;
        slot_of[in->col_a] = (int)k;
        tp->data[k] = data;
        tp->data_bytes[k] = col->data_bytes;
        tp->width[k] = col->width;
        tp->offset[k] = words;
        const uint64_t whole = col->data_bytes / (128u * col->width);
        tp->data_chunks[k] = whole < UINT32_MAX ? (uint32_t)whole : UINT32_MAX;
        words += 32 * col->width;
      }
      /* canonical (ps_program.h): lo <= hi <= code_limit <= wmask */
      const uint64_t lo = in->lo, hi = in->hi;
      const uint32_t negate = (in->flags & PS_INSN_NEGATE) ? 0xffffffffu : 0u;
      t->col = (uint32_t)slot_of[in->col_a];
      t->dst = depth++;
      t->negate = negate;
      t->lo = (uint32_t)lo;
      t->span = (uint32_t)(hi - lo);
    } else if (in->op == PS_OP_AND || in->op == PS_OP_OR) {
      if (depth < 2) return 0;
      t->dst = --depth - 1;
    } else if (in->op == PS_OP_NOT) {
      if (depth < 1) return 0;
      t->dst = depth - 1;
    } else {
      return 0;
    }
  }
  if (depth != 1) return 0;
  tp->n_insns = prog->n_insns;
  tp->stage_words = words;
  tp->rows = p->rows;
  tp->bitmap = p->bitmap;
  tp->bitmap_aligned = p->bitmap_aligned;
  return 1;
}

/* Runs the range-tree kernel; synchronizes only when the count is wanted
 * (no status: no row can be corrupt). *done = 0 when its staging does not
 * fit (the caller takes the general path; nothing was enqueued). */
static ps_status cuda_eval_tree(ps_backend *be, const ps_eval_args *a, ps_cuda_tree_params *tp, int *done) {
  ps_context *ctx = be->ctx;
  *done = 1;
  int prev;
  ps_status st = ps_cuda_enter(be, &prev);
  if (st != PS_OK) return st;
  if (a->count) {
    tp->count = (unsigned long long *)be->scratch;
    st = scratch_zero(be);
  }
  if (st == PS_OK) {
    const cudaError_t err = ps_cuda_launch_tree(tp, be->stream);
    if (err == cudaErrorNotSupported) {
      *done = 0;
      ps_cuda_leave(be, prev);
      return PS_OK;
    }
    st = ps_cuda_status(ctx, err, "launching the range-tree kernel", false);
  }
  if (st == PS_OK && a->count) st = scratch_take(be);
  ps_cuda_leave(be, prev);
  if (st == PS_OK && a->count) memcpy(a->count, be->scratch_host, sizeof *a->count);
  return st;
}

/* Runs a fast path (the range kernels, or the SET kernel when rp->set);
 * synchronizes only when a host value is wanted: the count, or the
 * corrupt-code flag of a column with a code limit. *done = 0 when the SET
 * kernel cannot run on this device (the caller takes the general path). */
static ps_status cuda_eval_fast(ps_backend *be, const ps_eval_args *a, ps_cuda_range_params *rp, int *done) {
  ps_context *ctx = be->ctx;
  const int readback = a->count || rp->check_limit;
  *done = 1;
  int prev;
  ps_status st = ps_cuda_enter(be, &prev);
  if (st != PS_OK) return st;
  if (readback) {
    if (a->count) rp->count = (unsigned long long *)be->scratch;
    st = scratch_zero(be);
  }
  if (st == PS_OK && rp->set) {
    const cudaError_t err = ps_cuda_launch_set(rp, be->stream);
    if (err == cudaErrorNotSupported) { /* the set does not fit shared memory: nothing was enqueued */
      *done = 0;
      ps_cuda_leave(be, prev);
      return PS_OK;
    }
    st = ps_cuda_status(ctx, err, "launching the set kernel", false);
  } else if (st == PS_OK) {
    st = ps_cuda_status(ctx, ps_cuda_launch_range(rp, be->max_blocks, be->stream), "launching the range kernel",
                        false);
  }
  if (st == PS_OK && readback) st = scratch_take(be);
  ps_cuda_leave(be, prev);
  if (st != PS_OK || !readback) return st;
  uint32_t status;
  memcpy(&status, (const uint8_t *)be->scratch_host + 8, sizeof status);
  st = report_status(be, a, status);
  if (st == PS_OK && a->count) memcpy(a->count, be->scratch_host, sizeof *a->count);
  return st;
}

/* The general per-word kernel compiled for prog's shape (NVRTC), under the
 * queries' policy (core/query_spec.h: the same internal option and
 * options.query_compile): *spec NULL while it is being built in the
 * background, or where it could not be built (the precompiled kernel runs:
 * the same bits). *spec_tasks: the leading tasks (1,024 rows) it runs; the
 * precompiled kernel takes the rest. Where the chunk's leading tasks are
 * whole (core's ps_where_whole_words: every FOR stream word and validity
 * word they read lies inside its aligned buffer, which is every task but
 * the one holding a stream's partial last word, for aligned buffers) the
 * build is the one that reads them unchecked (PS_W_WHOLE); otherwise the
 * checked build runs every task. */
static ps_status where_spec_kernel(ps_backend *be, const ps_eval_args *a, const ps_cuda_eval_params *params,
                                   const void **spec, uint32_t *spec_tasks) {
  *spec = NULL;
  *spec_tasks = 0;
  const uint64_t words = (a->rows + 31) / 32, tasks = (words + 31) / 32;
  const uint64_t whole = ps_where_whole_words(a->prog, params->data_aligned, params->validity_aligned);
  const uint64_t whole_tasks = whole >= words ? tasks : whole / 32;
  char *text = ps_host_alloc(be->ctx, PS_WHERE_SPEC_MAX_TEXT);
  if (!text) return ps_backend_error(be->ctx, PS_ERR_OUT_OF_MEMORY, "cuda: filter specialization text");
  ps_status st = PS_OK;
  ps_where_spec_flags f;
  f.whole = whole_tasks > 0;
  f.min_blocks = (uint32_t)ps_context_internal_options(be->ctx)->where_min_blocks;
  if (ps_where_spec_write(a->prog, &f, text, PS_WHERE_SPEC_MAX_TEXT) != 0) {
    const int strict = ps_context_internal_options(be->ctx)->query_specialize == PS_OPT_ON;
    st = ps_cuda_spec_kernel(be, PS_CUDA_SPEC_WHERE, text, strict, ps_query_spec_background(be->ctx), spec);
  }
  ps_host_free(be->ctx, text);
  if (*spec) *spec_tasks = (uint32_t)(whole_tasks > 0 ? whole_tasks : tasks);
  return st;
}

static ps_status cuda_eval(ps_backend *be, const ps_eval_args *a) {
  ps_context *ctx = be->ctx;
  if (!a || !a->prog || a->rows == 0 || a->rows > PS_CUDA_MAX_CHUNK_ROWS)
    return ps_backend_error(ctx, PS_ERR_INTERNAL, "cuda: eval of %llu rows (expected 1..%llu)",
                            a ? (unsigned long long)a->rows : 0ULL,
                            (unsigned long long)PS_CUDA_MAX_CHUNK_ROWS);
  ps_cuda_eval_params params;
  ps_status st = fill_params(be, a, &params);
  if (st != PS_OK) return st;
  ps_cuda_range_params range;
  const int fast = ps_context_internal_options(ctx)->fast_paths && a->for_only;
  if (fast && (range_fast_path(&params, a, &range) || set_fast_path(&params, a, &range))) {
    int done = 0;
    st = cuda_eval_fast(be, a, &range, &done);
    if (st != PS_OK || done) return st;
  }

  int prev;
  st = ps_cuda_enter(be, &prev);
  if (st != PS_OK) return st;
  const void *spec = NULL;
  uint32_t spec_tasks = 0;
  if (ps_query_specialize(ctx, a->rows, 0)) st = where_spec_kernel(be, a, &params, &spec, &spec_tasks);
  /* A range tree takes its hand-tuned kernel until the per-shape build is
   * ready: that build, over whole words, runs trees as fast or faster
   * (docs/benchmarks.md, 2026-12-07), and the hand-tuned one is what small
   * chunks and a shape's first calls get instead of the generic kernel. */
  ps_cuda_tree_params tree;
  if (st == PS_OK && !spec && fast && tree_fast_path(&params, a, &tree)) {
    ps_cuda_leave(be, prev);
    int done = 0;
    st = cuda_eval_tree(be, a, &tree, &done);
    if (st != PS_OK || done) return st;
    st = ps_cuda_enter(be, &prev);
    if (st != PS_OK) return st;
  }
  if (st == PS_OK) st = scratch_zero(be);
  if (st == PS_OK)
    st = ps_cuda_status(ctx, ps_cuda_launch_eval(spec, spec_tasks, &params, be->max_blocks,
                                                   (uint32_t)ps_context_internal_options(ctx)->where_waves, be->stream),
                        "launching the eval kernel", false);
  /* The count and the corruption flag are host values: read them back once. */
  if (st == PS_OK) st = scratch_take(be);
  ps_cuda_leave(be, prev);
  if (st != PS_OK) return st;

  uint64_t count;
  uint32_t status;
  memcpy(&count, be->scratch_host, sizeof count);
  memcpy(&status, (const uint8_t *)be->scratch_host + 8, sizeof status);
  st = report_status(be, a, status);
  if (st != PS_OK) return st;
  if (a->count) *a->count = count;
  return PS_OK;
}

/* eval_ids: a one-range filter on a column of 1..32 bits goes straight to
 * row ids in one pass (kernels_cuda/ids_fused.cuh); anything else is
 * PS_ERR_UNSUPPORTED, with nothing enqueued, and the core evaluates the
 * chunk into a bitmap and calls row_ids (also what every program gets with
 * the internal option fast_paths = 0). */
static ps_status cuda_eval_ids(ps_backend *be, const ps_eval_args *a) {
  ps_context *ctx = be->ctx;
  if (!a || !a->prog || a->rows == 0 || a->rows > PS_CUDA_MAX_CHUNK_ROWS || !a->ids.handle || !a->count ||
      a->bitmap.handle || a->mask.handle || (a->index_bytes != 4 && a->index_bytes != 8) || !a->ids_capacity)
    return ps_backend_error(ctx, PS_ERR_INTERNAL, "cuda: malformed eval_ids arguments");
  if (!ps_context_internal_options(ctx)->fast_paths || a->selection_in.handle || !a->for_only)
    return PS_ERR_UNSUPPORTED;
  ps_cuda_eval_params params;
  ps_status st = fill_params(be, a, &params);
  if (st != PS_OK) return st;
  ps_cuda_range_params rp; /* no bitmap, no count: a has neither */
  if (!range_fast_path(&params, a, &rp) || rp.width < 1 || rp.width > 32) return PS_ERR_UNSUPPORTED;
  if ((uintptr_t)devptr(a->ids) % a->index_bytes) return PS_ERR_UNSUPPORTED;
  uint64_t count = 0;
  uint32_t status = 0;
  st = ps_cuda_range_ids(be, &rp, a, &count, &status);
  if (st == PS_OK) st = report_status(be, a, status);
  if (st == PS_OK) *a->count = count;
  return st;
}

const ps_backend_ops ps_backend_cuda = {
    .abi_version = PS_BACKEND_ABI_VERSION,
    .name = "cuda",
    .create = cuda_create,
    .destroy = cuda_destroy,
    .device_name = cuda_device_name,
    .max_chunk_rows = cuda_max_chunk_rows,
    .mem_alloc = cuda_mem_alloc,
    .mem_free = cuda_mem_free,
    .mem_write = cuda_mem_write,
    .mem_read = cuda_mem_read,
    .eval = cuda_eval,
    .row_ids = ps_cuda_row_ids,
    .eval_ids = cuda_eval_ids,
    .reduce = ps_cuda_reduce,
    .gather = ps_cuda_gather,
    .retain_wrapped = NULL,
    .release_wrapped = NULL,
    .like_dict = ps_cuda_like_dict,
    .query = ps_cuda_query,
    .fill = cuda_fill,
    .stage_write = ps_cuda_stage_write,
    .stage_release = ps_cuda_stage_release,
    .stage_ready = ps_cuda_stage_ready,
    .mem_write_async = cuda_mem_write_async,
    .query_collect = ps_cuda_query_collect,
};
