/* Core-internal pieces shared by the Arrow import and export files. */
#ifndef PS_ARROW_INTERNAL_H
#define PS_ARROW_INTERNAL_H

#include "internal.h"
#include "packscan_arrow.h"

struct ps_arrow_table {
  ps_context *ctx;
  size_t ncols;
  uint64_t rows;
  ps_column **cols;
  ps_arrow_field *fields; /* name, format and timezone allocated with the context's allocator */
};

#endif /* PS_ARROW_INTERNAL_H */
