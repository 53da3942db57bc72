//! Upper bounds on integer values, read as unsigned: what a pass needs to know that an index or
//! offset cannot be negative (its bound is below its type's sign bit).
//!
//! One forward walk over each function, in block order (a block follows its dominator, so an
//! operand is seen before its use except through a phi): a value's bound follows from its
//! operands' for constants, conversions, `IAdd`/`IMul` that cannot wrap at the bounds, unsigned
//! division and remainder, shifts by constants, bitwise operations, selects, phis whose incoming
//! values are all seen, composites (one bound for every component) and loads of the sub-group
//! built-ins Vulkan bounds (`SubgroupLocalInvocationId` < 128, `SubgroupSize` <= 128). Every
//! other value is bounded by its type alone.

use super::Types;
use crate::ir::{Inst, Module, Operand};
use spirv::{BuiltIn, Op, Word};
use std::collections::HashMap;

/// The largest sub-group size Vulkan allows (`maxSubgroupSize` is a power of two up to 128).
const MAX_SUBGROUP_SIZE: u64 = 128;

/// Upper bounds of a module's integer values (scalars, and vectors whose every component the
/// bound covers).
pub struct UpperBounds<'t> {
    types: &'t Types,
    bounds: HashMap<Word, u64>,
}

impl<'t> UpperBounds<'t> {
    pub fn new(module: &Module, types: &'t Types) -> UpperBounds<'t> {
        let mut b = UpperBounds { types, bounds: HashMap::new() };
        let builtins: HashMap<Word, u64> = [(BuiltIn::SubgroupLocalInvocationId, MAX_SUBGROUP_SIZE - 1), (BuiltIn::SubgroupSize, MAX_SUBGROUP_SIZE)]
            .into_iter()
            .filter_map(|(builtin, bound)| Some((module.builtin_variable(builtin)?, bound)))
            .collect();
        for inst in module.globals() {
            if let Some(bound) = b.constant(inst) {
                b.note(inst, bound);
            }
        }
        for inst in module.functions.iter().flat_map(|f| f.blocks.iter().flat_map(|blk| blk.insts.iter())) {
            let bound = match inst.op() {
                Some(Op::Load) => inst.operands.first().and_then(Operand::id).and_then(|p| builtins.get(&p).copied()),
                _ => b.derived(inst),
            };
            if let Some(bound) = bound {
                b.note(inst, bound);
            }
        }
        b
    }

    /// The bound of integer value `id` (its type's largest value where nothing tighter is
    /// known); `None` for a value that is not an integer scalar or vector.
    pub fn of(&self, id: Word) -> Option<u64> {
        let max = self.types.type_of(id).and_then(|t| self.type_max(t))?;
        Some(self.bounds.get(&id).map_or(max, |&b| b.min(max)))
    }

    /// Whether integer value `id` is below its type's sign bit: not negative read as signed.
    pub fn is_non_negative(&self, id: Word) -> bool {
        let width = self.types.type_of(id).and_then(|t| self.width(t));
        match (self.of(id), width) {
            (Some(bound), Some(width)) => bound < 1u64 << (width - 1),
            _ => false,
        }
    }

    fn width(&self, ty: Word) -> Option<u32> {
        let scalar = self.types.vector(ty).map_or(ty, |(c, _)| c);
        self.types.int(scalar).map(|(w, _)| w)
    }

    fn type_max(&self, ty: Word) -> Option<u64> {
        self.width(ty).map(|w| u64::MAX >> (64 - w))
    }

    fn note(&mut self, inst: &Inst, bound: u64) {
        if let (Some(id), Some(max)) = (inst.result_id, inst.result_type.and_then(|t| self.type_max(t))) {
            if bound < max {
                self.bounds.insert(id, bound);
            }
        }
    }

    fn constant(&self, inst: &Inst) -> Option<u64> {
        match inst.op()? {
            Op::Constant => self.constant_value(inst.result_id?),
            Op::ConstantNull => Some(0),
            Op::ConstantComposite => self.max_of(inst.operands.iter().filter_map(Operand::id)),
            _ => None,
        }
    }

    /// The value of integer constant `id`, zero-extended from its width.
    fn constant_value(&self, id: Word) -> Option<u64> {
        let words = self.types.constants.get(&id)?;
        let width = self.types.type_of(id).and_then(|t| self.width(t))?;
        let low = u64::from(*words.first()?);
        Some(match width {
            w if w > 32 => low | u64::from(*words.get(1)?) << 32,
            w => low & (u64::MAX >> (64 - w)),
        })
    }

    /// The largest of the bounds of `ids` (`None` where one is not an integer).
    fn max_of(&self, ids: impl IntoIterator<Item = Word>) -> Option<u64> {
        ids.into_iter().map(|id| self.of(id)).try_fold(0, |m, b| Some(m.max(b?)))
    }

    fn derived(&self, inst: &Inst) -> Option<u64> {
        let max = self.type_max(inst.result_type?)?;
        let arg = |i: usize| inst.operands.get(i).and_then(Operand::id).and_then(|id| self.of(id));
        let literal = |i: usize| inst.operands.get(i).and_then(Operand::id).and_then(|id| self.constant_value(id));
        let fits = |v: u128| u64::try_from(v).ok().filter(|&v| v <= max);
        match inst.op()? {
            Op::CopyObject | Op::UConvert => arg(0),
            // A same-width bitcast keeps the bits; a signed value below its sign bit keeps its
            // value when widened.
            Op::Bitcast => {
                let from = inst.operands.first()?.id().and_then(|v| self.types.type_of(v))?;
                let same_shape = self.width(from) == self.width(inst.result_type?) && self.types.vector(from).map(|v| v.1) == self.types.vector(inst.result_type?).map(|v| v.1);
                arg(0).filter(|_| same_shape)
            }
            Op::SConvert => inst.operands.first()?.id().filter(|&v| self.is_non_negative(v)).and_then(|_| arg(0)),
            Op::IAdd => fits(u128::from(arg(0)?) + u128::from(arg(1)?)),
            Op::IMul => fits(u128::from(arg(0)?) * u128::from(arg(1)?)),
            Op::UDiv => match literal(1) {
                Some(d) if d > 0 => Some(arg(0)? / d),
                _ => arg(0),
            },
            // The remainder is below the divisor (a zero divisor is undefined behaviour).
            Op::UMod => match arg(1) {
                Some(d) if d > 0 => Some(arg(0)?.min(d - 1)),
                _ => arg(0),
            },
            Op::BitwiseAnd => Some(arg(0)?.min(arg(1)?)),
            Op::BitwiseOr | Op::BitwiseXor => Some(all_ones_to(arg(0)?.max(arg(1)?))),
            Op::ShiftRightLogical => Some(arg(0)? >> literal(1).unwrap_or(0).min(63)),
            Op::ShiftLeftLogical => fits(u128::from(arg(0)?) << literal(1).filter(|&s| s < 64)?),
            Op::Select => Some(arg(1)?.max(arg(2)?)),
            // An incoming value not seen yet (a loop's next value) leaves the phi unbounded.
            Op::Phi => inst.operands.iter().step_by(2).map(|v| v.id().and_then(|v| self.bounds.get(&v).copied())).try_fold(0, |m, b| Some(m.max(b?))),
            Op::CompositeExtract | Op::VectorExtractDynamic => arg(0),
            Op::CompositeConstruct => self.max_of(inst.operands.iter().filter_map(Operand::id)),
            Op::CompositeInsert | Op::VectorShuffle => Some(arg(0)?.max(arg(1)?)),
            _ => None,
        }
    }
}

/// The smallest `2^k - 1` at or above `v`: a bound on `a | b` and `a ^ b` for operands up to `v`.
fn all_ones_to(v: u64) -> u64 {
    match v {
        0 => 0,
        v => u64::MAX >> v.leading_zeros(),
    }
}
