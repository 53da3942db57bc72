//! `SinkPrivateStores`: stores to a private variable that a loop writes in every iteration and
//! never reads move to a new block on the loop's exit edge, where they run once, in their
//! order, with the last iteration's values.
//!
//! OpenCL producers keep arrays whose address an opaque call takes in `Function` variables:
//! Intel's block GEMMs keep the accumulators in registers across the K loop (phis) and store
//! each DPAS result into the array that the 2D block writes after the loop read, in every
//! iteration. Each such store is a use of the DPAS result as a vector, which
//! `lower-dpas-to-cooperative-matrix` reads back from the matrix units, in every iteration;
//! sunk to the exit, the results are read back once.
//!
//! Rewrite, per natural loop whose only exit edge leaves from its latch (the one block that
//! branches back to the header): for each variable that only loads, stores, copies and lifetime
//! markers reach (`analysis::private_pointers`), that the loop does not load, copy or mark, and whose
//! every store in the loop is non-volatile, through a pointer of constant indices (the same
//! location in every iteration) and in a block that dominates the latch (so runs in every
//! iteration), those stores move to a block between the latch and the exit, in the order
//! the iteration runs them (blocks by dominance, then within each). Memory then holds at the
//! exit what the last iteration left: every such store ran in it, after those of earlier
//! iterations; their pointers and values dominate the latch, so they are defined on the exit
//! edge. Phis of the exit block name the new block in place of the latch.
//!
//! Applies to kernels (OpenCL modules, whose control flow is unstructured until
//! `structurize-control-flow`), after `forward-private-loads`; preconditions: none.

use crate::analysis::private_pointers::{index_constants, PrivatePointers};
use crate::error::Result;
use crate::ir::cfg::Cfg;
use crate::ir::{Block, Function, Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{Capability, MemoryAccess, Op, Word};
use std::collections::HashSet;

pub struct SinkPrivateStores;

impl Pass for SinkPrivateStores {
    fn name(&self) -> &'static str {
        "sink-private-stores"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !module.has_capability(Capability::Kernel) {
            return Ok(outcome);
        }
        let constants = index_constants(module);
        for f in 0..module.functions.len() {
            // One loop at a time, the graph recomputed after each; a loop whose stores moved
            // has none left to move, so this ends within one round per loop.
            let mut done: HashSet<Word> = HashSet::new();
            while let Some(sink) = find(&module.functions[f], &constants, &done) {
                done.insert(sink.header);
                let exit_block = module.alloc_id();
                outcome.count_many(Op::Store as u32, sink.stores.len());
                apply(&mut module.functions[f], &sink, exit_block);
            }
        }
        Ok(outcome)
    }
}

/// A loop's stores to move: (block index, instruction index) in iteration order. Block indices
/// are the function's, which are also the control-flow graph's.
struct Sink {
    header: Word,
    latch: usize,
    exit: usize,
    stores: Vec<(usize, usize)>,
}

