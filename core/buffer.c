/* Device buffers: allocated by the backend, or wrapping caller memory. */
#include <string.h>

#include "internal.h"

ps_status ps_buffer_create(ps_context *ctx, uint64_t size, ps_buffer **out) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!out) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "ps_buffer_create: out is NULL");
  if (ctx->group) return ps_group_unsupported(ctx, "ps_buffer_create");
  ps_buffer *b = ps_calloc_ctx(ctx, 1, sizeof *b);
  if (!b) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a buffer handle");
  ps_status st = ctx->ops->mem_alloc(ctx->be, size ? size : 1, &b->mem);
  if (st != PS_OK) {
    ps_host_free(ctx, b);
    return st;
  }
  b->ctx = ctx;
  b->size = size;
  b->owned = true;
  *out = b;
  return PS_OK;
}

ps_status ps_buffer_wrap_native(ps_context *ctx, const char *backend, void *handle, uint64_t size,
                                ps_buffer **out) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!out) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "out is NULL");
  if (strcmp(ctx->ops->name, backend) != 0)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "cannot wrap %s memory on a '%s' context", backend,
                        ctx->ops->name);
  if (!handle) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "the %s handle to wrap is NULL", backend);
  ps_buffer *b = ps_calloc_ctx(ctx, 1, sizeof *b);
  if (!b) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a buffer handle");
  b->ctx = ctx;
  b->mem.handle = handle;
  b->mem.offset = 0;
  b->size = size;
  b->owned = false;
  if (ctx->ops->retain_wrapped) {
    ps_status st = ctx->ops->retain_wrapped(ctx->be, b->mem);
    if (st != PS_OK) {
      ps_host_free(ctx, b);
      return st;
    }
  }
  *out = b;
  return PS_OK;
}

void ps_buffer_destroy(ps_buffer *buf) {
  if (!buf) return;
  ps_context *ctx = buf->ctx;
  if (buf->owned)
    ctx->ops->mem_free(ctx->be, buf->mem);
  else if (ctx->ops->release_wrapped)
    ctx->ops->release_wrapped(ctx->be, buf->mem);
  ps_host_free(ctx, buf);
}

uint64_t ps_buffer_size(const ps_buffer *buf) { return buf ? buf->size : 0; }
ps_devmem ps_buffer_devmem(const ps_buffer *buf) { return buf->mem; }
ps_context *ps_buffer_context(const ps_buffer *buf) { return buf->ctx; }

static ps_status check_range(ps_context *ctx, const ps_buffer *buf, uint64_t offset, uint64_t size,
                             const void *host, const char *what) {
  if (!buf) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: buffer is NULL", what);
  if (buf->ctx != ctx)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: buffer belongs to another context", what);
  if (!host && size) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: host pointer is NULL", what);
  if (offset > buf->size || size > buf->size - offset)
    return ps_set_error(ctx, PS_ERR_BUFFER_TOO_SMALL,
                        "%s: %llu bytes at offset %llu reach past the end of the buffer of %llu bytes", what,
                        (unsigned long long)size, (unsigned long long)offset, (unsigned long long)buf->size);
  return PS_OK;
}

ps_status ps_buffer_write(ps_context *ctx, ps_buffer *buf, uint64_t offset, const void *src, uint64_t size) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  PS_TRY(check_range(ctx, buf, offset, size, src, "ps_buffer_write"));
  if (!size) return PS_OK;
  ps_devmem m = buf->mem;
  m.offset += offset;
  return ctx->ops->mem_write(ctx->be, m, src, size);
}

ps_status ps_buffer_read(ps_context *ctx, const ps_buffer *buf, uint64_t offset, void *dst, uint64_t size) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  PS_TRY(check_range(ctx, buf, offset, size, dst, "ps_buffer_read"));
  if (!size) return PS_OK;
  ps_devmem m = buf->mem;
  m.offset += offset;
  return ctx->ops->mem_read(ctx->be, dst, m, size);
}
