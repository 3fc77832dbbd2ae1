/*
 * kcache_disk: kernels compiled at run time kept on disk between contexts
 * (ps_context_options.kernel_cache_dir, core/kcache.h), on a device backend
 * (OpenCL: program binaries; CUDA: NVRTC's CUBINs of specialized queries).
 *
 * A context with a fresh directory runs a filter and a query that build
 * kernels at run time (internal options opencl_jit=1, query_specialize=1)
 * and writes one file per build; a second context on the same directory
 * builds nothing (the context's counters, ps_context_kcache_stats) and
 * answers the same bits, as does the reference backend. Then every file is
 * damaged (cut in half, a byte flipped, another format version, emptied,
 * another build's file under its name): the next context ignores each,
 * builds again, answers the same and rewrites the files, which the context
 * after it loads. A directory nobody can write (/proc/self; a mode-0500 one
 * where the user is not root), a missing one, a path that is a file.
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "harness.h"
#include "internal_options.h"
#include "kcache.h"

#define ROWS 5000
#define MAX_FILES 256

/* ---- files ---------------------------------------------------------------- */

typedef struct file_list {
  char names[MAX_FILES][PS_KCACHE_NAME_BYTES + 16];
  int n, others; /* the cache's files; any other name (temporary ones included) */
} file_list;

static void list_files(const char *dir, file_list *out) {
  out->n = out->others = 0;
  DIR *d = opendir(dir);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    const size_t len = strlen(e->d_name);
    if (len == PS_KCACHE_NAME_BYTES - 1 && strncmp(e->d_name, PS_KCACHE_FILE_PREFIX, 12) == 0 &&
        strcmp(e->d_name + len - 4, ".bin") == 0 && out->n < MAX_FILES)
      memcpy(out->names[out->n++], e->d_name, len + 1); /* len is checked above */
    else
      out->others++;
  }
  closedir(d);
}

static uint8_t *read_all(const char *path, size_t *size) {
  *size = 0;
  FILE *f = fopen(path, "rb");
  if (!f) return NULL;
  fseek(f, 0, SEEK_END);
  long n = ftell(f);
  fseek(f, 0, SEEK_SET);
  uint8_t *b = th_malloc(n > 0 ? (size_t)n : 1);
  *size = n > 0 ? fread(b, 1, (size_t)n, f) : 0;
  fclose(f);
  return b;
}

static void write_all(const char *path, const uint8_t *b, size_t size) {
  FILE *f = fopen(path, "wb");
  if (!CHECKF(f != NULL, "cannot write %s: %s", path, strerror(errno))) return;
  CHECK(fwrite(b, 1, size, f) == size);
  fclose(f);
}

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      char path[4200];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
}

/* ---- the workload --------------------------------------------------------- */

typedef struct columns {
  ps_column *a, *b;
} columns;

static void pack(uint8_t *data, uint64_t i, uint32_t w, uint64_t code) {
  for (uint32_t k = 0; k < w; k++)
    if (code >> k & 1) data[(i * w + k) / 8] |= (uint8_t)(1u << ((i * w + k) % 8));
}

/* The same seeded table on every context: a (int32, 13 bits, nulls), b
 * (int64, 7 bits). */
