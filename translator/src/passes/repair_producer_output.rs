//! `RepairProducerOutput`: mends what real producers get wrong in otherwise usable modules.
//!
//! Rewrite: identical decorations of one id are kept once (llvm-spirv 2024 decorates some
//! results `NoSignedWrap` twice, which spirv-val rejects). A `PhysicalStorageBuffer` load or
//! store whose `Aligned` operand is below the size of the largest scalar it moves gets that size
//! (glslang 12 loads 8-byte references with `Aligned 4`); Vulkan's layouts align every scalar to
//! its size, so the raised operand still holds. Interface lists that miss a variable
//! an entry point uses (llvm-spirv can leave out `__local` variables) are completed by the
//! kernel passes, which rebuild every interface list.
//!
//! Preconditions: none; a module without such defects is left as it is.

use crate::analysis::Types;
use crate::error::Result;
use crate::ir::{Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{MemoryAccess, Op, StorageClass, Word};
use std::collections::HashSet;

/// Bytes of the largest scalar in a value of `ty` (a pointer counts as its 8-byte address).
fn largest_scalar(types: &Types, ty: Word, depth: u32) -> u32 {
    let Some(def) = types.defs.get(&ty).filter(|_| depth < 64) else { return 0 };
    match def.op() {
        Some(Op::TypeInt | Op::TypeFloat) => def.word_opt(0).unwrap_or(0) / 8,
        Some(Op::TypePointer) => 8,
        Some(Op::TypeVector | Op::TypeMatrix | Op::TypeArray | Op::TypeRuntimeArray) => def.operands.first().and_then(Operand::id).map_or(0, |e| largest_scalar(types, e, depth + 1)),
        Some(Op::TypeStruct) => def.operands.iter().filter_map(Operand::id).map(|m| largest_scalar(types, m, depth + 1)).max().unwrap_or(0),
        _ => 0,
    }
}

/// Raises `Aligned` operands of `PhysicalStorageBuffer` accesses below the largest scalar moved.
fn raise_alignments(module: &mut Module, outcome: &mut Outcome) {
    let types = Types::new(module);
    let physical = |p: Word| types.type_of(p).and_then(|t| types.defs.get(&t)).is_some_and(|d| d.is(Op::TypePointer) && d.word_opt(0) == Some(StorageClass::PhysicalStorageBuffer as u32));
    module.for_each_inst_mut(|inst| {
        let (mask_at, value_ty) = match inst.op() {
            Some(Op::Load) => (1, inst.result_type),
            Some(Op::Store) => (2, inst.operands.get(1).and_then(Operand::id).and_then(|v| types.type_of(v))),
            _ => return,
        };
        let (Some(pointer), Some(ty)) = (inst.operands.first().and_then(Operand::id), value_ty) else { return };
        let Some(Operand::Enum(_, mask)) = inst.operands.get(mask_at) else { return };
        if mask & MemoryAccess::ALIGNED.bits() == 0 || !physical(pointer) {
            return;
        }
        let need = largest_scalar(&types, ty, 0);
        if let Some(Operand::Literal(a)) = inst.operands.get_mut(mask_at + 1) {
            if *a < need {
                *a = need;
                outcome.count(inst.opcode);
            }
        }
    });
}

pub struct RepairProducerOutput;

impl Pass for RepairProducerOutput {
    fn name(&self) -> &'static str {
        "repair-producer-output"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let mut seen = HashSet::new();
        let mut dropped = Vec::new();
        module.annotations.retain(|a| {
            let keep = seen.insert((a.opcode, a.operands.clone()));
            if !keep {
                dropped.push(a.opcode);
            }
            keep
        });
        for op in dropped {
            outcome.count(op);
        }
        raise_alignments(module, &mut outcome);
        Ok(outcome)
    }
}
