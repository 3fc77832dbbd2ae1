/* Widths 1..16 of the fused range-to-row-ids kernel (ids_fused.cuh). */
#include "ids_fused.cuh"

cudaError_t ps_cuda_range_ids_slice_0(const ps_cuda_range_params &r, const ps_cuda_row_ids_params &p,
                                      unsigned int *ticket, const IdsTileState &tile_state, uint32_t tiles,
                                      cudaStream_t stream) {
  return dispatch_range_ids<1>((int)r.width, r, p, ticket, tile_state, tiles, stream,
                               std::make_integer_sequence<int, 16>{});
}
