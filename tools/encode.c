/* CSV -> encoded columns. The whole CSV is held as per-column string arrays
 * first (types are inferred from every value), then each column is converted
 * and encoded with the library's encoders. */
#include "encode.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

typedef struct rawcol {
  tbuf bytes;
  tbuf offs;  /* int64_t[n + 1] */
  tbuf valid; /* Arrow validity bitmap */
  uint64_t nulls;
} rawcol;

void encode_options_init(encode_options *o) {
  memset(o, 0, sizeof *o);
  o->delimiter = 0; /* detected from the header line */
  o->max_reported = 20;
  o->encoding = PS_ENCODING_AUTO;
}

static int64_t raw_off(const rawcol *c, uint64_t i) {
  int64_t v;
  memcpy(&v, c->offs.p + i * 8, 8);
  return v;
}

static int raw_valid(const rawcol *c, uint64_t i) { return (c->valid.p[i / 8] >> (i % 8)) & 1; }

/* The unit that holds `digits` fraction digits of a second: s, ms, us or ns. */
static int time_unit_digits(int digits) { return digits <= 0 ? 0 : digits <= 3 ? 3 : digits <= 6 ? 6 : 9; }

int parse_coltype(const char *s, size_t len, coltype *ct, int *scale) {
  *scale = -1;
  char name[16];
  size_t k = 0;
  while (k < len && s[k] != '(' && k < sizeof name - 1) {
    name[k] = (char)tolower((unsigned char)s[k]);
    k++;
  }
  name[k] = 0;
  if (k < len && s[k] != '(') return -1;
  if (k < len) { /* "(S)" */
    int64_t v;
    if (s[len - 1] != ')' || len - k < 3 || parse_int64(s + k + 1, len - k - 2, &v) || v < 0 || v > 18) return -1;
    *scale = (int)v;
  }
  if (!strcmp(name, "int") || !strcmp(name, "int64") || !strcmp(name, "integer") || !strcmp(name, "bigint"))
    *ct = CT_INT;
  else if (!strcmp(name, "decimal") || !strcmp(name, "numeric"))
    *ct = CT_DECIMAL;
  else if (!strcmp(name, "float") || !strcmp(name, "float64") || !strcmp(name, "double"))
    *ct = CT_FLOAT;
  else if (!strcmp(name, "date"))
    *ct = CT_DATE;
  else if (!strcmp(name, "string") || !strcmp(name, "text") || !strcmp(name, "varchar"))
    *ct = CT_STRING;
  else if (!strcmp(name, "timestamp") || !strcmp(name, "datetime"))
    *ct = CT_TIMESTAMP;
  else if (!strcmp(name, "time"))
    *ct = CT_TIME;
  else if (!strcmp(name, "boolean") || !strcmp(name, "bool"))
    *ct = CT_BOOL;
  else
    return -1;
  if (*scale >= 0 && *ct != CT_DECIMAL && *ct != CT_TIMESTAMP && *ct != CT_TIME) return -1;
  if (*scale > 9 && (*ct == CT_TIMESTAMP || *ct == CT_TIME)) return -1;
  if (*scale >= 0 && (*ct == CT_TIMESTAMP || *ct == CT_TIME)) *scale = time_unit_digits(*scale);
  return 0;
}

typedef struct reporter {
  tbuf *diag;
  uint64_t count;
  unsigned max;
  char first[TOOL_ERR_SIZE];
} reporter;

static void report(reporter *r, const char *fmt, ...) TOOL_PRINTF(2, 3);
static void report(reporter *r, const char *fmt, ...) {
  char msg[TOOL_ERR_SIZE];
  va_list ap;
  va_start(ap, fmt);
  vsnprintf(msg, sizeof msg, fmt, ap);
  va_end(ap);
  if (r->count == 0) snprintf(r->first, sizeof r->first, "%s", msg);
  if (r->diag && r->count < r->max) tbuf_printf(r->diag, "%s\n", msg);
  r->count++;
}

/* Quotes a value for a message, shortened to a readable length. */
static void show(const char *s, size_t len, char out[64]) {
  size_t k = 0;
  for (size_t i = 0; i < len && k < 56; i++) {
    unsigned char c = (unsigned char)s[i];
    out[k++] = c >= 32 && c != 127 ? (char)c : '?';
  }
  if (len > 56 || k >= 56) {
    out[k++] = '.';
    out[k++] = '.';
    out[k++] = '.';
  }
  out[k] = 0;
}

static void progress_draw(uint64_t done, uint64_t total, int final) {
  char a[32], b[32];
  format_bytes(done, a);
  format_bytes(total, b);
  int pct = total ? (int)(done * 100 / total) : 0;
  if (pct > 100) pct = 100;
  char bar[41];
  int fill = pct * 40 / 100;
  for (int i = 0; i < 40; i++) bar[i] = i < fill ? '#' : '.';
  bar[40] = 0;
  fprintf(stderr, "\rreading [%s] %3d%% %s of %s", bar, pct, a, b);
  if (final) fprintf(stderr, "\n");
  fflush(stderr);
}

/* After reading: the column being inferred and encoded, on the same line. */
static void progress_column(uint32_t i, uint32_t ncols, const char *name) {
  int pct = ncols ? (int)((uint64_t)i * 100 / ncols) : 100;
  char bar[41];
  for (int k = 0; k < 40; k++) bar[k] = k < pct * 40 / 100 ? '#' : '.';
  bar[40] = 0;
  fprintf(stderr, "\rencoding [%s] %3d%% column %u of %u: %-20.20s", bar, pct, i + 1, ncols, name);
  if (i == ncols) fprintf(stderr, "\n");
  fflush(stderr);
}

/* The text of a value as a number, date or time: ASCII spaces and tabs
 * around it dropped (" 1" is 1, as PostgreSQL and DuckDB read it) and, for
 * numbers, a '$' after the optional sign ("$12.50", "-$3"): money is read as
 * an exact decimal (*money is set; the encoder says so once per column). A
 * view longer than 63 bytes is left as it is (no number or date is that long). */
