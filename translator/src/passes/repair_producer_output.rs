//! `RepairProducerOutput`: mends what real producers get wrong in otherwise usable modules.
//!
//! Rewrite: identical decorations of one id are kept once (llvm-spirv 2024 decorates some
//! results `NoSignedWrap` twice, which spirv-val rejects). A `PhysicalStorageBuffer` load or
//! store whose `Aligned` operand is below the size of the largest scalar it moves gets that size
//! (glslang 12 loads 8-byte references with `Aligned 4`); Vulkan's layouts align every scalar to
//! its size, so the raised operand still holds. Interface lists that miss a variable
//! an entry point or a function it calls uses (llvm-spirv can leave out `__local` variables)
//! are completed. Memory accesses through an undefined
//! pointer (`OpUndef`, or an access chain, bitcast or copy of one: LLVM leaves them where it
//! proves an access undefined) read undefined values and write nothing: a load or an atomic
//! becomes an `OpUndef` of its result type, a store or a result-less atomic goes (Mesa refuses
//! to compile a load from an undefined pointer).
//!
//! Cooperative Matrix Operands that say nothing about a float matrix go: a signedness flag of a
//! matrix with float components, and `SaturatingAccumulationKHR` of a MulAdd with a float
//! result (spirv-val lets them through; Vulkan requires the signedness flags only and exactly
//! for signed integer components, and no device lists a saturating float shape).
//!
//! Bit casts between a vector of `n` booleans and an `n`-bit integer, which LLVM writes to test
//! all or any components of a vector comparison and llvm-spirv keeps (with
//! SPV_INTEL_arbitrary_precision_integers for the `i3`, `i4` it needs), set or test one bit per
//! component; so do loads and stores of such vectors through pointers into buffer or local
//! memory (llvm-spirv's form of storing the cast), as loads and stores of integers of those bits.
//!
//! `OpCooperativeMatrixLengthKHR` of a matrix value instead of its type (llvm-spirv writes the
//! value for DPC++'s `__spirv_CooperativeMatrixLengthKHR` calls) asks for the length of the
//! value's type.
//!
//! Preconditions: none; a module without such defects is left as it is.

