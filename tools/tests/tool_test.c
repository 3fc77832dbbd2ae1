/* See tool_test.h. */
#include "tool_test.h"

#include <string.h>

#include "encode.h"

static uint64_t rng_state;

void test_rnd_seed(uint64_t s) { rng_state = s; }

uint64_t test_rnd(void) {
  uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
  z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
  z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
  return z ^ (z >> 31);
}

tbl_table *test_make_table(const char *csv, const char *types, uint8_t **file) {
  encode_options o;
  encode_options_init(&o);
  o.types = types;
  csv_mem m = {csv, strlen(csv), 0};
  encoded_table et;
  char err[TOOL_ERR_SIZE];
  if (encode_csv(csv_read_mem, &m, &o, &et, NULL, err, sizeof err)) {
    printf("encode: %s\n", err);
    return NULL;
  }
  size_t size;
  if (tbl_write_memory(et.rows, et.cols, et.ncols, file, &size, err, sizeof err)) {
    printf("write: %s\n", err);
    encoded_table_free(&et);
    return NULL;
  }
  encoded_table_free(&et);
  tbl_table *t;
  if (tbl_open_memory(*file, size, 1, &t, err, sizeof err)) {
    printf("open: %s\n", err);
    return NULL;
  }
  return t;
}
