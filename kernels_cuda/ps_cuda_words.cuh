/*
 * The CUDA general per-word kernel's parameters from the backend's
 * (ps_cuda_eval_params): the kernel itself is ps_cuda_where.cuh, around
 * kernels_shared/ps_where.h. Host and device (the host test
 * tests/test_cuda_eval_words.cu converts them the same way).
 */
#ifndef PS_CUDA_WORDS_CUH
#define PS_CUDA_WORDS_CUH

#include <stdint.h>

#include "ps_cuda_kernels.h"
#include "ps_cuda_rows.cuh" /* first: streams through the read-only cache (PS_CODES_LDG) */
#include "ps_cuda_where.cuh"

PS_HD ps_cuda_where_params ps_cuda_where_params_of(const ps_cuda_eval_params &p) {
  ps_cuda_where_params w;
  w.prog = p.prog;
  w.bufs.data_aligned = p.data_aligned;
  w.bufs.validity_aligned = p.validity_aligned;
  for (uint32_t c = 0; c < PS_MAX_COLS; ++c) {
    w.bufs.data[c] = p.data[c];
    w.bufs.validity[c] = p.validity[c];
    w.bufs.data_bytes[c] = p.prog.cols[c].data_bytes;
    w.bufs.validity_bytes[c] = p.prog.cols[c].validity_bytes;
  }
  w.bufs.aux.words = p.aux;
  w.bufs.aux.count = p.prog.aux_words;
  w.bitmap = p.bitmap;
  w.selection_in = p.selection_in;
  w.mask = p.mask;
  w.count = p.count;
  w.status = p.status;
  w.rows = p.rows;
  w.bitmap_aligned = p.bitmap_aligned;
  w.task_begin = 0;
  w.task_end = (ps_u32)((((ps_u64)p.rows + 31) / 32 + 31) / 32);
  return w;
}

#endif /* PS_CUDA_WORDS_CUH */
