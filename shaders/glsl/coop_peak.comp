#version 450
// Cooperative-matrix throughput ceiling: each subgroup multiplies one A and one B fragment into
// eight independent accumulators ITERS times, with no memory traffic in the loop. What this
// reaches is the most any GEMM built on the device's cooperative matrices can reach.
// Build defines: ELEM_F16 or ELEM_S8; ACC_F16.
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_control_flow_attributes : enable
#ifdef ELEM_S8
#extension GL_NV_integer_cooperative_matrix : require
#define ATYPE icoopmatNV<8, gl_ScopeSubgroup, 16, 32>
#define BTYPE icoopmatNV<8, gl_ScopeSubgroup, 32, 16>
#define CTYPE icoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#define A_STRIDE 2u
#else
#define ATYPE fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#define BTYPE fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#ifdef ACC_F16
#define CTYPE fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#else
#define CTYPE fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#endif
#define A_STRIDE 2u
#endif

layout(local_size_x = 256) in;
layout(constant_id = 0) const uint ITERS = 1024;
layout(set = 0, binding = 0) readonly buffer In { uvec4 src[]; };
layout(set = 0, binding = 1) buffer Out { uvec4 dst[]; };

void main() {
    ATYPE fa;
    BTYPE fb;
    coopMatLoadNV(fa, src, 0, A_STRIDE, false);
    coopMatLoadNV(fb, src, 32, A_STRIDE, false);
    CTYPE acc[8];
    [[unroll]] for (uint j = 0; j < 8u; j++) acc[j] = CTYPE(0.0);
    for (uint i = 0; i < ITERS; i++) {
        [[unroll]] for (uint j = 0; j < 8u; j++) acc[j] = coopMatMulAddNV(fa, fb, acc[j]);
    }
    // Every subgroup stores the sum of its accumulators (the results must stay observable).
    [[unroll]] for (uint j = 1; j < 8u; j++) acc[0] = acc[0] + acc[j];
    uint subgroup = gl_WorkGroupID.x * 8u + gl_LocalInvocationID.x / 32u;
    coopMatStoreNV(acc[0], dst, subgroup * 64u, 4u, false);
}
