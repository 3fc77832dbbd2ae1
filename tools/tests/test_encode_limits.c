/* encode at its limits: headers of hundreds of thousands of columns (the
 * duplicate-name checks of the encoder, the table writer and the reader, and
 * --types, must stay linear: CTest's timeout fails a quadratic one), the documented column limit, and degenerate inputs
 * (only line breaks, blank headers) that must be handled without undefined behaviour (run under
 * -fsanitize=undefined,address too). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "check.h"
#include "encode.h"
#include "table.h"

static int failures;

/* Encodes csv; returns encode_csv's result with the error in err. */
static int encode_text(const char *csv, size_t len, const char *types, encoded_table *t, char *err, size_t errsz) {
  csv_mem m = {csv, len, 0};
  encode_options o;
  encode_options_init(&o);
  o.types = types;
  tbuf diag = {0};
  err[0] = 0;
  int rc = encode_csv(csv_read_mem, &m, &o, t, &diag, err, errsz);
  tbuf_free(&diag);
  return rc;
}

static double seconds(void) {
  struct timespec ts;
  timespec_get(&ts, TIME_UTC);
  return (double)ts.tv_sec + (double)ts.tv_nsec * 1e-9;
}

/* A header c1,...,cN (the last name replaced by dup when given) and one row
 * of N small integers. */
static char *wide_csv(uint32_t n, const char *dup, size_t *len) {
  tbuf b = {0};
  for (uint32_t i = 0; i < n; i++) {
    if (i) tbuf_putc(&b, ',');
    if (dup && i == n - 1)
      tbuf_printf(&b, "%s", dup);
    else
      tbuf_printf(&b, "c%u", i + 1);
  }
  tbuf_putc(&b, '\n');
  for (uint32_t i = 0; i < n; i++) tbuf_printf(&b, i ? ",%u" : "%u", i % 10);
  tbuf_putc(&b, '\n');
  *len = b.len;
  return (char *)b.p;
}

static void test_wide(void) {
  char err[512];
  const uint32_t n = 200000;
  size_t len;
  char *csv = wide_csv(n, NULL, &len);
  encoded_table t;
  double t0 = seconds();
  int rc = encode_text(csv, len, "c200000:string,c1:decimal(2)", &t, err, sizeof err);
  double secs = seconds() - t0;
  CHECK(rc == 0, "%u columns: %s", n, err);
  if (rc == 0) {
    CHECK(t.ncols == n && t.rows == 1, "%u columns: %u columns, %llu rows", n, t.ncols, (unsigned long long)t.rows);
    CHECK(t.types[n - 1] == CT_STRING, "--types on the last of %u columns: type %d", n, (int)t.types[n - 1]);
    CHECK(t.types[0] == CT_DECIMAL && t.cols[0].desc.scale == 2, "--types on the first column: type %d scale %u",
          (int)t.types[0], t.cols[0].desc.scale);
    CHECK(t.types[1] == CT_INT, "inferred: type %d", (int)t.types[1]);
    /* The writer checks the names again, and the reader once more. */
    double w0 = seconds();
    uint8_t *file = NULL;
    size_t size = 0;
    tbl_table *back = NULL;
    rc = tbl_write_memory(t.rows, t.cols, t.ncols, &file, &size, err, sizeof err);
    CHECK(rc == 0, "writing %u columns: %s", n, err);
    if (rc == 0) {
      rc = tbl_open_memory(file, size, 1, &back, err, sizeof err);
      CHECK(rc == 0 && back->ncols == n, "reading %u columns back: %s", n, rc == 0 ? "wrong count" : err);
      tbl_close(back);
      free(file);
    }
    printf("%u columns written and read back in %.2f s\n", n, seconds() - w0);
    encoded_table_free(&t);
  }
  printf("%u columns encoded in %.2f s\n", n, secs);
  free(csv);

  /* A duplicate found at the far end, with both positions. */
  csv = wide_csv(n, "c3", &len);
  rc = encode_text(csv, len, NULL, &t, err, sizeof err);
  CHECK(rc != 0 && strcmp(err, "header: duplicate column name 'c3' (columns 3 and 200000)") == 0,
        "duplicate: rc %d, '%s'", rc, err);
  free(csv);

  /* --types naming no column, among many. */
  csv = wide_csv(1000, NULL, &len);
  rc = encode_text(csv, len, "c5:int,c1001:int", &t, err, sizeof err);
  CHECK(rc != 0 && strcmp(err, "--types: no column named 'c1001'") == 0, "unknown --types name: '%s'", err);
  /* A later entry for the same column wins. */
  rc = encode_text(csv, len, "c5:int,c5:string", &t, err, sizeof err);
  CHECK(rc == 0 && t.types[4] == CT_STRING, "repeated --types entry: rc %d, '%s'", rc, err);
  if (rc == 0) encoded_table_free(&t);
  free(csv);
}

