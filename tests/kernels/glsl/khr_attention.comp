#version 450
#extension GL_EXT_control_flow_attributes : enable
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_KHR_shader_subgroup_basic : enable
#extension GL_KHR_shader_subgroup_vote : enable
#extension GL_KHR_memory_scope_semantics : enable
#extension GL_KHR_cooperative_matrix : enable

// Attention in the form of llama.cpp's coopmat1 flash attention: one workgroup of four
// subgroups computes O = softmax(scale * Q K^T) V for 16 query rows. Q and K are staged in
// workgroup memory as f16vec4 and loaded from there as A (row-major) and B (column-major);
// S^T = K Q^T is stored row-major into a float array for the scalar softmax; P V runs with f16
// accumulators converted to f32 before they are stored. V's rows are padded to a multiple of 64.
layout(local_size_x_id = 0) in;
layout(constant_id = 1) const uint D = 32;     // head size, a multiple of 16
const uint Bc = 16;    // keys per subgroup and block

const uint Br = 16;
layout(binding = 0) readonly buffer Q { vec4 q4[]; };
layout(binding = 1) readonly buffer K { f16vec4 k4[]; };
layout(binding = 2) readonly buffer V { float16_t v[]; };
layout(binding = 3) writeonly buffer O { float o[]; };
layout(push_constant) uniform P { uint kv; float scale; } p;

const uint qstride = D / 4 + 2;
shared f16vec4 Qs[Br * qstride];
shared f16vec4 Ks[64 * qstride];
shared float S[64 * (Br + 4)];
shared float16_t Ps[Br * 72];

void main() {
    const uint tid = gl_LocalInvocationIndex;
    const uint sstride = Br + 4;
    const uint cols = gl_NumSubgroups * Bc;
    for (uint i = tid; i < Br * D / 4; i += gl_WorkGroupSize.x) {
        uint r = i / (D / 4), d = i % (D / 4);
        Qs[r * qstride + d] = f16vec4(q4[gl_WorkGroupID.x * Br * D / 4 + i] * p.scale);
    }
    float m_run = -1e30, l_run = 0.0;
    float acc[32];
    [[unroll]] for (uint d = 0; d < 32; ++d) acc[d] = 0.0;
    for (uint j = 0; j < p.kv; j += cols) {
        barrier();
        for (uint i = tid; i < cols * D / 4; i += gl_WorkGroupSize.x) {
            uint c = i / (D / 4), d = i % (D / 4);
            Ks[c * qstride + d] = j + c < p.kv ? k4[(j + c) * D / 4 + d] : f16vec4(0);
        }
        barrier();
        // S^T block = K Q^T: rows are keys, columns are queries.
        coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> st =
            coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(0.0);
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> km;
        coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> qm;
        for (uint d = 0; d < D / 16; ++d) {
            coopMatLoad(qm, Qs, d * 4, qstride, gl_CooperativeMatrixLayoutColumnMajor);
            coopMatLoad(km, Ks, gl_SubgroupID * Bc * qstride + d * 4, qstride, gl_CooperativeMatrixLayoutRowMajor);
            st = coopMatMulAdd(km, qm, st);
        }
        coopMatStore(st, S, gl_SubgroupID * Bc * sstride, sstride, gl_CooperativeMatrixLayoutRowMajor);
        barrier();
        // Thread r < Br owns query row r.
        if (tid < Br) {
            float mx = m_run;
            for (uint c = 0; c < cols && j + c < p.kv; ++c) mx = max(mx, S[c * sstride + tid]);
            float e = exp(m_run - mx);
            l_run *= e;
            [[unroll]] for (uint d = 0; d < 32; ++d) acc[d] *= e;
            for (uint c = 0; c < cols; ++c) {
                float pv = j + c < p.kv ? exp(S[c * sstride + tid] - mx) : 0.0;
                l_run += pv;
                Ps[tid * 72 + c] = float16_t(pv);
            }
            m_run = mx;
        }
        barrier();
        // O += P V through cooperative matrices with f16 accumulators, staged in S.
        bool any_rows = subgroupAny(tid < Br);
        if (gl_SubgroupID == 0) {
            for (uint dt = 0; dt < D / 16; ++dt) {
                coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> o16 =
                    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(float16_t(0));
                for (uint c = 0; c < cols; c += 16) {
                    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseA> pm;
                    coopmat<float16_t, gl_ScopeSubgroup, 16, 16, gl_MatrixUseB> vm;
                    coopMatLoad(pm, Ps, c, 72, gl_CooperativeMatrixLayoutRowMajor);
                    coopMatLoad(vm, v, (j + c) * D + dt * 16, D, gl_CooperativeMatrixLayoutRowMajor);
                    o16 = coopMatMulAdd(pm, vm, o16);
                }
                coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator> o32 =
                    coopmat<float, gl_ScopeSubgroup, 16, 16, gl_MatrixUseAccumulator>(o16);
                coopMatStore(o32, S, dt * 16, sstride * 2, gl_CooperativeMatrixLayoutRowMajor);
            }
        }
        barrier();
        if (tid < Br && any_rows) {
            [[unroll]] for (uint d = 0; d < 32; ++d) if (d < D) acc[d] += S[tid * sstride * 2 + d];
        }
    }
    if (tid < Br) {
        [[unroll]] for (uint d = 0; d < 32; ++d)
            if (d < D) o[(gl_WorkGroupID.x * Br + tid) * D + d] = acc[d] / l_run;
    }
}