static void value_view(const char *s, size_t len, int numeric, char buf[64], const char **out, size_t *outlen,
                       int *money) {
  while (len && (*s == ' ' || *s == '\t')) {
    s++;
    len--;
  }
  while (len && (s[len - 1] == ' ' || s[len - 1] == '\t')) len--;
  *out = s;
  *outlen = len;
  if (money) *money = 0;
  if (!numeric || len >= 64) return;
  size_t sign = len && (s[0] == '-' || s[0] == '+');
  if (len > sign + 1 && s[sign] == '$') {
    memcpy(buf, s, sign);
    memcpy(buf + sign, s + sign + 1, len - sign - 1);
    *out = buf;
    *outlen = len - 1;
    if (money) *money = 1;
  }
}

static int parse_bool(const char *s, size_t len, int64_t *v) {
  if (len == 4 && !strncasecmp(s, "true", 4)) {
    *v = 1;
    return 0;
  }
  if (len == 5 && !strncasecmp(s, "false", 5)) {
    *v = 0;
    return 0;
  }
  return -1;
}

/* strtod over the whole view (NUL-terminated copy in buf), finite values only. */
static int parse_double(const char *s, size_t len, double *v) {
  char buf[64];
  if (len == 0 || len >= sizeof buf) return -1;
  memcpy(buf, s, len);
  buf[len] = 0;
  char *end;
  *v = strtod(buf, &end);
  return end == buf + len && isfinite(*v) && !isspace((unsigned char)buf[0]) ? 0 : -1;
}

/* What inference found beside the type: for a column that fell back to
 * strings although most of its values were numbers (or times), the first row
 * whose value was not one. */
typedef struct inferred {
  int scale;          /* decimal scale or time unit digits */
  int money;          /* a '$' was dropped from some value */
  int can_float;      /* every value parses as a finite double */
  uint64_t example;   /* row of the value that made it a string; UINT64_MAX: no warning */
  const char *wanted; /* what the other values were ("a number", "a date or time") */
} inferred;

static coltype infer(const rawcol *c, uint64_t n, inferred *inf) {
  int can_int = 1, can_dec = 1, can_date = 1, can_ts = 1, can_time = 1, can_bool = 1, can_float = 1;
  int maxscale = 0, maxdigits = 0, money = 0;
  uint64_t nonnull = 0, num_ok = 0, time_ok = 0, bad_num = UINT64_MAX, bad_time = UINT64_MAX;
  for (uint64_t i = 0; i < n; i++) {
    if (!raw_valid(c, i)) continue;
    int64_t a = raw_off(c, i), b = raw_off(c, i + 1);
    if (a == b) continue; /* a quoted "" is a null in a non-string column */
    const char *s, *raw = (const char *)c->bytes.p + a;
    size_t len, rawlen = (size_t)(b - a);
    char buf[64];
    int m;
    value_view(raw, rawlen, 1, buf, &s, &len, &m);
    nonnull++;
    int64_t v;
    int32_t d;
    int sc;
    double f;
    if (can_int && parse_int64(s, len, &v)) can_int = 0;
    int dec_ok = !parse_decimal_exp(s, len, &v, &sc);
    if (can_dec) {
      if (!dec_ok)
        can_dec = 0;
      else if (sc > maxscale)
        maxscale = sc;
    }
    /* strtod only where the exact parse failed (it is the slow one) */
    int isnum = dec_ok || !parse_double(s, len, &f);
    if (!isnum) can_float = 0;
    if (isnum) {
      num_ok++;
      money |= m;
    } else if (bad_num == UINT64_MAX) {
      bad_num = i;
    }
    value_view(raw, rawlen, 0, buf, &s, &len, NULL);
    if (can_bool && parse_bool(s, len, &v)) can_bool = 0;
    if (can_date && parse_date(s, len, &d)) can_date = 0;
    int64_t sec;
    int32_t ns;
    int dg, ist = 0;
    if (can_ts) {
      if (parse_timestamp(s, len, &sec, &ns, &dg, NULL))
        can_ts = 0;
      else if (dg > maxdigits)
        maxdigits = dg;
    }
    if (can_time) {
      if (parse_time(s, len, &sec, &ns, &dg))
        can_time = 0;
      else if (dg > maxdigits)
        maxdigits = dg;
    }
    ist = !parse_timestamp(s, len, &sec, &ns, &dg, NULL) || !parse_time(s, len, &sec, &ns, &dg);
    if (ist)
      time_ok++;
    else if (bad_time == UINT64_MAX)
      bad_time = i;
  }
  inf->scale = maxscale;
  inf->money = money;
  inf->can_float = can_float && nonnull > 0;
  inf->example = UINT64_MAX;
  inf->wanted = NULL;
  if (can_int) return CT_INT;
  if (can_dec) return CT_DECIMAL;
  if (can_float) return CT_FLOAT;
  inf->money = 0;
  if (can_bool) return CT_BOOL;
  if (can_date) return CT_DATE;
  inf->scale = time_unit_digits(maxdigits);
  if (can_ts) return CT_TIMESTAMP; /* dates among timestamps are midnight */
  if (can_time) return CT_TIME;
  inf->scale = 0;
  if (num_ok * 2 >= nonnull && num_ok >= time_ok) {
    inf->example = bad_num;
    inf->wanted = "a number";
  } else if (time_ok * 2 >= nonnull) {
    inf->example = bad_time;
    inf->wanted = "a date or time";
  }
  return CT_STRING;
}

