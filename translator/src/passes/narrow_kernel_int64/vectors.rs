//! Vectors of 64-bit integers computed element by element (LLVM's SLP vectorizer pairs up
//! scalar `long` arithmetic into `ulong2`): the part of `narrow-kernel-int64` that turns them
//! back into scalars, so that each element is narrowed or held as a pair like any other.
//!
//! A vector made by `OpCompositeInsert`, `OpCompositeConstruct`, `OpVectorShuffle`, element-wise
//! arithmetic, bitwise operations, shifts or selects (on any vectors, constants and undefined
//! values), and copies and phis of such vectors, is carried as its elements;
//! `OpCompositeExtract` takes one. Such a vector
//! used any other way (stored, bit cast, passed to a phi) is rebuilt where it is used. Vectors
//! loaded from memory, or extended from 32-bit ones (a kernel's ids), stay vectors, but for
//! those of `Function` variables that only whole loads and stores use (LLVM at -O0 keeps every
//! local in one): such a variable becomes one per element, a stored vector taken apart and a
//! loaded one built from its elements, so that it is computed like the others.

use crate::analysis::Types;
use crate::ir::{Inst, Module, Operand};
use crate::pass::Outcome;
use spirv::{MemoryAccess, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

/// Element-wise instructions whose operands are all vectors of the result's width.
const ELEMENT_WISE: &[Op] = &[
    Op::IAdd,
    Op::ISub,
    Op::IMul,
    Op::UDiv,
    Op::SDiv,
    Op::UMod,
    Op::SRem,
    Op::SMod,
    Op::SNegate,
    Op::Not,
    Op::BitwiseAnd,
    Op::BitwiseOr,
    Op::BitwiseXor,
    Op::ShiftLeftLogical,
    Op::ShiftRightLogical,
    Op::ShiftRightArithmetic,
];

/// Scalarizes the vectors of the 64-bit integer types `wide` that are computed element by
/// element.
pub(super) fn scalarize(module: &mut Module, wide: &HashSet<Word>, outcome: &mut Outcome) {
    split_variables(module, wide, outcome);
    let types = Types::new(module);
    let vector_of_wide = |t: Word| types.vector(t).filter(|(c, _)| wide.contains(c));
    let computed = |i: &Inst| {
        i.result_type.and_then(vector_of_wide).is_some()
            && (ELEMENT_WISE.contains(&i.op().unwrap_or(Op::Nop)) || matches!(i.op(), Some(Op::CompositeInsert | Op::CompositeConstruct | Op::VectorShuffle | Op::Select)))
    };
    if !module.functions.iter().flat_map(|f| f.insts()).any(computed) {
        return;
    }
    let constants: HashMap<Word, Inst> = module.globals().iter().filter_map(|g| Some((g.result_id?, g.clone()))).collect();
    let constant = |v: &Word| constants.get(v).is_some_and(|k| matches!(k.op(), Some(Op::ConstantComposite | Op::ConstantNull | Op::Undef)));
    for f in 0..module.functions.len() {
        // What is carried as elements: computed vectors, and phis of those (and constants),
        // found optimistically and pruned to a fixed point.
        let insts: Vec<Inst> = module.functions[f].blocks.iter().flat_map(|b| b.insts.iter().cloned()).collect();
        let follows = |i: &Inst| matches!(i.op(), Some(Op::Phi | Op::CopyObject)) && i.result_type.and_then(vector_of_wide).is_some();
        let mut carried: HashSet<Word> = insts.iter().filter(|i| computed(i) || follows(i)).filter_map(|i| i.result_id).collect();
        loop {
            let dropped: Vec<Word> = insts
                .iter()
                .filter(|i| follows(i) && i.result_id.is_some_and(|r| carried.contains(&r)))
                .filter(|i| i.operands.iter().step_by(2).filter_map(Operand::id).any(|v| !carried.contains(&v) && !constant(&v)))
                .filter_map(|i| i.result_id)
                .collect();
            if dropped.is_empty() {
                break;
            }
            for d in dropped {
                carried.remove(&d);
            }
        }
        if carried.is_empty() {
            continue;
        }
        let mut elements: HashMap<Word, Vec<Word>> = HashMap::new();
        for i in insts.iter().filter(|i| i.result_id.is_some_and(|r| carried.contains(&r))) {
            let n = i.result_type.and_then(vector_of_wide).map_or(0, |(_, n)| n);
            elements.insert(i.result_id.unwrap_or_default(), (0..n).map(|_| module.alloc_id()).collect());
        }
        for b in 0..module.functions[f].blocks.len() {
            let body = std::mem::take(&mut module.functions[f].blocks[b].insts);
            let mut phis = Vec::new();
            let mut out = Vec::with_capacity(body.len());
            // Whole vectors of phis, built after the block's phis.
            let mut rebuilt = Vec::new();
            for inst in body {
                let origin = inst.origin;
                let emit = |module: &mut Module, out: &mut Vec<Inst>, op: Op, ty: Word, operands: Vec<Operand>| {
                    let id = module.alloc_id();
                    out.push(Inst::new(op, Some(ty), Some(id), operands).from_origin(origin));
                    id
                };
                // The elements of vector operand `v` (count `n`, element type `c`).
                let parts = |module: &mut Module, out: &mut Vec<Inst>, v: Word, n: u32, c: Word| -> Vec<Word> {
                    if let Some(e) = elements.get(&v) {
                        return e.clone();
                    }
                    match constants.get(&v) {
                        Some(k) if k.is(Op::ConstantComposite) => k.operands.iter().filter_map(Operand::id).collect(),
                        Some(k) if k.is(Op::ConstantNull) => vec![module.intern(Op::ConstantNull, Some(c), vec![]); n as usize],
                        Some(k) if k.is(Op::Undef) => vec![module.intern(Op::Undef, Some(c), vec![]); n as usize],
                        _ => (0..n).map(|k| emit(module, out, Op::CompositeExtract, c, vec![Operand::Id(v), Operand::Literal(k)])).collect(),
                    }
                };
                let result = inst.result_id.unwrap_or_default();
                if !carried.contains(&result) {
                    // An element of a carried vector is that element.
                    let element = match (inst.op(), inst.operands.first().and_then(Operand::id).and_then(|v| elements.get(&v)), inst.operands.get(1)) {
                        (Some(Op::CompositeExtract), Some(e), Some(Operand::Literal(k))) if inst.operands.len() == 2 => e.get(*k as usize).copied(),
                        _ => None,
                    };
                    match element {
                        Some(e) => out.push(Inst::new(Op::CopyObject, inst.result_type, inst.result_id, vec![Operand::Id(e)]).from_origin(origin)),
                        None if inst.is(Op::Phi) => phis.push(inst),
                        None => out.push(inst),
                    }
                    continue;
                }
                let ty = inst.result_type.unwrap_or_default();
                let (c, n) = vector_of_wide(ty).unwrap_or_default();
                let mine = elements.get(&result).cloned().unwrap_or_default();
                let ids: Vec<Word> = inst.operands.iter().filter_map(Operand::id).collect();
                let define = |out: &mut Vec<Inst>, k: usize, op: Op, operands: Vec<Operand>| out.push(Inst::new(op, Some(c), mine.get(k).copied(), operands).from_origin(origin));
                let copy = |out: &mut Vec<Inst>, values: Vec<Word>| {
                    for (k, v) in values.into_iter().enumerate() {
                        define(out, k, Op::CopyObject, vec![Operand::Id(v)]);
                    }
                };
                match inst.op().unwrap_or(Op::Nop) {
                    Op::Phi => {
                        for (k, element) in mine.iter().enumerate() {
                            let mut operands = Vec::new();
                            for pair in inst.operands.chunks(2) {
                                let v = pair.first().and_then(Operand::id).unwrap_or_default();
                                operands.push(Operand::Id(parts(module, &mut out, v, n, c).get(k).copied().unwrap_or_default()));
                                operands.extend(pair.get(1).cloned());
                            }
                            phis.push(Inst::new(Op::Phi, Some(c), Some(*element), operands).from_origin(origin));
                        }
                        rebuilt.push(Inst::new(Op::CompositeConstruct, Some(ty), Some(result), mine.iter().map(|e| Operand::Id(*e)).collect()).from_origin(origin));
                        outcome.count(inst.opcode);
                        continue;
                    }
                    Op::CopyObject => {
                        let e = parts(module, &mut out, ids.first().copied().unwrap_or_default(), n, c);
                        copy(&mut out, e);
                    }
                    Op::CompositeInsert => {
                        let mut e = parts(module, &mut out, ids.get(1).copied().unwrap_or_default(), n, c);
                        if let (Some(object), Some(Operand::Literal(k))) = (ids.first(), inst.operands.get(2)) {
                            if let Some(slot) = e.get_mut(*k as usize) {
                                *slot = *object;
                            }
                        }
                        copy(&mut out, e);
                    }
                    Op::CompositeConstruct => {
                        let mut e = Vec::new();
                        for v in &ids {
                            match types.type_of(*v).and_then(vector_of_wide) {
                                Some((_, m)) => e.extend(parts(module, &mut out, *v, m, c)),
                                None => e.push(*v),
                            }
                        }
                        copy(&mut out, e);
                    }
                    Op::VectorShuffle => {
                        let (a, b) = (ids.first().copied().unwrap_or_default(), ids.get(1).copied().unwrap_or_default());
                        let count = |v: Word| types.type_of(v).and_then(vector_of_wide).map_or(0, |(_, m)| m);
                        let mut pool = parts(module, &mut out, a, count(a), c);
                        pool.extend(parts(module, &mut out, b, count(b), c));
                        let undef = module.intern(Op::Undef, Some(c), vec![]);
                        copy(
                            &mut out,
                            inst.operands.get(2..).unwrap_or_default().iter().map(|o| if let Operand::Literal(k) = o { pool.get(*k as usize).copied().unwrap_or(undef) } else { undef }).collect(),
                        );
                    }
                    Op::Select => {
                        let cond = ids.first().copied().unwrap_or_default();
                        let conds: Vec<Word> = match types.type_of(cond).and_then(|t| types.vector(t)) {
                            Some((bc, m)) => (0..m).map(|k| emit(module, &mut out, Op::CompositeExtract, bc, vec![Operand::Id(cond), Operand::Literal(k)])).collect(),
                            None => vec![cond; n as usize],
                        };
                        let operand = |k: usize| ids.get(k).copied().unwrap_or_default();
                        let (a, b) = (parts(module, &mut out, operand(1), n, c), parts(module, &mut out, operand(2), n, c));
                        let at = |v: &[Word], k: usize| Operand::Id(v.get(k).copied().unwrap_or_default());
                        for k in 0..n as usize {
                            define(&mut out, k, Op::Select, vec![at(&conds, k), at(&a, k), at(&b, k)]);
                        }
                    }
                    op => {
                        // Element-wise (shift amounts may be of another integer width).
                        let per: Vec<Vec<Word>> = ids
                            .iter()
                            .map(|v| {
                                let (vc, m) = types.type_of(*v).and_then(|t| types.vector(t)).unwrap_or((c, n));
                                parts(module, &mut out, *v, m, vc)
                            })
                            .collect();
                        for k in 0..n as usize {
                            define(&mut out, k, op, per.iter().map(|p| Operand::Id(p.get(k).copied().unwrap_or_default())).collect());
                        }
                    }
                }
                // The vector itself, for uses that need it whole (removed when unused).
                out.push(Inst::new(Op::CompositeConstruct, Some(ty), Some(result), mine.iter().map(|e| Operand::Id(*e)).collect()).from_origin(origin));
                outcome.count(inst.opcode);
            }
            phis.extend(rebuilt);
            phis.extend(out);
            module.functions[f].blocks[b].insts = phis;
        }
    }
    let types = Types::new(module);
    for _ in 0..2 {
        module.remove_unused_values(|i| i.is(Op::CompositeConstruct) && i.result_type.and_then(|t| types.vector(t)).is_some_and(|(c, _)| wide.contains(&c)));
    }
}

/// Splits each `Function` variable holding a vector of `wide` integers, that only non-volatile
/// whole loads and stores use, into one variable per element.
fn split_variables(module: &mut Module, wide: &HashSet<Word>, outcome: &mut Outcome) {
    let types = Types::new(module);
    let element_of = |ptr: Word| types.pointer(ptr).filter(|(class, _)| *class == StorageClass::Function as u32).and_then(|(_, v)| types.vector(v)).filter(|(c, _)| wide.contains(c));
    for f in 0..module.functions.len() {
        let function = &module.functions[f];
        let mut split: HashMap<Word, (Word, u32)> =
            function.insts().filter(|i| i.is(Op::Variable) && i.operands.len() == 1).filter_map(|i| Some((i.result_id?, element_of(i.result_type?)?))).collect();
        if split.is_empty() {
            continue;
        }
        for inst in function.insts() {
            let volatile = |k: usize| inst.word_opt(k).is_some_and(|m| MemoryAccess::from_bits_truncate(m).contains(MemoryAccess::VOLATILE));
            for (k, o) in inst.operands.iter().enumerate() {
                let Some(v) = o.id().filter(|v| split.contains_key(v)) else { continue };
                let whole = k == 0 && ((inst.is(Op::Load) && !volatile(1)) || (inst.is(Op::Store) && !volatile(2)));
                if !whole {
                    split.remove(&v);
                }
            }
        }
        if split.is_empty() {
            continue;
        }
        let parts: HashMap<Word, Vec<Word>> = split.iter().map(|(&var, &(_, n))| (var, (0..n).map(|_| module.alloc_id()).collect())).collect();
        module.forget(&split.keys().copied().collect());
        let class = Operand::storage_class(StorageClass::Function);
        let pointers: HashMap<Word, Word> = split.iter().map(|(&var, &(c, _))| (var, module.type_pointer(StorageClass::Function, c))).collect();
        for b in 0..module.functions[f].blocks.len() {
            let body = std::mem::take(&mut module.functions[f].blocks[b].insts);
            let mut out = Vec::with_capacity(body.len());
            for inst in body {
                let origin = inst.origin;
                // The variable itself, or a load or store of it.
                let var = inst.result_id.filter(|_| inst.is(Op::Variable)).or_else(|| inst.operands.first().and_then(Operand::id));
                let Some((var, elements)) = var.and_then(|v| Some((v, parts.get(&v)?))) else {
                    out.push(inst);
                    continue;
                };
                let (c, _) = split[&var];
                let ptr = pointers[&var];
                match inst.op() {
                    Some(Op::Variable) => {
                        for e in elements {
                            out.push(Inst::new(Op::Variable, Some(ptr), Some(*e), vec![class.clone()]).from_origin(origin));
                        }
                    }
                    Some(Op::Store) => {
                        let value = inst.operands.get(1).and_then(Operand::id).unwrap_or_default();
                        for (k, e) in elements.iter().enumerate() {
                            let part = module.alloc_id();
                            out.push(Inst::new(Op::CompositeExtract, Some(c), Some(part), vec![Operand::Id(value), Operand::Literal(k as u32)]).from_origin(origin));
                            out.push(Inst::new(Op::Store, None, None, vec![Operand::Id(*e), Operand::Id(part)]).from_origin(origin));
                        }
                        outcome.count(Op::Store as u32);
                    }
                    _ => {
                        let loaded: Vec<Operand> = elements
                            .iter()
                            .map(|e| {
                                let part = module.alloc_id();
                                out.push(Inst::new(Op::Load, Some(c), Some(part), vec![Operand::Id(*e)]).from_origin(origin));
                                Operand::Id(part)
                            })
                            .collect();
                        out.push(Inst::new(Op::CompositeConstruct, inst.result_type, inst.result_id, loaded).from_origin(origin));
                        outcome.count(Op::Load as u32);
                    }
                }
            }
            module.functions[f].blocks[b].insts = out;
        }
    }
}
