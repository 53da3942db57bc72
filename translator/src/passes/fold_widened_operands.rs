//! `FoldWidenedOperands`: a KHR MulAdd whose A and B are exact widenings of narrower matrices
//! multiplies the narrower matrices instead.
//!
//! MLIR's SPIR-V lowering (IREE's cooperative-matrix pipeline) writes an f16 GEMM with f32
//! results as f16 fragments loaded, `OpFConvert`ed to f32 A and B matrices, and multiplied as
//! `f32 * f32 + f32`. No device lists that shape (the H100 lists f32 for accumulators only), so
//! the whole module would run emulated. Widening an f16 or bf16 value to f32 or f64 is exact, and
//! so is the product of two widened values, so `A' * B' + C` with `A' = FConvert(A)` computes
//! the same sums as `A * B + C` with an f32 accumulator: the MulAdd takes `A` and `B`, the way
//! devices list it (`f16 * f16 + f32`). Integers likewise: `OpSConvert` or `OpUConvert` of 8- or
//! 16-bit matrices to 32-bit ones, where C and the result are 32-bit, become the narrow operands
//! with the MulAdd's signedness flag set from the conversion (sign extension reads the narrow
//! value as signed, zero extension as unsigned; the products agree modulo 2^32, which is all a
//! 32-bit sum keeps).
//!
//! Both A and B must fold (folding one would leave a mixed shape no device lists). Saturating
//! MulAdds are left alone (saturation sees the exact sum of narrow products, but the wrapped sum
//! of 32-bit ones). A conversion nothing else uses is removed, and then the matrix types and
//! pointers to them that nothing uses, so that an unused f32 Use-A type does not make the check
//! emulate the module.
//!
//! Preconditions: a valid module; runs before tiling, padding, emulation and the check, which
//! decide from the MulAdd types. On every target: on emulated ones the rewrite is bit for bit the
//! same computation (the emulation widens each element before multiplying) with the element-wise
//! conversions gone.

use crate::analysis::Types;
use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::match_accumulator_signedness::set_mul_add_flags;
use crate::profile::DeviceCaps;
use spirv::{CooperativeMatrixOperands as Flags, Op, Word};
use std::collections::{HashMap, HashSet};

pub struct FoldWidenedOperands;

impl Pass for FoldWidenedOperands {
    fn name(&self) -> &'static str {
        "fold-widened-operands"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !module.globals().iter().any(|i| i.is(Op::TypeCooperativeMatrixKHR)) {
            return Ok(outcome);
        }
        let types = Types::new(module);
        // Conversions of matrices, by result id, as (opcode, source).
        let conversions: HashMap<Word, (Op, Word)> = module
            .functions
            .iter()
            .flat_map(|f| f.insts())
            .filter_map(|i| match i.op()? {
                op @ (Op::FConvert | Op::SConvert | Op::UConvert) => Some((i.result_id?, (op, i.id(0).ok()?))),
                _ => None,
            })
            .collect();
        let mut folded: HashSet<Word> = HashSet::new();
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                for i in 0..module.functions[f].blocks[b].insts.len() {
                    let inst = &module.functions[f].blocks[b].insts[i];
                    if !inst.is(Op::CooperativeMatrixMulAddKHR) {
                        continue;
                    }
                    let Some((a, b_, flags)) = fold(&types, &conversions, inst) else { continue };
                    let inst = &mut module.functions[f].blocks[b].insts[i];
                    folded.extend([inst.id(0)?, inst.id(1)?]);
                    inst.operands[0] = Operand::Id(a);
                    inst.operands[1] = Operand::Id(b_);
                    set_mul_add_flags(inst, flags);
                    outcome.count(Op::CooperativeMatrixMulAddKHR as u32);
                }
            }
        }
        if outcome.changed {
            // Conversions nothing uses any more, with their names and decorations.
            module.remove_unused_values(|i| i.result_id.is_some_and(|r| folded.contains(&r)) && matches!(i.op(), Some(Op::FConvert | Op::SConvert | Op::UConvert)));
            remove_unused_matrix_types(module);
        }
        Ok(outcome)
    }
}

/// The narrow A and B, and the flags, that `mul_add` can take instead of its widened operands.
fn fold(types: &Types, conversions: &HashMap<Word, (Op, Word)>, mul_add: &Inst) -> Option<(Word, Word, Flags)> {
    let [a, b, c] = mul_add.ids().ok()?;
    let mut flags = Flags::from_bits_truncate(mul_add.word_opt(3).unwrap_or(0));
    if flags.contains(Flags::SATURATING_ACCUMULATION_KHR) {
        return None;
    }
    let component = |v: Word| -> Option<Word> {
        let d = types.defs.get(&types.type_of(v)?).filter(|d| d.is(Op::TypeCooperativeMatrixKHR))?;
        d.id(0).ok()
    };
    let result = types.defs.get(&mul_add.ty().ok()?)?.id(0).ok()?;
    let int32 = |t: Word| types.int(t).is_some_and(|(w, _)| w == 32);
    let wide_ints = int32(component(c)?) && int32(result);
    // The narrow source of `v`, and for integers whether it is read as signed.
    let narrow = |v: Word| -> Option<(Word, Option<bool>)> {
        let &(op, source) = conversions.get(&v)?;
        let (from, to) = (component(source)?, component(v)?);
        match op {
            Op::FConvert => {
                let (wf, _) = types.float(from)?;
                let (wt, _) = types.float(to)?;
                (wf < wt && wt >= 32).then_some((source, None))
            }
            Op::SConvert | Op::UConvert => {
                let (wf, _) = types.int(from)?;
                let (wt, _) = types.int(to)?;
                (wf <= 16 && wt == 32 && wide_ints).then_some((source, Some(op == Op::SConvert)))
            }
            _ => None,
        }
    };
    let ((na, sa), (nb, sb)) = (narrow(a)?, narrow(b)?);
    // Both float or both integer, and the narrow pair of one width (f16 with bf16 is no shape).
    let (ta, tb) = (component(na)?, component(nb)?);
    if sa.is_some() != sb.is_some() || types.scalar_width(ta) != types.scalar_width(tb) || types.float(ta).map(|(_, e)| e) != types.float(tb).map(|(_, e)| e) {
        return None;
    }
    if let (Some(sa), Some(sb)) = (sa, sb) {
        flags.set(Flags::MATRIX_A_SIGNED_COMPONENTS_KHR, sa);
        flags.set(Flags::MATRIX_B_SIGNED_COMPONENTS_KHR, sb);
    }
    Some((na, nb, flags))
}

/// Removes cooperative-matrix types, and pointer types to them, that no instruction uses.
pub(crate) fn remove_unused_matrix_types(module: &mut Module) {
    let matrices: HashSet<Word> = module.globals().iter().filter(|g| g.is(Op::TypeCooperativeMatrixKHR)).filter_map(|g| g.result_id).collect();
    module.remove_unused_globals(|g| g.is(Op::TypeCooperativeMatrixKHR) || (g.is(Op::TypePointer) && g.id(1).is_ok_and(|p| matrices.contains(&p))));
}
