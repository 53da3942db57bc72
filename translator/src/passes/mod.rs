//! Translator passes, one rewrite per file, each under the [`crate::pass::Pass`] contract.

pub mod check_cooperative_matrix;
pub mod emulate_cooperative_matrix;
pub mod lower_integer_dot;
pub mod materialize_matrix_length;
pub mod nv_to_khr_cooperative_matrix;
pub mod retype_float16_to_bfloat16;
pub mod strip_workgroup_layouts;