use crate::analysis::Types;
use crate::error::Result;
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{MemoryAccess, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

/// Bytes of the largest scalar in a value of `ty` (a pointer counts as its 8-byte address).
pub(crate) fn largest_scalar(types: &Types, ty: Word, depth: u32) -> u32 {
    let Some(def) = types.defs.get(&ty).filter(|_| depth < 64) else { return 0 };
    match def.op() {
        Some(Op::TypeInt | Op::TypeFloat) => def.word_opt(0).unwrap_or(0) / 8,
        Some(Op::TypePointer) => 8,
        Some(Op::TypeVector | Op::TypeMatrix | Op::TypeArray | Op::TypeRuntimeArray) => def.operands.first().and_then(Operand::id).map_or(0, |e| largest_scalar(types, e, depth + 1)),
        Some(Op::TypeStruct) => def.operands.iter().filter_map(Operand::id).map(|m| largest_scalar(types, m, depth + 1)).max().unwrap_or(0),
        _ => 0,
    }
}

/// `OpCooperativeMatrixLengthKHR` of a value whose type is a cooperative matrix asks for that
/// type.
fn lengths_of_types(module: &mut Module, outcome: &mut Outcome) {
    let types = Types::new(module);
    let is_matrix = |t: Word| types.defs.get(&t).is_some_and(|d| d.is(Op::TypeCooperativeMatrixKHR));
    let mut mended = 0;
    module.for_each_inst_mut(|inst| {
        if !inst.is(Op::CooperativeMatrixLengthKHR) {
            return;
        }
        let Some(Operand::Id(v)) = inst.operands.first() else { return };
        if let Some(ty) = types.type_of(*v).filter(|t| is_matrix(*t)) {
            inst.operands[0] = Operand::Id(ty);
            mended += 1;
        }
    });
    if mended > 0 {
        outcome.count_many(Op::CooperativeMatrixLengthKHR as u32, mended);
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

/// Accesses through undefined pointers: loads and atomics become `OpUndef` values, stores and
/// result-less atomics go.
fn drop_undefined_accesses(module: &mut Module, outcome: &mut Outcome) {
    let types = Types::new(module);
    let is_pointer = |ty: Word| types.defs.get(&ty).is_some_and(|d| d.is(Op::TypePointer));
    let mut undefined: HashSet<Word> = module.globals().iter().filter(|g| g.is(Op::Undef) && g.result_type.is_some_and(is_pointer)).filter_map(|g| g.result_id).collect();
    for f in &mut module.functions {
        for b in &mut f.blocks {
            b.insts.retain_mut(|inst| {
                let Some(op) = inst.op() else { return true };
                let pointer = inst.operands.first().and_then(Operand::id).filter(|p| undefined.contains(p));
                if op == Op::Undef && inst.result_type.is_some_and(is_pointer) {
                    undefined.extend(inst.result_id);
                    return true;
                }
                if pointer.is_none() {
                    return true;
                }
                match op {
                    Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain | Op::Bitcast | Op::CopyObject => {
                        undefined.extend(inst.result_id);
                        true
                    }
                    Op::Load => {
                        outcome.count(inst.opcode);
                        inst.opcode = Op::Undef as u32;
                        inst.operands.clear();
                        true
                    }
                    Op::Store => {
                        outcome.count(inst.opcode);
                        false
                    }
                    _ if crate::passes::lower_kernel_pointers::is_atomic(op) => {
                        outcome.count(inst.opcode);
                        if inst.result_id.is_some() {
                            inst.opcode = Op::Undef as u32;
                            inst.operands.clear();
                            true
                        } else {
                            false
                        }
                    }
                    _ => true,
                }
            });
        }
    }
}

/// Bit casts between a vector of `n` booleans and an `n`-bit integer (LLVM's form of "all of"
/// and "any of" a vector comparison: `<4 x i1>` cast to `i4` and compared with 15 or 0), which
/// SPIR-V does not allow: component `k` becomes bit `k` (each selects its bit and the bits are
/// or-ed), bit `k` becomes component `k` (the bit is tested).
fn bool_vector_bitcasts(module: &mut Module, outcome: &mut Outcome) {
    let types = Types::new(module);
    let bool_vector = |ty: Word| types.vector(ty).filter(|(c, _)| types.defs.get(c).is_some_and(|d| d.is(Op::TypeBool))).map(|(_, n)| n);
    let int_of = |ty: Word| types.int(ty).map(|(w, _)| w);
    for f in 0..module.functions.len() {
        for b in 0..module.functions[f].blocks.len() {
            let mut i = 0;
            while i < module.functions[f].blocks[b].insts.len() {
                let inst = module.functions[f].blocks[b].insts[i].clone();
                let from = inst.operands.first().and_then(Operand::id).and_then(|v| types.type_of(v));
                let (Some(Op::Bitcast), Some(ty), Some(from), Some(result)) = (inst.op(), inst.result_type, from, inst.result_id) else {
                    i += 1;
                    continue;
                };
                let value = inst.operands.first().and_then(Operand::id).unwrap_or(0);
                let (to_int, from_int) = (bool_vector(from).zip(int_of(ty)), int_of(from).zip(bool_vector(ty)));
                let (n, width, int_ty) = match (to_int, from_int) {
                    (Some((n, w)), _) => (n, w, ty),
                    (_, Some((w, n))) => (n, w, from),
                    _ => {
                        i += 1;
                        continue;
                    }
                };
                if n != width {
                    i += 1;
                    continue;
                }
                module.functions[f].blocks[b].insts.remove(i);
                outcome.count(inst.opcode);
                let mut at = Builder::new(module, Cursor { function: f, block: b, index: i }).with_origin(inst.origin);
                // The last instruction takes the cast's result id.
                let (op, operands) =
                    if to_int.is_some() { (Op::CopyObject, vec![pack_bits(&mut at, value, n, int_ty, width)]) } else { (Op::CompositeConstruct, unpack_bits(&mut at, value, n, int_ty, width)) };
                at.insert(Inst::new(op, Some(ty), Some(result), operands.into_iter().map(Operand::Id).collect()));
                i = at.cursor.index;
            }
        }
    }
}

/// The `n` booleans of vector `value` as bits `0..n` of an integer of type `int_ty`.
fn pack_bits(at: &mut Builder<'_>, value: Word, n: u32, int_ty: Word, width: u32) -> Word {
    let boolean = at.module.type_bool();
    let zero = at.module.constant_int(int_ty, width, false, 0);
    let mut acc = zero;
    for k in 0..n {
        let bit = at.module.constant_int(int_ty, width, false, 1 << k);
        let component = at.composite_extract(boolean, value, k);
        let chosen = at.select(int_ty, component, bit, zero);
        acc = if k == 0 { chosen } else { at.op(Op::BitwiseOr, int_ty, &[acc, chosen]) };
    }
    acc
}

/// Bits `0..n` of integer `value` (of type `int_ty`) as `n` booleans.
fn unpack_bits(at: &mut Builder<'_>, value: Word, n: u32, int_ty: Word, width: u32) -> Vec<Word> {
    let boolean = at.module.type_bool();
    let zero = at.module.constant_int(int_ty, width, false, 0);
    (0..n)
        .map(|k| {
            let bit = at.module.constant_int(int_ty, width, false, 1 << k);
            let masked = at.op(Op::BitwiseAnd, int_ty, &[value, bit]);
            at.op(Op::INotEqual, boolean, &[masked, zero])
        })
        .collect()
}

/// Loads and stores of boolean vectors through pointers into memory with a layout (what
/// llvm-spirv writes for an LLVM store of `<32 x i1>`, or of its bit cast to `i32`), which
/// SPIR-V gives no layout: LLVM lays a vector of `n` booleans out as `n` bits, so each becomes a
/// load or store of the smallest 8-, 16-, 32- or 64-bit integer holding them, lane `k` in bit
/// `k` (the bits above `n` written as zero). Private variables of such vectors stay.
fn bool_vector_memory(module: &mut Module, outcome: &mut Outcome) {
    let types = Types::new(module);
    let bool_vector = |ty: Word| types.vector(ty).filter(|(c, _)| types.defs.get(c).is_some_and(|d| d.is(Op::TypeBool))).map(|(_, n)| n).filter(|n| *n <= 64);
    let laid_out = |ptr: Word| types.type_of(ptr).and_then(|t| types.pointer(t)).filter(|(class, _)| ![StorageClass::Function as u32, StorageClass::Private as u32].contains(class)).map(|(c, _)| c);
    // Pointer casts to boolean vectors (llvm-spirv's): the integer access casts their source,
    // and the cast goes where nothing else uses it.
    let casts: HashMap<Word, Word> = module
        .all_insts()
        .filter(|i| i.is(Op::Bitcast) && i.result_type.and_then(|t| types.pointer(t)).is_some_and(|(_, p)| bool_vector(p).is_some()))
        .filter_map(|i| Some((i.result_id?, i.id(0).ok()?)))
        .collect();
    let mut rewritten = false;
    for f in 0..module.functions.len() {
        for b in 0..module.functions[f].blocks.len() {
            let mut i = 0;
            while i < module.functions[f].blocks[b].insts.len() {
                let inst = module.functions[f].blocks[b].insts[i].clone();
                let (ptr, vector_ty) = match inst.op() {
                    Some(Op::Load) => (inst.id(0).ok(), inst.result_type),
                    Some(Op::Store) => (inst.id(0).ok(), inst.id(1).ok().and_then(|v| types.type_of(v))),
                    _ => (None, None),
                };
                let (Some(ptr), Some(vector_ty)) = (ptr, vector_ty) else {
                    i += 1;
                    continue;
                };
                let (Some(n), Some(class)) = (bool_vector(vector_ty), laid_out(ptr)) else {
                    i += 1;
                    continue;
                };
                let width = [8, 16, 32, 64].into_iter().find(|w| *w >= n).unwrap_or(64);
                module.functions[f].blocks[b].insts.remove(i);
                outcome.count(inst.opcode);
                let mut at = Builder::new(module, Cursor { function: f, block: b, index: i }).with_origin(inst.origin);
                let int_ty = at.module.type_int(width, false);
                let int_ptr_ty = at.module.type_pointer(StorageClass::from_u32(class).unwrap_or(StorageClass::CrossWorkgroup), int_ty);
                let int_ptr = at.op(Op::Bitcast, int_ptr_ty, &[casts.get(&ptr).copied().unwrap_or(ptr)]);
                rewritten = true;
                if inst.is(Op::Load) {
                    let mut ops = vec![Operand::Id(int_ptr)];
                    ops.extend(inst.operands[1..].iter().cloned());
                    let bits = at.module.alloc_id();
                    at.insert(Inst::new(Op::Load, Some(int_ty), Some(bits), ops));
                    let lanes = unpack_bits(&mut at, bits, n, int_ty, width);
                    at.insert(Inst::new(Op::CompositeConstruct, Some(vector_ty), inst.result_id, lanes.into_iter().map(Operand::Id).collect()));
                } else {
                    let bits = pack_bits(&mut at, inst.id(1).unwrap_or(0), n, int_ty, width);
                    let mut ops = vec![Operand::Id(int_ptr), Operand::Id(bits)];
                    ops.extend(inst.operands[2..].iter().cloned());
                    at.insert(Inst::new(Op::Store, None, None, ops));
                }
                i = at.cursor.index;
            }
        }
    }
    if rewritten {
        let used: HashSet<Word> = module.all_insts().flat_map(|i| i.operands.iter().filter_map(Operand::id).collect::<Vec<_>>()).collect();
        for func in &mut module.functions {
            for block in &mut func.blocks {
                block.insts.retain(|i| !i.result_id.is_some_and(|r| casts.contains_key(&r) && !used.contains(&r)));
            }
        }
    }
}

/// Clears the Cooperative Matrix Operands of each `OpCooperativeMatrixMulAddKHR` that concern
/// float matrices: signedness flags of float components, saturation of a float result.
fn drop_float_matrix_flags(module: &mut Module, outcome: &mut Outcome) {
    use spirv::CooperativeMatrixOperands as Flags;
    let types = Types::new(module);
    let float_components = |ty: Option<Word>| {
        let def = ty.and_then(|t| types.defs.get(&t)).filter(|d| d.is(Op::TypeCooperativeMatrixKHR));
        def.and_then(|d| d.operands.first()).and_then(Operand::id).is_some_and(|c| types.float(c).is_some())
    };
    module.for_each_inst_mut(|inst| {
        if !inst.is(Op::CooperativeMatrixMulAddKHR) {
            return;
        }
        let operand_ty = |i: usize| inst.operands.get(i).and_then(Operand::id).and_then(|v| types.type_of(v));
        let result_float = float_components(inst.result_type);
        let meaningless = [
            (float_components(operand_ty(0)), Flags::MATRIX_A_SIGNED_COMPONENTS_KHR),
            (float_components(operand_ty(1)), Flags::MATRIX_B_SIGNED_COMPONENTS_KHR),
            (float_components(operand_ty(2)), Flags::MATRIX_C_SIGNED_COMPONENTS_KHR),
            (result_float, Flags::MATRIX_RESULT_SIGNED_COMPONENTS_KHR),
            (result_float, Flags::SATURATING_ACCUMULATION_KHR),
        ]
        .into_iter()
        .filter(|(float, _)| *float)
        .fold(0, |mask, (_, flag)| mask | flag.bits());
        let Some(Operand::Enum(_, flags)) = inst.operands.get_mut(3) else { return };
        if *flags & meaningless != 0 {
            *flags &= !meaningless;
            if *flags == 0 {
                inst.operands.truncate(3);
            }
            outcome.count(inst.opcode);
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
        drop_undefined_accesses(module, &mut outcome);
        drop_float_matrix_flags(module, &mut outcome);
        lengths_of_types(module, &mut outcome);
        bool_vector_bitcasts(module, &mut outcome);
        bool_vector_memory(module, &mut outcome);
        let listed = module.complete_entry_interfaces();
        if listed > 0 {
            outcome.count(Op::EntryPoint as u32);
            outcome.notes.push(format!("{listed} variable(s) an entry point uses added to its interface list"));
        }
        Ok(outcome)
    }
}
