//! Block loads (`CooperativeMatrixBlockLoadsNV`): the decode function of an
//! `OpCooperativeMatrixLoadTensorNV`, called for each element the lowering loads.
//!
//! SPV_NV_cooperative_matrix2 passes the decode function a `PhysicalStorageBuffer` pointer to
//! the element's block (`Pointer` plus the tensor element index times the size of the
//! parameter's pointee), the block coordinates and the coordinates in the block (arrays of as
//! many 32-bit integers as the layout has dimensions). Here:
//!
//! - where `Pointer` is a `PhysicalStorageBuffer` pointer, the block's address is its address
//!   (as a `uvec2`, so that no 64-bit integers are needed) plus that offset, and the function
//!   is called as it is;
//! - where `Pointer` points into a storage buffer (llama.cpp's quantized weights), the block
//!   has no address: the function is cloned, once per buffer, into one whose first parameter is
//!   the block's byte offset in the buffer and which reads through a second variable of the
//!   same binding that sees the buffer as 32-bit words (read-only; both variables are
//!   decorated `Aliased` where the shader may write the buffer). In the clone, access chains
//!   from the parameter add the offsets the pointee's layout decorations give (`Offset`,
//!   `ArrayStride`, the component size in a vector), casts between buffer-reference types keep
//!   the offset, and each load assembles its value from the words under it: scalars of 8 to 64
//!   bits, buffer references, and vectors, arrays and structs of them, a scalar its alignment
//!   does not keep inside one word read from two.
//!
//! The block's size is its type's layout: the end of its last member, rounded up to its
//! largest scalar. Refused by name: a decode function that does anything else with its pointer
//! (stores through it, passes it on, converts it to an integer, compares it), a matrix in the
//! block, a `Pointer` that is not an access chain from a storage-buffer variable, and a block
//! type without the layout decorations its size and offsets need.

use super::call;
use crate::analysis::Types;
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use spirv::{Decoration, Op, StorageClass, Word};
use std::collections::HashMap;

type Res<T> = std::result::Result<T, String>;

/// The decode functions cloned for storage buffers, and the word views of those buffers.
#[derive(Default)]
pub(super) struct Decoders {
    /// (decode function, buffer variable) -> the clone reading that buffer's words.
    clones: HashMap<(Word, Word), Word>,
    /// Buffer variable -> its view as 32-bit words.
    views: HashMap<Word, Word>,
}

/// How one load's elements are decoded: the function to call, its result and array parameter
/// types, the block size and where the blocks start.
pub(super) struct Site {
    func: Word,
    ret: Word,
    arrays: (Word, Word),
    size: u32,
    base: Base,
}

enum Base {
    /// The decode function's pointer type, and `Pointer`'s address as a `uvec2`.
    Physical { pointer_type: Word, address: Word },
    /// `Pointer`'s byte offset in its buffer.
    Storage { offset: Word },
}

