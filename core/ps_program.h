/*
 * The flat predicate program: the one structure that host C, CUDA and
 * OpenCL C all read. Fixed-width POD only; sizes and offsets are checked on
 * the host with _Static_assert, and every lowered program is checked once
 * against the rules below by ps_program_check (core/program_check.c) before
 * a backend sees it: backends do not check it again.
 *
 * This header is compiled as C11 (core, reference backend), as CUDA C++
 * (kernels_cuda) and as OpenCL C 1.2 (embedded in front of kernels_opencl).
 *
 * SEMANTICS (binding for every backend; docs/design.md):
 *
 * The program is evaluated independently for every row r of a chunk. It is a
 * postfix sequence of instructions over a stack of Kleene truth values; each
 * value is a pair of bits (is_true, is_false); (0,0) is UNKNOWN.
 *
 *   code(c, r)  = the code of row r of column c in its encoding
 *                 (cols[c].encoding, kernels_shared/ps_layout.h): for FOR,
 *                 bits [r*w, r*w+w) of its packed stream, LSB first
 *                 (w = cols[c].width; w == 0 gives 0).
 *   valid(c, r) = bit r of column c's validity bitmap if PS_COLF_VALIDITY is
 *                 set, else 1.
 *   corrupt(c, r) = valid(c,r) && (PS_COLF_NO_CODES set || code(c,r) > code_limit).
 *                 Any corrupt read makes the whole evaluation fail with
 *                 PS_ERR_CORRUPT_DATA (backends raise a flag; the result bits
 *                 are then unspecified). A corrupt code is never used to index
 *                 aux memory.
 *
 *   PS_OP_RANGE  col_a, lo, hi, flags&PS_INSN_NEGATE:
 *       null row -> UNKNOWN; else x = (lo <= code && code <= hi), x ^= negate.
 *       Canonical: lo <= hi <= code_limit always (lowering writes an empty
 *       range as the full range [0, code_limit] negated), so no backend
 *       handles lo > hi.
 *   PS_OP_SET    col_a, aux_a = bit offset of a bitmap in aux (bit k of aux is
 *                bit k%32 of aux word k/32), flags&NEGATE:
 *       null -> UNKNOWN; else x = bit(aux_a + code) ^ negate.
 *   PS_OP_INLIST col_a, aux_a = word offset of `count` = lo code intervals
 *                [first, last], each stored as 4 words (first low, first high,
 *                last low, last high), sorted ascending and disjoint:
 *       null -> UNKNOWN; else x = (code lies in one of the intervals) ^ negate.
 *       (Intervals, not single codes: on float columns one literal can match
 *       a run of codes that decode to the same double.)
 *   PS_OP_ISNULL col_a, flags&NEGATE: x = !valid ^ negate. Never UNKNOWN.
 *   PS_OP_CMPCOL col_a, col_b, cmp = PS_INSN_CMP(flags), mode = PS_INSN_MODE(flags):
 *       either null -> UNKNOWN; else x = value_a <cmp> value_b where
 *       PS_MODE_INT:    exact integer values, compared through a key
 *                       (hi, lo) ordered lexicographically:
 *                         signed kind:   v = (int64)(M + code) (wrapping add);
 *                                        hi = (v >= 0), lo = (uint64)v
 *                         unsigned kind: hi = 1, lo = M + code
 *       PS_MODE_DOUBLE: both decoded to double and compared by IEEE rules:
 *                         signed: (double)v; unsigned: (double)(M + code);
 *                         float64: (double)(int64)(M + code) / 10^scale;
 *                         float32: (double)(float)(that double)
 *                       (conversions round to nearest even; the division is
 *                       IEEE double division, correctly rounded);
 *                       with PS_INSN_FMAP_A (PS_INSN_FMAP_B), operand a (b)
 *                       is a lossless float column (docs/float-encoding.md)
 *                       whose slot reads as PS_KIND_UNSIGNED with M = 0 (its
 *                       codes, as every other instruction sees them), and
 *                       whose value is decoded through the descriptor at aux
 *                       word aux_a (aux_b), uint32 words:
 *                         w0     map (PS_FDESC_ALP, PS_FDESC_BITS) | f32 << 8
 *                         w1     ALP: rank_bits | e << 8 | f << 16 (else 0)
 *                         w2,w3  ALP: the bits of 10^f (float64: the double's,
 *                                low word first; float32: the float's in w2,
 *                                w3 = 0)
 *                         w4,w5  ALP: the same for 10^-e (the nearest one)
 *                         w6,w7  the mapping's reference R, low word first
 *                         w8     n, the number of ALP exceptions
 *                         then n entries of 4 words (code low, code high,
 *                         double bits low, high), codes ascending.
 *                       BITS: o = R + code, bits = (o >> 63) ? o ^ 2^63 : ~o,
 *                       the double of those bits (float32: the same on the
 *                       low 32 bits, the float widened).
 *                       ALP: the entry with the largest code <= code, if its
 *                       code >> rank_bits == code >> rank_bits, gives the
 *                       double; else k = (int64)(R + (code >> rank_bits)) and
 *                       the value is fl(fl((double)k * w2w3) * w4w5), two
 *                       correctly rounded products (float32: in float, then
 *                       widened). Only code 0 and codes with nonzero low
 *                       rank bits can be exceptions (the encoder and
 *                       ps_fmap_check make them so): other codes need no
 *                       search. e and f are the factors' exponents (the
 *                       reference backend's decode and the check read them;
 *                       the device reads the factors).
 *       PS_MODE_RANK:   dictionary columns; rank_a = aux[aux_a + code_a],
 *                       rank_b = aux[aux_b + code_b] (uint32 ranks in the merged
 *                       sorted dictionary; equal strings have equal ranks);
 *                       ranks are compared.
 *   PS_OP_AND / PS_OP_OR / PS_OP_NOT: pop operand(s), push Kleene result:
 *       AND: T = Ta & Tb, F = Fa | Fb;  OR: T = Ta | Tb, F = Fa & Fb;
 *       NOT: swap T and F.
 *
 * After the last instruction exactly one value is on the stack; the row is
 * selected iff its is_true bit is set. Rows are produced 32 per result word:
 * word g holds rows [32g, 32g+32) of the chunk, row 32g+j at bit j; bits of
 * rows >= the chunk's row count are 0.
 */
