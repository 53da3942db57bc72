//! `PreserveKernelFloatSemantics`: OpenCL's float semantics as Vulkan execution modes and
//! decorations, before `lower-kernel-interface` drops the kernel execution modes.
//!
//! - **Signed zeros, infinities and NaNs.** OpenCL C keeps them (IEEE 754); Vulkan lets a
//!   driver assume that float operands and results are not NaNs or infinities and ignore the
//!   sign of zero unless the entry point says `SignedZeroInfNanPreserve` for that width (the
//!   H200 folded `inf - rint(inf)` to 0 and gave an underflowed `tgamma` a zero of the wrong
//!   sign). Every kernel entry point gets `OpExecutionMode SignedZeroInfNanPreserve W` for
//!   each float width `W` the module declares where the target honours it
//!   (`shaderSignedZeroInfNanPreserveFloatW`), unless the producer said otherwise: an
//!   instruction of that width decorated `FPFastMathMode` with `NotNaN`, `NotInf`, `NSZ` or
//!   `Fast` (clang's `-cl-fast-relaxed-math`, `-cl-finite-math-only`, `-cl-no-signed-zeros`,
//!   which llvm-spirv writes that way) keeps the width free.
//! - **Contraction.** llvm-spirv marks `ContractionOff` a kernel whose multiplies and adds
//!   OpenCL C does not let the compiler fuse (separate expressions; what it may fuse, clang
//!   wrote as `mad`). Vulkan has no such mode: its drivers fuse a multiply into an add unless
//!   the instructions are decorated `NoContraction`. Every float `OpFMul`, `OpFAdd`, `OpFSub`,
//!   `OpVectorTimesScalar`, `OpMatrixTimesScalar`, `OpVectorTimesMatrix`,
//!   `OpMatrixTimesVector`, `OpMatrixTimesMatrix` and `OpDot` in the functions such a kernel
//!   reaches gets `NoContraction`, so the results are the rounded ones native OpenCL gives.
//!
//! Preconditions: a module with `Capability Kernel` (others are left alone). Runs on every
//! target.

use crate::analysis::Types;
use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use rspirv::grammar::OperandKind;
use spirv::{Capability, Decoration, ExecutionMode, ExecutionModel, FPFastMathMode, Op, Word};
use std::collections::{BTreeSet, HashSet};

pub struct PreserveKernelFloatSemantics;

/// The float arithmetic a driver may contract.
const CONTRACTIBLE: [Op; 9] = [Op::FMul, Op::FAdd, Op::FSub, Op::VectorTimesScalar, Op::MatrixTimesScalar, Op::VectorTimesMatrix, Op::MatrixTimesVector, Op::MatrixTimesMatrix, Op::Dot];

impl Pass for PreserveKernelFloatSemantics {
    fn name(&self) -> &'static str {
        "preserve-kernel-float-semantics"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !module.has_capability(Capability::Kernel) {
            return Ok(outcome);
        }
        let kernels: Vec<Word> = module.entry_points.iter().filter(|e| e.word_opt(0) == Some(ExecutionModel::Kernel as u32)).filter_map(|e| e.id(1).ok()).collect();
        let types = Types::new(module);
        let width_of = |ty: Option<Word>| types.ieee_float_width(ty?);
        // Widths the producer's fast-math flags leave free.
        let relaxed = FPFastMathMode::NOT_NAN | FPFastMathMode::NOT_INF | FPFastMathMode::NSZ | FPFastMathMode::FAST;
        let relaxed_ids: HashSet<Word> = module
            .annotations
            .iter()
            .filter(|a| a.is(Op::Decorate) && a.word_opt(1) == Some(Decoration::FPFastMathMode as u32))
            .filter(|a| a.word_opt(2).is_some_and(|m| FPFastMathMode::from_bits_retain(m).intersects(relaxed)))
            .filter_map(|a| a.operands.first().and_then(Operand::id))
            .collect();
        let mut relaxed_widths = HashSet::new();
        for function in &module.functions {
            for inst in function.insts() {
                if inst.result_id.is_some_and(|r| relaxed_ids.contains(&r)) {
                    relaxed_widths.extend(width_of(inst.result_type));
                }
            }
        }
        // Declared widths (bfloat16 is no IEEE width of its own).
        let widths: BTreeSet<u32> = module.globals().iter().filter(|g| g.is(Op::TypeFloat) && g.operands.len() == 1).filter_map(|g| g.word_opt(0)).collect();
        for width in widths {
            if relaxed_widths.contains(&width) || cx.target.float_controls.supports(ExecutionMode::SignedZeroInfNanPreserve, width) != Some(true) {
                continue;
            }
            for kernel in &kernels {
                if has_mode(module, *kernel, ExecutionMode::SignedZeroInfNanPreserve, Some(width)) {
                    continue;
                }
                module.execution_modes.push(Inst::new(
                    Op::ExecutionMode,
                    None,
                    None,
                    vec![Operand::Id(*kernel), Operand::Enum(OperandKind::ExecutionMode, ExecutionMode::SignedZeroInfNanPreserve as u32), Operand::Literal(width)],
                ));
                outcome.count(Op::ExecutionMode as u32);
            }
        }
        // NoContraction under ContractionOff.
        let strict: Vec<Word> = kernels.iter().copied().filter(|k| has_mode(module, *k, ExecutionMode::ContractionOff, None)).collect();
        if !strict.is_empty() {
            let reached = module.functions_reached_from(strict);
            let mut contracted: Vec<(Word, Op)> = Vec::new();
            for function in module.functions.iter().filter(|f| reached.contains(&f.id())) {
                for inst in function.insts().filter(|i| i.op().is_some_and(|op| CONTRACTIBLE.contains(&op))) {
                    if let (Some(id), Some(op), Some(_)) = (inst.result_id, inst.op(), width_of(inst.result_type)) {
                        contracted.push((id, op));
                    }
                }
            }
            let decorated: HashSet<Word> =
                module.annotations.iter().filter(|a| a.is(Op::Decorate) && a.word_opt(1) == Some(Decoration::NoContraction as u32)).filter_map(|a| a.operands.first().and_then(Operand::id)).collect();
            for (id, op) in contracted.into_iter().filter(|(id, _)| !decorated.contains(id)) {
                module.annotations.push(Inst::new(Op::Decorate, None, None, vec![Operand::Id(id), Operand::decoration(Decoration::NoContraction)]));
                outcome.count(op as u32);
            }
            module.interner.clear();
        }
        Ok(outcome)
    }
}

/// Whether entry point `function` has execution mode `mode` (with literal `width`, where given).
fn has_mode(module: &Module, function: Word, mode: ExecutionMode, width: Option<u32>) -> bool {
    module.execution_modes.iter().any(|m| m.word_opt(0) == Some(function) && m.word_opt(1) == Some(mode as u32) && (width.is_none() || m.word_opt(2) == width))
}
