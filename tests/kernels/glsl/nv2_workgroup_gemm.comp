#version 450
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_NV_cooperative_matrix2 : require

// A workgroup-scope GEMM as llama.cpp's coopmat2 matmul writes it: BM x BK tiles of A and
// BK x BN tiles of B (B held k-contiguous, N x K, and read through a transposing view) loaded
// through clamped tensor layouts, sliced per tile; D = f16(clamp(C + A B, -8, 8)) stored
// transposed through a tensor layout (N x M), as llama.cpp stores D. C is read column-major
// and the f32 sums written row-major and column-major with KHR loads and stores where the tile
// lies inside the matrix. Workgroup (x, y) computes the tile at rows x BM, columns y BN.
layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;
layout(constant_id = 0) const uint BLOCK_SIZE = 128;
layout(constant_id = 1) const uint BM = 64;
layout(constant_id = 2) const uint BN = 32;
const uint BK = 16;

layout(push_constant) uniform Params { uint M; uint N; uint K; } p;
layout(binding = 0) readonly buffer A { float16_t a[]; };
layout(binding = 1) readonly buffer B { float16_t b[]; };
layout(binding = 2) readonly buffer C { float c[]; };
layout(binding = 3) writeonly buffer D { float16_t d[]; };
layout(binding = 4) writeonly buffer S { float s[]; };

#define ACC(T) coopmat<T, gl_ScopeWorkgroup, BM, BN, gl_MatrixUseAccumulator>

void main() {
    const uint ir = gl_WorkGroupID.x;
    const uint ic = gl_WorkGroupID.y;
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tA = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tB = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tensorLayoutNV<2, gl_CooperativeMatrixClampModeConstantNV> tD = createTensorLayoutNV(2, gl_CooperativeMatrixClampModeConstantNV);
    tA = setTensorLayoutDimensionNV(tA, p.M, p.K);
    tB = setTensorLayoutDimensionNV(tB, p.N, p.K);
    tD = setTensorLayoutDimensionNV(tD, p.N, p.M);
    tA = setTensorLayoutStrideNV(tA, p.K, 1);
    tB = setTensorLayoutStrideNV(tB, p.K, 1);
    tD = setTensorLayoutStrideNV(tD, p.M, 1);
    tensorViewNV<2, false, 1, 0> transposed = createTensorViewNV(2, false, 1, 0);

    const bool whole = (ir + 1) * BM <= p.M && (ic + 1) * BN <= p.N;
    ACC(float) sum = ACC(float)(0.0);
    if (whole) {
        coopMatLoad(sum, c, ic * BN * p.M + ir * BM, p.M, gl_CooperativeMatrixLayoutColumnMajor);
    }
    for (uint k = 0; k < p.K; k += BK) {
        coopmat<float16_t, gl_ScopeWorkgroup, BM, BK, gl_MatrixUseA> ma;
        coopmat<float16_t, gl_ScopeWorkgroup, BK, BN, gl_MatrixUseB> mb;
        coopMatLoadTensorNV(ma, a, 0, sliceTensorLayoutNV(tA, ir * BM, BM, k, BK));
        coopMatLoadTensorNV(mb, b, 0, sliceTensorLayoutNV(tB, ic * BN, BN, k, BK), transposed);
        sum = coopMatMulAdd(ma, mb, sum);
    }
    for (int i = 0; i < sum.length(); ++i) {
        sum[i] = clamp(sum[i], -8.0, 8.0);
    }
    ACC(float16_t) md = ACC(float16_t)(sum);
    coopMatStoreTensorNV(md, d, 0, sliceTensorLayoutNV(tD, ic * BN, BN, ir * BM, BM), transposed);
    if (whole) {
        coopMatStore(sum, s, ir * BM * p.N + ic * BN, p.N, gl_CooperativeMatrixLayoutRowMajor);
        coopMatStore(sum, s, p.M * p.N + ic * BN * p.M + ir * BM, p.M, gl_CooperativeMatrixLayoutColumnMajor);
    }
}
