//! `PadCooperativeMatrix`: cooperative-matrix MulAdds whose shape no listed shape divides are
//! padded with zeros up to one that some listed shape divides (on the H100, 8x8x8 onto 16x8x8
//! and 24x40x24 onto 32x40x24, a grid of 16x8x8 tiles), so that they run on the device's matrix
//! units instead of being emulated.
//!
//! For each `OpCooperativeMatrixMulAddKHR` whose M x N x K the target does not list and no
//! listed shape of its types divides, the listed shape of its types that needs the fewest padded
//! multiply-adds is chosen (for a saturating MulAdd only one with k >= K, so that the sum
//! saturates once). Its matrix types grow to the padded sizes: A M' x K', B K' x N', C and the
//! result M' x N' (`tile-cooperative-matrix` then tiles them where M', N' or K' exceed the listed
//! shape). The padding must hold zeros where a MulAdd reads it (A's columns and B's rows beyond
//! K); the rest never reaches memory:
//!
//! - `OpCooperativeMatrixLoadKHR` of a padded type goes through the type's per-subgroup staging
//!   area in workgroup memory, zeroed once at the entry point's start: the subgroup's lanes copy
//!   the matrix's elements into it (a whole word each where the matrix's lines fill words,
//!   reading nothing outside the matrix), so that its padding stays zero, then the matrix is
//!   loaded from it;
//! - `OpCooperativeMatrixStoreKHR` stores into a staging area of its component type and the
//!   lanes copy the matrix's elements out of it;
//! - a MulAdd operand A or B that is not known to hold zeros in its padding (a matrix built from
//!   a scalar, arithmetic that does not keep zeros, a value read from a variable) is re-masked
//!   through the staging array first. Loads, null matrices, phis, selects and copies of such
//!   values, negations, conversions and scaling keep zeros;
//! - `OpCooperativeMatrixLengthKHR` and element-wise operations apply to the padded matrices
//!   as they are (each element's position in a matrix is opaque to a module anyway). A matrix
//!   type converted to or from a padded one, or combined with one element-wise (an f32
//!   accumulator rounded to f16 for its store), takes the same padding.
//!
//! Types that keep their size (C and the result where only K is padded) are not staged.
//!
//! Staging arrays (one per loaded padded type, and one per component type of stored or
//! re-masked matrices, each `NumSubgroups x` the largest such padded matrix) are sized from the workgroup size (`LocalSize`, `LocalSizeId` or a `WorkgroupSize`
//! constant, specialization constants included) and the target's smallest sub-group; copies
//! are followed by sub-group barriers, and their loops are marked `DontUnroll` where the target
//! unrolls small loops into per-lane memory branches (`Workarounds::unrolls_element_loops`).
//!
//! Preconditions: a target with cooperative matrices; one entry point; matrix dimensions
//! constants or specialization constants (frozen to their defaults, as the tiling and the
//! emulation freeze them). Padded loads and stores need a constant layout, a stride, and a
//! pointer (an access chain into an array, or a PhysicalStorageBuffer pointer) to a scalar or
//! vector whose scalars hold 1, 2 or 4 components (bit-cast where a scalar is another type of
//! the component's width; unpacked and packed where it holds several: IREE stages int8 and f16
//! fragments in `uvec4` arrays). A store through scalars that hold several components writes
//! whole words, one lane each, and needs the matrix's lines to fill them. A module this cannot pad in full (conflicting paddings of one
//! type, an element-wise operation between differently padded matrices, an access it cannot
//! stage, staging that exceeds the workgroup memory) is left as it is, and the pass says why in
//! the report: `emulate-cooperative-matrix` then emulates it.

use crate::analysis::Types;
use crate::error::Result;
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::check_cooperative_matrix::first_unlisted;
use crate::passes::subgroup_scratch::{MatrixMemory as Memory, SubgroupScratch};
use crate::passes::tile_cooperative_matrix::{access_chains, freeze_dimensions, freeze_layouts, matrix, pointer_class, MulAddTypes};
use crate::profile::DeviceCaps;
use spirv::{CooperativeMatrixLayout, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

pub struct PadCooperativeMatrix;

/// A padded matrix type: its rows and columns, and the padded ones.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Padding {
    component: Word,
    rows: u32,
    cols: u32,
    padded_rows: u32,
    padded_cols: u32,
}

impl Padding {
    fn elements(&self) -> u32 {
        self.padded_rows * self.padded_cols
    }
}

/// Instructions that move matrices without looking at their elements.
const MOVES: &[Op] = &[Op::Phi, Op::Select, Op::CopyObject, Op::Load, Op::Store, Op::Variable, Op::FunctionCall, Op::ReturnValue, Op::Undef, Op::CompositeExtract, Op::CompositeInsert];

