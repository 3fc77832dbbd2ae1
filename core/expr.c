/* Predicate trees: validated at construction, lowered at evaluation. */
#include <inttypes.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static ps_status start(ps_context *ctx, ps_expr **out) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!out) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "out is NULL");
  return PS_OK;
}

static ps_status check_column(ps_context *ctx, const ps_column *col, const char *what) {
  if (!col) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s is NULL", what);
  if (col->ctx != ctx) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s belongs to another context", what);
  return PS_OK;
}

static ps_status check_cmp(ps_context *ctx, ps_cmp op) {
  if ((unsigned)op > PS_GE)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "comparison operator %d is not one of PS_EQ..PS_GE", (int)op);
  return PS_OK;
}

/* A literal must suit the column: strings on dictionary columns, numbers on FOR columns. */
static ps_status check_literal(ps_context *ctx, const ps_column *col, const ps_literal *lit, const char *what) {
  switch (lit->kind) {
    case PS_LIT_INT64:
    case PS_LIT_UINT64:
    case PS_LIT_FLOAT64:
    case PS_LIT_DECIMAL:
      if (col->type == PS_TYPE_STRING)
        return ps_set_error(ctx, PS_ERR_TYPE_MISMATCH, "%s is numeric but the column is a string (dictionary) column",
                            what);
      if (lit->kind == PS_LIT_DECIMAL) return ps_check_decimal(ctx, lit, what);
      return PS_OK;
    case PS_LIT_STRING:
      if (col->type != PS_TYPE_STRING)
        return ps_set_error(ctx, PS_ERR_TYPE_MISMATCH, "%s is a string but the column is %s", what,
                            ps_type_name(col->type));
      if (!lit->v.s.ptr && lit->v.s.len)
        return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: string pointer is NULL with length %zu", what,
                            lit->v.s.len);
      /* No object is larger than PTRDIFF_MAX bytes; the bound also keeps the
       * copy's len + 1 from wrapping to 0. */
      if (lit->v.s.len > PTRDIFF_MAX)
        return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                            "%s: string length %zu is larger than any object (PTRDIFF_MAX = %td)", what,
                            lit->v.s.len, (ptrdiff_t)PTRDIFF_MAX);
      return PS_OK;
  }
  return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s has unknown kind %d", what, (int)lit->kind);
}

/* A decimal column compares row by row with an integer or decimal column of
 * the same scale (integers have scale 0): both are then exact integers in
 * the same unit, PS_MODE_INT. Other scales would need a rescale per row in
 * the kernels, and a decimal of scale > 0 against a float column a division
 * that PS_MODE_DOUBLE does not make: both refused. */
static ps_status check_decimal_pair(ps_context *ctx, const ps_column *a, const ps_column *b) {
  bool da = ps_type_is_decimal(a->type), db = ps_type_is_decimal(b->type);
  if (!da && !db) return PS_OK;
  uint32_t sa = da ? a->scale : 0, sb = db ? b->scale : 0;
  const ps_column *dec = da ? a : b, *other = da ? b : a;
  if (ps_type_is_float(other->type) && dec->scale != 0)
    return ps_set_error(ctx, PS_ERR_UNSUPPORTED,
                        "comparing a decimal column of scale %u with a %s column is not supported (only decimals "
                        "of scale 0 compare with float columns)",
                        dec->scale, ps_type_name(other->type));
  if (!ps_type_is_float(other->type) && sa != sb)
    return ps_set_error(ctx, PS_ERR_UNSUPPORTED,
                        "comparing column a (%s, scale %u) with column b (%s, scale %u) is not supported: "
                        "decimal columns compare with integer or decimal columns of the same scale only",
                        ps_type_name(a->type), sa, ps_type_name(b->type), sb);
  return PS_OK;
}

/* Literal comparisons on this column are code intervals (lower.c): FOR
 * columns, and dictionaries that are sorted. */
static ps_column *interval_column(ps_column *col) {
  return col->type != PS_TYPE_STRING || col->dict.sorted ? col : NULL;
}

/* Hands e out; in a context over several devices, once it is built on each
 * device's part of its rows (multi.c). */
static ps_status finish(ps_context *ctx, ps_expr *e, ps_expr **out) {
  if (ctx->group) {
    ps_status st = ps_group_expr_parts(ctx, e);
    if (st != PS_OK) {
      e->a = e->b = NULL; /* the operands stay the caller's */
      ps_expr_destroy(e);
      return st;
    }
  }
  *out = e;
  return PS_OK;
}

static ps_expr *node(ps_context *ctx, ps_expr_kind kind, uint64_t rows) {
  ps_expr *e = ps_calloc_ctx(ctx, 1, sizeof *e);
  if (!e) return NULL;
  e->ctx = ctx;
  e->kind = kind;
  e->rows = rows;
  e->escape = -1;
  e->depth = 1;
  e->size = 1;
  e->height = 1;
  return e;
}

