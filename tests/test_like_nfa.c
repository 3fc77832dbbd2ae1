/*
 * like_nfa: the device matcher of LIKE (core/ps_like_nfa.h, compiled here as
 * plain C, the very code the CUDA and OpenCL kernels run) against the core's
 * matcher ps_like_match and the tests' independent oracle_like, on random
 * strings and patterns built from pieces that make matches likely: ASCII,
 * 2/3/4-byte UTF-8, invalid and truncated sequences, overlongs, surrogates,
 * lone continuation bytes; '%', '_', escapes, runs of '%'. Also: the token
 * limit (PS_LIKE_NFA_MAX_TOKENS fits, one more does not) and the empty
 * pattern / string. The literal-run test the kernels take first
 * (ps_like_holds_run, ps_like_entry_match) against a plain search and, with
 * the automaton, against ps_like_match. No backend involved (label host); the library's internal
 * headers are used on purpose.
 */
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "like.h"
#include "oracle.h"

/* String pieces: valid characters, and bytes that are not (one character each). */
static const char *const str_pieces[] = {
    "a",
    "b",
    "c",
    "%",
    "_",
    "\\",
    "\xc3\xa9",         /* 2-byte */
    "\xe2\x82\xac",     /* 3-byte */
    "\xf0\x9d\x84\x9e", /* 4-byte */
    "\xf4\x8f\xbf\xbf", /* U+10FFFF */
    "\xff",
    "\x80",
    "\xbf", /* invalid, lone continuations */
    "\xc3",
    "\xe2\x82",
    "\xf0\x9d\x84",     /* truncated */
    "\xc0\x80",         /* overlong */
    "\xe0\x80\x80",     /* overlong 3-byte */
    "\xed\xa0\x80",     /* surrogate */
    "\xf4\x90\x80\x80", /* above U+10FFFF */
    "\xf5",             /* never a lead byte */
};

static const char *const pat_pieces[] = {
    "%",    "%",    "_",    "_",        "a",    "b",        "ab",  "\xc3\xa9", "\xe2\x82\xac", "\xf0\x9d\x84\x9e",
    "\xff", "\x80", "\xc3", "\xe2\x82", "\xa9", "\x82\xac", "\\%", "\\_",      "\\\\",         "%%",
};

static size_t build(th_rng *r, const char *const *pieces, size_t npieces, size_t max_pieces, char *buf, size_t cap) {
  size_t n = 0, count = (size_t)th_below(r, max_pieces + 1);
  for (size_t i = 0; i < count; i++) {
    const char *p = pieces[th_below(r, npieces)];
    size_t len = strlen(p);
    if (n + len > cap) break;
    memcpy(buf + n, p, len);
    n += len;
  }
  return n;
}

/* A string shaped by the pattern, so that matches are common: '%' becomes 0..3
 * random pieces, '_' one piece (which may be several characters: invalid and
 * truncated pieces are), literals stay; sometimes one byte is changed. */
static size_t instantiate(th_rng *r, const char *p, size_t plen, int escape, char *buf, size_t cap) {
  size_t n = 0;
  for (size_t i = 0; i < plen; i++) {
    const char *piece = NULL;
    char one[2] = {p[i], 0};
    size_t reps = 1;
    if (escape >= 0 && (uint8_t)p[i] == (uint8_t)escape && i + 1 < plen) {
      one[0] = p[++i];
      piece = one;
    } else if (p[i] == '%') {
      reps = (size_t)th_below(r, 4);
    } else if (p[i] != '_') {
      piece = one;
    }
    for (size_t k = 0; k < reps; k++) {
      const char *q = piece ? piece : str_pieces[th_below(r, sizeof str_pieces / sizeof *str_pieces)];
      size_t len = piece ? 1 : strlen(q);
      if (n + len > cap) return n;
      memcpy(buf + n, q, len);
      n += len;
    }
  }
  if (n && th_chance(r, 20)) buf[th_below(r, n)] = (char)th_below(r, 256);
  return n;
}

static int nfa_match(const ps_like_nfa *nfa, const uint8_t *s, size_t n) {
  return ps_like_nfa_match(s, n, nfa->lit, nfa->any1, nfa->anyseq, nfa->tail, nfa->nt);
}

/* ps_like_entry_match on s placed at a random offset of a buffer, with random
 * bytes before and after it that the test may read (up to n). */
static int entry_match(const ps_like_nfa *nfa, const char *s, size_t slen) {
  static uint64_t store[64];
  uint8_t *buf = (uint8_t *)store;
  size_t b = (size_t)th_below(&th.rng, 40), after = (size_t)th_below(&th.rng, 40);
  for (size_t i = 0; i < b; i++) buf[i] = (uint8_t)th_below(&th.rng, 256);
  memcpy(buf + b, s, slen);
  for (size_t i = 0; i < after; i++) buf[b + slen + i] = (uint8_t)th_below(&th.rng, 256);
  return ps_like_entry_match(buf, b, b + slen, b + slen + after, th_chance(&th.rng, 50), nfa, nfa->lit);
}

