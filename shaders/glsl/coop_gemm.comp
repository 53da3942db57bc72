#version 450
// Cooperative-matrix GEMM written against SPV_NV_cooperative_matrix; matbridge translates it to
// SPV_KHR_cooperative_matrix for the device at pipeline creation.
//
//   C[b] = alpha * op(A[b]) * op(B[b]) + beta * C[b]      (any M, N, K, batch and strides)
//
// Structure (one workgroup = one BM x BN tile of C, WARPS_M x WARPS_N subgroups of WM x WN):
// - Operands are read from global memory 16 bytes at a time into registers, PREFETCH K steps
//   (BK) ahead of the math (a ring of named register sets), and written to padded shared-memory
//   tiles (one 16-byte vector of padding per line keeps the fragment loads free of bank
//   conflicts). With STAGES = 2 the shared tiles are double-buffered and each K step has a single
//   barrier; STAGES = 1 uses one buffer and two, and A_STAGES = 2 double-buffers A alone, so that
//   only B's store sits between the two barriers.
// - Each subgroup loads its TM A fragments once per MMA K step and streams TN B fragments.
// - Workgroups are rasterised in groups of `group_m` tile rows so that consecutive workgroups
//   share A and B panels in L2.
// - The epilogue converts each accumulator tile to f32 (or keeps s32), stages it in a per-subgroup
//   shared slot (over the operand tiles) and writes it with alpha/beta: 32-bit words (f32 / s32), or pairs of f16/bf16
//   packed into 32-bit words (OUT_MODE 1/2; the host guarantees even N, row stride and batch
//   stride and a contiguous row, so pairs never straddle rows).
//
// Layouts by specialization constant: A_COLMAJOR (m contiguous, else k), B_COLMAJOR (k
// contiguous, else n); EDGES = false drops the operand bounds checks when the tile divides M, N, K. Each operand's leading dimension and batch stride must be multiples of
// the 16-byte vector, and its contiguous extent too unless the lines are zero-padded to whole
// vectors (the host copies operands that are not so); M/N/K edges are zero-filled per vector.
//
// Build defines: ELEM_F16, ELEM_S8 or ELEM_U8; ACC_F16 (f16 accumulators, else f32/s32/u32);
// tile: BM, BN, BK, WARPS_M, WARPS_N, LN (MMA N: 16 or 8), STAGES (1 or 2), A_STAGES (default
// STAGES), PREFETCH (K tiles in flight in registers: 1 or 2; a third set
// exceeds the 128 registers of 512 invocations on the H100), STORE_EARLY (1: double-buffered
// operands are written before the multiply, else after it).
// (u8 accumulates in u32, whose bits are the wrapped s32 result.)
#ifdef ELEM_U8
#define ELEM_S8
#endif
#ifndef PREFETCH
#define PREFETCH 1
#endif
// Shared stages per operand (A_STAGES = 2 with STAGES = 1 double-buffers only A).
#ifndef A_STAGES
#define A_STAGES STAGES
#endif
#define B_STAGES STAGES
#ifndef STORE_EARLY
#define STORE_EARLY 0
#endif
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_control_flow_attributes : enable
#ifdef ELEM_S8
#extension GL_NV_integer_cooperative_matrix : require
#endif

#ifdef ELEM_S8
#define VEC 16   // int8 per uvec4
#define LK 32
#ifdef ELEM_U8
#define ATYPE ucoopmatNV<8, gl_ScopeSubgroup, 16, LK>
#define BTYPE ucoopmatNV<8, gl_ScopeSubgroup, LK, LN>
#define CTYPE ucoopmatNV<32, gl_ScopeSubgroup, 16, LN>
#else
#define ATYPE icoopmatNV<8, gl_ScopeSubgroup, 16, LK>
#define BTYPE icoopmatNV<8, gl_ScopeSubgroup, LK, LN>
#define CTYPE icoopmatNV<32, gl_ScopeSubgroup, 16, LN>
#endif
#else
#define VEC 8    // f16 per uvec4
#define LK 16
#define ATYPE fcoopmatNV<16, gl_ScopeSubgroup, 16, LK>
#define BTYPE fcoopmatNV<16, gl_ScopeSubgroup, LK, LN>
#ifdef ACC_F16
#define CTYPE fcoopmatNV<16, gl_ScopeSubgroup, 16, LN>
#else
#define CTYPE fcoopmatNV<32, gl_ScopeSubgroup, 16, LN>
#endif
#endif