/* Builds the numeric value array and a validity bitmap (NULL when no nulls). */
static int convert_numeric(const rawcol *c, uint64_t n, coltype ct, int scale, const char *name, uint32_t colno,
                           const uint64_t *lines, reporter *rep, void **values, uint8_t **validity, uint64_t *nulls,
                           int quiet_fail) {
  size_t esz = ct == CT_DATE ? 4 : 8;
  uint8_t *vals = calloc(n ? n : 1, esz);
  uint8_t *valid = calloc((n + 7) / 8 ? (n + 7) / 8 : 1, 1);
  if (!vals || !valid) {
    free(vals);
    free(valid);
    return -2;
  }
  uint64_t nn = 0, bad = 0;
  for (uint64_t i = 0; i < n; i++) {
    int64_t a = raw_off(c, i), b = raw_off(c, i + 1);
    if (!raw_valid(c, i) || a == b) {
      nn++;
      continue;
    }
    const char *s;
    size_t len;
    char vbuf[64];
    value_view((const char *)c->bytes.p + a, (size_t)(b - a), ct == CT_INT || ct == CT_DECIMAL || ct == CT_FLOAT, vbuf,
               &s, &len, NULL);
    int ok = 1;
    char shown[64];
    if (ct == CT_BOOL) {
      int64_t v;
      if (parse_bool(s, len, &v)) {
        ok = 0;
        if (!quiet_fail) {
          show(s, len, shown);
          report(rep, "line %llu, column %u '%s': '%s' is not a boolean (true or false)", (unsigned long long)lines[i],
                 colno, name, shown);
        }
      } else {
        memcpy(vals + i * 8, &v, 8);
      }
    } else if (ct == CT_INT) {
      int64_t v;
      if (parse_int64(s, len, &v)) {
        ok = 0;
        if (!quiet_fail) {
          show(s, len, shown);
          report(rep, "line %llu, column %u '%s': '%s' is not a 64-bit integer", (unsigned long long)lines[i], colno,
                 name, shown);
        }
      } else {
        memcpy(vals + i * 8, &v, 8);
      }
    } else if (ct == CT_DECIMAL) {
      int64_t m, v;
      int sc;
      if (parse_decimal_exp(s, len, &m, &sc)) {
        ok = 0;
        if (!quiet_fail) {
          show(s, len, shown);
          report(rep, "line %llu, column %u '%s': '%s' is not a decimal number", (unsigned long long)lines[i], colno,
                 name, shown);
        }
      } else if (sc > scale || rescale_decimal(m, sc, scale, &v)) {
        ok = 0;
        if (!quiet_fail) {
          show(s, len, shown);
          report(rep, "line %llu, column %u '%s': '%s' does not fit decimal(%d) in 64 bits",
                 (unsigned long long)lines[i], colno, name, shown, scale);
        }
      } else {
        memcpy(vals + i * 8, &v, 8);
      }
    } else if (ct == CT_FLOAT) {
      double v = 0;
      if (parse_double(s, len, &v)) {
        ok = 0;
        if (!quiet_fail) {
          show(s, len, shown);
          report(rep, "line %llu, column %u '%s': '%s' is not a finite number", (unsigned long long)lines[i], colno,
                 name, shown);
        }
      } else {
        memcpy(vals + i * 8, &v, 8);
      }
    } else if (ct == CT_TIMESTAMP || ct == CT_TIME) {
      int64_t sec, v = 0;
      int32_t ns;
      int dg;
      const char *tn = ct == CT_TIME ? "time" : "timestamp";
      int r = ct == CT_TIME ? parse_time(s, len, &sec, &ns, &dg) : parse_timestamp(s, len, &sec, &ns, &dg, NULL);
      r = r ? -2 : time_to_units(sec, ns, scale, &v);
      if (r != 0) {
        ok = 0;
        if (!quiet_fail) {
          show(s, len, shown);
          if (r == 1)
            report(rep, "line %llu, column %u '%s': '%s' has more fraction digits than %s(%d)",
                   (unsigned long long)lines[i], colno, name, shown, tn, scale);
          else if (r == -1)
            report(rep, "line %llu, column %u '%s': '%s' is outside the 64-bit range of %s(%d)",
                   (unsigned long long)lines[i], colno, name, shown, tn, scale);
          else
            report(rep, "line %llu, column %u '%s': '%s' is not a %s (%s)", (unsigned long long)lines[i], colno, name,
                   shown, tn, ct == CT_TIME ? "hh:mm[:ss[.fff]]" : "yyyy-mm-dd[ hh:mm[:ss[.fff]]][Z|+hh:mm]");
        }
      } else {
        memcpy(vals + i * 8, &v, 8);
      }
    } else { /* CT_DATE */
      int32_t d;
      if (parse_date(s, len, &d)) {
        ok = 0;
        if (!quiet_fail) {
          show(s, len, shown);
          report(rep, "line %llu, column %u '%s': '%s' is not a date (yyyy-mm-dd)", (unsigned long long)lines[i], colno,
                 name, shown);
        }
      } else {
        memcpy(vals + i * 4, &d, 4);
      }
    }
    if (ok)
      valid[i / 8] |= (uint8_t)(1u << (i % 8));
    else
      bad++;
  }

  if (bad) {
    free(vals);
    free(valid);
    return -1;
  }
  if (nn == 0) {
    free(valid);
    valid = NULL;
  }
  *values = vals;
  *validity = valid;
  *nulls = nn;
  return 0;
}

static const char *coltype_name(coltype ct) {
  switch (ct) {
    case CT_INT:
      return "int64";
    case CT_DECIMAL:
      return "decimal";
    case CT_FLOAT:
      return "float64";
    case CT_DATE:
      return "date";
    case CT_STRING:
      return "string";
    case CT_TIMESTAMP:
      return "timestamp";
    case CT_TIME:
      return "time";
    case CT_BOOL:
      return "boolean";
    default:
      return "auto";
  }
}

/* Encodes column k of the raw table into out. */
/* Whether every non-empty value of a timestamp column names its zone ('Z',
 * '+02:00'): such values are instants, kept in UTC with the zone "UTC" (as
 * Arrow's CSV readers type them); values without a zone are taken as they
 * are, and a column that mixes both keeps no zone. */
static int all_zoned(const rawcol *c, uint64_t n) {
  int any = 0;
  for (uint64_t k = 0; k < n; k++) {
    if (!raw_valid(c, k)) continue;
    int64_t a = raw_off(c, k), b = raw_off(c, k + 1);
    if (a == b) continue;
    const char *v;
    size_t vl;
    char vbuf[64];
    value_view((const char *)c->bytes.p + a, (size_t)(b - a), 0, vbuf, &v, &vl, NULL);
    int zoned = vl > 11 && (v[vl - 1] == 'Z' || v[vl - 1] == 'z');
    for (size_t i = 11; !zoned && i < vl; i++) zoned = v[i] == '+' || v[i] == '-';
    if (!zoned) return 0;
    any = 1;
  }
  return any;
}

