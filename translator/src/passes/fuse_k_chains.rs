//! `FuseKChains`: two MulAdds that chain over K, `D = A1 * B1 + (A0 * B0 + C)`, whose A and B
//! halves lie next to each other in memory become one MulAdd of twice the K,
//! `D = [A0 A1] * [B0; B1] + C`, where the target lists no shape for the halves but one for the
//! whole. IREE's int8 kernels step K by 16 (16x16x16 MulAdds, two per staged 32-deep tile); the
//! H100 lists int8 only at K = 32: fused, they run as listed instead of padded with zeros.
//!
//! A pair fuses when:
//! - the first MulAdd's only use is the second's C, both have the same types and operands, and
//!   neither saturates (a saturating chain clamps between the steps);
//! - no listed shape of the MulAdd's types divides M x N x K, and one divides M x N x 2K;
//! - A0, A1, B0 and B1 are `OpCooperativeMatrixLoadKHR`s in the second MulAdd's block, the halves
//!   of each operand with the same constant layout, stride and memory operands, through access
//!   chains that differ only in their last index, by a constant: the distance that puts A1 K
//!   columns after A0 and B1 K rows after B0 (K / the components per pointee element where those
//!   lie along a line, K x the stride where they lie across lines);
//! - nothing between the first of those loads and the second MulAdd writes memory, synchronizes
//!   or calls a function, so that the wide loads, placed at the second MulAdd, read what the
//!   halves read.
//!
//! Pairs of fused pairs fuse again up to a listed K. Loads and matrix types left unused are
//! removed. A floating-point chain is summed as one MulAdd, rounded once rather than after each
//! step, as a device's own larger MulAdd sums it.
//!
//! Preconditions: a valid module; a target with cooperative matrices (emulation takes any K).

use crate::analysis::Types;
use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::check_cooperative_matrix::first_unlisted;
use crate::passes::fold_widened_operands::remove_unused_matrix_types;
use crate::passes::tile_cooperative_matrix::{access_chains, freeze_dimensions, per_element, MulAddTypes};
use crate::profile::DeviceCaps;
use spirv::{CooperativeMatrixLayout, Op, Word};
use std::collections::HashMap;

pub struct FuseKChains;

impl Pass for FuseKChains {
    fn name(&self) -> &'static str {
        "fuse-k-chains"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        target.has_cooperative_matrix()
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if first_unlisted(module, cx.target)?.is_none() || freeze_dimensions(module).is_err() {
            return Ok(outcome);
        }
        while let Some(fusion) = find(module, cx.target) {
            if !fuse(module, &fusion) {
                break;
            }
            let (m, n, k) = (fusion.m, fusion.n, fusion.k);
            outcome.notes.push(format!("MulAdds at words {} and {}: {m}x{n}x{k} fused over K into {m}x{n}x{}", fusion.first_at, fusion.second_at, 2 * k));
            outcome.count(Op::CooperativeMatrixMulAddKHR as u32);
        }
        if outcome.changed {
            // The halves' loads a fusion replaced.
            module.remove_unused_values(|i| i.is(Op::CooperativeMatrixLoadKHR));
            remove_unused_matrix_types(module);
        }
        Ok(outcome)
    }
}

/// A pair of MulAdds to fuse: where the second is, the first's index, the wide A and B loads
/// (the halves' first loads, retyped), and the shape of each half.
struct Fusion {
    function: usize,
    block: usize,
    first: usize,
    second: usize,
    first_at: usize,
    second_at: usize,
    /// The first halves' loads of A and B.
    loads: [Inst; 2],
    /// Matrix type definitions of the halves of A and B.
    halves: [Inst; 2],
    m: u32,
    n: u32,
    k: u32,
}

/// What the search reads: types and constants, access chains, and function-level definitions.
struct Values<'a> {
    types: &'a Types,
    chains: &'a HashMap<Word, Inst>,
    defs: &'a HashMap<Word, &'a Inst>,
}