/* Copies a string literal's bytes so the caller's memory may go away. */
static ps_status own_literal(ps_context *ctx, ps_literal *lit) {
  if (lit->kind != PS_LIT_STRING) return PS_OK;
  char *p = ps_host_alloc(ctx, lit->v.s.len + 1);
  if (!p) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "copying a string literal of %zu bytes", lit->v.s.len);
  if (lit->v.s.len) memcpy(p, lit->v.s.ptr, lit->v.s.len);
  p[lit->v.s.len] = '\0';
  lit->v.s.ptr = p;
  return PS_OK;
}

static void free_literal(ps_context *ctx, ps_literal *lit) {
  if (lit->kind == PS_LIT_STRING) ps_host_free(ctx, (void *)lit->v.s.ptr);
}

void ps_expr_destroy(ps_expr *e) {
  if (!e) return;
  ps_context *ctx = e->ctx;
  ps_group_expr_free(e);
  ps_expr_destroy(e->a);
  ps_expr_destroy(e->b);
  free_literal(ctx, &e->lit);
  free_literal(ctx, &e->lit_b);
  for (size_t i = 0; i < e->list_count; i++) free_literal(ctx, &e->list[i]);
  ps_host_free(ctx, e->list);
  ps_host_free(ctx, e->pattern);
  if (e->lowered) {
    ps_lowered_free(ctx, e->lowered);
    ps_host_free(ctx, e->lowered);
  }
  ps_aux_release(ctx, e->aux_dev);
  ps_prune_plan_free(ctx, e);
  ps_host_free(ctx, e);
}

uint64_t ps_expr_rows(const ps_expr *e) { return e ? e->rows : 0; }

ps_status ps_expr_compare(ps_context *ctx, ps_column *col, ps_cmp op, ps_literal lit, ps_expr **out) {
  PS_TRY(start(ctx, out));
  PS_TRY(check_column(ctx, col, "column"));
  PS_TRY(check_cmp(ctx, op));
  PS_TRY(check_literal(ctx, col, &lit, "literal"));
  ps_expr *e = node(ctx, PS_EXPR_COMPARE, col->n);
  if (!e) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating an expression");
  e->col = col;
  e->fold_col = interval_column(col);
  e->cmp = op;
  e->lit = lit;
  ps_status st = own_literal(ctx, &e->lit);
  if (st != PS_OK) {
    e->lit.kind = PS_LIT_INT64;
    ps_expr_destroy(e);
    return st;
  }
  return finish(ctx, e, out);
}

ps_status ps_expr_compare_columns(ps_context *ctx, ps_column *a, ps_cmp op, ps_column *b, ps_expr **out) {
  PS_TRY(start(ctx, out));
  PS_TRY(check_column(ctx, a, "column a"));
  PS_TRY(check_column(ctx, b, "column b"));
  PS_TRY(check_cmp(ctx, op));
  if ((a->type == PS_TYPE_STRING) != (b->type == PS_TYPE_STRING))
    return ps_set_error(ctx, PS_ERR_TYPE_MISMATCH, "cannot compare a %s column with a %s column",
                        ps_type_name(a->type), ps_type_name(b->type));
  if (a->n != b->n)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                        "columns have different row counts: %" PRIu64 " and %" PRIu64, a->n, b->n);
  PS_TRY(check_decimal_pair(ctx, a, b));
  ps_expr *e = node(ctx, PS_EXPR_COMPARE_COLUMNS, a->n);
  if (!e) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating an expression");
  e->col = a;
  e->col_b = b;
  e->cmp = op;
  return finish(ctx, e, out);
}

ps_status ps_expr_between(ps_context *ctx, ps_column *col, ps_literal lo, ps_literal hi, ps_expr **out) {
  PS_TRY(start(ctx, out));
  PS_TRY(check_column(ctx, col, "column"));
  PS_TRY(check_literal(ctx, col, &lo, "low literal"));
  PS_TRY(check_literal(ctx, col, &hi, "high literal"));
  ps_expr *e = node(ctx, PS_EXPR_BETWEEN, col->n);
  if (!e) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating an expression");
  e->col = col;
  e->fold_col = interval_column(col);
  e->lit.kind = e->lit_b.kind = PS_LIT_INT64;
  ps_status st = PS_OK;
  e->lit = lo;
  if ((st = own_literal(ctx, &e->lit)) != PS_OK) {
    e->lit.kind = PS_LIT_INT64;
    goto fail;
  }
  e->lit_b = hi;
  if ((st = own_literal(ctx, &e->lit_b)) != PS_OK) {
    e->lit_b.kind = PS_LIT_INT64;
    goto fail;
  }
  return finish(ctx, e, out);
fail:
  ps_expr_destroy(e);
  return st;
}

