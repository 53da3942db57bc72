// Buffers of narrow vectors (uchar4, char2, short4, half4, half2): read and written a vector at a
// time, neighbouring work-items writing neighbouring vectors. On devices without 8- and 16-bit
// storage (SwiftShader) whole aligned words are read and written directly; vectors narrower than
// a word (char2) are written with atomic clear and set.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

__kernel void narrow_vectors(__global const uchar4* a, __global const char2* b, __global const short4* s, __global const half4* h,
                             __global uchar4* out_a, __global char2* out_b, __global short4* out_s, __global half2* out_h) {
    size_t g = get_global_id(0);
    uchar4 x = a[g];
    char2 y = b[g];
    out_a[g] = x + (uchar4)(1, 2, 3, 4) + (uchar)y.s0;
    out_b[g] = (char2)(y.s1, y.s0) - (char2)(x.s0);
    out_s[g] = s[g] * (short)3 + (short4)((short)y.s0);
    half4 v = h[g];
    out_h[g] = v.s01 * (half)2.0 + v.s23;
}
