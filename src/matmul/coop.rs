//! The cooperative-matrix path.
//!
//! The kernels (`shaders/glsl/coop_matmul.comp`) are written against SPV_NV_cooperative_matrix
//! and translated by matbridge's own translator for the device at first use, so the device's
//! capability struct decides what runs: a kernel is used only when the device lists its MMA
//! shape (16x16x16 f16 or bf16 with f32 or f16 accumulators, 16x16x32 s8 -> s32 or u8 -> u32)
//! and the operands are
//! laid out with a contiguous dimension whose extent, leading dimension and batch stride are
//! multiples of the 16-byte vector the kernel loads. The tile configuration (128x256 or 128x128
//! per workgroup) is chosen by [`super::tune`].

use super::gpu::{Gpu, Plan};
use super::{AccType, DType, MatmulDesc, MatmulPath, Resolved, Strides};
use crate::error::Result;
use matbridge_runtime::SpecConstant;
use matbridge_translator::profile::ComponentType as T;

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
}

/// Kernel name, MMA shape row it needs, elements per 16-byte vector.
fn kernel_for(desc: &MatmulDesc) -> Option<(&'static str, (u32, u32, u32, T, T), u32)> {
    match (desc.dtype, desc.acc) {
        (DType::F16, AccType::F32) => Some(("coop_matmul_f16_f32", (16, 16, 16, T::F16, T::F32), 8)),
        (DType::F16, AccType::F16) => Some(("coop_matmul_f16_f16", (16, 16, 16, T::F16, T::F16), 8)),
        (DType::S8, AccType::S32) => Some(("coop_matmul_s8_s32", (16, 16, 32, T::S8, T::S32), 16)),
        // u8 x u8 accumulates in u32, whose bits are the wrapped s32 result.
        (DType::U8, AccType::S32) => Some(("coop_matmul_u8_s32", (16, 16, 32, T::U8, T::U32), 16)),
        // The f16 kernel with its 16-bit float type retyped to bf16 (see `retype_f16_to_bf16`).
        (DType::Bf16, AccType::F32) => Some(("coop_matmul_f16_f32", (16, 16, 16, T::Bf16, T::F32), 8)),
        _ => None,
    }
}

/// (column-major?, leading dimension) of an operand whose op() is rows x cols, when one of its
/// dimensions is contiguous and vector-aligned.
fn vector_layout(s: &Strides, rows: usize, cols: usize, vec: usize) -> Option<(bool, usize)> {
    let ok = |ld: usize, extent: usize| ld % vec == 0 && s.batch % vec == 0 && extent % vec == 0;
    if s.col == 1 && ok(s.row, cols) {
        Some((false, s.row))
    } else if s.row == 1 && ok(s.col, rows) {
        Some((true, s.col))
    } else {
        None
    }
}

/// Tile configurations the autotuner chooses between: (name, kernel suffix, N per workgroup).
const TILES: [(&str, &str, u32); 2] = [("128x256 (8 subgroups of 64x64)", "", 256), ("128x128 (8 subgroups of 64x32)", "_narrow", 128)];

/// A cooperative-matrix plan, or `None` when the device or the operand layout does not fit. The
/// tile configuration comes from the autotuner (measured on the first problem of its kind).
pub fn plan(gpu: &Gpu, desc: &MatmulDesc, r: &Resolved) -> Result<Option<Plan>> {
    if std::env::var("MATBRIDGE_NO_COOP").is_ok_and(|v| v == "1") {
        return Ok(None);
    }
    let caps = gpu.ctx.caps();
    let Some((name, (m, n, k, ab, acc), vec)) = kernel_for(desc) else { return Ok(None) };
    if caps.find_coop_shape(m, n, k, ab, ab, acc, acc).is_none() || caps.subgroup_size != 32 {
        return Ok(None);
    }
    let vec = vec as usize;
    // op(A) is m x k: row-major here means k contiguous.
    let (Some((a_cm, a_ld)), Some((b_cm_n, b_ld))) = (vector_layout(&r.a, desc.m, desc.k, vec), vector_layout(&r.b, desc.k, desc.n, vec)) else {
        return Ok(None);
    };
    // For B (k x n) "row-major" means n contiguous; the kernel's B_COLMAJOR means k contiguous.
    let layout = Layout { a_cm, a_ld, b_colmajor: b_cm_n, b_ld };
    let size_class = if desc.m.max(desc.n) <= 1024 { "small" } else { "large" };
    let key = format!("{}|{}|{name}|{}|a{}b{}|{size_class}", caps.name, caps.driver_version, desc.dtype, u8::from(a_cm), u8::from(b_cm_n));
    let names: Vec<&str> = TILES.iter().map(|t| t.0).collect();
    let choice = gpu.tuner.choose(&key, &names, |tile| measure(gpu, desc, r, name, &layout, tile))?;
    build(gpu, desc, r, name, &layout, &choice)
}

