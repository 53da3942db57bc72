//! The general cooperative-matrix kernel: its candidate configurations for a device, the
//! operand layout it reads a problem in, and the plan of one configuration. Choosing among the
//! configurations (with the wide-tile kernel's) is the planner's (`super::planner`).
//!
//! The kernels (`shaders/glsl/coop_gemm.comp`, one SPIR-V module per kernel family and tile
//! configuration, see `matbridge_shaders::COOP_CONFIGS`) are written against
//! SPV_NV_cooperative_matrix and translated by matbridge's own translator for the device at first
//! use, so the device's capability struct decides what runs: a configuration is a candidate only
//! when the device lists its MMA shape (16x16 or 16x8 by 16 for f16 or bf16 with f32 or f16
//! accumulators, by 32 for s8 -> s32 and u8 -> u32), has the shared memory and invocations it
//! declares. The kernel loads 16-byte vectors: an operand whose contiguous dimension, leading
//! dimension and batch stride are not whole vectors (odd K or N, odd leading dimensions, no
//! contiguous dimension at all) is first copied by `repack.wgsl` into zero-padded lines of whole
//! vectors, so every problem takes this path.
//!
//! 8-bit B stored row-major (n contiguous) is transposed into k-contiguous shared-memory lines
//! while it is staged (8-bit fragments load much faster so).
//!
//! 16-bit outputs are written by the kernel itself as packed pairs when C's rows are contiguous
//! and even in length, stride and batch stride; otherwise through the f32 scratch buffer and the
//! packing epilogue.

use super::family::{coop_tile, Family, GROUP_M};
use super::gpu::Gpu;
use super::plan::{Plan, Repack, Slot};
use super::{DType, MatmulDesc, MatmulPath, Resolved, Strides};
use crate::error::Result;
use matbridge_runtime::SpecConstant;
use matbridge_shaders::{CoopConfig, COOP_CONFIGS};

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct CoopParams {
    m: u32,
    n: u32,
    k: u32,
    batch: u32,
    a_ld: u32,
    a_batch: u32,
    b_ld: u32,
    b_batch: u32,
    c: [u32; 3],
    alpha: f32,
    beta: f32,
    group_m: u32,
}

/// (column-major?, leading dimension) of an operand whose op() is rows x cols, when one of its
/// dimensions is contiguous and vector-aligned.
pub(super) fn vector_layout(s: &Strides, rows: usize, cols: usize, vec: usize) -> Option<(bool, usize)> {
    let ok = |ld: usize, extent: usize| ld.is_multiple_of(vec) && s.batch.is_multiple_of(vec) && extent.is_multiple_of(vec);
    if s.col == 1 && ok(s.row, cols) {
        Some((false, s.row))
    } else if s.row == 1 && ok(s.col, rows) {
        Some((true, s.col))
    } else {
        None
    }
}

/// The configurations of `family` this device can run, for operands stored as `layout` (A
/// column-major?, B k-contiguous?) or, without one, for some layout.
pub(super) fn candidates(gpu: &Gpu, family: &Family, layout: Option<(bool, bool)>) -> Vec<&'static CoopConfig> {
    let caps = gpu.ctx.caps();
    let shared = |c: &CoopConfig| match layout {
        // 8-bit B always sits k-contiguous in shared memory (transposed while staged).
        Some((a_cm, b_cm)) => c.shared_bytes(family.vec, a_cm, b_cm || family.eight_bit()),
        None => c.min_shared_bytes(family.vec),
    };
    COOP_CONFIGS
        .iter()
        .filter(|c| c.families.contains(&family.name))
        .filter(|c| caps.find_coop_shape(16, c.ln, family.k, [family.ab, family.ab, family.acc, family.acc], false).is_some())
        .filter(|c| shared(c) <= caps.limits.max_shared_memory_size && c.threads() <= caps.limits.max_workgroup_invocations)
        .collect()
}

/// How the kernel writes C (specialization constant `OUT_MODE`).
#[derive(Clone, Copy, PartialEq, Eq, Debug)]
enum OutMode {
    /// 32-bit words: f32 or s32 results, or the f32 scratch of the packing epilogue.
    Words,
    /// Pairs of f16 (1) or bf16 (2) packed into 32-bit words of C.
    Pairs(u32),
}

