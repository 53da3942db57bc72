//! `DropProducerHints`: what producers write for their own optimizers and no Vulkan device
//! reads goes, so that the module does not ask the driver for an extension it lacks.
//!
//! llvm-spirv with every extension enabled (`--spirv-ext=+all`, and DPC++'s default list) adds
//! hints to ordinary kernels: `OptNoneINTEL` on every function of an unoptimized module
//! (SPV_INTEL_optnone), `FPMaxErrorDecorationINTEL 2.5` on float divisions (the accuracy OpenCL
//! already requires, SPV_INTEL_fp_max_error), alias scopes on loads and stores
//! (SPV_INTEL_memory_access_aliasing), cache controls and FPGA memory, loop and kernel
//! attributes. spirv-val accepts them under a Vulkan environment, but drivers refuse the
//! pipeline without saying why.
//!
//! Rewrite: decorations and execution modes that only a hint extension enables go; the
//! `OptNoneINTEL` function control bit, the alias-scope bits of memory operands (with their
//! `<id>`s), `OpLoopControlINTEL` and the cache prefetches of joint matrices and sub-group
//! buffers go; the alias domain, scope and scope-list declarations
//! go; `OpAssumeTrueKHR` goes and `OpExpectKHR` becomes a copy of its value
//! (SPV_KHR_expect_assume); then the capabilities and extensions only hints needed go.
//!
//! Preconditions: none; applies to every target. Extensions whose instructions compute
//! something (arbitrary-precision integers, sub-group operations, bfloat16 conversions) are
//! not hints: other passes translate them.

use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use rspirv::dr::Operand as DrOperand;
use spirv::{Decoration, ExecutionMode, FunctionControl, MemoryAccess, Op, Word};
use std::collections::HashSet;

/// Extensions whose every effect is a hint to the producer's own compiler.
const HINTS: &[&str] = &[
    "SPV_INTEL_optnone",
    "SPV_EXT_optnone",
    "SPV_INTEL_fp_max_error",
    "SPV_INTEL_memory_access_aliasing",
    "SPV_INTEL_cache_controls",
    "SPV_INTEL_kernel_attributes",
    "SPV_INTEL_maximum_registers",
    "SPV_INTEL_runtime_aligned",
    "SPV_KHR_expect_assume",
    "SPV_INTEL_unstructured_loop_controls",
    "SPV_INTEL_fpga_loop_controls",
    "SPV_INTEL_fpga_memory_attributes",
    "SPV_INTEL_fpga_memory_accesses",
    "SPV_INTEL_fpga_buffer_location",
    "SPV_INTEL_fpga_argument_interfaces",
    "SPV_INTEL_fpga_invocation_pipelining_attributes",
    "SPV_INTEL_fpga_latency_control",
    "SPV_INTEL_fpga_cluster_attributes",
    "SPV_INTEL_loop_fuse",
    "SPV_INTEL_fp_fast_math_mode",
];

/// Whether every extension in `exts` (none: a core enumerant, kept) is a hint.
fn only_hints(exts: &[&str]) -> bool {
    !exts.is_empty() && exts.iter().all(|e| HINTS.contains(e))
}

/// Whether only hint extensions enable `cap`.
fn hint_capability(cap: spirv::Capability) -> bool {
    only_hints(DrOperand::Capability(cap).required_extensions().as_slice())
}

/// Memory-operand bits that only SPV_INTEL_memory_access_aliasing defines; each takes one `<id>`.
const ALIAS_BITS: u32 = MemoryAccess::ALIAS_SCOPE_INTEL_MASK.bits() | MemoryAccess::NO_ALIAS_INTEL_MASK.bits();

/// Words of parameters a memory-operand mask `bits` is followed by.
fn access_parameters(bits: u32) -> usize {
    let with_one = MemoryAccess::ALIGNED.bits() | MemoryAccess::MAKE_POINTER_AVAILABLE.bits() | MemoryAccess::MAKE_POINTER_VISIBLE.bits() | ALIAS_BITS;
    (bits & with_one).count_ones() as usize
}

/// Clears the alias bits of the memory-operand masks of `inst` starting at operand `at` (as many
/// masks as follow one another: `OpCopyMemory` has two), with their `<id>`s. Returns whether
/// anything changed.
fn strip_alias_bits(inst: &mut Inst, mut at: usize) -> bool {
    let mut changed = false;
    while let Some(bits) = inst.operands.get(at).and_then(Operand::word) {
        let params = access_parameters(bits);
        if bits & ALIAS_BITS != 0 {
            // Parameters follow the order of the bits: the alias ones, highest, come last.
            let alias = (bits & ALIAS_BITS).count_ones() as usize;
            let end = (at + 1 + params).min(inst.operands.len());
            let from = end.saturating_sub(alias).max(at + 1);
            inst.operands.drain(from..end);
            let kept = bits & !ALIAS_BITS;
            inst.operands[at] = match inst.operands[at] {
                Operand::Enum(kind, _) => Operand::Enum(kind, kept),
                _ => Operand::Literal(kept),
            };
            changed = true;
            at += 1 + params - alias;
        } else {
            at += 1 + params;
        }
    }
    changed
}

/// Operand index of the first memory-operand mask of `op`, if it takes one.
fn memory_operands_at(op: Op) -> Option<usize> {
    Some(match op {
        Op::Load => 1,
        Op::Store | Op::CopyMemory => 2,
        Op::CopyMemorySized => 3,
        _ => return None,
    })
}

