//! `TileCooperativeMatrix`: cooperative matrices of shapes the target does not list become
//! grids of tiles of a shape it lists (32x32x16 onto 16x16x16, 32x24x16 onto 16x8x16).
//!
//! For each `OpCooperativeMatrixMulAddKHR` whose M x N x K and types the target does not list,
//! the largest listed shape with the same types whose m, n, k divide M, N, K is chosen (one
//! with k = K where the MulAdd saturates, since saturating a sum of partial MulAdds differs
//! from saturating the whole). Each matrix type of such a MulAdd then holds a grid of tiles:
//! A (M x K) of m x k, B (K x N) of k x n, C and the result (M x N) of m x n. The matrix type
//! becomes `OpTypeArray` of its tile type under the same id (tiles row-major over the grid), so
//! variables, function signatures, phis, selects and whole loads and stores of variables stay
//! as they are, and:
//!
//! - `OpCooperativeMatrixLoadKHR` / `StoreKHR`: one access per tile, the pointer moved by the
//!   tile's offset (row-major: `row * stride + column`, column-major: `column * stride + row`;
//!   the stride counts pointee elements, so a tile's column offset must be a whole number of
//!   them) through the access chain's last index or `OpPtrAccessChain`;
//! - `OpCooperativeMatrixMulAddKHR`: per result tile, a chain of listed MulAdds over k;
//! - `OpCooperativeMatrixLengthKHR`: the tile's length times the number of tiles;
//! - element-wise arithmetic, conversions and `OpMatrixTimesScalar`: per tile; a matrix built
//!   from one scalar: tiles built from it; an access chain ending at element `i` of a matrix
//!   (held in a variable, or in an array or struct of them): element `i % L` of tile `i / L`
//!   (`L` the tile's length); `OpCompositeExtract`/`Insert` of element `i` of a matrix value:
//!   the same, through a function variable holding the value.
//!
//! Preconditions: a target with cooperative matrices; matrix dimensions constants or
//! specialization constants, which are frozen to their defaults (the runtime specializes before
//! translating). A module this cannot tile in full (no listed shape divides
//! a MulAdd, conflicting tilings of one type, a layout chosen at run time, an instruction on a
//! tiled matrix not listed above) is left as it is: `emulate-cooperative-matrix` then emulates
//! it, and the pass says why in the report.

use crate::analysis::Types;
use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::check_cooperative_matrix::{component_type, first_unlisted, matrix_listed};
use crate::profile::{CoopMatShape, DeviceCaps, MatrixScope};
use spirv::{CooperativeMatrixLayout, CooperativeMatrixOperands as Flags, Decoration, Op, StorageClass, Word};
use std::collections::HashMap;

pub struct TileCooperativeMatrix;

/// A matrix type: component, rows, columns, use, scope id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct Matrix {
    pub(crate) component: Word,
    pub(crate) rows: u32,
    pub(crate) cols: u32,
    pub(crate) usage: Word,
    pub(crate) scope: Word,
}

/// The types of a MulAdd: matrix type ids of A, B, C and the result, their matrices, their
/// component types as the MulAdd's signedness flags read them, and whether it saturates.
pub(crate) struct MulAddTypes {
    pub(crate) ids: [Word; 4],
    pub(crate) matrices: [Matrix; 4],
    pub(crate) components: [crate::profile::ComponentType; 4],
    pub(crate) saturating: bool,
}

impl MulAddTypes {
    /// Reads `inst` (a MulAdd); `Ok(None)` when an operand is not a matrix value, an error
    /// naming the instruction when dimensions are not constants or do not agree (M x K by K x N
    /// plus M x N into M x N), or no component type fits.
    pub(crate) fn of(types: &Types, inst: &Inst) -> std::result::Result<Option<MulAddTypes>, String> {
        let [a, b, c] = inst.ids().map_err(|e| e.to_string())?;
        let flags = inst.word_opt(3).unwrap_or(0);
        let ty = |v: Word| types.type_of(v);
        let (Some(ta), Some(tb), Some(tc), Ok(tr)) = (ty(a), ty(b), ty(c), inst.ty()) else { return Ok(None) };
        let (Some(ma), Some(mb), Some(mc), Some(mr)) = (matrix(types, ta), matrix(types, tb), matrix(types, tc), matrix(types, tr)) else {
            return Err(format!("MulAdd at word {} has dimensions that are not constants", inst.at()));
        };
        let (m, k, n) = (ma.rows, ma.cols, mb.cols);
        if mb.rows != k || (mc.rows, mc.cols) != (m, n) || (mr.rows, mr.cols) != (m, n) {
            let dims = |x: Matrix| format!("{}x{}", x.rows, x.cols);
            return Err(format!("MulAdd at word {} multiplies {} by {} plus {} into {}", inst.at(), dims(ma), dims(mb), dims(mc), dims(mr)));
        }
        let comp = |m: Matrix, bit: Flags| component_type(types, m.component, types.int(m.component).map(|_| flags & bit.bits() != 0));
        let (Some(ca), Some(cb), Some(cc), Some(cr)) = (
            comp(ma, Flags::MATRIX_A_SIGNED_COMPONENTS_KHR),
            comp(mb, Flags::MATRIX_B_SIGNED_COMPONENTS_KHR),
            comp(mc, Flags::MATRIX_C_SIGNED_COMPONENTS_KHR),
            comp(mr, Flags::MATRIX_RESULT_SIGNED_COMPONENTS_KHR),
        ) else {
            return Err(format!("MulAdd at word {} has component types no listed shape has", inst.at()));
        };
        let saturating = flags & Flags::SATURATING_ACCUMULATION_KHR.bits() != 0;
        Ok(Some(MulAddTypes { ids: [ta, tb, tc, tr], matrices: [ma, mb, mc, mr], components: [ca, cb, cc, cr], saturating }))
    }

