//! `LowerCooperativeMatrix2`: the sub-group-scope operations of SPV_NV_cooperative_matrix2 ->
//! SPV_KHR_cooperative_matrix loads and stores through workgroup memory and plain code over
//! the stored elements, for targets without VK_NV_cooperative_matrix2 (every device but recent
//! NVIDIA ones), and for those with it where some matrix type of the module is not one the
//! target lists (the module is then tiled, padded or emulated). What is left is ordinary KHR
//! code: native where the target lists the shapes, tiled, padded or emulated where it does not.
//!
//! Slang's `CoopMat` (`ReduceRow`, `ReduceColumn`, `ReduceRowAndColumn`, `Reduce2x2`,
//! `MapElement`, `Transpose`, `convertUse`, casts between uses) and GLSL_NV_cooperative_matrix2
//! (`coopMatReduceNV`, `coopMatPerElementNV`, `coopMatTransposeNV`, use-changing constructors)
//! write these instructions. Each one becomes, in place (its result id stays):
//!
//! - **`OpCooperativeMatrixConvertNV`** (an accumulator as an A or B matrix) and
//!   **`OpF/S/UConvert`, `OpConvertFToS/FToU/SToF/UToF` whose result has another Use** than
//!   their operand: the matrix is stored row-major into the sub-group's scratch area, the lanes
//!   convert its elements one by one into a second area where the component type changes, and
//!   the result is loaded row-major from there;
//! - **`OpCooperativeMatrixTransposeNV`**: stored row-major, loaded column-major with the same
//!   stride, which is the transpose;
//! - **`OpCooperativeMatrixReduceNV`**: the matrix is stored, the lanes fold its rows (`Row`),
//!   columns (`Column`), every element (`Row|Column`, one lane) or aligned 2x2 neighbourhoods
//!   (`2x2`) with `OpFunctionCall`s of the combine function, left to right, and write each result
//!   to every element of the result matrix it defines (a row reduction fills its whole row of
//!   the result, whatever the result's width); the result is loaded from there;
//! - **`OpCooperativeMatrixLoadTensorNV` and `StoreTensorNV`** (SPV_NV_tensor_addressing): tensor
//!   layouts and views become structs of their state (`tensor.rs`), and each lane reads or
//!   writes its elements at the address the extension's `matrixCoordToTensorElement(WithView)`
//!   gives (a load's `Object` fills the elements a view clips; Constant loads out of bounds
//!   give the clamp value, Undefined ones clamp to the edge; out-of-bounds stores are dropped),
//!   through the scratch area; decode functions (block loads) are refused by name;
//! - **`OpCooperativeMatrixPerElementOpNV`**: the matrix and every matrix among the extra
//!   operands are stored, each lane calls the function for its elements with their row, column
//!   (as the function's parameters type them), the element, and the extra operands (a matrix's
//!   own element at the same place, any other operand as it is), writes the result back in
//!   place, and the result is loaded.
//!
//! On targets without cooperative matrices (and with sub-group shuffles), whose matrices the
//! emulation holds in a documented distribution, per-element operations, Use conversions and
//! reductions by rows, columns or both are left to `emulate-cooperative-matrix`, which applies
//! them to each lane's elements with no scratch memory; only transposes and 2x2 reductions go
//! through memory there. Slang passes a lambda's captures as a struct value where the function
//! takes a pointer to one: such an operand is given a `Function` variable holding it.
//!
//! Elements are spread over lanes as `index = round * SubgroupSize + lane`, row-major index
//! `row * columns + column`. Each sub-group has its own area (`SubgroupId` times the area's
//! size) in one workgroup array per component type, sized for the largest operation
//! (`NumSubgroups` from the workgroup size, specialization constants included, and the target's
//! smallest sub-group size); a sub-group barrier with workgroup-memory semantics comes before
//! each store (earlier loads of the area are done), after it, and after the lanes' writes.
//!
//! Preconditions: runs before the tiling, padding and emulation passes, which then see only KHR
//! instructions. Matrix dimensions are constants or specialization constants (frozen to their
//! defaults); the module has one entry point with a workgroup size. Where the target's
//! sub-group barriers wait for the whole work-group (lavapipe), the barriers are memory
//! barriers. Refused by name: a 2x2 reduction of a matrix with an odd dimension, a conversion that changes both the Use and
//! rows or columns, a transpose that changes the component type, a combine or per-element
//! function that is not a function of the module, and scratch areas larger than the target's
//! workgroup memory beside the module's own. Workgroup-scope matrices are left as they are, and
//! the emulation or the target check refuses them by name.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::check_cooperative_matrix::first_unlisted;
use crate::passes::subgroup_scratch::{component_bytes, SubgroupScratch};
use crate::passes::tile_cooperative_matrix::{freeze_dimensions, matrix, Matrix};
use crate::profile::{DeviceCaps, SubgroupOp};

mod tensor;
use spirv::{BuiltIn, CooperativeMatrixLayout, CooperativeMatrixReduce, Op, Scope, StorageClass, Word};
use std::collections::{BTreeMap, HashMap};

