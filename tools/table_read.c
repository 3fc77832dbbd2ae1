/* Table reader. Every field is checked before it is used, in an order that
 * never dereferences or allocates from an unchecked value: the header first,
 * then the directory's bounds (which bound the column count by the file size),
 * then each entry, then every section's bounds, checksum and contents, and
 * finally that the sections do not overlap and the gaps between them are zero. */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "crc32c.h"
#include "table.h"
#include "util.h"

static uint16_t get_u16(const uint8_t *p) { return (uint16_t)(p[0] | p[1] << 8); }
static uint32_t get_u32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}
static uint64_t get_u64(const uint8_t *p) { return (uint64_t)get_u32(p) | (uint64_t)get_u32(p + 4) << 32; }

static int host_is_little_endian(void) {
  const uint16_t one = 1;
  uint8_t b;
  memcpy(&b, &one, 1);
  return b == 1;
}

typedef struct range {
  uint64_t off, size;
  uint32_t col; /* UINT32_MAX: header/directory */
  const char *what;
} range;

static int cmp_name(const void *a, const void *b) { return strcmp(*(char *const *)a, *(char *const *)b); }

static int cmp_range(const void *a, const void *b) {
  const range *x = a, *y = b;
  if (x->off != y->off) return x->off < y->off ? -1 : 1;
  return x->size < y->size ? -1 : x->size > y->size;
}

/* Column label for messages: "column 2 'price'" or "column 2" before the name is known. */
static void label(char *out, size_t n, uint32_t i, const char *name) {
  if (name)
    snprintf(out, n, "column %u '%s'", i, name);
  else
    snprintf(out, n, "column %u", i);
}

/* Checks that [off, off+size) lies in the file and is aligned; absent
 * sections (size 0) must have offset 0. */
static int check_range(const tbl_table *t, const char *lab, const char *what, uint64_t off, uint64_t size,
                       uint64_t align, char *err, size_t errsz) {
  if (size == 0) {
    if (off != 0)
      return set_err(err, errsz, "%s: empty %s has nonzero offset %llu", lab, what, (unsigned long long)off);
    return 0;
  }
  uint64_t end;
  if (add_u64(off, size, &end) || end > t->size)
    return set_err(err, errsz, "%s: %s [%llu, +%llu) lies outside the %zu-byte file", lab, what,
                   (unsigned long long)off, (unsigned long long)size, t->size);
  if (off < TBL_HEADER_SIZE)
    return set_err(err, errsz, "%s: %s at offset %llu overlaps the header", lab, what, (unsigned long long)off);
  if (off % align != 0)
    return set_err(err, errsz, "%s: %s offset %llu is not %llu-byte aligned", lab, what, (unsigned long long)off,
                   (unsigned long long)align);
  return 0;
}

static int check_crc(const tbl_table *t, const char *lab, const char *what, uint64_t off, uint64_t size, uint32_t want,
                     char *err, size_t errsz) {
  uint32_t got = crc32c(0, t->base + off, (size_t)size);
  if (got != want)
    return set_err(err, errsz, "%s: %s checksum mismatch (stored %08x, computed %08x)", lab, what, want, got);
  return 0;
}

static int is_int_type(uint32_t ty) { return ty >= PS_TYPE_INT8 && ty <= PS_TYPE_UINT64; }
static int is_unsigned_type(uint32_t ty) { return ty >= PS_TYPE_UINT8 && ty <= PS_TYPE_UINT64; }
static int is_float_type(uint32_t ty) { return ty == PS_TYPE_FLOAT32 || ty == PS_TYPE_FLOAT64; }

static uint64_t popcount_bits(const uint8_t *p, uint64_t nbits) {
  uint64_t c = 0;
  uint64_t full = nbits / 8;
  for (uint64_t i = 0; i < full; i++) c += (uint64_t)__builtin_popcount(p[i]);
  if (nbits % 8) c += (uint64_t)__builtin_popcount(p[full] & ((1u << (nbits % 8)) - 1u));
  return c;
}

/* Zone maps (entry bytes 160..191, 1.2): the section's size fits the
 * block size; their values are checked by the library when a column is made
 * from them (ps_column_create_for). */
