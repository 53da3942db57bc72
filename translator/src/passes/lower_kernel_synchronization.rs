//! `LowerKernelSynchronization`: OpenCL scopes and memory semantics -> Vulkan's.
//!
//! Rewrite, on every barrier and atomic of a kernel module (`OpControlBarrier`,
//! `OpMemoryBarrier`, the `OpAtomic*` instructions): the `CrossDevice` scope becomes `Device`;
//! in the memory semantics, `CrossWorkgroupMemory` (global memory, now buffer device addresses)
//! becomes `UniformMemory`, `SequentiallyConsistent` (which Vulkan forbids) becomes
//! `AcquireRelease` (`Acquire` on atomic loads, `Release` on atomic stores), and semantics that
//! name storage but no ordering get `AcquireRelease` (Vulkan requires an ordering there).
//! Scope and semantics operands are ids: the rewritten values are new constants, other uses of
//! the old constants are untouched.
//!
//! Preconditions: the module declares `Kernel` (runs before `lower-kernel-interface`).
//! Semantics or scopes that are not constants are an error naming the instruction.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::{Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{Capability, MemorySemantics as MS, Op, Scope, Word};

pub struct LowerKernelSynchronization;

/// Positions of (scope operands, semantics operands) of a synchronizing instruction.
fn operand_roles(op: Op) -> Option<(&'static [usize], &'static [usize])> {
    use Op::*;
    Some(match op {
        ControlBarrier => (&[0, 1], &[2]),
        MemoryBarrier => (&[0], &[1]),
        AtomicLoad => (&[1], &[2]),
        AtomicStore => (&[1], &[2]),
        AtomicCompareExchange | AtomicCompareExchangeWeak => (&[1], &[2, 3]),
        AtomicExchange | AtomicIIncrement | AtomicIDecrement | AtomicIAdd | AtomicISub | AtomicSMin | AtomicUMin | AtomicSMax | AtomicUMax | AtomicAnd | AtomicOr | AtomicXor | AtomicFAddEXT
        | AtomicFMinEXT | AtomicFMaxEXT => (&[1], &[2]),
        AtomicFlagTestAndSet | AtomicFlagClear => (&[1], &[2]),
        _ => return None,
    })
}

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
        let types = Types::new(module);
        let mut edits: Vec<(usize, usize, usize, usize, u32)> = Vec::new();
        for (f, func) in module.functions.iter().enumerate() {
            for (b, block) in func.blocks.iter().enumerate() {
                for (i, inst) in block.insts.iter().enumerate() {
                    let Some((scopes, semantics)) = inst.op().and_then(operand_roles) else { continue };
                    for &k in scopes.iter().chain(semantics) {
                        let id = inst.id(k)?;
                        let value = types.const_u32(id).ok_or_else(|| Error::Invalid { site: module.site(inst), message: format!("operand {k} (scope or memory semantics) is not a constant") })?;
                        let new = if scopes.contains(&k) {
                            if value == Scope::CrossDevice as u32 {
                                Scope::Device as u32
                            } else {
                                value
                            }
                        } else {
                            semantics_for(inst.op().unwrap_or(Op::Nop), value)
                        };
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
        Ok(outcome)
    }
}

fn semantics_for(op: Op, value: Word) -> Word {
    let mut s = MS::from_bits_truncate(value);
    if s.contains(MS::CROSS_WORKGROUP_MEMORY) {
        s.remove(MS::CROSS_WORKGROUP_MEMORY);
        s.insert(MS::UNIFORM_MEMORY);
    }
    let storage = MS::UNIFORM_MEMORY | MS::WORKGROUP_MEMORY | MS::SUBGROUP_MEMORY | MS::IMAGE_MEMORY | MS::ATOMIC_COUNTER_MEMORY | MS::OUTPUT_MEMORY;
    let orders = MS::ACQUIRE | MS::RELEASE | MS::ACQUIRE_RELEASE | MS::SEQUENTIALLY_CONSISTENT;
    let had_order = s.intersects(orders);
    s.remove(orders);
    if had_order || s.intersects(storage) {
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
