/* Table writer: computes the layout first (every size is known up front),
 * then emits header, directory, names and sections in file order, so a table
 * can be streamed to a pipe without seeking. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "crc32c.h"
#include "table.h"
#include "util.h"

static void put_u16(uint8_t *p, uint16_t v) {
  p[0] = (uint8_t)v;
  p[1] = (uint8_t)(v >> 8);
}
static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}
static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

typedef struct sink {
  FILE *f;
  tbuf *mem;
  uint64_t pos;
} sink;

static int sink_write(sink *s, const void *p, uint64_t n, char *err, size_t errsz) {
  if (n == 0) return 0;
  if (s->mem) {
    if (n > SIZE_MAX || tbuf_append(s->mem, p, (size_t)n)) return set_err(err, errsz, "out of memory");
  } else if (fwrite(p, 1, (size_t)n, s->f) != n) {
    return set_err(err, errsz, "write failed at byte %llu: %s", (unsigned long long)s->pos, strerror(errno));
  }
  s->pos += n;
  return 0;
}

static int sink_pad_to(sink *s, uint64_t off, char *err, size_t errsz) {
  static const uint8_t zeros[TBL_ALIGN];
  while (s->pos < off) {
    uint64_t k = off - s->pos;
    if (k > sizeof zeros) k = sizeof zeros;
    if (sink_write(s, zeros, k, err, errsz)) return -1;
  }
  return 0;
}

static uint64_t align_up(uint64_t v, uint64_t a) { return (v + a - 1) / a * a; }

typedef struct sec {
  const void *p;
  uint64_t size;
  uint64_t offset;
  uint32_t crc;
} sec;

enum { S_DATA, S_VALIDITY, S_DOFF, S_DBYTES, S_ZONES, S_EXC, S_TZ, S_COUNT };

/* A time zone the file can hold: 1..TBL_MAX_TIME_ZONE printable ASCII bytes. */
int tbl_time_zone_ok(const char *tz, size_t len) {
  if (len == 0 || len > TBL_MAX_TIME_ZONE) return 0;
  for (size_t i = 0; i < len; i++)
    if (tz[i] < 0x21 || tz[i] > 0x7e) return 0;
  return 1;
}

static int check_column(uint64_t rows, const tbl_write_column *c, uint32_t i, char *err, size_t errsz) {
  size_t nl = c->name ? strlen(c->name) : 0;
  if (nl == 0 || nl > TBL_MAX_NAME) return set_err(err, errsz, "column %u: name must be 1..%d bytes", i, TBL_MAX_NAME);
  const ps_for_desc *d = &c->desc;
  if (d->n != rows)
    return set_err(err, errsz, "column %u '%s': %llu rows, table has %llu", i, c->name, (unsigned long long)d->n,
                   (unsigned long long)rows);
  uint64_t want;
  if (c->encoding == TBL_ENC_DELTA) {
    char lerr[256];
    if (d->encoding != PS_ENCODING_DELTA || ps_for_desc_check(d, lerr, sizeof lerr) != PS_OK)
      return set_err(err, errsz, "column %u '%s': not a valid DELTA column (%s)", i, c->name,
                     d->encoding != PS_ENCODING_DELTA ? "its description is not DELTA" : lerr);
  } else if (d->width > 64 || packed_bytes(d->n, d->width, &want) || d->data_size != want || (want && !d->data) ||
             d->encoding != PS_ENCODING_FOR) {
    return set_err(err, errsz, "column %u '%s': data size does not match n and width", i, c->name);
  }
  char ferr[256];
  if (d->float_map != PS_FLOAT_MAP_DECIMAL && ps_for_desc_check(d, ferr, sizeof ferr) != PS_OK)
    return set_err(err, errsz, "column %u '%s': not a valid float mapping (%s)", i, c->name, ferr);
  if (d->validity && d->validity_size != (rows + 7) / 8)
    return set_err(err, errsz, "column %u '%s': validity size is not ceil(n/8)", i, c->name);
  if (c->encoding == TBL_ENC_DICT) {
    if (!c->dict.offsets32 || c->dict.count >= INT32_MAX)
      return set_err(err, errsz, "column %u '%s': dictionary needs 32-bit offsets", i, c->name);
    if ((uint64_t)c->dict.offsets32[c->dict.count] != c->dict.bytes_size)
      return set_err(err, errsz, "column %u '%s': dictionary offsets do not end at its size", i, c->name);
  } else if (c->encoding != TBL_ENC_FOR && c->encoding != TBL_ENC_DELTA) {
    return set_err(err, errsz, "column %u '%s': unknown encoding", i, c->name);
  }
  if (c->time_zone && c->time_zone[0] &&
      (c->logical != TBL_LOGICAL_TIMESTAMP || !tbl_time_zone_ok(c->time_zone, strlen(c->time_zone))))
    return set_err(err, errsz, "column %u '%s': time zone '%.80s' (a timestamp column's, 1..%d printable ASCII bytes)",
                   i, c->name, c->time_zone, TBL_MAX_TIME_ZONE);
  const ps_zone_map *z = d->zones;
  if (z && (z->block_rows == 0 || z->block_rows % 32 || z->blocks != (rows + z->block_rows - 1) / z->block_rows ||
            (z->blocks && (!z->min || !z->max || !z->flags))))
    return set_err(err, errsz, "column %u '%s': zone maps do not fit %llu rows", i, c->name, (unsigned long long)rows);
  return 0;
}

