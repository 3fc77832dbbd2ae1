/*
 * The kernel cache: kernels specialized at run time (OpenCL programs built
 * from text, CUDA kernels compiled by NVRTC) kept per context, and
 * optionally on disk (ps_context_options.kernel_cache_dir).
 *
 * A key is the full description of a build: the kernel source, the build
 * options and the device's identity (platform and device names, driver and
 * compiler versions, architecture), written as named parts. In memory it is
 * found by a 64-bit hash of its bytes and then compared in full, so two keys
 * with the same hash are never confused; its SHA-256, computed only when a
 * file is read or written, names its file. A lookup that hits (every call
 * after the first of a kernel) thus costs a fast hash and one comparison,
 * not a SHA-256 of the key. Values are opaque backend objects; the cache calls the
 * destroy callback it was created with when it lets one go (least recently
 * used first, at capacity; on clear and destroy).
 *
 * On disk, one file per key, named "packscan-kc-<64 hex digits>.bin" after
 * the key's hash: a 40-byte header (magic "PSKCACHE", format version, key
 * length, payload length, the first 8 bytes of the SHA-256 of key and
 * payload; integers little-endian), the full key, the payload (the
 * backend's binary). Files are written to a temporary name of the same
 * prefix in the same directory and renamed into place, so a reader sees a
 * whole file or none. A file that is truncated, corrupt, of another format
 * version or for another key is ignored (and replaced by the next store);
 * a directory that is missing or unwritable only costs the store. The cache
 * touches no other file.
 *
 * One context is used by one thread at a time (packscan.h), and so is its
 * cache, but for the jobs of its worker thread (below), which have a lock
 * of their own. Contexts of one or several processes may share a directory: each
 * writes whole files under a name of its own before the rename.
 */
#ifndef PS_KCACHE_H
#define PS_KCACHE_H

#include <stddef.h>
#include <stdint.h>

#include "backend.h"

#define PS_KCACHE_HASH_BYTES 32

/* File format (see above). */
#define PS_KCACHE_FILE_MAGIC "PSKCACHE"
#define PS_KCACHE_FILE_VERSION 1u
#define PS_KCACHE_FILE_HEADER 40u
#define PS_KCACHE_FILE_PREFIX "packscan-kc-"
#define PS_KCACHE_FILE_SUFFIX ".bin"
/* A file larger than this is not read (payloads are kernel binaries). */
#define PS_KCACHE_FILE_MAX_BYTES ((uint64_t)1 << 30)

/* What a context's cache did, counted since the context was created. */
typedef struct ps_kcache_stats {
  uint64_t hits;                /* found in memory */
  uint64_t misses;              /* not in memory */
  uint64_t evictions;           /* let go at capacity, least recently used first */
  uint64_t builds;              /* built from source by the backend */
  uint64_t disk_loads;          /* files read whose key and checksum matched */
  uint64_t disk_misses;         /* no file for the key (or it could not be read) */
  uint64_t disk_rejects;        /* files ignored: truncated, corrupt, another version or key */
  uint64_t disk_refused;        /* payloads read that the driver would not load (then built) */
  uint64_t disk_writes;         /* files written */
  uint64_t disk_write_failures; /* stores that did not happen (directory missing, unwritable, full) */
  uint64_t spec_fallbacks;      /* calls that asked for a specialized build and ran the generic one */
  uint64_t async_builds;        /* builds handed to the cache's worker thread (ps_kcache_submit) */
  uint64_t async_failed;        /* of those, builds that failed (picked up; the generic kernel stays) */
} ps_kcache_stats;

typedef struct ps_kcache ps_kcache;

/* Lets a value go; `user` is the pointer given to ps_kcache_create. */
typedef void (*ps_kcache_destroy_fn)(void *user, void *value);

/* A test's hash of a key's bytes, in place of both of the cache's. */
typedef void (*ps_kcache_hash_fn)(const uint8_t *bytes, size_t size, uint8_t out[PS_KCACHE_HASH_BYTES]);

/* A key: its bytes (ps_host_alloc'd in the cache's context), their 64-bit
 * hash, and their SHA-256 once ps_kcache_key_digest computed it. */
typedef struct ps_kcache_key {
  uint64_t tag;
  uint8_t hash[PS_KCACHE_HASH_BYTES];
  int hashed;
  uint8_t *bytes;
  size_t size;
} ps_kcache_key;

