#version 460
// Saturating MulAdds on 32-bit integer operands: one sub-group multiplies a 16x16 A by a
// 16x16 B and adds C, once with s32 matrices (saturating to s32) and once with u32 ones
// (saturating to u32). Every matrix is row-major with stride 16.
#extension GL_EXT_shader_explicit_arithmetic_types_int32 : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require

layout(constant_id = 0) const uint SUBGROUP = 32;
layout(local_size_x_id = 0) in;

layout(binding = 0, std430) readonly buffer SA { int32_t sa[]; };
layout(binding = 1, std430) readonly buffer SB { int32_t sb[]; };
layout(binding = 2, std430) readonly buffer SC { int32_t sc[]; };
layout(binding = 3, std430) readonly buffer UA { uint32_t ua[]; };
layout(binding = 4, std430) readonly buffer UB { uint32_t ub[]; };
layout(binding = 5, std430) readonly buffer UC { uint32_t uc[]; };
layout(binding = 6, std430) writeonly buffer SD { int32_t sd[]; };
layout(binding = 7, std430) writeonly buffer UD { uint32_t ud[]; };

void main() {
    coopmat<int32_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a;
    coopmat<int32_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b;
    coopmat<int32_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> c;
    coopMatLoad(a, sa, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(b, sb, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(c, sc, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    c = coopMatMulAdd(a, b, c, gl_MatrixOperandsSaturatingAccumulation);
    coopMatStore(c, sd, 0, 16, gl_CooperativeMatrixLayoutRowMajor);

    coopmat<uint32_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> x;
    coopmat<uint32_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> y;
    coopmat<uint32_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> z;
    coopMatLoad(x, ua, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(y, ub, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(z, uc, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    z = coopMatMulAdd(x, y, z, gl_MatrixOperandsSaturatingAccumulation);
    coopMatStore(z, ud, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
