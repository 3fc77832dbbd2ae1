/* Table file tests: round trip; every byte corrupted and every length
 * truncated gives a clean error; hostile fields with valid checksums are
 * rejected with a message naming the problem. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "crc32c.h"
#include "table.h"

static int failures;

enum { N = 100, NC = 5 };
static ps_encoded enc_id, enc_price, enc_const;
static ps_encoded_dict enc_name, enc_empty;
static int64_t ids[N], prices[N];
static uint8_t price_valid[(N + 7) / 8], name_valid[(N + 7) / 8];
static tbl_write_column cols[NC];

static void build_columns(void) {
  char err[256];
  for (int i = 0; i < N; i++) {
    ids[i] = 1000 + i * 3;
    prices[i] = (i * 7919) % 100000 - 500;
    if (i % 5) price_valid[i / 8] |= (uint8_t)(1 << (i % 8));
    if (i % 7) name_valid[i / 8] |= (uint8_t)(1 << (i % 8));
  }
  ps_plain p = {PS_TYPE_INT64, ids, N, NULL};
  if (ps_encode_for(&p, 0, 0, 0, NULL, err, sizeof err, &enc_id) != PS_OK) abort();
  ps_plain pp = {PS_TYPE_INT64, prices, N, price_valid};
  if (ps_encode_for(&pp, 0, 0, 0, NULL, err, sizeof err, &enc_price) != PS_OK) abort();
  int64_t same[N];
  for (int i = 0; i < N; i++) same[i] = 42;
  ps_plain pc = {PS_TYPE_INT64, same, N, NULL};
  if (ps_encode_for(&pc, 0, 0, 0, NULL, err, sizeof err, &enc_const) != PS_OK) abort();
  static const char *words[] = {"apple", "banana", "cherry", "date", "elderberry"};
  int64_t offs[N + 1], eoffs[N + 1];
  char bytes[N * 16];
  size_t len = 0;
  offs[0] = eoffs[0] = 0;
  for (int i = 0; i < N; i++) {
    const char *w = words[i % 5];
    memcpy(bytes + len, w, strlen(w));
    len += strlen(w);
    offs[i + 1] = (int64_t)len;
    eoffs[i + 1] = 0;
  }
  ps_strings s;
  memset(&s, 0, sizeof s);
  s.n = N;
  s.offsets64 = offs;
  s.bytes = (const uint8_t *)bytes;
  s.validity = name_valid;
  if (ps_encode_dict(&s, NULL, err, sizeof err, &enc_name) != PS_OK) abort();
  s.offsets64 = eoffs;
  s.validity = NULL;
  if (ps_encode_dict(&s, NULL, err, sizeof err, &enc_empty) != PS_OK) abort();

  const char *names[NC] = {"c0", "c1", "c2", "c3", "c4"};
  memset(cols, 0, sizeof cols);
  for (int c = 0; c < NC; c++) cols[c].name = names[c];
  cols[0].encoding = TBL_ENC_FOR;
  cols[0].desc = enc_id.desc;
  cols[0].raw_bytes = N * 8;
  cols[1].encoding = TBL_ENC_FOR;
  cols[1].logical = TBL_LOGICAL_DECIMAL;
  cols[1].desc = enc_price.desc;
  cols[1].desc.type = PS_TYPE_FLOAT64;
  cols[1].desc.scale = 2;
  cols[1].null_count = N / 5;
  cols[2].encoding = TBL_ENC_DICT;
  cols[2].desc = enc_name.codes.desc;
  cols[2].dict = enc_name.dict;
  cols[2].null_count = (N + 6) / 7;
  cols[3].encoding = TBL_ENC_FOR;
  cols[3].desc = enc_const.desc;
  cols[4].encoding = TBL_ENC_DICT;
  cols[4].desc = enc_empty.codes.desc;
  cols[4].dict = enc_empty.dict;
}

static int try_open(const uint8_t *buf, size_t size, int verify, char *err, size_t errsz) {
  tbl_table *t = NULL;
  int r = tbl_open_memory(buf, size, verify, &t, err, errsz);
  if (r == 0) tbl_close(t);
  return r;
}

static uint64_t get64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}
static void put(uint8_t *p, int width, uint64_t v) {
  for (int i = 0; i < width; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static size_t cur_size;
static void fix_checksums(uint8_t *b) {
  uint64_t ncols = get64(b + 24) & 0xFFFFFFFFu, esz = get64(b + 28) & 0xFFFFFFFFu;
  uint64_t doff = get64(b + 32);
  /* a hostile header may put the directory outside the file: then only the header checksum */
  if (doff <= cur_size && ncols * esz <= cur_size - doff) put(b + 52, 4, crc32c(0, b + doff, (size_t)(ncols * esz)));
  put(b + 60, 4, crc32c(0, b, 60));
}

