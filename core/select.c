/* What comes after the filter: refinement of a selection, byte masks, row
 * ids (size, then retrieve), late materialization and aggregates in code
 * space. Chunked like evaluation: chunks start on multiples of 32 rows. */
#include <inttypes.h>
#include <math.h>
#include <string.h>

#include "internal.h"
#include "query.h" /* ps_query_float_sum */

__extension__ typedef __int128 i128;
__extension__ typedef unsigned __int128 u128;

void ps_free(ps_context *ctx, void *ptr) { ps_host_free(ctx, ptr); }

static uint64_t bitmap_bytes(uint64_t n) { return n / 8 + (n % 8 != 0); }

/* Checks that [offset, offset+bytes) lies in buf and offset is aligned. */
static ps_status check_place(ps_context *ctx, const ps_buffer *buf, uint64_t offset, uint64_t bytes, uint64_t align,
                             const char *what) {
  if (!buf) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s buffer is NULL", what);
  if (buf->ctx != ctx) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s buffer belongs to another context", what);
  if (offset % align)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s offset %" PRIu64 " is not a multiple of %" PRIu64, what,
                        offset, align);
  if (offset > buf->size || bytes > buf->size - offset)
    return ps_set_error(ctx, PS_ERR_BUFFER_TOO_SMALL,
                        "%s needs %" PRIu64 " bytes at offset %" PRIu64 "; the buffer has %" PRIu64, what, bytes,
                        offset, buf->size);
  return PS_OK;
}

static ps_devmem at(const ps_buffer *b, uint64_t offset) {
  ps_devmem m = b->mem;
  m.offset += offset;
  return m;
}

static ps_status need_op(ps_context *ctx, const void *fn, const char *what) {
  if (!fn && !ctx->group) /* (each device of a context over several checks its own) */
    return ps_set_error(ctx, PS_ERR_UNSUPPORTED, "the %s backend does not implement %s", ctx->ops->name, what);
  return PS_OK;
}

/* ---- refinement and masks --------------------------------------------------- */

ps_status ps_filter_refine(ps_context *ctx, const ps_expr *expr, const ps_buffer *in, uint64_t in_offset,
                           ps_buffer *out, uint64_t out_offset, uint64_t *count) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (ctx->group) return ps_group_unsupported(ctx, "ps_filter_refine");
  PS_TRY(ps_check_expr(ctx, expr));
  uint64_t bytes = bitmap_bytes(expr->rows);
  PS_TRY(check_place(ctx, in, in_offset, bytes, 4, "input selection"));
  PS_TRY(check_place(ctx, out, out_offset, bytes, 4, "output selection"));
  uint64_t c = 0;
  ps_status st = ps_run_program(ctx, expr, at(out, out_offset), PS_NO_MEM, at(in, in_offset), count ? &c : NULL);
  if (st == PS_OK && count) *count = c;
  return st;
}

ps_status ps_filter_mask_device(ps_context *ctx, const ps_expr *expr, ps_buffer *mask, uint64_t offset,
                                uint64_t *count) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (ctx->group) return ps_group_unsupported(ctx, "ps_filter_mask_device");
  PS_TRY(ps_check_expr(ctx, expr));
  PS_TRY(check_place(ctx, mask, offset, expr->rows, 4, "mask"));
  uint64_t c = 0;
  ps_status st = ps_run_program(ctx, expr, PS_NO_MEM, at(mask, offset), PS_NO_MEM, count ? &c : NULL);
  if (st == PS_OK && count) *count = c;
  return st;
}

