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

use super::Types;
use crate::ir::cfg::Cfg;
use crate::ir::{Inst, Module, Operand};
use spirv::{BuiltIn, GroupOperation, Op, Scope, StorageClass, Word};
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
    /// the functions it calls. A value is uniform when every invocation of the work-group
    /// (`among` = `Scope::Workgroup`) or of each sub-group (`Scope::Subgroup`) holds the same.
    pub fn new(module: &Module, fs: &[usize], among: Scope) -> Divergence {
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
        let subgroup = among == Scope::Subgroup;
        let mut shared = Shared { globals: per_invocation.into_iter().filter(|b| !(subgroup && *b == BuiltIn::SubgroupId)).filter_map(|b| module.builtin_variable(b)).collect(), ..Shared::default() };
        let types = Types::new(module);
        let uniform_in_subgroup = |i: &Inst| subgroup && subgroup_uniform_result(&types, i);
        let private: HashSet<Word> = module
            .globals()
            .iter()
            .filter(|g| g.is(Op::Variable) && g.word_opt(0) == Some(StorageClass::Private as u32))
            .filter_map(|g| g.result_id)
            .chain(fs.iter().flat_map(|&f| module.functions[f].insts().filter(|i| i.is(Op::Variable)).filter_map(|i| i.result_id)))
            .collect();
        let params: HashMap<Word, Vec<Word>> = fs.iter().map(|&f| &module.functions[f]).map(|f| (f.id(), f.params.iter().filter_map(|p| p.result_id).collect())).collect();
        let globals: HashSet<Word> = module.globals().iter().filter(|g| g.is(Op::Variable)).filter_map(|g| g.result_id).collect();
        // What does not depend on the other functions is built once.
        let facts: HashMap<usize, Facts<'_>> = fs.iter().map(|&f| (f, Facts::new(&module.functions[f], &params))).collect();
        let mut functions = HashMap::new();
        loop {
            let mut next = Shared { globals: shared.globals.clone(), ..Shared::default() };
            for &f in fs {
                let (d, tainted) = analyse(&module.functions[f], &facts[&f], &shared, &private, &params, &uniform_in_subgroup);
                let function = &module.functions[f];
                next.globals.extend(d.values.iter().filter(|v| globals.contains(v)));
                next.stored_params.extend(function.params.iter().filter_map(|p| p.result_id).filter(|p| d.values.contains(p) && stores_through(function, *p)));
                if function.insts().any(|i| i.is(Op::ReturnValue) && i.id(0).is_ok_and(|v| d.values.contains(&v))) {
                    next.returns.insert(function.id());
                }
                next.params.extend(tainted);
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

/// The facts about one function the analysis needs on every round: its control flow, where
/// each value is defined, and the writes reaching each read of its followed variables.
struct Facts<'m> {
    cfg: Cfg,
    ipdom: Vec<Option<usize>>,
    /// The block defining each value.
    block_of: HashMap<Word, usize>,
    label_index: HashMap<Word, usize>,
    defs: HashMap<Word, &'m Inst>,
    memory: Memory,
}

impl<'m> Facts<'m> {
    fn new(function: &'m crate::ir::Function, params: &HashMap<Word, Vec<Word>>) -> Facts<'m> {
        let cfg = Cfg::new(function);
        let ipdom = cfg.post_dominators();
        let block_of = function.blocks.iter().enumerate().flat_map(|(k, b)| b.insts.iter().filter_map(move |i| Some((i.result_id?, k)))).collect();
        let defs: HashMap<Word, &Inst> = function.insts().filter_map(|i| Some((i.result_id?, i))).collect();
        let memory = Memory::new(function, &cfg, &defs, params);
        Facts { cfg, ipdom, block_of, label_index: block_of_label(function), defs, memory }
    }
}

/// One function's divergence given what the others tell it. `private` holds the variables
/// private to an invocation (`Function` and `Private` ones), `params` each function's
/// parameters. Also returns the parameters of called functions that get divergent arguments.
fn analyse(
    function: &crate::ir::Function,
    facts: &Facts<'_>,
    shared: &Shared,
    private: &HashSet<Word>,
    params: &HashMap<Word, Vec<Word>>,
    uniform: &dyn Fn(&Inst) -> bool,
) -> (FunctionDivergence, HashSet<Word>) {
    let Facts { cfg, ipdom, block_of, label_index, defs, memory } = facts;
    let root = |ptr: Word| root_of(defs, ptr);
    let mut values: HashSet<Word> = shared.globals.iter().copied().chain(function.params.iter().filter_map(|p| p.result_id).filter(|p| shared.params.contains(p))).collect();
    let mut regions: Vec<Region> = Vec::new();
    // Per block: the regions it lies in, by index into `regions`.
    let mut inside: Vec<Vec<usize>> = vec![Vec::new(); function.blocks.len()];
    let mut tainted_params = HashSet::new();
    loop {
        let before = (values.len(), tainted_params.len());
        // Whether what a followed variable holds at instruction `at` of block `k` may differ
        // between invocations: a write that reaches it stored such a value, or lies in a region
        // `k` is not in (only some invocations wrote it).
        let holds_divergent = |values: &HashSet<Word>, k: usize, at: usize| {
            memory.reaching(k, at).iter().any(|&w| {
                let write = &memory.writes[w];
                let value = match write.what {
                    Written::Value(v) => values.contains(&v),
                    Written::Param(p) => shared.stored_params.contains(&p),
                    Written::Copy(src) => values.contains(&src) || memory.tracked.contains(&src),
                    Written::Divergent => true,
                };
                value || inside[write.block].iter().any(|r| !inside[k].contains(r))
            })
        };
        for (k, block) in function.blocks.iter().enumerate() {
            let in_region = !inside[k].is_empty();
            for (at, inst) in block.insts.iter().enumerate() {
                let writes = if inst.is(Op::Store) || is_atomic_write(inst) {
                    inst.id(0).ok()
                } else if inst.is(Op::CopyMemory) {
                    inst.id(0).ok().filter(|_| inst.id(1).is_ok_and(|s| values.contains(&root(s))))
                } else {
                    None
                };
                if let Some(r) = writes.map(root).filter(|r| !memory.tracked.contains(r)) {
                    let value = inst.operands.iter().skip(1).filter_map(Operand::id).any(|v| values.contains(&v));
                    if value || (in_region && private.contains(&r)) || inst.is(Op::CopyMemory) {
                        values.insert(r);
                    }
                }
                if inst.is(Op::FunctionCall) {
                    let callee = inst.id(0).ok().and_then(|c| params.get(&c)).map_or(&[][..], Vec::as_slice);
                    let stored = |p: &Word| shared.stored_params.contains(p);
                    for (param, arg) in callee.iter().zip(inst.operands.iter().skip(1).filter_map(Operand::id)) {
                        let r = root(arg);
                        // Pointers to untracked memory the callee stores divergent values through.
                        if stored(param) && !memory.tracked.contains(&r) {
                            values.insert(r);
                        }
                        if values.contains(&arg) || (memory.tracked.contains(&r) && holds_divergent(&values, k, at)) {
                            tainted_params.insert(*param);
                        }
                    }
                }
                let Some(r) = inst.result_id else { continue };
                if values.contains(&r) || uniform(inst) {
                    continue;
                }
                let loaded = |p: Word| {
                    let r = root(p);
                    if memory.tracked.contains(&r) {
                        holds_divergent(&values, k, at)
                    } else {
                        values.contains(&r)
                    }
                };
                let divergent = inst.used_ids().any(|v| values.contains(&v))
                    || (matches!(inst.op(), Some(Op::Load | Op::AtomicLoad)) && inst.id(0).is_ok_and(loaded))
                    || (is_atomic_write(inst) && !inst.is(Op::AtomicStore))
                    || inst.is(Op::GroupNonUniformElect)
                    || (inst.is(Op::FunctionCall) && inst.id(0).is_ok_and(|c| shared.returns.contains(&c)))
                    || (inst.is(Op::Phi) && phi_meets_divergence(inst, k, &regions, &inside, label_index));
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
        if (values.len(), tainted_params.len()) == before {
            break;
        }
    }
    (FunctionDivergence { values, regions }, tainted_params)
}

/// The variable (or parameter, or other pointer) an access chain or copy of pointer `ptr`
/// starts from.
fn root_of(defs: &HashMap<Word, &Inst>, mut ptr: Word) -> Word {
    while let Some(d) = defs.get(&ptr).filter(|d| matches!(d.op(), Some(Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::CopyObject))) {
        match d.id(0) {
            Ok(base) => ptr = base,
            Err(_) => break,
        }
    }
    ptr
}

/// What a write to a followed variable stores.
enum Written {
    /// A value (`OpStore`, an atomic write).
    Value(Word),
    /// What a called function stores through its parameter.
    Param(Word),
    /// A copy of the memory at this root (`OpCopyMemory`).
    Copy(Word),
    /// Something that differs between invocations whatever the operands.
    Divergent,
}

/// A write to or read of a followed variable by instruction `inst` of a block.
#[derive(Clone, Copy)]
struct Access {
    inst: usize,
    /// Index into `Memory::writes`.
    write: Option<usize>,
    /// The variable read (index into the followed variables).
    read: Option<usize>,
}

/// Called for each read during a walk: (instruction, variable, the writes reaching it as bits).
type OnRead<'a> = &'a mut dyn FnMut(usize, usize, &[u64]);

struct Write {
    block: usize,
    /// Index of the variable among the followed ones.
    var: usize,
    /// Whether it writes the whole variable, so that earlier writes no longer reach past it.
    kills: bool,
    what: Written,
}

/// The `Function` variables whose every use is a load, a store, an atomic, a copy, an access
/// chain or a call argument (no pointer of theirs is selected, stored or converted): for them
/// divergence follows the control flow, each read seeing only the writes that reach it. A
/// variable reused for different loops is then divergent only where a divergent write reaches.
struct Memory {
    tracked: HashSet<Word>,
    writes: Vec<Write>,
    /// Per block, the writes reaching each instruction that reads a followed variable
    /// (instruction index, writes of that variable).
    reads: Vec<HashMap<usize, Vec<usize>>>,
}

impl Memory {
    fn new(function: &crate::ir::Function, cfg: &Cfg, defs: &HashMap<Word, &Inst>, params: &HashMap<Word, Vec<Word>>) -> Memory {
        let variables: Vec<Word> = function.blocks.first().map(|b| b.insts.iter().filter(|i| i.is(Op::Variable)).filter_map(|i| i.result_id).collect()).unwrap_or_default();
        let candidates: HashSet<Word> = variables.iter().copied().collect();
        let mut escaped = HashSet::new();
        for inst in function.blocks.iter().flat_map(|b| &b.insts) {
            let pointer_operands: &[usize] = match inst.op() {
                Some(Op::Load | Op::AtomicLoad | Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::CopyObject) => &[0],
                Some(Op::Store | Op::AtomicStore) => &[0],
                Some(Op::CopyMemory) => &[0, 1],
                Some(Op::FunctionCall) => &[],
                _ if is_atomic_write(inst) => &[0],
                _ => &[],
            };
            for (k, o) in inst.operands.iter().enumerate() {
                let Some(id) = o.id() else { continue };
                let r = root_of(defs, id);
                if candidates.contains(&r) && !(pointer_operands.contains(&k) || (inst.is(Op::FunctionCall) && k > 0)) {
                    escaped.insert(r);
                }
            }
        }
        let tracked_order: Vec<Word> = variables.into_iter().filter(|v| !escaped.contains(v)).collect();
        let slot: HashMap<Word, usize> = tracked_order.iter().enumerate().map(|(k, v)| (*v, k)).collect();
        // The writes, in block order, and the instructions that read.
        let mut writes = Vec::new();
        let mut at: Vec<Vec<Access>> = vec![Vec::new(); function.blocks.len()];
        for (k, block) in function.blocks.iter().enumerate() {
            for (i, inst) in block.insts.iter().enumerate() {
                let mut write = |ptr: Word, kills: bool, what: Written| {
                    let r = root_of(defs, ptr);
                    slot.get(&r).map(|&var| {
                        writes.push(Write { block: k, var, kills: kills && ptr == r, what });
                        writes.len() - 1
                    })
                };
                let (w, read) = match inst.op() {
                    Some(Op::Store) => (inst.id(0).ok().zip(inst.id(1).ok()).and_then(|(p, v)| write(p, true, Written::Value(v))), None),
                    Some(Op::AtomicStore) => (inst.id(0).ok().zip(inst.id(3).ok()).and_then(|(p, v)| write(p, false, Written::Value(v))), None),
                    Some(Op::CopyMemory) => {
                        let src = inst.id(1).ok().map(|s| root_of(defs, s));
                        let w = inst.id(0).ok().and_then(|p| write(p, true, Written::Copy(src.unwrap_or(0))));
                        (w, src.and_then(|s| slot.get(&s).copied()))
                    }
                    Some(Op::Load | Op::AtomicLoad) => (None, inst.id(0).ok().and_then(|p| slot.get(&root_of(defs, p)).copied())),
                    Some(Op::FunctionCall) => {
                        // A call may read through any pointer it gets, then store through it.
                        let args: Vec<Word> = inst.operands.iter().skip(1).filter_map(Operand::id).collect();
                        for arg in &args {
                            if let Some(&var) = slot.get(&root_of(defs, *arg)) {
                                at[k].push(Access { inst: i, write: None, read: Some(var) });
                            }
                        }
                        let callee = inst.id(0).ok().and_then(|c| params.get(&c)).map_or(&[][..], Vec::as_slice);
                        for (arg, param) in args.iter().zip(callee) {
                            if let Some(w) = write(*arg, false, Written::Param(*param)) {
                                at[k].push(Access { inst: i, write: Some(w), read: None });
                            }
                        }
                        (None, None)
                    }
                    _ if is_atomic_write(inst) => (inst.id(0).ok().and_then(|p| write(p, false, Written::Divergent)), None),
                    _ => (None, None),
                };
                if w.is_some() || read.is_some() {
                    at[k].push(Access { inst: i, write: w, read });
                }
            }
        }
        let n = writes.len();
        let words = n.div_ceil(64);
        let var_mask: Vec<Vec<u64>> = (0..tracked_order.len())
            .map(|v| {
                let mut m = vec![0u64; words];
                for (w, _) in writes.iter().enumerate().filter(|(_, x)| x.var == v) {
                    m[w / 64] |= 1 << (w % 64);
                }
                m
            })
            .collect();
        let transfer = |state: &mut Vec<u64>, k: usize, mut on_read: Option<OnRead<'_>>| {
            for access in &at[k] {
                if let (Some(var), Some(cb)) = (access.read, on_read.as_deref_mut()) {
                    cb(access.inst, var, state);
                }
                if let Some(w) = access.write {
                    if writes[w].kills {
                        for (s, m) in state.iter_mut().zip(&var_mask[writes[w].var]) {
                            *s &= !m;
                        }
                    }
                    state[w / 64] |= 1 << (w % 64);
                }
            }
        };
        let mut out: Vec<Vec<u64>> = vec![vec![0u64; words]; function.blocks.len()];
        let mut changed = n > 0;
        while changed {
            changed = false;
            for &b in &cfg.rpo {
                let mut state = vec![0u64; words];
                for &p in &cfg.preds[b] {
                    for (s, o) in state.iter_mut().zip(&out[p]) {
                        *s |= o;
                    }
                }
                transfer(&mut state, b, None);
                if state != out[b] {
                    out[b] = state;
                    changed = true;
                }
            }
        }
        let mut reads: Vec<HashMap<usize, Vec<usize>>> = vec![HashMap::new(); function.blocks.len()];
        for (b, reads_of_block) in reads.iter_mut().enumerate() {
            let mut state = vec![0u64; words];
            for &p in &cfg.preds[b] {
                for (s, o) in state.iter_mut().zip(&out[p]) {
                    *s |= o;
                }
            }
            let mut record = |i: usize, var: usize, state: &[u64]| {
                let reaching = state.iter().zip(&var_mask[var]).enumerate().flat_map(|(word, (s, m))| {
                    let mut bits = s & m;
                    std::iter::from_fn(move || {
                        (bits != 0).then(|| {
                            let b = bits.trailing_zeros() as usize;
                            bits &= bits - 1;
                            word * 64 + b
                        })
                    })
                });
                reads_of_block.entry(i).or_insert_with(Vec::new).extend(reaching);
            };
            transfer(&mut state, b, Some(&mut record));
        }
        Memory { tracked: tracked_order.into_iter().collect(), writes, reads }
    }

    /// The writes reaching instruction `at` of block `k` (empty where it reads no followed
    /// variable).
    fn reaching(&self, k: usize, at: usize) -> &[usize] {
        self.reads.get(k).and_then(|r| r.get(&at)).map_or(&[], Vec::as_slice)
    }
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

/// Whether every invocation of a sub-group gets the same result from sub-group operation `inst`
/// whatever its operands: votes, broadcasts, ballots and reductions of `Subgroup` scope.
fn subgroup_uniform_result(types: &Types, inst: &Inst) -> bool {
    let subgroup = inst.id(0).ok().and_then(|s| types.const_u32(s)) == Some(Scope::Subgroup as u32);
    let reduce = || inst.word_opt(1) == Some(GroupOperation::Reduce as u32);
    subgroup
        && match inst.op() {
            Some(Op::GroupNonUniformAll | Op::GroupNonUniformAny | Op::GroupNonUniformAllEqual | Op::GroupNonUniformBroadcast | Op::GroupNonUniformBroadcastFirst | Op::GroupNonUniformBallot) => true,
            Some(
                Op::GroupNonUniformBallotBitCount
                | Op::GroupNonUniformIAdd
                | Op::GroupNonUniformFAdd
                | Op::GroupNonUniformIMul
                | Op::GroupNonUniformFMul
                | Op::GroupNonUniformSMin
                | Op::GroupNonUniformUMin
                | Op::GroupNonUniformFMin
                | Op::GroupNonUniformSMax
                | Op::GroupNonUniformUMax
                | Op::GroupNonUniformFMax
                | Op::GroupNonUniformBitwiseAnd
                | Op::GroupNonUniformBitwiseOr
                | Op::GroupNonUniformBitwiseXor
                | Op::GroupNonUniformLogicalAnd
                | Op::GroupNonUniformLogicalOr
                | Op::GroupNonUniformLogicalXor,
            ) => reduce(),
            _ => false,
        }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::tools;

    const HEADER: &str = "
               OpCapability Shader
               OpCapability GroupNonUniform
               OpCapability GroupNonUniformArithmetic
               OpMemoryModel Logical GLSL450
               OpEntryPoint GLCompute %main \"main\" %lid %sgid
               OpExecutionMode %main LocalSize 64 1 1
               OpDecorate %lid BuiltIn LocalInvocationIndex
               OpDecorate %sgid BuiltIn SubgroupId
       %void = OpTypeVoid
         %fn = OpTypeFunction %void
       %uint = OpTypeInt 32 0
       %bool = OpTypeBool
         %u0 = OpConstant %uint 0
         %u1 = OpConstant %uint 1
         %u2 = OpConstant %uint 2
         %u3 = OpConstant %uint 3
        %u16 = OpConstant %uint 16
        %pin = OpTypePointer Input %uint
        %pfn = OpTypePointer Function %uint
        %fnu = OpTypeFunction %uint %uint
        %lid = OpVariable %pin Input
       %sgid = OpVariable %pin Input
";

    /// The module of `body` (functions after the common header), its divergence, and the id of
    /// each `%name` (spirv-as numbers names in order of first appearance).
    fn analyse_text(body: &str, among: Scope) -> Option<(Module, Divergence, HashMap<String, Word>)> {
        if tools::find("spirv-as").is_none() {
            assert!(std::env::var("CI").is_err(), "CI: SPIRV-Tools are not installed");
            return None;
        }
        let text = format!("{HEADER}{body}");
        let words = tools::assemble(&text, "vulkan1.3").unwrap_or_else(|e| panic!("{e}\n{text}"));
        let module = Module::from_words(&words).unwrap();
        let fs: Vec<usize> = (0..module.functions.len()).collect();
        let divergence = Divergence::new(&module, &fs, among);
        let mut names = HashMap::new();
        let mut next = 1;
        for token in text.split(|c: char| c.is_whitespace() || c == '"').filter(|t| t.starts_with('%')) {
            names.entry(token[1..].to_string()).or_insert_with(|| {
                next += 1;
                next - 1
            });
        }
        Some((module, divergence, names))
    }

    /// The labels of the blocks in some region of function `f`.
    fn in_regions(d: &Divergence, f: usize) -> HashSet<Word> {
        d.regions(f).iter().flat_map(|r| r.blocks.iter().copied()).collect()
    }

    #[test]
    fn a_break_out_of_a_switch_ends_the_region_where_invocations_meet() {
        // Slang's inlined early return: `switch (0) { default: if (id < 16) break; ... }`.
        let body = "
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %id = OpLoad %uint %lid
               OpBranch %sw
         %sw = OpLabel
               OpSelectionMerge %after None
               OpSwitch %u0 %body
       %body = OpLabel
          %c = OpULessThan %bool %id %u16
               OpSelectionMerge %m None
               OpBranchConditional %c %early %m
      %early = OpLabel
               OpBranch %after
          %m = OpLabel
               OpBranch %after
      %after = OpLabel
               OpBranch %end
        %end = OpLabel
               OpReturn
               OpFunctionEnd
";
        let Some((module, d, n)) = analyse_text(body, Scope::Workgroup) else { return };
        let blocks = in_regions(&d, 0);
        assert_eq!(blocks, HashSet::from([n["early"], n["m"]]));
        assert!(d.is_divergent(0, n["c"]));
        let cfg = Cfg::new(&module.functions[0]);
        let ipdom = cfg.post_dominators();
        let index = |l: &str| cfg.labels.iter().position(|x| *x == n[l]).unwrap();
        assert_eq!(ipdom[index("body")], Some(index("after")));
        assert_eq!(ipdom[index("sw")], Some(index("body")));
        assert_eq!(ipdom[index("end")], None);
    }

    #[test]
    fn variables_follow_the_writes_that_reach_them() {
        // %i counts a loop under `if (id < 16)`, then a uniform loop from 0: only the read
        // right after the divergent branch, which its write reaches, is divergent.
        let body = "
       %main = OpFunction %void None %fn
      %entry = OpLabel
          %i = OpVariable %pfn Function
          %t = OpVariable %pfn Function
         %id = OpLoad %uint %lid
               OpStore %t %u0
          %c = OpULessThan %bool %id %u16
               OpSelectionMerge %m None
               OpBranchConditional %c %then %m
       %then = OpLabel
               OpStore %i %u3
               OpStore %t %u1
               OpBranch %m
          %m = OpLabel
         %i0 = OpLoad %uint %i
         %t0 = OpLoad %uint %t
               OpStore %i %u0
               OpBranch %head
       %head = OpLabel
         %i1 = OpLoad %uint %i
       %more = OpULessThan %bool %i1 %u2
               OpLoopMerge %exit %cont None
               OpBranchConditional %more %cont %exit
       %cont = OpLabel
         %i2 = OpIAdd %uint %i1 %u1
               OpStore %i %i2
               OpBranch %head
       %exit = OpLabel
               OpReturn
               OpFunctionEnd
";
        let Some((_, d, n)) = analyse_text(body, Scope::Workgroup) else { return };
        assert!(d.is_divergent(0, n["t0"]), "written only where id < 16");
        assert!(d.is_divergent(0, n["i0"]));
        assert!(!d.is_divergent(0, n["i1"]) && !d.is_divergent(0, n["more"]), "the loop is uniform");
        assert_eq!(in_regions(&d, 0), HashSet::from([n["then"]]));
    }

    #[test]
    fn phis_loops_and_calls_carry_divergence() {
        let body = "
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %id = OpLoad %uint %lid
          %c = OpULessThan %bool %id %u16
               OpSelectionMerge %m None
               OpBranchConditional %c %then %m
       %then = OpLabel
               OpBranch %m
          %m = OpLabel
        %phi = OpPhi %uint %u1 %then %u2 %entry
               OpBranch %head
       %head = OpLabel
          %k = OpPhi %uint %u0 %m %k1 %cont
       %stop = OpUGreaterThanEqual %bool %k %id
               OpLoopMerge %exit %cont None
               OpBranchConditional %stop %exit %cont
       %cont = OpLabel
         %k1 = OpIAdd %uint %k %u1
               OpBranch %head
       %exit = OpLabel
       %left = OpIAdd %uint %k %u0
         %r1 = OpFunctionCall %uint %helper %id
         %r2 = OpFunctionCall %uint %other %u1
               OpReturn
               OpFunctionEnd
     %helper = OpFunction %uint None %fnu
          %x = OpFunctionParameter %uint
         %hb = OpLabel
         %hc = OpULessThan %bool %x %u16
               OpSelectionMerge %hm None
               OpBranchConditional %hc %ht %hm
         %ht = OpLabel
               OpBranch %hm
         %hm = OpLabel
               OpReturnValue %x
               OpFunctionEnd
      %other = OpFunction %uint None %fnu
          %y = OpFunctionParameter %uint
         %ob = OpLabel
         %oc = OpULessThan %bool %y %u16
               OpSelectionMerge %om None
               OpBranchConditional %oc %ot %om
         %ot = OpLabel
               OpBranch %om
         %om = OpLabel
               OpReturnValue %y
               OpFunctionEnd
";
        let Some((_, d, n)) = analyse_text(body, Scope::Workgroup) else { return };
        assert!(d.is_divergent(0, n["phi"]), "constants meeting after a divergent branch");
        assert!(d.is_divergent(0, n["left"]), "a divergent loop's counter read after it");
        assert!(d.is_divergent(0, n["r1"]), "a call returning its divergent argument");
        assert!(!d.is_divergent(0, n["r2"]));
        assert!(d.is_divergent(1, n["hc"]) && d.regions(1).len() == 1);
        assert!(!d.is_divergent(2, n["oc"]) && d.regions(2).is_empty());
    }

    #[test]
    fn among_one_subgroup_the_subgroup_id_and_reductions_are_uniform() {
        let body = "
       %main = OpFunction %void None %fn
      %entry = OpLabel
         %sg = OpLoad %uint %sgid
         %id = OpLoad %uint %lid
        %sum = OpGroupNonUniformIAdd %uint %u3 Reduce %id
       %scan = OpGroupNonUniformIAdd %uint %u3 InclusiveScan %id
         %c1 = OpIEqual %bool %sg %u0
         %c2 = OpULessThan %bool %sum %u16
         %c3 = OpULessThan %bool %scan %u16
               OpReturn
               OpFunctionEnd
";
        let Some((_, wg, n)) = analyse_text(body, Scope::Workgroup) else { return };
        assert!(wg.is_divergent(0, n["c1"]) && wg.is_divergent(0, n["c2"]) && wg.is_divergent(0, n["c3"]));
        let Some((_, sg, n)) = analyse_text(body, Scope::Subgroup) else { return };
        assert!(!sg.is_divergent(0, n["c1"]) && !sg.is_divergent(0, n["c2"]));
        assert!(sg.is_divergent(0, n["c3"]), "a scan differs from lane to lane");
    }
}
