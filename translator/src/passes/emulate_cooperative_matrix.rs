//! `EmulateCooperativeMatrix`: SPV_KHR_cooperative_matrix -> plain code with subgroup
//! broadcasts, for targets without VK_KHR_cooperative_matrix or without the module's shapes.
//!
//! # The distribution
//!
//! A matrix of `R` rows and `C` columns is spread over `P = gcd(S, C)` lanes, where `S` is the
//! target's smallest subgroup size, or the module's smallest workgroup where that is fixed in the
//! module and has fewer invocations (only its first lanes hold one) (both are powers of two in practice; `P` is the
//! largest power of two dividing both). Element `(r, c)` has the row-major index `i = r * C + c`; it lives in
//! lane `i % P` as that lane's element `i / P`. Each invocation therefore holds `L = R * C / P`
//! elements, and `OpCooperativeMatrixLengthKHR` is `L`. Lanes `l` and `l + P`, `l + 2P`, ... of a
//! subgroup wider than `P` hold the same elements (a replica): only lanes below `P` store.
//! Where `virtualize-subgroup-size` split the device's sub-groups into logical ones of `G`
//! invocations (a kernel requiring 16 on 32-wide hardware), each logical sub-group holds its own
//! matrices: `S` is at most `G`, the lane indices above count from the logical sub-group's first
//! lane `base = id - id % G`, lane reads go to `base + lane` (shuffles where a broadcast would
//! name a constant lane), and lanes whose `id % G` is below `P` store. The
//! layout depends on the shape only, not on the Use or the component type, so conversions
//! between matrices of one shape are element-wise.
//!
//! Because `P` divides `C`, the `P` lanes' `e`-th elements lie in one row: row `e * P / C`,
//! columns `(e * P) % C + lane`. That makes `MulAdd` cheap: for `D = A * B + C` (A is M x K,
//! B is K x N), every lane keeps its own B columns, and each element `A[m][k]` is broadcast once
//! from the lane holding it (`OpGroupNonUniformBroadcast` with constant lane) and multiplied
//! into the lane's `N / P` outputs of row `m`. An output element is never a cross-lane
//! reduction: a lane does `M * N * K / P` multiply-adds and the subgroup `M * K` broadcasts.
//!
//! # The rewrite
//!
//! - each `OpTypeCooperativeMatrixKHR` becomes `OpTypeArray` of its component type and length
//!   `L` under the same id, so variables, pointers, function signatures, phis, loads and stores
//!   of whole matrices, and `OpCompositeExtract`/`Insert` stay as they are;
//! - constant and constructed matrices (`OpConstantComposite`, `OpSpecConstantComposite`,
//!   `OpCompositeConstruct` of one scalar) repeat the scalar `L` times;
//! - `OpCooperativeMatrixLoadKHR`/`StoreKHR`: one scalar access per element, at
//!   `row * stride + column` (row-major) or `column * stride + row` (column-major) from the
//!   pointer, with the layout a constant or a runtime value. The pointer is an access chain into
//!   an array (StorageBuffer, Workgroup, any class) or a PhysicalStorageBuffer pointer. Where the
//!   pointee type is wider than the component type (an `f16` matrix read through `uvec4`), the
//!   containing word is read and the component taken from it; a store gathers each word's
//!   components into one lane (shuffles across a row's lanes, or the lane's own elements down a
//!   column) and writes whole words, so the layout must be known and rows (row-major) or
//!   columns (column-major) fill whole words. Where the pointee is a scalar narrower than the
//!   component (a u32 matrix through `uint8_t`), a component is that many consecutive words,
//!   the first the lowest bits, the stride and offset counting words. Layouts that are specialization constants are
//!   frozen to their values first, like the dimensions.
//!   Memory-operand flags are kept; `Aligned` becomes the scalar's size (PhysicalStorageBuffer);
//! - `OpCooperativeMatrixMulAddKHR`: as above, accumulating in f32 (f64 when C or the result
//!   is f64) or 32-bit integers with the signedness flags; `SaturatingAccumulationKHR` adds the
//!   sum of products to C with saturation to the result type (the sum is exact for 8- and 16-bit
//!   A and B; for 32-bit ones it wraps to 32 bits, read with the result's signedness, as the
//!   Vulkan conformance tests compute it); straight-line code up to 8192 multiply-adds per lane
//!   for one MulAdd and for all of a function's together, a loop over K past that (CPU drivers'
//!   compilers do not survive megabytes of straight-line code);
//! - `OpCooperativeMatrixLengthKHR` (and its `OpSpecConstantOp` form) becomes the constant `L`;
//!   element indices at or past it (undefined in SPIR-V) are clamped to `L - 1`, dynamic ones
//!   with an unsigned minimum, so that none reaches past the invocation's array;
//! - on drivers that unroll every loop marked `Unroll` (`Workarounds::unrolls_hinted_loops`),
//!   loops holding a MulAdd lose that hint: the emulated MulAdd is already unrolled; on drivers
//!   that unroll small loops and access memory lane by lane (`Workarounds::unrolls_element_loops`),
//!   the loops of loads and stores over a lane's elements are marked `DontUnroll`;
//! - `OpCooperativeMatrixPerElementOpNV` calls its function for each of the lane's elements
//!   with the element's row and column; `OpCooperativeMatrixConvertNV` copies;
//!   `OpCooperativeMatrixReduceNV` by rows, columns or both folds each lane's elements and
//!   combines rows across lanes with shuffles (SPV_NV_cooperative_matrix2's transposes and 2x2
//!   reductions are lowered to KHR code before, by `lower-cooperative-matrix2`);
//! - every other instruction producing a matrix (arithmetic, conversions, between Uses too,
//!   `OpMatrixTimesScalar`, `OpSelect`, extended instructions) is applied element by element.
//!
//! Preconditions: a valid module; scope Subgroup; rows and columns constants or
//! specialization constants with defaults (those are frozen to their defaults: specialize the
//! module before translating it to use other values); stores not in a loop header block when
//! the target's subgroup can be wider than `P`. Anything else is an error naming the
//! instruction. Applies to every target: a module runs emulated where the target has no
//! cooperative matrices, where its sub-groups are split, or where the target does not list one
//! of its matrix types or MulAdd shapes (all of its
//! matrices are emulated then, since they flow into one another), and is left alone otherwise.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::cfg::separate_loop_header;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::check_cooperative_matrix::{component_type, first_unlisted, use_name};
use crate::profile::DeviceCaps;
use rspirv::grammar::OperandKind;
use spirv::{BuiltIn, Capability, CooperativeMatrixLayout, CooperativeMatrixOperands as Flags, Decoration, GlslStd450Op, MemoryAccess, Op, Scope, StorageClass, Word};
use std::collections::HashMap;

pub struct EmulateCooperativeMatrix;

/// Gives the loop headers of function `f` that load, store or multiply matrices a block of
/// their own for that code (see [`separate_loop_header`]): their rewrites branch, which a loop
/// header cannot. Headers that cannot be separated keep the straight-line forms.
fn separate_matrix_loop_headers(module: &mut Module, f: usize) {
    let expands = |i: &Inst| matches!(i.op(), Some(Op::CooperativeMatrixLoadKHR | Op::CooperativeMatrixStoreKHR | Op::CooperativeMatrixMulAddKHR));
    let mut b = 0;
    while b < module.functions[f].blocks.len() {
        let block = &module.functions[f].blocks[b];
        if block.insts.iter().any(|i| i.is(Op::LoopMerge)) && block.insts.iter().any(expands) {
            let id = module.alloc_id();
            if separate_loop_header(&mut module.functions[f], b, id, false).is_some() {
                b += 1;
            }
        }
        b += 1;
    }
}

/// Drops the `Unroll` hint from the loops of function `f` that hold a matrix multiply-add
/// (directly or in a nested loop): emulated, each is already unrolled over the matrix's
/// elements, and a driver that unrolls hinted loops (see `Workarounds::unrolls_hinted_loops`)
/// would multiply it by the trip count. Returns how many loops lost it.
fn roll_matrix_loops(module: &mut Module, f: usize) -> usize {
    let function = &module.functions[f];
    let holds_mul_add: Vec<bool> = function.blocks.iter().map(|b| b.insts.iter().any(|i| i.is(Op::CooperativeMatrixMulAddKHR))).collect();
    if !holds_mul_add.contains(&true) {
        return 0;
    }
    let cfg = crate::ir::cfg::Cfg::new(function);
    let index: HashMap<Word, usize> = cfg.labels.iter().enumerate().map(|(i, l)| (*l, i)).collect();
    let mut rolled = Vec::new();
    for (header, block) in function.blocks.iter().enumerate() {
        let Some((k, merge)) = block.insts.iter().enumerate().find(|(_, i)| i.is(Op::LoopMerge)).and_then(|(k, i)| Some((k, *index.get(&i.id(0).ok()?)?))) else { continue };
        let control = block.insts[k].word_opt(2).unwrap_or(0);
        if control & spirv::LoopControl::UNROLL.bits() == 0 {
            continue;
        }
        // The loop construct: the blocks the header dominates and the merge block does not.
        let inside = |b: usize| cfg.dominates(header, b) && !cfg.dominates(merge, b);
        if (0..function.blocks.len()).any(|b| holds_mul_add[b] && inside(b)) {
            rolled.push((header, k, control & !spirv::LoopControl::UNROLL.bits()));
        }
    }
    for &(header, k, control) in &rolled {
        if let Some(operand) = module.functions[f].blocks[header].insts[k].operands.get_mut(2) {
            *operand = Operand::Enum(OperandKind::LoopControl, control);
        }
    }
    rolled.len()
}

/// A component type, as the arithmetic sees it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Scalar {
    Float(u32),
    Int(u32),
}

impl Scalar {
    fn width(self) -> u32 {
        match self {
            Scalar::Float(w) | Scalar::Int(w) => w,
        }
    }
}

/// How one matrix type is distributed (see the module documentation).
#[derive(Clone, Copy, Debug)]
struct Layout {
    component: Word,
    scalar: Scalar,
    rows: u32,
    cols: u32,
    /// Lanes the elements are spread over (`P`).
    lanes: u32,
    /// Elements per invocation (`L`).
    len: u32,
    /// The Use operand's value, where it is a constant.
    usage: Option<u32>,
}

impl Layout {
    /// (row, first column) of every lane's `e`-th element; the lane adds its index to the column.
    fn place(&self, e: u32) -> (u32, u32) {
        let i = e * self.lanes;
        (i / self.cols, i % self.cols)
    }
}

/// Multiply-adds per lane up to which a MulAdd is emitted as straight-line code; longer ones loop
/// over K (SwiftShader's compiler does not survive a 48x48x48 MulAdd unrolled over its sub-group
/// of 4: 27648 multiply-adds).
const UNROLLED_MUL_ADDS: u32 = 8192;