/// Instructions on matrices that are not element-wise: their operand and result types are
/// padded independently.
const NOT_ELEMENT_WISE: &[Op] = &[
    Op::CooperativeMatrixLoadKHR,
    Op::CooperativeMatrixStoreKHR,
    Op::CooperativeMatrixMulAddKHR,
    Op::CooperativeMatrixLengthKHR,
    Op::AccessChain,
    Op::InBoundsAccessChain,
    Op::Load,
    Op::Store,
    Op::Variable,
    Op::FunctionCall,
    Op::CompositeExtract,
    Op::CompositeInsert,
];

/// Element-wise instructions that keep zeros zero (a padded operand that holds zeros gives a
/// result that does).
const KEEP_ZEROS: &[Op] = &[Op::FNegate, Op::SNegate, Op::FConvert, Op::SConvert, Op::UConvert, Op::ConvertFToS, Op::ConvertFToU, Op::ConvertSToF, Op::ConvertUToF, Op::MatrixTimesScalar, Op::Bitcast];

impl Pass for PadCooperativeMatrix {
    fn name(&self) -> &'static str {
        "pad-cooperative-matrix"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        target.has_cooperative_matrix()
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if first_unlisted(module, cx.target)?.is_none() {
            return Ok(outcome);
        }
        if !crate::kernel::split_subgroups(module).is_empty() {
            outcome.notes.push("not padded: the module's sub-groups are split out of the device's, so its matrices are emulated".into());
            return Ok(outcome);
        }
        if let Err(d) = freeze_dimensions(module) {
            outcome.notes.push(format!("not padded: dimension %{d} is not a constant"));
            return Ok(outcome);
        }
        freeze_layouts(module);
        let types = Types::new(module);
        let plan = match plan(module, &types, cx.target) {
            Ok(p) if p.is_empty() => return Ok(outcome),
            Ok(p) => p,
            Err(why) => {
                outcome.notes.push(format!("not padded: {why}"));
                return Ok(outcome);
            }
        };
        let clean = zero_padded(module, &types, &plan);
        let stage = match Staging::new(module, &types, cx.target, &plan, &clean) {
            Ok(s) => s,
            Err(why) => {
                outcome.notes.push(format!("not padded: {why}"));
                return Ok(outcome);
            }
        };
        let mut ids: Vec<&Word> = plan.keys().collect();
        ids.sort();
        for id in ids {
            let p = plan[id];
            outcome.notes.push(format!("%{id} ({}x{}): padded to {}x{}", p.rows, p.cols, p.padded_rows, p.padded_cols));
        }
        rewrite(module, &types, &plan, &stage, &clean, &mut outcome)?;
        outcome.changed = true;
        Ok(outcome)
    }
}

