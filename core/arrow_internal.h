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

/* Exported arrays and schemas whose release callbacks own every byte
 * (arrow_export.c; malloc'd, independent of the context). */
#define XA_MAX_BUFFERS 3
/* An array of `length` rows with n_buffers buffers and room for n_children
 * children (added with xa_add_child, which counts them). */
bool xa_init(struct ArrowArray *a, int64_t length, int64_t n_buffers, int64_t n_children);
struct ArrowArray *xa_add_child(struct ArrowArray *a);
/* Gives buffer i of a to zeroed memory of `size` bytes (8 more, so that a
 * consumer may read a whole word of an empty buffer); NULL when out of memory. */
void *xa_buffer(struct ArrowArray *a, int i, uint64_t size);
/* A nullable field; room for n_children children (xs_add_child). */
bool xs_init(struct ArrowSchema *s, const char *format, const char *name, int64_t n_children);
struct ArrowSchema *xs_add_child(struct ArrowSchema *s);
/* Sets s's metadata to a copy of `size` bytes (the C Data Interface's
 * binary key-value encoding). */
bool xs_set_metadata(struct ArrowSchema *s, const char *metadata, size_t size);
/* Releases whichever of s and a are live. */
void release_both(struct ArrowSchema *s, struct ArrowArray *a);

#endif /* PS_ARROW_INTERNAL_H */
