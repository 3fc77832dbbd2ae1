#include "tcol.h"

#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "oracle.h"

/* ---- strings ---------------------------------------------------------------- */

void tstrs_push(tstrs *l, const void *s, size_t len) {
  l->s = realloc(l->s, (l->count + 1) * sizeof *l->s);
  l->len = realloc(l->len, (l->count + 1) * sizeof *l->len);
  if (!l->s || !l->len) {
    printf("FAIL: out of host memory\n");
    exit(1);
  }
  l->s[l->count] = th_malloc(len + 1);
  if (len) memcpy(l->s[l->count], s, len);
  l->len[l->count] = len;
  l->count++;
}

void tstrs_free(tstrs *l) {
  for (size_t i = 0; i < l->count; i++) free(l->s[i]);
  free(l->s);
  free(l->len);
  memset(l, 0, sizeof *l);
}

int tstr_cmp(const uint8_t *a, size_t alen, const uint8_t *b, size_t blen) {
  size_t m = alen < blen ? alen : blen;
  int c = m ? memcmp(a, b, m) : 0;
  if (c) return c < 0 ? -1 : 1;
  return alen < blen ? -1 : alen > blen ? 1 : 0;
}

/* ---- types -------------------------------------------------------------------- */

int tcol_is_float(ps_type t) { return t == PS_TYPE_FLOAT32 || t == PS_TYPE_FLOAT64; }
int tcol_is_unsigned(ps_type t) { return t >= PS_TYPE_UINT8 && t <= PS_TYPE_UINT64; }

void tcol_type_range(ps_type t, ti128 *lo, ti128 *hi) {
  switch (t) {
    case PS_TYPE_INT8: *lo = INT8_MIN; *hi = INT8_MAX; break;
    case PS_TYPE_INT16: *lo = INT16_MIN; *hi = INT16_MAX; break;
    case PS_TYPE_INT32: *lo = INT32_MIN; *hi = INT32_MAX; break;
    case PS_TYPE_UINT8: *lo = 0; *hi = UINT8_MAX; break;
    case PS_TYPE_UINT16: *lo = 0; *hi = UINT16_MAX; break;
    case PS_TYPE_UINT32: *lo = 0; *hi = UINT32_MAX; break;
    case PS_TYPE_UINT64: *lo = 0; *hi = (ti128)UINT64_MAX; break;
    default: *lo = INT64_MIN; *hi = INT64_MAX; break; /* int64, floats (raw) */
  }
}

uint64_t tcol_width_max(uint32_t w) { return w >= 64 ? UINT64_MAX : w == 0 ? 0 : ((1ull << w) - 1); }

uint32_t tcol_bits(uint64_t v) {
  uint32_t b = 0;
  while (v) {
    b++;
    v >>= 1;
  }
  return b;
}

/* ---- validity ----------------------------------------------------------------- */

uint8_t *tcol_random_validity(th_rng *r, uint64_t n, int mode) {
  if (mode == TN_NO_BITMAP) return NULL;
  uint64_t nb = (n + 7) / 8;
  uint8_t *v = th_calloc(nb ? nb : 1, 1);
  unsigned pct_null = mode == TN_NONE_NULL ? 0 : mode == TN_FEW ? 10 : mode == TN_HALF ? 50 : mode == TN_MOST ? 90 : 100;
  for (uint64_t i = 0; i < n; i++)
    if (!th_chance(r, pct_null)) v[i / 8] |= (uint8_t)(1u << (i % 8));
  /* Padding bits past n are unspecified in Arrow: make them random. */
  for (uint64_t i = n; i < nb * 8; i++)
    if (th_chance(r, 50)) v[i / 8] |= (uint8_t)(1u << (i % 8));
  return v;
}

int tcol_valid(const tcol *c, uint64_t row) {
  return !c->validity || ((c->validity[row / 8] >> (row % 8)) & 1);
}

