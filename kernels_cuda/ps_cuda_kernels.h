/*
 * The CUDA kernels' host interface: plain C, included by backends/cuda and
 * implemented in the .cu files of kernels_cuda. The backend never sees a __global__
 * function; it fills a ps_cuda_eval_params and calls a launcher.
 */
#ifndef PS_CUDA_KERNELS_H
#define PS_CUDA_KERNELS_H

#include <stdint.h>

#include <cuda_runtime_api.h>

#include "ps_like_nfa.h"
#include "ps_program.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Threads per block of the evaluation kernel (a multiple of 32). */
#define PS_CUDA_EVAL_BLOCK 256

/* Bits of the device status word the kernel raises. Bit c (c < PS_MAX_COLS):
 * column slot c read a corrupt code. PS_CUDA_FLAG_AUX: an aux index fell
 * outside aux_words (a lowering bug, never user data). */
#define PS_CUDA_FLAG_AUX 0x80000000u

/* Everything one evaluation reads, passed by value as a __grid_constant__
 * kernel parameter (about 3.8 KB, under the 4 KB classic parameter limit), so
 * the program lives in the constant bank and uniform loads are broadcast. */
typedef struct ps_cuda_eval_params {
  ps_program prog;
  const uint8_t *data[PS_MAX_COLS];     /* packed stream of each slot at the chunk start */
  const uint8_t *validity[PS_MAX_COLS]; /* NULL where the slot has no validity bitmap */
  double pow10[PS_MAX_COLS];            /* 10^cols[c].scale, exact (PS_POW10_TABLE) */
  const uint32_t *aux;                  /* prog.aux_words words, or NULL */
  uint8_t *bitmap;                      /* ceil(rows/8) bytes, or NULL: no bitmap wanted */
  const uint8_t *selection_in;          /* ceil(rows/8) bytes ANDed in, or NULL; may be bitmap */
  uint8_t *mask;                        /* rows bytes, 1 = selected, or NULL */
  unsigned long long *count;            /* device counter, += selected rows */
  uint32_t *status;                     /* device status word, |= PS_CUDA_FLAG_* / slot bits */
  uint32_t rows;                        /* rows in this chunk, 1..2^31 */
  uint32_t data_aligned;                /* bit c: data[c] is 4-byte aligned */
  uint32_t validity_aligned;            /* bit c: validity[c] is 4-byte aligned */
  uint32_t bitmap_aligned;              /* bitmap is 4-byte aligned */
  uint32_t for_only;                    /* ps_eval_args.for_only: every column is FOR */
} ps_cuda_eval_params;

/* Enqueues the one-pass evaluation of p->prog over p->rows rows on stream,
 * grid-stride over `waves` waves of the blocks resident at once (0:
 * ps_cuda_where.cuh's PS_CUDA_WHERE_WAVES; a wave is max_blocks where the residency cannot be
 * measured; at most one block per 4 tasks; the internal option where_waves
 * sets it for A/Bs): the general per-word kernel,
 * `spec` (a cudaKernel_t of where_spec.cuh compiled for p->prog's shape)
 * over the first spec_tasks tasks of 1,024 rows and the precompiled one
 * over the rest (all of them when spec is NULL: two launches where both
 * have tasks); writes the bitmap (if any), adds the selected rows to
 * *p->count and raises bits in *p->status. The caller zeroes count and
 * status first. Returns the launch error (cudaGetLastError), cudaSuccess if
 * the launches were queued. */
cudaError_t ps_cuda_launch_eval(const void *spec, uint32_t spec_tasks, const ps_cuda_eval_params *p,
                                uint32_t max_blocks, uint32_t waves, cudaStream_t stream);

/* The precompiled per-word kernel built for programs whose columns are all
 * FOR (eval_for.cu), which ps_cuda_launch_eval takes for them when spec is
 * NULL. */
const void *ps_cuda_eval_words_for(void);

