/* Queries: validation, lowering of value expressions to the flat value
 * program (ps_query_program.h) and chunked runs on the backend; the results
 * are finalized in query_result.c. */
#include <float.h>
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ps_query_kernels.h" /* ps_q_group_hash: the group table's layout */
#include "query.h"
#include "query_policy.h" /* ps_query_status_unrep */

_Static_assert(sizeof(ps_vinsn) == 24, "ps_vinsn layout");
_Static_assert(sizeof(ps_vagg) == 8, "ps_vagg layout");
_Static_assert(sizeof(ps_qacc) == 64, "ps_qacc layout");
_Static_assert(offsetof(ps_vprog, key_domain) == 48 && offsetof(ps_vprog, cols) == 88, "ps_vprog layout");
_Static_assert(offsetof(ps_vprog, aggs) == 88 + 48 * PS_MAX_COLS, "ps_vprog layout");
_Static_assert(offsetof(ps_vprog, insns) == 88 + 48 * PS_MAX_COLS + 8 * PS_QMAX_AGGS, "ps_vprog layout");
_Static_assert(PS_QMAX_AGGS == PS_QUERY_MAX_AGGS && PS_QMAX_KEYS == PS_QUERY_MAX_KEYS, "limits agree");

void ps_query_desc_init(ps_query_desc *desc) {
  if (!desc) return;
  memset(desc, 0, sizeof *desc);
  desc->struct_size = sizeof *desc;
}

/* ---- lowering --------------------------------------------------------------- */

typedef struct qlower {
  ps_context *ctx;
  ps_query *q;
  uint32_t agg;   /* aggregate being lowered, for messages */
  uint32_t depth; /* current stack depth */
} qlower;

static ps_status slot_of(qlower *L, ps_column *c, uint32_t *slot) {
  ps_vprog *p = &L->q->prog;
  for (uint32_t i = 0; i < p->n_cols; i++)
    if (L->q->cols[i] == c) return *slot = i, p->read_slots |= 1u << i, PS_OK;
  if (p->n_cols == PS_MAX_COLS)
    return ps_set_error(L->ctx, PS_ERR_LIMIT, "the query reads more than %d distinct columns", PS_MAX_COLS);
  uint32_t i = p->n_cols++;
  p->read_slots |= 1u << i;
  L->q->cols[i] = c;
  p->cols[i] = ps_prog_col_of(c);
  p->cols[i].data_bytes = p->cols[i].validity_bytes = 0; /* per chunk */
  *slot = i;
  return PS_OK;
}

static ps_status emit(qlower *L, uint32_t op, uint32_t arg, ps_i128 c, int push) {
  ps_vprog *p = &L->q->prog;
  if (p->n_insns == PS_QMAX_INSNS)
    return ps_set_error(L->ctx, PS_ERR_LIMIT, "the query's values lower to more than %d instructions", PS_QMAX_INSNS);
  ps_vinsn *in = &p->insns[p->n_insns++];
  in->op = op;
  in->arg = arg;
  in->lo = (uint64_t)c;
  in->hi = (uint64_t)((ps_u128)c >> 64);
  L->depth = (uint32_t)((int)L->depth + push);
  if (L->depth > PS_QMAX_STACK)
    return ps_set_error(L->ctx, PS_ERR_LIMIT, "the value of aggregate %" PRIu32 " nests deeper than %d operands",
                        L->agg, PS_QMAX_STACK);
  return PS_OK;
}

static ps_status pred_of(qlower *L, const ps_expr *e, uint32_t *index) {
  ps_vprog *p = &L->q->prog;
  for (uint32_t i = 0; i < p->n_preds; i++)
    if (L->q->preds[i] == e) return *index = i, PS_OK;
  if (p->n_preds == PS_QMAX_PREDS)
    return ps_set_error(L->ctx, PS_ERR_LIMIT, "the query has more than %d CASE predicates", PS_QMAX_PREDS);
  L->q->preds[p->n_preds] = e;
  *index = p->n_preds++;
  return PS_OK;
}

/* Emits v, then a rescale of the top to `scale` (>= v's scale). */
static ps_status lower_value(qlower *L, const ps_value *v, uint32_t scale) {
  switch (v->kind) {
    case PS_VALUE_COLUMN: {
      uint32_t slot;
      PS_TRY(slot_of(L, v->col, &slot));
      PS_TRY(emit(L, PS_VOP_COL, slot, 0, 1));
      break;
    }
    case PS_VALUE_CONST:
      PS_TRY(emit(L, PS_VOP_CONST, 0, v->constant, 1));
      break;
    case PS_VALUE_NULL:
      PS_TRY(emit(L, PS_VOP_NULL, 0, 0, 1));
      break;
    case PS_VALUE_ARITH: {
      uint32_t s = v->op == PS_MUL ? 0 : v->scale; /* + and - align both operands first */
      PS_TRY(lower_value(L, v->a, v->op == PS_MUL ? v->a->scale : s));
      PS_TRY(lower_value(L, v->b, v->op == PS_MUL ? v->b->scale : s));
      uint32_t op = v->op == PS_ADD ? PS_VOP_ADD : v->op == PS_SUB ? PS_VOP_SUB : PS_VOP_MUL;
      PS_TRY(emit(L, op, 0, 0, -1));
      break;
    }
    case PS_VALUE_CASE: {
      uint32_t p = 0;
      PS_TRY(pred_of(L, v->when, &p));
      PS_TRY(lower_value(L, v->a, v->scale));
      if (v->b)
        PS_TRY(lower_value(L, v->b, v->scale));
      else
        PS_TRY(emit(L, PS_VOP_NULL, 0, 0, 1));
      PS_TRY(emit(L, PS_VOP_CASE, p, 0, -1));
      break;
    }
  }
  if (scale > v->scale) PS_TRY(emit(L, PS_VOP_SCALE, scale - v->scale, 0, 0));
  return PS_OK;
}

/* The codes a lossless float column's rows can hold: 0 .. its code limit
 * (at its width), narrowed to its zone maps' where it has them (the values
 * of a column's window: a zone map that understated them would make rows
 * outside it not representable, never a wrong sum). false when no row can
 * hold a value. */
static bool float_code_range(const ps_column *c, uint64_t *lo, uint64_t *hi) {
  if (c->no_codes) return false;
  *lo = 0;
  *hi = c->code_limit < ps_width_mask(c->width) ? c->code_limit : ps_width_mask(c->width);
  if (!c->zones) return true;
  uint64_t zmin = UINT64_MAX, zmax = 0;
  bool any = false;
  for (uint64_t b = 0; b < c->zones->blocks; b++) {
    if (c->zones->flags[b] & PS_ZONE_ALL_NULL) continue;
    any = true;
    if (c->zones->min[b] < zmin) zmin = c->zones->min[b];
    if (c->zones->max[b] > zmax) zmax = c->zones->max[b];
  }
  if (!any) return false;
  if (zmin > *lo) *lo = zmin;
  if (zmax < *hi) *hi = zmax;
  return *lo <= *hi;
}

/* The largest magnitude of a finite value lossless float column c can
 * hold (0 when it holds none). */
static double float_largest(const ps_column *c) {
  uint64_t lo = 0, hi = 0;
  return float_code_range(c, &lo, &hi) ? ps_fmap_largest_finite(&c->fmap, lo, hi) : 0;
}

int32_t ps_query_float_sum_unit(const ps_column *col) { return ps_fmap_sum_unit(&col->fmap, float_largest(col)); }

/* SUM or AVG of lossless float column c as aggregate a: one PS_VOP_FCOL
 * whose unit is chosen from the values c can hold (docs/float-encoding.md,
 * "SUM and AVG"), or forced (ps_query_float_sum). */
