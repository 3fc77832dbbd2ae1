#include "progress.h"

#include <stdio.h>
#include <unistd.h>

#include "util.h"

void progress_init(progress_bar *b, int want) {
  b->enabled = want && isatty(STDERR_FILENO);
  b->delay = PROGRESS_DELAY;
  b->start = now_seconds();
  b->last_draw = 0;
  b->drawn = 0;
}

void progress_begin(progress_bar *b) {
  b->start = now_seconds();
  b->last_draw = 0;
}

void progress_report(void *user, uint64_t rows_done, uint64_t rows_total) {
  progress_bar *b = user;
  if (!b->enabled || !rows_total) return;
  const double now = now_seconds();
  if (now - b->start < b->delay) return;
  /* a redraw every 0.1 s is smooth enough and costs nothing per chunk */
  if (b->drawn && now - b->last_draw < 0.1 && rows_done < rows_total) return;
  int pct = (int)(rows_done * 100 / rows_total);
  if (pct > 100) pct = 100;
  char bar[41];
  for (int i = 0; i < 40; i++) bar[i] = i < pct * 40 / 100 ? '#' : '.';
  bar[40] = 0;
  /* a percentage, not rows: a hashed GROUP BY reads its rows twice */
  fprintf(stderr, "\rscanning [%s] %3d%% %.1f s", bar, pct, now - b->start);
  fflush(stderr);
  b->drawn = 1;
  b->last_draw = now;
}

void progress_end(progress_bar *b) {
  if (!b->drawn) return;
  fputs("\r\033[K", stderr);
  fflush(stderr);
  b->drawn = 0;
}
