/* Queries (core/backend.h ps_query_args): the two passes of
 * kernels_shared/ps_query_kernels.h through query.cl's entry points (pass 1
 * in the mode ps_q_choose_mode picks, pass 2 one work-group per
 * accumulator), and one synchronization per chunk (for the status words). */
#include <string.h>

#include "opencl_internal.h"
#include "ps_query_kernels.h"
#include "query_spec.h"

/* PS_QMODE_ITEMS: partial accumulators of pass 1 in device memory, at most
 * (bytes), and work-items of pass 1 at most, per kind of device. */
#define PS_CL_QUERY_PARTIAL_BYTES (UINT64_C(64) << 20)
#define PS_CL_QUERY_ITEMS_GPU 16384u
#define PS_CL_QUERY_ITEMS_CPU 256u
/* The other modes: work-groups of pass 1 per compute unit. */
#define PS_CL_QUERY_GROUPS_PER_CU 8u

_Static_assert(PS_CL_WORK_GROUP <= PS_Q_LOCAL_ACCS, "query work-groups reduce in PS_Q_LOCAL_ACCS local slots");

static cl_mem or_dummy(const ps_backend *be, ps_devmem m) { return m.handle ? (cl_mem)m.handle : be->dummy; }

/* The query's specialization text (core/query_spec.h) into *out (host
 * memory the caller frees). */
static ps_status spec_text(ps_backend *be, const ps_query_args *a, const ps_qlaunch *L, uint64_t fields, char **out) {
  *out = NULL;
  char *text = ps_host_alloc(be->ctx, PS_QUERY_SPEC_MAX_TEXT);
  if (!text) return ps_backend_error(be->ctx, PS_ERR_OUT_OF_MEMORY, "OpenCL: query specialization text");
  ps_query_spec_flags f;
  memset(&f, 0, sizeof f);
  f.mode = (uint32_t)L->mode;
  f.fits64 = (uint32_t)L->fits64;
  f.has_where = (uint32_t)L->has_where;
  f.data_aligned = L->data_aligned;
  f.and_right = L->and_right;
  f.or_right = L->or_right;
  f.fields = fields;
  if (ps_query_spec_write(a->prog, a->where_prog, &f, text, PS_QUERY_SPEC_MAX_TEXT) == 0) {
    ps_host_free(be->ctx, text);
    return ps_backend_error(be->ctx, PS_ERR_INTERNAL, "OpenCL: query specialization text over %u bytes",
                            PS_QUERY_SPEC_MAX_TEXT);
  }
  *out = text;
  return PS_OK;
}

