/* The packscan command's subcommands. Each returns the process exit status:
 * 0 success, 1 an error (message on stderr), 2 a usage error. */
#ifndef PSTOOL_CLI_H
#define PSTOOL_CLI_H

#include <stddef.h>

#include "output.h"

/* The whole command: argv[1] names the subcommand. */
int cli_main(int argc, char **argv);
int cmd_encode(int argc, char **argv);
int cmd_query(int argc, char **argv);
int cmd_info(int argc, char **argv);
int cmd_demo(int argc, char **argv);
int cmd_backends(int argc, char **argv);
int cmd_shell(int argc, char **argv);
/* `query` with a SELECT statement (cmd_select.c): query_is_select says
 * whether the arguments hold one. */
int cmd_select(int argc, char **argv);
int query_is_select(int argc, char **argv);

/* Option parsing shared by the subcommands: matches "--name", "--name=value"
 * and "--name value" (also a short alias such as "-d"). */
typedef struct argp {
  int argc, i;
  char **argv;
  const char *value;
} argp;
int arg_flag(argp *a, const char *name, const char *alias);
int arg_value(argp *a, const char *name, const char *alias, int *missing);
int parse_u64_arg(const char *s, unsigned long long *out);

/* The options `query` takes for WHERE-expressions and SELECTs alike. */
typedef struct query_args {
  const char *backend;       /* "auto" */
  out_format format;         /* a table on a terminal, CSV otherwise */
  int header;                /* the command's default until --header / --no-header */
  int timing, explain;       /* 0 */
  int verify;                /* 1 */
  unsigned long long repeat; /* 1 */
} query_args;
void query_args_init(query_args *q, int header);
/* Reads a->argv[a->i] when it is one of query_args' options (a->i then past
 * its value). Returns 1 when it was (*missing set when its value is not
 * there), 0 when it is not one of them, -1 after printing a usage error on
 * stderr (a bad --format or --repeat). */
int query_arg(argp *a, query_args *q, int *missing);

#endif
