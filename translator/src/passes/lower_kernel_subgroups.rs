//! `LowerKernelSubgroups`: OpenCL sub-group operations -> Vulkan's non-uniform group operations
//! and plain memory accesses.
//!
//! Rewrite, in place (the result id stays):
//! - `cl_khr_subgroups` as producers write it (`Groups`): `OpGroup{I,F}Add`, `OpGroup{F,S,U}Min`,
//!   `OpGroup{F,S,U}Max` at `Subgroup` scope (reduce, inclusive and exclusive scan) become their
//!   `OpGroupNonUniform*` twins; `OpGroupAny`/`OpGroupAll` become `OpGroupNonUniformAny`/`All`;
//!   `OpGroupBroadcast` becomes `OpGroupNonUniformShuffle` (its invocation id need not be a
//!   constant).
//! - SPV_INTEL_subgroups: `OpSubgroupShuffleINTEL` and `OpSubgroupShuffleXorINTEL` become
//!   `OpGroupNonUniformShuffle` and `OpGroupNonUniformShuffleXor`; `OpSubgroupShuffleDownINTEL`
//!   (`current`, `next`, `delta`) reads `current` at `id + delta` and `next` at
//!   `id + delta - size` past the end, `OpSubgroupShuffleUpINTEL` (`previous`, `current`,
//!   `delta`) reads `current` at `id - delta` and `previous` at `size + id - delta` before the
//!   start, both with two shuffles and a select; `OpSubgroupBlockReadINTEL` and
//!   `OpSubgroupBlockWriteINTEL` become one load or store per component, invocation `i`'s
//!   component `k` at element `i + k * size` of the pointer (the block layout of the extension).
//!   The buffer-pointer and local-memory passes then lower those accesses like any other.
//! - The capabilities and extension that only these instructions needed go.
//!
//! Preconditions: the module declares `Kernel`; runs before `lower-kernel-interface` and after
//! `lower-work-group-collectives` (which takes the group operations at `Workgroup` scope).
//! Group operations at other scopes (non-uniform ones at any scope but Subgroup) and the image
//! block reads and writes are errors naming them. Operand types (shuffled values of the result type, integer ids, masks and deltas) are
//! checked before any pass runs (`input_checks`).

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::{Builder, Cursor};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use rspirv::grammar::OperandKind;
use spirv::{BuiltIn, Capability, Op, Scope, Word};

pub struct LowerKernelSubgroups;

fn is_subgroup_op(op: Option<Op>) -> bool {
    use Op::*;
    matches!(
        op,
        Some(
            GroupIAdd
                | GroupFAdd
                | GroupFMin
                | GroupUMin
                | GroupSMin
                | GroupFMax
                | GroupUMax
                | GroupSMax
                | GroupAny
                | GroupAll
                | GroupBroadcast
                | SubgroupShuffleINTEL
                | SubgroupShuffleDownINTEL
                | SubgroupShuffleUpINTEL
                | SubgroupShuffleXorINTEL
                | SubgroupBlockReadINTEL
                | SubgroupBlockWriteINTEL
                | SubgroupImageBlockReadINTEL
                | SubgroupImageBlockWriteINTEL
                | SubgroupImageMediaBlockReadINTEL
                | SubgroupImageMediaBlockWriteINTEL
        )
    )
}

impl Pass for LowerKernelSubgroups {
    fn name(&self) -> &'static str {
        "lower-kernel-subgroups"
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
        // Kernels may run non-uniform group operations at Workgroup scope too; Vulkan runs them
        // per sub-group only.
        use crate::passes::virtualize_subgroup_size::{is_group_non_uniform, subgroup_scope};
        for inst in module.functions.iter().flat_map(|f| f.insts()) {
            if is_group_non_uniform(inst.opcode) && !subgroup_scope(&types, inst, 0) {
                return Err(Error::Invalid { site: module.site(inst), message: "a non-uniform group operation at a scope other than Subgroup (Vulkan runs them per sub-group only)".into() });
            }
        }
        if !module.functions.iter().flat_map(|f| &f.blocks).flat_map(|b| &b.insts).any(|i| is_subgroup_op(i.op())) {
            return Ok(outcome);
        }
        for f in 0..module.functions.len() {
            for b in 0..module.functions[f].blocks.len() {
                let body = std::mem::take(&mut module.functions[f].blocks[b].insts);
                for inst in body {
                    if !is_subgroup_op(inst.op()) {
                        module.functions[f].blocks[b].insts.push(inst);
                        continue;
                    }
                    outcome.count(inst.opcode);
                    let index = module.functions[f].blocks[b].insts.len();
                    let mut bl = Builder::new(module, Cursor { function: f, block: b, index }).with_origin(inst.origin);
                    if let Some(v) = lower(&mut bl, &types, &inst)? {
                        let ty = inst.ty()?;
                        bl.insert(Inst::new(Op::CopyObject, Some(ty), inst.result_id, vec![Operand::Id(v)]));
                    }
                }
            }
        }
        let gone = [Capability::Groups, Capability::SubgroupShuffleINTEL, Capability::SubgroupBufferBlockIOINTEL, Capability::SubgroupImageBlockIOINTEL, Capability::SubgroupImageMediaBlockIOINTEL];
        module.capabilities.retain(|c| !gone.iter().any(|g| c.word_opt(0) == Some(*g as u32)));
        module.extensions.retain(|e| e.string(0).as_deref() != Some("SPV_INTEL_subgroups"));
        Ok(outcome)
    }
}

