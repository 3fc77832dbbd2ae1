/* CSV reader and encoder tests: RFC 4180 quoting, line endings, type
 * inference, explicit types, nulls, and bad rows reported with line and column. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "encode.h"

static int failures;

/* A source that hands out one byte per read, to cross every buffer boundary. */
static long read_tiny(void *opaque, void *dst, size_t n) {
  csv_mem *m = opaque;
  (void)n;
  if (m->pos >= m->len) return 0;
  memcpy(dst, m->p + m->pos++, 1);
  return 1;
}

/* Reads all records, joining fields with '|' and records with '\n'; quoted
 * fields are marked with a leading '^'. Returns the text or the error. */
static char *read_all(const char *csv, char delim, int tiny, uint64_t *lines_out) {
  csv_mem m = {csv, strlen(csv), 0};
  csv_reader r;
  tbuf out = {0};
  char err[512];
  csv_init(&r, tiny ? read_tiny : csv_read_mem, &m, delim);
  int got, k = 0;
  while ((got = csv_next(&r, err, sizeof err)) == 1) {
    if (lines_out) lines_out[k++] = r.record_line;
    for (size_t i = 0; i < r.nfields; i++) {
      if (i) tbuf_putc(&out, '|');
      if (r.fields[i].quoted) tbuf_putc(&out, '^');
      tbuf_append(&out, csv_field_ptr(&r, i), r.fields[i].len);
    }
    tbuf_putc(&out, '\n');
  }
  if (got < 0) {
    out.len = 0;
    tbuf_printf(&out, "ERROR: %s", err);
  }
  tbuf_putc(&out, 0);
  csv_free(&r);
  return (char *)out.p;
}

static void csv_case(const char *csv, char delim, const char *want) {
  for (int tiny = 0; tiny < 2; tiny++) {
    char *got = read_all(csv, delim, tiny, NULL);
    int ok = strncmp(want, "ERROR", 5) ? !strcmp(got, want) : !!strstr(got, want + 6);
    CHECK(ok, "csv %s\n  got:  [%s]\n  want: [%s]", tiny ? "(1-byte reads)" : "", got, want);
    free(got);
  }
}

static int encode(const char *csv, const char *types, const char *nullv, encoded_table *t, char *err, tbuf *diag) {
  encode_options o;
  encode_options_init(&o);
  o.types = types;
  o.null_value = nullv;
  csv_mem m = {csv, strlen(csv), 0};
  return encode_csv(csv_read_mem, &m, &o, t, diag, err, TOOL_ERR_SIZE);
}

/* Decoded value of a FOR column row (decimals: the scaled integer). */
static int64_t value(const tbl_write_column *c, uint64_t row) {
  ps_for_desc d = c->desc;
  d.type = PS_TYPE_INT64;
  d.scale = 0;
  int64_t *v = malloc(d.n * 8 + 8);
  char err[256];
  if (ps_decode_for(&d, v, err, sizeof err) != PS_OK) {
    printf("decode: %s\n", err);
    abort();
  }
  int64_t x = v[row];
  free(v);
  return x;
}
static int is_null(const tbl_write_column *c, uint64_t row) {
  return c->desc.validity && !((c->desc.validity[row / 8] >> (row % 8)) & 1);
}
static const char *string_at(const tbl_write_column *c, uint64_t row, size_t *len) {
  uint64_t code = (uint64_t)value(c, row);
  const int32_t *o = c->dict.offsets32;
  *len = (size_t)(o[code + 1] - o[code]);
  return *len ? (const char *)c->dict.bytes + o[code] : ""; /* no bytes at all when every string is empty */
}
static int str_is(const tbl_write_column *c, uint64_t row, const char *s) {
  size_t len;
  const char *p = string_at(c, row, &len);
  return !is_null(c, row) && len == strlen(s) && !memcmp(p, s, len);
}

