//! Buffer addresses as byte offsets, for the kernel passes that cannot keep an access chain:
//! a chain into an aggregate becomes the base bitcast to a byte pointer, stepped by the
//! offset that its indices and OpenCL C's layout give, and bitcast to the chain's type.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use crate::kernel::{member_offsets, size_align};
use spirv::{Decoration, Op, StorageClass, Word};

/// The buffer pointer type to `element` with `ArrayStride stride`: an existing one, or a new
/// one.
pub(crate) fn strided_pointer(module: &mut Module, element: Word, stride: u32) -> Word {
    let psb = StorageClass::PhysicalStorageBuffer as u32;
    let existing = module
        .globals()
        .iter()
        .filter(|g| g.is(Op::TypePointer) && g.word_opt(0) == Some(psb) && g.operands.get(1) == Some(&Operand::Id(element)))
        .filter_map(|g| g.result_id)
        .find(|p| module.decoration(*p, Decoration::ArrayStride).and_then(|w| w.first().copied()) == Some(stride));
    existing.unwrap_or_else(|| {
        let id = module.alloc_id();
        module.add_global(Inst::new(Op::TypePointer, None, Some(id), vec![Operand::storage_class(StorageClass::PhysicalStorageBuffer), Operand::Id(element)]));
        module.decorate(id, Decoration::ArrayStride, &[stride]);
        id
    })
}

/// Rewrites every access chain (plain or pointer, in bounds or not) of the module for which
/// `select` holds into byte offsets. Returns how many it rewrote.
pub(crate) fn chains_through_byte_offsets(module: &mut Module, select: impl Fn(&Types, &Inst) -> bool) -> Result<usize> {
    let types = Types::new(module);
    let chains = [Op::AccessChain, Op::InBoundsAccessChain, Op::PtrAccessChain, Op::InBoundsPtrAccessChain];
    let is_chain = |i: &Inst| i.op().is_some_and(|op| chains.contains(&op)) && select(&types, i);
    if !module.functions.iter().flat_map(|f| f.insts()).any(is_chain) {
        return Ok(0);
    }
    let uchar = module.type_int(8, false);
    let byte_ptr = strided_pointer(module, uchar, 1);
    let mut count = 0;
    for f in 0..module.functions.len() {
        for b in 0..module.functions[f].blocks.len() {
            let mut i = 0;
            while i < module.functions[f].blocks[b].insts.len() {
                let inst = module.functions[f].blocks[b].insts[i].clone();
                if !is_chain(&inst) {
                    i += 1;
                    continue;
                }
                module.functions[f].blocks[b].insts.remove(i);
                let mut bl = Builder::new(module, Cursor { function: f, block: b, index: i }).with_origin(inst.origin);
                let offset = byte_offset(&mut bl, &types, &inst)?;
                // No bitcast to the type a value has (NVIDIA's compiler crashes on one).
                let base = inst.id(0)?;
                let base = if types.type_of(base) == Some(byte_ptr) { base } else { bl.bitcast(byte_ptr, base) };
                let stepped = bl.emit(Op::PtrAccessChain, byte_ptr, vec![Operand::Id(base), Operand::Id(offset)]);
                let op = if inst.result_type == Some(byte_ptr) { Op::CopyObject } else { Op::Bitcast };
                bl.insert(Inst::new(op, inst.result_type, inst.result_id, vec![Operand::Id(stepped)]));
                i = bl.cursor.index;
                count += 1;
            }
        }
    }
    Ok(count)
}

/// The byte offset (a `uint`) that the indices of access chain `inst` step from its base.
fn byte_offset(bl: &mut Builder<'_>, types: &Types, inst: &Inst) -> Result<Word> {
    let bad = |bl: &Builder<'_>, m: &str| Error::Invalid { site: bl.module.site(inst), message: m.to_string() };
    let uint = bl.module.type_int(32, false);
    let base = inst.id(0)?;
    let mut ty = types.type_of(base).and_then(|t| types.pointer(t)).map(|(_, p)| p).unwrap_or(0);
    let mut indices: Vec<Word> = inst.operands.iter().skip(1).filter_map(Operand::id).collect();
    let mut offset = bl.module.constant_u32(0);
    let mut add = |bl: &mut Builder<'_>, index: Option<Word>, scale: u32| {
        let scaled = match index {
            None => bl.module.constant_u32(scale),
            Some(index) => {
                let v = bl.to_32_bits(types, uint, index);
                if scale == 1 {
                    v
                } else {
                    let c = bl.module.constant_u32(scale);
                    bl.imul(uint, v, c)
                }
            }
        };
        offset = bl.iadd(uint, offset, scaled);
    };
    if matches!(inst.op(), Some(Op::PtrAccessChain | Op::InBoundsPtrAccessChain)) && !indices.is_empty() {
        let element = indices.remove(0);
        let (size, _) = size_align(types, ty).ok_or_else(|| bad(bl, "steps over an element without an OpenCL C size"))?;
        add(bl, Some(element), size);
    }
    for index in indices {
        let def = types.defs.get(&ty).ok_or_else(|| bad(bl, "indexes into an unknown type"))?;
        match def.op() {
            Some(Op::TypeStruct) => {
                let k = types.const_u32(index).ok_or_else(|| bad(bl, "selects a struct member with an index that is not a constant"))?;
                let at = member_offsets(types, ty).and_then(|o| o.get(k as usize).copied()).ok_or_else(|| bad(bl, "selects a struct member without an OpenCL C offset"))?;
                add(bl, None, at);
                ty = def.operands.get(k as usize).and_then(Operand::id).ok_or_else(|| bad(bl, "selects a struct member that does not exist"))?;
            }
            Some(Op::TypeArray | Op::TypeRuntimeArray | Op::TypeVector) => {
                let element = def.id(0)?;
                let (size, _) = size_align(types, element).ok_or_else(|| bad(bl, "indexes elements without an OpenCL C size"))?;
                add(bl, Some(index), size);
                ty = element;
            }
            _ => return Err(bad(bl, "indexes into a type that is not an array, vector or struct")),
        }
    }
    Ok(offset)
}
