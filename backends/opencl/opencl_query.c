/* Queries (core/backend.h ps_query_args): the two passes of
 * kernels_shared/ps_query_kernels.h through query.cl's entry points (pass 1
 * in the mode core/query_policy.c picks, pass 2 one work-group per
 * accumulator), and one synchronization per chunk (for the status words). */
#include <string.h>

#include "kcache.h"
#include "opencl_internal.h"
#include "ps_query_kernels.h"
#include "query_policy.h"
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
 * memory the caller frees). Under opencl_query = PS_OPT_QUERY_UNBUILDABLE a
 * line the compiler rejects ends it, so that its build fails as a compiler
 * error would. */
static ps_status spec_text(ps_backend *be, const ps_query_args *a, const ps_qlaunch *L, uint64_t fields, char **out) {
  static const char reject[] = "\n#error opencl_query=unbuildable: this build fails on purpose\n";
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
  f.lanes = (uint32_t)ps_query_lanes(be->ctx, 0);
  f.prefetch = ps_query_prefetch(be->ctx);
  const size_t len = ps_query_spec_write(a->prog, a->where_prog, &f, text, PS_QUERY_SPEC_MAX_TEXT);
  const int unbuildable = ps_cl_options(be)->opencl_query == PS_OPT_QUERY_UNBUILDABLE;
  if (len == 0 || (unbuildable && len + sizeof reject > PS_QUERY_SPEC_MAX_TEXT)) {
    ps_host_free(be->ctx, text);
    return ps_backend_error(be->ctx, PS_ERR_INTERNAL, "OpenCL: query specialization text over %u bytes",
                            PS_QUERY_SPEC_MAX_TEXT);
  }
  if (unbuildable) memcpy(text + len, reject, sizeof reject);
  *out = text;
  return PS_OK;
}

/* A specialization text's key among the failed builds: FNV-1a and length (two
 * texts that collide would only send a buildable query to the generic
 * kernel, which gives the same answer). */
static void unbuilt_key(const char *text, uint64_t key[2]) {
  uint64_t h = UINT64_C(14695981039346656037), n = 0;
  for (; text[n]; n++) h = (h ^ (unsigned char)text[n]) * UINT64_C(1099511628211);
  key[0] = h;
  key[1] = n;
}

static int unbuilt(const ps_backend *be, const uint64_t key[2]) {
  const uint32_t n = be->query_unbuilt_count < PS_CL_QUERY_UNBUILT ? be->query_unbuilt_count : PS_CL_QUERY_UNBUILT;
  for (uint32_t i = 0; i < n; i++)
    if (be->query_unbuilt[i][0] == key[0] && be->query_unbuilt[i][1] == key[1]) return 1;
  return 0;
}

/* The build of the query's specialized kernels in *out, or NULL where the
 * generic kernel runs instead: the text failed to build (now or on an earlier
 * chunk), the device refused a launch of this build before, or it is being
 * built in the background (ps_query_spec_background). A failed build
 * is the call's error under query_specialize = PS_OPT_ON (so that tests see a
 * source that does not compile, as on CUDA) and when host memory ran out. */
static ps_status specialized_program(ps_backend *be, const ps_query_args *a, const ps_qlaunch *L, uint64_t fields,
                                     const ps_cl_cached **out) {
  *out = NULL;
  char *spec = NULL;
  PS_CL_TRY(spec_text(be, a, L, fields, &spec));
  const int strict = ps_cl_options(be)->query_specialize == PS_OPT_ON;
  uint64_t key[2];
  unbuilt_key(spec, key);
  if (!strict && unbuilt(be, key)) {
    ps_host_free(be->ctx, spec);
    return PS_OK;
  }
  int atomics = 0;
  const ps_cl_cached *prog = NULL;
  const ps_status st = ps_cl_query_program(be, spec, ps_query_spec_background(be->ctx), &atomics, &prog);
  ps_host_free(be->ctx, spec);
  if (st == PS_OK) { /* prog NULL: building in the background */
    if (prog && prog->work_group[PS_CL_QUERY_PARTIALS] != 0) *out = prog;
    return PS_OK;
  }
  if (strict || st == PS_ERR_OUT_OF_MEMORY) return st;
  const uint32_t slot = be->query_unbuilt_count++ % PS_CL_QUERY_UNBUILT;
  be->query_unbuilt[slot][0] = key[0];
  be->query_unbuilt[slot][1] = key[1];
  return PS_OK;
}

/* Launches kernel `id` of prog over `global` work-items. With `refused` (a
 * specialized build), a launch the device turns down for its resources
 * (CL_OUT_OF_RESOURCES, CL_INVALID_WORK_GROUP_SIZE: NVIDIA's driver returns
 * them at the enqueue for kernels that need more registers or local memory
 * than the group size allows; PoCL never does) sets *refused and launches
 * nothing; so does every launch under opencl_query = PS_OPT_QUERY_REFUSED. */
