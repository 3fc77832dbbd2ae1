/* The kernel cache on disk (kcache.h): one file per key, written whole under
 * a temporary name and renamed into place; any file that fails a check is
 * ignored. POSIX file calls: open with O_EXCL for the temporary file,
 * rename, stat. */
#define _POSIX_C_SOURCE 200809L

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "internal.h"
#include "kcache.h"
#include "sha256.h"

static void put_u32(uint8_t *p, uint32_t v) {
  for (int i = 0; i < 4; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static void put_u64(uint8_t *p, uint64_t v) {
  for (int i = 0; i < 8; i++) p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get_u32(const uint8_t *p) {
  uint32_t v = 0;
  for (int i = 3; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

static uint64_t get_u64(const uint8_t *p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | p[i];
  return v;
}

/* The first 8 bytes of SHA-256(key, payload). */
static uint64_t checksum(const uint8_t *key, size_t key_size, const void *payload, size_t size) {
  ps_sha256_ctx s;
  uint8_t d[PS_SHA256_BYTES];
  ps_sha256_init(&s);
  ps_sha256_update(&s, key, key_size);
  ps_sha256_update(&s, payload, size);
  ps_sha256_final(&s, d);
  return get_u64(d);
}

/* Header: magic (8), version (4), reserved 0 (4), key size (8), payload
 * size (8), checksum (8). */
ps_kcache_file_result ps_kcache_file_check(const uint8_t *file, size_t size, const uint8_t *key, size_t key_size,
                                           size_t *payload_at, size_t *payload_size) {
  *payload_at = *payload_size = 0;
  if (size < PS_KCACHE_FILE_HEADER) return PS_KCACHE_FILE_TRUNCATED;
  if (memcmp(file, PS_KCACHE_FILE_MAGIC, 8) != 0) return PS_KCACHE_FILE_BAD_MAGIC;
  if (get_u32(file + 8) != PS_KCACHE_FILE_VERSION || get_u32(file + 12) != 0) return PS_KCACHE_FILE_BAD_VERSION;
  const uint64_t file_key = get_u64(file + 16), file_payload = get_u64(file + 24);
  const uint64_t body = size - PS_KCACHE_FILE_HEADER;
  if (file_key > body || file_payload > body - file_key) return PS_KCACHE_FILE_TRUNCATED;
  if (file_payload < body - file_key) return PS_KCACHE_FILE_TOO_LONG;
  const uint8_t *k = file + PS_KCACHE_FILE_HEADER;
  if (file_key != key_size || memcmp(k, key, key_size) != 0) return PS_KCACHE_FILE_OTHER_KEY;
  if (checksum(k, key_size, k + key_size, (size_t)file_payload) != get_u64(file + 32))
    return PS_KCACHE_FILE_BAD_CHECKSUM;
  *payload_at = PS_KCACHE_FILE_HEADER + key_size;
  *payload_size = (size_t)file_payload;
  return PS_KCACHE_FILE_OK;
}

uint8_t *ps_kcache_file_bytes(ps_context *ctx, const uint8_t *key, size_t key_size, const void *payload, size_t size,
                              size_t *file_size) {
  *file_size = 0;
  if (key_size > SIZE_MAX - PS_KCACHE_FILE_HEADER || size > SIZE_MAX - PS_KCACHE_FILE_HEADER - key_size) return NULL;
  const size_t total = PS_KCACHE_FILE_HEADER + key_size + size;
  uint8_t *b = ps_host_alloc(ctx, total);
  if (!b) return NULL;
  memcpy(b, PS_KCACHE_FILE_MAGIC, 8);
  put_u32(b + 8, PS_KCACHE_FILE_VERSION);
  put_u32(b + 12, 0);
  put_u64(b + 16, key_size);
  put_u64(b + 24, size);
  put_u64(b + 32, checksum(key, key_size, payload, size));
  memcpy(b + PS_KCACHE_FILE_HEADER, key, key_size);
  if (size) memcpy(b + PS_KCACHE_FILE_HEADER + key_size, payload, size);
  *file_size = total;
  return b;
}

static void hex(const uint8_t *bytes, size_t n, char *out) {
  static const char digits[] = "0123456789abcdef";
  for (size_t i = 0; i < n; i++) {
    out[2 * i] = digits[bytes[i] >> 4];
    out[2 * i + 1] = digits[bytes[i] & 15];
  }
  out[2 * n] = '\0';
}

void ps_kcache_file_name(const uint8_t hash[PS_KCACHE_HASH_BYTES], char name[PS_KCACHE_NAME_BYTES]) {
  const size_t prefix = sizeof PS_KCACHE_FILE_PREFIX - 1;
  memcpy(name, PS_KCACHE_FILE_PREFIX, prefix);
  hex(hash, PS_KCACHE_HASH_BYTES, name + prefix);
  memcpy(name + prefix + 2 * PS_KCACHE_HASH_BYTES, PS_KCACHE_FILE_SUFFIX, sizeof PS_KCACHE_FILE_SUFFIX);
}

int ps_kcache_has_disk(const ps_kcache *c) { return ps_kcache_context(c)->kernel_cache_dir != NULL; }

char *ps_kcache_dir_copy(const ps_allocator *a, const char *path) {
  char cwd[4096];
  const int relative = path[0] != '/' && getcwd(cwd, sizeof cwd) != NULL;
  const size_t c = relative ? strlen(cwd) : 0, n = strlen(path);
  char *p = ps_alloc_with(a, c + 1 + n + 1);
  if (!p) return NULL;
  if (relative) {
    memcpy(p, cwd, c);
    p[c] = '/';
    memcpy(p + c + 1, path, n + 1);
  } else {
    memcpy(p, path, n + 1);
  }
  return p;
}

int ps_kcache_path_is_not_dir(const char *path) {
  struct stat st;
  return stat(path, &st) == 0 && !S_ISDIR(st.st_mode);
}

/* dir "/" name[suffix], ps_host_alloc'd; NULL when out of memory. */
static char *path_of(ps_context *ctx, const char *dir, const char *name, const char *suffix) {
  const size_t d = strlen(dir), n = strlen(name), s = strlen(suffix);
  char *p = ps_host_alloc(ctx, d + 1 + n + s + 1);
  if (!p) return NULL;
  memcpy(p, dir, d);
  p[d] = '/';
  memcpy(p + d + 1, name, n);
  memcpy(p + d + 1 + n, suffix, s + 1);
  return p;
}

void *ps_kcache_load(ps_kcache *c, ps_kcache_key *key, size_t *size) {
  *size = 0;
  ps_context *ctx = ps_kcache_context(c);
  if (!ctx->kernel_cache_dir) return NULL;
  ps_kcache_key_digest(c, key);
  char name[PS_KCACHE_NAME_BYTES];
  ps_kcache_file_name(key->hash, name);
  char *path = path_of(ctx, ctx->kernel_cache_dir, name, "");
  /* Not through a link, never blocking on a FIFO planted under the name. */
  int fd = path ? open(path, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) : -1;
  ps_host_free(ctx, path);
  struct stat st;
  if (fd < 0 || fstat(fd, &st) != 0) {
    if (fd >= 0) close(fd);
    ctx->kcache_stats.disk_misses++;
    return NULL;
  }
  /* A binary becomes code in this process: only a plain file of this user
   * that nobody else may write (another user's file in a shared directory is
   * rebuilt over, never run). */
  if (!S_ISREG(st.st_mode) || st.st_uid != geteuid() || (st.st_mode & (S_IWGRP | S_IWOTH)) != 0) {
    close(fd);
    ctx->kcache_stats.disk_rejects++;
    return NULL;
  }
  uint8_t *file = NULL;
  size_t got = 0;
  if (st.st_size >= 0 && (uint64_t)st.st_size <= PS_KCACHE_FILE_MAX_BYTES) {
    const size_t want = (size_t)st.st_size;
    file = ps_host_alloc(ctx, want ? want : 1);
    while (file && got < want) {
      ssize_t r = read(fd, file + got, want - got);
      if (r < 0 && errno == EINTR) continue;
      if (r <= 0) break;
      got += (size_t)r;
    }
  }
  close(fd);
  size_t at = 0, payload = 0;
  if (!file || ps_kcache_file_check(file, got, key->bytes, key->size, &at, &payload) != PS_KCACHE_FILE_OK) {
    ps_host_free(ctx, file);
    ctx->kcache_stats.disk_rejects++;
    return NULL;
  }
  memmove(file, file + at, payload);
  ctx->kcache_stats.disk_loads++;
  *size = payload;
  return file;
}

/* Writes all of bytes to fd. */
static int write_all(int fd, const uint8_t *bytes, size_t size) {
  while (size) {
    ssize_t w = write(fd, bytes, size);
    if (w < 0 && errno == EINTR) continue;
    if (w <= 0) return 0;
    bytes += w;
    size -= (size_t)w;
  }
  return 1;
}

void ps_kcache_store(ps_kcache *c, ps_kcache_key *key, const void *payload, size_t size) {
  ps_context *ctx = ps_kcache_context(c);
  if (!ctx->kernel_cache_dir) return;
  ps_kcache_key_digest(c, key);
  size_t file_size = 0;
  uint8_t *file = ps_kcache_file_bytes(ctx, key->bytes, key->size, payload, size, &file_size);
  char name[PS_KCACHE_NAME_BYTES];
  ps_kcache_file_name(key->hash, name);
  char *final_path = path_of(ctx, ctx->kernel_cache_dir, name, "");
  /* The temporary name: the file's own name, ".tmp" and 16 hex digits
   * unique to this process, context and store. */
  const uint64_t serial = ++ctx->kcache_serial;
  const uint64_t unique[3] = {(uint64_t)getpid(), (uint64_t)time(NULL), (uint64_t)(uintptr_t)ctx ^ serial << 32};
  uint8_t mix[PS_SHA256_BYTES];
  ps_sha256(unique, sizeof unique, mix);
  char suffix[4 + 16 + 1] = ".tmp";
  hex(mix, 8, suffix + 4);
  char *temp_path = path_of(ctx, ctx->kernel_cache_dir, name, suffix);
  int ok = 0;
  if (file && final_path && temp_path) {
    /* 0600: a file's key holds the query's literals. */
    int fd = open(temp_path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);
    if (fd >= 0) {
      ok = write_all(fd, file, file_size);
      ok = close(fd) == 0 && ok;
      ok = ok && rename(temp_path, final_path) == 0;
      if (!ok) (void)unlink(temp_path); /* the file this call created, never another */
    }
  }
  if (ok)
    ctx->kcache_stats.disk_writes++;
  else
    ctx->kcache_stats.disk_write_failures++;
  ps_host_free(ctx, file);
  ps_host_free(ctx, final_path);
  ps_host_free(ctx, temp_path);
}
