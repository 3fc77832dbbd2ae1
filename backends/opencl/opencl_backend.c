/* The OpenCL backend's vtable: device selection, memory, wrapped handles.
 * Evaluation is in opencl_eval.c, kernel builds in opencl_program.c. */
#include <pthread.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "opencl_internal.h"
#include "query_policy.h"

/* ---- device selection ------------------------------------------------- */

/* Platforms and their devices, discovered once per process and shared by
 * every context. packscan.h lets separate contexts be created from several
 * threads at once, but an ICD's first-time initialisation need not be
 * thread-safe (PoCL crashes when threads race into clGetPlatformIDs), and the
 * installed platforms do not change while a process runs. Fixed-size tables
 * keep the process-wide state off the contexts' allocators; devices past the
 * limits are not offered. */
#define PS_CL_MAX_PLATFORMS 32
#define PS_CL_MAX_DEVICES 64

typedef struct cl_discovery {
  cl_int err;        /* CL_SUCCESS, or what clGetPlatformIDs returned */
  cl_int device_err; /* the first clGetDeviceIDs failure (that platform then offers no device) */
  cl_uint nplatforms;
  cl_platform_id platforms[PS_CL_MAX_PLATFORMS];
  cl_uint ngpus[PS_CL_MAX_PLATFORMS], ndevices[PS_CL_MAX_PLATFORMS];
  cl_device_id gpus[PS_CL_MAX_PLATFORMS][PS_CL_MAX_DEVICES];
  cl_device_id devices[PS_CL_MAX_PLATFORMS][PS_CL_MAX_DEVICES];
} cl_discovery;

static cl_discovery discovery;
static pthread_once_t discovery_once = PTHREAD_ONCE_INIT;

/* Devices of one type on a platform; none when it has none of that type. */
static cl_int discover_devices(cl_platform_id platform, cl_device_type type, cl_device_id *ids, cl_uint *count) {
  cl_uint n = 0;
  *count = 0;
  cl_int err = clGetDeviceIDs(platform, type, PS_CL_MAX_DEVICES, ids, &n);
  if (err == CL_DEVICE_NOT_FOUND) return CL_SUCCESS;
  if (err != CL_SUCCESS) return err;
  *count = n < PS_CL_MAX_DEVICES ? n : PS_CL_MAX_DEVICES;
  return CL_SUCCESS;
}

static void discover(void) {
  cl_discovery *d = &discovery;
  cl_uint n = 0;
  d->err = clGetPlatformIDs(PS_CL_MAX_PLATFORMS, d->platforms, &n);
  if (d->err == -1001 /* CL_PLATFORM_NOT_FOUND_KHR: no ICD installed */) {
    d->err = CL_SUCCESS;
    n = 0;
  }
  if (d->err != CL_SUCCESS) return;
  d->nplatforms = n < PS_CL_MAX_PLATFORMS ? n : PS_CL_MAX_PLATFORMS;
  /* A platform whose devices cannot be listed (a broken driver) offers none;
   * the others stay usable. */
  for (cl_uint p = 0; p < d->nplatforms; ++p) {
    cl_int err = discover_devices(d->platforms[p], CL_DEVICE_TYPE_GPU, d->gpus[p], &d->ngpus[p]);
    if (err == CL_SUCCESS) err = discover_devices(d->platforms[p], CL_DEVICE_TYPE_ALL, d->devices[p], &d->ndevices[p]);
    if (err != CL_SUCCESS) {
      d->ngpus[p] = d->ndevices[p] = 0;
      if (d->device_err == CL_SUCCESS) d->device_err = err;
    }
  }
}

typedef struct device_choice {
  cl_platform_id platform;
  cl_device_id device;
} device_choice;

/* Device `index` of platform p, or with index -1 its first GPU, else (unless
 * gpu_only) its first device. Returns 0 if there is no such device. */
static int pick_in_platform(const cl_discovery *d, cl_uint p, int32_t index, int gpu_only, device_choice *choice) {
  const cl_device_id *ids = d->devices[p];
  cl_uint n = d->ndevices[p];
  if (index < 0) {
    if (d->ngpus[p] > 0) {
      ids = d->gpus[p];
      n = d->ngpus[p];
    } else if (gpu_only) {
      n = 0;
    }
    index = 0;
  }
  if ((cl_uint)index >= n) return 0;
  choice->platform = d->platforms[p];
  choice->device = ids[index];
  return 1;
}

