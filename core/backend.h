/*
 * The backend vtable: what the core asks of a device. One versioned,
 * append-only table of function pointers per backend (SQLite's
 * sqlite3_io_methods, nanoarrow's ArrowDevice). Entries after the required
 * ones may be NULL; the core then returns PS_ERR_UNSUPPORTED.
 *
 * Backends are plain C; they include this header and core/ps_program.h, never
 * each other. Each backend maps its driver's error codes to ps_status in one
 * place and writes details with ps_backend_error().
 *
 * Memory: a ps_devmem names device memory: `handle` is a device pointer
 * (cuda), a cl_mem (opencl) or a host pointer (reference); `offset` is a byte
 * offset into it. Wrapped (caller-owned) memory looks the same as memory the
 * backend allocated.
 *
 * Streams/queues: each backend owns one stream or queue per context (or uses
 * the caller's, see packscan_cuda.h); every operation enqueues on it and a
 * call synchronizes only when it must return a host value.
 */
#ifndef PS_BACKEND_H
#define PS_BACKEND_H

#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>

#include "internal_options.h" /* ps_context_internal_options: the paths tests ask for */
#include "packscan.h"
#include "ps_like_nfa.h"
#include "ps_layout.h" /* kernels_shared/: where a column's codes lie */
#include "ps_program.h"
#include "ps_query_program.h"

#define PS_BACKEND_ABI_VERSION 1

typedef struct ps_backend ps_backend; /* backend-private state */

typedef struct ps_devmem {
  void *handle;
  uint64_t offset;
} ps_devmem;

/* The inputs of one evaluation over one chunk of rows. */
typedef struct ps_eval_args {
  const ps_program *prog;
  uint64_t rows;                       /* rows in this chunk (> 0) */
  ps_devmem data[PS_MAX_COLS];         /* packed stream of each column slot, at the chunk start */
  ps_devmem validity[PS_MAX_COLS];     /* validity at the chunk start (handle NULL if none) */
  ps_devmem aux;                       /* prog->aux_words 32-bit words (handle NULL if 0) */
  const uint32_t *aux_host;            /* the same aux words in host memory */
  /* Outputs. bitmap: ceil(rows/8) bytes written at the given place (handle
   * NULL = no bitmap wanted); the bytes past ceil(rows/8) are not touched.
   * count: if non-NULL, the number of selected rows of this chunk. */
  ps_devmem bitmap;
  uint64_t *count;
  /* Optional (ABI 1 additions): a selection to AND into the result (ceil(rows/8)
   * bytes, handle NULL = none; rows not selected there are 0 in every output);
   * and a byte-per-row mask output (rows bytes, 1/0; handle NULL = none). */
  ps_devmem selection_in;
  ps_devmem mask;
  /* Index of the first chunk row (multiple of 32); informational. */
  uint64_t row_begin;
  /* eval_ids only (zero for eval): the ids (row_begin + r, as index_bytes =
   * 4 or 8 byte integers, ascending) of the chunk's selected rows at ids,
   * at most ids_capacity (>= 1) of them. */
  ps_devmem ids;
  uint32_t index_bytes;
  uint64_t ids_capacity;
  /* 1 when every slot is FOR-encoded: only then may a backend run a
   * hand-tuned kernel that reads bit-packed FOR words itself (the
   * single-RANGE and SET kernels, the tree kernel), and only then is eval_ids
   * called. Every other kernel reads codes through ps_codes.h's readers, in
   * any encoding. */
  uint32_t for_only;
} ps_eval_args;

/* Row ids of one chunk of a selection bitmap: ids of set bits, ascending,
 * each plus id_base, written as index_bytes (4 or 8) integers at out (handle
 * NULL = count only). *count receives the number of set bits of the chunk.
 * Bits past `rows` in the last byte are ignored. */
