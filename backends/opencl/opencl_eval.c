/* One evaluation over one chunk: checks the program, uploads its launch
 * block, runs filter.cl in one pass and reads back the count and corrupt
 * flags only when a host value must be returned. */
#include <stdio.h>
#include <string.h>

#include "opencl_internal.h"
#include "query_spec.h"

_Static_assert(sizeof(ps_filter_launch) == sizeof(ps_program) + 8 * (2 * PS_MAX_COLS + 5) + 4 * 4,
               "ps_filter_launch must have no padding: host and device lay it out alike");
_Static_assert(offsetof(ps_filter_launch, data_offset) == sizeof(ps_program),
               "the launch block starts with the program");
_Static_assert(PS_MAX_COLS < 31, "slot bits and PS_FILTER_CORRUPT_AUX share the corrupt status word");

static int reads_codes(uint32_t op) {
  return op == PS_OP_RANGE || op == PS_OP_SET || op == PS_OP_INLIST || op == PS_OP_CMPCOL;
}

static ps_status malformed(ps_backend *be, const char *what, unsigned index, unsigned long long v) {
  return ps_backend_error(be->ctx, PS_ERR_INTERNAL, "OpenCL: malformed program: %s (index %u, value %llu)", what, index,
                          v);
}

/* What the kernels trust about this launch beyond the program, which passed
 * the core's ps_program_check (core/program_check.c) when it was lowered:
 * the chunk size, that every buffer the program reads was given, and fp64
 * where a column compare needs doubles. */
static ps_status check_launch(ps_backend *be, const ps_eval_args *args) {
  const ps_program *p = args->prog;
  if (!p) return ps_backend_error(be->ctx, PS_ERR_INTERNAL, "OpenCL: eval without a program");
  if (args->rows == 0 || args->rows > PS_CL_MAX_CHUNK_ROWS)
    return malformed(be, "chunk row count outside 1..max_chunk_rows", 0, args->rows);
  for (uint32_t c = 0; c < p->n_cols; ++c) {
    const ps_prog_col *col = &p->cols[c];
    if (col->width > 0 && col->data_bytes > 0 && !args->data[c].handle)
      return malformed(be, "column slot without its data buffer", c, col->data_bytes);
    if ((col->flags & PS_COLF_VALIDITY) && col->validity_bytes > 0 && !args->validity[c].handle)
      return malformed(be, "column slot without its validity buffer", c, col->validity_bytes);
  }
  if (p->aux_words > 0 && !args->aux.handle && !args->aux_host)
    return malformed(be, "aux words without an aux buffer", 0, p->aux_words);
  for (uint32_t i = 0; i < p->n_insns; ++i) {
    const ps_insn *in = &p->insns[i];
    if (in->op == PS_OP_CMPCOL && PS_INSN_MODE(in->flags) == PS_MODE_DOUBLE && !ps_cl_fp64(be))
      return ps_backend_error(be->ctx, PS_ERR_UNSUPPORTED,
                              "OpenCL: %s lacks cl_khr_fp64, which comparing two float "
                              "columns (or columns of mixed kinds) needs",
                              be->device_name);
  }
  return PS_OK;
}

/* Whether any code the program reads can be corrupt; if none can, a launch
 * that returns no count needs no synchronization. */
static int corruption_possible(const ps_program *p) {
  for (uint32_t i = 0; i < p->n_insns; ++i) {
    const ps_insn *in = &p->insns[i];
    if (!reads_codes(in->op)) continue;
    for (int k = 0; k < (in->op == PS_OP_CMPCOL ? 2 : 1); ++k) {
      const ps_prog_col *c = &p->cols[k ? in->col_b : in->col_a];
      if ((c->flags & PS_COLF_NO_CODES) || c->code_limit < ps_width_mask(c->width)) return 1;
    }
  }
  return 0;
}

/* Whether SET instruction i may index past aux: aux_a plus its column's
 * largest sound code reaches aux_words * 32. The core's lowering never
 * builds such a program; the kernels then check every index (and raise
 * PS_FILTER_CORRUPT_AUX) instead of trusting it. */
static int set_aux_unsafe(const ps_program *p, uint32_t i) {
  const ps_insn *in = &p->insns[i];
  const ps_prog_col *c = &p->cols[in->col_a];
  if (in->op != PS_OP_SET || (c->flags & PS_COLF_NO_CODES)) return 0;
  const uint64_t sound = c->code_limit < ps_width_mask(c->width) ? c->code_limit : ps_width_mask(c->width);
  const uint64_t bits = (uint64_t)p->aux_words * 32;
  return in->aux_a >= bits || sound >= bits - in->aux_a;
}

