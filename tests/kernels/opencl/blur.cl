// Classic OpenCL 1.2 idioms: a program-scope __constant filter, a float add built from
// atomic_cmpxchg on the float's bits, a 2D range with a kernel-scope 2D local tile (halo columns
// at constant indices). Its first element is read at a constant address; a later element would
// not do (llvm-spirv writes such an address as OpUndef, which the translation refuses).
__constant float weights[5] = {0.0625f, 0.25f, 0.375f, 0.25f, 0.0625f};

inline void atomic_add_float(volatile __global float* p, float v) {
    union { uint u; float f; } old, next;
    do {
        old.f = *p;
        next.f = old.f + v;
    } while (atomic_cmpxchg((volatile __global uint*)p, old.u, next.u) != old.u);
}

__kernel void blur_rows(__global const float* in, __global float* out, __global float* total, uint width) {
    __local float tile[4][20];
    uint x = get_global_id(0), y = get_global_id(1);
    uint lx = get_local_id(0), ly = get_local_id(1);
    tile[ly][lx + 2] = in[y * width + x];
    if (lx < 2) {
        tile[ly][lx] = x >= 2 ? in[y * width + x - 2] : 0.0f;
        tile[ly][lx + 18] = x + 16 < width ? in[y * width + x + 16] : 0.0f;
    }
    barrier(CLK_LOCAL_MEM_FENCE);
    float s = 0.0f;
    for (int k = 0; k < 5; k++) s += weights[k] * tile[ly][lx + k];
    out[y * width + x] = s + tile[0][0] * 0.0f;
    atomic_add_float(total, s);
}
