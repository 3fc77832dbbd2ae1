/* query --select prints nothing when it fails: a table whose string column
 * holds a code past its dictionary (well-formed file, valid checksums: the
 * filter does not read that column) makes the value gather fail, and the
 * output stream must stay empty, header included. Run on every compiled
 * backend and on the host gather path. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "query.h"

static int failures;

enum { N = 12 };

/* id: 0..N-1 (uint8, width 8); name: dictionary {"x", "y"} with codes of
 * width 2, code 3 (past the dictionary) in row bad_row unless bad_row >= N. */
static uint8_t *make_table(int bad_row, size_t *size) {
  static uint8_t ids[N], codes[(N * 2 + 7) / 8];
  static const int32_t offs[] = {0, 1, 2};
  for (int i = 0; i < N; i++) ids[i] = (uint8_t)i;
  memset(codes, 0, sizeof codes);
  for (int i = 0; i < N; i++) codes[i * 2 / 8] |= (uint8_t)((i == bad_row ? 3u : (unsigned)(i % 2)) << (i * 2 % 8));
  tbl_write_column cols[2];
  memset(cols, 0, sizeof cols);
  cols[0].name = "id";
  cols[0].encoding = TBL_ENC_FOR;
  ps_for_desc_init(&cols[0].desc);
  cols[0].desc.type = PS_TYPE_UINT8;
  cols[0].desc.n = N;
  cols[0].desc.width = 8;
  cols[0].desc.data = ids;
  cols[0].desc.data_size = N;
  cols[1].name = "name";
  cols[1].encoding = TBL_ENC_DICT;
  ps_for_desc_init(&cols[1].desc);
  cols[1].desc.type = PS_TYPE_UINT32;
  cols[1].desc.n = N;
  cols[1].desc.width = 2;
  cols[1].desc.data = codes;
  cols[1].desc.data_size = sizeof codes;
  ps_dict_desc_init(&cols[1].dict);
  cols[1].dict.count = 2;
  cols[1].dict.offsets32 = offs;
  cols[1].dict.bytes = (const uint8_t *)"xy";
  cols[1].dict.bytes_size = 2;
  cols[1].dict.sorted = 1;
  uint8_t *buf = NULL;
  char err[256];
  if (tbl_write_memory(N, cols, 2, &buf, size, err, sizeof err)) {
    printf("FAIL: writing the table: %s\n", err);
    exit(1);
  }
  return buf;
}

/* Runs "id >= 0" --select id,name; returns the query's result and what it
 * wrote in out/out_len. */
static int run_select(const char *backend, const uint8_t *file, size_t size, int host, char *out, size_t *out_len,
                      char *err, size_t errsz) {
  tbl_table *t = NULL;
  ps_context *ctx = NULL;
  query_plan q;
  uint64_t *ids = NULL, count = 0;
  int rc = -1;
  *out_len = 0;
  if (tbl_open_memory(file, size, 1, &t, err, errsz)) return -2;
  if (query_context(backend, &ctx, err, errsz)) {
    tbl_close(t);
    return -2;
  }
  static const char src[] = "id >= 0";
  if (query_plan_build(ctx, t, src, sizeof src - 1, &q, stdout) == 0) {
    if (query_row_ids(&q, host, &ids, &count, err, errsz) == 0) {
      FILE *f = tmpfile();
      const int cols[2] = {0, 1};
      if (f) {
        rc = query_write_select(&q, ids, count, cols, 2, 1, host, f, err, errsz);
        fflush(f);
        rewind(f);
        *out_len = fread(out, 1, 4095, f);
        out[*out_len] = 0;
        fclose(f);
      }
      free(ids);
    }
    query_plan_free(&q);
  }
  ps_context_destroy(ctx);
  tbl_close(t);
  return rc;
}

int main(void) {
  const char *backends[] = {"reference", "opencl", "cuda"};
  for (size_t b = 0; b < sizeof backends / sizeof *backends; b++) {
    int compiled = 0;
    for (size_t i = 0; i < ps_backend_count(); i++) compiled |= strcmp(ps_backend_name(i), backends[b]) == 0;
    if (!compiled) continue;
    for (int host = 0; host < 2; host++) {
      char out[4096], err[512];
      size_t len, size;
      uint8_t *good = make_table(N, &size);
      int rc = run_select(backends[b], good, size, host, out, &len, err, sizeof err);
      free(good);
      if (rc == -2 && strcmp(backends[b], "cuda") == 0) break; /* no device here */
      CHECK(rc == 0, "%s%s: a sound table: %s", backends[b], host ? " (host)" : "", err);
      CHECK(strncmp(out, "id,name\n0,x\n1,y\n", 16) == 0, "%s%s: output [%s]", backends[b], host ? " (host)" : "", out);
      uint8_t *bad = make_table(7, &size);
      rc = run_select(backends[b], bad, size, host, out, &len, err, sizeof err);
      free(bad);
      CHECK(rc == -1, "%s%s: a corrupt code was not reported (rc %d)", backends[b], host ? " (host)" : "", rc);
      CHECK(len == 0, "%s%s: a failed --select wrote %zu bytes: [%s]", backends[b], host ? " (host)" : "", len, out);
      printf("%s%s: %s\n", backends[b], host ? " (host)" : "", err);
    }
  }
  if (failures) {
    printf("%d select failure test(s) failed\n", failures);
    return 1;
  }
  printf("select failures: all tests passed\n");
  return 0;
}
