#include "output.h"

#include <ctype.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "util.h"

/* A table cell as held until out_end: its display text in w->text. */
typedef struct held_cell {
  size_t off, len;
  size_t width; /* display width: UTF-8 code points of the display text */
  out_kind kind;
} held_cell;

struct out_writer {
  FILE *f;
  out_format fmt;
  int header;
  size_t ncol;
  char **names;
  /* table only */
  tbuf text;
  held_cell *cells;
  size_t ncells, capcells;
};

int out_format_parse(const char *name, out_format *fmt) {
  static const struct {
    const char *name;
    out_format fmt;
  } names[] = {{"table", OUT_FORMAT_TABLE}, {"box", OUT_FORMAT_TABLE}, {"column", OUT_FORMAT_TABLE},
               {"csv", OUT_FORMAT_CSV},     {"json", OUT_FORMAT_JSON}, {"jsonl", OUT_FORMAT_JSON},
               {"ndjson", OUT_FORMAT_JSON}};
  for (size_t i = 0; i < sizeof names / sizeof names[0]; i++) {
    if (!strcasecmp(name, names[i].name)) {
      *fmt = names[i].fmt;
      return 0;
    }
  }
  return -1;
}

const char *out_format_name(out_format fmt) {
  switch (fmt) {
    case OUT_FORMAT_TABLE:
      return "table";
    case OUT_FORMAT_CSV:
      return "csv";
    case OUT_FORMAT_JSON:
      return "json";
  }
  return "?";
}

out_format out_format_default(FILE *f) { return isatty(fileno(f)) ? OUT_FORMAT_TABLE : OUT_FORMAT_CSV; }

void csv_write_field(FILE *out, const char *s, size_t len) {
  int quote = len == 0;
  for (size_t i = 0; i < len && !quote; i++) quote = s[i] == ',' || s[i] == '"' || s[i] == '\n' || s[i] == '\r';
  if (!quote) {
    fwrite(s, 1, len, out);
    return;
  }
  fputc('"', out);
  for (size_t i = 0; i < len; i++) {
    if (s[i] == '"') fputc('"', out);
    fputc(s[i], out);
  }
  fputc('"', out);
}

/* Length of the valid UTF-8 sequence at s[0..n), or 0 if it is not one
 * (overlong forms, surrogates and values past U+10FFFF are not valid). */
static size_t utf8_seq(const unsigned char *s, size_t n) {
  unsigned c = s[0];
  if (c < 0x80) return 1;
  size_t k;
  uint32_t cp;
  if (c >= 0xC2 && c <= 0xDF) {
    k = 2;
    cp = c & 0x1F;
  } else if (c >= 0xE0 && c <= 0xEF) {
    k = 3;
    cp = c & 0x0F;
  } else if (c >= 0xF0 && c <= 0xF4) {
    k = 4;
    cp = c & 0x07;
  } else {
    return 0;
  }
  if (n < k) return 0;
  for (size_t i = 1; i < k; i++) {
    if ((s[i] & 0xC0) != 0x80) return 0;
    cp = cp << 6 | (s[i] & 0x3F);
  }
  if ((k == 3 && cp < 0x800) || (k == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF)) return 0;
  return k;
}

/* JSON string: quotes, backslashes and control characters escaped; a byte
 * that is not part of valid UTF-8 becomes U+FFFD, so every line is valid JSON. */
static void json_write_string(FILE *f, const char *s, size_t len) {
  const unsigned char *u = (const unsigned char *)s;
  fputc('"', f);
  for (size_t i = 0; i < len;) {
    unsigned c = u[i];
    if (c == '"' || c == '\\') {
      fputc('\\', f);
      fputc((int)c, f);
      i++;
    } else if (c < 0x20) {
      switch (c) {
        case '\n':
          fputs("\\n", f);
          break;
        case '\r':
          fputs("\\r", f);
          break;
        case '\t':
          fputs("\\t", f);
          break;
        default:
          fprintf(f, "\\u%04x", c);
          break;
      }
      i++;
    } else {
      size_t k = utf8_seq(u + i, len - i);
      if (k == 0) {
        fputs("\\ufffd", f);
        i++;
      } else {
        fwrite(u + i, 1, k, f);
        i += k;
      }
    }
  }
  fputc('"', f);
}

