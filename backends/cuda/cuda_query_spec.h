/* Specialized kernels on CUDA (cuda_query_spec.c), compiled by NVRTC and
 * cached per context: pass 1 of kernels_shared/ps_query_kernels.h for one
 * query's constants, and the general per-word filter (kernels_shared/
 * ps_where.h) for one program shape (core/query_spec.h writes both texts). */
#ifndef PS_CUDA_QUERY_SPEC_H
#define PS_CUDA_QUERY_SPEC_H

#include <stddef.h>

#include "backend.h"

/* What a specialization text is compiled into. */
typedef enum ps_cuda_spec_kind {
  PS_CUDA_SPEC_QUERY = 0, /* ps_query_spec_write's text: ps_cuda_launch_query's pass 1 */
  PS_CUDA_SPEC_WHERE = 1, /* ps_where_spec_write's text: ps_cuda_launch_eval's per-word kernel */
  PS_CUDA_SPEC_KINDS = 2
} ps_cuda_spec_kind;

/* Compiles specialization text `spec` of `kind` to a CUBIN for sm_<major><minor>
 * with NVRTC; needs no device. On success *cubin (ps_host_alloc'd in ctx,
 * the caller frees it) and *size. On failure PS_ERR_INTERNAL with NVRTC's
 * error and as much of its log as fits in ctx's message. */
ps_status ps_cuda_spec_compile(ps_context *ctx, ps_cuda_spec_kind kind, const char *spec, int major, int minor,
                               void **cubin, size_t *size);

/* The specialized kernel of `kind` for `spec` on be's device (its device
 * current), a cudaKernel_t for ps_cuda_launch_query or ps_cuda_launch_eval,
 * compiled (or read from the disk
 * cache, core/kcache.h) and loaded on first use and cached
 * (PS_CUDA_SPEC_SLOTS, least recently used first out). When the
 * compile or the load fails: with `strict`, that error; else PS_OK with
 * *kernel NULL (the precompiled kernel runs; the failure's text stays in
 * the context's message), and the text is not tried again. With
 * `background` (ps_query_spec_background), a kernel that is neither in
 * memory nor on disk is compiled by the kernel cache's worker thread
 * (core/kcache.h): PS_OK with *kernel NULL until a later call finds the
 * compile done and loads it; a compile that failed there is not tried
 * again either, and leaves no message. */
ps_status ps_cuda_spec_kernel(ps_backend *be, ps_cuda_spec_kind kind, const char *spec, int strict, int background,
                              const void **kernel);

/* Unloads every cached kernel (be's device current; nothing in flight). */
void ps_cuda_spec_release(ps_backend *be);

#endif /* PS_CUDA_QUERY_SPEC_H */
