/* Evaluation: lower once, then run the program chunk by chunk. Chunks start
 * on multiples of 32 rows (of a DELTA column's block: ps_chunk_step), so
 * every chunk starts on a 32-bit word of every validity bitmap and of the
 * result bitmap, and where its columns' codes can be found
 * (ps_chunk_data_offset). */
#include <inttypes.h>
#include <stdio.h>
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
    if (end > pos)
      PS_TRY(ctx->ops->mem_write(ctx->be, (ps_devmem){aux->mem.handle, aux->mem.offset + pos * 4}, low->aux + pos,
                                 (end - pos) * 4));
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

/* Lowers expr once; the program and its device aux words stay with the
 * expression (the lowering cache is not part of the tree's value). */
static ps_status ensure_lowered(ps_context *ctx, const ps_expr *expr) {
  ps_expr *e = (ps_expr *)expr;
  if (e->lowered) return PS_OK;
  ps_lowered *low = ps_calloc_ctx(ctx, 1, sizeof *low);
  if (!low) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a lowered program");
  ps_status st = ps_lower(ctx, expr, low);
  if (st == PS_OK) st = ps_program_check(ctx, &low->prog, low->aux);
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
  return PS_OK;
}

ps_status ps_expr_prepare(ps_context *ctx, const ps_expr *expr) { return ensure_lowered(ctx, expr); }

/* The inputs of the `rows` rows from r0 (a multiple of 32; at most a
 * chunk): every column at its chunk start; *prog is the copy of the program a->prog points at
 * (its byte counts are the chunk's). Outputs are left empty. */
static ps_status chunk_args(ps_context *ctx, const ps_expr *expr, uint64_t r0, uint64_t rows, ps_program *prog,
                            ps_eval_args *a) {
  const ps_lowered *low = expr->lowered;
  memset(a, 0, sizeof *a);
  *prog = low->prog;
  a->prog = prog;
  a->rows = rows;
  a->row_begin = r0;
  ctx->scan_stats.rows_scanned += rows;
  for (uint32_t i = 0; i < prog->n_cols; i++) ctx->scan_stats.bytes_read += ps_scan_bytes(low->cols[i], rows);
  ctx->corrupt_cols = low->cols, ctx->corrupt_ncols = prog->n_cols, ctx->corrupt_base = r0;
  ctx->corrupt_expr = expr;
  a->for_only = 1;
  for (uint32_t i = 0; i < prog->n_cols; i++) {
    PS_TRY(ps_column_chunk(ctx, low->cols[i], r0, rows, &prog->cols[i], &a->data[i], &a->validity[i]));
    if (prog->cols[i].encoding != PS_ENC_FOR) a->for_only = 0;
  }
  if (expr->aux_dev) a->aux = expr->aux_dev->mem;
  a->aux_host = low->aux;
  return PS_OK;
}

/* The 1-based position of col among the distinct columns expr reads, in
 * the order the expression is written (operand a before b); 0 if absent. */
static unsigned column_position_in(const ps_expr *e, const ps_column *col, const ps_column **seen, unsigned *nseen) {
  if (!e) return 0;
  const ps_column *own[2] = {e->col, e->col_b};
  for (int k = 0; k < 2; k++) {
    if (!own[k]) continue;
    unsigned i = 0;
    while (i < *nseen && seen[i] != own[k]) i++;
    if (i == *nseen && *nseen < PS_MAX_INSNS) seen[(*nseen)++] = own[k];
    if (own[k] == col) return i + 1;
  }
  unsigned p = column_position_in(e->a, col, seen, nseen);
  return p ? p : column_position_in(e->b, col, seen, nseen);
}

unsigned ps_expr_column_position(const ps_expr *expr, const ps_column *col) {
  const ps_column *seen[PS_MAX_INSNS];
  unsigned nseen = 0;
  return column_position_in(expr, col, seen, &nseen);
}

/* The rows [r0, r1) of a run the zone maps decided (r0 a multiple of 32, r1
 * too or the last row), written without reading codes: the bitmap's bytes
 * and the mask's as all selected or none. */
static ps_status write_decided(ps_context *ctx, ps_devmem bitmap, ps_devmem mask, uint64_t r0, uint64_t r1,
                               bool selected) {
  const uint64_t rows = r1 - r0;
  if (bitmap.handle) {
    ps_devmem at = bitmap;
    at.offset += r0 / 8;
    PS_TRY(ctx->ops->fill(ctx->be, at, selected ? 0xff : 0, rows / 8));
    if (rows % 8) {
      at.offset += rows / 8;
      PS_TRY(ctx->ops->fill(ctx->be, at, selected ? (uint8_t)((1u << (rows % 8)) - 1) : 0, 1));
    }
  }
  if (mask.handle) {
    ps_devmem at = mask;
    at.offset += r0;
    PS_TRY(ctx->ops->fill(ctx->be, at, selected ? 1 : 0, rows));
  }
  return PS_OK;
}

