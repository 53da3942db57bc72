//! matbridge's Vulkan runtime: loads Vulkan at run time, picks a device, reads its capabilities
//! into a [`DeviceCaps`] (the translator's target profile), and builds and dispatches compute
//! pipelines over gpu-allocator buffers.
//!
//! All `unsafe` Vulkan calls live in this crate behind safe types. Every child object (buffer,
//! pipeline) holds an `Arc` of its device, which holds an `Arc` of its instance, so destruction
//! is ordered: children, then allocator and device, then messenger and instance.
#![deny(unsafe_op_in_unsafe_fn)]

mod buffer;
mod caps;
mod conv;
mod device;
mod dispatch;
mod distrust;
mod error;
mod instance;
mod interface;
mod kernel;
pub mod loader_env;
mod pipeline;

pub use buffer::{Buffer, MemoryKind};
pub use device::{enumerate_devices, resolve_target, Context, CooperativeMatrix2, DeviceSelector, EnabledFeatures};
pub use dispatch::{Dispatch, RunStats, DEFAULT_TIMEOUT};
pub use distrust::{device_key, ContextOptions, DistrustReason, DistrustRecord, DistrustedShape};
pub use error::{Error, Result};
pub use instance::{Instance, InstanceOptions};
pub use kernel::{Kernel, KernelArg, KernelOptions, NdRange};
pub use matbridge_translator::kernel::KernelAbi;
pub use matbridge_translator::profile::DeviceCaps;
pub use pipeline::{declared_capabilities, Pipeline, PipelineDesc, SpecConstant};
