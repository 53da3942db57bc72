//! `LowerWorkGroupCollectives`: OpenCL work-group collectives (`work_group_reduce_*`,
//! `work_group_scan_*`, `work_group_broadcast`, `work_group_all`/`any`, which producers write as
//! `OpGroup*` at `Workgroup` scope) -> sub-group operations and a scratch array in workgroup
//! memory.
//!
//! Rewrite, in place (the result id stays), for 32- and 64-bit integer and float values (and
//! `half` ones, widened to `float` and rounded back once; broadcasts of 8- and 16-bit values
//! travel zero-extended):
//! - **reduce**: each sub-group reduces its values (`OpGroupNonUniform*` `Reduce`; for 64-bit
//!   values, which need `shaderSubgroupExtendedTypes` there, shuffles of their words), one elected
//!   invocation per sub-group writes the result to `scratch[SubgroupId]`, and after a work-group
//!   barrier every invocation folds `scratch[0 .. NumSubgroups)` in order;
//! - **inclusive and exclusive scans**: the sub-group scan, combined with the fold of the
//!   reductions of the sub-groups before the invocation's own (the operation's identity for the
//!   first);
//! - **broadcast**: the invocation whose `LocalInvocationIndex` is the given id (or whose
//!   `LocalInvocationId` is the given 2- or 3-dimensional id) writes its value to `scratch[0]`,
//!   and every invocation reads it after a barrier;
//! - **all** and **any**: a reduction of 0/1 with unsigned minimum and maximum.
//!
//! A barrier after each read leaves the scratch array free for the next collective. The values
//! travel as `u32` bit patterns, 64-bit ones as two; `scratch` holds one value per sub-group
//! (256: 1,024 invocations in sub-groups of 4).
//!
//! Preconditions: the module declares `Kernel`; runs before `lower-kernel-subgroups` and the
//! interface pass (which lowers the built-ins this pass reads). As OpenCL requires, every
//! work-item of the work-group reaches each collective. Scans need sub-groups made of
//! consecutive local invocation indices, in order (as on the devices this project runs on).
//! Refused by name: values other than the scalars above.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::lower_kernel_subgroups::{builtin, builtin_as};
use crate::passes::lower_subgroup_extended_types::steps;
use crate::passes::virtualize_subgroup_size::Combine;
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
        let wide = module.functions.iter().flat_map(|f| f.insts()).filter(|i| collective(i)).any(|i| i.result_type.is_some_and(|t| words_of(&types, t) == Some(2)));
        let words = module.constant_u32(if wide { 2 * SCRATCH_WORDS } else { SCRATCH_WORDS });
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
/// GLSL.std.450), and its identity as a 64-bit pattern (the low word for 32-bit values).
struct Arith {
    subgroup: Op,
    combine: Combine,
    identity32: u32,
    identity64: u64,
}

fn arith(op: Op) -> Arith {
    use spirv::GlslStd450Op as G;
    let (subgroup, combine, identity32, identity64) = match op {
        Op::GroupIAdd => (Op::GroupNonUniformIAdd, Combine::Op(Op::IAdd), 0, 0),
        Op::GroupFAdd => (Op::GroupNonUniformFAdd, Combine::Op(Op::FAdd), 0, 0),
        Op::GroupFMin => (Op::GroupNonUniformFMin, Combine::Glsl(G::FMin as u32), f32::INFINITY.to_bits(), f64::INFINITY.to_bits()),
        Op::GroupFMax => (Op::GroupNonUniformFMax, Combine::Glsl(G::FMax as u32), f32::NEG_INFINITY.to_bits(), f64::NEG_INFINITY.to_bits()),
        Op::GroupUMin => (Op::GroupNonUniformUMin, Combine::Glsl(G::UMin as u32), u32::MAX, u64::MAX),
        Op::GroupUMax => (Op::GroupNonUniformUMax, Combine::Glsl(G::UMax as u32), 0, 0),
        Op::GroupSMin => (Op::GroupNonUniformSMin, Combine::Glsl(G::SMin as u32), i32::MAX as u32, i64::MAX as u64),
        _ => (Op::GroupNonUniformSMax, Combine::Glsl(G::SMax as u32), i32::MIN as u32, i64::MIN as u64),
    };
    Arith { subgroup, combine, identity32, identity64 }
}

/// The 32-bit words a value of scalar type `ty` travels in: 1 or 2; `None` for other types.
fn words_of(types: &Types, ty: Word) -> Option<u32> {
    let w = types.int(ty).map(|(w, _)| w).or_else(|| types.float(ty).filter(|f| f.1.is_none()).map(|f| f.0))?;
    match w {
        32 => Some(1),
        64 => Some(2),
        _ => None,
    }
}

