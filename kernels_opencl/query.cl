/*
 * query.cl: the OpenCL entry points of queries. The algorithm lives in
 * kernels_shared/ps_query_kernels.h (shared with CUDA); these kernels only
 * gather their buffer arguments at the chunk's offsets and call it. Built
 * from ps_program.h, ps_query_program.h, ps_dialect.h, a specialized build's
 * constants (core/query_spec.h), ps_query_kernels.h and this file, in that
 * order. The program argument's stream sizes are read in both builds.
 */

typedef __global const uchar *ps_qbytes;

__kernel void ps_query_partials(__constant ps_vprog *prog, __constant ps_program *where_prog,
                                __constant ps_qlaunch *launch, __global const uint *where_aux, ps_qbytes d0, ps_qbytes d1,
                                ps_qbytes d2, ps_qbytes d3, ps_qbytes d4, ps_qbytes d5, ps_qbytes d6, ps_qbytes d7,
                                ps_qbytes d8, ps_qbytes d9, ps_qbytes d10, ps_qbytes d11, ps_qbytes d12,
                                ps_qbytes d13, ps_qbytes d14, ps_qbytes d15, ps_qbytes v0, ps_qbytes v1,
                                ps_qbytes v2, ps_qbytes v3, ps_qbytes v4, ps_qbytes v5, ps_qbytes v6, ps_qbytes v7,
                                ps_qbytes v8, ps_qbytes v9, ps_qbytes v10, ps_qbytes v11, ps_qbytes v12,
                                ps_qbytes v13, ps_qbytes v14, ps_qbytes v15, ps_qbytes p0,
                                ps_qbytes p1, ps_qbytes p2, ps_qbytes p3, ps_qbytes p4, ps_qbytes p5, ps_qbytes p6,
                                ps_qbytes p7, __global ps_qacc *part, __global uint *status,
                                __global ulong *groups, __global const ulong *value_aux) {
  const ps_qbytes data[PS_MAX_COLS] = {d0, d1, d2, d3, d4, d5, d6, d7, d8, d9, d10, d11, d12, d13, d14, d15};
  const ps_qbytes validity[PS_MAX_COLS] = {v0, v1, v2, v3, v4, v5, v6, v7, v8, v9, v10, v11, v12, v13, v14, v15};
  const ps_qbytes preds[PS_QMAX_PREDS] = {p0, p1, p2, p3, p4, p5, p6, p7};
  ps_q_bufs B;
  for (uint i = 0; i < PS_MAX_COLS; ++i) {
    B.data[i] = data[i] + launch->data_offset[i];
    B.validity[i] = validity[i] + launch->validity_offset[i];
    B.data_bytes[i] = prog->cols[i].data_bytes;
    B.validity_bytes[i] = prog->cols[i].validity_bytes;
  }
  for (uint i = 0; i < PS_QMAX_PREDS; ++i) B.preds[i] = preds[i] + launch->pred_offset[i];
  B.where_aux = where_aux;
  B.value_aux = value_aux;
  B.groups = groups;
  __local ps_qacc lacc[PS_Q_LOCAL_ACCS];
  ps_q_pass1(prog, where_prog, launch, &B, get_group_id(0), (uint)get_local_id(0), (uint)get_local_size(0), lacc, part,
             status + PS_Q_STATUS_WORDS * launch->status_slot);
}

__kernel void ps_query_merge(ulong n_acc, ulong parts, __global const ps_qacc *part, __global ps_qacc *acc,
                             ulong flat) {
  __local ps_qacc lacc[PS_Q_LOCAL_ACCS];
  ps_q_merge(get_group_id(0), (uint)get_local_id(0), (uint)get_local_size(0), n_acc, parts, flat, part, acc, lacc);
}
