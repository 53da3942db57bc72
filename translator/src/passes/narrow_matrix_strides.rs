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
        // The stride's operand, where it is 64 bits wide and can be narrowed (a constant that
        // fits, or a value computed at run time).
        let stride_at = |inst: &Inst| -> Option<usize> {
            let at = match inst.op()? {
                Op::CooperativeMatrixLoadKHR => 2,
                Op::CooperativeMatrixStoreKHR => 3,
                _ => return None,
            };
            let stride = inst.operands.get(at)?.id().filter(|s| wide(*s))?;
            constants.get(&stride).is_none_or(|v| u32::try_from(*v).is_ok()).then_some(at)
        };
        let rewritten = module.rewrite_matching(
            &mut (),
            |_, inst| stride_at(inst).is_some(),
            |_, b, inst| {
                let at = stride_at(inst).unwrap_or_default();
                let stride = inst.id(at)?;
                let narrow = match constants.get(&stride).and_then(|v| u32::try_from(*v).ok()) {
                    Some(v) => b.module.constant_u32(v),
                    None => b.op(Op::UConvert, uint, &[stride]),
                };
                let mut operands = inst.operands.clone();
                operands[at] = Operand::Id(narrow);
                b.insert(Inst { operands, ..inst.clone() });
                Ok(())
            },
        )?;
        for opcode in rewritten {
            outcome.count(opcode);
        }
        Ok(outcome)
    }
}
