/*
 * device_buffers: ps_buffer create / write / read / size; FOR and dictionary
 * columns over ps_buffers at nonzero offsets (used in place: rewriting the
 * buffer changes the result, so no copy was taken); ps_filter_device into a
 * ps_buffer at an offset (bytes around it untouched); and, when compiled in,
 * caller-owned memory: a cl_mem wrapped with ps_buffer_wrap_opencl and a
 * cudaMalloc'd pointer wrapped with ps_buffer_wrap_cuda; a device allocation
 * failure (status, message, context still usable).
 */
#include <stdlib.h>
#include <string.h>

#ifdef PACKSCAN_HAVE_OPENCL
#include <CL/cl.h>

#include "packscan_opencl.h"
#endif
#ifdef PACKSCAN_HAVE_CUDA
#include <cuda_runtime_api.h>

#include "packscan_cuda.h"
#endif

#include "oracle.h"

static ps_context *ctx;

/* A FOR column with codes uniform over the whole width and reference m (the
 * caller picks m so that every code is valid), optional ~10% nulls. Two of
 * these with the same m and validity differ only in their codes. */
static tcol *full_width_column(ps_type type, uint64_t n, uint32_t w, ps_reference m, const uint8_t *validity) {
  uint64_t *codes = th_calloc(n, sizeof *codes);
  for (uint64_t i = 0; i < n; i++) codes[i] = th_u64(&th.rng) & tcol_width_max(w);
  tcol *c = tcol_for(type, n, w, 0, m, codes, validity, &th.rng);
  free(codes);
  return c;
}

/* Evaluates t (built over handle h of column c, index 0) on ctx and compares
 * with the oracle; returns the count. */
static uint64_t check_filter(ps_column *h, tcol *c, const onode *t, const char *label) {
  tcol *cols[1] = {c};
  ps_column *hs[1] = {h};
  uint64_t n = c->n, nb = (n + 7) / 8;
  uint8_t *want = th_calloc(nb + 1, 1);
  uint64_t want_count = oracle_filter(cols, t, n, want);
  ps_expr *e = NULL;
  if (!CHECK_OK(ctx, on_build(ctx, t, hs, &e))) {
    free(want);
    return 0;
  }
  uint8_t *got = th_malloc(nb + 4);
  memset(got, 0xAB, nb + 4);
  uint64_t count = 0;
  if (CHECK_OK(ctx, ps_filter(ctx, e, got, nb, &count))) {
    CHECKF(memcmp(got, want, nb) == 0, "%s: bitmap differs from the oracle", label);
    CHECKF(count == want_count, "%s: count %llu, oracle %llu", label, (unsigned long long)count,
           (unsigned long long)want_count);
  }
  free(got);
  ps_expr_destroy(e);
  free(want);
  return want_count;
}

/* ps_filter_device into buf at off; bytes outside [off, off + ceil(n/8)) must
 * keep the 0xAB fill; the bitmap must equal the oracle's. */
static void check_filter_device(ps_buffer *buf, uint64_t off, ps_column *h, tcol *c, const onode *t,
                                const char *label) {
  tcol *cols[1] = {c};
  ps_column *hs[1] = {h};
  uint64_t n = c->n, nb = (n + 7) / 8, size = ps_buffer_size(buf);
  uint8_t *want = th_calloc(nb + 1, 1);
  uint64_t want_count = oracle_filter(cols, t, n, want);
  uint8_t *fill = th_malloc(size);
  memset(fill, 0xAB, size);
  CHECK_OK(ctx, ps_buffer_write(ctx, buf, 0, fill, size));
  ps_expr *e = NULL;
  if (CHECK_OK(ctx, on_build(ctx, t, hs, &e))) {
    uint64_t count = 0;
    if (CHECK_OK(ctx, ps_filter_device(ctx, e, buf, off, &count))) {
      uint8_t *got = th_malloc(size);
      CHECK_OK(ctx, ps_buffer_read(ctx, buf, 0, got, size));
      CHECKF(memcmp(got + off, want, nb) == 0, "%s: device bitmap differs from the oracle", label);
      CHECKF(count == want_count, "%s: count %llu, oracle %llu", label, (unsigned long long)count,
             (unsigned long long)want_count);
      int guard = 1;
      for (uint64_t i = 0; i < size; i++)
        if (i < off || i >= off + nb) guard &= got[i] == 0xAB;
      CHECKF(guard, "%s: ps_filter_device wrote outside its bitmap", label);
      free(got);
    }
    ps_expr_destroy(e);
  }
  free(fill);
  free(want);
}

