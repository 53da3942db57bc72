#version 450
// f16 matrices in storage buffers, as llama.cpp's aligned matrix kernels load their operands
// (`f16mat2x4 data_a[]`): whole column- and row-major matrices loaded and stored, an f32 matrix
// converted to f16, and access chains to a column and to an element of each layout, loaded and
// stored. Invocation i writes O[i], Z[i], R[i] and S[i].
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require
layout(local_size_x = 64) in;

layout(std430, binding = 0) readonly buffer A { f16mat2x4 a[]; };
layout(std430, binding = 1) readonly buffer B { layout(row_major) f16mat2x4 b[]; };
layout(std430, binding = 2) readonly buffer C { mat2x4 c[]; };
layout(std430, binding = 3) writeonly buffer O { f16mat2x4 o[]; };
layout(std430, binding = 4) writeonly buffer Z { f16mat2x4 z[]; };
layout(std430, binding = 5) buffer R { layout(row_major) f16mat2x4 r[]; };
layout(std430, binding = 6) writeonly buffer S { float16_t s[]; };

void main() {
    uint i = gl_GlobalInvocationID.x;
    f16mat2x4 x = a[i];
    f16mat2x4 y = b[i];
    o[i] = x + y;
    z[i] = f16mat2x4(c[i]);
    r[i] = y;
    r[i][1] = a[i ^ 1u][1];
    r[i][0][2] = b[i ^ 2u][1][3];
    s[i] = a[i ^ 3u][0].w + b[i][0][1];
}
