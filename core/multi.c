/* Contexts over several devices (ps_context_options.devices). Such a
 * context holds one ordinary context per device. Each column is split by
 * rows into one part per device (ps_group_split: runs of PS_GROUP_ROWS
 * rows, so that every column of a table is split alike); expressions,
 * values and queries are built on each device's parts as they are built on
 * the whole. A call runs on every device at once, one thread per device
 * beyond the caller's, each device on its own streams/queues and buffers,
 * and the results are put together exactly: bitmaps, masks and row ids
 * side by side (ids shifted by the part's first row), counts added, query
 * results merged as partial results are (query_partial.c). Calls whose
 * input or output is one device's memory (ps_buffer) have no form here. */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"
#include "query.h"
#include "packscan_arrow.h"

/* ---- the split ------------------------------------------------------------ */

void ps_group_split(const struct ps_group *g, uint64_t n, uint32_t d, uint64_t *r0, uint64_t *r1) {
  const uint64_t units = n / PS_GROUP_ROWS + (n % PS_GROUP_ROWS != 0);
  const uint64_t per = units / g->n + (units % g->n != 0); /* units per device */
  const uint64_t a = (uint64_t)d * per, b = a + per;
  *r0 = a >= units ? n : a * PS_GROUP_ROWS;
  *r1 = b >= units ? n : b * PS_GROUP_ROWS;
}

bool ps_group_has(const struct ps_group *g, uint64_t n, uint32_t d) {
  uint64_t r0, r1;
  ps_group_split(g, n, d, &r0, &r1);
  return d == 0 || r0 < r1;
}

/* ---- running on every device ---------------------------------------------- */

typedef ps_status (*shard_fn)(ps_context *dev, uint32_t d, void *arg);

struct job {
  ps_context *dev;
  uint32_t d;
  shard_fn fn;
  void *arg;
  ps_status st;
};

static void *job_main(void *p) {
  struct job *j = p;
  j->st = j->fn(j->dev, j->d, j->arg);
  return NULL;
}

/* The first failure (by device) as ctx's error, naming the device. */
static ps_status report(ps_context *ctx, const struct job *jobs, uint32_t n) {
  for (uint32_t d = 0; d < n; d++) {
    if (jobs[d].st == PS_OK) continue;
    char msg[PS_ERRMSG_SIZE];
    snprintf(msg, sizeof msg, "%s", jobs[d].dev->last_error);
    return ps_set_error(ctx, jobs[d].st, "device %u: %s", d, msg);
  }
  ps_clear_error(ctx);
  return PS_OK;
}

/* Runs fn(device context, d, arg) for every device: at once (a thread per
 * device but the first, which runs on the caller's) when `parallel`, else
 * in order, stopping at the first failure. A device context is used by one
 * thread at a time, as every context is. */
static ps_status each(ps_context *ctx, bool parallel, shard_fn fn, void *arg) {
  struct ps_group *g = ctx->group;
  struct job jobs[PS_MAX_DEVICES];
  for (uint32_t d = 0; d < g->n; d++) jobs[d] = (struct job){g->dev[d], d, fn, arg, PS_OK};
  if (!parallel || g->n == 1) {
    for (uint32_t d = 0; d < g->n; d++) {
      job_main(&jobs[d]);
      if (jobs[d].st != PS_OK) break;
    }
    return report(ctx, jobs, g->n);
  }
  pthread_t th[PS_MAX_DEVICES];
  bool started[PS_MAX_DEVICES] = {false};
  for (uint32_t d = 1; d < g->n; d++) started[d] = pthread_create(&th[d], NULL, job_main, &jobs[d]) == 0;
  job_main(&jobs[0]);
  for (uint32_t d = 1; d < g->n; d++) {
    if (started[d])
      pthread_join(th[d], NULL);
    else
      job_main(&jobs[d]); /* no thread to be had: this device runs after the others */
  }
  return report(ctx, jobs, g->n);
}

/* ---- contexts --------------------------------------------------------------- */

static void stub_destroy(ps_backend *be) { (void)be; }
static const char *stub_device_name(ps_backend *be) {
  (void)be;
  return "";
}
static uint64_t stub_max_chunk_rows(ps_backend *be) {
  (void)be;
  return (uint64_t)1 << 30;
}
static ps_status stub_alloc(ps_backend *be, uint64_t bytes, ps_devmem *out) {
  (void)be, (void)bytes, (void)out;
  return PS_ERR_UNSUPPORTED;
}
static void stub_free(ps_backend *be, ps_devmem mem) { (void)be, (void)mem; }
static ps_status stub_write(ps_backend *be, ps_devmem dst, const void *src, uint64_t bytes) {
  (void)be, (void)dst, (void)src, (void)bytes;
  return PS_ERR_UNSUPPORTED;
}
static ps_status stub_read(ps_backend *be, void *dst, ps_devmem src, uint64_t bytes) {
  (void)be, (void)dst, (void)src, (void)bytes;
  return PS_ERR_UNSUPPORTED;
}
static ps_status stub_eval(ps_backend *be, const ps_eval_args *args) {
  (void)be, (void)args;
  return PS_ERR_UNSUPPORTED;
}

/* The backend of a context over several devices has no memory and runs
 * nothing: every call is routed to the device contexts before it would
 * reach a backend, and one that is not (a ps_buffer call) fails here. */
static const ps_backend_ops group_ops = {
    .abi_version = PS_BACKEND_ABI_VERSION,
    .name = "group",
    .destroy = stub_destroy,
    .device_name = stub_device_name,
    .max_chunk_rows = stub_max_chunk_rows,
    .mem_alloc = stub_alloc,
    .mem_free = stub_free,
    .mem_write = stub_write,
    .mem_read = stub_read,
    .eval = stub_eval,
};

