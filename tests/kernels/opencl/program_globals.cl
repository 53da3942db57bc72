// A program-scope __global variable (OpenCL C 2.0's, optional since 3.0) beside a __constant
// table: the kernel that counts its launches in the variable is refused by name, its sibling,
// which reads only the table, loads and runs without it.
__global uint launches = 0;
__constant float weights[4] = {0.5f, 1.0f, 2.0f, 4.0f};

__kernel void count_launches(__global uint* seen) {
    if (get_global_id(0) == 0) seen[0] = atomic_inc(&launches);
}

__kernel void weigh(__global float* x) {
    size_t i = get_global_id(0);
    x[i] *= weights[i % 4];
}