fn out_mode(desc: &MatmulDesc, c: &Strides) -> OutMode {
    let code = match desc.out {
        DType::F16 => 1,
        DType::Bf16 => 2,
        _ => return OutMode::Words,
    };
    let even = |v: usize| v.is_multiple_of(2);
    if c.col == 1 && even(c.row) && (desc.batch == 1 || even(c.batch)) && even(desc.n) {
        OutMode::Pairs(code)
    } else {
        OutMode::Words
    }
}

/// Operand addressing the kernel is specialised for: each operand as stored when one of its
/// dimensions is contiguous and vector-aligned, else a copy (in the stored order, 8-bit operands
/// K-contiguous; see `Gpu::push_repack` for the copy kernels), each line padded with zeros to
/// whole vectors, or both operands padded to whole tiles (see [`PAD_LINES`]). Large 8-bit
/// problems also have operands that are not K-contiguous copied K-contiguous
/// ([`TRANSPOSE_MIN_MACS`]).
pub(super) struct Layout {
    /// A stored m-contiguous (else k-contiguous); its leading dimension and batch stride.
    pub(super) a_cm: bool,
    pub(super) a_ld: usize,
    pub(super) a_batch: usize,
    /// B stored k-contiguous (else n-contiguous); its leading dimension and batch stride.
    pub(super) b_colmajor: bool,
    pub(super) b_ld: usize,
    pub(super) b_batch: usize,
    pub(super) a_repack: Option<Repack>,
    pub(super) b_repack: Option<Repack>,
    /// Both operands copied with whole tiles of zeros around them (`PAD_LINES`, `PAD_K`): the
    /// kernel then runs without bounds checks over this K.
    pub(super) padded_k: Option<usize>,
    /// 8-bit operands that are not K-contiguous are copied K-contiguous.
    pub(super) transposed: bool,
}

/// Large problems whose operands are not vector-aligned, and large 8-bit problems that some tile
/// does not divide, have both operands copied and padded with zeros to multiples of these (every
/// configuration's BM and BN divide `PAD_LINES`, every BK divides `PAD_K`), so that the kernel
/// runs without bounds checks. On the H100, with the same (then slower) copy kernel, 4095^3
/// f16->f32 took 0.82 ms copied to whole vectors and run with checks, 0.77 ms padded to whole
/// tiles; 4096x4096x4000 s8 took 0.54 ms read as stored with checks and 0.41 ms padded. Aligned
/// 16-bit operands are not copied for padding alone: their copies (~0.1 ms per 4096^2 pair) cost
/// about twice what the checks saved there (with `copy_rows.wgsl` a 4096^2 pair still costs ~0.08 ms
/// against the ~0.05 ms the checks take).
const PAD_LINES: usize = 256;
const PAD_K: usize = 128;

/// Problems of at least this many multiply-adds are padded (the copies then cost a few percent).
const PAD_MIN_MACS: usize = 1 << 30;

/// 8-bit problems of at least this many multiply-adds have an operand that is not K-contiguous
/// copied K-contiguous even when the kernel could read it as stored (transposing it while
/// staging). On the H100 the kernel takes 0.404 ms for 4096^3 s8 with row-major B and 0.291 ms
/// with B k-contiguous, and `transpose_8.wgsl` copies a 4096^2 operand in about 0.02 ms.
const TRANSPOSE_MIN_MACS: usize = 1 << 30;

impl Layout {
    pub(super) fn for_problem(desc: &MatmulDesc, r: &Resolved, family: &Family) -> Layout {
        let vec = family.vec as usize;
        let aligned = vector_layout(&r.a, desc.m, desc.k, vec).is_some() && vector_layout(&r.b, desc.k, desc.n, vec).is_some();
        let tiled = desc.m.is_multiple_of(PAD_LINES) && desc.n.is_multiple_of(PAD_LINES) && desc.k.is_multiple_of(PAD_K);
        let macs = desc.m.saturating_mul(desc.n).saturating_mul(desc.k);
        let eight_bit = family.eight_bit();
        // 8-bit GEMMs run fastest with both operands K-contiguous.
        let transpose = eight_bit && macs >= TRANSPOSE_MIN_MACS && !(r.a.col == 1 && r.b.row == 1);
        // Aligned 16-bit operands are read as stored, with bounds checks where no tile divides
        // the problem (copying them may cost as much as the checks); 8-bit ones are padded.
        let pad = macs >= PAD_MIN_MACS && (!aligned || (eight_bit && !tiled));
        Layout::with_padding(desc, r, family, pad, transpose)
    }

