/* packscan query TABLE "WHERE-expression" */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

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
          "      --no-verify       skip the section checksums when opening the table\n" QUERY_STREAM_USAGE
          "  Expressions: = == != <> < <= > >=, BETWEEN x AND y, [NOT] IN (...), [NOT] LIKE 'p%%'\n"
          "  [ESCAPE 'c'], IS [NOT] NULL, AND, OR, NOT, parentheses; literals 42, -1.5 (exact),\n"
          "  1e-3 (a double), 'text', DATE 'yyyy-mm-dd', TIMESTAMP 'yyyy-mm-dd hh:mm:ss[.fff]',\n"
          "  TIME 'hh:mm:ss', TRUE, FALSE; \"quoted\" column names; a leading WHERE and a trailing ';'\n"
          "  are accepted.\n"
          "  Aggregates: packscan query TABLE \"SELECT ...\" (see packscan query TABLE \"SELECT\" --help).\n");
}

int cmd_query(int argc, char **argv) {
  if (query_is_select(argc, argv)) return cmd_select(argc, argv);
  const char *path = NULL, *expr = NULL, *select = NULL, *bitmap_path = NULL;
  const char *order_spec = NULL;
  int rows = 0, host = 0, have_limit = 0;
  unsigned long long limit = 0;
  query_args opt;
  query_args_init(&opt, -1);
  argp a = {argc, 1, argv, NULL};
  for (; a.i < argc; a.i++) {
    int missing = 0;
    const char *s = argv[a.i];
    int common = query_arg(&a, &opt, &missing);
    if (common < 0) return 2;
    if (missing) break;
    if (common) continue;
    if (arg_flag(&a, "--help", "-h")) {
      query_usage(stdout);
      return 0;
    } else if (arg_flag(&a, "--rows", NULL)) {
      rows = 1;
    } else if (arg_value(&a, "--select", NULL, &missing)) {
      if (missing) break;
      select = a.value;
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
  if (opt.header < 0) opt.header = select != NULL || opt.format != OUT_FORMAT_CSV;
  char err[TOOL_ERR_SIZE];
  double t0 = now_seconds();
  tbl_table *t;
  if (tbl_open_file(path, opt.verify, &t, err, sizeof err)) {
    fprintf(stderr, "packscan query: %s\n", err);
    return 1;
  }
  double t_open = now_seconds() - t0;
  int *sel = NULL;
  size_t nsel = 0;
  query_order *order = NULL;
  size_t norder = 0;
  if ((select && query_parse_columns(t, select, &sel, &nsel, err, sizeof err)) ||
      (order_spec && query_parse_order(t, order_spec, &order, &norder, err, sizeof err))) {
    fprintf(stderr, "packscan query: %s\n", err);
    free(sel);
    tbl_close(t);
    return 1;
  }
  ps_context *ctx = NULL;
  t0 = now_seconds();
  char why[TOOL_ERR_SIZE] = "";
  progress_bar bar;
  if (query_args_context(&opt, t, &bar, &ctx, why, sizeof why, err, sizeof err)) {
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
  if (opt.explain) {
    tbuf s = {0};
    expr_to_string(q.ast, &s);
    fprintf(stderr, "expression: %.*s\n", (int)s.len, s.p ? (const char *)s.p : "");
    tbuf_free(&s);
  }
  progress_begin(&bar);
  for (unsigned long long r = 0; r < opt.repeat; r++) {
    free(bm);
    bm = NULL;
    free(ids);
    ids = NULL;
    double s0 = now_seconds();
    ps_status st = PS_OK;
    if (rows || select) {
      if (query_row_ids(&q, host, &ids, &count, err, sizeof err)) {
        progress_end(&bar);
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
      progress_end(&bar);
      fprintf(stderr, "packscan query: %s\n", lib_error(st, ps_context_last_error(ctx)));
      goto done;
    }
    double el = now_seconds() - s0;
    if (r == 0) first = el;
    if (el < best) best = el;
  }
  progress_end(&bar);
  if (bitmap_path) {
    out_input table_file;
    out_file f;
    if (out_input_stat(&table_file, path, path, err, sizeof err) ||
        out_file_open(&f, bitmap_path, &table_file, err, sizeof err)) {
      fprintf(stderr, "packscan query: %s\n", err);
      goto done;
    }
    if (fwrite(bm, 1, (size_t)((n + 7) / 8), f.f) != (n + 7) / 8) {
      fprintf(stderr, "packscan query: %s: %s\n", bitmap_path, strerror(errno));
      out_file_abort(&f);
      goto done;
    }
    if (out_file_commit(&f, NULL, NULL, err, sizeof err)) {
      fprintf(stderr, "packscan query: %s\n", err);
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
  if (rows && !select && opt.format == OUT_FORMAT_CSV && !opt.header) {
    for (uint64_t i = 0; i < shown; i++) printf("%llu\n", (unsigned long long)ids[i]);
  } else if (rows || select) {
    query_output o = {opt.format, opt.header, host, rows};
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
  if (opt.timing) {
    fprintf(stderr, "backend: %s (%s); device: %s\n", ps_context_backend(ctx), why, ps_context_device(ctx));
    fprintf(stderr, "columns: %s\n", query_args_residence(t));
    fprintf(stderr, "rows: %llu, selected: %llu (%.2f%%)\n", (unsigned long long)n, (unsigned long long)count,
            n ? 100.0 * (double)count / (double)n : 0.0);
    fprintf(stderr, "open%s: %.2f ms; context: %.2f ms; columns + bind: %.2f ms; output: %.2f ms\n",
            opt.verify ? " + verify" : "", t_open * 1e3, t_ctx * 1e3, t_bind * 1e3, t_out * 1e3);
    if (opt.repeat > 1)
      fprintf(stderr, "evaluate: first %.3f ms, best of %llu %.3f ms (%.3g rows/s)\n", first * 1e3, opt.repeat,
              best * 1e3, best > 0 ? (double)n / best : 0.0);
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