/// The first pair of MulAdds of the module that can fuse.
fn find(module: &Module, target: &DeviceCaps) -> Option<Fusion> {
    let types = Types::new(module);
    let chains = access_chains(module);
    let values: HashMap<Word, &Inst> = module.functions.iter().flat_map(|f| f.insts()).filter_map(|i| Some((i.result_id?, i))).collect();
    let mut uses: HashMap<Word, usize> = HashMap::new();
    for id in module.functions.iter().flat_map(|f| f.insts()).flat_map(|i| i.used_ids().collect::<Vec<_>>()) {
        *uses.entry(id).or_default() += 1;
    }
    for (fi, f) in module.functions.iter().enumerate() {
        for (bi, block) in f.blocks.iter().enumerate() {
            let index: HashMap<Word, usize> = block.insts.iter().enumerate().filter_map(|(i, inst)| Some((inst.result_id?, i))).collect();
            for (si, second) in block.insts.iter().enumerate().filter(|(_, i)| i.is(Op::CooperativeMatrixMulAddKHR)) {
                let Some(fusion) = pair(&Values { types: &types, chains: &chains, defs: &values }, &uses, &index, block, target, si, second) else { continue };
                return Some(Fusion { function: fi, block: bi, ..fusion });
            }
        }
    }
    None
}

/// The fusion of MulAdd `second` (at `si` of `block`) with the MulAdd that gives its C.
#[allow(clippy::too_many_arguments)]
fn pair(values: &Values<'_>, uses: &HashMap<Word, usize>, index: &HashMap<Word, usize>, block: &crate::ir::Block, target: &DeviceCaps, si: usize, second: &Inst) -> Option<Fusion> {
    let types = values.types;
    let [a1, b1, c] = second.ids().ok()?;
    let &fi = index.get(&c)?;
    let first = &block.insts[fi];
    if !first.is(Op::CooperativeMatrixMulAddKHR) || uses.get(&c) != Some(&1) || first.word_opt(3) != second.word_opt(3) {
        return None;
    }
    let [a0, b0, _] = first.ids().ok()?;
    let (t0, t1) = (MulAddTypes::of(types, first).ok()??, MulAddTypes::of(types, second).ok()??);
    if t0.ids != t1.ids || t0.saturating {
        return None;
    }
    let (m, n, k) = t0.mnk();
    let listed = |k: u32| target.cooperative_matrix.iter().filter(|s| t0.typed_like(s)).any(|s| m.is_multiple_of(s.m) && n.is_multiple_of(s.n) && k.is_multiple_of(s.k));
    if listed(k) || !listed(2 * k) {
        return None;
    }
    // The halves' loads, in this block, and the distance between them.
    let load = |v: Word| index.get(&v).map(|&i| (i, &block.insts[i])).filter(|(_, l)| l.is(Op::CooperativeMatrixLoadKHR));
    let (Some((ia0, la0)), Some((ia1, la1)), Some((ib0, lb0)), Some((ib1, lb1))) = (load(a0), load(a1), load(b0), load(b1)) else { return None };
    // K runs along A's rows (its columns) and down B's columns (its rows).
    if !adjacent(values, la0, la1, k, true) || !adjacent(values, lb0, lb1, k, false) {
        return None;
    }
    let start = [ia0, ia1, ib0, ib1, fi].into_iter().min()?;
    if block.insts[start..si].iter().any(writes_or_synchronizes) {
        return None;
    }
    let half = |v: Word| types.defs.get(&types.type_of(v)?).cloned();
    Some(Fusion { function: 0, block: 0, first: fi, second: si, first_at: first.at(), second_at: second.at(), loads: [la0.clone(), lb0.clone()], halves: [half(a0)?, half(b0)?], m, n, k })
}

/// Whether load `l1` reads the K x (or x K) half that follows load `l0`'s along K: same type,
/// layout, stride and memory operands, through access chains that differ only in a last index
/// `l1`'s exceeds by the distance of K along `along_rows` (A) or down the columns (B).
fn adjacent(values: &Values<'_>, l0: &Inst, l1: &Inst, k: u32, along_rows: bool) -> bool {
    let (types, chains) = (values.types, values.chains);
    if l0.result_type != l1.result_type || l0.operands.get(1..) != l1.operands.get(1..) {
        return false;
    }
    let (Ok(p0), Ok(p1), Ok(layout), Ok(stride), Ok(ty)) = (l0.id(0), l1.id(0), l0.id(1), l0.id(2), l0.ty()) else { return false };
    let (Some(c0), Some(c1)) = (chains.get(&p0), chains.get(&p1)) else { return false };
    let last = c0.operands.len().saturating_sub(1);
    if last == 0 || c0.opcode != c1.opcode || c0.result_type != c1.result_type || c0.operands[..last] != c1.operands[..last] || c1.operands.len() != c0.operands.len() {
        return false;
    }
    let (Some(i0), Some(i1)) = (c0.operands[last].id(), c1.operands[last].id()) else { return false };
    let Some(per) = per_element(types, p0, ty) else { return false };
    // Where K runs along a line (A row-major, B column-major), K components further on;
    // across lines, K lines further on.
    let column_major = match types.const_u32(layout) {
        Some(l) if l == CooperativeMatrixLayout::RowMajorKHR as u32 => false,
        Some(l) if l == CooperativeMatrixLayout::ColumnMajorKHR as u32 => true,
        _ => return false,
    };
    let distance = if along_rows != column_major {
        if !k.is_multiple_of(per) {
            return false;
        }
        i64::from(k / per)
    } else {
        let Some(s) = types.const_u32(stride) else { return false };
        i64::from(k) * i64::from(s)
    };
    offset_between(values, i0, i1) == Some(distance)
}

