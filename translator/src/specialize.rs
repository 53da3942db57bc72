//! Specialization before translation: a module's specialization-constant defaults replaced by
//! the values a pipeline will give them, so that passes which need a constant (the
//! cooperative-matrix emulation sizes its per-invocation arrays from the matrix dimensions) see
//! the pipeline's values. The constants stay specialization constants with their `SpecId`s.

use crate::error::Result;
use crate::ir::{Module, Operand};
use spirv::{Decoration, Op, Word};
use std::collections::HashMap;

/// Sets the default of every scalar specialization constant whose `SpecId` is in `values`
/// (32-bit constants take the value, 64-bit ones its zero extension, booleans `value != 0`).
/// Returns how many defaults changed.
pub fn specialize(module: &mut Module, values: &[(u32, u32)]) -> Result<usize> {
    let wanted: HashMap<u32, u32> = values.iter().copied().collect();
    let by_id: HashMap<Word, u32> = module
        .annotations
        .iter()
        .filter(|a| a.is(Op::Decorate) && a.word_opt(1) == Some(Decoration::SpecId as u32))
        .filter_map(|a| Some((a.operands.first()?.id()?, *wanted.get(&a.word_opt(2)?)?)))
        .collect();
    let mut changed = 0;
    for inst in module.globals_mut().iter_mut() {
        let Some(value) = inst.result_id.and_then(|id| by_id.get(&id)).copied() else { continue };
        match inst.op() {
            Some(Op::SpecConstant) => {
                let words = match inst.operands.len() {
                    1 => vec![Operand::Literal(value)],
                    _ => vec![Operand::Literal(value), Operand::Literal(0)],
                };
                if inst.operands != words {
                    inst.operands = words;
                    changed += 1;
                }
            }
            Some(Op::SpecConstantTrue | Op::SpecConstantFalse) => {
                let op = if value != 0 { Op::SpecConstantTrue } else { Op::SpecConstantFalse };
                if inst.opcode != op as u32 {
                    inst.opcode = op as u32;
                    changed += 1;
                }
            }
            _ => {}
        }
    }
    Ok(changed)
}

/// The value `id` has when the module runs with its specialization constants at their defaults
/// (which [`specialize`] set to the pipeline's values): constants, specialization constants,
/// and `OpSpecConstantOp`s of integer and boolean arithmetic, comparisons and `Select` over
/// them, as 64-bit integers (booleans 0 or 1). `None` for anything else.
pub fn default_value(module: &Module, id: Word) -> Option<u64> {
    let defs: HashMap<Word, &crate::ir::Inst> = module.globals().iter().filter_map(|g| Some((g.result_id?, g))).collect();
    evaluate(&defs, id, true, 0)
}

/// The value `id` has whatever the pipeline's specialization constants: constants and
/// `OpSpecConstantOp`s over them only, as [`default_value`] evaluates them. `defs` maps ids to
/// their defining instructions (the module's globals at least).
pub fn fixed_value(defs: &HashMap<Word, &crate::ir::Inst>, id: Word) -> Option<u64> {
    evaluate(defs, id, false, 0)
}

/// Evaluates `id`; specialization constants take their defaults where `defaults` holds, and
/// make the value unknown otherwise.
fn evaluate(defs: &HashMap<Word, &crate::ir::Inst>, id: Word, defaults: bool, depth: u32) -> Option<u64> {
    // Valid modules define before use; a damaged one may not: stop at a depth no real
    // expression reaches.
    if depth > 64 {
        return None;
    }
    let def = defs.get(&id)?;
    let word = |k: usize| def.word_opt(k).map(u64::from);
    match def.op()? {
        Op::Constant => Some(word(0)? | word(1).unwrap_or(0) << 32),
        Op::ConstantTrue => Some(1),
        Op::ConstantFalse => Some(0),
        Op::SpecConstant if defaults => Some(word(0)? | word(1).unwrap_or(0) << 32),
        Op::SpecConstantTrue if defaults => Some(1),
        Op::SpecConstantFalse if defaults => Some(0),
        Op::SpecConstantOp => {
            let op = Op::from_u32(def.word_opt(0)?)?;
            let args: Vec<Word> = def.operands[1..].iter().filter_map(Operand::id).collect();
            let arg = |k: usize| args.get(k).and_then(|a| evaluate(defs, *a, defaults, depth + 1));
            let (a, b) = (arg(0), arg(1));
            let bool = |c: bool| Some(c as u64);
            match op {
                Op::Select => {
                    if a? != 0 {
                        b
                    } else {
                        arg(2)
                    }
                }
                Op::IAdd => Some(a?.wrapping_add(b?)),
                Op::ISub => Some(a?.wrapping_sub(b?)),
                Op::IMul => Some(a?.wrapping_mul(b?)),
                Op::UDiv => a?.checked_div(b?),
                Op::UMod => a?.checked_rem(b?),
                Op::BitwiseAnd | Op::LogicalAnd => Some(a? & b?),
                Op::BitwiseOr | Op::LogicalOr => Some(a? | b?),
                Op::BitwiseXor => Some(a? ^ b?),
                Op::ShiftLeftLogical => Some(a?.checked_shl(u32::try_from(b?).ok()?)?),
                Op::ShiftRightLogical => Some(a?.checked_shr(u32::try_from(b?).ok()?)?),
                Op::LogicalNot => bool(a? == 0),
                Op::LogicalEqual | Op::IEqual => bool(a? == b?),
                Op::LogicalNotEqual | Op::INotEqual => bool(a? != b?),
                Op::ULessThan => bool(a? < b?),
                Op::ULessThanEqual => bool(a? <= b?),
                Op::UGreaterThan => bool(a? > b?),
                Op::UGreaterThanEqual => bool(a? >= b?),
                Op::UConvert | Op::SConvert => a,
                _ => None,
            }
        }
        _ => None,
    }
}