/* The state of the run from r (at most to `end`) that a call may use:
 * MAYBE without a plan, or where the call cannot produce the decided rows
 * without the backend's evaluation (false_ok, true_ok: whether it can for
 * ALL FALSE and ALL TRUE runs); such a run goes to the backend with the
 * MAYBE runs after it. */
static int usable_state(const ps_prune_plan *plan, uint64_t r, uint64_t end, bool false_ok, bool true_ok,
                        uint64_t *run_end) {
  *run_end = end;
  if (!plan) return PS_PRUNE_MAYBE;
  int s = ps_prune_state(plan, r, end, run_end);
  if ((s == PS_PRUNE_FALSE && false_ok) || (s == PS_PRUNE_TRUE && true_ok)) return s;
  uint64_t e = *run_end;
  while (e < end) {
    uint64_t next;
    int t = ps_prune_state(plan, e, end, &next);
    if ((t == PS_PRUNE_FALSE && false_ok) || (t == PS_PRUNE_TRUE && true_ok)) break;
    e = next;
  }
  *run_end = e;
  return PS_PRUNE_MAYBE;
}

static void count_decided(ps_context *ctx, int state, uint64_t rows) {
  if (state == PS_PRUNE_FALSE)
    ctx->scan_stats.rows_skipped += rows;
  else
    ctx->scan_stats.rows_all_true += rows;
}

/* The runs of a call in order: chunk by chunk, each chunk's runs of one
 * usable state. */
typedef struct runs {
  const ps_prune_plan *plan;
  uint64_t n, step, end, r;
  bool false_ok, true_ok;
} runs;

/* The next run, [*r, *e) in state *state; false after the last. */
static bool next_run(runs *it, uint64_t *r, uint64_t *e, int *state) {
  if (it->r >= it->end) {
    if (it->end >= it->n) return false;
    it->end = it->n - it->r < it->step ? it->n : it->r + it->step;
  }
  *r = it->r;
  *state = usable_state(it->plan, it->r, it->end, it->false_ok, it->true_ok, e);
  it->r = *e;
  return true;
}

/* Starts the copies of the next run's host-resident chunks (if it is read)
 * before the current chunk's kernels: they overlap them. */
static ps_status prefetch(ps_context *ctx, const ps_expr *expr, bool next, uint64_t r, uint64_t e, int state) {
  if (!next || state != PS_PRUNE_MAYBE) return PS_OK;
  return ps_stage_prefetch(ctx, expr->lowered->cols, expr->lowered->prog.n_cols, r, e - r);
}

/* A call over expr's rows, chunk by chunk, is judged for specialized kernels
 * by all its rows (ps_context.query_run_rows), unless it runs inside a
 * query's run (a CASE predicate), whose rows decide. Returns the value to
 * put back when the call ends. */
static uint64_t run_rows_enter(ps_context *ctx, const ps_expr *expr) {
  const uint64_t outer = ctx->query_run_rows;
  if (!outer) ctx->query_run_rows = expr->rows;
  return outer;
}

/* Runs expr over all rows. Outputs (handle NULL: none): the bitmap, the
 * byte mask; input: a selection to AND in. Runs of blocks the zone maps
 * decide are written without the backend's evaluation; the rest go to it
 * chunk by chunk, in the sub-ranges between those runs. */
