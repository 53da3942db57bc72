// asin, acos, atan and atan2 and their pi forms of floats (scalars and vectors) and halves,
// which OpenCL requires within 4 units in the last place (asin, acos), 5 (atan and the pi
// forms) and 6 (atan2, atan2pi), with C99's values on the axes and at the infinities.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

__kernel void inverse_trigonometry(__global const float *x, __global const float *y, __global const int *k, __global float *o,
                                   __global const half *hx, __global const half *hy, __global half *ho) {
    const uint g = get_global_id(0);
    const float a = x[g], b = y[g];
    o[g * 8 + 0] = asin(b);
    const float2 c = acos((float2)(b, -b));
    o[g * 8 + 1] = c.x;
    o[g * 8 + 2] = atan(a);
    o[g * 8 + 3] = atan2(a, b);
    o[g * 8 + 4] = asinpi(b);
    o[g * 8 + 5] = acospi(b);
    o[g * 8 + 6] = atanpi(a);
    o[g * 8 + 7] = atan2pi(a, b);
    ho[g * 2 + 0] = atan2(hx[g], hy[g]);
    ho[g * 2 + 1] = asin(hy[g]);
}
