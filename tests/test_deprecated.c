/*
 * deprecated: the names include/packscan.h keeps for one release ("Deprecated
 * names", docs/api-changes.md) still compile, link and return exactly what
 * the functions that replaced them return, on the backend under test: row
 * ids of a selection (host and device), gathered values (host and device,
 * with validity), gathered strings, statuses of a refused call, and the
 * encoders' destroy functions. Built with PS_NO_DEPRECATION_WARNINGS, the
 * documented way to silence the warnings; the tests deprecated_warns_c (and
 * _cxx) check that the header warns without it.
 */
#define PS_NO_DEPRECATION_WARNINGS
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

#define N 1000

static unsigned long long ull(uint64_t v) { return (unsigned long long)v; }

/* Both buffers' whole bytes equal (read back). */
static int same_buffers(ps_context *ctx, const ps_buffer *a, const ps_buffer *b) {
  const uint64_t size = ps_buffer_size(a);
  if (ps_buffer_size(b) != size) return 0;
  uint8_t *x = th_calloc((size_t)size, 1), *y = th_calloc((size_t)size, 1);
  int same = CHECK_OK(ctx, ps_buffer_read(ctx, a, 0, x, size)) && CHECK_OK(ctx, ps_buffer_read(ctx, b, 0, y, size)) &&
             memcmp(x, y, (size_t)size) == 0;
  free(x);
  free(y);
  return same;
}

static ps_buffer *zeroed(ps_context *ctx, uint64_t size) {
  ps_buffer *b = NULL;
  if (!CHECK_OK(ctx, ps_buffer_create(ctx, size, &b))) return NULL;
  uint8_t *z = th_calloc((size_t)size, 1);
  CHECK_OK(ctx, ps_buffer_write(ctx, b, 0, z, size));
  free(z);
  return b;
}

