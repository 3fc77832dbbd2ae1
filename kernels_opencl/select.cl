/*
 * select.cl: what comes after the filter, on one column or one selection
 * (core/backend.h: row_ids, reduce, gather). Built after common.cl.
 *
 * Row ids use size-then-retrieve: ps_count_words writes one count per
 * work-group, ps_scan_counts scans those counts in place on the device (the
 * total last, which the host reads back once, after the ids are written) and
 * ps_write_ids writes each group's ids at its offset; no per-row atomics.
 * Where the groups are few (PS_SELECT_SUM_OFFSETS), ps_write_ids instead sums
 * the counts of the groups before its own, and its last group writes the
 * total: one launch fewer. A
 * work-item takes launch->run_words selection words there (0 or 1: one),
 * a word of each of as many rounds over its group's words; each round's ids
 * are staged in local memory and stored coalesced.
 * Left out of builds specialized for one filter program.
 */
#ifndef PS_SPECIALIZED

/* ---- row ids ---------------------------------------------------------- */

/* Word g of the selection, without the bits past the chunk's rows. */
static uint ps_selection_word(__constant ps_select_launch *launch, ps_bytes bitmap, ulong g) {
  ps_region r = {bitmap, launch->selection_offset, (launch->rows + 7) / 8};
  return ps_load_word(r, g) & ps_row_mask(launch->rows, g);
}

/* The selection words of a work-item of ps_count_words / ps_write_ids: a
 * work-group takes items * size consecutive words from word
 * group * items * size, in `items` rounds of `size` words, work-item lid
 * taking word lid of each round (neighbouring work-items, neighbouring
 * words: coalesced reads, and ids stored in row order round by round). */
static ulong ps_ids_item_words(__constant ps_select_launch *launch) {
  return launch->run_words > 1 ? launch->run_words : 1;
}

/* The first word of round r of this work-group (work-item lid takes the
 * word lid after it). */
static ulong ps_ids_round_first(ulong items, ulong r) {
  return (get_group_id(0) * items + r) * get_local_size(0);
}

__kernel void ps_count_words(__constant ps_select_launch *launch, ps_bytes bitmap, __global uint *group_counts,
                             __local uint *scratch) {
  const ulong words = (launch->rows + 31) / 32, items = ps_ids_item_words(launch);
  uint bits = 0;
  for (ulong r = 0; r < items; ++r) {
    const ulong g = ps_ids_round_first(items, r) + get_local_id(0);
    if (g < words) bits += popcount(ps_selection_word(launch, bitmap, g));
  }
  uint total = ps_group_sum(bits, scratch);
  if (get_local_id(0) == 0) group_counts[get_group_id(0)] = total;
}

/* counts[0..n): per-group (or per-run) counts, replaced in place by their
 * exclusive scan, with the total at counts[n]. One work-group: work-item t
 * sums a contiguous slice, the group scans the sums, each slice is then
 * rewritten from its offset. The host reads only counts[n], after the ids
 * are written (no host scan and no upload between the two passes). */
__kernel void ps_scan_counts(__global uint *counts, ulong n, __local uint *scratch) {
  const uint lid = get_local_id(0), size = get_local_size(0);
  const ulong per = (n + size - 1) / size, b = min((ulong)lid * per, n), e = min(b + per, n);
  uint sum = 0;
  for (ulong i = b; i < e; ++i) sum += counts[i];
  uint before = ps_group_exclusive_scan(sum, scratch); /* a chunk has < 2^32 rows */
  for (ulong i = b; i < e; ++i) {
    const uint c = counts[i];
    counts[i] = before;
    before += c;
  }
  if (lid == size - 1) counts[n] = before;
}

