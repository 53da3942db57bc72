#version 460
// C = A * B + C and H = f16(C) with A, B, C and H behind buffer references (PhysicalStorageBuffer
// pointers): f16 A row-major and B column-major, f32 C row-major, f16 H column-major, all with
// strides from push constants. One subgroup per 16x16 tile of C; local size is specialization
// constant 0 (the host sets the subgroup size).
#extension GL_NV_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_EXT_buffer_reference : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
layout(local_size_x_id = 0) in;

layout(buffer_reference, std430, buffer_reference_align = 16) readonly buffer Halves { float16_t x[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) buffer Floats { float x[]; };
layout(buffer_reference, std430, buffer_reference_align = 16) writeonly buffer OutHalves { float16_t x[]; };
layout(push_constant) uniform P { Halves a; Halves b; Floats c; OutHalves h; uint lda; uint ldb; uint ldc; uint ldh; uint k; } p;

void main() {
    uint tm = gl_WorkGroupID.y * 16;
    uint tn = gl_WorkGroupID.x * 16;
    fcoopmatNV<32, gl_ScopeSubgroup, 16, 16> acc;
    coopMatLoadNV(acc, p.c.x, tm * p.ldc + tn, p.ldc, false);
    for (uint k = 0; k < p.k; k += 16) {
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> ma;
        fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> mb;
        coopMatLoadNV(ma, p.a.x, tm * p.lda + k, p.lda, false);
        coopMatLoadNV(mb, p.b.x, tn * p.ldb + k, p.ldb, true);
        acc = coopMatMulAddNV(ma, mb, acc);
    }
    coopMatStoreNV(acc, p.c.x, tm * p.ldc + tn, p.ldc, false);
    fcoopmatNV<16, gl_ScopeSubgroup, 16, 16> h = fcoopmatNV<16, gl_ScopeSubgroup, 16, 16>(acc);
    coopMatStoreNV(h, p.h.x, tn * p.ldh + tm, p.ldh, true);
}
