// clang: -Xclang -cl-ext=+cl_khr_subgroups,+cl_intel_subgroups,+cl_intel_required_subgroup_size,+cl_khr_fp16 -include opencl-c.h
// llvm-spirv: --spirv-ext=+SPV_INTEL_subgroups
// Intel's DPAS as OpenCL C reaches it: cl_intel_subgroup_matrix_multiply_accumulate's
// intel_sub_group_<a>_<b>_matrix_mad_k<K> built-ins and the SPIR-V friendly
// __spirv_SubgroupMatrixMultiplyAccumulateINTEL, which llvm-spirv keeps as calls of imported
// functions, at the sub-group sizes Intel's GPUs run them (8 on DG2, 16 on PVC, 32 in Intel's
// half-data form, and the spec's own reading at 32). clang-19's opencl-c.h declares none of
// them. Each work-group is one sub-group; invocation l of group g reads its operands at index
// g * SG + l and writes its result there.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define OVLD __attribute__((overloadable))
int8 OVLD intel_sub_group_i8_i8_matrix_mad_k32(int8 a, int8 b, int8 acc);
int4 OVLD intel_sub_group_u8_i8_matrix_mad_k32(uint4 a, int8 b, int4 acc);
float8 OVLD intel_sub_group_f16_f16_matrix_mad_k16(int8 a, int8 b, float8 acc);
float2 OVLD intel_sub_group_bf16_bf16_matrix_mad_k16(int2 a, int8 b, float2 acc);
int OVLD intel_sub_group_i4_i4_matrix_mad_k64(int a, int8 b, int acc);
float8 OVLD intel_sub_group_f16_f16_matrix_mad_k16(short8 a, int8 b, float8 acc);
short4 OVLD intel_sub_group_bf16_bf16_matrix_mad_k16(short4 a, int8 b, short4 acc);
int2 OVLD intel_sub_group_i8_u8_matrix_mad_k32(short2 a, uint8 b, int2 acc);
float4 OVLD intel_sub_group_tf32_tf32_matrix_mad_k8(float2 a, float8 b, float4 acc);
half8 OVLD intel_sub_group_f16_f16_matrix_mad_k16(short8 a, int8 b, half8 acc);
float4 OVLD __spirv_SubgroupMatrixMultiplyAccumulateINTEL(int k, short4 a, int8 b, float4 c, int operands);
float4 OVLD __spirv_SubgroupMatrixMultiplyAccumulateINTEL(int k, short4 a, int4 b, float4 c, int operands);
int4 OVLD __spirv_SubgroupMatrixMultiplyAccumulateINTEL(int k, short4 a, int4 b, int4 c, int operands);
float OVLD __spirv_SubgroupMatrixMultiplyAccumulateINTEL(int k, short a, int8 b, float c, int operands);
half4 OVLD __spirv_SubgroupMatrixMultiplyAccumulateINTEL(int k, short4 a, int4 b, half4 c, int operands);

#define DPAS(NAME, SG, RT, AT, BT, CT, CALL) \
    __kernel __attribute__((intel_reqd_sub_group_size(SG))) void NAME(__global const AT* a, __global const BT* b, __global const CT* c, __global RT* d) { \
        size_t i = get_group_id(0) * SG + get_sub_group_local_id(); \
        d[i] = CALL; \
    }

DPAS(i8_i8_k32_sg8, 8, int8, int8, int8, int8, intel_sub_group_i8_i8_matrix_mad_k32(a[i], b[i], c[i]))
DPAS(u8_i8_k32_sg8, 8, int4, uint4, int8, int4, intel_sub_group_u8_i8_matrix_mad_k32(a[i], b[i], c[i]))
DPAS(f16_k16_sg8, 8, float8, int8, int8, float8, intel_sub_group_f16_f16_matrix_mad_k16(a[i], b[i], c[i]))
DPAS(bf16_k16_sg8, 8, float2, int2, int8, float2, intel_sub_group_bf16_bf16_matrix_mad_k16(a[i], b[i], c[i]))
DPAS(i4_k64_sg8, 8, int, int, int8, int, intel_sub_group_i4_i4_matrix_mad_k64(a[i], b[i], c[i]))
DPAS(f16_k16_sg16, 16, float8, short8, int8, float8, intel_sub_group_f16_f16_matrix_mad_k16(a[i], b[i], c[i]))
DPAS(bf16_acc_k16_sg16, 16, short4, short4, int8, short4, intel_sub_group_bf16_bf16_matrix_mad_k16(a[i], b[i], c[i]))
DPAS(i8_u8_k32_sg16, 16, int2, short2, uint8, int2, intel_sub_group_i8_u8_matrix_mad_k32(a[i], b[i], c[i]))
DPAS(tf32_k8_sg16, 16, float4, float2, float8, float4, intel_sub_group_tf32_tf32_matrix_mad_k8(a[i], b[i], c[i]))
DPAS(f16_acc_k16_sg16, 16, half8, short8, int8, half8, intel_sub_group_f16_f16_matrix_mad_k16(a[i], b[i], c[i]))
DPAS(spirv_f16_sg16, 16, float4, short4, int8, float4, __spirv_SubgroupMatrixMultiplyAccumulateINTEL(16, a[i], b[i], c[i], 0xc00))
DPAS(intel_f16_sg32, 32, float4, short4, int4, float4, __spirv_SubgroupMatrixMultiplyAccumulateINTEL(16, a[i], b[i], c[i], 0xc00))
DPAS(intel_i8_sg32, 32, int4, short4, int4, int4, __spirv_SubgroupMatrixMultiplyAccumulateINTEL(32, a[i], b[i], c[i], 0x33))
DPAS(intel_bf16_sg32, 32, float4, short4, int4, float4, __spirv_SubgroupMatrixMultiplyAccumulateINTEL(16, a[i], b[i], c[i], 0x3000))
DPAS(intel_f16_acc_sg32, 32, half4, short4, int4, half4, __spirv_SubgroupMatrixMultiplyAccumulateINTEL(16, a[i], b[i], c[i], 0xc00))
DPAS(intel_u8_sg32, 32, int4, short4, int4, int4, __spirv_SubgroupMatrixMultiplyAccumulateINTEL(32, a[i], b[i], c[i], 0x30))
DPAS(spec_f16_m1_sg32, 32, float, short, int8, float, __spirv_SubgroupMatrixMultiplyAccumulateINTEL(16, a[i], b[i], c[i], 0xc00))