static int encode_column(encoded_table *out, uint32_t k, rawcol *c, coltype ct, int scale, int encoding,
                         const uint64_t *lines, reporter *rep, char *err, size_t errsz) {
  uint64_t n = out->rows;
  const char *name = out->names[k];
  tbl_write_column *w = &out->cols[k];
  w->name = name;
  char lerr[TOOL_ERR_SIZE];
  if (ct == CT_STRING) {
    /* Nulls stay nulls; everything else (a quoted "" too) is a string. */
    ps_strings s;
    memset(&s, 0, sizeof s);
    s.n = n;
    s.offsets64 = (const int64_t *)(const void *)c->offs.p;
    s.bytes = c->bytes.p;
    s.validity = c->nulls ? c->valid.p : NULL;
    if (tool_encode_dict(&s, &out->dicts[k], lerr, sizeof lerr))
      return set_err(err, errsz, "column %u '%s': %s", k + 1, name, lerr);
    out->types[k] = CT_STRING;
    w->encoding = TBL_ENC_DICT;
    w->logical = TBL_LOGICAL_NONE;
    w->desc = out->dicts[k].codes.desc;
    w->dict = out->dicts[k].uniq.dict;
    w->null_count = c->nulls;
    w->raw_bytes = (n + 1) * 4 + c->bytes.len + (c->nulls ? (n + 7) / 8 : 0);
    return 0;
  }
  void *values = NULL;
  uint8_t *validity = NULL;
  uint64_t nulls = 0;
  int r = convert_numeric(c, n, ct, scale, name, k + 1, lines, rep, &values, &validity, &nulls, 0);
  if (r == -2) return set_err(err, errsz, "out of memory");
  if (r == -1) return 1; /* reported */
  ps_plain p;
  p.type = ct == CT_DATE ? PS_TYPE_INT32 : ct == CT_FLOAT ? PS_TYPE_FLOAT64 : PS_TYPE_INT64;
  p.values = values;
  p.n = n;
  p.validity = validity;
  ps_status st = ps_encode(&p, encoding, 0, ct == CT_FLOAT ? -1 : 0, 0, NULL, lerr, sizeof lerr, &out->fors[k]);
  free(values);
  free(validity);
  if (st != PS_OK)
    return set_err(err, errsz, "column %u '%s' (%s): %s", k + 1, name, coltype_name(ct), lib_error(st, lerr));
  out->types[k] = ct;
  w->encoding = out->fors[k].desc.encoding == PS_ENCODING_DELTA ? TBL_ENC_DELTA : TBL_ENC_FOR;
  w->desc = out->fors[k].desc;
  w->logical = TBL_LOGICAL_NONE;
  if (ct == CT_DATE) w->logical = TBL_LOGICAL_DATE;
  if (ct == CT_BOOL) w->logical = TBL_LOGICAL_BOOLEAN;
  if (ct == CT_TIMESTAMP || ct == CT_TIME) {
    w->logical = ct == CT_TIME ? TBL_LOGICAL_TIME : TBL_LOGICAL_TIMESTAMP;
    w->unit = (uint32_t)scale;
  }
  if (ct == CT_DECIMAL) {
    /* The scaled integers are exactly the decimal values at this scale. */
    w->logical = TBL_LOGICAL_DECIMAL;
    w->desc.type = PS_TYPE_FLOAT64;
    w->desc.scale = (uint32_t)scale;
  }
  w->null_count = nulls;
  w->raw_bytes = (ct == CT_BOOL ? (n + 7) / 8 : n * (ct == CT_DATE ? 4 : 8)) + (nulls ? (n + 7) / 8 : 0);
  return 0;
}

void encoded_table_free(encoded_table *t) {
  if (!t) return;
  for (uint32_t i = 0; i < t->ncols; i++) {
    if (t->fors) ps_encoded_destroy(&t->fors[i]);
    if (t->dicts) tool_dict_free(&t->dicts[i]);
    if (t->names) free(t->names[i]);
  }
  free(t->fors);
  free(t->dicts);
  free(t->names);
  free(t->cols);
  free(t->types);
  tbuf_free(&t->warnings);
  memset(t, 0, sizeof *t);
}

/* Column names -> index, so that the duplicate check and --types take time
 * linear in the number of columns (a header may have a million). Open
 * addressing over a power-of-two table at most half full. */
typedef struct name_index {
  uint32_t *slots; /* column index + 1; 0 = empty */
  size_t mask;
} name_index;

static uint64_t name_hash(const char *s, size_t len) {
  uint64_t h = 0xcbf29ce484222325ull; /* FNV-1a */
  for (size_t i = 0; i < len; i++) h = (h ^ (unsigned char)s[i]) * 0x100000001b3ull;
  return h ^ (h >> 29);
}

static int name_index_init(name_index *x, uint32_t ncols) {
  size_t cap = 16;
  while (cap < (size_t)ncols * 2) cap *= 2;
  x->slots = calloc(cap, sizeof *x->slots);
  x->mask = cap - 1;
  return x->slots ? 0 : -1;
}

/* The index of the column with this exact name, or -1. */
static int64_t name_index_find(const name_index *x, char **names, const char *s, size_t len) {
  for (size_t k = (size_t)name_hash(s, len) & x->mask;; k = (k + 1) & x->mask) {
    uint32_t v = x->slots[k];
    if (!v) return -1;
    const char *nm = names[v - 1];
    if (strlen(nm) == len && memcmp(nm, s, len) == 0) return (int64_t)v - 1;
  }
}

/* Adds column i (names[i]); returns the index of an earlier column of the
 * same name instead, or -1 when the name is new. */