/* Grid size that fills the current device (resident blocks per SM times
 * sm_count) into *out. Fails (cudaErrorNoKernelImageForDevice...) when the
 * fatbinary has no code for the device, so it doubles as the probe. */
cudaError_t ps_cuda_eval_max_blocks(int sm_count, uint32_t *out);


/* ---- the single-range fast path (range_words.cu) ---------------------------- */

/* Threads (= 32-row result words) per block of the fast path. */
#define PS_CUDA_RANGE_BLOCK 128

/* One RANGE leaf on one column: row selected iff valid and
 * (((code - lo) <= span) != negate), unsigned 64-bit arithmetic. The host
 * guarantees lo + span <= 2^width - 1 (an empty range is passed as the full
 * range, negated). When the column's code limit is below 2^width - 1
 * (dictionary columns, mostly), check_limit is 1 and a valid row whose code
 * is greater than limit raises status_bit in *status (ps_program.h's
 * corrupt-code rule; the result bits are then unspecified). */
typedef struct ps_cuda_range_params {
  const uint8_t *data;          /* packed stream at the chunk start, 4-byte aligned */
  uint64_t data_bytes;          /* readable bytes from data */
  const uint8_t *validity;      /* at the chunk start (4-byte aligned), or NULL */
  uint64_t validity_bytes;
  uint8_t *bitmap;              /* ceil(rows/8) bytes, or NULL */
  unsigned long long *count;    /* device counter (+= selected), or NULL */
  uint64_t lo, span;
  uint32_t negate_mask;         /* 0 or 0xffffffff */
  uint32_t width;               /* 0..64 */
  uint32_t rows;                /* 1..2^31 */
  uint32_t bitmap_aligned;      /* bitmap is 4-byte aligned */
  uint32_t data_aligned16;      /* data is 16-byte aligned (vector loads) */
  uint64_t limit;               /* largest valid code (< 2^width when check_limit) */
  uint32_t *status;             /* device status word (check_limit only) */
  uint32_t status_bit;          /* raised in *status on a corrupt code */
  uint32_t check_limit;         /* 1: codes above limit are corrupt */
  /* SET leaves (ps_cuda_launch_set only): row selected iff valid and
   * (bit (set_shift + code) of set[] != negate); set_words words cover
   * bits set_shift .. set_shift + limit. */
  const uint32_t *set;
  uint32_t set_shift;
  uint32_t set_words;
  /* A byte mask (rows bytes, 1 = selected), or NULL; written by the direct
   * kernel only (widths 1, 2, 4, 8, 16: the host sends no other). */
  uint8_t *mask;
} ps_cuda_range_params;

/* Enqueues the fast path on stream with at most max_blocks blocks. */
cudaError_t ps_cuda_launch_range(const ps_cuda_range_params *p, uint32_t max_blocks, cudaStream_t stream);

/* The single-SET fast path (set_words.cu): one SET leaf on a column of width
 * 1..32, the set copied into shared memory once per block. check_limit is
 * honoured as above (status/status_bit must be set). Returns
 * cudaErrorNotSupported, having enqueued nothing, when the set and the
 * staging tile do not fit the device's shared memory per block: the caller
 * runs the general kernel instead. */
cudaError_t ps_cuda_launch_set(const ps_cuda_range_params *p, cudaStream_t stream);

/* ---- the range-tree fast path (tree.cu) ------------------------------------------ */

#define PS_CUDA_TREE_MAX_COLS 4   /* distinct columns */
#define PS_CUDA_TREE_MAX_INSNS 16 /* instructions */
#define PS_CUDA_TREE_SLOTS 4      /* stack depth */

/* One instruction of a two-valued program: no row is ever UNKNOWN (no
 * validity, no corrupt code), so a value is one 32-bit word per 32 rows and
 * AND/OR/NOT are &, |, ~. The stack position of every instruction is known
 * on the host: RANGE writes slot dst; AND/OR write slot dst from slots dst
 * and dst + 1; NOT complements slot dst. */