ps_status ps_filter_mask(ps_context *ctx, const ps_expr *expr, uint8_t *mask, uint64_t mask_size, uint64_t *count) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  PS_TRY(ps_check_expr(ctx, expr));
  if (!mask && expr->rows) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "mask is NULL");
  if (mask_size < expr->rows)
    return ps_set_error(ctx, PS_ERR_BUFFER_TOO_SMALL, "mask_size is %" PRIu64 "; %" PRIu64 " rows need as many bytes",
                        mask_size, expr->rows);
  if (ctx->group) return ps_group_filter(ctx, expr, NULL, mask, count);
  ps_buffer *dev = NULL;
  PS_TRY(ps_buffer_create(ctx, expr->rows, &dev));
  uint64_t c = 0;
  ps_status st = ps_run_program(ctx, expr, PS_NO_MEM, dev->mem, PS_NO_MEM, count ? &c : NULL);
  if (st == PS_OK && expr->rows) st = ctx->ops->mem_read(ctx->be, mask, dev->mem, expr->rows);
  ps_buffer_destroy(dev);
  if (st == PS_OK && count) *count = c;
  return st;
}

/* ---- row ids --------------------------------------------------------------- */

/* Counts (out handle NULL) or writes the ids of a selection, chunk by chunk. */
static ps_status row_ids_pass(ps_context *ctx, ps_devmem sel, uint64_t n, uint32_t isz, ps_devmem out,
                              uint64_t *count) {
  uint64_t total = 0;
  for (uint64_t r0 = 0; r0 < n; r0 += ctx->chunk_rows) {
    ps_row_ids_args a;
    memset(&a, 0, sizeof a);
    a.bitmap = sel;
    a.bitmap.offset += r0 / 8;
    a.rows = n - r0 < ctx->chunk_rows ? n - r0 : ctx->chunk_rows;
    a.id_base = r0;
    a.index_bytes = isz;
    if (out.handle) {
      a.out = out;
      a.out.offset += total * isz;
    }
    uint64_t c = 0;
    a.count = &c;
    PS_TRY(ctx->ops->row_ids(ctx->be, &a));
    total += c;
  }
  *count = total;
  return PS_OK;
}

/* Whether row ids of `type` can be produced for n rows on this backend. */
static ps_status check_ids_type(ps_context *ctx, uint64_t n, ps_index_type type) {
  PS_TRY(need_op(ctx, (const void *)ctx->ops->row_ids, "row ids"));
  if (type != PS_INDEX_UINT32 && type != PS_INDEX_UINT64)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "index type %d is not PS_INDEX_UINT32 or PS_INDEX_UINT64",
                        (int)type);
  if (type == PS_INDEX_UINT32 && n > ((uint64_t)1 << 32))
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                        "uint32 row ids cannot address %" PRIu64 " rows (more than 2^32); ask for PS_INDEX_UINT64", n);
  return PS_OK;
}

static ps_status check_ids_request(ps_context *ctx, const ps_buffer *sel, uint64_t sel_offset, uint64_t n,
                                   ps_index_type type) {
  PS_TRY(check_ids_type(ctx, n, type));
  return check_place(ctx, sel, sel_offset, bitmap_bytes(n), 4, "selection");
}

ps_status ps_selection_row_ids_device(ps_context *ctx, const ps_buffer *selection, uint64_t selection_offset,
                                      uint64_t n, ps_index_type type, ps_buffer *ids, uint64_t ids_offset,
                                      uint64_t capacity, uint64_t *count) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (ctx->group) return ps_group_unsupported(ctx, "ps_selection_row_ids_device");
  if (!count) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "count is NULL");
  PS_TRY(check_ids_request(ctx, selection, selection_offset, n, type));
  uint32_t isz = (uint32_t)type;
  ps_devmem sel = at(selection, selection_offset);
  if (ids) {
    if (capacity > UINT64_MAX / isz) capacity = UINT64_MAX / isz;
    PS_TRY(check_place(ctx, ids, ids_offset, capacity * isz, isz, "ids"));
  }
  /* Size first, unless the destination can hold every row. */
  uint64_t c = 0;
  if (!ids || capacity < n) {
    PS_TRY(row_ids_pass(ctx, sel, n, isz, PS_NO_MEM, &c));
    if (!ids) return *count = c, PS_OK;
    if (c > capacity) {
      *count = c;
      return ps_set_error(ctx, PS_ERR_BUFFER_TOO_SMALL, "%" PRIu64 " rows are selected; the ids buffer holds %" PRIu64,
                          c, capacity);
    }
  }
  PS_TRY(row_ids_pass(ctx, sel, n, isz, at(ids, ids_offset), &c));
  *count = c;
  return PS_OK;
}