/* A column's zone section: min codes, max codes (u64 each), flags (u8). */
static uint8_t *zone_section(const ps_zone_map *z, uint64_t *size) {
  *size = z->blocks * 17;
  uint8_t *p = malloc(*size ? (size_t)*size : 1);
  if (!p) return NULL;
  for (uint64_t b = 0; b < z->blocks; b++) {
    put_u64(p + 8 * b, z->min[b]);
    put_u64(p + 8 * (z->blocks + b), z->max[b]);
    p[16 * z->blocks + b] = z->flags[b];
  }
  return p;
}

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

/* Names must be unique, as the reader requires. Sorted rather than compared
 * pairwise: a header may have up to a million columns. */
static int check_unique_names(const tbl_write_column *cols, uint32_t ncols, char *err, size_t errsz) {
  if (ncols < 2) return 0;
  const char **names = malloc((size_t)ncols * sizeof *names);
  if (!names) return set_err(err, errsz, "out of memory");
  for (uint32_t i = 0; i < ncols; i++) names[i] = cols[i].name;
  qsort(names, ncols, sizeof *names, cmp_name);
  int rc = 0;
  for (uint32_t i = 1; i < ncols && rc == 0; i++)
    if (strcmp(names[i - 1], names[i]) == 0) rc = set_err(err, errsz, "duplicate column name '%s'", names[i]);
  free(names);
  return rc;
}

