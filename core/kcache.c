/* The kernel cache in memory (kcache.h): keys, least recently used out. */
#include "kcache.h"

#include <string.h>

#include "internal.h"
#include "sha256.h"

typedef struct kcache_entry {
  ps_kcache_key key; /* bytes NULL: a free entry */
  void *value;
  uint64_t last_use;
} kcache_entry;

struct ps_kcache {
  ps_context *ctx;
  ps_kcache_destroy_fn destroy;
  void *user;
  ps_kcache_hash_fn hash; /* a test's, or NULL */
  size_t capacity;
  size_t used; /* entries [0, used) hold values */
  uint64_t uses;
  kcache_entry *entries;
};

/* The in-memory hash: 8 bytes at a time through a multiply and a shift
 * (keys are a few kilobytes: this is a small part of a lookup). */
static uint64_t fast_hash(const uint8_t *p, size_t size) {
  uint64_t h = 0x9e3779b97f4a7c15u ^ size;
  for (; size >= 8; p += 8, size -= 8) {
    uint64_t w = 0;
    for (int i = 7; i >= 0; i--) w = w << 8 | p[i];
    h = (h ^ w) * 0xff51afd7ed558ccdu;
    h ^= h >> 32;
  }
  uint64_t w = 0;
  for (size_t i = size; i-- > 0;) w = w << 8 | p[i];
  h = (h ^ w) * 0xc4ceb9fe1a85ec53u;
  return h ^ h >> 29;
}

static uint64_t first_u64(const uint8_t *b) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; i--) v = v << 8 | b[i];
  return v;
}

ps_status ps_kcache_create(ps_context *ctx, size_t capacity, ps_kcache_destroy_fn destroy, void *user,
                           ps_kcache **out) {
  *out = NULL;
  if (capacity == 0) return ps_set_error(ctx, PS_ERR_INVALID_ARGUMENT, "kernel cache: capacity is 0; expected >= 1");
  ps_kcache *c = ps_host_alloc(ctx, sizeof *c);
  kcache_entry *entries =
      capacity <= SIZE_MAX / sizeof *entries ? ps_host_alloc(ctx, capacity * sizeof *entries) : NULL;
  if (!c || !entries) {
    ps_host_free(ctx, c);
    ps_host_free(ctx, entries);
    return ps_set_error(ctx, PS_ERR_OUT_OF_MEMORY, "kernel cache: %zu entries", capacity);
  }
  memset(c, 0, sizeof *c);
  memset(entries, 0, capacity * sizeof *entries);
  c->ctx = ctx;
  c->destroy = destroy;
  c->user = user;
  c->capacity = capacity;
  c->entries = entries;
  *out = c;
  return PS_OK;
}

static void release(ps_kcache *c, kcache_entry *e) {
  if (c->destroy) c->destroy(c->user, e->value);
  ps_host_free(c->ctx, e->key.bytes);
  memset(e, 0, sizeof *e);
}

void ps_kcache_clear(ps_kcache *c) {
  if (!c) return;
  for (size_t i = 0; i < c->used; i++) release(c, &c->entries[i]);
  c->used = 0;
}

void ps_kcache_destroy(ps_kcache *c) {
  if (!c) return;
  ps_kcache_clear(c);
  ps_host_free(c->ctx, c->entries);
  ps_host_free(c->ctx, c);
}

size_t ps_kcache_size(const ps_kcache *c) { return c ? c->used : 0; }

void ps_kcache_set_hash(ps_kcache *c, ps_kcache_hash_fn hash) { c->hash = hash; }

ps_status ps_kcache_key_make(ps_kcache *c, const ps_kcache_part *parts, size_t n_parts, ps_kcache_key *key) {
  memset(key, 0, sizeof *key);
  size_t size = 0;
  for (size_t i = 0; i < n_parts; i++) {
    const size_t part = strlen(parts[i].name) + 1 + 8;
    if (parts[i].size > SIZE_MAX - part || size > SIZE_MAX - part - parts[i].size)
      return ps_set_error(c->ctx, PS_ERR_OUT_OF_MEMORY, "kernel cache: key part '%s' of %zu bytes", parts[i].name,
                          parts[i].size);
    size += part + parts[i].size;
  }
  uint8_t *b = ps_host_alloc(c->ctx, size ? size : 1);
  if (!b) return ps_set_error(c->ctx, PS_ERR_OUT_OF_MEMORY, "kernel cache: key of %zu bytes", size);
  size_t at = 0;
  for (size_t i = 0; i < n_parts; i++) {
    const size_t name = strlen(parts[i].name) + 1;
    memcpy(b + at, parts[i].name, name);
    at += name;
    for (int k = 0; k < 8; k++) b[at++] = (uint8_t)((uint64_t)parts[i].size >> (8 * k));
    if (parts[i].size) memcpy(b + at, parts[i].data, parts[i].size);
    at += parts[i].size;
  }
  key->bytes = b;
  key->size = size;
  if (c->hash) {
    ps_kcache_key_digest(c, key);
    key->tag = first_u64(key->hash);
  } else {
    key->tag = fast_hash(b, size);
  }
  return PS_OK;
}

void ps_kcache_key_digest(const ps_kcache *c, ps_kcache_key *key) {
  if (key->hashed) return;
  if (c->hash)
    c->hash(key->bytes, key->size, key->hash);
  else
    ps_sha256(key->bytes, key->size, key->hash);
  key->hashed = 1;
}

void ps_kcache_key_free(ps_kcache *c, ps_kcache_key *key) {
  ps_host_free(c->ctx, key->bytes);
  key->bytes = NULL;
  key->size = 0;
}

static int same_key(const ps_kcache_key *a, const ps_kcache_key *b) {
  return a->tag == b->tag && a->size == b->size && memcmp(a->bytes, b->bytes, a->size) == 0;
}

void *ps_kcache_get(ps_kcache *c, const ps_kcache_key *key) {
  for (size_t i = 0; i < c->used; i++) {
    kcache_entry *e = &c->entries[i];
    if (!same_key(&e->key, key)) continue;
    e->last_use = ++c->uses;
    c->ctx->kcache_stats.hits++;
    return e->value;
  }
  c->ctx->kcache_stats.misses++;
  return NULL;
}

void ps_kcache_put(ps_kcache *c, ps_kcache_key *key, void *value) {
  size_t slot = c->used;
  if (slot == c->capacity) {
    slot = 0;
    for (size_t i = 1; i < c->used; i++)
      if (c->entries[i].last_use < c->entries[slot].last_use) slot = i;
    release(c, &c->entries[slot]);
    c->ctx->kcache_stats.evictions++;
  } else {
    c->used++;
  }
  kcache_entry *e = &c->entries[slot];
  e->key = *key;
  e->value = value;
  e->last_use = ++c->uses;
  memset(key, 0, sizeof *key);
}

void ps_kcache_count_build(ps_kcache *c) { c->ctx->kcache_stats.builds++; }

void ps_kcache_count_refused(ps_kcache *c) { c->ctx->kcache_stats.disk_refused++; }

void ps_context_count_spec_fallback(ps_context *ctx) { ctx->kcache_stats.spec_fallbacks++; }

ps_kcache_stats ps_context_kcache_stats(const ps_context *ctx) {
  ps_kcache_stats zero;
  memset(&zero, 0, sizeof zero);
  return ctx ? ctx->kcache_stats : zero;
}

ps_context *ps_kcache_context(const ps_kcache *c) { return c->ctx; }
