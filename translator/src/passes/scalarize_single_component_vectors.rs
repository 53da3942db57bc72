//! `ScalarizeSingleComponentVectors`: vectors of one component, which SPV_INTEL_vector_compute's
//! `VectorAnyINTEL` allows (LLVM's `<1 x float>`, which Intel's Triton backend writes and
//! llvm-spirv keeps where the extension is enabled) and Vulkan does not, become their component.
//!
//! Rewrite: every use of the type `OpTypeVector %T 1` becomes `%T` (pointers, arrays, struct
//! members and function types follow, and merge with their twins; the layout is the same, a
//! one-component vector being laid out as its component). Instructions that only vectors take
//! become scalar ones:
//! - `OpCompositeExtract`, `OpCompositeInsert` and the access chains drop the index that selects
//!   the component of such a vector (where no index is left, the result is the object, the
//!   inserted value or the base pointer); `OpVectorExtractDynamic` is the vector itself and
//!   `OpVectorInsertDynamic` the inserted component (an index other than 0 is undefined there);
//! - `OpVectorShuffle` of or into such vectors picks its components out of the sources
//!   (`OpCompositeExtract` of the wider ones, the scalar itself of the others) and builds the
//!   result with `OpCompositeConstruct`, or is the one component picked (an undefined one an
//!   `OpUndef`); `OpCompositeConstruct` of a one-component vector is its constituent;
//! - `OpVectorTimesScalar` and `OpDot` become `OpFMul`, `OpAny` and `OpAll` their operand;
//! - constant composites of such vectors are their constituent.
//!
//! Preconditions: none. Applies to every target; changes only modules that declare such a
//! vector. A specialization-constant operation on one is refused by name.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{Op, Word};
use std::collections::HashMap;

pub struct ScalarizeSingleComponentVectors;

impl Pass for ScalarizeSingleComponentVectors {
    fn name(&self) -> &'static str {
        "scalarize-single-component-vectors"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        // One-component vector type -> its component.
        let singles: HashMap<Word, Word> = module.globals().iter().filter(|g| g.is(Op::TypeVector) && g.word_opt(1) == Some(1)).filter_map(|g| Some((g.result_id?, g.id(0).ok()?))).collect();
        if singles.is_empty() {
            return Ok(outcome);
        }
        let types = Types::new(module);
        let single_of = |v: Word| types.type_of(v).and_then(|t| singles.get(&t)).copied();
        // Constant composites of one component are that component.
        let mut replace: HashMap<Word, Word> = HashMap::new();
        for g in module.globals() {
            let Some(t) = g.result_type.filter(|t| singles.contains_key(t)) else { continue };
            match g.op() {
                Some(Op::ConstantComposite | Op::SpecConstantComposite) => {
                    let c = g.id(0)?;
                    replace.insert(g.result_id.unwrap_or(0), c);
                }
                Some(Op::SpecConstantOp) => {
                    return Err(Error::Unsupported { site: module.site(g), target: cx.target.name.clone(), missing: format!("specialization-constant operations on vectors of one component (%{t})") })
                }
                _ => {}
            }
        }
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                let body = std::mem::take(&mut module.functions[f].blocks[b].insts);
                let mut out = Vec::with_capacity(body.len());
                for inst in body {
                    let opcode = inst.opcode;
                    if rewrite(module, &types, &singles, &single_of, inst, &mut out)? {
                        outcome.count(opcode);
                    }
                }
                module.functions[f].blocks[b].insts = out;
            }
        }
        // The constants go; then the types, each replaced by its component.
        module.globals_mut().retain(|g| !g.result_id.is_some_and(|r| replace.contains_key(&r)));
        replace.extend(singles.iter().map(|(v, c)| (*v, *c)));
        module.for_each_inst_mut(|inst| inst.map_used_ids(|id| replace.get(&id).copied().unwrap_or(id)));
        module.globals_mut().retain(|g| !g.result_id.is_some_and(|r| singles.contains_key(&r)));
        module.annotations.retain(|a| !a.operands.first().and_then(Operand::id).is_some_and(|t| singles.contains_key(&t)));
        module.debug_names.retain(|n| !n.operands.first().and_then(Operand::id).is_some_and(|t| singles.contains_key(&t)));
        module.interner.clear();
        module.merge_duplicate_types();
        outcome.changed = true;
        Ok(outcome)
    }
}

