//! Rules of SPIR-V checked on the input before any pass: passes read these operands and would
//! otherwise write invalid modules from them. Each broken rule is an error naming the
//! instruction. First, two rules spirv-val checks as well, which the translator needs without
//! SPIRV-Tools installed (passes carry such operands into their output unread):
//!
//! - Every `<id>` an instruction uses is defined in the module (operands of extended
//!   instructions of sets without a grammar excepted: their words are not known to be ids; and
//!   those of joint-matrix prefetches, hints whose Stride llvm-spirv writes as a literal).
//! - Every enumerant (decorations, built-ins, storage classes, capabilities, execution modes and
//!   models, ...) is one the grammar knows, and every mask (memory access, loop, selection and
//!   function control) sets only bits it knows.
//!
//! Then rules spirv-val leaves unchecked (in every environment or in kernels only):
//!
//! - The work-group sizes of `LocalSizeId` and `LocalSizeHintId` are 32-bit integer constants
//!   (spirv-val only checks that they are constant instructions; passes read them as sizes and
//!   may turn other constants into code).
//! - A spec-constant `CooperativeMatrixLengthKHR` names a cooperative-matrix type.
//! - An `OpTypeInt`'s signedness is 0 or 1 (checked for Vulkan only).
//! - The indices and `Element` operand of access chains are integer scalars (a pointer passes
//!   as a kernel's `OpPtrAccessChain` element).
//! - `OpBitcast` keeps a pointer's storage class (a kernel's built-in variable passes as a
//!   global pointer).
//! - The value a kernel's group operation reduces, scans, broadcasts or shuffles has the result
//!   type, `OpGroupAny`/`OpGroupAll` take a boolean, and an INTEL shuffle's invocation id, mask
//!   or delta is an integer scalar (SPV_INTEL_subgroups requires it).
//! - A kernel's `BuiltIn` decoration names an `Input` variable (spirv-val accepts one on a
//!   function variable; Vulkan does not, and no pass can give it a meaning).
//! - No load, store, atomic or matrix load or store goes through an `OpUndef` pointer (or one
//!   cast or offset from it): its result would be undefined, and a store could write anywhere.
//!   (llvm-spirv writes `OpUndef` for the constant address of an element of a kernel's local
//!   array, which clang's -O2 unrolling makes.)
//!
//! And one rule spirv-val checks for Vulkan only, which no translation can mend (the host lays
//! out the data): in a shader module, a struct member's `Offset` is a multiple of its scalar
//! alignment (the component's size; 8 for a buffer reference), and a scalar or vector member
//! does not reach into the member at the next offset. Every Vulkan block layout, scalar block
//! layout included, requires both.

use crate::analysis::Types;
use crate::error::{Error, Result};
use crate::ir::{Module, Operand};
use spirv::{ExecutionMode, Op, Word};
use std::collections::{HashMap, HashSet};

/// Checks every rule above.
pub(crate) fn check(module: &Module) -> Result<()> {
    references(module)?;
    enumerants(module)?;
    let types = Types::new(module);
    work_group_sizes(module, &types)?;
    for length in module.globals().iter().filter(|g| g.is(Op::SpecConstantOp) && g.word_opt(0) == Some(Op::CooperativeMatrixLengthKHR as u32)) {
        types.check_spec_constant_op(module, length)?;
    }
    if let Some(int) = module.globals().iter().find(|g| g.is(Op::TypeInt) && g.word_opt(1).is_some_and(|s| s > 1)) {
        let message = format!("integer type with signedness {} (0 or 1)", int.word_opt(1).unwrap_or_default());
        return Err(Error::Invalid { site: module.site(int), message });
    }
    access_chain_indices(module, &types)?;
    pointer_bitcasts(module, &types)?;
    kernel_builtins(module, &types)?;
    undefined_pointers(module, &types)?;
    group_operands(module, &types)?;
    member_offsets(module, &types)
}

