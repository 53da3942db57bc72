//! `MergeJoinedVariables`: variables of a kernel's local or private memory whose pointers meet
//! (chosen by a phi or select, or kept in one pointer variable) become members of one struct
//! variable, so that every pointer that may point into either points into one variable.
//!
//! Why: ping-pong buffers (`__local half *src = odd ? buf1 : buf0;`) choose between two arrays
//! at run time. Vulkan has no pointers in phis or selects there, so `lower-kernel-pointers`
//! turns each pointer into an index into its variable's flattened array, which needs one
//! variable per pointer.
//!
//! Rewrite: pointers are grouped by the instructions that join them (phis, selects, copies,
//! casts, access chains, and stores to and loads from one pointer variable); each group holding
//! two or more variables of one storage class and scope (module scope, or one function) becomes
//! one variable of a struct of their types, in the order of their ids (initializers become the
//! struct's, null where a member had none); each old variable becomes an access chain to its
//! member at the start of every function that uses it, and its decorations and name go.
//!
//! Preconditions: `lower-kernel-interface` ran (the module is a lowered kernel); runs before
//! `lower-kernel-pointers`. Groups whose variables differ in storage class or scope, or that
//! hold an array sized at launch (a `__local` argument), are left as they are, for
//! `lower-kernel-pointers` to refuse by name.

use crate::analysis::union_find::UnionFind;
use crate::analysis::Types;
use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{Op, StorageClass, Word};
use std::collections::{BTreeMap, HashMap, HashSet};

pub struct MergeJoinedVariables;

impl Pass for MergeJoinedVariables {
    fn name(&self) -> &'static str {
        "merge-joined-variables"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !crate::kernel::is_lowered_kernel(module) {
            return Ok(outcome);
        }
        let types = Types::new(module);
        let variables = logical_variables(module, &types);
        if variables.len() < 2 {
            return Ok(outcome);
        }
        let mut joined = UnionFind::default();
        let mut meets = false;
        let is_pointer = |v: Word| types.type_of(v).and_then(|t| types.pointer(t)).is_some();
        for inst in module.functions.iter().flat_map(|f| f.insts()) {
            let Some(op) = inst.op() else { continue };
            let ids: Vec<Word> = inst.operands.iter().filter_map(Operand::id).collect();
            let result = inst.result_id.filter(|r| is_pointer(*r));
            match (op, result) {
                (
                    Op::AccessChain
                    | Op::InBoundsAccessChain
                    | Op::PtrAccessChain
                    | Op::InBoundsPtrAccessChain
                    | Op::Bitcast
                    | Op::CopyObject
                    | Op::PtrCastToGeneric
                    | Op::GenericCastToPtr
                    | Op::GenericCastToPtrExplicit,
                    Some(r),
                ) => {
                    if let Some(base) = ids.first() {
                        joined.union(r, *base);
                    }
                }
                (Op::Phi, Some(r)) => {
                    for v in ids.iter().step_by(2) {
                        joined.union(r, *v);
                    }
                    meets = true;
                }
                (Op::Select, Some(r)) => {
                    for v in ids.iter().skip(1) {
                        joined.union(r, *v);
                    }
                    meets = true;
                }
                // A pointer variable: what is stored in it and what is loaded from it.
                (Op::Load, Some(r)) => {
                    if let Some(var) = ids.first() {
                        joined.union(r, *var);
                    }
                }
                (Op::Store, None) => {
                    if let (Some(var), Some(v)) = (ids.first(), ids.get(1).filter(|v| is_pointer(**v))) {
                        joined.union(*v, *var);
                        meets = true;
                    }
                }
                _ => {}
            }
        }
        if !meets {
            return Ok(outcome);
        }
        let mut groups: BTreeMap<Word, Vec<Word>> = BTreeMap::new();
        let mut ids: Vec<Word> = variables.keys().copied().collect();
        ids.sort_unstable();
        for v in ids {
            groups.entry(joined.find(v)).or_default().push(v);
        }
        for members in groups.into_values().filter(|m| m.len() > 1) {
            let first = variables[&members[0]];
            let alike = members.iter().all(|m| {
                let v = variables[m];
                v.class == first.class && v.function == first.function
            });
            let fixed = members.iter().all(|m| !sized_at_launch(&types, variables[m].pointee));
            if alike && fixed {
                merge(module, &variables, &members);
                outcome.count(Op::Variable as u32);
                outcome.notes.push(format!("variables {} merged into one", members.iter().map(|m| format!("%{m}")).collect::<Vec<_>>().join(", ")));
            }
        }
        if outcome.changed {
            module.rebuild_entry_interfaces();
        }
        Ok(outcome)
    }
}

