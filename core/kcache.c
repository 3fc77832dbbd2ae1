/* The kernel cache in memory (kcache.h): keys, least recently used out;
 * builds on a worker thread (POSIX threads; pthread_sigmask). */
#define _POSIX_C_SOURCE 200809L

#include "kcache.h"

#include <pthread.h>
#include <signal.h>
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
  ps_kcache *next_in_ctx; /* ctx->kcaches */
  /* The worker (kcache.h, builds in the background): `lock` guards `jobs`
   * (submission order), the jobs' state and `stop`; the worker waits on
   * `wake`, ps_context_wait_builds on `changed`. */
  int worker_started;
  pthread_t worker;
  pthread_mutex_t lock;
  pthread_cond_t wake, changed;
  int stop;
  ps_kcache_job *jobs;
};

enum { JOB_QUEUED = 0, JOB_BUILDING, JOB_DONE };

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
  c->next_in_ctx = ctx->kcaches;
  ctx->kcaches = c;
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

static void stop_worker(ps_kcache *c);

void ps_kcache_destroy(ps_kcache *c) {
  if (!c) return;
  stop_worker(c);
  for (ps_kcache **p = &c->ctx->kcaches; *p; p = &(*p)->next_in_ctx)
    if (*p == c) {
      *p = c->next_in_ctx;
      break;
    }
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

/* ---- builds in the background ------------------------------------------ */

static void *worker_main(void *arg) {
  ps_kcache *c = arg;
  pthread_mutex_lock(&c->lock);
  for (;;) {
    ps_kcache_job *j = c->jobs;
    while (j && j->state != JOB_QUEUED) j = j->next;
    if (c->stop) break;
    if (!j) {
      pthread_cond_wait(&c->wake, &c->lock);
      continue;
    }
    j->state = JOB_BUILDING;
    pthread_cond_broadcast(&c->changed);
    pthread_mutex_unlock(&c->lock);
    j->build(j); /* the job is the worker's alone while it builds */
    pthread_mutex_lock(&c->lock);
    j->state = JOB_DONE;
    pthread_cond_broadcast(&c->changed);
  }
  pthread_mutex_unlock(&c->lock);
  return NULL;
}

/* Starts the worker: 0 when it could not be. Every signal is blocked in
 * it (a process's handlers run on its own threads, not on the library's). */
static int start_worker(ps_kcache *c) {
  if (c->worker_started) return 1;
  if (pthread_mutex_init(&c->lock, NULL) != 0) return 0;
  if (pthread_cond_init(&c->wake, NULL) != 0) {
    pthread_mutex_destroy(&c->lock);
    return 0;
  }
  if (pthread_cond_init(&c->changed, NULL) != 0) {
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->lock);
    return 0;
  }
  /* Before the thread exists: it reads both at once, under the lock. */
  c->stop = 0;
  c->jobs = NULL;
  sigset_t all, old;
  sigfillset(&all);
  const int masked = pthread_sigmask(SIG_SETMASK, &all, &old) == 0;
  const int started = pthread_create(&c->worker, NULL, worker_main, c) == 0;
  if (masked) pthread_sigmask(SIG_SETMASK, &old, NULL);
  if (!started) {
    pthread_cond_destroy(&c->changed);
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->lock);
    return 0;
  }
  c->worker_started = 1;
  return 1;
}

static void discard_job(ps_kcache *c, ps_kcache_job *j) {
  ps_kcache_key_free(c, &j->key);
  j->discard(j);
}

/* Joins the worker (after the build in progress) and discards every job. */
static void stop_worker(ps_kcache *c) {
  if (!c->worker_started) return;
  pthread_mutex_lock(&c->lock);
  c->stop = 1;
  pthread_cond_broadcast(&c->wake);
  pthread_mutex_unlock(&c->lock);
  pthread_join(c->worker, NULL);
  while (c->jobs) {
    ps_kcache_job *j = c->jobs;
    c->jobs = j->next;
    discard_job(c, j);
  }
  pthread_cond_destroy(&c->changed);
  pthread_cond_destroy(&c->wake);
  pthread_mutex_destroy(&c->lock);
  c->worker_started = 0;
}

ps_kcache_submit_result ps_kcache_submit(ps_kcache *c, ps_kcache_key *key, ps_kcache_job *job) {
  if (!start_worker(c)) return PS_KCACHE_NO_WORKER;
  ps_kcache_job *dropped = NULL;
  pthread_mutex_lock(&c->lock);
  size_t held = 0;
  ps_kcache_job **tail = &c->jobs, **oldest_done = NULL;
  for (; *tail; tail = &(*tail)->next) {
    held++;
    if (!oldest_done && (*tail)->state == JOB_DONE) oldest_done = tail;
  }
  if (held >= PS_KCACHE_MAX_JOBS) {
    if (!oldest_done) {
      pthread_mutex_unlock(&c->lock);
      return PS_KCACHE_BUSY;
    }
    dropped = *oldest_done;
    *oldest_done = dropped->next;
    if (tail == &dropped->next) tail = oldest_done;
  }
  job->key = *key;
  memset(key, 0, sizeof *key);
  job->state = JOB_QUEUED;
  job->next = NULL;
  *tail = job;
  pthread_cond_signal(&c->wake);
  pthread_mutex_unlock(&c->lock);
  if (dropped) discard_job(c, dropped);
  c->ctx->kcache_stats.async_builds++;
  return PS_KCACHE_SUBMITTED;
}

ps_kcache_job *ps_kcache_job_find(ps_kcache *c, const ps_kcache_key *key, int *done) {
  *done = 0;
  if (!c->worker_started) return NULL;
  pthread_mutex_lock(&c->lock);
  ps_kcache_job **p = &c->jobs;
  while (*p && !same_key(&(*p)->key, key)) p = &(*p)->next;
  ps_kcache_job *j = *p;
  if (j && j->state == JOB_DONE) {
    *p = j->next;
    j->next = NULL;
    *done = 1;
  }
  pthread_mutex_unlock(&c->lock);
  if (*done) ps_kcache_key_free(c, &j->key);
  return j;
}

void ps_kcache_count_async_failed(ps_kcache *c) { c->ctx->kcache_stats.async_failed++; }

void ps_context_wait_builds(ps_context *ctx, int started) {
  for (ps_kcache *c = ctx->kcaches; c; c = c->next_in_ctx) {
    if (!c->worker_started) continue;
    pthread_mutex_lock(&c->lock);
    for (;;) {
      int waiting = 0;
      for (const ps_kcache_job *j = c->jobs; j && !waiting; j = j->next)
        waiting = j->state == JOB_QUEUED || (!started && j->state == JOB_BUILDING);
      if (!waiting) break;
      pthread_cond_wait(&c->changed, &c->lock);
    }
    pthread_mutex_unlock(&c->lock);
  }
}
