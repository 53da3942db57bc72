#version 450
// Probe: A fragments straight from global memory (16-byte loads, K permuted inside each step),
// B staged through shared memory with its K rows permuted the same way. f16 inputs, BK = 32.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_control_flow_attributes : enable
#extension GL_KHR_shader_subgroup_basic : require
#define BK 32
#define VEC 8
#define AT coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA>
#define BT coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB>
#ifdef ACC_F16
#define CT coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#else
#define CT coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>
#endif
#define WM (BM / WARPS_M)
#define WN (BN / WARPS_N)
#define TM (WM / 16)
#define TN (WN / 16)
#define THREADS (WARPS_M * WARPS_N * 32)
layout(local_size_x = THREADS) in;
layout(constant_id = 0) const uint K = 16;
layout(constant_id = 1) const uint A_LD = 16;
layout(constant_id = 2) const uint B_LD = 16;
layout(constant_id = 3) const uint C_LD = 16;
layout(set = 0, binding = 0) readonly buffer ABuf { uvec4 a[]; };
layout(set = 0, binding = 1) readonly buffer BBuf { uvec4 b[]; };
#ifdef ACC_F16
layout(set = 0, binding = 2) writeonly buffer CBuf { float16_t c[]; };
#else
layout(set = 0, binding = 2) writeonly buffer CBuf { float c[]; };
#endif
layout(set = 0, binding = 3) readonly buffer Params { uint a_batch, b_batch, c_batch, group_m; } p;
#define B_LINE (BN / VEC)
#define B_PITCH (B_LINE + 1)
shared uvec4 Bs[BK * B_PITCH];
#define B_PER (BK * B_LINE / THREADS)
#define B_ROWS_PER_ROUND (THREADS / B_LINE)
CT acc[TM][TN];

// Shared row of global K row r of a step: thread t of a quad holds physical K 8t..8t+7, of which
// 8t+4c.. belong to MMA step c; inside the step its slots are 2t, 2t+1, 2t+8, 2t+9.
uint perm(uint r) { uint t = r / 8u, c = (r % 8u) / 4u, j = r % 2u, hi = (r % 4u) / 2u; return 16u * c + 2u * t + j + 8u * hi; }

void setA(inout AT m, uint w0, uint w1, uint w2, uint w3) {
    f16vec2 v0 = unpackFloat2x16(w0), v1 = unpackFloat2x16(w1), v2 = unpackFloat2x16(w2), v3 = unpackFloat2x16(w3);
    m[0] = v0.x; m[1] = v0.y; m[2] = v1.x; m[3] = v1.y; m[4] = v2.x; m[5] = v2.y; m[6] = v3.x; m[7] = v3.y;
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint warp = tid / 32u, lane = tid % 32u, g = lane / 4u, t = lane % 4u;
    uint wm = (warp / WARPS_N) * WM, wn = (warp % WARPS_N) * WN;
    uint tiles_n = gl_NumWorkGroups.x;
    uint pid = gl_WorkGroupID.y * tiles_n + gl_WorkGroupID.x;
    uint gm = max(p.group_m, 1u);
    uint first_m = (pid / (gm * tiles_n)) * gm;
    uint rows = min(gl_NumWorkGroups.y - first_m, gm);
    uint in_group = pid - first_m * tiles_n;
    uint m0 = (first_m + in_group % rows) * BM;
    uint n0 = (in_group / rows) * BN;
    uint b_row = tid / B_LINE, b_vec = tid % B_LINE;
    uint a_at = ((m0 + wm + g) * A_LD) / VEC + t;   // row g of the subgroup's first block, step 0
    const uint A8 = 8u * A_LD / VEC;
    uvec4 ra[TM][2], rb[B_PER];
    [[unroll]] for (uint i = 0; i < TM; i++) { ra[i][0] = a[a_at + 2u * i * A8]; ra[i][1] = a[a_at + (2u * i + 1u) * A8]; }
    uint b_at = (b_row * B_LD + n0) / VEC + b_vec;
    [[unroll]] for (uint i = 0; i < B_PER; i++) rb[i] = b[b_at + i * B_ROWS_PER_ROUND * (B_LD / VEC)];
    [[unroll]] for (uint i = 0; i < TM; i++) [[unroll]] for (uint j = 0; j < TN; j++) acc[i][j] = CT(0);
    for (uint k0 = 0; k0 < K; k0 += BK) {
        barrier();
        [[unroll]] for (uint i = 0; i < B_PER; i++) Bs[perm(b_row + i * B_ROWS_PER_ROUND) * B_PITCH + b_vec] = rb[i];
        barrier();
        AT fa[2][TM];
        [[unroll]] for (uint i = 0; i < TM; i++) {
            setA(fa[0][i], ra[i][0].x, ra[i][0].y, ra[i][1].x, ra[i][1].y);
            setA(fa[1][i], ra[i][0].z, ra[i][0].w, ra[i][1].z, ra[i][1].w);
        }
        uint kn = min(k0 + BK, K - BK);
        [[unroll]] for (uint i = 0; i < TM; i++) { ra[i][0] = a[a_at + kn / VEC + 2u * i * A8]; ra[i][1] = a[a_at + kn / VEC + (2u * i + 1u) * A8]; }
        uint b_next = ((kn + b_row) * B_LD + n0) / VEC + b_vec;
        [[unroll]] for (uint i = 0; i < B_PER; i++) rb[i] = b[b_next + i * B_ROWS_PER_ROUND * (B_LD / VEC)];
        [[unroll]] for (uint c = 0; c < 2; c++) {
            [[unroll]] for (uint j = 0; j < TN; j++) {
                BT fb;
                coopMatLoad(fb, Bs, (c * 16u) * B_PITCH + (wn + j * 16u) / VEC, B_PITCH, gl_CooperativeMatrixLayoutRowMajor);
                [[unroll]] for (uint i = 0; i < TM; i++) acc[i][j] = coopMatMulAdd(fa[c][i], fb, acc[i][j]);
            }
        }
    }
    [[unroll]] for (uint i = 0; i < TM; i++) [[unroll]] for (uint j = 0; j < TN; j++) {
        uint at = (m0 + wm + i * 16u) * C_LD + n0 + wn + j * 16u;
        coopMatStore(acc[i][j], c, at, C_LD, gl_CooperativeMatrixLayoutRowMajor);
    }
}
