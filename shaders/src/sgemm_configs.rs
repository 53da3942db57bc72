// The f32 GEMM variants built from `glsl/sgemm.comp`. Included both by `build.rs` (one SPIR-V
// module per entry) and by the library (which picks one per problem), so the two always agree.

/// One compiled tile configuration of `sgemm.comp` (see the defines documented there).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SgemmConfig {
    /// Rows and columns of C per workgroup.
    pub bm: u32,
    pub bn: u32,
    /// K elements per shared-memory buffer.
    pub bk: u32,
    /// 4 x 4 output blocks per invocation along M and along N.
    pub rm: u32,
    pub rn: u32,
}

impl SgemmConfig {
    /// Built-in kernel name, e.g. `sgemm_128x128x8_r2x2`.
    pub fn kernel(&self) -> String {
        format!("sgemm_{}x{}x{}_r{}x{}", self.bm, self.bn, self.bk, self.rm, self.rn)
    }

    /// Invocations per workgroup.
    pub const fn threads(&self) -> u32 {
        (self.bm / (4 * self.rm)) * (self.bn / (4 * self.rn))
    }

    /// Workgroup memory the kernel declares: two buffers of BK lines of BM (and BN) floats, each
    /// line padded by a 16-byte vector.
    pub const fn shared_bytes(&self) -> u32 {
        2 * self.bk * ((self.bm + 4) + (self.bn + 4)) * 4
    }

    /// Whether a device with `max_shared` bytes of workgroup memory and `max_invocations`
    /// invocations per workgroup can run this configuration.
    pub const fn fits(&self, max_shared: u32, max_invocations: u32) -> bool {
        self.shared_bytes() <= max_shared && self.threads() <= max_invocations
    }
}

/// Every configuration, largest tile first. On the H100 (`benches/results/h100-2026-11-22-sweep.txt`,
/// session 10) 128x128 tiles with 8 x 8 outputs per invocation run 4096^3 at 37 TFLOP/s (twice
/// the earlier 64 x 64 shared-memory kernel); the smaller tiles win where the larger ones would
/// leave most of the GPU idle (1024^3: 128x64; 512^3: 32x32).
pub const SGEMM_CONFIGS: &[SgemmConfig] = &[
    SgemmConfig { bm: 128, bn: 128, bk: 8, rm: 2, rn: 2 },
    SgemmConfig { bm: 128, bn: 64, bk: 16, rm: 2, rn: 1 },
    SgemmConfig { bm: 64, bn: 64, bk: 16, rm: 1, rn: 1 },
    SgemmConfig { bm: 32, bn: 32, bk: 16, rm: 1, rn: 1 },
];