/// Multiply-adds per lane that the MulAdds of one function may emit as straight-line code in
/// all; those past it loop over K (SwiftShader's compiler crashes on IREE's RDNA3 f16 matmul,
/// thirty-two 16x16x16 MulAdds with f16 accumulators: 32768 unrolled over its sub-group of 4).
const UNROLLED_MUL_ADDS_PER_FUNCTION: u32 = 8192;

/// Elements one invocation may hold of an emulated matrix (a 128x128 matrix over a sub-group of
/// 4): beyond it the emulated code would be megabytes of registers spilled to memory, so the type
/// is refused by name instead (damaged dimensions such as 177x177 land on one lane).
const MAX_ELEMENTS_PER_INVOCATION: u32 = 4096;

/// The largest power of two that divides `n` and is at most `p`.
fn lanes_for(p: u32, n: u32) -> u32 {
    let p = if p == 0 { 1 } else { 1u32 << (31 - p.leading_zeros()) };
    1u32 << n.trailing_zeros().min(p.trailing_zeros())
}

impl Pass for EmulateCooperativeMatrix {
    fn name(&self) -> &'static str {
        "emulate-cooperative-matrix"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let target = cx.target;
        match first_unlisted(module, target)? {
            None => return Ok(outcome),
            Some(reason) => {
                log::info!("emulating the module's cooperative matrices: {reason}");
                outcome.notes.push(format!("emulated because {reason}"));
            }
        }
        crate::passes::tile_cooperative_matrix::freeze_layouts(module);
        let min_subgroup = if target.min_subgroup_size > 0 { target.min_subgroup_size } else { target.subgroup_size };
        let max_subgroup = target.max_subgroup_size.max(target.subgroup_size);
        // A workgroup smaller than the sub-group fills only its first lanes: the matrices are
        // spread over those (the others hold no invocation).
        let smallest_workgroup = module
            .entry_points
            .iter()
            .filter(|e| e.word_opt(0) == Some(spirv::ExecutionModel::GLCompute as u32))
            .filter_map(|e| crate::specialize::fixed_workgroup_size(module, &e.string(2)?))
            .map(|[x, y, z]| x.saturating_mul(y).saturating_mul(z))
            .min();
        let spread = smallest_workgroup.map_or(min_subgroup, |w| min_subgroup.min(w.max(1)));
        // Logical sub-groups split out of the physical ones each hold their own matrices.
        let split = crate::kernel::split_subgroups(module);
        let group = match split.iter().map(|(_, s, _)| *s).min() {
            Some(g) if split.iter().any(|(_, s, _)| *s != g) => {
                return Err(Error::Unsupported {
                    site: Box::default(),
                    target: target.name.clone(),
                    missing: format!("one sub-group size for the module's split entry points beside cooperative matrices (they require {:?})", split.iter().map(|(_, s, _)| *s).collect::<Vec<_>>()),
                })
            }
            g => g,
        };
        let spread = group.map_or(spread, |g| spread.min(g));
        let max_subgroup = group.map_or(max_subgroup, |g| max_subgroup.min(g));
        let types = Types::new(module);
        let layouts = layouts(module, &types, target, spread)?;
        let mut ids: Vec<&Word> = layouts.keys().collect();
        ids.sort();
        for id in ids {
            let l = &layouts[id];
            let name = module.name_of(*id).map_or_else(|| format!("%{id}"), |n| format!("%{n}"));
            let comp = component_type(&types, l.component, None).map_or_else(|| format!("%{}", l.component), |c| c.to_string());
            if l.len > MAX_ELEMENTS_PER_INVOCATION {
                let def = module.globals().iter().find(|g| g.result_id == Some(*id)).cloned().unwrap_or_else(|| Inst::new(Op::Nop, None, None, vec![]));
                return Err(Error::Unsupported {
                    site: module.site(&def),
                    target: target.name.clone(),
                    missing: format!("room for a {}x{} cooperative matrix emulated over {} lanes ({} elements per invocation; at most {MAX_ELEMENTS_PER_INVOCATION})", l.rows, l.cols, l.lanes, l.len),
                });
            }
            let replicas = if l.lanes < max_subgroup { format!(", replicated on sub-groups wider than {}", l.lanes) } else { String::new() };
            outcome.notes.push(format!("{name} ({}x{} {comp} {}): emulated over {} lanes, {} elements per invocation{replicas}", l.rows, l.cols, use_name(l.usage), l.lanes, l.len));
        }
        clamp_element_indices(module, &types, &layouts, &mut outcome);
        let mut emu = Emulator { types, layouts, target, max_subgroup, group, replace: HashMap::new(), unrolled_left: std::cell::Cell::new(0) };

        let mut rolled = 0;
        for f in 0..module.functions.len() {
            if target.workarounds.unrolls_hinted_loops {
                rolled += roll_matrix_loops(module, f);
            }
            separate_matrix_loop_headers(module, f);
            emu.unrolled_left.set(UNROLLED_MUL_ADDS_PER_FUNCTION);
            let local_defs: HashMap<Word, Inst> = module.functions[f].insts().filter_map(|i| i.result_id.map(|id| (id, i.clone()))).collect();
            let mut b = 0;
            while b < module.functions[f].blocks.len() {
                let mut i = 0;
                while i < module.functions[f].blocks[b].insts.len() {
                    let inst = &module.functions[f].blocks[b].insts[i];
                    if !emu.involves(inst) {
                        i += 1;
                        continue;
                    }
                    let inst = module.functions[f].blocks[b].insts.remove(i);
                    outcome.count(inst.opcode);
                    let mut bld = Builder::new(module, Cursor { function: f, block: b, index: i }).with_origin(inst.origin);
                    emu.rewrite(&mut bld, &inst, &local_defs)?;
                    b = bld.cursor.block;
                    i = bld.cursor.index;
                }
                b += 1;
            }
        }
        // Lengths become constants.
        let replace = std::mem::take(&mut emu.replace);
        if !replace.is_empty() {
            module.for_each_inst_mut(|inst| inst.map_used_ids(|id| replace.get(&id).copied().unwrap_or(id)));
        }
        // Types and constants last: the rewrites above read the matrix types.
        let layouts = emu.layouts;
        for inst in module.globals_mut().iter_mut() {
            // `OpSpecConstantOp CooperativeMatrixLengthKHR %type` (glslang's `length()`).
            if inst.is(Op::SpecConstantOp) && inst.word_opt(0) == Some(Op::CooperativeMatrixLengthKHR as u32) {
                if let Some(l) = inst.operands.get(1).and_then(Operand::id).and_then(|t| layouts.get(&t)) {
                    inst.opcode = Op::Constant as u32;
                    inst.operands = vec![Operand::Literal(l.len)];
                    outcome.count(Op::SpecConstantOp as u32);
                }
                continue;
            }
            let is_matrix = inst.result_type.is_some_and(|t| layouts.contains_key(&t));
            if is_matrix && matches!(inst.op(), Some(Op::ConstantComposite | Op::SpecConstantComposite)) && inst.operands.len() == 1 {
                let l = layouts[&inst.result_type.unwrap_or_default()];
                let part = inst.operands[0].clone();
                inst.operands = vec![part; l.len as usize];
                outcome.count(inst.opcode);
            }
        }
        for (&id, l) in &layouts {
            let len = module.constant_u32(l.len);
            if let Some(def) = module.globals_mut().iter_mut().find(|g| g.result_id == Some(id)) {
                outcome.count(def.opcode);
                *def = Inst::new(Op::TypeArray, None, Some(id), vec![Operand::Id(l.component), Operand::Id(len)]).from_origin(def.origin);
            }
        }
        if rolled > 0 {
            outcome.notes.push(format!("{rolled} loop(s) holding matrix multiply-adds lose their Unroll hint (the driver unrolls hinted loops whatever their size)"));
        }
        Ok(outcome)
    }
}

/// Element indices into matrices (an access chain's step into a matrix, a composite extract or
/// insert's literal) at or past the per-invocation length `L` are undefined in SPIR-V; emulated,
/// they would reach past the invocation's array (a CPU driver's stack). A dynamic index becomes
/// `min(index, L - 1)` (unsigned: a negative one clamps too), a constant or literal one `L - 1`.
fn clamp_element_indices(module: &mut Module, types: &Types, layouts: &HashMap<Word, Layout>, outcome: &mut Outcome) {
    for f in 0..module.functions.len() {
        for b in 0..module.functions[f].blocks.len() {
            let mut i = 0;
            while i < module.functions[f].blocks[b].insts.len() {
                let inst = &mut module.functions[f].blocks[b].insts[i];
                if inst.is(Op::CompositeExtract) || inst.is(Op::CompositeInsert) {
                    if clamp_literals(types, layouts, inst) {
                        outcome.count(inst.opcode);
                    }
                } else if let Some(first) = chain_first_index(inst) {
                    let (opcode, origin) = (inst.opcode, inst.origin);
                    for (k, len) in chain_steps_past(types, layouts, inst, first) {
                        let index = module.functions[f].blocks[b].insts[i].operands[k].id().unwrap_or_default();
                        let clamped = match types.const_u32(index) {
                            Some(_) => module.constant_u32(len - 1),
                            None => {
                                let (min, id) = module.umin_index(types, index, len - 1);
                                module.functions[f].blocks[b].insts.insert(i, min.from_origin(origin));
                                i += 1;
                                id
                            }
                        };
                        module.functions[f].blocks[b].insts[i].operands[k] = Operand::Id(clamped);
                        outcome.count(opcode);
                    }
                }
                i += 1;
            }
        }
    }
}

/// The operand of an access chain's first step into its base's pointee type, if `inst` is one.
fn chain_first_index(inst: &Inst) -> Option<usize> {
    match inst.op()? {
        Op::AccessChain | Op::InBoundsAccessChain => Some(1),
        Op::PtrAccessChain | Op::InBoundsPtrAccessChain => Some(2),
        _ => None,
    }
}

/// (operand, L) of the steps of access chain `inst` into a matrix whose index is dynamic or at
/// least `L` (every operand of an access chain is an id).
fn chain_steps_past(types: &Types, layouts: &HashMap<Word, Layout>, inst: &Inst, first: usize) -> Vec<(usize, u32)> {
    let mut out = Vec::new();
    let pointer = inst.operands.first().and_then(Operand::id).and_then(|base| types.type_of(base));
    let mut ty = pointer.and_then(|p| types.defs.get(&p)).filter(|d| d.is(Op::TypePointer)).and_then(|d| d.id(1).ok());
    for (k, index) in inst.operands.iter().enumerate().skip(first).filter_map(|(k, o)| Some((k, o.id()?))) {
        let Some(t) = ty else { break };
        if let Some(l) = layouts.get(&t) {
            if types.const_u32(index).is_none_or(|c| c >= l.len) {
                out.push((k, l.len));
            }
        }
        ty = types.element_type(t, index);
    }
    out
}