ps_status ps_group_unsupported(ps_context *ctx, const char *call) {
  return ps_set_error(ctx, PS_ERR_UNSUPPORTED,
                      "%s: a context over %u devices has no device memory of its own (ps_buffer); use the "
                      "host-memory form of the call, or a context of one device",
                      call, ctx->group->n);
}

ps_status ps_group_create(ps_context *ctx, const ps_context_options *o, const char *backend) {
  struct ps_group *g = ps_alloc_with(&ctx->alloc, sizeof *g);
  if (!g) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a context over %u devices", o->device_count);
  memset(g, 0, sizeof *g);
  ctx->group = g;
  ctx->ops = &group_ops;
  size_t names = 0;
  for (uint32_t d = 0; d < o->device_count; d++) {
    ps_context_options sub = *o;
    sub.device_count = 0;
    sub.devices = NULL;
    sub.progress = NULL; /* reported by this context, on the caller's thread */
    sub.progress_user = NULL;
    sub.cuda_device = sub.opencl_device = o->devices[d];
    /* every device on the backend the first one got */
    sub.backend = d ? ps_context_backend(g->dev[0]) : backend;
    char err[PS_ERRMSG_SIZE];
    ps_status st = ps_context_create(&sub, err, sizeof err, &g->dev[d]);
    if (st != PS_OK) return ps_set_error(ctx, st, "options.devices[%u] = %d: %s", d, (int)o->devices[d], err);
    g->n = d + 1;
    int w = snprintf(g->device_names + names, sizeof g->device_names - names, "%s%s", d ? " + " : "",
                     ps_context_device(g->dev[d]));
    if (w > 0) names += (size_t)w < sizeof g->device_names - names ? (size_t)w : sizeof g->device_names - names - 1;
  }
  ctx->chunk_rows = g->dev[0]->chunk_rows;
  return PS_OK;
}

void ps_group_destroy(ps_context *ctx) {
  struct ps_group *g = ctx->group;
  if (!g) return;
  for (uint32_t d = 0; d < g->n; d++) ps_context_destroy(g->dev[d]);
  ps_free_with(&ctx->alloc, g);
  ctx->group = NULL;
}

/* ---- columns ---------------------------------------------------------------- */

static void put_le64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static uint64_t get_le64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* The blocks of a DELTA column (validated) that hold rows [r0, r1), laid out
 * as a column of their own: their headers, payload offsets rewritten, then
 * their payloads. */
static ps_status delta_part(ps_context *ctx, const ps_for_desc *d, uint64_t r0, uint64_t r1, uint8_t **out,
                            uint64_t *size) {
  const uint8_t *src = d->data;
  const uint64_t b0 = r0 / PS_DELTA_BLOCK_ROWS, b1 = ps_delta_blocks(r1), all = ps_delta_blocks(d->n);
  const uint64_t hb = (b1 - b0) * PS_DELTA_HEADER_BYTES;
  const uint64_t p0 = b0 * PS_DELTA_HEADER_BYTES + get_le64(src + b0 * PS_DELTA_HEADER_BYTES + 16);
  const uint64_t p1 =
      b1 == all ? d->data_size : b1 * PS_DELTA_HEADER_BYTES + get_le64(src + b1 * PS_DELTA_HEADER_BYTES + 16);
  *size = hb + (p1 - p0);
  uint8_t *buf = ps_host_alloc(ctx, (size_t)*size);
  if (!buf)
    return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "laying out %" PRIu64 " bytes of DELTA blocks for a device", *size);
  memcpy(buf, src + b0 * PS_DELTA_HEADER_BYTES, (size_t)hb);
  memcpy(buf + hb, src + p0, (size_t)(p1 - p0));
  for (uint64_t b = b0; b < b1; b++) {
    const uint64_t at_old = b * PS_DELTA_HEADER_BYTES, at_new = (b - b0) * PS_DELTA_HEADER_BYTES;
    const uint64_t payload_old = at_old + get_le64(src + at_old + 16);
    put_le64(buf + at_new + 16, hb + (payload_old - p0) - at_new);
  }
  *out = buf;
  return PS_OK;
}

/* Zone maps of rows [r0, r1) of `z` (n rows), where its blocks fall on the
 * part's first row; 0 otherwise (the part then has none). */
static int zones_part(const ps_zone_map *z, uint64_t r0, uint64_t r1, ps_zone_map *out) {
  if (!z || r0 % z->block_rows) return 0;
  const uint64_t first = r0 / z->block_rows;
  *out = *z;
  out->blocks = (r1 - r0) / z->block_rows + ((r1 - r0) % z->block_rows != 0);
  out->min = z->min + first;
  out->max = z->max + first;
  out->flags = z->flags + first;
  return 1;
}

void ps_group_column_free(ps_column *c) {
  struct ps_column_parts *p = c->parts;
  if (!p) return;
  for (uint32_t i = 0; i < PS_MAX_DEVICES; i++) {
    ps_column_destroy(p->col[i]);
    ps_host_free(c->ctx, p->owned[i]);
  }
  ps_host_free(c->ctx, p);
  c->parts = NULL;
}

struct column_job {
  ps_column *c;
  const ps_dict_desc *dd;
  const ps_for_desc *d;
  bool host;
};