#ifndef PS_PROGRAM_H
#define PS_PROGRAM_H

#if defined(__OPENCL_VERSION__)
typedef ushort ps_u16;
typedef uint ps_u32;
typedef ulong ps_u64;
typedef long ps_i64;
#define PS_PROG_CONST __constant
#elif defined(__CUDACC_RTC__) /* NVRTC (specialized query kernels): no system headers */
typedef unsigned short ps_u16;
typedef unsigned int ps_u32;
typedef unsigned long long ps_u64;
typedef long long ps_i64;
#define PS_PROG_CONST
#else
#include <stdint.h>
typedef uint16_t ps_u16;
typedef uint32_t ps_u32;
typedef uint64_t ps_u64;
typedef int64_t ps_i64;
#define PS_PROG_CONST
#endif

#define PS_MAX_COLS 16   /* distinct columns one program reads */
#define PS_MAX_INSNS 64  /* instructions in one program */
#define PS_MAX_STACK 16  /* evaluation stack depth */

/* opcodes */
#define PS_OP_RANGE 1u
#define PS_OP_SET 2u
#define PS_OP_INLIST 3u
#define PS_OP_ISNULL 4u
#define PS_OP_CMPCOL 5u
#define PS_OP_AND 6u
#define PS_OP_OR 7u
#define PS_OP_NOT 8u

/* insn flags: bit 0 negate; bits 4..7 cmp (PS_EQ..PS_GE of packscan.h);
 * bits 8..11 compare mode; bits 12, 13 (CMPCOL in PS_MODE_DOUBLE only):
 * operand a, b is a lossless float column decoded through its descriptor */
#define PS_INSN_NEGATE 1u
#define PS_INSN_CMP(flags) (((flags) >> 4) & 15u)
#define PS_INSN_MODE(flags) (((flags) >> 8) & 15u)
#define PS_INSN_MAKE_CMP(cmp, mode) ((((ps_u32)(cmp)) << 4) | (((ps_u32)(mode)) << 8))
#define PS_INSN_FMAP_A (1u << 12)
#define PS_INSN_FMAP_B (1u << 13)
/* The flags a CMPCOL may have (ps_program_check), all part of a program's shape */
#define PS_INSN_CMPCOL_SHAPE (PS_INSN_MAKE_CMP(15u, 15u) | PS_INSN_FMAP_A | PS_INSN_FMAP_B)

