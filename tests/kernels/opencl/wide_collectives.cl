// Work-group collectives of 64-bit values and broadcasts from a 2-dimensional local id, in
// 8 x 4 work-groups: 6 long and 2 double results per work-item.
__kernel void wide_collectives(__global const long* in, __global long* out, __global double* dout, __global int* iout) {
    size_t lx = get_local_id(0), ly = get_local_id(1);
    size_t g = get_global_id(1) * get_global_size(0) + get_global_id(0);
    long v = in[g];
    __global long* o = out + 6 * g;
    o[0] = work_group_reduce_add(v);
    o[1] = work_group_reduce_min(v);
    o[2] = work_group_scan_inclusive_max(v);
    o[3] = work_group_broadcast(v, (size_t)3, (size_t)1);
    o[4] = (long)work_group_scan_exclusive_add((ulong)v);
    o[5] = (long)work_group_reduce_max((ulong)v);
    double d = (double)v * 0.5;
    dout[2 * g] = work_group_reduce_add(d);
    dout[2 * g + 1] = work_group_scan_inclusive_min(d);
    iout[g] = work_group_broadcast((int)(lx + 100 * ly), (size_t)2, (size_t)3);
}
