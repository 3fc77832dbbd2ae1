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

/* Size: the set bits of a tile, added to *p.total (zeroed before). */
__global__ void __launch_bounds__(kBlock) count_ids(const __grid_constant__ ps_cuda_row_ids_params p) {
  __shared__ typename IdsBlockReduce::TempStorage tmp;
  const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
  const uint32_t total = IdsBlockReduce(tmp).Sum(ids_lane_count(p, blockIdx.x, warp, lane));
  if (threadIdx.x == 0 && total) atomicAdd(p.total, total);
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
  ids_tile<kBytes, kAligned>(p, ticket, tile_state, tiles, src);
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
    ps_sel_partial_code(acc, p.col, row,
                        ps_sel_code_at(p.data, p.col.data_bytes, p.col.width, row, p.data_aligned != 0));
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
    result[0] = total.count, result[1] = total.min, result[2] = total.max;
    result[3] = total.sum_lo, result[4] = total.sum_hi, result[5] = total.bad_row;
  }
}

uint32_t reduce_blocks(uint64_t rows, uint32_t max_blocks) {
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

/* One thread per output, grid-stride by warps (the loop condition is the
 * warp's, so all lanes reach the ballot). Errors lower the status words to
 * the least offending output, so the host reports what a serial loop meets
 * first. */
__global__ void __launch_bounds__(kBlock) gather_rows(const __grid_constant__ ps_cuda_gather_params p) {
  const uint32_t lane = threadIdx.x & 31u;
  const uint64_t stride = (uint64_t)gridDim.x * kBlock;
  for (uint64_t base = (uint64_t)blockIdx.x * kBlock + (threadIdx.x & ~31u); base < p.count; base += stride) {
    const uint64_t i = base + lane;
    bool valid = false;
    if (i < p.count) {
      uint64_t bits = 0;
      const uint32_t err = ps_sel_gather_one(p, i, &valid, &bits);
      if (err == 0)
        ps_sel_store(p.values + i * p.value_bytes, p.value_bytes, bits, p.values_aligned != 0);
      else
        atomicMin(&p.status[err - 1], (unsigned long long)i);
    }
    const uint32_t word = __ballot_sync(kFullWarp, valid);
    if (p.validity_out) store_validity(p, base >> 5, word, lane);
  }
}

}  // namespace

extern "C" cudaError_t ps_cuda_row_ids_workspace(uint64_t rows, size_t *bytes) {
  *bytes = ids_workspace_bytes(rows);
  return cudaSuccess;
}

extern "C" cudaError_t ps_cuda_launch_row_ids(const ps_cuda_row_ids_params *p, void *workspace, size_t workspace_bytes,
                                              cudaStream_t stream) {
  if (p->rows == 0 || p->rows > ((uint64_t)1 << 31) || !p->total) return cudaErrorInvalidValue;
  const uint32_t tiles = ps_sel_ids_tiles(p->rows);
  if (!p->out) { /* count only */
    cudaError_t err = cudaMemsetAsync(p->total, 0, sizeof *p->total, stream);
    if (err != cudaSuccess) return err;
    count_ids<<<tiles, kBlock, 0, stream>>>(*p);
    return cudaGetLastError();
  }
  if (p->index_bytes != 4 && p->index_bytes != 8) return cudaErrorInvalidValue;
  IdsTileState tile_state;
  unsigned int *ticket = NULL;
  cudaError_t err = ids_setup(tiles, workspace, workspace_bytes, &tile_state, &ticket, stream);
  if (err != cudaSuccess) return err;
  if (p->index_bytes == 4)
    return p->out_aligned ? launch_write_ids<4, true>(*p, ticket, tile_state, tiles, stream)
                          : launch_write_ids<4, false>(*p, ticket, tile_state, tiles, stream);
  return p->out_aligned ? launch_write_ids<8, true>(*p, ticket, tile_state, tiles, stream)
                        : launch_write_ids<8, false>(*p, ticket, tile_state, tiles, stream);
}

extern "C" cudaError_t ps_cuda_reduce_workspace(uint64_t rows, uint32_t max_blocks, size_t *bytes) {
  *bytes = align_up((size_t)reduce_blocks(rows, max_blocks) * sizeof(ps_sel_partial));
  return cudaSuccess;
}

extern "C" cudaError_t ps_cuda_launch_reduce(const ps_cuda_reduce_params *p, uint32_t max_blocks, void *workspace,
                                             size_t workspace_bytes, cudaStream_t stream) {
  const uint32_t blocks = reduce_blocks(p->rows, max_blocks);
  if (blocks == 0 || workspace_bytes < (size_t)blocks * sizeof(ps_sel_partial)) return cudaErrorInvalidValue;
  ps_sel_partial *partials = static_cast<ps_sel_partial *>(workspace);
  reduce_rows<<<blocks, kBlock, 0, stream>>>(*p, partials);
  cudaError_t err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  reduce_partials<<<1, kBlock, 0, stream>>>(partials, blocks, p->result);
  return cudaGetLastError();
}

extern "C" cudaError_t ps_cuda_launch_gather(const ps_cuda_gather_params *p, uint32_t max_blocks, cudaStream_t stream) {
  const uint64_t want = (p->count + kBlock - 1) / kBlock;
  const uint64_t cap = max_blocks ? max_blocks : 1;
  const uint32_t blocks = (uint32_t)(want < cap ? want : cap);
  if (blocks == 0) return cudaSuccess;
  gather_rows<<<blocks, kBlock, 0, stream>>>(*p);
  return cudaGetLastError();
}
