// Arithmetic on _BitInt(N) of odd widths: llvm-spirv keeps them as OpTypeInt 6, 12, 24 (and
// clang's -O2 narrows some of the int arithmetic around them to such widths too) where
// SPV_INTEL_arbitrary_precision_integers is enabled, as DPC++ enables it. Out-of-range cases
// that C leaves undefined (signed overflow, division by zero or of the minimum by -1) are
// avoided: wrapping arithmetic is unsigned, converted back.
// llvm-spirv: --spirv-ext=+SPV_INTEL_arbitrary_precision_integers
typedef _BitInt(12) i12;
typedef unsigned _BitInt(12) u12;
typedef unsigned _BitInt(6) u6;
typedef _BitInt(24) i24;
typedef unsigned _BitInt(24) u24;

#define OUT 26

__kernel void bit_ints(__global const int *a, __global const int *b, __global int *out) {
    const size_t i = get_global_id(0);
    __global int *o = out + i * OUT;
    const i12 x = (i12)a[i], y = (i12)b[i];
    const u6 u = (u6)a[i], v = (u6)b[i];
    const i24 s = (i24)(a[i] * 6133), t = (i24)b[i];
    o[0] = (int)(i12)((u12)x + (u12)y);
    o[1] = (int)(i12)((u12)x - (u12)y);
    o[2] = (int)(i12)((u12)x * (u12)y);
    o[3] = (y == 0 || y == -1) ? 7 : (int)(x / y);
    o[4] = (y == 0 || y == -1) ? 7 : (int)(x % y);
    o[5] = (int)(x >> 3);
    o[6] = (int)(i12)((u12)x << 5);
    o[7] = (x < y) + 2 * (x <= y) + 4 * (x > (i12)-100);
    o[8] = (int)(u6)(u + v * 3);
    o[9] = v == 0 ? 7 : (int)(u / v) + 100 * (int)(u % v);
    o[10] = (int)(u >> 2) + 100 * (int)(u6)(u << 3) + 10000 * (u < v);
    o[11] = (int)(u6)~u + 100 * (int)(u6)-u;
    o[12] = (int)(i24)((u24)s + (u24)t * (u24)t);
    o[13] = (t == 0 || t == -1) ? 7 : (int)(s / t) * 1000 + (int)(s % t);
    o[14] = (int)(s >> 7) ^ (int)((u24)s >> 7);
    o[15] = (int)(float)x * 1000 + (int)(float)(u24)s / 4096;
    o[16] = (int)(i12)((float)a[i] * 0.25f);
    // A loop counted in 6 bits, and a switch on a 12-bit value.
    int acc = 0;
    for (u6 c = 0; c < v; c++) {
        acc += (int)(u6)(c * u);
    }
    o[17] = acc;
    switch (x) {
    case -5: o[18] = 1; break;
    case 100: o[18] = 2; break;
    case -2048: o[18] = 3; break;
    case 2047: o[18] = 4; break;
    default: o[18] = (int)(x & 15);
    }
    o[19] = (int)(long)(i24)(s * 37) + (int)(u12)(s >> 9);
    o[20] = (int)((x & y) | (x ^ (i12)0x5a5));
    o[21] = (int)(i12)((u12)x * (u12)a[i ^ 1]) - (int)(u6)(i ^ 63);
    o[22] = x < 0 ? -(int)x : (int)x;
    o[23] = (int)(x == y) + 2 * (u != v);
    // Zero counts of the 12-bit value, which llvm-spirv writes as OpenCL.std clz and ctz.
    o[24] = (int)__builtin_clzg((u12)x, 99) + 100 * (int)__builtin_ctzg((u12)y, 77);
    o[25] = (int)__builtin_popcountg((u12)x) + 100 * (int)__builtin_clzg(u, 55);
}

// A GEMM through local tiles of halves filled at `i % 64` with `i` starting at `ly * 16 + lx`:
// clang-19 -O2 computes the index's low bits, `(ly << 4) + lx`, as a 6-bit integer.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#define T 64
__kernel __attribute__((reqd_work_group_size(16, 16, 1))) void tiled_hgemm(__global const half *a, __global const half *b, __global float *c, uint n) {
    __local half ta[T][T + 2];
    __local half tb[T][T + 2];
    const uint lx = get_local_id(0), ly = get_local_id(1);
    const uint gx = get_group_id(0) * T, gy = get_group_id(1) * T;
    float acc[4][4] = {{0}};
    for (uint k0 = 0; k0 < n; k0 += T) {
        for (uint i = ly * 16 + lx; i < T * T; i += 256) {
            const uint r = i / T, q = i % T;
            ta[r][q] = a[(gy + r) * n + k0 + q];
            tb[r][q] = b[(k0 + r) * n + gx + q];
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
            c[(gy + ly * 4 + r) * n + gx + lx * 4 + q] = acc[r][q];
        }
    }
}

// clang -O2 tests the six bounds as two 4-component comparisons, each cast to an i4 and
// compared with 15 ("all") or 0 ("any").
__kernel void inside_box(__global const int *p, __global int *out, int nx, int ny, int nz) {
    const int g = get_global_id(0);
    const int x = p[3 * g], y = p[3 * g + 1], z = p[3 * g + 2];
    const int inside = x > 0 && y > 0 && z > 0 && x < nx - 1 && y < ny - 1 && z < nz - 1;
    const int edge = x == 0 || y == 0 || z == 0 || x == nx - 1;
    out[g] = inside * 2 + edge;
}
