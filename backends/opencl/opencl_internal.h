/* State and helpers shared by the files of the OpenCL backend. */
#ifndef PS_OPENCL_INTERNAL_H
#define PS_OPENCL_INTERNAL_H

#include <CL/cl.h>

#include "backend.h"
#include "launch.h"

/* Rows per launch: 2^26 work-items at 32 rows each keeps global sizes and the
 * 32-bit device count far from overflow. */
#define PS_CL_MAX_CHUNK_ROWS (UINT64_C(1) << 31)

/* Work-group size used when the kernel allows it (a power of two). */
#define PS_CL_WORK_GROUP 256u
/* The same for the one work-group of select.cl's ps_scan_counts on a GPU. */
#define PS_CL_SCAN_WORK_GROUP 1024u

/* Forwards a failed status; its message is already recorded. */
#define PS_CL_TRY(expr)                               \
  do {                                                \
    ps_status ps_cl_try_st_ = (expr);                 \
    if (ps_cl_try_st_ != PS_OK) return ps_cl_try_st_; \
  } while (0)

/* Words of the status buffer (enough for every kernel's status). */
#define PS_CL_STATUS_WORDS PS_Q_STATUS_WORDS /* the most a kernel uses: a query's */

/* Built programs kept per context (core/kcache.h): the generic one, programs
 * specialized for one filter shape and the single-range fast path's
 * per-width builds (least recently used ones are released first). Room for all 65 widths of
 * the fast path besides the specialized filters, so that a sweep over widths
 * does not evict them. */
#define PS_CL_CACHE_SLOTS 96
/* Query specialization texts remembered as failing to build (opencl_query.c). */
#define PS_CL_QUERY_UNBUILT 16

/* The kinds of build (opencl_program.c's build_kind). */
#define PS_CL_BUILD_KINDS 6

/* Work-group size of the single-range fast path (range.cl), at most; a
 * compile-time constant of its builds. */
#define PS_CL_RANGE_WORK_GROUP 128u

/* On a CPU device (range.cl's PS_RANGE_DIRECT variant): work-group size and
 * result words per work-item, chosen by measurement on PoCL (fewer, larger
 * work-items ran about the same, one word per work-item far slower:
 * docs/performance-notes.md). */
#define PS_CL_RANGE_CPU_WORK_GROUP 16u
#define PS_CL_RANGE_CPU_WORDS 32u

/* words.cl (the general filter compiled per program shape): its
 * work-group size, one result word per work-item on a GPU (halved where the
 * device allows less). */
#define PS_CL_WORDS_WORK_GROUP 128u
/* words.cl on a CPU device: the consecutive 32-row words a work-item takes. */
#define PS_CL_WORDS_CPU_SPAN 16u

/* Row ids by runs (select.cl ps_count_runs / ps_write_runs): selection words
 * per work-item (64K rows, 8 KB of bitmap) and work-group size. Enough
 * work-items to balance the device's threads at 2^22 rows and more; few
 * enough that the counts the host scans stay small (1024 at 2^26 rows). */
#define PS_CL_IDS_RUN_WORDS 2048u
#define PS_CL_IDS_RUN_WORK_GROUP 8u
/* Row ids by work-groups (ps_count_words / ps_write_ids): at most this many
 * rounds of one word a work-item, while the chunk still fills two work-groups
 * per compute unit. Fewer, larger groups mean fewer counts for the
 * one-work-group scan (ps_scan_counts) and fewer group offsets; each round's
 * ids still store coalesced, so dense selections lose nothing
 * (docs/benchmarks.md). */
#define PS_CL_IDS_GROUP_ROUNDS 16u
/* Row ids by work-groups: where there are at most this many groups per
 * work-item of a group, ps_write_ids sums the counts before its group
 * itself (a few loads a work-item, from the cache) instead of a launch of
 * ps_scan_counts between the passes; more groups are scanned. */
#define PS_CL_IDS_SUM_PER_ITEM 8u

/* Filters of at least this many rows per chunk run a program specialized for
 * their shape (unless the internal option opencl_jit says otherwise). */
#define PS_CL_JIT_MIN_ROWS (UINT64_C(1) << 22)

