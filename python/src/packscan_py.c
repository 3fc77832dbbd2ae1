/* The C half of the Python package: everything the ctypes layer
 * (packscan/_lib.py) cannot do from Python, with no Python headers, so one
 * build serves every Python version:
 *  - WHERE text to a ps_expr over an imported Arrow table, through the
 *    command-line tool's parser and binder (tools/expr_parse.c,
 *    tools/expr_bind.c), the table's fields described to the binder as the
 *    tool's table columns;
 *  - an imported table saved as the command line's table file
 *    (tools/table_write.c), from its packed columns as they are, and such a
 *    file opened as a table (tools/table_read.c), its columns used as packed;
 *  - a one-batch ArrowArrayStream over an exported record batch, for
 *    consumers that take __arrow_c_stream__. */
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "query.h"
#include "shim.h"

/* The table column's logical annotation and unit (10^-unit seconds) for an
 * imported field: date32 is a date (a day count); a timestamp is a timestamp
 * of its unit (its time zone only says how to show it: the values are UTC
 * instants either way); date64 counts milliseconds, so it is a timestamp of
 * unit 3 to the parser (DATE 'yyyy-mm-dd' is its midnight) and the file. */
static void field_logical(const ps_arrow_field *f, uint32_t *logical, uint32_t *unit) {
  *unit = 0;
  switch (f->kind) {
    case PS_ARROW_DATE32:
      *logical = TBL_LOGICAL_DATE;
      break;
    case PS_ARROW_DECIMAL128:
      *logical = TBL_LOGICAL_DECIMAL;
      break;
    case PS_ARROW_DATE64:
      *logical = TBL_LOGICAL_TIMESTAMP, *unit = 3;
      break;
    case PS_ARROW_TIMESTAMP:
      *logical = TBL_LOGICAL_TIMESTAMP;
      *unit = f->unit == PS_TIME_MILLISECOND   ? 3
              : f->unit == PS_TIME_MICROSECOND ? 6
              : f->unit == PS_TIME_NANOSECOND  ? 9
                                               : 0;
      break;
    default:
      *logical = TBL_LOGICAL_NONE;
      break;
  }
}

int ps_py_describe(const ps_arrow_table *table, ps_py_shell *out) {
  size_t ncols = ps_arrow_table_columns(table);
  memset(out, 0, sizeof *out);
  out->cols = calloc(ncols ? ncols : 1, sizeof *out->cols);
  out->pcols = calloc(ncols ? ncols : 1, sizeof *out->pcols);
  if (!out->cols || !out->pcols) {
    ps_py_shell_free(out);
    return -1;
  }
  for (size_t i = 0; i < ncols; i++) {
    const ps_arrow_field *f = ps_arrow_table_field(table, i);
    tbl_column *c = &out->cols[i];
    c->name = (char *)f->name;
    c->encoding = f->type == PS_TYPE_STRING ? TBL_ENC_DICT : TBL_ENC_FOR;
    field_logical(f, &c->logical, &c->unit);
    c->desc.type = f->type == PS_TYPE_STRING ? PS_TYPE_UINT32 : f->type;
    c->desc.scale = f->scale;
    /* Import sorts every dictionary (ps_arrow_table_packed), so MIN and MAX
     * of a string column order as its strings do. */
    c->dict.sorted = f->type == PS_TYPE_STRING;
    out->pcols[i] = ps_arrow_table_column(table, i);
  }
  out->tbl.rows = ps_arrow_table_rows(table);
  out->tbl.ncols = (uint32_t)ncols;
  out->tbl.cols = out->cols;
  return 0;
}

void ps_py_shell_free(ps_py_shell *s) {
  free(s->cols);
  free(s->pcols);
  s->cols = NULL;
  s->pcols = NULL;
}

/* Parses and binds `src`; 0 with *out set, or -1 with a message (and the
 * byte position of the problem) in err. */
PS_PY_API int ps_py_where(ps_context *ctx, const ps_arrow_table *table, const char *src, size_t len, ps_expr **out,
                          char *err, size_t err_size, size_t *err_pos) {
  expr_arena arena = {0};
  expr_error e;
  memset(&e, 0, sizeof e);
  ast_node *tree = NULL;
  ps_py_shell shell;
  int rc = -1;
  if (ps_py_describe(table, &shell) != 0) {
    snprintf(e.msg, sizeof e.msg, "out of memory");
    goto done;
  }
  if (expr_parse(src, len, &arena, &tree, &e) != 0) goto done;
  /* Every column already exists, so the binder never creates one; decimal
   * columns are PS_TYPE_DECIMAL already, so they are also the binder's exact
   * decimal views (literals compare with them in code space). */
  bind_env env = {ctx, &shell.tbl, shell.pcols, shell.pcols};
  if (expr_bind(&env, tree, out, &e) != 0) goto done;
  rc = 0;
done:
  if (rc != 0) {
    snprintf(err, err_size, "%s", e.msg);
    if (err_pos) *err_pos = e.pos;
  }
  expr_arena_free(&arena);
  ps_py_shell_free(&shell);
  return rc;
}

