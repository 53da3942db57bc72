#version 450
// Cooperative matrices loaded and stored through words wider than their components, as
// byte-address-buffer producers (DXC, Slang) and vk_cooperative_matrix_perf write them: f16 A
// through `uvec4` (8 per word), f16 B through `uint`; D = A * B in f32, then f16(D) stored
// row-major through `uint` and column-major through `uvec2`, and int8(D) row-major and
// column-major through `uint` (4 per word). One sub-group per workgroup, one T x T x T fragment
// (specialization constant 1); strides from push constants, in words.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint T = 16;

layout(binding = 0) readonly buffer A { uvec4 a[]; };
layout(binding = 1) readonly buffer B { uint b[]; };
layout(binding = 2) writeonly buffer HR { uint h_rows[]; };
layout(binding = 3) writeonly buffer HC { uvec2 h_cols[]; };
layout(binding = 4) writeonly buffer QR { uint q_rows[]; };
layout(binding = 5) writeonly buffer QC { uint q_cols[]; };
layout(push_constant) uniform P { uint lda; uint ldb; uint ldh_rows; uint ldh_cols; uint ldq_rows; uint ldq_cols; } p;

void main() {
    coopmat<float16_t, gl_ScopeSubgroup, T, T, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, T, T, gl_MatrixUseB> mb;
    coopMatLoad(ma, a, 0, p.lda, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, b, 0, p.ldb, gl_CooperativeMatrixLayoutColumnMajor);
    coopmat<float, gl_ScopeSubgroup, T, T, gl_MatrixUseAccumulator> d = coopmat<float, gl_ScopeSubgroup, T, T, gl_MatrixUseAccumulator>(0.0);
    d = coopMatMulAdd(ma, mb, d);
    coopmat<float16_t, gl_ScopeSubgroup, T, T, gl_MatrixUseAccumulator> h = coopmat<float16_t, gl_ScopeSubgroup, T, T, gl_MatrixUseAccumulator>(d);
    coopMatStore(h, h_rows, 0, p.ldh_rows, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(h, h_cols, 0, p.ldh_cols, gl_CooperativeMatrixLayoutColumnMajor);
    coopmat<int8_t, gl_ScopeSubgroup, T, T, gl_MatrixUseAccumulator> q = coopmat<int8_t, gl_ScopeSubgroup, T, T, gl_MatrixUseAccumulator>(d);
    coopMatStore(q, q_rows, 0, p.ldq_rows, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(q, q_cols, 0, p.ldq_cols, gl_CooperativeMatrixLayoutColumnMajor);
}
