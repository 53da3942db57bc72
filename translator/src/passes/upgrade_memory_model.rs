//! `UpgradeMemoryModel`: a module that keeps KHR cooperative matrices moves from the `GLSL450`
//! (or `Simple`) memory model to the `Vulkan` one, which SPV_KHR_cooperative_matrix requires
//! of shaders.
//!
//! NV cooperative-matrix modules may use the GLSL450 memory model; once they are KHR modules
//! (and run natively, tiled or padded) they must use the Vulkan one, and so must KHR modules
//! whose producer got this wrong. The rewrite is the one `spirv-opt --upgrade-memory-model`
//! performs:
//!
//! - loads and stores (plain and cooperative-matrix ones) through memory declared `Coherent`
//!   become non-private with `MakePointerVisible` / `MakePointerAvailable` at `QueueFamily`
//!   scope, those through `Volatile` memory get the `Volatile` operand, atomics on it the
//!   `Volatile` semantics bit, and both decorations go (the Vulkan model forbids them). A
//!   variable counts as coherent or volatile when it or a member of the block it holds is
//!   decorated so; pointers derived from it (access chains, copies, phis, selects, function
//!   parameters it is passed to) inherit that;
//! - memory scopes `Device` become `QueueFamily` (`Device` would need the
//!   VulkanMemoryModelDeviceScope capability);
//! - `OpMemoryModel` names `Vulkan`; the requirement step declares the capability and the
//!   extension or version.
//!
//! Preconditions: a valid module. `Coherent` or `Volatile` images and `OpCopyMemory` through
//! coherent or volatile memory are refused by name. Applies to targets with the Vulkan memory
//! model; runs only on modules with cooperative-matrix types in another memory model.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::grammar;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::passes::lower_kernel_pointers::is_atomic;
use crate::profile::DeviceCaps;
use rspirv::grammar::OperandKind;
use spirv::{Decoration, MemoryAccess, MemoryModel, MemorySemantics, Op, Scope, Word};
use std::collections::{HashMap, HashSet};

pub struct UpgradeMemoryModel;

/// How accesses through a pointer must be marked.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Marks {
    coherent: bool,
    volatile: bool,
}

impl Marks {
    fn any(self) -> bool {
        self.coherent || self.volatile
    }

    fn union(self, other: Marks) -> Marks {
        Marks { coherent: self.coherent || other.coherent, volatile: self.volatile || other.volatile }
    }
}

impl Pass for UpgradeMemoryModel {
    fn name(&self) -> &'static str {
        "upgrade-memory-model"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        target.vulkan_memory_model
    }

    fn run(&self, module: &mut Module, cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let Some(model) = module.memory_model.first().filter(|m| m.operands.len() == 2) else { return Ok(outcome) };
        if model.word_opt(1) == Some(MemoryModel::Vulkan as u32) || !module.globals().iter().any(|g| g.is(Op::TypeCooperativeMatrixKHR)) {
            return Ok(outcome);
        }
        let types = Types::new(module);
        let marks = pointer_marks(module, &types);
        refuse_unsupported(module, &types, &marks, &cx.target.name)?;
        let queue_family = module.constant_u32(Scope::QueueFamily as u32);
        mark_accesses(module, &marks, queue_family, &mut outcome);
        upgrade_scopes_and_semantics(module, &types, &marks, &mut outcome);
        let before = module.annotations.len();
        module.annotations.retain(|a| coherent_or_volatile(a).is_none());
        if module.annotations.len() != before {
            outcome.count(Op::Decorate as u32);
        }
        if let Some(m) = module.memory_model.first_mut() {
            m.operands[1] = Operand::Enum(OperandKind::MemoryModel, MemoryModel::Vulkan as u32);
        }
        outcome.count(Op::MemoryModel as u32);
        outcome.notes.push("cooperative matrices need the Vulkan memory model".into());
        Ok(outcome)
    }
}

/// The target of an `OpDecorate`/`OpMemberDecorate` of `Coherent` or `Volatile`, and which.
fn coherent_or_volatile(a: &Inst) -> Option<(Word, Marks)> {
    let d = match a.op()? {
        Op::Decorate => a.word_opt(1)?,
        Op::MemberDecorate => a.word_opt(2)?,
        _ => return None,
    };
    let m = Marks { coherent: d == Decoration::Coherent as u32, volatile: d == Decoration::Volatile as u32 };
    m.any().then_some((a.operands.first().and_then(Operand::id)?, m))
}