/* A JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)? */
static int json_is_number(const char *s, size_t len) {
  size_t i = 0;
  if (i < len && s[i] == '-') i++;
  if (i >= len || !isdigit((unsigned char)s[i])) return 0;
  if (s[i] == '0') {
    i++;
  } else {
    while (i < len && isdigit((unsigned char)s[i])) i++;
  }
  if (i < len && s[i] == '.') {
    i++;
    if (i >= len || !isdigit((unsigned char)s[i])) return 0;
    while (i < len && isdigit((unsigned char)s[i])) i++;
  }
  if (i < len && (s[i] == 'e' || s[i] == 'E')) {
    i++;
    if (i < len && (s[i] == '+' || s[i] == '-')) i++;
    if (i >= len || !isdigit((unsigned char)s[i])) return 0;
    while (i < len && isdigit((unsigned char)s[i])) i++;
  }
  return i == len;
}

/* Table display text: line breaks and other control characters shown as
 * escapes so that a row stays on one line; invalid UTF-8 bytes as \xNN. */
static int table_text(tbuf *b, const char *s, size_t len, size_t *width) {
  const unsigned char *u = (const unsigned char *)s;
  size_t w = 0;
  for (size_t i = 0; i < len;) {
    unsigned c = u[i];
    int rc = 0;
    if (c < 0x20 || c == 0x7F) {
      const char *e = c == '\n' ? "\\n" : c == '\r' ? "\\r" : c == '\t' ? "\\t" : NULL;
      if (e) {
        rc = tbuf_append(b, e, 2);
        w += 2;
      } else {
        rc = tbuf_printf(b, "\\x%02x", c);
        w += 4;
      }
      i++;
    } else {
      size_t k = utf8_seq(u + i, len - i);
      if (k == 0) {
        rc = tbuf_printf(b, "\\x%02x", c);
        w += 4;
        i++;
      } else {
        rc = tbuf_append(b, u + i, k);
        w++;
        i += k;
      }
    }
    if (rc) return -1;
  }
  *width = w;
  return 0;
}

int out_begin(FILE *f, out_format fmt, int header, size_t ncol, const char *const *names, out_writer **out) {
  *out = NULL;
  out_writer *w = calloc(1, sizeof *w);
  if (!w) return -1;
  w->f = f;
  w->fmt = fmt;
  w->header = header;
  w->ncol = ncol;
  w->names = calloc(ncol ? ncol : 1, sizeof *w->names);
  if (!w->names) {
    free(w);
    return -1;
  }
  for (size_t c = 0; c < ncol; c++) {
    size_t n = strlen(names[c]);
    if (!(w->names[c] = malloc(n + 1))) {
      out_discard(w);
      return -1;
    }
    memcpy(w->names[c], names[c], n + 1);
  }
  *out = w;
  return 0;
}

/* The CSV header goes out with the first row or at the end, so that a result
 * abandoned before its first row (out_discard after an error) prints nothing. */
static void csv_header(out_writer *w) {
  if (w->fmt != OUT_FORMAT_CSV || !w->header) return;
  for (size_t c = 0; c < w->ncol; c++) {
    if (c) fputc(',', w->f);
    csv_write_field(w->f, w->names[c], strlen(w->names[c]));
  }
  fputc('\n', w->f);
  w->header = 0;
}

static int hold_cell(out_writer *w, out_kind kind, const char *s, size_t len) {
  if (w->ncells == w->capcells) {
    size_t cap = w->capcells ? w->capcells * 2 : 256;
    held_cell *v = cap > SIZE_MAX / sizeof *v ? NULL : realloc(w->cells, cap * sizeof *v);
    if (!v) return -1;
    w->cells = v;
    w->capcells = cap;
  }
  held_cell *h = &w->cells[w->ncells];
  h->kind = kind;
  h->off = w->text.len;
  if (kind == OUT_NULL) {
    if (tbuf_append(&w->text, "NULL", 4)) return -1;
    h->width = 4;
  } else if (table_text(&w->text, s, len, &h->width)) {
    return -1;
  }
  h->len = w->text.len - h->off;
  w->ncells++;
  return 0;
}

