// The non-transposing case of repack.wgsl, 16 bytes at a time: source lines hold their elements
// contiguously (src_elem == 1) at any element offset. Writes, zero everywhere else,
//   dst[b * dst_batch + line * ld + e] = src[b * src_batch + line * src_line + e]
// for b < batch, line < lines, e < len, over all `dst_batch / ld` lines of `ld` elements of
// {{BITS}} bits (`ld` a whole number of 16-byte vectors). Each invocation assembles one 16-byte
// vector of a destination line from the (up to five) source words that cover it, so that
// neighbouring invocations read neighbouring words (the element-wise copy reads one word per
// element).
{{REPACK_PARAMS}}

const BYTES: u32 = {{BITS}}u / 8u;
// Elements per 16-byte vector.
const PER_VEC: u32 = 16u / BYTES;

fn word(i: u32, n: u32) -> u32 {
    if i < n {
        return src[i];
    }
    return 0u;
}

// A grid-stride loop over the destination's vectors.
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * 256u;
    let vecs_per_line = p.ld / PER_VEC;
    let lines = p.dst_batch / p.ld;
    let total = p.batch * lines * vecs_per_line;
    let n = arrayLength(&src);
    for (var v = gid.x; v < total; v += stride) {
        let q = v % vecs_per_line;
        let rest = v / vecs_per_line;
        let line = rest % lines;
        let b = rest / lines;
        let e0 = q * PER_VEC;
        var out = vec4<u32>(0u);
        if line < p.lines && e0 < p.len {
            // Source bytes [start, start + 16) with start = byte offset of element e0.
            let start = (b * p.src_batch + line * p.src_line + e0) * BYTES;
            let w0 = start / 4u;
            let shift = (start % 4u) * 8u;
            var w = array<u32, 5>(word(w0, n), word(w0 + 1u, n), word(w0 + 2u, n), word(w0 + 3u, n), 0u);
            if shift != 0u {
                w[4] = word(w0 + 4u, n);
            }
            var o = array<u32, 4>(0u, 0u, 0u, 0u);
            for (var i = 0u; i < 4u; i++) {
                o[i] = select((w[i] >> shift) | (w[i + 1u] << (32u - shift)), w[i], shift == 0u);
            }
            // Zero the elements at and after the end of the line.
            let valid = min(p.len - e0, PER_VEC) * BYTES;
            for (var i = 0u; i < 4u; i++) {
                let have = select(0u, valid - 4u * i, valid > 4u * i);
                if have < 4u {
                    o[i] &= (1u << (have * 8u)) - 1u;
                }
            }
            out = vec4<u32>(o[0], o[1], o[2], o[3]);
        }
        dst[(b * p.dst_batch + line * p.ld) / PER_VEC + q] = out;
    }
}
