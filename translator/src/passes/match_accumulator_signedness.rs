//! `MatchAccumulatorSignedness`: an integer MulAdd whose C and result are 32-bit and that does
//! not saturate reads C and writes the result with the signedness the target lists.
//!
//! Without `SaturatingAccumulation`, `A * B + C` wraps modulo 2^32, so the result's bits do not
//! depend on whether C and the result are read as signed or unsigned: only the A and B flags
//! change the sum. Producers differ in what they set: IREE's RDNA3 kernels multiply s8 matrices
//! into an unsigned 32-bit accumulator without the C and Result signedness flags
//! (`s8 * s8 + u32 -> u32`), while the H100 lists `s8 * s8 + s32 -> s32` only. Where the
//! target lists the MulAdd's A and B types with no row of its C and result signedness but with a
//! row of 32-bit C and result of another, the MulAdd takes that row's C and Result flags; shapes
//! are left to tiling and padding.
//!
//! Preconditions: a valid module. Applies to targets with cooperative matrices; emulation
//! computes the same bits either way.

use crate::analysis::Types;
use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass, Preserves};
use crate::passes::check_cooperative_matrix::component_type;
use crate::profile::{ComponentType, DeviceCaps};
use rspirv::grammar::OperandKind;
use spirv::{CooperativeMatrixOperands as Flags, Op, Word};

pub struct MatchAccumulatorSignedness;

impl Pass for MatchAccumulatorSignedness {
    fn name(&self) -> &'static str {
        "match-accumulator-signedness"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        target.has_cooperative_matrix()
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let types = Types::new(module);
        let target = cx.target;
        for f in &mut module.functions {
            for inst in f.blocks.iter_mut().flat_map(|b| b.insts.iter_mut()).filter(|i| i.is(Op::CooperativeMatrixMulAddKHR)) {
                let Some(flags) = listed_flags(&types, target, inst.ids().ok(), inst.result_type, inst.word_opt(3).unwrap_or(0)) else { continue };
                set_mul_add_flags(inst, flags);
                outcome.count(Op::CooperativeMatrixMulAddKHR as u32);
            }
        }
        Ok(outcome)
    }

    fn preserves(&self) -> Preserves {
        Preserves::ALL
    }
}

/// Sets the Cooperative Matrix Operands of MulAdd `inst` to `flags` (omitted where it had none
/// and `flags` is empty).
pub(crate) fn set_mul_add_flags(inst: &mut Inst, flags: Flags) {
    let operand = Operand::Enum(OperandKind::CooperativeMatrixOperands, flags.bits());
    match inst.operands.get_mut(3) {
        Some(slot) => *slot = operand,
        None if !flags.is_empty() => inst.operands.push(operand),
        None => {}
    }
}

/// The flags under which the MulAdd of `[a, b, c]` into `result_type` matches a listed row by
/// changing only its C and Result signedness; `None` where it already matches one, saturates,
/// is not on 32-bit integer C and result, or no row would match.
fn listed_flags(types: &Types, target: &DeviceCaps, operands: Option<[Word; 3]>, result_type: Option<Word>, bits: u32) -> Option<Flags> {
    let [a, b, c] = operands?;
    let flags = Flags::from_bits_truncate(bits);
    if flags.contains(Flags::SATURATING_ACCUMULATION_KHR) {
        return None;
    }
    let component = |ty: Word| types.defs.get(&ty).filter(|d| d.is(Op::TypeCooperativeMatrixKHR))?.id(0).ok();
    let (ta, tb, tc, tr) = (component(types.type_of(a)?)?, component(types.type_of(b)?)?, component(types.type_of(c)?)?, component(result_type?)?);
    if types.int(tc)?.0 != 32 || types.int(tr)?.0 != 32 {
        return None;
    }
    let comp = |t: Word, bit: Flags| component_type(types, t, Some(flags.contains(bit)));
    let (ca, cb) = (comp(ta, Flags::MATRIX_A_SIGNED_COMPONENTS_KHR)?, comp(tb, Flags::MATRIX_B_SIGNED_COMPONENTS_KHR)?);
    let (cc, cr) = (comp(tc, Flags::MATRIX_C_SIGNED_COMPONENTS_KHR)?, comp(tr, Flags::MATRIX_RESULT_SIGNED_COMPONENTS_KHR)?);
    let rows = || target.cooperative_matrix.iter().filter(|r| !r.saturating && r.a == ca && r.b == cb);
    if rows().any(|r| r.c == cc && r.result == cr) {
        return None;
    }
    let int32 = |t: ComponentType| matches!(t, ComponentType::S32 | ComponentType::U32);
    let row = rows().find(|r| int32(r.c) && int32(r.result))?;
    let mut out = flags;
    out.set(Flags::MATRIX_C_SIGNED_COMPONENTS_KHR, row.c == ComponentType::S32);
    out.set(Flags::MATRIX_RESULT_SIGNED_COMPONENTS_KHR, row.result == ComponentType::S32);
    Some(out)
}
