#version 450
// Element-wise arithmetic on Use-A matrices: one sub-group loads two 16x16 f32 A matrices and
// writes their sum and the negation of the first, and doubles a 16x16 f16 A matrix. Devices that
// list f32 only for accumulators (the H100) must run this module emulated.
#pragma use_vulkan_memory_model
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(constant_id = 0) const uint SUBGROUP = 32;
layout(local_size_x_id = 0) in;
layout(binding = 0, std430) readonly buffer X { float x[]; };
layout(binding = 1, std430) writeonly buffer Y { float y[]; };
layout(binding = 2, std430) readonly buffer H { float16_t h[]; };
layout(binding = 3, std430) writeonly buffer G { float16_t g[]; };

void main() {
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> p;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> q;
    coopMatLoad(p, x, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(q, x, 256, 16, gl_CooperativeMatrixLayoutColumnMajor);
    coopMatStore(p + q, y, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(-p, y, 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> r;
    coopMatLoad(r, h, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(r * float16_t(2.0), g, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
