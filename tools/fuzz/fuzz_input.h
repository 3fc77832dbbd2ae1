/* The fuzz targets' reader of their input as a little program: `take`
 * returns the next `bytes` bytes as a little-endian number, zeros once the
 * input is spent (so every input is a whole program). */
#ifndef PS_FUZZ_INPUT_H
#define PS_FUZZ_INPUT_H

#include <stddef.h>
#include <stdint.h>

typedef struct {
  const uint8_t *p;
  size_t left;
} input;

static inline uint64_t take(input *in, int bytes) {
  uint64_t v = 0;
  for (int i = 0; i < bytes; i++) {
    uint8_t b = 0;
    if (in->left) {
      b = *in->p++;
      in->left--;
    }
    v |= (uint64_t)b << (8 * i);
  }
  return v;
}

#endif
