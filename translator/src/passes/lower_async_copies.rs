//! `LowerAsyncCopies`: OpenCL's work-group copies between global and local memory
//! (`async_work_group_copy`, `async_work_group_strided_copy`: `OpGroupAsyncCopy`) become plain
//! copies shared by the work-group, and waiting for them (`wait_group_events`:
//! `OpGroupWaitEvents`) a work-group barrier.
//!
//! Each work-item copies elements `lid, lid + size, ...` below the count (`lid` the local
//! linear id, `size` the work-group size), the stride applying to the global side, as the
//! OpenCL C specification defines the copy. Event values, the variables holding them and the
//! event types go (with the casts and lifetime markers that carry them): the copy is complete when it returns, and the barrier makes it visible to the
//! whole work-group, which is what waiting promises.
//!
//! Preconditions: a `Kernel` module (runs before `lower-kernel-interface`, which lowers the
//! built-ins the copy reads). Refused by name: a copy whose scope is not the work-group, and an
//! event used other than by copies, waits, and the variables, loads, stores and pointer casts
//! that carry it.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::builder::Builder;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{BuiltIn, Capability, MemorySemantics, Op, Scope, StorageClass, Word};
use std::collections::HashSet;

pub struct LowerAsyncCopies;

impl Pass for LowerAsyncCopies {
    fn name(&self) -> &'static str {
        "lower-async-copies"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !module.has_capability(Capability::Kernel) || !module.all_insts().any(|i| matches!(i.op(), Some(Op::GroupAsyncCopy | Op::GroupWaitEvents))) {
            return Ok(outcome);
        }
        let types = Types::new(module);
        while let Some(cursor) = module.functions.iter().enumerate().find_map(|(f, func)| {
            func.blocks.iter().enumerate().find_map(|(b, block)| block.insts.iter().position(|i| i.is(Op::GroupAsyncCopy)).map(|index| crate::ir::builder::Cursor { function: f, block: b, index }))
        }) {
            let inst = module.functions[cursor.function].blocks[cursor.block].insts.remove(cursor.index);
            copy(module, &types, cursor, &inst)?;
            outcome.count(Op::GroupAsyncCopy as u32);
        }
        let scope = module.constant_u32(Scope::Workgroup as u32);
        let semantics = module.constant_u32((MemorySemantics::ACQUIRE_RELEASE | MemorySemantics::WORKGROUP_MEMORY | MemorySemantics::UNIFORM_MEMORY).bits());
        module.for_each_inst_mut(|inst| {
            if inst.is(Op::GroupWaitEvents) {
                *inst = Inst::new(Op::ControlBarrier, None, None, vec![Operand::Id(scope), Operand::Id(scope), Operand::Id(semantics)]).from_origin(inst.origin);
                outcome.count(Op::GroupWaitEvents as u32);
            }
        });
        remove_events(module, &types)?;
        Ok(outcome)
    }
}

/// The copy loop of `inst` (an `OpGroupAsyncCopy`), at `cursor`.
fn copy(module: &mut Module, types: &Types, cursor: crate::ir::builder::Cursor, inst: &Inst) -> Result<()> {
    let [scope, dst, src, count, stride, _event] = inst.ids::<6>()?;
    let invalid = |module: &Module, message: &str| Error::Invalid { site: module.site(inst), message: message.into() };
    if types.const_u32(scope) != Some(Scope::Workgroup as u32) {
        return Err(invalid(module, "an asynchronous copy whose scope is not the work-group"));
    }
    let (Some((dst_class, element)), Some((src_class, _))) = (types.type_of(dst).and_then(|t| types.pointer(t)), types.type_of(src).and_then(|t| types.pointer(t))) else {
        return Err(invalid(module, "an asynchronous copy between values that are not pointers"));
    };
    if [count, stride].iter().any(|v| types.type_of(*v).and_then(|t| types.int(t)).is_none()) {
        return Err(invalid(module, "an asynchronous copy whose element count or stride is not an integer scalar"));
    }
    let (dst_ptr, src_ptr) = (types.type_of(dst).unwrap_or(0), types.type_of(src).unwrap_or(0));
    let local = StorageClass::Workgroup as u32;
    let (dst_strided, src_strided) = (dst_class != local, src_class != local);
    let ulong = module.type_int(64, false);
    let v3ulong = module.type_vector(ulong, 3);
    let lid_var = module.get_or_add_builtin(BuiltIn::LocalInvocationIndex, ulong);
    let size_var = module.get_or_add_builtin(BuiltIn::WorkgroupSize, v3ulong);
    let (Some(lid_ty), Some(size_ty)) = (module.variable_pointee(lid_var), module.variable_pointee(size_var)) else {
        return Err(invalid(module, "the local id and work-group size built-ins have no types"));
    };
    let mut b = Builder::new(module, cursor).with_origin(inst.origin);
    let uint = b.module.type_int(32, false);
    let narrow = |b: &mut Builder<'_>, v: Word, ty: Word| if ty == uint { v } else { b.op(Op::UConvert, uint, &[v]) };
    let lid = b.load(lid_ty, lid_var);
    let lid = narrow(&mut b, lid, lid_ty);
    let sizes = b.load(size_ty, size_var);
    let component = b.module.globals().iter().find(|t| t.result_id == Some(size_ty)).and_then(|t| t.id(0).ok()).unwrap_or(ulong);
    let mut size = None;
    for k in 0..3 {
        let s = b.composite_extract(component, sizes, k);
        let s = narrow(&mut b, s, component);
        size = Some(match size {
            None => s,
            Some(acc) => b.imul(uint, acc, s),
        });
    }
    let size = size.unwrap_or(lid);
    // `size_t` operands (64-bit under spir64) as 32 bits; 32-bit ones as they are.
    let count = b.to_32_bits(types, uint, count);
    let stride = b.to_32_bits(types, uint, stride);
    let one = b.module.constant_u32(1);
    let zero = b.module.constant_u32(0);
    let rounded = b.iadd(uint, count, size);
    let rounded = b.op(Op::ISub, uint, &[rounded, one]);
    let trips = b.op(Op::UDiv, uint, &[rounded, size]);
    b.counted_loop(zero, trips, |b, j| {
        let base = b.imul(uint, j, size);
        let i = b.iadd(uint, base, lid);
        let boolean = b.module.type_bool();
        let inside = b.op(Op::ULessThan, boolean, &[i, count]);
        b.if_then(inside, |b| {
            let strided = b.imul(uint, i, stride);
            let at = |strided_side: bool| if strided_side { strided } else { i };
            let s = b.op(Op::InBoundsPtrAccessChain, src_ptr, &[src, at(src_strided)]);
            let d = b.op(Op::InBoundsPtrAccessChain, dst_ptr, &[dst, at(dst_strided)]);
            let v = b.load(element, s);
            b.store(d, v);
        });
    });
    Ok(())
}

