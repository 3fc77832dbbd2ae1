/* CSV -> encoded columns. The whole CSV is held as per-column string arrays
 * first (types are inferred from every value), then each column is converted
 * and encoded with the library's encoders. */
#include "encode.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

typedef struct rawcol {
  tbuf bytes;
  tbuf offs;  /* int64_t[n + 1] */
  tbuf valid; /* Arrow validity bitmap */
  uint64_t nulls;
} rawcol;

void encode_options_init(encode_options *o) {
  memset(o, 0, sizeof *o);
  o->delimiter = ',';
  o->max_reported = 20;
}

static int64_t raw_off(const rawcol *c, uint64_t i) {
  int64_t v;
  memcpy(&v, c->offs.p + i * 8, 8);
  return v;
}

static int raw_valid(const rawcol *c, uint64_t i) { return (c->valid.p[i / 8] >> (i % 8)) & 1; }

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
    if (s[len - 1] != ')' || len - k < 3 || parse_int64(s + k + 1, len - k - 2, &v) || v < 0 || v > 18)
      return -1;
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
  else
    return -1;
  if (*scale >= 0 && *ct != CT_DECIMAL) return -1;
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

static coltype infer(const rawcol *c, uint64_t n, int *scale) {
  int can_int = 1, can_dec = 1, can_date = 1;
  int maxscale = 0;
  for (uint64_t i = 0; i < n && (can_int || can_dec || can_date); i++) {
    if (!raw_valid(c, i)) continue;
    int64_t a = raw_off(c, i), b = raw_off(c, i + 1);
    if (a == b) continue; /* a quoted "" is a null in a non-string column */
    const char *s = (const char *)c->bytes.p + a;
    size_t len = (size_t)(b - a);
    int64_t v;
    int32_t d;
    int sc;
    if (can_int && parse_int64(s, len, &v)) can_int = 0;
    if (can_dec) {
      if (parse_decimal(s, len, &v, &sc))
        can_dec = 0;
      else if (sc > maxscale)
        maxscale = sc;
    }
    if (can_date && parse_date(s, len, &d)) can_date = 0;
  }
  *scale = maxscale;
  if (can_int) return CT_INT;
  if (can_dec) return CT_DECIMAL;
  if (can_date) return CT_DATE;
  return CT_STRING;
}

