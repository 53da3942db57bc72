//! The control-flow graph of a function and its dominator tree.
//!
//! Successors come from each block's terminator (`OpBranch`, `OpBranchConditional`,
//! `OpSwitch`); dominators by Cooper, Harvey and Kennedy's iterative algorithm over the
//! reverse post-order of the blocks reachable from the entry.

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
                        new = Some(match new {
                            None => p,
                            Some(mut x) => {
                                let mut y = p;
                                while x != y {
                                    while order[x] > order[y] {
                                        x = idom[x].unwrap_or(0);
                                    }
                                    while order[y] > order[x] {
                                        y = idom[y].unwrap_or(0);
                                    }
                                }
                                x
                            }
                        });
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
