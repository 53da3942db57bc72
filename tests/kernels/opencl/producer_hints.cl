// A kernel that llvm-spirv with every extension enabled (as DPC++ enables most of them) fills
// with hints no Vulkan driver accepts: alias scopes on the inlined restrict accesses
// (SPV_INTEL_memory_access_aliasing, at -O2), the accuracy of the division
// (SPV_INTEL_fp_max_error), OptNone on every function (SPV_INTEL_optnone, at -O0) and the
// assumption (SPV_KHR_expect_assume).
// llvm-spirv: --spirv-ext=+all
static void scale_rows(__global float *restrict y, __global const float *restrict x, float a, int n) {
    for (int i = 0; i < n; i++)
        y[i] = y[i] / a + x[i] * x[n - 1 - i];
}

__kernel void producer_hints(__global float *y, __global const float *x, float a, int n) {
    const int g = get_global_id(0);
    if (__builtin_expect(g * n < 4096, 1))
        scale_rows(y + g * n, x + g * n, a, n);
    __builtin_assume(n > 0);
}