/// Pushes `inst`, rewritten where one-component vectors make it a vector-only instruction on
/// what are now scalars, to `out`; whether it was rewritten.
fn rewrite(module: &mut Module, types: &Types, singles: &HashMap<Word, Word>, single_of: &dyn Fn(Word) -> Option<Word>, inst: Inst, out: &mut Vec<Inst>) -> Result<bool> {
    let origin = inst.origin;
    let copy = |ty: Option<Word>, id: Option<Word>, v: Word| Inst::new(Op::CopyObject, ty, id, vec![Operand::Id(v)]).from_origin(origin);
    match inst.op() {
        Some(op @ (Op::CompositeExtract | Op::CompositeInsert | Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain)) => {
            // Where the indices start, the composite (a pointer's pointee) they walk, and what
            // the instruction is where none is left.
            let (first, ty, whole) = match op {
                Op::CompositeExtract => (1, types.type_of(inst.id(0)?), Some(inst.id(0)?)),
                Op::CompositeInsert => (2, types.type_of(inst.id(1)?), Some(inst.id(0)?)),
                Op::PtrAccessChain | Op::InBoundsPtrAccessChain => (2, types.type_of(inst.id(0)?).and_then(|p| types.pointer(p)).map(|(_, t)| t), None),
                _ => (1, types.type_of(inst.id(0)?).and_then(|p| types.pointer(p)).map(|(_, t)| t), Some(inst.id(0)?)),
            };
            let chain = !matches!(op, Op::CompositeExtract | Op::CompositeInsert);
            let mut ty = ty.unwrap_or(0);
            let mut kept = Vec::new();
            for index in &inst.operands[first..] {
                match singles.get(&ty) {
                    Some(&c) => ty = c,
                    None => {
                        kept.push(index.clone());
                        let next = if chain { index.id().and_then(|i| types.element_type(ty, i)) } else { types.element_type_at(ty, index.word().unwrap_or(0)) };
                        ty = next.unwrap_or(0);
                    }
                }
            }
            if kept.len() + first == inst.operands.len() {
                out.push(inst);
                return Ok(false);
            }
            match whole.filter(|_| kept.is_empty()) {
                Some(v) => out.push(copy(inst.result_type, inst.result_id, v)),
                None => {
                    let mut ops = inst.operands[..first].to_vec();
                    ops.extend(kept);
                    out.push(Inst::new(op, inst.result_type, inst.result_id, ops).from_origin(origin));
                }
            }
        }
        Some(Op::VectorExtractDynamic) if single_of(inst.id(0)?).is_some() => out.push(copy(inst.result_type, inst.result_id, inst.id(0)?)),
        Some(Op::VectorInsertDynamic) if single_of(inst.id(0)?).is_some() => out.push(copy(inst.result_type, inst.result_id, inst.id(1)?)),
        Some(Op::Any | Op::All) if single_of(inst.id(0)?).is_some() => out.push(copy(inst.result_type, inst.result_id, inst.id(0)?)),
        Some(Op::VectorTimesScalar | Op::Dot) if single_of(inst.id(0)?).is_some() => {
            out.push(Inst::new(Op::FMul, inst.result_type, inst.result_id, inst.operands.clone()).from_origin(origin));
        }
        Some(Op::CompositeConstruct) if inst.result_type.is_some_and(|t| singles.contains_key(&t)) => out.push(copy(inst.result_type, inst.result_id, inst.id(0)?)),
        Some(Op::VectorShuffle) => {
            let (a, b) = (inst.id(0)?, inst.id(1)?);
            let result_single = inst.result_type.is_some_and(|t| singles.contains_key(&t));
            if !result_single && single_of(a).is_none() && single_of(b).is_none() {
                out.push(inst);
                return Ok(false);
            }
            let count = |v: Word| types.type_of(v).and_then(|t| types.vector(t)).map_or(0, |(_, n)| n);
            let na = count(a);
            let component = types.type_of(a).and_then(|t| types.vector(t)).map_or(0, |(c, _)| c);
            let mut picked = Vec::new();
            let mut undef = None;
            for c in inst.operands[2..].iter().map(|o| o.word().unwrap_or(0)) {
                let id = if c == u32::MAX {
                    *undef.get_or_insert_with(|| {
                        let id = module.alloc_id();
                        module.add_global(Inst::new(Op::Undef, Some(component), Some(id), vec![]))
                    })
                } else {
                    let (v, k) = if c < na { (a, c) } else { (b, c - na) };
                    if single_of(v).is_some() {
                        v
                    } else {
                        let id = module.alloc_id();
                        out.push(Inst::new(Op::CompositeExtract, Some(component), Some(id), vec![Operand::Id(v), Operand::Literal(k)]).from_origin(origin));
                        id
                    }
                };
                picked.push(id);
            }
            if result_single {
                out.push(copy(inst.result_type, inst.result_id, picked.first().copied().ok_or_else(|| Error::Malformed { offset: 0, message: "a shuffle into one component names none".into() })?));
            } else {
                out.push(Inst::new(Op::CompositeConstruct, inst.result_type, inst.result_id, picked.into_iter().map(Operand::Id).collect()).from_origin(origin));
            }
        }
        _ => {
            out.push(inst);
            return Ok(false);
        }
    }
    Ok(true)
}