static int parse_zones(tbl_table *t, uint32_t i, const uint8_t *e, uint32_t entry_size, int verify, range *rs,
                       size_t *nr, const char *lab, char *err, size_t errsz) {
  tbl_column *c = &t->cols[i];
  /* Before 1.2 these bytes had no meaning: a reader ignored them. */
  if (entry_size < TBL_ENTRY_SIZE_V12 || t->version_minor < 2) return 0;
  uint64_t off = get_u64(e + 160), size = get_u64(e + 168);
  uint32_t block_rows = get_u32(e + 176);
  if (t->version_minor < 3 && get_u64(e + 184) != 0)
    return set_err(err, errsz, "%s: reserved entry bytes 184..191 are not zero", lab);
  if (size == 0) {
    if (off || block_rows || get_u32(e + 180))
      return set_err(err, errsz, "%s: zone map fields set without a zone map section", lab);
    return 0;
  }
  uint64_t n = c->desc.n;
  if (block_rows == 0 || block_rows % 32)
    return set_err(err, errsz, "%s: zone map block of %u rows; expected a positive multiple of 32", lab, block_rows);
  uint64_t blocks = n / block_rows + (n % block_rows != 0);
  if (blocks > UINT64_MAX / 17 || size != blocks * 17)
    return set_err(err, errsz, "%s: zone map section is %llu bytes; %llu blocks of %u rows need %llu", lab,
                   (unsigned long long)size, (unsigned long long)blocks, block_rows, (unsigned long long)(blocks * 17));
  if (check_range(t, lab, "zone map section", off, size, TBL_MIN_ALIGN, err, errsz)) return -1;
  if (verify && check_crc(t, lab, "zone map section", off, size, get_u32(e + 180), err, errsz)) return -1;
  const uint8_t *p = t->base + off;
  c->zones.struct_size = sizeof c->zones;
  c->zones.block_rows = block_rows;
  c->zones.blocks = blocks;
  c->zones.min = (const uint64_t *)(const void *)p;
  c->zones.max = c->zones.min + blocks;
  c->zones.flags = p + 16 * blocks;
  c->desc.zones = &c->zones;
  c->zones_offset = off;
  rs[(*nr)++] = (range){off, size, i, "zone map section"};
  return 0;
}

/* A float column's value mapping (entry bytes 192..223, 1.3, with flag
 * TBL_FLAG_FLOAT_MAP): the mapping's fields and its exception section of
 * 16-byte entries (u64 code, u64 double bits), which the library checks
 * when a column is made from them (ps_column_create_for). */
static int parse_float_map(tbl_table *t, uint32_t i, const uint8_t *e, uint32_t entry_size, uint32_t flags, int verify,
                           range *rs, size_t *nr, const char *lab, char *err, size_t errsz) {
  tbl_column *c = &t->cols[i];
  if (!(flags & TBL_FLAG_FLOAT_MAP)) return 0;
  if (entry_size < TBL_ENTRY_SIZE || t->version_minor < 3)
    return set_err(err, errsz, "%s: float mapping flag in a version 1.%u file or a %u-byte entry (needs 1.3, 224)", lab,
                   t->version_minor, entry_size);
  if (!is_float_type(c->desc.type) || (c->encoding != TBL_ENC_FOR && c->encoding != TBL_ENC_DELTA) ||
      c->logical != TBL_LOGICAL_NONE)
    return set_err(err, errsz, "%s: float mapping on a column that is not a plain FOR or DELTA float column", lab);
  ps_for_desc *d = &c->desc;
  d->float_map = e[192];
  d->float_e = e[193];
  d->float_f = e[194];
  d->float_rank_bits = e[195];
  uint64_t off = get_u64(e + 200), size = get_u64(e + 208);
  if (d->float_map != PS_FLOAT_MAP_ALP && d->float_map != PS_FLOAT_MAP_BITS)
    return set_err(err, errsz, "%s: float mapping %u is not 1 (ALP) or 2 (bits)", lab, d->float_map);
  if (size % 16 || (size && d->float_map != PS_FLOAT_MAP_ALP))
    return set_err(err, errsz, "%s: exception section of %llu bytes (16 per entry, ALP mapping only)", lab,
                   (unsigned long long)size);
  if (size == 0) {
    if (off != 0 || get_u32(e + 196) != 0)
      return set_err(err, errsz, "%s: exception fields set without an exception section", lab);
    return 0;
  }
  if (check_range(t, lab, "exception section", off, size, TBL_MIN_ALIGN, err, errsz)) return -1;
  if (verify && check_crc(t, lab, "exception section", off, size, get_u32(e + 196), err, errsz)) return -1;
  d->exceptions = (const ps_float_exception *)(const void *)(t->base + off);
  d->exceptions_count = size / 16;
  c->exceptions_offset = off;
  rs[(*nr)++] = (range){off, size, i, "exception section"};
  return 0;
}

