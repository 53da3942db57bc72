//! `StructurizeControlFlow`: unstructured control flow (what OpenCL producers emit) -> Vulkan's
//! structured control flow.
//!
//! Rewrite, per function of a lowered kernel module:
//! 1. Unreachable blocks go; existing merge instructions go (producers write `OpLoopMerge` for
//!    loops with hints but do not structure the rest).
//! 2. `OpPhi`s become `Function` variables: each predecessor stores the incoming value, the
//!    block loads it. `OpSwitch` becomes a chain of conditional branches.
//! 3. Loops (natural loops; a retreating edge to a block that does not dominate its source is
//!    irreducible control flow, an error naming the function and both blocks, which
//!    `reduce-irreducible-loops` leaves none of), outermost first:
//!    the header keeps only `OpLoopMerge` and a branch to its old contents; every back edge goes
//!    to a new continue block that branches to the header; every exit edge goes to one new merge
//!    block (through an edge block storing which exit was taken, when there are several), which
//!    dispatches to the original targets.
//! 4. Each region (the function body, and each loop body, with inner loops as single nodes from
//!    header to merge) is linearized in a topological order that keeps every node's dominator
//!    subtree together: the entry runs; every other node runs under a guard (`if (flag) node`),
//!    and a branch inside the region sets the target's flag instead of jumping. A guard that
//!    fails skips the node's whole dominator subtree (nothing there can run without it), so
//!    `if`s nested in the original stay nested selections. A node whose only predecessor is the
//!    previous node, reached by an unconditional branch, runs unguarded right after it; so does
//!    a node every path from its immediate dominator reaches before it leaves the region (where
//!    the two ways of an `if` meet again), which runs whenever its dominator does. Branches out
//!    of the region (to the loop's continue or merge block) and returns stay branches, under
//!    their own selection when conditional. Each thread therefore runs exactly the blocks it ran
//!    before, in the same order, and all threads of a subgroup meet again at every guard:
//!    subgroup operations see the same threads as in the original, and a divergence analysis
//!    sees the threads meet again where they did.
//! 5. Values whose definition no longer dominates a use go through a `Function` variable; blocks
//!    are put in reverse post-order.
//!
//! Preconditions: `lower-kernel-interface` and `lower-kernel-pointers` ran (no pointers into
//! local or private memory remain as values; buffer pointers may be stored in variables).
//! Drivers turn the variables back into registers.

use crate::analysis::Types;
use crate::error::{Error, Result, Site};
use crate::ir::cfg::Cfg;
use crate::ir::{Block, Function, Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use rspirv::grammar::OperandKind;
use spirv::{Decoration, Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

pub struct StructurizeControlFlow;

impl Pass for StructurizeControlFlow {
    fn name(&self) -> &'static str {
        "structurize-control-flow"
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
            if module.functions[f].blocks.is_empty() {
                continue;
            }
            let mut s = Structurizer { module, f, vars: Vec::new() };
            s.run()?;
            outcome.count(Op::Function as u32);
        }
        Ok(outcome)
    }
}

struct Structurizer<'m> {
    module: &'m mut Module,
    f: usize,
    /// Function variables to declare in the entry block.
    vars: Vec<Inst>,
}

/// A normalized loop.
#[derive(Clone, Debug)]
struct Loop {
    header: Word,
    cont: Word,
    merge: Word,
    /// Blocks of the loop construct, without header, continue and merge.
    body: HashSet<Word>,
}

fn targets(term: &Inst) -> Vec<Word> {
    match term.op() {
        Some(Op::Branch) => term.operands.iter().take(1).filter_map(Operand::id).collect(),
        Some(Op::BranchConditional) => term.operands.iter().skip(1).take(2).filter_map(Operand::id).collect(),
        Some(Op::Switch) => term.operands.iter().skip(1).filter_map(Operand::id).collect(),
        _ => vec![],
    }
}

