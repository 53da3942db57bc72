//! `NegativeOffsetsThroughIntegers`: `OpPtrAccessChain %T %base %element %indices...` on a
//! buffer pointer, where `%element` is a constant that is negative at its width ->
//! `OpConvertUToPtr (OpConvertPtrToU %base + element * ArrayStride)`, then an
//! `OpAccessChain` of the remaining indices (or a copy where there are none).
//!
//! NVIDIA's driver (580) miscompiles such a chain: a kernel that reads `b[i - 128]` for `i` from
//! 128 up (clang folds the `- 128` into a constant offset of the buffer pointer, `%b - 256` bytes)
//! reads zeros on the H100. The same address computed as a 64-bit integer reads right. Elements
//! known only at run time, and constant ones that are not negative, are left as they are.
//!
//! Preconditions: the base pointer type of each rewritten chain has an `ArrayStride` (spirv-val
//! requires one for `OpPtrAccessChain` on `PhysicalStorageBuffer` pointers; a chain without one
//! is left). Applies where the target's workarounds ask for it.

use crate::analysis::Types;
use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{Decoration, Op, StorageClass, Word};
use std::collections::HashMap;

pub struct NegativeOffsetsThroughIntegers;

impl Pass for NegativeOffsetsThroughIntegers {
    fn name(&self) -> &'static str {
        "negative-offsets-through-integers"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        target.workarounds.negative_offsets_through_integers
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let types = Types::new(module);
        // Byte offsets of the chains to rewrite, by result id: the Element's value (negative at
        // its width, sign-extended) times the base pointer type's stride.
        let mut offsets: HashMap<Word, u64> = HashMap::new();
        for inst in module.functions.iter().flat_map(|f| f.insts()) {
            if !matches!(inst.op(), Some(Op::PtrAccessChain | Op::InBoundsPtrAccessChain)) {
                continue;
            }
            let (Some(id), Some(base), Some(element)) = (inst.result_id, inst.operands.first().and_then(Operand::id), inst.operands.get(1).and_then(Operand::id)) else { continue };
            let Some(base_type) = types.type_of(base) else { continue };
            if types.pointer(base_type).map(|p| p.0) != Some(StorageClass::PhysicalStorageBuffer as u32) {
                continue;
            }
            let Some(value) = negative_constant(module, &types, element) else { continue };
            let Some(stride) = module.decoration(base_type, Decoration::ArrayStride).and_then(|s| s.first().copied()) else { continue };
            offsets.insert(id, (value as u64).wrapping_mul(u64::from(stride)));
        }
        if offsets.is_empty() {
            return Ok(outcome);
        }
        let ulong = module.type_int(64, false);
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                let insts = std::mem::take(&mut module.functions[f].blocks[b].insts);
                let mut out = Vec::with_capacity(insts.len());
                for inst in insts {
                    let Some(&bytes) = inst.result_id.and_then(|id| offsets.get(&id)) else {
                        out.push(inst);
                        continue;
                    };
                    let (Some(ty), Some(id), Some(base)) = (inst.result_type, inst.result_id, inst.operands.first().and_then(Operand::id)) else {
                        out.push(inst);
                        continue;
                    };
                    let Some(base_type) = types.type_of(base) else {
                        out.push(inst);
                        continue;
                    };
                    let delta = module.constant_int(ulong, 64, false, bytes);
                    let (address, moved) = (module.alloc_id(), module.alloc_id());
                    let made = |op: Op, ty: Word, result: Word, operands: Vec<Operand>| Inst::new(op, Some(ty), Some(result), operands).from_origin(inst.origin);
                    out.push(made(Op::ConvertPtrToU, ulong, address, vec![Operand::Id(base)]));
                    out.push(made(Op::IAdd, ulong, moved, vec![Operand::Id(address), Operand::Id(delta)]));
                    let indices = &inst.operands[2..];
                    match indices.is_empty() {
                        true => out.push(made(Op::ConvertUToPtr, ty, id, vec![Operand::Id(moved)])),
                        false => {
                            let moved_ptr = module.alloc_id();
                            out.push(made(Op::ConvertUToPtr, base_type, moved_ptr, vec![Operand::Id(moved)]));
                            out.push(made(Op::AccessChain, ty, id, std::iter::once(Operand::Id(moved_ptr)).chain(indices.iter().cloned()).collect()));
                        }
                    }
                    outcome.count(inst.opcode);
                    outcome.changed = true;
                }
                module.functions[f].blocks[b].insts = out;
            }
        }
        Ok(outcome)
    }
}

/// The value of integer constant `id` where it is negative at its width, sign-extended.
fn negative_constant(module: &Module, types: &Types, id: Word) -> Option<i64> {
    let def = module.globals().iter().find(|g| g.result_id == Some(id) && g.is(Op::Constant))?;
    let (width, _) = types.int(def.result_type?)?;
    let low = u64::from(def.word_opt(0)?);
    let bits = match width {
        64 => low | (u64::from(def.word_opt(1)?) << 32),
        w if w < 64 => low & ((1u64 << w) - 1),
        _ => return None,
    };
    let value = match width {
        64 => bits as i64,
        w => ((bits << (64 - w)) as i64) >> (64 - w),
    };
    (value < 0).then_some(value)
}