    /// (M, N, K).
    pub(crate) fn mnk(&self) -> (u32, u32, u32) {
        (self.matrices[0].rows, self.matrices[1].cols, self.matrices[0].cols)
    }

    /// Whether listed shape `s` has these types and scope, and saturates exactly where this
    /// MulAdd does (Vulkan: a row's `saturatingAccumulation` says whether the operand must be
    /// present).
    pub(crate) fn typed_like(&self, s: &CoopMatShape) -> bool {
        let [ca, cb, cc, cr] = self.components;
        s.scope == MatrixScope::Subgroup && (s.a, s.b, s.c, s.result) == (ca, cb, cc, cr) && s.saturating == self.saturating
    }
}

/// How a matrix type is tiled.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
struct Grid {
    /// Tile rows and columns.
    rows: u32,
    cols: u32,
    /// Tiles down and across.
    down: u32,
    across: u32,
    /// The tile's matrix type (filled in when rewriting).
    tile: Word,
}

impl Grid {
    fn count(&self) -> u32 {
        self.down * self.across
    }
}

/// Element-wise instructions applied tile by tile.
const ELEMENT_WISE: &[Op] = &[
    Op::FAdd,
    Op::FSub,
    Op::FMul,
    Op::FDiv,
    Op::FNegate,
    Op::IAdd,
    Op::ISub,
    Op::IMul,
    Op::SDiv,
    Op::UDiv,
    Op::SNegate,
    Op::FConvert,
    Op::SConvert,
    Op::UConvert,
    Op::ConvertFToS,
    Op::ConvertFToU,
    Op::ConvertSToF,
    Op::ConvertUToF,
    Op::Bitcast,
    Op::MatrixTimesScalar,
];

/// Instructions that only move whole matrices: the type change carries them.
const MOVES: &[Op] = &[Op::Phi, Op::Select, Op::CopyObject, Op::Load, Op::Store, Op::Variable, Op::FunctionCall, Op::ReturnValue, Op::Undef];

impl Pass for TileCooperativeMatrix {
    fn name(&self) -> &'static str {
        "tile-cooperative-matrix"
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
            outcome.notes.push("not tiled: the module's sub-groups are split out of the device's, so its matrices are emulated".into());
            return Ok(outcome);
        }
        if let Err(d) = freeze_dimensions(module) {
            outcome.notes.push(format!("not tiled: dimension %{d} is not a constant"));
            return Ok(outcome);
        }
        freeze_layouts(module);
        let types = Types::new(module);
        let chains = access_chains(module);
        let plan = match plan(module, &types, cx.target, &chains) {
            Ok(p) => p,
            Err(why) => {
                outcome.notes.push(format!("not tiled: {why}"));
                return Ok(outcome);
            }
        };
        if plan.is_empty() {
            return Ok(outcome);
        }
        rewrite(module, &types, &chains, plan, &mut outcome)?;
        outcome.changed = true;
        Ok(outcome)
    }
}

/// Freezes matrix dimensions that are specialization constants to their defaults, as the
/// emulation freezes them (the runtime specializes before it translates); `Err` names a
/// dimension that is neither.
pub(crate) fn freeze_dimensions(module: &mut Module) -> std::result::Result<(), Word> {
    let frozen = Types::new(module);
    let dims: Vec<Word> = module.globals().iter().filter(|g| g.is(Op::TypeCooperativeMatrixKHR)).flat_map(|g| [g.id(2), g.id(3)]).filter_map(|d| d.ok()).collect();
    for d in dims {
        if crate::passes::emulate_cooperative_matrix::dimension(module, &frozen, d).is_err() {
            return Err(d);
        }
    }
    Ok(())
}

