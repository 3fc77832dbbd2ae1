/* Value expressions of queries: validated and typed (decimal scale) as they
 * are built; lowered by core/query.c. */
#include <inttypes.h>
#include <string.h>

#include "query.h"

bool ps_i128_fits38(ps_i128 v) { return v <= PS_I128_MAX38 && v >= -PS_I128_MAX38; }

static ps_status start(ps_context *ctx, ps_value **out) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  ps_clear_error(ctx);
  if (!out) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "out is NULL");
  return PS_OK;
}

static ps_value *node(ps_context *ctx, ps_value_kind kind) {
  ps_value *v = ps_calloc_ctx(ctx, 1, sizeof *v);
  if (!v) return NULL;
  v->ctx = ctx;
  v->kind = kind;
  return v;
}

/* Hands v out; in a context over several devices, once it is built on each
 * device's part of its rows (multi.c). */
static ps_status finish(ps_context *ctx, ps_value *v, ps_value **out) {
  if (ctx->group) {
    ps_status st = ps_group_value_parts(ctx, v);
    if (st != PS_OK) {
      v->a = v->b = NULL; /* the operands stay the caller's */
      v->when = NULL;
      ps_value_destroy(v);
      return st;
    }
  }
  *out = v;
  return PS_OK;
}

static ps_status no_memory(ps_context *ctx) {
  return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating a value expression");
}

void ps_value_destroy(ps_value *v) {
  if (!v) return;
  ps_group_value_free(v);
  ps_value_destroy(v->a);
  ps_value_destroy(v->b);
  ps_expr_destroy(v->when);
  ps_host_free(v->ctx, v);
}

uint32_t ps_value_scale(const ps_value *v) { return v ? v->scale : 0; }

ps_status ps_value_column(ps_context *ctx, ps_column *col, ps_value **out) {
  PS_TRY(start(ctx, out));
  if (!col) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "col is NULL");
  if (col->ctx != ctx) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "col belongs to another context");
  ps_value *v = node(ctx, PS_VALUE_COLUMN);
  if (!v) return no_memory(ctx);
  v->col = col;
  v->scale = ps_type_is_float(col->type) || ps_type_is_decimal(col->type) ? col->scale : 0;
  v->rows = col->n;
  v->has_rows = true;
  return finish(ctx, v, out);
}

static ps_status make_const(ps_context *ctx, ps_i128 c, uint32_t scale, ps_value **out) {
  ps_value *v = node(ctx, PS_VALUE_CONST);
  if (!v) return no_memory(ctx);
  v->constant = c;
  v->scale = scale;
  return finish(ctx, v, out);
}

ps_status ps_value_literal(ps_context *ctx, ps_literal lit, ps_value **out) {
  PS_TRY(start(ctx, out));
  switch ((int)lit.kind) {
    case PS_LIT_INT64: return make_const(ctx, lit.v.i, 0, out);
    case PS_LIT_UINT64: return make_const(ctx, lit.v.u, 0, out);
    case PS_LIT_FLOAT64:
      return ps_set_error(ctx, PS_ERR_TYPE_MISMATCH,
                          "literal %.17g is a double: value expressions are exact; write it as a decimal "
                          "(ps_value_decimal)",
                          lit.v.f);
    case PS_LIT_STRING:
      return ps_set_error(ctx, PS_ERR_TYPE_MISMATCH, "a string literal cannot be an operand of arithmetic");
    case PS_LIT_DECIMAL: return ps_value_decimal(ctx, lit.v.d.lo, lit.v.d.hi, lit.v.d.scale, out);
    default: break;
  }
  return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "literal has unknown kind %d", (int)lit.kind);
}

ps_status ps_value_decimal(ps_context *ctx, uint64_t lo, int64_t hi, uint32_t scale, ps_value **out) {
  PS_TRY(start(ctx, out));
  if (scale > PS_QUERY_MAX_SCALE)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "decimal scale %" PRIu32 " is above %d", scale,
                        PS_QUERY_MAX_SCALE);
  ps_i128 c = (ps_i128)(((ps_u128)(uint64_t)hi << 64) | lo);
  if (!ps_i128_fits38(c))
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                        "decimal (hi %" PRId64 ", lo %" PRIu64 ") has more than %d digits", hi, lo,
                        PS_QUERY_MAX_DIGITS);
  return make_const(ctx, c, scale, out);
}