/// The padding of every matrix type to pad, or why the module cannot be padded.
fn plan(module: &Module, types: &Types, target: &DeviceCaps) -> std::result::Result<HashMap<Word, Padding>, String> {
    let mut plan: HashMap<Word, Padding> = HashMap::new();
    let assign = |plan: &mut HashMap<Word, Padding>, ty: Word, rows: u32, cols: u32| -> std::result::Result<(), String> {
        let Some(m) = matrix(types, ty) else { return Err(format!("%{ty} is not a matrix type of constant size")) };
        let p = Padding { component: m.component, rows: m.rows, cols: m.cols, padded_rows: rows, padded_cols: cols };
        match plan.insert(ty, p) {
            Some(old) if old != p => Err(format!("matrix type %{ty} would be padded both to {}x{} and to {rows}x{cols}", old.padded_rows, old.padded_cols)),
            _ => Ok(()),
        }
    };
    for inst in module.functions.iter().flat_map(|f| f.blocks.iter().flat_map(|b| &b.insts)).filter(|i| i.is(Op::CooperativeMatrixMulAddKHR)) {
        let Some(t) = MulAddTypes::of(types, inst)? else { continue };
        let (m, n, k) = t.mnk();
        let listed = target.cooperative_matrix.iter().filter(|s| t.typed_like(s));
        if listed.clone().any(|s| m % s.m == 0 && n % s.n == 0 && k % s.k == 0 && (!t.saturating || s.k == k)) {
            continue;
        }
        let up = |v: u32, d: u32| v.div_ceil(d) * d;
        let cost = |s: &crate::profile::CoopMatShape| (up(m, s.m) as u64 * up(n, s.n) as u64 * up(k, s.k) as u64, u64::MAX - (s.m * s.n * s.k) as u64);
        let Some(s) = listed.filter(|s| !t.saturating || k <= s.k).min_by_key(|s| cost(s)) else { continue };
        let (pm, pn, pk) = (up(m, s.m), up(n, s.n), up(k, s.k));
        let [ta, tb, tc, tr] = t.ids;
        assign(&mut plan, ta, pm, pk)?;
        assign(&mut plan, tb, pk, pn)?;
        assign(&mut plan, tc, pm, pn)?;
        assign(&mut plan, tr, pm, pn)?;
    }
    // Matrices converted to or from padded ones, or computed element-wise with them (an f32
    // accumulator rounded to f16 for its store, an f16 fragment widened into the accumulator)
    // take the same padding.
    let ops: Vec<&Inst> = module.functions.iter().flat_map(|f| f.insts()).filter(|i| i.op().is_some_and(|op| !NOT_ELEMENT_WISE.contains(&op))).collect();
    loop {
        let before = plan.len();
        for inst in &ops {
            let matrices: Vec<Word> =
                inst.result_type.into_iter().chain(inst.operands.iter().filter_map(Operand::id).filter_map(|v| types.type_of(v))).filter(|t| matrix(types, *t).is_some()).collect();
            let Some(p) = matrices.iter().find_map(|t| plan.get(t)).copied() else { continue };
            for t in matrices {
                if !plan.contains_key(&t) && matrix(types, t).is_some_and(|m| (m.rows, m.cols) == (p.rows, p.cols)) {
                    assign(&mut plan, t, p.padded_rows, p.padded_cols)?;
                }
            }
        }
        if plan.len() == before {
            break;
        }
    }
    // Types that keep their size (an accumulator where only K is padded) need no staging.
    plan.retain(|_, p| (p.rows, p.cols) != (p.padded_rows, p.padded_cols));
    if plan.is_empty() {
        return Ok(plan);
    }
    // Every instruction on a padded matrix must be one the rewrite knows.
    let chains = access_chains(module);
    let padded_value = |v: Word| types.type_of(v).and_then(|t| plan.get(&t)).copied();
    let in_header = |b: &crate::ir::Block| b.insts.iter().any(|i| i.is(Op::LoopMerge));
    for block in module.functions.iter().flat_map(|f| f.blocks.iter()) {
        for inst in &block.insts {
            let result = inst.result_type.and_then(|t| plan.get(&t)).copied();
            let operands: Vec<Padding> = inst.operands.iter().filter_map(Operand::id).filter_map(padded_value).collect();
            if result.is_none() && operands.is_empty() {
                continue;
            }
            let Some(op) = inst.op() else { return Err(format!("an unknown instruction on a padded matrix at word {}", inst.at())) };
            let at = inst.at();
            match op {
                Op::CooperativeMatrixLoadKHR | Op::CooperativeMatrixStoreKHR => {
                    let load = op == Op::CooperativeMatrixLoadKHR;
                    let (layout, stride, ty) =
                        if load { (inst.id(1), inst.operands.get(2), inst.result_type) } else { (inst.id(2), inst.operands.get(3), inst.id(1).ok().and_then(|v| types.type_of(v))) };
                    let ptr = inst.id(0).map_err(|e| e.to_string())?;
                    let layout = layout.ok().and_then(|l| types.const_u32(l));
                    let constant_layout = layout.is_some_and(|l| l <= 1);
                    let psb = pointer_class(types, ptr) == Some(StorageClass::PhysicalStorageBuffer as u32);
                    let addressable = psb || chains.get(&ptr).is_some_and(|c| c.operands.len() >= 2);
                    if !(constant_layout && stride.and_then(Operand::id).is_some() && addressable) {
                        return Err(format!("{} at word {at}: a padded access needs a constant layout, a stride and a pointer into an array or a physical buffer", inst.name()));
                    }
                    let m = ty.and_then(|t| matrix(types, t));
                    let Some(memory) = m.and_then(|m| Memory::of(types, ptr, m.component)) else {
                        return Err(format!("{} at word {at}: a padded access needs a pointer to scalars or vectors whose components hold whole matrix components", inst.name()));
                    };
                    let column_major = layout == Some(CooperativeMatrixLayout::ColumnMajorKHR as u32);
                    let minor = m.map_or(0, |m| if column_major { m.rows } else { m.cols });
                    if !load && minor % memory.per_word != 0 {
                        return Err(format!("{} at word {at}: a padded store of lines of {minor} components into words of {}", inst.name(), memory.per_word));
                    }
                    if in_header(block) {
                        return Err(format!("{} at word {at} is in a loop header", inst.name()));
                    }
                }
                Op::CooperativeMatrixMulAddKHR => {
                    if in_header(block) {
                        return Err(format!("the MulAdd at word {at} is in a loop header"));
                    }
                }
                Op::CooperativeMatrixLengthKHR => {}
                Op::CompositeConstruct if inst.operands.len() == 1 => {}
                Op::AccessChain => {}
                op if MOVES.contains(&op) => {}
                _ => {
                    // Element-wise: every matrix operand padded like the result.
                    let shape = |p: &Padding| (p.rows, p.cols, p.padded_rows, p.padded_cols);
                    let same = result.is_some_and(|r| operands.iter().all(|o| shape(o) == shape(&r)));
                    let all_matrices_padded = inst.operands.iter().filter_map(Operand::id).filter_map(|v| types.type_of(v)).filter(|t| matrix(types, *t).is_some()).all(|t| plan.contains_key(&t));
                    if !(same && all_matrices_padded) {
                        return Err(format!("{} at word {at} mixes matrices padded differently", inst.name()));
                    }
                }
            }
        }
    }
    for g in module.globals() {
        if g.is(Op::SpecConstantOp) && g.operands.iter().filter_map(Operand::id).any(|t| plan.contains_key(&t)) {
            return Err("a specialization-constant operation on a padded matrix type".into());
        }
    }
    Ok(plan)
}

