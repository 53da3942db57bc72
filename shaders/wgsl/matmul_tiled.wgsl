// Tiled GEMM for devices without cooperative matrices (and for f32 on CPU drivers):
// C[b] = alpha * op(A[b]) * op(B[b]) + beta * C[b] with arbitrary element strides.
// A and B are read as 32-bit words and unpacked ({{DTYPE}}), so devices without 8- or 16-bit
// types (SwiftShader) run every input type. Register-blocked: 4x4 outputs per invocation (4 rows,
// 4 columns 8 apart), 32x32 per 8x8 workgroup, no workgroup memory or barriers (llvmpipe's JIT handles barrier-split
// shaders very slowly, and CPU caches do the staging); accumulation in {{ACC}}.
// The K step is filled in from a `tiled_step_*.wgsl` fragment: one element at a time, or four
// 8-bit elements per packed integer dot product.
{{GEMM_PARAMS}}

@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> c: array<{{ACC}}>;
@group(0) @binding(3) var<storage, read> p: Params;

// Byte `i` of `w` in the low bits (higher bytes left above it).
fn byte_at(w: u32, i: u32) -> u32 {
    return select(select(w, w >> 8u, i == 1u), select(w >> 16u, w >> 24u, i == 3u), i >= 2u);
}

{{STEP_FUNCTIONS}}

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
    // Element 0 of each A row and B column; rows/columns past the edge re-read the last valid
    // one, and their results are not stored.
    let ar0 = abase + row0 * p.a_row;
    let ar1 = abase + min(row0 + 1u, p.m - 1u) * p.a_row;
    let ar2 = abase + min(row0 + 2u, p.m - 1u) * p.a_row;
    let ar3 = abase + min(row0 + 3u, p.m - 1u) * p.a_row;
    let bc0 = bbase + col0 * p.b_col;
    let bc1 = bbase + min(col0 + 8u, p.n - 1u) * p.b_col;
    let bc2 = bbase + min(col0 + 16u, p.n - 1u) * p.b_col;
    let bc3 = bbase + min(col0 + 24u, p.n - 1u) * p.b_col;
    var acc: array<vec4<{{ACC}}>, 4>;
{{K_LOOP}}
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
