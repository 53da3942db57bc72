//! matbridge: run vendor matrix SPIR-V and fast matrix products on any Vulkan device.
//!
//! The facade re-exports the runtime ([`runtime`]) and the translator ([`translator`]).

pub use matbridge_runtime as runtime;
pub use matbridge_translator as translator;
pub use matbridge_translator::profile::DeviceCaps;

pub mod cli_info;
