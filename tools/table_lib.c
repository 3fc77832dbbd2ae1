/* Bridges table columns to library columns (the only part of the table code
 * that calls the library). */
#include <string.h>

#include "table.h"
#include "util.h"

ps_status tbl_column_create(ps_context *ctx, const tbl_table *t, uint32_t idx, ps_column **out,
                            char *err, size_t errsz) {
  if (idx >= t->ncols) {
    set_err(err, errsz, "no column %u", idx);
    return PS_ERR_INVALID_ARGUMENT;
  }
  const tbl_column *c = &t->cols[idx];
  ps_status st;
  if (c->encoding == TBL_ENC_DICT)
    st = t->host_resident ? ps_column_create_dict_host(ctx, &c->dict, &c->desc, out)
                          : ps_column_create_dict(ctx, &c->dict, &c->desc, out);
  else
    st = tbl_for_create(ctx, t, &c->desc, out);
  if (st != PS_OK)
    set_err(err, errsz, "column '%s': %s", c->name, lib_error(st, ps_context_last_error(ctx)));
  return st;
}

ps_status tbl_for_create(ps_context *ctx, const tbl_table *t, const ps_for_desc *desc, ps_column **out) {
  if (t->host_resident) return ps_column_create_for_host(ctx, desc, out);
  return ps_column_create_for(ctx, desc, out);
}

uint64_t tbl_packed_bytes(const tbl_table *t) {
  uint64_t bytes = 0;
  for (uint32_t i = 0; i < t->ncols; i++) bytes += tbl_column_stored_bytes(&t->cols[i]);
  return bytes;
}

const char *lib_error(ps_status st, const char *msg) { return msg && msg[0] ? msg : ps_status_name(st); }