// The accumulator as a 32-bit matrix for staging.
#ifdef ACC_F16
#define STAGED(x) fcoopmatNV<32, gl_ScopeSubgroup, 16, LN>(x)
#else
#define STAGED(x) (x)
#endif

#define WM (BM / WARPS_M)
#define WN (BN / WARPS_N)
#define TM (WM / 16u)
#define TN (WN / LN)
#define WARPS (WARPS_M * WARPS_N)
#define THREADS (WARPS * 32)
#if (BM % (WARPS_M * 16)) != 0 || (BN % (WARPS_N * LN)) != 0 || (BK % LK) != 0
#error tile does not divide into subgroup tiles and MMA steps
#endif

layout(local_size_x = THREADS) in;
layout(constant_id = 0) const bool A_COLMAJOR = false;
layout(constant_id = 1) const bool B_COLMAJOR = false;
layout(constant_id = 2) const uint OUT_MODE = 0;   // 0: 32-bit words, 1: f16 pairs, 2: bf16 pairs
// False when M, N and K are multiples of the tile: operand loads then skip their bounds checks.
layout(constant_id = 3) const bool EDGES = true;

layout(set = 0, binding = 0) readonly buffer ABuf { uvec4 a[]; };
layout(set = 0, binding = 1) readonly buffer BBuf { uvec4 b[]; };
layout(set = 0, binding = 2) buffer CBuf { uint c[]; };
layout(set = 0, binding = 3) readonly buffer Params {
    uint M, N, K, batch;
    uint a_ld, a_batch;   // in elements: leading dimension and batch stride of the stored A
    uint b_ld, b_batch;
    uint c_row, c_col, c_batch;
    float alpha, beta;
    uint group_m;         // tile rows per rasterisation group
} p;

// Shared tiles in uvec4 units, one vector of padding per line.
// A row-major: BM lines of BK elements; column-major: BK lines of BM elements.
// B row-major (n contiguous): BK lines of BN; column-major: BN lines of BK.
#ifdef ELEM_S8
// Row-major (n-contiguous) 8-bit B is transposed while it is staged: 8-bit B fragments load far
// faster from k-contiguous lines (the H100 runs s8 GEMMs 1.6x faster so). Each staging unit is
// four K rows of 16 N columns, re-packed into 16 words of four K bytes.
const bool B_TRANSPOSE = !B_COLMAJOR;
#define T_UNITS ((BK / 4) * (BN / 16))
#define T_PER_THREAD ((T_UNITS + THREADS - 1) / THREADS)
#else
const bool B_TRANSPOSE = false;
#endif
// B's shared layout: k-contiguous lines when B arrives so or is transposed on the way.
const bool B_SMEM_CM = B_COLMAJOR || B_TRANSPOSE;
const uint A_LINE_VECS = A_COLMAJOR ? BM / VEC : BK / VEC;
const uint B_LINE_VECS = B_COLMAJOR ? BK / VEC : BN / VEC;   // vectors per global line
const uint A_PITCH = A_LINE_VECS + 1u;
const uint B_PITCH = (B_SMEM_CM ? BK / VEC : BN / VEC) + 1u;
const uint A_STAGE = A_COLMAJOR ? BK * A_PITCH : BM * A_PITCH;
const uint B_STAGE = B_SMEM_CM ? BN * B_PITCH : BK * B_PITCH;
// Epilogue staging: one 16 x LN 32-bit tile per subgroup, placed over the operand tiles (the
// main loop ends with a barrier). One array holds everything: A stages, then B stages.
#define STAGE_VECS (16u * LN / 4u)
const uint B_BASE = A_STAGE * A_STAGES;
const uint OPERAND_VECS = A_STAGE * A_STAGES + B_STAGE * B_STAGES;
const uint STAGING_VECS = WARPS * STAGE_VECS;
shared uvec4 S[OPERAND_VECS > STAGING_VECS ? OPERAND_VECS : STAGING_VECS];