/// The staging arrays and what indexing them needs.
struct Staging {
    /// Padded matrix type -> (workgroup array variable, elements per subgroup): where its loads
    /// stage it. Each subgroup's area is zeroed once, and loads write only the matrix's
    /// elements, so its padding stays zero.
    loads: HashMap<Word, (Word, u32)>,
    /// Component type -> (workgroup array variable, elements per subgroup): where stores and
    /// re-masking stage matrices of that component type.
    scratch: HashMap<Word, (Word, u32)>,
    /// How sub-groups go over their areas.
    areas: SubgroupScratch,
}

impl Staging {
    fn new(module: &mut Module, types: &Types, target: &DeviceCaps, plan: &HashMap<Word, Padding>, clean: &HashSet<Word>) -> std::result::Result<Staging, String> {
        // Loaded types; components of stored and re-masked matrices.
        let padded_of = |v: Word| types.type_of(v).and_then(|t| plan.get(&t)).copied();
        let mut loaded: Vec<Word> = Vec::new();
        let mut per_component: HashMap<Word, u32> = HashMap::new();
        for inst in module.functions.iter().flat_map(|f| f.insts()) {
            let scratch: Vec<Padding> = match inst.op() {
                Some(Op::CooperativeMatrixLoadKHR) => {
                    loaded.extend(inst.result_type.filter(|t| plan.contains_key(t)));
                    Vec::new()
                }
                Some(Op::CooperativeMatrixStoreKHR) => inst.id(1).ok().and_then(padded_of).into_iter().collect(),
                Some(Op::CooperativeMatrixMulAddKHR) => inst.operands.iter().take(2).filter_map(Operand::id).filter(|v| !clean.contains(v)).filter_map(padded_of).collect(),
                _ => Vec::new(),
            };
            for p in scratch {
                let e = per_component.entry(p.component).or_default();
                *e = (*e).max(p.elements());
            }
        }
        loaded.sort_unstable();
        loaded.dedup();
        let mut components: Vec<(Word, u32)> = per_component.into_iter().collect();
        components.sort_unstable();
        let areas: Vec<(Word, u32)> = loaded.iter().map(|t| (plan[t].component, plan[t].elements())).chain(components.iter().copied()).collect();
        let (scratch, arrays) = SubgroupScratch::new(module, types, target, &areas).map_err(|e| format!("staging {e}"))?;
        let mut arrays = arrays.into_iter();
        let loads = loaded.iter().map(|t| (*t, (arrays.next().unwrap_or(0), plan[t].elements()))).collect();
        let staged = components.into_iter().map(|(c, e)| (c, (arrays.next().unwrap_or(0), e))).collect();
        Ok(Staging { loads, scratch: staged, areas: scratch })
    }
}

