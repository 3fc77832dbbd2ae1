/* Contexts: backend choice by name, options, last error. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

extern const ps_backend_ops *const ps_backends[];
extern const size_t ps_backends_count;

/* The options of version 0.1: the fields up to and including max_chunk_rows. */
#define PS_OPTIONS_V01_SIZE (offsetof(ps_context_options, max_chunk_rows) + sizeof(uint64_t))

void ps_context_options_init_sized(ps_context_options *opts, size_t size) {
  if (!opts || size < PS_OPTIONS_V01_SIZE) return;
  if (size > sizeof *opts) size = sizeof *opts;
  ps_context_options o;
  memset(&o, 0, sizeof o);
  o.struct_size = (uint32_t)size;
  o.backend = "auto";
  o.opencl_platform = -1;
  o.opencl_device = -1;
  o.cuda_device = -1;
  memcpy(opts, &o, size);
}

/* The exported symbol of 0.1, for programs built against its header (where
 * ps_context_options_init was a function): their struct ends at
 * max_chunk_rows, so only that much is written. */
#undef ps_context_options_init
PS_API void ps_context_options_init(ps_context_options *opts);
void ps_context_options_init(ps_context_options *opts) { ps_context_options_init_sized(opts, PS_OPTIONS_V01_SIZE); }

static const ps_backend_ops *find_backend(const char *name) {
  for (size_t i = 0; i < ps_backends_count; i++)
    if (strcmp(ps_backends[i]->name, name) == 0) return ps_backends[i];
  return NULL;
}

static bool known_backend_name(const char *name) {
  return strcmp(name, "reference") == 0 || strcmp(name, "opencl") == 0 || strcmp(name, "cuda") == 0;
}

/* Tries one backend; on success fills ctx. */
static ps_status try_backend(ps_context *ctx, const ps_backend_ops *ops, const ps_context_options *o) {
  if (ops->abi_version != PS_BACKEND_ABI_VERSION)
    return ps_set_error(ctx, PS_ERR_INTERNAL, "backend '%s' has ABI version %u, expected %u", ops->name,
                        ops->abi_version, PS_BACKEND_ABI_VERSION);
  ps_backend *be = NULL;
  ps_status st = ops->create(ctx, o, &be);
  if (st != PS_OK) return st;
  ctx->ops = ops;
  ctx->be = be;
  uint64_t max_rows = ops->max_chunk_rows(be);
  uint64_t want = o->max_chunk_rows;
  if (want == 0 || want > max_rows) want = max_rows;
  want &= ~(uint64_t)31;
  ctx->chunk_rows = want < 32 ? 32 : want;
  return PS_OK;
}

