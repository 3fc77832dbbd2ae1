/*
 * packscan — SQL-style predicates evaluated directly on compressed columns.
 *
 * This is the only header a C user needs. It does not include any CUDA or
 * OpenCL header; interop with native device handles lives in
 * packscan_cuda.h and packscan_opencl.h.
 *
 * Conventions (all functions):
 *  - Every fallible call returns ps_status (PS_OK == 0) and writes its
 *    results through out-parameters placed last. On failure nothing is
 *    written to the out-parameters and the caller's data is untouched.
 *  - Details of the last failure on a context (which field, which value,
 *    the driver's error, the OpenCL build log) are in
 *    ps_context_last_error(ctx).
 *  - Nothing in the library aborts, exits or prints.
 *  - Names, constructors and destructors: every handle type ps_x is created
 *    by ps_x_create (or, where it comes in kinds, by ps_x_<kind>:
 *    ps_column_create_for, ps_expr_compare, ps_value_arith) and released by
 *    ps_x_destroy, which accepts NULL. A caller-owned struct the library
 *    fills with allocations (ps_encoded, ps_encoded_dict) is released by
 *    ps_<struct>_destroy too; a caller-owned struct of settings is set to
 *    its defaults by ps_<struct>_init; a plain block of memory the library
 *    allocated for the caller (row ids, strings) is released by ps_free.
 *  - Host and device memory: a pointer parameter is host memory, a
 *    ps_buffer parameter is device memory. A call that exists in both
 *    forms has the host form unsuffixed and the device form suffixed
 *    `_device` (ps_filter / ps_filter_device, ps_selection_row_ids /
 *    ps_selection_row_ids_device, ps_gather_values /
 *    ps_gather_values_device). Calls that exist in one form only need no
 *    suffix: their parameter types say where the data is.
 *  - Names replaced by these rules stay for one release, declared in
 *    "Deprecated names" at the end of this header (define
 *    PS_NO_DEPRECATION_WARNINGS before including it to silence their
 *    warnings); docs/api-changes.md lists them.
 *  - A context and everything created from it (buffers, columns,
 *    expressions) may be used by one thread at a time. Different contexts
 *    are independent and may be used from different threads concurrently,
 *    creation and destruction included: the OpenCL and CUDA backends
 *    discover platforms and devices once per process, on the first context
 *    created, and share the result.
 *  - Calls are synchronous unless documented otherwise: when a call returns,
 *    host-visible results are written.
 *
 * Formats and semantics are specified in docs/design.md (binding).
 */
#ifndef PACKSCAN_H
#define PACKSCAN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32) && defined(PACKSCAN_SHARED_BUILD)
#define PS_API __declspec(dllexport)
#elif defined(__GNUC__)
#define PS_API __attribute__((visibility("default")))
#else
#define PS_API
#endif

/* Marks a name kept for one release: a warning in C and C++ where the
 * compiler has one (GCC, Clang, MSVC), none with PS_NO_DEPRECATION_WARNINGS
 * (or -Wno-deprecated-declarations). */
#if defined(PS_NO_DEPRECATION_WARNINGS)
#define PS_DEPRECATED(replacement)
#elif defined(__GNUC__) || defined(__clang__)
#define PS_DEPRECATED(replacement) __attribute__((deprecated("use " replacement)))
#elif defined(_MSC_VER)
#define PS_DEPRECATED(replacement) __declspec(deprecated("use " replacement))
#else
#define PS_DEPRECATED(replacement)
#endif

#define PS_VERSION_MAJOR 0
#define PS_VERSION_MINOR 1
#define PS_VERSION_PATCH 0
#define PS_VERSION_NUMBER (PS_VERSION_MAJOR * 10000 + PS_VERSION_MINOR * 100 + PS_VERSION_PATCH)

/** Library version as "MAJOR.MINOR.PATCH". */
PS_API const char *ps_version_string(void);
/** Library version as PS_VERSION_NUMBER of the library actually linked. */
PS_API unsigned ps_version_number(void);

/* ------------------------------------------------------------------------ */
/* Status codes. Values never change once released; new codes are appended. */

#define PS_STATUS_MAP(X)                                                            \
  X(OK, 0, "success")                                                               \
  X(ERR_INVALID_ARGUMENT, 1, "invalid argument")                                    \
  X(ERR_OUT_OF_MEMORY, 2, "out of host memory")                                     \
  X(ERR_DEVICE_OUT_OF_MEMORY, 3, "out of device memory")                            \
  X(ERR_UNSUPPORTED, 4, "operation not supported by this backend")                  \
  X(ERR_NO_BACKEND, 5, "backend not compiled into this library")                    \
  X(ERR_NO_DEVICE, 6, "no usable device")                                           \
  X(ERR_DEVICE, 7, "device or driver error")                                        \
  X(ERR_BUILD, 8, "device program build failed")                                    \
  X(ERR_CORRUPT_DATA, 9, "corrupt data")                                            \
  X(ERR_TYPE_MISMATCH, 10, "type mismatch")                                         \
  X(ERR_BUFFER_TOO_SMALL, 11, "buffer too small")                                   \
  X(ERR_LIMIT, 12, "implementation limit exceeded")                                 \
  X(ERR_NOT_REPRESENTABLE, 13, "value not representable in the requested encoding") \
  X(ERR_OVERFLOW, 14, "arithmetic overflow")                                        \
  X(ERR_INTERNAL, 15, "internal error")

typedef enum ps_status {
#define PS_STATUS_ENUM_(name, value, text) PS_##name = value,
  PS_STATUS_MAP(PS_STATUS_ENUM_)
#undef PS_STATUS_ENUM_
} ps_status;

/** "PS_ERR_INVALID_ARGUMENT" etc.; "PS_UNKNOWN_STATUS" for values not in the map. */
PS_API const char *ps_status_name(ps_status status);
/** A short English description of the status ("invalid argument"). */
PS_API const char *ps_status_string(ps_status status);

/* ------------------------------------------------------------------------ */
/* Types */

/** Logical type of a column. Dates and timestamps are integer types. */
typedef enum ps_type {
  PS_TYPE_INT8 = 1,
  PS_TYPE_INT16 = 2,
  PS_TYPE_INT32 = 3,
  PS_TYPE_INT64 = 4,
  PS_TYPE_UINT8 = 5,
  PS_TYPE_UINT16 = 6,
  PS_TYPE_UINT32 = 7,
  PS_TYPE_UINT64 = 8,
  PS_TYPE_FLOAT32 = 9,
  PS_TYPE_FLOAT64 = 10,
  PS_TYPE_STRING = 11, /* dictionary-encoded column */
  PS_TYPE_DECIMAL = 12 /* exact decimal: int64 unscaled values, value = unscaled / 10^scale */
} ps_type;

/** "int8", "uint64", "float32", "string"...; NULL for an invalid value. */
PS_API const char *ps_type_name(ps_type type);
/** Size in bytes of one plain value of the type (strings: 0). */
PS_API size_t ps_type_size(ps_type type);

/** Comparison operators. */
typedef enum ps_cmp { PS_EQ = 0, PS_NE = 1, PS_LT = 2, PS_LE = 3, PS_GT = 4, PS_GE = 5 } ps_cmp;

/** "==", "!=", "<", "<=", ">", ">="; NULL for an invalid value. */
PS_API const char *ps_cmp_name(ps_cmp cmp);

/** Where a caller-provided buffer lives. */
typedef enum ps_memory { PS_MEMORY_HOST = 0, PS_MEMORY_DEVICE = 1 } ps_memory;

/** Host allocator (zstd's ZSTD_customMem). Both NULL = malloc/free. */
typedef struct ps_allocator {
  void *(*alloc)(void *opaque, size_t size);
  void (*free)(void *opaque, void *ptr);
  void *opaque;
} ps_allocator;

/* ------------------------------------------------------------------------ */
/* Contexts */

typedef struct ps_context ps_context;

/** Options for ps_context_create. Call ps_context_options_init first; fields
 *  may be appended in later versions (struct_size tells which are present). */
