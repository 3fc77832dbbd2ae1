/* packscan demo: generates a TPC-H lineitem-like table, writes it as a table
 * file, reopens it, and runs TPC-H-style WHERE clauses on a backend. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "dict_dedup.h"
#include "query.h"

static uint64_t rng_state;
static uint64_t rnd(void) { /* splitmix64 */
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}
static int64_t uniform(int64_t lo, int64_t hi) { return lo + (int64_t)(rnd() % (uint64_t)(hi - lo + 1)); }

static const char *const shipmodes[] = {"AIR", "FOB", "MAIL", "RAIL", "REG AIR", "SHIP", "TRUCK"};
static const char *const words[] = {"furiously",   "carefully",   "quickly",  "slyly",    "blithely",   "special",
                                    "requests",    "deposits",    "accounts", "packages", "pending",    "regular",
                                    "final",       "express",     "ironic",   "bold",     "even",       "silent",
                                    "theodolites", "pinto beans", "foxes",    "ideas",    "asymptotes", "dolphins"};

static const struct {
  const char *name, *where;
} queries[] = {
    {"Q1  pricing summary", "l_shipdate <= DATE '1998-09-02'"},
    {"Q6  revenue change",
     "l_shipdate >= DATE '1994-01-01' AND l_shipdate < DATE '1995-01-01' AND l_discount BETWEEN 0.05 AND 0.07 AND "
     "l_quantity < 24"},
    {"Q10 returned items", "l_returnflag = 'R' AND l_shipdate >= DATE '1993-10-01' AND l_shipdate < DATE '1994-01-01'"},
    {"Q12 shipping modes",
     "l_shipmode IN ('MAIL', 'SHIP') AND l_commitdate < l_receiptdate AND l_shipdate < l_commitdate AND "
     "l_receiptdate >= DATE '1994-01-01' AND l_receiptdate < DATE '1995-01-01'"},
    {"Q13 comments", "l_comment NOT LIKE '%special%requests%'"},
    {"Q19 discounted revenue",
     "(l_quantity BETWEEN 1 AND 11 AND l_shipmode IN ('AIR', 'REG AIR') AND l_extendedprice < 20000) OR "
     "(l_quantity BETWEEN 10 AND 20 AND l_returnflag = 'R' AND NOT l_shipmode = 'TRUCK')"},
};

enum { C_ORDERKEY, C_QUANTITY, C_PRICE, C_DISCOUNT, C_SHIP, C_COMMIT, C_RECEIPT, C_FLAG, C_MODE, C_COMMENT, NCOLS };
static const char *const colnames[NCOLS] = {"l_orderkey", "l_quantity",   "l_extendedprice", "l_discount",
                                            "l_shipdate", "l_commitdate", "l_receiptdate",   "l_returnflag",
                                            "l_shipmode", "l_comment"};

static int encode_for(const void *vals, ps_type type, uint64_t n, ps_encoded *out, const char *name) {
  ps_plain p = {type, vals, n, NULL};
  char err[TOOL_ERR_SIZE];
  ps_status st = ps_encode_for(&p, 0, 0, 0, NULL, err, sizeof err, out);
  if (st != PS_OK) fprintf(stderr, "packscan demo: encoding %s: %s\n", name, lib_error(st, err));
  return st == PS_OK ? 0 : -1;
}

/* Strings from a known list: row i is list[idx[i]]. */
static int encode_strings(const char *const *list, size_t k, const uint32_t *idx, uint64_t n, tool_dict *out,
                          const char *name, uint64_t *raw_bytes) {
  int64_t *offs = malloc((k + 1) * sizeof *offs);
  tbuf bytes = {0};
  char err[TOOL_ERR_SIZE];
  int rc = -1;
  if (!offs) goto done;
  offs[0] = 0;
  for (size_t i = 0; i < k; i++) {
    if (tbuf_append(&bytes, list[i], strlen(list[i]))) goto done;
    offs[i + 1] = (int64_t)bytes.len;
  }
  ps_strings s;
  memset(&s, 0, sizeof s);
  s.n = k;
  s.offsets64 = offs;
  s.bytes = bytes.p ? bytes.p : (const uint8_t *)"";
  if (tool_encode_dict_indexed(&s, idx, n, NULL, out, err, sizeof err)) {
    fprintf(stderr, "packscan demo: encoding %s: %s\n", name, err);
    goto done;
  }
  /* plain size: Arrow utf8 (int32 offsets + bytes) of all rows */
  *raw_bytes = (n + 1) * 4;
  for (uint64_t i = 0; i < n; i++) *raw_bytes += (uint64_t)(offs[idx[i] + 1] - offs[idx[i]]);
  rc = 0;
done:
  if (rc && !offs) fprintf(stderr, "packscan demo: out of memory\n");
  free(offs);
  tbuf_free(&bytes);
  return rc;
}