typedef struct ps_row_ids_args {
  ps_devmem bitmap; /* chunk start (4-byte aligned relative to the bitmap) */
  uint64_t rows;
  uint64_t id_base;
  uint32_t index_bytes;
  ps_devmem out;
  uint64_t *count;
} ps_row_ids_args;

/* Reduction of one column slot over one chunk, in code space: over rows that
 * are valid and selected (selection handle NULL = all rows), the count, the
 * min and max code and the exact sum of codes (128-bit: sum_hi:sum_lo).
 * Corrupt codes (ps_program.h rule) give PS_ERR_CORRUPT_DATA. */
typedef struct ps_reduce_args {
  ps_prog_col col; /* data_bytes / validity_bytes relative to the chunk start */
  ps_devmem data, validity, selection;
  uint64_t rows;
  uint64_t *count, *min_code, *max_code, *sum_lo, *sum_hi;
} ps_reduce_args;

/* Decodes the codes of rows ids[0..count) of one column into plain values.
 * Row ids are absolute (the data pointer is the stream start; ids < n were
 * checked by the core). out_type: the value written per row:
 *   PS_GATHER_CODE32: (uint32)(M + code)            (dictionary indexes)
 *   PS_GATHER_INT:    (M + code) truncated to value_bytes (1,2,4,8), little-endian
 *   PS_GATHER_F64:    the double of the float decode rule
 *   PS_GATHER_F32:    (float) of that double
 * Null rows write 0 and a 0 validity bit (validity_out handle NULL = no bitmap;
 * when given, ceil(count/8) bytes, bits past count 0). */
#define PS_GATHER_CODE32 1u
#define PS_GATHER_INT 2u
#define PS_GATHER_F64 3u
#define PS_GATHER_F32 4u
typedef struct ps_gather_args {
  ps_prog_col col; /* data_bytes / validity_bytes of the whole column */
  ps_devmem data, validity;
  ps_devmem ids;
  uint32_t index_bytes;
  uint64_t count;
  uint64_t rows; /* the column's n: an id >= rows gives PS_ERR_INVALID_ARGUMENT */
  uint32_t out_type, value_bytes;
  ps_devmem values, validity_out;
} ps_gather_args;

/* LIKE over a run of dictionary entries on the device (the dictionary pass
 * of a LIKE leaf, once per lowered expression): for k in [0, count), bit k of
 * `out` (bit k % 32 of 32-bit word k / 32) is 1 iff dictionary entry first + k
 * matches the compiled pattern, exactly as ps_like_nfa_match (ps_like_nfa.h)
 * says; every word of ceil(count / 32) is written, bits past count are 0.
 * Enqueued on the context's stream/queue like everything else (no
 * synchronization); the eval that reads `out` comes later on the same one.
 * count == 0 (every other field zero) is a query the core makes when it
 * lowers: PS_OK if this device should match dictionaries, or
 * PS_ERR_UNSUPPORTED, without a message, if the core should keep doing it on
 * the host (on a CPU device the host's search of the concatenated bytes,
 * core/like.c, is many times faster than the NFA); nothing is enqueued. */
typedef struct ps_like_dict_args {
  const ps_like_nfa *nfa; /* host memory, only borrowed for the call */
  ps_devmem offsets;      /* the dictionary's d + 1 offsets as uint64 (8-byte aligned) */
  ps_devmem bytes;        /* its bytes (offsets index them) */
  uint64_t first;         /* first entry */
  uint64_t count;         /* entries, >= 1, first + count <= d */
  ps_devmem out;          /* ceil(count / 32) words (4-byte aligned) */
} ps_like_dict_args;

/* Where a query's value is not representable (ps_query_args.fault). */
typedef struct ps_query_fault {
  uint64_t row; /* chunk row */
  uint32_t agg;
} ps_query_fault;

/* One chunk of a query (ps_query_run; semantics in ps_query_program.h):
 * accumulates the chunk's selected rows into acc, which holds
 * prog->n_groups * prog->n_accs ps_qacc in device memory, already holding the
 * earlier chunks' totals (the core initializes it once per run and reads it
 * back at the end). PS_ERR_OVERFLOW or PS_ERR_CORRUPT_DATA (with a message
 * naming the row and aggregate or slot) fail the run; acc is then
 * unspecified. */
