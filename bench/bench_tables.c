/* SSB lineorder and TPC-H lineitem with dbgen's distributions (our own code,
 * after the rules of the TPC-H specification, section 4.2.3, and of ssb-dbgen),
 * seeded; encoded with ps_encode_for / ps_encode_dict at the widths those
 * ranges imply; uploaded to the device. The exact answers of the cases are
 * computed here, from the plain values, as the rows are made.
 *
 * Rules used (both tables):
 * - orders of 1..7 lines (uniform); every line of an order has its order date,
 *   uniform over 1992-01-01 .. 1998-12-31 minus 151 days;
 * - quantity uniform 1..50; part key uniform 1..P; retail price (cents) of
 *   part p: 90000 + (p / 10) mod 20001 + 100 * (p mod 1000); extended price
 *   = quantity * retail price; discount uniform 0..10 (SSB: percent; TPC-H:
 *   0.00..0.10); TPC-H tax uniform 0.00..0.08;
 * - SSB: lo_orderdate as yyyymmdd (its d_datekey), P = 200000 * floor(1 +
 *   log2 SF), lo_revenue = extendedprice * (100 - discount) / 100;
 * - TPC-H: P = 200000 * SF; l_shipdate = order date + 1..121 days (dates are
 *   days since 1970-01-01); receipt date = ship date + 1..30; l_returnflag 'R'
 *   or 'A' (even odds) where the receipt date is on or before 1995-06-17 (the
 *   spec's CURRENTDATE), else 'N'; l_linestatus 'O' where the ship date is
 *   after it, else 'F'; decimals are FOR float64 columns holding the exact
 *   scaled integers (scale 2), as the packscan command stores them.
 * SF = rows / 6,000,000, at least 1. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "bench_tables.h"

int64_t bench_days(int y, int m, int d) {
  /* Howard Hinnant's days_from_civil */
  y -= m <= 2;
  int64_t era = (y >= 0 ? y : y - 399) / 400;
  int64_t yoe = y - era * 400;
  int64_t doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  int64_t doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

int32_t bench_yyyymmdd(int64_t z) {
  z += 719468;
  int64_t era = (z >= 0 ? z : z - 146096) / 146097;
  int64_t doe = z - era * 146097;
  int64_t yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  int64_t y = yoe + era * 400;
  int64_t doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  int64_t mp = (5 * doy + 2) / 153;
  int64_t d = doy - (153 * mp + 2) / 5 + 1;
  int64_t m = mp + (mp < 10 ? 3 : -9);
  y += m <= 2;
  return (int32_t)(y * 10000 + m * 100 + d);
}

/* Uniform in [0, k) from 32 random bits (multiply-high). */
static uint32_t below(uint64_t r32, uint32_t k) { return (uint32_t)((r32 * k) >> 32); }

static uint64_t retail_cents(uint64_t p) { return 90000 + (p / 10) % 20001 + 100 * (p % 1000); }

/* Encodes plain values and uploads them as a FOR column. relabel_scale > 0
 * makes an integer column of scaled values a decimal (FOR float64) column of
 * that scale: the same reference and codes ps_encode_for(scale) would give. */
