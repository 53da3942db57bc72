// What OpenCL C keeps and Vulkan lets a driver drop: products and sums rounded one by one where
// the source writes them apart (llvm-spirv marks such kernels ContractionOff), and signed zeros,
// infinities and NaNs (SignedZeroInfNanPreserve).
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

__kernel void float_semantics(__global const float *a, __global const float *b, __global const float *c, __global float *o) {
    const uint g = get_global_id(0);
    const float p = a[g] * b[g];
    const float s = p + c[g];
    o[g * 6 + 0] = s;
    o[g * 6 + 1] = a[g] + 0.0f;
    o[g * 6 + 2] = a[g] - a[g];
    o[g * 6 + 3] = a[g] * 0.0f;
    o[g * 6 + 4] = isnan(s) ? 1.0f : isinf(s) ? 2.0f : 3.0f;
    o[g * 6 + 5] = 0.0f - a[g];
}

__kernel void double_semantics(__global const double *a, __global const double *b, __global const double *c, __global double *o) {
    const uint g = get_global_id(0);
    const double p = a[g] * b[g];
    const double s = p + c[g];
    o[g * 6 + 0] = s;
    o[g * 6 + 1] = a[g] + 0.0;
    o[g * 6 + 2] = a[g] - a[g];
    o[g * 6 + 3] = a[g] * 0.0;
    o[g * 6 + 4] = isnan(s) ? 1.0 : isinf(s) ? 2.0 : 3.0;
    o[g * 6 + 5] = 0.0 - a[g];
}