typedef struct ps_query_args {
  const ps_vprog *prog;                /* byte counts of its slots relative to the chunk start */
  uint64_t rows;                       /* rows in this chunk (> 0) */
  uint64_t row_begin;                  /* index of the chunk's first row (multiple of 32) */
  ps_devmem data[PS_MAX_COLS];         /* packed stream of each slot, at the chunk start */
  ps_devmem validity[PS_MAX_COLS];     /* validity at the chunk start (handle NULL if none) */
  ps_devmem preds[PS_QMAX_PREDS];      /* CASE predicate bitmaps at the chunk start */
  ps_devmem acc;                       /* the accumulators */
  /* The WHERE predicate, evaluated in the same pass: its program (core/ps_program.h) over the same column slots (its
   * n_cols may be fewer; its slots' byte counts are the chunk's), and its aux
   * words on the device and on the host. where_prog NULL = every row. */
  const ps_program *where_prog;
  ps_devmem where_aux;
  const uint32_t *where_aux_host;
  /* Bit i: WHERE instruction i starts the right operand of an AND (of an
   * OR), whose rows are those where its left operand is not FALSE (not TRUE);
   * see ps_query_program.h. */
  uint64_t where_and_right, where_or_right;
  /* The accumulator fields the core reads of each aggregate (PS_QF_* of
   * ps_query_program.h, 4 bits per aggregate; 0 = every field). */
  uint64_t agg_fields;
  /* A hashed GROUP BY plan's group table (prog->group_slots != 0): 2 *
   * group_slots words, see ps_query_program.h; word 2 * group_slots is set
   * to 1 where the keys pass dropped a key (a full table). */
  ps_devmem groups;
  /* 1 when every slot is FOR-encoded (as ps_eval_args.for_only): a backend
   * may run a kernel built for FOR columns alone. */
  uint32_t for_only;
  /* The value program's aux words (PS_VAUX_HEAD, ps_query_program.h) on the
   * device and on the host; handle NULL (and host NULL) where no PS_VOP_FCOL
   * reads an ALP column. */
  ps_devmem value_aux;
  const uint64_t *value_aux_host;
  /* Out: where a backend returns PS_ERR_NOT_REPRESENTABLE, the smallest chunk
   * row on which a value is not representable and the first aggregate whose
   * value is not, there (the core words the message: it knows the columns). */
  ps_query_fault *fault;
  /* 1 (only where the backend has query_collect): the chunk's status words
   * (PS_Q_STATUS_WORDS of them) stay on the device, in slot status_slot
   * (< PS_QUERY_STATUS_SLOTS) of the backend's query status array, and the
   * call returns without waiting; query_collect reads them. 0: the call
   * reads them and returns the chunk's error. */
  uint32_t defer_status, status_slot;
} ps_query_args;

/* Chunks of one query call whose status words wait on the device together
 * (ps_query_args.defer_status): a call of more chunks collects them in
 * batches of this many. */
#define PS_QUERY_STATUS_SLOTS 64u