impl Decoders {
    /// Prepares the calls of decode function `func` for a load of a `dim`-dimensional tensor
    /// through `pointer`, emitting at the builder what all of them share.
    pub(super) fn site(&mut self, b: &mut Builder<'_>, types: &Types, func: Word, pointer: Word, dim: u32) -> Res<Site> {
        let name = function_name(b.module, func);
        let f = b.module.functions.iter().find(|f| f.id() == func).ok_or_else(|| format!("decode function {name} is not a function of the module"))?;
        let ret = f.def.result_type.ok_or_else(|| format!("decode function {name} has no result type"))?;
        let params: Vec<Word> = f.params.iter().filter(|p| p.is(Op::FunctionParameter)).filter_map(|p| p.result_type).collect();
        let block_pointer = params.first().copied().filter(|p| types.pointer(*p).is_some_and(|(class, _)| class == StorageClass::PhysicalStorageBuffer as u32));
        let coordinates = |t: Option<&Word>| t.copied().filter(|t| is_coordinate_array(types, *t, dim));
        let (Some(block_pointer), Some(blocks), Some(within), 3) = (block_pointer, coordinates(params.get(1)), coordinates(params.get(2)), params.len()) else {
            return Err(format!("decode function {name} does not take (a PhysicalStorageBuffer pointer, the block coordinates, the coordinates in the block) as {dim} 32-bit integers each"));
        };
        let block = types.pointer(block_pointer).map(|(_, p)| p).unwrap_or(0);
        let (size, _) = layout(b.module, types, block).map_err(|e| format!("decode function {name}'s block: {e}"))?;
        let pointer_type = types.type_of(pointer).ok_or_else(|| format!("the pointer %{pointer} of a block load has no type"))?;
        let class = types.pointer(pointer_type).map(|(c, _)| c);
        let uint = b.module.type_int(32, false);
        let (func, base) = if class == Some(StorageClass::PhysicalStorageBuffer as u32) {
            let words = b.module.type_vector(uint, 2);
            (func, Base::Physical { pointer_type: block_pointer, address: b.bitcast(words, pointer) })
        } else {
            let (var, offset) = buffer_offset(b, types, pointer)?;
            let view = self.view(b.module, var)?;
            let clone = match self.clones.get(&(func, var)) {
                Some(c) => *c,
                None => {
                    let c = clone_for_view(b.module, types, func, view).map_err(|e| format!("decode function {name}: {e}"))?;
                    self.clones.insert((func, var), c);
                    c
                }
            };
            (clone, Base::Storage { offset })
        };
        Ok(Site { func, ret, arrays: (blocks, within), size, base })
    }

    /// The view of buffer variable `var` as read-only 32-bit words, at its set and binding.
    fn view(&mut self, module: &mut Module, var: Word) -> Res<Word> {
        if let Some(v) = self.views.get(&var) {
            return Ok(*v);
        }
        let decl = module.globals().iter().find(|g| g.is(Op::Variable) && g.result_id == Some(var)).cloned().ok_or_else(|| format!("%{var} is not a buffer variable"))?;
        let class = decl.word_opt(0).and_then(StorageClass::from_u32).ok_or_else(|| format!("%{var} has no storage class"))?;
        let block = module.variable_pointee(var).ok_or_else(|| format!("%{var} is not a buffer variable"))?;
        let buffer_block = module.decoration(block, Decoration::BufferBlock).is_some();
        if !(class == StorageClass::StorageBuffer || (class == StorageClass::Uniform && buffer_block)) || module.decoration(block, Decoration::Block).is_none() && !buffer_block {
            return Err(format!("a block load through %{var}, which is not a storage buffer (an array of buffers, or a uniform buffer)"));
        }
        let (Some(set), Some(binding)) = (module.decoration(var, Decoration::DescriptorSet), module.decoration(var, Decoration::Binding)) else {
            return Err(format!("storage buffer %{var} has no descriptor set and binding"));
        };
        let uint = module.type_int(32, false);
        let words = module.alloc_id();
        module.add_global(Inst::new(Op::TypeRuntimeArray, None, Some(words), vec![Operand::Id(uint)]));
        module.decorate(words, Decoration::ArrayStride, &[4]);
        let st = module.type_struct(&[words]);
        for d in [Decoration::Offset, Decoration::NonWritable] {
            let mut ops = vec![Operand::Id(st), Operand::Literal(0), Operand::decoration(d)];
            ops.extend((d == Decoration::Offset).then_some(Operand::Literal(0)));
            module.annotations.push(Inst::new(Op::MemberDecorate, None, None, ops));
        }
        module.decorate(st, if buffer_block { Decoration::BufferBlock } else { Decoration::Block }, &[]);
        let ptr = module.type_pointer(class, st);
        let view = module.add_global_variable(ptr, class, None);
        module.decorate(view, Decoration::DescriptorSet, &set);
        module.decorate(view, Decoration::Binding, &binding);
        // Reads through the view may not be moved across the shader's own writes of the buffer.
        if !read_only(module, var, block) {
            module.decorate(var, Decoration::Aliased, &[]);
            module.decorate(view, Decoration::Aliased, &[]);
        }
        module.debug_names.push(Inst::new(Op::Name, None, None, vec![Operand::Id(view), Operand::string(&format!("{}.words", module.name_of(var).unwrap_or_else(|| format!("buffer{var}"))))]));
        self.views.insert(var, view);
        Ok(view)
    }
}

