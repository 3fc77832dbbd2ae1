/* The query oracle of test_query and test_query_groups (qoracle.h). */
#include <stdlib.h>
#include <string.h>

#include "qoracle.h"

/* ---- the oracle's value trees -------------------------------------------------- */

qnode *qn_new(qkind k) {
  qnode *q = th_calloc(1, sizeof *q);
  q->kind = k;
  return q;
}

void qn_free(qnode *q) {
  if (!q) return;
  qn_free(q->a);
  qn_free(q->b);
  on_free(q->when);
  free(q);
}

ti128 pow10i(uint32_t k) {
  ti128 p = 1;
  while (k--) p *= 10;
  return p;
}

ti128 max38(void) {
  static ti128 m; /* computed once: the oracle compares with it on every operation */
  if (!m) m = pow10i(38) - 1;
  return m;
}

uint32_t qn_scale(tcol *const *cols, const qnode *q) {
  switch (q->kind) {
    case QN_COL: return tcol_is_float(cols[q->col]->type) ? cols[q->col]->scale : 0;
    case QN_CONST: return q->scale;
    case QN_NULL: return 0;
    case QN_ARITH: {
      uint32_t a = qn_scale(cols, q->a), b = qn_scale(cols, q->b);
      return q->op == PS_MUL ? a + b : (a > b ? a : b);
    }
    default: {
      uint32_t a = qn_scale(cols, q->a), b = q->b ? qn_scale(cols, q->b) : 0;
      return a > b ? a : b;
    }
  }
}

static oval fit(int ok, ti128 v) {
  oval r = {0, 0, v};
  r.ovf = !ok || v > max38() || v < -max38();
  return r;
}

static oval rescale(oval x, uint32_t k) {
  if (x.null || x.ovf || !k) return x;
  ti128 v = 0;
  int ok = !__builtin_mul_overflow(x.v, pow10i(k), &v) && k <= 38;
  return fit(ok, v);
}

oval qn_eval(tcol *const *cols, const qnode *q, uint64_t row) {
  oval r = {0, 0, 0};
  switch (q->kind) {
    case QN_COL:
      if (!oracle_valid(cols[q->col], row)) return (oval){1, 0, 0};
      r.v = oracle_raw(cols[q->col], row);
      return r;
    case QN_CONST: r.v = q->c; return r;
    case QN_NULL: return (oval){1, 0, 0};
    case QN_ARITH: {
      oval a = qn_eval(cols, q->a, row), b = qn_eval(cols, q->b, row);
      uint32_t sa = qn_scale(cols, q->a), sb = qn_scale(cols, q->b);
      if (q->op != PS_MUL) {
        a = rescale(a, sa < sb ? sb - sa : 0);
        b = rescale(b, sb < sa ? sa - sb : 0);
      }
      if (a.ovf || b.ovf) return (oval){0, 1, 0};
      if (a.null || b.null) return (oval){1, 0, 0};
      ti128 v = 0;
      int ok = q->op == PS_ADD   ? !__builtin_add_overflow(a.v, b.v, &v)
               : q->op == PS_SUB ? !__builtin_sub_overflow(a.v, b.v, &v)
                                 : !__builtin_mul_overflow(a.v, b.v, &v);
      return fit(ok, v);
    }
    default: {
      uint32_t s = qn_scale(cols, q);
      if (oracle_row(cols, q->when, row) == K_TRUE) return rescale(qn_eval(cols, q->a, row), s - qn_scale(cols, q->a));
      if (!q->b) return (oval){1, 0, 0};
      return rescale(qn_eval(cols, q->b, row), s - qn_scale(cols, q->b));
    }
  }
}

ps_status qn_build(ps_context *ctx, const qnode *q, ps_column *const *h, ps_value **out) {
  switch (q->kind) {
    case QN_COL: return ps_value_column(ctx, h[q->col], out);
    case QN_CONST:
      if (q->scale == 0 && q->c >= INT64_MIN && q->c <= INT64_MAX && (q->c & 1))
        return ps_value_literal(ctx, ps_lit_int((int64_t)q->c), out);
      if (q->scale == 0 && q->c > INT64_MAX && q->c <= UINT64_MAX && !(q->c & 2))
        return ps_value_literal(ctx, ps_lit_uint((uint64_t)q->c), out);
      if (q->c & 2) return ps_value_literal(ctx, ps_lit_decimal128((uint64_t)q->c, (int64_t)(q->c >> 64), q->scale), out);
      return ps_value_decimal(ctx, (uint64_t)q->c, (int64_t)(q->c >> 64), q->scale, out);
    case QN_NULL: return ps_value_null(ctx, out);
    default: break;
  }
  ps_value *a = NULL, *b = NULL;
  ps_expr *w = NULL;
  ps_status st = qn_build(ctx, q->a, h, &a);
  if (st == PS_OK && q->b) st = qn_build(ctx, q->b, h, &b);
  if (st == PS_OK && q->kind == QN_CASE) st = on_build(ctx, q->when, h, &w);
  if (st == PS_OK) st = q->kind == QN_ARITH ? ps_value_arith(ctx, q->op, a, b, out) : ps_value_case(ctx, w, a, b, out);
  if (st != PS_OK) {
    ps_value_destroy(a);
    ps_value_destroy(b);
    ps_expr_destroy(w);
  }
  return st;
}