ps_status ps_cl_query(ps_backend *be, const ps_query_args *a) {
  const ps_vprog *p = a->prog;
  if (a->rows == 0 || a->rows > PS_CL_MAX_CHUNK_ROWS)
    return ps_backend_error(be->ctx, PS_ERR_INTERNAL, "OpenCL: query: chunk rows (%llu)", (unsigned long long)a->rows);
  const int local_atomics = ps_cl_has_int64_atomics(be);
  const uint64_t n_acc = (uint64_t)p->n_groups * p->n_accs, words = (a->rows + 31) / 32;
  const int fits64 = ps_q_values_fit64(p);
  uint32_t mode = ps_q_choose_mode(p, fits64, local_atomics);
  /* specialized: small GROUP BY domains keep their accumulators in
   * registers, on GPUs (a CPU has no register file to gain, and PoCL 3.1's
   * LLVM 15 crashes in its inliner on the larger unrolled kernels, e.g.
   * TPC-H Q1's); on a CPU device only when the tests force specialization */
  const int specialize = ps_query_specialize(ps_cl_options(be), a->rows);
  const int regs = !be->cpu || ps_cl_options(be)->query_specialize == PS_OPT_ON;
  const double bound = specialize && mode != PS_QMODE_PRIVATE ? ps_q_values_bound(p) : -1;
  const uint64_t fields = ps_q_kept_fields(p, a->agg_fields);
  if (specialize && regs && ps_q_regs_fit(p, fields, bound, local_atomics)) mode = PS_QMODE_REGS;
  ps_qlaunch L;
  memset(&L, 0, sizeof L);
  L.rows = a->rows;
  L.mode = mode;
  L.fits64 = (uint64_t)fits64;
  L.has_where = a->where_prog != NULL;
  ps_program where_prog;
  memset(&where_prog, 0, sizeof where_prog);
  if (a->where_prog) {
    where_prog = *a->where_prog;
    L.and_right = a->where_and_right;
    L.or_right = a->where_or_right;
    for (uint32_t i = 0; i < where_prog.n_insns; i++)
      if (where_prog.insns[i].op == PS_OP_CMPCOL && PS_INSN_MODE(where_prog.insns[i].flags) == PS_MODE_DOUBLE &&
          !be->has_fp64)
        return ps_backend_error(be->ctx, PS_ERR_UNSUPPORTED,
                                "OpenCL: the device has no double precision (cl_khr_fp64) for a float comparison");
  }
  for (uint32_t i = 0; i < PS_MAX_COLS; i++) {
    L.data_offset[i] = a->data[i].handle ? a->data[i].offset : 0;
    if (L.data_offset[i] % 4 == 0) L.data_aligned |= (uint64_t)1 << i; /* cl_mem bases are aligned */
    L.validity_offset[i] = a->validity[i].handle ? a->validity[i].offset : 0;
  }
  for (uint32_t i = 0; i < PS_QMAX_PREDS; i++) L.pred_offset[i] = a->preds[i].handle ? a->preds[i].offset : 0;

  /* the generic kernels, or the same ones compiled for this query's constants */
  const ps_cl_cached *prog;
  char *spec = NULL;
  if (specialize) PS_CL_TRY(spec_text(be, a, &L, fields, &spec));
  int built_atomics = 0;
  ps_status built = ps_cl_query_program(be, spec, &built_atomics, &prog);
  ps_host_free(be->ctx, spec);
  if (built != PS_OK) return built;

  const uint64_t wg = prog->work_group[PS_CL_QUERY_PARTIALS];
  uint64_t items, parts, global;
  if (mode == PS_QMODE_ITEMS) {
    items = PS_CL_QUERY_PARTIAL_BYTES / (n_acc * sizeof(ps_qacc));
    const uint64_t cap = be->cpu ? PS_CL_QUERY_ITEMS_CPU : PS_CL_QUERY_ITEMS_GPU;
    if (items > cap) items = cap;
    if (items > words) items = words;
    if (items == 0) items = 1;
    parts = items;
    global = items;
  } else {
    cl_uint units = 1;
    if (clGetDeviceInfo(be->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL) != CL_SUCCESS ||
        units == 0)
      units = 1;
    uint64_t groups = (uint64_t)units * PS_CL_QUERY_GROUPS_PER_CU;
    if (groups > (words + wg - 1) / wg) groups = (words + wg - 1) / wg;
    if (mode == PS_QMODE_REGS) { /* few enough words per work-item for exact 64-bit sums */
      const uint64_t per_group = ps_q_regs_max_words(bound) * wg;
      if (groups < (words + per_group - 1) / per_group) groups = (words + per_group - 1) / per_group;
    }
    if (groups == 0) groups = 1;
    items = groups * wg;
    parts = groups;
    global = items;
  }
  L.items = items;

  cl_mem prog_buf = NULL, where_buf = NULL, launch = NULL, part = NULL;
  ps_status st = ps_cl_upload(be, p, sizeof *p, "query program", &prog_buf);
  if (st == PS_OK) st = ps_cl_upload(be, &where_prog, sizeof where_prog, "query WHERE program", &where_buf);
  if (st == PS_OK) st = ps_cl_upload(be, &L, sizeof L, "query launch", &launch);
  if (st == PS_OK) st = ps_cl_scratch(be, (size_t)(parts * n_acc * sizeof(ps_qacc)), &part);
  if (st == PS_OK) st = ps_cl_reset_status(be, 0xFFFFFFFFu, 2);
  cl_kernel k = prog->kernels[PS_CL_QUERY_PARTIALS];
  cl_uint arg = 0;
  if (st == PS_OK) st = ps_cl_set_arg(be, k, arg++, sizeof(cl_mem), &prog_buf);
  if (st == PS_OK) st = ps_cl_set_arg(be, k, arg++, sizeof(cl_mem), &where_buf);
  if (st == PS_OK) st = ps_cl_set_arg(be, k, arg++, sizeof(cl_mem), &launch);
  if (st == PS_OK) {
    if (a->where_aux.handle && a->where_aux.offset)
      st = ps_backend_error(be->ctx, PS_ERR_INTERNAL, "OpenCL: query: aux words at offset %llu",
                            (unsigned long long)a->where_aux.offset);
    cl_mem m = or_dummy(be, a->where_aux);
    if (st == PS_OK) st = ps_cl_set_arg(be, k, arg++, sizeof m, &m);
  }
  for (uint32_t i = 0; st == PS_OK && i < PS_MAX_COLS; i++) {
    cl_mem m = or_dummy(be, a->data[i]);
    st = ps_cl_set_arg(be, k, arg++, sizeof m, &m);
  }
  for (uint32_t i = 0; st == PS_OK && i < PS_MAX_COLS; i++) {
    cl_mem m = or_dummy(be, a->validity[i]);
    st = ps_cl_set_arg(be, k, arg++, sizeof m, &m);
  }
  for (uint32_t i = 0; st == PS_OK && i < PS_QMAX_PREDS; i++) {
    cl_mem m = or_dummy(be, a->preds[i]);
    st = ps_cl_set_arg(be, k, arg++, sizeof m, &m);
  }
  if (st == PS_OK) st = ps_cl_set_arg(be, k, arg++, sizeof part, &part);
  if (st == PS_OK) st = ps_cl_set_arg(be, k, arg++, sizeof be->status, &be->status);
  if (st == PS_OK) st = ps_cl_launch(be, prog, PS_CL_QUERY_PARTIALS, (size_t)global);
  /* pass 2 */
  cl_kernel m = prog->kernels[PS_CL_QUERY_MERGE];
  const cl_ulong n_acc_arg = n_acc, parts_arg = parts;
  cl_mem acc = (cl_mem)a->acc.handle;
  if (a->acc.offset != 0 && st == PS_OK)
    st = ps_backend_error(be->ctx, PS_ERR_INTERNAL, "OpenCL: query: accumulators at offset %llu",
                          (unsigned long long)a->acc.offset);
  if (st == PS_OK) st = ps_cl_set_arg(be, m, 0, sizeof n_acc_arg, &n_acc_arg);
  if (st == PS_OK) st = ps_cl_set_arg(be, m, 1, sizeof parts_arg, &parts_arg);
  if (st == PS_OK) st = ps_cl_set_arg(be, m, 2, sizeof part, &part);
  if (st == PS_OK) st = ps_cl_set_arg(be, m, 3, sizeof acc, &acc);
  if (st == PS_OK) st = ps_cl_launch(be, prog, PS_CL_QUERY_MERGE, (size_t)(n_acc * prog->work_group[PS_CL_QUERY_MERGE]));
  cl_uint status[2] = {0, 0};
  if (st == PS_OK) {
    cl_int err = clEnqueueReadBuffer(be->queue, be->status, CL_TRUE, 0, sizeof status, status, 0, NULL, NULL);
    if (err != CL_SUCCESS) st = ps_cl_fail(be->ctx, err, "clEnqueueReadBuffer", "query status");
  }
  if (prog_buf) clReleaseMemObject(prog_buf);
  if (where_buf) clReleaseMemObject(where_buf);
  if (launch) clReleaseMemObject(launch);
  if (st != PS_OK) return st;
  if (status[0] != 0xFFFFFFFFu)
    return ps_backend_error(be->ctx, PS_ERR_CORRUPT_DATA, "row %llu of a column the query reads holds a code outside its range",
                            (unsigned long long)(a->row_begin + status[0]));
  if (status[1] != 0xFFFFFFFFu)
    return ps_backend_error(be->ctx, PS_ERR_OVERFLOW, "row %llu: an aggregate's value does not fit %d digits",
                            (unsigned long long)(a->row_begin + status[1]), PS_QUERY_MAX_DIGITS);
  return PS_OK;
}
