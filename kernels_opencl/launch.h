/*
 * The per-launch parameter blocks of the OpenCL kernels. Read by the host
 * backend (C11) and, embedded after ps_program.h, by OpenCL C, so they use
 * only the fixed-width types of ps_program.h and have no padding. Each launch
 * uploads its block as one __constant buffer.
 */
#ifndef PS_CL_LAUNCH_H
#define PS_CL_LAUNCH_H

/* Kernel argument order of ps_filter_words (filter.cl); the host sets
 * arguments by these indices. */
#define PS_FILTER_ARG_LAUNCH 0u
#define PS_FILTER_ARG_DATA0 1u                     /* PS_MAX_COLS data streams */
#define PS_FILTER_ARG_VALIDITY0 (1u + PS_MAX_COLS) /* PS_MAX_COLS bitmaps */
#define PS_FILTER_ARG_AUX (1u + 2u * PS_MAX_COLS)
#define PS_FILTER_ARG_SELECTION (2u + 2u * PS_MAX_COLS)
#define PS_FILTER_ARG_BITMAP (3u + 2u * PS_MAX_COLS)
#define PS_FILTER_ARG_MASK (4u + 2u * PS_MAX_COLS)
#define PS_FILTER_ARG_STATUS (5u + 2u * PS_MAX_COLS)
#define PS_FILTER_ARG_SCRATCH (6u + 2u * PS_MAX_COLS)

/* Words of the status buffer the kernel accumulates into. */
#define PS_FILTER_STATUS_COUNT 0u   /* selected rows (atomic add per work-group) */
#define PS_FILTER_STATUS_CORRUPT 1u /* bit c set: slot c read a corrupt code */
#define PS_FILTER_STATUS_WORDS 2u
/* In the corrupt word, above the slot bits: an aux index fell past the
 * program's aux_words (a malformed program; the read gives 0). */
#define PS_FILTER_CORRUPT_AUX 0x80000000u

/* filter.cl: the program plus what changes with every chunk (buffer offsets,
 * row count, which outputs are wanted). */
typedef struct ps_filter_launch {
  ps_program prog;
  /* Byte offsets into the buffers passed as kernel arguments: the cl_mem
   * objects are passed whole because sub-buffers must be aligned to
   * CL_DEVICE_MEM_BASE_ADDR_ALIGN, and a caller's stream may start anywhere. */
  ps_u64 data_offset[PS_MAX_COLS];
  ps_u64 validity_offset[PS_MAX_COLS];
  ps_u64 aux_offset;
  ps_u64 selection_offset;
  ps_u64 bitmap_offset;
  ps_u64 mask_offset;
  ps_u64 rows;          /* rows in this chunk, > 0 */
  ps_u32 has_selection; /* nonzero: only rows set in the input selection are evaluated */
  ps_u32 want_bitmap;   /* nonzero: write ceil(rows/8) bytes of result bitmap */
  ps_u32 want_mask;     /* nonzero: write rows bytes of 1/0 */
  ps_u32 want_count;    /* nonzero: add the selected rows to status[COUNT] */
} ps_filter_launch;

/* select.cl (row ids, reduce, gather): one column or one selection. Kernel
 * arguments follow the block, in the order of each kernel's signature. */
typedef struct ps_select_launch {
  ps_prog_col col;    /* reduce, gather: the column (sizes from data/validity start) */
  ps_u64 data_offset; /* byte offsets into the buffer arguments */
  ps_u64 validity_offset;
  ps_u64 selection_offset; /* row ids: the bitmap; reduce: the optional selection */
  ps_u64 ids_offset;       /* gather: the ids */
  ps_u64 out_offset;       /* row ids: where id 0 of this chunk goes; gather: values */
  ps_u64 validity_out_offset;
  ps_u64 rows;        /* row ids, reduce: rows of the chunk; gather: rows of the column */
  ps_u64 id_base;     /* row ids: added to every id */
  ps_u64 first;       /* gather: index of the launch's first id (a multiple of 32) */
  ps_u64 count;       /* gather: ids in total */
  ps_u64 run_words;   /* row ids: words per work-item (ps_count_runs / ps_write_runs; by groups, 0 or 1 is one) */
  ps_u32 index_bytes; /* 4 or 8 */
  ps_u32 out_type;    /* gather: PS_GATHER_* of core/backend.h */
  ps_u32 value_bytes; /* gather: bytes per value */
  ps_u32 flags;       /* PS_SELECT_* */
} ps_select_launch;

#define PS_SELECT_HAS_SELECTION 1u /* reduce: count only rows set in the selection */
#define PS_SELECT_WANT_VALIDITY 2u /* gather: write the validity bitmap */
#define PS_SELECT_SUM_OFFSETS 4u   /* row ids by work-groups: ps_write_ids sums the counts before its group */

/* gather: output kinds (the numbers of core/backend.h's PS_GATHER_*) */
#define PS_SELECT_GATHER_CODE32 1u
#define PS_SELECT_GATHER_INT 2u
#define PS_SELECT_GATHER_F64 3u
#define PS_SELECT_GATHER_F32 4u

/* Status words of the select kernels. */
#define PS_SELECT_STATUS_CORRUPT 0u  /* reduce: nonzero if a corrupt code was read */
#define PS_SELECT_STATUS_BAD_ID 0u   /* gather: least index (in the launch) of an id >= rows */
#define PS_SELECT_STATUS_BAD_CODE 1u /* gather: least index of a corrupt code */

/* reduce: values per work-group partial: count, min, max, sum low, sum high */
#define PS_REDUCE_PARTIAL_WORDS 5u

#endif /* PS_CL_LAUNCH_H */
