/* Arrow C Data Interface import: ArrowSchema + ArrowArray (or a stream of
 * record batches) validated in full, then encoded into packscan columns.
 * Values are first gathered into plain arrays (slices and validity offsets
 * resolved, batches concatenated) and handed to the host encoders, so that
 * the packed format is made in exactly one place. A dictionary array of one
 * batch keeps its dictionary: sorted, de-duplicated, codes remapped. */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "arrow_internal.h"

void ps_arrow_import_options_init(ps_arrow_import_options *opts) {
  if (!opts) return;
  memset(opts, 0, sizeof *opts);
  opts->struct_size = sizeof *opts;
  opts->float_scale = -1;
}

/* ---- formats -------------------------------------------------------------- */

typedef struct col_spec {
  ps_arrow_kind kind;
  ps_type type;        /* packscan logical type (plain values gathered in it) */
  uint32_t arrow_size; /* bytes of one Arrow value (fixed-width kinds) */
  uint32_t scale, precision;
  ps_time_unit unit;
  const char *tz; /* into the schema's format string */
  /* dictionary: the index type and the dictionary's string kind */
  uint32_t index_size;
  int index_signed;
  ps_arrow_kind value_kind;
} col_spec;

static bool parse_uint(const char **p, uint32_t *out) {
  const char *s = *p;
  uint64_t v = 0;
  if (*s < '0' || *s > '9') return false;
  while (*s >= '0' && *s <= '9') {
    v = v * 10 + (uint64_t)(*s++ - '0');
    if (v > 100000) return false;
  }
  *p = s;
  *out = (uint32_t)v;
  return true;
}

/* The string kinds a dictionary may hold and a plain string column may be. */
static bool string_kind_of(const char *f, ps_arrow_kind *kind) {
  if (!strcmp(f, "u"))
    *kind = PS_ARROW_UTF8;
  else if (!strcmp(f, "U"))
    *kind = PS_ARROW_LARGE_UTF8;
  else if (!strcmp(f, "vu"))
    *kind = PS_ARROW_STRING_VIEW;
  else
    return false;
  return true;
}

static bool integer_format(const char *f, ps_arrow_kind *kind, ps_type *type, uint32_t *size) {
  static const struct {
    char c;
    ps_arrow_kind k;
    ps_type t;
    uint32_t size;
  } ints[] = {{'c', PS_ARROW_INT8, PS_TYPE_INT8, 1},     {'s', PS_ARROW_INT16, PS_TYPE_INT16, 2},
              {'i', PS_ARROW_INT32, PS_TYPE_INT32, 4},   {'l', PS_ARROW_INT64, PS_TYPE_INT64, 8},
              {'C', PS_ARROW_UINT8, PS_TYPE_UINT8, 1},   {'S', PS_ARROW_UINT16, PS_TYPE_UINT16, 2},
              {'I', PS_ARROW_UINT32, PS_TYPE_UINT32, 4}, {'L', PS_ARROW_UINT64, PS_TYPE_UINT64, 8}};
  if (!f[0] || f[1]) return false;
  for (size_t i = 0; i < sizeof ints / sizeof ints[0]; i++)
    if (f[0] == ints[i].c) {
      *kind = ints[i].k;
      *type = ints[i].t;
      *size = ints[i].size;
      return true;
    }
  return false;
}

static ps_status parse_schema(ps_context *ctx, const char *what, const struct ArrowSchema *s, col_spec *c) {
  memset(c, 0, sizeof *c);
  if (!s) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: schema is NULL", what);
  if (!s->release)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: schema.release is NULL (a released schema)", what);
  if (!s->format) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: schema.format is NULL", what);
  const char *f = s->format;
  if (s->dictionary) {
    if (!integer_format(f, &c->kind, &c->type, &c->index_size))
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                          "%s: dictionary index format is \"%s\"; Arrow requires an integer type", what, f);
    c->index_signed = c->type <= PS_TYPE_INT64;
    if (!s->dictionary->release || !s->dictionary->format)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: schema.dictionary is released or has no format", what);
    if (!string_kind_of(s->dictionary->format, &c->value_kind))
      return ps_set_error(ctx, PS_ERR_UNSUPPORTED,
                          "%s: dictionary values of format \"%s\"; packscan takes dictionaries of utf8 (\"u\"), "
                          "large_utf8 (\"U\") or string_view (\"vu\")",
                          what, s->dictionary->format);
    c->kind = PS_ARROW_DICTIONARY;
    c->type = PS_TYPE_STRING;
  } else if (integer_format(f, &c->kind, &c->type, &c->arrow_size)) {
  } else if (!strcmp(f, "f")) {
    c->kind = PS_ARROW_FLOAT32, c->type = PS_TYPE_FLOAT32, c->arrow_size = 4;
  } else if (!strcmp(f, "g")) {
    c->kind = PS_ARROW_FLOAT64, c->type = PS_TYPE_FLOAT64, c->arrow_size = 8;
  } else if (string_kind_of(f, &c->kind)) {
    c->type = PS_TYPE_STRING;
  } else if (!strcmp(f, "tdD")) {
    c->kind = PS_ARROW_DATE32, c->type = PS_TYPE_INT32, c->arrow_size = 4, c->unit = PS_TIME_DAY;
  } else if (!strcmp(f, "tdm")) {
    c->kind = PS_ARROW_DATE64, c->type = PS_TYPE_INT64, c->arrow_size = 8, c->unit = PS_TIME_MILLISECOND;
  } else if (!strncmp(f, "ts", 2) && f[2] && f[3] == ':') {
    static const char units[] = "smun";
    const char *u = strchr(units, f[2]);
    if (!u)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                          "%s: timestamp format \"%s\" has unit '%c'; expected s, m, u or n", what, f, f[2]);
    c->kind = PS_ARROW_TIMESTAMP, c->type = PS_TYPE_INT64, c->arrow_size = 8;
    c->unit = (ps_time_unit)(PS_TIME_SECOND + (u - units));
    c->tz = f + 4;
  } else if (f[0] == 'd' && f[1] == ':') {
    const char *p = f + 2;
    uint32_t bits = 128;
    if (!parse_uint(&p, &c->precision) || *p++ != ',')
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: decimal format \"%s\" is malformed", what, f);
    if (*p == '-') /* valid Arrow (unscaled * 10^-scale), not a scale packscan holds */
      return ps_set_error(ctx, PS_ERR_UNSUPPORTED,
                          "%s: decimal format \"%s\" has a negative scale; packscan holds 0..18", what, f);
    if (!parse_uint(&p, &c->scale) || (*p && (*p != ',' || (++p, !parse_uint(&p, &bits)) || *p)))
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: decimal format \"%s\" is malformed", what, f);
    /* The precisions Arrow defines for each width (decimal32/64/128/256);
     * a scale above the precision is valid Arrow (decimal(5, 10) holds
     * values below 10^-5) and imports as any other scale. */
    uint32_t max_precision = bits == 32 ? 9 : bits == 64 ? 18 : bits == 128 ? 38 : bits == 256 ? 76 : 0;
    if (!max_precision)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                          "%s: decimal format \"%s\" has bit width %u; Arrow defines 32, 64, 128 and 256", what, f,
                          bits);
    if (c->precision < 1 || c->precision > max_precision)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                          "%s: decimal format \"%s\" has precision %u; decimal%u takes 1..%u", what, f, c->precision,
                          bits, max_precision);
    if (bits != 128)
      return ps_set_error(ctx, PS_ERR_UNSUPPORTED, "%s: decimal%u (format \"%s\"); packscan takes decimal128", what,
                          bits, f);
    if (c->scale > 18)
      return ps_set_error(ctx, PS_ERR_UNSUPPORTED, "%s: decimal scale %u (format \"%s\"); packscan holds 0..18", what,
                          c->scale, f);
    c->kind = PS_ARROW_DECIMAL128, c->type = PS_TYPE_DECIMAL, c->arrow_size = 16;
  } else {
    return ps_set_error(ctx, PS_ERR_UNSUPPORTED,
                        "%s: Arrow format \"%s\" is not a type packscan holds (integers, float32/64, decimal128, "
                        "date32/64, timestamp, utf8, large_utf8, string_view, dictionary of utf8)",
                        what, f);
  }
  if (s->n_children != 0)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: schema.n_children is %" PRId64 "; format \"%s\" has none",
                        what, s->n_children, f);
  return PS_OK;
}