/* Whether `name` contains `part`, ASCII case aside. */
static int lower_ascii(char c) { return c >= 'A' && c <= 'Z' ? c - 'A' + 'a' : c; }
static int contains_ci(const char *name, const char *part) {
  const size_t ln = strlen(name), lp = strlen(part);
  for (size_t at = 0; lp <= ln && at + lp <= ln; at++) {
    size_t k = 0;
    while (k < lp && lower_ascii(name[at + k]) == lower_ascii(part[k])) k++;
    if (k == lp) return 1;
  }
  return 0;
}

/* The index of the first platform whose name contains `part`, or an error
 * that lists the installed platforms. */
static ps_status platform_by_name(ps_context *ctx, const cl_discovery *d, const char *part, int32_t *index) {
  char list[512] = "";
  size_t used = 0;
  for (cl_uint p = 0; p < d->nplatforms; ++p) {
    char name[256] = "";
    if (clGetPlatformInfo(d->platforms[p], CL_PLATFORM_NAME, sizeof name - 1, name, NULL) != CL_SUCCESS) name[0] = '\0';
    if (contains_ci(name, part)) {
      *index = (int32_t)p;
      return PS_OK;
    }
    const int w = snprintf(list + used, sizeof list - used, "%s%u: %s", p ? "; " : "", (unsigned)p, name);
    if (w > 0 && (size_t)w < sizeof list - used) used += (size_t)w;
  }
  return ps_backend_error(ctx, PS_ERR_NO_DEVICE, "OpenCL: no platform's name contains '%s' (opencl_platform_name; installed: %s)",
                          part, d->nplatforms ? list : "none");
}

/* platform_index / device_index: -1 = any; platform_name (NULL: none)
 * chooses the platform instead of platform_index. With both indexes -1 and
 * no name, a GPU on any platform is preferred to the first device of the
 * first platform. */
static ps_status choose_device(ps_context *ctx, int32_t platform_index, const char *platform_name, int32_t device_index,
                               device_choice *choice) {
  int rc = pthread_once(&discovery_once, discover);
  if (rc != 0)
    return ps_backend_error(ctx, PS_ERR_NO_DEVICE, "OpenCL: platform discovery could not run (pthread_once: %d)", rc);
  const cl_discovery *d = &discovery;
  if (d->err != CL_SUCCESS) return ps_cl_fail(ctx, d->err, "clGetPlatformIDs", NULL);
  cl_uint n = d->nplatforms;
  if (n == 0)
    return ps_backend_error(ctx, PS_ERR_NO_DEVICE,
                            "OpenCL: no OpenCL platform is installed (the ICD loader found none; "
                            "install a driver such as pocl-opencl-icd)");
  if (platform_name) {
    ps_status st = platform_by_name(ctx, d, platform_name, &platform_index);
    if (st != PS_OK) return st;
  }
  if (platform_index >= 0) {
    if ((cl_uint)platform_index >= n)
      return ps_backend_error(ctx, PS_ERR_NO_DEVICE,
                              "OpenCL: opencl_platform = %d, but only %u platform(s) are installed",
                              (int)platform_index, (unsigned)n);
    if (pick_in_platform(d, (cl_uint)platform_index, device_index, 0, choice)) return PS_OK;
    if (d->device_err != CL_SUCCESS) return ps_cl_fail(ctx, d->device_err, "clGetDeviceIDs", NULL);
    if (device_index >= 0)
      return ps_backend_error(ctx, PS_ERR_NO_DEVICE, "OpenCL: platform %d has no device with index %d (opencl_device)",
                              (int)platform_index, (int)device_index);
    return ps_backend_error(ctx, PS_ERR_NO_DEVICE, "OpenCL: platform %d has no devices", (int)platform_index);
  }
  /* First pass: a GPU anywhere (only when no device index was named). */
  for (cl_uint p = 0; device_index < 0 && p < n; ++p)
    if (pick_in_platform(d, p, -1, 1, choice)) return PS_OK;
  for (cl_uint p = 0; p < n; ++p)
    if (pick_in_platform(d, p, device_index, 0, choice)) return PS_OK;
  if (d->device_err != CL_SUCCESS) return ps_cl_fail(ctx, d->device_err, "clGetDeviceIDs", NULL);
  if (device_index >= 0)
    return ps_backend_error(ctx, PS_ERR_NO_DEVICE, "OpenCL: no platform of %u has a device with index %d", (unsigned)n,
                            (int)device_index);
  return ps_backend_error(ctx, PS_ERR_NO_DEVICE, "OpenCL: none of the %u installed platform(s) has a device",
                          (unsigned)n);
}

