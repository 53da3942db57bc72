//! The planner: one matmul problem (already resolved) in, one plan out.
//!
//! Under [`Strategy::Auto`] and [`Strategy::CooperativeMatrix`], a problem whose input and
//! accumulator types have a cooperative-matrix kernel family the device can run (a listed MMA
//! shape, sub-groups of 32) takes that path: its candidates are the general kernel's
//! configurations (`super::coop`) and, for problems that fill whole tiles in a plain stored
//! layout, the wide-tile kernel's (`super::coop_wide`). The autotuner ([`super::tune`]) measures
//! them on the first problem of its kind and remembers the fastest; a pinned tile replaces its
//! choice. Every other problem, and every problem under [`Strategy::Subgroup`], takes the tiled
//! kernels (`super::tiled`). Plans are cached per problem and strategy, so that repeated
//! matmuls of one shape allocate nothing.

use super::coop::{self, Layout};
use super::family::{family_for, Family};
use super::gpu::Gpu;
use super::options::{Strategy, TuningOptions};
use super::plan::{Plan, Repack};
use super::tune::{SizeClass, Tuner, TuningKey};
use super::{coop_wide, tiled, AccType, DType, MatmulDesc, Operand, Resolved, Strides};
use crate::error::{Error, Result};
use matbridge_runtime::Context;
use matbridge_shaders::{CoopConfig, WideConfig};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};

/// Plans kept per device before the cache is cleared.
const PLAN_CACHE_LIMIT: usize = 64;

/// Problems larger than this in M, N or K are tuned on a problem of this size (same layout and
/// types): the ranking of configurations holds, and the measurement stays short and steady.
const TUNE_EXTENT: usize = 4096;

/// What a plan is made for: the problem (with alpha and beta by their bits) and the strategy.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
struct PlanKey {
    shape: [usize; 4],
    types: (DType, AccType, DType),
    operands: [Operand; 3],
    scale: [u32; 2],
    strategy: Strategy,
}

impl PlanKey {
    fn new(desc: &MatmulDesc, strategy: &Strategy) -> PlanKey {
        PlanKey {
            shape: [desc.m, desc.n, desc.k, desc.batch],
            types: (desc.dtype, desc.acc, desc.out),
            operands: [desc.a, desc.b, desc.c],
            scale: [desc.alpha.to_bits(), desc.beta.to_bits()],
            strategy: strategy.clone(),
        }
    }
}