pub struct DropProducerHints;

impl Pass for DropProducerHints {
    fn name(&self) -> &'static str {
        "drop-producer-hints"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        drop_matrix_prefetches(module, &mut outcome);
        let declared: Vec<String> = module.extensions.iter().filter_map(|e| e.string(0)).collect();
        if !declared.iter().any(|e| HINTS.contains(&e.as_str())) {
            return Ok(outcome);
        }
        // Decorations and execution modes only hints enable: through their extensions, or
        // through capabilities only hints enable.
        let hint = |operand: DrOperand| {
            let caps = operand.required_capabilities();
            only_hints(operand.required_extensions().as_slice()) || (!caps.is_empty() && caps.iter().all(|c| hint_capability(*c)))
        };
        let hint_decoration = |w: Word| Decoration::from_u32(w).is_some_and(|d| hint(DrOperand::Decoration(d)));
        let hint_mode = |w: Word| ExecutionMode::from_u32(w).is_some_and(|m| hint(DrOperand::ExecutionMode(m)));
        let mut dropped = Vec::new();
        module.annotations.retain(|a| {
            let at = if a.is(Op::MemberDecorate) || a.is(Op::MemberDecorateString) { 2 } else { 1 };
            let hint = matches!(a.op(), Some(Op::Decorate | Op::DecorateId | Op::DecorateString | Op::MemberDecorate | Op::MemberDecorateString)) && a.word_opt(at).is_some_and(hint_decoration);
            if hint {
                dropped.push(a.opcode);
            }
            !hint
        });
        module.execution_modes.retain(|m| {
            let hint = m.word_opt(1).is_some_and(hint_mode);
            if hint {
                dropped.push(m.opcode);
            }
            !hint
        });
        // Alias declarations (global, or where a producer put them) and expect/assume.
        let declarations = [Op::AliasDomainDeclINTEL, Op::AliasScopeDeclINTEL, Op::AliasScopeListDeclINTEL];
        let mut gone: HashSet<Word> = HashSet::new();
        module.globals_mut().retain(|g| {
            let hint = g.op().is_some_and(|op| declarations.contains(&op));
            if hint {
                gone.extend(g.result_id);
                dropped.push(g.opcode);
            }
            !hint
        });
        let optnone = FunctionControl::OPT_NONE_EXT.bits();
        for f in &mut module.functions {
            if let Some(control) = f.def.operands.first().and_then(Operand::word).filter(|c| c & optnone != 0) {
                f.def.operands[0] = Operand::Enum(rspirv::grammar::OperandKind::FunctionControl, control & !optnone);
                dropped.push(f.def.opcode);
            }
            for b in &mut f.blocks {
                b.insts.retain_mut(|inst| {
                    match inst.op() {
                        Some(op) if declarations.contains(&op) => {
                            gone.extend(inst.result_id);
                            dropped.push(inst.opcode);
                            return false;
                        }
                        Some(Op::AssumeTrueKHR | Op::LoopControlINTEL) => {
                            dropped.push(inst.opcode);
                            return false;
                        }
                        Some(Op::ExpectKHR) => {
                            // The expected value is a hint; the result is the value.
                            inst.opcode = Op::CopyObject as u32;
                            inst.operands.truncate(1);
                            dropped.push(Op::ExpectKHR as u32);
                        }
                        Some(op) => {
                            if let Some(at) = memory_operands_at(op) {
                                if strip_alias_bits(inst, at) {
                                    dropped.push(inst.opcode);
                                }
                            }
                        }
                        None => {}
                    }
                    true
                });
            }
        }
        module.debug_names.retain(|n| !n.operands.first().and_then(Operand::id).is_some_and(|t| gone.contains(&t)));
        // Capabilities only hint extensions enable, and those extensions.
        let before = module.capabilities.len();
        module.capabilities.retain(|c| !c.word_opt(0).and_then(spirv::Capability::from_u32).is_some_and(hint_capability));
        let removed_caps = before - module.capabilities.len();
        module.extensions.retain(|e| !e.string(0).is_some_and(|s| HINTS.contains(&s.as_str())));
        for op in dropped {
            outcome.count(op);
        }
        if removed_caps > 0 {
            outcome.count(Op::Capability as u32);
        }
        Ok(outcome)
    }
}

/// SPV_INTEL_joint_matrix's `OpCooperativeMatrixPrefetchINTEL` (DPC++'s `joint_matrix_prefetch`)
/// asks Intel's caches to fetch a matrix early; it goes, with its capability (and the extension,
/// where no other of its capabilities is left). So does SPV_INTEL_subgroup_buffer_prefetch's
/// `OpSubgroupBlockPrefetchINTEL` (its capability goes with the last instruction that needs it).
fn drop_matrix_prefetches(module: &mut Module, outcome: &mut Outcome) {
    use crate::ir::grammar::intel_cooperative_matrix as icm;
    for f in &mut module.functions {
        for b in &mut f.blocks {
            b.insts.retain(|inst| {
                let prefetch = inst.opcode == icm::PREFETCH || inst.is(Op::SubgroupBlockPrefetchINTEL);
                if prefetch {
                    outcome.count(inst.opcode);
                }
                !prefetch
            });
        }
    }
    if crate::passes::lower_joint_matrix::drop_capability(module, icm::CAPABILITY_PREFETCH) {
        outcome.count(Op::Capability as u32);
    }
}
