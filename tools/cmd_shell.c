/* packscan shell TABLE: queries typed one per line against a table that stays
 * mapped, on a context (and columns) that stay open, with sqlite3-style dot
 * commands. Reads stdin; a prompt is shown when stdin is a terminal. Line
 * editing is the terminal's own: the project takes no readline dependency
 * (rlwrap gives history). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "cli.h"
#include "query.h"
#include "select_run.h"

typedef struct shell {
  tbl_table *t;
  ps_context *ctx;
  ps_column **cols, **dec_cols; /* kept across statements: each column is uploaded once */
  char why[TOOL_ERR_SIZE];
  out_format format;
  int header, timer, explain;
  progress_bar bar;
} shell;

static void shell_help(void) {
  printf(
      "Statements, one per line (a trailing ';' is optional):\n"
      "  WHERE-expression                      the number of rows where it is TRUE\n"
      "  SELECT COUNT(*) [WHERE expr]          the same\n"
      "  SELECT cols|* [FROM t] [WHERE expr] [ORDER BY col [ASC|DESC], ...] [LIMIT n]\n"
      "                                        the rows (no WHERE: every row)\n"
      "  SELECT aggregates [FROM t] [WHERE expr] [GROUP BY col [, col]] [HAVING cond]\n"
      "         [ORDER BY term [ASC|DESC] [NULLS FIRST|LAST], ...] [LIMIT n] [OFFSET m]\n"
      "                                        COUNT, SUM, MIN, MAX, AVG of + - * CASE values;\n"
      "                                        + - * / abs coalesce of their results\n"
      "Dot commands:\n"
      "  .help                 this text\n"
      "  .quit, .exit          leave (end of input does too)\n"
      "  .format table|csv|json  output format (.mode is the same)\n"
      "  .headers on|off       header line in table and CSV output\n"
      "  .timer on|off         print the evaluation and output time after each statement\n"
      "  .explain on|off       print the parsed expression before each statement\n"
      "  .columns              the table's columns and types (.schema is the same)\n"
      "  .backend              the backend, the device and why it was chosen\n"
      "Expressions as in 'packscan query': = != < <= > >=, BETWEEN, IN, LIKE, IS NULL, AND, OR,\n"
      "NOT; literals 42, 1.25 (exact), 1e-3, 'text', DATE '...', TIMESTAMP '...', TIME '...', TRUE.\n");
}

/* Position of keyword kw (case-insensitive, a whole word) in s outside quotes,
 * at or after `from`; len(s) if none. */
static size_t find_kw(const char *s, size_t len, size_t from, const char *kw) {
  size_t k = strlen(kw);
  char q = 0;
  for (size_t i = from; i < len; i++) {
    char c = s[i];
    if (q) {
      if (c == q) q = 0;
      continue;
    }
    if (c == '\'' || c == '"') {
      q = c;
      continue;
    }
    if (i + k <= len && !strncasecmp(s + i, kw, k) &&
        (i == 0 || !(isalnum((unsigned char)s[i - 1]) || s[i - 1] == '_')) &&
        (i + k == len || !(isalnum((unsigned char)s[i + k]) || s[i + k] == '_')))
      return i;
  }
  return len;
}

static char *dup_range(const char *s, size_t a, size_t b) {
  while (a < b && isspace((unsigned char)s[a])) a++;
  while (b > a && isspace((unsigned char)s[b - 1])) b--;
  char *r = malloc(b - a + 1);
  if (!r) return NULL;
  memcpy(r, s + a, b - a);
  r[b - a] = 0;
  return r;
}

