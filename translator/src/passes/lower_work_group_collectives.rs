//! `LowerWorkGroupCollectives`: OpenCL work-group collectives (`work_group_reduce_*`,
//! `work_group_scan_*`, `work_group_broadcast`, `work_group_all`/`any`, which producers write as
//! `OpGroup*` at `Workgroup` scope) -> sub-group operations and a scratch array in workgroup
//! memory.
//!
//! Rewrite, in place (the result id stays), for 32-bit integer and float values:
//! - **reduce**: each sub-group reduces its values (`OpGroupNonUniform*` `Reduce`), one elected
//!   invocation per sub-group writes the result to `scratch[SubgroupId]`, and after a work-group
//!   barrier every invocation folds `scratch[0 .. NumSubgroups)` in order;
//! - **inclusive and exclusive scans**: the sub-group scan, combined with the fold of the
//!   reductions of the sub-groups before the invocation's own (the operation's identity for the
//!   first);
//! - **broadcast**: the invocation whose `LocalInvocationIndex` is the given id writes its value
//!   to `scratch[0]`, and every invocation reads it after a barrier;
//! - **all** and **any**: a reduction of 0/1 with unsigned minimum and maximum.
//!
//! A barrier after each read leaves the scratch array free for the next collective. The values
//! travel as `u32` bit patterns; `scratch` holds one per sub-group (256: 1,024 invocations in
//! sub-groups of 4).
//!
//! Preconditions: the module declares `Kernel`; runs before `lower-kernel-subgroups` and the
//! interface pass (which lowers the built-ins this pass reads). As OpenCL requires, every
//! work-item of the work-group reaches each collective. Scans need sub-groups made of
//! consecutive local invocation indices, in order (as on the devices this project runs on).
//! Refused by name: values other than 32-bit scalars, and broadcasts with a 2- or 3-dimensional
//! local id.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::lower_kernel_subgroups::builtin;
use crate::profile::DeviceCaps;
use rspirv::grammar::OperandKind;
use spirv::{BuiltIn, Capability, GroupOperation, MemorySemantics, Op, Scope, StorageClass, Word};

pub struct LowerWorkGroupCollectives;

/// One scratch word per sub-group of the largest work-group in the smallest sub-groups.
const SCRATCH_WORDS: u32 = 256;

impl Pass for LowerWorkGroupCollectives {
    fn name(&self) -> &'static str {
        "lower-work-group-collectives"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !module.has_capability(Capability::Kernel) {
            return Ok(outcome);
        }
        let types = Types::new(module);
        let collective = |i: &Inst| is_group_op(i.op()) && i.id(0).ok().and_then(|s| types.const_u32(s)) == Some(Scope::Workgroup as u32);
        if !module.functions.iter().flat_map(|f| f.insts()).any(collective) {
            return Ok(outcome);
        }
        let uint = module.type_int(32, false);
        let words = module.constant_u32(SCRATCH_WORDS);
        let array = module.type_array(uint, words);
        let ptr = module.type_pointer(StorageClass::Workgroup, array);
        let scratch = module.add_global_variable(ptr, StorageClass::Workgroup, None);
        let mut f = 0;
        while f < module.functions.len() {
            let mut b = 0;
            while b < module.functions[f].blocks.len() {
                let Some(i) = module.functions[f].blocks[b].insts.iter().position(collective) else {
                    b += 1;
                    continue;
                };
                let inst = module.functions[f].blocks[b].insts.remove(i);
                outcome.count(inst.opcode);
                let mut bld = Builder::new(module, Cursor { function: f, block: b, index: i }).with_origin(inst.origin);
                let v = lower(&mut bld, &types, &inst, scratch)?;
                bld.insert(Inst::new(Op::CopyObject, Some(inst.ty()?), inst.result_id, vec![Operand::Id(v)]));
                b = bld.cursor.block;
            }
            f += 1;
        }
        module.rebuild_entry_interfaces();
        Ok(outcome)
    }
}

fn is_group_op(op: Option<Op>) -> bool {
    use Op::*;
    matches!(op, Some(GroupIAdd | GroupFAdd | GroupFMin | GroupUMin | GroupSMin | GroupFMax | GroupUMax | GroupSMax | GroupAny | GroupAll | GroupBroadcast))
}

