/* Columns: metadata validation (every field, with a message naming it) and
 * placement of the packed streams on the device. */
#include <inttypes.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* ps_for_desc_init and ps_dict_desc_init live in encode.c. */

/* The descriptions of before `encoding` was added are FOR. */

uint32_t ps_for_desc_encoding(const ps_for_desc *d) {
  return d->struct_size >= offsetof(ps_for_desc, encoding) + sizeof d->encoding ? d->encoding : PS_ENCODING_FOR;
}

/* Validates a FOR description. `codes_of_dict` relaxes nothing but changes
 * the wording; device = true means data/validity pointers are not used. */
static ps_status validate_for(ps_context *ctx, const ps_for_desc *d, bool dict_codes, bool device) {
  const char *what = dict_codes ? "codes" : "desc";
  if (!d) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s is NULL", what);
  /* The description of version 0.1 ends before `zones`. */
  if (d->struct_size < offsetof(ps_for_desc, zones) || d->struct_size > sizeof(ps_for_desc))
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s.struct_size is %u; expected %u (call ps_for_desc_init)", what,
                        d->struct_size, (unsigned)sizeof(ps_for_desc));
  const uint32_t enc = ps_for_desc_encoding(d);
  if (enc != PS_ENCODING_FOR && enc != PS_ENCODING_DELTA)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s.encoding is %u; expected %d (FOR) or %d (DELTA)", what, enc,
                        PS_ENCODING_FOR, PS_ENCODING_DELTA);
  if (dict_codes) {
    if (!ps_type_is_unsigned(d->type))
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                          "codes.type is %d (%s); dictionary codes must be an unsigned type (uint8..uint64)",
                          (int)d->type, ps_type_name(d->type) ? ps_type_name(d->type) : "invalid");
  } else if (!ps_type_is_integer(d->type) && !ps_type_is_float(d->type)) {
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                        "%s.type is %d (%s); expected an integer or float type (strings use "
                        "ps_column_create_dict)",
                        what, (int)d->type, ps_type_name(d->type) ? ps_type_name(d->type) : "invalid");
  }
  if (d->width > 64)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s.width is %u; expected 0..64", what, d->width);
  if (ps_for_desc_float_map(d) != PS_FLOAT_MAP_DECIMAL || (d->struct_size >= sizeof *d && d->exceptions)) {
    char msg[PS_ERRMSG_SIZE];
    ps_status st = ps_fmap_check(d, msg, sizeof msg);
    if (st != PS_OK) return ps_set_error(ctx, st, "%s", msg);
    if (ps_for_desc_float_map(d) != PS_FLOAT_MAP_DECIMAL) goto sizes; /* scale 0 checked; the reference is k or bits */
  }
  if (ps_type_is_float(d->type) || ps_type_is_decimal(d->type)) {
    if (d->scale > 18)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s.scale is %u; expected 0..18 for a %s column", what,
                          d->scale, ps_type_name(d->type));
  } else if (d->scale != 0) {
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s.scale is %u; integer columns must have scale 0",
                        what, d->scale);
  }
  if (ps_type_is_signed(d->type)) {
    if (d->reference.i < ps_type_min(d->type) || (d->reference.i > 0 && (uint64_t)d->reference.i > ps_type_max(d->type)))
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s.reference is %" PRId64 "; outside %s", what,
                          d->reference.i, ps_type_name(d->type));
  } else if (ps_type_is_unsigned(d->type)) {
    if (d->reference.u > ps_type_max(d->type))
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s.reference is %" PRIu64 "; outside %s", what,
                          d->reference.u, ps_type_name(d->type));
  }
sizes:;
  uint64_t need;
  if (!ps_for_packed_bytes(d->n, d->width, &need))
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s.n = %" PRIu64 " at width %u overflows 64-bit sizes", what,
                        d->n, d->width);
  if (enc == PS_ENCODING_DELTA) {
    need = d->data_size; /* the headers say how large it is (create_column checks them) */
    if (d->n > ((uint64_t)1 << 58))
      return ps_set_error(ctx, PS_ERR_LIMIT, "%s.n is %" PRIu64 "; a DELTA column has at most 2^58 rows", what, d->n);
  }
  if (d->data_size != need)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                        "%s.data_size is %" PRIu64 "; n = %" PRIu64 " codes of %u bits need exactly %" PRIu64
                        " bytes",
                        what, d->data_size, d->n, d->width, need);
  if (!device && need > 0 && !d->data)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s.data is NULL but %" PRIu64 " bytes are needed", what,
                        need);
  uint64_t vneed = d->n / 8 + (d->n % 8 != 0);
  bool has_validity = device ? d->validity_size != 0 : d->validity != NULL;
  if (has_validity && d->validity_size != vneed)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                        "%s.validity_size is %" PRIu64 "; a validity bitmap of %" PRIu64 " rows is %" PRIu64
                        " bytes",
                        what, d->validity_size, d->n, vneed);
  if (!device && !d->validity && d->validity_size != 0)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s.validity is NULL but validity_size is %" PRIu64, what,
                        d->validity_size);
  return PS_OK;
}

