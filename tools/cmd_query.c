/* packscan query TABLE "WHERE-expression" */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "cli.h"
#include "query.h"

static void query_usage(FILE *f) {
  fprintf(f,
          "usage: packscan query [options] TABLE \"WHERE-expression\"\n"
          "  Prints the number of rows where the expression is TRUE.\n"
          "      --rows            print the selected row ids, one per line\n"
          "      --select COLS     print the selected rows' values of COLS ('a,b' or '*')\n"
          "                        (with --rows: the row id first)\n"
          "      --format F        table, csv or json (JSON lines); default: table on a terminal,\n"
          "                        csv otherwise\n"
          "      --header, --no-header  a header line or not (default: with --select or --format\n"
          "                        table/json, not for bare --rows)\n"
          "      --order-by KEYS   sort the output: 'col [ASC|DESC], ...' (nulls last)\n"
          "      --limit N         print at most N rows (after --order-by)\n"
          "      --bitmap FILE     write the selection bitmap (Arrow layout, ceil(n/8) bytes) to FILE\n"
          "      --backend NAME    reference, opencl, cuda or auto (default)\n"
          "      --timing          print times, rows/s, backend and device on stderr\n"
          "      --repeat N        evaluate N times (with --timing: first and best time)\n"
          "      --explain         print the parsed expression on stderr\n"
          "      --no-verify       skip the section checksums when opening the table\n"
          "  Expressions: = == != <> < <= > >=, BETWEEN x AND y, [NOT] IN (...), [NOT] LIKE 'p%%'\n"
          "  [ESCAPE 'c'], IS [NOT] NULL, AND, OR, NOT, parentheses; literals 42, -1.5, 'text',\n"
          "  DATE 'yyyy-mm-dd'; \"quoted\" column names.\n"
          "  Aggregates: packscan query TABLE \"SELECT ...\" (see packscan query TABLE \"SELECT\" --help).\n");
}

/* Splits "a, b,\"c,d\"" into column indexes. */
static int parse_select(const tbl_table *t, const char *spec, int **out, size_t *n) {
  size_t cap = 8, k = 0;
  int *idx = malloc(cap * sizeof *idx);
  if (!idx) return -1;
  if (!strcmp(spec, "*")) {
    free(idx);
    idx = malloc((t->ncols ? t->ncols : 1) * sizeof *idx);
    if (!idx) return -1;
    for (uint32_t i = 0; i < t->ncols; i++) idx[i] = (int)i;
    *out = idx;
    *n = t->ncols;
    return 0;
  }
  const char *p = spec;
  for (;;) {
    while (*p == ' ') p++;
    tbuf name = {0};
    int quoted = *p == '"';
    if (quoted) {
      p++;
      while (*p && !(*p == '"' && p[1] != '"')) {
        if (*p == '"') p++;
        tbuf_putc(&name, *p++);
      }
      if (*p != '"') {
        fprintf(stderr, "packscan query: --select: unterminated quoted column name\n");
        tbuf_free(&name);
        free(idx);
        return -1;
      }
      p++;
      while (*p == ' ') p++;
    } else {
      const char *e = p;
      while (*e && *e != ',') e++;
      const char *end = e;
      while (end > p && end[-1] == ' ') end--;
      tbuf_append(&name, p, (size_t)(end - p));
      p = e;
    }
    expr_error err;
    int c = expr_find_column(t, name.p ? (const char *)name.p : "", name.len, quoted, &err, 0);
    tbuf_free(&name);
    if (c < 0) {
      fprintf(stderr, "packscan query: --select: %s\n", err.msg);
      free(idx);
      return -1;
    }
    if (k == cap) {
      cap *= 2;
      int *v = realloc(idx, cap * sizeof *idx);
      if (!v) {
        free(idx);
        return -1;
      }
      idx = v;
    }
    idx[k++] = c;
    if (*p == ',') {
      p++;
      continue;
    }
    if (*p) {
      fprintf(stderr, "packscan query: --select: expected ',' at '%s'\n", p);
      free(idx);
      return -1;
    }
    break;
  }
  *out = idx;
  *n = k;
  return 0;
}

