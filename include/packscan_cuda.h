/* CUDA interop for packscan: choose the stream packscan runs on and wrap
 * device pointers the caller owns as ps_buffers (no copy).
 * Include after <cuda_runtime_api.h>. */
#ifndef PACKSCAN_CUDA_H
#define PACKSCAN_CUDA_H

#include "packscan.h"
#include "packscan_arrow.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Makes every later call on a "cuda" context run on `stream` (NULL: the
 *  context's own stream). The stream must outlive its use by the context.
 *  Calls synchronize the stream only when they return a host value. */
PS_API ps_status ps_cuda_set_stream(ps_context *ctx, cudaStream_t stream);

/** The stream the context currently runs on. */
PS_API ps_status ps_cuda_get_stream(ps_context *ctx, cudaStream_t *out);

/** Wraps `size` bytes of device memory at `ptr` (on the context's device) as
 *  a ps_buffer, without copying. The memory stays the caller's and must outlive
 *  the buffer. Writes the caller makes to it must be complete, or ordered on
 *  the context's stream (ps_cuda_set_stream), before a call reads it: the
 *  context's own stream is non-blocking and does not wait for the legacy
 *  default stream, and a cudaMemcpy from pageable host memory may return
 *  before its copy has landed. */
PS_API ps_status ps_buffer_wrap_cuda(ps_context *ctx, void *ptr, uint64_t size, ps_buffer **out);

/** The device pointer behind a buffer (borrowed). */
PS_API ps_status ps_buffer_cuda_ptr(const ps_buffer *buf, void **out);

/* ---- Arrow C Device Data Interface exports ------------------------------
 * Each fills a caller-provided ArrowSchema and ArrowDeviceArray (on failure
 * neither is written): device_type ARROW_DEVICE_CUDA, device_id the context's
 * device ordinal, buffers device pointers (cudaMalloc) that the array's
 * release callback frees, and sync_event a cudaEvent_t * recorded on the
 * context's stream after the last write: a consumer waits on it
 * (cudaStreamWaitEvent / cudaEventSynchronize) before reading. The event
 * belongs to the array and is destroyed by its release. A context on another
 * backend: PS_ERR_INVALID_ARGUMENT. */

/** The selection of expr as a device boolean array of ps_expr_rows(expr)
 *  rows; count (optional) receives the number selected. */
PS_API ps_status ps_cuda_arrow_export_selection(ps_context *ctx, const ps_expr *expr, struct ArrowSchema *schema,
                                                struct ArrowDeviceArray *out, uint64_t *count);

/** The ids of the rows where expr is TRUE, ascending, as a device uint32
 *  (PS_INDEX_UINT32) or uint64 array. */
PS_API ps_status ps_cuda_arrow_export_row_ids(ps_context *ctx, const ps_expr *expr, ps_index_type type,
                                              struct ArrowSchema *schema, struct ArrowDeviceArray *out);

/** The values of column `column` of an imported table at the rows where expr
 *  is TRUE (NULL: every row), as a device array of the column's Arrow type,
 *  with a validity bitmap (null_count -1: not counted). Fixed-width types
 *  only: integers, floats, dates, timestamps; decimal and string columns give
 *  PS_ERR_UNSUPPORTED (export them to the host with ps_arrow_export_gather). */
PS_API ps_status ps_cuda_arrow_export_column(ps_context *ctx, const ps_arrow_table *table, size_t column,
                                             const ps_expr *expr, struct ArrowSchema *schema,
                                             struct ArrowDeviceArray *out);

#ifdef __cplusplus
}
#endif

#endif