static int64_t name_index_add(name_index *x, char **names, uint32_t i) {
  size_t len = strlen(names[i]);
  size_t k = (size_t)name_hash(names[i], len) & x->mask;
  for (; x->slots[k]; k = (k + 1) & x->mask)
    if (strcmp(names[x->slots[k] - 1], names[i]) == 0) return (int64_t)x->slots[k] - 1;
  x->slots[k] = i + 1;
  return -1;
}

/* Applies --types ("name:type,...") to the per-column types: every name must
 * be a column, every type known; a later entry for a name wins. The type is
 * after the last ':' (names may contain ':'); a decimal(S) type has no comma
 * inside, so ',' always separates entries. */
static int spec_apply(const char *spec, const name_index *x, char **names, uint32_t ncols, coltype *cts, int *scales,
                      uint8_t *given, char *err, size_t errsz) {
  if (!spec) return 0;
  const char *p = spec;
  while (*p) {
    const char *end = strchr(p, ',');
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char *last = NULL;
    for (const char *q = p; q < p + len; q++)
      if (*q == ':') last = q;
    if (!last) return set_err(err, errsz, "--types: '%.*s' is not name:type", (int)len, p);
    coltype ct;
    int sc;
    if (parse_coltype(last + 1, (size_t)(p + len - last - 1), &ct, &sc))
      return set_err(
          err, errsz,
          "--types: unknown type '%.*s' (int, decimal, decimal(S), float, date, timestamp, time, boolean, string)",
          (int)(p + len - last - 1), last + 1);
    size_t nl = (size_t)(last - p);
    int64_t i = name_index_find(x, names, p, nl);
    if (i < 0) { /* as query names resolve: else the only column of that name in any case */
      int matches = 0;
      for (uint32_t k = 0; k < ncols; k++)
        if (strlen(names[k]) == nl && strncasecmp(names[k], p, nl) == 0 && !matches++) i = k;
      if (matches > 1)
        return set_err(err, errsz, "--types: '%.*s' matches %d columns that differ only in case; write it exactly",
                       (int)nl, p, matches);
    }
    if (i < 0) return set_err(err, errsz, "--types: no column named '%.*s'", (int)nl, p);
    cts[i] = ct;
    scales[i] = sc;
    given[i] = 1;
    p += len;
    if (*p == ',') p++;
  }
  return 0;
}