static ps_status upload_for(bench *b, const char *name, ps_type type, const void *values, uint64_t n, int relabel_scale,
                            bench_tcol *c) {
  ps_plain plain = {type, values, n, NULL};
  ps_encoded enc;
  char err[512] = "";
  memset(c, 0, sizeof *c);
  c->name = name;
  ps_status st = ps_encode_for(&plain, 0, 0, 0, NULL, err, sizeof err, &enc);
  if (st != PS_OK) {
    fprintf(stderr, "bench: encoding %s: %s\n", name, err);
    return st;
  }
  c->desc = enc.desc;
  c->desc.data = NULL;
  c->desc.validity = NULL;
  c->desc.zones = NULL;
  if (enc.desc.zones) { /* kept beyond ps_encoded_destroy: the column is made from desc below */
    const ps_zone_map *z = enc.desc.zones;
    ps_zone_map *copy = malloc(sizeof *copy + z->blocks * 17 + 1);
    if (copy) {
      uint64_t *mn = (uint64_t *)(void *)(copy + 1), *mx = mn + z->blocks;
      uint8_t *fl = (uint8_t *)(mx + z->blocks);
      memcpy(mn, z->min, z->blocks * 8);
      memcpy(mx, z->max, z->blocks * 8);
      memcpy(fl, z->flags, z->blocks);
      *copy = (ps_zone_map){sizeof *copy, z->block_rows, z->blocks, mn, mx, fl};
      c->zones_mem = copy;
      c->desc.zones = copy;
    }
  }
  if (relabel_scale > 0) {
    c->desc.type = PS_TYPE_FLOAT64;
    c->desc.scale = (uint32_t)relabel_scale;
  }
  st = ps_buffer_create(b->ctx, c->desc.data_size ? c->desc.data_size : 4, &c->data);
  if (st == PS_OK && c->desc.data_size) st = ps_buffer_write(b->ctx, c->data, 0, enc.data, c->desc.data_size);
  ps_encoded_destroy(&enc);
  if (st == PS_OK) st = ps_column_create_for_device(b->ctx, &c->desc, c->data, 0, NULL, 0, &c->col);
  if (st != PS_OK) fprintf(stderr, "bench: uploading %s: %s\n", name, ps_context_last_error(b->ctx));
  return st;
}

/* A dictionary column of one-letter strings: ps_encode_dict sorts the
 * distinct strings (`letters`, already in byte order, so a row's code is its
 * letter's index), and the codes are packed by ps_encode_for. */
static ps_status upload_dict(bench *b, const char *name, const char *letters, const uint32_t *codes, uint64_t n,
                             bench_tcol *c) {
  size_t d = strlen(letters);
  int32_t offsets[8];
  for (size_t i = 0; i <= d; i++) offsets[i] = (int32_t)i;
  ps_strings s = {d, offsets, NULL, (const uint8_t *)letters, NULL};
  char err[512] = "";
  ps_status st = upload_for(b, name, PS_TYPE_UINT32, codes, n, 0, c);
  if (st != PS_OK) return st;
  ps_column_destroy(c->col);
  c->col = NULL;
  st = ps_encode_dict(&s, NULL, err, sizeof err, &c->dict);
  if (st != PS_OK) {
    fprintf(stderr, "bench: dictionary of %s: %s\n", name, err);
    return st;
  }
  c->is_dict = 1;
  st = ps_column_create_dict_device(b->ctx, &c->dict.dict, &c->desc, c->data, 0, NULL, 0, &c->col);
  if (st != PS_OK) fprintf(stderr, "bench: uploading %s: %s\n", name, ps_context_last_error(b->ctx));
  return st;
}

static void tcol_destroy(bench_tcol *c) {
  free(c->zones_mem);
  ps_column_destroy(c->col);
  ps_buffer_destroy(c->data);
  if (c->is_dict) ps_encoded_dict_destroy(&c->dict);
  memset(c, 0, sizeof *c);
}

/* The stable order of rows by key (0 <= key < nkeys): a counting sort. */
static uint64_t *order_by(const uint32_t *key, uint64_t n, uint32_t nkeys) {
  uint64_t *start = calloc((size_t)nkeys + 1, 8), *perm = malloc(n * 8 + 8);
  if (!start || !perm) {
    free(start);
    free(perm);
    return NULL;
  }
  for (uint64_t i = 0; i < n; i++) start[key[i] + 1]++;
  for (uint32_t k = 0; k < nkeys; k++) start[k + 1] += start[k];
  for (uint64_t i = 0; i < n; i++) perm[start[key[i]]++] = i;
  free(start);
  return perm;
}

/* v[i] = v[perm[i]] for 32-bit arrays, through scratch. */
static void permute(int32_t *v, const uint64_t *perm, uint64_t n, int32_t *scratch) {
  for (uint64_t i = 0; i < n; i++) scratch[i] = v[perm[i]];
  memcpy(v, scratch, n * 4);
}

static double sf_of(uint64_t n) { return n < 6000000 ? 1.0 : (double)n / 6e6; }