typedef struct ps_cuda_tree_insn {
  uint32_t op;     /* PS_OP_RANGE, PS_OP_AND, PS_OP_OR, PS_OP_NOT */
  uint32_t col;    /* RANGE: index into ps_cuda_tree_params' columns */
  uint32_t dst;    /* slot, < PS_CUDA_TREE_SLOTS (AND/OR: dst + 1 too) */
  uint32_t negate; /* RANGE: 0 or 0xffffffff */
  uint32_t lo;     /* RANGE: selected iff ((code - lo) <= span) != negate; lo + span < 2^width */
  uint32_t span;
} ps_cuda_tree_insn; /* 24 bytes */

/* A program of RANGE leaves on columns of 1..32 bits (every w-bit code
 * valid, no validity bitmap, 16-byte aligned data) combined with AND, OR and
 * NOT; no selection, no byte mask. A warp stages a chunk of 1024 rows of
 * every column at once (stage_words = 32 * sum of widths words) in two or
 * three buffers per warp (the launcher picks), copying ahead with cp.async. */
typedef struct ps_cuda_tree_params {
  const uint8_t *data[PS_CUDA_TREE_MAX_COLS]; /* packed stream at the chunk start, 16-byte aligned */
  uint64_t data_bytes[PS_CUDA_TREE_MAX_COLS];
  uint32_t width[PS_CUDA_TREE_MAX_COLS];     /* 1..32 */
  uint32_t offset[PS_CUDA_TREE_MAX_COLS];    /* the column's words in a chunk's buffer: 32 * (widths before it) */
  uint32_t data_chunks[PS_CUDA_TREE_MAX_COLS]; /* 1024-row chunks wholly inside data_bytes: data_bytes / (128 * width) */
  ps_cuda_tree_insn insns[PS_CUDA_TREE_MAX_INSNS];
  uint8_t *bitmap;                           /* ceil(rows/8) bytes, or NULL */
  unsigned long long *count;                 /* device counter (+= selected), or NULL */
  uint32_t n_cols, n_insns;
  uint32_t stage_words;                      /* 32 * sum of widths */
  uint32_t rows;                             /* 1..2^31 */
  uint32_t bitmap_aligned;                   /* bitmap is 4-byte aligned */
  uint32_t pad_;
} ps_cuda_tree_params;

/* Enqueues the range-tree kernel. cudaErrorNotSupported, with nothing
 * enqueued, when the columns' staging does not fit (sum of widths above
 * what two buffers of a block allow): the caller runs the general kernel. */
cudaError_t ps_cuda_launch_tree(const ps_cuda_tree_params *p, cudaStream_t stream);

/* ---- after the filter: row ids, reduce, gather (select.cu) ------------------- */

/* Threads per block of the select kernels (a multiple of 32). */
#define PS_CUDA_SELECT_BLOCK 256
/* Reduce results: count, min, max, sum_lo, sum_hi, least corrupt row
 * (UINT64_MAX: none), as uint64 words. */
#define PS_CUDA_REDUCE_RESULT_WORDS 6
/* Gather output kinds: core/backend.h's PS_GATHER_* (checked in cuda_select.c;
 * the kernels do not include backend.h). */
#define PS_CUDA_GATHER_CODE32 1u
#define PS_CUDA_GATHER_INT 2u
#define PS_CUDA_GATHER_F64 3u
#define PS_CUDA_GATHER_F32 4u

