// A cooperative-matrix GEMM tiled as the public Vulkan cooperative-matrix benchmarks tile it:
// a workgroup of 2x2 sub-groups computes a (2 TM FRAG) x (2 TN FRAG) tile of C; each sub-group
// keeps TM x TN accumulator fragments in registers across the K loop; A and B are staged in
// workgroup memory, BK = 2 FRAG deep, by every invocation.
//
//   c = a * b     (a: M x K, b: K x N, c: M x N f32, all row-major; M, N, K multiples of the
//                  tile and of BK)
//
// Before naga compiles it, `ELEM` is replaced by the operand type (f16 or f32), `FRAG` by the
// fragment size, `MAT` by `coop_mat8x8` or `coop_mat16x16`, `TM`/`TN` by the fragments per
// sub-group, and `THREADS` by four times the device's sub-group size (the public benchmarks set
// the local size from the sub-group size the same way).
enable f16;
enable wgpu_cooperative_matrix;

struct Params {
    m: u32,
    n: u32,
    k: u32,
}

@group(0) @binding(0) var<storage, read> a: array<ELEM>;
@group(0) @binding(1) var<storage, read> b: array<ELEM>;
@group(0) @binding(2) var<storage, read_write> c: array<f32>;
var<immediate> p: Params;

const F: u32 = FRAGu;
const FM: u32 = TMu;
const FN: u32 = TNu;
const BM: u32 = 2u * FM * F;
const BN: u32 = 2u * FN * F;
const BK: u32 = 2u * F;
const T: u32 = THREADSu;

var<workgroup> a_tile: array<ELEM, BM * BK>;   // row-major, BK per row
var<workgroup> b_tile: array<ELEM, BK * BN>;   // row-major, BN per row

@compute @workgroup_size(THREADS)
fn main(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(subgroup_id) sg: u32,
) {
    // (naga 30 loses expressions written inside coopStoreT/coopMultiplyAdd arguments, such as
    // `p.n` or an index: they are bound to names first.)
    let n = p.n;
    let k = p.k;
    let m0 = wg.y * BM;
    let n0 = wg.x * BN;
    let sm = (sg / 2u) * FM * F;
    let sn = (sg % 2u) * FN * F;
    var acc: array<MAT<f32, C>, FM * FN>;
    for (var k0 = 0u; k0 < k; k0 += BK) {
        for (var j = tid; j < BM * BK; j += T) {
            a_tile[j] = a[(m0 + j / BK) * k + k0 + j % BK];
        }
        for (var j = tid; j < BK * BN; j += T) {
            b_tile[j] = b[(k0 + j / BN) * n + n0 + j % BN];
        }
        workgroupBarrier();
        for (var kk = 0u; kk < BK; kk += F) {
            for (var i = 0u; i < FM; i++) {
                let fa = coopLoadT<MAT<ELEM, A>>(&a_tile[(sm + i * F) * BK + kk], BK);
                for (var j = 0u; j < FN; j++) {
                    let fb = coopLoadT<MAT<ELEM, B>>(&b_tile[kk * BN + sn + j * F], BN);
                    let at = i * FN + j;
                    acc[at] = coopMultiplyAdd(fa, fb, acc[at]);
                }
            }
        }
        workgroupBarrier();
    }
    for (var i = 0u; i < FM; i++) {
        for (var j = 0u; j < FN; j++) {
            let at = i * FN + j;
            let corner = (m0 + sm + i * F) * n + n0 + sn + j * F;
            coopStoreT(acc[at], &c[corner], n);
        }
    }
}
