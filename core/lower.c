/* Lowering: a validated predicate tree becomes one flat program
 * (ps_program.h) that a backend evaluates in a single pass over the rows.
 *
 *  - a literal comparison on a FOR column becomes a code interval (with the
 *    column's reference subtracted; out-of-range literals fold to an empty or
 *    full interval); on float columns the interval ends are found by binary
 *    search over codes with the exact decode rule, so they agree with it;
 *  - string predicates are evaluated once per dictionary entry: a code
 *    interval on a sorted dictionary, else a bitmap over the codes in aux;
 *  - dictionary-vs-dictionary comparisons use rank tables into the merged
 *    sorted union of both dictionaries, built once per evaluation.
 */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "internal.h"
#include "like.h"

__extension__ typedef __int128 i128;

#define I128_BIG PS_I128_FAR /* beyond any column value */

typedef struct lowering {
  ps_context *ctx;
  ps_lowered *out;
  size_t aux_cap;
  uint32_t stack, max_stack; /* evaluation stack height after the instructions so far, and its peak */
} lowering;

/* ---- aux words -------------------------------------------------------------- */

static ps_status aux_reserve(lowering *L, uint64_t words, uint32_t *offset) {
  ps_program *p = &L->out->prog;
  uint64_t need = (uint64_t)p->aux_words + words;
  if (need > UINT32_MAX / 32)
    return ps_set_error(L->ctx, PS_ERR_LIMIT, "predicate tables need %" PRIu64 " words; at most %u", need,
                        UINT32_MAX / 32);
  if (need > L->aux_cap) {
    size_t cap = L->aux_cap ? L->aux_cap : 64;
    while (cap < need) cap *= 2;
    uint32_t *n = ps_calloc_ctx(L->ctx, cap, sizeof *n);
    if (!n) return ps_set_error(L->ctx, PS_ERR_OUT_OF_MEMORY, "allocating %zu words of predicate tables", cap);
    if (L->out->aux) memcpy(n, L->out->aux, (size_t)p->aux_words * sizeof *n);
    ps_host_free(L->ctx, L->out->aux);
    L->out->aux = n;
    L->aux_cap = cap;
  }
  *offset = p->aux_words;
  p->aux_words = (uint32_t)need;
  return PS_OK;
}

/* ---- columns and instructions -------------------------------------------- */

ps_prog_col ps_prog_col_of(const ps_column *c) {
  ps_prog_col pc;
  memset(&pc, 0, sizeof pc);
  pc.width = c->width;
  pc.scale = c->scale;
  pc.code_limit = c->code_limit;
  pc.reference = ps_type_is_unsigned(c->type) || c->type == PS_TYPE_STRING ? c->reference.u : (uint64_t)c->reference.i;
  pc.kind = c->type == PS_TYPE_FLOAT64   ? PS_KIND_FLOAT64
            : c->type == PS_TYPE_FLOAT32 ? PS_KIND_FLOAT32
            : ps_type_is_signed(c->type) ? PS_KIND_SIGNED
                                         : PS_KIND_UNSIGNED;
  if (c->fmap.map != PS_FLOAT_MAP_DECIMAL) {
    /* Mapped floats are plain monotone codes to every kernel; only the host
     * turns codes into values (float_map.c). */
    pc.kind = PS_KIND_UNSIGNED;
    pc.reference = 0;
    pc.scale = 0;
  }
  pc.flags = (c->validity.handle ? PS_COLF_VALIDITY : 0) | (c->no_codes ? PS_COLF_NO_CODES : 0);
  pc.encoding = (ps_u16)c->encoding; /* the one place a program learns how a column stores its codes */
  pc.data_bytes = c->data_size;
  pc.validity_bytes = c->validity_size;
  return pc;
}

uint64_t ps_chunk_step_multiple(ps_column *const *cols, uint32_t n) {
  uint64_t m = 32;
  for (uint32_t i = 0; i < n; i++)
    if (ps_chunk_row_multiple(cols[i]->encoding) > m) m = ps_chunk_row_multiple(cols[i]->encoding);
  return m;
}

uint64_t ps_chunk_step(const ps_context *ctx, ps_column *const *cols, uint32_t n) {
  const uint64_t m = ps_chunk_step_multiple(cols, n);
  uint64_t step = ctx->chunk_rows - ctx->chunk_rows % m;
  const uint64_t staged = ps_stage_rows(ctx, cols, n, m); /* host-resident columns fit a staging slot */
  if (staged < step) step = staged;
  return step ? step : m;
}

ps_status ps_column_chunk(ps_context *ctx, const ps_column *c, uint64_t r0, uint64_t rows, ps_prog_col *pc,
                          ps_devmem *data, ps_devmem *validity) {
  if (c->host) return ps_stage_column(ctx, c, r0, rows, pc, data, validity);
  const uint64_t skip = ps_chunk_data_offset(c->encoding, c->width, r0);
  pc->data_bytes = c->data_size - skip;
  *data = c->data;
  data->offset += skip;
  if (c->validity.handle) {
    pc->validity_bytes = c->validity_size - r0 / 8;
    *validity = c->validity;
    validity->offset += r0 / 8;
  }
  return PS_OK;
}