/* ---- array validation ------------------------------------------------------ */

static bool bit_at(const uint8_t *bits, uint64_t i) { return (bits[i >> 3] >> (i & 7)) & 1; }

static bool row_valid(const struct ArrowArray *a, uint64_t i) {
  const uint8_t *v = a->buffers[0];
  return !v || a->null_count == 0 || bit_at(v, (uint64_t)a->offset + i);
}

/* Row i of a column read through its record batch: null where the column is
 * null or where the struct array itself marks the row null (parent, NULL
 * for a column that is not a struct's child), as Arrow's
 * StructArray::Flatten and RecordBatch::FromStructArray read it. */
static bool cell_valid(const struct ArrowArray *a, const struct ArrowArray *parent, uint64_t i) {
  return row_valid(a, i) && (!parent || row_valid(parent, i));
}

static int64_t str_offset(const struct ArrowArray *a, bool large, uint64_t i) {
  uint64_t k = (uint64_t)a->offset + i;
  return large ? ((const int64_t *)a->buffers[1])[k] : (int64_t)((const int32_t *)a->buffers[1])[k];
}

/* String i of a validated utf8 / large_utf8 / string_view array. */
static const uint8_t *string_at(ps_arrow_kind kind, const struct ArrowArray *a, uint64_t i, uint64_t *len) {
  if (kind == PS_ARROW_STRING_VIEW) {
    const uint8_t *view = (const uint8_t *)a->buffers[1] + 16 * ((uint64_t)a->offset + i);
    int32_t l, buf, off;
    memcpy(&l, view, 4);
    memcpy(&buf, view + 8, 4);
    memcpy(&off, view + 12, 4);
    *len = (uint64_t)l;
    return l <= 12 ? view + 4 : (const uint8_t *)a->buffers[2 + buf] + off;
  }
  bool large = kind == PS_ARROW_LARGE_UTF8;
  int64_t s = str_offset(a, large, i), e = str_offset(a, large, i + 1);
  *len = (uint64_t)(e - s);
  /* The data buffer may be NULL when every string is empty (no NULL + 0). */
  return *len ? (const uint8_t *)a->buffers[2] + s : (const uint8_t *)"";
}

/* elem: bytes of one slot of buffers[1], of which the array spans offset +
 * length + extra (offsets: one more than the rows). */
static ps_status check_header(ps_context *ctx, const char *what, const struct ArrowArray *a, int64_t n_buffers,
                              bool variadic, uint32_t elem, uint32_t extra) {
  if (!a) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: array is NULL", what);
  if (!a->release)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: array.release is NULL (a released array)", what);
  if (a->length < 0)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: array.length is %" PRId64 "; expected >= 0", what,
                        a->length);
  if (a->offset < 0)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: array.offset is %" PRId64 "; expected >= 0", what,
                        a->offset);
  if (a->offset > INT64_MAX - a->length)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: array.offset %" PRId64 " + length %" PRId64 " overflows",
                        what, a->offset, a->length);
  /* No buffer reaches past 2^63 bytes: a larger offset + length could only
   * wrap the address arithmetic onto other memory. */
  if ((uint64_t)(a->offset + a->length) + extra > (uint64_t)INT64_MAX / elem)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                        "%s: array.offset %" PRId64 " + length %" PRId64 " of %u-byte slots is past 2^63 bytes", what,
                        a->offset, a->length, elem);
  if (a->null_count < -1 || a->null_count > a->length)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: array.null_count is %" PRId64 "; expected -1..%" PRId64,
                        what, a->null_count, a->length);
  if (variadic ? a->n_buffers < n_buffers : a->n_buffers != n_buffers)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: array.n_buffers is %" PRId64 "; the type needs %s%" PRId64,
                        what, a->n_buffers, variadic ? "at least " : "", n_buffers);
  if (a->n_buffers && !a->buffers)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: array.buffers is NULL with n_buffers %" PRId64, what,
                        a->n_buffers);
  if (a->n_children != 0)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: array.n_children is %" PRId64 "; the type has no children",
                        what, a->n_children);
  if (a->null_count != 0 && a->length > 0 && !a->buffers[0] && a->null_count != -1)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                        "%s: array.null_count is %" PRId64 " but the validity buffer (buffers[0]) is NULL", what,
                        a->null_count);
  /* The data / offsets / views buffer; a string data buffer may be NULL
   * when every string is empty (checked with the offsets). */
  if (a->length > 0 && !a->buffers[1])
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: array.buffers[1] is NULL with length %" PRId64, what,
                        a->length);
  return PS_OK;
}

