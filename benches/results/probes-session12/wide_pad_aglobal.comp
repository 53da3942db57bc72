#version 450
// Cooperative-matrix GEMM with wide subgroup tiles, for problems that fill whole tiles:
//
//   C[b] = A[b] * B[b]      (A k-contiguous, C n-contiguous; 16-bit B n-contiguous, 8-bit B
//                            k-contiguous)
//
// Written against SPV_NV_cooperative_matrix and translated by matbridge like coop_gemm.comp (bf16
// by the same retyping). It is the lean sibling of coop_gemm: no bounds checks (the host
// guarantees BM | M, BN | N, BK | K), no alpha/beta, no other layouts, and K and the leading
// dimensions fixed at pipeline creation, so that every operand load's offset is a constant.
// Subgroup tiles are as large as the registers allow (128 x 64 with f16 accumulators: 32
// matrices; 64 x 64 with f32 or s32 ones), which cuts the shared-memory fragment traffic per
// multiply-add against coop_gemm's 16-subgroup tiles.
//
// Per K step: every invocation holds the step's 16-byte operand vectors in registers; the
// workgroup writes them to one padded shared buffer between two barriers, issues the loads of
// the next step, and multiplies. The accumulators go straight to C at the end.
//
// Build defines (the family defines of coop_gemm.comp): BM, BN, BK, WARPS_M, WARPS_N; ELEM_S8 or
// ELEM_U8 (8-bit inputs, s32 / u32 accumulators and 32-bit output), else f16 inputs (ELEM_F16)
// with ACC_F16 (f16 accumulators and output, else f32); OUT_F16 with f32 accumulators: f16
// output, rounded from them (f16 inputs only: the bf16 retyping would turn the f16 result type
// into a bf16 accumulator no device lists).
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_control_flow_attributes : enable
#if defined(ELEM_S8) || defined(ELEM_U8)
#extension GL_NV_integer_cooperative_matrix : require
#define EIGHT_BIT
#endif

// Elements per 16-byte vector, MMA K, and the fragment and accumulator types. 16-bit B is staged
// as BK lines of BN (n contiguous, as stored); 8-bit B arrives k-contiguous and is staged as BN
// lines of BK, the order its fragments load fast in.
#ifdef EIGHT_BIT
#define VEC 16
#define LK 32
#ifdef ELEM_U8
#define ATYPE ucoopmatNV<8, gl_ScopeSubgroup, 16, LK>
#define BTYPE ucoopmatNV<8, gl_ScopeSubgroup, LK, 16>
#define CTYPE ucoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#else
#define ATYPE icoopmatNV<8, gl_ScopeSubgroup, 16, LK>
#define BTYPE icoopmatNV<8, gl_ScopeSubgroup, LK, 16>
#define CTYPE icoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#endif
#define B_ROWS BN
#define B_LINE (BK / VEC)
#else
#define VEC 8
#define LK 16
#define ATYPE fcoopmatNV<16, gl_ScopeSubgroup, 16, LK>
#define BTYPE fcoopmatNV<16, gl_ScopeSubgroup, LK, 16>
#ifdef ACC_F16
#define CTYPE fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#else
#define CTYPE fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#endif
#define B_ROWS BK
#define B_LINE (BN / VEC)
#endif
#define WM (BM / WARPS_M)
#define WN (BN / WARPS_N)
#define TM (WM / 16)
#define TN (WN / 16)
#define THREADS (WARPS_M * WARPS_N * 32)
#if (BM % (WARPS_M * 16)) != 0 || (BN % (WARPS_N * 16)) != 0 || (BK % LK) != 0
#error tile does not divide into subgroup tiles and MMA steps
#endif

layout(local_size_x = THREADS) in;
// K and the leading dimensions in elements (A: row stride, B and C: row stride), each a multiple
// of 8; K a multiple of BK.
layout(constant_id = 0) const uint K = 16;
layout(constant_id = 1) const uint A_LD = 16;
layout(constant_id = 2) const uint B_LD = 16;
layout(constant_id = 3) const uint C_LD = 16;

layout(set = 0, binding = 0) readonly buffer ABuf { uvec4 a[]; };
layout(set = 0, binding = 1) readonly buffer BBuf { uvec4 b[]; };
layout(set = 0, binding = 2) writeonly buffer CBuf { uint c[]; };
layout(set = 0, binding = 3) readonly buffer Params {
    uint a_batch, b_batch, c_batch;   // batch strides in elements (multiples of 8)
    uint group_m;                     // tile rows per rasterisation group
} p;

