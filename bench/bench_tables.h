/* The SSB lineorder and TPC-H lineitem tables of the query cases
 * (bench_tables.c), and their exact answers computed on the host while the
 * rows are generated. */
#ifndef PS_BENCH_TABLES_H
#define PS_BENCH_TABLES_H

#include "bench.h"

/* lineorder columns */
enum { LO_ORDERDATE, LO_QUANTITY, LO_EXTENDEDPRICE, LO_DISCOUNT, LO_REVENUE, LO_NCOLS };
/* lineitem columns */
enum { LI_SHIPDATE, LI_DISCOUNT, LI_QUANTITY, LI_EXTENDEDPRICE, LI_TAX, LI_RETURNFLAG, LI_LINESTATUS, LI_NCOLS };

/* A column on the device, encoded by ps_encode_for / ps_encode_dict. */
typedef struct bench_tcol {
  const char *name;
  ps_for_desc desc; /* n, type, width, scale, reference, data_size; pointers unused */
  ps_buffer *data;
  ps_column *col;
  int is_dict;
  ps_encoded_dict dict; /* is_dict: the sorted dictionary (dict.dict) */
  void *zones_mem;      /* the encoder's zone maps, kept for desc.zones (one allocation) */
} bench_tcol;

typedef __int128 bench_i128;

#define SSB_QUERIES 3 /* Q1.1, Q1.2, Q1.3 */
#define BENCH_EDGE_IDS 64

typedef struct ssb_answers {
  bench_i128 revenue[SSB_QUERIES]; /* SUM(lo_extendedprice * lo_discount) */
  uint64_t count[SSB_QUERIES];
  /* after-filter cases */
  uint64_t price_n;
  bench_i128 price_sum;
  int64_t price_min, price_max;
  uint64_t year1993;             /* lo_orderdate in 1993 */
  bench_i128 year1993_price_sum; /* ... their lo_extendedprice (aggregate over a selection) */
  uint64_t year1993_qty_lt25;    /* ... AND lo_quantity < 25 (refine) */
  uint64_t discount_1_3;         /* lo_discount BETWEEN 1 AND 3 (mask) */
  uint64_t q11_first[BENCH_EDGE_IDS], q11_last[BENCH_EDGE_IDS]; /* Q1.1's first and last row ids */
  uint64_t *gather_ids;                                         /* 1% of the rows, ascending */
  int32_t *gather_price;                                        /* their lo_extendedprice */
  uint64_t n_gather;
  uint64_t range_1pct; /* lo_orderdate BETWEEN 19950101 AND 19950124: 24 of the 2,406 order days */
} ssb_answers;

/* TPC-H Q1's groups: l_returnflag A N R x l_linestatus F O (dictionary order). */
typedef struct tpch_group {
  uint64_t count;
  bench_i128 sum_qty;        /* scale 0 */
  bench_i128 sum_base;       /* scale 2 */
  bench_i128 sum_disc_price; /* scale 4 */
  bench_i128 sum_charge;     /* scale 6 */
  bench_i128 sum_disc;       /* scale 2 */
} tpch_group;

typedef struct tpch_answers {
  bench_i128 q6_revenue; /* scale 4 */
  uint64_t q6_count;
  tpch_group q1[3][2];
} tpch_answers;

typedef struct bench_tables {
  uint64_t n;
  int sorted; /* rows in date order (lo_orderdate, l_shipdate), stably: the zone-map cases */
  int have_lineorder, have_lineitem;
  bench_tcol lo[LO_NCOLS];
  bench_tcol li[LI_NCOLS];
  ssb_answers ssb;
  tpch_answers tpch;
} bench_tables;

/* Date helpers: days since 1970-01-01 and yyyymmdd. */
int64_t bench_days(int y, int m, int d);
int32_t bench_yyyymmdd(int64_t days);

/* Generates, encodes and uploads lineorder (SSB) and lineitem (TPC-H) of n
 * rows each with dbgen's distributions (seeded from b->seed), computing the
 * exact answers on the way. Prints one line per table (rows, widths, bytes,
 * seconds). */
ps_status bench_tables_create(bench *b, uint64_t n, int lineorder, int lineitem, bench_tables *t);
/* The same with the rows sorted by date (stable), as a fact table that
 * arrives in time order: the row-id answers of the after-filter cases do
 * not hold for it, the query answers do. */
ps_status bench_tables_create_sorted(bench *b, uint64_t n, int sorted, bench_tables *t);
void bench_tables_destroy(bench_tables *t);

/* The cases over these tables: bench_after.c (ps_aggregate, ps_gather_values_device,
 * ps_filter_refine, ps_filter_mask, ps_selection_row_ids_device) and bench_query.c (SSB Q1.x,
 * TPC-H Q6 and Q1 through the query API). */
void bench_run_after(bench *b, bench_tables *t);
void bench_run_queries(bench *b, bench_tables *t);
/* GROUP BY of 10^5..10^6 groups over lineitem (bench_query.c). */
void bench_run_groups(bench *b, bench_tables *t);
/* The queries on a context over several devices (--devices), named only. */
void bench_run_multi(bench *b, bench_tables *t);
/* The zone-map cases (bench_query.c): SSB Q1.1-Q1.3, TPC-H Q6 and a filter
 * over 1 % of the order dates, each with pruning off and on, on the tables
 * as generated and sorted by date; the bytes the library read per call. */
void bench_run_zones(bench *b);

/* SSB Q1.k's WHERE clause (k = 0, 1, 2 for Q1.1, Q1.2, Q1.3) over lineorder's
 * orderdate, quantity and discount columns; k = 3: lo_orderdate in 1993 only. */
ps_status bench_ssb_where(ps_context *ctx, ps_column *date, ps_column *qty, ps_column *disc, int k, ps_expr **out);

/* Shared by those: one line of the report (bench_cases.c). */
void bench_print_header(const bench *b);
void bench_print_result(const bench *b, const bench_result *r);
/* A case whose call failed with st: "skip" for PS_ERR_UNSUPPORTED, else
 * "FAIL", the context's last error (or st's name) after r's note, no times. */
void bench_result_failed(const bench *b, bench_result *r, ps_status st);
/* Timed calls: warm-up, then reps device-timed calls of fn(arg). */
ps_status bench_time(bench *b, ps_status (*fn)(void *), void *arg, bench_stats *out);

#endif
