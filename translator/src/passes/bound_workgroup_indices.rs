//! `BoundWorkgroupIndices`: dynamic indices into workgroup arrays stay inside them.
//!
//! An index past an array is undefined in SPIR-V; on a GPU it reads or writes some other shared
//! memory of the work-group, but a CPU driver (lavapipe, SwiftShader) keeps workgroup memory in
//! the host process's heap, where such a write corrupts the process and crashes it, taking the
//! application with it. (Slang's neural training layer at sub-groups of 32 stores a tile past
//! its 128-entry pool.) On targets whose workgroup memory is host memory, each access-chain
//! step whose index is not a constant, into an array of constant length `L`, a vector or a
//! matrix of `L` parts, through a pointer to `Workgroup` storage, becomes
//! `UMin(index, L - 1)` (a negative signed index compares as a large unsigned one and clamps
//! too). The access then lands on the last element instead of outside the variable: still the
//! kernel's bug, but its own data's. Where `L` is a specialization constant (an OpenCL
//! kernel's `__local` argument, sized at launch; a shared array sized by a pipeline constant),
//! `L - 1` is an `OpSpecConstantOp`, so the bound follows the value the pipeline gives.
//!
//! Constant indices past an array are invalid SPIR-V already; runtime arrays (explicitly laid
//! out workgroup blocks) and `OpPtrAccessChain`'s element operand, whose bounds the pointer does
//! not carry, are left as they are. An index already known to be in range is left too: a
//! constant, `x % c`, `x & m`, a `UMin` (this pass's or the producer's), and sums, products,
//! shifts, quotients, selections and copies of such values whose largest value fits.
//!
//! Precondition: none; the pass runs last, after every pass that adds workgroup accesses.

use crate::analysis::Types;
use crate::error::Result;
use crate::ir::{Inst, Module, Operand};
use crate::pass::{Context, Outcome, Pass};
use crate::profile::DeviceCaps;
use spirv::{GlslStd450Op, Op, StorageClass, Word};
use std::collections::HashMap;

pub struct BoundWorkgroupIndices;

impl Pass for BoundWorkgroupIndices {
    fn name(&self) -> &'static str {
        "bound-workgroup-indices"
    }

    fn applies(&self, target: &DeviceCaps) -> bool {
        target.workarounds.workgroup_memory_on_host
    }

    fn run(&self, module: &mut Module, _cx: &mut Context<'_>) -> Result<Outcome> {
        let mut outcome = Outcome::unchanged();
        let types = Types::new(module);
        for f in 0..module.functions.len() {
            let steps: Vec<Vec<Vec<(usize, Length)>>> = {
                let function = &module.functions[f];
                let defs: HashMap<Word, &Inst> = module.ext_inst_imports.iter().chain(module.globals()).chain(function.insts()).filter_map(|i| Some((i.result_id?, i))).collect();
                function.blocks.iter().map(|b| b.insts.iter().map(|i| unbounded_steps(&defs, &types, i)).collect()).collect()
            };
            for (b, steps) in steps.into_iter().enumerate() {
                let mut i = 0;
                for steps in steps {
                    let (opcode, origin) = (module.functions[f].blocks[b].insts[i].opcode, module.functions[f].blocks[b].insts[i].origin);
                    for (k, len) in steps {
                        let index = module.functions[f].blocks[b].insts[i].operands[k].id().unwrap_or_default();
                        let (min, id) = match len {
                            Length::Known(len) => module.umin_index(&types, index, len - 1),
                            Length::Spec(len) => {
                                let last = last_of_spec_length(module, &types, index, len);
                                module.umin_index_to(&types, index, last)
                            }
                        };
                        module.functions[f].blocks[b].insts.insert(i, min.from_origin(origin));
                        i += 1;
                        module.functions[f].blocks[b].insts[i].operands[k] = Operand::Id(id);
                        outcome.count(opcode);
                    }
                    i += 1;
                }
            }
        }
        Ok(outcome)
    }
}