/// Clamps the literal indices of `OpCompositeExtract`/`Insert` `inst` that step into a matrix at
/// or past its `L`; whether it changed any.
fn clamp_literals(types: &Types, layouts: &HashMap<Word, Layout>, inst: &mut Inst) -> bool {
    let first = if inst.is(Op::CompositeExtract) { 1 } else { 2 };
    let mut ty = inst.operands.get(first - 1).and_then(Operand::id).and_then(|c| types.type_of(c));
    let mut changed = false;
    for k in first..inst.operands.len() {
        let (Some(t), Some(index)) = (ty, inst.word_opt(k)) else { break };
        if let Some(l) = layouts.get(&t).filter(|l| index >= l.len) {
            inst.operands[k] = Operand::Literal(l.len - 1);
            changed = true;
        }
        ty = types.element_type_at(t, index);
    }
    changed
}

/// The layout of every KHR matrix type; freezes specialization-constant dimensions.
fn layouts(module: &mut Module, types: &Types, target: &DeviceCaps, min_subgroup: u32) -> Result<HashMap<Word, Layout>> {
    let defs: Vec<Inst> = module.globals().iter().filter(|i| i.is(Op::TypeCooperativeMatrixKHR)).cloned().collect();
    let mut out = HashMap::new();
    for def in defs {
        let unsupported = |module: &Module, missing: String| Error::Unsupported { site: module.site(&def), target: target.name.clone(), missing };
        let [component, scope, rows, cols, usage] = def.ids()?;
        if dimension(module, types, scope)? != Scope::Subgroup as u32 {
            return Err(unsupported(module, "cooperative matrices of a scope other than Subgroup".into()));
        }
        let scalar = if let Some((w, _)) = types.int(component) {
            Scalar::Int(w)
        } else if let Some((w, encoding)) = types.float(component) {
            let bf16 = encoding == Some(spirv::FPEncoding::BFloat16KHR as u32);
            if encoding.is_some() && !bf16 {
                let name = component_type(types, component, None).map_or_else(|| format!("%{component}"), |c| c.to_string());
                return Err(unsupported(module, format!("cooperative matrices of {name} components (not listed, and the emulation has no {name} arithmetic)")));
            }
            Scalar::Float(w)
        } else {
            return Err(unsupported(module, format!("cooperative matrices of component type %{component}")));
        };
        let rows = dimension(module, types, rows)?;
        let cols = dimension(module, types, cols)?;
        if rows == 0 || cols == 0 || rows > 1024 || cols > 1024 {
            return Err(Error::Invalid { site: module.site(&def), message: format!("a {rows}x{cols} cooperative matrix") });
        }
        let lanes = lanes_for(min_subgroup, cols);
        out.insert(def.result()?, Layout { component, scalar, rows, cols, lanes, len: rows * cols / lanes, usage: types.const_u32(usage) });
    }
    Ok(out)
}

/// The value of a dimension or scope id: a constant, or a specialization constant frozen to
/// its default.
pub(crate) fn dimension(module: &mut Module, types: &Types, id: Word) -> Result<u32> {
    if let Some(v) = types.const_u32(id) {
        return Ok(v);
    }
    let Some(def) = module.globals_mut().iter_mut().find(|g| g.result_id == Some(id)) else {
        return Err(Error::Malformed { offset: 0, message: format!("cooperative-matrix dimension %{id} is not defined") });
    };
    if def.is(Op::Constant) {
        // A specialization constant this pass froze for an earlier matrix type.
        return def.word(0);
    }
    if def.is(Op::SpecConstant) {
        let value = def.word(0)?;
        def.opcode = Op::Constant as u32;
        module.annotations.retain(|a| !(a.is(Op::Decorate) && a.word_opt(0) == Some(id) && a.word_opt(1) == Some(Decoration::SpecId as u32)));
        module.globals_mut();
        log::info!("specialization constant %{id} frozen to {value}: it sizes a cooperative matrix");
        return Ok(value);
    }
    let def = def.clone();
    Err(Error::Invalid { site: module.site(&def), message: format!("cooperative-matrix dimension or scope %{id} is not a constant or a specialization constant") })
}

struct Emulator<'t> {
    types: Types,
    layouts: HashMap<Word, Layout>,
    target: &'t DeviceCaps,
    max_subgroup: u32,
    /// The logical sub-group size where `virtualize-subgroup-size` split the physical sub-groups:
    /// lanes `[base, base + group)` hold one logical sub-group's matrices, and every lane read adds
    /// `base` (see [`Emulator::group_base`]).
    group: Option<u32>,
    /// Result ids to replace by other ids (lengths by constants).
    replace: HashMap<Word, Word>,
    /// What is left of the function's [`UNROLLED_MUL_ADDS_PER_FUNCTION`].
    unrolled_left: std::cell::Cell<u32>,
}

/// Memory operands as they follow a load or store: the mask and its parameters.
struct MemoryOperands {
    mask: u32,
    available: Option<Word>,
    visible: Option<Word>,
}

impl MemoryOperands {
    fn parse(ops: &[Operand]) -> MemoryOperands {
        let mut it = ops.iter();
        let mask = it.next().and_then(Operand::word).unwrap_or(0);
        let mut m = MemoryOperands { mask, available: None, visible: None };
        if mask & MemoryAccess::ALIGNED.bits() != 0 {
            it.next();
        }
        if mask & MemoryAccess::MAKE_POINTER_AVAILABLE.bits() != 0 {
            m.available = it.next().and_then(Operand::id);
        }
        if mask & MemoryAccess::MAKE_POINTER_VISIBLE.bits() != 0 {
            m.visible = it.next().and_then(Operand::id);
        }
        m
    }

    /// The operands for one scalar access: `Aligned` replaced by `align` where given.
    fn encode(&self, align: Option<u32>) -> Vec<Operand> {
        let mut mask = self.mask & !MemoryAccess::ALIGNED.bits();
        if align.is_some() {
            mask |= MemoryAccess::ALIGNED.bits();
        }
        if mask == 0 {
            return vec![];
        }
        let mut ops = vec![Operand::Enum(OperandKind::MemoryAccess, mask)];
        ops.extend(align.map(Operand::Literal));
        ops.extend(self.available.map(Operand::Id));
        ops.extend(self.visible.map(Operand::Id));
        ops
    }
}

/// How the elements of one load or store are addressed.
struct Access {
    class: StorageClass,
    /// The original pointer's type.
    ptr_ty: Word,
    /// The pointer's pointee, as scalar type and component count (1 for a scalar).
    word_ty: Word,
    word_scalar: Scalar,
    word_count: u32,
    /// Matrix components per word (1 when the types are equal).
    per_word: u32,
    /// Words per matrix component (1, or 2 or 4 where a scalar word is narrower: u32 components
    /// through a `uint8_t` array), taken in order, the first the lowest bits.
    parts: u32,
    base: PointerBase,
}

/// The layout of a load or store: known when translating, or chosen by a condition at run time.
#[derive(Clone, Copy)]
enum LayoutChoice {
    Known(bool),
    /// True for column-major.
    Runtime(Word),
}

/// Loop-invariant parts of an element address.
struct Addressing {
    lane: Word,
    /// Row (or column) stride in matrix components (in words where a component is several).
    stride: Word,
    /// Words per component (a constant), where a component is several narrower words.
    parts: Option<Word>,
    layout: LayoutChoice,
}

/// An element index of the lane: a literal when unrolled, a value in a loop.
#[derive(Clone, Copy)]
enum Element {
    Constant(u32),
    Dynamic(Word),
}

enum PointerBase {
    /// An access chain whose last index selects an array element: rebuilt with that index moved.
    Chain { op: Op, base: Word, indices: Vec<Word>, last: Word },
    /// A pointer stepped with `OpPtrAccessChain`: a PhysicalStorageBuffer one, or one variable
    /// pointers made (`OpSelect`, `OpPhi`, ...) in a module that declares them.
    Stepped { pointer: Word },
}

