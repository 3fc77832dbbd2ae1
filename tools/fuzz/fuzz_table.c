/* libFuzzer target: the table reader over arbitrary bytes. Each input is
 * opened as it is, and once more with its header and directory checksums
 * recomputed, so that mutations reach the field checks behind them. Whatever
 * opens is then used as `packscan query` would: every column is decoded on
 * the host and evaluated by the reference backend. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "table.h"

static ps_context *ctx;

static void exercise(const uint8_t *data, size_t size) {
  char err[TBL_MAX_NAME + 1024];
  for (int verify = 0; verify < 2; verify++) {
    tbl_table *t = NULL;
    err[0] = 0;
    if (tbl_open_memory(data, size, verify, &t, err, sizeof err) != 0) {
      if (!err[0]) abort(); /* an error always says what is wrong */
      continue;
    }
    for (uint32_t c = 0; c < t->ncols; c++) {
      const tbl_column *col = &t->cols[c];
      if (col->desc.n > (1u << 16)) continue; /* bounded work per input */
      uint64_t *vals = malloc(col->desc.n * 8 + 8);
      ps_for_desc d = col->desc;
      d.type = (d.type >= PS_TYPE_UINT8 && d.type <= PS_TYPE_UINT64) || col->encoding == TBL_ENC_DICT
                   ? PS_TYPE_UINT64
                   : PS_TYPE_INT64;
      d.scale = 0;
      (void)ps_decode_for(&d, vals, err, sizeof err);
      free(vals);
      ps_column *pc = NULL;
      if (tbl_column_create(ctx, t, c, &pc, err, sizeof err) == PS_OK) {
        ps_expr *e = NULL;
        uint64_t count;
        ps_status st = col->encoding == TBL_ENC_DICT ? ps_expr_compare(ctx, pc, PS_LT, ps_lit_str("m", 1), &e)
                                                     : ps_expr_compare(ctx, pc, PS_GE, ps_lit_int(0), &e);
        if (st == PS_OK) (void)ps_filter_count(ctx, e, &count);
        ps_expr_destroy(e);
        ps_column_destroy(pc);
      }
    }
    tbl_close(t);
  }
}

static uint64_t le(const uint8_t *p, int n) {
  uint64_t v = 0;
  for (int i = n - 1; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static void put32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!ctx) {
    ps_context_options o;
    ps_context_options_init(&o);
    o.backend = "reference";
    if (ps_context_create(&o, NULL, 0, &ctx) != PS_OK) abort();
  }
  exercise(data, size);
  if (size < TBL_HEADER_SIZE) return 0;
  uint8_t *b = malloc(size);
  memcpy(b, data, size);
  uint64_t ncols = le(b + 24, 4), esz = le(b + 28, 4), doff = le(b + 32, 8);
  if (doff <= size && esz && ncols <= (size - doff) / esz) put32(b + 52, crc32c(0, b + doff, (size_t)(ncols * esz)));
  put32(b + 60, crc32c(0, b, 60));
  exercise(b, size);
  free(b);
  return 0;
}
