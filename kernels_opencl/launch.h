/*
 * The per-launch parameters of filter.cl: the program plus what changes with
 * every chunk (buffer offsets, row count, which outputs are wanted). Read by
 * the host backend (C11) and, embedded after ps_program.h, by OpenCL C, so it
 * uses only the fixed-width types of ps_program.h. Uploaded to the device as
 * one __constant buffer per launch.
 */
#ifndef PS_FILTER_LAUNCH_H
#define PS_FILTER_LAUNCH_H

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

#endif /* PS_FILTER_LAUNCH_H */
