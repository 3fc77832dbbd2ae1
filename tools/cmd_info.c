/* packscan info: what a table file holds. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "table.h"
#include "util.h"

/* How well a column's zone maps prune: the fraction of blocks that a range
 * over 1 % of the column's codes (between its smallest and largest) skips,
 * averaged over 100 such ranges across the codes; an all-null block is
 * skipped by every range. */
static double zone_skip_fraction(const ps_zone_map *z) {
  uint64_t lo = UINT64_MAX, hi = 0, counted = 0;
  for (uint64_t b = 0; b < z->blocks; b++) {
    if (z->flags[b] & PS_ZONE_ALL_NULL) continue;
    if (z->min[b] < lo) lo = z->min[b];
    if (z->max[b] > hi) hi = z->max[b];
  }
  if (z->blocks == 0) return 0;
  if (lo > hi) return 1;
  double span = (double)(hi - lo) + 1, skipped = 0;
  for (int k = 0; k < 100; k++) {
    double a = (double)lo + span * k / 100, e = a + span / 100; /* [a, e) */
    for (uint64_t b = 0; b < z->blocks; b++) {
      counted++;
      if ((z->flags[b] & PS_ZONE_ALL_NULL) || (double)z->max[b] < a || (double)z->min[b] >= e) skipped++;
    }
  }
  return skipped / (double)counted;
}

static void print_zones(const tbl_table *t, size_t w) {
  printf("\nzone maps (skips: the share of blocks a range over 1%% of a column's values skips, on average)\n");
  printf("%-*s  %10s %10s %7s\n", (int)w, "column", "block rows", "blocks", "skips");
  for (uint32_t i = 0; i < t->ncols; i++) {
    const tbl_column *c = &t->cols[i];
    const ps_zone_map *z = c->desc.zones;
    if (!z) {
      printf("%-*.*s  %10s %10s %7s\n", (int)w, (int)w, c->name, "none", "", "");
      continue;
    }
    printf("%-*.*s  %10" PRIu32 " %10" PRIu64 " %6.1f%%\n", (int)w, (int)w, c->name, z->block_rows, z->blocks,
           100 * zone_skip_fraction(z));
  }
}

