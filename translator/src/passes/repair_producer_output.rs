//! `RepairProducerOutput`: mends what real producers get wrong in otherwise usable modules.
//!
//! Rewrite: identical decorations of one id are kept once (llvm-spirv 2024 decorates some
//! results `NoSignedWrap` twice, which spirv-val rejects). Interface lists that miss a variable
//! an entry point uses (llvm-spirv can leave out `__local` variables) are completed by the
//! kernel passes, which rebuild every interface list.
//!
//! Preconditions: none; a module without such defects is left as it is.

use crate::error::Result;
use crate::ir::Module;
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use std::collections::HashSet;

pub struct RepairProducerOutput;

impl Pass for RepairProducerOutput {
    fn name(&self) -> &'static str {
        "repair-producer-output"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let mut seen = HashSet::new();
        let mut dropped = Vec::new();
        module.annotations.retain(|a| {
            let keep = seen.insert((a.opcode, a.operands.clone()));
            if !keep {
                dropped.push(a.opcode);
            }
            keep
        });
        for op in dropped {
            outcome.count(op);
        }
        Ok(outcome)
    }
}
