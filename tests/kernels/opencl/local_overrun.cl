// Stores past local memory by a shift given at launch (the kernel's bug: undefined in OpenCL
// C): past a `__local` argument sized at launch and, through a pointer, past a fixed local
// array. What each work-item computes before the stray stores goes out.
__kernel void local_overrun(__global const float* in, __global float* out, __local float* line, int shift) {
    __local float fixed[16];
    uint l = get_local_id(0);
    uint g = get_global_id(0);
    line[l] = in[g];
    if (l < 16) fixed[l] = 2.0f * in[g];
    barrier(CLK_LOCAL_MEM_FENCE);
    float own = line[(l + 1) % get_local_size(0)] + fixed[l % 16];
    barrier(CLK_LOCAL_MEM_FENCE);
    line[l + shift] = -1.0f;
    __local float* p = &fixed[l % 16];
    p[shift] = -2.0f;
    out[g] = own;
}