/* ---- building ----------------------------------------------------------------- */

void tcol_pack(uint8_t *data, uint64_t n, uint32_t w, const uint64_t *codes) {
  for (uint64_t i = 0; i < n; i++) {
    uint64_t c = codes[i];
    for (uint32_t j = 0; j < w; j++) {
      if ((c >> j) & 1) {
        uint64_t k = i * w + j;
        data[k / 8] |= (uint8_t)(1u << (k % 8));
      }
    }
  }
}

uint64_t tcol_code(const tcol *c, uint64_t i) {
  uint64_t v = 0;
  for (uint32_t b = 0; b < c->width; b++) {
    uint64_t k = i * c->width + b;
    v |= (uint64_t)((c->data[k >> 3] >> (k & 7)) & 1) << b;
  }
  return v;
}

static void fill_common(tcol *c, uint64_t n, uint32_t width, const uint64_t *codes,
                        const uint8_t *validity, th_rng *garbage) {
  c->n = n;
  c->width = width;
  c->data_size = (n * width + 7) / 8;
  c->data = th_calloc(c->data_size ? c->data_size : 1, 1);
  tcol_pack(c->data, n, width, codes);
  if (garbage) {
    for (uint64_t k = n * width; k < c->data_size * 8; k++)
      if (th_chance(garbage, 50)) c->data[k / 8] |= (uint8_t)(1u << (k % 8));
  }
  if (validity) {
    uint64_t nb = (n + 7) / 8;
    c->validity = th_malloc(nb ? nb : 1);
    if (nb) memcpy(c->validity, validity, nb);
  }
}

tcol *tcol_for(ps_type type, uint64_t n, uint32_t width, uint32_t scale, ps_reference ref,
               const uint64_t *codes, const uint8_t *validity, th_rng *garbage) {
  tcol *c = th_calloc(1, sizeof *c);
  c->type = type;
  c->code_type = type;
  c->scale = scale;
  c->ref = ref;
  fill_common(c, n, width, codes, validity, garbage);
  return c;
}

tcol *tcol_dict(const tstrs *dict, int sorted_flag, int use64, ps_type code_type, uint64_t n,
                uint32_t width, uint64_t m, const uint64_t *codes, const uint8_t *validity,
                th_rng *garbage) {
  tcol *c = th_calloc(1, sizeof *c);
  c->type = PS_TYPE_STRING;
  c->code_type = code_type;
  c->ref.u = m;
  c->dcount = dict->count;
  c->sorted = sorted_flag;
  size_t total = 0;
  for (size_t i = 0; i < dict->count; i++) total += dict->len[i];
  c->bytes_size = total;
  c->bytes = th_malloc(total ? total : 1);
  if (use64)
    c->off64 = th_calloc(dict->count + 1, sizeof(int64_t));
  else
    c->off32 = th_calloc(dict->count + 1, sizeof(int32_t));
  size_t pos = 0;
  for (size_t i = 0; i <= dict->count; i++) {
    if (use64)
      c->off64[i] = (int64_t)pos;
    else
      c->off32[i] = (int32_t)pos;
    if (i == dict->count) break;
    if (dict->len[i]) memcpy(c->bytes + pos, dict->s[i], dict->len[i]);
    pos += dict->len[i];
  }
  fill_common(c, n, width, codes, validity, garbage);
  return c;
}

void tcol_free(tcol *c) {
  if (!c) return;
  free(c->data);
  free(c->validity);
  free(c->off32);
  free(c->off64);
  free(c->bytes);
  free(c->ocodes);
  free(c);
}

ps_for_desc tcol_for_desc(ps_type type, uint64_t n, uint32_t width, uint32_t scale, ps_reference ref,
                          int with_validity) {
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = type;
  d.n = n;
  d.width = width;
  d.scale = scale;
  d.reference = ref;
  d.data_size = (n * width + 7) / 8;
  d.validity_size = with_validity ? (n + 7) / 8 : 0;
  return d;
}