    /// The layout with both operands copied into whole tiles (`pad`) or only those that need it
    /// (the autotuner measures a capped problem with the full problem's choice).
    /// With `transpose`, 8-bit operands that are not K-contiguous are copied K-contiguous even
    /// when they could be read as stored.
    pub(super) fn with_padding(desc: &MatmulDesc, r: &Resolved, family: &Family, pad: bool, transpose: bool) -> Layout {
        let vec = family.vec as usize;
        let eight_bit = family.eight_bit();
        let a_stored = vector_layout(&r.a, desc.m, desc.k, vec);
        let b_stored = vector_layout(&r.b, desc.k, desc.n, vec);
        // Multiples the copies pad M, N (lines of whole tiles) and K to, or none but whole vectors.
        let (mn, kk) = if pad { (PAD_LINES, PAD_K) } else { (1, 1) };
        // A copy keeps the stored order (its reads are then coalesced), except that 8-bit
        // operands are copied K-contiguous, the order their fragments load fastest in (on the
        // H100, 4096x4096x4000 s8 with row-major B: 0.54 ms copied K-contiguous, 0.58 ms not,
        // with the element-wise copy; transpose_8.wgsl makes such copies since).
        let (copy_a, copy_b) = (pad || (transpose && r.a.col != 1), pad || (transpose && r.b.row != 1));
        let a = match a_stored.filter(|_| !copy_a) {
            Some((cm, ld)) => Operand { cm, ld, batch: r.a.batch, repack: None },
            None => Operand::copy(&r.a, desc.m, desc.k, eight_bit || r.a.row != 1, (mn, kk), vec, desc.batch),
        };
        let b = match b_stored.filter(|_| !copy_b) {
            Some((cm, ld)) => Operand { cm, ld, batch: r.b.batch, repack: None },
            None => Operand::copy(&r.b, desc.k, desc.n, !eight_bit && r.b.col == 1, (kk, mn), vec, desc.batch),
        };
        let padded_k = pad.then(|| desc.k.next_multiple_of(PAD_K));
        Layout { a_cm: a.cm, a_ld: a.ld, a_batch: a.batch, b_colmajor: b.cm, b_ld: b.ld, b_batch: b.batch, a_repack: a.repack, b_repack: b.repack, padded_k, transposed: transpose }
    }
}

/// One operand as the kernel reads it: column-major (for A m-contiguous, for B k-contiguous),
/// leading dimension and batch stride, and the copy that makes it, if any.
struct Operand {
    cm: bool,
    ld: usize,
    batch: usize,
    repack: Option<Repack>,
}

impl Operand {
    /// A copy of the operand whose op() is `rows` x `cols` (strides `s`), contiguous along its
    /// columns when `along_cols`; rows and columns are padded with zeros to multiples of `mult`
    /// and lines to whole vectors of `vec` elements. An operand shared by every batch (batch
    /// stride 0) is copied once.
    fn copy(s: &Strides, rows: usize, cols: usize, along_cols: bool, mult: (usize, usize), vec: usize, batch: usize) -> Operand {
        let (lines, len, dst_lines, ld, src_line, src_elem) = if along_cols {
            (rows, cols, rows.next_multiple_of(mult.0), cols.next_multiple_of(mult.1).next_multiple_of(vec), s.row, s.col)
        } else {
            (cols, rows, cols.next_multiple_of(mult.1), rows.next_multiple_of(mult.0).next_multiple_of(vec), s.col, s.row)
        };
        let batches = if s.batch == 0 { 1 } else { batch };
        let repack = Repack { lines, dst_lines, len, ld, batches, src_line, src_elem, src_batch: s.batch };
        Operand { cm: !along_cols, ld, batch: if s.batch == 0 { 0 } else { dst_lines * ld }, repack: Some(repack) }
    }
}