fn invalid(b: &Builder<'_>, inst: &Inst, message: &str) -> Error {
    Error::Invalid { site: b.module.site(inst), message: message.to_string() }
}

/// The kernel's `SubgroupLocalInvocationId` or `SubgroupSize` (an `Input` `uint` the
/// interface pass lowers with the others).
pub(crate) fn builtin(b: &mut Builder<'_>, which: BuiltIn) -> Word {
    let uint = b.module.type_int(32, false);
    builtin_as(b, which, uint)
}

/// Built-in `which` as a value of `ty` (`uint`, or `uvec3` for the id vectors): its `Input`
/// variable, added when the module has none, loaded and narrowed where the producer declared
/// 64-bit components.
pub(crate) fn builtin_as(b: &mut Builder<'_>, which: BuiltIn, ty: Word) -> Word {
    let var = b.module.get_or_add_builtin(which, ty);
    let declared = b.module.variable_pointee(var).unwrap_or(ty);
    let v = b.load(declared, var);
    if declared == ty {
        v
    } else {
        b.op(Op::UConvert, ty, &[v])
    }
}

fn lower(b: &mut Builder<'_>, types: &Types, inst: &Inst) -> Result<Option<Word>> {
    let op = inst.op().unwrap_or(Op::Nop);
    let uint = b.module.type_int(32, false);
    let boolean = b.module.type_bool();
    let subgroup = b.module.constant_u32(Scope::Subgroup as u32);
    let scope_ok = |b: &Builder<'_>| -> Result<()> {
        let id = inst.id(0)?;
        let s = types.const_u32(id);
        if s.is_none() {
            return Err(invalid(b, inst, &format!("operand 0 (scope) %{id} is not a constant")));
        }
        if s != Some(Scope::Subgroup as u32) {
            return Err(invalid(b, inst, "a group operation at a scope other than Subgroup and Workgroup"));
        }
        Ok(())
    };
    let to_u32 = |b: &mut Builder<'_>, v: Word| -> Word {
        match types.type_of(v).and_then(|t| types.int(t)) {
            Some((32, false)) | None => v,
            Some((32, true)) => b.bitcast(uint, v),
            Some(_) => b.op(Op::UConvert, uint, &[v]),
        }
    };
    use Op::*;
    Ok(Some(match op {
        GroupIAdd | GroupFAdd | GroupFMin | GroupUMin | GroupSMin | GroupFMax | GroupUMax | GroupSMax => {
            scope_ok(b)?;
            let nu = match op {
                GroupIAdd => GroupNonUniformIAdd,
                GroupFAdd => GroupNonUniformFAdd,
                GroupFMin => GroupNonUniformFMin,
                GroupUMin => GroupNonUniformUMin,
                GroupSMin => GroupNonUniformSMin,
                GroupFMax => GroupNonUniformFMax,
                GroupUMax => GroupNonUniformUMax,
                _ => GroupNonUniformSMax,
            };
            let group_op = inst.word(1)?;
            let x = inst.id(2)?;
            b.emit(nu, inst.ty()?, vec![Operand::Id(subgroup), Operand::Enum(OperandKind::GroupOperation, group_op), Operand::Id(x)])
        }
        GroupAny | GroupAll => {
            scope_ok(b)?;
            let p = inst.id(1)?;
            b.op(if op == GroupAny { GroupNonUniformAny } else { GroupNonUniformAll }, boolean, &[subgroup, p])
        }
        GroupBroadcast => {
            scope_ok(b)?;
            let (x, id) = (inst.id(1)?, inst.id(2)?);
            if types.vector(types.type_of(id).unwrap_or(0)).is_some() {
                return Err(invalid(b, inst, "a sub-group broadcast with a vector invocation id"));
            }
            let id = to_u32(b, id);
            b.op(GroupNonUniformShuffle, inst.ty()?, &[subgroup, x, id])
        }
        SubgroupShuffleINTEL => {
            let (x, id) = (inst.id(0)?, inst.id(1)?);
            let id = to_u32(b, id);
            b.op(GroupNonUniformShuffle, inst.ty()?, &[subgroup, x, id])
        }
        SubgroupShuffleXorINTEL => {
            let (x, mask) = (inst.id(0)?, inst.id(1)?);
            let mask = to_u32(b, mask);
            b.op(GroupNonUniformShuffleXor, inst.ty()?, &[subgroup, x, mask])
        }
        SubgroupShuffleDownINTEL | SubgroupShuffleUpINTEL => {
            let ty = inst.ty()?;
            let (first, second, delta) = (inst.id(0)?, inst.id(1)?, inst.id(2)?);
            let delta = to_u32(b, delta);
            let lid = builtin(b, BuiltIn::SubgroupLocalInvocationId);
            let size = builtin(b, BuiltIn::SubgroupSize);
            let zero = b.module.constant_u32(0);
            if op == SubgroupShuffleDownINTEL {
                // j = id + delta: current[j] inside, next[j - size] past the end.
                let j = b.iadd(uint, lid, delta);
                let inside = b.op(ULessThan, boolean, &[j, size]);
                let ja = b.select(uint, inside, j, zero);
                let jb0 = b.op(ISub, uint, &[j, size]);
                let jb = b.select(uint, inside, zero, jb0);
                let a = b.op(GroupNonUniformShuffle, ty, &[subgroup, first, ja]);
                let c = b.op(GroupNonUniformShuffle, ty, &[subgroup, second, jb]);
                b.select(ty, inside, a, c)
            } else {
                // id >= delta: current[id - delta]; before the start: previous[size + id - delta].
                let inside = b.op(UGreaterThanEqual, boolean, &[lid, delta]);
                let j = b.op(ISub, uint, &[lid, delta]);
                let ja = b.select(uint, inside, j, zero);
                let jb0 = b.iadd(uint, size, j);
                let jb = b.select(uint, inside, zero, jb0);
                let a = b.op(GroupNonUniformShuffle, ty, &[subgroup, second, ja]);
                let c = b.op(GroupNonUniformShuffle, ty, &[subgroup, first, jb]);
                b.select(ty, inside, a, c)
            }
        }
        SubgroupBlockReadINTEL | SubgroupBlockWriteINTEL => {
            let ptr = inst.id(0)?;
            let ptr_ty = types.type_of(ptr).ok_or_else(|| invalid(b, inst, "a block read or write of a value that is not a pointer"))?;
            let elem = types.defs.get(&ptr_ty).and_then(|d| d.id(1).ok()).ok_or_else(|| invalid(b, inst, "a block read or write of a value that is not a pointer"))?;
            let data_ty = if op == SubgroupBlockReadINTEL { inst.ty()? } else { types.type_of(inst.id(1)?).unwrap_or(0) };
            let (comp, count) = types.vector(data_ty).unwrap_or((data_ty, 1));
            if comp != elem && types.int(comp).map(|i| i.0) != types.int(elem).map(|i| i.0) {
                return Err(invalid(b, inst, "a block read or write whose data and pointer element types differ"));
            }
            let lid = builtin(b, BuiltIn::SubgroupLocalInvocationId);
            let size = builtin(b, BuiltIn::SubgroupSize);
            let aligned = spirv::MemoryAccess::ALIGNED.bits();
            let bytes = types.int(elem).map_or(4, |i| i.0 / 8);
            let mut parts = Vec::new();
            for k in 0..count {
                let kc = b.module.constant_u32(k);
                let ks = b.imul(uint, kc, size);
                let idx = b.iadd(uint, lid, ks);
                let p = b.op(InBoundsPtrAccessChain, ptr_ty, &[ptr, idx]);
                if op == SubgroupBlockReadINTEL {
                    let v = b.emit(Load, elem, vec![Operand::Id(p), Operand::Enum(OperandKind::MemoryAccess, aligned), Operand::Literal(bytes)]);
                    parts.push(if elem == comp { v } else { b.bitcast(comp, v) });
                } else {
                    let data = inst.id(1)?;
                    let v = if count == 1 { data } else { b.composite_extract(comp, data, k) };
                    let v = if elem == comp { v } else { b.bitcast(elem, v) };
                    b.emit_void(Store, vec![Operand::Id(p), Operand::Id(v), Operand::Enum(OperandKind::MemoryAccess, aligned), Operand::Literal(bytes)]);
                }
            }
            if op == SubgroupBlockWriteINTEL {
                return Ok(None);
            }
            if count == 1 {
                parts[0]
            } else {
                b.op(CompositeConstruct, data_ty, &parts)
            }
        }
        _ => return Err(invalid(b, inst, "image block reads and writes (SPV_INTEL_subgroups with images) have no Vulkan lowering")),
    }))
}
