//! `RetypeFloat16ToBFloat16`: every `OpTypeFloat 16` becomes `OpTypeFloat 16 BFloat16KHR`.
//!
//! The matmul API's bf16 GEMM is its f16 GEMM retyped: in that kernel the only 16-bit float
//! type is the A and B matrices' component type, and operands move through shared memory as raw
//! 16-byte vectors, so no conversion instruction sees the type. The requirement step then
//! declares SPV_KHR_bfloat16's capabilities and extension and drops `Float16`.
//!
//! Preconditions: a module whose 16-bit float values are only moved and multiplied as
//! cooperative-matrix components (bf16 has no arithmetic outside cooperative matrices and dot
//! products). Runs only when requested ([`crate::Request::RetypeFloat16ToBFloat16`]) and the
//! target has VK_KHR_shader_bfloat16.

use crate::error::Result;
use crate::ir::{Module, Operand};
use crate::pass::{Context, Outcome, Pass, Preserves};
use crate::profile::DeviceCaps;
use rspirv::grammar::OperandKind;
use spirv::{FPEncoding, Op};

pub struct RetypeFloat16ToBFloat16;

impl Pass for RetypeFloat16ToBFloat16 {
    fn name(&self) -> &'static str {
        "retype-float16-to-bfloat16"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        target.shader_bfloat16
    }

    fn preserves(&self) -> Preserves {
        Preserves::ALL
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        for inst in module.globals_mut().iter_mut().filter(|i| i.is(Op::TypeFloat) && i.word_opt(0) == Some(16) && i.operands.len() == 1) {
            inst.operands.push(Operand::Enum(OperandKind::FPEncoding, FPEncoding::BFloat16KHR as u32));
            outcome.count(Op::TypeFloat as u32);
        }
        Ok(outcome)
    }
}
