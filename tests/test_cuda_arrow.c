/*
 * cuda_arrow: the Arrow C Device Data Interface exports of packscan_cuda.h on
 * a CUDA device. Each ArrowDeviceArray (ARROW_DEVICE_CUDA, the context's
 * device, a cudaEvent_t * in sync_event) is waited on, read back with
 * cudaMemcpy and compared byte for byte with the host export of the same
 * result (include/packscan_arrow.h): selections, uint32/uint64 row ids, and
 * the selected values with validity of int32 (with nulls), float64 (with a
 * scale), date32 and timestamp columns; n = 0, 1, 33, 1000 and 100003;
 * refusals (string and decimal columns, another backend's context).
 */
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "harness.h"
#include "packscan_cuda.h"

typedef struct owned {
  void *bufs[3];
  const void *ptrs[3];
} owned;

static void arr_release(struct ArrowArray *a) {
  owned *o = a->private_data;
  for (int i = 0; i < 3; i++) free(o->bufs[i]);
  free(o);
  a->release = NULL;
}

static void sch_release(struct ArrowSchema *s) { s->release = NULL; }

/* A fixed-width array of n values (vs bytes each) with an optional validity. */
static void make_array(struct ArrowArray *a, int64_t n, void *values, uint8_t *validity, int64_t nulls) {
  owned *o = th_calloc(1, sizeof *o);
  o->bufs[0] = validity, o->bufs[1] = values;
  o->ptrs[0] = validity, o->ptrs[1] = values;
  memset(a, 0, sizeof *a);
  a->length = n;
  a->null_count = nulls;
  a->n_buffers = 2;
  a->buffers = o->ptrs;
  a->private_data = o;
  a->release = arr_release;
}

static void make_schema(struct ArrowSchema *s, const char *format) {
  memset(s, 0, sizeof *s);
  s->format = format;
  s->name = format;
  s->release = sch_release;
}

/* The device array's buffer `i` (bytes of it) copied to the host, after its event. */
static uint8_t *read_back(const struct ArrowDeviceArray *d, int i, size_t bytes) {
  uint8_t *h = th_calloc(bytes + 1, 1);
  CHECK(d->device_type == ARROW_DEVICE_CUDA && d->sync_event != NULL);
  CHECK(cudaEventSynchronize(*(cudaEvent_t *)d->sync_event) == cudaSuccess);
  if (bytes) CHECK(cudaMemcpy(h, d->array.buffers[i], bytes, cudaMemcpyDeviceToHost) == cudaSuccess);
  return h;
}

static int bit(const uint8_t *b, uint64_t i) { return (b[i / 8] >> (i % 8)) & 1; }