/* Runs one statement; 0 ok, -1 failed (message printed on stderr). */
static int run_statement(shell *sh, const char *line, size_t len) {
  char err[TOOL_ERR_SIZE];
  char *cols = NULL, *where = NULL, *order = NULL;
  int *sel = NULL;
  size_t nsel = 0, norder = 0;
  query_order *keys = NULL;
  unsigned long long limit = 0;
  int have_limit = 0, count_only = 1, rc = -1;
  query_plan q;
  memset(&q, 0, sizeof q);
  uint64_t *ids = NULL, count = 0;

  if (select_is_aggregate(line, len)) /* aggregates, GROUP BY: cmd_select.c */
    return select_shell_statement(sh->ctx, sh->t, sh->cols, sh->dec_cols, line, len, sh->format, sh->header, sh->timer,
                                  sh->explain, &sh->bar);
  size_t p_sel = find_kw(line, len, 0, "SELECT");
  int is_select = p_sel < len && p_sel == strspn(line, " \t");
  size_t p_where = find_kw(line, len, 0, "WHERE"), p_order = find_kw(line, len, 0, "ORDER"),
         p_limit = find_kw(line, len, 0, "LIMIT");
  if (!is_select) {
    where = dup_range(line, 0, len);
  } else {
    size_t p_from = find_kw(line, len, p_sel, "FROM");
    size_t end_cols = p_from < p_where ? p_from : p_where;
    if (p_order < end_cols) end_cols = p_order;
    if (p_limit < end_cols) end_cols = p_limit;
    cols = dup_range(line, p_sel + 6, end_cols);
    size_t end_where = p_order < p_limit ? p_order : p_limit;
    if (p_where < len) where = dup_range(line, p_where + 5, end_where);
    if (p_order < len) {
      size_t p_by = find_kw(line, len, p_order + 5, "BY");
      if (p_by >= len || line[p_order + 5 + strspn(line + p_order + 5, " \t")] == 0 || p_by > p_limit) {
        fprintf(stderr, "error: ORDER needs BY\n");
        goto done;
      }
      order = dup_range(line, p_by + 2, p_limit > p_by ? p_limit : len);
    }
    if (p_limit < len) {
      char *l = dup_range(line, p_limit + 5, len);
      if (!l || parse_u64_arg(l, &limit)) {
        fprintf(stderr, "error: LIMIT needs a row count, not '%s'\n", l ? l : "");
        free(l);
        goto done;
      }
      free(l);
      have_limit = 1;
    }
    if (!cols || !cols[0]) {
      fprintf(stderr, "error: SELECT needs columns ('*', 'a, b' or COUNT(*))\n");
      goto done;
    }
    char *c = cols;
    if (strncasecmp(c, "count", 5) == 0) {
      c += 5;
      while (*c == ' ') c++;
      if (!strcmp(c, "(*)")) {
        count_only = 1;
      } else {
        fprintf(stderr, "error: '%s' is not COUNT(*) (aggregates: see .help)\n", cols);
        goto done;
      }
    } else {
      count_only = 0;
      if (query_parse_columns(sh->t, cols, &sel, &nsel, err, sizeof err) ||
          (order && query_parse_order(sh->t, order, &keys, &norder, err, sizeof err))) {
        fprintf(stderr, "error: %s\n", err);
        goto done;
      }
    }
  }
  /* Without WHERE every row: a predicate that is TRUE on every row. */
  tbuf all = {0};
  if (!where || !where[0]) {
    free(where);
    where = NULL;
    if (sh->t->ncols == 0) {
      fprintf(stderr, "error: the table has no columns\n");
      goto done;
    }
    tbuf name = {0};
    for (const char *n0 = sh->t->cols[0].name; *n0; n0++) {
      if (*n0 == '"') tbuf_putc(&name, '"');
      tbuf_putc(&name, *n0);
    }
    tbuf_printf(&all, "\"%.*s\" IS NULL OR \"%.*s\" IS NOT NULL", (int)name.len, (const char *)name.p, (int)name.len,
                (const char *)name.p);
    tbuf_putc(&all, 0);
    tbuf_free(&name);
  }
  const char *src = where ? where : (const char *)all.p;
  int built = query_plan_build_cached(sh->ctx, sh->t, src, strlen(src), &q, stderr, sh->cols, sh->dec_cols);
  tbuf_free(&all);
  if (built) goto done;
  if (sh->explain) {
    tbuf s = {0};
    expr_to_string(q.ast, &s);
    printf("expression: %.*s\n", (int)s.len, s.p ? (const char *)s.p : "");
    tbuf_free(&s);
  }
  double t0 = now_seconds();
  progress_begin(&sh->bar);
  if (count_only) {
    ps_status st = ps_filter_count(sh->ctx, q.expr, &count);
    progress_end(&sh->bar);
    if (st != PS_OK) {
      fprintf(stderr, "error: %s\n", lib_error(st, ps_context_last_error(sh->ctx)));
      goto done;
    }
  } else {
    int failed = query_row_ids(&q, 0, &ids, &count, err, sizeof err);
    progress_end(&sh->bar);
    if (failed) {
      fprintf(stderr, "error: %s\n", err);
      goto done;
    }
  }
  double t1 = now_seconds();
  if (count_only) {
    printf("%llu\n", (unsigned long long)count);
  } else {
    if (query_order_ids(&q, ids, count, keys, norder, err, sizeof err)) {
      fprintf(stderr, "error: %s\n", err);
      goto done;
    }
    uint64_t shown = have_limit && limit < count ? limit : count;
    query_output o = {sh->format, sh->header, 0, 0};
    if (query_write_rows(&q, ids, shown, sel, nsel, &o, stdout, err, sizeof err)) {
      fprintf(stderr, "error: %s\n", err);
      goto done;
    }
  }
  fflush(stdout);
  double t2 = now_seconds();
  if (sh->timer)
    printf("Run Time: evaluate %.3f ms (%llu of %llu rows), output %.3f ms, on %s\n", (t1 - t0) * 1e3,
           (unsigned long long)count, (unsigned long long)sh->t->rows, (t2 - t1) * 1e3, ps_context_backend(sh->ctx));
  rc = 0;
done:
  query_plan_free(&q);
  free(ids);
  free(sel);
  free(keys);
  free(cols);
  free(where);
  free(order);
  return rc;
}

