/* SQL LIKE on byte strings, evaluated once per dictionary entry (never per
 * row). Semantics (design.md): case-sensitive; '%' matches any sequence of
 * characters, '_' exactly one UTF-8 character — one byte where the bytes are
 * not a valid UTF-8 sequence; an escape character makes the next '%', '_' or
 * escape literal. Characters are decoded from the current position: a valid
 * (shortest-form, non-surrogate, <= U+10FFFF) sequence is one character, any
 * other byte is a character of its own. */
#include <stdio.h>
#include <string.h>

#include "like.h"

#if defined(__GNUC__) && defined(__SSE2__) && (defined(__x86_64__) || defined(__i386__))
#define PS_LIKE_X86 1
#include <immintrin.h>
#endif

/* Length of the character at s[0] (n >= 1 bytes available). */
static size_t utf8_len(const uint8_t *s, size_t n) {
  uint8_t c = s[0];
  if (c < 0x80) return 1;
  size_t len;
  uint8_t lo = 0x80, hi = 0xBF; /* allowed range of the second byte */
  if (c >= 0xC2 && c <= 0xDF) len = 2;
  else if (c == 0xE0) len = 3, lo = 0xA0;
  else if ((c >= 0xE1 && c <= 0xEC) || c == 0xEE || c == 0xEF) len = 3;
  else if (c == 0xED) len = 3, hi = 0x9F;
  else if (c == 0xF0) len = 4, lo = 0x90;
  else if (c >= 0xF1 && c <= 0xF3) len = 4;
  else if (c == 0xF4) len = 4, hi = 0x8F;
  else return 1;
  if (n < len) return 1;
  if (s[1] < lo || s[1] > hi) return 1;
  for (size_t k = 2; k < len; k++)
    if (s[k] < 0x80 || s[k] > 0xBF) return 1;
  return len;
}

ps_status ps_like_validate(const char *p, size_t plen, int escape, char *buf, size_t size) {
  for (size_t i = 0; i < plen; i++) {
    if (escape >= 0 && (uint8_t)p[i] == (uint8_t)escape) {
      if (i + 1 >= plen)
        return ps_set_error_buf(buf, size, PS_ERR_INVALID_ARGUMENT,
                                "LIKE pattern ends in an unfinished escape (escape character '%c' at byte %zu)",
                                (char)escape, i);
      uint8_t nx = (uint8_t)p[i + 1];
      if (nx != '%' && nx != '_' && nx != (uint8_t)escape)
        return ps_set_error_buf(buf, size, PS_ERR_INVALID_ARGUMENT,
                                "LIKE pattern: escape character at byte %zu must be followed by '%%', '_' or "
                                "itself, not byte 0x%02x",
                                i, nx);
      i++;
    }
  }
  return PS_OK;
}

/* Pattern tokens: a literal byte, ANY1 ('_') or ANYSEQ ('%'). */
enum { TOK_ANY1 = 256, TOK_ANYSEQ = 257 };

static size_t tokenize(const uint8_t *p, size_t plen, int escape, int *tok) {
  size_t n = 0;
  for (size_t i = 0; i < plen; i++) {
    int t = p[i];
    if (escape >= 0 && p[i] == (uint8_t)escape && i + 1 < plen) {
      t = p[++i];
    } else if (p[i] == '%') {
      if (n && tok[n - 1] == TOK_ANYSEQ) continue;
      t = TOK_ANYSEQ;
    } else if (p[i] == '_') {
      t = TOK_ANY1;
    }
    tok[n++] = t;
  }
  return n;
}

/* Pure '%' patterns with ASCII literals: greedy leftmost search is exact
 * (ASCII bytes are always character boundaries). Returns -1 if not applicable. */
