/* Evaluation: lower once, then run the program chunk by chunk. Chunks start
 * on multiples of 32 rows, so every chunk starts on a 32-bit word of every
 * packed stream, of every validity bitmap and of the result bitmap. */
#include <inttypes.h>
#include <string.h>

#include "internal.h"

ps_status ps_check_expr(ps_context *ctx, const ps_expr *expr) {
  if (!expr) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "expr is NULL");
  if (expr->ctx != ctx) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "expr belongs to another context");
  return PS_OK;
}

/* Uploads the aux words, except those a device LIKE fill writes anyway (a
 * dictionary's bitmap is 125 KB at 10^6 entries: tens of microseconds of
 * copy per call saved). Fills are in ascending aux_word order. */
static ps_status upload_aux(ps_context *ctx, const ps_lowered *low, ps_buffer *aux) {
  uint64_t pos = 0;
  for (uint32_t i = 0; i <= low->n_fills; i++) {
    uint64_t end = i < low->n_fills ? low->fills[i]->aux_word : low->prog.aux_words;
    if (end > pos) PS_TRY(ctx->ops->mem_write(ctx->be, (ps_devmem){aux->mem.handle, aux->mem.offset + pos * 4},
                                              low->aux + pos, (end - pos) * 4));
    if (i < low->n_fills) pos = end + (low->fills[i]->count + 31) / 32;
  }
  return PS_OK;
}

/* The LIKE dictionary passes lowering deferred to the device, each into its
 * SET bitmap in aux; the column's dictionary goes to the device on its first
 * such pass. Enqueued before the evaluation, on the same stream/queue. */
static ps_status run_like_fills(ps_context *ctx, const ps_lowered *low, ps_buffer *aux) {
  for (uint32_t i = 0; i < low->n_fills; i++) {
    const ps_like_fill *f = low->fills[i];
    PS_TRY(ps_column_device_dict(ctx, f->col));
    ps_like_dict_args a;
    memset(&a, 0, sizeof a);
    a.nfa = &f->nfa;
    a.offsets = f->col->dict_dev_offsets->mem;
    a.bytes = f->col->dict_dev_bytes->mem;
    a.first = f->col->reference.u;
    a.count = f->count;
    a.out = aux->mem;
    a.out.offset += (uint64_t)f->aux_word * 4;
    PS_TRY(ctx->ops->like_dict(ctx->be, &a));
  }
  return PS_OK;
}

ps_status ps_aux_buffer(ps_context *ctx, uint64_t bytes, ps_buffer **out) {
  ps_buffer *spare = ctx->spare_aux;
  if (spare && spare->size >= bytes && spare->size / 4 <= bytes) {
    ctx->spare_aux = NULL;
    *out = spare;
    return PS_OK;
  }
  return ps_buffer_create(ctx, bytes, out);
}

void ps_aux_release(ps_context *ctx, ps_buffer *buf) {
  if (!buf) return;
  if (ctx->spare_aux && ctx->spare_aux->size >= buf->size) {
    ps_buffer_destroy(buf);
    return;
  }
  ps_buffer_destroy(ctx->spare_aux); /* keep the larger one */
  ctx->spare_aux = buf;
}

/* Runs expr over all rows. Outputs (handle NULL: none): the bitmap, the
 * byte mask; input: a selection to AND in. */
