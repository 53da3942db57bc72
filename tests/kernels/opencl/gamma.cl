// tgamma of floats (scalars and vectors) and halves, which OpenCL requires within 16 units in
// the last place, GLSL.std.450 having no gamma function.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

__kernel void gammas(__global const float *x, __global float *o, __global const half *hx, __global half *ho) {
    const uint g = get_global_id(0);
    const float v = x[g];
    o[g * 2 + 0] = tgamma(v);
    const float2 w = tgamma((float2)(1.5f, -v));
    o[g * 2 + 1] = w.y;
    ho[g * 2 + 0] = tgamma(hx[g]);
    ho[g * 2 + 1] = tgamma(-hx[g]);
}
