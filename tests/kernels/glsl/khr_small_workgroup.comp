#version 450 core
// D = A * B + C on 8x8 f32 matrices by a workgroup of four invocations, fewer than lavapipe's
// sub-group of 8 or the H100's 32: one matrix product per workgroup, A row-major, B
// column-major.
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable

layout(local_size_x = 4) in;
layout(set = 0, binding = 0) readonly buffer A { float a[]; };
layout(set = 0, binding = 1) readonly buffer B { float b[]; };
layout(set = 0, binding = 2) buffer C { float c[]; };

void main() {
    uint base = gl_WorkGroupID.x * 64;
    coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseA> ma;
    coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseB> mb;
    coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator> mc;
    coopMatLoad(ma, a, base, 8, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(mb, b, base, 8, gl_CooperativeMatrixLayoutColumnMajor);
    coopMatLoad(mc, c, base, 8, gl_CooperativeMatrixLayoutRowMajor);
    mc = coopMatMulAdd(ma, mb, mc);
    coopMatStore(mc, c, base, 8, gl_CooperativeMatrixLayoutRowMajor);
}