// Padded shared tiles (one 16-byte vector of padding per line keeps fragment loads conflict-free).
#define A_LINE (BK / VEC)        // vectors per A row in global memory and in shared memory
#define A_PITCH (A_LINE + 1)
#define B_PITCH (B_LINE + 1)
#ifndef A_GLOBAL
shared uvec4 As[BM * A_PITCH];
#endif
shared uvec4 Bs[B_ROWS * B_PITCH];
#ifdef PAD_SHARED
shared uvec4 dummy[PAD_SHARED];
#endif

// Operand vectors per invocation, and the lines one round of the workgroup covers.
#define A_PER (BM * A_LINE / THREADS)
#define B_PER (B_ROWS * B_LINE / THREADS)
#define A_ROWS_PER_ROUND (THREADS / A_LINE)
#define B_ROWS_PER_ROUND (THREADS / B_LINE)
#if (BM * A_LINE) % THREADS != 0 || (B_ROWS * B_LINE) % THREADS != 0 || THREADS % A_LINE != 0 || THREADS % B_LINE != 0
#error operand tiles do not divide among the invocations
#endif

CTYPE acc[TM][TN];

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint warp = tid / 32u;
    uint wm = (warp / WARPS_N) * WM;
    uint wn = (warp % WARPS_N) * WN;
    // Grouped rasterisation: consecutive workgroups walk `group_m` tile rows column by column, so
    // that they share A and B panels in L2.
    uint tiles_n = gl_NumWorkGroups.x;
    uint pid = gl_WorkGroupID.y * tiles_n + gl_WorkGroupID.x;
    uint gm = max(p.group_m, 1u);
    uint first_m = (pid / (gm * tiles_n)) * gm;
    uint rows = min(gl_NumWorkGroups.y - first_m, gm);
    uint in_group = pid - first_m * tiles_n;
    uint m0 = (first_m + in_group % rows) * BM;
    uint n0 = (in_group / rows) * BN;
    uint bt = gl_WorkGroupID.z;

    // This invocation's operand vectors: A rows a_row + i * A_ROWS_PER_ROUND at vector a_vec of the
    // K step, B rows b_row + i * B_ROWS_PER_ROUND at vector b_vec of the tile's N range. With the
    // leading dimensions constant, every vector's offset from the first is a constant.
    uint a_row = tid / A_LINE, a_vec = tid % A_LINE;
    uint b_row = tid / B_LINE, b_vec = tid % B_LINE;
    uint a_at = (bt * p.a_batch + (m0 + a_row) * A_LD) / VEC + a_vec;   // in vectors, K step 0
#ifdef EIGHT_BIT
    uint b_at = (bt * p.b_batch + (n0 + b_row) * B_LD) / VEC + b_vec;
#else
    uint b_at = (bt * p.b_batch + b_row * B_LD + n0) / VEC + b_vec;
#endif
    uvec4 rb[B_PER];
#ifndef A_GLOBAL
    uvec4 ra[A_PER];
    [[unroll]] for (uint i = 0; i < A_PER; i++) ra[i] = a[a_at + i * A_ROWS_PER_ROUND * (A_LD / VEC)];
#else
    uint a_frag = (bt * p.a_batch + (m0 + wm) * A_LD) / VEC;   // this subgroup's first A row, K step 0
#if A_GLOBAL == 2
    ATYPE fa_cur[BK / LK][TM];
    [[unroll]] for (uint kk = 0; kk < BK / LK; kk++) [[unroll]] for (uint i = 0; i < TM; i++)
        coopMatLoadNV(fa_cur[kk][i], a, a_frag + i * 16u * (A_LD / VEC) + kk * LK / VEC, A_LD / VEC, false);
#endif
#endif
#ifdef PAD_SHARED
    dummy[tid % PAD_SHARED] = rb[0];
