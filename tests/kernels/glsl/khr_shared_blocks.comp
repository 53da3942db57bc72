#version 460
// A fragment staged through aliased workgroup blocks (GL_EXT_shared_memory_block, as llama.cpp's
// multi-token flash-attention decode kernels write it): A (M x 16 f16, row-major) is copied into
// workgroup memory as uvec4 words through one block and loaded as a matrix of halves through
// another that views the same bytes; B (16 x 16 f16) and C (M x 16 f32) come from buffers, and
// C = A * B + C is stored back in place. One sub-group per workgroup (local size: specialization
// constant 0); M is specialization constant 1 (8: a shape the H100 pads; 16: one it lists).
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shared_memory_block : require

layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint M = 8;

layout(binding = 0) readonly buffer A { uvec4 a_words[]; };
layout(binding = 1) readonly buffer B { float16_t b[]; };
layout(binding = 2) buffer C { float c[]; };

shared words_block { uvec4 words[M * 2]; } staged_words;
shared halves_block { float16_t halves[M * 16]; } staged_halves;

void main() {
    for (uint i = gl_LocalInvocationIndex; i < M * 2; i += gl_WorkGroupSize.x) {
        staged_words.words[i] = a_words[i];
    }
    barrier();
    coopmat<float16_t, gl_ScopeSubgroup, M, 16, gl_MatrixUseA> ma;
    coopMatLoad(ma, staged_halves.halves, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> mb;
    coopMatLoad(mb, b, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    coopmat<float, gl_ScopeSubgroup, M, 16, gl_MatrixUseAccumulator> mc;
    coopMatLoad(mc, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    mc = coopMatMulAdd(ma, mb, mc);
    coopMatStore(mc, c, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
}
