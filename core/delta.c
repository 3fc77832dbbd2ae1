/* DELTA columns on the host: the check of a column's block headers, and a
 * chunk of blocks laid out as one stream for a host-resident column's
 * staging (the layout is kernels_shared/ps_layout.h). The encoder is in
 * encode.c. */
#include <inttypes.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static uint32_t le32(const uint8_t *p) {
  return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t le64(const uint8_t *p) { return (uint64_t)le32(p) | (uint64_t)le32(p + 4) << 32; }

ps_status ps_delta_check(const uint8_t *headers, uint64_t n, uint64_t data_size, const char *what, char *buf,
                         size_t size) {
  const uint64_t blocks = ps_delta_blocks(n);
  if (blocks > UINT64_MAX / PS_DELTA_HEADER_BYTES || data_size < blocks * PS_DELTA_HEADER_BYTES)
    return ps_set_error_buf(buf, size, PS_ERR_INVALID_ARGUMENT,
                            "%s.data_size is %" PRIu64 "; a DELTA column of %" PRIu64 " rows has %" PRIu64
                            " block headers of %u bytes",
                            what, data_size, n, blocks, PS_DELTA_HEADER_BYTES);
  uint64_t end = blocks * PS_DELTA_HEADER_BYTES; /* where the next payload must start */
  for (uint64_t b = 0; b < blocks; b++) {
    const uint8_t *h = headers + b * PS_DELTA_HEADER_BYTES;
    const uint64_t at = b * PS_DELTA_HEADER_BYTES, off = le64(h + 16);
    const uint32_t widths = le32(h + 24), aw = widths & 0xFFu, dw = (widths >> 8) & 0xFFu;
    if (widths >> 16)
      return ps_set_error_buf(buf, size, PS_ERR_INVALID_ARGUMENT,
                              "%s: DELTA block %" PRIu64 " header word 6 is 0x%08x; bits 16..31 must be 0", what, b,
                              widths);
    if (le32(h + 28))
      return ps_set_error_buf(buf, size, PS_ERR_INVALID_ARGUMENT,
                              "%s: DELTA block %" PRIu64 " header word 7 (reserved) is 0x%08x; expected 0", what, b,
                              le32(h + 28));
    if (aw > 64 || dw > 64)
      return ps_set_error_buf(buf, size, PS_ERR_INVALID_ARGUMENT,
                              "%s: DELTA block %" PRIu64 " header %s width is %u; expected 0..64", what, b,
                              aw > 64 ? "anchor" : "delta", aw > 64 ? aw : dw);
    if (off != end - at)
      return ps_set_error_buf(buf, size, PS_ERR_INVALID_ARGUMENT,
                              "%s: DELTA block %" PRIu64 " header payload offset is %" PRIu64 "; expected %" PRIu64
                              " (payloads follow the headers in block order)",
                              what, b, off, end - at);
    const uint64_t bytes = ps_delta_payload_bytes(aw, dw);
    if (bytes > data_size - end)
      return ps_set_error_buf(buf, size, PS_ERR_INVALID_ARGUMENT,
                              "%s: DELTA block %" PRIu64 " payload of %" PRIu64 " bytes at byte %" PRIu64
                              " ends past data_size %" PRIu64,
                              what, b, bytes, end, data_size);
    end += bytes;
  }
  if (end != data_size)
    return ps_set_error_buf(buf, size, PS_ERR_INVALID_ARGUMENT,
                            "%s.data_size is %" PRIu64 "; the DELTA blocks end at byte %" PRIu64, what, data_size, end);
  return PS_OK;
}

uint64_t ps_delta_largest_block(const uint8_t *headers, uint64_t n) {
  uint64_t most = 0;
  for (uint64_t b = 0; b < ps_delta_blocks(n); b++) {
    const uint32_t widths = le32(headers + b * PS_DELTA_HEADER_BYTES + 24);
    const uint64_t bytes = ps_delta_payload_bytes(widths & 0xFFu, (widths >> 8) & 0xFFu);
    if (bytes > most) most = bytes;
  }
  return PS_DELTA_HEADER_BYTES + most;
}

/* A header's self-relative payload offset counts from the header's place in
 * the whole column. Staged, the chunk's headers come first and its payloads
 * right after them, in block order as in the column: block b's payload then
 * lies hb + (P_b - P_b0) bytes from the chunk's first header (P: where a
 * payload starts in the column, hb: the chunk's header bytes), so its
 * header, the (b - b0)-th, holds hb + (P_b - P_b0) - 32 (b - b0), which is
 * hb + off_b - off_b0 (P_b = 32 b + off_b). */
bool ps_delta_chunk(const uint8_t *headers, uint64_t b0, uint64_t blocks, uint64_t data_size, uint64_t largest,
                    uint8_t *out, uint64_t *payload_at, uint64_t *payload_bytes) {
  uint64_t start = 0, end = 0;
  for (uint64_t i = 0; i < blocks; i++) {
    const uint8_t *h = headers + i * PS_DELTA_HEADER_BYTES;
    const uint64_t at = (b0 + i) * PS_DELTA_HEADER_BYTES, off = le64(h + 16);
    const uint32_t widths = le32(h + 24), aw = widths & 0xFFu, dw = (widths >> 8) & 0xFFu;
    if (aw > 64 || dw > 64 || at > data_size || off > data_size - at) return false;
    const uint64_t p = at + off, bytes = ps_delta_payload_bytes(aw, dw);
    if (i == 0) start = end = p;
    if (p != end || PS_DELTA_HEADER_BYTES + bytes > largest || bytes > data_size - p) return false;
    end = p + bytes;
  }
  for (uint64_t i = 0; out && i < blocks; i++) {
    uint8_t *o = out + i * PS_DELTA_HEADER_BYTES;
    memcpy(o, headers + i * PS_DELTA_HEADER_BYTES, PS_DELTA_HEADER_BYTES);
    const uint64_t rebased =
        blocks * PS_DELTA_HEADER_BYTES + le64(o + 16) - le64(headers + 16); /* >= 32 (blocks - i) */
    for (uint32_t k = 0; k < 8; k++) o[16 + k] = (uint8_t)(rebased >> (8 * k));
  }
  *payload_at = start;
  *payload_bytes = end - start;
  return true;
}
