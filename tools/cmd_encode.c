/* packscan encode: CSV -> table file. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "cli.h"
#include "encode.h"

static void encode_usage(FILE *f) {
  fprintf(f,
          "usage: packscan encode [options] INPUT.csv OUTPUT.pst\n"
          "  Encodes a CSV file (with a header row; INPUT '-' reads stdin) into a table file.\n"
          "  INPUT.parquet / .feather / .arrow: read by pyarrow through the Python package\n"
          "  (python -m packscan encode; $PYTHON, default python3); the options do not apply.\n"
          "  -d, --delimiter C   field delimiter ('tab' or '\\t' for tabs); default: detected from\n"
          "                      the header line (the most frequent of , ; tab |)\n"
          "  -t, --types SPEC    column types, e.g. 'price:decimal(2),day:date,id:int'\n"
          "                      (int, decimal, decimal(S), float, date, timestamp, timestamp(S),\n"
          "                      time, time(S), boolean, string; S: digits; others inferred)\n"
          "      --null STR      an unquoted field equal to STR is a null (empty fields always are)\n"
          "      --sort-by COLS  sort the rows by these columns ('a,b': by a, then b), ascending,\n"
          "                      nulls last, stably (equal keys keep the input's order), so that\n"
          "                      the zone maps let queries skip blocks of rows\n"
          "      --progress      always draw the progress bar (default: when stderr is a terminal\n"
          "                      and the input is over 16 MB); --no-progress never\n"
          "  -e, --encoding E    numeric columns: auto (default: the smaller of the two below), for,\n"
          "                      or delta (delta of FOR, for sorted columns: dates, timestamps, keys)\n"
          "  -q, --quiet         no per-column summary\n");
}

/* Parquet and Arrow IPC files are read by pyarrow through the Python package
 * (python/: `python -m packscan encode`), which writes the same table file. */
static int arrow_input(const char *path) {
  static const char *const exts[] = {".parquet", ".pq", ".feather", ".arrow", ".ipc"};
  size_t n = strlen(path);
  for (size_t i = 0; i < sizeof exts / sizeof exts[0]; i++) {
    size_t e = strlen(exts[i]);
    if (n > e && !strcmp(path + n - e, exts[i])) return 1;
  }
  return 0;
}

static int encode_through_python(const char *in_path, const char *out_path) {
  const char *py = getenv("PYTHON");
  if (!py || !*py) py = "python3";
  execlp(py, py, "-m", "packscan", "encode", in_path, out_path, (char *)NULL);
  fprintf(stderr,
          "packscan encode: %s: Parquet and Arrow IPC files are read through the Python package, and %s could "
          "not be run (%s); install it with: pip install ./python pyarrow\n",
          in_path, py, strerror(errno));
  return 1;
}