impl Site {
    /// The decoded element at tensor element `index`, with block coordinates `blocks` and
    /// coordinates in the block `within` (32-bit unsigned values).
    pub(super) fn decode(&self, b: &mut Builder<'_>, index: Word, blocks: &[Word], within: &[Word]) -> Word {
        let uint = b.module.type_int(32, false);
        let size = b.module.constant_u32(self.size);
        let bytes = b.imul(uint, index, size);
        let first = match self.base {
            Base::Physical { pointer_type, address } => {
                let words = b.module.type_vector(uint, 2);
                let (lo, hi) = (b.composite_extract(uint, address, 0), b.composite_extract(uint, address, 1));
                let carried = b.module.intern(Op::TypeStruct, None, vec![Operand::Id(uint), Operand::Id(uint)]);
                let sum = b.op(Op::IAddCarry, carried, &[lo, bytes]);
                let (lo, carry) = (b.composite_extract(uint, sum, 0), b.composite_extract(uint, sum, 1));
                let hi = b.iadd(uint, hi, carry);
                let address = b.op(Op::CompositeConstruct, words, &[lo, hi]);
                b.bitcast(pointer_type, address)
            }
            Base::Storage { offset } => b.iadd(uint, offset, bytes),
        };
        let blocks = coordinate_array(b, self.arrays.0, blocks);
        let within = coordinate_array(b, self.arrays.1, within);
        call(b, self.ret, self.func, &[first, blocks, within])
    }
}

fn function_name(module: &Module, func: Word) -> String {
    module.name_of(func).map_or_else(|| format!("%{func}"), |n| format!("{n} (%{func})"))
}

/// Whether `ty` is an array of `dim` 32-bit integers.
fn is_coordinate_array(types: &Types, ty: Word, dim: u32) -> bool {
    let Some(d) = types.defs.get(&ty).filter(|d| d.is(Op::TypeArray)) else { return false };
    let element_ok = d.id(0).ok().and_then(|e| types.int(e)).is_some_and(|(w, _)| w == 32);
    element_ok && d.id(1).ok().and_then(|l| types.const_u32(l)) == Some(dim)
}

/// An array of type `ty` (of 32-bit integers) holding the unsigned `values`.
fn coordinate_array(b: &mut Builder<'_>, ty: Word, values: &[Word]) -> Word {
    let element = b.module.globals().iter().find(|g| g.result_id == Some(ty)).and_then(|d| d.id(0).ok()).unwrap_or(0);
    let signed = b.module.globals().iter().find(|g| g.result_id == Some(element)).and_then(|d| d.word_opt(1)) == Some(1);
    let parts: Vec<Word> = values.iter().map(|v| if signed { b.bitcast(element, *v) } else { *v }).collect();
    b.op(Op::CompositeConstruct, ty, &parts)
}

/// Whether the shader cannot write buffer variable `var` (of block type `block`): the
/// variable, or every member of its block, is `NonWritable`.
fn read_only(module: &Module, var: Word, block: Word) -> bool {
    if module.decoration(var, Decoration::NonWritable).is_some() {
        return true;
    }
    let members = module.globals().iter().find(|g| g.result_id == Some(block)).map_or(0, |d| d.operands.len() as u32);
    (0..members)
        .all(|k| module.annotations.iter().any(|a| a.is(Op::MemberDecorate) && a.word_opt(0) == Some(block) && a.word_opt(1) == Some(k) && a.word_opt(2) == Some(Decoration::NonWritable as u32)))
}

