/* Streaming host-resident columns (ps_column_create_for_host) through the
 * device. A chunk's codes and validity are copied into one of
 * PS_STAGE_SLOTS device buffers, taken in turn, by the backend's
 * asynchronous stage_write; the kernels of the chunk read them there, and
 * stage_release marks the slot free once those kernels are enqueued. With
 * three slots, the copy of chunk k + 1 runs while chunk k computes and
 * chunk k - 1's slot drains. Chunks are the calls' own chunks (sized by
 * ps_chunk_step to fit a slot), so results combine exactly as chunked
 * results already do, and runs the zone maps decide are never copied. */
#include <inttypes.h>
#include <string.h>

#include "internal.h"

/* Every piece starts on this many bytes of its slot (kernels read 32- and
 * 64-bit words; 64 keeps a piece on a cache line). */
#define STAGE_ALIGN 64u
#define STAGE_DEFAULT_SLOT_BYTES ((uint64_t)64 << 20)

static uint64_t align_up(uint64_t x) { return (x + STAGE_ALIGN - 1) / STAGE_ALIGN * STAGE_ALIGN; }

static uint64_t slot_bytes(const ps_context *ctx) {
  if (!ctx->device_memory_limit) return STAGE_DEFAULT_SLOT_BYTES;
  return ctx->device_memory_limit / PS_STAGE_SLOTS / STAGE_ALIGN * STAGE_ALIGN;
}

/* The bytes a chunk of `rows` rows from r0 stages of column c: its codes and
 * its validity, each read by the kernels in 32-bit words, so whole words of
 * the chunk's row words, but never past the column's end. */
static void chunk_bytes(const ps_column *c, uint64_t r0, uint64_t rows, uint64_t *data, uint64_t *valid) {
  const uint64_t words = (rows + 31) / 32;
  const uint64_t skip = ps_chunk_data_offset(c->encoding, c->width, r0);
  *data = words * c->width * 4;
  if (*data > c->data_size - skip) *data = c->data_size - skip;
  *valid = 0;
  if (c->validity.handle) {
    *valid = words * 4;
    if (*valid > c->validity_size - r0 / 8) *valid = c->validity_size - r0 / 8;
  }
}

uint64_t ps_stage_rows(const ps_context *ctx, ps_column *const *cols, uint32_t n, uint64_t m) {
  uint64_t per_word = 0, pieces = 0; /* bytes per 32 rows, pieces per chunk */
  for (uint32_t i = 0; i < n; i++) {
    if (!cols[i]->host) continue;
    per_word += (uint64_t)cols[i]->width * 4 + (cols[i]->validity.handle ? 4 : 0);
    pieces += 1 + (cols[i]->validity.handle != NULL);
  }
  if (!per_word) return UINT64_MAX;
  const uint64_t slot = slot_bytes(ctx), overhead = pieces * STAGE_ALIGN;
  uint64_t rows = slot > overhead ? (slot - overhead) / per_word * 32 : 0;
  rows -= rows % m;
  return rows ? rows : m;
}

void ps_stage_begin(ps_context *ctx) {
  if (ctx->stage_slot >= 0) (void)ps_stage_end(ctx); /* a chunk abandoned by a failed call */
}

void ps_stage_forget(ps_context *ctx) {
  (void)ps_stage_end(ctx);
  for (uint32_t i = 0; i < PS_STAGE_SLOTS; i++) ctx->stage_slots[i].count = 0;
}

ps_status ps_stage_end(ps_context *ctx) {
  if (ctx->stage_slot < 0) return PS_OK;
  const uint32_t slot = (uint32_t)ctx->stage_slot;
  ctx->stage_slot = -1;
  ctx->stage_slots[slot].count = 0; /* nothing in it is looked up again */
  if (ctx->stage_next == slot) ctx->stage_next = (slot + 1) % PS_STAGE_SLOTS;
  return ctx->ops->stage_release ? ctx->ops->stage_release(ctx->be, slot) : PS_OK;
}

/* Takes slot for a new chunk: empty, its buffer made on first use. */
static ps_status open_slot(ps_context *ctx, uint32_t slot) {
  if (!ctx->stage[slot]) {
    ctx->stage_bytes = slot_bytes(ctx);
    PS_TRY(ps_buffer_create(ctx, ctx->stage_bytes, &ctx->stage[slot]));
  }
  ctx->stage_slots[slot].fill = 0;
  ctx->stage_slots[slot].count = 0;
  return PS_OK;
}

/* Copies `bytes` of host memory into slot; *at names them there. */
static ps_status stage_piece(ps_context *ctx, uint32_t slot, const uint8_t *src, uint64_t bytes, ps_devmem *at) {
  struct ps_stage_slot *s = &ctx->stage_slots[slot];
  if (bytes > ctx->stage_bytes - s->fill)
    return ps_set_error(ctx, PS_ERR_LIMIT,
                        "a chunk of host-resident columns needs more than a staging buffer's %" PRIu64
                        " bytes (options.device_memory_limit is %" PRIu64 "; raise it)",
                        ctx->stage_bytes, ctx->device_memory_limit);
  *at = ctx->stage[slot]->mem;
  at->offset += s->fill;
  s->fill += align_up(bytes);
  if (!bytes) return PS_OK;
  if (ctx->ops->stage_write) return ctx->ops->stage_write(ctx->be, slot, *at, src, bytes);
  return ctx->ops->mem_write(ctx->be, *at, src, bytes);
}

