/*
 * Row ids in one pass, the block structure shared by select.cu (the ids of a
 * selection bitmap) and ids_fused*.cu (the ids of a one-range filter straight
 * from the packed codes, no bitmap in between): a block takes a tile of
 * result words by ticket, counts its set bits, gets the ids of the tiles
 * before it from CUB's single-pass scan (decoupled look-back), and writes its
 * ids there. Where the tile's words come from is the Source's business:
 *   uint32_t lane_count(tile, warp, lane): the set bits of the words lane
 *     `lane` of warp `warp` holds in the tile (PS_SEL_IDS_ROUNDS of them);
 *   uint32_t word(tile, warp, round, lane): one of those words again, in the
 *     writing phase;
 *   uint16_t *stage(warp): the warp's staging area of the writing phase
 *     (PS_SEL_IDS_STAGE_SLOTS slots, 16-byte aligned, shared memory; free
 *     for the Source's own use before the block's first barrier).
 */
#ifndef PS_CUDA_IDS_CUH
#define PS_CUDA_IDS_CUH

#include <cub/agent/single_pass_scan_operators.cuh>
#include <cub/block/block_reduce.cuh>
#include <cub/warp/warp_reduce.cuh>
#include <cub/warp/warp_scan.cuh>

#include "ps_cuda_kernels.h"
#include "ps_cuda_select.cuh"

static_assert(PS_CUDA_SELECT_BLOCK % 32 == 0, "a block is whole warps");

