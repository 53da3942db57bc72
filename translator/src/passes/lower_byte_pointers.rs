//! `LowerBytePointers`: pointers to 8- and 16-bit data in buffers become 64-bit addresses held
//! in a `uvec2`, and accesses through them 32-bit word accesses, for devices without 8- or
//! 16-bit types or storage (SwiftShader).
//!
//! Producers do pointer arithmetic in bytes (LLVM canonicalizes offsets to `i8` GEPs), so a
//! kernel that never reads a byte still has `PhysicalStorageBuffer` pointers to `uchar`, and the
//! type alone needs `Int8`; `half` and `short` buffers need 16-bit storage. Rewrite: each such
//! pointer type becomes `uvec2` (low word, high word), which is what `OpBitcast` makes of a
//! 64-bit pointer; bitcasts from and to other buffer pointers stay bitcasts, `OpPtrAccessChain`
//! adds the (sign-extended, scaled) byte offset with carry, phis, selects and copies carry the
//! address along, and a kernel argument of that type is recorded as `arg<k>.addr`. A load reads
//! the aligned word holding the element and extracts its bits into the narrow type (which
//! `legalize-narrow-types` then holds in 32 bits); a store clears and sets its bits with two
//! atomics, so that neighbours other work-items write survive. The narrow types go when nothing
//! else uses them.
//!
//! Preconditions: a lowered kernel (`lower-kernel-pointers` ran); elements aligned to their size.
//! Atomics on 8- and 16-bit data are errors naming the instruction. Applies where the target
//! lacks 8-bit integers or storage, or 16-bit integers, floats or storage.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{Decoration, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

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
        !(target.shader_int8 && target.storage_buffer_8bit && target.shader_int16 && target.shader_float16 && target.storage_buffer_16bit)
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !crate::kernel::is_lowered_kernel(module) {
            return Ok(outcome);
        }
        let t = cx.target;
        let lower8 = !(t.shader_int8 && t.storage_buffer_8bit);
        let lower16 = |float: bool| !(t.storage_buffer_16bit && if float { t.shader_float16 } else { t.shader_int16 });
        // Narrow scalar type -> its bytes, where it is lowered.
        let narrow_of = |types: &Types, t: Word| match (types.int(t), types.float(t)) {
            (Some((8, _)), _) if lower8 => Some(1),
            (Some((16, _)), _) if lower16(false) => Some(2),
            (_, Some((16, None))) if lower16(true) => Some(2),
            _ => None,
        };
        // Chains down to a narrow member become byte offsets (`s[i].c` for a `char` member, as
        // unoptimized producers write it): the forms lowered below.
        let psb = StorageClass::PhysicalStorageBuffer as u32;
        crate::passes::byte_offsets::chains_through_byte_offsets(module, |types, inst| {
            let narrow_result = inst.result_type.and_then(|t| types.pointer(t)).is_some_and(|(c, p)| c == psb && narrow_of(types, types.vector(p).map_or(p, |(c, _)| c)).is_some());
            let aggregate_base = inst
                .id(0)
                .ok()
                .and_then(|b| types.type_of(b))
                .and_then(|t| types.pointer(t))
                .is_some_and(|(_, p)| types.defs.get(&p).is_some_and(|d| matches!(d.op(), Some(Op::TypeStruct | Op::TypeArray | Op::TypeRuntimeArray | Op::TypeVector))));
            let steps_only = matches!(inst.op(), Some(Op::PtrAccessChain | Op::InBoundsPtrAccessChain)) && inst.operands.len() == 2;
            narrow_result && aggregate_base && !steps_only
        })?;
        let types = Types::new(module);
        // Narrow pointer type -> its pointee's shape: bytes per component, components (1 for a
        // scalar) and the bytes one element takes (a 3-component vector takes four components').
        let narrow_scalar = |t: Word| narrow_of(&types, t);
        let sizes: HashMap<Word, Pointee> = module
            .globals()
            .iter()
            .filter(|g| g.is(Op::TypePointer) && g.word_opt(0) == Some(psb))
            .filter_map(|g| {
                let p = g.id(1).ok()?;
                let (scalar, lanes) = match types.vector(p) {
                    Some((c, n)) => (c, n),
                    None => (p, 1),
                };
                let bytes = narrow_scalar(scalar)?;
                // OpenCL C's layout: a 3-component vector takes as much as a 4-component one;
                // a pointer that stands for a packed struct's bytes steps by its size.
                let stride = module.decoration(g.result_id?, Decoration::ArrayStride).and_then(|w| w.first().copied()).or_else(|| crate::kernel::size_align(&types, p).map(|s| s.0))?;
                Some((g.result_id?, Pointee { bytes, lanes, stride }))
            })
            .collect();
        let bytes: HashSet<Word> = sizes.keys().copied().collect();
        if bytes.is_empty() {
            return Ok(outcome);
        }
        let is_byte_ptr = |v: Word| types.type_of(v).is_some_and(|t| bytes.contains(&t));
        // Narrow atomics cannot be lowered here.
        for inst in module.functions.iter().flat_map(|f| f.blocks.iter().flat_map(|b| b.insts.iter())) {
            if inst.op().is_some_and(crate::passes::lower_kernel_pointers::is_atomic) && inst.operands.first().and_then(Operand::id).is_some_and(is_byte_ptr) {
                return Err(Error::Unsupported { site: module.site(inst), target: cx.target.name.clone(), missing: "8- and 16-bit atomics".into() });
            }
        }
        // What loads and stores of narrow elements use, made only where there are some.
        let accesses = module
            .functions
            .iter()
            .flat_map(|f| f.blocks.iter().flat_map(|b| b.insts.iter()))
            .any(|i| (i.is(Op::Load) || i.is(Op::Store)) && i.operands.first().and_then(Operand::id).is_some_and(is_byte_ptr));
        let (scope, relaxed, c3, c_not3, word_ptr_ty) = if accesses {
            let scope = module.device_scope();
            let u32_ty = module.type_int(32, false);
            (scope, module.constant_u32(0), module.constant_u32(3), module.constant_u32(!3), module.type_pointer(StorageClass::PhysicalStorageBuffer, u32_ty))
        } else {
            (0, 0, 0, 0, 0)
        };
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
                            // Elements of 2^s bytes: the offset shifted left by s, across both
                            // words; of other sizes (packed structs), multiplied.
                            let stride = sizes.get(&inst.result_type.unwrap_or(0)).map_or(1, |p| p.stride);
                            let (off_lo, off_hi) = if stride > 1 && !stride.is_power_of_two() {
                                let c = module.constant_u32(stride);
                                let wide = emit(Op::UMulExtended, carry_ty, vec![Operand::Id(off_lo), Operand::Id(c)], module);
                                let lo = emit(Op::CompositeExtract, uint, vec![Operand::Id(wide), Operand::Literal(0)], module);
                                let carried = emit(Op::CompositeExtract, uint, vec![Operand::Id(wide), Operand::Literal(1)], module);
                                let hi = emit(Op::IMul, uint, vec![Operand::Id(off_hi), Operand::Id(c)], module);
                                (lo, emit(Op::IAdd, uint, vec![Operand::Id(hi), Operand::Id(carried)], module))
                            } else if stride > 1 {
                                let shift = stride.trailing_zeros();
                                let (s, back) = (module.constant_u32(shift), module.constant_u32(32 - shift));
                                let top = emit(Op::ShiftRightLogical, uint, vec![Operand::Id(off_lo), Operand::Id(back)], module);
                                let hi2 = emit(Op::ShiftLeftLogical, uint, vec![Operand::Id(off_hi), Operand::Id(s)], module);
                                let hi2 = emit(Op::BitwiseOr, uint, vec![Operand::Id(hi2), Operand::Id(top)], module);
                                (emit(Op::ShiftLeftLogical, uint, vec![Operand::Id(off_lo), Operand::Id(s)], module), hi2)
                            } else {
                                (off_lo, off_hi)
                            };
                            let sum = emit(Op::IAddCarry, carry_ty, vec![Operand::Id(lo), Operand::Id(off_lo)], module);
                            let new_lo = emit(Op::CompositeExtract, uint, vec![Operand::Id(sum), Operand::Literal(0)], module);
                            let carry = emit(Op::CompositeExtract, uint, vec![Operand::Id(sum), Operand::Literal(1)], module);
                            let h = emit(Op::IAdd, uint, vec![Operand::Id(hi), Operand::Id(off_hi)], module);
                            let new_hi = emit(Op::IAdd, uint, vec![Operand::Id(h), Operand::Id(carry)], module);
                            out.push(Inst::new(Op::CompositeConstruct, inst.result_type, inst.result_id, vec![Operand::Id(new_lo), Operand::Id(new_hi)]).from_origin(origin));
                            outcome.count(inst.opcode);
                        }
                        Some(Op::Load | Op::Store) if src.is_some_and(is_byte_ptr) => {
                            let p = src.unwrap_or(0);
                            let pointee = types.type_of(p).and_then(|t| sizes.get(&t)).copied().unwrap_or(Pointee { bytes: 1, lanes: 1, stride: 1 });
                            let aligned_at = if inst.is(Op::Load) { 1 } else { 2 };
                            let alignment = match (inst.operands.get(aligned_at), inst.operands.get(aligned_at + 1)) {
                                (Some(Operand::Enum(_, access)), Some(Operand::Literal(a))) if access & spirv::MemoryAccess::ALIGNED.bits() != 0 => *a,
                                _ => pointee.bytes,
                            };
                            let mut e = Emit { out: &mut out, origin: inst.origin };
                            let lo = e.op(module, Op::CompositeExtract, uint, vec![Operand::Id(p), Operand::Literal(0)]);
                            let hi = e.op(module, Op::CompositeExtract, uint, vec![Operand::Id(p), Operand::Literal(1)]);
                            let total = pointee.bytes * pointee.lanes;
                            let value_ty = if inst.is(Op::Load) { inst.ty()? } else { types.type_of(inst.id(1)?).unwrap_or(0) };
                            if pointee.lanes > 1 && alignment >= 4 && total % 4 == 0 && total <= 16 {
                                // Whole aligned words: read or written as they are.
                                let words = total / 4;
                                let word_ty = if words == 1 { uint } else { module.type_vector(uint, words) };
                                let ptr_ty = module.type_pointer(StorageClass::PhysicalStorageBuffer, word_ty);
                                let addr = e.op(module, Op::CompositeConstruct, uvec2, vec![Operand::Id(lo), Operand::Id(hi)]);
                                let ptr = e.op(module, Op::Bitcast, ptr_ty, vec![Operand::Id(addr)]);
                                let aligned = [Operand::Enum(rspirv::grammar::OperandKind::MemoryAccess, spirv::MemoryAccess::ALIGNED.bits()), Operand::Literal(alignment.min(total))];
                                if inst.is(Op::Load) {
                                    let mut ops = vec![Operand::Id(ptr)];
                                    ops.extend(aligned);
                                    let w = e.op(module, Op::Load, word_ty, ops);
                                    e.out.push(Inst::new(Op::Bitcast, inst.result_type, inst.result_id, vec![Operand::Id(w)]).from_origin(inst.origin));
                                } else {
                                    let w = e.op(module, Op::Bitcast, word_ty, vec![Operand::Id(inst.id(1)?)]);
                                    let mut ops = vec![Operand::Id(ptr), Operand::Id(w)];
                                    ops.extend(aligned);
                                    e.out.push(Inst::new(Op::Store, None, None, ops).from_origin(inst.origin));
                                }
                            } else {
                                // Element by element, each from or into the word holding it.
                                let narrow = Narrow { scope, relaxed, c3, c_not3, word_ptr_ty, uint, uvec2, carry_ty };
                                let component_ty = if pointee.lanes > 1 { types.vector(value_ty).map_or(value_ty, |(c, _)| c) } else { value_ty };
                                let mut parts = Vec::new();
                                for lane in 0..pointee.lanes {
                                    let (lo, hi) = if lane == 0 { (lo, hi) } else { narrow.add(&mut e, module, lo, hi, lane * pointee.bytes) };
                                    if inst.is(Op::Load) {
                                        let id = (pointee.lanes == 1).then_some(inst.result_id).flatten();
                                        parts.push(narrow.load(&mut e, module, lo, hi, pointee.bytes, component_ty, id));
                                    } else {
                                        let v = inst.id(1)?;
                                        let part = if pointee.lanes == 1 { v } else { e.op(module, Op::CompositeExtract, component_ty, vec![Operand::Id(v), Operand::Literal(lane)]) };
                                        narrow.store(&mut e, module, lo, hi, pointee.bytes, part, types.type_of(part).unwrap_or(component_ty));
                                    }
                                }
                                if inst.is(Op::Load) && pointee.lanes > 1 {
                                    e.out.push(Inst::new(Op::CompositeConstruct, inst.result_type, inst.result_id, parts.into_iter().map(Operand::Id).collect()).from_origin(inst.origin));
                                }
                            }
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

/// The pointee of a narrow pointer type.
#[derive(Clone, Copy, Debug)]
struct Pointee {
    /// Bytes per component.
    bytes: u32,
    /// Components: 1 for a scalar.
    lanes: u32,
    /// Bytes between consecutive elements (OpenCL C's size of the pointee, or the size of the
    /// packed struct a byte pointer stands for).
    stride: u32,
}

/// Emits into a rebuilt block.
struct Emit<'a> {
    out: &'a mut Vec<Inst>,
    origin: Option<crate::ir::Origin>,
}

