/*
 * Test-side columns: the host data a test hands to the library (packed by the
 * test itself, so any code at any width can be produced), plus random
 * generators. The oracle (oracle.c) decodes these bytes on its own; nothing
 * here is shared with the library.
 */
#ifndef PS_TEST_TCOL_H
#define PS_TEST_TCOL_H

#include <stddef.h>
#include <stdint.h>

#include "harness.h"
#include "packscan.h"

typedef __int128 ti128;
typedef unsigned __int128 tu128;

typedef struct tcol {
  char name[8];      /* "c3", set by the runner */
  ps_type type;      /* logical type; PS_TYPE_STRING for dictionary columns */
  ps_type code_type; /* type of the FOR description (== type for FOR columns) */
  uint64_t n;
  uint32_t width;
  uint32_t scale;
  ps_reference ref;
  uint8_t *data; /* exactly data_size = ceil(n*width/8) bytes (malloc'd, >= 1) */
  uint64_t data_size;
  uint8_t *validity; /* ceil(n/8) bytes, or NULL (no nulls) */
  /* dictionary columns */
  uint64_t dcount;
  int32_t *off32; /* exactly one of off32/off64 is set */
  int64_t *off64;
  uint8_t *bytes;
  uint64_t bytes_size;
  int sorted; /* the flag handed to the library */
  /* the oracle's own decode of data (oracle.c), filled lazily */
  uint64_t *ocodes;
} tcol;

/* A list of byte strings. */
typedef struct tstrs {
  size_t count;
  uint8_t **s;
  size_t *len;
} tstrs;

void tstrs_push(tstrs *l, const void *s, size_t len);
void tstrs_free(tstrs *l);
/* memcmp order, a proper prefix first (the "binary" collation). */
int tstr_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen);

/* Null patterns for generated validity bitmaps. */
enum {
  TN_NO_BITMAP = 0, /* validity NULL */
  TN_NONE_NULL,     /* bitmap present, every row valid */
  TN_FEW,           /* ~10% null */
  TN_HALF,          /* ~50% null */
  TN_MOST,          /* ~90% null */
  TN_ALL,           /* every row null */
  TN_COUNT
};

/* Validity bitmap for mode (NULL for TN_NO_BITMAP). Bits past n are random:
 * the library must ignore them. */
uint8_t *tcol_random_validity(th_rng *r, uint64_t n, int mode);
int tcol_valid(const tcol *c, uint64_t row);

/* Range of M + code for a type: integers their type's range, floats int64. */
void tcol_type_range(ps_type t, ti128 *lo, ti128 *hi);
int tcol_is_float(ps_type t);
int tcol_is_unsigned(ps_type t);
/* Largest code that fits w bits. */
uint64_t tcol_width_max(uint32_t w);
/* Smallest width holding v. */
uint32_t tcol_bits(uint64_t v);

/* Packs n codes of w bits into data, the format's bit stream (code i at
 * stream bits [i*w, (i+1)*w), LSB first): ORed into data's ceil(n*w/8)
 * bytes, which the caller zeroes. */
void tcol_pack(uint8_t *data, uint64_t n, uint32_t w, const uint64_t *codes);
/* Code i of c, read from its data bit by bit (LSB first). */
uint64_t tcol_code(const tcol *c, uint64_t i);
/* The description of a FOR column of n codes of `width` bits (data_size;
 * validity_size when with_validity) whose data and validity pointers the
 * caller sets, or leaves NULL for a column over device buffers. */
ps_for_desc tcol_for_desc(ps_type type, uint64_t n, uint32_t width, uint32_t scale, ps_reference ref,
                          int with_validity);

/* Builds a FOR column from codes (packed here, LSB first). validity is copied
 * (may be NULL). If garbage is non-NULL, the unused bits of the last data byte
 * are filled from it. */
tcol *tcol_for(ps_type type, uint64_t n, uint32_t width, uint32_t scale, ps_reference ref,
               const uint64_t *codes, const uint8_t *validity, th_rng *garbage);
/* Builds a dictionary column: dictionary strings (copied), sorted flag, 64-bit
 * offsets or 32-bit, unsigned code type, width, reference M and codes. */
tcol *tcol_dict(const tstrs *dict, int sorted_flag, int use64, ps_type code_type, uint64_t n,
                uint32_t width, uint64_t m, const uint64_t *codes, const uint8_t *validity,
                th_rng *garbage);
void tcol_free(tcol *c);

/* Creates the column in a context through the public API. */
ps_status tcol_create(ps_context *ctx, const tcol *c, ps_column **out);
/* The dictionary description of a string tcol (pointing into it). */
void tcol_dict_desc(const tcol *c, ps_dict_desc *dd);

/* Random FOR column of a numeric type at width w (floats get a random scale).
 * Non-null rows always hold in-range codes; null rows sometimes hold garbage
 * codes of the full width (the library must not read them as corrupt). */
tcol *tcol_random_for(th_rng *r, ps_type type, uint64_t n, uint32_t w, int null_mode);
/* A FOR column of `type` whose values are src's values (numeric src), with
 * some perturbed by one unit, re-encoded with its own reference and a random
 * width that holds them; new random nulls. */
tcol *tcol_derived(th_rng *r, tcol *src, ps_type type, int null_mode);

/* Random dictionary strings (unique when unique != 0); characters from a
 * small alphabet with %, _, escapes, multi-byte UTF-8 and a few invalid bytes. */
void tcol_random_strings(th_rng *r, size_t count, int unique, tstrs *out);
/* Random dictionary column; d entries; sorted or unsorted dictionary (built
 * here; the unsorted one may hold duplicates); codes at width w. */
tcol *tcol_random_dict(th_rng *r, uint64_t n, uint32_t w, size_t d, int sorted, int null_mode);
/* A dictionary column over the same n as src: same_dict -> an identical copy of
 * src's dictionary; else another dictionary that shares about half of its
 * strings. */
tcol *tcol_random_dict_partner(th_rng *r, const tcol *src, int same_dict, int null_mode);

/* Shapes of a column's codes, for zone maps to decide. */
enum { TSHAPE_SORTED, TSHAPE_CLUSTERED, TSHAPE_CONSTANT, TSHAPE_ALL_NULL, TSHAPE_RANDOM, TSHAPE_COUNT };
/* Reshapes c's codes in place: the valid rows' codes sorted, sorted then
 * shuffled within windows (drawn from r), all equal, or the rows made null;
 * TSHAPE_RANDOM leaves them. Null rows keep whatever code they hold. */
void tcol_reshape(th_rng *r, tcol *c, int shape);

/* Short description "int8 w=7 M=-3 scale=0 n=1000 nulls" into buf. */
const char *tcol_describe(const tcol *c, char *buf, size_t size);

#endif /* PS_TEST_TCOL_H */