/* Stages the rows [r0, r0 + rows) of host column c into slot and records
 * where they are. */
static ps_status stage_chunk_of(ps_context *ctx, uint32_t slot, const ps_column *c, uint64_t r0, uint64_t rows,
                                const struct ps_staged_piece **out) {
  struct ps_stage_slot *s = &ctx->stage_slots[slot];
  if (s->count == PS_MAX_COLS)
    return ps_set_error(ctx, PS_ERR_INTERNAL, "more than %d host-resident columns staged for one chunk", PS_MAX_COLS);
  struct ps_staged_piece *p = &s->pieces[s->count];
  memset(p, 0, sizeof *p);
  p->col = c, p->r0 = r0, p->rows = rows;
  const uint64_t skip = ps_chunk_data_offset(c->encoding, c->width, r0);
  const uint8_t *host_data = (const uint8_t *)c->data.handle;
  const uint8_t *host_valid = (const uint8_t *)c->validity.handle;
  chunk_bytes(c, r0, rows, &p->data_bytes, &p->validity_bytes);
  PS_TRY(stage_piece(ctx, slot, host_data ? host_data + skip : NULL, p->data_bytes, &p->data));
  if (host_valid) PS_TRY(stage_piece(ctx, slot, host_valid + r0 / 8, p->validity_bytes, &p->validity));
  s->count++;
  *out = p;
  return PS_OK;
}

static const struct ps_staged_piece *find_piece(const ps_context *ctx, uint32_t slot, const ps_column *c, uint64_t r0,
                                                uint64_t rows) {
  const struct ps_stage_slot *s = &ctx->stage_slots[slot];
  for (uint32_t i = 0; i < s->count; i++)
    if (s->pieces[i].col == c && s->pieces[i].r0 == r0 && s->pieces[i].rows == rows) return &s->pieces[i];
  return NULL;
}

ps_status ps_stage_column(ps_context *ctx, const ps_column *c, uint64_t r0, uint64_t rows, ps_prog_col *pc,
                          ps_devmem *data, ps_devmem *validity) {
  const uint64_t skip = ps_chunk_data_offset(c->encoding, c->width, r0);
  const uint8_t *host_data = (const uint8_t *)c->data.handle;
  const uint8_t *host_valid = (const uint8_t *)c->validity.handle;
  if (ctx->ops->host_map) { /* the device reads host memory in place */
    pc->data_bytes = c->data_size - skip;
    if (host_data) PS_TRY(ctx->ops->host_map(ctx->be, host_data + skip, data));
    if (host_valid) {
      pc->validity_bytes = c->validity_size - r0 / 8;
      PS_TRY(ctx->ops->host_map(ctx->be, host_valid + r0 / 8, validity));
    }
    return PS_OK;
  }
  const struct ps_staged_piece *p = NULL;
  if (ctx->stage_slot < 0) {
    /* the chunk's first column: copied already by a prefetch, or now into the next slot */
    const uint32_t slot = ctx->stage_next;
    if (!find_piece(ctx, slot, c, r0, rows)) PS_TRY(open_slot(ctx, slot));
    ctx->stage_slot = (int32_t)slot;
  }
  const uint32_t slot = (uint32_t)ctx->stage_slot;
  p = find_piece(ctx, slot, c, r0, rows);
  if (!p) PS_TRY(stage_chunk_of(ctx, slot, c, r0, rows, &p));
  pc->data_bytes = p->data_bytes;
  *data = p->data;
  if (host_valid) {
    pc->validity_bytes = p->validity_bytes;
    *validity = p->validity;
  }
  return PS_OK;
}

ps_status ps_stage_prefetch(ps_context *ctx, ps_column *const *cols, uint32_t n, uint64_t r0, uint64_t rows) {
  if (ctx->ops->host_map || ctx->stage_slot < 0) return PS_OK; /* nothing streams, or no chunk under way */
  bool any = false;
  for (uint32_t i = 0; i < n && !any; i++) any = cols[i]->host;
  if (!any) return PS_OK;
  const uint32_t slot = ((uint32_t)ctx->stage_slot + 1) % PS_STAGE_SLOTS;
  PS_TRY(open_slot(ctx, slot));
  ctx->stage_next = slot;
  for (uint32_t i = 0; i < n; i++) {
    const struct ps_staged_piece *p;
    if (cols[i]->host) PS_TRY(stage_chunk_of(ctx, slot, cols[i], r0, rows, &p));
  }
  return PS_OK;
}

void ps_stage_wait(ps_context *ctx) {
  /* A blocking read on the context's stream/queue returns after everything
   * enqueued before it, which waited for every copy. */
  for (uint32_t i = 0; i < PS_STAGE_SLOTS; i++) {
    if (!ctx->stage[i]) continue;
    uint8_t byte;
    (void)ctx->ops->mem_read(ctx->be, &byte, ctx->stage[i]->mem, 1);
    return;
  }
}

void ps_stage_free(ps_context *ctx) {
  ps_stage_wait(ctx);
  for (uint32_t i = 0; i < PS_STAGE_SLOTS; i++) {
    ps_buffer_destroy(ctx->stage[i]);
    ctx->stage[i] = NULL;
  }
}
