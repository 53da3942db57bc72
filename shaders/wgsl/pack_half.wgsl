// Epilogue for 16-bit outputs: out (packed {{DTYPE}} pairs) = round(scratch + beta * out) for
// every element of C, leaving padding elements (leading-dimension gaps) untouched. One
// invocation per 32-bit word; C is row- or column-major with the strides below.
struct Params {
    m: u32, n: u32, batch: u32, words: u32,
    c_row: u32, c_col: u32, c_batch: u32,
    beta: f32,
}

@group(0) @binding(0) var<storage, read> scratch: array<f32>;
@group(0) @binding(1) var<storage, read_write> out: array<u32>;
@group(0) @binding(2) var<storage, read> p: Params;

fn is_element(e: u32) -> bool {
    let bt = e / p.c_batch;
    let rem = e % p.c_batch;
    if bt >= p.batch {
        return false;
    }
    // Both strides 1: a single row (column-major, ld 1) or a single column (row-major, ld 1),
    // stored contiguously.
    if p.c_row == 1u && p.c_col == 1u {
        return rem < p.m * p.n;
    }
    if p.c_col == 1u {
        return rem / p.c_row < p.m && rem % p.c_row < p.n;
    }
    return rem % p.c_col < p.m && rem / p.c_col < p.n;
}

fn to_half(x: f32) -> u32 {
    {{TO_HALF}}
}

fn from_half(h: u32) -> f32 {
    {{FROM_HALF}}
}

@compute @workgroup_size(64)
fn main(@builtin(global_invocation_id) gid: vec3<u32>) {
    let w = gid.x + gid.y * 65535u * 64u;
    if w >= p.words {
        return;
    }
    let old = out[w];
    var halves = vec2<u32>(old & 0xffffu, old >> 16u);
    for (var h = 0u; h < 2u; h++) {
        let e = 2u * w + h;
        if is_element(e) {
            var v = scratch[e];
            if p.beta != 0.0 {
                v += p.beta * from_half(halves[h]);
            }
            halves[h] = to_half(v);
        }
    }
    out[w] = halves.x | (halves.y << 16u);
}
