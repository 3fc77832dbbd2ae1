/*
 * What comes after the filter (core/backend.h): row ids of a selection, the
 * code-space reduction of a column, and late materialization. The per-element
 * logic is in ps_cuda_select.cuh; this file holds the block/warp structure and
 * the extern "C" launchers.
 *
 * Row ids use size-then-retrieve in a single pass: every block counts a tile
 * of bitmap words, gets the exclusive scan of the tile counts at its tile
 * from CUB's single-pass scan machinery (decoupled look-back), and writes
 * its tile's ids there. No per-row atomics and no over-allocation.
 */
#include <atomic>

#include <cuda_pipeline_primitives.h>

#include "ps_cuda_ids.cuh"

static_assert(sizeof(ps_sel_partial) == PS_CUDA_REDUCE_RESULT_WORDS * sizeof(uint64_t),
              "the reduce result is one partial");

namespace {

/* The words of lane `lane` of warp `warp` in a tile, round by round: whole
 * aligned tiles with plain loads, the last tile (or an unaligned bitmap)
 * through the bounded loader, which also clears bits past rows. */
__device__ __forceinline__ void load_ids_words(const ps_cuda_row_ids_params &p, uint32_t tile, uint32_t warp,
                                               uint32_t lane, uint32_t (&w)[kIdsRounds]) {
  const uint64_t first = ps_sel_ids_word(tile, warp, 0, lane);
  if (p.bitmap_aligned && ps_sel_ids_full_tile(p.rows, tile)) {
    const uint32_t *b = reinterpret_cast<const uint32_t *>(p.bitmap) + first;
#pragma unroll
    for (uint32_t r = 0; r < kIdsRounds; ++r) w[r] = __ldg(b + r * 32u);
  } else {
#pragma unroll
    for (uint32_t r = 0; r < kIdsRounds; ++r)
      w[r] = ps_sel_bitmap_word(p.bitmap, p.rows, first + r * 32u, p.bitmap_aligned != 0);
  }
}

/* The set bits of lane `lane`'s words of warp `warp` in a tile. */
__device__ __forceinline__ uint32_t ids_lane_count(const ps_cuda_row_ids_params &p, uint32_t tile, uint32_t warp,
                                                   uint32_t lane) {
  uint32_t w[kIdsRounds];
  load_ids_words(p, tile, warp, lane, w);
  uint32_t mine = 0;
#pragma unroll
  for (uint32_t r = 0; r < kIdsRounds; ++r) mine += __popc(w[r]);
  return mine;
}

/* Word `round` of lane `lane` of warp `warp` in a tile, loaded again in the
 * writing phase (from L1/L2: the block read it moments before) rather than
 * kept in registers through the look-back, which would cost occupancy. */
__device__ __forceinline__ uint32_t ids_word(const ps_cuda_row_ids_params &p, uint32_t tile, uint32_t warp,
                                             uint32_t round, uint32_t lane, bool whole) {
  const uint64_t g = ps_sel_ids_word(tile, warp, round, lane);
  return whole ? __ldg(reinterpret_cast<const uint32_t *>(p.bitmap) + g)
               : ps_sel_bitmap_word(p.bitmap, p.rows, g, p.bitmap_aligned != 0);
}

/* Size: the set bits of a tile, added to *p.total (0 between launches); the
 * last block to finish moves the sum to *p.result and leaves *p.total 0, so
 * a call needs no memset and no copy. */
__global__ void __launch_bounds__(kBlock) count_ids(const __grid_constant__ ps_cuda_row_ids_params p) {
  __shared__ typename IdsBlockReduce::TempStorage tmp;
  __shared__ bool last;
  const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
  const uint32_t total = IdsBlockReduce(tmp).Sum(ids_lane_count(p, blockIdx.x, warp, lane));
  if (threadIdx.x == 0) {
    if (total) atomicAdd(p.total, total);
    __threadfence(); /* the count is added before the ticket is taken */
    last = atomicAdd(p.done, 1u) == gridDim.x - 1;
  }
  __syncthreads();
  if (!last || threadIdx.x != 0) return;
  __threadfence();
  *p.result = atomicExch(p.total, 0u);
  *p.done = 0; /* ready for the next launch on the stream */
}

/* The selection bitmap's words: whole aligned tiles with plain loads, the
 * last tile (or an unaligned bitmap) through the bounded loader. */
struct bitmap_words {
  const ps_cuda_row_ids_params &p;
  uint16_t (*stage_area)[PS_SEL_IDS_STAGE_SLOTS];
  bool whole;
  __device__ __forceinline__ uint16_t *stage(uint32_t warp) { return stage_area[warp]; }
  __device__ __forceinline__ uint32_t lane_count(uint32_t tile, uint32_t warp, uint32_t lane) {
    whole = p.bitmap_aligned && ps_sel_ids_full_tile(p.rows, tile);
    return ids_lane_count(p, tile, warp, lane);
  }
  __device__ __forceinline__ uint32_t word(uint32_t tile, uint32_t warp, uint32_t round, uint32_t lane) {
    return ids_word(p, tile, warp, round, lane, whole);
  }
};

template <uint32_t kBytes, bool kAligned>
__global__ void __launch_bounds__(kBlock) write_ids(const __grid_constant__ ps_cuda_row_ids_params p,
                                                    unsigned int *ticket, IdsTileState tile_state, uint32_t tiles) {
  __shared__ __align__(16) uint16_t stage[kIdsWarps][PS_SEL_IDS_STAGE_SLOTS];
  bitmap_words src{p, stage, false};
  if (ids_tile<kBytes, kAligned>(p, ticket, tile_state, tiles, src)) ids_reset_state(tile_state, tiles, ticket);
}
template <uint32_t kBytes, bool kAligned>
cudaError_t launch_write_ids(const ps_cuda_row_ids_params &p, unsigned int *ticket, const IdsTileState &tile_state,
                             uint32_t tiles, cudaStream_t stream) {
  write_ids<kBytes, kAligned><<<tiles, kBlock, 0, stream>>>(p, ticket, tile_state, tiles);
  return cudaGetLastError();
}

/* ---- reduce ---------------------------------------------------------------------- */

struct partial_add {
  __device__ __forceinline__ ps_sel_partial operator()(const ps_sel_partial &a, const ps_sel_partial &b) const {
    return ps_sel_partial_add(a, b);
  }
};

__device__ __forceinline__ ps_sel_partial block_partial(const ps_sel_partial &mine) {
  typedef cub::BlockReduce<ps_sel_partial, kBlock> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  return Reduce(tmp).Reduce(mine, partial_add());
}

__device__ __forceinline__ void store_result(uint64_t *result, const ps_sel_partial &t) {
  result[0] = t.count, result[1] = t.min, result[2] = t.max;
  result[3] = t.sum_lo, result[4] = t.sum_hi, result[5] = t.bad_row;
}

/* One thread per row, grid-stride by warps: a warp reads one word of the
 * selection and validity (the same address for all lanes: one broadcast) and
 * 32 consecutive codes (coalesced). Per-thread partials, then one per block. */
__global__ void __launch_bounds__(kBlock)
    reduce_rows(const __grid_constant__ ps_cuda_reduce_params p, ps_sel_partial *partials) {
  const uint32_t lane = threadIdx.x & 31u;
  const uint64_t stride = (uint64_t)gridDim.x * kBlock;
  ps_sel_partial acc = ps_sel_partial_empty();
  for (uint64_t base = (uint64_t)blockIdx.x * kBlock + (threadIdx.x & ~31u); base < p.rows; base += stride) {
    const uint32_t rows = ps_sel_reduce_rows(p, base >> 5);
    if (!((rows >> lane) & 1u)) continue;
    const uint64_t row = base + lane;
    ps_sel_partial_code(&acc, &p.col, row, ps_col_code_at(p.data, &p.col, p.data_aligned, row));
  }
  const ps_sel_partial total = block_partial(acc);
  if (threadIdx.x == 0) partials[blockIdx.x] = total;
}

/* Combines the per-block partials into the result (one block). */
__global__ void __launch_bounds__(kBlock)
    reduce_partials(const ps_sel_partial *partials, uint32_t n, uint64_t *result) {
  ps_sel_partial acc = ps_sel_partial_empty();
  for (uint32_t i = threadIdx.x; i < n; i += kBlock) acc = ps_sel_partial_add(acc, partials[i]);
  const ps_sel_partial total = block_partial(acc);
  if (threadIdx.x == 0) {
    store_result(result, total);
  }
}

/* ---- reduce, widths 1..32: a warp per 1024-row tile ----------------------------
 * reduce_rows spends a thread and a 64-bit bounded code extraction per row,
 * adds every code into a 128-bit sum, and issues one dependent 4-byte load
 * at a time: it ran at about a tenth of the copy bandwidth. Here a warp
 * copies a tile's 32w stream words into shared memory (16-byte cp.async,
 * all in flight at once), and then lane l takes row l
 * of each of the tile's 32 result words: its code starts at the same bit
 * (l*w mod 32) of word j*w + (l*w)/32 for every j, so a code is two shared
 * loads (a window of at most 33 consecutive words across the warp: no bank
 * conflicts) and a funnel shift. Codes are 32-bit, a tile's sum is 32-bit
 * up to 27 bits (64-bit above) and meets the 128-bit sum once per tile; the
 * corrupt-code test is one compare of the tile's max (ps_sel_tile_lane has
 * the instruction count, which issue limits as much as the bytes do). The
 * block partials are combined by the last block to finish (counted in
 * *done), so one launch does the whole reduction. */

constexpr uint32_t kReduceWarps = kBlock / 32;
constexpr uint32_t kReduceStage = 32u * 32u + 4u; /* a tile's words at 32 bits, one past them; 16-byte rows */

/* Loads the tile's n = 32w words (from stream word `base`) into stage[0..n)
 * and zeroes stage[n]: the funnel shift of the tile's last code reads it,
 * and masks it away. A whole tile of 16-byte aligned data is copied with
 * asynchronous 16-byte copies, all in flight at once and holding no
 * registers (staged through registers, the loads cost 115 registers a
 * thread: two blocks per SM); the stream's last tile, or unaligned data,
 * word by word with bounds. */
__device__ __forceinline__ void stage_tile(const ps_cuda_reduce_params &p, uint64_t base, uint32_t n, uint32_t lane,
                                           uint32_t *stage) {
  if (p.data_aligned16 && (base + n) * 4 <= p.col.data_bytes) {
    const uint4 *src = reinterpret_cast<const uint4 *>(p.data) + base / 4; /* base = 32w * tile: a multiple of 4 */
    uint4 *dst = reinterpret_cast<uint4 *>(stage);
    for (uint32_t v = lane; v < n / 4; v += 32) __pipeline_memcpy_async(dst + v, src + v, 16);
    __pipeline_commit();
    __pipeline_wait_prior(0);
  } else {
    for (uint32_t k = lane; k < n; k += 32)
      stage[k] = ps_stream_word(p.data, p.col.data_bytes, base + k, p.data_aligned);
  }
  if (lane == 0) stage[n] = 0;
}

/* The combined partial of partials[0..n), written by other blocks: read
 * through L2 (__ldcg), not a possibly stale L1 line. */
__device__ __forceinline__ ps_sel_partial load_partial(const ps_sel_partial *q) {
  const unsigned long long *w = reinterpret_cast<const unsigned long long *>(q);
  ps_sel_partial r;
  r.count = __ldcg(w), r.min = __ldcg(w + 1), r.max = __ldcg(w + 2);
  r.sum_lo = __ldcg(w + 3), r.sum_hi = __ldcg(w + 4), r.bad_row = __ldcg(w + 5);
  return r;
}

/* Rows past the end of the stream; the lane's rows mask of word j from lane
 * j's register. */
struct tile_rows_shfl {
  uint32_t rows;
  __device__ __forceinline__ uint32_t operator()(uint32_t j) const { return __shfl_sync(kFullWarp, rows, j); }
};

/* The warp's tiles (grid-stride) into acc. A whole tile of a column without
 * selection or validity counts every row: no row masks at all there. */
template <bool kWide>
__device__ __forceinline__ void reduce_warp_tiles(const ps_cuda_reduce_params &p, uint32_t warp, uint32_t lane,
                                                  uint32_t *stage, ps_sel_tile_acc &acc) {
  const uint32_t w = p.col.width; /* 1..32 */
  const uint32_t n = 32u * w;
  const uint32_t limit = ps_sel_tile_limit(&p.col);
  const uint64_t tiles = (p.rows + 1023) / 1024;
  const uint64_t plain_tiles = p.selection || (p.col.flags & PS_COLF_VALIDITY) ? 0 : p.rows / 1024;
  for (uint64_t t = (uint64_t)blockIdx.x * kReduceWarps + warp; t < tiles; t += (uint64_t)gridDim.x * kReduceWarps) {
    const bool plain = t < plain_tiles; /* uniform across the warp */
    /* lane j: the rows of word j */
    const uint32_t rows = plain ? 0xffffffffu : ps_sel_reduce_rows(p, t * 32 + lane);
    stage_tile(p, t * n, n, lane, stage);
    __syncwarp();
    const tile_rows_shfl word_rows{rows};
    const bool above = plain ? ps_sel_tile_lane<false, kWide>(acc, stage, w, limit, lane, rows, word_rows)
                             : ps_sel_tile_lane<true, kWide>(acc, stage, w, limit, lane, rows, word_rows);
    if (__any_sync(kFullWarp, above)) { /* corrupt codes: the least such row of each lane */
      const uint64_t bad = plain ? ps_sel_tile_bad_row<false>(stage, w, limit, t, lane, word_rows)
                                 : ps_sel_tile_bad_row<true>(stage, w, limit, t, lane, word_rows);
      acc.bad_row = bad < acc.bad_row ? bad : acc.bad_row;
    }
    __syncwarp(); /* the stage is rewritten next tile */
  }
}

/* 5 blocks per SM (48 registers, as the shared stage allows 6): left to
 * itself nvcc hoists the shared loads of the unrolled loop into 58 registers,
 * 4 blocks, fewer tiles in flight. */
__global__ void __launch_bounds__(kBlock, 5)
    reduce_tiles(const __grid_constant__ ps_cuda_reduce_params p, ps_sel_partial *partials) {
  __shared__ __align__(16) uint32_t stage_area[kReduceWarps][kReduceStage];
  __shared__ bool last;
  const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
  ps_sel_tile_acc acc = ps_sel_tile_acc_empty();
  if (p.col.width > PS_SEL_TILE_NARROW_MAX) /* uniform */
    reduce_warp_tiles<true>(p, warp, lane, stage_area[warp], acc);
  else
    reduce_warp_tiles<false>(p, warp, lane, stage_area[warp], acc);
  const ps_sel_partial mine = ps_sel_tile_partial(acc);
  ps_sel_partial total = block_partial(mine);
  if (threadIdx.x == 0) {
    partials[blockIdx.x] = total;
    __threadfence(); /* the partial is visible before the ticket is */
    last = atomicAdd(p.done, 1u) == gridDim.x - 1;
  }
  __syncthreads(); /* also frees block_partial's storage for the second use */
  if (!last) return;
  __threadfence();
  ps_sel_partial all = ps_sel_partial_empty();
  for (uint32_t i = threadIdx.x; i < gridDim.x; i += kBlock) all = ps_sel_partial_add(all, load_partial(partials + i));
  total = block_partial(all);
  if (threadIdx.x == 0) {
    store_result(p.result, ps_sel_tile_result(total));
    *p.done = 0; /* ready for the next launch on the stream */
  }
}

/* Resident blocks of reduce_tiles on the current device, measured once per
 * process (fallback: the caller's cap). */
uint32_t reduce_tiles_resident(uint32_t fallback) {
  static std::atomic<uint32_t> cached{0};
  uint32_t v = cached.load(std::memory_order_relaxed);
  if (v) return v;
  int dev = 0, sms = 0, per_sm = 0;
  if (cudaGetDevice(&dev) != cudaSuccess ||
      cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev) != cudaSuccess ||
      cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, reduce_tiles, kBlock, 0) != cudaSuccess || per_sm <= 0 ||
      sms <= 0) {
    (void)cudaGetLastError();
    return fallback ? fallback : 1;
  }
  v = (uint32_t)per_sm * (uint32_t)sms;
  cached.store(v, std::memory_order_relaxed);
  return v;
}

