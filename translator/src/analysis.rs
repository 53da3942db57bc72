//! Read-only facts about a module: the type of every value and the shape of every type.

use crate::module::{op, Inst, Module};
use std::collections::HashMap;

/// Types and value types of a module, computed once per pass.
pub struct Types {
    /// Type id -> its defining instruction.
    pub defs: HashMap<u32, Inst>,
    /// Value id -> its type id.
    pub value_type: HashMap<u32, u32>,
    /// Constant id -> its literal words (OpConstant only).
    pub constants: HashMap<u32, Vec<u32>>,
    /// Boolean constants: id -> value (OpConstantTrue/False only, not spec constants).
    pub bools: HashMap<u32, bool>,
}

impl Types {
    pub fn new(module: &Module) -> Types {
        let mut defs = HashMap::new();
        let mut value_type = HashMap::new();
        let mut constants = HashMap::new();
        let mut bools = HashMap::new();
        for inst in &module.insts {
            let Some(id) = inst.result_id() else { continue };
            match inst.result_type() {
                Some(ty) => {
                    value_type.insert(id, ty);
                    match inst.op {
                        op::CONSTANT => {
                            constants.insert(id, inst.operands[2..].to_vec());
                        }
                        op::CONSTANT_TRUE => {
                            bools.insert(id, true);
                        }
                        op::CONSTANT_FALSE => {
                            bools.insert(id, false);
                        }
                        _ => {}
                    }
                }
                None => {
                    if (op::TYPE_VOID..=op::TYPE_FUNCTION).contains(&inst.op) || inst.op > 4000 {
                        defs.insert(id, inst.clone());
                    }
                }
            }
        }
        Types { defs, value_type, constants, bools }
    }

    /// (width, signed) of an OpTypeInt; `None` also for widths outside 1..=64 (the core widths and
    /// SPV_INTEL_arbitrary_precision_integers' small ones), so that a damaged module cannot make
    /// a pass loop over billions of bits.
    pub fn int(&self, ty: u32) -> Option<(u32, bool)> {
        let d = self.defs.get(&ty)?;
        (d.op == op::TYPE_INT && (1..=64).contains(&d.operands[1])).then(|| (d.operands[1], d.operands[2] == 1))
    }

    /// (component type, count) of an OpTypeVector; `None` also for counts SPIR-V does not allow
    /// (2, 3, 4, 8, 16), so that a damaged module cannot make a pass emit billions of lanes.
    pub fn vector(&self, ty: u32) -> Option<(u32, u32)> {
        let d = self.defs.get(&ty)?;
        (d.op == op::TYPE_VECTOR && matches!(d.operands[2], 2 | 3 | 4 | 8 | 16)).then(|| (d.operands[1], d.operands[2]))
    }

    /// Width of an OpTypeFloat and its encoding operand (e.g. BFloat16KHR), if any.
    pub fn float(&self, ty: u32) -> Option<(u32, Option<u32>)> {
        let d = self.defs.get(&ty)?;
        (d.op == op::TYPE_FLOAT).then(|| (d.operands[1], d.operands.get(2).copied()))
    }

    pub fn type_of(&self, value: u32) -> Option<u32> {
        self.value_type.get(&value).copied()
    }

    /// Value of a 32-bit (or narrower) integer OpConstant.
    pub fn const_u32(&self, id: u32) -> Option<u32> {
        self.constants.get(&id).and_then(|w| w.first().copied())
    }
}