static void buffers(void) {
  th_case("ps_buffer basics");
  ps_buffer *b = NULL;
  if (!CHECK_OK(ctx, ps_buffer_create(ctx, 1000, &b))) return;
  CHECK(ps_buffer_size(b) == 1000);
  uint8_t src[1000], dst[1000];
  for (int i = 0; i < 1000; i++) src[i] = (uint8_t)(i * 7 + 3);
  CHECK_OK(ctx, ps_buffer_write(ctx, b, 0, src, 1000));
  memset(dst, 0, sizeof dst);
  CHECK_OK(ctx, ps_buffer_read(ctx, b, 0, dst, 1000));
  CHECK(memcmp(src, dst, 1000) == 0);
  uint8_t patch[50];
  memset(patch, 0x5C, sizeof patch);
  CHECK_OK(ctx, ps_buffer_write(ctx, b, 100, patch, 50));
  memset(dst, 0, sizeof dst);
  CHECK_OK(ctx, ps_buffer_read(ctx, b, 90, dst, 70));
  CHECK(memcmp(dst, src + 90, 10) == 0);
  CHECK(memcmp(dst + 10, patch, 50) == 0);
  CHECK(memcmp(dst + 60, src + 150, 10) == 0);
  CHECK_OK(ctx, ps_buffer_read(ctx, b, 999, dst, 1));
  CHECK(dst[0] == src[999]);
  CHECK_OK(ctx, ps_buffer_write(ctx, b, 1000, src, 0)); /* empty write at the end */
  ps_buffer_destroy(b);
  th_case("%s", "");
}

/* A FOR column in two ps_buffers at offsets; rewriting the data buffer
 * changes the result (the column reads it in place). */
static void for_column_in_buffers(uint64_t data_off, uint64_t valid_off) {
  th_case("FOR column in ps_buffers at offsets %llu / %llu", (unsigned long long)data_off,
          (unsigned long long)valid_off);
  th_rng *r = &th.rng;
  const uint64_t n = 1000;
  uint8_t *validity = tcol_random_validity(r, n, TN_FEW);
  ps_reference m = {.i = -5000};
  tcol *c = full_width_column(PS_TYPE_INT32, n, 13, m, validity);
  tcol *c2 = full_width_column(PS_TYPE_INT32, n, 13, m, validity); /* other codes, same metadata */
  free(validity);
  /* All of c2's codes 0 (every value below mid): the rewrite then changes
   * the count for sure (random codes could select as many rows by chance). */
  memset(c2->data, 0, (size_t)c2->data_size);
  ps_buffer *data = NULL, *valid = NULL, *out = NULL;
  ps_column *h = NULL;
  if (!CHECK_OK(ctx, ps_buffer_create(ctx, data_off + c->data_size + 16, &data)) ||
      !CHECK_OK(ctx, ps_buffer_create(ctx, valid_off + (n + 7) / 8 + 4, &valid)))
    goto done;
  /* garbage around the column's bytes */
  uint8_t junk[4096];
  for (size_t i = 0; i < sizeof junk; i++) junk[i] = (uint8_t)(0x5A ^ i);
  CHECK_OK(ctx, ps_buffer_write(ctx, data, 0, junk, data_off));
  CHECK_OK(ctx, ps_buffer_write(ctx, data, data_off, c->data, c->data_size));
  CHECK_OK(ctx, ps_buffer_write(ctx, data, data_off + c->data_size, junk, 16));
  CHECK_OK(ctx, ps_buffer_write(ctx, valid, 0, junk, valid_off));
  CHECK_OK(ctx, ps_buffer_write(ctx, valid, valid_off, c->validity, (n + 7) / 8));
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = c->type;
  d.n = n;
  d.width = c->width;
  d.reference = c->ref;
  d.data_size = c->data_size;
  d.validity_size = (n + 7) / 8;
  if (!CHECK_OK(ctx, ps_column_create_for_device(ctx, &d, data, data_off, valid, valid_off, &h))) goto done;
  CHECK(ps_column_rows(h) == n && ps_column_width(h) == 13 && ps_column_type(h) == PS_TYPE_INT32);
  int64_t mid = c->ref.i + 4000; /* about half the rows */
  onode *t = on_cmp(0, PS_LT, ps_lit_int(mid));
  onode *t2 = on_or(on_isnull(0, 0), on_cmp(0, PS_GE, ps_lit_int(mid + 7)));
  uint64_t before = check_filter(h, c, t, "device column");
  check_filter(h, c, t2, "device column, tree");
  /* rewrite the data in place: the column must see the new codes */
  CHECK_OK(ctx, ps_buffer_write(ctx, data, data_off, c2->data, c2->data_size));
  uint64_t after = check_filter(h, c2, t, "device column after rewriting its buffer");
  check_filter(h, c2, t2, "device column after rewriting its buffer, tree");
  CHECKF(before != after, "test bug: the rewrite did not change the count (%llu)", (unsigned long long)before);
  /* into a device bitmap at offset 12 */
  if (CHECK_OK(ctx, ps_buffer_create(ctx, 12 + (n + 7) / 8 + 20, &out))) {
    check_filter_device(out, 12, h, c2, t, "ps_filter_device at offset 12");
    check_filter_device(out, 0, h, c2, t2, "ps_filter_device at offset 0");
  }
  on_free(t);
  on_free(t2);
done:
  ps_column_destroy(h);
  ps_buffer_destroy(out);
  ps_buffer_destroy(data);
  ps_buffer_destroy(valid);
  tcol_free(c);
  tcol_free(c2);
  th_case("%s", "");
}

