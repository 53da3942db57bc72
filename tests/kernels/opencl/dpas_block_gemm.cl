// clang: -Xclang -cl-ext=+cl_khr_subgroups,+cl_intel_subgroups,+cl_intel_required_subgroup_size,+cl_khr_fp16 -include opencl-c.h
// llvm-spirv: --spirv-ext=+SPV_INTEL_subgroups
// A GEMM as Intel's matrix kernels are written for the hardware's 2D block engine: D (M x N,
// f32) = A (M x K, f16, row-major) x B (K x N, f16, row-major), each sub-group computing a
// (8 TM) x (16 TN) tile of D. Per step of 16 along K, one 2D block read brings the sub-group's
// A rows (32 x 16 or 16 x 16 halves, the DPAS A layout of each 8-row tile in turn), one
// transformed read B's columns as VNNI pairs of rows (two 16 x 16 blocks side by side for
// TN = 2), and the tiles' results leave through 2D block writes of 8 x 16 floats. The block
// layouts are the DPAS operand layouts at sub-group 16 and, in Intel's sub-group-32 form
// (each invocation holding half of the values), at 32. The region is the matrix itself, so
// blocks past M, N or K read zero and write nothing: any M, N and K work, with
// ceil(M / 8 TM) x ceil(N / 16 TN) sub-groups in work-groups of four.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

#define OVLD __attribute__((overloadable))
#define REGION __global void* base, int width, int height, int pitch, int2 coord
void OVLD intel_sub_group_2d_block_read_16b_32r16x1c(REGION, __private ushort* dst);
void OVLD intel_sub_group_2d_block_read_16b_16r16x1c(REGION, __private ushort* dst);
void OVLD intel_sub_group_2d_block_read_transform_16b_16r16x2c(REGION, __private uint* dst);
void OVLD intel_sub_group_2d_block_read_transform_16b_16r16x1c(REGION, __private uint* dst);
void OVLD intel_sub_group_2d_block_write_32b_8r16x1c(REGION, __private uint* values);
float8 OVLD intel_sub_group_f16_f16_matrix_mad_k16(short8 a, int8 b, float8 acc);
float4 OVLD __spirv_SubgroupMatrixMultiplyAccumulateINTEL(int k, short4 a, int4 b, float4 c, int operands);

#define MAD16(a, b, c) intel_sub_group_f16_f16_matrix_mad_k16(a, b, c)
#define MAD32(a, b, c) __spirv_SubgroupMatrixMultiplyAccumulateINTEL(16, a, b, c, 0xc00)

// V: values per invocation of one 8 x 16 tile (8 at sub-group 16, 4 at 32); AV, BV, CV: the
// DPAS operand vectors; READ_A / READ_B: the block reads of 8 TM rows and 16 TN columns.
#define GEMM(NAME, SG, TM, TN, V, AV, BV, CV, MAD, READ_A, READ_B) \
__kernel __attribute__((intel_reqd_sub_group_size(SG))) __attribute__((reqd_work_group_size(4 * SG, 1, 1))) \
void NAME(__global const ushort* a, __global const ushort* b, __global float* d, int m, int n, int k) { \
    int tile = get_global_id(0) / SG; \
    int tiles_n = (n + 16 * TN - 1) / (16 * TN); \
    int m0 = tile / tiles_n * 8 * TM, n0 = tile % tiles_n * 16 * TN; \
    CV acc[TM][TN]; \
    _Pragma("unroll") for (int r = 0; r < TM; r++) \
        _Pragma("unroll") for (int t = 0; t < TN; t++) \
            acc[r][t] = (CV)(0.0f); \
    for (int k0 = 0; k0 < k; k0 += 16) { \
        ushort ra[TM * V]; \
        uint rb[TN * V]; \
        READ_A((__global void*)a, 2 * k, m, 2 * k, (int2)(k0, m0), ra); \
        READ_B((__global void*)b, 2 * n, k, 2 * n, (int2)(n0, k0), rb); \
        _Pragma("unroll") for (int r = 0; r < TM; r++) \
            _Pragma("unroll") for (int t = 0; t < TN; t++) \
                acc[r][t] = MAD(*(__private AV*)&ra[r * V], *(__private BV*)&rb[t * V], acc[r][t]); \
    } \
    _Pragma("unroll") for (int r = 0; r < TM; r++) \
        _Pragma("unroll") for (int t = 0; t < TN; t++) \
            intel_sub_group_2d_block_write_32b_8r16x1c((__global void*)d, 4 * n, m, 4 * n, (int2)(n0 + 16 * t, m0 + 8 * r), (__private uint*)&acc[r][t]); \
}

GEMM(dpas_block_gemm_sg16, 16, 4, 2, 8, short8, int8, float8, MAD16, intel_sub_group_2d_block_read_16b_32r16x1c, intel_sub_group_2d_block_read_transform_16b_16r16x2c)
GEMM(dpas_block_gemm_sg32, 32, 4, 2, 4, short4, int4, float4, MAD32, intel_sub_group_2d_block_read_16b_32r16x1c, intel_sub_group_2d_block_read_transform_16b_16r16x2c)
GEMM(dpas_block_gemm_small_sg16, 16, 2, 1, 8, short8, int8, float8, MAD16, intel_sub_group_2d_block_read_16b_16r16x1c, intel_sub_group_2d_block_read_transform_16b_16r16x1c)
GEMM(dpas_block_gemm_small_sg32, 32, 2, 1, 4, short4, int4, float4, MAD32, intel_sub_group_2d_block_read_16b_16r16x1c, intel_sub_group_2d_block_read_transform_16b_16r16x1c)
