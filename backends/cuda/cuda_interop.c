/* packscan_cuda.h: the caller's stream and caller-owned device pointers. */
#include <stdint.h>

#include <cuda_runtime_api.h>

#include "cuda_backend.h"
#include "packscan_cuda.h"

/* The cuda backend state of ctx, or NULL with an error recorded on ctx. */
static ps_backend *cuda_state(ps_context *ctx, const char *fn) {
  ps_backend *be = ps_context_backend_state(ctx, "cuda");
  if (!be)
    ps_backend_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: the context's backend is '%s', not 'cuda'",
                     fn, ps_context_backend(ctx));
  return be;
}

PS_API ps_status ps_cuda_set_stream(ps_context *ctx, cudaStream_t stream) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_backend *be = cuda_state(ctx, "ps_cuda_set_stream");
  if (!be) return PS_ERR_INVALID_ARGUMENT;
  /* Nothing is left in flight on the old stream: every call that enqueues
   * work waits for it before returning, so switching needs no ordering. */
  be->stream = stream ? stream : be->own_stream;
  return PS_OK;
}

PS_API ps_status ps_cuda_get_stream(ps_context *ctx, cudaStream_t *out) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_backend *be = cuda_state(ctx, "ps_cuda_get_stream");
  if (!be) return PS_ERR_INVALID_ARGUMENT;
  if (!out) return ps_backend_error(ctx, PS_ERR_INVALID_ARGUMENT, "ps_cuda_get_stream: out is NULL");
  *out = be->stream;
  return PS_OK;
}

/* Rejects memory the context's device cannot read: another device's memory,
 * or pageable host memory on a device without pageable memory access (HMM /
 * ATS systems can read it, so it is allowed there). */
static ps_status check_wrappable(ps_backend *be, const void *ptr) {
  ps_context *ctx = be->ctx;
  struct cudaPointerAttributes attr;
  ps_status st = ps_cuda_status(ctx, cudaPointerGetAttributes(&attr, ptr),
                                "cudaPointerGetAttributes (ps_buffer_wrap_cuda)", false);
  if (st != PS_OK) return st;
  if (attr.type == cudaMemoryTypeDevice && attr.device != be->device)
    return ps_backend_error(ctx, PS_ERR_INVALID_ARGUMENT,
                            "ps_buffer_wrap_cuda: %p is memory of CUDA device %d; the context "
                            "uses device %d",
                            ptr, attr.device, be->device);
  if (attr.type == cudaMemoryTypeUnregistered) {
    int pageable = 0;
    st = ps_cuda_status(ctx,
                        cudaDeviceGetAttribute(&pageable, cudaDevAttrPageableMemoryAccess,
                                               be->device),
                        "cudaDeviceGetAttribute (ps_buffer_wrap_cuda)", false);
    if (st != PS_OK) return st;
    if (!pageable)
      return ps_backend_error(ctx, PS_ERR_INVALID_ARGUMENT,
                              "ps_buffer_wrap_cuda: %p is not device memory (pageable host "
                              "memory, which CUDA device %d cannot access)",
                              ptr, be->device);
  }
  return PS_OK;
}

PS_API ps_status ps_buffer_wrap_cuda(ps_context *ctx, void *ptr, uint64_t size, ps_buffer **out) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_backend *be = ps_context_backend_state(ctx, "cuda");
  if (be && ptr) {
    ps_status st = check_wrappable(be, ptr);
    if (st != PS_OK) return st;
  }
  /* The core checks the backend, NULL pointers and out, and records errors. */
  return ps_buffer_wrap_native(ctx, "cuda", ptr, size, out);
}

PS_API ps_status ps_buffer_cuda_ptr(const ps_buffer *buf, void **out) {
  if (!buf) return PS_ERR_INVALID_ARGUMENT;
  ps_context *ctx = ps_buffer_context(buf);
  if (!cuda_state(ctx, "ps_buffer_cuda_ptr")) return PS_ERR_INVALID_ARGUMENT;
  if (!out) return ps_backend_error(ctx, PS_ERR_INVALID_ARGUMENT, "ps_buffer_cuda_ptr: out is NULL");
  const ps_devmem m = ps_buffer_devmem(buf);
  *out = (uint8_t *)m.handle + m.offset;
  return PS_OK;
}
