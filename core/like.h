/* LIKE over a whole dictionary at once (like.c). The per-string matcher and
 * the pattern compiler are declared in internal.h. */
#ifndef PS_LIKE_H
#define PS_LIKE_H

#include "internal.h"

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

#endif /* PS_LIKE_H */
