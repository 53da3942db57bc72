// K step of `matmul_tiled.wgsl` for 8-bit inputs on devices with
// VK_KHR_shader_integer_dot_product: four K values of an A row and of a B column are packed into
// one 32-bit word (a single load when they are contiguous and aligned) and multiplied with
// {{DOT}}; results wrap like s32.

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
            w |= (byte_at(a[et >> 2u], et & 3u) & 0xffu) << (8u * t);
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
            w |= (byte_at(b[et >> 2u], et & 3u) & 0xffu) << (8u * t);
        }
    }
    return w;
}

fn dot4(x: u32, y: u32) -> i32 {
    return {{DOT}};
}
// K LOOP
    for (var kk = 0u; kk < p.k; kk += 4u) {
        let pa = vec4<u32>(pack_a(ar0, kk), pack_a(ar1, kk), pack_a(ar2, kk), pack_a(ar3, kk));
        let pb = vec4<u32>(pack_b(bc0, kk), pack_b(bc1, kk), pack_b(bc2, kk), pack_b(bc3, kk));
        for (var r = 0u; r < 4u; r++) {
            acc[r] += vec4<i32>(dot4(pa[r], pb.x), dot4(pa[r], pb.y), dot4(pa[r], pb.z), dot4(pa[r], pb.w));
        }
    }