static ps_status lower_float_sum(qlower *L, ps_column *c, uint32_t a) {
  ps_query *q = L->q;
  const double largest = float_largest(c);
  const int32_t unit = q->unit_forced ? q->forced_unit : ps_fmap_sum_unit(&c->fmap, largest);
  uint32_t slot;
  PS_TRY(slot_of(L, c, &slot));
  const ps_fmap *m = &c->fmap;
  const uint64_t lo_word = PS_VF_MAKE(m->map, m->f32 ? 1u : 0u, m->e, m->f, m->rank_bits, unit);
  PS_TRY(emit(L, PS_VOP_FCOL, slot, (ps_i128)(((ps_u128)m->ref << 64) | lo_word), 1));
  q->agg_fsum[a] = c;
  q->fsum_unit[a] = unit;
  q->fsum_largest[a] = largest;
  return PS_OK;
}

/* The value aux words of q's FCOLs (PS_VAUX_HEAD): the exception table of
 * each ALP slot they read, uploaded once with the query. */
static ps_status value_aux_make(ps_context *ctx, ps_query *q) {
  uint64_t words = PS_VAUX_HEAD;
  bool any = false;
  for (uint32_t s = 0; s < q->prog.n_cols; s++) {
    const ps_column *c = q->cols[s];
    bool read = false;
    for (uint32_t i = 0; i < q->prog.n_insns; i++)
      read = read ||
             ((q->prog.insns[i].op == PS_VOP_FCOL || q->prog.insns[i].op == PS_VOP_DCOL) && q->prog.insns[i].arg == s);
    if (!read || c->fmap.map != PS_FLOAT_MAP_ALP) continue;
    any = true;
    if (c->fmap.n_exc > (UINT64_MAX - words) / 2 || c->fmap.n_exc >= (uint64_t)1 << 40) {
      char label[PS_COLUMN_LABEL_SIZE];
      return ps_set_error(ctx, PS_ERR_LIMIT, "%s has %" PRIu64 " exceptions; a query's sum reads at most 2^40",
                          ps_column_label(c, label), c->fmap.n_exc);
    }
    words += 2 * c->fmap.n_exc;
  }
  if (!any) return PS_OK;
  if (words > SIZE_MAX / sizeof(uint64_t))
    return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "the exception tables of a query (%" PRIu64 " words)", words);
  uint64_t *aux = ps_calloc_ctx(ctx, (size_t)words, sizeof *aux);
  if (!aux) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "the exception tables of a query (%" PRIu64 " words)", words);
  uint64_t at = PS_VAUX_HEAD;
  for (uint32_t s = 0; s < q->prog.n_cols; s++) {
    const ps_column *c = q->cols[s];
    aux[2 * s] = at;
    bool read = false;
    for (uint32_t i = 0; i < q->prog.n_insns; i++)
      read = read ||
             ((q->prog.insns[i].op == PS_VOP_FCOL || q->prog.insns[i].op == PS_VOP_DCOL) && q->prog.insns[i].arg == s);
    if (!read || c->fmap.map != PS_FLOAT_MAP_ALP) continue;
    aux[2 * s + 1] = c->fmap.n_exc;
    for (uint64_t e = 0; e < c->fmap.n_exc; e++, at += 2) {
      aux[at] = c->fmap.exc[e].code;
      aux[at + 1] = c->fmap.exc[e].bits;
    }
  }
  q->value_aux = aux;
  q->value_aux_words = words;
  ps_status st = ps_buffer_create(ctx, words * sizeof *aux, &q->value_aux_dev);
  if (st == PS_OK) st = ps_buffer_write(ctx, q->value_aux_dev, 0, aux, words * sizeof *aux);
  return st;
}

/* A lossless float column the value reads, or NULL. */
static const ps_column *mapped_float_in(const ps_value *v) {
  if (!v) return NULL;
  if (v->kind == PS_VALUE_COLUMN) return v->col->fmap.map != PS_FLOAT_MAP_DECIMAL ? v->col : NULL;
  const ps_column *c = mapped_float_in(v->a);
  return c ? c : mapped_float_in(v->b);
}

/* ---- double arithmetic on lossless float columns ---------------------------- */

/* Emits value v as doubles (PS_VOP_DCOL and friends) and bounds the
 * doubles it can take on a row in [*lo, *hi]. Every double operation is
 * monotone in each operand (correct rounding is), so the same operations
 * on the ends bound the per-row results (NaN or infinite ends bound
 * nothing: the caller then takes the widest window). A lossless column's
 * ends are its finite values at its smallest and largest codes (zone maps
 * narrow them; float_code_range): an infinite row is not representable
 * in any window. */
static ps_status lower_double(qlower *L, const ps_value *v, double *lo, double *hi) {
  switch (v->kind) {
    case PS_VALUE_COLUMN: {
      ps_column *c = v->col;
      uint32_t slot;
      PS_TRY(slot_of(L, c, &slot));
      uint64_t clo = 0, chi = 0;
      const bool any = float_code_range(c, &clo, &chi);
      if (c->fmap.map != PS_FLOAT_MAP_DECIMAL) {
        const ps_fmap *m = &c->fmap;
        const uint64_t w = PS_VF_MAKE(m->map, m->f32 ? 1u : 0u, m->e, m->f, m->rank_bits, 0);
        PS_TRY(emit(L, PS_VOP_DCOL, slot, (ps_i128)(((ps_u128)m->ref << 64) | w), 1));
        const double big = float_largest(c);
        *lo = any ? ps_column_code_double(c, clo) : 0;
        *hi = any ? ps_column_code_double(c, chi) : 0;
        if (!isfinite(*lo)) *lo = -big;
        if (!isfinite(*hi)) *hi = big;
        return PS_OK;
      }
      const ps_prog_col pc = ps_prog_col_of(c);
      double d = 1;
      if (ps_type_is_float(c->type) || ps_type_is_decimal(c->type)) d = ps_scaled_to_double(1, -(int32_t)c->scale);
      PS_TRY(emit(L, PS_VOP_DNUM, slot, (ps_i128)ps_fmap_bits(d), 1));
      *lo = any ? ps_fmap_dnum(pc.kind, pc.reference + clo, d) : 0;
      *hi = any ? ps_fmap_dnum(pc.kind, pc.reference + chi, d) : 0;
      if (pc.kind == PS_KIND_UNSIGNED ? pc.reference + clo > pc.reference + chi
                                      : (int64_t)(pc.reference + clo) > (int64_t)(pc.reference + chi)) {
        *lo = -0x1p64; /* the codes' values wrap around (corrupt rows): bound every 64-bit value */
        *hi = 0x1p64;
      }
      return PS_OK;
    }
    case PS_VALUE_CONST: {
      const double x = ps_scaled_to_double(v->constant, (int32_t)v->scale);
      *lo = *hi = x;
      return emit(L, PS_VOP_DCONST, 0, (ps_i128)ps_fmap_bits(x), 1);
    }
    case PS_VALUE_NULL:
      *lo = *hi = 0;
      return emit(L, PS_VOP_NULL, 0, 0, 1);
    case PS_VALUE_ARITH: {
      double al, ah, bl, bh;
      PS_TRY(lower_double(L, v->a, &al, &ah));
      PS_TRY(lower_double(L, v->b, &bl, &bh));
      const uint32_t op = v->op == PS_ADD ? PS_VOP_DADD : v->op == PS_SUB ? PS_VOP_DSUB : PS_VOP_DMUL;
      if (op == PS_VOP_DADD) {
        *lo = ps_fmap_darith(op, al, bl), *hi = ps_fmap_darith(op, ah, bh);
      } else if (op == PS_VOP_DSUB) {
        *lo = ps_fmap_darith(op, al, bh), *hi = ps_fmap_darith(op, ah, bl);
      } else {
        const double q[4] = {ps_fmap_darith(op, al, bl), ps_fmap_darith(op, al, bh), ps_fmap_darith(op, ah, bl),
                             ps_fmap_darith(op, ah, bh)};
        *lo = *hi = q[0];
        for (int k = 1; k < 4; k++) *lo = fmin(*lo, q[k]), *hi = fmax(*hi, q[k]);
        if (isnan(q[0]) || isnan(q[1]) || isnan(q[2]) || isnan(q[3])) *lo = *hi = NAN; /* 0 * inf */
      }
      return emit(L, op, 0, 0, -1);
    }
    case PS_VALUE_CASE: {
      uint32_t p = 0;
      double al, ah, bl = 0, bh = 0;
      PS_TRY(pred_of(L, v->when, &p));
      PS_TRY(lower_double(L, v->a, &al, &ah));
      if (v->b)
        PS_TRY(lower_double(L, v->b, &bl, &bh));
      else
        PS_TRY(emit(L, PS_VOP_NULL, 0, 0, 1));
      *lo = fmin(al, bl), *hi = fmax(ah, bh);
      if (isnan(al) || isnan(ah) || isnan(bl) || isnan(bh)) *lo = *hi = NAN;
      return emit(L, PS_VOP_CASE, p, 0, -1);
    }
  }
  return ps_set_error(L->ctx, PS_ERR_INVALID_ARGUMENT, "aggregate %" PRIu32 ": a value of unknown kind", L->agg);
}