/// Values whose padding holds zeros: padded loads, null matrices, and what moves or keeps them.
fn zero_padded(module: &Module, types: &Types, plan: &HashMap<Word, Padding>) -> HashSet<Word> {
    let padded = |v: Word| types.type_of(v).is_some_and(|t| plan.contains_key(&t));
    let mut clean: HashSet<Word> = module.globals().iter().filter(|g| g.is(Op::ConstantNull) && g.result_type.is_some_and(|t| plan.contains_key(&t))).filter_map(|g| g.result_id).collect();
    let insts: Vec<&Inst> = module.functions.iter().flat_map(|f| f.insts()).filter(|i| i.result_id.is_some_and(padded)).collect();
    loop {
        let before = clean.len();
        for inst in &insts {
            let Some(id) = inst.result_id else { continue };
            let matrix_operands: Vec<Word> = inst.operands.iter().filter_map(Operand::id).filter(|v| padded(*v)).collect();
            let keeps = match inst.op() {
                Some(Op::CooperativeMatrixLoadKHR) => true,
                Some(Op::Phi) => inst.operands.chunks(2).filter_map(|p| p.first().and_then(Operand::id)).all(|v| clean.contains(&v)),
                Some(Op::Select | Op::CopyObject) => !matrix_operands.is_empty() && matrix_operands.iter().all(|v| clean.contains(v)),
                Some(op) if KEEP_ZEROS.contains(&op) => matrix_operands.len() == 1 && clean.contains(&matrix_operands[0]),
                // A product of two padded matrices that both hold zeros.
                Some(Op::FMul | Op::IMul) => matrix_operands.len() == 2 && matrix_operands.iter().all(|v| clean.contains(v)),
                _ => false,
            };
            if keeps {
                clean.insert(id);
            }
        }
        if clean.len() == before {
            return clean;
        }
    }
}

/// Ids the rewrite uses everywhere.
struct Common {
    uint: Word,
    boolean: Word,
    row_major: Word,
}

fn rewrite(module: &mut Module, types: &Types, plan: &HashMap<Word, Padding>, stage: &Staging, clean: &HashSet<Word>, outcome: &mut Outcome) -> Result<()> {
    let chains = access_chains(module);
    let uint = module.type_int(32, false);
    let common = Common { uint, boolean: module.type_bool(), row_major: module.constant_u32(CooperativeMatrixLayout::RowMajorKHR as u32) };
    let padded_of = |v: Word| types.type_of(v).and_then(|t| plan.get(&t)).copied();
    for f in 0..module.functions.len() {
        let mut b = 0;
        while b < module.functions[f].blocks.len() {
            let mut i = 0;
            while i < module.functions[f].blocks[b].insts.len() {
                let inst = module.functions[f].blocks[b].insts[i].clone();
                let staged = match inst.op() {
                    Some(Op::CooperativeMatrixLoadKHR) => inst.result_type.and_then(|t| plan.get(&t)).is_some(),
                    Some(Op::CooperativeMatrixStoreKHR) => inst.id(1).ok().and_then(padded_of).is_some(),
                    Some(Op::CooperativeMatrixMulAddKHR) => [0, 1].iter().any(|k| inst.id(*k).ok().is_some_and(|v| padded_of(v).is_some() && !clean.contains(&v))),
                    _ => false,
                };
                if !staged {
                    i += 1;
                    continue;
                }
                module.functions[f].blocks[b].insts.remove(i);
                outcome.count(inst.opcode);
                let mut bld = Builder::new(module, Cursor { function: f, block: b, index: i }).with_origin(inst.origin);
                let s = Stager { c: &common, stage, chains: &chains, types };
                match inst.op() {
                    Some(Op::CooperativeMatrixLoadKHR) => {
                        let p = plan[&inst.ty()?];
                        s.load(&mut bld, &inst, p)?;
                    }
                    Some(Op::CooperativeMatrixStoreKHR) => {
                        if let Some(p) = padded_of(inst.id(1)?) {
                            s.store(&mut bld, &inst, p)?;
                        }
                    }
                    _ => {
                        let mut inst = inst.clone();
                        for k in 0..2 {
                            let v = inst.id(k)?;
                            if let (Some(p), false) = (padded_of(v), clean.contains(&v)) {
                                let ty = types.type_of(v).unwrap_or(0);
                                inst.operands[k] = Operand::Id(s.remask(&mut bld, v, ty, p));
                            }
                        }
                        bld.insert(inst);
                    }
                }
                b = bld.cursor.block;
                i = bld.cursor.index;
            }
            b += 1;
        }
    }
    // Load areas start zeroed, at the entry point's start (after its variables).
    if !stage.loads.is_empty() {
        let entry = module.entry_points.first().and_then(|e| e.operands.get(1)).and_then(Operand::id);
        if let Some(f) = module.functions.iter().position(|f| Some(f.id()) == entry) {
            let index = module.functions[f].blocks.first().map_or(0, |b| b.insts.iter().rposition(|i| i.is(Op::Variable)).map_or(0, |v| v + 1));
            let mut bld = Builder::new(module, Cursor { function: f, block: 0, index });
            Stager { c: &common, stage, chains: &chains, types }.zero_load_areas(&mut bld, plan);
        }
    }
    // The types grow last: the rewrites above read the original sizes from the plan. (In id
    // order, so that new size constants do not depend on hashing.)
    let mut grown: Vec<(&Word, &Padding)> = plan.iter().collect();
    grown.sort_unstable_by_key(|(ty, _)| **ty);
    for (&ty, p) in grown {
        let (r, c) = (module.constant_u32(p.padded_rows), module.constant_u32(p.padded_cols));
        if let Some(def) = module.globals_mut().iter_mut().find(|g| g.result_id == Some(ty) && g.is(Op::TypeCooperativeMatrixKHR) && g.operands.len() >= 4) {
            def.operands[2] = Operand::Id(r);
            def.operands[3] = Operand::Id(c);
        }
    }
    module.interner.clear();
    module.merge_duplicate_types();
    Ok(())
}

