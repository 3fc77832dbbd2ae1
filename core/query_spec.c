/* The specialization text of a query kernel (query_spec.h). */
#include "query_spec.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

int ps_query_specialize(const ps_context *ctx, uint64_t rows, int gpu_grouped) {
  const ps_internal_options *opts = &ctx->options;
  /* A run that zone maps or streaming split into pieces is judged by the
   * rows it evaluates in all, not by one piece's. */
  if (ctx->query_run_rows > rows) rows = ctx->query_run_rows;
  if (opts->query_specialize == PS_OPT_AUTO)
    return rows >= (gpu_grouped ? PS_QUERY_SPEC_MIN_ROWS_GPU_GROUPED : PS_QUERY_SPEC_MIN_ROWS) &&
           ctx->query_compile != PS_QUERY_COMPILE_NEVER;
  return opts->query_specialize == PS_OPT_ON;
}

int ps_query_spec_background(const ps_context *ctx) {
  return ctx->options.query_specialize != PS_OPT_ON && ctx->query_compile == PS_QUERY_COMPILE_BACKGROUND;
}

int ps_query_lanes(const ps_context *ctx, int by_default) {
  const int o = ctx->options.query_lanes;
  return o == PS_OPT_AUTO ? by_default : o == PS_OPT_ON;
}

uint32_t ps_query_prefetch(const ps_context *ctx) {
  const int o = ctx->options.query_prefetch;
  return o == PS_OPT_AUTO ? PS_QUERY_PREFETCH_AUTO : (uint32_t)(o == PS_OPT_ON);
}

typedef struct text {
  char *buf;
  size_t size, len;
  int full;
} text;

static void put(text *t, const char *fmt, ...) {
  if (t->full) return;
  va_list ap;
  va_start(ap, fmt);
  int n = vsnprintf(t->buf + t->len, t->size - t->len, fmt, ap);
  va_end(ap);
  if (n < 0 || (size_t)n >= t->size - t->len) {
    t->full = 1;
    return;
  }
  t->len += (size_t)n;
}

/* A column slot, its stream sizes left out (see query_spec.h). */
static void put_col(text *t, const ps_prog_col *c) {
  put(t, "{0x%llxull,0x%llxull,0ull,0ull,%uu,%uu,%uu,%uu,%uu}", (unsigned long long)c->reference,
      (unsigned long long)c->code_limit, c->width, c->kind, (unsigned)c->scale, (unsigned)c->encoding, c->flags);
}

static void put_cols(text *t, const ps_prog_col *cols, uint32_t n) {
  const ps_prog_col zero = {0, 0, 0, 0, 0, 0, 0, 0, 0};
  put(t, "{");
  for (uint32_t i = 0; i < (n ? n : 1); i++) {
    put(t, i ? ",\n" : "");
    put_col(t, n ? &cols[i] : &zero);
  }
  put(t, "}");
}

static void put_u64s(text *t, const uint64_t *v, uint32_t n) {
  put(t, "{");
  for (uint32_t i = 0; i < n; i++) put(t, "%s0x%llxull", i ? "," : "", (unsigned long long)v[i]);
  put(t, "}");
}

static void put_u32s(text *t, const uint32_t *v, uint32_t n) {
  put(t, "{");
  for (uint32_t i = 0; i < n; i++) put(t, "%s%uu", i ? "," : "", v[i]);
  put(t, "}");
}

