//! The wide-tile cooperative-matrix kernel (`shaders/glsl/coop_gemm_wide.comp`, one module per
//! `matbridge_shaders::WIDE_CONFIGS` entry and family): the lean GEMM for problems that fill
//! whole tiles in a plain layout. It joins the autotuner's candidates beside the general kernel's
//! configurations when a problem [`fits`] it:
//! - f16 -> f16 with f16 accumulators, f16 / bf16 -> f32 with f32 accumulators, f16 -> f16
//!   rounded from f32 accumulators, or s8 / u8 -> s32;
//! - `C = A * B` (alpha 1, beta 0);
//! - A stored k-contiguous, 16-bit B n-contiguous and 8-bit B k-contiguous (as stored, or as the
//!   general path's K-contiguous copy of a large problem's row-major B), C n-contiguous, every
//!   leading dimension and batch stride a whole number of 16-byte vectors;
//! - the tile divides M, N and K.
//!
//! Its pipelines are specialised to K and the three leading dimensions (compiled on first use of
//! each such combination and kept, like every pipeline, for the context's lifetime and in the
//! on-disk pipeline cache; M, N and the batch do not make new pipelines), so that the driver folds
//! every operand load's offset into the instruction.

use super::family::{coop_tile, Family, GROUP_M};
use super::gpu::Gpu;
use super::plan::{Plan, Repack, Slot};
use super::{DType, MatmulDesc, MatmulPath, Resolved, Strides};
use crate::error::Result;
use matbridge_runtime::SpecConstant;
use matbridge_shaders::{WideConfig, WIDE_CONFIGS};
use matbridge_translator::profile::ComponentType as T;

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct WideParams {
    a_batch: u32,
    b_batch: u32,
    c_batch: u32,
    group_m: u32,
}

/// The configurations of `family` this device can run (its MMA shape listed, shared memory and
/// invocations within its limits).
pub(super) fn candidates(gpu: &Gpu, family: &Family) -> Vec<&'static WideConfig> {
    let caps = gpu.ctx.caps();
    if caps.find_coop_shape(16, 16, family.k, [family.ab, family.ab, family.acc, family.acc], false).is_none() {
        return Vec::new();
    }
    WIDE_CONFIGS
        .iter()
        .filter(|c| c.families.contains(&family.name))
        .filter(|c| c.shared_bytes(family.vec) <= caps.limits.max_shared_memory_size && c.threads() <= caps.limits.max_workgroup_invocations)
        .collect()
}

/// Whether `config` computes `desc` (with strides `r`) exactly as stored: see the module docs.
pub(super) fn fits(desc: &MatmulDesc, r: &Resolved, family: &Family, config: &WideConfig) -> bool {
    let out_ok = match family.acc {
        T::F16 => desc.out == DType::F16,
        // f16 output from f32 accumulators only for f16 inputs (see the kernel's OUT_F16).
        T::F32 => desc.out == DType::F32 || (desc.out == DType::F16 && family.ab == T::F16),
        T::S32 | T::U32 => desc.out == DType::S32,
        _ => false,
    };
    // Elements per 16-byte vector of the inputs and of C.
    let (vec, c_vec) = (family.vec as usize, 16 / desc.out.size());
    let batch_ok = |s: &Strides, vec: usize| desc.batch == 1 || s.batch.is_multiple_of(vec);
    let rows_ok = |s: &Strides, vec: usize| s.col == 1 && s.row.is_multiple_of(vec) && batch_ok(s, vec);
    // 16-bit B n-contiguous; 8-bit B k-contiguous.
    let b_ok = if vec == 16 { r.b.row == 1 && r.b.col.is_multiple_of(vec) && batch_ok(&r.b, vec) } else { rows_ok(&r.b, vec) };
    let small = |v: usize| u32::try_from(v).is_ok();
    out_ok
        && desc.alpha == 1.0
        && desc.beta == 0.0
        && desc.k > 0
        && desc.m.is_multiple_of(config.bm as usize)
        && desc.n.is_multiple_of(config.bn as usize)
        && desc.k.is_multiple_of(config.bk as usize)
        && rows_ok(&r.a, vec)
        && b_ok
        && rows_ok(&r.c, c_vec)
        && [r.a.len, r.b.len, r.c.len, desc.k, r.a.row, b_ld(r, family), r.c.row].into_iter().all(small)
}

/// B's leading dimension as the kernel reads it (n-contiguous 16-bit rows, k-contiguous 8-bit lines).
fn b_ld(r: &Resolved, family: &Family) -> usize {
    if family.vec == 16 {
        r.b.col
    } else {
        r.b.row
    }
}

