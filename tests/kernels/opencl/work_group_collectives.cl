// Work-group collectives of OpenCL 2.0 in one 64-item work-group after another (scans in
// local-id order, so they cross sub-groups): 8 integer and 2 float results per work-item.
__kernel void collectives(__global const int* in, __global int* out, __global float* fout) {
    size_t g = get_global_id(0);
    int v = in[g];
    __global int* o = out + 8 * g;
    o[0] = work_group_reduce_add(v);
    o[1] = work_group_reduce_min(v);
    o[2] = work_group_reduce_max(v);
    o[3] = work_group_scan_inclusive_add(v);
    o[4] = work_group_scan_exclusive_max(v);
    o[5] = work_group_broadcast(v, (size_t)5);
    o[6] = work_group_any(v > 490) + 2 * work_group_all(v > -1000);
    o[7] = (int)work_group_scan_exclusive_add((uint)v);
    float f = (float)v / 4.0f;
    fout[2 * g] = work_group_reduce_add(f);
    fout[2 * g + 1] = work_group_scan_inclusive_min(f);
}