/// Whether `module` has an access chain that [`BoundWorkgroupIndices`] would bound: the runtime
/// translates such a module for a driver whose workgroup memory is host memory even where it
/// needs nothing else.
pub fn has_unbounded_index(module: &Module) -> bool {
    let types = Types::new(module);
    module.functions.iter().any(|f| {
        let defs: HashMap<Word, &Inst> = module.ext_inst_imports.iter().chain(module.globals()).chain(f.insts()).filter_map(|i| Some((i.result_id?, i))).collect();
        f.blocks.iter().flat_map(|b| &b.insts).any(|i| !unbounded_steps(&defs, &types, i).is_empty())
    })
}

/// The number of parts of an aggregate: a constant, or a specialization constant's id.
#[derive(Clone, Copy, PartialEq, Debug)]
enum Length {
    Known(u32),
    Spec(Word),
}

/// `len - 1` as an `OpSpecConstantOp` of `index`'s integer type, for specialization-constant
/// length `len` (converted to that width first where it differs).
fn last_of_spec_length(module: &mut Module, types: &Types, index: Word, len: Word) -> Word {
    let ity = types.type_of(index).unwrap_or_else(|| module.type_int(32, false));
    let (width, signed) = types.int(ity).unwrap_or((32, false));
    let len_width = types.type_of(len).and_then(|t| types.int(t)).map_or(32, |(w, _)| w);
    let len = if len_width == width {
        len
    } else {
        let uint = module.type_int(width, false);
        module.intern(Op::SpecConstantOp, Some(uint), vec![Operand::Literal(Op::UConvert as u32), Operand::Id(len)])
    };
    let one = module.constant_int(ity, width, signed, 1);
    module.intern(Op::SpecConstantOp, Some(ity), vec![Operand::Literal(Op::ISub as u32), Operand::Id(len), Operand::Id(one)])
}

/// (operand, L) of each step of access chain `inst` into workgroup memory whose index is not a
/// constant and whose aggregate has `L` parts (every operand of an access chain is an id).
fn unbounded_steps(defs: &HashMap<Word, &Inst>, types: &Types, inst: &Inst) -> Vec<(usize, Length)> {
    if !matches!(inst.op(), Some(Op::AccessChain | Op::InBoundsAccessChain)) {
        return Vec::new();
    }
    let pointer = inst.operands.first().and_then(Operand::id).and_then(|base| types.type_of(base)).and_then(|p| types.defs.get(&p)).filter(|d| d.is(Op::TypePointer));
    let Some(pointer) = pointer.filter(|p| p.word_opt(0) == Some(StorageClass::Workgroup as u32)) else { return Vec::new() };
    let mut ty = pointer.id(1).ok();
    let mut out = Vec::new();
    for (k, index) in inst.operands.iter().enumerate().skip(1).filter_map(|(k, o)| Some((k, o.id()?))) {
        let Some(t) = ty else { break };
        if types.const_u32(index).is_none() && types.int(types.type_of(index).unwrap_or(0)).is_some() {
            match parts(defs, types, t) {
                Some(Length::Known(len)) if len > 0 && largest(defs, types, index, 0).is_none_or(|m| m >= u64::from(len)) => out.push((k, Length::Known(len))),
                Some(Length::Spec(len)) if !clamped_to_spec_length(defs, index, len) => out.push((k, Length::Spec(len))),
                _ => {}
            }
        }
        ty = types.element_type(t, index);
    }
    out
}