ps_status ps_selection_row_ids(ps_context *ctx, const ps_buffer *selection, uint64_t selection_offset, uint64_t n,
                               ps_index_type type, void *ids, uint64_t capacity, uint64_t *count) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (ctx->group) return ps_group_unsupported(ctx, "ps_selection_row_ids");
  if (!count) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "count is NULL");
  PS_TRY(check_ids_request(ctx, selection, selection_offset, n, type));
  uint32_t isz = (uint32_t)type;
  ps_devmem sel = at(selection, selection_offset);
  uint64_t c = 0;
  PS_TRY(row_ids_pass(ctx, sel, n, isz, PS_NO_MEM, &c));
  *count = c;
  if (!ids) return PS_OK;
  if (c > capacity)
    return ps_set_error(ctx, PS_ERR_BUFFER_TOO_SMALL, "%" PRIu64 " rows are selected; the ids buffer holds %" PRIu64, c,
                        capacity);
  if (c == 0) return PS_OK;
  ps_buffer *dev = NULL;
  PS_TRY(ps_buffer_create(ctx, c * isz, &dev));
  ps_status st = row_ids_pass(ctx, sel, n, isz, dev->mem, &c);
  if (st == PS_OK) st = ctx->ops->mem_read(ctx->be, ids, dev->mem, c * isz);
  ps_buffer_destroy(dev);
  return st;
}

ps_status ps_filter_row_ids(ps_context *ctx, const ps_expr *expr, ps_index_type type, void **ids, uint64_t *count) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  PS_TRY(ps_check_expr(ctx, expr));
  if (!ids || !count) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s is NULL", ids ? "count" : "ids");
  uint64_t n = expr->rows;
  /* Refuse what cannot be answered before evaluating anything. */
  PS_TRY(check_ids_type(ctx, n, type));
  if (ctx->group) return ps_group_row_ids(ctx, expr, type, ids, count);
  ps_buffer *sel = NULL;
  PS_TRY(ps_buffer_create(ctx, bitmap_bytes(n), &sel));
  uint64_t c = 0;
  ps_status st = ps_run_program(ctx, expr, sel->mem, PS_NO_MEM, PS_NO_MEM, &c);
  void *host = NULL;
  if (st == PS_OK && c) {
    uint32_t isz = (uint32_t)type;
    host = c <= SIZE_MAX / isz ? ps_host_alloc(ctx, (size_t)(c * isz)) : NULL;
    if (!host) st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating %" PRIu64 " row ids", c);
    uint64_t got = 0;
    if (st == PS_OK) st = ps_selection_row_ids(ctx, sel, 0, n, type, host, c, &got);
    if (st == PS_OK && got != c)
      st = ps_set_error(ctx, PS_ERR_INTERNAL, "row ids: counted %" PRIu64 ", wrote %" PRIu64, c, got);
    if (st != PS_OK) ps_host_free(ctx, host), host = NULL;
  }
  ps_buffer_destroy(sel);
  if (st != PS_OK) return st;
  *ids = host;
  *count = c;
  return PS_OK;
}

ps_status ps_filter_row_ids_device(ps_context *ctx, const ps_expr *expr, ps_index_type type, ps_buffer *ids,
                                   uint64_t ids_offset, uint64_t capacity, uint64_t *count) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (ctx->group) return ps_group_unsupported(ctx, "ps_filter_row_ids_device");
  PS_TRY(ps_check_expr(ctx, expr));
  if (!count) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "count is NULL");
  uint64_t n = expr->rows;
  PS_TRY(check_ids_type(ctx, n, type));
  uint32_t isz = (uint32_t)type;
  if (!ids) return ps_run_program(ctx, expr, PS_NO_MEM, PS_NO_MEM, PS_NO_MEM, count);
  if (capacity > UINT64_MAX / isz) capacity = UINT64_MAX / isz;
  PS_TRY(check_place(ctx, ids, ids_offset, capacity * isz, isz, "ids"));
  uint64_t c = 0;
  PS_TRY(ps_run_program_ids(ctx, expr, at(ids, ids_offset), isz, capacity, &c));
  *count = c;
  if (c > capacity)
    return ps_set_error(ctx, PS_ERR_BUFFER_TOO_SMALL, "%" PRIu64 " rows are selected; the ids buffer holds %" PRIu64, c,
                        capacity);
  return PS_OK;
}

