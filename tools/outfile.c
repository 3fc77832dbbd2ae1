/* The one rule for writing a user's file (outfile.h). */
/* realpath */
#define _XOPEN_SOURCE 700
#include "outfile.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "util.h"

static int same_file(const struct stat *a, const struct stat *b) {
  return a->st_dev == b->st_dev && a->st_ino == b->st_ino;
}

int out_input_stat(out_input *in, const char *path, const char *name, char *err, size_t errsz) {
  in->name = name;
  if (stat(path, &in->st) != 0) return set_err(err, errsz, "%s: %s", path, strerror(errno));
  return 0;
}

static int refuse_input(const char *path, const out_input *input, char *err, size_t errsz) {
  return set_err(err, errsz, "the output %s is the input %s (the same file); nothing was written", path, input->name);
}

int out_check_not_input(const char *path, const out_input *input, char *err, size_t errsz) {
  struct stat st;
  if (input && stat(path, &st) == 0 && same_file(&st, &input->st)) return refuse_input(path, input, err, errsz);
  return 0;
}

/* The standard stream (1 or 2) that st is open as, else -1. */
static int std_stream_of(const struct stat *st) {
  for (int fd = 1; fd <= 2; fd++) {
    struct stat s;
    if (fstat(fd, &s) == 0 && same_file(&s, st)) return fd;
  }
  return -1;
}

int out_is_stdout(const char *path) {
  struct stat st, s1;
  return stat(path, &st) == 0 && fstat(1, &s1) == 0 && same_file(&st, &s1);
}

static char *dup_str(const char *s) {
  size_t n = strlen(s) + 1;
  char *p = malloc(n);
  if (p) memcpy(p, s, n);
  return p;
}

/* Creates "TARGET.tmpXXXXXX" exclusively (mkstemp's guarantee), but with the
 * mode asked for, so that the kernel applies the umask to a new file: mkstemp
 * would make it 0600, and reading the umask back (umask(0); umask(old)) is not
 * safe in a process with other threads (the Python package). */
