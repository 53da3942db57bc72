//! The pointers a function derives from its own `Function` variables, and the variables that
//! nothing but plain loads and stores can read or write: what passes that reason about private
//! memory without alias analysis (`forward-private-loads`, `sink-private-stores`) need.

use crate::ir::{Function, Module, Operand};
use spirv::{Op, StorageClass, Word};
use std::collections::{HashMap, HashSet};

/// How a pointer is derived from its variable: each step's opcode, result type and constant
/// index ids. Two pointers with one path point at the same memory as the same type.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub struct Path {
    pub root: Word,
    pub steps: Vec<(u32, Word, Vec<Word>)>,
}

/// The function's variables and the pointers derived from them.
pub struct PrivatePointers {
    /// Each derived pointer's variable (a variable is its own).
    pub root: HashMap<Word, Word>,
    /// Each derived pointer's path, where every index on the way is a constant.
    pub path: HashMap<Word, Path>,
    /// Variables that something other than a derivation, a load, a store (as its pointer), a
    /// memory copy (as either pointer) or a lifetime marker uses: a call, an extended
    /// instruction, a phi or select of pointers, a stored pointer could read or write them
    /// unseen.
    pub escaped: HashSet<Word>,
}

/// The module's scalar constants: the indices that keep a path known.
pub fn index_constants(module: &Module) -> HashSet<Word> {
    module.globals().iter().filter(|g| g.is(Op::Constant) || g.is(Op::ConstantNull)).filter_map(|g| g.result_id).collect()
}

/// Whether `op` derives a pointer from its first operand that points into the same variable.
pub fn derives(op: Op) -> bool {
    matches!(op, Op::Bitcast | Op::CopyObject | Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain)
}

impl PrivatePointers {
    /// The analysis of `function`; `constants` are the module's [`index_constants`].
    pub fn new(function: &Function, constants: &HashSet<Word>) -> PrivatePointers {
        let mut root: HashMap<Word, Word> = HashMap::new();
        let mut path: HashMap<Word, Path> = HashMap::new();
        for inst in function.insts() {
            if inst.is(Op::Variable) && inst.word_opt(0) == Some(StorageClass::Function as u32) {
                if let Some(id) = inst.result_id {
                    root.insert(id, id);
                    path.insert(id, Path { root: id, steps: Vec::new() });
                }
            }
        }
        // Derivations may appear before their bases in block order: iterate to a fixed point.
        loop {
            let mut grew = false;
            for inst in function.insts() {
                let Some(op) = inst.op().filter(|&op| derives(op)) else { continue };
                let (Some(id), Some(ty), Some(base)) = (inst.result_id, inst.result_type, inst.operands.first().and_then(Operand::id)) else { continue };
                let Some(&r) = root.get(&base) else { continue };
                if root.contains_key(&id) {
                    continue;
                }
                let indices: Vec<Word> = inst.operands.iter().skip(1).filter_map(Operand::id).collect();
                let known = indices.iter().all(|i| constants.contains(i)) && indices.len() + 1 == inst.operands.len();
                if let Some(mut p) = path.get(&base).cloned().filter(|_| known) {
                    p.steps.push((op as u32, ty, indices));
                    path.insert(id, p);
                }
                root.insert(id, r);
                grew = true;
            }
            if !grew {
                break;
            }
        }
        let mut escaped: HashSet<Word> = HashSet::new();
        for inst in function.insts() {
            for (k, o) in inst.operands.iter().enumerate() {
                let Some(&r) = o.id().and_then(|id| root.get(&id)) else { continue };
                // The pointer operand of a derivation, access or lifetime marker; either pointer
                // of a copy.
                let fine = match inst.op() {
                    Some(Op::CopyMemory | Op::CopyMemorySized) => k < 2,
                    Some(op) => k == 0 && (derives(op) || matches!(op, Op::Load | Op::Store | Op::LifetimeStart | Op::LifetimeStop)),
                    None => false,
                };
                if !fine {
                    escaped.insert(r);
                }
            }
        }
        PrivatePointers { root, path, escaped }
    }

    /// The variable `pointer` points into, where nothing but loads and stores reach it.
    pub fn tracked_root(&self, pointer: Word) -> Option<Word> {
        self.root.get(&pointer).copied().filter(|r| !self.escaped.contains(r))
    }
}
