/*
 * CUDA's general per-word filter around kernels_shared/ps_where.h: one
 * thread per 32-row result word (row 32g+j at bit j), a warp per 32
 * consecutive words (a task), so that the warp's lanes write the byte mask
 * together. Compiled twice from this one body: generic by nvcc
 * (eval.cu's eval_words_kernel, the program read from the launch) and per
 * program shape by NVRTC (where_spec.cuh, after core's shape text:
 * backends/cuda/cuda_query_spec.c), so this header includes nothing that
 * NVRTC lacks.
 *
 * The helpers that touch no device-only intrinsic are __host__ __device__,
 * so that tests/test_cuda_eval_words.cu checks them, with the evaluator, on
 * the CPU against the per-row evaluation of ps_cuda_rows.cuh.
 */
#ifndef PS_CUDA_WHERE_CUH
#define PS_CUDA_WHERE_CUH

#include "ps_where.h"

/* Threads per block of both kernels: 4 warps. */
#define PS_CUDA_WHERE_BLOCK 128

/* Waves of resident blocks the kernels launch by default: with one wave,
 * each warp walks many tasks in turn and the SMs wait on its loads; with
 * more blocks than fit, they take new blocks while others drain
 * (docs/benchmarks.md). */
#define PS_CUDA_WHERE_WAVES 4u

/* Blocks of a launch over `tasks` tasks: `waves` waves of `resident` blocks
 * (waves 0: PS_CUDA_WHERE_WAVES; resident 0 counts as 1), at most one block
 * per PS_CUDA_WHERE_BLOCK/32 tasks (every warp one task), at least 1. The
 * kernel loops grid-stride, so any grid covers every task. */
PS_HFN ps_u32 ps_cw_grid_blocks(ps_u64 tasks, ps_u32 resident, ps_u32 waves) {
  const ps_u64 warps = PS_CUDA_WHERE_BLOCK / 32, want = (tasks + warps - 1) / warps;
  const ps_u64 grid = (ps_u64)(resident ? resident : 1u) * (waves ? waves : PS_CUDA_WHERE_WAVES);
  const ps_u64 blocks = want < grid ? want : grid;
  return blocks ? (ps_u32)blocks : 1u;
}

/* Everything the kernel reads, passed by value as a __grid_constant__
 * parameter (under the classic 4 KB limit: eval.cu checks). */
typedef struct ps_cuda_where_params {
  ps_program prog;
  ps_w_bufs bufs;            /* streams, bitmaps and aux at the chunk start */
  ps_u8 *bitmap;             /* ceil(rows/8) bytes, or NULL: no bitmap wanted */
  const ps_u8 *selection_in; /* ceil(rows/8) bytes ANDed in, or NULL; may be bitmap */
  ps_u8 *mask;               /* rows bytes, 1 = selected, or NULL */
  unsigned long long *count; /* device counter, += selected rows */
  ps_u32 *status;            /* device status word, |= slot bits and PS_W_FAULT_AUX */
  ps_u32 rows;               /* rows in this chunk, 1..2^31 */
  ps_u32 bitmap_aligned;     /* bitmap is 4-byte aligned */
  ps_u32 task_begin;         /* the launch's tasks (1,024 rows each): [task_begin, task_end) */
  ps_u32 task_end;           /* of the chunk's ceil(rows/1024) */
} ps_cuda_where_params;

/* Rows [32g, 32g+32) that exist in a chunk of `rows` rows (g < words). */
PS_HFN ps_u32 ps_cw_rows_mask(ps_u32 rows, ps_u64 g) {
  const ps_u64 left = (ps_u64)rows - 32 * g;
  return left >= 32 ? 0xffffffffu : ((1u << left) - 1u);
}

/* The rows of word g that are evaluated: in the chunk and in the input
 * selection. The selection may be the output bitmap (in-place refinement),
 * so it is read with plain loads, by the thread that later writes that word. */
PS_HFN ps_u32 ps_cw_word_rows(const ps_cuda_where_params &p, ps_u64 g) {
  ps_u32 m = ps_cw_rows_mask(p.rows, g);
  if (p.selection_in) {
    const ps_u64 bytes = ((ps_u64)p.rows + 7) >> 3, at = g * 4;
    ps_u32 v = 0;
    if (at + 4 <= bytes && ((unsigned long long)p.selection_in & 3u) == 0) {
      v = *(const ps_u32 *)(p.selection_in + at);
    } else {
      for (ps_u32 i = 0; i < 4; ++i)
        if (at + i < bytes) v |= (ps_u32)p.selection_in[at + i] << (8 * i);
    }
    m &= v;
  }
  return m;
}