int encode_csv(csv_read_fn fn, void *opaque, const encode_options *o, encoded_table *out, tbuf *diag, char *err,
               size_t errsz) {
  csv_reader r;
  rawcol *cols = NULL;
  tbuf lines = {0};
  uint32_t ncols = 0;
  name_index names = {NULL, 0};
  coltype *spec_types = NULL;
  int *spec_scales = NULL;
  uint8_t *spec_given = NULL;
  int rc = -1;
  reporter rep = {diag, 0, o->max_reported ? o->max_reported : 20, {0}};
  memset(out, 0, sizeof *out);
  if (csv_init(&r, fn, opaque, o->delimiter)) return set_err(err, errsz, "out of memory");
  int got = csv_next(&r, err, errsz);
  if (got < 0) goto done;
  if (got == 0) {
    set_err(err, errsz, "empty input: expected a header row");
    goto done;
  }
  if (r.nfields > ENCODE_MAX_COLUMNS) {
    set_err(err, errsz, "header: %zu columns; at most %u are supported", r.nfields, (unsigned)ENCODE_MAX_COLUMNS);
    goto done;
  }
  ncols = (uint32_t)r.nfields;
  out->ncols = ncols;
  out->names = calloc(ncols, sizeof *out->names);
  out->cols = calloc(ncols, sizeof *out->cols);
  out->types = calloc(ncols, sizeof *out->types);
  out->fors = calloc(ncols, sizeof *out->fors);
  out->dicts = calloc(ncols, sizeof *out->dicts);
  cols = calloc(ncols, sizeof *cols);
  spec_types = calloc(ncols, sizeof *spec_types);
  spec_scales = calloc(ncols, sizeof *spec_scales);
  spec_given = calloc(ncols, 1);
  if (!out->names || !out->cols || !out->types || !out->fors || !out->dicts || !cols || !spec_types || !spec_scales ||
      !spec_given || name_index_init(&names, ncols)) {
    set_err(err, errsz, "out of memory");
    goto done;
  }
  for (uint32_t i = 0; i < ncols; i++) {
    size_t len = r.fields[i].len;
    const char *s = csv_field_ptr(&r, i);
    if (len > TBL_MAX_NAME || memchr(s, 0, len)) {
      set_err(err, errsz, "header field %u: a column name is 1..%d bytes without NUL", i + 1, TBL_MAX_NAME);
      goto done;
    }
    tbuf nm = {0};
    if (len == 0 ? tbuf_printf(&nm, "column_%u", i + 1) : tbuf_append(&nm, s, len)) {
      set_err(err, errsz, "out of memory");
      goto done;
    }
    if (tbuf_putc(&nm, 0)) {
      tbuf_free(&nm);
      set_err(err, errsz, "out of memory");
      goto done;
    }
    out->names[i] = (char *)nm.p;
    int64_t j = name_index_add(&names, out->names, i);
    if (j >= 0) {
      set_err(err, errsz, "header: duplicate column name '%s' (columns %u and %u)", out->names[i], (unsigned)j + 1,
              i + 1);
      goto done;
    }
  }
  if (spec_apply(o->types, &names, out->names, ncols, spec_types, spec_scales, spec_given, err, errsz)) goto done;
  for (uint32_t i = 0; i < ncols; i++) {
    int64_t zero = 0;
    if (tbuf_append(&cols[i].offs, &zero, 8)) {
      set_err(err, errsz, "out of memory");
      goto done;
    }
  }
  size_t null_len = o->null_value ? strlen(o->null_value) : 0;
  uint64_t n = 0, next_progress = 1u << 20;
  int drew = 0;
  for (;;) {
    got = csv_next(&r, err, errsz);
    if (got < 0) goto done;
    if (got == 0) break;
    if (o->progress && o->input_size && r.consumed >= next_progress) {
      progress_draw(r.consumed, o->input_size, 0);
      drew = 1;
      next_progress = r.consumed + (1u << 20);
    }
    if (csv_record_blank(&r) && ncols > 1) continue;
    if (r.nfields != ncols) {
      report(&rep, "line %llu: expected %u fields, found %zu", (unsigned long long)r.record_line, ncols, r.nfields);
      continue;
    }
    if (tbuf_append(&lines, &r.record_line, 8)) {
      set_err(err, errsz, "out of memory");
      goto done;
    }
    for (uint32_t i = 0; i < ncols; i++) {
      rawcol *c = &cols[i];
      const csv_field *f = &r.fields[i];
      const char *s = csv_field_ptr(&r, i);
      int isnull = !f->quoted &&
                   (f->len == 0 || (o->null_value && f->len == null_len && memcmp(s, o->null_value, null_len) == 0));
      if (n % 8 == 0 && tbuf_putc(&c->valid, 0)) {
        set_err(err, errsz, "out of memory");
        goto done;
      }
      if (isnull) {
        c->nulls++;
      } else {
        c->valid.p[n / 8] |= (uint8_t)(1u << (n % 8));
        if (tbuf_append(&c->bytes, s, f->len)) {
          set_err(err, errsz, "out of memory");
          goto done;
        }
      }
      int64_t end = (int64_t)c->bytes.len;
      if (tbuf_append(&c->offs, &end, 8)) {
        set_err(err, errsz, "out of memory");
        goto done;
      }
    }
    n++;
  }
  if (drew) progress_draw(r.consumed, o->input_size > r.consumed ? o->input_size : r.consumed, 1);
  out->rows = n;
  out->input_bytes = r.consumed;
  out->delimiter = r.delim;
  for (uint32_t i = 0; i < ncols; i++) {
    if (n == 0 && tbuf_putc(&cols[i].valid, 0)) {
      set_err(err, errsz, "out of memory");
      goto done;
    }
  }
  if (rep.count) { /* field-count errors: do not go on to per-value errors */
    set_err(err, errsz, "%llu bad row%s (first: %s); nothing was written", (unsigned long long)rep.count,
            rep.count == 1 ? "" : "s", rep.first);
    goto done;
  }
  const uint64_t *ln = (const uint64_t *)(const void *)lines.p;
  for (uint32_t i = 0; i < ncols; i++) {
    coltype ct = spec_given[i] ? spec_types[i] : CT_AUTO;
    int scale = spec_given[i] ? spec_scales[i] : -1, found = spec_given[i];
    if (o->progress) progress_column(i, ncols, out->names[i]);
    inferred inf = {0, 0, 0, UINT64_MAX, NULL};
    const char *fallback = NULL; /* why an inferred number column became strings */
    if (!found) {
      ct = infer(&cols[i], n, &inf);
      scale = inf.scale;
      if (ct == CT_DECIMAL) {
        /* An inferred decimal that does not fit in 64 bits at its scale is a
         * float (below), or text when it is not one either. */
        void *v = NULL;
        uint8_t *va = NULL;
        uint64_t nn;
        int cr = convert_numeric(&cols[i], n, ct, scale, out->names[i], i + 1, ln, &rep, &v, &va, &nn, 1);
        free(v);
        free(va);
        if (cr == -2) {
          set_err(err, errsz, "out of memory");
          goto done;
        }
        if (cr == -1) ct = inf.can_float ? CT_FLOAT : CT_STRING;
        if (cr == -1) fallback = "its values do not fit one 64-bit decimal";
      }
    } else if ((ct == CT_TIMESTAMP || ct == CT_TIME) && scale < 0) {
      /* the unit that holds every value's fraction digits */
      int dg, maxd = 0;
      int64_t sec;
      int32_t ns;
      for (uint64_t k = 0; k < n; k++) {
        if (!raw_valid(&cols[i], k)) continue;
        int64_t a = raw_off(&cols[i], k), b = raw_off(&cols[i], k + 1);
        const char *v;
        size_t vl;
        char vbuf[64];
        value_view((const char *)cols[i].bytes.p + a, (size_t)(b - a), 0, vbuf, &v, &vl, NULL);
        int pr = ct == CT_TIME ? parse_time(v, vl, &sec, &ns, &dg) : parse_timestamp(v, vl, &sec, &ns, &dg, NULL);
        if (a != b && pr == 0 && dg > maxd) maxd = dg;
      }
      scale = time_unit_digits(maxd);
    } else if (ct == CT_DECIMAL && scale < 0) {
      /* decimal without a scale: the largest scale among the values (the
       * conversion reports the values that are not decimals). */
      int sc;
      scale = 0;
      for (uint64_t k = 0; k < n; k++) {
        if (!raw_valid(&cols[i], k)) continue;
        int64_t a = raw_off(&cols[i], k), b = raw_off(&cols[i], k + 1), m;
        const char *v;
        size_t vl;
        char vbuf[64];
        value_view((const char *)cols[i].bytes.p + a, (size_t)(b - a), 1, vbuf, &v, &vl, NULL);
        if (a != b && !parse_decimal_exp(v, vl, &m, &sc) && sc > scale) scale = sc;
      }
    }
    int er = encode_column(out, i, &cols[i], ct, scale, o->encoding, ln, &rep, err, errsz);
    if (er == 0 && ct == CT_TIMESTAMP && all_zoned(&cols[i], n)) out->cols[i].time_zone = "UTC";
    if (er < 0 && !found && ct == CT_FLOAT) {
      /* The library could not hold these doubles at one exact scale either
       * (9223372036854775807 beside 0.5): keep the text, and say so. */
      fallback = "its values fit neither one 64-bit decimal nor one FOR float column";
      ct = CT_STRING;
      er = encode_column(out, i, &cols[i], ct, scale, o->encoding, ln, &rep, err, errsz);
    }
    if (er < 0) goto done;
    if (!found) {
      char shown[64];
      if (ct == CT_STRING && fallback) {
        tbuf_printf(&out->warnings,
                    "warning: column %u '%s' is stored as strings: %s; --types '%s:string' keeps them as text "
                    "without this warning\n",
                    i + 1, out->names[i], fallback, out->names[i]);
      } else if (ct == CT_STRING && inf.example != UINT64_MAX) {
        int64_t a = raw_off(&cols[i], inf.example), b = raw_off(&cols[i], inf.example + 1);
        show((const char *)cols[i].bytes.p + a, (size_t)(b - a), shown);
        tbuf_printf(&out->warnings,
                    "warning: column %u '%s' is stored as strings: line %llu has '%s', not %s like most values; "
                    "--types '%s:%s' lists every such value, '%s:string' keeps the text without this warning\n",
                    i + 1, out->names[i], (unsigned long long)ln[inf.example], shown, inf.wanted, out->names[i],
                    inf.wanted[2] == 'n' ? "decimal" : "timestamp", out->names[i]);
      } else if (ct == CT_FLOAT && fallback) {
        tbuf_printf(&out->warnings,
                    "warning: column %u '%s' is stored as float64 (%s): digits past a double's 17 may be lost; "
                    "--types '%s:string' keeps the text\n",
                    i + 1, out->names[i], fallback, out->names[i]);
      }
      if (inf.money && ct != CT_STRING)
        tbuf_printf(&out->warnings,
                    "note: column %u '%s': '$' signs dropped, the amounts stored as %s; --types '%s:string' "
                    "keeps the text\n",
                    i + 1, out->names[i], ct == CT_FLOAT ? "float64" : "exact decimals", out->names[i]);
    }
    /* The raw strings are no longer needed. */
    tbuf_free(&cols[i].bytes);
    tbuf_free(&cols[i].offs);
    tbuf_free(&cols[i].valid);
  }
  if (o->progress) progress_column(ncols, ncols, "");
  if (rep.count) {
    set_err(err, errsz, "%llu bad value%s (first: %s); nothing was written", (unsigned long long)rep.count,
            rep.count == 1 ? "" : "s", rep.first);
    goto done;
  }
  rc = 0;
done:
  if (cols)
    for (uint32_t i = 0; i < ncols; i++) {
      tbuf_free(&cols[i].bytes);
      tbuf_free(&cols[i].offs);
      tbuf_free(&cols[i].valid);
    }
  free(cols);
  free(names.slots);
  free(spec_types);
  free(spec_scales);
  free(spec_given);
  tbuf_free(&lines);
  csv_free(&r);
  if (rc != 0) encoded_table_free(out);
  return rc;
}