static int match_simple(const uint8_t *s, size_t slen, const int *tok, size_t nt) {
  for (size_t k = 0; k < nt; k++)
    if (tok[k] == TOK_ANY1 || (tok[k] < 256 && tok[k] >= 0x80)) return -1;
  size_t k = 0, pos = 0;
  /* leading literal segment must match at 0 */
  while (k < nt && tok[k] != TOK_ANYSEQ) {
    if (pos >= slen || s[pos] != (uint8_t)tok[k]) return 0;
    pos++, k++;
  }
  if (k == nt) return pos == slen;
  while (k < nt) {
    k++; /* skip % */
    size_t seg = k;
    while (k < nt && tok[k] != TOK_ANYSEQ) k++;
    size_t seglen = k - seg;
    if (seglen == 0) return 1; /* trailing % */
    if (k == nt) {             /* last segment anchors at the end */
      if (slen - pos < seglen) return 0;
      size_t at = slen - seglen;
      for (size_t j = 0; j < seglen; j++)
        if (s[at + j] != (uint8_t)tok[seg + j]) return 0;
      return 1;
    }
    size_t found = SIZE_MAX;
    for (size_t at = pos; at + seglen <= slen && found == SIZE_MAX; at++) {
      size_t j = 0;
      while (j < seglen && s[at + j] == (uint8_t)tok[seg + j]) j++;
      if (j == seglen) found = at;
    }
    if (found == SIZE_MAX) return 0;
    pos = found + seglen;
  }
  return 1;
}

/* General case: reachable-position DP over the tokens, O(slen * tokens).
 * scratch: 2 * (slen + 1) bytes. */
static int match_dp(const uint8_t *s, size_t slen, const int *tok, size_t nt, uint8_t *scratch) {
  uint8_t *cur = scratch, *nxt = scratch + slen + 1;
  memset(cur, 0, slen + 1);
  cur[0] = 1;
  for (size_t k = 0; k < nt; k++) {
    memset(nxt, 0, slen + 1);
    int any = 0;
    if (tok[k] == TOK_ANYSEQ) {
      for (size_t i = 0; i <= slen; i++) {
        if (cur[i]) nxt[i] = 1;
        if (nxt[i] && i < slen) nxt[i + utf8_len(s + i, slen - i)] = 1;
      }
      any = 1;
    } else {
      for (size_t i = 0; i < slen; i++) {
        if (!cur[i]) continue;
        if (tok[k] == TOK_ANY1) nxt[i + utf8_len(s + i, slen - i)] = 1, any = 1;
        else if (s[i] == (uint8_t)tok[k]) nxt[i + 1] = 1, any = 1;
      }
    }
    if (!any) return 0;
    uint8_t *t = cur;
    cur = nxt;
    nxt = t;
  }
  return cur[slen];
}

size_t ps_like_compile(const uint8_t *p, size_t plen, int escape, int *tok) {
  return tokenize(p, plen, escape, tok);
}

int ps_like_match(const uint8_t *s, size_t slen, const int *tok, size_t nt, uint8_t *scratch) {
  int r = match_simple(s, slen, tok, nt);
  if (r >= 0) return r;
  return match_dp(s, slen, tok, nt, scratch);
}

int ps_like_literal(const int *tok, size_t nt, uint8_t *lit, size_t *len) {
  size_t k = 0;
  while (k < nt && tok[k] < 256) lit[k] = (uint8_t)tok[k], k++;
  *len = k;
  if (k == nt) return 1;                          /* no wildcard: equality */
  if (k + 1 == nt && tok[k] == TOK_ANYSEQ) return 2; /* literal prefix, then '%' */
  return 0;
}

/* ---- whole dictionaries -------------------------------------------------------
 *
 * Why the fast paths are exact. A '%' reached at position p can stop at every
 * position of the character chain p, p + len(p), ... (len = utf8_len). A
 * multi-byte character only ever swallows continuation bytes (0x80..0xBF), so
 * every position h >= p whose byte is NOT a continuation byte is on that
 * chain. Hence for a pattern made of literal segments and '%' only, where each
 * segment that follows a '%' starts with a non-continuation byte ("simple"),
 * a segment after '%' may start at any byte position at or after the end of
 * the previous one, exactly as in a plain byte glob, and matching each middle
 * segment at its leftmost occurrence is exact (a later occurrence only leaves
 * less room for the rest). The last segment of a pattern that ends in a
 * literal must sit at the very end; a pattern that ends in '%' accepts any
 * reached position because every chain ends at the string's end.
 *
 * Any pattern (simple or not) can only match a string that contains each of
 * its runs of literal bytes; the longest run is searched in the dictionary's
 * whole byte buffer, and only entries that contain it are matched (or, for
 * '%lit%', accepted directly). */

