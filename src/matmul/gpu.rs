//! The GPU paths: kernel selection, buffers, dispatch.
//!
//! Every input type runs on the tiled kernel (`shaders/wgsl/matmul_tiled.wgsl`), which reads
//! operands as 32-bit words so that devices without 8/16-bit types run it too. Devices that list
//! a matching cooperative-matrix shape run the cooperative-matrix kernels instead
//! (see [`super::coop`]). 16-bit outputs are written through an f32 scratch buffer and a packing
//! epilogue. Kernel parameters travel in small storage buffers rather than push constants:
//! lavapipe inlines push-constant values into loop bounds and re-JITs fully unrolled loops on
//! first dispatch, which takes minutes for the tiled kernels.

use super::options::{Strategy, TuningOptions};
use super::{DType, MatmulDesc, MatmulPath, Resolved};
use crate::error::{Error, Result};
use matbridge_runtime::{Buffer, Context, Dispatch, MemoryKind, Pipeline, PipelineDesc, SpecConstant};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// A device plus its compiled matmul pipelines.
pub struct Gpu {
    pub ctx: Context,
    pipelines: Mutex<HashMap<String, Arc<Pipeline>>>,
    /// Plans by problem, so that repeated matmuls of one shape allocate nothing. Each plan's
    /// mutex serialises the runs that share its scratch and parameter buffers.
    plans: Mutex<HashMap<String, Arc<Mutex<Plan>>>>,
    /// Tile choices, measured on first use and remembered on disk.
    pub tuner: super::tune::Tuner,
    /// A cooperative-matrix configuration label that replaces the tuner's choice (see
    /// [`super::api::Matbridge::set_coop_config`]).
    pub(crate) coop_override: Mutex<Option<String>>,
    /// Whether cooperative-matrix kernels may run ([`Strategy::Subgroup`] says no).
    pub(crate) cooperative_matrix: bool,
}

/// Rewrites the translator applies beyond what the device needs (e.g. retyping f16 to bf16).
pub type Requests = &'static [matbridge_translator::Request];

/// Whether the device reports packed 4x8-bit dot products of `dtype`'s signedness as accelerated.
fn packed_dot_accelerated(caps: &matbridge_translator::DeviceCaps, dtype: DType) -> bool {
    let accel = &caps.integer_dot_product_accelerated;
    caps.integer_dot_product && if dtype == DType::U8 { accel.int8_packed_unsigned } else { accel.int8_packed_signed }
}

/// Workgroups that keep a large GPU busy: the f32 kernel takes the largest tile that makes at
/// least this many (an H100 has 132 multiprocessors).
const FILL_GROUPS: usize = 128;

/// The f32 GEMM configuration for `desc` on a device with `max_shared` bytes of workgroup
/// memory and at most `max_invocations` invocations per workgroup: the largest tile that still
/// gives [`FILL_GROUPS`] workgroups, else the smallest.
pub fn sgemm_config(desc: &MatmulDesc, max_shared: u32, max_invocations: u32) -> Option<&'static matbridge_shaders::SgemmConfig> {
    let fits: Vec<_> = matbridge_shaders::SGEMM_CONFIGS.iter().filter(|c| c.fits(max_shared, max_invocations)).collect();
    let groups = |c: &matbridge_shaders::SgemmConfig| desc.m.div_ceil(c.bm as usize) * desc.n.div_ceil(c.bn as usize) * desc.batch;
    fits.iter().find(|c| groups(c) >= FILL_GROUPS).or(fits.last()).copied()
}

/// Plans kept per device before the cache is cleared.
const PLAN_CACHE_LIMIT: usize = 64;

/// Push constants of the tiled kernel (`Params` in the WGSL).
#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct TiledParams {
    m: u32,
    n: u32,
    k: u32,
    batch: u32,
    a: [u32; 3],
    b: [u32; 3],
    c: [u32; 3],
    alpha: f32,
    beta: f32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct PackParams {
    m: u32,
    n: u32,
    batch: u32,
    words: u32,
    c: [u32; 3],
    beta: f32,
}

#[repr(C)]
#[derive(Clone, Copy, bytemuck::Pod, bytemuck::Zeroable)]
struct RepackParams {
    lines: u32,
    len: u32,
    ld: u32,
    batch: u32,
    src: [u32; 3],
    dst_batch: u32,
    words: u32,
    lines_fastest: u32,
}