impl Emit<'_> {
    fn op(&mut self, module: &mut Module, op: Op, ty: Word, operands: Vec<Operand>) -> Word {
        let id = module.alloc_id();
        self.out.push(Inst::new(op, Some(ty), Some(id), operands).from_origin(self.origin));
        id
    }
}

/// What element-by-element narrow accesses use.
struct Narrow {
    scope: Word,
    relaxed: Word,
    c3: Word,
    c_not3: Word,
    word_ptr_ty: Word,
    uint: Word,
    uvec2: Word,
    carry_ty: Word,
}

impl Narrow {
    /// The address (lo, hi) plus `bytes`, with carry.
    fn add(&self, e: &mut Emit<'_>, module: &mut Module, lo: Word, hi: Word, bytes: u32) -> (Word, Word) {
        let b = module.constant_u32(bytes);
        let sum = e.op(module, Op::IAddCarry, self.carry_ty, vec![Operand::Id(lo), Operand::Id(b)]);
        let lo = e.op(module, Op::CompositeExtract, self.uint, vec![Operand::Id(sum), Operand::Literal(0)]);
        let carry = e.op(module, Op::CompositeExtract, self.uint, vec![Operand::Id(sum), Operand::Literal(1)]);
        (lo, e.op(module, Op::IAdd, self.uint, vec![Operand::Id(hi), Operand::Id(carry)]))
    }