/* ---- create / destroy ------------------------------------------------- */

static ps_status device_info_string(ps_context *ctx, cl_device_id device, cl_device_info what, const char *what_name,
                                    char *buf, size_t size) {
  cl_int err = clGetDeviceInfo(device, what, size, buf, NULL);
  if (err == CL_INVALID_VALUE) { /* longer than buf: ask for the length, keep a prefix */
    size_t need = 0;
    err = clGetDeviceInfo(device, what, 0, NULL, &need);
    char *tmp = err == CL_SUCCESS ? ps_host_alloc(ctx, need + 1) : NULL;
    if (tmp && clGetDeviceInfo(device, what, need, tmp, NULL) == CL_SUCCESS) {
      tmp[need] = '\0';
      snprintf(buf, size, "%s", tmp);
    } else if (err == CL_SUCCESS) {
      err = CL_OUT_OF_HOST_MEMORY;
    }
    ps_host_free(ctx, tmp);
  }
  if (err != CL_SUCCESS) return ps_cl_fail(ctx, err, "clGetDeviceInfo", what_name);
  buf[size - 1] = '\0';
  return PS_OK;
}

#define DEVICE_STRING(ctx, dev, what, buf) device_info_string(ctx, dev, what, #what, buf, sizeof(buf))

static int has_extension(const char *list, const char *name) {
  size_t len = strlen(name);
  for (const char *p = strstr(list, name); p; p = strstr(p + 1, name))
    if ((p == list || p[-1] == ' ') && (p[len] == ' ' || p[len] == '\0')) return 1;
  return 0;
}

/* Reads what the backend needs to know about the device. */
static ps_status probe_device(ps_backend *be) {
  char platform_name[128], name[128], version[160], driver[64], extensions[4096];
  cl_int err = clGetPlatformInfo(be->platform, CL_PLATFORM_NAME, sizeof platform_name, platform_name, NULL);
  if (err != CL_SUCCESS) snprintf(platform_name, sizeof platform_name, "unknown platform");
  platform_name[sizeof platform_name - 1] = '\0';
  PS_CL_TRY(DEVICE_STRING(be->ctx, be->device, CL_DEVICE_NAME, name));
  PS_CL_TRY(DEVICE_STRING(be->ctx, be->device, CL_DEVICE_VERSION, version));
  PS_CL_TRY(DEVICE_STRING(be->ctx, be->device, CL_DRIVER_VERSION, driver));
  PS_CL_TRY(DEVICE_STRING(be->ctx, be->device, CL_DEVICE_EXTENSIONS, extensions));
  snprintf(be->device_name, sizeof be->device_name, "%s: %s (%s, driver %s)", platform_name, name, version, driver);
  char platform_version[160] = "", vendor[128] = "";
  if (clGetPlatformInfo(be->platform, CL_PLATFORM_VERSION, sizeof platform_version, platform_version, NULL) !=
      CL_SUCCESS)
    platform_version[0] = '\0';
  platform_version[sizeof platform_version - 1] = '\0';
  PS_CL_TRY(DEVICE_STRING(be->ctx, be->device, CL_DEVICE_VENDOR, vendor));
  snprintf(be->identity, sizeof be->identity,
           "platform %s; platform version %s; vendor %s; device %s; version %s; driver %s", platform_name,
           platform_version, vendor, name, version, driver);

  cl_bool available = CL_FALSE, compiler = CL_FALSE, little = CL_TRUE;
  cl_ulong max_alloc = 0, local_mem = 0;
  size_t max_wg = 0;
  cl_uint units = 0;
  cl_device_type type = 0;
  struct {
    cl_device_info what;
    const char *name;
    void *value;
    size_t size;
  } queries[] = {
      {CL_DEVICE_AVAILABLE, "CL_DEVICE_AVAILABLE", &available, sizeof available},
      {CL_DEVICE_COMPILER_AVAILABLE, "CL_DEVICE_COMPILER_AVAILABLE", &compiler, sizeof compiler},
      {CL_DEVICE_ENDIAN_LITTLE, "CL_DEVICE_ENDIAN_LITTLE", &little, sizeof little},
      {CL_DEVICE_MAX_MEM_ALLOC_SIZE, "CL_DEVICE_MAX_MEM_ALLOC_SIZE", &max_alloc, sizeof max_alloc},
      {CL_DEVICE_MAX_WORK_GROUP_SIZE, "CL_DEVICE_MAX_WORK_GROUP_SIZE", &max_wg, sizeof max_wg},
      {CL_DEVICE_LOCAL_MEM_SIZE, "CL_DEVICE_LOCAL_MEM_SIZE", &local_mem, sizeof local_mem},
      {CL_DEVICE_TYPE, "CL_DEVICE_TYPE", &type, sizeof type},
      {CL_DEVICE_MAX_COMPUTE_UNITS, "CL_DEVICE_MAX_COMPUTE_UNITS", &units, sizeof units},
  };
  for (size_t i = 0; i < sizeof queries / sizeof *queries; ++i) {
    err = clGetDeviceInfo(be->device, queries[i].what, queries[i].size, queries[i].value, NULL);
    if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clGetDeviceInfo", queries[i].name);
  }
  if (!available)
    return ps_backend_error(be->ctx, PS_ERR_NO_DEVICE, "OpenCL: device %s is not available", be->device_name);
  if (!compiler)
    return ps_backend_error(be->ctx, PS_ERR_NO_DEVICE,
                            "OpenCL: device %s has no OpenCL C compiler (kernels are compiled at "
                            "run time)",
                            be->device_name);
  be->little_endian = little != CL_FALSE;
  be->cpu = (type & CL_DEVICE_TYPE_CPU) != 0;
  be->has_fp64 = has_extension(extensions, "cl_khr_fp64");
  be->max_alloc = max_alloc;
  be->local_mem = local_mem;
  be->max_work_group = max_wg ? max_wg : 1;
  be->compute_units = units ? units : 1;
  return PS_OK;
}

