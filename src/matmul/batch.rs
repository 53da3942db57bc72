//! Batches: several matmuls and kernel launches recorded, then run together with one wait.
//!
//! ```no_run
//! # use matbridge::{DType, Matbridge, MatmulDesc};
//! # let mb = Matbridge::new(&Default::default())?;
//! # let desc = MatmulDesc::new(64, 64, 64, DType::F32);
//! # let (a, b, e) = (mb.zeros::<f32>(&[64, 64])?, mb.zeros::<f32>(&[64, 64])?, mb.zeros::<f32>(&[64, 64])?);
//! # let (c, d) = (mb.zeros::<f32>(&[64, 64])?, mb.zeros::<f32>(&[64, 64])?);
//! let mut batch = mb.batch();
//! batch.matmul(&desc, &a, &b, &c)?; // C = A B
//! batch.matmul(&desc, &c, &e, &d)?; // D = C E, after the first
//! let run = batch.submit()?;        // one submission, one wait
//! println!("{:?} in {:?}", run.paths, run.time);
//! # Ok::<(), matbridge::Error>(())
//! ```
//!
//! Each item is checked and planned when it is recorded, so a bad one is an error there and
//! nothing runs. On a device, [`Batch::submit`] records every item's dispatches into one
//! command buffer, each after the previous one has finished writing (a memory barrier between
//! them), and waits once. Outputs are borrowed shared, so an item can read what an earlier one
//! wrote; they are written when the batch runs.
//!
//! With verification on, the items run one by one instead, each matmul checked against the CPU
//! reference as [`super::api::Matbridge::matmul`] checks it. On the CPU the matmuls run in order
//! on the host; kernel launches need a device.

use super::api::{run_on_host, Job, Matbridge, MatmulRun};
use super::check::CheckReport;
use super::plan::Bound;
use super::tensor::{DynTensor, Tensor};
use super::{Element, MatmulDesc, MatmulPath};
use crate::error::{Error, Result};
use matbridge_runtime::{Dispatch, Kernel, KernelArg, NdRange, PreparedLaunch};
use serde::Serialize;
use std::time::Duration;

enum Item<'t> {
    // Boxed: a job carries its problem, strides and plan.
    Matmul(Box<Job<'t>>),
    Launch(PreparedLaunch<'t>),
}

/// Matmuls and kernel launches to run together; see the module documentation.
pub struct Batch<'t> {
    mb: &'t Matbridge,
    items: Vec<Item<'t>>,
}

/// What a batch did.
#[derive(Clone, Debug, Serialize)]
pub struct BatchRun {
    /// The path each matmul took, in recording order.
    pub paths: Vec<MatmulPath>,
    /// Time of the whole batch (GPU timestamps on a device, wall clock on the CPU).
    #[serde(rename = "seconds", serialize_with = "super::as_seconds")]
    pub time: Duration,
    /// With verification on: each matmul's check, in recording order.
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub checks: Vec<CheckReport>,
}

impl<'t> Batch<'t> {
    pub(crate) fn new(mb: &'t Matbridge) -> Batch<'t> {
        Batch { mb, items: Vec::new() }
    }

    /// Records `C = alpha * op(A) * op(B) + beta * C`.
    pub fn matmul<A: Element, C: Element>(&mut self, desc: &MatmulDesc, a: &'t Tensor<A>, b: &'t Tensor<A>, c: &'t Tensor<C>) -> Result<&mut Self> {
        self.matmul_dyn(desc, a.as_dyn(), b.as_dyn(), c.as_dyn())
    }

    /// [`Batch::matmul`] on tensors typed at run time.
    pub fn matmul_dyn(&mut self, desc: &MatmulDesc, a: &'t DynTensor, b: &'t DynTensor, c: &'t DynTensor) -> Result<&mut Self> {
        let job = self.mb.job(desc, a, b, c)?;
        self.items.push(Item::Matmul(Box::new(job)));
        Ok(self)
    }

    /// Records a launch of an OpenCL-style kernel (see [`matbridge_runtime::Context::launch`]);
    /// its buffer arguments stay borrowed until the batch has run.
    pub fn launch(&mut self, kernel: &Kernel, range: &NdRange, args: &[KernelArg<'t>]) -> Result<&mut Self> {
        let ctx = self.mb.context().ok_or(Error::WrongBackend { tensor: "a kernel launch", context: "the CPU" })?;
        let launch = ctx.prepare_launch(kernel, range, args, &[])?;
        self.items.push(Item::Launch(launch));
        Ok(self)
    }

    /// Number of items recorded.
    pub fn len(&self) -> usize {
        self.items.len()
    }

    pub fn is_empty(&self) -> bool {
        self.items.is_empty()
    }

    /// Runs every item in recording order and waits for the last.
    pub fn submit(self) -> Result<BatchRun> {
        let paths = self.items.iter().filter_map(|i| if let Item::Matmul(job) = i { Some(job.path()) } else { None }).collect();
        let Some(ctx) = self.mb.context() else {
            let start = std::time::Instant::now();
            for item in &self.items {
                if let Item::Matmul(job) = item {
                    run_on_host(job)?;
                }
            }
            return Ok(BatchRun { paths, time: start.elapsed(), checks: Vec::new() });
        };
        if self.mb.verifying() {
            return self.submit_one_by_one(ctx, paths);
        }
        // Each matmul's plan bound to its buffers; launches bind none.
        let bound: Vec<Vec<Bound<'_>>> = self
            .items
            .iter()
            .map(|item| match item {
                Item::Matmul(job) => job.plan.as_ref().zip(job.buffers()).map(|(plan, [a, b, c])| plan.bind(a, b, c)).unwrap_or_default(),
                Item::Launch(_) => Vec::new(),
            })
            .collect();
        let dispatches: Vec<Dispatch<'_>> = self
            .items
            .iter()
            .zip(&bound)
            .flat_map(|(item, steps)| {
                let launch = if let Item::Launch(launch) = item { Some(launch.dispatch()) } else { None };
                steps.iter().map(Bound::dispatch).chain(launch)
            })
            .collect();
        if dispatches.is_empty() {
            return Ok(BatchRun { paths, time: Duration::ZERO, checks: Vec::new() });
        }
        let stats = ctx.run(&dispatches)?;
        Ok(BatchRun { paths, time: stats.gpu_time.unwrap_or(stats.wall_time), checks: Vec::new() })
    }

    /// Verification: each item in its own submission, each matmul checked.
    fn submit_one_by_one(&self, ctx: &matbridge_runtime::Context, paths: Vec<MatmulPath>) -> Result<BatchRun> {
        let mut time = Duration::ZERO;
        let mut checks = Vec::new();
        for item in &self.items {
            match item {
                Item::Matmul(job) => {
                    let MatmulRun { time: t, check, .. } = self.mb.run(job, 1)?;
                    time += t;
                    checks.extend(check);
                }
                Item::Launch(launch) => {
                    let stats = ctx.run(&[launch.dispatch()])?;
                    time += stats.gpu_time.unwrap_or(stats.wall_time);
                }
            }
        }
        Ok(BatchRun { paths, time, checks })
    }
}