/* The kernels of the program (kernels_opencl/), by index. */
typedef enum ps_cl_kernel_id {
  PS_CL_FILTER = 0,     /* filter.cl ps_filter_words */
  PS_CL_COUNT_WORDS,    /* select.cl ps_count_words */
  PS_CL_WRITE_IDS,      /* select.cl ps_write_ids */
  PS_CL_REDUCE,         /* select.cl ps_reduce_words */
  PS_CL_GATHER,         /* select.cl ps_gather_values */
  PS_CL_RANGE,          /* range.cl ps_range_words (fast-path builds only) */
  PS_CL_RANGE_COUNT,    /* range.cl ps_range_words_count (fast-path builds only) */
  PS_CL_LIKE,           /* like.cl ps_like_dict_words (LIKE builds only) */
  PS_CL_COUNT_RUNS,     /* select.cl ps_count_runs */
  PS_CL_WRITE_RUNS,     /* select.cl ps_write_runs */
  PS_CL_SCAN_COUNTS,    /* select.cl ps_scan_counts */
  PS_CL_QUERY_PARTIALS, /* query.cl ps_query_partials (query builds only) */
  PS_CL_QUERY_MERGE,    /* query.cl ps_query_merge (query builds only) */
  PS_CL_REDUCE_TILES,   /* select.cl ps_reduce_tiles */
  PS_CL_GATHER_IDS,     /* select.cl ps_gather_ids */
  PS_CL_KERNEL_COUNT
} ps_cl_kernel_id;

/* A program built from the embedded sources with one option string and,
 * for a specialized filter, one shape table; and its kernels. */
typedef struct ps_cl_cached {
  cl_program program;
  cl_kernel kernels[PS_CL_KERNEL_COUNT]; /* specialized: the filter only; fast path: the range kernels */
  size_t work_group[PS_CL_KERNEL_COUNT]; /* a power of two each kernel accepts; fast path: the
                                            compiled-in size, 0 if the device refuses it */
} ps_cl_cached;

/* Argument slots of parameter blocks (ps_cl_upload). A launch passes at
 * most one block per slot; the next upload to a slot is enqueued after that
 * launch, which the in-order queue runs first, so one buffer a slot serves
 * every launch. */
typedef enum {
  PS_CL_PARAM_LAUNCH,  /* launch blocks */
  PS_CL_PARAM_PROGRAM, /* a query's value program, a LIKE pattern */
  PS_CL_PARAM_WHERE,   /* a query's WHERE program, a filter's aux words */
  PS_CL_PARAM_SLOTS
} ps_cl_param_slot;
/* Bytes of host staging for parameter blocks; a larger block gets a buffer
 * of its own. */
#define PS_CL_PARAM_STAGING (256u * 1024u)

/* One context = one device, so the program cache lives here. */
struct ps_backend {
  ps_context *ctx;
  cl_platform_id platform;
  cl_device_id device;
  cl_context context;
  cl_command_queue queue;
  /* Streaming host-resident columns (stage_write, stage_release): a second
   * queue for the copies, so that they run beside the kernels on `queue`
   * (made on the first copy); per staging slot, the marker on `queue`
   * after the last work that read it, which the slot's next copy waits for. */
  cl_command_queue copy_queue;
  cl_event stage_free[PS_STAGE_SLOTS];
  cl_event stage_copied[PS_STAGE_SLOTS]; /* a slot's last copy not yet waited for by `queue` (stage_ready) */
  char device_name[512];
  int has_fp64;
  int little_endian;
  int cpu; /* CL_DEVICE_TYPE_CPU: range.cl takes its direct-read variant (PS_RANGE_DIRECT) */
  uint64_t max_alloc;
  uint64_t local_mem;
  size_t max_work_group;
  uint32_t compute_units; /* CL_DEVICE_MAX_COMPUTE_UNITS, at least 1 */
  cl_mem dummy;   /* bound to buffer arguments a launch does not use */
  cl_mem status;  /* PS_CL_STATUS_WORDS words the kernels accumulate into */
  cl_mem qstatus; /* queries' deferred status words (ps_query_args.defer_status), PS_QUERY_STATUS_SLOTS slots */
  /* Pinned staging for what a query's collect reads back: a buffer made
   * with CL_MEM_ALLOC_HOST_PTR, mapped once for good; its host pointer is
   * the destination of non-blocking reads (a driver copies into such memory
   * directly, where a read into pageable memory goes through a bounce
   * buffer). NULL until used (opencl_backend.c). */
  cl_mem collect_buf;
  void *collect_host;
  size_t collect_bytes;
  cl_mem scratch; /* per-group results (row id counts, reduce partials); grows */
  size_t scratch_bytes;
  /* Parameter blocks (ps_cl_upload): a buffer per argument slot, kept and
   * grown, written on `queue` from the staging area `param_host`. A
   * non-blocking write may read its staged bytes until it has run, so the
   * area is used front to back and restarts only after a clFinish. */
  cl_mem param[PS_CL_PARAM_SLOTS];
  size_t param_bytes[PS_CL_PARAM_SLOTS];
  unsigned char *param_host; /* PS_CL_PARAM_STAGING bytes, made on first use */
  size_t param_used;
  /* Built programs (ps_cl_cached, core/kcache.h); NULL until the first build. */
  struct ps_kcache *kcache;
  /* The device as the kernel cache's keys name it: platform and device
   * names and versions, vendor, driver. */
  char identity[1024];
  /* SHA-256 of each kind of build's source (opencl_program.c), computed on
   * its first use. */
  unsigned char source_digest[PS_CL_BUILD_KINDS][32];
  int have_source_digest[PS_CL_BUILD_KINDS];
  /* Specialized query texts whose build failed (opencl_query.c), by hash and
   * length, the latest PS_CL_QUERY_UNBUILT: their queries take the generic
   * kernel without compiling again on every chunk. */
  uint64_t query_unbuilt[PS_CL_QUERY_UNBUILT][2];
  uint32_t query_unbuilt_count;
};