/* The same for a rank compare's tables (one word per code): filter.cl
 * checks those indexes too. */
static int rank_aux_unsafe(const ps_program *p, uint32_t i) {
  const ps_insn *in = &p->insns[i];
  if (in->op != PS_OP_CMPCOL || PS_INSN_MODE(in->flags) != PS_MODE_RANK) return 0;
  for (int k = 0; k < 2; ++k) {
    const ps_prog_col *c = &p->cols[k ? in->col_b : in->col_a];
    const uint64_t base = k ? in->aux_b : in->aux_a;
    if (c->flags & PS_COLF_NO_CODES) continue;
    const uint64_t sound = c->code_limit < ps_width_mask(c->width) ? c->code_limit : ps_width_mask(c->width);
    if (base >= p->aux_words || sound >= p->aux_words - base) return 1;
  }
  return 0;
}

/* Whether any instruction may read past aux: then the status is read back
 * after the launch, so that PS_FILTER_CORRUPT_AUX is seen. */
static int aux_unsafe(const ps_program *p) {
  for (uint32_t i = 0; i < p->n_insns; ++i)
    if (set_aux_unsafe(p, i) || rank_aux_unsafe(p, i)) return 1;
  return 0;
}

static ps_status corrupt_error(ps_backend *be, const ps_eval_args *args, cl_uint slots) {
  if (slots & PS_FILTER_CORRUPT_AUX)
    return ps_backend_error(be->ctx, PS_ERR_INTERNAL, "OpenCL: an aux index fell outside the program's %u aux words",
                            args->prog->aux_words);
  unsigned slot = 0;
  while (!((slots >> slot) & 1u)) ++slot;
  return ps_corrupt_error(be->ctx, slot, &args->prog->cols[slot], 0, args->rows - 1, -1);
}

/* Reads the status words back (synchronizing): the corrupt flags become the
 * error, else the count goes to args->count when it is wanted. */
static ps_status read_status(ps_backend *be, const ps_eval_args *args) {
  cl_uint status[PS_FILTER_STATUS_WORDS];
  cl_int err = clEnqueueReadBuffer(be->queue, be->status, CL_TRUE, 0, sizeof status, status, 0, NULL, NULL);
  if (err != CL_SUCCESS) return ps_cl_fail(be->ctx, err, "clEnqueueReadBuffer", "status words");
  if (status[PS_FILTER_STATUS_CORRUPT]) return corrupt_error(be, args, status[PS_FILTER_STATUS_CORRUPT]);
  if (args->count) *args->count = status[PS_FILTER_STATUS_COUNT];
  return PS_OK;
}

typedef struct launch_buffers {
  cl_mem launch;   /* per-eval copy of ps_filter_launch */
  cl_mem aux_copy; /* per-eval copy of aux_host, or NULL */
} launch_buffers;

static ps_status set_args(ps_backend *be, cl_kernel k, const ps_eval_args *args, const launch_buffers *bufs) {
  PS_CL_TRY(ps_cl_set_arg(be, k, PS_FILTER_ARG_LAUNCH, sizeof(cl_mem), &bufs->launch));
  for (cl_uint c = 0; c < PS_MAX_COLS; ++c) {
    cl_mem data = args->data[c].handle ? (cl_mem)args->data[c].handle : be->dummy;
    cl_mem valid = args->validity[c].handle ? (cl_mem)args->validity[c].handle : be->dummy;
    PS_CL_TRY(ps_cl_set_arg(be, k, PS_FILTER_ARG_DATA0 + c, sizeof(cl_mem), &data));
    PS_CL_TRY(ps_cl_set_arg(be, k, PS_FILTER_ARG_VALIDITY0 + c, sizeof(cl_mem), &valid));
  }
  cl_mem aux = bufs->aux_copy                              ? bufs->aux_copy
               : args->aux.handle && args->prog->aux_words ? (cl_mem)args->aux.handle
                                                           : be->dummy;
  cl_mem selection = args->selection_in.handle ? (cl_mem)args->selection_in.handle : be->dummy;
  cl_mem bitmap = args->bitmap.handle ? (cl_mem)args->bitmap.handle : be->dummy;
  cl_mem mask = args->mask.handle ? (cl_mem)args->mask.handle : be->dummy;
  PS_CL_TRY(ps_cl_set_arg(be, k, PS_FILTER_ARG_AUX, sizeof(cl_mem), &aux));
  PS_CL_TRY(ps_cl_set_arg(be, k, PS_FILTER_ARG_SELECTION, sizeof(cl_mem), &selection));
  PS_CL_TRY(ps_cl_set_arg(be, k, PS_FILTER_ARG_BITMAP, sizeof(cl_mem), &bitmap));
  PS_CL_TRY(ps_cl_set_arg(be, k, PS_FILTER_ARG_MASK, sizeof(cl_mem), &mask));
  return ps_cl_set_arg(be, k, PS_FILTER_ARG_STATUS, sizeof(cl_mem), &be->status);
}