ps_status ps_value_null(ps_context *ctx, ps_value **out) {
  PS_TRY(start(ctx, out));
  ps_value *v = node(ctx, PS_VALUE_NULL);
  if (!v) return no_memory(ctx);
  return finish(ctx, v, out);
}

static ps_status check_operand(ps_context *ctx, const ps_value *v, const char *what) {
  if (!v) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s is NULL", what);
  if (v->ctx != ctx) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s belongs to another context", what);
  return PS_OK;
}

/* The rows of a node of two operands (and a predicate): all that read
 * columns must agree. */
static ps_status merge_rows(ps_context *ctx, ps_value *v, bool has, uint64_t rows, const char *what) {
  if (!has) return PS_OK;
  if (v->has_rows && v->rows != rows)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT,
                        "%s reads columns of %" PRIu64 " rows; the other operands' columns have %" PRIu64, what, rows,
                        v->rows);
  v->rows = rows;
  v->has_rows = true;
  return PS_OK;
}

ps_status ps_value_arith(ps_context *ctx, ps_arith op, ps_value *a, ps_value *b, ps_value **out) {
  PS_TRY(start(ctx, out));
  if ((unsigned)op > PS_MUL)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "arithmetic operator %d is not one of PS_ADD, PS_SUB, PS_MUL",
                        (int)op);
  PS_TRY(check_operand(ctx, a, "a"));
  PS_TRY(check_operand(ctx, b, "b"));
  if (a == b) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "a and b are the same value (each node has one owner)");
  uint32_t scale = op == PS_MUL ? a->scale + b->scale : (a->scale > b->scale ? a->scale : b->scale);
  if (scale > PS_QUERY_MAX_SCALE)
    return ps_set_error(ctx, PS_ERR_LIMIT, "the product of scales %" PRIu32 " and %" PRIu32 " has scale %" PRIu32
                        ", above %d", a->scale, b->scale, scale, PS_QUERY_MAX_SCALE);
  ps_value *v = node(ctx, PS_VALUE_ARITH);
  if (!v) return no_memory(ctx);
  v->op = op;
  v->scale = scale;
  ps_status st = merge_rows(ctx, v, a->has_rows, a->rows, "a");
  if (st == PS_OK) st = merge_rows(ctx, v, b->has_rows, b->rows, "b");
  if (st != PS_OK) {
    ps_host_free(ctx, v);
    return st;
  }
  v->a = a;
  v->b = b;
  return finish(ctx, v, out);
}

ps_status ps_value_case(ps_context *ctx, ps_expr *when, ps_value *then_value, ps_value *else_value, ps_value **out) {
  PS_TRY(start(ctx, out));
  PS_TRY(ps_check_expr(ctx, when));
  PS_TRY(check_operand(ctx, then_value, "then_value"));
  if (else_value) PS_TRY(check_operand(ctx, else_value, "else_value"));
  if (then_value == else_value)
    return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "then_value and else_value are the same value");
  ps_value *v = node(ctx, PS_VALUE_CASE);
  if (!v) return no_memory(ctx);
  uint32_t se = else_value ? else_value->scale : 0;
  v->scale = then_value->scale > se ? then_value->scale : se;
  ps_status st = merge_rows(ctx, v, true, when->rows, "when");
  if (st == PS_OK) st = merge_rows(ctx, v, then_value->has_rows, then_value->rows, "then_value");
  if (st == PS_OK && else_value) st = merge_rows(ctx, v, else_value->has_rows, else_value->rows, "else_value");
  if (st != PS_OK) {
    ps_host_free(ctx, v);
    return st;
  }
  v->when = when;
  v->a = then_value;
  v->b = else_value;
  return finish(ctx, v, out);
}