static void print_table(const char *name, const bench_tcol *cols, int ncols, uint64_t n, double secs) {
  double bytes = 0;
  printf("table     %s: %" PRIu64 " rows, widths", name, n);
  for (int i = 0; i < ncols; i++) {
    printf(" %s %u", cols[i].name, cols[i].desc.width);
    bytes += (double)cols[i].desc.data_size;
  }
  printf("; %.1f MB packed; generated, encoded and uploaded in %.1f s\n", bytes / 1e6, secs);
  fflush(stdout);
}

static ps_status make_lineorder(bench *b, uint64_t n, bench_tables *t) {
  ssb_answers *a = &t->ssb;
  int32_t *date = malloc(n * 4 + 4), *qty = malloc(n * 4 + 4), *price = malloc(n * 4 + 4), *disc = malloc(n * 4 + 4),
          *rev = malloc(n * 4 + 4);
  uint64_t gcap = n / 50 + 16;
  a->gather_ids = malloc(gcap * 8);
  a->gather_price = malloc(gcap * 4);
  ps_status st = PS_OK;
  if (!date || !qty || !price || !disc || !rev || !a->gather_ids || !a->gather_price) st = PS_ERR_OUT_OF_MEMORY;
  const int64_t d0 = bench_days(1992, 1, 1), nd = bench_days(1998, 12, 31) - 151 - d0 + 1;
  const int32_t y93a = 19930101, y93b = 19931231;
  const int32_t q_date_lo[SSB_QUERIES] = {19930101, 19940101, 19940205};
  const int32_t q_date_hi[SSB_QUERIES] = {19931231, 19940131, 19940211};
  const int32_t q_disc_lo[SSB_QUERIES] = {1, 4, 5}, q_disc_hi[SSB_QUERIES] = {3, 6, 7};
  const int32_t q_qty_lo[SSB_QUERIES] = {1, 26, 26}, q_qty_hi[SSB_QUERIES] = {24, 35, 35};
  double sf = sf_of(n);
  uint64_t parts = 200000 * (uint64_t)floor(1 + log2(sf));
  int32_t *ymd = malloc((size_t)nd * 4);
  uint32_t *day = t->sorted ? malloc(n * 4 + 4) : NULL;
  if (!ymd || (t->sorted && !day)) st = PS_ERR_OUT_OF_MEMORY;
  for (int64_t k = 0; st == PS_OK && k < nd; k++) ymd[k] = bench_yyyymmdd(d0 + k);
  uint64_t rng = b->seed ^ UINT64_C(0x55b1e0), pick = b->seed ^ UINT64_C(0x6a7e4);
  a->price_min = INT64_MAX;
  a->price_max = INT64_MIN;
  uint64_t nlast = 0;
  for (uint64_t i = 0; st == PS_OK && i < n;) {
    uint64_t r = bench_rand(&rng);
    uint32_t lines = 1 + below(r & 0xffffffffu, 7);
    uint32_t dk = below(r >> 32, (uint32_t)nd);
    int32_t od = ymd[dk];
    for (uint32_t l = 0; l < lines && i < n; l++, i++) {
      uint64_t r1 = bench_rand(&rng), r2 = bench_rand(&rng);
      int32_t q = 1 + (int32_t)below(r1 & 0xffffffffu, 50);
      int32_t ds = (int32_t)below(r1 >> 32, 11);
      uint64_t part = 1 + ((r2 & 0xffffffffu) * parts >> 32);
      int32_t p = (int32_t)((uint64_t)q * retail_cents(part));
      if (day) day[i] = dk;
      a->range_1pct += od >= 19950101 && od <= 19950124;
      date[i] = od;
      qty[i] = q;
      price[i] = p;
      disc[i] = ds;
      rev[i] = (int32_t)((int64_t)p * (100 - ds) / 100);
      for (int k = 0; k < SSB_QUERIES; k++)
        if (od >= q_date_lo[k] && od <= q_date_hi[k] && ds >= q_disc_lo[k] && ds <= q_disc_hi[k] && q >= q_qty_lo[k] &&
            q <= q_qty_hi[k]) {
          a->revenue[k] += (bench_i128)p * ds;
          if (k == 0) {
            if (a->count[0] < BENCH_EDGE_IDS) a->q11_first[a->count[0]] = i;
            a->q11_last[nlast++ % BENCH_EDGE_IDS] = i;
          }
          a->count[k]++;
        }
      a->price_sum += p;
      if (p < a->price_min) a->price_min = p;
      if (p > a->price_max) a->price_max = p;
      if (od >= y93a && od <= y93b) {
        a->year1993++;
        a->year1993_price_sum += p;
        a->year1993_qty_lt25 += q < 25;
      }
      a->discount_1_3 += ds >= 1 && ds <= 3;
      if (below(bench_rand(&pick) & 0xffffffffu, 100) == 0 && a->n_gather < gcap) {
        a->gather_ids[a->n_gather] = i;
        a->gather_price[a->n_gather++] = p;
      }
    }
  }
  a->price_n = n;
  /* q11_last is a ring: put it in ascending order */
  if (nlast > BENCH_EDGE_IDS) {
    uint64_t tmp[BENCH_EDGE_IDS];
    for (int k = 0; k < BENCH_EDGE_IDS; k++) tmp[k] = a->q11_last[(nlast + (uint64_t)k) % BENCH_EDGE_IDS];
    memcpy(a->q11_last, tmp, sizeof tmp);
  }
  free(ymd);
  if (st == PS_OK && day) {
    uint64_t *perm = order_by(day, n, (uint32_t)nd);
    int32_t *scratch = malloc(n * 4 + 4);
    if (!perm || !scratch) st = PS_ERR_OUT_OF_MEMORY;
    int32_t *cols[] = {date, qty, price, disc, rev};
    for (int k = 0; st == PS_OK && k < 5; k++) permute(cols[k], perm, n, scratch);
    free(perm);
    free(scratch);
  }
  free(day);
  if (st == PS_OK) st = upload_for(b, "lo_orderdate", PS_TYPE_INT32, date, n, 0, &t->lo[LO_ORDERDATE]);
  if (st == PS_OK) st = upload_for(b, "lo_quantity", PS_TYPE_INT32, qty, n, 0, &t->lo[LO_QUANTITY]);
  if (st == PS_OK) st = upload_for(b, "lo_extendedprice", PS_TYPE_INT32, price, n, 0, &t->lo[LO_EXTENDEDPRICE]);
  if (st == PS_OK) st = upload_for(b, "lo_discount", PS_TYPE_INT32, disc, n, 0, &t->lo[LO_DISCOUNT]);
  if (st == PS_OK) st = upload_for(b, "lo_revenue", PS_TYPE_INT32, rev, n, 0, &t->lo[LO_REVENUE]);
  free(date);
  free(qty);
  free(price);
  free(disc);
  free(rev);
  return st;
}

