#version 450
// Integer -> f16 conversions, each rounded once to nearest even with overflow to infinity:
// invocation i converts U16[i], I16[i], U32[i], I32[i] and U8[i] and writes H[5i..5i+5].
#extension GL_EXT_shader_explicit_arithmetic_types : require
layout(local_size_x = 64) in;
layout(binding = 0, std430) readonly buffer U16 { uint16_t u16[]; };
layout(binding = 1, std430) readonly buffer I16 { int16_t i16[]; };
layout(binding = 2, std430) readonly buffer U32 { uint32_t u32[]; };
layout(binding = 3, std430) readonly buffer I32 { int32_t i32[]; };
layout(binding = 4, std430) readonly buffer U8 { uint8_t u8[]; };
layout(binding = 5, std430) writeonly buffer H { float16_t h[]; };
void main() {
    uint i = gl_GlobalInvocationID.x;
    h[5 * i] = float16_t(u16[i]);
    h[5 * i + 1] = float16_t(i16[i]);
    h[5 * i + 2] = float16_t(u32[i]);
    h[5 * i + 3] = float16_t(i32[i]);
    h[5 * i + 4] = float16_t(u8[i]);
}
