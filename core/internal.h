/* Core-internal structures and helpers. Never included by backends (they use
 * backend.h) or by users. */
#ifndef PS_INTERNAL_H
#define PS_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backend.h"
#include "internal_options.h"
#include "kcache.h"
#include "ps_like_nfa.h"
#include "packscan.h"
#include "ps_program.h"
#include "ps_layout.h"

#define PS_ERRMSG_SIZE 4096

struct ps_context {
  const ps_backend_ops *ops;
  ps_backend *be;
  ps_allocator alloc;
  uint64_t chunk_rows; /* rows per launch, multiple of 32 */
  char last_error[PS_ERRMSG_SIZE];
  /* The aux buffer of the last destroyed expression, kept for the next one
   * (ps_aux_buffer): an engine builds an expression per query, and a device
   * allocation plus a free per expression cost tens of microseconds on CUDA
   * (cudaFree synchronizes the device). Reuse is safe because every use of an
   * aux buffer is enqueued on the context's one stream/queue, in order. */
  ps_buffer *spare_aux;
  /* The bitmap of ps_filter_row_ids_device's unfused path (one chunk's),
   * kept for the next call for the same reason; NULL until first needed. */
  ps_buffer *ids_scratch;
  /* Streaming host-resident columns (stream.c): options.device_memory_limit
   * (0 = none), the bytes of each staging slot, the slots (made on first
   * use) and what each holds, the slot the next chunk takes, and the slot
   * of the chunk under way (-1 = none staged yet). */
  uint64_t device_memory_limit;
  uint64_t stage_bytes;
  ps_buffer *stage[PS_STAGE_SLOTS];
  struct ps_stage_slot {
    uint64_t fill;  /* bytes of the buffer in use */
    uint32_t count; /* pieces staged */
    struct ps_staged_piece {
      const struct ps_column *col;
      uint64_t r0, rows;
      ps_devmem data, validity;
      uint64_t data_bytes, validity_bytes;
    } pieces[PS_MAX_COLS];
  } stage_slots[PS_STAGE_SLOTS];
  uint32_t stage_next;
  int32_t stage_slot;
  /* ps_stage_wait calls so far: a copy staged before the last one is done */
  uint64_t stage_waits;
  /* Test hooks (internal_options.h); the defaults unless a test set them. */
  ps_internal_options options;
  /* What ps_corrupt_error needs to name a column and a row: the columns of
   * the program slots of the backend call under way (or the one column of
   * a reduce or gather), and the chunk's first row. Set by evaluate.c and
   * select.c before each backend call. */
  ps_column *const *corrupt_cols;
  uint32_t corrupt_ncols;
  uint64_t corrupt_base;
  const ps_expr *corrupt_expr; /* the expression of those slots, NULL for single-column calls */
  /* The kernel cache (kcache.h): options.kernel_cache_dir (a copy, or NULL),
   * what the cache did, and a counter that keeps temporary names apart. */
  char *kernel_cache_dir;
  ps_kcache_stats kcache_stats;
  uint64_t kcache_serial;
  /* The caches created on this context (for ps_context_wait_builds). */
  struct ps_kcache *kcaches;
  /* options.query_compile (ps_query_compile). */
  int32_t query_compile;
  /* Zone-map pruning (options.zone_pruning): on unless turned off; what the
   * calls read and skipped (ps_context_scan_stats); and a counter bumped
   * whenever a column's zone maps change, so that an expression's cached
   * pruning plan (zones.c) knows when to be made again. */
  bool zone_pruning;
  /* options.max_groups (PS_QUERY_GROUPS_LIMIT for 0). */
  uint64_t max_groups;
  ps_scan_stats scan_stats;
  uint64_t zone_epoch;
  /* While a query or a filter runs chunk by chunk (query.c, evaluate.c):
   * the rows it evaluates in all (those the zone maps leave), which decide
   * whether its kernel is worth specializing (ps_query_specialize), not one
   * chunk's; 0 otherwise. */
  uint64_t query_run_rows;
  /* A context over several devices (options.devices, multi.c): one context
   * per device, which every call of this one splits its rows across; NULL
   * for a context of one device. */
  struct ps_group *group;
  /* options.progress and progress_user (ps_progress); progress_mute: while
   * nonzero, scans inside a larger call (a query's predicate bitmaps, a keys
   * pass run again) report nothing of their own. */
  void (*progress)(void *user, uint64_t rows_done, uint64_t rows_total);
  void *progress_user;
  uint32_t progress_mute;
};