/* First occurrence of nd (len >= 2) in h[i..n) by memchr on the first byte. */
static size_t find_tail(const uint8_t *h, size_t n, size_t i, const uint8_t *nd, size_t len) {
  while (i + len <= n) {
    const uint8_t *p = memchr(h + i, nd[0], n - len + 1 - i);
    if (!p) return n;
    i = (size_t)(p - h);
    if (memcmp(p + 1, nd + 1, len - 1) == 0) return i;
    i++;
  }
  return n;
}

#if PS_LIKE_X86
/* Blocks of positions whose bytes 0, 1 and len-1 all agree with the needle
 * (three probes keep false candidates rare even on small alphabets), the rest
 * checked with memcmp. Loads stay inside h[0..n). len >= 2. */
static size_t find_sse2(const uint8_t *h, size_t n, const uint8_t *nd, size_t len) {
  const __m128i f = _mm_set1_epi8((char)nd[0]), s = _mm_set1_epi8((char)nd[1]), l = _mm_set1_epi8((char)nd[len - 1]);
  size_t i = 0;
  for (; i + len - 1 + 16 <= n; i += 16) {
    __m128i a = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(h + i)), f);
    __m128i b = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(h + i + 1)), s);
    __m128i c = _mm_cmpeq_epi8(_mm_loadu_si128((const __m128i *)(const void *)(h + i + len - 1)), l);
    unsigned m = (unsigned)_mm_movemask_epi8(_mm_and_si128(_mm_and_si128(a, b), c));
    while (m) {
      size_t j = (size_t)__builtin_ctz(m);
      if (len <= 3 || memcmp(h + i + j + 2, nd + 2, len - 3) == 0) return i + j;
      m &= m - 1;
    }
  }
  return find_tail(h, n, i, nd, len);
}

__attribute__((target("avx2"))) static size_t find_avx2(const uint8_t *h, size_t n, const uint8_t *nd, size_t len) {
  const __m256i f = _mm256_set1_epi8((char)nd[0]), s = _mm256_set1_epi8((char)nd[1]),
                l = _mm256_set1_epi8((char)nd[len - 1]);
  size_t i = 0;
  for (; i + len - 1 + 32 <= n; i += 32) {
    __m256i a = _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(h + i)), f);
    __m256i b = _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(h + i + 1)), s);
    __m256i c = _mm256_cmpeq_epi8(_mm256_loadu_si256((const __m256i *)(const void *)(h + i + len - 1)), l);
    unsigned m = (unsigned)_mm256_movemask_epi8(_mm256_and_si256(_mm256_and_si256(a, b), c));
    while (m) {
      size_t j = (size_t)__builtin_ctz(m);
      if (len <= 3 || memcmp(h + i + j + 2, nd + 2, len - 3) == 0) return i + j;
      m &= m - 1;
    }
  }
  return find_tail(h, n, i, nd, len);
}
#endif

/* Short haystacks (one dictionary entry): a plain loop beats the set-up and
 * the library calls of the block search. */
static size_t find_short(const uint8_t *h, size_t n, const uint8_t *nd, size_t len) {
  const uint8_t c0 = nd[0];
  for (size_t i = 0; i + len <= n; i++) {
    if (h[i] != c0) continue;
    size_t j = 1;
    while (j < len && h[i + j] == nd[j]) j++;
    if (j == len) return i;
  }
  return n;
}

/* Offset of the first occurrence of nd[0..len) in h[0..n), or n if none. */
static size_t find(const uint8_t *h, size_t n, const uint8_t *nd, size_t len) {
  if (len == 0) return 0;
  if (len > n) return n;
  if (n < 64) return find_short(h, n, nd, len);
  if (len == 1) {
    const uint8_t *p = memchr(h, nd[0], n);
    return p ? (size_t)(p - h) : n;
  }
#if PS_LIKE_X86
  if (__builtin_cpu_supports("avx2")) return find_avx2(h, n, nd, len);
  return find_sse2(h, n, nd, len);
#else
  return find_tail(h, n, 0, nd, len);
#endif
}

static bool bytes_eq(const uint8_t *a, const uint8_t *b, size_t len) {
  for (size_t i = 0; i < len; i++)
    if (a[i] != b[i]) return false;
  return true;
}

static bool is_continuation(int t) { return t >= 0x80 && t <= 0xBF; }

/* A compiled pattern cut into its literal segments (maximal runs of tokens
 * between '%'s). */
