/* Arrow interop for packscan: columns in through the Arrow C Data Interface
 * (ArrowSchema + ArrowArray, or an ArrowArrayStream of record batches), and
 * results out as Arrow arrays that own their memory. No Arrow library is
 * needed: the ABI structs below are written from the specification
 * (https://arrow.apache.org/docs/format/CDataInterface.html,
 * CDeviceDataInterface.html, CStreamInterface.html) under the guards it
 * prescribes, so this header coexists with arrow/c/abi.h and nanoarrow.
 *
 * Device export (ArrowDeviceArray with ARROW_DEVICE_CUDA) is declared in
 * packscan_cuda.h, which needs the CUDA runtime headers.
 */
#ifndef PACKSCAN_ARROW_H
#define PACKSCAN_ARROW_H

#include "packscan.h"

#ifdef __cplusplus
extern "C" {
#endif

/* ---- The Arrow C ABI (verbatim layout from the specification) ------------ */

#ifndef ARROW_C_DATA_INTERFACE
#define ARROW_C_DATA_INTERFACE

#define ARROW_FLAG_DICTIONARY_ORDERED 1
#define ARROW_FLAG_NULLABLE 2
#define ARROW_FLAG_MAP_KEYS_SORTED 4

struct ArrowSchema {
  /* Array type description */
  const char *format;
  const char *name;
  const char *metadata;
  int64_t flags;
  int64_t n_children;
  struct ArrowSchema **children;
  struct ArrowSchema *dictionary;

  /* Release callback */
  void (*release)(struct ArrowSchema *);
  /* Opaque producer-specific data */
  void *private_data;
};

struct ArrowArray {
  /* Array data description */
  int64_t length;
  int64_t null_count;
  int64_t offset;
  int64_t n_buffers;
  int64_t n_children;
  const void **buffers;
  struct ArrowArray **children;
  struct ArrowArray *dictionary;

  /* Release callback */
  void (*release)(struct ArrowArray *);
  /* Opaque producer-specific data */
  void *private_data;
};

#endif /* ARROW_C_DATA_INTERFACE */

#ifndef ARROW_C_DEVICE_DATA_INTERFACE
#define ARROW_C_DEVICE_DATA_INTERFACE

/* Device type of the memory an ArrowDeviceArray's buffers point to. */
typedef int32_t ArrowDeviceType;

#define ARROW_DEVICE_CPU 1
#define ARROW_DEVICE_CUDA 2
#define ARROW_DEVICE_CUDA_HOST 3
#define ARROW_DEVICE_OPENCL 4
#define ARROW_DEVICE_VULKAN 7
#define ARROW_DEVICE_METAL 8
#define ARROW_DEVICE_VPI 9
#define ARROW_DEVICE_ROCM 10
#define ARROW_DEVICE_ROCM_HOST 11
#define ARROW_DEVICE_EXT_DEV 12
#define ARROW_DEVICE_CUDA_MANAGED 13
#define ARROW_DEVICE_ONEAPI 14
#define ARROW_DEVICE_WEBGPU 15
#define ARROW_DEVICE_HEXAGON 16

struct ArrowDeviceArray {
  /* the Allocated Array: buffers hold device pointers */
  struct ArrowArray array;
  /* The device id to identify a specific device */
  int64_t device_id;
  /* The type of device which can access this memory */
  ArrowDeviceType device_type;
  /* An event-like object to synchronize on if needed (CUDA: cudaEvent_t*) */
  void *sync_event;
  /* Reserved bytes for future expansion */
  int64_t reserved[3];
};

#endif /* ARROW_C_DEVICE_DATA_INTERFACE */

#ifndef ARROW_C_STREAM_INTERFACE
#define ARROW_C_STREAM_INTERFACE

struct ArrowArrayStream {
  int (*get_schema)(struct ArrowArrayStream *, struct ArrowSchema *out);
  int (*get_next)(struct ArrowArrayStream *, struct ArrowArray *out);
  const char *(*get_last_error)(struct ArrowArrayStream *);
  void (*release)(struct ArrowArrayStream *);
  void *private_data;
};

#endif /* ARROW_C_STREAM_INTERFACE */

/* ---- Import ------------------------------------------------------------- */

/** The Arrow type a packscan column was imported from; export gives it back. */
typedef enum ps_arrow_kind {
  PS_ARROW_INT8 = 1,
  PS_ARROW_INT16,
  PS_ARROW_INT32,
  PS_ARROW_INT64,
  PS_ARROW_UINT8,
  PS_ARROW_UINT16,
  PS_ARROW_UINT32,
  PS_ARROW_UINT64,
  PS_ARROW_FLOAT32,
  PS_ARROW_FLOAT64,
  PS_ARROW_DECIMAL128, /* column: PS_TYPE_DECIMAL, the type's scale (unscaled values within int64) */
  PS_ARROW_DATE32,     /* column: int32 days */
  PS_ARROW_DATE64,     /* column: int64 milliseconds */
  PS_ARROW_TIMESTAMP,  /* column: int64 in `unit`, with the time zone kept */
  PS_ARROW_UTF8,       /* column: dictionary strings */
  PS_ARROW_LARGE_UTF8,
  PS_ARROW_STRING_VIEW,
  PS_ARROW_DICTIONARY  /* dictionary<int, utf8 or large_utf8>: the dictionary reused */
} ps_arrow_kind;

/** Unit of dates and timestamps. */
typedef enum ps_time_unit {
  PS_TIME_NONE = 0,
  PS_TIME_DAY = 1,
  PS_TIME_SECOND = 2,
  PS_TIME_MILLISECOND = 3,
  PS_TIME_MICROSECOND = 4,
  PS_TIME_NANOSECOND = 5
} ps_time_unit;

/** What import recorded about one column. Strings are owned by the table. */
typedef struct ps_arrow_field {
  const char *name;        /* the field's name ("" if it had none) */
  const char *format;      /* the Arrow format string it was imported from */
  ps_arrow_kind kind;
  ps_type type;            /* the packscan column's logical type */
  uint32_t scale;          /* decimal and float columns: the decimal scale */
  uint32_t precision;      /* decimal128: the declared precision */
  ps_time_unit unit;       /* date32: DAY, date64: MILLISECOND, timestamp: its unit */
  const char *timezone;    /* timestamp: the zone ("" = none) */
} ps_arrow_field;

/** Options for import. Call ps_arrow_import_options_init first. */
typedef struct ps_arrow_import_options {
  uint32_t struct_size;    /* sizeof(ps_arrow_import_options) */
  int float_scale;         /* float columns: < 0 finds the smallest exact scale (as
                              ps_encode_for), >= 0 demands that scale,
                              PS_FLOAT_SCALE_LOSSLESS always the lossless mapping */
  int nan_as_null;         /* float NaN/inf become nulls instead of an error */
  int encoding;            /* numeric columns: PS_ENCODING_FOR (the default), PS_ENCODING_DELTA or
                              PS_ENCODING_AUTO, as ps_encode (options of a smaller struct_size: FOR) */
} ps_arrow_import_options;

PS_API void ps_arrow_import_options_init(ps_arrow_import_options *opts);

/** Columns imported from Arrow, with the field of each. Owns its columns. */
typedef struct ps_arrow_table ps_arrow_table;

/** Imports one Arrow array. A struct array (format "+s", a record batch)
 *  becomes one column per child, named by the child fields; any other array
 *  becomes a table of one column. A row the struct's own validity marks null
 *  is null in every column (as Arrow's StructArray::Flatten and
 *  RecordBatch::FromStructArray read it), whether null_count gives the count
 *  or -1 (unknown). The array and schema are borrowed: every
 *  value is copied (encoded) before the call returns, and the caller still
 *  releases them. Offsets and slices are honoured; validity becomes nulls.
 *  Everything is validated before use (formats, buffer and child counts,
 *  lengths and offsets, monotonic in-range string offsets, view buffer
 *  indexes and sizes, dictionary indexes, released structs): a violation is
 *  PS_ERR_INVALID_ARGUMENT with a message naming the field and the value
 *  (among them offsets whose sums overflow, or that would place a buffer past
 *  2^63 bytes, and decimal precisions outside Arrow's 1..9 / 18 / 38 / 76 for
 *  decimal32 / 64 / 128 / 256); a type packscan does not hold is
 *  PS_ERR_UNSUPPORTED (decimal32, 64 and 256, a negative scale, a scale over
 *  18; a scale above the precision is valid Arrow and imports); more than
 *  2^63 - 1 rows, or string bytes, in one table is PS_ERR_LIMIT; a float with
 *  no exact decimal scale or a decimal outside int64 is
 *  PS_ERR_NOT_REPRESENTABLE. utf8 and large_utf8 arrays whose strings are
 *  all empty may have a NULL data buffer.
 *  (The C Data Interface carries no buffer sizes: buffers shorter than the
 *  lengths declare cannot be detected, except string_view data buffers,
 *  whose sizes are passed.) opts may be NULL (defaults). */
PS_API ps_status ps_arrow_import(ps_context *ctx, const struct ArrowSchema *schema,
                                 const struct ArrowArray *array, const ps_arrow_import_options *opts,
                                 ps_arrow_table **out);

/** Imports every record batch of a stream (get_schema, then get_next until
 *  the end) into one table; batches are concatenated. The stream is borrowed
 *  (the caller releases it); the schema and batches it hands out are released
 *  here. A stream callback's error is PS_ERR_INVALID_ARGUMENT with the
 *  stream's own message. */
PS_API ps_status ps_arrow_import_stream(ps_context *ctx, struct ArrowArrayStream *stream,
                                        const ps_arrow_import_options *opts, ps_arrow_table **out);

/** Destroys a table and its columns (expressions over them first). NULL ok. */
PS_API void ps_arrow_table_destroy(ps_arrow_table *table);
PS_API size_t ps_arrow_table_columns(const ps_arrow_table *table);
PS_API uint64_t ps_arrow_table_rows(const ps_arrow_table *table);
/** Column i (borrowed; owned by the table), or NULL past the end. */
PS_API ps_column *ps_arrow_table_column(const ps_arrow_table *table, size_t i);
/** Field i, or NULL past the end. */
PS_API const ps_arrow_field *ps_arrow_table_field(const ps_arrow_table *table, size_t i);
/** Index of the first column named `name`, or -1. */
PS_API int64_t ps_arrow_table_find(const ps_arrow_table *table, const char *name);

/** Column i's packed form, copied back to host memory as the encoders make it
 *  (to save a table in another format, such as the command line's table
 *  files, without encoding it again): *desc describes the FOR column, or a
 *  dictionary column's codes (type PS_TYPE_UINT64), with desc->data and
 *  desc->validity (NULL: no nulls) allocated with the context's allocator
 *  (free both with ps_free); for a dictionary column *dict (optional for
 *  others) receives its sorted dictionary, offsets64 and bytes borrowed from
 *  the table (valid while it lives). desc->zones: the column's zone maps,
 *  borrowed from the table as the dictionary is, or NULL without. A
 *  lossless float column's mapping fields are set, its exception table
 *  borrowed from the table too. */
PS_API ps_status ps_arrow_table_packed(ps_context *ctx, const ps_arrow_table *table, size_t i, ps_for_desc *desc,
                                       ps_dict_desc *dict);

/** The inverse of ps_arrow_table_packed: a table of ncols columns made from
 *  packed descriptions (host memory, copied) and the fields they export as.
 *  Column i is ps_column_create_dict(dicts[i], descs[i]) when fields[i].type
 *  is PS_TYPE_STRING (dicts needed then), else ps_column_create_for(descs[i]);
 *  fields[i].name and .format are copied (timezone may be NULL), and .kind
 *  must agree with the column: a string kind for dictionary columns, a
 *  fixed-width kind whose packscan type is descs[i].type otherwise. All columns have the same
 *  row count. */
PS_API ps_status ps_arrow_table_create(ps_context *ctx, size_t ncols, const ps_arrow_field *fields,
                                       const ps_for_desc *descs, const ps_dict_desc *dicts, ps_arrow_table **out);
/** As ps_arrow_table_create, with each column and each dictionary's codes
 *  host-resident (ps_column_create_for_host, ps_column_create_dict_host):
 *  the descriptions' data and validity are borrowed, not copied, and must
 *  stay alive and unchanged until the table is destroyed (a mapped table
 *  file, say); the dictionaries are copied. */
PS_API ps_status ps_arrow_table_create_host(ps_context *ctx, size_t ncols, const ps_arrow_field *fields,
                                            const ps_for_desc *descs, const ps_dict_desc *dicts, ps_arrow_table **out);

/* ---- Export ------------------------------------------------------------- */
/* Every export fills a schema and an array the caller provides (their
 * previous contents are ignored) with release callbacks that own all memory
 * (allocated with malloc, independent of the context: they may be released
 * after the context is destroyed). On failure neither is written. */

/** Evaluates expr and exports the selection as an Arrow boolean array of
 *  ps_expr_rows(expr) rows (no nulls). count (optional): rows selected. */
PS_API ps_status ps_arrow_export_selection(ps_context *ctx, const ps_expr *expr, struct ArrowSchema *schema,
                                           struct ArrowArray *array, uint64_t *count);

/** Evaluates expr and exports the ids of the selected rows, ascending, as an
 *  Arrow uint32 (PS_INDEX_UINT32) or uint64 array. */
PS_API ps_status ps_arrow_export_row_ids(ps_context *ctx, const ps_expr *expr, ps_index_type type,
                                         struct ArrowSchema *schema, struct ArrowArray *array);

/** Exports rows ids[0..count) (host memory, `type`) of column `column` of
 *  `table` as an array of the Arrow type it was imported from: integers,
 *  floats, dates and timestamps as themselves, decimals as decimal128 with
 *  their scale (exact), strings as utf8 (large_utf8 past 2 GiB or when
 *  imported so), or, with as_dictionary nonzero, as dictionary<int32, utf8>
 *  over the column's sorted dictionary. Nulls become validity. */
PS_API ps_status ps_arrow_export_gather(ps_context *ctx, const ps_arrow_table *table, size_t column,
                                        const void *ids, ps_index_type type, uint64_t count, int as_dictionary,
                                        struct ArrowSchema *schema, struct ArrowArray *array);

/** Evaluates expr (NULL: every row) and exports the selected rows of every
 *  column of the table as a record batch (struct array, format "+s") with the
 *  table's field names and types (as ps_arrow_export_gather). */
PS_API ps_status ps_arrow_export_filter(ps_context *ctx, const ps_arrow_table *table, const ps_expr *expr,
                                        int as_dictionary, struct ArrowSchema *schema, struct ArrowArray *array);

/** Aggregates of column `column` over the rows where expr is TRUE (NULL:
 *  every row) as a one-row record batch with fields "count" (int64: non-null
 *  rows counted), "sum" (decimal128(38, scale) for integers and decimals,
 *  exact; float64 for floats; absent for dates and timestamps), "min" and
 *  "max" (the column's Arrow type). sum/min/max are null when no row counts.
 *  String columns: PS_ERR_TYPE_MISMATCH. */
PS_API ps_status ps_arrow_export_aggregates(ps_context *ctx, const ps_arrow_table *table, size_t column,
                                            const ps_expr *expr, struct ArrowSchema *schema,
                                            struct ArrowArray *array);

/* ---- Partial query results ------------------------------------------------ */
/* A query run on each partition of a table (ps_query_run_partial, the same
 * query shape everywhere), its results exported as partials, shipped anywhere
 * as Arrow record batches and merged give the result of one run over the
 * whole table, bit for bit: the same groups in the same order, the same
 * ps_datum values (a dictionary key's index too, when the partitions share
 * the dictionary, as slices of one column do; its string in every case), the
 * same PS_ERR_OVERFLOW for a sum or average that does not fit 38 digits
 * after merging, whatever the partitioning (empty and all-null partitions,
 * groups in one partition only). A merged result can itself be exported and
 * merged again (a tree of merges). Errors of a partition's run (a corrupt
 * code, a row's value that does not fit) are that run's: a merge never sees
 * them. */

/** Exports a result's exact per-group state as a record batch (struct
 *  array) of one row per group, in the result's order:
 *  - per GROUP BY key k: "key<k>", a number key as decimal128(38, its
 *    scale), a string key as large_utf8 followed by "key<k>_index" (uint64,
 *    its dictionary index); a NULL key is null;
 *  - per aggregate a: COUNT(*) and COUNT "agg<a>_count" (uint64); SUM and AVG
 *    "agg<a>_sum" (decimal256(76, the value's scale): the exact sum, which
 *    may be past 38 digits) and "agg<a>_count" (uint64, the values summed);
 *    MIN "agg<a>_min" and MAX "agg<a>_max" (decimal128(38, the value's
 *    scale), null where no value was seen).
 *  SUM, AVG, MIN and MAX of a lossless float column (docs/float-encoding.md)
 *  differ: the sum is the exact integer count of units 2^u (decimal256(76,
 *  0)), MIN and MAX are float64; so is a GROUP BY key of such a column
 *  ("float:0" in "packscan.keys").
 *  The schema's metadata holds "packscan.partial" (the format's version,
 *  "1", or "2" where a float aggregate or key is present), "packscan.keys" (e.g.
 *  "number:2,string:0"), "packscan.aggs" (e.g. "SUM:2,COUNT_STAR:0"; "SUM:f"
 *  for a float column) and, in version 2, "packscan.units" (each aggregate's
 *  unit exponent u, e.g. "0,-1074"). Memory as for the exports above (owned
 *  by the release callbacks, independent of the context). */
PS_API ps_status ps_query_result_export_partial(ps_context *ctx, const ps_query_result *result,
                                                struct ArrowSchema *schema, struct ArrowArray *array);

/** A merge of partial results, taking them one at a time (memory stays near
 *  the number of distinct groups). Not thread-safe; one merge per thread. */
typedef struct ps_query_merge ps_query_merge;

/** A new, empty merge whose errors and results belong to ctx. */
PS_API ps_status ps_query_merge_create(ps_context *ctx, ps_query_merge **out);
/** Adds one partial (borrowed: read and copied before the call returns; the
 *  caller still releases it). The first partial fixes the layout; a later
 *  one of another query (its "packscan.keys" or "packscan.aggs" differs), of
 *  another format version, or malformed (a field's name, format, buffer
 *  count, length or offset, nulls where none may be, a value past 38 digits,
 *  decreasing string offsets) is PS_ERR_INVALID_ARGUMENT naming the partial
 *  (0 for the first added), the field and the value; the merge is then
 *  unchanged. PS_ERR_OVERFLOW only for counts past 2^64 - 1 or sums past
 *  256 bits, which no real partitioning reaches; the merge is then
 *  unusable. Rows of one partial may repeat a group. */
PS_API ps_status ps_query_merge_add(ps_query_merge *merge, const struct ArrowSchema *schema,
                                    const struct ArrowArray *array);
/** The merged result (free with ps_query_result_destroy; it may outlive the
 *  merge, not the context): groups in ps_query_run's order (ascending keys,
 *  numbers by value, strings bytewise, NULL last). PS_ERR_OVERFLOW as
 *  ps_query_run gives it, with its message, for the first sum or average that
 *  does not fit; PS_ERR_INVALID_ARGUMENT when no partial was added. The merge
 *  stays usable: more partials may be added and finished again. */
PS_API ps_status ps_query_merge_finish(ps_query_merge *merge, ps_query_result **out);
/** As ps_query_merge_finish, with overflows deferred as ps_query_run_partial
 *  defers them: for an inner node of a tree of merges. */
PS_API ps_status ps_query_merge_finish_partial(ps_query_merge *merge, ps_query_result **out);
/** Frees a merge. NULL ok. */
PS_API void ps_query_merge_destroy(ps_query_merge *merge);

#ifdef __cplusplus
}
#endif

#endif /* PACKSCAN_ARROW_H */