ps_status ps_context_create(const ps_context_options *opts_in, char *err_buf, size_t err_size,
                            ps_context **out) {
  if (err_buf && err_size) err_buf[0] = '\0';
  if (!out) return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT, "out is NULL");
  *out = NULL;
  ps_context_options o;
  ps_context_options_init_sized(&o, sizeof o);
  if (opts_in) {
    if (opts_in->struct_size < offsetof(ps_context_options, backend) + sizeof(const char *) ||
        opts_in->struct_size > sizeof o)
      return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                              "options.struct_size is %u; expected %u (call ps_context_options_init)",
                              opts_in->struct_size, (unsigned)sizeof o);
    /* Copy only the fields the caller's version of the struct has. */
    memcpy(&o, opts_in, opts_in->struct_size);
    /* A size that ends inside a pointer field leaves that field unread. */
    if (opts_in->struct_size < offsetof(ps_context_options, kernel_cache_dir) + sizeof(const char *))
      o.kernel_cache_dir = NULL;
    if (opts_in->struct_size < offsetof(ps_context_options, query_compile) + sizeof(int32_t))
      o.query_compile = PS_QUERY_COMPILE_BACKGROUND;
    if (opts_in->struct_size < offsetof(ps_context_options, zone_pruning) + sizeof(int32_t))
      o.zone_pruning = PS_ZONE_PRUNING_ON;
    if (opts_in->struct_size < offsetof(ps_context_options, device_memory_limit) + sizeof(uint64_t))
      o.device_memory_limit = 0;
    if (opts_in->struct_size < offsetof(ps_context_options, progress) + sizeof o.progress) o.progress = NULL;
    if (opts_in->struct_size < offsetof(ps_context_options, progress_user) + sizeof(void *)) o.progress_user = NULL;
    if (opts_in->struct_size < offsetof(ps_context_options, max_groups) + sizeof(uint64_t)) o.max_groups = 0;
    if (opts_in->struct_size < offsetof(ps_context_options, devices) + sizeof(const int32_t *)) {
      o.device_count = 0;
      o.devices = NULL;
    }
    if (opts_in->struct_size < offsetof(ps_context_options, opencl_platform_name) + sizeof(const char *))
      o.opencl_platform_name = NULL;
    o.struct_size = sizeof o;
  }
  if (o.query_compile < PS_QUERY_COMPILE_BACKGROUND || o.query_compile > PS_QUERY_COMPILE_NEVER)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "options.query_compile is %d; expected PS_QUERY_COMPILE_BACKGROUND (0), _BLOCKING (1) "
                            "or _NEVER (2)",
                            (int)o.query_compile);
  if (o.zone_pruning != PS_ZONE_PRUNING_ON && o.zone_pruning != PS_ZONE_PRUNING_OFF)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "options.zone_pruning is %d; expected PS_ZONE_PRUNING_ON (0) or PS_ZONE_PRUNING_OFF (1)",
                            (int)o.zone_pruning);
  if (o.device_memory_limit && o.device_memory_limit < PS_DEVICE_MEMORY_LIMIT_MIN)
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "options.device_memory_limit is %llu; expected 0 (the default) or at least %u bytes",
                            (unsigned long long)o.device_memory_limit, (unsigned)PS_DEVICE_MEMORY_LIMIT_MIN);
  if (o.opencl_platform_name && (!o.opencl_platform_name[0] || o.opencl_platform >= 0))
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            o.opencl_platform_name[0]
                                ? "options.opencl_platform_name '%s' is set, and so is opencl_platform (%d): set one"
                                : "options.opencl_platform_name is empty%.0s (%d); expected a part of a platform's "
                                  "name, or NULL",
                            o.opencl_platform_name, (int)o.opencl_platform);
  if (o.device_count > PS_MAX_DEVICE_COUNT || (o.device_count && !o.devices))
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            o.devices ? "options.device_count is %u; at most %d" : "options.device_count is %u but devices is NULL",
                            o.device_count, PS_MAX_DEVICE_COUNT);
  if (o.device_count == 1) { /* one device: an ordinary context of it */
    o.cuda_device = o.opencl_device = o.devices[0];
    o.device_count = 0;
    o.devices = NULL;
  }
  const char *name = o.backend ? o.backend : "auto";
  if ((o.allocator.alloc == NULL) != (o.allocator.free == NULL))
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "options.allocator: alloc and free must both be set or both be NULL");

  if (o.kernel_cache_dir && (o.kernel_cache_dir[0] == '\0' || ps_kcache_path_is_not_dir(o.kernel_cache_dir)))
    return ps_set_error_buf(err_buf, err_size, PS_ERR_INVALID_ARGUMENT,
                            "options.kernel_cache_dir '%s' is %s; expected a directory (or NULL: no disk cache)",
                            o.kernel_cache_dir, o.kernel_cache_dir[0] ? "not a directory" : "empty");

  ps_context *ctx = ps_alloc_with(&o.allocator, sizeof *ctx);
  if (!ctx) return ps_set_error_buf(err_buf, err_size, PS_ERR_OUT_OF_MEMORY, "allocating the context");
  memset(ctx, 0, sizeof *ctx);
  ctx->alloc = o.allocator;
  ctx->query_compile = o.query_compile;
  ctx->zone_pruning = o.zone_pruning == PS_ZONE_PRUNING_ON;
  ctx->device_memory_limit = o.device_memory_limit;
  ctx->stage_slot = -1;
  ctx->progress = o.progress;
  ctx->progress_user = o.progress_user;
  ctx->max_groups = o.max_groups && o.max_groups < PS_QUERY_GROUPS_LIMIT ? o.max_groups : PS_QUERY_GROUPS_LIMIT;
  ctx->scan_stats.struct_size = sizeof ctx->scan_stats;
  if (o.kernel_cache_dir) {
    ctx->kernel_cache_dir = ps_kcache_dir_copy(&o.allocator, o.kernel_cache_dir);
    if (!ctx->kernel_cache_dir) {
      ps_free_with(&o.allocator, ctx);
      return ps_set_error_buf(err_buf, err_size, PS_ERR_OUT_OF_MEMORY, "copying options.kernel_cache_dir (%zu bytes)",
                              strlen(o.kernel_cache_dir) + 1);
    }
  }
  ps_internal_options_init(&ctx->options);

  ps_status st;
  if (o.device_count > 1) {
    st = ps_group_create(ctx, &o, name);
  } else if (strcmp(name, "auto") == 0) {
    /* Best first; a backend without a device is skipped, and the context
     * reports which one it got (ps_context_backend). */
    st = PS_ERR_NO_DEVICE;
    char reasons[PS_ERRMSG_SIZE] = "";
    for (size_t i = 0; i < ps_backends_count; i++) {
      st = try_backend(ctx, ps_backends[i], &o);
      if (st == PS_OK) break;
      /* Append "; <message>", truncating silently: these are diagnostics. */
      size_t len = strlen(reasons);
      const char *parts[2] = {len ? "; " : "", ctx->last_error};
      for (int k = 0; k < 2; k++)
        for (const char *q = parts[k]; *q && len + 1 < sizeof reasons; q++) reasons[len++] = *q;
      reasons[len] = '\0';
    }
    if (st != PS_OK) ps_set_error(ctx, st, "no backend could be started: %s", reasons);
  } else {
    const ps_backend_ops *ops = find_backend(name);
    if (!ops) {
      st = known_backend_name(name)
               ? ps_set_error(ctx, PS_ERR_NO_BACKEND, "backend '%s' is not compiled into this library", name)
               : ps_set_error(ctx, PS_ERR_NO_BACKEND,
                              "unknown backend '%s' (expected reference, opencl, cuda or auto)", name);
    } else {
      st = try_backend(ctx, ops, &o);
    }
  }
  if (st != PS_OK) {
    if (err_buf && err_size) snprintf(err_buf, err_size, "%s", ctx->last_error);
    ps_group_destroy(ctx);
    ps_free_with(&o.allocator, ctx->kernel_cache_dir);
    ps_free_with(&o.allocator, ctx);
    return st;
  }
  ps_clear_error(ctx);
  *out = ctx;
  return PS_OK;
}

