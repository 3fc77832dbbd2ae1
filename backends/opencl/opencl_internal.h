/* State and helpers shared by the files of the OpenCL backend. */
#ifndef PS_OPENCL_INTERNAL_H
#define PS_OPENCL_INTERNAL_H

#include <CL/cl.h>

#include "backend.h"
#include "filter_launch.h"

/* Rows per launch: 2^26 work-items at 32 rows each keeps global sizes and the
 * 32-bit device count far from overflow. */
#define PS_CL_MAX_CHUNK_ROWS (UINT64_C(1) << 31)

/* Work-group size used when the kernel allows it (a power of two). */
#define PS_CL_WORK_GROUP 256u

/* Forwards a failed status; its message is already recorded. */
#define PS_CL_TRY(expr)                               \
  do {                                                \
    ps_status ps_cl_try_st_ = (expr);                 \
    if (ps_cl_try_st_ != PS_OK) return ps_cl_try_st_; \
  } while (0)

#define PS_CL_CACHE_SLOTS 8
#define PS_CL_OPTIONS_SIZE 256

/* A program built from one source with one option string, and its kernel. */
typedef struct ps_cl_cached {
  const char *source_name;
  char options[PS_CL_OPTIONS_SIZE];
  cl_program program;
  cl_kernel kernel;
  size_t work_group; /* power of two the kernel accepts */
} ps_cl_cached;

/* One context = one device, so the program cache lives here. */
struct ps_backend {
  ps_context *ctx;
  cl_platform_id platform;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  char device_name[512];
  int has_fp64;
  int little_endian;
  uint64_t max_alloc;
  size_t max_work_group;
  cl_mem dummy;  /* bound to buffer arguments a launch does not use */
  cl_mem status; /* PS_FILTER_STATUS_WORDS words the kernel accumulates into */
  ps_cl_cached cache[PS_CL_CACHE_SLOTS];
  size_t cached;
};

/* opencl_error.c: the one place where cl_int codes become ps_status. Records
 * "<call> failed: <CL_NAME> (<code>)" plus optional detail and returns the status. */
ps_status ps_cl_fail(ps_context *ctx, cl_int err, const char *call, const char *detail);
/* The same for a failed build, with as much of the build log as fits. */
ps_status ps_cl_build_fail(ps_context *ctx, cl_int err, const char *source_name, const char *options,
                           const char *device, const char *log);
const char *ps_cl_error_name(cl_int err);

/* opencl_program.c: the filter kernel for the device, built on first use. */
ps_status ps_cl_filter_kernel(ps_backend *be, const ps_cl_cached **out);
void ps_cl_cache_clear(ps_backend *be);

/* opencl_eval.c */
ps_status ps_cl_eval(ps_backend *be, const ps_eval_args *args);

#endif /* PS_OPENCL_INTERNAL_H */