/* ---- late materialization ------------------------------------------------------ */

static ps_status gather_common(ps_context *ctx, const ps_column *col, ps_index_type type, uint32_t *out_type,
                               uint32_t *value_bytes) {
  PS_TRY(need_op(ctx, (const void *)ctx->ops->gather, "gather"));
  if (!col) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "column is NULL");
  if (col->ctx != ctx) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "column belongs to another context");
  if (type != PS_INDEX_UINT32 && type != PS_INDEX_UINT64)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "index type %d is not PS_INDEX_UINT32 or PS_INDEX_UINT64",
                        (int)type);
  if (col->type == PS_TYPE_STRING) {
    if (col->dict.count > ((uint64_t)1 << 32))
      return ps_set_error(ctx, PS_ERR_LIMIT, "dictionary of %" PRIu64 " entries: indexes do not fit uint32",
                          col->dict.count);
    *out_type = PS_GATHER_CODE32, *value_bytes = 4;
  } else if (col->type == PS_TYPE_FLOAT64) {
    *out_type = PS_GATHER_F64, *value_bytes = 8;
  } else if (col->type == PS_TYPE_FLOAT32) {
    *out_type = PS_GATHER_F32, *value_bytes = 4;
  } else {
    *out_type = PS_GATHER_INT, *value_bytes = (uint32_t)ps_type_size(col->type);
  }
  return PS_OK;
}

/* A gather's arguments (the column's whole data and validity). */
static ps_gather_args gather_args(const ps_column *col, ps_devmem ids, uint32_t isz, uint64_t count, uint32_t out_type,
                                  uint32_t vb, ps_devmem values, ps_devmem validity) {
  ps_gather_args a;
  memset(&a, 0, sizeof a);
  a.col = ps_prog_col_of(col);
  a.data = col->data;
  a.validity = col->validity;
  a.ids = ids;
  a.index_bytes = isz;
  a.count = count;
  a.rows = col->n;
  a.out_type = out_type;
  a.value_bytes = vb;
  a.values = values;
  a.validity_out = validity;
  return a;
}

/* A gather from a host-resident column: its rows are wherever the ids say,
 * so the codes are read on the host (the reference backend's decoding),
 * never copied whole to the device. ids, values and validity host memory;
 * values and validity written only on success. */
static ps_status gather_host_column(ps_context *ctx, const ps_column *col, const void *ids, uint32_t isz,
                                    uint64_t count, uint32_t out_type, uint32_t vb, void *values, uint8_t *validity) {
  uint8_t *v = ps_host_alloc(ctx, (size_t)(count * vb));
  uint8_t *valid = validity ? ps_host_alloc(ctx, (size_t)bitmap_bytes(count)) : NULL;
  ps_status st = PS_OK;
  if (!v || (validity && !valid))
    st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "gathering %" PRIu64 " values on the host", count);
  if (st == PS_OK) {
    ps_gather_args a = gather_args(col, (ps_devmem){(void *)(uintptr_t)ids, 0}, isz, count, out_type, vb,
                                   (ps_devmem){v, 0}, (ps_devmem){valid, 0});
    ps_column *one = (ps_column *)col;
    ctx->corrupt_cols = (ps_column *const *)&one, ctx->corrupt_ncols = 1, ctx->corrupt_base = 0;
    ctx->corrupt_expr = NULL;
    st = ps_gather_in_host_memory(ctx, &a);
    ctx->corrupt_cols = NULL, ctx->corrupt_ncols = 0;
  }
  if (st == PS_OK) {
    memcpy(values, v, (size_t)(count * vb));
    if (validity) memcpy(validity, valid, (size_t)bitmap_bytes(count));
  }
  ps_host_free(ctx, v);
  ps_host_free(ctx, valid);
  return st;
}