/* "a DESC, \"B c\" asc" into ORDER BY keys. */
static int parse_order(const tbl_table *t, const char *spec, query_order **out, size_t *n) {
  size_t k = 0, cap = 4;
  query_order *v = malloc(cap * sizeof *v);
  if (!v) return -1;
  const char *p = spec;
  for (;;) {
    while (*p == ' ') p++;
    tbuf name = {0};
    int quoted = *p == '"';
    if (quoted) {
      p++;
      while (*p && !(*p == '"' && p[1] != '"')) {
        if (*p == '"') p++;
        tbuf_putc(&name, *p++);
      }
      if (*p != '"') {
        fprintf(stderr, "packscan query: --order-by: unterminated quoted column name\n");
        tbuf_free(&name);
        free(v);
        return -1;
      }
      p++;
    } else {
      const char *e = p;
      while (*e && *e != ',' && *e != ' ') e++;
      tbuf_append(&name, p, (size_t)(e - p));
      p = e;
    }
    expr_error err;
    int c = expr_find_column(t, name.p ? (const char *)name.p : "", name.len, quoted, &err, 0);
    tbuf_free(&name);
    if (c < 0) {
      fprintf(stderr, "packscan query: --order-by: %s\n", err.msg);
      free(v);
      return -1;
    }
    int desc = 0;
    while (*p == ' ') p++;
    if (!strncasecmp(p, "desc", 4) && (p[4] == 0 || p[4] == ',' || p[4] == ' ')) {
      desc = 1;
      p += 4;
    } else if (!strncasecmp(p, "asc", 3) && (p[3] == 0 || p[3] == ',' || p[3] == ' ')) {
      p += 3;
    }
    while (*p == ' ') p++;
    if (k == cap) {
      cap *= 2;
      query_order *nv = realloc(v, cap * sizeof *nv);
      if (!nv) {
        free(v);
        return -1;
      }
      v = nv;
    }
    v[k].col = c;
    v[k].desc = desc;
    k++;
    if (*p == ',') {
      p++;
      continue;
    }
    if (*p) {
      fprintf(stderr, "packscan query: --order-by: expected ASC, DESC or ',' at '%s'\n", p);
      free(v);
      return -1;
    }
    break;
  }
  *out = v;
  *n = k;
  return 0;
}

