// clang: -Xclang -cl-ext=+cl_khr_subgroups,+cl_intel_subgroups,+cl_intel_required_subgroup_size,+cl_khr_fp16 -include opencl-c.h
// llvm-spirv: --spirv-ext=+all
// A GEMM as Intel's Triton backend writes its LLVM IR: D (M x N, f32) = A (M x K, f16) x B
// (K x N, f16), both row-major, each sub-group of 16 computing a 16 x 16 tile of D in steps of
// 32 along K. One 2D block read of two 16 x 16 blocks brings the tile's A rows, one transformed
// read of a 32 x 16 block its B columns; each read lands in one vector (32 halves, 16 VNNI words
// per invocation), and the DPAS operands are shuffled out of it. llvm-spirv, with every
// extension enabled as Triton's backend runs it, writes the vector of 32 halves (and those of
// triton_gemm_wide below, Triton's larger tiles) with SPV_INTEL_vector_compute's
// VectorAnyINTEL. The region is the matrix itself: any M, N and K.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

typedef ushort ushort32 __attribute__((ext_vector_type(32)));

#define OVLD __attribute__((overloadable))
#define REGION __global void* base, int width, int height, int pitch, int2 coord
void OVLD intel_sub_group_2d_block_read_16b_16r16x2c(REGION, __private ushort* dst);
void OVLD intel_sub_group_2d_block_read_transform_16b_32r16x1c(REGION, __private uint* dst);
void OVLD intel_sub_group_2d_block_write_32b_8r16x1c(REGION, __private uint* values);
float8 OVLD intel_sub_group_f16_f16_matrix_mad_k16(short8 a, int8 b, float8 acc);

// A's operand for rows 8 I.. of the tile and the K half H; B's for K half H.
#define A_OP(I, H) as_short8(__builtin_shufflevector(va, va, 16 * H + 8 * I, 16 * H + 8 * I + 1, 16 * H + 8 * I + 2, 16 * H + 8 * I + 3, 16 * H + 8 * I + 4, 16 * H + 8 * I + 5, 16 * H + 8 * I + 6, 16 * H + 8 * I + 7))
#define B_OP(H) as_int8(__builtin_shufflevector(vb, vb, 8 * H, 8 * H + 1, 8 * H + 2, 8 * H + 3, 8 * H + 4, 8 * H + 5, 8 * H + 6, 8 * H + 7))
#define MAD(I) \
    acc[I] = intel_sub_group_f16_f16_matrix_mad_k16(A_OP(I, 0), B_OP(0), acc[I]); \
    acc[I] = intel_sub_group_f16_f16_matrix_mad_k16(A_OP(I, 1), B_OP(1), acc[I]);

__kernel __attribute__((intel_reqd_sub_group_size(16))) __attribute__((reqd_work_group_size(64, 1, 1)))
void triton_gemm(__global const ushort* a, __global const ushort* b, __global float* d, int m, int n, int k) {
    int tile = get_global_id(0) / 16;
    int tiles_n = (n + 15) / 16;
    int m0 = tile / tiles_n * 16, n0 = tile % tiles_n * 16;
    float8 acc[2] = {(float8)(0.0f), (float8)(0.0f)};
    for (int k0 = 0; k0 < k; k0 += 32) {
        ushort ra[32];
        uint rb[16];
        intel_sub_group_2d_block_read_16b_16r16x2c((__global void*)a, 2 * k, m, 2 * k, (int2)(k0, m0), ra);
        intel_sub_group_2d_block_read_transform_16b_32r16x1c((__global void*)b, 2 * n, k, 2 * n, (int2)(n0, k0), rb);
        ushort32 va = *(__private ushort32*)ra;
        uint16 vb = *(__private uint16*)rb;
        MAD(0) MAD(1)
    }
    for (int i = 0; i < 2; i++)
        intel_sub_group_2d_block_write_32b_8r16x1c((__global void*)d, 4 * n, m, 4 * n, (int2)(n0, m0 + 8 * i), (__private uint*)&acc[i]);
}

// The same with Triton's larger tiles: a 32 x 32 tile of D per sub-group, A through one read of
// two 32 x 16 blocks (64 halves per invocation), B through one transformed read of two 32 x 16
// blocks (32 words).
typedef ushort ushort64 __attribute__((ext_vector_type(64)));
typedef uint uint32 __attribute__((ext_vector_type(32)));
void OVLD intel_sub_group_2d_block_read_16b_32r16x2c(REGION, __private ushort* dst);
void OVLD intel_sub_group_2d_block_read_transform_16b_32r16x2c(REGION, __private uint* dst);

#define WIDE_A(I, H) as_short8(__builtin_shufflevector(va, va, 32 * H + 8 * I, 32 * H + 8 * I + 1, 32 * H + 8 * I + 2, 32 * H + 8 * I + 3, 32 * H + 8 * I + 4, 32 * H + 8 * I + 5, 32 * H + 8 * I + 6, 32 * H + 8 * I + 7))
#define WIDE_B(T, H) as_int8(__builtin_shufflevector(vb, vb, 16 * T + 8 * H, 16 * T + 8 * H + 1, 16 * T + 8 * H + 2, 16 * T + 8 * H + 3, 16 * T + 8 * H + 4, 16 * T + 8 * H + 5, 16 * T + 8 * H + 6, 16 * T + 8 * H + 7))
#define WIDE_MAD(I, T) \
    acc[I][T] = intel_sub_group_f16_f16_matrix_mad_k16(WIDE_A(I, 0), WIDE_B(T, 0), acc[I][T]); \
    acc[I][T] = intel_sub_group_f16_f16_matrix_mad_k16(WIDE_A(I, 1), WIDE_B(T, 1), acc[I][T]);

__kernel __attribute__((intel_reqd_sub_group_size(16))) __attribute__((reqd_work_group_size(64, 1, 1)))
void triton_gemm_wide(__global const ushort* a, __global const ushort* b, __global float* d, int m, int n, int k) {
    int tile = get_global_id(0) / 16;
    int tiles_n = (n + 31) / 32;
    int m0 = tile / tiles_n * 32, n0 = tile % tiles_n * 32;
    float8 acc[4][2];
    for (int i = 0; i < 4; i++)
        for (int t = 0; t < 2; t++)
            acc[i][t] = (float8)(0.0f);
    for (int k0 = 0; k0 < k; k0 += 32) {
        ushort ra[64];
        uint rb[32];
        intel_sub_group_2d_block_read_16b_32r16x2c((__global void*)a, 2 * k, m, 2 * k, (int2)(k0, m0), ra);
        intel_sub_group_2d_block_read_transform_16b_32r16x2c((__global void*)b, 2 * n, k, 2 * n, (int2)(n0, k0), rb);
        ushort64 va = *(__private ushort64*)ra;
        uint32 vb = *(__private uint32*)rb;
        WIDE_MAD(0, 0) WIDE_MAD(0, 1) WIDE_MAD(1, 0) WIDE_MAD(1, 1) WIDE_MAD(2, 0) WIDE_MAD(2, 1) WIDE_MAD(3, 0) WIDE_MAD(3, 1)
    }
    for (int i = 0; i < 4; i++)
        for (int t = 0; t < 2; t++)
            intel_sub_group_2d_block_write_32b_8r16x1c((__global void*)d, 4 * n, m, 4 * n, (int2)(n0 + 16 * t, m0 + 8 * i), (__private uint*)&acc[i][t]);
}