static ps_status launch(ps_backend *be, const ps_cl_cached *prog, ps_cl_kernel_id id, size_t global, int *refused) {
  if (!refused) return ps_cl_launch(be, prog, id, global);
  const int refuse = ps_cl_options(be)->opencl_query == PS_OPT_QUERY_REFUSED;
  const cl_int err = refuse ? CL_OUT_OF_RESOURCES : ps_cl_enqueue(be, prog, id, global);
  if (err == CL_OUT_OF_RESOURCES || err == CL_INVALID_WORK_GROUP_SIZE) {
    *refused = 1;
    return PS_OK;
  }
  if (err != CL_SUCCESS)
    return ps_cl_fail(be->ctx, err, "clEnqueueNDRangeKernel",
                      id == PS_CL_QUERY_MERGE ? "ps_query_merge (specialized)" : "ps_query_partials (specialized)");
  return PS_OK;
}

/* Argument i of k: a buffer the kernel reads from its start (the kernels
 * take no offset for it), or the dummy where there is none. */
static ps_status whole_buffer_arg(ps_backend *be, cl_kernel k, cl_uint i, ps_devmem mem, const char *what) {
  if (mem.handle && mem.offset)
    return ps_backend_error(be->ctx, PS_ERR_INTERNAL, "OpenCL: query: %s at offset %llu", what,
                            (unsigned long long)mem.offset);
  cl_mem m = or_dummy(be, mem);
  return ps_cl_set_arg(be, k, i, sizeof m, &m);
}

/* Both passes of the chunk's query through prog's kernels, in L's mode, and
 * the status words read back. `refused`: see launch (then nothing is read
 * back, and the accumulators are untouched: pass 2 alone writes them). */