fn invalid(b: &Builder<'_>, inst: &Inst, message: &str) -> Error {
    Error::Invalid { site: b.module.site(inst), message: format!("{message} has no Vulkan lowering") }
}

/// The arithmetic of a collective: its sub-group twin, its combining instruction (plain or
/// GLSL.std.450), and its identity as a `u32` bit pattern.
struct Arith {
    subgroup: Op,
    combine: Combine,
    identity: u32,
}

#[derive(Clone, Copy)]
enum Combine {
    Op(Op),
    Ext(spirv::GlslStd450Op),
}

fn arith(op: Op) -> Arith {
    use spirv::GlslStd450Op as G;
    let (subgroup, combine, identity) = match op {
        Op::GroupIAdd => (Op::GroupNonUniformIAdd, Combine::Op(Op::IAdd), 0),
        Op::GroupFAdd => (Op::GroupNonUniformFAdd, Combine::Op(Op::FAdd), 0),
        Op::GroupFMin => (Op::GroupNonUniformFMin, Combine::Ext(G::FMin), f32::INFINITY.to_bits()),
        Op::GroupFMax => (Op::GroupNonUniformFMax, Combine::Ext(G::FMax), f32::NEG_INFINITY.to_bits()),
        Op::GroupUMin => (Op::GroupNonUniformUMin, Combine::Ext(G::UMin), u32::MAX),
        Op::GroupUMax => (Op::GroupNonUniformUMax, Combine::Ext(G::UMax), 0),
        Op::GroupSMin => (Op::GroupNonUniformSMin, Combine::Ext(G::SMin), i32::MAX as u32),
        _ => (Op::GroupNonUniformSMax, Combine::Ext(G::SMax), i32::MIN as u32),
    };
    Arith { subgroup, combine, identity }
}

fn combine(b: &mut Builder<'_>, c: Combine, ty: Word, x: Word, y: Word) -> Word {
    match c {
        Combine::Op(op) => b.op(op, ty, &[x, y]),
        Combine::Ext(e) => {
            let glsl = b.module.ext_inst_import("GLSL.std.450");
            b.emit(Op::ExtInst, ty, vec![Operand::Id(glsl), Operand::Literal(e as u32), Operand::Id(x), Operand::Id(y)])
        }
    }
}

fn barrier(b: &mut Builder<'_>) {
    let workgroup = b.module.constant_u32(Scope::Workgroup as u32);
    let semantics = b.module.constant_u32((MemorySemantics::ACQUIRE_RELEASE | MemorySemantics::WORKGROUP_MEMORY).bits());
    b.emit_void(Op::ControlBarrier, vec![Operand::Id(workgroup), Operand::Id(workgroup), Operand::Id(semantics)]);
}

/// Pointer to `scratch[index]`.
fn slot(b: &mut Builder<'_>, scratch: Word, index: Word) -> Word {
    let uint = b.module.type_int(32, false);
    let ptr = b.module.type_pointer(StorageClass::Workgroup, uint);
    b.access_chain(ptr, scratch, &[index])
}

/// `v` of 32-bit type `from` as a value of 32-bit type `to` (the same bits).
fn retype(b: &mut Builder<'_>, v: Word, from: Word, to: Word) -> Word {
    if from == to {
        v
    } else {
        b.bitcast(to, v)
    }
}

/// `fold(scratch[0 .. end))` with `c`, starting from `start` (values of type `ty`, stored as
/// `u32`).
fn fold(b: &mut Builder<'_>, scratch: Word, ty: Word, c: Combine, start: Word, end: Word) -> Word {
    let uint = b.module.type_int(32, false);
    let acc = b.function_variable(ty);
    b.store(acc, start);
    let zero = b.module.constant_u32(0);
    b.counted_loop(zero, end, |b, j| {
        let p = slot(b, scratch, j);
        let word = b.load(uint, p);
        let v = retype(b, word, uint, ty);
        let old = b.load(ty, acc);
        let new = combine(b, c, ty, old, v);
        b.store(acc, new);
    });
    b.load(ty, acc)
}

