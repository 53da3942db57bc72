//! `LowerKernelSynchronization`: OpenCL scopes and memory semantics -> Vulkan's.
//!
//! Rewrite, on every scope and memory-semantics operand of a kernel module (as the grammar types
//! them: barriers, atomics, group and sub-group operations): the `CrossDevice` scope becomes
//! `Device`; in the memory semantics, `CrossWorkgroupMemory` (global memory, now buffer device
//! addresses) becomes `UniformMemory`, `SequentiallyConsistent` (which Vulkan forbids) becomes
//! `AcquireRelease` (`Acquire` on atomic loads, `Release` on atomic stores), semantics that
//! name storage but no ordering get `AcquireRelease` (Vulkan requires an ordering there), and an
//! ordering that names no storage Vulkan knows (none, or only sub-group memory) orders
//! `UniformMemory` and `WorkgroupMemory` (Vulkan requires one of its storage bits beside an
//! ordering); semantics whose memory scope is `Invocation` become relaxed, as Vulkan requires
//! (they order nothing another invocation sees). A control barrier of one invocation becomes a
//! memory barrier (nothing where relaxed); one of a wider scope than a workgroup is an error
//! naming it.
//! Scope and semantics operands are ids: the rewritten values are new constants, other uses of
//! the old constants are untouched.
//!
//! Split barriers (SPV_INTEL_split_barrier, cl_intel_split_work_group_barrier: what Intel's GEMM
//! and attention kernels and Triton's backend put around each K step) have no Vulkan form: each
//! `OpControlBarrierWaitINTEL` becomes an `OpControlBarrier` of its scopes, and every
//! `OpControlBarrierArriveINTEL` goes. Every invocation arrives before it waits, so the barrier
//! at the wait is passed only once all have arrived, as the wait is; its semantics order what
//! the function's arrives release (their storage, the widest of their memory scopes) as well as
//! what the wait acquires. Work between arrive and wait no longer overlaps the wait for others.
//!
//! Preconditions: the module declares `Kernel` (runs before `lower-kernel-interface`).
//! Semantics or scopes that are not `OpConstant`s (a kernel may compute them at run time; Vulkan
//! needs constants) are an error naming the instruction.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::{grammar, Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use rspirv::grammar::OperandKind;
use spirv::{Capability, MemorySemantics as MS, Op, Scope, Word};

pub struct LowerKernelSynchronization;

impl Pass for LowerKernelSynchronization {
    fn name(&self) -> &'static str {
        "lower-kernel-synchronization"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !module.has_capability(Capability::Kernel) {
            return Ok(outcome);
        }
        join_split_barriers(module, &mut outcome)?;
        let types = Types::new(module);
        let mut edits: Vec<(usize, usize, usize, usize, u32)> = Vec::new();
        for (f, func) in module.functions.iter().enumerate() {
            for (b, block) in func.blocks.iter().enumerate() {
                for (i, inst) in block.insts.iter().enumerate() {
                    // The memory scope of the semantics that follow it (a barrier's second scope).
                    let mut memory_scope = None;
                    for (k, kind, id) in grammar::synchronization_operands(inst) {
                        let what = if kind == OperandKind::IdScope { "scope" } else { "memory semantics" };
                        let value = types.const_u32(id).ok_or_else(|| Error::Invalid { site: module.site(inst), message: format!("operand {k} ({what}) %{id} is not a constant") })?;
                        let new = match kind {
                            OperandKind::IdScope if value == Scope::CrossDevice as u32 => Scope::Device as u32,
                            OperandKind::IdScope => value,
                            // Memory of one invocation orders nothing for others: Vulkan requires
                            // relaxed semantics there.
                            _ if memory_scope == Some(Scope::Invocation as u32) => 0,
                            _ => semantics_for(inst.op().unwrap_or(Op::Nop), value),
                        };
                        if kind == OperandKind::IdScope {
                            memory_scope = Some(new);
                        }
                        if new != value {
                            edits.push((f, b, i, k, new));
                        }
                    }
                }
            }
        }
        for (f, b, i, k, value) in edits {
            let c = module.constant_u32(value);
            let inst = &mut module.functions[f].blocks[b].insts[i];
            inst.operands[k] = Operand::Id(c);
            outcome.count(inst.opcode);
        }
        barriers_of_one_invocation(module, &mut outcome)?;
        Ok(outcome)
    }
}