/// (size, alignment) in bytes of type `ty` as its layout decorations lay it out in a buffer;
/// the alignment is that of its largest scalar.
fn layout(module: &Module, types: &Types, ty: Word) -> Res<(u32, u32)> {
    let d = types.defs.get(&ty).ok_or_else(|| format!("%{ty} is not a type"))?;
    match d.op() {
        Some(Op::TypeInt | Op::TypeFloat) => {
            let bytes = d.word_opt(0).unwrap_or(0) / 8;
            Ok((bytes, bytes))
        }
        Some(Op::TypePointer) if d.word_opt(0) == Some(StorageClass::PhysicalStorageBuffer as u32) => Ok((8, 8)),
        Some(Op::TypeVector) => {
            let (s, a) = layout(module, types, d.id(0).map_err(|e| e.to_string())?)?;
            Ok((s * d.word_opt(1).unwrap_or(0), a))
        }
        Some(Op::TypeArray) => {
            let (_, a) = layout(module, types, d.id(0).map_err(|e| e.to_string())?)?;
            let len = d.id(1).ok().and_then(|l| types.const_u32(l)).ok_or_else(|| format!("array type %{ty} has no constant length"))?;
            Ok((len * array_stride(module, ty)?, a))
        }
        Some(Op::TypeStruct) => {
            let (mut end, mut align) = (0, 1);
            for (k, m) in d.operands.iter().filter_map(Operand::id).enumerate() {
                let offset = module.member_offset(ty, k as u32).ok_or_else(|| format!("member {k} of struct %{ty} has no Offset"))?;
                let (s, a) = layout(module, types, m)?;
                end = end.max(offset + s);
                align = align.max(a);
            }
            Ok((end.div_ceil(align) * align, align))
        }
        _ => Err(format!("%{ty} ({}) has no layout a decode function can read", d.name())),
    }
}

fn array_stride(module: &Module, ty: Word) -> Res<u32> {
    module.decoration(ty, Decoration::ArrayStride).and_then(|w| w.first().copied()).ok_or_else(|| format!("array type %{ty} has no ArrayStride"))
}

/// `v` (an integer of type `ty`) as a 32-bit unsigned value.
fn to_u32(b: &mut Builder<'_>, types: &Types, ty: Word, v: Word) -> Res<Word> {
    let uint = b.module.type_int(32, false);
    match types.int(ty) {
        Some((32, false)) => Ok(v),
        Some((32, true)) => Ok(b.bitcast(uint, v)),
        Some((_, false)) => Ok(b.op(Op::UConvert, uint, &[v])),
        Some((_, true)) => {
            let int = b.module.type_int(32, true);
            let narrowed = b.op(Op::SConvert, int, &[v]);
            Ok(b.bitcast(uint, narrowed))
        }
        None => Err(format!("an index %{v} that is not an integer")),
    }
}

/// `index x factor` bytes (a constant where the index is one).
fn scaled(b: &mut Builder<'_>, types: &Types, (index, index_type): (Word, Word), factor: u32) -> Res<Word> {
    if let Some(c) = types.const_u32(index) {
        return Ok(b.module.constant_u32(c.wrapping_mul(factor)));
    }
    let uint = b.module.type_int(32, false);
    let i = to_u32(b, types, index_type, index)?;
    if factor == 1 {
        return Ok(i);
    }
    let f = b.module.constant_u32(factor);
    Ok(b.imul(uint, i, f))
}

/// `offset + term` (`offset` where `term` is the constant 0).
fn plus(b: &mut Builder<'_>, offset: Word, term: Word) -> Word {
    let (uint, zero) = (b.module.type_int(32, false), b.module.constant_u32(0));
    if term == zero {
        return offset;
    }
    b.iadd(uint, offset, term)
}

/// One access-chain step into type `ty` by `index` (of type `index_type`): (the bytes it adds,
/// the type it selects).
fn step(b: &mut Builder<'_>, types: &Types, ty: Word, (index, index_type): (Word, Word)) -> Res<(Word, Word)> {
    let d = types.defs.get(&ty).ok_or_else(|| format!("%{ty} is not a type"))?;
    let element = d.id(0).unwrap_or(0);
    match d.op() {
        Some(Op::TypeStruct) => {
            let k = types.const_u32(index).ok_or_else(|| format!("struct member index %{index} is not a constant"))?;
            let member = d.operands.get(k as usize).and_then(Operand::id).ok_or_else(|| format!("struct %{ty} has no member {k}"))?;
            let offset = b.module.member_offset(ty, k).ok_or_else(|| format!("member {k} of struct %{ty} has no Offset"))?;
            Ok((b.module.constant_u32(offset), member))
        }
        Some(Op::TypeArray | Op::TypeRuntimeArray) => {
            let stride = array_stride(b.module, ty)?;
            Ok((scaled(b, types, (index, index_type), stride)?, element))
        }
        Some(Op::TypeVector) => {
            let (size, _) = layout(b.module, types, element)?;
            Ok((scaled(b, types, (index, index_type), size)?, element))
        }
        _ => Err(format!("an access chain into %{ty} ({}), which has no byte layout here", d.name())),
    }
}