pub struct LowerCooperativeMatrix2;

impl Pass for LowerCooperativeMatrix2 {
    fn name(&self) -> &'static str {
        "lower-cooperative-matrix2"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let types = Types::new(module);
        // The first operation: where errors about the whole module point.
        let Some(first) = module.functions.iter().flat_map(|f| f.insts()).find(|i| operation(&types, i).is_some()).cloned() else {
            return Ok(outcome);
        };
        if cx.target.cooperative_matrix2 {
            // A target with the extension keeps the operations unless some matrix of the module
            // is not one it lists: then the module is tiled, padded or emulated, which see KHR
            // instructions only.
            match first_unlisted(module, cx.target)? {
                None => return Ok(outcome),
                Some(reason) => outcome.notes.push(format!("lowered because {reason}")),
            }
        }
        if let Err(d) = freeze_dimensions(module) {
            return Err(Error::Invalid { site: module.site(&first), message: format!("cooperative-matrix dimension %{d} is neither a constant nor a specialization constant") });
        }
        pass_captures_by_pointer(module, &mut outcome);
        let tensors = tensor::tensor_types(module, &Types::new(module))?;
        if !tensors.is_empty() {
            let rewritten = tensor::lower_tensor_objects(module, &tensors)?;
            outcome.changed |= rewritten > 0;
            outcome.rewritten.insert(Op::TypeTensorLayoutNV as u32, tensors.len());
        }
        // Where the matrices will be emulated for certain, the emulation applies per-element
        // operations, Use conversions and row and column reductions (with shuffles) to each
        // lane's elements, with no scratch memory.
        let element_wise = cx.target.has_cooperative_matrix() || !cx.target.has_subgroup_op(SubgroupOp::Shuffle);
        let types = Types::new(module);
        // Elements each operation needs per sub-group, by component type; the largest need.
        let mut need: BTreeMap<Word, u32> = BTreeMap::new();
        for inst in module.functions.iter().flat_map(|f| f.insts()) {
            let Some(k) = kind(&types, inst, element_wise) else { continue };
            for (component, elements) in areas(&types, inst, k).map_err(|m| Error::Invalid { site: module.site(inst), message: m })? {
                let e = need.entry(component).or_default();
                *e = (*e).max(elements);
            }
        }
        if need.is_empty() {
            return Ok(outcome);
        }
        let scratch = Scratch::new(module, &types, cx.target, &need, &first)?;
        let mut f = 0;
        while f < module.functions.len() {
            let mut b = 0;
            while b < module.functions[f].blocks.len() {
                let Some(i) = module.functions[f].blocks[b].insts.iter().position(|i| kind(&types, i, element_wise).is_some()) else {
                    b += 1;
                    continue;
                };
                let inst = module.functions[f].blocks[b].insts[i].clone();
                let k = kind(&types, &inst, element_wise).unwrap_or(Kind::Relayout);
                outcome.count(inst.opcode);
                let mut bld = Builder::new(module, Cursor { function: f, block: b, index: i }).with_origin(inst.origin);
                // Loops and branches cannot start inside a loop header: its other instructions
                // move to a block of their own first.
                bld.separate_loop_header();
                let at = bld.cursor;
                bld.module.functions[f].blocks[at.block].insts.remove(at.index);
                if let Some(v) = lower(&mut bld, &types, &scratch, &tensors, &inst, k)? {
                    bld.insert(Inst::new(Op::CopyObject, Some(inst.ty()?), inst.result_id, vec![Operand::Id(v)]));
                }
                b = bld.cursor.block;
            }
            f += 1;
        }
        module.rebuild_entry_interfaces();
        Ok(outcome)
    }
}

/// The operations this pass lowers.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Kind {
    Reduce,
    PerElement,
    Transpose,
    /// A Use change, with or without a component conversion.
    Relayout,
    LoadTensor,
    StoreTensor,
}

const CONVERSIONS: [Op; 7] = [Op::FConvert, Op::SConvert, Op::UConvert, Op::ConvertFToS, Op::ConvertFToU, Op::ConvertSToF, Op::ConvertUToF];

/// The operation `inst` is, where this pass lowers it: all of them where `lowered_all` says so,
/// else (the emulation applies the others) only transposes and 2x2 reductions.
fn kind(types: &Types, inst: &Inst, lowered_all: bool) -> Option<Kind> {
    let k = operation(types, inst)?;
    let two_by_two = inst.word_opt(1) == Some(CooperativeMatrixReduce::_2X2.bits());
    (lowered_all || matches!(k, Kind::Transpose | Kind::LoadTensor | Kind::StoreTensor) || (k == Kind::Reduce && two_by_two)).then_some(k)
}

