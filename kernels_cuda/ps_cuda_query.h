/*
 * The CUDA launcher of queries (query.cu): plain C, included by
 * backends/cuda. The kernels are kernels_shared/ps_query_kernels.h, the same
 * source the OpenCL backend compiles. NVRTC reads the parameters too (a
 * specialized pass 1, query_spec.cuh), so the launcher's part is hidden from
 * it.
 */
#ifndef PS_CUDA_QUERY_H
#define PS_CUDA_QUERY_H

#if !defined(__CUDACC_RTC__)
#include <stdint.h>

#include <cuda_runtime_api.h>
#endif

#include "ps_query_kernels.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Threads per block of both query kernels. */
#define PS_CUDA_QUERY_BLOCK 256

/* Pass 1's parameters, passed by value as a __grid_constant__ kernel
 * parameter (about 8 KB: sm_70 and later with CUDA 12.1 or newer take up to
 * 32 KB), so the programs are read from the constant bank. */
typedef struct ps_cuda_query_params {
  ps_vprog prog;
  ps_program where_prog; /* used when launch.has_where is 1 */
  ps_qlaunch launch;
  ps_q_bufs bufs;   /* at the chunk start */
  ps_qacc *part;    /* parts * n_acc partial accumulators (see ps_cuda_launch_query) */
  ps_u32 *status;   /* PS_Q_STATUS_WORDS words, 0xFFFFFFFF before the launch */
} ps_cuda_query_params;

#if !defined(__CUDACC_RTC__)

/* Blocks of pass 1 that fill the current device (SMs x resident blocks);
 * spec: a specialized pass 1 (a cudaKernel_t, query_spec.cuh's
 * ps_query_partials_spec), NULL for the precompiled one. */
cudaError_t ps_cuda_query_grid(const void *spec, unsigned *blocks);

/* Enqueues pass 1 (spec, or the precompiled kernel when NULL) over
 * p->launch.items work-items (in blocks of PS_CUDA_QUERY_BLOCK), then pass 2
 * merging the `parts` partials of each of the n_acc accumulators into acc
 * (none for a hashed GROUP BY plan's keys pass: n_acc 0; flat: one thread
 * per accumulator, ps_query_merge_flat), on stream. Returns the launch error (cudaGetLastError),
 * cudaSuccess if both launches were queued. */
cudaError_t ps_cuda_launch_query(const void *spec, const ps_cuda_query_params *p, uint64_t n_acc, uint64_t parts,
                                 int flat, ps_qacc *acc, cudaStream_t stream);

/* Pass 1 precompiled for queries whose columns are all FOR (query_for.cu):
 * a spec for ps_cuda_query_grid and ps_cuda_launch_query. */
const void *ps_cuda_query_partials_for(void);
#endif

#ifdef __cplusplus
}
#endif

#endif /* PS_CUDA_QUERY_H */