void ps_context_destroy(ps_context *ctx) {
  if (!ctx) return;
  ps_buffer_destroy(ctx->spare_aux);
  ps_buffer_destroy(ctx->ids_scratch);
  ps_stage_free(ctx);
  ps_group_destroy(ctx);
  if (ctx->ops) ctx->ops->destroy(ctx->be);
  ps_allocator a = ctx->alloc;
  ps_free_with(&a, ctx->kernel_cache_dir);
  ps_free_with(&a, ctx);
}

const char *ps_context_backend(const ps_context *ctx) {
  if (ctx && ctx->group) return ps_context_backend(ctx->group->dev[0]);
  return ctx && ctx->ops ? ctx->ops->name : "";
}

const char *ps_context_device(const ps_context *ctx) {
  if (ctx && ctx->group) return ctx->group->device_names;
  return ctx && ctx->ops ? ctx->ops->device_name(ctx->be) : "";
}

ps_backend *ps_context_backend_state(ps_context *ctx, const char *name) {
  if (!ctx || !ctx->ops || strcmp(ctx->ops->name, name) != 0) return NULL;
  return ctx->be;
}

void ps_internal_options_init(ps_internal_options *opts) {
  if (!opts) return;
  memset(opts, 0, sizeof *opts);
  opts->fast_paths = 1;
  opts->opencl_jit = PS_OPT_AUTO;
  opts->opencl_words = PS_OPT_WORDS_AUTO;
  opts->opencl_like = PS_OPT_AUTO;
  opts->opencl_ids_runs = PS_OPT_AUTO;
  opts->opencl_ids_run_words = 0;
  opts->opencl_ids_scan = 0;
  opts->opencl_reduce_tiles = PS_OPT_AUTO;
  opts->opencl_gather_ids = PS_OPT_AUTO;
  opts->query_specialize = PS_OPT_AUTO;
  opts->opencl_query = PS_OPT_QUERY_AUTO;
  opts->query_lanes = PS_OPT_AUTO;
  opts->query_prefetch = PS_OPT_AUTO;
  opts->query_warp_merge = 1;
  opts->query_collect_pinned = 1;
  opts->opencl_param_buffers = 1;
  opts->opencl_fp64 = 1;
  opts->query_min_blocks = 0;
  opts->where_min_blocks = 0;
  opts->where_waves = 0;
}

/* PS_OK when lo <= value <= hi, else a message naming the field. */
static ps_status option_in_range(ps_context *ctx, const char *field, int value, int lo, int hi) {
  if (value >= lo && value <= hi) return PS_OK;
  return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "internal options: %s is %d; expected %d..%d", field, value, lo,
                      hi);
}

