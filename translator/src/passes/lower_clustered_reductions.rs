//! `LowerClusteredReductions`: `OpGroupNonUniform<Op> ClusteredReduce x C` -> a butterfly of
//! `OpGroupNonUniformShuffleXor` over the cluster, for targets without clustered sub-group
//! operations (SwiftShader).
//!
//! A cluster of `C` lanes is `C` consecutive lanes starting at a multiple of `C`, so lane
//! `l ^ m` (for `m < C`) is in `l`'s cluster: `log2 C` steps of `x = x <op> shuffle_xor(x, m)`
//! with `m = 1, 2, .., C / 2` leave every lane with its cluster's reduction.
//!
//! Preconditions: cluster sizes are constants (SPIR-V requires it) that are powers of two; the
//! target has shuffles. Applies where the target lacks clustered operations but has shuffles;
//! any other clustered operation is left for the requirement check to name.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::virtualize_subgroup_size::combine_of;
use crate::profile::{DeviceCaps, SubgroupOp};
use spirv::{GroupOperation, Op};

pub struct LowerClusteredReductions;

impl Pass for LowerClusteredReductions {
    fn name(&self) -> &'static str {
        "lower-clustered-reductions"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        !target.has_subgroup_op(SubgroupOp::Clustered) && target.has_subgroup_op(SubgroupOp::Shuffle)
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let types = Types::new(module);
        let glsl = std::cell::OnceCell::new();
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                let insts = std::mem::take(&mut module.functions[f].blocks[b].insts);
                for inst in insts {
                    let clustered = inst.word_opt(1) == Some(GroupOperation::ClusteredReduce as u32);
                    let Some((combine, _)) = inst.op().filter(|_| clustered).and_then(combine_of) else {
                        module.functions[f].blocks[b].insts.push(inst);
                        continue;
                    };
                    let (ty, scope, x) = (inst.ty()?, inst.id(0)?, inst.id(2)?);
                    let size = inst.id(3).ok().and_then(|c| types.const_u32(c));
                    let Some(size) = size.filter(|c| c.is_power_of_two()) else {
                        return Err(Error::Invalid { site: module.site(&inst), message: "a clustered reduction whose cluster size is not a constant power of two".into() });
                    };
                    let glsl = *glsl.get_or_init(|| module.ext_inst_import("GLSL.std.450"));
                    let index = module.functions[f].blocks[b].insts.len();
                    let mut bld = Builder::new(module, Cursor { function: f, block: b, index }).with_origin(inst.origin);
                    let mut acc = x;
                    let mut mask = 1;
                    while mask < size {
                        let m = bld.module.constant_u32(mask);
                        let other = bld.op(Op::GroupNonUniformShuffleXor, ty, &[scope, acc, m]);
                        acc = combine.apply(&mut bld, glsl, ty, acc, other);
                        mask *= 2;
                    }
                    bld.insert(Inst::new(Op::CopyObject, Some(ty), inst.result_id, vec![Operand::Id(acc)]));
                    outcome.count(inst.opcode);
                }
            }
        }
        Ok(outcome)
    }
}