/* Aggregate a's value v, arithmetic that reads a lossless float column:
 * evaluated per row in doubles (lower_double), then SUM and AVG in units of
 * a window chosen from the bound of |v| as lower_float_sum chooses a
 * column's (the widest, 2^(1023 - 125), where the bound is not finite:
 * only values near the largest doubles then fit), MIN, MAX and COUNT on the
 * doubles' ordered bits. */
static ps_status lower_float_arith(qlower *L, const ps_value *v, ps_agg_kind kind, uint32_t a) {
  ps_query *q = L->q;
  double lo = 0, hi = 0;
  PS_TRY(lower_double(L, v, &lo, &hi));
  if (kind == PS_AGG_SUM || kind == PS_AGG_AVG) {
    double largest = fmax(fabs(lo), fabs(hi));
    if (!isfinite(largest)) largest = DBL_MAX;
    ps_fmap f64;
    memset(&f64, 0, sizeof f64); /* a double's unit: at least 2^-1074 */
    const int32_t unit = q->unit_forced ? q->forced_unit : ps_fmap_sum_unit(&f64, largest);
    PS_TRY(emit(L, PS_VOP_DUNITS, (uint32_t)(unit + 2048), 0, 0));
    q->fsum_unit[a] = unit;
    q->fsum_largest[a] = largest;
  } else {
    PS_TRY(emit(L, PS_VOP_DORD, kind == PS_AGG_COUNT ? PS_DORD_COUNT : 0u, 0, 0));
  }
  q->agg_fexpr[a] = mapped_float_in(v);
  return PS_OK;
}

const char *ps_agg_name(ps_agg_kind k) {
  switch (k) {
    case PS_AGG_COUNT_STAR:
      return "COUNT(*)";
    case PS_AGG_COUNT:
      return "COUNT";
    case PS_AGG_SUM:
      return "SUM";
    case PS_AGG_MIN:
      return "MIN";
    case PS_AGG_MAX:
      return "MAX";
    case PS_AGG_AVG:
      return "AVG";
  }
  return "?";
}

/* Rows of everything the query reads must be desc->rows. */
static ps_status check_rows(ps_context *ctx, uint64_t want, uint64_t got, const char *what, uint32_t i) {
  if (got != want)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s %" PRIu32 " reads %" PRIu64 " rows; desc->rows is %" PRIu64,
                        what, i, got, want);
  return PS_OK;
}

/* The possible keys of GROUP BY key k: its codes, plus its NULL group. */
static ps_status key_domain(ps_context *ctx, const ps_column *c, uint32_t k, uint64_t *domain) {
  uint64_t codes;
  if (c->no_codes)
    codes = 0;
  else if (c->code_limit < ps_width_mask(c->width))
    codes = c->code_limit < UINT64_MAX ? c->code_limit + 1 : UINT64_MAX;
  else
    codes = c->width < 64 ? (uint64_t)1 << c->width : 0; /* 0: 2^64 */
  *domain = codes + (c->validity.handle != NULL);
  if (codes == 0 && !c->no_codes && c->width == 64)
    return ps_set_error(ctx, PS_ERR_LIMIT,
                        "GROUP BY key %" PRIu32
                        " (%s, 64-bit codes%s) has 2^64 or more possible keys; at most "
                        "2^64 - 2 are supported",
                        k, ps_type_name(c->type), c->validity.handle ? ", nullable" : "");
  if (*domain == 0) *domain = 1; /* an empty dictionary: every valid row is corrupt, the slot never used */
  return PS_OK;
}