/* ---- contexts over several devices (multi.c) ------------------------------ */
#define PS_MAX_DEVICES PS_MAX_DEVICE_COUNT
/* Rows are split across devices in runs of whole multiples of this (a
 * multiple of every chunk step, DELTA block and the library's zone block). */
#define PS_GROUP_ROWS ((uint64_t)1 << 16)
struct ps_column_parts {
  struct ps_column *col[PS_MAX_DEVICES];
  void *owned[PS_MAX_DEVICES];
};
struct ps_group {
  uint32_t n;
  ps_context *dev[PS_MAX_DEVICES];
  char device_names[512];
};
/* Device d's rows [*r0, *r1) of n rows; every column of n rows is split
 * alike. Device 0 always has a part (perhaps empty); a later device only
 * when *r0 < *r1. */
void ps_group_split(const struct ps_group *g, uint64_t n, uint32_t d, uint64_t *r0, uint64_t *r1);
bool ps_group_has(const struct ps_group *g, uint64_t n, uint32_t d);
ps_status ps_group_create(ps_context *ctx, const ps_context_options *o, const char *backend);
void ps_group_destroy(ps_context *ctx);
/* What a call that has no form over several devices answers. */
ps_status ps_group_unsupported(ps_context *ctx, const char *call);
/* The parts of column c of a context over several devices, from the
 * description it was validated against (column.c); freed with
 * ps_group_column_free. */
ps_status ps_group_column_parts(ps_context *ctx, ps_column *c, const ps_dict_desc *dd, const ps_for_desc *d, bool host);
void ps_group_column_free(ps_column *c);
ps_status ps_group_column_set_name(ps_column *c);
ps_status ps_group_set_zones(ps_context *ctx, ps_column *c, const ps_zone_map *z);
ps_status ps_group_compute_zones(ps_context *ctx, ps_column *c);
/* Builds expression e (checked, made on the context over several devices)
 * on each device's part; on failure e has no parts and its operands keep
 * theirs. */
ps_status ps_group_expr_parts(ps_context *ctx, ps_expr *e);
void ps_group_expr_free(ps_expr *e);
/* The calls over every device (checked as on one device first): a bitmap or
 * a mask or only the count; row ids; gathers; aggregates of every row;
 * statistics summed. */
ps_status ps_group_filter(ps_context *ctx, const ps_expr *e, uint8_t *bitmap, uint8_t *mask, uint64_t *count);
ps_status ps_group_row_ids(ps_context *ctx, const ps_expr *e, ps_index_type type, void **ids, uint64_t *count);
ps_status ps_group_gather(ps_context *ctx, const ps_column *col, const void *ids, ps_index_type type, uint64_t count,
                          void *values, uint8_t *validity);
ps_status ps_group_gather_strings(ps_context *ctx, const ps_column *col, const void *ids, ps_index_type type,
                                  uint64_t count, int64_t **offsets, uint8_t **bytes, uint8_t *validity);
/* ... of the rows where `where` is TRUE (NULL: every row) */
ps_status ps_group_aggregate(ps_context *ctx, const ps_column *col, const ps_expr *where, ps_aggregates *out);
/* ps_aggregate on one device (arguments checked) without the sum of a
 * lossless float column: its sum fields zero, sum_double NaN. */
ps_status ps_aggregate_codes(ps_context *ctx, const ps_column *col, const ps_buffer *selection,
                             uint64_t selection_offset, ps_aggregates *out);
ps_status ps_group_scan_stats(const ps_context *ctx, ps_scan_stats *out);

