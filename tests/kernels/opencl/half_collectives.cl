// Work-group collectives of half values (cl_khr_fp16 with OpenCL C 2.0's work-group functions):
// 4 results per work-item.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
__kernel void half_collectives(__global const half* in, __global half* out) {
    size_t g = get_global_id(0);
    half v = in[g];
    __global half* o = out + 4 * g;
    o[0] = work_group_reduce_max(v);
    o[1] = work_group_scan_inclusive_min(v);
    o[2] = work_group_broadcast(v, (size_t)5);
    o[3] = work_group_scan_exclusive_add(v);
}
