/* deprecated_exported: the shared library still exports every name that
 * packscan.h keeps for one release, so that a program linked against an
 * earlier release resolves them at load time. argv[1]: the library's path;
 * the names follow. */
#include <dlfcn.h>
#include <stdio.h>

int main(int argc, char **argv) {
  if (argc < 3) {
    fprintf(stderr, "usage: %s LIBRARY NAME...\n", argv[0]);
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    fprintf(stderr, "dlopen %s: %s\n", argv[1], dlerror());
    return 1;
  }
  int missing = 0;
  for (int i = 2; i < argc; i++) {
    if (dlsym(lib, argv[i])) {
      printf("exported: %s\n", argv[i]);
    } else {
      printf("NOT EXPORTED: %s\n", argv[i]);
      missing++;
    }
  }
  dlclose(lib);
  printf("%s: %d of %d names exported\n", missing ? "FAILED" : "PASSED", argc - 2 - missing, argc - 2);
  return missing ? 1 : 0;
}
