#include "csv.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>

#define CSV_CHUNK 65536

int csv_init(csv_reader *r, csv_read_fn fn, void *opaque, char delim) {
  memset(r, 0, sizeof *r);
  r->read = fn;
  r->opaque = opaque;
  r->delim = delim;
  r->line = 1;
  r->in = malloc(CSV_CHUNK);
  r->in_cap = CSV_CHUNK;
  return r->in ? 0 : -1;
}

void csv_free(csv_reader *r) {
  free(r->in);
  free(r->fields);
  tbuf_free(&r->data);
  memset(r, 0, sizeof *r);
}

/* Refills the input buffer: 1 data available, 0 end of input, -1 read error. */
static int fill(csv_reader *r) {
  if (r->in_pos < r->in_len) return 1;
  if (r->eof) return 0;
  long got = r->read(r->opaque, r->in, r->in_cap);
  if (got < 0) return -1;
  r->in_len = (size_t)got;
  r->in_pos = 0;
  if (got == 0) {
    r->eof = 1;
    return 0;
  }
  return 1;
}

/* Next byte, -1 at end of input, -2 on a read error. */
static int getch(csv_reader *r) {
  int f = fill(r);
  if (f <= 0) return f == 0 ? -1 : -2;
  r->consumed++;
  int c = r->in[r->in_pos++];
  if (c == '\n') r->line++;
  return c;
}

static int peekch(csv_reader *r) {
  int f = fill(r);
  if (f <= 0) return f == 0 ? -1 : -2;
  return r->in[r->in_pos];
}

static int push_field(csv_reader *r, size_t start, int quoted) {
  if (r->nfields == r->cap_fields) {
    size_t cap = r->cap_fields ? r->cap_fields * 2 : 16;
    if (cap > SIZE_MAX / sizeof *r->fields) return -1;
    csv_field *f = realloc(r->fields, cap * sizeof *f);
    if (!f) return -1;
    r->fields = f;
    r->cap_fields = cap;
  }
  r->fields[r->nfields].start = start;
  r->fields[r->nfields].len = r->data.len - start;
  r->fields[r->nfields].quoted = quoted;
  r->nfields++;
  return 0;
}

int csv_record_blank(const csv_reader *r) {
  return r->nfields == 1 && r->fields[0].len == 0 && !r->fields[0].quoted;
}

/* Picks the delimiter from the first line: the most frequent of ',', ';',
 * tab and '|' outside quotes (',' on a tie or when there is none). Reads
 * ahead until the line ends without consuming anything. */
static int detect_delimiter(csv_reader *r, char *err, size_t errsz) {
  static const char cand[4] = {',', ';', '\t', '|'};
  for (;;) {
    if (memchr(r->in + r->in_pos, '\n', r->in_len - r->in_pos) || r->eof || r->in_len >= (1u << 20)) break;
    if (r->in_len == r->in_cap) {
      unsigned char *n = realloc(r->in, r->in_cap * 2);
      if (!n) return set_err(err, errsz, "out of memory");
      r->in = n;
      r->in_cap *= 2;
    }
    long got = r->read(r->opaque, r->in + r->in_len, r->in_cap - r->in_len);
    if (got < 0) return set_err(err, errsz, "read error: %s", strerror(errno));
    if (got == 0) r->eof = 1;
    r->in_len += (size_t)got;
  }
  size_t count[4] = {0, 0, 0, 0};
  int quoted = 0;
  for (size_t i = r->in_pos; i < r->in_len && (quoted || r->in[i] != '\n'); i++) {
    if (r->in[i] == '"') quoted = !quoted;
    for (int k = 0; k < 4 && !quoted; k++) count[k] += r->in[i] == (unsigned char)cand[k];
  }
  int best = 0;
  for (int k = 1; k < 4; k++)
    if (count[k] > count[best]) best = k;
  r->delim = cand[best];
  return 0;
}

int csv_next(csv_reader *r, char *err, size_t errsz) {
  r->nfields = 0;
  r->data.len = 0;
  if (!r->started) {
    r->started = 1;
    /* Skip a UTF-8 byte-order mark (reading until 3 bytes are buffered, as a
     * source may return fewer bytes per call). */
    while (!r->eof && r->in_len < 3) {
      long got = r->read(r->opaque, r->in + r->in_len, r->in_cap - r->in_len);
      if (got < 0) return set_err(err, errsz, "read error: %s", strerror(errno));
      if (got == 0) r->eof = 1;
      r->in_len += (size_t)got;
    }
    if (r->in_len >= 3 && memcmp(r->in, "\xEF\xBB\xBF", 3) == 0) {
      r->in_pos += 3;
      r->consumed += 3;
    }
    if (r->delim == 0 && detect_delimiter(r, err, errsz)) return -1;
  }
  int c = peekch(r);
  if (c == -2) return set_err(err, errsz, "line %llu: read error: %s", (unsigned long long)r->line, strerror(errno));
  if (c == -1) return 0;
  r->record_line = r->line;
  for (;;) { /* one field per iteration */
    size_t start = r->data.len;
    c = getch(r);
    if (c == '"') {
      uint64_t qline = r->line;
      for (;;) {
        c = getch(r);
        if (c == -2) return set_err(err, errsz, "line %llu: read error", (unsigned long long)r->line);
        if (c == -1)
          return set_err(err, errsz, "line %llu, field %zu: unterminated quoted field (the input ends inside it)",
                         (unsigned long long)qline, r->nfields + 1);
        if (c == '"') {
          if (peekch(r) == '"') {
            getch(r);
          } else {
            break;
          }
        }
        if (tbuf_putc(&r->data, c)) return set_err(err, errsz, "out of memory");
      }
      if (push_field(r, start, 1)) return set_err(err, errsz, "out of memory");
      c = getch(r);
      if (c == r->delim) continue;
      if (c == '\r' && peekch(r) == '\n') c = getch(r);
      if (c == '\n' || c == '\r' || c == -1) return 1;
      if (c == -2) return set_err(err, errsz, "line %llu: read error", (unsigned long long)r->line);
      return set_err(err, errsz, "line %llu, field %zu: unexpected character '%c' after a closing quote",
                     (unsigned long long)r->line, r->nfields, c >= 32 && c < 127 ? c : '?');
    }
    for (;;) {
      if (c == -2) return set_err(err, errsz, "line %llu: read error", (unsigned long long)r->line);
      if (c == r->delim || c == '\n' || c == '\r' || c == -1) break;
      if (tbuf_putc(&r->data, c)) return set_err(err, errsz, "out of memory");
      c = getch(r);
    }
    if (push_field(r, start, 0)) return set_err(err, errsz, "out of memory");
    if (c == r->delim) continue;
    if (c == '\r' && peekch(r) == '\n') getch(r);
    return 1;
  }
}

long csv_read_file(void *opaque, void *dst, size_t n) {
  FILE *f = opaque;
  size_t got = fread(dst, 1, n, f);
  if (got == 0 && ferror(f)) return -1;
  return (long)got;
}

long csv_read_mem(void *opaque, void *dst, size_t n) {
  csv_mem *m = opaque;
  size_t k = m->len - m->pos;
  if (k > n) k = n;
  memcpy(dst, m->p + m->pos, k);
  m->pos += k;
  return (long)k;
}
