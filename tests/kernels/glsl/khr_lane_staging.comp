#version 460
#pragma use_vulkan_memory_model
// y = x W^T with W in blocks of 32 int8 weights sharing an f16 scale (the block-quantized
// layout ML runtimes store weights in: per block one halfword of scale, then 16 halfwords of
// byte pairs), written for sub-groups of 64: one sub-group per workgroup stages a 16x16 tile
// of x and of the dequantized W in workgroup memory, each lane taking every 64th element from
// its sub-group invocation id, multiplies the tiles as 16x16x16 f16 fragments (W's tile
// column-major) and copies the f32 result out through workgroup memory, bounds-checked; the
// sub-group then adds up a checksum of its tile (sum of |y| * 128) and its elected lane stores
// it. Helper functions do much of it: `weight`, the only reader of the weight buffer; `stage`,
// which reads the sub-group invocation id itself; `tile_checksum`, a sub-group reduction.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require

layout(local_size_x = 64) in;

layout(set = 0, binding = 0) readonly buffer X { float x[]; };
layout(set = 0, binding = 1) readonly buffer W { uint16_t w[]; };
layout(set = 0, binding = 2) writeonly buffer Y { float y[]; };
layout(set = 0, binding = 3) writeonly buffer T { uint tile_sums[]; };
layout(push_constant) uniform Sizes { uint M; uint K; uint N; } sizes;

shared float16_t xs[256];
shared float16_t ws[256];
shared float ys[256];

float weight(uint n, uint k) {
    const uint block = (n * (sizes.K / 32u) + k / 32u) * 17u;
    const float scale = unpackHalf2x16(uint(w[block])).x;
    const uint pair = uint(w[block + 1u + (k % 32u) / 2u]);
    const int q = bitfieldExtract(int(pair << (24u - 8u * (k & 1u))), 24, 8);
    return scale * float(q);
}

void stage(uint m0, uint n0, uint k0) {
    for (uint i = gl_SubgroupInvocationID; i < 256u; i += gl_SubgroupSize) {
        const uint r = i / 16u, c = i % 16u;
        xs[i] = float16_t(m0 + r < sizes.M ? x[(m0 + r) * sizes.K + k0 + c] : 0.0);
        ws[i] = float16_t(n0 + r < sizes.N ? weight(n0 + r, k0 + c) : 0.0);
    }
}

uint tile_checksum(uint part) {
    return subgroupAdd(part);
}

void main() {
    const uint lane = gl_SubgroupInvocationID;
    const uint m0 = gl_WorkGroupID.x * 16u;
    const uint n0 = gl_WorkGroupID.y * 16u;
    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> acc =
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
    for (uint k0 = 0u; k0 < sizes.K; k0 += 16u) {
        stage(m0, n0, k0);
        barrier();
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> a;
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> b;
        coopMatLoad(a, xs, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
        coopMatLoad(b, ws, 0, 16, gl_CooperativeMatrixLayoutColumnMajor);
        acc = coopMatMulAdd(a, b, acc);
        barrier();
    }
    coopMatStore(acc, ys, 0, 16, gl_CooperativeMatrixLayoutRowMajor);
    barrier();
    uint part = 0u;
    for (uint i = lane; i < 256u; i += 64u) {
        const uint r = i / 16u, c = i % 16u;
        if (m0 + r < sizes.M && n0 + c < sizes.N) {
            y[(m0 + r) * sizes.N + n0 + c] = ys[i];
            part += uint(abs(ys[i]) * 128.0);
        }
    }
    const uint total = tile_checksum(part);
    if (subgroupElect()) {
        tile_sums[gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x] = total;
    }
}