ps_status ps_context_set_internal_options(ps_context *ctx, const ps_internal_options *opts) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  if (!opts) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "internal options: opts is NULL");
  PS_TRY(option_in_range(ctx, "fast_paths", opts->fast_paths, 0, 1));
  PS_TRY(option_in_range(ctx, "opencl_jit", opts->opencl_jit, PS_OPT_AUTO, PS_OPT_ON));
  PS_TRY(option_in_range(ctx, "opencl_words", opts->opencl_words, PS_OPT_WORDS_AUTO, PS_OPT_WORDS_REFUSED));
  PS_TRY(option_in_range(ctx, "opencl_like", opts->opencl_like, PS_OPT_AUTO, PS_OPT_ON));
  PS_TRY(option_in_range(ctx, "opencl_ids_runs", opts->opencl_ids_runs, PS_OPT_AUTO, PS_OPT_ON));
  PS_TRY(option_in_range(ctx, "opencl_ids_run_words", opts->opencl_ids_run_words, 0, 4096));
  PS_TRY(option_in_range(ctx, "opencl_ids_scan", opts->opencl_ids_scan, 0, 1));
  PS_TRY(option_in_range(ctx, "opencl_reduce_tiles", opts->opencl_reduce_tiles, PS_OPT_AUTO, PS_OPT_ON));
  PS_TRY(option_in_range(ctx, "opencl_gather_ids", opts->opencl_gather_ids, PS_OPT_AUTO, PS_OPT_ON));
  PS_TRY(option_in_range(ctx, "query_specialize", opts->query_specialize, PS_OPT_AUTO, PS_OPT_ON));
  PS_TRY(option_in_range(ctx, "opencl_query", opts->opencl_query, PS_OPT_QUERY_AUTO, PS_OPT_QUERY_UNBUILDABLE));
  if (opts->query_group_slots != 0) PS_TRY(option_in_range(ctx, "query_group_slots", opts->query_group_slots, 6, 30));
  PS_TRY(option_in_range(ctx, "query_wait_per_chunk", opts->query_wait_per_chunk, 0, 1));
  PS_TRY(option_in_range(ctx, "query_collect_pinned", opts->query_collect_pinned, 0, 1));
  PS_TRY(option_in_range(ctx, "query_lanes", opts->query_lanes, PS_OPT_AUTO, PS_OPT_ON));
  PS_TRY(option_in_range(ctx, "query_prefetch", opts->query_prefetch, PS_OPT_AUTO, PS_OPT_ON));
  PS_TRY(option_in_range(ctx, "query_warp_merge", opts->query_warp_merge, 0, 1));
  PS_TRY(option_in_range(ctx, "opencl_param_buffers", opts->opencl_param_buffers, 0, 1));
  PS_TRY(option_in_range(ctx, "opencl_fp64", opts->opencl_fp64, 0, 1));
  PS_TRY(option_in_range(ctx, "query_min_blocks", opts->query_min_blocks, 0, 8));
  PS_TRY(option_in_range(ctx, "where_min_blocks", opts->where_min_blocks, 0, 16));
  PS_TRY(option_in_range(ctx, "where_waves", opts->where_waves, 0, 64));
  ctx->options = *opts;
  ps_clear_error(ctx);
  return PS_OK;
}

const ps_internal_options *ps_context_internal_options(const ps_context *ctx) {
  /* ps_internal_options_init's values (test_internal_options compares them) */
  static const ps_internal_options defaults = {
      .fast_paths = 1,
      .opencl_jit = PS_OPT_AUTO,
      .opencl_words = PS_OPT_WORDS_AUTO,
      .opencl_like = PS_OPT_AUTO,
      .opencl_ids_runs = PS_OPT_AUTO,
      .opencl_ids_run_words = 0,
      .opencl_ids_scan = 0,
      .opencl_reduce_tiles = PS_OPT_AUTO,
      .opencl_gather_ids = PS_OPT_AUTO,
      .query_specialize = PS_OPT_AUTO,
      .opencl_query = PS_OPT_QUERY_AUTO,
      .query_group_slots = 0,
      .query_wait_per_chunk = 0,
      .query_collect_pinned = 1,
      .query_lanes = PS_OPT_AUTO,
      .query_prefetch = PS_OPT_AUTO,
      .query_warp_merge = 1,
      .opencl_param_buffers = 1,
      .opencl_fp64 = 1,
      .query_min_blocks = 0,
      .where_min_blocks = 0,
      .where_waves = 0,
  };
  return ctx ? &ctx->options : &defaults;
}