static ps_status gather_run(ps_context *ctx, const ps_column *col, ps_devmem ids, uint32_t isz, uint64_t count,
                            uint32_t out_type, uint32_t vb, ps_devmem values, ps_devmem validity);

/* A lossless float column (float_map.c): the kernels gather its codes, the
 * host decodes them (grid arithmetic or the exception table) and writes the
 * values where they were asked for. */
static ps_status gather_mapped(ps_context *ctx, const ps_column *col, ps_devmem ids, uint32_t isz, uint64_t count,
                               uint32_t vb, ps_devmem values, ps_devmem validity) {
  ps_buffer *tmp = NULL;
  uint64_t *codes = ps_calloc_ctx(ctx, (size_t)count, sizeof *codes);
  uint8_t *out = ps_calloc_ctx(ctx, (size_t)count, vb);
  ps_status st = codes && out ? ps_buffer_create(ctx, count * 8, &tmp)
                              : ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "decoding %" PRIu64 " gathered floats", count);
  if (st == PS_OK) st = gather_run(ctx, col, ids, isz, count, PS_GATHER_INT, 8, tmp->mem, validity);
  if (st == PS_OK) st = ctx->ops->mem_read(ctx->be, codes, tmp->mem, count * 8);
  for (uint64_t i = 0; st == PS_OK && i < count; i++) {
    const double v = ps_column_code_double(col, codes[i]);
    if (vb == 8)
      memcpy(out + i * 8, &v, 8);
    else {
      const float f = (float)v;
      memcpy(out + i * 4, &f, 4);
    }
  }
  if (st == PS_OK) st = ctx->ops->mem_write(ctx->be, values, out, count * vb);
  ps_buffer_destroy(tmp);
  ps_host_free(ctx, codes);
  ps_host_free(ctx, out);
  return st;
}

static ps_status gather_run(ps_context *ctx, const ps_column *col, ps_devmem ids, uint32_t isz, uint64_t count,
                            uint32_t out_type, uint32_t vb, ps_devmem values, ps_devmem validity) {
  if (col->fmap.map != PS_FLOAT_MAP_DECIMAL && out_type != PS_GATHER_INT)
    return gather_mapped(ctx, col, ids, isz, count, vb, values, validity);
  if (col->host) { /* ids from the device, the values back to it */
    uint8_t *hids = ps_host_alloc(ctx, (size_t)(count * isz));
    uint8_t *hv = ps_host_alloc(ctx, (size_t)(count * vb));
    uint8_t *hvalid = validity.handle ? ps_host_alloc(ctx, (size_t)bitmap_bytes(count)) : NULL;
    ps_status st = PS_OK;
    if (!hids || !hv || (validity.handle && !hvalid))
      st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "gathering %" PRIu64 " values on the host", count);
    if (st == PS_OK) st = ctx->ops->mem_read(ctx->be, hids, ids, count * isz);
    if (st == PS_OK) st = gather_host_column(ctx, col, hids, isz, count, out_type, vb, hv, hvalid);
    if (st == PS_OK) st = ctx->ops->mem_write(ctx->be, values, hv, count * vb);
    if (st == PS_OK && hvalid) st = ctx->ops->mem_write(ctx->be, validity, hvalid, bitmap_bytes(count));
    ps_host_free(ctx, hids);
    ps_host_free(ctx, hv);
    ps_host_free(ctx, hvalid);
    return st;
  }
  ps_gather_args a = gather_args(col, ids, isz, count, out_type, vb, values, validity);
  ps_column *one = (ps_column *)col;
  ctx->corrupt_cols = (ps_column *const *)&one, ctx->corrupt_ncols = 1, ctx->corrupt_base = 0;
  ctx->corrupt_expr = NULL;
  ps_status st = ctx->ops->gather(ctx->be, &a);
  ctx->corrupt_cols = NULL, ctx->corrupt_ncols = 0;
  return st;
}

