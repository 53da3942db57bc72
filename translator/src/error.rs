//! The translator's error type. Every error says where: word offset and opcode.

use thiserror::Error;

#[derive(Debug, Error, PartialEq)]
pub enum Error {
    #[error("not a SPIR-V module: {0}")]
    NotSpirv(String),
    #[error("malformed SPIR-V at word offset {offset}: {message}")]
    Malformed { offset: usize, message: String },
    #[error("{opcode} at word offset {offset}: target `{target}` lacks {missing}")]
    Unsupported { opcode: String, offset: usize, target: String, missing: String },
    #[error("{opcode} at word offset {offset}: {message}")]
    Invalid { opcode: String, offset: usize, message: String },
    #[error("SPIR-V tool failed: {0}")]
    Tool(String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
