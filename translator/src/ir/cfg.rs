//! The control-flow graph of a function and its dominator tree.
//!
//! Successors come from each block's terminator (`OpBranch`, `OpBranchConditional`,
//! `OpSwitch`); dominators by Cooper, Harvey and Kennedy's iterative algorithm over the
//! reverse post-order of the blocks reachable from the entry, post-dominators by the same
//! algorithm on the reversed graph.

use super::{Function, Operand};
use spirv::{Op, Word};
use std::collections::HashMap;

#[derive(Debug, Clone)]
pub struct Cfg {
    /// Block labels in function order.
    pub labels: Vec<Word>,
    pub succs: Vec<Vec<usize>>,
    pub preds: Vec<Vec<usize>>,
    /// Reachable blocks in reverse post-order (the entry first).
    pub rpo: Vec<usize>,
    /// Immediate dominator of each reachable block (the entry's is itself); `None` if unreachable.
    pub idom: Vec<Option<usize>>,
}

impl Cfg {
    pub fn new(function: &Function) -> Cfg {
        let labels: Vec<Word> = function.blocks.iter().map(|b| b.id()).collect();
        let index: HashMap<Word, usize> = labels.iter().enumerate().map(|(i, l)| (*l, i)).collect();
        let n = labels.len();
        let mut succs = vec![Vec::new(); n];
        for (i, block) in function.blocks.iter().enumerate() {
            let Some(term) = block.terminator() else { continue };
            let targets: Vec<Word> = match term.op() {
                Some(Op::Branch) => term.operands.iter().take(1).filter_map(Operand::id).collect(),
                Some(Op::BranchConditional) => term.operands.iter().skip(1).take(2).filter_map(Operand::id).collect(),
                // Selector, default, then (literal, label) pairs: the labels are the ids after the selector.
                Some(Op::Switch) => term.operands.iter().skip(1).filter_map(Operand::id).collect(),
                _ => vec![],
            };
            for t in targets {
                if let Some(&j) = index.get(&t) {
                    if !succs[i].contains(&j) {
                        succs[i].push(j);
                    }
                }
            }
        }
        let mut preds = vec![Vec::new(); n];
        for (i, s) in succs.iter().enumerate() {
            for &j in s {
                preds[j].push(i);
            }
        }
        // Post-order by an explicit stack.
        let mut post = Vec::with_capacity(n);
        if n > 0 {
            let mut seen = vec![false; n];
            let mut stack = vec![(0usize, 0usize)];
            seen[0] = true;
            while let Some((b, k)) = stack.pop() {
                if k < succs[b].len() {
                    stack.push((b, k + 1));
                    let s = succs[b][k];
                    if !seen[s] {
                        seen[s] = true;
                        stack.push((s, 0));
                    }
                } else {
                    post.push(b);
                }
            }
        }
        let rpo: Vec<usize> = post.into_iter().rev().collect();
        let mut order = vec![usize::MAX; n];
        for (k, b) in rpo.iter().enumerate() {
            order[*b] = k;
        }
        let mut idom: Vec<Option<usize>> = vec![None; n];
        if n > 0 {
            idom[0] = Some(0);
            let mut changed = true;
            while changed {
                changed = false;
                for &b in rpo.iter().skip(1) {
                    let mut new: Option<usize> = None;
                    for &p in &preds[b] {
                        if idom[p].is_none() {
                            continue;
                        }
                        new = Some(new.map_or(p, |x| intersect(&idom, &order, x, p, 0)));
                    }
                    if new.is_some() && idom[b] != new {
                        idom[b] = new;
                        changed = true;
                    }
                }
            }
        }
        Cfg { labels, succs, preds, rpo, idom }
    }

    /// The immediate post-dominator of each block: the first block every path from it to the
    /// function's end passes through. `None` where that is the end itself (a block that returns,
    /// or whose paths leave by different returns) or where no path reaches an end (a block only
    /// an endless loop follows).
    pub fn post_dominators(&self) -> Vec<Option<usize>> {
        let n = self.labels.len();
        // The reversed graph, rooted at a virtual end `n` whose predecessors (in the original
        // graph) are the blocks without successors.
        let exit = n;
        let rsuccs = |b: usize| -> Vec<usize> {
            if b == exit {
                (0..n).filter(|&i| self.succs[i].is_empty()).collect()
            } else {
                self.preds[b].clone()
            }
        };
        let rpreds = |b: usize| -> Vec<usize> {
            if self.succs[b].is_empty() {
                vec![exit]
            } else {
                self.succs[b].clone()
            }
        };
        let mut post = Vec::with_capacity(n + 1);
        let mut seen = vec![false; n + 1];
        let mut stack = vec![(exit, rsuccs(exit), 0usize)];
        seen[exit] = true;
        while let Some((b, next, k)) = stack.pop() {
            if let Some(&s) = next.get(k) {
                stack.push((b, next, k + 1));
                if !seen[s] {
                    seen[s] = true;
                    stack.push((s, rsuccs(s), 0));
                }
            } else {
                post.push(b);
            }
        }
        let order: Vec<usize> = {
            let mut order = vec![usize::MAX; n + 1];
            for (k, b) in post.iter().rev().enumerate() {
                order[*b] = k;
            }
            order
        };
        let mut ipdom: Vec<Option<usize>> = vec![None; n + 1];
        ipdom[exit] = Some(exit);
        let mut changed = true;
        while changed {
            changed = false;
            for &b in post.iter().rev().skip(1) {
                let mut new: Option<usize> = None;
                for p in rpreds(b) {
                    if ipdom[p].is_none() {
                        continue;
                    }
                    new = Some(new.map_or(p, |x| intersect(&ipdom, &order, x, p, exit)));
                }
                if new.is_some() && ipdom[b] != new {
                    ipdom[b] = new;
                    changed = true;
                }
            }
        }
        ipdom.truncate(n);
        ipdom.into_iter().map(|d| d.filter(|&d| d != exit)).collect()
    }