/// Replaces the memory-layout operand of every cooperative-matrix load and store that is a
/// specialization constant, or an `OpSpecConstantOp` over them (vk_cooperative_matrix_perf
/// selects B's layout with a specialization constant), by a constant of its value, as the
/// dimensions are frozen: the runtime specializes before it translates.
pub(crate) fn freeze_layouts(module: &mut Module) {
    let mut frozen: HashMap<Word, Word> = HashMap::new();
    for f in 0..module.functions.len() {
        for b in 0..module.functions[f].blocks.len() {
            for i in 0..module.functions[f].blocks[b].insts.len() {
                let inst = &module.functions[f].blocks[b].insts[i];
                let at = match inst.op() {
                    Some(Op::CooperativeMatrixLoadKHR) => 1,
                    Some(Op::CooperativeMatrixStoreKHR) => 2,
                    _ => continue,
                };
                let Some(layout) = inst.operands.get(at).and_then(Operand::id) else { continue };
                let replacement = match frozen.get(&layout) {
                    Some(c) => *c,
                    None => {
                        let def = module.globals().iter().find(|g| g.result_id == Some(layout));
                        let ty = def.and_then(|d| d.result_type);
                        let (Some(ty), false) = (ty, def.is_some_and(|d| d.is(Op::Constant))) else { continue };
                        let Some(value) = crate::specialize::default_value(module, layout) else { continue };
                        let int = module.globals().iter().find(|g| g.result_id == Some(ty) && g.is(Op::TypeInt));
                        let Some((width, signed)) = int.and_then(|d| Some((d.word_opt(0)?, d.word_opt(1)? == 1))) else { continue };
                        let c = module.constant_int(ty, width, signed, value);
                        frozen.insert(layout, c);
                        c
                    }
                };
                module.functions[f].blocks[b].insts[i].operands[at] = Operand::Id(replacement);
            }
        }
    }
}

/// The matrix type `ty`, where its dimensions are constants from 1 to 1024 (larger ones are
/// left to the emulation, which refuses them by name).
pub(crate) fn matrix(types: &Types, ty: Word) -> Option<Matrix> {
    let d = types.defs.get(&ty).filter(|d| d.is(Op::TypeCooperativeMatrixKHR))?;
    let [component, scope, rows, cols, usage] = d.ids().ok()?;
    let dimension = |id: Word| types.const_u32(id).filter(|v| (1..=1024).contains(v));
    Some(Matrix { component, rows: dimension(rows)?, cols: dimension(cols)?, usage, scope })
}

fn is_matrix(types: &Types, ty: Word) -> bool {
    types.defs.get(&ty).is_some_and(|d| d.is(Op::TypeCooperativeMatrixKHR))
}