static void fill_launch(const ps_eval_args *args, int use_aux_copy, ps_filter_launch *launch) {
  memset(launch, 0, sizeof *launch);
  launch->prog = *args->prog;
  for (uint32_t c = 0; c < PS_MAX_COLS; ++c) {
    launch->data_offset[c] = args->data[c].handle ? args->data[c].offset : 0;
    launch->validity_offset[c] = args->validity[c].handle ? args->validity[c].offset : 0;
  }
  launch->aux_offset = use_aux_copy || !args->aux.handle ? 0 : args->aux.offset;
  launch->selection_offset = args->selection_in.handle ? args->selection_in.offset : 0;
  launch->bitmap_offset = args->bitmap.handle ? args->bitmap.offset : 0;
  launch->mask_offset = args->mask.handle ? args->mask.offset : 0;
  launch->rows = args->rows;
  launch->has_selection = args->selection_in.handle != NULL;
  launch->want_bitmap = args->bitmap.handle != NULL;
  launch->want_mask = args->mask.handle != NULL;
  launch->want_count = args->count != NULL;
}

/* Launches the filter kernel of prog (filter.cl or words.cl: same arguments)
 * over `global` work-items. With `refused` (words.cl), a launch the device
 * turns down for its resources (CL_OUT_OF_RESOURCES from the enqueue: on
 * NVIDIA's driver a per-shape kernel can need more registers or local memory
 * per group than CL_KERNEL_WORK_GROUP_SIZE let through) sets *refused and
 * returns PS_OK with nothing launched, so that the caller runs filter.cl. */
static ps_status enqueue(ps_backend *be, const ps_cl_cached *prog, const ps_eval_args *args, int need_status,
                         size_t global, int *refused) {
  const ps_program *p = args->prog;
  int use_aux_copy = p->aux_words > 0 && !args->aux.handle;
  ps_filter_launch launch;
  fill_launch(args, use_aux_copy, &launch);
  cl_kernel k = prog->kernels[PS_CL_FILTER];

  launch_buffers bufs = {NULL, NULL};
  ps_status st = ps_cl_upload(be, PS_CL_PARAM_LAUNCH, &launch, sizeof launch, "program launch block", &bufs.launch);
  if (st == PS_OK && use_aux_copy)
    st = ps_cl_upload(be, PS_CL_PARAM_WHERE, args->aux_host, (size_t)p->aux_words * 4, "aux words", &bufs.aux_copy);
  if (st == PS_OK) st = set_args(be, k, args, &bufs);
  if (st == PS_OK)
    st = ps_cl_set_arg(be, k, PS_FILTER_ARG_SCRATCH, prog->work_group[PS_CL_FILTER] * sizeof(cl_uint), NULL);
  if (st == PS_OK && need_status) st = ps_cl_reset_status(be, 0, PS_FILTER_STATUS_WORDS);
  if (st == PS_OK && refused) {
    /* opencl_words = PS_OPT_WORDS_REFUSED: as if the device had refused it */
    const int refuse = ps_cl_options(be)->opencl_words == PS_OPT_WORDS_REFUSED;
    cl_int err = refuse ? CL_OUT_OF_RESOURCES : ps_cl_enqueue(be, prog, PS_CL_FILTER, global);
    if (err == CL_OUT_OF_RESOURCES)
      *refused = 1;
    else if (err != CL_SUCCESS)
      st = ps_cl_fail(be->ctx, err, "clEnqueueNDRangeKernel", "ps_filter_words");
  } else if (st == PS_OK) {
    st = ps_cl_launch(be, prog, PS_CL_FILTER, global);
  }
  /* Released now, freed by OpenCL once the launch that uses them is done. */
  if (bufs.launch) clReleaseMemObject(bufs.launch);
  if (bufs.aux_copy) clReleaseMemObject(bufs.aux_copy);
  return st;
}

