/*
 * kcache: the kernel cache of core/kcache.h without a device. SHA-256
 * against the standard's vectors and split updates; the cache in memory
 * (hits, misses, least recently used out, capacity 1, clear, keys that share
 * a hash through a one-byte test hash, seeded random operations against a
 * model); the file format (every truncation length, every byte flipped,
 * another version, another key, trailing bytes); files in a temporary
 * directory through two contexts (store, load, a rejected file, a missing,
 * a read-only and an unwritable directory; other files left alone);
 * ps_context_options.kernel_cache_dir at ps_context_create (a file, an
 * empty path, a struct_size that ends before the field or inside it).
 */
#define _POSIX_C_SOURCE 200809L

#include <dirent.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "harness.h"
#include "kcache.h"
#include "sha256.h"

static ps_context *make_context(const char *dir) {
  ps_context_options o;
  ps_context_options_init(&o);
  o.backend = "reference";
  o.kernel_cache_dir = dir;
  char err[512];
  ps_context *ctx = NULL;
  if (!CHECKF(ps_context_create(&o, err, sizeof err, &ctx) == PS_OK, "reference context with dir %s: %s",
              dir ? dir : "(none)", err)) {
    th_finish();
    exit(1);
  }
  return ctx;
}

static void to_hex(const uint8_t *d, size_t n, char *out) {
  for (size_t i = 0; i < n; i++) sprintf(out + 2 * i, "%02x", d[i]);
}

/* ---- SHA-256 -------------------------------------------------------------- */

