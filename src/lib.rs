//! matbridge: run vendor matrix SPIR-V and fast matrix products on any Vulkan device.
//!
//! The facade re-exports the runtime ([`runtime`]) and the translator ([`translator`]) and adds
//! the matmul API: [`Matbridge`] (a device or the CPU, opened with [`MatbridgeOptions`]),
//! [`Tensor`]s, [`MatmulDesc`] problems and [`Batch`]es; see [`matmul`].

pub use matbridge_runtime as runtime;
pub use matbridge_translator as translator;
pub use matbridge_translator::profile::DeviceCaps;

/// `print!` that returns the write's error instead of panicking (stdout closed early:
/// `matbridge run ... | head -1`).
#[cfg(feature = "cli")]
#[doc(hidden)]
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        write!(std::io::stdout().lock(), $($arg)*)
    }};
}

/// `println!` that returns the write's error instead of panicking.
#[cfg(feature = "cli")]
#[doc(hidden)]
#[macro_export]
macro_rules! outln {
    ($($arg:tt)*) => {
        $crate::out!("{}\n", format_args!($($arg)*))
    };
}

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
pub use matmul::api::{DeviceChoice, Matbridge, MatmulRun};
pub use matmul::batch::{Batch, BatchRun};
pub use matmul::check::CheckReport;
pub use matmul::options::{MatbridgeOptions, Strategy, TuningOptions};
pub use matmul::tensor::{DynTensor, Tensor};
pub use matmul::{AccType, DType, Element, HostData, Layout, MatmulDesc, MatmulPath, MmaShape, Operand, Tile};
