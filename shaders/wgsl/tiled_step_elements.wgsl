// K step of `matmul_tiled.wgsl`, one element at a time ({{LOAD_A}} unpacks element `e`).
fn load_a(e: u32) -> {{ACC}} {
    return {{LOAD_A}};
}

fn load_b(e: u32) -> {{ACC}} {
    return {{LOAD_B}};
}
// K LOOP
    for (var kk = 0u; kk < p.k; kk++) {
        let ak = kk * p.a_col;
        let av = vec4<{{ACC}}>(load_a(ar0 + ak), load_a(ar1 + ak), load_a(ar2 + ak), load_a(ar3 + ak));
        let bk = kk * p.b_row;
        let bv = vec4<{{ACC}}>(load_b(bc0 + bk), load_b(bc1 + bk), load_b(bc2 + bk), load_b(bc3 + bk));
        acc[0] += av.x * bv;
        acc[1] += av.y * bv;
        acc[2] += av.z * bv;
        acc[3] += av.w * bv;
    }
