// Pointer arithmetic on global memory: walking pointers, byte offsets through char pointers,
// vector loads and stores, pointers chosen at run time.
typedef struct { float x; int k; } pair_t;

__kernel void walk(__global const int* src, __global int* dst, uint row) {
    size_t g = get_global_id(0);
    __global const int* p = src + g * row;
    __global const int* end = p + row;
    int acc = 0;
    for (; p < end; p += 2)
        acc += *p;
    dst[g] = acc;
}

__kernel void bytes(__global const uchar* src, __global float* dst) {
    size_t g = get_global_id(0);
    __global const float* f = (__global const float*)(src + 4 * g + 4);
    dst[g] = *f * 2.0f;
}

__kernel void vectors(__global const float* src, __global float4* dst, __global const pair_t* pairs) {
    size_t g = get_global_id(0);
    float4 v = vload4(g, src);
    pair_t q = pairs[g];
    __global float4* out = (q.k & 1) ? dst + g : dst + g + 64;
    *out = v * q.x;
    vstore4(v + 1.0f, g, (__global float*)(dst + 128));
}