static ps_status create_checked(ps_context *ctx, const ps_query_desc *d, ps_query *q) {
  if (d->struct_size < offsetof(ps_query_desc, key_fn))
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                        "desc->struct_size is %" PRIu32
                        "; expected %zu (call "
                        "ps_query_desc_init)",
                        d->struct_size, sizeof *d);
  const bool has_key_fns = d->struct_size >= sizeof *d;
  q->rows = d->rows;
  if (d->where) {
    PS_TRY(ps_check_expr(ctx, d->where));
    PS_TRY(check_rows(ctx, d->rows, d->where->rows, "where", 0));
    q->where = d->where;
    /* The WHERE runs inside the query's pass: its column slots come first,
     * the values' and keys' columns join them. */
    PS_TRY(ps_expr_prepare(ctx, d->where));
    const ps_lowered *low = d->where->lowered;
    for (uint32_t i = 0; i < low->prog.n_cols; i++) {
      q->cols[i] = low->cols[i];
      q->prog.cols[i] = low->prog.cols[i];
      q->prog.cols[i].data_bytes = q->prog.cols[i].validity_bytes = 0; /* per chunk */
    }
    q->prog.n_cols = low->prog.n_cols;
    /* Where each AND's and OR's right operand starts: subtrees of a postfix
     * program, from a stack of their first instructions. */
    uint32_t first[PS_MAX_INSNS], n = 0;
    _Static_assert(PS_MAX_INSNS <= 64, "one bit per instruction");
    for (uint32_t i = 0; i < low->prog.n_insns; i++) {
      uint32_t op = low->prog.insns[i].op;
      if (op == PS_OP_AND || op == PS_OP_OR) {
        uint32_t right = first[--n];
        if (op == PS_OP_AND)
          q->where_and_right |= (uint64_t)1 << right;
        else
          q->where_or_right |= (uint64_t)1 << right;
      } else if (op != PS_OP_NOT) {
        first[n++] = i;
      }
    }
  }
  if (d->n_aggs < 1 || d->n_aggs > PS_QUERY_MAX_AGGS)
    return ps_set_error(ctx, d->n_aggs ? PS_ERR_LIMIT : PS_ERR_INVALID_ARGUMENT,
                        "desc->n_aggs is %" PRIu32 "; expected 1..%d", d->n_aggs, PS_QUERY_MAX_AGGS);
  if (!d->aggs) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "desc->aggs is NULL");
  if (d->n_keys > PS_QUERY_MAX_KEYS)
    return ps_set_error(ctx, PS_ERR_LIMIT, "desc->n_keys is %" PRIu32 "; at most %d GROUP BY columns", d->n_keys,
                        PS_QUERY_MAX_KEYS);
  qlower L = {ctx, q, 0, 0};
  ps_vprog *p = &q->prog;
  /* keys first: their slots, domains and strides. Up to
   * PS_QUERY_MAX_GROUPS possible keys the group is the key itself (a dense
   * plan); past it the run numbers the keys it finds (a hashed plan). */
  uint64_t groups = 1;
  for (uint32_t k = 0; k < d->n_keys; k++) {
    const ps_column *c = d->keys[k];
    if (!c) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "desc->keys[%" PRIu32 "] is NULL", k);
    if (c->ctx != ctx)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "desc->keys[%" PRIu32 "] belongs to another context", k);
    PS_TRY(check_rows(ctx, d->rows, c->n, "key", k));
    uint64_t dom;
    const uint32_t fn = has_key_fns ? d->key_fn[k] : PS_KEY_VALUE;
    if (fn == PS_KEY_VALUE)
      PS_TRY(key_domain(ctx, c, k, &dom));
    else
      PS_TRY(ps_query_key_fn_lower(ctx, c, k, fn, d->key_day_units[k], &p->key_fn[k], &dom));
    if (__builtin_mul_overflow(groups, dom, &groups) || groups == UINT64_MAX)
      return ps_set_error(ctx, PS_ERR_LIMIT,
                          "GROUP BY keys 0 (%s, %" PRIu64 " possible keys) and 1 (%s, %" PRIu64
                          " possible keys) make 2^64 - 1 or more possible keys; at most 2^64 - 2 are supported",
                          ps_type_name(d->keys[0]->type), p->key_domain[0], ps_type_name(c->type), dom);
    PS_TRY(slot_of(&L, (ps_column *)c, &p->key_slot[k]));
    p->key_domain[k] = dom;
    q->keys[k] = c;
    q->key_fns[k] = fn;
  }
  p->n_keys = d->n_keys;
  if (groups > PS_QUERY_MAX_GROUPS) {
    p->group_slots = 1; /* hashed: the run sizes its table and counts its groups */
    p->n_groups = 0;
  } else {
    p->n_groups = (uint32_t)groups;
  }
  for (uint32_t k = 0; k < d->n_keys; k++) {
    uint64_t stride = 1;
    for (uint32_t j = k + 1; j < d->n_keys; j++) stride *= p->key_domain[j];
    p->key_stride[k] = stride;
  }
  /* aggregates */
  for (uint32_t a = 0; a < d->n_aggs; a++) {
    const ps_agg *g = &d->aggs[a];
    if ((unsigned)g->kind < PS_AGG_COUNT_STAR || (unsigned)g->kind > PS_AGG_AVG)
      return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "desc->aggs[%" PRIu32 "].kind is %d; expected PS_AGG_*", a,
                          (int)g->kind);
    if (g->kind == PS_AGG_COUNT_STAR && g->value)
      return ps_set_error(ctx, PS_ERR_TYPE_MISMATCH, "desc->aggs[%" PRIu32 "] is COUNT(*) but has a value", a);
    if (g->kind != PS_AGG_COUNT_STAR && !g->value)
      return ps_set_error(ctx, PS_ERR_TYPE_MISMATCH, "desc->aggs[%" PRIu32 "] is %s without a value", a,
                          ps_agg_name(g->kind));
    q->kinds[a] = g->kind;
    p->aggs[a].first = p->n_insns;
    if (g->value) {
      if (g->value->ctx != ctx)
        return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "desc->aggs[%" PRIu32 "].value belongs to another context",
                            a);
      const ps_column *fc = mapped_float_in(g->value);
      const bool bare = g->value->kind == PS_VALUE_COLUMN;
      /* The codes of a lossless float column are monotone in its values but
       * not proportional to them: MIN, MAX and COUNT of the column work on
       * codes, SUM and AVG on its values (PS_VOP_FCOL), arithmetic on them
       * in doubles (lower_float_arith). */
      if (fc && bare && (g->kind == PS_AGG_MIN || g->kind == PS_AGG_MAX)) q->agg_fcol[a] = fc;
      if (g->value->has_rows) PS_TRY(check_rows(ctx, d->rows, g->value->rows, "aggregate", a));
      q->scales[a] = g->value->scale;
      L.agg = a;
      L.depth = 0;
      if (fc && bare && (g->kind == PS_AGG_SUM || g->kind == PS_AGG_AVG))
        PS_TRY(lower_float_sum(&L, g->value->col, a));
      else if (fc && !bare)
        PS_TRY(lower_float_arith(&L, g->value, g->kind, a));
      else
        PS_TRY(lower_value(&L, g->value, g->value->scale));
      if (q->selection) { /* CASE WHEN selected THEN value END */
        uint32_t sel = 0;
        PS_TRY(pred_of(&L, NULL, &sel));
        PS_TRY(emit(&L, PS_VOP_NULL, 0, 0, 1));
        PS_TRY(emit(&L, PS_VOP_CASE, sel, 0, -1));
      }
    }
    p->aggs[a].count = p->n_insns - p->aggs[a].first;
  }
  p->n_aggs = d->n_aggs;
  p->n_accs = 1 + d->n_aggs;
  p->derived_counts = 0;
  for (uint32_t a = 0; a < p->n_aggs; a++)
    if (ps_q_agg_never_null(p, a)) p->derived_counts |= 1u << a;
  return value_aux_make(ctx, q);
}

ps_status ps_query_create(ps_context *ctx, const ps_query_desc *desc, ps_query **out) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!desc) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "desc is NULL");
  if (!out) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "out is NULL");
  ps_query *q = ps_calloc_ctx(ctx, 1, sizeof *q);
  if (!q) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a query");
  q->ctx = ctx;
  ps_status st = ctx->group ? ps_group_query_create(ctx, desc, q) : create_checked(ctx, desc, q);
  if (st != PS_OK) {
    ps_buffer_destroy(q->value_aux_dev);
    ps_host_free(ctx, q->value_aux);
    ps_host_free(ctx, q);
    return st;
  }
  *out = q;
  return PS_OK;
}

void ps_query_destroy(ps_query *q) {
  if (!q) return;
  ps_group_query_free(q);
  ps_buffer_destroy(q->acc_dev);
  ps_buffer_destroy(q->value_aux_dev);
  ps_host_free(q->ctx, q->value_aux);
  ps_host_free(q->ctx, q);
}

/* ---- running ---------------------------------------------------------------- */

static uint64_t bitmap_words_bytes(uint64_t n) { return (n + 31) / 32 * 4; }

/* The run of a query's rows from r0 (at most to the end of r0's chunk of
 * `step` rows): its pruning state, and its end in *e. */
static int query_run(const ps_prune_plan *plan, uint64_t r0, uint64_t rows, uint64_t step, uint64_t *e) {
  const uint64_t end = rows - r0 < step ? rows : (r0 / step + 1) * step;
  if (!plan) return *e = end, PS_PRUNE_MAYBE;
  return ps_prune_state(plan, r0, end, e);
}

/* The message of a value not representable on row `row` in aggregate a
 * (a lossless float's SUM or AVG). */