/* Reports a scan's progress to options.progress, if any (see packscan.h). */
static inline void ps_progress(ps_context *ctx, uint64_t rows_done, uint64_t rows_total) {
  if (ctx->progress && !ctx->progress_mute) ctx->progress(ctx->progress_user, rows_done, rows_total);
}

struct ps_buffer {
  ps_context *ctx;
  ps_devmem mem;
  uint64_t size;
  bool owned; /* false: wraps caller memory */
};

typedef struct ps_dict {
  uint64_t count;
  uint64_t *offsets; /* count + 1, normalized to 64-bit */
  uint8_t *bytes;
  uint64_t bytes_size;
  bool sorted;
} ps_dict;

/* A float column's PS_FLOAT_MAP_ALP or PS_FLOAT_MAP_BITS mapping. ref: the
 * first grid step k (ALP, two's complement) or the smallest ordered pattern
 * (BITS). exc: the exception table (not owned here). */
typedef struct ps_fmap {
  uint32_t map, e, f, rank_bits;
  bool f32;
  uint64_t ref;
  const ps_float_exception *exc;
  uint64_t n_exc;
} ps_fmap;

struct ps_column {
  ps_context *ctx;
  ps_type type;        /* PS_TYPE_STRING for dictionary columns */
  uint64_t n;
  uint32_t width;
  uint32_t scale;
  uint32_t encoding;   /* PS_ENC_* (ps_layout.h) */
  ps_reference reference;
  uint64_t code_limit; /* largest code whose value is valid */
  bool no_codes;       /* no code is valid (empty dictionary) */
  ps_devmem data;
  uint64_t data_size;
  ps_buffer *data_buf; /* owned copy, or NULL when wrapping */
  ps_devmem validity;  /* handle NULL: no nulls */
  uint64_t validity_size;
  ps_buffer *validity_buf;
  ps_dict dict;        /* dictionary columns only */
  char *name;          /* ps_column_set_name; NULL = none */
  /* The dictionary on the device (offsets as uint64, then bytes), for LIKE
   * matched there (backend like_dict): made on the first such LIKE by
   * ps_column_device_dict, freed with the column; both or neither. Created
   * lazily from paths that hold the column as const: a context (and all it
   * made) is used by one thread at a time, so this needs no lock. */
  ps_buffer *dict_dev_offsets;
  ps_buffer *dict_dev_bytes;
  struct ps_zones *zones; /* zone maps (zones.c), NULL = none */
  /* Host-resident (ps_column_create_for_host): data and validity are the
   * caller's host memory, as {host pointer, 0}; no device buffer holds
   * them. Every path that hands them to a backend goes through
   * ps_column_chunk (streamed, core/stream.c) or reads them on the host. */
  bool host;
  /* Host-resident DELTA columns (stream.c): the bytes of the largest block
   * with its header (a chunk's staging plan); the headers as last staged,
   * rebased to their chunks (ps_delta_chunk; 32 bytes a block, made on the
   * first copy and kept until the column goes, because copies read them),
   * and per block the context's stage_waits + 1 when it was last staged
   * (0: never). */
  uint64_t delta_largest;
  uint8_t *delta_staged;
  uint64_t *delta_staged_at;
  /* Float columns mapped by ALP or BITS (fmap.map != PS_FLOAT_MAP_DECIMAL):
   * the mapping, whose exception table (fmap.exc) the column owns. Programs
   * see such a column as unsigned codes (ps_prog_col_of). */
  ps_fmap fmap;
  /* In a context over several devices: each device's part of the rows
   * (ps_group_split), a column of that device's context; NULL where a
   * device has none, and the host copies the parts own (a DELTA column's
   * blocks laid out again). The fields above describe the whole column; its
   * data are the parts'. */
  struct ps_column_parts *parts;
};

/* A column's zone maps (ps_zone_map), owned. clean: no block holds a valid
 * code above the column's code_limit (or, without valid codes, a valid
 * row), so skipping any block of it never hides a corrupt code. */
typedef struct ps_zones {
  uint32_t block_rows;
  uint64_t blocks;
  uint64_t *min, *max;
  uint8_t *flags;
  bool clean;
  ps_zone_map view; /* the public description of the arrays above */
} ps_zones;