/* The shape table that specializes filter.cl for this program: the opcodes,
 * flags and slots that kernels_shared/ps_rows.h reads through PS_ROWS_OP and
 * friends, as constants (the program unrolled), normalized so that equal
 * shapes give equal text (and share one build); literals, bounds, offsets,
 * sizes and the columns stay run-time values. At most ~2 KB for
 * PS_MAX_INSNS. */
static void shape_of(const ps_program *p, char *buf, size_t size) {
  size_t n = (size_t)snprintf(buf, size,
                              "#define PS_SPECIALIZED 1\n"
                              "#define PS_ROWS_N_INSNS(prog) %uu\n"
                              "#define PS_ROWS_OP(prog, i) ps_spec_insns[i][0]\n"
                              "#define PS_ROWS_FLAGS(prog, i) ps_spec_insns[i][1]\n"
                              "#define PS_ROWS_COL_A(prog, i) ps_spec_insns[i][2]\n"
                              "#define PS_ROWS_COL_B(prog, i) ps_spec_insns[i][3]\n"
                              "#define PS_ROWS_UNROLL _Pragma(\"unroll\")\n"
                              "__constant uint ps_spec_insns[%u][4] = {",
                              p->n_insns, p->n_insns);
  for (uint32_t i = 0; i < p->n_insns && n < size; ++i) {
    const ps_insn *in = &p->insns[i];
    int leaf = in->op != PS_OP_AND && in->op != PS_OP_OR && in->op != PS_OP_NOT;
    uint32_t flags = in->op == PS_OP_CMPCOL ? in->flags & PS_INSN_CMPCOL_SHAPE : leaf ? in->flags & PS_INSN_NEGATE : 0;
    n += (size_t)snprintf(buf + n, size - n, "{%u,%u,%u,%u},", in->op, flags, leaf ? in->col_a : 0,
                          in->op == PS_OP_CMPCOL ? in->col_b : 0);
  }
  if (n < size) snprintf(buf + n, size - n, "};\n");
}

/* ---- the single-range fast path (range.cl) ----------------------------------- */

/* range.cl's flags argument */
#define RANGE_HAS_VALIDITY 1u
#define RANGE_WANT_BITMAP 2u
#define RANGE_ALIGNED16 4u

/* Result words per work-item of range.cl's CPU variant (its PS_RANGE_R), 0
 * on other devices (they take the staged variant): PS_CL_RANGE_CPU_WORDS,
 * and below 8 bits as many as keep a work-item's codes at 1 KB, so that a
 * count pays one atomic per 1 KB of codes at every width (with 32 words at
 * 2 bits, the atomics on one counter made a count slower than the bitmap on
 * PoCL: docs/benchmarks.md). */
static uint32_t range_direct_words(const ps_backend *be, uint32_t width) {
  if (!be->cpu) return 0;
  const uint32_t words = width >= 1 && width < 8 ? 256u / width : 0u;
  return words > PS_CL_RANGE_CPU_WORDS ? words : PS_CL_RANGE_CPU_WORDS;
}

/* Result words per work-item of range.cl (its PS_R, or PS_RANGE_R on a CPU). */
static uint32_t range_words_per_item(const ps_backend *be, uint32_t width) {
  if (be->cpu) return range_direct_words(be, width);
  return width == 0 ? 8 : width >= 16 ? 1 : (16 + width - 1) / width;
}

/* The fast path's launch: range.cl's arguments. */
typedef struct range_params {
  uint32_t width;
  cl_mem data, validity, bitmap;
  cl_ulong data_offset, data_bytes, validity_offset, validity_bytes, bitmap_offset, rows, lo, span;
  cl_uint negate_mask, flags;
  cl_ulong limit;    /* check_limit: the column's largest valid code (< 2^width - 1) */
  cl_uint limit_bit; /* raised in the corrupt status word (1 << column slot) */
  int check_limit;
} range_params;

