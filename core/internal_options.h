/*
 * Internal options of a context: switches that let the tests reach code paths
 * the defaults would not take on the machine at hand (the general kernels on
 * programs a specialized kernel would take, OpenCL's GPU variants on a CPU
 * device, the fallback after a launch the device refuses). Not public API:
 * users never need them, and the library reads no environment variable; a
 * test sets them on a context it created (tests/harness.c takes them from its
 * own PACKSCAN_TEST_OPTIONS).
 *
 * Every field's default is the library's normal behaviour. Backends read the
 * context's options when they choose a path, so a change applies to the calls
 * made after it; a program or lowered expression that was built before it
 * keeps what it was built with (results never depend on these options).
 */
#ifndef PS_INTERNAL_OPTIONS_H
#define PS_INTERNAL_OPTIONS_H

#include "packscan.h"

/* Values of the tri-state fields. */
#define PS_OPT_AUTO (-1)
#define PS_OPT_OFF 0
#define PS_OPT_ON 1

/* opencl_words: which programs words.cl (the filter specialized per
 * program shape) runs. The name "staged" is kept for the tests' option
 * strings. */
#define PS_OPT_WORDS_AUTO 0    /* those the device runs best there: every program (little-endian devices) */
#define PS_OPT_WORDS_STAGED 1  /* every program, on every device: today the same as AUTO */
#define PS_OPT_WORDS_REFUSED 2 /* every launch treated as refused for its resources: filter.cl takes over */

/* opencl_query: a query's specialized kernel on OpenCL (the query_specialize
 * builds), and the fallback to the generic query kernel when the device
 * cannot run it. */
#define PS_OPT_QUERY_AUTO 0        /* built and launched as they are */
#define PS_OPT_QUERY_REFUSED 1     /* built, every launch treated as refused for its resources */
#define PS_OPT_QUERY_UNBUILDABLE 2 /* every build fails, as a compiler error would (a line it rejects is added) */

