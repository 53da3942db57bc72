//! Which values and branches of an entry point's functions depend on the invocation, and which
//! blocks only some of a work-group's invocations reach because of them.
//!
//! A value is *divergent* when invocations of one work-group may hold different values of it:
//! the per-invocation built-ins (local and global invocation ids, sub-group ids and masks),
//! whatever is computed from them, memory a divergent value is stored to, `Function` and
//! `Private` variables stored to where only some invocations are, `OpPhi`s where control meets
//! again after a divergent branch, values a divergent loop leaves behind, read-modify-write
//! atomics and `OpGroupNonUniformElect`, the parameters of functions called with divergent
//! arguments, what a function stores through a pointer parameter, and the results of calls that
//! return divergent values. A branch (`OpBranchConditional`, `OpSwitch`) on a divergent value is
//! divergent; its *region* is the set of blocks between it and its immediate post-dominator,
//! where the invocations that took different ways meet again (the function's end where there is
//! none), so a block outside every region of a function is reached by every invocation that
//! calls it. Breaks out of a selection into an enclosing construct's merge are thereby handled
//! as the invocations run them: the region ends where they meet.
//!
//! The analysis is conservative (it may call a uniform value divergent, never the reverse),
//! flow-insensitive for memory, and needs no structured control flow.

use crate::ir::cfg::Cfg;
use crate::ir::{Inst, Module, Operand};
use spirv::{BuiltIn, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

/// The blocks only some invocations reach because of one divergent branch.
#[derive(Debug, Clone)]
pub struct Region {
    /// Index of the block whose terminator is the divergent branch.
    pub header: usize,
    /// Labels of the blocks between the branch and the point where its invocations meet again
    /// (the header too where a loop leads back to it before they meet).
    pub blocks: HashSet<Word>,
}

/// The divergence of one function.
#[derive(Debug, Clone, Default)]
pub struct FunctionDivergence {
    /// Divergent values, and the variables (and other memory roots) holding divergent values.
    pub values: HashSet<Word>,
    pub regions: Vec<Region>,
}

/// The divergence of the functions an entry point runs.
#[derive(Debug, Clone, Default)]
pub struct Divergence {
    functions: HashMap<usize, FunctionDivergence>,
}

/// What the functions tell each other: the divergent module-scope memory roots, parameters,
/// pointer parameters stored through, and functions returning divergent values.
#[derive(Default, PartialEq)]
struct Shared {
    globals: HashSet<Word>,
    params: HashSet<Word>,
    stored_params: HashSet<Word>,
    returns: HashSet<Word>,
}

impl Divergence {
    /// Analyses functions `fs` (indices into `module.functions`): an entry point's function and
    /// the functions it calls.
    pub fn new(module: &Module, fs: &[usize]) -> Divergence {
        let per_invocation = [
            BuiltIn::LocalInvocationId,
            BuiltIn::LocalInvocationIndex,
            BuiltIn::GlobalInvocationId,
            BuiltIn::SubgroupLocalInvocationId,
            BuiltIn::SubgroupId,
            BuiltIn::SubgroupEqMask,
            BuiltIn::SubgroupGeMask,
            BuiltIn::SubgroupGtMask,
            BuiltIn::SubgroupLeMask,
            BuiltIn::SubgroupLtMask,
        ];
        let mut shared = Shared { globals: per_invocation.into_iter().filter_map(|b| module.builtin_variable(b)).collect(), ..Shared::default() };
        let private: HashSet<Word> = module
            .globals()
            .iter()
            .filter(|g| g.is(Op::Variable) && g.word_opt(0) == Some(StorageClass::Private as u32))
            .filter_map(|g| g.result_id)
            .chain(fs.iter().flat_map(|&f| module.functions[f].insts().filter(|i| i.is(Op::Variable)).filter_map(|i| i.result_id)))
            .collect();
        let params: HashMap<Word, Vec<Word>> = fs.iter().map(|&f| &module.functions[f]).map(|f| (f.id(), f.params.iter().filter_map(|p| p.result_id).collect())).collect();
        let globals: HashSet<Word> = module.globals().iter().filter(|g| g.is(Op::Variable)).filter_map(|g| g.result_id).collect();
        let mut functions = HashMap::new();
        loop {
            let mut next = Shared { globals: shared.globals.clone(), ..Shared::default() };
            for &f in fs {
                let d = analyse(module, f, &shared, &private);
                let function = &module.functions[f];
                next.globals.extend(d.values.iter().filter(|v| globals.contains(v)));
                next.stored_params.extend(function.params.iter().filter_map(|p| p.result_id).filter(|p| d.values.contains(p) && stores_through(function, *p)));
                if function.insts().any(|i| i.is(Op::ReturnValue) && i.id(0).is_ok_and(|v| d.values.contains(&v))) {
                    next.returns.insert(function.id());
                }
                for call in function.insts().filter(|i| i.is(Op::FunctionCall)) {
                    let Some(callee) = call.id(0).ok().and_then(|c| params.get(&c)) else { continue };
                    for (param, arg) in callee.iter().zip(call.operands.iter().skip(1).filter_map(Operand::id)) {
                        if d.values.contains(&arg) {
                            next.params.insert(*param);
                        }
                    }
                }
                functions.insert(f, d);
            }
            next.params.extend(shared.params.iter().copied());
            next.stored_params.extend(shared.stored_params.iter().copied());
            next.returns.extend(shared.returns.iter().copied());
            if next == shared {
                break;
            }
            shared = next;
        }
        Divergence { functions }
    }

    /// The divergent regions of function `f`, empty for a function not analysed.
    pub fn regions(&self, f: usize) -> &[Region] {
        self.functions.get(&f).map_or(&[], |d| &d.regions)
    }

    /// Whether value `v` of function `f` may differ between the invocations of a work-group.
    pub fn is_divergent(&self, f: usize, v: Word) -> bool {
        self.functions.get(&f).is_some_and(|d| d.values.contains(&v))
    }
}

/// Whether `function` stores through pointer parameter `param` (or a pointer derived from it).
fn stores_through(function: &crate::ir::Function, param: Word) -> bool {
    let mut derived: HashSet<Word> = HashSet::from([param]);
    for inst in function.insts() {
        if matches!(inst.op(), Some(Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::CopyObject)) && inst.id(0).is_ok_and(|b| derived.contains(&b)) {
            derived.extend(inst.result_id);
        }
    }
    function.insts().any(|i| (i.is(Op::Store) || i.is(Op::CopyMemory) || is_atomic_write(i)) && i.id(0).is_ok_and(|p| derived.contains(&p)))
}

fn is_atomic_write(inst: &Inst) -> bool {
    matches!(
        inst.op(),
        Some(
            Op::AtomicStore
                | Op::AtomicExchange
                | Op::AtomicCompareExchange
                | Op::AtomicCompareExchangeWeak
                | Op::AtomicIIncrement
                | Op::AtomicIDecrement
                | Op::AtomicIAdd
                | Op::AtomicISub
                | Op::AtomicSMin
                | Op::AtomicUMin
                | Op::AtomicSMax
                | Op::AtomicUMax
                | Op::AtomicAnd
                | Op::AtomicOr
                | Op::AtomicXor
                | Op::AtomicFlagTestAndSet
                | Op::AtomicFlagClear
                | Op::AtomicFAddEXT
                | Op::AtomicFMinEXT
                | Op::AtomicFMaxEXT
        )
    )
}

/// One function's divergence given what the others tell it. `private` holds the variables
/// private to an invocation (`Function` and `Private` ones).
fn analyse(module: &Module, f: usize, shared: &Shared, private: &HashSet<Word>) -> FunctionDivergence {
    let function = &module.functions[f];
    let cfg = Cfg::new(function);
    let ipdom = cfg.post_dominators();
    let block_of: HashMap<Word, usize> = function.blocks.iter().enumerate().flat_map(|(k, b)| b.insts.iter().filter_map(move |i| Some((i.result_id?, k)))).collect();
    let label_index = block_of_label(function);
    let defs: HashMap<Word, &Inst> = function.insts().filter_map(|i| Some((i.result_id?, i))).collect();
    let root = |mut ptr: Word| {
        while let Some(d) = defs.get(&ptr).filter(|d| matches!(d.op(), Some(Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::CopyObject))) {
            match d.id(0) {
                Ok(base) => ptr = base,
                Err(_) => break,
            }
        }
        ptr
    };
    let mut values: HashSet<Word> = shared.globals.iter().copied().chain(function.params.iter().filter_map(|p| p.result_id).filter(|p| shared.params.contains(p))).collect();
    let mut regions: Vec<Region> = Vec::new();
    // Per block: the regions it lies in, by index into `regions`.
    let mut inside: Vec<Vec<usize>> = vec![Vec::new(); function.blocks.len()];
    loop {
        let before = values.len();
        for (k, block) in function.blocks.iter().enumerate() {
            let in_region = !inside[k].is_empty();
            for inst in &block.insts {
                let writes = if inst.is(Op::Store) || is_atomic_write(inst) {
                    inst.id(0).ok()
                } else if inst.is(Op::CopyMemory) {
                    inst.id(0).ok().filter(|_| inst.id(1).is_ok_and(|s| values.contains(&root(s))))
                } else {
                    None
                };
                if let Some(ptr) = writes {
                    let r = root(ptr);
                    let value = inst.operands.iter().skip(1).filter_map(Operand::id).any(|v| values.contains(&v));
                    if value || (in_region && private.contains(&r)) || inst.is(Op::CopyMemory) {
                        values.insert(r);
                    }
                }
                if inst.is(Op::FunctionCall) {
                    // Pointers passed to a parameter the callee stores through.
                    let stored = inst
                        .id(0)
                        .ok()
                        .and_then(|c| module.functions.iter().find(|g| g.id() == c))
                        .map(|g| g.params.iter().map(|p| p.result_id.is_some_and(|p| shared.stored_params.contains(&p))).collect::<Vec<_>>());
                    for (arg, written) in inst.operands.iter().skip(1).filter_map(Operand::id).zip(stored.unwrap_or_default()) {
                        if written {
                            values.insert(root(arg));
                        }
                    }
                }
                let Some(r) = inst.result_id else { continue };
                if values.contains(&r) {
                    continue;
                }
                let divergent = inst.used_ids().any(|v| values.contains(&v))
                    || (matches!(inst.op(), Some(Op::Load | Op::AtomicLoad)) && inst.id(0).is_ok_and(|p| values.contains(&root(p))))
                    || (is_atomic_write(inst) && !inst.is(Op::AtomicStore))
                    || inst.is(Op::GroupNonUniformElect)
                    || (inst.is(Op::FunctionCall) && inst.id(0).is_ok_and(|c| shared.returns.contains(&c)))
                    || (inst.is(Op::Phi) && phi_meets_divergence(inst, k, &regions, &inside, &label_index));
                if divergent {
                    values.insert(r);
                }
            }
        }
        // Values a region leaves behind: defined in it, used past it.
        for (k, block) in function.blocks.iter().enumerate() {
            for inst in &block.insts {
                for v in inst.used_ids() {
                    let Some(&d) = block_of.get(&v) else { continue };
                    if inside[d].iter().any(|&r| !inside[k].contains(&r) && regions[r].header != k) {
                        values.insert(v);
                    }
                }
            }
        }
        // The regions of the branches now known to be divergent.
        regions.clear();
        inside.iter_mut().for_each(Vec::clear);
        for (h, block) in function.blocks.iter().enumerate() {
            let Some(t) = block.terminator() else { continue };
            if !((t.is(Op::BranchConditional) || t.is(Op::Switch)) && t.id(0).is_ok_and(|c| values.contains(&c))) {
                continue;
            }
            let stop = ipdom.get(h).copied().flatten();
            let mut seen = vec![false; function.blocks.len()];
            let mut todo: Vec<usize> = cfg.succs[h].clone();
            let mut blocks = HashSet::new();
            while let Some(b) = todo.pop() {
                if Some(b) == stop || std::mem::replace(&mut seen[b], true) {
                    continue;
                }
                blocks.insert(cfg.labels[b]);
                inside[b].push(regions.len());
                todo.extend(cfg.succs[b].iter().copied());
            }
            regions.push(Region { header: h, blocks });
        }
        if values.len() == before {
            break;
        }
    }
    FunctionDivergence { values, regions }
}

fn block_of_label(function: &crate::ir::Function) -> HashMap<Word, usize> {
    function.blocks.iter().enumerate().map(|(k, b)| (b.id(), k)).collect()
}

/// Whether `OpPhi` `phi` in block `k` meets a divergent branch's invocations again: one of its
/// predecessors is a region's branch or lies in the region, and its block does not.
fn phi_meets_divergence(phi: &Inst, k: usize, regions: &[Region], inside: &[Vec<usize>], index: &HashMap<Word, usize>) -> bool {
    phi.operands
        .chunks(2)
        .filter_map(|pair| pair.get(1).and_then(Operand::id))
        .filter_map(|l| index.get(&l))
        .any(|&pred| regions.iter().enumerate().any(|(r, region)| (region.header == pred || inside[pred].contains(&r)) && !inside[k].contains(&r)))
}
