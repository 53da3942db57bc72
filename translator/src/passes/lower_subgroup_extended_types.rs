//! `LowerSubgroupExtendedTypes`: sub-group operations on 8-, 16- and 64-bit values (and vectors
//! of them) become operations on 32-bit values, for devices without
//! `shaderSubgroupExtendedTypes`.
//!
//! Rewrite, in place (the result id stays), of each `OpGroupNonUniform*` instruction whose value
//! or result has such a type:
//! - Operations that move values (broadcasts, shuffles, quad operations, rotates) move the
//!   value's 32-bit words ([`crate::ir::words`]: narrow numbers zero-extended, 64-bit ones as two
//!   words), one operation per word; `AllEqual` compares word by word.
//! - Arithmetic on 8- and 16-bit integers runs on 32-bit ones (sign-extended for `SMin`/`SMax`,
//!   zero-extended otherwise) and is truncated back: the low bits of sums, products and bitwise
//!   results are the narrow ones, and an exclusive scan's identity becomes the narrow type's
//!   (signed limits clamped). On 16-bit floats it runs on 32-bit ones and is rounded back once
//!   (min and max are exact; sums and products are rounded once instead of after each step,
//!   which the operations' unspecified order allows).
//! - Arithmetic on 64-bit values (and on narrow values under a cluster size or scan of types the
//!   widening above does not cover) becomes a butterfly of word shuffles over the sub-group
//!   (`Reduce`, `ClusteredReduce`) or Hillis-Steele steps of word shuffles (scans), combining at
//!   the value's own type.
//!
//! Preconditions: structured control flow; the butterflies and scans assume every invocation of
//! the sub-group takes part (as OpenCL's sub-group functions require). Partitioned operations on
//! such types are errors naming the instruction.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::words::{from_words, to_words};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::lower_kernel_subgroups::builtin;
use crate::passes::virtualize_subgroup_size::{combine_of, identity, Combine};
use crate::profile::DeviceCaps;
use spirv::{BuiltIn, GlslStd450Op as GLOp, GroupOperation, Op, Scope, Word};

pub struct LowerSubgroupExtendedTypes;

impl Pass for LowerSubgroupExtendedTypes {
    fn name(&self) -> &'static str {
        "lower-subgroup-extended-types"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        !target.subgroup_extended_types
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let types = Types::new(module);
        for fi in 0..module.functions.len() {
            for bi in 0..module.functions[fi].blocks.len() {
                let body = std::mem::take(&mut module.functions[fi].blocks[bi].insts);
                for inst in body {
                    if !needs_extended_types(&types, &inst) {
                        module.functions[fi].blocks[bi].insts.push(inst);
                        continue;
                    }
                    outcome.count(inst.opcode);
                    let site = module.site(&inst);
                    let index = module.functions[fi].blocks[bi].insts.len();
                    let mut b = Builder::new(module, Cursor { function: fi, block: bi, index }).with_origin(inst.origin);
                    let v = lower(&mut b, &types, &inst).map_err(|message| Error::Invalid { site, message })?;
                    let ty = inst.ty()?;
                    b.insert(Inst::new(Op::CopyObject, Some(ty), inst.result_id, vec![Operand::Id(v)]));
                }
            }
        }
        Ok(outcome)
    }
}

/// The first instruction of `module` that needs `shaderSubgroupExtendedTypes`, if any.
pub fn first_user(module: &Module) -> Option<&Inst> {
    let types = Types::new(module);
    module.functions.iter().flat_map(|f| f.insts()).find(|i| needs_extended_types(&types, i))
}

/// Whether a type is, or is a vector of, an 8-, 16- or 64-bit number.
fn extended(types: &Types, ty: Word) -> bool {
    let comp = types.vector(ty).map_or(ty, |v| v.0);
    types.scalar_width(comp).is_some_and(|w| w != 32)
}

/// Whether `inst` is a non-uniform group operation whose result or value operand has an
/// extended type (what `shaderSubgroupExtendedTypes` covers).
pub fn needs_extended_types(types: &Types, inst: &Inst) -> bool {
    let group = (Op::GroupNonUniformElect as u32..=Op::GroupNonUniformQuadSwap as u32).contains(&inst.opcode) || inst.opcode == Op::GroupNonUniformRotateKHR as u32;
    group && (inst.result_type.is_some_and(|t| extended(types, t)) || inst.operands.iter().filter_map(Operand::id).filter_map(|v| types.type_of(v)).any(|t| extended(types, t)))
}

