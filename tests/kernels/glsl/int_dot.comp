#version 450
// Every integer dot product form: out[i*8 + j] for input pair i.
#extension GL_EXT_integer_dot_product : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
layout(local_size_x = 64) in;
layout(set = 0, binding = 0) readonly buffer X { uint x[]; };
layout(set = 0, binding = 1) readonly buffer Y { uint y[]; };
layout(set = 0, binding = 2) readonly buffer Acc { int acc[]; };
layout(set = 0, binding = 3) buffer Out { uint o[]; };
layout(push_constant) uniform P { uint n; } p;
void main() {
    uint i = gl_GlobalInvocationID.x;
    if (i >= p.n) return;
    uint a = x[i];
    uint b = y[i];
    int c = acc[i];
    o[i * 8 + 0] = uint(dotPacked4x8EXT(int(a), int(b)));
    o[i * 8 + 1] = dotPacked4x8EXT(a, b);
    o[i * 8 + 2] = uint(dotPacked4x8EXT(int(a), b));
    o[i * 8 + 3] = uint(dotPacked4x8AccSatEXT(int(a), int(b), c));
    o[i * 8 + 4] = dotPacked4x8AccSatEXT(a, b, uint(c));
    o[i * 8 + 5] = uint(dotPacked4x8AccSatEXT(int(a), b, c));
    ivec4 va = ivec4(int(a & 0xffu) - 128, int(a >> 8 & 0xffu), -int(a >> 16 & 0xffu), int(a >> 24));
    ivec4 vb = ivec4(int(b & 0xffu), -int(b >> 8 & 0xffu), int(b >> 16 & 0xffu) - 100, int(b >> 24));
    o[i * 8 + 6] = uint(dotEXT(va, vb));
    o[i * 8 + 7] = uint(dotAccSatEXT(va, vb, c));
}