/* A timestamp column's time zone (1.3: entry bytes 184..191 its offset,
 * 216..219 its length, 220..223 its CRC-32C): 1..TBL_MAX_TIME_ZONE
 * printable ASCII bytes, copied into the column. */
static int parse_time_zone(tbl_table *t, uint32_t i, const uint8_t *e, uint32_t entry_size, int verify, range *rs,
                           size_t *nr, const char *lab, char *err, size_t errsz) {
  tbl_column *c = &t->cols[i];
  c->time_zone[0] = 0;
  if (entry_size < TBL_ENTRY_SIZE || t->version_minor < 3) return 0;
  const uint64_t off = get_u64(e + 184);
  const uint32_t len = get_u32(e + 216), crc = get_u32(e + 220);
  if (len == 0) {
    if (off || crc) return set_err(err, errsz, "%s: time zone fields set without a time zone", lab);
    return 0;
  }
  if (c->logical != TBL_LOGICAL_TIMESTAMP)
    return set_err(err, errsz, "%s: a time zone on a column that is not a timestamp", lab);
  if (len > TBL_MAX_TIME_ZONE)
    return set_err(err, errsz, "%s: time zone of %u bytes; at most %d", lab, len, TBL_MAX_TIME_ZONE);
  if (check_range(t, lab, "time zone", off, len, 1, err, errsz)) return -1;
  if (verify && check_crc(t, lab, "time zone", off, len, crc, err, errsz)) return -1;
  if (!tbl_time_zone_ok((const char *)t->base + off, len))
    return set_err(err, errsz, "%s: time zone is not printable ASCII", lab);
  memcpy(c->time_zone, t->base + off, len);
  c->time_zone[len] = 0;
  rs[(*nr)++] = (range){off, len, i, "time zone"};
  return 0;
}

