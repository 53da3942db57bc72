#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require

// Flash attention at sub-group scope in the operations of GL_NV_cooperative_matrix2 that
// llama.cpp's coopmat2 flash attention uses, over two key/value tiles with an online softmax:
// S = Q K^T with K transposed from an accumulator (coopMatTransposeNV), row maxima and row sums
// (coopMatReduceNV), P = exp(S - max) and the rescaling exp(M - max) through per-element
// functions of two matrices (coopMatPerElementNV), P converted to an f16 A matrix (a constructor
// changing the component type and the Use), O = O exp(M - max) + P V, and at the end O / L;
// beside it, Q K0 with the first K tile converted to a B matrix as it is (a Use-only
// conversion). Block b (sub-group b of the dispatch) reads Q[b] and the K and V tiles 2b and
// 2b + 1 (16x16 f16 each, row-major); O holds 512 floats per block: the output, then Q K0.
layout(local_size_x = 32) in;

layout(binding = 0) readonly buffer Q { float16_t q[]; };
layout(binding = 1) readonly buffer K { float16_t k[]; };
layout(binding = 2) readonly buffer V { float16_t v[]; };
layout(binding = 3) writeonly buffer O { float o[]; };

float maxf(const in float a, const in float b) { return max(a, b); }
float addf(const in float a, const in float b) { return a + b; }
float maxf_elem(const in uint r, const in uint c, const in float a, const in float b) { return max(a, b); }
float expdiff(const in uint r, const in uint c, const in float s, const in float m) { return exp(s - m); }

#define ACC coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>

void main() {
    const uint block = gl_WorkGroupID.x * gl_NumSubgroups + gl_SubgroupID;
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> qa;
    coopMatLoad(qa, q, block * 256, 16, gl_CooperativeMatrixLayoutRowMajor);
    ACC O = ACC(0.0);
    ACC L = ACC(0.0);
    ACC M = ACC(-65504.0);
    for (uint t = 0; t < 2; t++) {
        const uint tile = (2 * block + t) * 256;
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> ka;
        coopMatLoad(ka, k, tile, 16, gl_CooperativeMatrixLayoutRowMajor);
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> kt;
        coopMatTransposeNV(kt, ka);
        ACC S = coopMatMulAdd(qa, kt, ACC(0.0));
        ACC rowmax;
        coopMatReduceNV(rowmax, S, gl_CooperativeMatrixReduceRowNV, maxf);
        ACC Mnew;
        coopMatPerElementNV(Mnew, rowmax, maxf_elem, M);
        ACC P;
        coopMatPerElementNV(P, S, expdiff, Mnew);
        ACC scale;
        coopMatPerElementNV(scale, M, expdiff, Mnew);
        ACC rowsum;
        coopMatReduceNV(rowsum, P, gl_CooperativeMatrixReduceRowNV, addf);
        L = L * scale + rowsum;
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> pa = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>(P);
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> vb;
        coopMatLoad(vb, v, tile, 16, gl_CooperativeMatrixLayoutRowMajor);
        O = coopMatMulAdd(pa, vb, O * scale);
        M = Mnew;
        if (t == 0) {
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> kb = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>(ka);
            ACC qk = coopMatMulAdd(qa, kb, ACC(0.0));
            coopMatStore(qk, o, block * 512 + 256, 16, gl_CooperativeMatrixLayoutRowMajor);
        }
    }
    O = O / L;
    coopMatStore(O, o, block * 512, 16, gl_CooperativeMatrixLayoutRowMajor);
}