static ps_status column_part(ps_context *dev, uint32_t i, void *arg) {
  struct column_job *j = arg;
  ps_column *c = j->c;
  const struct ps_group *g = c->ctx->group;
  if (!ps_group_has(g, c->n, i)) return PS_OK;
  uint64_t r0, r1;
  ps_group_split(g, c->n, i, &r0, &r1);
  ps_for_desc d = *j->d;
  d.n = r1 - r0;
  if (c->encoding == PS_ENC_DELTA) {
    uint8_t *buf = NULL;
    PS_TRY(delta_part(c->ctx, j->d, r0, r1, &buf, &d.data_size));
    c->parts->owned[i] = buf;
    d.data = buf;
  } else {
    d.data = j->d->data ? (const uint8_t *)j->d->data + ps_chunk_data_offset(PS_ENC_FOR, c->width, r0) : NULL;
    if (!ps_for_packed_bytes(d.n, d.width, &d.data_size)) d.data_size = 0;
  }
  if (j->d->validity) {
    d.validity = j->d->validity + r0 / 8;
    d.validity_size = d.n / 8 + (d.n % 8 != 0);
  }
  ps_zone_map z;
  d.zones = zones_part(j->d->zones, r0, r1, &z) ? &z : NULL;
  ps_column **out = &c->parts->col[i];
  if (j->dd)
    return j->host ? ps_column_create_dict_host(dev, j->dd, &d, out) : ps_column_create_dict(dev, j->dd, &d, out);
  return j->host ? ps_column_create_for_host(dev, &d, out) : ps_column_create_for(dev, &d, out);
}

ps_status ps_group_column_parts(ps_context *ctx, ps_column *c, const ps_dict_desc *dd, const ps_for_desc *d,
                                bool host) {
  c->parts = ps_calloc_ctx(ctx, 1, sizeof *c->parts);
  if (!c->parts) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a column's parts");
  ps_for_desc full; /* the caller's description, fields it lacks at their defaults */
  memset(&full, 0, sizeof full);
  memcpy(&full, d, d->struct_size < sizeof full ? d->struct_size : sizeof full);
  full.struct_size = sizeof full;
  struct column_job j = {c, dd, &full, host};
  return each(ctx, true, column_part, &j);
}

static ps_status name_part(ps_context *dev, uint32_t i, void *arg) {
  (void)dev;
  ps_column *c = arg;
  return c->parts->col[i] ? ps_column_set_name(c->parts->col[i], c->name) : PS_OK;
}

ps_status ps_group_column_set_name(ps_column *c) { return each(c->ctx, false, name_part, c); }

struct zones_job {
  ps_column *c;
  bool compute;
  const ps_zone_map *z; /* else these (NULL: none) */
};

static ps_status zones_of_part(ps_context *dev, uint32_t i, void *arg) {
  struct zones_job *j = arg;
  ps_column *part = j->c->parts->col[i];
  if (!part) return PS_OK;
  if (j->compute) return ps_column_compute_zones(dev, part);
  if (!j->z) return ps_column_set_zones(dev, part, NULL);
  uint64_t r0, r1;
  ps_group_split(j->c->ctx->group, j->c->n, i, &r0, &r1);
  ps_zone_map z;
  return ps_column_set_zones(dev, part, zones_part(j->z, r0, r1, &z) ? &z : NULL);
}

ps_status ps_group_set_zones(ps_context *ctx, ps_column *c, const ps_zone_map *z) {
  PS_TRY(ps_zones_set(ctx, c, z, "zones"));
  struct zones_job j = {c, false, z ? &c->zones->view : NULL};
  return each(ctx, false, zones_of_part, &j);
}

ps_status ps_group_compute_zones(ps_context *ctx, ps_column *c) {
  struct zones_job j = {c, true, NULL};
  PS_TRY(each(ctx, true, zones_of_part, &j));
  /* The column's maps: its parts' side by side (parts start on whole blocks). */
  const uint64_t blocks = c->n / PS_ZONE_BLOCK_ROWS + (c->n % PS_ZONE_BLOCK_ROWS != 0);
  uint64_t *mm = ps_calloc_ctx(ctx, (size_t)(blocks ? 2 * blocks : 1), sizeof *mm);
  uint8_t *flags = ps_calloc_ctx(ctx, (size_t)(blocks ? blocks : 1), 1);
  ps_status st = mm && flags
                     ? PS_OK
                     : ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating zone maps of %" PRIu64 " blocks", blocks);
  for (uint32_t i = 0; st == PS_OK && i < ctx->group->n; i++) {
    ps_zone_map pz;
    if (!c->parts->col[i] || !ps_column_zones(c->parts->col[i], &pz)) continue;
    uint64_t r0, r1;
    ps_group_split(ctx->group, c->n, i, &r0, &r1);
    const uint64_t b0 = r0 / PS_ZONE_BLOCK_ROWS;
    memcpy(mm + b0, pz.min, (size_t)pz.blocks * 8);
    memcpy(mm + blocks + b0, pz.max, (size_t)pz.blocks * 8);
    memcpy(flags + b0, pz.flags, (size_t)pz.blocks);
  }
  if (st == PS_OK) {
    ps_zone_map z = {sizeof z, PS_ZONE_BLOCK_ROWS, blocks, mm, mm + blocks, flags};
    st = ps_zones_set(ctx, c, &z, "zones");
  }
  ps_host_free(ctx, mm);
  ps_host_free(ctx, flags);
  return st;
}

/* ---- expressions ------------------------------------------------------------ */

static ps_column *part_of(const ps_column *c, uint32_t i) { return c ? c->parts->col[i] : NULL; }