/* Largest code whose value stays inside the logical type. */
static uint64_t type_code_limit(const ps_for_desc *d) {
  uint64_t lim;
  if (ps_type_is_unsigned(d->type))
    lim = ps_type_max(d->type) - d->reference.u;
  else /* signed and float: M + code must stay <= the type max (int64 for floats) */
    lim = ps_type_max(d->type) - (uint64_t)d->reference.i;
  uint64_t wm = ps_width_mask(d->width);
  return lim < wm ? lim : wm;
}

static ps_status validate_dict(ps_context *ctx, const ps_dict_desc *dd) {
  if (!dd) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "dict is NULL");
  if (dd->struct_size < sizeof(ps_dict_desc))
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "dict.struct_size is %u; expected %u (call ps_dict_desc_init)",
                        dd->struct_size, (unsigned)sizeof(ps_dict_desc));
  if ((dd->offsets32 == NULL) == (dd->offsets64 == NULL))
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                        "dict: exactly one of offsets32 and offsets64 must be set (%s set)",
                        dd->offsets32 ? "both are" : "neither is");
  if (dd->count >= (uint64_t)1 << 40)
    return ps_set_error(ctx, PS_ERR_LIMIT, "dict.count is %" PRIu64 "; at most 2^40 entries", dd->count);
  if (!dd->bytes && dd->bytes_size)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "dict.bytes is NULL but bytes_size is %" PRIu64,
                        dd->bytes_size);
  int64_t prev = 0;
  for (uint64_t i = 0; i <= dd->count; i++) {
    int64_t o = dd->offsets32 ? dd->offsets32[i] : dd->offsets64[i];
    if (o < 0)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "dict.offsets[%" PRIu64 "] is %" PRId64 "; negative", i, o);
    if (i > 0 && o < prev)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                          "dict.offsets[%" PRIu64 "] is %" PRId64 ", less than offsets[%" PRIu64 "] = %" PRId64
                          "; offsets must not decrease",
                          i, o, i - 1, prev);
    if ((uint64_t)o > dd->bytes_size)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                          "dict.offsets[%" PRIu64 "] is %" PRId64 ", past bytes_size %" PRIu64, i, o,
                          dd->bytes_size);
    prev = o;
  }
  return PS_OK;
}

static ps_status copy_dict(ps_context *ctx, const ps_dict_desc *dd, ps_dict *out) {
  uint64_t d = dd->count;
  int64_t base = dd->offsets32 ? dd->offsets32[0] : dd->offsets64[0];
  int64_t end = dd->offsets32 ? dd->offsets32[d] : dd->offsets64[d];
  out->count = d;
  out->bytes_size = (uint64_t)(end - base);
  out->offsets = ps_calloc_ctx(ctx, (size_t)d + 1, sizeof(uint64_t));
  out->bytes = ps_host_alloc(ctx, (size_t)out->bytes_size);
  if (!out->offsets || !out->bytes) {
    ps_host_free(ctx, out->offsets);
    ps_host_free(ctx, out->bytes);
    memset(out, 0, sizeof *out);
    return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "copying a dictionary of %" PRIu64 " entries", d);
  }
  for (uint64_t i = 0; i <= d; i++)
    out->offsets[i] = (uint64_t)((dd->offsets32 ? dd->offsets32[i] : dd->offsets64[i]) - base);
  if (out->bytes_size) memcpy(out->bytes, dd->bytes + base, (size_t)out->bytes_size);
  out->sorted = dd->sorted != 0;
  if (out->sorted) {
    for (uint64_t i = 1; i < d; i++) {
      const uint8_t *a = out->bytes + out->offsets[i - 1], *b = out->bytes + out->offsets[i];
      if (ps_bytes_cmp(a, out->offsets[i] - out->offsets[i - 1], b, out->offsets[i + 1] - out->offsets[i]) >= 0) {
        ps_host_free(ctx, out->offsets);
        ps_host_free(ctx, out->bytes);
        memset(out, 0, sizeof *out);
        return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                            "dict.sorted is set but entry %" PRIu64 " does not sort strictly after entry %" PRIu64,
                            i, i - 1);
      }
    }
  }
  return PS_OK;
}