void encode_print_summary(FILE *f, const encoded_table *t) {
  size_t w = 6;
  for (uint32_t i = 0; i < t->ncols; i++)
    if (strlen(t->names[i]) > w) w = strlen(t->names[i]);
  if (w > 40) w = 40;
  fprintf(f, "%-*s  %-12s %-10s %5s %10s %10s %10s %7s\n", (int)w, "column", "type", "encoding", "width", "nulls",
          "plain", "encoded", "ratio");
  uint64_t tot_raw = 0, tot_enc = 0;
  for (uint32_t i = 0; i < t->ncols; i++) {
    const tbl_write_column *c = &t->cols[i];
    char ty[32], a[32], b[32], enc[32];
    if (c->encoding == TBL_ENC_DICT) {
      snprintf(ty, sizeof ty, "string");
      snprintf(enc, sizeof enc, "dict/%llu", (unsigned long long)c->dict.count);
    } else {
      if (c->logical == TBL_LOGICAL_DATE)
        snprintf(ty, sizeof ty, "date");
      else if (c->logical == TBL_LOGICAL_BOOLEAN)
        snprintf(ty, sizeof ty, "boolean");
      else if (c->logical == TBL_LOGICAL_TIMESTAMP || c->logical == TBL_LOGICAL_TIME)
        snprintf(ty, sizeof ty, c->unit ? "%s(%u)" : "%s", c->logical == TBL_LOGICAL_TIME ? "time" : "timestamp",
                 c->unit);
      else if (c->logical == TBL_LOGICAL_DECIMAL)
        snprintf(ty, sizeof ty, "decimal(%u)", c->desc.scale);
      else if (c->desc.type == PS_TYPE_FLOAT64 && c->desc.float_map != PS_FLOAT_MAP_DECIMAL)
        snprintf(ty, sizeof ty, "float64/%s", c->desc.float_map == PS_FLOAT_MAP_ALP ? "ALP" : "bits");
      else if (c->desc.type == PS_TYPE_FLOAT64)
        snprintf(ty, sizeof ty, "float64/s%u", c->desc.scale);
      else
        snprintf(ty, sizeof ty, "int64");
      snprintf(enc, sizeof enc, c->encoding == TBL_ENC_DELTA ? "DELTA" : "FOR");
    }
    uint64_t stored = c->desc.data_size + c->desc.validity_size + c->desc.exceptions_count * sizeof(ps_float_exception);
    if (c->encoding == TBL_ENC_DICT) stored += (c->dict.count + 1) * 4 + c->dict.bytes_size;
    tot_raw += c->raw_bytes;
    tot_enc += stored;
    format_bytes(c->raw_bytes, a);
    format_bytes(stored, b);
    char ratio[32];
    format_ratio(c->raw_bytes, stored, ratio);
    fprintf(f, "%-*.*s  %-12s %-10s %5u %10llu %10s %10s %7s\n", (int)w, (int)w, c->name, ty, enc, c->desc.width,
            (unsigned long long)c->null_count, a, b, ratio);
  }
  char a[32], b[32];
  format_bytes(tot_raw, a);
  format_bytes(tot_enc, b);
  char ratio[32];
  format_ratio(tot_raw, tot_enc, ratio);
  fprintf(f, "%-*s  %-12s %-10s %5s %10s %10s %10s %7s\n", (int)w, "total", "", "", "", "", a, b, ratio);
}

/* ---- --sort-by: rows reordered after encoding, in code space ---------------- */

