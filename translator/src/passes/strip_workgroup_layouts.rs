//! `StripWorkgroupLayouts`: removes `ArrayStride` from array types that only Workgroup
//! variables use.
//!
//! naga writes explicit layouts on every array, and Vulkan forbids them in Workgroup storage
//! (VUID-StandaloneSpirv-None-10684) unless the module declares
//! `WorkgroupMemoryExplicitLayoutKHR` (for a device with the feature), and such a module keeps
//! them. An array type that a non-Workgroup pointer or another aggregate also uses keeps its
//! stride.
//!
//! Preconditions: none. Applies to every target.

use crate::error::Result;
use crate::ir::{Module, Operand};
use crate::pass::{Context, Outcome, Pass, Preserves};
use crate::profile::DeviceCaps;
use spirv::{Decoration, Op, StorageClass, Word};
use std::collections::HashSet;

pub struct StripWorkgroupLayouts;

impl Pass for StripWorkgroupLayouts {
    fn name(&self) -> &'static str {
        "strip-workgroup-layouts"
    }

    fn applies(&self, _target: &DeviceCaps) -> bool {
        true
    }

    fn preserves(&self) -> Preserves {
        Preserves::ALL
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        // A module that lays workgroup memory out itself keeps its layouts.
        if module.has_capability(spirv::Capability::WorkgroupMemoryExplicitLayoutKHR) {
            return Ok(outcome);
        }
        let mut workgroup_only: HashSet<Word> = HashSet::new();
        let mut used_elsewhere: HashSet<Word> = HashSet::new();
        for inst in module.globals() {
            match inst.op() {
                Some(Op::TypePointer) => {
                    let (Some(class), Some(pointee)) = (inst.word_opt(0), inst.operands.get(1).and_then(Operand::id)) else { continue };
                    if class == StorageClass::Workgroup as u32 {
                        workgroup_only.insert(pointee);
                    } else {
                        used_elsewhere.insert(pointee);
                    }
                }
                // Arrays and struct members keep their layout needs.
                Some(Op::TypeArray | Op::TypeRuntimeArray | Op::TypeStruct) => used_elsewhere.extend(inst.operands.iter().filter_map(Operand::id)),
                _ => {}
            }
        }
        let strip: HashSet<Word> = workgroup_only.difference(&used_elsewhere).copied().collect();
        let before = module.annotations.len();
        module.annotations.retain(|a| {
            let target = a.operands.first().and_then(Operand::id);
            !(a.is(Op::Decorate) && a.word_opt(1) == Some(Decoration::ArrayStride as u32) && target.is_some_and(|t| strip.contains(&t)))
        });
        for _ in module.annotations.len()..before {
            outcome.count(Op::Decorate as u32);
        }
        Ok(outcome)
    }
}
