#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require

// One attention block per sub-group at sub-group scope, in the operations of
// GL_NV_cooperative_matrix2 that llama.cpp's flash attention uses: S = Q K^T with K transposed
// from an accumulator (coopMatTransposeNV), row maxima and row sums (coopMatReduceNV), P =
// exp(S - max) through a per-element function of two matrices (coopMatPerElementNV), P converted
// to an f16 A matrix (a constructor changing the component type and the Use), O = P V / rowsum,
// and K converted to a B matrix as it is (a Use-only conversion) for Q K. Block b of Q, K and V
// (16x16 f16 each, row-major) is sub-group b of the dispatch; O holds 512 floats per block: the
// attention output, then Q K.
layout(local_size_x = 32) in;

layout(binding = 0) readonly buffer Q { float16_t q[]; };
layout(binding = 1) readonly buffer K { float16_t k[]; };
layout(binding = 2) readonly buffer V { float16_t v[]; };
layout(binding = 3) writeonly buffer O { float o[]; };

float maxf(const in float a, const in float b) { return max(a, b); }
float addf(const in float a, const in float b) { return a + b; }
float expdiff(const in uint r, const in uint c, const in float s, const in float m) { return exp(s - m); }

void main() {
    const uint block = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> qa;
    coopMatLoad(qa, q, block * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> ka;
    coopMatLoad(ka, k, block * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> kt;
    coopMatTransposeNV(kt, ka);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> s = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    s = coopMatMulAdd(qa, kt, s);

    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> rowmax;
    coopMatReduceNV(rowmax, s, gl_CooperativeMatrixReduceRowNV, maxf);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> p;
    coopMatPerElementNV(p, s, expdiff, rowmax);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> rowsum;
    coopMatReduceNV(rowsum, p, gl_CooperativeMatrixReduceRowNV, addf);

    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> pa = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>(p);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> vb;
    coopMatLoad(vb, v, block * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> out_ = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    out_ = coopMatMulAdd(pa, vb, out_);
    out_ = out_ / rowsum;
    coopMatStore(out_, o, block * 512, 16, gl_CooperativeMatrixLayoutRowMajor);

    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> kb = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>(ka);
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> qk = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    qk = coopMatMulAdd(qa, kb, qk);
    coopMatStore(qk, o, block * 512 + 256, 16, gl_CooperativeMatrixLayoutRowMajor);
}
