// y[i] = alpha * x[i] + y[i], then every invocation writes the subgroup-wide sum of the new y
// values of its subgroup to sums[i]. info[0] receives the subgroup size the kernel ran with.

struct Params {
    n: u32,
    alpha: f32,
}

@group(0) @binding(0) var<storage, read> x: array<f32>;
@group(0) @binding(1) var<storage, read_write> y: array<f32>;
@group(0) @binding(2) var<storage, read_write> sums: array<f32>;
@group(0) @binding(3) var<storage, read_write> info: array<u32>;
var<immediate> params: Params;

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(subgroup_size) sg_size: u32) {
    let i = gid.x;
    var v = 0.0;
    if i < params.n {
        v = params.alpha * x[i] + y[i];
        y[i] = v;
    }
    let total = subgroupAdd(v);
    if i < params.n {
        sums[i] = total;
    }
    if i == 0u {
        info[0] = sg_size;
    }
}
