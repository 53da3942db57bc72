#version 450
// C = A * B with f16 operands staged in workgroup structs: each tile is the member array of a
// shared struct that leads with a uvec4 (for alignment), as TensorFlow Lite's GPU delegate
// writes its cooperative-matrix GEMMs; A's tile holds f16vec4 (fragments loaded through the
// vector words), B's plain halves; f32 accumulators stored to a third struct's member array and
// copied out. Four sub-groups per workgroup, a 2 x 2 grid of 16 x 16 fragments (lM x lN x lK from
// specialization constants), M, N and K multiples of 32.
#extension GL_KHR_cooperative_matrix : require
#extension GL_KHR_memory_scope_semantics : require
#extension GL_KHR_shader_subgroup_basic : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#extension GL_EXT_shader_16bit_storage : require

layout(constant_id = 1) const int L = 16;
layout(local_size_x_id = 0) in;

layout(set = 0, binding = 0) readonly buffer MatA { f16vec4 a[]; };
layout(set = 0, binding = 1) readonly buffer MatB { float16_t b[]; };
layout(set = 0, binding = 2) writeonly buffer MatC { float c[]; };
layout(push_constant) uniform Sizes { int m; int n; int k; };

const int T = 32;
struct ATile { uvec4 alignment; f16vec4 values[T * T / 4]; };
struct BTile { uvec4 alignment; float16_t values[T * T]; };
struct CTile { uvec4 alignment; float values[T * T]; };
shared ATile aTile;
shared BTile bTile;
shared CTile cTile;

void main() {
    const int tid = int(gl_LocalInvocationIndex);
    const int threads = int(gl_WorkGroupSize.x);
    const int row0 = int(gl_WorkGroupID.y) * T;
    const int col0 = int(gl_WorkGroupID.x) * T;
    const int sm = int(gl_SubgroupID) % 2;
    const int sn = int(gl_SubgroupID) / 2;
    coopmat<float, gl_ScopeSubgroup, L, L, gl_MatrixUseAccumulator> acc[T / L / 2][T / L / 2];
    for (int i = 0; i < T / L / 2; i++)
        for (int j = 0; j < T / L / 2; j++)
            acc[i][j] = coopmat<float, gl_ScopeSubgroup, L, L, gl_MatrixUseAccumulator>(0.0);
    for (int kk = 0; kk < k; kk += T) {
        for (int v = tid; v < T * T / 4; v += threads) {
            int r = v / (T / 4), q = v % (T / 4);
            aTile.values[v] = a[((row0 + r) * k + kk) / 4 + q];
        }
        for (int v = tid; v < T * T; v += threads) {
            int r = v / T, q = v % T;
            bTile.values[v] = b[(kk + r) * n + col0 + q];
        }
        barrier();
        for (int ks = 0; ks < T; ks += L) {
            for (int i = 0; i < T / L / 2; i++) {
                coopmat<float16_t, gl_ScopeSubgroup, L, L, gl_MatrixUseA> fa;
                int r = (sm * (T / L / 2) + i) * L;
                coopMatLoad(fa, aTile.values, (r * T + ks) / 4, T / 4, gl_CooperativeMatrixLayoutRowMajor);
                for (int j = 0; j < T / L / 2; j++) {
                    coopmat<float16_t, gl_ScopeSubgroup, L, L, gl_MatrixUseB> fb;
                    int q = (sn * (T / L / 2) + j) * L;
                    coopMatLoad(fb, bTile.values, ks * T + q, T, gl_CooperativeMatrixLayoutRowMajor);
                    acc[i][j] = coopMatMulAdd(fa, fb, acc[i][j]);
                }
            }
        }
        barrier();
    }
    for (int i = 0; i < T / L / 2; i++)
        for (int j = 0; j < T / L / 2; j++)
            coopMatStore(acc[i][j], cTile.values, (sm * (T / L / 2) + i) * L * T + (sn * (T / L / 2) + j) * L, T, gl_CooperativeMatrixLayoutRowMajor);
    barrier();
    for (int v = tid; v < T * T; v += threads)
        c[(row0 + v / T) * n + col0 + v % T] = cTile.values[v];
}