static int parse_entry(tbl_table *t, uint32_t i, const uint8_t *e, uint32_t entry_size, int verify, range *rs,
                       size_t *nr, char *err, size_t errsz) {
  tbl_column *c = &t->cols[i];
  char lab[TBL_MAX_NAME + 64];
  label(lab, sizeof lab, i, NULL);

  uint64_t name_off = get_u64(e + 0);
  uint32_t name_len = get_u32(e + 8);
  if (name_len == 0 || name_len > TBL_MAX_NAME)
    return set_err(err, errsz, "%s: name length %u is not in 1..%d", lab, name_len, TBL_MAX_NAME);
  if (check_range(t, lab, "name", name_off, name_len, 1, err, errsz)) return -1;
  if (check_crc(t, lab, "name", name_off, name_len, get_u32(e + 12), err, errsz)) return -1;
  if (memchr(t->base + name_off, 0, name_len)) return set_err(err, errsz, "%s: name contains a NUL byte", lab);
  c->name = malloc((size_t)name_len + 1);
  if (!c->name) return set_err(err, errsz, "out of memory");
  memcpy(c->name, t->base + name_off, name_len);
  c->name[name_len] = 0;
  rs[(*nr)++] = (range){name_off, name_len, i, "name"};
  label(lab, sizeof lab, i, c->name);

  c->encoding = e[16];
  c->logical = e[17];
  uint32_t type = get_u32(e + 20), width = get_u32(e + 24), scale = get_u32(e + 28);
  uint32_t flags = get_u32(e + 32);
  c->unit = e[18];
  int timelike = c->logical == TBL_LOGICAL_TIMESTAMP || c->logical == TBL_LOGICAL_TIME;
  if ((!timelike && e[18] != 0) || e[19] != 0 || get_u32(e + 36) != 0)
    return set_err(err, errsz, "%s: reserved entry fields are not zero", lab);
  if (timelike && c->unit != 0 && c->unit != 3 && c->unit != 6 && c->unit != 9)
    return set_err(err, errsz, "%s: time unit 10^-%u seconds is not seconds, ms, us or ns", lab, c->unit);
  if (flags & ~(uint32_t)(TBL_FLAG_VALIDITY | TBL_FLAG_SORTED | TBL_FLAG_FLOAT_MAP))
    return set_err(err, errsz, "%s: unknown flags 0x%x", lab, flags);
  if (c->encoding == TBL_ENC_FOR || c->encoding == TBL_ENC_DELTA) {
    if (!is_int_type(type) && !is_float_type(type))
      return set_err(err, errsz, "%s: type %u is not a numeric type", lab, type);
    if (is_int_type(type) && scale != 0)
      return set_err(err, errsz, "%s: integer column has scale %u (must be 0)", lab, scale);
    if (is_float_type(type) && scale > 18) return set_err(err, errsz, "%s: scale %u is not in 0..18", lab, scale);
    if (c->logical == TBL_LOGICAL_DATE && (!is_int_type(type) || is_unsigned_type(type)))
      return set_err(err, errsz, "%s: a date column must have a signed integer type", lab);
    if (c->logical == TBL_LOGICAL_DECIMAL && !is_float_type(type))
      return set_err(err, errsz, "%s: a decimal column must have a float type", lab);
    if (timelike && (!is_int_type(type) || is_unsigned_type(type)))
      return set_err(err, errsz, "%s: a %s column must have a signed integer type", lab,
                     c->logical == TBL_LOGICAL_TIME ? "time" : "timestamp");
    if (c->logical == TBL_LOGICAL_BOOLEAN && (!is_int_type(type) || is_unsigned_type(type)))
      return set_err(err, errsz, "%s: a boolean column must have a signed integer type", lab);
    if (c->logical > TBL_LOGICAL_BOOLEAN) return set_err(err, errsz, "%s: unknown logical type %u", lab, c->logical);
    if (flags & TBL_FLAG_SORTED) return set_err(err, errsz, "%s: sorted flag set on a FOR column", lab);
  } else if (c->encoding == TBL_ENC_DICT) {
    if (!is_unsigned_type(type)) return set_err(err, errsz, "%s: dictionary codes type %u is not unsigned", lab, type);
    if (scale != 0 || c->logical != TBL_LOGICAL_NONE)
      return set_err(err, errsz, "%s: dictionary column has a scale or logical type", lab);
  } else {
    return set_err(err, errsz, "%s: unknown encoding %u", lab, c->encoding);
  }
  if (width > 64) return set_err(err, errsz, "%s: width %u is not in 0..64", lab, width);

  uint64_t n = get_u64(e + 48);
  if (n != t->rows)
    return set_err(err, errsz, "%s: %llu rows, the table has %llu", lab, (unsigned long long)n,
                   (unsigned long long)t->rows);
  c->null_count = get_u64(e + 56);
  c->raw_bytes = get_u64(e + 64);

  ps_for_desc *d = &c->desc;
  memset(d, 0, sizeof *d);
  d->struct_size = sizeof *d;
  d->type = (ps_type)type;
  d->n = n;
  d->width = width;
  d->scale = scale;
  d->reference.u = get_u64(e + 40);

  /* data */
  uint64_t off = get_u64(e + 72), size = get_u64(e + 80), want;
  if (c->encoding == TBL_ENC_DELTA) {
    /* The blocks' headers say the size: checked once the section is known
     * to lie in the file (below). */
    d->encoding = PS_ENCODING_DELTA;
  } else if (packed_bytes(n, width, &want) || size != want) {
    return set_err(err, errsz, "%s: data section is %llu bytes, %llu rows of width %u need %llu", lab,
                   (unsigned long long)size, (unsigned long long)n, width, (unsigned long long)want);
  }
  if (check_range(t, lab, "data section", off, size, TBL_MIN_ALIGN, err, errsz)) return -1;
  if (c->encoding == TBL_ENC_DELTA) {
    ps_for_desc probe = *d;
    probe.data = t->base + off;
    probe.data_size = size;
    char lerr[256];
    if (ps_for_desc_check(&probe, lerr, sizeof lerr) != PS_OK)
      return set_err(err, errsz, "%s: DELTA data section: %s", lab, lerr);
  }
  if (verify && check_crc(t, lab, "data section", off, size, get_u32(e + 88), err, errsz)) return -1;
  d->data = size ? t->base + off : NULL;
  d->data_size = size;
  c->data_offset = off;
  if (size) rs[(*nr)++] = (range){off, size, i, "data section"};

  /* validity */
  off = get_u64(e + 96);
  size = get_u64(e + 104);
  if (flags & TBL_FLAG_VALIDITY) {
    if (size != (n + 7) / 8)
      return set_err(err, errsz, "%s: validity section is %llu bytes, expected ceil(%llu/8)", lab,
                     (unsigned long long)size, (unsigned long long)n);
    if (check_range(t, lab, "validity section", off, size, TBL_MIN_ALIGN, err, errsz)) return -1;
    if (verify && check_crc(t, lab, "validity section", off, size, get_u32(e + 92), err, errsz)) return -1;
    d->validity = size ? t->base + off : NULL;
    d->validity_size = size;
    /* A present but empty bitmap (n == 0) is passed as "no nulls". */
    uint64_t valid = size ? popcount_bits(d->validity, n) : 0;
    if (c->null_count != n - valid)
      return set_err(err, errsz, "%s: null count %llu does not match the validity bitmap (%llu)", lab,
                     (unsigned long long)c->null_count, (unsigned long long)(n - valid));
    c->validity_offset = off;
    if (size) rs[(*nr)++] = (range){off, size, i, "validity section"};
  } else {
    if (off != 0 || size != 0 || get_u32(e + 92) != 0)
      return set_err(err, errsz, "%s: validity fields set without the validity flag", lab);
    if (c->null_count != 0)
      return set_err(err, errsz, "%s: null count %llu without a validity bitmap", lab,
                     (unsigned long long)c->null_count);
  }

  if (parse_zones(t, i, e, entry_size, verify, rs, nr, lab, err, errsz)) return -1;
  if (parse_float_map(t, i, e, entry_size, flags, verify, rs, nr, lab, err, errsz)) return -1;
  if (parse_time_zone(t, i, e, entry_size, verify, rs, nr, lab, err, errsz)) return -1;
  if (!(flags & TBL_FLAG_FLOAT_MAP) && entry_size >= TBL_ENTRY_SIZE && t->version_minor >= 3)
    for (int k = 192; k < 216; k++) /* 216..223: the time zone's */
      if (e[k]) return set_err(err, errsz, "%s: float mapping bytes 192..215 set without the float mapping flag", lab);

  /* dictionary */
  uint64_t dcount = get_u64(e + 112);
  uint64_t doff = get_u64(e + 120), dsize = get_u64(e + 128);
  uint64_t boff = get_u64(e + 136), bsize = get_u64(e + 144);
  if (c->encoding != TBL_ENC_DICT) {
    if (dcount || doff || dsize || boff || bsize || get_u32(e + 152) || get_u32(e + 156))
      return set_err(err, errsz, "%s: dictionary fields set on a FOR column", lab);
    return 0;
  }
  /* Bounded by the file size before anything depends on it. */
  if (dcount >= INT32_MAX)
    return set_err(err, errsz, "%s: dictionary of %llu strings; at most %d are supported", lab,
                   (unsigned long long)dcount, INT32_MAX - 1);
  if ((dcount + 1) * 4 != dsize)
    return set_err(err, errsz, "%s: dictionary of %llu strings needs %llu offset bytes, found %llu", lab,
                   (unsigned long long)dcount, (unsigned long long)((dcount + 1) * 4), (unsigned long long)dsize);
  if (bsize > INT32_MAX)
    return set_err(err, errsz, "%s: dictionary bytes (%llu) exceed 32-bit offsets", lab, (unsigned long long)bsize);
  if (check_range(t, lab, "dictionary offsets section", doff, dsize, TBL_MIN_ALIGN, err, errsz) ||
      check_range(t, lab, "dictionary bytes section", boff, bsize, 1, err, errsz))
    return -1;
  if (verify && (check_crc(t, lab, "dictionary offsets section", doff, dsize, get_u32(e + 152), err, errsz) ||
                 check_crc(t, lab, "dictionary bytes section", boff, bsize, get_u32(e + 156), err, errsz)))
    return -1;
  const uint8_t *op = t->base + doff;
  const uint8_t *bytes = bsize ? t->base + boff : NULL;
  uint32_t prev = get_u32(op);
  if (prev != 0) return set_err(err, errsz, "%s: dictionary offset 0 is %u, not 0", lab, prev);
  uint32_t pstart = 0, plen = 0;
  for (uint64_t k = 1; k <= dcount; k++) {
    uint32_t o = get_u32(op + 4 * k);
    if (o < prev || o > bsize)
      return set_err(err, errsz, "%s: dictionary offset %llu (%u) is out of order or past %llu bytes", lab,
                     (unsigned long long)k, o, (unsigned long long)bsize);
    if ((flags & TBL_FLAG_SORTED) && k > 1) {
      uint32_t len = o - prev, m = plen < len ? plen : len;
      int r = m ? memcmp(bytes + pstart, bytes + prev, m) : 0;
      if (r > 0 || (r == 0 && plen >= len))
        return set_err(err, errsz, "%s: dictionary marked sorted but entry %llu is not above entry %llu", lab,
                       (unsigned long long)(k - 1), (unsigned long long)(k - 2));
    }
    pstart = prev;
    plen = o - prev;
    prev = o;
  }
  if (prev != bsize)
    return set_err(err, errsz, "%s: dictionary offsets end at %u, bytes section is %llu", lab, prev,
                   (unsigned long long)bsize);
  memset(&c->dict, 0, sizeof c->dict);
  c->dict.struct_size = sizeof c->dict;
  c->dict.count = dcount;
  c->dict.offsets32 = (const int32_t *)(const void *)op;
  c->dict.bytes = bytes;
  c->dict.bytes_size = bsize;
  c->dict.sorted = (flags & TBL_FLAG_SORTED) != 0;
  c->dict_offsets_offset = doff;
  c->dict_bytes_offset = boff;
  rs[(*nr)++] = (range){doff, dsize, i, "dictionary offsets section"};
  if (bsize) rs[(*nr)++] = (range){boff, bsize, i, "dictionary bytes section"};
  return 0;
}