/* The float descriptor of PS_INSN_FMAP_A / B: its header words, and its
 * map values (packscan.h's PS_FLOAT_MAP_ALP and PS_FLOAT_MAP_BITS) */
#define PS_FDESC_HEAD 9u
#define PS_FDESC_ENTRY 4u
#define PS_FDESC_ALP 1u
#define PS_FDESC_BITS 2u

/* cmp values (same numbers as ps_cmp in packscan.h) */
#define PS_CMP_EQ 0u
#define PS_CMP_NE 1u
#define PS_CMP_LT 2u
#define PS_CMP_LE 3u
#define PS_CMP_GT 4u
#define PS_CMP_GE 5u

/* compare modes */
#define PS_MODE_INT 0u
#define PS_MODE_DOUBLE 1u
#define PS_MODE_RANK 2u

/* column value kinds: how M + code decodes */
#define PS_KIND_SIGNED 0u   /* int8..int64: (int64)(M + code) */
#define PS_KIND_UNSIGNED 1u /* uint8..uint64, and dictionary codes: M + code */
#define PS_KIND_FLOAT64 2u  /* (double)(int64)(M + code) / 10^scale */
#define PS_KIND_FLOAT32 3u  /* (double)(float)((double)(int64)(M + code) / 10^scale) */

/* column flags */
#define PS_COLF_VALIDITY 1u /* a validity bitmap is present */
#define PS_COLF_NO_CODES 2u /* no code is valid (empty dictionary): any valid row is corrupt */

/* One column slot. Byte sizes are relative to the chunk's start: the data
 * pointer a backend passes for a chunk starting at row r0 points at byte
 * ps_chunk_data_offset(encoding, w, r0) of the buffer (kernels_shared/
 * ps_layout.h: r0*w/8 for FOR; a multiple of 4 relative to the buffer start),
 * and data_bytes is what remains readable from there. Nothing past
 * data_bytes / validity_bytes may be read. A column whose encoding is not
 * FOR is read only through ps_codes.h's dispatching readers. */
typedef struct ps_prog_col {
  ps_u64 reference;      /* M, two's complement bits for signed/float kinds */
  ps_u64 code_limit;     /* largest valid code */
  ps_u64 data_bytes;     /* readable bytes of the packed stream from the chunk start */
  ps_u64 validity_bytes; /* readable bytes of the validity bitmap from the chunk start */
  ps_u32 width;          /* 0..64 */
  ps_u32 kind;           /* PS_KIND_* */
  ps_u16 scale;          /* floats: 0..18 */
  ps_u16 encoding;       /* PS_ENC_* of kernels_shared/ps_layout.h; width: every code is < 2^width */
  ps_u32 flags;          /* PS_COLF_* */
} ps_prog_col;           /* 48 bytes */

typedef struct ps_insn {
  ps_u32 op;    /* PS_OP_* */
  ps_u32 flags; /* PS_INSN_NEGATE, PS_INSN_MAKE_CMP(cmp, mode) */
  ps_u32 col_a; /* column slot */
  ps_u32 col_b; /* second column slot (CMPCOL) */
  ps_u32 aux_a; /* SET: bit offset; INLIST: word offset; CMPCOL rank table or float descriptor a: word offset */
  ps_u32 aux_b; /* CMPCOL rank table or float descriptor b: word offset */
  ps_u64 lo;    /* RANGE low bound; INLIST: count */
  ps_u64 hi;    /* RANGE high bound */
} ps_insn;      /* 40 bytes */

typedef struct ps_program {
  ps_u32 n_insns;
  ps_u32 n_cols;
  ps_u32 stack_depth; /* max stack depth the program reaches (<= PS_MAX_STACK) */
  ps_u32 aux_words;   /* size of the aux array in 32-bit words */
  ps_prog_col cols[PS_MAX_COLS];
  ps_insn insns[PS_MAX_INSNS];
} ps_program;

/* 10^s as double, exact for s <= 18 (10^18 = 2^18 * 5^18, 5^18 < 2^53). */
#define PS_POW10_TABLE                                                                   \
  {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15, \
   1e16, 1e17, 1e18}

#endif /* PS_PROGRAM_H */
