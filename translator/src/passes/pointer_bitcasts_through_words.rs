//! `PointerBitcastsThroughWords`: `OpBitcast` from one `PhysicalStorageBuffer` pointer type to
//! another becomes two, through the address's two 32-bit words (`uvec2`).
//!
//! SwiftShader's JIT dies with SIGILL compiling a bitcast between buffer pointer types (OpenCL
//! C's `(volatile __global uint*)p` on a float pointer, GLSL's casts between buffer-reference
//! types), while it compiles bitcasts between a pointer and a `uvec2` (the form the byte-pointer
//! lowering uses). The two casts say the same: the address is kept bit for bit.
//!
//! Preconditions: runs last among the passes that may emit pointer bitcasts. Applies where the
//! target's workarounds ask for it.

use crate::analysis::Types;
use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{Op, StorageClass, Word};

pub struct PointerBitcastsThroughWords;

impl Pass for PointerBitcastsThroughWords {
    fn name(&self) -> &'static str {
        "pointer-bitcasts-through-words"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        target.workarounds.pointer_bitcasts_through_words
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let types = Types::new(module);
        let buffer_pointer = |ty: Word| types.defs.get(&ty).is_some_and(|d| d.is(Op::TypePointer) && d.word_opt(0) == Some(StorageClass::PhysicalStorageBuffer as u32));
        let casts = module
            .functions
            .iter()
            .flat_map(|f| f.blocks.iter().flat_map(|b| &b.insts))
            .any(|i| i.is(Op::Bitcast) && i.result_type.is_some_and(buffer_pointer) && i.operands.first().and_then(Operand::id).and_then(|v| types.type_of(v)).is_some_and(buffer_pointer));
        if !casts {
            return Ok(outcome);
        }
        let uint = module.type_int(32, false);
        let words = module.type_vector(uint, 2);
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                let insts = std::mem::take(&mut module.functions[f].blocks[b].insts);
                let mut out = Vec::with_capacity(insts.len());
                for mut inst in insts {
                    let source = inst.operands.first().and_then(Operand::id);
                    if inst.is(Op::Bitcast) && inst.result_type.is_some_and(buffer_pointer) && source.and_then(|v| types.type_of(v)).is_some_and(buffer_pointer) {
                        let address = module.alloc_id();
                        out.push(Inst::new(Op::Bitcast, Some(words), Some(address), inst.operands.clone()).from_origin(inst.origin));
                        inst.operands = vec![Operand::Id(address)];
                        outcome.count(Op::Bitcast as u32);
                    }
                    out.push(inst);
                }
                module.functions[f].blocks[b].insts = out;
            }
        }
        Ok(outcome)
    }
}