static ps_status slot_of(lowering *L, ps_column *c, uint32_t *slot) {
  ps_program *p = &L->out->prog;
  for (uint32_t i = 0; i < p->n_cols; i++)
    if (L->out->cols[i] == c) return *slot = i, PS_OK;
  if (p->n_cols == PS_MAX_COLS)
    return ps_set_error(L->ctx, PS_ERR_LIMIT, "the predicate reads more than %d distinct columns (PS_PREDICATE_MAX_COLUMNS)",
                        PS_MAX_COLS);
  uint32_t i = p->n_cols++;
  L->out->cols[i] = c;
  p->cols[i] = ps_prog_col_of(c);
  /* byte counts are per chunk: evaluate.c fills them */
  p->cols[i].data_bytes = p->cols[i].validity_bytes = 0;
  *slot = i;
  return PS_OK;
}

static ps_status emit(lowering *L, ps_insn insn) {
  ps_program *p = &L->out->prog;
  if (p->n_insns == PS_MAX_INSNS)
    return ps_set_error(L->ctx, PS_ERR_LIMIT,
                        "the predicate lowers to more than %d instructions (comparisons on one column joined by "
                        "AND, OR and NOT count as one; see PS_PREDICATE_MAX_INSTRUCTIONS)",
                        PS_MAX_INSNS);
  if (insn.op == PS_OP_AND || insn.op == PS_OP_OR) {
    L->stack--;
  } else if (insn.op != PS_OP_NOT && ++L->stack > L->max_stack) {
    L->max_stack = L->stack;
    if (L->max_stack > PS_MAX_STACK)
      return ps_set_error(L->ctx, PS_ERR_LIMIT, "the predicate needs an evaluation stack deeper than %d",
                          PS_MAX_STACK);
  }
  p->insns[p->n_insns++] = insn;
  return PS_OK;
}

/* An interval of codes, possibly negated, clamped to [0, limit]. Emitted in
 * the one canonical form (ps_program.h): lo <= hi <= limit; an empty
 * interval is the full range [0, limit] with the negation flipped. */
typedef struct interval {
  i128 lo, hi;
} interval;

static ps_status emit_range(lowering *L, ps_column *c, interval iv, bool negate) {
  ps_insn in = {0};
  in.op = PS_OP_RANGE;
  PS_TRY(slot_of(L, c, &in.col_a));
  i128 lim = (i128)c->code_limit;
  if (iv.lo < 0) iv.lo = 0;
  if (iv.hi > lim) iv.hi = lim;
  if (iv.lo > iv.hi) {
    in.lo = 0, in.hi = c->code_limit;
    negate = !negate;
  } else {
    in.lo = (uint64_t)iv.lo, in.hi = (uint64_t)iv.hi;
  }
  in.flags = negate ? PS_INSN_NEGATE : 0;
  return emit(L, in);
}

/* ---- numeric literals on FOR columns ---------------------------------------- */

double ps_decode_double(ps_type type, uint64_t reference, uint32_t scale, uint64_t code) {
  static const double pow10[] = PS_POW10_TABLE;
  double v;
  if (ps_type_is_unsigned(type)) return (double)(reference + code);
  if (ps_type_is_decimal(type)) return (double)(int64_t)(reference + code) / pow10[scale];
  if (ps_type_is_signed(type)) return (double)(int64_t)(reference + code);
  v = (double)(int64_t)(reference + code) / pow10[scale];
  if (type == PS_TYPE_FLOAT32) v = (double)(float)v;
  return v;
}

double ps_column_code_double(const ps_column *c, uint64_t code) {
  if (c->fmap.map != PS_FLOAT_MAP_DECIMAL) return ps_fmap_decode(&c->fmap, code);
  const uint64_t ref =
      ps_type_is_unsigned(c->type) || c->type == PS_TYPE_STRING ? c->reference.u : (uint64_t)c->reference.i;
  return ps_decode_double(c->type, ref, c->scale, code);
}

static i128 col_ref(const ps_column *c) {
  return ps_type_is_unsigned(c->type) || c->type == PS_TYPE_STRING ? (i128)c->reference.u : (i128)c->reference.i;
}

/* floor and ceil of a literal times 10^scale (a decimal column's scale; 0
 * on integer columns) as exact integers, clamped far outside any value so
 * that the code arithmetic below (value - M, +-1) cannot overflow. Doubles
 * come here only with scale 0 (decimal columns take the float path). */