static void dict_column_in_buffer(void) {
  th_case("dictionary column with codes in a ps_buffer");
  const uint64_t n = 777;
  tcol *c = tcol_random_dict(&th.rng, n, 9, 40, 0, TN_HALF);
  ps_buffer *data = NULL, *valid = NULL;
  ps_column *h = NULL;
  if (!CHECK_OK(ctx, ps_buffer_create(ctx, 64 + c->data_size, &data)) ||
      !CHECK_OK(ctx, ps_buffer_create(ctx, 8 + (n + 7) / 8, &valid)))
    goto done;
  CHECK_OK(ctx, ps_buffer_write(ctx, data, 64, c->data, c->data_size));
  CHECK_OK(ctx, ps_buffer_write(ctx, valid, 8, c->validity, (n + 7) / 8));
  ps_dict_desc dd;
  tcol_dict_desc(c, &dd);
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = c->code_type;
  d.n = n;
  d.width = c->width;
  d.reference = c->ref;
  d.data_size = c->data_size;
  d.validity_size = (n + 7) / 8;
  if (!CHECK_OK(ctx, ps_column_create_dict_device(ctx, &dd, &d, data, 64, valid, 8, &h))) goto done;
  CHECK(ps_column_type(h) == PS_TYPE_STRING && ps_column_rows(h) == n);
  onode *t = on_like(0, "%a%", 3, -1, 0);
  check_filter(h, c, t, "device dictionary column LIKE");
  on_free(t);
  t = on_cmp(0, PS_GE, ps_lit_str("b", 1));
  check_filter(h, c, t, "device dictionary column >= 'b'");
  on_free(t);
done:
  ps_column_destroy(h);
  ps_buffer_destroy(data);
  ps_buffer_destroy(valid);
  tcol_free(c);
  th_case("%s", "");
}

