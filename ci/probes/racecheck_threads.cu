// racecheck_threads: a minimal program for a question about compute-sanitizer,
// not about packscan. threads.cuda creates contexts and launches kernels from
// 16 host threads at once; racecheck reported one hazard there together with
// "Internal Sanitizer Error: Detected a failure to track a kernel launch".
// This program does only that, with kernels that are race-free by
// construction (a shared-memory block reduction with a barrier between every
// write and read): THREADS host threads leave a barrier together and each
// makes its first launches of KERNELS distinct kernels (each one's first
// launch is also its module's lazy load under CUDA_MODULE_LOADING=LAZY, the
// default), on its own stream, and checks every sum.
//
//   racecheck_threads THREADS ROUNDS
//
// On the GPU machine:
//   nvcc -arch=sm_90 -O2 -o /tmp/rc ci/probes/racecheck_threads.cu -lpthread
//   for m in LAZY EAGER; do for t in 1 16; do CUDA_MODULE_LOADING=$m timeout 280 \
//     compute-sanitizer --tool racecheck --error-exitcode 86 /tmp/rc $t 2; done; done
// A hazard or tracking error here is the tool's, since these kernels have
// none. What it printed on an H200 is in docs/gpu-runs.md.
#include <cuda_runtime.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>

enum { BLOCK = 256, N = 1 << 16 };

template <int K>
__global__ void block_sums(const unsigned *in, unsigned long long *out) {
  __shared__ unsigned s[BLOCK];
  unsigned i = blockIdx.x * BLOCK + threadIdx.x;
  s[threadIdx.x] = in[i] * (K + 1);
  __syncthreads();
  for (unsigned half = BLOCK / 2; half > 0; half /= 2) {
    if (threadIdx.x < half) s[threadIdx.x] += s[threadIdx.x + half];
    __syncthreads();
  }
  if (threadIdx.x == 0) atomicAdd(out, (unsigned long long)s[0]);
}

typedef void (*kernel_fn)(const unsigned *, unsigned long long *);
static const kernel_fn kernels[] = {block_sums<0>, block_sums<1>, block_sums<2>, block_sums<3>,
                                    block_sums<4>, block_sums<5>, block_sums<6>, block_sums<7>};
enum { KERNELS = sizeof kernels / sizeof *kernels };

static pthread_barrier_t start;
static int rounds;

static void *work(void *arg) {
  long id = (long)arg;
  int bad = 0;
  cudaStream_t st;
  unsigned *in = NULL;
  unsigned long long *out = NULL, got = 0;
  unsigned *h = (unsigned *)malloc(N * sizeof *h);
  unsigned long long base = 0;
  for (unsigned i = 0; i < N; i++) base += h[i] = (unsigned)((i * 2654435761u + (unsigned)id) & 0xff);
  pthread_barrier_wait(&start);
  if (cudaStreamCreateWithFlags(&st, cudaStreamNonBlocking) != cudaSuccess ||
      cudaMalloc(&in, N * sizeof *in) != cudaSuccess || cudaMalloc(&out, sizeof *out) != cudaSuccess ||
      cudaMemcpyAsync(in, h, N * sizeof *h, cudaMemcpyHostToDevice, st) != cudaSuccess) {
    fprintf(stderr, "thread %ld: setup failed: %s\n", id, cudaGetErrorString(cudaGetLastError()));
    return (void *)1;
  }
  for (int r = 0; r < rounds; r++)
    for (int k = 0; k < KERNELS; k++) {
      cudaMemsetAsync(out, 0, sizeof *out, st);
      kernels[k]<<<N / BLOCK, BLOCK, 0, st>>>(in, out);
      cudaError_t e = cudaGetLastError();
      if (e == cudaSuccess) e = cudaMemcpyAsync(&got, out, sizeof got, cudaMemcpyDeviceToHost, st);
      if (e == cudaSuccess) e = cudaStreamSynchronize(st);
      if (e != cudaSuccess || got != base * (k + 1)) {
        fprintf(stderr, "thread %ld kernel %d: %s, sum %llu, expected %llu\n", id, k, cudaGetErrorString(e), got,
                base * (k + 1));
        bad = 1;
      }
    }
  cudaFree(in);
  cudaFree(out);
  cudaStreamDestroy(st);
  free(h);
  return (void *)(long)bad;
}

int main(int argc, char **argv) {
  int threads = argc > 1 ? atoi(argv[1]) : 16;
  rounds = argc > 2 ? atoi(argv[2]) : 2;
  if (threads < 1 || threads > 256 || rounds < 1) {
    fprintf(stderr, "usage: %s THREADS(1..256) ROUNDS\n", argv[0]);
    return 2;
  }
  pthread_t *t = (pthread_t *)malloc(threads * sizeof *t);
  pthread_barrier_init(&start, NULL, (unsigned)threads);
  for (long i = 0; i < threads; i++) pthread_create(&t[i], NULL, work, (void *)i);
  int bad = 0;
  for (int i = 0; i < threads; i++) {
    void *r;
    pthread_join(t[i], &r);
    bad |= r != NULL;
  }
  printf("racecheck_threads: %d threads x %d rounds x %d kernels: %s\n", threads, rounds, KERNELS,
         bad ? "WRONG SUMS" : "all sums right");
  return bad;
}