typedef struct ps_context_options {
  uint32_t struct_size;     /* sizeof(ps_context_options) */
  const char *backend;      /* "reference", "opencl", "cuda" or "auto" (NULL = "auto") */
  int32_t opencl_platform;  /* OpenCL platform index; -1 = first platform that has a device */
  int32_t opencl_device;    /* device index within the platform; -1 = first (GPUs first) */
  int32_t cuda_device;      /* CUDA device ordinal; -1 = current device */
  ps_allocator allocator;   /* host allocator for the library's own memory */
  uint64_t max_chunk_rows;  /* rows per kernel launch; 0 = backend default. Rounded down to a
                               multiple of 32 (min 32). Chunking never changes a result. */
  /* A directory where kernels compiled at run time (OpenCL programs, CUDA
   * kernels compiled by NVRTC) are kept between contexts and processes;
   * NULL (the default) = none. The library writes there only files named
   * "packscan-kc-<hex>.bin" (and temporary "packscan-kc-<hex>.bin.tmp<hex>"
   * files renamed to those, or deleted when a write fails), and deletes
   * nothing else. A file that is damaged, from another version of the
   * format or for another build is ignored and rebuilt; a directory that is
   * missing or not writable only means kernels are compiled again. A path
   * that exists and is not a directory, or an empty path, is
   * PS_ERR_INVALID_ARGUMENT at ps_context_create. The path is copied (a
   * relative one joined to the working directory at ps_context_create);
   * contexts may share a directory. Files are created readable by their
   * owner only (a key holds the query's literals), and only a regular file
   * owned by the process's user that no one else may write is loaded (a
   * binary becomes code in the process); anything else there is ignored.
   * Files of older versions or other devices stay until the user deletes
   * them. */
  const char *kernel_cache_dir;
  /* How a query's kernel specialized for its constants is compiled on the
   * CUDA and OpenCL backends (ps_query_run; the reference backend has
   * none): PS_QUERY_COMPILE_BACKGROUND (the default) or _BLOCKING or
   * _NEVER. Every way gives the same results. */
  int32_t query_compile;
  /* Whether filters, counts, masks, row ids and queries skip the blocks of
   * rows that the zone maps of their columns decide (see "Zone maps"
   * below): PS_ZONE_PRUNING_ON (0, the default) or PS_ZONE_PRUNING_OFF.
   * Either way gives the same results; only the bytes read and the time
   * differ. ps_context_set_zone_pruning changes it later. */
  int32_t zone_pruning;
  /* The device memory, in bytes, that streaming host-resident columns
   * (ps_column_create_for_host) may hold at once: their chunks are staged
   * in three device buffers of device_memory_limit / 3 bytes each
   * (three, so that the copy of one chunk overlaps the kernels of the one
   * before), and every call that reads such a column runs in chunks that
   * fit them. 0 (the default): three buffers of 64 MiB. At least 65536
   * (PS_DEVICE_MEMORY_LIMIT_MIN) when set. Device-resident columns, result
   * bitmaps and ids are not counted. Any limit gives the same results. */
  uint64_t device_memory_limit;
  /* The most groups a GROUP BY query may have (distinct keys among its
   * selected rows, see "Queries" below); 0 (the default) =
   * PS_QUERY_GROUPS_LIMIT. A query with more fails with PS_ERR_LIMIT; one
   * whose groups do not fit in host or device memory fails with
   * PS_ERR_OUT_OF_MEMORY. */
  uint64_t max_groups;
  /* Several devices (device_count > 1): a context over devices[0..
   * device_count) — CUDA device ordinals on the cuda backend, device
   * indexes of opencl_platform on opencl, any numbers on the reference
   * backend (each an independent instance) — at most PS_MAX_DEVICE_COUNT,
   * all on one backend (the first device's, for "auto"). Every column is
   * split by rows across them (each device holds its part: runs of 65536
   * rows, the first devices a row run more when they do not divide evenly),
   * and every call runs on all of them at once, its results put together
   * exactly as one device's (bit for bit). Such a context has no device
   * memory of its own: ps_buffer_create and the calls that take or fill a
   * ps_buffer (the *_device forms, ps_filter_refine, ps_selection_row_ids*,
   * ps_aggregate over a selection) give PS_ERR_UNSUPPORTED; their host-memory
   * forms work. Device-resident and host-resident columns both split; with
   * device_memory_limit each device streams its part in its own buffers.
   * progress is reported once per call, when every device is done.
   * device_count 1 is a context of devices[0] alone; 0 (the default):
   * cuda_device / opencl_device choose. */
  uint32_t device_count;
  const int32_t *devices;
  /* Progress of long scans: when not NULL, called by the calls that scan
   * rows (filters, counts, masks, refinements, row ids, ps_aggregate,
   * ps_query_run and ps_query_run_partial) after each chunk of rows they
   * read or skip, with progress_user, the rows done so far in that call and
   * the call's total. rows_done increases from call to call within one
   * library call and its last value is rows_total; a call over no rows
   * makes none. A query that reads its rows twice (a GROUP BY with hashed
   * keys: a pass for the keys, then one for the aggregates) counts 2 * rows
   * in rows_total. It is called on the thread that made the library call,
   * before that call returns (for a device output without a count, when the
   * chunk's work is enqueued, not finished). It must not call into the
   * library with this context or its objects; it may read a clock and
   * print. NULL (the default): none, at no cost. */
  void (*progress)(void *progress_user, uint64_t rows_done, uint64_t rows_total);
  void *progress_user;
  /* The OpenCL platform by name: the first installed platform whose name
   * contains this text, compared without regard to ASCII case ("NVIDIA",
   * "portable" for PoCL); NULL (the default): opencl_platform chooses. Set
   * only with opencl_platform -1 (else PS_ERR_INVALID_ARGUMENT); no platform
   * matching is PS_ERR_NO_DEVICE, whose message lists the installed ones.
   * The text is read by ps_context_create only. */
  const char *opencl_platform_name;
} ps_context_options;

/** The most devices of one context (ps_context_options.devices). */
#define PS_MAX_DEVICE_COUNT 16

/** The smallest nonzero ps_context_options.device_memory_limit. */
#define PS_DEVICE_MEMORY_LIMIT_MIN 65536u

/** Values of ps_context_options.zone_pruning. */
#define PS_ZONE_PRUNING_ON 0
#define PS_ZONE_PRUNING_OFF 1

/** Values of ps_context_options.query_compile. A query's first run over
 *  2^20 rows or more (in all, however the call is chunked; 4,096 rows for a
 *  GROUP BY over a small domain on a GPU, where the generic kernel costs a
 *  millisecond or more at any size) compiles a kernel for its constants (NVRTC on
 *  CUDA: hundreds of milliseconds; the OpenCL compiler: up to seconds on a
 *  CPU device). The result is kept per context, and
 *  with a kernel_cache_dir on disk, and used by every later run of a query
 *  with the same constants.
 *  - BACKGROUND: a run whose kernel is neither in memory nor on disk runs the
 *    generic kernel at once while a thread owned by the context compiles
 *    the specialized one; a later run picks it up. The thread is started on
 *    the first such compile, touches neither the caller's data nor the
 *    context's allocator, has all signals blocked, and is joined by
 *    ps_context_destroy (which waits for a compile in progress: it cannot
 *    be interrupted). A compile that fails leaves the generic kernel in use
 *    for that query, silently.
 *  - BLOCKING: the run compiles and waits (the behaviour of 0.1).
 *  - NEVER: queries always run the generic kernel. */
typedef enum ps_query_compile {
  PS_QUERY_COMPILE_BACKGROUND = 0,
  PS_QUERY_COMPILE_BLOCKING = 1,
  PS_QUERY_COMPILE_NEVER = 2
} ps_query_compile;

/** Fills *opts with defaults ("auto" backend, first devices, malloc).
 *  A macro over ps_context_options_init_sized, so that the size written is the
 *  size of the caller's struct: a program built against an older header never
 *  has bytes written past its struct. The function of this name (what
 *  programs built against 0.1's header call) fills 0.1's fields only, so a
 *  binding that looks the symbol up by name must call the sized form
 *  instead, or the fields past 0.1's (kernel_cache_dir) are not read. */
#define ps_context_options_init(opts) ps_context_options_init_sized((opts), sizeof *(opts))
/** Fills the first `size` bytes of *opts (at most sizeof(ps_context_options))
 *  with defaults and sets struct_size to that size; writes nothing when size
 *  is smaller than the options of version 0.1 (up to and including
 *  max_chunk_rows). Language bindings pass the size of their mirror of the
 *  struct. */
PS_API void ps_context_options_init_sized(ps_context_options *opts, size_t size);

/** Creates a context on the backend named in opts (NULL opts = defaults).
 *  "auto" picks the best compiled-in backend that has a usable device, in the
 *  order cuda, opencl, reference. A named backend that is not compiled in gives
 *  PS_ERR_NO_BACKEND; one without a device gives PS_ERR_NO_DEVICE — never a
 *  silent fallback. On failure *out is NULL and, if err_buf is non-NULL, a
 *  message is written there (err_size bytes, NUL-terminated). */
PS_API ps_status ps_context_create(const ps_context_options *opts, char *err_buf, size_t err_size,
                                   ps_context **out);
/** Destroys a context. All its buffers, columns and expressions must have been
 *  destroyed first. NULL is accepted. */
PS_API void ps_context_destroy(ps_context *ctx);
/** Name of the backend in use ("reference", "opencl", "cuda"). */
PS_API const char *ps_context_backend(const ps_context *ctx);
/** Human-readable device description ("NVIDIA H200 (CUDA 13.0, driver ...)"). */
PS_API const char *ps_context_device(const ps_context *ctx);
/** Message of the last failed call on this context ("" after success). */
PS_API const char *ps_context_last_error(const ps_context *ctx);

/** Number of backends compiled into this library, and their names. */
PS_API size_t ps_backend_count(void);
PS_API const char *ps_backend_name(size_t index);

/* ------------------------------------------------------------------------ */
/* Device buffers: memory on the context's device (host memory on the
 * reference backend). Created by the library, or wrapping memory the caller
 * owns (see packscan_cuda.h / packscan_opencl.h). */

typedef struct ps_buffer ps_buffer;

/** Allocates size bytes on the context's device. Contents are undefined. */
PS_API ps_status ps_buffer_create(ps_context *ctx, uint64_t size, ps_buffer **out);
/** Frees a buffer (a wrapped buffer's memory stays the caller's). NULL ok. */
PS_API void ps_buffer_destroy(ps_buffer *buf);
/** Size in bytes. */
PS_API uint64_t ps_buffer_size(const ps_buffer *buf);
/** Copies host memory into / out of a buffer; synchronous. */
PS_API ps_status ps_buffer_write(ps_context *ctx, ps_buffer *buf, uint64_t offset, const void *src,
                                 uint64_t size);
PS_API ps_status ps_buffer_read(ps_context *ctx, const ps_buffer *buf, uint64_t offset, void *dst,
                                uint64_t size);

/* ------------------------------------------------------------------------ */
/* Columns */

typedef struct ps_column ps_column;

/** Frame-of-reference reference value M: .i for signed and float types,
 *  .u for unsigned types. */
typedef union ps_reference {
  int64_t i;
  uint64_t u;
} ps_reference;