int cmd_info(int argc, char **argv) {
  const char *path = NULL;
  int verify = 1;
  for (int i = 1; i < argc; i++) {
    if (!strcmp(argv[i], "--no-verify")) {
      verify = 0;
    } else if (!strcmp(argv[i], "--help") || !strcmp(argv[i], "-h")) {
      printf(
          "usage: packscan info [--no-verify] TABLE\n  Lists the columns of a table: types, encodings, widths, sizes,\n"
          "  and how well their zone maps prune.\n");
      return 0;
    } else if (argv[i][0] == '-' && argv[i][1]) {
      fprintf(stderr, "packscan info: unknown option '%s'\n", argv[i]);
      return 2;
    } else if (!path) {
      path = argv[i];
    } else {
      fprintf(stderr, "packscan info: unexpected argument '%s'\n", argv[i]);
      return 2;
    }
  }
  if (!path) {
    fprintf(stderr, "usage: packscan info [--no-verify] TABLE\n");
    return 2;
  }
  tbl_table *t;
  char err[TOOL_ERR_SIZE];
  if (tbl_open_file(path, verify, &t, err, sizeof err)) {
    fprintf(stderr, "packscan info: %s\n", err);
    return 1;
  }
  char fs[32];
  format_bytes(t->size, fs);
  printf("%s: packscan table v%u.%u, %llu rows, %u columns, %s%s\n", path, t->version_major, t->version_minor,
         (unsigned long long)t->rows, t->ncols, fs, verify ? ", checksums ok" : "");
  size_t w = 6;
  for (uint32_t i = 0; i < t->ncols; i++)
    if (strlen(t->cols[i].name) > w) w = strlen(t->cols[i].name);
  if (w > 40) w = 40;
  /* "DELTA ref yyyy-mm-dd hh:mm:ss.fffffffff" is the widest encoding text */
  int encw = 22;
  for (uint32_t i = 0; i < t->ncols; i++)
    if (t->cols[i].logical == TBL_LOGICAL_TIMESTAMP && encw < 27 + (t->cols[i].unit ? 1 + (int)t->cols[i].unit : 0))
      encw = 27 + (t->cols[i].unit ? 1 + (int)t->cols[i].unit : 0);
  printf("%-*s  %-12s %-9s %-*s %5s %10s %10s %10s %7s\n", (int)w, "column", "type", "physical", encw, "encoding", "width",
         "nulls", "plain", "stored", "ratio");
  uint64_t tr = 0, ts = 0;
  for (uint32_t i = 0; i < t->ncols; i++) {
    const tbl_column *c = &t->cols[i];
    char ty[32], enc[64], a[32], b[32];
    tbl_column_typename(c, ty);
    const char *phys;
    static const char *names[] = {"?", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32", "float64"};
    phys = (unsigned)c->desc.type <= 10 ? names[c->desc.type] : "?";
    const char *fam = c->encoding == TBL_ENC_DELTA ? "DELTA" : "FOR";
    if (c->encoding == TBL_ENC_DICT)
      snprintf(enc, sizeof enc, "dict %llu%s", (unsigned long long)c->dict.count, c->dict.sorted ? " sorted" : "");
    else if (c->desc.float_map == PS_FLOAT_MAP_ALP) /* docs/float-encoding.md */
      snprintf(enc, sizeof enc, "%s ALP e%u f%u exc %llu", fam, c->desc.float_e, c->desc.float_f,
               (unsigned long long)c->desc.exceptions_count);
    else if (c->desc.float_map == PS_FLOAT_MAP_BITS)
      snprintf(enc, sizeof enc, "%s float bits", fam);
    else if (c->desc.type == PS_TYPE_FLOAT32 || c->desc.type == PS_TYPE_FLOAT64)
      snprintf(enc, sizeof enc, "%s ref %lld scale %u", fam, (long long)c->desc.reference.i, c->desc.scale);
    else if (c->desc.type >= PS_TYPE_UINT8 && c->desc.type <= PS_TYPE_UINT64)
      snprintf(enc, sizeof enc, "%s ref %llu", fam, (unsigned long long)c->desc.reference.u);
    else if (c->logical == TBL_LOGICAL_TIMESTAMP || c->logical == TBL_LOGICAL_DATE) {
      /* the reference as the first value it stands for, as a query would write it */
      char when[48];
      if (c->logical == TBL_LOGICAL_DATE)
        format_date(c->desc.reference.i, when);
      else
        format_timestamp(c->desc.reference.i, (int)c->unit, when);
      snprintf(enc, sizeof enc, "%s ref %s", fam, when);
    } else {
      snprintf(enc, sizeof enc, "%s ref %lld", fam, (long long)c->desc.reference.i);
    }
    uint64_t stored = tbl_column_stored_bytes(c);
    tr += c->raw_bytes;
    ts += stored;
    format_bytes(c->raw_bytes, a);
    format_bytes(stored, b);
    char ratio[32];
    format_ratio(c->raw_bytes, stored, ratio);
    printf("%-*.*s  %-12s %-9s %-*s %5u %10llu %10s %10s %7s\n", (int)w, (int)w, c->name, ty, phys, encw, enc,
           c->desc.width, (unsigned long long)c->null_count, a, b, ratio);
  }
  char a[32], b[32];
  format_bytes(tr, a);
  format_bytes(ts, b);
  char ratio[32];
  format_ratio(tr, ts, ratio);
  printf("%-*s  %-12s %-9s %-*s %5s %10s %10s %10s %7s\n", (int)w, "total", "", "", encw, "", "", "", a, b, ratio);
  print_zones(t, w);
  /* Strings are always dictionary-encoded: the library evaluates string
   * predicates on dictionaries only (once per distinct string). Say what that
   * costs where most strings are distinct. */
  for (uint32_t i = 0; i < t->ncols; i++) {
    const tbl_column *c = &t->cols[i];
    if (c->encoding != TBL_ENC_DICT) continue;
    uint64_t dict = (c->dict.count + 1) * 4 + c->dict.bytes_size, codes = c->desc.data_size;
    uint64_t nonnull = t->rows - c->null_count;
    if (dict + codes + c->desc.validity_size <= c->raw_bytes) continue;
    char d[32], k[32], p[32];
    format_bytes(dict, d);
    format_bytes(codes, k);
    format_bytes(c->raw_bytes, p);
    printf("note: '%s': %llu distinct strings in %llu values: dictionary %s + codes %s, more than plain strings "
           "(%s); kept as a dictionary, the only string encoding the library evaluates%s\n",
           c->name, (unsigned long long)c->dict.count, (unsigned long long)nonnull, d, k, p,
           c->dict.count * 10 >= nonnull * 9 ? " (mostly unique: a timestamp, id or free text? see --types)" : "");
  }
  tbl_close(t);
  return 0;
}
