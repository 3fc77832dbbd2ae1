/* CRC-32C (Castagnoli, reflected polynomial 0x82F63B78), the checksum of
 * every section of a table file. Software slicing-by-8; no dependency. */
#ifndef PSTOOL_CRC32C_H
#define PSTOOL_CRC32C_H

#include <stddef.h>
#include <stdint.h>

/* Continues a CRC: crc32c(crc32c(0, a), b) == crc32c(0, a || b).
 * crc32c(0, "123456789", 9) == 0xE3069283. */
uint32_t crc32c(uint32_t crc, const void *data, size_t len);

#endif
