//! `ReduceIrreducibleLoops`: loops with several entries (irreducible control flow: C's `goto`
//! into a loop, state machines, and what LLVM's jump threading makes of some reducible source)
//! -> loops with one header, which `structurize-control-flow` can structure.
//!
//! Rewrite, per function of a lowered kernel module: for each strongly connected set of blocks
//! entered at more than one block `E_0 .. E_k` (in function order), a new header `H` takes every
//! edge into any entry, from outside the set and from inside it (the back edges): each such edge
//! `P -> E_i` goes to a new block that branches to `H`, where a phi records `i` and an
//! `OpSwitch` on it continues to `E_i`. The entries' phis move to `H` (their values on the edges
//! bound for another entry are undefined, which no path reads). `H` is then the only entry; the
//! set without `H` is searched again for loops with several entries, until none is left. Each
//! invocation runs the same blocks in the same order as before, with `H` between an edge and
//! its entry.
//!
//! Preconditions: the function's entry block is no branch target (SPIR-V requires it); merge
//! instructions are not kept consistent (`structurize-control-flow` drops them and rebuilds its
//! own). Blocks unreachable from the entry are left as they are.

use crate::error::{Error, Result, Site};
use crate::ir::cfg::Cfg;
use crate::ir::{Block, Function, Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{Op, Word};
use std::collections::{BTreeSet, HashMap, HashSet};

pub struct ReduceIrreducibleLoops;

impl Pass for ReduceIrreducibleLoops {
    fn name(&self) -> &'static str {
        "reduce-irreducible-loops"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !crate::kernel::is_lowered_kernel(module) {
            return Ok(outcome);
        }
        for f in 0..module.functions.len() {
            // Each round gives one set of blocks a single header: at most one per block.
            let rounds = module.functions[f].blocks.len() + 1;
            for round in 0.. {
                let cfg = Cfg::new(&module.functions[f]);
                let Some(entries) = first_irreducible(&cfg) else { break };
                if round == rounds {
                    let name = module.name_of(module.functions[f].id()).unwrap_or_else(|| format!("%{}", module.functions[f].id()));
                    return Err(Error::Invalid {
                        site: Box::new(Site { opcode: "OpFunction".into(), function: Some(name), ..Site::default() }),
                        message: "irreducible control flow that giving loops single headers does not reduce".into(),
                    });
                }
                let labels: Vec<Word> = entries.iter().map(|&e| cfg.labels[e]).collect();
                let preds: Vec<Vec<Word>> = entries.iter().map(|&e| cfg.preds[e].iter().filter(|&&p| cfg.idom[p].is_some()).map(|&p| cfg.labels[p]).collect()).collect();
                single_header(module, f, &labels, &preds);
                outcome.count(Op::Switch as u32);
                outcome.changed = true;
            }
        }
        Ok(outcome)
    }
}

/// The entries (block indices, in function order) of the first strongly connected set of
/// reachable blocks that has more than one, searching each set's body again without its header.
fn first_irreducible(cfg: &Cfg) -> Option<Vec<usize>> {
    let reachable: BTreeSet<usize> = cfg.rpo.iter().copied().collect();
    let mut work = vec![reachable];
    while let Some(nodes) = work.pop() {
        for scc in components(cfg, &nodes) {
            let cyclic = scc.len() > 1 || scc.iter().any(|&b| cfg.succs[b].contains(&b));
            if !cyclic {
                continue;
            }
            let entries: Vec<usize> = scc.iter().copied().filter(|&b| cfg.preds[b].iter().any(|&p| cfg.idom[p].is_some() && !scc.contains(&p))).collect();
            match entries.as_slice() {
                [header] => {
                    let mut body = scc.clone();
                    body.remove(header);
                    work.push(body);
                }
                [] => {}
                _ => return Some(entries),
            }
        }
    }
    None
}

/// The strongly connected components of the subgraph on `nodes` (Tarjan's algorithm, with an
/// explicit stack).
fn components(cfg: &Cfg, nodes: &BTreeSet<usize>) -> Vec<BTreeSet<usize>> {
    let mut t = Tarjan::default();
    let mut out = Vec::new();
    let successors = |v: usize| -> Vec<usize> { cfg.succs[v].iter().copied().filter(|s| nodes.contains(s)).collect() };
    for &root in nodes {
        if t.index.contains_key(&root) {
            continue;
        }
        t.visit(root);
        // (node, its successors in `nodes`, next successor to visit)
        let mut calls = vec![(root, successors(root), 0usize)];
        while let Some((v, succs, next)) = calls.last_mut() {
            let v = *v;
            if let Some(&w) = succs.get(*next) {
                *next += 1;
                if !t.index.contains_key(&w) {
                    t.visit(w);
                    calls.push((w, successors(w), 0));
                } else if t.on_stack.contains(&w) {
                    t.lower(v, t.index[&w]);
                }
                continue;
            }
            calls.pop();
            if let Some(&(parent, _, _)) = calls.last() {
                t.lower(parent, t.low[&v]);
            }
            if t.low[&v] == t.index[&v] {
                let mut scc = BTreeSet::new();
                while let Some(w) = t.stack.pop() {
                    t.on_stack.remove(&w);
                    scc.insert(w);
                    if w == v {
                        break;
                    }
                }
                out.push(scc);
            }
        }
    }
    out
}

