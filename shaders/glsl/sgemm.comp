#version 450
// f32 GEMM for GPUs (register-blocked, double-buffered workgroup memory):
//
//   C[b] = alpha * op(A[b]) * op(B[b]) + beta * C[b]      (any M, N, K, batch and element strides)
//
// One workgroup computes a BM x BN tile of C with (BM / 4RM) x (BN / 4RN) invocations; each
// invocation owns RM x RN blocks of 4 x 4 outputs, block (hm, hn) at rows 4(ty + hm TY) .. +3 and
// columns 4(tx + hn TX) .. +3, so that its operand values come from shared memory as 16-byte
// vectors (a subgroup reads one broadcast A vector and consecutive B vectors per block).
// - K advances BK at a time. Each tile of A and B is read from global memory along the operand's
//   contiguous dimension (coalesced), zero-filled past the edges, into registers while the
//   previous tile is multiplied, then written to the other of two shared buffers (one barrier
//   per K tile).
// - Shared tiles are stored k-major (A as [k][m], B as [k][n]) with one vector of padding per
//   line, so that stores along k fall in distinct banks.
// Operands are plain f32 arrays; the parameter block is the subgroup kernels' `Params`
// (`TiledParams` in src/matmul/tiled.rs). Build defines: BM, BN, BK, RM, RN.
#extension GL_EXT_control_flow_attributes : enable

#define TX (BN / (4 * RN))
#define TY (BM / (4 * RM))
#define THREADS (TX * TY)
#if (BM % (4 * RM)) != 0 || (BN % (4 * RN)) != 0 || ((BM * BK) % THREADS) != 0 || ((BN * BK) % THREADS) != 0
#error tile does not divide among the invocations
#endif
#define A_LOADS (BM * BK / THREADS)
#define B_LOADS (BN * BK / THREADS)
// Shared line pitch in vectors (one vector of padding).
#define AP (BM / 4 + 1)
#define BP (BN / 4 + 1)

layout(local_size_x = THREADS) in;

layout(set = 0, binding = 0) readonly buffer ABuf { float a[]; };
layout(set = 0, binding = 1) readonly buffer BBuf { float b[]; };
layout(set = 0, binding = 2) buffer CBuf { float c[]; };
layout(set = 0, binding = 3) readonly buffer Params {
    uint M, N, K, batch;
    uint a_row, a_col, a_batch;
    uint b_row, b_col, b_batch;
    uint c_row, c_col, c_batch;
    float alpha, beta;
} p;

shared vec4 As[2][BK][AP];
shared vec4 Bs[2][BK][BP];