static ps_status expr_part(ps_context *dev, uint32_t i, void *arg) {
  ps_expr *e = arg;
  if (!ps_group_has(e->ctx->group, e->rows, i)) return PS_OK;
  ps_expr **out = &e->shard[i];
  ps_column *col = part_of(e->col, i);
  switch (e->kind) {
    case PS_EXPR_COMPARE:
      return ps_expr_compare(dev, col, e->cmp, e->lit, out);
    case PS_EXPR_COMPARE_COLUMNS:
      return ps_expr_compare_columns(dev, col, e->cmp, part_of(e->col_b, i), out);
    case PS_EXPR_BETWEEN:
      return ps_expr_between(dev, col, e->lit, e->lit_b, out);
    case PS_EXPR_IN:
      return ps_expr_in(dev, col, e->list, e->list_count, out);
    case PS_EXPR_LIKE:
      return ps_expr_like(dev, col, e->pattern, e->pattern_len, e->escape, e->negate, out);
    case PS_EXPR_IS_NULL:
      return ps_expr_is_null(dev, col, e->negate, out);
    case PS_EXPR_AND:
      return ps_expr_and(dev, e->a->shard[i], e->b->shard[i], out);
    case PS_EXPR_OR:
      return ps_expr_or(dev, e->a->shard[i], e->b->shard[i], out);
    case PS_EXPR_NOT:
      return ps_expr_not(dev, e->a->shard[i], out);
  }
  return ps_set_error(dev, PS_ERR_INTERNAL, "expression kind %d", (int)e->kind);
}

void ps_group_expr_free(ps_expr *e) {
  if (!e->shard) return;
  for (uint32_t i = 0; i < PS_MAX_DEVICES; i++) ps_expr_destroy(e->shard[i]);
  ps_host_free(e->ctx, e->shard);
  e->shard = NULL;
}

ps_status ps_group_expr_parts(ps_context *ctx, ps_expr *e) {
  e->shard = ps_calloc_ctx(ctx, PS_MAX_DEVICES, sizeof *e->shard);
  if (!e->shard) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating an expression's parts");
  ps_status st = each(ctx, false, expr_part, e);
  const bool combines = e->kind == PS_EXPR_AND || e->kind == PS_EXPR_OR || e->kind == PS_EXPR_NOT;
  if (st != PS_OK) {
    /* The parts made so far took their operands' parts: give them back. */
    for (uint32_t i = 0; combines && i < PS_MAX_DEVICES; i++)
      if (e->shard[i]) e->shard[i]->a = e->shard[i]->b = NULL;
    ps_group_expr_free(e);
    return st;
  }
  if (combines) { /* the operands' parts now belong to this node's */
    ps_host_free(ctx, e->a->shard);
    e->a->shard = NULL;
    if (e->b) {
      ps_host_free(ctx, e->b->shard);
      e->b->shard = NULL;
    }
  }
  return PS_OK;
}

/* ---- values ------------------------------------------------------------------ */

static bool value_on(const ps_value *v, uint32_t i) { return !v->has_rows || ps_group_has(v->ctx->group, v->rows, i); }

static ps_status value_part(ps_context *dev, uint32_t i, void *arg) {
  ps_value *v = arg;
  if (!value_on(v, i)) return PS_OK;
  ps_value **out = &v->shard[i];
  switch (v->kind) {
    case PS_VALUE_COLUMN:
      return ps_value_column(dev, part_of(v->col, i), out);
    case PS_VALUE_CONST: {
      const ps_u128 c = (ps_u128)v->constant;
      return ps_value_decimal(dev, (uint64_t)c, (int64_t)(uint64_t)(c >> 64), v->scale, out);
    }
    case PS_VALUE_NULL:
      return ps_value_null(dev, out);
    case PS_VALUE_ARITH:
      return ps_value_arith(dev, v->op, v->a->shard[i], v->b->shard[i], out);
    case PS_VALUE_CASE:
      return ps_value_case(dev, v->when->shard[i], v->a->shard[i], v->b ? v->b->shard[i] : NULL, out);
  }
  return ps_set_error(dev, PS_ERR_INTERNAL, "value kind %d", (int)v->kind);
}

void ps_group_value_free(ps_value *v) {
  if (!v->shard) return;
  for (uint32_t i = 0; i < PS_MAX_DEVICES; i++) ps_value_destroy(v->shard[i]);
  ps_host_free(v->ctx, v->shard);
  v->shard = NULL;
}

ps_status ps_group_value_parts(ps_context *ctx, ps_value *v) {
  v->shard = ps_calloc_ctx(ctx, PS_MAX_DEVICES, sizeof *v->shard);
  if (!v->shard) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a value's parts");
  ps_status st = each(ctx, false, value_part, v);
  const bool combines = v->kind == PS_VALUE_ARITH || v->kind == PS_VALUE_CASE;
  if (st != PS_OK) {
    for (uint32_t i = 0; combines && i < PS_MAX_DEVICES; i++)
      if (v->shard[i]) v->shard[i]->a = v->shard[i]->b = NULL, v->shard[i]->when = NULL;
    ps_group_value_free(v);
    return st;
  }
  if (combines) {
    /* The node's parts took its operands' parts; an operand's part on a
     * device where the node has none (a constant's) goes. */
    ps_value *ops[2] = {v->a, v->b};
    for (int k = 0; k < 2; k++) {
      if (!ops[k]) continue;
      for (uint32_t i = 0; i < PS_MAX_DEVICES; i++) {
        if (v->shard[i]) ops[k]->shard[i] = NULL;
        ps_value_destroy(ops[k]->shard[i]);
      }
      ps_host_free(ctx, ops[k]->shard);
      ops[k]->shard = NULL;
    }
    if (v->when) {
      for (uint32_t i = 0; i < PS_MAX_DEVICES; i++) {
        if (v->shard[i]) v->when->shard[i] = NULL;
        ps_expr_destroy(v->when->shard[i]);
      }
      ps_host_free(ctx, v->when->shard);
      v->when->shard = NULL;
    }
  }
  return PS_OK;
}

/* ---- queries ------------------------------------------------------------------ */

struct query_job {
  ps_query *q;
  const ps_query_desc *desc;
  ps_query_result *res[PS_MAX_DEVICES];
  bool partial, whole; /* whole: a single device has rows, its result is the answer */
};

