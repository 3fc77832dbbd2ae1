/* CSV -> encoded columns (the `packscan encode` command's engine). */
#ifndef PSTOOL_ENCODE_H
#define PSTOOL_ENCODE_H

#include <stdint.h>
#include <stdio.h>

#include "csv.h"
#include "dict_dedup.h"
#include "packscan.h"
#include "table.h"
#include "util.h"

typedef enum coltype {
  CT_AUTO = 0,
  CT_INT,     /* int64 */
  CT_DECIMAL, /* exact decimal: scaled int64 stored as a float64 FOR column with that scale */
  CT_FLOAT,   /* float64 through ps_encode_for's smallest exact scale */
  CT_DATE,    /* int32 days since 1970-01-01, logical "date" */
  CT_STRING,  /* sorted dictionary */
  CT_TIMESTAMP, /* int64 in units of 10^-S seconds since 1970-01-01 (S = 0, 3, 6, 9), logical "timestamp" */
  CT_TIME,      /* int64 in units of 10^-S seconds since midnight, logical "time" */
  CT_BOOL       /* int64 0 / 1, logical "boolean" */
} coltype;

typedef struct encode_options {
  char delimiter;         /* 0 (encode_options_init): detected from the header line */
  const char *types;      /* "name:type,..." or NULL; type: int, decimal, decimal(S), float, date,
                             timestamp, timestamp(S), time, time(S), boolean, string */
  const char *null_value; /* an unquoted field equal to this is a null too (NULL: only empty fields) */
  int progress;           /* draw a progress bar on stderr */
  uint64_t input_size;    /* bytes of input for the progress bar (0: unknown) */
  unsigned max_reported;  /* bad rows listed in the diagnostics (0: 20) */
  int encoding;           /* numeric columns: PS_ENCODING_AUTO (the smaller; encode_options_init),
                             PS_ENCODING_FOR or PS_ENCODING_DELTA */
} encode_options;

void encode_options_init(encode_options *o);

/* Columns a CSV may have: the header's names are checked for duplicates with
 * a hash table (linear time); each column then costs a few hundred bytes of
 * state besides its values. */
#define ENCODE_MAX_COLUMNS 1000000u

typedef struct encoded_table {
  uint64_t rows;
  uint32_t ncols;
  tbl_write_column *cols; /* ready for tbl_write_* */
  coltype *types;
  ps_encoded *fors;       /* per column (FOR columns) */
  tool_dict *dicts;       /* per column (string columns) */
  char **names;
  uint64_t input_bytes;
  char delimiter;         /* the one used (detected or given) */
  tbuf warnings;          /* lines about inferred types: columns that fell back to strings, money */
} encoded_table;

/* Reads CSV from fn/opaque and encodes every column. Bad rows and bad values
 * are listed in diag (one line each, "line 12, column 3 'price': ...") and make
 * the call fail; nothing is dropped silently. Returns 0 or -1 (err says why). */
int encode_csv(csv_read_fn fn, void *opaque, const encode_options *o, encoded_table *out,
               tbuf *diag, char *err, size_t errsz);
void encoded_table_free(encoded_table *t);

/* Reorders the rows of an encoded table by the columns named in spec
 * ("a,b": by a, then b), ascending, nulls last, stably (rows with equal keys
 * keep their input order); the order is the values' order (a string column's
 * dictionary is sorted). Every column's codes, validity and zone maps are
 * rewritten in place. 0 ok, -1 with err set (an unknown column). */
int encode_sort_rows(encoded_table *t, const char *spec, char *err, size_t errsz);

/* Prints the per-column summary (type, encoding, width, nulls, sizes, ratio). */
void encode_print_summary(FILE *f, const encoded_table *t);

/* Parses a type name ("int", "decimal(2)", ...). 0 ok (*scale = -1 when not given). */
int parse_coltype(const char *s, size_t len, coltype *ct, int *scale);

#endif