ps_status ps_gather_values_device(ps_context *ctx, const ps_column *col, const ps_buffer *ids, uint64_t ids_offset,
                                  ps_index_type type, uint64_t count, ps_buffer *values, uint64_t values_offset,
                                  ps_buffer *validity, uint64_t validity_offset) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (ctx->group) return ps_group_unsupported(ctx, "ps_gather_values_device");
  uint32_t out_type = 0, vb = 0;
  PS_TRY(gather_common(ctx, col, type, &out_type, &vb));
  uint32_t isz = (uint32_t)type;
  if (count > UINT64_MAX / 8)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "count %" PRIu64 " is too large", count);
  if (count == 0) return PS_OK;
  PS_TRY(check_place(ctx, ids, ids_offset, count * isz, isz, "ids"));
  PS_TRY(check_place(ctx, values, values_offset, count * vb, vb, "values"));
  if (validity) PS_TRY(check_place(ctx, validity, validity_offset, bitmap_bytes(count), 4, "validity"));
  return gather_run(ctx, col, at(ids, ids_offset), isz, count, out_type, vb, at(values, values_offset),
                    validity ? at(validity, validity_offset) : PS_NO_MEM);
}

/* Host gather into the column's plain values; validity optional. */
static ps_status gather_host(ps_context *ctx, const ps_column *col, const void *ids, ps_index_type type, uint64_t count,
                             void *values, uint8_t *validity) {
  uint32_t out_type = 0, vb = 0;
  PS_TRY(gather_common(ctx, col, type, &out_type, &vb));
  if (count == 0) return PS_OK;
  if (!ids || !values) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s is NULL", ids ? "values" : "ids");
  uint32_t isz = (uint32_t)type;
  if (count > UINT64_MAX / 8)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "count %" PRIu64 " is too large", count);
  if (ctx->group) return ps_group_gather(ctx, col, ids, type, count, values, validity);
  /* (a lossless float column is decoded after its codes are gathered: gather_run) */
  if (col->host && col->fmap.map == PS_FLOAT_MAP_DECIMAL)
    return gather_host_column(ctx, col, ids, isz, count, out_type, vb, values, validity);
  ps_buffer *dids = NULL, *dval = NULL, *dvalid = NULL;
  ps_status st = ps_buffer_create(ctx, count * isz, &dids);
  if (st == PS_OK) st = ps_buffer_create(ctx, count * vb, &dval);
  if (st == PS_OK && validity) st = ps_buffer_create(ctx, bitmap_bytes(count), &dvalid);
  if (st == PS_OK) st = ctx->ops->mem_write(ctx->be, dids->mem, ids, count * isz);
  if (st == PS_OK)
    st = gather_run(ctx, col, dids->mem, isz, count, out_type, vb, dval->mem, dvalid ? dvalid->mem : PS_NO_MEM);
  if (st == PS_OK) st = ctx->ops->mem_read(ctx->be, values, dval->mem, count * vb);
  if (st == PS_OK && validity) st = ctx->ops->mem_read(ctx->be, validity, dvalid->mem, bitmap_bytes(count));
  ps_buffer_destroy(dids);
  ps_buffer_destroy(dval);
  ps_buffer_destroy(dvalid);
  return st;
}

ps_status ps_gather_values(ps_context *ctx, const ps_column *col, const void *ids, ps_index_type type, uint64_t count,
                           void *values, uint8_t *validity) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  return gather_host(ctx, col, ids, type, count, values, validity);
}

