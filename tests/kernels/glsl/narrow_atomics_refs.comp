#version 460
// narrow_atomics.comp through buffer references: f16 atomics on neighbouring halves that an
// address reaches (half of them in the high half of a 32-bit word), as Slang's neural module
// accumulates gradients. S[7], S[11] and S[17..20] are never touched.
#extension GL_EXT_shader_atomic_float2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_buffer_reference : require
layout(local_size_x = 64) in;
layout(buffer_reference, std430, buffer_reference_align = 2) buffer Halves { float16_t h[]; };
layout(push_constant) uniform P { Halves s; Halves x; Halves olds; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    atomicAdd(p.s.h[i % 7], p.x.h[i]);
    atomicMax(p.s.h[8 + i % 3], p.x.h[i]);
    atomicMin(p.s.h[12 + i % 5], p.x.h[i]);
    p.olds.h[i] = atomicExchange(p.s.h[20 + i], p.x.h[i]);
}