static void unrep_message(const ps_query *q, uint64_t row, uint32_t a, char msg[PS_ERRMSG_SIZE]) {
  char label[PS_COLUMN_LABEL_SIZE];
  if (a < PS_QMAX_AGGS && q->agg_fexpr[a]) {
    const ps_agg_kind k = q->kinds[a];
    if (k == PS_AGG_SUM || k == PS_AGG_AVG)
      snprintf(msg, PS_ERRMSG_SIZE,
               "aggregate %" PRIu32 " (%s of arithmetic on float %s): row %" PRIu64
               "'s value is infinite, NaN or has a bit below 2^%" PRId32
               ", the unit of its exact sum (chosen for values up to %.17g)",
               a, ps_agg_name(k), ps_column_label(q->agg_fexpr[a], label), row, q->fsum_unit[a], q->fsum_largest[a]);
    else
      snprintf(msg, PS_ERRMSG_SIZE,
               "aggregate %" PRIu32 " (%s of arithmetic on float %s): row %" PRIu64 "'s value is NaN", a,
               ps_agg_name(k), ps_column_label(q->agg_fexpr[a], label), row);
    return;
  }
  const ps_column *c = a < PS_QMAX_AGGS ? q->agg_fsum[a] : NULL;
  if (!c) {
    snprintf(msg, PS_ERRMSG_SIZE, "aggregate %" PRIu32 ": row %" PRIu64 "'s value is not representable", a, row);
    return;
  }
  snprintf(msg, PS_ERRMSG_SIZE,
           "aggregate %" PRIu32 " (%s of float %s): row %" PRIu64
           " holds an infinity or a value with a bit below 2^%" PRId32
           ", the unit of its exact sum (the unit keeps the column's values up to %.17g in 126 bits: values more "
           "than 125 binary orders of magnitude apart cannot be summed exactly)",
           a, ps_agg_name(q->kinds[a]), ps_column_label(c, label), row, q->fsum_unit[a], q->fsum_largest[a]);
}

/* Whether a call waits for the device once (ps_backend_ops.query_collect). */
static bool query_waits_once(const ps_context *ctx) {
  return ctx->ops->query_collect != NULL && !ps_context_internal_options(ctx)->query_wait_per_chunk;
}

/* The chunks of a call whose status words wait on the device
 * (ps_query_args.defer_status), and the first error of each kind they
 * reported so far. The errors rank as when each chunk is read at once: a
 * corrupt code in any chunk before an overflow in an earlier one, an
 * overflow before a value not representable. */
typedef struct qdeferred {
  uint32_t n;
  uint64_t row_begin[PS_QUERY_STATUS_SLOTS];
  uint32_t status[PS_QUERY_STATUS_SLOTS * PS_Q_STATUS_WORDS];
  ps_status overflow, unrep;
  char overflow_msg[PS_ERRMSG_SIZE], unrep_msg[PS_ERRMSG_SIZE];
} qdeferred;

/* Waits for the device once: the deferred chunks' status words and, where
 * acc_bytes > 0, the accumulators into acc_host. */
static ps_status collect_deferred(ps_context *ctx, const ps_query *q, const ps_vprog *prog, qdeferred *d,
                                  ps_devmem acc, void *acc_host, uint64_t acc_bytes) {
  const uint32_t n = d->n;
  d->n = 0;
  PS_TRY(ctx->ops->query_collect(ctx->be, n, d->status, acc, acc_host, acc_bytes));
  for (uint32_t k = 0; k < n; k++) {
    const uint32_t *w = d->status + (size_t)k * PS_Q_STATUS_WORDS;
    if (w[0] != UINT32_MAX)
      return ps_set_error(ctx, PS_ERR_CORRUPT_DATA,
                          "row %" PRIu64 " of a column the query reads holds a code outside its range",
                          d->row_begin[k] + w[0]);
  }
  for (uint32_t k = 0; k < n; k++) {
    const uint32_t *w = d->status + (size_t)k * PS_Q_STATUS_WORDS;
    if (d->overflow == PS_OK && w[1] != UINT32_MAX)
      d->overflow = ps_set_error_buf(d->overflow_msg, sizeof d->overflow_msg, PS_ERR_OVERFLOW,
                                     "row %" PRIu64 ": an aggregate's value does not fit %d digits",
                                     d->row_begin[k] + w[1], PS_QUERY_MAX_DIGITS);
    uint64_t row = 0;
    uint32_t agg = 0;
    if (d->unrep == PS_OK && ps_query_status_unrep(prog, w, &row, &agg)) {
      d->unrep = PS_ERR_NOT_REPRESENTABLE;
      unrep_message(q, d->row_begin[k] + row, agg, d->unrep_msg);
    }
  }
  return PS_OK;
}

static ps_status run_chunks_with(ps_context *ctx, ps_query *q, const ps_vprog *base, ps_buffer *bits, ps_buffer *acc,
                                 ps_buffer *groups, uint64_t shown_from, uint64_t shown_total, void *acc_host,
                                 uint64_t acc_bytes, bool *acc_read, qdeferred *deferred);

/* Runs q with value program `base` (q->prog, or a hashed plan's pass of it)
 * over every chunk; groups: a hashed plan's group table. Progress: the rows
 * done are shown_from plus this pass's, of shown_total (a hashed plan's
 * passes add up). acc_host (acc_bytes of it): where the backend defers the
 * chunks' status words (query_collect), the accumulators are read there
 * with them, in the call's one wait for the device; *acc_read says whether
 * they were. */
static ps_status run_chunks(ps_context *ctx, ps_query *q, const ps_vprog *base, ps_buffer *bits, ps_buffer *acc,
                            ps_buffer *groups, uint64_t shown_from, uint64_t shown_total, void *acc_host,
                            uint64_t acc_bytes, bool *acc_read) {
  if (acc_read) *acc_read = false;
  qdeferred *deferred = NULL; /* one wait per call (and per PS_QUERY_STATUS_SLOTS chunks), where the backend can */
  if (query_waits_once(ctx) && !(deferred = ps_calloc_ctx(ctx, 1, sizeof *deferred)))
    return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a query's status words");
  const ps_status st =
      run_chunks_with(ctx, q, base, bits, acc, groups, shown_from, shown_total, acc_host, acc_bytes, acc_read, deferred);
  ps_host_free(ctx, deferred);
  return st;
}

