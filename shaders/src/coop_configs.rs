// The cooperative-matrix GEMM variants built from `glsl/coop_gemm.comp`. Included both by
// `build.rs` (which compiles one SPIR-V module per family and configuration) and by the library
// (which the matmul planner and autotuner read), so the two can never disagree.

/// One compiled tile configuration of `coop_gemm.comp` (see the defines documented there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoopConfig {
    /// Rows of C per workgroup.
    pub bm: u32,
    /// Columns of C per workgroup.
    pub bn: u32,
    /// K elements per shared-memory stage.
    pub bk: u32,
    /// Subgroups along M and along N.
    pub warps_m: u32,
    pub warps_n: u32,
    /// N of the MMA shape (16 or 8); M is 16, K is 16 for 16-bit inputs and 32 for 8-bit.
    pub ln: u32,
    /// Shared-memory buffers (1 or 2).
    pub stages: u32,
    /// K tiles in flight in registers between their global load and their shared-memory store
    /// (1 or 2; the second set of staging registers hides one more K step of latency).
    pub prefetch: u32,
    /// Shared-memory buffers of A when they differ from `stages` (A double-buffered, B not), else 0.
    pub a_stages: u32,
    /// Write double-buffered operands to shared memory before the multiply instead of after it.
    pub store_early: bool,
    /// Kernel families (`f16_f32`, `f16_f16`, `s8_s32`, `u8_s32`) built with this configuration.
    pub families: &'static [&'static str],
}

impl CoopConfig {
    /// Invocations per workgroup.
    pub const fn threads(&self) -> u32 {
        self.warps_m * self.warps_n * 32
    }

    /// Configuration label used in kernel names, e.g. `128x256x32_w2x4_n16_s1`, with `_a2` when
    /// A alone is double-buffered, `_pN` with N K tiles in flight and `_e` for early stores.
    pub fn label(&self) -> String {
        let prefetch = if self.prefetch > 1 { format!("_p{}", self.prefetch) } else { String::new() };
        let a_stages = if self.a_stages != 0 { format!("_a{}", self.a_stages) } else { String::new() };
        let early = if self.store_early { "_e" } else { "" };
        format!("{}x{}x{}_w{}x{}_n{}_s{}{a_stages}{prefetch}{early}", self.bm, self.bn, self.bk, self.warps_m, self.warps_n, self.ln, self.stages)
    }

    /// Built-in kernel name for `family`.
    pub fn kernel(&self, family: &str) -> String {
        format!("coop_gemm_{family}_{}", self.label())
    }

    /// Shared memory the kernel declares, in bytes, with A stored column-major (m contiguous)
    /// or not, and B's shared tile k-contiguous or not (`vec` = elements per 16-byte vector).
    pub const fn shared_bytes(&self, vec: u32, a_colmajor: bool, b_smem_colmajor: bool) -> u32 {
        let a = if a_colmajor { self.bk * (self.bm / vec + 1) } else { self.bm * (self.bk / vec + 1) };
        let b = if b_smem_colmajor { self.bn * (self.bk / vec + 1) } else { self.bk * (self.bn / vec + 1) };
        // The epilogue's staging tiles reuse the operand tiles' memory.
        let operands = (a * self.stages_a() + b * self.stages) * 16;
        let staging = self.warps_m * self.warps_n * 16 * self.ln * 4;
        if operands > staging {
            operands
        } else {
            staging
        }
    }

    /// The least shared memory over the operand layouts (a configuration is built when some
    /// layout fits; the planner checks the problem's own).
    pub const fn min_shared_bytes(&self, vec: u32) -> u32 {
        let mut least = u32::MAX;
        let layouts = [(false, false), (false, true), (true, false), (true, true)];
        let mut i = 0;
        while i < layouts.len() {
            let bytes = self.shared_bytes(vec, layouts[i].0, layouts[i].1);
            if bytes < least {
                least = bytes;
            }
            i += 1;
        }
        least
    }
}

const F16: &[&str] = &["f16_f32", "f16_f16"];
const F16_ACC16: &[&str] = &["f16_f16"];
const INT8: &[&str] = &["s8_s32", "u8_s32"];

#[allow(clippy::too_many_arguments)] // one positional row per configuration keeps the table readable
const fn cfg(bm: u32, bn: u32, bk: u32, warps_m: u32, warps_n: u32, ln: u32, stages: u32, families: &'static [&'static str]) -> CoopConfig {
    CoopConfig { bm, bn, bk, warps_m, warps_n, ln, stages, prefetch: 1, a_stages: 0, store_early: false, families }
}

impl CoopConfig {
    /// This configuration with `prefetch` K tiles in flight in registers.
    const fn p(self, prefetch: u32) -> CoopConfig {
        CoopConfig { prefetch, ..self }
    }

    /// This configuration with A double-buffered (B keeps `stages`).
    const fn a2(self) -> CoopConfig {
        CoopConfig { a_stages: 2, ..self }
    }

    /// This configuration writing double-buffered operands before the multiply.
    const fn early(self) -> CoopConfig {
        CoopConfig { store_early: true, ..self }
    }