typedef struct ps_backend_ops {
  uint32_t abi_version; /* PS_BACKEND_ABI_VERSION */
  const char *name;     /* "reference", "opencl", "cuda" */

  /* Required. create probes the device named by opts; PS_ERR_NO_DEVICE if none. */
  ps_status (*create)(ps_context *ctx, const ps_context_options *opts, ps_backend **out);
  void (*destroy)(ps_backend *be);
  const char *(*device_name)(ps_backend *be);
  /* Rows per launch this backend handles at most (a multiple of 32). */
  uint64_t (*max_chunk_rows)(ps_backend *be);

  ps_status (*mem_alloc)(ps_backend *be, uint64_t bytes, ps_devmem *out);
  void (*mem_free)(ps_backend *be, ps_devmem mem);
  ps_status (*mem_write)(ps_backend *be, ps_devmem dst, const void *src, uint64_t bytes);
  ps_status (*mem_read)(ps_backend *be, void *dst, ps_devmem src, uint64_t bytes);

  /* Evaluates prog over one chunk. Returns PS_ERR_CORRUPT_DATA when a corrupt
   * code was read (ps_program.h). */
  ps_status (*eval)(ps_backend *be, const ps_eval_args *args);

  /* Optional: the operations after the filter (issue "row ids, late
   * materialization, aggregates"). NULL = PS_ERR_UNSUPPORTED. */
  ps_status (*row_ids)(ps_backend *be, const ps_row_ids_args *args);
  ps_status (*reduce)(ps_backend *be, const ps_reduce_args *args);
  ps_status (*gather)(ps_backend *be, const ps_gather_args *args);

  /* Optional: retain/release a caller's native handle wrapped as a buffer
   * (OpenCL retains the cl_mem). NULL = nothing to do. */
  ps_status (*retain_wrapped)(ps_backend *be, ps_devmem mem);
  void (*release_wrapped)(ps_backend *be, ps_devmem mem);

  /* Optional (ABI 1 addition): the dictionary pass of LIKE on the device
   * (ps_like_dict_args). NULL = the core matches the dictionary on the host
   * and uploads the bitmap with the program's other aux words. When a
   * backend has it, the aux words such a pass writes are zero in
   * ps_eval_args.aux_host: read them from ps_eval_args.aux. */
  ps_status (*like_dict)(ps_backend *be, const ps_like_dict_args *args);

  /* Optional (ABI 1 addition): evaluation straight to row ids, one pass
   * (ps_filter_row_ids_device): as eval with args->ids set, no bitmap, mask
   * or input selection, and args->count set; *count receives the chunk's
   * selected rows even when more than ids_capacity, and then only the
   * first ids_capacity ids may be written. PS_ERR_UNSUPPORTED, without a
   * message and with nothing enqueued, for programs this backend does not
   * fuse: the core then evaluates the chunk into a bitmap and calls
   * row_ids. NULL = never fused. */
  ps_status (*eval_ids)(ps_backend *be, const ps_eval_args *args);

  /* Optional (ABI 1 addition): one chunk of a query (ps_query_args). NULL =
   * ps_query_run returns PS_ERR_UNSUPPORTED. */
  ps_status (*query)(ps_backend *be, const ps_query_args *args);

  /* Optional (ABI 1 addition): sets `bytes` bytes at dst to `value`,
   * enqueued on the context's stream/queue like an evaluation (no
   * synchronization). Zone-map pruning writes the result bitmaps and masks
   * of the row ranges it decides without reading codes through it. NULL =
   * the core evaluates those ranges instead. */
  ps_status (*fill)(ps_backend *be, ps_devmem dst, uint8_t value, uint64_t bytes);

  /* Optional (ABI 1 additions): streaming host-resident columns
   * (core/stream.c). The core stages each chunk's codes and validity in one
   * of PS_STAGE_SLOTS device buffers, in turn; slot names which.
   * host_map: device memory naming `host` itself, for a device that reads
   * host memory in place (the reference backend); nothing is copied. NULL =
   * the core stages chunks through stage_write.
   * stage_write: copies `bytes` host bytes at src into dst (inside slot's
   * buffer), asynchronously on the backend's own copy stream/queue, after
   * the work enqueued before the slot's last stage_release. Nothing on the
   * context's stream/queue waits for it until stage_ready: the copies of
   * the next chunk, enqueued before this chunk's kernels, must not hold
   * those kernels back. src is the caller's column memory, alive until the
   * column goes (the backend may stage it through pinned memory). NULL =
   * the core uses mem_write.
   * stage_ready: every operation enqueued later on the context's
   * stream/queue waits for the slot's copies enqueued so far. Required
   * with stage_write.
   * stage_release: the work enqueued so far on the context's stream/queue
   * is the last to read the slot's buffer until its next stage_write. */
  ps_status (*host_map)(ps_backend *be, const void *host, ps_devmem *out);
  ps_status (*stage_write)(ps_backend *be, uint32_t slot, ps_devmem dst, const void *src, uint64_t bytes);
  ps_status (*stage_release)(ps_backend *be, uint32_t slot);
  ps_status (*stage_ready)(ps_backend *be, uint32_t slot);

  /* Optional (ABI 1 additions): a query call that waits for the device once.
   * mem_write_async: as mem_write, enqueued on the context's stream/queue
   * without waiting; src stays valid and unchanged until the backend's next
   * call that waits (mem_read, query_collect). NULL = mem_write.
   * query_collect: waits for the work enqueued so far and copies the first
   * n slots of the query status array into status (n * PS_Q_STATUS_WORDS
   * words, ps_query_program.h: each chunk's least corrupt row, least
   * overflowing row and per aggregate least row whose value is not
   * representable, relative to its first row; UINT32_MAX = none), and,
   * where acc_bytes > 0, acc_bytes of acc into acc_host, in one wait. NULL =
   * every query call reads its chunk's status itself. */
  ps_status (*mem_write_async)(ps_backend *be, ps_devmem dst, const void *src, uint64_t bytes);
  ps_status (*query_collect)(ps_backend *be, uint32_t n, uint32_t *status, ps_devmem acc, void *acc_host,
                             uint64_t acc_bytes);
} ps_backend_ops;

