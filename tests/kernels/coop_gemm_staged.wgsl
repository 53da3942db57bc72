// A tiled GEMM on cooperative matrices, as the public Vulkan matmul benchmarks write it:
// operand tiles staged in workgroup memory by the whole workgroup, 16x16 fragments loaded from
// there, accumulators kept in registers across the K loop.
//
//   c = alpha * a * b + beta * c     (a: M x K row-major, b: K x N row-major, c: M x N f32)
//
// One workgroup computes a 32x32 tile of c as 2x2 fragments. The kernel does not assume a
// sub-group size: sub-group `s` of `n` takes fragments s, s + n, ... (fewer than four
// sub-groups each take several, more leave some idle). A is read row-major, B column-major
// from a transposed staging tile. The epilogue goes through workgroup memory.
// `ELEM` is replaced by the operand type (f32 or f16) before naga compiles it.
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

const BM: u32 = 32u;
const BN: u32 = 32u;
const BK: u32 = 16u;
const THREADS: u32 = 64u;

var<workgroup> a_tile: array<ELEM, 512>;   // BM x BK, row-major
var<workgroup> b_tile: array<ELEM, 512>;   // BK x BN, stored transposed: (k, n) at n * BK + k
var<workgroup> c_tile: array<f32, 1024>;   // BM x BN, row-major

fn fragment_mul(i: u32, acc: coop_mat16x16<f32, C>) -> coop_mat16x16<f32, C> {
    let fm = i / 2u;
    let fn_ = i % 2u;
    let fa = coopLoadT<coop_mat16x16<ELEM, A>>(&a_tile[fm * 16u * BK], BK);
    let fb = coopLoad<coop_mat16x16<ELEM, B>>(&b_tile[fn_ * 16u * BK], BK);
    return coopMultiplyAdd(fa, fb, acc);
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
    var acc0 = coop_mat16x16<f32, C>();
    var acc1 = coop_mat16x16<f32, C>();
    var acc2 = coop_mat16x16<f32, C>();
    var acc3 = coop_mat16x16<f32, C>();
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
    // Fragment i covers rows (i / 2) * 16.., columns (i % 2) * 16.. of the tile.
    if sg < 4u {
        coopStoreT(acc0, &c_tile[(sg / 2u) * 16u * BN + (sg % 2u) * 16u], BN);
    }
    if sg + nsg < 4u {
        let i = sg + nsg;
        coopStoreT(acc1, &c_tile[(i / 2u) * 16u * BN + (i % 2u) * 16u], BN);
    }
    if sg + 2u * nsg < 4u {
        let i = sg + 2u * nsg;
        coopStoreT(acc2, &c_tile[(i / 2u) * 16u * BN + (i % 2u) * 16u], BN);
    }
    if sg + 3u * nsg < 4u {
        let i = sg + 3u * nsg;
        coopStoreT(acc3, &c_tile[(i / 2u) * 16u * BN + (i % 2u) * 16u], BN);
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
