// Shared-memory GEMM for f32 on GPUs (devices whose Vulkan driver runs on a GPU; CPU drivers
// take `matmul_tiled.wgsl`, whose JIT handles barriers badly):
// C[b] = alpha * op(A[b]) * op(B[b]) + beta * C[b] with arbitrary element strides.
// A {{TILE}}x{{TILE}} tile of C per {{WG}}x{{WG}} workgroup, 4x4 outputs per invocation (rows ty + {{WG}}i,
// columns tx + {{WG}}j, so that a subgroup reads consecutive B entries and broadcast A entries), K in
// steps of 16 staged through workgroup memory. (64x64 for throughput, 32x32 for problems too small
// to fill the device with 64x64 tiles.) Each operand tile is read along its contiguous
// dimension when it has one (coalesced), zero-filled past the edges.
{{GEMM_PARAMS}}

@group(0) @binding(0) var<storage, read> a: array<f32>;
@group(0) @binding(1) var<storage, read> b: array<f32>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
@group(0) @binding(3) var<storage, read> p: Params;

const TILE: u32 = {{TILE}}u;
const WG: u32 = {{WG}}u;
const THREADS: u32 = WG * WG;
// Operand elements each invocation stages per K step.
const LOADS: u32 = TILE * BK / THREADS;
const BK: u32 = 16u;
// [k][m] and [k][n].
var<workgroup> As: array<f32, {{TILE_BK}}>;
var<workgroup> Bs: array<f32, {{TILE_BK}}>;

@compute @workgroup_size({{WG}}, {{WG}})
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_id) lid: vec3<u32>) {
    let bt = wg.z;
    let m0 = wg.y * TILE;
    let n0 = wg.x * TILE;
    let tid = lid.y * WG + lid.x;
    let abase = bt * p.a_batch;
    let bbase = bt * p.b_batch;
    // Loading order: along k when that is A's contiguous dimension, else along m (likewise B
    // along n unless k is contiguous).
    let a_along_k = p.a_col == 1u;
    let b_along_k = p.b_row == 1u && p.b_col != 1u;
    // Each invocation's staged elements, (row or column within the tile, k within the step),
    // numbered along k when that is the operand's contiguous dimension, else along m / n.
    var a_mk: array<vec2<u32>, LOADS>;
    var b_nk: array<vec2<u32>, LOADS>;
    for (var q = 0u; q < LOADS; q++) {
        let idx = tid + q * THREADS;
        a_mk[q] = select(vec2<u32>(idx % TILE, idx / TILE), vec2<u32>(idx / BK, idx % BK), a_along_k);
        b_nk[q] = select(vec2<u32>(idx % TILE, idx / TILE), vec2<u32>(idx / BK, idx % BK), b_along_k);
    }
    var acc: array<vec4<f32>, 4>;
    for (var k0 = 0u; k0 < p.k; k0 += BK) {
        var ra: array<f32, LOADS>;
        var rb: array<f32, LOADS>;
        for (var q = 0u; q < LOADS; q++) {
            let gm = m0 + a_mk[q].x;
            let gka = k0 + a_mk[q].y;
            ra[q] = 0.0;
            if gm < p.m && gka < p.k {
                ra[q] = a[abase + gm * p.a_row + gka * p.a_col];
            }
            let gn = n0 + b_nk[q].x;
            let gkb = k0 + b_nk[q].y;
            rb[q] = 0.0;
            if gn < p.n && gkb < p.k {
                rb[q] = b[bbase + gkb * p.b_row + gn * p.b_col];
            }
        }
        workgroupBarrier();
        for (var q = 0u; q < LOADS; q++) {
            As[a_mk[q].y * TILE + a_mk[q].x] = ra[q];
            Bs[b_nk[q].y * TILE + b_nk[q].x] = rb[q];
        }
        workgroupBarrier();
        for (var kk = 0u; kk < BK; kk++) {
            let av = vec4<f32>(As[kk * TILE + lid.y], As[kk * TILE + lid.y + WG], As[kk * TILE + lid.y + 2u * WG], As[kk * TILE + lid.y + 3u * WG]);
            let bv = vec4<f32>(Bs[kk * TILE + lid.x], Bs[kk * TILE + lid.x + WG], Bs[kk * TILE + lid.x + 2u * WG], Bs[kk * TILE + lid.x + 3u * WG]);
            acc[0] += av.x * bv;
            acc[1] += av.y * bv;
            acc[2] += av.z * bv;
            acc[3] += av.w * bv;
        }
    }
    for (var i = 0u; i < 4u; i++) {
        let gi = m0 + lid.y + WG * i;
        for (var j = 0u; j < 4u; j++) {
            let gj = n0 + lid.x + WG * j;
            if gi < p.m && gj < p.n {
                let ci = bt * p.c_batch + gi * p.c_row + gj * p.c_col;
                var v = p.alpha * acc[i][j];
                if p.beta != 0.0 {
                    v += p.beta * c[ci];
                }
                c[ci] = v;
            }
        }
    }
}