static void literal_floor_ceil(const ps_literal *lit, uint32_t scale, i128 *fl, i128 *ce, bool *integral) {
  if (lit->kind == PS_LIT_INT64 || lit->kind == PS_LIT_UINT64) {
    i128 v = lit->kind == PS_LIT_INT64 ? (i128)lit->v.i : (i128)lit->v.u;
    *fl = *ce = v * ps_pow10_i128(scale); /* |v| < 2^64, 10^18 < 2^60: no overflow */
    if (*fl > I128_BIG) *fl = *ce = I128_BIG;
    if (*fl < -I128_BIG) *fl = *ce = -I128_BIG;
    *integral = true;
  } else if (lit->kind == PS_LIT_DECIMAL) {
    ps_decimal_floor_ceil(lit, scale, fl, ce, integral);
  } else {
    double x = lit->v.f;
    if (x >= 0x1p100) {
      *fl = *ce = I128_BIG;
      *integral = false;
    } else if (x <= -0x1p100) {
      *fl = *ce = -I128_BIG;
      *integral = false;
    } else {
      double f = floor(x), c = ceil(x);
      *fl = (i128)f;
      *ce = (i128)c;
      *integral = f == x;
    }
  }
}

static double literal_as_double(const ps_literal *lit) {
  if (lit->kind == PS_LIT_INT64) return (double)lit->v.i;
  if (lit->kind == PS_LIT_UINT64) return (double)lit->v.u;
  if (lit->kind == PS_LIT_DECIMAL) return ps_decimal_to_double(lit); /* float columns: nearest double */
  return lit->v.f;
}

static bool literal_is_nan(const ps_literal *lit) { return lit->kind == PS_LIT_FLOAT64 && isnan(lit->v.f); }

/* First code in [0, limit+1] whose value is >= x (strict: > x). */
static i128 float_first(const ps_column *c, double x, bool strict) {
  i128 lo = 0, hi = (i128)c->code_limit + 1;
  while (lo < hi) {
    i128 mid = lo + (hi - lo) / 2;
    double v = ps_column_code_double(c, (uint64_t)mid);
    bool ok = strict ? v > x : v >= x;
    if (ok) hi = mid;
    else lo = mid + 1;
  }
  return lo;
}

/* The codes whose value satisfies `value op lit`, for op != NE (NE is the
 * negation of EQ). NaN literals give an empty interval. */
static interval numeric_interval(const ps_column *c, ps_cmp op, const ps_literal *lit) {
  interval e = {1, 0};
  i128 lim = (i128)c->code_limit;
  if (literal_is_nan(lit)) return e;
  /* Float columns, and double literals on decimal columns, compare as doubles
   * (a decimal column's value as a double is (double)(M + code) / 10^scale,
   * as a float64 column's); everything else is exact. */
  if (ps_type_is_float(c->type) || (ps_type_is_decimal(c->type) && lit->kind == PS_LIT_FLOAT64)) {
    double x = literal_as_double(lit);
    switch (op) {
      case PS_LT: return (interval){0, float_first(c, x, false) - 1};
      case PS_LE: return (interval){0, float_first(c, x, true) - 1};
      case PS_GT: return (interval){float_first(c, x, true), lim};
      case PS_GE: return (interval){float_first(c, x, false), lim};
      default: return (interval){float_first(c, x, false), float_first(c, x, true) - 1};
    }
  }
  i128 fl, ce, m = col_ref(c);
  bool integral;
  literal_floor_ceil(lit, ps_type_is_decimal(c->type) ? c->scale : 0, &fl, &ce, &integral);
  switch (op) {
    case PS_LT: return (interval){0, ce - 1 - m};
    case PS_LE: return (interval){0, fl - m};
    case PS_GT: return (interval){fl + 1 - m, lim};
    case PS_GE: return (interval){ce - m, lim};
    default: return integral ? (interval){fl - m, fl - m} : e;
  }
}

/* ---- strings ------------------------------------------------------------- */

static const uint8_t *dict_entry(const ps_dict *d, uint64_t j, size_t *len) {
  *len = (size_t)(d->offsets[j + 1] - d->offsets[j]);
  return d->bytes + d->offsets[j];
}

static int cmp_entry(const ps_dict *d, uint64_t j, const ps_literal *lit) {
  size_t len;
  const uint8_t *s = dict_entry(d, j, &len);
  return ps_bytes_cmp(s, len, (const uint8_t *)lit->v.s.ptr, lit->v.s.len);
}

static bool cmp_holds(int c, ps_cmp op) {
  switch (op) {
    case PS_EQ: return c == 0;
    case PS_NE: return c != 0;
    case PS_LT: return c < 0;
    case PS_LE: return c <= 0;
    case PS_GT: return c > 0;
    default: return c >= 0;
  }
}

/* First dictionary index whose entry is >= lit (strict: > lit); sorted dicts. */
static i128 dict_first(const ps_dict *d, const ps_literal *lit, bool strict) {
  uint64_t lo = 0, hi = d->count;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    int c = cmp_entry(d, mid, lit);
    if (strict ? c > 0 : c >= 0) hi = mid;
    else lo = mid + 1;
  }
  return (i128)lo;
}