#endif
    [[unroll]] for (uint i = 0; i < B_PER; i++) rb[i] = b[b_at + i * B_ROWS_PER_ROUND * (B_LD / VEC)];

    [[unroll]] for (uint i = 0; i < TM; i++) {
        [[unroll]] for (uint j = 0; j < TN; j++) acc[i][j] = CTYPE(0.0);
    }

    for (uint k0 = 0; k0 < K; k0 += BK) {
        barrier();
#ifndef A_GLOBAL
        [[unroll]] for (uint i = 0; i < A_PER; i++) As[(a_row + i * A_ROWS_PER_ROUND) * A_PITCH + a_vec] = ra[i];
#endif
        [[unroll]] for (uint i = 0; i < B_PER; i++) Bs[(b_row + i * B_ROWS_PER_ROUND) * B_PITCH + b_vec] = rb[i];
        barrier();
        // The next K step's vectors, addressed from k0 (a pointer advanced inside the branch made
        // the driver's code 17 % slower on the H100).
        bool last = k0 + BK >= K;
        uint a_next = (bt * p.a_batch + (m0 + a_row) * A_LD + k0 + BK) / VEC + a_vec;
#ifdef EIGHT_BIT
        uint b_next = (bt * p.b_batch + (n0 + b_row) * B_LD + k0 + BK) / VEC + b_vec;
#else
        uint b_next = (bt * p.b_batch + (k0 + BK + b_row) * B_LD + n0) / VEC + b_vec;
#endif
#ifndef A_GLOBAL
        [[unroll]] for (uint i = 0; i < A_PER; i++) if (!last) ra[i] = a[a_next + i * A_ROWS_PER_ROUND * (A_LD / VEC)];
#elif A_GLOBAL == 2
        ATYPE fa_nxt[BK / LK][TM];
        [[unroll]] for (uint kk = 0; kk < BK / LK; kk++) [[unroll]] for (uint i = 0; i < TM; i++)
            if (!last) coopMatLoadNV(fa_nxt[kk][i], a, a_frag + i * 16u * (A_LD / VEC) + (k0 + BK + kk * LK) / VEC, A_LD / VEC, false);
#endif
        [[unroll]] for (uint i = 0; i < B_PER; i++) if (!last) rb[i] = b[b_next + i * B_ROWS_PER_ROUND * (B_LD / VEC)];
        [[unroll]] for (uint kk = 0; kk < BK; kk += LK) {
            ATYPE fa[TM];
#ifndef A_GLOBAL
            [[unroll]] for (uint i = 0; i < TM; i++) coopMatLoadNV(fa[i], As, (wm + i * 16u) * A_PITCH + kk / VEC, A_PITCH, false);
#elif A_GLOBAL == 1
            [[unroll]] for (uint i = 0; i < TM; i++) coopMatLoadNV(fa[i], a, a_frag + i * 16u * (A_LD / VEC) + (k0 + kk) / VEC, A_LD / VEC, false);
#else
            [[unroll]] for (uint i = 0; i < TM; i++) fa[i] = fa_cur[kk / LK][i];
#endif
            [[unroll]] for (uint j = 0; j < TN; j++) {
                BTYPE fb;
#ifdef EIGHT_BIT
                coopMatLoadNV(fb, Bs, (wn + j * 16u) * B_PITCH + kk / VEC, B_PITCH, true);
#else
                coopMatLoadNV(fb, Bs, kk * B_PITCH + (wn + j * 16u) / VEC, B_PITCH, false);
#endif
                [[unroll]] for (uint i = 0; i < TM; i++) acc[i][j] = coopMatMulAddNV(fa[i], fb, acc[i][j]);
            }
        }
#if defined(A_GLOBAL) && A_GLOBAL == 2
        [[unroll]] for (uint kk = 0; kk < BK / LK; kk++) [[unroll]] for (uint i = 0; i < TM; i++) fa_cur[kk][i] = fa_nxt[kk][i];
#endif
    }

#ifdef PAD_SHARED
    if (p.group_m == 12345u) c[tid] = dummy[(tid * 7u) % PAD_SHARED].x;
#endif
    // f16 pairs in 32-bit words: row starts are 16-byte aligned (C_LD, c_batch and tile columns
    // are multiples of 8 elements).
    [[unroll]] for (uint i = 0; i < TM; i++) {
        [[unroll]] for (uint j = 0; j < TN; j++) {
            uint at = bt * p.c_batch + (m0 + wm + i * 16u) * C_LD + n0 + wn + j * 16u;
#if defined(ACC_F16)
            coopMatStoreNV(acc[i][j], c, at / 2u, C_LD / 2u, false);
#elif defined(OUT_F16)
            coopMatStoreNV(fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>(acc[i][j]), c, at / 2u, C_LD / 2u, false);
#else
            coopMatStoreNV(acc[i][j], c, at, C_LD, false);
#endif
        }
    }
}
