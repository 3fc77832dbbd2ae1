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
#include <cub/agent/single_pass_scan_operators.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>
#include <cuda/std/functional>

#include "ps_cuda_kernels.h"
#include "ps_cuda_select.cuh"

static_assert(PS_CUDA_SELECT_BLOCK % 32 == 0, "a block is whole warps");
static_assert(sizeof(ps_sel_partial) == PS_CUDA_REDUCE_RESULT_WORDS * sizeof(uint64_t),
              "the reduce result is one partial");

namespace {

constexpr int kBlock = PS_CUDA_SELECT_BLOCK;
constexpr unsigned kFullWarp = 0xffffffffu;
constexpr size_t kAlign = 256; /* workspace pieces start on this */

size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

/* ---- row ids ------------------------------------------------------------------ */

/* One pass (ps_cuda_select.cuh describes the tile): the bitmap is read once
 * and the ids are written once, coalesced. A block counts its tile's set bits
 * and gets the ids of the tiles before it from CUB's single-pass scan
 * machinery (cub::TilePrefixCallbackOp over a cub::ScanTileState: the
 * decoupled look-back of Merrill & Garland that cub::DeviceScan runs), so
 * there is no separate count pass, scan launch or second read of the bitmap.
 * The CUB pieces are used as cub's AgentScan / DispatchScan use them (CUDA
 * 13's cub/agent/agent_scan.cuh, cub/device/dispatch/dispatch_scan.cuh): the
 * status array sized by AllocationSize and set up by Init at the start of a
 * 256-byte-aligned buffer, InitializeStatus in a grid of 128-thread blocks
 * before the scan kernel, tile 0 publishing its count by SetInclusive, every
 * other tile calling the callback with its count from its first warp.
 * Unlike DeviceScan, the tile index is a ticket taken by the running block
 * (not blockIdx), so a tile only ever waits on tiles whose blocks are already
 * running, whatever the order in which the hardware starts blocks.
 *
 * Expected on an H200 (2^28 rows, uint32 ids; not yet measured): 2048 tiles,
 * 256-thread blocks with 16.5 KB of staging each. At 1% the kernel reads the
 * 33.5 MB bitmap and writes 10.7 MB: ~15 us (about 2.6 waves of latency-bound
 * blocks; with >= 500 tiles CUB's look-back naps ~450 ns before its first
 * window and ~350 ns per re-poll), plus the status init kernel and the 4-byte read
 * back: ~0.02-0.03 ms after the filter. At 50% it writes 537 MB of ids in
 * 16-byte stores: ~0.14-0.15 ms. With the filter at 0.194 ms
 * (ps_filter_device, not this file) the bench's ids_1pct / ids_50pct should
 * read ~0.22 ms / ~0.35 ms (were 0.434 / 0.694 with count pass + CUB
 * DeviceScan + write pass). */

constexpr uint32_t kIdsWarps = PS_SEL_IDS_WARPS;
constexpr uint32_t kIdsRounds = PS_SEL_IDS_ROUNDS;
static_assert(kIdsWarps * 32 == (uint32_t)kBlock, "a row id block is kIdsWarps warps");
static_assert((uint64_t)PS_SEL_IDS_TILE_ROWS * ((((uint64_t)1 << 31) + PS_SEL_IDS_TILE_ROWS - 1) /
                                                 PS_SEL_IDS_TILE_ROWS) <= ((uint64_t)1 << 32),
              "rows of a 2^31-row chunk, tile by tile, fit 32 bits");

/* Counts, offsets and totals of a chunk (<= 2^31 rows) fit 32 bits, so the
 * tile status is CUB's single-word one (flag and value in one 8-byte word).
 * The operator is cub::DeviceScan::ExclusiveSum's; the look-back's delay is
 * TilePrefixCallbackOp's default for a primitive type. */
using IdsSum = ::cuda::std::plus<>;
using IdsTileState = cub::ScanTileState<uint32_t>;
using IdsPrefixOp = cub::TilePrefixCallbackOp<uint32_t, IdsSum, IdsTileState>;
using IdsWarpReduce = cub::WarpReduce<uint32_t>;
using IdsWarpScan = cub::WarpScan<uint32_t>;
using IdsBlockReduce = cub::BlockReduce<uint32_t, kBlock>;
static_assert(IdsTileState::TILE_STATUS_PADDING == 32, "the look-back reads up to 32 tiles before tile 0");

/* DispatchScan's INIT_KERNEL_THREADS: block 0 must have the 32 threads that
 * write the padding in front of tile 0. */
constexpr int kIdsInitThreads = 128;

/* The row id workspace: the tile status array (CUB's AllocationSize bytes)
 * from its start, then the ticket counter at the next 256-byte boundary;
 * init_ids sets both before each writing launch. */
size_t ids_status_bytes(uint32_t tiles) {
  size_t bytes = 0;
  (void)IdsTileState::AllocationSize((int)tiles, bytes); /* always cudaSuccess */
  return bytes;
}
size_t ids_workspace_bytes(uint64_t rows) { return align_up(ids_status_bytes(ps_sel_ids_tiles(rows))) + kAlign; }

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

/* DeviceScanInitKernel plus the ticket: marks every tile's status not yet
 * set (and the padding before tile 0 out of bounds), and zeroes the ticket.
 * Grid: ceil(tiles / kIdsInitThreads) blocks of kIdsInitThreads. */
__global__ void __launch_bounds__(kIdsInitThreads) init_ids(IdsTileState tile_state, int tiles, unsigned int *ticket) {
  tile_state.InitializeStatus(tiles);
  if (blockIdx.x == 0 && threadIdx.x == 0) *ticket = 0;
}

/* Size: the set bits of a tile, added to *p.total (zeroed before). */
__global__ void __launch_bounds__(kBlock) count_ids(const __grid_constant__ ps_cuda_row_ids_params p) {
  __shared__ typename IdsBlockReduce::TempStorage tmp;
  const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
  const uint32_t total = IdsBlockReduce(tmp).Sum(ids_lane_count(p, blockIdx.x, warp, lane));
  if (threadIdx.x == 0 && total) atomicAdd(p.total, total);
}

/* Size and retrieve in one pass. The tile is the block's ticket (not
 * blockIdx), which is what makes the look-back safe. The block's first warp
 * runs CUB's look-back as BlockScan would run the prefix callback (all 32
 * lanes, the tile's count in each, lane 0's result used); tile 0 publishes
 * its count as its inclusive prefix, as AgentScan does. The last tile writes
 * the total. */
template <uint32_t kBytes, bool kAligned>
__global__ void __launch_bounds__(kBlock)
    write_ids(const __grid_constant__ ps_cuda_row_ids_params p, unsigned int *ticket, IdsTileState tile_state,
              uint32_t tiles) {
  __shared__ typename IdsPrefixOp::TempStorage prefix_tmp;
  __shared__ typename IdsWarpReduce::TempStorage reduce_tmp[kIdsWarps];
  __shared__ typename IdsWarpScan::TempStorage scan_tmp[kIdsWarps];
  __shared__ uint32_t s_tile, s_before;
  __shared__ uint32_t warp_count[kIdsWarps];
  __shared__ __align__(16) uint16_t stage[kIdsWarps][PS_SEL_IDS_STAGE_SLOTS];
  const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
  if (threadIdx.x == 0) s_tile = atomicAdd(ticket, 1u);
  __syncthreads();
  const uint32_t tile = s_tile;
  const bool whole = p.bitmap_aligned && ps_sel_ids_full_tile(p.rows, tile);

  /* The tile's count and each warp's offset in it: warp sums, then the 8
   * warp counts from shared memory. (cub::BlockScan over the threads' counts
   * gives the same but costs 48 registers in write_ids<4, true> instead of
   * 40, i.e. 5 blocks per SM instead of 6.) */
  const uint32_t wsum = IdsWarpReduce(reduce_tmp[warp]).Sum(ids_lane_count(p, tile, warp, lane));
  if (lane == 0) warp_count[warp] = wsum;
  __syncthreads();
  uint32_t warp_before = 0, count = 0;
#pragma unroll
  for (uint32_t i = 0; i < kIdsWarps; ++i) {
    const uint32_t c = warp_count[i];
    warp_before += i < warp ? c : 0u;
    count += c;
  }
  if (warp == 0) {
    uint32_t before = 0;
    if (tile == 0) {
      if (lane == 0) tile_state.SetInclusive(0, count);
    } else {
      IdsPrefixOp prefix_op(tile_state, prefix_tmp, IdsSum(), (int)tile);
      before = prefix_op(count); /* valid in lane 0 */
    }
    if (lane == 0) {
      s_before = before;
      if (tile == tiles - 1) *p.total = before + count;
    }
  }
  __syncthreads();

  uint32_t at = s_before + warp_before; /* ids of the chunk before this warp's round */
  uint16_t *mine_stage = stage[warp];
  const uint64_t out_elem = (uint64_t)reinterpret_cast<uintptr_t>(p.out) / kBytes;
  /* Next round's word loaded one round ahead, so its latency overlaps this
   * round's scan and stores. */
  uint32_t next = ids_word(p, tile, warp, 0, lane, whole);
#pragma unroll 1
  for (uint32_t r = 0; r < kIdsRounds; ++r) {
    const uint32_t word = next;
    if (r + 1 < kIdsRounds) next = ids_word(p, tile, warp, r + 1, lane, whole);
    const uint32_t c = __popc(word);
    uint32_t incl, n;
    IdsWarpScan(scan_tmp[warp]).InclusiveSum(c, incl, n);
    if (n == 0) continue; /* uniform across the warp */
    const uint32_t lead = kAligned ? ps_sel_ids_lead(out_elem, at, kBytes) : 0u;
    ps_sel_ids_extract(word, lane, mine_stage, lead + incl - c);
    __syncwarp();
    const uint32_t row0 = ps_sel_ids_round_row(tile, warp, r);
    if (kAligned) {
      const uint32_t groups = ps_sel_ids_groups(lead, n, kBytes);
      for (uint32_t k = lane; k < groups; k += 32)
        ps_sel_ids_put_group(p.out, kBytes, p.id_base, row0, mine_stage, lead, n, at, k);
    } else {
      for (uint32_t i = lane; i < n; i += 32)
        ps_sel_store(p.out + (uint64_t)(at + i) * kBytes, kBytes, p.id_base + row0 + mine_stage[i], false);
    }
    __syncwarp(); /* the next round reuses the staging area */
    at += n;
  }
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
  /* The status array where DispatchScan puts it: at the start of a
   * 256-byte-aligned allocation of AllocationSize bytes. */
  const size_t status_bytes = ids_status_bytes(tiles);
  const size_t ticket_at = align_up(status_bytes);
  if (!workspace || reinterpret_cast<uintptr_t>(workspace) % kAlign != 0 ||
      workspace_bytes < ticket_at + sizeof(unsigned int))
    return cudaErrorInvalidValue;
  IdsTileState tile_state;
  cudaError_t err = tile_state.Init((int)tiles, workspace, status_bytes);
  if (err != cudaSuccess) return err;
  unsigned int *ticket = reinterpret_cast<unsigned int *>(static_cast<uint8_t *>(workspace) + ticket_at);
  const uint32_t init_blocks = (tiles + kIdsInitThreads - 1) / kIdsInitThreads;
  init_ids<<<init_blocks, kIdsInitThreads, 0, stream>>>(tile_state, (int)tiles, ticket);
  err = cudaGetLastError();
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
