#pragma OPENCL EXTENSION cl_khr_int64_base_atomics : enable
// A kernel with 64-bit atomics beside one without: the one without loads alone on devices
// without 64-bit integers (SwiftShader), its sibling's Int64Atomics gone with the sibling.
__kernel void sum_long(__global ulong* total, __global const uint* x) {
    atom_add(total, (ulong)x[get_global_id(0)] << 32);
}

__kernel void sum_int(__global uint* total, __global const uint* x) {
    atomic_add(total, x[get_global_id(0)]);
}
