/* A scan's progress bar on stderr, fed by the library's progress callback
 * (ps_context_options.progress): drawn only on a terminal, only once a scan
 * has run for PROGRESS_DELAY seconds, and erased before anything else is
 * printed, so that output and messages look the same with and without it. */
#ifndef PSTOOL_PROGRESS_H
#define PSTOOL_PROGRESS_H

#include <stdint.h>

#define PROGRESS_DELAY 1.0

typedef struct progress_bar {
  int enabled;      /* wanted and stderr is a terminal */
  double delay;     /* seconds before the first drawing */
  double start;     /* when the scan began (progress_begin) */
  double last_draw; /* when it was last drawn */
  int drawn;        /* something is on the line */
} progress_bar;

/* enabled when want is nonzero and stderr is a terminal. */
void progress_init(progress_bar *b, int want);
/* A scan starts now (the delay counts from here). */
void progress_begin(progress_bar *b);
/* The library's callback; user is the progress_bar. */
void progress_report(void *user, uint64_t rows_done, uint64_t rows_total);
/* Erases the bar, if drawn; call before printing results or errors. */
void progress_end(progress_bar *b);

#endif