/** Zone maps (docs/design.md "Zone maps"): per block of `block_rows`
 *  consecutive rows (the last block may be shorter), the smallest and the
 *  largest code of the block's valid rows and two flags. A predicate whose
 *  columns all have zone maps skips the blocks it can decide from them:
 *  blocks where no row can be TRUE read no codes, blocks where every row is
 *  TRUE skip the predicate's columns. Results never change. The encoders
 *  (ps_encode_for, ps_encode_dict) and the Arrow import make them; columns
 *  made from other codes get them from ps_column_compute_zones. Zone maps
 *  a caller gives must describe the column's codes: wrong ones give wrong
 *  results (as wrong Parquet statistics do). */
#define PS_ZONE_BLOCK_ROWS 4096u /* the block size the library's encoders and ps_column_compute_zones use */
#define PS_ZONE_HAS_NULLS 1u     /* flag: the block has at least one null row */
#define PS_ZONE_ALL_NULL 2u      /* flag: every row of the block is null (min and max are then 0) */
typedef struct ps_zone_map {
  uint32_t struct_size; /* sizeof(ps_zone_map) */
  uint32_t block_rows;  /* rows per block: a positive multiple of 32 */
  uint64_t blocks;      /* ceil(n / block_rows) */
  const uint64_t *min;  /* blocks entries: smallest code of the block's valid rows */
  const uint64_t *max;  /* blocks entries: largest code of the block's valid rows */
  const uint8_t *flags; /* blocks entries: PS_ZONE_HAS_NULLS | PS_ZONE_ALL_NULL */
} ps_zone_map;

/** A frame-of-reference (FOR) bit-packed column (docs/design.md).
 *  Value of row i: M + code[i] for integer types; (double)(M + code[i]) / 10^scale
 *  for floats; exactly (M + code[i]) / 10^scale for PS_TYPE_DECIMAL (M int64,
 *  M + code[i] an int64 "unscaled" value). Code i occupies stream bits
 *  [i*w, (i+1)*w), LSB first. */
/** How a numeric column stores its codes (docs/design.md, column formats).
 *  PS_ENCODING_FOR: bit-packed, code i at bits [i*width, i*width + width).
 *  PS_ENCODING_DELTA: delta of FOR in blocks of 1024 rows, a header per
 *  block at the buffer's start (for sorted and slowly changing columns:
 *  timestamps, dates, sorted keys); every code is still < 2^width. */
typedef enum ps_encoding { PS_ENCODING_FOR = 0, PS_ENCODING_DELTA = 1 } ps_encoding;
/** ps_encode's choice: the smaller of FOR and DELTA (FOR on a tie). */
#define PS_ENCODING_AUTO (-1)

/** Value mappings of float columns (docs/float-encoding.md). All three are
 *  monotone: a larger code never has a smaller value, so comparisons,
 *  zone maps, MIN/MAX and GROUP BY work on the codes.
 *  PS_FLOAT_MAP_DECIMAL: (double)(M + code) / 10^scale (FOR-decimal).
 *  PS_FLOAT_MAP_ALP: code = (k - M) * 2^float_rank_bits + rank (M in
 *    reference.i); rank 0 is the grid value fl(fl((double)k * 10^f) * 10^-e)
 *    (ALP's decode; float32 columns: the same in float arithmetic, e <= 10,
 *    |k| <= 2^24), other ranks the exceptions between grid values k and k+1
 *    from the table (code 0 may hold the lowest exception: the gap below the
 *    grid). NaN never occurs; -0.0 sorts just below +0.0.
 *  PS_FLOAT_MAP_BITS: the IEEE bit pattern through the order-preserving
 *    transform (negative: all bits flipped; else the sign bit set), minus
 *    M (reference.u); float32 columns transform their 32-bit pattern. */
#define PS_FLOAT_MAP_DECIMAL 0u
#define PS_FLOAT_MAP_ALP 1u
#define PS_FLOAT_MAP_BITS 2u

/** An entry of a PS_FLOAT_MAP_ALP column's exception table: the code and
 *  the IEEE-754 double bits of its value (float32 columns: the exact double
 *  of the float). Entries ascend by code. */
typedef struct ps_float_exception {
  uint64_t code;
  uint64_t bits;
} ps_float_exception;

typedef struct ps_for_desc {
  uint32_t struct_size;      /* sizeof(ps_for_desc); sizes up to validity_size (before `encoding`) are read as FOR */
  ps_type type;              /* any integer or float type */
  uint64_t n;                /* rows */
  uint32_t width;            /* bits per code, 0..64 (the contract's bpr*8) */
  uint32_t scale;            /* floats and decimals: decimal scale 0..18; integers: must be 0 */
  ps_reference reference;    /* M */
  const void *data;          /* FOR: packed stream, exactly ceil(n*width/8) bytes; DELTA: the blocks */
  uint64_t data_size;        /* FOR: must equal ceil(n*width/8); DELTA: what its headers lay out */
  const uint8_t *validity;   /* optional Arrow validity bitmap, ceil(n/8) bytes; NULL = no nulls */
  uint64_t validity_size;    /* must equal ceil(n/8) when validity is given */
  /* Optional zone maps of the codes (NULL = none; copied and checked at
   * column creation). The encoders set them: a copy of their description
   * whose codes, width or reference is changed must set them to NULL (or
   * to maps of the new codes). Absent from descriptions of version 0.1 (a
   * struct_size that ends before it). */
  const ps_zone_map *zones;
  uint32_t encoding;         /* ps_encoding (0 = FOR); absent (FOR) from descriptions that end before it */
  /* Float columns: how a code maps to its value (docs/float-encoding.md);
   * absent (PS_FLOAT_MAP_DECIMAL) from descriptions that end before it.
   * Integer columns: must be 0. */
  uint32_t float_map;                   /* PS_FLOAT_MAP_DECIMAL, PS_FLOAT_MAP_ALP or PS_FLOAT_MAP_BITS */
  uint32_t float_e;                     /* PS_FLOAT_MAP_ALP: exponent e, 0..18 (float32: 0..10) */
  uint32_t float_f;                     /* PS_FLOAT_MAP_ALP: factor f, 0..e */
  uint32_t float_rank_bits;             /* PS_FLOAT_MAP_ALP: log2 of the codes per grid step, 0..63 */
  const ps_float_exception *exceptions; /* PS_FLOAT_MAP_ALP: the exception table (host memory, copied) */
  uint64_t exceptions_count;            /* its entries */
} ps_for_desc;

/** Fills *desc with zeros and struct_size. */
PS_API void ps_for_desc_init(ps_for_desc *desc);

/** A dictionary of d strings in Arrow utf8 layout: offsets (d+1 entries,
 *  32- or 64-bit: set exactly one of offsets32/offsets64) into bytes.
 *  Always host memory; the library copies it. */
typedef struct ps_dict_desc {
  uint32_t struct_size;      /* sizeof(ps_dict_desc) */
  uint64_t count;            /* d */
  const int32_t *offsets32;  /* d+1 offsets, or NULL */
  const int64_t *offsets64;  /* d+1 offsets, or NULL */
  const uint8_t *bytes;      /* string bytes */
  uint64_t bytes_size;       /* size of bytes; offsets[d] must not exceed it */
  int sorted;                /* nonzero: caller asserts strictly ascending byte order; checked */
} ps_dict_desc;

PS_API void ps_dict_desc_init(ps_dict_desc *desc);

/** Creates a FOR column from host memory (data and validity are copied to the
 *  device). Every metadata field is validated; see docs/design.md. */
PS_API ps_status ps_column_create_for(ps_context *ctx, const ps_for_desc *desc, ps_column **out);

/** Creates a FOR column over device buffers the caller already filled: data
 *  (and validity, or NULL) are used in place, without a copy, from the given
 *  byte offsets. desc->data and desc->validity are ignored; desc->data_size and
 *  desc->validity_size still give the sizes. The buffers must outlive the column. */
PS_API ps_status ps_column_create_for_device(ps_context *ctx, const ps_for_desc *desc,
                                             ps_buffer *data, uint64_t data_offset,
                                             ps_buffer *validity, uint64_t validity_offset,
                                             ps_column **out);

/** Creates a host-resident FOR column: desc->data and desc->validity stay in
 *  the caller's host memory (pageable or pinned, or a mapped file) and are
 *  not copied at creation. The caller keeps them alive until
 *  ps_column_destroy (which waits for the copies in flight), and unchanged
 *  while a call that reads them may still run on the device. Every call that takes a column takes it, alone or
 *  with device-resident columns in one expression or query: the rows it
 *  reads are copied to the device in chunks sized to
 *  ps_context_options.device_memory_limit, each copy overlapping the kernels
 *  of the chunk before, and chunks the zone maps decide are not copied.
 *  Results are bit-identical to the same column made by ps_column_create_for.
 *  Gathers (ps_gather_values*) read the codes on the host. A DELTA column
 *  streams whole blocks of 1024 rows: their headers (rebased to the chunk in
 *  a host copy the column keeps, 32 bytes a block) and their payloads. Its
 *  headers are checked at creation; a call whose chunk finds them changed so
 *  that they no longer lay the blocks out (or lay out a block larger than
 *  any at creation) fails with PS_ERR_CORRUPT_DATA. Where chunks are
 *  copied (not on the reference backend, which reads host memory in place),
 *  a call where one block of each DELTA column, with the other
 *  host-resident columns of the call, does not fit a staging buffer fails
 *  with PS_ERR_LIMIT (raise device_memory_limit; the largest block is 8,480
 *  bytes). Validation and statuses as ps_column_create_for. */
PS_API ps_status ps_column_create_for_host(ps_context *ctx, const ps_for_desc *desc, ps_column **out);

