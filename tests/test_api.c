/*
 * api: version, the backend list, "auto" picking the best usable backend and
 * reporting its name, ps_context_options defaults and struct_size, the
 * pluggable allocator, names of types and operators, destroy(NULL), and one
 * end-to-end filter on the backend under test.
 */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"

/* The function that programs built against 0.1's header call (the header's
 * ps_context_options_init is now a macro over ps_context_options_init_sized). */
PS_API void(ps_context_options_init)(ps_context_options *opts);

typedef struct counting {
  unsigned long allocs, frees;
} counting;

static void *count_alloc(void *opaque, size_t size) {
  counting *c = opaque;
  c->allocs++;
  return malloc(size ? size : 1);
}

static void count_free(void *opaque, void *ptr) {
  counting *c = opaque;
  if (ptr) c->frees++;
  free(ptr);
}

/* Creates a column of 0..n-1 (int32, width 32) and checks x < n/2. */
static void small_filter(ps_context *ctx, const char *what) {
  enum { N = 100 };
  int32_t v[N];
  for (int i = 0; i < N; i++) v[i] = i;
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = PS_TYPE_INT32;
  d.n = N;
  d.width = 32;
  d.data = v;
  d.data_size = sizeof v;
  ps_column *col = NULL;
  if (!CHECK_OK(ctx, ps_column_create_for(ctx, &d, &col))) return;
  CHECKF(ps_column_rows(col) == N, "%s: rows", what);
  CHECKF(ps_column_type(col) == PS_TYPE_INT32, "%s: type", what);
  CHECKF(ps_column_width(col) == 32, "%s: width", what);
  ps_expr *e = NULL;
  if (CHECK_OK(ctx, ps_expr_compare(ctx, col, PS_LT, ps_lit_int(N / 2), &e))) {
    CHECK(ps_expr_rows(e) == N);
    uint8_t bm[(N + 7) / 8];
    uint64_t count = 0;
    if (CHECK_OK(ctx, ps_filter(ctx, e, bm, sizeof bm, &count))) {
      CHECKF(count == N / 2, "%s: count %llu", what, (unsigned long long)count);
      for (int i = 0; i < N; i++)
        CHECKF(((bm[i / 8] >> (i % 8)) & 1) == (i < N / 2), "%s: row %d", what, i);
      CHECKF(strcmp(ps_context_last_error(ctx), "") == 0, "%s: last error after success: \"%s\"", what,
             ps_context_last_error(ctx));
    }
    ps_expr_destroy(e);
  }
  ps_column_destroy(col);
}

static int try_backend(const char *name) {
  ps_context_options o;
  th_options(&o, name, 0);
  ps_context *ctx = NULL;
  ps_status st = ps_context_create(&o, NULL, 0, &ctx);
  ps_context_destroy(ctx);
  return st == PS_OK;
}