static void for_desc_of(const tcol *c, ps_for_desc *d) {
  *d = tcol_for_desc(c->code_type, c->n, c->width, c->scale, c->ref, c->validity != NULL);
  d->data = c->data;
  d->data_size = c->data_size;
  d->validity = c->validity;
}

void tcol_dict_desc(const tcol *c, ps_dict_desc *dd) {
  ps_dict_desc_init(dd);
  dd->count = c->dcount;
  dd->offsets32 = c->off32;
  dd->offsets64 = c->off64;
  dd->bytes = c->bytes;
  dd->bytes_size = c->bytes_size;
  dd->sorted = c->sorted;
}

ps_status tcol_create(ps_context *ctx, const tcol *c, ps_column **out) {
  ps_for_desc d;
  for_desc_of(c, &d);
  if (c->type != PS_TYPE_STRING) return ps_column_create_for(ctx, &d, out);
  ps_dict_desc dd;
  tcol_dict_desc(c, &dd);
  return ps_column_create_dict(ctx, &dd, &d, out);
}

/* ---- random numeric columns ---------------------------------------------------- */

/* Uniform in [0, x) for 0 < x <= 2^64. */
static uint64_t below128(th_rng *r, tu128 x) {
  if (x > (tu128)UINT64_MAX) return th_u64(r);
  return th_below(r, (uint64_t)x);
}

static uint64_t random_code(th_rng *r, uint64_t maxcode, const uint64_t *hot) {
  unsigned k = (unsigned)th_below(r, 100);
  if (k < 10) return 0;
  if (k < 20) return maxcode;
  if (k < 50) return hot[th_below(r, 4)];
  return maxcode == UINT64_MAX ? th_u64(r) : th_below(r, maxcode + 1);
}

static uint32_t random_scale(th_rng *r) {
  static const uint32_t common[] = {0, 1, 2, 3, 6, 18};
  return th_chance(r, 60) ? TH_PICK(r, common) : (uint32_t)th_below(r, 19);
}

tcol *tcol_random_for(th_rng *r, ps_type type, uint64_t n, uint32_t w, int null_mode) {
  ti128 lo, hi;
  tcol_type_range(type, &lo, &hi);
  uint64_t wmax = tcol_width_max(w);
  tu128 span = (tu128)(hi - lo);
  uint64_t maxcode = span < (tu128)wmax ? (uint64_t)span : wmax;
  if (maxcode > 0 && th_chance(r, 20)) maxcode = below128(r, (tu128)maxcode + 1);
  ti128 room = hi - (ti128)maxcode - lo; /* M may be lo .. lo + room */
  ti128 m;
  switch (th_below(r, 6)) {
    case 0: m = lo; break;
    case 1: m = lo + room; break;
    case 2: m = 0; break;
    case 3: m = -(ti128)(maxcode / 2); break;
    default: m = lo + (ti128)below128(r, (tu128)room + 1); break;
  }
  if (m < lo || m > lo + room) m = lo + (ti128)below128(r, (tu128)room + 1);

  uint64_t hot[4];
  for (int i = 0; i < 4; i++) hot[i] = maxcode == UINT64_MAX ? th_u64(r) : th_below(r, maxcode + 1);
  uint8_t *validity = tcol_random_validity(r, n, null_mode);
  uint64_t *codes = th_calloc(n ? n : 1, sizeof *codes);
  for (uint64_t i = 0; i < n; i++) {
    int valid = !validity || ((validity[i / 8] >> (i % 8)) & 1);
    if (!valid && th_chance(r, 50))
      codes[i] = th_u64(r) & wmax; /* garbage under a null: must not count as corrupt */
    else
      codes[i] = random_code(r, maxcode, hot);
  }
  ps_reference ref;
  if (tcol_is_unsigned(type))
    ref.u = (uint64_t)m;
  else
    ref.i = (int64_t)m;
  int scaled = tcol_is_float(type) || type == PS_TYPE_DECIMAL;
  tcol *c = tcol_for(type, n, w, scaled ? random_scale(r) : 0, ref, codes, validity, r);
  free(codes);
  free(validity);
  return c;
}