/* Row ids of one chunk of a selection (ps_row_ids_args). */
typedef struct ps_cuda_row_ids_params {
  const uint8_t *bitmap; /* chunk start; ceil(rows/8) readable bytes */
  uint8_t *out;          /* index_bytes per id, or NULL: count only */
  uint32_t *total;       /* receives the number of set bits: any memory the device can write (mapped
                          * pinned: no copy); counting only, device memory added to atomically, 0 before
                          * a launch and 0 again after it, the number going to *result */
  uint32_t *result;      /* counting only: receives the number (mapped pinned: no copy) */
  unsigned int *done;    /* counting only: device; 0 before a launch, and 0 again after it */
  uint64_t rows;         /* 1..2^31 */
  uint64_t id_base;
  uint32_t index_bytes;    /* 4 or 8 */
  uint32_t bitmap_aligned; /* bitmap is 4-byte aligned */
  uint32_t out_aligned;    /* out is index_bytes-aligned */
  uint32_t capacity;       /* ids written at most; the ones past it are counted only */
  uint32_t state_ready;    /* writing: tiles of the workspace's state at rest (0: none; see below) */
} ps_cuda_row_ids_params;

/* Device workspace bytes ps_cuda_launch_row_ids needs for `rows` rows (a
 * tile ticket and CUB's tile status array for the single-pass scan: the row
 * id state), and its tiles. Enqueues nothing. The state is kept from launch
 * to launch: a writing launch (and ps_cuda_launch_range_ids) leaves it at
 * rest for the tiles it used, so one over at most p->state_ready tiles skips
 * setting it up; after a launch that succeeded, max(state_ready, tiles) are
 * ready. A new buffer has 0. */
cudaError_t ps_cuda_row_ids_workspace(uint64_t rows, size_t *bytes, uint32_t *tiles);

/* Size, then retrieve, on stream. With p->out: one kernel (after a tiny one
 * that sets up the state, when it is not at rest for enough tiles) where
 * each block counts a tile of the bitmap, gets the exclusive scan of the tile
 * counts at its tile from a decoupled look-back over a cub::ScanTileState and
 * writes its ids at that offset; *p->total receives the count. Without: per-tile
 * counts added up in *p->total, handed to *p->result by the last block,
 * workspace unused. workspace: 256-byte aligned, at least what
 * ps_cuda_row_ids_workspace said. */
cudaError_t ps_cuda_launch_row_ids(const ps_cuda_row_ids_params *p, void *workspace, size_t workspace_bytes,
                                   cudaStream_t stream);

/* Row ids straight from a one-range filter, one pass (ids_fused.cu): r as
 * for ps_cuda_launch_range (width 1..32, no bitmap, no count; status when
 * check_limit), p as for ps_cuda_launch_row_ids with out set and
 * index_bytes-aligned, bitmap unused, capacity the ids written at most; the
 * same workspace. cudaErrorInvalidValue for anything else. */
cudaError_t ps_cuda_launch_range_ids(const ps_cuda_range_params *r, const ps_cuda_row_ids_params *p, void *workspace,
                                     size_t workspace_bytes, cudaStream_t stream);

/* Reduction of one column over one chunk (ps_reduce_args). */
typedef struct ps_cuda_reduce_params {
  ps_prog_col col;            /* data_bytes / validity_bytes from the chunk start */
  const uint8_t *data;        /* NULL only when nothing is readable */
  const uint8_t *validity;    /* read when col.flags has PS_COLF_VALIDITY */
  const uint8_t *selection;   /* ceil(rows/8) bytes, or NULL: every row */
  uint64_t *result;           /* PS_CUDA_REDUCE_RESULT_WORDS words the device can write (mapped pinned: no copy) */
  unsigned int *done;         /* device; 0 before a launch, and 0 again after it */
  uint64_t rows;              /* 1..2^31 */
  uint32_t data_aligned;      /* data is 4-byte aligned */
  uint32_t validity_aligned;  /* validity is 4-byte aligned */
  uint32_t selection_aligned; /* selection is 4-byte aligned */
  uint32_t data_aligned16;    /* data is 16-byte aligned */
} ps_cuda_reduce_params;

/* Workspace bytes (per-block partials) for a launch over `rows` rows of col
 * with at most max_blocks blocks. */
cudaError_t ps_cuda_reduce_workspace(const ps_prog_col *col, uint64_t rows, uint32_t max_blocks, size_t *bytes);

