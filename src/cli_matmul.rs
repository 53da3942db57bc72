//! `matbridge matmul` and `matbridge bench`: run, time and check matmuls from the command line.

use crate::matmul::api::Matbridge;
use crate::matmul::check::{check, CheckReport};
use crate::matmul::{AccType, DType, HostData, MatmulDesc, MatmulPath, Operand};
use crate::Result;
use rand::{Rng, SeedableRng};
use serde::Serialize;

/// One measured matmul.
#[derive(Clone, Debug, Serialize)]
pub struct MatmulResult {
    pub device: String,
    #[serde(flatten)]
    pub path: MatmulPath,
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub batch: usize,
    pub dtype: DType,
    pub acc: &'static str,
    pub out: DType,
    /// Seconds per matmul (GPU timestamps; wall clock on the CPU).
    pub seconds: f64,
    /// Seconds per matmul including submission and synchronisation (median of 7 to 31 host-timed
    /// single calls).
    pub seconds_with_overhead: f64,
    pub tflops: f64,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_abs_error: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub max_rel_error: Option<f64>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub check: Option<&'static str>,
}

/// Options of one run.
#[derive(Clone, Debug)]
pub struct MatmulOptions {
    pub m: usize,
    pub n: usize,
    pub k: usize,
    pub batch: usize,
    pub dtype: DType,
    pub acc: Option<AccType>,
    pub out: Option<DType>,
    pub ta: bool,
    pub tb: bool,
    pub iters: u32,
    pub check: bool,
}

/// Random operands of `dtype`, small integers for integer types.
pub fn random_host(dtype: DType, len: usize, seed: u64) -> HostData {
    let mut rng = rand::rngs::SmallRng::seed_from_u64(seed);
    let vals: Vec<f32> = (0..len)
        .map(|_| match dtype {
            DType::S8 => rng.random_range(-128i32..=127) as f32,
            DType::U8 => rng.random_range(0i32..=255) as f32,
            DType::S32 => rng.random_range(-100i32..100) as f32,
            _ => rng.random_range(-1.0f32..1.0),
        })
        .collect();
    HostData::from_f32(dtype, &vals)
}

pub fn desc_for(o: &MatmulOptions) -> MatmulDesc {
    let mut desc = MatmulDesc::new(o.m, o.n, o.k, o.dtype);
    desc.batch = o.batch;
    if let Some(acc) = o.acc {
        desc.acc = acc;
        if acc == AccType::F16 {
            desc.out = DType::F16;
        }
    }
    if let Some(out) = o.out {
        desc.out = out;
    }
    if o.ta {
        desc.a = Operand { transpose: true, ..Operand::row_major() };
    }
    if o.tb {
        desc.b = Operand { transpose: true, ..Operand::row_major() };
    }
    desc
}

/// Host-timed single calls whose median is reported as the time with dispatch overhead: at least
/// `SINGLE_CALLS.0`, and up to `SINGLE_CALLS.1` while they take less than `SINGLE_BUDGET` (a burst
/// of slow submissions can span several calls; `benches/vs_torch.py` times cuBLAS the same way).
const SINGLE_CALLS: (usize, usize) = (7, 31);
const SINGLE_BUDGET: std::time::Duration = std::time::Duration::from_millis(250);

/// How long [`run_matmul`] keeps a GPU busy before timing.
const WARM_UP: std::time::Duration = std::time::Duration::from_millis(300);