static ps_status create_buffer(ps_backend *be, size_t bytes, const char *what, cl_mem *out) {
  cl_int err;
  *out = clCreateBuffer(be->context, CL_MEM_READ_WRITE, bytes, NULL, &err);
  if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clCreateBuffer", what);
  return PS_OK;
}

static void opencl_destroy(ps_backend *be) {
  if (!be) return;
  if (be->queue) clFinish(be->queue); /* nothing may still use what is released below */
  if (be->copy_queue) clFinish(be->copy_queue);
  for (uint32_t i = 0; i < PS_STAGE_SLOTS; i++)
    if (be->stage_free[i]) clReleaseEvent(be->stage_free[i]);
  for (uint32_t i = 0; i < PS_STAGE_SLOTS; i++)
    if (be->stage_copied[i]) clReleaseEvent(be->stage_copied[i]);
  if (be->copy_queue) clReleaseCommandQueue(be->copy_queue);
  ps_cl_cache_release(be);
  if (be->status) clReleaseMemObject(be->status);
  if (be->qstatus) clReleaseMemObject(be->qstatus);
  if (be->collect_buf) {
    if (be->collect_host) clEnqueueUnmapMemObject(be->queue, be->collect_buf, be->collect_host, 0, NULL, NULL);
    clFinish(be->queue);
    clReleaseMemObject(be->collect_buf);
  }
  if (be->scratch) clReleaseMemObject(be->scratch);
  for (uint32_t i = 0; i < PS_CL_PARAM_SLOTS; i++)
    if (be->param[i]) clReleaseMemObject(be->param[i]);
  ps_host_free(be->ctx, be->param_host);
  if (be->dummy) clReleaseMemObject(be->dummy);
  if (be->queue) clReleaseCommandQueue(be->queue);
  if (be->context) clReleaseContext(be->context);
  ps_host_free(be->ctx, be);
}

