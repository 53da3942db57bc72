#version 450 core
#pragma use_vulkan_memory_model
// D = alpha * A * B + beta * C with f16 operands and f16 results, written the way
// vk_cooperative_matrix_perf's register-tiled kernel is: one sub-group per workgroup holding
// TILE_M x TILE_N of D in lM x lN fragments, every fragment loaded straight through buffer
// references that a uniform block holds (declared with instance names, which glslang turns into
// unused storage-buffer variables at binding 0), B's layout a specialization constant, and
// alpha and beta float specialization constants converted to f16 (OpSpecConstantOp FConvert).
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable
#extension GL_EXT_buffer_reference : enable
#extension GL_EXT_control_flow_attributes : enable
#extension GL_EXT_scalar_block_layout : enable

layout(constant_id = 0) const uint lM = 16;
layout(constant_id = 1) const uint lN = 16;
layout(constant_id = 2) const uint lK = 16;
layout(constant_id = 3) const uint SUBGROUP = 32;
layout(constant_id = 4) const uint TILE_M = 32;
layout(constant_id = 5) const uint TILE_N = 32;
layout(constant_id = 6) const uint K = 64;
layout(constant_id = 7) const uint strideA = 64;
layout(constant_id = 8) const uint strideB = 64;
layout(constant_id = 9) const uint strideC = 64;
layout(constant_id = 10) const uint strideD = 64;
layout(constant_id = 11) const float alpha = 1.0;
layout(constant_id = 12) const float beta = 1.0;
layout(constant_id = 13) const bool BColMajor = false;

layout(local_size_x_id = 3) in;

layout(buffer_reference) buffer InputA { float16_t x[]; } inputA;
layout(buffer_reference) buffer InputB { float16_t x[]; } inputB;
layout(buffer_reference) buffer InputC { float16_t x[]; } inputC;
layout(buffer_reference) buffer Output { float16_t x[]; } outputO;
layout(set = 0, binding = 0, std430) uniform Params { InputA inputA; InputB inputB; InputC inputC; Output outputO; } params;

const uint C_ROWS = TILE_M / lM;
const uint C_COLS = TILE_N / lN;
coopmat<float16_t, gl_ScopeSubgroup, lM, lN, gl_MatrixUseAccumulator> acc[C_ROWS][C_COLS];

uint offsetOf(uint i, uint j, uint stride, bool colMajor) {
    return colMajor ? stride * j + i : stride * i + j;
}

void main() {
    uvec2 tile = gl_WorkGroupID.xy;
    InputA a = params.inputA;
    InputB b = params.inputB;
    InputC c = params.inputC;
    Output d = params.outputO;

    [[unroll]] for (uint i = 0; i < C_ROWS; ++i) {
        [[unroll]] for (uint j = 0; j < C_COLS; ++j) {
            acc[i][j] = coopmat<float16_t, gl_ScopeSubgroup, lM, lN, gl_MatrixUseAccumulator>(0.0);
        }
    }
    for (uint k = 0; k < K; k += lK) {
        coopmat<float16_t, gl_ScopeSubgroup, lM, lK, gl_MatrixUseA> fa[C_ROWS];
        [[unroll]] for (uint i = 0; i < C_ROWS; ++i) {
            coopMatLoad(fa[i], a.x, offsetOf(TILE_M * tile.y + lM * i, k, strideA, false), strideA, gl_CooperativeMatrixLayoutRowMajor);
        }
        [[unroll]] for (uint j = 0; j < C_COLS; ++j) {
            coopmat<float16_t, gl_ScopeSubgroup, lK, lN, gl_MatrixUseB> fb;
            coopMatLoad(fb, b.x, offsetOf(k, TILE_N * tile.x + lN * j, strideB, BColMajor), strideB,
                        BColMajor ? gl_CooperativeMatrixLayoutColumnMajor : gl_CooperativeMatrixLayoutRowMajor);
            [[unroll]] for (uint i = 0; i < C_ROWS; ++i) {
                acc[i][j] = coopMatMulAdd(fa[i], fb, acc[i][j]);
            }
        }
    }
    [[unroll]] for (uint i = 0; i < C_ROWS; ++i) {
        [[unroll]] for (uint j = 0; j < C_COLS; ++j) {
            uint gi = TILE_M * tile.y + lM * i;
            uint gj = TILE_N * tile.x + lN * j;
            coopmat<float16_t, gl_ScopeSubgroup, lM, lN, gl_MatrixUseAccumulator> fc;
            coopMatLoad(fc, c.x, offsetOf(gi, gj, strideC, false), strideC, gl_CooperativeMatrixLayoutRowMajor);
            acc[i][j] = float16_t(alpha) * acc[i][j] + float16_t(beta) * fc;
            coopMatStore(acc[i][j], d.x, offsetOf(gi, gj, strideD, false), strideD, gl_CooperativeMatrixLayoutRowMajor);
        }
    }
}
