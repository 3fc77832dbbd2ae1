/* Compiled, never run, by the tests deprecated_warns_c and _cxx: each call
 * of a name from packscan.h's "Deprecated names" must draw a deprecation
 * warning naming its replacement (without PS_NO_DEPRECATION_WARNINGS). */
#include "packscan.h"

ps_status uses_old_names(ps_context *ctx, ps_buffer *sel, ps_column *col, ps_encoded *enc, ps_encoded_dict *denc);

ps_status uses_old_names(ps_context *ctx, ps_buffer *sel, ps_column *col, ps_encoded *enc, ps_encoded_dict *denc) {
  uint64_t c = 0;
  uint32_t ids[4] = {0, 1, 2, 3};
  int64_t v[4];
  int64_t *offsets = 0;
  uint8_t *bytes = 0;
  ps_status st = ps_row_ids(ctx, sel, 0, 4, PS_INDEX_UINT32, sel, 0, 4, &c);
  if (st == PS_OK) st = ps_row_ids_host(ctx, sel, 0, 4, PS_INDEX_UINT32, ids, 4, &c);
  if (st == PS_OK) st = ps_gather(ctx, col, sel, 0, PS_INDEX_UINT32, 4, sel, 0, 0, 0);
  if (st == PS_OK) st = ps_gather_host(ctx, col, ids, PS_INDEX_UINT32, 4, v, 0);
  if (st == PS_OK) st = ps_gather_strings_host(ctx, col, ids, PS_INDEX_UINT32, 4, &offsets, &bytes, 0);
  ps_encoded_free(enc);
  ps_encoded_dict_free(denc);
  return st;
}