#ifdef PACKSCAN_HAVE_OPENCL
static void opencl_wrapped(void) {
  th_case("caller-owned cl_mem");
  cl_context clctx = NULL;
  cl_device_id dev = NULL;
  cl_command_queue q = NULL;
  if (strcmp(ps_context_backend(ctx), "opencl") != 0) {
    CHECK_STATUS(ctx, ps_opencl_handles(ctx, &clctx, &dev, &q), PS_ERR_INVALID_ARGUMENT);
    return;
  }
  if (!CHECK_OK(ctx, ps_opencl_handles(ctx, &clctx, &dev, &q))) return;
  CHECK(clctx && dev && q);
  const uint64_t n = 2049;
  ps_reference m = {.u = 60000};
  tcol *c = full_width_column(PS_TYPE_UINT16, n, 11, m, NULL);
  tcol *c2 = full_width_column(PS_TYPE_UINT16, n, 11, m, NULL);
  memset(c2->data, 0, (size_t)c2->data_size); /* all codes 0: the count must change */
  cl_int err = 0;
  cl_mem mem = clCreateBuffer(clctx, CL_MEM_READ_WRITE, c->data_size + 64, NULL, &err);
  cl_mem bits = clCreateBuffer(clctx, CL_MEM_READ_WRITE, 1024, NULL, &err);
  if (!CHECKF(err == CL_SUCCESS && mem && bits, "clCreateBuffer: %d", err)) return;
  CHECK(clEnqueueWriteBuffer(q, mem, CL_TRUE, 0, c->data_size, c->data, 0, NULL, NULL) == CL_SUCCESS);
  ps_buffer *wb = NULL, *wbits = NULL;
  ps_column *h = NULL;
  if (!CHECK_OK(ctx, ps_buffer_wrap_opencl(ctx, mem, c->data_size + 64, &wb))) goto done;
  cl_mem back = NULL;
  CHECK_OK(ctx, ps_buffer_opencl_mem(wb, &back));
  CHECK(back == mem);
  CHECK(ps_buffer_size(wb) == c->data_size + 64);
  /* the wrapped buffer retains the cl_mem: dropping our reference is fine */
  clReleaseMemObject(mem);
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = c->type;
  d.n = n;
  d.width = c->width;
  d.reference = c->ref;
  d.data_size = c->data_size;
  if (!CHECK_OK(ctx, ps_column_create_for_device(ctx, &d, wb, 0, NULL, 0, &h))) goto done;
  onode *t = on_cmp(0, PS_LE, ps_lit_uint(c->ref.u + 1000)); /* about half the rows */
  uint64_t before = check_filter(h, c, t, "wrapped cl_mem");
  /* the caller rewrites its cl_mem: packscan reads the new codes (no copy) */
  CHECK(clEnqueueWriteBuffer(q, back, CL_TRUE, 0, c2->data_size, c2->data, 0, NULL, NULL) == CL_SUCCESS);
  uint64_t after = check_filter(h, c2, t, "wrapped cl_mem after the caller rewrote it");
  CHECKF(before != after, "test bug: rewrite did not change the count");
  /* the bitmap into a wrapped cl_mem, read back with OpenCL */
  if (CHECK_OK(ctx, ps_buffer_wrap_opencl(ctx, bits, 1024, &wbits))) {
    check_filter_device(wbits, 16, h, c2, t, "ps_filter_device into a wrapped cl_mem");
    uint8_t host[1024];
    CHECK(clEnqueueReadBuffer(q, bits, CL_TRUE, 0, 1024, host, 0, NULL, NULL) == CL_SUCCESS);
    tcol *cols[1] = {c2};
    uint8_t want[(2049 + 7) / 8 + 1];
    oracle_filter(cols, t, n, want);
    CHECKF(memcmp(host + 16, want, (n + 7) / 8) == 0, "bitmap read with clEnqueueReadBuffer differs");
  }
  on_free(t);
done:
  ps_column_destroy(h);
  ps_buffer_destroy(wb);
  ps_buffer_destroy(wbits);
  clReleaseMemObject(bits);
  tcol_free(c);
  tcol_free(c2);
  th_case("%s", "");
}
#endif