static int make_columns(ps_context *ctx, uint64_t seed, columns *c) {
  th_rng r;
  th_rng_seed(&r, seed);
  uint8_t *da = th_calloc((ROWS * 13 + 7) / 8, 1), *db = th_calloc((ROWS * 7 + 7) / 8, 1);
  uint8_t *valid = th_malloc((ROWS + 7) / 8);
  for (uint64_t i = 0; i < ROWS; i++) {
    pack(da, i, 13, th_below(&r, 1u << 13));
    pack(db, i, 7, th_below(&r, 1u << 7));
  }
  for (size_t i = 0; i < (ROWS + 7) / 8; i++) valid[i] = (uint8_t)(th_u64(&r) | 0x11);
  ps_for_desc d;
  ps_for_desc_init(&d);
  d.type = PS_TYPE_INT32;
  d.n = ROWS;
  d.width = 13;
  d.reference.i = -1000;
  d.data = da;
  d.data_size = (ROWS * 13 + 7) / 8;
  d.validity = valid;
  d.validity_size = (ROWS + 7) / 8;
  int ok = CHECK_OK(ctx, ps_column_create_for(ctx, &d, &c->a));
  ps_for_desc_init(&d);
  d.type = PS_TYPE_INT64;
  d.n = ROWS;
  d.width = 7;
  d.reference.i = 3;
  d.data = db;
  d.data_size = (ROWS * 7 + 7) / 8;
  ok = ok && CHECK_OK(ctx, ps_column_create_for(ctx, &d, &c->b));
  free(da);
  free(db);
  free(valid);
  return ok;
}

/* Appends bytes to a growing result. */
typedef struct bytes {
  uint8_t *p;
  size_t n, cap;
} bytes;

static void append(bytes *b, const void *src, size_t n) {
  if (b->n + n > b->cap) {
    b->cap = 2 * (b->n + n);
    b->p = realloc(b->p, b->cap);
    if (!b->p) abort();
  }
  memcpy(b->p + b->n, src, n);
  b->n += n;
}

static void append_datum(bytes *b, const ps_datum *d) {
  append(b, &d->is_null, sizeof d->is_null);
  append(b, &d->lo, sizeof d->lo);
  append(b, &d->hi, sizeof d->hi);
  append(b, &d->scale, sizeof d->scale);
}

/* (a < 2000 AND b >= 50) OR NOT (a = 77 OR b BETWEEN 10 AND 20): its bitmap
 * and count; then SUM(a * b), COUNT(*), MIN(a), MAX(a) WHERE a < 3000 GROUP
 * BY b: every group's key and aggregates. Everything as bytes. */
