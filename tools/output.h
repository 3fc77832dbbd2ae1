/* Result output of the packscan command: an aligned table, CSV or JSON lines.
 * Every command that prints rows (query --rows/--select, SELECT, the shell)
 * goes through one writer: begin with the column names, add rows of cells,
 * end. No library calls. */
#ifndef PSTOOL_OUTPUT_H
#define PSTOOL_OUTPUT_H

#include <stddef.h>
#include <stdio.h>

typedef enum out_format {
  OUT_FORMAT_TABLE = 1, /* columns aligned, '|' between them, a rule under the header */
  OUT_FORMAT_CSV,       /* RFC 4180; a null is an empty field, an empty string is "" */
  OUT_FORMAT_JSON       /* JSON lines: one object per row, names as keys */
} out_format;

typedef enum out_kind {
  OUT_NULL = 0, /* SQL NULL: table "NULL", CSV empty, JSON null */
  OUT_NUMBER,   /* text of a number ("12.50", "-3"): right-aligned, a bare JSON number */
  OUT_TEXT,     /* any bytes (strings, dates, timestamps): left-aligned, a JSON string */
  OUT_BOOL      /* "true" or "false": a bare JSON literal */
} out_kind;

typedef struct out_cell {
  out_kind kind;
  const char *s; /* not NUL-terminated; len bytes (may hold NUL); copied by out_row */
  size_t len;
} out_cell;

typedef struct out_writer out_writer;

/* "table" (also "box", "column"), "csv", "json" (also "jsonl", "ndjson");
 * case-insensitive. 0 ok, -1 unknown name. */
int out_format_parse(const char *name, out_format *fmt);
/* "table", "csv" or "json". */
const char *out_format_name(out_format fmt);
/* The default for a stream: an aligned table on a terminal, CSV otherwise. */
out_format out_format_default(FILE *f);

/* Starts a result of ncol columns named names[0..ncol) (copied) on f.
 * header: nonzero prints a header line (table, CSV; JSON lines always name
 * the keys). Nothing is written before the first row or out_end, so a result
 * given up with out_discard before its first row leaves f untouched. 0 ok,
 * -1 out of memory. */
int out_begin(FILE *f, out_format fmt, int header, size_t ncol, const char *const *names, out_writer **w);
/* Adds one row of ncol cells. CSV and JSON write it at once; a table is
 * held until out_end, which knows the column widths. 0 ok, -1 out of memory. */
int out_row(out_writer *w, const out_cell *cells);
/* Writes what is held and frees the writer. Returns 0, or -1 when writing
 * to the stream failed (ferror). w may be NULL. */
int out_end(out_writer *w);
/* Frees the writer without writing what is held (after an error). w may be NULL. */
void out_discard(out_writer *w);

/* Writes one CSV field (quoted when it holds a comma, a quote or a line break,
 * or is empty, so that an empty string differs from a null). */
void csv_write_field(FILE *out, const char *s, size_t len);

#endif