/// Removes event values, the variables and pointers that hold them, and the event types.
fn remove_events(module: &mut Module, types: &Types) -> Result<()> {
    let mut gone: HashSet<Word> = types.defs.iter().filter(|(_, d)| d.is(Op::TypeEvent)).map(|(id, _)| *id).collect();
    // Types and constants built on them, repeatedly.
    loop {
        let more: Vec<Word> = module
            .globals()
            .iter()
            .filter(|g| g.result_id.is_some_and(|r| !gone.contains(&r)) && (g.result_type.is_some_and(|t| gone.contains(&t)) || g.used_ids().any(|u| gone.contains(&u))))
            .filter_map(|g| g.result_id)
            .collect();
        if more.is_empty() {
            break;
        }
        gone.extend(more);
    }
    if gone.is_empty() {
        return Ok(());
    }
    // Instructions with event-typed results (copies' results are already gone), and stores
    // of events.
    for f in &mut module.functions {
        for b in &mut f.blocks {
            b.insts.retain(|i| {
                let event_result = i.result_type.is_some_and(|t| gone.contains(&t));
                let event_store = i.is(Op::Store) && i.used_ids().any(|u| gone.contains(&u) || types.type_of(u).is_some_and(|t| gone.contains(&t)));
                !(event_result || event_store)
            });
        }
    }
    let mut removed_values: HashSet<Word> = types.value_type.iter().filter(|(_, t)| gone.contains(t)).map(|(v, _)| *v).collect();
    // What only carries them: casts of their pointers (to bytes, for lifetime markers) and the
    // markers.
    let carriers = [Op::Bitcast, Op::CopyObject, Op::PtrCastToGeneric, Op::GenericCastToPtr, Op::LifetimeStart, Op::LifetimeStop];
    loop {
        let mut more = Vec::new();
        for f in &mut module.functions {
            for b in &mut f.blocks {
                b.insts.retain(|i| {
                    let carrier = i.op().is_some_and(|op| carriers.contains(&op)) && i.used_ids().any(|u| removed_values.contains(&u));
                    if carrier {
                        more.extend(i.result_id);
                    }
                    !carrier
                });
            }
        }
        if more.is_empty() {
            break;
        }
        removed_values.extend(more);
    }
    for f in &module.functions {
        for inst in f.insts() {
            if let Some(u) = inst.used_ids().find(|u| removed_values.contains(u)) {
                return Err(Error::Invalid { site: module.site(inst), message: format!("uses the event %{u}, which has no Vulkan lowering outside asynchronous copies and waits") });
            }
        }
    }
    module.globals_mut().retain(|g| !g.result_id.is_some_and(|r| gone.contains(&r)));
    module.annotations.retain(|a| !a.operands.first().and_then(Operand::id).is_some_and(|t| gone.contains(&t) || removed_values.contains(&t)));
    module.debug_names.retain(|a| !a.operands.first().and_then(Operand::id).is_some_and(|t| gone.contains(&t) || removed_values.contains(&t)));
    Ok(())
}
