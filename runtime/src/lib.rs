//! matbridge's Vulkan runtime: loads Vulkan at run time, picks a device, reads its capabilities
//! into a [`DeviceCaps`] (the translator's target profile), and builds and dispatches compute
//! pipelines over gpu-allocator buffers.
//!
//! All `unsafe` Vulkan calls live in this crate behind safe types. Every child object (buffer,
//! pipeline) holds an `Arc` of its device, which holds an `Arc` of its instance, so destruction
//! is ordered: children, then allocator and device, then messenger and instance. Creating and
//! destroying instances and devices is kept apart from every other Vulkan call of the process
//! (a driver can deadlock otherwise; see `driver_gate.rs`).
#![deny(unsafe_op_in_unsafe_fn)]

mod buffer;
mod caps;
mod conv;
mod device;
mod dispatch;
mod distrust;
mod driver_gate;
mod error;
mod image;
mod instance;
mod interface;
mod kernel;
pub mod loader_env;
mod pipeline;

pub use buffer::{Buffer, MemoryKind};
pub use device::{enumerate_devices, resolve_target, Context, ContextOptions, CooperativeMatrix2, DeviceSelector, EnabledFeatures};
pub use dispatch::{Dispatch, RunStats, CPU_DEVICE_TIMEOUT, DEFAULT_TIMEOUT};
pub use distrust::{device_key, DistrustReason, DistrustRecord, DistrustedShape};
pub use error::{Error, Result, VkResult};
pub use image::{ChannelOrder, ChannelType, Image, ImageDesc, ImageFormat, ImageKind};
pub use instance::{Instance, InstanceOptions};
pub use kernel::{AddressMode, Kernel, KernelArg, KernelOptions, NdRange, PreparedLaunch, Sampler};
pub use matbridge_translator::kernel::KernelAbi;
pub use matbridge_translator::profile::DeviceCaps;
pub use pipeline::{declared_capabilities, Pipeline, PipelineDesc, SpecConstant};

/// The one truthiness convention of matbridge's environment variables: `1`, `true`, `yes`, `on`
/// are true; `0`, `false`, `no`, `off` and empty are false (any case); `None` when unset or
/// anything else. Only `from_env` constructors and the command line call it: library defaults
/// read nothing from the environment.
pub fn env_flag(name: &str) -> Option<bool> {
    parse_flag(&std::env::var(name).ok()?)
}

/// [`env_flag`]'s reading of a value.
pub fn parse_flag(value: &str) -> Option<bool> {
    match value.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "yes" | "on" => Some(true),
        "0" | "false" | "no" | "off" | "" => Some(false),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn one_truthiness_convention() {
        for t in ["1", "true", "TRUE", " yes", "On"] {
            assert_eq!(super::parse_flag(t), Some(true), "{t}");
        }
        for f in ["0", "false", "No", "off", ""] {
            assert_eq!(super::parse_flag(f), Some(false), "{f}");
        }
        assert_eq!(super::parse_flag("maybe"), None);
        // Defaults read nothing from the environment.
        let o = super::ContextOptions::default();
        assert!(!o.instance.validation && o.pipeline_cache.is_none() && !o.pipeline_statistics && o.pipeline_ir.is_none() && o.distrust.is_none() && !o.check_translations);
    }
}