/// The grid of every matrix type to tile, or why the module cannot be tiled.
fn plan(module: &Module, types: &Types, target: &DeviceCaps, chains: &HashMap<Word, Inst>) -> std::result::Result<HashMap<Word, Grid>, String> {
    let mut grids: HashMap<Word, Grid> = HashMap::new();
    let mut assign = |ty: Word, m: Matrix, rows: u32, cols: u32| -> std::result::Result<(), String> {
        let g = Grid { rows, cols, down: m.rows / rows, across: m.cols / cols, tile: 0 };
        match grids.insert(ty, g) {
            Some(old) if old != g => Err(format!("matrix type %{ty} would be tiled both {}x{} and {rows}x{cols}", old.rows, old.cols)),
            _ => Ok(()),
        }
    };
    for inst in module.functions.iter().flat_map(|f| f.blocks.iter().flat_map(|b| &b.insts)).filter(|i| i.is(Op::CooperativeMatrixMulAddKHR)) {
        let Some(t) = MulAddTypes::of(types, inst)? else { continue };
        let ([ta, tb, tc, tr], [ma, mb, mc, mr]) = (t.ids, t.matrices);
        let [ca, cb, cc, cr] = t.components;
        let (m, n, k) = t.mnk();
        let fits = |s: &&CoopMatShape| t.typed_like(s) && m % s.m == 0 && n % s.n == 0 && k % s.k == 0 && (!t.saturating || s.k == k);
        let Some(s) = target.cooperative_matrix.iter().filter(fits).max_by_key(|s| (s.m * s.n * s.k, s.k)) else {
            return Err(format!("no listed {ca}*{cb}+{cc}->{cr} shape divides the {m}x{n}x{k} MulAdd at word {}", inst.at()));
        };
        assign(ta, ma, s.m, s.k)?;
        assign(tb, mb, s.k, s.n)?;
        assign(tc, mc, s.m, s.n)?;
        assign(tr, mr, s.m, s.n)?;
    }
    // Element-wise instructions carry a grid to the other matrix types they join (the f16 result
    // of converting a tiled f32 accumulator): those get the same tiles, where the device lists
    // the tile type, until nothing changes.
    let element_wise: Vec<&Inst> = module.functions.iter().flat_map(|f| f.blocks.iter().flat_map(|b| &b.insts)).filter(|i| i.op().is_some_and(|op| ELEMENT_WISE.contains(&op))).collect();
    loop {
        let mut changed = false;
        for inst in &element_wise {
            let joined: Vec<Word> = inst.result_type.into_iter().chain(inst.operands.iter().filter_map(Operand::id).filter_map(|v| types.type_of(v))).filter(|t| is_matrix(types, *t)).collect();
            let Some(g) = joined.iter().find_map(|t| grids.get(t).copied()) else { continue };
            for t in joined {
                if grids.contains_key(&t) {
                    continue;
                }
                let Some(m) = matrix(types, t) else { continue };
                let known = component_type(types, m.component, None).is_some() && types.const_u32(m.scope) == Some(spirv::Scope::Subgroup as u32);
                if known && (m.rows, m.cols) == (g.rows * g.down, g.cols * g.across) && matrix_listed(target, types, (m.component, m.scope, m.usage), g.rows, g.cols) {
                    grids.insert(t, g);
                    changed = true;
                }
            }
        }
        if !changed {
            break;
        }
    }
    // Untiled grids (1 x 1) need no rewrite.
    grids.retain(|_, g| g.count() > 1);
    // Every instruction on a tiled matrix must be one the rewrite knows.
    let tiled = |v: Word| types.type_of(v).is_some_and(|t| grids.contains_key(&t));
    for inst in module.functions.iter().flat_map(|f| f.blocks.iter().flat_map(|b| &b.insts)) {
        let result_tiled = inst.result_type.is_some_and(|t| grids.contains_key(&t));
        let operand_tiled = inst.operands.iter().filter_map(Operand::id).any(tiled);
        let into_tiled = element_index(types, &grids, inst);
        if !(result_tiled || operand_tiled || into_tiled.is_some()) {
            continue;
        }
        let Some(op) = inst.op() else { return Err(format!("an unknown instruction on a tiled matrix at word {}", inst.at())) };
        let ok = match op {
            Op::CooperativeMatrixLoadKHR | Op::CooperativeMatrixStoreKHR => {
                let (layout, value_ty) = if op == Op::CooperativeMatrixLoadKHR { (inst.id(1), inst.result_type) } else { (inst.id(2), inst.id(1).ok().and_then(|v| types.type_of(v))) };
                let grid = value_ty.and_then(|t| grids.get(&t).copied().map(|g| (t, g)));
                match (layout.ok().and_then(|l| types.const_u32(l)), grid, inst.id(0).ok()) {
                    (Some(layout), Some((t, g)), Some(ptr)) => {
                        let column_major = layout == CooperativeMatrixLayout::ColumnMajorKHR as u32;
                        let minor = if column_major { g.rows } else { g.cols };
                        let per = per_element(types, ptr, t);
                        let psb = pointer_class(types, ptr) == Some(StorageClass::PhysicalStorageBuffer as u32);
                        per.is_some_and(|p| minor % p == 0) && (psb || chains.contains_key(&ptr))
                    }
                    _ => false,
                }
            }
            Op::CooperativeMatrixMulAddKHR | Op::CooperativeMatrixLengthKHR => true,
            // Element `i` of a tiled matrix value, read or replaced.
            Op::CompositeExtract | Op::CompositeInsert => {
                let composite = inst.operands.get(if op == Op::CompositeExtract { 0 } else { 1 }).and_then(Operand::id);
                let literals = inst.operands.len() - if op == Op::CompositeExtract { 1 } else { 2 };
                composite.and_then(|c| types.type_of(c)).is_some_and(|t| grids.contains_key(&t)) && literals == 1
            }
            Op::CompositeConstruct => inst.operands.len() == 1,
            Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain => into_tiled.is_some_and(|(k, _)| k + 1 == inst.operands.len()),
            op if ELEMENT_WISE.contains(&op) => {
                // Operand and result grids must agree.
                let grid_of = |t: Word| grids.get(&t).map(|g| (g.rows, g.cols, g.down, g.across));
                let result = inst.result_type.and_then(grid_of);
                inst.operands.iter().filter_map(Operand::id).filter_map(|v| types.type_of(v)).filter(|t| is_matrix(types, *t)).all(|t| grid_of(t) == result)
            }
            op => MOVES.contains(&op),
        };
        if !ok {
            return Err(format!("{} at word {} on a tiled matrix", inst.name(), inst.at()));
        }
    }
    // Constants of tiled types: null, undefined or one scalar repeated.
    for g in module.globals() {
        if g.result_type.is_some_and(|t| grids.contains_key(&t)) && !(g.is(Op::ConstantNull) || g.is(Op::Undef) || (g.is(Op::ConstantComposite) && g.operands.len() == 1)) {
            return Err(format!("{} of a tiled matrix type", g.name()));
        }
        if g.is(Op::SpecConstantOp) && g.operands.iter().filter_map(Operand::id).any(|t| grids.contains_key(&t)) {
            return Err("a specialization-constant operation on a tiled matrix type".into());
        }
    }
    Ok(grids)
}