    /// Whether block `a` dominates block `b` (both by index).
    pub fn dominates(&self, a: usize, mut b: usize) -> bool {
        if self.idom.get(b).copied().flatten().is_none() {
            return false;
        }
        loop {
            if a == b {
                return true;
            }
            match self.idom[b] {
                Some(d) if d != b => b = d,
                _ => return false,
            }
        }
    }
}

/// The nearest common dominator of `a` and `b` in the (post-)dominator tree `idom` under
/// construction, by Cooper, Harvey and Kennedy's walk up the reverse post-order `order`
/// (`root` stands in where a block has no dominator yet).
fn intersect(idom: &[Option<usize>], order: &[usize], mut a: usize, mut b: usize, root: usize) -> usize {
    while a != b {
        while order[a] > order[b] {
            a = idom[a].unwrap_or(root);
        }
        while order[b] > order[a] {
            b = idom[b].unwrap_or(root);
        }
    }
    a
}

/// Moves the body of loop header block `block` of `function` into a block of its own, so that
/// code expanded from it can branch: the header keeps its `OpPhi`s (and debug lines before
/// them) and its `OpLoopMerge`, and branches to a new block `B` that gets the rest and the
/// header's terminator. Where the header was its own continue target (a single-block loop), `B`
/// becomes the continue target. `OpPhi`s of the terminator's successors that named the header
/// name `B`.
///
/// `B` is not a header, so its terminator must be valid without a merge instruction: an
/// `OpBranch`, or an `OpBranchConditional` one of whose targets is the loop's merge block or
/// continue target (a break or a continue). Other headers (an `OpSwitch`, or a conditional
/// branch between two blocks inside the loop) are left alone unless `always`, and `None` is
/// returned; otherwise `B` gets the label `id` (allocated by the caller) and its index is
/// returned.
pub fn separate_loop_header(function: &mut Function, block: usize, id: Word, always: bool) -> Option<usize> {
    let insts = &function.blocks.get(block)?.insts;
    let n = insts.len();
    if n < 2 || !insts[n - 2].is(Op::LoopMerge) {
        return None;
    }
    let header = function.blocks[block].id();
    let (merge, cont) = (insts[n - 2].operands.first().and_then(Operand::id)?, insts[n - 2].operands.get(1).and_then(Operand::id)?);
    let term = &insts[n - 1];
    let targets: Vec<Word> = match term.op() {
        Some(Op::Branch) => term.operands.first().and_then(Operand::id).into_iter().collect(),
        Some(Op::BranchConditional) => term.operands.iter().skip(1).take(2).filter_map(Operand::id).collect(),
        Some(Op::Switch) => term.operands.iter().skip(1).filter_map(Operand::id).collect(),
        _ => return None,
    };
    let exits = term.is(Op::Branch) || (term.is(Op::BranchConditional) && targets.iter().any(|l| *l == merge || *l == cont));
    if !exits && !always {
        return None;
    }
    // The header's own part: its phis and any debug lines among them.
    let keep = insts.iter().take_while(|i| matches!(i.op(), Some(Op::Phi | Op::Line | Op::NoLine))).count();
    let blocks = &mut function.blocks;
    let mut rest = blocks[block].insts.split_off(keep);
    let mut loop_merge = rest.remove(rest.len() - 2);
    if cont == header {
        loop_merge.operands[1] = Operand::Id(id);
    }
    let mut new = super::Block::new(id);
    new.label.origin = blocks[block].label.origin;
    new.insts = rest;
    let origin = loop_merge.origin;
    blocks[block].insts.push(loop_merge);
    let mut branch = super::Inst::new(Op::Branch, None, None, vec![Operand::Id(id)]);
    branch.origin = origin;
    blocks[block].insts.push(branch);
    blocks.insert(block + 1, new);
    for b in blocks.iter_mut().filter(|b| targets.contains(&b.id())) {
        for phi in b.insts.iter_mut().filter(|i| i.is(Op::Phi)) {
            for pair in phi.operands.chunks_mut(2) {
                if pair.get(1) == Some(&Operand::Id(header)) {
                    pair[1] = Operand::Id(id);
                }
            }
        }
    }
    Some(block + 1)
}
