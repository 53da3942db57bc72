//! Translator passes, one rewrite per file.

pub mod check_cooperative_matrix;
pub mod lower_integer_dot;
pub mod materialize_matrix_length;
pub mod nv_to_khr_cooperative_matrix;
