//! matbridge: run vendor matrix SPIR-V and fast matrix products on any Vulkan device.
//!
//! The facade re-exports the runtime ([`runtime`]) and the translator ([`translator`]) and adds
//! the matmul API ([`matmul`], [`matmul::api::Matbridge`]).

pub use matbridge_runtime as runtime;
pub use matbridge_translator as translator;
pub use matbridge_translator::profile::DeviceCaps;

#[cfg(feature = "cli")]
pub mod cli_info;
#[cfg(feature = "cli")]
pub mod cli_matmul;
#[cfg(feature = "cli")]
pub mod cli_probe;
#[cfg(feature = "cli")]
pub mod cli_run;
pub mod elements;
pub mod error;
pub mod matmul;
pub mod probe;

pub use error::{Error, Result};
pub use matmul::api::{DeviceChoice, Matbridge};
pub use matmul::options::{MatbridgeOptions, Strategy, TuningOptions};
pub use matmul::{AccType, DType, Layout, MatmulDesc, Operand};