static ps_status query_part(ps_context *dev, uint32_t i, void *arg) {
  struct query_job *j = arg;
  (void)dev;
  if (!ps_group_has(j->q->ctx->group, j->desc->rows, i)) return PS_OK;
  ps_query_desc d = *j->desc;
  uint64_t r0, r1;
  ps_group_split(j->q->ctx->group, j->desc->rows, i, &r0, &r1);
  d.rows = r1 - r0;
  ps_agg aggs[PS_QUERY_MAX_AGGS];
  if (d.where) d.where = d.where->shard ? d.where->shard[i] : d.where;
  for (uint32_t k = 0; k < d.n_keys && k < PS_QUERY_MAX_KEYS; k++)
    if (d.keys[k] && d.keys[k]->parts) d.keys[k] = d.keys[k]->parts->col[i];
  for (uint32_t a = 0; d.aggs && a < d.n_aggs && a < PS_QUERY_MAX_AGGS; a++) {
    aggs[a] = d.aggs[a];
    if (aggs[a].value && aggs[a].value->shard) aggs[a].value = aggs[a].value->shard[i];
  }
  if (d.aggs && d.n_aggs <= PS_QUERY_MAX_AGGS) d.aggs = aggs;
  return ps_query_create(dev, &d, &j->q->shard[i]);
}

void ps_group_query_free(ps_query *q) {
  if (!q->shard) return;
  for (uint32_t i = 0; i < PS_MAX_DEVICES; i++) ps_query_destroy(q->shard[i]);
  ps_host_free(q->ctx, q->shard);
  q->shard = NULL;
}

/* A query of a context over several devices: its description checked and
 * made on each device with rows (the description's objects are this
 * context's; each device's query reads their parts). */
ps_status ps_group_query_create(ps_context *ctx, const ps_query_desc *desc, ps_query *q) {
  /* The caller's description, fields it lacks at their defaults; its
   * struct_size stays, for the devices' checks. */
  ps_query_desc full;
  ps_query_desc_init(&full);
  size_t size = desc->struct_size < sizeof full ? desc->struct_size : sizeof full;
  memcpy(&full, desc, size > sizeof full.struct_size ? size : sizeof full.struct_size);
  desc = &full;
  if (desc->where && desc->where->ctx != ctx)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "desc.where belongs to another context");
  for (uint32_t k = 0; k < desc->n_keys && k < PS_QUERY_MAX_KEYS; k++)
    if (desc->keys[k] && desc->keys[k]->ctx != ctx)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "desc.keys[%u] belongs to another context", k);
  for (uint32_t a = 0; desc->aggs && a < desc->n_aggs && a < PS_QUERY_MAX_AGGS; a++)
    if (desc->aggs[a].value && desc->aggs[a].value->ctx != ctx)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "desc.aggs[%u].value belongs to another context", a);
  q->rows = desc->rows;
  q->shard = ps_calloc_ctx(ctx, PS_MAX_DEVICES, sizeof *q->shard);
  if (!q->shard) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a query's parts");
  struct query_job j = {.q = q, .desc = desc};
  ps_status st = each(ctx, false, query_part, &j);
  if (st != PS_OK) ps_group_query_free(q);
  return st;
}

static ps_status run_part(ps_context *dev, uint32_t i, void *arg) {
  struct query_job *j = arg;
  ps_query *part = j->q->shard[i];
  if (!part) return PS_OK;
  if (j->whole && !j->partial) return ps_query_run(dev, part, &j->res[i]);
  return ps_query_run_partial(dev, part, &j->res[i]);
}

ps_status ps_group_query_run(ps_context *ctx, ps_query *q, bool partial, ps_query_result **out) {
  struct query_job j = {.q = q, .partial = partial};
  uint32_t parts = 0, last = 0;
  for (uint32_t i = 0; i < ctx->group->n; i++)
    if (q->shard[i]) parts++, last = i;
  j.whole = parts == 1;
  ps_status st = each(ctx, true, run_part, &j);
  if (st == PS_OK && j.whole) { /* the one device's result is the answer */
    *out = j.res[last];
    if (q->rows) ps_progress(ctx, q->rows, q->rows);
    return PS_OK;
  }
  ps_query_merge *m = NULL;
  if (st == PS_OK) st = ps_query_merge_create(ctx, &m);
  for (uint32_t i = 0; st == PS_OK && i < ctx->group->n; i++) {
    if (!j.res[i]) continue;
    struct ArrowSchema schema;
    struct ArrowArray array;
    st = ps_query_result_export_partial(ctx->group->dev[i], j.res[i], &schema, &array);
    if (st != PS_OK) {
      char msg[PS_ERRMSG_SIZE];
      snprintf(msg, sizeof msg, "%s", ctx->group->dev[i]->last_error);
      st = ps_set_error(ctx, st, "device %u: %s", i, msg);
      break;
    }
    st = ps_query_merge_add(m, &schema, &array);
    schema.release(&schema);
    array.release(&array);
  }
  for (uint32_t i = 0; i < ctx->group->n; i++) ps_query_result_destroy(j.res[i]);
  if (st == PS_OK) st = partial ? ps_query_merge_finish_partial(m, out) : ps_query_merge_finish(m, out);
  ps_query_merge_destroy(m);
  if (st == PS_OK && q->rows) ps_progress(ctx, q->rows, q->rows);
  return st;
}

/* ---- filters, masks, row ids ------------------------------------------------ */

enum scan_kind { SCAN_BITMAP, SCAN_MASK, SCAN_COUNT, SCAN_IDS };

struct scan_job {
  const ps_expr *e;
  enum scan_kind kind;
  uint8_t *out; /* the caller's bitmap or mask */
  ps_index_type type;
  bool want_count;
  uint64_t count[PS_MAX_DEVICES];
  void *ids[PS_MAX_DEVICES];
};

