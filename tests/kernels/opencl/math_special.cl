// OpenCL C built-ins without a GLSL.std.450 twin: results through pointers, exponents, integer
// powers and roots, remainders, the pi trigonometry, erf, saturating and widening integer
// arithmetic, vector shuffles and half vectors. f: 24 float results per input, i: 8 int
// results, v: 4 float4 results; hin: 8 halves read per input, hout: 7 of 8 halves written.
__kernel void math_special(__global const float* x, __global const int* y, __global float* f, __global int* i,
                           __global float4* v, __global const half* hin, __global half* hout) {
    size_t g = get_global_id(0);
    float a = x[g];
    float b = x[(g * 7 + 3) % get_global_size(0)];
    int k = y[g];
    __global float* fo = f + 24 * g;
    __global int* io = i + 8 * g;
    float whole;
    fo[0] = fract(a, &whole);
    fo[1] = whole;
    fo[2] = modf(a, &whole);
    fo[3] = whole;
    float c;
    fo[4] = sincos(a, &c);
    fo[5] = c;
    int e;
    fo[6] = frexp(a, &e);
    io[0] = e;
    io[1] = ilogb(a);
    fo[7] = logb(a);
    fo[8] = pown(a, k % 7 - 3);
    fo[9] = rootn(a, k % 5 - 2);
    fo[10] = maxmag(a, b);
    fo[11] = minmag(a, b);
    fo[12] = remainder(a, b);
    int q;
    fo[13] = remquo(a, b, &q);
    io[2] = q;
    fo[14] = nextafter(a, b);
    fo[15] = sinpi(a);
    fo[16] = cospi(a);
    fo[17] = tanpi(a * 0.37f);
    fo[18] = asinpi(clamp(a * 0.1f, -1.0f, 1.0f));
    fo[19] = acospi(clamp(a * 0.1f, -1.0f, 1.0f));
    fo[20] = atanpi(a);
    fo[21] = atan2pi(a, b);
    fo[22] = erf(a * 0.25f);
    fo[23] = erfc(a * 0.25f);
    io[3] = mad_sat(k, k, k);
    io[4] = (int)mad_sat((uint)k, 3u, 7u);
    io[5] = mad_sat(k, -3, k);
    io[6] = upsample((short)k, (ushort)(k >> 16));
    io[7] = (int)upsample((uchar)k, (uchar)(k >> 8));
    float4 v4 = (float4)(a, b, a * 2.0f, b - 1.0f);
    uint4 m = (uint4)(k, k >> 3, k >> 6, k >> 9);
    v[4 * g] = shuffle(v4, m);
    v[4 * g + 1] = shuffle2(v4, v4 * 10.0f, m);
    v[4 * g + 2] = shuffle(v4, (uint4)(3, 2, 5, 0));
    float4 hv = clamp(v4, -1000.0f, 1000.0f) + 0.5f;
    vstore_half4(hv, 2 * g, hout);
    vstorea_half3(hv.zyx, 2 * g + 1, hout);
    float3 t = vloada_half3(2 * g + 1, hin);
    v[4 * g + 3] = vload_half4(2 * g, hin) * 2.0f + (float4)(t, vload_half(8 * g + 4, hin));
}