static int open_validated(tbl_table *t, int verify, char *err, size_t errsz) {
  const uint8_t *b = t->base;
  if (!host_is_little_endian()) return set_err(err, errsz, "this build reads tables only on little-endian hosts");
  /* The magic first: a short text file is not a table, rather than a truncated one. */
  if (memcmp(b, TBL_MAGIC, t->size < 8 ? t->size : 8) != 0)
    return set_err(err, errsz, "not a packscan table (no \"%s\" magic)", TBL_MAGIC);
  if (t->size < TBL_HEADER_SIZE)
    return set_err(err, errsz, "truncated at byte %zu: expected a %d-byte header", t->size, TBL_HEADER_SIZE);
  t->version_major = get_u16(b + 8);
  t->version_minor = get_u16(b + 10);
  if (t->version_major != TBL_VERSION_MAJOR)
    return set_err(err, errsz, "table format version %u.%u is not supported (this reader: %d.x)", t->version_major,
                   t->version_minor, TBL_VERSION_MAJOR);
  uint32_t hcrc = get_u32(b + 60), hgot = crc32c(0, b, 60);
  if (hcrc != hgot) return set_err(err, errsz, "header checksum mismatch (stored %08x, computed %08x)", hcrc, hgot);
  uint32_t header_size = get_u32(b + 12);
  t->rows = get_u64(b + 16);
  t->ncols = get_u32(b + 24);
  uint32_t entry_size = get_u32(b + 28);
  uint64_t dir_off = get_u64(b + 32), file_size = get_u64(b + 40);
  if (header_size != TBL_HEADER_SIZE)
    return set_err(err, errsz, "header size %u, expected %d", header_size, TBL_HEADER_SIZE);
  if (entry_size < TBL_ENTRY_SIZE_V10 || entry_size % 8 != 0 || entry_size > 65536)
    return set_err(err, errsz, "directory entry size %u is not a multiple of 8 in %d..65536", entry_size,
                   TBL_ENTRY_SIZE_V10);
  if (get_u32(b + 48) != 0) return set_err(err, errsz, "unknown header flags 0x%x", get_u32(b + 48));
  if (get_u32(b + 56) != 0) return set_err(err, errsz, "reserved header field is not zero");
  if (file_size != t->size) {
    if (t->size < file_size)
      return set_err(err, errsz, "truncated at byte %zu: the header says the file is %llu bytes", t->size,
                     (unsigned long long)file_size);
    return set_err(err, errsz, "%zu bytes, but the header says the file is %llu bytes", t->size,
                   (unsigned long long)file_size);
  }
  /* A table has no more rows than its file has bits (every row costs at least
   * a bit in some column), except tiny tables whose columns are all constant:
   * this bounds the work and the memory (bitmaps) a query spends on a hostile
   * row count. */
  if (t->rows > TBL_SMALL_ROWS && t->rows / 8 > t->size)
    return set_err(err, errsz, "row count %llu is implausible for a %zu-byte file (more rows than bits in the file)",
                   (unsigned long long)t->rows, t->size);
  uint64_t dir_size = (uint64_t)t->ncols * entry_size, dir_end;
  if (dir_off < TBL_HEADER_SIZE || dir_off % 8 != 0)
    return set_err(err, errsz, "directory offset %llu is not an 8-aligned offset past the header",
                   (unsigned long long)dir_off);
  if (add_u64(dir_off, dir_size, &dir_end) || dir_end > t->size) {
    uint64_t have = dir_off < t->size ? (t->size - dir_off) / entry_size : 0;
    return set_err(err, errsz, "truncated at byte %llu: expected %u-byte directory entry %llu of %u",
                   (unsigned long long)(dir_off + have * entry_size), entry_size, (unsigned long long)have, t->ncols);
  }
  uint32_t dcrc = get_u32(b + 52), dgot = crc32c(0, b + dir_off, (size_t)dir_size);
  if (dcrc != dgot) return set_err(err, errsz, "directory checksum mismatch (stored %08x, computed %08x)", dcrc, dgot);

  /* ncols is now bounded by the file size (each entry is >= 160 bytes). */
  t->cols = calloc(t->ncols ? t->ncols : 1, sizeof *t->cols);
  size_t max_ranges = 2 + (size_t)t->ncols * 8; /* name and up to seven sections a column */
  range *rs = calloc(max_ranges, sizeof *rs);
  if (!t->cols || !rs) {
    free(rs);
    return set_err(err, errsz, "out of memory");
  }
  size_t nr = 0;
  rs[nr++] = (range){0, TBL_HEADER_SIZE, UINT32_MAX, "header"};
  if (dir_size) rs[nr++] = (range){dir_off, dir_size, UINT32_MAX, "directory"};
  for (uint32_t i = 0; i < t->ncols; i++) {
    if (parse_entry(t, i, b + dir_off + (uint64_t)i * entry_size, entry_size, verify, rs, &nr, err, errsz)) {
      free(rs);
      return -1;
    }
  }
  /* Sections may not overlap, and every byte between them is zero: then every
   * byte of the file is either checked content or checked padding. */
  qsort(rs, nr, sizeof *rs, cmp_range);
  uint64_t pos = 0;
  for (size_t k = 0; k < nr; k++) {
    if (rs[k].off < pos) {
      const range *p = &rs[k - 1];
      char l1[TBL_MAX_NAME + 64], l2[TBL_MAX_NAME + 64];
      if (p->col == UINT32_MAX)
        snprintf(l1, sizeof l1, "the");
      else
        label(l1, sizeof l1, p->col, t->cols[p->col].name);
      if (rs[k].col == UINT32_MAX)
        snprintf(l2, sizeof l2, "the");
      else
        label(l2, sizeof l2, rs[k].col, t->cols[rs[k].col].name);
      set_err(err, errsz, "%s %s overlaps %s %s at byte %llu", l2, rs[k].what, l1, p->what,
              (unsigned long long)rs[k].off);
      free(rs);
      return -1;
    }
    for (uint64_t q = pos; q < rs[k].off; q++)
      if (b[q]) {
        free(rs);
        return set_err(err, errsz, "nonzero padding byte at offset %llu", (unsigned long long)q);
      }
    pos = rs[k].off + rs[k].size;
  }
  for (uint64_t q = pos; q < t->size; q++)
    if (b[q]) {
      free(rs);
      return set_err(err, errsz, "nonzero padding byte at offset %llu", (unsigned long long)q);
    }
  free(rs);
  /* Names must be unique so that a query names exactly one column (sorted,
   * so that a hostile file with many columns cannot make this quadratic). */
  if (t->ncols > 1) {
    char **names = malloc((size_t)t->ncols * sizeof *names);
    if (!names) return set_err(err, errsz, "out of memory");
    for (uint32_t i = 0; i < t->ncols; i++) names[i] = t->cols[i].name;
    qsort(names, t->ncols, sizeof *names, cmp_name);
    for (uint32_t i = 1; i < t->ncols; i++)
      if (strcmp(names[i - 1], names[i]) == 0) {
        set_err(err, errsz, "duplicate column name '%s'", names[i]);
        free(names);
        return -1;
      }
    free(names);
  }
  return 0;
}