static ps_status make_lineitem(bench *b, uint64_t n, bench_tables *t) {
  tpch_answers *a = &t->tpch;
  int32_t *ship = malloc(n * 4 + 4), *disc = malloc(n * 4 + 4), *qty = malloc(n * 4 + 4), *price = malloc(n * 4 + 4),
          *tax = malloc(n * 4 + 4);
  uint32_t *flag = malloc(n * 4 + 4), *status = malloc(n * 4 + 4);
  ps_status st = PS_OK;
  if (!ship || !disc || !qty || !price || !tax || !flag || !status) st = PS_ERR_OUT_OF_MEMORY;
  const int64_t d0 = bench_days(1992, 1, 1), nd = bench_days(1998, 12, 31) - 151 - d0 + 1;
  const int64_t current = bench_days(1995, 6, 17);
  const int64_t q6_lo = bench_days(1994, 1, 1), q6_hi = bench_days(1995, 1, 1);
  const int64_t q1_hi = bench_days(1998, 12, 1) - 90;
  uint64_t parts = (uint64_t)(200000 * sf_of(n));
  uint64_t rng = b->seed ^ UINT64_C(0x71e17e3);
  for (uint64_t i = 0; st == PS_OK && i < n;) {
    uint64_t r = bench_rand(&rng);
    uint32_t lines = 1 + below(r & 0xffffffffu, 7);
    int64_t od = d0 + below(r >> 32, (uint32_t)nd);
    for (uint32_t l = 0; l < lines && i < n; l++, i++) {
      uint64_t r1 = bench_rand(&rng), r2 = bench_rand(&rng);
      int32_t q = 1 + (int32_t)below(r1 & 0xffffffffu, 50);
      int32_t ds = (int32_t)below(r1 >> 32, 11);
      uint64_t part = 1 + ((r2 & 0xffffffffu) * parts >> 32);
      int32_t tx = (int32_t)below(r2 >> 32, 9);
      uint64_t r3 = bench_rand(&rng);
      int64_t sd = od + 1 + below(r3 & 0xffffffffu, 121);
      int64_t rd = sd + 1 + below((r3 >> 32) & 0x7fffffffu, 30);
      uint32_t fl = rd <= current ? ((r3 >> 63) ? 2u : 0u) : 1u; /* A N R */
      uint32_t ls = sd > current ? 1u : 0u;                      /* F O */
      int64_t p = (int64_t)q * (int64_t)retail_cents(part);
      ship[i] = (int32_t)sd;
      disc[i] = ds;
      qty[i] = q;
      price[i] = (int32_t)p;
      tax[i] = tx;
      flag[i] = fl;
      status[i] = ls;
      if (sd >= q6_lo && sd < q6_hi && ds >= 5 && ds <= 7 && q < 24) {
        a->q6_revenue += (bench_i128)p * ds;
        a->q6_count++;
      }
      if (sd <= q1_hi) {
        tpch_group *g = &a->q1[fl][ls];
        g->count++;
        g->sum_qty += q;
        g->sum_base += p;
        g->sum_disc_price += (bench_i128)p * (100 - ds);
        g->sum_charge += (bench_i128)p * (100 - ds) * (100 + tx);
        g->sum_disc += ds;
      }
    }
  }
  if (st == PS_OK && t->sorted) {
    uint32_t *key = malloc(n * 4 + 4);
    int32_t *scratch = malloc(n * 4 + 4);
    uint64_t *perm = NULL;
    if (key && scratch) {
      for (uint64_t i = 0; i < n; i++) key[i] = (uint32_t)(ship[i] - d0);
      perm = order_by(key, n, (uint32_t)nd + 128);
    }
    if (!perm) st = PS_ERR_OUT_OF_MEMORY;
    int32_t *cols[] = {ship, disc, qty, price, tax, (int32_t *)flag, (int32_t *)status};
    for (int k = 0; st == PS_OK && k < 7; k++) permute(cols[k], perm, n, scratch);
    free(key);
    free(scratch);
    free(perm);
  }
  if (st == PS_OK) st = upload_for(b, "l_shipdate", PS_TYPE_INT32, ship, n, 0, &t->li[LI_SHIPDATE]);
  if (st == PS_OK) st = upload_for(b, "l_discount", PS_TYPE_INT32, disc, n, 2, &t->li[LI_DISCOUNT]);
  if (st == PS_OK) st = upload_for(b, "l_quantity", PS_TYPE_INT32, qty, n, 0, &t->li[LI_QUANTITY]);
  if (st == PS_OK) st = upload_for(b, "l_extendedprice", PS_TYPE_INT32, price, n, 2, &t->li[LI_EXTENDEDPRICE]);
  if (st == PS_OK) st = upload_for(b, "l_tax", PS_TYPE_INT32, tax, n, 2, &t->li[LI_TAX]);
  if (st == PS_OK) st = upload_dict(b, "l_returnflag", "ANR", flag, n, &t->li[LI_RETURNFLAG]);
  if (st == PS_OK) st = upload_dict(b, "l_linestatus", "FO", status, n, &t->li[LI_LINESTATUS]);
  free(ship);
  free(disc);
  free(qty);
  free(price);
  free(tax);
  free(flag);
  free(status);
  return st;
}