static const ti128 POW10[19] = {1,
                                10,
                                100,
                                1000,
                                10000,
                                100000,
                                1000000,
                                10000000,
                                100000000,
                                1000000000,
                                10000000000LL,
                                100000000000LL,
                                1000000000000LL,
                                10000000000000LL,
                                100000000000000LL,
                                1000000000000000LL,
                                10000000000000000LL,
                                100000000000000000LL,
                                1000000000000000000LL};

static ti128 clamp128(ti128 v, ti128 lo, ti128 hi) { return v < lo ? lo : v > hi ? hi : v; }

tcol *tcol_derived(th_rng *r, tcol *src, ps_type type, int null_mode) {
  uint64_t n = src->n;
  ti128 lo, hi;
  tcol_type_range(type, &lo, &hi);
  /* a decimal target keeps a decimal source's scale (the only pairs that
   * compare row by row) */
  uint32_t scale = tcol_is_float(type)        ? (uint32_t)th_below(r, 4)
                   : type == PS_TYPE_DECIMAL ? (src->type == PS_TYPE_DECIMAL ? src->scale : 0)
                                              : 0;
  ti128 *raw = th_calloc(n ? n : 1, sizeof *raw);
  ti128 mn = hi, mx = lo;
  int any = 0;
  uint8_t *validity = tcol_random_validity(r, n, null_mode);
  for (uint64_t i = 0; i < n; i++) {
    if (!oracle_valid(src, i)) {
      raw[i] = lo; /* fixed below */
      continue;
    }
    ti128 v = oracle_raw(src, i); /* src's M + code */
    uint32_t sscale = tcol_is_float(src->type) || src->type == PS_TYPE_DECIMAL ? src->scale : 0;
    /* Re-express in the target's scale (truncating when it shrinks). */
    if (scale >= sscale) {
      ti128 f = POW10[scale - sscale];
      ti128 lim = (ti128)INT64_MAX * 10;
      v = clamp128(v, -lim, lim) * f;
    } else {
      v = v / POW10[sscale - scale];
    }
    if (th_chance(r, 30)) v += th_chance(r, 50) ? 1 : -1;
    v = clamp128(v, lo, hi);
    raw[i] = v;
    int valid = !validity || ((validity[i / 8] >> (i % 8)) & 1);
    if (valid) {
      if (!any || v < mn) mn = v;
      if (!any || v > mx) mx = v;
      any = 1;
    }
  }
  if (!any) mn = mx = clamp128(0, lo, hi);
  uint64_t maxcode = (uint64_t)(mx - mn);
  uint32_t need = tcol_bits(maxcode);
  uint32_t w = th_chance(r, 50) ? need : need + (uint32_t)th_below(r, 64 - need + 1);
  uint64_t *codes = th_calloc(n ? n : 1, sizeof *codes);
  for (uint64_t i = 0; i < n; i++) {
    int valid = !validity || ((validity[i / 8] >> (i % 8)) & 1);
    if (valid && oracle_valid(src, i))
      codes[i] = (uint64_t)(raw[i] - mn);
    else if (valid)
      codes[i] = th_below(r, maxcode == UINT64_MAX ? 0 : maxcode + 1);
    else
      codes[i] = th_u64(r) & tcol_width_max(w);
  }
  ps_reference ref;
  if (tcol_is_unsigned(type))
    ref.u = (uint64_t)mn;
  else
    ref.i = (int64_t)mn;
  tcol *c = tcol_for(type, n, w, scale, ref, codes, validity, r);
  free(codes);
  free(raw);
  free(validity);
  return c;
}

/* ---- random dictionaries ---------------------------------------------------------- */