fn operation(types: &Types, inst: &Inst) -> Option<Kind> {
    let op = inst.op()?;
    let subgroup = |ty: Option<Word>| ty.and_then(|t| matrix(types, t)).is_some_and(|m| types.const_u32(m.scope) == Some(Scope::Subgroup as u32));
    let k = match op {
        Op::CooperativeMatrixReduceNV => Kind::Reduce,
        Op::CooperativeMatrixPerElementOpNV => Kind::PerElement,
        Op::CooperativeMatrixTransposeNV => Kind::Transpose,
        Op::CooperativeMatrixConvertNV => Kind::Relayout,
        Op::CooperativeMatrixLoadTensorNV => return subgroup(inst.result_type).then_some(Kind::LoadTensor),
        Op::CooperativeMatrixStoreTensorNV => return subgroup(inst.id(1).ok().and_then(|v| types.type_of(v))).then_some(Kind::StoreTensor),
        _ if CONVERSIONS.contains(&op) => {
            let from = inst.id(0).ok().and_then(|v| types.type_of(v)).and_then(|t| matrix(types, t))?;
            let to = inst.result_type.and_then(|t| matrix(types, t))?;
            if types.const_u32(from.usage) == types.const_u32(to.usage) {
                return None;
            }
            Kind::Relayout
        }
        _ => return None,
    };
    (subgroup(inst.result_type) && subgroup(inst.id(0).ok().and_then(|v| types.type_of(v)))).then_some(k)
}

/// The operand matrix and the result matrix of `inst` (a tensor load's or store's matrix twice).
fn matrices(types: &Types, inst: &Inst) -> std::result::Result<(Matrix, Matrix), String> {
    let of = |ty: Option<Word>| ty.and_then(|t| matrix(types, t)).ok_or_else(|| "a cooperative matrix with dimensions outside 1..=1024".to_string());
    let value = |k: usize| inst.id(k).ok().and_then(|v| types.type_of(v));
    match inst.op() {
        Some(Op::CooperativeMatrixLoadTensorNV) => Ok((of(inst.result_type)?, of(inst.result_type)?)),
        Some(Op::CooperativeMatrixStoreTensorNV) => Ok((of(value(1))?, of(value(1))?)),
        _ => Ok((of(value(0))?, of(inst.result_type)?)),
    }
}

/// The scratch areas `inst` needs: (component type, elements), one entry per area.
fn areas(types: &Types, inst: &Inst, k: Kind) -> std::result::Result<Vec<(Word, u32)>, String> {
    let (src, dst) = matrices(types, inst)?;
    let n = src.rows * src.cols;
    let mut list = vec![(src.component, n)];
    match k {
        Kind::Reduce => list.push((dst.component, dst.rows * dst.cols)),
        Kind::PerElement => {
            for v in inst.operands.iter().skip(2).filter_map(Operand::id) {
                if let Some(m) = types.type_of(v).and_then(|t| matrix(types, t)) {
                    list.push((m.component, m.rows * m.cols));
                }
            }
        }
        Kind::Relayout if dst.component != src.component => list.push((dst.component, n)),
        _ => {}
    }
    // Areas of one component type follow one another.
    let mut summed: BTreeMap<Word, u32> = BTreeMap::new();
    for (c, e) in list {
        *summed.entry(c).or_default() += e;
    }
    Ok(summed.into_iter().collect())
}

/// One workgroup array per component type, `NumSubgroups x` the largest area it needs.
struct Scratch {
    arrays: HashMap<Word, (Word, u32)>,
    areas: SubgroupScratch,
}

impl Scratch {
    fn new(module: &mut Module, types: &Types, target: &DeviceCaps, need: &BTreeMap<Word, u32>, first: &Inst) -> Result<Scratch> {
        let wanted: Vec<(Word, u32)> = need.iter().map(|(&c, &e)| (c, e)).collect();
        let (areas, arrays) = SubgroupScratch::new(module, types, target, &wanted).map_err(|why| Error::Unsupported {
            site: module.site(first),
            target: target.name.clone(),
            missing: format!("VK_NV_cooperative_matrix2 (its lowering {why})"),
        })?;
        let arrays = wanted.iter().zip(arrays).map(|(&(component, elements), array)| (component, (array, elements))).collect();
        Ok(Scratch { arrays, areas })
    }
}

/// An area of a sub-group's scratch: its array, component type and first index.
#[derive(Clone, Copy)]
struct Area {
    array: Word,
    component: Word,
    base: Word,
}

/// Emits one lowering.
struct Lowering<'a> {
    scratch: &'a Scratch,
    uint: Word,
    /// Next free element of the sub-group's area, per component type.
    next: HashMap<Word, u32>,
}