// Operand vectors per tile and per invocation (rounded up: the last round is partial when the
// tile's vectors do not divide among the invocations).
#define A_VECS (BM * BK / VEC)
#define B_VECS (BK * BN / VEC)
#define A_EVEN ((A_VECS % THREADS) == 0)
#define B_EVEN ((B_VECS % THREADS) == 0)
const uint A_PER_THREAD = (A_VECS + THREADS - 1) / THREADS;
const uint B_PER_THREAD = (B_VECS + THREADS - 1) / THREADS;

// Loads vector v of the A tile at (m0, k0); zero outside the matrix. `slot` is its shared index.
uvec4 load_a(uint base, uint m0, uint k0, uint v, out uint slot) {
    if (!A_EVEN && v >= A_VECS) {
        slot = 0u;
        return uvec4(0);
    }
    uint line = v / A_LINE_VECS, x = v % A_LINE_VECS;
    slot = line * A_PITCH + x;
    uint m = A_COLMAJOR ? m0 + x * VEC : m0 + line;
    uint k = A_COLMAJOR ? k0 + line : k0 + x * VEC;
    if (EDGES && (m >= p.M || k >= p.K)) return uvec4(0);
    return a[(base + (A_COLMAJOR ? k * p.a_ld + m : m * p.a_ld + k)) / VEC];
}

uvec4 load_b(uint base, uint n0, uint k0, uint v, out uint slot) {
    if (!B_EVEN && v >= B_VECS) {
        slot = 0u;
        return uvec4(0);
    }
    uint line = v / B_LINE_VECS, x = v % B_LINE_VECS;
    slot = line * B_PITCH + x;
    uint n = B_COLMAJOR ? n0 + line : n0 + x * VEC;
    uint k = B_COLMAJOR ? k0 + x * VEC : k0 + line;
    if (EDGES && (n >= p.N || k >= p.K)) return uvec4(0);
    return b[(base + (B_COLMAJOR ? n * p.b_ld + k : k * p.b_ld + n)) / VEC];
}

#ifdef ELEM_S8
// Loads staging unit u of row-major B at (k0, n0): rows k0 + 4kq .. +3, columns n0 + 16nv .. +15
// (consecutive invocations take consecutive kq, so that the transposed stores spread over banks).
void load_bt(uint base, uint n0, uint k0, uint u, out uvec4 r[4]) {
    uint kq = u % (BK / 4u), nv = u / (BK / 4u);
    uint n = n0 + nv * 16u;
    [[unroll]] for (uint i = 0; i < 4u; i++) {
        uint k = k0 + kq * 4u + i;
        bool inside = u < T_UNITS && (!EDGES || (n < p.N && k < p.K));
        r[i] = inside ? b[(base + k * p.b_ld + n) / VEC] : uvec4(0);
    }
}

// Stores unit u transposed: word j holds the four K bytes of column 16nv + j.
void store_bt(uint stage_base, uint u, uvec4 r[4]) {
    if (u >= T_UNITS) return;
    uint kq = u % (BK / 4u), nv = u / (BK / 4u);
    [[unroll]] for (uint j = 0; j < 16u; j++) {
        uint c = j / 4u, sh = (j % 4u) * 8u;
        uint w = ((r[0][c] >> sh) & 0xffu) | (((r[1][c] >> sh) & 0xffu) << 8u) | (((r[2][c] >> sh) & 0xffu) << 16u) | (((r[3][c] >> sh) & 0xffu) << 24u);
        S[stage_base + (nv * 16u + j) * B_PITCH + kq / 4u][kq % 4u] = w;
    }
}
#endif