/// The alignment every Vulkan block layout gives `ty` at least (its scalar alignment), and its
/// size where it is a scalar or vector; `None` for a type without one (a boolean, an opaque
/// type) or nested past 64 levels.
fn scalar_layout(types: &Types, ty: Word, depth: u32) -> Option<(u32, Option<u32>)> {
    let def = types.defs.get(&ty).filter(|_| depth < 64)?;
    match def.op()? {
        Op::TypeInt | Op::TypeFloat => {
            let bytes = def.word_opt(0)? / 8;
            (bytes > 0).then_some((bytes, Some(bytes)))
        }
        Op::TypeVector => {
            let (component, n) = types.vector(ty)?;
            let (align, size) = scalar_layout(types, component, depth + 1)?;
            Some((align, size.and_then(|s| s.checked_mul(n))))
        }
        Op::TypeMatrix | Op::TypeArray | Op::TypeRuntimeArray => Some((scalar_layout(types, def.id(0).ok()?, depth + 1)?.0, None)),
        Op::TypeStruct => {
            let aligns = def.operands.iter().filter_map(Operand::id).map(|m| scalar_layout(types, m, depth + 1).map(|l| l.0));
            Some((aligns.collect::<Option<Vec<u32>>>()?.into_iter().max().unwrap_or(1), None))
        }
        Op::TypePointer => (types.pointer(ty)?.0 == spirv::StorageClass::PhysicalStorageBuffer as u32).then_some((8, Some(8))),
        _ => None,
    }
}

fn member_offsets(module: &Module, types: &Types) -> Result<()> {
    if module.has_capability(spirv::Capability::Kernel) {
        return Ok(());
    }
    // (struct, member) -> the decoration and its offset.
    let mut offsets: HashMap<Word, Vec<(u32, u32, &crate::ir::Inst)>> = HashMap::new();
    for a in module.annotations.iter().filter(|a| a.is(Op::MemberDecorate) && a.word_opt(2) == Some(spirv::Decoration::Offset as u32)) {
        if let (Some(st), Some(member), Some(offset)) = (a.word_opt(0), a.word_opt(1), a.word_opt(3)) {
            offsets.entry(st).or_default().push((offset, member, a));
        }
    }
    let mut structs: Vec<Word> = offsets.keys().copied().collect();
    structs.sort_unstable();
    for st in structs {
        let Some(def) = types.defs.get(&st).filter(|d| d.is(Op::TypeStruct)) else { continue };
        let members: Vec<Word> = def.operands.iter().filter_map(Operand::id).collect();
        let mut laid = offsets.remove(&st).unwrap_or_default();
        laid.sort_by_key(|&(offset, member, _)| (offset, member));
        for (k, &(offset, member, inst)) in laid.iter().enumerate() {
            let Some((align, size)) = members.get(member as usize).and_then(|&m| scalar_layout(types, m, 0)) else { continue };
            if !offset.is_multiple_of(align) {
                let message = format!("member {member} of struct %{st} is at byte offset {offset}, not a multiple of its {align}-byte scalar alignment (which every Vulkan block layout requires)");
                return Err(Error::Invalid { site: module.site(inst), message });
            }
            let Some((next, other, _)) = laid.get(k + 1).copied() else { continue };
            if size.is_some_and(|size| u64::from(offset) + u64::from(size) > u64::from(next)) {
                let message = format!("member {member} of struct %{st} (bytes {offset} to {}) overlaps member {other} at byte offset {next}", u64::from(offset) + u64::from(size.unwrap_or(0)));
                return Err(Error::Invalid { site: module.site(inst), message });
            }
        }
    }
    Ok(())
}

fn references(module: &Module) -> Result<()> {
    let defined: HashSet<Word> = module.all_insts().filter_map(|i| i.result_id).collect();
    let ext_sets: HashMap<Word, String> = module.ext_inst_imports.iter().filter_map(|i| Some((i.result_id?, i.string(0)?))).collect();
    for inst in module.all_insts() {
        // A joint-matrix prefetch is a hint `drop-producer-hints` removes unread, and llvm-spirv
        // writes its Stride as a literal where the spec has an id.
        if inst.opcode == crate::ir::grammar::intel_cooperative_matrix::PREFETCH {
            continue;
        }
        // An extended instruction's operands are ids by its set's grammar; NonSemantic sets take
        // ids only.
        let operands = match inst.is(Op::ExtInst) {
            true => {
                let set = inst.operands.first().and_then(Operand::id).and_then(|s| ext_sets.get(&s));
                let number = inst.word_opt(1).unwrap_or(u32::MAX);
                let known = set.is_some_and(|s| s.starts_with("NonSemantic.") || rspirv::grammar::ext_inst_table(s).is_some_and(|t| t.lookup_opcode(number).is_some()));
                if known {
                    inst.operands.len()
                } else {
                    1
                }
            }
            false => inst.operands.len(),
        };
        let mut ids = inst.result_type.into_iter().chain(inst.operands[..operands].iter().filter_map(Operand::id));
        if let Some(id) = ids.find(|id| !defined.contains(id)) {
            return Err(Error::Invalid { site: module.site(inst), message: format!("uses %{id}, which the module does not define") });
        }
    }
    Ok(())
}

