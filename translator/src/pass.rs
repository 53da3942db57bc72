//! The pass contract.
//!
//! A pass is one rewrite in one file under `passes/`. It decides from the target whether it
//! applies ([`Pass::applies`]), reports whether it changed the module and what it rewrote
//! ([`Outcome`]), and declares which analyses it keeps valid ([`Preserves`]). It documents its
//! rewrite and preconditions in its file's doc comment. Capabilities, extensions and the version
//! are not a pass's business: [`crate::requirements`] derives them once at the end.
//!
//! Errors name the instruction through [`crate::ir::Module::site`] (opcode, word offset,
//! instruction index, function); instructions a pass creates carry the [`crate::ir::Origin`]
//! of what they replace.

use crate::error::Result;
use crate::ir::def_use::DefUse;
use crate::ir::Module;
use crate::profile::DeviceCaps;
use std::collections::BTreeMap;

/// Analyses a pass keeps valid when it changed the module.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct Preserves {
    pub def_use: bool,
}

impl Preserves {
    pub const NOTHING: Preserves = Preserves { def_use: false };
    pub const ALL: Preserves = Preserves { def_use: true };
}

/// What a pass did.
#[derive(Clone, Debug, Default)]
pub struct Outcome {
    pub changed: bool,
    /// Input opcode -> how many instructions of it were rewritten.
    pub rewritten: BTreeMap<u32, usize>,
    /// What the pass decided, one line per subject (for example which rewrite each
    /// cooperative-matrix type got), for `matbridge translate --report`.
    pub notes: Vec<String>,
}

impl Outcome {
    pub fn unchanged() -> Outcome {
        Outcome::default()
    }

    /// Counts one rewritten instruction of `opcode` (and marks the module changed).
    pub fn count(&mut self, opcode: u32) {
        self.count_many(opcode, 1);
    }

    /// Counts `n` rewritten instructions of `opcode` (and marks the module changed).
    pub fn count_many(&mut self, opcode: u32, n: usize) {
        self.changed = true;
        *self.rewritten.entry(opcode).or_default() += n;
    }
}

/// Analyses shared between passes, built on demand and dropped when a pass that does not keep
/// them changes the module.
#[derive(Default)]
pub struct Analyses {
    def_use: Option<DefUse>,
}

impl Analyses {
    pub fn def_use(&mut self, module: &Module) -> &DefUse {
        self.def_use.get_or_insert_with(|| DefUse::new(module))
    }

    pub fn invalidate(&mut self, kept: Preserves) {
        if !kept.def_use {
            self.def_use = None;
        }
    }
}

/// What a pass sees besides the module.
pub struct Context<'a> {
    pub target: &'a DeviceCaps,
    pub analyses: &'a mut Analyses,
}

/// One rewrite over a whole module.
pub trait Pass {
    fn name(&self) -> &'static str;
    /// Whether the pass runs for `target`.
    fn applies(&self, target: &DeviceCaps) -> bool;
    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome>;
    /// The analyses still valid after the pass changed the module.
    fn preserves(&self) -> Preserves {
        Preserves::NOTHING
    }
}
