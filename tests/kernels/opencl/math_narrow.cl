// Conversions to 8- and 16-bit integers with saturation; on devices without 8- and 16-bit
// integers (SwiftShader) the narrow values are held in 32-bit ones.
__kernel void math_narrow(__global const int* y, __global int* out) {
    size_t g = get_global_id(0);
    int b = y[g];
    out[4 * g] = convert_char_sat(b);
    out[4 * g + 1] = convert_uchar_sat(b);
    out[4 * g + 2] = convert_short_sat(b);
    out[4 * g + 3] = convert_ushort_sat(b);
}
