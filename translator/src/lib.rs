//! matbridge's translator: SPIR-V in, SPIR-V out.
//!
//! A [`Pipeline`](pipeline::Pipeline) of passes chosen from a target [`profile`] rewrites vendor
//! matrix opcodes into what the target runs: SPV_KHR_cooperative_matrix where the device lists
//! the shape, plain integer arithmetic for integer dot products where the device lacks them.
//! The [`reference`] module is the CPU definition of every input opcode.
//!
//! The crate never links Vulkan: the runtime fills [`profile::DeviceCaps`] from a live device and
//! hands it over as plain data.

pub mod analysis;
pub mod error;
pub mod finalize;
pub mod module;
pub mod passes;
pub mod pipeline;
pub mod profile;
pub mod reference;
pub mod tools;

pub use error::{Error, Result};
pub use module::Module;
pub use pipeline::{translate, Report};
pub use profile::DeviceCaps;