/* The tiles stage FOR stream words; other encodings take the per-row reduce. */
bool reduce_by_tiles(const ps_prog_col &col) {
  return col.encoding == PS_ENC_FOR && col.width >= 1 && col.width <= 32 && !(col.flags & PS_COLF_NO_CODES);
}

uint32_t reduce_blocks(uint64_t rows, const ps_prog_col &col, uint32_t max_blocks) {
  if (reduce_by_tiles(col)) {
    const uint64_t want = (rows + 1024u * kReduceWarps - 1) / (1024u * kReduceWarps);
    const uint64_t cap = reduce_tiles_resident(max_blocks);
    return (uint32_t)(want < cap ? want : cap);
  }
  const uint64_t want = (rows + kBlock - 1) / kBlock;
  const uint64_t cap = max_blocks ? max_blocks : 1;
  return (uint32_t)(want < cap ? want : cap);
}

/* ---- gather ---------------------------------------------------------------------- */

/* Lane `lane`'s share of storing validity word q (outputs [32q, 32q+32)) of
 * a bitmap of ceil(count/8) bytes: whole aligned words from lane 0, the
 * final partial word (or a misaligned bitmap) bytewise from lanes 0..3, so
 * nothing past ceil(count/8) is written. */
__device__ __forceinline__ void store_validity(const ps_cuda_gather_params &p, uint64_t q, uint32_t word,
                                               uint32_t lane) {
  if (q < p.count / 32 && p.validity_out_aligned) {
    if (lane == 0) *reinterpret_cast<uint32_t *>(p.validity_out + q * 4) = word;
    return;
  }
  const uint64_t bytes = (p.count + 7) / 8;
  const uint64_t at = q * 4 + lane;
  if (lane < 4 && at < bytes) p.validity_out[at] = (uint8_t)(word >> (8 * lane));
}