/// `i1 - i0` where both are the same value plus constants (through `OpIAdd` and `OpISub` of
/// 32-bit constants); `None` where that is not known.
fn offset_between(values: &Values<'_>, i0: Word, i1: Word) -> Option<i64> {
    let types = values.types;
    let base = |mut v: Word| -> (Word, i64) {
        let mut offset = 0i64;
        for _ in 0..16 {
            let Some(d) = values.defs.get(&v) else { break };
            let (Ok(x), Ok(y)) = (d.id(0), d.id(1)) else { break };
            let constant = |c: Word| types.const_u32(c).map(|c| i64::from(c as i32));
            match d.op() {
                Some(Op::IAdd) => match (constant(x), constant(y)) {
                    (_, Some(c)) => {
                        offset += c;
                        v = x;
                    }
                    (Some(c), None) => {
                        offset += c;
                        v = y;
                    }
                    _ => break,
                },
                Some(Op::ISub) => match constant(y) {
                    Some(c) => {
                        offset -= c;
                        v = x;
                    }
                    None => break,
                },
                _ => break,
            }
        }
        (v, offset)
    };
    let ((b0, o0), (b1, o1)) = (base(i0), base(i1));
    (b0 == b1).then_some(o1 - o0)
}

/// Instructions that write memory, synchronize or call (anything a load may not move across).
fn writes_or_synchronizes(inst: &Inst) -> bool {
    matches!(
        inst.op(),
        Some(
            Op::Store
                | Op::CopyMemory
                | Op::CopyMemorySized
                | Op::CooperativeMatrixStoreKHR
                | Op::ControlBarrier
                | Op::MemoryBarrier
                | Op::FunctionCall
                | Op::ImageWrite
                | Op::EmitVertex
                | Op::EndPrimitive
        )
    ) || inst.name().starts_with("OpAtomic")
}

/// Replaces the pair: wide loads of A and B at the second MulAdd, which takes them and the
/// first's C; the first goes. `false` (nothing changed) where a half's type cannot be widened.
fn fuse(module: &mut Module, f: &Fusion) -> bool {
    let wide = |module: &mut Module, half: &Inst, rows: u32, cols: u32| -> Option<Word> {
        let [component, scope, _, _, usage] = half.ids().ok()?;
        let (r, c) = (module.constant_u32(rows), module.constant_u32(cols));
        Some(module.intern(Op::TypeCooperativeMatrixKHR, None, vec![Operand::Id(component), Operand::Id(scope), Operand::Id(r), Operand::Id(c), Operand::Id(usage)]))
    };
    let (Some(ta), Some(tb)) = (wide(module, &f.halves[0], f.m, 2 * f.k), wide(module, &f.halves[1], 2 * f.k, f.n)) else { return false };
    let c = module.functions[f.function].blocks[f.block].insts[f.first].id(2).unwrap_or(0);
    let mut loads = Vec::new();
    for (load, ty) in f.loads.iter().zip([ta, tb]) {
        let id = module.alloc_id();
        let mut wide = load.clone();
        wide.result_type = Some(ty);
        wide.result_id = Some(id);
        loads.push((wide, id));
    }
    let block = &mut module.functions[f.function].blocks[f.block];
    let second = &mut block.insts[f.second];
    second.operands[0] = Operand::Id(loads[0].1);
    second.operands[1] = Operand::Id(loads[1].1);
    second.operands[2] = Operand::Id(c);
    for (wide, _) in loads.into_iter().rev() {
        block.insts.insert(f.second, wide);
    }
    let first = block.insts.remove(f.first);
    module.forget(&first.result_id.into_iter().collect());
    true
}