/* ps_like_holds_run against a plain search, on long strings over a two-letter
 * alphabet (many partial matches: the head matching where the rest does not),
 * runs of 1 to 12 bytes, strings at every alignment and the readable bytes
 * ending at or after the string. */
static void runs(void) {
  static uint64_t store[64];
  uint8_t *buf = (uint8_t *)store;
  unsigned long checked = 0, held = 0;
  for (unsigned round = 0; round < 20000 * th.scale; round++) {
    uint8_t run[16];
    uint32_t len = 1 + (uint32_t)th_below(&th.rng, 12), head = 0, mask = 0;
    for (uint32_t k = 0; k < len; k++) {
      run[k] = (uint8_t)('a' + th_below(&th.rng, 2));
      if (k < 4) head |= (uint32_t)run[k] << (8 * k), mask |= 0xFFu << (8 * k);
    }
    size_t b = (size_t)th_below(&th.rng, 8), slen = (size_t)th_below(&th.rng, 160);
    size_t n = b + slen + (size_t)th_below(&th.rng, 8);
    for (size_t i = 0; i < n; i++) buf[i] = (uint8_t)('a' + th_below(&th.rng, 2));
    if (slen > 0 && th_chance(&th.rng, 30)) buf[b + th_below(&th.rng, slen)] = 0; /* a zero byte inside */
    int want = 0;
    for (size_t i = b; !want && i + len <= b + slen; i++) want = memcmp(buf + i, run, len) == 0;
    int got = ps_like_holds_run(buf, b, b + slen, n, th_chance(&th.rng, 50), run, len, head, mask);
    checked++;
    held += want != 0;
    CHECKF(got == want, "run of %u bytes in a string of %zu at %zu (%zu readable): %d, want %d", len, slen, b, n, got,
           want);
  }
  printf("like_nfa: %lu run tests, %lu held\n", checked, held);
  CHECKF(held > checked / 5 && held < checked - checked / 5, "%lu of %lu held: the test is too one-sided", held,
         checked);
}

/* Compiles p; returns the token count and fills nfa (fits: whether it fit). */
static size_t compile(const char *p, size_t plen, int escape, int *tok, ps_like_nfa *nfa, int *fits) {
  size_t nt = ps_like_compile((const uint8_t *)p, plen, escape, tok);
  *fits = ps_like_nfa_build(tok, nt, nfa);
  return nt;
}

static void random_pairs(void) {
  enum { PATTERNS = 3000, STRINGS = 200 };
  /* wide: pairs whose pattern has 32 tokens or more (the 64-bit matcher;
   * fewer take the 32-bit one) */
  unsigned long matches = 0, compared = 0, wide = 0, wide_matches = 0;
  int tok[512];
  uint8_t scratch[2 * 512];
  ps_like_nfa nfa;
  for (unsigned pi = 0; pi < PATTERNS * th.scale; pi++) {
    char p[256], s[200];
    /* every third pattern long: most of those have 32 tokens or more */
    const size_t max_pieces = pi % 3 == 2 ? 36 : 12;
    size_t plen = build(&th.rng, pat_pieces, sizeof pat_pieces / sizeof *pat_pieces, max_pieces, p, sizeof p);
    int escape = th_chance(&th.rng, 50) ? '\\' : -1;
    if (ps_like_validate(p, plen, escape, NULL, 0) != PS_OK) continue;
    int fits;
    size_t nt = compile(p, plen, escape, tok, &nfa, &fits);
    if (max_pieces > 12 && nt > PS_LIKE_NFA_MAX_TOKENS) continue; /* the host's path; token_limit checks the edge */
    if (!CHECKF(fits, "a pattern of %zu tokens does not fit the NFA", nt)) continue;
    for (unsigned si = 0; si < STRINGS; si++) {
      size_t slen;
      if (th_chance(&th.rng, 50)) {
        slen = instantiate(&th.rng, p, plen, escape, s, sizeof s);
      } else {
        slen = build(&th.rng, str_pieces, sizeof str_pieces / sizeof *str_pieces, 14, s, sizeof s);
        if (th_chance(&th.rng, 10)) /* a random byte string */
          for (size_t i = 0; i < slen; i++) s[i] = (char)th_below(&th.rng, 256);
      }
      int want = ps_like_match((const uint8_t *)s, slen, tok, nt, scratch);
      int got = nfa_match(&nfa, (const uint8_t *)s, slen);
      int oracle = oracle_like((const uint8_t *)s, slen, p, plen, escape);
      /* the kernels' whole entry test: the run test, then the automaton, on
       * the string at some offset of a buffer with bytes around it */
      int entry = entry_match(&nfa, s, slen);
      CHECKF(entry == want, "pattern #%u, string #%u (%zu bytes): ps_like_entry_match %d, ps_like_match %d", pi, si,
             slen, entry, want);
      compared++;
      matches += want != 0;
      wide += nt >= 32;
      wide_matches += nt >= 32 && want != 0;
      if (!CHECKF(got == want && oracle == want,
                  "pattern #%u (%zu bytes, escape %d), string #%u (%zu bytes): nfa %d, ps_like_match %d, oracle %d", pi,
                  plen, escape, si, slen, got, want, oracle)) {
        fprintf(stderr, "  pattern:");
        for (size_t i = 0; i < plen; i++) fprintf(stderr, " %02x", (uint8_t)p[i]);
        fprintf(stderr, "\n  string: ");
        for (size_t i = 0; i < slen; i++) fprintf(stderr, " %02x", (uint8_t)s[i]);
        fprintf(stderr, "\n");
      }
    }
  }
  printf("like_nfa: %lu pairs compared, %lu matches; %lu pairs of 32 tokens or more, %lu matches\n", compared, matches,
         wide, wide_matches);
  CHECKF(wide > compared / 20 && wide_matches > wide / 20, "%lu pairs of 32 tokens or more (%lu matches) of %lu", wide,
         wide_matches, compared);
  /* the pieces are chosen so that both outcomes are common */
  CHECKF(matches > compared / 10 && matches < compared - compared / 10, "%lu matches of %lu: the test is too one-sided",
         matches, compared);
}

