// Doubles: nan() with payloads (of halves and floats too), degrees and radians, which
// GLSL.std.450 has only for 16- and 32-bit floats, and a sine of doubles, which has no lowering
// yet and must be refused by name.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

__kernel void nans_and_angles(__global const double *x, __global ulong *bits, __global double *o, __global uint *fbits, __global ushort *hbits) {
    const uint g = get_global_id(0);
    const double v = x[g];
    bits[g] = as_ulong(nan((ulong)g * 0x10001ul));
    fbits[g] = as_uint(nan((uint)g * 0x1001u));
    hbits[g] = as_ushort(nan((ushort)g));
    const double2 d = degrees((double2)(v, -v));
    o[g * 2 + 0] = d.y;
    o[g * 2 + 1] = radians(v);
}

__kernel void double_sine(__global double *x) {
    const uint g = get_global_id(0);
    x[g] = sin(x[g]);
}
