//! A planned matmul: the dispatches one matmul runs (operand copies, the GEMM, the 16-bit
//! packing epilogue) over the caller's A, B and C and buffers the plan owns (parameters,
//! scratch). A plan is made once per problem and strategy and reused: it is immutable once made,
//! and every run of it is one submission that the device finishes before the next starts, so
//! runs that share its scratch buffers never overlap.

use super::gpu::Gpu;
pub(super) use super::repack::Repack;
use super::repack::{copies_rows, transpose_groups};
use super::{DType, MatmulDesc, MatmulPath, Resolved};
use crate::error::{Error, Result};
use matbridge_runtime::{Buffer, Dispatch, Pipeline};
use std::sync::Arc;

/// A value the kernels take as a 32-bit parameter; an error naming it when it does not fit.
pub(super) fn u32s(v: usize, what: &'static str) -> Result<u32> {
    u32::try_from(v).map_err(|_| Error::TooLarge { what, value: v })
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
    /// Appends a GEMM kernel bound to (`ab`: A and B or their copies, C or scratch, params);
    /// 16-bit outputs go through an f32 scratch buffer and the packing epilogue (the kernel must
    /// then be given beta = 0).
    #[allow(clippy::too_many_arguments)] // the dispatch's parts, then the problem it computes
    pub(crate) fn push_gemm(&mut self, gpu: &Gpu, kernel: Arc<Pipeline>, params: &[u8], groups: [u32; 3], ab: [Slot; 2], desc: &MatmulDesc, r: &Resolved) -> Result<()> {
        let params = self.own(gpu.params_buffer(params)?);
        if matches!(desc.out, DType::F16 | DType::Bf16) {
            let scratch = self.own(gpu.scratch_buffer(r.c.len)?);
            self.step(kernel, vec![ab[0], ab[1], scratch, params], groups);
            self.push_pack(gpu, desc, r, scratch)
        } else {
            self.step(kernel, vec![ab[0], ab[1], Slot::C, params], groups);
            Ok(())
        }
    }

    /// Appends a copy of operand `src` (elements of `bits` bits) into a new scratch buffer laid
    /// out as `repack` says; returns the copy's slot. The kernel is `transpose_8.wgsl` for 8-bit
    /// transposing copies with word-aligned rows, `copy_rows.wgsl` where source lines are
    /// contiguous, else the element-wise `repack.wgsl` (every layout; same parameters).
    pub(crate) fn push_repack(&mut self, gpu: &Gpu, src: Slot, bits: u32, repack: &Repack) -> Result<Slot> {
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
        let (kernel, groups) = match transpose_groups(bits, repack, gpu.ctx.caps().limits.max_workgroup_count) {
            Some(groups) => (gpu.pipeline("transpose_8", 3)?, groups),
            None if copies_rows(bits, repack) => (gpu.pipeline(&format!("copy_rows_{bits}"), 3)?, looping(words / 4)),
            None => (gpu.pipeline(&format!("repack_{bits}"), 3)?, looping(words)),
        };
        let copy = self.own(gpu.scratch_buffer(words as usize)?);
        let params = self.own(gpu.params_buffer(bytemuck::bytes_of(&params))?);
        self.step(kernel, vec![src, copy, params], groups);
        Ok(copy)
    }

    /// Appends the 16-bit packing epilogue, reading f32 values from `scratch`.
    pub(crate) fn push_pack(&mut self, gpu: &Gpu, desc: &MatmulDesc, r: &Resolved, scratch: Slot) -> Result<()> {
        let pack = gpu.pipeline(&format!("pack_{}", desc.out.name()), 3)?;
        let words = u32s(r.c.len.div_ceil(2), "C words")?;
        let params = PackParams { m: desc.m as u32, n: desc.n as u32, batch: desc.batch as u32, words, c: [r.c.row as u32, r.c.col as u32, r.c.batch.max(1) as u32], beta: desc.beta };
        let groups = words.div_ceil(64);
        let params = self.own(gpu.params_buffer(bytemuck::bytes_of(&params))?);
        self.step(pack, vec![scratch, Slot::C, params], [groups.min(65535), groups.div_ceil(65535), 1]);
        Ok(())
    }

    /// The plan's dispatches bound to A, B and C: pipeline, buffers and workgroups of each.
    pub(crate) fn bind<'a>(&'a self, a: &'a Buffer, b: &'a Buffer, c: &'a Buffer) -> Vec<Bound<'a>> {
        let resolve = |slot: &Slot| -> &'a Buffer {
            match slot {
                Slot::A => a,
                Slot::B => b,
                Slot::C => c,
                Slot::Owned(i) => &self.owned[*i],
            }
        };
        self.steps.iter().map(|(p, slots, groups)| Bound { pipeline: p, buffers: slots.iter().map(resolve).collect(), groups: *groups }).collect()
    }

    /// Runs the plan `iters` times over A, B, C in one submission; returns GPU seconds per
    /// iteration.
    pub fn execute(&self, gpu: &Gpu, a: &Buffer, b: &Buffer, c: &Buffer, iters: u32) -> Result<f64> {
        let bound = self.bind(a, b, c);
        let dispatches: Vec<Dispatch<'_>> = bound.iter().map(Bound::dispatch).collect();
        let stats = gpu.ctx.run_repeated(&dispatches, iters.max(1))?;
        let t = stats.gpu_time.unwrap_or(stats.wall_time);
        Ok(t.as_secs_f64() / iters.max(1) as f64)
    }
}

/// One dispatch of a plan with its buffers resolved.
pub(crate) struct Bound<'a> {
    pipeline: &'a Pipeline,
    buffers: Vec<&'a Buffer>,
    groups: [u32; 3],
}

impl Bound<'_> {
    pub(crate) fn dispatch(&self) -> Dispatch<'_> {
        Dispatch { pipeline: self.pipeline, buffers: &self.buffers, images: &[], push_constants: &[], groups: self.groups }
    }
}