void main() {
    uint tid = gl_LocalInvocationID.x;
    uint tx = tid % TX, ty = tid / TX;
    uint bt = gl_WorkGroupID.z;
    uint m0 = gl_WorkGroupID.y * BM;
    uint n0 = gl_WorkGroupID.x * BN;

    // Each invocation's staged elements: (row / column within the tile, k within the step),
    // numbered along k when that is the operand's contiguous dimension, else along m / n.
    bool a_along_k = p.a_col == 1u;
    bool b_along_k = p.b_row == 1u && p.b_col != 1u;
    uint am[A_LOADS], ak[A_LOADS], bn[B_LOADS], bk[B_LOADS];
    // Global offsets at k = 0 (elements), and whether the row / column lies inside C.
    uint aoff[A_LOADS], boff[B_LOADS];
    bool ain[A_LOADS], bin[B_LOADS];
    [[unroll]] for (uint q = 0; q < A_LOADS; q++) {
        uint idx = tid + q * THREADS;
        am[q] = a_along_k ? idx / BK : idx % BM;
        ak[q] = a_along_k ? idx % BK : idx / BM;
        ain[q] = m0 + am[q] < p.M;
        aoff[q] = bt * p.a_batch + (ain[q] ? m0 + am[q] : 0u) * p.a_row + ak[q] * p.a_col;
    }
    [[unroll]] for (uint q = 0; q < B_LOADS; q++) {
        uint idx = tid + q * THREADS;
        bn[q] = b_along_k ? idx / BK : idx % BN;
        bk[q] = b_along_k ? idx % BK : idx / BN;
        bin[q] = n0 + bn[q] < p.N;
        boff[q] = bt * p.b_batch + (bin[q] ? n0 + bn[q] : 0u) * p.b_col + bk[q] * p.b_row;
    }
    uint a_step = BK * p.a_col, b_step = BK * p.b_row;

    float ra[A_LOADS], rb[B_LOADS];
    vec4 acc[4 * RM][RN];
    [[unroll]] for (uint i = 0; i < 4 * RM; i++) {
        [[unroll]] for (uint j = 0; j < RN; j++) acc[i][j] = vec4(0.0);
    }

    uint ktiles = (p.K + BK - 1u) / BK;
    // Tile 0 into buffer 0.
    [[unroll]] for (uint q = 0; q < A_LOADS; q++) ra[q] = ain[q] && ak[q] < p.K ? a[aoff[q]] : 0.0;
    [[unroll]] for (uint q = 0; q < B_LOADS; q++) rb[q] = bin[q] && bk[q] < p.K ? b[boff[q]] : 0.0;
    [[unroll]] for (uint q = 0; q < A_LOADS; q++) As[0][ak[q]][am[q] / 4u][am[q] % 4u] = ra[q];
    [[unroll]] for (uint q = 0; q < B_LOADS; q++) Bs[0][bk[q]][bn[q] / 4u][bn[q] % 4u] = rb[q];
    barrier();

    for (uint kt = 0; kt < ktiles; kt++) {
        uint s = kt % 2u;
        bool more = kt + 1u < ktiles;
        // Fetch tile kt + 1 while this one is multiplied.
        if (more) {
            uint k1 = (kt + 1u) * BK;
            [[unroll]] for (uint q = 0; q < A_LOADS; q++) {
                aoff[q] += a_step;
                ra[q] = ain[q] && k1 + ak[q] < p.K ? a[aoff[q]] : 0.0;
            }
            [[unroll]] for (uint q = 0; q < B_LOADS; q++) {
                boff[q] += b_step;
                rb[q] = bin[q] && k1 + bk[q] < p.K ? b[boff[q]] : 0.0;
            }
        }
        [[unroll]] for (uint kk = 0; kk < BK; kk++) {
            vec4 av[RM], bv[RN];
            [[unroll]] for (uint h = 0; h < RM; h++) av[h] = As[s][kk][ty + h * TY];
            [[unroll]] for (uint h = 0; h < RN; h++) bv[h] = Bs[s][kk][tx + h * TX];
            [[unroll]] for (uint hm = 0; hm < RM; hm++) {
                [[unroll]] for (uint i = 0; i < 4; i++) {
                    [[unroll]] for (uint hn = 0; hn < RN; hn++) acc[hm * 4 + i][hn] = fma(vec4(av[hm][i]), bv[hn], acc[hm * 4 + i][hn]);
                }
            }
        }
        if (more) {
            uint t = s ^ 1u;
            [[unroll]] for (uint q = 0; q < A_LOADS; q++) As[t][ak[q]][am[q] / 4u][am[q] % 4u] = ra[q];
            [[unroll]] for (uint q = 0; q < B_LOADS; q++) Bs[t][bk[q]][bn[q] / 4u][bn[q] % 4u] = rb[q];
        }
        barrier();
    }

    uint cbase = bt * p.c_batch;
    [[unroll]] for (uint hm = 0; hm < RM; hm++) {
        [[unroll]] for (uint i = 0; i < 4; i++) {
            uint gi = m0 + (ty + hm * TY) * 4u + i;
            if (gi >= p.M) continue;
            [[unroll]] for (uint hn = 0; hn < RN; hn++) {
                [[unroll]] for (uint j = 0; j < 4; j++) {
                    uint gj = n0 + (tx + hn * TX) * 4u + j;
                    if (gj < p.N) {
                        uint ci = cbase + gi * p.c_row + gj * p.c_col;
                        float v = p.alpha * acc[hm * 4 + i][hn][j];
                        if (p.beta != 0.0) v += p.beta * c[ci];
                        c[ci] = v;
                    }
                }
            }
        }
    }
}
