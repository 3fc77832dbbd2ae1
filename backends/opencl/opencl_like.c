/* The dictionary pass of LIKE on the device (core/backend.h like_dict):
 * uploads the compiled pattern and enqueues kernels_opencl/like.cl on the
 * context's queue. Nothing waits: the eval that reads the bitmap follows on
 * the same in-order queue. */
#include <string.h>

#include "opencl_internal.h"

ps_status ps_cl_like_dict(ps_backend *be, const ps_like_dict_args *a) {
  if (a && a->count == 0) return ps_cl_like_on_device(be) ? PS_OK : PS_ERR_UNSUPPORTED; /* the core's query */
  if (!a || !a->nfa || a->count == 0 || !a->offsets.handle || !a->bytes.handle || !a->out.handle)
    return ps_backend_error(be->ctx, PS_ERR_INTERNAL, "OpenCL: like_dict without a pattern, entries or buffers");
  if (a->offsets.offset % 8 || a->out.offset % 4)
    return ps_backend_error(be->ctx, PS_ERR_INTERNAL, "OpenCL: like_dict: misaligned offsets (%llu) or output (%llu)",
                            (unsigned long long)a->offsets.offset, (unsigned long long)a->out.offset);
  const ps_cl_cached *prog;
  PS_CL_TRY(ps_cl_like_program(be, &prog));
  cl_kernel k = prog->kernels[PS_CL_LIKE];
  cl_mem nfa;
  PS_CL_TRY(ps_cl_upload(be, PS_CL_PARAM_PROGRAM, a->nfa, sizeof *a->nfa, "LIKE pattern", &nfa));
  cl_mem offsets = (cl_mem)a->offsets.handle, bytes = (cl_mem)a->bytes.handle, out = (cl_mem)a->out.handle;
  cl_ulong scalars[5] = {a->offsets.offset, a->bytes.offset, a->out.offset, a->first, a->count};
  ps_status st = ps_cl_set_arg(be, k, 0, sizeof(cl_mem), &nfa);
  if (st == PS_OK) st = ps_cl_set_arg(be, k, 1, sizeof(cl_mem), &offsets);
  if (st == PS_OK) st = ps_cl_set_arg(be, k, 2, sizeof(cl_mem), &bytes);
  if (st == PS_OK) st = ps_cl_set_arg(be, k, 3, sizeof(cl_mem), &out);
  for (cl_uint i = 0; st == PS_OK && i < 5; ++i) st = ps_cl_set_arg(be, k, 4 + i, sizeof(cl_ulong), &scalars[i]);
  /* like.cl: a work-item per entry where the group is whole words, else
   * one per word (the kernel's per_entry, from the same group size) */
  const size_t group = prog->work_group[PS_CL_LIKE], words = (size_t)((a->count + 31) / 32);
  const int per_entry = group >= 32 && group % 32 == 0;
  if (st == PS_OK) st = ps_cl_set_arg(be, k, 9, 256 * sizeof(cl_ulong), NULL);
  if (st == PS_OK) st = ps_cl_set_arg(be, k, 10, group * sizeof(cl_uint), NULL);
  if (st == PS_OK) st = ps_cl_launch(be, prog, PS_CL_LIKE, per_entry ? words * 32 : words);
  /* Released now, freed by OpenCL once the launch is done. */
  clReleaseMemObject(nfa);
  return st;
}
