//! [`Matbridge`]: the entry point of the matmul API.
//!
//! ```no_run
//! use matbridge::{DType, Matbridge, MatbridgeOptions, MatmulDesc};
//! let mb = Matbridge::with_options(&MatbridgeOptions { verify: true, ..Default::default() })?;
//! let (m, n, k) = (64, 32, 48);
//! let a = mb.tensor(&vec![1.0f32; m * k])?;
//! let b = mb.tensor(&vec![2.0f32; k * n])?;
//! let mut c = mb.zeros::<f32>(&[m, n])?;
//! let run = mb.matmul(&MatmulDesc::new(m, n, k, DType::F32), &a, &b, &mut c)?;
//! let result: Vec<f32> = c.read()?;
//! assert!(run.check.is_none_or(|report| report.pass));
//! println!("{} in {:?}", run.path, run.time);
//! # Ok::<(), matbridge::Error>(())
//! ```

use super::batch::Batch;
use super::check::{check_resolved, CheckReport};
use super::options::{MatbridgeOptions, Strategy};
use super::plan::Plan;
use super::planner::Planner;
use super::tensor::{DynTensor, Storage, Tensor};
use super::{cpu, DType, Element, HostData, MatmulDesc, MatmulPath, Resolved};
use crate::error::{Error, Result};
use matbridge_runtime::{Buffer, Context, DeviceSelector};
use serde::Serialize;
use std::borrow::Cow;
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

pub(crate) enum Backend {
    // Boxed: the device side is large, the CPU side empty.
    Device(Box<Planner>),
    Cpu,
}

/// What a matmul did.
#[derive(Clone, Debug, Serialize)]
pub struct MatmulRun {
    #[serde(flatten)]
    pub path: MatmulPath,
    /// Time per run (GPU timestamps on a device, wall clock on the CPU); serialized as
    /// `seconds`.
    #[serde(rename = "seconds", serialize_with = "super::as_seconds")]
    pub time: Duration,
    /// With verification on ([`MatbridgeOptions::verify`], [`Matbridge::with_verify`]) and a
    /// device: the last run's result compared with the CPU reference.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<CheckReport>,
}

/// The matmul context: a device (or the CPU) with the strategy and verification setting of this
/// handle. Cheap to clone: clones, and the handles [`Matbridge::with_strategy`] and
/// [`Matbridge::with_verify`] make, share the device, its pipelines, plans and tuner.
#[derive(Clone)]
pub struct Matbridge {
    pub(crate) backend: Arc<Backend>,
    strategy: Strategy,
    verify: bool,
}

/// Seed of the rows and columns a verification samples in large results.
const VERIFY_SEED: u64 = 0x5eed;

/// A matmul checked against its operands and planned: what a call, or an item of a batch, runs.
pub(crate) struct Job<'t> {
    pub(crate) desc: MatmulDesc,
    pub(crate) r: Resolved,
    pub(crate) a: &'t DynTensor,
    pub(crate) b: &'t DynTensor,
    pub(crate) c: &'t DynTensor,
    /// On a device, for a problem with something to compute.
    pub(crate) plan: Option<Arc<Plan>>,
}

