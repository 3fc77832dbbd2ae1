// cu_call_costs: cl_call_costs.c's shapes through the CUDA runtime on the
// same GPU, so that the two drivers' fixed costs per command stand side by
// side (a question about the drivers, not about packscan). Each shape runs
// on one stream and ends with the stream idle (cudaStreamSynchronize, or the
// blocking copy's own wait):
//
//   cu_call_costs [REPS]
//
// prints the median and minimum microseconds of each. On the GPU machine:
//   nvcc -O2 -o /tmp/cuc ci/probes/cu_call_costs.cu && /tmp/cuc
// What it printed is in docs/gpu-runs.md.
#include <cuda_runtime.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

struct block {
  unsigned words[38]; // 152 bytes, as a launch block
};

__global__ void empty(unsigned *) {}
__global__ void status(const block *b, unsigned *s) {
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicOr(&s[0], b->words[0]);
}
__global__ void status_by_value(block b, unsigned *s) {
  if (blockIdx.x == 0 && threadIdx.x == 0) atomicOr(&s[0], b.words[0]);
}

static double now_us() {
  timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e6 + t.tv_nsec / 1e3;
}

static int cmp(const void *a, const void *b) {
  const double x = *(const double *)a, y = *(const double *)b;
  return x < y ? -1 : x > y;
}

#define CHECK(x)                                                                         \
  do {                                                                                   \
    cudaError_t e_ = (x);                                                                \
    if (e_ != cudaSuccess) {                                                             \
      fprintf(stderr, "%s:%d: %s = %s\n", __FILE__, __LINE__, #x, cudaGetErrorString(e_)); \
      exit(1);                                                                           \
    }                                                                                    \
  } while (0)

enum { EMPTY, MEMSET, WRITE, READ, CALL, CALL_MAPPED, CALL_BY_VALUE, SHAPES };
static const char *NAMES[SHAPES] = {
    "empty kernel + sync",
    "memset 8 B + sync",
    "copy 152 B to the device (async, pageable) + sync",
    "copy 8 B to the host (blocking)",
    "copy + memset + kernel + blocking copy back (a filter's call)",
    "copy + memset + kernel + sync, status in mapped host memory",
    "memset + kernel (block by value) + blocking copy back",
};

struct env {
  cudaStream_t s;
  unsigned *dev, *mapped, *mapped_dev;
  block *blk;
  block host;
  unsigned back[2];
};

static void shape(env *v, int s) {
  switch (s) {
    case EMPTY:
      empty<<<1, 1, 0, v->s>>>(v->dev);
      CHECK(cudaStreamSynchronize(v->s));
      break;
    case MEMSET:
      CHECK(cudaMemsetAsync(v->dev, 0, 8, v->s));
      CHECK(cudaStreamSynchronize(v->s));
      break;
    case WRITE:
      CHECK(cudaMemcpyAsync(v->blk, &v->host, sizeof v->host, cudaMemcpyHostToDevice, v->s));
      CHECK(cudaStreamSynchronize(v->s));
      break;
    case READ:
      CHECK(cudaMemcpyAsync(v->back, v->dev, 8, cudaMemcpyDeviceToHost, v->s));
      CHECK(cudaStreamSynchronize(v->s));
      break;
    case CALL:
      CHECK(cudaMemcpyAsync(v->blk, &v->host, sizeof v->host, cudaMemcpyHostToDevice, v->s));
      CHECK(cudaMemsetAsync(v->dev, 0, 8, v->s));
      status<<<1, 32, 0, v->s>>>(v->blk, v->dev);
      CHECK(cudaMemcpyAsync(v->back, v->dev, 8, cudaMemcpyDeviceToHost, v->s));
      CHECK(cudaStreamSynchronize(v->s));
      break;
    case CALL_MAPPED:
      CHECK(cudaMemcpyAsync(v->blk, &v->host, sizeof v->host, cudaMemcpyHostToDevice, v->s));
      CHECK(cudaMemsetAsync(v->mapped_dev, 0, 8, v->s));
      status<<<1, 32, 0, v->s>>>(v->blk, v->mapped_dev);
      CHECK(cudaStreamSynchronize(v->s));
      v->back[0] = v->mapped[0];
      break;
    case CALL_BY_VALUE:
      CHECK(cudaMemsetAsync(v->dev, 0, 8, v->s));
      status_by_value<<<1, 32, 0, v->s>>>(v->host, v->dev);
      CHECK(cudaMemcpyAsync(v->back, v->dev, 8, cudaMemcpyDeviceToHost, v->s));
      CHECK(cudaStreamSynchronize(v->s));
      break;
  }
}

int main(int argc, char **argv) {
  const int reps = argc > 1 ? atoi(argv[1]) : 2000;
  if (reps < 1) return 1;
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, 0));
  int driver = 0, runtime = 0;
  CHECK(cudaDriverGetVersion(&driver));
  CHECK(cudaRuntimeGetVersion(&runtime));
  printf("device %s, driver %d, runtime %d, %d reps\n", prop.name, driver, runtime, reps);
  env v;
  memset(&v, 0, sizeof v);
  CHECK(cudaStreamCreateWithFlags(&v.s, cudaStreamNonBlocking));
  CHECK(cudaMalloc(&v.dev, 4096));
  CHECK(cudaMalloc(&v.blk, sizeof(block)));
  CHECK(cudaHostAlloc(&v.mapped, 4096, cudaHostAllocMapped));
  CHECK(cudaHostGetDevicePointer(&v.mapped_dev, v.mapped, 0));
  double *t = (double *)malloc(sizeof(double) * (size_t)reps);
  if (!t) return 1;
  for (int s = 0; s < SHAPES; s++) {
    for (int i = 0; i < 50; i++) shape(&v, s); // warm-up
    for (int i = 0; i < reps; i++) {
      const double t0 = now_us();
      shape(&v, s);
      t[i] = now_us() - t0;
    }
    qsort(t, (size_t)reps, sizeof *t, cmp);
    printf("%-66s median %7.1f us  min %7.1f us\n", NAMES[s], t[reps / 2], t[0]);
  }
  free(t);
  CHECK(cudaFreeHost(v.mapped));
  CHECK(cudaFree(v.blk));
  CHECK(cudaFree(v.dev));
  CHECK(cudaStreamDestroy(v.s));
  return 0;
}
