#include "gen.h"

#include <float.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- numeric literals ---------------------------------------------------------- */

/* A literal holding the integer v, in a kind that can hold it. */
static ps_literal int_literal(th_rng *r, ti128 v) {
  int fits_i = v >= INT64_MIN && v <= INT64_MAX;
  int fits_u = v >= 0 && v <= (ti128)UINT64_MAX;
  unsigned k = (unsigned)th_below(r, 10);
  if (k == 0) return ps_lit_float(v < 0 ? (double)(int64_t)v : (double)(uint64_t)v);
  if (fits_i && (k < 6 || !fits_u)) return ps_lit_int((int64_t)v);
  if (fits_u) return ps_lit_uint((uint64_t)v);
  return ps_lit_float((double)v);
}

static ti128 clamp_to_literal_range(ti128 v) {
  if (v < INT64_MIN) return INT64_MIN;
  if (v > (ti128)UINT64_MAX) return (ti128)UINT64_MAX;
  return v;
}

ps_literal gen_num_literal(th_rng *r, tcol *c) {
  /* Values of two random valid rows (if any). */
  uint64_t n = c->n;
  onum v = {0, 0, 0.0, 0, 0}, w = {0, 0, 0.0, 0, 0};
  int have = 0;
  for (int tries = 0; tries < 8 && n && have < 2; tries++) {
    uint64_t row = th_below(r, n);
    if (!oracle_valid(c, row)) continue;
    if (have == 0)
      v = oracle_num(c, row);
    else
      w = oracle_num(c, row);
    have++;
  }
  if (have < 2) w = v;
  int isf = tcol_is_float(c->type);
  ti128 lo, hi;
  tcol_type_range(c->type, &lo, &hi);
  unsigned k = (unsigned)th_below(r, 100);
  if (!have || k < 6) {
    /* type and literal extremes */
    static const int64_t si[] = {INT64_MIN, INT64_MIN + 1, -1, 0, 1, INT64_MAX - 1, INT64_MAX,
                                 INT8_MIN, INT8_MAX, UINT8_MAX, INT16_MIN, UINT16_MAX, INT32_MIN, INT32_MAX};
    switch (th_below(r, 4)) {
      case 0: return ps_lit_uint(th_chance(r, 50) ? UINT64_MAX : (uint64_t)INT64_MAX + 1);
      case 1: return ps_lit_float(th_chance(r, 50) ? 1e300 : -1e300);
      default: return ps_lit_int(TH_PICK(r, si));
    }
  }
  if (k < 10) return ps_lit_float(NAN);
  if (k < 16) { /* an exact decimal at or next to the value, or halfway to the next */
    ti128 raw = v.i;
    unsigned colscale = c->type == PS_TYPE_DECIMAL ? c->scale : 0;
    if (isf) {
      double sc = v.d * pow(10.0, c->scale);
      if (!(fabs(sc) < 9e18)) return ps_lit_float(v.d);
      raw = (ti128)llround(sc);
      colscale = c->scale;
    }
    unsigned extra = (unsigned)th_below(r, 19 - (colscale > 18 ? 18 : colscale));
    ti128 up = 1;
    for (unsigned i = 0; i < extra; i++) up *= 10;
    ti128 u = raw * up + (th_chance(r, 50) ? 0 : th_chance(r, 50) ? up / 2 : (ti128)th_below(r, 3) - 1);
    return ps_lit_decimal128((uint64_t)u, (int64_t)(u >> 64), colscale + extra);
  }
  if (isf) {
    double d = v.d, e = w.d;
    switch (th_below(r, 9)) {
      case 0:
      case 1: return ps_lit_float(d);
      case 2: return ps_lit_float(nextafter(d, INFINITY));
      case 3: return ps_lit_float(nextafter(d, -INFINITY));
      case 4: return ps_lit_float(d / 2 + e / 2);
      case 5: /* float32 neighbours */
        return ps_lit_float((double)nextafterf((float)d, th_chance(r, 50) ? INFINITY : -INFINITY));
      case 6: /* an integer near the value */
        if (fabs(d) < 9e18) return int_literal(r, (ti128)(int64_t)d + (ti128)th_below(r, 3) - 1);
        return ps_lit_float(d);
      case 7: return ps_lit_float(d * (1 + 1e-16 * (double)th_below(r, 5)));
      default: { /* below / above the column's range */
        ti128 mlo = (ti128)c->ref.i;
        double lo_d = (double)(int64_t)mlo / pow(10.0, c->scale);
        return ps_lit_float(th_chance(r, 50) ? lo_d - 1 : -lo_d * 1e3 + 1e19);
      }
    }
  }
  /* integer column */
  ti128 x = v.i, y = w.i;
  ti128 cmin = tcol_is_unsigned(c->type) ? (ti128)c->ref.u : (ti128)c->ref.i;
  ti128 cmax = cmin + (ti128)tcol_width_max(c->width);
  if (cmax > hi) cmax = hi;
  switch (th_below(r, 10)) {
    case 0:
    case 1:
    case 2: return int_literal(r, x);
    case 3: return int_literal(r, clamp_to_literal_range(x + 1));
    case 4: return int_literal(r, clamp_to_literal_range(x - 1));
    case 5: return int_literal(r, clamp_to_literal_range(x / 2 + y / 2));
    case 6: return int_literal(r, clamp_to_literal_range(th_chance(r, 50) ? cmin - 1 : cmax + 1));
    case 7: return int_literal(r, clamp_to_literal_range(th_chance(r, 50) ? lo - 1 : hi + 1));
    case 8: { /* a fractional float between integers */
      double d = x < 0 ? (double)(int64_t)x : (double)(uint64_t)x;
      return ps_lit_float(d + (th_chance(r, 50) ? 0.5 : -0.5));
    }
    default: {
      double d = x < 0 ? (double)(int64_t)x : (double)(uint64_t)x;
      return ps_lit_float(th_chance(r, 50) ? d : nextafter(d, th_chance(r, 50) ? INFINITY : -INFINITY));
    }
  }
}

