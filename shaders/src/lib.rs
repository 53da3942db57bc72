//! matbridge's compute kernels. The WGSL sources in `shaders/wgsl` are compiled to SPIR-V 1.3 by
//! naga at build time, the GLSL in `shaders/glsl` by glslang (or taken from `prebuilt/`, which
//! `cargo run -p matbridge-shaders --example regen_prebuilt` rewrites) for
//! every configuration in [`COOP_CONFIGS`], [`WIDE_CONFIGS`] and [`SGEMM_CONFIGS`] (see `build.rs`); this crate
//! only hands out the words and the configuration tables.

include!(concat!(env!("OUT_DIR"), "/kernels.rs"));

/// The SPIR-V words of kernel `name`, or `None` when no kernel has that name.
pub fn spirv(name: &str) -> Option<Vec<u32>> {
    KERNELS.iter().find(|(n, _)| *n == name).map(|(_, bytes)| bytes.chunks_exact(4).map(|c| u32::from_le_bytes([c[0], c[1], c[2], c[3]])).collect())
}

/// Names of all kernels.
pub fn names() -> impl Iterator<Item = &'static str> {
    KERNELS.iter().map(|(n, _)| *n)
}

include!("coop_configs.rs");
include!("sgemm_configs.rs");