/* Enqueues the reduction: per-block partials, then one block combines them
 * into p->result (for widths 1..32 the last block of the one launch, counted
 * in *p->done; else a second launch). */
cudaError_t ps_cuda_launch_reduce(const ps_cuda_reduce_params *p, uint32_t max_blocks, void *workspace,
                                  size_t workspace_bytes, cudaStream_t stream);

/* Late materialization (ps_gather_args). status[0] / status[1] must be
 * UINT64_MAX before the launch; the kernel lowers them (atomicMin) to the
 * least i whose id is >= rows / whose valid row holds a corrupt code, and
 * its last block (counted in *done) moves them to result[0..1] and sets
 * them back to UINT64_MAX, so that a call needs no reset and no copy. */
typedef struct ps_cuda_gather_params {
  ps_prog_col col;               /* data_bytes / validity_bytes of the whole column */
  const uint8_t *data;           /* stream start */
  const uint8_t *validity;       /* read when col.flags has PS_COLF_VALIDITY */
  const uint8_t *ids;            /* count ids of index_bytes */
  uint8_t *values;               /* count values of value_bytes */
  uint8_t *validity_out;         /* ceil(count/8) bytes, or NULL */
  unsigned long long *status;    /* device, 2 words */
  unsigned long long *result;    /* 2 words the device can write (mapped pinned: no copy) */
  unsigned int *done;            /* device; 0 before a launch, and 0 again after it */
  double pow10;                  /* 10^col.scale, exact */
  uint64_t count;                /* >= 1 */
  uint64_t rows;                 /* the column's rows */
  uint32_t index_bytes;          /* 4 or 8 */
  uint32_t out_type;             /* PS_CUDA_GATHER_* */
  uint32_t value_bytes;          /* 1, 2, 4 or 8, as out_type requires */
  uint32_t data_aligned;         /* data is 4-byte aligned */
  uint32_t ids_aligned;          /* ids is index_bytes-aligned */
  uint32_t values_aligned;       /* values is value_bytes-aligned */
  uint32_t validity_out_aligned; /* validity_out is 4-byte aligned */
  uint32_t pad_;
} ps_cuda_gather_params;

/* Enqueues the gather on at most max_blocks blocks (grid-stride). */
cudaError_t ps_cuda_launch_gather(const ps_cuda_gather_params *p, uint32_t max_blocks, cudaStream_t stream);

/* Copies words 64-bit words from src (device) to dst (memory the device can
 * write: the host's mapped pinned copy) and zeroes them at src, in one small
 * kernel on stream (select.cu): a call's result words handed to the host
 * without a copy-engine transfer, and left zero for the next launch that
 * adds into them. words: 1..32. */
cudaError_t ps_cuda_launch_take_words(unsigned long long *src, unsigned long long *dst, uint32_t words,
                                      cudaStream_t stream);

/* ---- LIKE over a dictionary (like.cu) ------------------------------------------ */

/* Threads per block of the dictionary match (a multiple of 32). */
#define PS_CUDA_LIKE_BLOCK 256

/* ps_like_dict_args of core/backend.h with device pointers. Passed by value
 * (about 2.1 KB) as a __grid_constant__ parameter. */
typedef struct ps_cuda_like_params {
  ps_like_nfa nfa;
  const uint64_t *offsets; /* the dictionary's offsets (entry j: [offsets[j], offsets[j+1])) */
  const uint8_t *bytes;
  uint32_t *out;           /* ceil(count / 32) words */
  uint64_t first;          /* first entry */
  uint64_t count;          /* entries, >= 1 */
} ps_cuda_like_params;

/* Enqueues the match on stream: one thread per entry, one warp per 32-entry
 * result word (grid-stride over words beyond max_blocks blocks). */
cudaError_t ps_cuda_launch_like(const ps_cuda_like_params *p, uint32_t max_blocks, cudaStream_t stream);

#ifdef __cplusplus
}
#endif

#endif /* PS_CUDA_KERNELS_H */