/* Places `size` host bytes on the device in a new owned buffer. */
static ps_status upload(ps_context *ctx, const void *src, uint64_t size, ps_buffer **out) {
  ps_buffer *b = NULL;
  PS_TRY(ps_buffer_create(ctx, size, &b));
  if (size) {
    ps_status st = ctx->ops->mem_write(ctx->be, b->mem, src, size);
    if (st != PS_OK) {
      ps_buffer_destroy(b);
      return st;
    }
  }
  *out = b;
  return PS_OK;
}

static ps_status check_wrap(ps_context *ctx, ps_buffer *buf, uint64_t off, uint64_t size, const char *what) {
  if (!buf) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s buffer is NULL", what);
  if (buf->ctx != ctx) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s buffer belongs to another context", what);
  if (off % 4)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s offset %" PRIu64 " is not a multiple of 4", what, off);
  if (off > buf->size || size > buf->size - off)
    return ps_set_error(ctx, PS_ERR_BUFFER_TOO_SMALL,
                        "%s: %" PRIu64 " bytes at offset %" PRIu64 " do not fit a buffer of %" PRIu64 " bytes", what,
                        size, off, buf->size);
  return PS_OK;
}

/* A DELTA column's block headers, read from the caller's host memory or
 * (a device column) copied back from its buffer. */
static ps_status check_delta(ps_context *ctx, const ps_for_desc *d, bool device, ps_buffer *data, uint64_t data_off,
                             bool dict_codes) {
  const char *what = dict_codes ? "codes" : "desc";
  const uint64_t hb = ps_delta_blocks(d->n) * PS_DELTA_HEADER_BYTES;
  const uint8_t *headers = d->data;
  uint8_t *copy = NULL;
  if (device && hb <= d->data_size) {
    copy = ps_host_alloc(ctx, (size_t)hb + 1);
    if (!copy) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "reading %" PRIu64 " bytes of DELTA headers", hb);
    ps_devmem m = data->mem;
    m.offset += data_off;
    ps_status st = hb ? ctx->ops->mem_read(ctx->be, copy, m, hb) : PS_OK;
    if (st != PS_OK) {
      ps_host_free(ctx, copy);
      return st;
    }
    headers = copy;
  }
  char msg[PS_ERRMSG_SIZE];
  ps_status st = ps_delta_check(headers, d->n, d->data_size, what, msg, sizeof msg);
  ps_host_free(ctx, copy);
  if (st != PS_OK) snprintf(ctx->last_error, sizeof ctx->last_error, "%s", msg); /* msg names its status */
  return st;
}