/* *total += n, refused past 2^63 - 1 bytes (the gathered strings' int64
 * offsets; and no allocation is that large). */
static ps_status add_bytes(ps_context *ctx, const char *what, uint64_t *total, uint64_t n) {
  if (n > (uint64_t)INT64_MAX - *total)
    return ps_set_error(ctx, PS_ERR_LIMIT, "%s: the strings hold more than 2^63 - 1 bytes (%" PRIu64 " + %" PRIu64 ")",
                        what, *total, n);
  *total += n;
  return PS_OK;
}

/* Validates a utf8 / large_utf8 / string_view array; *bytes receives the
 * string bytes its valid rows hold (what materializing them needs). */
static ps_status check_strings(ps_context *ctx, const char *what, ps_arrow_kind kind, const struct ArrowArray *a,
                               const struct ArrowArray *parent, uint64_t *bytes) {
  if (kind == PS_ARROW_STRING_VIEW) {
    PS_TRY(check_header(ctx, what, a, 3, true, 16, 0));
    if (a->dictionary)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: array.dictionary is set on a string_view", what);
    int64_t nv = a->n_buffers - 3; /* variadic data buffers; the last buffer holds their sizes */
    const int64_t *sizes = a->buffers[a->n_buffers - 1];
    if (nv > 0 && !sizes)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: the variadic buffer sizes (buffers[%" PRId64 "]) are NULL",
                          what, a->n_buffers - 1);
    for (int64_t b = 0; b < nv; b++)
      if (sizes[b] < 0 || (sizes[b] > 0 && !a->buffers[2 + b]))
        return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: variadic buffer %" PRId64 " has size %" PRId64 "%s",
                            what, b, sizes[b], sizes[b] < 0 ? "" : " and a NULL pointer");
    const uint8_t *views = a->buffers[1];
    uint64_t total = 0;
    for (uint64_t i = 0; i < (uint64_t)a->length; i++) {
      if (!cell_valid(a, parent, i)) continue;
      const uint8_t *v = views + 16 * ((uint64_t)a->offset + i);
      int32_t len, buf, off;
      memcpy(&len, v, 4);
      memcpy(&buf, v + 8, 4);
      memcpy(&off, v + 12, 4);
      if (len < 0)
        return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: view of row %" PRIu64 " has length %d", what, i, len);
      if (len > 12 && (buf < 0 || buf >= nv || off < 0 || (int64_t)off + len > sizes[buf]))
        return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                            "%s: view of row %" PRIu64 " (length %d) points at buffer %d offset %d; there are %" PRId64
                            " data buffers%s",
                            what, i, len, buf, off, nv, buf >= 0 && buf < nv ? " and it runs past its size" : "");
      PS_TRY(add_bytes(ctx, what, &total, (uint64_t)len));
    }
    *bytes = total;
    return PS_OK;
  }
  bool large = kind == PS_ARROW_LARGE_UTF8;
  PS_TRY(check_header(ctx, what, a, 3, false, large ? 8 : 4, 1));
  if (a->dictionary)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: array.dictionary is set on a string array", what);
  *bytes = 0;
  if (a->length == 0) return PS_OK;
  int64_t prev = str_offset(a, large, 0);
  if (prev < 0)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: offsets[%" PRId64 "] is %" PRId64 "; expected >= 0", what,
                        a->offset, prev);
  const int64_t first = prev;
  for (uint64_t i = 1; i <= (uint64_t)a->length; i++) {
    int64_t o = str_offset(a, large, i);
    if (o < prev)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                          "%s: offsets[%" PRIu64 "] is %" PRId64 ", below offsets[%" PRIu64 "] = %" PRId64
                          ": offsets must not decrease",
                          what, (uint64_t)a->offset + i, o, (uint64_t)a->offset + i - 1, prev);
    prev = o;
  }
  if (prev > first && !a->buffers[2])
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                        "%s: the data buffer (buffers[2]) is NULL but offsets span %" PRId64 " bytes", what,
                        prev - first);
  *bytes = (uint64_t)(prev - first);
  return PS_OK;
}

static int64_t index_at(const col_spec *c, const struct ArrowArray *a, uint64_t i) {
  const uint8_t *p = (const uint8_t *)a->buffers[1] + ((uint64_t)a->offset + i) * c->index_size;
  switch (c->index_size) {
    case 1:
      return c->index_signed ? (int64_t) * (const int8_t *)p : (int64_t)*p;
    case 2: {
      int16_t s;
      uint16_t u;
      memcpy(&s, p, 2);
      memcpy(&u, p, 2);
      return c->index_signed ? s : u;
    }
    case 4: {
      int32_t s;
      uint32_t u;
      memcpy(&s, p, 4);
      memcpy(&u, p, 4);
      return c->index_signed ? s : (int64_t)u;
    }
    default: {
      int64_t s;
      uint64_t u;
      memcpy(&s, p, 8);
      memcpy(&u, p, 8);
      return c->index_signed ? s : (u > INT64_MAX ? -1 : (int64_t)u);
    }
  }
}

/* Unscaled value of a decimal128 slot, if it fits int64. */
static bool decimal_at(const struct ArrowArray *a, uint64_t i, int64_t *out) {
  const uint8_t *p = (const uint8_t *)a->buffers[1] + 16 * ((uint64_t)a->offset + i);
  uint64_t lo;
  int64_t hi;
  memcpy(&lo, p, 8);
  memcpy(&hi, p + 8, 8);
  if (!((hi == 0 && lo <= INT64_MAX) || (hi == -1 && lo > INT64_MAX))) return false;
  *out = (int64_t)lo;
  return true;
}

/* Validates one column's array against its spec; *str_bytes: string bytes
 * the column needs when materialized. */
