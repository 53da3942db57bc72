//! Specialization before translation: a module's specialization-constant defaults replaced by
//! the values a pipeline will give them, so that passes which need a constant (the
//! cooperative-matrix emulation sizes its per-invocation arrays from the matrix dimensions) see
//! the pipeline's values. The constants stay specialization constants with their `SpecId`s.

use crate::error::Result;
use crate::ir::{Module, Operand};
use spirv::{Decoration, Op, Word};
use std::collections::HashMap;

/// Sets the default of every scalar specialization constant whose `SpecId` is in `values`
/// (32-bit constants take the value, 64-bit ones its zero extension, booleans `value != 0`).
/// Returns how many defaults changed.
pub fn specialize(module: &mut Module, values: &[(u32, u32)]) -> Result<usize> {
    let wanted: HashMap<u32, u32> = values.iter().copied().collect();
    let by_id: HashMap<Word, u32> = module
        .annotations
        .iter()
        .filter(|a| a.is(Op::Decorate) && a.word_opt(1) == Some(Decoration::SpecId as u32))
        .filter_map(|a| Some((a.operands.first()?.id()?, *wanted.get(&a.word_opt(2)?)?)))
        .collect();
    let mut changed = 0;
    for inst in module.globals_mut().iter_mut() {
        let Some(value) = inst.result_id.and_then(|id| by_id.get(&id)).copied() else { continue };
        match inst.op() {
            Some(Op::SpecConstant) => {
                let words = match inst.operands.len() {
                    1 => vec![Operand::Literal(value)],
                    _ => vec![Operand::Literal(value), Operand::Literal(0)],
                };
                if inst.operands != words {
                    inst.operands = words;
                    changed += 1;
                }
            }
            Some(Op::SpecConstantTrue | Op::SpecConstantFalse) => {
                let op = if value != 0 { Op::SpecConstantTrue } else { Op::SpecConstantFalse };
                if inst.opcode != op as u32 {
                    inst.opcode = op as u32;
                    changed += 1;
                }
            }
            _ => {}
        }
    }
    Ok(changed)
}
