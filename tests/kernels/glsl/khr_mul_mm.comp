#version 450
// D = alpha * A * B^T, written the way llama.cpp's cooperative-matrix `mul_mm` is: every size a
// specialization constant (the fragment shape TM x TN x TK included), f16 A and f32 B staged in
// workgroup memory as f16vec2 rows, fragments loaded from there, accumulators in a
// dynamically indexed array, an element-wise epilogue over `length()`, and three ways out: a
// direct column-major store where the tile is inside D and D's stride is a multiple of 4, a
// staging store through workgroup memory where only the stride is odd, and a guarded element copy
// at the edges. A is M x K row-major (stride_a), B is N x K row-major (stride_b), D is N x M
// row-major (stride_d), so D[n][m] = alpha * sum_k A[m][k] B[n][k].
#extension GL_EXT_control_flow_attributes : enable
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require

layout(local_size_x_id = 0, local_size_y = 1, local_size_z = 1) in;

layout(binding = 0) readonly buffer A { float16_t data_a[]; };
layout(binding = 1) readonly buffer B { float data_b[]; };
layout(binding = 2) writeonly buffer D { float data_d[]; };

layout(push_constant) uniform parameter {
    uint M;
    uint N;
    uint K;
    uint stride_a;
    uint stride_b;
    uint stride_d;
    float alpha;
} p;

layout(constant_id = 0) const uint BLOCK_SIZE = 128;
layout(constant_id = 1) const uint BM = 64;
layout(constant_id = 2) const uint BN = 64;
layout(constant_id = 3) const uint BK = 16;
layout(constant_id = 4) const uint WM = 32;
layout(constant_id = 5) const uint WN = 32;
layout(constant_id = 6) const uint TM = 16;
layout(constant_id = 7) const uint TN = 16;
layout(constant_id = 8) const uint TK = 16;
layout(constant_id = 9) const uint WARP = 32;

#define SHMEM_STRIDE (BK / 2 + 4)

shared f16vec2 buf_a[BM * SHMEM_STRIDE];
shared f16vec2 buf_b[BN * SHMEM_STRIDE];

const uint NUM_WARPS = BLOCK_SIZE / WARP;
shared float coopmat_stage[TM * TN * NUM_WARPS];

void main() {
    const uint blocks_m = (p.M + BM - 1) / BM;
    const uint ir = gl_WorkGroupID.x % blocks_m;
    const uint ic = gl_WorkGroupID.x / blocks_m;

    const uint warp_i = gl_LocalInvocationID.x / WARP;
    const uint tiw = gl_LocalInvocationID.x % WARP;
    const uint warp_r = warp_i % (BM / WM);
    const uint warp_c = warp_i / (BM / WM);

    const uint loadr = gl_LocalInvocationID.x % (BK / 2);
    const uint loadc = gl_LocalInvocationID.x / (BK / 2);
    const uint loadstride = BLOCK_SIZE / (BK / 2);

    const uint cms_per_row = WM / TM;
    const uint cms_per_col = WN / TN;

    coopmat<float16_t, gl_ScopeSubgroup, TM, TK, gl_MatrixUseA> cache_a;
    coopmat<float16_t, gl_ScopeSubgroup, TK, TN, gl_MatrixUseB> cache_b;
    coopmat<float, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator> sums[cms_per_row * cms_per_col];

    [[unroll]] for (uint i = 0; i < cms_per_row * cms_per_col; i++) {
        sums[i] = coopmat<float, gl_ScopeSubgroup, TM, TN, gl_MatrixUseAccumulator>(0.0f);
    }

    for (uint block = 0; block < p.K; block += BK) {
        [[unroll]] for (uint l = 0; l < BM; l += loadstride) {
            const uint row = ir * BM + loadc + l;
            const uint col = block + loadr * 2;
            f16vec2 v = f16vec2(0.0);
            if (row < p.M && col < p.K) {
                v.x = data_a[row * p.stride_a + col];
            }
            if (row < p.M && col + 1 < p.K) {
                v.y = data_a[row * p.stride_a + col + 1];
            }
            buf_a[(loadc + l) * SHMEM_STRIDE + loadr] = v;
        }
        [[unroll]] for (uint l = 0; l < BN; l += loadstride) {
            const uint row = ic * BN + loadc + l;
            const uint col = block + loadr * 2;
            f16vec2 v = f16vec2(0.0);
            if (row < p.N && col < p.K) {
                v.x = float16_t(data_b[row * p.stride_b + col]);
            }
            if (row < p.N && col + 1 < p.K) {
                v.y = float16_t(data_b[row * p.stride_b + col + 1]);
            }
            buf_b[(loadc + l) * SHMEM_STRIDE + loadr] = v;
        }

        barrier();

        [[unroll]] for (uint i = 0; i < BK; i += TK) {
            [[unroll]] for (uint cm_row = 0; cm_row < cms_per_row; cm_row++) {
                coopMatLoad(cache_a, buf_a, (warp_r * WM + cm_row * TM) * SHMEM_STRIDE + i / 2, SHMEM_STRIDE, gl_CooperativeMatrixLayoutRowMajor);
                [[unroll]] for (uint cm_col = 0; cm_col < cms_per_col; cm_col++) {
                    coopMatLoad(cache_b, buf_b, (warp_c * WN + cm_col * TN) * SHMEM_STRIDE + i / 2, SHMEM_STRIDE, gl_CooperativeMatrixLayoutColumnMajor);
                    sums[cm_col * cms_per_row + cm_row] = coopMatMulAdd(cache_a, cache_b, sums[cm_col * cms_per_row + cm_row]);
                }
            }
        }

        barrier();
    }

    [[unroll]] for (uint i = 0; i < cms_per_row * cms_per_col; i++) {
        for (uint e = 0; e < sums[i].length(); e++) {
            sums[i][e] *= p.alpha;
        }
    }

    const uint dr = ir * BM + warp_r * WM;
    const uint dc = ic * BN + warp_c * WN;
    const bool is_aligned = p.stride_d % 4 == 0;

    [[unroll]] for (uint cm_row = 0; cm_row < cms_per_row; cm_row++) {
        [[unroll]] for (uint cm_col = 0; cm_col < cms_per_col; cm_col++) {
            const uint r0 = dr + cm_row * TM;
            const uint c0 = dc + cm_col * TN;
            const bool is_in_bounds = r0 + TM <= p.M && c0 + TN <= p.N;
            if (is_aligned && is_in_bounds) {
                coopMatStore(sums[cm_col * cms_per_row + cm_row], data_d, c0 * p.stride_d + r0, p.stride_d, gl_CooperativeMatrixLayoutColumnMajor);
            } else {
                coopMatStore(sums[cm_col * cms_per_row + cm_row], coopmat_stage, warp_i * TM * TN, TM, gl_CooperativeMatrixLayoutColumnMajor);
                subgroupBarrier();
                for (uint e = tiw; e < TM * TN; e += WARP) {
                    const uint row = e % TM;
                    const uint col = e / TM;
                    if (r0 + row < p.M && c0 + col < p.N) {
                        data_d[(c0 + col) * p.stride_d + r0 + row] = coopmat_stage[warp_i * TM * TN + e];
                    }
                }
                subgroupBarrier();
            }
        }
    }
}
