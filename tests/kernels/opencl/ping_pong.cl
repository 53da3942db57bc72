// Buffers chosen at run time: two local arrays of halves used in turn as source and destination
// (a select of pointers at -O2, guarded by the vectorizer's check that the two ranges do not
// overlap, which compares their addresses; a phi at -O0), and two private arrays chosen by the
// work-item. clang-19 -O2 computes `(i + 1) % T` in 12 bits.
// llvm-spirv: --spirv-ext=+SPV_INTEL_arbitrary_precision_integers
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
// Each kernel's two arrays: 16 KiB of halves, and 24 KiB (48 KiB widened, so held packed in
// words where halves are missing, as on SwiftShader).
#define PING_PONG(NAME, T)                                                                      \
    __kernel __attribute__((reqd_work_group_size(256, 1, 1)))                                   \
    void NAME(__global const half *a, __global float *out, uint steps) {                        \
        __local half buf0[T];                                                                   \
        __local half buf1[T];                                                                   \
        const uint l = get_local_id(0), g = get_group_id(0);                                    \
        for (uint i = l; i < T; i += 256) buf0[i] = a[g * T + i];                               \
        barrier(CLK_LOCAL_MEM_FENCE);                                                           \
        for (uint s = 0; s < steps; s++) {                                                      \
            __local half *src = (s & 1) ? buf1 : buf0;                                          \
            __local half *dst = (s & 1) ? buf0 : buf1;                                          \
            for (uint i = l; i < T; i += 256) dst[i] = src[(i + 1) % T] + src[i];               \
            barrier(CLK_LOCAL_MEM_FENCE);                                                       \
        }                                                                                       \
        __local half *result = (steps & 1) ? buf1 : buf0;                                       \
        for (uint i = l; i < T; i += 256) out[g * T + i] = (float)result[i];                    \
    }

PING_PONG(ping_pong, 4096)
PING_PONG(ping_pong_packed, 6144)

__kernel void private_choice(__global const int *a, __global int *out) {
    const uint i = get_global_id(0);
    int even[8], odd[8];
    for (int k = 0; k < 8; k++) {
        even[k] = a[i] * k;
        odd[k] = a[i] + k;
    }
    int *p = (i & 1) ? odd : even;
    int sum = 0;
    for (int k = 0; k < 8; k++) sum += p[k] * (k + 1);
    out[i] = sum;
}
