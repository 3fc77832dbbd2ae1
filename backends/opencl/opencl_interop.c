/* include/packscan_opencl.h: the library's OpenCL handles and cl_mem wrapping. */
#include "opencl_internal.h"
#include "packscan_opencl.h"

static ps_backend *opencl_state(ps_context *ctx, const char *call) {
  ps_backend *be = ps_context_backend_state(ctx, "opencl");
  if (!be)
    ps_backend_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: the context runs on backend \"%s\", not \"opencl\"", call,
                     ps_context_backend(ctx));
  return be;
}

PS_API ps_status ps_opencl_handles(ps_context *ctx, cl_context *cl_ctx, cl_device_id *device, cl_command_queue *queue) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_backend *be = opencl_state(ctx, "ps_opencl_handles");
  if (!be) return PS_ERR_INVALID_ARGUMENT;
  if (cl_ctx) *cl_ctx = be->context;
  if (device) *device = be->device;
  if (queue) *queue = be->queue;
  return PS_OK;
}

PS_API ps_status ps_buffer_wrap_opencl(ps_context *ctx, cl_mem mem, uint64_t size, ps_buffer **out) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_backend *be = opencl_state(ctx, "ps_buffer_wrap_opencl");
  if (!be) return PS_ERR_INVALID_ARGUMENT;
  if (!mem || !out)
    return ps_backend_error(ctx, PS_ERR_INVALID_ARGUMENT, "ps_buffer_wrap_opencl: %s is NULL", mem ? "out" : "mem");
  cl_context owner = NULL;
  size_t mem_size = 0;
  cl_int err = clGetMemObjectInfo(mem, CL_MEM_CONTEXT, sizeof owner, &owner, NULL);
  if (err == CL_SUCCESS) err = clGetMemObjectInfo(mem, CL_MEM_SIZE, sizeof mem_size, &mem_size, NULL);
  if (err != CL_SUCCESS) return ps_cl_fail(ctx, err, "clGetMemObjectInfo", "ps_buffer_wrap_opencl: mem");
  if (owner != be->context)
    return ps_backend_error(ctx, PS_ERR_INVALID_ARGUMENT,
                            "ps_buffer_wrap_opencl: mem belongs to another cl_context than the "
                            "packscan context's (see ps_opencl_handles)");
  if (size > mem_size)
    return ps_backend_error(ctx, PS_ERR_INVALID_ARGUMENT,
                            "ps_buffer_wrap_opencl: size %llu exceeds the cl_mem's %llu bytes",
                            (unsigned long long)size, (unsigned long long)mem_size);
  return ps_buffer_wrap_native(ctx, "opencl", mem, size, out);
}

PS_API ps_status ps_buffer_opencl_mem(const ps_buffer *buf, cl_mem *out) {
  if (!buf || !out) return PS_ERR_INVALID_ARGUMENT;
  if (!opencl_state(ps_buffer_context(buf), "ps_buffer_opencl_mem")) return PS_ERR_INVALID_ARGUMENT;
  *out = (cl_mem)ps_buffer_devmem(buf).handle;
  return PS_OK;
}