/* Generates and encodes the table into cols (encodings kept in fors/dicts). */
static int generate(uint64_t n, ps_encoded *fors, tool_dict *dicts, tbl_write_column *cols) {
  int64_t *orderkey = malloc(n * 8 + 8), *price = malloc(n * 8 + 8);
  int32_t *qty = malloc(n * 4 + 4), *disc = malloc(n * 4 + 4);
  int32_t *ship = malloc(n * 4 + 4), *commit = malloc(n * 4 + 4), *receipt = malloc(n * 4 + 4);
  uint32_t *flag = malloc(n * 4 + 4), *mode = malloc(n * 4 + 4), *com = malloc(n * 4 + 4);
  /* Comments: a vocabulary of random phrases, as TPC-H draws its text from a
   * grammar; rows pick phrases at random. */
  enum { NPHRASES = 4096 };
  char **phrases = calloc(NPHRASES, sizeof *phrases);
  static const char *const flags[] = {"A", "N", "R"};
  uint64_t raw[3] = {0, 0, 0};
  int rc = -1;
  if (!orderkey || !price || !qty || !disc || !ship || !commit || !receipt || !flag || !mode || !com || !phrases) {
    fprintf(stderr, "packscan demo: out of memory for %llu rows\n", (unsigned long long)n);
    goto done;
  }
  const int32_t d_start = (int32_t)days_from_civil(1992, 1, 1), d_end = (int32_t)days_from_civil(1998, 8, 2);
  const int32_t d_cut = (int32_t)days_from_civil(1995, 6, 17);
  int64_t okey = 1;
  int lines_left = 0;
  int32_t odate = d_start;
  for (int k = 0; k < NPHRASES; k++) {
    tbuf ph = {0};
    int nw = (int)uniform(2, 5);
    for (int w = 0; w < nw; w++) {
      const char *wd = words[rnd() % (sizeof words / sizeof *words)];
      if ((w && tbuf_putc(&ph, ' ')) || tbuf_append(&ph, wd, strlen(wd))) goto oom;
    }
    if (tbuf_putc(&ph, 0)) goto oom;
    phrases[k] = (char *)ph.p;
  }
  for (uint64_t i = 0; i < n; i++) {
    if (lines_left == 0) { /* a new order: 1..7 lines, sparse keys as in TPC-H */
      okey += uniform(1, 4);
      lines_left = (int)uniform(1, 7);
      odate = (int32_t)uniform(d_start, d_end);
    }
    lines_left--;
    orderkey[i] = okey;
    qty[i] = (int32_t)uniform(1, 50);
    price[i] = qty[i] * uniform(90000, 209999); /* cents */
    disc[i] = (int32_t)uniform(0, 10);          /* hundredths */
    ship[i] = odate + (int32_t)uniform(1, 121);
    commit[i] = odate + (int32_t)uniform(30, 90);
    receipt[i] = ship[i] + (int32_t)uniform(1, 30);
    flag[i] = receipt[i] <= d_cut ? (rnd() & 1 ? 2 : 0) : 1; /* R or A before the cut, else N */
    mode[i] = (uint32_t)(rnd() % 7);
    com[i] = (uint32_t)(rnd() % NPHRASES);
  }
  /* Decimals: the scaled integers, stored as float64 columns with their scale. */
  if (encode_for(orderkey, PS_TYPE_INT64, n, &fors[C_ORDERKEY], colnames[C_ORDERKEY]) ||
      encode_for(qty, PS_TYPE_INT32, n, &fors[C_QUANTITY], colnames[C_QUANTITY]) ||
      encode_for(price, PS_TYPE_INT64, n, &fors[C_PRICE], colnames[C_PRICE]) ||
      encode_for(disc, PS_TYPE_INT32, n, &fors[C_DISCOUNT], colnames[C_DISCOUNT]) ||
      encode_for(ship, PS_TYPE_INT32, n, &fors[C_SHIP], colnames[C_SHIP]) ||
      encode_for(commit, PS_TYPE_INT32, n, &fors[C_COMMIT], colnames[C_COMMIT]) ||
      encode_for(receipt, PS_TYPE_INT32, n, &fors[C_RECEIPT], colnames[C_RECEIPT]) ||
      encode_strings(flags, 3, flag, n, &dicts[C_FLAG], colnames[C_FLAG], &raw[0]) ||
      encode_strings(shipmodes, 7, mode, n, &dicts[C_MODE], colnames[C_MODE], &raw[1]) ||
      encode_strings((const char *const *)phrases, NPHRASES, com, n, &dicts[C_COMMENT], colnames[C_COMMENT], &raw[2]))
    goto done;
  for (int c = 0; c < NCOLS; c++) {
    tbl_write_column *w = &cols[c];
    memset(w, 0, sizeof *w);
    w->name = colnames[c];
    if (c >= C_FLAG) {
      w->encoding = TBL_ENC_DICT;
      w->desc = dicts[c].codes.desc;
      w->dict = dicts[c].uniq.dict;
    } else {
      w->encoding = TBL_ENC_FOR;
      w->desc = fors[c].desc;
      w->raw_bytes = n * (c == C_ORDERKEY || c == C_PRICE ? 8 : 4);
    }
  }
  cols[C_FLAG].raw_bytes = raw[0];
  cols[C_MODE].raw_bytes = raw[1];
  cols[C_COMMENT].raw_bytes = raw[2];
  cols[C_PRICE].logical = cols[C_DISCOUNT].logical = TBL_LOGICAL_DECIMAL;
  cols[C_PRICE].desc.type = PS_TYPE_FLOAT64;
  cols[C_PRICE].desc.scale = 2;
  cols[C_DISCOUNT].desc.type = PS_TYPE_FLOAT64;
  cols[C_DISCOUNT].desc.scale = 2;
  cols[C_DISCOUNT].raw_bytes = n * 8;
  cols[C_SHIP].logical = cols[C_COMMIT].logical = cols[C_RECEIPT].logical = TBL_LOGICAL_DATE;
  rc = 0;
  goto done;
oom:
  fprintf(stderr, "packscan demo: out of memory\n");
done:
  free(orderkey);
  free(price);
  free(qty);
  free(disc);
  free(ship);
  free(commit);
  free(receipt);
  free(flag);
  free(mode);
  free(com);
  if (phrases)
    for (int k = 0; k < NPHRASES; k++) free(phrases[k]);
  free(phrases);
  return rc;
}