/* Patches a field (header when entry < 0, else directory entry) and recomputes
 * the header and directory checksums; expects an error containing want. */
static void hostile(const uint8_t *file, size_t size, int entry, int off, int width, uint64_t v, const char *want) {
  uint8_t *b = malloc(size);
  memcpy(b, file, size);
  size_t at = entry < 0 ? (size_t)off : 64 + (size_t)entry * TBL_ENTRY_SIZE + (size_t)off;
  put(b + at, width, v);
  fix_checksums(b);
  char err[1024] = "";
  int r = try_open(b, size, 1, err, sizeof err);
  CHECK(r != 0 && strstr(err, want), "entry %d offset %d = %llu: got '%s', want '%s'", entry, off,
        (unsigned long long)v, r ? err : "(opened)", want);
  free(b);
}

/* Patches bytes of a section and its checksum in the entry (crc_off), so that
 * only the content checks can catch it. */
static void hostile_section(const uint8_t *file, size_t size, int entry, int sec_off_field, int sec_size_field,
                            int crc_field, size_t at, const void *bytes, size_t n, const char *want) {
  uint8_t *b = malloc(size);
  memcpy(b, file, size);
  uint8_t *e = b + 64 + (size_t)entry * TBL_ENTRY_SIZE;
  uint64_t so = get64(e + sec_off_field), ss = get64(e + sec_size_field);
  memcpy(b + so + at, bytes, n);
  put(e + crc_field, 4, crc32c(0, b + so, (size_t)ss));
  fix_checksums(b);
  char err[1024] = "";
  int r = try_open(b, size, 1, err, sizeof err);
  CHECK(r != 0 && strstr(err, want), "section patch: got '%s', want '%s'", r ? err : "(opened)", want);
  free(b);
}