void tbl_close(tbl_table *t) {
  if (!t) return;
  if (t->cols)
    for (uint32_t i = 0; i < t->ncols; i++) free(t->cols[i].name);
  free(t->cols);
  if (t->map) munmap(t->map, t->map_size);
  free(t->heap);
  free(t);
}

int tbl_open_memory(const void *buf, size_t size, int verify, tbl_table **out, char *err, size_t errsz) {
  tbl_table *t = calloc(1, sizeof *t);
  if (!t) return set_err(err, errsz, "out of memory");
  if (((uintptr_t)buf % TBL_MIN_ALIGN) != 0) {
    /* Sections are used in place as typed arrays: they need an aligned base. */
    t->heap = malloc(size ? size : 1);
    if (!t->heap) {
      free(t);
      return set_err(err, errsz, "out of memory");
    }
    memcpy(t->heap, buf, size);
    buf = t->heap;
  }
  t->base = buf;
  t->size = size;
  if (open_validated(t, verify, err, errsz)) {
    tbl_close(t);
    return -1;
  }
  *out = t;
  return 0;
}

int tbl_open_file(const char *path, int verify, tbl_table **out, char *err, size_t errsz) {
  char sub[TOOL_ERR_SIZE];
  int fd = open(path, O_RDONLY);
  if (fd < 0) return set_err(err, errsz, "%s: %s", path, strerror(errno));
  struct stat st;
  if (fstat(fd, &st) != 0) {
    set_err(err, errsz, "%s: %s", path, strerror(errno));
    close(fd);
    return -1;
  }
  if (!S_ISREG(st.st_mode)) {
    close(fd);
    return set_err(err, errsz, "%s: not a regular file", path);
  }
  size_t size = (size_t)st.st_size;
  void *map = size ? mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0) : MAP_FAILED;
  void *heap = NULL;
  if (map == MAP_FAILED) {
    map = NULL;
    /* Fall back to reading the file (filesystems without mmap, empty files). */
    heap = malloc(size ? size : 1);
    if (!heap) {
      close(fd);
      return set_err(err, errsz, "%s: out of memory", path);
    }
    size_t got = 0;
    while (got < size) {
      ssize_t r = read(fd, (char *)heap + got, size - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) {
        set_err(err, errsz, "%s: read failed: %s", path, r < 0 ? strerror(errno) : "unexpected end");
        free(heap);
        close(fd);
        return -1;
      }
      got += (size_t)r;
    }
  }
  close(fd);
  tbl_table *t = calloc(1, sizeof *t);
  if (!t) {
    if (map) munmap(map, size);
    free(heap);
    return set_err(err, errsz, "out of memory");
  }
  t->map = map;
  t->map_size = size;
  t->heap = heap;
  t->base = map ? map : heap;
  t->size = size;
  if (open_validated(t, verify, sub, sizeof sub)) {
    if (size > 0 && memcmp(t->base, TBL_MAGIC, size < 8 ? size : 8) != 0)
      set_err(err, errsz, "%s: %s; a CSV file is encoded first: packscan encode %s TABLE.pst", path, sub, path);
    else
      set_err(err, errsz, "%s: %s", path, sub);
    tbl_close(t);
    return -1;
  }
  *out = t;
  return 0;
}

