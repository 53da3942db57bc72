//! Translator passes, one rewrite per file, each under the [`crate::pass::Pass`] contract.

pub mod check_cooperative_matrix;
pub mod emulate_cooperative_matrix;
pub mod emulate_float_atomics;
pub mod inline_functions;
pub mod legalize_narrow_types;
pub mod lower_async_copies;
pub mod lower_byte_pointers;
pub mod lower_integer_dot;
pub mod lower_kernel_interface;
pub mod lower_kernel_pointers;
pub mod lower_kernel_subgroups;
pub mod lower_kernel_synchronization;
pub mod lower_opencl_std;
pub mod materialize_matrix_length;
pub mod narrow_kernel_int64;
pub mod nv_to_khr_cooperative_matrix;
pub mod pad_cooperative_matrix;
pub mod pointer_bitcasts_through_words;
pub mod remainder_from_quotient;
pub mod repair_producer_output;
pub mod retype_float16_to_bfloat16;
pub mod split_wide_vectors;
pub mod strip_workgroup_layouts;
pub mod structurize_control_flow;
pub mod tile_cooperative_matrix;
pub mod virtualize_subgroup_size;
