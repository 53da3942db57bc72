//! `MaterializeMatrixLength`: `OpSpecConstantOp CooperativeMatrixLengthKHR` -> per-function
//! `OpCooperativeMatrixLengthKHR`.
//!
//! glslang writes `matrix.length()` as a specialization-constant operation, and spec constants
//! computed from it (`OpSpecConstantOp IAdd %len %c0`, ...). Such modules validate, but NVIDIA's
//! driver (580) crashes compiling them. This pass moves the length and every spec-constant
//! operation depending on it into each function that uses them: the same opcodes as ordinary
//! instructions at the top of the function's first block (after its `OpVariable`s), with the
//! function's uses renamed.
//!
//! Preconditions: a valid module with KHR cooperative matrices. Leaves the module unchanged when
//! a dependent constant is used outside functions (an array length, a composite constant), since
//! those need a constant. Removes the moved constants and their debug names and decorations.
//! Applies where the target's workarounds ask for it.

use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{Op, Word};
use std::collections::{HashMap, HashSet};

pub struct MaterializeMatrixLength;

impl Pass for MaterializeMatrixLength {
    fn name(&self) -> &'static str {
        "materialize-matrix-length"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        target.workarounds.spec_constant_matrix_length
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        // Spec-constant operations computing from a matrix length, in definition order.
        let mut moved: Vec<Inst> = Vec::new();
        let mut ids: HashSet<Word> = HashSet::new();
        for inst in module.globals().iter().filter(|i| i.is(Op::SpecConstantOp)) {
            let is_length = inst.word_opt(0) == Some(Op::CooperativeMatrixLengthKHR as u32);
            if is_length || inst.operands.iter().filter_map(Operand::id).any(|v| ids.contains(&v)) {
                ids.extend(inst.result_id);
                moved.push(inst.clone());
            }
        }
        if moved.is_empty() {
            return Ok(outcome);
        }
        // Any other global use needs a constant: leave the module as it is.
        let used_globally = module.globals().iter().any(|inst| !inst.result_id.is_some_and(|r| ids.contains(&r)) && inst.used_ids().any(|v| ids.contains(&v)));
        if used_globally {
            return Ok(outcome);
        }
        let types = crate::analysis::Types::new(module);
        for c in &moved {
            types.check_spec_constant_op(module, c)?;
        }
        for fi in 0..module.functions.len() {
            let uses = module.functions[fi].insts().any(|inst| inst.used_ids().any(|v| ids.contains(&v)));
            if !uses {
                continue;
            }
            let mut local: HashMap<Word, Word> = HashMap::new();
            let mut made = Vec::new();
            for c in &moved {
                let id = module.alloc_id();
                if let Some(r) = c.result_id {
                    local.insert(r, id);
                }
                let inner = c.word_opt(0).unwrap_or_default();
                let mut operands: Vec<Operand> = c.operands[1..].to_vec();
                for o in operands.iter_mut() {
                    if let Operand::Id(v) = o {
                        *v = *local.get(v).unwrap_or(v);
                    }
                }
                made.push(Inst { opcode: inner, result_type: c.result_type, result_id: Some(id), operands, origin: c.origin });
                outcome.count(Op::SpecConstantOp as u32);
            }
            let func = &mut module.functions[fi];
            func.for_each_inst_mut(|inst| inst.map_used_ids(|v| *local.get(&v).unwrap_or(&v)));
            if let Some(first) = func.blocks.first_mut() {
                let at = first.insts.iter().position(|i| !i.is(Op::Variable)).unwrap_or(first.insts.len());
                first.insts.splice(at..at, made);
            }
        }
        let named = |i: &Inst| i.operands.first().and_then(Operand::id).is_some_and(|t| ids.contains(&t));
        module.globals_mut().retain(|inst| !inst.result_id.is_some_and(|r| ids.contains(&r)));
        module.debug_names.retain(|i| !named(i));
        module.annotations.retain(|i| !named(i));
        Ok(outcome)
    }
}
