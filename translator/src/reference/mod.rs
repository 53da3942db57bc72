//! The CPU reference model: what every input opcode computes, written from the extension specs.
//!
//! Functions work on per-invocation data of one subgroup (a slice indexed by invocation id)
//! so that a translated kernel's output can be compared value by value.

pub mod integer_dot;
