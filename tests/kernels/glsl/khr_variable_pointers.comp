#version 450
// A cooperative-matrix kernel compiled with variable pointers (the capability glslang declares
// for `#pragma use_variable_pointers`): one sub-group stages a 16x16 f16 A (row-major) and B
// (column-major) through workgroup memory and computes C = A * B + C in f32.
#pragma use_vulkan_memory_model
#pragma use_variable_pointers
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(constant_id = 0) const uint SUBGROUP = 32;
layout(local_size_x_id = 0) in;
layout(binding = 0, std430) readonly buffer A { float16_t a[]; };
layout(binding = 1, std430) readonly buffer B { float16_t b[]; };
layout(binding = 2, std430) buffer C { float c[]; };
shared float16_t sa[256];
shared float16_t sb[256];

void main() {
    for (uint i = gl_LocalInvocationIndex; i < 256; i += SUBGROUP) {
        sa[i] = a[i];
        sb[i] = b[i];
    }
    barrier();
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> x;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> y;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> z;
    coopMatLoad(x, sa, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(y, sb, 0, 16, gl_CooperativeMatrixLayoutColumnMajor);
    coopMatLoad(z, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    z = coopMatMulAdd(x, y, z);
    coopMatStore(z, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
