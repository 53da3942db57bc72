// sin, cos, tan and sincos of floats (scalars and vectors) and halves, which OpenCL requires
// within 4 units in the last place (tan 5) for every finite argument, huge ones included, and
// sinpi, cospi (4) and tanpi (6).
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

__kernel void trigonometry(__global const float *x, __global float *o, __global const half *hx, __global half *ho) {
    const uint g = get_global_id(0);
    const float v = x[g];
    float c;
    o[g * 11 + 0] = sin(v);
    o[g * 11 + 1] = cos(v);
    o[g * 11 + 2] = tan(v);
    o[g * 11 + 3] = sincos(v, &c);
    o[g * 11 + 4] = c;
    const float4 w = sin((float4)(v, -v, v * 0.5f, 1.0f));
    o[g * 11 + 5] = w.y;
    o[g * 11 + 6] = w.z;
    o[g * 11 + 7] = cos(v * 2.0f);
    o[g * 11 + 8] = sinpi(v);
    o[g * 11 + 9] = cospi(v);
    o[g * 11 + 10] = tanpi(v);
    ho[g * 2 + 0] = sin(hx[g]);
    ho[g * 2 + 1] = cos(hx[g]);
}