fn enumerants(module: &Module) -> Result<()> {
    for inst in module.all_insts() {
        for operand in &inst.operands {
            if let Operand::Enum(kind, value) = *operand {
                if !crate::ir::grammar::known_enumerant(kind, value) {
                    let message = format!("{kind:?} operand {value} is not one the SPIR-V grammar knows");
                    return Err(Error::Invalid { site: module.site(inst), message });
                }
            }
        }
    }
    Ok(())
}

fn undefined_pointers(module: &Module, types: &Types) -> Result<()> {
    let mut undefined: HashSet<u32> = module.all_insts().filter(|i| i.is(Op::Undef) && i.result_type.is_some_and(|t| types.pointer(t).is_some())).filter_map(|i| i.result_id).collect();
    if undefined.is_empty() {
        return Ok(());
    }
    // And the pointers cast or offset from one.
    loop {
        let derived: Vec<u32> = module
            .all_insts()
            .filter(|i| matches!(i.op(), Some(Op::Bitcast | Op::CopyObject | Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain)))
            .filter(|i| i.operands.first().and_then(Operand::id).is_some_and(|p| undefined.contains(&p)))
            .filter_map(|i| i.result_id)
            .filter(|r| !undefined.contains(r))
            .collect();
        if derived.is_empty() {
            break;
        }
        undefined.extend(derived);
    }
    let accesses = |i: &crate::ir::Inst| {
        use crate::ir::grammar::legacy_joint_matrix as jm;
        let pointers = match i.op() {
            Some(Op::Load | Op::Store | Op::CooperativeMatrixLoadKHR | Op::CooperativeMatrixStoreKHR | Op::CooperativeMatrixLoadNV | Op::CooperativeMatrixStoreNV) => 1,
            Some(Op::CopyMemory | Op::CopyMemorySized) => 2,
            Some(op) if crate::passes::lower_kernel_pointers::is_atomic(op) => 1,
            _ if i.opcode == jm::LOAD || i.opcode == jm::STORE => 1,
            _ => 0,
        };
        i.operands.iter().take(pointers).filter_map(Operand::id).find(|p| undefined.contains(p))
    };
    for f in &module.functions {
        if let Some((inst, pointer)) = f.insts().find_map(|i| Some((i, accesses(i)?))) {
            let message = format!("accesses memory through %{pointer}, an undefined pointer (OpUndef): llvm-spirv writes one for the constant address of an element of a local array");
            return Err(Error::Invalid { site: module.site(inst), message });
        }
    }
    Ok(())
}

fn kernel_builtins(module: &Module, types: &Types) -> Result<()> {
    if !module.has_capability(spirv::Capability::Kernel) {
        return Ok(());
    }
    let inputs: std::collections::HashSet<u32> =
        module.globals().iter().filter(|g| g.is(Op::Variable) && g.word_opt(0) == Some(spirv::StorageClass::Input as u32)).filter_map(|g| g.result_id).collect();
    for d in module.annotations.iter().filter(|a| a.is(Op::Decorate) && a.word_opt(1) == Some(spirv::Decoration::BuiltIn as u32)) {
        let target = d.operands.first().and_then(Operand::id).unwrap_or(0);
        // Built-in constants (`WorkgroupSize`) are Vulkan's, not a kernel's, but harmless.
        if !inputs.contains(&target) && types.type_of(target).is_some_and(|t| types.pointer(t).is_some()) {
            return Err(Error::Invalid { site: module.site(d), message: format!("decorates %{target}, which is not an Input variable, as a built-in") });
        }
    }
    Ok(())
}