/* Shared body of the six column constructors. */
static ps_status create_column(ps_context *ctx, const ps_dict_desc *dd, const ps_for_desc *d, bool device,
                               bool host, ps_buffer *data, uint64_t data_off, ps_buffer *validity,
                               uint64_t validity_off, ps_column **out) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!out) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "out is NULL");
  bool is_dict = dd != NULL;
  PS_TRY(validate_for(ctx, d, is_dict, device));
  if (is_dict) PS_TRY(validate_dict(ctx, dd));
  if (device) {
    PS_TRY(check_wrap(ctx, data, data_off, d->data_size, "data"));
    if (d->validity_size) PS_TRY(check_wrap(ctx, validity, validity_off, d->validity_size, "validity"));
  }
  if (device && ctx->group)
    return ps_group_unsupported(ctx, is_dict ? "ps_column_create_dict_device" : "ps_column_create_for_device");
  if (ps_for_desc_encoding(d) == PS_ENCODING_DELTA) PS_TRY(check_delta(ctx, d, device, data, data_off, is_dict));

  ps_column *c = ps_calloc_ctx(ctx, 1, sizeof *c);
  if (!c) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a column");
  c->ctx = ctx;
  c->type = is_dict ? PS_TYPE_STRING : d->type;
  c->n = d->n;
  c->width = d->width;
  c->scale = d->scale;
  c->encoding = ps_for_desc_encoding(d);
  c->reference = d->reference;
  c->data_size = d->data_size;
  c->code_limit = type_code_limit(d);
  ps_status st = PS_OK;
  if (!is_dict && ps_for_desc_float_map(d) != PS_FLOAT_MAP_DECIMAL) {
    c->fmap = ps_fmap_of_desc(d);
    c->fmap.exc = NULL;
    if (d->exceptions_count) {
      ps_float_exception *x = ps_calloc_ctx(ctx, (size_t)d->exceptions_count, sizeof *x);
      if (!x) {
        ps_host_free(ctx, c);
        return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "copying %" PRIu64 " float exceptions", d->exceptions_count);
      }
      memcpy(x, d->exceptions, (size_t)d->exceptions_count * sizeof *x);
      c->fmap.exc = x;
    }
    c->code_limit = ps_fmap_code_limit(&c->fmap, d->width);
  }
  if (is_dict) {
    st = copy_dict(ctx, dd, &c->dict);
    if (st != PS_OK) goto fail;
    /* Valid codes index the dictionary: M + code < count. */
    if (d->reference.u >= dd->count) {
      c->no_codes = true;
      c->code_limit = 0;
    } else if (dd->count - 1 - d->reference.u < c->code_limit) {
      c->code_limit = dd->count - 1 - d->reference.u;
    }
  }
  if (ctx->group) {
    st = ps_group_column_parts(ctx, c, dd, d, host);
    if (st != PS_OK) goto fail;
    /* The whole column's data are its parts'; its validity handle only says
     * whether it has one (the zone maps' checks read that), never read. */
    if (d->validity) c->validity = (ps_devmem){c->parts, 0}, c->validity_size = d->validity_size;
  } else if (host) {
    /* {host pointer, 0}: what ps_column_chunk stages or maps (stream.c) */
    c->host = true;
    c->data = (ps_devmem){(void *)(uintptr_t)d->data, 0};
    if (c->encoding == PS_ENCODING_DELTA) c->delta_largest = ps_delta_largest_block(d->data, d->n);
    if (d->validity) {
      c->validity = (ps_devmem){(void *)(uintptr_t)d->validity, 0};
      c->validity_size = d->validity_size;
    }
  } else if (device) {
    c->data = data->mem;
    c->data.offset += data_off;
    if (d->validity_size) {
      c->validity = validity->mem;
      c->validity.offset += validity_off;
      c->validity_size = d->validity_size;
    }
  } else {
    st = upload(ctx, d->data, d->data_size, &c->data_buf);
    if (st != PS_OK) goto fail;
    c->data = c->data_buf->mem;
    if (d->validity) {
      st = upload(ctx, d->validity, d->validity_size, &c->validity_buf);
      if (st != PS_OK) goto fail;
      c->validity = c->validity_buf->mem;
      c->validity_size = d->validity_size;
    }
  }
  if (d->struct_size >= offsetof(ps_for_desc, zones) + sizeof d->zones && d->zones) {
    st = ps_zones_set(ctx, c, d->zones, is_dict ? "codes.zones" : "desc.zones");
    if (st != PS_OK) goto fail;
  }
  *out = c;
  return PS_OK;
fail:
  ps_column_destroy(c);
  return st;
}

ps_status ps_column_create_for(ps_context *ctx, const ps_for_desc *desc, ps_column **out) {
  return create_column(ctx, NULL, desc, false, false, NULL, 0, NULL, 0, out);
}

ps_status ps_column_create_for_device(ps_context *ctx, const ps_for_desc *desc, ps_buffer *data,
                                      uint64_t data_offset, ps_buffer *validity, uint64_t validity_offset,
                                      ps_column **out) {
  return create_column(ctx, NULL, desc, true, false, data, data_offset, validity, validity_offset, out);
}

ps_status ps_column_create_dict(ps_context *ctx, const ps_dict_desc *dict, const ps_for_desc *codes,
                                ps_column **out) {
  if (ctx && !dict) {
    ps_clear_error(ctx);
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "dict is NULL");
  }
  return create_column(ctx, dict, codes, false, false, NULL, 0, NULL, 0, out);
}

ps_status ps_column_create_dict_device(ps_context *ctx, const ps_dict_desc *dict, const ps_for_desc *codes,
                                       ps_buffer *data, uint64_t data_offset, ps_buffer *validity,
                                       uint64_t validity_offset, ps_column **out) {
  if (ctx && !dict) {
    ps_clear_error(ctx);
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "dict is NULL");
  }
  return create_column(ctx, dict, codes, true, false, data, data_offset, validity, validity_offset, out);
}