static int write_table(sink *s, uint64_t rows, const tbl_write_column *cols, uint32_t ncols, char *err, size_t errsz) {
  for (uint32_t i = 0; i < ncols; i++)
    if (check_column(rows, &cols[i], i, err, errsz)) return -1;
  if (check_unique_names(cols, ncols, err, errsz)) return -1;
  uint64_t dir_size = (uint64_t)ncols * TBL_ENTRY_SIZE;
  uint64_t off = TBL_HEADER_SIZE + dir_size;
  uint64_t *name_off = calloc(ncols ? ncols : 1, sizeof *name_off);
  sec(*secs)[S_COUNT] = calloc(ncols ? ncols : 1, sizeof *secs);
  uint8_t *dir = calloc(dir_size ? dir_size : 1, 1);
  uint8_t **zsec = calloc(ncols ? ncols : 1, sizeof *zsec);
  int rc = -1;
  if (!name_off || !secs || !dir || !zsec) {
    set_err(err, errsz, "out of memory");
    goto done;
  }
  for (uint32_t i = 0; i < ncols; i++) {
    name_off[i] = off;
    off += strlen(cols[i].name);
  }
  for (uint32_t i = 0; i < ncols; i++) {
    const tbl_write_column *c = &cols[i];
    sec *cs = secs[i];
    cs[S_DATA].p = c->desc.data;
    cs[S_DATA].size = c->desc.data_size;
    if (c->desc.validity) {
      cs[S_VALIDITY].p = c->desc.validity;
      cs[S_VALIDITY].size = c->desc.validity_size;
    }
    if (c->encoding == TBL_ENC_DICT) {
      cs[S_DOFF].p = c->dict.offsets32;
      cs[S_DOFF].size = (c->dict.count + 1) * 4;
      cs[S_DBYTES].p = c->dict.bytes;
      cs[S_DBYTES].size = c->dict.bytes_size;
    }
    if (c->desc.zones && c->desc.zones->blocks) {
      zsec[i] = zone_section(c->desc.zones, &cs[S_ZONES].size);
      if (!zsec[i]) {
        set_err(err, errsz, "out of memory");
        goto done;
      }
      cs[S_ZONES].p = zsec[i];
    }
    if (c->desc.float_map != PS_FLOAT_MAP_DECIMAL && c->desc.exceptions_count) {
      cs[S_EXC].p = c->desc.exceptions; /* (code, bits) as u64 pairs; hosts are little-endian */
      cs[S_EXC].size = c->desc.exceptions_count * sizeof(ps_float_exception);
    }
    if (c->time_zone && c->time_zone[0]) {
      cs[S_TZ].p = c->time_zone;
      cs[S_TZ].size = strlen(c->time_zone);
    }
    for (int k = 0; k < S_COUNT; k++) {
      if (cs[k].size == 0) continue; /* absent or empty: offset 0 */
      off = align_up(off, TBL_ALIGN);
      cs[k].offset = off;
      if (add_u64(off, cs[k].size, &off)) {
        set_err(err, errsz, "table too large");
        goto done;
      }
    }
    for (int k = 0; k < S_COUNT; k++) cs[k].crc = crc32c(0, cs[k].p, (size_t)cs[k].size);
  }
  uint64_t file_size = off;
  if (rows > TBL_SMALL_ROWS && rows / 8 > file_size) {
    set_err(err, errsz,
            "%llu rows but every column is constant: such a table cannot be written (more rows than "
            "bits in the file; a reader rejects it as implausible)",
            (unsigned long long)rows);
    goto done;
  }

  for (uint32_t i = 0; i < ncols; i++) {
    const tbl_write_column *c = &cols[i];
    const sec *cs = secs[i];
    uint8_t *e = dir + (size_t)i * TBL_ENTRY_SIZE;
    size_t nl = strlen(c->name);
    uint32_t flags = (c->desc.validity ? TBL_FLAG_VALIDITY : 0) |
                     (c->encoding == TBL_ENC_DICT && c->dict.sorted ? TBL_FLAG_SORTED : 0) |
                     (c->desc.float_map != PS_FLOAT_MAP_DECIMAL ? TBL_FLAG_FLOAT_MAP : 0);
    put_u64(e + 0, name_off[i]);
    put_u32(e + 8, (uint32_t)nl);
    put_u32(e + 12, crc32c(0, c->name, nl));
    e[16] = (uint8_t)c->encoding;
    e[17] = (uint8_t)c->logical;
    e[18] = (uint8_t)c->unit;
    put_u32(e + 20, (uint32_t)c->desc.type);
    put_u32(e + 24, c->desc.width);
    put_u32(e + 28, c->desc.scale);
    put_u32(e + 32, flags);
    put_u64(e + 40, c->desc.reference.u);
    put_u64(e + 48, c->desc.n);
    put_u64(e + 56, c->null_count);
    put_u64(e + 64, c->raw_bytes);
    put_u64(e + 72, cs[S_DATA].offset);
    put_u64(e + 80, cs[S_DATA].size);
    put_u32(e + 88, cs[S_DATA].crc);
    put_u32(e + 92, cs[S_VALIDITY].crc);
    put_u64(e + 96, cs[S_VALIDITY].offset);
    put_u64(e + 104, cs[S_VALIDITY].size);
    if (c->encoding == TBL_ENC_DICT) {
      put_u64(e + 112, c->dict.count);
      put_u64(e + 120, cs[S_DOFF].offset);
      put_u64(e + 128, cs[S_DOFF].size);
      put_u64(e + 136, cs[S_DBYTES].offset);
      put_u64(e + 144, cs[S_DBYTES].size);
      put_u32(e + 152, cs[S_DOFF].crc);
      put_u32(e + 156, cs[S_DBYTES].crc);
    }
    if (cs[S_ZONES].size) {
      put_u64(e + 160, cs[S_ZONES].offset);
      put_u64(e + 168, cs[S_ZONES].size);
      put_u32(e + 176, c->desc.zones->block_rows);
      put_u32(e + 180, cs[S_ZONES].crc);
    }
    if (c->desc.float_map != PS_FLOAT_MAP_DECIMAL) {
      e[192] = (uint8_t)c->desc.float_map;
      e[193] = (uint8_t)c->desc.float_e;
      e[194] = (uint8_t)c->desc.float_f;
      e[195] = (uint8_t)c->desc.float_rank_bits;
      put_u32(e + 196, cs[S_EXC].crc);
      put_u64(e + 200, cs[S_EXC].offset);
      put_u64(e + 208, cs[S_EXC].size);
    }
    if (cs[S_TZ].size) {
      put_u64(e + 184, cs[S_TZ].offset);
      put_u32(e + 216, (uint32_t)cs[S_TZ].size);
      put_u32(e + 220, cs[S_TZ].crc);
    }
  }
  uint8_t hdr[TBL_HEADER_SIZE] = {0};
  memcpy(hdr, TBL_MAGIC, 8);
  put_u16(hdr + 8, TBL_VERSION_MAJOR);
  put_u16(hdr + 10, TBL_VERSION_MINOR);
  put_u32(hdr + 12, TBL_HEADER_SIZE);
  put_u64(hdr + 16, rows);
  put_u32(hdr + 24, ncols);
  put_u32(hdr + 28, TBL_ENTRY_SIZE);
  put_u64(hdr + 32, TBL_HEADER_SIZE);
  put_u64(hdr + 40, file_size);
  put_u32(hdr + 48, 0);
  put_u32(hdr + 52, crc32c(0, dir, (size_t)dir_size));
  put_u32(hdr + 60, crc32c(0, hdr, 60));

  if (sink_write(s, hdr, sizeof hdr, err, errsz) || sink_write(s, dir, dir_size, err, errsz)) goto done;
  for (uint32_t i = 0; i < ncols; i++)
    if (sink_write(s, cols[i].name, strlen(cols[i].name), err, errsz)) goto done;
  for (uint32_t i = 0; i < ncols; i++)
    for (int k = 0; k < S_COUNT; k++) {
      if (secs[i][k].size == 0) continue;
      if (sink_pad_to(s, secs[i][k].offset, err, errsz) || sink_write(s, secs[i][k].p, secs[i][k].size, err, errsz))
        goto done;
    }
  rc = 0;
done:
  for (uint32_t i = 0; zsec && i < ncols; i++) free(zsec[i]);
  free(zsec);
  free(name_off);
  free(secs);
  free(dir);
  return rc;
}