fn work_group_sizes(module: &Module, types: &Types) -> Result<()> {
    let constant = |id: u32| module.globals().iter().any(|g| g.result_id == Some(id) && matches!(g.op(), Some(Op::Constant | Op::SpecConstant | Op::SpecConstantOp)));
    for mode in module.execution_modes.iter().filter(|m| m.is(Op::ExecutionModeId)) {
        if !matches!(mode.word_opt(1).and_then(ExecutionMode::from_u32), Some(ExecutionMode::LocalSizeId | ExecutionMode::LocalSizeHintId)) {
            continue;
        }
        if let Some(size) = mode.operands.iter().skip(2).filter_map(Operand::id).find(|s| !constant(*s) || !matches!(types.type_of(*s).and_then(|t| types.int(t)), Some((32, _)))) {
            let message = format!("work-group size %{size} is not a 32-bit integer constant");
            return Err(Error::Invalid { site: module.site(mode), message });
        }
    }
    Ok(())
}

fn access_chain_indices(module: &Module, types: &Types) -> Result<()> {
    for chain in module.all_insts().filter(|i| matches!(i.op(), Some(Op::AccessChain | Op::InBoundsAccessChain | Op::PtrAccessChain | Op::InBoundsPtrAccessChain))) {
        if let Some(index) = chain.operands.iter().skip(1).filter_map(Operand::id).find(|&i| types.type_of(i).and_then(|t| types.int(t)).is_none()) {
            let message = format!("index %{index} is not an integer scalar");
            return Err(Error::Invalid { site: module.site(chain), message });
        }
    }
    Ok(())
}

fn group_operands(module: &Module, types: &Types) -> Result<()> {
    use Op::*;
    for inst in module.all_insts() {
        // The operands that must have the result type (or be a boolean), and the invocation id,
        // mask or delta that must be an integer scalar.
        let (values, boolean, index): (&[usize], bool, Option<usize>) = match inst.op() {
            Some(GroupIAdd | GroupFAdd | GroupFMin | GroupUMin | GroupSMin | GroupFMax | GroupUMax | GroupSMax) => (&[2], false, None),
            Some(GroupBroadcast) => (&[1], false, None),
            Some(GroupAny | GroupAll) => (&[1], true, None),
            Some(SubgroupShuffleINTEL | SubgroupShuffleXorINTEL) => (&[0], false, Some(1)),
            Some(SubgroupShuffleDownINTEL | SubgroupShuffleUpINTEL) => (&[0, 1], false, Some(2)),
            _ => continue,
        };
        for value in values.iter().filter_map(|&k| inst.operands.get(k).and_then(Operand::id)) {
            let ty = types.type_of(value);
            let ok = if boolean { ty.and_then(|t| types.defs.get(&t)).is_some_and(|d| d.is(TypeBool)) } else { ty.is_some() && ty == inst.result_type };
            if !ok {
                let message = format!("value %{value} is not {}", if boolean { "a boolean" } else { "of the result type" });
                return Err(Error::Invalid { site: module.site(inst), message });
            }
        }
        if let Some(index) = index.and_then(|k| inst.operands.get(k)).and_then(Operand::id).filter(|&i| types.type_of(i).and_then(|t| types.int(t)).is_none()) {
            let message = format!("invocation id, mask or delta %{index} is not an integer scalar");
            return Err(Error::Invalid { site: module.site(inst), message });
        }
    }
    Ok(())
}

fn pointer_bitcasts(module: &Module, types: &Types) -> Result<()> {
    let class = |t: u32| types.pointer(t).map(|(class, _)| class);
    for cast in module.all_insts().filter(|i| i.is(Op::Bitcast)) {
        let from = cast.operands.first().and_then(Operand::id).and_then(|v| types.type_of(v)).and_then(class);
        if let (Some(to), Some(from)) = (cast.result_type.and_then(class), from) {
            if to != from {
                return Err(Error::Invalid { site: module.site(cast), message: "reinterprets a pointer as one of another storage class".into() });
            }
        }
    }
    Ok(())
}
