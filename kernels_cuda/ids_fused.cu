/* Row ids straight from a one-range filter (ids_fused.cuh): the entry point,
 * which sets up the look-back state and picks the slice of widths
 * (ids_fused_<k>.cu) holding the instantiation for r->width. */
#include "ids_fused.cuh"

cudaError_t ps_cuda_range_ids_slice_0(const ps_cuda_range_params &r, const ps_cuda_row_ids_params &p,
                                      unsigned int *ticket, const IdsTileState &tile_state, uint32_t tiles,
                                      cudaStream_t stream);
cudaError_t ps_cuda_range_ids_slice_1(const ps_cuda_range_params &r, const ps_cuda_row_ids_params &p,
                                      unsigned int *ticket, const IdsTileState &tile_state, uint32_t tiles,
                                      cudaStream_t stream);

extern "C" cudaError_t ps_cuda_launch_range_ids(const ps_cuda_range_params *r, const ps_cuda_row_ids_params *p,
                                                void *workspace, size_t workspace_bytes, cudaStream_t stream) {
  if (r->width < 1 || r->width > 32 || r->rows == 0 || r->rows != p->rows || r->bitmap || r->count)
    return cudaErrorInvalidValue;
  if (!p->out || !p->total || !p->out_aligned || (p->index_bytes != 4 && p->index_bytes != 8))
    return cudaErrorInvalidValue;
  if (r->check_limit && !r->status) return cudaErrorInvalidValue;
  const uint32_t tiles = ps_sel_ids_tiles(p->rows);
  IdsTileState tile_state;
  unsigned int *ticket = NULL;
  cudaError_t err = ids_setup(tiles, p->state_ready, workspace, workspace_bytes, &tile_state, &ticket, stream);
  if (err != cudaSuccess) return err;
  if (r->width <= 16) return ps_cuda_range_ids_slice_0(*r, *p, ticket, tile_state, tiles, stream);
  return ps_cuda_range_ids_slice_1(*r, *p, ticket, tile_state, tiles, stream);
}
