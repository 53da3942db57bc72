#version 450
// Probe: cooperative-matrix GEMM without shared memory. C = A * B^T-stored (A and B both
// k-contiguous). Each invocation loads its own fragment elements straight from global memory with
// 8-byte loads, relying on the NVIDIA fragment layout and a permutation of K inside each MMA step.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_control_flow_attributes : enable
#extension GL_KHR_shader_subgroup_basic : require
#ifdef S8
#define LK 32
#define EPB 8u      // elements per 8 bytes
#define AT coopmat<int8_t, gl_ScopeSubgroup, 16, 32, gl_MatrixUseA>
#define BT coopmat<int8_t, gl_ScopeSubgroup, 32, 16, gl_MatrixUseB>
#define CT coopmat<int32_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#define HALF 8
#else
#define LK 16
#define EPB 4u
#define AT coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define BT coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#ifdef ACC_F16
#define CT coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#else
#define CT coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#endif
#define HALF 4
#endif
#define WM (BM / WARPS_M)
#define WN (BN / WARPS_N)
#define TM (WM / 16)
#define TN (WN / 16)
layout(local_size_x = WARPS_M * WARPS_N * 32) in;
layout(constant_id = 0) const uint K = 16;
layout(constant_id = 1) const uint A_LD = 16;
layout(constant_id = 2) const uint B_LD = 16;
layout(constant_id = 3) const uint C_LD = 16;
layout(set = 0, binding = 0) readonly buffer ABuf { uvec2 a[]; };
layout(set = 0, binding = 1) readonly buffer BBuf { uvec2 b[]; };
#if defined(ACC_F16) || defined(OUT_F16)
layout(set = 0, binding = 2) writeonly buffer CBuf { float16_t c[]; };
#elif defined(S8)
layout(set = 0, binding = 2) writeonly buffer CBuf { int c[]; };
#else
layout(set = 0, binding = 2) writeonly buffer CBuf { float c[]; };
#endif
layout(set = 0, binding = 3) readonly buffer Params { uint a_batch, b_batch, c_batch, group_m; } p;

CT acc[TM][TN];

