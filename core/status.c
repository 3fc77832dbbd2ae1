/* Status codes, error messages, versions, type tables and allocation helpers. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"

const char *ps_version_string(void) { return "0.1.0"; }
unsigned ps_version_number(void) { return PS_VERSION_NUMBER; }

const char *ps_status_name(ps_status status) {
  switch (status) {
#define PS_STATUS_NAME_(name, value, text) \
  case PS_##name:                          \
    return "PS_" #name;
    PS_STATUS_MAP(PS_STATUS_NAME_)
#undef PS_STATUS_NAME_
  }
  return "PS_UNKNOWN_STATUS";
}

const char *ps_status_string(ps_status status) {
  switch (status) {
#define PS_STATUS_TEXT_(name, value, text) \
  case PS_##name:                          \
    return text;
    PS_STATUS_MAP(PS_STATUS_TEXT_)
#undef PS_STATUS_TEXT_
  }
  return "unknown status";
}

static void vformat(char *buf, size_t size, ps_status st, const char *fmt, va_list ap) {
  if (!buf || size == 0) return;
  int n = snprintf(buf, size, "%s: ", ps_status_name(st));
  if (n < 0 || (size_t)n >= size) return;
  vsnprintf(buf + n, size - (size_t)n, fmt, ap);
}

ps_status ps_set_error(ps_context *ctx, ps_status st, const char *fmt, ...) {
  if (ctx) {
    va_list ap;
    va_start(ap, fmt);
    vformat(ctx->last_error, sizeof ctx->last_error, st, fmt, ap);
    va_end(ap);
  }
  return st;
}

ps_status ps_backend_error(ps_context *ctx, ps_status status, const char *fmt, ...) {
  if (ctx) {
    va_list ap;
    va_start(ap, fmt);
    vformat(ctx->last_error, sizeof ctx->last_error, status, fmt, ap);
    va_end(ap);
  }
  return status;
}

ps_status ps_set_error_buf(char *buf, size_t size, ps_status st, const char *fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  vformat(buf, size, st, fmt, ap);
  va_end(ap);
  return st;
}

ps_status ps_corrupt_error(ps_context *ctx, uint32_t slot, const ps_prog_col *col, uint64_t first, uint64_t last,
                           int64_t id_index) {
  char column[PS_COLUMN_NAME_MAX + 32], rows[96] = "";
  const ps_column *c = ctx && slot < ctx->corrupt_ncols ? ctx->corrupt_cols[slot] : NULL;
  if (c && c->name)
    snprintf(column, sizeof column, "column '%s'", c->name);
  else if (ctx && ctx->corrupt_ncols == 1 && slot == 0)
    snprintf(column, sizeof column, "the column");
  else
    snprintf(column, sizeof column, "column slot %u", slot);
  uint64_t base = ctx ? ctx->corrupt_base : 0;
  if (first == last)
    snprintf(rows, sizeof rows, "row %llu", (unsigned long long)(base + first));
  else
    snprintf(rows, sizeof rows, "a row among rows %llu..%llu", (unsigned long long)(base + first),
             (unsigned long long)(base + last));
  char at[40] = "";
  if (id_index >= 0) snprintf(at, sizeof at, " (ids[%lld])", (long long)id_index);
  if (col->flags & PS_COLF_NO_CODES)
    return ps_set_error(ctx, PS_ERR_CORRUPT_DATA,
                        "corrupt data in %s: %s%s is not null, but the column has no valid code (empty dictionary)",
                        column, rows, at);
  return ps_set_error(ctx, PS_ERR_CORRUPT_DATA, "corrupt data in %s: %s%s holds a code above the largest valid code %llu",
                      column, rows, at, (unsigned long long)col->code_limit);
}

void ps_clear_error(ps_context *ctx) {
  if (ctx) ctx->last_error[0] = '\0';
}

const char *ps_context_last_error(const ps_context *ctx) { return ctx ? ctx->last_error : ""; }

/* ---- allocation ---------------------------------------------------------- */

void *ps_alloc_with(const ps_allocator *a, size_t size) {
  if (size == 0) size = 1;
  if (a && a->alloc) return a->alloc(a->opaque, size);
  return malloc(size);
}

void ps_free_with(const ps_allocator *a, void *p) {
  if (!p) return;
  if (a && a->alloc) {
    if (a->free) a->free(a->opaque, p);
    return;
  }
  free(p);
}

