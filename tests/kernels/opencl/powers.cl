// pow, powr, pown, rootn, cbrt and hypot of floats (scalars and vectors) and halves, which
// OpenCL requires within 16 units in the last place (cbrt 2, hypot 4) with C99's values at
// zeros, infinities, NaNs and negative bases.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

__kernel void powers(__global const float *x, __global const float *y, __global const int *k, __global float *o,
                     __global const half *hx, __global const half *hy, __global half *ho) {
    const uint g = get_global_id(0);
    const float a = x[g], b = y[g];
    const int n = k[g];
    o[g * 7 + 0] = pow(a, b);
    o[g * 7 + 1] = powr(a, b);
    o[g * 7 + 2] = pown(a, n);
    o[g * 7 + 3] = rootn(a, n);
    const float4 c = cbrt((float4)(1.0f, a, b, 8.0f));
    o[g * 7 + 4] = c.y;
    o[g * 7 + 5] = hypot(a, b);
    o[g * 7 + 6] = pow((float2)(a, 2.0f), (float2)(b, 0.5f)).x;
    ho[g * 2 + 0] = pow(hx[g], hy[g]);
    ho[g * 2 + 1] = pown(hx[g], n);
}