int tbl_write_stream(FILE *f, uint64_t rows, const tbl_write_column *cols, uint32_t ncols, uint64_t *file_size,
                     char *err, size_t errsz) {
  sink s = {f, NULL, 0};
  if (write_table(&s, rows, cols, ncols, err, errsz)) return -1;
  if (file_size) *file_size = s.pos;
  return 0;
}

int tbl_write_memory(uint64_t rows, const tbl_write_column *cols, uint32_t ncols, uint8_t **out, size_t *size,
                     char *err, size_t errsz) {
  tbuf b = {0};
  sink s = {NULL, &b, 0};
  if (write_table(&s, rows, cols, ncols, err, errsz)) {
    tbuf_free(&b);
    return -1;
  }
  *out = b.p;
  *size = b.len;
  return 0;
}

/* Reads back what reached the disk, every checksum. */
static int check_readback(const char *tmp_path, void *arg, char *err, size_t errsz) {
  (void)arg;
  tbl_table *t = NULL;
  char why[TOOL_ERR_SIZE];
  if (tbl_open_file(tmp_path, 1, &t, why, sizeof why) != 0)
    return set_err(err, errsz, "the table written to %s does not read back: %s", tmp_path, why);
  tbl_close(t);
  return 0;
}

int tbl_write_file(const char *path, const out_input *input, uint64_t rows, const tbl_write_column *cols,
                   uint32_t ncols, uint64_t *file_size, char *err, size_t errsz) {
  out_file o;
  if (out_file_open(&o, path, input, err, errsz)) return -1;
  char sub[TOOL_ERR_SIZE];
  uint64_t size = 0;
  if (tbl_write_stream(o.f, rows, cols, ncols, &size, sub, sizeof sub)) {
    out_file_abort(&o);
    return set_err(err, errsz, "%s: %s", path, sub);
  }
  if (out_file_commit(&o, check_readback, NULL, err, errsz)) return -1;
  if (file_size) *file_size = size;
  return 0;
}