static void demo_usage(FILE *f) {
  fprintf(f,
          "usage: packscan demo [options]\n"
          "  Generates a TPC-H lineitem-like table and runs TPC-H-style WHERE clauses on it.\n"
          "      --rows N        rows to generate (default 3000000; 'k' and 'M' suffixes)\n"
          "      --backend NAME  reference, opencl, cuda or auto (default)\n"
          "      --out FILE      write the table there and keep it (default: a temporary file)\n"
          "      --repeat N      evaluations per query; the best time is reported (default 3)\n"
          "      --seed S        random seed (default 1)\n"
          "      --no-check      do not compare counts with the reference backend\n");
}

int cmd_demo(int argc, char **argv) {
  unsigned long long rows = 3000000, repeat = 3, seed = 1;
  const char *backend = "auto", *out = NULL;
  int check = 1;
  argp a = {argc, 1, argv, NULL};
  for (; a.i < argc; a.i++) {
    int missing = 0;
    if (arg_flag(&a, "--help", "-h")) {
      demo_usage(stdout);
      return 0;
    } else if (arg_value(&a, "--rows", NULL, &missing)) {
      if (missing) break;
      if (parse_u64_arg(a.value, &rows) || rows > (1ull << 32)) {
        fprintf(stderr, "packscan demo: --rows needs a count up to 2^32\n");
        return 2;
      }
    } else if (arg_value(&a, "--repeat", NULL, &missing)) {
      if (missing) break;
      if (parse_u64_arg(a.value, &repeat) || repeat == 0 || repeat > 1000) {
        fprintf(stderr, "packscan demo: --repeat needs 1..1000\n");
        return 2;
      }
    } else if (arg_value(&a, "--seed", NULL, &missing)) {
      if (missing) break;
      if (parse_u64_arg(a.value, &seed)) {
        fprintf(stderr, "packscan demo: --seed needs a number\n");
        return 2;
      }
    } else if (arg_value(&a, "--backend", NULL, &missing)) {
      if (missing) break;
      backend = a.value;
    } else if (arg_value(&a, "--out", NULL, &missing)) {
      if (missing) break;
      out = a.value;
    } else if (arg_flag(&a, "--no-check", NULL)) {
      check = 0;
    } else {
      fprintf(stderr, "packscan demo: unknown argument '%s'\n", argv[a.i]);
      demo_usage(stderr);
      return 2;
    }
  }
  if (a.i < argc) {
    fprintf(stderr, "packscan demo: option '%s' needs a value\n", argv[a.i]);
    return 2;
  }
  /* The demo reads its table back from --out: a device or a FIFO cannot be. */
  struct stat out_st;
  if (out && stat(out, &out_st) == 0 && !S_ISREG(out_st.st_mode)) {
    fprintf(stderr, "packscan demo: --out %s is not a regular file; the demo reads its table back from it\n", out);
    return 2;
  }
  char err[TOOL_ERR_SIZE];
  ps_context *ctx = NULL, *ref = NULL;
  if (query_context(backend, &ctx, err, sizeof err)) {
    fprintf(stderr, "packscan demo: %s\n", err);
    return 1;
  }
  int is_ref = !strcmp(ps_context_backend(ctx), "reference");
  if (check && !is_ref && query_context("reference", &ref, err, sizeof err)) {
    fprintf(stderr, "packscan demo: %s\n", err);
    ps_context_destroy(ctx);
    return 1;
  }
  printf("packscan %s demo: %llu rows of TPC-H lineitem-like data\n", ps_version_string(), rows);
  printf("backend: %s; device: %s\n", ps_context_backend(ctx), ps_context_device(ctx));
  fflush(stdout);

  rng_state = seed;
  ps_encoded fors[NCOLS];
  tool_dict dicts[NCOLS];
  tbl_write_column cols[NCOLS];
  memset(fors, 0, sizeof fors);
  memset(dicts, 0, sizeof dicts);
  int rc = 1;
  tbl_table *t = NULL;
  char tmpl[4096] = "";
  double t0 = now_seconds();
  if (generate(rows, fors, dicts, cols)) goto done;
  double t_gen = now_seconds() - t0;
  if (!out) {
    const char *dir = getenv("TMPDIR");
    snprintf(tmpl, sizeof tmpl, "%s/packscan-demo-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(tmpl);
    if (fd < 0) {
      fprintf(stderr, "packscan demo: cannot create a temporary file %s: %s\n", tmpl, strerror(errno));
      tmpl[0] = 0;
      goto done;
    }
    close(fd);
  }
  const char *path = out ? out : tmpl;
  uint64_t fsize = 0;
  t0 = now_seconds();
  if (tbl_write_file(path, NULL, rows, cols, NCOLS, &fsize, err, sizeof err)) {
    fprintf(stderr, "packscan demo: %s\n", err);
    goto done;
  }
  double t_write = now_seconds() - t0;
  for (int c = 0; c < NCOLS; c++) { /* the file holds everything now */
    ps_encoded_destroy(&fors[c]);
    tool_dict_free(&dicts[c]);
  }
  t0 = now_seconds();
  if (tbl_open_file(path, 1, &t, err, sizeof err)) {
    fprintf(stderr, "packscan demo: %s\n", err);
    goto done;
  }
  double t_open = now_seconds() - t0;
  uint64_t plain = 0;
  for (uint32_t c = 0; c < t->ncols; c++) plain += t->cols[c].raw_bytes;
  char s1[32], s2[32];
  format_bytes(plain, s1);
  format_bytes(fsize, s2);
  printf(
      "generated + encoded in %.2f s; table %s: %s plain -> %s (%.1fx), written in %.2f s, "
      "opened + verified in %.3f s\n\n",
      t_gen, out ? out : "(temporary)", s1, s2, fsize ? (double)plain / (double)fsize : 0.0, t_write, t_open);
  printf("%-24s %10s %8s %10s %10s %12s%s\n", "query", "selected", "%", "first ms", "best ms", "rows/s",
         ref ? "  reference" : "");
  int mismatches = 0;
  double total_best = 0;
  for (size_t k = 0; k < sizeof queries / sizeof *queries; k++) {
    query_plan q;
    if (query_plan_build(ctx, t, queries[k].where, strlen(queries[k].where), &q, stderr)) {
      query_plan_free(&q);
      goto done;
    }
    uint64_t count = 0, c2;
    double first = 0, best = 1e300;
    for (unsigned long long r = 0; r < repeat; r++) {
      double s0 = now_seconds();
      ps_status st = ps_filter_count(ctx, q.expr, &c2);
      double el = now_seconds() - s0;
      if (st != PS_OK) {
        fprintf(stderr, "packscan demo: %s: %s\n", queries[k].name, lib_error(st, ps_context_last_error(ctx)));
        query_plan_free(&q);
        goto done;
      }
      if (r == 0) {
        first = el;
        count = c2;
      } else if (c2 != count) {
        fprintf(stderr, "packscan demo: %s: repeated evaluation gave %llu then %llu rows\n", queries[k].name,
                (unsigned long long)count, (unsigned long long)c2);
        mismatches++;
      }
      if (el < best) best = el;
    }
    query_plan_free(&q);
    total_best += best;
    char refcol[48] = "";
    if (ref) {
      query_plan rq;
      if (query_plan_build(ref, t, queries[k].where, strlen(queries[k].where), &rq, stderr)) {
        query_plan_free(&rq);
        goto done;
      }
      uint64_t rc2 = 0;
      ps_status st = ps_filter_count(ref, rq.expr, &rc2);
      query_plan_free(&rq);
      if (st != PS_OK) {
        fprintf(stderr, "packscan demo: reference: %s\n", lib_error(st, ps_context_last_error(ref)));
        goto done;
      }
      snprintf(refcol, sizeof refcol, "  %s", rc2 == count ? "same" : "MISMATCH");
      if (rc2 != count) mismatches++;
    }
    printf("%-24s %10llu %7.2f%% %10.2f %10.2f %12.3g%s\n", queries[k].name, (unsigned long long)count,
           rows ? 100.0 * (double)count / (double)rows : 0.0, first * 1e3, best * 1e3,
           best > 0 ? (double)rows / best : 0.0, refcol);
    fflush(stdout);
  }
  printf("\nall %zu queries: %.2f ms best total, %.3g rows/s on average (%s)\n", sizeof queries / sizeof *queries,
         total_best * 1e3,
         total_best > 0 ? (double)rows * (double)(sizeof queries / sizeof *queries) / total_best : 0.0,
         ps_context_backend(ctx));
  printf("try: packscan query TABLE \"l_discount BETWEEN 0.05 AND 0.07\" --timing%s\n",
         out ? "" : " (keep the table with --out FILE)");
  if (mismatches) {
    fprintf(stderr, "packscan demo: %d count(s) differ from the reference backend\n", mismatches);
    goto done;
  }
  rc = 0;
done:
  for (int c = 0; c < NCOLS; c++) {
    ps_encoded_destroy(&fors[c]);
    tool_dict_free(&dicts[c]);
  }
  tbl_close(t);
  if (tmpl[0]) unlink(tmpl);
  ps_context_destroy(ref);
  ps_context_destroy(ctx);
  return rc;
}