/* counts: ps_count_words' counts, scanned in place by ps_scan_counts, or
 * with PS_SELECT_SUM_OFFSETS as they were written: then each group sums the
 * counts before its own (a few per work-item: the host sets the flag only
 * for few groups), and the last group writes the total at counts[groups].
 * Round by
 * round (ps_ids_item_words), the round's ids are first collected in local
 * memory as row offsets within the round (32 per work-item at most:
 * ushort), then written out by consecutive work-items to consecutive ids, so
 * that a dense selection is stored coalesced rather than 16 ids per
 * work-item apart. More words a work-item means fewer work-groups: fewer
 * counts to scan, and fewer group offsets. scratch: the scan's words, then
 * the staged offsets. */
__kernel void ps_write_ids(__constant ps_select_launch *launch, ps_bytes bitmap, __global uint *counts,
                           __global uchar *out, __local uint *scratch) {
  const uint lid = get_local_id(0), size = get_local_size(0);
  const ulong words = (launch->rows + 31) / 32, items = ps_ids_item_words(launch), group = get_group_id(0);
  __local ushort *stage = (__local ushort *)(scratch + size);
  const uint bytes = launch->index_bytes;
  const int summed = (launch->flags & PS_SELECT_SUM_OFFSETS) != 0;
  uint before = 0;
  if (summed)
    for (ulong i = lid; i < group; i += size) before += counts[i];
  before = ps_group_sum(before, scratch); /* unconditionally: barriers (a chunk has < 2^32 rows) */
  const uint first = summed ? before : counts[group];
  uint written = 0;
  ulong at = launch->out_offset + (ulong)first * bytes;
  for (ulong r = 0; r < items; ++r) { /* the same count for every work-item: barriers inside are uniform */
    const ulong g0 = ps_ids_round_first(items, r), g = g0 + lid;
    uint word = g < words ? ps_selection_word(launch, bitmap, g) : 0u;
    uint k = ps_group_exclusive_scan(popcount(word), scratch);
    const uint total = scratch[size - 1]; /* the scan's inclusive sum at the last work-item: the round's ids */
    while (word != 0) {
      stage[k++] = (ushort)(32 * lid + 31 - clz(word & (0u - word))); /* lowest set bit */
      word &= word - 1;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    const ulong base = launch->id_base + 32 * g0; /* the round's first row */
    if ((at & (bytes - 1)) == 0) {
      if (bytes == 4) {
        __global uint *o = (__global uint *)(out + at);
        for (uint i = lid; i < total; i += size) o[i] = (uint)(base + stage[i]);
      } else {
        __global ulong *o = (__global ulong *)(out + at);
        for (uint i = lid; i < total; i += size) o[i] = base + stage[i];
      }
    } else {
      for (uint i = lid; i < total; i += size) ps_store_value(out, at + (ulong)i * bytes, bytes, base + stage[i]);
    }
    at += (ulong)total * bytes;
    written += total;
    barrier(CLK_LOCAL_MEM_FENCE); /* scratch and stage are the next round's */
  }
  if (summed && lid == 0 && group == get_num_groups(0) - 1) counts[group + 1] = first + written;
}

/* ---- row ids on a CPU device ---------------------------------------------
 * One work-item per run of launch->run_words consecutive selection words (a
 * few KB of bitmap), no barrier: ps_count_runs writes each run's count, the
 * host scans them (it needs the total anyway) into offsets[q] (ids before
 * run q; offsets[runs] = the total), and ps_write_runs writes run q's ids
 * sequentially from offsets[q]. On a CPU the per-word work-items and group
 * scans of ps_count_words / ps_write_ids cost more than the bits themselves
 * (on PoCL: docs/benchmarks.md). The host takes these kernels on
 * little-endian CPU devices with the output aligned to the index size. */

/* Word g of the selection of a chunk with `words` words, read directly
 * where that is in bounds and aligned. */
static uint ps_run_word(__constant ps_select_launch *launch, ps_bytes bitmap, __global const uint *direct, ulong words,
                        ulong g) {
  if (direct && g + 1 < words) return direct[g];
  return ps_selection_word(launch, bitmap, g);
}

static __global const uint *ps_run_direct(__constant ps_select_launch *launch, ps_bytes bitmap) {
  return (launch->selection_offset & 3) == 0 ? (__global const uint *)(bitmap + launch->selection_offset) : 0;
}

__kernel void ps_count_runs(__constant ps_select_launch *launch, ps_bytes bitmap, __global uint *counts) {
  const ulong words = (launch->rows + 31) / 32, q = get_global_id(0), g0 = q * launch->run_words;
  if (g0 >= words) return;
  const ulong g1 = min(g0 + launch->run_words, words);
  __global const uint *direct = ps_run_direct(launch, bitmap);
  uint total = 0;
  for (ulong g = g0; g < g1; ++g) total += popcount(ps_run_word(launch, bitmap, direct, words, g));
  counts[q] = total;
}

/* Bits of a nibble as byte positions, lowest first (unused bytes 0): the
 * ids of nibble n of a word are base + 4n + those positions. */
__constant uint ps_nibble_positions[16] = {
    0x00000000u, 0x00000000u, 0x00000001u, 0x00000100u, 0x00000002u, 0x00000200u, 0x00000201u, 0x00020100u,
    0x00000003u, 0x00000300u, 0x00000301u, 0x00030100u, 0x00000302u, 0x00030200u, 0x00030201u, 0x03020100u};

/* Writes the ids of one word from index k on. Stores past the word's ids
 * are allowed where the run has room for them (below end, the run's own ids
 * to come, which overwrite them): a sparse word (at most 2 ids) stores 2
 * candidates without a branch on its bits (on PoCL the data-dependent
 * branches of a ctz loop cost more than the stores at 1% selected); a dense
 * word (more than 4) stores 4 candidate ids per nibble and advances k by the
 * nibble's bit count; other words, and words near the run's end, one store
 * per id. */
#define PS_WRITE_WORD(T, T4, CONVERT4)                                                     \
  {                                                                                      \
    const uint bits_ = popcount(word);                                                   \
    if (bits_ <= 2 && k + 2 <= end) {                                                    \
      const uint rest_ = word & (word - 1);                                              \
      o[k] = base + (T)(31 - clz(word & (0u - word)));                                   \
      o[k + 1] = base + (T)(31 - clz(rest_ & (0u - rest_)));                             \
      k += bits_;                                                                        \
    } else if (bits_ > 4 && k + 32 <= end) {                                             \
      _Pragma("unroll") for (uint n = 0; n < 8; ++n) {                                   \
        const uint nib = (word >> (4 * n)) & 15u;                                        \
        const T4 pos = CONVERT4(as_uchar4(ps_nibble_positions[nib]));                    \
        vstore4((T4)(base + 4 * n) + pos, 0, o + k);                                     \
        k += popcount(nib);                                                              \
      }                                                                                  \
    } else {                                                                             \
      while (word != 0) {                                                                \
        o[k++] = base + (T)(31 - clz(word & (0u - word)));                               \
        word &= word - 1;                                                                \
      }                                                                                  \
    }                                                                                    \
  }

__kernel void ps_write_runs(__constant ps_select_launch *launch, ps_bytes bitmap, __global const uint *offsets,
                            __global uchar *out) {
  const ulong words = (launch->rows + 31) / 32, q = get_global_id(0), g0 = q * launch->run_words;
  if (g0 >= words) return;
  const ulong g1 = min(g0 + launch->run_words, words);
  __global const uint *direct = ps_run_direct(launch, bitmap);
  ulong k = offsets[q];
  const ulong end = offsets[q + 1];
  if (launch->index_bytes == 4) {
    __global uint *o = (__global uint *)(out + launch->out_offset);
    for (ulong g = g0; g < g1; ++g) {
      uint word = ps_run_word(launch, bitmap, direct, words, g);
      const uint base = (uint)(launch->id_base + 32 * g); /* ids are taken mod 2^32 */
      PS_WRITE_WORD(uint, uint4, convert_uint4)
    }
  } else {
    __global ulong *o = (__global ulong *)(out + launch->out_offset);
    for (ulong g = g0; g < g1; ++g) {
      uint word = ps_run_word(launch, bitmap, direct, words, g);
      const ulong base = launch->id_base + 32 * g;
      PS_WRITE_WORD(ulong, ulong4, convert_ulong4)
    }
  }
}

/* ---- reduce -----------------------------------------------------------
 * The row mask, the partial and its combination: kernels_shared/ps_select.h
 * (as CUDA's reduce). The device reports whether a corrupt code was read;
 * the host finds the row. */

/* Counted codes of word g into *acc. */
static void ps_reduce_word(__constant ps_select_launch *launch, ps_bytes data, ps_bytes validity, ps_bytes selection,
                           ulong g, ps_sel_partial *acc) {
  __constant ps_prog_col *m = &launch->col;
  const int has_sel = (launch->flags & PS_SELECT_HAS_SELECTION) != 0;
  const uint rows = ps_sel_reduce_rows(launch->rows, g, has_sel ? selection + launch->selection_offset : 0,
                                       (launch->selection_offset & 3) == 0, validity + launch->validity_offset,
                                       (launch->validity_offset & 3) == 0, m);
  for (uint j = 0; j < 32; ++j) {
    if (!((rows >> j) & 1u)) continue;
    const ulong row = 32 * g + j;
    ps_sel_partial_code(acc, m, row,
                        ps_col_code_at(data + launch->data_offset, m, (launch->data_offset & 3) == 0, row));
  }
}

/* The work-group's partials combined by a tree in scratch
 * (PS_REDUCE_PARTIAL_WORDS ulongs per work-item; the partial without its
 * corrupt row) into partials[group]. Every work-item calls it (barriers). */
static void ps_reduce_group(ps_sel_partial acc, __local ulong *scratch, __global ulong *partials) {
  uint lid = get_local_id(0), n = get_local_size(0);
  __local ulong *s = scratch + PS_REDUCE_PARTIAL_WORDS * lid;
  s[0] = acc.count, s[1] = acc.min, s[2] = acc.max, s[3] = acc.sum_lo, s[4] = acc.sum_hi;
  barrier(CLK_LOCAL_MEM_FENCE);
  for (uint step = n / 2; step > 0; step /= 2) {
    if (lid < step) {
      __local ulong *o = scratch + PS_REDUCE_PARTIAL_WORDS * (lid + step);
      ps_sel_partial p = {s[0], s[1], s[2], s[3], s[4], PS_SEL_NONE}, q = {o[0], o[1], o[2], o[3], o[4], PS_SEL_NONE};
      p = ps_sel_partial_add(p, q);
      s[0] = p.count, s[1] = p.min, s[2] = p.max, s[3] = p.sum_lo, s[4] = p.sum_hi;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
  }
  if (lid == 0)
    for (uint i = 0; i < PS_REDUCE_PARTIAL_WORDS; ++i)
      partials[PS_REDUCE_PARTIAL_WORDS * get_group_id(0) + i] = scratch[i];
}

/* Grid-stride over the chunk's words, so the number of partials the host
 * reads back is bounded by the launch size; then a work-group tree
 * reduction into partials[group]. scratch holds PS_REDUCE_PARTIAL_WORDS
 * ulongs per work-item. The CPU path: one work-item per word, each reading
 * its own word's stream words in order. */
__kernel void ps_reduce_words(__constant ps_select_launch *launch, ps_bytes data, ps_bytes validity,
                              ps_bytes selection, __global ulong *partials, volatile __global uint *status,
                              __local ulong *scratch) {
  ps_sel_partial acc = ps_sel_partial_empty();
  ulong words = (launch->rows + 31) / 32;
  for (ulong g = get_global_id(0); g < words; g += get_global_size(0))
    ps_reduce_word(launch, data, validity, selection, g, &acc);
  if (acc.bad_row != PS_SEL_NONE) atomic_or(&status[PS_SELECT_STATUS_CORRUPT], 1u);
  ps_reduce_group(acc, scratch, partials);
}

/* ---- reduce by tiles (GPU devices) ---------------------------------------
 * One work-item per word, as above, reads that word's w stream words: across
 * a GPU's work-items w*4 bytes apart (uncoalesced), then 32 rows each with a
 * branch and a 64-bit bounded extraction. Here a work-group of n work-items
 * (a multiple of 32) takes tiles of n consecutive row words: it copies the
 * tile's n*w stream words into local memory with coalesced 16-byte loads,
 * and then each team of 32 work-items takes 32 of the words, work-item l
 * taking row l of each (kernels_shared/ps_select.h's ps_sel_tile_code: the
 * same bit in every word, conflict-free), pre-reducing in private memory (a
 * tile's sum in 32 or 64 bits, 32-bit min and max) before the work-group's
 * tree. The math is CUDA's reduce_tiles'; a work-group barrier stands in
 * for the warp's, and the words' row masks pass through local memory
 * instead of shuffles (OpenCL 1.2 has no sub-groups). Widths 1..32 of FOR
 * columns that hold codes; the host takes ps_reduce_words otherwise. A
 * code above the column's limit raises the corrupt status, as there (the
 * host names the column; the sums of such a call are not returned). */

/* A work-item's accumulators over its tiles (codes of at most 32 bits):
 * count, the rows of its lane's words; the rest, over row `lane` of its
 * team's words. */
typedef struct ps_tile_acc {
  ulong count, sum_lo, sum_hi;
  uint min, max;
} ps_tile_acc;

/* Row `lane` of the 32 words staged at stage (32w + 1 words), counted where
 * bit lane of their row masks (rows[0..32), unread when plain) is set;
 * wide: w > PS_SEL_TILE_NARROW_MAX (a 64-bit tile sum). Called with
 * constant plain and wide, so each combination compiles to its own loop. */
static inline void ps_tile_lane(ps_tile_acc *a, __local const uint *stage, __local const uint *rows, uint w, uint lane,
                                int plain, int wide) {
  uint sum32 = 0, mn = 0xffffffffu, mx = 0;
  ulong sum64 = 0;
#pragma unroll 8
  for (uint j = 0; j < 32; ++j) {
    const uint code = ps_sel_tile_code(stage, w, j, lane);
    if (plain || ((rows[j] >> lane) & 1u)) {
      if (wide)
        sum64 += code;
      else
        sum32 += code;
      mn = min(mn, code);
      mx = max(mx, code);
    }
  }
  const ulong sum = wide ? sum64 : (ulong)sum32;
  a->count += plain ? 32u : popcount(rows[lane]);
  a->sum_lo += sum;
  a->sum_hi += a->sum_lo < sum ? 1u : 0u;
  a->min = min(a->min, mn);
  a->max = max(a->max, mx);
}

/* scratch: the tile's n*w stream words and one more (0), then its n row
 * masks, from 16-byte aligned; after the tiles, the tree's partials
 * (ps_reduce_group). Every work-group runs the same number of rounds
 * (tiles past the end read nothing and count nothing), so every barrier is
 * reached by every work-item of the launch alike. */
__kernel void ps_reduce_tiles(__constant ps_select_launch *launch, ps_bytes data, ps_bytes validity,
                              ps_bytes selection, __global ulong *partials, volatile __global uint *status,
                              __local uint4 *scratch) {
  __constant ps_prog_col *m = &launch->col;
  const uint lid = get_local_id(0), size = get_local_size(0), lane = lid % 32, team = lid / 32;
  const uint w = m->width, n = size * w; /* stream words per tile: a multiple of 32 */
  const ulong rows = launch->rows, words = (rows + 31) / 32;
  const ulong tiles = (words + size - 1) / size, groups = get_num_groups(0), rounds = (tiles + groups - 1) / groups;
  __local uint *stage = (__local uint *)scratch;
  __local uint *masks = stage + n + 4;
  const int has_sel = (launch->flags & PS_SELECT_HAS_SELECTION) != 0;
  const int all_rows = !has_sel && !(m->flags & PS_COLF_VALIDITY);
  ps_bytes d = data + launch->data_offset;
  ps_bytes sel = has_sel ? selection + launch->selection_offset : 0;
  ps_bytes v = validity + launch->validity_offset;
  const uint data_aligned = (launch->data_offset & 3) == 0;
  ps_tile_acc acc = {0, 0, 0, 0xffffffffu, 0};
  for (ulong k = 0; k < rounds; ++k) {
    const ulong first = (k * groups + get_group_id(0)) * size; /* the tile's first word; neighbours' tiles adjacent */
    const int plain = all_rows && (first + size) * 32 <= rows; /* uniform: every row of the tile counts */
    if (first < words) {
      const ulong g = first + lid;
      masks[lid] = g < words ? ps_sel_reduce_rows(rows, g, sel, (launch->selection_offset & 3) == 0, v,
                                                  (launch->validity_offset & 3) == 0, m)
                             : 0u;
      const ulong base = first * w; /* a multiple of 32 */
      if ((launch->data_offset & 15) == 0 && (base + n) * 4 <= m->data_bytes) {
        /* four loads in flight per work-item before their local stores */
        __global const uint4 *src = (__global const uint4 *)d + base / 4;
        const uint vecs = n / 4;
        for (uint i0 = lid; i0 < vecs; i0 += 4 * size) {
          uint4 x[4];
#pragma unroll
          for (uint q = 0; q < 4; ++q) x[q] = i0 + q * size < vecs ? src[i0 + q * size] : (uint4)(0);
#pragma unroll
          for (uint q = 0; q < 4; ++q)
            if (i0 + q * size < vecs) scratch[i0 + q * size] = x[q];
        }
      } else {
        for (uint i = lid; i < n; i += size) stage[i] = ps_stream_word(d, m->data_bytes, base + i, data_aligned);
      }
      if (lid == 0) stage[n] = 0;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    if (first < words) {
      __local const uint *ts = stage + 32 * team * w, *tm = masks + 32 * team;
      const int wide = w > PS_SEL_TILE_NARROW_MAX;
      if (plain && wide)
        ps_tile_lane(&acc, ts, tm, w, lane, 1, 1);
      else if (plain)
        ps_tile_lane(&acc, ts, tm, w, lane, 1, 0);
      else if (wide)
        ps_tile_lane(&acc, ts, tm, w, lane, 0, 1);
      else
        ps_tile_lane(&acc, ts, tm, w, lane, 0, 0);
    }
    barrier(CLK_LOCAL_MEM_FENCE); /* the next round rewrites the stage */
  }
  if (acc.max > ps_sel_tile_limit(m)) atomic_or(&status[PS_SELECT_STATUS_CORRUPT], 1u);
  /* A work-item counts its lane's own words' rows but takes row `lane` of
   * other words, so its count says nothing about its min: 0xffffffff is
   * neutral among 32-bit codes, and the host makes an empty result's min
   * the empty partial's. */
  const ps_sel_partial p = {acc.count, acc.min, acc.max, acc.sum_lo, acc.sum_hi, PS_SEL_NONE};
  ps_reduce_group(p, (__local ulong *)scratch, partials);
}

/* ---- gather -----------------------------------------------------------
 * What an id becomes: kernels_shared/ps_select.h's ps_sel_gather_row (as
 * CUDA's gather). */

/* Id i of the launch's list into values; its validity as the return value.
 * A bad id or code stores nothing and records the launch's least offending
 * index instead (0 returned). */
static uint ps_gather_one(__constant ps_select_launch *launch, ps_bytes data, ps_bytes validity, ps_bytes ids,
                          __global uchar *values, volatile __global uint *status, ulong i) {
  __constant ps_prog_col *m = &launch->col;
#ifdef PS_HAVE_FP64
  __constant double *pow10 = ps_pow10 + min((uint)m->scale, 18u);
#else
  __constant uchar *pow10 = 0;
#endif
  const ulong id = ps_load_value(ids, launch->ids_offset + i * launch->index_bytes, launch->index_bytes);
  ps_bool valid;
  ulong value;
  const uint err = ps_sel_gather_row(m, data + launch->data_offset, (launch->data_offset & 3) == 0,
                                     validity + launch->validity_offset, launch->rows, launch->out_type, pow10, id,
                                     &valid, &value);
  if (err) {
    atomic_min(&status[err == 1 ? PS_SELECT_STATUS_BAD_ID : PS_SELECT_STATUS_BAD_CODE], (uint)(i - launch->first));
    return 0;
  }
  ps_store_value(values, launch->out_offset + i * launch->value_bytes, launch->value_bytes, value);
  return valid ? 1u : 0u;
}

/* Work-item q handles ids [first + 32q, first + 32q + 32) and writes their
 * validity as one word. Errors record the least offending index of the
 * launch, so the host reports what a serial loop would meet first. The CPU
 * path: a work-item's ids, codes and values in order. */
__kernel void ps_gather_values(__constant ps_select_launch *launch, ps_bytes data, ps_bytes validity, ps_bytes ids,
                               __global uchar *values, __global uchar *validity_out, volatile __global uint *status) {
  const ulong i0 = launch->first + 32 * (ulong)get_global_id(0);
  if (i0 >= launch->count) return;
  const uint n = (uint)min((ulong)32, launch->count - i0);
  uint valid_bits = 0;
  for (uint j = 0; j < n; ++j) valid_bits |= ps_gather_one(launch, data, validity, ids, values, status, i0 + j) << j;
  if (launch->flags & PS_SELECT_WANT_VALIDITY)
    ps_store_word(validity_out, launch->validity_out_offset, (launch->count + 7) / 8, i0 / 32, valid_bits);
}

/* The GPU path: one work-item per id, so that consecutive work-items load
 * consecutive ids and store consecutive values (coalesced), and every id's
 * dependent id-then-code loads are in flight at once. With 32 ids per
 * work-item (ps_gather_values) a work-item's ids were read one after the
 * other, and a sparse gather left the device with few work-items. The
 * validity word of 32 ids is assembled in local memory (vbits: a word per
 * 32 work-items; the group size is a multiple of 32 and `first` a multiple
 * of 32, so a word's ids are one group's). Errors as ps_gather_values. */
__kernel void ps_gather_ids(__constant ps_select_launch *launch, ps_bytes data, ps_bytes validity, ps_bytes ids,
                            __global uchar *values, __global uchar *validity_out, volatile __global uint *status,
                            __local uint *vbits) {
  const uint lid = get_local_id(0);
  const ulong i = launch->first + get_global_id(0);
  if (lid % 32 == 0) vbits[lid / 32] = 0;
  barrier(CLK_LOCAL_MEM_FENCE);
  if (i < launch->count && ps_gather_one(launch, data, validity, ids, values, status, i))
    atomic_or(&vbits[lid / 32], 1u << (lid % 32));
  barrier(CLK_LOCAL_MEM_FENCE);
  if ((launch->flags & PS_SELECT_WANT_VALIDITY) && lid % 32 == 0 && i < launch->count)
    ps_store_word(validity_out, launch->validity_out_offset, (launch->count + 7) / 8, i / 32, vbits[lid / 32]);
}

#endif /* PS_SPECIALIZED */
