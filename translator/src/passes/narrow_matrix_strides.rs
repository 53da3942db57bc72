//! `NarrowMatrixStrides`: the Stride of an `OpCooperativeMatrixLoadKHR` or `StoreKHR` that is a
//! 64-bit integer becomes a 32-bit one: a constant the same 32-bit constant, any other value its
//! low 32 bits (`OpUConvert`).
//!
//! Drivers fail on native cooperative-matrix loads and stores with 64-bit strides, which
//! DPC++'s `size_t` strides are through llvm-spirv: NVIDIA's (580) does not build the pipeline
//! (`VK_ERROR_UNKNOWN`, "NVVM compilation failed") where the stride is computed at run time,
//! and Mesa 26 lavapipe's LLVM aborts the process ("Cannot select: i64 = bitcast
//! Constant:i32") even on a constant one. A stride of 2^32 elements or more (rows of 4 GiB at
//! least) is beyond any matrix a sub-group loads; a constant one is left as it is.
//!
//! Preconditions: none. Applies where the target's workarounds ask for it; runs after the
//! passes that emulate, pad or tile matrices, so that only native accesses are left.

use crate::analysis::Types;
use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::Op;
use std::collections::HashMap;

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
        // The value of each 64-bit integer constant.
        let constants: HashMap<u32, u64> =
            module.globals().iter().filter(|g| g.is(Op::Constant)).filter_map(|g| Some((g.result_id?, u64::from(g.word_opt(0)?) | u64::from(g.word_opt(1)?) << 32))).collect();
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
                    if let Some(&Operand::Id(stride)) = inst.operands.get(at).filter(|o| o.id().is_some_and(wide)) {
                        let narrow = match constants.get(&stride).map(|v| u32::try_from(*v)) {
                            Some(Ok(v)) => Some(module.constant_u32(v)),
                            Some(Err(_)) => None,
                            None => {
                                let narrow = module.alloc_id();
                                out.push(Inst::new(Op::UConvert, Some(uint), Some(narrow), vec![Operand::Id(stride)]).from_origin(inst.origin));
                                Some(narrow)
                            }
                        };
                        if let Some(narrow) = narrow {
                            inst.operands[at] = Operand::Id(narrow);
                            outcome.count(inst.opcode);
                        }
                    }
                    out.push(inst);
                }
                module.functions[f].blocks[b].insts = out;
            }
        }
        Ok(outcome)
    }
}
