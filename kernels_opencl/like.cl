/*
 * like.cl: LIKE over a run of dictionary entries (core/backend.h,
 * ps_like_dict_args). Built on its own from ps_program.h, launch.h, common.cl,
 * ps_like_nfa.h (the matcher the host test checks against ps_like_match) and
 * this file.
 *
 * One work-item per entry where the work-group is whole 32-entry words (32
 * work-items or more, the device's usual case): each puts its match in local
 * memory and the first lsize / 32 work-items assemble and store the group's
 * words — plain OpenCL 1.2 has no sub-group vote, and a work-item per entry
 * gives a GPU 32 times the work-items of a word each. On a device whose
 * group is narrower, one work-item per 32-entry word, in a loop. The host
 * launches count (rounded up to the group) or words work-items accordingly.
 * The literal masks are staged in local memory once per work-group
 * (work-items index them by the bytes they read, which differ between
 * work-items). Each entry first takes ps_like_nfa.h's test for the pattern's
 * longest literal run; the automaton runs only where that does not decide.
 *
 * Arguments: the pattern (__constant), the dictionary's uint64 offsets and
 * bytes, the output words, then byte offsets into the three buffers (offsets
 * 8-byte, out 4-byte aligned), the first entry and the entry count, 2 KB of
 * local memory for the masks and a uint per work-item for the matches.
 */
__kernel void ps_like_dict_words(__constant ps_like_nfa *nfa, __global const uchar *offsets_buf,
                                 __global const uchar *bytes_buf, __global uchar *out_buf, ulong offsets_offset,
                                 ulong bytes_offset, ulong out_offset, ulong first, ulong count, __local ulong *lit,
                                 __local uint *match) {
  const uint lid = (uint)get_local_id(0), lsize = (uint)get_local_size(0);
  for (uint c = lid; c < 256u; c += lsize) lit[c] = nfa->lit[c];
  barrier(CLK_LOCAL_MEM_FENCE);
  __global const ulong *offsets = (__global const ulong *)(offsets_buf + offsets_offset);
  __global const uchar *bytes = bytes_buf + bytes_offset;
  __global uint *out = (__global uint *)(out_buf + out_offset);
  /* the bytes up to the run's last entry's end may be read; a buffer's
   * base is aligned far beyond 4 bytes (CL_DEVICE_MEM_BASE_ADDR_ALIGN) */
  const ulong n = offsets[first + count];
  const int fast = (bytes_offset & 3u) == 0;
  const ulong words = (count + 31) / 32;
  /* the same for every work-item of the launch; no work-item returns before
   * the barrier (a CPU device's compiler wants every work-item to reach it) */
  const int per_entry = lsize >= 32u && lsize % 32u == 0;
  const ulong g = get_global_id(0);
  uint m = 0;
  if (!per_entry && g < words) {
    for (uint lane = 0; lane < 32u; lane++) {
      const ulong k = g * 32 + lane;
      if (k >= count) break;
      if (ps_like_entry_match(bytes, offsets[first + k], offsets[first + k + 1], n, fast, nfa, lit)) m |= 1u << lane;
    }
    out[g] = m;
  } else if (per_entry && g < count) {
    m = (uint)ps_like_entry_match(bytes, offsets[first + g], offsets[first + g + 1], n, fast, nfa, lit);
  }
  match[lid] = m;
  barrier(CLK_LOCAL_MEM_FENCE);
  const ulong w = get_group_id(0) * (lsize / 32u) + lid;
  if (per_entry && lid < lsize / 32u && w < words) {
    uint bits = 0;
    for (uint j = 0; j < 32u; j++) bits |= match[lid * 32u + j] << j;
    out[w] = bits;
  }
}