/* The fast path applies to a one-instruction RANGE program on a column with
 * at least one valid code, without a mask output, on a little-endian
 * device, with the stream 4-byte aligned. Where some w-bit codes are not
 * valid (dictionaries) the range.cl variant built with PS_RANGE_LIMIT also
 * checks every valid row's code. An input selection (ps_filter_refine) on a
 * column without validity rides in the validity slot: range.cl ANDs it into
 * the result and checks codes only under it, a refinement's rule exactly
 * (rows outside the input selection are not evaluated); its validity is
 * restrict (never the bitmap's bytes), so an in-place refinement (the
 * selection's buffer is the bitmap's) takes the general path, and so does
 * every refinement on a CPU device (below). Fills *rp and returns 1 when it
 * applies. */
static int range_fast_path(const ps_backend *be, const ps_eval_args *a, range_params *rp) {
  const ps_program *prog = a->prog;
  if (!ps_cl_options(be)->fast_paths || !be->little_endian) return 0;
  if (prog->n_insns != 1 || prog->insns[0].op != PS_OP_RANGE || a->mask.handle) return 0;
  const ps_insn *in = &prog->insns[0];
  const ps_prog_col *col = &prog->cols[in->col_a];
  const uint64_t wmask = ps_width_mask(col->width);
  if (col->flags & PS_COLF_NO_CODES) return 0;
  const int refine = a->selection_in.handle != NULL;
  if (refine && ((col->flags & PS_COLF_VALIDITY) || a->selection_in.handle == a->bitmap.handle)) return 0;
  /* On a CPU device a refinement takes words.cl: on PoCL it ran the bench's
   * refine case several times faster than range.cl's direct variant
   * (docs/benchmarks.md). */
  if (refine && be->cpu) return 0;
  /* On a CPU device a column with a code limit takes words.cl instead: on
   * PoCL it ran like_prefix several times faster than range.cl's direct
   * variant with the check (docs/benchmarks.md). */
  if (be->cpu && col->code_limit < wmask) return 0;
  int has_data = col->width > 0 && col->data_bytes > 0;
  if (has_data && (a->data[in->col_a].offset & 3)) return 0;
  memset(rp, 0, sizeof *rp);
  rp->width = col->width;
  rp->data = has_data ? (cl_mem)a->data[in->col_a].handle : be->dummy;
  rp->data_offset = has_data ? a->data[in->col_a].offset : 0;
  rp->data_bytes = has_data ? col->data_bytes : 0;
  if (has_data && (rp->data_offset & 15) == 0) rp->flags |= RANGE_ALIGNED16;
  if (refine) {
    rp->validity = (cl_mem)a->selection_in.handle;
    rp->validity_offset = a->selection_in.offset;
    rp->validity_bytes = (a->rows + 7) / 8;
    rp->flags |= RANGE_HAS_VALIDITY;
  } else if ((col->flags & PS_COLF_VALIDITY) && col->validity_bytes > 0) {
    rp->validity = (cl_mem)a->validity[in->col_a].handle;
    rp->validity_offset = a->validity[in->col_a].offset;
    rp->validity_bytes = col->validity_bytes;
  } else {
    rp->validity = be->dummy;
  }
  /* A validity flag with no readable bytes: every row is null (bits past
   * validity_bytes read as 0), so the flag stays and the loads give 0. */
  if (col->flags & PS_COLF_VALIDITY) rp->flags |= RANGE_HAS_VALIDITY;
  rp->bitmap = a->bitmap.handle ? (cl_mem)a->bitmap.handle : be->dummy;
  rp->bitmap_offset = a->bitmap.handle ? a->bitmap.offset : 0;
  if (a->bitmap.handle) rp->flags |= RANGE_WANT_BITMAP;
  rp->rows = a->rows;
  /* canonical (ps_program.h): lo <= hi <= code_limit <= wmask */
  const uint64_t lo = in->lo, hi = in->hi;
  const cl_uint negate = (in->flags & PS_INSN_NEGATE) ? 0xffffffffu : 0u;
  rp->lo = lo;
  rp->span = hi - lo;
  rp->negate_mask = negate;
  if (col->code_limit < wmask) {
    rp->check_limit = 1;
    rp->limit = col->code_limit;
    rp->limit_bit = 1u << in->col_a;
  }
  return 1;
}

/* The work-group size range.cl is built with for this width: the largest
 * power of two up to PS_CL_RANGE_WORK_GROUP that the device allows and whose
 * staging tile fits its local memory; 0 if none does (general path). On a
 * CPU, PS_CL_RANGE_CPU_WORK_GROUP (or less, as the device allows). */