impl Structurizer<'_> {
    fn func(&mut self) -> &mut Function {
        &mut self.module.functions[self.f]
    }

    fn block_mut(&mut self, label: Word) -> &mut Block {
        let f = self.f;
        let i = self.module.functions[f].block_index(label).unwrap_or(0);
        &mut self.module.functions[f].blocks[i]
    }

    fn block(&self, label: Word) -> Option<&Block> {
        let f = &self.module.functions[self.f];
        f.block_index(label).map(|i| &f.blocks[i])
    }

    fn succs(&self, label: Word) -> Vec<Word> {
        let mut v: Vec<Word> = self.block(label).and_then(Block::terminator).map(targets).unwrap_or_default();
        v.dedup();
        let mut seen = HashSet::new();
        v.retain(|x| seen.insert(*x));
        v
    }

    fn new_block(&mut self, insts: Vec<Inst>) -> Word {
        let label = self.module.alloc_id();
        let mut b = Block::new(label);
        b.insts = insts;
        self.func().blocks.push(b);
        label
    }

    fn retarget(&mut self, block: Word, from: Word, to: Word) {
        let b = self.block_mut(block);
        if let Some(t) = b.insts.last_mut() {
            let n = match t.op() {
                Some(Op::Branch) => 0,
                Some(Op::BranchConditional | Op::Switch) => 1,
                _ => return,
            };
            for (k, o) in t.operands.iter_mut().enumerate() {
                if k >= n && *o == Operand::Id(from) && (t.opcode != Op::Switch as u32 || k == 1 || (k >= 2 && k % 2 == 1)) {
                    *o = Operand::Id(to);
                }
            }
        }
    }

    fn var(&mut self, ty: Word) -> Word {
        let ptr = self.module.type_pointer(StorageClass::Function, ty);
        let id = self.module.alloc_id();
        self.vars.push(Inst::new(Op::Variable, Some(ptr), Some(id), vec![Operand::storage_class(StorageClass::Function)]));
        // Variables holding buffer pointers must say whether they alias.
        let types = self.module.globals().iter().find(|g| g.result_id == Some(ty)).filter(|g| g.is(Op::TypePointer)).and_then(|g| g.word_opt(0));
        if types == Some(StorageClass::PhysicalStorageBuffer as u32) {
            self.module.decorate(id, Decoration::AliasedPointer, &[]);
        }
        id
    }

    fn run(&mut self) -> Result<()> {
        self.remove_unreachable();
        self.strip_merges();
        self.demote_phis()?;
        self.lower_switches()?;
        let loops = self.normalize_loops()?;
        self.linearize(&loops)?;
        self.declare_vars();
        self.repair_dominance()?;
        self.order_blocks();
        Ok(())
    }

    fn remove_unreachable(&mut self) {
        let cfg = Cfg::new(&self.module.functions[self.f]);
        let reachable: HashSet<usize> = cfg.rpo.iter().copied().collect();
        let f = self.func();
        let mut i = 0;
        f.blocks.retain(|_| {
            i += 1;
            reachable.contains(&(i - 1))
        });
        let labels: HashSet<Word> = f.blocks.iter().map(Block::id).collect();
        // Phi operands from removed predecessors go.
        for b in &mut f.blocks {
            for phi in b.insts.iter_mut().filter(|i| i.is(Op::Phi)) {
                let pairs: Vec<Operand> = phi.operands.chunks(2).filter(|p| p.get(1).and_then(Operand::id).is_some_and(|l| labels.contains(&l))).flat_map(|p| p.to_vec()).collect();
                phi.operands = pairs;
            }
        }
    }

    fn strip_merges(&mut self) {
        for b in &mut self.func().blocks {
            b.insts.retain(|i| !matches!(i.op(), Some(Op::SelectionMerge | Op::LoopMerge)));
        }
    }

    fn demote_phis(&mut self) -> Result<()> {
        let labels: Vec<Word> = self.func().blocks.iter().map(Block::id).collect();
        for label in labels {
            let phis: Vec<Inst> =
                self.block(label).map(|b| b.insts.iter().take_while(|i| i.is(Op::Phi) || i.is(Op::Line) || i.is(Op::NoLine)).filter(|i| i.is(Op::Phi)).cloned().collect()).unwrap_or_default();
            if phis.is_empty() {
                continue;
            }
            let mut loads = Vec::new();
            for phi in &phis {
                let ty = phi.ty()?;
                let var = self.var(ty);
                for pair in phi.operands.chunks(2) {
                    let (Some(v), Some(pred)) = (pair.first().and_then(Operand::id), pair.get(1).and_then(Operand::id)) else { continue };
                    let pb = self.block_mut(pred);
                    let at = pb.insts.len().saturating_sub(1);
                    pb.insts.insert(at, Inst::new(Op::Store, None, None, vec![Operand::Id(var), Operand::Id(v)]).from_origin(phi.origin));
                }
                loads.push(Inst::new(Op::Load, Some(ty), phi.result_id, vec![Operand::Id(var)]).from_origin(phi.origin));
            }
            let b = self.block_mut(label);
            b.insts.retain(|i| !i.is(Op::Phi));
            for (k, l) in loads.into_iter().enumerate() {
                b.insts.insert(k, l);
            }
        }
        Ok(())
    }

    fn lower_switches(&mut self) -> Result<()> {
        let labels: Vec<Word> = self.func().blocks.iter().map(Block::id).collect();
        let types = Types::new(self.module);
        let boolean = self.module.type_bool();
        for label in labels {
            let Some(term) = self.block(label).and_then(Block::terminator).filter(|t| t.is(Op::Switch)).cloned() else { continue };
            let selector = term.id(0)?;
            let default = term.id(1)?;
            let sel_ty = types.type_of(selector).unwrap_or(0);
            let wide = types.int(sel_ty).is_some_and(|(w, _)| w > 32);
            let step = if wide { 3 } else { 2 };
            let cases: Vec<(Vec<Word>, Word)> = term.operands[2..].chunks(step).filter_map(|c| Some((c[..step - 1].iter().filter_map(Operand::word).collect(), c.last()?.id()?))).collect();
            self.block_mut(label).insts.pop();
            let mut current = label;
            if cases.is_empty() {
                self.block_mut(current).insts.push(Inst::new(Op::Branch, None, None, vec![Operand::Id(default)]).from_origin(term.origin));
                continue;
            }
            for (k, (lit, target)) in cases.iter().enumerate() {
                let c = self.module.intern(Op::Constant, Some(sel_ty), lit.iter().map(|w| Operand::Literal(*w)).collect());
                let cond = self.module.alloc_id();
                let next = if k + 1 == cases.len() { default } else { self.module.alloc_id() };
                let b = self.block_mut(current);
                b.insts.push(Inst::new(Op::IEqual, Some(boolean), Some(cond), vec![Operand::Id(selector), Operand::Id(c)]).from_origin(term.origin));
                b.insts.push(Inst::new(Op::BranchConditional, None, None, vec![Operand::Id(cond), Operand::Id(*target), Operand::Id(next)]).from_origin(term.origin));
                if k + 1 < cases.len() {
                    let mut nb = Block::new(next);
                    nb.label.origin = term.origin;
                    self.func().blocks.push(nb);
                    current = next;
                }
            }
        }
        Ok(())
    }

    fn function_name(&self) -> String {
        let id = self.module.functions[self.f].id();
        self.module.name_of(id).map_or_else(|| format!("%{id}"), |n| format!("%{id} ({n})"))
    }

    /// Natural loops of the current CFG: header label -> body labels (header included).
    fn natural_loops(&self) -> Result<Vec<(Word, HashSet<Word>)>> {
        let func = &self.module.functions[self.f];
        let cfg = Cfg::new(func);
        // Back edges by DFS: an edge to a block on the stack.
        let n = cfg.labels.len();
        let mut state = vec![0u8; n];
        let mut back: Vec<(usize, usize)> = Vec::new();
        let mut stack = vec![(0usize, 0usize)];
        state[0] = 1;
        while let Some((b, k)) = stack.pop() {
            if k < cfg.succs[b].len() {
                stack.push((b, k + 1));
                let s = cfg.succs[b][k];
                match state[s] {
                    0 => {
                        state[s] = 1;
                        stack.push((s, 0));
                    }
                    1 => back.push((b, s)),
                    _ => {}
                }
            } else {
                state[b] = 2;
            }
        }
        let mut loops: HashMap<usize, HashSet<usize>> = HashMap::new();
        for (u, h) in back {
            if !cfg.dominates(h, u) {
                return Err(Error::Invalid {
                    site: Box::new(Site { opcode: "OpBranch".into(), function: Some(self.function_name()), ..Site::default() }),
                    message: format!("irreducible control flow: block %{} branches back to %{}, which does not dominate it (a loop with two entries)", cfg.labels[u], cfg.labels[h]),
                });
            }
            let body = loops.entry(h).or_insert_with(|| HashSet::from([h]));
            let mut work = vec![u];
            while let Some(x) = work.pop() {
                if body.insert(x) {
                    work.extend(cfg.preds[x].iter().copied());
                }
            }
        }
        let mut out: Vec<(Word, HashSet<Word>)> = loops.into_iter().map(|(h, body)| (cfg.labels[h], body.into_iter().map(|b| cfg.labels[b]).collect())).collect();
        out.sort_by_key(|(h, _)| *h);
        Ok(out)
    }

    fn normalize_loops(&mut self) -> Result<Vec<Loop>> {
        let mut done: Vec<Loop> = Vec::new();
        let mut handled: HashSet<Word> = HashSet::new();
        loop {
            // The largest loop not yet normalized (an outer loop before its inner ones).
            let loops = self.natural_loops()?;
            let Some((header, body)) = loops.into_iter().filter(|(h, _)| !handled.contains(h)).max_by_key(|(h, b)| (b.len(), std::cmp::Reverse(*h))) else { break };
            handled.insert(header);
            let before: HashSet<Word> = self.module.functions[self.f].blocks.iter().map(Block::id).collect();
            let l = self.normalize(header, body)?;
            // Blocks made for this loop belong to every loop around it.
            let created: Vec<Word> = self.module.functions[self.f].blocks.iter().map(Block::id).filter(|b| !before.contains(b)).collect();
            for outer in done.iter_mut().filter(|o| o.body.contains(&l.header)) {
                outer.body.extend(created.iter().copied());
            }
            done.push(l);
        }
        Ok(done)
    }

    fn normalize(&mut self, header: Word, mut body: HashSet<Word>) -> Result<Loop> {
        let origin = self.block(header).map(|b| b.label.origin).unwrap_or_default();
        // The header's contents move to a new block; the header keeps the loop merge.
        let contents = std::mem::take(&mut self.block_mut(header).insts);
        let inner = self.new_block(contents);
        body.insert(inner);
        // Back edges go to the continue block.
        let cont = self.new_block(vec![Inst::new(Op::Branch, None, None, vec![Operand::Id(header)]).from_origin(origin)]);
        let mut members: Vec<Word> = body.iter().copied().filter(|b| *b != header).collect();
        members.sort_unstable();
        for &m in &members {
            if self.succs(m).contains(&header) {
                self.retarget(m, header, cont);
            }
        }
        // Exit edges.
        let mut exits: Vec<(Word, Word)> = Vec::new();
        for &m in &members {
            for s in self.succs(m) {
                if !body.contains(&s) && s != cont {
                    exits.push((m, s));
                }
            }
        }
        let mut distinct: Vec<Word> = Vec::new();
        for (_, t) in &exits {
            if !distinct.contains(t) {
                distinct.push(*t);
            }
        }
        let merge = self.module.alloc_id();
        match distinct.len() {
            0 => {
                let mut b = Block::new(merge);
                b.insts.push(Inst::new(Op::Unreachable, None, None, vec![]).from_origin(origin));
                self.func().blocks.push(b);
            }
            1 => {
                for (m, t) in &exits {
                    self.retarget(*m, *t, merge);
                }
                let mut b = Block::new(merge);
                b.insts.push(Inst::new(Op::Branch, None, None, vec![Operand::Id(distinct[0])]).from_origin(origin));
                self.func().blocks.push(b);
            }
            _ => {
                let uint = self.module.type_int(32, false);
                let boolean = self.module.type_bool();
                let sel = self.var(uint);
                for (m, t) in &exits {
                    let k = distinct.iter().position(|d| d == t).unwrap_or(0) as u32;
                    let kc = self.module.constant_u32(k);
                    let edge = self.new_block(vec![
                        Inst::new(Op::Store, None, None, vec![Operand::Id(sel), Operand::Id(kc)]).from_origin(origin),
                        Inst::new(Op::Branch, None, None, vec![Operand::Id(merge)]).from_origin(origin),
                    ]);
                    self.retarget(*m, *t, edge);
                    body.insert(edge);
                }
                // The merge loads the selector and dispatches through a chain.
                let s = self.module.alloc_id();
                let mut current = Block::new(merge);
                current.insts.push(Inst::new(Op::Load, Some(uint), Some(s), vec![Operand::Id(sel)]).from_origin(origin));
                for (k, t) in distinct.iter().enumerate().take(distinct.len() - 1) {
                    let kc = self.module.constant_u32(k as u32);
                    let cond = self.module.alloc_id();
                    let last = k + 2 == distinct.len();
                    let next = if last { distinct[k + 1] } else { self.module.alloc_id() };
                    current.insts.push(Inst::new(Op::IEqual, Some(boolean), Some(cond), vec![Operand::Id(s), Operand::Id(kc)]).from_origin(origin));
                    current.insts.push(Inst::new(Op::BranchConditional, None, None, vec![Operand::Id(cond), Operand::Id(*t), Operand::Id(next)]).from_origin(origin));
                    self.func().blocks.push(current);
                    current = Block::new(next);
                    if last {
                        break;
                    }
                }
            }
        }
        let hb = self.block_mut(header);
        hb.insts.push(Inst::new(Op::LoopMerge, None, None, vec![Operand::Id(merge), Operand::Id(cont), Operand::Enum(OperandKind::LoopControl, 0)]).from_origin(origin));
        hb.insts.push(Inst::new(Op::Branch, None, None, vec![Operand::Id(inner)]).from_origin(origin));
        body.remove(&header);
        Ok(Loop { header, cont, merge, body })
    }

    /// Guarded linearization of every region.
    fn linearize(&mut self, loops: &[Loop]) -> Result<()> {
        // Innermost loop of each block: the smallest loop whose body holds it.
        let mut owner: HashMap<Word, usize> = HashMap::new();
        for (i, l) in loops.iter().enumerate() {
            for b in &l.body {
                let replace = owner.get(b).is_none_or(|&j| loops[j].body.len() > l.body.len());
                if replace {
                    owner.insert(*b, i);
                }
            }
        }
        // A loop's parent: the smallest other loop whose body holds its header.
        let parent = |i: usize| -> Option<usize> { loops.iter().enumerate().filter(|(j, l)| *j != i && l.body.contains(&loops[i].header)).min_by_key(|(_, l)| l.body.len()).map(|(j, _)| j) };
        let entry = self.module.functions[self.f].blocks[0].id();
        // Regions: None = the function, Some(i) = loop i.
        let mut regions: Vec<Option<usize>> = vec![None];
        regions.extend((0..loops.len()).map(Some));
        for region in regions {
            // Nodes: blocks owned by this region, plus child loops as (header -> merge).
            let (start, cont, merge) = match region {
                None => (entry, None, None),
                Some(i) => {
                    let h = loops[i].header;
                    let inner = self.succs(h).first().copied().unwrap_or(h);
                    (inner, Some(loops[i].cont), Some(loops[i].merge))
                }
            };
            let children: Vec<usize> = (0..loops.len()).filter(|&j| parent(j) == region).collect();
            let child_merges: HashMap<Word, Word> = children.iter().map(|&j| (loops[j].header, loops[j].merge)).collect();
            let all_merges: HashSet<Word> = loops.iter().map(|l| l.merge).collect();
            let conts: HashSet<Word> = loops.iter().map(|l| l.cont).collect();
            let in_region = |b: Word| -> bool {
                if child_merges.contains_key(&b) {
                    return true;
                }
                let own = owner.get(&b).copied();
                let child_merge = all_merges.contains(&b) && children.iter().any(|&j| loops[j].merge == b);
                own == region && !conts.contains(&b) && !loops.iter().any(|l| l.header == b) && !child_merge
            };
            // Successors of a node (a child loop's successors are its merge's).
            let node_succs = |s: &Self, n: Word| -> Vec<Word> {
                let tail = child_merges.get(&n).copied().unwrap_or(n);
                s.succs(tail)
            };
            // Topological order by DFS from the start.
            let mut order = Vec::new();
            let mut seen = HashSet::new();
            let mut stack = vec![(start, 0usize)];
            seen.insert(start);
            while let Some((n, k)) = stack.pop() {
                let ss: Vec<Word> = node_succs(self, n).into_iter().filter(|s| in_region(*s)).collect();
                if k < ss.len() {
                    stack.push((n, k + 1));
                    if seen.insert(ss[k]) {
                        stack.push((ss[k], 0));
                    }
                } else {
                    order.push(n);
                }
            }
            order.reverse();
            self.linearize_region(&order, &child_merges, cont, merge, region.is_none())?;
        }
        Ok(())
    }

    fn linearize_region(&mut self, order: &[Word], child_merges: &HashMap<Word, Word>, cont: Option<Word>, merge: Option<Word>, function_region: bool) -> Result<()> {
        let in_region: HashSet<Word> = order.iter().copied().collect();
        let tail = |n: Word| child_merges.get(&n).copied().unwrap_or(n);
        // Region predecessors (by edge) of each node.
        let mut preds: HashMap<Word, Vec<Word>> = HashMap::new();
        for &n in order {
            if let Some(t) = self.block(tail(n)).and_then(Block::terminator) {
                for s in targets(t) {
                    if in_region.contains(&s) {
                        preds.entry(s).or_default().push(n);
                    }
                }
            }
        }
        let (order, idom) = dominator_order(order, &preds);
        let order = order.as_slice();
        // last[j]: the last node of j's dominator subtree, which the order keeps contiguous.
        let mut last: Vec<usize> = (0..order.len()).collect();
        for j in (1..order.len()).rev() {
            last[idom[j]] = last[idom[j]].max(last[j]);
        }
        // Which nodes need a guard: not one chained to the node before it, nor one every path
        // from its immediate dominator reaches before it leaves the region (where the two ways
        // of an `if` meet again), which runs whenever its dominator does.
        let mut guarded = vec![false; order.len()];
        let mut met = vec![false; order.len()];
        for j in 1..order.len() {
            let p = preds.get(&order[j]).cloned().unwrap_or_default();
            let chained = p.len() == 1 && p[0] == order[j - 1] && self.block(tail(order[j - 1])).and_then(Block::terminator).is_some_and(|t| t.is(Op::Branch));
            met[j] = !chained && !child_merges.contains_key(&order[j]) && self.reached_on_every_path(order[idom[j]], &in_region, &tail, order[j]);
            guarded[j] = !chained && !met[j];
        }
        let boolean = self.module.type_bool();
        let t = self.module.constant_bool(true);
        let f = self.module.constant_bool(false);
        let mut flags: HashMap<Word, Word> = HashMap::new();
        let mut guards: HashMap<Word, Word> = HashMap::new();
        for (j, &n) in order.iter().enumerate() {
            if guarded[j] {
                let v = self.var(boolean);
                flags.insert(n, v);
                guards.insert(n, self.module.alloc_id());
            }
        }
        let origin = self.block(order[0]).map(|b| b.label.origin).unwrap_or_default();
        // The end of the region.
        let end = self.module.alloc_id();
        let mut eb = Block::new(end);
        let void = self.module.type_void();
        let returns_void = self.module.functions[self.f].def.result_type == Some(void);
        eb.insts.push(match (function_region, cont) {
            (false, Some(c)) => Inst::new(Op::Branch, None, None, vec![Operand::Id(c)]),
            _ if returns_void => Inst::new(Op::Return, None, None, vec![]),
            _ => Inst::new(Op::Unreachable, None, None, vec![]),
        });
        self.func().blocks.push(eb);
        // A guarded node's guard skips its whole dominator subtree: nothing there runs unless
        // the node did. Its selection merges at a block of its own (`skip`) after the subtree,
        // which goes on to the next guard or met node of the enclosing guarded subtree.
        let mut skips: HashMap<usize, Word> = HashMap::new();
        for (j, &g) in guarded.iter().enumerate() {
            if g {
                skips.insert(j, self.module.alloc_id());
            }
        }
        // The innermost guarded node whose subtree holds j, j excluded.
        let enclosing = |j: usize| -> Option<usize> {
            let mut a = j;
            while a != 0 {
                a = idom[a];
                if guarded[a] {
                    return Some(a);
                }
            }
            None
        };
        // Where control goes after position j, inside the subtree of guarded node `scope`: the
        // next guard or met node there, else the scope's skip block (the region's end at top).
        let stop = |k: usize| -> Option<Word> {
            if guarded[k] {
                Some(guards[&order[k]])
            } else if met[k] {
                Some(order[k])
            } else {
                None
            }
        };
        let after = |j: usize, scope: Option<usize>| -> Word {
            let (limit, fallback) = scope.map_or((order.len() - 1, end), |g| (last[g], skips[&g]));
            ((j + 1)..=limit).find_map(stop).unwrap_or(fallback)
        };
        let next_guard: Vec<Word> = (0..order.len()).map(|j| after(j, if guarded[j] { Some(j) } else { enclosing(j) })).collect();
        for (&j, &skip) in &skips {
            let to = after(last[j], enclosing(j));
            let mut sb = Block::new(skip);
            sb.insts.push(Inst::new(Op::Branch, None, None, vec![Operand::Id(to)]).from_origin(origin));
            self.func().blocks.push(sb);
        }
        // Flags start false at the region's entry.
        {
            let start = order[0];
            let sb = self.block_mut(start);
            let at = sb.insts.iter().take_while(|i| i.is(Op::Variable)).count();
            let ordered: Vec<Word> = order.iter().filter_map(|n| flags.get(n).copied()).collect();
            for (k, v) in ordered.iter().enumerate() {
                sb.insts.insert(at + k, Inst::new(Op::Store, None, None, vec![Operand::Id(*v), Operand::Id(f)]).from_origin(origin));
            }
        }
        // Guards.
        for (j, &n) in order.iter().enumerate() {
            if !guarded[j] {
                continue;
            }
            let flag = flags[&n];
            let loaded = self.module.alloc_id();
            let mut g = Block::new(guards[&n]);
            g.insts.push(Inst::new(Op::Load, Some(boolean), Some(loaded), vec![Operand::Id(flag)]));
            g.insts.push(Inst::new(Op::SelectionMerge, None, None, vec![Operand::Id(skips[&j]), Operand::Enum(OperandKind::SelectionControl, 0)]));
            g.insts.push(Inst::new(Op::BranchConditional, None, None, vec![Operand::Id(loaded), Operand::Id(n), Operand::Id(skips[&j])]));
            self.func().blocks.push(g);
        }
        // Terminators of the nodes.
        let exits: HashSet<Word> = cont.into_iter().chain(merge).collect();
        for (j, &n) in order.iter().enumerate() {
            let tb = tail(n);
            let Some(term) = self.block(tb).and_then(Block::terminator).cloned() else { continue };
            let next = next_guard[j];
            // The next node runs right after this one: chained to it, or met there with no
            // subtree's end in between.
            let falls_into = |target: Word| j + 1 < order.len() && order[j + 1] == target && !guarded[j + 1] && (!met[j + 1] || next == target);
            let origin = term.origin;
            let set_flag = |s: &mut Self, target: Word, cond: Option<Word>, negate: bool, out: &mut Vec<Inst>| {
                let Some(&flag) = flags.get(&target) else { return };
                let boolean = s.module.type_bool();
                let value = match cond {
                    None => t,
                    Some(c) => {
                        let c = if negate {
                            let nc = s.module.alloc_id();
                            out.push(Inst::new(Op::LogicalNot, Some(boolean), Some(nc), vec![Operand::Id(c)]).from_origin(origin));
                            nc
                        } else {
                            c
                        };
                        if preds.get(&target).is_some_and(|p| p.len() == 1) {
                            c
                        } else {
                            let old = s.module.alloc_id();
                            let new = s.module.alloc_id();
                            out.push(Inst::new(Op::Load, Some(boolean), Some(old), vec![Operand::Id(flag)]).from_origin(origin));
                            out.push(Inst::new(Op::LogicalOr, Some(boolean), Some(new), vec![Operand::Id(old), Operand::Id(c)]).from_origin(origin));
                            new
                        }
                    }
                };
                out.push(Inst::new(Op::Store, None, None, vec![Operand::Id(flag), Operand::Id(value)]).from_origin(origin));
            };
            let mut out = Vec::new();
            match term.op() {
                Some(Op::Branch) => {
                    let target = term.id(0)?;
                    if !in_region.contains(&target) || falls_into(target) {
                        continue;
                    }
                    set_flag(self, target, None, false, &mut out);
                    out.push(Inst::new(Op::Branch, None, None, vec![Operand::Id(next)]).from_origin(origin));
                }
                Some(Op::BranchConditional) => {
                    let [c, a, b] = term.ids::<3>()?;
                    let (ia, ib) = (in_region.contains(&a), in_region.contains(&b));
                    match (ia, ib) {
                        (true, true) if a == b => {
                            set_flag(self, a, None, false, &mut out);
                            out.push(Inst::new(Op::Branch, None, None, vec![Operand::Id(next)]).from_origin(origin));
                        }
                        (true, true) => {
                            set_flag(self, a, Some(c), false, &mut out);
                            set_flag(self, b, Some(c), true, &mut out);
                            out.push(Inst::new(Op::Branch, None, None, vec![Operand::Id(next)]).from_origin(origin));
                        }
                        (true, false) | (false, true) => {
                            let (inside, outside, negate) = if ia { (a, b, false) } else { (b, a, true) };
                            if !exits.contains(&outside) && !self.terminates(outside) {
                                return Err(self.escape_error(tb, outside));
                            }
                            set_flag(self, inside, Some(c), negate, &mut out);
                            let x = self.new_block(vec![Inst::new(Op::Branch, None, None, vec![Operand::Id(next)]).from_origin(origin)]);
                            out.push(Inst::new(Op::SelectionMerge, None, None, vec![Operand::Id(x), Operand::Enum(OperandKind::SelectionControl, 0)]).from_origin(origin));
                            let (ta, tb2) = if ia { (x, b) } else { (a, x) };
                            out.push(Inst::new(Op::BranchConditional, None, None, vec![Operand::Id(c), Operand::Id(ta), Operand::Id(tb2)]).from_origin(origin));
                        }
                        (false, false) => {
                            for o in [a, b] {
                                if !exits.contains(&o) && !self.terminates(o) {
                                    return Err(self.escape_error(tb, o));
                                }
                            }
                            if a == b {
                                out.push(Inst::new(Op::Branch, None, None, vec![Operand::Id(a)]).from_origin(origin));
                                let blk = self.block_mut(tb);
                                blk.insts.pop();
                                blk.insts.extend(out);
                                continue;
                            }
                            let x = self.new_block(vec![Inst::new(Op::Unreachable, None, None, vec![]).from_origin(origin)]);
                            out.push(Inst::new(Op::SelectionMerge, None, None, vec![Operand::Id(x), Operand::Enum(OperandKind::SelectionControl, 0)]).from_origin(origin));
                            out.push(term.clone());
                        }
                    }
                }
                _ => continue,
            }
            let blk = self.block_mut(tb);
            blk.insts.pop();
            blk.insts.extend(out);
        }
        // Where the last node is one every path reaches, nothing branches to the end.
        let referenced = self.func().blocks.iter().flat_map(|b| &b.insts).any(|i| i.operands.iter().any(|o| o.id() == Some(end)));
        if !referenced {
            self.func().blocks.retain(|b| b.id() != end);
        }
        Ok(())
    }

    /// Whether every path from node `from` reaches node `n` before it leaves the region (a branch out of it, or a block that ends the invocation): the nodes reached
    /// without passing `n` all branch only to nodes of the region.
    fn reached_on_every_path(&self, from: Word, in_region: &HashSet<Word>, tail: &dyn Fn(Word) -> Word, n: Word) -> bool {
        let mut seen: HashSet<Word> = HashSet::from([from]);
        let mut todo = vec![from];
        while let Some(b) = todo.pop() {
            if b == n {
                continue;
            }
            let Some(t) = self.block(tail(b)).and_then(Block::terminator) else { return false };
            let ts = targets(t);
            if ts.is_empty() || ts.iter().any(|s| !in_region.contains(s)) {
                return false;
            }
            for s in ts {
                if seen.insert(s) {
                    todo.push(s);
                }
            }
        }
        seen.contains(&n)
    }

    /// Whether `label` is a block outside every region that just ends the invocation.
    fn terminates(&self, label: Word) -> bool {
        self.block(label).and_then(Block::terminator).is_some_and(|t| matches!(t.op(), Some(Op::Return | Op::ReturnValue | Op::Unreachable | Op::Kill | Op::TerminateInvocation)))
    }

    fn escape_error(&self, from: Word, to: Word) -> Error {
        Error::Invalid {
            site: Box::new(Site { opcode: "OpBranchConditional".into(), function: Some(self.function_name()), ..Site::default() }),
            message: format!("block %{from} branches to %{to}, outside its region (the structurizer could not place the edge)"),
        }
    }

    fn declare_vars(&mut self) {
        let vars = std::mem::take(&mut self.vars);
        let entry = &mut self.func().blocks[0];
        let at = entry.insts.iter().take_while(|i| i.is(Op::Variable)).count();
        for (k, v) in vars.into_iter().enumerate() {
            entry.insts.insert(at + k, v);
        }
    }

    /// Values used where their definition no longer dominates go through a variable.
    fn repair_dominance(&mut self) -> Result<()> {
        let func = &self.module.functions[self.f];
        let cfg = Cfg::new(func);
        let mut def_block: HashMap<Word, usize> = HashMap::new();
        let mut def_type: HashMap<Word, Word> = HashMap::new();
        for (bi, b) in func.blocks.iter().enumerate() {
            for i in &b.insts {
                if let (Some(r), Some(t)) = (i.result_id, i.result_type) {
                    if !i.is(Op::Variable) {
                        def_block.insert(r, bi);
                        def_type.insert(r, t);
                    }
                }
            }
        }
        let mut bad: Vec<Word> = Vec::new();
        let mut bad_set = HashSet::new();
        for (bi, b) in func.blocks.iter().enumerate() {
            for i in &b.insts {
                for u in i.used_ids() {
                    if let Some(&d) = def_block.get(&u) {
                        if d != bi && !cfg.dominates(d, bi) && bad_set.insert(u) {
                            bad.push(u);
                        }
                    }
                }
            }
        }
        for v in bad {
            let ty = def_type[&v];
            let var = self.var(ty);
            let d = def_block[&v];
            // Store right after the definition.
            let blocks = &mut self.module.functions[self.f].blocks;
            let pos = blocks[d].insts.iter().position(|i| i.result_id == Some(v)).unwrap_or(0);
            blocks[d].insts.insert(pos + 1, Inst::new(Op::Store, None, None, vec![Operand::Id(var), Operand::Id(v)]));
            // Load before each use outside the defining block.
            for (bi, b) in blocks.iter_mut().enumerate() {
                if bi == d {
                    continue;
                }
                let mut k = 0;
                while k < b.insts.len() {
                    if b.insts[k].used_ids().any(|u| u == v) {
                        let l = self.module.header.bound;
                        self.module.header.bound += 1;
                        b.insts[k].map_used_ids(|u| if u == v { l } else { u });
                        // A branch's merge instruction must stay right before it: load first.
                        let at = if k > 0 && matches!(b.insts[k - 1].op(), Some(Op::SelectionMerge | Op::LoopMerge)) { k - 1 } else { k };
                        b.insts.insert(at, Inst::new(Op::Load, Some(ty), Some(l), vec![Operand::Id(var)]));
                        k += 1;
                    }
                    k += 1;
                }
            }
        }
        self.declare_vars();
        Ok(())
    }

    /// Reverse post-order, unreachable blocks (merge blocks nobody reaches) last.
    fn order_blocks(&mut self) {
        let func = &self.module.functions[self.f];
        let cfg = Cfg::new(func);
        let mut placed = vec![false; func.blocks.len()];
        let mut order: Vec<usize> = Vec::new();
        for &b in &cfg.rpo {
            placed[b] = true;
            order.push(b);
        }
        order.extend((0..func.blocks.len()).filter(|b| !placed[*b]));
        let mut old: Vec<Option<Block>> = std::mem::take(&mut self.func().blocks).into_iter().map(Some).collect();
        self.func().blocks = order.into_iter().filter_map(|i| old[i].take()).collect();
    }
}

