#include "dict_dedup.h"
#include "table.h"

#include <stdlib.h>
#include <string.h>

#include "util.h"



void tool_dict_free(tool_dict *d) {
  ps_encoded_dict_destroy(&d->uniq);
  ps_encoded_destroy(&d->codes);
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
  if (st != PS_OK) return set_err(err, errsz, "%s", lib_error(st, msg));
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
  /* ps_encode_dict finds the distinct strings with a hash table itself; the
   * codes move out of its result so that tool_dict keeps one owner each. */
  memset(out, 0, sizeof *out);
  char msg[TOOL_ERR_SIZE];
  ps_status st = ps_encode_dict(in, NULL, msg, sizeof msg, &out->uniq);
  if (st != PS_OK) return set_err(err, errsz, "%s", lib_error(st, msg));
  out->codes = out->uniq.codes;
  memset(&out->uniq.codes, 0, sizeof out->uniq.codes);
  return 0;
}
