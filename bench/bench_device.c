/* The only file of the benchmark that talks to CUDA or OpenCL directly, and
 * only for two things the library does not do: a device-to-device copy (the
 * bandwidth every result is compared with) and device-side timing. */
#define _POSIX_C_SOURCE 200809L
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#ifdef PACKSCAN_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "packscan_cuda.h"
#endif
#ifdef PACKSCAN_HAVE_OPENCL
#include <CL/cl.h>

#include "packscan_opencl.h"
#endif

#include "bench.h"

enum { KIND_HOST = 0, KIND_OPENCL = 1, KIND_CUDA = 2 };

struct bench_device {
  int kind;
  double t0;
#ifdef PACKSCAN_HAVE_CUDA
  cudaStream_t stream;
  cudaEvent_t start, stop;
#endif
#ifdef PACKSCAN_HAVE_OPENCL
  cl_context cl_ctx;
  cl_device_id cl_dev;
  cl_command_queue queue;
#endif
};

double bench_now_ms(void) {
  struct timespec ts;
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec * 1e-6;
}

static int cmp_double(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

static double median(double *v, int n) {
  qsort(v, (size_t)n, sizeof *v, cmp_double);
  return n % 2 ? v[n / 2] : 0.5 * (v[n / 2 - 1] + v[n / 2]);
}

ps_status bench_device_open(bench *b) {
  bench_device *d = calloc(1, sizeof *d);
  if (!d) return PS_ERR_OUT_OF_MEMORY;
  b->dev = d;
  d->kind = KIND_HOST;
#ifdef PACKSCAN_HAVE_CUDA
  if (strcmp(b->backend, "cuda") == 0) {
    ps_status st = ps_cuda_get_stream(b->ctx, &d->stream);
    if (st != PS_OK) return st;
    if (cudaEventCreate(&d->start) != cudaSuccess || cudaEventCreate(&d->stop) != cudaSuccess) {
      fprintf(stderr, "bench: cudaEventCreate failed\n");
      return PS_ERR_DEVICE;
    }
    d->kind = KIND_CUDA;
  }
#endif
#ifdef PACKSCAN_HAVE_OPENCL
  if (strcmp(b->backend, "opencl") == 0) {
    ps_status st = ps_opencl_handles(b->ctx, &d->cl_ctx, &d->cl_dev, &d->queue);
    if (st != PS_OK) return st;
    d->kind = KIND_OPENCL;
  }
#endif
  return PS_OK;
}

void *bench_pinned_alloc(bench *b, size_t bytes) {
#ifdef PACKSCAN_HAVE_CUDA
  void *p = NULL;
  if (b->dev->kind == KIND_CUDA && cudaMallocHost(&p, bytes) == cudaSuccess) return p;
#endif
  (void)b, (void)bytes;
  return NULL;
}

void bench_pinned_free(bench *b, void *p) {
#ifdef PACKSCAN_HAVE_CUDA
  if (p && b->dev->kind == KIND_CUDA) cudaFreeHost(p);
#endif
  (void)b, (void)p;
}

void bench_device_close(bench *b) {
  bench_device *d = b->dev;
  if (!d) return;
#ifdef PACKSCAN_HAVE_CUDA
  if (d->kind == KIND_CUDA) {
    cudaEventDestroy(d->start);
    cudaEventDestroy(d->stop);
  }
#endif
  free(d);
  b->dev = NULL;
}

int bench_device_is_gpu(bench *b) {
  bench_device *d = b->dev;
  if (d->kind == KIND_CUDA) return 1;
#ifdef PACKSCAN_HAVE_OPENCL
  if (d->kind == KIND_OPENCL) {
    cl_device_type t = 0;
    if (clGetDeviceInfo(d->cl_dev, CL_DEVICE_TYPE, sizeof t, &t, NULL) != CL_SUCCESS) return 0;
    return (t & CL_DEVICE_TYPE_GPU) != 0;
  }
#endif
  return 0;
}

void bench_timer_start(bench *b) {
  bench_device *d = b->dev;
#ifdef PACKSCAN_HAVE_CUDA
  if (d->kind == KIND_CUDA) {
    /* Recorded on the context's stream: the time between the events is the
     * device time of what the call enqueued, plus any host gaps inside it. */
    cudaEventRecord(d->start, d->stream);
    return;
  }
#endif
#ifdef PACKSCAN_HAVE_OPENCL
  if (d->kind == KIND_OPENCL) clFinish(d->queue); /* nothing earlier leaks into the region */
#endif
  d->t0 = bench_now_ms();
}

double bench_timer_stop_ms(bench *b) {
  bench_device *d = b->dev;
#ifdef PACKSCAN_HAVE_CUDA
  if (d->kind == KIND_CUDA) {
    float ms = 0;
    cudaEventRecord(d->stop, d->stream);
    cudaEventSynchronize(d->stop);
    cudaEventElapsedTime(&ms, d->start, d->stop);
    return ms;
  }
#endif
#ifdef PACKSCAN_HAVE_OPENCL
  if (d->kind == KIND_OPENCL) clFinish(d->queue);
#endif
  return bench_now_ms() - d->t0;
}

double bench_memcpy_gbps(uint64_t bytes, int reps) {
  uint8_t *src = malloc(bytes), *dst = malloc(bytes);
  double gbps = 0;
  if (src && dst && reps > 0) {
    memset(src, 0x5a, bytes); /* fault the pages in outside the timed copies */
    memset(dst, 0xa5, bytes);
    double *t = malloc(sizeof(double) * (size_t)reps);
    if (t) {
      memcpy(dst, src, bytes);
      for (int r = 0; r < reps; r++) {
        double t0 = bench_now_ms();
        memcpy(dst, src, bytes);
        t[r] = bench_now_ms() - t0;
      }
      /* Keep the copies observable so they cannot be dropped. */
      if (dst[bytes / 2] != 0x5a) fprintf(stderr, "bench: memcpy check failed\n");
      gbps = 2.0 * (double)bytes / (median(t, reps) * 1e6);
      free(t);
    }
  }
  free(src);
  free(dst);
  return gbps;
}

ps_status bench_copy_gbps(bench *b, uint64_t bytes, int reps, double *gbps) {
  bench_device *d = b->dev;
  *gbps = 0;
  if (d->kind == KIND_HOST) {
    *gbps = bench_memcpy_gbps(bytes, reps);
    return PS_OK;
  }
  ps_buffer *src = NULL, *dst = NULL;
  ps_status st = ps_buffer_create(b->ctx, bytes, &src);
  if (st == PS_OK) st = ps_buffer_create(b->ctx, bytes, &dst);
  double *t = calloc((size_t)reps + 2, sizeof(double));
  if (st == PS_OK && !t) st = PS_ERR_OUT_OF_MEMORY;
  /* Real data in the source: on a CPU device (PoCL) pages never written
   * would all read the one zero page, and the copy would look far faster
   * than memory. */
  const uint64_t chunk = UINT64_C(64) << 20;
  uint8_t *stage = st == PS_OK ? malloc((size_t)chunk) : NULL;
  if (st == PS_OK && !stage) st = PS_ERR_OUT_OF_MEMORY;
  uint64_t rng = 12345;
  for (uint64_t off = 0; st == PS_OK && off < bytes; off += chunk) {
    uint64_t len = bytes - off < chunk ? bytes - off : chunk;
    for (uint64_t i = 0; i + 8 <= len; i += 8) {
      uint64_t r = bench_rand(&rng);
      memcpy(stage + i, &r, 8);
    }
    st = ps_buffer_write(b->ctx, src, off, stage, len);
    if (st == PS_OK) st = ps_buffer_write(b->ctx, dst, off, stage, len);
  }
  free(stage);
#ifdef PACKSCAN_HAVE_CUDA
  if (st == PS_OK && d->kind == KIND_CUDA) {
    void *ps = NULL, *pd = NULL;
    st = ps_buffer_cuda_ptr(src, &ps);
    if (st == PS_OK) st = ps_buffer_cuda_ptr(dst, &pd);
    for (int r = -2; st == PS_OK && r < reps; r++) { /* two warm-up copies */
      bench_timer_start(b);
      if (cudaMemcpyAsync(pd, ps, (size_t)bytes, cudaMemcpyDeviceToDevice, d->stream) != cudaSuccess)
        st = PS_ERR_DEVICE;
      double ms = bench_timer_stop_ms(b);
      if (r >= 0) t[r] = ms;
    }
  }
#endif
#ifdef PACKSCAN_HAVE_OPENCL
  if (st == PS_OK && d->kind == KIND_OPENCL) {
    cl_mem ms_ = NULL, md = NULL;
    st = ps_buffer_opencl_mem(src, &ms_);
    if (st == PS_OK) st = ps_buffer_opencl_mem(dst, &md);
    for (int r = -2; st == PS_OK && r < reps; r++) {
      bench_timer_start(b);
      if (clEnqueueCopyBuffer(d->queue, ms_, md, 0, 0, (size_t)bytes, 0, NULL, NULL) != CL_SUCCESS)
        st = PS_ERR_DEVICE;
      double ms = bench_timer_stop_ms(b);
      if (r >= 0) t[r] = ms;
    }
  }
#endif
  if (st == PS_OK) *gbps = 2.0 * (double)bytes / (median(t, reps) * 1e6);
  free(t);
  ps_buffer_destroy(src);
  ps_buffer_destroy(dst);
  return st;
}
