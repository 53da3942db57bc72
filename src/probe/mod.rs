//! Trust nothing a driver says about cooperative matrices: every shape a device lists runs
//! through a small kernel ([`kernel`]) in both operand layouts, with the operand flags its
//! types call for and edge values ([`reference`](mod@reference)), against the CPU; then its multiply-add
//! throughput is timed against matbridge's emulation of the same shape on the same device.
//!
//! A shape that computes wrong results, or runs slower than its emulation, is *distrusted*:
//! [`ProbeReport::distrusted`] is what `matbridge probe` records per device
//! ([`matbridge_runtime::DistrustRecord`]); a context opened with the record leaves those
//! shapes out of its capabilities, so the translator emulates them and the matmul API takes
//! another path. A wrong shape is reported with the inputs that show it, as a driver bug.
//!
//! On a device that lists no shape, the probe checks and times the emulation of the shapes
//! kernels use most, so every device gets a report.

pub mod kernel;
pub mod reference;

use crate::error::{Error, Result};
use kernel::Layouts;
use matbridge_runtime::{Context, DistrustReason, DistrustedShape, PipelineDesc, SpecConstant};
use matbridge_translator::profile::{ComponentType, CoopMatShape, DeviceCaps, MatrixScope};
use reference::Mismatch;
use serde::Serialize;
use std::time::{Duration, Instant};

/// What the probe concluded about one shape.
#[derive(Clone, Debug, PartialEq, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Listed, right, and faster than the emulation.
    Trusted,
    /// Listed, and computes wrong results.
    WrongResults,
    /// Listed and right, but slower than the emulation.
    SlowerThanEmulation,
    /// Not listed: the emulation's result and speed.
    Emulated,
    /// Not probed (the reason).
    NotProbed(String),
}

/// One shape's probe.
#[derive(Clone, Debug, Serialize)]
pub struct ShapeProbe {
    pub shape: CoopMatShape,
    /// The shape as `CoopMatShape` prints it: `16x16x16 f16*f16+f32->f32 (subgroup)`.
    pub label: String,
    pub verdict: Verdict,
    /// The device's first wrong element, with its inputs.
    pub mismatch: Option<Mismatch>,
    /// The emulation's first wrong element (a matbridge bug).
    pub emulation_mismatch: Option<Mismatch>,
    /// Nanoseconds per multiply-add of one sub-group, over the whole device.
    pub native_ns: Option<f64>,
    pub emulated_ns: Option<f64>,
}

/// A device's probe.
#[derive(Clone, Debug, Serialize)]
pub struct ProbeReport {
    pub device: String,
    pub driver: String,
    pub subgroup_size: u32,
    pub shapes: Vec<ShapeProbe>,
}

impl ProbeReport {
    /// The shapes not to use, with the evidence.
    pub fn distrusted(&self) -> Vec<DistrustedShape> {
        self.shapes
            .iter()
            .filter_map(|s| match s.verdict {
                Verdict::WrongResults => Some(DistrustedShape { shape: s.shape, reason: DistrustReason::WrongResults, evidence: s.mismatch.as_ref().map_or_else(String::new, ToString::to_string) }),
                Verdict::SlowerThanEmulation => Some(DistrustedShape {
                    shape: s.shape,
                    reason: DistrustReason::SlowerThanEmulation,
                    evidence: format!("{:.3} ns per multiply-add natively, {:.3} ns emulated", s.native_ns.unwrap_or(f64::NAN), s.emulated_ns.unwrap_or(f64::NAN)),
                }),
                _ => None,
            })
            .collect()
    }
}

/// How long and how hard to probe.
#[derive(Clone, Debug)]
pub struct ProbeOptions {
    /// Time native against emulated (otherwise only the results are checked).
    pub time: bool,
    /// Shortest GPU time of one timed run.
    pub min_time: Duration,
}

impl Default for ProbeOptions {
    fn default() -> Self {
        ProbeOptions { time: true, min_time: Duration::from_millis(20) }
    }
}