static ps_status scan_part(ps_context *dev, uint32_t i, void *arg) {
  struct scan_job *j = arg;
  const ps_expr *part = j->e->shard[i];
  if (!part) return PS_OK;
  uint64_t r0, r1, *c = j->want_count ? &j->count[i] : NULL;
  ps_group_split(j->e->ctx->group, j->e->rows, i, &r0, &r1);
  switch (j->kind) {
    case SCAN_BITMAP: /* r0 is a multiple of 8: the part's bytes are its own */
      return ps_filter(dev, part, j->out + r0 / 8, (r1 - r0 + 7) / 8, c);
    case SCAN_MASK:
      return ps_filter_mask(dev, part, j->out + r0, r1 - r0, c);
    case SCAN_COUNT:
      return ps_filter_count(dev, part, &j->count[i]);
    case SCAN_IDS:
      return ps_filter_row_ids(dev, part, j->type, &j->ids[i], &j->count[i]);
  }
  return PS_ERR_INTERNAL;
}

static uint64_t total_of(const struct scan_job *j, uint32_t n) {
  uint64_t t = 0;
  for (uint32_t i = 0; i < n; i++) t += j->count[i];
  return t;
}

ps_status ps_group_filter(ps_context *ctx, const ps_expr *e, uint8_t *bitmap, uint8_t *mask, uint64_t *count) {
  struct scan_job j = {.e = e,
                       .kind = bitmap ? SCAN_BITMAP
                               : mask ? SCAN_MASK
                                      : SCAN_COUNT,
                       .out = bitmap ? bitmap : mask,
                       .want_count = count != NULL};
  PS_TRY(each(ctx, true, scan_part, &j));
  if (count) *count = total_of(&j, ctx->group->n);
  if (e->rows) ps_progress(ctx, e->rows, e->rows);
  return PS_OK;
}

ps_status ps_group_row_ids(ps_context *ctx, const ps_expr *e, ps_index_type type, void **ids, uint64_t *count) {
  struct scan_job j = {.e = e, .kind = SCAN_IDS, .type = type, .want_count = true};
  ps_status st = each(ctx, true, scan_part, &j);
  const uint64_t total = total_of(&j, ctx->group->n);
  const uint32_t isz = (uint32_t)type;
  uint8_t *all = NULL;
  if (st == PS_OK && total) {
    all = total <= SIZE_MAX / isz ? ps_host_alloc(ctx, (size_t)(total * isz)) : NULL;
    if (!all) st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating %" PRIu64 " row ids", total);
  }
  /* Each device's ids, from its part's first row on, in device order. */
  uint64_t at = 0;
  for (uint32_t i = 0; i < ctx->group->n; i++) {
    if (st == PS_OK && j.count[i]) {
      uint64_t r0, r1;
      ps_group_split(ctx->group, e->rows, i, &r0, &r1);
      for (uint64_t k = 0; k < j.count[i]; k++, at++) {
        if (isz == 4) {
          const uint32_t v = ((const uint32_t *)j.ids[i])[k] + (uint32_t)r0;
          memcpy(all + at * 4, &v, 4);
        } else {
          const uint64_t v = ((const uint64_t *)j.ids[i])[k] + r0;
          memcpy(all + at * 8, &v, 8);
        }
      }
    }
    ps_free(ctx->group->dev[i], j.ids[i]);
  }
  if (st != PS_OK) {
    ps_host_free(ctx, all);
    return st;
  }
  *ids = all;
  *count = total;
  if (e->rows) ps_progress(ctx, e->rows, e->rows);
  return PS_OK;
}

/* ---- gathers ----------------------------------------------------------------- */

struct gather_job {
  const ps_column *col;
  const void *ids;
  ps_index_type type;
  uint64_t count;
  bool strings;
  uint32_t vb;
  /* per device: how many ids fall in its part, and what it gathered */
  uint64_t mine[PS_MAX_DEVICES];
  uint8_t *vals[PS_MAX_DEVICES], *valid[PS_MAX_DEVICES];
  int64_t *offs[PS_MAX_DEVICES];
  uint8_t *bytes[PS_MAX_DEVICES];
};

static uint64_t id_at(const void *ids, ps_index_type type, uint64_t k) {
  return type == PS_INDEX_UINT32 ? ((const uint32_t *)ids)[k] : ((const uint64_t *)ids)[k];
}

/* The device whose part holds row id (< the column's rows). */
static uint32_t device_of(const struct ps_group *g, uint64_t n, uint64_t id) {
  uint32_t i = 0;
  for (uint64_t r0, r1; i + 1 < g->n; i++) {
    ps_group_split(g, n, i, &r0, &r1);
    if (id < r1) break;
  }
  return i;
}

