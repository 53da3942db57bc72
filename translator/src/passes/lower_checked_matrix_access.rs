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
//! - elsewhere, through the sub-group's area of workgroup memory (one per component type, of
//!   the largest checked matrix of it, `SubgroupScratch`), which holds the matrix row-major:
//!   for a load the sub-group's lanes copy the matrix's elements from memory into it (each at
//!   the memory row and column its layout gives; 0 outside the region), and after a sub-group
//!   barrier the matrix is loaded from it; a store stores the matrix there and the lanes copy
//!   the elements inside the region out; a construct's lanes write Value inside the region and
//!   0 outside, and the matrix is loaded. A barrier follows, so that the next access may reuse
//!   the area. The lanes take consecutive elements, so that a row's reach memory together;
//! - where there can be no such area (a module of several kernels, no room in workgroup
//!   memory, or sub-groups that `virtualize-subgroup-size` joins or splits: the barriers would
//!   be work-group ones, or a split device sub-group's halves would diverge at them), element
//!   by element through a `Function` variable holding the matrix: each lane asks the row and
//!   column of each of its elements (`OpCooperativeMatrixGetElementCoordINTEL`, which
//!   `lower-matrix-element-coords` answers), and loads the component from memory where it is
//!   inside the region (0 elsewhere), stores it there only where it is inside, or takes Value
//!   or 0. An element outside the matrix (one that `pad-cooperative-matrix` adds, whose
//!   coordinates `lower-matrix-element-coords` answers as the matrix's rows and columns) is
//!   neither read nor written. The report says why a module's accesses go this way.
//!
//! A pointer to another type than the component (llvm-spirv's untyped `i8` pointers) is cast
//! to the component's. Memory operands stay on the KHR instructions (with `Aligned` to the
//! component's size where they have none, as llvm-spirv's loads do); the element accesses keep
//! their `Volatile` and `Nontemporal` bits and are aligned to the component.
//!
//! Preconditions: Kernel-form pointers (the pass runs before `lower-kernel-pointers`), after
//! `lower-kernel-interface` (which gives a kernel without `reqd_work_group_size` the
//! `WorkgroupSize` that sizes the areas, and records its required sub-group size); matrices of
//! constant rows and columns. Refused by name: a result or object that is not a cooperative
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
use crate::passes::subgroup_scratch::{AreasByType, SubgroupScratch};
use crate::passes::tile_cooperative_matrix::{matrix, Matrix};
use crate::profile::DeviceCaps;
use rspirv::grammar::OperandKind;
use spirv::{CooperativeMatrixLayout, MemoryAccess, Op, StorageClass, Word};
use std::collections::BTreeMap;

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

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if drop_capability(module, icm::CAPABILITY_CHECKED) {
            outcome.count(Op::Capability as u32);
        }
        if !module.functions.iter().flat_map(|f| f.insts()).any(is_checked) {
            return Ok(outcome);
        }
        let types = Types::new(module);
        let staging = match staging(module, &types, cx.target) {
            Ok(s) => Some(s),
            Err(why) => {
                outcome.notes.push(format!("accesses at the region's edge go element by element: staging them {why}"));
                None
            }
        };
        for opcode in module.rewrite_matching(&mut Lowering { types: &types, staging }, |_, i| is_checked(i), |l, b, inst| l.rewrite(b, inst))? {
            outcome.count(opcode);
        }
        Ok(outcome)
    }
}

