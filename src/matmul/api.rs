//! [`Matbridge`]: the entry point of the matmul API.
//!
//! ```no_run
//! use matbridge::matmul::api::{Matbridge, DeviceChoice};
//! use matbridge::{MatmulDesc, DType};
//! let mb = Matbridge::new(&DeviceChoice::Auto)?;          // best GPU, else the CPU
//! let (m, n, k) = (64, 32, 48);
//! let a = mb.tensor(&vec![1.0f32; m * k])?;
//! let b = mb.tensor(&vec![2.0f32; k * n])?;
//! let mut c = mb.zeros(DType::F32, m * n)?;
//! mb.set_verify(true); // compare each device result with the CPU reference
//! let run = mb.matmul(&MatmulDesc::new(m, n, k, DType::F32), &a, &b, &mut c)?;
//! let result: Vec<f32> = mb.read(&c)?;
//! assert!(run.check.is_none_or(|report| report.pass));
//! println!("{} in {:?}", run.path, run.time);
//! # Ok::<(), matbridge::Error>(())
//! ```

use super::check::{check, CheckReport};
use super::gpu::Gpu;
use super::options::{MatbridgeOptions, Strategy};
use super::{cpu, DType, Element, HostData, MatmulDesc, MatmulPath};
use crate::error::{Error, Result};
use matbridge_runtime::{Buffer, Context, DeviceSelector};
use serde::Serialize;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// Where to run.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub enum DeviceChoice {
    /// The best Vulkan device; the CPU when there is none, or when the best is a CPU driver.
    #[default]
    Auto,
    /// The CPU path.
    Cpu,
    /// A specific Vulkan device; an error when it cannot be opened.
    Device(DeviceSelector),
}

impl DeviceChoice {
    /// `cpu`, `auto`, an index or a name substring.
    pub fn parse(s: &str) -> DeviceChoice {
        match s.trim().to_ascii_lowercase().as_str() {
            "cpu" => DeviceChoice::Cpu,
            "" | "auto" => DeviceChoice::Auto,
            _ => DeviceChoice::Device(DeviceSelector::parse(s)),
        }
    }
}

enum Backend {
    // Boxed: the device side is large, the CPU side empty.
    Gpu(Box<Gpu>),
    Cpu,
}

/// Data of one operand, on the device or on the host.
pub struct Tensor {
    dtype: DType,
    len: usize,
    storage: Storage,
}

enum Storage {
    Gpu(Buffer),
    Cpu(HostData),
}

impl Tensor {
    pub fn dtype(&self) -> DType {
        self.dtype
    }
    /// Number of elements.
    pub fn len(&self) -> usize {
        self.len
    }
    pub fn is_empty(&self) -> bool {
        self.len == 0
    }
}

/// What a matmul did.
#[derive(Clone, Debug, Serialize)]
pub struct MatmulRun {
    #[serde(flatten)]
    pub path: MatmulPath,
    /// Time per run (GPU timestamps on a device, wall clock on the CPU); serialized as
    /// `seconds`.
    #[serde(rename = "seconds", serialize_with = "as_seconds")]
    pub time: Duration,
    /// With verification on ([`Matbridge::set_verify`]) and a device: the last run's result
    /// compared with the CPU reference.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<CheckReport>,
}

fn as_seconds<S: serde::Serializer>(d: &Duration, s: S) -> std::result::Result<S::Ok, S::Error> {
    s.serialize_f64(d.as_secs_f64())
}

/// The matmul context: owns a device (or stands for the CPU). Cheap to clone: clones share the
/// device, its pipelines, plans and tuner.
#[derive(Clone)]
pub struct Matbridge {
    shared: Arc<Shared>,
}

struct Shared {
    backend: Backend,
    /// Cross-check device results against the CPU reference.
    verify: AtomicBool,
}

/// Seed of the rows and columns a verification samples in large results.
const VERIFY_SEED: u64 = 0x5eed;

