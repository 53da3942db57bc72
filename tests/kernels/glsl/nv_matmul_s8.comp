#version 450
// C (s32, MxN) = A (s8, MxK row-major) * B (s8, KxN column-major) + C with 16x16x32 tiles.
#extension GL_NV_cooperative_matrix : require
#extension GL_NV_integer_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int32 : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer ABuf { int8_t a[]; };
layout(set = 0, binding = 1) readonly buffer BBuf { int8_t b[]; };
layout(set = 0, binding = 2) buffer CBuf { int c[]; };
layout(push_constant) uniform P { uint M; uint N; uint K; } p;
void main() {
    uint tm = gl_WorkGroupID.y * 16;
    uint tn = gl_WorkGroupID.x * 16;
    icoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc;
    coopMatLoadNV(acc, c, tm * p.N + tn, p.N, false);
    for (uint k = 0; k < p.K; k += 32) {
        icoopmatNV<8, gl_ScopeSubgroup, 16, 32> ma;
        icoopmatNV<8, gl_ScopeSubgroup, 32, 16> mb;
        coopMatLoadNV(ma, a, tm * p.K + k, p.K, false);
        coopMatLoadNV(mb, b, tn * p.K + k, p.K, true);
        acc = coopMatMulAddNV(ma, mb, acc);
    }
    coopMatStoreNV(acc, c, tm * p.N + tn, p.N, false);
}