void *ps_host_alloc(ps_context *ctx, size_t size) { return ps_alloc_with(ctx ? &ctx->alloc : NULL, size); }
void ps_host_free(ps_context *ctx, void *ptr) { ps_free_with(ctx ? &ctx->alloc : NULL, ptr); }

void *ps_calloc_ctx(ps_context *ctx, size_t n, size_t size) {
  if (size && n > SIZE_MAX / size) return NULL;
  void *p = ps_host_alloc(ctx, n * size);
  if (p && n * size != 0) memset(p, 0, n * size);
  return p;
}

/* ---- types --------------------------------------------------------------- */

const char *ps_type_name(ps_type type) {
  switch (type) {
    case PS_TYPE_INT8: return "int8";
    case PS_TYPE_INT16: return "int16";
    case PS_TYPE_INT32: return "int32";
    case PS_TYPE_INT64: return "int64";
    case PS_TYPE_UINT8: return "uint8";
    case PS_TYPE_UINT16: return "uint16";
    case PS_TYPE_UINT32: return "uint32";
    case PS_TYPE_UINT64: return "uint64";
    case PS_TYPE_FLOAT32: return "float32";
    case PS_TYPE_FLOAT64: return "float64";
    case PS_TYPE_STRING: return "string";
    case PS_TYPE_DECIMAL: return "decimal";
  }
  return NULL;
}

size_t ps_type_size(ps_type type) {
  switch (type) {
    case PS_TYPE_INT8: case PS_TYPE_UINT8: return 1;
    case PS_TYPE_INT16: case PS_TYPE_UINT16: return 2;
    case PS_TYPE_INT32: case PS_TYPE_UINT32: case PS_TYPE_FLOAT32: return 4;
    case PS_TYPE_INT64: case PS_TYPE_UINT64: case PS_TYPE_FLOAT64: case PS_TYPE_DECIMAL: return 8;
    case PS_TYPE_STRING: return 0;
  }
  return 0;
}

const char *ps_cmp_name(ps_cmp cmp) {
  static const char *names[] = {"==", "!=", "<", "<=", ">", ">="};
  return (unsigned)cmp < 6 ? names[cmp] : NULL;
}

/* Decimals are signed: their values are int64 unscaled numbers (M + code), so
 * every integer path (ranges, codes, gather, sums) holds for them; only the
 * places that read the scale ask ps_type_is_decimal. */
bool ps_type_is_signed(ps_type t) { return (t >= PS_TYPE_INT8 && t <= PS_TYPE_INT64) || t == PS_TYPE_DECIMAL; }
bool ps_type_is_decimal(ps_type t) { return t == PS_TYPE_DECIMAL; }
bool ps_type_is_unsigned(ps_type t) { return t >= PS_TYPE_UINT8 && t <= PS_TYPE_UINT64; }
bool ps_type_is_float(ps_type t) { return t == PS_TYPE_FLOAT32 || t == PS_TYPE_FLOAT64; }
bool ps_type_is_integer(ps_type t) { return ps_type_is_signed(t) || ps_type_is_unsigned(t); }

int64_t ps_type_min(ps_type t) {
  switch (t) {
    case PS_TYPE_INT8: return INT8_MIN;
    case PS_TYPE_INT16: return INT16_MIN;
    case PS_TYPE_INT32: return INT32_MIN;
    case PS_TYPE_INT64: case PS_TYPE_FLOAT32: case PS_TYPE_FLOAT64: case PS_TYPE_DECIMAL: return INT64_MIN;
    default: return 0;
  }
}

uint64_t ps_type_max(ps_type t) {
  switch (t) {
    case PS_TYPE_INT8: return INT8_MAX;
    case PS_TYPE_INT16: return INT16_MAX;
    case PS_TYPE_INT32: return INT32_MAX;
    case PS_TYPE_INT64: case PS_TYPE_FLOAT32: case PS_TYPE_FLOAT64: case PS_TYPE_DECIMAL: return INT64_MAX;
    case PS_TYPE_UINT8: return UINT8_MAX;
    case PS_TYPE_UINT16: return UINT16_MAX;
    case PS_TYPE_UINT32: return UINT32_MAX;
    case PS_TYPE_UINT64: case PS_TYPE_STRING: return UINT64_MAX;
  }
  return 0;
}

int ps_bytes_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
  size_t m = alen < blen ? alen : blen;
  int c = m ? memcmp(a, b, m) : 0;
  if (c) return c < 0 ? -1 : 1;
  return alen < blen ? -1 : (alen > blen ? 1 : 0);
}
