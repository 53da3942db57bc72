//! matbridge's translator: SPIR-V in, SPIR-V out.
//!
//! A [`Pipeline`](pipeline::Pipeline) of passes chosen from a target [`profile`] rewrites vendor
//! matrix opcodes into what the target runs: SPV_KHR_cooperative_matrix where the device lists
//! the shape, plain code with subgroup broadcasts where it does not (cooperative-matrix
//! emulation), plain integer arithmetic for integer dot products where the device lacks them.
//! [`specialize`] applies a pipeline's specialization constants before translation.
//! Passes are written on the [`ir`] (sections, blocks, typed operands, interning, builder,
//! def-use, control flow) under the [`pass`] contract; [`requirements`] derives capabilities,
//! extensions and version once at the end. The [`reference`](mod@reference) module is the CPU definition of
//! every input opcode. `translator/DESIGN.md` explains how to write a pass.
//!
//! The crate never links Vulkan: the runtime fills [`profile::DeviceCaps`] from a live device and
//! hands it over as plain data.

pub mod analysis;
pub mod error;
mod input_checks;
pub mod ir;
pub mod kernel;
pub mod pass;
pub mod passes;
pub mod pipeline;
pub mod profile;
pub mod reference;
pub mod requirements;
pub mod specialize;
pub mod tools;

pub use error::{Error, Result, Site};
pub use ir::Module;
pub use pipeline::{translate, translate_specialized, translate_with, Report, Request};
pub use profile::DeviceCaps;
