#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require

// Flash attention at workgroup scope, as llama.cpp's coopmat2 flash attention writes it, over
// two key/value tiles of Bc = 32 with an online softmax: Q (32 x 16, f32) loaded through a
// tensor layout and converted to an f16 A matrix, K^T through a transposing view, S = Q K^T
// with the padding (rows from R, columns from C) replaced by -65504 per element, row maxima
// and sums, exp(S - max) and exp(M - max) per element of two matrices, f16(P) as an A matrix,
// V through a KHR load, O = O exp(M - max) + P V (the 32 x 32 row values reduced into 32 x 16
// matrices for O), and at the end O / L, stored through a tensor layout and by a per-element
// function. Beside it, for the first tile: P K0 with K0 loaded as an accumulator and converted
// to a B matrix as it is, Q K0^T with K0 transposed (coopMatTransposeNV), the column maxima of
// S and the maximum of all of S (element 0 of a Row|Column reduction). Workgroup w reads Q[w]
// and the K and V tiles 2w and 2w + 1 (32 x 16 f16 each, row-major) and writes 4096 floats
// from 4096 w.
layout(local_size_x = 64) in;

layout(push_constant) uniform Params { uint R; uint C; } p;
layout(binding = 0) readonly buffer Q { float q[]; };
layout(binding = 1) readonly buffer K { float16_t k[]; };
layout(binding = 2) readonly buffer V { float16_t v[]; };
layout(binding = 3) buffer O { float o[]; };

float maxf(const in float a, const in float b) { return max(a, b); }
float addf(const in float a, const in float b) { return a + b; }
float maxf_elem(const in uint r, const in uint c, const in float a, const in float b) { return max(a, b); }
float expdiff(const in uint r, const in uint c, const in float s, const in float m) { return exp(s - m); }
float replace_padding(const in uint r, const in uint c, const in float e, const in float with, const in uint rows, const in uint cols) {
    return (r >= rows || c >= cols) ? with : e;
}
float store_o(const in uint r, const in uint c, const in float e, const in uint base) {
    o[base + r * 16 + c] = e;
    return e;
}

#define ACC_S coopmat<float, gl_ScopeWorkgroup, 32, 32, gl_MatrixUseAccumulator>
#define ACC_O coopmat<float, gl_ScopeWorkgroup, 32, 16, gl_MatrixUseAccumulator>

void main() {
    const uint w = gl_WorkGroupID.x;
    const uint base = w * 4096;
    tensorLayoutNV<2> tQ = createTensorLayoutNV(2);
    tQ = setTensorLayoutDimensionNV(tQ, 32 * gl_NumWorkGroups.x, 16);
    tQ = setTensorLayoutStrideNV(tQ, 16, 1);
    tensorLayoutNV<2> tK = createTensorLayoutNV(2);
    tK = setTensorLayoutDimensionNV(tK, 64 * gl_NumWorkGroups.x, 16);
    tK = setTensorLayoutStrideNV(tK, 16, 1);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tO = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tO = setTensorLayoutDimensionNV(tO, 32, 16);
    tO = setTensorLayoutStrideNV(tO, 16, 1);
    tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);

    ACC_O qf;
    coopMatLoadTensorNV(qf, q, 0, sliceTensorLayoutNV(tQ, w * 32, 32, 0, 16));
    coopmat<float16_t, gl_ScopeWorkgroup, 32, 16, gl_MatrixUseA> qa = coopmat<float16_t, gl_ScopeWorkgroup, 32, 16, gl_MatrixUseA>(qf);
    qa *= float16_t(1.0);
    ACC_O O = ACC_O(0.0);
    ACC_S L = ACC_S(0.0);
    ACC_S M = ACC_S(-65504.0);
    for (uint t = 0; t < 2; t++) {
        const uint tile = 2 * w + t;
        coopmat<float16_t, gl_ScopeWorkgroup, 16, 32, gl_MatrixUseB> kt;
        coopMatLoadTensorNV(kt, k, 0, sliceTensorLayoutNV(tK, tile * 32, 32, 0, 16), transposed);
        ACC_S S = coopMatMulAdd(qa, kt, ACC_S(0.0));
        coopMatPerElementNV(S, S, replace_padding, -65504.0, p.R, p.C);
        ACC_S rowmax;
        coopMatReduceNV(rowmax, S, gl_CooperativeMatrixReduceRowNV, maxf);
        ACC_S Mnew;
        coopMatPerElementNV(Mnew, rowmax, maxf_elem, M);
        ACC_S P;
        coopMatPerElementNV(P, S, expdiff, Mnew);
        ACC_S scale;
        coopMatPerElementNV(scale, M, expdiff, Mnew);
        ACC_S rowsum;
        coopMatReduceNV(rowsum, P, gl_CooperativeMatrixReduceRowNV, addf);
        L = L * scale + rowsum;
        ACC_O scale_o;
        coopMatReduceNV(scale_o, scale, gl_CooperativeMatrixReduceRowNV, maxf);
        coopmat<float16_t, gl_ScopeWorkgroup, 32, 32, gl_MatrixUseA> pa = coopmat<float16_t, gl_ScopeWorkgroup, 32, 32, gl_MatrixUseA>(P);
        coopmat<float16_t, gl_ScopeWorkgroup, 32, 16, gl_MatrixUseB> vb;
        coopMatLoad(vb, v, tile * 512, 16, gl_CooperativeMatrixLayoutRowMajor);
        O = coopMatMulAdd(pa, vb, O * scale_o);
        M = Mnew;
        if (t == 0) {
            coopmat<float16_t, gl_ScopeWorkgroup, 32, 16, gl_MatrixUseAccumulator> ka;
            coopMatLoad(ka, k, tile * 512, 16, gl_CooperativeMatrixLayoutRowMajor);
            ACC_O pk = coopMatMulAdd(pa, coopmat<float16_t, gl_ScopeWorkgroup, 32, 16, gl_MatrixUseB>(ka), ACC_O(0.0));
            coopMatStore(pk, o, base + 1024, 16, gl_CooperativeMatrixLayoutRowMajor);
            coopmat<float16_t, gl_ScopeWorkgroup, 16, 32, gl_MatrixUseB> ktr;
            coopMatTransposeNV(ktr, ka);
            ACC_S qkt = coopMatMulAdd(qa, ktr, ACC_S(0.0));
            coopMatStore(qkt, o, base + 1536, 32, gl_CooperativeMatrixLayoutRowMajor);
            ACC_S colmax;
            coopMatReduceNV(colmax, S, gl_CooperativeMatrixReduceColumnNV, maxf);
            coopMatStore(colmax, o, base + 2560, 32, gl_CooperativeMatrixLayoutRowMajor);
            ACC_S all;
            coopMatReduceNV(all, S, gl_CooperativeMatrixReduceRowAndColumnNV, maxf);
            if (gl_LocalInvocationIndex == 0) {
                o[base + 3584] = all[0];
            }
        }
    }
    ACC_O Lo;
    coopMatReduceNV(Lo, L, gl_CooperativeMatrixReduceRowNV, maxf);
    O = O / Lo;
    coopMatStoreTensorNV(O, o, base, tO);
    coopMatPerElementNV(O, O, store_o, base + 512);
}