static ps_status check_array(ps_context *ctx, const char *what, const col_spec *c, const struct ArrowArray *a,
                             const struct ArrowArray *parent, uint64_t *str_bytes) {
  *str_bytes = 0;
  if (c->kind == PS_ARROW_DICTIONARY) {
    PS_TRY(check_header(ctx, what, a, 2, false, c->index_size, 0));
    if (!a->dictionary)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: array.dictionary is NULL for a dictionary type", what);
    char dwhat[320];
    snprintf(dwhat, sizeof dwhat, "%.290s (dictionary)", what);
    uint64_t dbytes;
    PS_TRY(check_strings(ctx, dwhat, c->value_kind, a->dictionary, NULL, &dbytes));
    const struct ArrowArray *d = a->dictionary;
    for (uint64_t i = 0; i < (uint64_t)a->length; i++) {
      if (!cell_valid(a, parent, i)) continue;
      int64_t k = index_at(c, a, i);
      if (k < 0 || k >= d->length)
        return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                            "%s: index of row %" PRIu64 " is %" PRId64 "; the dictionary has %" PRId64 " entries", what,
                            i, k, d->length);
      uint64_t len = 0;
      if (row_valid(d, (uint64_t)k)) string_at(c->value_kind, d, (uint64_t)k, &len);
      PS_TRY(add_bytes(ctx, what, str_bytes, len));
    }
    return PS_OK;
  }
  if (c->type == PS_TYPE_STRING) return check_strings(ctx, what, c->kind, a, parent, str_bytes);
  PS_TRY(check_header(ctx, what, a, 2, false, c->arrow_size, 0));
  if (a->dictionary)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: array.dictionary is set on a %s array", what,
                        c->kind == PS_ARROW_DECIMAL128 ? "decimal" : "numeric");
  if (c->kind == PS_ARROW_DECIMAL128)
    for (uint64_t i = 0; i < (uint64_t)a->length; i++) {
      int64_t v;
      if (cell_valid(a, parent, i) && !decimal_at(a, i, &v)) {
        const uint8_t *p = (const uint8_t *)a->buffers[1] + 16 * ((uint64_t)a->offset + i);
        uint64_t lo;
        int64_t hi;
        memcpy(&lo, p, 8);
        memcpy(&hi, p + 8, 8);
        return ps_set_error(ctx, PS_ERR_NOT_REPRESENTABLE,
                            "%s: decimal of row %" PRIu64 " (unscaled 128-bit hi %" PRId64 " lo %" PRIu64
                            ") does not fit the 64-bit unscaled integers packscan holds",
                            what, i, hi, lo);
      }
    }
  return PS_OK;
}

/* ---- gathering into plain values -------------------------------------------- */

typedef struct plain_acc {
  uint8_t *values;  /* rows * ps_type_size(type) */
  int64_t *offsets; /* strings: rows + 1 */
  uint8_t *bytes;
  uint8_t *validity;
  uint64_t rows, bytes_used;
  bool nulls;
} plain_acc;

static void set_valid(plain_acc *acc, uint64_t row, bool v) {
  if (v)
    acc->validity[row >> 3] |= (uint8_t)(1u << (row & 7));
  else
    acc->nulls = true;
}

static void append_string(plain_acc *acc, const uint8_t *p, uint64_t len) {
  if (len) memcpy(acc->bytes + acc->bytes_used, p, (size_t)len);
  acc->bytes_used += len;
}

/* Appends the valid strings of a string array (nulls as empty strings). */
static void append_strings(plain_acc *acc, ps_arrow_kind kind, const struct ArrowArray *a,
                           const struct ArrowArray *parent) {
  for (uint64_t i = 0; i < (uint64_t)a->length; i++) {
    bool v = cell_valid(a, parent, i);
    set_valid(acc, acc->rows, v);
    if (v) {
      uint64_t len;
      const uint8_t *p = string_at(kind, a, i, &len);
      append_string(acc, p, len);
    }
    acc->offsets[++acc->rows] = (int64_t)acc->bytes_used;
  }
}

static void append_column(plain_acc *acc, const col_spec *c, const struct ArrowArray *a,
                          const struct ArrowArray *parent) {
  if (c->kind == PS_ARROW_DICTIONARY) {
    const struct ArrowArray *d = a->dictionary;
    for (uint64_t i = 0; i < (uint64_t)a->length; i++) {
      bool v = cell_valid(a, parent, i);
      int64_t k = v ? index_at(c, a, i) : 0;
      v = v && row_valid(d, (uint64_t)k); /* a null dictionary entry is a null row */
      set_valid(acc, acc->rows, v);
      if (v) {
        uint64_t len;
        const uint8_t *p = string_at(c->value_kind, d, (uint64_t)k, &len);
        append_string(acc, p, len);
      }
      acc->offsets[++acc->rows] = (int64_t)acc->bytes_used;
    }
    return;
  }
  if (c->type == PS_TYPE_STRING) {
    append_strings(acc, c->kind, a, parent);
    return;
  }
  size_t vs = ps_type_size(c->type);
  for (uint64_t i = 0; i < (uint64_t)a->length; i++) set_valid(acc, acc->rows + i, cell_valid(a, parent, i));
  uint8_t *dst = acc->values + acc->rows * vs;
  if (c->kind == PS_ARROW_DECIMAL128) {
    for (uint64_t i = 0; i < (uint64_t)a->length; i++) {
      int64_t v = 0;
      if (cell_valid(a, parent, i)) decimal_at(a, i, &v);
      memcpy(dst + i * 8, &v, 8);
    }
  } else if (a->length) {
    memcpy(dst, (const uint8_t *)a->buffers[1] + (uint64_t)a->offset * vs, (size_t)a->length * vs);
  }
  acc->rows += (uint64_t)a->length;
}

/* ---- building columns ------------------------------------------------------ */

/* An encoder's message without its leading "PS_ERR_...: " (the context's
 * message gets its own). */
static const char *without_status(const char *m) {
  const char *colon = strncmp(m, "PS_", 3) == 0 ? strstr(m, ": ") : NULL;
  return colon ? colon + 2 : m;
}

typedef struct str_entry {
  const uint8_t *p;
  uint64_t len;
  uint64_t index;
} str_entry;

static int entry_cmp(const void *x, const void *y) {
  const str_entry *a = x, *b = y;
  int c = ps_bytes_cmp(a->p, (size_t)a->len, b->p, (size_t)b->len);
  return c ? c : (a->index > b->index) - (a->index < b->index);
}

/* A dictionary array of one batch: its dictionary sorted and de-duplicated,
 * the codes remapped (identity when it was sorted already). */
