/* Dictionary encoding for the tool: tool_encode_dict is ps_encode_dict with
 * the codes split out; tool_encode_dict_indexed builds the dictionary from
 * strings already known to be distinct (generated data) and FOR-encodes the
 * given per-row indexes. */
#ifndef PSTOOL_DICT_DEDUP_H
#define PSTOOL_DICT_DEDUP_H

#include "packscan.h"

typedef struct tool_dict {
  ps_encoded_dict uniq; /* sorted dictionary of the distinct strings (uniq.dict) */
  ps_encoded codes;     /* per-row codes: UINT32 FOR, with the input's validity */
} tool_dict;

/* in: offsets64 layout (offsets32 also accepted). 0 ok, -1 with err set. */
int tool_encode_dict(const ps_strings *in, tool_dict *out, char *err, size_t errsz);
/* The same from strings already known to be (mostly) distinct: row i holds
 * string index[i] of uniq (nulls per validity; their index is ignored). For
 * generated data, where the distinct values are known up front. */
int tool_encode_dict_indexed(const ps_strings *uniq, const uint32_t *index, uint64_t n, const uint8_t *validity,
                             tool_dict *out, char *err, size_t errsz);
void tool_dict_free(tool_dict *d);

#endif