ps_status ps_run_program(ps_context *ctx, const ps_expr *expr, ps_devmem bitmap, ps_devmem mask,
                         ps_devmem selection_in, uint64_t *count) {
  ps_expr *e = (ps_expr *)expr; /* the lowering cache is not part of the tree's value */
  if (!e->lowered) {
    ps_lowered *low = ps_calloc_ctx(ctx, 1, sizeof *low);
    if (!low) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a lowered program");
    ps_status st = ps_lower(ctx, expr, low);
    ps_buffer *aux = NULL;
    if (st == PS_OK && low->prog.aux_words) {
      st = ps_aux_buffer(ctx, (uint64_t)low->prog.aux_words * 4, &aux);
      if (st == PS_OK) st = upload_aux(ctx, low, aux);
      if (st == PS_OK) st = run_like_fills(ctx, low, aux);
    }
    if (st != PS_OK) {
      ps_aux_release(ctx, aux);
      ps_lowered_free(ctx, low);
      ps_host_free(ctx, low);
      return st;
    }
    e->lowered = low;
    e->aux_dev = aux;
  }
  const ps_lowered *lp = e->lowered;
  ps_lowered low = *lp;
  ps_buffer *aux = e->aux_dev;
  ps_status st = PS_OK;
  uint64_t n = expr->rows, total = 0;
  for (uint64_t r0 = 0; st == PS_OK && r0 < n; r0 += ctx->chunk_rows) {
    ps_eval_args a;
    memset(&a, 0, sizeof a);
    ps_program prog = low.prog;
    a.prog = &prog;
    a.rows = n - r0 < ctx->chunk_rows ? n - r0 : ctx->chunk_rows;
    a.row_begin = r0;
    for (uint32_t i = 0; i < prog.n_cols; i++) {
      const ps_column *c = low.cols[i];
      uint64_t skip = (r0 / 32) * c->width * 4; /* 32 rows are exactly w words */
      prog.cols[i].data_bytes = c->data_size - skip;
      a.data[i] = c->data;
      a.data[i].offset += skip;
      if (c->validity.handle) {
        prog.cols[i].validity_bytes = c->validity_size - r0 / 8;
        a.validity[i] = c->validity;
        a.validity[i].offset += r0 / 8;
      }
    }
    if (aux) a.aux = aux->mem;
    a.aux_host = low.aux;
    if (bitmap.handle) {
      a.bitmap = bitmap;
      a.bitmap.offset += r0 / 8;
    }
    if (mask.handle) {
      a.mask = mask;
      a.mask.offset += r0;
    }
    if (selection_in.handle) {
      a.selection_in = selection_in;
      a.selection_in.offset += r0 / 8;
    }
    uint64_t chunk_count = 0;
    a.count = count ? &chunk_count : NULL;
    st = ctx->ops->eval(ctx->be, &a);
    total += chunk_count;
  }
  if (st == PS_OK && count) *count = total;
  return st;
}

ps_status ps_filter(ps_context *ctx, const ps_expr *expr, uint8_t *bitmap, uint64_t bitmap_size, uint64_t *count) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  PS_TRY(ps_check_expr(ctx, expr));
  uint64_t bytes = expr->rows / 8 + (expr->rows % 8 != 0);
  if (!bitmap && bytes) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "bitmap is NULL");
  if (bitmap_size < bytes)
    return ps_set_error(ctx, PS_ERR_BUFFER_TOO_SMALL,
                        "bitmap_size is %" PRIu64 "; %" PRIu64 " rows need %" PRIu64 " bytes", bitmap_size,
                        expr->rows, bytes);
  /* The device writes into scratch; the caller's bitmap is written only on success. */
  ps_buffer *dev = NULL;
  PS_TRY(ps_buffer_create(ctx, bytes, &dev));
  uint64_t c = 0;
  ps_status st = ps_run_program(ctx, expr, dev->mem, PS_NO_MEM, PS_NO_MEM, count ? &c : NULL);
  if (st == PS_OK && bytes) st = ctx->ops->mem_read(ctx->be, bitmap, dev->mem, bytes);
  ps_buffer_destroy(dev);
  if (st == PS_OK && count) *count = c;
  return st;
}

ps_status ps_filter_device(ps_context *ctx, const ps_expr *expr, ps_buffer *bitmap, uint64_t offset, uint64_t *count) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  PS_TRY(ps_check_expr(ctx, expr));
  if (!bitmap) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "bitmap buffer is NULL");
  if (bitmap->ctx != ctx) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "bitmap buffer belongs to another context");
  if (offset % 4) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "offset %" PRIu64 " is not a multiple of 4", offset);
  uint64_t bytes = expr->rows / 8 + (expr->rows % 8 != 0);
  if (offset > bitmap->size || bytes > bitmap->size - offset)
    return ps_set_error(ctx, PS_ERR_BUFFER_TOO_SMALL,
                        "the bitmap of %" PRIu64 " rows needs %" PRIu64 " bytes at offset %" PRIu64
                        "; the buffer has %" PRIu64,
                        expr->rows, bytes, offset, bitmap->size);
  ps_devmem m = bitmap->mem;
  m.offset += offset;
  uint64_t c = 0;
  /* Without a count nothing needs the host: the call may return before the
   * device finishes (on the context's stream/queue). */
  ps_status st = ps_run_program(ctx, expr, m, PS_NO_MEM, PS_NO_MEM, count ? &c : NULL);
  if (st == PS_OK && count) *count = c;
  return st;
}

ps_status ps_filter_count(ps_context *ctx, const ps_expr *expr, uint64_t *count) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  PS_TRY(ps_check_expr(ctx, expr));
  if (!count) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "count is NULL");
  return ps_run_program(ctx, expr, PS_NO_MEM, PS_NO_MEM, PS_NO_MEM, count);
}
