/*
 * What comes after the filter (core/backend.h): row ids of a selection, the
 * code-space reduction of a column, and late materialization. The per-element
 * logic is in ps_cuda_select.cuh; this file holds the block/warp structure and
 * the extern "C" launchers.
 *
 * Row ids use size-then-retrieve: every block popcounts a tile of bitmap
 * words, CUB scans the tile counts, and every block writes its tile's ids at
 * its offset. No per-row atomics and no over-allocation.
 */
#include <cub/block/block_reduce.cuh>
#include <cub/block/block_scan.cuh>
#include <cub/device/device_reduce.cuh>
#include <cub/device/device_scan.cuh>

#include "ps_cuda_kernels.h"
#include "ps_cuda_select.cuh"

static_assert(PS_CUDA_SELECT_BLOCK % 32 == 0, "a block is whole warps");
static_assert(sizeof(ps_sel_partial) == PS_CUDA_REDUCE_RESULT_WORDS * sizeof(uint64_t),
              "the reduce result is one partial");

namespace {

constexpr int kBlock = PS_CUDA_SELECT_BLOCK;
constexpr int kItems = PS_CUDA_IDS_WORDS_PER_THREAD;
constexpr int kTile = kBlock * kItems; /* bitmap words per row-id block */
constexpr unsigned kFullWarp = 0xffffffffu;
constexpr size_t kAlign = 256; /* workspace pieces start on this */

size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

/* CUB's two-call temporary-storage protocol, in one place. call(temp, bytes)
 * is a CUB device-wide algorithm. With temp == nullptr only the size query
 * runs and *bytes receives the size; otherwise *bytes is what temp holds, and
 * the algorithm runs if that is enough. */
template <typename Call>
cudaError_t cub_call(Call call, void *temp, size_t *bytes) {
  size_t need = 0;
  cudaError_t err = call(nullptr, need);
  if (err != cudaSuccess) return err;
  if (temp == nullptr) {
    *bytes = need;
    return cudaSuccess;
  }
  if (need > *bytes) return cudaErrorInvalidValue;
  return call(temp, need);
}

/* ---- row ids ------------------------------------------------------------------ */

uint32_t id_tiles(uint64_t rows) {
  const uint64_t words = (rows + 31) / 32;
  return (uint32_t)((words + kTile - 1) / kTile);
}

/* The row id workspace: tile counts, their exclusive scan, CUB's storage. */
struct ids_layout {
  uint32_t *counts, *offsets;
  void *temp;
  size_t temp_bytes, total_bytes;
};

/* Lays the workspace out at base (nullptr: only sizes are computed). */
cudaError_t ids_layout_of(uint64_t rows, void *base, size_t bytes, cudaStream_t stream, ids_layout *l) {
  const uint32_t tiles = id_tiles(rows);
  const size_t list = align_up((size_t)tiles * sizeof(uint32_t));
  uint8_t *b = static_cast<uint8_t *>(base);
  l->counts = reinterpret_cast<uint32_t *>(b);
  l->offsets = reinterpret_cast<uint32_t *>(b ? b + list : nullptr);
  l->temp = b ? b + 2 * list : nullptr;
  /* One temporary storage serves both algorithms: the larger of the two. */
  size_t scan = 0, sum = 0;
  cudaError_t err = cub_call(
      [&](void *t, size_t &n) {
        return cub::DeviceScan::ExclusiveSum(t, n, l->counts, l->offsets, (int)tiles, stream);
      },
      nullptr, &scan);
  if (err == cudaSuccess)
    err = cub_call(
        [&](void *t, size_t &n) { return cub::DeviceReduce::Sum(t, n, l->counts, l->offsets, (int)tiles, stream); },
        nullptr, &sum);
  l->temp_bytes = align_up(scan > sum ? scan : sum);
  l->total_bytes = 2 * list + l->temp_bytes;
  if (err == cudaSuccess && base && bytes < l->total_bytes) err = cudaErrorInvalidValue;
  return err;
}

/* Thread t's share of tile words, striped so that the loads coalesce. */
__device__ __forceinline__ uint32_t tile_word(const ps_cuda_row_ids_params &p, uint64_t tile, int k) {
  return ps_sel_bitmap_word(p.bitmap, p.rows, tile + (uint64_t)k * kBlock + threadIdx.x, p.bitmap_aligned != 0);
}

/* Size: the set bits of each tile. Bits past rows are cleared by the load. */
__global__ void __launch_bounds__(kBlock)
    count_tiles(const __grid_constant__ ps_cuda_row_ids_params p, uint32_t *counts) {
  const uint64_t tile = (uint64_t)blockIdx.x * kTile;
  uint32_t n = 0;
#pragma unroll
  for (int k = 0; k < kItems; ++k) n += __popc(tile_word(p, tile, k));
  typedef cub::BlockReduce<uint32_t, kBlock> Reduce;
  __shared__ typename Reduce::TempStorage tmp;
  const uint32_t total = Reduce(tmp).Sum(n);
  if (threadIdx.x == 0) counts[blockIdx.x] = total;
}

/* Retrieve: the block recomputes its words' popcounts, scans them in word
 * order (thread t holds words kItems*t ..), and every warp writes the ids of
 * one word at a time, lane j for bit j: selected rows of a word land on
 * consecutive slots, so the stores coalesce. The last block also writes the
 * total. */
__global__ void __launch_bounds__(kBlock)
    write_tiles(const __grid_constant__ ps_cuda_row_ids_params p, const uint32_t *offsets, const uint32_t *counts) {
  typedef cub::BlockScan<uint32_t, kBlock> Scan;
  __shared__ uint32_t words[kTile];
  __shared__ uint32_t word_offset[kTile];
  __shared__ typename Scan::TempStorage scan;
  const uint64_t tile = (uint64_t)blockIdx.x * kTile;
#pragma unroll
  for (int k = 0; k < kItems; ++k) words[k * kBlock + threadIdx.x] = tile_word(p, tile, k);
  __syncthreads();
  uint32_t c[kItems], o[kItems];
#pragma unroll
  for (int k = 0; k < kItems; ++k) c[k] = __popc(words[threadIdx.x * kItems + k]);
  Scan(scan).ExclusiveSum(c, o);
#pragma unroll
  for (int k = 0; k < kItems; ++k) word_offset[threadIdx.x * kItems + k] = o[k];
  __syncthreads();

  const uint64_t base = offsets[blockIdx.x];
  const uint32_t lane = threadIdx.x & 31u;
  const uint32_t below = (1u << lane) - 1u; /* lane 31: 0x7fffffff */
  for (int w = (int)(threadIdx.x >> 5); w < kTile; w += kBlock / 32) {
    const uint32_t word = words[w];
    if (!((word >> lane) & 1u)) continue;
    const uint64_t k = base + word_offset[w] + (uint32_t)__popc(word & below);
    const uint64_t id = p.id_base + (tile + (uint64_t)w) * 32 + lane;
    ps_sel_store(p.out + k * p.index_bytes, p.index_bytes, id, p.out_aligned != 0);
  }
  if (blockIdx.x == gridDim.x - 1 && threadIdx.x == 0) *p.total = offsets[blockIdx.x] + counts[blockIdx.x];
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
  ids_layout l;
  const cudaError_t err = ids_layout_of(rows, nullptr, 0, 0, &l);
  *bytes = err == cudaSuccess ? l.total_bytes : 0;
  return err;
}

extern "C" cudaError_t ps_cuda_launch_row_ids(const ps_cuda_row_ids_params *p, void *workspace, size_t workspace_bytes,
                                              cudaStream_t stream) {
  ids_layout l;
  cudaError_t err = ids_layout_of(p->rows, workspace, workspace_bytes, stream, &l);
  if (err != cudaSuccess) return err;
  const uint32_t tiles = id_tiles(p->rows);
  count_tiles<<<tiles, kBlock, 0, stream>>>(*p, l.counts);
  err = cudaGetLastError();
  if (err != cudaSuccess) return err;
  size_t temp_bytes = l.temp_bytes;
  if (!p->out) /* count only: the sum of the tile counts */
    return cub_call(
        [&](void *t, size_t &n) { return cub::DeviceReduce::Sum(t, n, l.counts, p->total, (int)tiles, stream); },
        l.temp, &temp_bytes);
  err = cub_call(
      [&](void *t, size_t &n) { return cub::DeviceScan::ExclusiveSum(t, n, l.counts, l.offsets, (int)tiles, stream); },
      l.temp, &temp_bytes);
  if (err != cudaSuccess) return err;
  write_tiles<<<tiles, kBlock, 0, stream>>>(*p, l.offsets, l.counts);
  return cudaGetLastError();
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
