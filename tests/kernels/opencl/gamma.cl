// tgamma of floats (scalars and vectors) and halves, which OpenCL requires within 16 units in
// the last place, and lgamma and lgamma_r (whose accuracy OpenCL leaves open), GLSL.std.450
// having no gamma function.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

__kernel void gammas(__global const float *x, __global float *o, __global const half *hx, __global half *ho) {
    const uint g = get_global_id(0);
    const float v = x[g];
    o[g * 5 + 0] = tgamma(v);
    const float2 w = tgamma((float2)(1.5f, -v));
    o[g * 5 + 1] = w.y;
    o[g * 5 + 2] = lgamma(v);
    int2 s;
    const float2 l = lgamma_r((float2)(v, 2.5f), &s);
    o[g * 5 + 3] = l.x;
    o[g * 5 + 4] = (float)s.x;
    ho[g * 2 + 0] = tgamma(hx[g]);
    ho[g * 2 + 1] = lgamma(hx[g]);
}

// lgamma_r's sign straight into a buffer.
__kernel void lgamma_signs(__global const float *x, __global float *o, __global int *s) {
    const uint g = get_global_id(0);
    o[g] = lgamma_r(x[g], &s[g]);
}