typedef struct like_plan {
  const int *tok;
  size_t nt;
  uint8_t *lit; /* lit[k]: the byte of literal token k */
  size_t *seg;  /* nseg pairs: first token, length */
  size_t nseg;
  bool lead, trail;    /* the first / last token is not '%': that segment is anchored */
  bool has_seq;        /* a '%' somewhere */
  bool simple;         /* no '_', each segment after a '%' starts with a non-continuation byte */
  size_t n_any1;       /* '_' tokens */
  size_t run, run_len; /* the longest run of literal tokens (first token, length) */
} like_plan;

static void plan_init(like_plan *P, const int *tok, size_t nt, uint8_t *lit, size_t *seg) {
  memset(P, 0, sizeof *P);
  P->tok = tok, P->nt = nt, P->lit = lit, P->seg = seg;
  P->lead = nt > 0 && tok[0] != TOK_ANYSEQ;
  P->trail = nt > 0 && tok[nt - 1] != TOK_ANYSEQ;
  P->simple = true;
  size_t run_at = 0, run_len = 0;
  for (size_t k = 0; k <= nt; k++) {
    int t = k < nt ? tok[k] : TOK_ANYSEQ;
    if (t < 256) {
      lit[k] = (uint8_t)t;
      if (run_len++ == 0) run_at = k;
      if (run_len > P->run_len) P->run = run_at, P->run_len = run_len;
    } else {
      run_len = 0;
    }
    if (t == TOK_ANY1) P->n_any1++, P->simple = false;
    if (k < nt && t == TOK_ANYSEQ) P->has_seq = true;
    /* a segment starts at k when k is not '%' and follows one (or is first) */
    if (k < nt && t != TOK_ANYSEQ && (k == 0 || tok[k - 1] == TOK_ANYSEQ)) {
      if (k > 0 && is_continuation(t)) P->simple = false;
      seg[2 * P->nseg] = k;
      seg[2 * P->nseg + 1] = 0;
      P->nseg++;
    }
    if (k < nt && t != TOK_ANYSEQ) seg[2 * P->nseg - 1]++;
  }
}

/* '%lit%' (simple): an entry that holds the literal matches. */
static bool plan_contains(const like_plan *P) {
  return P->simple && P->nseg == 1 && !P->lead && !P->trail && P->run_len > 0;
}

int ps_like_nfa_build(const int *tok, size_t nt, ps_like_nfa *nfa) {
  if (nt > PS_LIKE_NFA_MAX_TOKENS) return 0;
  memset(nfa, 0, sizeof *nfa);
  for (size_t k = 0; k < nt; k++) {
    uint64_t bit = (uint64_t)1 << k;
    if (tok[k] == TOK_ANYSEQ) {
      /* one closure step covers a run of '%' only if runs are merged */
      if (k > 0 && tok[k - 1] == TOK_ANYSEQ) return 0;
      nfa->anyseq |= bit;
    } else if (tok[k] == TOK_ANY1) {
      nfa->any1 |= bit;
    } else {
      nfa->lit[(uint8_t)tok[k]] |= bit;
    }
  }
  if (nt > 0 && tok[nt - 1] == TOK_ANYSEQ) nfa->tail = (uint64_t)1 << (nt - 1);
  nfa->nt = (uint32_t)nt;
  /* the longest literal run, for ps_like_holds_run */
  uint8_t lit[PS_LIKE_NFA_MAX_TOKENS + 1];
  size_t seg[2 * (PS_LIKE_NFA_MAX_TOKENS + 1)];
  like_plan P;
  plan_init(&P, tok, nt, lit, seg);
  nfa->run_len = (uint32_t)P.run_len;
  for (size_t k = 0; k < P.run_len; k++) {
    nfa->run[k] = lit[P.run + k];
    if (k < 4) nfa->run_head |= (uint32_t)lit[P.run + k] << (8 * k), nfa->run_mask |= 0xFFu << (8 * k);
  }
  nfa->run_accepts = plan_contains(&P);
  return 1;
}

/* Simple plans only (see above): segments a.. matched greedily, leftmost
 * first, from byte pos (where the earlier ones ended). */
