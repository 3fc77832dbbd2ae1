/* OpenCL interop for packscan: use the library's OpenCL context and queue,
 * and wrap cl_mem objects the caller owns as ps_buffers (no copy).
 * Include after <CL/cl.h> (or <CL/opencl.h>). */
#ifndef PACKSCAN_OPENCL_H
#define PACKSCAN_OPENCL_H

#include "packscan.h"

#ifdef __cplusplus
extern "C" {
#endif

/** The cl_context, cl_device_id and cl_command_queue of an "opencl" context
 *  (borrowed; do not release). PS_ERR_INVALID_ARGUMENT if ctx is on another
 *  backend. Work the caller enqueues on other queues must be finished (or
 *  ordered with events) before passing its buffers to packscan. */
PS_API ps_status ps_opencl_handles(ps_context *ctx, cl_context *cl_ctx, cl_device_id *device,
                                   cl_command_queue *queue);

/** Wraps a cl_mem of the context's cl_context as a ps_buffer of `size` bytes
 *  (<= the cl_mem's size). The cl_mem is retained while the buffer lives; the
 *  memory stays the caller's. */
PS_API ps_status ps_buffer_wrap_opencl(ps_context *ctx, cl_mem mem, uint64_t size, ps_buffer **out);

/** The cl_mem behind a buffer (borrowed), e.g. to read a device bitmap. */
PS_API ps_status ps_buffer_opencl_mem(const ps_buffer *buf, cl_mem *out);

#ifdef __cplusplus
}
#endif

#endif