fn lower(b: &mut Builder<'_>, types: &Types, inst: &Inst, scratch: Word) -> Result<Word> {
    let op = inst.op().unwrap_or(Op::Nop);
    let uint = b.module.type_int(32, false);
    let boolean = b.module.type_bool();
    let ty = inst.ty()?;
    let scalar32 = types.int(ty).is_some_and(|(w, _)| w == 32) || types.float(ty) == Some((32, None));
    match op {
        Op::GroupBroadcast => {
            if !scalar32 {
                return Err(invalid(b, inst, "a work-group broadcast of a value other than a 32-bit scalar"));
            }
            let (x, id) = (inst.id(1)?, inst.id(2)?);
            let id_ty = types.type_of(id).unwrap_or(0);
            if types.vector(id_ty).is_some() {
                return Err(invalid(b, inst, "a work-group broadcast with a 2- or 3-dimensional local id"));
            }
            let id = match types.int(id_ty) {
                Some((32, false)) => id,
                Some((32, true)) => b.bitcast(uint, id),
                _ => b.op(Op::UConvert, uint, &[id]),
            };
            let me = builtin(b, BuiltIn::LocalInvocationIndex);
            let chosen = b.op(Op::IEqual, boolean, &[me, id]);
            let word = retype(b, x, ty, uint);
            b.if_then(chosen, |b| {
                let zero = b.module.constant_u32(0);
                let p = slot(b, scratch, zero);
                b.store(p, word);
            });
            barrier(b);
            let zero = b.module.constant_u32(0);
            let p = slot(b, scratch, zero);
            let word = b.load(uint, p);
            barrier(b);
            Ok(retype(b, word, uint, ty))
        }
        Op::GroupAny | Op::GroupAll => {
            // 0/1 per invocation, reduced with UMax (any) or UMin (all), then compared.
            let p = inst.id(1)?;
            let (one, zero) = (b.module.constant_u32(1), b.module.constant_u32(0));
            let bit = b.select(uint, p, one, zero);
            let reduce = if op == Op::GroupAny { Op::GroupUMax } else { Op::GroupUMin };
            let r = reduction(b, scratch, uint, reduce, GroupOperation::Reduce, bit);
            Ok(b.op(Op::INotEqual, boolean, &[r, zero]))
        }
        _ => {
            if !scalar32 {
                return Err(invalid(b, inst, &format!("{} over values other than 32-bit scalars", inst.name())));
            }
            let group_op = GroupOperation::from_u32(inst.word(1)?).ok_or_else(|| invalid(b, inst, "an unknown group operation"))?;
            if !matches!(group_op, GroupOperation::Reduce | GroupOperation::InclusiveScan | GroupOperation::ExclusiveScan) {
                return Err(invalid(b, inst, &format!("{} with group operation {group_op:?}", inst.name())));
            }
            Ok(reduction(b, scratch, ty, op, group_op, inst.id(2)?))
        }
    }
}

/// The work-group reduction or scan `group_op` of `x` (of type `ty`) under the arithmetic of
/// `op`.
fn reduction(b: &mut Builder<'_>, scratch: Word, ty: Word, op: Op, group_op: GroupOperation, x: Word) -> Word {
    let uint = b.module.type_int(32, false);
    let subgroup = b.module.constant_u32(Scope::Subgroup as u32);
    let a = arith(op);
    let sub = |b: &mut Builder<'_>, g: GroupOperation| b.emit(a.subgroup, ty, vec![Operand::Id(subgroup), Operand::Enum(OperandKind::GroupOperation, g as u32), Operand::Id(x)]);
    let reduced = sub(b, GroupOperation::Reduce);
    let scanned = (group_op != GroupOperation::Reduce).then(|| sub(b, group_op));
    let boolean = b.module.type_bool();
    let elected = b.op(Op::GroupNonUniformElect, boolean, &[subgroup]);
    let sid = builtin(b, BuiltIn::SubgroupId);
    let word = retype(b, reduced, ty, uint);
    b.if_then(elected, |b| {
        let p = slot(b, scratch, sid);
        b.store(p, word);
    });
    barrier(b);
    let identity = b.module.constant_u32(a.identity);
    let identity = retype(b, identity, uint, ty);
    let result = match scanned {
        None => {
            let n = builtin(b, BuiltIn::NumSubgroups);
            fold(b, scratch, ty, a.combine, identity, n)
        }
        Some(s) => {
            let before = fold(b, scratch, ty, a.combine, identity, sid);
            combine(b, a.combine, ty, before, s)
        }
    };
    barrier(b);
    result
}