/// The storage-buffer variable `pointer` points into and its byte offset there, from the
/// access chains that made it.
fn buffer_offset(b: &mut Builder<'_>, types: &Types, pointer: Word) -> Res<(Word, Word)> {
    let mut chains: Vec<Inst> = Vec::new();
    let mut p = pointer;
    let var = loop {
        if b.module.globals().iter().any(|g| g.is(Op::Variable) && g.result_id == Some(p)) {
            break p;
        }
        let def = b.module.functions.iter().flat_map(|f| f.insts()).find(|i| i.result_id == Some(p)).cloned();
        match def {
            Some(d) if matches!(d.op(), Some(Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain)) => {
                p = d.id(0).map_err(|e| e.to_string())?;
                chains.push(d);
            }
            Some(d) if d.is(Op::CopyObject) => p = d.id(0).map_err(|e| e.to_string())?,
            _ => return Err(format!("a block load through %{pointer}, which is neither a PhysicalStorageBuffer pointer nor an access chain from a storage-buffer variable")),
        }
    };
    let mut offset = b.module.constant_u32(0);
    for chain in chains.iter().rev() {
        let base = chain.id(0).map_err(|e| e.to_string())?;
        let base_type = types.type_of(base).ok_or_else(|| format!("%{base} has no type"))?;
        let mut ty = types.pointer(base_type).map(|(_, p)| p).ok_or_else(|| format!("%{base} is not a pointer"))?;
        let mut indices: Vec<Word> = chain.operands.iter().skip(1).filter_map(Operand::id).collect();
        if matches!(chain.op(), Some(Op::PtrAccessChain | Op::InBoundsPtrAccessChain)) && !indices.is_empty() {
            let element = indices.remove(0);
            let stride = array_stride(b.module, base_type)?;
            let term = scaled(b, types, (element, types.type_of(element).unwrap_or(0)), stride)?;
            offset = plus(b, offset, term);
        }
        for index in indices {
            let (term, next) = step(b, types, ty, (index, types.type_of(index).unwrap_or(0)))?;
            offset = plus(b, offset, term);
            ty = next;
        }
    }
    Ok((var, offset))
}

/// A copy of decode function `func` whose pointer parameter is a byte offset into the buffer
/// that `view` sees as words; returns its id.
fn clone_for_view(module: &mut Module, types: &Types, func: Word, view: Word) -> Res<Word> {
    let f = module.functions.iter().find(|f| f.id() == func).cloned().ok_or("not a function of the module")?;
    let mut fresh: HashMap<Word, Word> = HashMap::new();
    for r in f.insts().filter_map(|i| i.result_id) {
        let id = module.alloc_id();
        fresh.insert(r, id);
    }
    let mut g = f.clone();
    g.for_each_inst_mut(|i| {
        i.result_id = i.result_id.map(|r| fresh.get(&r).copied().unwrap_or(r));
        i.map_used_ids(|id| fresh.get(&id).copied().unwrap_or(id));
    });
    // Decorations of the function's values (NoContraction, RelaxedPrecision) go with them;
    // those of the pointer parameter (Aliased, Restrict) do not fit the offset it becomes.
    let pointer_param = f.params.iter().find(|p| p.is(Op::FunctionParameter)).and_then(|p| p.result_id);
    let copies: Vec<Inst> = module
        .annotations
        .iter()
        .filter(|a| a.is(Op::Decorate) && a.operands.first().and_then(Operand::id).is_some_and(|t| fresh.contains_key(&t) && t != func && Some(t) != pointer_param))
        .map(|a| {
            let mut c = a.clone();
            c.operands[0] = Operand::Id(fresh[&a.operands[0].id().unwrap_or(0)]);
            c
        })
        .collect();
    module.annotations.extend(copies);
    let uint = module.type_int(32, false);
    let params: Vec<&mut Inst> = g.params.iter_mut().filter(|p| p.is(Op::FunctionParameter)).collect();
    let [first, rest @ ..] = params.as_slice() else { return Err("no parameters".into()) };
    let block_pointer = first.ty().map_err(|e| e.to_string())?;
    let offset_param = first.result().map_err(|e| e.to_string())?;
    let mut signature = vec![uint];
    signature.extend(rest.iter().filter_map(|p| p.result_type));
    let mut params = params;
    params[0].result_type = Some(uint);
    let ret = g.def.result_type.unwrap_or(0);
    let fn_type = module.type_function(ret, &signature);
    if let Some(o) = g.def.operands.get_mut(1) {
        *o = Operand::Id(fn_type);
    }
    let id = g.id();
    // The clone's own values' types, which `types` does not know.
    let local: HashMap<Word, Word> = g.insts().filter_map(|i| Some((i.result_id?, i.result_type?))).collect();
    module.functions.push(g);
    let name = module.name_of(func).unwrap_or_else(|| format!("decode{func}"));
    module.debug_names.push(Inst::new(Op::Name, None, None, vec![Operand::Id(id), Operand::string(&format!("{name}.words"))]));
    let function = module.functions.len() - 1;
    rewrite_pointer_uses(module, types, function, (offset_param, block_pointer), view, &local)?;
    Ok(id)
}

