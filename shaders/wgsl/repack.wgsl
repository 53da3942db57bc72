// Copies a strided matrix of {{BITS}}-bit elements into lines of `ld` elements each (`ld` a
// whole number of 32-bit words, `dst_batch / ld` lines per batch), zero everywhere except
//   dst[b * dst_batch + line * ld + e] = src[b * src_batch + line * src_line + e * src_elem]
// for b < batch, line < lines, e < len. The cooperative-matrix GEMM runs on such copies when an
// operand has no 16-byte-aligned contiguous dimension, or padded to whole tiles.
{{REPACK_PARAMS}}

// With `lines_fastest` (source lines adjacent: a transposing copy), consecutive invocations take
// consecutive lines, so that their reads are coalesced; each writes 16 bytes of its line (the
// destination leading dimension is a whole number of 16-byte vectors).

const BITS: u32 = {{BITS}}u;
const PER_WORD: u32 = 32u / BITS;
const MASK: u32 = (1u << BITS) - 1u;

// A grid-stride loop: few, full workgroups (one word per invocation launched 65536 tiny
// workgroups for a 16 MB operand and ran at a tenth of the memory bandwidth).
@compute @workgroup_size(256)
fn main(@builtin(global_invocation_id) gid: vec3<u32>, @builtin(num_workgroups) groups: vec3<u32>) {
    let stride = groups.x * 256u;
    // A transposing copy writes four consecutive words (16 bytes) of a line per invocation.
    let span = select(1u, 4u, p.lines_fastest != 0u);
    for (var i = gid.x; i < p.words / span; i += stride) {
        // First destination word w: batch b, line, first element e0 of the word in its line.
        var w = i;
        var b = 0u;
        var line = 0u;
        var e0 = 0u;
        if p.lines_fastest != 0u {
            let lines_per_batch = p.dst_batch / p.ld;
            let spans_per_line = p.ld / (PER_WORD * 4u);
            line = i % lines_per_batch;
            let rest = i / lines_per_batch;
            b = rest / spans_per_line;
            e0 = (rest % spans_per_line) * PER_WORD * 4u;
            w = (b * p.dst_batch + line * p.ld + e0) / PER_WORD;
        } else {
            let d = i * PER_WORD;
            b = d / p.dst_batch;
            let rem = d % p.dst_batch;
            line = rem / p.ld;
            e0 = rem % p.ld;
        }
        for (var q = 0u; q < span; q++) {
            var word = 0u;
            for (var t = 0u; t < PER_WORD; t++) {
                let e = e0 + q * PER_WORD + t;
                if e < p.len && line < p.lines {
                    let s = b * p.src_batch + line * p.src_line + e * p.src_elem;
                    word |= ((src[s / PER_WORD] >> ((s % PER_WORD) * BITS)) & MASK) << (t * BITS);
                }
            }
            dst[w + q] = word;
        }
    }
}