/// The shapes probed emulated on a device that lists none: those kernels use most.
fn common_shapes() -> Vec<CoopMatShape> {
    use ComponentType::*;
    let shape = |m, n, k, a, c| CoopMatShape { m, n, k, a, b: a, c, result: c, saturating: false, scope: MatrixScope::Subgroup };
    vec![shape(16, 16, 16, F16, F32), shape(16, 16, 16, F16, F16), shape(16, 16, 32, S8, S32), shape(8, 8, 8, F16, F32)]
}

/// Probes every cooperative-matrix shape `ctx`'s device lists (open the context without a
/// distrust record, so that the probe sees the driver's whole list).
pub fn probe(ctx: &Context, options: &ProbeOptions) -> Result<ProbeReport> {
    let caps = ctx.caps();
    let listed: Vec<CoopMatShape> = caps.cooperative_matrix.iter().filter(|s| s.scope == MatrixScope::Subgroup).copied().collect();
    let (shapes, native) = if listed.is_empty() { (common_shapes(), false) } else { (listed, true) };
    let mut out = Vec::new();
    for shape in shapes {
        out.push(probe_shape(ctx, &shape, native, options)?);
    }
    Ok(ProbeReport { device: caps.name.clone(), driver: format!("{} {}", caps.driver_name, caps.driver_version).trim().to_string(), subgroup_size: caps.subgroup_size, shapes: out })
}

/// `caps` without cooperative matrices: the target that emulates a shape. (Leaving out only
/// the probed shape would let the translator tile or pad it onto the device's other shapes,
/// which would time those instead of the emulation.)
fn emulation_target(caps: &DeviceCaps) -> DeviceCaps {
    let mut t = caps.clone();
    t.cooperative_matrix.clear();
    t
}

fn probe_shape(ctx: &Context, shape: &CoopMatShape, native: bool, options: &ProbeOptions) -> Result<ShapeProbe> {
    let mut probe = ShapeProbe { shape: *shape, label: shape.to_string(), verdict: Verdict::Emulated, mismatch: None, emulation_mismatch: None, native_ns: None, emulated_ns: None };
    if ![shape.a, shape.b, shape.c, shape.result].into_iter().all(kernel::supported) {
        probe.verdict = Verdict::NotProbed("fp8 components".into());
        return Ok(probe);
    }
    let caps = ctx.caps();
    let emulated_target = emulation_target(caps);
    let ops = reference::operands(shape, 0x9e37 ^ (shape.m as u64) << 16 ^ (shape.k as u64) << 8);
    let mut modules = Vec::new();
    for layouts in Layouts::BOTH {
        let words = kernel::build(shape, layouts, caps.subgroup_size).map_err(|e| Error::ProbeKernel { shape: probe.label.clone(), message: e.to_string() })?;
        let emulated = match matbridge_translator::translate(&words, &emulated_target) {
            Ok((w, _)) => w,
            Err(e) => {
                probe.verdict = Verdict::NotProbed(format!("the emulation cannot express it: {e}"));
                return Ok(probe);
            }
        };
        let native_words = if native { Some(matbridge_translator::translate(&words, caps)?.0) } else { None };
        if let Some(w) = &native_words {
            let d = run_once(ctx, w, shape, layouts, &ops)?;
            if probe.mismatch.is_none() {
                probe.mismatch = reference::check(shape, &ops, layouts, &d).err().map(|m| *m);
            }
        }
        let d = run_once(ctx, &emulated, shape, layouts, &ops)?;
        if probe.emulation_mismatch.is_none() {
            probe.emulation_mismatch = reference::check(shape, &ops, layouts, &d).err().map(|m| *m);
        }
        modules.push((native_words, emulated));
    }
    if options.time {
        let (native_words, emulated) = &modules[0];
        probe.emulated_ns = Some(time_muladd(ctx, emulated, shape, options.min_time)?);
        if let Some(w) = native_words {
            probe.native_ns = Some(time_muladd(ctx, w, shape, options.min_time)?);
        }
    }
    if native {
        probe.verdict = match (&probe.mismatch, probe.native_ns, probe.emulated_ns) {
            (Some(_), _, _) => Verdict::WrongResults,
            (None, Some(n), Some(e)) if n > e => Verdict::SlowerThanEmulation,
            _ => Verdict::Trusted,
        };
    }
    Ok(probe)
}