/* One named part of a key (size 0 with data NULL is an empty part). */
typedef struct ps_kcache_part {
  const char *name;
  const void *data;
  size_t size;
} ps_kcache_part;

/* A cache of at most `capacity` (>= 1) values for ctx, which counts what it
 * does (ps_context_kcache_stats) and whose kernel_cache_dir it uses.
 * PS_ERR_OUT_OF_MEMORY or PS_ERR_INVALID_ARGUMENT (capacity 0), recorded. */
ps_status ps_kcache_create(ps_context *ctx, size_t capacity, ps_kcache_destroy_fn destroy, void *user, ps_kcache **out);
/* Destroys every value, then the cache. NULL is accepted. */
void ps_kcache_destroy(ps_kcache *c);
/* Destroys every value; the cache stays usable. */
void ps_kcache_clear(ps_kcache *c);
/* Values held now. */
size_t ps_kcache_size(const ps_kcache *c);
/* For tests: the hash keys are made with from now on, in memory (its first
 * 8 bytes) and in file names (NULL: the cache's own). A tiny hash forces
 * collisions in both. */
void ps_kcache_set_hash(ps_kcache *c, ps_kcache_hash_fn hash);

/* Writes the key of `parts` (each: its name, a NUL, its size as 8 bytes
 * little-endian, its bytes) into *key. PS_ERR_OUT_OF_MEMORY, recorded. */
ps_status ps_kcache_key_make(ps_kcache *c, const ps_kcache_part *parts, size_t n_parts, ps_kcache_key *key);
/* key->hash: SHA-256 of its bytes (or the test's hash), computed once. */
void ps_kcache_key_digest(const ps_kcache *c, ps_kcache_key *key);
/* Frees a key's bytes (after a hit, or when it was not put). */
void ps_kcache_key_free(ps_kcache *c, ps_kcache_key *key);

/* The value for key, made the most recently used; NULL when absent. */
void *ps_kcache_get(ps_kcache *c, const ps_kcache_key *key);
/* Adds value under key (not present), letting the least recently used value
 * go at capacity. Takes the key's bytes (key->bytes becomes NULL). Never
 * fails: entries are preallocated. */
void ps_kcache_put(ps_kcache *c, ps_kcache_key *key, void *value);

/* The backend built a value from source (counted). */
void ps_kcache_count_build(ps_kcache *c);
/* The backend could not use a payload ps_kcache_load returned (counted). */
void ps_kcache_count_refused(ps_kcache *c);

/* The context the cache belongs to. */
ps_context *ps_kcache_context(const ps_kcache *c);

/* Whether the context has a disk cache (kernel_cache_dir set). */
int ps_kcache_has_disk(const ps_kcache *c);
/* The payload stored for key in the disk cache (ps_host_alloc'd in the
 * cache's context; the caller frees it) and its *size; NULL when there is no
 * disk cache, no valid file for key, or no memory to read it. Never an
 * error: the caller builds instead. */
void *ps_kcache_load(ps_kcache *c, ps_kcache_key *key, size_t *size);
/* Stores payload for key in the disk cache, if there is one. Never fails:
 * a store that cannot happen is counted (disk_write_failures) and forgotten. */
void ps_kcache_store(ps_kcache *c, ps_kcache_key *key, const void *payload, size_t size);
/* 1 when path names something that exists and is not a directory (what
 * ps_context_create refuses as kernel_cache_dir), else 0. */
int ps_kcache_path_is_not_dir(const char *path);
/* A copy of kernel_cache_dir in memory from a: an absolute path as given, a
 * relative one joined to the working directory now (so a later chdir in any
 * thread cannot move the cache); NULL when out of memory. */
char *ps_kcache_dir_copy(const ps_allocator *a, const char *path);

/* What ps_kcache_file_check finds in a file's bytes. */
typedef enum ps_kcache_file_result {
  PS_KCACHE_FILE_OK = 0,
  PS_KCACHE_FILE_TRUNCATED, /* shorter than its header says (or than a header) */
  PS_KCACHE_FILE_TOO_LONG,  /* bytes after the payload */
  PS_KCACHE_FILE_BAD_MAGIC,
  PS_KCACHE_FILE_BAD_VERSION,
  PS_KCACHE_FILE_OTHER_KEY,
  PS_KCACHE_FILE_BAD_CHECKSUM
} ps_kcache_file_result;