/// Rewrites what function `function` does with its pointer parameter (now the byte offset
/// `param`, of a block of pointer type `block_pointer`) into offsets and word reads.
fn rewrite_pointer_uses(module: &mut Module, types: &Types, function: usize, (param, block_pointer): (Word, Word), view: Word, local: &HashMap<Word, Word>) -> Res<()> {
    let type_of = |v: Word| local.get(&v).copied().or_else(|| types.type_of(v)).unwrap_or(0);
    // Pointer values derived from the parameter: (byte offset, pointer type).
    let mut derived: HashMap<Word, (Word, Word)> = HashMap::from([(param, (param, block_pointer))]);
    for block in 0..module.functions[function].blocks.len() {
        let mut i = 0;
        while i < module.functions[function].blocks[block].insts.len() {
            let inst = module.functions[function].blocks[block].insts[i].clone();
            if !inst.used_ids().any(|v| derived.contains_key(&v)) {
                i += 1;
                continue;
            }
            module.functions[function].blocks[block].insts.remove(i);
            let mut b = Builder::new(module, Cursor { function, block, index: i }).with_origin(inst.origin);
            let refused = || format!("{} of its block pointer (only access chains, casts between buffer references and loads are lowered)", inst.name());
            let base = inst.operands.first().and_then(Operand::id).and_then(|v| derived.get(&v).copied());
            let others_derived = inst.operands.iter().skip(1).filter_map(Operand::id).any(|v| derived.contains_key(&v));
            let (Some((offset, pointer_type)), false) = (base, others_derived) else { return Err(refused()) };
            let pointee = types.pointer(pointer_type).map(|(_, p)| p).unwrap_or(0);
            let Some(result) = inst.result_id else { return Err(refused()) };
            match inst.op() {
                Some(op @ (Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain)) => {
                    let mut indices: Vec<Word> = inst.operands.iter().skip(1).filter_map(Operand::id).collect();
                    let mut offset = offset;
                    if matches!(op, Op::PtrAccessChain | Op::InBoundsPtrAccessChain) && !indices.is_empty() {
                        let element = indices.remove(0);
                        let stride = array_stride(b.module, pointer_type)?;
                        let term = scaled(&mut b, types, (element, type_of(element)), stride)?;
                        offset = plus(&mut b, offset, term);
                    }
                    let mut ty = pointee;
                    for index in indices {
                        let (term, next) = step(&mut b, types, ty, (index, type_of(index)))?;
                        offset = plus(&mut b, offset, term);
                        ty = next;
                    }
                    derived.insert(result, (offset, inst.ty().map_err(|e| e.to_string())?));
                }
                Some(Op::Bitcast | Op::CopyObject) if inst.result_type.and_then(|t| types.pointer(t)).is_some_and(|(c, _)| c == StorageClass::PhysicalStorageBuffer as u32) => {
                    derived.insert(result, (offset, inst.ty().map_err(|e| e.to_string())?));
                }
                Some(Op::Load) => {
                    let aligned = inst.word_opt(1).is_some_and(|m| m & spirv::MemoryAccess::ALIGNED.bits() != 0);
                    let align = if aligned { inst.word_opt(2).unwrap_or(1) } else { 1 };
                    let ty = inst.ty().map_err(|e| e.to_string())?;
                    let v = read(&mut b, types, view, ty, offset, align)?;
                    b.insert(Inst::new(Op::CopyObject, Some(ty), Some(result), vec![Operand::Id(v)]));
                }
                _ => return Err(refused()),
            }
            i = b.cursor.index;
        }
    }
    Ok(())
}