/// Split barriers become control barriers at their waits (see the module documentation).
fn join_split_barriers(module: &mut Module, outcome: &mut Outcome) -> Result<()> {
    if !module.all_insts().any(|i| i.is(Op::ControlBarrierArriveINTEL) || i.is(Op::ControlBarrierWaitINTEL)) {
        return Ok(());
    }
    let types = Types::new(module);
    for f in 0..module.functions.len() {
        // What the function's arrives release: their storage bits and widest memory scope.
        let (mut storage, mut scope) = (0u32, None::<u32>);
        for inst in module.functions[f].insts().filter(|i| i.is(Op::ControlBarrierArriveINTEL)) {
            let [_, memory, semantics] = inst.ids::<3>()?;
            let constant = |id: Word, what: &str| types.const_u32(id).ok_or_else(|| Error::Invalid { site: module.site(inst), message: format!("its {what} %{id} is not a constant") });
            storage |= constant(semantics, "memory semantics")? & !(MS::ACQUIRE | MS::RELEASE | MS::ACQUIRE_RELEASE | MS::SEQUENTIALLY_CONSISTENT).bits();
            let m = constant(memory, "memory scope")?;
            scope = Some(scope.map_or(m, |s| s.min(m)));
        }
        for b in 0..module.functions[f].blocks.len() {
            let insts = std::mem::take(&mut module.functions[f].blocks[b].insts);
            let mut out = Vec::with_capacity(insts.len());
            for inst in insts {
                match inst.op() {
                    Some(Op::ControlBarrierArriveINTEL) => outcome.count(inst.opcode),
                    Some(Op::ControlBarrierWaitINTEL) => {
                        let [execution, memory, semantics] = inst.ids::<3>()?;
                        let (Some(m), Some(v)) = (types.const_u32(memory), types.const_u32(semantics)) else {
                            return Err(Error::Invalid { site: module.site(&inst), message: "its memory scope or semantics is not a constant".into() });
                        };
                        // Lower scope values are wider (Device 1, Workgroup 2, Subgroup 3).
                        let memory = module.constant_u32(scope.map_or(m, |s| s.min(m)));
                        // The ordering becomes AcquireRelease below, as every barrier's does.
                        let semantics = module.constant_u32(v | storage);
                        out.push(Inst::new(Op::ControlBarrier, None, None, vec![Operand::Id(execution), Operand::Id(memory), Operand::Id(semantics)]).from_origin(inst.origin));
                        outcome.count(inst.opcode);
                    }
                    _ => out.push(inst),
                }
            }
            module.functions[f].blocks[b].insts = out;
        }
    }
    Ok(())
}

/// A control barrier whose execution scope is one invocation waits for nobody: it becomes the
/// memory barrier it also is (nothing where its semantics are relaxed). Vulkan's control barriers
/// span a sub-group or a workgroup; one across the device is refused by name.
fn barriers_of_one_invocation(module: &mut Module, outcome: &mut Outcome) -> Result<()> {
    let types = Types::new(module);
    for f in 0..module.functions.len() {
        for b in 0..module.functions[f].blocks.len() {
            let insts = std::mem::take(&mut module.functions[f].blocks[b].insts);
            let mut out = Vec::with_capacity(insts.len());
            for inst in insts {
                if !inst.is(Op::ControlBarrier) {
                    out.push(inst);
                    continue;
                }
                let [execution, memory, semantics] = inst.ids::<3>()?;
                match types.const_u32(execution) {
                    Some(s) if s == Scope::Workgroup as u32 || s == Scope::Subgroup as u32 => out.push(inst),
                    Some(s) if s == Scope::Invocation as u32 => {
                        if types.const_u32(semantics).is_some_and(|v| v != 0) {
                            out.push(Inst::new(Op::MemoryBarrier, None, None, vec![Operand::Id(memory), Operand::Id(semantics)]).from_origin(inst.origin));
                        }
                        outcome.count(inst.opcode);
                    }
                    s => {
                        let scope = s.and_then(Scope::from_u32).map_or_else(|| format!("%{execution}"), |s| format!("{s:?}"));
                        return Err(Error::Invalid {
                            site: module.site(&inst),
                            message: format!("waits for the invocations of scope {scope}; Vulkan's control barriers span a sub-group or a workgroup"),
                        });
                    }
                }
            }
            module.functions[f].blocks[b].insts = out;
        }
    }
    Ok(())
}

fn semantics_for(op: Op, value: Word) -> Word {
    let mut s = MS::from_bits_truncate(value);
    if s.contains(MS::CROSS_WORKGROUP_MEMORY) {
        s.remove(MS::CROSS_WORKGROUP_MEMORY);
        s.insert(MS::UNIFORM_MEMORY);
    }
    let storage = MS::UNIFORM_MEMORY | MS::WORKGROUP_MEMORY | MS::SUBGROUP_MEMORY | MS::IMAGE_MEMORY | MS::ATOMIC_COUNTER_MEMORY | MS::OUTPUT_MEMORY;
    // The storage bits Vulkan knows (sub-group and atomic-counter memory are not among them).
    let vulkan_storage = MS::UNIFORM_MEMORY | MS::WORKGROUP_MEMORY | MS::IMAGE_MEMORY | MS::OUTPUT_MEMORY;
    let orders = MS::ACQUIRE | MS::RELEASE | MS::ACQUIRE_RELEASE | MS::SEQUENTIALLY_CONSISTENT;
    let had_order = s.intersects(orders);
    let named_storage = s.intersects(storage);
    s.remove(MS::ATOMIC_COUNTER_MEMORY);
    // An ordering that names no storage Vulkan knows (OpenCL 2.0 atomics name only their memory
    // order, sub-group barriers sub-group memory) orders both kinds a kernel has: Vulkan requires
    // one of its storage bits beside an ordering.
    if (had_order || named_storage) && !s.intersects(vulkan_storage) {
        s.insert(MS::UNIFORM_MEMORY | MS::WORKGROUP_MEMORY);
    }
    s.remove(orders);
    if had_order || named_storage {
        s.insert(match op {
            Op::AtomicLoad => MS::ACQUIRE,
            Op::AtomicStore => MS::RELEASE,
            _ => MS::ACQUIRE_RELEASE,
        });
    }
    // Relaxed atomics (no ordering, no storage) stay relaxed.
    if !had_order
        && matches!(
            op,
            Op::AtomicLoad
                | Op::AtomicStore
                | Op::AtomicExchange
                | Op::AtomicIIncrement
                | Op::AtomicIDecrement
                | Op::AtomicIAdd
                | Op::AtomicISub
                | Op::AtomicSMin
                | Op::AtomicUMin
                | Op::AtomicSMax
                | Op::AtomicUMax
                | Op::AtomicAnd
                | Op::AtomicOr
                | Op::AtomicXor
        )
    {
        s.remove(orders);
        s.remove(storage);
    }
    s.bits()
}