/* Code interval of `entry op lit` on a sorted dictionary (op != NE). */
static interval dict_interval(const ps_column *c, ps_cmp op, const ps_literal *lit) {
  const ps_dict *d = &c->dict;
  i128 m = col_ref(c), n = (i128)d->count;
  i128 lo, hi;
  switch (op) {
    case PS_LT: lo = 0, hi = dict_first(d, lit, false) - 1; break;
    case PS_LE: lo = 0, hi = dict_first(d, lit, true) - 1; break;
    case PS_GT: lo = dict_first(d, lit, true), hi = n - 1; break;
    case PS_GE: lo = dict_first(d, lit, false), hi = n - 1; break;
    default: lo = dict_first(d, lit, false), hi = dict_first(d, lit, true) - 1; break;
  }
  return (interval){lo - m, hi - m};
}

/* Emits a SET over the column's valid codes: bit c = pred(entry M + c). */
typedef bool (*entry_pred)(const ps_column *c, uint64_t entry, void *arg);

/* The SET instruction over the bitmap at aux word `off`. */
static ps_status emit_set_insn(lowering *L, ps_column *c, uint32_t off, bool negate) {
  ps_insn in = {0};
  in.op = PS_OP_SET;
  PS_TRY(slot_of(L, c, &in.col_a));
  in.aux_a = off * 32;
  in.flags = negate ? PS_INSN_NEGATE : 0;
  return emit(L, in);
}

static ps_status emit_set(lowering *L, ps_column *c, entry_pred pred, void *arg, bool negate) {
  if (c->no_codes) return emit_range(L, c, (interval){1, 0}, negate);
  uint64_t ncodes = c->code_limit + 1;
  uint32_t off = 0; /* set by aux_reserve; gcc -O3 cannot see it */
  PS_TRY(aux_reserve(L, (ncodes + 31) / 32, &off));
  uint32_t *bits = L->out->aux + off;
  uint64_t m = c->reference.u;
  for (uint64_t k = 0; k < ncodes; k++)
    if (pred(c, m + k, arg)) bits[k / 32] |= 1u << (k % 32);
  return emit_set_insn(L, c, off, negate);
}

typedef struct cmp_arg {
  ps_cmp op;
  const ps_literal *lit, *lit_b; /* lit_b: BETWEEN's high end */
} cmp_arg;

static bool pred_cmp(const ps_column *c, uint64_t j, void *arg) {
  const cmp_arg *a = arg;
  if (a->lit_b) return cmp_entry(&c->dict, j, a->lit) >= 0 && cmp_entry(&c->dict, j, a->lit_b) <= 0;
  return cmp_holds(cmp_entry(&c->dict, j, a->lit), a->op);
}

typedef struct in_arg {
  const ps_literal **sorted;
  size_t count;
} in_arg;

static int lit_ptr_cmp(const void *x, const void *y) {
  const ps_literal *a = *(const ps_literal *const *)x, *b = *(const ps_literal *const *)y;
  return ps_bytes_cmp((const uint8_t *)a->v.s.ptr, a->v.s.len, (const uint8_t *)b->v.s.ptr, b->v.s.len);
}

static bool pred_in(const ps_column *c, uint64_t j, void *arg) {
  const in_arg *a = arg;
  size_t lo = 0, hi = a->count;
  while (lo < hi) {
    size_t mid = lo + (hi - lo) / 2;
    int r = cmp_entry(&c->dict, j, a->sorted[mid]);
    if (r == 0) return true;
    if (r < 0) hi = mid;
    else lo = mid + 1;
  }
  return false;
}

/* First dictionary index at or after `from` whose entry is neither below
 * the prefix nor starts with it (sorted dictionaries: entries that start
 * with a prefix are contiguous, right after those below it). */