/// The plan for `desc` with `config`, or `None` when the problem does not fit it or the grid
/// exceeds the device's limits. `r` holds the strides the kernel reads; with `b_copy`, B is first
/// copied so (`r.b` then describes the copy).
pub(super) fn build(gpu: &Gpu, desc: &MatmulDesc, r: &Resolved, family: &Family, config: &WideConfig, b_copy: Option<&Repack>) -> Result<Option<Plan>> {
    if !fits(desc, r, family, config) {
        return Ok(None);
    }
    let caps = gpu.ctx.caps();
    let groups = [(desc.n / config.bn as usize) as u32, (desc.m / config.bm as usize) as u32, desc.batch as u32];
    if (0..3).any(|i| groups[i] > caps.limits.max_workgroup_count[i]) {
        return Ok(None);
    }
    let rounded = family.acc == T::F32 && desc.out == DType::F16;
    let kernel = format!("{}{}", config.kernel(family.name), if rounded { "_h" } else { "" });
    let fixed = [desc.k, r.a.row, b_ld(r, family), r.c.row].map(|v| v as u32);
    let spec: Vec<SpecConstant> = fixed.iter().enumerate().map(|(id, &v)| SpecConstant::u32(id as u32, v)).collect();
    let pipeline = gpu.pipeline_translated(&kernel, 4, &spec, family.requests())?;
    // Rasterised in groups of tile rows like the general kernel (on the H100, 8 rows rather than 1
    // saved 2-3 % at 8192^3).
    let params = WideParams { a_batch: r.a.batch as u32, b_batch: r.b.batch as u32, c_batch: r.c.batch as u32, group_m: GROUP_M };
    let shape = family.shape(16);
    let tile = coop_tile(&kernel, config.label(), [config.bm, config.bn, config.bk], [config.warps_m, config.warps_n], "wide tile, K and strides fixed".into());
    let mut plan = Plan::new(MatmulPath::CooperativeMatrix { shape, tile });
    let b = match b_copy {
        Some(copy) => plan.push_repack(gpu, Slot::B, 128 / family.vec, copy)?,
        None => Slot::B,
    };
    let params = plan.own(gpu.params_buffer(bytemuck::bytes_of(&params))?);
    plan.step(pipeline, vec![Slot::A, b, Slot::C, params], groups);
    Ok(Some(plan))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::matmul::{AccType, Operand};

    fn family(dtype: DType, acc: AccType) -> Family {
        let mut d = MatmulDesc::new(1, 1, 1, dtype);
        d.acc = acc;
        super::super::family::family_for(&d).unwrap()
    }

    #[test]
    fn only_whole_tiles_of_plain_products_in_the_stored_layout_fit() {
        let wide16 = WIDE_CONFIGS.iter().find(|c| c.families.contains(&"f16_f16")).unwrap();
        let f16 = family(DType::F16, AccType::F16);
        let base = {
            let mut d = MatmulDesc::new(512, 512, 256, DType::F16);
            d.acc = AccType::F16;
            d.out = DType::F16;
            d
        };
        let fits_desc = |d: &MatmulDesc| fits(d, &d.resolve().unwrap(), &f16, wide16);
        assert!(fits_desc(&base));
        let mut batched = base.clone();
        batched.batch = 3;
        assert!(fits_desc(&batched));
        type Change = fn(&mut MatmulDesc);
        let cases: [(&str, Change); 9] = [
            ("M not a whole tile", |d| d.m = 500),
            ("K not a whole step", |d| d.k = 250),
            ("alpha", |d| d.alpha = 2.0),
            ("beta", |d| d.beta = 1.0),
            ("f32 output", |d| d.out = DType::F32),
            ("A m-contiguous", |d| d.a = Operand::column_major()),
            ("B k-contiguous", |d| d.b = Operand::row_major().transposed()),
            ("C column-major", |d| d.c = Operand::column_major()),
            ("A rows off 16-byte boundaries", |d| d.a = Operand { ld: Some(260), ..Operand::row_major() }),
        ];
        for (what, change) in cases {
            let mut d = base.clone();
            change(&mut d);
            assert!(!fits_desc(&d), "{what} must not fit");
        }
        // f32 accumulators: f32 output, or f16 for f16 inputs; C rows on 16-byte boundaries (4 f32).
        let wide32 = WIDE_CONFIGS.iter().find(|c| c.families.contains(&"f16_f32")).unwrap();
        let f32fam = family(DType::Bf16, AccType::F32);
        let mut d = MatmulDesc::new(1024, 1024, 64, DType::Bf16);
        d.c = Operand { ld: Some(1028), ..Operand::row_major() };
        assert!(fits(&d, &d.resolve().unwrap(), &f32fam, wide32));
        d.out = DType::Bf16;
        assert!(!fits(&d, &d.resolve().unwrap(), &f32fam, wide32));
        d.out = DType::F16;
        assert!(!fits(&d, &d.resolve().unwrap(), &f32fam, wide32), "bf16 inputs with an f16 result");
        let mut h = MatmulDesc::new(1024, 1024, 64, DType::F16);
        h.out = DType::F16;
        assert!(fits(&h, &h.resolve().unwrap(), &family(DType::F16, AccType::F32), wide32));
        h.c = Operand { ld: Some(1028), ..Operand::row_major() };
        assert!(!fits(&h, &h.resolve().unwrap(), &family(DType::F16, AccType::F32), wide32), "1028 f16 are not whole vectors");
        // 8-bit: B k-contiguous only, leading dimensions whole 16-byte vectors.
        let wide8 = WIDE_CONFIGS.iter().find(|c| c.families.contains(&"s8_s32")).unwrap();
        let s8 = family(DType::S8, AccType::S32);
        let mut q = MatmulDesc::new(512, 512, 256, DType::S8);
        q.acc = AccType::S32;
        assert!(!fits(&q, &q.resolve().unwrap(), &s8, wide8), "row-major 8-bit B");
        q.b = Operand::row_major().transposed();
        assert!(fits(&q, &q.resolve().unwrap(), &s8, wide8));
        q.b = Operand { ld: Some(264), ..Operand::row_major().transposed() };
        assert!(!fits(&q, &q.resolve().unwrap(), &s8, wide8), "264-byte lines are not whole vectors");
    }
}