impl Lowering<'_> {
    /// The next `elements` of the sub-group's area of `component`.
    fn area(&mut self, b: &mut Builder<'_>, component: Word, elements: u32) -> Area {
        let (array, per) = self.scratch.arrays.get(&component).copied().unwrap_or((0, 0));
        let offset = self.next.entry(component).or_default();
        let sg_var = b.module.get_or_add_builtin(BuiltIn::SubgroupId, self.uint);
        let sg = b.load(self.uint, sg_var);
        let per = b.module.constant_u32(per);
        let first = b.imul(self.uint, sg, per);
        let base = if *offset == 0 {
            first
        } else {
            let o = b.module.constant_u32(*offset);
            b.iadd(self.uint, first, o)
        };
        *offset += elements;
        Area { array, component, base }
    }

    /// A pointer to element `index` of `area`.
    fn slot(&self, b: &mut Builder<'_>, area: Area, index: Word) -> Word {
        let at = b.iadd(self.uint, area.base, index);
        let ptr = b.module.type_pointer(StorageClass::Workgroup, area.component);
        b.access_chain(ptr, area.array, &[at])
    }

    fn read(&self, b: &mut Builder<'_>, area: Area, index: Word) -> Word {
        let p = self.slot(b, area, index);
        b.load(area.component, p)
    }

    fn write(&self, b: &mut Builder<'_>, area: Area, index: Word, v: Word) {
        let p = self.slot(b, area, index);
        b.store(p, v);
    }

    /// Element `row * cols + col` of `area`.
    fn read_at(&self, b: &mut Builder<'_>, area: Area, row: Word, cols: u32, col: Word) -> Word {
        let c = b.module.constant_u32(cols);
        let scaled = b.imul(self.uint, row, c);
        let index = b.iadd(self.uint, scaled, col);
        self.read(b, area, index)
    }

    fn barrier(&self, b: &mut Builder<'_>) {
        self.scratch.areas.barrier(b);
    }

    /// `OpCooperativeMatrixStoreKHR` of `m` (`cols` columns) into `area`, row-major.
    fn store(&self, b: &mut Builder<'_>, area: Area, m: Word, cols: u32) {
        let p = self.slot_base(b, area);
        let layout = b.module.constant_u32(CooperativeMatrixLayout::RowMajorKHR as u32);
        let stride = b.module.constant_u32(cols);
        b.emit_void(Op::CooperativeMatrixStoreKHR, vec![Operand::Id(p), Operand::Id(m), Operand::Id(layout), Operand::Id(stride)]);
    }

    /// `OpCooperativeMatrixLoadKHR` of a `ty` from `area`, lines `stride` elements apart.
    fn load(&self, b: &mut Builder<'_>, area: Area, ty: Word, layout: CooperativeMatrixLayout, stride: u32) -> Word {
        let p = self.slot_base(b, area);
        let layout = b.module.constant_u32(layout as u32);
        let stride = b.module.constant_u32(stride);
        b.emit(Op::CooperativeMatrixLoadKHR, ty, vec![Operand::Id(p), Operand::Id(layout), Operand::Id(stride)])
    }

    fn slot_base(&self, b: &mut Builder<'_>, area: Area) -> Word {
        let ptr = b.module.type_pointer(StorageClass::Workgroup, area.component);
        b.access_chain(ptr, area.array, &[area.base])
    }

    /// Runs `body(b, index)` for every index below `total`, each on one lane of the sub-group.
    fn for_each(&self, b: &mut Builder<'_>, total: u32, body: impl FnMut(&mut Builder<'_>, Word)) {
        self.scratch.areas.for_each(b, total, body);
    }
}