void qn_print(FILE *f, const qnode *q, tcol *const *cols) {
  switch (q->kind) {
    case QN_COL: fprintf(f, "%s", cols[q->col]->name); break;
    case QN_CONST: {
      char digits[48], *d = digits + sizeof digits;
      tu128 m = q->c < 0 ? -(tu128)q->c : (tu128)q->c;
      *--d = '\0';
      do *--d = (char)('0' + (int)(m % 10));
      while (m /= 10);
      fprintf(f, "%s%s/10^%u", q->c < 0 ? "-" : "", d, q->scale);
      break;
    }
    case QN_NULL: fprintf(f, "NULL"); break;
    case QN_ARITH:
      fprintf(f, "(");
      qn_print(f, q->a, cols);
      fprintf(f, " %c ", "+-*"[q->op]);
      qn_print(f, q->b, cols);
      fprintf(f, ")");
      break;
    default:
      fprintf(f, "CASE WHEN ");
      on_print(f, q->when, cols);
      fprintf(f, " THEN ");
      qn_print(f, q->a, cols);
      fprintf(f, " ELSE ");
      if (q->b)
        qn_print(f, q->b, cols);
      else
        fprintf(f, "NULL");
      fprintf(f, " END");
  }
}

/* ---- the oracle's query ------------------------------------------------------ */

void oq_free(oquery *q) {
  on_free(q->where);
  for (int i = 0; i < q->n_aggs; i++) qn_free(q->vals[i]);
  memset(q, 0, sizeof *q);
}

/* Order of two rows by their keys: values ascending, NULL last. */
static tcol *const *sort_cols;
static const oquery *sort_q;
static int key_cmp(uint64_t x, uint64_t y, int k) {
  tcol *c = sort_cols[sort_q->keys[k]];
  int vx = oracle_valid(c, x), vy = oracle_valid(c, y);
  if (!vx || !vy) return vx == vy ? 0 : vx ? -1 : 1;
  if (c->type == PS_TYPE_STRING) {
    const uint8_t *a, *b;
    size_t la, lb;
    oracle_str(c, x, &a, &la);
    oracle_str(c, y, &b, &lb);
    return tstr_cmp(a, la, b, lb);
  }
  ti128 a = oracle_raw(c, x), b = oracle_raw(c, y);
  return a < b ? -1 : a > b;
}
static int rows_cmp(const void *x, const void *y) {
  uint64_t a = *(const uint64_t *)x, b = *(const uint64_t *)y;
  for (int k = 0; k < sort_q->n_keys; k++) {
    int c = key_cmp(a, b, k);
    if (c) return c;
  }
  return a < b ? -1 : a > b;
}

ps_datum odatum(ti128 v, uint32_t scale) {
  ps_datum d;
  memset(&d, 0, sizeof d);
  d.lo = (uint64_t)v;
  d.hi = (int64_t)(v >> 64);
  d.scale = scale;
  return d;
}

ps_datum onull(void) {
  ps_datum d;
  memset(&d, 0, sizeof d);
  d.is_null = 1;
  return d;
}

/* AVG at scale + k, half away from zero, of a sum given as count * whole +
 * part (whole and part of one sign, |part| < count); 0 when it does not fit. */
static int oavg(ti128 whole, ti128 part, uint64_t count, uint32_t k, ti128 *out) {
  int neg = whole < 0 || part < 0;
  tu128 w = neg ? -(tu128)whole : (tu128)whole, r = neg ? -(tu128)part : (tu128)part, p = (tu128)pow10i(k);
  if (w > (tu128)max38() / p) return 0;
  tu128 frac = r * p, q = frac / count;
  if ((frac % count) * 2 >= count) q++;
  if (w * p + q > (tu128)max38()) return 0;
  *out = neg ? -(ti128)(w * p + q) : (ti128)(w * p + q);
  return 1;
}