int cmd_query(int argc, char **argv) {
  if (query_is_select(argc, argv)) return cmd_select(argc, argv);
  const char *path = NULL, *expr = NULL, *select = NULL, *bitmap_path = NULL, *backend = "auto";
  const char *order_spec = NULL;
  int rows = 0, timing = 0, explain = 0, header = -1, verify = 1, host = 0, have_limit = 0;
  unsigned long long repeat = 1, limit = 0;
  out_format format = out_format_default(stdout);
  argp a = {argc, 1, argv, NULL};
  for (; a.i < argc; a.i++) {
    int missing = 0;
    const char *s = argv[a.i];
    if (arg_flag(&a, "--help", "-h")) {
      query_usage(stdout);
      return 0;
    } else if (arg_flag(&a, "--rows", NULL)) {
      rows = 1;
    } else if (arg_value(&a, "--select", NULL, &missing)) {
      if (missing) break;
      select = a.value;
    } else if (arg_flag(&a, "--no-header", NULL)) {
      header = 0;
    } else if (arg_flag(&a, "--header", NULL)) {
      header = 1;
    } else if (arg_value(&a, "--format", NULL, &missing)) {
      if (missing) break;
      if (out_format_parse(a.value, &format)) {
        fprintf(stderr, "packscan query: --format '%s': expected table, csv or json\n", a.value);
        return 2;
      }
    } else if (arg_value(&a, "--order-by", NULL, &missing)) {
      if (missing) break;
      order_spec = a.value;
    } else if (arg_value(&a, "--limit", NULL, &missing)) {
      if (missing) break;
      if (parse_u64_arg(a.value, &limit)) {
        fprintf(stderr, "packscan query: --limit needs a row count, not '%s'\n", a.value);
        return 2;
      }
      have_limit = 1;
    } else if (arg_value(&a, "--bitmap", NULL, &missing)) {
      if (missing) break;
      bitmap_path = a.value;
    } else if (arg_value(&a, "--backend", NULL, &missing)) {
      if (missing) break;
      backend = a.value;
    } else if (arg_flag(&a, "--timing", NULL)) {
      timing = 1;
    } else if (arg_value(&a, "--repeat", NULL, &missing)) {
      if (missing) break;
      if (parse_u64_arg(a.value, &repeat) || repeat == 0 || repeat > 1000000) {
        fprintf(stderr, "packscan query: --repeat needs a count of 1..1000000\n");
        return 2;
      }
    } else if (arg_flag(&a, "--explain", NULL)) {
      explain = 1;
    } else if (arg_flag(&a, "--no-verify", NULL)) {
      verify = 0;
    } else if (arg_flag(&a, "--host-gather", NULL)) {
      host = 1; /* testing: use the bitmap + host decoding path */
    } else if (s[0] == '-' && s[1] != 0 && !(path && !expr)) {
      fprintf(stderr, "packscan query: unknown option '%s'\n", s);
      query_usage(stderr);
      return 2;
    } else if (!path) {
      path = s;
    } else if (!expr) {
      expr = s;
    } else {
      fprintf(stderr, "packscan query: unexpected argument '%s' (quote the whole expression)\n", s);
      return 2;
    }
  }
  if (a.i < argc) {
    fprintf(stderr, "packscan query: option '%s' needs a value\n", argv[a.i]);
    return 2;
  }
  if (!path || !expr) {
    query_usage(stderr);
    return 2;
  }
  if ((order_spec || have_limit) && !rows && !select) {
    fprintf(stderr, "packscan query: --order-by and --limit apply to --rows or --select output\n");
    return 2;
  }
  if (header < 0) header = select != NULL || format != OUT_FORMAT_CSV;
  char err[TOOL_ERR_SIZE];
  double t0 = now_seconds();
  tbl_table *t;
  if (tbl_open_file(path, verify, &t, err, sizeof err)) {
    fprintf(stderr, "packscan query: %s\n", err);
    return 1;
  }
  double t_open = now_seconds() - t0;
  int *sel = NULL;
  size_t nsel = 0;
  query_order *order = NULL;
  size_t norder = 0;
  if ((select && parse_select(t, select, &sel, &nsel)) || (order_spec && parse_order(t, order_spec, &order, &norder))) {
    free(sel);
    tbl_close(t);
    return 1;
  }
  ps_context *ctx = NULL;
  t0 = now_seconds();
  char why[TOOL_ERR_SIZE] = "";
  if (query_context_for(backend, t->rows, &ctx, why, sizeof why, err, sizeof err)) {
    fprintf(stderr, "packscan query: %s\n", err);
    free(sel);
    free(order);
    tbl_close(t);
    return 1;
  }
  double t_ctx = now_seconds() - t0;
  query_plan q;
  uint64_t n = t->rows, count = 0;
  uint8_t *bm = NULL;
  uint64_t *ids = NULL;
  double first = 0, best = 1e300;
  t0 = now_seconds();
  int rc = 1;
  if (query_plan_build(ctx, t, expr, strlen(expr), &q, stderr)) goto done;
  double t_bind = now_seconds() - t0;
  if (explain) {
    tbuf s = {0};
    expr_to_string(q.ast, &s);
    fprintf(stderr, "expression: %.*s\n", (int)s.len, s.p ? (const char *)s.p : "");
    tbuf_free(&s);
  }
  for (unsigned long long r = 0; r < repeat; r++) {
    free(bm);
    bm = NULL;
    free(ids);
    ids = NULL;
    double s0 = now_seconds();
    ps_status st = PS_OK;
    if (rows || select) {
      if (query_row_ids(&q, host, &ids, &count, err, sizeof err)) {
        fprintf(stderr, "packscan query: %s\n", err);
        goto done;
      }
    }
    if (bitmap_path) {
      bm = malloc((n + 7) / 8 ? (n + 7) / 8 : 1);
      if (!bm) {
        fprintf(stderr, "packscan query: out of memory\n");
        goto done;
      }
      st = ps_filter(ctx, q.expr, bm, (n + 7) / 8, &count);
    } else if (!rows && !select) {
      st = ps_filter_count(ctx, q.expr, &count);
    }
    if (st != PS_OK) {
      fprintf(stderr, "packscan query: %s\n", lib_error(st, ps_context_last_error(ctx)));
      goto done;
    }
    double el = now_seconds() - s0;
    if (r == 0) first = el;
    if (el < best) best = el;
  }
  if (bitmap_path) {
    FILE *f = fopen(bitmap_path, "wb");
    if (!f || fwrite(bm, 1, (size_t)((n + 7) / 8), f) != (n + 7) / 8 || fclose(f) != 0) {
      fprintf(stderr, "packscan query: %s: %s\n", bitmap_path, strerror(errno));
      goto done;
    }
  }
  double w0 = now_seconds();
  uint64_t shown = count;
  if ((rows || select) && query_order_ids(&q, ids, count, order, norder, err, sizeof err)) {
    fprintf(stderr, "packscan query: %s\n", err);
    goto done;
  }
  if (have_limit && limit < shown) shown = limit;
  if (rows && !select && format == OUT_FORMAT_CSV && !header) {
    for (uint64_t i = 0; i < shown; i++) printf("%llu\n", (unsigned long long)ids[i]);
  } else if (rows || select) {
    query_output o = {format, header, host, rows};
    if (query_write_rows(&q, ids, shown, sel, nsel, &o, stdout, err, sizeof err)) {
      fflush(stdout);
      fprintf(stderr, "packscan query: %s\n", err);
      goto done;
    }
  } else {
    printf("%llu\n", (unsigned long long)count);
  }
  if (fflush(stdout) != 0) {
    fprintf(stderr, "packscan query: writing the output: %s\n", strerror(errno));
    goto done;
  }
  double t_out = now_seconds() - w0;
  if (timing) {
    fprintf(stderr, "backend: %s (%s); device: %s\n", ps_context_backend(ctx), why, ps_context_device(ctx));
    fprintf(stderr, "rows: %llu, selected: %llu (%.2f%%)\n", (unsigned long long)n, (unsigned long long)count,
            n ? 100.0 * (double)count / (double)n : 0.0);
    fprintf(stderr, "open%s: %.2f ms; context: %.2f ms; columns + bind: %.2f ms; output: %.2f ms\n",
            verify ? " + verify" : "", t_open * 1e3, t_ctx * 1e3, t_bind * 1e3, t_out * 1e3);
    if (repeat > 1)
      fprintf(stderr, "evaluate: first %.3f ms, best of %llu %.3f ms (%.3g rows/s)\n", first * 1e3, repeat, best * 1e3,
              best > 0 ? (double)n / best : 0.0);
    else
      fprintf(stderr, "evaluate: %.3f ms (%.3g rows/s)\n", first * 1e3, first > 0 ? (double)n / first : 0.0);
  }
  rc = 0;
done:
  free(bm);
  free(ids);
  query_plan_free(&q);
  ps_context_destroy(ctx);
  free(sel);
  free(order);
  tbl_close(t);
  return rc;
}