static ps_status build_dictionary(ps_context *ctx, const char *what, const col_spec *c, const struct ArrowArray *a,
                                  const struct ArrowArray *parent, ps_column **out) {
  const struct ArrowArray *d = a->dictionary;
  uint64_t dn = (uint64_t)d->length, n = (uint64_t)a->length;
  str_entry *ent = ps_calloc_ctx(ctx, (size_t)(dn ? dn : 1), sizeof *ent);
  uint32_t *map = ps_calloc_ctx(ctx, (size_t)(dn ? dn : 1), sizeof *map);
  uint32_t *codes = ps_calloc_ctx(ctx, (size_t)(n ? n : 1), sizeof *codes);
  int64_t *offs = ps_calloc_ctx(ctx, (size_t)dn + 1, sizeof *offs);
  uint8_t *valid = ps_calloc_ctx(ctx, (size_t)(n / 8 + 1), 1);
  ps_status st = PS_OK;
  if (!ent || !map || !codes || !offs || !valid) {
    st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "%s: remapping a dictionary of %" PRIu64 " entries", what, dn);
    goto done;
  }
  if (dn > UINT32_MAX) {
    st = ps_set_error(ctx, PS_ERR_LIMIT, "%s: a dictionary of %" PRIu64 " entries; at most 2^32 - 1", what, dn);
    goto done;
  }
  uint64_t m = 0;
  bool sorted = true;
  for (uint64_t k = 0; k < dn; k++) {
    if (!row_valid(d, k)) continue; /* null entries: rows pointing at them become null */
    uint64_t len;
    const uint8_t *p = string_at(c->value_kind, d, k, &len);
    ent[m] = (str_entry){p, len, k};
    if (m && ps_bytes_cmp(ent[m - 1].p, (size_t)ent[m - 1].len, ent[m].p, (size_t)ent[m].len) >= 0) sorted = false;
    m++;
  }
  if (!sorted) qsort(ent, (size_t)m, sizeof *ent, entry_cmp);
  uint64_t u = 0, total = 0;
  for (uint64_t j = 0; j < m; j++) {
    if (u == 0 || ps_bytes_cmp(ent[u - 1].p, (size_t)ent[u - 1].len, ent[j].p, (size_t)ent[j].len) != 0) {
      ent[u] = ent[j];
      total += ent[j].len;
      u++;
    }
    map[ent[j].index] = (uint32_t)(u - 1);
  }
  uint8_t *bytes = ps_host_alloc(ctx, (size_t)(total ? total : 1));
  if (!bytes) {
    st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "%s: %" PRIu64 " dictionary bytes", what, total);
    goto done;
  }
  for (uint64_t j = 0; j < u; j++) {
    if (ent[j].len) memcpy(bytes + offs[j], ent[j].p, (size_t)ent[j].len);
    offs[j + 1] = offs[j] + (int64_t)ent[j].len;
  }
  bool nulls = false;
  for (uint64_t i = 0; i < n; i++) {
    bool v = cell_valid(a, parent, i);
    int64_t k = v ? index_at(c, a, i) : 0;
    v = v && row_valid(d, (uint64_t)k);
    if (v) {
      valid[i >> 3] |= (uint8_t)(1u << (i & 7));
      codes[i] = map[k];
    } else {
      nulls = true;
    }
  }
  ps_plain plain = {PS_TYPE_UINT32, codes, n, nulls ? valid : NULL};
  ps_encoded enc;
  char msg[512];
  st = ps_encode_for(&plain, 0, 0, 0, &ctx->alloc, msg, sizeof msg, &enc);
  if (st != PS_OK) {
    ps_set_error(ctx, st, "%s: %s", what, without_status(msg));
  } else {
    ps_dict_desc dd;
    ps_dict_desc_init(&dd);
    dd.count = u;
    dd.offsets64 = offs;
    dd.bytes = bytes;
    dd.bytes_size = total;
    dd.sorted = 1;
    st = ps_column_create_dict(ctx, &dd, &enc.desc, out);
  }
  ps_encoded_destroy(&enc);
  ps_host_free(ctx, bytes);
done:
  ps_host_free(ctx, ent);
  ps_host_free(ctx, map);
  ps_host_free(ctx, codes);
  ps_host_free(ctx, offs);
  ps_host_free(ctx, valid);
  return st;
}

/* Encodes the gathered plain values of one column. */
static ps_status build_column(ps_context *ctx, const char *what, const col_spec *c, const plain_acc *acc,
                              const ps_arrow_import_options *opts, ps_column **out) {
  char msg[512];
  ps_status st;
  if (c->type == PS_TYPE_STRING) {
    ps_strings s = {acc->rows, NULL, acc->offsets, acc->bytes, acc->nulls ? acc->validity : NULL};
    ps_encoded_dict ed;
    st = ps_encode_dict(&s, &ctx->alloc, msg, sizeof msg, &ed);
    if (st != PS_OK) {
      ps_encoded_dict_destroy(&ed);
      return ps_set_error(ctx, st, "%s: %s", what, without_status(msg));
    }
    st = ps_column_create_dict(ctx, &ed.dict, &ed.codes.desc, out);
    ps_encoded_dict_destroy(&ed);
    return st;
  }
  bool decimal = c->kind == PS_ARROW_DECIMAL128;
  ps_plain plain = {c->type, acc->values, acc->rows, acc->nulls ? acc->validity : NULL};
  /* Decimals: the unscaled int64 values at the type's scale; floats: the option's. */
  int scale = decimal ? (int)c->scale : ps_type_is_float(c->type) ? opts->float_scale : 0;
  ps_encoded enc;
  st = ps_encode(&plain, opts->encoding, 0, scale, opts->nan_as_null, &ctx->alloc, msg, sizeof msg, &enc);
  if (st != PS_OK) {
    ps_encoded_destroy(&enc);
    return ps_set_error(ctx, st, "%s: %s", what, without_status(msg));
  }
  st = ps_column_create_for(ctx, &enc.desc, out);
  ps_encoded_destroy(&enc);
  return st;
}

/* ---- tables ------------------------------------------------------------------ */

void ps_arrow_table_destroy(ps_arrow_table *t) {
  if (!t) return;
  ps_context *ctx = t->ctx;
  for (size_t i = 0; i < t->ncols; i++) {
    ps_column_destroy(t->cols[i]);
    ps_host_free(ctx, (void *)t->fields[i].name);
    ps_host_free(ctx, (void *)t->fields[i].format);
    ps_host_free(ctx, (void *)t->fields[i].timezone);
  }
  ps_host_free(ctx, t->cols);
  ps_host_free(ctx, t->fields);
  ps_host_free(ctx, t);
}