typedef enum ps_expr_kind {
  PS_EXPR_COMPARE = 1,
  PS_EXPR_COMPARE_COLUMNS,
  PS_EXPR_BETWEEN,
  PS_EXPR_IN,
  PS_EXPR_LIKE,
  PS_EXPR_IS_NULL,
  PS_EXPR_AND,
  PS_EXPR_OR,
  PS_EXPR_NOT
} ps_expr_kind;

struct ps_expr {
  ps_context *ctx;
  ps_expr_kind kind;
  uint64_t rows;
  ps_column *col, *col_b;
  ps_cmp cmp;
  bool negate;          /* LIKE: NOT LIKE; IS_NULL: IS NOT NULL */
  int escape;           /* LIKE escape byte or -1 */
  ps_literal lit, lit_b; /* string literals point into owned copies */
  ps_literal *list;     /* IN list (strings copied) */
  size_t list_count;
  char *pattern;        /* LIKE */
  size_t pattern_len;
  ps_expr *a, *b;
  unsigned depth;       /* stack depth this subtree needs when lowered, unfolded (upper bound) */
  unsigned size;        /* nodes in this subtree */
  unsigned height;      /* levels of this subtree (a leaf is 1) */
  /* Set when the subtree is comparisons, BETWEENs and INs against literals
   * on this one column (a FOR column or a sorted dictionary), joined by AND,
   * OR and NOT: it lowers to one code set, one instruction (lower.c). */
  ps_column *fold_col;
  /* The lowered program of this node and its aux words on the device, made
   * on the first evaluation and reused: trees and columns are immutable, so
   * an engine that evaluates one predicate on many calls lowers it once. */
  struct ps_lowered *lowered;
  ps_buffer *aux_dev;
  /* What the zone maps of its columns decide per block (zones.c), made on
   * the first evaluation that may prune and remade when zone maps change. */
  struct ps_prune_plan *prune;
  /* In a context over several devices: the expression on each device's
   * part of the rows (ps_column.shard); the node itself is not lowered. */
  struct ps_expr **shard;
};

/* ---- errors -------------------------------------------------------------- */
ps_status ps_set_error(ps_context *ctx, ps_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 3, 4)))
#endif
    ;
void ps_clear_error(ps_context *ctx);
/* Writes a message into a caller buffer (for calls without a context). */
ps_status ps_set_error_buf(char *buf, size_t size, ps_status st, const char *fmt, ...)
#if defined(__GNUC__)
    __attribute__((format(printf, 4, 5)))
#endif
    ;

/* Forward a failed status (it already carries its message). */
#define PS_TRY(expr)                    \
  do {                                  \
    ps_status ps_try_st_ = (expr);      \
    if (ps_try_st_ != PS_OK) return ps_try_st_; \
  } while (0)

/* ---- memory -------------------------------------------------------------- */
void *ps_alloc_with(const ps_allocator *a, size_t size);
void ps_free_with(const ps_allocator *a, void *p);
void *ps_calloc_ctx(ps_context *ctx, size_t n, size_t size); /* zeroed; NULL on overflow */


/* ---- types --------------------------------------------------------------- */
bool ps_type_is_signed(ps_type t);
bool ps_type_is_unsigned(ps_type t);
bool ps_type_is_float(ps_type t);
bool ps_type_is_decimal(ps_type t); /* also signed and integer: int64 unscaled values */
bool ps_type_is_integer(ps_type t);
/* Range of an integer type as (min as int64, max as uint64). */
int64_t ps_type_min(ps_type t);
uint64_t ps_type_max(ps_type t);

/* ---- exact decimal literals (literal.c) ---------------------------------- */
__extension__ typedef __int128 ps_i128;
__extension__ typedef unsigned __int128 ps_u128;
/* PS_OK, or PS_ERR_INVALID_ARGUMENT naming `what`, the scale or the digits. */
ps_status ps_check_decimal(ps_context *ctx, const ps_literal *lit, const char *what);
ps_i128 ps_decimal_unscaled(const ps_literal *lit);
ps_i128 ps_pow10_i128(uint32_t scale); /* scale <= 38 */
/* Beyond any column value (2^100): literals farther out are clamped to it. */
#define PS_I128_FAR ((ps_i128)1 << 100)
/* Exact floor and ceiling of a valid decimal literal times 10^to_scale
 * (to_scale <= 18: a decimal column's scale, 0 for integer columns), clamped
 * to +-PS_I128_FAR; integral: the product has no fraction. */
