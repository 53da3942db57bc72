#version 450 core
#pragma use_vulkan_memory_model
// Matrices read and written through arrays of words narrower than their components (as the
// validation layers' GPU-AV tests write them): a u32 accumulator through a uint8_t array,
// column-major, stride and offset in bytes; an f32 accumulator through a uint16_t array,
// row-major, offset and stride in halves. Each is doubled and stored further on.
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable
#extension GL_EXT_shader_explicit_arithmetic_types : enable

layout(local_size_x_id = 0) in;
layout(set = 0, binding = 0) buffer Bytes { uint8_t bytes[]; };
layout(set = 0, binding = 1) buffer Halves { uint16_t halves[]; };

void main() {
    coopmat<uint32_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> u;
    coopMatLoad(u, bytes, 4, 68, gl_CooperativeMatrixLayoutColumnMajor);
    u = u + u;
    coopMatStore(u, bytes, 4 + 16 * 68, 68, gl_CooperativeMatrixLayoutColumnMajor);
    coopmat<float, gl_ScopeSubgroup, 8, 8, gl_MatrixUseAccumulator> f;
    coopMatLoad(f, halves, 2, 18, gl_CooperativeMatrixLayoutRowMajor);
    f = f * 2.0;
    coopMatStore(f, halves, 2 + 8 * 18, 18, gl_CooperativeMatrixLayoutRowMajor);
}
