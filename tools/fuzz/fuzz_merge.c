/* libFuzzer target: the merge of partial query results
 * (ps_query_merge_add, ps_query_merge_finish[_partial], packscan_arrow.h),
 * whose input is Arrow data another process shipped. At start-up it runs
 * queries on the reference backend and exports their partials: a decimal
 * SUM/MIN/MAX GROUP BY an int key, a dictionary key with string MIN/MAX,
 * and a lossless float column's SUM/AVG/MIN/MAX GROUP BY a float key (format
 * version 2, its units). Each input is a little program: for each of up to
 * four partials it picks one of those, copies it (every buffer exactly as
 * large as its length says, so AddressSanitizer catches a read past it) and
 * mutates the copy — metadata values replaced by fuzzed text, data and
 * validity bytes changed, null counts, offsets and lengths within the
 * buffers, field formats and names — then adds it; the merge is finished
 * at the end. Every call must return a status, say something on failure,
 * and never read outside what the structs declare. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "fuzz_input.h"
#include "packscan.h"
#include "packscan_arrow.h"

#define MAX_BASE 3
#define MAX_KIDS 16
#define MAX_MD 1024

static ps_context *ctx;
static struct ArrowSchema base_s[MAX_BASE];
static struct ArrowArray base_a[MAX_BASE];
static int n_base;

/* Bytes per row of a child's data buffer (its format); strings: offsets. */
static size_t row_bytes(const char *f) {
  if (!strcmp(f, "L") || !strcmp(f, "g") || !strcmp(f, "U")) return 8;
  if (!strncmp(f, "d:76", 4)) return 32;
  return 16; /* d:38,s */
}

static ps_column *column_of(ps_type t, const void *v, uint64_t n, const char *name) {
  ps_plain in = {t, v, n, NULL};
  ps_encoded e;
  ps_column *c = NULL;
  if (ps_encode_for(&in, 0, t == PS_TYPE_FLOAT64 ? PS_FLOAT_SCALE_LOSSLESS : -1, 0, NULL, NULL, 0, &e) != PS_OK)
    return NULL;
  if (ps_column_create_for(ctx, &e.desc, &c) == PS_OK) ps_column_set_name(c, name);
  ps_encoded_destroy(&e);
  return c;
}

/* Runs aggs GROUP BY key over n rows as a partial and keeps its export. */
static void base_partial(ps_column *key, const ps_agg *aggs, uint32_t n_aggs, uint64_t n) {
  ps_query_desc d;
  ps_query_desc_init(&d);
  d.rows = n;
  d.n_keys = 1;
  d.keys[0] = key;
  d.n_aggs = n_aggs;
  d.aggs = aggs;
  ps_query *q = NULL;
  ps_query_result *r = NULL;
  if (ps_query_create(ctx, &d, &q) == PS_OK && ps_query_run_partial(ctx, q, &r) == PS_OK &&
      ps_query_result_export_partial(ctx, r, &base_s[n_base], &base_a[n_base]) == PS_OK)
    n_base++;
  ps_query_result_destroy(r);
  ps_query_destroy(q);
}

