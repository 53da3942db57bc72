//! The pass pipeline: chooses passes from a target profile, runs them, finalises once.

use crate::error::Result;
use crate::finalize;
use crate::module::{op_name, Module};
use crate::passes;
use crate::profile::DeviceCaps;
use serde::Serialize;
use std::collections::BTreeMap;

/// What a pass asks the final step to change in the module's declarations.
#[derive(Default, Debug)]
pub struct Changes {
    pub add_capabilities: Vec<u32>,
    pub remove_capabilities: Vec<u32>,
    pub add_extensions: Vec<String>,
    pub remove_extensions: Vec<String>,
}

/// Per-pass statistics: how many instructions of each input opcode it rewrote.
#[derive(Default, Debug, Clone, Serialize)]
pub struct PassStats {
    pub rewritten: BTreeMap<String, usize>,
}

impl PassStats {
    pub fn count(&mut self, opcode: u32) {
        *self.rewritten.entry(op_name(opcode)).or_default() += 1;
    }
    pub fn total(&self) -> usize {
        self.rewritten.values().sum()
    }
}

/// One rewrite over a whole module.
///
/// A pass documents its rewrite and preconditions, leaves a module that `spirv-val` accepts once
/// [`finalize`] has applied its [`Changes`], and is a no-op on modules without its input opcodes.
pub trait Pass {
    fn name(&self) -> &'static str;
    fn run(&self, module: &mut Module, target: &DeviceCaps, changes: &mut Changes, stats: &mut PassStats) -> Result<()>;
}

#[derive(Debug, Clone, Serialize)]
pub struct PassReport {
    pub name: &'static str,
    pub rewritten: BTreeMap<String, usize>,
}

/// What a translation did, as `matbridge translate --report` prints it.
#[derive(Debug, Clone, Serialize)]
pub struct Report {
    pub target: String,
    pub passes: Vec<PassReport>,
    pub input_version: String,
    pub output_version: String,
    pub input_words: usize,
    pub output_words: usize,
}

/// An ordered list of passes for one target.
pub struct Pipeline {
    passes: Vec<Box<dyn Pass>>,
}

impl Pipeline {
    /// The passes `target` needs, in order.
    pub fn for_target(target: &DeviceCaps) -> Pipeline {
        let mut list: Vec<Box<dyn Pass>> = vec![
            Box::new(passes::nv_to_khr_cooperative_matrix::NvToKhrCooperativeMatrix),
            Box::new(passes::materialize_matrix_length::MaterializeMatrixLength),
        ];
        if !target.integer_dot_product {
            list.push(Box::new(passes::lower_integer_dot::LowerIntegerDot));
        }
        list.push(Box::new(passes::check_cooperative_matrix::CheckCooperativeMatrix));
        Pipeline { passes: list }
    }

    pub fn pass_names(&self) -> Vec<&'static str> {
        self.passes.iter().map(|p| p.name()).collect()
    }

    /// Runs every pass, then the final fix-up of capabilities, extensions and version.
    pub fn run(&self, module: &mut Module, target: &DeviceCaps) -> Result<Vec<PassReport>> {
        let mut changes = Changes::default();
        let mut reports = Vec::new();
        for pass in &self.passes {
            let mut stats = PassStats::default();
            pass.run(module, target, &mut changes, &mut stats)?;
            log::debug!("pass {}: {:?}", pass.name(), stats.rewritten);
            reports.push(PassReport { name: pass.name(), rewritten: stats.rewritten });
        }
        finalize::finalize(module, target, &changes)?;
        Ok(reports)
    }
}

fn version_string((major, minor): (u8, u8)) -> String {
    format!("{major}.{minor}")
}

/// Translates SPIR-V words for `target`: parse, run the target's pipeline, emit.
pub fn translate(words: &[u32], target: &DeviceCaps) -> Result<(Vec<u32>, Report)> {
    let mut module = Module::from_words(words)?;
    let input_version = version_string(module.version());
    let passes = Pipeline::for_target(target).run(&mut module, target)?;
    let out = module.to_words();
    let report = Report {
        target: target.name.clone(),
        passes,
        input_version,
        output_version: version_string(module.version()),
        input_words: words.len(),
        output_words: out.len(),
    };
    Ok((out, report))
}
