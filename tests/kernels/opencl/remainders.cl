// fmod of floats (scalars and vectors), halves and doubles, which OpenCL requires exact, at
// quotients far past the significand.
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