/// A variable of local, private or function memory that holds data (not pointers).
#[derive(Clone, Copy)]
struct Variable {
    class: u32,
    pointee: Word,
    /// The function holding it; `None` at module scope.
    function: Option<usize>,
    initializer: Option<Word>,
}

fn logical_variables(module: &Module, types: &Types) -> HashMap<Word, Variable> {
    let logical = [StorageClass::Workgroup, StorageClass::Private, StorageClass::Function].map(|c| c as u32);
    let scoped = module.globals().iter().map(|g| (g, None)).chain(module.functions.iter().enumerate().flat_map(|(f, func)| func.insts().map(move |i| (i, Some(f)))));
    scoped
        .filter(|(i, _)| i.is(Op::Variable))
        .filter_map(|(i, function)| {
            let (class, pointee) = types.pointer(i.result_type?)?;
            let holds_data = types.pointer(pointee).is_none();
            (logical.contains(&class) && holds_data).then_some((i.result_id?, Variable { class, pointee, function, initializer: i.operands.get(1).and_then(Operand::id) }))
        })
        .collect()
}

/// An array whose length is a specialization constant (local memory sized at launch).
fn sized_at_launch(types: &Types, ty: Word) -> bool {
    types.defs.get(&ty).filter(|d| d.is(Op::TypeArray)).and_then(|d| d.id(1).ok()).is_some_and(|len| types.const_u32(len).is_none())
}

/// Replaces `members` (variables of one class and scope) by one struct variable of their types.
fn merge(module: &mut Module, variables: &HashMap<Word, Variable>, members: &[Word]) {
    let first = variables[&members[0]];
    let class = StorageClass::from_u32(first.class).unwrap_or(StorageClass::Function);
    let pointees: Vec<Word> = members.iter().map(|m| variables[m].pointee).collect();
    let st = module.type_struct(&pointees);
    let pointer = module.type_pointer(class, st);
    let id = module.alloc_id();
    let mut operands = vec![Operand::storage_class(class)];
    if members.iter().any(|m| variables[m].initializer.is_some()) {
        let parts: Vec<Word> = members.iter().map(|m| variables[m].initializer.unwrap_or_else(|| module.constant_null(variables[m].pointee))).collect();
        operands.push(Operand::Id(module.constant_composite(st, &parts)));
    }
    let var = Inst::new(Op::Variable, Some(pointer), Some(id), operands);
    let gone: HashSet<Word> = members.iter().copied().collect();
    match first.function {
        None => {
            module.globals_mut().retain(|g| !g.result_id.is_some_and(|r| gone.contains(&r)));
            module.add_global(var);
        }
        Some(f) => {
            for b in &mut module.functions[f].blocks {
                b.insts.retain(|i| !i.result_id.is_some_and(|r| gone.contains(&r)));
            }
            if let Some(entry) = module.functions[f].blocks.first_mut() {
                entry.insts.insert(0, var);
            }
        }
    }
    module.forget(&gone);
    // Each old variable: an access chain to its member, after the entry block's variables.
    let functions: Vec<usize> = match first.function {
        Some(f) => vec![f],
        None => (0..module.functions.len()).collect(),
    };
    for f in functions {
        let used: Vec<(usize, Word)> = members.iter().copied().enumerate().filter(|(_, m)| module.functions[f].insts().any(|i| i.operands.iter().any(|o| o.id() == Some(*m)))).collect();
        if used.is_empty() {
            continue;
        }
        let mut chains = Vec::new();
        let mut renamed: HashMap<Word, Word> = HashMap::new();
        for (k, m) in used {
            let member = module.type_pointer(class, variables[&m].pointee);
            let index = module.constant_u32(k as u32);
            let chain = module.alloc_id();
            chains.push(Inst::new(Op::AccessChain, Some(member), Some(chain), vec![Operand::Id(id), Operand::Id(index)]));
            renamed.insert(m, chain);
        }
        module.functions[f].for_each_inst_mut(|i| i.map_used_ids(|u| renamed.get(&u).copied().unwrap_or(u)));
        if let Some(entry) = module.functions[f].blocks.first_mut() {
            let at = entry.insts.iter().take_while(|i| i.is(Op::Variable)).count();
            entry.insts.splice(at..at, chains);
        }
    }
}