int LLVMFuzzerInitialize(int *argc, char ***argv) {
  (void)argc, (void)argv;
  ps_context_options o;
  ps_context_options_init(&o);
  o.backend = "reference";
  if (ps_context_create(&o, NULL, 0, &ctx) != PS_OK) abort();
  enum { N = 40 };
  int32_t k[N];
  int64_t x[N];
  double f[N], g[N];
  for (int i = 0; i < N; i++) {
    k[i] = i % 5 - 2;
    x[i] = (int64_t)i * 7919 % 1000 - 300;
    f[i] = (i % 7 - 3) * 0.1 * (i % 3 ? 1e-20 : 1e20);
    g[i] = i % 4 == 0 ? -0.0 : (i % 6) * 0.25;
  }
  ps_column *ck = column_of(PS_TYPE_INT32, k, N, "k"), *cx = column_of(PS_TYPE_INT64, x, N, "x");
  ps_column *cf = column_of(PS_TYPE_FLOAT64, f, N, "f"), *cg = column_of(PS_TYPE_FLOAT64, g, N, "g");
  /* a dictionary column: unsorted strings, one repeated */
  static const int64_t offsets[5] = {0, 1, 2, 4, 5};
  ps_dict_desc dd;
  ps_dict_desc_init(&dd);
  dd.count = 4;
  dd.offsets64 = offsets;
  dd.bytes = (const uint8_t *)"baddb";
  dd.bytes_size = 5;
  uint8_t codes[N];
  for (int i = 0; i < N; i++) codes[i] = (uint8_t)(i % 4);
  ps_plain pc = {PS_TYPE_UINT8, codes, N, NULL};
  ps_encoded ec;
  ps_column *cs = NULL;
  if (ps_encode_for(&pc, 0, -1, 0, NULL, NULL, 0, &ec) == PS_OK) {
    if (ps_column_create_dict(ctx, &dd, &ec.desc, &cs) != PS_OK) cs = NULL;
    ps_encoded_destroy(&ec);
  }
  ps_value *v[8] = {NULL};
  if (ck && cx) {
    ps_value_column(ctx, cx, &v[0]), ps_value_column(ctx, cx, &v[1]);
    const ps_agg a[4] = {{PS_AGG_COUNT_STAR, NULL}, {PS_AGG_SUM, v[0]}, {PS_AGG_MIN, v[1]}, {PS_AGG_AVG, v[0]}};
    base_partial(ck, a, 4, N);
  }
  if (cs && cx) {
    ps_value_column(ctx, cs, &v[2]);
    const ps_agg a[3] = {{PS_AGG_MAX, v[2]}, {PS_AGG_COUNT, v[1]}, {PS_AGG_SUM, v[0]}};
    base_partial(cs, a, 3, N);
  }
  if (cf && cg) {
    ps_value_column(ctx, cf, &v[3]), ps_value_column(ctx, cf, &v[4]);
    const ps_agg a[4] = {{PS_AGG_SUM, v[3]}, {PS_AGG_AVG, v[3]}, {PS_AGG_MIN, v[4]}, {PS_AGG_MAX, v[4]}};
    base_partial(cg, a, 4, N);
  }
  for (int i = 0; i < 8; i++) ps_value_destroy(v[i]);
  /* the exports own their memory: the columns can go */
  ps_column_destroy(ck), ps_column_destroy(cx), ps_column_destroy(cf), ps_column_destroy(cg), ps_column_destroy(cs);
  if (n_base == 0) abort(); /* the seeds' queries must run */
  return 0;
}

static void no_release_s(struct ArrowSchema *s) { s->release = NULL; }
static void no_release_a(struct ArrowArray *a) { a->release = NULL; }

/* A mutable copy of one base partial: the structs, the metadata and every
 * buffer in memory of its own, each exactly as large as the base's length
 * says. */
typedef struct copy {
  struct ArrowSchema s, kid_s[MAX_KIDS], *kid_sp[MAX_KIDS];
  struct ArrowArray a, kid_a[MAX_KIDS], *kid_ap[MAX_KIDS];
  const void *top_buf[1];
  const void *bufs[MAX_KIDS][3];
  void *owned[MAX_KIDS][3];
  size_t sizes[MAX_KIDS][3]; /* of owned */
  int strings[MAX_KIDS];     /* a large_utf8 field: its offsets also say how large its bytes are */
  char formats[MAX_KIDS][32], names[MAX_KIDS][32];
  char md[MAX_MD];
} copy;