static void token_limit(void) {
  int tok[256];
  ps_like_nfa nfa;
  char p[200];
  for (size_t n = PS_LIKE_NFA_MAX_TOKENS - 1; n <= PS_LIKE_NFA_MAX_TOKENS + 2; n++) {
    /* 'a_a_...' then '%' at the end: n tokens */
    for (size_t i = 0; i + 1 < n; i++) p[i] = i % 2 ? '_' : 'a';
    p[n - 1] = '%';
    int fits;
    size_t nt = compile(p, n, -1, tok, &nfa, &fits);
    CHECKF(nt == n, "test bug: %zu tokens, expected %zu", nt, n);
    CHECKF(fits == (n <= PS_LIKE_NFA_MAX_TOKENS), "%zu tokens: fits %d", n, fits);
    if (!fits) continue;
    char s[200];
    for (size_t i = 0; i + 1 < n; i++) s[i] = 'a';
    CHECKF(nfa_match(&nfa, (const uint8_t *)s, n - 1) == 1, "%zu tokens: full-length match", n);
    CHECKF(nfa_match(&nfa, (const uint8_t *)s, n - 2) == 0, "%zu tokens: one byte short", n);
    s[n - 1] = '\xc3', s[n] = '\xa9';
    CHECKF(nfa_match(&nfa, (const uint8_t *)s, n + 1) == 1, "%zu tokens: a trailing character for the '%%'", n);
    /* the accepting state is bit nt: with nt = 63, bit 63 */
    for (size_t i = 0; i < n; i++) p[i] = 'a';
    nt = compile(p, n, -1, tok, &nfa, &fits);
    CHECKF(nt == n && fits, "%zu literal tokens: %zu tokens, fits %d", n, nt, fits);
    memset(s, 'a', n);
    CHECKF(nfa_match(&nfa, (const uint8_t *)s, n) == 1, "%zu literal tokens: equal string", n);
    CHECKF(nfa_match(&nfa, (const uint8_t *)s, n - 1) == 0, "%zu literal tokens: shorter string", n);
    s[n] = 'a';
    CHECKF(nfa_match(&nfa, (const uint8_t *)s, n + 1) == 0, "%zu literal tokens: longer string", n);
  }
  /* adjacent '%' tokens never come from the compiler; the builder refuses them */
  int two[2] = {257, 257}; /* TOK_ANYSEQ (core/like.c) */
  CHECKF(ps_like_nfa_build(two, 2, &nfa) == 0, "two adjacent '%%' tokens accepted");
}

static void empties(void) {
  int tok[8];
  ps_like_nfa nfa;
  int fits;
  compile("", 0, -1, tok, &nfa, &fits);
  CHECK(fits && nfa_match(&nfa, (const uint8_t *)"", 0) == 1);
  CHECK(nfa_match(&nfa, (const uint8_t *)"a", 1) == 0);
  compile("%", 1, -1, tok, &nfa, &fits);
  CHECK(nfa_match(&nfa, (const uint8_t *)"", 0) == 1);
  CHECK(nfa_match(&nfa, (const uint8_t *)"\xff\xc3", 2) == 1);
  compile("_", 1, -1, tok, &nfa, &fits);
  CHECK(nfa_match(&nfa, (const uint8_t *)"", 0) == 0);
  CHECK(nfa_match(&nfa, (const uint8_t *)"\xf0\x9d\x84\x9e", 4) == 1);
  CHECK(nfa_match(&nfa, (const uint8_t *)"\xf0\x9d\x84", 3) == 0); /* truncated: 3 characters */
}

int main(int argc, char **argv) {
  th_init(argc, argv, "like_nfa");
  empties();
  token_limit();
  runs();
  random_pairs();
  return th_finish();
}