/* A warp takes kGatherPer rounds of 32 consecutive outputs (lane l: output
 * base + 32u + l in round u), grid-stride; the loop condition is the warp's,
 * so all lanes reach the ballots. Every round's id is loaded, then every
 * round's code words, then the values stored: the reads of all rounds are
 * in flight together (one round per thread left a dependent id-then-code
 * chain per output, a large part of the gather's time: docs/benchmarks.md).
 * Direct: a column of 1..32 bits without validity on 4-byte aligned data
 * (uniform over the launch): a code is two plain loads and a funnel shift
 * unless its words reach the stream's end or its id is past the column,
 * which take the bounded per-output path. Errors lower the status words to
 * the least offending output, so the host reports what a serial loop meets
 * first. */
constexpr uint32_t kGatherPer = 4;

/* 48 registers, 5 blocks per SM, as before the last block's hand-off (which
 * took nvcc to 64: 4 blocks, fewer loads in flight). */
__global__ void __launch_bounds__(kBlock, 5) gather_rows(const __grid_constant__ ps_cuda_gather_params p) {
  const uint32_t lane = threadIdx.x & 31u;
  constexpr uint64_t kSpan = 32u * kGatherPer;
  const uint64_t stride = (uint64_t)gridDim.x * (kBlock / 32) * kSpan;
  const uint32_t w = p.col.width;
  /* the FOR stream read in place; other encodings through ps_sel_gather_one */
  const bool direct =
      p.col.encoding == PS_ENC_FOR && w >= 1 && w <= 32 && !(p.col.flags & PS_COLF_VALIDITY) && p.data_aligned;
  const uint32_t cmask = w >= 1 && w <= 32 ? ps_sel_width_mask(w) : 0u;
  const uint32_t *d32 = reinterpret_cast<const uint32_t *>(p.data);
  for (uint64_t base = ((uint64_t)blockIdx.x * (kBlock / 32) + (threadIdx.x >> 5)) * kSpan; base < p.count;
       base += stride) {
    bool valid[kGatherPer];
    uint32_t err[kGatherPer];
    uint64_t bits[kGatherPer];
    if (direct) {
      uint64_t id[kGatherPer];
#pragma unroll
      for (uint32_t u = 0; u < kGatherPer; u++) {
        const uint64_t i = base + 32u * u + lane;
        id[u] = i < p.count ? ps_sel_load_index(p.ids + i * p.index_bytes, p.index_bytes, p.ids_aligned != 0) : 0;
      }
      uint32_t lo[kGatherPer], hi[kGatherPer], shift[kGatherPer];
      bool near[kGatherPer];
#pragma unroll
      for (uint32_t u = 0; u < kGatherPer; u++) {
        const uint64_t word = ps_sel_code_word(id[u], w, &shift[u]);
        near[u] = id[u] < p.rows && (word + 2) * 4 <= p.col.data_bytes;
        lo[u] = near[u] ? __ldg(d32 + word) : 0u;
        hi[u] = near[u] ? __ldg(d32 + word + 1) : 0u;
      }
#pragma unroll
      for (uint32_t u = 0; u < kGatherPer; u++) {
        const uint64_t i = base + 32u * u + lane;
        valid[u] = false, err[u] = 0, bits[u] = 0;
        if (i >= p.count) continue;
        if (!near[u]) {
          err[u] = ps_sel_gather_one(p, i, &valid[u], &bits[u]);
          continue;
        }
        const uint32_t code = ps_sel_funnel(lo[u], hi[u], shift[u]) & cmask;
        if (ps_code_corrupt(p.col.flags, code, p.col.code_limit)) {
          err[u] = 2;
        } else {
          valid[u] = true;
          bits[u] = ps_sel_gather_bits(&p.col, p.out_type, &p.pow10, code);
        }
      }
    } else {
#pragma unroll
      for (uint32_t u = 0; u < kGatherPer; u++) {
        const uint64_t i = base + 32u * u + lane;
        valid[u] = false, err[u] = 0, bits[u] = 0;
        if (i < p.count) err[u] = ps_sel_gather_one(p, i, &valid[u], &bits[u]);
      }
    }
#pragma unroll
    for (uint32_t u = 0; u < kGatherPer; u++) {
      const uint64_t i = base + 32u * u + lane;
      if (i < p.count) {
        if (err[u] == 0)
          ps_sel_store(p.values + i * p.value_bytes, p.value_bytes, bits[u], p.values_aligned != 0);
        else
          atomicMin(&p.status[err[u] - 1], (unsigned long long)i);
      }
      const uint32_t word = __ballot_sync(kFullWarp, valid[u]);
      if (p.validity_out) store_validity(p, (base >> 5) + u, word, lane);
    }
  }
  /* The last block to finish hands the status words to the host's copy and
   * sets them back for the next launch. Each thread's atomicMin is ordered
   * before its block's ticket by its fence and the barrier. */
  __shared__ bool last;
  __threadfence();
  __syncthreads();
  if (threadIdx.x == 0) last = atomicAdd(p.done, 1u) == gridDim.x - 1;
  __syncthreads();
  if (!last || threadIdx.x != 0) return;
  __threadfence();
  p.result[0] = atomicExch(&p.status[0], ~0ull);
  p.result[1] = atomicExch(&p.status[1], ~0ull);
  *p.done = 0; /* ready for the next launch on the stream */
}