static ps_status opencl_setup(ps_backend *be, const ps_context_options *opts) {
  int32_t platform_index = -1, device_index = -1;
  const char *platform_name = NULL;
  if (opts && opts->struct_size >= offsetof(ps_context_options, opencl_device) + sizeof(int32_t)) {
    platform_index = opts->opencl_platform < 0 ? -1 : opts->opencl_platform;
    device_index = opts->opencl_device < 0 ? -1 : opts->opencl_device;
  }
  if (opts && opts->struct_size >= offsetof(ps_context_options, opencl_platform_name) + sizeof(const char *))
    platform_name = opts->opencl_platform_name;
  device_choice choice = {NULL, NULL};
  PS_CL_TRY(choose_device(be->ctx, platform_index, platform_name, device_index, &choice));
  be->platform = choice.platform;
  be->device = choice.device;
  PS_CL_TRY(probe_device(be));

  cl_int err;
  cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)be->platform, 0};
  be->context = clCreateContext(props, 1, &be->device, NULL, NULL, &err);
  if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clCreateContext", be->device_name);
  be->queue = clCreateCommandQueue(be->context, be->device, 0, &err);
  if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clCreateCommandQueue", be->device_name);
  PS_CL_TRY(create_buffer(be, 16, "placeholder for unused kernel arguments", &be->dummy));
  PS_CL_TRY(create_buffer(be, PS_CL_STATUS_WORDS * sizeof(cl_uint), "status words", &be->status));
  PS_CL_TRY(create_buffer(be, PS_Q_STATUS_WORDS * PS_QUERY_STATUS_SLOTS * sizeof(cl_uint), "query status words", &be->qstatus));
  return PS_OK;
}

static ps_status opencl_create(ps_context *ctx, const ps_context_options *opts, ps_backend **out) {
  ps_backend *be = ps_host_alloc(ctx, sizeof *be);
  if (!be) return ps_backend_error(ctx, PS_ERR_OUT_OF_MEMORY, "OpenCL: out of host memory");
  memset(be, 0, sizeof *be);
  be->ctx = ctx;
  ps_status st = opencl_setup(be, opts);
  if (st != PS_OK) {
    opencl_destroy(be);
    return st;
  }
  *out = be;
  return PS_OK;
}

static const char *opencl_device_name(ps_backend *be) { return be->device_name; }

static uint64_t opencl_max_chunk_rows(ps_backend *be) { return PS_CL_MAX_CHUNK_ROWS; }

/* ---- memory ----------------------------------------------------------- */

static ps_status opencl_mem_alloc(ps_backend *be, uint64_t bytes, ps_devmem *out) {
  if (bytes > be->max_alloc)
    return ps_backend_error(be->ctx, PS_ERR_DEVICE_OUT_OF_MEMORY,
                            "OpenCL: a buffer of %llu bytes exceeds the largest allocation of %s "
                            "(CL_DEVICE_MAX_MEM_ALLOC_SIZE = %llu)",
                            (unsigned long long)bytes, be->device_name, (unsigned long long)be->max_alloc);
  cl_mem mem;
  /* OpenCL has no empty buffers; an empty ps_buffer still needs a handle. */
  PS_CL_TRY(create_buffer(be, bytes ? (size_t)bytes : 4, "device buffer", &mem));
  out->handle = mem;
  out->offset = 0;
  return PS_OK;
}

static void opencl_mem_free(ps_backend *be, ps_devmem mem) {
  if (mem.handle) clReleaseMemObject((cl_mem)mem.handle);
}

static ps_status write_buffer(ps_backend *be, ps_devmem dst, const void *src, uint64_t bytes, cl_bool blocking) {
  if (bytes == 0) return PS_OK;
  cl_int err = clEnqueueWriteBuffer(be->queue, (cl_mem)dst.handle, blocking, (size_t)dst.offset, (size_t)bytes, src, 0,
                                    NULL, NULL);
  if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clEnqueueWriteBuffer", NULL);
  return PS_OK;
}

/* Both copies block: the caller's host memory is only borrowed for the call. */
static ps_status opencl_mem_write(ps_backend *be, ps_devmem dst, const void *src, uint64_t bytes) {
  return write_buffer(be, dst, src, bytes, CL_TRUE);
}

static ps_status opencl_mem_read(ps_backend *be, void *dst, ps_devmem src, uint64_t bytes) {
  if (bytes == 0) return PS_OK;
  cl_int err = clEnqueueReadBuffer(be->queue, (cl_mem)src.handle, CL_TRUE, (size_t)src.offset, (size_t)bytes, dst, 0,
                                   NULL, NULL);
  if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clEnqueueReadBuffer", NULL);
  return PS_OK;
}