/* 1 when some node of q has a scale above 38 (refused when built). */
static int scale_too_large(tcol *const *cols, const qnode *q) {
  if (!q) return 0;
  return qn_scale(cols, q) > PS_QUERY_MAX_SCALE || scale_too_large(cols, q->a) || scale_too_large(cols, q->b);
}

void oracle_query(tcol *const *cols, uint64_t n, const oquery *q, oresult *res) {
  memset(res, 0, sizeof *res);
  for (int a = 0; a < q->n_aggs; a++)
    if (scale_too_large(cols, q->vals[a])) {
      res->status = PS_ERR_LIMIT;
      res->keys = th_calloc(1, sizeof(ps_datum));
      res->values = th_calloc(1, sizeof(ps_datum));
      return;
    }
  uint64_t *rows = th_calloc(n ? n : 1, sizeof *rows), m = 0;
  for (uint64_t r = 0; r < n; r++)
    if (!q->where || oracle_row(cols, q->where, r) == K_TRUE) rows[m++] = r;
  /* a selected row's overflowing value fails the whole query */
  for (uint64_t i = 0; i < m; i++)
    for (int a = 0; a < q->n_aggs; a++)
      if (q->vals[a] && qn_eval(cols, q->vals[a], rows[i]).ovf) res->status = PS_ERR_OVERFLOW;
  sort_cols = cols;
  sort_q = q;
  qsort(rows, m, sizeof *rows, rows_cmp);
  res->keys = th_calloc(m + 1, sizeof(ps_datum) * 2);
  res->values = th_calloc(m + 1, sizeof(ps_datum) * PS_QUERY_MAX_AGGS);
  oval *vals = th_calloc(m + 1, sizeof *vals); /* one aggregate's values in a group, evaluated once */
  for (uint64_t i = 0; i < m || (i == 0 && q->n_keys == 0);) {
    uint64_t j = i;
    while (j < m && (j == i || (q->n_keys && !(key_cmp(rows[i], rows[j], 0) || (q->n_keys > 1 && key_cmp(rows[i], rows[j], 1))))))
      j++;
    if (!q->n_keys) j = m;
    uint64_t g = res->groups++;
    for (int k = 0; k < q->n_keys; k++) {
      tcol *c = cols[q->keys[k]];
      ps_datum *d = &res->keys[g * 2 + k];
      if (!oracle_valid(c, rows[i])) {
        *d = onull();
        continue;
      }
      *d = odatum(oracle_raw(c, rows[i]), tcol_is_float(c->type) ? c->scale : 0);
      if (c->type == PS_TYPE_STRING) {
        const uint8_t *s;
        size_t len;
        oracle_str(c, rows[i], &s, &len);
        d->str = (const char *)s;
        d->str_len = len;
      }
    }
    for (int a = 0; a < q->n_aggs; a++) {
      ps_datum *d = &res->values[g * PS_QUERY_MAX_AGGS + a];
      uint32_t s = q->vals[a] ? qn_scale(cols, q->vals[a]) : 0;
      uint64_t count = 0;
      ti128 mn = 0, mx = 0;
      for (uint64_t x = i; x < j; x++) {
        oval v = {0, 0, 0};
        if (q->vals[a]) v = qn_eval(cols, q->vals[a], rows[x]);
        vals[x - i] = v;
        if (v.null || v.ovf) continue;
        if (!count || v.v < mn) mn = v.v;
        if (!count || v.v > mx) mx = v.v;
        count++;
      }
      /* The sum as count * whole + part, so that no partial sum leaves 128
       * bits whatever it adds up to: whole sums the values' quotients by
       * count (at most the largest |value|), part their remainders (below
       * count^2). */
      ti128 whole = 0, part = 0;
      for (uint64_t x = i; count && x < j; x++) {
        const oval v = vals[x - i];
        if (v.null || v.ovf) continue;
        whole += v.v / (ti128)count;
        part += v.v % (ti128)count;
      }
      if (count) {
        whole += part / (ti128)count;
        part %= (ti128)count;
        if (whole > 0 && part < 0) whole--, part += (ti128)count;
        if (whole < 0 && part > 0) whole++, part -= (ti128)count;
      }
      ti128 sum = 0;
      int sum_ok = !__builtin_mul_overflow(whole, (ti128)count, &sum) && !__builtin_add_overflow(sum, part, &sum);
      switch (q->kinds[a]) {
        case PS_AGG_COUNT_STAR:
        case PS_AGG_COUNT: *d = odatum(count, 0); break;
        case PS_AGG_MIN: *d = count ? odatum(mn, s) : onull(); break;
        case PS_AGG_MAX: *d = count ? odatum(mx, s) : onull(); break;
        default: {
          if (!count) {
            *d = onull();
            break;
          }
          if (q->kinds[a] == PS_AGG_SUM) {
            if (!sum_ok || sum > max38() || sum < -max38()) {
              if (res->status == PS_OK) res->status = PS_ERR_OVERFLOW;
              break;
            }
            *d = odatum(sum, s);
            break;
          }
          /* AVG: only the average must fit 38 digits, not the sum */
          uint32_t sa = s > PS_QUERY_AVG_MIN_SCALE ? s : PS_QUERY_AVG_MIN_SCALE;
          ti128 avg;
          if (!oavg(whole, part, count, sa - s, &avg)) {
            if (res->status == PS_OK) res->status = PS_ERR_OVERFLOW;
            break;
          }
          *d = odatum(avg, sa);
        }
      }
    }
    i = j;
    if (!q->n_keys) break;
  }
  free(vals);
  free(rows);
}