/// Workgroups of 256 invocations the operand copy dispatches at most.
const REPACK_GROUPS: u32 = 2048;

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

/// A buffer a dispatch binds: the caller's A, B, C, or one the plan owns.
#[derive(Clone, Copy, Debug)]
pub enum Slot {
    A,
    B,
    C,
    Owned(usize),
}

/// A planned matmul: dispatches over the caller's buffers and the plan's own (parameters,
/// scratch).
pub struct Plan {
    pub path: MatmulPath,
    steps: Vec<(Arc<Pipeline>, Vec<Slot>, [u32; 3])>,
    owned: Vec<Buffer>,
}

impl Plan {
    pub(crate) fn new(path: MatmulPath) -> Plan {
        Plan { path, steps: Vec::new(), owned: Vec::new() }
    }

    /// Adds a buffer the plan owns and returns its slot.
    pub(crate) fn own(&mut self, buffer: Buffer) -> Slot {
        self.owned.push(buffer);
        Slot::Owned(self.owned.len() - 1)
    }

    pub(crate) fn step(&mut self, pipeline: Arc<Pipeline>, slots: Vec<Slot>, groups: [u32; 3]) {
        self.steps.push((pipeline, slots, groups));
    }
}

fn u32s(v: usize, what: &str) -> Result<u32> {
    u32::try_from(v).map_err(|_| Error::Invalid(format!("{what} {v} does not fit in 32 bits")))
}

impl Gpu {
    /// A device with the default strategy and tuning.
    pub fn new(ctx: Context) -> Gpu {
        Self::with_options(ctx, &Strategy::Auto, &TuningOptions::default())
    }

    pub fn with_options(ctx: Context, strategy: &Strategy, tuning: &TuningOptions) -> Gpu {
        let coop_override = match strategy {
            Strategy::CooperativeMatrix { tile } => tile.clone(),
            _ => None,
        };
        Gpu {
            ctx,
            pipelines: Mutex::new(HashMap::new()),
            plans: Mutex::new(HashMap::new()),
            tuner: super::tune::Tuner::load(tuning),
            coop_override: Mutex::new(coop_override),
            cooperative_matrix: *strategy != Strategy::Subgroup,
        }
    }

    /// A cached pipeline for a built-in (naga-compiled) kernel.
    pub fn pipeline(&self, name: &str, bindings: u32) -> Result<Arc<Pipeline>> {
        self.pipeline_with(name, bindings, None, &[])
    }

    /// A cached pipeline for a built-in NV-style kernel, translated for this device on first use.
    /// `requests` are rewrites beyond what the device needs (e.g. retyping f16 to bf16).
    pub fn pipeline_translated(&self, key: &str, kernel: &str, bindings: u32, spec: &[SpecConstant], requests: Requests) -> Result<Arc<Pipeline>> {
        if let Some(p) = self.pipelines.lock().unwrap_or_else(|p| p.into_inner()).get(key) {
            return Ok(p.clone());
        }
        let words = matbridge_shaders::spirv(kernel).ok_or_else(|| Error::Invalid(format!("no built-in kernel named {kernel}")))?;
        let (khr, _) = matbridge_translator::translate_with(&words, self.ctx.caps(), requests)?;
        self.pipeline_with(key, bindings, Some(khr), spec)
    }

    /// A host-visible buffer holding kernel parameters (written directly, no copy submitted).
    pub(crate) fn params_buffer(&self, bytes: &[u8]) -> Result<Buffer> {
        let mut buf = self.ctx.create_buffer(bytes.len() as u64, MemoryKind::Upload, "matmul params")?;
        self.ctx.write_buffer(&mut buf, bytes)?;
        Ok(buf)
    }

    /// An uninitialised f32 scratch buffer (every element the epilogue reads is written first).
    pub(crate) fn scratch_buffer(&self, len: usize) -> Result<Buffer> {
        Ok(self.ctx.create_buffer((len.max(1) * 4) as u64, MemoryKind::DeviceLocal, "matmul scratch")?)
    }