/// The tile types, the array types in place of the tiled ones, and every instruction.
fn rewrite(module: &mut Module, types: &Types, chains: &HashMap<Word, Inst>, mut grids: HashMap<Word, Grid>, outcome: &mut Outcome) -> Result<()> {
    let uint = module.type_int(32, false);
    // In id order, so that the output does not depend on hashing.
    let mut order: Vec<Word> = grids.keys().copied().collect();
    order.sort_unstable();
    for ty in &order {
        let (Some(g), Some(m)) = (grids.get_mut(ty), matrix(types, *ty)) else { continue };
        let (r, c) = (module.constant_u32(g.rows), module.constant_u32(g.cols));
        g.tile = module.intern(Op::TypeCooperativeMatrixKHR, None, vec![Operand::Id(m.component), Operand::Id(m.scope), Operand::Id(r), Operand::Id(c), Operand::Id(m.usage)]);
        outcome.notes.push(format!("%{ty} ({}x{}): {}x{} tiles of {}x{}", m.rows, m.cols, g.down, g.across, g.rows, g.cols));
    }
    let counts: HashMap<Word, Word> = order.iter().map(|t| (*t, module.constant_u32(grids[t].count()))).collect();
    // Constants first: a repeated scalar becomes tiles of it.
    for i in 0..module.globals().len() {
        let g = module.globals()[i].clone();
        let Some(grid) = g.result_type.and_then(|t| grids.get(&t).copied()) else { continue };
        if g.is(Op::ConstantComposite) {
            let tile = module.intern(Op::ConstantComposite, Some(grid.tile), g.operands.clone());
            module.globals_mut()[i].operands = vec![Operand::Id(tile); grid.count() as usize];
        }
    }
    for ty in &order {
        let g = &grids[ty];
        if let Some(def) = module.globals_mut().iter_mut().find(|d| d.result_id == Some(*ty)) {
            *def = Inst::new(Op::TypeArray, None, Some(*ty), vec![Operand::Id(g.tile), Operand::Id(counts[ty])]);
        }
    }
    module.interner.clear();
    let grid_of_value = |v: Word| types.type_of(v).and_then(|t| grids.get(&t).copied());
    for f in 0..module.functions.len() {
        // Function variables the rewrite needs, put at the top of the function afterwards.
        let mut variables: Vec<Inst> = Vec::new();
        for b in 0..module.functions[f].blocks.len() {
            let insts = std::mem::take(&mut module.functions[f].blocks[b].insts);
            let mut out = Vec::with_capacity(insts.len());
            for inst in insts {
                let mut e = Tiles { m: module, out: &mut out, origin: inst.origin };
                let Some(op) = inst.op() else {
                    e.out.push(inst);
                    continue;
                };
                let result_grid = inst.result_type.and_then(|t| grids.get(&t).copied());
                let into_tiled = element_index(types, &grids, &inst);
                // The grid of the stored matrix (`OpCooperativeMatrixStoreKHR`'s object).
                let stored_grid = if op == Op::CooperativeMatrixStoreKHR { inst.operands.get(1).and_then(Operand::id).and_then(grid_of_value) } else { None };
                match (op, result_grid, stored_grid) {
                    (Op::CooperativeMatrixLoadKHR, Some(g), _) => {
                        let [ptr, layout] = [inst.id(0)?, inst.id(1)?];
                        let stride = inst.operands.get(2).and_then(Operand::id);
                        let rest: Vec<Operand> = inst.operands.iter().skip(3).cloned().collect();
                        let tiles = e.tile_pointers(types, chains, uint, &g, inst.ty()?, ptr, layout, stride);
                        let mut loaded = Vec::new();
                        for p in tiles {
                            let mut ops = vec![Operand::Id(p), Operand::Id(layout)];
                            ops.extend(stride.map(Operand::Id));
                            ops.extend(rest.iter().cloned());
                            loaded.push(e.emit(None, Op::CooperativeMatrixLoadKHR, g.tile, ops));
                        }
                        e.emit(inst.result_id, Op::CompositeConstruct, inst.ty()?, loaded.into_iter().map(Operand::Id).collect());
                        outcome.count(op as u32);
                    }
                    (Op::CooperativeMatrixStoreKHR, _, Some(g)) => {
                        let value = inst.id(1)?;
                        let [ptr, layout] = [inst.id(0)?, inst.id(2)?];
                        let stride = inst.operands.get(3).and_then(Operand::id);
                        let rest: Vec<Operand> = inst.operands.iter().skip(4).cloned().collect();
                        let tiles = e.tile_pointers(types, chains, uint, &g, types.type_of(value).unwrap_or(0), ptr, layout, stride);
                        for (i, p) in tiles.into_iter().enumerate() {
                            let t = e.emit(None, Op::CompositeExtract, g.tile, vec![Operand::Id(value), Operand::Literal(i as u32)]);
                            let mut ops = vec![Operand::Id(p), Operand::Id(t), Operand::Id(layout)];
                            ops.extend(stride.map(Operand::Id));
                            ops.extend(rest.iter().cloned());
                            e.out.push(Inst::new(Op::CooperativeMatrixStoreKHR, None, None, ops).from_origin(e.origin));
                        }
                        outcome.count(op as u32);
                    }
                    (Op::CooperativeMatrixMulAddKHR, ..) if result_grid.is_some() || [0, 1, 2].iter().any(|k| inst.id(*k).ok().and_then(grid_of_value).is_some()) => {
                        let [a, bm, c] = inst.ids()?;
                        let rt = inst.ty()?;
                        let flags: Vec<Operand> = inst.operands.iter().skip(3).cloned().collect();
                        let one = |t: Word| Grid { rows: 0, cols: 0, down: 1, across: 1, tile: t };
                        let ga = grid_of_value(a).unwrap_or(one(types.type_of(a).unwrap_or(0)));
                        let gb = grid_of_value(bm).unwrap_or(one(types.type_of(bm).unwrap_or(0)));
                        let gc = grid_of_value(c).unwrap_or(one(types.type_of(c).unwrap_or(0)));
                        let gr = result_grid.unwrap_or(one(rt));
                        let part =
                            |e: &mut Tiles<'_>, v: Word, g: &Grid, i: u32| if g.count() == 1 { v } else { e.emit(None, Op::CompositeExtract, g.tile, vec![Operand::Id(v), Operand::Literal(i)]) };
                        let mut results = Vec::new();
                        for i in 0..gr.down {
                            for j in 0..gr.across {
                                let mut acc = part(&mut e, c, &gc, i * gc.across + j);
                                for k in 0..ga.across {
                                    let ta = part(&mut e, a, &ga, i * ga.across + k);
                                    let tb = part(&mut e, bm, &gb, k * gb.across + j);
                                    let mut ops = vec![Operand::Id(ta), Operand::Id(tb), Operand::Id(acc)];
                                    ops.extend(flags.iter().cloned());
                                    acc = e.emit(None, Op::CooperativeMatrixMulAddKHR, gr.tile, ops);
                                }
                                results.push(acc);
                            }
                        }
                        if gr.count() == 1 {
                            e.emit(inst.result_id, Op::CopyObject, rt, vec![Operand::Id(results[0])]);
                        } else {
                            e.emit(inst.result_id, Op::CompositeConstruct, rt, results.into_iter().map(Operand::Id).collect());
                        }
                        outcome.count(op as u32);
                    }
                    (Op::CooperativeMatrixLengthKHR, ..) if inst.id(0).ok().is_some_and(|t| grids.contains_key(&t)) => {
                        let g = grids[&inst.id(0)?];
                        let len = e.emit(None, Op::CooperativeMatrixLengthKHR, inst.ty()?, vec![Operand::Id(g.tile)]);
                        let n = e.m.constant_u32(g.count());
                        e.emit(inst.result_id, Op::IMul, inst.ty()?, vec![Operand::Id(len), Operand::Id(n)]);
                        outcome.count(op as u32);
                    }
                    (Op::CompositeConstruct, Some(g), _) => {
                        let tile = e.emit(None, Op::CompositeConstruct, g.tile, inst.operands.clone());
                        e.emit(inst.result_id, Op::CompositeConstruct, inst.ty()?, vec![Operand::Id(tile); g.count() as usize]);
                        outcome.count(op as u32);
                    }
                    // Element `i` of a matrix value: through a variable, as element `i % L` of
                    // tile `i / L` (the tiles' length `L` is the device's).
                    (Op::CompositeExtract | Op::CompositeInsert, ..) if inst.operands.get(if op == Op::CompositeExtract { 0 } else { 1 }).and_then(Operand::id).and_then(grid_of_value).is_some() => {
                        let extract = op == Op::CompositeExtract;
                        let composite = inst.id(if extract { 0 } else { 1 })?;
                        let (Some(g), Some(ty), Some(index)) = (grid_of_value(composite), types.type_of(composite), inst.operands.last().and_then(Operand::word)) else {
                            e.out.push(inst);
                            continue;
                        };
                        let component = matrix(types, ty).map(|m| m.component).unwrap_or_default();
                        let var_ptr = e.m.type_pointer(StorageClass::Function, ty);
                        let var = e.m.alloc_id();
                        variables.push(Inst::new(Op::Variable, Some(var_ptr), Some(var), vec![Operand::storage_class(StorageClass::Function)]));
                        e.out.push(Inst::new(Op::Store, None, None, vec![Operand::Id(var), Operand::Id(composite)]).from_origin(e.origin));
                        let len = e.emit(None, Op::CooperativeMatrixLengthKHR, uint, vec![Operand::Id(g.tile)]);
                        let i = e.m.constant_u32(index);
                        let tile = e.emit(None, Op::UDiv, uint, vec![Operand::Id(i), Operand::Id(len)]);
                        let elem = e.emit(None, Op::UMod, uint, vec![Operand::Id(i), Operand::Id(len)]);
                        let elem_ptr = e.m.type_pointer(StorageClass::Function, component);
                        let p = e.emit(None, Op::AccessChain, elem_ptr, vec![Operand::Id(var), Operand::Id(tile), Operand::Id(elem)]);
                        if extract {
                            e.emit(inst.result_id, Op::Load, inst.ty()?, vec![Operand::Id(p)]);
                        } else {
                            e.out.push(Inst::new(Op::Store, None, None, vec![Operand::Id(p), Operand::Id(inst.id(0)?)]).from_origin(e.origin));
                            e.emit(inst.result_id, Op::Load, inst.ty()?, vec![Operand::Id(var)]);
                        }
                        outcome.count(op as u32);
                    }
                    (Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain, ..) if into_tiled.is_some() => {
                        // Checked by the plan: the matrix's element index is the chain's last.
                        let Some((k, pointee)) = into_tiled else { continue };
                        let len = e.emit(None, Op::CooperativeMatrixLengthKHR, uint, vec![Operand::Id(grids[&pointee].tile)]);
                        // The element index as a 32-bit unsigned integer (Slang indexes with `int`).
                        let index = inst.id(k)?;
                        let index = match types.type_of(index).and_then(|t| types.int(t)) {
                            Some((32, false)) | None => index,
                            Some((32, true)) => e.emit(None, Op::Bitcast, uint, vec![Operand::Id(index)]),
                            Some((_, signed)) => e.emit(None, if signed { Op::SConvert } else { Op::UConvert }, uint, vec![Operand::Id(index)]),
                        };
                        let tile = e.emit(None, Op::UDiv, uint, vec![Operand::Id(index), Operand::Id(len)]);
                        let elem = e.emit(None, Op::UMod, uint, vec![Operand::Id(index), Operand::Id(len)]);
                        let mut ops = inst.operands[..k].to_vec();
                        ops.extend([Operand::Id(tile), Operand::Id(elem)]);
                        e.emit(inst.result_id, op, inst.ty()?, ops);
                        outcome.count(op as u32);
                    }
                    (op, Some(g), _) if ELEMENT_WISE.contains(&op) => {
                        let mut tiles = Vec::new();
                        for i in 0..g.count() {
                            let mut ops = Vec::new();
                            for o in &inst.operands {
                                match o.id().and_then(|v| grid_of_value(v).map(|og| (v, og))) {
                                    Some((v, og)) => ops.push(Operand::Id(e.emit(None, Op::CompositeExtract, og.tile, vec![Operand::Id(v), Operand::Literal(i)]))),
                                    None => ops.push(o.clone()),
                                }
                            }
                            tiles.push(e.emit(None, op, g.tile, ops));
                        }
                        e.emit(inst.result_id, Op::CompositeConstruct, inst.ty()?, tiles.into_iter().map(Operand::Id).collect());
                        outcome.count(op as u32);
                    }
                    _ => e.out.push(inst),
                }
            }
            module.functions[f].blocks[b].insts = out;
        }
        if let Some(entry) = module.functions[f].blocks.first_mut() {
            entry.insts.splice(0..0, variables);
        }
    }
    Ok(())
}

