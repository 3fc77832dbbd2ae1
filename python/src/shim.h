/* What the files of the Python package's C shim share (no Python headers:
 * ctypes calls every PS_PY_API function). */
#ifndef PACKSCAN_PY_SHIM_H
#define PACKSCAN_PY_SHIM_H

#include <stddef.h>

#include "expr.h"
#include "packscan_arrow.h"
#include "table.h"

#define PS_PY_API __attribute__((visibility("default")))

/* An imported Arrow table described as the command line's table, so that the
 * tool's parsers and binders (WHERE, SELECT) run on it unchanged: its
 * columns already exist (pcols, borrowed from the table), so the binders
 * never create one. */
typedef struct ps_py_shell {
  tbl_table tbl;
  tbl_column *cols;
  ps_column **pcols;
} ps_py_shell;

/* 0, or -1 when out of memory. Free with ps_py_shell_free. */
int ps_py_describe(const ps_arrow_table *table, ps_py_shell *out);
void ps_py_shell_free(ps_py_shell *s);

/* The release of a schema whose format, name, children and dictionary were
 * malloc'ed (children one by one). */
void ps_py_schema_release(struct ArrowSchema *s);
/* A malloc'ed copy of s ("" for NULL), NULL when out of memory. */
char *ps_py_strdup(const char *s);

#endif
