/* packscan backends: which backends are compiled in, which can start a
 * context here (and on which device), and what "auto" picks. */
#include <stdio.h>
#include <string.h>

#include "cli.h"
#include "query.h"

int cmd_backends(int argc, char **argv) {
  (void)argv;
  if (argc > 1) {
    fprintf(stderr, "usage: packscan backends\n");
    return 2;
  }
  printf("%-10s %-7s %s\n", "backend", "usable", "device, or why not");
  for (size_t i = 0; i < ps_backend_count(); i++) {
    const char *name = ps_backend_name(i);
    ps_context *ctx;
    char err[TOOL_ERR_SIZE];
    ps_context_options o;
    ps_context_options_init(&o);
    o.backend = name;
    ps_status st = ps_context_create(&o, err, sizeof err, &ctx);
    if (st != PS_OK) {
      printf("%-10s %-7s %s\n", name, "no", lib_error(st, err));
      continue;
    }
    int cpu = query_device_is_cpu(ctx);
    printf("%-10s %-7s %s%s\n", name, "yes", ps_context_device(ctx),
           cpu == 1 && strcmp(name, "reference") ? " (a CPU device)" : "");
    ps_context_destroy(ctx);
  }
  char why[TOOL_ERR_SIZE], err[TOOL_ERR_SIZE];
  ps_context *ctx;
  if (query_context_for("auto", QUERY_AUTO_DEVICE_ROWS, &ctx, why, sizeof why, err, sizeof err)) {
    printf("auto: no backend can start: %s\n", err);
    return 1;
  }
  const char *reason = !strncmp(why, "auto: ", 6) ? why + 6 : why;
  printf("auto (packscan query, shell): reference below %llu rows; from %llu rows: %s (%s)\n",
         (unsigned long long)QUERY_AUTO_DEVICE_ROWS, (unsigned long long)QUERY_AUTO_DEVICE_ROWS,
         ps_context_backend(ctx), reason);
  ps_context_destroy(ctx);
  return 0;
}
