#version 450
// C (f32, MxN) = A * B + C like nv_matmul_f16, but each subgroup computes a 16x32 strip held in
// an array of two accumulators and loads B fragments into an array: arrays of matrices,
// indexed dynamically, as vk_cooperative_matrix_perf-style kernels write them.
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer ABuf { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BBuf { float16_t b[]; };
layout(set = 0, binding = 2) buffer CBuf { float c[]; };
layout(push_constant) uniform P { uint M; uint N; uint K; } p;
void main() {
    uint tm = gl_WorkGroupID.y * 16;
    uint tn = gl_WorkGroupID.x * 32;
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc[2];
    for (uint j = 0; j < 2; j++) {
        coopMatLoadNV(acc[j], c, tm * p.N + tn + j * 16, p.N, false);
    }
    for (uint k = 0; k < p.K; k += 16) {
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> ma;
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> mb[2];
        coopMatLoadNV(ma, a, tm * p.K + k, p.K, false);
        for (uint j = 0; j < 2; j++) {
            coopMatLoadNV(mb[j], b, k * p.N + tn + j * 16, p.N, false);
        }
        for (uint j = 0; j < 2; j++) {
            acc[j] = coopMatMulAddNV(ma, mb[j], acc[j]);
        }
    }
    for (uint j = 0; j < 2; j++) {
        coopMatStoreNV(acc[j], c, tm * p.N + tn + j * 16, p.N, false);
    }
}