ps_status ps_run_program(ps_context *ctx, const ps_expr *expr, ps_devmem bitmap, ps_devmem mask, ps_devmem selection_in,
                         uint64_t *count) {
  PS_TRY(ensure_lowered(ctx, expr));
  const ps_prune_plan *plan = NULL;
  PS_TRY(ps_prune_plan_of(ctx, expr, NULL, 0, &plan));
  ps_stage_forget(ctx);
  const bool writes = ctx->ops->fill || (!bitmap.handle && !mask.handle);
  const bool false_ok = writes, true_ok = writes && !selection_in.handle;
  ps_status st = PS_OK;
  uint64_t total = 0;
  runs it = {plan, expr->rows, ps_chunk_step(ctx, expr->lowered->cols, expr->lowered->prog.n_cols), 0, 0,
             false_ok, true_ok};
  uint64_t r = 0, e = 0, nr = 0, ne = 0;
  int state = PS_PRUNE_MAYBE, nstate = PS_PRUNE_MAYBE;
  const uint64_t outer_run_rows = run_rows_enter(ctx, expr);
  for (bool have = next_run(&it, &r, &e, &state), next; st == PS_OK && have;
       have = next, r = nr, e = ne, state = nstate) {
    next = next_run(&it, &nr, &ne, &nstate);
    if (state != PS_PRUNE_MAYBE) {
      st = write_decided(ctx, bitmap, mask, r, e, state == PS_PRUNE_TRUE);
      if (state == PS_PRUNE_TRUE) total += e - r;
      count_decided(ctx, state, e - r);
      if (st == PS_OK) ps_progress(ctx, e, expr->rows);
      continue;
    }
    ps_eval_args a;
    ps_program prog;
    ps_stage_begin(ctx);
    st = chunk_args(ctx, expr, r, e - r, &prog, &a);
    if (st == PS_OK) st = prefetch(ctx, expr, next, nr, ne, nstate);
    if (st != PS_OK) break;
    if (bitmap.handle) {
      a.bitmap = bitmap;
      a.bitmap.offset += r / 8;
    }
    if (mask.handle) {
      a.mask = mask;
      a.mask.offset += r;
    }
    if (selection_in.handle) {
      a.selection_in = selection_in;
      a.selection_in.offset += r / 8;
    }
    uint64_t chunk_count = 0;
    a.count = count ? &chunk_count : NULL;
    st = ctx->ops->eval(ctx->be, &a);
    ps_status released = ps_stage_end(ctx);
    if (st == PS_OK) st = released;
    total += chunk_count;
    if (st == PS_OK) ps_progress(ctx, e, expr->rows);
  }
  ctx->query_run_rows = outer_run_rows;
  if (st == PS_OK && count) *count = total;
  return st;
}

/* One chunk's row ids the unfused way: the chunk's bitmap into the
 * context's scratch bitmap (made or grown on first use, then kept), then the
 * backend's row ids of it, written only if they fit in `room`; *c receives
 * the chunk's count either way. */
static ps_status chunk_ids_unfused(ps_context *ctx, ps_eval_args *a, ps_devmem out, uint32_t isz, uint64_t room,
                                   uint64_t *c) {
  a->count = c;
  if (!room) return ctx->ops->eval(ctx->be, a); /* past the capacity: count only */
  const uint64_t bytes = (a->rows + 7) / 8;
  if (ctx->ids_scratch && ctx->ids_scratch->size < bytes) {
    ps_buffer_destroy(ctx->ids_scratch);
    ctx->ids_scratch = NULL;
  }
  if (!ctx->ids_scratch) PS_TRY(ps_buffer_create(ctx, bytes, &ctx->ids_scratch));
  a->bitmap = ctx->ids_scratch->mem;
  PS_TRY(ctx->ops->eval(ctx->be, a));
  if (*c == 0 || *c > room) return PS_OK;
  ps_row_ids_args r;
  memset(&r, 0, sizeof r);
  r.bitmap = ctx->ids_scratch->mem;
  r.rows = a->rows;
  r.id_base = a->row_begin;
  r.index_bytes = isz;
  r.out = out;
  uint64_t got = 0;
  r.count = &got;
  PS_TRY(ctx->ops->row_ids(ctx->be, &r));
  if (got != *c)
    return ps_set_error(ctx, PS_ERR_INTERNAL, "row ids of rows %" PRIu64 "..: counted %" PRIu64 ", wrote %" PRIu64,
                        a->row_begin, *c, got);
  return PS_OK;
}

/* Runs expr over all rows and writes the row ids of the selected rows
 * (ascending, isz bytes each) at ids, at most `capacity` of them; *count
 * receives the number selected, also when it exceeds capacity (the caller
 * reports that). Per chunk the backend's eval_ids does it in one pass where
 * it can; elsewhere the chunk's bitmap goes to scratch and row_ids reads it. */
/* The row ids of rows [r, e), every one selected: a bitmap of ones in the
 * scratch bitmap, then the backend's row ids of it (no codes read). */
