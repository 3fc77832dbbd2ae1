/*
 * filter_cols.cl: the columns of a filter launch (filter.cl's arguments) as
 * the per-row interpreter kernels_shared/ps_rows.h reads them; built after
 * common.cl and the shape table, in front of ps_rows.h and filter.cl.
 */

typedef struct ps_filter_src {
  __constant ps_filter_launch *launch;
  const ps_bytes *data;     /* the kernel's 16 data buffers */
  const ps_bytes *validity; /* the kernel's 16 validity buffers */
  ps_region aux;            /* the program's aux words */
} ps_filter_src;

typedef ps_filter_src ps_rows_src;
#define PS_ROWS_PROG(s) (&(s)->launch->prog)
#define PS_ROWS_DATA(s, c) ((s)->data[c] + (s)->launch->data_offset[c])
#define PS_ROWS_ALIGNED(s, c) (((s)->launch->data_offset[c] & 3) == 0)
#define PS_ROWS_VALIDITY(s, c) ((s)->validity[c] + (s)->launch->validity_offset[c])
#define PS_ROWS_AUX(s) ((s)->aux)
#define PS_ROWS_POW10(s, c) (ps_pow10 + min((uint)(s)->launch->prog.cols[c].scale, 18u))
#define PS_ROWS_AUX_FAULT PS_FILTER_CORRUPT_AUX