ps_status ps_expr_in(ps_context *ctx, ps_column *col, const ps_literal *list, size_t count, ps_expr **out) {
  PS_TRY(start(ctx, out));
  PS_TRY(check_column(ctx, col, "column"));
  if (count && !list) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "list is NULL with count %zu", count);
  for (size_t i = 0; i < count; i++) {
    char what[48];
    snprintf(what, sizeof what, "list[%zu]", i);
    PS_TRY(check_literal(ctx, col, &list[i], what));
  }
  ps_expr *e = node(ctx, PS_EXPR_IN, col->n);
  if (!e) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating an expression");
  e->col = col;
  e->fold_col = interval_column(col);
  if (count) {
    e->list = ps_calloc_ctx(ctx, count, sizeof *e->list);
    if (!e->list) {
      ps_expr_destroy(e);
      return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating an IN list of %zu literals", count);
    }
  }
  for (size_t i = 0; i < count; i++) {
    e->list[i] = list[i];
    ps_status st = own_literal(ctx, &e->list[i]);
    if (st != PS_OK) {
      e->list[i].kind = PS_LIT_INT64;
      e->list_count = i + 1;
      ps_expr_destroy(e);
      return st;
    }
  }
  e->list_count = count;
  return finish(ctx, e, out);
}

ps_status ps_expr_like(ps_context *ctx, ps_column *col, const char *pattern, size_t len, int escape, int negate,
                       ps_expr **out) {
  PS_TRY(start(ctx, out));
  PS_TRY(check_column(ctx, col, "column"));
  if (col->type != PS_TYPE_STRING)
    return ps_set_error(ctx, PS_ERR_TYPE_MISMATCH, "LIKE needs a string (dictionary) column; the column is %s",
                        ps_type_name(col->type));
  if (!pattern && len) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "pattern is NULL with length %zu", len);
  if (len > PTRDIFF_MAX)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                        "pattern length %zu is larger than any object (PTRDIFF_MAX = %td)", len,
                        (ptrdiff_t)PTRDIFF_MAX);
  if (escape > 127)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "escape is %d; expected -1 (none) or an ASCII byte 0..127",
                        escape);
  if (escape < -1) escape = -1;
  PS_TRY(ps_like_validate(pattern, len, escape, ctx->last_error, sizeof ctx->last_error));
  ps_expr *e = node(ctx, PS_EXPR_LIKE, col->n);
  if (!e) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating an expression");
  e->col = col;
  e->escape = escape;
  e->negate = negate != 0;
  e->pattern = ps_host_alloc(ctx, len + 1);
  if (!e->pattern) {
    ps_expr_destroy(e);
    return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "copying a LIKE pattern of %zu bytes", len);
  }
  if (len) memcpy(e->pattern, pattern, len);
  e->pattern[len] = '\0';
  e->pattern_len = len;
  return finish(ctx, e, out);
}

ps_status ps_expr_is_null(ps_context *ctx, ps_column *col, int negate, ps_expr **out) {
  PS_TRY(start(ctx, out));
  PS_TRY(check_column(ctx, col, "column"));
  ps_expr *e = node(ctx, PS_EXPR_IS_NULL, col->n);
  if (!e) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating an expression");
  e->col = col;
  e->negate = negate != 0;
  return finish(ctx, e, out);
}

static ps_status combine(ps_context *ctx, ps_expr_kind kind, ps_expr *a, ps_expr *b, ps_expr **out) {
  PS_TRY(start(ctx, out));
  if (!a || (kind != PS_EXPR_NOT && !b))
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "operand %s is NULL", !a ? "a" : "b");
  if (a->ctx != ctx || (b && b->ctx != ctx))
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "operand belongs to another context");
  if (a == b) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "both operands are the same expression object");
  if (b && a->rows != b->rows)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                        "operands read columns of different row counts: %" PRIu64 " and %" PRIu64, a->rows,
                        b->rows);
  unsigned height = 1 + (b && b->height > a->height ? b->height : a->height);
  if (height > PS_PREDICATE_MAX_HEIGHT)
    return ps_set_error(ctx, PS_ERR_LIMIT, "the predicate tree would be %u levels deep; at most %d (%s)", height,
                        PS_PREDICATE_MAX_HEIGHT, "an IN list holds any number of values in one level");
  ps_expr *e = node(ctx, kind, a->rows);
  if (!e) return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating an expression");
  e->a = a;
  e->b = b;
  e->height = height;
  e->fold_col = a->fold_col && (!b || b->fold_col == a->fold_col) ? a->fold_col : NULL;
  if (b) {
    /* Sethi-Ullman: the deeper operand is evaluated first. */
    unsigned hi = a->depth > b->depth ? a->depth : b->depth;
    e->depth = a->depth == b->depth ? hi + 1 : hi;
    e->size = a->size + b->size + 1;
  } else {
    e->depth = a->depth;
    e->size = a->size + 1;
  }
  return finish(ctx, e, out);
}

ps_status ps_expr_and(ps_context *ctx, ps_expr *a, ps_expr *b, ps_expr **out) {
  return combine(ctx, PS_EXPR_AND, a, b, out);
}
ps_status ps_expr_or(ps_context *ctx, ps_expr *a, ps_expr *b, ps_expr **out) {
  return combine(ctx, PS_EXPR_OR, a, b, out);
}
ps_status ps_expr_not(ps_context *ctx, ps_expr *a, ps_expr **out) { return combine(ctx, PS_EXPR_NOT, a, NULL, out); }