impl Job<'_> {
    pub(crate) fn path(&self) -> MatmulPath {
        match &self.plan {
            Some(plan) => plan.path.clone(),
            None if self.a.on_a_device() => MatmulPath::Empty,
            None => MatmulPath::Cpu,
        }
    }

    /// The device buffers of A, B and C.
    pub(crate) fn buffers(&self) -> Option<[&Buffer; 3]> {
        Some([self.a.buffer()?, self.b.buffer()?, self.c.buffer()?])
    }
}

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
        let device = |ctx: Context| Backend::Device(Box::new(Planner::new(ctx, &options.tuning)));
        let backend = match (&options.device, &options.strategy) {
            (DeviceChoice::Cpu, _) | (_, Strategy::Cpu) => Backend::Cpu,
            (DeviceChoice::Auto, _) => match Context::new_with_options(&DeviceSelector::Auto, &options.context) {
                Ok(ctx) if ctx.caps().device_type == matbridge_translator::profile::DeviceType::Cpu => {
                    log::info!("{} is a CPU driver: using the CPU path", ctx.caps().name);
                    Backend::Cpu
                }
                Ok(ctx) => device(ctx),
                Err(e) => {
                    log::warn!("no Vulkan device ({e}); using the CPU path");
                    Backend::Cpu
                }
            },
            (DeviceChoice::Device(sel), _) => device(Context::new_with_options(sel, &options.context)?),
        };
        let strategy = match backend {
            Backend::Cpu => Strategy::Cpu,
            Backend::Device(_) => options.strategy.clone(),
        };
        Ok(Matbridge { backend: Arc::new(backend), strategy, verify: options.verify })
    }

    /// A context on an already open device, with the default strategy and tuning.
    pub fn with_context(ctx: Context) -> Matbridge {
        let planner = Planner::new(ctx, &super::options::TuningOptions::default());
        Matbridge { backend: Arc::new(Backend::Device(Box::new(planner))), strategy: Strategy::Auto, verify: false }
    }

    /// The CPU path.
    pub fn cpu() -> Matbridge {
        Matbridge { backend: Arc::new(Backend::Cpu), strategy: Strategy::Cpu, verify: false }
    }

    /// A handle on the same device that runs matmuls with `strategy` (for example with a pinned
    /// cooperative-matrix tile). Tensors stay where they are, so a device context cannot switch
    /// to [`Strategy::Cpu`], nor the CPU context to a device strategy.
    pub fn with_strategy(&self, strategy: Strategy) -> Result<Matbridge> {
        let on_cpu = matches!(*self.backend, Backend::Cpu);
        if on_cpu != (strategy == Strategy::Cpu) {
            return Err(Error::StrategyUnavailable { strategy, context: self.device_name() });
        }
        Ok(Matbridge { strategy, ..self.clone() })
    }

    /// A handle on the same device with verification on or off: with it on, every matmul on a
    /// device reads its operands and result back and compares the result with the CPU reference
    /// (every element of results up to 2^18 elements, a seeded sample of whole rows and columns
    /// beyond; see [`super::check`]), reporting the largest errors in [`MatmulRun::check`] and
    /// logging a warning when an element is over the dtype's bound. The CPU path is the
    /// reference itself and is not checked.
    pub fn with_verify(&self, on: bool) -> Matbridge {
        Matbridge { verify: on, ..self.clone() }
    }

    /// Whether verification is on.
    pub fn verifying(&self) -> bool {
        self.verify
    }

    pub fn strategy(&self) -> &Strategy {
        &self.strategy
    }

    pub(crate) fn planner(&self) -> Option<&Planner> {
        match &*self.backend {
            Backend::Device(p) => Some(p),
            Backend::Cpu => None,
        }
    }

    /// Labels of the cooperative-matrix tile configurations the device can run for `desc`'s
    /// input and accumulator types (empty on the CPU or without cooperative matrices); any of
    /// them can be pinned with [`Strategy::CooperativeMatrix`].
    pub fn coop_configs(&self, desc: &MatmulDesc) -> Vec<String> {
        self.planner().map(|p| p.config_labels(desc)).unwrap_or_default()
    }

    /// The device's cooperative-matrix throughput ceiling per listed MMA shape (empty on the CPU
    /// or without cooperative matrices); see [`super::peak`].
    pub fn coop_peak(&self) -> Result<Vec<super::peak::Peak>> {
        match self.planner() {
            Some(p) => super::peak::measure(&p.gpu),
            None => Ok(Vec::new()),
        }
    }

    /// The device's name, or `cpu`.
    pub fn device_name(&self) -> String {
        match self.planner() {
            Some(p) => p.gpu.ctx.caps().name.clone(),
            None => "cpu".into(),
        }
    }

    /// The Vulkan context, when running on a device.
    pub fn context(&self) -> Option<&Context> {
        self.planner().map(|p| &p.gpu.ctx)
    }

    /// Elements of `dtype` (`bytes`) in `shape`, on this context's device or on the host.
    fn upload(&self, dtype: DType, bytes: Cow<'_, [u8]>, shape: Vec<usize>) -> Result<DynTensor> {
        match self.planner() {
            None => DynTensor::on_host(HostData { dtype, bytes: bytes.into_owned() }, shape),
            Some(p) => DynTensor::on_device(&p.gpu.ctx, dtype, &bytes, shape),
        }
    }

    /// A one-dimensional tensor holding `data`.
    pub fn tensor<T: Element>(&self, data: &[T]) -> Result<Tensor<T>> {
        self.tensor_with_shape(data, &[data.len()])
    }

    /// A tensor of `shape` holding `data` (as many elements as the shape has).
    pub fn tensor_with_shape<T: Element>(&self, data: &[T], shape: &[usize]) -> Result<Tensor<T>> {
        self.upload(T::DTYPE, Cow::Borrowed(bytemuck::cast_slice(data)), shape.to_vec())?.typed()
    }

    /// A zero-filled tensor of `shape`.
    pub fn zeros<T: Element>(&self, shape: &[usize]) -> Result<Tensor<T>> {
        self.dyn_zeros(T::DTYPE, shape)?.typed()
    }

    /// A one-dimensional tensor of raw host data, typed at run time.
    pub fn dyn_tensor(&self, data: &HostData) -> Result<DynTensor> {
        self.upload(data.dtype, Cow::Borrowed(&data.bytes), vec![data.len()])
    }

    /// A zero-filled tensor of `dtype` and `shape`, typed at run time.
    pub fn dyn_zeros(&self, dtype: DType, shape: &[usize]) -> Result<DynTensor> {
        let len = super::tensor::elements(shape)?;
        let bytes = len.checked_mul(dtype.size()).ok_or(Error::TooLarge { what: "tensor elements", value: len })?;
        let mut zeros = crate::error::host_bytes("zero tensor", bytes)?;
        zeros.resize(bytes, 0);
        self.upload(dtype, Cow::Owned(zeros), shape.to_vec())
    }

    /// Wraps a buffer made on this context's device as a tensor of `shape` (see
    /// [`Tensor::from_buffer`]).
    pub fn wrap_buffer<T: Element>(&self, buffer: Buffer, shape: &[usize]) -> Result<Tensor<T>> {
        match self.context() {
            Some(ctx) => Tensor::from_buffer(ctx, buffer, shape),
            None => Err(Error::WrongBackend { tensor: "a device", context: "the CPU" }),
        }
    }

    /// `C = alpha * op(A) * op(B) + beta * C`, with `A` and `B` of `desc.dtype` and `C` of
    /// `desc.out`.
    pub fn matmul<A: Element, C: Element>(&self, desc: &MatmulDesc, a: &Tensor<A>, b: &Tensor<A>, c: &mut Tensor<C>) -> Result<MatmulRun> {
        self.matmul_repeated(desc, a, b, c, 1)
    }

    /// Runs the matmul `iters` times in one submission (for timing; with `beta != 0` C
    /// accumulates each time).
    pub fn matmul_repeated<A: Element, C: Element>(&self, desc: &MatmulDesc, a: &Tensor<A>, b: &Tensor<A>, c: &mut Tensor<C>, iters: u32) -> Result<MatmulRun> {
        let job = self.job(desc, &a.raw, &b.raw, &c.raw)?;
        self.run(&job, iters)
    }

    /// [`Matbridge::matmul`] on tensors typed at run time.
    pub fn matmul_dyn(&self, desc: &MatmulDesc, a: &DynTensor, b: &DynTensor, c: &mut DynTensor) -> Result<MatmulRun> {
        self.matmul_dyn_repeated(desc, a, b, c, 1)
    }

    /// [`Matbridge::matmul_repeated`] on tensors typed at run time.
    pub fn matmul_dyn_repeated(&self, desc: &MatmulDesc, a: &DynTensor, b: &DynTensor, c: &mut DynTensor, iters: u32) -> Result<MatmulRun> {
        let job = self.job(desc, a, b, c)?;
        self.run(&job, iters)
    }

    /// A batch: matmuls and kernel launches recorded now and run together by
    /// [`Batch::submit`], in one submission with one wait.
    pub fn batch(&self) -> Batch<'_> {
        Batch::new(self)
    }

    /// Resolves `desc` (once), checks it against the operands and plans it.
    pub(crate) fn job<'t>(&self, desc: &MatmulDesc, a: &'t DynTensor, b: &'t DynTensor, c: &'t DynTensor) -> Result<Job<'t>> {
        let r = desc.resolve()?;
        for (operand, expected, t) in [("A", desc.dtype, a), ("B", desc.dtype, b), ("C", desc.out, c)] {
            if t.dtype() != expected {
                return Err(Error::DTypeMismatch { operand, expected, given: t.dtype() });
            }
        }
        for (operand, expected, t) in [("A", r.a.len, a), ("B", r.b.len, b), ("C", r.c.len, c)] {
            if t.len() < expected {
                return Err(Error::SizeMismatch { operand, expected, given: t.len() });
            }
        }
        if std::ptr::eq(c, a) || std::ptr::eq(c, b) {
            return Err(Error::AliasedOutput);
        }
        let planner = self.planner();
        for t in [a, b, c] {
            match (planner, t.on_a_device()) {
                (None, true) => return Err(Error::WrongBackend { tensor: "a device", context: "the CPU" }),
                (Some(_), false) => return Err(Error::WrongBackend { tensor: "the CPU", context: "a device" }),
                _ => {}
            }
        }
        let plan = match planner {
            Some(p) if desc.m > 0 && desc.n > 0 && desc.batch > 0 => Some(p.plan(desc, &r, &self.strategy)?),
            _ => None,
        };
        Ok(Job { desc: desc.clone(), r, a, b, c, plan })
    }

    /// Runs a job `iters` times, checked when verification is on.
    pub(crate) fn run(&self, job: &Job<'_>, iters: u32) -> Result<MatmulRun> {
        let iters = iters.max(1);
        let (Some(planner), Some(plan), Some([ba, bb, bc])) = (self.planner(), &job.plan, job.buffers()) else {
            if job.a.on_a_device() {
                return Ok(MatmulRun { path: MatmulPath::Empty, time: Duration::ZERO, check: None });
            }
            let start = std::time::Instant::now();
            for _ in 0..iters {
                run_on_host(job)?;
            }
            return Ok(MatmulRun { path: MatmulPath::Cpu, time: start.elapsed() / iters, check: None });
        };
        let gpu = &planner.gpu;
        if !self.verify {
            let seconds = plan.execute(gpu, ba, bb, bc, iters)?;
            return Ok(MatmulRun { path: plan.path.clone(), time: Duration::from_secs_f64(seconds), check: None });
        }
        // Earlier repetitions unchecked; the last one against C as it was before it.
        let mut seconds = if iters > 1 { plan.execute(gpu, ba, bb, bc, iters - 1)? * (iters - 1) as f64 } else { 0.0 };
        let (ha, hb, c_before) = (job.a.read_host()?, job.b.read_host()?, job.c.read_host()?);
        seconds += plan.execute(gpu, ba, bb, bc, 1)?;
        let got = job.c.read_host()?;
        let report = check_resolved(&job.desc, &job.r, &ha, &hb, &c_before, &got, VERIFY_SEED)?;
        if !report.pass {
            log::warn!(
                "{:?} on {}: {} differs from the CPU reference beyond the tolerance (max abs error {:.3e}, max rel error {:.3e})",
                job.desc,
                gpu.ctx.caps().name,
                plan.path,
                report.max_abs_error,
                report.max_rel_error
            );
        }
        Ok(MatmulRun { path: plan.path.clone(), time: Duration::from_secs_f64(seconds / iters as f64), check: Some(report) })
    }
}

