/* packscan_cuda.h's Arrow C Device Data Interface exports: results left in
 * device memory as ArrowDeviceArray (ARROW_DEVICE_CUDA), with a CUDA event in
 * sync_event, so a CUDA consumer takes them without a copy. Built on the
 * public API (ps_filter_device, ps_filter_row_ids_device, ps_gather_values_device over
 * wrapped cudaMalloc memory); only the allocation, the event and the release
 * are CUDA's. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include <cuda_runtime_api.h>

#include "cuda_backend.h"
#include "packscan_cuda.h"

#define ARROW_TRY(expr)                 \
  do {                                  \
    ps_status arrow_try_st_ = (expr);   \
    if (arrow_try_st_ != PS_OK) return arrow_try_st_; \
  } while (0)

/* ---- owned device arrays ----------------------------------------------------- */

typedef struct dev_array {
  void *mem[2];          /* cudaMalloc'd buffers (validity, values) */
  const void *ptrs[2];
  cudaEvent_t event;     /* sync_event points here */
  int device;
} dev_array;

static void dev_release(struct ArrowArray *a) {
  if (!a || !a->release) return;
  dev_array *p = a->private_data;
  int prev = -1;
  (void)cudaGetDevice(&prev);
  (void)cudaSetDevice(p->device);
  for (int i = 0; i < 2; i++)
    if (p->mem[i]) (void)cudaFree(p->mem[i]);
  if (p->event) (void)cudaEventDestroy(p->event);
  if (prev >= 0) (void)cudaSetDevice(prev);
  free(p);
  a->release = NULL;
}

typedef struct host_schema {
  char *format, *name;
} host_schema;

static void schema_release(struct ArrowSchema *s) {
  if (!s || !s->release) return;
  host_schema *p = s->private_data;
  free(p->format);
  free(p->name);
  free(p);
  s->release = NULL;
}

static char *dup_str(const char *s) {
  size_t n = strlen(s);
  char *p = malloc(n + 1);
  if (p) memcpy(p, s, n + 1);
  return p;
}

static bool make_schema(struct ArrowSchema *s, const char *format, const char *name) {
  memset(s, 0, sizeof *s);
  host_schema *p = calloc(1, sizeof *p);
  if (!p) return false;
  p->format = dup_str(format);
  p->name = dup_str(name);
  if (!p->format || !p->name) {
    free(p->format);
    free(p->name);
    free(p);
    return false;
  }
  s->format = p->format;
  s->name = p->name;
  s->flags = ARROW_FLAG_NULLABLE;
  s->private_data = p;
  s->release = schema_release;
  return true;
}

/* An export in the making: the backend, its device made current, buffers. */
typedef struct dev_export {
  ps_context *ctx;
  ps_backend *be;
  int prev_device;
  dev_array *p;
} dev_export;

static ps_status export_begin(ps_context *ctx, const char *fn, dev_export *x) {
  memset(x, 0, sizeof *x);
  x->ctx = ctx;
  x->be = ps_context_backend_state(ctx, "cuda");
  if (!x->be)
    return ps_backend_error(ctx, PS_ERR_INVALID_ARGUMENT, "%s: the context's backend is '%s', not 'cuda'", fn,
                            ps_context_backend(ctx));
  ps_status st = ps_cuda_enter(x->be, &x->prev_device);
  if (st != PS_OK) return st;
  x->p = calloc(1, sizeof *x->p);
  if (!x->p) {
    ps_cuda_leave(x->be, x->prev_device);
    return ps_backend_error(ctx, PS_ERR_OUT_OF_MEMORY, "%s: allocating an array", fn);
  }
  x->p->device = x->be->device;
  return PS_OK;
}

/* Device buffer i of at least `bytes` (never 0: Arrow consumers may read a
 * word of an empty buffer), wrapped for the library's calls. */
static ps_status export_buffer(dev_export *x, int i, uint64_t bytes, ps_buffer **wrapped) {
  bytes = (bytes + 7) / 8 * 8;
  if (bytes == 0) bytes = 8;
  ps_status st = ps_cuda_status(x->ctx, cudaMalloc(&x->p->mem[i], (size_t)bytes), "cudaMalloc (Arrow export)", false);
  if (st != PS_OK) return st;
  x->p->ptrs[i] = x->p->mem[i];
  st = ps_cuda_status(x->ctx, cudaMemsetAsync(x->p->mem[i], 0, (size_t)bytes, x->be->stream),
                      "cudaMemsetAsync (Arrow export)", false);
  if (st != PS_OK) return st;
  return wrapped ? ps_buffer_wrap_cuda(x->ctx, x->p->mem[i], bytes, wrapped) : PS_OK;
}

