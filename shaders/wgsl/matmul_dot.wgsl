// 8-bit GEMM through packed integer dot products, for devices with
// VK_KHR_shader_integer_dot_product (core in Vulkan 1.3) and no cooperative matrices:
// C[b] = alpha * op(A[b]) * op(B[b]) + beta * C[b] with arbitrary element strides, s32 results
// (wrapping). Four K values of an A row and of a B column are packed into one 32-bit word
// (a single load when they are contiguous and aligned) and multiplied with {{DOT}}.
// Register-blocked like `matmul_tiled.wgsl`: 4x4 outputs per invocation (4 rows, 4 columns 8
// apart), 32x32 per 8x8 workgroup, no workgroup memory or barriers.
struct Params {
    m: u32, n: u32, k: u32, batch: u32,
    a_row: u32, a_col: u32, a_batch: u32,
    b_row: u32, b_col: u32, b_batch: u32,
    c_row: u32, c_col: u32, c_batch: u32,
    alpha: f32, beta: f32,
}

@group(0) @binding(0) var<storage, read> a: array<u32>;
@group(0) @binding(1) var<storage, read> b: array<u32>;
@group(0) @binding(2) var<storage, read_write> c: array<i32>;
@group(0) @binding(3) var<storage, read> p: Params;

// Byte `i` of `w` in the low 8 bits.
fn byte_at(w: u32, i: u32) -> u32 {
    return (select(select(w, w >> 8u, i == 1u), select(w >> 16u, w >> 24u, i == 3u), i >= 2u)) & 0xffu;
}

// Elements k..k+3 of A's row whose element 0 is at `base` (stride p.a_col), zero past K.
fn pack_a(base: u32, k: u32) -> u32 {
    let e = base + k * p.a_col;
    if p.a_col == 1u && (e & 3u) == 0u && k + 3u < p.k {
        return a[e >> 2u];
    }
    var w = 0u;
    for (var t = 0u; t < 4u; t++) {
        if k + t < p.k {
            let et = base + (k + t) * p.a_col;
            w |= byte_at(a[et >> 2u], et & 3u) << (8u * t);
        }
    }
    return w;
}

// Elements k..k+3 of B's column whose element 0 is at `base` (stride p.b_row), zero past K.
fn pack_b(base: u32, k: u32) -> u32 {
    let e = base + k * p.b_row;
    if p.b_row == 1u && (e & 3u) == 0u && k + 3u < p.k {
        return b[e >> 2u];
    }
    var w = 0u;
    for (var t = 0u; t < 4u; t++) {
        if k + t < p.k {
            let et = base + (k + t) * p.b_row;
            w |= byte_at(b[et >> 2u], et & 3u) << (8u * t);
        }
    }
    return w;
}

fn dot4(x: u32, y: u32) -> i32 {
    return {{DOT}};
}

@compute @workgroup_size(8, 8)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let bt = wg.z;
    let row0 = (wg.y * 8u + lid.y) * 4u;
    let col0 = wg.x * 32u + lid.x;
    if row0 >= p.m || col0 >= p.n {
        return;
    }
    let abase = bt * p.a_batch;
    let bbase = bt * p.b_batch;
    // Rows/columns past the edge re-read the last valid one; their results are not stored.
    let ar0 = abase + row0 * p.a_row;
    let ar1 = abase + min(row0 + 1u, p.m - 1u) * p.a_row;
    let ar2 = abase + min(row0 + 2u, p.m - 1u) * p.a_row;
    let ar3 = abase + min(row0 + 3u, p.m - 1u) * p.a_row;
    let bc0 = bbase + col0 * p.b_col;
    let bc1 = bbase + min(col0 + 8u, p.n - 1u) * p.b_col;
    let bc2 = bbase + min(col0 + 16u, p.n - 1u) * p.b_col;
    let bc3 = bbase + min(col0 + 24u, p.n - 1u) * p.b_col;
    var acc: array<vec4<i32>, 4>;
    for (var kk = 0u; kk < p.k; kk += 4u) {
        let pa = vec4<u32>(pack_a(ar0, kk), pack_a(ar1, kk), pack_a(ar2, kk), pack_a(ar3, kk));
        let pb = vec4<u32>(pack_b(bc0, kk), pack_b(bc1, kk), pack_b(bc2, kk), pack_b(bc3, kk));
        for (var r = 0u; r < 4u; r++) {
            acc[r] += vec4<i32>(dot4(pa[r], pb.x), dot4(pa[r], pb.y), dot4(pa[r], pb.z), dot4(pa[r], pb.w));
        }
    }
    for (var r = 0u; r < 4u; r++) {
        let gi = row0 + r;
        for (var cc = 0u; cc < 4u; cc++) {
            let gj = col0 + cc * 8u;
            if gi < p.m && gj < p.n {
                let ci = bt * p.c_batch + gi * p.c_row + gj * p.c_col;
                var v = i32(p.alpha) * acc[r][cc];
                if p.beta != 0.0 {
                    v += i32(p.beta) * c[ci];
                }
                c[ci] = v;
            }
        }
    }
}