/* The context's internal options (core/internal_options.h: the paths tests
 * ask for), read where a path is chosen. */
static inline const ps_internal_options *ps_cl_options(const ps_backend *be) {
  return ps_context_internal_options(be->ctx);
}

/* Whether kernels may use doubles: the device has cl_khr_fp64 and the
 * internal options do not treat it as one without. */
static inline int ps_cl_fp64(const ps_backend *be) { return be->has_fp64 && ps_cl_options(be)->opencl_fp64; }

/* Whether LIKE is matched against dictionaries on the device: by default
 * not on a CPU device, where the host's byte search is many times faster
 * than the NFA kernel. */
static inline int ps_cl_like_on_device(const ps_backend *be) {
  const int v = ps_cl_options(be)->opencl_like;
  return v == PS_OPT_AUTO ? !be->cpu : v == PS_OPT_ON;
}

/* Whether row ids are written by runs of words per work-item (select.cl
 * ps_count_runs / ps_write_runs) rather than by work-groups: by default on
 * a CPU device. */
static inline int ps_cl_ids_by_runs(const ps_backend *be) {
  const int v = ps_cl_options(be)->opencl_ids_runs;
  return v == PS_OPT_AUTO ? be->cpu : v == PS_OPT_ON;
}

/* Whether a reduction of a column that the tiles can read (FOR, widths
 * 1..32, with codes) takes select.cl's ps_reduce_tiles rather than
 * ps_reduce_words: by default on devices other than CPUs, where a
 * work-item's own words in order are what suits the caches. */
static inline int ps_cl_reduce_by_tiles(const ps_backend *be) {
  const int v = ps_cl_options(be)->opencl_reduce_tiles;
  return v == PS_OPT_AUTO ? !be->cpu : v == PS_OPT_ON;
}

/* Whether a gather takes select.cl's ps_gather_ids (a work-item per id)
 * rather than ps_gather_values (32 ids per work-item, in order): by default
 * on devices other than CPUs. */
static inline int ps_cl_gather_by_id(const ps_backend *be) {
  const int v = ps_cl_options(be)->opencl_gather_ids;
  return v == PS_OPT_AUTO ? !be->cpu : v == PS_OPT_ON;
}

/* opencl_error.c: the one place where cl_int codes become ps_status. Records
 * "<call> failed: <CL_NAME> (<code>)" plus optional detail and returns the status. */
ps_status ps_cl_fail(ps_context *ctx, cl_int err, const char *call, const char *detail);
/* The same for a failed build, with as much of the build log as fits. */
ps_status ps_cl_build_fail(ps_context *ctx, cl_int err, const char *source_name, const char *options,
                           const char *device, const char *log);
const char *ps_cl_error_name(cl_int err);