static size_t range_work_group(const ps_backend *be, uint32_t width) {
  if (be->cpu) { /* the direct variant: no local memory, any group size */
    size_t cwg = PS_CL_RANGE_CPU_WORK_GROUP;
    while (cwg > be->max_work_group) cwg /= 2;
    return cwg;
  }
  uint64_t stride = width == 0 ? 1 : width % 2 ? width : width + 1;
  size_t wg = PS_CL_RANGE_WORK_GROUP;
  while (wg > be->max_work_group) wg /= 2;
  /* tile + reduction scratch, in bytes */
  while (wg >= 4 && (uint64_t)wg * (range_words_per_item(be, width) * stride + 1) * 4 > be->local_mem) wg /= 2;
  /* A tile must start at a 16-byte boundary of the stream: 4 | tile words. */
  return wg * range_words_per_item(be, width) % 4 == 0 ? wg : 0;
}

/* Runs the fast path. *done = 0 when the device cannot run it (the caller
 * takes the general path). Synchronizes only when a host value is wanted (the count, or the
 * corrupt-code flag of a column with a code limit). */
static ps_status eval_range(ps_backend *be, const ps_eval_args *a, const range_params *rp, int *done) {
  *done = 0;
  size_t wg = range_work_group(be, rp->width);
  if (wg == 0) return PS_OK;
  const ps_cl_cached *prog;
  PS_CL_TRY(ps_cl_range_program(be, rp->width, wg, range_direct_words(be, rp->width), rp->check_limit, &prog));
  ps_cl_kernel_id id = a->count ? PS_CL_RANGE_COUNT : PS_CL_RANGE;
  if (prog->work_group[id] == 0) return PS_OK;
  *done = 1;
  if (!a->count && !a->bitmap.handle && !rp->check_limit) return PS_OK; /* nothing to produce, nothing can fail */

  cl_kernel k = prog->kernels[id];
  cl_uint i = 0;
  PS_CL_TRY(ps_cl_set_arg(be, k, i++, sizeof(cl_mem), &rp->data));
  PS_CL_TRY(ps_cl_set_arg(be, k, i++, sizeof(cl_ulong), &rp->data_offset));
  PS_CL_TRY(ps_cl_set_arg(be, k, i++, sizeof(cl_ulong), &rp->data_bytes));
  PS_CL_TRY(ps_cl_set_arg(be, k, i++, sizeof(cl_mem), &rp->validity));
  PS_CL_TRY(ps_cl_set_arg(be, k, i++, sizeof(cl_ulong), &rp->validity_offset));
  PS_CL_TRY(ps_cl_set_arg(be, k, i++, sizeof(cl_ulong), &rp->validity_bytes));
  PS_CL_TRY(ps_cl_set_arg(be, k, i++, sizeof(cl_mem), &rp->bitmap));
  PS_CL_TRY(ps_cl_set_arg(be, k, i++, sizeof(cl_ulong), &rp->bitmap_offset));
  PS_CL_TRY(ps_cl_set_arg(be, k, i++, sizeof(cl_ulong), &rp->rows));
  PS_CL_TRY(ps_cl_set_arg(be, k, i++, sizeof(cl_ulong), &rp->lo));
  PS_CL_TRY(ps_cl_set_arg(be, k, i++, sizeof(cl_ulong), &rp->span));
  PS_CL_TRY(ps_cl_set_arg(be, k, i++, sizeof(cl_uint), &rp->negate_mask));
  PS_CL_TRY(ps_cl_set_arg(be, k, i++, sizeof(cl_uint), &rp->flags));
  PS_CL_TRY(ps_cl_set_arg(be, k, i++, sizeof(cl_mem), &be->status));
  PS_CL_TRY(ps_cl_set_arg(be, k, i++, sizeof(cl_ulong), &rp->limit));
  PS_CL_TRY(ps_cl_set_arg(be, k, i++, sizeof(cl_uint), &rp->limit_bit));
  const int readback = a->count || rp->check_limit;
  if (readback) PS_CL_TRY(ps_cl_reset_status(be, 0, PS_FILTER_STATUS_WORDS));
  /* One work-group per tile of wg * R result words. */
  uint64_t words = (a->rows + 31) / 32, tile = (uint64_t)wg * range_words_per_item(be, rp->width);
  PS_CL_TRY(ps_cl_launch(be, prog, id, (size_t)((words + tile - 1) / tile * wg)));
  if (!readback) return PS_OK;
  return read_status(be, a);
}

