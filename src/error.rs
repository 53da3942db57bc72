//! The facade's error type.

use crate::matmul::options::Strategy;
use crate::matmul::{AccType, DType};
use thiserror::Error;

/// Why inputs of `dtype` cannot accumulate in `acc`.
fn accumulator_message(dtype: DType, acc: AccType) -> String {
    if dtype.is_integer() {
        format!("{dtype} inputs accumulate in s32, not {}", acc.name())
    } else if acc == AccType::F16 {
        "f16 accumulation needs f16 inputs".to_string()
    } else {
        format!("{dtype} inputs accumulate in f32 or f16, not {}", acc.name())
    }
}

#[derive(Debug, Error)]
#[non_exhaustive]
pub enum Error {
    #[error(transparent)]
    Runtime(#[from] matbridge_runtime::Error),
    #[error(transparent)]
    Translator(#[from] matbridge_translator::Error),
    #[error("operand {operand}: expected {expected} elements, given {given}")]
    SizeMismatch { operand: &'static str, expected: usize, given: usize },
    #[error("operand {operand}: expected dtype {expected}, given {given}")]
    DTypeMismatch { operand: &'static str, expected: DType, given: DType },
    #[error("a shape of {shape:?} does not hold {elements} elements")]
    ShapeMismatch { shape: Vec<usize>, elements: usize },
    #[error("the buffer holds {given} bytes, the tensor needs {expected} (its elements rounded up to whole 16-byte vectors)")]
    BufferTooSmall { expected: u64, given: u64 },
    #[error("the buffer belongs to another device than the context")]
    ForeignBuffer,
    #[error("C is also an input of the same matmul")]
    AliasedOutput,
    #[error("{what} {value} is too large (the kernels take 32-bit sizes, and host sizes must fit the address space)")]
    TooLarge { what: &'static str, value: usize },
    #[error("the matmul needs {needed:?} workgroups, the device allows {limit:?}")]
    TooManyWorkgroups { needed: [u32; 3], limit: [u32; 3] },
    #[error("no built-in kernel named {name}")]
    UnknownKernel { name: String },
    #[error("{what} needs a Vulkan device")]
    NeedsDevice { what: &'static str },
    #[error("strategy {strategy:?} is not available on {context}: tensors stay where they are made (open another context)")]
    StrategyUnavailable { strategy: Strategy, context: String },
    #[error("probe kernel for {shape}: {message}")]
    ProbeKernel { shape: String, message: String },
    #[error("{dtype} inputs are not supported (use s8 or u8)")]
    UnsupportedInput { dtype: DType },
    #[error("{}", accumulator_message(*.dtype, *.acc))]
    Accumulator { dtype: DType, acc: AccType },
    #[error("{dtype} inputs cannot produce {out} output")]
    Output { dtype: DType, out: DType },
    #[error("integer matmul needs integral alpha and beta, given {alpha} and {beta}")]
    NonIntegralScale { alpha: f32, beta: f32 },
    #[error("C cannot be transposed; choose its layout instead")]
    TransposedC,
    #[error("C's batch stride {stride} makes batches overlap")]
    OverlappingBatches { stride: usize },
    #[error("operand {operand}: leading dimension {given} is smaller than {min}")]
    LeadingDimension { operand: &'static str, given: usize, min: usize },
    #[error("dimensions must fit in 31 bits: the largest given is {given}")]
    DimensionTooLarge { given: usize },
    #[error("cooperative-matrix configuration {label} is not one of {available:?} for this device and problem")]
    UnknownConfiguration { label: String, available: Vec<String> },
    #[error("the tensor belongs to {tensor}, the context is {context}")]
    WrongBackend { tensor: &'static str, context: &'static str },
    #[error("{what}: cannot allocate {bytes} bytes of host memory")]
    HostMemory { what: String, bytes: usize },
}

/// Reserves `bytes` of host memory up front, so that a problem too large for the machine is an
/// error that names it instead of an abort inside the allocator.
pub fn host_bytes(what: &str, bytes: usize) -> Result<Vec<u8>> {
    let mut v = Vec::new();
    v.try_reserve_exact(bytes).map_err(|_| Error::HostMemory { what: what.to_string(), bytes })?;
    Ok(v)
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