static void test_sha256(void) {
  static const struct {
    const char *text;
    const char *digest;
  } vectors[] = {
      {"", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"},
      {"abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"},
      {"abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"},
      {"abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmnoijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopq"
       "rstu",
       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1"},
  };
  char hex[2 * PS_SHA256_BYTES + 1];
  uint8_t d[PS_SHA256_BYTES];
  for (size_t i = 0; i < sizeof vectors / sizeof *vectors; i++) {
    th_case("SHA-256 of \"%.20s\"", vectors[i].text);
    ps_sha256(vectors[i].text, strlen(vectors[i].text), d);
    to_hex(d, sizeof d, hex);
    CHECKF(strcmp(hex, vectors[i].digest) == 0, "digest %s, expected %s", hex, vectors[i].digest);
  }
  th_case("SHA-256 of a million 'a'");
  char *a = th_malloc(1000000);
  memset(a, 'a', 1000000);
  ps_sha256(a, 1000000, d);
  to_hex(d, sizeof d, hex);
  CHECKF(strcmp(hex, "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0") == 0, "digest %s", hex);
  /* Split into random pieces: the same digest. */
  for (int round = 0; round < 50; round++) {
    const size_t n = (size_t)th_below(&th.rng, 3000);
    th_case("SHA-256 of %zu bytes in random pieces (round %d)", n, round);
    for (size_t i = 0; i < n; i++) a[i] = (char)th_u64(&th.rng);
    uint8_t whole[PS_SHA256_BYTES], split[PS_SHA256_BYTES];
    ps_sha256(a, n, whole);
    ps_sha256_ctx s;
    ps_sha256_init(&s);
    for (size_t at = 0; at < n;) {
      size_t piece = (size_t)th_below(&th.rng, 130);
      if (piece > n - at) piece = n - at;
      ps_sha256_update(&s, a + at, piece);
      at += piece;
    }
    ps_sha256_final(&s, split);
    CHECK(memcmp(whole, split, sizeof whole) == 0);
  }
  free(a);
}

/* ---- the cache in memory -------------------------------------------------- */

#define MAX_LOG 4096

/* Values are small integers (as pointers, never NULL); the destroy callback
 * logs them in order. */
typedef struct destroy_log {
  int values[MAX_LOG];
  size_t n;
} destroy_log;

static void log_destroy(void *user, void *value) {
  destroy_log *log = user;
  if (log->n < MAX_LOG) log->values[log->n] = (int)(intptr_t)value;
  log->n++;
}

/* A one-byte hash of the key's last byte: every key of key_of (whose last
 * part is the same device) gets the same hash, in memory and as a file name. */
static void tiny_hash(const uint8_t *bytes, size_t size, uint8_t out[PS_KCACHE_HASH_BYTES]) {
  memset(out, 0, PS_KCACHE_HASH_BYTES);
  out[0] = size ? (uint8_t)(bytes[size - 1] & 1) : 0;
}

static ps_kcache_key key_of(ps_kcache *c, int id) {
  char text[32];
  snprintf(text, sizeof text, "kernel %d", id);
  const ps_kcache_part parts[2] = {{"source", text, strlen(text)}, {"device", "test device", 11}};
  ps_kcache_key k;
  if (!CHECK_OK(NULL, ps_kcache_key_make(c, parts, 2, &k))) memset(&k, 0, sizeof k);
  return k;
}

/* The value for id, or 0 when absent. */
static int get(ps_kcache *c, int id) {
  ps_kcache_key k = key_of(c, id);
  int v = (int)(intptr_t)ps_kcache_get(c, &k);
  ps_kcache_key_free(c, &k);
  return v;
}

static void put(ps_kcache *c, int id, int value) {
  ps_kcache_key k = key_of(c, id);
  ps_kcache_put(c, &k, (void *)(intptr_t)value);
  CHECK(k.bytes == NULL);
}

static void test_memory_named(ps_context *ctx, int tiny) {
  destroy_log log = {{0}, 0};
  ps_kcache *c = NULL;
  th_case("capacity 3, hits, misses, least recently used out%s", tiny ? ", one-byte hash" : "");
  if (!CHECK_OK(ctx, ps_kcache_create(ctx, 3, log_destroy, &log, &c))) return;
  if (tiny) ps_kcache_set_hash(c, tiny_hash);
  const ps_kcache_stats s0 = ps_context_kcache_stats(ctx);
  CHECK(get(c, 1) == 0);
  put(c, 1, 101);
  put(c, 2, 102);
  put(c, 3, 103);
  CHECK(ps_kcache_size(c) == 3);
  CHECK(get(c, 1) == 101);
  CHECK(get(c, 2) == 102);
  CHECK(get(c, 4) == 0);
  ps_kcache_stats s = ps_context_kcache_stats(ctx);
  CHECKF(s.hits - s0.hits == 2 && s.misses - s0.misses == 2, "hits %llu, misses %llu; expected 2 and 2",
         (unsigned long long)(s.hits - s0.hits), (unsigned long long)(s.misses - s0.misses));
  /* 3 is now the least recently used, then 1, then 2. */
  put(c, 4, 104);
  CHECK(log.n == 1 && log.values[0] == 103);
  CHECK(get(c, 3) == 0 && get(c, 4) == 104);
  put(c, 5, 105); /* 1 out */
  CHECK(log.n == 2 && log.values[1] == 101);
  CHECK(get(c, 2) == 102);
  put(c, 6, 106); /* 4 out (2 was used after it) */
  CHECK(log.n == 3 && log.values[2] == 104);
  s = ps_context_kcache_stats(ctx);
  CHECK(s.evictions - s0.evictions == 3);
  CHECK(ps_kcache_size(c) == 3);
  ps_kcache_clear(c);
  CHECK(log.n == 6 && ps_kcache_size(c) == 0);
  CHECK(get(c, 2) == 0 && get(c, 5) == 0 && get(c, 6) == 0);
  put(c, 7, 107);
  ps_kcache_destroy(c);
  CHECK(log.n == 7 && log.values[6] == 107);

  th_case("capacity 1%s", tiny ? ", one-byte hash" : "");
  log.n = 0;
  if (!CHECK_OK(ctx, ps_kcache_create(ctx, 1, log_destroy, &log, &c))) return;
  if (tiny) ps_kcache_set_hash(c, tiny_hash);
  put(c, 1, 11);
  CHECK(get(c, 1) == 11);
  put(c, 2, 12);
  CHECK(log.n == 1 && log.values[0] == 11);
  CHECK(get(c, 1) == 0 && get(c, 2) == 12);
  put(c, 1, 13);
  CHECK(log.n == 2 && log.values[1] == 12);
  CHECK(get(c, 1) == 13 && get(c, 2) == 0);
  ps_kcache_destroy(c);
  CHECK(log.n == 3 && log.values[2] == 13);
}

/* Seeded random gets and puts against a model: a list of ids in use order. */
static void test_memory_random(ps_context *ctx) {
  for (int round = 0; round < 200; round++) {
    const size_t capacity = 1 + (size_t)th_below(&th.rng, 8);
    const int ids = 1 + (int)th_below(&th.rng, 20), tiny = th_chance(&th.rng, 50);
    th_case("random round %d: capacity %zu, %d keys%s", round, capacity, ids, tiny ? ", one-byte hash" : "");
    destroy_log log = {{0}, 0};
    ps_kcache *c = NULL;
    if (!CHECK_OK(ctx, ps_kcache_create(ctx, capacity, log_destroy, &log, &c))) return;
    if (tiny) ps_kcache_set_hash(c, tiny_hash);
    int model[8], model_value[8]; /* least recently used first */
    size_t used = 0;
    int next_value = 1;
    for (int op = 0; op < 300; op++) {
      const int id = (int)th_below(&th.rng, (uint64_t)ids);
      size_t at = used;
      for (size_t i = 0; i < used; i++)
        if (model[i] == id) at = i;
      const int want = at < used ? model_value[at] : 0;
      const int got = get(c, id);
      if (!CHECKF(got == want, "op %d: key %d gives %d, expected %d", op, id, got, want)) break;
      if (at < used) { /* a hit: most recently used */
        memmove(model + at, model + at + 1, (used - at - 1) * sizeof *model);
        memmove(model_value + at, model_value + at + 1, (used - at - 1) * sizeof *model_value);
        model[used - 1] = id;
        model_value[used - 1] = want;
        continue;
      }
      const size_t before = log.n;
      int evicted = 0;
      if (used == capacity) {
        evicted = model_value[0];
        memmove(model, model + 1, (used - 1) * sizeof *model);
        memmove(model_value, model_value + 1, (used - 1) * sizeof *model_value);
        used--;
      }
      put(c, id, next_value);
      model[used] = id;
      model_value[used++] = next_value++;
      if (!CHECKF(log.n == before + (evicted != 0) && (!evicted || log.values[log.n - 1] == evicted),
                  "op %d: put evicted %zu values (last %d), expected %d", op, log.n - before,
                  log.n > before ? log.values[log.n - 1] : 0, evicted))
        break;
    }
    CHECK(ps_kcache_size(c) == used);
    ps_kcache_destroy(c);
    CHECK(log.n == (size_t)next_value - 1); /* every value destroyed exactly once */
  }
}

static void test_key_parts(ps_context *ctx) {
  th_case("key parts are delimited");
  ps_kcache *c = NULL;
  if (!CHECK_OK(ctx, ps_kcache_create(ctx, 4, NULL, NULL, &c))) return;
  const ps_kcache_part ab_c[2] = {{"source", "ab", 2}, {"options", "c", 1}};
  const ps_kcache_part a_bc[2] = {{"source", "a", 1}, {"options", "bc", 2}};
  const ps_kcache_part renamed[2] = {{"source", "ab", 2}, {"option", "c", 1}};
  ps_kcache_key k1, k2, k3;
  CHECK_OK(ctx, ps_kcache_key_make(c, ab_c, 2, &k1));
  CHECK_OK(ctx, ps_kcache_key_make(c, a_bc, 2, &k2));
  CHECK_OK(ctx, ps_kcache_key_make(c, renamed, 2, &k3));
  CHECK(k1.size != k2.size || memcmp(k1.bytes, k2.bytes, k1.size) != 0);
  CHECK(k1.tag != k2.tag && k1.tag != k3.tag);
  CHECK(!k1.hashed && !k2.hashed && !k3.hashed); /* SHA-256 only when a file needs it */
  ps_kcache_key_digest(c, &k1);
  ps_kcache_key_digest(c, &k2);
  ps_kcache_key_digest(c, &k3);
  CHECK(memcmp(k1.hash, k2.hash, sizeof k1.hash) != 0 && memcmp(k1.hash, k3.hash, sizeof k1.hash) != 0);
  ps_kcache_put(c, &k1, (void *)1);
  CHECK(ps_kcache_get(c, &k2) == NULL && ps_kcache_get(c, &k3) == NULL);
  uint8_t sha[PS_SHA256_BYTES];
  ps_kcache_key k4;
  CHECK_OK(ctx, ps_kcache_key_make(c, ab_c, 2, &k4));
  ps_kcache_key_digest(c, &k4);
  ps_sha256(k4.bytes, k4.size, sha);
  CHECK(memcmp(sha, k4.hash, sizeof sha) == 0); /* the default hash is SHA-256 */
  CHECK(ps_kcache_get(c, &k4) == (void *)1);
  ps_kcache_key_free(c, &k2);
  ps_kcache_key_free(c, &k3);
  ps_kcache_key_free(c, &k4);
  ps_kcache_destroy(c);
}

/* ---- the file format ------------------------------------------------------- */

static void test_file_format(ps_context *ctx) {
  const char *key = "backend\0key bytes of some build";
  const size_t key_size = 31;
  uint8_t payload[300];
  for (size_t i = 0; i < sizeof payload; i++) payload[i] = (uint8_t)th_u64(&th.rng);
  size_t size = 0, at = 0, got = 0;
  th_case("file format: a valid file");
  uint8_t *file = ps_kcache_file_bytes(ctx, (const uint8_t *)key, key_size, payload, sizeof payload, &size);
  if (!CHECK(file != NULL)) return;
  CHECK(size == PS_KCACHE_FILE_HEADER + key_size + sizeof payload);
  CHECK(memcmp(file, "PSKCACHE", 8) == 0 && file[8] == PS_KCACHE_FILE_VERSION && file[16] == key_size);
  CHECK(ps_kcache_file_check(file, size, (const uint8_t *)key, key_size, &at, &got) == PS_KCACHE_FILE_OK);
  CHECK(got == sizeof payload && memcmp(file + at, payload, got) == 0);

  th_case("file format: every truncation length");
  for (size_t n = 0; n < size; n++) {
    ps_kcache_file_result r = ps_kcache_file_check(file, n, (const uint8_t *)key, key_size, &at, &got);
    CHECKF(r == PS_KCACHE_FILE_TRUNCATED, "a file cut to %zu of %zu bytes gives %d", n, size, (int)r);
  }
  th_case("file format: one byte more");
  uint8_t *longer = th_malloc(size + 1);
  memcpy(longer, file, size);
  longer[size] = 0;
  CHECK(ps_kcache_file_check(longer, size + 1, (const uint8_t *)key, key_size, &at, &got) == PS_KCACHE_FILE_TOO_LONG);
  free(longer);

  th_case("file format: every byte flipped");
  for (size_t i = 0; i < size; i++) {
    const uint8_t bit = (uint8_t)(1u << th_below(&th.rng, 8));
    file[i] ^= bit;
    ps_kcache_file_result r = ps_kcache_file_check(file, size, (const uint8_t *)key, key_size, &at, &got);
    CHECKF(r != PS_KCACHE_FILE_OK, "byte %zu of %zu flipped (0x%02x) still passes", i, size, bit);
    if (i < 8) CHECKF(r == PS_KCACHE_FILE_BAD_MAGIC, "byte %zu: %d", i, (int)r);
    if (i >= 8 && i < 16) CHECKF(r == PS_KCACHE_FILE_BAD_VERSION, "byte %zu: %d", i, (int)r);
    if (i >= 32 && i < PS_KCACHE_FILE_HEADER) CHECKF(r == PS_KCACHE_FILE_BAD_CHECKSUM, "byte %zu: %d", i, (int)r);
    if (i >= PS_KCACHE_FILE_HEADER && i < PS_KCACHE_FILE_HEADER + key_size)
      CHECKF(r == PS_KCACHE_FILE_OTHER_KEY, "byte %zu: %d", i, (int)r);
    if (i >= PS_KCACHE_FILE_HEADER + key_size) CHECKF(r == PS_KCACHE_FILE_BAD_CHECKSUM, "byte %zu: %d", i, (int)r);
    file[i] ^= bit;
  }
  th_case("file format: another version, another key");
  file[8] = PS_KCACHE_FILE_VERSION + 1;
  CHECK(ps_kcache_file_check(file, size, (const uint8_t *)key, key_size, &at, &got) == PS_KCACHE_FILE_BAD_VERSION);
  file[8] = PS_KCACHE_FILE_VERSION;
  CHECK(ps_kcache_file_check(file, size, (const uint8_t *)"backend\0key bytes of some buile", key_size, &at, &got) ==
        PS_KCACHE_FILE_OTHER_KEY);
  CHECK(ps_kcache_file_check(file, size, (const uint8_t *)key, key_size - 1, &at, &got) == PS_KCACHE_FILE_OTHER_KEY);
  CHECK(ps_kcache_file_check(file, size, (const uint8_t *)key, key_size, &at, &got) == PS_KCACHE_FILE_OK);
  ps_host_free(ctx, file);

  th_case("file format: empty key and payload");
  file = ps_kcache_file_bytes(ctx, (const uint8_t *)"", 0, NULL, 0, &size);
  if (CHECK(file != NULL)) {
    CHECK(size == PS_KCACHE_FILE_HEADER);
    CHECK(ps_kcache_file_check(file, size, (const uint8_t *)"", 0, &at, &got) == PS_KCACHE_FILE_OK && got == 0);
  }
  ps_host_free(ctx, file);

  th_case("file names");
  uint8_t hash[PS_KCACHE_HASH_BYTES];
  for (int i = 0; i < PS_KCACHE_HASH_BYTES; i++) hash[i] = (uint8_t)(i * 17 + 1);
  char name[PS_KCACHE_NAME_BYTES];
  ps_kcache_file_name(hash, name);
  CHECKF(strcmp(name, "packscan-kc-0112233445566778899aabbccddeef00112233445566778899aabbccddeeff10.bin") == 0,
         "name %s", name);
}

/* ---- files in a directory -------------------------------------------------- */

/* Names in dir: how many, how many of the cache's, and temporary ones. */
static void count_files(const char *dir, int *all, int *ours, int *temps) {
  *all = *ours = *temps = 0;
  DIR *d = opendir(dir);
  if (!d) return;
  for (struct dirent *e; (e = readdir(d)) != NULL;) {
    if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
    ++*all;
    const size_t n = strlen(e->d_name);
    if (strncmp(e->d_name, PS_KCACHE_FILE_PREFIX, strlen(PS_KCACHE_FILE_PREFIX)) == 0 &&
        n == PS_KCACHE_NAME_BYTES - 1 && strcmp(e->d_name + n - 4, ".bin") == 0)
      ++*ours;
    if (strstr(e->d_name, ".tmp")) ++*temps;
  }
  closedir(d);
}

static void remove_dir(const char *dir) {
  DIR *d = opendir(dir);
  if (d) {
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
      if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0) continue;
      char path[4096];
      snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
      unlink(path);
    }
    closedir(d);
  }
  rmdir(dir);
}

