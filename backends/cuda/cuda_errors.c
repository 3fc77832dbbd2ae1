/* The one place where CUDA runtime errors become ps_status (style.md). */
#include "cuda_backend.h"

static bool is_no_device(cudaError_t err) {
  switch (err) {
    case cudaErrorNoDevice:
    case cudaErrorInsufficientDriver:
    case cudaErrorInvalidDevice:
    case cudaErrorDevicesUnavailable:
    case cudaErrorStubLibrary:
    case cudaErrorSystemDriverMismatch:
    case cudaErrorCompatNotSupportedOnDevice:
    case cudaErrorSystemNotReady:
    case cudaErrorCallRequiresNewerDriver:
      return true;
    default:
      return false;
  }
}

ps_status ps_cuda_status(ps_context *ctx, cudaError_t err, const char *call, bool probing) {
  if (err == cudaSuccess) return PS_OK;
  /* Clears a non-sticky error so the next call on this thread does not see it;
   * a sticky one (a kernel fault) stays and every later call reports it. */
  (void)cudaGetLastError();
  ps_status st;
  if (probing || is_no_device(err))
    st = PS_ERR_NO_DEVICE;
  else if (err == cudaErrorMemoryAllocation)
    st = PS_ERR_DEVICE_OUT_OF_MEMORY;
  else
    st = PS_ERR_DEVICE;
  return ps_backend_error(ctx, st, "cuda: %s%s failed: %s (%s)",
                          st == PS_ERR_NO_DEVICE ? "no usable CUDA device: " : "", call,
                          cudaGetErrorName(err), cudaGetErrorString(err));
}