// Round-to-nearest-even f32 -> bf16 bits (NaN stays NaN).
uint to_bf16(float x) {
    uint bits = floatBitsToUint(x);
    if ((bits & 0x7fffffffu) > 0x7f800000u) return (bits >> 16u) | 0x40u;
    return (bits + 0x7fffu + ((bits >> 16u) & 1u)) >> 16u;
}

vec2 unpack_out(uint w) {
    return OUT_MODE == 1u ? unpackHalf2x16(w) : vec2(uintBitsToFloat(w << 16u), uintBitsToFloat(w & 0xffff0000u));
}

uint pack_out(vec2 v) {
    return OUT_MODE == 1u ? packHalf2x16(v) : (to_bf16(v.x) | (to_bf16(v.y) << 16u));
}

uint staged_bits(uint base, uint e) {
    return S[base + e / 4u][e % 4u];
}

float staged(uint base, uint e) {
    return uintBitsToFloat(staged_bits(base, e));
}

// The accumulators (module scope, so that `multiply_stage` needs no copies).
CTYPE acc[TM][TN];

// Multiplies this subgroup's fragments of the shared stage at (sA, B_BASE + sB) into `acc`.
void multiply_stage(uint sA, uint sB, uint wm, uint wn) {
    [[unroll]] for (uint kk = 0; kk < BK; kk += LK) {
        ATYPE fa[TM];
        [[unroll]] for (uint i = 0; i < TM; i++) {
            uint m = wm + i * 16u;
            coopMatLoadNV(fa[i], S, sA + (A_COLMAJOR ? kk * A_PITCH + m / VEC : m * A_PITCH + kk / VEC), A_PITCH, A_COLMAJOR);
        }
        [[unroll]] for (uint j = 0; j < TN; j++) {
            uint n = wn + j * LN;
            BTYPE fb;
            coopMatLoadNV(fb, S, B_BASE + sB + (B_SMEM_CM ? n * B_PITCH + kk / VEC : kk * B_PITCH + n / VEC), B_PITCH, B_SMEM_CM);
            [[unroll]] for (uint i = 0; i < TM; i++) acc[i][j] = coopMatMulAddNV(fa[i], fb, acc[i][j]);
        }
    }
}

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint warp = tid / 32u;
    uint lane = tid % 32u;
    uint bt = gl_WorkGroupID.z;

    // Grouped rasterisation: walk `group_m` tile rows column by column.
    uint tiles_n = gl_NumWorkGroups.x;
    uint tiles_m = gl_NumWorkGroups.y;
    uint pid = gl_WorkGroupID.y * tiles_n + gl_WorkGroupID.x;
    uint gm = max(p.group_m, 1u);
    uint group = pid / (gm * tiles_n);
    uint first_m = group * gm;
    uint rows = min(tiles_m - first_m, gm);
    uint in_group = pid - group * gm * tiles_n;
    uint m0 = (first_m + in_group % rows) * BM;
    uint n0 = (in_group / rows) * BN;

    uint wm = (warp / WARPS_N) * WM;
    uint wn = (warp % WARPS_N) * WN;
    uint abase = bt * p.a_batch;
    uint bbase = bt * p.b_batch;

    [[unroll]] for (uint i = 0; i < TM; i++) {
        [[unroll]] for (uint j = 0; j < TN; j++) acc[i][j] = CTYPE(0.0);
    }

    uint sa[A_PER_THREAD];
    uint sb[B_PER_THREAD];
    // Register staging sets 0 .. PREFETCH - 1 (8-bit row-major B uses rt*, transposed on the way).
    uvec4 ra0[A_PER_THREAD], rb0[B_PER_THREAD];
#if PREFETCH >= 2
    uvec4 ra1[A_PER_THREAD], rb1[B_PER_THREAD];
#endif
#ifdef ELEM_S8
    uvec4 rt0[T_PER_THREAD][4];
#if PREFETCH >= 2
    uvec4 rt1[T_PER_THREAD][4];