/// The marks of every pointer id: variables and parameters decorated (or holding a block with
/// a member decorated) `Coherent`/`Volatile`, and the pointers derived from them.
fn pointer_marks(module: &Module, types: &Types) -> HashMap<Word, Marks> {
    // Decorations on ids and on struct members.
    let mut on_id: HashMap<Word, Marks> = HashMap::new();
    for (t, m) in module.annotations.iter().filter_map(coherent_or_volatile) {
        let e = on_id.entry(t).or_default();
        *e = e.union(m);
    }
    // The marks a pointer of type `ptr` carries through its pointee (structs, nested through
    // arrays and members).
    let type_marks = |ptr: Word| -> Marks {
        let mut out = Marks::default();
        let mut stack: Vec<Word> = types.pointer(ptr).map(|(_, pointee)| pointee).into_iter().collect();
        let mut seen = HashSet::new();
        while let Some(t) = stack.pop() {
            if !seen.insert(t) {
                continue;
            }
            out = out.union(on_id.get(&t).copied().unwrap_or_default());
            if let Some(d) = types.defs.get(&t) {
                match d.op() {
                    Some(Op::TypeStruct) => stack.extend(d.operands.iter().filter_map(Operand::id)),
                    Some(Op::TypeArray | Op::TypeRuntimeArray) => stack.extend(d.operands.first().and_then(Operand::id)),
                    _ => {}
                }
            }
        }
        out
    };
    let mut marks: HashMap<Word, Marks> = HashMap::new();
    let roots = module.globals().iter().filter(|g| g.is(Op::Variable)).chain(module.functions.iter().flat_map(|f| f.params.iter().chain(f.insts().filter(|i| i.is(Op::Variable)))));
    for v in roots {
        let (Some(id), Some(ty)) = (v.result_id, v.result_type) else { continue };
        let m = on_id.get(&id).copied().unwrap_or_default().union(type_marks(ty));
        if m.any() {
            marks.insert(id, m);
        }
    }
    // Derived pointers and the parameters they are passed to, to a fixed point.
    let params: HashMap<Word, Vec<Word>> = module.functions.iter().map(|f| (f.id(), f.params.iter().filter_map(|p| p.result_id).collect())).collect();
    loop {
        let mut changed = false;
        for inst in module.functions.iter().flat_map(|f| f.insts()) {
            let mut flow = |to: Word, from: &[Word]| {
                let m = from.iter().filter_map(|f| marks.get(f)).fold(Marks::default(), |a, b| a.union(*b));
                if m.any() {
                    let e = marks.entry(to).or_default();
                    if e.union(m) != *e {
                        *e = e.union(m);
                        changed = true;
                    }
                }
            };
            match inst.op() {
                Some(Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain | Op::CopyObject | Op::Bitcast) => {
                    if let (Some(r), Some(base)) = (inst.result_id, inst.operands.first().and_then(Operand::id)) {
                        flow(r, &[base]);
                    }
                }
                Some(Op::Phi) => {
                    if let Some(r) = inst.result_id {
                        let ins: Vec<Word> = inst.operands.iter().step_by(2).filter_map(Operand::id).collect();
                        flow(r, &ins);
                    }
                }
                Some(Op::Select) => {
                    if let Some(r) = inst.result_id {
                        let ins: Vec<Word> = inst.operands.iter().skip(1).filter_map(Operand::id).collect();
                        flow(r, &ins);
                    }
                }
                Some(Op::FunctionCall) => {
                    let Some(callee) = inst.operands.first().and_then(Operand::id) else { continue };
                    let Some(ps) = params.get(&callee) else { continue };
                    for (p, a) in ps.iter().zip(inst.operands.iter().skip(1).filter_map(Operand::id)) {
                        flow(*p, &[a]);
                    }
                }
                _ => {}
            }
        }
        if !changed {
            return marks;
        }
    }
}

/// Refuses what the rewrite does not cover: coherent or volatile images (their accesses would
/// need texel operands) and memory copies through coherent or volatile memory.
fn refuse_unsupported(module: &Module, types: &Types, marks: &HashMap<Word, Marks>, target: &str) -> Result<()> {
    let is_image = |ptr_ty: Word| {
        let mut t = types.pointer(ptr_ty).map(|(_, pointee)| pointee);
        while let Some(d) = t.and_then(|t| types.defs.get(&t)) {
            match d.op() {
                Some(Op::TypeImage) => return true,
                Some(Op::TypeArray | Op::TypeRuntimeArray) => t = d.operands.first().and_then(Operand::id),
                _ => return false,
            }
        }
        false
    };
    let unsupported = |inst: &Inst, what: &str| Error::Unsupported {
        site: module.site(inst),
        target: target.to_string(),
        missing: format!("an upgrade to the Vulkan memory model (which cooperative matrices need) of {what}"),
    };
    for v in module.globals().iter().filter(|g| g.is(Op::Variable)) {
        if let (Some(id), Some(ty)) = (v.result_id, v.result_type) {
            if marks.contains_key(&id) && is_image(ty) {
                return Err(unsupported(v, "a coherent or volatile image"));
            }
        }
    }
    for inst in module.functions.iter().flat_map(|f| f.insts()) {
        if matches!(inst.op(), Some(Op::CopyMemory | Op::CopyMemorySized)) && inst.operands.iter().take(2).filter_map(Operand::id).any(|p| marks.contains_key(&p)) {
            return Err(unsupported(inst, "a memory copy through coherent or volatile memory"));
        }
    }
    Ok(())
}

