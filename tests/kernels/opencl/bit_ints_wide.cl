// _BitInt(N) of widths between 32 and 64 bits (OpTypeInt 40 and 48 where llvm-spirv has
// SPV_INTEL_arbitrary_precision_integers), held in 64 bits, and on devices without 64-bit
// integers as pairs of words.
// llvm-spirv: --spirv-ext=+SPV_INTEL_arbitrary_precision_integers
typedef _BitInt(40) i40;
typedef unsigned _BitInt(40) u40;
typedef unsigned _BitInt(48) u48;

__kernel void bit_ints_wide(__global const int *a, __global const int *b, __global long *out) {
    const size_t i = get_global_id(0);
    __global long *o = out + i * 8;
    const i40 p = (i40)a[i] * (i40)b[i], t = (i40)b[i];
    const i40 q = (i40)((u40)p * (u40)(a[i] * 40503));
    const u48 w = (u48)a[i] * (u48)0x9E3779B97F4Aull;
    o[0] = (long)q;
    o[1] = (long)(q >> 13);
    o[2] = (t == 0 || t == -1) ? 7 : (long)(q / t);
    o[3] = (t == 0 || t == -1) ? 7 : (long)(q % t);
    o[4] = (long)w;
    o[5] = (long)(w >> 17) ^ (long)(u40)q;
    o[6] = (q < p) + 2 * (w > (u48)b[i]) + 4 * (q == (i40)-1);
    o[7] = (long)(i40)(w + (u48)p);
}