/// Slang passes a lambda's captures to a per-element function as a struct value where the
/// function takes a pointer to one: such an operand goes through a `Function` variable of its
/// own, stored just before the operation.
fn pass_captures_by_pointer(module: &mut Module, outcome: &mut Outcome) {
    let types = Types::new(module);
    for f in 0..module.functions.len() {
        for b in 0..module.functions[f].blocks.len() {
            let mut i = 0;
            while i < module.functions[f].blocks[b].insts.len() {
                let inst = &module.functions[f].blocks[b].insts[i];
                let fixes: Vec<(usize, Word, Word)> = match (inst.op(), inst.id(1).ok().and_then(|func| module.function_signature(func))) {
                    (Some(Op::CooperativeMatrixPerElementOpNV), Some((_, params))) => inst
                        .operands
                        .iter()
                        .enumerate()
                        .skip(2)
                        .filter_map(|(k, o)| {
                            let v = o.id()?;
                            let (class, pointee) = types.pointer(*params.get(k + 1)?)?;
                            (class == StorageClass::Function as u32 && Some(pointee) == types.type_of(v)).then_some((k, v, pointee))
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                if fixes.is_empty() {
                    i += 1;
                    continue;
                }
                let origin = inst.origin;
                let mut bld = Builder::new(module, Cursor { function: f, block: b, index: i }).with_origin(origin);
                for (k, v, pointee) in fixes {
                    let var = bld.function_variable(pointee);
                    bld.store(var, v);
                    let at = bld.cursor;
                    bld.module.functions[f].blocks[b].insts[at.index].operands[k] = Operand::Id(var);
                }
                outcome.changed = true;
                i = bld.cursor.index + 1;
            }
        }
    }
}

fn call(b: &mut Builder<'_>, ret: Word, func: Word, args: &[Word]) -> Word {
    let mut ops = vec![Operand::Id(func)];
    ops.extend(args.iter().map(|a| Operand::Id(*a)));
    b.emit(Op::FunctionCall, ret, ops)
}

/// `v` (a `uint`) as a value of the 32-bit integer type `ty`.
fn as_int(b: &mut Builder<'_>, uint: Word, ty: Word, v: Word) -> Word {
    if ty == uint {
        v
    } else {
        b.bitcast(ty, v)
    }
}

fn lower(b: &mut Builder<'_>, types: &Types, scratch: &Scratch, tensors: &HashMap<Word, tensor::Tensor>, inst: &Inst, k: Kind) -> Result<Option<Word>> {
    let invalid = |b: &Builder<'_>, message: String| Error::Invalid { site: b.module.site(inst), message };
    let (src, dst) = matrices(types, inst).map_err(|m| invalid(b, m))?;
    let uint = b.module.type_int(32, false);
    let mut l = Lowering { scratch, uint, next: HashMap::new() };
    let m = inst.id(0)?;
    let n = src.rows * src.cols;
    // Every operation but a tensor store has a result of this type.
    let ty = inst.result_type.unwrap_or(0);
    match k {
        Kind::LoadTensor | Kind::StoreTensor => tensor_access(b, types, &mut l, tensors, inst, src),
        Kind::Relayout | Kind::Transpose => {
            let transpose = k == Kind::Transpose;
            if transpose && (dst.rows, dst.cols) != (src.cols, src.rows) {
                return Err(invalid(b, format!("a transpose of a {}x{} matrix into a {}x{} one", src.rows, src.cols, dst.rows, dst.cols)));
            }
            if !transpose && (dst.rows, dst.cols) != (src.rows, src.cols) {
                return Err(invalid(b, format!("a Use conversion of a {}x{} matrix into a {}x{} one", src.rows, src.cols, dst.rows, dst.cols)));
            }
            if transpose && dst.component != src.component {
                return Err(invalid(b, "a transpose that changes the component type (no lowering)".into()));
            }
            let from = l.area(b, src.component, n);
            l.barrier(b);
            l.store(b, from, m, src.cols);
            l.barrier(b);
            let conversion = inst.op().filter(|op| CONVERSIONS.contains(op));
            let to = match conversion {
                Some(op) if dst.component != src.component => {
                    let to = l.area(b, dst.component, n);
                    let component = dst.component;
                    l.for_each(b, n, |b, i| {
                        let v = l.read(b, from, i);
                        let w = b.op(op, component, &[v]);
                        l.write(b, to, i, w);
                    });
                    l.barrier(b);
                    to
                }
                _ => from,
            };
            let layout = if transpose { CooperativeMatrixLayout::ColumnMajorKHR } else { CooperativeMatrixLayout::RowMajorKHR };
            Ok(Some(l.load(b, to, ty, layout, src.cols)))
        }
        Kind::Reduce => {
            let mode = CooperativeMatrixReduce::from_bits(inst.word(1)?).ok_or_else(|| invalid(b, format!("an unknown reduce mode {:#x}", inst.word(1).unwrap_or(0))))?;
            let func = inst.id(2)?;
            let Some((ret, params)) = b.module.function_signature(func) else {
                return Err(invalid(b, format!("combine function %{func} is not a function of the module")));
            };
            if params.len() != 2 || ret != src.component || dst.component != src.component {
                return Err(invalid(b, format!("combine function %{func} does not combine two of the matrix's components")));
            }
            let (rows, cols) = (src.rows, src.cols);
            let (out_rows, out_cols) = (dst.rows, dst.cols);
            let row_col = CooperativeMatrixReduce::ROW | CooperativeMatrixReduce::COLUMN;
            let shape_ok = if mode == CooperativeMatrixReduce::_2X2 {
                rows % 2 == 0 && cols % 2 == 0 && (out_rows, out_cols) == (rows / 2, cols / 2)
            } else if mode == CooperativeMatrixReduce::ROW {
                out_rows == rows
            } else if mode == CooperativeMatrixReduce::COLUMN {
                out_cols == cols
            } else {
                mode == row_col
            };
            if !shape_ok {
                let name = match mode.bits() {
                    1 => "Row",
                    2 => "Column",
                    3 => "Row|Column",
                    4 => "2x2",
                    _ => "combined 2x2",
                };
                return Err(invalid(b, format!("a {name} reduction of a {rows}x{cols} matrix into a {out_rows}x{out_cols} one")));
            }
            let from = l.area(b, src.component, n);
            let to = l.area(b, dst.component, out_rows * out_cols);
            l.barrier(b);
            l.store(b, from, m, cols);
            l.barrier(b);
            let t = src.component;
            // Folds the elements `at(j)` for j in 0..count, left to right.
            let fold = |b: &mut Builder<'_>, l: &Lowering<'_>, count: u32, at: &dyn Fn(&mut Builder<'_>, Word) -> Word| -> Word {
                let acc = b.function_variable(t);
                let zero = b.module.constant_u32(0);
                let first_index = at(b, zero);
                let first = l.read(b, from, first_index);
                b.store(acc, first);
                let (one, end) = (b.module.constant_u32(1), b.module.constant_u32(count));
                b.counted_loop_with(one, end, l.scratch.areas.element_loops(), |b, j| {
                    let index = at(b, j);
                    let x = l.read(b, from, index);
                    let a = b.load(t, acc);
                    let r = call(b, t, func, &[a, x]);
                    b.store(acc, r);
                });
                b.load(t, acc)
            };
            let cols_c = b.module.constant_u32(cols);
            if mode == CooperativeMatrixReduce::ROW {
                l.for_each(b, rows, |b, r| {
                    let start = b.imul(uint, r, cols_c);
                    let v = fold(b, &l, cols, &|b, j| b.iadd(uint, start, j));
                    let (zero, end) = (b.module.constant_u32(0), b.module.constant_u32(out_cols));
                    let out_start = {
                        let oc = b.module.constant_u32(out_cols);
                        b.imul(uint, r, oc)
                    };
                    b.counted_loop_with(zero, end, l.scratch.areas.element_loops(), |b, c| {
                        let index = b.iadd(uint, out_start, c);
                        l.write(b, to, index, v);
                    });
                });
            } else if mode == CooperativeMatrixReduce::COLUMN {
                l.for_each(b, cols, |b, c| {
                    let v = fold(b, &l, rows, &|b, j| {
                        let scaled = b.imul(uint, j, cols_c);
                        b.iadd(uint, scaled, c)
                    });
                    let (zero, end, oc) = (b.module.constant_u32(0), b.module.constant_u32(out_rows), b.module.constant_u32(out_cols));
                    b.counted_loop_with(zero, end, l.scratch.areas.element_loops(), |b, r| {
                        let scaled = b.imul(uint, r, oc);
                        let index = b.iadd(uint, scaled, c);
                        l.write(b, to, index, v);
                    });
                });
            } else if mode == row_col {
                // The whole matrix on one lane, written to every element of the result.
                l.for_each(b, 1, |b, _| {
                    let v = fold(b, &l, n, &|_, j| j);
                    let (zero, end) = (b.module.constant_u32(0), b.module.constant_u32(out_rows * out_cols));
                    b.counted_loop_with(zero, end, l.scratch.areas.element_loops(), |b, i| l.write(b, to, i, v));
                });
            } else {
                let oc = b.module.constant_u32(out_cols);
                l.for_each(b, out_rows * out_cols, |b, i| {
                    let r = b.op(Op::UDiv, uint, &[i, oc]);
                    let c = b.op(Op::UMod, uint, &[i, oc]);
                    let one = b.module.constant_u32(1);
                    let r0 = b.iadd(uint, r, r);
                    let c0 = b.iadd(uint, c, c);
                    let r1 = b.iadd(uint, r0, one);
                    let c1 = b.iadd(uint, c0, one);
                    let x00 = l.read_at(b, from, r0, cols, c0);
                    let x01 = l.read_at(b, from, r0, cols, c1);
                    let x10 = l.read_at(b, from, r1, cols, c0);
                    let x11 = l.read_at(b, from, r1, cols, c1);
                    let top = call(b, t, func, &[x00, x01]);
                    let bottom = call(b, t, func, &[x10, x11]);
                    let v = call(b, t, func, &[top, bottom]);
                    l.write(b, to, i, v);
                });
            }
            l.barrier(b);
            Ok(Some(l.load(b, to, ty, CooperativeMatrixLayout::RowMajorKHR, out_cols)))
        }
        Kind::PerElement => {
            let func = inst.id(1)?;
            let extras: Vec<Word> = inst.operands.iter().skip(2).filter_map(Operand::id).collect();
            let Some((ret, params)) = b.module.function_signature(func) else {
                return Err(invalid(b, format!("per-element function %{func} is not a function of the module")));
            };
            let ints_ok = params.len() == 3 + extras.len() && params[..2].iter().all(|p| types.int(*p).is_some_and(|(w, _)| w == 32));
            if !ints_ok || ret != src.component || params[2] != src.component || dst != src {
                return Err(invalid(b, format!("per-element function %{func} does not take (row, column, element{}) of the matrix", ", ..".repeat(extras.len().min(1)))));
            }
            let from = l.area(b, src.component, n);
            // Matrices among the extra operands are stored beside it.
            let mut extra_areas: Vec<Option<(Area, Matrix)>> = Vec::new();
            for v in &extras {
                let em = types.type_of(*v).and_then(|t| matrix(types, t));
                match em {
                    Some(em) if (em.rows, em.cols) != (src.rows, src.cols) => {
                        return Err(invalid(b, format!("a per-element operand %{v} of {}x{} beside a {}x{} matrix", em.rows, em.cols, src.rows, src.cols)));
                    }
                    Some(em) => extra_areas.push(Some((l.area(b, em.component, n), em))),
                    None => extra_areas.push(None),
                }
            }
            l.barrier(b);
            l.store(b, from, m, src.cols);
            for (v, a) in extras.iter().zip(&extra_areas) {
                if let Some((area, em)) = a {
                    l.store(b, *area, *v, em.cols);
                }
            }
            l.barrier(b);
            let cols_c = b.module.constant_u32(src.cols);
            let t = src.component;
            l.for_each(b, n, |b, i| {
                let row = b.op(Op::UDiv, uint, &[i, cols_c]);
                let col = b.op(Op::UMod, uint, &[i, cols_c]);
                let x = l.read(b, from, i);
                let mut args = vec![as_int(b, uint, params[0], row), as_int(b, uint, params[1], col), x];
                for (v, a) in extras.iter().zip(&extra_areas) {
                    args.push(match a {
                        Some((area, _)) => l.read(b, *area, i),
                        None => *v,
                    });
                }
                let r = call(b, t, func, &args);
                l.write(b, from, i, r);
            });
            l.barrier(b);
            Ok(Some(l.load(b, from, ty, CooperativeMatrixLayout::RowMajorKHR, src.cols)))
        }
    }
}

/// The operands of a tensor load or store after its memory operands: (the Tensor Addressing
/// Operands mask, its view id, its decode function id).
fn addressing_operands(inst: &Inst) -> (u32, Option<Word>, Option<Word>) {
    let mut i = 3;
    let mask = inst.word_opt(i).unwrap_or(0);
    i += 1;
    // Memory-operand parameters: Aligned's literal, the scopes of MakePointerAvailable and
    // MakePointerVisible, and the alias lists of SPV_INTEL_memory_access_aliasing.
    let params = [
        spirv::MemoryAccess::ALIGNED,
        spirv::MemoryAccess::MAKE_POINTER_AVAILABLE,
        spirv::MemoryAccess::MAKE_POINTER_VISIBLE,
        spirv::MemoryAccess::ALIAS_SCOPE_INTEL_MASK,
        spirv::MemoryAccess::NO_ALIAS_INTEL_MASK,
    ];
    i += params.iter().filter(|p| mask & p.bits() != 0).count();
    let tensor_mask = inst.word_opt(i).unwrap_or(0);
    i += 1;
    let mut next = || {
        let v = inst.word_opt(i);
        i += 1;
        v
    };
    let view = if tensor_mask & spirv::TensorAddressingOperands::TENSOR_VIEW.bits() != 0 { next() } else { None };
    let decode = if tensor_mask & spirv::TensorAddressingOperands::DECODE_FUNC.bits() != 0 { next() } else { None };
    (tensor_mask, view, decode)
}

/// A pointer to element `index` from `pointer`: the access chain that made it with `index`
/// added to its last index, or `OpPtrAccessChain` of a PhysicalStorageBuffer pointer.
fn element_pointer(b: &mut Builder<'_>, types: &Types, pointer: Word, index: Word) -> std::result::Result<Word, String> {
    let ptr_ty = types.type_of(pointer).ok_or("the pointer has no type")?;
    let def = b.module.functions.iter().flat_map(|f| f.insts()).find(|i| i.result_id == Some(pointer)).cloned();
    if let Some(chain) = def.filter(|d| matches!(d.op(), Some(Op::AccessChain | Op::InBoundsAccessChain)) && d.operands.len() >= 2) {
        let mut ids: Vec<Word> = chain.operands.iter().filter_map(Operand::id).collect();
        let last = ids.pop().unwrap_or(0);
        let at = b.index_plus(types, last, index);
        ids.push(at);
        let (base, rest) = ids.split_first().ok_or("an empty access chain")?;
        return Ok(b.access_chain(ptr_ty, *base, rest));
    }
    if types.pointer(ptr_ty).is_some_and(|(class, _)| class == StorageClass::PhysicalStorageBuffer as u32) {
        crate::passes::tile_cooperative_matrix::stride_physical_pointer(b.module, types, ptr_ty);
        return Ok(b.emit(Op::PtrAccessChain, ptr_ty, vec![Operand::Id(pointer), Operand::Id(index)]));
    }
    Err(format!("a tensor access through %{pointer}, which is neither an access chain into an array nor a PhysicalStorageBuffer pointer"))
}

/// `OpCooperativeMatrixLoadTensorNV` and `StoreTensorNV`: the matrix goes through the
/// sub-group's scratch area (the load's `Object` first, for the elements a view clips), each
/// lane reads or writes its elements at the addresses the layout (and view) give, and a load's
/// result is loaded from the area.
fn tensor_access(b: &mut Builder<'_>, types: &Types, l: &mut Lowering<'_>, tensors: &HashMap<Word, tensor::Tensor>, inst: &Inst, m: Matrix) -> Result<Option<Word>> {
    let invalid = |b: &Builder<'_>, message: String| Error::Invalid { site: b.module.site(inst), message };
    let load = inst.is(Op::CooperativeMatrixLoadTensorNV);
    let (pointer, object, layout) = (inst.id(0)?, inst.id(1)?, inst.id(2)?);
    let (_, view, decode) = addressing_operands(inst);
    if decode.is_some() {
        return Err(invalid(b, "a block load (a DecodeFunc operand, CooperativeMatrixBlockLoadsNV) has no lowering for targets without VK_NV_cooperative_matrix2".into()));
    }
    let Some(tensor::Tensor::Layout { dim, clamp }) = types.type_of(layout).and_then(|t| tensors.get(&t)).cloned() else {
        return Err(invalid(b, format!("%{layout} is not a tensor layout")));
    };
    let view = match view {
        Some(v) => match types.type_of(v).and_then(|t| tensors.get(&t)) {
            Some(t @ tensor::Tensor::View { .. }) => Some((v, t)),
            _ => return Err(invalid(b, format!("%{v} is not a tensor view"))),
        },
        None => None,
    };
    let pointee = types.type_of(pointer).and_then(|t| types.pointer(t)).map(|(_, p)| p);
    if pointee != Some(m.component) {
        return Err(invalid(b, format!("a tensor access of %{} components through a pointer to %{}", m.component, pointee.unwrap_or(0))));
    }
    let physical = types.type_of(pointer).and_then(|t| types.pointer(t)).is_some_and(|(class, _)| class == StorageClass::PhysicalStorageBuffer as u32);
    let align = physical.then(|| component_bytes(types, m.component));
    let n = m.rows * m.cols;
    let area = l.area(b, m.component, n);
    l.barrier(b);
    l.store(b, area, object, m.cols);
    l.barrier(b);
    let addressing = tensor::Addressing { layout, clamp, dim, view, load };
    let cols_c = b.module.constant_u32(m.cols);
    let boolean = b.module.type_bool();
    let uint = l.uint;
    let mut failure: Option<String> = None;
    l.for_each(b, n, |b, i| {
        let row = b.op(Op::UDiv, uint, &[i, cols_c]);
        let col = b.op(Op::UMod, uint, &[i, cols_c]);
        let (valid, index, oob) = tensor::element(b, &addressing, row, col, m.cols);
        let inside = b.op(Op::LogicalNot, boolean, &[oob]);
        let access = match valid {
            Some(v) => b.op(Op::LogicalAnd, boolean, &[v, inside]),
            None => inside,
        };
        b.if_then(access, |b| {
            let p = match element_pointer(b, types, pointer, index) {
                Ok(p) => p,
                Err(e) => {
                    failure = Some(e);
                    return;
                }
            };
            let memory: Vec<Operand> = align.map(|a| vec![Operand::Enum(rspirv::grammar::OperandKind::MemoryAccess, spirv::MemoryAccess::ALIGNED.bits()), Operand::Literal(a)]).unwrap_or_default();
            if load {
                let mut ops = vec![Operand::Id(p)];
                ops.extend(memory);
                let v = b.emit(Op::Load, m.component, ops);
                l.write(b, area, i, v);
            } else {
                let v = l.read(b, area, i);
                let mut ops = vec![Operand::Id(p), Operand::Id(v)];
                ops.extend(memory);
                b.emit_void(Op::Store, ops);
            }
        });
        if load && clamp == spirv::TensorClampMode::Constant as u32 {
            let clamped = match valid {
                Some(v) => b.op(Op::LogicalAnd, boolean, &[v, oob]),
                None => oob,
            };
            b.if_then(clamped, |b| {
                let bits = tensor::get(b, layout, tensor::CLAMP_VALUE, None);
                match clamp_value(b, types, m.component, bits) {
                    Some(v) => l.write(b, area, i, v),
                    None => failure = Some(format!("a clamp value for %{} components", m.component)),
                }
            });
        }
    });
    if let Some(e) = failure {
        return Err(invalid(b, e));
    }
    if !load {
        return Ok(None);
    }
    l.barrier(b);
    let ty = inst.ty()?;
    Ok(Some(l.load(b, area, ty, CooperativeMatrixLayout::RowMajorKHR, m.cols)))
}

/// The clamp value's bits as a component of type `ty`: the low bits of the 32-bit word.
fn clamp_value(b: &mut Builder<'_>, types: &Types, ty: Word, bits: Word) -> Option<Word> {
    let uint = b.module.type_int(32, false);
    if let Some((w, _)) = types.int(ty) {
        let unsigned = b.module.type_int(w, false);
        let v = if w == 32 { bits } else { b.op(Op::UConvert, unsigned, &[bits]) };
        let v_ty = if w == 32 { uint } else { unsigned };
        return Some(if v_ty == ty { v } else { b.bitcast(ty, v) });
    }
    let (w, _) = types.float(ty)?;
    let int = b.module.type_int(w, false);
    let v = match w {
        32 => bits,
        16 | 64 => b.op(Op::UConvert, int, &[bits]),
        _ => return None,
    };
    Some(b.bitcast(ty, v))
}
