/* packscan query TABLE "SELECT ..." : aggregates, optionally grouped, of the
 * rows where a WHERE-expression is TRUE (select.h has the grammar). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"
#include "query.h"
#include "select_run.h"

static void select_usage(FILE *f) {
  fprintf(f,
          "usage: packscan query [options] TABLE \"SELECT ...\"\n"
          "  SELECT item, ... [FROM name] [WHERE expression] [GROUP BY col [, col]] [;]\n"
          "  items: COUNT(*), COUNT(v), SUM(v), MIN(v), MAX(v), AVG(v) [AS alias], and GROUP BY columns;\n"
          "  v: columns, exact numbers (12, 0.05), + - *, (v), CASE WHEN expression THEN v [ELSE v] END.\n"
          "  Arithmetic is exact (decimal scales as in SQL, 38 digits, overflow is an error);\n"
          "  AVG is the exact sum divided once, rounded half away from zero, at least 6 decimals.\n"
          "  One result row per group with a selected row, in ascending key order.\n"
          "      --format F        table, csv or json (JSON lines); default: table on a terminal,\n"
          "                        CSV otherwise\n"
          "      --no-header       no header line (table, csv)\n"
          "      --backend NAME    reference, opencl, cuda or auto (default; chosen by table size and\n"
          "                        device kind, as for WHERE-expressions)\n"
          "      --timing          print times, backend and device on stderr\n"
          "      --repeat N        run N times (with --timing: first and best time)\n"
          "      --explain         print the parsed statement on stderr\n"
          "      --no-verify       skip the section checksums when opening the table\n" QUERY_STREAM_USAGE);
}

/* Options of `query` that take a value: their values are not the statement. */
static int takes_value(const char *a) {
  static const char *const opts[] = {"--select",        "--bitmap",   "--backend", "--repeat",
                                     "--format",        "--order-by", "--limit",   "--device-memory-limit",
                                     "--progress-delay", "--devices", "--opencl-platform"};
  for (size_t i = 0; i < sizeof opts / sizeof *opts; i++)
    if (!strcmp(a, opts[i])) return 1;
  return 0;
}

int query_is_select(int argc, char **argv) {
  for (int i = 1; i < argc; i++) {
    if (takes_value(argv[i])) {
      i++;
      continue;
    }
    if (argv[i][0] != '-' && select_is_statement(argv[i], strlen(argv[i]))) return 1;
  }
  return 0;
}