int main(void) {
  build_columns();
  char err[1024];
  uint8_t *file;
  size_t size;
  if (tbl_write_memory(N, cols, NC, &file, &size, err, sizeof err)) {
    printf("FAIL: write: %s\n", err);
    return 1;
  }
  cur_size = size;
  /* ---- round trip ---- */
  tbl_table *t = NULL;
  CHECK(tbl_open_memory(file, size, 1, &t, err, sizeof err) == 0, "open: %s", err);
  if (!t) return 1;
  CHECK(t->rows == N && t->ncols == NC, "rows/cols");
  for (int c = 0; c < NC; c++) {
    const tbl_column *rc = &t->cols[c];
    const tbl_write_column *wc = &cols[c];
    CHECK(!strcmp(rc->name, wc->name), "name %d", c);
    CHECK(rc->encoding == wc->encoding && rc->logical == wc->logical && rc->unit == wc->unit, "encoding %d", c);
    CHECK(rc->desc.type == wc->desc.type && rc->desc.width == wc->desc.width && rc->desc.scale == wc->desc.scale &&
              rc->desc.reference.u == wc->desc.reference.u && rc->desc.n == N,
          "desc %d", c);
    CHECK(rc->desc.data_size == wc->desc.data_size &&
              (!rc->desc.data_size || !memcmp(rc->desc.data, wc->desc.data, rc->desc.data_size)),
          "data %d", c);
    CHECK((rc->desc.validity == NULL) == (wc->desc.validity == NULL), "validity presence %d", c);
    if (rc->desc.validity) CHECK(!memcmp(rc->desc.validity, wc->desc.validity, (N + 7) / 8), "validity %d", c);
    CHECK(rc->null_count == wc->null_count, "nulls %d", c);
    CHECK(((const uint8_t *)rc->desc.data - t->base) % 64 == 0 || !rc->desc.data_size, "alignment %d", c);
    if (wc->encoding == TBL_ENC_DICT) {
      CHECK(rc->dict.count == wc->dict.count && rc->dict.bytes_size == wc->dict.bytes_size && rc->dict.sorted,
            "dict %d", c);
      CHECK(!memcmp(rc->dict.offsets32, wc->dict.offsets32, (rc->dict.count + 1) * 4), "dict offsets %d", c);
    }
  }
  /* the library decodes the mapped columns back to the input values */
  {
    int64_t out[N];
    ps_for_desc d = t->cols[0].desc;
    CHECK(ps_decode_for(&d, out, err, sizeof err) == PS_OK && !memcmp(out, ids, sizeof ids), "decode ids");
    d = t->cols[1].desc;
    d.type = PS_TYPE_INT64;
    d.scale = 0;
    CHECK(ps_decode_for(&d, out, err, sizeof err) == PS_OK, "decode prices");
    for (int i = 0; i < N; i++)
      if (i % 5) CHECK(out[i] == prices[i], "price %d", i);
  }
  /* zone maps (1.2): the encoders' zone maps come back as they were written */
  for (int c = 0; c < NC; c++) {
    const ps_zone_map *w = cols[c].desc.zones, *r = t->cols[c].desc.zones;
    CHECK(w && r, "zone maps of column %d: written %p, read %p", c, (const void *)w, (const void *)r);
    if (w && r)
      CHECK(r->block_rows == w->block_rows && r->blocks == w->blocks && !memcmp(r->min, w->min, w->blocks * 8) &&
                !memcmp(r->max, w->max, w->blocks * 8) && !memcmp(r->flags, w->flags, w->blocks),
            "zone maps of column %d differ", c);
  }
  tbl_close(t);

  /* ---- a 1.1 file (160-byte entries, no zone maps) still reads: the
   * directory rewritten in place, the gap it leaves zero padding ---- */
  {
    uint8_t *b = malloc(size);
    memcpy(b, file, size);
    for (int c = 0; c < NC; c++) {
      uint8_t *e = b + 64 + (size_t)c * TBL_ENTRY_SIZE;
      uint64_t zoff = get64(e + 160), zsize = get64(e + 168);
      if (zsize) memset(b + zoff, 0, (size_t)zsize); /* the zone section becomes padding */
    }
    for (int c = 0; c < NC; c++)
      memmove(b + 64 + (size_t)c * TBL_ENTRY_SIZE_V10, b + 64 + (size_t)c * TBL_ENTRY_SIZE, TBL_ENTRY_SIZE_V10);
    memset(b + 64 + (size_t)NC * TBL_ENTRY_SIZE_V10, 0, (size_t)NC * (TBL_ENTRY_SIZE - TBL_ENTRY_SIZE_V10));
    put(b + 10, 2, 1);
    put(b + 28, 4, TBL_ENTRY_SIZE_V10);
    fix_checksums(b);
    tbl_table *old = NULL;
    CHECK(tbl_open_memory(b, size, 1, &old, err, sizeof err) == 0, "a 1.1 file: %s", err);
    if (old) {
      CHECK(old->version_minor == 1 && old->cols[0].desc.zones == NULL, "a 1.1 file has no zone maps");
      int64_t out[N];
      ps_for_desc d = old->cols[0].desc;
      CHECK(ps_decode_for(&d, out, err, sizeof err) == PS_OK && !memcmp(out, ids, sizeof ids), "1.1: decode ids");
      tbl_close(old);
    }
    free(b);
  }

  /* ---- every byte corrupted: always a clean error (checksums and zero padding cover every byte) ---- */
  {
    uint8_t *b = malloc(size);
    static const uint8_t flips[] = {0x01, 0x80, 0xFF};
    for (size_t i = 0; i < size; i++)
      for (size_t f = 0; f < sizeof flips; f++) {
        memcpy(b, file, size);
        b[i] ^= flips[f];
        err[0] = 0;
        int r = try_open(b, size, 1, err, sizeof err);
        CHECK(r != 0 && err[0], "byte %zu ^ 0x%02x was not detected", i, flips[f]);
        /* without checksums the reader must still not crash */
        try_open(b, size, 0, err, sizeof err);
      }
    free(b);
  }
  /* ---- every truncation, and trailing bytes ---- */
  for (size_t len = 0; len < size; len++) {
    uint8_t *b = malloc(len ? len : 1);
    memcpy(b, file, len);
    err[0] = 0;
    CHECK(try_open(b, len, 1, err, sizeof err) != 0 && strstr(err, "truncated"), "truncated to %zu: '%s'", len, err);
    free(b);
  }
  {
    uint8_t *b = calloc(size + 64, 1);
    memcpy(b, file, size);
    CHECK(try_open(b, size + 1, 1, err, sizeof err) != 0 && strstr(err, "header says"), "1 extra byte: %s", err);
    CHECK(try_open(b, size + 64, 1, err, sizeof err) != 0, "64 extra bytes");
    free(b);
  }
  /* an unaligned buffer is copied, not read misaligned */
  {
    uint8_t *b = malloc(size + 1);
    memcpy(b + 1, file, size);
    CHECK(try_open(b + 1, size, 1, err, sizeof err) == 0, "unaligned buffer: %s", err);
    free(b);
  }

  /* ---- hostile fields with valid checksums ---- */
  hostile(file, size, -1, 8, 2, 2, "version 2.3 is not supported");
  hostile(file, size, 0, 176, 4, 64, "2 blocks of 64 rows need 34");
  hostile(file, size, 0, 176, 4, 48, "zone map block of 48 rows");
  hostile(file, size, 0, 176, 4, 0, "zone map block of 0 rows");
  hostile(file, size, 0, 184, 8, 1, "time zone fields set without a time zone");
  hostile(file, size, 0, 216, 4, 3, "a time zone on a column that is not a timestamp");
  hostile(file, size, 0, 216, 4, 65, "a time zone on a column that is not a timestamp");
  hostile(file, size, -1, 12, 4, 128, "header size");
  hostile(file, size, -1, 24, 4, 0x7FFFFFFF, "truncated at byte");
  hostile(file, size, -1, 24, 4, 6, "column 5: name length");
  hostile(file, size, -1, 28, 4, 8, "directory entry size");
  hostile(file, size, -1, 28, 4, 161, "directory entry size");
  hostile(file, size, -1, 32, 8, 0xFFFFFFFFFFFFFFF8ull, "truncated at byte");
  hostile(file, size, -1, 16, 8, N + 1, "rows, the table has");
  hostile(file, size, -1, 16, 8, 1ull << 62, "implausible");
  hostile(file, size, -1, 48, 4, 1, "unknown header flags");
  hostile(file, size, 0, 0, 8, 0xFFFFFFFFFFFFFFFFull, "name");
  hostile(file, size, 0, 8, 4, 0, "name length 0");
  hostile(file, size, 0, 8, 4, 5000, "name length 5000");
  hostile(file, size, 0, 16, 1, 7, "unknown encoding 7");
  hostile(file, size, 0, 17, 1, 9, "unknown logical type");
  hostile(file, size, 0, 17, 1, TBL_LOGICAL_DECIMAL, "decimal column must have a float type");
  hostile(file, size, 1, 17, 1, TBL_LOGICAL_DATE, "date column must have a signed integer type");
  hostile(file, size, 0, 20, 4, 0, "not a numeric type");
  hostile(file, size, 0, 20, 4, 12, "not a numeric type");
  hostile(file, size, 0, 24, 4, 65, "width 65");
  hostile(file, size, 0, 24, 4, 0xFFFFFFFFu, "width");
  hostile(file, size, 1, 28, 4, 19, "scale 19");
  hostile(file, size, 0, 28, 4, 2, "integer column has scale");
  hostile(file, size, 0, 32, 4, 0x80, "unknown flags");
  hostile(file, size, 0, 32, 4, TBL_FLAG_SORTED, "sorted flag set on a FOR column");
  hostile(file, size, 0, 36, 4, 1, "reserved");
  hostile(file, size, 0, 18, 1, 3, "reserved"); /* a unit on a column that is not a timestamp */
  hostile(file, size, 0, 19, 1, 1, "reserved");
  hostile(file, size, 0, 17, 2, TBL_LOGICAL_TIMESTAMP | 5u << 8, "time unit 10^-5 seconds");
  hostile(file, size, 1, 17, 1, TBL_LOGICAL_TIMESTAMP, "timestamp column must have a signed integer type");
  hostile(file, size, 1, 17, 2, TBL_LOGICAL_TIME | 3u << 8, "time column must have a signed integer type");
  hostile(file, size, 0, 48, 8, N - 1, "rows, the table has");
  hostile(file, size, 0, 56, 8, 3, "null count 3 without a validity bitmap");
  hostile(file, size, 1, 56, 8, 0, "null count 0 does not match");
  hostile(file, size, 0, 72, 8, 0xFFFFFFFFFFFFFFC0ull, "lies outside");
  hostile(file, size, 0, 72, 8, 8, "overlaps the header");
  hostile(file, size, 0, 72, 8, get64(file + 64 + 72) + 4, "not 8-byte aligned");
  hostile(file, size, 0, 80, 8, get64(file + 64 + 80) + 1, "data section is");
  hostile(file, size, 0, 80, 8, 0xFFFFFFFFFFFFFFFFull, "data section is");
  hostile(file, size, 1, 32, 4, 0, "validity fields set without the validity flag");
  hostile(file, size, 0, 32, 4, TBL_FLAG_VALIDITY, "validity section is 0 bytes");
  hostile(file, size, 1, 104, 8, 1000, "validity section is 1000 bytes");
  hostile(file, size, 0, 112, 8, 1, "dictionary fields set on a FOR column");
  hostile(file, size, 2, 112, 8, 1ull << 40, "dictionary of 1099511627776 strings");
  hostile(file, size, 2, 112, 8, 0xFFFFFFFFFFFFFFFFull,
          "dictionary of 18446744073709551615 strings; at most 2147483646 are supported");
  hostile(file, size, 2, 128, 8, 4, "offset bytes");
  hostile(file, size, 2, 144, 8, 1ull << 33, "exceed 32-bit offsets");
  hostile(file, size, 2, 20, 4, PS_TYPE_INT32, "codes type 3 is not unsigned");
  hostile(file, size, 2, 28, 4, 1, "dictionary column has a scale");
  /* two columns' names in the same bytes: overlap (names are "c0".."c4", same length) */
  {
    uint8_t *b = malloc(size);
    memcpy(b, file, size);
    memcpy(b + 64 + TBL_ENTRY_SIZE, b + 64, 8);           /* name offset of column 0 */
    memcpy(b + 64 + TBL_ENTRY_SIZE + 12, b + 64 + 12, 4); /* and its checksum */
    fix_checksums(b);
    CHECK(try_open(b, size, 1, err, sizeof err) != 0 && strstr(err, "overlaps"), "overlap: %s", err);
    free(b);
  }
  /* section contents with recomputed section checksums */
  {
    uint8_t z = 'z';
    hostile_section(file, size, 2, 136, 144, 156, 0, &z, 1, "marked sorted but entry");
    uint32_t big = 1000000;
    hostile_section(file, size, 2, 120, 128, 152, 4, &big, 4, "out of order or past");
    uint32_t nz = 1;
    hostile_section(file, size, 2, 120, 128, 152, 0, &nz, 4, "offset 0 is 1");
    uint8_t zero = 0;
    hostile_section(file, size, 1, 96, 104, 92, 0, &zero, 1, "null count");
  }
  /* A dictionary code past the dictionary opens (codes are not scanned at open)
   * and is reported by the library when read: corrupt data, never a crash. */
  {
    uint8_t *b = malloc(size);
    memcpy(b, file, size);
    uint8_t *e = b + 64 + 2 * TBL_ENTRY_SIZE;
    uint64_t so = get64(e + 72), ss = get64(e + 80);
    memset(b + so, 0xFF, (size_t)ss);
    put(e + 88, 4, crc32c(0, b + so, (size_t)ss));
    fix_checksums(b);
    tbl_table *bt = NULL;
    CHECK(tbl_open_memory(b, size, 1, &bt, err, sizeof err) == 0, "bad codes open: %s", err);
    if (bt) {
      ps_context *ctx = NULL;
      ps_context_options o;
      ps_context_options_init(&o);
      o.backend = "reference";
      if (ps_context_create(&o, NULL, 0, &ctx) == PS_OK) {
        ps_column *col = NULL;
        ps_status st = tbl_column_create(ctx, bt, 2, &col, err, sizeof err);
        if (st == PS_OK) {
          ps_expr *ex = NULL;
          st = ps_expr_compare(ctx, col, PS_EQ, ps_lit_str("apple", 5), &ex);
          uint64_t cnt;
          if (st == PS_OK) st = ps_filter_count(ctx, ex, &cnt);
          CHECK(st == PS_ERR_CORRUPT_DATA, "bad codes evaluate: %s", ps_status_name(st));
          ps_expr_destroy(ex);
        }
        ps_column_destroy(col);
        ps_context_destroy(ctx);
      }
      tbl_close(bt);
    }
    free(b);
  }

  /* ---- files: mmap path, missing file, empty file, not a table ---- */
  {
    char dir[] = "/tmp/pstool-fmt-XXXXXX";
    if (mkdtemp(dir)) {
      char path[256];
      snprintf(path, sizeof path, "%s/t.pst", dir);
      uint64_t fsz;
      CHECK(tbl_write_file(path, NULL, N, cols, NC, &fsz, err, sizeof err) == 0 && fsz == size, "write file: %s", err);
      tbl_table *ft = NULL;
      CHECK(tbl_open_file(path, 1, &ft, err, sizeof err) == 0 && ft->map != NULL, "open file: %s", err);
      tbl_close(ft);
      FILE *f = fopen(path, "wb");
      if (f) fclose(f);
      CHECK(tbl_open_file(path, 1, &ft, err, sizeof err) != 0 && strstr(err, "truncated at byte 0"), "empty: %s", err);
      f = fopen(path, "wb");
      if (f) {
        fputs("id,price\n1,2\n..............................................................", f);
        fclose(f);
      }
      CHECK(tbl_open_file(path, 1, &ft, err, sizeof err) != 0 && strstr(err, "not a packscan table"), "csv: %s", err);
      unlink(path);
      CHECK(tbl_open_file(path, 1, &ft, err, sizeof err) != 0 && strstr(err, "No such file"), "missing: %s", err);
      CHECK(tbl_open_file(dir, 1, &ft, err, sizeof err) != 0 && strstr(err, "not a regular file"), "dir: %s", err);
      /* writing with a duplicate name is refused */
      tbl_write_column dup[2] = {cols[0], cols[0]};
      CHECK(tbl_write_file(path, NULL, N, dup, 2, &fsz, err, sizeof err) != 0 && strstr(err, "duplicate"), "dup: %s",
            err);
      CHECK(access(path, F_OK) != 0, "a failed write left a file behind");
      rmdir(dir);
    }
  }
  /* a DELTA column: written as encoding 3 in a version 1.2 file, read back
   * byte for byte (files of FOR and DICT columns stay 1.1, which every 1.x
   * reader reads); a header changed under valid checksums is refused */
  {
    enum { ND = 3000 };
    int64_t *v = malloc(ND * 8);
    for (int i = 0; i < ND; i++) v[i] = 19920101 + i / 7;
    ps_plain p = {PS_TYPE_INT64, v, ND, NULL};
    ps_encoded e;
    CHECK(ps_encode(&p, PS_ENCODING_DELTA, 0, 0, 0, NULL, err, sizeof err, &e) == PS_OK, "delta: %s", err);
    tbl_write_column wc;
    memset(&wc, 0, sizeof wc);
    wc.name = "day";
    wc.encoding = TBL_ENC_DELTA;
    wc.desc = e.desc;
    wc.raw_bytes = ND * 8;
    uint8_t *b = NULL;
    size_t bs = 0;
    CHECK(tbl_write_memory(ND, &wc, 1, &b, &bs, err, sizeof err) == 0, "write delta: %s", err);
    CHECK(file[10] == TBL_VERSION_MINOR && b && b[10] == TBL_VERSION_MINOR, "versions %u and %u", file[10],
          b ? b[10] : 0);
    tbl_table *dt = NULL;
    CHECK(b && tbl_open_memory(b, bs, 1, &dt, err, sizeof err) == 0, "open delta: %s", err);
    if (dt) {
      const tbl_column *c = &dt->cols[0];
      CHECK(c->encoding == TBL_ENC_DELTA && c->desc.encoding == PS_ENCODING_DELTA &&
                c->desc.data_size == e.desc.data_size && !memcmp(c->desc.data, e.desc.data, e.desc.data_size),
            "delta round trip");
      int64_t *back = malloc(ND * 8);
      CHECK(ps_decode_for(&c->desc, back, err, sizeof err) == PS_OK && !memcmp(back, v, ND * 8), "delta decode: %s",
            err);
      free(back);
      /* block 1's payload offset, with the section's checksum and the directory's redone */
      uint64_t data_off = c->data_offset;
      tbl_close(dt);
      b[data_off + 32 + 16] ^= 4;
      put(b + TBL_HEADER_SIZE + 88, 4, crc32c(0, b + data_off, (size_t)e.desc.data_size));
      const size_t keep = cur_size;
      cur_size = bs;
      fix_checksums(b);
      cur_size = keep;
      dt = NULL;
      CHECK(tbl_open_memory(b, bs, 1, &dt, err, sizeof err) != 0 && strstr(err, "payload offset"),
            "bad DELTA header: %s", err);
      tbl_close(dt);
    }
    free(b);
    ps_encoded_destroy(&e);
    free(v);
  }

  /* a lossless float column (1.3): its mapping (entry bytes 192..223, flag
   * 4) and exception section come back as written and decode bit for bit;
   * the flag in a 1.2 file, or the mapping bytes without the flag, and a
   * changed exception under valid checksums are refused */
  {
    enum { NF = 500 };
    double *v = malloc(NF * 8);
    for (int i = 0; i < NF; i++) v[i] = (i % 37) * 0.25;
    v[3] = -0.0, v[10] = 0.1 + 0.2, v[20] = 1e300, v[30] = -INFINITY;
    ps_plain p = {PS_TYPE_FLOAT64, v, NF, NULL};
    ps_encoded e;
    CHECK(ps_encode_for(&p, 0, -1, 0, NULL, err, sizeof err, &e) == PS_OK && e.desc.float_map == PS_FLOAT_MAP_ALP &&
              e.desc.exceptions_count == 4,
          "float encode: %s (map %u, %llu exceptions)", err, e.desc.float_map,
          (unsigned long long)e.desc.exceptions_count);
    tbl_write_column wc;
    memset(&wc, 0, sizeof wc);
    wc.name = "f";
    wc.encoding = TBL_ENC_FOR;
    wc.desc = e.desc;
    wc.raw_bytes = NF * 8;
    uint8_t *b = NULL;
    size_t bs = 0;
    CHECK(tbl_write_memory(NF, &wc, 1, &b, &bs, err, sizeof err) == 0, "write float: %s", err);
    tbl_table *ft = NULL;
    CHECK(b && tbl_open_memory(b, bs, 1, &ft, err, sizeof err) == 0, "open float: %s", err);
    if (ft) {
      const ps_for_desc *d = &ft->cols[0].desc;
      CHECK(d->float_map == e.desc.float_map && d->float_e == e.desc.float_e && d->float_f == e.desc.float_f &&
                d->float_rank_bits == e.desc.float_rank_bits && d->exceptions_count == e.desc.exceptions_count &&
                !memcmp(d->exceptions, e.desc.exceptions, 16 * d->exceptions_count),
            "float mapping round trip");
      double *back = malloc(NF * 8);
      CHECK(ps_decode_for(d, back, err, sizeof err) == PS_OK && !memcmp(back, v, NF * 8), "float decode: %s", err);
      free(back);
      const uint64_t xo = ft->cols[0].exceptions_offset;
      tbl_close(ft);
      const size_t keep = cur_size;
      cur_size = bs;
      uint8_t *h = malloc(bs);
      memcpy(h, b, bs);
      h[10] = 2; /* a 1.2 file cannot carry the flag */
      fix_checksums(h);
      ft = NULL;
      CHECK(tbl_open_memory(h, bs, 1, &ft, err, sizeof err) != 0 && strstr(err, "float mapping flag"), "1.2: %s", err);
      memcpy(h, b, bs);
      put(h + TBL_HEADER_SIZE + 32, 4, 0); /* the flag cleared, the mapping bytes left */
      fix_checksums(h);
      CHECK(tbl_open_memory(h, bs, 1, &ft, err, sizeof err) != 0 && strstr(err, "without the float mapping flag"),
            "no flag: %s", err);
      memcpy(h, b, bs);
      h[xo + 8] ^= 1; /* exception 0's value, with the section's checksum redone */
      put(h + TBL_HEADER_SIZE + 196, 4, crc32c(0, h + xo, 16 * (size_t)e.desc.exceptions_count));
      fix_checksums(h);
      CHECK(tbl_open_memory(h, bs, 1, &ft, err, sizeof err) == 0, "open patched exceptions: %s", err);
      if (ft) {
        ps_column *col = NULL;
        ps_context *ctx = NULL;
        ps_context_options o;
        ps_context_options_init(&o);
        o.backend = "reference";
        CHECK(ps_context_create(&o, NULL, 0, &ctx) == PS_OK, "context");
        CHECK(tbl_column_create(ctx, ft, 0, &col, err, sizeof err) == PS_ERR_INVALID_ARGUMENT &&
                  strstr(err, "exceptions[0]"),
              "patched exception: %s", err);
        ps_column_destroy(col);
        ps_context_destroy(ctx);
        tbl_close(ft);
      }
      cur_size = keep;
      free(h);
    }
    free(b);
    ps_encoded_destroy(&e);
    free(v);
  }

  /* a timestamp column's time zone (1.3: entry bytes 184..191 and
   * 216..223) comes back as written; one on another column, an unprintable
   * one, one in a 1.2 file, or a changed byte under a valid directory are
   * refused */
  {
    enum { NT = 100 };
    int64_t *v = malloc(NT * 8);
    for (int i = 0; i < NT; i++) v[i] = 1700000000 + 3600 * i;
    ps_plain p = {PS_TYPE_INT64, v, NT, NULL};
    ps_encoded e;
    CHECK(ps_encode_for(&p, 0, 0, 0, NULL, err, sizeof err, &e) == PS_OK, "timestamp encode: %s", err);
    tbl_write_column wc[2];
    memset(wc, 0, sizeof wc);
    wc[0].name = "t";
    wc[0].encoding = TBL_ENC_FOR;
    wc[0].logical = TBL_LOGICAL_TIMESTAMP;
    wc[0].time_zone = "Europe/Oslo";
    wc[0].desc = e.desc;
    wc[1] = wc[0];
    wc[1].name = "u";
    wc[1].time_zone = NULL;
    uint8_t *b = NULL;
    size_t bs = 0;
    CHECK(tbl_write_memory(NT, wc, 2, &b, &bs, err, sizeof err) == 0, "write zoned: %s", err);
    tbl_table *zt = NULL;
    CHECK(b && tbl_open_memory(b, bs, 1, &zt, err, sizeof err) == 0, "open zoned: %s", err);
    if (zt) {
      CHECK(!strcmp(zt->cols[0].time_zone, "Europe/Oslo") && zt->cols[1].time_zone[0] == 0, "zones back: '%s' '%s'",
            zt->cols[0].time_zone, zt->cols[1].time_zone);
      tbl_close(zt);
      const size_t keep = cur_size;
      cur_size = bs;
      uint8_t *h = malloc(bs);
      const uint64_t zo = get64(b + TBL_HEADER_SIZE + 184);
      memcpy(h, b, bs);
      h[zo] = 0x7f; /* a byte of the zone: its checksum catches it */
      zt = NULL;
      CHECK(tbl_open_memory(h, bs, 1, &zt, err, sizeof err) != 0 && strstr(err, "time zone"), "changed zone: %s", err);
      put(h + TBL_HEADER_SIZE + 220, 4, crc32c(0, h + zo, 11)); /* and with its checksum redone */
      fix_checksums(h);
      CHECK(tbl_open_memory(h, bs, 1, &zt, err, sizeof err) != 0 && strstr(err, "printable"), "unprintable: %s", err);
      memcpy(h, b, bs);
      h[10] = 2; /* in a 1.2 file these bytes are reserved */
      fix_checksums(h);
      CHECK(tbl_open_memory(h, bs, 1, &zt, err, sizeof err) != 0 && strstr(err, "reserved entry bytes 184..191"),
            "1.2: %s", err);
      memcpy(h, b, bs);
      h[TBL_HEADER_SIZE + 17] = TBL_LOGICAL_NONE; /* a zone on an integer column */
      fix_checksums(h);
      CHECK(tbl_open_memory(h, bs, 1, &zt, err, sizeof err) != 0 && strstr(err, "not a timestamp"), "on int: %s", err);
      cur_size = keep;
      free(h);
    }
    free(b);
    wc[1].logical = TBL_LOGICAL_NONE;
    wc[1].time_zone = "UTC";
    CHECK(tbl_write_memory(NT, wc, 2, &b, &bs, err, sizeof err) != 0 && strstr(err, "time zone"), "writer: %s", err);
    wc[1].logical = TBL_LOGICAL_TIMESTAMP;
    wc[1].time_zone = "Europe/\tOslo";
    CHECK(tbl_write_memory(NT, wc, 2, &b, &bs, err, sizeof err) != 0 && strstr(err, "printable"), "writer: %s", err);
    ps_encoded_destroy(&e);
    free(v);
  }

  /* a table with zero rows and one with zero columns */
  {
    uint8_t *b;
    size_t bs;
    CHECK(tbl_write_memory(0, NULL, 0, &b, &bs, err, sizeof err) == 0, "empty table: %s", err);
    tbl_table *et = NULL;
    CHECK(tbl_open_memory(b, bs, 1, &et, err, sizeof err) == 0 && et->ncols == 0, "open empty: %s", err);
    tbl_close(et);
    free(b);
  }

  /* a large table of constant columns is refused by the writer (and the reader) */
  {
    enum { BIG = 100000 };
    int64_t *v = calloc(BIG, 8);
    ps_plain p = {PS_TYPE_INT64, v, BIG, NULL};
    ps_encoded e;
    CHECK(ps_encode_for(&p, 0, 0, 0, NULL, err, sizeof err, &e) == PS_OK && e.desc.width == 0, "constant");
    tbl_write_column wc;
    memset(&wc, 0, sizeof wc);
    wc.name = "k";
    wc.encoding = TBL_ENC_FOR;
    wc.desc = e.desc;
    uint8_t *b = NULL;
    size_t bs;
    CHECK(tbl_write_memory(BIG, &wc, 1, &b, &bs, err, sizeof err) != 0 && strstr(err, "every column is constant"),
          "constant table: %s", err);
    free(b);
    ps_encoded_destroy(&e);
    free(v);
  }
  free(file);
  ps_encoded_destroy(&enc_id);
  ps_encoded_destroy(&enc_price);
  ps_encoded_destroy(&enc_const);
  ps_encoded_dict_destroy(&enc_name);
  ps_encoded_dict_destroy(&enc_empty);
  if (failures) {
    printf("%d format test(s) failed\n", failures);
    return 1;
  }
  printf("format: all tests passed (%zu-byte table, every byte flipped, every length truncated)\n", size);
  return 0;
}
