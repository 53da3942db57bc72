#version 450 core
#pragma use_vulkan_memory_model
// D = alpha * A * B + beta * C written the way vk_cooperative_matrix_perf's shared-memory kernel
// is: operands behind buffer references from a uniform block, f16 tiles copied to workgroup
// memory as uvec4 (8 halves per word) with padded rows, fragments loaded from there through
// the uvec4 arrays, a private 2D array of accumulators, B's layout and alpha, beta and every size
// specialization constants, and C and D loaded and stored through the references. Four
// sub-groups (2 x 2) per workgroup, each C_ROWS x C_COLS fragments of lM x lN.
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_buffer_reference : enable
#extension GL_EXT_control_flow_attributes : enable
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_EXT_scalar_block_layout : enable

layout(constant_id = 0) const uint lM = 16;
layout(constant_id = 1) const uint lN = 16;
layout(constant_id = 2) const uint lK = 16;
layout(constant_id = 3) const uint TILE_M = 64;
layout(constant_id = 4) const uint TILE_N = 64;
layout(constant_id = 5) const uint TILE_K = 32;
layout(constant_id = 6) const uint K = 64;
layout(constant_id = 7) const uint strideA = 64;
layout(constant_id = 8) const uint strideB = 64;
layout(constant_id = 9) const uint strideC = 64;
layout(constant_id = 10) const uint strideD = 64;
layout(constant_id = 11) const float alpha = 1.0;
layout(constant_id = 12) const float beta = 1.0;
layout(constant_id = 13) const bool BColMajor = false;
layout(constant_id = 14) const uint INVOCATIONS = 128;

layout(local_size_x_id = 14) in;

layout(buffer_reference) buffer InputA { float16_t x[]; };
layout(buffer_reference) buffer InputC { float x[]; };
layout(buffer_reference) buffer InputV4 { uvec4 x[]; };
layout(set = 0, binding = 0, std430) uniform Params { InputV4 inputA; InputV4 inputB; InputC inputC; InputC outputO; } params;

const uint ELEMENTS_PER_VEC4 = 8;
const uint ROW_PAD_SH = ELEMENTS_PER_VEC4;

// A tile: TILE_M rows of TILE_K; B tile: TILE_K rows of TILE_N (or TILE_N columns of TILE_K).
const uint A_ROW_SH = (TILE_K + ROW_PAD_SH) / ELEMENTS_PER_VEC4;
const uint B_ROW_SH = ((BColMajor ? TILE_K : TILE_N) + ROW_PAD_SH) / ELEMENTS_PER_VEC4;
shared uvec4 Ash[TILE_M * A_ROW_SH];
shared uvec4 Bsh[(BColMajor ? TILE_N : TILE_K) * B_ROW_SH];

const uint C_ROWS = TILE_M / 2 / lM;
const uint C_COLS = TILE_N / 2 / lN;
coopmat<float, gl_ScopeSubgroup, lM, lN, gl_MatrixUseAccumulator> result[C_ROWS][C_COLS];

const int layoutB = BColMajor ? gl_CooperativeMatrixLayoutColumnMajor : gl_CooperativeMatrixLayoutRowMajor;

uint coordToOffset(uint i, uint j, uint stride, bool colMajor) {
    return colMajor ? (stride * j + i) : (stride * i + j);
}

void main() {
    uvec2 tileID = uvec2(gl_WorkGroupID.xy);
    uvec2 warpInTile = uvec2(gl_SubgroupID % 2, gl_SubgroupID / 2);

    [[unroll]] for (uint i = 0; i < C_ROWS; ++i) {
        [[unroll]] for (uint j = 0; j < C_COLS; ++j) {
            result[i][j] = coopmat<float, gl_ScopeSubgroup, lM, lN, gl_MatrixUseAccumulator>(0.0);
        }
    }

    for (uint chunkK = 0; chunkK < K; chunkK += TILE_K) {
        // Global -> shared, one uvec4 (8 halves) per copy.
        [[unroll]] for (uint v = gl_LocalInvocationID.x; v < TILE_M * TILE_K / ELEMENTS_PER_VEC4; v += INVOCATIONS) {
            uint row = v / (TILE_K / ELEMENTS_PER_VEC4);
            uint col = v % (TILE_K / ELEMENTS_PER_VEC4);
            uint gi = TILE_M * tileID.y + row;
            uint gk = chunkK / ELEMENTS_PER_VEC4 + col;
            Ash[row * A_ROW_SH + col] = params.inputA.x[gi * strideA / ELEMENTS_PER_VEC4 + gk];
        }
        const uint B_MAJOR = BColMajor ? TILE_N : TILE_K;
        const uint B_MINOR = BColMajor ? TILE_K : TILE_N;
        [[unroll]] for (uint v = gl_LocalInvocationID.x; v < B_MAJOR * B_MINOR / ELEMENTS_PER_VEC4; v += INVOCATIONS) {
            uint major = v / (B_MINOR / ELEMENTS_PER_VEC4);
            uint minor = v % (B_MINOR / ELEMENTS_PER_VEC4);
            uint g = BColMajor ? ((TILE_N * tileID.x + major) * strideB + chunkK) / ELEMENTS_PER_VEC4 + minor
                               : ((chunkK + major) * strideB + TILE_N * tileID.x) / ELEMENTS_PER_VEC4 + minor;
            Bsh[major * B_ROW_SH + minor] = params.inputB.x[g];
        }

        barrier();

        [[unroll]] for (uint k = 0; k < TILE_K / lK; ++k) {
            uint sk = lK * k;
            coopmat<float16_t, gl_ScopeSubgroup, lM, lK, gl_MatrixUseA> matA[C_ROWS];
            [[unroll]] for (uint i = 0; i < C_ROWS; ++i) {
                uint si = lM * (C_ROWS * warpInTile.y + i);
                coopMatLoad(matA[i], Ash, coordToOffset(si, sk, A_ROW_SH * ELEMENTS_PER_VEC4, false) / ELEMENTS_PER_VEC4, A_ROW_SH, gl_CooperativeMatrixLayoutRowMajor);
            }
            coopmat<float16_t, gl_ScopeSubgroup, lK, lN, gl_MatrixUseB> matB;
            [[unroll]] for (uint j = 0; j < C_COLS; ++j) {
                uint sj = lN * (C_COLS * warpInTile.x + j);
                coopMatLoad(matB, Bsh, coordToOffset(sk, sj, B_ROW_SH * ELEMENTS_PER_VEC4, BColMajor) / ELEMENTS_PER_VEC4, B_ROW_SH, layoutB);
                [[unroll]] for (uint i = 0; i < C_ROWS; ++i) {
                    result[i][j] = coopMatMulAdd(matA[i], matB, result[i][j]);
                }
            }
        }

        barrier();
    }

    [[unroll]] for (uint i = 0; i < C_ROWS; ++i) {
        uint gi = TILE_M * tileID.y + lM * (C_ROWS * warpInTile.y + i);
        [[unroll]] for (uint j = 0; j < C_COLS; ++j) {
            uint gj = TILE_N * tileID.x + lN * (C_COLS * warpInTile.x + j);
            coopmat<float, gl_ScopeSubgroup, lM, lN, gl_MatrixUseAccumulator> matC;
            coopMatLoad(matC, params.inputC.x, coordToOffset(gi, gj, strideC, false), strideC, gl_CooperativeMatrixLayoutRowMajor);
            result[i][j] = alpha * result[i][j] + beta * matC;
            coopMatStore(result[i][j], params.outputO.x, coordToOffset(gi, gj, strideD, false), strideD, gl_CooperativeMatrixLayoutRowMajor);
        }
    }
}