/* Staging buffers for streamed chunks: at least double buffering, so that
 * the copy of chunk k + 1 overlaps the kernels of chunk k. */
#define PS_STAGE_SLOTS 3u

/* Records a message as the context's last error (printf-style); returns status.
 * Backends use this for driver errors and build logs. */
ps_status ps_backend_error(ps_context *ctx, ps_status status, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;

/* The context's host allocator, for backends' own host memory. */
void *ps_host_alloc(ps_context *ctx, size_t size);
void ps_host_free(ps_context *ctx, void *ptr);

/* For the interop entry points a backend implements (packscan_cuda.h,
 * packscan_opencl.h): */
/* The backend state of ctx if its backend is `name`, else NULL. */
ps_backend *ps_context_backend_state(ps_context *ctx, const char *name);
/* Wraps a native handle (device pointer, cl_mem) as a caller-owned buffer.
 * The core records an error and fails if ctx's backend is not `backend`. */
ps_status ps_buffer_wrap_native(ps_context *ctx, const char *backend, void *handle, uint64_t size,
                                ps_buffer **out);
/* The device memory behind a buffer, and its context. */
ps_devmem ps_buffer_devmem(const ps_buffer *buf);
ps_context *ps_buffer_context(const ps_buffer *buf);

/* The compiled-in backends (generated registry, core/registry.c). */
extern const ps_backend_ops ps_backend_reference;
#ifdef PACKSCAN_HAVE_OPENCL
extern const ps_backend_ops ps_backend_opencl;
#endif
#ifdef PACKSCAN_HAVE_CUDA
extern const ps_backend_ops ps_backend_cuda;
#endif

/* The one corrupt-data error every backend raises (PS_ERR_CORRUPT_DATA, one
 * wording): a non-null row of program slot `slot` (col: that slot) holds a
 * code above col->code_limit, or any non-null row where col has
 * PS_COLF_NO_CODES. first..last: the rows where it is, counted from the start
 * of the chunk the call was given (gather: row ids, first == last), first ==
 * last when the row is known; id_index >= 0: the position in a gather's id
 * list. The core names the column (by the name the caller gave it, else its
 * slot) and turns chunk rows into the column's rows. */
ps_status ps_corrupt_error(ps_context *ctx, uint32_t slot, const ps_prog_col *col, uint64_t first, uint64_t last,
                           int64_t id_index);

#endif /* PS_BACKEND_H */