/// The alignment of a part `offset` bytes into a value aligned to `align`.
fn part_align(align: u32, offset: u32) -> u32 {
    if offset == 0 {
        align
    } else {
        align.min(1 << offset.trailing_zeros())
    }
}

/// The value of type `ty` at byte `offset` of the words `view` sees, which the load that
/// reads it aligns to `align` bytes.
fn read(b: &mut Builder<'_>, types: &Types, view: Word, ty: Word, offset: Word, align: u32) -> Res<Word> {
    let d = types.defs.get(&ty).cloned().ok_or_else(|| format!("%{ty} is not a type"))?;
    let parts = |b: &mut Builder<'_>, list: &[(u32, Word)]| -> Res<Word> {
        let mut values = Vec::with_capacity(list.len());
        for &(at, part) in list {
            let k = b.module.constant_u32(at);
            let o = plus(b, offset, k);
            values.push(read(b, types, view, part, o, part_align(align, at))?);
        }
        Ok(b.op(Op::CompositeConstruct, ty, &values))
    };
    match d.op() {
        Some(Op::TypeInt | Op::TypeFloat) => {
            let width = d.word_opt(0).unwrap_or(0);
            let bits = read_bits(b, view, offset, width, align)?;
            Ok(from_bits(b, types, ty, bits))
        }
        Some(Op::TypePointer) if d.word_opt(0) == Some(StorageClass::PhysicalStorageBuffer as u32) => {
            let bits = read_bits(b, view, offset, 64, align)?;
            Ok(b.bitcast(ty, bits))
        }
        Some(Op::TypeVector) => {
            let component = d.id(0).map_err(|e| e.to_string())?;
            let (size, _) = layout(b.module, types, component)?;
            let list: Vec<(u32, Word)> = (0..d.word_opt(1).unwrap_or(0)).map(|k| (k * size, component)).collect();
            parts(b, &list)
        }
        Some(Op::TypeArray) => {
            let element = d.id(0).map_err(|e| e.to_string())?;
            let len = d.id(1).ok().and_then(|l| types.const_u32(l)).ok_or_else(|| format!("array type %{ty} has no constant length"))?;
            let stride = array_stride(b.module, ty)?;
            let list: Vec<(u32, Word)> = (0..len).map(|k| (k * stride, element)).collect();
            parts(b, &list)
        }
        Some(Op::TypeStruct) => {
            let mut list = Vec::new();
            for (k, m) in d.operands.iter().filter_map(Operand::id).enumerate() {
                let at = b.module.member_offset(ty, k as u32).ok_or_else(|| format!("member {k} of struct %{ty} has no Offset"))?;
                list.push((at, m));
            }
            parts(b, &list)
        }
        _ => Err(format!("a load of %{ty} ({}) through the block pointer, which has no lowering", d.name())),
    }
}

/// Scalar bits of type `ty` (a `uint`, or a `uvec2` of 64 bits) as a value of `ty`.
fn from_bits(b: &mut Builder<'_>, types: &Types, ty: Word, bits: Word) -> Word {
    match (types.int(ty), types.float(ty).map(|(w, _)| w)) {
        (Some((32, false)), _) => bits,
        (Some((64, _)), _) | (_, Some(32 | 64)) => b.bitcast(ty, bits),
        (Some((32, true)), _) => b.bitcast(ty, bits),
        (Some((_, false)), _) => b.op(Op::UConvert, ty, &[bits]),
        (Some((_, true)), _) => {
            let int = b.module.type_int(32, true);
            let signed = b.bitcast(int, bits);
            b.op(Op::SConvert, ty, &[signed])
        }
        (None, _) => {
            // 16-bit floats (IEEE or bfloat16): through a 16-bit integer.
            let ushort = b.module.type_int(16, false);
            let narrow = b.op(Op::UConvert, ushort, &[bits]);
            b.bitcast(ty, narrow)
        }
    }
}

