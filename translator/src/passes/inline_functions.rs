//! `InlineFunctions`: every `OpFunctionCall` in a kernel module is replaced by the callee's body,
//! and functions no entry point reaches are removed.
//!
//! Rewrite: the calling block is split at the call; the callee's blocks are cloned with fresh ids
//! (parameters mapped to the arguments, decorations of its results copied to the clones), its
//! `OpVariable`s move to the caller's first block (with a copy of each struct passed by value
//! that the callee writes to: `FuncParamAttr ByVal` gives the callee its own), each `OpReturn`/`OpReturnValue` branches to the
//! second half of the split block, where an `OpPhi` collects return values. `OpPhi`s in the
//! successors of the split block name its second half. Callees are inlined before their callers'
//! own calls are looked at again, so nested calls unfold completely.
//!
//! Why: OpenCL producers (llvm-spirv) wrap each kernel in an entry function that calls the body,
//! and helper functions take pointers into storage classes that Vulkan functions cannot take as
//! parameters. Later kernel passes see one function per entry point.
//!
//! Preconditions: the module declares `Kernel` (shader modules are left alone). Recursion and
//! calls of functions without a body (imports, which no Vulkan module can link) are errors
//! naming the function.

use crate::analysis::derived_pointers::{derived_pointers, first_write};
use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::{Block, Function, Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::lower_kernel_interface::is_by_value;
use crate::profile::DeviceCaps;
use spirv::{Capability, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

pub struct InlineFunctions;

impl Pass for InlineFunctions {
    fn name(&self) -> &'static str {
        "inline-functions"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !module.has_capability(Capability::Kernel) {
            return Ok(outcome);
        }
        let bodies: HashSet<Word> = module.functions.iter().filter(|f| !f.blocks.is_empty()).map(Function::id).collect();
        // Depth bound: a chain of inlined calls longer than the number of functions is recursion.
        let limit = module.functions.len() + 1;
        for f in 0..module.functions.len() {
            let mut depth: HashMap<Word, usize> = HashMap::new();
            while let Some((b, i)) = find_call(&module.functions[f], &bodies) {
                let call = module.functions[f].blocks[b].insts[i].clone();
                let callee = call.id(0)?;
                let d = depth.get(&call.result()?).copied().unwrap_or(0);
                if d > limit {
                    let name = module.name_of(callee).unwrap_or_else(|| format!("%{callee}"));
                    return Err(Error::Invalid { site: module.site(&call), message: format!("function {name} calls itself (recursion cannot be inlined; Vulkan has no recursion)") });
                }
                let new_ids = inline_call(module, f, b, i, &call)?;
                for id in new_ids {
                    depth.insert(id, d + 1);
                }
                outcome.count(Op::FunctionCall as u32);
            }
        }
        if outcome.changed {
            remove_unreachable_functions(module);
        }
        // What is left calls functions the module imports: nothing can run them.
        if let Some(call) = module.functions.iter().flat_map(|f| f.insts()).find(|i| i.is(Op::FunctionCall)) {
            let callee = call.id(0)?;
            let name = module.name_of(callee).unwrap_or_else(|| format!("%{callee}"));
            return Err(Error::Invalid {
                site: module.site(call),
                message: format!(
                    "calls {name}, a function the module declares without a body (an import: define it in the kernel's source; OpenCL C `inline` functions that are not `static` get no body at -O0)"
                ),
            });
        }
        Ok(outcome)
    }
}

fn find_call(f: &Function, bodies: &HashSet<Word>) -> Option<(usize, usize)> {
    for (b, block) in f.blocks.iter().enumerate() {
        for (i, inst) in block.insts.iter().enumerate() {
            if inst.is(Op::FunctionCall) && inst.operands.first().and_then(Operand::id).is_some_and(|c| bodies.contains(&c)) {
                return Some((b, i));
            }
        }
    }
    None
}

/// Inlines the call at `insts[i]` of block `b` of function `f`. Returns the result ids of the
/// calls the inlined body contains (their depth is one more than this call's).
fn inline_call(module: &mut Module, f: usize, b: usize, i: usize, call: &Inst) -> Result<Vec<Word>> {
    let callee_id = call.id(0)?;
    let callee =
        module.functions.iter().find(|g| g.id() == callee_id).cloned().ok_or_else(|| Error::Invalid { site: module.site(call), message: format!("calls %{callee_id}, which is not a function") })?;
    let args: Vec<Word> = call.operands.iter().skip(1).filter_map(Operand::id).collect();
    if args.len() != callee.params.iter().filter(|p| p.is(Op::FunctionParameter)).count() {
        return Err(Error::Invalid { site: module.site(call), message: format!("passes {} arguments to a function of {} parameters", args.len(), callee.params.len()) });
    }
    // Fresh ids for every result and label of the callee; parameters become the arguments,
    // except a struct passed by value that the callee writes to: that becomes a copy.
    let mut map: HashMap<Word, Word> = HashMap::new();
    let mut by_value: Vec<(Inst, Word)> = Vec::new();
    for (p, a) in callee.params.iter().filter(|p| p.is(Op::FunctionParameter)).zip(&args) {
        let Some(id) = p.result_id else { continue };
        if is_by_value(module, id) {
            let function_pointer = module.globals().iter().find(|g| g.result_id == p.result_type).is_some_and(|t| t.is(Op::TypePointer) && t.word_opt(0) == Some(StorageClass::Function as u32));
            if !function_pointer {
                return Err(Error::Invalid { site: module.site(p), message: "a parameter passed by value through a pointer into other than function memory (a copy is private memory)".into() });
            }
            if first_write(module, &callee, &derived_pointers(&callee, id)).is_some() {
                let copy = module.alloc_id();
                by_value.push((Inst::new(Op::Variable, p.result_type, Some(copy), vec![Operand::storage_class(StorageClass::Function)]).from_origin(call.origin), *a));
                map.insert(id, copy);
                continue;
            }
        }
        map.insert(id, *a);
    }
    let types = (!by_value.is_empty()).then(|| Types::new(module));
    let mut copy_insts = Vec::new();
    for (var, arg) in &by_value {
        let pointee = types
            .as_ref()
            .and_then(|t| t.pointer(var.result_type.unwrap_or(0)))
            .map(|(_, pointee)| pointee)
            .ok_or_else(|| Error::Invalid { site: module.site(call), message: "passes a struct by value through a parameter that is not a pointer".into() })?;
        let value = module.alloc_id();
        copy_insts.push(Inst::new(Op::Load, Some(pointee), Some(value), vec![Operand::Id(*arg)]).from_origin(call.origin));
        copy_insts.push(Inst::new(Op::Store, None, None, vec![Operand::Id(var.result_id.unwrap_or(0)), Operand::Id(value)]).from_origin(call.origin));
    }
    for block in &callee.blocks {
        map.insert(block.id(), module.alloc_id());
        for inst in &block.insts {
            if let Some(id) = inst.result_id {
                let new = module.alloc_id();
                map.insert(id, new);
            }
        }
    }
    // Decorations of the callee's results go to their clones.
    let copies: Vec<Inst> = module
        .annotations
        .iter()
        .filter(|a| a.is(Op::Decorate))
        .filter_map(|a| {
            let target = a.operands.first()?.id()?;
            let new = *map.get(&target)?;
            callee.blocks.iter().any(|bl| bl.insts.iter().any(|i| i.result_id == Some(target))).then(|| {
                let mut c = a.clone();
                c.operands[0] = Operand::Id(new);
                c
            })
        })
        .collect();
    module.annotations.extend(copies);

    let origin = call.origin;
    let after_label = module.alloc_id();
    let func = &mut module.functions[f];
    let block_label = func.blocks[b].id();
    let mut rest = func.blocks[b].insts.split_off(i);
    rest.remove(0); // the call
    let mut after = Block::new(after_label);
    after.label.origin = origin;
    // Successors of the moved terminator now come from `after`.
    let succs: Vec<Word> = rest.last().map(|t| t.operands.iter().filter_map(Operand::id).collect()).unwrap_or_default();
    for blk in func.blocks.iter_mut().filter(|bl| succs.contains(&bl.id())) {
        for phi in blk.insts.iter_mut().filter(|i| i.is(Op::Phi)) {
            for pair in phi.operands.chunks_mut(2) {
                if pair.get(1) == Some(&Operand::Id(block_label)) {
                    pair[1] = Operand::Id(after_label);
                }
            }
        }
    }
    let entry_label = map[&callee.blocks[0].id()];
    func.blocks[b].insts.extend(copy_insts);
    func.blocks[b].insts.push(Inst::new(Op::Branch, None, None, vec![Operand::Id(entry_label)]).from_origin(origin));

    let mut returns: Vec<(Word, Word)> = Vec::new();
    let mut variables: Vec<Inst> = by_value.into_iter().map(|(v, _)| v).collect();
    let mut clones = Vec::new();
    let mut calls = Vec::new();
    for block in &callee.blocks {
        let label = map[&block.id()];
        let mut nb = Block::new(label);
        nb.label.origin = origin;
        for inst in &block.insts {
            let mut c = inst.clone();
            c.result_id = c.result_id.map(|id| map[&id]);
            c.map_used_ids(|id| map.get(&id).copied().unwrap_or(id));
            if c.is(Op::Variable) {
                variables.push(c);
                continue;
            }
            if c.is(Op::FunctionCall) {
                calls.extend(c.result_id);
            }
            match c.op() {
                Some(Op::Return) => {
                    nb.insts.push(Inst::new(Op::Branch, None, None, vec![Operand::Id(after_label)]).from_origin(c.origin));
                    returns.push((0, label));
                }
                Some(Op::ReturnValue) => {
                    returns.push((c.id(0)?, label));
                    nb.insts.push(Inst::new(Op::Branch, None, None, vec![Operand::Id(after_label)]).from_origin(c.origin));
                }
                _ => nb.insts.push(c),
            }
        }
        clones.push(nb);
    }
    let result = call.result()?;
    let returns_value = call.result_type.is_some_and(|t| callee.def.result_type == Some(t)) && returns.iter().any(|(v, _)| *v != 0);
    if returns_value && !returns.is_empty() {
        let mut ops = Vec::new();
        for (v, l) in &returns {
            ops.push(Operand::Id(*v));
            ops.push(Operand::Id(*l));
        }
        after.insts.push(Inst::new(Op::Phi, call.result_type, Some(result), ops).from_origin(origin));
    }
    after.insts.extend(rest);
    let func = &mut module.functions[f];
    // Variables go first in the caller's entry block.
    let at = func.blocks[0].insts.iter().take_while(|i| i.is(Op::Variable)).count();
    for (k, v) in variables.into_iter().enumerate() {
        func.blocks[0].insts.insert(at + k, v);
    }
    let insert_at = b + 1;
    func.blocks.insert(insert_at, after);
    for (k, nb) in clones.into_iter().enumerate() {
        func.blocks.insert(insert_at + k, nb);
    }
    Ok(calls)
}

/// Removes every function that no entry point reaches through calls.
fn remove_unreachable_functions(module: &mut Module) {
    let mut live: HashSet<Word> = module.entry_points.iter().filter_map(|e| e.operands.get(1).and_then(Operand::id)).collect();
    let mut stack: Vec<Word> = live.iter().copied().collect();
    while let Some(id) = stack.pop() {
        let Some(f) = module.functions.iter().find(|f| f.id() == id) else { continue };
        for inst in f.insts() {
            for used in inst.used_ids() {
                if module.functions.iter().any(|g| g.id() == used) && live.insert(used) {
                    stack.push(used);
                }
            }
        }
    }
    let dead: HashSet<Word> = module.functions.iter().map(Function::id).filter(|id| !live.contains(id)).collect();
    if dead.is_empty() {
        return;
    }
    let dead_ids: HashSet<Word> = module.functions.iter().filter(|f| dead.contains(&f.id())).flat_map(|f| f.insts().filter_map(|i| i.result_id).collect::<Vec<_>>()).collect();
    module.functions.retain(|f| !dead.contains(&f.id()));
    let refers_to_dead = |i: &Inst| i.operands.first().and_then(Operand::id).is_some_and(|t| dead_ids.contains(&t));
    module.annotations.retain(|a| !refers_to_dead(a));
    module.debug_names.retain(|a| !refers_to_dead(a));
}