#endif
#endif
    uint ktiles = (p.K + BK - 1u) / BK;

    // Register staging sets are named (not indexed) so that they stay in registers: the loop
    // below is unrolled by PREFETCH and each copy names its sets.
#ifdef ELEM_S8
#define LOAD_B_TRANSPOSED(RT, K0) if (B_TRANSPOSE) { [[unroll]] for (uint q = 0; q < T_PER_THREAD; q++) load_bt(bbase, n0, K0, tid + q * THREADS, RT[q]); } else
#define STORE_B_TRANSPOSED(RT, BASE) if (B_TRANSPOSE) { [[unroll]] for (uint q = 0; q < T_PER_THREAD; q++) store_bt(BASE, tid + q * THREADS, RT[q]); } else
#else
#define LOAD_B_TRANSPOSED(RT, K0)
#define STORE_B_TRANSPOSED(RT, BASE)
#endif
    // Global -> registers: tile KT of the K loop into set (RA, RB, RT).
#define LOAD_TILE(RA, RB, RT, KT) { \
        uint k_first = (KT) * BK; \
        [[unroll]] for (uint q = 0; q < A_PER_THREAD; q++) RA[q] = load_a(abase, m0, k_first, tid + q * THREADS, sa[q]); \
        LOAD_B_TRANSPOSED(RT, k_first) { [[unroll]] for (uint q = 0; q < B_PER_THREAD; q++) RB[q] = load_b(bbase, n0, k_first, tid + q * THREADS, sb[q]); } \
    }
    // Registers -> shared stage STAGE of A / of B.
#define STORE_A(RA, STAGE) { \
        uint tA = (STAGE) * A_STAGE; \
        [[unroll]] for (uint q = 0; q < A_PER_THREAD; q++) { if (A_EVEN || tid + q * THREADS < A_VECS) S[tA + sa[q]] = RA[q]; } \
    }
#define STORE_B(RB, RT, STAGE) { \
        uint tB = B_BASE + (STAGE) * B_STAGE; \
        STORE_B_TRANSPOSED(RT, tB) { [[unroll]] for (uint q = 0; q < B_PER_THREAD; q++) { if (B_EVEN || tid + q * THREADS < B_VECS) S[tB + sb[q]] = RB[q]; } } \
    }
#define STORE_TILE(RA, RB, RT, STAGE) STORE_A(RA, STAGE) STORE_B(RB, RT, STAGE)
    // One K tile: fetch tile KT + PREFETCH into the free set, multiply the tile in the shared
    // stages KT % A_STAGES / KT % B_STAGES, and write tile KT + 1 (fetched PREFETCH - 1 tiles
    // ago) to its stages: a double-buffered operand before the multiply (STORE_EARLY) or after
    // it, a single-buffered one between two barriers.
#if A_STAGES == 2 && STORE_EARLY
#define STORE_A_EARLY(RA, KT) if ((KT) + 1u < ktiles) STORE_A(RA, ((KT) + 1u) % 2u)
#else
#define STORE_A_EARLY(RA, KT)
#endif
#if B_STAGES == 2 && STORE_EARLY
#define STORE_B_EARLY(RB, RT, KT) if ((KT) + 1u < ktiles) STORE_B(RB, RT, ((KT) + 1u) % 2u)
#else
#define STORE_B_EARLY(RB, RT, KT)
#endif
#if A_STAGES == 2 && !STORE_EARLY
#define STORE_A_LATE(RA, KT) if ((KT) + 1u < ktiles) STORE_A(RA, ((KT) + 1u) % 2u)
#else
#define STORE_A_LATE(RA, KT)
#endif
#if B_STAGES == 2 && !STORE_EARLY
#define STORE_B_LATE(RB, RT, KT) if ((KT) + 1u < ktiles) STORE_B(RB, RT, ((KT) + 1u) % 2u)
#else
#define STORE_B_LATE(RB, RT, KT)
#endif
#if A_STAGES == 1 && B_STAGES == 1
#define STORE_SINGLE(RA, RB, RT, KT) barrier(); if ((KT) + 1u < ktiles) STORE_TILE(RA, RB, RT, 0u)
#elif B_STAGES == 1
#define STORE_SINGLE(RA, RB, RT, KT) barrier(); if ((KT) + 1u < ktiles) STORE_B(RB, RT, 0u)
#else
#define STORE_SINGLE(RA, RB, RT, KT)
#endif
#define K_TILE(KT, LA, LB, LT, SA_, SB_, ST_) { \
        if ((KT) + PREFETCH < ktiles) LOAD_TILE(LA, LB, LT, (KT) + PREFETCH) \
        STORE_A_EARLY(SA_, KT) \
        STORE_B_EARLY(SB_, ST_, KT) \
        multiply_stage(((KT) % A_STAGES) * A_STAGE, ((KT) % B_STAGES) * B_STAGE, wm, wn); \
        STORE_A_LATE(SA_, KT) \
        STORE_B_LATE(SB_, ST_, KT) \
        STORE_SINGLE(SA_, SB_, ST_, KT) \
        barrier(); \
    }

    // Prologue: tile 0 into shared memory, tiles 1 .. PREFETCH - 1 in flight.
    LOAD_TILE(ra0, rb0, rt0, 0u)
    STORE_TILE(ra0, rb0, rt0, 0u)