/// The first loop of `function` (by header, not in `done`) with stores to move.
fn find(function: &Function, constants: &HashSet<Word>, done: &HashSet<Word>) -> Option<Sink> {
    let cfg = Cfg::new(function);
    let n = cfg.labels.len();
    let pointers = PrivatePointers::new(function, constants);
    for header in 0..n {
        if cfg.idom[header].is_none() || done.contains(&cfg.labels[header]) {
            continue;
        }
        let latches: Vec<usize> = cfg.preds[header].iter().copied().filter(|&b| cfg.idom[b].is_some() && cfg.dominates(header, b)).collect();
        let [latch] = latches[..] else { continue };
        // The loop: the header and every block that reaches the latch without passing it.
        let mut body: HashSet<usize> = HashSet::from([header, latch]);
        let mut stack = vec![latch];
        while let Some(b) = stack.pop() {
            if b == header {
                continue;
            }
            for &p in &cfg.preds[b] {
                if cfg.idom[p].is_some() && body.insert(p) {
                    stack.push(p);
                }
            }
        }
        let exits: Vec<(usize, usize)> = body.iter().flat_map(|&b| cfg.succs[b].iter().filter(|s| !body.contains(s)).map(move |&s| (b, s))).collect();
        let [(from, exit)] = exits[..] else { continue };
        if from != latch {
            continue;
        }
        // The blocks every iteration runs, in order: the latch's dominators inside the loop.
        let mut chain = vec![latch];
        while let Some(&b) = chain.last() {
            match cfg.idom[b] {
                Some(d) if b != header && body.contains(&d) => chain.push(d),
                _ => break,
            }
        }
        chain.reverse();
        let every_iteration: HashSet<usize> = chain.iter().copied().collect();
        // Variables the loop reads, marks, or writes where not every iteration does.
        let mut kept: HashSet<Word> = HashSet::new();
        let mut stored: HashSet<Word> = HashSet::new();
        for &b in &body {
            for inst in &function.blocks[b].insts {
                // A copy reads its source and writes its target: both stay.
                if inst.is(Op::CopyMemory) || inst.is(Op::CopyMemorySized) {
                    kept.extend(inst.operands.iter().take(2).filter_map(|o| o.id().and_then(|p| pointers.root.get(&p))));
                    continue;
                }
                let Some(pointer) = inst.operands.first().and_then(Operand::id) else { continue };
                let Some(root) = pointers.root.get(&pointer).copied() else { continue };
                // Stores through a known path write the same location in every iteration.
                let invariant = pointers.path.contains_key(&pointer);
                match inst.op() {
                    Some(Op::Store) if invariant && !volatile(inst) && every_iteration.contains(&b) && pointers.tracked_root(root).is_some() => {
                        stored.insert(root);
                    }
                    Some(Op::Store | Op::Load | Op::LifetimeStart | Op::LifetimeStop) => {
                        kept.insert(root);
                    }
                    // Derivations (an escaped variable's other uses are `escaped`).
                    _ => {}
                }
            }
        }
        let sunk: HashSet<Word> = stored.difference(&kept).copied().collect();
        if sunk.is_empty() {
            continue;
        }
        let mut stores = Vec::new();
        for &b in &chain {
            for (i, inst) in function.blocks[b].insts.iter().enumerate() {
                let root = inst.operands.first().and_then(Operand::id).and_then(|p| pointers.root.get(&p));
                if inst.is(Op::Store) && root.is_some_and(|r| sunk.contains(r)) {
                    stores.push((b, i));
                }
            }
        }
        return Some(Sink { header: cfg.labels[header], latch, exit, stores });
    }
    None
}

fn volatile(inst: &Inst) -> bool {
    inst.word_opt(2).is_some_and(|m| MemoryAccess::from_bits_truncate(m).contains(MemoryAccess::VOLATILE))
}

/// Moves `sink`'s stores into a new block `id` on the edge from its latch to its exit.
fn apply(function: &mut Function, sink: &Sink, id: Word) {
    let (latch, exit) = (function.blocks[sink.latch].id(), function.blocks[sink.exit].id());
    let mut block = Block::new(id);
    block.label.origin = function.blocks[sink.latch].label.origin;
    // Taken out last to first, so that earlier indices stay valid; put back in order.
    let mut moved: Vec<Inst> = sink.stores.iter().rev().map(|&(b, i)| function.blocks[b].insts.remove(i)).collect();
    moved.reverse();
    let origin = moved.last().map(|i| i.origin).unwrap_or_default();
    block.insts = moved;
    block.insts.push(Inst::new(Op::Branch, None, None, vec![Operand::Id(exit)]).from_origin(origin));
    if let Some(term) = function.blocks[sink.latch].insts.last_mut() {
        for o in term.operands.iter_mut() {
            if *o == Operand::Id(exit) {
                *o = Operand::Id(id);
            }
        }
    }
    for phi in function.blocks[sink.exit].insts.iter_mut().filter(|i| i.is(Op::Phi)) {
        for pair in phi.operands.chunks_mut(2) {
            if pair.get(1) == Some(&Operand::Id(latch)) {
                pair[1] = Operand::Id(id);
            }
        }
    }
    function.blocks.insert(sink.latch + 1, block);
}
