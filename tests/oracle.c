#include "oracle.h"

#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- tree construction ---------------------------------------------------- */

static ps_literal copy_lit(ps_literal l) {
  if (l.kind == PS_LIT_STRING) {
    char *p = th_malloc(l.v.s.len + 1);
    if (l.v.s.len) memcpy(p, l.v.s.ptr, l.v.s.len);
    p[l.v.s.len] = 0;
    l.v.s.ptr = p;
  }
  return l;
}

static void free_lit(ps_literal *l) {
  if (l->kind == PS_LIT_STRING) free((void *)l->v.s.ptr);
}

static onode *node(onode_kind kind) {
  onode *t = th_calloc(1, sizeof *t);
  t->kind = kind;
  t->col = t->col_b = -1;
  t->escape = -1;
  return t;
}

onode *on_cmp(int col, ps_cmp op, ps_literal lit) {
  onode *t = node(ON_CMP);
  t->col = col;
  t->cmp = op;
  t->lit = copy_lit(lit);
  return t;
}

onode *on_cmpcol(int col, ps_cmp op, int col_b) {
  onode *t = node(ON_CMPCOL);
  t->col = col;
  t->cmp = op;
  t->col_b = col_b;
  return t;
}

onode *on_between(int col, ps_literal lo, ps_literal hi) {
  onode *t = node(ON_BETWEEN);
  t->col = col;
  t->lit = copy_lit(lo);
  t->lit2 = copy_lit(hi);
  return t;
}

onode *on_in(int col, const ps_literal *list, size_t count) {
  onode *t = node(ON_IN);
  t->col = col;
  t->count = count;
  t->list = th_calloc(count ? count : 1, sizeof *t->list);
  for (size_t i = 0; i < count; i++) t->list[i] = copy_lit(list[i]);
  return t;
}

onode *on_like(int col, const char *pattern, size_t len, int escape, int negate) {
  onode *t = node(ON_LIKE);
  t->col = col;
  t->pattern = th_strdup_n(pattern, len);
  t->plen = len;
  t->escape = escape;
  t->negate = negate;
  return t;
}

onode *on_isnull(int col, int negate) {
  onode *t = node(ON_ISNULL);
  t->col = col;
  t->negate = negate;
  return t;
}

onode *on_and(onode *a, onode *b) {
  onode *t = node(ON_AND);
  t->a = a;
  t->b = b;
  return t;
}

onode *on_or(onode *a, onode *b) {
  onode *t = node(ON_OR);
  t->a = a;
  t->b = b;
  return t;
}

onode *on_not(onode *a) {
  onode *t = node(ON_NOT);
  t->a = a;
  return t;
}

void on_free(onode *t) {
  if (!t) return;
  on_free(t->a);
  on_free(t->b);
  free_lit(&t->lit);
  free_lit(&t->lit2);
  for (size_t i = 0; i < t->count; i++) free_lit(&t->list[i]);
  free(t->list);
  free(t->pattern);
  free(t);
}

size_t on_size(const onode *t) { return t ? 1 + on_size(t->a) + on_size(t->b) : 0; }

size_t on_height(const onode *t) {
  if (!t) return 0;
  size_t a = on_height(t->a), b = on_height(t->b);
  return 1 + (a > b ? a : b);
}

int on_first_col(const onode *t) {
  if (!t) return -1;
  if (t->col >= 0) return t->col;
  int c = on_first_col(t->a);
  return c >= 0 ? c : on_first_col(t->b);
}