/// Host matmuls run one at a time (each already uses every core), so that one holding the locks
/// of its three tensors never waits for another holding some of them.
static HOST_JOBS: std::sync::Mutex<()> = std::sync::Mutex::new(());

/// Runs a job of host tensors on the CPU (C never aliases A or B: [`Matbridge::job`] refuses it).
pub(crate) fn run_on_host(job: &Job<'_>) -> Result<()> {
    fn host(t: &DynTensor) -> Result<&std::sync::Mutex<HostData>> {
        match &t.storage {
            Storage::Host(data) => Ok(data),
            Storage::Device { .. } => Err(Error::WrongBackend { tensor: "a device", context: "the CPU" }),
        }
    }
    let (a, b, c) = (host(job.a)?, host(job.b)?, host(job.c)?);
    let _one_at_a_time = HOST_JOBS.lock().unwrap_or_else(|p| p.into_inner());
    fn lock(m: &std::sync::Mutex<HostData>) -> std::sync::MutexGuard<'_, HostData> {
        m.lock().unwrap_or_else(|p| p.into_inner())
    }
    let ga = lock(a);
    // A and B may be one tensor: lock it once.
    let gb = if std::ptr::eq(a, b) { None } else { Some(lock(b)) };
    let mut gc = lock(c);
    cpu::matmul_resolved(&job.desc, &job.r, &ga, gb.as_deref().unwrap_or(&ga), &mut gc)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clones_share_one_context() {
        let a = Matbridge::cpu();
        let b = a.with_verify(true);
        assert!(!a.verifying() && b.verifying());
        let desc = MatmulDesc::new(2, 2, 2, DType::F32);
        let x = a.tensor(&[1.0f32, 2.0, 3.0, 4.0]).unwrap();
        let mut c = b.zeros::<f32>(&[2, 2]).unwrap();
        // A tensor of one handle works with the other.
        let run = b.matmul(&desc, &x, &x, &mut c).unwrap();
        assert_eq!(c.read().unwrap(), vec![7.0, 10.0, 15.0, 22.0]);
        assert!(run.time < Duration::from_secs(10));
        assert!(a.with_strategy(Strategy::Subgroup).is_err(), "the CPU context has no subgroup kernels");
    }
}
