/* SHA-256 (FIPS 180-4), for the kernel cache's keys and file checksums
 * (core/kcache.h): a strong hash keeps distinct keys apart in file names. */
#ifndef PS_SHA256_H
#define PS_SHA256_H

#include <stddef.h>
#include <stdint.h>

#define PS_SHA256_BYTES 32

typedef struct ps_sha256_ctx {
  uint32_t h[8];
  uint64_t bytes; /* message length so far */
  uint8_t block[64];
  size_t used; /* bytes of block filled */
} ps_sha256_ctx;

void ps_sha256_init(ps_sha256_ctx *s);
void ps_sha256_update(ps_sha256_ctx *s, const void *data, size_t size);
void ps_sha256_final(ps_sha256_ctx *s, uint8_t out[PS_SHA256_BYTES]);
/* The digest of one buffer. */
void ps_sha256(const void *data, size_t size, uint8_t out[PS_SHA256_BYTES]);

#endif /* PS_SHA256_H */
