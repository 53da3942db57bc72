//! `SplitUnderalignedAccesses`: a kernel's buffer loads and stores aligned below the scalars
//! they move become accesses of pieces as large as the alignment allows, and packed structs
//! whose layout Vulkan cannot declare are addressed in bytes.
//!
//! OpenCL C producers state the alignment they know: a member of a packed struct gets
//! `Aligned 1`, and LLVM copies a struct of two floats as one `long` with `Aligned 4`. Vulkan
//! needs every access through a `PhysicalStorageBuffer` pointer aligned to the size of its
//! largest scalar. Rewrite, for a `PhysicalStorageBuffer` `OpLoad` or `OpStore` whose `Aligned`
//! is below that size: structs, arrays and vectors are accessed member by member (each with the
//! alignment its offset keeps), and a scalar (or pointer) wider than its alignment as pieces of
//! the alignment's size, unsigned integers of 8, 16 or 32 bits through a pointer to them,
//! put together (or taken apart) in 32-bit words with shifts, little-endian as OpenCL's
//! devices are. `Volatile` and `Nontemporal` stay on every piece.
//!
//! A packed struct (`CPacked`) with a member off its scalars' alignment, or a size that is not
//! a multiple of it, has no Vulkan layout: a buffer pointer to one becomes a pointer to its
//! first byte, access chains into it and steps over it become byte offsets (the
//! `byte_offsets` helpers), and loads and stores of it move its members one by one, as above.
//!
//! Preconditions: `lower-kernel-pointers` ran (buffer types are laid out, accesses carry
//! `Aligned`), and `narrow-kernel-int64` where it applies (it lays buffers out again). An atomic has no alignment operand and is left alone. Applies to every target;
//! `lower-byte-pointers` then lowers the 8- and 16-bit pieces where the target lacks them.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use crate::kernel::size_align;
use crate::pass::{Context, Outcome, Pass};
use crate::passes::repair_producer_output::largest_scalar;
use crate::profile::DeviceCaps;
use rspirv::grammar::OperandKind;
use spirv::{MemoryAccess, Op, StorageClass, Word};

pub struct SplitUnderalignedAccesses;

impl Pass for SplitUnderalignedAccesses {
    fn name(&self) -> &'static str {
        "split-underaligned-accesses"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !crate::kernel::is_lowered_kernel(module) {
            return Ok(outcome);
        }
        // Packed structs without a Vulkan layout: chains into them first.
        let types = Types::new(module);
        let psb = StorageClass::PhysicalStorageBuffer as u32;
        let packed_pointers: Vec<(Word, Word)> = module
            .globals()
            .iter()
            .filter(|g| g.is(Op::TypePointer) && g.word_opt(0) == Some(psb))
            .filter_map(|g| Some((g.result_id?, g.id(1).ok()?)))
            .filter(|(_, pointee)| without_layout(&types, *pointee, 0))
            .collect();
        if !packed_pointers.is_empty() {
            let into_packed = |types: &Types, inst: &Inst| inst.id(0).ok().and_then(|b| types.type_of(b)).is_some_and(|t| packed_pointers.iter().any(|(p, _)| *p == t));
            let n = crate::passes::byte_offsets::chains_through_byte_offsets(module, into_packed)?;
            outcome.changed |= n > 0;
        }
        let types = Types::new(module);
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                let mut i = 0;
                while i < module.functions[f].blocks[b].insts.len() {
                    let inst = module.functions[f].blocks[b].insts[i].clone();
                    let Some(access) = underaligned(&types, &inst) else {
                        i += 1;
                        continue;
                    };
                    module.functions[f].blocks[b].insts.remove(i);
                    let mut bl = Builder::new(module, Cursor { function: f, block: b, index: i }).with_origin(inst.origin);
                    let mut split = Split { types: &types, flags: access.flags };
                    let done = match access.value {
                        None => split.load(&mut bl, access.pointer, access.ty, access.align).map(|v| bl.insert(Inst::new(Op::CopyObject, Some(access.ty), inst.result_id, vec![Operand::Id(v)]))),
                        Some(value) => split.store(&mut bl, access.pointer, access.ty, access.align, value),
                    };
                    i = bl.cursor.index;
                    if done.is_none() {
                        return Err(Error::Invalid {
                            site: module.site(&inst),
                            message: format!("a buffer access with `Aligned {}` of a value that cannot be split into aligned pieces (Vulkan needs each scalar aligned to its size)", access.align),
                        });
                    }
                    outcome.count(inst.opcode);
                }
            }
        }
        // The pointers to packed structs now point to their first bytes.
        if !packed_pointers.is_empty() {
            let uchar = module.type_int(8, false);
            for (ptr, _) in packed_pointers {
                if let Some(g) = module.globals_mut().iter_mut().find(|g| g.result_id == Some(ptr)) {
                    g.operands[1] = Operand::Id(uchar);
                }
                module.annotations.retain(|a| !(a.is(Op::Decorate) && a.word_opt(0) == Some(ptr) && a.word_opt(1) == Some(spirv::Decoration::ArrayStride as u32)));
                module.decorate(ptr, spirv::Decoration::ArrayStride, &[1]);
            }
            // The byte type may come after the pointers now to it; the pointers are byte
            // pointers like those of the byte offsets, and merge with them.
            module.reorder_globals();
            module.merge_duplicate_types();
            outcome.changed = true;
        }
        Ok(outcome)
    }
}

