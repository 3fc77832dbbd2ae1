/*
 * like.cl: LIKE over a run of dictionary entries (core/backend.h,
 * ps_like_dict_args). Built on its own from ps_program.h, launch.h, common.cl,
 * ps_like_nfa.h (the matcher the host test checks against ps_like_match) and
 * this file.
 *
 * One work-item per 32-entry result word: plain OpenCL 1.2 has no sub-group
 * vote, and a whole word per work-item needs no local-memory reduction. The
 * literal masks are staged in local memory once per work-group (work-items
 * index them by the bytes they read, which differ between work-items).
 *
 * Arguments: the pattern (__constant), the dictionary's uint64 offsets and
 * bytes, the output words, then byte offsets into the three buffers (offsets
 * 8-byte, out 4-byte aligned), the first entry and the entry count, and 2 KB
 * of local memory for the masks.
 */
__kernel void ps_like_dict_words(__constant ps_like_nfa *nfa, __global const uchar *offsets_buf,
                                 __global const uchar *bytes_buf, __global uchar *out_buf, ulong offsets_offset,
                                 ulong bytes_offset, ulong out_offset, ulong first, ulong count, __local ulong *lit) {
  for (uint c = (uint)get_local_id(0); c < 256u; c += (uint)get_local_size(0)) lit[c] = nfa->lit[c];
  barrier(CLK_LOCAL_MEM_FENCE);
  const ulong w = get_global_id(0);
  if (w >= (count + 31) / 32) return;
  __global const ulong *offsets = (__global const ulong *)(offsets_buf + offsets_offset);
  __global const uchar *bytes = bytes_buf + bytes_offset;
  const ulong any1 = nfa->any1, anyseq = nfa->anyseq, tail = nfa->tail;
  const uint nt = nfa->nt;
  uint bits = 0;
  for (uint lane = 0; lane < 32u; lane++) {
    const ulong k = w * 32 + lane;
    if (k >= count) break;
    const ulong begin = offsets[first + k], end = offsets[first + k + 1];
    if (ps_like_nfa_match(bytes + begin, end - begin, lit, any1, anyseq, tail, nt)) bits |= 1u << lane;
  }
  *(__global uint *)(out_buf + out_offset + w * 4) = bits;
}