/// Emits into a rebuilt block.
struct Tiles<'a> {
    m: &'a mut Module,
    out: &'a mut Vec<Inst>,
    origin: Option<crate::ir::Origin>,
}

impl Tiles<'_> {
    fn emit(&mut self, id: Option<Word>, op: Op, ty: Word, operands: Vec<Operand>) -> Word {
        let id = id.unwrap_or_else(|| self.m.alloc_id());
        self.out.push(Inst::new(op, Some(ty), Some(id), operands).from_origin(self.origin));
        id
    }

    /// A pointer to each tile's first element, row-major over the grid, from the pointer `ptr`
    /// to a matrix of type `ty` (an access chain, whose last index moves, or a
    /// PhysicalStorageBuffer pointer, moved by `OpPtrAccessChain`).
    #[allow(clippy::too_many_arguments)] // the access as the instruction has it
    fn tile_pointers(&mut self, types: &Types, chains: &HashMap<Word, Inst>, uint: Word, g: &Grid, ty: Word, ptr: Word, layout: Word, stride: Option<Word>) -> Vec<Word> {
        let column_major = types.const_u32(layout) == Some(CooperativeMatrixLayout::ColumnMajorKHR as u32);
        let ptr_ty = types.type_of(ptr).unwrap_or(0);
        let psb = pointer_class(types, ptr) == Some(StorageClass::PhysicalStorageBuffer as u32);
        let per = per_element(types, ptr, ty).unwrap_or(1).max(1);
        let stride = match stride {
            Some(s) => match types.conversion_to_32(s) {
                Some(op) => self.emit(None, op, uint, vec![Operand::Id(s)]),
                None => s,
            },
            None => self.m.constant_u32(1),
        };
        let mut out = Vec::new();
        for i in 0..g.down {
            for j in 0..g.across {
                // major * stride + minor, in pointee elements (the plan checked that minor is a
                // whole number of them).
                let (major, minor) = if column_major { (j * g.cols, i * g.rows) } else { (i * g.rows, j * g.cols) };
                let major_c = self.m.constant_u32(major);
                let scaled = self.emit(None, Op::IMul, uint, vec![Operand::Id(major_c), Operand::Id(stride)]);
                let minor_c = self.m.constant_u32(minor / per);
                let offset = self.emit(None, Op::IAdd, uint, vec![Operand::Id(scaled), Operand::Id(minor_c)]);
                let p = match chains.get(&ptr) {
                    Some(c) => {
                        let mut ops = c.operands.clone();
                        let last = ops.len() - 1;
                        let idx = ops[last].id().unwrap_or(0);
                        let plan = types.index_sum(self.m, idx);
                        let moved = plan.emit(idx, offset, |op, ty, args| self.emit(None, op, ty, args.iter().copied().map(Operand::Id).collect()));
                        ops[last] = Operand::Id(moved);
                        self.emit(None, c.op().unwrap_or(Op::AccessChain), ptr_ty, ops)
                    }
                    // A PhysicalStorageBuffer pointer from elsewhere (a load, a parameter): steps
                    // of its pointee, which `OpPtrAccessChain` needs as the type's ArrayStride.
                    None => {
                        if psb {
                            stride_physical_pointer(self.m, types, ptr_ty);
                        }
                        self.emit(None, Op::PtrAccessChain, ptr_ty, vec![Operand::Id(ptr), Operand::Id(offset)])
                    }
                };
                out.push(p);
            }
        }
        out
    }
}

