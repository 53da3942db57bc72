#version 450
// Cooperative matrices of any M x N x K (specialization constants 1-3) loaded and stored through
// words wider than their f16 components, as IREE and byte-address-buffer producers stage them:
// A through `uvec4` row-major from a word offset, B through `uint` column-major, the f16
// accumulator C through `uvec2` row-major; D = A * B + C stored row-major through `uint` and
// column-major through `uvec2`, and f32(D) row-major through `uvec4`. A device that does not
// list the shape pads or tiles it, its staging copies reading and writing whole words. One
// sub-group per workgroup (specialization constant 0); offsets and strides (in words) from push
// constants.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint M = 16;
layout(constant_id = 2) const uint N = 16;
layout(constant_id = 3) const uint K = 16;

layout(binding = 0) readonly buffer A { uvec4 a[]; };
layout(binding = 1) readonly buffer B { uint b[]; };
layout(binding = 2) readonly buffer C { uvec2 c[]; };
layout(binding = 3) writeonly buffer DR { uint d_rows[]; };
layout(binding = 4) writeonly buffer DC { uvec2 d_cols[]; };
layout(binding = 5) writeonly buffer F { uvec4 f[]; };
layout(push_constant) uniform P { uint offset_a; uint lda; uint ldb; uint ldc; uint ldd_rows; uint ldd_cols; uint ldf; } p;

void main() {
    coopmat<float16_t, gl_ScopeSubgroup, M, K, gl_MatrixUseA> ma;
    coopmat<float16_t, gl_ScopeSubgroup, K, N, gl_MatrixUseB> mb;
    coopmat<float16_t, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> mc;
    coopMatLoad(ma, a, p.offset_a, p.lda, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, b, 0, p.ldb, gl_CooperativeMatrixLayoutColumnMajor);
    coopMatLoad(mc, c, 0, p.ldc, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float16_t, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> d = coopMatMulAdd(ma, mb, mc);
    coopMatStore(d, d_rows, 0, p.ldd_rows, gl_CooperativeMatrixLayoutRowMajor);
    coopMatStore(d, d_cols, 0, p.ldd_cols, gl_CooperativeMatrixLayoutColumnMajor);
    coopmat<float, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator> wide = coopmat<float, gl_ScopeSubgroup, M, N, gl_MatrixUseAccumulator>(d);
    coopMatStore(wide, f, 0, p.ldf, gl_CooperativeMatrixLayoutRowMajor);
}