/// The per-sub-group areas that stage edge tiles, one per component type, each of the largest
/// checked matrix of it; `Err` says why there are none (the sentence continues "staging them
/// ...").
fn staging(module: &mut Module, types: &Types, target: &DeviceCaps) -> std::result::Result<(SubgroupScratch, AreasByType), String> {
    let [entry] = &module.entry_points[..] else {
        return Err("needs one kernel (`--kernel`, as the runtime loads kernels)".into());
    };
    let name = entry.string(2).unwrap_or_default();
    let required = crate::kernel::recorded_subgroup_sizes(module).into_iter().find(|(e, _)| *e == name).map(|(_, n)| n);
    if let Some(n) = required.filter(|n| !target.runs_subgroup_size(*n)) {
        return Err(format!("needs the kernel's sub-groups of {n} to be the device's own (its barriers would be work-group ones, or split a device sub-group)"));
    }
    let mut largest: BTreeMap<Word, u32> = BTreeMap::new();
    for inst in module.functions.iter().flat_map(|f| f.insts()).filter(|i| is_checked(i)) {
        let ty = match inst.opcode {
            icm::STORE_CHECKED => inst.operands.get(3).and_then(Operand::id).and_then(|v| types.type_of(v)),
            _ => inst.result_type,
        };
        if let Some(m) = ty.and_then(|t| matrix(types, t)) {
            let n = largest.entry(m.component).or_default();
            *n = (*n).max(m.rows * m.cols);
        }
    }
    let (scratch, areas) = SubgroupScratch::by_type(module, types, target, &largest)?;
    Ok((scratch.for_logical_subgroups(module, target), areas))
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
    staging: Option<(SubgroupScratch, AreasByType)>,
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
        b.counted_loop(first, len, |b, i| {
            let rc = b.module.alloc_id();
            b.insert(Inst { opcode: icm::GET_ELEMENT_COORD, result_type: Some(pair), result_id: Some(rc), operands: vec![Operand::Id(probe), Operand::Id(i)], origin: None });
            let (r, c) = (b.composite_extract(uint, rc, 0), b.composite_extract(uint, rc, 1));
            let boolean = b.module.type_bool();
            let (rows, cols) = (b.module.constant_u32(a.m.rows), b.module.constant_u32(a.m.cols));
            let (down, across) = (b.op(Op::ULessThan, boolean, &[r, rows]), b.op(Op::ULessThan, boolean, &[c, cols]));
            let within = b.op(Op::LogicalAnd, boolean, &[down, across]);
            let (row, col) = Self::in_memory(b, a, wide, r, c);
            body(b, i, row, col, within);
        });
    }

    /// The memory row and column (counted from the matrix's start in memory, at the access's
    /// width) of row-major element `i` of a matrix of `a`.
    fn memory_position(b: &mut Builder<'_>, a: &Access, wide: u32, i: Word) -> (Word, Word) {
        let uint = b.module.type_int(32, false);
        let cols = b.module.constant_u32(a.m.cols);
        let (r, c) = (b.op(Op::UDiv, uint, &[i, cols]), b.op(Op::UMod, uint, &[i, cols]));
        Self::in_memory(b, a, wide, r, c)
    }

    /// The memory row and column (at the access's width) of the matrix's 32-bit row `r` and
    /// column `c`, as the access's layout places them.
    fn in_memory(b: &mut Builder<'_>, a: &Access, wide: u32, r: Word, c: Word) -> (Word, Word) {
        let uint = b.module.type_int(32, false);
        let (row, col) = match a.layout {
            l if l == CooperativeMatrixLayout::ColumnMajorKHR as u32 => (c, r),
            icm::LAYOUT_PACKED => {
                let v = b.module.constant_u32((32 / a.bits).max(1));
                let group = b.op(Op::UDiv, uint, &[r, v]);
                let across = b.imul(uint, c, v);
                let within = b.op(Op::UMod, uint, &[r, v]);
                (group, b.iadd(uint, across, within))
            }
            _ => (r, c),
        };
        (Self::widen(b, row, 32, wide), Self::widen(b, col, 32, wide))
    }

    /// The staging of a matrix of `a`: how the sub-group goes over its area, the area's array
    /// and the sub-group's first index in it; `None` where edge tiles go element by element.
    fn area(&self, b: &mut Builder<'_>, a: &Access) -> Option<(SubgroupScratch, Word, Word)> {
        let (scratch, areas) = self.staging.as_ref()?;
        let &(array, per) = areas.get(&a.m.component)?;
        let start = scratch.area_start(b, per);
        Some((*scratch, array, start))
    }

    fn slot(b: &mut Builder<'_>, a: &Access, array: Word, start: Word, i: Word) -> Word {
        let uint = b.module.type_int(32, false);
        let ptr = b.module.type_pointer(StorageClass::Workgroup, a.m.component);
        let at = b.iadd(uint, start, i);
        b.access_chain(ptr, array, &[at])
    }

    /// After a sub-group barrier, the matrix of `a` loaded row-major from the sub-group's area
    /// into variable `result`; then a barrier, so that the next access may reuse the area.
    fn load_area(b: &mut Builder<'_>, scratch: SubgroupScratch, a: &Access, array: Word, start: Word, result: Word) {
        scratch.barrier(b);
        let zero = b.module.constant_u32(0);
        let first = Self::slot(b, a, array, start, zero);
        let row_major = b.module.constant_u32(CooperativeMatrixLayout::RowMajorKHR as u32);
        let cols = b.module.constant_u32(a.m.cols);
        let m = b.emit(Op::CooperativeMatrixLoadKHR, a.ty, vec![Operand::Id(first), Operand::Id(row_major), Operand::Id(cols)]);
        b.store(result, m);
        scratch.barrier(b);
    }

    /// Whether memory element (`x + row`, `y + col`) of a matrix element `within` the matrix
    /// lies inside the region; its position.
    fn element_inside(b: &mut Builder<'_>, wide: u32, [x, y, height, width]: [Word; 4], row: Word, col: Word, within: Option<Word>) -> (Word, Word, Word) {
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
        match within {
            Some(within) => (b.op(Op::LogicalAnd, boolean, &[inside, within]), gr, gc),
            None => (inside, gr, gc),
        }
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
                if let Some((scratch, array, start)) = self.area(b, &a) {
                    // The sub-group copies the tile into its area, zeros outside the region.
                    let zero = b.module.constant_null(a.m.component);
                    scratch.for_each(b, a.m.rows * a.m.cols, |b, i| {
                        let slot = Self::slot(b, &a, array, start, i);
                        b.store(slot, zero);
                        let (row, col) = Self::memory_position(b, &a, wide, i);
                        let (inside, gr, gc) = Self::element_inside(b, wide, region, row, col, None);
                        b.if_then(inside, |b| {
                            let from = Self::step(b, wide, ptr, stride, gr, gc);
                            let mut operands = vec![Operand::Id(from)];
                            operands.extend(element_memory.iter().cloned());
                            let v = b.emit(Op::Load, a.m.component, operands);
                            b.store(slot, v);
                        });
                    });
                    Self::load_area(b, scratch, &a, array, start, result);
                    return;
                }
                let zero = b.module.constant_null(a.m.component);
                let zeros = b.emit(Op::CompositeConstruct, ty, vec![Operand::Id(zero)]);
                b.store(result, zeros);
                let element_ptr = b.module.type_pointer(StorageClass::Function, a.m.component);
                Self::each_element(b, &a, wide, |b, i, row, col, within| {
                    let (inside, gr, gc) = Self::element_inside(b, wide, region, row, col, Some(within));
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
                if let Some((scratch, array, start)) = self.area(b, &a) {
                    // The matrix goes into the sub-group's area, which the sub-group copies out
                    // where the region is.
                    let zero = b.module.constant_u32(0);
                    let first = Self::slot(b, &a, array, start, zero);
                    let row_major = b.module.constant_u32(CooperativeMatrixLayout::RowMajorKHR as u32);
                    let cols = b.module.constant_u32(a.m.cols);
                    b.emit_void(Op::CooperativeMatrixStoreKHR, vec![Operand::Id(first), Operand::Id(object), Operand::Id(row_major), Operand::Id(cols)]);
                    scratch.barrier(b);
                    scratch.for_each(b, a.m.rows * a.m.cols, |b, i| {
                        let (row, col) = Self::memory_position(b, &a, wide, i);
                        let (inside, gr, gc) = Self::element_inside(b, wide, region, row, col, None);
                        b.if_then(inside, |b| {
                            let slot = Self::slot(b, &a, array, start, i);
                            let v = b.load(a.m.component, slot);
                            let to = Self::step(b, wide, ptr, stride, gr, gc);
                            let mut operands = vec![Operand::Id(to), Operand::Id(v)];
                            operands.extend(element_memory.iter().cloned());
                            b.emit_void(Op::Store, operands);
                        });
                    });
                    scratch.barrier(b);
                    return;
                }
                let held = b.function_variable(ty);
                b.store(held, object);
                let element_ptr = b.module.type_pointer(StorageClass::Function, a.m.component);
                Self::each_element(b, &a, wide, |b, i, row, col, within| {
                    let (inside, gr, gc) = Self::element_inside(b, wide, region, row, col, Some(within));
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
            if let Some((scratch, array, start)) = self.area(b, &a) {
                let zero = b.module.constant_null(a.m.component);
                scratch.for_each(b, a.m.rows * a.m.cols, |b, i| {
                    let (row, col) = Self::memory_position(b, &a, wide, i);
                    let (inside, _, _) = Self::element_inside(b, wide, region, row, col, None);
                    let v = b.select(a.m.component, inside, value, zero);
                    let slot = Self::slot(b, &a, array, start, i);
                    b.store(slot, v);
                });
                Self::load_area(b, scratch, &a, array, start, result);
                return;
            }
            let element_ptr = b.module.type_pointer(StorageClass::Function, a.m.component);
            let zero = b.module.constant_null(a.m.component);
            Self::each_element(b, &a, wide, |b, i, row, col, within| {
                let (inside, _, _) = Self::element_inside(b, wide, region, row, col, Some(within));
                let v = b.select(a.m.component, inside, value, zero);
                let to = b.access_chain(element_ptr, result, &[i]);
                b.store(to, v);
            });
        });
        b.insert(Inst::new(Op::Load, Some(ty), Some(inst.result()?), vec![Operand::Id(result)]));
        Ok(())
    }
}