int main(int argc, char **argv) {
  th_init(argc, argv, "api");

  /* version */
  char want[64];
  snprintf(want, sizeof want, "%d.%d.%d", PS_VERSION_MAJOR, PS_VERSION_MINOR, PS_VERSION_PATCH);
  CHECKF(strcmp(ps_version_string(), want) == 0, "version \"%s\", header says \"%s\"", ps_version_string(), want);
  CHECK(ps_version_number() == PS_VERSION_NUMBER);

  /* the backend list: exactly the compiled-in backends */
  size_t nb = ps_backend_count();
  int has_ref = 0, has_cl = 0, has_cuda = 0;
  for (size_t i = 0; i < nb; i++) {
    const char *n = ps_backend_name(i);
    if (!CHECKF(n != NULL, "ps_backend_name(%zu) is NULL", i)) continue;
    has_ref += strcmp(n, "reference") == 0;
    has_cl += strcmp(n, "opencl") == 0;
    has_cuda += strcmp(n, "cuda") == 0;
    CHECKF(strcmp(n, "auto") != 0, "\"auto\" listed as a backend");
  }
  CHECK(has_ref == 1);
#ifdef PACKSCAN_HAVE_OPENCL
  CHECK(has_cl == 1);
#else
  CHECK(has_cl == 0);
#endif
#ifdef PACKSCAN_HAVE_CUDA
  CHECK(has_cuda == 1);
#else
  CHECK(has_cuda == 0);
#endif
  CHECKF(nb == (size_t)(has_ref + has_cl + has_cuda), "%zu backends listed", nb);
  CHECK(ps_backend_name(nb) == NULL);

  /* options defaults */
  ps_context_options o;
  memset(&o, 0x5A, sizeof o);
  ps_context_options_init(&o);
  CHECK(o.struct_size == sizeof(ps_context_options));
  CHECK(o.backend == NULL || strcmp(o.backend, "auto") == 0);
  CHECK(o.opencl_platform == -1);
  CHECK(o.opencl_device == -1);
  CHECK(o.cuda_device == -1);
  CHECK(o.allocator.alloc == NULL && o.allocator.free == NULL);
  CHECK(o.max_chunk_rows == 0);

  /* the backend under test reports its own name */
  ps_context *ctx = th_context(0);
  CHECKF(strcmp(ps_context_backend(ctx), th.backend) == 0, "context reports backend \"%s\"", ps_context_backend(ctx));
  CHECK(ps_context_device(ctx) != NULL && ps_context_device(ctx)[0] != 0);
  CHECK(ps_context_last_error(ctx) != NULL && ps_context_last_error(ctx)[0] == 0);
  small_filter(ctx, th.backend);

  /* "auto": the first of cuda, opencl, reference that has a usable device */
  const char *expect_auto = try_backend("cuda") ? "cuda" : try_backend("opencl") ? "opencl" : "reference";
  ps_context *a = NULL;
  th_options(&o, "auto", 0);
  if (CHECK_OK(NULL, ps_context_create(&o, NULL, 0, &a))) {
    CHECKF(strcmp(ps_context_backend(a), expect_auto) == 0, "auto picked \"%s\", expected \"%s\"",
           ps_context_backend(a), expect_auto);
    small_filter(a, "auto");
    ps_context_destroy(a);
  }
  /* NULL options are the defaults ("auto") */
  a = NULL;
  if (!getenv("PACKSCAN_OPENCL_PLATFORM") && CHECK_OK(NULL, ps_context_create(NULL, NULL, 0, &a))) {
    CHECKF(strcmp(ps_context_backend(a), expect_auto) == 0, "NULL options picked \"%s\", expected \"%s\"",
           ps_context_backend(a), expect_auto);
    ps_context_destroy(a);
  }
  /* backend NULL also means auto */
  th_options(&o, "auto", 0);
  o.backend = NULL;
  a = NULL;
  if (CHECK_OK(NULL, ps_context_create(&o, NULL, 0, &a))) {
    CHECKF(strcmp(ps_context_backend(a), expect_auto) == 0, "backend NULL picked \"%s\"", ps_context_backend(a));
    ps_context_destroy(a);
  }

  /* the allocator is used for the library's host memory, and all of it is
   * given back */
  counting cnt = {0, 0};
  th_options(&o, th.backend, 0);
  o.allocator.alloc = count_alloc;
  o.allocator.free = count_free;
  o.allocator.opaque = &cnt;
  a = NULL;
  if (CHECK_OK(NULL, ps_context_create(&o, NULL, 0, &a))) {
    small_filter(a, "counting allocator");
    ps_context_destroy(a);
    CHECKF(cnt.allocs > 0, "the context's allocator was never called");
    CHECKF(cnt.allocs == cnt.frees, "allocator: %lu allocations, %lu frees", cnt.allocs, cnt.frees);
  }

  /* A program built against 0.1's header calls the function
   * ps_context_options_init with a struct that ends at max_chunk_rows: the
   * library writes that much and no more. */
  {
    const size_t v01 = offsetof(ps_context_options, max_chunk_rows) + sizeof(uint64_t);
    unsigned char raw[sizeof(ps_context_options) + 16];
    memset(raw, 0x5A, sizeof raw);
    (ps_context_options_init)((ps_context_options *)(void *)raw);
    ps_context_options v;
    memcpy(&v, raw, sizeof v);
    CHECKF(v.struct_size == v01, "0.1's init: struct_size %u, want %zu", v.struct_size, v01);
    CHECK(v.opencl_platform == -1 && v.cuda_device == -1 && v.max_chunk_rows == 0);
    size_t past = 0;
    for (size_t i = v01; i < sizeof raw; i++) past += raw[i] != 0x5A;
    CHECKF(past == 0, "0.1's init wrote %zu bytes past its struct", past);
    /* the sized form writes what it is given, clamped to the library's struct */
    memset(raw, 0x5A, sizeof raw);
    ps_context_options_init_sized((ps_context_options *)(void *)raw, sizeof raw);
    memcpy(&v, raw, sizeof v);
    CHECK(v.struct_size == sizeof(ps_context_options) && v.kernel_cache_dir == NULL);
    for (size_t i = sizeof(ps_context_options); i < sizeof raw; i++) past += raw[i] != 0x5A;
    CHECKF(past == 0, "init_sized wrote %zu bytes past sizeof(ps_context_options)", past);
    /* a size short of 0.1's struct: nothing is written */
    memset(raw, 0x5A, sizeof raw);
    ps_context_options_init_sized((ps_context_options *)(void *)raw, v01 - 1);
    for (size_t i = 0; i < sizeof raw; i++) past += raw[i] != 0x5A;
    CHECKF(past == 0, "init_sized with a size short of 0.1's struct wrote %zu bytes", past);
    ps_context_options_init_sized(NULL, sizeof v); /* NULL is accepted */
  }

  /* struct_size honoured: a caller compiled against an older header whose
   * struct ends before `allocator` — the fields past struct_size are not read */
  counting unused = {0, 0};
  th_options(&o, th.backend, 0);
  o.struct_size = (uint32_t)offsetof(ps_context_options, allocator);
  o.allocator.alloc = count_alloc;
  o.allocator.free = count_free;
  o.allocator.opaque = &unused;
  o.max_chunk_rows = 7;
  a = NULL;
  if (CHECK_OK(NULL, ps_context_create(&o, NULL, 0, &a))) {
    small_filter(a, "short struct_size");
    ps_context_destroy(a);
    CHECKF(unused.allocs == 0, "allocator past struct_size was used (%lu calls)", unused.allocs);
  }
#ifdef PACKSCAN_HAVE_OPENCL
  if (strcmp(th.backend, "opencl") == 0) {
    /* an impossible platform index is refused when it is inside struct_size... */
    th_options(&o, "opencl", 0);
    o.opencl_platform = 9999;
    a = NULL;
    char err[512] = {0};
    ps_status st = ps_context_create(&o, err, sizeof err, &a);
    CHECKF(st != PS_OK && a == NULL, "opencl_platform 9999 accepted (%s)", ps_status_name(st));
    CHECKF(st == PS_ERR_NO_DEVICE || st == PS_ERR_INVALID_ARGUMENT, "opencl_platform 9999: %s", ps_status_name(st));
    CHECKF(err[0] != 0, "no message for opencl_platform 9999");
    ps_context_destroy(a);
    /* ...and ignored when struct_size ends before it */
    th_options(&o, "opencl", 0);
    o.struct_size = (uint32_t)offsetof(ps_context_options, opencl_platform);
    o.opencl_platform = 9999;
    a = NULL;
    if (CHECK_OK(NULL, ps_context_create(&o, err, sizeof err, &a))) ps_context_destroy(a);
  }
#endif

  /* names */
  static const struct {
    ps_type t;
    const char *name;
    size_t size;
  } types[] = {{PS_TYPE_INT8, "int8", 1},     {PS_TYPE_INT16, "int16", 2},     {PS_TYPE_INT32, "int32", 4},
               {PS_TYPE_INT64, "int64", 8},   {PS_TYPE_UINT8, "uint8", 1},     {PS_TYPE_UINT16, "uint16", 2},
               {PS_TYPE_UINT32, "uint32", 4}, {PS_TYPE_UINT64, "uint64", 8},   {PS_TYPE_FLOAT32, "float32", 4},
               {PS_TYPE_FLOAT64, "float64", 8}, {PS_TYPE_STRING, "string", 0}};
  for (size_t i = 0; i < sizeof types / sizeof types[0]; i++) {
    const char *n = ps_type_name(types[i].t);
    CHECKF(n && strcmp(n, types[i].name) == 0, "ps_type_name(%d) = %s", (int)types[i].t, n ? n : "NULL");
    CHECKF(ps_type_size(types[i].t) == types[i].size, "ps_type_size(%s)", types[i].name);
  }
  CHECK(ps_type_name((ps_type)0) == NULL);
  CHECK(ps_type_name((ps_type)99) == NULL);
  static const char *const cmps[] = {"==", "!=", "<", "<=", ">", ">="};
  for (int i = 0; i < 6; i++) {
    const char *n = ps_cmp_name((ps_cmp)i);
    CHECKF(n && strcmp(n, cmps[i]) == 0, "ps_cmp_name(%d) = %s", i, n ? n : "NULL");
  }
  CHECK(ps_cmp_name((ps_cmp)6) == NULL);

  /* destroy(NULL) is a no-op */
  ps_context_destroy(NULL);
  ps_buffer_destroy(NULL);
  ps_column_destroy(NULL);
  ps_expr_destroy(NULL);

  ps_context_destroy(ctx);
  return th_finish();
}