impl Matbridge {
    /// Opens the chosen device with default options. `Auto` takes the fastest path the machine
    /// has: the best Vulkan device, except that where the best one is a CPU driver (lavapipe,
    /// SwiftShader) the CPU path, which runs a matmul about 15x faster there (name the driver to
    /// use it); and the CPU path when no Vulkan device opens.
    pub fn new(choice: &DeviceChoice) -> Result<Matbridge> {
        Self::with_options(&MatbridgeOptions { device: choice.clone(), ..Default::default() })
    }

    /// Opens `options.device` with `options` (strategy, verification, tuning, context).
    pub fn with_options(options: &MatbridgeOptions) -> Result<Matbridge> {
        let gpu = |ctx: Context| Backend::Gpu(Box::new(Gpu::with_options(ctx, &options.strategy, &options.tuning)));
        let backend = match (&options.device, &options.strategy) {
            (DeviceChoice::Cpu, _) | (_, Strategy::Cpu) => Backend::Cpu,
            (DeviceChoice::Auto, _) => match Context::new_with_options(&DeviceSelector::Auto, &options.context) {
                Ok(ctx) if ctx.caps().device_type == matbridge_translator::profile::DeviceType::Cpu => {
                    log::info!("{} is a CPU driver: using the CPU path", ctx.caps().name);
                    Backend::Cpu
                }
                Ok(ctx) => gpu(ctx),
                Err(e) => {
                    log::warn!("no Vulkan device ({e}); using the CPU path");
                    Backend::Cpu
                }
            },
            (DeviceChoice::Device(sel), _) => gpu(Context::new_with_options(sel, &options.context)?),
        };
        Ok(Matbridge { shared: Arc::new(Shared { backend, verify: AtomicBool::new(options.verify) }) })
    }

    /// A context on an already open device.
    pub fn with_context(ctx: Context) -> Matbridge {
        Matbridge { shared: Arc::new(Shared { backend: Backend::Gpu(Box::new(Gpu::new(ctx))), verify: AtomicBool::new(false) }) }
    }

    /// Labels of the cooperative-matrix tile configurations the device can run for `desc`'s
    /// input and accumulator types (empty on the CPU or without cooperative matrices).
    pub fn coop_configs(&self, desc: &MatmulDesc) -> Vec<String> {
        match &self.shared.backend {
            Backend::Gpu(g) => super::coop::config_labels(g, desc),
            _ => Vec::new(),
        }
    }

    /// Pins the cooperative-matrix tile configuration to `label` (one of
    /// [`Matbridge::coop_configs`]) instead of the autotuner's choice; `None` returns to the
    /// autotuner. A label that does not fit a later problem makes that matmul an error.
    pub fn set_coop_config(&self, label: Option<&str>) {
        if let Backend::Gpu(g) = &self.shared.backend {
            g.set_coop_override(label);
        }
    }

    /// The device's cooperative-matrix throughput ceiling per listed MMA shape (empty on the CPU
    /// or without cooperative matrices); see [`super::peak`].
    pub fn coop_peak(&self) -> Result<Vec<super::peak::Peak>> {
        match &self.shared.backend {
            Backend::Gpu(g) => super::peak::measure(g),
            _ => Ok(Vec::new()),
        }
    }

    /// Turns verification on or off: with it on, every matmul on a device reads its operands and
    /// result back and compares the result with the CPU reference (every element of results up
    /// to 2^18 elements, a seeded sample of whole rows and columns beyond; see
    /// [`super::check`]), reporting the largest errors in [`MatmulRun::check`] and logging a
    /// warning when an element is over the dtype's bound. The CPU path is the reference itself
    /// and is not checked.
    pub fn set_verify(&self, on: bool) {
        self.shared.verify.store(on, Ordering::Relaxed);
    }

    /// Whether verification is on.
    pub fn verifying(&self) -> bool {
        self.shared.verify.load(Ordering::Relaxed)
    }

    /// The CPU path.
    pub fn cpu() -> Matbridge {
        Matbridge { shared: Arc::new(Shared { backend: Backend::Cpu, verify: AtomicBool::new(false) }) }
    }