static ps_status run_passes(ps_backend *be, const ps_query_args *a, const ps_cl_cached *prog, ps_qlaunch *L,
                            const ps_program *where_prog, double bound, int *refused) {
  const ps_vprog *p = a->prog;
  const uint64_t n_acc = (uint64_t)p->n_groups * p->n_accs, words = (a->rows + 31) / 32;
  const uint64_t wg = prog->work_group[PS_CL_QUERY_PARTIALS];
  uint64_t items, parts, max_groups = 0;
  if (L->mode != PS_QMODE_ITEMS) {
    max_groups = (uint64_t)be->compute_units * PS_CL_QUERY_GROUPS_PER_CU;
  }
  ps_query_launch_shape((uint32_t)L->mode, bound, n_acc, words, wg, max_groups,
                        be->cpu ? PS_CL_QUERY_ITEMS_CPU : PS_CL_QUERY_ITEMS_GPU, PS_CL_QUERY_PARTIAL_BYTES, &items,
                        &parts);
  const uint64_t global = items;
  L->items = items;
  /* the lanes form of PS_QMODE_REGS reads its words strided on every device */
  const int lanes = L->mode == PS_QMODE_REGS && ps_query_lanes(be->ctx, 0);
  L->span = ps_query_span(be->cpu && !lanes, words, items);

  L->status_slot = a->defer_status ? a->status_slot : 0; /* before L is uploaded */

  cl_mem prog_buf = NULL, where_buf = NULL, launch_buf = NULL, part = NULL;
  ps_status st = ps_cl_upload(be, PS_CL_PARAM_PROGRAM, p, sizeof *p, "query program", &prog_buf);
  if (st == PS_OK)
    st = ps_cl_upload(be, PS_CL_PARAM_WHERE, where_prog, sizeof *where_prog, "query WHERE program", &where_buf);
  if (st == PS_OK) st = ps_cl_upload(be, PS_CL_PARAM_LAUNCH, L, sizeof *L, "query launch", &launch_buf);
  if (st == PS_OK) st = ps_cl_scratch(be, (size_t)(parts * n_acc * sizeof(ps_qacc)), &part);
  if (st == PS_OK && L->mode == PS_QMODE_GLOBAL) { /* its table starts at zero (ps_q_global_merge) */
    const cl_uchar zero = 0;
    const cl_int err =
        clEnqueueFillBuffer(be->queue, part, &zero, 1, 0, (size_t)(n_acc * sizeof(ps_qacc)), 0, NULL, NULL);
    if (err != CL_SUCCESS) st = ps_cl_fail(be->ctx, err, "clEnqueueFillBuffer", "query table");
  }
  cl_mem status_buf = be->status;
  if (st == PS_OK && a->defer_status) { /* the chunk's own pair, read by query_collect */
    const cl_uint none = 0xFFFFFFFFu;
    status_buf = be->qstatus;
    const cl_int err = a->status_slot < PS_QUERY_STATUS_SLOTS
                           ? clEnqueueFillBuffer(be->queue, be->qstatus, &none, sizeof none,
                                                 (size_t)PS_Q_STATUS_WORDS * a->status_slot * sizeof none,
                                                 PS_Q_STATUS_WORDS * sizeof none, 0, NULL, NULL)
                           : CL_INVALID_VALUE;
    if (err != CL_SUCCESS) st = ps_cl_fail(be->ctx, err, "clEnqueueFillBuffer", "query status");
  } else if (st == PS_OK) {
    st = ps_cl_reset_status(be, 0xFFFFFFFFu, PS_Q_STATUS_WORDS);
  }
  cl_kernel k = prog->kernels[PS_CL_QUERY_PARTIALS];
  cl_uint arg = 0;
  if (st == PS_OK) st = ps_cl_set_arg(be, k, arg++, sizeof(cl_mem), &prog_buf);
  if (st == PS_OK) st = ps_cl_set_arg(be, k, arg++, sizeof(cl_mem), &where_buf);
  if (st == PS_OK) st = ps_cl_set_arg(be, k, arg++, sizeof(cl_mem), &launch_buf);
  if (st == PS_OK) st = whole_buffer_arg(be, k, arg++, a->where_aux, "aux words");
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
  if (st == PS_OK) st = ps_cl_set_arg(be, k, arg++, sizeof status_buf, &status_buf);
  if (st == PS_OK) st = whole_buffer_arg(be, k, arg++, a->groups, "group table");
  if (st == PS_OK) st = whole_buffer_arg(be, k, arg++, a->value_aux, "value aux words");
  if (st == PS_OK) st = launch(be, prog, PS_CL_QUERY_PARTIALS, (size_t)global, refused);
  if (st == PS_OK && !(refused && *refused) && L->mode != PS_QMODE_KEYS) { /* pass 2 (the keys pass has none) */
    cl_kernel m = prog->kernels[PS_CL_QUERY_MERGE];
    const cl_ulong n_acc_arg = n_acc, parts_arg = parts;
    cl_mem acc = (cl_mem)a->acc.handle;
    if (a->acc.offset != 0)
      st = ps_backend_error(be->ctx, PS_ERR_INTERNAL, "OpenCL: query: accumulators at offset %llu",
                            (unsigned long long)a->acc.offset);
    if (st == PS_OK) st = ps_cl_set_arg(be, m, 0, sizeof n_acc_arg, &n_acc_arg);
    if (st == PS_OK) st = ps_cl_set_arg(be, m, 1, sizeof parts_arg, &parts_arg);
    if (st == PS_OK) st = ps_cl_set_arg(be, m, 2, sizeof part, &part);
    if (st == PS_OK) st = ps_cl_set_arg(be, m, 3, sizeof acc, &acc);
    const uint64_t mwg = prog->work_group[PS_CL_QUERY_MERGE];
    const cl_ulong flat = (cl_ulong)ps_query_merge_flat((uint32_t)L->mode, n_acc, parts);
    if (st == PS_OK) st = ps_cl_set_arg(be, m, 4, sizeof flat, &flat);
    if (st == PS_OK)
      st = launch(be, prog, PS_CL_QUERY_MERGE, (size_t)(flat ? (n_acc + mwg - 1) / mwg * mwg : n_acc * mwg), refused);
  }
  cl_uint status[PS_Q_STATUS_WORDS] = {0};
  if (st == PS_OK && !(refused && *refused) && !a->defer_status) {
    cl_int err = clEnqueueReadBuffer(be->queue, be->status, CL_TRUE, 0, sizeof status, status, 0, NULL, NULL);
    if (err != CL_SUCCESS) st = ps_cl_fail(be->ctx, err, "clEnqueueReadBuffer", "query status");
  }
  if (prog_buf) clReleaseMemObject(prog_buf);
  if (where_buf) clReleaseMemObject(where_buf);
  if (launch_buf) clReleaseMemObject(launch_buf);
  if (st != PS_OK || (refused && *refused) || a->defer_status) return st;
  if (status[0] != 0xFFFFFFFFu)
    return ps_backend_error(be->ctx, PS_ERR_CORRUPT_DATA, "row %llu of a column the query reads holds a code outside its range",
                            (unsigned long long)(a->row_begin + status[0]));
  if (status[1] != 0xFFFFFFFFu)
    return ps_backend_error(be->ctx, PS_ERR_OVERFLOW, "row %llu: an aggregate's value does not fit %d digits",
                            (unsigned long long)(a->row_begin + status[1]), PS_QUERY_MAX_DIGITS);
  ps_query_fault fault;
  if (ps_query_status_unrep(p, status, &fault.row, &fault.agg)) {
    if (a->fault) *a->fault = fault;
    return ps_backend_error(be->ctx, PS_ERR_NOT_REPRESENTABLE, "row %llu: the value of aggregate %u",
                            (unsigned long long)(a->row_begin + fault.row), fault.agg);
  }
  return PS_OK;
}