/// The `width` bits at byte `offset` of the words `view` sees (aligned to `align` bytes): a
/// `uint` holding them in its low bits, or a `uvec2` for 64.
fn read_bits(b: &mut Builder<'_>, view: Word, offset: Word, width: u32, align: u32) -> Res<Word> {
    let uint = b.module.type_int(32, false);
    let boolean = b.module.type_bool();
    let (two, three) = (b.module.constant_u32(2), b.module.constant_u32(3));
    let class = b.module.globals().iter().find(|g| g.result_id == Some(view)).and_then(|g| g.word_opt(0)).and_then(StorageClass::from_u32).unwrap_or(StorageClass::StorageBuffer);
    let word = |b: &mut Builder<'_>, index: Word| {
        let zero = b.module.constant_u32(0);
        let ptr = b.module.type_pointer(class, uint);
        let p = b.access_chain(ptr, view, &[zero, index]);
        b.load(uint, p)
    };
    let mask = |b: &mut Builder<'_>, v: Word, width: u32| {
        if width >= 32 {
            return v;
        }
        let m = b.module.constant_u32((1u32 << width) - 1);
        b.op(Op::BitwiseAnd, uint, &[v, m])
    };
    if width == 64 {
        let lo = read_bits(b, view, offset, 32, align)?;
        let four = b.module.constant_u32(4);
        let next = b.iadd(uint, offset, four);
        let hi = read_bits(b, view, next, 32, part_align(align, 4))?;
        let words = b.module.type_vector(uint, 2);
        return Ok(b.op(Op::CompositeConstruct, words, &[lo, hi]));
    }
    let index = b.op(Op::ShiftRightLogical, uint, &[offset, two]);
    // The bit position of the value in its word.
    let shift = |b: &mut Builder<'_>| {
        let in_word = b.op(Op::BitwiseAnd, uint, &[offset, three]);
        b.op(Op::ShiftLeftLogical, uint, &[in_word, three])
    };
    match width {
        32 if align >= 4 => Ok(word(b, index)),
        8 | 16 if align >= width / 8 => {
            let w = word(b, index);
            let at = shift(b);
            let v = b.op(Op::ShiftRightLogical, uint, &[w, at]);
            Ok(mask(b, v, width))
        }
        16 | 32 => {
            // Across two words; the second index clamped to the buffer (past its end, the
            // shift below discards it).
            let lo = word(b, index);
            let shift = shift(b);
            let one = b.module.constant_u32(1);
            let len = b.emit(Op::ArrayLength, uint, vec![Operand::Id(view), Operand::Literal(0)]);
            let last = b.op(Op::ISub, uint, &[len, one]);
            let next = b.iadd(uint, index, one);
            let glsl = b.module.ext_inst_import("GLSL.std.450");
            let next = b.emit(Op::ExtInst, uint, vec![Operand::Id(glsl), Operand::Literal(spirv::GlslStd450Op::UMin as u32), Operand::Id(next), Operand::Id(last)]);
            let hi = word(b, next);
            let low_part = b.op(Op::ShiftRightLogical, uint, &[lo, shift]);
            let thirty_two = b.module.constant_u32(32);
            let back = b.op(Op::ISub, uint, &[thirty_two, shift]);
            let high_part = b.op(Op::ShiftLeftLogical, uint, &[hi, back]);
            let joined = b.op(Op::BitwiseOr, uint, &[low_part, high_part]);
            let zero = b.module.constant_u32(0);
            let whole = b.op(Op::IEqual, boolean, &[shift, zero]);
            let v = b.select(uint, whole, lo, joined);
            Ok(mask(b, v, width))
        }
        _ => Err(format!("a {width}-bit value through the block pointer")),
    }
}