/// Whether `ty` (a struct or array reachable through a buffer pointer) has no Vulkan layout: a
/// packed struct with a member off its scalars' alignment or a size that is not a multiple of
/// it, or an aggregate holding one.
pub(crate) fn without_layout(types: &Types, ty: Word, depth: u32) -> bool {
    let Some(def) = types.defs.get(&ty).filter(|_| depth < 64) else { return false };
    let scalar = |t: Word| largest_scalar(types, t, 0).max(1);
    match def.op() {
        Some(Op::TypeStruct) => {
            let members: Vec<Word> = def.operands.iter().filter_map(Operand::id).collect();
            let offsets = crate::kernel::member_offsets(types, ty).unwrap_or_default();
            let size = size_align(types, ty).map_or(0, |s| s.0);
            members.iter().zip(&offsets).any(|(m, o)| !o.is_multiple_of(scalar(*m)) || without_layout(types, *m, depth + 1)) || !size.is_multiple_of(scalar(ty))
        }
        Some(Op::TypeArray | Op::TypeRuntimeArray) => def.id(0).is_ok_and(|e| without_layout(types, e, depth + 1)),
        _ => false,
    }
}

/// A load (`value` is `None`) or store through a buffer pointer, aligned below its scalars.
struct Access {
    pointer: Word,
    ty: Word,
    value: Option<Word>,
    align: u32,
    /// The memory-access flags the pieces keep.
    flags: u32,
}

fn underaligned(types: &Types, inst: &Inst) -> Option<Access> {
    let (mem_at, value) = match inst.op()? {
        Op::Load => (1, None),
        Op::Store => (2, Some(inst.id(1).ok()?)),
        _ => return None,
    };
    let pointer = inst.id(0).ok()?;
    let (class, pointee) = types.type_of(pointer).and_then(|t| types.pointer(t))?;
    if class != StorageClass::PhysicalStorageBuffer as u32 {
        return None;
    }
    let mask = inst.operands.get(mem_at).and_then(Operand::word)?;
    if mask & MemoryAccess::ALIGNED.bits() == 0 {
        return None;
    }
    let align = inst.operands.get(mem_at + 1).and_then(Operand::word)?;
    let ty = match value {
        Some(v) => types.type_of(v)?,
        None => inst.result_type?,
    };
    (ty == pointee && (align < largest_scalar(types, ty, 0) || without_layout(types, ty, 0))).then_some(Access {
        pointer,
        ty,
        value,
        align,
        flags: mask & (MemoryAccess::VOLATILE.bits() | MemoryAccess::NONTEMPORAL.bits()),
    })
}

/// The largest power of two dividing both `align` and `offset` (`align` where `offset` is 0).
fn kept_alignment(align: u32, offset: u32) -> u32 {
    if offset == 0 {
        align
    } else {
        align.min(1 << offset.trailing_zeros())
    }
}

struct Split<'t> {
    types: &'t Types,
    flags: u32,
}

