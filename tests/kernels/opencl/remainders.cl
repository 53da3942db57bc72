// fmod, remainder and remquo of floats (scalars and vectors), halves and doubles, which OpenCL
// requires exact, at quotients far past the significand.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable
#pragma OPENCL EXTENSION cl_khr_fp64 : enable

__kernel void float_fmod(__global const float *x, __global const float *y, __global float *o, __global const half *hx, __global half *ho) {
    const uint g = get_global_id(0);
    o[g * 2 + 0] = fmod(x[g], y[g]);
    const float2 v = fmod((float2)(y[g], x[g]), (float2)(1.0f, -y[g]));
    o[g * 2 + 1] = v.y;
    ho[g] = fmod(hx[g], (half)0.3f);
}

__kernel void double_fmod(__global const double *x, __global const double *y, __global double *o) {
    const uint g = get_global_id(0);
    o[g] = fmod(x[g], y[g]);
}

// remainder and remquo, which OpenCL requires exact too: the quotient rounded to nearest (ties
// to even) and remquo's seven low bits of it with the sign of x / y.
__kernel void float_remainder(__global const float *x, __global const float *y, __global float *o, __global int *q, __global const half *hx, __global half *ho, __global int *hq) {
    const uint g = get_global_id(0);
    int k;
    o[g * 3 + 0] = remainder(x[g], y[g]);
    o[g * 3 + 1] = remquo(x[g], y[g], &k);
    q[g * 2 + 0] = k;
    int2 k2;
    const float2 v = remquo((float2)(y[g], x[g]), (float2)(1.0f, -y[g]), &k2);
    o[g * 3 + 2] = v.y;
    q[g * 2 + 1] = k2.y;
    ho[g] = remquo(hx[g], (half)0.3f, &k);
    hq[g] = k;
}

__kernel void double_remainder(__global const double *x, __global const double *y, __global double *o, __global int *q) {
    const uint g = get_global_id(0);
    int k;
    o[g * 2 + 0] = remainder(x[g], y[g]);
    o[g * 2 + 1] = remquo(x[g], y[g], &k);
    q[g] = k;
}
