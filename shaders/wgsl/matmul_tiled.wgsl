// Tiled GEMM for devices without cooperative matrices (and for f32 everywhere):
// C[b] = alpha * op(A[b]) * op(B[b]) + beta * C[b] with arbitrary element strides.
// A and B are read as 32-bit words and unpacked ({{DTYPE}}), so devices without 8- or 16-bit
// types (SwiftShader) run every input type. Register-blocked: 4x4 outputs per invocation (4 rows,
// 4 columns 8 apart), 32x32 per 8x8 workgroup, no workgroup memory or barriers (llvmpipe's JIT handles barrier-split
// shaders very slowly, and CPU caches do the staging); accumulation in {{ACC}}.
struct Params {
    m: u32, n: u32, k: u32, batch: u32,
    a_row: u32, a_col: u32, a_batch: u32,
    b_row: u32, b_col: u32, b_batch: u32,
    c_row: u32, c_col: u32, c_batch: u32,
    alpha: f32, beta: f32,
}

@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> c: array<{{ACC}}>;
@group(0) @binding(3) var<storage, read> p: Params;

// Byte `i` of `w` in the low bits (higher bytes left above it).
fn byte_at(w: u32, i: u32) -> u32 {
    return select(select(w, w >> 8u, i == 1u), select(w >> 16u, w >> 24u, i == 3u), i >= 2u);
}

fn load_a(e: u32) -> {{ACC}} {
    return {{LOAD_A}};
}

fn load_b(e: u32) -> {{ACC}} {
    return {{LOAD_B}};
}

@compute @workgroup_size(8, 8)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let bt = wg.z;
    // Rows row0..row0+3; columns col0 + 8c for c in 0..4, so that neighbouring invocations
    // (one subgroup row on CPU drivers) read neighbouring B elements and the same A elements.
    let row0 = (wg.y * 8u + lid.y) * 4u;
    let col0 = wg.x * 32u + lid.x;
    if row0 >= p.m || col0 >= p.n {
        return;
    }
    let abase = bt * p.a_batch;
    let bbase = bt * p.b_batch;
    // Rows/columns past the edge re-read the last valid one; their results are not stored.
    let r1 = min(row0 + 1u, p.m - 1u);
    let r2 = min(row0 + 2u, p.m - 1u);
    let r3 = min(row0 + 3u, p.m - 1u);
    let c1 = min(col0 + 8u, p.n - 1u);
    let c2 = min(col0 + 16u, p.n - 1u);
    let c3 = min(col0 + 24u, p.n - 1u);
    var acc: array<vec4<{{ACC}}>, 4>;
    for (var kk = 0u; kk < p.k; kk++) {
        let ak = abase + kk * p.a_col;
        let av = vec4<{{ACC}}>(load_a(ak + row0 * p.a_row), load_a(ak + r1 * p.a_row), load_a(ak + r2 * p.a_row), load_a(ak + r3 * p.a_row));
        let bk = bbase + kk * p.b_row;
        let bv = vec4<{{ACC}}>(load_b(bk + col0 * p.b_col), load_b(bk + c1 * p.b_col), load_b(bk + c2 * p.b_col), load_b(bk + c3 * p.b_col));
        acc[0] += av.x * bv;
        acc[1] += av.y * bv;
        acc[2] += av.z * bv;
        acc[3] += av.w * bv;
    }
    for (var r = 0u; r < 4u; r++) {
        let gi = row0 + r;
        for (var cc = 0u; cc < 4u; cc++) {
            let gj = col0 + cc * 8u;
            if gi < p.m && gj < p.n {
                let ci = bt * p.c_batch + gi * p.c_row + gj * p.c_col;
                var v = {{ACC}}(p.alpha) * acc[r][cc];
                if p.beta != 0.0 {
                    v += {{ACC}}(p.beta) * c[ci];
                }
                c[ci] = v;
            }
        }
    }
}
