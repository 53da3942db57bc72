//! The operand copies that feed the cooperative-matrix GEMM: what a copy does ([`Repack`]) and
//! which of the built-in copy kernels (`matbridge_shaders`: `repack_*`, `copy_rows_*`,
//! `transpose_8`) makes it with which grid. Public so that the kernels' contract can be tested
//! on devices directly.

/// The workgroups of `transpose_8.wgsl` for `repack`, when that kernel applies: an 8-bit copy
/// that transposes (adjacent source lines), whose source rows and batches start on whole words
/// and whose grid fits the device's workgroup counts.
pub fn transpose_groups(bits: u32, repack: &Repack, max_groups: [u32; 3]) -> Option<[u32; 3]> {
    let words_apart = |stride: usize| stride.is_multiple_of(4);
    let batched = repack.batches > 1;
    if bits != 8 || !repack.ld.is_multiple_of(16) || repack.src_line != 1 || repack.src_elem == 1 || !words_apart(repack.src_elem) || (batched && !words_apart(repack.src_batch)) {
        return None;
    }
    let groups = [repack.dst_lines.div_ceil(64), repack.ld.div_ceil(64), repack.batches];
    let fits = groups.iter().zip(max_groups).all(|(&g, max)| g <= max as usize);
    fits.then(|| groups.map(|g| g as u32))
}

/// Whether `copy_rows.wgsl` makes `repack`: source lines hold their elements contiguously and
/// destination lines are whole 16-byte vectors.
pub fn copies_rows(bits: u32, repack: &Repack) -> bool {
    let per_vec = (128 / bits) as usize;
    (bits == 8 || bits == 16) && repack.src_elem == 1 && repack.ld.is_multiple_of(per_vec)
}

/// An operand copied, before the GEMM, into `batches` x `dst_lines` lines of `ld` elements
/// holding elements `0..len` of source lines `0..lines` (zeros elsewhere): element e of line l of
/// batch b comes from `b * src_batch + l * src_line + e * src_elem`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Repack {
    pub lines: usize,
    pub dst_lines: usize,
    pub len: usize,
    pub ld: usize,
    pub batches: usize,
    pub src_line: usize,
    pub src_elem: usize,
    pub src_batch: usize,
}