void ps_decimal_floor_ceil(const ps_literal *lit, uint32_t to_scale, ps_i128 *fl, ps_i128 *ce, bool *integral);
/* The double nearest a valid decimal literal (ties to even). */
double ps_decimal_to_double(const ps_literal *lit);
/* The nearest double of u * 10^-scale (scale may be negative), rounded once. */
double ps_scaled_to_double(ps_i128 u, int32_t scale);

/* ---- float value mappings (float_map.c, docs/float-encoding.md) ---------- */
/* What ps_fmap_build chose: per-row codes (0 for null rows) and the mapping;
 * codes and exc come from the allocator, freed by ps_fmap_result_free. */
typedef struct ps_fmap_result {
  const ps_allocator *allocator;
  uint32_t map, e, f, rank_bits;
  uint64_t reference;
  uint64_t *codes, max_code;
  ps_float_exception *exc;
  uint64_t n_exc;
} ps_fmap_result;
uint32_t ps_for_desc_float_map(const ps_for_desc *d); /* PS_FLOAT_MAP_DECIMAL for older descriptions */
ps_fmap ps_fmap_of_desc(const ps_for_desc *d);
uint64_t ps_fmap_bits(double x);   /* a double's IEEE bit pattern */
double ps_fmap_double(uint64_t b); /* the double of a bit pattern */
uint64_t ps_fmap_ord(double x); /* the order-preserving transform of the bits */
uint64_t ps_fmap_ord_inverse(uint64_t o); /* its inverse: the bits */
double ps_fmap_grid(int64_t k, uint32_t e, uint32_t f, bool f32);
double ps_fmap_decode(const ps_fmap *m, uint64_t code);
/* Arithmetic on lossless floats in doubles (ps_query_program.h's PS_VOP_DNUM
 * and PS_VOP_DADD / DSUB / DMUL) on the host, for the reference backend and
 * the bounds of a query's window: each step rounded once and never fused.
 * kind: a slot's PS_KIND_*; v = M + code; d: 10^scale's double; op: a
 * PS_VOP_D* code. */
double ps_fmap_dnum(uint32_t kind, uint64_t v, double d);
double ps_fmap_darith(uint32_t op, double a, double b);
/* The bits of ALP's factors 10^f and 10^-e as the decode multiplies by them
 * (float32: the float's bits); false where e, f are no column's. */
bool ps_fmap_factor_bits(uint32_t e, uint32_t f, bool f32, uint64_t *mul, uint64_t *frac);
/* A column compare's float descriptor (ps_program.h, PS_INSN_FMAP_A): its
 * size in aux words, and its words written from the mapping. */
uint64_t ps_fmap_desc_words(const ps_fmap *m);
void ps_fmap_desc_write(const ps_fmap *m, uint32_t *out);
uint64_t ps_fmap_code_limit(const ps_fmap *m, uint32_t width);
/* The largest magnitude of a finite value of codes lo..hi (lo <= hi): the
 * ends' values where finite; next to an infinite end, the largest finite
 * value the codes between can hold (BITS: DBL_MAX or FLT_MAX; ALP: the grid
 * values of the range's ends and its finite exceptions). 0 when none. */
double ps_fmap_largest_finite(const ps_fmap *m, uint64_t lo, uint64_t hi);
/* The exponent L of the unit 2^L in which an exact sum holds values up to
 * `largest` in magnitude below 2^126 units (docs/float-encoding.md): L =
 * E - 125 for 2^E <= largest < 2^(E+1), at least the exponent of the
 * smallest subnormal (of float for a float32 mapping). */