fn lower(b: &mut Builder<'_>, types: &Types, inst: &Inst) -> std::result::Result<Word, String> {
    let op = inst.op().unwrap_or(Op::Nop);
    let ty = inst.ty().map_err(|e| e.to_string())?;
    let uint = b.module.type_int(32, false);
    let boolean = b.module.type_bool();
    let operand = |k: usize| inst.id(k).map_err(|e| e.to_string());
    match op {
        Op::GroupNonUniformBroadcast
        | Op::GroupNonUniformBroadcastFirst
        | Op::GroupNonUniformShuffle
        | Op::GroupNonUniformShuffleXor
        | Op::GroupNonUniformShuffleUp
        | Op::GroupNonUniformShuffleDown
        | Op::GroupNonUniformQuadBroadcast
        | Op::GroupNonUniformQuadSwap
        | Op::GroupNonUniformRotateKHR => {
            let words = to_words(b, types, ty, operand(1)?).ok_or("a value sub-group operations cannot move as 32-bit words")?;
            let moved: Vec<Word> = words
                .into_iter()
                .map(|w| {
                    let mut operands = inst.operands.clone();
                    operands[1] = Operand::Id(w);
                    b.emit(op, uint, operands)
                })
                .collect();
            from_words(b, types, ty, &moved).ok_or_else(|| "a value sub-group operations cannot move as 32-bit words".into())
        }
        Op::GroupNonUniformAllEqual => {
            let x = operand(1)?;
            let xt = types.type_of(x).ok_or("an operand without a type")?;
            let words = to_words(b, types, xt, x).ok_or("a value sub-group operations cannot compare as 32-bit words")?;
            let mut all = None;
            for w in words {
                let mut operands = inst.operands.clone();
                operands[1] = Operand::Id(w);
                let eq = b.emit(op, boolean, operands);
                all = Some(match all {
                    None => eq,
                    Some(a) => b.op(Op::LogicalAnd, boolean, &[a, eq]),
                });
            }
            all.ok_or_else(|| "an empty value".into())
        }
        _ => {
            let Some((c, ident)) = combine_of(op) else {
                return Err(format!("{} on 8-, 16- or 64-bit values needs shaderSubgroupExtendedTypes, which has no lowering", inst.name()));
            };
            let group_op = inst.word(1).map_err(|e| e.to_string())?;
            let x = operand(2)?;
            let (comp, n) = types.vector(ty).unwrap_or((ty, 1));
            let width = types.scalar_width(comp).unwrap_or(0);
            let cluster = if group_op == GroupOperation::ClusteredReduce as u32 {
                Some(inst.id(3).ok().and_then(|c| types.const_u32(c)).filter(|c| c.is_power_of_two()).ok_or("a clustered reduction whose cluster size is not a constant power of two")?)
            } else {
                None
            };
            let supported = [GroupOperation::Reduce, GroupOperation::InclusiveScan, GroupOperation::ExclusiveScan, GroupOperation::ClusteredReduce].map(|g| g as u32);
            if !supported.contains(&group_op) {
                return Err(format!("{} with a partitioned group operation on 8-, 16- or 64-bit values (shaderSubgroupExtendedTypes)", inst.name()));
            }
            if width < 32 {
                // The same operation on 32-bit values.
                let float = types.float(comp).is_some();
                let wide_comp = if float { b.module.type_float(32) } else { uint };
                let wide = if n == 1 { wide_comp } else { b.module.type_vector(wide_comp, n) };
                let signed = matches!(op, Op::GroupNonUniformSMin | Op::GroupNonUniformSMax);
                let widen = if float {
                    Op::FConvert
                } else if signed {
                    Op::SConvert
                } else {
                    Op::UConvert
                };
                let wx = b.op(widen, wide, &[x]);
                let mut operands = inst.operands.clone();
                operands[2] = Operand::Id(wx);
                let mut r = b.emit(op, wide, operands);
                if signed {
                    let glsl = b.module.ext_inst_import("GLSL.std.450");
                    let splat = |b: &mut Builder<'_>, v: u32| {
                        let c = b.module.constant_u32(v);
                        if n == 1 {
                            c
                        } else {
                            b.module.constant_composite(wide, &vec![c; n as usize])
                        }
                    };
                    let low = splat(b, (-(1i64 << (width - 1))) as u32);
                    let high = splat(b, (1u32 << (width - 1)) - 1);
                    r = b.emit(Op::ExtInst, wide, vec![Operand::Id(glsl), Operand::Literal(GLOp::SClamp as u32), Operand::Id(r), Operand::Id(low), Operand::Id(high)]);
                }
                return Ok(b.op(if float { Op::FConvert } else { Op::SConvert }, ty, &[r]));
            }
            let id = identity(b, types, ty, ident);
            steps(b, types, ty, c, group_op, cluster, x, id)
        }
    }
}