static int ascii_casecmp_n(const char *a, const char *b, size_t n) {
  for (size_t i = 0; i < n; i++) {
    int x = (unsigned char)a[i], y = (unsigned char)b[i];
    if (x >= 'A' && x <= 'Z') x += 32;
    if (y >= 'A' && y <= 'Z') y += 32;
    if (x != y) return 1;
  }
  return 0;
}

int tbl_find_column(const tbl_table *t, const char *name, size_t len, int exact) {
  int found = -1;
  for (uint32_t i = 0; i < t->ncols; i++)
    if (strlen(t->cols[i].name) == len && memcmp(t->cols[i].name, name, len) == 0) return (int)i;
  if (exact) return -1;
  for (uint32_t i = 0; i < t->ncols; i++)
    if (strlen(t->cols[i].name) == len && ascii_casecmp_n(t->cols[i].name, name, len) == 0) {
      if (found >= 0) return -2;
      found = (int)i;
    }
  return found;
}

void tbl_column_typename(const tbl_column *c, char out[32]) {
  if (c->encoding == TBL_ENC_DICT)
    snprintf(out, 32, "string");
  else if (c->logical == TBL_LOGICAL_DATE)
    snprintf(out, 32, "date");
  else if (c->logical == TBL_LOGICAL_BOOLEAN)
    snprintf(out, 32, "boolean");
  else if (c->logical == TBL_LOGICAL_DECIMAL)
    snprintf(out, 32, "decimal(%u)", c->desc.scale);
  else if (c->logical == TBL_LOGICAL_TIMESTAMP || c->logical == TBL_LOGICAL_TIME) {
    const char *base = c->logical == TBL_LOGICAL_TIME ? "time" : "timestamp";
    if (c->unit)
      snprintf(out, 32, "%s(%u)", base, c->unit);
    else
      snprintf(out, 32, "%s", base);
  } else {
    static const char *names[] = {"?",      "int8",   "int16",  "int32",   "int64",  "uint8",
                                  "uint16", "uint32", "uint64", "float32", "float64"};
    uint32_t ty = (uint32_t)c->desc.type;
    snprintf(out, 32, "%s", ty <= 10 ? names[ty] : "?");
  }
}

uint64_t tbl_column_stored_bytes(const tbl_column *c) {
  uint64_t s = c->desc.data_size + c->desc.validity_size + c->desc.exceptions_count * sizeof(ps_float_exception);
  if (c->encoding == TBL_ENC_DICT) s += (c->dict.count + 1) * 4 + c->dict.bytes_size;
  return s;
}
