/* Streaming host-resident columns (ps_column_create_for_host) through the
 * device. A chunk's codes and validity are copied into one of
 * PS_STAGE_SLOTS device buffers, taken in turn, by the backend's
 * asynchronous stage_write; the kernels of the chunk read them there after
 * stage_ready, and stage_release marks the slot free once those kernels are
 * enqueued. With three slots, the copy of chunk k + 1 (enqueued before chunk
 * k's kernels, which do not wait for it) runs while chunk k computes and
 * chunk k - 1's slot drains. Chunks are the calls' own chunks (sized by
 * ps_chunk_step to fit a slot), so results combine exactly as chunked
 * results already do, and runs the zone maps decide are never copied. A
 * DELTA column's chunk is whole blocks: their headers, rebased to the
 * chunk, and their payloads (stage_delta). */
#include <inttypes.h>
#include <stdio.h>
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

/* The bytes a chunk of `rows` rows from r0 stages of FOR column c's codes,
 * and of any column's validity: each read by the kernels in 32-bit words,
 * so whole words of the chunk's row words, but never past the column's
 * end. (A DELTA column's codes are its blocks': stage_delta.) */
static uint64_t chunk_data_bytes(const ps_column *c, uint64_t r0, uint64_t rows) {
  const uint64_t bytes = (rows + 31) / 32 * c->width * 4,
                 left = c->data_size - ps_chunk_data_offset(c->encoding, c->width, r0);
  return bytes < left ? bytes : left;
}

static uint64_t chunk_validity_bytes(const ps_column *c, uint64_t r0, uint64_t rows) {
  const uint64_t bytes = (rows + 31) / 32 * 4, left = c->validity_size - r0 / 8;
  return bytes < left ? bytes : left;
}

uint64_t ps_stage_rows(const ps_context *ctx, ps_column *const *cols, uint32_t n, uint64_t m) {
  /* bytes per m rows, pieces per chunk; m is a multiple of a DELTA column's
   * block when one is among cols (ps_chunk_step_multiple), and every block
   * of it stages at most its largest block's bytes */
  uint64_t per_m = 0, pieces = 0;
  for (uint32_t i = 0; i < n; i++) {
    const ps_column *c = cols[i];
    if (!c->host) continue;
    if (c->encoding == PS_ENC_DELTA)
      per_m += (m + PS_DELTA_BLOCK_ROWS - 1) / PS_DELTA_BLOCK_ROWS * c->delta_largest;
    else
      per_m += m / 32 * c->width * 4;
    if (c->validity.handle) per_m += m / 32 * 4, pieces++;
    pieces++;
  }
  if (!per_m) return UINT64_MAX;
  const uint64_t slot = slot_bytes(ctx), overhead = pieces * STAGE_ALIGN;
  const uint64_t rows = slot > overhead ? (slot - overhead) / per_m * m : 0;
  return rows ? rows : m; /* not even m rows fit: staging them refuses (stage_room) */
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
    /* ps_stage_wait reads a slot's first byte back as its barrier, and a
     * chunk whose pieces are all empty never writes it: a read of memory
     * nobody wrote (compute-sanitizer's initcheck reports it). */
    static const uint8_t zero = 0;
    ps_status st = ctx->ops->mem_write(ctx->be, ctx->stage[slot]->mem, &zero, 1);
    if (st != PS_OK) {
      ps_buffer_destroy(ctx->stage[slot]);
      ctx->stage[slot] = NULL;
      return st;
    }
  }
  ctx->stage_slots[slot].fill = 0;
  ctx->stage_slots[slot].count = 0;
  return PS_OK;
}

/* Takes `bytes` of slot for a piece of column c's chunk of `rows` rows
 * from r0; *at names them there. */
static ps_status stage_room(ps_context *ctx, uint32_t slot, const ps_column *c, uint64_t r0, uint64_t rows,
                            uint64_t bytes, ps_devmem *at) {
  struct ps_stage_slot *s = &ctx->stage_slots[slot];
  if (bytes > ctx->stage_bytes - s->fill) {
    char block[128] = "";
    if (c->encoding == PS_ENC_DELTA)
      snprintf(block, sizeof block, "; a DELTA column's chunk is whole blocks of %u rows, up to %" PRIu64 " bytes each",
               PS_DELTA_BLOCK_ROWS, c->delta_largest);
    return ps_set_error(ctx, PS_ERR_LIMIT,
                        "a chunk of host-resident columns (%" PRIu64 " rows from row %" PRIu64
                        ") needs more than a staging buffer's %" PRIu64
                        " bytes (options.device_memory_limit is %" PRIu64 "; raise it)%s",
                        rows, r0, ctx->stage_bytes, ctx->device_memory_limit, block);
  }
  *at = ctx->stage[slot]->mem;
  at->offset += s->fill;
  s->fill += align_up(bytes);
  return PS_OK;
}

/* Copies `bytes` of host memory at src to `at`, inside slot. */
static ps_status stage_copy(ps_context *ctx, uint32_t slot, ps_devmem at, const uint8_t *src, uint64_t bytes) {
  if (!bytes) return PS_OK;
  if (ctx->ops->stage_write) return ctx->ops->stage_write(ctx->be, slot, at, src, bytes);
  return ctx->ops->mem_write(ctx->be, at, src, bytes);
}

/* Where a host-resident DELTA column's chunk no longer has the blocks its
 * creation checked (the caller changed the headers). */
static ps_status delta_changed(ps_context *ctx, const ps_column *c, uint64_t b0, uint64_t blocks) {
  return ps_set_error(ctx, PS_ERR_CORRUPT_DATA,
                      "a host-resident DELTA column's block headers changed since it was made: blocks %" PRIu64
                      "..%" PRIu64 " do not lay out their payloads one after another inside its %" PRIu64
                      " bytes, each at most its largest block then (%" PRIu64 " bytes with the header)",
                      b0, b0 + blocks - 1, c->data_size, c->delta_largest);
}