static void write_file(const char *path, const void *bytes, size_t n) {
  FILE *f = fopen(path, "wb");
  if (!CHECKF(f != NULL, "cannot write %s", path)) return;
  CHECK(fwrite(bytes, 1, n, f) == n);
  fclose(f);
}

static size_t read_file(const char *path, uint8_t *buf, size_t cap) {
  FILE *f = fopen(path, "rb");
  if (!f) return 0;
  size_t n = fread(buf, 1, cap, f);
  fclose(f);
  return n;
}

/* Stores payload id under key id through a fresh context on dir. */
static ps_kcache_stats store_one(const char *dir, int id, const char *payload, int tiny) {
  ps_context *ctx = make_context(dir);
  ps_kcache *c = NULL;
  ps_kcache_stats s = {0};
  if (CHECK_OK(ctx, ps_kcache_create(ctx, 2, NULL, NULL, &c))) {
    if (tiny) ps_kcache_set_hash(c, tiny_hash);
    ps_kcache_key k = key_of(c, id);
    CHECK(ps_kcache_has_disk(c) == (dir != NULL));
    ps_kcache_store(c, &k, payload, strlen(payload));
    ps_kcache_key_free(c, &k);
    ps_kcache_destroy(c);
    s = ps_context_kcache_stats(ctx);
  }
  ps_context_destroy(ctx);
  return s;
}

