// Session 14 probe (benches/results/h100-2026-11-22-sweep.txt, "Session 14"): a GEMM with no shared
// memory and no barriers, reading operands that a host-side pass had packed in fragment order.
// Packing (done on the host by the probe): A as [M/16][K/LK] fragments, B as [N/16][K/LK]; each
// fragment is 32 lanes x 16 bytes, lane l = 4g + t holding element e at
//   f16 (LK 16): row/column g + 8*(e/4), k 2t + e%2 + 8*((e/2)%2)
//   s8  (LK 32): row/column g + 8*(e/8), k 4t + e%4 + 16*((e/4)%2)
// (the driver's mma.sync fragment layout, probes-session12/fragment_layout.comp), so that every
// fragment is one 16-byte load per lane and a subgroup's load covers 512 contiguous bytes.
// Built with glslang 15.2: -DBM -DBN -DWARPS_M -DWARPS_N -DPF (K steps in registers), -DACC_F16 or
// -DS8 (with -DSHIFT, -DBYTES or -DI8V4 for the ways 8-bit elements were put into fragments).
#version 450
// Probe: cooperative-matrix GEMM from fragment-packed operands, no shared memory, no barriers.
// A packed as [M/16][K/LK] fragments, B as [N/16][K/LK]; fragment = 32 lanes x 16 bytes, lane l
// holding exactly the elements the driver's fragment layout gives it. One uvec4 load per lane per
// fragment: a subgroup's load covers 512 contiguous bytes.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_control_flow_attributes : enable
#extension GL_KHR_shader_subgroup_basic : require
#ifdef S8
#define LK 32
#define AT coopmat<int8_t, gl_ScopeSubgroup, 16, 32, gl_MatrixUseA>
#define BT coopmat<int8_t, gl_ScopeSubgroup, 32, 16, gl_MatrixUseB>
#define CT coopmat<int32_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#else
#define LK 16
#define AT coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define BT coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#ifdef ACC_F16
#define CT coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#else
#define CT coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#endif
#endif
#ifndef PF
#define PF 2
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
#if defined(BYTES)
layout(set = 0, binding = 0) readonly buffer ABuf { int8_t a8[]; };
layout(set = 0, binding = 1) readonly buffer BBuf { int8_t b8[]; };
#elif defined(I8V4)
layout(set = 0, binding = 0) readonly buffer ABuf { i8vec4 a8[]; };
layout(set = 0, binding = 1) readonly buffer BBuf { i8vec4 b8[]; };
#else
layout(set = 0, binding = 0) readonly buffer ABuf { uvec4 a[]; };
layout(set = 0, binding = 1) readonly buffer BBuf { uvec4 b[]; };
#endif
#if defined(ACC_F16)
layout(set = 0, binding = 2) writeonly buffer CBuf { float16_t c[]; };
#elif defined(S8)
layout(set = 0, binding = 2) writeonly buffer CBuf { int c[]; };
#else
layout(set = 0, binding = 2) writeonly buffer CBuf { float c[]; };
#endif
layout(set = 0, binding = 3) readonly buffer Params { uint a_batch, b_batch, c_batch, group_m; } p;

CT acc[TM][TN];

void setA(inout AT m, uvec4 v) {
#if defined(S8) && defined(SHIFT)
    [[unroll]] for (int w = 0; w < 4; w++) { [[unroll]] for (int e = 0; e < 4; e++) m[4 * w + e] = int8_t(int(v[w] << (24 - 8 * e)) >> 24); }
#elif defined(S8)
    [[unroll]] for (int w = 0; w < 4; w++) { i8vec4 q = unpack8(int(v[w])); [[unroll]] for (int e = 0; e < 4; e++) m[4 * w + e] = q[e]; }
#else
    [[unroll]] for (int w = 0; w < 4; w++) { f16vec2 q = unpackFloat2x16(v[w]); m[2 * w] = q.x; m[2 * w + 1] = q.y; }
#endif
}
void setB(inout BT m, uvec4 v) {
#if defined(S8) && defined(SHIFT)
    [[unroll]] for (int w = 0; w < 4; w++) { [[unroll]] for (int e = 0; e < 4; e++) m[4 * w + e] = int8_t(int(v[w] << (24 - 8 * e)) >> 24); }
#elif defined(S8)
    [[unroll]] for (int w = 0; w < 4; w++) { i8vec4 q = unpack8(int(v[w])); [[unroll]] for (int e = 0; e < 4; e++) m[4 * w + e] = q[e]; }
#else
    [[unroll]] for (int w = 0; w < 4; w++) { f16vec2 q = unpackFloat2x16(v[w]); m[2 * w] = q.x; m[2 * w + 1] = q.y; }
#endif
}