static uint64_t dict_prefix_end(const ps_dict *d, const uint8_t *pre, size_t plen, uint64_t from) {
  uint64_t lo = from, hi = d->count;
  while (lo < hi) {
    uint64_t mid = lo + (hi - lo) / 2;
    size_t len;
    const uint8_t *s = dict_entry(d, mid, &len);
    bool inside = len >= plen && (plen == 0 || memcmp(s, pre, plen) == 0);
    if (inside || ps_bytes_cmp(s, len, pre, plen) < 0) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/* ---- leaves ---------------------------------------------------------------- */

/* ---- interval leaves and same-column groups ------------------------------------ */

/* A set of codes as sorted, disjoint, non-adjacent intervals within
 * [0, code_limit]. Comparisons, BETWEEN and IN against literals on FOR
 * columns and sorted dictionaries are such sets, and so is any AND / OR /
 * NOT of them on one column: every leaf of the group is null exactly where
 * the column is, so Kleene logic reduces to set algebra on the non-null
 * rows (null rows stay UNKNOWN). A group lowers to one instruction. */
typedef struct ivset {
  interval *v;
  size_t n;
} ivset;

static ps_status ivs_alloc(lowering *L, size_t n, ivset *out) {
  out->n = 0;
  out->v = ps_calloc_ctx(L->ctx, n ? n : 1, sizeof *out->v);
  if (!out->v) return ps_set_error(L->ctx, PS_ERR_OUT_OF_MEMORY, "allocating %zu code intervals", n);
  return PS_OK;
}

static void ivs_free(lowering *L, ivset *s) {
  ps_host_free(L->ctx, s->v);
  s->v = NULL;
  s->n = 0;
}

static int interval_cmp(const void *x, const void *y) {
  i128 a = ((const interval *)x)->lo, b = ((const interval *)y)->lo;
  return a < b ? -1 : a > b;
}

/* Clamps to [0, lim], drops empties, sorts and merges overlapping or
 * adjacent intervals, in place. */
static void ivs_normalize(ivset *s, i128 lim) {
  size_t n = 0;
  for (size_t i = 0; i < s->n; i++) {
    interval x = s->v[i];
    if (x.lo < 0) x.lo = 0;
    if (x.hi > lim) x.hi = lim;
    if (x.lo <= x.hi) s->v[n++] = x;
  }
  qsort(s->v, n, sizeof *s->v, interval_cmp);
  size_t u = 0;
  for (size_t i = 0; i < n; i++) {
    if (u && s->v[i].lo <= s->v[u - 1].hi + 1) {
      if (s->v[i].hi > s->v[u - 1].hi) s->v[u - 1].hi = s->v[i].hi;
    } else {
      s->v[u++] = s->v[i];
    }
  }
  s->n = u;
}

static interval intersect(interval a, interval b) {
  return (interval){a.lo > b.lo ? a.lo : b.lo, a.hi < b.hi ? a.hi : b.hi};
}

/* Codes of `entry op lit` (any op) on the column as an interval set. */
static interval cmp_interval(const ps_column *c, ps_cmp op, const ps_literal *lit) {
  return c->type == PS_TYPE_STRING ? dict_interval(c, op, lit) : numeric_interval(c, op, lit);
}

static ps_status ivs_complement(lowering *L, const ivset *a, i128 lim, ivset *out) {
  PS_TRY(ivs_alloc(L, a->n + 1, out));
  i128 next = 0;
  for (size_t i = 0; i < a->n; i++) {
    if (a->v[i].lo > next) out->v[out->n++] = (interval){next, a->v[i].lo - 1};
    next = a->v[i].hi + 1;
  }
  if (next <= lim) out->v[out->n++] = (interval){next, lim};
  return PS_OK;
}

static ps_status ivs_union(lowering *L, const ivset *a, const ivset *b, i128 lim, ivset *out) {
  PS_TRY(ivs_alloc(L, a->n + b->n, out));
  memcpy(out->v, a->v, a->n * sizeof *a->v);
  if (b->n) memcpy(out->v + a->n, b->v, b->n * sizeof *b->v);
  out->n = a->n + b->n;
  ivs_normalize(out, lim);
  return PS_OK;
}

static ps_status ivs_intersect(lowering *L, const ivset *a, const ivset *b, ivset *out) {
  PS_TRY(ivs_alloc(L, a->n + b->n, out));
  size_t i = 0, j = 0;
  while (i < a->n && j < b->n) {
    interval x = intersect(a->v[i], b->v[j]);
    if (x.lo <= x.hi) out->v[out->n++] = x;
    if (a->v[i].hi < b->v[j].hi) i++;
    else j++;
  }
  return PS_OK;
}

/* The code set of a leaf (COMPARE, BETWEEN, IN) or a group (AND, OR, NOT)
 * whose fold_col is c. The recursion is bounded by PS_MAX_TREE_HEIGHT. */
static ps_status ivs_of(lowering *L, const ps_expr *e, const ps_column *c, ivset *out) {
  i128 lim = (i128)c->code_limit;
  switch (e->kind) {
    case PS_EXPR_COMPARE: {
      bool negate = e->cmp == PS_NE;
      ivset eq;
      PS_TRY(ivs_alloc(L, 1, &eq));
      eq.v[eq.n++] = cmp_interval(c, negate ? PS_EQ : e->cmp, &e->lit);
      ivs_normalize(&eq, lim);
      if (!negate) return *out = eq, PS_OK;
      ps_status st = ivs_complement(L, &eq, lim, out);
      ivs_free(L, &eq);
      return st;
    }
    case PS_EXPR_BETWEEN:
      PS_TRY(ivs_alloc(L, 1, out));
      out->v[out->n++] = intersect(cmp_interval(c, PS_GE, &e->lit), cmp_interval(c, PS_LE, &e->lit_b));
      ivs_normalize(out, lim);
      return PS_OK;
    case PS_EXPR_IN:
      /* each literal matches one interval of codes (a single code on
       * integer columns; on float columns a run of codes that decode to the
       * same double; on sorted dictionaries the entry's codes) */
      PS_TRY(ivs_alloc(L, e->list_count, out));
      for (size_t i = 0; i < e->list_count; i++) out->v[out->n++] = cmp_interval(c, PS_EQ, &e->list[i]);
      ivs_normalize(out, lim);
      return PS_OK;
    case PS_EXPR_NOT: {
      ivset a;
      PS_TRY(ivs_of(L, e->a, c, &a));
      ps_status st = ivs_complement(L, &a, lim, out);
      ivs_free(L, &a);
      return st;
    }
    case PS_EXPR_AND:
    case PS_EXPR_OR: {
      ivset a, b;
      PS_TRY(ivs_of(L, e->a, c, &a));
      ps_status st = ivs_of(L, e->b, c, &b);
      if (st == PS_OK) {
        st = e->kind == PS_EXPR_AND ? ivs_intersect(L, &a, &b, out) : ivs_union(L, &a, &b, lim, out);
        ivs_free(L, &b);
      }
      ivs_free(L, &a);
      return st;
    }
    default: break;
  }
  return ps_set_error(L->ctx, PS_ERR_INTERNAL, "expression kind %d is not an interval leaf", (int)e->kind);
}

/* One instruction for a code set: a RANGE for none or one interval, a
 * negated RANGE where the set misses one interval of [0, limit], else an
 * INLIST of the intervals. */
static ps_status emit_ivset(lowering *L, ps_column *c, const ivset *s) {
  i128 lim = (i128)c->code_limit;
  if (s->n <= 1) return emit_range(L, c, s->n ? s->v[0] : (interval){1, 0}, false);
  bool starts = s->v[0].lo == 0, ends = s->v[s->n - 1].hi == lim;
  if (s->n == 2 && starts && ends) return emit_range(L, c, (interval){s->v[0].hi + 1, s->v[1].lo - 1}, true);
  uint32_t off = 0; /* set by aux_reserve; gcc -O3 cannot see it */
  PS_TRY(aux_reserve(L, 4 * (uint64_t)s->n, &off));
  for (size_t i = 0; i < s->n; i++) {
    uint32_t *w = L->out->aux + off + 4 * i;
    uint64_t first = (uint64_t)s->v[i].lo, last = (uint64_t)s->v[i].hi;
    w[0] = (uint32_t)first, w[1] = (uint32_t)(first >> 32);
    w[2] = (uint32_t)last, w[3] = (uint32_t)(last >> 32);
  }
  ps_insn in = {0};
  in.op = PS_OP_INLIST;
  PS_TRY(slot_of(L, c, &in.col_a));
  in.aux_a = off;
  in.lo = s->n;
  return emit(L, in);
}

static ps_status lower_interval_group(lowering *L, const ps_expr *e) {
  ivset s;
  PS_TRY(ivs_of(L, e, e->fold_col, &s));
  ps_status st = emit_ivset(L, e->fold_col, &s);
  ivs_free(L, &s);
  return st;
}

/* ---- other leaves -------------------------------------------------------------- */

/* Comparisons, BETWEEN and IN on unsorted dictionaries: a SET over the
 * dictionary's codes (the others are interval leaves). */
static ps_status lower_compare(lowering *L, const ps_expr *e) {
  cmp_arg a = {e->cmp, &e->lit, NULL};
  return emit_set(L, e->col, pred_cmp, &a, false);
}

static ps_status lower_between(lowering *L, const ps_expr *e) {
  cmp_arg a = {PS_GE, &e->lit, &e->lit_b};
  return emit_set(L, e->col, pred_cmp, &a, false);
}

static ps_status lower_in(lowering *L, const ps_expr *e) {
  ps_column *c = e->col;
  in_arg a = {NULL, e->list_count};
  if (e->list_count) {
    a.sorted = ps_calloc_ctx(L->ctx, e->list_count, sizeof *a.sorted);
    if (!a.sorted) return ps_set_error(L->ctx, PS_ERR_OUT_OF_MEMORY, "sorting an IN list");
    for (size_t i = 0; i < e->list_count; i++) a.sorted[i] = &e->list[i];
    qsort(a.sorted, e->list_count, sizeof *a.sorted, lit_ptr_cmp);
  }
  ps_status st = emit_set(L, c, pred_in, &a, false);
  ps_host_free(L->ctx, a.sorted);
  return st;
}

/* The whole dictionary at once on the host (like.c), straight into the SET
 * bitmap, which is uploaded with the program's other aux words. */
static ps_status lower_like_host(lowering *L, const ps_expr *e, const int *tok, size_t nt) {
  ps_column *c = e->col;
  uint64_t ncodes = c->code_limit + 1;
  uint32_t off = 0; /* set by aux_reserve; gcc -O3 cannot see it */
  PS_TRY(aux_reserve(L, (ncodes + 31) / 32, &off));
  PS_TRY(ps_like_dict(L->ctx, tok, nt, &c->dict, c->reference.u, ncodes, L->out->aux + off));
  return emit_set_insn(L, c, off, e->negate);
}

/* On a backend that matches dictionaries (like_dict): the SET bitmap's words
 * are reserved and left zero here, and ps_run_program has the device fill
 * them right after it creates the aux buffer (once per lowered expression).
 * Patterns the device matcher cannot hold stay on the host. */
static ps_status lower_like_device(lowering *L, const ps_expr *e, const int *tok, size_t nt) {
  ps_column *c = e->col;
  ps_lowered *low = L->out;
  if (low->n_fills == PS_MAX_INSNS) return lower_like_host(L, e, tok, nt); /* cannot happen: one per leaf */
  ps_like_dict_args query;
  memset(&query, 0, sizeof query);
  if (L->ctx->ops->like_dict(L->ctx->be, &query) != PS_OK) return lower_like_host(L, e, tok, nt);
  ps_like_fill *f = ps_calloc_ctx(L->ctx, 1, sizeof *f);
  if (!f) return ps_set_error(L->ctx, PS_ERR_OUT_OF_MEMORY, "allocating a LIKE pattern for the device");
  if (!ps_like_nfa_build(tok, nt, &f->nfa)) {
    ps_host_free(L->ctx, f);
    return lower_like_host(L, e, tok, nt);
  }
  f->col = c;
  f->count = c->code_limit + 1;
  ps_status st = aux_reserve(L, (f->count + 31) / 32, &f->aux_word);
  if (st != PS_OK) {
    ps_host_free(L->ctx, f);
    return st;
  }
  low->fills[low->n_fills++] = f;
  return emit_set_insn(L, c, f->aux_word, e->negate);
}

static ps_status lower_like(lowering *L, const ps_expr *e) {
  ps_column *c = e->col;
  int *tok = ps_calloc_ctx(L->ctx, e->pattern_len + 1, sizeof(int));
  uint8_t *lit = ps_host_alloc(L->ctx, e->pattern_len + 1);
  if (!tok || !lit) {
    ps_host_free(L->ctx, tok);
    ps_host_free(L->ctx, lit);
    return ps_set_error(L->ctx, PS_ERR_OUT_OF_MEMORY, "allocating LIKE scratch");
  }
  size_t nt = ps_like_compile((const uint8_t *)e->pattern, e->pattern_len, e->escape, tok), lit_len = 0;
  int kind = ps_like_literal(tok, nt, lit, &lit_len);
  ps_status st = PS_OK;
  if (kind && c->dict.sorted && !c->no_codes) {
    /* 'abc' is equality and 'abc%' a prefix: on a sorted dictionary both are
     * a range of codes, found by binary search instead of a pass over it. */
    ps_literal l = ps_lit_str((const char *)lit, lit_len);
    interval iv;
    if (kind == 1) {
      iv = dict_interval(c, PS_EQ, &l);
    } else {
      uint64_t first = (uint64_t)dict_first(&c->dict, &l, false);
      iv = (interval){(i128)first, (i128)dict_prefix_end(&c->dict, lit, lit_len, first) - 1};
      iv.lo -= col_ref(c), iv.hi -= col_ref(c);
    }
    st = emit_range(L, c, iv, e->negate);
  } else if (c->no_codes) {
    st = emit_range(L, c, (interval){1, 0}, e->negate);
  } else if (L->ctx->ops->like_dict) {
    st = lower_like_device(L, e, tok, nt);
  } else {
    st = lower_like_host(L, e, tok, nt);
  }
  ps_host_free(L->ctx, tok);
  ps_host_free(L->ctx, lit);
  return st;
}

typedef struct rank_item {
  const ps_dict *d;
  uint64_t j;
  uint8_t side;
} rank_item;

static int rank_item_cmp(const void *x, const void *y) {
  const rank_item *a = x, *b = y;
  size_t la, lb;
  const uint8_t *sa = dict_entry(a->d, a->j, &la), *sb = dict_entry(b->d, b->j, &lb);
  return ps_bytes_cmp(sa, la, sb, lb);
}

/* Rank tables over the valid codes of both dictionary columns, into the
 * merged sorted union (equal strings, equal ranks). */
static ps_status rank_tables(lowering *L, ps_column *a, ps_column *b, uint32_t *off_a, uint32_t *off_b) {
  ps_column *cs[2] = {a, b};
  uint64_t nc[2];
  for (int s = 0; s < 2; s++) nc[s] = cs[s]->no_codes ? 0 : cs[s]->code_limit + 1;
  PS_TRY(aux_reserve(L, nc[0] ? nc[0] : 1, off_a));
  PS_TRY(aux_reserve(L, nc[1] ? nc[1] : 1, off_b));
  uint64_t total = nc[0] + nc[1];
  if (total > UINT32_MAX) return ps_set_error(L->ctx, PS_ERR_LIMIT, "dictionaries too large to rank (%" PRIu64 " entries)", total);
  rank_item *items = ps_calloc_ctx(L->ctx, (size_t)(total ? total : 1), sizeof *items);
  if (!items) return ps_set_error(L->ctx, PS_ERR_OUT_OF_MEMORY, "allocating rank tables");
  size_t k = 0;
  for (int s = 0; s < 2; s++)
    for (uint64_t code = 0; code < nc[s]; code++) items[k++] = (rank_item){&cs[s]->dict, cs[s]->reference.u + code, (uint8_t)s};
  qsort(items, k, sizeof *items, rank_item_cmp);
  uint32_t rank = 0;
  for (size_t i = 0; i < k; i++) {
    if (i && rank_item_cmp(&items[i - 1], &items[i]) != 0) rank++;
    ps_column *c = cs[items[i].side];
    uint32_t off = items[i].side ? *off_b : *off_a;
    L->out->aux[off + (items[i].j - c->reference.u)] = rank;
  }
  ps_host_free(L->ctx, items);
  return PS_OK;
}

/* The float descriptor of lossless float column c (ps_program.h): its
 * mapping and exception table, the ones the literal lowering and the
 * queries' sums decode by. */
static ps_status float_descriptor(lowering *L, const ps_column *c, uint32_t *offset) {
  PS_TRY(aux_reserve(L, ps_fmap_desc_words(&c->fmap), offset)); /* bounds the table far below 2^32 entries */
  ps_fmap_desc_write(&c->fmap, L->out->aux + *offset);
  return PS_OK;
}

static ps_status lower_compare_columns(lowering *L, const ps_expr *e) {
  ps_insn in = {0};
  in.op = PS_OP_CMPCOL;
  uint32_t mode, fmap_flags = 0;
  if (e->col->type == PS_TYPE_STRING) {
    mode = PS_MODE_RANK;
    PS_TRY(rank_tables(L, e->col, e->col_b, &in.aux_a, &in.aux_b));
  } else if (ps_type_is_float(e->col->type) || ps_type_is_float(e->col_b->type)) {
    /* a lossless float column's slot holds its codes (ps_prog_col_of): its
     * values come from its descriptor */
    mode = PS_MODE_DOUBLE;
    if (e->col->fmap.map != PS_FLOAT_MAP_DECIMAL) {
      PS_TRY(float_descriptor(L, e->col, &in.aux_a));
      fmap_flags |= PS_INSN_FMAP_A;
    }
    if (e->col_b->fmap.map != PS_FLOAT_MAP_DECIMAL) {
      PS_TRY(float_descriptor(L, e->col_b, &in.aux_b));
      fmap_flags |= PS_INSN_FMAP_B;
    }
  } else {
    mode = PS_MODE_INT;
  }
  PS_TRY(slot_of(L, e->col, &in.col_a));
  PS_TRY(slot_of(L, e->col_b, &in.col_b));
  in.flags = PS_INSN_MAKE_CMP(e->cmp, mode) | fmap_flags;
  return emit(L, in);
}

/* ---- tree walk ---------------------------------------------------------------- */

static ps_status lower_node(lowering *L, const ps_expr *e) {
  if (e->fold_col) return lower_interval_group(L, e);
  switch (e->kind) {
    case PS_EXPR_COMPARE: return lower_compare(L, e);
    case PS_EXPR_COMPARE_COLUMNS: return lower_compare_columns(L, e);
    case PS_EXPR_BETWEEN: return lower_between(L, e);
    case PS_EXPR_IN: return lower_in(L, e);
    case PS_EXPR_LIKE: return lower_like(L, e);
    case PS_EXPR_IS_NULL: {
      ps_insn in = {0};
      in.op = PS_OP_ISNULL;
      PS_TRY(slot_of(L, e->col, &in.col_a));
      in.flags = e->negate ? PS_INSN_NEGATE : 0;
      return emit(L, in);
    }
    case PS_EXPR_NOT: {
      PS_TRY(lower_node(L, e->a));
      ps_insn in = {0};
      in.op = PS_OP_NOT;
      return emit(L, in);
    }
    case PS_EXPR_AND:
    case PS_EXPR_OR: {
      /* the deeper operand first keeps the stack shallow (Sethi-Ullman) */
      const ps_expr *first = e->a->depth >= e->b->depth ? e->a : e->b;
      const ps_expr *second = first == e->a ? e->b : e->a;
      PS_TRY(lower_node(L, first));
      PS_TRY(lower_node(L, second));
      ps_insn in = {0};
      in.op = e->kind == PS_EXPR_AND ? PS_OP_AND : PS_OP_OR;
      return emit(L, in);
    }
  }
  return ps_set_error(L->ctx, PS_ERR_INTERNAL, "unknown expression kind %d", (int)e->kind);
}

ps_status ps_lower(ps_context *ctx, const ps_expr *expr, ps_lowered *out) {
  memset(out, 0, sizeof *out);
  lowering L = {ctx, out, 0, 0, 0};
  ps_status st = lower_node(&L, expr);
  if (st != PS_OK) {
    ps_lowered_free(ctx, out);
    return st;
  }
  out->prog.stack_depth = L.max_stack;
  return PS_OK;
}

void ps_lowered_free(ps_context *ctx, ps_lowered *low) {
  ps_host_free(ctx, low->aux);
  low->aux = NULL;
  for (uint32_t i = 0; i < low->n_fills; i++) ps_host_free(ctx, low->fills[i]);
  low->n_fills = 0;
}

/* The limits the public header documents are the program's. */
_Static_assert(PS_PREDICATE_MAX_COLUMNS == PS_MAX_COLS, "documented column limit");
_Static_assert(PS_PREDICATE_MAX_INSTRUCTIONS == PS_MAX_INSNS, "documented instruction limit");