ps_status on_build(ps_context *ctx, const onode *t, ps_column *const *h, ps_expr **out) {
  ps_expr *a = NULL, *b = NULL;
  ps_status st;
  switch (t->kind) {
    case ON_CMP: return ps_expr_compare(ctx, h[t->col], t->cmp, t->lit, out);
    case ON_CMPCOL: return ps_expr_compare_columns(ctx, h[t->col], t->cmp, h[t->col_b], out);
    case ON_BETWEEN: return ps_expr_between(ctx, h[t->col], t->lit, t->lit2, out);
    case ON_IN: return ps_expr_in(ctx, h[t->col], t->list, t->count, out);
    case ON_LIKE:
      return ps_expr_like(ctx, h[t->col], t->pattern, t->plen, t->escape, t->negate, out);
    case ON_ISNULL: return ps_expr_is_null(ctx, h[t->col], t->negate, out);
    case ON_AND:
    case ON_OR:
      st = on_build(ctx, t->a, h, &a);
      if (st != PS_OK) return st;
      st = on_build(ctx, t->b, h, &b);
      if (st != PS_OK) {
        ps_expr_destroy(a);
        return st;
      }
      st = t->kind == ON_AND ? ps_expr_and(ctx, a, b, out) : ps_expr_or(ctx, a, b, out);
      if (st != PS_OK) { /* operands stay ours on failure */
        ps_expr_destroy(a);
        ps_expr_destroy(b);
      }
      return st;
    case ON_NOT:
      st = on_build(ctx, t->a, h, &a);
      if (st != PS_OK) return st;
      st = ps_expr_not(ctx, a, out);
      if (st != PS_OK) ps_expr_destroy(a);
      return st;
  }
  return PS_ERR_INTERNAL;
}

/* ---- printing ---------------------------------------------------------------- */

static void print_i128(FILE *f, ti128 v) {
  char buf[64];
  int pos = 63;
  buf[pos] = 0;
  int neg = v < 0;
  tu128 u = neg ? (tu128)(-(v + 1)) + 1 : (tu128)v;
  do {
    buf[--pos] = (char)('0' + (int)(u % 10));
    u /= 10;
  } while (u);
  if (neg) buf[--pos] = '-';
  fputs(buf + pos, f);
}

static void print_bytes(FILE *f, const uint8_t *s, size_t len) {
  fputc('\'', f);
  for (size_t i = 0; i < len; i++) {
    if (s[i] >= 0x20 && s[i] < 0x7f && s[i] != '\'' && s[i] != '\\')
      fputc(s[i], f);
    else
      fprintf(f, "\\x%02x", s[i]);
  }
  fputc('\'', f);
}

static void print_lit(FILE *f, ps_literal l) {
  switch (l.kind) {
    case PS_LIT_INT64: fprintf(f, "int(%" PRId64 ")", l.v.i); break;
    case PS_LIT_UINT64: fprintf(f, "uint(%" PRIu64 ")", l.v.u); break;
    case PS_LIT_FLOAT64: fprintf(f, "float(%.17g)", l.v.f); break;
    case PS_LIT_STRING: print_bytes(f, (const uint8_t *)l.v.s.ptr, l.v.s.len); break;
    case PS_LIT_DECIMAL:
      fputs("dec(", f);
      print_i128(f, oracle_decimal_unscaled(l));
      fprintf(f, "e-%u)", (unsigned)l.v.d.scale);
      break;
    default: fprintf(f, "lit(kind %d)", (int)l.kind); break;
  }
}

static const char *cmp_text(ps_cmp c) {
  static const char *const names[] = {"==", "!=", "<", "<=", ">", ">="};
  return (unsigned)c < 6 ? names[c] : "?";
}

void on_print(FILE *f, const onode *t, tcol *const *cols) {
  (void)cols;
  switch (t->kind) {
    case ON_CMP:
      fprintf(f, "c%d %s ", t->col, cmp_text(t->cmp));
      print_lit(f, t->lit);
      break;
    case ON_CMPCOL: fprintf(f, "c%d %s c%d", t->col, cmp_text(t->cmp), t->col_b); break;
    case ON_BETWEEN:
      fprintf(f, "c%d BETWEEN ", t->col);
      print_lit(f, t->lit);
      fprintf(f, " AND ");
      print_lit(f, t->lit2);
      break;
    case ON_IN:
      fprintf(f, "c%d IN (", t->col);
      for (size_t i = 0; i < t->count; i++) {
        if (i) fprintf(f, ", ");
        print_lit(f, t->list[i]);
      }
      fprintf(f, ")");
      break;
    case ON_LIKE:
      fprintf(f, "c%d %sLIKE ", t->col, t->negate ? "NOT " : "");
      print_bytes(f, (const uint8_t *)t->pattern, t->plen);
      if (t->escape >= 0) fprintf(f, " ESCAPE '\\x%02x'", t->escape);
      break;
    case ON_ISNULL: fprintf(f, "c%d IS %sNULL", t->col, t->negate ? "NOT " : ""); break;
    case ON_AND:
    case ON_OR:
      fprintf(f, "%s(", t->kind == ON_AND ? "AND" : "OR");
      on_print(f, t->a, cols);
      fprintf(f, ", ");
      on_print(f, t->b, cols);
      fprintf(f, ")");
      break;
    case ON_NOT:
      fprintf(f, "NOT(");
      on_print(f, t->a, cols);
      fprintf(f, ")");
      break;
  }
}