#if defined(BYTES) || defined(I8V4)
void ldA(inout AT m, uint at) {
#ifdef BYTES
    [[unroll]] for (uint e = 0; e < 16; e++) m[e] = a8[at * 16u + e];
#else
    [[unroll]] for (uint w = 0; w < 4; w++) { i8vec4 q = a8[at * 4u + w]; [[unroll]] for (int e = 0; e < 4; e++) m[4 * w + e] = q[e]; }
#endif
}
void ldB(inout BT m, uint at) {
#ifdef BYTES
    [[unroll]] for (uint e = 0; e < 16; e++) m[e] = b8[at * 16u + e];
#else
    [[unroll]] for (uint w = 0; w < 4; w++) { i8vec4 q = b8[at * 4u + w]; [[unroll]] for (int e = 0; e < 4; e++) m[4 * w + e] = q[e]; }
#endif
}
#endif
void main() {
    uint tid = gl_LocalInvocationID.x;
    uint warp = tid / 32u, lane = tid % 32u;
    uint tiles_n = gl_NumWorkGroups.x;
    uint pid = gl_WorkGroupID.y * tiles_n + gl_WorkGroupID.x;
    uint gm = max(p.group_m, 8u);
    uint first_m = (pid / (gm * tiles_n)) * gm;
    uint rows = min(gl_NumWorkGroups.y - first_m, gm);
    uint in_group = pid - first_m * tiles_n;
    uint m0 = (first_m + in_group % rows) * BM + (warp / WARPS_N) * WM;
    uint n0 = (in_group / rows) * BN + (warp % WARPS_N) * WN;
    const uint KT = K / LK;
    // uvec4 index of fragment (row tile, k tile 0) for this lane.
    uint a_at = (m0 / 16u) * KT * 32u + lane;
    uint b_at = (n0 / 16u) * KT * 32u + lane;
    const uint AS = KT * 32u;   // next row tile
#if defined(BYTES) || defined(I8V4)
    AT fa[PF][TM]; BT fb[PF][TN];
    [[unroll]] for (uint s = 0; s < PF; s++) {
        [[unroll]] for (uint i = 0; i < TM; i++) ldA(fa[s][i], a_at + i * AS + s * 32u);
        [[unroll]] for (uint j = 0; j < TN; j++) ldB(fb[s][j], b_at + j * AS + s * 32u);
    }
    [[unroll]] for (uint i = 0; i < TM; i++) [[unroll]] for (uint j = 0; j < TN; j++) acc[i][j] = CT(0);
    for (uint kt = 0; kt < KT; kt += PF) {
        [[unroll]] for (uint s = 0; s < PF; s++) {
            if (KT % PF == 0u || kt + s < KT) {
            [[unroll]] for (uint i = 0; i < TM; i++) [[unroll]] for (uint j = 0; j < TN; j++) acc[i][j] = coopMatMulAdd(fa[s][i], fb[s][j], acc[i][j]);
            }
            uint kn = min(kt + s + PF, KT - 1u) * 32u;
            [[unroll]] for (uint i = 0; i < TM; i++) ldA(fa[s][i], a_at + i * AS + kn);
            [[unroll]] for (uint j = 0; j < TN; j++) ldB(fb[s][j], b_at + j * AS + kn);
        }
    }
#else
    uvec4 ra[PF][TM], rb[PF][TN];
    [[unroll]] for (uint s = 0; s < PF; s++) {
        [[unroll]] for (uint i = 0; i < TM; i++) ra[s][i] = a[a_at + i * AS + s * 32u];
        [[unroll]] for (uint j = 0; j < TN; j++) rb[s][j] = b[b_at + j * AS + s * 32u];
    }
    [[unroll]] for (uint i = 0; i < TM; i++) [[unroll]] for (uint j = 0; j < TN; j++) acc[i][j] = CT(0);
    for (uint kt = 0; kt < KT; kt += PF) {
        [[unroll]] for (uint s = 0; s < PF; s++) {
            AT fa[TM]; BT fb[TN];
            [[unroll]] for (uint i = 0; i < TM; i++) setA(fa[i], ra[s][i]);
            [[unroll]] for (uint j = 0; j < TN; j++) setB(fb[j], rb[s][j]);
            uint kn = min(kt + s + PF, KT - 1u) * 32u;
            [[unroll]] for (uint i = 0; i < TM; i++) ra[s][i] = a[a_at + i * AS + kn];
            [[unroll]] for (uint j = 0; j < TN; j++) rb[s][j] = b[b_at + j * AS + kn];
            if (KT % PF == 0u || kt + s < KT) {
            [[unroll]] for (uint i = 0; i < TM; i++) [[unroll]] for (uint j = 0; j < TN; j++) acc[i][j] = coopMatMulAdd(fa[i], fb[j], acc[i][j]);
            }
        }
    }
#endif
    [[unroll]] for (uint i = 0; i < TM; i++) [[unroll]] for (uint j = 0; j < TN; j++) {
        uint at = (m0 + i * 16u) * C_LD + n0 + j * 16u;
        coopMatStore(acc[i][j], c, at, C_LD, gl_CooperativeMatrixLayoutRowMajor);
    }
}