int cmd_select(int argc, char **argv) {
  const char *path = NULL, *sql = NULL;
  query_args opt;
  query_args_init(&opt, 1);
  argp a = {argc, 1, argv, NULL};
  for (; a.i < argc; a.i++) {
    int missing = 0;
    const char *s = argv[a.i];
    int common = query_arg(&a, &opt, &missing);
    if (common < 0) return 2;
    if (missing) break;
    if (common) continue;
    if (arg_flag(&a, "--help", "-h")) {
      select_usage(stdout);
      return 0;
    } else if (!strcmp(s, "--rows") || !strcmp(s, "--select") || !strcmp(s, "--bitmap") ||
               !strncmp(s, "--select=", 9) || !strncmp(s, "--bitmap=", 9)) {
      fprintf(stderr, "packscan query: %s lists rows of a WHERE-expression; a SELECT prints its own result\n", s);
      return 2;
    } else if (!strcmp(s, "--order-by") || !strcmp(s, "--limit") || !strncmp(s, "--order-by=", 11) ||
               !strncmp(s, "--limit=", 8)) {
      fprintf(stderr,
              "packscan query: %s is for --rows and --select output; a SELECT's groups come in "
              "ascending key order\n",
              s);
      return 2;
    } else if (s[0] == '-' && s[1] != 0) {
      fprintf(stderr, "packscan query: unknown option '%s'\n", s);
      select_usage(stderr);
      return 2;
    } else if (!path) {
      path = s;
    } else if (!sql) {
      sql = s;
    } else {
      fprintf(stderr, "packscan query: unexpected argument '%s' (quote the whole statement)\n", s);
      return 2;
    }
  }
  if (a.i < argc) {
    fprintf(stderr, "packscan query: option '%s' needs a value\n", argv[a.i]);
    return 2;
  }
  if (!path || !sql) {
    select_usage(stderr);
    return 2;
  }
  char err[TOOL_ERR_SIZE];
  double t0 = now_seconds();
  tbl_table *t;
  if (tbl_open_file(path, opt.verify, &t, err, sizeof err)) {
    fprintf(stderr, "packscan query: %s\n", err);
    return 1;
  }
  double t_open = now_seconds() - t0;
  ps_context *ctx = NULL;
  t0 = now_seconds();
  char why[TOOL_ERR_SIZE] = "";
  progress_bar bar;
  if (query_args_context(&opt, t, &bar, &ctx, why, sizeof why, err, sizeof err)) {
    fprintf(stderr, "packscan query: %s\n", err);
    tbl_close(t);
    return 1;
  }
  double t_ctx = now_seconds() - t0;
  int rc = 1;
  select_plan p;
  ps_query_result *res = NULL;
  double first = 0, best = 1e300;
  t0 = now_seconds();
  if (select_plan_build(ctx, t, sql, strlen(sql), &p, stderr)) {
    ps_context_destroy(ctx);
    tbl_close(t);
    return 1;
  }
  double t_bind = now_seconds() - t0;
  if (opt.explain) {
    tbuf s = {0};
    select_to_string(&p.stmt, &s);
    fprintf(stderr, "statement: %.*s\n", (int)s.len, s.p ? (const char *)s.p : "");
    tbuf_free(&s);
  }
  progress_begin(&bar);
  for (unsigned long long r = 0; r < opt.repeat; r++) {
    ps_query_result_destroy(res);
    res = NULL;
    double s0 = now_seconds();
    int failed = select_plan_run(&p, &res, err, sizeof err);
    progress_end(&bar);
    if (failed) {
      fprintf(stderr, "packscan query: %s\n", err);
      goto done;
    }
    double el = now_seconds() - s0;
    if (r == 0) first = el;
    if (el < best) best = el;
  }
  double w0 = now_seconds();
  if (select_write(&p, res, opt.format, opt.header, stdout, err, sizeof err)) {
    fflush(stdout);
    fprintf(stderr, "packscan query: %s\n", err);
    goto done;
  }
  if (fflush(stdout) != 0) {
    fprintf(stderr, "packscan query: writing the output: %s\n", strerror(errno));
    goto done;
  }
  if (opt.timing) {
    uint64_t n = t->rows;
    fprintf(stderr, "backend: %s (%s); device: %s\n", ps_context_backend(ctx), why, ps_context_device(ctx));
    fprintf(stderr, "columns: %s\n", query_args_residence(t));
    fprintf(stderr, "rows: %llu, groups: %llu\n", (unsigned long long)n,
            (unsigned long long)ps_query_result_groups(res));
    fprintf(stderr, "open%s: %.2f ms; context: %.2f ms; columns + bind + prepare: %.2f ms; output: %.2f ms\n",
            opt.verify ? " + verify" : "", t_open * 1e3, t_ctx * 1e3, t_bind * 1e3, (now_seconds() - w0) * 1e3);
    if (opt.repeat > 1)
      fprintf(stderr, "run: first %.3f ms, best of %llu %.3f ms (%.3g rows/s)\n", first * 1e3, opt.repeat, best * 1e3,
              best > 0 ? (double)n / best : 0.0);
    else
      fprintf(stderr, "run: %.3f ms (%.3g rows/s)\n", first * 1e3, first > 0 ? (double)n / first : 0.0);
  }
  rc = 0;
done:
  ps_query_result_destroy(res);
  select_plan_free(&p);
  ps_context_destroy(ctx);
  tbl_close(t);
  return rc;
}

int select_shell_statement(ps_context *ctx, const tbl_table *t, ps_column **cols, ps_column **dec_cols, const char *src,
                           size_t len, out_format fmt, int header, int timer, int explain, progress_bar *bar) {
  select_plan p;
  ps_query_result *res = NULL;
  char err[TOOL_ERR_SIZE];
  int rc = -1;
  if (select_plan_build_cached(ctx, t, src, len, &p, stderr, cols, dec_cols)) return -1;
  if (explain) {
    tbuf s = {0};
    select_to_string(&p.stmt, &s);
    printf("statement: %.*s\n", (int)s.len, s.p ? (const char *)s.p : "");
    tbuf_free(&s);
  }
  double t0 = now_seconds();
  if (bar) progress_begin(bar);
  int failed = select_plan_run(&p, &res, err, sizeof err);
  if (bar) progress_end(bar);
  if (failed) {
    fprintf(stderr, "error: %s\n", err);
    goto done;
  }
  double t1 = now_seconds();
  if (select_write(&p, res, fmt, header, stdout, err, sizeof err)) {
    fflush(stdout);
    fprintf(stderr, "error: %s\n", err);
    goto done;
  }
  fflush(stdout);
  if (timer)
    printf("Run Time: query %.3f ms (%llu groups of %llu rows), output %.3f ms, on %s\n", (t1 - t0) * 1e3,
           (unsigned long long)ps_query_result_groups(res), (unsigned long long)t->rows, (now_seconds() - t1) * 1e3,
           ps_context_backend(ctx));
  rc = 0;
done:
  ps_query_result_destroy(res);
  select_plan_free(&p);
  return rc;
}
