//! `RemainderFromQuotient`: `OpSRem a b` -> `a - (a / b) * b`.
//!
//! NVIDIA's driver (580) gives `OpSRem` the sign of the divisor rather than of the dividend
//! (`-128 rem 7` is 2, not -2), while its `OpSDiv` truncates as SPIR-V says: the remainder is
//! computed from the quotient. Runs after the passes that emit `OpSRem` (the narrow-type
//! legalization sign-extends and divides in 32 bits).
//!
//! Preconditions: none (scalars and vectors alike). Applies where the target's workarounds ask
//! for it.

use crate::error::Result;
use crate::ir::Module;
use crate::ir::{Inst, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::Op;

pub struct RemainderFromQuotient;

impl Pass for RemainderFromQuotient {
    fn name(&self) -> &'static str {
        "remainder-from-quotient"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        target.workarounds.signed_remainder_from_quotient
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                let insts = std::mem::take(&mut module.functions[f].blocks[b].insts);
                let mut out = Vec::with_capacity(insts.len());
                for inst in insts {
                    let (Some(Op::SRem), Some(ty), Some(id), Ok([a, d])) = (inst.op(), inst.result_type, inst.result_id, inst.ids::<2>()) else {
                        out.push(inst);
                        continue;
                    };
                    let (q, m) = (module.alloc_id(), module.alloc_id());
                    let made = |op: Op, result: u32, x: u32, y: u32| Inst::new(op, Some(ty), Some(result), vec![Operand::Id(x), Operand::Id(y)]).from_origin(inst.origin);
                    out.extend([made(Op::SDiv, q, a, d), made(Op::IMul, m, q, d), made(Op::ISub, id, a, m)]);
                    outcome.count(Op::SRem as u32);
                    outcome.changed = true;
                }
                module.functions[f].blocks[b].insts = out;
            }
        }
        Ok(outcome)
    }
}