int main(int argc, char **argv) {
  th_init(argc, argv, "deprecated");
  ps_context *ctx = th_context(0);
  char err[256];

  /* an int64 column with nulls, FOR-encoded here; a string column */
  int64_t values[N];
  uint8_t validity[(N + 7) / 8];
  memset(validity, 0, sizeof validity);
  for (int i = 0; i < N; i++) {
    values[i] = (int64_t)th_below(&th.rng, 100000) - 5000;
    if (i % 7) validity[i / 8] |= (uint8_t)(1u << (i % 8));
  }
  ps_plain plain = {PS_TYPE_INT64, values, N, validity};
  ps_encoded enc;
  CHECK_OK(NULL, ps_encode_for(&plain, 0, 0, 0, NULL, err, sizeof err, &enc));
  int32_t offsets[N + 1];
  char text[N * 3];
  offsets[0] = 0;
  for (int i = 0; i < N; i++) offsets[i + 1] = offsets[i] + snprintf(text + offsets[i], 4, "%d", i % 37);
  ps_strings strings = {N, offsets, NULL, (const uint8_t *)text, validity};
  ps_encoded_dict denc;
  CHECK_OK(NULL, ps_encode_dict(&strings, NULL, err, sizeof err, &denc));

  ps_column *col = NULL, *scol = NULL;
  CHECK_OK(ctx, ps_column_create_for(ctx, &enc.desc, &col));
  CHECK_OK(ctx, ps_column_create_dict(ctx, &denc.dict, &denc.codes.desc, &scol));
  ps_expr *e = NULL;
  if (col) CHECK_OK(ctx, ps_expr_compare(ctx, col, PS_LT, ps_lit_int(30000), &e));
  ps_buffer *sel = zeroed(ctx, (N + 7) / 8 + 4);
  uint64_t count = 0;
  if (e && sel) CHECK_OK(ctx, ps_filter_device(ctx, e, sel, 0, &count));
  CHECKF(count > 0 && count < N, "selected %llu of %d rows", ull(count), N);

  for (int t = 0; t < 2 && e && sel && scol; t++) {
    const ps_index_type type = t ? PS_INDEX_UINT64 : PS_INDEX_UINT32;
    const uint64_t isz = (uint64_t)type;
    th_case("index type uint%d", t ? 64 : 32);

    /* row ids into host memory: ps_row_ids_host = ps_selection_row_ids */
    uint8_t *ids_old = th_calloc((size_t)(N * isz), 1), *ids_new = th_calloc((size_t)(N * isz), 1);
    uint64_t c_old = 0, c_new = 0;
    CHECK_OK(ctx, ps_row_ids_host(ctx, sel, 0, N, type, ids_old, N, &c_old));
    CHECK_OK(ctx, ps_selection_row_ids(ctx, sel, 0, N, type, ids_new, N, &c_new));
    CHECKF(c_old == count && c_new == count, "host ids: %llu and %llu, expected %llu", ull(c_old), ull(c_new),
           ull(count));
    CHECK(memcmp(ids_old, ids_new, (size_t)(N * isz)) == 0);
    /* too small: the same status and count */
    c_old = c_new = 0;
    CHECK_STATUS(ctx, ps_row_ids_host(ctx, sel, 0, N, type, ids_old, 1, &c_old), PS_ERR_BUFFER_TOO_SMALL);
    CHECK_STATUS(ctx, ps_selection_row_ids(ctx, sel, 0, N, type, ids_new, 1, &c_new), PS_ERR_BUFFER_TOO_SMALL);
    CHECK(c_old == count && c_new == count);

    /* row ids into a device buffer: ps_row_ids = ps_selection_row_ids_device */
    ps_buffer *dids_old = zeroed(ctx, N * isz), *dids_new = zeroed(ctx, N * isz);
    if (dids_old && dids_new) {
      c_old = c_new = 0;
      CHECK_OK(ctx, ps_row_ids(ctx, sel, 0, N, type, dids_old, 0, N, &c_old));
      CHECK_OK(ctx, ps_selection_row_ids_device(ctx, sel, 0, N, type, dids_new, 0, N, &c_new));
      CHECK(c_old == count && c_new == count);
      CHECK(same_buffers(ctx, dids_old, dids_new));
      CHECK_STATUS(ctx, ps_row_ids(ctx, sel, 2, N, type, NULL, 0, 0, &c_old), PS_ERR_INVALID_ARGUMENT);
      CHECK_STATUS(ctx, ps_selection_row_ids_device(ctx, sel, 2, N, type, NULL, 0, 0, &c_new), PS_ERR_INVALID_ARGUMENT);
    }

    /* values in host memory: ps_gather_host = ps_gather_values */
    int64_t v_old[N], v_new[N];
    uint8_t b_old[(N + 7) / 8], b_new[(N + 7) / 8];
    memset(v_old, 0, sizeof v_old), memset(v_new, 0, sizeof v_new);
    memset(b_old, 0, sizeof b_old), memset(b_new, 0, sizeof b_new);
    CHECK_OK(ctx, ps_gather_host(ctx, col, ids_new, type, count, v_old, b_old));
    CHECK_OK(ctx, ps_gather_values(ctx, col, ids_new, type, count, v_new, b_new));
    CHECK(memcmp(v_old, v_new, sizeof v_old) == 0 && memcmp(b_old, b_new, sizeof b_old) == 0);
    for (uint64_t i = 0; i < count; i++) {
      const uint64_t r = t ? ((uint64_t *)ids_new)[i] : ((uint32_t *)ids_new)[i];
      const int valid = (validity[r / 8] >> (r % 8)) & 1;
      if (!CHECKF(((b_new[i / 8] >> (i % 8)) & 1) == valid && (!valid || v_new[i] == values[r]),
                  "value %llu (row %llu)", ull(i), ull(r)))
        break;
    }
    uint64_t past = N; /* an id past the end: the same status */
    CHECK_STATUS(ctx, ps_gather_host(ctx, col, &past, PS_INDEX_UINT64, 1, v_old, NULL), PS_ERR_INVALID_ARGUMENT);
    CHECK_STATUS(ctx, ps_gather_values(ctx, col, &past, PS_INDEX_UINT64, 1, v_new, NULL), PS_ERR_INVALID_ARGUMENT);

    /* values in device buffers: ps_gather = ps_gather_values_device */
    ps_buffer *dv_old = zeroed(ctx, N * 8), *dv_new = zeroed(ctx, N * 8);
    ps_buffer *db_old = zeroed(ctx, (N + 7) / 8 + 4), *db_new = zeroed(ctx, (N + 7) / 8 + 4);
    if (dids_new && dv_old && dv_new && db_old && db_new) {
      CHECK_OK(ctx, ps_gather(ctx, col, dids_new, 0, type, count, dv_old, 0, db_old, 0));
      CHECK_OK(ctx, ps_gather_values_device(ctx, col, dids_new, 0, type, count, dv_new, 0, db_new, 0));
      CHECK(same_buffers(ctx, dv_old, dv_new) && same_buffers(ctx, db_old, db_new));
      int64_t back[N];
      if (CHECK_OK(ctx, ps_buffer_read(ctx, dv_new, 0, back, count * 8)))
        CHECK(memcmp(back, v_new, (size_t)(count * 8)) == 0);
    }

    /* strings: ps_gather_strings_host = ps_gather_strings */
    int64_t *so_old = NULL, *so_new = NULL;
    uint8_t *sb_old = NULL, *sb_new = NULL;
    CHECK_OK(ctx, ps_gather_strings_host(ctx, scol, ids_new, type, count, &so_old, &sb_old, b_old));
    CHECK_OK(ctx, ps_gather_strings(ctx, scol, ids_new, type, count, &so_new, &sb_new, b_new));
    if (so_old && so_new) {
      CHECK(memcmp(so_old, so_new, (size_t)(count + 1) * sizeof *so_old) == 0);
      CHECK(so_new[count] == 0 || memcmp(sb_old, sb_new, (size_t)so_new[count]) == 0);
      CHECK(memcmp(b_old, b_new, (size_t)(count + 7) / 8) == 0);
    }
    CHECK_STATUS(ctx, ps_gather_strings_host(ctx, col, ids_new, type, count, &so_old, &sb_old, NULL),
                 PS_ERR_TYPE_MISMATCH);
    CHECK_STATUS(ctx, ps_gather_strings(ctx, col, ids_new, type, count, &so_new, &sb_new, NULL), PS_ERR_TYPE_MISMATCH);
    ps_free(ctx, so_old), ps_free(ctx, sb_old), ps_free(ctx, so_new), ps_free(ctx, sb_new);

    ps_buffer_destroy(dids_old), ps_buffer_destroy(dids_new);
    ps_buffer_destroy(dv_old), ps_buffer_destroy(dv_new), ps_buffer_destroy(db_old), ps_buffer_destroy(db_new);
    free(ids_old);
    free(ids_new);
  }

  ps_buffer_destroy(sel);
  ps_expr_destroy(e);
  ps_column_destroy(col);
  ps_column_destroy(scol);
  /* the encoders' results: the old names release them and zero the structs, as the new ones do */
  th_case("destroy");
  ps_encoded_free(&enc);
  ps_encoded_dict_free(&denc);
  CHECK(enc.data == NULL && enc.validity == NULL && enc.desc.n == 0);
  CHECK(denc.offsets == NULL && denc.bytes == NULL && denc.codes.data == NULL);
  ps_encoded_free(NULL);
  ps_encoded_dict_free(NULL);
  ps_context_destroy(ctx);
  return th_finish();
}