/* Whole characters: ASCII incl. LIKE metacharacters and escape candidates, and
 * 2-, 3- and 4-byte UTF-8. */
static const char *const ALPHABET[] = {"a", "b", "c", "A", "%", "_", "\\", "!", " ", "z",
                                       "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9d\x84\x9e", "ab"};
/* Bytes that are never valid UTF-8 on their own: each is one character for '_'. */
static const char *const INVALID_BYTES[] = {"\xff", "\x80", "\xfe"};

static void random_string(th_rng *r, size_t maxchars, uint8_t *buf, size_t *len) {
  size_t chars = th_below(r, maxchars + 1);
  size_t pos = 0;
  for (size_t i = 0; i < chars; i++) {
    const char *ch = th_chance(r, 4) ? TH_PICK(r, INVALID_BYTES) : TH_PICK(r, ALPHABET);
    size_t l = strlen(ch);
    memcpy(buf + pos, ch, l);
    pos += l;
  }
  *len = pos;
}

static int contains(const tstrs *l, const uint8_t *s, size_t len) {
  for (size_t i = 0; i < l->count; i++)
    if (tstr_cmp(l->s[i], l->len[i], s, len) == 0) return 1;
  return 0;
}

void tcol_random_strings(th_rng *r, size_t count, int unique, tstrs *out) {
  uint8_t buf[64];
  size_t len;
  size_t maxchars = count > 200 ? 8 : 5;
  size_t tries = 0;
  while (out->count < count) {
    random_string(r, maxchars, buf, &len);
    if (unique && contains(out, buf, len)) {
      if (++tries > 50) maxchars++;
      continue;
    }
    tries = 0;
    tstrs_push(out, buf, len);
  }
}

static int cmp_idx_ctx_sort(const void *a, const void *b);
static const tstrs *sort_list;
static int cmp_idx_ctx_sort(const void *a, const void *b) {
  size_t i = *(const size_t *)a, j = *(const size_t *)b;
  return tstr_cmp(sort_list->s[i], sort_list->len[i], sort_list->s[j], sort_list->len[j]);
}

/* Sorts l in place (by the binary collation). */
static void sort_strings(tstrs *l) {
  size_t *idx = th_calloc(l->count ? l->count : 1, sizeof *idx);
  for (size_t i = 0; i < l->count; i++) idx[i] = i;
  sort_list = l;
  qsort(idx, l->count, sizeof *idx, cmp_idx_ctx_sort);
  uint8_t **s = th_calloc(l->count ? l->count : 1, sizeof *s);
  size_t *len = th_calloc(l->count ? l->count : 1, sizeof *len);
  for (size_t i = 0; i < l->count; i++) {
    s[i] = l->s[idx[i]];
    len[i] = l->len[idx[i]];
  }
  memcpy(l->s, s, l->count * sizeof *s);
  memcpy(l->len, len, l->count * sizeof *len);
  free(s);
  free(len);
  free(idx);
}

static void shuffle_strings(th_rng *r, tstrs *l) {
  for (size_t i = l->count; i > 1; i--) {
    size_t j = th_below(r, i);
    uint8_t *s = l->s[i - 1];
    size_t len = l->len[i - 1];
    l->s[i - 1] = l->s[j];
    l->len[i - 1] = l->len[j];
    l->s[j] = s;
    l->len[j] = len;
  }
}

static int is_strictly_sorted(const tstrs *l) {
  for (size_t i = 1; i < l->count; i++)
    if (tstr_cmp(l->s[i - 1], l->len[i - 1], l->s[i], l->len[i]) >= 0) return 0;
  return 1;
}