/** Creates a dictionary-encoded string column: dict is copied; codes is an
 *  unsigned FOR description (type PS_TYPE_UINT8..UINT64, scale 0) whose values
 *  index the dictionary. Codes >= count are reported as corrupt data when a
 *  predicate reads them. */
PS_API ps_status ps_column_create_dict(ps_context *ctx, const ps_dict_desc *dict,
                                       const ps_for_desc *codes, ps_column **out);
/** As ps_column_create_dict, with the codes (and validity) host-resident as
 *  in ps_column_create_for_host (the dictionary is copied). */
PS_API ps_status ps_column_create_dict_host(ps_context *ctx, const ps_dict_desc *dict, const ps_for_desc *codes,
                                            ps_column **out);
/** As ps_column_create_dict, with the codes (and validity) in device buffers. */
PS_API ps_status ps_column_create_dict_device(ps_context *ctx, const ps_dict_desc *dict,
                                              const ps_for_desc *codes, ps_buffer *data,
                                              uint64_t data_offset, ps_buffer *validity,
                                              uint64_t validity_offset, ps_column **out);

/** Names a column (copied, at most PS_COLUMN_NAME_MAX bytes; NULL or "" removes
 *  the name), so that messages about it say "column 'price'" instead of its
 *  slot in the predicate ("column slot 2"). PS_ERR_INVALID_ARGUMENT for a
 *  longer name, PS_ERR_OUT_OF_MEMORY; the old name stays on failure. */
#define PS_COLUMN_NAME_MAX 255
PS_API ps_status ps_column_set_name(ps_column *col, const char *name);
/** The column's name, or "" when it has none. */
PS_API const char *ps_column_name(const ps_column *col);

/** Computes the column's zone maps in blocks of PS_ZONE_BLOCK_ROWS rows
 *  (replacing any it has), for columns made from codes the caller packed or
 *  placed in device buffers. A host pass: the packed codes and validity are
 *  copied back from the device a few megabytes at a time (on the reference
 *  backend they are read in place) and scanned on the host, once per column;
 *  synchronous. PS_ERR_OUT_OF_MEMORY, or a device error, leave the column
 *  as it was. */
PS_API ps_status ps_column_compute_zones(ps_context *ctx, ps_column *col);
/** Gives the column the zone maps *zones (copied; NULL removes them).
 *  PS_ERR_INVALID_ARGUMENT naming the field and block when they do not fit
 *  the column (block count, block_rows, a min above its max or above the
 *  codes' width, null flags on a column without a validity bitmap). */
PS_API ps_status ps_column_set_zones(ps_context *ctx, ps_column *col, const ps_zone_map *zones);
/** Whether the column has zone maps (1) or not (0); with out non-NULL and
 *  zone maps present, *out describes them (the arrays belong to the column
 *  and stay valid until its zone maps change or it is destroyed). */
PS_API int ps_column_zones(const ps_column *col, ps_zone_map *out);

/** Destroys a column. Expressions that reference it must be destroyed first. */
PS_API void ps_column_destroy(ps_column *col);
PS_API uint64_t ps_column_rows(const ps_column *col);
PS_API ps_type ps_column_type(const ps_column *col);
PS_API uint32_t ps_column_width(const ps_column *col);

/* ------------------------------------------------------------------------ */
/* Host encoders and decoders (no context needed; pure functions over host
 * memory). Errors are described in err_buf (may be NULL) when given. */

/** Plain values of a numeric type, as produced by ps_encode_for / ps_decode_for.
 *  PS_TYPE_DECIMAL values are int64 unscaled numbers (the scale travels beside
 *  them: ps_encode_for's scale argument, ps_for_desc.scale). */
typedef struct ps_plain {
  ps_type type;
  const void *values;       /* n values of type */
  uint64_t n;
  const uint8_t *validity;  /* optional Arrow validity bitmap; null slots are ignored */
} ps_plain;

/** Result of an encoder: metadata plus a packed stream allocated with the
 *  allocator (NULL = malloc); free with ps_encoded_destroy. */
typedef struct ps_encoded {
  ps_for_desc desc;         /* desc.data points at data */
  void *data;
  uint8_t *validity;        /* copy of the input validity, or NULL */
  ps_allocator allocator;
} ps_encoded;

PS_API void ps_encoded_destroy(ps_encoded *enc);

/** Encodes integers or floats into a FOR stream. On failure *out is zeroed
 *  (so ps_encoded_destroy(out) is always safe), an exception to the general
 *  out-parameter rule.
 *  width: 0 = smallest width that holds every (non-null) value; otherwise that
 *  exact width (1..64; 8/16/32/64 give the contract's byte-aligned format), with
 *  PS_ERR_NOT_REPRESENTABLE if a value does not fit.
 *  Decimals (int64 unscaled values): scale is their scale, 0..18 (a negative
 *  scale is PS_ERR_INVALID_ARGUMENT); it is recorded, never applied.
 *  Floats: scale < 0 picks the smallest decimal scale 0..18 at which every value
 *  round-trips exactly (FOR-decimal, desc.float_map PS_FLOAT_MAP_DECIMAL), and
 *  where none does (or a value is -0.0 or infinite) a lossless mapping that
 *  keeps every value bit for bit: the smaller of PS_FLOAT_MAP_ALP and
 *  PS_FLOAT_MAP_BITS (docs/float-encoding.md; the exception table lies in
 *  out->data after the codes, freed with it). scale >= 0 demands that decimal
 *  scale (PS_ERR_NOT_REPRESENTABLE naming the first value that does not fit,
 *  PS_ERR_INVALID_ARGUMENT for infinities). scale PS_FLOAT_SCALE_LOSSLESS
 *  takes the lossless mapping whatever the values, an empty or all-null
 *  column too: the partitions of one table then encode alike, so that their
 *  partial query results merge (a FOR-decimal partition is another layout).
 *  NaN is rejected with
 *  PS_ERR_INVALID_ARGUMENT unless nan_as_null is nonzero, in which case it
 *  becomes a null (and so do infinities at a demanded scale). */
#define PS_FLOAT_SCALE_LOSSLESS (-2)
PS_API ps_status ps_encode_for(const ps_plain *in, uint32_t width, int scale, int nan_as_null,
                               const ps_allocator *allocator, char *err_buf, size_t err_size,
                               ps_encoded *out);

/** As ps_encode_for, in the encoding asked for: PS_ENCODING_FOR,
 *  PS_ENCODING_DELTA, or PS_ENCODING_AUTO for the one with the smaller data
 *  (FOR on a tie). out->desc.encoding says which; width is the codes' width
 *  either way. Same statuses as ps_encode_for, and PS_ERR_INVALID_ARGUMENT
 *  for an unknown encoding. */
PS_API ps_status ps_encode(const ps_plain *in, int encoding, uint32_t width, int scale, int nan_as_null,
                           const ps_allocator *allocator, char *err_buf, size_t err_size, ps_encoded *out);

/** Checks a description as ps_column_create_for does (every field; a DELTA
 *  column's every block header, read from desc->data), without a context:
 *  PS_OK or PS_ERR_INVALID_ARGUMENT with the field and value in err_buf. */
PS_API ps_status ps_for_desc_check(const ps_for_desc *desc, char *err_buf, size_t err_size);

/** Decodes a FOR stream (host memory) back to plain values of desc->type
 *  (out holds desc->n values). Null slots decode to 0. Values outside the
 *  logical type give PS_ERR_CORRUPT_DATA. */
PS_API ps_status ps_decode_for(const ps_for_desc *desc, void *out, char *err_buf, size_t err_size);

/** A string array in Arrow utf8 layout, 32-bit offsets (offsets64 may be set
 *  instead of offsets32). */
typedef struct ps_strings {
  uint64_t n;
  const int32_t *offsets32; /* n+1 */
  const int64_t *offsets64; /* n+1 */
  const uint8_t *bytes;
  const uint8_t *validity;  /* optional */
} ps_strings;

/** Result of ps_encode_dict: a sorted dictionary (32-bit offsets) and codes. */
typedef struct ps_encoded_dict {
  ps_dict_desc dict;        /* points into the arrays below; sorted = 1 */
  int32_t *offsets;
  uint8_t *bytes;
  ps_encoded codes;         /* unsigned FOR codes (UINT32 type), smallest width */
  ps_allocator allocator;
} ps_encoded_dict;

/** Encodes strings into a sorted dictionary plus FOR-packed codes. */
PS_API ps_status ps_encode_dict(const ps_strings *in, const ps_allocator *allocator, char *err_buf,
                                size_t err_size, ps_encoded_dict *out);
PS_API void ps_encoded_dict_destroy(ps_encoded_dict *enc);

/* ------------------------------------------------------------------------ */
/* Predicate expressions (the contract's filterLiteral, compareColumns, AND,
 * OR, NOT, plus BETWEEN, IN, LIKE and IS [NOT] NULL). SQL three-valued logic:
 * a row is selected only where the whole predicate is TRUE.
 *
 * Ownership: an expression references its columns (they must outlive it).
 * ps_expr_and/or/not take ownership of their operands on success only; on
 * failure the operands stay the caller's. ps_expr_destroy frees a whole tree. */

typedef struct ps_expr ps_expr;

/** Limits of one predicate (PS_ERR_LIMIT past them, naming the limit; see
 *  docs/design.md "Limits of a predicate"):
 *  - it reads at most PS_PREDICATE_MAX_COLUMNS distinct columns;
 *  - it lowers to at most PS_PREDICATE_MAX_INSTRUCTIONS instructions, where
 *    every comparison, BETWEEN or IN against literals on one FOR column (or
 *    sorted dictionary) and every AND / OR / NOT joining only such leaves on
 *    that same column count together as ONE instruction (x = 1 OR x = 2 OR
 *    ... is one set of codes), any other leaf as one, and each AND / OR / NOT
 *    above them as one;
 *  - its tree is at most PS_PREDICATE_MAX_HEIGHT levels deep (checked by
 *    ps_expr_and / ps_expr_or / ps_expr_not).
 *  An IN list may hold any number of values (one instruction; its code
 *  intervals live in the program's table, up to 2^27 32-bit words). */
