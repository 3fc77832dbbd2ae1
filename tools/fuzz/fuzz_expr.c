/* libFuzzer target: the WHERE-expression parser and binder over arbitrary
 * bytes. A parsed expression must print to a canonical text that parses back
 * to the same text, and must bind and evaluate (or fail cleanly) on a small
 * table of every column kind. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "encode.h"
#include "query.h"

static ps_context *ctx;
static tbl_table *table;
static uint8_t *table_file;

static void setup(void) {
  ps_context_options o;
  ps_context_options_init(&o);
  o.backend = "reference";
  if (ps_context_create(&o, NULL, 0, &ctx) != PS_OK) abort();
  static const char csv[] =
      "a,b,p,d,s,t,\"x y\",ts,tm,f\n"
      "1,-5,1.25,1994-01-01,apple,x,0,2024-09-05 07:53:23.5,07:53,true\n"
      ",7,,1995-06-30,,\"\",1,,23:59:59,\n"
      "3,3,0.05,,banana,banana,2,1969-12-31T23:59:59Z,,false\n"
      "-9,12,100,2000-02-29,\"it's\",zz,3,2024-09-05,00:00,TRUE\n";
  csv_mem m = {csv, sizeof csv - 1, 0};
  encode_options eo;
  encode_options_init(&eo);
  encoded_table et;
  char err[TOOL_ERR_SIZE];
  if (encode_csv(csv_read_mem, &m, &eo, &et, NULL, err, sizeof err)) abort();
  size_t size;
  if (tbl_write_memory(et.rows, et.cols, et.ncols, &table_file, &size, err, sizeof err)) abort();
  encoded_table_free(&et);
  if (tbl_open_memory(table_file, size, 1, &table, err, sizeof err)) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!ctx) setup();
  const char *src = (const char *)data;
  expr_arena arena = {0};
  ast_node *n = NULL;
  expr_error e;
  if (expr_parse(src, size, &arena, &n, &e) != 0) {
    if (e.pos > size || !e.msg[0]) abort(); /* errors point inside the input and say something */
    expr_arena_free(&arena);
    return 0;
  }
  tbuf text = {0}, again = {0};
  if (expr_to_string(n, &text)) abort();
  expr_arena a2 = {0};
  ast_node *n2 = NULL;
  if (expr_parse((const char *)text.p, text.len, &a2, &n2, &e) != 0) abort();
  if (expr_to_string(n2, &again) || again.len != text.len || memcmp(again.p, text.p, text.len)) abort();
  ps_column *cols[16] = {0}, *dec_cols[16] = {0};
  bind_env env = {ctx, table, cols, dec_cols};
  ps_expr *x = NULL;
  if (expr_bind(&env, n, &x, &e) == 0) {
    uint64_t count;
    uint8_t bm[1];
    ps_status st = ps_filter(ctx, x, bm, sizeof bm, &count);
    if (st != PS_OK && st != PS_ERR_INVALID_ARGUMENT && st != PS_ERR_LIMIT) abort();
    ps_expr_destroy(x);
  } else if (e.pos > size) {
    abort();
  }
  for (int c = 0; c < 16; c++) {
    ps_column_destroy(cols[c]);
    ps_column_destroy(dec_cols[c]);
  }
  tbuf_free(&text);
  tbuf_free(&again);
  expr_arena_free(&a2);
  expr_arena_free(&arena);
  return 0;
}
