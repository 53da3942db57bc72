#version 450
// Cooperative-matrix GEMM written against SPV_NV_cooperative_matrix; matbridge translates it to
// SPV_KHR_cooperative_matrix for the device at pipeline creation.
//
// C[b] (f32 or s32, any strides) = alpha * op(A[b]) * op(B[b]) + beta * C[b]
// Inputs are read from global memory 16 bytes at a time into padded shared-memory tiles (the
// next tile's loads are issued before the current tile's MMAs), then as MMA fragments from
// shared memory. Layouts by specialization constant: A_COLMAJOR (m contiguous, else k),
// B_COLMAJOR (k contiguous, else n). The contiguous extent of each operand must be a multiple
// of the 16-byte vector (checked on the host); M/N/K edges are zero-filled per vector.
//
// Build defines: ELEM_F16, ELEM_S8 or ELEM_U8; ACC_F16 (f16 accumulators) or default f32/s32;
// NARROW. (u8 accumulates in u32, whose bits are the wrapped s32 result.)
#ifdef ELEM_U8
#define ELEM_S8
#endif
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_shader_explicit_arithmetic_types : require
#extension GL_EXT_control_flow_attributes : enable
#ifdef ELEM_S8
#extension GL_NV_integer_cooperative_matrix : require
#endif

#ifdef ELEM_S8
#define VEC_ELEMS 16u   // int8 per uvec4
#define MMA_K 32u
#define BK 64u
#ifdef ELEM_U8
#define ATYPE ucoopmatNV<8, gl_ScopeSubgroup, 16, MMA_K>
#define BTYPE ucoopmatNV<8, gl_ScopeSubgroup, MMA_K, 16>
#define CTYPE ucoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#define OUTTYPE ucoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#define STAGE_SCALAR uint
#else
#define ATYPE icoopmatNV<8, gl_ScopeSubgroup, 16, MMA_K>
#define BTYPE icoopmatNV<8, gl_ScopeSubgroup, MMA_K, 16>
#define CTYPE icoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#define OUTTYPE icoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#define STAGE_SCALAR int
#endif
#define SCALAR int
#else
#define VEC_ELEMS 8u    // f16 per uvec4
#define MMA_K 16u
#define BK 32u
#define ATYPE fcoopmatNV<16, gl_ScopeSubgroup, 16, MMA_K>
#define BTYPE fcoopmatNV<16, gl_ScopeSubgroup, MMA_K, 16>
#ifdef ACC_F16
#define CTYPE fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>
#else
#define CTYPE fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#endif
#define OUTTYPE fcoopmatNV<32, gl_ScopeSubgroup, 16, 16>
#define SCALAR float
#define STAGE_SCALAR float
#endif

#define BM 128u
// Tile: NARROW = 128x128 (8 subgroups of 64x32), default = 128x256 (8 subgroups of 64x64).
#ifdef NARROW
#define BN 128u
#define WN 32u
#else
#define BN 256u
#define WN 64u
#endif
#define WM 64u
#define TM (WM / 16u)
#define TN (WN / 16u)
#define WARPS ((BM / WM) * (BN / WN))
#define THREADS (WARPS * 32u)

layout(local_size_x = 256) in;
layout(constant_id = 0) const bool A_COLMAJOR = false;
layout(constant_id = 1) const bool B_COLMAJOR = false;

layout(set = 0, binding = 0) readonly buffer ABuf { uvec4 a[]; };
layout(set = 0, binding = 1) readonly buffer BBuf { uvec4 b[]; };
layout(set = 0, binding = 2) buffer CBuf { SCALAR c[]; };
layout(set = 0, binding = 3) readonly buffer Params {
    uint M, N, K, batch;
    uint a_ld, a_batch;   // in elements: leading dimension and batch stride of the stored A
    uint b_ld, b_batch;
    uint c_row, c_col, c_batch;
    float alpha, beta;
} p;