/// The region's nodes (`order` topological, the entry first) reordered so that every node's
/// dominator subtree is contiguous, and each node's immediate dominator as an index into the
/// new order (the entry's is itself). The new order is topological too: children are placed
/// in their old order, and an edge into a subtree other than to its root comes from inside it.
fn dominator_order(order: &[Word], preds: &HashMap<Word, Vec<Word>>) -> (Vec<Word>, Vec<usize>) {
    let index: HashMap<Word, usize> = order.iter().enumerate().map(|(i, &n)| (n, i)).collect();
    // Immediate dominators in the old order: predecessors come first in a DAG's topological order.
    let mut idom = vec![0usize; order.len()];
    for j in 1..order.len() {
        let mut ps = preds.get(&order[j]).into_iter().flatten().filter_map(|p| index.get(p).copied()).filter(|&p| p < j);
        let Some(mut d) = ps.next() else { continue };
        for mut p in ps {
            while p != d {
                if p > d {
                    p = idom[p];
                } else {
                    d = idom[d];
                }
            }
        }
        idom[j] = d;
    }
    let mut children: Vec<Vec<usize>> = vec![Vec::new(); order.len()];
    for j in 1..order.len() {
        children[idom[j]].push(j);
    }
    // Pre-order of the dominator tree, children in their old order.
    let mut placed = Vec::with_capacity(order.len());
    let mut stack = vec![0usize];
    while let Some(j) = stack.pop() {
        placed.push(j);
        stack.extend(children[j].iter().rev());
    }
    let mut position = vec![0usize; order.len()];
    for (new, &old) in placed.iter().enumerate() {
        position[old] = new;
    }
    let new_order = placed.iter().map(|&old| order[old]).collect();
    let new_idom = placed.iter().map(|&old| position[idom[old]]).collect();
    (new_order, new_idom)
}