/// Emits the staged accesses.
struct Stager<'a> {
    c: &'a Common,
    stage: &'a Staging,
    chains: &'a HashMap<Word, Inst>,
    types: &'a Types,
}

impl Stager<'_> {
    /// The subgroup's staging area for `p`: (pointer to its first element, the array, the area's
    /// first index).
    fn area(&self, bld: &mut Builder<'_>, p: Padding) -> (Word, Word, Word) {
        let (array, per) = self.stage.scratch.get(&p.component).copied().unwrap_or((0, 0));
        self.area_of(bld, p.component, array, per)
    }

    /// The subgroup's staging area in `array` (`per` elements each): (pointer to its first
    /// element, the array, the area's first index).
    fn area_of(&self, bld: &mut Builder<'_>, component: Word, array: Word, per: u32) -> (Word, Word, Word) {
        let base = self.first_index(bld, per);
        let ptr_ty = bld.module.type_pointer(StorageClass::Workgroup, component);
        (bld.access_chain(ptr_ty, array, &[base]), array, base)
    }

    /// The first index of the subgroup's area in an array of `per` elements per subgroup.
    fn first_index(&self, bld: &mut Builder<'_>, per: u32) -> Word {
        self.stage.areas.area_start(bld, per)
    }

    /// Zeroes the subgroup's load areas (at the start of the entry point).
    fn zero_load_areas(&self, bld: &mut Builder<'_>, plan: &HashMap<Word, Padding>) {
        let mut loaded: Vec<(&Word, &(Word, u32))> = self.stage.loads.iter().collect();
        loaded.sort_unstable();
        let uint = self.c.uint;
        for (ty, &(array, per)) in loaded {
            let p = plan[ty];
            let base = self.first_index(bld, per);
            let elem_ptr = bld.module.type_pointer(StorageClass::Workgroup, p.component);
            let zero = bld.module.constant_null(p.component);
            self.for_each(bld, p.elements(), |bld, index| {
                let at = bld.iadd(uint, base, index);
                let slot = bld.access_chain(elem_ptr, array, &[at]);
                bld.store(slot, zero);
            });
        }
    }

    /// Runs `body(bld, row, col, count)` over the elements of the unpadded matrix stored as
    /// `column_major` says, `count` consecutive elements of a line at a time (`run`, where
    /// `run` divides the lines, else 1), each run on one lane of the subgroup.
    fn for_each_run(&self, bld: &mut Builder<'_>, p: Padding, column_major: bool, run: u32, mut body: impl FnMut(&mut Builder<'_>, Word, Word, u32)) {
        let uint = self.c.uint;
        let (lines, line) = if column_major { (p.cols, p.rows) } else { (p.rows, p.cols) };
        let run = if line % run == 0 { run } else { 1 };
        let runs_per_line = line / run;
        let (rpl, run_c) = (bld.module.constant_u32(runs_per_line), bld.module.constant_u32(run));
        self.for_each(bld, lines * runs_per_line, |bld, index| {
            let major = bld.op(Op::UDiv, uint, &[index, rpl]);
            let r = bld.op(Op::UMod, uint, &[index, rpl]);
            let minor = if run == 1 { r } else { bld.imul(uint, r, run_c) };
            let (row, col) = if column_major { (minor, major) } else { (major, minor) };
            body(bld, row, col, run);
        });
    }

    /// A pointer to the staging slot of element (row + dr, col + dc) of a padded matrix whose
    /// area starts at index `base` of `array`.
    #[allow(clippy::too_many_arguments)]
    fn slot(&self, bld: &mut Builder<'_>, p: Padding, array: Word, base: Word, (row, col): (Word, Word), (dr, dc): (u32, u32)) -> Word {
        let uint = self.c.uint;
        let pcols = bld.module.constant_u32(p.padded_cols);
        let offset = |bld: &mut Builder<'_>, v: Word, d: u32| {
            if d == 0 {
                v
            } else {
                let d = bld.module.constant_u32(d);
                bld.iadd(uint, v, d)
            }
        };
        let (r, c) = (offset(bld, row, dr), offset(bld, col, dc));
        let scaled = bld.imul(uint, r, pcols);
        let index = bld.iadd(uint, scaled, c);
        let at = bld.iadd(uint, base, index);
        let elem_ptr = bld.module.type_pointer(StorageClass::Workgroup, p.component);
        bld.access_chain(elem_ptr, array, &[at])
    }

    fn barrier(&self, bld: &mut Builder<'_>) {
        self.stage.areas.barrier(bld);
    }

    /// Runs `body(bld, index)` for every index below `total`, each on one lane of the subgroup.
    fn for_each(&self, bld: &mut Builder<'_>, total: u32, body: impl FnMut(&mut Builder<'_>, Word)) {
        self.stage.areas.for_each(bld, total, body);
    }

    /// Runs `body(bld, index, row, column)` for every element of the padded matrix, each on
    /// one lane of the subgroup.
    fn for_each_element(&self, bld: &mut Builder<'_>, p: Padding, mut body: impl FnMut(&mut Builder<'_>, Word, Word, Word)) {
        let uint = self.c.uint;
        let cols = bld.module.constant_u32(p.padded_cols);
        self.for_each(bld, p.elements(), |bld, index| {
            let row = bld.op(Op::UDiv, uint, &[index, cols]);
            let col = bld.op(Op::UMod, uint, &[index, cols]);
            body(bld, index, row, col);
        });
    }

    /// Whether (row, col) lies inside the unpadded matrix.
    fn in_matrix(&self, bld: &mut Builder<'_>, p: Padding, row: Word, col: Word) -> Word {
        let boolean = self.c.boolean;
        let (rows, cols) = (bld.module.constant_u32(p.rows), bld.module.constant_u32(p.cols));
        let r = bld.op(Op::ULessThan, boolean, &[row, rows]);
        let c = bld.op(Op::ULessThan, boolean, &[col, cols]);
        bld.op(Op::LogicalAnd, boolean, &[r, c])
    }

    /// A pointer to the word of `mem` that holds element (row, col) of the matrix `ptr` points
    /// at (stored as `column_major` says, lines `stride` pointee elements apart), and the
    /// element's place in that word where a word holds more than one component.
    #[allow(clippy::too_many_arguments)]
    fn word(&self, bld: &mut Builder<'_>, ptr: Word, mem: Memory, column_major: bool, stride: Word, row: Word, col: Word) -> (Word, Option<Word>) {
        let uint = self.c.uint;
        let (major, minor) = if column_major { (col, row) } else { (row, col) };
        let mut scaled = bld.imul(uint, major, stride);
        if mem.per_element() > 1 {
            let n = bld.module.constant_u32(mem.per_element());
            scaled = bld.imul(uint, scaled, n);
        }
        let offset = bld.iadd(uint, scaled, minor);
        mem.component_pointer(bld, self.types, self.chains, ptr, offset)
    }

    fn memory_operands(&self, mem: Memory) -> Vec<Operand> {
        mem.word_operands(self.types)
    }

    fn load(&self, bld: &mut Builder<'_>, inst: &Inst, p: Padding) -> Result<()> {
        let (ptr, layout, stride) = (inst.id(0)?, inst.id(1)?, inst.id(2)?);
        let stride = bld.to_32_bits(self.types, self.c.uint, stride);
        let column_major = self.types.const_u32(layout) == Some(CooperativeMatrixLayout::ColumnMajorKHR as u32);
        let mem = Memory::of(self.types, ptr, p.component).ok_or_else(|| inst.malformed("a padded load's pointer (checked by the plan)".into()))?;
        let (array, per) = self.stage.loads.get(&inst.ty()?).copied().ok_or_else(|| inst.malformed("a padded load without a staging area".into()))?;
        let (start, array, base) = self.area_of(bld, p.component, array, per);
        let operands = self.memory_operands(mem);
        // Whole words where a line fills them (its first element starts a word: lines start
        // `stride` pointee elements apart), else an element at a time.
        self.for_each_run(bld, p, column_major, mem.per_word, |bld, row, col, run| {
            let (src, part) = self.word(bld, ptr, mem, column_major, stride, row, col);
            let mut ops = vec![Operand::Id(src)];
            ops.extend(operands.iter().cloned());
            let w = bld.emit(Op::Load, mem.word, ops);
            let values: Vec<Word> = match part {
                None if mem.word == p.component => vec![w],
                None => vec![bld.bitcast(p.component, w)],
                Some(part) => {
                    let parts = bld.module.type_vector(p.component, mem.per_word);
                    let parts = bld.bitcast(parts, w);
                    if run == mem.per_word {
                        (0..run).map(|j| bld.emit(Op::CompositeExtract, p.component, vec![Operand::Id(parts), Operand::Literal(j)])).collect()
                    } else {
                        vec![bld.op(Op::VectorExtractDynamic, p.component, &[parts, part])]
                    }
                }
            };
            for (j, v) in (0u32..).zip(values) {
                let d = if column_major { (j, 0) } else { (0, j) };
                let slot = self.slot(bld, p, array, base, (row, col), d);
                bld.store(slot, v);
            }
        });
        self.barrier(bld);
        let pcols = bld.module.constant_u32(p.padded_cols);
        bld.insert(Inst::new(Op::CooperativeMatrixLoadKHR, inst.result_type, inst.result_id, vec![Operand::Id(start), Operand::Id(self.c.row_major), Operand::Id(pcols)]));
        self.barrier(bld);
        Ok(())
    }

    fn store(&self, bld: &mut Builder<'_>, inst: &Inst, p: Padding) -> Result<()> {
        let (ptr, value, layout, stride) = (inst.id(0)?, inst.id(1)?, inst.id(2)?, inst.id(3)?);
        let stride = bld.to_32_bits(self.types, self.c.uint, stride);
        let column_major = self.types.const_u32(layout) == Some(CooperativeMatrixLayout::ColumnMajorKHR as u32);
        let mem = Memory::of(self.types, ptr, p.component).ok_or_else(|| inst.malformed("a padded store's pointer (checked by the plan)".into()))?;
        let (start, array, base) = self.area(bld, p);
        let pcols = bld.module.constant_u32(p.padded_cols);
        bld.emit_void(Op::CooperativeMatrixStoreKHR, vec![Operand::Id(start), Operand::Id(value), Operand::Id(self.c.row_major), Operand::Id(pcols)]);
        self.barrier(bld);
        let operands = self.memory_operands(mem);
        // Element by element, or whole words where words hold several components (the plan
        // checked that the matrix's lines fill them), so that no two lanes write parts of one.
        self.for_each_run(bld, p, column_major, mem.per_word, |bld, row, col, run| {
            let parts: Vec<Word> = (0..run)
                .map(|j| {
                    let slot = self.slot(bld, p, array, base, (row, col), if column_major { (j, 0) } else { (0, j) });
                    bld.load(p.component, slot)
                })
                .collect();
            let v = match parts[..] {
                [v] if mem.word == p.component => v,
                [v] => bld.bitcast(mem.word, v),
                _ => {
                    let ty = bld.module.type_vector(p.component, run);
                    let word = bld.op(Op::CompositeConstruct, ty, &parts);
                    bld.bitcast(mem.word, word)
                }
            };
            let (dst, _) = self.word(bld, ptr, mem, column_major, stride, row, col);
            let mut ops = vec![Operand::Id(dst), Operand::Id(v)];
            ops.extend(operands.iter().cloned());
            bld.emit_void(Op::Store, ops);
        });
        self.barrier(bld);
        Ok(())
    }

    /// `v` (of padded type `ty`) with zeros written over its padding.
    fn remask(&self, bld: &mut Builder<'_>, v: Word, ty: Word, p: Padding) -> Word {
        let (start, array, base) = self.area(bld, p);
        let pcols = bld.module.constant_u32(p.padded_cols);
        bld.emit_void(Op::CooperativeMatrixStoreKHR, vec![Operand::Id(start), Operand::Id(v), Operand::Id(self.c.row_major), Operand::Id(pcols)]);
        self.barrier(bld);
        let elem_ptr = bld.module.type_pointer(StorageClass::Workgroup, p.component);
        let zero = bld.module.constant_null(p.component);
        let uint = self.c.uint;
        let boolean = self.c.boolean;
        self.for_each_element(bld, p, |bld, index, row, col| {
            let inside = self.in_matrix(bld, p, row, col);
            let outside = bld.op(Op::LogicalNot, boolean, &[inside]);
            bld.if_then(outside, |bld| {
                let at = bld.iadd(uint, base, index);
                let slot = bld.access_chain(elem_ptr, array, &[at]);
                bld.store(slot, zero);
            });
        });
        self.barrier(bld);
        let masked = bld.emit(Op::CooperativeMatrixLoadKHR, ty, vec![Operand::Id(start), Operand::Id(self.c.row_major), Operand::Id(pcols)]);
        self.barrier(bld);
        masked
    }
}