int main(void) {
  /* ---- CSV reader ---- */
  csv_case("a,b\n1,2\n", ',', "a|b\n1|2\n");
  csv_case("a,b\n1,2", ',', "a|b\n1|2\n");
  csv_case("a,b\r\n1,2\r\n", ',', "a|b\n1|2\n");
  csv_case("\xEF\xBB\xBF" "a,b\n", ',', "a|b\n");
  csv_case("a,,\n", ',', "a||\n");
  csv_case("\"\",x\n", ',', "^|x\n");
  csv_case("\"x,y\",\"he said \"\"hi\"\"\",\"l1\nl2\"\n", ',', "^x,y|^he said \"hi\"|^l1\nl2\n");
  csv_case("\"a\r\nb\"\n", ',', "^a\r\nb\n");
  csv_case("a;b,c\n", ';', "a|b,c\n");
  csv_case("a\tb\n", '\t', "a|b\n");
  csv_case("5\" screen,x\n", ',', "5\" screen|x\n"); /* a quote inside an unquoted field is data */
  csv_case("\n", ',', "\n");
  csv_case("", ',', "");
  csv_case("a,\"open\n\nstill open", ',', "ERROR line 1, field 2: unterminated quoted field");
  csv_case("a\n\"x\"y,z\n", ',', "ERROR line 2, field 1: unexpected character 'y' after a closing quote");
  {
    uint64_t lines[8] = {0};
    char *got = read_all("h\n\"a\nb\nc\"\nnext\n", ',', 0, lines);
    CHECK(lines[0] == 1 && lines[1] == 2 && lines[2] == 5, "record lines %llu %llu %llu", (unsigned long long)lines[0],
          (unsigned long long)lines[1], (unsigned long long)lines[2]);
    free(got);
  }

  /* ---- type inference, nulls, exact decimals, dates, strings ---- */
  encoded_table t;
  tbuf diag = {0};
  char err[TOOL_ERR_SIZE];
  const char *csv =
      "i,d,dt,s,mixed,empty,q\n"
      "1,1.5,1994-01-01,apple,1,,\"\"\n"
      "-20,-0.125,2000-02-29,\"b,c\",2.25,,x\n"
      ",,,,,,\n"
      "300,7,1969-12-31,\"\",abc,,y\n"
      "\n";
  CHECK(encode(csv, NULL, NULL, &t, err, &diag) == 0, "encode: %s", err);
  if (t.ncols == 7) {
    CHECK(t.rows == 4, "rows %llu", (unsigned long long)t.rows);
    CHECK(t.types[0] == CT_INT && t.cols[0].encoding == TBL_ENC_FOR && t.cols[0].desc.type == PS_TYPE_INT64, "i type");
    CHECK(value(&t.cols[0], 0) == 1 && value(&t.cols[0], 1) == -20 && value(&t.cols[0], 3) == 300, "i values");
    CHECK(is_null(&t.cols[0], 2) && t.cols[0].null_count == 1, "i null");
    CHECK(t.types[1] == CT_DECIMAL && t.cols[1].logical == TBL_LOGICAL_DECIMAL && t.cols[1].desc.scale == 3 &&
              t.cols[1].desc.type == PS_TYPE_FLOAT64,
          "d type scale %u", t.cols[1].desc.scale);
    CHECK(value(&t.cols[1], 0) == 1500 && value(&t.cols[1], 1) == -125 && value(&t.cols[1], 3) == 7000, "d values");
    CHECK(t.types[2] == CT_DATE && t.cols[2].logical == TBL_LOGICAL_DATE && t.cols[2].desc.type == PS_TYPE_INT32,
          "dt type");
    CHECK(value(&t.cols[2], 0) == 8766 && value(&t.cols[2], 1) == 11016 && value(&t.cols[2], 3) == -1, "dt values");
    CHECK(t.types[3] == CT_STRING && t.cols[3].encoding == TBL_ENC_DICT, "s type");
    CHECK(str_is(&t.cols[3], 0, "apple") && str_is(&t.cols[3], 1, "b,c") && is_null(&t.cols[3], 2) &&
              str_is(&t.cols[3], 3, ""),
          "s values (a quoted \"\" is an empty string, an empty field a null)");
    CHECK(t.types[4] == CT_STRING, "mixed numbers and text are strings");
    CHECK(t.types[5] == CT_INT && t.cols[5].null_count == 4 && t.cols[5].desc.width == 0, "all-null column");
    CHECK(t.types[6] == CT_STRING && str_is(&t.cols[6], 0, "") && is_null(&t.cols[6], 2), "q");
    CHECK(t.cols[3].dict.sorted, "dictionary sorted");
  } else {
    CHECK(0, "ncols %u", t.ncols);
  }
  encoded_table_free(&t);

  /* ---- explicit types ---- */
  CHECK(encode("a,b,c\n1,2.5,x\n2,3,y\n", "a:string,b:decimal(3),c:string", NULL, &t, err, &diag) == 0, "%s", err);
  if (t.ncols == 3) {
    CHECK(t.types[0] == CT_STRING && str_is(&t.cols[0], 1, "2"), "a as string");
    CHECK(t.types[1] == CT_DECIMAL && t.cols[1].desc.scale == 3 && value(&t.cols[1], 0) == 2500, "b decimal(3)");
  }
  encoded_table_free(&t);
  CHECK(encode("a,b\n1,2.5\n", "b:float", NULL, &t, err, &diag) == 0, "%s", err);
  if (t.ncols == 2) CHECK(t.types[1] == CT_FLOAT && t.cols[1].desc.type == PS_TYPE_FLOAT64, "float");
  encoded_table_free(&t);
  CHECK(encode("a,b\n1,2.5\n", "b:decimal", NULL, &t, err, &diag) == 0, "%s", err);
  if (t.ncols == 2) CHECK(t.cols[1].desc.scale == 1, "decimal without scale: %u", t.cols[1].desc.scale);
  encoded_table_free(&t);
  CHECK(encode("a,b\n1,2\n", "a:int,b:date", NULL, &t, err, &diag) != 0 &&
            strstr(err, "line 2, column 2 'b': '2' is not a date"),
        "bad date: %s", err);
  diag.len = 0;
  CHECK(encode("a,p\n1,2.5\n2,abc\n3,1.234\n", "p:decimal(2)", NULL, &t, err, &diag) != 0 && strstr(err, "2 bad values") &&
            strstr(err, "line 3, column 2 'p': 'abc' is not a decimal number"),
        "bad decimals: %s", err);
  tbuf_putc(&diag, 0);
  CHECK(strstr((char *)diag.p, "line 4, column 2 'p': '1.234' does not fit decimal(2)"), "diag: %s", (char *)diag.p);
  diag.len = 0;
  CHECK(encode("a\n99999999999999999999\n", "a:int", NULL, &t, err, &diag) != 0 && strstr(err, "not a 64-bit integer"),
        "int overflow: %s", err);
  CHECK(encode("a\nnan\n", "a:float", NULL, &t, err, &diag) != 0 && strstr(err, "not a finite number"), "nan: %s", err);
  CHECK(encode("a,b\n1,2\n", "zz:int", NULL, &t, err, &diag) != 0 && strstr(err, "no column named 'zz'"), "%s", err);
  CHECK(encode("a,b\n1,2\n", "a:bogus", NULL, &t, err, &diag) != 0 && strstr(err, "unknown type 'bogus'"), "%s", err);
  CHECK(encode("a,b\n1,2\n", "a", NULL, &t, err, &diag) != 0 && strstr(err, "not name:type"), "%s", err);
  CHECK(encode("a,b\n1,2\n", "a:int(2)", NULL, &t, err, &diag) != 0, "int(2) is not a type");

  /* ---- bad rows: every one reported with its line, nothing dropped ---- */
  diag.len = 0;
  CHECK(encode("a,b,c\n1,2,3\n4,5\n6,7,8\n9,10,11,12\n", NULL, NULL, &t, err, &diag) != 0 && strstr(err, "2 bad rows") &&
            strstr(err, "line 3: expected 3 fields, found 2"),
        "bad rows: %s", err);
  tbuf_putc(&diag, 0);
  CHECK(strstr((char *)diag.p, "line 5: expected 3 fields, found 4"), "diag: %s", (char *)diag.p);
  /* the line of a row after a multi-line field */
  CHECK(encode("a,b\n\"x\ny\",1\n2\n", NULL, NULL, &t, err, &diag) != 0 && strstr(err, "line 4: expected 2 fields"),
        "line after a multi-line field: %s", err);
  CHECK(encode("a,b\n1,\"open\n", NULL, NULL, &t, err, &diag) != 0 && strstr(err, "line 2, field 2: unterminated"),
        "unterminated: %s", err);

  /* ---- headers, --null, empty inputs ---- */
  CHECK(encode("a,a\n1,2\n", NULL, NULL, &t, err, &diag) != 0 && strstr(err, "duplicate column name 'a'"), "%s", err);
  CHECK(encode("", NULL, NULL, &t, err, &diag) != 0 && strstr(err, "empty input"), "%s", err);
  CHECK(encode("a,,c\n1,2,3\n", NULL, NULL, &t, err, &diag) == 0 && t.ncols == 3 && !strcmp(t.names[1], "column_2"),
        "empty header name: %s", err);
  encoded_table_free(&t);
  CHECK(encode("a,b\n", NULL, NULL, &t, err, &diag) == 0 && t.rows == 0, "header only: %s", err);
  encoded_table_free(&t);
  CHECK(encode("a,b\n1,NA\n2,3\n3,\"NA\"\n", "b:string", "NA", &t, err, &diag) == 0, "--null: %s", err);
  if (t.ncols == 2) CHECK(is_null(&t.cols[1], 0) && str_is(&t.cols[1], 2, "NA") && t.cols[1].null_count == 1, "NA");
  encoded_table_free(&t);
  CHECK(encode("a,b\n1,NA\n2,3\n", NULL, "NA", &t, err, &diag) == 0, "--null infer: %s", err);
  if (t.ncols == 2) CHECK(t.types[1] == CT_INT && is_null(&t.cols[1], 0) && value(&t.cols[1], 1) == 3, "NA int");
  encoded_table_free(&t);
  /* a column whose every value is the empty string (quoted: not null) has no string bytes at all */
  CHECK(encode("a,b\n1,\"\"\n2,\"\"\n", "b:string", NULL, &t, err, &diag) == 0 && t.ncols == 2, "empty strings: %s",
        err);
  if (t.ncols == 2)
    CHECK(t.types[1] == CT_STRING && !is_null(&t.cols[1], 0) && str_is(&t.cols[1], 0, "") && str_is(&t.cols[1], 1, ""),
          "empty strings kept as values");
  encoded_table_free(&t);
  /* an inferred decimal that does not fit 64 bits at its scale is a float64 (a lossless float mapping) */
  CHECK(encode("a\n123456789012345678.5\n0.25\n", NULL, NULL, &t, err, &diag) == 0 && t.types[0] == CT_FLOAT &&
            t.cols[0].desc.float_map != PS_FLOAT_MAP_DECIMAL,
        "decimal overflow: %s", err);
  encoded_table_free(&t);
  /* ---- inference of exponents, booleans, money, padded numbers; warnings ---- */
  CHECK(encode("e,b,m,p,x,w,d\n"
               "1e5,TRUE,$12.50,\" 1\",9223372036854775807,1,2024-01-01\n"
               "-2.5E-3,false,-$3,2 ,0.5,2,2024-01-02\n"
               ",True,$0.99,\t3,1,x,soon\n",
               NULL, NULL, &t, err, &diag) == 0,
        "inference: %s", err);
  if (t.ncols == 7) {
    CHECK(t.types[0] == CT_DECIMAL && t.cols[0].desc.scale == 4 && value(&t.cols[0], 0) == 1000000000 &&
              value(&t.cols[0], 1) == -25 && is_null(&t.cols[0], 2),
          "exponents as exact decimals");
    CHECK(t.types[1] == CT_BOOL && t.cols[1].logical == TBL_LOGICAL_BOOLEAN && value(&t.cols[1], 0) == 1 &&
              value(&t.cols[1], 1) == 0 && value(&t.cols[1], 2) == 1,
          "booleans");
    CHECK(t.types[2] == CT_DECIMAL && value(&t.cols[2], 0) == 1250 && value(&t.cols[2], 1) == -300, "money");
    CHECK(t.types[3] == CT_INT && value(&t.cols[3], 0) == 1 && value(&t.cols[3], 2) == 3, "padded numbers");
    CHECK(t.types[4] == CT_FLOAT && t.types[5] == CT_STRING && t.types[6] == CT_STRING, "fallbacks to strings");
    const char *wtext = t.warnings.p ? (const char *)t.warnings.p : "";
    CHECK(strstr(wtext, "column 3 'm': '$' signs dropped") != NULL, "money note: %s", wtext);
    CHECK(strstr(wtext,
                 "column 5 'x' is stored as float64 (its values do not fit one 64-bit decimal): digits past "
                 "a double's 17 may be lost") != NULL,
          "overflow warning: %s", wtext);
    CHECK(strstr(wtext, "column 6 'w' is stored as strings: line 4 has 'x', not a number") &&
              strstr(wtext, "--types 'w:decimal'") && strstr(wtext, "'w:string'"),
          "number fallback warning: %s", wtext);
    CHECK(strstr(wtext, "column 7 'd' is stored as strings: line 4 has 'soon', not a date or time") != NULL,
          "date fallback warning: %s", wtext);
    CHECK(!strstr(wtext, "column 1 ") && !strstr(wtext, "column 2 ") && !strstr(wtext, "column 4 "),
          "no warning for typed columns: %s", wtext);
  }
  encoded_table_free(&t);
  /* text that is text gets no warning */
  CHECK(encode("name\napple\n1\nkiwi\n", NULL, NULL, &t, err, &diag) == 0 && t.types[0] == CT_STRING &&
            t.warnings.len == 0,
        "plain strings: no warning");
  encoded_table_free(&t);
  /* --types names resolve as query names: exact, else the only match in any case */
  CHECK(encode("Price,price2,Name\n1,2,a\n", "PRICE:decimal(2),name:string", NULL, &t, err, &diag) == 0 &&
            t.types[0] == CT_DECIMAL && t.cols[0].desc.scale == 2,
        "case-insensitive --types: %s", err);
  encoded_table_free(&t);
  CHECK(encode("a,A\n1,2\n", "a:decimal", NULL, &t, err, &diag) == 0 && t.types[0] == CT_DECIMAL &&
            t.types[1] == CT_INT,
        "exact name wins: %s", err);
  encoded_table_free(&t);
  CHECK(encode("ab,AB\n1,2\n", "Ab:decimal", NULL, &t, err, &diag) != 0 && strstr(err, "differ only in case"),
        "ambiguous --types: %s", err);
  encoded_table_free(&t);
  /* the delimiter from the header line */
  static const struct {
    const char *csv;
    char delim;
  } delims[] = {{"a;b\n1;x,y\n", ';'}, {"a\tb\n1\t2\n", '\t'}, {"a|b|c\n1|2|3\n", '|'},
                {"\"a;b\",c\n1,2\n", ','}, {"a\n1\n", ','}, {"a,b;c\n1,2\n", ','}};
  for (size_t k = 0; k < sizeof delims / sizeof *delims; k++) {
    CHECK(encode(delims[k].csv, NULL, NULL, &t, err, &diag) == 0 && t.delimiter == delims[k].delim,
          "delimiter of '%s': got '%c' (%s)", delims[k].csv, t.delimiter, err);
    encoded_table_free(&t);
  }
  CHECK(encode("a;b\n1;x,y\n", NULL, NULL, &t, err, &diag) == 0 && t.ncols == 2 && str_is(&t.cols[1], 0, "x,y"),
        "semicolon file: %s", err);
  encoded_table_free(&t);
  /* one-byte reads: detection reads ahead to the end of the header line */
  {
    csv_mem m = {"a|b\n1|2\n", 8, 0};
    csv_reader r;
    csv_init(&r, read_tiny, &m, 0);
    CHECK(csv_next(&r, err, TOOL_ERR_SIZE) == 1 && r.nfields == 2 && r.delim == '|', "tiny reads detect '|'");
    csv_free(&r);
  }
  /* a one-column CSV: an empty line is a null */
  CHECK(encode("a\n1\n\n3\n", NULL, NULL, &t, err, &diag) == 0 && t.rows == 3 && t.cols[0].null_count == 1,
        "one column blank line: %s", err);
  encoded_table_free(&t);

  /* ---- a bigger input through the whole pipeline: many rows, width boundaries ---- */
  {
    tbuf big = {0};
    tbuf_printf(&big, "n,s\n");
    for (int i = 0; i < 70000; i++) tbuf_printf(&big, "%d,\"v%d\"\n", i - 35000, i % 300);
    tbuf_putc(&big, 0);
    CHECK(encode((char *)big.p, NULL, NULL, &t, err, &diag) == 0, "big: %s", err);
    if (t.ncols == 2) {
      CHECK(t.rows == 70000 && t.cols[0].desc.width == 17 && t.cols[1].dict.count == 300, "big shape w=%u d=%llu",
            t.cols[0].desc.width, (unsigned long long)t.cols[1].dict.count);
      CHECK(value(&t.cols[0], 69999) == 34999 && str_is(&t.cols[1], 301, "v1"), "big values");
    }
    encoded_table_free(&t);
    tbuf_free(&big);
  }
  /* ---- the hashing dictionary encoder agrees with ps_encode_dict ---- */
  {
    enum { M = 20000 };
    int64_t *offs = malloc((M + 1) * 8);
    uint8_t valid[(M + 7) / 8] = {0};
    tbuf bytes = {0};
    uint64_t x = 7;
    offs[0] = 0;
    for (int i = 0; i < M; i++) {
      x = x * 6364136223846793005ull + 1442695040888963407ull;
      if ((x >> 60) != 0) valid[i / 8] |= (uint8_t)(1 << (i % 8));
      tbuf_printf(&bytes, "s%llu%s", (unsigned long long)((x >> 33) % 997), (x >> 20) % 5 ? "" : "\xff");
      offs[i + 1] = (int64_t)bytes.len;
    }
    ps_strings in;
    memset(&in, 0, sizeof in);
    in.n = M;
    in.offsets64 = offs;
    in.bytes = bytes.p;
    in.validity = valid;
    tool_dict td;
    ps_encoded_dict ref;
    char e2[256];
    CHECK(tool_encode_dict(&in, &td, err, sizeof err) == 0, "tool_encode_dict: %s", err);
    CHECK(ps_encode_dict(&in, NULL, e2, sizeof e2, &ref) == PS_OK, "ps_encode_dict: %s", e2);
    CHECK(td.uniq.dict.count == ref.dict.count && td.uniq.dict.bytes_size == ref.dict.bytes_size &&
              !memcmp(td.uniq.dict.bytes, ref.dict.bytes, ref.dict.bytes_size) &&
              !memcmp(td.uniq.dict.offsets32, ref.dict.offsets32, (ref.dict.count + 1) * 4),
          "dictionaries differ");
    uint32_t *c1 = malloc(M * 4), *c2 = malloc(M * 4);
    ps_for_desc d1 = td.codes.desc, d2 = ref.codes.desc;
    d1.type = d2.type = PS_TYPE_UINT32;
    CHECK(ps_decode_for(&d1, c1, e2, sizeof e2) == PS_OK && ps_decode_for(&d2, c2, e2, sizeof e2) == PS_OK, "decode");
    int same = 1;
    for (int i = 0; i < M; i++)
      if (((valid[i / 8] >> (i % 8)) & 1) && c1[i] != c2[i]) same = 0;
    CHECK(same, "codes differ");
    free(c1);
    free(c2);
    tool_dict_free(&td);
    ps_encoded_dict_destroy(&ref);
    free(offs);
    tbuf_free(&bytes);
  }
  tbuf_free(&diag);
  if (failures) {
    printf("%d csv/encode test(s) failed\n", failures);
    return 1;
  }
  printf("csv/encode: all tests passed\n");
  return 0;
}
