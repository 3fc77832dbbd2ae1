/* The names include/packscan.h keeps for one release ("Deprecated names"):
 * exported functions, so that programs linked against them keep running,
 * each calling the function that replaced it. */
#include "packscan.h"

ps_status ps_row_ids(ps_context *ctx, const ps_buffer *selection, uint64_t selection_offset, uint64_t n,
                     ps_index_type type, ps_buffer *ids, uint64_t ids_offset, uint64_t capacity, uint64_t *count) {
  return ps_selection_row_ids_device(ctx, selection, selection_offset, n, type, ids, ids_offset, capacity, count);
}

ps_status ps_row_ids_host(ps_context *ctx, const ps_buffer *selection, uint64_t selection_offset, uint64_t n,
                          ps_index_type type, void *ids, uint64_t capacity, uint64_t *count) {
  return ps_selection_row_ids(ctx, selection, selection_offset, n, type, ids, capacity, count);
}

ps_status ps_gather(ps_context *ctx, const ps_column *col, const ps_buffer *ids, uint64_t ids_offset,
                    ps_index_type type, uint64_t count, ps_buffer *values, uint64_t values_offset, ps_buffer *validity,
                    uint64_t validity_offset) {
  return ps_gather_values_device(ctx, col, ids, ids_offset, type, count, values, values_offset, validity,
                                 validity_offset);
}

ps_status ps_gather_host(ps_context *ctx, const ps_column *col, const void *ids, ps_index_type type, uint64_t count,
                         void *values, uint8_t *validity) {
  return ps_gather_values(ctx, col, ids, type, count, values, validity);
}

ps_status ps_gather_strings_host(ps_context *ctx, const ps_column *col, const void *ids, ps_index_type type,
                                 uint64_t count, int64_t **offsets, uint8_t **bytes, uint8_t *validity) {
  return ps_gather_strings(ctx, col, ids, type, count, offsets, bytes, validity);
}

void ps_encoded_free(ps_encoded *enc) { ps_encoded_destroy(enc); }

void ps_encoded_dict_free(ps_encoded_dict *enc) { ps_encoded_dict_destroy(enc); }