    /// The device's name, or `cpu`.
    pub fn device_name(&self) -> String {
        match &self.shared.backend {
            Backend::Gpu(g) => g.ctx.caps().name.clone(),
            Backend::Cpu => "cpu".into(),
        }
    }

    /// The Vulkan context, when running on a device.
    pub fn context(&self) -> Option<&Context> {
        match &self.shared.backend {
            Backend::Gpu(g) => Some(&g.ctx),
            Backend::Cpu => None,
        }
    }

    fn upload(&self, data: HostData) -> Result<Tensor> {
        let dtype = data.dtype;
        let len = data.len();
        let storage = match &self.shared.backend {
            Backend::Cpu => Storage::Cpu(data),
            Backend::Gpu(g) => {
                let mut bytes = data.bytes;
                // Whole 16-byte vectors: the cooperative-matrix kernels read operands as uvec4.
                bytes.resize(bytes.len().next_multiple_of(16).max(16), 0);
                Storage::Gpu(g.ctx.buffer_from_slice(&bytes, "tensor")?)
            }
        };
        Ok(Tensor { dtype, len, storage })
    }

    /// A tensor holding `data`.
    pub fn tensor<T: Element>(&self, data: &[T]) -> Result<Tensor> {
        self.upload(HostData::from_slice(data))
    }

    /// A tensor from raw host data.
    pub fn tensor_from_host(&self, data: &HostData) -> Result<Tensor> {
        self.upload(data.clone())
    }

    /// A zero-filled tensor of `len` elements.
    pub fn zeros(&self, dtype: DType, len: usize) -> Result<Tensor> {
        let bytes = len.checked_mul(dtype.size()).ok_or_else(|| Error::Invalid(format!("{len} elements of {} overflow the address space", dtype.name())))?;
        let mut v = crate::error::host_bytes("zero tensor", bytes)?;
        v.resize(bytes, 0);
        self.upload(HostData { dtype, bytes: v })
    }

    /// Reads a tensor back as raw host data.
    pub fn read_host(&self, t: &Tensor) -> Result<HostData> {
        match &t.storage {
            Storage::Cpu(h) => Ok(h.clone()),
            Storage::Gpu(buf) => match &self.shared.backend {
                Backend::Gpu(g) => read_buffer(g, buf, t.dtype, t.len),
                Backend::Cpu => Err(Error::WrongBackend { tensor: "a device", context: "the CPU" }),
            },
        }
    }

    /// Reads a tensor back as `T` (which must be its dtype).
    pub fn read<T: Element>(&self, t: &Tensor) -> Result<Vec<T>> {
        MatmulDesc::check_dtype("tensor", t.dtype, T::DTYPE)?;
        Ok(bytemuck::pod_collect_to_vec(&self.read_host(t)?.bytes))
    }

    /// `C = alpha * op(A) * op(B) + beta * C`.
    pub fn matmul(&self, desc: &MatmulDesc, a: &Tensor, b: &Tensor, c: &mut Tensor) -> Result<MatmulRun> {
        self.matmul_repeated(desc, a, b, c, 1)
    }

