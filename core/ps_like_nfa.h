/*
 * LIKE on one string as a bit-parallel NFA over the pattern's tokens
 * (Shift-And / Glushkov), the matcher of a dictionary pass on the device.
 * Written once and compiled as C11 (the host: tests/test_like_nfa.c checks it
 * against ps_like_match), as CUDA C++ (kernels_cuda/like.cu) and as OpenCL C
 * 1.2 (embedded after ps_program.h in front of kernels_opencl/like.cl).
 *
 * Exactly the semantics of ps_like_match (core/like.c), whose DP keeps the set
 * of reachable (position i, token k) pairs: here bit k of a 64-bit set S_i
 * says "tokens [0, k) matched the bytes [0, i)", bit nt is the accepting
 * state. Positions are walked in order, i = 0..slen:
 *   - closure: a '%' token k reached at i also reaches k + 1 at i. The
 *     compiler merges consecutive '%' tokens, so one step suffices:
 *     S |= (S & anyseq) << 1;
 *   - a literal token k equal to s[i] moves k -> k + 1 to position i + 1;
 *   - '_' moves k -> k + 1 to position i + len(i), '%' moves k -> k (it
 *     stays) to i + len(i), where len(i) in 1..4 is the length of the UTF-8
 *     character decoded at i (an invalid byte is one character; the decoder
 *     is utf8_len of core/like.c);
 *   - the string matches iff bit nt is in S_slen (after closure).
 * Transitions reach at most 4 positions ahead, so the sets of the next four
 * positions live in a ring of four registers. Two exits keep it short:
 * nothing reachable anywhere ahead rejects; reaching a final '%' accepts (its
 * character chain always ends exactly at slen).
 */
#ifndef PS_LIKE_NFA_H
#define PS_LIKE_NFA_H

#if !defined(__OPENCL_VERSION__) /* OpenCL: embedded after ps_program.h */
#include "ps_program.h"
#endif

/* Patterns with more tokens take the host path (bit nt must fit 64 bits). */
#define PS_LIKE_NFA_MAX_TOKENS 63

/* Address spaces: the string bytes (global on a device), the literal masks
 * (shared/local memory on a device, copied there once per block/work-group)
 * and the pattern's literal run (constant memory on a device). */
#if defined(__OPENCL_VERSION__)
#ifndef PS_DIALECT_H /* OpenCL C (C99) refuses a second typedef; ps_dialect.h may come first */
typedef uchar ps_u8;
#endif
#define PS_LIKE_FN static inline
#define PS_LIKE_STR __global
#define PS_LIKE_TAB __local
#define PS_LIKE_PAT __constant
#elif defined(__CUDACC__)
typedef uint8_t ps_u8;
#define PS_LIKE_FN static __host__ __device__ __forceinline__
#define PS_LIKE_STR
#define PS_LIKE_TAB
#define PS_LIKE_PAT
#else
typedef uint8_t ps_u8;
#define PS_LIKE_FN static inline
#define PS_LIKE_STR
#define PS_LIKE_TAB
#define PS_LIKE_PAT
#endif

/* A compiled pattern (built on the host by ps_like_nfa_build, core/like.c). */
typedef struct ps_like_nfa {
  ps_u64 lit[256]; /* lit[c], bit k: token k is the literal byte c */
  ps_u64 any1;     /* bit k: token k is '_' */
  ps_u64 anyseq;   /* bit k: token k is '%' (never two adjacent bits) */
  ps_u64 tail;     /* bit nt - 1 if the last token is '%', else 0 */
  ps_u32 nt;       /* tokens, 0..PS_LIKE_NFA_MAX_TOKENS */
  /* The pattern's longest run of literal tokens, which every string the
   * pattern matches holds (ps_like_holds_run: a test far cheaper than the
   * automaton, which then runs only on the strings that pass it). */
  ps_u32 run_len;     /* its bytes, 0 when the pattern has no literal */
  ps_u32 run_head;    /* its first min(run_len, 4) bytes, byte j at bits 8j */
  ps_u32 run_mask;    /* the bits of run_head that are the run's */
  ps_u32 run_accepts; /* 1: holding the run is matching ('%run%', core/like.c's "contains") */
  ps_u32 pad_;
  ps_u8 run[PS_LIKE_NFA_MAX_TOKENS + 1]; /* the run's bytes */
} ps_like_nfa; /* 2160 bytes */

/* Length of the character at s[0] (n >= 1 bytes available): a valid
 * (shortest-form, non-surrogate, <= U+10FFFF) sequence, else 1. */