/* Device i gathers the ids that fall in its part, in their order. */
static ps_status gather_part(ps_context *dev, uint32_t i, void *arg) {
  struct gather_job *j = arg;
  const ps_column *part = j->col->parts->col[i];
  const uint64_t mine = j->mine[i];
  if (!part || !mine) return PS_OK;
  uint64_t r0, r1;
  ps_group_split(j->col->ctx->group, j->col->n, i, &r0, &r1);
  const uint32_t isz = (uint32_t)j->type;
  uint8_t *ids = ps_host_alloc(dev, (size_t)(mine * isz));
  j->valid[i] = ps_host_alloc(dev, (size_t)(mine / 8 + 1));
  if (!j->strings) j->vals[i] = ps_host_alloc(dev, (size_t)(mine * j->vb));
  if (!ids || !j->valid[i] || (!j->strings && !j->vals[i])) {
    ps_host_free(dev, ids);
    return ps_set_error(dev, PS_ERR_OUT_OF_MEMORY, "gathering %" PRIu64 " values", mine);
  }
  for (uint64_t k = 0, m = 0; k < j->count; k++) {
    const uint64_t id = id_at(j->ids, j->type, k);
    if (id < r0 || id >= r1) continue;
    if (isz == 4) {
      const uint32_t v = (uint32_t)(id - r0);
      memcpy(ids + m * 4, &v, 4);
    } else {
      const uint64_t v = id - r0;
      memcpy(ids + m * 8, &v, 8);
    }
    m++;
  }
  ps_status st = j->strings ? ps_gather_strings(dev, part, ids, j->type, mine, &j->offs[i], &j->bytes[i], j->valid[i])
                            : ps_gather_values(dev, part, ids, j->type, mine, j->vals[i], j->valid[i]);
  ps_host_free(dev, ids);
  return st;
}

static void gather_free(ps_context *ctx, struct gather_job *j) {
  for (uint32_t i = 0; i < ctx->group->n; i++) {
    ps_context *dev = ctx->group->dev[i];
    ps_host_free(dev, j->vals[i]);
    ps_host_free(dev, j->valid[i]);
    ps_free(dev, j->offs[i]);
    ps_free(dev, j->bytes[i]);
  }
}

/* The checks ps_gather_values makes of the ids, and each device's share. */
static ps_status gather_start(ps_context *ctx, struct gather_job *j) {
  if (j->type != PS_INDEX_UINT32 && j->type != PS_INDEX_UINT64)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "index type %d is not PS_INDEX_UINT32 or PS_INDEX_UINT64",
                        (int)j->type);
  for (uint64_t k = 0; k < j->count; k++) {
    const uint64_t id = id_at(j->ids, j->type, k);
    if (id >= j->col->n)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                          "ids[%" PRIu64 "] is %" PRIu64 "; the column has %" PRIu64 " rows", k, id, j->col->n);
    j->mine[device_of(ctx->group, j->col->n, id)]++;
  }
  return PS_OK;
}

ps_status ps_group_gather(ps_context *ctx, const ps_column *col, const void *ids, ps_index_type type, uint64_t count,
                          void *values, uint8_t *validity) {
  struct gather_job j = {.col = col, .ids = ids, .type = type, .count = count};
  j.vb = col->type == PS_TYPE_STRING ? 4 : (uint32_t)ps_type_size(col->type);
  ps_status st = gather_start(ctx, &j);
  if (st == PS_OK) st = each(ctx, true, gather_part, &j);
  uint64_t m[PS_MAX_DEVICES] = {0};
  for (uint64_t k = 0; st == PS_OK && k < count; k++) { /* each value back where its id was */
    const uint32_t i = device_of(ctx->group, col->n, id_at(ids, type, k));
    memcpy((uint8_t *)values + k * j.vb, j.vals[i] + m[i] * j.vb, j.vb);
    if (validity) {
      const bool v = (j.valid[i][m[i] / 8] >> (m[i] % 8)) & 1;
      validity[k / 8] = (uint8_t)(v ? validity[k / 8] | (1u << (k % 8)) : validity[k / 8] & ~(1u << (k % 8)));
    }
    m[i]++;
  }
  gather_free(ctx, &j);
  return st;
}

ps_status ps_group_gather_strings(ps_context *ctx, const ps_column *col, const void *ids, ps_index_type type,
                                  uint64_t count, int64_t **offsets, uint8_t **bytes, uint8_t *validity) {
  struct gather_job j = {.col = col, .ids = ids, .type = type, .count = count, .strings = true};
  ps_status st = gather_start(ctx, &j);
  if (st == PS_OK) st = each(ctx, true, gather_part, &j);
  int64_t *offs = st == PS_OK ? ps_calloc_ctx(ctx, (size_t)count + 1, sizeof *offs) : NULL;
  if (st == PS_OK && !offs) st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "gathering %" PRIu64 " strings", count);
  uint64_t m[PS_MAX_DEVICES] = {0};
  for (uint64_t k = 0; st == PS_OK && k < count; k++) {
    const uint32_t i = device_of(ctx->group, col->n, id_at(ids, type, k));
    offs[k + 1] = offs[k] + (j.offs[i][m[i] + 1] - j.offs[i][m[i]]);
    m[i]++;
  }
  uint8_t *out = st == PS_OK ? ps_host_alloc(ctx, (size_t)offs[count]) : NULL;
  if (st == PS_OK && !out && offs[count])
    st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating %" PRId64 " string bytes", offs[count]);
  memset(m, 0, sizeof m);
  for (uint64_t k = 0; st == PS_OK && k < count; k++) {
    const uint32_t i = device_of(ctx->group, col->n, id_at(ids, type, k));
    const int64_t a = j.offs[i][m[i]], len = j.offs[i][m[i] + 1] - a;
    if (len) memcpy(out + offs[k], j.bytes[i] + a, (size_t)len);
    if (validity) {
      const bool v = (j.valid[i][m[i] / 8] >> (m[i] % 8)) & 1;
      validity[k / 8] = (uint8_t)(v ? validity[k / 8] | (1u << (k % 8)) : validity[k / 8] & ~(1u << (k % 8)));
    }
    m[i]++;
  }
  gather_free(ctx, &j);
  if (st != PS_OK) {
    ps_host_free(ctx, offs);
    ps_host_free(ctx, out);
    return st;
  }
  *offsets = offs;
  *bytes = out;
  return PS_OK;
}

/* ---- aggregates, statistics --------------------------------------------------- */

