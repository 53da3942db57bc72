// Per-MulAdd cost: every sub-group loads A and B fragments from workgroup memory and
// multiply-adds them into one accumulator REPS times (the fragment loads stay in the loop so
// that nothing is hoisted out of it), then stores the accumulator to its own slot. Before naga
// compiles it, `ELEM`, `FRAG`, `MAT` are replaced as in coop_gemm_staged.wgsl and `REPS` by the
// repetition count.
enable f16;
enable wgpu_cooperative_matrix;

@group(0) @binding(0) var<storage, read_write> out: array<f32>;

const F: u32 = FRAGu;
var<workgroup> tile: array<ELEM, 2u * F * F>;

@compute @workgroup_size(64)
fn main(
    @builtin(local_invocation_index) tid: u32,
    @builtin(workgroup_id) wg: vec3<u32>,
    @builtin(subgroup_id) sg: u32,
    @builtin(num_subgroups) nsg: u32,
) {
    for (var j = tid; j < 2u * F * F; j += 64u) {
        tile[j] = ELEM(f32(j % 7u) * 0.125);
    }
    workgroupBarrier();
    var acc = MAT<f32, C>();
    for (var i = 0u; i < REPSu; i++) {
        let at = (i & 1u) * F;
        let a = coopLoadT<MAT<ELEM, A>>(&tile[at], 2u * F);
        let b = coopLoad<MAT<ELEM, B>>(&tile[F - at], 2u * F);
        acc = coopMultiplyAdd(a, b, acc);
    }
    coopStoreT(acc, &out[(wg.x * nsg + sg) * F * F], F);
}
