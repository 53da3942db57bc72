#version 450
// C (f16, 16x16) = A * A + 0 for one 16x16 f16 tile: one loaded matrix used as both A and B,
// and a constant accumulator, which the translator must split per Use.
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
layout(local_size_x = 32) in;
layout(set = 0, binding = 0) readonly buffer ABuf { float16_t a[]; };
layout(set = 0, binding = 1) buffer CBuf { float16_t c[]; };
void main() {
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> m;
    coopMatLoadNV(m, a, 0, 16, false);
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> acc = fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>(0.0);
    acc = coopMatMulAddNV(m, m, acc);
    for (int i = 0; i < acc.length(); i++) {
        acc[i] = acc[i] + float16_t(1.0);
    }
    coopMatStoreNV(acc, c, 0, 16, false);
}
