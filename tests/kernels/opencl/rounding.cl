// Conversions to floating point with an explicit rounding mode: float to half with each mode
// (scalars and vectors), int, uint, long and ulong to float and to half rounded toward zero
// and toward either infinity, and the vstore_half_r stores. The host compares every result with
// the correctly rounded one.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

__kernel void rounding(__global const float* f, __global const int* i, __global const uint* u, __global const long* l,
                       __global const ulong* ul, __global half* h, __global float* o, __global half* hs, uint n) {
    uint g = get_global_id(0);
    float x = f[g], y = f[(g + 1) % n];
    h[g * 12 + 0] = convert_half_rtz(x);
    h[g * 12 + 1] = convert_half_rtp(x);
    h[g * 12 + 2] = convert_half_rtn(x);
    h[g * 12 + 3] = convert_half_rte(x);
    half4 v = convert_half4_rtn((float4)(x, -x, y, -y));
    vstore4(v, 0, h + g * 12 + 4);
    h[g * 12 + 8] = convert_half_rtz(i[g]);
    h[g * 12 + 9] = convert_half_rtp(i[g]);
    h[g * 12 + 10] = convert_half_rtn(u[g]);
    h[g * 12 + 11] = convert_half_rtp(l[g]);

    o[g * 12 + 0] = convert_float_rtz(i[g]);
    o[g * 12 + 1] = convert_float_rtp(i[g]);
    o[g * 12 + 2] = convert_float_rtn(i[g]);
    o[g * 12 + 3] = convert_float_rtz(u[g]);
    o[g * 12 + 4] = convert_float_rtp(u[g]);
    o[g * 12 + 5] = convert_float_rtn(u[g]);
    o[g * 12 + 6] = convert_float_rtz(l[g]);
    o[g * 12 + 7] = convert_float_rtp(l[g]);
    o[g * 12 + 8] = convert_float_rtn(l[g]);
    float2 w = convert_float2_rtz((ulong2)(ul[g], ul[(g + 1) % n]));
    o[g * 12 + 9] = w.x;
    o[g * 12 + 10] = convert_float_rtp(ul[g]);
    o[g * 12 + 11] = convert_float_rtn(ul[g]);

    vstore_half_rtz(x, g, hs);
    vstore_half_rtp(x, g + n, hs);
    vstore_half_rtn(x, g + 2 * n, hs);
    vstore_half4_rtz((float4)(x, -y, y, -x), g, hs + 3 * n);
    vstorea_half3_rtp((float3)(x, y, -x), g, hs + 7 * n);
}

// Doubles to float and to half with each directed mode, on devices with doubles.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
__kernel void rounding_doubles(__global const double* d, __global float* o, __global half* h) {
    uint g = get_global_id(0);
    double x = d[g];
    o[g * 4 + 0] = convert_float_rtz(x);
    o[g * 4 + 1] = convert_float_rtp(x);
    o[g * 4 + 2] = convert_float_rtn(x);
    o[g * 4 + 3] = convert_float_rte(x);
    h[g * 3 + 0] = convert_half_rtz(x);
    h[g * 3 + 1] = convert_half_rtp(x);
    h[g * 3 + 2] = convert_half_rtn(x);
}