/* Stages the blocks of DELTA column c that the rows [r0, r0 + rows) lie in,
 * as one piece that the readers take from its first byte (ps_delta_chunk):
 * their headers, rebased, then their payloads, straight from the caller's
 * memory. The rebased headers are copied from the column's own copy of
 * them (c->delta_staged), which must stay as it is while a copy may read
 * it: an entry changes only where its block's chunk did (another chunking,
 * or headers the caller changed), and if the block was staged since the
 * last ps_stage_wait, only after another one. So a call that chunks a
 * column as the call before it did waits for nothing, and one that chunks
 * it otherwise waits once. */
static ps_status stage_delta(ps_context *ctx, uint32_t slot, const ps_column *c, uint64_t r0, uint64_t rows,
                             struct ps_staged_piece *p) {
  /* made and kept by calls that hold the column as const: a context (and
   * all it made) is used by one thread at a time */
  ps_column *col = (ps_column *)c;
  const uint64_t b0 = r0 / PS_DELTA_BLOCK_ROWS, blocks = ps_delta_blocks(r0 + rows) - b0;
  const uint64_t hb = blocks * PS_DELTA_HEADER_BYTES, all = ps_delta_blocks(c->n);
  const uint8_t *host_data = (const uint8_t *)c->data.handle;
  if (!col->delta_staged) {
    col->delta_staged = ps_calloc_ctx(ctx, (size_t)all, PS_DELTA_HEADER_BYTES + sizeof(uint64_t));
    if (!col->delta_staged)
      return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY,
                          "allocating the staged block headers of a DELTA column (%" PRIu64 " blocks)", all);
    col->delta_staged_at = (uint64_t *)(void *)(col->delta_staged + all * PS_DELTA_HEADER_BYTES);
  }
  uint8_t *rebased = ps_host_alloc(ctx, (size_t)hb + 1);
  if (!rebased) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "rebasing %" PRIu64 " DELTA block headers", blocks);
  uint64_t at = 0, payload = 0;
  if (!ps_delta_chunk(host_data + b0 * PS_DELTA_HEADER_BYTES, b0, blocks, c->data_size, c->delta_largest, rebased, &at,
                      &payload)) {
    ps_host_free(ctx, rebased);
    return delta_changed(ctx, c, b0, blocks);
  }
  uint8_t *kept = col->delta_staged + b0 * PS_DELTA_HEADER_BYTES;
  uint64_t *staged_at = col->delta_staged_at + b0;
  for (uint64_t i = 0; i < blocks; i++) {
    uint8_t *k = kept + i * PS_DELTA_HEADER_BYTES;
    const uint8_t *want = rebased + i * PS_DELTA_HEADER_BYTES;
    if (memcmp(k, want, PS_DELTA_HEADER_BYTES) != 0) {
      if (staged_at[i] == ctx->stage_waits + 1) ps_stage_wait(ctx); /* a copy in flight may read k */
      memcpy(k, want, PS_DELTA_HEADER_BYTES);
    }
    staged_at[i] = ctx->stage_waits + 1;
  }
  ps_host_free(ctx, rebased);
  p->data_bytes = hb + payload;
  PS_TRY(stage_room(ctx, slot, c, r0, rows, p->data_bytes, &p->data));
  PS_TRY(stage_copy(ctx, slot, p->data, kept, hb));
  ps_devmem payloads = p->data;
  payloads.offset += hb;
  return stage_copy(ctx, slot, payloads, host_data + at, payload);
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
  const uint8_t *host_data = (const uint8_t *)c->data.handle;
  const uint8_t *host_valid = (const uint8_t *)c->validity.handle;
  if (c->encoding == PS_ENC_DELTA) {
    PS_TRY(stage_delta(ctx, slot, c, r0, rows, p));
  } else {
    p->data_bytes = chunk_data_bytes(c, r0, rows);
    PS_TRY(stage_room(ctx, slot, c, r0, rows, p->data_bytes, &p->data));
    if (host_data)
      PS_TRY(
          stage_copy(ctx, slot, p->data, host_data + ps_chunk_data_offset(c->encoding, c->width, r0), p->data_bytes));
  }
  if (host_valid) {
    p->validity_bytes = chunk_validity_bytes(c, r0, rows);
    PS_TRY(stage_room(ctx, slot, c, r0, rows, p->validity_bytes, &p->validity));
    PS_TRY(stage_copy(ctx, slot, p->validity, host_valid + r0 / 8, p->validity_bytes));
  }
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
    if (c->encoding == PS_ENC_DELTA) { /* checked as a staged chunk is */
      const uint64_t b0 = r0 / PS_DELTA_BLOCK_ROWS, blocks = ps_delta_blocks(r0 + rows) - b0;
      uint64_t at, payload;
      if (!ps_delta_chunk(host_data + skip, b0, blocks, c->data_size, c->delta_largest, NULL, &at, &payload))
        return delta_changed(ctx, c, b0, blocks);
    }
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
  /* The kernels that read the piece wait for its copies, and only they: a
   * prefetch's copies (the next chunk's, enqueued before these kernels) do
   * not hold them back. */
  if (ctx->ops->stage_ready) PS_TRY(ctx->ops->stage_ready(ctx->be, slot));
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
  ctx->stage_waits++;
  /* A blocking read on the context's stream/queue returns after everything
   * enqueued before it, which is made to wait for every copy. */
  for (uint32_t i = 0; ctx->ops->stage_ready && i < PS_STAGE_SLOTS; i++)
    if (ctx->stage[i]) (void)ctx->ops->stage_ready(ctx->be, i);
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