/// Writes `v` (of type `ty`, `k` words) to value slot `index` of the scratch array: words
/// `index * k ..`.
fn put(b: &mut Builder<'_>, scratch: Word, index: Word, v: Word, ty: Word, k: u32) {
    let uint = b.module.type_int(32, false);
    let words = if k == 1 {
        retype(b, v, ty, uint)
    } else {
        let pair = b.module.type_vector(uint, k);
        b.bitcast(pair, v)
    };
    for j in 0..k {
        let w = if k == 1 { words } else { b.composite_extract(uint, words, j) };
        let at = word_index(b, index, k, j);
        let p = slot(b, scratch, at);
        b.store(p, w);
    }
}

/// The value of type `ty` (`k` words) in value slot `index` of the scratch array.
fn get(b: &mut Builder<'_>, scratch: Word, index: Word, ty: Word, k: u32) -> Word {
    let uint = b.module.type_int(32, false);
    let words: Vec<Word> = (0..k)
        .map(|j| {
            let at = word_index(b, index, k, j);
            let p = slot(b, scratch, at);
            b.load(uint, p)
        })
        .collect();
    if k == 1 {
        return retype(b, words[0], uint, ty);
    }
    let pair = b.module.type_vector(uint, k);
    let joined = b.op(Op::CompositeConstruct, pair, &words);
    b.bitcast(ty, joined)
}

/// Word `j` of value slot `index` for values of `k` words: `index * k + j`.
fn word_index(b: &mut Builder<'_>, index: Word, k: u32, j: u32) -> Word {
    if k == 1 {
        return index;
    }
    let uint = b.module.type_int(32, false);
    let kc = b.module.constant_u32(k);
    let first = b.imul(uint, index, kc);
    if j == 0 {
        return first;
    }
    let jc = b.module.constant_u32(j);
    b.iadd(uint, first, jc)
}