static void copy_make(copy *c, int b) {
  memset(c, 0, sizeof *c);
  const struct ArrowSchema *bs = &base_s[b];
  const struct ArrowArray *ba = &base_a[b];
  c->s = *bs;
  c->a = *ba;
  c->s.release = no_release_s;
  c->a.release = no_release_a;
  c->a.buffers = c->top_buf;
  /* metadata: int32 count, then length-prefixed keys and values */
  int32_t pairs = 0;
  memcpy(&pairs, bs->metadata, 4);
  const char *p = bs->metadata + 4;
  for (int32_t i = 0; i < 2 * pairs; i++) {
    int32_t len;
    memcpy(&len, p, 4);
    p += 4 + len;
  }
  memcpy(c->md, bs->metadata, (size_t)(p - bs->metadata));
  c->s.metadata = c->md;
  const int64_t n = ba->length;
  const int kids = (int)(bs->n_children < MAX_KIDS ? bs->n_children : MAX_KIDS);
  c->s.n_children = c->a.n_children = kids;
  c->s.children = c->kid_sp;
  c->a.children = c->kid_ap;
  for (int k = 0; k < kids; k++) {
    c->kid_s[k] = *bs->children[k];
    c->kid_a[k] = *ba->children[k];
    c->kid_s[k].release = no_release_s;
    c->kid_a[k].release = no_release_a;
    snprintf(c->formats[k], sizeof c->formats[k], "%s", bs->children[k]->format);
    snprintf(c->names[k], sizeof c->names[k], "%s", bs->children[k]->name);
    c->kid_s[k].format = c->formats[k];
    c->kid_s[k].name = c->names[k];
    const struct ArrowArray *ka = ba->children[k];
    c->strings[k] = !strcmp(bs->children[k]->format, "U");
    const size_t rb = row_bytes(bs->children[k]->format), rows = (size_t)n + (size_t)ka->offset;
    size_t sizes[3] = {(rows + 7) / 8, rb * rows + (!strcmp(bs->children[k]->format, "U") ? 8 : 0), 0};
    if (!strcmp(bs->children[k]->format, "U") && ka->buffers[1]) {
      int64_t end;
      memcpy(&end, (const uint8_t *)ka->buffers[1] + 8 * rows, 8);
      sizes[2] = (size_t)end;
    }
    for (int j = 0; j < ka->n_buffers && j < 3; j++) {
      if (!ka->buffers[j]) continue;
      c->owned[k][j] = malloc(sizes[j] ? sizes[j] : 1);
      c->sizes[k][j] = sizes[j];
      memcpy(c->owned[k][j], ka->buffers[j], sizes[j]);
      c->bufs[k][j] = c->owned[k][j];
    }
    c->kid_a[k].buffers = c->bufs[k];
    c->kid_sp[k] = &c->kid_s[k];
    c->kid_ap[k] = &c->kid_a[k];
  }
}

static void copy_free(copy *c) {
  for (int k = 0; k < MAX_KIDS; k++)
    for (int j = 0; j < 3; j++) free(c->owned[k][j]);
}

/* Replaces the value of metadata pair `which` by len fuzzed bytes. */
static void set_md_value(copy *c, int which, input *in) {
  char out[MAX_MD];
  int32_t pairs;
  memcpy(&pairs, c->md, 4);
  if (pairs <= 0) return;
  which %= pairs;
  size_t o = 4;
  const char *p = c->md + 4;
  memcpy(out, c->md, 4);
  for (int32_t i = 0; i < pairs; i++) {
    for (int kv = 0; kv < 2; kv++) {
      int32_t len;
      memcpy(&len, p, 4);
      const char *bytes = p + 4;
      p += 4 + len;
      char fuzzed[48];
      if (i == which && kv == 1) {
        len = (int32_t)(take(in, 1) % sizeof fuzzed);
        for (int32_t j = 0; j < len; j++) fuzzed[j] = (char)take(in, 1);
        bytes = fuzzed;
      }
      if (o + 4 + (size_t)len > sizeof out) return;
      memcpy(out + o, &len, 4);
      memcpy(out + o + 4, bytes, (size_t)len);
      o += 4 + (size_t)len;
    }
  }
  memcpy(c->md, out, o);
}

