#version 460
// f16 atomics (GL_EXT_shader_atomic_float2) on neighbouring halves of one buffer: sums, maxima
// and minima shared by many invocations, and an exchange per invocation whose old value is
// written out. S[7], S[11] and S[17..20] are never touched.
#extension GL_EXT_shader_atomic_float2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) buffer Sums { float16_t s[]; };
layout(set = 0, binding = 1) readonly buffer X { float16_t x[]; };
layout(set = 0, binding = 2) writeonly buffer Olds { float16_t olds[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    atomicAdd(s[i % 7], x[i]);
    atomicMax(s[8 + i % 3], x[i]);
    atomicMin(s[12 + i % 5], x[i]);
    olds[i] = atomicExchange(s[20 + i], x[i]);
}