    /// The aligned word holding the element at (lo, hi), and the element's bit offset in it.
    fn word(&self, e: &mut Emit<'_>, module: &mut Module, lo: Word, hi: Word) -> (Word, Word) {
        let ids = |v: &[Word]| v.iter().map(|i| Operand::Id(*i)).collect::<Vec<_>>();
        let word_lo = e.op(module, Op::BitwiseAnd, self.uint, ids(&[lo, self.c_not3]));
        let addr = e.op(module, Op::CompositeConstruct, self.uvec2, ids(&[word_lo, hi]));
        let word_ptr = e.op(module, Op::Bitcast, self.word_ptr_ty, ids(&[addr]));
        let byte = e.op(module, Op::BitwiseAnd, self.uint, ids(&[lo, self.c3]));
        (word_ptr, e.op(module, Op::ShiftLeftLogical, self.uint, ids(&[byte, self.c3])))
    }

    /// Loads the `size`-byte element at (lo, hi) as `ty` (into `id` where given).
    #[allow(clippy::too_many_arguments)] // the address, then the element
    fn load(&self, e: &mut Emit<'_>, module: &mut Module, lo: Word, hi: Word, size: u32, ty: Word, id: Option<Word>) -> Word {
        let ids = |v: &[Word]| v.iter().map(|i| Operand::Id(*i)).collect::<Vec<_>>();
        let (word_ptr, shift) = self.word(e, module, lo, hi);
        let mask = module.constant_u32(if size == 1 { 0xff } else { 0xffff });
        let narrow_uint = module.type_int(8 * size, false);
        let mut ops = ids(&[word_ptr]);
        ops.extend([Operand::Enum(rspirv::grammar::OperandKind::MemoryAccess, spirv::MemoryAccess::ALIGNED.bits()), Operand::Literal(4)]);
        let word = e.op(module, Op::Load, self.uint, ops);
        let down = e.op(module, Op::ShiftRightLogical, self.uint, ids(&[word, shift]));
        let bits = e.op(module, Op::BitwiseAnd, self.uint, ids(&[down, mask]));
        let narrow = e.op(module, Op::UConvert, narrow_uint, ids(&[bits]));
        let op = if ty == narrow_uint { Op::CopyObject } else { Op::Bitcast };
        let id = id.unwrap_or_else(|| module.alloc_id());
        e.out.push(Inst::new(op, Some(ty), Some(id), ids(&[narrow])).from_origin(e.origin));
        id
    }

