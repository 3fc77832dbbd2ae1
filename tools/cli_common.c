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