/// A configuration the autotuner may pick: of the general kernel, or of the wide-tile kernel
/// for problems that fit it.
#[derive(Clone, Copy)]
enum Candidate {
    Tile(&'static CoopConfig),
    Wide(&'static WideConfig),
}

impl Candidate {
    fn label(&self) -> String {
        match self {
            Candidate::Tile(c) => c.label(),
            Candidate::Wide(w) => w.label(),
        }
    }
}

/// A device, its pipelines, the autotuner's choices and the plans made so far.
pub struct Planner {
    pub gpu: Gpu,
    tuner: Tuner,
    plans: Mutex<HashMap<PlanKey, Arc<Plan>>>,
}

impl Planner {
    pub fn new(ctx: Context, tuning: &TuningOptions) -> Planner {
        Planner { gpu: Gpu::new(ctx), tuner: Tuner::load(tuning), plans: Mutex::new(HashMap::new()) }
    }

    /// The plan for `desc` (resolved as `r`) under `strategy`, made on first use.
    pub fn plan(&self, desc: &MatmulDesc, r: &Resolved, strategy: &Strategy) -> Result<Arc<Plan>> {
        let key = PlanKey::new(desc, strategy);
        if let Some(p) = self.plans.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return Ok(p.clone());
        }
        let plan = Arc::new(self.make(desc, r, strategy)?);
        let mut plans = self.plans.lock().unwrap_or_else(|p| p.into_inner());
        if plans.len() >= PLAN_CACHE_LIMIT {
            plans.clear();
        }
        plans.insert(key, plan.clone());
        Ok(plan)
    }

    fn make(&self, desc: &MatmulDesc, r: &Resolved, strategy: &Strategy) -> Result<Plan> {
        let coop = match strategy {
            Strategy::Auto => self.plan_coop(desc, r, None)?,
            Strategy::CooperativeMatrix { tile } => self.plan_coop(desc, r, tile.as_deref())?,
            Strategy::Subgroup | Strategy::Cpu => None,
        };
        match coop {
            Some(plan) => Ok(plan),
            None => tiled::plan(&self.gpu, desc, r),
        }
    }

    /// The kernel family for `desc` when the device can run cooperative-matrix kernels.
    fn family(&self, desc: &MatmulDesc) -> Option<Family> {
        family_for(desc).filter(|_| self.gpu.ctx.caps().subgroup_size == 32)
    }

    /// Labels of the cooperative-matrix configurations this device can run for `desc`'s kernel
    /// family (empty when it has none).
    pub fn config_labels(&self, desc: &MatmulDesc) -> Vec<String> {
        match self.family(desc) {
            Some(family) => {
                let wide = coop_wide::candidates(&self.gpu, &family);
                coop::candidates(&self.gpu, &family, None).iter().map(|c| c.label()).chain(wide.iter().map(|w| w.label())).collect()
            }
            None => Vec::new(),
        }
    }

    /// A cooperative-matrix plan with the configuration `tile` or the autotuner's choice, or
    /// `None` when the device or the operand layout does not fit.
    fn plan_coop(&self, desc: &MatmulDesc, r: &Resolved, tile: Option<&str>) -> Result<Option<Plan>> {
        let gpu = &self.gpu;
        let Some(family) = self.family(desc) else { return Ok(None) };
        let layout = Layout::for_problem(desc, r, &family);
        let mut configs: Vec<Candidate> = coop::candidates(gpu, &family, Some((layout.a_cm, layout.b_colmajor))).into_iter().map(Candidate::Tile).collect();
        if configs.is_empty() {
            return Ok(None);
        }
        let wide: Vec<Candidate> = match wide_operands(r, &layout) {
            Some((rw, _)) => coop_wide::candidates(gpu, &family).into_iter().filter(|w| coop_wide::fits(desc, &rw, &family, w)).map(Candidate::Wide).collect(),
            None => Vec::new(),
        };
        let caps = gpu.ctx.caps();
        let key = TuningKey {
            device: caps.name.clone(),
            driver: caps.driver_version.clone(),
            family: family.name,
            dtype: desc.dtype,
            a_m_contiguous: layout.a_cm,
            b_k_contiguous: layout.b_colmajor,
            size: SizeClass::of(desc.m.max(desc.n)),
            padded: layout.padded_k.is_some(),
            // The wide configurations a problem fits depend on its divisibility: they are part of
            // the key, so that a remembered choice is always one of the problem's candidates.
            wide: wide.iter().map(Candidate::label).collect(),
        };
        configs.extend(wide);
        let labels: Vec<String> = configs.iter().map(Candidate::label).collect();
        let names: Vec<&str> = labels.iter().map(String::as_str).collect();
        let find = |label: &str| configs.iter().copied().find(|c| c.label() == label);
        if let Some(label) = tile {
            return match find(label) {
                Some(config) => self.build(desc, r, &family, &layout, config),
                None => Err(Error::UnknownConfiguration { label: label.to_string(), available: labels.clone() }),
            };
        }
        let choice = self.tuner.choose(&key, &names, |label| match find(label) {
            Some(config) => self.measure(desc, r, &family, &layout, config),
            None => Ok(f64::INFINITY),
        })?;
        match find(&choice) {
            Some(config) => self.build(desc, r, &family, &layout, config),
            None => Ok(None),
        }
    }

    fn build(&self, desc: &MatmulDesc, r: &Resolved, family: &Family, layout: &Layout, config: Candidate) -> Result<Option<Plan>> {
        match config {
            Candidate::Tile(c) => coop::build(&self.gpu, desc, r, family, layout, c),
            Candidate::Wide(w) => match wide_operands(r, layout) {
                Some((rw, b_copy)) => coop_wide::build(&self.gpu, desc, &rw, family, w, b_copy.as_ref()),
                None => Ok(None),
            },
        }
    }

    /// Times one configuration on (uninitialised) operands of the problem's shape, each extent
    /// capped at [`TUNE_EXTENT`].
    fn measure(&self, desc: &MatmulDesc, r: &Resolved, family: &Family, layout: &Layout, config: Candidate) -> Result<f64> {
        let gpu = &self.gpu;
        let capped;
        let (desc, r, layout) = if desc.m.max(desc.n).max(desc.k) > TUNE_EXTENT {
            let mut small = desc.clone();
            (small.m, small.n, small.k) = (desc.m.min(TUNE_EXTENT), desc.n.min(TUNE_EXTENT), desc.k.min(TUNE_EXTENT));
            // Packed operands of the capped shape, stored as the original ones are.
            for op in [&mut small.a, &mut small.b, &mut small.c] {
                op.ld = None;
                op.batch_stride = None;
            }
            let rs = small.resolve()?;
            let capped_layout = Layout::with_padding(&small, &rs, family, layout.padded_k.is_some(), layout.transposed);
            capped = (small, rs, capped_layout);
            (&capped.0, &capped.1, &capped.2)
        } else {
            (desc, r, layout)
        };
        let Some(plan) = self.build(desc, r, family, layout, config)? else { return Ok(f64::INFINITY) };
        let bytes = |len: usize, dtype: DType| ((len * dtype.size()).next_multiple_of(16).max(16)) as u64;
        let kind = matbridge_runtime::MemoryKind::DeviceLocal;
        let a = gpu.ctx.create_buffer(bytes(r.a.len, desc.dtype), kind, "tune A")?;
        let b = gpu.ctx.create_buffer(bytes(r.b.len, desc.dtype), kind, "tune B")?;
        let c = gpu.ctx.create_buffer(bytes(r.c.len, desc.out), kind, "tune C")?;
        // GPUs drop to idle clocks while the host compiles the candidate and take ~0.2 s to climb
        // back: keep the device busy for ~0.2 s before timing ~20 ms, so that every candidate is
        // measured at the clocks a sustained workload gets.
        let warm = std::time::Instant::now();
        let mut once = plan.execute(gpu, &a, &b, &c, 1)?.max(1e-6);
        while warm.elapsed().as_secs_f64() < 0.2 {
            let iters = (0.02 / once).clamp(1.0, 500.0) as u32;
            once = plan.execute(gpu, &a, &b, &c, iters)?.max(1e-6);
        }
        plan.execute(gpu, &a, &b, &c, (0.02 / once).clamp(2.0, 500.0) as u32)
    }
}

/// The operands as the wide-tile kernel would read them under `layout`: A and C as stored, B as
/// stored or as the layout's copy of it (large 8-bit problems have row-major B copied
/// K-contiguous), with that copy; `None` when A is copied or the operands are padded.
fn wide_operands(r: &Resolved, layout: &Layout) -> Option<(Resolved, Option<Repack>)> {
    if layout.a_repack.is_some() || layout.padded_k.is_some() {
        return None;
    }
    let Some(copy) = layout.b_repack else { return Some((*r, None)) };
    let (row, col) = if layout.b_colmajor { (1, layout.b_ld) } else { (layout.b_ld, 1) };
    let b = Strides { row, col, batch: layout.b_batch, len: copy.batches * copy.dst_lines * copy.ld };
    Some((Resolved { b, ..*r }, Some(copy)))
}