static void mutate(copy *c, input *in) {
  const int kids = (int)c->a.n_children;
  const int steps = (int)(take(in, 1) % 6);
  for (int s = 0; s < steps; s++) {
    const int op = (int)(take(in, 1) % 7), k = kids ? (int)(take(in, 1) % (uint64_t)kids) : 0;
    struct ArrowArray *ka = kids ? &c->kid_a[k] : NULL;
    switch (op) {
      case 0:
        set_md_value(c, (int)take(in, 1), in);
        break;
      case 1: /* a byte of a data buffer */
        /* not a string field's offsets: the C Data Interface's only word on
         * the size of its bytes (a larger last offset is a larger buffer,
         * which the consumer cannot check) */
        if (ka && c->owned[k][1] && c->sizes[k][1] && !c->strings[k])
          ((uint8_t *)c->owned[k][1])[take(in, 2) % c->sizes[k][1]] = (uint8_t)take(in, 1);
        else if (ka && c->strings[k] && c->owned[k][2] && c->sizes[k][2]) /* the bytes instead */
          ((uint8_t *)c->owned[k][2])[take(in, 2) % c->sizes[k][2]] = (uint8_t)take(in, 1);
        break;
      case 2: /* a validity bit cleared, or the bitmap set where there was none */
        if (ka && c->owned[k][0] && c->sizes[k][0])
          ((uint8_t *)c->owned[k][0])[take(in, 2) % c->sizes[k][0]] ^= (uint8_t)take(in, 1);
        break;
      case 3:
        if (ka) ka->null_count = (int64_t)(take(in, 1) % 4) - 1;
        break;
      case 4: /* fewer rows, from an offset: within the buffers */
        if (c->a.length > 0) {
          const int64_t off = (int64_t)(take(in, 1) % (uint64_t)(c->a.length + 1));
          c->a.offset += off;
          c->a.length -= off;
          c->a.length -= (int64_t)(take(in, 1) % (uint64_t)(c->a.length + 1));
        }
        break;
      case 5: { /* a field's format or name from a short list */
        static const char *const formats[] = {"L", "g", "U", "d:38,0", "d:38,2", "d:76,0,256", "d:76,2,256", "l", ""};
        if (ka && take(in, 1) & 1)
          snprintf(c->formats[k], sizeof c->formats[k], "%s", formats[take(in, 1) % 9]);
        else if (ka)
          snprintf(c->names[k], sizeof c->names[k], "agg%u_%s", (unsigned)(take(in, 1) % 4),
                   take(in, 1) & 1 ? "sum" : "count");
        break;
      }
      case 6: /* fewer fields */
        if (c->a.n_children > 0) c->a.n_children = c->s.n_children = c->a.n_children - 1;
        break;
    }
  }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size) {
  input in = {data, size};
  ps_query_merge *m = NULL;
  if (ps_query_merge_create(ctx, &m) != PS_OK) abort();
  const int n = 1 + (int)(take(&in, 1) % 4);
  for (int i = 0; i < n; i++) {
    copy *c = calloc(1, sizeof *c);
    if (!c) abort();
    copy_make(c, (int)(take(&in, 1) % (uint64_t)n_base));
    mutate(c, &in);
    const ps_status st = ps_query_merge_add(m, &c->s, &c->a);
    if (st != PS_OK && !ps_context_last_error(ctx)[0]) abort(); /* a failure says what */
    copy_free(c);
    free(c);
  }
  ps_query_result *r = NULL;
  const ps_status st = take(&in, 1) & 1 ? ps_query_merge_finish_partial(m, &r) : ps_query_merge_finish(m, &r);
  if (st == PS_OK) {
    const uint64_t groups = ps_query_result_groups(r);
    for (uint64_t g = 0; g < groups && g < 64; g++) {
      ps_datum d;
      (void)ps_query_result_key(r, g, 0, &d);
      for (uint32_t a = 0; a < 4; a++) (void)ps_query_result_value(r, g, a, &d);
    }
  } else if (!ps_context_last_error(ctx)[0]) {
    abort();
  }
  ps_query_result_destroy(r);
  ps_query_merge_destroy(m);
  return 0;
}