    /// Shared-memory buffers of A.
    pub const fn stages_a(&self) -> u32 {
        if self.a_stages != 0 {
            self.a_stages
        } else {
            self.stages
        }
    }
}

/// Every configuration, in the order the autotuner tries them (its first entry per family is
/// the default when tuning is off). The list is what survived sweeps of about 80 kernels on the
/// H100 (`benches/results/h100-2026-11-22-sweep.txt`):
/// - 16 subgroups per workgroup won for large problems (the compiler then fits them in 128
///   registers without spilling);
/// - two K steps in flight in registers (`p(2)`) beat one by 5-14 %; three exceed the registers;
/// - one shared-memory stage with a deep K step beat double buffering with a shallow one (a
///   workgroup may declare at most 48 KiB), even with the stores moved before the multiply;
///   double-buffering A alone helps 8-bit inputs by 2 %;
/// - 128x64 subgroup tiles only pay with f16 accumulators.
///
/// The double-buffered entries stay as candidates for devices that favour them.
pub const COOP_CONFIGS: &[CoopConfig] = &[
    // 16-bit inputs (K step 16).
    cfg(128, 256, 32, 4, 4, 16, 1, F16).p(2),
    cfg(256, 256, 32, 4, 4, 16, 1, F16_ACC16).p(2),
    cfg(256, 128, 32, 4, 4, 16, 1, F16),
    cfg(128, 128, 64, 2, 4, 16, 1, F16).p(2),
    cfg(128, 128, 32, 4, 4, 16, 2, F16).p(2).early(),
    // 8-bit inputs (K step 32).
    cfg(256, 128, 64, 4, 2, 16, 1, INT8),
    cfg(128, 256, 64, 4, 4, 16, 1, INT8).p(2).a2().early(),
    cfg(128, 128, 128, 4, 4, 16, 1, INT8).p(2),
    cfg(256, 128, 64, 4, 4, 16, 1, INT8).p(2),
    cfg(128, 128, 128, 2, 4, 16, 1, INT8),
    cfg(128, 128, 64, 4, 4, 16, 2, INT8).p(2).early(),
];

/// One compiled configuration of `glsl/coop_gemm_wide.comp`, the lean GEMM for problems that
/// fill whole tiles in a plain layout (see the kernel's header).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct WideConfig {
    pub bm: u32,
    pub bn: u32,
    pub bk: u32,
    pub warps_m: u32,
    pub warps_n: u32,
    /// Kernel families (`f16_f16`: f16 accumulators and output; `f16_f32`: f32 ones, also bf16;
    /// `s8_s32`, `u8_s32`: 8-bit inputs with B k-contiguous).
    pub families: &'static [&'static str],
}

impl WideConfig {
    /// Invocations per workgroup.
    pub const fn threads(&self) -> u32 {
        self.warps_m * self.warps_n * 32
    }

    /// Configuration label, e.g. `wide_256x256x32_w2x4`.
    pub fn label(&self) -> String {
        format!("wide_{}x{}x{}_w{}x{}", self.bm, self.bn, self.bk, self.warps_m, self.warps_n)
    }

    /// Built-in kernel name for `family`.
    pub fn kernel(&self, family: &str) -> String {
        format!("coop_gemm_{family}_{}", self.label())
    }

    /// Shared memory the kernel declares for elements of `vec` per 16-byte vector (8: 16-bit, B
    /// staged n-contiguous; 16: 8-bit, B staged k-contiguous), one vector of padding per line.
    pub const fn shared_bytes(&self, vec: u32) -> u32 {
        let b = if vec == 16 { self.bn * (self.bk / vec + 1) } else { self.bk * (self.bn / vec + 1) };
        (self.bm * (self.bk / vec + 1) + b) * 16
    }
}

const fn wide(bm: u32, bn: u32, bk: u32, warps_m: u32, warps_n: u32, families: &'static [&'static str]) -> WideConfig {
    WideConfig { bm, bn, bk, warps_m, warps_n, families }
}

const WIDE_F32: &[&str] = &["f16_f32"];

/// The wide kernel's configurations (H100, 4096^3 / 8192^3, kernel alone: f16->f16 256x256x32_w2x4
/// 0.342 / 2.525 ms, f16->f32 128x128x32_w2x2 0.453 / 3.451 ms and 128x256x32_w2x4 0.467 / 3.555 ms,
/// s8 128x128x64_w2x2 0.272 / 2.046 ms and 128x128x128_w2x2 0.271 / 2.225 ms;
/// `benches/results/h100-2026-11-22-sweep.txt`, session 11).
pub const WIDE_CONFIGS: &[WideConfig] = &[
    wide(256, 256, 32, 2, 4, F16_ACC16),
    wide(128, 128, 32, 2, 2, WIDE_F32),
    wide(128, 256, 32, 2, 4, WIDE_F32),
    // 8-bit inputs with B k-contiguous (K step 32).
    wide(128, 128, 64, 2, 2, INT8),
    wide(128, 128, 128, 2, 2, INT8),
];