    /// Runs the matmul `iters` times (for timing; with `beta != 0` C accumulates each time).
    pub fn matmul_repeated(&self, desc: &MatmulDesc, a: &Tensor, b: &Tensor, c: &mut Tensor, iters: u32) -> Result<MatmulRun> {
        let r = desc.resolve()?;
        MatmulDesc::check_dtype("A", desc.dtype, a.dtype)?;
        MatmulDesc::check_dtype("B", desc.dtype, b.dtype)?;
        MatmulDesc::check_dtype("C", desc.out, c.dtype)?;
        MatmulDesc::check_len("A", r.a.len, a.len)?;
        MatmulDesc::check_len("B", r.b.len, b.len)?;
        MatmulDesc::check_len("C", r.c.len, c.len)?;
        let (c_dtype, c_len) = (c.dtype, c.len);
        match (&self.shared.backend, &a.storage, &b.storage, &mut c.storage) {
            (Backend::Cpu, Storage::Cpu(ha), Storage::Cpu(hb), Storage::Cpu(hc)) => {
                let start = std::time::Instant::now();
                for _ in 0..iters.max(1) {
                    cpu::matmul(desc, ha, hb, hc)?;
                }
                Ok(MatmulRun { path: MatmulPath::Cpu, time: start.elapsed() / iters.max(1), check: None })
            }
            (Backend::Gpu(g), Storage::Gpu(ba), Storage::Gpu(bb), Storage::Gpu(bc)) => {
                if desc.m == 0 || desc.n == 0 || desc.batch == 0 {
                    return Ok(MatmulRun { path: MatmulPath::Subgroup { tile: "empty".into() }, time: Duration::ZERO, check: None });
                }
                let plan = g.cached_plan(desc, &r)?;
                let plan = plan.lock().unwrap_or_else(|p| p.into_inner());
                if !self.verifying() {
                    let seconds = g.execute(&plan, ba, bb, bc, iters)?;
                    return Ok(MatmulRun { path: plan.path.clone(), time: Duration::from_secs_f64(seconds), check: None });
                }
                // Earlier repetitions unchecked; the last one against C as it was before it.
                let iters = iters.max(1);
                let mut seconds = if iters > 1 { g.execute(&plan, ba, bb, bc, iters - 1)? * (iters - 1) as f64 } else { 0.0 };
                let ha = read_buffer(g, ba, a.dtype, a.len)?;
                let hb = read_buffer(g, bb, b.dtype, b.len)?;
                let c_before = read_buffer(g, bc, c_dtype, c_len)?;
                seconds += g.execute(&plan, ba, bb, bc, 1)?;
                let got = read_buffer(g, bc, c_dtype, c_len)?;
                let report = check(desc, &ha, &hb, &c_before, &got, VERIFY_SEED)?;
                if !report.pass {
                    log::warn!(
                        "{desc:?} on {}: {} differs from the CPU reference beyond the tolerance (max abs error {:.3e}, max rel error {:.3e})",
                        g.ctx.caps().name,
                        plan.path,
                        report.max_abs_error,
                        report.max_rel_error
                    );
                }
                Ok(MatmulRun { path: plan.path.clone(), time: Duration::from_secs_f64(seconds / iters as f64), check: Some(report) })
            }
            (Backend::Cpu, ..) => Err(Error::WrongBackend { tensor: "a device", context: "the CPU" }),
            _ => Err(Error::WrongBackend { tensor: "the CPU", context: "a device" }),
        }
    }
}

/// Reads the `len` elements of `dtype` a device tensor holds in `buf` back to the host.
fn read_buffer(g: &Gpu, buf: &Buffer, dtype: DType, len: usize) -> Result<HostData> {
    // read_buffer needs &mut for mapping; copy into a readback buffer first.
    let mut staging = g.ctx.create_buffer(buf.size(), matbridge_runtime::MemoryKind::Readback, "tensor read")?;
    g.ctx.copy_buffer(buf, &staging)?;
    let mut bytes: Vec<u8> = g.ctx.read_buffer(&mut staging)?;
    bytes.truncate(len * dtype.size());
    Ok(HostData { dtype, bytes })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_one_context() {
        let a = Matbridge::cpu();
        let b = a.clone();
        b.set_verify(true);
        assert!(a.verifying());
        let desc = MatmulDesc::new(2, 2, 2, DType::F32);
        let x = a.tensor(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let mut c = b.zeros(DType::F32, 4).unwrap();
        // A tensor of one clone works with the other.
        let run = b.matmul(&desc, &x, &x, &mut c).unwrap();
        assert_eq!(a.read::<f32>(&c).unwrap(), vec![7.0, 10.0, 15.0, 22.0]);
        assert!(run.time < Duration::from_secs(10));
    }
}