static ps_status all_ids(ps_context *ctx, uint64_t r, uint64_t e, ps_devmem out, uint32_t isz) {
  const uint64_t bytes = (e - r + 7) / 8;
  if (ctx->ids_scratch && ctx->ids_scratch->size < bytes) {
    ps_buffer_destroy(ctx->ids_scratch);
    ctx->ids_scratch = NULL;
  }
  if (!ctx->ids_scratch) PS_TRY(ps_buffer_create(ctx, bytes, &ctx->ids_scratch));
  PS_TRY(write_decided(ctx, ctx->ids_scratch->mem, PS_NO_MEM, 0, e - r, true));
  ps_row_ids_args ra;
  memset(&ra, 0, sizeof ra);
  ra.bitmap = ctx->ids_scratch->mem;
  ra.rows = e - r;
  ra.id_base = r;
  ra.index_bytes = isz;
  ra.out = out;
  uint64_t got = 0;
  ra.count = &got;
  PS_TRY(ctx->ops->row_ids(ctx->be, &ra));
  if (got != e - r)
    return ps_set_error(ctx, PS_ERR_INTERNAL, "row ids of rows %" PRIu64 "..: %" PRIu64 " selected, wrote %" PRIu64, r,
                        e - r, got);
  return PS_OK;
}

ps_status ps_run_program_ids(ps_context *ctx, const ps_expr *expr, ps_devmem ids, uint32_t isz, uint64_t capacity,
                             uint64_t *count) {
  PS_TRY(ensure_lowered(ctx, expr));
  const ps_prune_plan *plan = NULL;
  if (ctx->ops->row_ids) PS_TRY(ps_prune_plan_of(ctx, expr, NULL, 0, &plan));
  ps_stage_forget(ctx);
  ps_status st = PS_OK;
  uint64_t total = 0;
  runs it = {plan, expr->rows, ps_chunk_step(ctx, expr->lowered->cols, expr->lowered->prog.n_cols), 0, 0, true,
             ctx->ops->fill != NULL};
  uint64_t r = 0, e = 0, nr = 0, ne = 0;
  int state = PS_PRUNE_MAYBE, nstate = PS_PRUNE_MAYBE;
  const uint64_t outer_run_rows = run_rows_enter(ctx, expr);
  for (bool have = next_run(&it, &r, &e, &state), next; st == PS_OK && have;
       have = next, r = nr, e = ne, state = nstate) {
    next = next_run(&it, &nr, &ne, &nstate);
    const uint64_t room = total < capacity ? capacity - total : 0;
    ps_devmem out = ids;
    out.offset += (total < capacity ? total : capacity) * isz;
    if (state != PS_PRUNE_MAYBE) {
      count_decided(ctx, state, e - r);
      if (state == PS_PRUNE_TRUE) {
        if (e - r <= room) st = all_ids(ctx, r, e, out, isz);
        total += e - r;
      }
      if (st == PS_OK) ps_progress(ctx, e, expr->rows);
      continue;
    }
    ps_eval_args a;
    ps_program prog;
    ps_stage_begin(ctx);
    st = chunk_args(ctx, expr, r, e - r, &prog, &a);
    if (st == PS_OK) st = prefetch(ctx, expr, next, nr, ne, nstate);
    if (st != PS_OK) break;
    uint64_t c = 0;
    st = PS_ERR_UNSUPPORTED;
    if (ctx->ops->eval_ids && room && a.for_only) {
      a.ids = out;
      a.index_bytes = isz;
      a.ids_capacity = room;
      a.count = &c;
      st = ctx->ops->eval_ids(ctx->be, &a);
      a.ids = PS_NO_MEM;
      a.index_bytes = 0;
      a.ids_capacity = 0;
    }
    if (st == PS_ERR_UNSUPPORTED) { /* the backend did not take this chunk: nothing was enqueued */
      ps_clear_error(ctx);
      st = chunk_ids_unfused(ctx, &a, out, isz, room, &c);
    }
    ps_status released = ps_stage_end(ctx);
    if (st == PS_OK) st = released;
    total += c;
    if (st == PS_OK) ps_progress(ctx, e, expr->rows);
  }
  ctx->query_run_rows = outer_run_rows;
  if (st == PS_OK) *count = total;
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
                        "bitmap_size is %" PRIu64 "; %" PRIu64 " rows need %" PRIu64 " bytes", bitmap_size, expr->rows,
                        bytes);
  if (ctx->group) return ps_group_filter(ctx, expr, bitmap, NULL, count);
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
  if (ctx->group) return ps_group_unsupported(ctx, "ps_filter_device");
  if (!bitmap) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "bitmap buffer is NULL");
  if (bitmap->ctx != ctx) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "bitmap buffer belongs to another context");
  if (offset % 4)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "offset %" PRIu64 " is not a multiple of 4", offset);
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
  if (ctx->group) return ps_group_filter(ctx, expr, NULL, NULL, count);
  return ps_run_program(ctx, expr, PS_NO_MEM, PS_NO_MEM, PS_NO_MEM, count);
}
