//! `BoundWorkgroupIndices`: dynamic indices into workgroup arrays stay inside them.
//!
//! An index past an array is undefined in SPIR-V; on a GPU it reads or writes some other shared
//! memory of the work-group, but a CPU driver (lavapipe, SwiftShader) keeps workgroup memory in
//! the host process's heap, where such a write corrupts the process and crashes it, taking the
//! application with it. (Slang's neural training layer at sub-groups of 32 stores a tile past
//! its 128-entry pool.) On targets whose workgroup memory is host memory, each access-chain
//! step whose index is not a constant, into an array of constant length `L`, a vector or a
//! matrix of `L` parts, through a pointer to `Workgroup` storage, becomes
//! `UMin(index, L - 1)` (a negative signed index compares as a large unsigned one and clamps
//! too). The access then lands on the last element instead of outside the variable: still the
//! kernel's bug, but its own data's.
//!
//! Constant indices past an array are invalid SPIR-V already; runtime arrays (explicitly laid
//! out workgroup blocks) and `OpPtrAccessChain`'s element operand, whose bounds the pointer does
//! not carry, are left as they are.
//!
//! Precondition: none; the pass runs last, after every pass that adds workgroup accesses.

use crate::analysis::Types;
use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{GlslStd450Op, Op, StorageClass, Word};
use std::collections::HashMap;

pub struct BoundWorkgroupIndices;

impl Pass for BoundWorkgroupIndices {
    fn name(&self) -> &'static str {
        "bound-workgroup-indices"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        target.workarounds.workgroup_memory_on_host
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let types = Types::new(module);
        for f in 0..module.functions.len() {
            let steps: Vec<Vec<Vec<(usize, u32)>>> = {
                let function = &module.functions[f];
                let defs: HashMap<Word, &Inst> = function.insts().filter_map(|i| Some((i.result_id?, i))).collect();
                function.blocks.iter().map(|b| b.insts.iter().map(|i| unbounded_steps(&defs, &types, i)).collect()).collect()
            };
            for (b, steps) in steps.into_iter().enumerate() {
                let mut i = 0;
                for steps in steps {
                    let (opcode, origin) = (module.functions[f].blocks[b].insts[i].opcode, module.functions[f].blocks[b].insts[i].origin);
                    for (k, len) in steps {
                        let index = module.functions[f].blocks[b].insts[i].operands[k].id().unwrap_or_default();
                        let (min, id) = module.umin_index(&types, index, len - 1);
                        module.functions[f].blocks[b].insts.insert(i, min.from_origin(origin));
                        i += 1;
                        module.functions[f].blocks[b].insts[i].operands[k] = Operand::Id(id);
                        outcome.count(opcode);
                    }
                    i += 1;
                }
            }
        }
        Ok(outcome)
    }
}

/// Whether `module` has an access chain that [`BoundWorkgroupIndices`] would bound: the runtime
/// translates such a module for a driver whose workgroup memory is host memory even where it
/// needs nothing else.
pub fn has_unbounded_index(module: &Module) -> bool {
    let types = Types::new(module);
    module.functions.iter().any(|f| {
        let defs: HashMap<Word, &Inst> = f.insts().filter_map(|i| Some((i.result_id?, i))).collect();
        f.blocks.iter().flat_map(|b| &b.insts).any(|i| !unbounded_steps(&defs, &types, i).is_empty())
    })
}

/// (operand, L) of each step of access chain `inst` into workgroup memory whose index is not a
/// constant and whose aggregate has `L` parts (every operand of an access chain is an id).
fn unbounded_steps(defs: &HashMap<Word, &Inst>, types: &Types, inst: &Inst) -> Vec<(usize, u32)> {
    if !matches!(inst.op(), Some(Op::AccessChain | Op::InBoundsAccessChain)) {
        return Vec::new();
    }
    let pointer = inst.operands.first().and_then(Operand::id).and_then(|base| types.type_of(base)).and_then(|p| types.defs.get(&p)).filter(|d| d.is(Op::TypePointer));
    let Some(pointer) = pointer.filter(|p| p.word_opt(0) == Some(StorageClass::Workgroup as u32)) else { return Vec::new() };
    let mut ty = pointer.id(1).ok();
    let mut out = Vec::new();
    for (k, index) in inst.operands.iter().enumerate().skip(1).filter_map(|(k, o)| Some((k, o.id()?))) {
        let Some(t) = ty else { break };
        if types.const_u32(index).is_none() && types.int(types.type_of(index).unwrap_or(0)).is_some() {
            if let Some(len) = parts(types, t).filter(|&l| l > 0 && !below(defs, types, index, l)) {
                out.push((k, len));
            }
        }
        ty = types.element_type(t, index);
    }
    out
}

/// Whether `value` is below `len` by its definition alone: `x % c` or `x & m` with constants
/// `c <= len` or `m < len`, or a `UMin` with a constant below `len` (a bound this pass added,
/// or the producer's).
fn below(defs: &HashMap<Word, &Inst>, types: &Types, value: Word, len: u32) -> bool {
    let Some(def) = defs.get(&value) else { return false };
    let constant = |k: usize| def.id(k).ok().and_then(|c| types.const_u32(c));
    match def.op() {
        Some(Op::UMod) => constant(1).is_some_and(|c| c > 0 && c <= len),
        Some(Op::BitwiseAnd) => constant(1).or_else(|| constant(0)).is_some_and(|m| m < len),
        Some(Op::ExtInst) => def.word_opt(1) == Some(GlslStd450Op::UMin as u32) && (constant(2).is_some_and(|c| c < len) || constant(3).is_some_and(|c| c < len)),
        _ => false,
    }
}

/// The number of parts of an array of constant length, a vector or a matrix type.
fn parts(types: &Types, ty: Word) -> Option<u32> {
    let def = types.defs.get(&ty)?;
    match def.op()? {
        Op::TypeArray => def.id(1).ok().and_then(|l| types.const_u32(l)),
        Op::TypeVector | Op::TypeMatrix => def.word_opt(1),
        _ => None,
    }
}
