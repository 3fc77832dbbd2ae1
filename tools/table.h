/* The packscan table file (docs/table-format.md): one file per table holding
 * its columns exactly as the library reads them. The reader works over any
 * memory buffer (a memory map, a read() copy, a fuzzer's input) and validates
 * every field before it is used; nothing is allocated from an unchecked field. */
#ifndef PSTOOL_TABLE_H
#define PSTOOL_TABLE_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "outfile.h"
#include "packscan.h"

#define TBL_MAGIC "PSCANTBL"
#define TBL_VERSION_MAJOR 1
#define TBL_VERSION_MINOR 3
#define TBL_HEADER_SIZE 64
#define TBL_ENTRY_SIZE 224     /* directory entry size written by this version */
#define TBL_ENTRY_SIZE_V12 192 /* 1.2: zone maps (bytes 160..191) */
#define TBL_ENTRY_SIZE_V10 160 /* the smallest a reader accepts (1.0, 1.1: no zone maps) */
#define TBL_ALIGN 64           /* writer: every section starts on a 64-byte boundary */
#define TBL_MIN_ALIGN 8        /* reader: sections must be at least 8-byte aligned */
#define TBL_MAX_NAME 4096      /* column names are 1..4096 bytes */
#define TBL_MAX_TIME_ZONE 64   /* a timestamp column's time zone: 1..64 printable ASCII bytes (1.3) */
/* A table may have more rows than its file has bits only up to this many rows
 * (only a table whose every column is constant and non-null can). */
#define TBL_SMALL_ROWS 65536

/* Physical encodings. */
/* DELTA: a numeric column as FOR, its data section a DELTA buffer (docs/design.md). */
enum { TBL_ENC_FOR = 1, TBL_ENC_DICT = 2, TBL_ENC_DELTA = 3 };
/* Logical annotations: how the tool parses literals and prints values. */
enum {
  TBL_LOGICAL_NONE = 0,
  TBL_LOGICAL_DATE = 1,
  TBL_LOGICAL_DECIMAL = 2,
  TBL_LOGICAL_TIMESTAMP = 3,
  TBL_LOGICAL_TIME = 4,
  TBL_LOGICAL_BOOLEAN = 5
};
/* Entry flags. */
/* TBL_FLAG_FLOAT_MAP (1.3): a float column's value mapping (entry bytes
 * 192..223 and an exception section); older readers refuse the flag. */
enum { TBL_FLAG_VALIDITY = 1u, TBL_FLAG_SORTED = 2u, TBL_FLAG_FLOAT_MAP = 4u };

typedef struct tbl_column {
  char *name;        /* NUL-terminated copy; names contain no NUL byte */
  uint32_t encoding; /* TBL_ENC_* */
  uint32_t logical;  /* TBL_LOGICAL_* */
  uint32_t unit;     /* TIMESTAMP, TIME: values count 10^-unit seconds (0, 3, 6, 9) */
  ps_for_desc desc;  /* FOR: the column; DICT: the codes (unsigned type). Pointers
                        into the table's buffer. */
  ps_dict_desc dict; /* DICT only (offsets32 / bytes point into the buffer) */
  uint64_t null_count;
  uint64_t raw_bytes; /* size as plain Arrow arrays (informational) */
  uint64_t data_offset, validity_offset, dict_offsets_offset, dict_bytes_offset;
  /* Zone maps (1.2): desc.zones points here when the file has them. */
  ps_zone_map zones;
  uint64_t zones_offset;
  uint64_t exceptions_offset;
  /* TIMESTAMP (1.3): the time zone its values were written in (the Arrow
   * type's: "UTC", "Europe/Oslo", "+02:00"; the values are UTC instants
   * either way), NUL-terminated; "" for none. */
  char time_zone[TBL_MAX_TIME_ZONE + 1]; /* 1.3: a float mapping's exception table (desc.exceptions), 0 = none */
} tbl_column;