int32_t ps_fmap_sum_unit(const ps_fmap *m, double largest);
/* Checks a description's mapping fields and exception table. */
ps_status ps_fmap_check(const ps_for_desc *d, char *err, size_t size);
/* The smaller of the ALP and BITS mappings of the valid, non-NaN values. */
ps_status ps_fmap_build(const ps_plain *in, const uint8_t *valid, const ps_allocator *a, char *err, size_t size,
                        ps_fmap_result *out);
void ps_fmap_result_free(ps_fmap_result *r);
/* "column 'name'", or "an unnamed column", for messages (buf of
 * PS_COLUMN_LABEL_SIZE bytes). */
#define PS_COLUMN_LABEL_SIZE (PS_COLUMN_NAME_MAX + 16)
const char *ps_column_label(const ps_column *c, char *buf);

/* ---- lowering ------------------------------------------------------------ */
/* A LIKE leaf's dictionary pass deferred to the device: the SET bitmap at
 * aux words [aux_word, aux_word + ceil(count / 32)) is written by the
 * backend's like_dict over entries reference.u + [0, count) of col. */
typedef struct ps_like_fill {
  ps_column *col;
  uint32_t aux_word;
  uint64_t count;
  ps_like_nfa nfa;
} ps_like_fill;

/* A lowered program plus its aux words (host) and the columns of each slot. */
struct ps_lowered {
  ps_program prog;
  ps_column *cols[PS_MAX_COLS];
  uint32_t *aux; /* prog.aux_words words, ps_host_alloc'd */
  /* Device fills, in ascending aux_word order (aux words are reserved in
   * order); their aux words stay zero in `aux`. */
  ps_like_fill *fills[PS_MAX_INSNS];
  uint32_t n_fills;
};
typedef struct ps_lowered ps_lowered;

ps_status ps_lower(ps_context *ctx, const ps_expr *expr, ps_lowered *out);
/* The one check of a lowered program and its aux words (program_check.c);
 * PS_ERR_INTERNAL with the reason. Backends rely on it. */
ps_status ps_program_check(ps_context *ctx, const ps_program *p, const uint32_t *aux);
/* A column's slot description, with byte counts for the whole column. */
ps_prog_col ps_prog_col_of(const ps_column *c);
/* The row multiple every column's encoding can start a chunk on (32, or a
 * DELTA column's block: ps_chunk_row_multiple), and the rows per chunk for a
 * call over these columns: the context's chunk rows rounded down to it. */
uint64_t ps_chunk_step_multiple(ps_column *const *cols, uint32_t n);
uint64_t ps_chunk_step(const ps_context *ctx, ps_column *const *cols, uint32_t n);
/* A description's encoding (FOR for descriptions from before the field). */
uint32_t ps_for_desc_encoding(const ps_for_desc *d);
/* The block headers of a DELTA column of n rows and data_size bytes (host
 * memory, at least the headers' bytes when data_size allows them): every
 * field checked, and that the payloads follow the headers in block order
 * and end at data_size. PS_ERR_INVALID_ARGUMENT naming `what`, the block,
 * the field and its value in buf (delta.c). */
ps_status ps_delta_check(const uint8_t *headers, uint64_t n, uint64_t data_size, const char *what, char *buf,
                         size_t size);
/* The bytes of a checked DELTA column's largest block, its header and its
 * payload (what a chunk stages per block at most). */
uint64_t ps_delta_largest_block(const uint8_t *headers, uint64_t n);
/* The blocks [b0, b0 + blocks) of a DELTA column of data_size bytes, whose
 * headers (host memory) start at `headers` (block b0's), as one stream that
 * the readers take from its first byte: the headers with their payload
 * offsets rebased (written to out, 32 bytes a block, unless out is NULL),
 * then the payloads, which are the column's bytes [*payload_at,
 * *payload_at + *payload_bytes). False, writing nothing, where the headers
 * do not lay the payloads out one after another inside data_size, with
 * widths of at most 64 and no block (with its header) above `largest`
 * bytes. */
bool ps_delta_chunk(const uint8_t *headers, uint64_t b0, uint64_t blocks, uint64_t data_size, uint64_t largest,
                    uint8_t *out, uint64_t *payload_at, uint64_t *payload_bytes);
