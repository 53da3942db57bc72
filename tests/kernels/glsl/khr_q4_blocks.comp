#version 450
#extension GL_EXT_control_flow_attributes : enable
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
// D = dequant(A) * B with A in llama.cpp's q4_0 blocks (an f16 scale and 16 bytes of 4-bit
// quants, 18-byte array stride): blocks are read whole and dequantized into f16 workgroup
// memory, fragments are loaded from there and from B (f16, K x 16 row-major). A is 16 x K in
// blocks of 32 along K; D is 16 x 16 f32 row-major.
layout(local_size_x_id = 0) in;
struct block_q4_0 { float16_t d; uint8_t qs[16]; };
layout(binding = 0) readonly buffer A { block_q4_0 data_a[]; };
layout(binding = 1) readonly buffer B { float16_t data_b[]; };
layout(binding = 2) writeonly buffer D { float data_d[]; };
layout(push_constant) uniform P { uint K; } p;
shared float16_t buf_a[16 * 40];
void main() {
    const uint tid = gl_LocalInvocationIndex;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc = coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    for (uint kb = 0; kb < p.K; kb += 32) {
        barrier();
        for (uint i = tid; i < 16 * 16; i += gl_WorkGroupSize.x) {
            uint row = i / 16, iqs = i % 16;
            block_q4_0 blk = data_a[row * (p.K / 32) + kb / 32];
            float d = float(blk.d);
            uint q = uint(blk.qs[iqs]);
            buf_a[row * 40 + iqs] = float16_t((float(q & 0xF) - 8.0) * d);
            buf_a[row * 40 + iqs + 16] = float16_t((float(q >> 4) - 8.0) * d);
        }
        barrier();
        for (uint kk = 0; kk < 32; kk += 16) {
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a;
            coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b;
            coopMatLoad(a, buf_a, kk, 40, gl_CooperativeMatrixLayoutRowMajor);
            coopMatLoad(b, data_b, (kb + kk) * 16, 16, gl_CooperativeMatrixLayoutRowMajor);
            acc = coopMatMulAdd(a, b, acc);
        }
    }
    coopMatStore(acc, data_d, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