/// Operand addressing the kernel is specialised for.
struct Layout {
    a_cm: bool,
    a_ld: usize,
    b_colmajor: bool,
    b_ld: usize,
}

/// Times one tile configuration on zero-filled operands of the problem's size.
fn measure(gpu: &Gpu, desc: &MatmulDesc, r: &Resolved, name: &str, layout: &Layout, tile: &str) -> Result<f64> {
    let Some(plan) = build(gpu, desc, r, name, layout, tile)? else { return Ok(f64::INFINITY) };
    let bytes = |len: usize, dtype: DType| ((len * dtype.size()).next_multiple_of(16).max(16)) as u64;
    let kind = matbridge_runtime::MemoryKind::DeviceLocal;
    let a = gpu.ctx.create_buffer(bytes(r.a.len, desc.dtype), kind, "tune A")?;
    let b = gpu.ctx.create_buffer(bytes(r.b.len, desc.dtype), kind, "tune B")?;
    let c = gpu.ctx.create_buffer(bytes(r.c.len, desc.out), kind, "tune C")?;
    gpu.execute(&plan, &a, &b, &c, 1)?;
    gpu.execute(&plan, &a, &b, &c, 3)
}

fn build(gpu: &Gpu, desc: &MatmulDesc, r: &Resolved, name: &str, layout: &Layout, tile: &str) -> Result<Option<Plan>> {
    let caps = gpu.ctx.caps();
    let Some(&(tile_name, suffix, bn)) = TILES.iter().find(|t| t.0 == tile) else { return Ok(None) };
    let Some((_, (m, n, k, ab, acc), _)) = kernel_for(desc) else { return Ok(None) };
    let kernel = format!("{name}{suffix}");
    let bf16 = desc.dtype == DType::Bf16;
    let key = format!("{kernel}_a{}_b{}{}", u8::from(layout.a_cm), u8::from(layout.b_colmajor), if bf16 { "_bf16" } else { "" });
    let post: Option<fn(Vec<u32>) -> Result<Vec<u32>>> = if bf16 { Some(retype_f16_to_bf16) } else { None };
    let pipeline = gpu.pipeline_translated(&key, &kernel, 4, &[SpecConstant::u32(0, layout.a_cm.into()), SpecConstant::u32(1, layout.b_colmajor.into())], post)?;
    let half_out = matches!(desc.out, DType::F16 | DType::Bf16);
    let params = CoopParams {
        m: desc.m as u32,
        n: desc.n as u32,
        k: desc.k as u32,
        batch: desc.batch as u32,
        a_ld: layout.a_ld as u32,
        a_batch: r.a.batch as u32,
        b_ld: layout.b_ld as u32,
        b_batch: r.b.batch as u32,
        c: [r.c.row as u32, r.c.col as u32, r.c.batch as u32],
        alpha: desc.alpha,
        beta: if half_out { 0.0 } else { desc.beta },
    };
    let max = caps.limits.max_workgroup_count;
    let groups = [params.n.div_ceil(bn), params.m.div_ceil(128), params.batch];
    if (0..3).any(|i| groups[i] > max[i]) {
        return Ok(None);
    }
    let shape = format!("{m}x{n}x{k} {ab}->{acc}");
    let mut plan = Plan::new(MatmulPath::CooperativeMatrix { shape, tile: tile_name.into() });
    gpu.push_gemm(&mut plan, pipeline, bytemuck::bytes_of(&params), groups, desc, r)?;
    Ok(Some(plan))
}

/// Turns the f16 GEMM into a bf16 one: every `OpTypeFloat 16` (in the GEMM kernel, only the A and
/// B matrix component type) becomes `OpTypeFloat 16 BFloat16KHR`, declaring SPV_KHR_bfloat16's
/// capabilities. Operands move through shared memory as raw 16-byte vectors, so no conversion
/// instruction sees the type.
pub fn retype_f16_to_bf16(words: Vec<u32>) -> Result<Vec<u32>> {
    use matbridge_translator::module::{op, Module};
    const BFLOAT16_KHR: u32 = 0;
    const CAP_BFLOAT16_TYPE: u32 = 5116;
    const CAP_BFLOAT16_COOPERATIVE_MATRIX: u32 = 5118;
    let mut module = Module::from_words(&words)?;
    for inst in module.insts.iter_mut().filter(|i| i.op == op::TYPE_FLOAT && i.operands.get(1) == Some(&16) && i.operands.len() == 2) {
        inst.operands.push(BFLOAT16_KHR);
    }
    module.require_capability(CAP_BFLOAT16_TYPE);
    module.require_capability(CAP_BFLOAT16_COOPERATIVE_MATRIX);
    module.require_extension("SPV_KHR_bfloat16");
    Ok(module.to_words())
}