/* ---- string literals and patterns ------------------------------------------------ */

static void dict_entry(const tcol *c, uint64_t i, const uint8_t **s, size_t *len) {
  int64_t b = c->off64 ? c->off64[i] : c->off32[i];
  int64_t e = c->off64 ? c->off64[i + 1] : c->off32[i + 1];
  *s = c->bytes + b;
  *len = (size_t)(e - b);
}

ps_literal gen_str_literal(th_rng *r, tcol *c, char *buf) {
  static const char *const fixed[] = {"", "a", "b", "ab", "\xc3\xa9", "\xff", "\xff\xff\xff", "%", " ", "A"};
  const uint8_t *s = NULL;
  size_t len = 0;
  if (c->dcount) dict_entry(c, th_below(r, c->dcount), &s, &len);
  if (len > 40) len = 40;
  unsigned k = (unsigned)th_below(r, 10);
  if (!c->dcount || k == 0) {
    const char *f = TH_PICK(r, fixed);
    size_t l = strlen(f);
    memcpy(buf, f, l);
    return ps_lit_str(buf, l);
  }
  if (len) memcpy(buf, s, len);
  switch (k) {
    case 1: /* appended byte: just above */
      buf[len] = th_chance(r, 50) ? 0 : 'a';
      return ps_lit_str(buf, len + 1);
    case 2: /* a proper prefix: just below */
      return ps_lit_str(buf, len ? len - 1 : 0);
    case 3: /* last byte bumped */
      if (len) buf[len - 1] = (char)((uint8_t)buf[len - 1] + (th_chance(r, 50) ? 1 : -1));
      return ps_lit_str(buf, len);
    default: return ps_lit_str(buf, len);
  }
}

/* Split of s into characters as the oracle sees them. */
static size_t char_len(const uint8_t *s, size_t avail) {
  uint8_t c = s[0];
  size_t len = c < 0x80 ? 1 : (c >= 0xC2 && c <= 0xDF) ? 2 : (c >= 0xE0 && c <= 0xEF) ? 3 : (c >= 0xF0 && c <= 0xF4) ? 4 : 1;
  if (len > avail) return 1;
  for (size_t i = 1; i < len; i++)
    if ((s[i] & 0xC0) != 0x80) return 1;
  return len;
}

size_t gen_like_pattern(th_rng *r, tcol *c, char *buf, int *escape) {
  static const int escapes[] = {-1, -1, '\\', '!', '#'};
  *escape = TH_PICK(r, escapes);
  static const char *const fixed[] = {"%", "", "_", "%%", "%a%", "a%", "%b", "__", "_%", "%_",
                                      "%\xc3\xa9%", "\xe2\x82\xac%", "%\xf0\x9d\x84\x9e", "a_b"};
  if (!c->dcount || th_chance(r, 25)) {
    const char *f = TH_PICK(r, fixed);
    size_t l = strlen(f);
    memcpy(buf, f, l);
    return l;
  }
  const uint8_t *s;
  size_t len;
  dict_entry(c, th_below(r, c->dcount), &s, &len);
  size_t out = 0;
  if (th_chance(r, 20)) buf[out++] = '%';
  for (size_t i = 0; i < len && out < 100;) {
    size_t cl = char_len(s + i, len - i);
    int invalid = cl == 1 && s[i] >= 0x80;
    unsigned k = (unsigned)th_below(r, 100);
    if (invalid || k < 12) {
      buf[out++] = '_'; /* one character, whatever its byte length */
    } else if (k < 18) {
      buf[out++] = '%';
    } else if (k < 22) {
      /* drop the character */
    } else {
      int is_esc = *escape >= 0 && cl == 1 && s[i] == (uint8_t)*escape;
      int meta = cl == 1 && (s[i] == '%' || s[i] == '_');
      /* The escape character itself is always doubled (an escape followed by
       * anything but %, _ or itself is not a pattern); % and _ are mostly
       * escaped to literals, sometimes left as wildcards. */
      if (is_esc || (meta && *escape >= 0 && th_chance(r, 80))) buf[out++] = (char)*escape;
      memcpy(buf + out, s + i, cl);
      out += cl;
    }
    if (th_chance(r, 5)) buf[out++] = '%';
    i += cl;
  }
  if (th_chance(r, 20)) buf[out++] = '%';
  /* A trailing lone escape would be an invalid pattern: escape it. */
  if (*escape >= 0 && out > 0) {
    size_t run = 0;
    for (size_t i = out; i > 0 && (uint8_t)buf[i - 1] == (uint8_t)*escape; i--) run++;
    if (run % 2) buf[out++] = (char)*escape;
  }
  return out;
}

