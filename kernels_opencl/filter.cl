/*
 * filter.cl: evaluates a flat predicate program (core/ps_program.h, whose
 * comment is the binding per-row semantics) over one chunk of rows.
 *
 * Work-item g produces result word g: rows [32g, 32g+32) of the chunk, row
 * 32g+j at bit j. Truth values of those 32 rows travel as two masks,
 * (is_true, is_false); a row in neither is UNKNOWN (Kleene logic).
 *
 * Plain OpenCL C 1.2, built after common.cl (see there). Outputs: the
 * bitmap (ceil(rows/8) bytes), a byte-per-row mask (rows bytes) and the count;
 * input: an optional selection that restricts the rows evaluated.
 *
 * Specialization: the kernel is an interpreter of the program. When the host
 * prepends a shape table (PS_SPECIALIZED: opcodes, flags, slots, and each
 * slot's width, kind and flags as compile-time constants), the accessors
 * below read the table instead of the launch block, and the compiler unrolls
 * the program and the 32-row loops into straight-line code for that shape.
 * Bounds, literals and offsets stay run-time values, so one build serves every
 * query of the same shape.
 */

#ifdef PS_SPECIALIZED
#define PS_N_INSNS(prog) PS_SPEC_INSNS
#define PS_OP(prog, i) ps_spec_insns[i][0]
#define PS_FLAGS(prog, i) ps_spec_insns[i][1]
#define PS_COL_A(prog, i) ps_spec_insns[i][2]
#define PS_COL_B(prog, i) ps_spec_insns[i][3]
#define PS_WIDTH(prog, c) ps_spec_cols[c][0]
#define PS_KIND(prog, c) ps_spec_cols[c][1]
#define PS_COLFLAGS(prog, c) ps_spec_cols[c][2]
#define PS_SPEC_UNROLL _Pragma("unroll")
#else
#define PS_N_INSNS(prog) ((prog)->n_insns)
#define PS_OP(prog, i) ((prog)->insns[i].op)
#define PS_FLAGS(prog, i) ((prog)->insns[i].flags)
#define PS_COL_A(prog, i) ((prog)->insns[i].col_a)
#define PS_COL_B(prog, i) ((prog)->insns[i].col_b)
#define PS_WIDTH(prog, c) ((prog)->cols[c].width)
#define PS_KIND(prog, c) ((prog)->cols[c].kind)
#define PS_COLFLAGS(prog, c) ((prog)->cols[c].flags)
#define PS_SPEC_UNROLL
#endif

/* One column slot as seen by one work-item. */
typedef struct ps_column {
  __constant ps_prog_col *meta; /* run-time fields: reference, code_limit, sizes, scale */
  uint width, kind, flags;      /* the shape: constants when specialized */
  ps_region data;
  ulong first_row; /* the work-item's 32 rows start at this row */
  __global const uint *words; /* aligned start of the stream when the work-item's
                                 w words are whole in it, else NULL */
  uint valid;      /* validity of the work-item's rows (0 outside the active rows) */
  uint slot;
} ps_column;

typedef struct ps_truth {
  uint is_true;
  uint is_false;
} ps_truth;

/* ---- columns ---------------------------------------------------------- */

static ps_column ps_column_at(__constant ps_filter_launch *launch, uint slot, const ps_bytes *data,
                              const ps_bytes *validity, ulong g, uint row_mask) {
  ps_column c;
  c.meta = &launch->prog.cols[slot];
  c.width = PS_WIDTH(&launch->prog, slot);
  c.kind = PS_KIND(&launch->prog, slot);
  c.flags = PS_COLFLAGS(&launch->prog, slot);
  c.data.buf = data[slot];
  c.data.offset = launch->data_offset[slot];
  c.data.size = c.meta->data_bytes;
  c.first_row = 32 * g;
  /* 32 rows span exactly w words, so a code never reaches outside them. */
  int whole = c.meta->encoding == PS_ENC_FOR && (g + 1) * c.width * 4 <= c.data.size && (c.data.offset & 3) == 0;
#ifdef PS_BIG_ENDIAN_DEVICE
  whole = 0;
#endif
  c.words = whole ? (__global const uint *)(c.data.buf + c.data.offset) : 0;
  c.slot = slot;
  c.valid = row_mask;
  if (c.flags & PS_COLF_VALIDITY) {
    ps_region v = {validity[slot], launch->validity_offset[slot], c.meta->validity_bytes};
    c.valid &= ps_load_word(v, g);
  }
  return c;
}

/* Reads the code of valid row j into *code; a corrupt code (ps_program.h)
 * raises the slot's bit in *corrupt and returns 0 so that it is never used. */