/* ps_backend_ops.mem_write_async: the caller keeps src until the next wait. */
static ps_status opencl_mem_write_async(ps_backend *be, ps_devmem dst, const void *src, uint64_t bytes) {
  return write_buffer(be, dst, src, bytes, CL_FALSE);
}

/* be->collect_host holding at least `size` bytes (ps_query_collect_size);
 * 0 when it cannot be had: the caller then reads into its own memory
 * (pinned memory is an optimization here, not a need). */
static int collect_staging(ps_backend *be, size_t size) {
  if (size == 0) return 0;
  if (be->collect_host && be->collect_bytes >= size) return 1;
  cl_int err;
  cl_mem buf = clCreateBuffer(be->context, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, size, NULL, &err);
  if (err != CL_SUCCESS) return 0;
  void *host = clEnqueueMapBuffer(be->queue, buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, size, 0, NULL, NULL, &err);
  if (err != CL_SUCCESS || !host) {
    clReleaseMemObject(buf);
    return 0;
  }
  if (be->collect_buf) { /* the earlier collect's reads into it ended with its call */
    clEnqueueUnmapMemObject(be->queue, be->collect_buf, be->collect_host, 0, NULL, NULL);
    clReleaseMemObject(be->collect_buf);
  }
  be->collect_buf = buf;
  be->collect_host = host;
  be->collect_bytes = size;
  return 1;
}

/* ps_backend_ops.query_collect: the status words and the accumulators. By
 * default (query_collect_pinned) both are read without blocking into the
 * pinned staging area, then one clFinish takes them. Otherwise, or where
 * they do not fit it, each is read blocking into the caller's memory, as a
 * call that waits per chunk reads them: the first read waits for the
 * call's kernels, the second finds the queue empty. (Two non-blocking
 * reads into pageable memory and a clFinish cost a query on NVIDIA's
 * driver more than waiting per chunk; into the pinned area they cost about
 * what the blocking reads do: docs/benchmarks.md, runs 36 and 49.) */
static ps_status opencl_query_collect(ps_backend *be, uint32_t n, uint32_t *status, ps_devmem acc, void *acc_host,
                                      uint64_t acc_bytes) {
  if (n > PS_QUERY_STATUS_SLOTS)
    return ps_backend_error(be->ctx, PS_ERR_INTERNAL, "OpenCL: query: %u status pairs to collect", n);
  const size_t status_bytes = (size_t)PS_Q_STATUS_WORDS * n * sizeof(cl_uint);
  const size_t acc_at = (size_t)ps_query_collect_acc_at(n);
  cl_int err = CL_SUCCESS;
  if (ps_context_internal_options(be->ctx)->query_collect_pinned &&
      collect_staging(be, (size_t)ps_query_collect_size(n, acc_bytes))) {
    uint8_t *stage = be->collect_host;
    if (n) err = clEnqueueReadBuffer(be->queue, be->qstatus, CL_FALSE, 0, status_bytes, stage, 0, NULL, NULL);
    if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clEnqueueReadBuffer", "query status");
    if (acc_bytes)
      err = clEnqueueReadBuffer(be->queue, (cl_mem)acc.handle, CL_FALSE, (size_t)acc.offset, (size_t)acc_bytes,
                                stage + acc_at, 0, NULL, NULL);
    if (err != CL_SUCCESS) {
      clFinish(be->queue); /* the status read may still write into the staging area */
      return ps_cl_fail(be->ctx, err, "clEnqueueReadBuffer", "query accumulators");
    }
    err = clFinish(be->queue);
    if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clFinish", "query results");
    if (n) memcpy(status, stage, status_bytes);
    if (acc_bytes) memcpy(acc_host, stage + acc_at, (size_t)acc_bytes);
    return PS_OK;
  }
  if (n) err = clEnqueueReadBuffer(be->queue, be->qstatus, CL_TRUE, 0, status_bytes, status, 0, NULL, NULL);
  if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clEnqueueReadBuffer", "query status");
  if (acc_bytes) return opencl_mem_read(be, acc_host, acc, acc_bytes);
  if (!n) { /* nothing read: still the call's one wait */
    err = clFinish(be->queue);
    if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clFinish", "query results");
  }
  return PS_OK;
}

