// C = A * B + codes, A and B half, tiled through local memory of halves and bytes: two 64 x 66
// half tiles and a 64 x 64 uchar tile, 21 KiB as written and 50 KiB with every half and byte
// widened to 32 bits (past the 32 KiB of lavapipe and SwiftShader, which lack halves and bytes
// in memory or arithmetic), so where they are missing local memory is held packed in words.
// Each work-item stores neighbouring halves and bytes of one word.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define T 64

__kernel __attribute__((reqd_work_group_size(16, 16, 1)))
void hgemm(__global const half *a, __global const half *b, __global const uchar *codes_in, __global float *c, uint n) {
    __local half ta[T][T + 2];
    __local half tb[T][T + 2];
    __local uchar codes[T * T];
    const uint lx = get_local_id(0), ly = get_local_id(1);
    const uint gx = get_group_id(0) * T, gy = get_group_id(1) * T;
    float acc[4][4] = {{0}};
    for (uint k0 = 0; k0 < n; k0 += T) {
        for (uint r = ly; r < T; r += 16) {
            for (uint q = lx; q < T; q += 16) {
                ta[r][q] = a[(gy + r) * n + k0 + q];
                tb[r][q] = b[(k0 + r) * n + gx + q];
                codes[r * T + q] = codes_in[r * T + q];
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
        for (uint k = 0; k < T; k++) {
            for (uint r = 0; r < 4; r++) {
                for (uint q = 0; q < 4; q++) {
                    acc[r][q] += (float)ta[ly * 4 + r][k] * (float)tb[k][lx * 4 + q];
                }
            }
        }
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    for (uint r = 0; r < 4; r++) {
        for (uint q = 0; q < 4; q++) {
            c[(gy + ly * 4 + r) * n + gx + lx * 4 + q] = acc[r][q] + (float)codes[(ly * 4 + r) * T + lx * 4 + q];
        }
    }
}

// Halves and bytes through local-memory arguments (sized at launch): each work-item writes
// one of each, and reads its mirror's after the barrier.
__kernel void mirror_through_local_args(__global const half *in, __global const uchar *bytes, __global float *out, __local half *halves, __local uchar *tile) {
    const uint l = get_local_id(0), n = get_local_size(0), g = get_global_id(0);
    halves[l] = in[g];
    tile[l] = bytes[g];
    barrier(CLK_LOCAL_MEM_FENCE);
    out[g] = (float)halves[n - 1 - l] * 2.0f + (float)tile[n - 1 - l];
}
