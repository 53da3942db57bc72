//! The CPU reference model: what every input opcode computes, written from the extension specs.
//!
//! Functions work on per-invocation data of one subgroup (`Vec` indexed by invocation id) so
//! that a translated kernel's output can be compared value by value. Every worked example in the
//! specs is a unit test here, and property tests check algebraic facts against plain loops.

pub mod block_io;
pub mod dpas;
pub mod elements;
pub mod integer_dot;
pub mod matrix;