void setA(inout AT m, uvec2 lo, uvec2 hi) {
#ifdef S8
    i8vec4 v0 = unpack8(int(lo.x)), v1 = unpack8(int(lo.y)), v2 = unpack8(int(hi.x)), v3 = unpack8(int(hi.y));
    [[unroll]] for (int e = 0; e < 4; e++) { m[e] = v0[e]; m[4 + e] = v1[e]; m[8 + e] = v2[e]; m[12 + e] = v3[e]; }
#else
    f16vec2 v0 = unpackFloat2x16(lo.x), v1 = unpackFloat2x16(lo.y), v2 = unpackFloat2x16(hi.x), v3 = unpackFloat2x16(hi.y);
    m[0] = v0.x; m[1] = v0.y; m[2] = v1.x; m[3] = v1.y; m[4] = v2.x; m[5] = v2.y; m[6] = v3.x; m[7] = v3.y;
#endif
}
void setB(inout BT m, uvec2 lo, uvec2 hi) {
#ifdef S8
    i8vec4 v0 = unpack8(int(lo.x)), v1 = unpack8(int(lo.y)), v2 = unpack8(int(hi.x)), v3 = unpack8(int(hi.y));
    [[unroll]] for (int e = 0; e < 4; e++) { m[e] = v0[e]; m[4 + e] = v1[e]; m[8 + e] = v2[e]; m[12 + e] = v3[e]; }
#else
    f16vec2 v0 = unpackFloat2x16(lo.x), v1 = unpackFloat2x16(lo.y), v2 = unpackFloat2x16(hi.x), v3 = unpackFloat2x16(hi.y);
    m[0] = v0.x; m[1] = v0.y; m[2] = v1.x; m[3] = v1.y; m[4] = v2.x; m[5] = v2.y; m[6] = v3.x; m[7] = v3.y;
#endif
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint warp = tid / 32u, lane = tid % 32u;
    uint g = lane / 4u, t = lane % 4u;
    uint tiles_n = gl_NumWorkGroups.x;
    uint pid = gl_WorkGroupID.y * tiles_n + gl_WorkGroupID.x;
    uint gm = max(p.group_m, 1u);
    uint first_m = (pid / (gm * tiles_n)) * gm;
    uint rows = min(gl_NumWorkGroups.y - first_m, gm);
    uint in_group = pid - first_m * tiles_n;
    uint m0 = (first_m + in_group % rows) * BM + (warp / WARPS_N) * WM;
    uint n0 = (in_group / rows) * BN + (warp % WARPS_N) * WN;
    // In uvec2 units: row r, step k0 (elements), thread t's 8 bytes.
    uint a_at = ((m0 + g) * A_LD) / EPB + t;
    uint b_at = ((n0 + g) * B_LD) / EPB + t;
    const uint AR = 8u * A_LD / EPB, BR = 8u * B_LD / EPB;   // 8 rows
    uvec2 ra[TM][2], rb[TN][2];
    [[unroll]] for (uint i = 0; i < TM; i++) { ra[i][0] = a[a_at + (2 * i) * AR]; ra[i][1] = a[a_at + (2 * i + 1) * AR]; }
    [[unroll]] for (uint j = 0; j < TN; j++) { rb[j][0] = b[b_at + (2 * j) * BR]; rb[j][1] = b[b_at + (2 * j + 1) * BR]; }
    [[unroll]] for (uint i = 0; i < TM; i++) [[unroll]] for (uint j = 0; j < TN; j++) acc[i][j] = CT(0);
#ifndef PF_D
#define PF_D 4
#endif
    // L1 prefetch: one 4-byte load per 32-byte sector of the step PF_D steps ahead, kept in a
    // register until it is reissued (so no instruction waits on it) and folded into `sink`.
    uint pfa[PF_D][WM / 32], pfb[PF_D][WN / 32];
    uint sink = 0;
    uint pa = ((m0 + lane) * A_LD) / EPB, pb = ((n0 + lane) * B_LD) / EPB;
    const uint AR32 = 32u * A_LD / EPB, BR32 = 32u * B_LD / EPB;
    [[unroll]] for (uint d = 0; d < PF_D; d++) {
        uint kp = min(d * LK, K - LK) / EPB;
        [[unroll]] for (uint r = 0; r < WM / 32; r++) pfa[d][r] = a[pa + kp + r * AR32].x;
        [[unroll]] for (uint r = 0; r < WN / 32; r++) pfb[d][r] = b[pb + kp + r * BR32].x;
    }
    for (uint k00 = 0; k00 < K; k00 += LK * PF_D) {
      [[unroll]] for (uint d = 0; d < PF_D; d++) {
        uint k0 = k00 + d * LK;
        [[unroll]] for (uint r = 0; r < WM / 32; r++) sink ^= pfa[d][r];
        [[unroll]] for (uint r = 0; r < WN / 32; r++) sink ^= pfb[d][r];
        uint kp = min(k0 + PF_D * LK, K - LK) / EPB;
        [[unroll]] for (uint r = 0; r < WM / 32; r++) pfa[d][r] = a[pa + kp + r * AR32].x;
        [[unroll]] for (uint r = 0; r < WN / 32; r++) pfb[d][r] = b[pb + kp + r * BR32].x;
        AT fa[TM]; BT fb[TN];
        [[unroll]] for (uint i = 0; i < TM; i++) setA(fa[i], ra[i][0], ra[i][1]);
        [[unroll]] for (uint j = 0; j < TN; j++) setB(fb[j], rb[j][0], rb[j][1]);
        uint kn = min(k0 + LK, K - LK) / EPB;
        [[unroll]] for (uint i = 0; i < TM; i++) { ra[i][0] = a[a_at + kn + (2 * i) * AR]; ra[i][1] = a[a_at + kn + (2 * i + 1) * AR]; }
        [[unroll]] for (uint j = 0; j < TN; j++) { rb[j][0] = b[b_at + kn + (2 * j) * BR]; rb[j][1] = b[b_at + kn + (2 * j + 1) * BR]; }
        [[unroll]] for (uint i = 0; i < TM; i++) [[unroll]] for (uint j = 0; j < TN; j++) acc[i][j] = coopMatMulAdd(fa[i], fb[j], acc[i][j]);
      }
    }
    [[unroll]] for (uint d = 0; d < PF_D; d++) {
        [[unroll]] for (uint r = 0; r < WM / 32; r++) sink ^= pfa[d][r];
        [[unroll]] for (uint r = 0; r < WN / 32; r++) sink ^= pfb[d][r];
    }
    if (p.group_m == 0x7fffffffu && sink == 0x12345u) acc[0][0] = CT(1);
    [[unroll]] for (uint i = 0; i < TM; i++) [[unroll]] for (uint j = 0; j < TN; j++) {
        uint at = (m0 + i * 16u) * C_LD + n0 + j * 16u;
#if defined(OUT_F16)
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> h = coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(acc[i][j]);
        coopMatStore(h, c, at, C_LD, gl_CooperativeMatrixLayoutRowMajor);
#else
        coopMatStore(acc[i][j], c, at, C_LD, gl_CooperativeMatrixLayoutRowMajor);
#endif
    }
}
