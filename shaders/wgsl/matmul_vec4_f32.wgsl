// f32 GEMM for CPU drivers when A is k-contiguous and B n-contiguous, with K, N, both leading
// dimensions and both batch strides multiples of 4 (the host checks): C[b] = alpha * A[b] * B[b]
// + beta * C[b]. Every operand load is 16 bytes (four K values of an A row, four adjacent
// columns of a B row), which CPU drivers execute as one vector load per lane instead of four
// scalar ones; 4x4 outputs per invocation (4 rows, 4 adjacent columns), 32x32 per 8x8
// workgroup, no workgroup memory or barriers (see `matmul_tiled.wgsl`).
{{GEMM_PARAMS}}

@group(0) @binding(0) var<storage, read> a: array<vec4<f32>>;
@group(0) @binding(1) var<storage, read> b: array<vec4<f32>>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<storage, read> p: Params;

@compute @workgroup_size(8, 8)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let bt = wg.z;
    let row0 = (wg.y * 8u + lid.y) * 4u;
    let col0 = (wg.x * 8u + lid.x) * 4u;
    if row0 >= p.m || col0 >= p.n {
        return;
    }
    // Addresses in vectors. Rows past M re-read the last one; their results are not stored.
    let la = p.a_row / 4u;
    let lb = p.b_row / 4u;
    let abase = bt * (p.a_batch / 4u);
    let a0 = abase + row0 * la;
    let a1 = abase + min(row0 + 1u, p.m - 1u) * la;
    let a2 = abase + min(row0 + 2u, p.m - 1u) * la;
    let a3 = abase + min(row0 + 3u, p.m - 1u) * la;
    let bcol = bt * (p.b_batch / 4u) + col0 / 4u;
    var acc: array<vec4<f32>, 4>;
    for (var kv = 0u; kv < p.k / 4u; kv++) {
        let bk = bcol + kv * 4u * lb;
        let b0 = b[bk];
        let b1 = b[bk + lb];
        let b2 = b[bk + 2u * lb];
        let b3 = b[bk + 3u * lb];
        let x0 = a[a0 + kv];
        let x1 = a[a1 + kv];
        let x2 = a[a2 + kv];
        let x3 = a[a3 + kv];
        acc[0] += x0.x * b0 + x0.y * b1 + x0.z * b2 + x0.w * b3;
        acc[1] += x1.x * b0 + x1.y * b1 + x1.z * b2 + x1.w * b3;
        acc[2] += x2.x * b0 + x2.y * b1 + x2.z * b2 + x2.w * b3;
        acc[3] += x3.x * b0 + x3.y * b1 + x3.z * b2 + x3.w * b3;
    }
    for (var r = 0u; r < 4u; r++) {
        let gi = row0 + r;
        if gi < p.m {
            for (var cc = 0u; cc < 4u; cc++) {
                let ci = bt * p.c_batch + gi * p.c_row + (col0 + cc) * p.c_col;
                var v = p.alpha * acc[r][cc];
                if p.beta != 0.0 {
                    v += p.beta * c[ci];
                }
                c[ci] = v;
            }
        }
    }
}