static ps_status tables_create(bench *b, uint64_t n, int lineorder, int lineitem, int sorted, bench_tables *t) {
  memset(t, 0, sizeof *t);
  t->n = n;
  t->sorted = sorted;
  ps_status st = PS_OK;
  if (lineorder) {
    double t0 = bench_now_ms();
    st = make_lineorder(b, n, t);
    if (st == PS_OK) {
      t->have_lineorder = 1;
      print_table(sorted ? "lineorder (by lo_orderdate)" : "lineorder", t->lo, LO_NCOLS, n,
                  (bench_now_ms() - t0) / 1e3);
    }
  }
  if (st == PS_OK && lineitem) {
    double t0 = bench_now_ms();
    st = make_lineitem(b, n, t);
    if (st == PS_OK) {
      t->have_lineitem = 1;
      print_table(sorted ? "lineitem (by l_shipdate)" : "lineitem", t->li, LI_NCOLS, n, (bench_now_ms() - t0) / 1e3);
    }
  }
  if (st != PS_OK) bench_tables_destroy(t);
  return st;
}

ps_status bench_tables_create(bench *b, uint64_t n, int lineorder, int lineitem, bench_tables *t) {
  return tables_create(b, n, lineorder, lineitem, 0, t);
}

ps_status bench_tables_create_sorted(bench *b, uint64_t n, int sorted, bench_tables *t) {
  return tables_create(b, n, 1, 1, sorted, t);
}

