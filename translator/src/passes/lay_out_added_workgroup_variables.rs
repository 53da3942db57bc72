//! `LayOutAddedWorkgroupVariables`: in a module that lays its workgroup memory out explicitly
//! (SPV_KHR_workgroup_memory_explicit_layout), the workgroup arrays that passes added become
//! blocks placed past the module's own.
//!
//! There, every workgroup variable of an entry point is a `Block` or none is, and the blocks
//! share one storage, each starting at its offset 0 (GL_EXT_shared_memory_block: llama.cpp views
//! one buffer as `uvec4` and as `float16_t`). Passes add plain workgroup arrays (the exchange
//! array of joined sub-groups, the staging of padded matrices), which such a module cannot
//! hold. Each becomes a `Block` of one member at an offset past every block already there and
//! every array placed before it (at multiples of 16 bytes), so that it overlaps nothing; it is
//! decorated `Aliased` where the module's blocks are. Its array type is copied with an
//! `ArrayStride` (the original may serve elsewhere without one), and access chains into the
//! variable gain the member index.
//!
//! Preconditions: the added variables are arrays of scalars or of vectors of two or four, reached
//! through access chains only; the blocks' sizes and the arrays' lengths are constant
//! expressions (specialization constants at the pipeline's values: offsets are literals).
//! Anything else is an error naming the variable. Applies to targets with
//! `workgroupMemoryExplicitLayout` (elsewhere `lower-workgroup-blocks` has turned the blocks
//! into one array of words).

use crate::error::{Error, Result};
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use crate::specialize::{default_value, workgroup_memory_of};
use spirv::{Capability, Decoration, Op, StorageClass, Word};

pub struct LayOutAddedWorkgroupVariables;

impl Pass for LayOutAddedWorkgroupVariables {
    fn name(&self) -> &'static str {
        "lay-out-added-workgroup-variables"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        target.workgroup_explicit_layout
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        if !module.has_capability(Capability::WorkgroupMemoryExplicitLayoutKHR) {
            return Ok(outcome);
        }
        let workgroup: Vec<(Word, Word)> = module
            .globals()
            .iter()
            .filter(|g| g.is(Op::Variable) && g.word_opt(0) == Some(StorageClass::Workgroup as u32))
            .filter_map(|g| Some((g.result_id?, module.variable_pointee(g.result_id?)?)))
            .collect();
        let (blocks, added): (Vec<_>, Vec<_>) = workgroup.into_iter().partition(|(_, pointee)| module.decoration(*pointee, Decoration::Block).is_some());
        if blocks.is_empty() || added.is_empty() {
            return Ok(outcome);
        }
        let mut end = 0u64;
        for &(var, pointee) in &blocks {
            let Some(size) = workgroup_memory_of(module, pointee) else {
                let inst = module.globals().iter().find(|g| g.result_id == Some(var)).cloned().unwrap_or_else(|| Inst::new(Op::Nop, None, None, vec![]));
                return Err(Error::Invalid { site: module.site(&inst), message: format!("workgroup block {} has no constant size to place added workgroup arrays after", describe(module, var)) });
            };
            end = end.max(size);
        }
        let aliased = blocks.iter().any(|(var, _)| module.decoration(*var, Decoration::Aliased).is_some());
        let zero = module.constant_u32(0);
        for (var, pointee) in added {
            let site = module.globals().iter().find(|g| g.result_id == Some(var)).map(|g| module.site(g)).unwrap_or_default();
            let refuse = |why: &str| Error::Invalid {
                site: site.clone(),
                message: format!("added workgroup variable {} {why}, which a module with explicit workgroup layouts cannot hold", describe(module, var)),
            };
            let def = module.globals().iter().find(|g| g.result_id == Some(pointee) && g.is(Op::TypeArray)).cloned().ok_or_else(|| refuse("is not an array"))?;
            let (element, length) = (def.id(0)?, def.id(1)?);
            let stride = element_stride(module, element).ok_or_else(|| refuse("holds neither scalars nor vectors of two or four"))?;
            let len = default_value(module, length).ok_or_else(|| refuse("has a length that is not a constant expression"))?;
            let uses_ok = module
                .functions
                .iter()
                .flat_map(|f| f.insts())
                .filter(|i| i.used_ids().any(|u| u == var))
                .all(|i| matches!(i.op(), Some(Op::AccessChain | Op::InBoundsAccessChain)) && i.id(0).ok() == Some(var));
            if !uses_ok {
                return Err(refuse("is used other than through access chains"));
            }
            let offset = end.checked_next_multiple_of(16).ok_or_else(|| refuse("would start past the end of memory"))?;
            let size = u64::from(stride).checked_mul(len).ok_or_else(|| refuse("has no size that fits 64 bits"))?;
            let literal = u32::try_from(offset).map_err(|_| refuse("would start past 4 GiB"))?;
            end = offset.saturating_add(size);
            // A copy of the array type with a stride, in a block of its own at `offset`.
            let array = module.alloc_id();
            module.add_global(Inst::new(Op::TypeArray, None, Some(array), vec![Operand::Id(element), Operand::Id(length)]));
            module.annotations.push(Inst::new(Op::Decorate, None, None, vec![Operand::Id(array), Operand::decoration(Decoration::ArrayStride), Operand::Literal(stride)]));
            let block = module.type_struct(&[array]);
            module.annotations.push(Inst::new(Op::Decorate, None, None, vec![Operand::Id(block), Operand::decoration(Decoration::Block)]));
            module.annotations.push(Inst::new(Op::MemberDecorate, None, None, vec![Operand::Id(block), Operand::Literal(0), Operand::decoration(Decoration::Offset), Operand::Literal(literal)]));
            let ptr = module.type_pointer(StorageClass::Workgroup, block);
            if let Some(g) = module.globals_mut().iter_mut().find(|g| g.result_id == Some(var)) {
                g.result_type = Some(ptr);
            }
            if aliased {
                module.decorate(var, Decoration::Aliased, &[]);
            }
            for f in &mut module.functions {
                f.for_each_inst_mut(|i| {
                    if matches!(i.op(), Some(Op::AccessChain | Op::InBoundsAccessChain)) && i.id(0).ok() == Some(var) {
                        i.operands.insert(1, Operand::Id(zero));
                    }
                });
            }
            outcome.changed = true;
            outcome.notes.push(format!("workgroup array {} placed in a block at byte {offset}, past the module's blocks", describe(module, var)));
            outcome.count(Op::Variable as u32);
        }
        Ok(outcome)
    }
}

/// The `ArrayStride` of an array of `element`: its size, for scalars and vectors of two or four.
fn element_stride(module: &Module, element: Word) -> Option<u32> {
    let def = module.globals().iter().find(|g| g.result_id == Some(element))?;
    match def.op()? {
        Op::TypeInt | Op::TypeFloat => Some(def.word_opt(0)?.div_ceil(8)),
        Op::TypeVector if matches!(def.word_opt(1), Some(2 | 4)) => Some(element_stride(module, def.id(0).ok()?)? * def.word_opt(1)?),
        _ => None,
    }
}

fn describe(module: &Module, var: Word) -> String {
    module.name_of(var).map(|n| format!("`{n}`")).unwrap_or_else(|| format!("%{var}"))
}
