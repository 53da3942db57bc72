//! The pass pipeline: the passes a target needs (each pass decides from the target profile
//! whether it applies), any rewrites the caller requests, then the module's requirements
//! derived once and checked against the target.

use crate::error::Result;
use crate::ir::Module;
use crate::pass::{Analyses, Context, Pass};
use crate::passes;
use crate::profile::DeviceCaps;
use crate::requirements;
use serde::Serialize;
use spirv::Op;
use std::collections::BTreeMap;

/// Rewrites a caller asks for beyond what the target needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Request {
    /// Every `OpTypeFloat 16` becomes bf16 (`BFloat16KHR`): the matmul API's bf16 GEMM is the
    /// f16 kernel retyped.
    RetypeFloat16ToBFloat16,
}

impl Request {
    /// Every request, for name lookup.
    pub const ALL: [Request; 1] = [Request::RetypeFloat16ToBFloat16];

    /// The name of the pass the request runs.
    pub fn name(self) -> &'static str {
        match self {
            Request::RetypeFloat16ToBFloat16 => passes::retype_float16_to_bfloat16::RetypeFloat16ToBFloat16.name(),
        }
    }

    /// The request whose pass is named `name`.
    pub fn from_name(name: &str) -> Option<Request> {
        Request::ALL.into_iter().find(|r| r.name() == name)
    }
}

#[derive(Debug, Clone, Serialize)]
pub struct PassReport {
    pub name: &'static str,
    pub changed: bool,
    pub rewritten: BTreeMap<String, usize>,
    #[serde(skip_serializing_if = "Vec::is_empty")]
    pub notes: Vec<String>,
}

/// What a translation did, as `matbridge translate --report` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub target: String,
    pub passes: Vec<PassReport>,
    pub input_version: String,
    pub output_version: String,
    pub input_words: usize,
    pub output_words: usize,
}

/// An ordered list of passes.
pub struct Pipeline {
    passes: Vec<Box<dyn Pass>>,
}

