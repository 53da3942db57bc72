//! `NarrowMatrixStrides`: the Stride of an `OpCooperativeMatrixLoadKHR` or `StoreKHR` that is a
//! 64-bit integer computed at run time becomes its low 32 bits (`OpUConvert`).
//!
//! NVIDIA's driver (580) fails to build a pipeline (`VK_ERROR_UNKNOWN`, "NVVM compilation
//! failed") whose native cooperative-matrix load or store takes a 64-bit stride that is not a
//! constant; DPC++'s `size_t` strides, through llvm-spirv, are such strides. A stride of
//! 2^32 elements or more (rows of 4 GiB at least) is beyond any matrix a sub-group loads.
//!
//! Preconditions: none. Applies where the target's workarounds ask for it; runs after the
//! passes that emulate, pad or tile matrices, so that only native accesses are left.

use crate::analysis::Types;
use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::Op;
use std::collections::HashSet;

pub struct NarrowMatrixStrides;

impl Pass for NarrowMatrixStrides {
    fn name(&self) -> &'static str {
        "narrow-matrix-strides"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        target.workarounds.narrow_matrix_strides
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let types = Types::new(module);
        let constants: HashSet<u32> = module.globals().iter().filter(|g| matches!(g.op(), Some(Op::Constant | Op::SpecConstant | Op::SpecConstantOp))).filter_map(|g| g.result_id).collect();
        let constant = |id: u32| constants.contains(&id);
        let wide = |id: u32| types.type_of(id).and_then(|t| types.int(t)).is_some_and(|(w, _)| w == 64);
        let uint = module.type_int(32, false);
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                let insts = std::mem::take(&mut module.functions[f].blocks[b].insts);
                let mut out = Vec::with_capacity(insts.len());
                for mut inst in insts {
                    let at = match inst.op() {
                        Some(Op::CooperativeMatrixLoadKHR) => 2,
                        Some(Op::CooperativeMatrixStoreKHR) => 3,
                        _ => usize::MAX,
                    };
                    if let Some(&Operand::Id(stride)) = inst.operands.get(at).filter(|o| o.id().is_some_and(|s| wide(s) && !constant(s))) {
                        let narrow = module.alloc_id();
                        out.push(Inst::new(Op::UConvert, Some(uint), Some(narrow), vec![Operand::Id(stride)]).from_origin(inst.origin));
                        inst.operands[at] = Operand::Id(narrow);
                        outcome.count(inst.opcode);
                    }
                    out.push(inst);
                }
                module.functions[f].blocks[b].insts = out;
            }
        }
        Ok(outcome)
    }
}