static int run_workload(ps_context *ctx, uint64_t seed, bytes *out) {
  out->n = 0;
  columns c = {NULL, NULL};
  if (!make_columns(ctx, seed, &c)) return 0;
  ps_expr *lt = NULL, *ge = NULL, *eq = NULL, *btw = NULL, *x = NULL, *y = NULL, *z = NULL, *expr = NULL;
  int ok = CHECK_OK(ctx, ps_expr_compare(ctx, c.a, PS_LT, ps_lit_int(2000), &lt)) &&
           CHECK_OK(ctx, ps_expr_compare(ctx, c.b, PS_GE, ps_lit_int(50), &ge)) &&
           CHECK_OK(ctx, ps_expr_compare(ctx, c.a, PS_EQ, ps_lit_int(77), &eq)) &&
           CHECK_OK(ctx, ps_expr_between(ctx, c.b, ps_lit_int(10), ps_lit_int(20), &btw)) &&
           CHECK_OK(ctx, ps_expr_and(ctx, lt, ge, &x)) && (lt = ge = NULL, 1) &&
           CHECK_OK(ctx, ps_expr_or(ctx, eq, btw, &y)) && (eq = btw = NULL, 1) &&
           CHECK_OK(ctx, ps_expr_not(ctx, y, &z)) && (y = NULL, 1) && CHECK_OK(ctx, ps_expr_or(ctx, x, z, &expr)) &&
           (x = z = NULL, 1);
  uint8_t bitmap[(ROWS + 7) / 8];
  uint64_t count = 0;
  ok = ok && CHECK_OK(ctx, ps_filter(ctx, expr, bitmap, sizeof bitmap, &count));
  if (ok) {
    append(out, bitmap, sizeof bitmap);
    append(out, &count, sizeof count);
  }
  ps_expr *where = NULL;
  ps_value *va = NULL, *vb = NULL, *prod = NULL, *va2 = NULL;
  ps_query *q = NULL;
  ps_query_result *res = NULL;
  ok = ok && CHECK_OK(ctx, ps_expr_compare(ctx, c.a, PS_LT, ps_lit_int(3000), &where)) &&
       CHECK_OK(ctx, ps_value_column(ctx, c.a, &va)) && CHECK_OK(ctx, ps_value_column(ctx, c.b, &vb)) &&
       CHECK_OK(ctx, ps_value_arith(ctx, PS_MUL, va, vb, &prod)) && (va = vb = NULL, 1) &&
       CHECK_OK(ctx, ps_value_column(ctx, c.a, &va2));
  if (ok) {
    const ps_agg aggs[4] = {{PS_AGG_SUM, prod}, {PS_AGG_COUNT_STAR, NULL}, {PS_AGG_MIN, va2}, {PS_AGG_MAX, va2}};
    ps_query_desc d;
    ps_query_desc_init(&d);
    d.rows = ROWS;
    d.where = where;
    d.n_keys = 1;
    d.keys[0] = c.b;
    d.n_aggs = 4;
    d.aggs = aggs;
    ok = CHECK_OK(ctx, ps_query_create(ctx, &d, &q)) && CHECK_OK(ctx, ps_query_run(ctx, q, &res));
  }
  if (ok) {
    const uint64_t groups = ps_query_result_groups(res);
    append(out, &groups, sizeof groups);
    for (uint64_t g = 0; g < groups; g++) {
      ps_datum dt;
      if (CHECK_OK(NULL, ps_query_result_key(res, g, 0, &dt))) append_datum(out, &dt);
      for (uint32_t k = 0; k < 4; k++)
        if (CHECK_OK(NULL, ps_query_result_value(res, g, k, &dt))) append_datum(out, &dt);
    }
  }
  ps_query_result_destroy(res);
  ps_query_destroy(q);
  ps_value_destroy(va);
  ps_value_destroy(vb);
  ps_value_destroy(va2);
  ps_value_destroy(prod);
  ps_expr_destroy(where);
  ps_expr_destroy(lt);
  ps_expr_destroy(ge);
  ps_expr_destroy(eq);
  ps_expr_destroy(btw);
  ps_expr_destroy(x);
  ps_expr_destroy(y);
  ps_expr_destroy(z);
  ps_expr_destroy(expr);
  ps_column_destroy(c.a);
  ps_column_destroy(c.b);
  return ok;
}

/* A context of the backend under test on dir, with kernels built at run
 * time for every filter and query. */
static ps_context *disk_context(const char *dir) {
  ps_context_options o;
  th_options(&o, th.backend, 0);
  o.kernel_cache_dir = dir;
  char err[1024];
  ps_context *ctx = NULL;
  if (!CHECKF(ps_context_create(&o, err, sizeof err, &ctx) == PS_OK, "context on %s: %s", dir, err)) {
    th_finish();
    exit(1);
  }
  th_apply_options(ctx);
  return ctx;
}

static double seconds(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Wall time of the last run_on's workload (printed, never checked: what the
 * disk cache saves on the machine at hand). */
static double last_run_ms;

/* Runs the workload on a new context on dir: its counters, and the results
 * compared with `expected`. */
static ps_kcache_stats run_on(const char *dir, uint64_t seed, const bytes *expected) {
  ps_context *ctx = disk_context(dir);
  bytes got = {NULL, 0, 0};
  const double start = seconds();
  const int ran = run_workload(ctx, seed, &got);
  last_run_ms = 1e3 * (seconds() - start);
  if (ran)
    CHECKF(got.n == expected->n && memcmp(got.p, expected->p, got.n) == 0,
           "results differ from the reference backend's (%zu bytes against %zu)", got.n, expected->n);
  const ps_kcache_stats s = ps_context_kcache_stats(ctx);
  ps_context_destroy(ctx);
  free(got.p);
  return s;
}

