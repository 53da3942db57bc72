//! `ZeroSumsFromSelect`: `OpFAdd x +0.0` (either operand order) -> `x == 0 ? +0.0 : x`, and
//! `OpFSub +0.0 x` -> `x == 0 ? +0.0 : -x`.
//!
//! lavapipe before Mesa 26 (gallivm) compiles an addition of the constant `+0.0` to its other
//! operand and a subtraction from it to a negation, so `-0.0 + 0.0` and `0.0 - 0.0` are
//! `-0.0`, where IEEE 754 and the `SignedZeroInfNanPreserve` the driver advertises give `+0.0`
//! (OpenCL C code writes `x + 0.0f` to turn `-0` into `+0` before hashing or comparing bits,
//! and `0.0f - x` for a negation that keeps zeros positive). The selects give IEEE's results
//! for every `x`: `+0.0` for both zeros, `x` (or `-x`) for every other number, infinities and
//! NaNs. Only widths that an entry point declares `SignedZeroInfNanPreserve` for are
//! rewritten: elsewhere the driver may drop the sign of zero anyway. (`x - 0.0`, `x + -0.0`
//! and products came out right.)
//!
//! Preconditions: none (scalars and vectors alike; a zero is an `OpConstant` of all-zero bits,
//! an `OpConstantNull`, or a composite of them). Applies where the target's workarounds ask
//! for it.

use crate::analysis::Types;
use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{ExecutionMode, Op, Word};
use std::collections::HashSet;

pub struct ZeroSumsFromSelect;

/// What becomes of one instruction.
#[derive(Clone, Copy)]
enum Rewrite {
    /// `x + 0`: `x == 0 ? +0 : x`.
    Sum(Word),
    /// `0 - x`: `x == 0 ? +0 : -x`.
    Difference(Word),
}

impl Pass for ZeroSumsFromSelect {
    fn name(&self) -> &'static str {
        "zero-sums-from-select"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        target.workarounds.folds_zero_sums
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let preserved = preserved_widths(module);
        if preserved.is_empty() {
            return Ok(outcome);
        }
        let types = Types::new(module);
        let zeros = positive_zeros(module, &types);
        let rewrite_of = |inst: &Inst| rewrite_of(&types, &zeros, &preserved, inst);
        if !module.functions.iter().flat_map(|f| f.insts()).any(|i| rewrite_of(i).is_some()) {
            return Ok(outcome);
        }
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                let insts = std::mem::take(&mut module.functions[f].blocks[b].insts);
                let mut out = Vec::with_capacity(insts.len());
                for inst in insts {
                    let (Some(rewrite), Some(ty), Some(result)) = (rewrite_of(&inst), inst.result_type, inst.result_id) else {
                        out.push(inst);
                        continue;
                    };
                    let count = types.vector(ty).map_or(1, |(_, n)| n);
                    let boolean = module.type_bool();
                    let condition_ty = if count == 1 { boolean } else { module.type_vector(boolean, count) };
                    let zero = module.constant_null(ty);
                    let (x, otherwise, op) = match rewrite {
                        Rewrite::Sum(x) => (x, x, Op::FAdd),
                        Rewrite::Difference(x) => {
                            let negated = module.alloc_id();
                            out.push(Inst::new(Op::FNegate, Some(ty), Some(negated), vec![Operand::Id(x)]).from_origin(inst.origin));
                            (x, negated, Op::FSub)
                        }
                    };
                    let is_zero = module.alloc_id();
                    out.push(Inst::new(Op::FOrdEqual, Some(condition_ty), Some(is_zero), vec![Operand::Id(x), Operand::Id(zero)]).from_origin(inst.origin));
                    out.push(Inst::new(Op::Select, Some(ty), Some(result), vec![Operand::Id(is_zero), Operand::Id(zero), Operand::Id(otherwise)]).from_origin(inst.origin));
                    outcome.count(op as u32);
                }
                module.functions[f].blocks[b].insts = out;
            }
        }
        Ok(outcome)
    }
}

/// The first sum or difference this pass rewrites, if any: the runtime translates such modules
/// for drivers with this quirk.
pub fn first_user(module: &Module) -> Option<Word> {
    let preserved = preserved_widths(module);
    if preserved.is_empty() {
        return None;
    }
    let types = Types::new(module);
    let zeros = positive_zeros(module, &types);
    module.functions.iter().flat_map(|f| f.insts()).find(|i| rewrite_of(&types, &zeros, &preserved, i).is_some()).and_then(|i| i.result_id)
}

/// The float widths some entry point declares `SignedZeroInfNanPreserve` for.
pub(crate) fn preserved_widths(module: &Module) -> HashSet<u32> {
    module.execution_modes.iter().filter(|m| m.is(Op::ExecutionMode) && m.word_opt(1) == Some(ExecutionMode::SignedZeroInfNanPreserve as u32)).filter_map(|m| m.word_opt(2)).collect()
}

/// The rewrite of `inst` where it is an `OpFAdd x +0.0` (or `+0.0 x`) or an `OpFSub +0.0 x` of
/// floats of a width in `preserved`.
fn rewrite_of(types: &Types, zeros: &HashSet<Word>, preserved: &HashSet<u32>, inst: &Inst) -> Option<Rewrite> {
    if !inst.is(Op::FAdd) && !inst.is(Op::FSub) {
        return None;
    }
    if !preserved.contains(&types.ieee_float_width(inst.result_type?)?) {
        return None;
    }
    let [a, b] = inst.ids::<2>().ok()?;
    match (inst.is(Op::FAdd), zeros.contains(&a), zeros.contains(&b)) {
        (true, _, true) => Some(Rewrite::Sum(a)),
        (true, true, false) => Some(Rewrite::Sum(b)),
        (false, true, _) => Some(Rewrite::Difference(b)),
        _ => None,
    }
}

/// The constants whose every component is `+0.0` (or an integer's zero bits).
pub(crate) fn positive_zeros(module: &Module, types: &Types) -> HashSet<Word> {
    let mut zeros = HashSet::new();
    for g in module.globals() {
        let Some(id) = g.result_id else { continue };
        let zero = match g.op() {
            Some(Op::ConstantNull) => true,
            Some(Op::Constant) => types.constants.get(&id).is_some_and(|words| words.iter().all(|w| *w == 0)),
            Some(Op::ConstantComposite) => g.operands.iter().all(|o| o.id().is_some_and(|c| zeros.contains(&c))),
            _ => false,
        };
        if zero {
            zeros.insert(id);
        }
    }
    zeros
}
