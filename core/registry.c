/* The explicit table of compiled-in backends, in "auto" preference order.
 * No backend registers itself (style.md). */
#include "internal.h"

const ps_backend_ops *const ps_backends[] = {
#ifdef PACKSCAN_HAVE_CUDA
    &ps_backend_cuda,
#endif
#ifdef PACKSCAN_HAVE_OPENCL
    &ps_backend_opencl,
#endif
    &ps_backend_reference,
};
const size_t ps_backends_count = sizeof ps_backends / sizeof ps_backends[0];

size_t ps_backend_count(void) { return ps_backends_count; }
const char *ps_backend_name(size_t index) {
  return index < ps_backends_count ? ps_backends[index]->name : NULL;
}