// Shared tiles in uvec4 units with one vector of padding per line.
// A row-major: BM lines of BK elements; column-major: BK lines of BM elements.
#define A_LINE_VECS_R (BK / VEC_ELEMS + 1u)
#define A_LINE_VECS_C (BM / VEC_ELEMS + 1u)
#define B_LINE_VECS_R (BN / VEC_ELEMS + 1u)
#define B_LINE_VECS_C (BK / VEC_ELEMS + 1u)
#define A_VECS (BM * BK / VEC_ELEMS)
#define B_VECS (BK * BN / VEC_ELEMS)
#define A_SHARED max(BM * A_LINE_VECS_R, BK * A_LINE_VECS_C)
#define B_SHARED max(BK * B_LINE_VECS_R, BN * B_LINE_VECS_C)
shared uvec4 As[A_SHARED];
shared uvec4 Bs[B_SHARED];
shared STAGE_SCALAR Cs[WARPS * 256u];

const uint A_PER_THREAD = A_VECS / THREADS;
const uint B_PER_THREAD = B_VECS / THREADS;

// Loads vector v of the A tile at (m0, k0) into a register; zero outside the matrix.
uvec4 load_a(uint batch_base, uint m0, uint k0, uint v, out uint slot) {
    uint line, vec_in_line, lines, line_vecs, outer, inner;
    if (A_COLMAJOR) {      // lines are k, vectors run along m
        line_vecs = BM / VEC_ELEMS;
        line = v / line_vecs; vec_in_line = v % line_vecs;
        outer = k0 + line; inner = m0 + vec_in_line * VEC_ELEMS;
        slot = line * A_LINE_VECS_C + vec_in_line;
        if (outer >= p.K || inner >= p.M) return uvec4(0);
    } else {               // lines are m, vectors run along k
        line_vecs = BK / VEC_ELEMS;
        line = v / line_vecs; vec_in_line = v % line_vecs;
        outer = m0 + line; inner = k0 + vec_in_line * VEC_ELEMS;
        slot = line * A_LINE_VECS_R + vec_in_line;
        if (outer >= p.M || inner >= p.K) return uvec4(0);
    }
    return a[(batch_base + outer * p.a_ld + inner) / VEC_ELEMS];
}

uvec4 load_b(uint batch_base, uint n0, uint k0, uint v, out uint slot) {
    uint line, vec_in_line, line_vecs, outer, inner;
    if (B_COLMAJOR) {      // lines are n, vectors run along k
        line_vecs = BK / VEC_ELEMS;
        line = v / line_vecs; vec_in_line = v % line_vecs;
        outer = n0 + line; inner = k0 + vec_in_line * VEC_ELEMS;
        slot = line * B_LINE_VECS_C + vec_in_line;
        if (outer >= p.N || inner >= p.K) return uvec4(0);
    } else {               // lines are k, vectors run along n
        line_vecs = BN / VEC_ELEMS;
        line = v / line_vecs; vec_in_line = v % line_vecs;
        outer = k0 + line; inner = n0 + vec_in_line * VEC_ELEMS;
        slot = line * B_LINE_VECS_R + vec_in_line;
        if (outer >= p.K || inner >= p.N) return uvec4(0);
    }
    return b[(batch_base + outer * p.b_ld + inner) / VEC_ELEMS];
}

// Stages one 16x16 accumulator tile in this warp's shared slot and writes it with alpha/beta.
// (A macro: matbridge's NV->KHR pass does not yet rewrite functions taking matrices.)
#ifdef ACC_F16
#define TO_OUT(acc) OUTTYPE(acc)
#else
#define TO_OUT(acc) acc
#endif
#define STORE_TILE(acc, i, j)                                                        \
    {                                                                                \
        coopMatStoreNV(TO_OUT(acc), Cs, stage, 16u, false);                          \
        barrier();                                                                   \
        for (uint e = lane; e < 256u; e += 32u) {                                    \
            uint gi = m0 + wm + (i) * 16u + e / 16u;                                 \
            uint gj = n0 + wn + (j) * 16u + e % 16u;                                 \
            if (gi < p.M && gj < p.N) {                                              \
                uint ci = bt * p.c_batch + gi * p.c_row + gj * p.c_col;              \
                SCALAR v = SCALAR(p.alpha) * SCALAR(Cs[stage + e]);                  \
                if (p.beta != 0.0) v += SCALAR(p.beta) * c[ci];                      \
                c[ci] = v;                                                           \
            }                                                                        \
        }                                                                            \
        barrier();                                                                   \
    }

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint warp = tid / 32u;
    uint lane = tid % 32u;
    uint bt = gl_WorkGroupID.z;
    uint m0 = gl_WorkGroupID.y * BM;
    uint n0 = gl_WorkGroupID.x * BN;
    uint wm = (warp / (BN / WN)) * WM;
    uint wn = (warp % (BN / WN)) * WN;
    uint abase = bt * p.a_batch;
    uint bbase = bt * p.b_batch;

    // (Matrices are individual variables, not arrays: matbridge's NV->KHR pass does not yet
    // split arrays of matrices per Use.) TM = 4, TN = 4 (2 when NARROW).
    CTYPE acc00 = CTYPE(0.0), acc01 = CTYPE(0.0), acc10 = CTYPE(0.0), acc11 = CTYPE(0.0), acc20 = CTYPE(0.0), acc21 = CTYPE(0.0), acc30 = CTYPE(0.0), acc31 = CTYPE(0.0);
