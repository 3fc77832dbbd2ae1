#include <ctype.h>
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cli.h"

int arg_flag(argp *a, const char *name, const char *alias) {
  const char *s = a->argv[a->i];
  return !strcmp(s, name) || (alias && !strcmp(s, alias));
}

int arg_value(argp *a, const char *name, const char *alias, int *missing) {
  const char *s = a->argv[a->i];
  size_t n = strlen(name);
  if (!strncmp(s, name, n) && s[n] == '=') {
    a->value = s + n + 1;
    return 1;
  }
  if (!strcmp(s, name) || (alias && !strcmp(s, alias))) {
    if (a->i + 1 >= a->argc) {
      *missing = 1;
      return 1;
    }
    a->value = a->argv[++a->i];
    return 1;
  }
  return 0;
}

int parse_u64_arg(const char *s, unsigned long long *out) {
  if (!s || !*s || *s == '-') return -1;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (*end == 'k' || *end == 'K') {
    v *= 1000ull;
    end++;
  } else if (*end == 'm' || *end == 'M') {
    v *= 1000000ull;
    end++;
  }
  if (*end) return -1;
  *out = v;
  return 0;
}

int parse_size_arg(const char *s, unsigned long long *out) {
  if (!s || *s < '0' || *s > '9') return -1;
  errno = 0;
  char *end;
  unsigned long long v = strtoull(s, &end, 10);
  if (errno == ERANGE) return -1;
  static const char units[] = "KMGT";
  const char *unit = *end ? strchr(units, toupper((unsigned char)*end)) : NULL;
  unsigned shift = unit ? 10u * (unsigned)(unit - units + 1) : 0;
  if (shift) end++;
  if (shift && end[0] == 'i' && end[1] == 'B') end++;
  if (*end == 'B') end++;
  if (*end || (shift && v > (~0ull >> shift))) return -1;
  *out = v << shift;
  return 0;
}

void query_args_init(query_args *q, int header) {
  q->backend = "auto";
  q->format = out_format_default(stdout);
  q->header = header;
  q->timing = q->explain = 0;
  q->verify = 1;
  q->repeat = 1;
  q->device_memory_limit = 0;
  q->host_resident = 0;
  q->device_count = 0;
  q->opencl_platform = NULL;
  q->progress = 1;
  q->progress_delay = PROGRESS_DELAY;
}

int query_args_context(const query_args *q, tbl_table *t, progress_bar *bar, ps_context **out, char *why, size_t whysz,
                       char *err, size_t errsz) {
  progress_init(bar, q->progress);
  bar->delay = q->progress_delay;
  query_ctx_opts o = {q->device_memory_limit, bar->enabled ? progress_report : NULL, bar, q->device_count,
                      q->devices, q->opencl_platform};
  t->host_resident = q->host_resident || (q->device_memory_limit && tbl_packed_bytes(t) > q->device_memory_limit);
  return query_context_for_opts(q->backend, t->rows, &o, out, why, whysz, err, errsz);
}

const char *query_args_residence(const tbl_table *t) {
  return t->host_resident ? "host-resident, streamed from the mapped file" : "copied to the device";
}

int query_arg(argp *a, query_args *q, int *missing) {
  if (arg_value(a, "--format", NULL, missing)) {
    if (*missing) return 1;
    if (out_format_parse(a->value, &q->format)) {
      fprintf(stderr, "packscan query: --format '%s': expected table, csv or json\n", a->value);
      return -1;
    }
  } else if (arg_flag(a, "--no-header", NULL)) {
    q->header = 0;
  } else if (arg_flag(a, "--header", NULL)) {
    q->header = 1;
  } else if (arg_value(a, "--backend", NULL, missing)) {
    if (*missing) return 1;
    q->backend = a->value;
  } else if (arg_flag(a, "--timing", NULL)) {
    q->timing = 1;
  } else if (arg_value(a, "--repeat", NULL, missing)) {
    if (*missing) return 1;
    if (parse_u64_arg(a->value, &q->repeat) || q->repeat == 0 || q->repeat > 1000000) {
      fprintf(stderr, "packscan query: --repeat needs a count of 1..1000000\n");
      return -1;
    }
  } else if (arg_flag(a, "--explain", NULL)) {
    q->explain = 1;
  } else if (arg_flag(a, "--no-verify", NULL)) {
    q->verify = 0;
  } else {
    return stream_arg(a, q, missing, "query");
  }
  return 1;
}

int stream_arg(argp *a, query_args *q, int *missing, const char *command) {
  if (arg_value(a, "--device-memory-limit", NULL, missing)) {
    if (*missing) return 1;
    if (parse_size_arg(a->value, &q->device_memory_limit) || q->device_memory_limit < PS_DEVICE_MEMORY_LIMIT_MIN) {
      fprintf(stderr,
              "packscan %s: --device-memory-limit '%s': expected a size of at least 64K (bytes, or with a K, M, "
              "G or T suffix)\n",
              command, a->value);
      return -1;
    }
  } else if (arg_flag(a, "--host-resident", NULL)) {
    q->host_resident = 1;
  } else if (arg_value(a, "--devices", NULL, missing)) {
    if (*missing) return 1;
    q->device_count = 0;
    for (const char *p = a->value;;) {
      char *end;
      const long v = strtol(p, &end, 10);
      if (end == p || v < 0 || v > INT32_MAX || q->device_count == PS_MAX_DEVICE_COUNT || (*end && *end != ',')) {
        fprintf(stderr, "packscan %s: --devices '%s': expected device numbers separated by commas (at most %d)\n",
                command, a->value, PS_MAX_DEVICE_COUNT);
        return -1;
      }
      q->devices[q->device_count++] = (int32_t)v;
      if (!*end) break;
      p = end + 1;
    }
  } else if (arg_value(a, "--opencl-platform", NULL, missing)) {
    if (*missing) return 1;
    if (!a->value[0]) {
      fprintf(stderr, "packscan %s: --opencl-platform: expected a platform index or a part of its name\n", command);
      return -1;
    }
    q->opencl_platform = a->value;
  } else if (arg_flag(a, "--no-progress", NULL)) {
    q->progress = 0;
  } else if (arg_value(a, "--progress-delay", NULL, missing)) { /* testing: draw the bar sooner */
    if (*missing) return 1;
    char *end;
    q->progress_delay = strtod(a->value, &end);
    if (end == a->value || *end || !(q->progress_delay >= 0)) {
      fprintf(stderr, "packscan %s: --progress-delay '%s': expected seconds\n", command, a->value);
      return -1;
    }
  } else {
    return 0;
  }
  return 1;
}
