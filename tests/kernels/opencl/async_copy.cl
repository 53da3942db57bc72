// Work-group copies between global and local memory: a row staged into local memory with
// async_work_group_copy (one event per copy, waited for together), read back reversed, and
// written out with async_work_group_strided_copy (a column of a row-major output).
__kernel void async_copy(__global const float* in, __global float* out, __local float* row, uint rows) {
    uint n = get_local_size(0), g = get_group_id(0), l = get_local_id(0);
    event_t e = async_work_group_copy(row, in + g * n, n, 0);
    wait_group_events(1, &e);
    float v = row[n - 1 - l] * 2.0f;
    barrier(CLK_LOCAL_MEM_FENCE);
    row[l] = v;
    barrier(CLK_LOCAL_MEM_FENCE);
    event_t f = async_work_group_strided_copy(out + g, row, n, rows, 0);
    wait_group_events(1, &f);
}