#if PREFETCH >= 2
    if (1u < ktiles) LOAD_TILE(ra1, rb1, rt1, 1u)
#endif
    barrier();

    // Tile kt is fetched into set kt % PREFETCH and, PREFETCH - 1 tiles later, stored from it.
#if PREFETCH == 1
    for (uint kt = 0; kt < ktiles; kt++) K_TILE(kt, ra0, rb0, rt0, ra0, rb0, rt0)
#elif PREFETCH == 2
    for (uint kt = 0; kt < ktiles; kt += 2u) {
        K_TILE(kt, ra0, rb0, rt0, ra1, rb1, rt1)
        if (kt + 1u < ktiles) K_TILE(kt + 1u, ra1, rb1, rt1, ra0, rb0, rt0)
    }
#else
#error PREFETCH must be 1 or 2
#endif

    // Epilogue: one 16 x LN tile at a time through this subgroup's staging slot.
    uint stage = warp * STAGE_VECS;
    uint cbase = bt * p.c_batch;
    [[unroll]] for (uint i = 0; i < TM; i++) {
        [[unroll]] for (uint j = 0; j < TN; j++) {
            coopMatStoreNV(STAGED(acc[i][j]), S, stage, LN / 4u, false);
            subgroupBarrier();
            uint gi0 = m0 + wm + i * 16u;
            uint gj0 = n0 + wn + j * LN;
            if (OUT_MODE == 0u) {
                [[unroll]] for (uint e = lane; e < 16u * LN; e += 32u) {
                    uint gi = gi0 + e / LN, gj = gj0 + e % LN;
                    if (gi < p.M && gj < p.N) {
                        uint ci = cbase + gi * p.c_row + gj * p.c_col;
#ifdef ELEM_S8
                        int v = int(p.alpha) * int(staged_bits(stage, e));
                        if (p.beta != 0.0) v += int(p.beta) * int(c[ci]);
                        c[ci] = uint(v);
#else
                        float v = p.alpha * staged(stage, e);
                        if (p.beta != 0.0) v += p.beta * uintBitsToFloat(c[ci]);
                        c[ci] = floatBitsToUint(v);
#endif
                    }
                }
            } else {
                [[unroll]] for (uint e = lane * 2u; e < 16u * LN; e += 64u) {
                    uint gi = gi0 + e / LN, gj = gj0 + e % LN;
                    if (gi < p.M && gj < p.N) {
                        uint w = (cbase + gi * p.c_row + gj) / 2u;
                        vec2 v = p.alpha * vec2(staged(stage, e), staged(stage, e + 1u));
                        if (p.beta != 0.0) v += p.beta * unpack_out(c[w]);
                        c[w] = pack_out(v);
                    }
                }
            }
            subgroupBarrier();
        }
    }
}