impl Emulator<'_> {
    /// The layout of matrix type `ty`, or an error naming `inst` when `ty` is not one.
    fn layout(&self, bld: &Builder<'_>, inst: &Inst, ty: Word) -> Result<Layout> {
        self.layouts.get(&ty).copied().ok_or_else(|| Error::Invalid { site: bld.module.site(inst), message: format!("%{ty} is not a cooperative-matrix type") })
    }

    fn layout_of_value(&self, v: Word) -> Option<Layout> {
        self.types.type_of(v).and_then(|t| self.layouts.get(&t)).copied()
    }

    fn involves(&self, inst: &Inst) -> bool {
        use Op::*;
        match inst.op() {
            Some(CooperativeMatrixLoadKHR | CooperativeMatrixStoreKHR | CooperativeMatrixMulAddKHR | CooperativeMatrixLengthKHR) => true,
            // Valid on arrays as they are.
            Some(Load | Store | Phi | CopyObject | CopyLogical | CompositeInsert | CompositeExtract | FunctionCall | Undef | Variable | ReturnValue) => false,
            _ => inst.result_type.is_some_and(|t| self.layouts.contains_key(&t)),
        }
    }

    fn unsupported(&self, bld: &Builder<'_>, inst: &Inst, missing: String) -> Error {
        Error::Unsupported { site: bld.module.site(inst), target: self.target.name.clone(), missing }
    }

    fn rewrite(&mut self, bld: &mut Builder<'_>, inst: &Inst, defs: &HashMap<Word, Inst>) -> Result<()> {
        match inst.op() {
            Some(Op::CooperativeMatrixLengthKHR) => {
                let l =
                    self.layouts.get(&inst.id(0)?).copied().ok_or_else(|| Error::Invalid { site: bld.module.site(inst), message: "the length of a type that is not a cooperative matrix".into() })?;
                let c = bld.module.constant_u32(l.len);
                self.replace.insert(inst.result()?, c);
                Ok(())
            }
            Some(Op::CooperativeMatrixLoadKHR) => self.load(bld, inst, defs),
            Some(Op::CooperativeMatrixStoreKHR) => self.store(bld, inst, defs),
            Some(Op::CooperativeMatrixMulAddKHR) => self.mul_add(bld, inst),
            Some(Op::CooperativeMatrixPerElementOpNV) => self.per_element(bld, inst),
            Some(Op::CooperativeMatrixReduceNV) => self.reduce(bld, inst),
            Some(Op::CompositeConstruct) => {
                let l = self.layout(bld, inst, inst.ty()?)?;
                let part = inst.id(0)?;
                if inst.operands.len() != 1 {
                    return Err(Error::Invalid { site: bld.module.site(inst), message: "a cooperative matrix constructed from more than one value".into() });
                }
                let parts = vec![Operand::Id(part); l.len as usize];
                bld.insert(Inst::new(Op::CompositeConstruct, Some(inst.ty()?), Some(inst.result()?), parts));
                Ok(())
            }
            _ => self.element_wise(bld, inst),
        }
    }

    /// Applies `inst` to each element: matrix operands are read element by element.
    fn element_wise(&self, bld: &mut Builder<'_>, inst: &Inst) -> Result<()> {
        let ty = inst.ty()?;
        let l = self.layout(bld, inst, ty)?;
        let op = match inst.op() {
            Some(Op::MatrixTimesScalar) => match l.scalar {
                Scalar::Float(_) => Op::FMul,
                Scalar::Int(_) => Op::IMul,
            },
            Some(op) => op,
            None => return Err(self.unsupported(bld, inst, "this instruction on cooperative matrices".into())),
        };
        for operand in &inst.operands {
            if let Some(ol) = operand.id().and_then(|v| self.layout_of_value(v)) {
                if (ol.rows, ol.cols) != (l.rows, l.cols) {
                    return Err(Error::Invalid { site: bld.module.site(inst), message: format!("a {}x{} matrix operand of a {}x{} result", ol.rows, ol.cols, l.rows, l.cols) });
                }
            }
        }
        // A conversion between matrices of one component type (accumulator to accumulator,
        // as producers write them between Uses) copies; between integers of one width, casts.
        let source = inst.operands.first().and_then(Operand::id).and_then(|v| self.layout_of_value(v));
        let op = match (op, source) {
            (Op::FConvert | Op::SConvert | Op::UConvert | Op::CooperativeMatrixConvertNV, Some(s)) if s.component == l.component => Op::CopyObject,
            (Op::SConvert | Op::UConvert, Some(s)) if matches!((s.scalar, l.scalar), (Scalar::Int(a), Scalar::Int(b)) if a == b) => Op::Bitcast,
            _ => op,
        };
        let mut elements = Vec::with_capacity(l.len as usize);
        for e in 0..l.len {
            let mut ops = Vec::with_capacity(inst.operands.len());
            for operand in &inst.operands {
                match operand.id().and_then(|v| self.layout_of_value(v).map(|ol| (v, ol))) {
                    Some((v, ol)) => ops.push(Operand::Id(bld.composite_extract(ol.component, v, e))),
                    None => ops.push(operand.clone()),
                }
            }
            elements.push(Operand::Id(bld.emit(op, l.component, ops)));
        }
        bld.insert(Inst::new(Op::CompositeConstruct, Some(ty), Some(inst.result()?), elements));
        Ok(())
    }

    /// `OpCooperativeMatrixPerElementOpNV` (SPV_NV_cooperative_matrix2): the function called for
    /// each of the lane's elements with its row and column (the lane's column of the element's
    /// line, as the function's integer parameters type them), the element, and the extra
    /// operands (a matrix's own element `e`, any other value as it is).
    fn per_element(&self, bld: &mut Builder<'_>, inst: &Inst) -> Result<()> {
        let ty = inst.ty()?;
        let l = self.layout(bld, inst, ty)?;
        let (m, func) = (inst.id(0)?, inst.id(1)?);
        let extras = inst.operands.len().saturating_sub(2);
        let Some((_, params)) = bld.module.function_signature(func).filter(|(_, p)| p.len() == 3 + extras && p[..2].iter().all(|t| self.types.int(*t).is_some_and(|(w, _)| w == 32))) else {
            return Err(Error::Invalid { site: bld.module.site(inst), message: format!("per-element function %{func} does not take (row, column, element, ..) of the matrix") });
        };
        let uint = bld.module.type_int(32, false);
        let lane = self.lane(bld, l.lanes);
        let as_param = |bld: &mut Builder<'_>, ty: Word, v: Word| if ty == uint { v } else { bld.bitcast(ty, v) };
        let mut elements = Vec::with_capacity(l.len as usize);
        for e in 0..l.len {
            let (row, first) = l.place(e);
            let (row, first) = (bld.module.constant_u32(row), bld.module.constant_u32(first));
            let col = bld.iadd(uint, first, lane);
            let mut ops = vec![Operand::Id(func), Operand::Id(as_param(bld, params[0], row)), Operand::Id(as_param(bld, params[1], col)), Operand::Id(bld.composite_extract(l.component, m, e))];
            for v in inst.operands.iter().skip(2).filter_map(Operand::id) {
                ops.push(Operand::Id(match self.layout_of_value(v) {
                    Some(ol) if (ol.rows, ol.cols) == (l.rows, l.cols) => bld.composite_extract(ol.component, v, e),
                    Some(ol) => return Err(Error::Invalid { site: bld.module.site(inst), message: format!("a {}x{} per-element operand of a {}x{} matrix", ol.rows, ol.cols, l.rows, l.cols) }),
                    None => v,
                }));
            }
            elements.push(Operand::Id(bld.emit(Op::FunctionCall, l.component, ops)));
        }
        bld.insert(Inst::new(Op::CompositeConstruct, Some(ty), Some(inst.result()?), elements));
        Ok(())
    }

    /// `OpCooperativeMatrixReduceNV` by `Row`, `Column` or both (SPV_NV_cooperative_matrix2;
    /// `lower-cooperative-matrix2` leaves only those here, on targets with sub-group shuffles):
    /// each lane folds its own elements of a row (a row's elements lie in every lane of the
    /// replica, `C / P` each) or of a column (a column's lie in one lane), left to right, and a
    /// row's partial results are combined across the `P` lanes by a butterfly of
    /// `OpGroupNonUniformShuffleXor` (the lower lane's value first, so that every lane computes
    /// the same value). Each element of the result takes its row's, column's or the matrix's
    /// value.
    fn reduce(&self, bld: &mut Builder<'_>, inst: &Inst) -> Result<()> {
        let ty = inst.ty()?;
        let to = self.layout(bld, inst, ty)?;
        let m = inst.id(0)?;
        let from = self.layout_of_value(m).ok_or_else(|| Error::Invalid { site: bld.module.site(inst), message: format!("%{m} is not a cooperative matrix") })?;
        let (mode, func) = (inst.word(1)?, inst.id(2)?);
        let t = from.component;
        let call = |bld: &mut Builder<'_>, a: Word, b: Word| bld.emit(Op::FunctionCall, t, vec![Operand::Id(func), Operand::Id(a), Operand::Id(b)]);
        let fold = |bld: &mut Builder<'_>, elements: &mut dyn Iterator<Item = u32>| -> Option<Word> {
            let mut acc: Option<Word> = None;
            for e in elements {
                let x = bld.composite_extract(t, m, e);
                acc = Some(match acc {
                    None => x,
                    Some(a) => call(bld, a, x),
                });
            }
            acc
        };
        // Combines a value across the replica's lanes.
        let lane = (from.lanes > 1).then(|| self.lane(bld, from.lanes));
        let across = |bld: &mut Builder<'_>, v: Word| -> Word {
            let uint = bld.module.type_int(32, false);
            let boolean = bld.module.type_bool();
            let scope = bld.module.constant_u32(Scope::Subgroup as u32);
            let id = lane.unwrap_or(0);
            let mut v = v;
            let mut mask = 1;
            while mask < from.lanes {
                let mc = bld.module.constant_u32(mask);
                let other = bld.op(Op::GroupNonUniformShuffleXor, t, &[scope, v, mc]);
                let bit = bld.op(Op::BitwiseAnd, uint, &[id, mc]);
                let zero = bld.module.constant_u32(0);
                let low = bld.op(Op::IEqual, boolean, &[bit, zero]);
                let first = bld.select(t, low, v, other);
                let second = bld.select(t, low, other, v);
                v = call(bld, first, second);
                mask *= 2;
            }
            v
        };
        let invalid = |bld: &Builder<'_>, what: &str| Error::Invalid {
            site: bld.module.site(inst),
            message: format!("a {what} reduction of a {}x{} matrix into a {}x{} one", from.rows, from.cols, to.rows, to.cols),
        };
        let per_line = from.cols / from.lanes;
        let values: Vec<Word> = match mode {
            1 => {
                if to.rows != from.rows {
                    return Err(invalid(bld, "Row"));
                }
                let totals: Vec<Word> = (0..from.rows)
                    .map(|r| {
                        let partial = fold(bld, &mut (r * per_line..(r + 1) * per_line)).unwrap_or(0);
                        across(bld, partial)
                    })
                    .collect();
                (0..to.len).map(|e| totals[to.place(e).0 as usize]).collect()
            }
            2 => {
                if to.cols != from.cols || to.lanes != from.lanes {
                    return Err(invalid(bld, "Column"));
                }
                // The lane's j-th column of every row: elements j, j + C/P, j + 2C/P, ...
                let totals: Vec<Word> = (0..per_line).map(|j| fold(bld, &mut (0..from.rows).map(|r| r * per_line + j)).unwrap_or(0)).collect();
                (0..to.len).map(|e| totals[(to.place(e).1 / from.lanes) as usize]).collect()
            }
            3 => {
                let partial = fold(bld, &mut (0..from.len)).unwrap_or(0);
                let total = across(bld, partial);
                vec![total; to.len as usize]
            }
            _ => return Err(invalid(bld, "2x2")),
        };
        let elements = values.into_iter().map(Operand::Id).collect();
        bld.insert(Inst::new(Op::CompositeConstruct, Some(ty), Some(inst.result()?), elements));
        Ok(())
    }

    /// The first lane of the invocation's logical sub-group (`id - id % group`) where the physical
    /// sub-group is split, else `None` (lane reads name physical lanes as they are).
    fn group_base(&self, bld: &mut Builder<'_>) -> Option<Word> {
        let g = self.group?;
        let uint = bld.module.type_int(32, false);
        let var = bld.module.get_or_add_builtin(BuiltIn::SubgroupLocalInvocationId, uint);
        let id = bld.load(uint, var);
        let mask = bld.module.constant_u32(!(g - 1));
        Some(bld.op(Op::BitwiseAnd, uint, &[id, mask]))
    }

    /// Lane `lane` of the invocation's logical sub-group, as a physical lane.
    fn in_group(bld: &mut Builder<'_>, base: Option<Word>, lane: Word) -> Word {
        match base {
            Some(base) => {
                let uint = bld.module.type_int(32, false);
                bld.op(Op::IAdd, uint, &[base, lane])
            }
            None => lane,
        }
    }

    /// The lane's index within its replica (`SubgroupLocalInvocationId % lanes`), as a u32.
    fn lane(&self, bld: &mut Builder<'_>, lanes: u32) -> Word {
        let uint = bld.module.type_int(32, false);
        let var = bld.module.get_or_add_builtin(BuiltIn::SubgroupLocalInvocationId, uint);
        let id = bld.load(uint, var);
        let mask = bld.module.constant_u32(lanes - 1);
        bld.op(Op::BitwiseAnd, uint, &[id, mask])
    }

    fn scalar_of(&self, ty: Word) -> Option<Scalar> {
        if let Some((w, _)) = self.types.int(ty) {
            Some(Scalar::Int(w))
        } else {
            self.types.float(ty).map(|(w, _)| Scalar::Float(w))
        }
    }

    /// Works out how the elements behind `pointer` are addressed.
    fn access(&self, bld: &Builder<'_>, inst: &Inst, pointer: Word, l: &Layout, defs: &HashMap<Word, Inst>) -> Result<Access> {
        let ptr_ty = self.types.type_of(pointer).and_then(|t| self.types.defs.get(&t)).filter(|d| d.is(Op::TypePointer));
        let Some(ptr_ty) = ptr_ty else {
            return Err(Error::Invalid { site: bld.module.site(inst), message: format!("%{pointer} is not a pointer") });
        };
        let class = StorageClass::from_u32(ptr_ty.word(0)?).unwrap_or(StorageClass::Generic);
        let pointee = ptr_ty.id(1)?;
        let (word_ty, word_count) = self.types.vector(pointee).unwrap_or((pointee, 1));
        let Some(word_scalar) = self.scalar_of(word_ty) else {
            return Err(self.unsupported(bld, inst, format!("cooperative-matrix access through a pointer to %{pointee} (not a scalar or vector)")));
        };
        let (ww, cw) = (word_scalar.width(), l.scalar.width());
        let per_word = if ww >= cw && ww.checked_rem(cw) == Some(0) { ww / cw } else { 0 };
        let parts = if ww < cw && cw <= 32 && word_count == 1 && cw % ww == 0 { cw / ww } else { 1 };
        if !matches!(per_word, 1 | 2 | 4) && !matches!(parts, 2 | 4) {
            return Err(self.unsupported(bld, inst, format!("cooperative-matrix access of {cw}-bit components through {ww}-bit words")));
        }
        let per_word = per_word.max(1);
        let chain = defs.get(&pointer).filter(|d| matches!(d.op(), Some(Op::AccessChain | Op::InBoundsAccessChain)));
        let base = match chain {
            Some(d) if self.chain_ends_in_array(d) => {
                let ids: Vec<Word> = d.operands.iter().filter_map(Operand::id).collect();
                let (last, rest) = ids[1..].split_last().map(|(l, r)| (*l, r.to_vec())).unwrap_or_default();
                PointerBase::Chain { op: d.op().unwrap_or(Op::AccessChain), base: ids[0], indices: rest, last }
            }
            _ if class == StorageClass::PhysicalStorageBuffer => PointerBase::Stepped { pointer },
            _ if self.variable_pointer(bld, class) => PointerBase::Stepped { pointer },
            _ => {
                return Err(self.unsupported(
                    bld,
                    inst,
                    format!("cooperative-matrix access through %{pointer}, which is not an access chain into an array, a PhysicalStorageBuffer pointer or a variable pointer"),
                ));
            }
        };
        Ok(Access { class, ptr_ty: ptr_ty.result()?, word_ty, word_scalar, word_count, per_word, parts, base })
    }

    /// Whether a `class` pointer that is not an access chain may be stepped with
    /// `OpPtrAccessChain`: the module declares the variable pointers that cover the class.
    fn variable_pointer(&self, bld: &Builder<'_>, class: StorageClass) -> bool {
        match class {
            StorageClass::StorageBuffer => bld.module.has_capability(Capability::VariablePointersStorageBuffer) || bld.module.has_capability(Capability::VariablePointers),
            StorageClass::Workgroup => bld.module.has_capability(Capability::VariablePointers),
            _ => false,
        }
    }

    /// Whether the last index of access chain `d` selects an element of an array.
    fn chain_ends_in_array(&self, d: &Inst) -> bool {
        let ids: Vec<Word> = d.operands.iter().filter_map(Operand::id).collect();
        if ids.len() < 2 {
            return false;
        }
        let pointee = |p: Word| self.types.type_of(p).and_then(|t| self.types.defs.get(&t)).and_then(|d| d.id(1).ok());
        let Some(mut ty) = pointee(ids[0]) else {
            return false;
        };
        for idx in &ids[1..ids.len() - 1] {
            let Some(def) = self.types.defs.get(&ty) else {
                return false;
            };
            ty = match def.op() {
                Some(Op::TypeStruct) => match self.types.const_u32(*idx).and_then(|k| def.operands.get(k as usize)).and_then(Operand::id) {
                    Some(t) => t,
                    None => return false,
                },
                Some(Op::TypeArray | Op::TypeRuntimeArray | Op::TypeVector | Op::TypeMatrix) => match def.id(0) {
                    Ok(t) => t,
                    Err(_) => return false,
                },
                _ => return false,
            };
        }
        self.types.defs.get(&ty).is_some_and(|d| matches!(d.op(), Some(Op::TypeArray | Op::TypeRuntimeArray)))
    }

    /// A pointer to word `word` (in units of the pointee's scalars) past the original pointer.
    fn word_pointer(&self, bld: &mut Builder<'_>, a: &Access, word: Word) -> Word {
        let uint = bld.module.type_int(32, false);
        let (element, component) = if a.word_count > 1 {
            let n = bld.module.constant_u32(a.word_count);
            (bld.op(Op::UDiv, uint, &[word, n]), Some(bld.op(Op::UMod, uint, &[word, n])))
        } else {
            (word, None)
        };
        let ty = if component.is_some() { bld.module.type_pointer(a.class, a.word_ty) } else { a.ptr_ty };
        match &a.base {
            PointerBase::Chain { op, base, indices, last } => {
                let moved = bld.index_plus(&self.types, *last, element);
                let mut ids = vec![*base];
                ids.extend(indices);
                ids.push(moved);
                ids.extend(component);
                bld.op(*op, ty, &ids)
            }
            PointerBase::Stepped { pointer } => {
                // Explicitly laid-out classes step by the pointer type's ArrayStride; plain
                // workgroup memory has no layout to decorate.
                if a.class != StorageClass::Workgroup && bld.module.decoration(a.ptr_ty, Decoration::ArrayStride).is_none() {
                    let bytes = a.word_scalar.width() / 8 * a.word_count;
                    bld.module.decorate(a.ptr_ty, Decoration::ArrayStride, &[bytes]);
                }
                let mut ids = vec![*pointer, element];
                ids.extend(component);
                bld.op(Op::PtrAccessChain, ty, &ids)
            }
        }
    }

    /// What every element's address needs, computed once before the elements: the lane, the
    /// stride in matrix components, and the layout (known, or a condition on the layout id).
    fn addressing(&self, bld: &mut Builder<'_>, inst: &Inst, l: &Layout, a: &Access, layout: Word, stride: Option<Word>) -> Result<Addressing> {
        let uint = bld.module.type_int(32, false);
        let lane = self.lane(bld, l.lanes);
        let column_major = match self.types.const_u32(layout) {
            Some(v) if v == CooperativeMatrixLayout::RowMajorKHR as u32 => Some(false),
            Some(v) if v == CooperativeMatrixLayout::ColumnMajorKHR as u32 => Some(true),
            Some(v) => return Err(self.unsupported(bld, inst, format!("cooperative-matrix memory layout {v}"))),
            None => None,
        };
        let per_element = a.word_count * a.per_word;
        let stride = match stride {
            Some(s) => {
                let s = bld.to_32_bits(&self.types, uint, s);
                if per_element == 1 {
                    s
                } else {
                    let n = bld.module.constant_u32(per_element);
                    bld.op(Op::IMul, uint, &[s, n])
                }
            }
            // Without a stride the matrix is packed.
            None => bld.module.constant_u32(if column_major == Some(true) { l.rows } else { l.cols }),
        };
        let layout = match column_major {
            Some(c) => LayoutChoice::Known(c),
            None => {
                let boolean = bld.module.type_bool();
                let col = bld.module.constant_u32(CooperativeMatrixLayout::ColumnMajorKHR as u32);
                LayoutChoice::Runtime(bld.op(Op::IEqual, boolean, &[layout, col]))
            }
        };
        let parts = (a.parts > 1).then(|| bld.module.constant_u32(a.parts));
        Ok(Addressing { lane, stride, parts, layout })
    }

    /// The component offset from the pointer of the lane's element at `row`, column
    /// `col0 + lane` (ids: constants when unrolled, values in a loop); in words where a
    /// component is several (the minor index scaled by their count).
    fn offset(&self, bld: &mut Builder<'_>, at: &Addressing, row: Word, col0: Word) -> Word {
        let uint = bld.module.type_int(32, false);
        let col = bld.op(Op::IAdd, uint, &[col0, at.lane]);
        let minor = |bld: &mut Builder<'_>, m: Word| match at.parts {
            Some(n) => bld.op(Op::IMul, uint, &[m, n]),
            None => m,
        };
        let row_major = |bld: &mut Builder<'_>| {
            let r = bld.op(Op::IMul, uint, &[row, at.stride]);
            let c = minor(bld, col);
            bld.op(Op::IAdd, uint, &[r, c])
        };
        let column_major = |bld: &mut Builder<'_>| {
            let c = bld.op(Op::IMul, uint, &[col, at.stride]);
            let r = minor(bld, row);
            bld.op(Op::IAdd, uint, &[c, r])
        };
        match at.layout {
            LayoutChoice::Known(false) => row_major(bld),
            LayoutChoice::Known(true) => column_major(bld),
            LayoutChoice::Runtime(cond) => {
                let rm = row_major(bld);
                let cm = column_major(bld);
                bld.select(uint, cond, cm, rm)
            }
        }
    }

    /// Emits `body(bld, element, row, col0)` for every element of the lane: unrolled with
    /// constant ids where there is one element or the cursor is in a loop header (which a loop
    /// cannot split), otherwise as one counted loop, which keeps the module small (the driver
    /// may still unroll it, unless the target's `unrolls_element_loops` marks it `DontUnroll`).
    fn for_each_element(&self, bld: &mut Builder<'_>, l: &Layout, mut body: impl FnMut(&mut Builder<'_>, Element, Word, Word) -> Result<()>) -> Result<()> {
        let in_header = bld.module.functions[bld.cursor.function].blocks[bld.cursor.block].insts.iter().any(|i| i.is(Op::LoopMerge));
        if l.len == 1 || in_header {
            for e in 0..l.len {
                let (row, col0) = l.place(e);
                let (row, col0) = (bld.module.constant_u32(row), bld.module.constant_u32(col0));
                body(bld, Element::Constant(e), row, col0)?;
            }
            return Ok(());
        }
        let uint = bld.module.type_int(32, false);
        let (zero, len) = (bld.module.constant_u32(0), bld.module.constant_u32(l.len));
        let (lanes, cols) = (bld.module.constant_u32(l.lanes), bld.module.constant_u32(l.cols));
        let mut result = Ok(());
        bld.counted_loop_with(zero, len, self.target.workarounds.element_loop_control(), |bld, e| {
            let i = bld.op(Op::IMul, uint, &[e, lanes]);
            let row = bld.op(Op::UDiv, uint, &[i, cols]);
            let col0 = bld.op(Op::UMod, uint, &[i, cols]);
            result = body(bld, Element::Dynamic(e), row, col0);
        });
        result
    }

    /// A new `Function` variable of type `ty` at the top of the cursor's function.
    fn function_variable(&self, bld: &mut Builder<'_>, ty: Word) -> Word {
        bld.function_variable(ty)
    }

    /// A pointer to element `e` of the matrix variable `var` of layout `l`.
    fn element_pointer(&self, bld: &mut Builder<'_>, l: &Layout, var: Word, e: Word) -> Word {
        let ptr = bld.module.type_pointer(StorageClass::Function, l.component);
        bld.access_chain(ptr, var, &[e])
    }

    fn load(&self, bld: &mut Builder<'_>, inst: &Inst, defs: &HashMap<Word, Inst>) -> Result<()> {
        let ty = inst.ty()?;
        let l = self.layout(bld, inst, ty)?;
        let pointer = inst.id(0)?;
        let layout = inst.id(1)?;
        let stride = inst.operands.get(2).and_then(Operand::id);
        let mem = MemoryOperands::parse(inst.operands.get(if stride.is_some() { 3 } else { 2 }..).unwrap_or(&[]));
        let a = self.access(bld, inst, pointer, &l, defs)?;
        let at = self.addressing(bld, inst, &l, &a, layout, stride)?;
        let uint = bld.module.type_int(32, false);
        let align = (a.class == StorageClass::PhysicalStorageBuffer).then_some(a.word_scalar.width() / 8);
        let mut constants = Vec::new();
        let var = self.function_variable(bld, ty);
        self.for_each_element(bld, &l, |bld, e, row, col0| {
            let off = self.offset(bld, &at, row, col0);
            if a.parts > 1 {
                let value = self.load_parts(bld, &l, &a, off, |bld, p| {
                    let mut ops = vec![Operand::Id(p)];
                    ops.extend(mem.encode(align));
                    bld.emit(Op::Load, a.word_ty, ops)
                });
                match e {
                    Element::Constant(_) => constants.push(Operand::Id(value)),
                    Element::Dynamic(e) => {
                        let p = self.element_pointer(bld, &l, var, e);
                        bld.store(p, value);
                    }
                }
                return Ok(());
            }
            let (word, sub) = if a.per_word > 1 {
                let q = bld.module.constant_u32(a.per_word);
                (bld.op(Op::UDiv, uint, &[off, q]), Some(bld.op(Op::UMod, uint, &[off, q])))
            } else {
                (off, None)
            };
            let p = self.word_pointer(bld, &a, word);
            let mut ops = vec![Operand::Id(p)];
            ops.extend(mem.encode(align));
            let w = bld.emit(Op::Load, a.word_ty, ops);
            let value = match sub {
                Some(sub) => {
                    let v = bld.module.type_vector(l.component, a.per_word);
                    let parts = bld.bitcast(v, w);
                    bld.op(Op::VectorExtractDynamic, l.component, &[parts, sub])
                }
                None if a.word_ty != l.component => bld.bitcast(l.component, w),
                None => w,
            };
            match e {
                Element::Constant(_) => constants.push(Operand::Id(value)),
                Element::Dynamic(e) => {
                    let p = self.element_pointer(bld, &l, var, e);
                    bld.store(p, value);
                }
            }
            Ok(())
        })?;
        if constants.len() == l.len as usize {
            bld.insert(Inst::new(Op::CompositeConstruct, Some(ty), Some(inst.result()?), constants));
        } else {
            bld.insert(Inst::new(Op::Load, Some(ty), Some(inst.result()?), vec![Operand::Id(var)]));
        }
        Ok(())
    }

    fn store(&self, bld: &mut Builder<'_>, inst: &Inst, defs: &HashMap<Word, Inst>) -> Result<()> {
        let [pointer, object, layout] = inst.ids()?;
        let Some(l) = self.layout_of_value(object) else {
            return Err(Error::Invalid { site: bld.module.site(inst), message: format!("%{object} is not a cooperative matrix") });
        };
        let ty = self.types.type_of(object).unwrap_or_default();
        let stride = inst.operands.get(3).and_then(Operand::id);
        let mem = MemoryOperands::parse(inst.operands.get(if stride.is_some() { 4 } else { 3 }..).unwrap_or(&[]));
        let a = self.access(bld, inst, pointer, &l, defs)?;
        let align = (a.class == StorageClass::PhysicalStorageBuffer).then_some(a.word_scalar.width() / 8);
        let var = self.function_variable(bld, ty);
        if a.per_word > 1 {
            let packing = self.packing(bld, inst, &l, &a, layout)?;
            bld.store(var, object);
            return self.replica_only(bld, inst, &l, |bld| self.store_packed(bld, inst, (&l, &a, packing), (object, var), (layout, stride), &mem, align));
        }
        bld.store(var, object);
        let emit = |bld: &mut Builder<'_>| -> Result<()> {
            let at = self.addressing(bld, inst, &l, &a, layout, stride)?;
            self.for_each_element(bld, &l, |bld, e, row, col0| {
                let off = self.offset(bld, &at, row, col0);
                let mut v = match e {
                    Element::Constant(e) => bld.composite_extract(l.component, object, e),
                    Element::Dynamic(e) => {
                        let ep = self.element_pointer(bld, &l, var, e);
                        bld.load(l.component, ep)
                    }
                };
                if a.parts > 1 {
                    self.store_parts(bld, &l, &a, off, v, |bld, p, w| {
                        let mut ops = vec![Operand::Id(p), Operand::Id(w)];
                        ops.extend(mem.encode(align));
                        bld.emit_void(Op::Store, ops);
                    });
                    return Ok(());
                }
                let p = self.word_pointer(bld, &a, off);
                if a.word_ty != l.component {
                    v = bld.bitcast(a.word_ty, v);
                }
                let mut ops = vec![Operand::Id(p), Operand::Id(v)];
                ops.extend(mem.encode(align));
                bld.emit_void(Op::Store, ops);
                Ok(())
            })
        };
        self.replica_only(bld, inst, &l, emit)
    }

    /// A component read as `a.parts` narrower words from word offset `off` on (`load` reads the
    /// word a pointer points at), the first word the lowest bits.
    fn load_parts(&self, bld: &mut Builder<'_>, l: &Layout, a: &Access, off: Word, mut load: impl FnMut(&mut Builder<'_>, Word) -> Word) -> Word {
        let uint = bld.module.type_int(32, false);
        let ww = a.word_scalar.width();
        let word_uint = bld.module.type_int(ww, false);
        let mut acc = 0;
        for k in 0..a.parts {
            let kc = bld.module.constant_u32(k);
            let at = if k == 0 { off } else { bld.iadd(uint, off, kc) };
            let p = self.word_pointer(bld, a, at);
            let w = load(bld, p);
            let bits = if a.word_ty == word_uint { w } else { bld.bitcast(word_uint, w) };
            let wide = bld.op(Op::UConvert, uint, &[bits]);
            acc = if k == 0 {
                wide
            } else {
                let shift = bld.module.constant_u32(ww * k);
                let placed = bld.op(Op::ShiftLeftLogical, uint, &[wide, shift]);
                bld.op(Op::BitwiseOr, uint, &[acc, placed])
            };
        }
        let cw = l.scalar.width();
        let comp_uint = bld.module.type_int(cw, false);
        let bits = if cw == 32 { acc } else { bld.op(Op::UConvert, comp_uint, &[acc]) };
        if comp_uint == l.component {
            bits
        } else {
            bld.bitcast(l.component, bits)
        }
    }

    /// Component `v` written as `a.parts` narrower words from word offset `off` on (`store`
    /// writes a word through a pointer), the first word the lowest bits.
    fn store_parts(&self, bld: &mut Builder<'_>, l: &Layout, a: &Access, off: Word, v: Word, mut store: impl FnMut(&mut Builder<'_>, Word, Word)) {
        let uint = bld.module.type_int(32, false);
        let (ww, cw) = (a.word_scalar.width(), l.scalar.width());
        let comp_uint = bld.module.type_int(cw, false);
        let word_uint = bld.module.type_int(ww, false);
        let bits = if l.component == comp_uint { v } else { bld.bitcast(comp_uint, v) };
        let bits = if cw == 32 { bits } else { bld.op(Op::UConvert, uint, &[bits]) };
        for k in 0..a.parts {
            let kc = bld.module.constant_u32(k);
            let at = if k == 0 { off } else { bld.iadd(uint, off, kc) };
            let p = self.word_pointer(bld, a, at);
            let shift = bld.module.constant_u32(ww * k);
            let shifted = if k == 0 { bits } else { bld.op(Op::ShiftRightLogical, uint, &[bits, shift]) };
            let narrow = bld.op(Op::UConvert, word_uint, &[shifted]);
            let w = if a.word_ty == word_uint { narrow } else { bld.bitcast(a.word_ty, narrow) };
            store(bld, p, w);
        }
    }

    /// Checks that a store of matrix `l` through `a`'s wider words (f16 components through
    /// `uint`, bytes through `uvec4`) writes whole words that hold matrix elements only: the layout
    /// known, and the words' components in one row (row-major: held by neighbouring lanes, which
    /// a shuffle gathers) or one column (column-major: held by one lane). Returns whether the
    /// layout is column-major.
    fn packing(&self, bld: &Builder<'_>, inst: &Inst, l: &Layout, a: &Access, layout: Word) -> Result<bool> {
        let what = format!("storing {}-bit matrix components through {}-bit words", l.scalar.width(), a.word_scalar.width());
        let column_major = match self.types.const_u32(layout) {
            Some(v) if v == CooperativeMatrixLayout::RowMajorKHR as u32 => false,
            Some(v) if v == CooperativeMatrixLayout::ColumnMajorKHR as u32 => true,
            _ => return Err(self.unsupported(bld, inst, format!("{what} with a layout that is not a constant"))),
        };
        let (minor, line) = if column_major { (l.rows, "column") } else { (l.cols, "row") };
        if minor % a.per_word != 0 {
            return Err(self.unsupported(bld, inst, format!("{what}: a {line} of {minor} components does not fill whole words")));
        }
        if !column_major {
            if a.per_word > l.lanes {
                return Err(self.unsupported(bld, inst, format!("{what}: a word spans more than the {} lanes a row is spread over", l.lanes)));
            }
            if !self.target.has_subgroup_op(crate::profile::SubgroupOp::Shuffle) {
                return Err(self.unsupported(bld, inst, format!("{what} row-major without subgroup shuffles")));
            }
            if bld.module.functions[bld.cursor.function].blocks[bld.cursor.block].insts.iter().any(|i| i.is(Op::LoopMerge)) {
                return Err(self.unsupported(bld, inst, format!("{what} row-major in a loop header block")));
            }
        }
        Ok(column_major)
    }

    /// The store of [`Self::store`] through words of `a.per_word` components: each word's
    /// components are gathered into one lane (with shuffles from the neighbouring lanes in a
    /// row-major store; from the lane's own elements `C / P` apart in a column-major one) as
    /// 32-bit words, packed by shifts and written by that lane.
    #[allow(clippy::too_many_arguments)]
    fn store_packed(
        &self,
        bld: &mut Builder<'_>,
        inst: &Inst,
        (l, a, column_major): (&Layout, &Access, bool),
        (object, var): (Word, Word),
        (layout, stride): (Word, Option<Word>),
        mem: &MemoryOperands,
        align: Option<u32>,
    ) -> Result<()> {
        let uint = bld.module.type_int(32, false);
        let boolean = bld.module.type_bool();
        let at = self.addressing(bld, inst, l, a, layout, stride)?;
        let pw = a.per_word;
        let per_word = bld.module.constant_u32(pw);
        let zero = bld.module.constant_u32(0);
        let cw = l.scalar.width();
        // The value of the lane's element `e + plus`, as its bits in the low bits of a 32-bit
        // word (subgroup operations on narrow types need shaderSubgroupExtendedTypes).
        let element = |bld: &mut Builder<'_>, e: Element, plus: u32| {
            let v = match e {
                Element::Constant(e) => bld.composite_extract(l.component, object, e + plus),
                Element::Dynamic(e) => {
                    let index = if plus == 0 {
                        e
                    } else {
                        let p = bld.module.constant_u32(plus);
                        bld.op(Op::IAdd, uint, &[e, p])
                    };
                    let p = self.element_pointer(bld, l, var, index);
                    bld.load(l.component, p)
                }
            };
            if cw == 32 {
                return bld.bitcast(uint, v);
            }
            let vt = bld.module.type_vector(l.component, 32 / cw);
            let null = bld.module.constant_null(l.component);
            let mut parts = vec![Operand::Id(v)];
            parts.resize((32 / cw) as usize, Operand::Id(null));
            let padded = bld.emit(Op::CompositeConstruct, vt, parts);
            bld.bitcast(uint, padded)
        };
        // Packs the parts (component bits, lowest component first) and stores them as the word
        // holding component offset `off`.
        let write = |bld: &mut Builder<'_>, parts: Vec<Word>, off: Word| {
            let chunks: Vec<Word> = parts
                .chunks((32 / cw) as usize)
                .map(|c| {
                    c.iter().enumerate().skip(1).fold(c[0], |acc, (q, x)| {
                        let shift = bld.module.constant_u32(q as u32 * cw);
                        let moved = bld.op(Op::ShiftLeftLogical, uint, &[*x, shift]);
                        bld.op(Op::BitwiseOr, uint, &[acc, moved])
                    })
                })
                .collect();
            let word = match a.word_scalar.width() {
                16 => {
                    let pair = bld.module.type_vector(a.word_ty, 2);
                    let pair = bld.bitcast(pair, chunks[0]);
                    bld.composite_extract(a.word_ty, pair, 0)
                }
                32 if a.word_ty == uint => chunks[0],
                32 => bld.bitcast(a.word_ty, chunks[0]),
                _ => {
                    let uvec2 = bld.module.type_vector(uint, 2);
                    let both = bld.emit(Op::CompositeConstruct, uvec2, chunks.into_iter().map(Operand::Id).collect());
                    bld.bitcast(a.word_ty, both)
                }
            };
            let index = bld.op(Op::UDiv, uint, &[off, per_word]);
            let p = self.word_pointer(bld, a, index);
            let mut ops = vec![Operand::Id(p), Operand::Id(word)];
            ops.extend(mem.encode(align));
            bld.emit_void(Op::Store, ops);
        };
        if column_major {
            // Rows `row .. row + pw` of the lane's column are its elements `e`, `e + C / P`, ...
            let step = l.cols / l.lanes;
            return self.for_each_element(bld, l, |bld, e, row, col0| {
                let gather = |bld: &mut Builder<'_>| {
                    let parts = (0..pw).map(|q| element(bld, e, q * step)).collect();
                    let off = self.offset(bld, &at, row, col0);
                    write(bld, parts, off);
                };
                match e {
                    Element::Constant(k) if l.place(k).0 % pw == 0 => gather(bld),
                    Element::Constant(_) => {}
                    Element::Dynamic(_) => {
                        let r = bld.op(Op::UMod, uint, &[row, per_word]);
                        let starts = bld.op(Op::IEqual, boolean, &[r, zero]);
                        bld.if_then(starts, gather);
                    }
                }
                Ok(())
            });
        }
        // Row-major: lanes `first .. first + pw` hold one word's components.
        let scope = bld.module.constant_u32(Scope::Subgroup as u32);
        let low = bld.module.constant_u32(pw - 1);
        let high = bld.module.constant_u32(!(pw - 1));
        let first = bld.op(Op::BitwiseAnd, uint, &[at.lane, high]);
        let base = self.group_base(bld);
        let first = Self::in_group(bld, base, first);
        let sub = bld.op(Op::BitwiseAnd, uint, &[at.lane, low]);
        let writer = bld.op(Op::IEqual, boolean, &[sub, zero]);
        self.for_each_element(bld, l, |bld, e, row, col0| {
            let v = element(bld, e, 0);
            let parts = (0..pw)
                .map(|q| {
                    let q = bld.module.constant_u32(q);
                    let src = bld.op(Op::IAdd, uint, &[first, q]);
                    bld.op(Op::GroupNonUniformShuffle, uint, &[scope, v, src])
                })
                .collect();
            let off = self.offset(bld, &at, row, col0);
            bld.if_then(writer, |bld| write(bld, parts, off));
            Ok(())
        })
    }

    /// Emits `emit` for the lanes of the first replica of a matrix of layout `l` only: all of them
    /// where the subgroup has no more lanes than the matrix, else under a condition.
    fn replica_only(&self, bld: &mut Builder<'_>, inst: &Inst, l: &Layout, emit: impl FnOnce(&mut Builder<'_>) -> Result<()>) -> Result<()> {
        if l.lanes >= self.max_subgroup {
            return emit(bld);
        }
        let in_loop_header = bld.module.functions[bld.cursor.function].blocks[bld.cursor.block].insts.iter().any(|i| i.is(Op::LoopMerge));
        if in_loop_header {
            return Err(self.unsupported(bld, inst, format!("a cooperative-matrix store in a loop header block on subgroups wider than {} lanes", l.lanes)));
        }
        let uint = bld.module.type_int(32, false);
        let boolean = bld.module.type_bool();
        let builtin = bld.module.get_or_add_builtin(BuiltIn::SubgroupLocalInvocationId, uint);
        let id = bld.load(uint, builtin);
        let id = match self.group {
            Some(g) => {
                let mask = bld.module.constant_u32(g - 1);
                bld.op(Op::BitwiseAnd, uint, &[id, mask])
            }
            None => id,
        };
        let lanes = bld.module.constant_u32(l.lanes);
        let first = bld.op(Op::ULessThan, boolean, &[id, lanes]);
        let mut result = Ok(());
        bld.if_then(first, |bld| result = emit(bld));
        result
    }

    /// Converts scalar `v` of type `from` to accumulator type `to`, sign-extending integers
    /// when `signed`.
    fn convert(&self, bld: &mut Builder<'_>, v: Word, from: (Word, Scalar), to: (Word, Scalar), signed: bool) -> Word {
        if from.0 == to.0 {
            return v;
        }
        match (from.1, to.1) {
            (Scalar::Float(a), Scalar::Float(b)) if a == b => bld.bitcast(to.0, v),
            (Scalar::Float(_), Scalar::Float(_)) => bld.op(Op::FConvert, to.0, &[v]),
            (Scalar::Int(a), Scalar::Int(b)) if a == b => bld.bitcast(to.0, v),
            (Scalar::Int(_), Scalar::Int(b)) => {
                if signed {
                    bld.op(Op::SConvert, to.0, &[v])
                } else {
                    let u = bld.module.type_int(b, false);
                    let r = bld.op(Op::UConvert, u, &[v]);
                    if u == to.0 {
                        r
                    } else {
                        bld.bitcast(to.0, r)
                    }
                }
            }
            // Mixed float and integer operands are not a valid MulAdd; the validator says so.
            (Scalar::Int(_), Scalar::Float(_)) => bld.op(if signed { Op::ConvertSToF } else { Op::ConvertUToF }, to.0, &[v]),
            (Scalar::Float(_), Scalar::Int(_)) => bld.op(if signed { Op::ConvertFToS } else { Op::ConvertFToU }, to.0, &[v]),
        }
    }

    fn mul_add(&self, bld: &mut Builder<'_>, inst: &Inst) -> Result<()> {
        let [a, b, c] = inst.ids()?;
        let ty = inst.ty()?;
        let flags = Flags::from_bits_truncate(inst.word_opt(3).unwrap_or(0));
        let (Some(la), Some(lb), Some(lc)) = (self.layout_of_value(a), self.layout_of_value(b), self.layout_of_value(c)) else {
            return Err(Error::Invalid { site: bld.module.site(inst), message: "a MulAdd operand is not a cooperative matrix".into() });
        };
        let lr = self.layout(bld, inst, ty)?;
        let (m, k, n) = (la.rows, la.cols, lb.cols);
        if lb.rows != k || (lc.rows, lc.cols) != (m, n) || (lr.rows, lr.cols) != (m, n) {
            return Err(Error::Invalid {
                site: bld.module.site(inst),
                message: format!("MulAdd of {}x{} by {}x{} plus {}x{} into {}x{}", la.rows, la.cols, lb.rows, lb.cols, lc.rows, lc.cols, lr.rows, lr.cols),
            });
        }
        let float = matches!(lr.scalar, Scalar::Float(_));
        if matches!(la.scalar, Scalar::Float(_)) != float || matches!(lb.scalar, Scalar::Float(_)) != float || matches!(lc.scalar, Scalar::Float(_)) != float {
            return Err(Error::Invalid { site: bld.module.site(inst), message: "MulAdd mixes float and integer matrices".into() });
        }
        let saturating = flags.contains(Flags::SATURATING_ACCUMULATION_KHR);
        let acc = if float {
            let w = if lc.scalar.width() == 64 || lr.scalar.width() == 64 { 64 } else { 32 };
            (bld.module.type_float(w), Scalar::Float(w))
        } else {
            if [la, lb, lc, lr].iter().any(|l| l.scalar.width() > 32) {
                return Err(self.unsupported(bld, inst, "an integer MulAdd on 64-bit components".into()));
            }
            (bld.module.type_int(32, true), Scalar::Int(32))
        };
        let (add, mul) = if float { (Op::FAdd, Op::FMul) } else { (Op::IAdd, Op::IMul) };
        let signed_a = flags.contains(Flags::MATRIX_A_SIGNED_COMPONENTS_KHR);
        let signed_b = flags.contains(Flags::MATRIX_B_SIGNED_COMPONENTS_KHR);
        let signed_c = flags.contains(Flags::MATRIX_C_SIGNED_COMPONENTS_KHR);
        let signed_r = flags.contains(Flags::MATRIX_RESULT_SIGNED_COMPONENTS_KHR);

        // Accumulators: C itself, or (saturating) the sum of products apart.
        let zero = bld.module.constant_null(acc.0);
        let cs: Vec<Word> = (0..lc.len)
            .map(|e| {
                let v = bld.composite_extract(lc.component, c, e);
                self.convert(bld, v, (lc.component, lc.scalar), acc, signed_c)
            })
            .collect();
        let mut sums: Vec<Word> = if saturating { vec![zero; lc.len as usize] } else { cs.clone() };
        let scope = bld.module.constant_u32(Scope::Subgroup as u32);
        let base = self.group_base(bld);
        let fma = (float && self.target.workarounds.fused_multiply_add).then(|| bld.module.ext_inst_import("GLSL.std.450"));
        let per_row = n / lc.lanes;
        let mul_add = |bld: &mut Builder<'_>, x: Word, y: Word, z: Word| match fma {
            Some(set) => bld.emit(Op::ExtInst, acc.0, vec![Operand::Id(set), Operand::Literal(GlslStd450Op::Fma as u32), Operand::Id(x), Operand::Id(y), Operand::Id(z)]),
            None => {
                let p = bld.op(mul, acc.0, &[x, y]);
                bld.op(add, acc.0, &[z, p])
            }
        };
        let in_header = bld.module.functions[bld.cursor.function].blocks[bld.cursor.block].insts.iter().any(|i| i.is(Op::LoopMerge));
        let unrolled = m * k * per_row;
        let left = self.unrolled_left.get();
        if (unrolled > UNROLLED_MUL_ADDS || unrolled > left) && !in_header {
            // Too long to unroll: a loop over k. Each iteration takes the lane's B elements of
            // row k and, for every row of A, its element (m, k) from the lane holding it (a
            // shuffle: the lane depends on k, which every lane of the subgroup agrees on).
            let uint = bld.module.type_int(32, false);
            let sums_ty = {
                let len = bld.module.constant_u32(lc.len);
                bld.module.type_array(acc.0, len)
            };
            let sums_var = self.function_variable(bld, sums_ty);
            let acc_ptr = bld.module.type_pointer(StorageClass::Function, acc.0);
            let sum_ptr = |bld: &mut Builder<'_>, e: u32| {
                let e = bld.module.constant_u32(e);
                bld.access_chain(acc_ptr, sums_var, &[e])
            };
            for (e, v) in sums.iter().enumerate() {
                let ptr = sum_ptr(bld, e as u32);
                bld.store(ptr, *v);
            }
            let matrix_ty = |v: Word| self.types.type_of(v).ok_or_else(|| Error::Invalid { site: bld.module.site(inst), message: format!("%{v} has no type") });
            let (a_ty, b_ty) = (matrix_ty(a)?, matrix_ty(b)?);
            let (a_var, b_var) = (self.function_variable(bld, a_ty), self.function_variable(bld, b_ty));
            bld.store(a_var, a);
            bld.store(b_var, b);
            let (zero, k_end) = (bld.module.constant_u32(0), bld.module.constant_u32(k));
            bld.counted_loop(zero, k_end, |bld, kk| {
                // B element (kk, col0 of output j) is the lane's element kk * N / P + col0 / P.
                let b_line = bld.module.constant_u32(n / lb.lanes);
                let b_row = bld.op(Op::IMul, uint, &[kk, b_line]);
                let bs: Vec<Word> = (0..per_row)
                    .map(|j| {
                        let col = bld.module.constant_u32(lc.place(j).1 / lb.lanes);
                        let at = bld.op(Op::IAdd, uint, &[b_row, col]);
                        let ptr = self.element_pointer(bld, &lb, b_var, at);
                        let v = bld.load(lb.component, ptr);
                        self.convert(bld, v, (lb.component, lb.scalar), acc, signed_b)
                    })
                    .collect();
                for row in 0..m {
                    let row_start = bld.module.constant_u32(row * k);
                    let index = bld.op(Op::IAdd, uint, &[kk, row_start]);
                    let lanes = bld.module.constant_u32(la.lanes);
                    let elem = bld.op(Op::UDiv, uint, &[index, lanes]);
                    let ptr = self.element_pointer(bld, &la, a_var, elem);
                    let v = bld.load(la.component, ptr);
                    let mut av = self.convert(bld, v, (la.component, la.scalar), acc, signed_a);
                    if la.lanes > 1 {
                        let lane = bld.op(Op::UMod, uint, &[index, lanes]);
                        let lane = Self::in_group(bld, base, lane);
                        av = bld.op(Op::GroupNonUniformShuffle, acc.0, &[scope, av, lane]);
                    }
                    for (j, bv) in bs.iter().enumerate() {
                        let ptr = sum_ptr(bld, row * per_row + j as u32);
                        let z = bld.load(acc.0, ptr);
                        let r = mul_add(bld, av, *bv, z);
                        bld.store(ptr, r);
                    }
                }
            });
            sums = (0..lc.len)
                .map(|e| {
                    let ptr = sum_ptr(bld, e);
                    bld.load(acc.0, ptr)
                })
                .collect();
        } else {
            self.unrolled_left.set(left.saturating_sub(unrolled));
            // The lane's own B elements, converted once.
            let bs: Vec<Word> = (0..lb.len)
                .map(|j| {
                    let v = bld.composite_extract(lb.component, b, j);
                    self.convert(bld, v, (lb.component, lb.scalar), acc, signed_b)
                })
                .collect();
            for row in 0..m {
                for kk in 0..k {
                    let index = row * k + kk;
                    let (src_lane, src_elem) = (index % la.lanes, index / la.lanes);
                    let v = bld.composite_extract(la.component, a, src_elem);
                    let mut av = self.convert(bld, v, (la.component, la.scalar), acc, signed_a);
                    if la.lanes > 1 {
                        let lane = bld.module.constant_u32(src_lane);
                        av = match base {
                            // A lane of the logical sub-group: a shuffle, its index not a constant.
                            Some(_) => {
                                let lane = Self::in_group(bld, base, lane);
                                bld.op(Op::GroupNonUniformShuffle, acc.0, &[scope, av, lane])
                            }
                            None => bld.op(Op::GroupNonUniformBroadcast, acc.0, &[scope, av, lane]),
                        };
                    }
                    for e in row * per_row..(row + 1) * per_row {
                        let (_, col0) = lc.place(e);
                        let bj = (kk * n + col0) / lb.lanes;
                        sums[e as usize] = mul_add(bld, av, bs[bj as usize], sums[e as usize]);
                    }
                }
            }
        }
        let results: Vec<Word> = if saturating {
            let wrapped = la.scalar.width() > 16 || lb.scalar.width() > 16;
            cs.iter().zip(&sums).map(|(c, s)| self.saturating_add(bld, *c, *s, lr, signed_r, wrapped)).collect()
        } else {
            sums.iter().map(|s| self.convert(bld, *s, acc, (lr.component, lr.scalar), signed_r)).collect()
        };
        bld.insert(Inst::new(Op::CompositeConstruct, Some(ty), Some(inst.result()?), results.into_iter().map(Operand::Id).collect()));
        Ok(())
    }

    /// `c + s` saturated to the result's component type (signed or unsigned as `signed` says);
    /// `c` and `s` are 32-bit integers, `s` the exact sum of 8- or 16-bit products, or
    /// (`wrapped`) the sum of 32-bit products wrapped to 32 bits, signed when the result is.
    fn saturating_add(&self, bld: &mut Builder<'_>, c: Word, s: Word, lr: Layout, signed: bool, wrapped: bool) -> Word {
        let int = bld.module.type_int(32, true);
        let boolean = bld.module.type_bool();
        let w = lr.scalar.width();
        let s = if wrapped && w < 32 {
            // Beyond +-2^16 the sum saturates a result of 16 bits or fewer whatever C is: clamp
            // it there so that adding C cannot overflow.
            let (lo, hi) = (bld.module.constant_i32(-(1 << 16)), bld.module.constant_i32(1 << 16));
            if signed {
                let below = bld.op(Op::SLessThan, boolean, &[s, lo]);
                let above = bld.op(Op::SGreaterThan, boolean, &[s, hi]);
                let s = bld.select(int, below, lo, s);
                bld.select(int, above, hi, s)
            } else {
                let above = bld.op(Op::UGreaterThan, boolean, &[s, hi]);
                bld.select(int, above, hi, s)
            }
        } else {
            s
        };
        let r = bld.op(Op::IAdd, int, &[c, s]);
        let clamped = if w == 32 && !signed && wrapped {
            // Both unsigned 32-bit: only a carry saturates.
            let carry = bld.op(Op::ULessThan, boolean, &[r, c]);
            let max = bld.module.constant_u32(u32::MAX);
            let max = bld.bitcast(int, max);
            bld.select(int, carry, max, r)
        } else if w == 32 {
            if signed {
                // Overflow when c and s have one sign and r the other.
                let x = bld.op(Op::BitwiseXor, int, &[c, r]);
                let y = bld.op(Op::BitwiseXor, int, &[s, r]);
                let both = bld.op(Op::BitwiseAnd, int, &[x, y]);
                let zero = bld.module.constant_i32(0);
                let over = bld.op(Op::SLessThan, boolean, &[both, zero]);
                let negative = bld.op(Op::SLessThan, boolean, &[c, zero]);
                let (min, max) = (bld.module.constant_i32(i32::MIN), bld.module.constant_i32(i32::MAX));
                let limit = bld.select(int, negative, min, max);
                bld.select(int, over, limit, r)
            } else {
                // Unsigned: the products are non-negative when A and B are unsigned; a signed
                // sum below zero clamps to 0, a carry to the maximum.
                let zero = bld.module.constant_i32(0);
                let s_negative = bld.op(Op::SLessThan, boolean, &[s, zero]);
                let carry = bld.op(Op::ULessThan, boolean, &[r, c]);
                let borrow = bld.op(Op::UGreaterThan, boolean, &[r, c]);
                let max = bld.module.constant_u32(u32::MAX);
                let max = bld.bitcast(int, max);
                let high = bld.select(int, carry, max, r);
                let low = bld.select(int, borrow, zero, r);
                bld.select(int, s_negative, low, high)
            }
        } else {
            let (lo, hi) = if signed { (-(1i64 << (w - 1)), (1i64 << (w - 1)) - 1) } else { (0, (1i64 << w) - 1) };
            let (lo, hi) = (bld.module.constant_i32(lo as i32), bld.module.constant_i32(hi as i32));
            let below = bld.op(Op::SLessThan, boolean, &[r, lo]);
            let above = bld.op(Op::SGreaterThan, boolean, &[r, hi]);
            let r = bld.select(int, below, lo, r);
            bld.select(int, above, hi, r)
        };
        self.convert(bld, clamped, (int, Scalar::Int(32)), (lr.component, lr.scalar), signed)
    }
}