/* ---- decoding (design.md "Column formats") ---------------------------------- */

/* Reads code i bit by bit: stream bit k is bit k%8 of byte k/8. */
static uint64_t read_code(const uint8_t *data, uint64_t i, uint32_t w) {
  uint64_t v = 0;
  for (uint32_t j = 0; j < w; j++) {
    uint64_t k = i * w + j;
    v |= (uint64_t)((data[k >> 3] >> (k & 7)) & 1u) << j;
  }
  return v;
}

const uint64_t *oracle_codes(tcol *c) {
  if (!c->ocodes) {
    c->ocodes = th_calloc(c->n ? c->n : 1, sizeof *c->ocodes);
    for (uint64_t i = 0; i < c->n; i++) c->ocodes[i] = read_code(c->data, i, c->width);
  }
  return c->ocodes;
}

int oracle_valid(const tcol *c, uint64_t row) {
  return !c->validity || ((c->validity[row >> 3] >> (row & 7)) & 1);
}

ti128 oracle_raw(tcol *c, uint64_t row) {
  uint64_t code = oracle_codes(c)[row];
  if (c->type == PS_TYPE_STRING || tcol_is_unsigned(c->type)) return (ti128)c->ref.u + code;
  return (ti128)c->ref.i + code;
}

/* 10^s, exact as doubles for s <= 18 (the test's own table). */
static const double P10[19] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8, 1e9,
                               1e10, 1e11, 1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18};

onum oracle_num(tcol *c, uint64_t row) {
  onum v = {0, 0, 0.0, 0, 0};
  ti128 raw = oracle_raw(c, row);
  if (tcol_is_float(c->type)) {
    double d = (double)(int64_t)raw / P10[c->scale];
    if (c->type == PS_TYPE_FLOAT32) d = (double)(float)d;
    v.isf = 1;
    v.d = d;
  } else {
    v.i = raw;
    if (c->type == PS_TYPE_DECIMAL) v.dec = 1, v.scale = c->scale;
  }
  return v;
}

int oracle_str(tcol *c, uint64_t row, const uint8_t **s, size_t *len) {
  ti128 idx = oracle_raw(c, row);
  if (idx < 0 || idx >= (ti128)c->dcount) return 0;
  int64_t b = c->off64 ? c->off64[(size_t)idx] : c->off32[(size_t)idx];
  int64_t e = c->off64 ? c->off64[(size_t)idx + 1] : c->off32[(size_t)idx + 1];
  *s = c->bytes + b;
  *len = (size_t)(e - b);
  return 1;
}

int oracle_corrupt(tcol *c, uint64_t row) {
  if (!oracle_valid(c, row)) return 0;
  ti128 raw = oracle_raw(c, row);
  ti128 lo, hi;
  if (c->type == PS_TYPE_STRING) {
    tcol_type_range(c->code_type, &lo, &hi);
    return raw > hi || raw >= (ti128)c->dcount;
  }
  tcol_type_range(c->type, &lo, &hi);
  return raw < lo || raw > hi;
}

/* ---- comparisons ------------------------------------------------------------- */

static double to_double(onum v) {
  if (v.isf) return v.d;
  /* Values are within int64 or uint64: convert through them (round to nearest);
   * a decimal as a double is its unscaled int64 over 10^scale (design.md). */
  if (v.dec) return (double)(int64_t)v.i / P10[v.scale];
  return v.i < 0 ? (double)(int64_t)v.i : (double)(uint64_t)v.i;
}

static ti128 pow10_i128(unsigned s) {
  ti128 p = 1;
  while (s--) p *= 10;
  return p;
}

/* Exact order of a / 10^sa against b / 10^sb (|a|, |b| < 2^127, scales <= 38):
 * the integer parts (truncated toward zero) first, then the fractions, both
 * brought to the larger scale (each stays below 10^38). */
