/* SQL LIKE on byte strings, evaluated once per dictionary entry (never per
 * row). Semantics (design.md): case-sensitive; '%' matches any sequence of
 * characters, '_' exactly one UTF-8 character — one byte where the bytes are
 * not a valid UTF-8 sequence; an escape character makes the next '%', '_' or
 * escape literal. Characters are decoded from the current position: a valid
 * (shortest-form, non-surrogate, <= U+10FFFF) sequence is one character, any
 * other byte is a character of its own. */
#include <stdio.h>
#include <string.h>

#include "internal.h"

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