static int ps_read_code(const ps_column *c, uint j, ulong *code, uint *corrupt) {
  const ulong row = c->first_row + j;
  *code = c->words ? ps_code_in_words(c->words, c->width, row)
                   : ps_col_code_at(*c->meta, c->data.buf + c->data.offset, (c->data.offset & 3) == 0, row);
  if (ps_code_corrupt(c->flags, *code, c->meta->code_limit)) {
    *corrupt |= 1u << c->slot;
    return 0;
  }
  return 1;
}

/* ---- per-row predicates ----------------------------------------------- */

/* Aux words (SET bits, INLIST intervals, RANK ranks): kernels_shared/ps_cmpcol.h
 * (ps_aux_word, ps_aux_bit, ps_in_list); an index past the aux words (only a
 * malformed program reads there) raises PS_FILTER_CORRUPT_AUX, as words.cl
 * and CUDA do. */

/* Outcomes, PS_MODE_INT keys and PS_MODE_DOUBLE values: kernels_shared/ps_cmpcol.h. */

static uint ps_compare_codes(__constant ps_insn *in, uint flags, const ps_column *a, ulong code_a,
                             const ps_column *b, ulong code_b, ps_region aux, uint *corrupt) {
  uint cmp = PS_INSN_CMP(flags);
  switch (PS_INSN_MODE(flags)) {
    case PS_MODE_INT: {
      const int s = ps_int_key_sign(ps_int_key_of(a->meta->reference, a->kind == PS_KIND_SIGNED, code_a),
                                    ps_int_key_of(b->meta->reference, b->kind == PS_KIND_SIGNED, code_b));
      return ps_cmp_outcome(cmp, s < 0, s == 0, s > 0);
    }
#ifdef PS_HAVE_FP64
    case PS_MODE_DOUBLE: {
      double x = ps_double_of_kind(a->kind, a->meta, code_a), y = ps_double_of_kind(b->kind, b->meta, code_b);
      return ps_cmp_outcome(cmp, x < y, x == y, x > y);
    }
#endif
    case PS_MODE_RANK: {
      uint ra = ps_aux_word(aux, (ulong)in->aux_a + code_a, corrupt, PS_FILTER_CORRUPT_AUX);
      uint rb = ps_aux_word(aux, (ulong)in->aux_b + code_b, corrupt, PS_FILTER_CORRUPT_AUX);
      return ps_cmp_outcome(cmp, ra < rb, ra == rb, ra > rb);
    }
    default: return 0;
  }
}

/* ---- instructions over 32 rows ---------------------------------------- */

/* Truth masks of a leaf (kernels_shared/ps_kleene.h's ps_leaf_truth; the
 * corrupt rows' status bits were raised as their codes were read). */
static ps_truth ps_truth_of(uint valid, uint bad, uint hits, uint negate) {
  ps_truth t;
  (void)ps_leaf_truth(valid, bad, hits, negate ? 0xffffffffu : 0u, &t.is_true, &t.is_false);
  return t;
}

/* RANGE, SET, INLIST: one column's code against constants or aux. */
static ps_truth ps_eval_unary(__constant ps_insn *in, uint op, uint flags, const ps_column *a, ps_region aux,
                              uint *corrupt) {
  uint x = 0, bad = 0;
  for (uint j = 0; j < 32; ++j) {
    ulong code;
    if (!((a->valid >> j) & 1u)) continue;
    if (!ps_read_code(a, j, &code, corrupt)) {
      bad |= 1u << j;
      continue;
    }
    uint hit;
    if (op == PS_OP_RANGE)
      hit = in->lo <= code && code <= in->hi;
    else if (op == PS_OP_SET)
      hit = ps_aux_bit(aux, (ulong)in->aux_a + code, corrupt, PS_FILTER_CORRUPT_AUX);
    else
      hit = ps_in_list(aux, in->aux_a, in->lo, code);
    x |= hit << j;
  }
  return ps_truth_of(a->valid, bad, x, flags & PS_INSN_NEGATE);
}

/* CMPCOL: a row is known where both are valid. As in the reference, b's
 * code is read (and checked for corruption) only where a is valid and sound. */
static ps_truth ps_eval_cmpcol(__constant ps_insn *in, uint flags, const ps_column *a, const ps_column *b,
                               ps_region aux, uint *corrupt) {
  uint x = 0, known = 0;
  for (uint j = 0; j < 32; ++j) {
    ulong code_a = 0, code_b = 0;
    int ok_a = ((a->valid >> j) & 1u) && ps_read_code(a, j, &code_a, corrupt);
    int ok_b = ok_a && ((b->valid >> j) & 1u) && ps_read_code(b, j, &code_b, corrupt);
    if (ok_a && ok_b) {
      known |= 1u << j;
      x |= ps_compare_codes(in, flags, a, code_a, b, code_b, aux, corrupt) << j;
    }
  }
  return ps_truth_of(known, 0, x, 0);
}