#define PS_PREDICATE_MAX_COLUMNS 16
#define PS_PREDICATE_MAX_INSTRUCTIONS 64
#define PS_PREDICATE_MAX_HEIGHT 1024

typedef enum ps_literal_kind {
  PS_LIT_INT64 = 1,
  PS_LIT_UINT64 = 2,
  PS_LIT_FLOAT64 = 3,
  PS_LIT_STRING = 4,
  PS_LIT_DECIMAL = 5 /* exact decimal: unscaled / 10^scale (see ps_lit_decimal) */
} ps_literal_kind;

/** Largest scale of a decimal literal, and its largest number of digits: the
 *  unscaled value lies in [-(10^38 - 1), 10^38 - 1] (SQL DECIMAL(38, scale)). */
#define PS_DECIMAL_MAX_SCALE 38
#define PS_DECIMAL_MAX_DIGITS 38

/** A literal. Strings are (ptr, len) and need not be NUL-terminated; they are
 *  copied when the expression is built. Decimals are exact: the value is
 *  (hi:lo as a 128-bit two's complement integer) / 10^scale. */
typedef struct ps_literal {
  ps_literal_kind kind;
  union {
    int64_t i;
    uint64_t u;
    double f;
    struct {
      const char *ptr;
      size_t len;
    } s;
    struct {
      uint64_t lo;    /* low 64 bits of the unscaled value */
      int64_t hi;     /* high 64 bits (sign included) */
      uint32_t scale; /* 0..PS_DECIMAL_MAX_SCALE */
    } d;
  } v;
} ps_literal;

static inline ps_literal ps_lit_int(int64_t v) {
  ps_literal l;
  l.kind = PS_LIT_INT64;
  l.v.i = v;
  return l;
}
static inline ps_literal ps_lit_uint(uint64_t v) {
  ps_literal l;
  l.kind = PS_LIT_UINT64;
  l.v.u = v;
  return l;
}
static inline ps_literal ps_lit_float(double v) {
  ps_literal l;
  l.kind = PS_LIT_FLOAT64;
  l.v.f = v;
  return l;
}
static inline ps_literal ps_lit_str(const char *ptr, size_t len) {
  ps_literal l;
  l.kind = PS_LIT_STRING;
  l.v.s.ptr = ptr;
  l.v.s.len = len;
  return l;
}
/** The exact decimal unscaled / 10^scale (ps_lit_decimal(12345, 2) is 123.45).
 *  The scale is checked when an expression is built: 0..PS_DECIMAL_MAX_SCALE,
 *  else PS_ERR_INVALID_ARGUMENT (a negative scale passed through the unsigned
 *  parameter is named as negative). */
static inline ps_literal ps_lit_decimal(int64_t unscaled, uint32_t scale) {
  ps_literal l;
  l.kind = PS_LIT_DECIMAL;
  l.v.d.lo = (uint64_t)unscaled;
  l.v.d.hi = unscaled < 0 ? -1 : 0;
  l.v.d.scale = scale;
  return l;
}
/** As ps_lit_decimal with a 128-bit unscaled value (hi:lo, two's complement),
 *  at most PS_DECIMAL_MAX_DIGITS digits (checked when an expression is built). */
static inline ps_literal ps_lit_decimal128(uint64_t lo, int64_t hi, uint32_t scale) {
  ps_literal l;
  l.kind = PS_LIT_DECIMAL;
  l.v.d.lo = lo;
  l.v.d.hi = hi;
  l.v.d.scale = scale;
  return l;
}

/** Parses the text of an SQL numeric literal exactly, as SQL reads it:
 *   - digits only ("42", "-7", "+3"): PS_LIT_INT64 when it fits, else
 *     PS_LIT_UINT64 when it fits, else a PS_LIT_DECIMAL of scale 0 (up to 38
 *     digits);
 *   - digits with a decimal point ("123.45", "-0.5", ".5", "5."): an exact
 *     PS_LIT_DECIMAL whose scale is the number of digits after the point
 *     ("5.50" has scale 2). Leading zeros do not count towards the 38 digits;
 *     trailing zeros after the point are dropped only when the value would
 *     otherwise not fit (the value never changes);
 *   - an exponent ("1e5", "2.5E-3"): PS_LIT_FLOAT64, the double nearest the
 *     exact decimal value (correctly rounded; independent of the locale).
 *  len bytes of text are read (no NUL needed); no surrounding spaces, no
 *  thousands separators, no "NaN" or "inf". Errors: PS_ERR_INVALID_ARGUMENT
 *  for text that is not a numeric literal (the message names the offending
 *  character and its position); PS_ERR_NOT_REPRESENTABLE for a decimal of
 *  more than 38 significant digits, or an exponent whose value overflows a
 *  double. The message goes to err_buf (may be NULL) and *out is untouched
 *  on failure. Pure function: thread safe, no context needed. */
PS_API ps_status ps_literal_parse(const char *text, size_t len, ps_literal *out, char *err_buf, size_t err_size);

/** Writes a decimal literal as SQL text ("-0.50", "123", "1.000"): exactly
 *  scale digits after the point, a leading "0" before it. buf receives at
 *  most 42 bytes including the NUL (PS_DECIMAL_TEXT_SIZE). Returns
 *  PS_ERR_INVALID_ARGUMENT when lit is not a valid decimal literal (scale
 *  over 38, more than 38 digits) and PS_ERR_BUFFER_TOO_SMALL when size is
 *  too small; buf is then untouched. */
#define PS_DECIMAL_TEXT_SIZE 42
PS_API ps_status ps_decimal_format(const ps_literal *lit, char *buf, size_t size);

/** column <op> literal (the contract's filterLiteral). Numeric literals on FOR
 *  columns compare by value (integers exactly, across types; floats as IEEE
 *  doubles); string literals on dictionary columns compare bytewise.
 *  Decimal literals compare exactly against integer columns (x = 5.5 selects
 *  nothing, x < 5.5 is x <= 5, x = 5.0 is x = 5); against float columns the
 *  decimal is first rounded to the nearest double (ties to even) and then
 *  compared as a double literal. A decimal literal with a scale over 38 or
 *  more than 38 digits is PS_ERR_INVALID_ARGUMENT. */
PS_API ps_status ps_expr_compare(ps_context *ctx, ps_column *col, ps_cmp op, ps_literal lit,
                                 ps_expr **out);
/** a <op> b, row by row (the contract's compareColumns): FOR against FOR (any
 *  numeric types, widths, references) or dictionary against dictionary (same or
 *  different dictionaries). Both columns must have the same row count. */
PS_API ps_status ps_expr_compare_columns(ps_context *ctx, ps_column *a, ps_cmp op, ps_column *b,
                                         ps_expr **out);
/** lo <= col AND col <= hi. */
PS_API ps_status ps_expr_between(ps_context *ctx, ps_column *col, ps_literal lo, ps_literal hi,
                                 ps_expr **out);
/** col IN (list[0], ..., list[count-1]); count may be 0 (always FALSE for non-null rows). */
PS_API ps_status ps_expr_in(ps_context *ctx, ps_column *col, const ps_literal *list, size_t count,
                            ps_expr **out);
/** col LIKE pattern (negate = 0) or NOT LIKE (negate != 0), on a dictionary
 *  column. '%' any sequence, '_' one UTF-8 character; escape < 0 means no escape
 *  character, else it is the escape byte (0..127). */
PS_API ps_status ps_expr_like(ps_context *ctx, ps_column *col, const char *pattern, size_t len,
                              int escape, int negate, ps_expr **out);
/** col IS NULL / col IS NOT NULL (never UNKNOWN). */
PS_API ps_status ps_expr_is_null(ps_context *ctx, ps_column *col, int negate, ps_expr **out);
/** a AND b, a OR b, NOT a (Kleene logic). */
PS_API ps_status ps_expr_and(ps_context *ctx, ps_expr *a, ps_expr *b, ps_expr **out);
PS_API ps_status ps_expr_or(ps_context *ctx, ps_expr *a, ps_expr *b, ps_expr **out);
PS_API ps_status ps_expr_not(ps_context *ctx, ps_expr *a, ps_expr **out);
/** Frees an expression tree. NULL ok. */
PS_API void ps_expr_destroy(ps_expr *expr);
/** Rows of the columns the expression reads. */
PS_API uint64_t ps_expr_rows(const ps_expr *expr);

/* ------------------------------------------------------------------------ */
/* Evaluation */

/** Evaluates expr and writes the selection bitmap (Arrow boolean layout:
 *  ceil(n/8) bytes, LSB first, bits past n zero) into host memory, and the
 *  number of selected rows into *count if count is non-NULL.
 *  bitmap_size must be at least ceil(n/8) (PS_ERR_BUFFER_TOO_SMALL otherwise);
 *  bytes past ceil(n/8) are not touched. PS_ERR_CORRUPT_DATA if a code read is
 *  outside its column's range (the bitmap is then left untouched). */
PS_API ps_status ps_filter(ps_context *ctx, const ps_expr *expr, uint8_t *bitmap,
                           uint64_t bitmap_size, uint64_t *count);

/** As ps_filter, writing the bitmap into a device buffer at byte offset
 *  (which must be a multiple of 4). On PS_ERR_CORRUPT_DATA the bitmap bytes in
 *  the buffer are unspecified (the scan detects corruption as it writes). */
