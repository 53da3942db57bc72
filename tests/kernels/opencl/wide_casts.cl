// Bit casts (as_<type>n) into, out of and between vectors of 8 and 16 components, which no
// Vulkan device has: the same bytes regrouped. With -DNOLONG the cast through ulong is left
// out.
__kernel void wide_casts(__global const uchar16* c, __global uint4* w, __global ushort8* h, __global uint8* u, __global uchar8* b, __global float8* f) {
    size_t g = get_global_id(0);
    uchar16 x = c[g];
    w[g] = as_uint4(x);                       // 16 bytes -> 4 words
    h[g] = as_ushort8(as_uint4(x) + 1u);      // 4 words -> 8 shorts
    uint8 y = as_uint8((float8)(as_float4(as_uint4(x) & 0x3fffffffu), 1.0f, 2.0f, -0.5f, 8.0f));
    u[g] = y;                                 // 8 floats -> 8 words
#ifndef NOLONG
    b[g] = as_uchar8(as_ulong(x.lo) + 3ul) ^ x.hi;   // 8 bytes <-> 64 bits
#endif
    f[g] = as_float8((uint8)(as_uint4(x) | 0x3f000000u, as_uint4(x) & 0x3f7fffffu));
}
