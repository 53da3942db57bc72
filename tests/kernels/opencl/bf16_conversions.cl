// llvm-spirv: --spirv-ext=+SPV_INTEL_bfloat16_conversion
// cl_intel_bfloat16_conversions, as Intel's kernels carry bfloat16 data: in ushort, converted
// with intel_convert_bfloat16_as_ushort (round to nearest even) and
// intel_convert_as_bfloat16_float (exact). clang-19's opencl-c.h does not declare them.
ushort __attribute__((overloadable)) intel_convert_bfloat16_as_ushort(float f);
float __attribute__((overloadable)) intel_convert_as_bfloat16_float(ushort u);

__kernel void bf16_round_trip(__global const float* x, __global ushort* bits, __global float* back, __global const ushort* raw, __global float* widened) {
    size_t g = get_global_id(0);
    ushort b = intel_convert_bfloat16_as_ushort(x[g]);
    bits[g] = b;
    back[g] = intel_convert_as_bfloat16_float(b);
    widened[g] = intel_convert_as_bfloat16_float(raw[g]) * 2.0f;
}
