// C = A * B (row-major, M x K times K x N), tiled through local memory: the classic OpenCL
// GEMM. `gemm_tiled` declares its tiles; `gemm_local_args` takes them as __local arguments
// sized at launch.
#define TILE 16

__kernel __attribute__((reqd_work_group_size(TILE, TILE, 1)))
void gemm_tiled(__global const float* A, __global const float* B, __global float* C, int M, int N, int K) {
    __local float As[TILE][TILE];
    __local float Bs[TILE][TILE];
    int tx = get_local_id(0), ty = get_local_id(1);
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int t = 0; t < K; t += TILE) {
        As[ty][tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0.0f;
        Bs[ty][tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < TILE; k++)
            acc += As[ty][k] * Bs[k][tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < M && col < N)
        C[row * N + col] = acc;
}

__kernel void gemm_local_args(__global const float* A, __global const float* B, __global float* C, int M, int N, int K, __local float* As, __local float* Bs) {
    int tx = get_local_id(0), ty = get_local_id(1);
    int ts = get_local_size(0);
    int col = get_global_id(0), row = get_global_id(1);
    float acc = 0.0f;
    for (int t = 0; t < K; t += ts) {
        As[ty * ts + tx] = (row < M && t + tx < K) ? A[row * K + t + tx] : 0.0f;
        Bs[ty * ts + tx] = (t + ty < K && col < N) ? B[(t + ty) * N + col] : 0.0f;
        barrier(CLK_LOCAL_MEM_FENCE);
        for (int k = 0; k < ts; k++)
            acc += As[ty * ts + k] * Bs[k * ts + tx];
        barrier(CLK_LOCAL_MEM_FENCE);
    }
    if (row < M && col < N)
        C[row * N + col] = acc;
}
