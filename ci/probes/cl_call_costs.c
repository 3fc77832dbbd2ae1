/* cl_call_costs: what one OpenCL command costs the host on a driver, for a
 * question about the driver, not about packscan. An after-filter call on a
 * small input is nearly all fixed cost, and on NVIDIA's OpenCL that cost
 * was 20-45 us a call more than CUDA's (docs/benchmarks.md, run 40). A call
 * there is a few commands: write a launch block, fill a status word, launch,
 * read the status back blocking. This times each kind of command alone and
 * the shapes the library's calls take, on an in-order queue, each followed
 * by clFinish so that every figure is enqueue-to-idle:
 *
 *   cl_call_costs [PLATFORM_SUBSTRING] [REPS]
 *
 * prints the median and minimum microseconds of each. On the GPU machine:
 *   cc -O2 -o /tmp/clc ci/probes/cl_call_costs.c -lOpenCL && /tmp/clc NVIDIA
 * What it printed is in docs/gpu-runs.md. */
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static const char *SRC =
    "__kernel void empty(__global uint *s) { }\n"
    "__kernel void status(__constant uint *blk, __global uint *s) {\n"
    "  if (get_global_id(0) == 0) atomic_or(&s[0], blk[0]); }\n";

static double now_us(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#define CHECK(x)                                                      \
  do {                                                                \
    cl_int e_ = (x);                                                  \
    if (e_ != CL_SUCCESS) {                                           \
      fprintf(stderr, "%s:%d: %s = %d\n", __FILE__, __LINE__, #x, e_); \
      exit(1);                                                        \
    }                                                                 \
  } while (0)

typedef struct {
  cl_context ctx;
  cl_command_queue q;
  cl_kernel empty, status;
  cl_mem dev, blk, pinned;
  cl_uint *mapped;
  unsigned char host[4096];
} env;

/* The shapes timed: each runs one "call" and leaves the queue idle. */
enum { EMPTY, FILL, WRITE, READ, CREATE, SETARGS, CALL, CALL_MAPPED, CALL_NO_FILL, SHAPES };
static const char *NAMES[SHAPES] = {
    "empty kernel + clFinish",
    "fill 8 B + clFinish",
    "write 152 B (non-blocking) + clFinish",
    "read 8 B (blocking)",
    "create 4 KB buffer from host + release",
    "40 clSetKernelArg",
    "write + fill + kernel + blocking read (a filter's call)",
    "write + fill + kernel + clFinish, status in mapped host memory",
    "write + kernel + blocking read (no fill)",
};

static void shape(env *v, int s) {
  cl_int err;
  size_t one = 1;
  const cl_uint zero = 0;
  switch (s) {
    case EMPTY:
      CHECK(clEnqueueNDRangeKernel(v->q, v->empty, 1, NULL, &one, NULL, 0, NULL, NULL));
      CHECK(clFinish(v->q));
      break;
    case FILL:
      CHECK(clEnqueueFillBuffer(v->q, v->dev, &zero, 4, 0, 8, 0, NULL, NULL));
      CHECK(clFinish(v->q));
      break;
    case WRITE:
      CHECK(clEnqueueWriteBuffer(v->q, v->blk, CL_FALSE, 0, 152, v->host, 0, NULL, NULL));
      CHECK(clFinish(v->q));
      break;
    case READ:
      CHECK(clEnqueueReadBuffer(v->q, v->dev, CL_TRUE, 0, 8, v->host, 0, NULL, NULL));
      break;
    case CREATE: {
      cl_mem m = clCreateBuffer(v->ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, 4096, v->host, &err);
      CHECK(err);
      CHECK(clSetKernelArg(v->status, 0, sizeof m, &m));
      CHECK(clEnqueueNDRangeKernel(v->q, v->status, 1, NULL, &one, NULL, 0, NULL, NULL));
      CHECK(clReleaseMemObject(m));
      CHECK(clFinish(v->q));
      CHECK(clSetKernelArg(v->status, 0, sizeof v->blk, &v->blk));
      break;
    }
    case SETARGS:
      for (int i = 0; i < 20; i++) {
        CHECK(clSetKernelArg(v->status, 0, sizeof v->blk, &v->blk));
        CHECK(clSetKernelArg(v->status, 1, sizeof v->dev, &v->dev));
      }
      break;
    case CALL:
    case CALL_NO_FILL:
      CHECK(clEnqueueWriteBuffer(v->q, v->blk, CL_FALSE, 0, 152, v->host, 0, NULL, NULL));
      if (s == CALL) CHECK(clEnqueueFillBuffer(v->q, v->dev, &zero, 4, 0, 8, 0, NULL, NULL));
      CHECK(clEnqueueNDRangeKernel(v->q, v->status, 1, NULL, &one, NULL, 0, NULL, NULL));
      CHECK(clEnqueueReadBuffer(v->q, v->dev, CL_TRUE, 0, 8, v->host + 512, 0, NULL, NULL));
      break;
    case CALL_MAPPED:
      CHECK(clSetKernelArg(v->status, 1, sizeof v->pinned, &v->pinned));
      CHECK(clEnqueueWriteBuffer(v->q, v->blk, CL_FALSE, 0, 152, v->host, 0, NULL, NULL));
      CHECK(clEnqueueFillBuffer(v->q, v->pinned, &zero, 4, 0, 8, 0, NULL, NULL));
      CHECK(clEnqueueNDRangeKernel(v->q, v->status, 1, NULL, &one, NULL, 0, NULL, NULL));
      CHECK(clFinish(v->q));
      v->host[600] = (unsigned char)v->mapped[0];
      CHECK(clSetKernelArg(v->status, 1, sizeof v->dev, &v->dev));
      break;
  }
}

int main(int argc, char **argv) {
  const char *want = argc > 1 ? argv[1] : "";
  const int reps = argc > 2 ? atoi(argv[2]) : 2000;
  cl_platform_id ps[16];
  cl_uint np = 0;
  CHECK(clGetPlatformIDs(16, ps, &np));
  cl_platform_id p = NULL;
  char name[256] = "";
  for (cl_uint i = 0; i < np && !p; i++) {
    CHECK(clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL));
    if (strstr(name, want)) p = ps[i];
  }
  if (!p || reps < 1) {
    fprintf(stderr, "no platform matching '%s' (or REPS < 1)\n", want);
    return 1;
  }
  cl_device_id d;
  CHECK(clGetDeviceIDs(p, CL_DEVICE_TYPE_ALL, 1, &d, NULL));
  char dname[256] = "", dver[256] = "";
  CHECK(clGetDeviceInfo(d, CL_DEVICE_NAME, sizeof dname, dname, NULL));
  CHECK(clGetDeviceInfo(d, CL_DRIVER_VERSION, sizeof dver, dver, NULL));
  printf("platform %s, device %s, driver %s, %d reps\n", name, dname, dver, reps);

  env v;
  memset(&v, 0, sizeof v);
  cl_int err;
  v.ctx = clCreateContext(NULL, 1, &d, NULL, NULL, &err);
  CHECK(err);
  v.q = clCreateCommandQueue(v.ctx, d, 0, &err);
  CHECK(err);
  cl_program prog = clCreateProgramWithSource(v.ctx, 1, &SRC, NULL, &err);
  CHECK(err);
  CHECK(clBuildProgram(prog, 1, &d, "", NULL, NULL));
  v.empty = clCreateKernel(prog, "empty", &err);
  CHECK(err);
  v.status = clCreateKernel(prog, "status", &err);
  CHECK(err);
  v.dev = clCreateBuffer(v.ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
  CHECK(err);
  v.blk = clCreateBuffer(v.ctx, CL_MEM_READ_ONLY, 4096, NULL, &err);
  CHECK(err);
  v.pinned = clCreateBuffer(v.ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, 4096, NULL, &err);
  CHECK(err);
  v.mapped = clEnqueueMapBuffer(v.q, v.pinned, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, 4096, 0, NULL, NULL, &err);
  CHECK(err);
  CHECK(clSetKernelArg(v.empty, 0, sizeof v.dev, &v.dev));
  CHECK(clSetKernelArg(v.status, 0, sizeof v.blk, &v.blk));
  CHECK(clSetKernelArg(v.status, 1, sizeof v.dev, &v.dev));

  double *t = malloc(sizeof(double) * (size_t)reps);
  if (!t) return 1;
  for (int s = 0; s < SHAPES; s++) {
    for (int i = 0; i < 50; i++) shape(&v, s); /* warm-up */
    for (int i = 0; i < reps; i++) {
      const double t0 = now_us();
      shape(&v, s);
      t[i] = now_us() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp);
    printf("%-66s median %7.1f us  min %7.1f us\n", NAMES[s], t[reps / 2], t[0]);
  }
  free(t);
  CHECK(clEnqueueUnmapMemObject(v.q, v.pinned, v.mapped, 0, NULL, NULL));
  CHECK(clFinish(v.q));
  clReleaseMemObject(v.pinned);
  clReleaseMemObject(v.blk);
  clReleaseMemObject(v.dev);
  clReleaseKernel(v.status);
  clReleaseKernel(v.empty);
  clReleaseProgram(prog);
  clReleaseCommandQueue(v.q);
  clReleaseContext(v.ctx);
  return 0;
}