#ifdef PACKSCAN_HAVE_CUDA
static void cuda_wrapped(void) {
  th_case("caller-owned CUDA memory");
  void *p = NULL;
  if (strcmp(ps_context_backend(ctx), "cuda") != 0) {
    ps_buffer *wb = NULL;
    CHECK_STATUS(ctx, ps_buffer_wrap_cuda(ctx, (void *)&p, 16, &wb), PS_ERR_INVALID_ARGUMENT);
    CHECK(wb == NULL);
    return;
  }
  const uint64_t n = 5000;
  ps_reference m = {.i = INT64_MIN + 12345};
  tcol *c = full_width_column(PS_TYPE_INT64, n, 37, m, NULL);
  tcol *c2 = full_width_column(PS_TYPE_INT64, n, 37, m, NULL);
  memset(c2->data, 0, (size_t)c2->data_size); /* all codes 0: the count must change */
  void *bits = NULL;
  ps_buffer *wb = NULL, *wbits = NULL;
  ps_column *h = NULL;
  if (!CHECKF(cudaMalloc(&p, c->data_size) == cudaSuccess && cudaMalloc(&bits, 1024) == cudaSuccess,
              "cudaMalloc failed"))
    goto done;
  /* From pageable host memory cudaMemcpy may return before its copy has
   * landed, and the context's own stream does not wait for the legacy
   * default stream (packscan_cuda.h): the caller finishes its writes first.
   * Without this the rewrite below raced the filter (run 17 on the H200:
   * count 461 against 0, once). */
  CHECK(cudaMemcpy(p, c->data, c->data_size, cudaMemcpyHostToDevice) == cudaSuccess);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  if (!CHECK_OK(ctx, ps_buffer_wrap_cuda(ctx, p, c->data_size, &wb))) goto done;
  void *back = NULL;
  CHECK_OK(ctx, ps_buffer_cuda_ptr(wb, &back));
  CHECK(back == p);
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = c->type;
  d.n = n;
  d.width = c->width;
  d.reference = c->ref;
  d.data_size = c->data_size;
  if (!CHECK_OK(ctx, ps_column_create_for_device(ctx, &d, wb, 0, NULL, 0, &h))) goto done;
  onode *t = on_cmp(0, PS_GT, ps_lit_int(c->ref.i + ((int64_t)1 << 36))); /* about half */
  uint64_t before = check_filter(h, c, t, "wrapped CUDA pointer");
  CHECK(cudaMemcpy(p, c2->data, c2->data_size, cudaMemcpyHostToDevice) == cudaSuccess);
  CHECK(cudaDeviceSynchronize() == cudaSuccess);
  uint64_t after = check_filter(h, c2, t, "wrapped CUDA pointer after the caller rewrote it");
  CHECKF(before != after, "test bug: rewrite did not change the count");
  if (CHECK_OK(ctx, ps_buffer_wrap_cuda(ctx, bits, 1024, &wbits))) {
    check_filter_device(wbits, 20, h, c2, t, "ps_filter_device into wrapped CUDA memory");
    uint8_t host[1024];
    CHECK(cudaMemcpy(host, bits, 1024, cudaMemcpyDeviceToHost) == cudaSuccess);
    tcol *cols[1] = {c2};
    uint8_t want[(5000 + 7) / 8 + 1];
    oracle_filter(cols, t, n, want);
    CHECKF(memcmp(host + 20, want, (n + 7) / 8) == 0, "bitmap read with cudaMemcpy differs");
  }
  on_free(t);
done:
  ps_column_destroy(h);
  ps_buffer_destroy(wb);
  ps_buffer_destroy(wbits);
  cudaFree(p);
  cudaFree(bits);
  tcol_free(c);
  tcol_free(c2);
  th_case("%s", "");
}
#endif

/* A device allocation that cannot succeed: its status and message, the
 * out-parameter untouched, and the context still usable. */
static void allocation_failure(void) {
  th_case("device allocation failure");
  static int sentinel;
  ps_buffer *b = (ps_buffer *)&sentinel;
  ps_status st = ps_buffer_create(ctx, (uint64_t)1 << 60, &b);
  CHECKF(st == PS_ERR_DEVICE_OUT_OF_MEMORY, "2^60-byte buffer: %s, expected PS_ERR_DEVICE_OUT_OF_MEMORY (%s)",
         ps_status_name(st), ps_context_last_error(ctx));
  CHECKF(ps_context_last_error(ctx)[0] != 0, "no message for a failed allocation");
  CHECKF(b == (ps_buffer *)&sentinel, "out-parameter written by a failed ps_buffer_create");
  /* still usable */
  ps_buffer *ok = NULL;
  if (CHECK_OK(ctx, ps_buffer_create(ctx, 64, &ok))) {
    uint8_t x[64], y[64];
    for (int i = 0; i < 64; i++) x[i] = (uint8_t)i;
    CHECK_OK(ctx, ps_buffer_write(ctx, ok, 0, x, 64));
    CHECK_OK(ctx, ps_buffer_read(ctx, ok, 0, y, 64));
    CHECK(memcmp(x, y, 64) == 0);
    ps_buffer_destroy(ok);
  }
  th_case("%s", "");
}

int main(int argc, char **argv) {
  th_init(argc, argv, "device_buffers");
  ctx = th_context(0);
  buffers();
  allocation_failure();
  for_column_in_buffers(256, 4);
  for_column_in_buffers(4, 128);
  for_column_in_buffers(0, 0);
  dict_column_in_buffer();
#ifdef PACKSCAN_HAVE_OPENCL
  opencl_wrapped();
#endif
#ifdef PACKSCAN_HAVE_CUDA
  cuda_wrapped();
#endif
  ps_context_destroy(ctx);
  return th_finish();
}