/* Enqueued without waiting: nothing of the host's is borrowed. */
static ps_status opencl_fill(ps_backend *be, ps_devmem dst, uint8_t value, uint64_t bytes) {
  if (bytes == 0) return PS_OK;
  cl_int err =
      clEnqueueFillBuffer(be->queue, (cl_mem)dst.handle, &value, 1, (size_t)dst.offset, (size_t)bytes, 0, NULL, NULL);
  if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clEnqueueFillBuffer", NULL);
  return PS_OK;
}

/* A chunk of a host-resident column, copied on the copy queue without
 * blocking (src is the column's memory, alive until the column goes, and
 * ps_column_destroy waits for the copies): it waits for the work that read
 * the slot before, and the kernels enqueued on `queue` after the slot's
 * stage_ready wait for it behind a barrier. */
static ps_status opencl_stage_write(ps_backend *be, uint32_t slot, ps_devmem dst, const void *src, uint64_t bytes) {
  cl_int err;
  if (!be->copy_queue) {
    be->copy_queue = clCreateCommandQueue(be->context, be->device, 0, &err);
    if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clCreateCommandQueue", "the copy queue");
  }
  cl_event after = be->stage_free[slot], copied;
  err = clEnqueueWriteBuffer(be->copy_queue, (cl_mem)dst.handle, CL_FALSE, (size_t)dst.offset, (size_t)bytes, src,
                             after ? 1 : 0, after ? &after : NULL, &copied);
  if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clEnqueueWriteBuffer", "a staged chunk");
  if (after) { /* the copy queue is in order: the chunk's later copies come after this one */
    clReleaseEvent(after);
    be->stage_free[slot] = NULL;
  }
  /* the copy queue is in order: this copy's event stands for the slot's earlier ones too */
  if (be->stage_copied[slot]) clReleaseEvent(be->stage_copied[slot]);
  be->stage_copied[slot] = copied;
  err = clFlush(be->copy_queue);
  if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clFlush", "the copy queue");
  return PS_OK;
}

static ps_status opencl_stage_ready(ps_backend *be, uint32_t slot) {
  cl_event copied = be->stage_copied[slot];
  if (!copied) return PS_OK; /* nothing copied since the last wait */
  cl_int err = clEnqueueBarrierWithWaitList(be->queue, 1, &copied, NULL);
  if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clEnqueueBarrierWithWaitList", "after a staged chunk");
  clReleaseEvent(copied);
  be->stage_copied[slot] = NULL;
  return PS_OK;
}

static ps_status opencl_stage_release(ps_backend *be, uint32_t slot) {
  cl_event done;
  cl_int err = clEnqueueMarkerWithWaitList(be->queue, 0, NULL, &done);
  if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clEnqueueMarkerWithWaitList", "after a staged chunk");
  if (be->stage_free[slot]) clReleaseEvent(be->stage_free[slot]);
  be->stage_free[slot] = done;
  /* the copy queue waits on it: the kernels must be on their way */
  err = clFlush(be->queue);
  if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clFlush", NULL);
  return PS_OK;
}

static ps_status opencl_retain_wrapped(ps_backend *be, ps_devmem mem) {
  cl_int err = clRetainMemObject((cl_mem)mem.handle);
  if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clRetainMemObject", "wrapped cl_mem");
  return PS_OK;
}

static void opencl_release_wrapped(ps_backend *be, ps_devmem mem) {
  if (mem.handle) clReleaseMemObject((cl_mem)mem.handle);
}

const ps_backend_ops ps_backend_opencl = {
    .abi_version = PS_BACKEND_ABI_VERSION,
    .name = "opencl",
    .create = opencl_create,
    .destroy = opencl_destroy,
    .device_name = opencl_device_name,
    .max_chunk_rows = opencl_max_chunk_rows,
    .mem_alloc = opencl_mem_alloc,
    .mem_free = opencl_mem_free,
    .mem_write = opencl_mem_write,
    .mem_read = opencl_mem_read,
    .eval = ps_cl_eval,
    .row_ids = ps_cl_row_ids,
    .reduce = ps_cl_reduce,
    .gather = ps_cl_gather,
    .retain_wrapped = opencl_retain_wrapped,
    .release_wrapped = opencl_release_wrapped,
    .like_dict = ps_cl_like_dict,
    .query = ps_cl_query,
    .fill = opencl_fill,
    .stage_write = opencl_stage_write,
    .stage_release = opencl_stage_release,
    .stage_ready = opencl_stage_ready,
    .mem_write_async = opencl_mem_write_async,
    .query_collect = opencl_query_collect,
};