PS_API ps_status ps_filter_device(ps_context *ctx, const ps_expr *expr, ps_buffer *bitmap,
                                  uint64_t offset, uint64_t *count);

/** Counts the selected rows without materializing a bitmap. */
PS_API ps_status ps_filter_count(ps_context *ctx, const ps_expr *expr, uint64_t *count);


/* ------------------------------------------------------------------------ */
/* After the filter: incremental selections, byte masks, row ids, late
 * materialization and aggregates. A "selection" is a bitmap in Arrow boolean
 * layout held in a device buffer (as written by ps_filter_device). */

/** Evaluates expr only on rows already selected: out = in AND expr (Kleene
 *  TRUE only). in and out are device bitmaps of ps_expr_rows(expr) rows at
 *  4-byte-aligned offsets; out may be the same place as in (in-place
 *  refinement). count (optional) receives the number of rows left selected. */
PS_API ps_status ps_filter_refine(ps_context *ctx, const ps_expr *expr, const ps_buffer *in, uint64_t in_offset,
                                  ps_buffer *out, uint64_t out_offset, uint64_t *count);

/** Evaluates expr into a byte-per-row mask (1 = selected, 0 = not), n bytes
 *  at `offset` of a device buffer (for engines that use boolean masks). */
PS_API ps_status ps_filter_mask_device(ps_context *ctx, const ps_expr *expr, ps_buffer *mask, uint64_t offset,
                                       uint64_t *count);
/** As ps_filter_mask_device, into host memory (mask_size >= n). */
PS_API ps_status ps_filter_mask(ps_context *ctx, const ps_expr *expr, uint8_t *mask, uint64_t mask_size,
                                uint64_t *count);

/** What the calls on a context read and skipped, summed since it was created
 *  or ps_context_scan_stats_reset: the bytes of packed codes and validity
 *  bitmaps that the calls with a predicate (filters, counts, masks, row ids,
 *  refinement, queries) asked the device to read, the rows they evaluated
 *  row by row, and the rows zone maps decided without reading them. Fields
 *  may be appended (struct_size). */
typedef struct ps_scan_stats {
  uint32_t struct_size;   /* sizeof(ps_scan_stats), set by the caller */
  uint64_t bytes_read;    /* packed codes and validity bytes of the evaluated rows */
  uint64_t rows_scanned;  /* rows evaluated by the device */
  uint64_t rows_skipped;  /* rows of blocks where no row can be TRUE: no codes read */
  uint64_t rows_all_true; /* rows of blocks where every row is TRUE: the predicate's columns not read */
} ps_scan_stats;
/** Fills the first out->struct_size bytes of *out. PS_ERR_INVALID_ARGUMENT
 *  for a NULL argument or a struct_size smaller than the first two fields. */
PS_API ps_status ps_context_scan_stats(const ps_context *ctx, ps_scan_stats *out);
PS_API void ps_context_scan_stats_reset(ps_context *ctx);
/** Turns zone-map pruning on (nonzero) or off for the calls made after it
 *  (ps_context_options.zone_pruning). */
PS_API void ps_context_set_zone_pruning(ps_context *ctx, int on);

/** Integer type of row ids. */
typedef enum ps_index_type { PS_INDEX_UINT32 = 4, PS_INDEX_UINT64 = 8 } ps_index_type;

/** Row ids of the rows set in a selection (a device bitmap) of n rows,
 *  ascending, into host memory: ids (NULL asks only for the count) holds
 *  capacity ids; if fewer than the count, PS_ERR_BUFFER_TOO_SMALL and *count
 *  is still set (nothing is written). PS_INDEX_UINT32 with n > 2^32 rows:
 *  PS_ERR_INVALID_ARGUMENT. */
PS_API ps_status ps_selection_row_ids(ps_context *ctx, const ps_buffer *selection, uint64_t selection_offset,
                                      uint64_t n, ps_index_type type, void *ids, uint64_t capacity, uint64_t *count);
/** As ps_selection_row_ids, into a device buffer at ids_offset (a multiple
 *  of the id size), written with the size-then-retrieve pattern (count per
 *  block, exclusive scan, each block writes at its offset; no per-row
 *  atomics). ids NULL asks only for the count. */
PS_API ps_status ps_selection_row_ids_device(ps_context *ctx, const ps_buffer *selection, uint64_t selection_offset,
                                             uint64_t n, ps_index_type type, ps_buffer *ids, uint64_t ids_offset,
                                             uint64_t capacity, uint64_t *count);
/** Evaluates expr and returns its row ids in host memory allocated exactly
 *  with the context's allocator (free with ps_free). *ids is NULL when the
 *  count is 0. */
PS_API ps_status ps_filter_row_ids(ps_context *ctx, const ps_expr *expr, ps_index_type type, void **ids,
                                   uint64_t *count);
/** Evaluates expr and writes the ids of the rows where it is TRUE, ascending,
 *  into a device buffer at ids_offset (a multiple of the id size): the filter
 *  and the row ids in one call, and on backends that fuse them (CUDA, for a
 *  one-range filter on a column of up to 32 bits) in one pass over the codes,
 *  with no bitmap in between. capacity: how many ids fit there. *count
 *  receives the number of selected rows; if it exceeds capacity the call
 *  returns PS_ERR_BUFFER_TOO_SMALL (nothing past capacity ids is written, the
 *  ids before it are unspecified): ask again with a larger buffer, or size it
 *  first with ps_filter_count. ids NULL: count only. PS_INDEX_UINT32 with more
 *  than 2^32 rows: PS_ERR_INVALID_ARGUMENT. PS_ERR_CORRUPT_DATA as for
 *  ps_filter_device (the ids bytes are then unspecified). */
PS_API ps_status ps_filter_row_ids_device(ps_context *ctx, const ps_expr *expr, ps_index_type type, ps_buffer *ids,
                                          uint64_t ids_offset, uint64_t capacity, uint64_t *count);
/** Frees memory the library allocated for the caller with the context's allocator. */
PS_API void ps_free(ps_context *ctx, void *ptr);

/** Late materialization: decodes rows ids[0..count) (host memory, row ids
 *  of `type`) of any column into plain values in host memory.
 *  FOR columns: values of the column's logical type (ps_type_size bytes each;
 *  decimal columns: int64 unscaled values, the scale is the column's).
 *  Dictionary columns: dictionary indexes (M + code) as uint32.
 *  validity (optional): a bitmap of count bits, 1 = valid; null rows' values
 *  are 0. An id >= n gives PS_ERR_INVALID_ARGUMENT; a corrupt code
 *  PS_ERR_CORRUPT_DATA; after either the outputs are untouched. */
PS_API ps_status ps_gather_values(ps_context *ctx, const ps_column *col, const void *ids, ps_index_type type,
                                  uint64_t count, void *values, uint8_t *validity);
/** As ps_gather_values, with ids, values and validity in device buffers:
 *  ids at ids_offset, values at values_offset (aligned to the value size),
 *  validity (optional) at validity_offset (multiple of 4). The ids are
 *  checked as they are read on the device, so after an error the bytes of
 *  values/validity in the device buffers are unspecified (as for
 *  ps_filter_device). */
PS_API ps_status ps_gather_values_device(ps_context *ctx, const ps_column *col, const ps_buffer *ids,
                                         uint64_t ids_offset, ps_index_type type, uint64_t count, ps_buffer *values,
                                         uint64_t values_offset, ps_buffer *validity, uint64_t validity_offset);
/** The strings of rows ids[0..count) of a dictionary column, in Arrow utf8
 *  layout allocated with the context's allocator: offsets (count+1 int64) and
 *  bytes; free both with ps_free. Null rows are empty strings with validity 0
 *  (validity optional, ceil(count/8) bytes, host). */
PS_API ps_status ps_gather_strings(ps_context *ctx, const ps_column *col, const void *ids, ps_index_type type,
                                   uint64_t count, int64_t **offsets, uint8_t **bytes, uint8_t *validity);

/** Aggregates of a FOR column over a selection, computed in code space.
 *  Nulls are excluded. With no row counted, has_value is 0 and sum/min/max
 *  are NULL in the SQL sense (fields zero). */
typedef struct ps_aggregates {
  uint64_t count;    /* selected non-null rows */
  int has_value;     /* count > 0 */
  ps_type type;      /* the column's logical type */
  /* Exact sum of the values (integers), or of M + code (floats: the exact
   * sum of the scaled integers), as a two's complement 128-bit number. */
  uint64_t sum_lo;
  int64_t sum_hi;
  int sum_fits_int64; /* the exact sum fits int64: sum_int64 holds it */
  int64_t sum_int64;
  /* The sum as a double: integers (double)exact; floats
   * (double)exact_scaled_sum / 10^scale. Identical on every backend.
   * Lossless float columns (float_map ALP or BITS): the exact sum of the
   * selected doubles rounded once, as a query's SUM of the column
   * (docs/float-encoding.md, "SUM and AVG"); NaN where that SUM is
   * PS_ERR_NOT_REPRESENTABLE (a selected infinity, or values more than 125
   * binary orders of magnitude apart). Their sum_lo, sum_hi, sum_fits_int64
   * and sum_int64 are zero (no exact integer form). The sum reads every
   * row's code, so a corrupt code in a row the selection leaves out fails
   * such a column's ps_aggregate with PS_ERR_CORRUPT_DATA too. */
  double sum_double;
  /* Min and max: .i for signed, .u for unsigned, .f for floats. */
  union {
    int64_t i;
    uint64_t u;
    double f;
  } min, max;
  /* The column's scale: a decimal column's sum (sum_lo/sum_hi/sum_int64) and
   * min/max (.i) are unscaled, value = unscaled / 10^scale; its sum_double is
   * (double)exact_sum / 10^scale. Floats: the scale of the exact sum. */
  uint32_t scale;
} ps_aggregates;

