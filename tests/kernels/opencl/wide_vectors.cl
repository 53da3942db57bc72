// Vectors of 8 and 16 components (float8, int8, uchar16), which no Vulkan device has: loads and
// stores through vector pointers and vload8, arithmetic, a built-in, swizzles, conversions and a
// vector select.
__kernel void wide_vectors(__global const float8* a, __global const float* b, __global float8* out,
                           __global const uchar16* c, __global uchar16* out_c, __global int8* out_i) {
    size_t g = get_global_id(0);
    float8 x = a[g];
    float8 y = vload8(g, b);
    float8 z = fmax(x * y + (float8)(1.0f), (float8)(0.5f));
    out[g] = z.s76543210;
    uchar16 u = c[g];
    out_c[g] = u + (uchar16)(3) + u.sfedcba9876543210;
    int8 i = convert_int8(z) + convert_int8(u.s01234567);
    out_i[g] = select(i, (int8)(-1), i > (int8)(100));
}
