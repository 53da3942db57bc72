//! The facade's error type.

use thiserror::Error;

#[derive(Debug, Error)]
pub enum Error {
    #[error(transparent)]
    Runtime(#[from] matbridge_runtime::Error),
    #[error(transparent)]
    Translator(#[from] matbridge_translator::Error),
    #[error("operand {operand}: expected {expected} elements, given {given}")]
    SizeMismatch { operand: &'static str, expected: usize, given: usize },
    #[error("operand {operand}: expected dtype {expected}, given {given}")]
    DTypeMismatch { operand: &'static str, expected: String, given: String },
    #[error("invalid matmul: {0}")]
    Invalid(String),
    #[error("this device cannot run {what}: {why}")]
    Unsupported { what: String, why: String },
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
