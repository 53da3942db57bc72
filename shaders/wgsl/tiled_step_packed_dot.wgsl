// K step of `matmul_tiled.wgsl` for 8-bit inputs on devices with
// VK_KHR_shader_integer_dot_product: four K values of an A row and of a B column are packed into
// one 32-bit word (a single load when they are contiguous and aligned) and multiplied with
// {{DOT}}; results wrap like s32.

// Word i of B (from_b) or of A.
fn word(from_b: bool, i: u32) -> u32 {
    if from_b {
        return b[i];
    }
    return a[i];
}

// Elements k..k+3 of an A row or a B column (from_b) whose element 0 is at `base` and whose
// elements lie `stride` apart, zero past K.
fn pack(from_b: bool, base: u32, stride: u32, k: u32) -> u32 {
    let e = base + k * stride;
    if stride == 1u && (e & 3u) == 0u && k + 3u < p.k {
        return word(from_b, e >> 2u);
    }
    var w = 0u;
    for (var t = 0u; t < 4u; t++) {
        if k + t < p.k {
            let et = base + (k + t) * stride;
            w |= (byte_at(word(from_b, et >> 2u), et & 3u) & 0xffu) << (8u * t);
        }
    }
    return w;
}

fn dot4(x: u32, y: u32) -> i32 {
    return {{DOT}};
}
// K LOOP
    for (var kk = 0u; kk < p.k; kk += 4u) {
        let pa = vec4<u32>(pack(false, ar0, p.a_col, kk), pack(false, ar1, p.a_col, kk), pack(false, ar2, p.a_col, kk), pack(false, ar3, p.a_col, kk));
        let pb = vec4<u32>(pack(true, bc0, p.b_row, kk), pack(true, bc1, p.b_row, kk), pack(true, bc2, p.b_row, kk), pack(true, bc3, p.b_row, kk));
        for (var r = 0u; r < 4u; r++) {
            acc[r] += vec4<i32>(dot4(pa[r], pb.x), dot4(pa[r], pb.y), dot4(pa[r], pb.z), dot4(pa[r], pb.w));
        }
    }