/// A reduction (a butterfly of `ShuffleXor`, within `cluster` lanes where given) or a scan
/// (Hillis-Steele steps of `ShuffleUp`) of `x`, its words shuffled as 32-bit values; steps at or
/// past the sub-group size (up to 128) are discarded.
#[allow(clippy::too_many_arguments)]
pub(crate) fn steps(b: &mut Builder<'_>, types: &Types, ty: Word, c: Combine, group_op: u32, cluster: Option<u32>, x: Word, identity: Word) -> std::result::Result<Word, String> {
    let uint = b.module.type_int(32, false);
    let boolean = b.module.type_bool();
    let subgroup = b.module.constant_u32(Scope::Subgroup as u32);
    let glsl = b.module.ext_inst_import("GLSL.std.450");
    let size = builtin(b, BuiltIn::SubgroupSize);
    let lane = builtin(b, BuiltIn::SubgroupLocalInvocationId);
    let shuffle = |b: &mut Builder<'_>, op: Op, v: Word, delta: Word| -> std::result::Result<Word, String> {
        let words = to_words(b, types, ty, v).ok_or("a value sub-group operations cannot move as 32-bit words")?;
        let moved: Vec<Word> = words.into_iter().map(|w| b.op(op, uint, &[subgroup, w, delta])).collect();
        from_words(b, types, ty, &moved).ok_or_else(|| "a value sub-group operations cannot move as 32-bit words".into())
    };
    let reduce = group_op == GroupOperation::Reduce as u32 || group_op == GroupOperation::ClusteredReduce as u32;
    let mut acc = x;
    for step in [1u32, 2, 4, 8, 16, 32, 64] {
        if cluster.is_some_and(|c| step >= c) {
            break;
        }
        let d = b.module.constant_u32(step);
        let within = b.op(Op::ULessThan, boolean, &[d, size]);
        if reduce {
            let other = shuffle(b, Op::GroupNonUniformShuffleXor, acc, d)?;
            let combined = c.apply(b, glsl, ty, acc, other);
            acc = select(b, types, ty, within, combined, acc);
        } else {
            let other = shuffle(b, Op::GroupNonUniformShuffleUp, acc, d)?;
            let combined = c.apply(b, glsl, ty, other, acc);
            let has = b.op(Op::UGreaterThanEqual, boolean, &[lane, d]);
            let take = b.op(Op::LogicalAnd, boolean, &[within, has]);
            acc = select(b, types, ty, take, combined, acc);
        }
    }
    if group_op == GroupOperation::ExclusiveScan as u32 {
        let one = b.module.constant_u32(1);
        let before = shuffle(b, Op::GroupNonUniformShuffleUp, acc, one)?;
        let zero = b.module.constant_u32(0);
        let first = b.op(Op::IEqual, boolean, &[lane, zero]);
        acc = select(b, types, ty, first, identity, before);
    }
    Ok(acc)
}

/// `cond ? x : y` for values of type `ty`, the boolean repeated for vectors (SPIR-V before 1.4
/// selects vectors by vectors of booleans only).
fn select(b: &mut Builder<'_>, types: &Types, ty: Word, cond: Word, x: Word, y: Word) -> Word {
    let cond = match types.vector(ty) {
        Some((_, n)) => {
            let boolean = b.module.type_bool();
            let bvec = b.module.type_vector(boolean, n);
            b.op(Op::CompositeConstruct, bvec, &vec![cond; n as usize])
        }
        None => cond,
    };
    b.select(ty, cond, x, y)
}
