// Doubles: nan() with payloads (of halves and floats too), copysign, degrees and radians, which
// GLSL.std.450 has only for 16- and 32-bit floats, rint, trunc and round (which lavapipe before
// Mesa 26 gets wrong past 2^23 and at ties), the exponentials, logarithms and hyperbolic
// functions (OpenCL: 3 units in the last place, log1p 2, sinh, cosh, asinh, acosh 4, tanh,
// atanh 5), the powers (16; cbrt 2, hypot 4), the inverse trigonometric functions (asin, acos
// 4, atan 5, atan2 6, the pi forms 5 and 6), the trigonometric functions (sin, cos 4, tan 5,
// the pi forms 4 and 6), erf, erfc and tgamma (16) and lgamma_r.
#pragma OPENCL EXTENSION cl_khr_fp64 : enable
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

__kernel void nans_and_angles(__global const double *x, __global ulong *bits, __global double *o, __global uint *fbits, __global ushort *hbits) {
    const uint g = get_global_id(0);
    const double v = x[g];
    bits[g] = as_ulong(nan((ulong)g * 0x10001ul));
    fbits[g] = as_uint(nan((uint)g * 0x1001u));
    hbits[g] = as_ushort(nan((ushort)g));
    const double2 d = degrees((double2)(v, -v));
    o[g * 6 + 0] = d.y;
    o[g * 6 + 1] = radians(v);
    o[g * 6 + 2] = rint(v);
    const double2 t = trunc((double2)(v, 1.5));
    o[g * 6 + 3] = t.x;
    o[g * 6 + 4] = round(v);
    o[g * 6 + 5] = copysign(v, g % 3 == 0 ? -1.0 : g % 3 == 1 ? -0.0 : 1.0);
}

__kernel void transcendentals(__global const double *x, __global const double *y, __global const int *k, __global double *o) {
    const uint g = get_global_id(0);
    const double a = x[g], b = y[g];
    const int n = k[g];
    __global double *r = o + g * 41;
    r[0] = exp(a);
    r[1] = exp2(a);
    r[2] = exp10(a);
    const double2 l = log((double2)(2.0, a));
    r[3] = l.y;
    r[4] = log2(a);
    r[5] = log10(a);
    r[6] = expm1(a);
    r[7] = log1p(a);
    r[8] = sinh(a);
    r[9] = cosh(a);
    r[10] = tanh(a);
    r[11] = asinh(a);
    r[12] = acosh(a);
    r[13] = atanh(b);
    r[14] = pow(a, b * 40.0);
    r[15] = powr(a, b);
    r[16] = pown(a, n);
    const double2 c = cbrt((double2)(a, 8.0));
    r[17] = c.x;
    r[18] = rootn(a, n);
    r[19] = hypot(a, b);
    r[20] = asin(b);
    r[21] = acos(b);
    const double2 t = atan((double2)(1.0, a));
    r[22] = t.y;
    r[23] = atan2(a, b);
    r[24] = asinpi(b);
    r[25] = acospi(b);
    r[26] = atanpi(a);
    r[27] = atan2pi(a, b);
    r[28] = sin(a);
    const double2 co = cos((double2)(0.0, a));
    r[29] = co.y;
    r[30] = tan(a);
    double c2;
    r[31] = sincos(a, &c2);
    r[32] = c2;
    r[33] = sinpi(a);
    r[34] = cospi(a);
    r[35] = tanpi(a);
    const double2 e = erf((double2)(a, b));
    r[36] = e.x;
    r[37] = erfc(a);
    r[38] = tgamma(a);
    int sign;
    r[39] = lgamma_r(a, &sign);
    r[40] = (double)sign;
}
