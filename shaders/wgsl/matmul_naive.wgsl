// The naive per-element GEMM (one invocation per C element, no tiling): the baseline the
// subgroup kernels are measured against. C[m,n] = alpha * sum_k A[m,k] * B[k,n] + beta * C[m,n],
// all row-major.
struct Params {
    m: u32,
    n: u32,
    k: u32,
    alpha: f32,
    beta: f32,
}

@group(0) @binding(0) var<storage, read> a: array<{{ELEM}}>;
@group(0) @binding(1) var<storage, read> b: array<{{ELEM}}>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<storage, read> p: Params;

@compute @workgroup_size(8, 8)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let col = gid.x;
    let row = gid.y;
    if row >= p.m || col >= p.n {
        return;
    }
    var acc = 0.0;
    for (var kk = 0u; kk < p.k; kk++) {
        acc += f32(a[row * p.k + kk]) * f32(b[kk * p.n + col]);
    }
    let idx = row * p.n + col;
    c[idx] = p.alpha * acc + p.beta * c[idx];
}