static uint64_t sort_get(const uint8_t *p, uint64_t i, uint32_t w) {
  uint64_t v = 0;
  for (uint32_t b = 0; b < w;) {
    uint64_t k = i * w + b;
    uint32_t take = 8 - (uint32_t)(k & 7);
    if (take > w - b) take = w - b;
    v |= (uint64_t)((p[k >> 3] >> (k & 7)) & ((1u << take) - 1)) << b;
    b += take;
  }
  return v;
}

static void sort_put(uint8_t *p, uint64_t i, uint32_t w, uint64_t v) {
  for (uint32_t b = 0; b < w;) {
    uint64_t k = i * w + b;
    uint32_t take = 8 - (uint32_t)(k & 7);
    if (take > w - b) take = w - b;
    p[k >> 3] |= (uint8_t)(((v >> b) & ((1u << take) - 1)) << (k & 7));
    b += take;
  }
}

static int bit_at(const uint8_t *v, uint64_t i) { return !v || ((v[i >> 3] >> (i & 7)) & 1); }

/* The sort keys: per key column, (null, code) per row; qsort's comparator
 * reads them through this (the tool is single-threaded). */
static struct {
  uint32_t nkeys;
  uint64_t *keys[16];
  const uint8_t *validity[16];
} sort_ctx;

static int sort_cmp(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  for (uint32_t k = 0; k < sort_ctx.nkeys; k++) {
    int vx = bit_at(sort_ctx.validity[k], x), vy = bit_at(sort_ctx.validity[k], y);
    if (vx != vy) return vx ? -1 : 1;
    uint64_t kx = sort_ctx.keys[k][x], ky = sort_ctx.keys[k][y];
    if (vx && kx != ky) return kx < ky ? -1 : 1;
  }
  return x < y ? -1 : x > y; /* stable: equal keys keep their input order */
}

int encode_sort_rows(encoded_table *t, const char *spec, char *err, size_t errsz) {
  uint32_t key_col[16], nkeys = 0;
  for (const char *s = spec; *s;) {
    const char *e = strchr(s, ',');
    size_t len = e ? (size_t)(e - s) : strlen(s);
    uint32_t found = UINT32_MAX;
    for (uint32_t c = 0; c < t->ncols; c++)
      if (strlen(t->names[c]) == len && !memcmp(t->names[c], s, len)) found = c;
    if (found == UINT32_MAX) return set_err(err, errsz, "--sort-by: no column '%.*s'", (int)len, s);
    if (nkeys == 16) return set_err(err, errsz, "--sort-by: at most 16 columns");
    key_col[nkeys++] = found;
    s = e ? e + 1 : s + len;
  }
  if (nkeys == 0) return set_err(err, errsz, "--sort-by: no column given");
  const uint64_t n = t->rows;
  uint64_t *perm = malloc((n ? n : 1) * sizeof *perm);
  int rc = -1;
  memset(&sort_ctx, 0, sizeof sort_ctx);
  if (!perm) goto oom;
  for (uint32_t k = 0; k < nkeys; k++) {
    /* A value's order is its code's (FOR: M + code; a sorted dictionary:
     * the strings' order); nulls sort after every value. */
    const ps_for_desc *d = &t->cols[key_col[k]].desc;
    uint64_t *key = malloc((n ? n : 1) * sizeof *key);
    if (!key) goto oom;
    sort_ctx.validity[sort_ctx.nkeys] = d->validity;
    sort_ctx.keys[sort_ctx.nkeys++] = key;
    for (uint64_t i = 0; i < n; i++) key[i] = d->width ? sort_get(d->data, i, d->width) : 0;
  }
  for (uint64_t i = 0; i < n; i++) perm[i] = i;
  qsort(perm, n, sizeof *perm, sort_cmp);
  for (uint32_t c = 0; c < t->ncols; c++) {
    ps_for_desc *d = &t->cols[c].desc;
    uint8_t *data = (uint8_t *)(uintptr_t)d->data, *valid = (uint8_t *)(uintptr_t)d->validity;
    uint8_t *nd = calloc(d->data_size ? d->data_size : 1, 1), *nv = valid ? calloc(d->validity_size, 1) : NULL;
    if (!nd || (valid && !nv)) {
      free(nd);
      free(nv);
      goto oom;
    }
    for (uint64_t i = 0; i < n; i++) {
      if (d->width) sort_put(nd, i, d->width, sort_get(data, perm[i], d->width));
      if (valid && bit_at(valid, perm[i])) nv[i >> 3] |= (uint8_t)(1u << (i & 7));
    }
    if (d->data_size) memcpy(data, nd, d->data_size);
    if (valid) memcpy(valid, nv, d->validity_size);
    free(nd);
    free(nv);
    /* the encoder's zone maps, recomputed in place for the new order */
    ps_zone_map *z = (ps_zone_map *)(uintptr_t)d->zones;
    if (z) {
      uint64_t *mn = (uint64_t *)(uintptr_t)z->min, *mx = (uint64_t *)(uintptr_t)z->max;
      uint8_t *fl = (uint8_t *)(uintptr_t)z->flags;
      for (uint64_t b = 0; b < z->blocks; b++) {
        uint64_t lo = UINT64_MAX, hi = 0, nvalid = 0, r0 = b * z->block_rows;
        uint64_t r1 = n - r0 < z->block_rows ? n : r0 + z->block_rows;
        for (uint64_t i = r0; i < r1; i++) {
          if (!bit_at(valid, i)) continue;
          uint64_t v = d->width ? sort_get(data, i, d->width) : 0;
          nvalid++;
          lo = v < lo ? v : lo;
          hi = v > hi ? v : hi;
        }
        fl[b] = (uint8_t)((nvalid < r1 - r0 ? PS_ZONE_HAS_NULLS : 0) | (nvalid ? 0 : PS_ZONE_ALL_NULL));
        mn[b] = nvalid ? lo : 0;
        mx[b] = nvalid ? hi : 0;
      }
    }
  }
  rc = 0;
  goto done;
oom:
  set_err(err, errsz, "--sort-by: out of memory sorting %llu rows", (unsigned long long)n);
done:
  for (uint32_t k = 0; k < sort_ctx.nkeys; k++) free(sort_ctx.keys[k]);
  free(perm);
  return rc;
}
