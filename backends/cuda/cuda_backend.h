/* Private to backends/cuda: the backend state and the one error mapping. */
#ifndef PS_CUDA_BACKEND_H
#define PS_CUDA_BACKEND_H

#include <stdbool.h>
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "backend.h"
#include "ps_cuda_kernels.h"

struct ps_backend {
  ps_context *ctx;
  int device;
  cudaStream_t own_stream; /* created with cudaStreamNonBlocking */
  cudaStream_t stream;     /* where work goes: own_stream or the caller's */
  /* Per-evaluation results the kernel writes (selected-row counter, status
   * word), zero before each launch and read back once after it. */
  void *scratch;          /* device, PS_CUDA_SCRATCH_BYTES */
  void *scratch_host;     /* pinned host copy */
  void *scratch_host_dev; /* scratch_host as a kernel writes it (mapped), or NULL: copied */
  bool scratch_dirty;     /* scratch may be nonzero: zeroed before its next use (cuda_backend.c) */
  uint32_t max_blocks;    /* eval grid that fills the device (grid-stride beyond) */
  /* After the filter (cuda_select.c): a device workspace, grown as needed and
   * kept for the context, whose first PS_CUDA_SELECT_RESULT_BYTES hold the
   * results read back (counts, reduce partial, gather status); and a pinned
   * host copy of those results. */
  void *select_ws;
  size_t select_ws_bytes;
  void *select_host;
  void *select_host_dev; /* select_host as kernels write it (mapped), or NULL: copied from select_ws */
  /* Row ids' look-back state (a ticket and the tile statuses,
   * kernels_cuda/ps_cuda_ids.cuh), apart from select_ws, which other calls
   * overwrite: at rest between calls for ids_ready tiles, so that a launch
   * over no more tiles needs no init launch. */
  void *ids_state;
  size_t ids_state_bytes;
  uint32_t ids_ready;
  /* Queries' deferred status words (ps_query_args.defer_status): a slot per
   * chunk on the device, made on the first deferred chunk. */
  uint32_t *qstatus;
  /* Pinned staging for what a query's collect reads back (status words and
   * accumulators) when the caller's memory is pageable: both copies then
   * queue behind the kernels and one wait takes them. Grown on demand up to
   * ps_query_collect_size (core/query_policy.h); NULL until used. */
  void *collect_host;
  size_t collect_host_bytes;
  char name[320];
  struct ps_cuda_spec_cache *spec_cache; /* specialized query kernels (cuda_query_spec.c); NULL until used */
  /* Streaming host-resident columns (cuda_stream.c): the copies' own
   * stream, made on the first copy; per staging slot, the event after its
   * last copy (the context's stream waits for it) and the event after the
   * last work that read it (its next copies wait for that), whether a chunk
   * is being copied into it, and the pinned bounce buffer that pageable
   * sources go through. */
  cudaStream_t copy_stream;
  cudaEvent_t stage_copied[PS_STAGE_SLOTS], stage_free[PS_STAGE_SLOTS];
  bool stage_open[PS_STAGE_SLOTS], stage_free_set[PS_STAGE_SLOTS];
  uint8_t *bounce[PS_STAGE_SLOTS];
  size_t bounce_bytes[PS_STAGE_SLOTS], bounce_fill[PS_STAGE_SLOTS];
};

#define PS_CUDA_SCRATCH_BYTES 16 /* uint64 count, uint32 status, pad */

/* THE mapping of cudaError_t to ps_status (cudaSuccess -> PS_OK): out of
 * memory -> PS_ERR_DEVICE_OUT_OF_MEMORY, no usable device ->
 * PS_ERR_NO_DEVICE, anything else -> PS_ERR_DEVICE, or every error ->
 * PS_ERR_NO_DEVICE when `probing` (while looking for a device at create). The
 * message names the error and the call. Non-sticky errors are cleared so the
 * context stays usable. */
ps_status ps_cuda_status(ps_context *ctx, cudaError_t err, const char *call, bool probing);

/* Makes be's device current for the calling thread; *prev receives the
 * device to restore with ps_cuda_leave. */
ps_status ps_cuda_enter(ps_backend *be, int *prev);
void ps_cuda_leave(ps_backend *be, int prev);

/* Pinned host memory of `bytes` for result words: *dev is the address a
 * kernel writes it at (unified addressing: the host address), or NULL where
 * the device cannot write it (the caller copies into it then). be's device is
 * current. */
ps_status ps_cuda_alloc_host_results(ps_backend *be, size_t bytes, void **host, void **dev);

/* After the filter (cuda_select.c): the optional vtable entries, and the
 * release of their workspace (from release_device). */
ps_status ps_cuda_row_ids(ps_backend *be, const ps_row_ids_args *a);
/* The fused filter-to-ids launch of eval_ids: rp a range fast path's
 * parameters (width 1..32), a the chunk's eval_ids arguments; *count the
 * chunk's selected rows, *status the kernel's status word (slot bits). */
ps_status ps_cuda_range_ids(ps_backend *be, ps_cuda_range_params *rp, const ps_eval_args *a, uint64_t *count,
                            uint32_t *status);
ps_status ps_cuda_reduce(ps_backend *be, const ps_reduce_args *a);
ps_status ps_cuda_gather(ps_backend *be, const ps_gather_args *a);
void ps_cuda_select_release(ps_backend *be);
/* Streaming host-resident columns (ps_backend_ops.stage_write, stage_release, stage_ready) and their release. */
ps_status ps_cuda_stage_write(ps_backend *be, uint32_t slot, ps_devmem dst, const void *src, uint64_t bytes);
ps_status ps_cuda_stage_release(ps_backend *be, uint32_t slot);
ps_status ps_cuda_stage_ready(ps_backend *be, uint32_t slot);
void ps_cuda_stage_free(ps_backend *be);
/* One chunk of a query (kernels_cuda/query.cu), on the same workspace. */
ps_status ps_cuda_query(ps_backend *be, const ps_query_args *a);
ps_status ps_cuda_query_collect(ps_backend *be, uint32_t n, uint32_t *status, ps_devmem acc, void *acc_host,
                                uint64_t acc_bytes);

/* LIKE over dictionary entries on the device (cuda_like.c). */
ps_status ps_cuda_like_dict(ps_backend *be, const ps_like_dict_args *a);

#endif /* PS_CUDA_BACKEND_H */
