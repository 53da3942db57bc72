//! `MaterializeMatrixLength`: `OpSpecConstantOp CooperativeMatrixLengthKHR` -> per-function
//! `OpCooperativeMatrixLengthKHR`.
//!
//! glslang writes `matrix.length()` as a specialization-constant operation, and spec constants
//! computed from it (`OpSpecConstantOp IAdd %len %c0`, ...). Such modules validate, but NVIDIA's
//! driver (580) crashes compiling them. This pass moves the length and every spec-constant
//! operation depending on it into each function that uses them: the same opcodes as ordinary
//! instructions at the top of the function's first block, with the function's uses renamed.
//!
//! Preconditions: a valid module with KHR cooperative matrices. Leaves the module unchanged when a
//! dependent constant is used outside functions (an array length, a composite constant), since
//! those need a constant. Removes the moved constants and their debug names.

use crate::error::Result;
use crate::module::{id_operand_positions, op, Inst, Module};
use crate::pipeline::{Changes, Pass, PassStats};
use crate::profile::DeviceCaps;
use std::collections::{HashMap, HashSet};

pub struct MaterializeMatrixLength;

impl Pass for MaterializeMatrixLength {
    fn name(&self) -> &'static str {
        "materialize-matrix-length"
    }

    fn run(&self, module: &mut Module, _target: &DeviceCaps, _changes: &mut Changes, stats: &mut PassStats) -> Result<()> {
        let globals_end = module.functions_start();
        // Spec-constant operations computing from a matrix length, in definition order.
        let mut moved: Vec<Inst> = Vec::new();
        let mut ids: HashSet<u32> = HashSet::new();
        for inst in &module.insts[..globals_end] {
            if inst.op != op::SPEC_CONSTANT_OP || inst.operands.len() < 3 {
                continue;
            }
            let is_length = inst.operands[2] == op::COOPERATIVE_MATRIX_LENGTH_KHR;
            if is_length || inst.operands[3..].iter().any(|v| ids.contains(v)) {
                ids.insert(inst.operands[1]);
                moved.push(inst.clone());
            }
        }
        if moved.is_empty() {
            return Ok(());
        }
        // Any other global use needs a constant: leave the module as it is.
        let debug = |o: u32| matches!(o, op::NAME | op::DECORATE | op::MEMBER_DECORATE);
        let used_globally = module.insts[..globals_end].iter().any(|inst| {
            !debug(inst.op) && !ids.contains(&inst.result_id().unwrap_or(0)) && id_operand_positions(inst).unwrap_or_default().iter().any(|p| ids.contains(&inst.operands[*p]))
        });
        if used_globally {
            return Ok(());
        }
        let body = module.insts.split_off(globals_end);
        let mut out: Vec<Inst> = Vec::with_capacity(body.len() + moved.len());
        let mut i = 0;
        while i < body.len() {
            // One function: OpFunction .. OpFunctionEnd.
            let end = body[i..].iter().position(|x| x.op == op::FUNCTION_END).map_or(body.len(), |p| i + p + 1);
            let mut func: Vec<Inst> = body[i..end].to_vec();
            let uses = func.iter().any(|inst| id_operand_positions(inst).unwrap_or_default().iter().any(|p| ids.contains(&inst.operands[*p])));
            if uses {
                let mut local: HashMap<u32, u32> = HashMap::new();
                let mut made = Vec::new();
                for c in &moved {
                    let id = module.alloc_id();
                    local.insert(c.operands[1], id);
                    let mut operands = vec![c.operands[0], id];
                    operands.extend(c.operands[3..].iter().map(|v| *local.get(v).unwrap_or(v)));
                    made.push(Inst::new(c.operands[2], operands));
                    stats.count(op::SPEC_CONSTANT_OP);
                }
                for inst in func.iter_mut() {
                    for p in id_operand_positions(inst).unwrap_or_default() {
                        if let Some(l) = local.get(&inst.operands[p]) {
                            inst.operands[p] = *l;
                        }
                    }
                }
                // After the first label and its OpVariables.
                let label = func.iter().position(|x| x.op == op::LABEL).unwrap_or(0);
                let mut at = label + 1;
                while at < func.len() && func[at].op == op::VARIABLE {
                    at += 1;
                }
                func.splice(at..at, made);
            }
            out.extend(func);
            i = end;
        }
        module.insts.retain(|inst| !(ids.contains(&inst.result_id().unwrap_or(0)) || (debug(inst.op) && inst.operands.first().is_some_and(|t| ids.contains(t)))));
        module.insts.extend(out);
        Ok(())
    }
}
