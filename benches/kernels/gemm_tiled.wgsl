// The tiled local-memory GEMM of tests/kernels/opencl/local_gemm.cl (`gemm_tiled`), written
// directly for Vulkan: the native baseline of the OpenCL-on-Vulkan benchmark.
@group(0) @binding(0) var<storage, read> A: array<f32>;
@group(0) @binding(1) var<storage, read> B: array<f32>;
@group(0) @binding(2) var<storage, read_write> C: array<f32>;
@group(0) @binding(3) var<storage, read> dims: array<i32, 4>;

var<workgroup> As: array<array<f32, 16>, 16>;
var<workgroup> Bs: array<array<f32, 16>, 16>;

@compute @workgroup_size(16, 16, 1)
fn main(@builtin(local_invocation_id) lid: vec3<u32>, @builtin(global_invocation_id) gid: vec3<u32>) {
    let M = dims[0];
    let N = dims[1];
    let K = dims[2];
    let tx = i32(lid.x);
    let ty = i32(lid.y);
    let col = i32(gid.x);
    let row = i32(gid.y);
    var acc = 0.0;
    for (var t = 0; t < K; t += 16) {
        var a = 0.0;
        if (row < M && t + tx < K) {
            a = A[row * K + t + tx];
        }
        var b = 0.0;
        if (t + ty < K && col < N) {
            b = B[(t + ty) * N + col];
        }
        As[ty][tx] = a;
        Bs[ty][tx] = b;
        workgroupBarrier();
        for (var k = 0; k < 16; k++) {
            acc += As[ty][k] * Bs[k][tx];
        }
        workgroupBarrier();
    }
    if (row < M && col < N) {
        C[row * N + col] = acc;
    }
}