/// Tarjan's per-node state: visit order, lowest reachable order, and the stack of open nodes.
#[derive(Default)]
struct Tarjan {
    index: HashMap<usize, usize>,
    low: HashMap<usize, usize>,
    on_stack: HashSet<usize>,
    stack: Vec<usize>,
}

impl Tarjan {
    fn visit(&mut self, v: usize) {
        let i = self.index.len();
        self.index.insert(v, i);
        self.low.insert(v, i);
        self.stack.push(v);
        self.on_stack.insert(v);
    }

    fn lower(&mut self, v: usize, to: usize) {
        if let Some(l) = self.low.get_mut(&v) {
            *l = (*l).min(to);
        }
    }
}

/// Sends every edge from `preds[i]` into `entries[i]` through a new header that switches to
/// the entry the edge was bound for; the entries' phis move to the header.
fn single_header(module: &mut Module, f: usize, entries: &[Word], preds: &[Vec<Word>]) {
    let uint = module.type_int(32, false);
    let header = module.alloc_id();
    let selector = module.alloc_id();
    // (edge block, entry number, predecessor) for every redirected edge.
    let mut edges: Vec<(Word, usize, Word)> = Vec::new();
    for (i, (&entry, from)) in entries.iter().zip(preds).enumerate() {
        for &p in from {
            let edge = module.alloc_id();
            edges.push((edge, i, p));
            if let Some(b) = module.functions[f].block_index(p) {
                if let Some(term) = module.functions[f].blocks[b].insts.last_mut() {
                    retarget(term, entry, edge);
                }
            }
        }
    }
    let mut header_insts = Vec::new();
    let mut selector_phi = Vec::new();
    for &(edge, i, _) in &edges {
        selector_phi.push(Operand::Id(module.constant_u32(i as u32)));
        selector_phi.push(Operand::Id(edge));
    }
    header_insts.push(Inst::new(Op::Phi, Some(uint), Some(selector), selector_phi));
    // The entries' phis, each now a phi of the header over the edge blocks.
    for (i, &entry) in entries.iter().enumerate() {
        let Some(b) = module.functions[f].block_index(entry) else { continue };
        let phis: Vec<Inst> = {
            let insts = &mut module.functions[f].blocks[b].insts;
            let n = insts.iter().take_while(|i| i.is(Op::Phi)).count();
            insts.drain(..n).collect()
        };
        for phi in phis {
            let Some(ty) = phi.result_type else { continue };
            let incoming: HashMap<Word, Word> = phi.operands.chunks(2).filter_map(|c| Some((c.get(1)?.id()?, c.first()?.id()?))).collect();
            let mut operands = Vec::new();
            for &(edge, j, p) in &edges {
                let value = match (j == i).then(|| incoming.get(&p).copied()).flatten() {
                    Some(v) => v,
                    None => undef(module, ty),
                };
                operands.push(Operand::Id(value));
                operands.push(Operand::Id(edge));
            }
            header_insts.push(Inst::new(Op::Phi, Some(ty), phi.result_id, operands).from_origin(phi.origin));
        }
    }
    let mut switch = vec![Operand::Id(selector), Operand::Id(entries[0])];
    for (i, &entry) in entries.iter().enumerate().skip(1) {
        switch.push(Operand::Literal(i as u32));
        switch.push(Operand::Id(entry));
    }
    header_insts.push(Inst::new(Op::Switch, None, None, switch));
    let function: &mut Function = &mut module.functions[f];
    for &(edge, _, _) in &edges {
        let mut block = Block::new(edge);
        block.insts.push(Inst::new(Op::Branch, None, None, vec![Operand::Id(header)]));
        function.blocks.push(block);
    }
    let mut block = Block::new(header);
    block.insts = header_insts;
    function.blocks.push(block);
}

/// Replaces target `from` of branch, conditional branch or switch `term` with `to`.
fn retarget(term: &mut Inst, from: Word, to: Word) {
    let skip = match term.op() {
        Some(Op::Branch) => 0,
        Some(Op::BranchConditional | Op::Switch) => 1,
        _ => return,
    };
    for o in term.operands.iter_mut().skip(skip) {
        if let Operand::Id(id) = o {
            if *id == from {
                *id = to;
            }
        }
    }
}

/// An `OpUndef` of `ty`.
fn undef(module: &mut Module, ty: Word) -> Word {
    module.intern(Op::Undef, Some(ty), vec![])
}