ps_status ps_gather_strings(ps_context *ctx, const ps_column *col, const void *ids, ps_index_type type, uint64_t count,
                            int64_t **offsets, uint8_t **bytes, uint8_t *validity) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!offsets || !bytes)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s is NULL", offsets ? "bytes" : "offsets");
  if (!col || col->type != PS_TYPE_STRING)
    return ps_set_error(ctx, col ? PS_ERR_TYPE_MISMATCH : PS_ERR_INVALID_ARGUMENT,
                        "ps_gather_strings needs a dictionary column");
  /* count + 1 offsets must not wrap (no ids array can hold that many). */
  if (count >= SIZE_MAX / sizeof(int64_t))
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "count is %" PRIu64 "; no ids array holds that many", count);
  if (ctx->group) {
    if (count && !ids) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "ids is NULL");
    if (col->ctx != ctx) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "column belongs to another context");
    return ps_group_gather_strings(ctx, col, ids, type, count, offsets, bytes, validity);
  }
  /* Indexes are gathered on the device; the strings come from the host copy
   * of the dictionary (it is small next to the column). */
  uint32_t *idx = ps_calloc_ctx(ctx, (size_t)(count ? count : 1), sizeof *idx);
  uint8_t *valid = ps_calloc_ctx(ctx, (size_t)bitmap_bytes(count ? count : 1), 1);
  int64_t *offs = ps_calloc_ctx(ctx, (size_t)count + 1, sizeof *offs);
  ps_status st = (!idx || !valid || !offs)
                     ? ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "gathering %" PRIu64 " strings", count)
                     : gather_host(ctx, col, ids, type, count, idx, valid);
  uint64_t total = 0;
  for (uint64_t i = 0; st == PS_OK && i < count; i++) {
    bool v = (valid[i / 8] >> (i % 8)) & 1;
    if (v) total += col->dict.offsets[idx[i] + 1] - col->dict.offsets[idx[i]];
    offs[i + 1] = (int64_t)total;
  }
  uint8_t *out = st == PS_OK ? ps_host_alloc(ctx, (size_t)total) : NULL;
  if (st == PS_OK && !out) st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating %" PRIu64 " string bytes", total);
  for (uint64_t i = 0; st == PS_OK && i < count; i++) {
    uint64_t len = (uint64_t)(offs[i + 1] - offs[i]);
    if (len) memcpy(out + offs[i], col->dict.bytes + col->dict.offsets[idx[i]], (size_t)len);
  }
  if (st == PS_OK && validity && count) memcpy(validity, valid, (size_t)bitmap_bytes(count));
  ps_host_free(ctx, idx);
  ps_host_free(ctx, valid);
  if (st != PS_OK) {
    ps_host_free(ctx, offs);
    ps_host_free(ctx, out);
    return st;
  }
  *offsets = offs;
  *bytes = out;
  return PS_OK;
}

/* ---- aggregates ------------------------------------------------------------------ */

ps_status ps_aggregate(ps_context *ctx, const ps_column *col, const ps_buffer *selection, uint64_t selection_offset,
                       ps_aggregates *out) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!out) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "out is NULL");
  PS_TRY(need_op(ctx, (const void *)ctx->ops->reduce, "aggregates"));
  if (!col) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "column is NULL");
  if (col->ctx != ctx) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "column belongs to another context");
  if (col->type == PS_TYPE_STRING)
    return ps_set_error(ctx, PS_ERR_TYPE_MISMATCH,
                        "aggregates need a numeric (FOR) column; the column is a string column");
  if (ctx->group)
    return selection ? ps_group_unsupported(ctx, "ps_aggregate over a selection") : ps_group_aggregate(ctx, col, NULL, out);
  if (selection) PS_TRY(check_place(ctx, selection, selection_offset, bitmap_bytes(col->n), 4, "selection"));
  ps_aggregates r;
  PS_TRY(ps_aggregate_codes(ctx, col, selection, selection_offset, &r));
  if (r.count && col->fmap.map != PS_FLOAT_MAP_DECIMAL) {
    /* a lossless float column: its exact sum, by the query's kernels */
    uint64_t sum[4], count = 0;
    bool unrep = false;
    PS_TRY(ps_query_float_sum(ctx, (ps_column *)col, selection, selection_offset, ps_query_float_sum_unit(col), sum,
                              &count, &unrep));
    r.sum_double = unrep ? NAN : ps_query_exact_double(sum, ps_query_float_sum_unit(col), 1);
  }
  *out = r;
  return PS_OK;
}