/// The pipeline of a probe module with `iterations` multiply-adds.
fn pipeline(ctx: &Context, words: &[u32], iterations: u32) -> Result<matbridge_runtime::Pipeline> {
    let spec = [SpecConstant::u32(0, iterations)];
    Ok(ctx.create_pipeline(&PipelineDesc { spirv: words, bindings: 4, spec_constants: &spec, label: "probe", ..Default::default() })?)
}

/// Runs one multiply-add of `ops` laid out as `layouts`; returns D row-major.
fn run_once(ctx: &Context, words: &[u32], shape: &CoopMatShape, layouts: Layouts, ops: &reference::Operands) -> Result<Vec<f64>> {
    let (m, n, k) = (shape.m as usize, shape.n as usize, shape.k as usize);
    let p = pipeline(ctx, words, 1)?;
    let a = ctx.buffer_from_slice(&reference::bytes(&ops.a, m, k, layouts, shape.a), "probe A")?;
    let b = ctx.buffer_from_slice(&reference::bytes(&ops.b, k, n, layouts, shape.b), "probe B")?;
    let c = ctx.buffer_from_slice(&reference::bytes(&ops.c, m, n, layouts, shape.c), "probe C")?;
    let d_bytes = (m * n * shape.result.bits() as usize / 8).next_multiple_of(4);
    let mut d = ctx.zeroed_buffer::<u8>(d_bytes, "probe D")?;
    ctx.run(&[matbridge_runtime::Dispatch { pipeline: &p, buffers: &[&a, &b, &c, &d], images: &[], push_constants: &[], groups: [1, 1, 1] }])?;
    let bytes: Vec<u8> = ctx.read_buffer(&mut d)?;
    Ok(reference::values(&bytes, shape.result, m * n))
}

/// Nanoseconds per multiply-add of one sub-group: 256 dependent multiply-adds per sub-group,
/// the number of sub-groups doubled until a run takes `min_time`.
fn time_muladd(ctx: &Context, words: &[u32], shape: &CoopMatShape, min_time: Duration) -> Result<f64> {
    const ITERATIONS: u32 = 256;
    let (m, n, k) = (shape.m as usize, shape.n as usize, shape.k as usize);
    let p = pipeline(ctx, words, ITERATIONS)?;
    let zeros = |count: usize, bits: u32, name: &str| ctx.zeroed_buffer::<u8>((count * bits as usize / 8).next_multiple_of(4), name);
    let a = zeros(m * k, shape.a.bits(), "probe A")?;
    let b = zeros(k * n, shape.b.bits(), "probe B")?;
    let c = zeros(m * n, shape.c.bits(), "probe C")?;
    let d = zeros(m * n, shape.result.bits(), "probe D")?;
    // Drivers that compile at the first dispatch (lavapipe) do it here, untimed.
    let warm = [matbridge_runtime::Dispatch { pipeline: &p, buffers: &[&a, &b, &c, &d], images: &[], push_constants: &[], groups: [1, 1, 1] }];
    ctx.run_with_timeout(&warm, 1, Duration::from_secs(600))?;
    let mut groups = 1u32;
    let started = Instant::now();
    loop {
        let dispatch = [matbridge_runtime::Dispatch { pipeline: &p, buffers: &[&a, &b, &c, &d], images: &[], push_constants: &[], groups: [groups, 1, 1] }];
        let stats = ctx.run_with_timeout(&dispatch, 1, Duration::from_secs(600))?;
        let t = stats.gpu_time.unwrap_or(stats.wall_time);
        if t >= min_time || groups >= 1 << 16 || started.elapsed() > Duration::from_secs(60) {
            return Ok(t.as_secs_f64() * 1e9 / (groups as f64 * ITERATIONS as f64));
        }
        groups *= 2;
    }
}
