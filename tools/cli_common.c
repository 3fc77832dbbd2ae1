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

void query_args_init(query_args *q, int header) {
  q->backend = "auto";
  q->format = out_format_default(stdout);
  q->header = header;
  q->timing = q->explain = 0;
  q->verify = 1;
  q->repeat = 1;
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
    return 0;
  }
  return 1;
}