ps_status ps_aggregate_codes(ps_context *ctx, const ps_column *col, const ps_buffer *selection,
                             uint64_t selection_offset, ps_aggregates *out) {
  uint64_t count = 0, min_code = UINT64_MAX, max_code = 0;
  u128 sum = 0;
  ps_prog_col base = ps_prog_col_of(col);
  ps_column *const one_col = (ps_column *)col;
  const uint64_t step = ps_chunk_step(ctx, &one_col, 1); /* chunks start where the column's may */
  ps_stage_forget(ctx);
  for (uint64_t r0 = 0; r0 < col->n; r0 += step) {
    ps_reduce_args a;
    memset(&a, 0, sizeof a);
    a.col = base;
    a.rows = col->n - r0 < step ? col->n - r0 : step;
    ps_stage_begin(ctx);
    PS_TRY(ps_column_chunk(ctx, col, r0, a.rows, &a.col, &a.data, &a.validity));
    if (r0 + a.rows < col->n) { /* the next chunk's copy overlaps this one's reduction */
      const uint64_t next = col->n - r0 - a.rows < step ? col->n - r0 - a.rows : step;
      PS_TRY(ps_stage_prefetch(ctx, &one_col, 1, r0 + a.rows, next));
    }
    if (selection) a.selection = at(selection, selection_offset + r0 / 8);
    uint64_t c = 0, mn = UINT64_MAX, mx = 0, lo = 0, hi = 0;
    a.count = &c, a.min_code = &mn, a.max_code = &mx, a.sum_lo = &lo, a.sum_hi = &hi;
    ps_column *one = (ps_column *)col;
    ctx->corrupt_cols = (ps_column *const *)&one, ctx->corrupt_ncols = 1, ctx->corrupt_base = r0;
    ctx->corrupt_expr = NULL;
    ps_status st = ctx->ops->reduce(ctx->be, &a);
    ps_status released = ps_stage_end(ctx);
    if (st == PS_OK) st = released;
    ctx->corrupt_cols = NULL, ctx->corrupt_ncols = 0;
    PS_TRY(st);
    ps_progress(ctx, r0 + a.rows, col->n);
    if (c) {
      count += c;
      if (mn < min_code) min_code = mn;
      if (mx > max_code) max_code = mx;
      sum += ((u128)hi << 64) | lo;
    }
  }
  ps_aggregates r;
  memset(&r, 0, sizeof r);
  r.type = col->type;
  r.scale = col->scale;
  r.count = count;
  if (count) {
    r.has_value = 1;
    /* value sum = count * M + sum(codes), exact in 128 bits for any realistic n */
    i128 m = ps_type_is_unsigned(col->type) ? (i128)col->reference.u : (i128)col->reference.i;
    i128 total = (i128)count * m + (i128)sum;
    r.sum_lo = (uint64_t)total;
    r.sum_hi = (int64_t)(total >> 64);
    r.sum_fits_int64 = total >= INT64_MIN && total <= INT64_MAX;
    r.sum_int64 = r.sum_fits_int64 ? (int64_t)total : 0;
    static const double pow10[] = PS_POW10_TABLE;
    if (col->fmap.map != PS_FLOAT_MAP_DECIMAL) { /* the codes' sum means nothing (see ps_aggregates) */
      r.sum_lo = 0, r.sum_hi = 0, r.sum_fits_int64 = 0, r.sum_int64 = 0;
      r.sum_double = NAN;
      r.min.f = ps_column_code_double(col, min_code);
      r.max.f = ps_column_code_double(col, max_code);
      *out = r;
      return PS_OK;
    }
    r.sum_double = ps_type_is_float(col->type) || ps_type_is_decimal(col->type) ? (double)total / pow10[col->scale]
                                                                                : (double)total;
    uint64_t ref = ps_type_is_unsigned(col->type) ? col->reference.u : (uint64_t)col->reference.i;
    if (ps_type_is_float(col->type)) {
      r.min.f = ps_decode_double(col->type, ref, col->scale, min_code);
      r.max.f = ps_decode_double(col->type, ref, col->scale, max_code);
    } else if (ps_type_is_signed(col->type)) {
      r.min.i = (int64_t)(ref + min_code);
      r.max.i = (int64_t)(ref + max_code);
    } else {
      r.min.u = ref + min_code;
      r.max.u = ref + max_code;
    }
  }
  *out = r;
  return PS_OK;
}