#ifndef NARROW
    CTYPE acc02 = CTYPE(0.0), acc03 = CTYPE(0.0), acc12 = CTYPE(0.0), acc13 = CTYPE(0.0), acc22 = CTYPE(0.0), acc23 = CTYPE(0.0), acc32 = CTYPE(0.0), acc33 = CTYPE(0.0);
#endif

    uvec4 ra[A_PER_THREAD];
    uvec4 rb[B_PER_THREAD];
    uint sa[A_PER_THREAD];
    uint sb[B_PER_THREAD];
    [[unroll]] for (uint q = 0; q < A_PER_THREAD; q++) ra[q] = load_a(abase, m0, 0u, tid + q * THREADS, sa[q]);
    [[unroll]] for (uint q = 0; q < B_PER_THREAD; q++) rb[q] = load_b(bbase, n0, 0u, tid + q * THREADS, sb[q]);

    for (uint k0 = 0; k0 < p.K; k0 += BK) {
        [[unroll]] for (uint q = 0; q < A_PER_THREAD; q++) As[sa[q]] = ra[q];
        [[unroll]] for (uint q = 0; q < B_PER_THREAD; q++) Bs[sb[q]] = rb[q];
        barrier();
        if (k0 + BK < p.K) {
            [[unroll]] for (uint q = 0; q < A_PER_THREAD; q++) ra[q] = load_a(abase, m0, k0 + BK, tid + q * THREADS, sa[q]);
            [[unroll]] for (uint q = 0; q < B_PER_THREAD; q++) rb[q] = load_b(bbase, n0, k0 + BK, tid + q * THREADS, sb[q]);
        }
        [[unroll]] for (uint kk = 0; kk < BK; kk += MMA_K) {
            ATYPE fa0, fa1, fa2, fa3;
            BTYPE fb0, fb1;
#ifndef NARROW
            BTYPE fb2, fb3;
#endif
            if (A_COLMAJOR) {
                coopMatLoadNV(fa0, As, kk * A_LINE_VECS_C + (wm + 0u) / VEC_ELEMS, A_LINE_VECS_C, true);
                coopMatLoadNV(fa1, As, kk * A_LINE_VECS_C + (wm + 16u) / VEC_ELEMS, A_LINE_VECS_C, true);
                coopMatLoadNV(fa2, As, kk * A_LINE_VECS_C + (wm + 32u) / VEC_ELEMS, A_LINE_VECS_C, true);
                coopMatLoadNV(fa3, As, kk * A_LINE_VECS_C + (wm + 48u) / VEC_ELEMS, A_LINE_VECS_C, true);
            } else {
                coopMatLoadNV(fa0, As, (wm + 0u) * A_LINE_VECS_R + kk / VEC_ELEMS, A_LINE_VECS_R, false);
                coopMatLoadNV(fa1, As, (wm + 16u) * A_LINE_VECS_R + kk / VEC_ELEMS, A_LINE_VECS_R, false);
                coopMatLoadNV(fa2, As, (wm + 32u) * A_LINE_VECS_R + kk / VEC_ELEMS, A_LINE_VECS_R, false);
                coopMatLoadNV(fa3, As, (wm + 48u) * A_LINE_VECS_R + kk / VEC_ELEMS, A_LINE_VECS_R, false);
            }
            if (B_COLMAJOR) {
                coopMatLoadNV(fb0, Bs, (wn + 0u) * B_LINE_VECS_C + kk / VEC_ELEMS, B_LINE_VECS_C, true);
                coopMatLoadNV(fb1, Bs, (wn + 16u) * B_LINE_VECS_C + kk / VEC_ELEMS, B_LINE_VECS_C, true);
#ifndef NARROW
                coopMatLoadNV(fb2, Bs, (wn + 32u) * B_LINE_VECS_C + kk / VEC_ELEMS, B_LINE_VECS_C, true);
#endif
#ifndef NARROW
                coopMatLoadNV(fb3, Bs, (wn + 48u) * B_LINE_VECS_C + kk / VEC_ELEMS, B_LINE_VECS_C, true);
#endif
            } else {
                coopMatLoadNV(fb0, Bs, kk * B_LINE_VECS_R + (wn + 0u) / VEC_ELEMS, B_LINE_VECS_R, false);
                coopMatLoadNV(fb1, Bs, kk * B_LINE_VECS_R + (wn + 16u) / VEC_ELEMS, B_LINE_VECS_R, false);
#ifndef NARROW
                coopMatLoadNV(fb2, Bs, kk * B_LINE_VECS_R + (wn + 32u) / VEC_ELEMS, B_LINE_VECS_R, false);
#endif
#ifndef NARROW
                coopMatLoadNV(fb3, Bs, kk * B_LINE_VECS_R + (wn + 48u) / VEC_ELEMS, B_LINE_VECS_R, false);
#endif
            }
            acc00 = coopMatMulAddNV(fa0, fb0, acc00);
            acc01 = coopMatMulAddNV(fa0, fb1, acc01);
#ifndef NARROW
            acc02 = coopMatMulAddNV(fa0, fb2, acc02);
#endif
#ifndef NARROW
            acc03 = coopMatMulAddNV(fa0, fb3, acc03);
#endif
            acc10 = coopMatMulAddNV(fa1, fb0, acc10);
            acc11 = coopMatMulAddNV(fa1, fb1, acc11);
#ifndef NARROW
            acc12 = coopMatMulAddNV(fa1, fb2, acc12);
#endif
#ifndef NARROW
            acc13 = coopMatMulAddNV(fa1, fb3, acc13);
#endif
            acc20 = coopMatMulAddNV(fa2, fb0, acc20);
            acc21 = coopMatMulAddNV(fa2, fb1, acc21);
#ifndef NARROW
            acc22 = coopMatMulAddNV(fa2, fb2, acc22);
#endif
#ifndef NARROW
            acc23 = coopMatMulAddNV(fa2, fb3, acc23);
#endif
            acc30 = coopMatMulAddNV(fa3, fb0, acc30);
            acc31 = coopMatMulAddNV(fa3, fb1, acc31);
#ifndef NARROW
            acc32 = coopMatMulAddNV(fa3, fb2, acc32);
#endif
#ifndef NARROW
            acc33 = coopMatMulAddNV(fa3, fb3, acc33);
#endif
        }
        barrier();
    }

    // Epilogue: each warp stages one 16x16 tile at a time and writes it with alpha/beta.
    uint stage = warp * 256u;
    STORE_TILE(acc00, 0u, 0u)
    STORE_TILE(acc01, 0u, 1u)
#ifndef NARROW
    STORE_TILE(acc02, 0u, 2u)
#endif
#ifndef NARROW
    STORE_TILE(acc03, 0u, 3u)
#endif
    STORE_TILE(acc10, 1u, 0u)
    STORE_TILE(acc11, 1u, 1u)
#ifndef NARROW
    STORE_TILE(acc12, 1u, 2u)
#endif
#ifndef NARROW
    STORE_TILE(acc13, 1u, 3u)
#endif
    STORE_TILE(acc20, 2u, 0u)
    STORE_TILE(acc21, 2u, 1u)
#ifndef NARROW
    STORE_TILE(acc22, 2u, 2u)
#endif
#ifndef NARROW
    STORE_TILE(acc23, 2u, 3u)
#endif
    STORE_TILE(acc30, 3u, 0u)
    STORE_TILE(acc31, 3u, 1u)
#ifndef NARROW
    STORE_TILE(acc32, 3u, 2u)
#endif
#ifndef NARROW
    STORE_TILE(acc33, 3u, 3u)
#endif
}