/// Runs, times and optionally checks one matmul.
pub fn run_matmul(mb: &Matbridge, o: &MatmulOptions) -> Result<MatmulResult> {
    let desc = desc_for(o);
    let r = desc.resolve()?;
    // Operands, result and the f32 staging of the random values, all at once: a problem too large
    // for this machine's memory fails here with its size, not in the allocator.
    let total = r.a.len.saturating_add(r.b.len).saturating_mul(desc.dtype.size() + 4).saturating_add(r.c.len.saturating_mul(2 * desc.out.size()));
    drop(crate::error::host_bytes(&format!("{}x{}x{} x{} {} matmul", o.m, o.n, o.k, o.batch, desc.dtype.name()), total)?);
    let a = random_host(desc.dtype, r.a.len, 1);
    let b = random_host(desc.dtype, r.b.len, 2);
    let c0 = HostData { dtype: desc.out, bytes: vec![0; r.c.len * desc.out.size()] };
    let ta = mb.dyn_tensor(&a)?;
    let tb = mb.dyn_tensor(&b)?;
    let mut tc = mb.dyn_tensor(&c0)?;
    // Warm-up: compiles pipelines, then keeps the device busy for WARM_UP so that it runs at the
    // clocks of a sustained workload (GPUs drop to idle clocks within a second of idling, e.g.
    // while the host generates operands, and take ~0.2 s to climb back). Then one host-timed
    // dispatch, then the timed batch.
    let first = mb.matmul_dyn(&desc, &ta, &tb, &mut tc)?;
    // (CPU Vulkan drivers have no clocks to raise.)
    let gpu = mb.context().is_some_and(|c| c.caps().device_type != matbridge_translator::profile::DeviceType::Cpu);
    if first.path != MatmulPath::Cpu && gpu {
        let warm = std::time::Instant::now();
        let mut batch = 1;
        while warm.elapsed() < WARM_UP {
            mb.matmul_dyn_repeated(&desc, &ta, &tb, &mut tc, batch)?;
            batch = (batch * 2).min(256);
        }
    }
    // The median of host-timed single calls (one sample swings with host scheduling).
    let mut singles = Vec::with_capacity(SINGLE_CALLS.1);
    let timing = std::time::Instant::now();
    while singles.len() < SINGLE_CALLS.0 || (singles.len() < SINGLE_CALLS.1 && timing.elapsed() < SINGLE_BUDGET) {
        let start = std::time::Instant::now();
        mb.matmul_dyn(&desc, &ta, &tb, &mut tc)?;
        singles.push(start.elapsed().as_secs_f64());
    }
    singles.sort_by(f64::total_cmp);
    let with_overhead = singles[singles.len() / 2];
    let run = mb.matmul_dyn_repeated(&desc, &ta, &tb, &mut tc, o.iters.max(1))?;
    let mut result = MatmulResult {
        device: mb.device_name(),
        path: run.path,
        m: o.m,
        n: o.n,
        k: o.k,
        batch: o.batch,
        dtype: desc.dtype,
        acc: desc.acc.name(),
        out: desc.out,
        seconds: run.time.as_secs_f64(),
        // A single call includes everything the batch's per-call GPU time does; a lower median
        // is scheduling noise, never shown as faster than the work it includes.
        seconds_with_overhead: with_overhead.max(run.time.as_secs_f64()),
        tflops: desc.flops() / run.time.as_secs_f64().max(1e-12) / 1e12,
        max_abs_error: None,
        max_rel_error: None,
        check: None,
    };
    if o.check {
        let got = tc.read_host()?;
        let CheckReport { max_abs_error, max_rel_error, pass, .. } = check(&desc, &a, &b, &c0, &got, 3)?;
        result.max_abs_error = Some(max_abs_error);
        result.max_rel_error = Some(max_rel_error);
        result.check = Some(if pass { "pass" } else { "fail" });
    }
    Ok(result)
}

/// A throughput in the unit that fits: TFLOP/s from 1 up, GFLOP/s below.
pub fn rate(tflops: f64) -> String {
    if tflops >= 1.0 {
        format!("{tflops:.2} TFLOP/s")
    } else {
        format!("{:.2} GFLOP/s", tflops * 1e3)
    }
}

/// Human-readable line for one result.
pub fn describe(r: &MatmulResult) -> String {
    // The CPU path has no dispatch: its single-call time is just another sample of the same work.
    let dispatch = if r.path == MatmulPath::Cpu { String::new() } else { format!(" ({:.4} ms with dispatch)", r.seconds_with_overhead * 1e3) };
    let mut s = format!(
        "{} {}x{}x{}{} {}->{} ({} acc): {} | {:.4} ms{} | {}",
        r.device,
        r.m,
        r.n,
        r.k,
        if r.batch > 1 { format!(" x{}", r.batch) } else { String::new() },
        r.dtype,
        r.out,
        r.acc,
        r.path,
        r.seconds * 1e3,
        dispatch,
        rate(r.tflops)
    );
    if let (Some(a), Some(rel), Some(c)) = (r.max_abs_error, r.max_rel_error, r.check) {
        s.push_str(&format!(" | max abs error {a:.3e}, max rel error {rel:.3e}: {c}"));
    }
    s
}

