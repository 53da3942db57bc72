#version 450
// C (f32, MxN row-major) = A (f16, MxK row-major) * B (f16, KxN, row- or column-major by spec
// constant 0) + C, one subgroup per 16x16 tile of C. M, N, K multiples of 16.
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
layout(constant_id = 0) const bool B_COLUMN_MAJOR = false;
layout(set = 0, binding = 0) readonly buffer ABuf { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BBuf { float16_t b[]; };
layout(set = 0, binding = 2) buffer CBuf { float c[]; };
layout(push_constant) uniform P { uint M; uint N; uint K; float alpha; } p;
void main() {
    uint tm = gl_WorkGroupID.y * 16;
    uint tn = gl_WorkGroupID.x * 16;
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc;
    coopMatLoadNV(acc, c, tm * p.N + tn, p.N, false);
    for (uint k = 0; k < p.K; k += 16) {
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> ma;
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> mb;
        coopMatLoadNV(ma, a, tm * p.K + k, p.K, false);
        if (B_COLUMN_MAJOR) {
            coopMatLoadNV(mb, b, tn * p.K + k, p.K, B_COLUMN_MAJOR);
        } else {
            coopMatLoadNV(mb, b, k * p.N + tn, p.N, B_COLUMN_MAJOR);
        }
        acc = coopMatMulAddNV(ma, mb, acc);
    }
    acc = acc * p.alpha;
    coopMatStoreNV(acc, c, tm * p.N + tn, p.N, false);
}