size_t ps_arrow_table_columns(const ps_arrow_table *t) { return t ? t->ncols : 0; }
uint64_t ps_arrow_table_rows(const ps_arrow_table *t) { return t ? t->rows : 0; }
ps_column *ps_arrow_table_column(const ps_arrow_table *t, size_t i) { return t && i < t->ncols ? t->cols[i] : NULL; }
const ps_arrow_field *ps_arrow_table_field(const ps_arrow_table *t, size_t i) {
  return t && i < t->ncols ? &t->fields[i] : NULL;
}
int64_t ps_arrow_table_find(const ps_arrow_table *t, const char *name) {
  if (!t || !name) return -1;
  for (size_t i = 0; i < t->ncols; i++)
    if (!strcmp(t->fields[i].name, name)) return (int64_t)i;
  return -1;
}

static char *dup_str(ps_context *ctx, const char *s) {
  size_t n = s ? strlen(s) : 0;
  char *p = ps_host_alloc(ctx, n + 1);
  if (p) {
    if (n) memcpy(p, s, n);
    p[n] = 0;
  }
  return p;
}

/* Column i of batch b: a struct's child seen through the struct's slice
 * (offsets checked by import_job_run not to overflow). *parent: the struct
 * when its validity marks rows null (they are null in every column), else
 * NULL. */
static const struct ArrowArray *column_array(const struct ArrowArray *batch, bool is_struct, size_t i,
                                             struct ArrowArray *view, const struct ArrowArray **parent) {
  *parent = NULL;
  if (!is_struct) return batch;
  if (batch->null_count != 0 && batch->buffers[0]) *parent = batch;
  const struct ArrowArray *ch = batch->children[i];
  if (batch->offset == 0 && batch->length == ch->length) return ch;
  *view = *ch;
  view->offset = ch->offset + batch->offset;
  view->length = batch->length;
  if (view->null_count != 0) view->null_count = -1;
  return view;
}

/* The batches of one import: a schema (struct or single column) and arrays. */
typedef struct import_job {
  const struct ArrowSchema *schema;
  const struct ArrowArray *const *batches;
  size_t nbatches;
} import_job;

static ps_status import_job_run(ps_context *ctx, const import_job *job, const ps_arrow_import_options *opts,
                                ps_arrow_table **out) {
  const struct ArrowSchema *s = job->schema;
  if (!s) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "schema is NULL");
  if (!s->release) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "schema.release is NULL (a released schema)");
  if (!s->format) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "schema.format is NULL");
  bool is_struct = !strcmp(s->format, "+s");
  size_t ncols = 1;
  if (is_struct) {
    if (s->n_children < 0 || (s->n_children > 0 && !s->children))
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "schema.n_children is %" PRId64 " with children %s",
                          s->n_children, s->children ? "set" : "NULL");
    ncols = (size_t)s->n_children;
  }
  /* Every batch's struct level first. */
  uint64_t rows = 0;
  for (size_t b = 0; b < job->nbatches; b++) {
    const struct ArrowArray *a = job->batches[b];
    if (!a) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "batch %zu: array is NULL", b);
    if (!a->release)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "batch %zu: array.release is NULL (a released array)", b);
    if (is_struct) {
      if (a->n_children != (int64_t)ncols)
        return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                            "batch %zu: array.n_children is %" PRId64 "; the schema has %zu fields", b, a->n_children,
                            ncols);
      if (ncols && !a->children)
        return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "batch %zu: array.children is NULL", b);
      if (a->n_buffers != 1)
        return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "batch %zu: array.n_buffers is %" PRId64 "; a struct has 1",
                            b, a->n_buffers);
      if (a->length < 0 || a->offset < 0)
        return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "batch %zu: array.length %" PRId64 " / offset %" PRId64, b,
                            a->length, a->offset);
      if (a->offset > INT64_MAX - a->length)
        return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                            "batch %zu: array.offset %" PRId64 " + length %" PRId64 " overflows", b, a->offset,
                            a->length);
      if (!a->buffers)
        return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "batch %zu: array.buffers is NULL with n_buffers 1", b);
      if (a->null_count < -1 || a->null_count > a->length)
        return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                            "batch %zu: array.null_count is %" PRId64 "; expected -1..%" PRId64, b, a->null_count,
                            a->length);
      if (a->null_count > 0 && a->length > 0 && !a->buffers[0])
        return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                            "batch %zu: array.null_count is %" PRId64 " but the validity buffer (buffers[0]) is NULL",
                            b, a->null_count);
      for (size_t i = 0; i < ncols; i++) {
        const struct ArrowArray *ch = a->children[i];
        if (!ch) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "batch %zu: array.children[%zu] is NULL", b, i);
        if (ch->length < a->offset + a->length)
          return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                              "batch %zu: children[%zu].length is %" PRId64 "; the struct needs offset %" PRId64
                              " + length %" PRId64,
                              b, i, ch->length, a->offset, a->length);
        /* The child is read at its own offset plus the struct's. */
        if (ch->offset < 0 || ch->offset > INT64_MAX - a->offset - a->length)
          return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                              "batch %zu: children[%zu].offset is %" PRId64 "; with the struct's offset %" PRId64
                              " + length %" PRId64 " expected 0..%" PRId64,
                              b, i, ch->offset, a->offset, a->length, INT64_MAX - a->offset - a->length);
      }
    }
    /* A negative length is named with its column below; no total wraps. */
    if (a->length > 0 && (uint64_t)a->length > (uint64_t)INT64_MAX - rows)
      return ps_set_error(ctx, PS_ERR_LIMIT,
                          "batch %zu: array.length %" PRId64 " brings the rows to more than 2^63 - 1 (%" PRIu64
                          " before it)",
                          b, a->length, rows);
    if (a->length > 0) rows += (uint64_t)a->length;
  }

  ps_arrow_table *t = ps_calloc_ctx(ctx, 1, sizeof *t);
  if (t) {
    t->ctx = ctx;
    t->cols = ps_calloc_ctx(ctx, ncols ? ncols : 1, sizeof *t->cols);
    t->fields = ps_calloc_ctx(ctx, ncols ? ncols : 1, sizeof *t->fields);
  }
  if (!t || !t->cols || !t->fields) {
    ps_arrow_table_destroy(t);
    return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a table of %zu columns", ncols);
  }
  t->ctx = ctx;
  t->rows = rows;
  ps_status st = PS_OK;
  for (size_t i = 0; i < ncols && st == PS_OK; i++) {
    const struct ArrowSchema *cs = is_struct ? s->children[i] : s;
    char what[256];
    if (!cs) {
      st = ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "schema.children[%zu] is NULL", i);
      break;
    }
    snprintf(what, sizeof what, "column %zu (\"%.100s\")", i, cs->name ? cs->name : "");
    col_spec c;
    st = parse_schema(ctx, what, cs, &c);
    uint64_t str_total = 0;
    for (size_t b = 0; b < job->nbatches && st == PS_OK; b++) {
      struct ArrowArray view;
      const struct ArrowArray *parent;
      const struct ArrowArray *a = column_array(job->batches[b], is_struct, i, &view, &parent);
      char bwhat[300];
      if (job->nbatches > 1)
        snprintf(bwhat, sizeof bwhat, "%s, batch %zu", what, b);
      else
        snprintf(bwhat, sizeof bwhat, "%s", what);
      uint64_t sb = 0;
      st = check_array(ctx, bwhat, &c, a, parent, &sb);
      if (st == PS_OK) st = add_bytes(ctx, what, &str_total, sb);
    }
    if (st != PS_OK) break;
    ps_arrow_field *f = &t->fields[i];
    f->name = dup_str(ctx, cs->name);
    f->format = dup_str(ctx, cs->format);
    f->timezone = dup_str(ctx, c.tz);
    f->kind = c.kind;
    f->type = c.type;
    f->scale = c.scale;
    f->precision = c.precision;
    f->unit = c.unit;
    if (!f->name || !f->format || !f->timezone) {
      st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "%s: copying its name", what);
      break;
    }
    if (c.kind == PS_ARROW_DICTIONARY && job->nbatches == 1) {
      struct ArrowArray view;
      const struct ArrowArray *parent;
      const struct ArrowArray *a = column_array(job->batches[0], is_struct, i, &view, &parent);
      st = build_dictionary(ctx, what, &c, a, parent, &t->cols[i]);
      continue;
    }
    /* Gather, then encode. */
    plain_acc acc;
    memset(&acc, 0, sizeof acc);
    size_t vs = c.type == PS_TYPE_STRING ? 0 : ps_type_size(c.type);
    acc.validity = ps_calloc_ctx(ctx, (size_t)(rows / 8 + 1), 1);
    if (vs)
      acc.values = ps_calloc_ctx(ctx, (size_t)(rows ? rows : 1), vs);
    else {
      acc.offsets = ps_calloc_ctx(ctx, (size_t)rows + 1, sizeof *acc.offsets);
      acc.bytes = ps_host_alloc(ctx, (size_t)(str_total ? str_total : 1));
    }
    if (!acc.validity || (vs && !acc.values) || (!vs && (!acc.offsets || !acc.bytes))) {
      st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "%s: gathering %" PRIu64 " rows", what, rows);
    } else {
      for (size_t b = 0; b < job->nbatches; b++) {
        struct ArrowArray view;
        const struct ArrowArray *parent;
        const struct ArrowArray *a = column_array(job->batches[b], is_struct, i, &view, &parent);
        append_column(&acc, &c, a, parent);
      }
      st = build_column(ctx, what, &c, &acc, opts, &t->cols[i]);
    }
    ps_host_free(ctx, acc.validity);
    ps_host_free(ctx, acc.values);
    ps_host_free(ctx, acc.offsets);
    ps_host_free(ctx, acc.bytes);
  }
  t->ncols = ncols;
  if (st != PS_OK) {
    char keep[PS_ERRMSG_SIZE];
    snprintf(keep, sizeof keep, "%s", ctx->last_error);
    ps_arrow_table_destroy(t);
    snprintf(ctx->last_error, sizeof ctx->last_error, "%s", keep);
    return st;
  }
  *out = t;
  return PS_OK;
}