int out_row(out_writer *w, const out_cell *cells) {
  FILE *f = w->f;
  switch (w->fmt) {
    case OUT_FORMAT_CSV:
      csv_header(w);
      for (size_t c = 0; c < w->ncol; c++) {
        if (c) fputc(',', f);
        if (cells[c].kind != OUT_NULL) csv_write_field(f, cells[c].s, cells[c].len);
      }
      fputc('\n', f);
      return 0;
    case OUT_FORMAT_JSON:
      fputc('{', f);
      for (size_t c = 0; c < w->ncol; c++) {
        if (c) fputc(',', f);
        json_write_string(f, w->names[c], strlen(w->names[c]));
        fputc(':', f);
        if (cells[c].kind == OUT_NULL)
          fputs("null", f);
        else if ((cells[c].kind == OUT_NUMBER && json_is_number(cells[c].s, cells[c].len)) ||
                 (cells[c].kind == OUT_BOOL && ((cells[c].len == 4 && !memcmp(cells[c].s, "true", 4)) ||
                                                (cells[c].len == 5 && !memcmp(cells[c].s, "false", 5)))))
          fwrite(cells[c].s, 1, cells[c].len, f);
        else
          json_write_string(f, cells[c].s, cells[c].len);
      }
      fputs("}\n", f);
      return 0;
    case OUT_FORMAT_TABLE:
      for (size_t c = 0; c < w->ncol; c++)
        if (hold_cell(w, cells[c].kind, cells[c].s, cells[c].len)) return -1;
      return 0;
  }
  return -1;
}

static void pad(FILE *f, size_t n) {
  while (n--) fputc(' ', f);
}

static int write_table(out_writer *w) {
  FILE *f = w->f;
  size_t ncol = w->ncol, nrows = ncol ? w->ncells / ncol : 0;
  size_t *width = calloc(ncol ? ncol : 1, sizeof *width);
  int *numeric = calloc(ncol ? ncol : 1, sizeof *numeric);
  tbuf names = {0};
  held_cell *hn = calloc(ncol ? ncol : 1, sizeof *hn);
  int rc = -1;
  if (!width || !numeric || !hn) goto done;
  for (size_t c = 0; c < ncol; c++) {
    hn[c].off = names.len;
    if (table_text(&names, w->names[c], strlen(w->names[c]), &hn[c].width)) goto done;
    hn[c].len = names.len - hn[c].off;
    width[c] = w->header ? hn[c].width : 0;
    numeric[c] = 1;
  }
  /* A column is right-aligned when every non-null cell of it is a number. */
  for (size_t r = 0; r < nrows; r++) {
    for (size_t c = 0; c < ncol; c++) {
      const held_cell *h = &w->cells[r * ncol + c];
      if (h->width > width[c]) width[c] = h->width;
      if (h->kind == OUT_TEXT || h->kind == OUT_BOOL) numeric[c] = 0;
    }
  }
  if (w->header) {
    for (size_t c = 0; c < ncol; c++) {
      fputs(c ? " | " : " ", f);
      if (numeric[c] && nrows) pad(f, width[c] - hn[c].width);
      /* names.p stays NULL when every name is empty (a quoted alias '' or of NULs). */
      if (hn[c].len) fwrite(names.p + hn[c].off, 1, hn[c].len, f);
      if (!(numeric[c] && nrows) && c + 1 < ncol) pad(f, width[c] - hn[c].width);
    }
    fputc('\n', f);
    for (size_t c = 0; c < ncol; c++) {
      if (c) fputc('+', f);
      for (size_t k = 0; k < width[c] + 2; k++) fputc('-', f);
    }
    fputc('\n', f);
  }
  for (size_t r = 0; r < nrows; r++) {
    for (size_t c = 0; c < ncol; c++) {
      const held_cell *h = &w->cells[r * ncol + c];
      fputs(c ? " | " : " ", f);
      if (numeric[c]) pad(f, width[c] - h->width);
      if (h->len) fwrite(w->text.p + h->off, 1, h->len, f); /* text.p is NULL when every cell is empty */
      if (!numeric[c] && c + 1 < ncol) pad(f, width[c] - h->width);
    }
    fputc('\n', f);
  }
  rc = 0;
done:
  free(width);
  free(numeric);
  free(hn);
  tbuf_free(&names);
  return rc;
}

void out_discard(out_writer *w) {
  if (!w) return;
  for (size_t c = 0; c < w->ncol && w->names; c++) free(w->names[c]);
  free(w->names);
  tbuf_free(&w->text);
  free(w->cells);
  free(w);
}

int out_end(out_writer *w) {
  if (!w) return 0;
  int rc = 0;
  if (w->fmt == OUT_FORMAT_TABLE) rc = write_table(w);
  csv_header(w);
  if (fflush(w->f) != 0 || ferror(w->f)) rc = -1;
  out_discard(w);
  return rc;
}