/// The largest value `value` can hold (as an unsigned integer of its width) by its definition
/// alone, where that is known: constants; `x % c`, `x & m`, `UMin`; and sums, products,
/// quotients, shifts and `OpSelect`s of known values, copies and conversions of them, while the
/// result fits. Stops at a depth no real index expression reaches.
fn largest(defs: &HashMap<Word, &Inst>, types: &Types, value: Word, depth: u32) -> Option<u64> {
    let width = types.type_of(value).and_then(|t| types.int(t)).map_or(32, |(w, _)| w);
    let limit = if width >= 64 { u64::MAX } else { (1u64 << width) - 1 };
    if let Some(words) = types.constants.get(&value) {
        let v = u64::from(*words.first()?) | words.get(1).map_or(0, |h| u64::from(*h) << 32);
        return Some(v & limit);
    }
    if depth > 16 {
        return None;
    }
    let def = defs.get(&value)?;
    let of = |k: usize| def.id(k).ok().and_then(|v| largest(defs, types, v, depth + 1));
    let fits = |v: Option<u64>| v.filter(|v| *v <= limit);
    match def.op()? {
        Op::CopyObject | Op::Bitcast | Op::UConvert => of(0).map(|v| v.min(limit)),
        Op::SConvert => {
            // A non-negative value keeps its value; a negative one's sign extends.
            let from = def.id(0).ok().and_then(|v| types.type_of(v)).and_then(|t| types.int(t)).map_or(64, |(w, _)| w);
            of(0).filter(|v| from < 64 && *v < 1 << (from - 1)).map(|v| v.min(limit))
        }
        Op::UMod => of(1).filter(|c| *c > 0).map(|c| (c - 1).min(of(0).unwrap_or(u64::MAX))),
        Op::BitwiseAnd => match (of(0), of(1)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        },
        Op::IAdd => fits(of(0)?.checked_add(of(1)?)),
        Op::IMul => fits(of(0)?.checked_mul(of(1)?)),
        Op::UDiv => of(0),
        Op::ShiftRightLogical => of(0),
        Op::ShiftLeftLogical => fits(of(1).filter(|s| *s < 64).and_then(|s| of(0)?.checked_mul(1 << s))),
        Op::Select => Some(of(1)?.max(of(2)?)),
        Op::ExtInst if glsl(defs, def, GlslStd450Op::UMin) => match (of(2), of(3)) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        },
        Op::ExtInst if glsl(defs, def, GlslStd450Op::UMax) => Some(of(2)?.max(of(3)?)),
        _ => None,
    }
}

/// Whether `def` is GLSL.std.450 instruction `op` (`defs` holds the extended-instruction imports).
fn glsl(defs: &HashMap<Word, &Inst>, def: &Inst, op: GlslStd450Op) -> bool {
    def.is(Op::ExtInst)
        && def.word_opt(1) == Some(op as u32)
        && def.id(0).ok().and_then(|set| defs.get(&set)).is_some_and(|i| i.is(Op::ExtInstImport) && i.string(0).as_deref() == Some("GLSL.std.450"))
}

/// Whether `value` is `UMin(x, len - 1)` for specialization-constant length `len` (a bound this
/// pass added), through copies.
fn clamped_to_spec_length(defs: &HashMap<Word, &Inst>, mut value: Word, len: Word) -> bool {
    while let Some(d) = defs.get(&value).filter(|d| d.is(Op::CopyObject)) {
        let Ok(v) = d.id(0) else { return false };
        value = v;
    }
    let Some(def) = defs.get(&value).filter(|d| glsl(defs, d, GlslStd450Op::UMin)) else { return false };
    [2, 3].into_iter().filter_map(|k| def.id(k).ok()).any(|b| {
        defs.get(&b).is_some_and(|s| {
            s.is(Op::SpecConstantOp) && s.word_opt(0) == Some(Op::ISub as u32) && {
                let l = s.id(1).ok();
                l == Some(len) || l.and_then(|l| defs.get(&l)).is_some_and(|c| c.is(Op::SpecConstantOp) && c.word_opt(0) == Some(Op::UConvert as u32) && c.id(1).ok() == Some(len))
            }
        })
    })
}

/// The number of parts of an array (of constant or specialization-constant length), a vector
/// or a matrix type. A length computed from constants alone (`OpSpecConstantOp` over
/// `OpConstant`s) is known.
fn parts(defs: &HashMap<Word, &Inst>, types: &Types, ty: Word) -> Option<Length> {
    let def = types.defs.get(&ty)?;
    match def.op()? {
        Op::TypeArray => {
            let len = def.id(1).ok()?;
            match crate::specialize::fixed_value(defs, len).and_then(|n| u32::try_from(n).ok()) {
                Some(n) => Some(Length::Known(n)),
                None => types.int(types.type_of(len)?).map(|_| Length::Spec(len)),
            }
        }
        Op::TypeVector | Op::TypeMatrix => def.word_opt(1).map(Length::Known),
        _ => None,
    }
}
