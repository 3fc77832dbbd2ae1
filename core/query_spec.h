/*
 * Specialized query kernels (kernels_shared/ps_query_kernels.h, PS_Q_SPEC):
 * the text a backend compiles in front of the shared source so that one
 * query's programs and launch flags are compile-time constants. Host only;
 * both device backends write it here so that their kernels agree.
 */
#ifndef PS_QUERY_SPEC_H
#define PS_QUERY_SPEC_H

#include <stddef.h>
#include <stdint.h>

#include "internal_options.h"
#include "ps_query_program.h"

/* Calls that read at least this many rows in all (their chunks together:
 * ps_context.query_run_rows) take a specialized kernel by default (internal
 * option query_specialize): a compile costs far more than a small scan, and
 * the per-context cache amortizes it over repeated runs. */
#define PS_QUERY_SPEC_MIN_ROWS (UINT64_C(1) << 20)

/* The same for a GROUP BY over a small domain on a GPU: there the generic
 * kernel's per-word loops over a word's groups and their rows diverge
 * across a warp (TPC-H Q1 on an H100: 1.5 ms at 65,536 rows, 2.6 ms at 10^6,
 * against 0.095 and 0.134 ms specialized: docs/benchmarks.md), a cost no
 * small input escapes. The compile is in the background (the generic kernel
 * answers meanwhile) and cached per query shape. */
#define PS_QUERY_SPEC_MIN_ROWS_GPU_GROUPED (UINT64_C(1) << 12)

/* Room for the longest text (every instruction of both programs, every
 * column slot). */
#define PS_QUERY_SPEC_MAX_TEXT 32768u

/* The launch flags a specialized kernel compiles in (ps_qlaunch's fields of
 * the same names). */
/* ps_query_spec_flags.prefetch: the internal option query_prefetch's
 * default, the hints in GROUP BY in registers by rows only. */
#define PS_QUERY_PREFETCH_AUTO 2u

typedef struct ps_query_spec_flags {
  uint32_t mode;      /* PS_QMODE_* */
  uint32_t fits64;    /* every value fits 62 bits */
  uint32_t has_where; /* 0: every row is selected */
  uint64_t data_aligned, and_right, or_right;
  uint64_t fields; /* PS_QMODE_REGS: the PS_QF_* fields kept per aggregate (ps_q_kept_fields) */
  uint32_t lanes;  /* PS_QMODE_REGS: a work-item per row of a word (ps_q_partials_lanes), else per word */
  uint32_t prefetch; /* PS_QMODE_PRIVATE: the next word's WHERE columns prefetched; PS_QMODE_REGS by rows:
                        a selected word's key and value columns (internal option query_prefetch: 0, 1,
                        or PS_QUERY_PREFETCH_AUTO, by rows only) */
  uint32_t warp_merge; /* PS_QMODE_REGS on CUDA: warps merge their registers at once (query_warp_merge) */
  uint32_t min_blocks; /* CUDA: blocks per SM the kernel is compiled to fit (__launch_bounds__'s second
                          argument: the registers a thread may take; query_min_blocks), 0 the compiler's choice */
} ps_query_spec_flags;

/* Whether a chunk of `rows` rows runs a specialized kernel on ctx (its
 * internal option query_specialize; PS_OPT_AUTO: not under
 * options.query_compile = PS_QUERY_COMPILE_NEVER). gpu_grouped: a GROUP BY
 * on a GPU device, whose threshold is PS_QUERY_SPEC_MIN_ROWS_GPU_GROUPED. */
int ps_query_specialize(const ps_context *ctx, uint64_t rows, int gpu_grouped);

/* Whether a specialized kernel that is neither in memory nor on disk is
 * built in the background (the generic kernel runs meanwhile): under
 * options.query_compile = PS_QUERY_COMPILE_BACKGROUND, except with the
 * internal option query_specialize = PS_OPT_ON, whose builds block so that
 * a failure is the call's error. */
int ps_query_spec_background(const ps_context *ctx);

