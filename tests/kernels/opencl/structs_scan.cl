// A struct array in global memory with OpenCL C's float3 layout (16 bytes, 16-aligned), read
// whole-member and updated through a swizzle; a kernel-scope local counter bumped with
// atomic_inc; an inclusive work-group scan over a local array with barriers in a loop.
typedef struct {
    float3 pos;
    float mass;
    float4 vel;
} Particle;

__kernel void nbody_structs(__global Particle* p, __global float4* acc_out, uint n, float eps) {
    uint i = get_global_id(0);
    float3 a = (float3)(0.0f);
    for (uint j = 0; j < n; j++) {
        float3 d = p[j].pos - p[i].pos;
        float r2 = dot(d, d) + eps;
        a += d * (p[j].mass * rsqrt(r2 * r2 * r2));
    }
    acc_out[i] = (float4)(a, p[i].mass);
    barrier(CLK_GLOBAL_MEM_FENCE);
    p[i].vel.xyz += a;
}

__kernel void count_positive(__global const int* in, __global int* out) {
    __local int positives;
    if (get_local_id(0) == 0)
        positives = 0;
    barrier(CLK_LOCAL_MEM_FENCE);
    if (in[get_global_id(0)] > 0)
        atomic_inc(&positives);
    barrier(CLK_LOCAL_MEM_FENCE);
    if (get_local_id(0) == 0)
        atomic_add(out, positives);
}

__kernel void scan(__global const uint* in, __global uint* out, __local uint* tmp) {
    uint l = get_local_id(0), n = get_local_size(0), g = get_global_id(0);
    tmp[l] = in[g];
    barrier(CLK_LOCAL_MEM_FENCE);
    for (uint off = 1; off < n; off <<= 1) {
        uint v = l >= off ? tmp[l - off] : 0;
        barrier(CLK_LOCAL_MEM_FENCE);
        tmp[l] += v;
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    out[g] = tmp[l];
}