PS_LIKE_FN ps_u32 ps_like_char_len(PS_LIKE_STR const ps_u8 *s, ps_u64 n) {
  ps_u32 c = s[0];
  if (c < 0x80u) return 1;
  ps_u32 len, lo = 0x80u, hi = 0xBFu; /* allowed range of the second byte */
  if (c >= 0xC2u && c <= 0xDFu) {
    len = 2;
  } else if (c == 0xE0u) {
    len = 3, lo = 0xA0u;
  } else if ((c >= 0xE1u && c <= 0xECu) || c == 0xEEu || c == 0xEFu) {
    len = 3;
  } else if (c == 0xEDu) {
    len = 3, hi = 0x9Fu;
  } else if (c == 0xF0u) {
    len = 4, lo = 0x90u;
  } else if (c >= 0xF1u && c <= 0xF3u) {
    len = 4;
  } else if (c == 0xF4u) {
    len = 4, hi = 0x8Fu;
  } else {
    return 1;
  }
  if (n < len) return 1;
  if (s[1] < lo || s[1] > hi) return 1;
  for (ps_u32 k = 2; k < len; k++)
    if (s[k] < 0x80u || s[k] > 0xBFu) return 1;
  return len;
}

/* One ASCII byte c from the set r of the current position, where no later
 * position holds anything (r1..r3 empty): the closure, the literal and '_'
 * moves and the '%' stay, all landing on the next position. */
#define PS_LIKE_NFA_ASCII(T, r, c) \
  ((((r) | (((r) & as) << 1)) & ((T)lit[c] | a1)) << 1 | (((r) | (((r) & as) << 1)) & as))

/* The matcher for a state set of type T (ps_u32 while bit nt fits it,
 * else ps_u64: half the arithmetic for the patterns people write). The
 * ring moves one position a byte. ASCII bytes are one character each, so
 * while no multi-byte step is pending they go four at a time through
 * PS_LIKE_NFA_ASCII, the accept and reject tests once per four: reaching
 * a final '%' keeps its bit (it stays on every byte), and an empty set stays
 * empty. Any other byte takes the general step, with the UTF-8 decoder only
 * for a byte of 0x80 and above. */
#define PS_LIKE_NFA_MATCHER(NAME, T)                                                                                  \
  PS_LIKE_FN int NAME(PS_LIKE_STR const ps_u8 *s, ps_u64 n, PS_LIKE_TAB const ps_u64 *lit, ps_u64 any1,               \
                      ps_u64 anyseq, ps_u64 tail, ps_u32 nt) {                                                        \
    const T a1 = (T)any1, as = (T)anyseq, tl = (T)tail;                                                               \
    /* r0..r3: the sets of positions i, i + 1, i + 2, i + 3 */                                                        \
    T r0 = 1, r1 = 0, r2 = 0, r3 = 0;                                                                                 \
    for (ps_u64 i = 0;; i++) {                                                                                        \
      /* four ASCII bytes a step while nothing waits past the next position */                                        \
      while ((r1 | r2 | r3) == 0 && n - i >= 4u) {                                                                    \
        const ps_u32 c0 = s[i], c1 = s[i + 1], c2 = s[i + 2], c3 = s[i + 3];                                          \
        if ((c0 | c1 | c2 | c3) >= 0x80u) break;                                                                      \
        r0 = PS_LIKE_NFA_ASCII(T, r0, c0);                                                                            \
        r0 = PS_LIKE_NFA_ASCII(T, r0, c1);                                                                            \
        r0 = PS_LIKE_NFA_ASCII(T, r0, c2);                                                                            \
        r0 = PS_LIKE_NFA_ASCII(T, r0, c3);                                                                            \
        i += 4;                                                                                                       \
        if (r0 == 0) return 0;                                                                                        \
      }                                                                                                               \
      const T S = r0 | ((r0 & as) << 1);                                                                              \
      if (S & tl) return 1;                                                                                           \
      if (i == n) return (int)((S >> nt) & 1u);                                                                       \
      const ps_u32 c = s[i];                                                                                          \
      const T moved = (S & (T)lit[c]) << 1, step = ((S & a1) << 1) | (S & as);                                        \
      r0 = r1 | moved, r1 = r2, r2 = r3, r3 = 0;                                                                      \
      if (c < 0x80u) {                                                                                                \
        r0 |= step;                                                                                                   \
      } else if (step) {                                                                                              \
        const ps_u32 len = ps_like_char_len(s + i, n - i);                                                            \
        if (len == 1)                                                                                                 \
          r0 |= step;                                                                                                 \
        else if (len == 2)                                                                                            \
          r1 |= step;                                                                                                 \
        else if (len == 3)                                                                                            \
          r2 |= step;                                                                                                 \
        else                                                                                                          \
          r3 |= step;                                                                                                 \
      }                                                                                                               \
      if ((r0 | r1 | r2 | r3) == 0) return 0;                                                                         \
    }                                                                                                                 \
  }

PS_LIKE_NFA_MATCHER(ps_like_nfa_match32, ps_u32)
PS_LIKE_NFA_MATCHER(ps_like_nfa_match64, ps_u64)
#undef PS_LIKE_NFA_MATCHER
#undef PS_LIKE_NFA_ASCII

