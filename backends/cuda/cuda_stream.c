/* Streaming host-resident columns (core/stream.c): each chunk's copies go
 * on the backend's own copy stream, so that they run while the context's
 * stream computes the chunk before. Per staging slot, an event after its
 * copies makes the context's stream wait for them, and an event the
 * context's stream records after the last work that read the slot makes
 * the slot's next copies wait. A pageable source is copied by the host into
 * a pinned bounce buffer first (a copy from pageable memory is not
 * asynchronous); a pinned or registered one is copied straight. */
#include <string.h>

#include "cuda_backend.h"

static void *devptr(ps_devmem m) { return (uint8_t *)m.handle + m.offset; }

#define BOUNCE_ALIGN 64u

/* Forwards a failed status (it carries its message already). */
#define STAGE_TRY(expr)                               \
  do {                                                \
    ps_status stage_try_st_ = (expr);                 \
    if (stage_try_st_ != PS_OK) return stage_try_st_; \
  } while (0)

static ps_status make_stream(ps_backend *be) {
  if (be->copy_stream) return PS_OK;
  ps_status st = ps_cuda_status(be->ctx, cudaStreamCreateWithFlags(&be->copy_stream, cudaStreamNonBlocking),
                                "cudaStreamCreateWithFlags (copies)", false);
  for (uint32_t i = 0; st == PS_OK && i < PS_STAGE_SLOTS; i++) {
    st = ps_cuda_status(be->ctx, cudaEventCreateWithFlags(&be->stage_copied[i], cudaEventDisableTiming),
                        "cudaEventCreateWithFlags", false);
    if (st == PS_OK)
      st = ps_cuda_status(be->ctx, cudaEventCreateWithFlags(&be->stage_free[i], cudaEventDisableTiming),
                          "cudaEventCreateWithFlags", false);
  }
  return st;
}

/* Whether the device can copy from src without the driver staging it. */
static bool pinned(const void *src) {
  struct cudaPointerAttributes attr;
  memset(&attr, 0, sizeof attr);
  if (cudaPointerGetAttributes(&attr, src) != cudaSuccess) {
    (void)cudaGetLastError(); /* a plain host pointer on older runtimes */
    return false;
  }
  return attr.type == cudaMemoryTypeHost;
}

/* Room for `bytes` in slot's bounce buffer; its earlier copies are waited
 * for where it must grow. */
static ps_status bounce_room(ps_backend *be, uint32_t slot, size_t bytes, uint8_t **at) {
  size_t fill = be->bounce_fill[slot];
  if (fill + bytes > be->bounce_bytes[slot]) {
    STAGE_TRY(ps_cuda_status(be->ctx, cudaStreamSynchronize(be->copy_stream), "cudaStreamSynchronize (copies)", false));
    size_t want = be->bounce_bytes[slot] * 2 > bytes ? be->bounce_bytes[slot] * 2 : bytes;
    if (be->bounce[slot]) (void)cudaFreeHost(be->bounce[slot]);
    be->bounce[slot] = NULL;
    be->bounce_bytes[slot] = 0;
    STAGE_TRY(ps_cuda_status(be->ctx, cudaHostAlloc((void **)&be->bounce[slot], want, cudaHostAllocDefault),
                             "cudaHostAlloc (staging)", false));
    be->bounce_bytes[slot] = want;
    fill = 0;
  }
  *at = be->bounce[slot] + fill;
  be->bounce_fill[slot] = (fill + bytes + BOUNCE_ALIGN - 1) / BOUNCE_ALIGN * BOUNCE_ALIGN;
  return PS_OK;
}

static ps_status stage_write(ps_backend *be, uint32_t slot, ps_devmem dst, const void *src, uint64_t bytes) {
  STAGE_TRY(make_stream(be));
  if (!be->stage_open[slot]) { /* the slot's first copy of a chunk */
    if (be->stage_free_set[slot])
      STAGE_TRY(ps_cuda_status(be->ctx, cudaStreamWaitEvent(be->copy_stream, be->stage_free[slot], 0),
                               "cudaStreamWaitEvent (copies)", false));
    /* the slot's bounce buffer is free once its last chunk's copies are done */
    STAGE_TRY(ps_cuda_status(be->ctx, cudaEventSynchronize(be->stage_copied[slot]), "cudaEventSynchronize", false));
    be->stage_free_set[slot] = false;
    be->stage_open[slot] = true;
    be->bounce_fill[slot] = 0;
  }
  const void *from = src;
  if (!pinned(src)) {
    uint8_t *at;
    STAGE_TRY(bounce_room(be, slot, (size_t)bytes, &at));
    memcpy(at, src, (size_t)bytes);
    from = at;
  }
  STAGE_TRY(ps_cuda_status(be->ctx,
                           cudaMemcpyAsync(devptr(dst), from, (size_t)bytes, cudaMemcpyHostToDevice, be->copy_stream),
                           "cudaMemcpyAsync (staged chunk)", false));
  /* the compute stream waits for it at ps_cuda_stage_ready, when the chunk is used */
  return ps_cuda_status(be->ctx, cudaEventRecord(be->stage_copied[slot], be->copy_stream), "cudaEventRecord", false);
}

ps_status ps_cuda_stage_write(ps_backend *be, uint32_t slot, ps_devmem dst, const void *src, uint64_t bytes) {
  int prev;
  STAGE_TRY(ps_cuda_enter(be, &prev));
  ps_status st = stage_write(be, slot, dst, src, bytes);
  ps_cuda_leave(be, prev);
  return st;
}

ps_status ps_cuda_stage_ready(ps_backend *be, uint32_t slot) {
  if (!be->copy_stream) return PS_OK; /* nothing was copied */
  int prev;
  STAGE_TRY(ps_cuda_enter(be, &prev));
  /* the event as last recorded: after every copy into the slot so far */
  ps_status st = ps_cuda_status(be->ctx, cudaStreamWaitEvent(be->stream, be->stage_copied[slot], 0),
                                "cudaStreamWaitEvent", false);
  ps_cuda_leave(be, prev);
  return st;
}

ps_status ps_cuda_stage_release(ps_backend *be, uint32_t slot) {
  if (!be->copy_stream) return PS_OK; /* nothing was copied */
  int prev;
  STAGE_TRY(ps_cuda_enter(be, &prev));
  ps_status st = ps_cuda_status(be->ctx, cudaEventRecord(be->stage_free[slot], be->stream), "cudaEventRecord", false);
  if (st == PS_OK) be->stage_free_set[slot] = true;
  be->stage_open[slot] = false;
  ps_cuda_leave(be, prev);
  return st;
}

/* be's device is current. */
void ps_cuda_stage_free(ps_backend *be) {
  if (be->copy_stream) (void)cudaStreamSynchronize(be->copy_stream);
  for (uint32_t i = 0; i < PS_STAGE_SLOTS; i++) {
    if (be->stage_copied[i]) (void)cudaEventDestroy(be->stage_copied[i]);
    if (be->stage_free[i]) (void)cudaEventDestroy(be->stage_free[i]);
    if (be->bounce[i]) (void)cudaFreeHost(be->bounce[i]);
    be->stage_copied[i] = be->stage_free[i] = NULL;
    be->bounce[i] = NULL;
    be->bounce_bytes[i] = be->bounce_fill[i] = 0;
  }
  if (be->copy_stream) (void)cudaStreamDestroy(be->copy_stream);
  be->copy_stream = NULL;
  (void)cudaGetLastError();
}