static ps_status check_opts(ps_context *ctx, const ps_arrow_import_options *opts, ps_arrow_import_options *o) {
  ps_arrow_import_options_init(o);
  if (!opts) return PS_OK;
  const size_t v0 = offsetof(ps_arrow_import_options, nan_as_null) + sizeof(int); /* before `encoding` */
  if (opts->struct_size < v0 || opts->struct_size > sizeof *opts)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                        "opts.struct_size is %u; expected %u (call ps_arrow_import_options_init)", opts->struct_size,
                        (unsigned)sizeof *opts);
  if (opts->float_scale > 18)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "opts.float_scale is %d; expected < 0 (find) or 0..18",
                        opts->float_scale);
  memcpy(o, opts, opts->struct_size);
  o->struct_size = sizeof *o;
  if (o->encoding != PS_ENCODING_FOR && o->encoding != PS_ENCODING_DELTA && o->encoding != PS_ENCODING_AUTO)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                        "opts.encoding is %d; expected PS_ENCODING_FOR (0), PS_ENCODING_DELTA (1) or "
                        "PS_ENCODING_AUTO (-1)",
                        o->encoding);
  return PS_OK;
}

ps_status ps_arrow_import(ps_context *ctx, const struct ArrowSchema *schema, const struct ArrowArray *array,
                          const ps_arrow_import_options *opts, ps_arrow_table **out) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!out) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "out is NULL");
  if (!array) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "array is NULL");
  ps_arrow_import_options o;
  PS_TRY(check_opts(ctx, opts, &o));
  import_job job = {schema, &array, 1};
  return import_job_run(ctx, &job, &o, out);
}