/* Codes of a dictionary column of d entries at width w (index = m + code). */
static tcol *dict_column(th_rng *r, const tstrs *dict, int sorted_flag, uint64_t n, uint32_t w,
                         int null_mode) {
  uint64_t d = dict->count;
  static const ps_type code_types[] = {PS_TYPE_UINT8, PS_TYPE_UINT16, PS_TYPE_UINT32, PS_TYPE_UINT64};
  ps_type ct;
  uint64_t tmax;
  do {
    ct = TH_PICK(r, code_types);
    tmax = ct == PS_TYPE_UINT8 ? UINT8_MAX : ct == PS_TYPE_UINT16 ? UINT16_MAX : ct == PS_TYPE_UINT32 ? UINT32_MAX : UINT64_MAX;
  } while (d > 0 && d - 1 > tmax);
  uint64_t m = 0;
  if (d > 1 && th_chance(r, 20)) m = th_below(r, d);
  uint64_t top = d ? d - 1 - m : 0; /* largest code whose index m + code < d */
  uint64_t maxcode = top < tcol_width_max(w) ? top : tcol_width_max(w);
  uint64_t hot[4];
  for (int i = 0; i < 4; i++) hot[i] = th_below(r, maxcode + 1);
  uint8_t *validity = tcol_random_validity(r, n, d ? null_mode : TN_ALL);
  uint64_t *codes = th_calloc(n ? n : 1, sizeof *codes);
  for (uint64_t i = 0; i < n; i++) {
    int valid = !validity || ((validity[i / 8] >> (i % 8)) & 1);
    if (!valid && th_chance(r, 50))
      codes[i] = th_u64(r) & tcol_width_max(w); /* maybe past the dictionary: a null, not corrupt */
    else
      codes[i] = random_code(r, maxcode, hot);
  }
  tcol *c = tcol_dict(dict, sorted_flag, th_chance(r, 50), ct, n, w, m, codes, validity, r);
  free(codes);
  free(validity);
  return c;
}

tcol *tcol_random_dict(th_rng *r, uint64_t n, uint32_t w, size_t d, int sorted, int null_mode) {
  tstrs dict = {0};
  tcol_random_strings(r, d, sorted || th_chance(r, 70), &dict);
  int flag = 0;
  if (sorted) {
    sort_strings(&dict);
    flag = th_chance(r, 90); /* a sorted dictionary may also be handed over unflagged */
  } else {
    shuffle_strings(r, &dict);
    if (dict.count >= 2 && is_strictly_sorted(&dict)) {
      /* make it really unsorted */
      uint8_t *s = dict.s[0];
      size_t l = dict.len[0];
      dict.s[0] = dict.s[1];
      dict.len[0] = dict.len[1];
      dict.s[1] = s;
      dict.len[1] = l;
    }
  }
  tcol *c = dict_column(r, &dict, flag, n, w, null_mode);
  tstrs_free(&dict);
  return c;
}

static void dict_strings_of(const tcol *c, tstrs *out) {
  for (uint64_t i = 0; i < c->dcount; i++) {
    int64_t b = c->off64 ? c->off64[i] : c->off32[i];
    int64_t e = c->off64 ? c->off64[i + 1] : c->off32[i + 1];
    tstrs_push(out, c->bytes + b, (size_t)(e - b));
  }
}

tcol *tcol_random_dict_partner(th_rng *r, const tcol *src, int same_dict, int null_mode) {
  tstrs dict = {0};
  int flag;
  if (same_dict) {
    dict_strings_of(src, &dict);
    flag = src->sorted;
  } else {
    tstrs base = {0};
    dict_strings_of(src, &base);
    for (size_t i = 0; i < base.count; i++)
      if (th_chance(r, 50) && !contains(&dict, base.s[i], base.len[i]))
        tstrs_push(&dict, base.s[i], base.len[i]);
    tstrs_free(&base);
    size_t extra = 1 + th_below(r, 20);
    tstrs more = {0};
    tcol_random_strings(r, extra, 1, &more);
    for (size_t i = 0; i < more.count; i++)
      if (!contains(&dict, more.s[i], more.len[i])) tstrs_push(&dict, more.s[i], more.len[i]);
    tstrs_free(&more);
    if (th_chance(r, 50)) {
      sort_strings(&dict);
      flag = 1;
    } else {
      shuffle_strings(r, &dict);
      flag = dict.count >= 2 && is_strictly_sorted(&dict) ? th_chance(r, 50) : 0;
    }
  }
  uint32_t need = tcol_bits(dict.count ? dict.count - 1 : 0);
  uint32_t w = th_chance(r, 60) ? need : need + (uint32_t)th_below(r, 64 - need + 1);
  tcol *c = dict_column(r, &dict, flag, src->n, w, null_mode);
  tstrs_free(&dict);
  return c;
}

