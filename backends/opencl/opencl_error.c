/* OpenCL error codes to ps_status, and their names for messages. */
#include <stdio.h>
#include <string.h>

#include "opencl_internal.h"

/* clang-format off */
#define PS_CL_ERRORS(X) \
  X(CL_SUCCESS) \
  X(CL_DEVICE_NOT_FOUND) \
  X(CL_DEVICE_NOT_AVAILABLE) \
  X(CL_COMPILER_NOT_AVAILABLE) \
  X(CL_MEM_OBJECT_ALLOCATION_FAILURE) \
  X(CL_OUT_OF_RESOURCES) \
  X(CL_OUT_OF_HOST_MEMORY) \
  X(CL_PROFILING_INFO_NOT_AVAILABLE) \
  X(CL_MEM_COPY_OVERLAP) \
  X(CL_IMAGE_FORMAT_MISMATCH) \
  X(CL_IMAGE_FORMAT_NOT_SUPPORTED) \
  X(CL_BUILD_PROGRAM_FAILURE) \
  X(CL_MAP_FAILURE) \
  X(CL_MISALIGNED_SUB_BUFFER_OFFSET) \
  X(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) \
  X(CL_COMPILE_PROGRAM_FAILURE) \
  X(CL_LINKER_NOT_AVAILABLE) \
  X(CL_LINK_PROGRAM_FAILURE) \
  X(CL_DEVICE_PARTITION_FAILED) \
  X(CL_KERNEL_ARG_INFO_NOT_AVAILABLE) \
  X(CL_INVALID_VALUE) \
  X(CL_INVALID_PLATFORM) \
  X(CL_INVALID_DEVICE) \
  X(CL_INVALID_CONTEXT) \
  X(CL_INVALID_QUEUE_PROPERTIES) \
  X(CL_INVALID_COMMAND_QUEUE) \
  X(CL_INVALID_HOST_PTR) \
  X(CL_INVALID_MEM_OBJECT) \
  X(CL_INVALID_IMAGE_FORMAT_DESCRIPTOR) \
  X(CL_INVALID_IMAGE_SIZE) \
  X(CL_INVALID_SAMPLER) \
  X(CL_INVALID_BINARY) \
  X(CL_INVALID_BUILD_OPTIONS) \
  X(CL_INVALID_PROGRAM) \
  X(CL_INVALID_PROGRAM_EXECUTABLE) \
  X(CL_INVALID_KERNEL_NAME) \
  X(CL_INVALID_KERNEL_DEFINITION) \
  X(CL_INVALID_KERNEL) \
  X(CL_INVALID_ARG_INDEX) \
  X(CL_INVALID_ARG_VALUE) \
  X(CL_INVALID_ARG_SIZE) \
  X(CL_INVALID_KERNEL_ARGS) \
  X(CL_INVALID_WORK_DIMENSION) \
  X(CL_INVALID_WORK_GROUP_SIZE) \
  X(CL_INVALID_WORK_ITEM_SIZE) \
  X(CL_INVALID_GLOBAL_OFFSET) \
  X(CL_INVALID_EVENT_WAIT_LIST) \
  X(CL_INVALID_EVENT) \
  X(CL_INVALID_GL_OBJECT) \
  X(CL_INVALID_BUFFER_SIZE) \
  X(CL_INVALID_MIP_LEVEL) \
  X(CL_INVALID_PROPERTY) \
  X(CL_INVALID_IMAGE_DESCRIPTOR) \
  X(CL_INVALID_COMPILER_OPTIONS) \
  X(CL_INVALID_LINKER_OPTIONS) \
  X(CL_INVALID_DEVICE_PARTITION_COUNT)
/* clang-format on */

/* Returned by the ICD loader when no platform is installed (cl_khr_icd). */
#define PS_CL_PLATFORM_NOT_FOUND_KHR (-1001)

const char *ps_cl_error_name(cl_int err) {
  switch (err) {
#define PS_CL_ERROR_CASE_(name) \
  case name:                    \
    return #name;
    PS_CL_ERRORS(PS_CL_ERROR_CASE_)
#undef PS_CL_ERROR_CASE_
    case PS_CL_PLATFORM_NOT_FOUND_KHR:
      return "CL_PLATFORM_NOT_FOUND_KHR";
    default:
      return "unknown OpenCL error";
  }
}

/* The one mapping from OpenCL codes to ps_status. */
static ps_status ps_cl_status(cl_int err) {
  switch (err) {
    case CL_SUCCESS:
      return PS_OK;
    case CL_MEM_OBJECT_ALLOCATION_FAILURE:
    case CL_OUT_OF_RESOURCES:
      return PS_ERR_DEVICE_OUT_OF_MEMORY;
    case CL_OUT_OF_HOST_MEMORY:
      return PS_ERR_OUT_OF_MEMORY;
    case CL_BUILD_PROGRAM_FAILURE:
    case CL_COMPILE_PROGRAM_FAILURE:
    case CL_LINK_PROGRAM_FAILURE:
    case CL_INVALID_BUILD_OPTIONS:
    case CL_COMPILER_NOT_AVAILABLE:
      return PS_ERR_BUILD;
    case CL_DEVICE_NOT_FOUND:
    case CL_DEVICE_NOT_AVAILABLE:
    case PS_CL_PLATFORM_NOT_FOUND_KHR:
      return PS_ERR_NO_DEVICE;
    case CL_INVALID_MEM_OBJECT:
      return PS_ERR_INVALID_ARGUMENT; /* a caller's cl_mem */
    default:
      return PS_ERR_DEVICE;
  }
}

ps_status ps_cl_fail(ps_context *ctx, cl_int err, const char *call, const char *detail) {
  return ps_backend_error(ctx, ps_cl_status(err), "OpenCL: %s failed: %s (%d)%s%s", call, ps_cl_error_name(err),
                          (int)err, detail ? ": " : "", detail ? detail : "");
}

/* Matches the context's message buffer (core/internal.h PS_ERRMSG_SIZE). */
#define PS_CL_MESSAGE_SIZE 4096

ps_status ps_cl_build_fail(ps_context *ctx, cl_int err, const char *source_name, const char *options,
                           const char *device, const char *log) {
  char head[1024];
  int head_len = snprintf(head, sizeof head, "OpenCL: clBuildProgram(%s, \"%s\") failed on %s: %s (%d). Build log:\n",
                          source_name, options, device, ps_cl_error_name(err), (int)err);
  if (head_len < 0) head_len = 0;
  if ((size_t)head_len >= sizeof head) head_len = (int)sizeof head - 1;
  if (!log || !*log) log = "(empty)";
  size_t log_len = strlen(log);
  /* Keep the start of the log (the first error explains the rest) and say how
   * much was cut, rather than letting the message end mid-line silently. */
  const size_t note_room = 64; /* "\n[build log truncated: N more bytes]" */
  size_t room = PS_CL_MESSAGE_SIZE - 1 - (size_t)head_len;
  if (log_len <= room) return ps_backend_error(ctx, ps_cl_status(err), "%s%s", head, log);
  size_t keep = room - note_room;
  while (keep > (room - note_room) / 2 && log[keep - 1] != '\n') --keep; /* end on a line */
  return ps_backend_error(ctx, ps_cl_status(err), "%s%.*s\n[build log truncated: %zu more bytes]", head, (int)keep, log,
                          log_len - keep);
}