static void print_stats(const char *what, const ps_kcache_stats *s) {
  printf("%s: builds %" PRIu64 ", disk loads %" PRIu64 ", misses %" PRIu64 ", rejects %" PRIu64 ", refused %" PRIu64
         ", writes %" PRIu64 ", write failures %" PRIu64 "; filter and query %.1f ms\n",
         what, s->builds, s->disk_loads, s->disk_misses, s->disk_rejects, s->disk_refused, s->disk_writes,
         s->disk_write_failures, last_run_ms);
}

static const char *const damage_names[] = {"cut in half", "a byte flipped", "another format version", "emptied",
                                           "another build's file"};
#define DAMAGES 5

/* Damages file i of list in dir the way `how` says. */
static void damage(const char *dir, const file_list *list, int i, int how) {
  char path[4200], other[4200];
  snprintf(path, sizeof path, "%s/%s", dir, list->names[i]);
  snprintf(other, sizeof other, "%s/%s", dir, list->names[(i + 1) % list->n]);
  size_t size = 0;
  uint8_t *b = read_all(how == 4 ? other : path, &size);
  if (!CHECKF(b && size > PS_KCACHE_FILE_HEADER, "%s: %zu bytes", path, size)) {
    free(b);
    return;
  }
  if (how == 0) size /= 2;
  if (how == 1) b[PS_KCACHE_FILE_HEADER + (size - PS_KCACHE_FILE_HEADER) / 2] ^= 0x40;
  if (how == 2) b[8] = PS_KCACHE_FILE_VERSION + 1;
  if (how == 3) size = 0;
  write_all(path, b, size);
  free(b);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "kcache_disk");
  ps_context_destroy(th_context(0)); /* exits 77 (no CUDA device) or 1 (no OpenCL device) */
  if (th_is_reference()) {
    printf("the reference backend builds no kernels\n");
    return th_finish();
  }
  th_test_options("opencl_jit=1,query_specialize=1");
  const uint64_t seed = th_u64(&th.rng);

  bytes expected = {NULL, 0, 0};
  {
    ps_context *ref = th_reference_context(0);
    if (!run_workload(ref, seed, &expected)) {
      ps_context_destroy(ref);
      return th_finish();
    }
    ps_context_destroy(ref);
  }
  char dir[] = "/tmp/packscan-kcache-disk-XXXXXX";
  if (!CHECKF(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno))) return th_finish();
  file_list *list = th_malloc(sizeof *list);

  th_case("a fresh directory");
  ps_kcache_stats s = run_on(dir, seed, &expected);
  print_stats("first context", &s);
  const uint64_t builds = s.builds;
  CHECKF(builds >= 1, "no kernel built at run time");
  CHECK(s.disk_writes == builds && s.disk_write_failures == 0 && s.disk_loads == 0 && s.disk_rejects == 0);
  list_files(dir, list);
  CHECKF((uint64_t)list->n == builds && list->others == 0,
         "%d files of the cache's and %d others for %" PRIu64 " builds", list->n, list->others, builds);

  th_case("a second context on the same directory");
  s = run_on(dir, seed, &expected);
  print_stats("second context", &s);
  CHECK(s.builds == 0 && s.disk_loads == builds && s.disk_rejects == 0 && s.disk_refused == 0 && s.disk_writes == 0);

  for (int round = 0; round * list->n < DAMAGES && list->n > 0; round++) {
    th_case("damaged files, round %d", round);
    list_files(dir, list);
    if (list->n == 1 && round == 4) break; /* another build's file needs two */
    for (int i = 0; i < list->n; i++) {
      const int how = (round * list->n + i) % DAMAGES;
      damage(dir, list, i, how);
      printf("round %d: %s %s\n", round, list->names[i], damage_names[how]);
    }
    s = run_on(dir, seed, &expected);
    print_stats("after the damage", &s);
    CHECK(s.builds == builds && s.disk_rejects == builds && s.disk_loads == 0 && s.disk_writes == builds);
    th_case("the files rewritten after round %d", round);
    s = run_on(dir, seed, &expected);
    CHECK(s.builds == 0 && s.disk_loads == builds && s.disk_rejects == 0);
  }

  th_case("valid files whose payload is no binary the driver takes");
  list_files(dir, list);
  for (int i = 0; i < list->n; i++) {
    char path[4200];
    snprintf(path, sizeof path, "%s/%s", dir, list->names[i]);
    size_t size = 0;
    uint8_t *b = read_all(path, &size);
    uint64_t key_size = 0; /* the header's little-endian key length */
    for (int k = 7; b && size >= PS_KCACHE_FILE_HEADER && k >= 0; k--) key_size = key_size << 8 | b[16 + k];
    if (CHECK(key_size > 0 && PS_KCACHE_FILE_HEADER + key_size <= size)) {
      /* Random bytes, none zero but the last: a driver that reads the
       * payload as text finds its end. */
      uint8_t junk[256];
      for (size_t k = 0; k < sizeof junk; k++) junk[k] = (uint8_t)(1 + th_below(&th.rng, 255));
      junk[sizeof junk - 1] = 0;
      ps_context *ctx = th_reference_context(0);
      size_t file_size = 0;
      uint8_t *file = ps_kcache_file_bytes(ctx, b + PS_KCACHE_FILE_HEADER, key_size, junk, sizeof junk, &file_size);
      if (CHECK(file != NULL)) write_all(path, file, file_size);
      ps_host_free(ctx, file);
      ps_context_destroy(ctx);
    }
    free(b);
  }
  s = run_on(dir, seed, &expected);
  print_stats("payloads replaced", &s);
  CHECK(s.builds == builds && s.disk_loads == builds && s.disk_refused == builds && s.disk_writes == builds);
  s = run_on(dir, seed, &expected);
  CHECK(s.builds == 0 && s.disk_loads == builds && s.disk_refused == 0);

  th_case("a directory that does not exist");
  char missing[4200];
  snprintf(missing, sizeof missing, "%s/missing/deeper", dir);
  s = run_on(missing, seed, &expected);
  CHECK(s.builds == builds && s.disk_write_failures == builds && s.disk_writes == 0);

  th_case("a read-only directory");
  char readonly[4200];
  snprintf(readonly, sizeof readonly, "%s/readonly", dir);
  CHECK(mkdir(readonly, 0500) == 0);
  if (access(readonly, W_OK) != 0) {
    s = run_on(readonly, seed, &expected);
    CHECK(s.builds == builds && s.disk_write_failures == builds && s.disk_writes == 0);
    list_files(readonly, list);
    CHECK(list->n == 0 && list->others == 0);
  } else {
    printf("note: a mode-0500 directory is writable by this user (root): /proc/self stands for it\n");
  }
  rmdir(readonly);
  struct stat st;
  if (stat("/proc/self", &st) == 0 && S_ISDIR(st.st_mode)) {
    th_case("a directory nobody can write (/proc/self)");
    s = run_on("/proc/self", seed, &expected);
    CHECK(s.builds == builds && s.disk_write_failures == builds && s.disk_writes == 0);
  }

  th_case("a path that is a file");
  {
    char file[4200], err[1024] = "";
    snprintf(file, sizeof file, "%s/a-file", dir);
    write_all(file, (const uint8_t *)"x", 1);
    ps_context_options o;
    th_options(&o, th.backend, 0);
    o.kernel_cache_dir = file;
    ps_context *ctx = NULL;
    CHECK_STATUS(NULL, ps_context_create(&o, err, sizeof err, &ctx), PS_ERR_INVALID_ARGUMENT);
    CHECK(ctx == NULL);
    CHECKF(strstr(err, "options.kernel_cache_dir") && strstr(err, file), "message: %s", err);
  }
  remove_dir(dir);
  free(list);
  free(expected.p);
  return th_finish();
}