/* Records the event and fills *out, or undoes everything on failure. */
static ps_status export_end(dev_export *x, ps_status st, int64_t length, int64_t null_count, int n_buffers,
                            struct ArrowSchema *schema_tmp, struct ArrowSchema *schema, struct ArrowDeviceArray *out) {
  if (st == PS_OK)
    st = ps_cuda_status(x->ctx, cudaEventCreateWithFlags(&x->p->event, cudaEventDisableTiming), "cudaEventCreate",
                        false);
  if (st == PS_OK) st = ps_cuda_status(x->ctx, cudaEventRecord(x->p->event, x->be->stream), "cudaEventRecord", false);
  if (st != PS_OK) {
    struct ArrowArray tmp;
    memset(&tmp, 0, sizeof tmp);
    tmp.private_data = x->p;
    tmp.release = dev_release;
    dev_release(&tmp);
    schema_release(schema_tmp);
    ps_cuda_leave(x->be, x->prev_device);
    return st;
  }
  memset(out, 0, sizeof *out);
  out->array.length = length;
  out->array.null_count = null_count;
  out->array.n_buffers = n_buffers;
  out->array.buffers = x->p->ptrs;
  out->array.private_data = x->p;
  out->array.release = dev_release;
  out->device_id = x->be->device;
  out->device_type = ARROW_DEVICE_CUDA;
  out->sync_event = &x->p->event;
  *schema = *schema_tmp;
  ps_cuda_leave(x->be, x->prev_device);
  return PS_OK;
}

static ps_status schema_oom(ps_context *ctx) {
  return ps_backend_error(ctx, PS_ERR_OUT_OF_MEMORY, "allocating an Arrow schema");
}

PS_API ps_status ps_cuda_arrow_export_selection(ps_context *ctx, const ps_expr *expr, struct ArrowSchema *schema,
                                                struct ArrowDeviceArray *out, uint64_t *count) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  if (!schema || !out || !expr)
    return ps_backend_error(ctx, PS_ERR_INVALID_ARGUMENT, "ps_cuda_arrow_export_selection: %s is NULL",
                            !expr ? "expr" : !schema ? "schema" : "out");
  dev_export x;
  ARROW_TRY(export_begin(ctx, "ps_cuda_arrow_export_selection", &x));
  struct ArrowSchema s;
  memset(&s, 0, sizeof s);
  uint64_t n = ps_expr_rows(expr), c = 0;
  ps_buffer *bits = NULL;
  ps_status st = make_schema(&s, "b", "selected") ? PS_OK : schema_oom(ctx);
  if (st == PS_OK) st = export_buffer(&x, 1, (n + 7) / 8, &bits);
  if (st == PS_OK) st = ps_filter_device(ctx, expr, bits, 0, &c);
  ps_buffer_destroy(bits);
  st = export_end(&x, st, (int64_t)n, 0, 2, &s, schema, out);
  if (st == PS_OK && count) *count = c;
  return st;
}

PS_API ps_status ps_cuda_arrow_export_row_ids(ps_context *ctx, const ps_expr *expr, ps_index_type type,
                                              struct ArrowSchema *schema, struct ArrowDeviceArray *out) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  if (!schema || !out || !expr)
    return ps_backend_error(ctx, PS_ERR_INVALID_ARGUMENT, "ps_cuda_arrow_export_row_ids: %s is NULL",
                            !expr ? "expr" : !schema ? "schema" : "out");
  if (type != PS_INDEX_UINT32 && type != PS_INDEX_UINT64)
    return ps_backend_error(ctx, PS_ERR_INVALID_ARGUMENT,
                            "ps_cuda_arrow_export_row_ids: type is %d; expected PS_INDEX_UINT32 or PS_INDEX_UINT64",
                            (int)type);
  uint64_t count = 0;
  ARROW_TRY(ps_filter_count(ctx, expr, &count));
  dev_export x;
  ARROW_TRY(export_begin(ctx, "ps_cuda_arrow_export_row_ids", &x));
  struct ArrowSchema s;
  memset(&s, 0, sizeof s);
  ps_buffer *ids = NULL;
  uint64_t got = 0;
  ps_status st = make_schema(&s, type == PS_INDEX_UINT32 ? "I" : "L", "row_id") ? PS_OK : schema_oom(ctx);
  if (st == PS_OK) st = export_buffer(&x, 1, count * (uint64_t)type, &ids);
  if (st == PS_OK) st = ps_filter_row_ids_device(ctx, expr, type, ids, 0, count, &got);
  ps_buffer_destroy(ids);
  return export_end(&x, st, (int64_t)got, 0, 2, &s, schema, out);
}