/** Count, sum, min and max of a FOR column over a selection (NULL = every row)
 *  at selection_offset (multiple of 4). Integer sums are exact (128-bit); a
 *  float sum is computed exactly on the scaled integers and rounded once at
 *  the end, so every backend returns the same bits. */
PS_API ps_status ps_aggregate(ps_context *ctx, const ps_column *col, const ps_buffer *selection,
                              uint64_t selection_offset, ps_aggregates *out);

/* ------------------------------------------------------------------------ */
/* Queries: aggregates of arithmetic over the rows a predicate selects, with an
 * optional GROUP BY, in one call (docs/design.md, "Arithmetic and aggregates"):
 *
 *   SELECT k1, k2, agg(value), ... FROM table WHERE pred GROUP BY k1, k2
 *
 * Values are exact: every value expression has a decimal scale s and stands
 * for an integer u ("unscaled") divided by 10^s.
 *  - Integer FOR columns: M + code, scale 0. Float FOR columns: the exact
 *    decimal (M + code) / 10^scale of the column (not the rounded double).
 *    Dictionary columns: the dictionary index M + code, scale 0.
 *  - Literals: integers (scale 0) and exact decimals.
 *  - a + b, a - b: scale max(sa, sb) (the operand of the smaller scale is
 *    multiplied by a power of ten first); a * b: scale sa + sb.
 *  - Every value, intermediate and final, must fit PS_QUERY_MAX_DIGITS decimal
 *    digits (|u| <= 10^38 - 1, SQL DECIMAL(38)). A selected row whose value
 *    does not fit makes the query fail with PS_ERR_OVERFLOW, never a wrapped
 *    or rounded number. A scale above PS_QUERY_MAX_SCALE is refused when the
 *    value is built (PS_ERR_LIMIT).
 *  - NULL in, NULL out: + - * with a NULL operand (a null row of a column, or
 *    ps_value_null) is NULL.
 *  - CASE WHEN pred THEN a ELSE b END: a on the rows where pred is TRUE, b
 *    where it is FALSE or UNKNOWN (SQL); scale max(sa, sb).
 *
 * Aggregates are computed over the rows where `where` is TRUE (every row if
 * NULL); NULL values are skipped:
 *  - COUNT(*): the rows; COUNT(v): the rows where v is not NULL (scale 0);
 *  - SUM(v): exact, at v's scale; MIN(v), MAX(v): at v's scale;
 *  - AVG(v): the exact sum divided once by COUNT(v), at scale
 *    max(v's scale, PS_QUERY_AVG_MIN_SCALE), rounded half away from zero;
 *  - SUM, MIN, MAX and AVG of no values are NULL; COUNT of none is 0.
 *  - A lossless float column (ps_for_desc.float_map ALP or BITS) takes no
 *    arithmetic; its SUM and AVG are the exact sum of its doubles (AVG: over
 *    the count) rounded once to the nearest double, ties to even, the datum
 *    holding that double and its shortest decimal; PS_ERR_NOT_REPRESENTABLE
 *    naming the aggregate, the column and the row where a selected value is
 *    infinite or has a bit more than 125 binary orders of magnitude below
 *    the column's largest (docs/float-encoding.md, "SUM and AVG"), or where
 *    no decimal of 38 digits at scale 0..38 holds the result.
 * Sums are accumulated exactly in more than 128 bits, so the order of
 * accumulation never matters. A SUM that does not fit 38 digits, or an AVG
 * whose average does not fit 38 digits at its scale, gives PS_ERR_OVERFLOW,
 * on every backend alike; an AVG's sum need not fit (200 values of 0.5 at
 * scale 38 average 0.5, though their SUM overflows).
 *
 * GROUP BY one or two key columns (dictionary columns, FOR columns of any
 * type), any number of distinct keys: one result row per group that has at least one
 * selected row, in ascending key order (k1, then k2): numbers by value,
 * dictionary strings bytewise (memcmp, a proper prefix first); NULL keys form
 * one group that sorts after every value; an unsorted dictionary that repeats
 * a string gives one group for it (reported with the smallest of its
 * indexes). A key's domain is its column's codes
 * (2^width, or the dictionary's size if smaller), plus one for NULL where the
 * column has a validity bitmap. Up to PS_QUERY_MAX_GROUPS possible keys (the
 * product of the domains) the groups are a table of every possible key; past
 * it the run first collects the distinct keys of the selected rows (a hash
 * table on the device) and numbers them in key order, then aggregates (two
 * scans). The product must stay below 2^64 - 1, and the distinct keys at most
 * options.max_groups (PS_ERR_LIMIT otherwise, naming the columns and sizes).
 * Without GROUP BY the result has exactly one row, even when no row is
 * selected (SQL).
 *
 * A key may be a function of a date or timestamp column (key_fn, below):
 * date_trunc(part, x) or extract(field FROM x), computed on the codes in the
 * query's pass. The column is a signed integer column counting key_day_units
 * units a day from 1970-01-01 (a DATE of days: 1; a TIMESTAMP of seconds,
 * ms, us or ns: 86400 * 10^0, 3, 6 or 9), read in UTC on the proleptic
 * Gregorian calendar. Its domain is the function's values between the
 * column's reference M and M + its largest code (plus one for NULL): a
 * truncation's distinct units there, a field's range (12 months, 31 days, 7
 * weekdays, 366 days of the year, 24 hours, 60 minutes or seconds).
 *
 * Every backend returns the same results, bit for bit. */

#define PS_QUERY_MAX_DIGITS 38            /* digits of every value: |u| <= 10^38 - 1 */
#define PS_QUERY_MAX_SCALE 38             /* largest scale of a value */
#define PS_QUERY_AVG_MIN_SCALE 6          /* AVG's result has at least this scale */
#define PS_QUERY_MAX_GROUPS 131072        /* product of the key domains of a table of every key (2^17) */
#define PS_QUERY_GROUPS_LIMIT 2147483648u /* distinct keys, default of options.max_groups (2^31) */
#define PS_QUERY_MAX_KEYS 2               /* GROUP BY columns */
#define PS_QUERY_MAX_AGGS 16              /* aggregates of one query */

/** Functions of a GROUP BY key (ps_query_desc.key_fn). The key's value is,
 *  for PS_KEY_TRUNC_*, the first instant of the unit that holds the column's
 *  value, in the column's units (DuckDB's date_trunc: weeks start on Monday);
 *  for the fields, extract's integer: year, quarter 1..4, month 1..12, day
 *  of the month 1..31, hour 0..23, minute 0..59, second 0..59 (whole seconds),
 *  day of the week 0..6 (Sunday = 0), day of the year 1..366. The parts
 *  shorter than a day need key_day_units a multiple of 86400. */
typedef enum ps_key_fn {
  PS_KEY_VALUE = 0, /* the column's value */
  PS_KEY_TRUNC_SECOND = 1,
  PS_KEY_TRUNC_MINUTE = 2,
  PS_KEY_TRUNC_HOUR = 3,
  PS_KEY_TRUNC_DAY = 4,
  PS_KEY_TRUNC_WEEK = 5,
  PS_KEY_TRUNC_MONTH = 6,
  PS_KEY_TRUNC_QUARTER = 7,
  PS_KEY_TRUNC_YEAR = 8,
  PS_KEY_YEAR = 9,
  PS_KEY_QUARTER = 10,
  PS_KEY_MONTH = 11,
  PS_KEY_DAY = 12,
  PS_KEY_HOUR = 13,
  PS_KEY_MINUTE = 14,
  PS_KEY_SECOND = 15,
  PS_KEY_DOW = 16,
  PS_KEY_DOY = 17
} ps_key_fn;

/** A value expression (the operand of an aggregate). Ownership as for ps_expr:
 *  a value references its columns (they must outlive it); ps_value_arith and
 *  ps_value_case take ownership of their operands on success only;
 *  ps_value_destroy frees a whole tree, CASE predicates included. */
typedef struct ps_value ps_value;

/** A column's value (its scale as above): FOR or dictionary column. */
PS_API ps_status ps_value_column(ps_context *ctx, ps_column *col, ps_value **out);
/** A literal: PS_LIT_INT64 and PS_LIT_UINT64 (scale 0), and exact decimals
 *  (PS_LIT_DECIMAL: as ps_value_decimal, the same errors). A float literal
 *  (PS_LIT_FLOAT64) or a string is PS_ERR_TYPE_MISMATCH: arithmetic is exact;
 *  write a decimal (ps_value_decimal) instead. */
PS_API ps_status ps_value_literal(ps_context *ctx, ps_literal lit, ps_value **out);
/** The exact decimal (hi:lo, a two's complement 128-bit integer) / 10^scale:
 *  scale 0..PS_QUERY_MAX_SCALE and at most PS_QUERY_MAX_DIGITS digits, else
 *  PS_ERR_INVALID_ARGUMENT. ps_value_decimal(ctx, 5, 0, 2, &v) is 0.05. */
PS_API ps_status ps_value_decimal(ps_context *ctx, uint64_t lo, int64_t hi, uint32_t scale, ps_value **out);
/** SQL NULL (scale 0). */
PS_API ps_status ps_value_null(ps_context *ctx, ps_value **out);

/** Arithmetic operators of value expressions. */
typedef enum ps_arith { PS_ADD = 0, PS_SUB = 1, PS_MUL = 2 } ps_arith;

/** a <op> b. PS_ERR_LIMIT when the result's scale would exceed
 *  PS_QUERY_MAX_SCALE; PS_ERR_INVALID_ARGUMENT when the operands read columns
 *  of different row counts. Ownership of a and b passes on success only. */
