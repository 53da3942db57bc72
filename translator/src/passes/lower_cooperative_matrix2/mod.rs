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
//! workgroup memory beside the module's own.
//!
//! **Workgroup-scope matrices** (KHR or NV code, as llama.cpp's coopmat2 matmul and flash
//! attention declare them) become sub-group-scope ones (`bands.rs`): A and accumulator
//! matrices as row bands spread over the sub-groups, B matrices replicated in each. Their
//! MulAdds, element-wise arithmetic, conversions and row reductions are then sub-group code
//! unchanged; a KHR load or store, or a tensor access, of a band moves to the band's first
//! row, per-element functions get the row in the whole matrix, and only the sub-groups that
//! write a matrix store it. Column and whole-matrix reductions of bands, and Use conversions
//! and transposes other than band to band, go through a workgroup array that holds the
//! whole matrix, between workgroup barriers (the operations are workgroup-uniform).

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::check_cooperative_matrix::first_unlisted;
use crate::passes::subgroup_scratch::{component_bytes, SubgroupScratch};
use crate::passes::tile_cooperative_matrix::{freeze_dimensions, freeze_layouts, matrix, Matrix};
use crate::profile::{DeviceCaps, SubgroupOp};

mod bands;
mod decode;
mod tensor;
use bands::Bands;
use decode::Decoders;
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
        // The first operation, or else the first workgroup-scope matrix type: where errors
        // about the whole module point.
        let workgroup_type = |g: &&Inst| g.is(Op::TypeCooperativeMatrixKHR) && g.id(1).ok().and_then(|s| types.const_u32(s)) == Some(Scope::Workgroup as u32);
        let first = module.functions.iter().flat_map(|f| f.insts()).find(|i| operation(&types, None, i).is_some()).or_else(|| module.globals().iter().find(workgroup_type)).cloned();
        let Some(first) = first else {
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
        let bands = Bands::plan(module, &Types::new(module), cx.target);
        if bands.is_some() {
            freeze_layouts(module);
        }
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
        let bands = bands.as_ref();
        // Elements each operation needs per sub-group, and in the workgroup's whole-matrix
        // areas, by component type; the largest needs.
        let (mut need, mut whole): (BTreeMap<Word, u32>, BTreeMap<Word, u32>) = Default::default();
        let mut any = false;
        for inst in module.functions.iter().flat_map(|f| f.insts()) {
            let Some(k) = kind(&types, bands, inst, element_wise) else { continue };
            any = true;
            let (per_subgroup, gathered) = areas(&types, bands, inst, k).map_err(|m| Error::Invalid { site: module.site(inst), message: m })?;
            for (component, elements) in per_subgroup {
                let e = need.entry(component).or_default();
                *e = (*e).max(elements);
            }
            if let Some((component, elements)) = gathered {
                let e = whole.entry(component).or_default();
                *e = (*e).max(elements);
            }
        }
        if !any {
            return Ok(outcome);
        }
        let scratch = Scratch::new(module, &types, cx.target, (&need, &whole), &first)?;
        let mut decoders = Decoders::default();
        let mut f = 0;
        while f < module.functions.len() {
            // The search goes on after each lowering: what it emitted (the same operations on
            // what sub-groups hold, among them) comes before the cursor.
            let (mut b, mut from) = (0, 0);
            while b < module.functions[f].blocks.len() {
                let Some(i) = module.functions[f].blocks[b].insts.iter().skip(from).position(|i| kind(&types, bands, i, element_wise).is_some()).map(|i| i + from) else {
                    (b, from) = (b + 1, 0);
                    continue;
                };
                let inst = module.functions[f].blocks[b].insts[i].clone();
                let k = kind(&types, bands, &inst, element_wise).unwrap_or(Kind::Relayout);
                outcome.count(inst.opcode);
                let mut bld = Builder::new(module, Cursor { function: f, block: b, index: i }).with_origin(inst.origin);
                // Loops and branches cannot start inside a loop header: its other instructions
                // move to a block of their own first.
                bld.separate_loop_header();
                let at = bld.cursor;
                bld.module.functions[f].blocks[at.block].insts.remove(at.index);
                if let Some(v) = lower(&mut bld, &types, (&scratch, bands), (&tensors, &mut decoders), &inst, k)? {
                    bld.insert(Inst::new(Op::CopyObject, Some(inst.ty()?), inst.result_id, vec![Operand::Id(v)]));
                }
                (b, from) = (bld.cursor.block, bld.cursor.index);
            }
            f += 1;
        }
        if let Some(bands) = bands {
            bands.retype(module);
            outcome.changed = true;
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
    /// `OpCooperativeMatrixLoadKHR` of a banded workgroup-scope matrix.
    Load,
    /// `OpCooperativeMatrixStoreKHR` of a workgroup-scope matrix.
    Store,
}

const CONVERSIONS: [Op; 7] = [Op::FConvert, Op::SConvert, Op::UConvert, Op::ConvertFToS, Op::ConvertFToU, Op::ConvertSToF, Op::ConvertUToF];

/// The operation `inst` is, where this pass lowers it: all of them where `lowered_all` says so,
/// else (the emulation applies the others) only transposes, 2x2 reductions, tensor accesses
/// and the operations on workgroup-scope matrices that need their band's place or the other
/// sub-groups.
fn kind(types: &Types, bands: Option<&Bands>, inst: &Inst, lowered_all: bool) -> Option<Kind> {
    let k = operation(types, bands, inst)?;
    let two_by_two = inst.word_opt(1) == Some(CooperativeMatrixReduce::_2X2.bits());
    let placed = bands.is_some_and(|bd| gathers(types, bd, inst, k) || (k == Kind::PerElement && operand_type(types, inst).is_some_and(|t| bd.is_banded(t))));
    (lowered_all || placed || matches!(k, Kind::Transpose | Kind::LoadTensor | Kind::StoreTensor | Kind::Load | Kind::Store) || (k == Kind::Reduce && two_by_two)).then_some(k)
}

/// The type of `inst`'s first operand.
fn operand_type(types: &Types, inst: &Inst) -> Option<Word> {
    inst.id(0).ok().and_then(|v| types.type_of(v))
}

/// Whether `inst` (an operation `k`) on workgroup-scope matrices goes through the workgroup's
/// whole-matrix area: a column or whole-matrix reduction of a banded matrix, and a Use
/// conversion or transpose from or to a replicated matrix or that transposes a banded one.
fn gathers(types: &Types, bands: &Bands, inst: &Inst, k: Kind) -> bool {
    let (Some(from), Some(to)) = (operand_type(types, inst), inst.result_type) else { return false };
    match k {
        Kind::Reduce => bands.is_banded(from) && inst.word_opt(1).is_some_and(|m| m & CooperativeMatrixReduce::COLUMN.bits() != 0),
        Kind::Relayout | Kind::Transpose => (bands.is_workgroup(from) || bands.is_workgroup(to)) && !(k == Kind::Relayout && bands.is_banded(from) && bands.is_banded(to)),
        _ => false,
    }
}

/// Whether `inst` (an operation `k`) is a tensor load of a matrix every sub-group holds whole:
/// the workgroup loads it once into its whole-matrix area, each invocation some elements, and
/// every sub-group reads it from there.
fn loads_shared(bands: &Bands, inst: &Inst, k: Kind) -> bool {
    k == Kind::LoadTensor && bands.invocations > 0 && inst.result_type.is_some_and(|t| bands.is_replicated(t))
}

fn operation(types: &Types, bands: Option<&Bands>, inst: &Inst) -> Option<Kind> {
    let op = inst.op()?;
    let workgroup = |ty: Option<Word>| ty.is_some_and(|t| bands.is_some_and(|bd| bd.is_workgroup(t)));
    let subgroup = |ty: Option<Word>| workgroup(ty) || ty.and_then(|t| matrix(types, t)).is_some_and(|m| types.const_u32(m.scope) == Some(Scope::Subgroup as u32));
    let k = match op {
        Op::CooperativeMatrixLoadKHR => return inst.result_type.is_some_and(|t| bands.is_some_and(|bd| bd.is_banded(t))).then_some(Kind::Load),
        Op::CooperativeMatrixStoreKHR => return workgroup(inst.id(1).ok().and_then(|v| types.type_of(v))).then_some(Kind::Store),
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

/// The operand matrix type and the result matrix type of `inst` (a load's or store's matrix
/// type twice).
fn matrix_types(types: &Types, inst: &Inst) -> (Option<Word>, Option<Word>) {
    let value = |k: usize| inst.id(k).ok().and_then(|v| types.type_of(v));
    match inst.op() {
        Some(Op::CooperativeMatrixLoadTensorNV | Op::CooperativeMatrixLoadKHR) => (inst.result_type, inst.result_type),
        Some(Op::CooperativeMatrixStoreTensorNV | Op::CooperativeMatrixStoreKHR) => (value(1), value(1)),
        _ => (value(0), inst.result_type),
    }
}

/// What a sub-group holds of the operand matrix and the result matrix of `inst` (see
/// [`matrix_types`]), or with `whole` the whole matrices.
fn matrices(types: &Types, bands: Option<&Bands>, inst: &Inst, whole: bool) -> std::result::Result<(Matrix, Matrix), String> {
    let of = |ty: Option<Word>| {
        ty.and_then(|t| match bands {
            Some(bd) if whole => bd.whole(types, t),
            _ => held(types, bands, t),
        })
        .ok_or_else(|| "a cooperative matrix with dimensions outside 1..=1024".to_string())
    };
    let (from, to) = matrix_types(types, inst);
    Ok((of(from)?, of(to)?))
}

/// What a sub-group holds of a matrix of type `ty`.
fn held(types: &Types, bands: Option<&Bands>, ty: Word) -> Option<Matrix> {
    match bands {
        Some(bd) => bd.held(types, ty),
        None => matrix(types, ty),
    }
}

/// The scratch areas `inst` needs: (component type, elements) for each of the sub-group's
/// areas, and the workgroup's whole-matrix area it gathers into.
type Areas = (Vec<(Word, u32)>, Option<(Word, u32)>);

fn areas(types: &Types, bands: Option<&Bands>, inst: &Inst, k: Kind) -> std::result::Result<Areas, String> {
    let (src, dst) = matrices(types, bands, inst, false)?;
    if bands.is_some_and(|bd| loads_shared(bd, inst, k)) {
        return Ok((Vec::new(), Some((src.component, src.rows * src.cols))));
    }
    if bands.is_some_and(|bd| gathers(types, bd, inst, k)) {
        let (whole_src, _) = matrices(types, bands, inst, true)?;
        // A conversion converts the components before it gathers them.
        let component = if k == Kind::Reduce { src.component } else { dst.component };
        let gathered = Some((component, whole_src.rows * whole_src.cols));
        return Ok((if k == Kind::Reduce { vec![(dst.component, dst.rows * dst.cols)] } else { Vec::new() }, gathered));
    }
    let n = src.rows * src.cols;
    let mut list = vec![(src.component, n)];
    match k {
        Kind::Load | Kind::Store => return Ok((Vec::new(), None)),
        Kind::Reduce => list.push((dst.component, dst.rows * dst.cols)),
        Kind::PerElement => {
            for v in inst.operands.iter().skip(2).filter_map(Operand::id) {
                if let Some(m) = types.type_of(v).and_then(|t| held(types, bands, t)) {
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
    Ok((summed.into_iter().collect(), None))
}

/// One workgroup array per component type, `NumSubgroups x` the largest area it needs, and
/// one per component type of the whole matrices gathered there.
struct Scratch {
    arrays: HashMap<Word, (Word, u32)>,
    whole: HashMap<Word, Word>,
    areas: SubgroupScratch,
}

impl Scratch {
    fn new(module: &mut Module, types: &Types, target: &DeviceCaps, (need, whole): (&BTreeMap<Word, u32>, &BTreeMap<Word, u32>), first: &Inst) -> Result<Scratch> {
        let whole = whole
            .iter()
            .map(|(&component, &elements)| {
                let len = module.constant_u32(elements);
                let array = module.type_array(component, len);
                let ptr = module.type_pointer(StorageClass::Workgroup, array);
                (component, module.add_global_variable(ptr, StorageClass::Workgroup, None))
            })
            .collect();
        let wanted: Vec<(Word, u32)> = need.iter().map(|(&c, &e)| (c, e)).collect();
        let (areas, arrays) = SubgroupScratch::new(module, types, target, &wanted).map_err(|why| Error::Unsupported {
            site: module.site(first),
            target: target.name.clone(),
            missing: format!("VK_NV_cooperative_matrix2 (its lowering {why})"),
        })?;
        let arrays = wanted.iter().zip(arrays).map(|(&(component, elements), array)| (component, (array, elements))).collect();
        Ok(Scratch { arrays, whole, areas })
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
    bands: Option<&'a Bands>,
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

    /// Stores what the sub-group holds of `m`, a workgroup-scope matrix of type `ty` with
    /// `component` components, into the workgroup's whole-matrix area of `component` (a band
    /// at its rows, by the first sub-groups holding them; a replicated matrix by sub-group 0),
    /// between workgroup barriers; returns the area.
    fn gather(&self, b: &mut Builder<'_>, types: &Types, m: Word, ty: Word, component: Word) -> std::result::Result<Area, String> {
        let bands = self.bands.ok_or("a gather without workgroup-scope matrices")?;
        let whole = bands.whole(types, ty).ok_or("a gather of a matrix with dimensions outside 1..=1024")?;
        let array = *self.scratch.whole.get(&component).ok_or("a gather into no area")?;
        let zero = b.module.constant_u32(0);
        let area = Area { array, component, base: zero };
        workgroup_barrier(b);
        let banded = bands.is_banded(ty);
        let base = if banded {
            let first = bands.first_row(b, whole.rows);
            let cols = b.module.constant_u32(whole.cols);
            b.imul(self.uint, first, cols)
        } else {
            zero
        };
        let writes = bands.writes(b, banded);
        b.if_then(writes, |b| self.store(b, Area { base, ..area }, m, whole.cols));
        workgroup_barrier(b);
        Ok(area)
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

/// Runs `body(b, index)` for every index below `total`, spread over the workgroup's
/// invocations (`LocalInvocationIndex` plus multiples of the workgroup size, specialization
/// constants included).
fn workgroup_for_each(b: &mut Builder<'_>, types: &Types, total: u32, mut body: impl FnMut(&mut Builder<'_>, Word)) -> std::result::Result<(), String> {
    let ([x, y, z], _) = crate::passes::subgroup_scratch::workgroup_size(b.module, types).ok_or("a shared tensor load in a module without a workgroup size")?;
    let uint = b.module.type_int(32, false);
    let boolean = b.module.type_bool();
    let xy = b.imul(uint, x, y);
    let size = b.imul(uint, xy, z);
    let id_var = b.module.get_or_add_builtin(BuiltIn::LocalInvocationIndex, uint);
    let id = b.load(uint, id_var);
    let (zero, one, total_c) = (b.module.constant_u32(0), b.module.constant_u32(1), b.module.constant_u32(total));
    let less = b.op(Op::ISub, uint, &[size, one]);
    let up = b.iadd(uint, total_c, less);
    let rounds = b.op(Op::UDiv, uint, &[up, size]);
    b.counted_loop(zero, rounds, |b, round| {
        let first = b.imul(uint, round, size);
        let index = b.iadd(uint, first, id);
        let inside = b.op(Op::ULessThan, boolean, &[index, total_c]);
        b.if_then(inside, |b| body(b, index));
    });
    Ok(())
}

/// A workgroup control barrier that makes workgroup memory written before it visible after it.
fn workgroup_barrier(b: &mut Builder<'_>) {
    let workgroup = b.module.constant_u32(Scope::Workgroup as u32);
    let semantics = b.module.constant_u32((spirv::MemorySemantics::ACQUIRE_RELEASE | spirv::MemorySemantics::WORKGROUP_MEMORY).bits());
    b.emit_void(Op::ControlBarrier, vec![Operand::Id(workgroup), Operand::Id(workgroup), Operand::Id(semantics)]);
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

fn lower(
    b: &mut Builder<'_>,
    types: &Types,
    (scratch, bands): (&Scratch, Option<&Bands>),
    (tensors, decoders): (&HashMap<Word, tensor::Tensor>, &mut Decoders),
    inst: &Inst,
    k: Kind,
) -> Result<Option<Word>> {
    let invalid = |b: &Builder<'_>, message: String| Error::Invalid { site: b.module.site(inst), message };
    let (src, dst) = matrices(types, bands, inst, false).map_err(|m| invalid(b, m))?;
    let (whole_src, whole_dst) = matrices(types, bands, inst, true).map_err(|m| invalid(b, m))?;
    let (src_ty, dst_ty) = match matrix_types(types, inst) {
        (Some(s), Some(d)) => (s, d),
        _ => return Err(invalid(b, "an operation on a value that is not a cooperative matrix".into())),
    };
    let uint = b.module.type_int(32, false);
    let mut l = Lowering { scratch, bands, uint, next: HashMap::new() };
    let m = inst.id(0)?;
    let n = src.rows * src.cols;
    // Every operation but a store has a result of this type.
    let ty = inst.result_type.unwrap_or(0);
    let gathered = bands.is_some_and(|bd| gathers(types, bd, inst, k));
    // The first row of the sub-group's band of a banded operand (None for other matrices).
    let banded = |b: &mut Builder<'_>, ty: Word, rows: u32| bands.filter(|bd| bd.is_banded(ty)).map(|bd| bd.first_row(b, rows));
    match k {
        Kind::Load | Kind::Store => khr_access(b, types, bands, inst, k == Kind::Load).map_err(|m| invalid(b, m)),
        Kind::LoadTensor | Kind::StoreTensor => {
            let first_row = banded(b, src_ty, whole_src.rows);
            // Only the sub-groups that write a workgroup-scope matrix store it.
            let writes = bands.filter(|bd| k == Kind::StoreTensor && bd.is_workgroup(src_ty)).map(|bd| bd.writes(b, bd.is_banded(src_ty)));
            tensor_access(b, types, &mut l, (tensors, decoders), inst, src, (first_row, writes))
        }
        Kind::Relayout | Kind::Transpose => {
            let transpose = k == Kind::Transpose;
            let (src, dst) = (whole_src, whole_dst);
            if transpose && (dst.rows, dst.cols) != (src.cols, src.rows) {
                return Err(invalid(b, format!("a transpose of a {}x{} matrix into a {}x{} one", src.rows, src.cols, dst.rows, dst.cols)));
            }
            if !transpose && (dst.rows, dst.cols) != (src.rows, src.cols) {
                return Err(invalid(b, format!("a Use conversion of a {}x{} matrix into a {}x{} one", src.rows, src.cols, dst.rows, dst.cols)));
            }
            if transpose && dst.component != src.component {
                return Err(invalid(b, "a transpose that changes the component type (no lowering)".into()));
            }
            if gathered {
                return relayout_through_workgroup(b, types, &l, inst, (src_ty, dst_ty), transpose).map(Some).map_err(|m| invalid(b, m));
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
            // A banded matrix's columns are gathered whole into workgroup memory first.
            let (rows, cols) = if gathered { (whole_src.rows, whole_src.cols) } else { (src.rows, src.cols) };
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
            let to = l.area(b, dst.component, out_rows * out_cols);
            // A gather ends with a workgroup barrier, which also orders earlier reads of `to`.
            let from = if gathered {
                l.gather(b, types, m, src_ty, src.component).map_err(|e| invalid(b, e))?
            } else {
                let from = l.area(b, src.component, n);
                l.barrier(b);
                l.store(b, from, m, cols);
                l.barrier(b);
                from
            };
            let n = rows * cols;
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
            // The element's row in the whole matrix: a band's rows start at its first row.
            let first_row = banded(b, src_ty, whole_src.rows);
            // Matrices among the extra operands are stored beside it; each of them is banded
            // like the matrix or replicated (then indexed by the row in the whole matrix).
            let mut extra_areas: Vec<Option<(Area, Matrix, bool)>> = Vec::new();
            for v in &extras {
                let Some(ety) = types.type_of(*v).filter(|t| matrix(types, *t).is_some()) else {
                    extra_areas.push(None);
                    continue;
                };
                let (em, whole) = (held(types, bands, ety), bands.map_or_else(|| matrix(types, ety), |bd| bd.whole(types, ety)));
                let (Some(em), Some(whole)) = (em, whole) else {
                    return Err(invalid(b, format!("a per-element operand %{v} with dimensions outside 1..=1024")));
                };
                if (whole.rows, whole.cols) != (whole_src.rows, whole_src.cols) {
                    return Err(invalid(b, format!("a per-element operand %{v} of {}x{} beside a {}x{} matrix", whole.rows, whole.cols, whole_src.rows, whole_src.cols)));
                }
                let whole_rows = first_row.is_some() && em.rows != src.rows;
                extra_areas.push(Some((l.area(b, em.component, em.rows * em.cols), em, whole_rows)));
            }
            l.barrier(b);
            l.store(b, from, m, src.cols);
            for (v, a) in extras.iter().zip(&extra_areas) {
                if let Some((area, em, _)) = a {
                    l.store(b, *area, *v, em.cols);
                }
            }
            l.barrier(b);
            let cols_c = b.module.constant_u32(src.cols);
            let t = src.component;
            l.for_each(b, n, |b, i| {
                let row = b.op(Op::UDiv, uint, &[i, cols_c]);
                let col = b.op(Op::UMod, uint, &[i, cols_c]);
                let row = match first_row {
                    Some(first) => b.iadd(uint, first, row),
                    None => row,
                };
                let x = l.read(b, from, i);
                let mut args = vec![as_int(b, uint, params[0], row), as_int(b, uint, params[1], col), x];
                for (v, a) in extras.iter().zip(&extra_areas) {
                    args.push(match a {
                        Some((area, em, true)) => l.read_at(b, *area, row, em.cols, col),
                        Some((area, _, false)) => l.read(b, *area, i),
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
/// result is loaded from the area. A band's rows start at `first_row` in the whole matrix; a
/// store writes only where `writes` holds.
fn tensor_access(
    b: &mut Builder<'_>,
    types: &Types,
    l: &mut Lowering<'_>,
    (tensors, decoders): (&HashMap<Word, tensor::Tensor>, &mut Decoders),
    inst: &Inst,
    m: Matrix,
    (first_row, writes): (Option<Word>, Option<Word>),
) -> Result<Option<Word>> {
    let invalid = |b: &Builder<'_>, message: String| Error::Invalid { site: b.module.site(inst), message };
    let load = inst.is(Op::CooperativeMatrixLoadTensorNV);
    let (pointer, object, layout) = (inst.id(0)?, inst.id(1)?, inst.id(2)?);
    let (_, view, decode) = addressing_operands(inst);
    if decode.is_some() && !load {
        return Err(invalid(b, "a tensor store with a DecodeFunc operand (decode functions are for loads only)".into()));
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
    // A block load's pointer points to blocks, which its decode function reads.
    let site = match decode {
        Some(func) => Some(decoders.site(b, types, func, pointer, dim).map_err(|e| invalid(b, e))?),
        None => None,
    };
    let pointee = types.type_of(pointer).and_then(|t| types.pointer(t)).map(|(_, p)| p);
    if site.is_none() && pointee != Some(m.component) {
        return Err(invalid(b, format!("a tensor access of %{} components through a pointer to %{}", m.component, pointee.unwrap_or(0))));
    }
    let physical = types.type_of(pointer).and_then(|t| types.pointer(t)).is_some_and(|(class, _)| class == StorageClass::PhysicalStorageBuffer as u32);
    let align = physical.then(|| component_bytes(types, m.component));
    let n = m.rows * m.cols;
    // A matrix every sub-group holds whole is loaded once by the workgroup into its
    // whole-matrix area (the load's `Object` first, by sub-group 0, where a view may clip).
    let shared = l.bands.filter(|bd| loads_shared(bd, inst, Kind::LoadTensor));
    let area = match shared {
        Some(bd) => {
            let array = *l.scratch.whole.get(&m.component).ok_or_else(|| invalid(b, "a shared tensor load into no area".into()))?;
            let area = Area { array, component: m.component, base: b.module.constant_u32(0) };
            workgroup_barrier(b);
            if view.is_some() {
                let writes = bd.writes(b, false);
                b.if_then(writes, |b| l.store(b, area, object, m.cols));
                workgroup_barrier(b);
            }
            area
        }
        None => {
            let area = l.area(b, m.component, n);
            l.barrier(b);
            l.store(b, area, object, m.cols);
            l.barrier(b);
            area
        }
    };
    let addressing = tensor::Addressing { layout, clamp, dim, view, load, decode: site.is_some() };
    let cols_c = b.module.constant_u32(m.cols);
    let boolean = b.module.type_bool();
    let uint = l.uint;
    let mut failure: Option<String> = None;
    let each = |b: &mut Builder<'_>, i: Word| {
        let row = b.op(Op::UDiv, uint, &[i, cols_c]);
        let col = b.op(Op::UMod, uint, &[i, cols_c]);
        let row = match first_row {
            Some(first) => b.iadd(uint, first, row),
            None => row,
        };
        let tensor::Element { valid, index, out_of_bounds: oob, blocks, within } = tensor::element(b, &addressing, row, col, m.cols);
        let inside = b.op(Op::LogicalNot, boolean, &[oob]);
        let access = match valid {
            Some(v) => b.op(Op::LogicalAnd, boolean, &[v, inside]),
            None => inside,
        };
        let access = match writes {
            Some(w) => b.op(Op::LogicalAnd, boolean, &[w, access]),
            None => access,
        };
        b.if_then(access, |b| {
            if let Some(site) = &site {
                let v = site.decode(b, index, &blocks, &within);
                l.write(b, area, i, v);
                return;
            }
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
    };
    match shared {
        Some(_) => workgroup_for_each(b, types, n, each).map_err(|e| invalid(b, e))?,
        None => l.for_each(b, n, each),
    }
    if let Some(e) = failure {
        return Err(invalid(b, e));
    }
    if !load {
        return Ok(None);
    }
    match shared {
        Some(_) => workgroup_barrier(b),
        None => l.barrier(b),
    }
    let ty = inst.ty()?;
    Ok(Some(l.load(b, area, ty, CooperativeMatrixLayout::RowMajorKHR, m.cols)))
}

/// `OpCooperativeMatrixLoadKHR` of a banded workgroup-scope matrix and `StoreKHR` of any
/// workgroup-scope matrix: a band's pointer moves to its first row (`first_row x Stride`
/// row-major, `first_row` components column-major), and only the sub-groups that write it
/// store a matrix.
fn khr_access(b: &mut Builder<'_>, types: &Types, bands: Option<&Bands>, inst: &Inst, load: bool) -> std::result::Result<Option<Word>, String> {
    let bands = bands.ok_or("a workgroup-scope access without workgroup-scope matrices")?;
    let (ty, _) = matrix_types(types, inst);
    let ty = ty.ok_or("a cooperative-matrix access of no matrix")?;
    let (Some(whole), Some(band)) = (bands.whole(types, ty), bands.held(types, ty)) else {
        return Err("a workgroup-scope access of a matrix with dimensions outside 1..=1024".into());
    };
    let banded = bands.is_banded(ty);
    let (layout_at, pointer) = (if load { 1 } else { 2 }, inst.id(0).map_err(|e| e.to_string())?);
    let mut operands = inst.operands.clone();
    if banded {
        let uint = b.module.type_int(32, false);
        let layout = inst.id(layout_at).ok().and_then(|l| types.const_u32(l));
        let first = bands.first_row(b, whole.rows);
        let pointee = types.type_of(pointer).and_then(|t| types.pointer(t)).map(|(_, p)| component_bytes(types, p)).ok_or("a matrix access through a value that is not a pointer")?;
        let component = component_bytes(types, whole.component);
        let offset = match layout.and_then(CooperativeMatrixLayout::from_u32) {
            Some(CooperativeMatrixLayout::RowMajorKHR) => {
                let stride = inst.id(layout_at + 1).map_err(|e| e.to_string())?;
                let stride = match types.type_of(stride).and_then(|t| types.int(t)) {
                    Some((32, false)) => stride,
                    Some((32, true)) => b.bitcast(uint, stride),
                    Some(_) => b.op(Op::UConvert, uint, &[stride]),
                    None => return Err(format!("a matrix stride %{stride} that is not an integer")),
                };
                b.imul(uint, first, stride)
            }
            Some(CooperativeMatrixLayout::ColumnMajorKHR) if (band.rows * component).is_multiple_of(pointee) => {
                let (num, den) = (b.module.constant_u32(component), b.module.constant_u32(pointee));
                let bytes = b.imul(uint, first, num);
                b.op(Op::UDiv, uint, &[bytes, den])
            }
            Some(CooperativeMatrixLayout::ColumnMajorKHR) => {
                return Err(format!("a band of {} rows of a column-major workgroup-scope matrix does not start at a whole {pointee}-byte element of its pointer", band.rows));
            }
            _ => return Err("a workgroup-scope matrix access whose layout is not a constant row- or column-major one".into()),
        };
        operands[0] = Operand::Id(element_pointer(b, types, pointer, offset)?);
    }
    if load {
        return Ok(Some(b.emit(Op::CooperativeMatrixLoadKHR, ty, operands)));
    }
    let writes = bands.writes(b, banded);
    b.if_then(writes, |b| b.emit_void(Op::CooperativeMatrixStoreKHR, operands));
    Ok(None)
}

/// A Use conversion or transpose from or to a workgroup-scope matrix that is not band to
/// band: the operand (its components converted first, as a matrix of the operand's Use) is
/// gathered whole into workgroup memory and the result loaded from there: all of it for a
/// replicated result, its band's rows for a banded one (row-major, or column-major for a
/// transpose).
fn relayout_through_workgroup(b: &mut Builder<'_>, types: &Types, l: &Lowering<'_>, inst: &Inst, (src_ty, dst_ty): (Word, Word), transpose: bool) -> std::result::Result<Word, String> {
    let bands = l.bands.ok_or("a gather without workgroup-scope matrices")?;
    let of = |t: Word| bands.whole(types, t).ok_or("a matrix with dimensions outside 1..=1024");
    let (src, dst) = (of(src_ty)?, of(dst_ty)?);
    let m = inst.id(0).map_err(|e| e.to_string())?;
    let value = match inst.op().filter(|op| CONVERSIONS.contains(op)) {
        Some(op) if dst.component != src.component => {
            let converted = bands.held_type(b.module, types, src_ty, dst.component).ok_or("a conversion of a matrix with dimensions outside 1..=1024")?;
            b.op(op, converted, &[m])
        }
        _ => m,
    };
    let area = l.gather(b, types, value, src_ty, dst.component)?;
    let offset = match bands.is_banded(dst_ty) {
        true => {
            let first = bands.first_row(b, dst.rows);
            if transpose {
                first
            } else {
                let cols = b.module.constant_u32(dst.cols);
                b.imul(l.uint, first, cols)
            }
        }
        false => b.module.constant_u32(0),
    };
    let layout = if transpose { CooperativeMatrixLayout::ColumnMajorKHR } else { CooperativeMatrixLayout::RowMajorKHR };
    Ok(l.load(b, Area { base: offset, ..area }, dst_ty, layout, src.cols))
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