void oresult_free(oresult *res) {
  free(res->keys);
  free(res->values);
  res->keys = res->values = NULL;
}

ps_status oq_run(ps_context *ctx, ps_column *const *h, uint64_t n, const oquery *q, int again, ps_query_result **res) {
  ps_value *vals[PS_QUERY_MAX_AGGS] = {0};
  ps_expr *where = NULL;
  ps_agg aggs[PS_QUERY_MAX_AGGS];
  ps_status st = q->where ? on_build(ctx, q->where, h, &where) : PS_OK;
  for (int a = 0; st == PS_OK && a < q->n_aggs; a++) {
    if (q->vals[a]) st = qn_build(ctx, q->vals[a], h, &vals[a]);
    aggs[a].kind = q->kinds[a];
    aggs[a].value = vals[a];
  }
  ps_query *pq = NULL;
  if (st == PS_OK) {
    ps_query_desc d;
    ps_query_desc_init(&d);
    d.rows = n;
    d.where = where;
    d.n_keys = (uint32_t)q->n_keys;
    for (int k = 0; k < q->n_keys; k++) d.keys[k] = h[q->keys[k]];
    d.n_aggs = (uint32_t)q->n_aggs;
    d.aggs = aggs;
    st = ps_query_create(ctx, &d, &pq);
  }
  if (st == PS_OK) {
    st = ps_query_run(ctx, pq, res);
    if (st == PS_OK && again) {
      ps_query_result *second = NULL;
      if (CHECK_OK(ctx, ps_query_run(ctx, pq, &second)))
        CHECK(ps_query_result_groups(second) == ps_query_result_groups(*res));
      ps_query_result_destroy(second);
    }
  }
  ps_query_destroy(pq);
  for (int a = 0; a < q->n_aggs; a++) ps_value_destroy(vals[a]);
  ps_expr_destroy(where);
  return st;
}

int oq_datum_eq(const ps_datum *x, const ps_datum *y, int doubles) {
  if (x->is_null || y->is_null) return x->is_null && y->is_null;
  if (!x->str != !y->str) return 0;
  if (x->str) return x->str_len == y->str_len && !memcmp(x->str, y->str, x->str_len);
  return x->lo == y->lo && x->hi == y->hi && x->scale == y->scale &&
         (!doubles || !memcmp(&x->as_double, &y->as_double, sizeof x->as_double));
}

void oq_print_datum(const char *what, const ps_datum *d) {
  char buf[PS_DATUM_TEXT_SIZE + 64];
  if (ps_datum_format(d, buf, sizeof buf) != PS_OK) strcpy(buf, "(unformattable)");
  fprintf(stderr, "    %s: %s (scale %u, double %.17g)\n", what, buf, d->scale, d->as_double);
}

qnode *col_node(int c) {
  qnode *q = qn_new(QN_COL);
  q->col = c;
  return q;
}
qnode *const_node(ti128 v, uint32_t scale) {
  qnode *q = qn_new(QN_CONST);
  q->c = v;
  q->scale = scale;
  return q;
}
qnode *arith_node(ps_arith op, qnode *a, qnode *b) {
  qnode *q = qn_new(QN_ARITH);
  q->op = op;
  q->a = a;
  q->b = b;
  return q;
}

int oq_limbs_digits(uint32_t *n, int limbs, char *digits) {
  int nd = 0;
  for (;;) {
    int left = 0;
    uint64_t r = 0;
    for (int i = limbs - 1; i >= 0; i--) {
      const uint64_t cur = (r << 32) | n[i];
      n[i] = (uint32_t)(cur / 1000000000u);
      r = cur % 1000000000u;
      left = left || n[i];
    }
    for (int k = 0; k < 9; k++, r /= 10) digits[nd++] = (char)('0' + r % 10);
    if (!left) return nd;
  }
}