/* The chunk of column c from row r0 (a multiple of its ps_chunk_step): its
 * data and validity at the chunk start and the readable bytes from there,
 * written into *pc, *data and *validity (validity left alone without a
 * bitmap). The one place the core applies ps_chunk_data_offset. */
ps_status ps_column_chunk(ps_context *ctx, const ps_column *c, uint64_t r0, uint64_t rows, ps_prog_col *pc,
                          ps_devmem *data, ps_devmem *validity);

/* ---- streaming host-resident columns (stream.c) -------------------------- */
/* A call's chunk loop brackets each chunk it hands a backend: ps_stage_begin
 * before its ps_column_chunk calls, ps_stage_end after the last operation
 * that reads the chunk is enqueued (whether it succeeded or not). A host
 * column's chunk (rows of it: `rows`, counted from r0) is copied into the
 * slot the chunk holds, unless ps_stage_prefetch copied it already: called
 * between a chunk's ps_column_chunk calls and its kernels with the next
 * chunk's rows, it starts that chunk's copies into the next slot, so that
 * they overlap this chunk's kernels even where the call waits for each
 * chunk's result (counts, row ids). */
void ps_stage_begin(ps_context *ctx);
ps_status ps_stage_end(ps_context *ctx);
ps_status ps_stage_prefetch(ps_context *ctx, ps_column *const *cols, uint32_t n, uint64_t r0, uint64_t rows);
/* At the start of a call: nothing staged before is taken for its chunks (a
 * prefetch of a call that failed may hold rows the caller changed since). */
void ps_stage_forget(ps_context *ctx);
ps_status ps_stage_column(ps_context *ctx, const ps_column *c, uint64_t r0, uint64_t rows, ps_prog_col *pc,
                          ps_devmem *data, ps_devmem *validity);
/* Rows per chunk such that the host columns among cols fit one staging slot
 * (a multiple of m, at least m); UINT64_MAX when none is host-resident. */
uint64_t ps_stage_rows(const ps_context *ctx, ps_column *const *cols, uint32_t n, uint64_t m);
/* Returns once every copy staged so far has completed (a host column's
 * memory may go after that), and the slots, freed with the context. */
void ps_stage_wait(ps_context *ctx);
void ps_stage_free(ps_context *ctx);
/* A gather from a host-resident column, on the host: ids, values and
 * validity_out in a are host memory (reference.c). */
ps_status ps_gather_in_host_memory(ps_context *ctx, const ps_gather_args *a);
void ps_lowered_free(ps_context *ctx, ps_lowered *low);

/* Makes col's device dictionary (dict_dev_offsets / dict_dev_bytes) if it
 * has none yet. On failure the status and message are set and the column
 * holds neither buffer. */
ps_status ps_column_device_dict(ps_context *ctx, ps_column *col);

/* ---- evaluation ---------------------------------------------------------- */
#define PS_NO_MEM ((ps_devmem){NULL, 0})
ps_status ps_check_expr(ps_context *ctx, const ps_expr *expr);
/* A device buffer of at least `bytes` bytes for a lowered program's aux words
 * (the context's spare when it is big enough and not more than 4x too big),
 * and its return when the expression goes (kept as the spare, or freed). */
ps_status ps_aux_buffer(ps_context *ctx, uint64_t bytes, ps_buffer **out);
void ps_aux_release(ps_context *ctx, ps_buffer *buf);
ps_status ps_run_program(ps_context *ctx, const ps_expr *expr, ps_devmem bitmap, ps_devmem mask,
                         ps_devmem selection_in, uint64_t *count);
/* Runs expr over all rows and writes the ids of the selected rows (isz = 4
 * or 8 bytes each, ascending) at ids, at most capacity of them; *count is
 * the number selected, which may exceed capacity (nothing past it is
 * written; what was written is then unspecified). */
/* Lowers expr once (expr->lowered, and its aux words on the device in
 * expr->aux_dev), as the first evaluation does; for queries, which run the
 * program inside their own pass. */