PS_API ps_status ps_cuda_arrow_export_column(ps_context *ctx, const ps_arrow_table *table, size_t column,
                                             const ps_expr *expr, struct ArrowSchema *schema,
                                             struct ArrowDeviceArray *out) {
  if (!ctx) return PS_ERR_INVALID_ARGUMENT;
  const ps_arrow_field *f = ps_arrow_table_field(table, column);
  if (!schema || !out || !f)
    return ps_backend_error(ctx, PS_ERR_INVALID_ARGUMENT, "ps_cuda_arrow_export_column: %s",
                            !f ? "no such table column" : !schema ? "schema is NULL" : "out is NULL");
  if (f->type == PS_TYPE_STRING || f->kind == PS_ARROW_DECIMAL128)
    return ps_backend_error(ctx, PS_ERR_UNSUPPORTED,
                            "ps_cuda_arrow_export_column: column %zu (\"%s\") is %s; device export takes "
                            "fixed-width integer, float, date and timestamp columns",
                            column, f->name, f->type == PS_TYPE_STRING ? "a string column" : "a decimal");
  const ps_column *col = ps_arrow_table_column(table, column);
  uint64_t n = ps_arrow_table_rows(table), count = n;
  if (expr) ARROW_TRY(ps_filter_count(ctx, expr, &count));
  dev_export x;
  ARROW_TRY(export_begin(ctx, "ps_cuda_arrow_export_column", &x));
  struct ArrowSchema s;
  memset(&s, 0, sizeof s);
  ps_buffer *ids = NULL, *values = NULL, *validity = NULL;
  void *ids_mem = NULL;
  size_t vs = ps_type_size(f->type);
  ps_status st = make_schema(&s, f->format, f->name) ? PS_OK : schema_oom(ctx);
  if (st == PS_OK) st = export_buffer(&x, 1, count * vs, &values);
  if (st == PS_OK) st = export_buffer(&x, 0, (count + 31) / 32 * 4, &validity);
  if (st == PS_OK)
    st = ps_cuda_status(ctx, cudaMallocAsync(&ids_mem, (size_t)(count ? count : 1) * 8, x.be->stream),
                        "cudaMallocAsync (row ids)", false);
  if (st == PS_OK) st = ps_buffer_wrap_cuda(ctx, ids_mem, (count ? count : 1) * 8, &ids);
  uint64_t got = count;
  if (st == PS_OK && expr) {
    st = ps_filter_row_ids_device(ctx, expr, PS_INDEX_UINT64, ids, 0, count, &got);
  } else if (st == PS_OK) {
    /* Every row: ids 0..n-1, written on the host once (rare: a full export). */
    uint64_t *h = malloc((size_t)(n ? n : 1) * 8);
    if (!h) st = ps_backend_error(ctx, PS_ERR_OUT_OF_MEMORY, "ps_cuda_arrow_export_column: %" PRIu64 " ids", n);
    for (uint64_t i = 0; h && i < n; i++) h[i] = i;
    if (st == PS_OK) st = ps_buffer_write(ctx, ids, 0, h, n * 8);
    free(h);
  }
  if (st == PS_OK) st = ps_gather_values_device(ctx, col, ids, 0, PS_INDEX_UINT64, got, values, 0, validity, 0);
  ps_buffer_destroy(ids);
  ps_buffer_destroy(values);
  ps_buffer_destroy(validity);
  if (ids_mem) (void)cudaFreeAsync(ids_mem, x.be->stream);
  return export_end(&x, st, (int64_t)got, -1, 2, &s, schema, out);
}