/* ---- the command line's table files ----------------------------------------- */

static uint64_t popcount_bytes(const uint8_t *b, uint64_t n_bits) {
  uint64_t c = 0;
  for (uint64_t i = 0; i < n_bits; i++) c += (b[i / 8] >> (i % 8)) & 1;
  return c;
}

/* 0 when the output path is not the file at input_path (links followed; a
 * missing output or input is not), else -1 with the message of the command
 * line's encode. */
PS_PY_API int ps_py_check_output(const char *path, const char *input_path, char *err, size_t err_size) {
  out_input in;
  if (out_input_stat(&in, input_path, input_path, err, err_size) != 0) return 0;
  return out_check_not_input(path, &in, err, err_size);
}

/* Nonzero when path (links followed) is the file open as the standard output. */
PS_PY_API int ps_py_output_is_stdout(const char *path) { return out_is_stdout(path); }

/* Writes the table to path by the command line's rules for outputs
 * (tools/outfile.h): a regular file through a temporary file and rename,
 * keeping its mode; a device or FIFO in place; never the file at input_path
 * (NULL: no input). 0, or -1 with a message in err. */
PS_PY_API int ps_py_write_table(ps_context *ctx, const ps_arrow_table *table, const char *path, const char *input_path,
                                char *err, size_t err_size) {
  out_input in; /* an input that is gone has nothing left to protect */
  int have_in = input_path && out_input_stat(&in, input_path, input_path, err, err_size) == 0;
  size_t ncols = ps_arrow_table_columns(table);
  uint64_t rows = ps_arrow_table_rows(table);
  tbl_write_column *cols = calloc(ncols ? ncols : 1, sizeof *cols);
  int32_t **offs32 = calloc(ncols ? ncols : 1, sizeof *offs32);
  int rc = -1;
  if (!cols || !offs32) {
    snprintf(err, err_size, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < ncols; i++) {
    const ps_arrow_field *f = ps_arrow_table_field(table, i);
    tbl_write_column *w = &cols[i];
    ps_dict_desc dd;
    ps_status st = ps_arrow_table_packed(ctx, table, i, &w->desc, &dd);
    if (st != PS_OK) {
      snprintf(err, err_size, "%s", ps_context_last_error(ctx));
      goto done;
    }
    w->name = f->name;
    /* The table file holds a decimal as a float64 column of its scale (the
     * same packed stream), annotated as a decimal. */
    if (w->desc.type == PS_TYPE_DECIMAL) w->desc.type = PS_TYPE_FLOAT64;
    w->encoding = f->type == PS_TYPE_STRING               ? TBL_ENC_DICT
                  : w->desc.encoding == PS_ENCODING_DELTA ? TBL_ENC_DELTA
                                                          : TBL_ENC_FOR;
    field_logical(f, &w->logical, &w->unit);
    if (f->kind == PS_ARROW_TIMESTAMP && f->timezone && f->timezone[0]) {
      if (!tbl_time_zone_ok(f->timezone, strlen(f->timezone))) {
        snprintf(err, err_size,
                 "column '%s': time zone '%.80s' is not one a table file holds (1..%d printable ASCII bytes)", f->name,
                 f->timezone, TBL_MAX_TIME_ZONE);
        goto done;
      }
      w->time_zone = f->timezone;
    }
    w->null_count = w->desc.validity ? rows - popcount_bytes(w->desc.validity, rows) : 0;
    w->raw_bytes = rows * (f->type == PS_TYPE_STRING ? 4 : ps_type_size(f->type));
    if (f->type == PS_TYPE_STRING) {
      /* The file holds 32-bit dictionary offsets. */
      if (dd.count >= INT32_MAX || dd.bytes_size > INT32_MAX) {
        snprintf(err, err_size, "column '%s': a dictionary of %llu bytes does not fit the table file's 32-bit offsets",
                 f->name, (unsigned long long)dd.bytes_size);
        goto done;
      }
      offs32[i] = malloc((size_t)(dd.count + 1) * sizeof **offs32);
      if (!offs32[i]) {
        snprintf(err, err_size, "out of memory");
        goto done;
      }
      for (uint64_t k = 0; k <= dd.count; k++) offs32[i][k] = (int32_t)dd.offsets64[k];
      w->dict = dd;
      w->dict.offsets64 = NULL;
      w->dict.offsets32 = offs32[i];
    }
  }
  rc = tbl_write_file(path, have_in ? &in : NULL, rows, cols, (uint32_t)ncols, NULL, err, err_size) == 0 ? 0 : -1;
done:
  for (size_t i = 0; cols && i < ncols; i++) {
    ps_free(ctx, (void *)cols[i].desc.data);
    ps_free(ctx, (void *)cols[i].desc.validity);
    if (offs32) free(offs32[i]);
  }
  free(cols);
  free(offs32);
  return rc;
}

/* Opens a table file as an Arrow-imported table (its columns as they are
 * packed, no re-encoding): dates as date32, timestamps as timestamps of their
 * unit and time zone, decimals as decimal128, strings as utf8, the rest as their integer or float types. 0, or -1 with
 * a message. */
static int read_table(ps_context *ctx, const char *path, tbl_table **keep, ps_arrow_table **out, char *err,
                      size_t err_size) {
  static const char *const formats[] = {"", "c", "s", "i", "l", "C", "S", "I", "L", "f", "g"};
  tbl_table *t = NULL;
  if (tbl_open_file(path, 1, &t, err, err_size) != 0) return -1;
  size_t n = t->ncols;
  ps_arrow_field *fields = calloc(n ? n : 1, sizeof *fields);
  ps_for_desc *descs = calloc(n ? n : 1, sizeof *descs);
  ps_dict_desc *dicts = calloc(n ? n : 1, sizeof *dicts);
  char(*fmt)[32 + TBL_MAX_TIME_ZONE] = calloc(n ? n : 1, sizeof *fmt);
  int rc = -1;
  if (!fields || !descs || !dicts || !fmt) {
    snprintf(err, err_size, "out of memory");
    goto done;
  }
  for (size_t i = 0; i < n; i++) {
    const tbl_column *c = &t->cols[i];
    ps_arrow_field *f = &fields[i];
    f->name = c->name;
    f->format = fmt[i];
    f->timezone = "";
    descs[i] = c->desc;
    if (c->encoding == TBL_ENC_DICT) {
      f->kind = PS_ARROW_UTF8, f->type = PS_TYPE_STRING;
      snprintf(fmt[i], 32, "u");
      dicts[i] = c->dict;
    } else if (c->logical == TBL_LOGICAL_DATE && c->desc.type == PS_TYPE_INT32) {
      f->kind = PS_ARROW_DATE32, f->type = PS_TYPE_INT32, f->unit = PS_TIME_DAY;
      snprintf(fmt[i], 32, "tdD");
    } else if (c->logical == TBL_LOGICAL_TIMESTAMP && c->desc.type == PS_TYPE_INT64) {
      /* The zone the file keeps (1.3), as Arrow's timestamp type has it. */
      static const char units[] = "s??m??u??n";
      f->timezone = c->time_zone;
      f->kind = PS_ARROW_TIMESTAMP, f->type = PS_TYPE_INT64;
      f->unit = c->unit == 3   ? PS_TIME_MILLISECOND
                : c->unit == 6 ? PS_TIME_MICROSECOND
                : c->unit == 9 ? PS_TIME_NANOSECOND
                               : PS_TIME_SECOND;
      snprintf(fmt[i], sizeof fmt[i], "ts%c:%s", units[c->unit <= 9 ? c->unit : 0], c->time_zone);
    } else if (c->logical == TBL_LOGICAL_DECIMAL && c->desc.type == PS_TYPE_FLOAT64) {
      f->kind = PS_ARROW_DECIMAL128, f->type = PS_TYPE_DECIMAL, f->scale = c->desc.scale, f->precision = 18;
      descs[i].type = PS_TYPE_DECIMAL; /* the file's float64-of-a-scale is exactly this decimal */
      snprintf(fmt[i], 32, "d:18,%u", c->desc.scale);
    } else if (c->desc.type >= PS_TYPE_INT8 && c->desc.type <= PS_TYPE_FLOAT64) {
      /* ps_arrow_kind numbers the fixed-width kinds as ps_type does. */
      f->kind = (ps_arrow_kind)c->desc.type, f->type = c->desc.type, f->scale = c->desc.scale;
      snprintf(fmt[i], 32, "%s", formats[c->desc.type]);
    } else {
      snprintf(err, err_size, "column '%s': type %d is not one packscan holds", c->name, (int)c->desc.type);
      goto done;
    }
  }
  if ((keep ? ps_arrow_table_create_host : ps_arrow_table_create)(ctx, n, fields, descs, dicts, out) != PS_OK) {
    snprintf(err, err_size, "%s", ps_context_last_error(ctx));
    goto done;
  }
  rc = 0;
done:
  free(fields);
  free(descs);
  free(dicts);
  free(fmt);
  if (rc == 0 && keep)
    *keep = t;
  else
    tbl_close(t);
  return rc;
}

PS_PY_API int ps_py_read_table(ps_context *ctx, const char *path, ps_arrow_table **out, char *err, size_t err_size) {
  return read_table(ctx, path, NULL, out, err, err_size);
}

/* As ps_py_read_table, with the columns host-resident over the file's
 * mapping (ps_arrow_table_create_host), which *file keeps until
 * ps_py_close_file, called after the table is destroyed. */
PS_PY_API int ps_py_read_table_host(ps_context *ctx, const char *path, ps_arrow_table **out, void **file, char *err,
                                    size_t err_size) {
  tbl_table *t = NULL;
  if (read_table(ctx, path, &t, out, err, err_size) != 0) return -1;
  *file = t;
  return 0;
}

PS_PY_API void ps_py_close_file(void *file) { tbl_close(file); }

/* ---- a stream of one record batch ------------------------------------------ */

typedef struct one_batch {
  struct ArrowSchema schema;
  struct ArrowArray batch; /* release NULL once handed out */
} one_batch;

static int copy_schema(const struct ArrowSchema *src, struct ArrowSchema *out);

void ps_py_schema_release(struct ArrowSchema *s) {
  for (int64_t i = 0; i < s->n_children; i++) {
    s->children[i]->release(s->children[i]);
    free(s->children[i]);
  }
  free(s->children);
  if (s->dictionary) {
    s->dictionary->release(s->dictionary);
    free(s->dictionary);
  }
  free((void *)s->format);
  free((void *)s->name);
  s->release = NULL;
}

char *ps_py_strdup(const char *s) {
  size_t n = s ? strlen(s) : 0;
  char *p = malloc(n + 1);
  if (p) {
    if (n) memcpy(p, s, n);
    p[n] = 0;
  }
  return p;
}

/* A deep copy (get_schema may be called any number of times). */
static int copy_schema(const struct ArrowSchema *src, struct ArrowSchema *out) {
  memset(out, 0, sizeof *out);
  out->format = ps_py_strdup(src->format);
  out->name = ps_py_strdup(src->name);
  out->flags = src->flags;
  out->release = ps_py_schema_release;
  if (!out->format || !out->name) goto fail;
  if (src->n_children) {
    out->children = calloc((size_t)src->n_children, sizeof *out->children);
    if (!out->children) goto fail;
    for (int64_t i = 0; i < src->n_children; i++) {
      out->children[i] = malloc(sizeof **out->children);
      if (!out->children[i] || copy_schema(src->children[i], out->children[i]) != 0) {
        free(out->children[i]);
        goto fail;
      }
      out->n_children = i + 1;
    }
  }
  if (src->dictionary) {
    out->dictionary = malloc(sizeof *out->dictionary);
    if (!out->dictionary || copy_schema(src->dictionary, out->dictionary) != 0) {
      free(out->dictionary);
      out->dictionary = NULL;
      goto fail;
    }
  }
  return 0;
fail:
  ps_py_schema_release(out);
  return 12; /* ENOMEM */
}

static int ob_get_schema(struct ArrowArrayStream *st, struct ArrowSchema *out) {
  return copy_schema(&((one_batch *)st->private_data)->schema, out);
}

static int ob_get_next(struct ArrowArrayStream *st, struct ArrowArray *out) {
  one_batch *p = st->private_data;
  *out = p->batch; /* moved; a second call sees release NULL: the end */
  memset(&p->batch, 0, sizeof p->batch);
  return 0;
}

static const char *ob_last_error(struct ArrowArrayStream *st) {
  (void)st;
  return NULL;
}

static void ob_release(struct ArrowArrayStream *st) {
  one_batch *p = st->private_data;
  if (p->batch.release) p->batch.release(&p->batch);
  if (p->schema.release) p->schema.release(&p->schema);
  free(p);
  st->release = NULL;
}

/* Moves schema and batch into *out (a stream of that one batch); 0 or ENOMEM
 * (then nothing was moved). */
PS_PY_API int ps_py_stream_from_batch(struct ArrowSchema *schema, struct ArrowArray *batch,
                                      struct ArrowArrayStream *out) {
  one_batch *p = malloc(sizeof *p);
  if (!p) return 12;
  p->schema = *schema;
  p->batch = *batch;
  schema->release = NULL;
  batch->release = NULL;
  out->get_schema = ob_get_schema;
  out->get_next = ob_get_next;
  out->get_last_error = ob_last_error;
  out->release = ob_release;
  out->private_data = p;
  return 0;
}

/* ---- a record batch kept once and exported any number of times ------------- */

/* The batch, released when the holder and every export made from it are. */
typedef struct held_batch {
  struct ArrowArray batch;
  struct ArrowSchema schema;
  int64_t refs;
} held_batch;

static void held_unref(held_batch *h) {
  if (--h->refs > 0) return;
  if (h->batch.release) h->batch.release(&h->batch);
  if (h->schema.release) h->schema.release(&h->schema);
  free(h);
}

/* Each exported struct (the batch and each child) holds its own reference, so
 * a consumer may move and release the children on their own. */
static void held_release(struct ArrowArray *a) {
  if (a->n_children && a->children) {
    for (int64_t i = 0; i < a->n_children; i++) {
      if (a->children[i]->release) a->children[i]->release(a->children[i]);
      free(a->children[i]);
    }
    free(a->children);
  }
  held_unref(a->private_data);
  a->release = NULL;
}

/* Moves schema and batch (a flat record batch: children without children of
 * their own or dictionaries) into a holder; NULL (nothing moved) when out of
 * memory or not flat. */
PS_PY_API void *ps_py_hold(struct ArrowSchema *schema, struct ArrowArray *batch) {
  for (int64_t i = 0; i < batch->n_children; i++)
    if (batch->children[i]->n_children || batch->children[i]->dictionary) return NULL;
  held_batch *h = calloc(1, sizeof *h);
  if (!h) return NULL;
  h->batch = *batch;
  h->schema = *schema;
  h->refs = 1;
  batch->release = NULL;
  schema->release = NULL;
  return h;
}

/* Drops the holder's own reference. NULL ok. */
PS_PY_API void ps_py_unhold(void *holder) {
  if (holder) held_unref(holder);
}

/* Exports the held batch: a copy of its schema and an array sharing its
 * buffers. 0, or ENOMEM with nothing exported. */
PS_PY_API int ps_py_held_export(void *holder, struct ArrowSchema *schema, struct ArrowArray *out) {
  held_batch *h = holder;
  const struct ArrowArray *b = &h->batch;
  if (copy_schema(&h->schema, schema) != 0) return 12;
  *out = *b;
  out->children = NULL;
  out->n_children = 0;
  out->private_data = h;
  out->release = held_release;
  h->refs++;
  if (b->n_children) {
    out->children = calloc((size_t)b->n_children, sizeof *out->children);
    if (!out->children) goto fail;
    for (int64_t i = 0; i < b->n_children; i++) {
      struct ArrowArray *c = malloc(sizeof *c);
      if (!c) goto fail;
      *c = *b->children[i];
      c->private_data = h;
      c->release = held_release;
      h->refs++;
      out->children[i] = c;
      out->n_children = i + 1;
    }
  }
  return 0;
fail:
  out->release(out);
  schema->release(schema);
  return 12;
}

/* ---- "auto" ---------------------------------------------------------------- */

/* The backend the command's "auto" picks for a table of `rows` rows
 * (query_context_for: the reference backend below QUERY_AUTO_DEVICE_ROWS
 * rows, else CUDA, else OpenCL on a device that is not a CPU, else the
 * reference backend), written to name; why gets the reason. A device backend
 * is probed by starting a context on it. 0, or -1 with err set. */
PS_PY_API int ps_py_auto_backend(uint64_t rows, char *name, size_t name_size, char *why, size_t why_size, char *err,
                                 size_t err_size) {
  ps_context *ctx;
  if (query_context_for("auto", rows, &ctx, why, why_size, err, err_size) != 0) return -1;
  snprintf(name, name_size, "%s", ps_context_backend(ctx));
  ps_context_destroy(ctx);
  return 0;
}

/* QUERY_AUTO_DEVICE_ROWS. */
PS_PY_API uint64_t ps_py_auto_device_rows(void) { return QUERY_AUTO_DEVICE_ROWS; }

/* ---- the command ------------------------------------------------------------ */

/* The packscan command (tools/cli_main.c) in this process: argv[0] is the
 * program name. Returns its exit status; stdout is flushed. */
PS_PY_API int ps_py_cli_main(int argc, char **argv) {
  int rc = cli_main(argc, argv);
  fflush(stdout);
  fflush(stderr);
  return rc;
}
