//! The runtime's error type.

use thiserror::Error;

/// Everything the runtime can fail with. Vulkan result codes keep the call that returned them.
#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    #[error("no Vulkan loader could be opened ({0}); install libvulkan1 and a driver")]
    NoLoader(String),
    #[error("no Vulkan device was found (the loader enumerated none; is a driver installed?)")]
    NoDevice,
    #[error("no Vulkan device matches {selector}; available: {available}")]
    NoMatchingDevice { selector: String, available: String },
    #[error("device {device} supports Vulkan {found}, matbridge needs at least {needed}")]
    ApiTooOld { device: String, found: String, needed: String },
    #[error("{call} failed: {result}")]
    Vulkan { call: &'static str, result: VkResult },
    #[error("the device was lost during {0}")]
    DeviceLost(&'static str),
    #[error("the GPU did not finish {what} within {timeout_ms} ms")]
    Timeout { what: &'static str, timeout_ms: u64 },
    #[error("memory allocation failed: {0}")]
    Allocation(#[from] gpu_allocator::AllocationError),
    #[error("size mismatch for {what}: expected {expected} bytes, given {given} bytes")]
    SizeMismatch { what: String, expected: u64, given: u64 },
    #[error("pipeline needs {needed}, which device {device} does not support")]
    MissingCapability { needed: String, device: String },
    #[error("invalid SPIR-V given to the runtime: {0}")]
    InvalidSpirv(String),
    #[error("the module needs translating for {device}, which failed: {source}")]
    Translation { device: String, source: matbridge_translator::Error },
    #[error("the module does not fit the pipeline: {0}")]
    InterfaceMismatch(String),
    #[error("{what} needs {needed}, over device {device}'s {limit}")]
    OverLimit { what: String, needed: String, limit: String, device: String },
    #[error("invalid argument: {0}")]
    InvalidArgument(String),
    #[error("Vulkan validation reported {} message(s):\n{}", .0.len(), .0.join("\n"))]
    Validation(Vec<String>),
}

/// A Vulkan result code (`VkResult`), printed by name; `ash`'s type stays inside the runtime.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VkResult(pub i32);

impl std::fmt::Display for VkResult {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        std::fmt::Display::fmt(&ash::vk::Result::from_raw(self.0), f)
    }
}

/// The runtime's result alias.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Maps a `vk::Result` from `call`, separating device loss from other codes.
    pub(crate) fn vk(call: &'static str) -> impl FnOnce(ash::vk::Result) -> Error {
        move |result| match result {
            ash::vk::Result::ERROR_DEVICE_LOST => Error::DeviceLost(call),
            result => Error::Vulkan { call, result: VkResult(result.as_raw()) },
        }
    }
}