static bool match_segments_from(const like_plan *P, const uint8_t *s, size_t n, size_t a, size_t pos) {
  const uint8_t *lit = P->lit;
  const size_t *seg = P->seg;
  size_t b = P->nseg;
  if (P->trail) {
    /* the last segment sits at the end; the middle ones must fit before it */
    size_t at = seg[2 * (b - 1)], len = seg[2 * (b - 1) + 1];
    if (n - pos < len || !bytes_eq(s + n - len, lit + at, len)) return false;
    n -= len;
    b--;
  }
  for (size_t k = a; k < b; k++) {
    size_t at = seg[2 * k], len = seg[2 * k + 1];
    size_t h = find(s + pos, n - pos, lit + at, len);
    if (h == n - pos) return false;
    pos += h + len;
  }
  return true;
}

static bool match_segments(const like_plan *P, const uint8_t *s, size_t n) {
  const uint8_t *lit = P->lit;
  const size_t *seg = P->seg;
  if (!P->has_seq) return P->nseg == 0 ? n == 0 : n == seg[1] && bytes_eq(s, lit + seg[0], n);
  if (!P->lead) return match_segments_from(P, s, n, 0, 0);
  if (n < seg[1] || !bytes_eq(s, lit + seg[0], seg[1])) return false;
  return match_segments_from(P, s, n, 1, seg[1]);
}

/* Any plan, on a string whose bytes are all ASCII: there every character is
 * one byte, so '_' is exactly one byte and '%' may stop at every position; a
 * segment (literals and '_') has a fixed length, and leftmost placement is
 * exact for the same reason as above. */
static bool seg_at(const like_plan *P, const uint8_t *s, size_t at, size_t len) {
  for (size_t j = 0; j < len; j++) {
    int t = P->tok[at + j];
    if (t != TOK_ANY1 && s[j] != (uint8_t)t) return false;
  }
  return true;
}

static bool match_glob(const like_plan *P, const uint8_t *s, size_t n) {
  const size_t *seg = P->seg;
  size_t a = 0, b = P->nseg, pos = 0;
  if (!P->has_seq) return P->nseg == 0 ? n == 0 : n == seg[1] && seg_at(P, s, seg[0], n);
  if (P->lead) {
    if (n < seg[1] || !seg_at(P, s, seg[0], seg[1])) return false;
    pos = seg[1];
    a = 1;
  }
  if (P->trail) {
    size_t at = seg[2 * (b - 1)], len = seg[2 * (b - 1) + 1];
    if (n - pos < len || !seg_at(P, s + n - len, at, len)) return false;
    n -= len;
    b--;
  }
  for (size_t k = a; k < b; k++) {
    size_t at = seg[2 * k], len = seg[2 * k + 1], i = pos;
    while (i + len <= n && !seg_at(P, s + i, at, len)) i++;
    if (i + len > n) return false;
    pos = i + len;
  }
  return true;
}

static bool is_ascii(const uint8_t *s, size_t n) {
  uint8_t acc = 0;
  for (size_t i = 0; i < n; i++) acc |= s[i];
  return acc < 0x80;
}

/* Wildcard-only patterns ('%', '_', '_%', '__', ...): every reachable
 * position lies on the character chain from 0, so the pattern asks for
 * exactly (no '%') or at least n_any1 characters. */
static bool match_wildcards(const like_plan *P, const uint8_t *s, size_t n) {
  size_t chars = 0, i = 0;
  while (i < n && chars <= P->n_any1) i += utf8_len(s + i, n - i), chars++;
  return P->has_seq ? chars >= P->n_any1 : chars == P->n_any1;
}

/* The entry holding byte h, searching forward from entry e (off[e] <= h <
 * off[count]). A plain forward scan: hits arrive in ascending order, so over
 * the whole search it reads the offsets once, sequentially, which the
 * prefetcher streams; galloping or bisecting jumps and misses the cache on
 * nearly every probe (it was slower on a dictionary of 10^6 entries). */
static uint64_t entry_of(const uint64_t *off, uint64_t e, uint64_t h) {
  while (off[e + 1] <= h) e++;
  return e;
}

#define SET_BIT(bits, k) ((bits)[(k) / 32] |= 1u << ((k) % 32))