/* ps_cuda_launch_take_words: thread i takes word i. */
__global__ void __launch_bounds__(32) take_words(unsigned long long *src, unsigned long long *dst, uint32_t words) {
  const uint32_t i = threadIdx.x;
  if (i < words) {
    dst[i] = src[i];
    src[i] = 0;
  }
}

}  // namespace

extern "C" cudaError_t ps_cuda_launch_take_words(unsigned long long *src, unsigned long long *dst, uint32_t words,
                                                 cudaStream_t stream) {
  if (!src || !dst || words == 0 || words > 32) return cudaErrorInvalidValue;
  take_words<<<1, 32, 0, stream>>>(src, dst, words);
  return cudaGetLastError();
}

extern "C" cudaError_t ps_cuda_row_ids_workspace(uint64_t rows, size_t *bytes, uint32_t *tiles) {
  *bytes = ids_workspace_bytes(rows);
  *tiles = ps_sel_ids_tiles(rows);
  return cudaSuccess;
}

extern "C" cudaError_t ps_cuda_launch_row_ids(const ps_cuda_row_ids_params *p, void *workspace, size_t workspace_bytes,
                                              cudaStream_t stream) {
  if (p->rows == 0 || p->rows > ((uint64_t)1 << 31) || !p->total) return cudaErrorInvalidValue;
  const uint32_t tiles = ps_sel_ids_tiles(p->rows);
  if (!p->out) { /* count only */
    if (!p->result || !p->done) return cudaErrorInvalidValue;
    count_ids<<<tiles, kBlock, 0, stream>>>(*p);
    return cudaGetLastError();
  }
  if (p->index_bytes != 4 && p->index_bytes != 8) return cudaErrorInvalidValue;
  IdsTileState tile_state;
  unsigned int *ticket = NULL;
  cudaError_t err = ids_setup(tiles, p->state_ready, workspace, workspace_bytes, &tile_state, &ticket, stream);
  if (err != cudaSuccess) return err;
  if (p->index_bytes == 4)
    return p->out_aligned ? launch_write_ids<4, true>(*p, ticket, tile_state, tiles, stream)
                          : launch_write_ids<4, false>(*p, ticket, tile_state, tiles, stream);
  return p->out_aligned ? launch_write_ids<8, true>(*p, ticket, tile_state, tiles, stream)
                        : launch_write_ids<8, false>(*p, ticket, tile_state, tiles, stream);
}