static int exact_order(ti128 a, unsigned sa, ti128 b, unsigned sb) {
  ti128 pa = pow10_i128(sa), pb = pow10_i128(sb);
  ti128 qa = a / pa, qb = b / pb;
  if (qa != qb) return qa < qb ? -1 : 1;
  unsigned s = sa > sb ? sa : sb;
  ti128 fa = (a % pa) * pow10_i128(s - sa), fb = (b % pb) * pow10_i128(s - sb);
  return fa < fb ? -1 : fa > fb ? 1 : 0;
}

/* -1, 0, 1, or 2 when unordered (NaN). Floats involved: IEEE doubles; else exact. */
static int num_order(onum a, onum b) {
  if (a.isf || b.isf) {
    double x = to_double(a), y = to_double(b);
    if (isnan(x) || isnan(y)) return 2;
    return x < y ? -1 : x > y ? 1 : 0;
  }
  return exact_order(a.i, a.scale, b.i, b.scale);
}

static int holds(int order, ps_cmp op) {
  if (order == 2) return op == PS_NE;
  switch (op) {
    case PS_EQ: return order == 0;
    case PS_NE: return order != 0;
    case PS_LT: return order < 0;
    case PS_LE: return order <= 0;
    case PS_GT: return order > 0;
    case PS_GE: return order >= 0;
  }
  return 0;
}

static onum lit_num(ps_literal l) {
  onum v = {0, 0, 0.0, 0, 0};
  if (l.kind == PS_LIT_INT64)
    v.i = l.v.i;
  else if (l.kind == PS_LIT_UINT64)
    v.i = (ti128)l.v.u;
  else {
    v.isf = 1;
    v.d = l.v.f;
  }
  return v;
}

ti128 oracle_decimal_unscaled(ps_literal l) {
  return (ti128)(((tu128)(uint64_t)l.v.d.hi << 64) | l.v.d.lo);
}

double oracle_decimal_double(ps_literal l) {
  /* The decimal as text with a point ("-12.345"), read by strtod in the C
   * locale: the library goes through digits and an exponent instead. */
  char d[48], buf[96];
  ti128 u = oracle_decimal_unscaled(l);
  tu128 m = u < 0 ? (tu128)0 - (tu128)u : (tu128)u;
  int n = 0, k = 0, s = (int)l.v.d.scale;
  do {
    d[n++] = (char)('0' + (int)(m % 10));
    m /= 10;
  } while (m);
  if (u < 0) buf[k++] = '-';
  if (n <= s) {
    buf[k++] = '0';
    buf[k++] = '.';
    for (int z = n; z < s; z++) buf[k++] = '0';
    for (int i = n - 1; i >= 0; i--) buf[k++] = d[i];
  } else {
    for (int i = n - 1; i >= 0; i--) {
      buf[k++] = d[i];
      if (i == s && s > 0) buf[k++] = '.';
    }
  }
  buf[k] = 0;
  return strtod(buf, NULL);
}

/* Order of row's value against a literal (numeric or string column). */
static int order_vs_lit(tcol *c, uint64_t row, ps_literal l) {
  if (c->type == PS_TYPE_STRING) {
    const uint8_t *s;
    size_t len;
    if (!oracle_str(c, row, &s, &len)) return 2;
    return tstr_cmp(s, len, (const uint8_t *)l.v.s.ptr, l.v.s.len);
  }
  if (l.kind == PS_LIT_DECIMAL) {
    onum v = oracle_num(c, row);
    if (!v.isf) return exact_order(v.i, v.scale, oracle_decimal_unscaled(l), l.v.d.scale);
    /* design.md: on float columns a decimal literal is its nearest double */
    l = ps_lit_float(oracle_decimal_double(l));
  }
  onum v = oracle_num(c, row), x = lit_num(l);
  /* decimal columns against doubles: as doubles (design.md) */
  if (v.isf || !x.isf || v.dec) return num_order(v, x);
  /* An integer column against a float literal: compared by exact value
   * (design.md: integers compare by value), not after rounding the integer
   * to a double. */
  double d = x.d;
  if (isnan(d)) return 2;
  if (d >= 0x1p100) return -1;
  if (d <= -0x1p100) return 1;
  ti128 fl = (ti128)floor(d);
  if (v.i < fl) return -1;
  if (v.i > fl) return 1;
  return (double)floor(d) == d ? 0 : -1;
}