ps_status ps_expr_prepare(ps_context *ctx, const ps_expr *expr);
/* The 1-based position of col among the distinct columns expr reads, in the
 * order the expression is written (operand a before b); 0 if absent. */
unsigned ps_expr_column_position(const ps_expr *expr, const ps_column *col);
ps_status ps_run_program_ids(ps_context *ctx, const ps_expr *expr, ps_devmem ids, uint32_t isz, uint64_t capacity,
                             uint64_t *count);

/* ---- zone maps (zones.c) -------------------------------------------------- */
/* Scans `rows` packed codes of width w (data at the stream's first byte of
 * those rows, validity at their first bit, NULL = none; the first row is a
 * multiple of block_rows) into ceil(rows / block_rows) zone entries. */
void ps_zones_scan(const uint8_t *data, uint32_t w, const uint8_t *validity, uint64_t rows, uint32_t block_rows,
                   uint64_t *min, uint64_t *max, uint8_t *flags);
/* The zone maps of n codes of an encoder's output, in one allocation made
 * with `a` that ps_encoded_destroy frees; NULL when out of memory. */
ps_zone_map *ps_zones_for_encoded(const ps_allocator *a, const uint8_t *data, uint32_t w, const uint8_t *validity,
                                  uint64_t n);
/* Copies and checks zone maps onto a column (NULL removes); the message
 * names `what` (the field the caller gave them in). */
ps_status ps_zones_set(ps_context *ctx, ps_column *col, const ps_zone_map *z, const char *what);
void ps_zones_free(ps_context *ctx, ps_column *col);

/* Pruning states of a run of rows. */
#define PS_PRUNE_MAYBE 0
#define PS_PRUNE_FALSE 1 /* no row can be TRUE: nothing read, nothing selected */
#define PS_PRUNE_TRUE 2  /* every row is TRUE: the predicate's columns not read */
typedef struct ps_prune_plan ps_prune_plan;
/* The pruning plan of a lowered expression, or NULL (*out) when the context
 * does not prune, a column of the predicate or one of `extra` (columns the
 * call reads besides, e.g. a query's values) has no zone maps or zone maps
 * that may hide a corrupt code, or they do not share one block size. */
ps_status ps_prune_plan_of(ps_context *ctx, const ps_expr *expr, ps_column *const *extra, uint32_t n_extra,
                           const ps_prune_plan **out);
/* The state of the rows from r (a multiple of 32) and the end of their run,
 * at most `end`. */
int ps_prune_state(const ps_prune_plan *p, uint64_t r, uint64_t end, uint64_t *run_end);
void ps_prune_plan_free(ps_context *ctx, ps_expr *expr);
/* Bytes of packed codes and validity of `rows` rows of col. */
uint64_t ps_scan_bytes(const ps_column *col, uint64_t rows);

/* Value of code c of a FOR column as double (floats' decode rule). */
double ps_decode_double(ps_type type, uint64_t reference, uint32_t scale, uint64_t code);
/* The value of a FOR column's code as a double, under any float mapping. */
double ps_column_code_double(const ps_column *c, uint64_t code);

/* LIKE, compiled once per pattern (validated first by ps_like_validate) into
 * tokens (tok: plen ints; returns their count), then matched against each
 * string: 1 match, 0 no match; scratch: 2 * (slen + 1) bytes. */
size_t ps_like_compile(const uint8_t *p, size_t plen, int escape, int *tok);
int ps_like_match(const uint8_t *s, size_t slen, const int *tok, size_t nt, uint8_t *scratch);
/* Whether compiled tokens are a plain literal (1: equality) or a literal
 * followed by one '%' (2: prefix); 0 otherwise. The literal goes to lit. */
int ps_like_literal(const int *tok, size_t nt, uint8_t *lit, size_t *len);
/* PS_OK or PS_ERR_INVALID_ARGUMENT with a message in buf (unfinished escape). */
ps_status ps_like_validate(const char *p, size_t plen, int escape, char *buf, size_t size);

/* String order: memcmp, then length. */
int ps_bytes_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);

#endif /* PS_INTERNAL_H */
