/* The packscan command's dispatch to its subcommands (cli.h), shared by the
 * executable (main.c) and the Python package's `packscan` console script. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "packscan.h"

static void usage(FILE *f) {
  fprintf(f,
          "usage: packscan COMMAND [options]\n"
          "  encode INPUT.csv OUTPUT.pst   encode a CSV file into a table file\n"
          "  query TABLE \"WHERE-expr\"      count (or list) the rows where the expression is TRUE\n"
          "  info TABLE                    columns, types, encodings, widths, sizes\n"
          "  shell TABLE                   queries from stdin on the table kept open (.help inside)\n"
          "  demo                          generate a lineitem-like table and run TPC-H-style filters\n"
          "  backends                      the compiled-in backends, which are usable here, what auto picks\n"
          "  version                       print the version\n"
          "Run 'packscan COMMAND --help' for a command's options.\n");
}

int cli_main(int argc, char **argv) {
  if (argc < 2) {
    usage(stderr);
    return 2;
  }
  const char *cmd = argv[1];
  if (!strcmp(cmd, "encode")) return cmd_encode(argc - 1, argv + 1);
  if (!strcmp(cmd, "query")) return cmd_query(argc - 1, argv + 1);
  if (!strcmp(cmd, "info")) return cmd_info(argc - 1, argv + 1);
  if (!strcmp(cmd, "demo")) return cmd_demo(argc - 1, argv + 1);
  if (!strcmp(cmd, "shell")) return cmd_shell(argc - 1, argv + 1);
  if (!strcmp(cmd, "backends")) return cmd_backends(argc - 1, argv + 1);
  if (!strcmp(cmd, "version") || !strcmp(cmd, "--version")) {
    printf("packscan %s\n", ps_version_string());
    return 0;
  }
  if (!strcmp(cmd, "help") || !strcmp(cmd, "--help") || !strcmp(cmd, "-h")) {
    usage(stdout);
    return 0;
  }
  fprintf(stderr, "packscan: unknown command '%s'\n", cmd);
  usage(stderr);
  return 2;
}