/* ---- reshaping ----------------------------------------------------------------- */

static int cmp_u64(const void *a, const void *b) {
  uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
  return x < y ? -1 : x > y;
}

void tcol_reshape(th_rng *r, tcol *c, int shape) {
  const uint64_t n = c->n;
  if (shape == TSHAPE_RANDOM || n == 0) return;
  free(c->ocodes); /* the oracle decodes the new codes */
  c->ocodes = NULL;
  if (shape == TSHAPE_ALL_NULL) {
    free(c->validity);
    c->validity = th_calloc((n + 7) / 8, 1);
    return;
  }
  uint64_t *codes = th_malloc(n * 8), *valid = th_malloc(n * 8), nv = 0;
  for (uint64_t i = 0; i < n; i++) {
    codes[i] = tcol_code(c, i);
    if (tcol_valid(c, i)) valid[nv++] = codes[i];
  }
  qsort(valid, nv, 8, cmp_u64);
  if (shape == TSHAPE_CONSTANT)
    for (uint64_t i = 0; i < nv; i++) valid[i] = valid[nv / 2];
  if (shape == TSHAPE_CLUSTERED) {
    uint64_t win = 16 + th_below(r, 300);
    for (uint64_t i = 0; i < nv; i++) {
      uint64_t j = i - i % win + th_below(r, (nv - (i - i % win)) < win ? nv - (i - i % win) : win);
      uint64_t t = valid[i];
      valid[i] = valid[j], valid[j] = t;
    }
  }
  for (uint64_t i = 0, k = 0; i < n; i++)
    if (tcol_valid(c, i)) codes[i] = valid[k++];
  memset(c->data, 0, c->data_size);
  tcol_pack(c->data, n, c->width, codes);
  free(codes);
  free(valid);
}

const char *tcol_describe(const tcol *c, char *buf, size_t size) {
  char nulls[32];
  if (!c->validity)
    snprintf(nulls, sizeof nulls, "no-validity");
  else {
    uint64_t k = 0;
    for (uint64_t i = 0; i < c->n; i++) k += !tcol_valid(c, i);
    snprintf(nulls, sizeof nulls, "%" PRIu64 "-nulls", k);
  }
  if (c->type == PS_TYPE_STRING)
    snprintf(buf, size, "%s{string d=%" PRIu64 " %s%s codes=%s w=%u M=%" PRIu64 " n=%" PRIu64 " %s}",
             c->name, c->dcount, c->sorted ? "sorted" : "unsorted", c->off64 ? " off64" : "",
             ps_type_name(c->code_type) ? ps_type_name(c->code_type) : "?", c->width, c->ref.u,
             c->n, nulls);
  else if (tcol_is_unsigned(c->type))
    snprintf(buf, size, "%s{%s w=%u M=%" PRIu64 " n=%" PRIu64 " %s}", c->name,
             ps_type_name(c->type) ? ps_type_name(c->type) : "?", c->width, c->ref.u, c->n, nulls);
  else
    snprintf(buf, size, "%s{%s w=%u M=%" PRId64 " scale=%u n=%" PRIu64 " %s}", c->name,
             ps_type_name(c->type) ? ps_type_name(c->type) : "?", c->width, c->ref.i, c->scale,
             c->n, nulls);
  return buf;
}
