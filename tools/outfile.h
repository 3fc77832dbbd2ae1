/* How the packscan command and the Python package write a file a user names
 * (encode's table, demo --out, query --bitmap, Table.save): one rule for every
 * output, written once here.
 *
 * - An output that is the input (the same device and inode once links are
 *   followed: a symlink, a hard link, /dev/stdin) is refused before anything is
 *   written.
 * - A regular file (or a symlink to one: its target is replaced, the link
 *   stays) is written to a temporary file in the target's folder, flushed to
 *   disk, optionally checked, and renamed over the target, which keeps the old
 *   file's mode and, where the process may, its owner and group. A new file
 *   gets 0666 less the umask (the kernel applies it, and any default ACL).
 * - Anything else that exists (a character device such as /dev/stdout or
 *   /dev/null, a FIFO, a socket) is opened and written in place, streamed,
 *   never renamed over. So is the file open as the standard output (the
 *   shell's `> file` behind /dev/stdout).
 * - A dangling symlink is refused: its target is not created (cp does the
 *   same), and the link itself is never replaced.
 * - A directory is refused. */
#ifndef PSTOOL_OUTFILE_H
#define PSTOOL_OUTFILE_H

#include <stddef.h>
#include <stdio.h>
#include <sys/stat.h>

/* The file an output must not be: stat() of the input (fstat for stdin) and
 * the name to print for it. */
typedef struct out_input {
  struct stat st;
  const char *name;
} out_input;

typedef struct out_file {
  FILE *f;          /* write here */
  int direct;       /* 1: written in place (no temporary, no rename) */
  char *target;     /* regular: the path renamed over (a symlink's target) */
  char *tmp;        /* regular: the temporary file beside it */
  int replaces;     /* regular: 1 when a file was at target */
  struct stat old;  /* that file, whose mode and owner the new one keeps */
  const char *path; /* the path as the user gave it, for messages */
} out_file;

/* Fills in with stat(path) (following links); 0, or -1 with a message. */
int out_input_stat(out_input *in, const char *path, const char *name, char *err, size_t errsz);

/* -1 with "the output OUT is the input IN (the same file); nothing was
 * written" when path names the input once links are followed, else 0
 * (also when path does not exist). input may be NULL. */
int out_check_not_input(const char *path, const out_input *input, char *err, size_t errsz);

/* Nonzero when path, links followed, is the file open as the standard output
 * (where a command must then keep its messages off stdout). */
int out_is_stdout(const char *path);

/* Opens the output per the rules above (a FIFO's open waits for a reader).
 * input may be NULL. 0, or -1 with a message naming the path. */
int out_file_open(out_file *o, const char *path, const out_input *input, char *err, size_t errsz);

/* Finishes the output: flushes (and for a regular file fsyncs, calls check on
 * the temporary's path when check is not NULL, gives it the old file's mode
 * and owner, renames it over the target and syncs the folder). On failure
 * nothing has replaced the target, the temporary is removed, and -1 comes
 * with a message. Closes o either way. */
int out_file_commit(out_file *o, int (*check)(const char *tmp_path, void *arg, char *err, size_t errsz), void *arg,
                    char *err, size_t errsz);

/* Gives up: closes o, removes the temporary; the target is untouched. */
void out_file_abort(out_file *o);

#endif