static void test_column_limit(void) {
  char err[512];
  /* One column more than the limit: refused from the header alone. */
  size_t n = (size_t)ENCODE_MAX_COLUMNS + 1;
  char *csv = malloc(n * 2 + 1);
  for (size_t i = 0; i < n; i++) {
    csv[2 * i] = 'x';
    csv[2 * i + 1] = i + 1 < n ? ',' : '\n';
  }
  csv[2 * n] = 0;
  encoded_table t;
  int rc = encode_text(csv, 2 * n, NULL, &t, err, sizeof err);
  char want[128];
  snprintf(want, sizeof want, "header: %zu columns; at most %u are supported", n, (unsigned)ENCODE_MAX_COLUMNS);
  CHECK(rc != 0 && strcmp(err, want) == 0, "over the column limit: rc %d, '%s'", rc, err);
  free(csv);
}

/* Inputs whose header or records have no bytes at all. */
static void test_degenerate(void) {
  static const struct {
    const char *csv;
    int ok;              /* encodes */
    uint64_t rows;       /* when it does */
    const char *message; /* else the error */
  } cases[] = {
      {"", 0, 0, "empty input: expected a header row"},
      {"\n", 1, 0, NULL},       /* a blank header: one column, column_1 */
      {"\n\n\n\n", 1, 3, NULL}, /* only line breaks: three null rows */
      {"\r\n\r\n", 1, 1, NULL},
      {",\n,\n", 1, 1, NULL},       /* two unnamed columns, one all-null row */
      {"\"\"\n\"\"\n", 1, 1, NULL}, /* a quoted empty name and value */
      {"a\n\n\n", 1, 2, NULL},
      {"a,b\n\n\n", 1, 0, NULL}, /* blank lines skipped with several columns */
  };
  for (size_t i = 0; i < sizeof cases / sizeof *cases; i++) {
    char err[512];
    encoded_table t;
    int rc = encode_text(cases[i].csv, strlen(cases[i].csv), NULL, &t, err, sizeof err);
    if (cases[i].ok) {
      CHECK(rc == 0, "case %zu: %s", i, err);
      if (rc == 0) {
        CHECK(t.rows == cases[i].rows, "case %zu: %llu rows, expected %llu", i, (unsigned long long)t.rows,
              (unsigned long long)cases[i].rows);
        CHECK(t.ncols >= 1 && (strcmp(t.names[0], "column_1") == 0 || strcmp(t.names[0], "a") == 0),
              "case %zu: first column '%s'", i, t.names[0]);
        encoded_table_free(&t);
      }
    } else {
      CHECK(rc != 0 && strcmp(err, cases[i].message) == 0, "case %zu: rc %d, '%s'", i, rc, err);
    }
  }
}

int main(void) {
  test_degenerate();
  test_column_limit();
  test_wide();
  if (failures) {
    printf("%d encode limit test(s) failed\n", failures);
    return 1;
  }
  printf("encode limits: all tests passed\n");
  return 0;
}