static ps_status run_chunks_with(ps_context *ctx, ps_query *q, const ps_vprog *base, ps_buffer *bits, ps_buffer *acc,
                                 ps_buffer *groups, uint64_t shown_from, uint64_t shown_total, void *acc_host,
                                 uint64_t acc_bytes, bool *acc_read, qdeferred *deferred) {
  const uint64_t bm = bitmap_words_bytes(q->rows);
  uint32_t nb = 0;
  ps_devmem preds[PS_QMAX_PREDS];
  for (uint32_t i = 0; i < q->prog.n_preds; i++) {
    if (!q->preds[i]) { /* the selection of an internal query (ps_query_float_sum) */
      preds[i] = q->selection->mem;
      preds[i].offset += q->selection_offset;
      continue;
    }
    preds[i] = bits->mem;
    preds[i].offset += nb++ * bm;
    ctx->progress_mute++;
    ps_status st = ps_run_program(ctx, q->preds[i], preds[i], PS_NO_MEM, PS_NO_MEM, NULL);
    ctx->progress_mute--;
    PS_TRY(st);
  }
  ps_status overflow = PS_OK, unrep = PS_OK;
  char overflow_msg[PS_ERRMSG_SIZE], unrep_msg[PS_ERRMSG_SIZE];
  /* Blocks the WHERE's zone maps decide: ALL FALSE ones are not run, ALL
   * TRUE ones run without the WHERE (so without reading its columns). Every
   * column the query reads must have clean zone maps, so that no block
   * skipped hides a corrupt code the run would report. The accumulators
   * sum over the calls exactly as over chunks. */
  const ps_prune_plan *plan = NULL;
  if (q->where) PS_TRY(ps_prune_plan_of(ctx, q->where, q->cols, q->prog.n_cols, &plan));
  /* The rows the run evaluates in all, by which each chunk's launch is
   * judged for a specialized kernel (ps_query_specialize): a query split
   * into runs by its zone maps, or into chunks by streaming, is one run. */
  ctx->query_run_rows = plan ? 0 : q->rows;
  for (uint64_t r0 = 0, e = 0; plan && r0 < q->rows; r0 = e)
    if (ps_prune_state(plan, r0, q->rows, &e) != PS_PRUNE_FALSE) ctx->query_run_rows += e - r0;
  /* Chunks start where every column's chunk may (ps_chunk_step); so do the
   * plan's runs (ps_prune_plan_of). */
  const uint64_t step = ps_chunk_step(ctx, q->cols, q->prog.n_cols);
  ps_stage_forget(ctx);
  for (uint64_t r0 = 0, e = 0; r0 < q->rows; r0 = e) {
    int state = query_run(plan, r0, q->rows, step, &e);
    if (state == PS_PRUNE_FALSE) {
      ctx->scan_stats.rows_skipped += e - r0;
      ps_progress(ctx, shown_from + e, shown_total);
      continue;
    }
    ps_vprog prog = *base;
    ps_query_args a;
    memset(&a, 0, sizeof a);
    a.prog = &prog;
    a.rows = e - r0;
    a.row_begin = r0;
    ctx->scan_stats.rows_scanned += state == PS_PRUNE_MAYBE ? a.rows : 0;
    ctx->scan_stats.rows_all_true += state == PS_PRUNE_TRUE ? a.rows : 0;
    for (uint32_t i = 0; i < prog.n_cols; i++)
      if ((prog.read_slots >> i & 1) || (state == PS_PRUNE_MAYBE && q->where && i < q->where->lowered->prog.n_cols))
        ctx->scan_stats.bytes_read += ps_scan_bytes(q->cols[i], a.rows);
    ps_stage_begin(ctx);
    ps_status staged = PS_OK;
    a.for_only = 1;
    for (uint32_t i = 0; staged == PS_OK && i < prog.n_cols; i++) {
      staged = ps_column_chunk(ctx, q->cols[i], r0, a.rows, &prog.cols[i], &a.data[i], &a.validity[i]);
      if (prog.cols[i].encoding != PS_ENC_FOR) a.for_only = 0;
    }
    /* the next run that is read: its copies overlap this chunk's kernel */
    uint64_t nr = e, ne = e;
    while (staged == PS_OK && nr < q->rows && query_run(plan, nr, q->rows, step, &ne) == PS_PRUNE_FALSE) nr = ne;
    if (staged == PS_OK && nr < q->rows) staged = ps_stage_prefetch(ctx, q->cols, q->prog.n_cols, nr, ne - nr);
    if (staged != PS_OK) {
      ctx->query_run_rows = 0;
      return staged;
    }
    ps_program where_prog;
    if (q->where && state == PS_PRUNE_MAYBE) {
      const ps_lowered *low = q->where->lowered;
      where_prog = low->prog;
      for (uint32_t i = 0; i < where_prog.n_cols; i++) where_prog.cols[i] = prog.cols[i];
      a.where_prog = &where_prog;
      if (q->where->aux_dev) a.where_aux = q->where->aux_dev->mem;
      a.where_aux_host = low->aux;
      a.where_and_right = q->where_and_right;
      a.where_or_right = q->where_or_right;
    }
    for (uint32_t i = 0; i < prog.n_preds; i++) {
      a.preds[i] = preds[i];
      a.preds[i].offset += r0 / 8;
    }
    if (acc) a.acc = acc->mem;
    if (groups) a.groups = groups->mem;
    if (q->value_aux_dev) a.value_aux = q->value_aux_dev->mem;
    a.value_aux_host = q->value_aux;
    ps_query_fault fault = {0, 0};
    a.fault = &fault;
    for (uint32_t i = 0; i < prog.n_aggs; i++) {
      static const uint64_t fields[] = {[PS_AGG_COUNT_STAR] = PS_QF_COUNT,      [PS_AGG_COUNT] = PS_QF_COUNT,
                                        [PS_AGG_SUM] = PS_QF_COUNT | PS_QF_SUM, [PS_AGG_MIN] = PS_QF_COUNT | PS_QF_MIN,
                                        [PS_AGG_MAX] = PS_QF_COUNT | PS_QF_MAX, [PS_AGG_AVG] = PS_QF_COUNT | PS_QF_SUM};
      a.agg_fields |= fields[q->kinds[i]] << (4 * i);
    }
    ps_status st = PS_OK;
    if (deferred && deferred->n == PS_QUERY_STATUS_SLOTS)
      st = collect_deferred(ctx, q, base, deferred, PS_NO_MEM, NULL, 0);
    if (deferred) {
      a.defer_status = 1;
      a.status_slot = deferred->n;
      deferred->row_begin[deferred->n++] = r0;
    }
    if (st == PS_OK) st = ctx->ops->query(ctx->be, &a);
    ps_status released = ps_stage_end(ctx);
    if (st == PS_OK) st = released;
    if (st == PS_ERR_OVERFLOW && overflow == PS_OK) {
      /* a corrupt code in a later chunk outranks it: keep looking */
      overflow = st;
      memcpy(overflow_msg, ctx->last_error, sizeof overflow_msg);
    } else if (st == PS_ERR_NOT_REPRESENTABLE && unrep == PS_OK) {
      /* so do a corrupt code and an overflow */
      unrep = st;
      unrep_message(q, r0 + fault.row, fault.agg, unrep_msg);
    } else if (st != PS_OK && st != PS_ERR_OVERFLOW && st != PS_ERR_NOT_REPRESENTABLE) {
      ctx->query_run_rows = 0;
      return st;
    }
    ps_progress(ctx, shown_from + e, shown_total);
  }
  ctx->query_run_rows = 0;
  if (deferred) {
    const bool read = acc && acc_host && acc_bytes;
    ps_status st = collect_deferred(ctx, q, base, deferred, read ? acc->mem : PS_NO_MEM, read ? acc_host : NULL,
                                    read ? acc_bytes : 0);
    if (st != PS_OK) return st;
    if (acc_read) *acc_read = read;
    if (deferred->overflow != PS_OK && overflow == PS_OK) {
      overflow = deferred->overflow;
      memcpy(overflow_msg, deferred->overflow_msg, sizeof overflow_msg);
    }
    if (deferred->unrep != PS_OK && unrep == PS_OK) {
      unrep = deferred->unrep;
      memcpy(unrep_msg, deferred->unrep_msg, sizeof unrep_msg);
    }
  }
  if (overflow != PS_OK) {
    memcpy(ctx->last_error, overflow_msg, sizeof overflow_msg);
    return overflow;
  }
  if (unrep != PS_OK) return ps_set_error(ctx, unrep, "%s", unrep_msg);
  return PS_OK;
}

static void acc_init(ps_qacc *acc, uint64_t n) {
  for (uint64_t i = 0; i < n; i++) {
    memset(&acc[i], 0, sizeof acc[i]);
    acc[i].min_lo = PS_QACC_MIN_INIT_LO;
    acc[i].min_hi = PS_QACC_MIN_INIT_HI;
    acc[i].max_lo = PS_QACC_MAX_INIT_LO;
    acc[i].max_hi = PS_QACC_MAX_INIT_HI;
  }
}

/* ---- hashed GROUP BY plans -------------------------------------------------------- */

static uint64_t pow2_at_least(uint64_t n) {
  uint64_t p = 1;
  while (p < n) p <<= 1;
  return p;
}