extern "C" cudaError_t ps_cuda_reduce_workspace(const ps_prog_col *col, uint64_t rows, uint32_t max_blocks,
                                                size_t *bytes) {
  *bytes = align_up((size_t)reduce_blocks(rows, *col, max_blocks) * sizeof(ps_sel_partial));
  return cudaSuccess;
}

extern "C" cudaError_t ps_cuda_launch_reduce(const ps_cuda_reduce_params *p, uint32_t max_blocks, void *workspace,
                                             size_t workspace_bytes, cudaStream_t stream) {
  const uint32_t blocks = reduce_blocks(p->rows, p->col, max_blocks);
  if (blocks == 0 || workspace_bytes < (size_t)blocks * sizeof(ps_sel_partial)) return cudaErrorInvalidValue;
  ps_sel_partial *partials = static_cast<ps_sel_partial *>(workspace);
  if (reduce_by_tiles(p->col)) {
    if (!p->done) return cudaErrorInvalidValue;
    reduce_tiles<<<blocks, kBlock, 0, stream>>>(*p, partials);
    return cudaGetLastError();
  }
  reduce_rows<<<blocks, kBlock, 0, stream>>>(*p, partials);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  reduce_partials<<<1, kBlock, 0, stream>>>(partials, blocks, p->result);
  return cudaGetLastError();
}

extern "C" cudaError_t ps_cuda_launch_gather(const ps_cuda_gather_params *p, uint32_t max_blocks, cudaStream_t stream) {
  const uint64_t want = (p->count + kBlock * kGatherPer - 1) / (kBlock * kGatherPer);
  const uint64_t cap = max_blocks ? max_blocks : 1;
  const uint32_t blocks = (uint32_t)(want < cap ? want : cap);
  /* the results come from the last block: at least one must run */
  if (blocks == 0 || !p->status || !p->result || !p->done) return cudaErrorInvalidValue;
  gather_rows<<<blocks, kBlock, 0, stream>>>(*p);
  return cudaGetLastError();
}