size_t ps_query_spec_write(const ps_vprog *p, const ps_program *where, const ps_query_spec_flags *f, char *buf,
                           size_t size) {
  text t = {buf, size, 0, size == 0};
  put(&t, "#define PS_Q_SPEC 1\n#define PS_QS_MODE %uu\n#define PS_QS_FITS64 %uu\n#define PS_QS_HAS_WHERE %uu\n",
      f->mode, f->fits64, f->has_where);
  put(&t, "#define PS_QS_ALIGNED 0x%llxull\n#define PS_QS_AND_RIGHT 0x%llxull\n#define PS_QS_OR_RIGHT 0x%llxull\n",
      (unsigned long long)f->data_aligned, (unsigned long long)f->and_right, (unsigned long long)f->or_right);
  put(&t, "#define PS_QS_REG_GROUPS %uu\n#define PS_QS_N_AGGS %uu\n#define PS_QS_FIELDS 0x%llxull\n",
      f->mode == 3u /* PS_QMODE_REGS */ ? p->n_groups : 1u, p->n_aggs ? p->n_aggs : 1u, (unsigned long long)f->fields);
  put(&t, "#define PS_QS_LANES %uu\n", f->mode == 3u && f->lanes ? 1u : 0u);
  const uint32_t by_rows = f->mode == 3u /* PS_QMODE_REGS */ && f->lanes;
  put(&t, "#define PS_QS_PREFETCH %uu\n",
      f->prefetch == PS_QUERY_PREFETCH_AUTO ? by_rows
                                            : ((f->mode == 0u /* PS_QMODE_PRIVATE */ || by_rows) && f->prefetch ? 1u : 0u));
  put(&t, "#define PS_QS_WARP_MERGE %uu\n", f->mode == 3u && f->warp_merge ? 1u : 0u);
  put(&t, "#define PS_QS_MIN_BLOCKS %uu\n", f->min_blocks);
  /* ps_vprog, field by field in declaration order */
  put(&t, "PS_Q_SPEC_DATA ps_vprog ps_q_spec_prog = {%uu,%uu,%uu,%uu,%uu,%uu,%uu,%uu,\n", p->n_cols, p->n_insns,
      p->n_aggs, p->n_accs, p->n_keys, p->n_preds, p->n_groups, p->read_slots);
  put_u32s(&t, p->key_slot, PS_QMAX_KEYS);
  put(&t, ",%uu,%uu,", p->group_pass, p->derived_counts);
  put_u64s(&t, p->key_domain, PS_QMAX_KEYS);
  put(&t, ",");
  put_u64s(&t, p->key_stride, PS_QMAX_KEYS);
  put(&t, ",0x%llxull,\n", (unsigned long long)p->group_slots);
  put_cols(&t, p->cols, p->n_cols);
  put(&t, ",\n{");
  const uint32_t n_aggs = p->n_aggs ? p->n_aggs : 1;
  for (uint32_t i = 0; i < n_aggs; i++) put(&t, "%s{%uu,%uu}", i ? "," : "", p->aggs[i].first, p->aggs[i].count);
  put(&t, "},\n{");
  const uint32_t n_insns = p->n_insns ? p->n_insns : 1;
  for (uint32_t i = 0; i < n_insns; i++) {
    const ps_vinsn *in = &p->insns[i];
    put(&t, "%s{%uu,%uu,0x%llxull,0x%llxull}", i ? ",\n" : "", in->op, in->arg, (unsigned long long)in->lo,
        (unsigned long long)in->hi);
  }
  put(&t, "},\n{");
  for (uint32_t k = 0; k < PS_QMAX_KEYS; k++) {
    const ps_qkeyfn *kf = &p->key_fn[k];
    put(&t, "%s{%uu,%uu,(ps_i64)0x%llxull,(ps_i64)0x%llxull,(ps_i64)0x%llxull}", k ? "," : "", kf->op, kf->values,
        (unsigned long long)kf->unit, (unsigned long long)kf->arg, (unsigned long long)kf->base);
  }
  put(&t, "}};\n");
  /* ps_program (all zero without a WHERE: never read) */
  ps_program none;
  const ps_program *w = where;
  if (!w) {
    memset(&none, 0, sizeof none);
    w = &none;
  }
  put(&t, "PS_Q_SPEC_DATA ps_program ps_q_spec_where = {%uu,%uu,%uu,%uu,\n", w->n_insns, w->n_cols, w->stack_depth,
      w->aux_words);
  put_cols(&t, w->cols, w->n_cols);
  put(&t, ",\n{");
  const uint32_t w_insns = w->n_insns ? w->n_insns : 1;
  for (uint32_t i = 0; i < w_insns; i++) {
    const ps_insn *in = &w->insns[i];
    put(&t, "%s{%uu,%uu,%uu,%uu,%uu,%uu,0x%llxull,0x%llxull}", i ? ",\n" : "", in->op, in->flags, in->col_a, in->col_b,
        in->aux_a, in->aux_b, (unsigned long long)in->lo, (unsigned long long)in->hi);
  }
  put(&t, "}};\n");
  /* kernels_shared/ps_where.h evaluates the WHERE specialized on these very
   * constants (shape and literals) */
  if (where) put(&t, "#define PS_W_SPEC_PROG ps_q_spec_where\n#define PS_W_N_INSNS %uu\n", where->n_insns);
  if (t.full) {
    if (size) buf[0] = '\0';
    return 0;
  }
  return t.len;
}