int cmd_encode(int argc, char **argv) {
  encode_options o;
  encode_options_init(&o);
  const char *in_path = NULL, *out_path = NULL, *sort_by = NULL;
  int quiet = 0, progress = -1;
  argp a = {argc, 1, argv, NULL};
  for (; a.i < argc; a.i++) {
    int missing = 0;
    const char *s = argv[a.i];
    if (arg_flag(&a, "--help", "-h")) {
      encode_usage(stdout);
      return 0;
    } else if (arg_value(&a, "--delimiter", "-d", &missing)) {
      if (missing) break;
      const char *v = a.value;
      if (!strcmp(v, "tab") || !strcmp(v, "\\t")) v = "\t";
      if (strlen(v) != 1 || v[0] == '"' || v[0] == '\n' || v[0] == '\r') {
        fprintf(stderr, "packscan encode: the delimiter must be one character other than a quote or line break\n");
        return 2;
      }
      o.delimiter = v[0];
    } else if (arg_value(&a, "--types", "-t", &missing)) {
      if (missing) break;
      o.types = a.value;
    } else if (arg_value(&a, "--sort-by", NULL, &missing)) {
      sort_by = a.value;
    } else if (arg_value(&a, "--encoding", "-e", &missing)) {
      if (missing) break;
      const char *v = a.value;
      if (!strcmp(v, "for"))
        o.encoding = PS_ENCODING_FOR;
      else if (!strcmp(v, "delta"))
        o.encoding = PS_ENCODING_DELTA;
      else if (!strcmp(v, "auto"))
        o.encoding = PS_ENCODING_AUTO;
      else {
        fprintf(stderr, "packscan encode: --encoding '%s': expected for, delta or auto\n", v);
        return 2;
      }
    } else if (arg_value(&a, "--null", NULL, &missing)) {
      if (missing) break;
      o.null_value = a.value;
    } else if (arg_flag(&a, "--progress", NULL)) {
      progress = 1;
    } else if (arg_flag(&a, "--no-progress", NULL)) {
      progress = 0;
    } else if (arg_flag(&a, "--quiet", "-q")) {
      quiet = 1;
    } else if (s[0] == '-' && s[1] != 0) {
      fprintf(stderr, "packscan encode: unknown option '%s'\n", s);
      encode_usage(stderr);
      return 2;
    } else if (!in_path) {
      in_path = s;
    } else if (!out_path) {
      out_path = s;
    } else {
      fprintf(stderr, "packscan encode: unexpected argument '%s'\n", s);
      return 2;
    }
    continue;
  }
  if (a.i < argc) {
    fprintf(stderr, "packscan encode: option '%s' needs a value\n", argv[a.i]);
    return 2;
  }
  if (!in_path || !out_path) {
    encode_usage(stderr);
    return 2;
  }
  char err[TOOL_ERR_SIZE];
  /* The output must not be the input, under any name (a symlink or a hard
   * link to it, or stdin redirected from it): the table would replace the
   * file it is made from. Checked before the work, and again by the writer. */
  out_input input;
  if (arrow_input(in_path)) {
    if (out_input_stat(&input, in_path, in_path, err, sizeof err) == 0 &&
        out_check_not_input(out_path, &input, err, sizeof err)) {
      fprintf(stderr, "packscan encode: %s\n", err);
      return 1;
    }
    return encode_through_python(in_path, out_path);
  }
  FILE *in = strcmp(in_path, "-") ? fopen(in_path, "rb") : stdin;
  if (!in) {
    fprintf(stderr, "packscan encode: %s: %s\n", in_path, strerror(errno));
    return 1;
  }
  input.name = strcmp(in_path, "-") ? in_path : "(stdin)";
  int have_in = fstat(fileno(in), &input.st) == 0;
  if (have_in && out_check_not_input(out_path, &input, err, sizeof err)) {
    fprintf(stderr, "packscan encode: %s\n", err);
    if (in != stdin) fclose(in);
    return 1;
  }
  if (have_in && S_ISREG(input.st.st_mode)) o.input_size = (uint64_t)input.st.st_size;
  o.progress = progress >= 0 ? progress : (isatty(2) && o.input_size > (16u << 20));

  encoded_table t;
  tbuf diag = {0};
  double t0 = now_seconds();
  int rc = encode_csv(csv_read_file, in, &o, &t, &diag, err, sizeof err);
  if (in != stdin) fclose(in);
  if (rc != 0) {
    if (diag.len) fprintf(stderr, "%.*s", (int)diag.len, (const char *)diag.p);
    fprintf(stderr, "packscan encode: %s: %s\n", in_path, err);
    tbuf_free(&diag);
    return 1;
  }
  tbuf_free(&diag);
  if (sort_by && encode_sort_rows(&t, sort_by, err, sizeof err)) {
    fprintf(stderr, "packscan encode: %s\n", err);
    encoded_table_free(&t);
    return 2;
  }
  if (t.warnings.len) fprintf(stderr, "%.*s", (int)t.warnings.len, (const char *)t.warnings.p);
  uint64_t size = 0;
  if (o.progress) fprintf(stderr, "writing %s\n", out_path);
  /* A table written to the standard output (/dev/stdout into a pipe) must not
   * get the summary mixed into it. */
  FILE *summary = out_is_stdout(out_path) ? stderr : stdout;
  if (tbl_write_file(out_path, have_in ? &input : NULL, t.rows, t.cols, t.ncols, &size, err, sizeof err)) {
    fprintf(stderr, "packscan encode: %s\n", err);
    encoded_table_free(&t);
    return 1;
  }
  double secs = now_seconds() - t0;
  if (!quiet) {
    char a1[32], a2[32], ratio[32];
    format_bytes(t.input_bytes, a1);
    format_bytes(size, a2);
    format_ratio(t.input_bytes, size, ratio);
    fprintf(summary, "%s: %llu rows, %u columns; CSV %s -> table %s (%s%s) in %.2f s\n", out_path,
            (unsigned long long)t.rows, t.ncols, a1, a2, ratio,
            size > t.input_bytes ? ": the table is larger than the CSV" : "", secs);
    if (!o.delimiter && t.delimiter != ',')
      fprintf(summary, "delimiter: %s (detected from the header line; -d sets it)\n",
              t.delimiter == '\t'  ? "tab"
              : t.delimiter == ';' ? "';'"
                                   : "'|'");
    encode_print_summary(summary, &t);
  }
  encoded_table_free(&t);
  return 0;
}
