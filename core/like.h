/* LIKE over a whole dictionary at once (like.c). The per-string matcher and
 * the pattern compiler are declared in internal.h. */
#ifndef PS_LIKE_H
#define PS_LIKE_H

#include "internal.h"
#include "ps_like_nfa.h"

/* Sets bit k of bits (bits[k / 32], bit k % 32; the caller zeroes them) for
 * every k < count whose dictionary entry first + k matches the compiled
 * pattern tok[0..nt) — exactly what ps_like_match says for each entry, but
 * with the cost of the common shapes ('lit', 'lit%', '%lit', '%lit%',
 * '%a%b%') proportional to the dictionary's bytes: the pattern's longest
 * literal run is searched in the whole concatenated byte buffer, and only
 * entries that contain it are looked at. PS_OK, or PS_ERR_OUT_OF_MEMORY with
 * the context's message set. */
ps_status ps_like_dict(ps_context *ctx, const int *tok, size_t nt, const ps_dict *d, uint64_t first, uint64_t count,
                       uint32_t *bits);

/* Compiles tokens into the device matcher's tables (ps_like_nfa.h): 1, or 0
 * when the pattern does not fit it (more than PS_LIKE_NFA_MAX_TOKENS tokens,
 * or adjacent '%' tokens, which ps_like_compile never produces) and the
 * dictionary pass stays on the host. */
int ps_like_nfa_build(const int *tok, size_t nt, ps_like_nfa *nfa);

#endif /* PS_LIKE_H */
