#version 450
// An int8 MulAdd whose operands are read through buffers of another type of their width: A
// (16x16 s8, row-major) from bytes declared unsigned, C (16x16 s32, row-major) from uint words,
// and D stored to float words (the bits of s32). The H100 lists no 16x16x16 s8 shape: padded.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(constant_id = 0) const uint SUBGROUP = 32;
layout(local_size_x_id = 0) in;
layout(binding = 0, std430) readonly buffer A { uint8_t a[]; };
layout(binding = 1, std430) readonly buffer B { int8_t b[]; };
layout(binding = 2, std430) readonly buffer C { uint32_t c[]; };
layout(binding = 3, std430) writeonly buffer D { float d[]; };

void main() {
    coopmat<int8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> x;
    coopmat<int8_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> y;
    coopmat<int32_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> z;
    coopMatLoad(x, a, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(y, b, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(z, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    z = coopMatMulAdd(x, y, z);
    coopMatStore(z, d, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