typedef struct ps_internal_options {
  /* 1 (default): programs that a specialized kernel handles take it. 0: every
   * filter runs the general kernel (CUDA: not the single-range, SET or
   * range-tree kernels, and ps_filter_row_ids_device through a bitmap instead
   * of the fused pass; OpenCL: not range.cl), so the differential tests cover
   * the general kernels on every program. */
  int fast_paths;
  /* OpenCL: filters compiled for their program's shape (words.cl, or
   * filter.cl with a shape table). PS_OPT_AUTO (default): for chunks of
   * PS_CL_JIT_MIN_ROWS rows and more; PS_OPT_OFF never; PS_OPT_ON always. */
  int opencl_jit;
  /* OpenCL: PS_OPT_WORDS_* (default PS_OPT_WORDS_AUTO). */
  int opencl_words;
  /* OpenCL: where LIKE is matched against a dictionary. PS_OPT_AUTO
   * (default): on the device unless it is a CPU, where the host's byte
   * search is faster than the NFA kernel; PS_OPT_OFF the host; PS_OPT_ON the
   * device. */
  int opencl_like;
  /* OpenCL row ids: PS_OPT_AUTO (default) by runs of words per work-item
   * on a CPU device and by work-groups elsewhere; PS_OPT_OFF by work-groups
   * (select.cl ps_count_words / ps_write_ids); PS_OPT_ON by runs
   * (ps_count_runs / ps_write_runs). */
  int opencl_ids_runs;
  /* OpenCL row ids: the selection words a work-item takes. 0 (default): by
   * runs PS_CL_IDS_RUN_WORDS (a few KB of bitmap, sized for a CPU's
   * threads), by work-groups up to PS_CL_IDS_GROUP_ROUNDS rounds of one word
   * a work-item (each round's ids staged in local memory and stored
   * coalesced, one count and offset for all the rounds) while the chunk
   * fills two groups per compute unit. 1..4096: that many words (runs, or
   * rounds), so that a benchmark can try both forms' sizes on a GPU and
   * tests reach chunks split into many runs. */
  int opencl_ids_run_words;
  /* OpenCL row ids by work-groups: 0 (default) the write pass sums the
   * counts before each group where the groups are few
   * (PS_CL_IDS_SUM_PER_ITEM), else a launch of ps_scan_counts scans them; 1
   * always the scan (for tests and before/after runs). */
  int opencl_ids_scan;
  /* OpenCL reductions (ps_aggregate) of FOR columns of 1..32 bits:
   * PS_OPT_AUTO (default) by tiles staged in local memory
   * (select.cl ps_reduce_tiles) on devices other than CPUs and by one
   * work-item per word (ps_reduce_words) on a CPU; PS_OPT_OFF always by
   * words; PS_OPT_ON always by tiles. */
  int opencl_reduce_tiles;
  /* OpenCL gathers: PS_OPT_AUTO (default) by a work-item per id
   * (select.cl ps_gather_ids) on devices other than CPUs and by 32 ids per
   * work-item, in order (ps_gather_values), on a CPU; PS_OPT_OFF always by
   * 32 ids; PS_OPT_ON always by id. */
  int opencl_gather_ids;
  /* Queries: kernels compiled for the query's constants (CUDA through
   * NVRTC, OpenCL per query; core/query_spec.h). PS_OPT_AUTO (default): for
   * calls that read PS_QUERY_SPEC_MIN_ROWS rows and more in all
   * (PS_QUERY_SPEC_MIN_ROWS_GPU_GROUPED for a GROUP BY on a GPU), however
   * they are chunked; PS_OPT_OFF never (the
   * generic kernel); PS_OPT_ON always, and on CUDA a failed compile is an
   * error instead of a silent fall back to the generic kernel, so tests
   * catch a source that does not compile. */
  int query_specialize;
  /* OpenCL queries: PS_OPT_QUERY_* (default PS_OPT_QUERY_AUTO). A launch of
   * a specialized kernel that the device refuses (CL_OUT_OF_RESOURCES or
   * CL_INVALID_WORK_GROUP_SIZE at the enqueue, which NVIDIA's driver returns
   * for some kernels), or a build that fails, falls back to the generic
   * query kernel with the same answer; a failed build stays an error under
   * query_specialize = PS_OPT_ON, as on CUDA. */
  int opencl_query;
  /* Queries with hashed GROUP BY plans: 0 (default) sizes the keys pass's
   * first table from the rows; 6..30: 2^query_group_slots slots, so that
   * tests reach its growth (and the rerun) with few keys. */
  int query_group_slots;
  /* Queries: 0 (default) a call waits for the device once, where the
   * backend can (ps_backend_ops.query_collect); 1: each chunk's status is
   * read back in its own call, as on a backend without it, so that tests
   * cover both and a benchmark can compare them. */
  int query_wait_per_chunk;
  /* CUDA and OpenCL: 1 (default) a query's collect (one wait per call)
   * copies the status words and accumulators into pinned staging, both
   * copies queued behind the kernels and taken with one wait, where they fit
   * it; 0 copies them into the caller's pageable memory, each copy its own
   * wait, as before, so that tests cover both and a benchmark can compare
   * them. */
  int query_collect_pinned;
  /* Specialized GROUP BY queries in registers (PS_QMODE_REGS):
   * PS_OPT_AUTO (default) the backend's choice (ps_query_lanes: CUDA a
   * work-item per row of a word, OpenCL whole words per work-item);
   * PS_OPT_OFF always by words; PS_OPT_ON always by rows. */
  int query_lanes;
  /* Cache hints (PS_QS_PREFETCH): in specialized queries without GROUP BY
   * (PS_QMODE_PRIVATE), the next word's WHERE columns asked into the cache
   * while the current one is evaluated; in GROUP BY in registers by rows, a
   * selected word's key and value columns asked into L2 when the WHERE pass
   * selects it, before a team reads its rows. PS_OPT_AUTO (default) the
   * second only (measured faster for TPC-H Q1; the first was slower for
   * SSB and Q6: docs/benchmarks.md), PS_OPT_OFF neither, PS_OPT_ON both. */
  int query_prefetch;
  /* Specialized GROUP BY queries in registers on CUDA: 1 (default) a warp
   * adds its 32 work-items' registers together before its first work-item
   * merges them into the work-group's table (PS_QS_WARP_MERGE); 0 every
   * work-item merges its own, as OpenCL does. */
  int query_warp_merge;
  /* OpenCL parameter blocks (launch blocks, programs, patterns: ps_cl_upload):
   * 1 (default) written into buffers the backend keeps, one per argument
   * slot; 0 each in a new buffer made from host memory and released after
   * its launch, as before, so that a benchmark can compare them. */
  int opencl_param_buffers;
  /* OpenCL double precision: 1 (default) as the device reports it
   * (cl_khr_fp64); 0 the device is treated as one without doubles, as
   * many GPUs are: every kernel is built without PS_HAVE_FP64, and what
   * needs doubles (a float comparison, a float64 sum or arithmetic on
   * lossless floats, a float gather) is refused with PS_ERR_UNSUPPORTED, so
   * that the tests run that path on a device that has them. */
  int opencl_fp64;
  /* Specialized queries on CUDA: 0 (default) the compiler chooses the
   * registers a thread takes; 1..8 the kernel is compiled so that that many
   * blocks fit an SM (__launch_bounds__'s minimum blocks; PS_QS_MIN_BLOCKS),
   * spilling what does not fit, so that a benchmark can compare occupancy
   * with spills (TPC-H Q1's register GROUP BY). */
  int query_min_blocks;
  /* CUDA's per-shape words kernel (the filters): 0 (default) the compiler
   * chooses the registers a thread takes; 1..16 the kernel is compiled so
   * that that many blocks of 128 threads fit an SM (PS_W_MIN_BLOCKS),
   * spilling what does not fit, so that a benchmark can compare occupancy
   * with spills. */
  int where_min_blocks;
  /* CUDA's per-word filter kernels' grid, in waves of the blocks resident
   * at once (each warp looping over the tasks its block is given): 0 the
   * default (PS_CUDA_WHERE_WAVES, kernels_cuda/ps_cuda_kernels.h); 1..64
   * that many waves (at most one block per 4 tasks: every warp one task),
   * so that a benchmark can compare launch shapes. */
  int where_waves;
} ps_internal_options;

/* The defaults (what a new context has). */
void ps_internal_options_init(ps_internal_options *opts);

/* Replaces ctx's options with *opts. PS_ERR_INVALID_ARGUMENT, with a message
 * naming the field and its value and ctx's options unchanged, when a field is
 * out of range, or when ctx or opts is NULL. */
ps_status ps_context_set_internal_options(ps_context *ctx, const ps_internal_options *opts);

/* ctx's options (never NULL for a context). */
const ps_internal_options *ps_context_internal_options(const ps_context *ctx);

/* For tests of builds in the background (ps_context_options.query_compile,
 * core/kcache.h): blocks until every build handed to ctx's worker threads
 * has started (`started` 1: none is still queued, so one may be in
 * progress) or has finished (`started` 0: the next calls pick them up). */
void ps_context_wait_builds(ps_context *ctx, int started);

#endif /* PS_INTERNAL_OPTIONS_H */
