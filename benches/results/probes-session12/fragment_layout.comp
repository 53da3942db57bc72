#version 450
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_KHR_shader_subgroup_basic : require
layout(local_size_x = 32) in;
// Input: matrices of R x C elements (row-major, stride C) whose values are the row index (first)
// and the column index (second). Output: per lane, per element, row and column.
#ifdef I8
layout(set = 0, binding = 0) readonly buffer In { int8_t src[]; };
#define T int8_t
#else
layout(set = 0, binding = 0) readonly buffer In { float16_t src[]; };
#define T float16_t
#endif
layout(set = 0, binding = 1) writeonly buffer Out { uint dst[]; };
layout(set = 0, binding = 2) readonly buffer Acc { float accin[]; };
void main() {
    uint lane = gl_SubgroupInvocationID;
#ifdef ACC
    coopmat<float, gl_ScopeSubgroup, R, C, gl_MatrixUseAccumulator> m0, m1;
    coopMatLoad(m0, accin, 0, C, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(m1, accin, R * C, C, gl_CooperativeMatrixLayoutRowMajor);
#else
    coopmat<T, gl_ScopeSubgroup, R, C, USE> m0, m1;
    coopMatLoad(m0, src, 0, C, gl_CooperativeMatrixLayoutRowMajor);
    coopMatLoad(m1, src, R * C, C, gl_CooperativeMatrixLayoutRowMajor);
#endif
    for (int e = 0; e < m0.length(); e++) {
        dst[(lane * m0.length() + e) * 2] = uint(int(m0[e]));
        dst[(lane * m0.length() + e) * 2 + 1] = uint(int(m1[e]));
    }
}