PS_API ps_status ps_value_arith(ps_context *ctx, ps_arith op, ps_value *a, ps_value *b, ps_value **out);
/** CASE WHEN when THEN then_value ELSE else_value END; else_value NULL means
 *  ELSE NULL. Ownership of when, then_value and else_value passes on success
 *  only. */
PS_API ps_status ps_value_case(ps_context *ctx, ps_expr *when, ps_value *then_value, ps_value *else_value,
                               ps_value **out);
/** Frees a value tree. NULL ok. */
PS_API void ps_value_destroy(ps_value *value);
/** The value's decimal scale. */
PS_API uint32_t ps_value_scale(const ps_value *value);

/** Aggregate functions. */
typedef enum ps_agg_kind {
  PS_AGG_COUNT_STAR = 1, /* COUNT(*): value must be NULL */
  PS_AGG_COUNT = 2,      /* COUNT(value) */
  PS_AGG_SUM = 3,
  PS_AGG_MIN = 4,
  PS_AGG_MAX = 5,
  PS_AGG_AVG = 6
} ps_agg_kind;

/** One aggregate of a query; the value is borrowed (it must outlive the query). */
typedef struct ps_agg {
  ps_agg_kind kind;
  const ps_value *value; /* NULL for PS_AGG_COUNT_STAR */
} ps_agg;

/** What a query computes. Call ps_query_desc_init first; fields may be
 *  appended in later versions (struct_size tells which are present). Every
 *  pointer is borrowed by ps_query_create's query. */
typedef struct ps_query_desc {
  uint32_t struct_size;                     /* sizeof(ps_query_desc) */
  uint64_t rows;                            /* the table's rows: every column read must have as many */
  const ps_expr *where;                     /* NULL = every row */
  uint32_t n_keys;                          /* GROUP BY columns, 0..PS_QUERY_MAX_KEYS */
  const ps_column *keys[PS_QUERY_MAX_KEYS]; /* FOR or dictionary columns */
  uint32_t n_aggs;                          /* 1..PS_QUERY_MAX_AGGS */
  const ps_agg *aggs;                       /* n_aggs aggregates, in SELECT order */
  /* Appended after 0.1.0: a function of each key (PS_KEY_VALUE: none) and, where
   * there is one, the column's units in a day (see above). */
  uint32_t key_fn[PS_QUERY_MAX_KEYS]; /* ps_key_fn */
  int64_t key_day_units[PS_QUERY_MAX_KEYS];
} ps_query_desc;

/** Fills *desc with zeros and struct_size. */
PS_API void ps_query_desc_init(ps_query_desc *desc);

/** A validated, prepared query: lowered once, run any number of times. */
typedef struct ps_query ps_query;

/** Validates desc and prepares the query (lowering its predicates and values
 *  to device programs). The expressions, values and columns desc names must
 *  outlive the query. Errors: PS_ERR_INVALID_ARGUMENT (a NULL or malformed
 *  field, row counts that differ; the message names the field), PS_ERR_LIMIT
 *  (too many keys, aggregates or groups; more than 16 distinct columns, 8
 *  distinct CASE predicates, 128 value instructions in all or values nested 8
 *  deep), PS_ERR_TYPE_MISMATCH (COUNT(*) with a value, an aggregate without
 *  one), and the errors of lowering the WHERE predicate (done here, once). */
PS_API ps_status ps_query_create(ps_context *ctx, const ps_query_desc *desc, ps_query **out);
/** Frees a query. NULL ok. */
PS_API void ps_query_destroy(ps_query *query);

/** The result of a run: groups (result rows) of keys and aggregate values. */
typedef struct ps_query_result ps_query_result;

/** Runs the query over all rows on the context's backend: the WHERE
 *  predicate, the arithmetic and the aggregation in one fused pass over the
 *  packed codes (CASE predicates are evaluated first, into one bitmap each).
 *  Synchronous. Errors: PS_ERR_OVERFLOW (a selected row's value, a SUM or
 *  an AVG's average does not fit 38 digits), PS_ERR_CORRUPT_DATA (a code
 *  outside its column's range where it is read; it outranks an overflow),
 *  device errors.
 *  The WHERE short-cuts row by row: the right operand of an AND is evaluated
 *  (its columns read) only on rows where the left one is not FALSE, of an OR
 *  only where the left one is not TRUE; values and keys are read on selected
 *  rows only; CASE predicates on every row (docs/design.md). *out is written on success only; free it
 *  with ps_query_result_destroy. */
PS_API ps_status ps_query_run(ps_context *ctx, ps_query *query, ps_query_result **out);
/** As ps_query_run, for a result that is one part of a larger one (a
 *  partition of a table, merged with the others' through
 *  ps_query_result_export_partial and ps_query_merge_*, packscan_arrow.h): a
 *  sum or average that does not fit 38 digits is not an error here, since the
 *  other partitions' sums may bring it back into range; that value alone
 *  reads as PS_ERR_OVERFLOW from ps_query_result_value, and its exact state
 *  is kept for the partial. Every other error is ps_query_run's. */
PS_API ps_status ps_query_run_partial(ps_context *ctx, ps_query *query, ps_query_result **out);
/** Frees a result. NULL ok. */
PS_API void ps_query_result_destroy(ps_query_result *result);
/** Number of result rows (groups); 1 without GROUP BY. */
PS_API uint64_t ps_query_result_groups(const ps_query_result *result);

/** One exact value of a result: unscaled (hi:lo, two's complement 128-bit) /
 *  10^scale, or NULL. */
typedef struct ps_datum {
  int32_t is_null;  /* nonzero: SQL NULL (the other fields are zero) */
  uint32_t scale;   /* decimal scale */
  uint64_t lo;      /* unscaled value, low 64 bits */
  int64_t hi;       /* unscaled value, high 64 bits (sign included) */
  double as_double; /* the double nearest the exact value (ties to even) */
  const char *str;  /* dictionary keys: the key's string (not NUL-terminated),
                       valid while its column lives; NULL otherwise */
  size_t str_len;
} ps_datum;

/** Key `key` (0..n_keys-1) of result row `group` (ascending order): the
 *  column's value as in a value expression (dictionary: index, and str).
 *  PS_ERR_INVALID_ARGUMENT for an index out of range. */
PS_API ps_status ps_query_result_key(const ps_query_result *result, uint64_t group, uint32_t key, ps_datum *out);
/** Aggregate `agg` (0..n_aggs-1) of result row `group`. COUNT: scale 0; SUM,
 *  MIN, MAX: the value's scale; AVG: as documented above. PS_ERR_OVERFLOW
 *  (out untouched) for a sum or average of a partial result
 *  (ps_query_run_partial, ps_query_merge_finish_partial) that does not fit. */
PS_API ps_status ps_query_result_value(const ps_query_result *result, uint64_t group, uint32_t agg,
                                       ps_datum *out);

/** Writes a datum as exact SQL text ("-0.50", "123", "NULL"; dictionary keys:
 *  their string's bytes): at most PS_DATUM_TEXT_SIZE bytes for numbers,
 *  including the NUL. PS_ERR_BUFFER_TOO_SMALL (buf untouched) when it does
 *  not fit. */
#define PS_DATUM_TEXT_SIZE 48
PS_API ps_status ps_datum_format(const ps_datum *datum, char *buf, size_t size);

/* ------------------------------------------------------------------------ */
/* Deprecated names: the 0.1.0 names that the rules above replaced, kept
 * for one release and removed in the release after it. Each is the
 * function its message names, with the same parameters, results and
 * statuses; they stay exported from the library so that programs linked
 * against them keep running. docs/api-changes.md lists them. */

/** Use ps_selection_row_ids_device (the device form carries `_device`). */
PS_API PS_DEPRECATED("ps_selection_row_ids_device") ps_status
    ps_row_ids(ps_context *ctx, const ps_buffer *selection, uint64_t selection_offset, uint64_t n, ps_index_type type,
               ps_buffer *ids, uint64_t ids_offset, uint64_t capacity, uint64_t *count);
/** Use ps_selection_row_ids (the host form is unsuffixed). */
PS_API PS_DEPRECATED("ps_selection_row_ids") ps_status
    ps_row_ids_host(ps_context *ctx, const ps_buffer *selection, uint64_t selection_offset, uint64_t n,
                    ps_index_type type, void *ids, uint64_t capacity, uint64_t *count);
/** Use ps_gather_values_device. */
PS_API PS_DEPRECATED("ps_gather_values_device") ps_status
    ps_gather(ps_context *ctx, const ps_column *col, const ps_buffer *ids, uint64_t ids_offset, ps_index_type type,
              uint64_t count, ps_buffer *values, uint64_t values_offset, ps_buffer *validity, uint64_t validity_offset);
/** Use ps_gather_values. */
PS_API PS_DEPRECATED("ps_gather_values") ps_status
    ps_gather_host(ps_context *ctx, const ps_column *col, const void *ids, ps_index_type type, uint64_t count,
                   void *values, uint8_t *validity);
/** Use ps_gather_strings. */
PS_API PS_DEPRECATED("ps_gather_strings") ps_status
    ps_gather_strings_host(ps_context *ctx, const ps_column *col, const void *ids, ps_index_type type, uint64_t count,
                           int64_t **offsets, uint8_t **bytes, uint8_t *validity);
/** Use ps_encoded_destroy. */
PS_API PS_DEPRECATED("ps_encoded_destroy") void ps_encoded_free(ps_encoded *enc);
/** Use ps_encoded_dict_destroy. */
PS_API PS_DEPRECATED("ps_encoded_dict_destroy") void ps_encoded_dict_free(ps_encoded_dict *enc);

#ifdef __cplusplus
}
#endif

#endif /* PACKSCAN_H */