impl Split<'_> {
    fn memory_operands(&self, align: u32) -> Vec<Operand> {
        vec![Operand::Enum(OperandKind::MemoryAccess, self.flags | MemoryAccess::ALIGNED.bits()), Operand::Literal(align)]
    }

    /// The parts of `ty` and their byte offsets: members, elements or components; `None` for
    /// a scalar or pointer.
    fn parts(&self, ty: Word) -> Option<Option<Vec<(Word, u32)>>> {
        let def = self.types.defs.get(&ty)?;
        Some(match def.op()? {
            Op::TypeInt | Op::TypeFloat | Op::TypePointer => None,
            Op::TypeVector => {
                let (c, n) = self.types.vector(ty)?;
                let (s, _) = size_align(self.types, c)?;
                Some((0..n).map(|k| (c, k * s)).collect())
            }
            Op::TypeArray => {
                let e = def.id(0).ok()?;
                let n = self.types.const_u32(def.id(1).ok()?)?;
                let stride = size_align(self.types, e)?.0;
                Some((0..n).map(|k| (e, k * stride)).collect())
            }
            Op::TypeStruct => {
                let members: Vec<Word> = def.operands.iter().filter_map(Operand::id).collect();
                Some(members.into_iter().zip(crate::kernel::member_offsets(self.types, ty)?).collect())
            }
            _ => return None,
        })
    }

    /// A pointer to part `k` of `ty` (of type `part`, at byte `offset`) at `pointer`: an access
    /// chain, or the byte offset where `ty` has no Vulkan layout.
    fn part_pointer(&self, bl: &mut Builder<'_>, pointer: Word, ty: Word, part: Word, k: u32, offset: u32) -> Word {
        let ptr_ty = bl.module.type_pointer(StorageClass::PhysicalStorageBuffer, part);
        if without_layout(self.types, ty, 0) {
            let uchar = bl.module.type_int(8, false);
            let byte_ptr = crate::passes::byte_offsets::strided_pointer(bl.module, uchar, 1);
            let bytes = bl.bitcast(byte_ptr, pointer);
            let at = bl.module.constant_u32(offset);
            let stepped = bl.emit(Op::PtrAccessChain, byte_ptr, vec![Operand::Id(bytes), Operand::Id(at)]);
            return if ptr_ty == byte_ptr { stepped } else { bl.bitcast(ptr_ty, stepped) };
        }
        let index = bl.module.constant_u32(k);
        bl.access_chain(ptr_ty, pointer, &[index])
    }

    /// Pointers to pieces of `bytes` (unsigned integers) at the address of `pointer`: the
    /// piece type and a function giving the pointer to piece `k`.
    fn piece_pointers(&self, bl: &mut Builder<'_>, pointer: Word, bytes: u32) -> (Word, impl Fn(&mut Builder<'_>, u32) -> Word) {
        let piece = bl.module.type_int(bytes * 8, false);
        let ptr_ty = crate::passes::byte_offsets::strided_pointer(bl.module, piece, bytes);
        let base = bl.bitcast(ptr_ty, pointer);
        let at = move |bl: &mut Builder<'_>, k: u32| {
            if k == 0 {
                return base;
            }
            let index = bl.module.constant_u32(k);
            bl.emit(Op::PtrAccessChain, ptr_ty, vec![Operand::Id(base), Operand::Id(index)])
        };
        (piece, at)
    }

    fn load(&mut self, bl: &mut Builder<'_>, pointer: Word, ty: Word, align: u32) -> Option<Word> {
        let size = size_align(self.types, ty)?.0;
        match self.parts(ty)? {
            None if align >= size => {
                let mut ops = vec![Operand::Id(pointer)];
                ops.extend(self.memory_operands(size));
                Some(bl.emit(Op::Load, ty, ops))
            }
            None => self.load_pieces(bl, pointer, ty, size, align.max(1)),
            Some(parts) => {
                let values = parts
                    .iter()
                    .enumerate()
                    .map(|(k, (part, offset))| {
                        let p = self.part_pointer(bl, pointer, ty, *part, k as u32, *offset);
                        self.load(bl, p, *part, kept_alignment(align, *offset))
                    })
                    .collect::<Option<Vec<_>>>()?;
                Some(bl.op(Op::CompositeConstruct, ty, &values))
            }
        }
    }

    fn store(&mut self, bl: &mut Builder<'_>, pointer: Word, ty: Word, align: u32, value: Word) -> Option<()> {
        let size = size_align(self.types, ty)?.0;
        match self.parts(ty)? {
            None if align >= size => {
                let mut ops = vec![Operand::Id(pointer), Operand::Id(value)];
                ops.extend(self.memory_operands(size));
                bl.emit_void(Op::Store, ops);
                Some(())
            }
            None => self.store_pieces(bl, pointer, ty, size, align.max(1), value),
            Some(parts) => {
                for (k, (part, offset)) in parts.iter().enumerate() {
                    let v = bl.composite_extract(*part, value, k as u32);
                    let p = self.part_pointer(bl, pointer, ty, *part, k as u32, *offset);
                    self.store(bl, p, *part, kept_alignment(align, *offset), v)?;
                }
                Some(())
            }
        }
    }

    /// Loads a scalar or pointer of `size` bytes (2, 4 or 8) as pieces of `align` bytes.
    fn load_pieces(&mut self, bl: &mut Builder<'_>, pointer: Word, ty: Word, size: u32, align: u32) -> Option<Word> {
        if !matches!(size, 2 | 4 | 8) || !align.is_power_of_two() {
            return None;
        }
        let piece_bytes = align.min(4);
        let (piece, at) = self.piece_pointers(bl, pointer, piece_bytes);
        let uint = bl.module.type_int(32, false);
        let pieces: Vec<Word> = (0..size / piece_bytes)
            .map(|k| {
                let p = at(bl, k);
                let mut ops = vec![Operand::Id(p)];
                ops.extend(self.memory_operands(piece_bytes));
                bl.emit(Op::Load, piece, ops)
            })
            .collect();
        // Pieces -> 32-bit words (the low bytes first).
        let per_word = (4 / piece_bytes).min(pieces.len() as u32) as usize;
        let words: Vec<Word> = pieces
            .chunks(per_word)
            .map(|chunk| {
                if piece_bytes == 4 {
                    return chunk[0];
                }
                let mut word = bl.op(Op::UConvert, uint, &[chunk[0]]);
                for (k, p) in chunk.iter().enumerate().skip(1) {
                    let wide = bl.op(Op::UConvert, uint, &[*p]);
                    let shift = bl.module.constant_u32(k as u32 * piece_bytes * 8);
                    let moved = bl.op(Op::ShiftLeftLogical, uint, &[wide, shift]);
                    word = bl.op(Op::BitwiseOr, uint, &[word, moved]);
                }
                word
            })
            .collect();
        let (bits, bits_ty) = match words.as_slice() {
            [word] if size == 2 => {
                let ushort = bl.module.type_int(16, false);
                (bl.op(Op::UConvert, ushort, &[*word]), ushort)
            }
            [word] => (*word, uint),
            [low, high] => {
                let uvec2 = bl.module.type_vector(uint, 2);
                (bl.op(Op::CompositeConstruct, uvec2, &[*low, *high]), uvec2)
            }
            _ => return None,
        };
        Some(if bits_ty == ty { bits } else { bl.bitcast(ty, bits) })
    }

    /// Stores a scalar or pointer of `size` bytes (2, 4 or 8) as pieces of `align` bytes.
    fn store_pieces(&mut self, bl: &mut Builder<'_>, pointer: Word, ty: Word, size: u32, align: u32, value: Word) -> Option<()> {
        if !matches!(size, 2 | 4 | 8) || !align.is_power_of_two() {
            return None;
        }
        let piece_bytes = align.min(4);
        let uint = bl.module.type_int(32, false);
        let words: Vec<Word> = match size {
            8 => {
                let uvec2 = bl.module.type_vector(uint, 2);
                let both = bl.bitcast(uvec2, value);
                (0..2).map(|k| bl.composite_extract(uint, both, k)).collect()
            }
            4 if self.is_uint(bl, ty, 4) => vec![value],
            4 => vec![bl.bitcast(uint, value)],
            _ => {
                let ushort = bl.module.type_int(16, false);
                let bits = if self.is_uint(bl, ty, 2) { value } else { bl.bitcast(ushort, value) };
                vec![bl.op(Op::UConvert, uint, &[bits])]
            }
        };
        let (piece, at) = self.piece_pointers(bl, pointer, piece_bytes);
        let per_word = (size.min(4) / piece_bytes).max(1);
        for (w, word) in words.iter().enumerate() {
            for k in 0..per_word {
                let index = w as u32 * per_word + k;
                let part = if piece_bytes == 4 {
                    *word
                } else {
                    let shift = bl.module.constant_u32(k * piece_bytes * 8);
                    let moved = bl.op(Op::ShiftRightLogical, uint, &[*word, shift]);
                    bl.op(Op::UConvert, piece, &[moved])
                };
                let p = at(bl, index);
                let mut ops = vec![Operand::Id(p), Operand::Id(part)];
                ops.extend(self.memory_operands(piece_bytes));
                bl.emit_void(Op::Store, ops);
            }
        }
        Some(())
    }

    /// Whether `ty` is the unsigned integer of `bytes`.
    fn is_uint(&self, bl: &mut Builder<'_>, ty: Word, bytes: u32) -> bool {
        bl.module.type_int(bytes * 8, false) == ty
    }
}