static int on_off(const char *arg, int *v) {
  if (!strcasecmp(arg, "on") || !strcmp(arg, "1")) {
    *v = 1;
    return 0;
  }
  if (!strcasecmp(arg, "off") || !strcmp(arg, "0")) {
    *v = 0;
    return 0;
  }
  return -1;
}

/* 1: quit; 0: done; -1: failed. */
static int run_dot(shell *sh, char *line) {
  char *cmd = line + 1, *arg = cmd;
  while (*arg && !isspace((unsigned char)*arg)) arg++;
  if (*arg) *arg++ = 0;
  while (isspace((unsigned char)*arg)) arg++;
  char *e = arg + strlen(arg);
  while (e > arg && (isspace((unsigned char)e[-1]) || e[-1] == ';')) *--e = 0;
  if (!strcmp(cmd, "quit") || !strcmp(cmd, "exit") || !strcmp(cmd, "q")) return 1;
  if (!strcmp(cmd, "help")) {
    shell_help();
    return 0;
  }
  if (!strcmp(cmd, "format") || !strcmp(cmd, "mode")) {
    if (!*arg) {
      printf("%s\n", out_format_name(sh->format));
      return 0;
    }
    if (out_format_parse(arg, &sh->format)) {
      fprintf(stderr, "error: .%s %s: expected table, csv or json\n", cmd, arg);
      return -1;
    }
    return 0;
  }
  if (!strcmp(cmd, "headers") || !strcmp(cmd, "header") || !strcmp(cmd, "timer") || !strcmp(cmd, "explain")) {
    int *v = cmd[0] == 'h' ? &sh->header : cmd[0] == 't' ? &sh->timer : &sh->explain;
    if (on_off(arg, v)) {
      fprintf(stderr, "error: .%s: expected on or off\n", cmd);
      return -1;
    }
    return 0;
  }
  if (!strcmp(cmd, "columns") || !strcmp(cmd, "schema")) {
    for (uint32_t i = 0; i < sh->t->ncols; i++) {
      char ty[32];
      tbl_column_typename(&sh->t->cols[i], ty);
      printf("%s %s%s\n", sh->t->cols[i].name, ty, sh->t->cols[i].null_count ? "" : " NOT NULL");
    }
    return 0;
  }
  if (!strcmp(cmd, "backend")) {
    printf("%s (%s); device: %s\n", ps_context_backend(sh->ctx), sh->why, ps_context_device(sh->ctx));
    return 0;
  }
  fprintf(stderr, "error: unknown command '.%s' (.help lists them)\n", cmd);
  return -1;
}

static void shell_usage(FILE *f) {
  fprintf(f,
          "usage: packscan shell [options] TABLE\n"
          "  Reads queries from stdin, one per line, on the table kept open (.help lists them).\n"
          "      --backend NAME    reference, opencl, cuda or auto (default)\n"
          "      --format F        table, csv or json (default: table on a terminal, csv otherwise)\n"
          "      --no-verify       skip the section checksums when opening the table\n" QUERY_STREAM_USAGE);
}