static int create_temp(out_file *o, mode_t mode, char *err, size_t errsz) {
  static const char letters[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789";
  static atomic_uint counter;
  size_t n = strlen(o->target);
  if (n > SIZE_MAX - 16 || !(o->tmp = malloc(n + 16))) return set_err(err, errsz, "out of memory");
  struct timespec ts;
  clock_gettime(CLOCK_REALTIME, &ts);
  uint64_t x = (uint64_t)ts.tv_nsec ^ ((uint64_t)ts.tv_sec << 30) ^ ((uint64_t)getpid() << 16) ^ (uintptr_t)o;
  for (int attempt = 0; attempt < 1000; attempt++) {
    x += 0x9e3779b97f4a7c15ull + atomic_fetch_add(&counter, 1); /* splitmix64 */
    uint64_t z = x;
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    z ^= z >> 31;
    memcpy(o->tmp, o->target, n);
    memcpy(o->tmp + n, ".tmp", 4);
    for (int i = 0; i < 6; i++, z /= 62) o->tmp[n + 4 + i] = letters[z % 62];
    o->tmp[n + 10] = 0;
    int fd = open(o->tmp, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
    if (fd >= 0) {
      if (!(o->f = fdopen(fd, "wb"))) {
        int e = errno;
        close(fd);
        unlink(o->tmp);
        return set_err(err, errsz, "%s: %s", o->tmp, strerror(e));
      }
      return 0;
    }
    if (errno != EEXIST) break;
  }
  int e = errno;
  free(o->tmp);
  o->tmp = NULL;
  return set_err(err, errsz, "cannot create a temporary file next to %s: %s", o->target, strerror(e));
}

/* Opens a device, FIFO or socket (or the file behind a standard stream) to be
 * written where it is. */
static int open_direct(out_file *o, const char *path, const struct stat *st, const out_input *input, char *err,
                       size_t errsz) {
  int fd, stream = std_stream_of(st);
  /* A standard stream is written through its own descriptor: reopening
   * /dev/stdout fails for a socket and starts a redirected file at offset 0. */
  if (stream >= 0) {
    fflush(stream == 1 ? stdout : stderr);
    fd = fcntl(stream, F_DUPFD_CLOEXEC, 3);
  } else {
    fd = open(path, O_WRONLY | O_NOCTTY | O_CLOEXEC);
  }
  if (fd < 0) return set_err(err, errsz, "%s: %s", path, strerror(errno));
  struct stat now;
  if (fstat(fd, &now) != 0) {
    int e = errno;
    close(fd);
    return set_err(err, errsz, "%s: %s", path, strerror(e));
  }
  if (input && same_file(&now, &input->st)) {
    close(fd);
    return refuse_input(path, input, err, errsz);
  }
  if (stream < 0 && S_ISREG(now.st_mode)) { /* replaced by a regular file since the stat */
    close(fd);
    return set_err(err, errsz, "%s: changed while it was opened; nothing was written", path);
  }
  if (!(o->f = fdopen(fd, "wb"))) {
    int e = errno;
    close(fd);
    return set_err(err, errsz, "%s: %s", path, strerror(e));
  }
  o->direct = 1;
  return 0;
}

int out_file_open(out_file *o, const char *path, const out_input *input, char *err, size_t errsz) {
  memset(o, 0, sizeof *o);
  o->path = path;
  struct stat lst, st;
  if (lstat(path, &lst) != 0) {
    if (errno != ENOENT) return set_err(err, errsz, "%s: %s", path, strerror(errno));
    if (!(o->target = dup_str(path))) return set_err(err, errsz, "out of memory");
    if (create_temp(o, 0666, err, errsz) == 0) return 0;
    out_file_abort(o);
    return -1;
  }
  if (stat(path, &st) != 0) {
    if (S_ISLNK(lst.st_mode) && errno == ENOENT)
      return set_err(err, errsz,
                     "%s is a symbolic link to a file that does not exist; nothing was written (name the "
                     "link's target to create it)",
                     path);
    return set_err(err, errsz, "%s: %s", path, strerror(errno));
  }
  if (input && same_file(&st, &input->st)) return refuse_input(path, input, err, errsz);
  if (S_ISDIR(st.st_mode)) return set_err(err, errsz, "%s is a directory", path);
  if (!S_ISREG(st.st_mode) || std_stream_of(&st) >= 0) return open_direct(o, path, &st, input, err, errsz);
  /* A regular file: a symlink's target is replaced, in its own folder. */
  o->target = S_ISLNK(lst.st_mode) ? realpath(path, NULL) : dup_str(path);
  if (!o->target) return set_err(err, errsz, "%s: %s", path, strerror(errno));
  o->replaces = 1;
  o->old = st;
  if (create_temp(o, 0600, err, errsz) == 0) return 0;
  out_file_abort(o);
  return -1;
}

/* Makes a finished rename durable: the directory entry, not only the data. */
static void sync_parent_dir(const char *path) {
  const char *slash = strrchr(path, '/');
  tbuf dir = {0};
  if (slash ? tbuf_append(&dir, path, slash == path ? 1 : (size_t)(slash - path)) : tbuf_putc(&dir, '.')) return;
  if (tbuf_putc(&dir, 0) == 0) {
    int fd = open((const char *)dir.p, O_RDONLY | O_CLOEXEC);
    if (fd >= 0) {
      (void)fsync(fd);
      close(fd);
    }
  }
  tbuf_free(&dir);
}

/* The old file's owner where this process may give it (root may; anyone may
 * keep a group they belong to), then its mode: set-id bits only where the
 * owner or group they refer to was kept. */
static int keep_mode_and_owner(out_file *o, int fd, char *err, size_t errsz) {
  if (fchown(fd, o->old.st_uid, o->old.st_gid) != 0 && fchown(fd, (uid_t)-1, o->old.st_gid) != 0) {
    /* Neither could be kept: fstat below sees it and drops the set-id bits. */
  }
  struct stat now;
  if (fstat(fd, &now) != 0) return set_err(err, errsz, "%s: %s", o->tmp, strerror(errno));
  mode_t mode = o->old.st_mode & 07777;
  if (now.st_uid != o->old.st_uid) mode &= (mode_t)~S_ISUID;
  if (now.st_gid != o->old.st_gid) mode &= (mode_t)~S_ISGID;
  if (fchmod(fd, mode) != 0)
    return set_err(err, errsz, "%s: cannot set mode %04o: %s", o->tmp, (unsigned)mode, strerror(errno));
  return 0;
}

int out_file_commit(out_file *o, int (*check)(const char *tmp_path, void *arg, char *err, size_t errsz), void *arg,
                    char *err, size_t errsz) {
  char sub[TOOL_ERR_SIZE];
  int rc = 0;
  if (fflush(o->f) != 0) rc = set_err(sub, sizeof sub, "write failed: %s", strerror(errno));
  if (!o->direct) {
    int fd = fileno(o->f);
    if (rc == 0 && fsync(fd) != 0) rc = set_err(sub, sizeof sub, "write failed (fsync): %s", strerror(errno));
    if (rc == 0 && check) rc = check(o->tmp, arg, sub, sizeof sub);
    if (rc == 0 && o->replaces) rc = keep_mode_and_owner(o, fd, sub, sizeof sub);
  }
  if (fclose(o->f) != 0 && rc == 0) rc = set_err(sub, sizeof sub, "write failed: %s", strerror(errno));
  o->f = NULL;
  if (rc == 0 && !o->direct && rename(o->tmp, o->target) != 0)
    rc = set_err(sub, sizeof sub, "cannot rename %s to %s: %s", o->tmp, o->target, strerror(errno));
  if (rc == 0 && !o->direct) {
    free(o->tmp); /* renamed: nothing left to remove */
    o->tmp = NULL;
    sync_parent_dir(o->target);
  }
  if (rc != 0) set_err(err, errsz, "%s: %s", o->path, sub);
  out_file_abort(o);
  return rc;
}

void out_file_abort(out_file *o) {
  if (o->f) fclose(o->f);
  if (o->tmp) unlink(o->tmp);
  free(o->tmp);
  free(o->target);
  o->f = NULL;
  o->tmp = o->target = NULL;
}
