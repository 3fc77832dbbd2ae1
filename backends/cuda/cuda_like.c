/* The dictionary pass of LIKE on the device (core/backend.h like_dict):
 * fills the launch parameters and enqueues kernels_cuda/like.cu on the
 * context's stream. Nothing is synchronized: the eval that reads the bitmap
 * follows on the same stream. */
#include <string.h>

#include "cuda_backend.h"
#include "ps_cuda_kernels.h"

static const void *devptr(ps_devmem m) { return (const uint8_t *)m.handle + m.offset; }

ps_status ps_cuda_like_dict(ps_backend *be, const ps_like_dict_args *a) {
  if (a && a->count == 0) return PS_OK; /* the core's query: a GPU always matches */
  if (!a || !a->nfa || a->count == 0 || !a->offsets.handle || !a->bytes.handle || !a->out.handle)
    return ps_backend_error(be->ctx, PS_ERR_INTERNAL, "cuda: like_dict without a pattern, entries or buffers");
  ps_cuda_like_params p;
  memset(&p, 0, sizeof p);
  p.nfa = *a->nfa;
  p.offsets = (const uint64_t *)devptr(a->offsets);
  p.bytes = (const uint8_t *)devptr(a->bytes);
  p.out = (uint32_t *)devptr(a->out);
  p.first = a->first;
  p.count = a->count;
  int prev;
  ps_status st = ps_cuda_enter(be, &prev);
  if (st != PS_OK) return st;
  st = ps_cuda_status(be->ctx, ps_cuda_launch_like(&p, be->max_blocks, be->stream), "launching the LIKE kernel", false);
  ps_cuda_leave(be, prev);
  return st;
}