int cmd_shell(int argc, char **argv) {
  const char *path = NULL;
  query_args opt;
  query_args_init(&opt, 1);
  shell sh;
  memset(&sh, 0, sizeof sh);
  sh.format = out_format_default(stdout);
  sh.header = 1;
  argp a = {argc, 1, argv, NULL};
  for (; a.i < argc; a.i++) {
    int missing = 0;
    const char *s = argv[a.i];
    int streaming = stream_arg(&a, &opt, &missing, "shell");
    if (streaming < 0) return 2;
    if (missing) break;
    if (streaming) continue;
    if (arg_flag(&a, "--help", "-h")) {
      shell_usage(stdout);
      return 0;
    } else if (arg_value(&a, "--backend", NULL, &missing)) {
      if (missing) break;
      opt.backend = a.value;
    } else if (arg_value(&a, "--format", NULL, &missing)) {
      if (missing) break;
      if (out_format_parse(a.value, &sh.format)) {
        fprintf(stderr, "packscan shell: --format '%s': expected table, csv or json\n", a.value);
        return 2;
      }
    } else if (arg_flag(&a, "--no-verify", NULL)) {
      opt.verify = 0;
    } else if (s[0] == '-' && s[1]) {
      fprintf(stderr, "packscan shell: unknown option '%s'\n", s);
      shell_usage(stderr);
      return 2;
    } else if (!path) {
      path = s;
    } else {
      fprintf(stderr, "packscan shell: unexpected argument '%s'\n", s);
      return 2;
    }
  }
  if (a.i < argc) {
    fprintf(stderr, "packscan shell: option '%s' needs a value\n", argv[a.i]);
    return 2;
  }
  if (!path) {
    shell_usage(stderr);
    return 2;
  }
  char err[TOOL_ERR_SIZE];
  if (tbl_open_file(path, opt.verify, &sh.t, err, sizeof err)) {
    fprintf(stderr, "packscan shell: %s\n", err);
    return 1;
  }
  if (query_args_context(&opt, sh.t, &sh.bar, &sh.ctx, sh.why, sizeof sh.why, err, sizeof err)) {
    fprintf(stderr, "packscan shell: %s\n", err);
    tbl_close(sh.t);
    return 1;
  }
  size_t nc = sh.t->ncols ? sh.t->ncols : 1;
  sh.cols = calloc(nc, sizeof *sh.cols);
  sh.dec_cols = calloc(nc, sizeof *sh.dec_cols);
  int interactive = isatty(fileno(stdin));
  int failed = 0, rc = 0;
  if (!sh.cols || !sh.dec_cols) {
    fprintf(stderr, "packscan shell: out of memory\n");
    rc = 1;
    goto done;
  }
  if (interactive)
    printf(
        "packscan %s shell: %s, %llu rows, %u columns, on %s (%s)\n"
        "Enter \".help\" for usage hints. Line editing is the terminal's own (try rlwrap for history).\n",
        ps_version_string(), path, (unsigned long long)sh.t->rows, sh.t->ncols, ps_context_backend(sh.ctx), sh.why);
  char *line = NULL;
  size_t cap = 0;
  uint64_t lineno = 0;
  for (;;) {
    if (interactive) {
      printf("packscan> ");
      fflush(stdout);
    }
    errno = 0;
    ssize_t n = getline(&line, &cap, stdin);
    lineno++;
    if (n < 0) {
      if (interactive) printf("\n");
      break;
    }
    /* Line ends, spaces and the statement's ';' (outside quotes: a quote
     * after it would be one the lexer needs). */
    while (n > 0 && (line[n - 1] == '\n' || line[n - 1] == '\r' || line[n - 1] == ' ' || line[n - 1] == '\t' ||
                     line[n - 1] == ';'))
      line[--n] = 0;
    size_t start = strspn(line, " \t");
    if (line[start] == 0 || line[start] == '#' || !strncmp(line + start, "--", 2)) continue;
    int r;
    if (line[start] == '.') {
      r = run_dot(&sh, line + start);
      if (r == 1) break;
    } else {
      r = run_statement(&sh, line + start, (size_t)n - start);
    }
    if (r < 0) {
      failed++;
      if (!interactive) fprintf(stderr, "  (line %llu of the input)\n", (unsigned long long)lineno);
    }
    fflush(stdout);
  }
  free(line);
  /* In a script a failed statement is an error, as sqlite3 -bail would make it. */
  rc = failed && !interactive ? 1 : 0;
done:
  if (sh.cols && sh.dec_cols)
    for (uint32_t i = 0; i < sh.t->ncols; i++) {
      ps_column_destroy(sh.cols[i]);
      ps_column_destroy(sh.dec_cols[i]);
    }
  free(sh.cols);
  free(sh.dec_cols);
  ps_context_destroy(sh.ctx);
  tbl_close(sh.t);
  return rc;
}