static int cmp_u64(const void *x, const void *y) {
  const uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  return a < b ? -1 : a > b;
}

/* Sorts keys[0..n) ascending: a least-significant-digit radix sort, a byte
 * at a time and only over the bytes the largest key has (a hashed plan's keys
 * are a few bytes wide, and a million of them is common), in scratch memory
 * of n keys; qsort where that memory cannot be had. */
static void sort_keys(ps_context *ctx, uint64_t *keys, uint64_t n) {
  uint64_t *tmp = n > 64 ? ps_host_alloc(ctx, (size_t)(n * sizeof *keys)) : NULL;
  if (!tmp) {
    qsort(keys, (size_t)n, sizeof *keys, cmp_u64);
    return;
  }
  uint64_t max = 0;
  for (uint64_t i = 0; i < n; i++) max |= keys[i];
  uint64_t *from = keys, *to = tmp;
  for (unsigned shift = 0; shift < 64 && (max >> shift) != 0; shift += 8) {
    uint64_t count[256] = {0};
    for (uint64_t i = 0; i < n; i++) count[from[i] >> shift & 0xFF]++;
    if (count[from[0] >> shift & 0xFF] == n) continue; /* one digit: already in order by it */
    uint64_t at = 0;
    for (unsigned d = 0; d < 256; d++) {
      const uint64_t c = count[d];
      count[d] = at;
      at += c;
    }
    for (uint64_t i = 0; i < n; i++) to[count[from[i] >> shift & 0xFF]++] = from[i];
    uint64_t *swap = from;
    from = to;
    to = swap;
  }
  if (from != keys) memcpy(keys, from, (size_t)(n * sizeof *keys));
  ps_host_free(ctx, tmp);
}

/* Slots of the first keys pass's table: twice the rows, at most this many
 * (64 MB of table, room for 2^21 groups in one pass); the table grows (and
 * the pass runs again) where the keys fill more than half of it. */
#define PS_QUERY_FIRST_GROUP_SLOTS (UINT64_C(1) << 22)

/* A device buffer of the group table's 2 * slots + 1 words from host words t. */
static ps_status table_buffer(ps_context *ctx, const uint64_t *t, uint64_t slots, ps_buffer **out) {
  const uint64_t bytes = (2 * slots + 1) * sizeof *t;
  ps_status st = ps_buffer_create(ctx, bytes, out);
  if (st == PS_ERR_OUT_OF_MEMORY)
    return ps_set_error(
        ctx, st, "GROUP BY: a group table of %" PRIu64 " slots (%" PRIu64 " bytes) does not fit in device memory",
        slots, bytes);
  if (st == PS_OK) st = ps_buffer_write(ctx, *out, 0, t, bytes);
  return st;
}

/* The distinct group keys of q's selected rows, ascending, in *keys (host
 * memory the caller frees; *n of them), by the keys pass (PS_QMODE_KEYS)
 * into a table that grows until its keys fill at most half of it. */
static ps_status collect_keys(ps_context *ctx, ps_query *q, ps_buffer *bits, uint64_t **keys, uint64_t *n) {
  const uint64_t limit = ctx->max_groups;
  uint64_t slots = pow2_at_least(2 * q->rows);
  if (slots > PS_QUERY_FIRST_GROUP_SLOTS) slots = PS_QUERY_FIRST_GROUP_SLOTS;
  if (slots < 64) slots = 64;
  if (ctx->options.query_group_slots) slots = (uint64_t)1 << ctx->options.query_group_slots;
  *keys = NULL;
  *n = 0;
  /* the first pass is the first half of the call's progress; a pass run
   * again over a larger table reports none (progress holds at half) */
  for (bool again = false;; again = true) {
    uint64_t *t = ps_host_alloc(ctx, (size_t)((2 * slots + 1) * sizeof *t));
    if (!t) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "GROUP BY: a group table of %" PRIu64 " slots", slots);
    memset(t, 0xFF, (size_t)(2 * slots * sizeof *t));
    t[2 * slots] = 0;
    ps_buffer *table = NULL;
    ps_status st = table_buffer(ctx, t, slots, &table);
    ps_vprog prog = q->prog;
    prog.group_pass = 1;
    prog.group_slots = slots;
    prog.n_groups = 0;
    ctx->progress_mute += again;
    if (st == PS_OK) st = run_chunks(ctx, q, &prog, bits, NULL, table, 0, 2 * q->rows, NULL, 0, NULL);
    ctx->progress_mute -= again;
    if (st == PS_OK) st = ctx->ops->mem_read(ctx->be, t, table->mem, (2 * slots + 1) * sizeof *t);
    ps_buffer_destroy(table);
    uint64_t found = 0;
    for (uint64_t i = 0; st == PS_OK && i < slots; i++)
      if (t[i] != PS_Q_NO_KEY) t[found++] = t[i];
    const bool dropped = t[2 * slots] != 0;
    if (st == PS_OK && found > limit)
      st = ps_set_error(ctx, PS_ERR_LIMIT,
                        "GROUP BY has more than %" PRIu64
                        " groups (options.max_groups; the selected rows hold at "
                        "least %" PRIu64 " distinct keys of key 0's %" PRIu64 " possible ones%s)",
                        limit, found, q->prog.key_domain[0], q->prog.n_keys > 1 ? " times key 1's" : "");
    if (st == PS_OK && (dropped || found > slots / 2)) {
      ps_host_free(ctx, t);
      const uint64_t grown = pow2_at_least(4 * found > 4 * slots ? 4 * found : 4 * slots);
      if (grown > pow2_at_least(2 * limit) * 2)
        return ps_set_error(ctx, PS_ERR_LIMIT,
                            "GROUP BY: the group table of %" PRIu64 " slots overflowed with %" PRIu64
                            " groups (options.max_groups is %" PRIu64 ")",
                            slots, found, limit);
      slots = grown;
      continue;
    }
    if (st != PS_OK) {
      ps_host_free(ctx, t);
      return st;
    }
    sort_keys(ctx, t, found);
    *keys = t;
    *n = found;
    return PS_OK;
  }
}

/* The accumulating pass's table of the n sorted keys: each key's number is
 * its rank (*slots_out slots, written to *out). */
static ps_status number_keys(ps_context *ctx, const uint64_t *keys, uint64_t n, uint64_t *slots_out, ps_buffer **out) {
  const uint64_t slots = pow2_at_least(2 * n > 2 ? 2 * n : 2);
  uint64_t *t = ps_host_alloc(ctx, (size_t)((2 * slots + 1) * sizeof *t));
  if (!t) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "GROUP BY: a group table of %" PRIu64 " slots", slots);
  memset(t, 0xFF, (size_t)(2 * slots * sizeof *t));
  t[2 * slots] = 0;
  for (uint64_t g = 0; g < n; g++) {
    uint64_t i = ps_q_group_hash(keys[g], slots);
    while (t[i] != PS_Q_NO_KEY) i = (i + 1) & (slots - 1); /* at most half full: a slot is free */
    t[i] = keys[g];
    t[slots + i] = g;
  }
  ps_status st = table_buffer(ctx, t, slots, out);
  ps_host_free(ctx, t);
  *slots_out = slots;
  return st;
}