impl Pipeline {
    /// Every pass, in order; each runs only where it applies to the target.
    fn all() -> Vec<Box<dyn Pass>> {
        vec![
            Box::new(passes::repair_producer_output::RepairProducerOutput),
            Box::new(passes::scalarize_single_component_vectors::ScalarizeSingleComponentVectors),
            Box::new(passes::drop_producer_hints::DropProducerHints),
            Box::new(passes::widen_arbitrary_integers::WidenArbitraryIntegers),
            Box::new(passes::resolve_intel_builtin_calls::ResolveIntelBuiltinCalls),
            Box::new(passes::inline_functions::InlineFunctions),
            Box::new(passes::lower_joint_matrix::LowerJointMatrix),
            Box::new(passes::lower_matrix_interpretations::LowerMatrixInterpretations),
            Box::new(passes::lower_subgroup_2d_block_io::LowerSubgroup2dBlockIo),
            Box::new(passes::forward_private_loads::ForwardPrivateLoads),
            Box::new(passes::sink_private_stores::SinkPrivateStores),
            Box::new(passes::lower_bfloat16_conversions::LowerBfloat16Conversions),
            Box::new(passes::lower_opencl_std::LowerOpenclStd),
            Box::new(passes::widen_bit_instructions::WidenBitInstructions),
            Box::new(passes::lower_work_group_collectives::LowerWorkGroupCollectives),
            Box::new(passes::lower_kernel_subgroups::LowerKernelSubgroups),
            Box::new(passes::lower_kernel_synchronization::LowerKernelSynchronization),
            Box::new(passes::lower_async_copies::LowerAsyncCopies),
            Box::new(passes::lower_kernel_images::LowerKernelImages),
            Box::new(passes::preserve_kernel_float_semantics::PreserveKernelFloatSemantics),
            Box::new(passes::legalize_float_controls::LegalizeFloatControls),
            Box::new(passes::lower_kernel_interface::LowerKernelInterface),
            Box::new(passes::lower_checked_matrix_access::LowerCheckedMatrixAccess),
            Box::new(passes::merge_joined_variables::MergeJoinedVariables),
            Box::new(passes::lower_kernel_pointers::LowerKernelPointers),
            Box::new(passes::narrow_kernel_int64::NarrowKernelInt64),
            Box::new(passes::lower_dpas_to_cooperative_matrix::LowerDpasToCooperativeMatrix),
            Box::new(passes::lower_subgroup_matrix_multiply_accumulate::LowerSubgroupMatrixMultiplyAccumulate),
            Box::new(passes::split_underaligned_accesses::SplitUnderalignedAccesses),
            Box::new(passes::split_wide_vectors::SplitWideVectors),
            Box::new(passes::lower_byte_pointers::LowerBytePointers),
            Box::new(passes::reduce_irreducible_loops::ReduceIrreducibleLoops),
            Box::new(passes::structurize_control_flow::StructurizeControlFlow),
            Box::new(passes::lower_workgroup_blocks::LowerWorkgroupBlocks),
            Box::new(passes::stage_packed_matrices::StagePackedMatrices),
            Box::new(passes::lower_matrix_element_coords::LowerMatrixElementCoords),
            Box::new(passes::virtualize_subgroup_size::VirtualizeSubgroupSize),
            Box::new(passes::lower_clustered_reductions::LowerClusteredReductions),
            Box::new(passes::nv_to_khr_cooperative_matrix::NvToKhrCooperativeMatrix),
            Box::new(passes::lower_cooperative_matrix2::LowerCooperativeMatrix2),
            Box::new(passes::fold_widened_operands::FoldWidenedOperands),
            Box::new(passes::match_accumulator_signedness::MatchAccumulatorSignedness),
            Box::new(passes::fuse_k_chains::FuseKChains),
            Box::new(passes::materialize_matrix_length::MaterializeMatrixLength),
            Box::new(passes::lower_integer_dot::LowerIntegerDot),
            Box::new(passes::pad_cooperative_matrix::PadCooperativeMatrix),
            Box::new(passes::tile_cooperative_matrix::TileCooperativeMatrix),
            Box::new(passes::emulate_cooperative_matrix::EmulateCooperativeMatrix),
            Box::new(passes::upgrade_memory_model::UpgradeMemoryModel),
            Box::new(passes::strip_workgroup_layouts::StripWorkgroupLayouts),
            Box::new(passes::lower_subgroup_extended_types::LowerSubgroupExtendedTypes),
            Box::new(passes::legalize_narrow_types::LegalizeNarrowTypes),
            Box::new(passes::emulate_float_atomics::EmulateFloatAtomics),
            Box::new(passes::remainder_from_quotient::RemainderFromQuotient),
            Box::new(passes::narrow_matrix_strides::NarrowMatrixStrides),
            Box::new(passes::negative_offsets_through_integers::NegativeOffsetsThroughIntegers),
            Box::new(passes::double_rounding_from_floor::DoubleRoundingFromFloor),
            Box::new(passes::zero_sums_from_select::ZeroSumsFromSelect),
            Box::new(passes::split_signed_zero_selects::SplitSignedZeroSelects),
            Box::new(passes::pointer_bitcasts_through_words::PointerBitcastsThroughWords),
            Box::new(passes::pointer_variables_through_words::PointerVariablesThroughWords),
            Box::new(passes::lay_out_added_workgroup_variables::LayOutAddedWorkgroupVariables),
            Box::new(passes::bound_workgroup_indices::BoundWorkgroupIndices),
            Box::new(passes::check_cooperative_matrix::CheckCooperativeMatrix),
        ]
    }

    /// The passes `target` needs, in order.
    pub fn for_target(target: &DeviceCaps) -> Pipeline {
        Pipeline::with_requests(target, &[])
    }

    /// The passes `target` needs plus the requested rewrites.
    pub fn with_requests(target: &DeviceCaps, requests: &[Request]) -> Pipeline {
        let mut list: Vec<Box<dyn Pass>> = Pipeline::all().into_iter().filter(|p| p.applies(target)).collect();
        for r in requests {
            match r {
                // Before emulation and widening, which must see bf16 components, and the
                // check, which must see bf16 matrices.
                Request::RetypeFloat16ToBFloat16 => {
                    let first = ["tile-cooperative-matrix", "emulate-cooperative-matrix", "legalize-narrow-types", "check-cooperative-matrix"];
                    let at = list.iter().position(|p| first.contains(&p.name())).unwrap_or(list.len());
                    list.insert(at, Box::new(passes::retype_float16_to_bfloat16::RetypeFloat16ToBFloat16));
                }
            }
        }
        Pipeline { passes: list }
    }