/* Writes result word g (< ceil(rows/32)) of the bitmap: one 32-bit store
 * when aligned and whole, else the bytes below ceil(rows/8). */
PS_HFN void ps_cw_store_bitmap_word(const ps_cuda_where_params &p, ps_u64 g, ps_u32 word) {
  const ps_u64 bytes = ((ps_u64)p.rows + 7) >> 3, at = g * 4;
  if (at + 4 <= bytes && p.bitmap_aligned) {
    *(ps_u32 *)(p.bitmap + at) = word;
    return;
  }
  for (ps_u32 i = 0; i < 4; ++i)
    if (at + i < bytes) p.bitmap[at + i] = (ps_u8)(word >> (8 * i));
}

/* Lane `lane`'s m-th share (m < 8) of the byte mask of task `task`: the 4
 * rows at task*1024 + 128m + 4*lane, whose bits are nibble lane%8 of result
 * word 4m + lane/8 of the task (`src`, fetched by the caller). A warp's 32
 * lanes thus write 128 contiguous bytes per step. */
PS_HFN ps_u32 ps_cw_mask_src_lane(ps_u32 m, ps_u32 lane) { return 4 * m + (lane >> 3); }

PS_HFN void ps_cw_store_mask_share(const ps_cuda_where_params &p, ps_u64 task, ps_u32 m, ps_u32 lane, ps_u32 src) {
  const ps_u64 row = task * 1024 + 128 * m + 4 * lane;
  if (row >= p.rows) return;
  const ps_u32 v = ps_mask_nibble_bytes(src, lane & 7u);
  if (row + 4 <= p.rows && ((unsigned long long)(p.mask + row) & 3u) == 0) {
    *(ps_u32 *)(p.mask + row) = v;
    return;
  }
  for (ps_u32 i = 0; i < 4; ++i)
    if (row + i < p.rows) p.mask[row + i] = (ps_u8)(v >> (8 * i));
}

#if defined(__CUDACC__)
/* The kernel body, grid-stride over tasks. The loop condition depends only
 * on the warp's task, so a warp's lanes iterate together and all take part
 * in the mask's shuffles; lanes past the last word evaluate no row. Status
 * bits: one atomic per warp, only when something went wrong; the count: the
 * block's total, one atomic per block (same-address atomics serialize in L2).
 * Every thread reaches the block's barrier. */
static __device__ __forceinline__ void ps_cuda_where_words(const ps_cuda_where_params &p) {
  __shared__ ps_u32 warp_counts[PS_CUDA_WHERE_BLOCK / 32];
  const ps_u32 full = 0xffffffffu, lane = threadIdx.x & 31u, warp = threadIdx.x >> 5;
  const ps_u32 warps = PS_CUDA_WHERE_BLOCK / 32;
  const ps_u32 words = (ps_u32)(((ps_u64)p.rows + 31) >> 5);
  const ps_u32 stride = gridDim.x * warps;
  ps_u32 selected = 0;
  ps_w_status s = {0u, 0u};
  for (ps_u32 task = p.task_begin + blockIdx.x * warps + warp; task < p.task_end; task += stride) {
    const ps_u32 g = task * 32 + lane;
    const ps_u32 rows = g < words ? ps_cw_word_rows(p, g) : 0u;
    const ps_u32 word = rows ? ps_where_word(&p.prog, &p.bufs, g, rows, 0, 0, &s) : 0u;
    if (p.bitmap && g < words) ps_cw_store_bitmap_word(p, g, word);
    if (p.mask) {
#pragma unroll
      for (ps_u32 m = 0; m < 8; ++m)
        ps_cw_store_mask_share(p, task, m, lane, __shfl_sync(full, word, ps_cw_mask_src_lane(m, lane)));
    }
    selected += __popc(word);
  }
  const ps_u32 any = __reduce_or_sync(full, s.slots);
  if (lane == 0 && any) atomicOr(p.status, any);
  const ps_u32 warp_total = __reduce_add_sync(full, selected);
  if (lane == 0) warp_counts[warp] = warp_total;
  __syncthreads();
  if (threadIdx.x == 0) {
    ps_u32 total = 0;
    for (ps_u32 w = 0; w < warps; ++w) total += warp_counts[w];
    if (total) atomicAdd(p.count, (unsigned long long)total);
  }
}
#endif

#endif /* PS_CUDA_WHERE_CUH */
