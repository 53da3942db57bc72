//! `LowerCheckedMatrixAccess`: SPV_INTEL_joint_matrix's bounds-checked instructions (DPC++'s
//! `joint_matrix_load_checked`, `joint_matrix_store_checked` and `joint_matrix_fill_checked`,
//! for matrices whose edges run past a larger one), which no Vulkan device has, become KHR
//! cooperative-matrix code.
//!
//! The region is a Height x Width array of the matrix's component at the Pointer, `Stride`
//! components from one of its rows to the next; a load or store reaches the part of it that
//! starts at row X Offset and column Y Offset, as a KHR load or store of the same layout and
//! stride would from there. The rows and columns are those of memory, as DPC++ gives them: a
//! column-major matrix's columns are memory rows, a packed (VNNI) B matrix of K x N elements
//! spans `K / v` rows of `N * v` (`v = 4 / component bytes`). A construct's region is the
//! matrix's own rows and columns.
//!
//! Rewrite, for each instruction, with X, Y, Height and Width read unsigned:
//! - where the whole matrix lies inside the region (a uniform test: the operands are the same on
//!   every lane), the plain KHR instruction: a load or store at the pointer stepped by
//!   `X * Stride + Y` components (`OpInBoundsPtrAccessChain`), a construct of Value;
//! - elsewhere, element by element through a `Function` variable holding the matrix: each lane
//!   asks the row and column of each of its elements (`OpCooperativeMatrixGetElementCoordINTEL`,
//!   which `lower-matrix-element-coords` answers), and loads the component from memory where it
//!   is inside the region (0 elsewhere), stores it there only where it is inside, or takes
//!   Value or 0. An element outside the matrix (one that `pad-cooperative-matrix` adds, whose
//!   coordinates `lower-matrix-element-coords` answers as the matrix's rows and columns) is
//!   neither read nor written.
//!
//! A pointer to another type than the component (llvm-spirv's untyped `i8` pointers) is cast
//! to the component's. Memory operands stay on the KHR instructions (with `Aligned` to the
//! component's size where they have none, as llvm-spirv's loads do); the element accesses keep
//! their `Volatile` and `Nontemporal` bits and are aligned to the component.
//!
//! Preconditions: Kernel-form pointers (the pass runs before `lower-kernel-pointers`); matrices
//! of constant rows and columns. Refused by name: a result or object that is not a cooperative
//! matrix, a layout that is not the constant RowMajor, ColumnMajor or Packed, a packed matrix
//! whose rows `v` does not divide, an access without its Stride, and integer operands that are
//! not integers. The `CooperativeMatrixCheckedInstructionsINTEL` capability goes.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::grammar::intel_cooperative_matrix as icm;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::lower_joint_matrix::drop_capability;
use crate::passes::tile_cooperative_matrix::{matrix, Matrix};
use crate::profile::DeviceCaps;
use rspirv::grammar::OperandKind;
use spirv::{CooperativeMatrixLayout, MemoryAccess, Op, StorageClass, Word};

pub struct LowerCheckedMatrixAccess;

fn is_checked(inst: &Inst) -> bool {
    [icm::LOAD_CHECKED, icm::STORE_CHECKED, icm::CONSTRUCT_CHECKED].contains(&inst.opcode)
}

impl Pass for LowerCheckedMatrixAccess {
    fn name(&self) -> &'static str {
        "lower-checked-matrix-access"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if drop_capability(module, icm::CAPABILITY_CHECKED) {
            outcome.count(Op::Capability as u32);
        }
        if !module.functions.iter().flat_map(|f| f.insts()).any(is_checked) {
            return Ok(outcome);
        }
        let types = Types::new(module);
        for opcode in module.rewrite_matching(&mut Lowering { types: &types }, |_, i| is_checked(i), |l, b, inst| l.rewrite(b, inst))? {
            outcome.count(opcode);
        }
        Ok(outcome)
    }
}

/// A checked access's matrix and where it goes in memory.
struct Access {
    ty: Word,
    m: Matrix,
    /// The memory rows and columns the matrix spans (its layout's).
    span: (u32, u32),
    layout: u32,
    bits: u32,
}

struct Lowering<'a> {
    types: &'a Types,
}

