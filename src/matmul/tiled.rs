//! The tiled (subgroup) kernels: every input type on every device.
//!
//! Every input type runs on the tiled kernel (`shaders/wgsl/matmul_tiled.wgsl`), which reads
//! operands as 32-bit words so that devices without 8/16-bit types run it too; f32 on a GPU runs
//! the register-blocked shared-memory kernel, f32 on CPU drivers a kernel with 16-byte loads, and
//! 8-bit inputs packed integer dot products where the device accelerates them. 16-bit outputs are
//! written through an f32 scratch buffer and a packing epilogue.

use super::gpu::Gpu;
use super::plan::{u32s, Plan, Slot};
use super::{DType, MatmulDesc, MatmulPath, Resolved, Tile};
use crate::error::{Error, Result};

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

/// The plan of the tiled kernels for `desc`.
pub fn plan(gpu: &Gpu, desc: &MatmulDesc, r: &Resolved) -> Result<Plan> {
    // f32 on a GPU: the register-blocked shared-memory kernel; f32 on a CPU driver with
    // vector-aligned operands: 16-byte loads; 8-bit inputs: packed integer dot products where
    // the device accelerates them (CPU drivers emulate them more slowly than the byte
    // arithmetic of the register-blocked kernel); everything else the register-blocked kernel
    // reading 32-bit words. CPU drivers take barrier-free kernels (llvmpipe's JIT handles
    // barriers badly, and SwiftShader runs the 16-byte-load kernel faster).
    let cpu = gpu.ctx.caps().device_type == matbridge_translator::profile::DeviceType::Cpu;
    // f32 on a CPU driver with A k-contiguous and B n-contiguous in 16-byte vectors: the
    // kernel whose loads are 16 bytes wide (25 % faster on llvmpipe at 512^3).
    let quad = |v: usize| v.is_multiple_of(4);
    let vec4 = desc.dtype == DType::F32 && cpu && r.a.col == 1 && r.b.col == 1 && quad(r.a.row) && quad(r.b.row) && quad(r.a.batch) && quad(r.b.batch) && quad(desc.k) && quad(desc.n);
    let limits = &gpu.ctx.caps().limits;
    let sgemm = if desc.dtype == DType::F32 && !cpu { sgemm_config(desc, limits.max_shared_memory_size, limits.max_workgroup_invocations) } else { None };
    let (name, per_invocation, detail, [bm, bn]) = if let Some(config) = sgemm {
        (config.kernel(), [4 * config.rm, 4 * config.rn], "workgroup memory", [config.bm, config.bn])
    } else if vec4 {
        ("matmul_vec4_f32".to_string(), [4, 4], "16-byte loads", [32, 32])
    } else if desc.dtype.is_integer() && packed_dot_accelerated(gpu.ctx.caps(), desc.dtype) {
        (format!("matmul_dot_{}", desc.dtype.name()), [4, 4], "packed integer dot products", [32, 32])
    } else {
        (format!("matmul_tiled_{}", desc.dtype.name()), [4, 4], "", [32, 32])
    };
    let tile = Tile { kernel: name.clone(), config: None, m: bm, n: bn, k: None, subgroups: None, per_invocation: Some(per_invocation), detail: detail.into() };
    let tiled = gpu.pipeline(&name, 4)?;
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
        return Err(Error::TooManyWorkgroups { needed: groups, limit: max });
    }
    let mut plan = Plan::new(MatmulPath::Subgroup { tile });
    plan.push_gemm(gpu, tiled, bytemuck::bytes_of(&params), groups, [Slot::A, Slot::B], desc, r)?;
    Ok(plan)
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