/// The workgroup size of entry point `entry` with the specialization constants at their
/// defaults (call [`specialize`] first to give them the pipeline's values): a `WorkgroupSize`
/// built-in constant where the module has one (it overrides the execution mode), else
/// `LocalSizeId` or `LocalSize`. `None` when the entry point is missing, has neither, or a
/// dimension is not a constant expression.
pub fn workgroup_size(module: &Module, entry: &str) -> Option<[u32; 3]> {
    workgroup_size_with(module, entry, |id| default_value(module, id).and_then(|v| u32::try_from(v).ok()))
}

/// The workgroup size of entry point `entry` where the module fixes it: `LocalSize`, or ids
/// that are plain constants (a pipeline cannot change them, as it can a specialization
/// constant's default).
pub fn fixed_workgroup_size(module: &Module, entry: &str) -> Option<[u32; 3]> {
    workgroup_size_with(module, entry, |id| module.globals().iter().find(|g| g.result_id == Some(id) && g.is(Op::Constant)).and_then(|g| g.word_opt(0)))
}

/// [`workgroup_size`] with `value` giving the size an id stands for.
fn workgroup_size_with(module: &Module, entry: &str, value: impl Fn(Word) -> Option<u32>) -> Option<[u32; 3]> {
    let function = module.entry_points.iter().find(|e| e.string(2).as_deref() == Some(entry)).and_then(|e| e.operands.get(1).and_then(Operand::id))?;
    let ids = |inst: &crate::ir::Inst, from: usize| -> Option<[u32; 3]> {
        let parts: Vec<u32> = inst.operands.get(from..)?.iter().map(|o| o.id().and_then(&value)).collect::<Option<_>>()?;
        parts.try_into().ok()
    };
    if let Some(composite) = module.builtin_constant(spirv::BuiltIn::WorkgroupSize) {
        let def = module.globals().iter().find(|g| g.result_id == Some(composite))?;
        return ids(def, 0);
    }
    let mode = module
        .execution_modes
        .iter()
        .find(|m| m.word_opt(0) == Some(function) && matches!(m.word_opt(1), Some(x) if x == spirv::ExecutionMode::LocalSize as u32 || x == spirv::ExecutionMode::LocalSizeId as u32))?;
    if mode.word_opt(1) == Some(spirv::ExecutionMode::LocalSize as u32) {
        return Some([mode.word_opt(2)?, mode.word_opt(3)?, mode.word_opt(4)?]);
    }
    ids(mode, 2)
}

/// One workgroup variable an entry point uses and the bytes it takes at least.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct WorkgroupVariable {
    pub id: Word,
    /// Its `OpName`, where it has one (variables a translation added have none).
    pub name: Option<String>,
    pub bytes: u64,
    /// Decorated `Block` (SPV_KHR_workgroup_memory_explicit_layout): such variables share
    /// their memory.
    pub aliased: bool,
}

