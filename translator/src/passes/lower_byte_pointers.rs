//! `LowerBytePointers`: pointers to bytes in buffers become 64-bit addresses held in a `uvec2`,
//! for devices without 8-bit integers (SwiftShader).
//!
//! Producers do pointer arithmetic in bytes (LLVM canonicalizes offsets to `i8` GEPs), so a
//! kernel that never reads a byte still has `PhysicalStorageBuffer` pointers to `uchar`, and the
//! type alone needs `Int8`. Rewrite: each such pointer type becomes `uvec2` (low word, high
//! word), which is what `OpBitcast` makes of a 64-bit pointer; bitcasts from and to other buffer
//! pointers stay bitcasts, `OpPtrAccessChain` adds the (sign-extended) byte offset with carry,
//! phis, selects and copies carry the address along, and a kernel argument of that type is
//! recorded as `arg<k>.addr`. The 8-bit type goes when nothing else uses it.
//!
//! Preconditions: a lowered kernel (`lower-kernel-pointers` ran). Loads, stores and atomics of
//! bytes are errors naming the instruction (they need the device's 8-bit storage features).
//! Applies where the target lacks `shader_int8`.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{Decoration, Op, StorageClass, Word};
use std::collections::HashSet;

pub struct LowerBytePointers;

/// (pointee, storage class) of a buffer pointer value whose pointee is a struct or an array.
fn aggregate_pointee(types: &Types, v: Word) -> Option<(Word, u32)> {
    let t = types.type_of(v)?;
    let d = types.defs.get(&t).filter(|d| d.is(Op::TypePointer))?;
    let pointee = d.id(1).ok()?;
    let pd = types.defs.get(&pointee)?;
    matches!(pd.op(), Some(Op::TypeStruct | Op::TypeArray | Op::TypeRuntimeArray)).then_some((pointee, d.word_opt(0)?))
}

/// The buffer pointer type to `leaf`, the existing one (with its `ArrayStride`) when there is one.
fn leaf_pointer(module: &mut Module, class: StorageClass, leaf: Word) -> Word {
    let existing = module.globals().iter().find(|g| g.is(Op::TypePointer) && g.word_opt(0) == Some(class as u32) && g.operands.get(1) == Some(&Operand::Id(leaf))).and_then(|g| g.result_id);
    existing.unwrap_or_else(|| {
        let id = module.alloc_id();
        module.add_global(Inst::new(Op::TypePointer, None, Some(id), vec![Operand::storage_class(class), Operand::Id(leaf)]));
        id
    })
}