namespace {

constexpr int kBlock = PS_CUDA_SELECT_BLOCK;
constexpr unsigned kFullWarp = 0xffffffffu;
constexpr size_t kAlign = 256; /* workspace pieces start on this */

inline size_t align_up(size_t n) { return (n + kAlign - 1) / kAlign * kAlign; }

/* ---- row ids ------------------------------------------------------------------ */

/* One pass (ps_cuda_select.cuh describes the tile): the bitmap is read once
 * and the ids are written once, coalesced. A block counts its tile's set bits
 * and gets the ids of the tiles before it from CUB's single-pass scan
 * machinery (a cub::ScanTileState and the decoupled look-back of Merrill &
 * Garland that cub::DeviceScan runs, block-wide here: ids_block_prefix), so
 * there is no separate count pass, scan launch or second read of the bitmap.
 * The CUB pieces are used as cub's AgentScan / DispatchScan use them (CUDA
 * 13's cub/agent/agent_scan.cuh, cub/device/dispatch/dispatch_scan.cuh): the
 * status array sized by AllocationSize and set up by Init at the start of a
 * 256-byte-aligned buffer, InitializeStatus in a grid of 128-thread blocks
 * before the scan kernel, tile 0 publishing its count by SetInclusive, every
 * other tile its count by SetPartial, then its inclusive prefix.
 * Unlike DeviceScan, the tile index is a ticket taken by the running block
 * (not blockIdx), so a tile only ever waits on tiles whose blocks are already
 * running, whatever the order in which the hardware starts blocks.
 * One pass replaced a count pass, CUB's DeviceScan and a write pass; the
 * bench's ids_1pct / ids_50pct measure it (docs/benchmarks.md). */

constexpr uint32_t kIdsWarps = PS_SEL_IDS_WARPS;
constexpr uint32_t kIdsRounds = PS_SEL_IDS_ROUNDS;
static_assert(kIdsWarps * 32 == (uint32_t)kBlock, "a row id block is kIdsWarps warps");
static_assert((uint64_t)PS_SEL_IDS_TILE_ROWS *
                      ((((uint64_t)1 << 31) + PS_SEL_IDS_TILE_ROWS - 1) / PS_SEL_IDS_TILE_ROWS) <=
                  ((uint64_t)1 << 32),
              "rows of a 2^31-row chunk, tile by tile, fit 32 bits");

/* Counts, offsets and totals of a chunk (<= 2^31 rows) fit 32 bits, so the
 * tile status is CUB's single-word one (flag and value in one 8-byte word).
 * The look-back's wait is ScanTileState::WaitForValid's, with its default
 * delay for a primitive type. */
using IdsTileState = cub::ScanTileState<uint32_t>;
using IdsWarpReduce = cub::WarpReduce<uint32_t>;
using IdsWarpScan = cub::WarpScan<uint32_t>;
using IdsBlockReduce = cub::BlockReduce<uint32_t, kBlock>;
static_assert(IdsTileState::TILE_STATUS_PADDING >= 1, "the look-back reads the padding entry before tile 0");

/* DispatchScan's INIT_KERNEL_THREADS: block 0 must have the 32 threads that
 * write the padding in front of tile 0. */
constexpr int kIdsInitThreads = 128;

/* The row id state: the ticket counter at its start, the tile status array
 * (CUB's AllocationSize bytes) from the next 256-byte boundary, both at the
 * same places whatever the tile count. Between launches it is at rest: the
 * ticket 0 and the statuses of the tiles the caller says are ready unset
 * (init_ids sets it so; the last block of each writing launch puts back
 * what the launch used, ids_reset_state), so a launch over no more tiles
 * than are ready needs no init launch. */
inline size_t ids_status_bytes(uint32_t tiles) {
  size_t bytes = 0;
  (void)IdsTileState::AllocationSize((int)tiles, bytes); /* always cudaSuccess */
  return bytes;
}
inline size_t ids_workspace_bytes(uint64_t rows) { return kAlign + ids_status_bytes(ps_sel_ids_tiles(rows)); }

/* DeviceScanInitKernel plus the ticket: marks every tile's status not yet
 * set (and the padding before tile 0 out of bounds), and zeroes the ticket.
 * Grid: ceil(tiles / kIdsInitThreads) blocks of kIdsInitThreads. Runs only
 * when a launch needs more tiles than are ready (first use, growth). */
__global__ void __launch_bounds__(kIdsInitThreads) init_ids(IdsTileState tile_state, int tiles, unsigned int *ticket) {
  tile_state.InitializeStatus(tiles);
  if (blockIdx.x == 0 && threadIdx.x == 0) *ticket = 0;
}

/* The state back at rest after a writing launch over `tiles` tiles: their
 * statuses unset (the word InitializeStatus writes) and the ticket 0. Run by
 * the whole block that drew the launch's last ticket: every other block has
 * drawn its last one, so all tiles are finished and nothing reads the state
 * any more (each block's statuses are written before its fenced draws, and
 * here every thread fences after this block's draw: the stores below come
 * after them). Called by the kernels after ids_tile (inside its loop it cost
 * the fused kernels registers: spills). */
__device__ __forceinline__ void ids_reset_state(IdsTileState &tile_state, uint32_t tiles, unsigned int *ticket) {
  __threadfence();
  typename IdsTileState::TxnWord val = typename IdsTileState::TxnWord();
  reinterpret_cast<typename IdsTileState::TileDescriptor *>(&val)->status =
      typename IdsTileState::StatusWord(cub::SCAN_TILE_INVALID);
  for (uint32_t i = threadIdx.x; i < tiles; i += blockDim.x)
    tile_state.d_tile_descriptors[IdsTileState::TILE_STATUS_PADDING + i] = val;
  if (threadIdx.x == 0) *ticket = 0;
}

/* The look-back of ids_block_prefix: per warp, the sum of its window and
 * whether the window holds an inclusive prefix; the running prefix. */
struct ids_look_back {
  uint32_t sum[kIdsWarps];
  uint32_t inclusive[kIdsWarps];
  uint32_t prefix, found;
};

/* The ids of the tiles before `tile` (the exclusive prefix of the tile
 * counts), by the decoupled look-back of cub::TilePrefixCallbackOp over the
 * same cub::ScanTileState, but block-wide: each round every thread reads one
 * predecessor's status (thread t: tile - 1 - t, kBlock predecessors per L2
 * round trip instead of a warp's 32), waiting (ScanTileState::WaitForValid)
 * until none of its warp's is unset, and the prefix adds the windows'
 * values from the nearest predecessor up to the nearest inclusive prefix.
 * With the ~800 tiles of a 120M-row chunk in flight at once, a warp-wide
 * window walked back ~10 L2 round trips for the last tiles; here it is at
 * most ceil(tiles / kBlock). The tile publishes its count first (tile 0 its
 * inclusive prefix) and its inclusive prefix after. Predecessors hold
 * earlier tickets, so their blocks are running or done: no wait can block.
 * Every thread calls it; the result is the block's. */
__device__ __forceinline__ uint32_t ids_block_prefix(IdsTileState &tile_state, int tile, uint32_t count,
                                                     ids_look_back &look) {
  using StatusWord = typename IdsTileState::StatusWord;
  const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
  if (tile == 0) {
    if (threadIdx.x == 0) tile_state.SetInclusive(0, count);
    return 0;
  }
  if (threadIdx.x == 0) {
    tile_state.SetPartial(tile, count);
    look.prefix = 0;
  }
  for (int end = tile;; end -= kBlock) { /* this round: predecessors [end - kBlock, end) */
    const int pred = end - 1 - (int)threadIdx.x;
    StatusWord status;
    uint32_t value;
    /* below tile 0: a padding entry (out of bounds, never unset), counted as 0 */
    tile_state.WaitForValid(pred < 0 ? -1 : pred, status, value);
    if (pred < 0) value = 0;
    const bool inclusive = pred >= 0 && status == StatusWord(cub::SCAN_TILE_INCLUSIVE);
    const uint32_t incl_lanes = __ballot_sync(kFullWarp, inclusive);
    /* lanes up to the nearest inclusive one (the lowest lane: the nearest tile) */
    const uint32_t upto = incl_lanes ? (uint32_t)__ffs((int)incl_lanes) - 1u : 31u;
    const uint32_t sum = __reduce_add_sync(kFullWarp, lane <= upto ? value : 0u);
    if (lane == 0) look.sum[warp] = sum, look.inclusive[warp] = incl_lanes != 0;
    __syncthreads();
    if (threadIdx.x == 0) {
      uint32_t prefix = look.prefix, found = 0;
      for (uint32_t w = 0; w < kIdsWarps && !found; ++w) prefix += look.sum[w], found = look.inclusive[w];
      look.prefix = prefix, look.found = found;
    }
    __syncthreads();
    if (look.found) break; /* uniform; tile 0 is inclusive, so some round finds one */
    __syncthreads();       /* look.sum is rewritten next round */
  }
  const uint32_t before = look.prefix;
  if (threadIdx.x == 0) tile_state.SetInclusive(tile, before + count);
  return before;
}

/* Size and retrieve in one pass. The tile is the block's ticket (not
 * blockIdx), which is what makes the look-back safe. The block's first warp
 * runs CUB's look-back as BlockScan would run the prefix callback (all 32
 * lanes, the tile's count in each, lane 0's result used); tile 0 publishes
 * its count as its inclusive prefix, as AgentScan does. The last tile writes
 * the total. Ids at positions p.capacity and past are counted, not written.
 * A block takes tiles until the ticket passes `tiles`. Returns true in the
 * block that drew the launch's last ticket, which then calls
 * ids_reset_state. */
template <uint32_t kBytes, bool kAligned, typename Source>
__device__ __forceinline__ bool ids_tile(const ps_cuda_row_ids_params &p, unsigned int *ticket,
                                         IdsTileState &tile_state, uint32_t tiles, Source &src) {
  __shared__ ids_look_back look;
  __shared__ typename IdsWarpReduce::TempStorage reduce_tmp[kIdsWarps];
  __shared__ typename IdsWarpScan::TempStorage scan_tmp[kIdsWarps];
  __shared__ uint32_t s_tile;
  __shared__ uint32_t warp_count[kIdsWarps];
  const uint32_t warp = threadIdx.x >> 5, lane = threadIdx.x & 31u;
  /* Tiles by ticket until none is left: a grid of one block per tile does
   * one each; a grid of resident blocks loops (no partial last wave). */
  for (;;) {
    if (threadIdx.x == 0) {
      __threadfence(); /* this block's status writes before its draw (ids_reset_state) */
      s_tile = atomicAdd(ticket, 1u);
    }
    __syncthreads();
    const uint32_t tile = s_tile;
    if (tile >= tiles) return tile == tiles + gridDim.x - 1; /* uniform; every block draws one such ticket */

    /* The tile's count and each warp's offset in it: warp sums, then the 8
     * warp counts from shared memory. (cub::BlockScan over the threads' counts
     * gives the same but costs 48 registers in write_ids<4, true> instead of
     * 40, i.e. 5 blocks per SM instead of 6.) */
    const uint32_t wsum = IdsWarpReduce(reduce_tmp[warp]).Sum(src.lane_count(tile, warp, lane));
    if (lane == 0) warp_count[warp] = wsum;
    __syncthreads();
    uint32_t warp_before = 0, count = 0;
#pragma unroll
    for (uint32_t i = 0; i < kIdsWarps; ++i) {
      const uint32_t c = warp_count[i];
      warp_before += i < warp ? c : 0u;
      count += c;
    }
    const uint32_t before = ids_block_prefix(tile_state, (int)tile, count, look);
    if (threadIdx.x == 0 && tile == tiles - 1) *p.total = before + count;

    uint32_t at = before + warp_before;     /* ids of the chunk before this warp's round */
    uint16_t *mine_stage = src.stage(warp); /* PS_SEL_IDS_STAGE_SLOTS slots, 16-byte aligned */
    const uint64_t out_elem = (uint64_t) reinterpret_cast<uintptr_t>(p.out) / kBytes;
    /* Next round's word loaded one round ahead, so its latency overlaps this
     * round's scan and stores. */
    uint32_t next = src.word(tile, warp, 0, lane);
#pragma unroll 1
    for (uint32_t r = 0; r < kIdsRounds; ++r) {
      const uint32_t word = next;
      if (r + 1 < kIdsRounds) next = src.word(tile, warp, r + 1, lane);
      const uint32_t c = __popc(word);
      uint32_t incl, n;
      IdsWarpScan(scan_tmp[warp]).InclusiveSum(c, incl, n);
      if (n == 0) continue; /* uniform across the warp */
      const uint32_t row0 = ps_sel_ids_round_row(tile, warp, r);
      if (at + n > p.capacity) { /* past the caller's capacity (uniform): only the ids before it */
        ps_sel_ids_extract(word, lane, mine_stage, incl - c);
        __syncwarp();
        for (uint32_t i = lane; i < n && at + i < p.capacity; i += 32)
          ps_sel_store(p.out + (uint64_t)(at + i) * kBytes, kBytes, p.id_base + row0 + mine_stage[i], false);
        __syncwarp();
        at += n;
        continue;
      }
      const uint32_t lead = kAligned ? ps_sel_ids_lead(out_elem, at, kBytes) : 0u;
      ps_sel_ids_extract(word, lane, mine_stage, lead + incl - c);
      __syncwarp();
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
    __syncthreads(); /* s_tile, warp_count and the staging areas are reused by the next tile */
  }
}

/* The ticket and the tile status array in `workspace` (ids_workspace_bytes,
 * the row id state), set by init_ids on stream before the writing kernel
 * unless `ready` tiles (at rest since the last launch) cover this one. */
inline cudaError_t ids_setup(uint32_t tiles, uint32_t ready, void *workspace, size_t workspace_bytes,
                             IdsTileState *tile_state, unsigned int **ticket, cudaStream_t stream) {
  /* The status array where DispatchScan puts it: at the start of a
   * 256-byte-aligned piece of AllocationSize bytes. */
  const size_t status_bytes = ids_status_bytes(tiles);
  if (!workspace || reinterpret_cast<uintptr_t>(workspace) % kAlign != 0 || workspace_bytes < kAlign + status_bytes)
    return cudaErrorInvalidValue;
  cudaError_t err = tile_state->Init((int)tiles, static_cast<uint8_t *>(workspace) + kAlign, status_bytes);
  if (err != cudaSuccess) return err;
  *ticket = static_cast<unsigned int *>(workspace);
  if (tiles <= ready) return cudaSuccess;
  const uint32_t init_blocks = (tiles + kIdsInitThreads - 1) / kIdsInitThreads;
  init_ids<<<init_blocks, kIdsInitThreads, 0, stream>>>(*tile_state, (int)tiles, *ticket);
  return cudaGetLastError();
}

}  // namespace

#endif /* PS_CUDA_IDS_CUH */