/// The workgroup memory that entry point `entry` uses with its specialization constants at
/// their defaults: the `Workgroup` variables of the functions it reaches, largest first, and
/// the bytes they take together: the unaliased ones added up, beside the largest of the `Block`
/// ones (which alias one another). Sizes leave padding out (a vector of three takes three
/// components, a struct without offsets the sum of its members), so the total is the least any
/// driver can use. `None` when the entry point is missing or a variable has no size (a
/// runtime array, an opaque type, a length that is not a constant expression).
pub fn workgroup_memory(module: &Module, entry: &str) -> Option<(u64, Vec<WorkgroupVariable>)> {
    let function = module.entry_points.iter().find(|e| e.string(2).as_deref() == Some(entry)).and_then(|e| e.operands.get(1).and_then(Operand::id))?;
    let reached = module.functions_reached_from([function]);
    let used: std::collections::HashSet<Word> = module.functions.iter().filter(|f| reached.contains(&f.id())).flat_map(|f| f.insts()).flat_map(|i| i.operands.iter().filter_map(Operand::id)).collect();
    let defs: HashMap<Word, &crate::ir::Inst> = module.globals().iter().filter_map(|g| Some((g.result_id?, g))).collect();
    let mut vars = Vec::new();
    for g in module.globals().iter().filter(|g| g.is(Op::Variable) && g.word_opt(0) == Some(spirv::StorageClass::Workgroup as u32)) {
        let Some(id) = g.result_id.filter(|v| used.contains(v)) else { continue };
        let pointee = g.result_type.and_then(|p| defs.get(&p)).and_then(|p| p.id(1).ok())?;
        let bytes = least_size(module, &defs, pointee, &|_| None, 0)?;
        let aliased = module.decoration(pointee, Decoration::Block).is_some();
        vars.push(WorkgroupVariable { id, name: module.name_of(id), bytes, aliased });
    }
    vars.sort_by(|a, b| b.bytes.cmp(&a.bytes).then(a.id.cmp(&b.id)));
    let separate = vars.iter().filter(|v| !v.aliased).fold(0u64, |n, v| n.saturating_add(v.bytes));
    let shared = vars.iter().filter(|v| v.aliased).map(|v| v.bytes).max().unwrap_or(0);
    Some((separate.saturating_add(shared), vars))
}

/// The bytes a workgroup variable of type `ty` takes at least, with the specialization constants
/// at their defaults (see [`workgroup_memory`]); `None` where it has no size.
pub fn workgroup_memory_of(module: &Module, ty: Word) -> Option<u64> {
    workgroup_memory_with(module, ty, &|_| None)
}

/// [`workgroup_memory_of`] with the scalar types for which `scalar_bytes` answers taking that
/// many bytes (a translation that widens them).
pub fn workgroup_memory_with(module: &Module, ty: Word, scalar_bytes: &dyn Fn(Word) -> Option<u64>) -> Option<u64> {
    let defs: HashMap<Word, &crate::ir::Inst> = module.globals().iter().filter_map(|g| Some((g.result_id?, g))).collect();
    least_size(module, &defs, ty, scalar_bytes, 0)
}

/// The bytes type `ty` takes without padding (explicit `Offset`s and `ArrayStride`s count), a
/// scalar the bytes `scalar_bytes` gives it where it gives some.
fn least_size(module: &Module, defs: &HashMap<Word, &crate::ir::Inst>, ty: Word, scalar_bytes: &dyn Fn(Word) -> Option<u64>, depth: u32) -> Option<u64> {
    let def = defs.get(&ty).filter(|_| depth < 64)?;
    let sub = |t: Word| least_size(module, defs, t, scalar_bytes, depth + 1);
    match def.op()? {
        Op::TypeInt | Op::TypeFloat => scalar_bytes(ty).or(Some(u64::from(def.word_opt(0)?.div_ceil(8)))),
        Op::TypeBool => Some(1),
        Op::TypeVector | Op::TypeMatrix => sub(def.id(0).ok()?)?.checked_mul(u64::from(def.word_opt(1)?)),
        Op::TypeArray => {
            let len = default_value(module, def.id(1).ok()?)?;
            let element = match module.decoration(ty, Decoration::ArrayStride).and_then(|s| s.first().copied()) {
                Some(stride) => u64::from(stride),
                None => sub(def.id(0).ok()?)?,
            };
            element.checked_mul(len)
        }
        Op::TypeStruct => {
            let mut size = 0u64;
            for (m, member) in def.operands.iter().filter_map(Operand::id).enumerate() {
                let offset = module.member_offset(ty, m as u32);
                let s = sub(member)?;
                size = match offset {
                    Some(o) => size.max(u64::from(o).saturating_add(s)),
                    None => size.saturating_add(s),
                };
            }
            Some(size)
        }
        _ => None,
    }
}