/* Runs the filter kernel of prog and returns the count and corrupt flags
 * when they are wanted; synchronizes only then. */
static ps_status run_filter(ps_backend *be, const ps_cl_cached *prog, const ps_eval_args *args, size_t global,
                            int *refused) {
  int check_corrupt = corruption_possible(args->prog) || aux_unsafe(args->prog);
  int need_status = check_corrupt || args->count != NULL;
  PS_CL_TRY(enqueue(be, prog, args, need_status, global, refused));
  if (!need_status || (refused && *refused)) return PS_OK;

  return read_status(be, args);
}

/* ---- the general filter specialized per shape (words.cl) -------------------- */

/* words.cl runs every program (kernels_shared/ps_where.h evaluates every
 * leaf) on little-endian devices, SET programs on GPUs too: on NVIDIA's
 * driver its per-word SET lookups beat filter.cl's per-row interpreter
 * (docs/performance-notes.md, "Sets and LIKE"), which stays the path of
 * big-endian devices and of launches the device refuses. */
static int words_applicable(const ps_backend *be, const ps_eval_args *args) {
  (void)args;
  return be->little_endian;
}

/* words.cl's work-group size: PS_CL_WORDS_WORK_GROUP or the largest power
 * of two below it that the device allows. */
static size_t words_work_group(const ps_backend *be) {
  size_t wg = PS_CL_WORDS_WORK_GROUP;
  while (wg > 1 && wg > be->max_work_group) wg /= 2;
  return wg;
}

/* Runs the program through words.cl, built for its shape (core's
 * ps_where_spec_write) through the program cache. *done = 0 when it does not
 * apply or the device cannot run it (the caller takes filter.cl). */
static ps_status eval_words(ps_backend *be, const ps_eval_args *args, int *done) {
  *done = 0;
  const ps_program *p = args->prog;
  if (!words_applicable(be, args)) return PS_OK;
  const size_t wg = words_work_group(be), size = PS_WHERE_SPEC_MAX_TEXT + 64;
  char *text = ps_host_alloc(be->ctx, size);
  if (!text) return ps_backend_error(be->ctx, PS_ERR_OUT_OF_MEMORY, "OpenCL: filter shape text");
  /* a CPU device's work-item takes a run of words (words.cl) */
  const unsigned span = be->cpu ? PS_CL_WORDS_CPU_SPAN : 1u;
  const int n = snprintf(text, size, "#define PS_WORDS_WG %zu\n#define PS_WORDS_SPAN %uu\n", wg, span);
  const ps_cl_cached *prog = NULL;
  ps_status st = PS_OK;
  if (ps_where_spec_write(p, NULL, text + n, size - (size_t)n) != 0) st = ps_cl_words_program(be, text, wg, &prog);
  ps_host_free(be->ctx, text);
  if (st != PS_OK || !prog || prog->work_group[PS_CL_FILTER] == 0) return st;
  int refused = 0;
  st = run_filter(be, prog, args, (size_t)(((args->rows + 31) / 32 + span - 1) / span), &refused);
  if (st == PS_OK && refused) {
    /* The shape stays cached, marked as one this device will not run. */
    ((ps_cl_cached *)prog)->work_group[PS_CL_FILTER] = 0;
    return PS_OK;
  }
  *done = 1;
  return st;
}

ps_status ps_cl_eval(ps_backend *be, const ps_eval_args *args) {
  PS_CL_TRY(check_launch(be, args));
  const int jit = ps_cl_options(be)->opencl_jit;
  int specialize = jit == PS_OPT_AUTO ? args->rows >= PS_CL_JIT_MIN_ROWS : jit == PS_OPT_ON;
  range_params rp;
  if (args->for_only && range_fast_path(be, args, &rp)) {
    int done;
    PS_CL_TRY(eval_range(be, args, &rp, &done));
    if (done) return PS_OK;
  }
  if (specialize) {
    int done;
    PS_CL_TRY(eval_words(be, args, &done));
    if (done) return PS_OK;
  }
  const ps_cl_cached *prog;
  char shape[4096];
  if (specialize) shape_of(args->prog, shape, sizeof shape);
  PS_CL_TRY(ps_cl_program(be, specialize ? shape : NULL, &prog));
  return run_filter(be, prog, args, (size_t)((args->rows + 31) / 32), NULL);
}