    /// Stores `v` (of type `ty`, `size` bytes) at (lo, hi): its bits cleared and set with two
    /// atomics, so that neighbours other work-items write survive.
    #[allow(clippy::too_many_arguments)] // the address, then the element
    fn store(&self, e: &mut Emit<'_>, module: &mut Module, lo: Word, hi: Word, size: u32, v: Word, ty: Word) {
        let ids = |v: &[Word]| v.iter().map(|i| Operand::Id(*i)).collect::<Vec<_>>();
        let (word_ptr, shift) = self.word(e, module, lo, hi);
        let mask = module.constant_u32(if size == 1 { 0xff } else { 0xffff });
        let narrow_uint = module.type_int(8 * size, false);
        let narrow = if ty == narrow_uint { v } else { e.op(module, Op::Bitcast, narrow_uint, ids(&[v])) };
        let bits = e.op(module, Op::UConvert, self.uint, ids(&[narrow]));
        let set = e.op(module, Op::ShiftLeftLogical, self.uint, ids(&[bits, shift]));
        let lane = e.op(module, Op::ShiftLeftLogical, self.uint, ids(&[mask, shift]));
        let clear = e.op(module, Op::Not, self.uint, ids(&[lane]));
        e.op(module, Op::AtomicAnd, self.uint, ids(&[word_ptr, self.scope, self.relaxed, clear]));
        e.op(module, Op::AtomicOr, self.uint, ids(&[word_ptr, self.scope, self.relaxed, set]));
    }
}