/* ---- LIKE ----------------------------------------------------------------------- */

/* Length of the UTF-8 character at s (strictly valid sequences, Unicode table
 * 3-7: no overlongs, no surrogates, <= U+10FFFF), or 1 where invalid. */
static size_t utf8_char_len(const uint8_t *s, size_t avail) {
  uint8_t c = s[0];
  size_t len;
  if (c < 0x80) return 1;
  if (c >= 0xC2 && c <= 0xDF)
    len = 2;
  else if (c >= 0xE0 && c <= 0xEF)
    len = 3;
  else if (c >= 0xF0 && c <= 0xF4)
    len = 4;
  else
    return 1;
  if (len > avail) return 1;
  for (size_t i = 1; i < len; i++)
    if ((s[i] & 0xC0) != 0x80) return 1;
  if (c == 0xE0 && s[1] < 0xA0) return 1;
  if (c == 0xED && s[1] > 0x9F) return 1;
  if (c == 0xF0 && s[1] < 0x90) return 1;
  if (c == 0xF4 && s[1] > 0x8F) return 1;
  return len;
}

enum { TOK_LIT = 0, TOK_ONE = 1, TOK_ANY = 2 };

int oracle_like(const uint8_t *s, size_t slen, const char *pat, size_t plen, int escape) {
  const uint8_t *p = (const uint8_t *)pat;
  int *tok = th_calloc(plen + 1, sizeof *tok);
  uint8_t *lit = th_calloc(plen + 1, 1);
  size_t nt = 0;
  for (size_t i = 0; i < plen; i++) {
    if (escape >= 0 && p[i] == (uint8_t)escape) {
      if (i + 1 >= plen) {
        free(tok);
        free(lit);
        return -1;
      }
      tok[nt] = TOK_LIT;
      lit[nt++] = p[++i];
    } else if (p[i] == '%') {
      tok[nt++] = TOK_ANY;
    } else if (p[i] == '_') {
      tok[nt++] = TOK_ONE;
    } else {
      tok[nt] = TOK_LIT;
      lit[nt++] = p[i];
    }
  }
  /* reach[k]: the subject prefix of k bytes is matched by the tokens so far. */
  uint8_t *reach = th_calloc(slen + 1, 1), *next = th_calloc(slen + 1, 1);
  reach[0] = 1;
  for (size_t t = 0; t < nt; t++) {
    memset(next, 0, slen + 1);
    for (size_t k = 0; k <= slen; k++) {
      if (!reach[k]) continue;
      if (tok[t] == TOK_LIT) {
        if (k < slen && s[k] == lit[t]) next[k + 1] = 1;
      } else if (tok[t] == TOK_ONE) {
        if (k < slen) next[k + utf8_char_len(s + k, slen - k)] = 1;
      } else {
        size_t q = k;
        next[q] = 1;
        while (q < slen) {
          q += utf8_char_len(s + q, slen - q);
          next[q] = 1;
        }
      }
    }
    uint8_t *x = reach;
    reach = next;
    next = x;
  }
  int m = reach[slen];
  free(reach);
  free(next);
  free(tok);
  free(lit);
  return m;
}

/* ---- Kleene evaluation -------------------------------------------------------- */

static kleene kb(int b) { return b ? K_TRUE : K_FALSE; }

