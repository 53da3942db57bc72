#version 450
#extension GL_EXT_shader_atomic_float : require
#extension GL_EXT_shader_atomic_float2 : require
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_scalar_block_layout : require
// f32 atomic add, min and max in the three kinds of memory: per-bin sums of weights gathered in
// a workgroup array and added into a storage buffer, per-bin minimum, maximum and count in a
// workgroup array of structs (also read whole and written plainly) and in the storage buffer,
// and a total and peak through a buffer reference.
layout(local_size_x = 64) in;
layout(buffer_reference, scalar) buffer Total { float sum; float peak; };
struct Stats { float lo; float hi; uint count; };
layout(binding = 0) readonly buffer Weights { float w[]; } src;
layout(binding = 2) readonly buffer Index { uint bin[]; } idx;
layout(binding = 1) buffer Bins { float sums[16]; Stats stats[16]; } bins;
layout(push_constant) uniform P { Total total; uint n; } p;
shared float local_sums[16];
shared Stats local_stats[16];
void main() {
    uint t = gl_LocalInvocationIndex;
    if (t < 16) {
        local_sums[t] = 0.0;
        local_stats[t] = Stats(1e30, -1e30, 0u);
    }
    barrier();
    uint i = gl_GlobalInvocationID.x;
    if (i < p.n) {
        float v = src.w[i];
        uint b = idx.bin[i] % 16;
        atomicAdd(local_sums[b], v);
        atomicMin(local_stats[b].lo, v);
        atomicMax(local_stats[b].hi, v);
        atomicAdd(local_stats[b].count, 1u);
        atomicMin(bins.stats[b].lo, v);
        float before = atomicMax(bins.stats[b].hi, v);
        atomicAdd(p.total.sum, v);
        atomicMax(p.total.peak, max(before, v));
    }
    barrier();
    if (t < 16) {
        Stats s = local_stats[t];
        local_stats[t].count = s.count * 2u;
        atomicAdd(bins.sums[t], local_sums[t] + s.lo * 0.0);
        atomicAdd(bins.stats[t].count, local_stats[t].count);
    }
}