/* opencl_program.c: the device's generic program (every kernel), or with a
 * shape table (see filter.cl) a filter specialized for it; built on first use. */
ps_status ps_cl_program(ps_backend *be, const char *shape, const ps_cl_cached **out);
/* The single-range fast path (range.cl) for one bit width, built with a
 * work-group of `work_group` work-items (a power of two, see range.cl);
 * direct_words > 0: its CPU variant (PS_RANGE_DIRECT) with that many result
 * words per work-item; limit != 0: the variant that checks codes against a
 * code limit (PS_RANGE_LIMIT). */
ps_status ps_cl_range_program(ps_backend *be, uint32_t width, size_t work_group, uint32_t direct_words, int limit,
                              const ps_cl_cached **out);
/* The general filter compiled for one program shape (words.cl; the shape
 * text is written by opencl_eval.c), with its compiled-in work-group size;
 * the kernel's work_group entry is 0 if the device refuses that size. */
ps_status ps_cl_words_program(ps_backend *be, const char *shape, size_t work_group, const ps_cl_cached **out);
/* LIKE over a dictionary (like.cl), built on first use. */
ps_status ps_cl_like_program(ps_backend *be, const ps_cl_cached **out);
/* Queries (query.cl over kernels_shared/ps_query_kernels.h), built on first use;
 * spec: NULL or "" for the generic kernels, else a query's specialization
 * text (core/query_spec.h), one build per text; local_atomics: whether the
 * device has 64-bit local atomics (the build defines PS_Q_INT64_ATOMICS).
 * With `background` (ps_query_spec_background), a build that is neither in
 * memory nor on disk is handed to the kernel cache's worker thread
 * (core/kcache.h) and *out is NULL until a later call finds it done; a
 * build that failed there is cached with a 0 work_group for
 * PS_CL_QUERY_PARTIALS (no kernels), as a refused one. */
ps_status ps_cl_query_program(ps_backend *be, const char *spec, int background, int *local_atomics,
                              const ps_cl_cached **out);
/* Whether the device has 64-bit atomics on local memory (queries' GROUP BY
 * tables in local memory need add, min and max). */
int ps_cl_has_int64_atomics(const ps_backend *be);
/* Releases every cached program and the cache (nothing in flight). */
void ps_cl_cache_release(ps_backend *be);

/* A read-only buffer holding a copy of host memory, taken before the call
 * returns: a launch needs no synchronization for it, and the caller
 * releases *out right after the launch is enqueued. The slot's kept buffer
 * (opencl_param_buffers, the default) or one made for this block. */
ps_status ps_cl_upload(ps_backend *be, ps_cl_param_slot slot, const void *src, size_t bytes, const char *what,
                       cl_mem *out);
ps_status ps_cl_set_arg(ps_backend *be, cl_kernel k, cl_uint index, size_t size, const void *value);
/* Enqueues kernel id over `global` work-items (rounded up to its group);
 * the driver's code (CL_SUCCESS when global is 0), no message. */
cl_int ps_cl_enqueue(ps_backend *be, const ps_cl_cached *prog, ps_cl_kernel_id id, size_t global);
/* As ps_cl_enqueue, a failure recorded as the context's error. */
ps_status ps_cl_launch(ps_backend *be, const ps_cl_cached *prog, ps_cl_kernel_id id, size_t global);
/* be->scratch with at least `bytes` bytes. */
ps_status ps_cl_scratch(ps_backend *be, size_t bytes, cl_mem *out);
/* Sets n status words to `value` (on the queue). */
ps_status ps_cl_reset_status(ps_backend *be, cl_uint value, size_t n);

/* opencl_eval.c */
ps_status ps_cl_eval(ps_backend *be, const ps_eval_args *args);

/* opencl_like.c */
ps_status ps_cl_like_dict(ps_backend *be, const ps_like_dict_args *args);

/* opencl_select.c */
ps_status ps_cl_row_ids(ps_backend *be, const ps_row_ids_args *args);
ps_status ps_cl_reduce(ps_backend *be, const ps_reduce_args *args);
ps_status ps_cl_gather(ps_backend *be, const ps_gather_args *args);

/* opencl_query.c */
ps_status ps_cl_query(ps_backend *be, const ps_query_args *args);

#endif /* PS_OPENCL_INTERNAL_H */