ps_status ps_column_create_for_host(ps_context *ctx, const ps_for_desc *desc, ps_column **out) {
  return create_column(ctx, NULL, desc, false, true, NULL, 0, NULL, 0, out);
}

ps_status ps_column_create_dict_host(ps_context *ctx, const ps_dict_desc *dict, const ps_for_desc *codes,
                                     ps_column **out) {
  if (ctx && !dict) {
    ps_clear_error(ctx);
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "dict is NULL");
  }
  return create_column(ctx, dict, codes, false, true, NULL, 0, NULL, 0, out);
}

ps_status ps_column_device_dict(ps_context *ctx, ps_column *col) {
  if (col->dict_dev_offsets) return PS_OK;
  const ps_dict *d = &col->dict;
  uint64_t offsets_bytes = (d->count + 1) * sizeof(uint64_t);
  ps_buffer *offsets = NULL, *bytes = NULL;
  ps_status st = ps_buffer_create(ctx, offsets_bytes, &offsets);
  if (st == PS_OK) st = ps_buffer_create(ctx, d->bytes_size, &bytes);
  if (st == PS_OK) st = ctx->ops->mem_write(ctx->be, offsets->mem, d->offsets, offsets_bytes);
  if (st == PS_OK && d->bytes_size) st = ctx->ops->mem_write(ctx->be, bytes->mem, d->bytes, d->bytes_size);
  if (st != PS_OK) {
    ps_buffer_destroy(offsets);
    ps_buffer_destroy(bytes);
    /* the backend's message, without its "PS_ERR_...: " prefix */
    const char *prev = ps_context_last_error(ctx), *colon = strstr(prev, ": ");
    char why[PS_ERRMSG_SIZE];
    snprintf(why, sizeof why, "%s", strncmp(prev, "PS_", 3) == 0 && colon ? colon + 2 : prev);
    return ps_set_error(ctx, st,
                        "copying the dictionary of a string column (%" PRIu64 " entries, %" PRIu64
                        " bytes) to the device for LIKE: %s",
                        d->count, d->bytes_size, why);
  }
  col->dict_dev_offsets = offsets;
  col->dict_dev_bytes = bytes;
  return PS_OK;
}

void ps_column_destroy(ps_column *col) {
  if (!col) return;
  ps_context *ctx = col->ctx;
  if (col->host) ps_stage_wait(ctx); /* no copy may still read the caller's memory */
  ps_group_column_free(col);
  ps_buffer_destroy(col->data_buf);
  ps_buffer_destroy(col->dict_dev_offsets);
  ps_buffer_destroy(col->dict_dev_bytes);
  ps_buffer_destroy(col->validity_buf);
  ps_host_free(ctx, col->delta_staged); /* and delta_staged_at, in one allocation */
  ps_host_free(ctx, col->dict.offsets);
  ps_host_free(ctx, col->dict.bytes);
  ps_host_free(ctx, col->name);
  ps_zones_free(ctx, col);
  ps_host_free(ctx, (void *)col->fmap.exc);
  ps_host_free(ctx, col);
}

ps_status ps_column_set_name(ps_column *col, const char *name) {
  if (!col) return PS_ERR_INVALID_ARGUMENT;
  ps_context *ctx = col->ctx;
  ps_clear_error(ctx);
  size_t len = name ? strlen(name) : 0;
  if (len > PS_COLUMN_NAME_MAX)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "name is %zu bytes; at most %d", len, PS_COLUMN_NAME_MAX);
  char *copy = NULL;
  if (len) {
    copy = ps_host_alloc(ctx, len + 1);
    if (!copy) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "copying a column name of %zu bytes", len);
    memcpy(copy, name, len + 1);
  }
  ps_host_free(ctx, col->name);
  col->name = copy;
  return col->parts ? ps_group_column_set_name(col) : PS_OK;
}

const char *ps_column_name(const ps_column *col) { return col && col->name ? col->name : ""; }

uint64_t ps_column_rows(const ps_column *col) { return col ? col->n : 0; }
ps_type ps_column_type(const ps_column *col) { return col ? col->type : (ps_type)0; }
uint32_t ps_column_width(const ps_column *col) { return col ? col->width : 0; }
