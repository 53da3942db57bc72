// clang: -Xclang -cl-ext=+cl_khr_subgroups,+cl_intel_subgroups,+cl_intel_required_subgroup_size,+cl_khr_fp16 -include opencl-c.h
// llvm-spirv: --spirv-ext=+SPV_INTEL_subgroups
// A GEMM written for Intel's matrix engine, as DPAS kernels are: D (M x N, f32) = A (M x K, f16,
// row-major) x B (K x N, f16, row-major), each sub-group computing a (8 TM) x (16 TN) tile of
// D as TM x TN DPAS tiles of 8 x 16 whose accumulators a K loop carries, A and B read into the
// DPAS operand layouts (B's column as VNNI pairs of rows). Two forms: sub-group 16 with the
// cl_intel_subgroup_matrix_multiply_accumulate built-in, and Intel's sub-group-32 form (N = 16,
// each invocation holding half of the sub-group-16 operands) through the SPIR-V friendly call;
// 4 x 2 tiles (`dpas_gemm_sg*`, as fast kernels have) and 2 x 1 (`dpas_gemm_small_*`).
// Work-groups of 4 sub-groups; M a multiple of 8 TM, N of 16 TN, K of 16.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

#define OVLD __attribute__((overloadable))
float8 OVLD intel_sub_group_f16_f16_matrix_mad_k16(short8 a, int8 b, float8 acc);
float4 OVLD __spirv_SubgroupMatrixMultiplyAccumulateINTEL(int k, short4 a, int4 b, float4 c, int operands);

// Column `col` of B, rows k and k + 1, as one VNNI word.
static inline int pair(__global const ushort* b, int n, int k, int col) {
    return (int)((uint)b[k * n + col] | ((uint)b[(k + 1) * n + col] << 16));
}

#define GEMM_SG16(NAME, TM, TN) \
__kernel __attribute__((intel_reqd_sub_group_size(16))) __attribute__((reqd_work_group_size(64, 1, 1))) \
void NAME(__global const ushort* a, __global const ushort* b, __global float* d, int m, int n, int k) { \
    int lane = get_sub_group_local_id(); \
    int tile = get_global_id(0) / 16; \
    int tiles_n = n / (16 * TN); \
    int m0 = tile / tiles_n * 8 * TM, n0 = tile % tiles_n * 16 * TN; \
    float8 acc[TM][TN]; \
    _Pragma("unroll") for (int r = 0; r < TM; r++) \
        _Pragma("unroll") for (int t = 0; t < TN; t++) \
            acc[r][t] = (float8)(0.0f); \
    for (int k0 = 0; k0 < k; k0 += 16) { \
        short8 ra[TM]; \
        int8 rb[TN]; \
        _Pragma("unroll") for (int r = 0; r < TM; r++) { \
            short v[8]; \
            _Pragma("unroll") for (int c = 0; c < 8; c++) \
                v[c] = (short)a[(m0 + 8 * r + c) * k + k0 + lane]; \
            ra[r] = (short8)(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]); \
        } \
        _Pragma("unroll") for (int t = 0; t < TN; t++) { \
            int v[8]; \
            _Pragma("unroll") for (int j = 0; j < 8; j++) \
                v[j] = pair(b, n, k0 + 2 * j, n0 + 16 * t + lane); \
            rb[t] = (int8)(v[0], v[1], v[2], v[3], v[4], v[5], v[6], v[7]); \
        } \
        _Pragma("unroll") for (int r = 0; r < TM; r++) \
            _Pragma("unroll") for (int t = 0; t < TN; t++) \
                acc[r][t] = intel_sub_group_f16_f16_matrix_mad_k16(ra[r], rb[t], acc[r][t]); \
    } \
    _Pragma("unroll") for (int r = 0; r < TM; r++) \
        _Pragma("unroll") for (int t = 0; t < TN; t++) { \
            float v[8]; \
            vstore8(acc[r][t], 0, v); \
            _Pragma("unroll") for (int c = 0; c < 8; c++) \
                d[(m0 + 8 * r + c) * n + n0 + 16 * t + lane] = v[c]; \
        } \
}

// Component c of invocation l is component 2c + l / 16 of invocation l % 16 in the sub-group-16
// layout: A's row 2c + h, B's rows 4c + 2h and 4c + 2h + 1, D's row 2c + h.
#define GEMM_SG32(NAME, TM, TN, KDIM, KLOOP) \
__kernel __attribute__((intel_reqd_sub_group_size(32))) __attribute__((reqd_work_group_size(128, 1, 1))) \
void NAME(__global const ushort* a, __global const ushort* b, __global float* d, int m, int n, int k) { \
    int lane = get_sub_group_local_id(); \
    int i = lane & 15, h = lane >> 4; \
    int tile = get_global_id(0) / 32; \
    int tiles_n = n / (16 * TN); \
    int m0 = tile / tiles_n * 8 * TM, n0 = tile % tiles_n * 16 * TN; \
    float4 acc[TM][TN]; \
    _Pragma("unroll") for (int r = 0; r < TM; r++) \
        _Pragma("unroll") for (int t = 0; t < TN; t++) \
            acc[r][t] = (float4)(0.0f); \
    KLOOP for (int k0 = 0; k0 < KDIM; k0 += 16) { \
        short4 ra[TM]; \
        int4 rb[TN]; \
        _Pragma("unroll") for (int r = 0; r < TM; r++) { \
            short v[4]; \
            _Pragma("unroll") for (int c = 0; c < 4; c++) \
                v[c] = (short)a[(m0 + 8 * r + 2 * c + h) * k + k0 + i]; \
            ra[r] = (short4)(v[0], v[1], v[2], v[3]); \
        } \
        _Pragma("unroll") for (int t = 0; t < TN; t++) { \
            int v[4]; \
            _Pragma("unroll") for (int c = 0; c < 4; c++) \
                v[c] = pair(b, n, k0 + 4 * c + 2 * h, n0 + 16 * t + i); \
            rb[t] = (int4)(v[0], v[1], v[2], v[3]); \
        } \
        _Pragma("unroll") for (int r = 0; r < TM; r++) \
            _Pragma("unroll") for (int t = 0; t < TN; t++) \
                acc[r][t] = __spirv_SubgroupMatrixMultiplyAccumulateINTEL(16, ra[r], rb[t], acc[r][t], 0xc00); \
    } \
    _Pragma("unroll") for (int r = 0; r < TM; r++) \
        _Pragma("unroll") for (int t = 0; t < TN; t++) { \
            float v[4]; \
            vstore4(acc[r][t], 0, v); \
            _Pragma("unroll") for (int c = 0; c < 4; c++) \
                d[(m0 + 8 * r + 2 * c + h) * n + n0 + 16 * t + i] = v[c]; \
        } \
}

GEMM_SG16(dpas_gemm_sg16, 4, 2)
GEMM_SG32(dpas_gemm_sg32, 4, 2, k, )
GEMM_SG16(dpas_gemm_small_sg16, 2, 1)
GEMM_SG32(dpas_gemm_small_sg32, 2, 1, k, )
// K fixed at 48 (a loop that always runs: its results leave it without a phi).
GEMM_SG32(dpas_gemm_small_k48_sg32, 2, 1, 48, _Pragma("nounroll"))
