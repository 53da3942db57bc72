//! Storage, uniform and push-constant blocks that hold 8- or 16-bit data, redeclared as arrays
//! of 32-bit words (uniform blocks as arrays of `uvec4`, which their layout rules allow).
//!
//! A pointer into such a block is no longer a SPIR-V value: it is the block variable, the
//! descriptor index where the variable is an array of blocks, a byte offset (a constant part,
//! and a run-time part with its known alignment) and the pointee's original type. Loads and
//! stores through it read and write the words under the pointee, by its layout decorations.
//!
//! `PhysicalStorageBuffer` pointers to narrow data keep being values (loaded, stored, passed,
//! chosen by phis, made from integers): their types are retyped in place to pointers to a block of
//! words (see [`Physical`]), and an access through one is a [`Ptr`] based on the value, as one
//! through a block variable is based on the variable.

use super::codec::{low_mask, Emit};
use super::Legalize;
use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::{Inst, Module, Operand};
use spirv::{Decoration, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

/// The layout decorations of the input module.
pub(super) struct Layouts {
    member_offsets: HashMap<(Word, u32), u32>,
    /// `MatrixStride` and whether `RowMajor`, of struct members holding matrices.
    member_matrices: HashMap<(Word, u32), MatrixLayout>,
    strides: HashMap<Word, u32>,
    buffer_blocks: HashSet<Word>,
}

impl Layouts {
    pub fn new(m: &Module) -> Layouts {
        let mut l = Layouts { member_offsets: HashMap::new(), member_matrices: HashMap::new(), strides: HashMap::new(), buffer_blocks: HashSet::new() };
        for a in &m.annotations {
            let (Some(target), Some(d)) = (a.operands.first().and_then(Operand::id), a.word_opt(1)) else { continue };
            if a.is(Op::MemberDecorate) && a.word_opt(2) == Some(Decoration::Offset as u32) {
                if let Some(o) = a.word_opt(3) {
                    l.member_offsets.insert((target, d), o);
                }
            } else if a.is(Op::MemberDecorate) && a.word_opt(2) == Some(Decoration::MatrixStride as u32) {
                if let Some(stride) = a.word_opt(3) {
                    l.member_matrices.entry((target, d)).or_default().stride = stride;
                }
            } else if a.is(Op::MemberDecorate) && a.word_opt(2) == Some(Decoration::RowMajor as u32) {
                l.member_matrices.entry((target, d)).or_default().row_major = true;
            } else if a.is(Op::Decorate) && d == Decoration::ArrayStride as u32 {
                if let Some(s) = a.word_opt(2) {
                    l.strides.insert(target, s);
                }
            } else if a.is(Op::Decorate) && d == Decoration::BufferBlock as u32 {
                l.buffer_blocks.insert(target);
            }
        }
        l
    }

    /// Lays out `ty` for workgroup memory packed into words, where it has no layout
    /// decorations: scalars and vector components at their own size and alignment, array
    /// elements at their size rounded up to their alignment, struct members at the next offset
    /// their alignment allows. Records the offsets and strides as decorations would; returns the
    /// type's size and alignment in bytes. `None` for a type without a size (a run-time array,
    /// a length that is not a constant), a boolean, a pointer or a matrix.
    pub fn lay_out_packed(&mut self, types: &Types, ty: Word) -> Option<(u32, u32)> {
        self.lay_out_packed_at(types, ty, 0)
    }

    fn lay_out_packed_at(&mut self, types: &Types, ty: Word, depth: u32) -> Option<(u32, u32)> {
        let def = types.defs.get(&ty).filter(|_| depth < 64)?;
        match def.op()? {
            Op::TypeInt | Op::TypeFloat => {
                let bytes = def.word_opt(0)? / 8;
                (bytes > 0).then_some((bytes, bytes))
            }
            Op::TypeVector => {
                let (c, n) = types.vector(ty)?;
                let (bytes, align) = self.lay_out_packed_at(types, c, depth + 1)?;
                Some((bytes.checked_mul(n)?, align))
            }
            Op::TypeArray => {
                let (stride, align) = self.lay_out_packed_array(types, ty, def.id(0).ok()?, depth)?;
                Some((stride.checked_mul(types.const_u32(def.id(1).ok()?)?)?, align))
            }
            Op::TypeStruct => {
                let (mut end, mut struct_align) = (0u32, 1u32);
                for (i, member) in def.operands.iter().filter_map(Operand::id).enumerate() {
                    let (size, align) = self.lay_out_packed_at(types, member, depth + 1)?;
                    let offset = *self.member_offsets.entry((ty, i as u32)).or_insert(end.checked_next_multiple_of(align)?);
                    end = end.max(offset.checked_add(size)?);
                    struct_align = struct_align.max(align);
                }
                Some((end.checked_next_multiple_of(struct_align)?, struct_align))
            }
            _ => None,
        }
    }

    /// [`Layouts::lay_out_packed`] for the pointee of a workgroup variable, which may also be
    /// an array whose length is a specialization-constant expression (of elements that have a
    /// packed layout); whether it has a layout now.
    pub fn lay_out_packed_variable(&mut self, types: &Types, ty: Word) -> bool {
        match types.defs.get(&ty).filter(|d| d.is(Op::TypeArray)).and_then(|d| d.id(0).ok()) {
            Some(element) => self.lay_out_packed_array(types, ty, element, 0).is_some(),
            None => self.lay_out_packed(types, ty).is_some(),
        }
    }

    /// Lays out the elements of array type `ty` and records its stride: the stride and the
    /// elements' alignment.
    fn lay_out_packed_array(&mut self, types: &Types, ty: Word, element: Word, depth: u32) -> Option<(u32, u32)> {
        let (size, align) = self.lay_out_packed_at(types, element, depth + 1)?;
        Some((*self.strides.entry(ty).or_insert(size.checked_next_multiple_of(align)?), align))
    }

    /// Bytes a value of `ty` covers in a block.
    fn size(&self, types: &Types, ty: Word) -> Option<u32> {
        let def = types.defs.get(&ty)?;
        match def.op()? {
            Op::TypeInt | Op::TypeFloat => Some(def.word_opt(0)? / 8),
            Op::TypeVector => {
                let (c, n) = types.vector(ty)?;
                self.size(types, c)?.checked_mul(n)
            }
            Op::TypeArray => self.strides.get(&ty)?.checked_mul(types.const_u32(def.id(1).ok()?)?),
            Op::TypePointer => Some(8),
            Op::TypeStruct => {
                let mut end = 0;
                for (i, member) in def.operands.iter().filter_map(Operand::id).enumerate() {
                    let size = match (types.defs.get(&member), self.member_matrices.get(&(ty, i as u32))) {
                        (Some(m), Some(layout)) if m.is(Op::TypeMatrix) => layout.size(types, member),
                        _ => self.size(types, member),
                    };
                    // Offsets come from the input: one past u32 makes the size unknown.
                    end = end.max(self.member_offsets.get(&(ty, i as u32))?.checked_add(size.unwrap_or(0))?);
                }
                Some(end)
            }
            _ => None,
        }
    }
}

/// How a matrix lies in a block: the bytes between its columns (rows when `row_major`).
#[derive(Clone, Copy, Debug, Default)]
pub(super) struct MatrixLayout {
    stride: u32,
    row_major: bool,
}

impl MatrixLayout {
    /// Bytes matrix type `ty` covers.
    fn size(&self, types: &Types, ty: Word) -> Option<u32> {
        let (columns, rows) = matrix_shape(types, ty)?;
        self.stride.checked_mul(if self.row_major { rows } else { columns })
    }

    /// Byte offset of column `column`, elements `bytes` wide.
    fn column(&self, column: u32, bytes: u32) -> u32 {
        column * if self.row_major { bytes } else { self.stride }
    }

    /// The matrix layout a pointer to one of its columns keeps: a row-major matrix's columns
    /// are vectors whose elements lie `stride` bytes apart.
    fn for_column(self) -> Option<MatrixLayout> {
        self.row_major.then_some(self)
    }
}

/// Columns, and rows (the column vector's length), of matrix type `ty`.
fn matrix_shape(types: &Types, ty: Word) -> Option<(u32, u32)> {
    let def = types.defs.get(&ty).filter(|d| d.is(Op::TypeMatrix))?;
    Some((def.word_opt(1)?, types.vector(def.id(0).ok()?)?.1))
}

/// `PhysicalStorageBuffer` pointer types to narrow data, retyped in place to pointers to a block
/// of 32-bit words (`struct { uint w[]; }`), so that every value of them stays a valid address.
///
/// Precondition: such a pointer, where a load or store goes through it, holds a 4-byte aligned
/// address (GLSL's references are 16-byte aligned unless `buffer_reference_align` says less);
/// elements at other offsets are reached through access chains from it.
pub(super) struct Physical {
    /// Retyped pointer type -> its original pointee.
    pointees: HashMap<Word, Word>,
    /// Pointer to one word; pointer to the block of words.
    word_ptr: Word,
    words_ptr: Word,
}

impl Physical {
    pub fn new(m: &mut Module, pointees: HashMap<Word, Word>) -> Physical {
        if pointees.is_empty() {
            return Physical { pointees, word_ptr: 0, words_ptr: 0 };
        }
        let uint = m.type_int(32, false);
        let words = m.alloc_id();
        m.add_global(Inst::new(Op::TypeRuntimeArray, None, Some(words), vec![Operand::Id(uint)]));
        m.decorate(words, Decoration::ArrayStride, &[4]);
        let block = m.alloc_id();
        m.add_global(Inst::new(Op::TypeStruct, None, Some(block), vec![Operand::Id(words)]));
        m.decorate(block, Decoration::Block, &[]);
        m.annotations.push(Inst::new(Op::MemberDecorate, None, None, vec![Operand::Id(block), Operand::Literal(0), Operand::decoration(Decoration::Offset), Operand::Literal(0)]));
        for g in m.globals_mut().iter_mut().filter(|g| g.result_id.is_some_and(|id| pointees.contains_key(&id))) {
            g.operands[1] = Operand::Id(block);
        }
        let words_ptr = m.type_pointer(StorageClass::PhysicalStorageBuffer, block);
        let word_ptr = m.type_pointer(StorageClass::PhysicalStorageBuffer, uint);
        Physical { pointees, word_ptr, words_ptr }
    }

    /// The original pointee of pointer value `v`, if it is one of the retyped pointers.
    fn pointee(&self, types: &Types, v: Word) -> Option<Word> {
        types.type_of(v).and_then(|t| self.pointees.get(&t)).copied()
    }

    /// Drops what the retyped pointer types no longer need (forward declarations, array strides:
    /// pointers into the words are not stepped), then merges the now identical types.
    pub fn finish(&self, m: &mut Module) {
        if self.pointees.is_empty() {
            return;
        }
        let retyped = |i: &Inst| i.operands.first().and_then(Operand::id).is_some_and(|p| self.pointees.contains_key(&p));
        m.globals_mut().retain(|g| !(g.is(Op::TypeForwardPointer) && retyped(g)));
        m.annotations.retain(|a| !retyped(a));
        m.merge_duplicate_types();
    }
}

/// A redeclared block variable, or a `PhysicalStorageBuffer` pointer value to narrow data.
#[derive(Clone, Copy, Debug)]
pub(super) struct View {
    var: Word,
    pub(super) class: StorageClass,
    /// The variable is an array of blocks.
    arrayed: bool,
    /// Words are read as `uvec4` elements (uniform blocks).
    vec4: bool,
    /// Pointer to one element of the word array; pointer to one redeclared block.
    element_ptr: Word,
    block_ptr: Word,
    /// The original block struct.
    block: Word,
}

/// A byte offset: `dynamic + constant`, the dynamic part a multiple of `align`.
#[derive(Clone, Copy, Debug)]
pub(super) struct Offset {
    dynamic: Option<Word>,
    constant: u32,
    align: u32,
}

impl Offset {
    /// The largest power of two known to divide the offset.
    fn alignment(&self) -> u32 {
        let c = if self.constant == 0 { 1 << 31 } else { 1 << self.constant.trailing_zeros() };
        if self.dynamic.is_some() {
            c.min(self.align)
        } else {
            c
        }
    }

    fn plus(self, bytes: u32) -> Offset {
        Offset { constant: self.constant.wrapping_add(bytes), ..self }
    }
}

/// A pointer into a redeclared block.
#[derive(Clone, Copy, Debug)]
pub(super) struct Ptr {
    pub(super) view: View,
    descriptor: Option<Word>,
    pub(super) offset: Offset,
    /// The pointee's original type.
    pub(super) pointee: Word,
    /// The layout of the matrices the pointee is or holds (arrays of them), from the
    /// struct member the pointer went through; for a column of a row-major matrix, the layout
    /// that spaces its elements.
    matrix: Option<MatrixLayout>,
}

/// Redeclares block variable `var` (of a class with explicit layout) as words; the variable
/// keeps its id and decorations.
pub(super) fn redeclare(m: &mut Module, types: &Types, layouts: &Layouts, var: &Inst) -> Result<View> {
    let site = |m: &Module, message: &str| Error::Invalid { site: m.site(var), message: message.into() };
    let class_word = var.word(0)?;
    let class = [StorageClass::StorageBuffer, StorageClass::Uniform, StorageClass::PushConstant].into_iter().find(|c| *c as u32 == class_word).ok_or_else(|| site(m, "not a block variable"))?;
    let ptr_def = types.defs.get(&var.ty()?).ok_or_else(|| site(m, "a variable without a pointer type"))?;
    let mut block = ptr_def.id(1)?;
    let mut descriptors = None;
    if let Some(d) = types.defs.get(&block).filter(|d| d.is(Op::TypeArray) || d.is(Op::TypeRuntimeArray)) {
        descriptors = Some(d.clone());
        block = d.id(0)?;
    }
    let ssbo = class == StorageClass::StorageBuffer || layouts.buffer_blocks.contains(&block);
    let uint = m.type_int(32, false);
    let (element, words) = if ssbo {
        let id = m.alloc_id();
        m.add_global(Inst::new(Op::TypeRuntimeArray, None, Some(id), vec![Operand::Id(uint)]));
        m.decorate(id, Decoration::ArrayStride, &[4]);
        (uint, id)
    } else {
        let size = layouts.size(types, block).ok_or_else(|| site(m, "a block whose layout is not fully decorated"))?;
        let vec4 = class == StorageClass::Uniform;
        let (element, bytes) = if vec4 { (m.type_vector(uint, 4), 16) } else { (uint, 4) };
        let len = m.constant_u32(size.div_ceil(bytes).max(1));
        let id = m.alloc_id();
        m.add_global(Inst::new(Op::TypeArray, None, Some(id), vec![Operand::Id(element), Operand::Id(len)]));
        m.decorate(id, Decoration::ArrayStride, &[bytes]);
        (element, id)
    };
    let st = m.alloc_id();
    m.add_global(Inst::new(Op::TypeStruct, None, Some(st), vec![Operand::Id(words)]));
    m.decorate(st, if layouts.buffer_blocks.contains(&block) { Decoration::BufferBlock } else { Decoration::Block }, &[]);
    m.annotations.push(Inst::new(Op::MemberDecorate, None, None, vec![Operand::Id(st), Operand::Literal(0), Operand::decoration(Decoration::Offset), Operand::Literal(0)]));
    let pointee = match &descriptors {
        Some(d) => {
            let id = m.alloc_id();
            let mut ops = vec![Operand::Id(st)];
            ops.extend(d.operands.get(1).cloned());
            m.add_global(Inst::new(d.op().unwrap_or(Op::TypeArray), None, Some(id), ops));
            id
        }
        None => st,
    };
    let var_ptr = m.type_pointer(class, pointee);
    let id = var.result()?;
    if let Some(g) = m.globals_mut().iter_mut().find(|g| g.result_id == Some(id)) {
        g.result_type = Some(var_ptr);
    }
    let element_ptr = m.type_pointer(class, element);
    let block_ptr = m.type_pointer(class, st);
    Ok(View { var: id, class, arrayed: descriptors.is_some(), vec4: !ssbo && class == StorageClass::Uniform, element_ptr, block_ptr, block })
}

/// Redeclares workgroup variable `var`, whose pointee [`Layouts::lay_out_packed`] laid out, as
/// an array of 32-bit words (in a struct, without layout decorations, which workgroup memory
/// has not); the variable keeps its id, and a null initializer stays null.
pub(super) fn redeclare_workgroup(m: &mut Module, types: &Types, layouts: &Layouts, var: &Inst) -> Result<View> {
    let site = |m: &Module, message: &str| Error::Invalid { site: m.site(var), message: message.into() };
    let pointee = types.defs.get(&var.ty()?).ok_or_else(|| site(m, "a variable without a pointer type"))?.id(1)?;
    let uint = m.type_int(32, false);
    let len = match layouts.size(types, pointee) {
        Some(size) => m.constant_u32(size.div_ceil(4).max(1)),
        // An array of a specialization-constant length: (length * stride + 3) / 4 words, as a
        // specialization-constant expression.
        None => {
            let def = types.defs.get(&pointee).filter(|d| d.is(Op::TypeArray));
            let (Some(length), Some(&stride)) = (def.and_then(|d| d.id(1).ok()), layouts.strides.get(&pointee)) else {
                return Err(site(m, "a workgroup variable without a packed layout"));
            };
            let length = match types.type_of(length).and_then(|t| types.int(t)) {
                Some((32, false)) => length,
                Some((32, true)) => m.spec_constant_op(uint, Op::Bitcast, &[length]),
                _ => m.spec_constant_op(uint, Op::UConvert, &[length]),
            };
            let stride = m.constant_u32(stride);
            let bytes = m.spec_constant_op(uint, Op::IMul, &[length, stride]);
            let three = m.constant_u32(3);
            let up = m.spec_constant_op(uint, Op::IAdd, &[bytes, three]);
            let four = m.constant_u32(4);
            m.spec_constant_op(uint, Op::UDiv, &[up, four])
        }
    };
    let words = m.type_array(uint, len);
    let st = m.type_struct(&[words]);
    let var_ptr = m.type_pointer(StorageClass::Workgroup, st);
    let initializer = match var.operands.get(1).and_then(Operand::id) {
        Some(init) if m.globals().iter().any(|g| g.result_id == Some(init) && g.is(Op::ConstantNull)) => Some(m.constant_null(st)),
        Some(_) => return Err(site(m, "a workgroup variable of 8- or 16-bit data with an initializer other than null")),
        None => None,
    };
    let id = var.result()?;
    if let Some(g) = m.globals_mut().iter_mut().find(|g| g.result_id == Some(id)) {
        g.result_type = Some(var_ptr);
        g.operands.truncate(1);
        g.operands.extend(initializer.map(Operand::Id));
    }
    let element_ptr = m.type_pointer(StorageClass::Workgroup, uint);
    Ok(View { var: id, class: StorageClass::Workgroup, arrayed: false, vec4: false, element_ptr, block_ptr: var_ptr, block: pointee })
}

impl Legalize<'_> {
    /// The block pointer `id` is, if it is one: a pointer into a block, a variable of one block,
    /// or a `PhysicalStorageBuffer` pointer to narrow data.
    fn ptr_of(&self, id: Word) -> Option<Ptr> {
        if let Some(p) = self.ptrs.get(&id) {
            return Some(*p);
        }
        let start = Offset { dynamic: None, constant: 0, align: 1 << 31 };
        if let Some(pointee) = self.physical.pointee(&self.types, id) {
            let view =
                View { var: id, class: StorageClass::PhysicalStorageBuffer, arrayed: false, vec4: false, element_ptr: self.physical.word_ptr, block_ptr: self.physical.words_ptr, block: pointee };
            return Some(Ptr { view, descriptor: None, offset: start, pointee, matrix: None });
        }
        let view = self.views.get(&id)?;
        (!view.arrayed).then_some(Ptr { view: *view, descriptor: None, offset: start, pointee: view.block, matrix: None })
    }

    /// Records every id that becomes a [`Ptr`]: access chains (and copies) from block variables,
    /// from `PhysicalStorageBuffer` pointers to narrow data, and from such ids.
    pub(super) fn track_pointers(&mut self, m: &Module) {
        let chains = [Op::AccessChain, Op::InBoundsAccessChain, Op::PtrAccessChain, Op::InBoundsPtrAccessChain];
        loop {
            let before = self.tracked.len();
            for inst in m.functions.iter().flat_map(|f| f.insts()) {
                let (Some(op), Some(result), Some(base)) = (inst.op(), inst.result_id, inst.operands.first().and_then(Operand::id)) else { continue };
                let chain = chains.contains(&op);
                if !(chain || op == Op::CopyObject) {
                    continue;
                }
                let from = self.views.contains_key(&base) || self.tracked.contains(&base) || (chain && self.physical.pointee(&self.types, base).is_some());
                if from {
                    self.tracked.insert(result);
                }
            }
            if self.tracked.len() == before {
                break;
            }
        }
    }

    /// The memory operands of a word access through `view`.
    fn word_access(view: &View) -> Vec<Operand> {
        if view.class == StorageClass::PhysicalStorageBuffer {
            vec![Operand::Enum(rspirv::grammar::OperandKind::MemoryAccess, spirv::MemoryAccess::ALIGNED.bits()), Operand::Literal(4)]
        } else {
            Vec::new()
        }
    }

    /// Rewrites an instruction that uses a pointer into a redeclared block; whether it was one.
    pub(super) fn block_access(&mut self, e: &mut Emit<'_>, inst: &Inst) -> Result<bool> {
        let Some(op) = inst.op() else { return Ok(false) };
        let first = inst.operands.first().and_then(Operand::id);
        match op {
            Op::AccessChain | Op::InBoundsAccessChain => {
                let base = inst.id(0)?;
                let mut indices: Vec<Word> = inst.operands[1..].iter().filter_map(Operand::id).collect();
                let ptr = match (self.views.get(&base), self.ptr_of(base)) {
                    (Some(view), _) if view.arrayed => {
                        if indices.is_empty() {
                            return Err(self.unsupported(e.m, inst, "a pointer to an array of blocks of 8- or 16-bit data".into()));
                        }
                        let d = indices.remove(0);
                        Ptr { view: *view, descriptor: Some(d), offset: Offset { dynamic: None, constant: 0, align: 1 << 31 }, pointee: view.block, matrix: None }
                    }
                    (_, Some(p)) => p,
                    _ => return Ok(false),
                };
                let p = self.chain(e, inst, ptr, &indices)?;
                self.ptrs.insert(inst.result()?, p);
                Ok(true)
            }
            Op::PtrAccessChain | Op::InBoundsPtrAccessChain => {
                let base = inst.id(0)?;
                let Some(mut p) = self.ptr_of(base) else { return Ok(false) };
                let element = inst.id(1)?;
                if self.types.const_u32(element) != Some(0) {
                    let stride = self.types.type_of(base).and_then(|t| self.layouts.strides.get(&t)).copied();
                    let stride = stride.ok_or_else(|| self.unsupported(e.m, inst, "a step from a pointer whose type has no ArrayStride".into()))?;
                    p = self.step(e, p, element, stride);
                }
                let indices: Vec<Word> = inst.operands[2..].iter().filter_map(Operand::id).collect();
                let p = self.chain(e, inst, p, &indices)?;
                self.ptrs.insert(inst.result()?, p);
                Ok(true)
            }
            Op::CopyObject if first.is_some_and(|p| self.ptrs.contains_key(&p) || self.views.contains_key(&p)) && first.and_then(|p| self.ptr_of(p)).is_some() => {
                let p = first.and_then(|p| self.ptr_of(p)).ok_or_else(|| self.unsupported(e.m, inst, "a block pointer".into()))?;
                self.ptrs.insert(inst.result()?, p);
                Ok(true)
            }
            Op::Load if first.and_then(|p| self.ptr_of(p)).is_some() => {
                let p = first.and_then(|p| self.ptr_of(p)).ok_or_else(|| self.unsupported(e.m, inst, "a block pointer".into()))?;
                let v = self.read(e, inst, p)?;
                let ty = self.widen(e.m, inst.ty()?)?;
                e.emit_as(Some(inst.result()?), Op::CopyObject, ty, vec![Operand::Id(v)]);
                Ok(true)
            }
            Op::Store if first.and_then(|p| self.ptr_of(p)).is_some() => {
                let p = first.and_then(|p| self.ptr_of(p)).ok_or_else(|| self.unsupported(e.m, inst, "a block pointer".into()))?;
                self.write(e, inst, p, inst.id(1)?)?;
                Ok(true)
            }
            Op::ArrayLength if first.is_some_and(|p| self.views.contains_key(&p) || self.ptrs.contains_key(&p)) => {
                let base = inst.id(0)?;
                let view = self.views.get(&base).copied().or_else(|| self.ptrs.get(&base).map(|p| p.view)).ok_or_else(|| self.unsupported(e.m, inst, "a block pointer".into()))?;
                let descriptor = self.ptrs.get(&base).and_then(|p| p.descriptor);
                let member = inst.word(1)?;
                let offset = self.layouts.member_offsets.get(&(view.block, member)).copied().unwrap_or(0);
                let array = self.types.defs.get(&view.block).and_then(|d| d.id(member as usize).ok());
                let stride = array.and_then(|a| self.layouts.strides.get(&a)).copied().ok_or_else(|| self.unsupported(e.m, inst, "a run-time array without an ArrayStride".into()))?;
                let block = match descriptor {
                    Some(d) => e.op(Op::AccessChain, view.block_ptr, &[view.var, d]),
                    None => view.var,
                };
                let u = e.uint(1);
                let words = e.emit_as(None, Op::ArrayLength, u, vec![Operand::Id(block), Operand::Literal(0)]);
                let four = e.m.constant_u32(4);
                let bytes = e.op(Op::IMul, u, &[words, four]);
                let off = e.m.constant_u32(offset);
                let bytes = e.op(Op::ISub, u, &[bytes, off]);
                let s = e.m.constant_u32(stride);
                e.emit_as(Some(inst.result()?), Op::UDiv, inst.ty()?, vec![Operand::Id(bytes), Operand::Id(s)]);
                Ok(true)
            }
            _ if crate::passes::lower_kernel_pointers::is_atomic(op) && first.and_then(|p| self.ptr_of(p)).is_some() => {
                let p = first.and_then(|p| self.ptr_of(p)).ok_or_else(|| self.unsupported(e.m, inst, "a block pointer".into()))?;
                if let Some((kind, 1)) = self.lanes_of(p.pointee) {
                    self.narrow_atomic(e, inst, p, kind)?;
                    return Ok(true);
                }
                let width = self.types.scalar_width(p.pointee);
                if width != Some(32) || p.offset.alignment() < 4 {
                    return Err(self.unsupported(e.m, inst, "8- and 16-bit atomics".into()));
                }
                let word = self.word_ptr(e, p)?;
                let mut inst = inst.clone();
                inst.operands[0] = Operand::Id(word);
                e.out.push(inst);
                Ok(true)
            }
            // A buffer-reference pointer derived from another one, used as a value (stored,
            // put into a composite, bitcast to an address): made an address again.
            Op::Store | Op::CompositeConstruct | Op::CopyObject | Op::CopyLogical | Op::Select | Op::Bitcast if self.derived_references(inst).next().is_some() => {
                let mut inst = inst.clone();
                let derived: Vec<Word> = self.derived_references(&inst).collect();
                for id in derived {
                    let v = self.reference_value(e, &inst, id)?;
                    inst.map_used_ids(|u| if u == id { v } else { u });
                }
                e.out.push(inst);
                Ok(true)
            }
            _ => {
                if let Some(p) = inst.operands.iter().filter_map(Operand::id).find(|id| self.ptrs.contains_key(id) || self.views.contains_key(id) || self.tracked.contains(id)) {
                    return Err(self.unsupported(
                        e.m,
                        inst,
                        format!("pointer %{p} into a block of 8- or 16-bit data used by {} (only loads, stores, access chains and 32-bit atomics are rewritten)", inst.name()),
                    ));
                }
                Ok(false)
            }
        }
    }

    /// The operands of `inst` past its first that are buffer-reference pointers into narrow
    /// data derived from another (access chains: not values any more).
    fn derived_references<'i>(&'i self, inst: &'i Inst) -> impl Iterator<Item = Word> + 'i {
        let skip = usize::from(inst.is(Op::Store) || inst.is(Op::Select));
        inst.operands.iter().skip(skip).filter_map(Operand::id).filter(|id| self.ptrs.get(id).is_some_and(|p| p.view.class == StorageClass::PhysicalStorageBuffer && p.descriptor.is_none()))
    }

    /// Derived buffer-reference pointer `id` as a value of its (retyped) type again: a pointer
    /// to the word it starts at, bit-cast. Its offset must be a multiple of 4 bytes (the
    /// retyped pointers hold word addresses).
    fn reference_value(&mut self, e: &mut Emit<'_>, inst: &Inst, id: Word) -> Result<Word> {
        let (Some(p), Some(ty)) = (self.ptrs.get(&id).copied(), self.types.type_of(id)) else {
            return Err(self.unsupported(e.m, inst, format!("pointer %{id} into 8- or 16-bit data as a value")));
        };
        if p.offset.alignment() < 4 {
            return Err(self.unsupported(e.m, inst, format!("pointer %{id} into 8- or 16-bit data as a value, at an offset not known to be a multiple of 4 bytes")));
        }
        let word = self.word_ptr(e, p)?;
        Ok(e.op(Op::Bitcast, ty, &[word]))
    }

    /// `base` advanced by access-chain `indices`.
    fn chain(&mut self, e: &mut Emit<'_>, inst: &Inst, mut p: Ptr, indices: &[Word]) -> Result<Ptr> {
        for &index in indices {
            let def = self.types.defs.get(&p.pointee).cloned().ok_or_else(|| self.unsupported(e.m, inst, "an access chain into this type".into()))?;
            let (stride, next) = match def.op() {
                Some(Op::TypeStruct) => {
                    let member = self.types.const_u32(index).ok_or_else(|| self.unsupported(e.m, inst, "a struct member chosen at run time".into()))?;
                    let offset = self.layouts.member_offsets.get(&(p.pointee, member)).copied();
                    let (Some(offset), Ok(next)) = (offset, def.id(member as usize)) else {
                        return Err(self.unsupported(e.m, inst, format!("member {member} without an Offset")));
                    };
                    p.matrix = self.layouts.member_matrices.get(&(p.pointee, member)).copied();
                    p.offset = p.offset.plus(offset);
                    p.pointee = next;
                    continue;
                }
                Some(Op::TypeArray | Op::TypeRuntimeArray) => {
                    let stride = self.layouts.strides.get(&p.pointee).copied().ok_or_else(|| self.unsupported(e.m, inst, "an array without an ArrayStride in a block".into()))?;
                    (stride, def.id(0)?)
                }
                Some(Op::TypeVector) => {
                    let stride = self.element_spacing(p).ok_or_else(|| self.unsupported(e.m, inst, "an access chain into this vector".into()))?;
                    p.matrix = None;
                    (stride, def.id(0)?)
                }
                Some(Op::TypeMatrix) => {
                    let (Some(layout), Some(bytes)) = (p.matrix.filter(|l| l.stride > 0), self.component_bytes(def.id(0)?)) else {
                        return Err(self.unsupported(e.m, inst, "an access chain into a matrix without a MatrixStride in a block of 8- or 16-bit data".into()));
                    };
                    p.matrix = layout.for_column();
                    (layout.column(1, bytes), def.id(0)?)
                }
                _ => return Err(self.unsupported(e.m, inst, "an access chain into this type in a block of 8- or 16-bit data".into())),
            };
            p.pointee = next;
            p = self.step(e, p, index, stride);
        }
        Ok(p)
    }

    /// `p` moved by `index` elements of `stride` bytes.
    fn step(&mut self, e: &mut Emit<'_>, mut p: Ptr, index: Word, stride: u32) -> Ptr {
        match self.types.const_u32(index).filter(|_| self.types.int(self.types.type_of(index).unwrap_or(0)).is_some_and(|(w, _)| w <= 32)) {
            Some(c) => p.offset = p.offset.plus(c.wrapping_mul(stride)),
            None => {
                let u = e.uint(1);
                let i = self.index_u32(e, index);
                let s = e.m.constant_u32(stride);
                let scaled = e.op(Op::IMul, u, &[i, s]);
                let (dynamic, align) = match p.offset.dynamic {
                    Some(d) => (e.op(Op::IAdd, u, &[d, scaled]), p.offset.align.min(1 << stride.trailing_zeros())),
                    None => (scaled, 1 << stride.trailing_zeros()),
                };
                p.offset = Offset { dynamic: Some(dynamic), align, ..p.offset };
            }
        }
        p
    }

    /// An index of any integer width as a 32-bit integer (a narrow one this pass widens is one
    /// already).
    fn index_u32(&mut self, e: &mut Emit<'_>, index: Word) -> Word {
        if self.types.type_of(index).is_some_and(|t| self.narrow.contains(&t)) {
            return index;
        }
        match self.types.conversion_to_32(index) {
            Some(op) => {
                let u = e.uint(1);
                e.op(op, u, &[index])
            }
            None => index,
        }
    }

    /// The word index of byte offset `o`.
    fn word_index(&mut self, e: &mut Emit<'_>, o: Offset) -> Word {
        let u = e.uint(1);
        match o.dynamic {
            None => e.m.constant_u32(o.constant >> 2),
            Some(d) => {
                let total = if o.constant == 0 {
                    d
                } else {
                    let c = e.m.constant_u32(o.constant);
                    e.op(Op::IAdd, u, &[d, c])
                };
                let two = e.m.constant_u32(2);
                e.op(Op::ShiftRightLogical, u, &[total, two])
            }
        }
    }

    /// Bits to shift a word right by to reach byte offset `o`'s byte.
    pub(super) fn bit_shift(&mut self, e: &mut Emit<'_>, o: Offset) -> Word {
        if o.alignment() >= 4 {
            return e.m.constant_u32(0);
        }
        match o.dynamic {
            None => e.m.constant_u32((o.constant & 3) * 8),
            Some(d) => {
                let u = e.uint(1);
                let c = e.m.constant_u32(o.constant);
                let total = e.op(Op::IAdd, u, &[d, c]);
                let three = e.m.constant_u32(3);
                let byte = e.op(Op::BitwiseAnd, u, &[total, three]);
                e.op(Op::ShiftLeftLogical, u, &[byte, three])
            }
        }
    }

    /// A pointer to the word holding `p`'s first byte (storage and push-constant blocks).
    pub(super) fn word_ptr(&mut self, e: &mut Emit<'_>, p: Ptr) -> Result<Word> {
        let index = self.word_index(e, p.offset);
        let zero = e.m.constant_u32(0);
        let mut chain = vec![p.view.var];
        chain.extend(p.descriptor);
        chain.extend([zero, index]);
        Ok(e.op(Op::AccessChain, p.view.element_ptr, &chain))
    }

    /// The word holding byte offset `o` of `p`'s block.
    fn load_word(&mut self, e: &mut Emit<'_>, p: Ptr, o: Offset) -> Result<Word> {
        let u = e.uint(1);
        let index = self.word_index(e, o);
        let zero = e.m.constant_u32(0);
        let mut chain = vec![p.view.var];
        chain.extend(p.descriptor);
        chain.push(zero);
        if p.view.vec4 {
            let two = e.m.constant_u32(2);
            let three = e.m.constant_u32(3);
            let row = e.op(Op::ShiftRightLogical, u, &[index, two]);
            chain.push(row);
            let ptr = e.op(Op::AccessChain, p.view.element_ptr, &chain);
            let u4 = e.uint(4);
            let v = e.op(Op::Load, u4, &[ptr]);
            let lane = e.op(Op::BitwiseAnd, u, &[index, three]);
            Ok(e.op(Op::VectorExtractDynamic, u, &[v, lane]))
        } else {
            chain.push(index);
            let ptr = e.op(Op::AccessChain, p.view.element_ptr, &chain);
            let mut ops = vec![Operand::Id(ptr)];
            ops.extend(Self::word_access(&p.view));
            Ok(e.emit_as(None, Op::Load, u, ops))
        }
    }

    /// Whether `ty` is a narrow vector that covers whole words at an offset aligned to 4.
    fn whole_words(&self, p: Ptr) -> bool {
        let contiguous = !p.matrix.is_some_and(|l| l.row_major);
        contiguous && self.lanes_of(p.pointee).is_some_and(|(k, n)| n > 1 && (k.bits() * n) % 32 == 0) && p.offset.alignment() >= 4
    }

    /// Loads the value `p` points to; returns it widened.
    fn read(&mut self, e: &mut Emit<'_>, inst: &Inst, p: Ptr) -> Result<Word> {
        let ty = p.pointee;
        let wide = self.widen(e.m, ty)?;
        let def = self.types.defs.get(&ty).cloned().ok_or_else(|| self.unsupported(e.m, inst, "a load of this type from a block".into()))?;
        let u = e.uint(1);
        match def.op() {
            Some(Op::TypeInt | Op::TypeFloat) => {
                let bits = def.word(0)?;
                match (self.lanes_of(ty), bits) {
                    (Some((kind, _)), _) => {
                        let word = self.load_word(e, p, p.offset)?;
                        let shift = self.bit_shift(e, p.offset);
                        let shifted = e.op(Op::ShiftRightLogical, u, &[word, shift]);
                        let b = e.mask(u, 1, shifted, kind.bits());
                        Ok(e.decode(kind, wide, b))
                    }
                    (None, 64) => {
                        let lo = self.load_word(e, p, p.offset)?;
                        let hi = self.load_word(e, p, p.offset.plus(4))?;
                        Ok(self.unpack_words(e, &[lo, hi], ty, wide))
                    }
                    (None, 32) => {
                        let w = self.load_word(e, p, p.offset)?;
                        Ok(e.coerce(ty, u, w))
                    }
                    // A type the target has, in a block redeclared for another one.
                    (None, width) => {
                        let word = self.load_word(e, p, p.offset)?;
                        let shift = self.bit_shift(e, p.offset);
                        let shifted = e.op(Op::ShiftRightLogical, u, &[word, shift]);
                        let unsigned = e.m.type_int(width, false);
                        let v = e.op(Op::UConvert, unsigned, &[shifted]);
                        Ok(if unsigned == ty { v } else { e.op(Op::Bitcast, ty, &[v]) })
                    }
                }
            }
            Some(Op::TypePointer) => {
                // An address: two words, as `OpBitcast` makes of a `uvec2`.
                let lo = self.load_word(e, p, p.offset)?;
                let hi = self.load_word(e, p, p.offset.plus(4))?;
                let u2 = e.uint(2);
                let v = e.op(Op::CompositeConstruct, u2, &[lo, hi]);
                Ok(e.op(Op::Bitcast, ty, &[v]))
            }
            Some(Op::TypeVector) if self.whole_words(p) => {
                let (k, n) = self.lanes_of(ty).unwrap_or((super::Narrow::F16, 2));
                let words = (0..k.bits() * n / 32).map(|i| self.load_word(e, p, p.offset.plus(4 * i))).collect::<Result<Vec<_>>>()?;
                Ok(self.unpack_words(e, &words, ty, wide))
            }
            Some(Op::TypeVector | Op::TypeArray | Op::TypeStruct) => {
                let parts = self.parts(e, inst, &def, p)?;
                let values = parts.into_iter().map(|part| self.read(e, inst, part)).collect::<Result<Vec<_>>>()?;
                Ok(e.op(Op::CompositeConstruct, wide, &values))
            }
            Some(Op::TypeMatrix) => {
                let columns = self.matrix_columns(e, inst, p)?.into_iter().map(|column| self.read(e, inst, column)).collect::<Result<Vec<_>>>()?;
                Ok(e.op(Op::CompositeConstruct, wide, &columns))
            }
            _ => Err(self.unsupported(e.m, inst, "a load of this type from a block of 8- or 16-bit data".into())),
        }
    }

    /// The pointers to the elements of the composite `def` that `p` points to.
    fn parts(&mut self, e: &mut Emit<'_>, inst: &Inst, def: &Inst, p: Ptr) -> Result<Vec<Ptr>> {
        let ty = p.pointee;
        let mut out = Vec::new();
        match def.op() {
            Some(Op::TypeVector) => {
                let (c, n) = self.types.vector(ty).ok_or_else(|| self.unsupported(e.m, inst, "this vector".into()))?;
                let bytes = self.element_spacing(p).ok_or_else(|| self.unsupported(e.m, inst, "this vector".into()))?;
                out.extend((0..n).map(|i| Ptr { offset: p.offset.plus(i * bytes), pointee: c, matrix: None, ..p }));
            }
            Some(Op::TypeArray) => {
                let len = self.types.const_u32(def.id(1)?).ok_or_else(|| self.unsupported(e.m, inst, "an array of specialization-constant length in a block".into()))?;
                let stride = self.layouts.strides.get(&ty).copied().ok_or_else(|| self.unsupported(e.m, inst, "an array without an ArrayStride in a block".into()))?;
                if len > 4096 {
                    return Err(self.unsupported(e.m, inst, format!("a load or store of a {len}-element array from a block of 8- or 16-bit data")));
                }
                let elem = def.id(0)?;
                out.extend((0..len).map(|i| Ptr { offset: p.offset.plus(i * stride), pointee: elem, ..p }));
            }
            Some(Op::TypeStruct) => {
                for (i, member) in def.operands.iter().filter_map(Operand::id).enumerate() {
                    let offset = self.layouts.member_offsets.get(&(ty, i as u32)).copied().ok_or_else(|| self.unsupported(e.m, inst, format!("member {i} without an Offset")))?;
                    let matrix = self.layouts.member_matrices.get(&(ty, i as u32)).copied();
                    out.push(Ptr { offset: p.offset.plus(offset), pointee: member, matrix, ..p });
                }
            }
            _ => return Err(self.unsupported(e.m, inst, "a composite of this type in a block".into())),
        }
        Ok(out)
    }

    /// Bytes of a component of vector type `vector`.
    fn component_bytes(&self, vector: Word) -> Option<u32> {
        let (c, _) = self.types.vector(vector)?;
        Some(self.types.scalar_width(c)? / 8)
    }

    /// Bytes between the elements of the vector `p` points to: its components' size, or a
    /// row-major matrix's stride for one of its columns.
    fn element_spacing(&self, p: Ptr) -> Option<u32> {
        match p.matrix {
            Some(layout) if layout.row_major => Some(layout.stride),
            _ => self.component_bytes(p.pointee),
        }
    }

    /// Pointers to the columns of the matrix `p` points to.
    fn matrix_columns(&self, e: &Emit<'_>, inst: &Inst, p: Ptr) -> Result<Vec<Ptr>> {
        let column = self.types.defs.get(&p.pointee).and_then(|d| d.id(0).ok());
        let (Some(layout), Some((columns, _)), Some(column), Some(bytes)) =
            (p.matrix.filter(|l| l.stride > 0), matrix_shape(&self.types, p.pointee), column, column.and_then(|c| self.component_bytes(c)))
        else {
            return Err(self.unsupported(e.m, inst, "a matrix without a MatrixStride in a block of 8- or 16-bit data".into()));
        };
        Ok((0..columns).map(|c| Ptr { offset: p.offset.plus(layout.column(c, bytes)), pointee: column, matrix: layout.for_column(), ..p }).collect())
    }

    /// Stores whole `words` from `p` on (its offset a multiple of 4).
    fn store_words(&mut self, e: &mut Emit<'_>, p: Ptr, words: &[Word]) -> Result<()> {
        for (i, w) in words.iter().enumerate() {
            let ptr = self.word_ptr(e, Ptr { offset: p.offset.plus(4 * i as u32), ..p })?;
            let mut ops = vec![Operand::Id(ptr), Operand::Id(*w)];
            ops.extend(Self::word_access(&p.view));
            e.void(Op::Store, ops);
        }
        Ok(())
    }

    /// Stores widened `value` where `p` points.
    fn write(&mut self, e: &mut Emit<'_>, inst: &Inst, p: Ptr, value: Word) -> Result<()> {
        if p.view.vec4 || p.view.class == StorageClass::PushConstant {
            return Err(self.unsupported(e.m, inst, "a store into a uniform or push-constant block".into()));
        }
        let ty = p.pointee;
        let def = self.types.defs.get(&ty).cloned().ok_or_else(|| self.unsupported(e.m, inst, "a store of this type into a block".into()))?;
        let u = e.uint(1);
        match def.op() {
            Some(Op::TypeInt | Op::TypeFloat) => match (self.lanes_of(ty), def.word(0)?) {
                (narrow, width) if narrow.is_some() || width < 32 => {
                    let bits = match narrow {
                        Some((kind, _)) => {
                            let wide = self.widen(e.m, ty)?;
                            e.encode(kind, wide, value)
                        }
                        // A type the target has, in a block redeclared for another one.
                        None => {
                            let unsigned = e.m.type_int(width, false);
                            let v = if unsigned == ty { value } else { e.op(Op::Bitcast, unsigned, &[value]) };
                            e.op(Op::UConvert, u, &[v])
                        }
                    };
                    let shift = self.bit_shift(e, p.offset);
                    let set = e.op(Op::ShiftLeftLogical, u, &[bits, shift]);
                    let lane = e.m.constant_u32(low_mask(width));
                    let lane = e.op(Op::ShiftLeftLogical, u, &[lane, shift]);
                    let clear = e.op(Op::Not, u, &[lane]);
                    let ptr = self.word_ptr(e, p)?;
                    let scope = if p.view.class == StorageClass::Workgroup { e.m.constant_u32(spirv::Scope::Workgroup as u32) } else { e.m.device_scope() };
                    let relaxed = e.m.constant_u32(0);
                    e.op(Op::AtomicAnd, u, &[ptr, scope, relaxed, clear]);
                    e.op(Op::AtomicOr, u, &[ptr, scope, relaxed, set]);
                    Ok(())
                }
                _ => {
                    let words = self.pack_words(e, value, ty);
                    self.store_words(e, p, &words)
                }
            },
            Some(Op::TypePointer) => {
                let u2 = e.uint(2);
                let v = e.op(Op::Bitcast, u2, &[value]);
                let words = [e.extract(u, v, 0), e.extract(u, v, 1)];
                self.store_words(e, p, &words)
            }
            Some(Op::TypeVector) if self.whole_words(p) => {
                let words = self.pack_words(e, value, ty);
                self.store_words(e, p, &words)
            }
            Some(Op::TypeVector | Op::TypeArray | Op::TypeStruct) => {
                let parts = self.parts(e, inst, &def, p)?;
                for (i, part) in parts.into_iter().enumerate() {
                    let elem = self.widen(e.m, part.pointee)?;
                    let v = e.extract(elem, value, i as u32);
                    self.write(e, inst, part, v)?;
                }
                Ok(())
            }
            Some(Op::TypeMatrix) => {
                for (c, column) in self.matrix_columns(e, inst, p)?.into_iter().enumerate() {
                    let wide_column = self.widen(e.m, column.pointee)?;
                    let v = e.extract(wide_column, value, c as u32);
                    self.write(e, inst, column, v)?;
                }
                Ok(())
            }
            _ => Err(self.unsupported(e.m, inst, "a store of this type into a block of 8- or 16-bit data".into())),
        }
    }
}
