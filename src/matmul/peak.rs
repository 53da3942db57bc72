//! The cooperative-matrix throughput ceiling of a device: `shaders/glsl/coop_peak.comp` keeps
//! every subgroup multiplying register-resident fragments into eight independent accumulators
//! with no memory traffic, so its rate bounds what any GEMM built on the device's cooperative
//! matrices can reach (`matbridge bench --peak`).

use super::gpu::Gpu;
use crate::error::Result;
use matbridge_runtime::{Dispatch, MemoryKind, SpecConstant};
use matbridge_translator::profile::ComponentType as T;
use serde::Serialize;

/// One measured ceiling.
#[derive(Clone, Debug, Serialize)]
pub struct Peak {
    /// MMA shape and types, e.g. `16x16x16 f16->f32`.
    pub shape: String,
    /// Tera-operations per second (2 per multiply-add).
    pub tops: f64,
}

/// (kernel family, M, N, K, input type, accumulator type).
const FAMILIES: [(&str, u32, u32, u32, T, T); 3] = [("f16_f32", 16, 16, 16, T::F16, T::F32), ("f16_f16", 16, 16, 16, T::F16, T::F16), ("s8_s32", 16, 16, 32, T::S8, T::S32)];

/// Multiply-adds per subgroup per loop iteration in the kernel.
const MMAS_PER_ITER: u64 = 8;
const ITERS: u32 = 4096;
const SUBGROUPS_PER_GROUP: u64 = 8;

/// Measures every family whose MMA shape the device lists (none without cooperative matrices).
pub fn measure(gpu: &Gpu) -> Result<Vec<Peak>> {
    let caps = gpu.ctx.caps();
    let mut peaks = Vec::new();
    if caps.subgroup_size != 32 {
        return Ok(peaks);
    }
    for (family, m, n, k, ab, acc) in FAMILIES {
        if caps.find_coop_shape(m, n, k, [ab, ab, acc, acc], false).is_none() {
            continue;
        }
        let kernel = format!("coop_peak_{family}");
        let pipeline = gpu.pipeline_translated(&kernel, 2, &[SpecConstant::u32(0, ITERS)], &[])?;
        let groups: u32 = 4096;
        let src = gpu.ctx.zeroed_buffer::<u32>(1024, "peak operands")?;
        let dst = gpu.ctx.create_buffer(groups as u64 * SUBGROUPS_PER_GROUP * 1024, MemoryKind::DeviceLocal, "peak results")?;
        let dispatch = [Dispatch { pipeline: &pipeline, buffers: &[&src, &dst], images: &[], push_constants: &[], groups: [groups, 1, 1] }];
        // Warm up (clocks), then time.
        let warm = std::time::Instant::now();
        while warm.elapsed().as_secs_f64() < 0.3 {
            gpu.ctx.run_repeated(&dispatch, 2)?;
        }
        let stats = gpu.ctx.run_repeated(&dispatch, 5)?;
        let seconds = stats.gpu_time.unwrap_or(stats.wall_time).as_secs_f64() / 5.0;
        let ops = 2.0 * (m * n * k) as f64 * (MMAS_PER_ITER * ITERS as u64 * SUBGROUPS_PER_GROUP * groups as u64) as f64;
        peaks.push(Peak { shape: format!("{m}x{n}x{k} {ab}->{acc}"), tops: ops / seconds / 1e12 });
    }
    Ok(peaks)
}
