#include "dict_dedup.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"

static uint64_t hash_bytes(const uint8_t *p, size_t n) {
  uint64_t h = 0xcbf29ce484222325ull ^ n;
  for (size_t i = 0; i < n; i++) h = (h ^ p[i]) * 0x100000001b3ull;
  return h ^ (h >> 29);
}

static int64_t off_at(const ps_strings *in, uint64_t i) {
  return in->offsets64 ? in->offsets64[i] : (int64_t)in->offsets32[i];
}

void tool_dict_free(tool_dict *d) {
  ps_encoded_dict_free(&d->uniq);
  ps_encoded_free(&d->codes);
  memset(d, 0, sizeof *d);
}

/* Shared tail: sorted dictionary of uniq, then per-row codes. rowu is
 * overwritten with the codes. */
static int finish(const ps_strings *uniq, uint32_t *rowu, uint64_t n, const uint8_t *validity, tool_dict *out,
                  char *err, size_t errsz) {
  uint64_t count = uniq->n;
  uint32_t *ucode = malloc(count ? count * sizeof *ucode : 1);
  if (!ucode) return set_err(err, errsz, "out of memory");
  char msg[TOOL_ERR_SIZE];
  ps_status st = ps_encode_dict(uniq, NULL, msg, sizeof msg, &out->uniq);
  if (st == PS_OK && count) {
    ps_for_desc d = out->uniq.codes.desc;
    d.type = PS_TYPE_UINT32;
    st = ps_decode_for(&d, ucode, msg, sizeof msg);
  }
  if (st == PS_OK) {
    for (uint64_t i = 0; i < n; i++) {
      int valid = !validity || ((validity[i / 8] >> (i % 8)) & 1);
      if (valid && rowu[i] >= count) {
        free(ucode);
        return set_err(err, errsz, "row %llu: string index %u out of range", (unsigned long long)i, rowu[i]);
      }
      rowu[i] = valid ? ucode[rowu[i]] : 0;
    }
    ps_plain p = {PS_TYPE_UINT32, rowu, n, validity};
    st = ps_encode_for(&p, 0, 0, 0, NULL, msg, sizeof msg, &out->codes);
  }
  free(ucode);
  if (st != PS_OK) return set_err(err, errsz, "%s: %s", ps_status_name(st), msg);
  return 0;
}

int tool_encode_dict_indexed(const ps_strings *uniq, const uint32_t *index, uint64_t n, const uint8_t *validity,
                             tool_dict *out, char *err, size_t errsz) {
  memset(out, 0, sizeof *out);
  uint32_t *rowu = malloc(n ? n * sizeof *rowu : 1);
  if (!rowu) return set_err(err, errsz, "out of memory");
  if (n) memcpy(rowu, index, n * sizeof *rowu);
  int rc = finish(uniq, rowu, n, validity, out, err, errsz);
  free(rowu);
  if (rc) tool_dict_free(out);
  return rc;
}

int tool_encode_dict(const ps_strings *in, tool_dict *out, char *err, size_t errsz) {
  memset(out, 0, sizeof *out);
  uint64_t n = in->n;
  if (n >= UINT32_MAX) return set_err(err, errsz, "too many rows for 32-bit dictionary codes");
  uint32_t *rowu = malloc(n ? n * sizeof *rowu : 1);
  uint64_t cap = 1024, count = 0, ucap = 256;
  /* slot: high 32 bits of the hash << 32 | (unique index + 1); 0 = empty. The
   * stored hash bits skip most string comparisons and a cache miss each. */
  uint64_t *slots = calloc(cap, sizeof *slots);
  uint64_t *urow = malloc(ucap * sizeof *urow); /* first row of each unique string */
  uint64_t *uhash = malloc(ucap * sizeof *uhash);
  int64_t *uoff = NULL;
  uint8_t *ubytes = NULL;
  int rc = -1;
  if (!rowu || !slots || !urow || !uhash) goto oom;
  uint64_t total = 0;
  for (uint64_t i = 0; i < n; i++) {
    if (in->validity && !((in->validity[i / 8] >> (i % 8)) & 1)) {
      rowu[i] = 0;
      continue;
    }
    int64_t a = off_at(in, i), b = off_at(in, i + 1);
    if (a < 0 || b < a) {
      set_err(err, errsz, "row %llu: invalid string offsets", (unsigned long long)i);
      goto done;
    }
    const uint8_t *s = in->bytes + a;
    size_t len = (size_t)(b - a);
    uint64_t h = hash_bytes(s, len), k = h & (cap - 1), tag = h >> 32;
    uint64_t found = 0;
    for (;;) {
      uint64_t sl = slots[k];
      if (sl == 0) break;
      if ((sl >> 32) == tag) {
        uint64_t u = (sl & 0xFFFFFFFFu) - 1, r = urow[u];
        int64_t ra = off_at(in, r), rb = off_at(in, r + 1);
        if ((size_t)(rb - ra) == len && !memcmp(in->bytes + ra, s, len)) {
          found = u + 1;
          break;
        }
      }
      k = (k + 1) & (cap - 1);
    }
    if (found) {
      rowu[i] = (uint32_t)(found - 1);
      continue;
    }
    if (count == ucap) {
      ucap *= 2;
      uint64_t *a1 = realloc(urow, ucap * sizeof *urow);
      if (!a1) goto oom;
      urow = a1;
      uint64_t *a2 = realloc(uhash, ucap * sizeof *uhash);
      if (!a2) goto oom;
      uhash = a2;
    }
    urow[count] = i;
    uhash[count] = h;
    count++;
    slots[k] = tag << 32 | count;
    rowu[i] = (uint32_t)(count - 1);
    total += len;
    if (count * 2 > cap) { /* grow and reinsert by the stored hashes */
      uint64_t ncap = cap * 2;
      uint64_t *ns = calloc(ncap, sizeof *ns);
      if (!ns) goto oom;
      for (uint64_t u = 0; u < count; u++) {
        uint64_t j = uhash[u] & (ncap - 1);
        while (ns[j]) j = (j + 1) & (ncap - 1);
        ns[j] = (uhash[u] >> 32) << 32 | (u + 1);
      }
      free(slots);
      slots = ns;
      cap = ncap;
    }
  }
  /* The distinct strings, contiguous. */
  uoff = malloc((count + 1) * sizeof *uoff);
  ubytes = malloc(total ? total : 1);
  if (!uoff || !ubytes) goto oom;
  uoff[0] = 0;
  for (uint64_t u = 0; u < count; u++) {
    int64_t a = off_at(in, urow[u]), b = off_at(in, urow[u] + 1);
    memcpy(ubytes + uoff[u], in->bytes + a, (size_t)(b - a));
    uoff[u + 1] = uoff[u] + (b - a);
  }
  ps_strings us;
  memset(&us, 0, sizeof us);
  us.n = count;
  us.offsets64 = uoff;
  us.bytes = ubytes;
  rc = finish(&us, rowu, n, in->validity, out, err, errsz);
  goto done;
oom:
  set_err(err, errsz, "out of memory");
done:
  free(rowu);
  free(slots);
  free(urow);
  free(uhash);
  free(uoff);
  free(ubytes);
  if (rc) tool_dict_free(out);
  return rc;
}