ps_status ps_like_dict(ps_context *ctx, const int *tok, size_t nt, const ps_dict *d, uint64_t first, uint64_t count,
                       uint32_t *bits) {
  if (count == 0) return PS_OK;
  const uint64_t *off = d->offsets + first;
  const uint8_t *bytes = d->bytes;
  uint8_t *lit = ps_host_alloc(ctx, nt + 1);
  size_t *seg = ps_calloc_ctx(ctx, nt + 1, 2 * sizeof *seg);
  if (!lit || !seg) {
    ps_host_free(ctx, lit);
    ps_host_free(ctx, seg);
    return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating LIKE scratch");
  }
  like_plan P;
  plan_init(&P, tok, nt, lit, seg);
  ps_status st = PS_OK;
  uint8_t *scratch = NULL; /* the DP matcher's, grown on demand */
  size_t scratch_cap = 0;

  if (P.run_len == 0 && P.has_seq && P.n_any1 == 0) {
    /* '%': every entry */
    for (uint64_t w = 0; w < count / 32; w++) bits[w] = 0xFFFFFFFFu;
    if (count % 32) bits[count / 32] |= (1u << (count % 32)) - 1;
  } else if (P.run_len == 0) {
    for (uint64_t k = 0; k < count; k++)
      if (match_wildcards(&P, bytes + off[k], (size_t)(off[k + 1] - off[k]))) SET_BIT(bits, k);
  } else if (P.simple && (P.lead || P.trail) && P.run_len < 3) {
    /* anchored on a short literal: searching the buffer for it would stop
     * in most entries; a test of one byte per entry rejects most of them
     * before any call (longer literals are found faster by the search) */
    size_t first_len = seg[1], last_len = seg[2 * P.nseg - 1];
    uint8_t c0 = lit[seg[0]], cl = lit[seg[2 * P.nseg - 2] + last_len - 1];
    for (uint64_t k = 0; k < count; k++) {
      const uint8_t *s = bytes + off[k];
      size_t n = (size_t)(off[k + 1] - off[k]);
      if (P.lead ? n < first_len || s[0] != c0 : n < last_len || s[n - 1] != cl) continue;
      if (match_segments(&P, s, n)) SET_BIT(bits, k);
    }
  } else {
    /* the longest literal run, searched in the whole buffer */
    const uint8_t *run = lit + P.run;
    size_t run_len = P.run_len;
    bool contains = plan_contains(&P); /* '%lit%': a hit is a match */
    /* When the run is the first segment of '%a%b%' or '%a%b', the hit is
     * that segment's leftmost occurrence in the entry: matching resumes
     * after it. (Not when that segment is anchored: 'a%...' must sit at 0,
     * '%a' at the end.) */
    bool resume = P.simple && !P.lead && !(P.trail && P.nseg == 1) && P.run == seg[0];
    uint64_t e = 0, pos = off[0], end = off[count];
    while (pos < end) {
      size_t r = find(bytes + pos, (size_t)(end - pos), run, run_len);
      if (r == (size_t)(end - pos)) break;
      uint64_t h = pos + r;
      e = entry_of(off, e, h);
      uint64_t e_end = off[e + 1];
      /* a hit that runs past the entry's end means the entry has no
       * occurrence at all: an earlier one would have been found first */
      if (h + run_len <= e_end) {
        const uint8_t *s = bytes + off[e];
        size_t n = (size_t)(e_end - off[e]);
        bool m;
        if (contains) {
          m = true;
        } else if (resume) {
          m = match_segments_from(&P, s, n, 1, (size_t)(h - off[e]) + run_len);
        } else if (P.simple) {
          m = match_segments(&P, s, n);
        } else if (is_ascii(s, n)) {
          m = match_glob(&P, s, n);
        } else {
          if (2 * (n + 1) > scratch_cap) {
            ps_host_free(ctx, scratch);
            scratch_cap = 2 * (n + 1) > 256 ? 2 * (2 * (n + 1)) : 256;
            scratch = ps_host_alloc(ctx, scratch_cap);
            if (!scratch) {
              st = ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating LIKE scratch for a string of %zu bytes", n);
              break;
            }
          }
          m = ps_like_match(s, n, tok, nt, scratch) != 0;
        }
        if (m) SET_BIT(bits, e);
      }
      pos = e_end;
      e++;
    }
  }
  ps_host_free(ctx, scratch);
  ps_host_free(ctx, lit);
  ps_host_free(ctx, seg);
  return st;
}
