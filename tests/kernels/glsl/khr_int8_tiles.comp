#version 460
// An int8 GEMM with per-row and per-column scales, shaped like llama.cpp's tensor-wise int8
// cooperative-matrix kernel: one sub-group per workgroup, a 4 x 4 tile of 16x16x16 s8 -> s32
// fragments loaded straight from the int8 buffers in a hinted-unroll loop, and an f32 epilogue
// through workgroup memory between sub-group barriers. D[r][o] = float(sum_k A[r][k] W[o][k]) *
// as[r] * ws[o] + bias[o]; A is rows x k row-major, W is n x k row-major (B = W^T).
#extension GL_EXT_control_flow_attributes : require
#extension GL_EXT_shader_8bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_int8 : require
#extension GL_EXT_shader_explicit_arithmetic_types_int32 : require
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require

layout(constant_id = 0) const uint SUBGROUP = 32;
layout(local_size_x_id = 0) in;
const uint F = 16;
const uint T = 4;

layout(push_constant) uniform P { uint n; uint k; } p;
layout(binding = 0, std430) readonly buffer W { int8_t w[]; };
layout(binding = 1, std430) readonly buffer A { int8_t a[]; };
layout(binding = 2, std430) readonly buffer WS { float ws[]; };
layout(binding = 3, std430) readonly buffer AS { float as_[]; };
layout(binding = 4, std430) readonly buffer Bias { float bias[]; };
layout(binding = 5, std430) writeonly buffer D { float d[]; };

shared int32_t staged[F * F];

void main() {
    const uint col0 = gl_WorkGroupID.x * F * T;
    const uint row0 = gl_WorkGroupID.y * F * T;
    coopmat<int32_t, gl_ScopeSubgroup, F, F, gl_MatrixUseAccumulator> acc[T * T];
    [[unroll]] for (uint i = 0; i < T * T; ++i) {
        acc[i] = coopmat<int32_t, gl_ScopeSubgroup, F, F, gl_MatrixUseAccumulator>(0);
    }
    for (uint kk = 0; kk < p.k; kk += F) {
        coopmat<int8_t, gl_ScopeSubgroup, F, F, gl_MatrixUseA> x[T];
        coopmat<int8_t, gl_ScopeSubgroup, F, F, gl_MatrixUseB> y[T];
        [[unroll]] for (uint t = 0; t < T; ++t) {
            coopMatLoad(x[t], a, (row0 + t * F) * p.k + kk, p.k, gl_CooperativeMatrixLayoutRowMajor);
            coopMatLoad(y[t], w, (col0 + t * F) * p.k + kk, p.k, gl_CooperativeMatrixLayoutColumnMajor);
        }
        [[unroll]] for (uint tm = 0; tm < T; ++tm) {
            [[unroll]] for (uint tn = 0; tn < T; ++tn) {
                acc[tm * T + tn] = coopMatMulAdd(x[tm], y[tn], acc[tm * T + tn]);
            }
        }
    }
    [[unroll]] for (uint tm = 0; tm < T; ++tm) {
        [[unroll]] for (uint tn = 0; tn < T; ++tn) {
            coopMatStore(acc[tm * T + tn], staged, 0, F, gl_CooperativeMatrixLayoutRowMajor);
            controlBarrier(gl_ScopeSubgroup, gl_ScopeSubgroup, gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
            for (uint e = gl_SubgroupInvocationID; e < F * F; e += gl_SubgroupSize) {
                const uint r = row0 + tm * F + e / F;
                const uint o = col0 + tn * F + e % F;
                d[r * p.n + o] = float(staged[e]) * as_[r] * ws[o] + bias[o];
            }
            controlBarrier(gl_ScopeSubgroup, gl_ScopeSubgroup, gl_StorageSemanticsShared, gl_SemanticsAcquireRelease);
        }
    }
}
