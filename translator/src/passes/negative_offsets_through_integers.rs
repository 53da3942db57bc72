//! `NegativeOffsetsThroughIntegers`: `OpPtrAccessChain %T %base %element %indices...` on a
//! buffer pointer, where `%element` may be negative (a constant that is negative at its width,
//! or any value known only at run time) -> `OpConvertUToPtr (OpConvertPtrToU %base + element *
//! ArrayStride)`, the element sign-extended to 64 bits, then an `OpAccessChain` of the
//! remaining indices (or nothing more where there are none).
//!
//! NVIDIA's driver (580) miscompiles such a chain where the element is negative: loads through
//! it read zeros on the H100, whether the element is a 64- or 32-bit constant or computed at run
//! time (a kernel that reads `b[i - 128]` for `i` from 128 up, which clang folds into an offset of
//! `%b - 256` bytes, read zeros for all of B). The same address computed as a 64-bit integer
//! reads right, but costs the driver's view of the access (a 2D-block GEMM of 2D block reads ran
//! 28 % slower with every chain rewritten). Chains whose element is known not to be negative
//! ([`UpperBounds`]: a constant below the sign bit, a zero-extended narrower integer, sums and
//! products of such that cannot reach the sign bit, lane indices) stay chains.
//!
//! Preconditions: the base pointer type of each rewritten chain has an `ArrayStride` (spirv-val
//! requires one for `OpPtrAccessChain` on `PhysicalStorageBuffer` pointers; a chain without one
//! is left). Applies where the target's workarounds ask for it.

use crate::analysis::bounds::UpperBounds;
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
        // The chains to rewrite, by result id: a constant element's byte offset (its value,
        // sign-extended, times the base pointer type's stride), or a run-time element's width
        // and the stride.
        let mut offsets: HashMap<Word, Offset> = HashMap::new();
        let bounds = UpperBounds::new(module, &types);
        for inst in module.functions.iter().flat_map(|f| f.insts()) {
            if !matches!(inst.op(), Some(Op::PtrAccessChain | Op::InBoundsPtrAccessChain)) {
                continue;
            }
            let (Some(id), Some(base), Some(element)) = (inst.result_id, inst.operands.first().and_then(Operand::id), inst.operands.get(1).and_then(Operand::id)) else { continue };
            let Some(base_type) = types.type_of(base) else { continue };
            if types.pointer(base_type).map(|p| p.0) != Some(StorageClass::PhysicalStorageBuffer as u32) {
                continue;
            }
            let Some(stride) = module.decoration(base_type, Decoration::ArrayStride).and_then(|s| s.first().copied()) else { continue };
            if bounds.is_non_negative(element) {
                continue;
            }
            let offset = match constant_value(module, &types, element) {
                Some(v) => Offset::Constant((v as u64).wrapping_mul(u64::from(stride))),
                None => match types.type_of(element).and_then(|t| types.int(t)) {
                    Some((width @ (8 | 16 | 32 | 64), _)) => Offset::Dynamic { width, stride },
                    _ => continue,
                },
            };
            offsets.insert(id, offset);
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
                    let Some(&offset) = inst.result_id.and_then(|id| offsets.get(&id)) else {
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
                    let made = |op: Op, ty: Word, result: Word, operands: Vec<Operand>| Inst::new(op, Some(ty), Some(result), operands).from_origin(inst.origin);
                    let delta = match offset {
                        Offset::Constant(bytes) => module.constant_int(ulong, 64, false, bytes),
                        Offset::Dynamic { width, stride } => {
                            let element = inst.operands.get(1).and_then(Operand::id).unwrap_or_default();
                            let wide = match width {
                                64 => element,
                                _ => {
                                    let wide = module.alloc_id();
                                    out.push(made(Op::SConvert, ulong, wide, vec![Operand::Id(element)]));
                                    wide
                                }
                            };
                            match stride {
                                1 => wide,
                                _ => {
                                    let (bytes, scaled) = (module.constant_int(ulong, 64, false, u64::from(stride)), module.alloc_id());
                                    out.push(made(Op::IMul, ulong, scaled, vec![Operand::Id(wide), Operand::Id(bytes)]));
                                    scaled
                                }
                            }
                        }
                    };
                    let (address, moved) = (module.alloc_id(), module.alloc_id());
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

/// Where a chain's element lies: a constant byte offset, or an element of `width` bits known at
/// run time and the base's stride.
#[derive(Clone, Copy)]
enum Offset {
    Constant(u64),
    Dynamic { width: u32, stride: u32 },
}

/// The value of integer constant `id`, sign-extended from its width (SPIR-V reads a chain's
/// element as signed); `None` for anything else.
fn constant_value(module: &Module, types: &Types, id: Word) -> Option<i64> {
    let def = module.globals().iter().find(|g| g.result_id == Some(id) && g.is(Op::Constant))?;
    let (width, _) = types.int(def.result_type?)?;
    let low = u64::from(def.word_opt(0)?);
    let bits = match width {
        64 => low | (u64::from(def.word_opt(1)?) << 32),
        w if w < 64 => low & ((1u64 << w) - 1),
        _ => return None,
    };
    Some(match width {
        64 => bits as i64,
        w => ((bits << (64 - w)) as i64) >> (64 - w),
    })
}
