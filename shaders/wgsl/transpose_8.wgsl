// The transposing case of repack.wgsl for 8-bit elements, through workgroup memory: source
// lines are adjacent bytes (src_line == 1) and rows of the source (src_elem apart) and batches
// (src_batch apart) start on whole words. Writes, zero everywhere else,
//   dst[b * dst_batch + line * ld + e] = src[b * src_batch + line + e * src_elem]
// for b < batch, line < lines, e < len, over all `dst_batch / ld` lines of `ld` elements (`ld` a
// whole number of 16-byte vectors). Each workgroup moves a 64 x 64 byte tile: reads of 16 words
// per source row and writes of 16-byte vectors per destination line are both coalesced (the
// element-wise copy reads a word per element and ran at a seventh of the memory bandwidth).
// Dispatch: (ceil(dst lines / 64), ceil(ld / 64), batch) workgroups.
{{REPACK_PARAMS}}

// 64 destination lines of 16 words, one word of padding per line against bank conflicts.
const PITCH: u32 = 17u;
var<workgroup> tile: array<u32, 1088>;

@compute @workgroup_size(256)
fn main(@builtin(workgroup_id) wg: vec3<u32>, @builtin(local_invocation_index) t: u32) {
    let l0 = wg.x * 64u;
    let e0 = wg.y * 64u;
    let b = wg.z;
    // Read a 4 x 4 byte block: source rows e0 + 4 ty .. + 3, destination lines l0 + 4 tx .. + 3.
    let tx = t % 16u;
    let ty = t / 16u;
    let line = l0 + tx * 4u;
    let src_words = arrayLength(&src);
    var w = array<u32, 4>(0u, 0u, 0u, 0u);
    for (var j = 0u; j < 4u; j++) {
        let e = e0 + ty * 4u + j;
        if e < p.len && line < p.lines {
            let s = (b * p.src_batch + e * p.src_elem + line) / 4u;
            var v = 0u;
            if s < src_words {
                v = src[s];
            }
            let valid = p.lines - line;
            if valid < 4u {
                v &= (1u << (valid * 8u)) - 1u;
            }
            w[j] = v;
        }
    }
    // Byte j of word i of the transposed block is byte i of source word j.
    for (var i = 0u; i < 4u; i++) {
        let s = 8u * i;
        let o = ((w[0] >> s) & 0xffu) | (((w[1] >> s) & 0xffu) << 8u) | (((w[2] >> s) & 0xffu) << 16u) | (((w[3] >> s) & 0xffu) << 24u);
        tile[(tx * 4u + i) * PITCH + ty] = o;
    }
    workgroupBarrier();
    // Write 16 bytes: destination line l0 + t / 4, elements e0 + 16 (t % 4) .. + 15.
    let dl = l0 + t / 4u;
    let q = t % 4u;
    let e = e0 + q * 16u;
    if dl < p.dst_batch / p.ld && e < p.ld {
        let r = (t / 4u) * PITCH + q * 4u;
        dst[(b * p.dst_batch + dl * p.ld + e) / 16u] = vec4<u32>(tile[r], tile[r + 1u], tile[r + 2u], tile[r + 3u]);
    }
}