typedef struct tbl_table {
  uint16_t version_major, version_minor;
  uint64_t rows;
  uint32_t ncols;
  tbl_column *cols;
  const uint8_t *base; /* the whole file */
  size_t size;
  /* ownership of base */
  void *map; /* mmap'ed region, or NULL */
  size_t map_size;
  void *heap; /* malloc'ed copy, or NULL */
  /* Set by a command before it makes library columns: nonzero makes
   * tbl_column_create and tbl_for_create read the columns in place from
   * base, host-resident (streamed through the device in chunks), instead of
   * copying them to the device. DELTA columns stay on the device (the
   * library does not stream them yet). */
  int host_resident;
} tbl_table;

/* Opens a table over size bytes at buf (not copied; must outlive the table
 * unless it was made by tbl_open_file). verify: nonzero checks every section's
 * checksum (header and directory checksums are always checked). If buf is
 * not 8-byte aligned it is copied. On error returns -1 with a message in err
 * naming the problem; *out is untouched. */
int tbl_open_memory(const void *buf, size_t size, int verify, tbl_table **out, char *err, size_t errsz);
/* Opens a file with mmap (falling back to read()). */
int tbl_open_file(const char *path, int verify, tbl_table **out, char *err, size_t errsz);
void tbl_close(tbl_table *t);
/* Index of the column with this exact name; else, for unquoted identifiers
 * (exact == 0), the only case-insensitive match. -1 none, -2 ambiguous. */
int tbl_find_column(const tbl_table *t, const char *name, size_t len, int exact);
/* "int64", "decimal(2)", "date", "timestamp", "timestamp(3)", "time", "string"... */
void tbl_column_typename(const tbl_column *c, char out[32]);
/* Bytes the column occupies in the file (data + validity + dictionary). */
uint64_t tbl_column_stored_bytes(const tbl_column *c);

/* ---- writing ---- */

typedef struct tbl_write_column {
  const char *name;
  uint32_t encoding, logical;
  uint32_t unit;         /* TIMESTAMP, TIME: 10^-unit seconds (0, 3, 6, 9); else 0 */
  const char *time_zone; /* TIMESTAMP: its time zone (tbl_column.time_zone); NULL or "" for none */
  ps_for_desc desc;      /* data/validity in host memory; desc.zones (may be NULL) are written too */
  ps_dict_desc dict;     /* DICT: 32-bit offsets only */
  uint64_t null_count;
  uint64_t raw_bytes;
} tbl_write_column;

/* Writes a table into a FILE (sequentially, sections padded to 64 bytes) or
 * into a memory buffer (*out malloc'ed). Validates what it writes. */
int tbl_write_stream(FILE *f, uint64_t rows, const tbl_write_column *cols, uint32_t ncols, uint64_t *file_size,
                     char *err, size_t errsz);
/* Whether tz (len bytes) is a time zone a table file holds (1..TBL_MAX_TIME_ZONE
 * printable ASCII bytes). */
int tbl_time_zone_ok(const char *tz, size_t len);
int tbl_write_memory(uint64_t rows, const tbl_write_column *cols, uint32_t ncols, uint8_t **out, size_t *size,
                     char *err, size_t errsz);
/* Writes to path by the rules of outfile.h (a regular file through a
 * temporary file that is read back, every checksum, before it is renamed over
 * path; a device or FIFO in place); refuses a path that is input (may be NULL). */
int tbl_write_file(const char *path, const out_input *input, uint64_t rows, const tbl_write_column *cols,
                   uint32_t ncols, uint64_t *file_size, char *err, size_t errsz);

/* ---- using columns with the library ---- */

/* Creates a library column for column idx (FOR or dictionary). On failure
 * returns the status and writes the library's message into err. */
ps_status tbl_column_create(ps_context *ctx, const tbl_table *t, uint32_t idx, ps_column **out, char *err,
                            size_t errsz);
/* ps_column_create_for of desc, a view of one of t's columns (its data in
 * t's buffer): host-resident where t->host_resident says so. */
ps_status tbl_for_create(ps_context *ctx, const tbl_table *t, const ps_for_desc *desc, ps_column **out);
/* The bytes of t's packed columns (data, validity, dictionaries): what
 * device-resident columns of every column would take on the device. */
uint64_t tbl_packed_bytes(const tbl_table *t);

/* The library's message for a failed call: it already starts with the status
 * name ("PS_ERR_NO_DEVICE: ..."), so it is printed as it is; the bare status
 * name where the message is empty. */
const char *lib_error(ps_status st, const char *msg);

#endif