/// Where access chain `inst` selects an element of a tiled matrix: the operand position of that
/// index (valid SPIR-V has it last) and the matrix type. `None` for chains that do not reach
/// into a tiled matrix, including those that stop at one.
fn element_index(types: &Types, grids: &HashMap<Word, Grid>, inst: &Inst) -> Option<(usize, Word)> {
    let first = match inst.op()? {
        Op::AccessChain | Op::InBoundsAccessChain => 1,
        Op::PtrAccessChain | Op::InBoundsPtrAccessChain => 2,
        _ => return None,
    };
    let mut ty = types.defs.get(&types.type_of(inst.id(0).ok()?)?)?.id(1).ok()?;
    for k in first..inst.operands.len() {
        if grids.contains_key(&ty) {
            return Some((k, ty));
        }
        ty = types.element_type(ty, inst.operands[k].id()?)?;
    }
    None
}

/// The size in bytes of the scalar or vector a pointer type points to.
/// Decorates the PhysicalStorageBuffer pointer type `ptr_ty` with its pointee's size as
/// `ArrayStride`, which `OpPtrAccessChain` on its values needs, unless it has one.
pub(crate) fn stride_physical_pointer(module: &mut Module, types: &Types, ptr_ty: Word) {
    if module.decoration(ptr_ty, Decoration::ArrayStride).is_none() {
        if let Some(bytes) = types.defs.get(&ptr_ty).and_then(|d| d.id(1).ok()).and_then(|t| bits(types, t)) {
            module.decorate(ptr_ty, Decoration::ArrayStride, &[bytes / 8]);
        }
    }
}