/* The result word of work-item g: the is_true mask of the whole program. */
static uint ps_eval_word(__constant ps_filter_launch *launch, const ps_bytes *data,
                         const ps_bytes *validity, ps_region aux, ulong g, uint row_mask,
                         uint *corrupt) {
  __constant ps_program *prog = &launch->prog;
  ps_kstack k; /* kernels_shared/ps_kleene.h; the core checked the stack discipline */
  ps_kbelow below;
  ps_kstack_init(&k);
  PS_SPEC_UNROLL
  for (uint i = 0; i < PS_N_INSNS(prog); ++i) {
    __constant ps_insn *in = &prog->insns[i];
    uint op = PS_OP(prog, i), flags = PS_FLAGS(prog, i);
    if (ps_kstack_apply(&k, &below, op)) continue;
    ps_column a = ps_column_at(launch, PS_COL_A(prog, i), data, validity, g, row_mask);
    ps_truth r;
    if (op == PS_OP_ISNULL) {
      r = ps_truth_of(row_mask, 0, row_mask & ~a.valid, flags & PS_INSN_NEGATE);
    } else if (op == PS_OP_CMPCOL) {
      ps_column b = ps_column_at(launch, PS_COL_B(prog, i), data, validity, g, row_mask);
      r = ps_eval_cmpcol(in, flags, &a, &b, aux, corrupt);
    } else {
      r = ps_eval_unary(in, op, flags, &a, aux, corrupt);
    }
    ps_kstack_push(&k, &below, r.is_true, r.is_false);
  }
  return ps_kstack_result(&k, row_mask);
}

/* ---- entry point ------------------------------------------------------ */

__kernel void ps_filter_words(
    __constant ps_filter_launch *launch,
    ps_bytes d0, ps_bytes d1, ps_bytes d2, ps_bytes d3, ps_bytes d4, ps_bytes d5, ps_bytes d6,
    ps_bytes d7, ps_bytes d8, ps_bytes d9, ps_bytes d10, ps_bytes d11, ps_bytes d12,
    ps_bytes d13, ps_bytes d14, ps_bytes d15,
    ps_bytes v0, ps_bytes v1, ps_bytes v2, ps_bytes v3, ps_bytes v4, ps_bytes v5, ps_bytes v6,
    ps_bytes v7, ps_bytes v8, ps_bytes v9, ps_bytes v10, ps_bytes v11, ps_bytes v12,
    ps_bytes v13, ps_bytes v14, ps_bytes v15,
    ps_bytes aux, ps_bytes selection, __global uchar *bitmap, __global uchar *mask,
    volatile __global uint *status, __local uint *scratch) {
  const ps_bytes data[PS_MAX_COLS] = {d0, d1, d2,  d3,  d4,  d5,  d6,  d7,
                                      d8, d9, d10, d11, d12, d13, d14, d15};
  const ps_bytes validity[PS_MAX_COLS] = {v0, v1, v2,  v3,  v4,  v5,  v6,  v7,
                                          v8, v9, v10, v11, v12, v13, v14, v15};
  ulong rows = launch->rows;
  ulong g = get_global_id(0);
  uint selected = 0;
  if (g < (rows + 31) / 32) {
    uint row_mask = ps_row_mask(rows, g);
    /* Rows outside an input selection are not evaluated at all (no corrupt
     * read can come from them). The selection may be the bitmap itself
     * (in-place refinement): word g is read here before it is written. */
    if (launch->has_selection) {
      ps_region sel = {selection, launch->selection_offset, (rows + 7) / 8};
      row_mask &= ps_load_word(sel, g);
    }
    uint corrupt = 0;
    if (row_mask != 0) {
      ps_region aux_region = {aux, launch->aux_offset, (ulong)launch->prog.aux_words * 4};
      selected = ps_eval_word(launch, data, validity, aux_region, g, row_mask, &corrupt);
    }
    if (launch->want_bitmap) ps_store_word(bitmap, launch->bitmap_offset, (rows + 7) / 8, g, selected);
    if (launch->want_mask) ps_store_mask(mask, launch->mask_offset, rows, g, selected);
    if (corrupt) atomic_or(&status[PS_FILTER_STATUS_CORRUPT], corrupt);
  }
  uint group_count = ps_group_sum(popcount(selected), scratch);
  if (launch->want_count && get_local_id(0) == 0 && group_count != 0)
    atomic_add(&status[PS_FILTER_STATUS_COUNT], group_count);
}