/// `x <c> y` (GLSL.std.450 imported only where `c` needs it).
fn combine(b: &mut Builder<'_>, c: Combine, ty: Word, x: Word, y: Word) -> Word {
    let glsl = match c {
        Combine::Glsl(_) => b.module.ext_inst_import("GLSL.std.450"),
        Combine::Op(_) => 0,
    };
    c.apply(b, glsl, ty, x, y)
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

/// `fold(scratch[0 .. end))` with `c`, starting from `start` (values of type `ty`, `k` words
/// each).
fn fold(b: &mut Builder<'_>, scratch: Word, ty: Word, k: u32, c: Combine, start: Word, end: Word) -> Word {
    let acc = b.function_variable(ty);
    b.store(acc, start);
    let zero = b.module.constant_u32(0);
    b.counted_loop(zero, end, |b, j| {
        let v = get(b, scratch, j, ty, k);
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
    let words = words_of(types, ty);
    match op {
        Op::GroupBroadcast => {
            // 8- and 16-bit values travel zero-extended.
            let narrow = words.is_none() && matches!(types.scalar_width(ty), Some(8 | 16));
            let (k, ty) = match words {
                Some(k) => (k, ty),
                None if narrow => (1, uint),
                None => return Err(invalid(b, inst, "a work-group broadcast of a value other than an 8- to 64-bit scalar")),
            };
            let (x, id) = (inst.id(1)?, inst.id(2)?);
            let orig = inst.ty()?;
            let x = if narrow {
                let bits = match types.float(orig) {
                    Some((w, _)) => {
                        let int = b.module.type_int(w, false);
                        b.bitcast(int, x)
                    }
                    None => x,
                };
                b.op(Op::UConvert, uint, &[bits])
            } else {
                x
            };
            let id_ty = types.type_of(id).unwrap_or(0);
            let id_component = types.vector(id_ty).map_or(id_ty, |(c, _)| c);
            if types.int(id_component).is_none() {
                return Err(invalid(b, inst, "a work-group broadcast whose local id is not an integer scalar or vector"));
            }
            let as_uint = |b: &mut Builder<'_>, v: Word, t: Word| match types.int(t) {
                Some((32, _)) => retype(b, v, t, uint),
                _ => b.op(Op::UConvert, uint, &[v]),
            };
            let chosen = match types.vector(id_ty) {
                None => {
                    let id = as_uint(b, id, id_ty);
                    let me = builtin(b, BuiltIn::LocalInvocationIndex);
                    b.op(Op::IEqual, boolean, &[me, id])
                }
                Some((component, n)) => {
                    // (x, y[, z]) against LocalInvocationId, component by component.
                    let uvec3 = b.module.type_vector(uint, 3);
                    let me = builtin_as(b, BuiltIn::LocalInvocationId, uvec3);
                    let mut all = None;
                    for c in 0..n {
                        let want = b.composite_extract(component, id, c);
                        let want = as_uint(b, want, component);
                        let have = b.composite_extract(uint, me, c);
                        let eq = b.op(Op::IEqual, boolean, &[have, want]);
                        all = Some(match all {
                            None => eq,
                            Some(a) => b.op(Op::LogicalAnd, boolean, &[a, eq]),
                        });
                    }
                    all.ok_or_else(|| invalid(b, inst, "a work-group broadcast with an empty local id"))?
                }
            };
            b.if_then(chosen, |b| {
                let zero = b.module.constant_u32(0);
                put(b, scratch, zero, x, ty, k);
            });
            barrier(b);
            let zero = b.module.constant_u32(0);
            let v = get(b, scratch, zero, ty, k);
            barrier(b);
            if !narrow {
                return Ok(v);
            }
            let w = types.scalar_width(orig).unwrap_or(16);
            let int = b.module.type_int(w, false);
            let bits = b.op(Op::UConvert, int, &[v]);
            Ok(if int == orig { bits } else { b.bitcast(orig, bits) })
        }
        Op::GroupAny | Op::GroupAll => {
            // 0/1 per invocation, reduced with UMax (any) or UMin (all), then compared.
            let p = inst.id(1)?;
            let (one, zero) = (b.module.constant_u32(1), b.module.constant_u32(0));
            let bit = b.select(uint, p, one, zero);
            let reduce = if op == Op::GroupAny { Op::GroupUMax } else { Op::GroupUMin };
            let r = reduction(b, types, inst, scratch, uint, 1, reduce, GroupOperation::Reduce, bit)?;
            Ok(b.op(Op::INotEqual, boolean, &[r, zero]))
        }
        _ if words.is_none() && types.float(ty) == Some((16, None)) => {
            // `half`: the collective of the values widened to f32, rounded back once (min and max
            // are exact; sums are rounded once instead of at each step, which the operations'
            // unspecified order allows).
            let group_op = GroupOperation::from_u32(inst.word(1)?).ok_or_else(|| invalid(b, inst, "an unknown group operation"))?;
            if !matches!(group_op, GroupOperation::Reduce | GroupOperation::InclusiveScan | GroupOperation::ExclusiveScan) {
                return Err(invalid(b, inst, &format!("{} with group operation {group_op:?}", inst.name())));
            }
            let float = b.module.type_float(32);
            let x = b.op(Op::FConvert, float, &[inst.id(2)?]);
            let r = reduction(b, types, inst, scratch, float, 1, op, group_op, x)?;
            Ok(b.op(Op::FConvert, ty, &[r]))
        }
        _ => {
            let Some(k) = words else {
                return Err(invalid(b, inst, &format!("{} over values other than 32- and 64-bit scalars and halves", inst.name())));
            };
            let group_op = GroupOperation::from_u32(inst.word(1)?).ok_or_else(|| invalid(b, inst, "an unknown group operation"))?;
            if !matches!(group_op, GroupOperation::Reduce | GroupOperation::InclusiveScan | GroupOperation::ExclusiveScan) {
                return Err(invalid(b, inst, &format!("{} with group operation {group_op:?}", inst.name())));
            }
            reduction(b, types, inst, scratch, ty, k, op, group_op, inst.id(2)?)
        }
    }
}

/// The work-group reduction or scan `group_op` of `x` (of type `ty`, `k` words) under the
/// arithmetic of `op`, lowering the collective `inst`.
#[allow(clippy::too_many_arguments)]
fn reduction(b: &mut Builder<'_>, types: &Types, inst: &Inst, scratch: Word, ty: Word, k: u32, op: Op, group_op: GroupOperation, x: Word) -> Result<Word> {
    let subgroup = b.module.constant_u32(Scope::Subgroup as u32);
    let a = arith(op);
    let identity = if k == 1 {
        let uint = b.module.type_int(32, false);
        let c = b.module.constant_u32(a.identity32);
        retype(b, c, uint, ty)
    } else {
        let bits = a.identity64;
        b.module.intern(Op::Constant, Some(ty), vec![Operand::Literal(bits as u32), Operand::Literal((bits >> 32) as u32)])
    };
    let sub = |b: &mut Builder<'_>, g: GroupOperation| -> Result<Word> {
        if k == 1 {
            return Ok(b.emit(a.subgroup, ty, vec![Operand::Id(subgroup), Operand::Enum(OperandKind::GroupOperation, g as u32), Operand::Id(x)]));
        }
        // 64-bit sub-group arithmetic needs shaderSubgroupExtendedTypes: shuffle words.
        steps(b, types, ty, a.combine, g as u32, None, x, identity).map_err(|message| Error::Invalid { site: b.module.site(inst), message })
    };
    let reduced = sub(b, GroupOperation::Reduce)?;
    let scanned = if group_op != GroupOperation::Reduce { Some(sub(b, group_op)?) } else { None };
    let boolean = b.module.type_bool();
    let elected = b.op(Op::GroupNonUniformElect, boolean, &[subgroup]);
    let sid = builtin(b, BuiltIn::SubgroupId);
    b.if_then(elected, |b| put(b, scratch, sid, reduced, ty, k));
    barrier(b);
    let result = match scanned {
        None => {
            let n = builtin(b, BuiltIn::NumSubgroups);
            fold(b, scratch, ty, k, a.combine, identity, n)
        }
        Some(s) => {
            let before = fold(b, scratch, ty, k, a.combine, identity, sid);
            combine(b, a.combine, ty, before, s)
        }
    };
    barrier(b);
    Ok(result)
}