impl Lowering<'_> {
    fn invalid(b: &Builder<'_>, inst: &Inst, message: String) -> Error {
        Error::Invalid { site: b.module.site(inst), message }
    }

    fn rewrite(&self, b: &mut Builder<'_>, inst: &Inst) -> Result<()> {
        match inst.opcode {
            icm::LOAD_CHECKED => self.load(b, inst),
            icm::STORE_CHECKED => self.store(b, inst),
            _ => self.construct(b, inst),
        }
    }

    fn access(&self, b: &Builder<'_>, inst: &Inst, ty: Word, layout: Option<Word>) -> Result<Access> {
        let m = matrix(self.types, ty).ok_or_else(|| Self::invalid(b, inst, format!("%{ty} is not a cooperative matrix of constant rows and columns")))?;
        let bits = self.types.scalar_width(m.component).unwrap_or(32);
        let Some(layout) = layout else {
            return Ok(Access { ty, m, span: (m.rows, m.cols), layout: CooperativeMatrixLayout::RowMajorKHR as u32, bits });
        };
        let value = self.types.const_u32(layout).ok_or_else(|| Self::invalid(b, inst, format!("a Memory Layout (%{layout}) that is not a 32-bit integer constant")))?;
        let span = match value {
            v if v == CooperativeMatrixLayout::RowMajorKHR as u32 => (m.rows, m.cols),
            v if v == CooperativeMatrixLayout::ColumnMajorKHR as u32 => (m.cols, m.rows),
            icm::LAYOUT_PACKED => {
                let v = (32 / bits).max(1);
                if !m.rows.is_multiple_of(v) {
                    return Err(Self::invalid(b, inst, format!("a packed {}x{} matrix of {bits}-bit components ({v} rows share a word: they must divide its rows)", m.rows, m.cols)));
                }
                (m.rows / v, m.cols * v)
            }
            v => return Err(Self::invalid(b, inst, format!("Memory Layout {v} (RowMajor 0, ColumnMajor 1 and Packed 2 are defined)"))),
        };
        Ok(Access { ty, m, span, layout: value, bits })
    }

    /// The integer operand `k` (its type's width must be 32 or 64 bits).
    fn int(&self, b: &Builder<'_>, inst: &Inst, k: usize, what: &str) -> Result<(Word, u32)> {
        let v = inst.id(k).map_err(|_| Self::invalid(b, inst, format!("lacks its {what}")))?;
        match self.types.type_of(v).and_then(|t| self.types.int(t)) {
            Some((w @ (32 | 64), _)) => Ok((v, w)),
            _ => Err(Self::invalid(b, inst, format!("a {what} (%{v}) that is not a 32- or 64-bit integer"))),
        }
    }

    /// `v` (of `from` bits) as an unsigned integer of `to` bits.
    fn widen(b: &mut Builder<'_>, v: Word, from: u32, to: u32) -> Word {
        let ty = b.module.type_int(to, false);
        match from == to {
            true => b.bitcast(ty, v),
            false => b.op(Op::UConvert, ty, &[v]),
        }
    }

    /// The region's operands, unsigned at one width (64 bits where any of them has 64):
    /// X, Y, Height, Width and the Stride where given.
    fn region(&self, b: &mut Builder<'_>, inst: &Inst, ks: [usize; 4], stride: Option<usize>) -> Result<(u32, [Word; 4], Option<Word>)> {
        let names = ["X Offset", "Y Offset", "Height", "Width"];
        let mut parts = Vec::new();
        for (k, what) in ks.into_iter().zip(names) {
            parts.push(self.int(b, inst, k, what)?);
        }
        let stride = match stride {
            Some(k) => Some(self.int(b, inst, k, "Stride")?),
            None => None,
        };
        let wide = parts.iter().chain(stride.iter()).map(|(_, w)| *w).max().unwrap_or(32);
        let values = parts.into_iter().map(|(v, w)| Self::widen(b, v, w, wide)).collect::<Vec<_>>();
        let stride = stride.map(|(v, w)| Self::widen(b, v, w, wide));
        Ok((wide, [values[0], values[1], values[2], values[3]], stride))
    }

    /// Whether rows `x .. x + rows` and columns `y .. y + cols` lie inside `height` x `width`.
    fn inside(b: &mut Builder<'_>, wide: u32, [x, y, height, width]: [Word; 4], (rows, cols): (u32, u32)) -> Word {
        let (ty, boolean) = (b.module.type_int(wide, false), b.module.type_bool());
        let fits = |b: &mut Builder<'_>, at: Word, n: u32, limit: Word| {
            let n = b.module.constant_int(ty, wide, false, u64::from(n));
            let room = b.op(Op::ULessThanEqual, boolean, &[n, limit]);
            let rest = b.op(Op::ISub, ty, &[limit, n]);
            let starts = b.op(Op::ULessThanEqual, boolean, &[at, rest]);
            b.op(Op::LogicalAnd, boolean, &[room, starts])
        };
        let down = fits(b, x, rows, height);
        let across = fits(b, y, cols, width);
        b.op(Op::LogicalAnd, boolean, &[down, across])
    }

    /// The pointer, cast to point at the component where it points at another type, and its
    /// type.
    fn component_pointer(&self, b: &mut Builder<'_>, inst: &Inst, ptr: Word, component: Word) -> Result<(Word, Word)> {
        let ptr_ty = self.types.type_of(ptr).unwrap_or_default();
        let (class, pointee) = self.types.pointer(ptr_ty).ok_or_else(|| Self::invalid(b, inst, format!("the Pointer %{ptr} is not a pointer")))?;
        if pointee == component {
            return Ok((ptr, ptr_ty));
        }
        let class = StorageClass::from_u32(class).unwrap_or(StorageClass::Generic);
        let p = b.module.type_pointer(class, component);
        Ok((b.bitcast(p, ptr), p))
    }

    /// Memory operands of the KHR access (`Aligned` added where absent) and of an element's.
    fn memory(&self, inst: &Inst, at: usize, component: Word) -> (Vec<Operand>, Vec<Operand>) {
        let bytes = self.types.scalar_width(component).unwrap_or(8).div_ceil(8);
        let mask = inst.word_opt(at).unwrap_or(0);
        let mut rest: Vec<Operand> = inst.operands.get(at + 1..).map(<[Operand]>::to_vec).unwrap_or_default();
        let mut whole = mask;
        if mask & MemoryAccess::ALIGNED.bits() == 0 {
            whole |= MemoryAccess::ALIGNED.bits();
            rest.insert(0, Operand::Literal(bytes));
        }
        let mut khr = vec![Operand::Enum(OperandKind::MemoryAccess, whole)];
        khr.extend(rest);
        let kept = mask & (MemoryAccess::VOLATILE | MemoryAccess::NONTEMPORAL).bits();
        let element = vec![Operand::Enum(OperandKind::MemoryAccess, kept | MemoryAccess::ALIGNED.bits()), Operand::Literal(bytes)];
        (khr, element)
    }

    /// `ptr` (of type `ptr_ty`) stepped by `row * stride + col` components.
    fn step(b: &mut Builder<'_>, wide: u32, (ptr, ptr_ty): (Word, Word), stride: Word, row: Word, col: Word) -> Word {
        let ty = b.module.type_int(wide, false);
        let line = b.imul(ty, row, stride);
        let offset = b.iadd(ty, line, col);
        b.op(Op::InBoundsPtrAccessChain, ptr_ty, &[ptr, offset])
    }

    /// Runs `body(b, index, memory row, memory column, within)` for each of the lane's elements
    /// of a matrix of `a`, the row and column counted from the matrix's start in memory;
    /// `within` is false for an element outside the matrix (one that padding added).
    fn each_element(b: &mut Builder<'_>, a: &Access, wide: u32, mut body: impl FnMut(&mut Builder<'_>, Word, Word, Word, Word)) {
        let uint = b.module.type_int(32, false);
        let pair = b.module.type_vector(uint, 2);
        let zero = b.module.constant_null(a.m.component);
        let probe = b.emit(Op::CompositeConstruct, a.ty, vec![Operand::Id(zero)]);
        let len = b.op(Op::CooperativeMatrixLengthKHR, uint, &[a.ty]);
        let first = b.module.constant_u32(0);
        let bits = a.bits;
        b.counted_loop(first, len, |b, i| {
            let rc = b.module.alloc_id();
            b.insert(Inst { opcode: icm::GET_ELEMENT_COORD, result_type: Some(pair), result_id: Some(rc), operands: vec![Operand::Id(probe), Operand::Id(i)], origin: None });
            let (r, c) = (b.composite_extract(uint, rc, 0), b.composite_extract(uint, rc, 1));
            let boolean = b.module.type_bool();
            let (rows, cols) = (b.module.constant_u32(a.m.rows), b.module.constant_u32(a.m.cols));
            let (down, across) = (b.op(Op::ULessThan, boolean, &[r, rows]), b.op(Op::ULessThan, boolean, &[c, cols]));
            let within = b.op(Op::LogicalAnd, boolean, &[down, across]);
            let (row, col) = match a.layout {
                l if l == CooperativeMatrixLayout::ColumnMajorKHR as u32 => (c, r),
                icm::LAYOUT_PACKED => {
                    let v = b.module.constant_u32((32 / bits).max(1));
                    let group = b.op(Op::UDiv, uint, &[r, v]);
                    let across = b.imul(uint, c, v);
                    let within = b.op(Op::UMod, uint, &[r, v]);
                    (group, b.iadd(uint, across, within))
                }
                _ => (r, c),
            };
            let (row, col) = (Self::widen(b, row, 32, wide), Self::widen(b, col, 32, wide));
            body(b, i, row, col, within);
        });
    }

    /// Whether memory element (`x + row`, `y + col`) of a matrix element `within` the matrix
    /// lies inside the region; its position.
    fn element_inside(b: &mut Builder<'_>, wide: u32, [x, y, height, width]: [Word; 4], row: Word, col: Word, within: Word) -> (Word, Word, Word) {
        let (ty, boolean) = (b.module.type_int(wide, false), b.module.type_bool());
        let (gr, gc) = (b.iadd(ty, x, row), b.iadd(ty, y, col));
        // Wrapped sums (offsets near the top of the range) are outside too.
        let down = b.op(Op::ULessThan, boolean, &[gr, height]);
        let no_wrap_r = b.op(Op::UGreaterThanEqual, boolean, &[gr, x]);
        let across = b.op(Op::ULessThan, boolean, &[gc, width]);
        let no_wrap_c = b.op(Op::UGreaterThanEqual, boolean, &[gc, y]);
        let rows = b.op(Op::LogicalAnd, boolean, &[down, no_wrap_r]);
        let cols = b.op(Op::LogicalAnd, boolean, &[across, no_wrap_c]);
        let inside = b.op(Op::LogicalAnd, boolean, &[rows, cols]);
        (b.op(Op::LogicalAnd, boolean, &[inside, within]), gr, gc)
    }

    fn load(&self, b: &mut Builder<'_>, inst: &Inst) -> Result<()> {
        let ty = inst.ty()?;
        let a = self.access(b, inst, ty, inst.id(3).ok())?;
        if inst.operands.get(6).and_then(Operand::id).is_none() {
            return Err(Self::invalid(b, inst, "a checked load without its Stride (the region's rows have no length)".into()));
        }
        let (wide, region, stride) = self.region(b, inst, [1, 2, 4, 5], Some(6))?;
        let stride = stride.unwrap_or_default();
        let ptr = self.component_pointer(b, inst, inst.id(0)?, a.m.component)?;
        let (khr_memory, element_memory) = self.memory(inst, 7, a.m.component);
        let original_stride = inst.id(6)?;
        let layout = inst.id(3)?;
        let result = b.function_variable(ty);
        let whole = Self::inside(b, wide, region, a.span);
        b.if_then_else(
            whole,
            |b| {
                let at = Self::step(b, wide, ptr, stride, region[0], region[1]);
                let mut operands = vec![Operand::Id(at), Operand::Id(layout), Operand::Id(original_stride)];
                operands.extend(khr_memory.iter().cloned());
                let m = b.emit(Op::CooperativeMatrixLoadKHR, ty, operands);
                b.store(result, m);
            },
            |b| {
                let zero = b.module.constant_null(a.m.component);
                let zeros = b.emit(Op::CompositeConstruct, ty, vec![Operand::Id(zero)]);
                b.store(result, zeros);
                let element_ptr = b.module.type_pointer(StorageClass::Function, a.m.component);
                Self::each_element(b, &a, wide, |b, i, row, col, within| {
                    let (inside, gr, gc) = Self::element_inside(b, wide, region, row, col, within);
                    b.if_then(inside, |b| {
                        let from = Self::step(b, wide, ptr, stride, gr, gc);
                        let mut operands = vec![Operand::Id(from)];
                        operands.extend(element_memory.iter().cloned());
                        let v = b.emit(Op::Load, a.m.component, operands);
                        let to = b.access_chain(element_ptr, result, &[i]);
                        b.store(to, v);
                    });
                });
            },
        );
        b.insert(Inst::new(Op::Load, Some(ty), Some(inst.result()?), vec![Operand::Id(result)]));
        Ok(())
    }

    fn store(&self, b: &mut Builder<'_>, inst: &Inst) -> Result<()> {
        let object = inst.id(3)?;
        let ty = self.types.type_of(object).ok_or_else(|| Self::invalid(b, inst, format!("%{object} has no type")))?;
        let a = self.access(b, inst, ty, inst.id(4).ok())?;
        if inst.operands.get(7).and_then(Operand::id).is_none() {
            return Err(Self::invalid(b, inst, "a checked store without its Stride (the region's rows have no length)".into()));
        }
        let (wide, region, stride) = self.region(b, inst, [1, 2, 5, 6], Some(7))?;
        let stride = stride.unwrap_or_default();
        let ptr = self.component_pointer(b, inst, inst.id(0)?, a.m.component)?;
        let (khr_memory, element_memory) = self.memory(inst, 8, a.m.component);
        let (original_stride, layout) = (inst.id(7)?, inst.id(4)?);
        let whole = Self::inside(b, wide, region, a.span);
        b.if_then_else(
            whole,
            |b| {
                let at = Self::step(b, wide, ptr, stride, region[0], region[1]);
                let mut operands = vec![Operand::Id(at), Operand::Id(object), Operand::Id(layout), Operand::Id(original_stride)];
                operands.extend(khr_memory.iter().cloned());
                b.emit_void(Op::CooperativeMatrixStoreKHR, operands);
            },
            |b| {
                let held = b.function_variable(ty);
                b.store(held, object);
                let element_ptr = b.module.type_pointer(StorageClass::Function, a.m.component);
                Self::each_element(b, &a, wide, |b, i, row, col, within| {
                    let (inside, gr, gc) = Self::element_inside(b, wide, region, row, col, within);
                    b.if_then(inside, |b| {
                        let from = b.access_chain(element_ptr, held, &[i]);
                        let v = b.load(a.m.component, from);
                        let to = Self::step(b, wide, ptr, stride, gr, gc);
                        let mut operands = vec![Operand::Id(to), Operand::Id(v)];
                        operands.extend(element_memory.iter().cloned());
                        b.emit_void(Op::Store, operands);
                    });
                });
            },
        );
        Ok(())
    }

    fn construct(&self, b: &mut Builder<'_>, inst: &Inst) -> Result<()> {
        let ty = inst.ty()?;
        let a = self.access(b, inst, ty, None)?;
        let (wide, region, _) = self.region(b, inst, [0, 1, 2, 3], None)?;
        let value = inst.id(4).map_err(|_| Self::invalid(b, inst, "lacks its Value".into()))?;
        if self.types.type_of(value) != Some(a.m.component) {
            return Err(Self::invalid(b, inst, format!("a Value (%{value}) whose type is not the matrix's component type")));
        }
        let result = b.function_variable(ty);
        let filled = b.emit(Op::CompositeConstruct, ty, vec![Operand::Id(value)]);
        b.store(result, filled);
        let whole = Self::inside(b, wide, region, a.span);
        let boolean = b.module.type_bool();
        let partly = b.op(Op::LogicalNot, boolean, &[whole]);
        b.if_then(partly, |b| {
            let element_ptr = b.module.type_pointer(StorageClass::Function, a.m.component);
            let zero = b.module.constant_null(a.m.component);
            Self::each_element(b, &a, wide, |b, i, row, col, within| {
                let (inside, _, _) = Self::element_inside(b, wide, region, row, col, within);
                let v = b.select(a.m.component, inside, value, zero);
                let to = b.access_chain(element_ptr, result, &[i]);
                b.store(to, v);
            });
        });
        b.insert(Inst::new(Op::Load, Some(ty), Some(inst.result()?), vec![Operand::Id(result)]));
        Ok(())
    }
}