/* Builds the numeric value array and a validity bitmap (NULL when no nulls). */
static int convert_numeric(const rawcol *c, uint64_t n, coltype ct, int scale, const char *name,
                           uint32_t colno, const uint64_t *lines, reporter *rep, void **values,
                           uint8_t **validity, uint64_t *nulls, int quiet_fail) {
  size_t esz = ct == CT_DATE ? 4 : 8;
  uint8_t *vals = calloc(n ? n : 1, esz);
  uint8_t *valid = calloc((n + 7) / 8 ? (n + 7) / 8 : 1, 1);
  if (!vals || !valid) {
    free(vals);
    free(valid);
    return -2;
  }
  uint64_t nn = 0, bad = 0;
  tbuf tmp = {0};
  for (uint64_t i = 0; i < n; i++) {
    int64_t a = raw_off(c, i), b = raw_off(c, i + 1);
    if (!raw_valid(c, i) || a == b) {
      nn++;
      continue;
    }
    const char *s = (const char *)c->bytes.p + a;
    size_t len = (size_t)(b - a);
    int ok = 1;
    char shown[64];
    if (ct == CT_INT) {
      int64_t v;
      if (parse_int64(s, len, &v)) {
        ok = 0;
        if (!quiet_fail) {
          show(s, len, shown);
          report(rep, "line %llu, column %u '%s': '%s' is not a 64-bit integer",
                 (unsigned long long)lines[i], colno, name, shown);
        }
      } else {
        memcpy(vals + i * 8, &v, 8);
      }
    } else if (ct == CT_DECIMAL) {
      int64_t m, v;
      int sc;
      if (parse_decimal(s, len, &m, &sc)) {
        ok = 0;
        if (!quiet_fail) {
          show(s, len, shown);
          report(rep, "line %llu, column %u '%s': '%s' is not a decimal number", (unsigned long long)lines[i],
                 colno, name, shown);
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
      tmp.len = 0;
      char *end = NULL;
      double v = 0;
      if (tbuf_append(&tmp, s, len) || tbuf_putc(&tmp, 0)) {
        free(vals);
        free(valid);
        tbuf_free(&tmp);
        return -2;
      }
      v = strtod((const char *)tmp.p, &end);
      if (end != (char *)tmp.p + len || len == 0 || !isfinite(v) || isspace((unsigned char)s[0])) {
        ok = 0;
        if (!quiet_fail) {
          show(s, len, shown);
          report(rep, "line %llu, column %u '%s': '%s' is not a finite number", (unsigned long long)lines[i],
                 colno, name, shown);
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
          report(rep, "line %llu, column %u '%s': '%s' is not a date (yyyy-mm-dd)",
                 (unsigned long long)lines[i], colno, name, shown);
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
  tbuf_free(&tmp);
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
  case CT_INT: return "int64";
  case CT_DECIMAL: return "decimal";
  case CT_FLOAT: return "float64";
  case CT_DATE: return "date";
  case CT_STRING: return "string";
  default: return "auto";
  }
}

/* Encodes column k of the raw table into out. */
static int encode_column(encoded_table *out, uint32_t k, rawcol *c, coltype ct, int scale,
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
  ps_status st = ps_encode_for(&p, 0, ct == CT_FLOAT ? -1 : 0, 0, NULL, lerr, sizeof lerr, &out->fors[k]);
  free(values);
  free(validity);
  if (st != PS_OK)
    return set_err(err, errsz, "column %u '%s' (%s): %s", k + 1, name, coltype_name(ct),
                   lib_error(st, lerr));
  out->types[k] = ct;
  w->encoding = TBL_ENC_FOR;
  w->desc = out->fors[k].desc;
  w->logical = TBL_LOGICAL_NONE;
  if (ct == CT_DATE) w->logical = TBL_LOGICAL_DATE;
  if (ct == CT_DECIMAL) {
    /* The scaled integers are exactly the decimal values at this scale. */
    w->logical = TBL_LOGICAL_DECIMAL;
    w->desc.type = PS_TYPE_FLOAT64;
    w->desc.scale = (uint32_t)scale;
  }
  w->null_count = nulls;
  w->raw_bytes = n * (ct == CT_DATE ? 4 : 8) + (nulls ? (n + 7) / 8 : 0);
  return 0;
}

void encoded_table_free(encoded_table *t) {
  if (!t) return;
  for (uint32_t i = 0; i < t->ncols; i++) {
    if (t->fors) ps_encoded_free(&t->fors[i]);
    if (t->dicts) tool_dict_free(&t->dicts[i]);
    if (t->names) free(t->names[i]);
  }
  free(t->fors);
  free(t->dicts);
  free(t->names);
  free(t->cols);
  free(t->types);
  memset(t, 0, sizeof *t);
}

/* Looks up the explicit type of a column in "name:type,...". */
static int spec_lookup(const char *spec, const char *name, coltype *ct, int *scale, int *found) {
  *found = 0;
  if (!spec) return 0;
  const char *p = spec;
  while (*p) {
    const char *end = strchr(p, ',');
    /* A decimal(S) type has no comma inside, so ',' always separates entries. */
    size_t len = end ? (size_t)(end - p) : strlen(p);
    const char *colon = memchr(p, ':', len);
    if (!colon) return -1;
    const char *last = colon;
    for (const char *q = colon; q < p + len; q++)
      if (*q == ':') last = q; /* names may contain ':'; the type is after the last one */
    size_t nl = (size_t)(last - p);
    if (nl == strlen(name) && memcmp(p, name, nl) == 0) {
      if (parse_coltype(last + 1, (size_t)(p + len - last - 1), ct, scale)) return -1;
      *found = 1;
    }
    p += len;
    if (*p == ',') p++;
  }
  return 0;
}

static int spec_check_names(const char *spec, char **names, uint32_t ncols, char *err, size_t errsz) {
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
      return set_err(err, errsz,
                     "--types: unknown type '%.*s' (int, decimal, decimal(S), float, date, string)",
                     (int)(p + len - last - 1), last + 1);
    size_t nl = (size_t)(last - p);
    int ok = 0;
    for (uint32_t i = 0; i < ncols && !ok; i++) ok = strlen(names[i]) == nl && memcmp(names[i], p, nl) == 0;
    if (!ok) return set_err(err, errsz, "--types: no column named '%.*s'", (int)nl, p);
    p += len;
    if (*p == ',') p++;
  }
  return 0;
}

int encode_csv(csv_read_fn fn, void *opaque, const encode_options *o, encoded_table *out,
               tbuf *diag, char *err, size_t errsz) {
  csv_reader r;
  rawcol *cols = NULL;
  tbuf lines = {0};
  uint32_t ncols = 0;
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
  if (r.nfields > UINT32_MAX / 2) {
    set_err(err, errsz, "too many columns");
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
  if (!out->names || !out->cols || !out->types || !out->fors || !out->dicts || !cols) {
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
    for (uint32_t j = 0; j < i; j++)
      if (!strcmp(out->names[j], out->names[i])) {
        set_err(err, errsz, "header: duplicate column name '%s' (columns %u and %u)", out->names[i], j + 1, i + 1);
        goto done;
      }
  }
  if (spec_check_names(o->types, out->names, ncols, err, errsz)) goto done;
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
      report(&rep, "line %llu: expected %u fields, found %zu", (unsigned long long)r.record_line, ncols,
             r.nfields);
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
      int isnull = !f->quoted && (f->len == 0 || (o->null_value && f->len == null_len &&
                                                  memcmp(s, o->null_value, null_len) == 0));
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
    coltype ct = CT_AUTO;
    int scale = -1, found = 0;
    if (spec_lookup(o->types, out->names[i], &ct, &scale, &found)) {
      set_err(err, errsz, "--types: malformed");
      goto done;
    }
    if (!found) {
      ct = infer(&cols[i], n, &scale);
      if (ct == CT_DECIMAL) {
        /* An inferred decimal that does not fit in 64 bits at its scale is kept as text. */
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
        if (cr == -1) ct = CT_STRING;
      }
    } else if (ct == CT_DECIMAL && scale < 0) {
      /* decimal without a scale: the largest scale among the values (the
       * conversion reports the values that are not decimals). */
      int sc;
      scale = 0;
      for (uint64_t k = 0; k < n; k++) {
        if (!raw_valid(&cols[i], k)) continue;
        int64_t a = raw_off(&cols[i], k), b = raw_off(&cols[i], k + 1), m;
        if (a != b && !parse_decimal((const char *)cols[i].bytes.p + a, (size_t)(b - a), &m, &sc) && sc > scale)
          scale = sc;
      }
    }
    int er = encode_column(out, i, &cols[i], ct, scale, ln, &rep, err, errsz);
    if (er < 0) goto done;
    /* The raw strings are no longer needed. */
    tbuf_free(&cols[i].bytes);
    tbuf_free(&cols[i].offs);
    tbuf_free(&cols[i].valid);
  }
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
  fprintf(f, "%-*s  %-12s %-10s %5s %10s %10s %10s %7s\n", (int)w, "column", "type", "encoding", "width",
          "nulls", "plain", "encoded", "ratio");
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
      else if (c->logical == TBL_LOGICAL_DECIMAL)
        snprintf(ty, sizeof ty, "decimal(%u)", c->desc.scale);
      else if (c->desc.type == PS_TYPE_FLOAT64)
        snprintf(ty, sizeof ty, "float64/s%u", c->desc.scale);
      else
        snprintf(ty, sizeof ty, "int64");
      snprintf(enc, sizeof enc, "FOR");
    }
    uint64_t stored = c->desc.data_size + c->desc.validity_size;
    if (c->encoding == TBL_ENC_DICT) stored += (c->dict.count + 1) * 4 + c->dict.bytes_size;
    tot_raw += c->raw_bytes;
    tot_enc += stored;
    format_bytes(c->raw_bytes, a);
    format_bytes(stored, b);
    fprintf(f, "%-*.*s  %-12s %-10s %5u %10llu %10s %10s %6.1fx\n", (int)w, (int)w, c->name, ty, enc,
            c->desc.width, (unsigned long long)c->null_count, a, b,
            stored ? (double)c->raw_bytes / (double)stored : 0.0);
  }
  char a[32], b[32];
  format_bytes(tot_raw, a);
  format_bytes(tot_enc, b);
  fprintf(f, "%-*s  %-12s %-10s %5s %10s %10s %10s %6.1fx\n", (int)w, "total", "", "", "", "", a, b,
          tot_enc ? (double)tot_raw / (double)tot_enc : 0.0);
}
