#version 450
// f16 atomics on workgroup memory (GL_EXT_shader_atomic_float2), which no test device has: each
// workgroup of 64 sums and takes the maximum of its inputs into 8 buckets of a shared float16_t
// array (eight invocations per bucket), then writes the buckets out.
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_atomic_float2 : require

layout(local_size_x = 64, local_size_y = 1, local_size_z = 1) in;

layout(binding = 0) readonly buffer In { float16_t x[]; };
layout(binding = 1) writeonly buffer Out { float16_t o[]; };

shared float16_t sums[8];
shared float16_t maxes[8];

void main() {
    const uint i = gl_LocalInvocationIndex;
    const uint g = gl_WorkGroupID.x;
    if (i < 8) {
        sums[i] = float16_t(0.0);
        maxes[i] = float16_t(-65504.0);
    }
    barrier();
    const float16_t v = x[g * 64 + i];
    atomicAdd(sums[i % 8], v);
    atomicMax(maxes[i % 8], v);
    barrier();
    if (i < 8) {
        o[g * 16 + i] = sums[i];
        o[g * 16 + 8 + i] = maxes[i];
    }
}
