#version 460
// 8- and 16-bit data behind buffer references (PhysicalStorageBuffer pointers): a reference read
// from a buffer, one built from a uvec2, references in a push-constant block that also holds an
// f16, a struct of narrow members loaded whole, sub-word and whole-word stores. Invocation i
// writes O[i], S[2i], S[2i+1] and updates Items[i].v and Items[i].rgb.y.
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_buffer_reference_uvec2 : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int16 : require
layout(local_size_x = 64) in;

layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Halves { float16_t h[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) readonly buffer Bytes { uint8_t b[]; };
struct Item { float16_t scale; int8_t bias; u8vec3 rgb; f16vec4 v; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Items { Item items[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer OutHalves { float16_t o[]; };
layout(buffer_reference, std430, buffer_reference_align = 4) writeonly buffer Shorts { int16_t s[]; };
layout(buffer_reference, std430, buffer_reference_align = 8) readonly buffer Table { Halves halves; uint n; };
layout(push_constant) uniform P { Table table; Bytes bytes; Items items; OutHalves out_h; Shorts shorts; uvec2 halves2; float16_t shift; } p;

void main() {
    uint i = gl_GlobalInvocationID.x;
    Halves h = p.table.halves;
    Halves h2 = Halves(p.halves2);
    float16_t a = h.h[i];
    float16_t c = h2.h[i ^ 1u];
    uint8_t byte = p.bytes.b[i];
    Item it = p.items.items[i];
    float16_t r = a * it.scale + c;
    r += float16_t(byte) + float16_t(it.bias) + it.v.y;
    r += p.shift;
    p.out_h.o[i] = r;
    p.shorts.s[2 * i] = int16_t(it.rgb.x) - int16_t(it.rgb.z);
    p.shorts.s[2 * i + 1] = int16_t(byte) * int16_t(-3);
    p.items.items[i].v = it.v * float16_t(2.0);
    p.items.items[i].rgb.y = uint8_t(byte + uint8_t(1));
}