/// The benchmark table's problems: (dtype, acc, out).
pub const BENCH_TYPES: [(DType, AccType, DType); 5] = [
    (DType::F32, AccType::F32, DType::F32),
    (DType::F16, AccType::F32, DType::F32),
    (DType::F16, AccType::F16, DType::F16),
    (DType::Bf16, AccType::F32, DType::F32),
    (DType::S8, AccType::S32, DType::S32),
];

/// Sizes `matbridge bench` runs by default on this backend.
pub fn bench_sizes(mb: &Matbridge) -> Vec<usize> {
    let all = vec![256, 512, 1024, 2048, 4096, 8192];
    let slow = match mb.context() {
        None => true,
        Some(ctx) => ctx.caps().device_type == crate::translator::profile::DeviceType::Cpu,
    };
    if slow {
        all.into_iter().filter(|s| *s <= 1024).collect()
    } else {
        all
    }
}

/// Times the naive per-element kernel (one invocation per C element, `shaders/wgsl/matmul_naive.wgsl`)
/// against the subgroup path on f32 `size`^3: (naive seconds, subgroup seconds), each the best of
/// three interleaved rounds of `iters` runs (CPU drivers share the host's cores with everything
/// else, and one disturbed round would decide the ratio).
pub fn naive_vs_subgroup(mb: &Matbridge, size: usize, iters: u32) -> Result<(f64, f64)> {
    use matbridge_runtime::{Dispatch, MemoryKind, PipelineDesc};
    let ctx = mb.context().ok_or(crate::Error::NeedsDevice { what: "the naive baseline" })?;
    let desc = MatmulDesc::new(size, size, size, DType::F32);
    let a = random_host(DType::F32, size * size, 1);
    let b = random_host(DType::F32, size * size, 2);
    let (ta, tb) = (mb.dyn_tensor(&a)?, mb.dyn_tensor(&b)?);
    let mut tc = mb.dyn_zeros(DType::F32, &[size, size])?;
    mb.matmul_dyn(&desc, &ta, &tb, &mut tc)?;

    let words = matbridge_shaders::spirv("matmul_naive_f32").ok_or_else(|| crate::Error::UnknownKernel { name: "matmul_naive_f32".into() })?;
    let pipeline = ctx.create_pipeline(&PipelineDesc { spirv: &words, bindings: 4, label: "naive", trusted: true, ..Default::default() })?;
    let ba = ctx.buffer_from_slice(&a.bytes, "a")?;
    let bb = ctx.buffer_from_slice(&b.bytes, "b")?;
    let bc = ctx.zeroed_buffer::<f32>(size * size, "c")?;
    let s = size as u32;
    let params: Vec<u8> = [s, s, s, 1f32.to_bits(), 0f32.to_bits()].iter().flat_map(|v| v.to_le_bytes()).collect();
    let mut bp = ctx.create_buffer(params.len() as u64, MemoryKind::Upload, "naive params")?;
    ctx.write_buffer(&mut bp, &params)?;
    let d = Dispatch { pipeline: &pipeline, buffers: &[&ba, &bb, &bc, &bp], images: &[], push_constants: &[], groups: [s.div_ceil(8), s.div_ceil(8), 1] };
    ctx.run(&[d])?;
    let (mut naive, mut sub) = (f64::INFINITY, f64::INFINITY);
    for _ in 0..3 {
        sub = sub.min(mb.matmul_dyn_repeated(&desc, &ta, &tb, &mut tc, iters)?.time.as_secs_f64());
        let stats = ctx.run_repeated(&[d], iters)?;
        naive = naive.min(stats.gpu_time.unwrap_or(stats.wall_time).as_secs_f64() / iters as f64);
    }
    Ok((naive, sub))
}