uint64_t ps_where_whole_words(const ps_program *p, uint32_t data_aligned, uint32_t validity_aligned) {
  uint64_t words = UINT64_MAX;
  for (uint32_t c = 0; c < p->n_cols && c < PS_MAX_COLS; c++) {
    const ps_prog_col *col = &p->cols[c];
    if (col->encoding == PS_ENC_FOR && col->width != 0) {
      if (!((data_aligned >> c) & 1u)) return 0;
      const uint64_t w = ps_for_whole_words(col->width, col->data_bytes);
      if (w < words) words = w;
    }
    if (col->flags & PS_COLF_VALIDITY) {
      if (!((validity_aligned >> c) & 1u)) return 0;
      const uint64_t w = col->validity_bytes / 4; /* a bitmap is a 1-bit FOR stream */
      if (w < words) words = w;
    }
  }
  return words;
}

size_t ps_where_spec_write(const ps_program *p, const ps_where_spec_flags *f, char *buf, size_t size) {
  text t = {buf, size, 0, size == 0};
  put(&t, "PS_Q_SPEC_DATA ps_program ps_w_spec_prog = {%uu,%uu,%uu,0u,\n{", p->n_insns, p->n_cols, p->stack_depth);
  const uint32_t n_cols = p->n_cols ? p->n_cols : 1;
  for (uint32_t c = 0; c < n_cols; c++) {
    const ps_prog_col *col = &p->cols[c];
    if (c < p->n_cols)
      put(&t, "%s{0ull,0ull,0ull,0ull,%uu,%uu,%uu,%uu,%uu}", c ? ",\n" : "", col->width, col->kind,
          (unsigned)col->scale, (unsigned)col->encoding, col->flags);
    else
      put(&t, "{0ull,0ull,0ull,0ull,0u,0u,0u,0u,0u}");
  }
  put(&t, "},\n{");
  const uint32_t n_insns = p->n_insns ? p->n_insns : 1;
  for (uint32_t i = 0; i < n_insns; i++) {
    const ps_insn *in = &p->insns[i];
    const int leaf = in->op != PS_OP_AND && in->op != PS_OP_OR && in->op != PS_OP_NOT;
    const uint32_t flags = in->op == PS_OP_CMPCOL ? in->flags & PS_INSN_CMPCOL_SHAPE
                           : leaf                 ? in->flags & PS_INSN_NEGATE
                                                  : 0u;
    put(&t, "%s{%uu,%uu,%uu,%uu,0u,0u,0ull,0ull}", i ? ",\n" : "", in->op, flags, leaf ? in->col_a : 0u,
        in->op == PS_OP_CMPCOL ? in->col_b : 0u);
  }
  put(&t, "}};\n#define PS_W_SPEC_PROG ps_w_spec_prog\n#define PS_W_N_INSNS %uu\n", p->n_insns);
  if (f && f->whole) put(&t, "#define PS_W_WHOLE 1\n");
  if (f && f->min_blocks) put(&t, "#define PS_W_MIN_BLOCKS %uu\n", f->min_blocks);
  if (t.full) {
    if (size) buf[0] = '\0';
    return 0;
  }
  return t.len;
}
