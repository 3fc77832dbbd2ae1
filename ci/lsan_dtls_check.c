/* The LeakSanitizer exit-time crash that ci/sanitize.sh's
 * intercept_tls_get_addr=0 avoids, reproduced in one program: a thread reads
 * a thread-local variable of a dlopen'ed library (glibc allocates that
 * thread's block of it with malloc: dynamic TLS, as in PoCL's threads) and
 * is still alive at exit. With the interceptor of the sanitizer runtimes of
 * LLVM <= 16 and GCC <= 13 (clang 14 in CI), the block here lands 16 bytes
 * past a page boundary, is taken for one with a glibc 2.19 header, and the
 * exit-time check scans the range read from ASan's chunk header in front of
 * it: "Tracer caught signal 11", exit status 1, on every run. ci/sanitize.sh builds this
 * twice (-DPS_DTLS_LIB: the library) and runs it with the job's options
 * before the tests: exit status 0, and a leak it plants is still reported
 * when asked (argument "leak"). */
#ifdef PS_DTLS_LIB
__thread long ps_dtls_value[2];
long *ps_dtls_get(void);
long *ps_dtls_get(void) { return ps_dtls_value; }
#else
#include <dlfcn.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static long *(*get_value)(void);
static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static pthread_cond_t cond = PTHREAD_COND_INITIALIZER;
static int ready;
void *volatile ps_dtls_sink;

static void *worker(void *arg) {
  (void)arg;
  get_value()[0] = 1;
  pthread_mutex_lock(&lock);
  ready = 1;
  pthread_cond_signal(&cond);
  pthread_mutex_unlock(&lock);
  for (;;) pause(); /* parked at exit, as a driver's worker thread */
  return NULL;
}

int main(int argc, char **argv) {
  if (argc < 2) {
    fprintf(stderr, "usage: %s LIBRARY [leak]\n", argv[0]);
    return 2;
  }
  void *lib = dlopen(argv[1], RTLD_NOW);
  if (!lib) {
    fprintf(stderr, "dlopen: %s\n", dlerror());
    return 2;
  }
  *(void **)&get_value = dlsym(lib, "ps_dtls_get");
  if (!get_value) return 2;
  pthread_t t;
  if (pthread_create(&t, NULL, worker, NULL)) return 2;
  pthread_mutex_lock(&lock);
  while (!ready) pthread_cond_wait(&cond, &lock);
  pthread_mutex_unlock(&lock);
  if (argc > 2 && strcmp(argv[2], "leak") == 0) {
    ps_dtls_sink = malloc(77);
    ps_dtls_sink = NULL;
  }
  return 0;
}
#endif
