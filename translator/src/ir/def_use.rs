//! Def-use: where every id is defined and where it is used.
//!
//! An analysis, built in one walk over the module; it stays valid until a pass adds, removes or
//! renames instructions (passes say whether they keep it, see [`crate::pass::Preserves`]).
//! Replacing uses is [`Module::replace_all_uses`].

use super::{Inst, Module};
use spirv::Word;
use std::collections::HashMap;

/// Where an instruction lives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Place {
    /// In a section before the functions (the section's position in the layout, the index).
    Global(usize),
    /// In function `f`: its `OpFunction` (`block` None, `inst` 0), a parameter (`block` None,
    /// `inst` 1 + index) or block `block`'s label (`inst` 0) or instruction `inst - 1`.
    Function { f: usize, block: Option<usize>, inst: usize },
}

/// Definitions and uses of every id.
#[derive(Debug, Default)]
pub struct DefUse {
    defs: HashMap<Word, Place>,
    uses: HashMap<Word, Vec<Place>>,
}

impl DefUse {
    pub fn new(module: &Module) -> DefUse {
        let mut du = DefUse::default();
        let mut note = |inst: &Inst, place: Place| {
            if let Some(id) = inst.result_id {
                du.defs.insert(id, place);
            }
            for id in inst.used_ids() {
                du.uses.entry(id).or_default().push(place);
            }
        };
        for (k, inst) in module.all_insts().take_while(|i| !i.is(spirv::Op::Function)).enumerate() {
            note(inst, Place::Global(k));
        }
        for (f, func) in module.functions.iter().enumerate() {
            note(&func.def, Place::Function { f, block: None, inst: 0 });
            for (k, p) in func.params.iter().enumerate() {
                note(p, Place::Function { f, block: None, inst: k + 1 });
            }
            for (b, block) in func.blocks.iter().enumerate() {
                note(&block.label, Place::Function { f, block: Some(b), inst: 0 });
                for (k, inst) in block.insts.iter().enumerate() {
                    note(inst, Place::Function { f, block: Some(b), inst: k + 1 });
                }
            }
        }
        du
    }

    pub fn def(&self, id: Word) -> Option<Place> {
        self.defs.get(&id).copied()
    }

    /// Every place that uses `id` (once per operand).
    pub fn uses(&self, id: Word) -> &[Place] {
        self.uses.get(&id).map_or(&[], Vec::as_slice)
    }

    /// The instruction at `place`.
    pub fn inst(module: &Module, place: Place) -> Option<&Inst> {
        match place {
            Place::Global(k) => module.all_insts().nth(k),
            Place::Function { f, block: None, inst: 0 } => module.functions.get(f).map(|f| &f.def),
            Place::Function { f, block: None, inst } => module.functions.get(f)?.params.get(inst - 1),
            Place::Function { f, block: Some(b), inst: 0 } => module.functions.get(f)?.blocks.get(b).map(|b| &b.label),
            Place::Function { f, block: Some(b), inst } => module.functions.get(f)?.blocks.get(b)?.insts.get(inst - 1),
        }
    }
}
