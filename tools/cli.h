/* The packscan command's subcommands. Each returns the process exit status:
 * 0 success, 1 an error (message on stderr), 2 a usage error. */
#ifndef PSTOOL_CLI_H
#define PSTOOL_CLI_H

#include <stddef.h>

#include "output.h"
#include "progress.h"
#include "query.h"

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
/* A size in bytes: digits with an optional K, M, G or T suffix (powers of
 * 1024; "64K", "1.5G" is refused), a B or iB after it allowed. -1 when
 * malformed or past 2^64 - 1. */
int parse_size_arg(const char *s, unsigned long long *out);

/* The options `query` takes for WHERE-expressions and SELECTs alike. */
typedef struct query_args {
  const char *backend;       /* "auto" */
  out_format format;         /* a table on a terminal, CSV otherwise */
  int header;                /* the command's default until --header / --no-header */
  int timing, explain;       /* 0 */
  int verify;                /* 1 */
  unsigned long long repeat; /* 1 */
  /* --device-memory-limit SIZE (0: none given): the context's
   * device_memory_limit, and a table whose packed columns take more is
   * read host-resident; --host-resident: always; --no-progress. */
  unsigned long long device_memory_limit;
  int host_resident;
  /* --devices LIST: a context over these devices (0 of them: one device) */
  int32_t devices[PS_MAX_DEVICE_COUNT];
  uint32_t device_count;
  /* --opencl-platform P: the OpenCL platform, an index or a part of its
   * name (NULL: the library's choice) */
  const char *opencl_platform;
  int progress;          /* 1 */
  double progress_delay; /* PROGRESS_DELAY; --progress-delay S (testing) */
} query_args;
void query_args_init(query_args *q, int header);
/* The context of a command over table t (query_context_for with q's
 * backend, device_memory_limit and, unless --no-progress, the progress bar
 * *bar, initialized here), and t->host_resident as q asks. */
int query_args_context(const query_args *q, tbl_table *t, progress_bar *bar, ps_context **out, char *why, size_t whysz,
                       char *err, size_t errsz);
/* How t's columns live, for --timing: "host-resident ..." or "copied to the device". */
const char *query_args_residence(const tbl_table *t);
/* The options shared by `query`, SELECTs and `shell` for streaming tables
 * larger than the device, for usage texts. */
#define QUERY_STREAM_USAGE                                                                    \
  "      --device-memory-limit SIZE  device memory for a table's columns (bytes, K, M, G):\n" \
  "                        a table whose columns take more streams from the mapped file\n"    \
  "      --host-resident   always stream the table's columns from the mapped file\n"          \
  "      --devices LIST    split the table across these devices (e.g. 0,1), each scanning its rows\n" \
  "      --opencl-platform P  the OpenCL platform: an index, or a part of its name (e.g. NVIDIA)\n" \
  "      --no-progress     no progress bar (drawn on a terminal after a second of scanning)\n"

/* Reads a->argv[a->i] when it is one of query_args' options (a->i then past
 * its value). Returns 1 when it was (*missing set when its value is not
 * there), 0 when it is not one of them, -1 after printing a usage error on
 * stderr (a bad --format or --repeat). */
int query_arg(argp *a, query_args *q, int *missing);
/* The same for the streaming options alone (--device-memory-limit,
 * --host-resident, --no-progress); command names the subcommand in
 * messages. */
int stream_arg(argp *a, query_args *q, int *missing, const char *command);

#endif