/* Whether PS_QMODE_REGS takes a word's rows a work-item each
 * (ps_q_partials_lanes) or whole words per work-item: the internal option
 * query_lanes, PS_OPT_AUTO the backend's `by_default` (CUDA by rows; OpenCL
 * by words, where NVIDIA's driver ran TPC-H Q1 slower by rows:
 * docs/benchmarks.md). A launch by rows reads its words strided
 * (ps_qlaunch.span 0) on every device. */
int ps_query_lanes(const ps_context *ctx, int by_default);

/* ps_query_spec_flags.prefetch from ctx's internal option query_prefetch:
 * 0, 1, or PS_QUERY_PREFETCH_AUTO for its default. */
uint32_t ps_query_prefetch(const ps_context *ctx);

/* Writes the specialization text of value program p, WHERE program where
 * (NULL: none) and flags f into buf (size bytes, NUL-terminated): PS_Q_SPEC,
 * the PS_QS_* flags (PS_QS_REG_GROUPS, PS_QS_N_AGGS and PS_QS_FIELDS size
 * PS_QMODE_REGS's registers: 1 group in the other modes), and the constants
 * ps_q_spec_prog and ps_q_spec_where
 * (PS_Q_SPEC_DATA, ps_dialect.h). Stream sizes (data_bytes,
 * validity_bytes) are written as 0: kernels read them from their launch, so
 * the text, which is also the kernel caches' key, is the same for every
 * chunk. Returns the length, or 0 if it does not fit. */
size_t ps_query_spec_write(const ps_vprog *p, const ps_program *where, const ps_query_spec_flags *f, char *buf,
                           size_t size);

/* Room for the longest shape text of a filter's WHERE program. */
#define PS_WHERE_SPEC_MAX_TEXT 8192u

/* How a filter's per-shape build is made besides its shape (part of the
 * text, so of the kernel caches' key). */
typedef struct ps_where_spec_flags {
  int whole;           /* PS_W_WHOLE: the build reads whole words unchecked (below) */
  uint32_t min_blocks; /* CUDA's launch bounds (PS_W_MIN_BLOCKS: blocks an SM; where_min_blocks), 0 none */
} ps_where_spec_flags;

/* Writes the shape of filter program p as the constant ps_w_spec_prog
 * (PS_Q_SPEC_DATA), `#define PS_W_SPEC_PROG ps_w_spec_prog` and the
 * instruction count as PS_W_N_INSNS, the text
 * that specializes kernels_shared/ps_where.h: the instruction count, each
 * instruction's op, flags and slots, each slot's width, kind, scale and
 * flags. Literals, aux offsets, references and code limits are written as 0
 * (the evaluator reads them from the program in memory), and the fields that
 * mean nothing for an instruction are normalized, so that every program of
 * one shape gives the same text, which is also the kernel caches' key.
 * f (NULL: neither) may add `#define PS_W_WHOLE 1` (kernels_shared/ps_codes.h:
 * the kernel reads FOR stream words and validity words unchecked, and may
 * run only over the words ps_where_whole_words counts) and
 * `#define PS_W_MIN_BLOCKS n` (kernels_cuda/where_spec.cuh).
 * Returns the length, or 0 if it does not fit in size bytes. */
size_t ps_where_spec_write(const ps_program *p, const ps_where_spec_flags *f, char *buf, size_t size);

/* The leading 32-row words of a chunk of p (its slots' readable bytes from
 * the chunk start) that a PS_W_WHOLE kernel may evaluate: every FOR slot's
 * stream words and every validity bitmap's word of those rows lie inside
 * their buffers (ps_layout.h's ps_for_whole_words), and those buffers are
 * 4-byte aligned (bit c of data_aligned and validity_aligned for slot c).
 * 0 when a slot that is read is misaligned. Other encodings' reads stay
 * bounded under PS_W_WHOLE and do not count. */
uint64_t ps_where_whole_words(const ps_program *p, uint32_t data_aligned, uint32_t validity_aligned);

#endif /* PS_QUERY_SPEC_H */