impl Pass for LowerBytePointers {
    fn name(&self) -> &'static str {
        "lower-byte-pointers"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        !target.shader_int8
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !crate::kernel::is_lowered_kernel(module) {
            return Ok(outcome);
        }
        let types = Types::new(module);
        let psb = StorageClass::PhysicalStorageBuffer as u32;
        let bytes: HashSet<Word> = module
            .globals()
            .iter()
            .filter(|g| g.is(Op::TypePointer) && g.word_opt(0) == Some(psb))
            .filter(|g| g.id(1).ok().and_then(|p| types.int(p)).is_some_and(|i| i.0 == 8))
            .filter_map(|g| g.result_id)
            .collect();
        if bytes.is_empty() {
            return Ok(outcome);
        }
        let is_byte_ptr = |v: Word| types.type_of(v).is_some_and(|t| bytes.contains(&t));
        // Byte accesses cannot be lowered here.
        for inst in module.functions.iter().flat_map(|f| f.blocks.iter().flat_map(|b| b.insts.iter())) {
            let accesses = matches!(inst.op(), Some(Op::Load | Op::Store)) || inst.op().is_some_and(crate::passes::lower_kernel_pointers::is_atomic);
            if accesses && inst.operands.first().and_then(Operand::id).is_some_and(is_byte_ptr) {
                return Err(Error::Unsupported {
                    site: module.site(inst),
                    target: cx.target.name.clone(),
                    missing: "8-bit integers (shaderInt8 and storageBuffer8BitAccess): the instruction reads or writes a byte".into(),
                });
            }
        }
        let uint = module.type_int(32, false);
        let uvec2 = module.type_vector(uint, 2);
        let carry_ty = module.type_struct(&[uint, uint]);
        let c31 = module.constant_u32(31);
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                let body = std::mem::take(&mut module.functions[f].blocks[b].insts);
                let mut out = Vec::with_capacity(body.len());
                for inst in body {
                    let result_byte = inst.result_type.is_some_and(|t| bytes.contains(&t));
                    let src = inst.operands.first().and_then(Operand::id);
                    match inst.op() {
                        Some(Op::PtrAccessChain | Op::InBoundsPtrAccessChain) if result_byte => {
                            let base = inst.id(0)?;
                            let off = inst.id(1)?;
                            let origin = inst.origin;
                            let mut emit = |op: Op, ty: Word, ops: Vec<Operand>, module: &mut Module| -> Word {
                                let id = module.alloc_id();
                                out.push(Inst::new(op, Some(ty), Some(id), ops).from_origin(origin));
                                id
                            };
                            let lo = emit(Op::CompositeExtract, uint, vec![Operand::Id(base), Operand::Literal(0)], module);
                            let hi = emit(Op::CompositeExtract, uint, vec![Operand::Id(base), Operand::Literal(1)], module);
                            let (off_lo, off_hi) = match types.type_of(off).and_then(|t| types.int(t)) {
                                Some((64, _)) => {
                                    let w = emit(Op::Bitcast, uvec2, vec![Operand::Id(off)], module);
                                    (
                                        emit(Op::CompositeExtract, uint, vec![Operand::Id(w), Operand::Literal(0)], module),
                                        emit(Op::CompositeExtract, uint, vec![Operand::Id(w), Operand::Literal(1)], module),
                                    )
                                }
                                Some((32, signed)) => {
                                    let o = if signed { emit(Op::Bitcast, uint, vec![Operand::Id(off)], module) } else { off };
                                    (o, emit(Op::ShiftRightArithmetic, uint, vec![Operand::Id(o), Operand::Id(c31)], module))
                                }
                                _ => return Err(Error::Invalid { site: module.site(&inst), message: "steps a byte pointer by an offset that is not a 32- or 64-bit integer".into() }),
                            };
                            let sum = emit(Op::IAddCarry, carry_ty, vec![Operand::Id(lo), Operand::Id(off_lo)], module);
                            let new_lo = emit(Op::CompositeExtract, uint, vec![Operand::Id(sum), Operand::Literal(0)], module);
                            let carry = emit(Op::CompositeExtract, uint, vec![Operand::Id(sum), Operand::Literal(1)], module);
                            let h = emit(Op::IAdd, uint, vec![Operand::Id(hi), Operand::Id(off_hi)], module);
                            let new_hi = emit(Op::IAdd, uint, vec![Operand::Id(h), Operand::Id(carry)], module);
                            out.push(Inst::new(Op::CompositeConstruct, inst.result_type, inst.result_id, vec![Operand::Id(new_lo), Operand::Id(new_hi)]).from_origin(origin));
                            outcome.count(inst.opcode);
                        }
                        Some(Op::Bitcast) if result_byte && src.is_some_and(is_byte_ptr) => {
                            out.push(Inst::new(Op::CopyObject, inst.result_type, inst.result_id, inst.operands.clone()).from_origin(inst.origin));
                        }
                        Some(Op::Bitcast) if !result_byte && src.is_some_and(is_byte_ptr) && inst.result_type == Some(uvec2) => {
                            out.push(Inst::new(Op::CopyObject, inst.result_type, inst.result_id, inst.operands.clone()).from_origin(inst.origin));
                        }
                        Some(Op::Bitcast) if result_byte && src.is_some_and(|v| aggregate_pointee(&types, v).is_some()) => {
                            // Through the first scalar member: SwiftShader cannot bitcast a
                            // pointer to an aggregate.
                            let v = src.unwrap_or(0);
                            let (pointee, class) = aggregate_pointee(&types, v).unwrap_or((0, psb));
                            let leaf_depth = crate::passes::lower_kernel_pointers::zero_chain(&types, pointee, |t| types.int(t).is_some() || types.float(t).is_some() || types.vector(t).is_some());
                            let Some(depth) = leaf_depth else {
                                out.push(inst);
                                continue;
                            };
                            let mut leaf = pointee;
                            for _ in 0..depth {
                                leaf = types.defs.get(&leaf).and_then(|d| d.id(0).ok()).unwrap_or(leaf);
                            }
                            let class = StorageClass::from_u32(class).unwrap_or(StorageClass::PhysicalStorageBuffer);
                            let leaf_ptr = leaf_pointer(module, class, leaf);
                            let zero = module.constant_u32(0);
                            let chain = module.alloc_id();
                            let mut ops = vec![Operand::Id(v)];
                            ops.extend(std::iter::repeat_n(Operand::Id(zero), depth));
                            out.push(Inst::new(Op::AccessChain, Some(leaf_ptr), Some(chain), ops).from_origin(inst.origin));
                            out.push(Inst::new(Op::Bitcast, inst.result_type, inst.result_id, vec![Operand::Id(chain)]).from_origin(inst.origin));
                        }
                        Some(
                            Op::Bitcast
                            | Op::Phi
                            | Op::Select
                            | Op::CopyObject
                            | Op::Load
                            | Op::AccessChain
                            | Op::Undef
                            | Op::CompositeExtract
                            | Op::CompositeConstruct
                            | Op::CompositeInsert
                            | Op::Store
                            | Op::IEqual
                            | Op::INotEqual,
                        ) => out.push(inst),
                        _ if result_byte || inst.operands.iter().filter_map(Operand::id).any(is_byte_ptr) => {
                            return Err(Error::Unsupported {
                                site: module.site(&inst),
                                target: cx.target.name.clone(),
                                missing: "8-bit integers: the instruction uses a byte pointer in a way that has no lowering to addresses".into(),
                            });
                        }
                        _ => out.push(inst),
                    }
                }
                module.functions[f].blocks[b].insts = out;
            }
        }
        // Argument names, then the types.
        crate::kernel::mark_argument_members(module, |t| bytes.contains(&t), |_| "addr".into());
        module.annotations.retain(|a| !(a.is(Op::Decorate) && a.word_opt(1) == Some(Decoration::ArrayStride as u32) && a.word_opt(0).is_some_and(|t| bytes.contains(&t))));
        for g in module.globals_mut().iter_mut() {
            if g.result_id.is_some_and(|r| bytes.contains(&r)) {
                *g = Inst::new(Op::TypeVector, None, g.result_id, vec![Operand::Id(uint), Operand::Literal(2)]);
            }
        }
        module.merge_duplicate_types();
        // The byte type goes when nothing uses it any more.
        let used: HashSet<Word> = module.all_insts().flat_map(|i| i.used_ids().collect::<Vec<_>>()).collect();
        module.globals_mut().retain(|g| !(g.is(Op::TypeInt) && g.word_opt(0) == Some(8) && g.result_id.is_some_and(|r| !used.contains(&r))));
        outcome.changed = true;
        Ok(outcome)
    }
}