ps_status ps_cl_query(ps_backend *be, const ps_query_args *a) {
  const ps_vprog *p = a->prog;
  if (a->rows == 0 || a->rows > PS_CL_MAX_CHUNK_ROWS)
    return ps_backend_error(be->ctx, PS_ERR_INTERNAL, "OpenCL: query: chunk rows (%llu)", (unsigned long long)a->rows);
  const int local_atomics = ps_cl_has_int64_atomics(be);
  if (p->group_slots && p->group_pass && !local_atomics)
    return ps_backend_error(be->ctx, PS_ERR_UNSUPPORTED,
                            "OpenCL: GROUP BY over more than %d possible keys needs 64-bit atomics "
                            "(cl_khr_int64_base_atomics and cl_khr_int64_extended_atomics), which the device lacks",
                            PS_QUERY_MAX_GROUPS);
  /* specialized: small GROUP BY domains keep their accumulators in
   * registers (on a CPU device, in the work-item's private variables, which
   * the compiler keeps in registers once every call is inlined:
   * PS_FN_INLINE); not a hashed GROUP BY plan, whose group count varies with
   * the data */
  const int specialize = ps_query_specialize(be->ctx, a->rows, !be->cpu && p->n_groups > 1) && !p->group_slots;
  const int regs = specialize;
  ps_query_plan plan;
  ps_query_plan_chunk(p, a->agg_fields, local_atomics, regs, &plan);
  const int fits64 = plan.fits64;
  const double bound = plan.bound;
  const uint64_t fields = plan.fields;
  const uint32_t mode = plan.mode;
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
          !ps_cl_fp64(be))
        return ps_backend_error(be->ctx, PS_ERR_UNSUPPORTED,
                                "OpenCL: the device has no double precision (cl_khr_fp64) for a float comparison");
  }
  for (uint32_t i = 0; i < p->n_insns; i++)
    if (p->insns[i].op == PS_VOP_FCOL && PS_VF_MAP(p->insns[i].lo) == PS_VF_ALP && !PS_VF_F32(p->insns[i].lo) &&
        !ps_cl_fp64(be))
      return ps_backend_error(be->ctx, PS_ERR_UNSUPPORTED,
                              "OpenCL: the device has no double precision (cl_khr_fp64) for the sum of a float64 "
                              "ALP column (its values are two double products)");
  for (uint32_t i = 0; i < p->n_insns; i++)
    if (p->insns[i].op >= PS_VOP_DCOL && p->insns[i].op <= PS_VOP_DMUL && !ps_cl_fp64(be))
      return ps_backend_error(be->ctx, PS_ERR_UNSUPPORTED,
                              "OpenCL: the device has no double precision (cl_khr_fp64) for arithmetic on a "
                              "lossless float column (its values are doubles)");
  for (uint32_t i = 0; i < PS_MAX_COLS; i++) {
    L.data_offset[i] = a->data[i].handle ? a->data[i].offset : 0;
    if (L.data_offset[i] % 4 == 0) L.data_aligned |= (uint64_t)1 << i; /* cl_mem bases are aligned */
    L.validity_offset[i] = a->validity[i].handle ? a->validity[i].offset : 0;
  }
  for (uint32_t i = 0; i < PS_QMAX_PREDS; i++) L.pred_offset[i] = a->preds[i].handle ? a->preds[i].offset : 0;
  /* read by a CPU device's specialized build only (PS_Q_WHOLE); the
   * queries read validity bitmaps byte by byte, so a WHERE that reads one
   * has no whole words here */
  if (a->where_prog) L.whole_words = ps_where_whole_words(&where_prog, (uint32_t)L.data_aligned, 0u);

  /* the kernels compiled for this query's constants, else the generic ones */
  if (specialize) {
    const ps_cl_cached *spec = NULL;
    PS_CL_TRY(specialized_program(be, a, &L, fields, &spec));
    if (spec) {
      int refused = 0;
      PS_CL_TRY(run_passes(be, a, spec, &L, &where_prog, bound, &refused));
      if (!refused) return PS_OK;
      /* The build stays cached, marked as one this device will not run. */
      ((ps_cl_cached *)spec)->work_group[PS_CL_QUERY_PARTIALS] = 0;
    }
    ps_context_count_spec_fallback(be->ctx);
    if (L.mode == PS_QMODE_REGS) L.mode = ps_query_generic_mode(p, fits64, local_atomics); /* specialized builds only */
  }
  const ps_cl_cached *prog = NULL;
  int built_atomics = 0;
  PS_CL_TRY(ps_cl_query_program(be, NULL, 0, &built_atomics, &prog));
  return run_passes(be, a, prog, &L, &where_prog, bound, NULL);
}