struct agg_job {
  const ps_column *col;
  const ps_expr *where; /* NULL: every row */
  ps_aggregates out[PS_MAX_DEVICES];
  /* a lossless float column: the unit of its exact sum, and each part's sum
   * in it (or unrep: not representable in it) */
  int32_t unit;
  uint64_t fsum[PS_MAX_DEVICES][4];
  bool unrep[PS_MAX_DEVICES];
};

/* Device i's aggregates of its part, over the rows where j->where is TRUE
 * (its bitmap in that device's memory) or over every row. */
static ps_status agg_part(ps_context *dev, uint32_t i, void *arg) {
  struct agg_job *j = arg;
  ps_column *part = j->col->parts->col[i];
  if (!part) return PS_OK;
  ps_buffer *sel = NULL;
  ps_status st = PS_OK;
  if (j->where) {
    const uint64_t rows = ps_column_rows(part);
    st = ps_buffer_create(dev, (rows + 31) / 32 * 4 + 4, &sel);
    if (st == PS_OK) st = ps_filter_device(dev, j->where->shard[i], sel, 0, NULL);
  }
  if (st == PS_OK) st = ps_aggregate_codes(dev, part, sel, 0, &j->out[i]);
  /* a lossless float column's exact sum, in the whole column's unit: the
   * parts' sums then add exactly */
  if (st == PS_OK && j->out[i].count && part->fmap.map != PS_FLOAT_MAP_DECIMAL)
    st = ps_query_float_sum(dev, part, sel, 0, j->unit, j->fsum[i], &(uint64_t){0}, &j->unrep[i]);
  ps_buffer_destroy(sel);
  return st;
}

/* a's min (max) below b's, in the column's type's order. */
static bool less_than(ps_type t, const ps_aggregates *a, const ps_aggregates *b, bool max) {
  if (ps_type_is_float(t)) {
    const double x = max ? a->max.f : a->min.f, y = max ? b->max.f : b->min.f;
    return x != x ? false : (y != y ? true : x < y); /* NaN above every number, as its code is */
  }
  if (ps_type_is_signed(t)) return max ? a->max.i < b->max.i : a->min.i < b->min.i;
  return max ? a->max.u < b->max.u : a->min.u < b->min.u;
}

ps_status ps_group_aggregate(ps_context *ctx, const ps_column *col, const ps_expr *where, ps_aggregates *out) {
  if (where && (where->ctx != ctx || where->rows != col->n))
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "the predicate of an aggregate %s",
                        where->ctx != ctx ? "belongs to another context" : "reads another number of rows");
  struct agg_job j = {.col = col, .where = where};
  if (col->fmap.map != PS_FLOAT_MAP_DECIMAL) { /* the unit of the whole column's sum: the coarsest part's */
    j.unit = INT32_MIN;
    for (uint32_t i = 0; i < ctx->group->n; i++)
      if (col->parts->col[i] && ps_query_float_sum_unit(col->parts->col[i]) > j.unit)
        j.unit = ps_query_float_sum_unit(col->parts->col[i]);
  }
  PS_TRY(each(ctx, true, agg_part, &j));
  ps_aggregates r;
  memset(&r, 0, sizeof r);
  r.type = col->type;
  r.scale = col->scale;
  ps_i128 total = 0;
  uint64_t fsum[4] = {0, 0, 0, 0};
  bool unrep = false;
  for (uint32_t i = 0; i < ctx->group->n; i++) {
    const ps_aggregates *p = &j.out[i];
    if (!col->parts->col[i] || !p->count) continue;
    if (!r.count) {
      r.min = p->min;
      r.max = p->max;
    } else {
      if (less_than(col->type, p, &r, false)) r.min = p->min;
      if (less_than(col->type, &r, p, true)) r.max = p->max;
    }
    r.count += p->count;
    total += (ps_i128)(((ps_u128)(uint64_t)p->sum_hi << 64) | p->sum_lo);
    unrep = unrep || j.unrep[i];
    uint64_t carry = 0;
    for (int w = 0; w < 4; w++) { /* 256-bit two's complement: the parts' exact float sums */
      const uint64_t x = fsum[w] + carry, y = x + j.fsum[i][w];
      carry = (x < carry) + (y < x);
      fsum[w] = y;
    }
  }
  if (r.count) {
    r.has_value = 1;
    static const double pow10[] = PS_POW10_TABLE;
    if (col->fmap.map != PS_FLOAT_MAP_DECIMAL) { /* a lossless float column: its exact sum, rounded once */
      r.sum_double = unrep ? NAN : ps_query_exact_double(fsum, j.unit, 1);
    } else {
      r.sum_lo = (uint64_t)total;
      r.sum_hi = (int64_t)(total >> 64);
      r.sum_fits_int64 = total >= INT64_MIN && total <= INT64_MAX;
      r.sum_int64 = r.sum_fits_int64 ? (int64_t)total : 0;
      r.sum_double = ps_type_is_float(col->type) || ps_type_is_decimal(col->type) ? (double)total / pow10[col->scale]
                                                                                  : (double)total;
    }
  }
  *out = r;
  if (col->n) ps_progress(ctx, col->n, col->n);
  return PS_OK;
}

ps_status ps_group_scan_stats(const ps_context *ctx, ps_scan_stats *out) {
  ps_scan_stats s;
  memset(&s, 0, sizeof s);
  for (uint32_t i = 0; i < ctx->group->n; i++) {
    const ps_scan_stats *d = &ctx->group->dev[i]->scan_stats;
    s.bytes_read += d->bytes_read;
    s.rows_scanned += d->rows_scanned;
    s.rows_skipped += d->rows_skipped;
    s.rows_all_true += d->rows_all_true;
  }
  s.struct_size = out->struct_size < sizeof s ? out->struct_size : (uint32_t)sizeof s;
  memcpy(out, &s, s.struct_size);
  return PS_OK;
}