    /// Runs every pass, then derives capabilities, extensions and version and checks them
    /// against the target.
    pub fn run(&self, module: &mut Module, target: &DeviceCaps) -> Result<Vec<PassReport>> {
        let input_caps: Vec<u32> = module.declared_capabilities().collect();
        let mut analyses = Analyses::default();
        let mut reports = Vec::new();
        for pass in &self.passes {
            let outcome = pass.run(module, &mut Context { target, analyses: &mut analyses })?;
            if outcome.changed {
                analyses.invalidate(pass.preserves());
            }
            log::debug!("pass {}: changed {} {:?}", pass.name(), outcome.changed, outcome.rewritten);
            if log::log_enabled!(log::Level::Debug) {
                // Which pass removes an id and leaves its names or decorations (mended below).
                let defined: std::collections::HashSet<u32> = module.all_insts().filter_map(|i| i.result_id).collect();
                for a in module.annotations.iter().chain(&module.debug_names) {
                    if let Some(id) = a.operands.first().and_then(crate::ir::Operand::id).filter(|id| !defined.contains(id)) {
                        log::debug!("pass {}: {} of removed id %{id} left ({:?})", pass.name(), crate::ir::grammar::op_name(a.opcode), a.string(1));
                    }
                }
            }
            let rewritten = outcome.rewritten.into_iter().map(|(op, n)| (crate::ir::grammar::op_name(op), n)).collect();
            reports.push(PassReport { name: pass.name(), changed: outcome.changed, rewritten, notes: outcome.notes });
        }
        // Every pass keeps the interface lists whole; one that did not is mended here rather
        // than left to spirv-val or the driver.
        let listed = module.complete_entry_interfaces();
        if listed > 0 {
            log::warn!("{listed} variable(s) missing from entry point interfaces after the passes (a translator bug); added");
        }
        // A bitcast to its operand's own type is valid SPIR-V, but NVIDIA's compiler (580)
        // crashed on byte pointers cast to the same byte pointer type: it becomes a copy.
        let types = crate::analysis::Types::new(module);
        for f in &mut module.functions {
            for b in &mut f.blocks {
                for inst in b.insts.iter_mut().filter(|i| i.is(Op::Bitcast)) {
                    if inst.result_type.is_some() && inst.operands.first().and_then(crate::ir::Operand::id).and_then(|v| types.type_of(v)) == inst.result_type {
                        inst.opcode = Op::CopyObject as u32;
                    }
                }
            }
        }
        let forgotten = module.forget_undefined();
        if forgotten > 0 {
            log::warn!("{forgotten} name(s) or decoration(s) of removed ids left after the passes (a translator bug); dropped");
        }
        // Passes that rewrite arithmetic (widening, lowering OpenCL built-ins) may leave a
        // wrap decoration on an instruction that no longer takes one.
        let dropped = module.drop_wrap_decorations(|_| false);
        if dropped > 0 {
            log::debug!("{dropped} wrap decoration(s) on rewritten instructions dropped");
        }
        module.reorder_globals();
        requirements::derive(module, &input_caps, target)?;
        requirements::check_target(module, target)?;
        Ok(reports)
    }
}

fn version_string((major, minor): (u8, u8)) -> String {
    format!("{major}.{minor}")
}

/// Translates SPIR-V words for `target`: parse, run the target's pipeline, emit.
pub fn translate(words: &[u32], target: &DeviceCaps) -> Result<(Vec<u32>, Report)> {
    translate_with(words, target, &[])
}

/// [`translate`] with requested rewrites.
pub fn translate_with(words: &[u32], target: &DeviceCaps, requests: &[Request]) -> Result<(Vec<u32>, Report)> {
    translate_module(words, target, requests, &[])
}

/// [`translate`] for a pipeline that gives the specialization constants `(SpecId, value)`
/// these values: they become the defaults before the passes run (see [`crate::specialize`]).
pub fn translate_specialized(words: &[u32], target: &DeviceCaps, values: &[(u32, u32)]) -> Result<(Vec<u32>, Report)> {
    translate_module(words, target, &[], values)
}

fn translate_module(words: &[u32], target: &DeviceCaps, requests: &[Request], values: &[(u32, u32)]) -> Result<(Vec<u32>, Report)> {
    let mut module = Module::from_words(words)?;
    crate::input_checks::check(&module)?;
    crate::specialize::specialize(&mut module, values)?;
    let input_version = version_string(module.version());
    let passes = Pipeline::with_requests(target, requests).run(&mut module, target)?;
    let out = module.to_words();
    let report = Report { target: target.name.clone(), passes, input_version, output_version: version_string(module.version()), input_words: words.len(), output_words: out.len() };
    Ok((out, report))
}
