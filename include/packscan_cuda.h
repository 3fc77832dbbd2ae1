/* CUDA interop for packscan: choose the stream packscan runs on and wrap
 * device pointers the caller owns as ps_buffers (no copy).
 * Include after <cuda_runtime_api.h>. */
#ifndef PACKSCAN_CUDA_H
#define PACKSCAN_CUDA_H

#include "packscan.h"

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

#ifdef __cplusplus
}
#endif

#endif