    fn pipeline_with(&self, name: &str, bindings: u32, words: Option<Vec<u32>>, spec: &[SpecConstant]) -> Result<Arc<Pipeline>> {
        let mut cache = self.pipelines.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(p) = cache.get(name) {
            return Ok(p.clone());
        }
        let spirv = match words {
            Some(w) => w,
            None => matbridge_shaders::spirv(name).ok_or_else(|| Error::Invalid(format!("no built-in kernel named {name}")))?,
        };
        let p = Arc::new(self.ctx.create_pipeline(&PipelineDesc {
            spirv: &spirv,
            bindings,
            spec_constants: spec,
            label: name,
            // Built-in kernels, or their translations by matbridge (both validated by the tests).
            trusted: true,
            ..Default::default()
        })?);
        cache.insert(name.to_string(), p.clone());
        Ok(p)
    }

    /// Pins the cooperative-matrix configuration (or returns to the tuner's choice) and forgets
    /// the plans made so far.
    pub fn set_coop_override(&self, label: Option<&str>) {
        *self.coop_override.lock().unwrap_or_else(|p| p.into_inner()) = label.map(str::to_string);
        self.plans.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }

    /// The cached plan for `desc`, made on first use.
    pub fn cached_plan(&self, desc: &MatmulDesc, r: &Resolved) -> Result<Arc<Mutex<Plan>>> {
        let key = format!("{desc:?}");
        if let Some(p) = self.plans.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return Ok(p.clone());
        }
        let plan = Arc::new(Mutex::new(self.plan(desc, r)?));
        let mut plans = self.plans.lock().unwrap_or_else(|p| p.into_inner());
        if plans.len() >= PLAN_CACHE_LIMIT {
            plans.clear();
        }
        plans.insert(key, plan.clone());
        Ok(plan)
    }

    pub fn plan(&self, desc: &MatmulDesc, r: &Resolved) -> Result<Plan> {
        if let Some(plan) = super::coop::plan(self, desc, r)? {
            return Ok(plan);
        }
        self.plan_tiled(desc, r)
    }

    pub(crate) fn plan_tiled(&self, desc: &MatmulDesc, r: &Resolved) -> Result<Plan> {
        // f32 on a GPU: the register-blocked shared-memory kernel; f32 on a CPU driver with
        // vector-aligned operands: 16-byte loads; 8-bit inputs: packed integer dot products where
        // the device accelerates them (CPU drivers emulate them more slowly than the byte
        // arithmetic of the register-blocked kernel); everything else the register-blocked kernel
        // reading 32-bit words. CPU drivers take barrier-free kernels (llvmpipe's JIT handles
        // barriers badly, and SwiftShader runs the 16-byte-load kernel faster).
        let cpu = self.ctx.caps().device_type == matbridge_translator::profile::DeviceType::Cpu;
        // f32 on a CPU driver with A k-contiguous and B n-contiguous in 16-byte vectors: the
        // kernel whose loads are 16 bytes wide (25 % faster on llvmpipe at 512^3).
        let quad = |v: usize| v.is_multiple_of(4);
        let vec4 = desc.dtype == DType::F32 && cpu && r.a.col == 1 && r.b.col == 1 && quad(r.a.row) && quad(r.b.row) && quad(r.a.batch) && quad(r.b.batch) && quad(desc.k) && quad(desc.n);
        let limits = &self.ctx.caps().limits;
        let sgemm = if desc.dtype == DType::F32 && !cpu { sgemm_config(desc, limits.max_shared_memory_size, limits.max_workgroup_invocations) } else { None };
        let (name, tile, [bm, bn]) = if let Some(config) = sgemm {
            (config.kernel(), format!("{}x{} ({}x{} per invocation, workgroup memory)", config.bm, config.bn, 4 * config.rm, 4 * config.rn), [config.bm, config.bn])
        } else if vec4 {
            ("matmul_vec4_f32".to_string(), "32x32 (4x4 per invocation, 16-byte loads)".to_string(), [32, 32])
        } else if desc.dtype.is_integer() && packed_dot_accelerated(self.ctx.caps(), desc.dtype) {
            (format!("matmul_dot_{}", desc.dtype.name()), "32x32 (4x4 per invocation, packed integer dot products)".to_string(), [32, 32])
        } else {
            (format!("matmul_tiled_{}", desc.dtype.name()), "32x32 (4x4 per invocation)".to_string(), [32, 32])
        };
        let tiled = self.pipeline(&name, 4)?;
        let half_out = matches!(desc.out, DType::F16 | DType::Bf16);
        let params = TiledParams {
            m: u32s(desc.m, "m")?,
            n: u32s(desc.n, "n")?,
            k: u32s(desc.k, "k")?,
            batch: u32s(desc.batch, "batch")?,
            a: [u32s(r.a.row, "A stride")?, u32s(r.a.col, "A stride")?, u32s(r.a.batch, "A batch stride")?],
            b: [u32s(r.b.row, "B stride")?, u32s(r.b.col, "B stride")?, u32s(r.b.batch, "B batch stride")?],
            c: [u32s(r.c.row, "C stride")?, u32s(r.c.col, "C stride")?, u32s(r.c.batch, "C batch stride")?],
            alpha: desc.alpha,
            beta: if half_out { 0.0 } else { desc.beta },
        };
        let max = limits.max_workgroup_count;
        let groups = [params.n.div_ceil(bn), params.m.div_ceil(bm), params.batch];
        if (0..3).any(|i| groups[i] > max[i]) {
            return Err(Error::Unsupported { what: format!("a {}x{}x{} batch-{} matmul", desc.m, desc.n, desc.k, desc.batch), why: format!("needs {groups:?} workgroups, limit {max:?}") });
        }
        let mut plan = Plan::new(MatmulPath::Subgroup { tile });
        self.push_gemm(&mut plan, tiled, bytemuck::bytes_of(&params), groups, [Slot::A, Slot::B], desc, r)?;
        Ok(plan)
    }

    /// Appends a GEMM kernel bound to (`ab`: A and B or their copies, C or scratch, params);
    /// 16-bit outputs go through an f32 scratch buffer and the packing epilogue (the kernel must
    /// then be given beta = 0).
    #[allow(clippy::too_many_arguments)] // the dispatch's parts, then the problem it computes
    pub(crate) fn push_gemm(&self, plan: &mut Plan, kernel: Arc<Pipeline>, params: &[u8], groups: [u32; 3], ab: [Slot; 2], desc: &MatmulDesc, r: &Resolved) -> Result<()> {
        let params = plan.own(self.params_buffer(params)?);
        if matches!(desc.out, DType::F16 | DType::Bf16) {
            let scratch = plan.own(self.scratch_buffer(r.c.len)?);
            plan.step(kernel, vec![ab[0], ab[1], scratch, params], groups);
            self.push_pack(plan, desc, r, scratch)
        } else {
            plan.step(kernel, vec![ab[0], ab[1], Slot::C, params], groups);
            Ok(())
        }
    }

    /// Appends a copy of operand `src` (elements of `bits` bits) into a new scratch buffer laid
    /// out as `repack` says; returns the copy's slot. The kernel is `transpose_8.wgsl` for 8-bit
    /// transposing copies with word-aligned rows, `copy_rows.wgsl` where source lines are
    /// contiguous, else the element-wise `repack.wgsl` (every layout; same parameters).
    pub(crate) fn push_repack(&self, plan: &mut Plan, src: Slot, bits: u32, repack: &Repack) -> Result<Slot> {
        let per_word = (32 / bits) as usize;
        let dst_batch = repack.dst_lines * repack.ld;
        let words = u32s((repack.batches * dst_batch).div_ceil(per_word), "repacked operand words")?;
        let params = RepackParams {
            lines: u32s(repack.lines, "repacked lines")?,
            len: u32s(repack.len, "repacked line length")?,
            ld: u32s(repack.ld, "repacked leading dimension")?,
            batch: u32s(repack.batches, "batch")?,
            src: [u32s(repack.src_line, "operand stride")?, u32s(repack.src_elem, "operand stride")?, u32s(repack.src_batch, "operand batch stride")?],
            dst_batch: u32s(dst_batch, "repacked batch stride")?,
            words,
            lines_fastest: u32::from(repack.src_line == 1 && repack.src_elem != 1),
        };
        // The element-wise copy and copy_rows loop over words or vectors: enough workgroups to
        // fill any GPU, no more.
        let looping = |units: u32| [units.div_ceil(256).clamp(1, REPACK_GROUPS), 1, 1];
        let (kernel, groups) = match transpose_groups(bits, repack, self.ctx.caps().limits.max_workgroup_count) {
            Some(groups) => (self.pipeline("transpose_8", 3)?, groups),
            None if copies_rows(bits, repack) => (self.pipeline(&format!("copy_rows_{bits}"), 3)?, looping(words / 4)),
            None => (self.pipeline(&format!("repack_{bits}"), 3)?, looping(words)),
        };
        let copy = plan.own(self.scratch_buffer(words as usize)?);
        let params = plan.own(self.params_buffer(bytemuck::bytes_of(&params))?);
        plan.step(kernel, vec![src, copy, params], groups);
        Ok(copy)
    }

    /// Appends the 16-bit packing epilogue, reading f32 values from `scratch`.
    pub(crate) fn push_pack(&self, plan: &mut Plan, desc: &MatmulDesc, r: &Resolved, scratch: Slot) -> Result<()> {
        let pack = self.pipeline(&format!("pack_{}", desc.out.name()), 3)?;
        let words = u32s(r.c.len.div_ceil(2), "C words")?;
        let params = PackParams { m: desc.m as u32, n: desc.n as u32, batch: desc.batch as u32, words, c: [r.c.row as u32, r.c.col as u32, r.c.batch.max(1) as u32], beta: desc.beta };
        let groups = words.div_ceil(64);
        let params = plan.own(self.params_buffer(bytemuck::bytes_of(&params))?);
        plan.step(pack, vec![scratch, Slot::C, params], [groups.min(65535), groups.div_ceil(65535), 1]);
        Ok(())
    }

    /// Runs a plan `iters` times over A, B, C; returns GPU seconds per iteration.
    pub fn execute(&self, plan: &Plan, a: &Buffer, b: &Buffer, c: &Buffer, iters: u32) -> Result<f64> {
        let resolve = |slot: &Slot| -> &Buffer {
            match slot {
                Slot::A => a,
                Slot::B => b,
                Slot::C => c,
                Slot::Owned(i) => &plan.owned[*i],
            }
        };
        let bound: Vec<Vec<&Buffer>> = plan.steps.iter().map(|(_, slots, _)| slots.iter().map(resolve).collect()).collect();
        let dispatches: Vec<Dispatch<'_>> = plan.steps.iter().zip(&bound).map(|((p, _, groups), bufs)| Dispatch { pipeline: p, buffers: bufs, push_constants: &[], groups: *groups }).collect();
        let stats = self.ctx.run_repeated(&dispatches, iters.max(1))?;
        let t = stats.gpu_time.unwrap_or(stats.wall_time);
        Ok(t.as_secs_f64() / iters.max(1) as f64)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The f32 kernel's tile: the largest that still fills the device, the smallest for small
    /// problems, and only tiles whose workgroup memory the device has.
    #[test]
    fn f32_tiles_shrink_until_the_grid_fills_the_device() {
        let pick_on = |m, n, batch, shared, invocations| {
            let mut desc = MatmulDesc::new(m, n, 512, DType::F32);
            desc.batch = batch;
            sgemm_config(&desc, shared, invocations).map(|c| (c.bm, c.bn))
        };
        let pick = |m, n, batch, shared| pick_on(m, n, batch, shared, 1024);
        assert_eq!(pick(4096, 4096, 1, 49152), Some((128, 128)));
        assert_eq!(pick(1024, 1024, 1, 49152), Some((128, 64)));
        assert_eq!(pick(800, 800, 1, 49152), Some((64, 64)));
        assert_eq!(pick(512, 512, 1, 49152), Some((32, 32)));
        assert_eq!(pick(1, 1, 1, 49152), Some((32, 32)));
        assert_eq!(pick(512, 512, 16, 49152), Some((128, 128)));
        // 128x128x8 needs 16.5 KiB, 128x64x16 25 KiB, 64x64x16 17 KiB, 32x32x16 9 KiB.
        assert_eq!(pick(4096, 4096, 1, 16384), Some((32, 32)));
        assert_eq!(pick(4096, 4096, 1, 1024), None);
        // Vulkan guarantees 128 invocations: only the 64-invocation 32x32 tile fits such a device.
        assert_eq!(pick_on(4096, 4096, 1, 49152, 128), Some((32, 32)));
    }
}
