// A tiled GEMM on cooperative matrices, as the public Vulkan matmul benchmarks write it:
// operand tiles staged in workgroup memory by the whole workgroup, fragments loaded from
// there, accumulators kept in registers across the K loop.
//
//   c = alpha * a * b + beta * c     (a: M x K row-major, b: K x N row-major, c: M x N f32)
//
// Fragments are FRAG x FRAG (8 or 16); one workgroup computes a (2 FRAG)^2 tile of c as 2x2
// fragments, in K steps of 16. The kernel does not assume a sub-group size: sub-group `s` of
// `n` takes fragments s, s + n, ... (fewer than four sub-groups each take several, more leave
// some idle). A is read row-major, B column-major from a transposed staging tile. The epilogue
// goes through workgroup memory. Before naga compiles it, `ELEM` is replaced by the operand
// type (f32 or f16), `FRAG` by the fragment size and `MAT` by `coop_mat8x8` or `coop_mat16x16`.
enable f16;
enable wgpu_cooperative_matrix;

struct Params {
    m: u32,
    n: u32,
    k: u32,
    alpha: f32,
    beta: f32,
}

@group(0) @binding(0) var<storage, read> a: array<ELEM>;
@group(0) @binding(1) var<storage, read> b: array<ELEM>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
var<immediate> p: Params;

const F: u32 = FRAGu;
const BM: u32 = 2u * F;
const BN: u32 = 2u * F;
const BK: u32 = 16u;
const THREADS: u32 = 64u;

var<workgroup> a_tile: array<ELEM, BM * BK>;   // row-major
var<workgroup> b_tile: array<ELEM, BK * BN>;   // transposed: (k, n) at n * BK + k
var<workgroup> c_tile: array<f32, BM * BN>;    // row-major

fn fragment_mul(i: u32, acc_in: MAT<f32, C>) -> MAT<f32, C> {
    let fm = i / 2u;
    let fn_ = i % 2u;
    var acc = acc_in;
    for (var kk = 0u; kk < BK; kk += F) {
        let fa = coopLoadT<MAT<ELEM, A>>(&a_tile[fm * F * BK + kk], BK);
        let fb = coopLoad<MAT<ELEM, B>>(&b_tile[fn_ * F * BK + kk], BK);
        acc = coopMultiplyAdd(fa, fb, acc);
    }
    return acc;
}

@compute @workgroup_size(64)
fn main(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(subgroup_id) sg: u32,
    @builtin(num_subgroups) nsg: u32,
) {
    let m0 = wg.y * BM;
    let n0 = wg.x * BN;
    var acc0 = MAT<f32, C>();
    var acc1 = MAT<f32, C>();
    var acc2 = MAT<f32, C>();
    var acc3 = MAT<f32, C>();
    for (var k0 = 0u; k0 < p.k; k0 += BK) {
        for (var j = tid; j < BM * BK; j += THREADS) {
            let r = j / BK;
            let q = j % BK;
            var v = ELEM(0);
            if m0 + r < p.m && k0 + q < p.k {
                v = a[(m0 + r) * p.k + k0 + q];
            }
            a_tile[j] = v;
        }
        for (var j = tid; j < BK * BN; j += THREADS) {
            let r = j / BN;
            let q = j % BN;
            var v = ELEM(0);
            if k0 + r < p.k && n0 + q < p.n {
                v = b[(k0 + r) * p.n + n0 + q];
            }
            b_tile[q * BK + r] = v;
        }
        workgroupBarrier();
        if sg < 4u {
            acc0 = fragment_mul(sg, acc0);
        }
        if sg + nsg < 4u {
            acc1 = fragment_mul(sg + nsg, acc1);
        }
        if sg + 2u * nsg < 4u {
            acc2 = fragment_mul(sg + 2u * nsg, acc2);
        }
        if sg + 3u * nsg < 4u {
            acc3 = fragment_mul(sg + 3u * nsg, acc3);
        }
        workgroupBarrier();
    }
    // Fragment i covers rows (i / 2) * F.., columns (i % 2) * F.. of the tile.
    if sg < 4u {
        coopStoreT(acc0, &c_tile[(sg / 2u) * F * BN + (sg % 2u) * F], BN);
    }
    if sg + nsg < 4u {
        let i = sg + nsg;
        coopStoreT(acc1, &c_tile[(i / 2u) * F * BN + (i % 2u) * F], BN);
    }
    if sg + 2u * nsg < 4u {
        let i = sg + 2u * nsg;
        coopStoreT(acc2, &c_tile[(i / 2u) * F * BN + (i % 2u) * F], BN);
    }
    if sg + 3u * nsg < 4u {
        let i = sg + 3u * nsg;
        coopStoreT(acc3, &c_tile[(i / 2u) * F * BN + (i % 2u) * F], BN);
    }
    workgroupBarrier();
    for (var j = tid; j < BM * BN; j += THREADS) {
        let r = m0 + j / BN;
        let q = n0 + j % BN;
        if r < p.m && q < p.n {
            let at = r * p.n + q;
            c[at] = p.alpha * c_tile[j] + p.beta * c[at];
        }
    }
}