/* Loads key id through a fresh context on dir; the payload as a string
 * (NULL when none) in buf. */
static ps_kcache_stats load_one(const char *dir, int id, char *buf, size_t cap, int tiny) {
  ps_context *ctx = make_context(dir);
  ps_kcache *c = NULL;
  ps_kcache_stats s = {0};
  buf[0] = '\0';
  if (CHECK_OK(ctx, ps_kcache_create(ctx, 2, NULL, NULL, &c))) {
    if (tiny) ps_kcache_set_hash(c, tiny_hash);
    ps_kcache_key k = key_of(c, id);
    size_t n = 0;
    char *p = ps_kcache_load(c, &k, &n);
    if (p && CHECK(n < cap)) {
      memcpy(buf, p, n);
      buf[n] = '\0';
    }
    ps_host_free(ctx, p);
    ps_kcache_key_free(c, &k);
    ps_kcache_destroy(c);
    s = ps_context_kcache_stats(ctx);
  }
  ps_context_destroy(ctx);
  return s;
}

static void test_directory(void) {
  char dir[] = "/tmp/packscan-kcache-test-XXXXXX";
  if (!CHECKF(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno))) return;
  char buf[256];
  int all, ours, temps;

  th_case("store and load through two contexts");
  char other[4200], foreign[4200];
  snprintf(other, sizeof other, "%s/other.txt", dir);
  snprintf(foreign, sizeof foreign, "%s/packscan-kc-not-ours.bin", dir);
  write_file(other, "keep me", 7);
  write_file(foreign, "keep me too", 11);
  ps_kcache_stats s = store_one(dir, 1, "payload one", 0);
  CHECK(s.disk_writes == 1 && s.disk_write_failures == 0);
  count_files(dir, &all, &ours, &temps);
  CHECKF(all == 3 && ours == 1 && temps == 0, "%d files, %d of the cache's, %d temporary", all, ours, temps);
  s = load_one(dir, 1, buf, sizeof buf, 0);
  CHECKF(strcmp(buf, "payload one") == 0, "loaded '%s'", buf);
  CHECK(s.disk_loads == 1 && s.disk_rejects == 0 && s.disk_misses == 0);
  s = load_one(dir, 2, buf, sizeof buf, 0);
  CHECK(buf[0] == '\0' && s.disk_misses == 1 && s.disk_loads == 0);
  s = load_one(NULL, 1, buf, sizeof buf, 0);
  CHECK(buf[0] == '\0' && s.disk_misses == 0 && s.disk_loads == 0);

  th_case("a file for another key under the same name (one-byte hash)");
  s = store_one(dir, 1, "tiny one", 1);
  CHECK(s.disk_writes == 1);
  s = load_one(dir, 3, buf, sizeof buf, 1);
  CHECK(buf[0] == '\0' && s.disk_rejects == 1 && s.disk_loads == 0);
  s = store_one(dir, 3, "tiny three", 1);
  CHECK(s.disk_writes == 1);
  s = load_one(dir, 3, buf, sizeof buf, 1);
  CHECKF(strcmp(buf, "tiny three") == 0, "loaded '%s'", buf);
  s = load_one(dir, 1, buf, sizeof buf, 1);
  CHECK(buf[0] == '\0' && s.disk_rejects == 1);
  count_files(dir, &all, &ours, &temps);
  CHECKF(all == 4 && ours == 2 && temps == 0, "%d files, %d of the cache's, %d temporary", all, ours, temps);

  th_case("a damaged file is ignored, then replaced");
  {
    ps_context *ctx = make_context(dir);
    ps_kcache *c = NULL;
    if (CHECK_OK(ctx, ps_kcache_create(ctx, 1, NULL, NULL, &c))) {
      ps_kcache_key k = key_of(c, 1);
      char name[PS_KCACHE_NAME_BYTES], path[4200];
      ps_kcache_key_digest(c, &k);
      ps_kcache_file_name(k.hash, name);
      snprintf(path, sizeof path, "%s/%s", dir, name);
      uint8_t bytes[512];
      const size_t n = read_file(path, bytes, sizeof bytes);
      CHECK(n > PS_KCACHE_FILE_HEADER);
      bytes[n - 1] ^= 0x10;
      write_file(path, bytes, n);
      size_t size = 0;
      void *p = ps_kcache_load(c, &k, &size);
      CHECK(p == NULL);
      ps_kcache_store(c, &k, "fixed", 5);
      p = ps_kcache_load(c, &k, &size);
      CHECK(p != NULL && size == 5 && memcmp(p, "fixed", 5) == 0);
      ps_host_free(ctx, p);
      s = ps_context_kcache_stats(ctx);
      CHECK(s.disk_rejects == 1 && s.disk_loads == 1 && s.disk_writes == 1);
      ps_kcache_key_free(c, &k);
      ps_kcache_destroy(c);
    }
    ps_context_destroy(ctx);
  }
  th_case("what is under the name but not this user's plain file is not loaded");
  {
    /* the path of key 1's file (one stored above, valid) */
    ps_context *ctx = make_context(dir);
    ps_kcache *c = NULL;
    char path[4200] = "", moved[4200];
    if (CHECK_OK(ctx, ps_kcache_create(ctx, 1, NULL, NULL, &c))) {
      ps_kcache_key k = key_of(c, 1);
      char name[PS_KCACHE_NAME_BYTES];
      ps_kcache_key_digest(c, &k);
      ps_kcache_file_name(k.hash, name);
      snprintf(path, sizeof path, "%s/%s", dir, name);
      ps_kcache_key_free(c, &k);
      ps_kcache_destroy(c);
    }
    ps_context_destroy(ctx);
    struct stat fst;
    CHECKF(stat(path, &fst) == 0 && (fst.st_mode & 0777) == 0600, "a stored file's mode is %o, want 600",
           (unsigned)(fst.st_mode & 0777));
    /* a valid file others may write is refused */
    CHECK(chmod(path, 0620) == 0);
    s = load_one(dir, 1, buf, sizeof buf, 0);
    CHECKF(buf[0] == '\0' && s.disk_rejects == 1 && s.disk_loads == 0, "group-writable file: loaded '%s'", buf);
    CHECK(chmod(path, 0600) == 0);
    /* a link under the name, to the valid file elsewhere, is not followed */
    snprintf(moved, sizeof moved, "%s/moved.bin", dir);
    CHECK(rename(path, moved) == 0);
    CHECK(symlink(moved, path) == 0);
    s = load_one(dir, 1, buf, sizeof buf, 0);
    CHECKF(buf[0] == '\0' && s.disk_loads == 0, "through a symbolic link: loaded '%s'", buf);
    CHECK(unlink(path) == 0);
    /* a FIFO under the name: no open blocks waiting for a writer (this test
     * would hang until CTest's timeout) */
    CHECK(mkfifo(path, 0600) == 0);
    s = load_one(dir, 1, buf, sizeof buf, 0);
    CHECKF(buf[0] == '\0' && s.disk_loads == 0 && s.disk_rejects == 1, "a FIFO: loaded '%s'", buf);
    CHECK(unlink(path) == 0);
    CHECK(rename(moved, path) == 0);
    s = load_one(dir, 1, buf, sizeof buf, 0);
    CHECKF(s.disk_loads == 1, "the file back in place is not loaded ('%s')", buf);
  }

  th_case("a relative directory stays the one named at creation");
  {
    char cwd[4096];
    if (CHECK(getcwd(cwd, sizeof cwd) != NULL) && CHECK(chdir(dir) == 0)) {
      CHECK(mkdir("rel", 0700) == 0);
      ps_context *ctx = make_context("rel");
      CHECK(chdir(cwd) == 0); /* the working directory moves after creation */
      ps_kcache *c = NULL;
      if (CHECK_OK(ctx, ps_kcache_create(ctx, 1, NULL, NULL, &c))) {
        ps_kcache_key k = key_of(c, 7);
        ps_kcache_store(c, &k, "rel", 3);
        ps_kcache_key_free(c, &k);
        ps_kcache_destroy(c);
      }
      ps_context_destroy(ctx);
      char rel[4200];
      snprintf(rel, sizeof rel, "%s/rel", dir);
      count_files(rel, &all, &ours, &temps);
      CHECKF(all == 1 && ours == 1, "%d files in %s after a chdir, want the one stored", all, rel);
      struct stat rst;
      CHECK(stat("rel", &rst) != 0); /* nothing was created under the new working directory */
      remove_dir(rel);
    }
  }

  th_case("other files are left alone");
  CHECK(read_file(other, (uint8_t *)buf, sizeof buf) == 7 && memcmp(buf, "keep me", 7) == 0);
  CHECK(read_file(foreign, (uint8_t *)buf, sizeof buf) == 11 && memcmp(buf, "keep me too", 11) == 0);

  th_case("a directory removed after the context was created");
  char missing[4200];
  snprintf(missing, sizeof missing, "%s/missing", dir);
  CHECK(mkdir(missing, 0700) == 0);
  {
    ps_context *ctx = make_context(missing);
    CHECK(rmdir(missing) == 0);
    ps_kcache *c = NULL;
    if (CHECK_OK(ctx, ps_kcache_create(ctx, 1, NULL, NULL, &c))) {
      ps_kcache_key k = key_of(c, 1);
      size_t size = 0;
      CHECK(ps_kcache_load(c, &k, &size) == NULL);
      ps_kcache_store(c, &k, "x", 1);
      s = ps_context_kcache_stats(ctx);
      CHECK(s.disk_misses == 1 && s.disk_write_failures == 1 && s.disk_writes == 0);
      ps_kcache_key_free(c, &k);
      ps_kcache_destroy(c);
    }
    ps_context_destroy(ctx);
  }
  th_case("a directory that does not exist at creation");
  s = store_one(missing, 1, "x", 0);
  CHECK(s.disk_write_failures == 1 && s.disk_writes == 0);

  th_case("a read-only directory");
  char readonly[4200];
  snprintf(readonly, sizeof readonly, "%s/readonly", dir);
  CHECK(mkdir(readonly, 0500) == 0);
  if (access(readonly, W_OK) == 0) {
    printf("note: %s is writable by this user (root): the read-only case runs on /proc/self only\n", readonly);
  } else {
    s = store_one(readonly, 1, "x", 0);
    CHECK(s.disk_write_failures == 1 && s.disk_writes == 0);
    count_files(readonly, &all, &ours, &temps);
    CHECK(all == 0);
  }
  rmdir(readonly);
  struct stat st;
  if (stat("/proc/self", &st) == 0 && S_ISDIR(st.st_mode)) {
    th_case("a directory nobody can write (/proc/self)");
    s = store_one("/proc/self", 1, "x", 0);
    CHECK(s.disk_write_failures == 1 && s.disk_writes == 0);
    s = load_one("/proc/self", 1, buf, sizeof buf, 0);
    CHECK(buf[0] == '\0' && s.disk_misses == 1);
  }
  remove_dir(dir);
}