/* Checks `size` bytes of a file against key; on PS_KCACHE_FILE_OK the
 * payload is file[*payload_at .. *payload_at + *payload_size). Pure: reads
 * only file[0..size) and key. */
ps_kcache_file_result ps_kcache_file_check(const uint8_t *file, size_t size, const uint8_t *key, size_t key_size,
                                           size_t *payload_at, size_t *payload_size);
/* The bytes of a file for key and payload: header, key, payload
 * (ps_host_alloc'd in ctx; NULL when out of memory). */
uint8_t *ps_kcache_file_bytes(ps_context *ctx, const uint8_t *key, size_t key_size, const void *payload, size_t size,
                              size_t *file_size);
/* The file name of a hash: prefix, 64 hex digits, suffix (and a NUL). */
#define PS_KCACHE_NAME_BYTES \
  (sizeof PS_KCACHE_FILE_PREFIX - 1 + 2 * PS_KCACHE_HASH_BYTES + sizeof PS_KCACHE_FILE_SUFFIX)
void ps_kcache_file_name(const uint8_t hash[PS_KCACHE_HASH_BYTES], char name[PS_KCACHE_NAME_BYTES]);

/* Builds in the background (ps_context_options.query_compile): a cache
 * owns at most one worker thread, started by its first ps_kcache_submit,
 * which runs the jobs handed to it one at a time, in order. A job is the
 * backend's struct with a ps_kcache_job first; the backend fills it on the
 * caller's thread (everything the build needs, allocated there), the
 * worker runs `build`, which reads and writes only the job (never the
 * context, its allocator or its message), and the caller's thread picks the
 * finished job up through ps_kcache_job_find and finishes it (driver
 * objects that belong to the caller's thread, the cache entry, the disk
 * file, the counters). The cache's lock orders the handoffs: a job's fields
 * are the worker's from submit until it is done, the caller's after.
 * ps_kcache_destroy stops the worker (joins it after the build in
 * progress, if any) and discards every job it still holds. */
typedef struct ps_kcache_job ps_kcache_job;
typedef void (*ps_kcache_job_fn)(ps_kcache_job *job);
struct ps_kcache_job {
  ps_kcache_job_fn build;   /* on the worker thread */
  ps_kcache_job_fn discard; /* on the caller's thread: releases and frees a job no one picked up */
  /* the cache's */
  ps_kcache_key key;
  int state;
  ps_kcache_job *next;
};

/* Most jobs a cache holds (queued, building or done and not picked up);
 * past it the oldest finished job is discarded, and when every job is
 * still to build, a submit is refused. */
#define PS_KCACHE_MAX_JOBS 16

typedef enum ps_kcache_submit_result {
  PS_KCACHE_SUBMITTED = 0, /* the worker will build it; the cache owns the job and the key's bytes */
  PS_KCACHE_BUSY,          /* PS_KCACHE_MAX_JOBS still to build: not taken (try again later) */
  PS_KCACHE_NO_WORKER      /* no thread could be started: not taken (build on the caller's thread) */
} ps_kcache_submit_result;

/* Hands job (its build and discard set) to the worker, under key (whose
 * bytes the cache takes on PS_KCACHE_SUBMITTED; key->bytes becomes NULL).
 * Counted (async_builds). The caller must have found no job for the key. */
ps_kcache_submit_result ps_kcache_submit(ps_kcache *c, ps_kcache_key *key, ps_kcache_job *job);
/* The job for key: NULL when none; with *done 0 one still queued or
 * building (the caller must not touch it); with *done 1 a finished one,
 * which is now the caller's (taken out of the cache, its key's bytes
 * freed): it finishes the build and then frees the job itself. */
ps_kcache_job *ps_kcache_job_find(ps_kcache *c, const ps_kcache_key *key, int *done);
/* The build failed (counted: async_failed). */
void ps_kcache_count_async_failed(ps_kcache *c);

/* ctx's counters (zero for NULL). */
ps_kcache_stats ps_context_kcache_stats(const ps_context *ctx);
/* A call asked for a specialized build and ran the generic kernel (counted). */
void ps_context_count_spec_fallback(ps_context *ctx);

#endif /* PS_KCACHE_H */