/* ---- leaves and trees --------------------------------------------------------------- */

static ps_cmp random_cmp(th_rng *r) { return (ps_cmp)th_below(r, 6); }

static ps_literal any_literal(th_rng *r, tcol *c, char *buf) {
  return c->type == PS_TYPE_STRING ? gen_str_literal(r, c, buf) : gen_num_literal(r, c);
}

static double num_lit_double(ps_literal l) {
  if (l.kind == PS_LIT_DECIMAL) return oracle_decimal_double(l);
  return l.kind == PS_LIT_INT64 ? (double)l.v.i : l.kind == PS_LIT_UINT64 ? (double)l.v.u : l.v.f;
}

/* Orders two literals of a column ascending (for a non-empty BETWEEN). */
static int lit_less(ps_literal a, ps_literal b) {
  if (a.kind == PS_LIT_STRING)
    return tstr_cmp((const uint8_t *)a.v.s.ptr, a.v.s.len, (const uint8_t *)b.v.s.ptr, b.v.s.len) < 0;
  return num_lit_double(a) < num_lit_double(b);
}

onode *gen_leaf(th_rng *r, trun *tr, int col, int partner) {
  tcol *c = tr->cols[col];
  int str = c->type == PS_TYPE_STRING;
  char b1[128], b2[128];
  unsigned k = (unsigned)th_below(r, 100);
  if (partner >= 0 && k < 15) return on_cmpcol(col, random_cmp(r), partner);
  if (k < 22) return on_isnull(col, th_chance(r, 50));
  if (k < 32) {
    ps_literal lo = any_literal(r, c, b1), hi = any_literal(r, c, b2);
    if (th_chance(r, 75) && lit_less(hi, lo)) {
      ps_literal t = lo;
      lo = hi;
      hi = t;
    }
    return on_between(col, lo, hi);
  }
  if (k < 42) {
    static const size_t sizes[] = {0, 1, 2, 3, 5, 8, 100, 100, 30};
    size_t count = TH_PICK(r, sizes);
    ps_literal *list = th_calloc(count ? count : 1, sizeof *list);
    char (*bufs)[128] = th_calloc(count ? count : 1, sizeof *bufs);
    for (size_t i = 0; i < count; i++) list[i] = any_literal(r, c, bufs[i]);
    onode *t = on_in(col, list, count);
    free(list);
    free(bufs);
    return t;
  }
  if (str && k < 65) {
    int esc;
    size_t len = gen_like_pattern(r, c, b1, &esc);
    return on_like(col, b1, len, esc, th_chance(r, 30));
  }
  return on_cmp(col, random_cmp(r), any_literal(r, c, b1));
}

static int compatible(const tcol *a, const tcol *b) {
  return a->n == b->n && (a->type == PS_TYPE_STRING) == (b->type == PS_TYPE_STRING);
}

static onode *random_leaf_from(th_rng *r, trun *tr, const int *cols, size_t ncols) {
  int col = cols[th_below(r, ncols)];
  int partners[TR_MAX_COLS];
  size_t np = 0;
  for (size_t i = 0; i < ncols; i++)
    if (cols[i] != col && compatible(tr->cols[col], tr->cols[cols[i]])) partners[np++] = cols[i];
  return gen_leaf(r, tr, col, np ? partners[th_below(r, np)] : -1);
}

static onode *tree_rec(th_rng *r, trun *tr, const int *cols, size_t ncols, int height) {
  onode *t;
  if (height <= 1) {
    t = random_leaf_from(r, tr, cols, ncols);
  } else {
    onode *a = tree_rec(r, tr, cols, ncols, height - 1);
    onode *b = tree_rec(r, tr, cols, ncols, 1 + (int)th_below(r, (uint64_t)height - 1));
    if (th_chance(r, 50)) {
      onode *x = a;
      a = b;
      b = x;
    }
    t = th_chance(r, 50) ? on_and(a, b) : on_or(a, b);
  }
  if (th_chance(r, 15)) t = on_not(t);
  return t;
}

onode *gen_tree(th_rng *r, trun *tr, const int *cols, size_t ncols, int height, size_t max_nodes) {
  for (;;) {
    onode *t = tree_rec(r, tr, cols, ncols, height);
    if (on_size(t) <= max_nodes) return t;
    on_free(t);
  }
}