static ps_status run_query(ps_context *ctx, ps_query *q, bool partial, ps_query_result **out) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!q) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "query is NULL");
  if (q->ctx != ctx) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "query belongs to another context");
  if (!out) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "out is NULL");
  if (!ctx->ops->query)
    return ps_set_error(ctx, PS_ERR_UNSUPPORTED, "the %s backend does not implement queries", ctx->ops->name);
  ps_vprog prog = q->prog;
  ps_buffer *acc_dev = NULL, *bits = NULL, *table = NULL;
  uint64_t *keys = NULL;
  ps_qacc *acc = NULL;
  ps_status st = PS_OK;
  ps_query_result *res = ps_calloc_ctx(ctx, 1, sizeof *res);
  if (!res) st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a query result");
  const uint32_t computed_preds = q->prog.n_preds - (q->selection ? 1 : 0); /* the selection is given */
  if (st == PS_OK && q->rows && computed_preds)
    st = ps_buffer_create(ctx, computed_preds * bitmap_words_bytes(q->rows), &bits);
  const bool hashed = prog.group_slots != 0;
  const uint64_t shown_total = hashed ? 2 * q->rows : q->rows;
  if (st == PS_OK && hashed) { /* hashed: the keys, then their numbers */
    uint64_t n = 0;
    if (q->rows) st = collect_keys(ctx, q, bits, &keys, &n);
    prog.n_groups = (uint32_t)n;
    if (st == PS_OK && n) st = number_keys(ctx, keys, n, &prog.group_slots, &table);
  }
  const uint64_t n_acc = (uint64_t)prog.n_groups * prog.n_accs;
  if (st == PS_OK) {
    acc = ps_calloc_ctx(ctx, n_acc ? n_acc : 1, sizeof *acc);
    if (!acc)
      st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating %" PRIu64 " accumulators (%" PRIu32 " groups)", n_acc,
                        prog.n_groups);
  }
  if (st == PS_OK) acc_init(acc, n_acc);
  if (st == PS_OK && q->rows && n_acc && q->acc_dev && q->acc_dev->size < n_acc * sizeof *acc) {
    ps_buffer_destroy(q->acc_dev);
    q->acc_dev = NULL;
  }
  if (st == PS_OK && q->rows && n_acc) {
    if (q->acc_dev)
      acc_dev = q->acc_dev;
    else
      st = ps_buffer_create(ctx, n_acc * sizeof *acc, &acc_dev);
    if (st == PS_OK) q->acc_dev = acc_dev;
    if (st == PS_ERR_OUT_OF_MEMORY)
      st = ps_set_error(ctx, st,
                        "GROUP BY: %" PRIu32 " groups' accumulators (%" PRIu64 " bytes) do not fit in device memory",
                        prog.n_groups, n_acc * sizeof *acc);
    /* The initial values need no wait of their own: acc stays as it is until
     * the call's last wait for the device, which reads the results into it. */
    const bool async = st == PS_OK && query_waits_once(ctx) && ctx->ops->mem_write_async != NULL;
    if (async)
      st = ctx->ops->mem_write_async(ctx->be, acc_dev->mem, acc, n_acc * sizeof *acc);
    else if (st == PS_OK)
      st = ps_buffer_write(ctx, acc_dev, 0, acc, n_acc * sizeof *acc);
    bool acc_read = false;
    if (st == PS_OK)
      st = run_chunks(ctx, q, &prog, bits, acc_dev, table, hashed ? q->rows : 0, shown_total, acc,
                      n_acc * sizeof *acc, &acc_read);
    if (st == PS_OK && !acc_read) st = ctx->ops->mem_read(ctx->be, acc, acc_dev->mem, n_acc * sizeof *acc);
    if (async && st != PS_OK) /* nothing may read acc once it is freed */
      (void)ctx->ops->query_collect(ctx->be, 0, NULL, PS_NO_MEM, NULL, 0);
    /* the counts a kernel may leave (ps_vprog.derived_counts): the group's rows */
    for (uint64_t g = 0; st == PS_OK && prog.derived_counts && g < prog.n_groups; g++)
      for (uint32_t a = 0; a < prog.n_aggs; a++)
        if (prog.derived_counts >> a & 1u) acc[g * prog.n_accs + 1 + a].count = acc[g * prog.n_accs].count;
  }
  /* a hashed plan that found no group has no second pass */
  if (st == PS_OK && q->rows && !n_acc) ps_progress(ctx, shown_total, shown_total);
  if (st == PS_OK) {
    res->ctx = ctx;
    res->n_keys = q->prog.n_keys;
    res->n_aggs = q->prog.n_aggs;
    st = ps_query_finalize(ctx, q, &prog, keys, acc, partial, res);
  }
  ps_buffer_destroy(bits);
  ps_buffer_destroy(table);
  if (q->acc_dev && q->acc_dev->size > PS_QUERY_KEEP_ACC_BYTES) { /* a large GROUP BY's: not held between runs */
    ps_buffer_destroy(q->acc_dev);
    q->acc_dev = NULL;
  }
  ps_host_free(ctx, acc);
  ps_host_free(ctx, keys);
  if (st != PS_OK) {
    ps_query_result_destroy(res);
    return st;
  }
  /* A backend that recovered (a specialized build that failed, then the
   * generic kernel) may have left its message: the call succeeded. */
  ps_clear_error(ctx);
  *out = res;
  return PS_OK;
}

/* A context over several devices runs each device's query (multi.c), after
 * the checks of run_query. */
static ps_status run_group(ps_context *ctx, ps_query *q, bool partial, ps_query_result **out) {
  ps_clear_error(ctx);
  if (!q || !out) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s is NULL", q ? "out" : "query");
  if (q->ctx != ctx) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "query belongs to another context");
  *out = NULL;
  return ps_group_query_run(ctx, q, partial, out);
}

ps_status ps_query_run(ps_context *ctx, ps_query *q, ps_query_result **out) {
  if (ctx && ctx->group) return run_group(ctx, q, false, out);
  return run_query(ctx, q, false, out);
}

ps_status ps_query_run_partial(ps_context *ctx, ps_query *q, ps_query_result **out) {
  if (ctx && ctx->group) return run_group(ctx, q, true, out);
  return run_query(ctx, q, true, out);
}

ps_status ps_query_float_sum(ps_context *ctx, ps_column *col, const ps_buffer *selection, uint64_t selection_offset,
                             int32_t unit, uint64_t sum[4], uint64_t *count, bool *unrep) {
  memset(sum, 0, 4 * sizeof *sum);
  *count = 0;
  *unrep = false;
  ps_value *v = NULL;
  PS_TRY(ps_value_column(ctx, col, &v));
  const ps_agg agg = {PS_AGG_SUM, v};
  ps_query_desc d;
  ps_query_desc_init(&d);
  d.rows = col->n;
  d.n_aggs = 1;
  d.aggs = &agg;
  ps_query *q = ps_calloc_ctx(ctx, 1, sizeof *q);
  ps_status st = q ? PS_OK : ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a query");
  ps_query_result *res = NULL;
  if (st == PS_OK) {
    q->ctx = ctx;
    q->selection = selection;
    q->selection_offset = selection_offset;
    q->unit_forced = true;
    q->forced_unit = unit;
    q->state_only = true;
    st = create_checked(ctx, &d, q);
  }
  if (st == PS_OK) st = run_query(ctx, q, false, &res);
  if (st == PS_OK && res->n_groups == 1) {
    memcpy(sum, res->state[0].sum, 4 * sizeof *sum);
    *count = res->state[0].count;
  } else if (st == PS_ERR_NOT_REPRESENTABLE) {
    ps_clear_error(ctx);
    *unrep = true;
    st = PS_OK;
  } else if (st == PS_OK) {
    st = ps_set_error(ctx, PS_ERR_INTERNAL, "a float sum's query gave %" PRIu64 " groups", res->n_groups);
  }
  ps_query_result_destroy(res);
  ps_query_destroy(q);
  ps_value_destroy(v);
  return st;
}
