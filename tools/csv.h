/* A streaming RFC 4180 CSV reader: quoted fields may hold the delimiter,
 * doubled quotes and line breaks; records end in LF or CRLF. Fields are
 * unbounded (growable buffers). A UTF-8 byte-order mark at the start is skipped. */
#ifndef PSTOOL_CSV_H
#define PSTOOL_CSV_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "util.h"

/* Reads up to n bytes into dst: returns the count, 0 at end of input, < 0 on error. */
typedef long (*csv_read_fn)(void *opaque, void *dst, size_t n);

typedef struct csv_field {
  size_t start, len; /* into the reader's data buffer */
  int quoted;        /* the field was written in quotes */
} csv_field;

typedef struct csv_reader {
  csv_read_fn read;
  void *opaque;
  char delim;
  unsigned char *in;
  size_t in_len, in_pos, in_cap;
  int eof, started;
  tbuf data;
  csv_field *fields;
  size_t nfields, cap_fields;
  uint64_t line;        /* physical line of the next byte, 1-based */
  uint64_t record_line; /* line on which the current record starts */
  uint64_t consumed;    /* bytes consumed so far */
} csv_reader;

/* delim 0: detected from the first line (the most frequent of ',', ';', tab
 * and '|' outside quotes; ',' when none), then in r->delim. */
int csv_init(csv_reader *r, csv_read_fn fn, void *opaque, char delim);
/* 1: a record was read; 0: end of input; -1: error (message in err). */
int csv_next(csv_reader *r, char *err, size_t errsz);
static inline const char *csv_field_ptr(const csv_reader *r, size_t i) {
  return (const char *)r->data.p + r->fields[i].start;
}
/* True for an empty line (one unquoted empty field). */
int csv_record_blank(const csv_reader *r);
void csv_free(csv_reader *r);

/* Sources: a FILE and a memory buffer. */
long csv_read_file(void *opaque, void *dst, size_t n);
typedef struct csv_mem {
  const char *p;
  size_t len, pos;
} csv_mem;
long csv_read_mem(void *opaque, void *dst, size_t n);

#endif
