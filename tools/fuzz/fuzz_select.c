/* libFuzzer target: the SELECT parser, binder and runner over arbitrary
 * bytes. A parsed statement must print to a canonical text that parses back
 * to the same text; errors must point inside the input; whatever binds must
 * run (or fail with a status a query may return) and print on a small table
 * of every column kind. */
#define _POSIX_C_SOURCE 200809L
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "encode.h"
#include "select_run.h"

static ps_context *ctx;
static tbl_table *table;
static uint8_t *table_file;
static FILE *sink;

static void setup(void) {
  ps_context_options o;
  ps_context_options_init(&o);
  o.backend = "reference";
  if (ps_context_create(&o, NULL, 0, &ctx) != PS_OK) abort();
  static const char csv[] =
      "a,b,p,d,s,t,\"x y\"\n"
      "1,-5,1.25,1994-01-01,apple,x,0\n"
      ",7,,1995-06-30,,\"\",1\n"
      "3,3,0.05,,banana,banana,2\n"
      "-9,12,100,2000-02-29,\"it's\",zz,3\n";
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
  sink = fopen("/dev/null", "w");
  if (!sink) abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  if (!ctx) setup();
  const char *src = (const char *)data;
  (void)select_is_aggregate(src, size); /* the shell's routing reads any text too */
  expr_arena arena = {0};
  select_stmt s;
  expr_error e;
  if (select_parse(src, size, &arena, &s, &e) != 0) {
    if (e.pos > size || !e.msg[0]) abort();
    expr_arena_free(&arena);
    return 0;
  }
  tbuf text = {0}, again = {0};
  if (select_to_string(&s, &text)) abort();
  expr_arena a2 = {0};
  select_stmt s2;
  if (select_parse((const char *)text.p, text.len, &a2, &s2, &e) != 0) abort();
  if (select_to_string(&s2, &again) || again.len != text.len || memcmp(again.p, text.p, text.len)) abort();
  select_plan p;
  if (select_plan_build(ctx, table, src, size, &p, sink) == 0) {
    ps_query_result *r = NULL;
    char err[TOOL_ERR_SIZE];
    if (select_plan_run(&p, &r, err, sizeof err) == 0) {
      if (select_write(&p, r, OUT_FORMAT_TABLE, 1, sink, err, sizeof err)) abort();
      ps_query_result_destroy(r);
    }
    select_plan_free(&p);
  }
  tbuf_free(&text);
  tbuf_free(&again);
  expr_arena_free(&a2);
  expr_arena_free(&arena);
  return 0;
}
