//! The translator's error type. Every error says where: opcode, word offset, instruction index
//! and function.

use std::fmt;
use thiserror::Error;

/// Where in the input an error is: the instruction's opcode, word offset and index, and the
/// function holding it. Instructions a pass created carry the place of what they replace.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct Site {
    pub opcode: String,
    pub offset: Option<usize>,
    pub index: Option<usize>,
    pub function: Option<String>,
}

impl fmt::Display for Site {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}", self.opcode)?;
        match (self.offset, self.index) {
            (Some(o), Some(i)) => write!(f, " at word offset {o} (instruction {i})")?,
            (Some(o), None) => write!(f, " at word offset {o}")?,
            _ => write!(f, " (made by a pass)")?,
        }
        if let Some(func) = &self.function {
            write!(f, " in function {func}")?;
        }
        Ok(())
    }
}

#[derive(Debug, Error, PartialEq)]
#[non_exhaustive]
pub enum Error {
    #[error("not a SPIR-V module: {0}")]
    NotSpirv(String),
    #[error("malformed SPIR-V at word offset {offset}: {message}")]
    Malformed { offset: usize, message: String },
    #[error("{site}: target `{target}` lacks {missing}")]
    Unsupported { site: Box<Site>, target: String, missing: String },
    #[error("{site}: {message}")]
    Invalid { site: Box<Site>, message: String },
    #[error("capability {capability} (needed by {site}) requires {feature}, which target `{target}` lacks")]
    MissingCapability { capability: String, site: Box<Site>, feature: String, target: String },
    #[error("SPIR-V tool failed: {0}")]
    Tool(String),
    #[error("target `{0}`: {1}")]
    Target(String, String),
    #[error("unknown target `{0}`: use one of {1}, device, device:N, or a JSON file from `matbridge info --json`")]
    UnknownTarget(String, String),
}

pub type Result<T, E = Error> = std::result::Result<T, E>;