/// The plan of configuration `config` for `desc` with operands as `layout` says, or `None` when
/// the grid exceeds the device's workgroup counts.
pub(super) fn build(gpu: &Gpu, desc: &MatmulDesc, r: &Resolved, family: &Family, layout: &Layout, config: &CoopConfig) -> Result<Option<Plan>> {
    let caps = gpu.ctx.caps();
    let kernel = config.kernel(family.name);
    let mode = out_mode(desc, &r.c);
    let mode_code = match mode {
        OutMode::Words => 0,
        OutMode::Pairs(code) => code,
    };
    // Operands padded to whole tiles need no bounds checks (and K runs over the padding).
    let k = layout.padded_k.unwrap_or(desc.k);
    let edges = layout.padded_k.is_none() && !(desc.m.is_multiple_of(config.bm as usize) && desc.n.is_multiple_of(config.bn as usize) && desc.k.is_multiple_of(config.bk as usize));
    let spec = [SpecConstant::u32(0, layout.a_cm.into()), SpecConstant::u32(1, layout.b_colmajor.into()), SpecConstant::u32(2, mode_code), SpecConstant::u32(3, edges.into())];
    let pipeline = gpu.pipeline_translated(&kernel, 4, &spec, family.requests())?;
    let scratch_out = mode == OutMode::Words && matches!(desc.out, DType::F16 | DType::Bf16);
    let params = CoopParams {
        m: desc.m as u32,
        n: desc.n as u32,
        k: k as u32,
        batch: desc.batch as u32,
        a_ld: layout.a_ld as u32,
        a_batch: layout.a_batch as u32,
        b_ld: layout.b_ld as u32,
        b_batch: layout.b_batch as u32,
        c: [r.c.row as u32, r.c.col as u32, r.c.batch as u32],
        alpha: desc.alpha,
        beta: if scratch_out { 0.0 } else { desc.beta },
        group_m: GROUP_M,
    };
    let max = caps.limits.max_workgroup_count;
    let groups = [params.n.div_ceil(config.bn), params.m.div_ceil(config.bm), params.batch];
    if (0..3).any(|i| groups[i] > max[i]) {
        return Ok(None);
    }
    let shape = family.shape(config.ln);
    let stages = match (config.stages_a(), config.stages) {
        (1, 1) => "1 stage".to_string(),
        (a, b) if a == b => format!("{a} stages"),
        (a, b) => format!("{a} A / {b} B stages"),
    };
    let steps = format!("{stages}, {} K step{} prefetched", config.prefetch, if config.prefetch > 1 { "s" } else { "" });
    let tile = coop_tile(&kernel, config.label(), [config.bm, config.bn, config.bk], [config.warps_m, config.warps_n], steps);
    let mut plan = Plan::new(MatmulPath::CooperativeMatrix { shape, tile });
    let bits = 128 / family.vec;
    let a = match &layout.a_repack {
        Some(repack) => plan.push_repack(gpu, Slot::A, bits, repack)?,
        None => Slot::A,
    };
    let b = match &layout.b_repack {
        Some(repack) => plan.push_repack(gpu, Slot::B, bits, repack)?,
        None => Slot::B,
    };
    if mode == OutMode::Words {
        plan.push_gemm(gpu, pipeline, bytemuck::bytes_of(&params), groups, [a, b], desc, r)?;
    } else {
        let params = plan.own(gpu.params_buffer(bytemuck::bytes_of(&params))?);
        plan.step(pipeline, vec![a, b, Slot::C, params], groups);
    }
    Ok(Some(plan))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matmul::family::family_for;
    use crate::matmul::{AccType, Operand as Op};

    fn layout(m: usize, n: usize, k: usize, dtype: DType, acc: AccType, b: Op) -> Layout {
        let mut desc = MatmulDesc::new(m, n, k, dtype);
        desc.acc = acc;
        desc.b = b;
        let r = desc.resolve().unwrap();
        Layout::for_problem(&desc, &r, &family_for(&desc).unwrap())
    }

    #[test]
    fn aligned_tiled_problems_are_read_as_stored() {
        let l = layout(4096, 4096, 4096, DType::F16, AccType::F32, Op::row_major());
        assert!(l.a_repack.is_none() && l.b_repack.is_none() && l.padded_k.is_none());
        assert!(!l.a_cm && !l.b_colmajor && l.a_ld == 4096 && l.b_ld == 4096);
        // 8-bit with row-major B below the transposing threshold: the kernel transposes B itself.
        let l = layout(512, 512, 512, DType::S8, AccType::S32, Op::row_major());
        assert!(l.a_repack.is_none() && l.b_repack.is_none() && !l.b_colmajor);
        // Aligned 16-bit operands that no tile divides: as stored (the kernel checks bounds).
        let l = layout(3000, 3000, 3000, DType::Bf16, AccType::F32, Op::row_major());
        assert!(l.a_repack.is_none() && l.b_repack.is_none() && l.padded_k.is_none());
    }

    #[test]
    fn unaligned_small_problems_copy_only_what_needs_it_into_whole_vectors() {
        // K = N = 1000 are not whole numbers of 16 8-bit elements: both copied K-contiguous.
        let l = layout(1000, 1000, 1000, DType::S8, AccType::S32, Op::row_major());
        assert!(l.padded_k.is_none() && !l.a_cm && l.b_colmajor && l.a_ld == 1008 && l.b_ld == 1008);
        let b = l.b_repack.unwrap();
        assert_eq!((b.lines, b.dst_lines, b.len, b.src_line, b.src_elem), (1000, 1000, 1000, 1, 1000));
        // Row-major B with N = 1024 is read as stored.
        let l = layout(1000, 1024, 1000, DType::S8, AccType::S32, Op::row_major());
        assert!(l.a_repack.is_some() && l.b_repack.is_none() && !l.b_colmajor);
        // f16 with only N odd: A as stored, B copied N-contiguous.
        let l = layout(64, 33, 64, DType::F16, AccType::F32, Op::row_major());
        assert!(l.a_repack.is_none() && !l.b_colmajor && l.b_ld == 40);
    }

    #[test]
    fn large_problems_are_padded_to_whole_tiles() {
        let l = layout(4095, 4095, 4095, DType::F16, AccType::F32, Op::row_major());
        assert_eq!(l.padded_k, Some(4096));
        let (a, b) = (l.a_repack.unwrap(), l.b_repack.unwrap());
        assert_eq!((a.dst_lines, a.ld, b.dst_lines, b.ld), (4096, 4096, 4096, 4096));
        // Aligned 8-bit operands that no tile divides are padded too.
        let l = layout(4000, 4000, 4000, DType::S8, AccType::S32, Op::row_major().transposed());
        assert_eq!(l.padded_k, Some(4096));
        // 8-bit with row-major B above the threshold, tiled: B alone copied K-contiguous,
        // unpadded (A is K-contiguous already).
        let l = layout(8192, 8192, 8192, DType::U8, AccType::S32, Op::row_major());
        assert!(l.padded_k.is_none() && l.a_repack.is_none() && !l.a_cm && l.b_colmajor);
        let b = l.b_repack.unwrap();
        assert_eq!((b.lines, b.dst_lines, b.len, b.ld, b.src_line, b.src_elem), (8192, 8192, 8192, 8192, 1, 8192));
        // Not tiled: both padded, B K-contiguous.
        let l = layout(4000, 4000, 4000, DType::S8, AccType::S32, Op::row_major());
        assert!(l.padded_k == Some(4096) && !l.a_cm && l.b_colmajor);
        // Column-major A above the threshold: A copied K-contiguous too.
        let mut desc = MatmulDesc::new(2048, 2048, 2048, DType::S8);
        desc.acc = AccType::S32;
        desc.a = Op::column_major();
        let r = desc.resolve().unwrap();
        let l = Layout::for_problem(&desc, &r, &family_for(&desc).unwrap());
        assert!(!l.a_cm && l.a_repack.is_some() && l.b_colmajor && l.padded_k.is_none());
    }
}