/* 1 iff s[0..n) matches the pattern (lit: the nfa's 256 literal masks, in
 * whatever memory the caller staged them). nt is the same for every entry
 * of a launch, so the choice does not diverge. */
PS_LIKE_FN int ps_like_nfa_match(PS_LIKE_STR const ps_u8 *s, ps_u64 n, PS_LIKE_TAB const ps_u64 *lit, ps_u64 any1,
                                 ps_u64 anyseq, ps_u64 tail, ps_u32 nt) {
  return nt < 32u ? ps_like_nfa_match32(s, n, lit, any1, anyseq, tail, nt)
                  : ps_like_nfa_match64(s, n, lit, any1, anyseq, tail, nt);
}

/* Bytes q..q+3 of s as a word, byte j at bits 8j; bytes at n and past it
 * read as 0 (nothing at or past n is touched). fast: s is 4-byte aligned,
 * so that a word inside n is one load on a little-endian device. */
PS_LIKE_FN ps_u32 ps_like_word(PS_LIKE_STR const ps_u8 *s, ps_u64 q, ps_u64 n, int fast) {
#if defined(__CUDA_ARCH__) || (defined(__OPENCL_VERSION__) && defined(__ENDIAN_LITTLE__))
  if (fast && q + 4u <= n) return *(PS_LIKE_STR const ps_u32 *)(s + q);
#else
  (void)fast;
#endif
  ps_u32 w = 0;
  for (ps_u32 j = 0; j < 4u; j++)
    if (q + j < n) w |= (ps_u32)s[q + j] << (8u * j);
  return w;
}

/* 1 iff the string s[b..e) holds the run of len >= 1 bytes (run; head and
 * mask: its first min(len, 4) bytes as ps_like_nfa keeps them) somewhere;
 * e <= n, and s[0..n) may be read (fast: as ps_like_word). The positions go
 * 32 at a time from b rounded down to a multiple of 4: nine words, and at
 * each of the 32 positions the word that starts there compared with the
 * head under its mask — the same straight-line work for every string of up
 * to 29 bytes, where the automaton's walk differs in length from string to
 * string. Positions whose head matches (rare but for the strings that hold
 * the run) compare the rest byte by byte. */
PS_LIKE_FN int ps_like_holds_run(PS_LIKE_STR const ps_u8 *s, ps_u64 b, ps_u64 e, ps_u64 n, int fast,
                                 PS_LIKE_PAT const ps_u8 *run, ps_u32 len, ps_u32 head, ps_u32 mask) {
  if (e < b || e - b < len) return 0;
  const ps_u64 last = e - len; /* the last position the run can start at */
  for (ps_u64 q = b & ~(ps_u64)3; q <= last; q += 32u) {
    ps_u32 hits = 0, lo = ps_like_word(s, q, n, fast);
    for (ps_u32 k = 0; k < 8u; k++) {
      const ps_u32 hi = ps_like_word(s, q + 4u * (k + 1u), n, fast);
      hits |= (ps_u32)((lo & mask) == head) << (4u * k);
      hits |= (ps_u32)((((lo >> 8) | (hi << 24)) & mask) == head) << (4u * k + 1u);
      hits |= (ps_u32)((((lo >> 16) | (hi << 16)) & mask) == head) << (4u * k + 2u);
      hits |= (ps_u32)((((lo >> 24) | (hi << 8)) & mask) == head) << (4u * k + 3u);
      lo = hi;
    }
    if (q < b) hits &= ~0u << (ps_u32)(b - q); /* b - q < 4 */
    if (last - q < 31u) hits &= (2u << (ps_u32)(last - q)) - 1u;
    for (ps_u32 j = 0; hits; j++, hits >>= 1) {
      if (!(hits & 1u)) continue;
      ps_u32 t = 4u;
      while (t < len && s[q + j + t] == run[t]) t++;
      if (t >= len) return 1;
    }
  }
  return 0;
}

/* Entry [b, e) of s (s[0..n) readable; fast as ps_like_word): the run test
 * of the pattern, then its automaton where the run does not decide. */
PS_LIKE_FN int ps_like_entry_match(PS_LIKE_STR const ps_u8 *s, ps_u64 b, ps_u64 e, ps_u64 n, int fast,
                                   PS_LIKE_PAT const ps_like_nfa *nfa, PS_LIKE_TAB const ps_u64 *lit) {
  if (nfa->run_len) {
    if (!ps_like_holds_run(s, b, e, n, fast, nfa->run, nfa->run_len, nfa->run_head, nfa->run_mask)) return 0;
    if (nfa->run_accepts) return 1;
  }
  return ps_like_nfa_match(s + b, e - b, lit, nfa->any1, nfa->anyseq, nfa->tail, nfa->nt);
}

#endif /* PS_LIKE_NFA_H */