ps_status ps_arrow_import_stream(ps_context *ctx, struct ArrowArrayStream *stream, const ps_arrow_import_options *opts,
                                 ps_arrow_table **out) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!out) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "out is NULL");
  if (!stream) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "stream is NULL");
  if (!stream->release || !stream->get_schema || !stream->get_next)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "stream.%s is NULL%s",
                        !stream->release      ? "release"
                        : !stream->get_schema ? "get_schema"
                                              : "get_next",
                        !stream->release ? " (a released stream)" : "");
  ps_arrow_import_options o;
  PS_TRY(check_opts(ctx, opts, &o));
  struct ArrowSchema schema;
  memset(&schema, 0, sizeof schema);
  int rc = stream->get_schema(stream, &schema);
  if (rc != 0) {
    const char *m = stream->get_last_error ? stream->get_last_error(stream) : NULL;
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "stream.get_schema failed (errno %d): %s", rc, m ? m : "");
  }
  struct ArrowArray **batches = NULL;
  size_t nb = 0, cap = 0;
  ps_status st = PS_OK;
  for (;;) {
    if (nb == cap) {
      size_t ncap = cap ? cap * 2 : 16;
      struct ArrowArray **nbp = realloc(batches, ncap * sizeof *nbp);
      if (!nbp) {
        st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "reading batch %zu of the stream", nb);
        break;
      }
      batches = nbp;
      cap = ncap;
    }
    struct ArrowArray *a = calloc(1, sizeof *a);
    if (!a) {
      st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "reading batch %zu of the stream", nb);
      break;
    }
    rc = stream->get_next(stream, a);
    if (rc != 0) {
      free(a);
      const char *m = stream->get_last_error ? stream->get_last_error(stream) : NULL;
      st = ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "stream.get_next failed at batch %zu (errno %d): %s", nb, rc,
                        m ? m : "");
      break;
    }
    if (!a->release) { /* end of stream */
      free(a);
      break;
    }
    batches[nb++] = a;
  }
  if (st == PS_OK) {
    import_job job = {&schema, (const struct ArrowArray *const *)batches, nb};
    st = import_job_run(ctx, &job, &o, out);
  }
  for (size_t b = 0; b < nb; b++) {
    if (batches[b]->release) batches[b]->release(batches[b]);
    free(batches[b]);
  }
  free(batches);
  if (schema.release) schema.release(&schema);
  return st;
}

/* ---- tables from packed columns ------------------------------------------------ */

/* The packscan type a fixed-width kind is held as. */
static ps_type kind_type(ps_arrow_kind k) {
  static const ps_type types[] = {0,
                                  PS_TYPE_INT8,
                                  PS_TYPE_INT16,
                                  PS_TYPE_INT32,
                                  PS_TYPE_INT64,
                                  PS_TYPE_UINT8,
                                  PS_TYPE_UINT16,
                                  PS_TYPE_UINT32,
                                  PS_TYPE_UINT64,
                                  PS_TYPE_FLOAT32,
                                  PS_TYPE_FLOAT64,
                                  PS_TYPE_DECIMAL,
                                  PS_TYPE_INT32,
                                  PS_TYPE_INT64,
                                  PS_TYPE_INT64};
  return k >= PS_ARROW_INT8 && k <= PS_ARROW_TIMESTAMP ? types[k] : PS_TYPE_STRING;
}

/* ps_arrow_table_create, and with host: ps_arrow_table_create_host. */
static ps_status table_create(ps_context *ctx, size_t ncols, const ps_arrow_field *fields, const ps_for_desc *descs,
                              const ps_dict_desc *dicts, bool host, ps_arrow_table **out) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!out) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "out is NULL");
  if (ncols && (!fields || !descs))
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s is NULL with %zu columns", fields ? "descs" : "fields",
                        ncols);
  for (size_t i = 0; i < ncols; i++) {
    const ps_arrow_field *f = &fields[i];
    if (!f->name || !f->format)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "fields[%zu].%s is NULL", i, f->name ? "format" : "name");
    if (f->kind < PS_ARROW_INT8 || f->kind > PS_ARROW_DICTIONARY)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "fields[%zu].kind is %d; not a ps_arrow_kind", i, (int)f->kind);
    bool str = f->kind >= PS_ARROW_UTF8;
    if (str != (f->type == PS_TYPE_STRING) || (!str && kind_type(f->kind) != descs[i].type))
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                          "fields[%zu] (\"%s\"): kind %d with type %d and descs[%zu].type %d do not agree", i, f->name,
                          (int)f->kind, (int)f->type, i, (int)descs[i].type);
    if (str && !dicts)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "dicts is NULL but fields[%zu] is a string column", i);
    if (descs[i].n != descs[0].n)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "descs[%zu].n is %" PRIu64 "; descs[0].n is %" PRIu64, i,
                          descs[i].n, descs[0].n);
  }
  ps_arrow_table *t = ps_calloc_ctx(ctx, 1, sizeof *t);
  if (t) {
    t->ctx = ctx;
    t->cols = ps_calloc_ctx(ctx, ncols ? ncols : 1, sizeof *t->cols);
    t->fields = ps_calloc_ctx(ctx, ncols ? ncols : 1, sizeof *t->fields);
  }
  if (!t || !t->cols || !t->fields) {
    ps_arrow_table_destroy(t);
    return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a table of %zu columns", ncols);
  }
  t->ncols = ncols;
  t->rows = ncols ? descs[0].n : 0;
  ps_status st = PS_OK;
  for (size_t i = 0; i < ncols && st == PS_OK; i++) {
    ps_arrow_field *f = &t->fields[i];
    *f = fields[i];
    f->name = dup_str(ctx, fields[i].name);
    f->format = dup_str(ctx, fields[i].format);
    f->timezone = dup_str(ctx, fields[i].timezone);
    if (!f->name || !f->format || !f->timezone) {
      st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "copying fields[%zu]", i);
      break;
    }
    if (f->type == PS_TYPE_STRING)
      st = host ? ps_column_create_dict_host(ctx, &dicts[i], &descs[i], &t->cols[i])
                : ps_column_create_dict(ctx, &dicts[i], &descs[i], &t->cols[i]);
    else if (host)
      st = ps_column_create_for_host(ctx, &descs[i], &t->cols[i]);
    else
      st = ps_column_create_for(ctx, &descs[i], &t->cols[i]);
  }
  if (st != PS_OK) {
    char keep[PS_ERRMSG_SIZE];
    snprintf(keep, sizeof keep, "%s", ctx->last_error);
    ps_arrow_table_destroy(t);
    snprintf(ctx->last_error, sizeof ctx->last_error, "%s", keep);
    return st;
  }
  *out = t;
  return PS_OK;
}

ps_status ps_arrow_table_create(ps_context *ctx, size_t ncols, const ps_arrow_field *fields, const ps_for_desc *descs,
                                const ps_dict_desc *dicts, ps_arrow_table **out) {
  return table_create(ctx, ncols, fields, descs, dicts, false, out);
}

ps_status ps_arrow_table_create_host(ps_context *ctx, size_t ncols, const ps_arrow_field *fields,
                                     const ps_for_desc *descs, const ps_dict_desc *dicts, ps_arrow_table **out) {
  return table_create(ctx, ncols, fields, descs, dicts, true, out);
}