/// The index of the memory-operand mask of a load or store, if the instruction has one, and
/// where it would go otherwise.
fn memory_operand_index(inst: &Inst) -> Option<usize> {
    // Cooperative-matrix accesses: pointer, (object,) layout, then an optional stride id.
    let stride_at = |at: usize| if matches!(inst.operands.get(at), Some(Operand::Id(_))) { at + 1 } else { at };
    match inst.op()? {
        Op::Load => Some(1),
        Op::Store => Some(2),
        Op::CooperativeMatrixLoadKHR => Some(stride_at(2)),
        Op::CooperativeMatrixStoreKHR => Some(stride_at(3)),
        _ => None,
    }
}

/// Adds the non-private, availability/visibility and volatile operands to accesses through
/// marked pointers.
fn mark_accesses(module: &mut Module, marks: &HashMap<Word, Marks>, queue_family: Word, outcome: &mut Outcome) {
    module.for_each_inst_mut(|inst| {
        let Some(at) = memory_operand_index(inst) else { return };
        let Some(m) = inst.operands.first().and_then(Operand::id).and_then(|p| marks.get(&p)).copied() else { return };
        let store = matches!(inst.op(), Some(Op::Store | Op::CooperativeMatrixStoreKHR));
        let mut mask = inst.operands.get(at).and_then(Operand::word).unwrap_or(0);
        let mut extra: Vec<Operand> = inst.operands.get(at + 1..).unwrap_or(&[]).to_vec();
        inst.operands.truncate(at);
        if m.volatile {
            mask |= MemoryAccess::VOLATILE.bits();
        }
        if m.coherent {
            // The extra operands follow the mask bits' order: Aligned, available, visible; a
            // load has no available scope, a store no visible one.
            let pos = usize::from(mask & MemoryAccess::ALIGNED.bits() != 0);
            let flag = if store { MemoryAccess::MAKE_POINTER_AVAILABLE } else { MemoryAccess::MAKE_POINTER_VISIBLE };
            if mask & flag.bits() == 0 {
                mask |= flag.bits() | MemoryAccess::NON_PRIVATE_POINTER.bits();
                extra.insert(pos.min(extra.len()), Operand::Id(queue_family));
            }
        }
        inst.operands.push(Operand::Enum(OperandKind::MemoryAccess, mask));
        inst.operands.extend(extra);
        outcome.count(inst.opcode);
    });
}

/// `Device` memory scopes become `QueueFamily`, and atomics on volatile memory get the
/// `Volatile` semantics bit.
fn upgrade_scopes_and_semantics(module: &mut Module, types: &Types, marks: &HashMap<Word, Marks>, outcome: &mut Outcome) {
    let device = Scope::Device as u32;
    // (function, block, instruction, operand) and the operand's new value.
    let mut edits: Vec<((usize, usize, usize, usize), u32)> = Vec::new();
    for (fi, f) in module.functions.iter().enumerate() {
        for (bi, b) in f.blocks.iter().enumerate() {
            for (ii, inst) in b.insts.iter().enumerate() {
                let volatile = inst.operands.first().and_then(Operand::id).and_then(|p| marks.get(&p)).is_some_and(|m| m.volatile) && inst.op().is_some_and(is_atomic);
                for (k, kind, id) in grammar::synchronization_operands(inst) {
                    let Some(value) = types.const_u32(id) else { continue };
                    let new = match kind {
                        OperandKind::IdScope if value == device => Scope::QueueFamily as u32,
                        OperandKind::IdMemorySemantics if volatile && value & MemorySemantics::VOLATILE.bits() == 0 => value | MemorySemantics::VOLATILE.bits(),
                        _ => continue,
                    };
                    edits.push(((fi, bi, ii, k), new));
                }
            }
        }
    }
    for ((fi, bi, ii, k), value) in edits {
        let id = module.constant_u32(value);
        let inst = &mut module.functions[fi].blocks[bi].insts[ii];
        inst.operands[k] = Operand::Id(id);
        outcome.count(inst.opcode);
    }
}