/// Every access chain of the module, by result.
pub(crate) fn access_chains(module: &Module) -> HashMap<Word, Inst> {
    module.functions.iter().flat_map(|f| f.insts()).filter(|i| i.is(Op::AccessChain) || i.is(Op::InBoundsAccessChain)).filter_map(|i| Some((i.result_id?, i.clone()))).collect()
}

/// The storage class of pointer value `ptr`.
pub(crate) fn pointer_class(types: &Types, ptr: Word) -> Option<u32> {
    types.type_of(ptr).and_then(|t| types.defs.get(&t)).filter(|d| d.is(Op::TypePointer)).and_then(|d| d.word_opt(0))
}

/// Bits of a scalar or vector type.
fn bits(types: &Types, t: Word) -> Option<u32> {
    types.scalar_width(t).or_else(|| types.vector(t).and_then(|(c, n)| types.scalar_width(c).map(|w| w * n)))
}

/// Matrix components per element of `ptr`'s pointee (1, or a vector's worth: a uvec4 holds
/// eight f16), for a matrix of type `ty`.
pub(crate) fn per_element(types: &Types, ptr: Word, ty: Word) -> Option<u32> {
    let pointee = types.type_of(ptr).and_then(|t| types.defs.get(&t)).and_then(|d| d.id(1).ok())?;
    let component = matrix(types, ty).map(|m| m.component)?;
    let (p, c) = (bits(types, pointee)?, bits(types, component)?);
    (p % c == 0).then_some(p / c)
}