/* ---- the option at context creation -------------------------------------- */

static void test_option(void) {
  char dir[] = "/tmp/packscan-kcache-opt-XXXXXX";
  if (!CHECKF(mkdtemp(dir) != NULL, "mkdtemp: %s", strerror(errno))) return;
  char file[4200];
  snprintf(file, sizeof file, "%s/a-file", dir);
  write_file(file, "x", 1);
  ps_context_options o;
  ps_context_options_init(&o);
  CHECK(o.kernel_cache_dir == NULL);
  o.backend = "reference";
  char err[1024];
  ps_context *ctx = (ps_context *)&o; /* must become NULL */

  th_case("kernel_cache_dir is a file");
  o.kernel_cache_dir = file;
  CHECK_STATUS(NULL, ps_context_create(&o, err, sizeof err, &ctx), PS_ERR_INVALID_ARGUMENT);
  CHECK(ctx == NULL);
  CHECKF(strstr(err, "kernel_cache_dir") && strstr(err, file) && strstr(err, "not a directory"), "message: %s", err);

  th_case("kernel_cache_dir is empty");
  o.kernel_cache_dir = "";
  CHECK_STATUS(NULL, ps_context_create(&o, err, sizeof err, &ctx), PS_ERR_INVALID_ARGUMENT);
  CHECKF(strstr(err, "kernel_cache_dir") && strstr(err, "empty"), "message: %s", err);

  th_case("struct_size ends before kernel_cache_dir, or inside it");
  o.kernel_cache_dir = file; /* not read */
  const uint32_t sizes[2] = {(uint32_t)offsetof(ps_context_options, kernel_cache_dir),
                             (uint32_t)(offsetof(ps_context_options, kernel_cache_dir) + sizeof(char *) / 2)};
  for (int i = 0; i < 2; i++) {
    o.struct_size = sizes[i];
    ctx = NULL;
    if (CHECKF(ps_context_create(&o, err, sizeof err, &ctx) == PS_OK, "struct_size %u: %s", sizes[i], err)) {
      ps_kcache *c = NULL;
      if (CHECK_OK(ctx, ps_kcache_create(ctx, 1, NULL, NULL, &c))) CHECK(!ps_kcache_has_disk(c));
      ps_kcache_destroy(c);
    }
    ps_context_destroy(ctx);
  }
  o.struct_size = sizeof o;

  th_case("the path is copied");
  char path[4200];
  snprintf(path, sizeof path, "%s", dir);
  o.kernel_cache_dir = path;
  ctx = NULL;
  if (CHECK_OK(NULL, ps_context_create(&o, err, sizeof err, &ctx))) {
    memset(path, 0, sizeof path);
    ps_kcache *c = NULL;
    if (CHECK_OK(ctx, ps_kcache_create(ctx, 1, NULL, NULL, &c))) {
      ps_kcache_key k = key_of(c, 9);
      ps_kcache_store(c, &k, "nine", 4);
      CHECK(ps_context_kcache_stats(ctx).disk_writes == 1);
      ps_kcache_key_free(c, &k);
    }
    ps_kcache_destroy(c);
  }
  ps_context_destroy(ctx);
  remove_dir(dir);
}

int main(int argc, char **argv) {
  th_init(argc, argv, "kcache");
  test_sha256();
  ps_context *ctx = make_context(NULL);
  test_memory_named(ctx, 0);
  test_memory_named(ctx, 1);
  test_memory_random(ctx);
  test_key_parts(ctx);
  test_file_format(ctx);
  ps_context_destroy(ctx);
  test_directory();
  test_option();
  return th_finish();
}
