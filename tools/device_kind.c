/* Whether a context's device is a CPU, for the command's choice of backend.
 * The OpenCL interop header gives the device handle; the library itself
 * exposes no device kind. */
#include "query.h"

#ifdef PSTOOL_HAVE_OPENCL
#include <CL/cl.h>

#include "packscan_opencl.h"
#endif

#include <string.h>

int query_device_is_cpu(ps_context *ctx) {
  const char *b = ps_context_backend(ctx);
  if (!strcmp(b, "reference")) return 1;
  if (!strcmp(b, "cuda")) return 0;
#ifdef PSTOOL_HAVE_OPENCL
  if (!strcmp(b, "opencl")) {
    cl_context c;
    cl_device_id d;
    cl_command_queue q;
    cl_device_type type = 0;
    if (ps_opencl_handles(ctx, &c, &d, &q) != PS_OK ||
        clGetDeviceInfo(d, CL_DEVICE_TYPE, sizeof type, &type, NULL) != CL_SUCCESS)
      return -1;
    return (type & CL_DEVICE_TYPE_CPU) != 0;
  }
#endif
  return -1;
}
