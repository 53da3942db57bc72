#version 450
// SPV_NV_cooperative_matrix values through functions, as GLSL helpers write them: fragments
// returned by loaders (one per Use), passed by value and `inout` to a multiply-accumulate
// helper, and an accumulator returned by an epilogue. One sub-group computes the 16x16 tile
// C = 0.5 * (A * B) + C, A 16xK and B Kx16 f16 row-major, C f32 row-major; K a multiple of 16.
#pragma use_vulkan_memory_model
#extension GL_NV_cooperative_matrix : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_memory_scope_semantics : require
layout(constant_id = 0) const uint SUBGROUP = 32;
layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) readonly buffer ABuf { float16_t a[]; };
layout(set = 0, binding = 1) readonly buffer BBuf { float16_t b[]; };
layout(set = 0, binding = 2) buffer CBuf { float c[]; };
layout(push_constant) uniform P { uint K; } p;

fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> load_a(uint k) {
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> m;
    coopMatLoadNV(m, a, k, p.K, false);
    return m;
}

fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> load_b(uint k) {
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> m;
    coopMatLoadNV(m, b, k * 16, 16, false);
    return m;
}

void accumulate(inout fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc, fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> x,
                fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> y) {
    acc = coopMatMulAddNV(x, y, acc);
}

fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> epilogue(fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc,
                                                   fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> init) {
    return acc * 0.5 + init;
}

void main() {
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc = fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>(0.0);
    for (uint k = 0; k < p.K; k += 16) {
        accumulate(acc, load_a(k), load_b(k));
    }
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> init;
    coopMatLoadNV(init, c, 0, 16, false);
    coopMatStoreNV(epilogue(acc, init), c, 0, 16, false);
}