kleene oracle_row(tcol *const *cols, const onode *t, uint64_t row) {
  tcol *c = t->col >= 0 ? cols[t->col] : NULL;
  switch (t->kind) {
    case ON_CMP:
      if (!oracle_valid(c, row)) return K_UNKNOWN;
      return kb(holds(order_vs_lit(c, row, t->lit), t->cmp));
    case ON_CMPCOL: {
      tcol *d = cols[t->col_b];
      if (!oracle_valid(c, row) || !oracle_valid(d, row)) return K_UNKNOWN;
      int order;
      if (c->type == PS_TYPE_STRING) {
        const uint8_t *x, *y;
        size_t xl, yl;
        if (!oracle_str(c, row, &x, &xl) || !oracle_str(d, row, &y, &yl)) return K_UNKNOWN;
        order = tstr_cmp(x, xl, y, yl);
      } else {
        order = num_order(oracle_num(c, row), oracle_num(d, row));
      }
      return kb(holds(order, t->cmp));
    }
    case ON_BETWEEN:
      if (!oracle_valid(c, row)) return K_UNKNOWN;
      return kb(holds(order_vs_lit(c, row, t->lit), PS_GE) && holds(order_vs_lit(c, row, t->lit2), PS_LE));
    case ON_IN:
      if (!oracle_valid(c, row)) return K_UNKNOWN;
      for (size_t i = 0; i < t->count; i++)
        if (holds(order_vs_lit(c, row, t->list[i]), PS_EQ)) return K_TRUE;
      return K_FALSE;
    case ON_LIKE: {
      if (!oracle_valid(c, row)) return K_UNKNOWN;
      const uint8_t *s;
      size_t len;
      if (!oracle_str(c, row, &s, &len)) return K_UNKNOWN;
      int m = oracle_like(s, len, t->pattern, t->plen, t->escape);
      return kb(m == 1 ? !t->negate : t->negate);
    }
    case ON_ISNULL: return kb(!oracle_valid(c, row) ^ (t->negate != 0)); /* never UNKNOWN */
    case ON_AND: {
      kleene a = oracle_row(cols, t->a, row), b = oracle_row(cols, t->b, row);
      if (a == K_FALSE || b == K_FALSE) return K_FALSE;
      if (a == K_TRUE && b == K_TRUE) return K_TRUE;
      return K_UNKNOWN;
    }
    case ON_OR: {
      kleene a = oracle_row(cols, t->a, row), b = oracle_row(cols, t->b, row);
      if (a == K_TRUE || b == K_TRUE) return K_TRUE;
      if (a == K_FALSE && b == K_FALSE) return K_FALSE;
      return K_UNKNOWN;
    }
    case ON_NOT: {
      kleene a = oracle_row(cols, t->a, row);
      return a == K_TRUE ? K_FALSE : a == K_FALSE ? K_TRUE : K_UNKNOWN;
    }
  }
  return K_UNKNOWN;
}

uint64_t oracle_filter(tcol *const *cols, const onode *t, uint64_t n, uint8_t *bitmap) {
  uint64_t nb = (n + 7) / 8, count = 0;
  if (nb) memset(bitmap, 0, nb);
  for (uint64_t r = 0; r < n; r++) {
    if (oracle_row(cols, t, r) == K_TRUE) {
      bitmap[r >> 3] |= (uint8_t)(1u << (r & 7));
      count++;
    }
  }
  return count;
}

static void mark_cols(const onode *t, int *used, int max) {
  if (!t) return;
  if (t->col >= 0 && t->col < max) used[t->col] = 1;
  if (t->col_b >= 0 && t->col_b < max) used[t->col_b] = 1;
  mark_cols(t->a, used, max);
  mark_cols(t->b, used, max);
}

void oracle_print_row(FILE *f, tcol *const *cols, const onode *t, uint64_t row) {
  int used[64] = {0};
  mark_cols(t, used, 64);
  for (int i = 0; i < 64; i++) {
    if (!used[i]) continue;
    tcol *c = cols[i];
    fprintf(f, "  row %" PRIu64 ": c%d = ", row, i);
    if (!oracle_valid(c, row)) {
      fprintf(f, "NULL (code %" PRIu64 ")\n", oracle_codes(c)[row]);
      continue;
    }
    if (c->type == PS_TYPE_STRING) {
      const uint8_t *s;
      size_t len;
      if (oracle_str(c, row, &s, &len)) {
        print_bytes(f, s, len);
        fprintf(f, " (code %" PRIu64 ")\n", oracle_codes(c)[row]);
      } else {
        fprintf(f, "<corrupt code %" PRIu64 ">\n", oracle_codes(c)[row]);
      }
    } else {
      onum v = oracle_num(c, row);
      if (v.isf)
        fprintf(f, "%.17g", v.d);
      else
        print_i128(f, v.i);
      fprintf(f, " (code %" PRIu64 ")\n", oracle_codes(c)[row]);
    }
  }
}