void bench_tables_destroy(bench_tables *t) {
  for (int i = 0; i < LO_NCOLS; i++) tcol_destroy(&t->lo[i]);
  for (int i = 0; i < LI_NCOLS; i++) tcol_destroy(&t->li[i]);
  free(t->ssb.gather_ids);
  free(t->ssb.gather_price);
  t->ssb.gather_ids = NULL;
  t->ssb.gather_price = NULL;
  t->have_lineorder = t->have_lineitem = 0;
}

/* Whether --cases (if given) names one of these. */
static int any_wanted(const bench *b, const char *const *names, size_t k) {
  if (!b->cases || !b->cases[0]) return 1;
  for (size_t i = 0; i < k; i++) {
    size_t len = strlen(names[i]);
    for (const char *p = b->cases; *p;) {
      const char *end = strchr(p, ',');
      size_t l = end ? (size_t)(end - p) : strlen(p);
      if (l == len && strncmp(p, names[i], len) == 0) return 1;
      if (!end) break;
      p = end + 1;
    }
  }
  return 0;
}

void bench_run_tables(bench *b) {
  static const char *const ssb[] = {"ssb_q1_1",    "ssb_q1_2", "ssb_q1_3", "aggregate",      "aggregate_sel",
                                    "gather_1pct", "refine",   "mask",     "row_ids",        "multi_ssb_q1_1",
                                    "multi_host_ssb_q1_1", "host_ssb_q1_1"};
  static const char *const tpch[] = {"tpch_q6", "tpch_q1", "groups_date_qty", "groups_price", "multi_tpch_q1",
                                     "multi_host_tpch_q1", "host_tpch_q1"};
  int lineorder = any_wanted(b, ssb, sizeof ssb / sizeof *ssb), lineitem = any_wanted(b, tpch, sizeof tpch / sizeof *tpch);
  if (!lineorder && !lineitem) return;
  bench_tables t;
  printf("\n");
  ps_status st = bench_tables_create(b, b->table_rows, lineorder, lineitem, &t);
  if (st != PS_OK) {
    if (b->n_results < BENCH_MAX_CASES) {
      bench_result *r = &b->results[b->n_results++];
      memset(r, 0, sizeof *r);
      snprintf(r->name, sizeof r->name, "tables");
      r->rows = b->table_rows;
      r->check = "FAIL";
      snprintf(r->note, sizeof r->note, "generating the tables: %s", ps_status_name(st));
      bench_print_result(b, r);
    }
    return;
  }
  bench_print_header(b);
  bench_run_queries(b, &t);
  bench_run_groups(b, &t);
  bench_run_after(b, &t);
  bench_run_multi(b, &t);
  bench_tables_destroy(&t);
}
