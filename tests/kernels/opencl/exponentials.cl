// exp, exp2, exp10, log, log2 and log10 of floats (scalars and vectors) and halves, which
// OpenCL requires within 3 units in the last place.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

__kernel void exponentials(__global const float *x, __global float *o, __global const half *hx, __global half *ho) {
    const uint g = get_global_id(0);
    const float v = x[g];
    o[g * 6 + 0] = exp(v);
    o[g * 6 + 1] = exp2(v);
    o[g * 6 + 2] = exp10(v);
    const float4 l = log((float4)(v, 1.0f, 2.0f, v));
    o[g * 6 + 3] = l.w;
    o[g * 6 + 4] = log2(v);
    o[g * 6 + 5] = log10(v);
    ho[g * 2 + 0] = exp(hx[g]);
    ho[g * 2 + 1] = log(hx[g]);
}