static void one_column(ps_context *ctx, const char *format, size_t vs, uint64_t n) {
  th_case("format %s n=%llu", format, (unsigned long long)n);
  uint8_t *values = th_calloc((size_t)n + 1, vs);
  uint8_t *validity = th_calloc((size_t)n / 8 + 1, 1);
  int64_t nulls = 0;
  int with_nulls = !strcmp(format, "i");
  for (uint64_t i = 0; i < n; i++) {
    uint64_t r = th_u64(&th.rng);
    if (!strcmp(format, "g")) {
      double v = (double)(int64_t)(r % 200000 - 100000) / 100;
      memcpy(values + i * vs, &v, 8);
    } else if (vs == 4) {
      int32_t v = (int32_t)(r % 100000) - 50000;
      memcpy(values + i * 4, &v, 4);
    } else {
      int64_t v = (int64_t)(r >> 8) - (1ll << 54);
      memcpy(values + i * 8, &v, 8);
    }
    if (!with_nulls || r % 5) validity[i / 8] |= (uint8_t)(1u << (i % 8));
    else nulls++;
  }
  struct ArrowSchema s;
  struct ArrowArray a;
  make_schema(&s, format);
  make_array(&a, (int64_t)n, values, with_nulls ? validity : NULL, nulls);
  if (!with_nulls) free(validity);
  ps_arrow_table *t = NULL;
  if (!CHECK_OK(ctx, ps_arrow_import(ctx, &s, &a, NULL, &t))) goto out;
  ps_column *col = ps_arrow_table_column(t, 0);
  ps_expr *e = NULL;
  ps_literal pivot = !strcmp(format, "g") ? ps_lit_float(12.5) : ps_lit_int(vs == 4 ? 1000 : 0);
  if (!CHECK_OK(ctx, ps_expr_compare(ctx, col, PS_GE, pivot, &e))) goto out;

  /* Selection. */
  struct ArrowSchema hs, ds;
  struct ArrowArray ha;
  struct ArrowDeviceArray da;
  uint64_t hc = 0, dc = 0;
  if (CHECK_OK(ctx, ps_arrow_export_selection(ctx, e, &hs, &ha, &hc)) &&
      CHECK_OK(ctx, ps_cuda_arrow_export_selection(ctx, e, &ds, &da, &dc))) {
    int dev = -1;
    cudaGetDevice(&dev);
    CHECK(da.device_id == dev && !strcmp(ds.format, "b") && da.array.length == (int64_t)n && hc == dc);
    uint8_t *h = read_back(&da, 1, (size_t)(n + 7) / 8);
    CHECK(memcmp(h, ha.buffers[1], (size_t)(n + 7) / 8) == 0);
    free(h);
    hs.release(&hs), ha.release(&ha), ds.release(&ds), da.array.release(&da.array);
    CHECK(da.array.release == NULL);
  }
  /* Row ids, both widths. */
  for (int w = 4; w <= 8; w += 4) {
    ps_index_type it = w == 4 ? PS_INDEX_UINT32 : PS_INDEX_UINT64;
    if (!CHECK_OK(ctx, ps_arrow_export_row_ids(ctx, e, it, &hs, &ha)) ||
        !CHECK_OK(ctx, ps_cuda_arrow_export_row_ids(ctx, e, it, &ds, &da)))
      continue;
    CHECK(da.array.length == ha.length && !strcmp(ds.format, hs.format));
    uint8_t *h = read_back(&da, 1, (size_t)ha.length * (size_t)w);
    CHECK(memcmp(h, ha.buffers[1], (size_t)ha.length * (size_t)w) == 0);
    free(h);
    hs.release(&hs), ha.release(&ha), ds.release(&ds), da.array.release(&da.array);
  }
  /* The selected values (and every value), with validity. */
  for (int all = 0; all < 2; all++) {
    const ps_expr *sel = all ? NULL : e;
    if (!CHECK_OK(ctx, ps_arrow_export_filter(ctx, t, sel, 0, &hs, &ha)) ||
        !CHECK_OK(ctx, ps_cuda_arrow_export_column(ctx, t, 0, sel, &ds, &da)))
      continue;
    const struct ArrowArray *hc0 = ha.children[0];
    uint64_t m = (uint64_t)hc0->length;
    CHECK(da.array.length == (int64_t)m && !strcmp(ds.format, format));
    uint8_t *hv = read_back(&da, 1, (size_t)m * vs);
    uint8_t *hb = read_back(&da, 0, (size_t)(m + 7) / 8);
    for (uint64_t i = 0; i < m; i++) {
      int valid = !hc0->buffers[0] || bit(hc0->buffers[0], i);
      if (!CHECKF(bit(hb, i) == valid, "row %llu validity", (unsigned long long)i)) break;
      if (valid && !CHECKF(memcmp(hv + i * vs, (const uint8_t *)hc0->buffers[1] + i * vs, vs) == 0,
                           "row %llu value", (unsigned long long)i))
        break;
    }
    free(hv);
    free(hb);
    hs.release(&hs), ha.release(&ha), ds.release(&ds), da.array.release(&da.array);
  }
  ps_expr_destroy(e);
out:
  ps_arrow_table_destroy(t);
  s.release(&s);
  a.release(&a);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "cuda_arrow");
  ps_context *ctx = th_context(0);
  static const uint64_t sizes[] = {0, 1, 33, 1000, 100003};
  for (size_t i = 0; i < sizeof sizes / sizeof sizes[0]; i++) {
    one_column(ctx, "i", 4, sizes[i]);
    one_column(ctx, "g", 8, sizes[i]);
    one_column(ctx, "tdD", 4, sizes[i]);
    one_column(ctx, "tsn:", 8, sizes[i]);
  }
  /* Refusals: strings and decimals stay on the host; other backends have no device export. */
  th_case("refusals");
  {
    int32_t *offs = th_calloc(3, 4);
    char *chars = th_malloc(2);
    offs[1] = 1, offs[2] = 2, chars[0] = 'a', chars[1] = 'b';
    owned *o = th_calloc(1, sizeof *o);
    o->bufs[1] = offs, o->bufs[2] = chars, o->ptrs[1] = offs, o->ptrs[2] = chars;
    struct ArrowArray a = {2, 0, 0, 3, 0, o->ptrs, NULL, NULL, arr_release, o};
    struct ArrowSchema s;
    make_schema(&s, "u");
    ps_arrow_table *t = NULL;
    struct ArrowSchema ds;
    struct ArrowDeviceArray da;
    if (CHECK_OK(ctx, ps_arrow_import(ctx, &s, &a, NULL, &t)))
      CHECK_STATUS(ctx, ps_cuda_arrow_export_column(ctx, t, 0, NULL, &ds, &da), PS_ERR_UNSUPPORTED);
    ps_arrow_table_destroy(t);
    a.release(&a);
    ps_context *ref = th_reference_context(0);
    uint64_t *v = th_calloc(4, 8);
    struct ArrowArray b;
    make_array(&b, 4, v, NULL, 0);
    make_schema(&s, "L");
    if (CHECK_OK(ref, ps_arrow_import(ref, &s, &b, NULL, &t))) {
      ps_expr *e = NULL;
      CHECK_OK(ref, ps_expr_is_null(ref, ps_arrow_table_column(t, 0), 1, &e));
      CHECK_STATUS(ref, ps_cuda_arrow_export_row_ids(ref, e, PS_INDEX_UINT64, &ds, &da), PS_ERR_INVALID_ARGUMENT);
      CHECK(strstr(ps_context_last_error(ref), "not 'cuda'") != NULL);
      ps_expr_destroy(e);
    }
    ps_arrow_table_destroy(t);
    b.release(&b);
    ps_context_destroy(ref);
  }
  ps_context_destroy(ctx);
  return th_finish();
}
