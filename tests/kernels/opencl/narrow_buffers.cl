// Buffers of bytes, shorts and halves read and written element by element (neighbouring
// work-items write neighbouring bytes of one word): on devices without 8- and 16-bit storage
// (SwiftShader) they are read as 32-bit words and written with atomic clear and set.
#pragma OPENCL EXTENSION cl_khr_fp16 : enable

__kernel void narrow_buffers(__global const char* a, __global const uchar* b, __global const short* s, __global const half* h,
                             __global char* out8, __global short* out16, __global half* outh, __global int* out32) {
    size_t g = get_global_id(0);
    char x = a[g];
    uchar y = b[g];
    out8[g] = (char)(x + (char)y);
    out16[g] = (short)(s[g] * 3 + x);
    half v = h[g];
    outh[g] = v * (half)2.0 + (half)x;
    out32[g] = (int)s[g] + (int)y + (int)(v * (half)4.0);
}
